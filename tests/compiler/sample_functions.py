"""Small functions whose generated adjoint source the dump tests pin (golden files) and compare
across processes. Changing a line here moves the `# L<n>` comments: regenerate the golden files
with ADJOINT_UPDATE_GOLDEN=1."""
import numpy as np


def straight(x, w):
    y = np.sin(x * w) + 1.0
    z = np.exp(-y)
    return np.sum(z * x)


def branchy(x, t):
    s = np.sum(x)
    if s > t:
        y = np.tanh(x) * t
    elif s > 0.0:
        y = x * x
    else:
        y = -x
    return np.sum(y)


def early(x, y):
    if x > 0.0:
        return x * y
    z = x - y
    return z ** 2


def tuples(a, b):
    a, b = b, a
    p = (a * 2.0, (b, a))
    u, (v, w) = p
    return u * v + w


def mixed(A, v, c=2.0):
    r = A @ v
    q = c * r + v[0]
    return np.sum(q ** 2) if c > 0 else np.sum(q)

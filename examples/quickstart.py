"""Quickstart: differentiate a plain NumPy function and look at the generated adjoint."""
import numpy as np

from adjoint_compiler import adjoint_source, grad


def f(x, w):
    """Softplus of a tanh layer plus an L2 penalty on the weights."""
    h = np.tanh(x * w)
    return np.sum(np.log1p(np.exp(h))) + 0.5 * np.dot(w, w)


x = np.array([0.5, -1.0, 2.0])
w = np.array([1.5, 0.3, -0.7])

df_dw = grad(f, wrt=1)
g = df_dw(x, w)

print("f(x, w)    =", f(x, w))
print("df/dw      =", g)

# Central finite differences, one coordinate at a time.
eps = 1e-6
fd = np.array([(f(x, w + eps * e) - f(x, w - eps * e)) / (2 * eps) for e in np.eye(len(w))])
print("finite diff=", fd)
print("max |error| = %.2e" % np.max(np.abs(g - fd)))

print("\n--- generated adjoint of f with respect to w ---")
print(adjoint_source(f, wrt=1))

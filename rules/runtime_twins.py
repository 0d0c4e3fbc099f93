"""Adjoint helpers differentiated as their twins: each twin below computes what the runtime helper
a generated gradient calls computes, written in the subset the compiler follows (no imports, no
recursion, dicts read with constant keys), so the gradient read back as source differentiates
again (`hessian`, `hvp`, `vjp(grad(f))`) through the rules of the operations it is made of.

    x_bar = rt.cumprod_adjoint(y_bar, x, y, 0)   ->   the recurrence s[i] = g[i] + x[i+1] s[i+1]
                                                      as a loop of writes, times prod(x[:i])
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import differentiate_as, nondifferentiable

nondifferentiable(rt.at_slots, rt.at_shares, rt.along_axis_shape, rt.other_axes)


@differentiate_as(rt.cumprod_adjoint)
def cumprod_adjoint(g, x, y, axis=None):
    """Exact where `x` has zeros: x_bar[i] = prod(x[:i]) s[i], s[i] = g[i] + x[i+1] s[i+1]."""
    shape = np.shape(x)
    if axis is None:
        g = np.ravel(g)
        x = np.ravel(x)
        y = np.ravel(y)
        axis = 0
    if np.ndim(x) == 0:
        return g
    g = np.broadcast_to(g, np.shape(x))
    if np.all(x != 0):
        return np.reshape(rt.cumsum_adjoint(g * y, x, axis) / x, shape)
    gm = np.moveaxis(g, axis, 0)
    xm = np.moveaxis(x, axis, 0)
    n = len(xm)
    s = np.zeros(np.shape(gm))
    s[n - 1] = gm[n - 1]
    for i in range(n - 2, -1, -1):
        s[i] = gm[i] + xm[i + 1] * s[i + 1]
    before = np.cumprod(np.concatenate([np.ones((1,) + np.shape(xm)[1:]), xm[:-1]]), axis=0)
    return np.reshape(np.moveaxis(before * s, 0, axis), shape)


@differentiate_as(rt.convolve_adjoint)
def convolve_adjoint(g, a, v, mode="full"):
    """The cotangent put where the mode's output sits in the full convolution, correlated with
    the other operand (a correlation is a convolution with the operand flipped)."""
    a = np.ravel(a) * 1.0
    v = np.ravel(v) * 1.0
    n = np.size(a)
    m = np.size(v)
    start = 0
    if mode == "same":
        start = (min(n, m) - 1) // 2
    if mode == "valid":
        start = min(n, m) - 1
    g = np.ravel(g)
    full = np.zeros(n + m - 1)
    full[start:start + np.size(g)] = g
    return np.convolve(full, np.flip(v), "valid"), np.convolve(full, np.flip(a), "valid")


@differentiate_as(rt.correlate_adjoint)
def correlate_adjoint(g, a, v, mode="valid"):
    """A correlation is a convolution with `v` flipped (with `a` flipped and the result reversed
    when `a` is the shorter: NumPy swaps them)."""
    a = np.ravel(a) * 1.0
    v = np.ravel(v) * 1.0
    if np.size(a) >= np.size(v):
        parts = rt.convolve_adjoint(g, a, np.flip(v), mode)
        return parts[0], np.flip(parts[1])
    parts = rt.convolve_adjoint(np.flip(np.ravel(g)), v, np.flip(a), mode)
    return np.flip(parts[1]), parts[0]


@differentiate_as(rt.ptp_adjoint)
def ptp_adjoint(g, a, axis=None, keepdims=False):
    hi = np.max(a, axis=axis, keepdims=keepdims)
    lo = np.min(a, axis=axis, keepdims=keepdims)
    return rt.extremum_adjoint(g, a, hi, axis, keepdims) - rt.extremum_adjoint(g, a, lo, axis, keepdims)


@differentiate_as(rt.average_adjoint)
def average_adjoint(g, a, y, axis=None, weights=None, returned=False, keepdims=False):
    """y = sum(w a) / sum(w): a_bar = g w / sum(w), w_bar = g (a - y) / sum(w); with `returned`,
    y and g are pairs (the average's, the sum of the weights'), and the sum adds g_sum to w_bar."""
    g_sum = None
    if returned:
        g_sum = g[1]
        g = g[0]
        y = y[0]
    if g is None:
        g = np.zeros(np.shape(y))
    ge = rt.expand_reduced(g, a, axis, keepdims)
    if weights is None:
        return ge / rt.reduced_size(a, axis), None
    w = weights
    if np.shape(weights) != np.shape(a):  # one weight per entry along `axis`
        w = np.reshape(weights, rt.along_axis_shape(a, axis)) * np.ones(np.shape(a))
    total = np.sum(w, axis=axis, keepdims=True)
    a_bar = ge * w / total
    w_bar = ge * (a - rt.expand_reduced(y, a, axis, keepdims)) / total
    if g_sum is not None:
        w_bar = w_bar + rt.expand_reduced(g_sum, a, axis, keepdims)
    if np.shape(weights) != np.shape(a):
        w_bar = np.sum(w_bar, axis=rt.other_axes(a, axis))
    return a_bar, w_bar


@differentiate_as(rt.ufunc_at_adjoint)
def ufunc_at_adjoint(g, name, a, indices, b, y):
    """`np.<name>.at(a, indices, b)`. multiply: each slot is a times the b's put there, so a
    gets g times their product and each b g a times the product of the others there (no
    division: exact at zeros). maximum, minimum: the entries equal to the result share g
    (shares that are piecewise constant: no second derivative)."""
    slots, shape = rt.at_slots(a, indices)
    gf = np.ravel(g * np.ones(np.shape(a)))
    if name == "multiply":
        bv = np.ravel(b * np.ones(shape))
        products = np.ones(np.size(a))
        np.multiply.at(products, slots, bv)
        same = slots[:, None] == slots[None, :]
        others = np.prod(np.where(same & ~np.eye(np.size(slots), dtype=bool), bv[None, :], 1.0), axis=1)
        a_bar = gf * products
        b_bar = gf[slots] * np.ravel(a)[slots] * others
    else:
        shares = rt.at_shares(name, a, indices, b, y)
        a_bar = gf * shares[0]
        b_bar = gf[slots] * shares[1]
    return np.reshape(a_bar, np.shape(a)), rt.unbroadcast(np.reshape(b_bar, shape), b)

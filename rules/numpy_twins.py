"""NumPy functions differentiated as what they compute: each twin below is the function written in
the subset the compiler follows (read by `registry.twin_of`, inlined where the NumPy function is
called), so its gradient and tangent come from the rules of the operations it is made of. A
keyword a twin does not take is refused at the call, naming it.

    np.nanvar(a, axis=1)   ->   the mean of the squared deviations of the non-NaN entries
"""
import numpy as np

from adjoint_compiler.registry import differentiate_as


@differentiate_as(np.nanprod)
def nanprod(a, axis=None, keepdims=False):
    return np.prod(np.where(np.isnan(a), 1.0, a), axis=axis, keepdims=keepdims)


@differentiate_as(np.nanvar)
def nanvar(a, axis=None, ddof=0, keepdims=False):
    missing = np.isnan(a)
    centre = np.nanmean(a, axis=axis, keepdims=True)
    deviation = np.where(missing, 0.0, a - centre)
    count = np.sum(~missing, axis=axis, keepdims=keepdims)
    return np.sum(deviation * deviation, axis=axis, keepdims=keepdims) / (count - ddof)


@differentiate_as(np.nanstd)
def nanstd(a, axis=None, ddof=0, keepdims=False):
    return np.sqrt(nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims))


@differentiate_as(np.linalg.multi_dot)
def multi_dot(arrays):
    """The products in order (NumPy chooses an order that costs less; the value is the same)."""
    out = arrays[0]
    for a in arrays[1:]:
        out = out @ a
    return out


@differentiate_as(np.linalg.tensorsolve)
def tensorsolve(a, b):
    shape = a.shape[b.ndim:]
    n = 1
    for k in shape:
        n = n * k
    return np.linalg.solve(a.reshape(-1, n), b.reshape(-1)).reshape(shape)


@differentiate_as(np.linalg.tensorinv)
def tensorinv(a, ind=2):
    n = 1
    for k in a.shape[:ind]:
        n = n * k
    return np.linalg.inv(a.reshape(n, -1)).reshape(a.shape[ind:] + a.shape[:ind])

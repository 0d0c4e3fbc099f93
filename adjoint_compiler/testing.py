"""check_grads: the compiled gradient against central finite differences.

Finite differences are taken along random directions (and along each coordinate for small inputs),
in float64, so a gradient is never checked against the compiler itself.
"""
from __future__ import annotations

import inspect

import numpy as np

from .api import _bind, grad
from .buffer import Buffer
from .frontend import _unwrap


def _fresh(value):
    if isinstance(value, (np.ndarray, Buffer)):
        return value.copy() if isinstance(value, np.ndarray) else Buffer(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_fresh(v) for v in value)
    return value


def _flatten(value):
    if isinstance(value, (tuple, list)):
        return np.concatenate([_flatten(v) for v in value]) if value else np.zeros(0)
    return np.asarray(value, dtype=float).ravel()


def _unflatten(flat, like, offset=0):
    if isinstance(like, (tuple, list)):
        out = []
        for v in like:
            item, offset = _unflatten(flat, v, offset)
            out.append(item)
        return type(like)(out), offset
    size = np.size(like)
    chunk = flat[offset:offset + size]
    if isinstance(like, np.ndarray):
        return chunk.reshape(like.shape).astype(np.result_type(like.dtype, float)), offset + size
    return float(chunk[0]), offset + size


def numerical_grad(f, args: list, i: int, eps: float = 1e-6, directions: int = 3, rng=None):
    """(directions, directional derivatives) of f along random unit directions of argument i."""
    rng = rng or np.random.default_rng(0)
    x0 = _flatten(args[i])
    dirs = [rng.standard_normal(x0.size) for _ in range(directions)]
    if x0.size <= 12:
        dirs += list(np.eye(x0.size))
    derivs = []
    for d in dirs:
        def at(t, d=d):
            a = list(args)
            a[i] = _unflatten(x0 + t * d, args[i])[0]
            return float(f(*a))
        derivs.append((at(eps) - at(-eps)) / (2 * eps))
    return dirs, derivs


def check_grads(f, *args, wrt=0, rtol: float = 1e-5, atol: float = 1e-6, eps: float = 1e-6, **kwargs):
    """Raise AssertionError (showing both values) unless grad(f, wrt) matches finite differences."""
    values = _bind(f, args, kwargs)
    wrts = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    g = grad(f, wrts)(*args, **kwargs)

    params = list(inspect.signature(_unwrap(f)).parameters.values())

    def plain(*a):
        a = [_fresh(v) for v in a]  # f may write into its arguments: every evaluation gets copies
        positional = [v for p, v in zip(params, a) if p.kind is not p.KEYWORD_ONLY]
        keywords = {p.name: v for p, v in zip(params, a) if p.kind is p.KEYWORD_ONLY}
        return f(*positional, **keywords)
    for i, gi in zip(wrts, g):
        flat_g = _flatten(gi)
        dirs, derivs = numerical_grad(plain, values, i, eps)
        for d, fd in zip(dirs, derivs):
            ad = float(flat_g @ d)
            if not np.isclose(ad, fd, rtol=rtol, atol=atol * max(1.0, np.abs(d).sum())):
                raise AssertionError(
                    f"gradient of argument {i} does not match finite differences along a direction:\n"
                    f"  compiled: {ad!r}\n  finite differences: {fd!r}\n  compiled gradient: {gi!r}")
    return g[0] if isinstance(wrt, int) else g

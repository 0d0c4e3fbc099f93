"""check_grads: the compiled gradient against central finite differences.

Finite differences are taken along random directions (and along each coordinate for small inputs),
in float64, so a gradient is never checked against the compiler itself. A complex argument
z = x + iy is perturbed in x and in y separately; its compiled gradient is read under the
convention of autograd and JAX, dL/dx - i dL/dy.
"""
from __future__ import annotations

import copy
import inspect

import numpy as np

from . import trees
from .api import _bind, grad
from .buffer import Buffer
from .frontend import _unwrap
from .runtime import _rebuild


def _fresh(value):
    if isinstance(value, (np.ndarray, Buffer)):
        return value.copy() if isinstance(value, np.ndarray) else Buffer(value)
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [_fresh(v) for v in value])
    if trees.fields_of(value) is not None:
        return _restructure(value, [_fresh(trees.item(value, k)) for k in trees.fields_of(value)[1]])
    return value


def _restructure(like, items: list):
    """A structure like `like` (a dict, named tuple, dataclass or object) holding `items`."""
    tag, keys = trees.fields_of(like)
    if tag == "dict":
        return dict(zip(keys, items))
    if tag == "namedtuple":
        return type(like)._make(items)
    out = copy.copy(like)
    for k, v in zip(keys, items):
        object.__setattr__(out, k, v)
    return out


def _flatten(value, like=None, conjugate: bool = False):
    """The real numbers of the differentiable leaves of `value` in order (a complex one's real
    parts, then its imaginary parts, negated with `conjugate`: a gradient dL/dx - i dL/dy is the
    real vector (dL/dx, dL/dy)). None leaves are skipped, and so are the leaves of a structure
    whose counterpart in `like` (the argument, when `value` is its gradient) is an integer
    (perturbing `n` in `range(p.n)` would not be a derivative)."""
    like = value if like is None else like
    if value is None:
        return np.zeros(0)
    if trees.fields_of(value) is not None:
        parts = [_flatten(trees.item(value, k), trees.item(like, k), conjugate)
                 for k in trees.fields_of(value)[1] if not _integer_field(trees.item(like, k))]
        return np.concatenate(parts) if parts else np.zeros(0)
    if isinstance(value, (tuple, list)):
        parts = [_flatten(v, w, conjugate) for v, w in zip(value, like)]
        return np.concatenate(parts) if parts else np.zeros(0)
    if not trees.differentiable_leaf(value):
        return np.zeros(0)
    a = np.asarray(value)
    if a.dtype.kind == "c":
        return np.concatenate([a.real.ravel(), (-a.imag if conjugate else a.imag).ravel()])
    return np.asarray(value, dtype=float).ravel()


def _integer_field(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _unflatten(flat, like, offset=0):
    if isinstance(like, (tuple, list)) or trees.fields_of(like) is not None:
        out = []
        structure = not (isinstance(like, (tuple, list)) and not trees.is_namedtuple(like))
        for v in (like if not structure else [trees.item(like, k) for k in trees.fields_of(like)[1]]):
            if structure and _integer_field(v):
                out.append(v)
                continue
            item, offset = _unflatten(flat, v, offset)
            out.append(item)
        if isinstance(like, (tuple, list)) and not trees.is_namedtuple(like):
            return type(like)(out), offset
        return _restructure(like, out), offset
    if like is None or not trees.differentiable_leaf(like):
        return like, offset
    size = np.size(like)
    if np.iscomplexobj(like):
        chunk = flat[offset:offset + size] + 1j * flat[offset + size:offset + 2 * size]
        if isinstance(like, np.ndarray):
            return chunk.reshape(like.shape).astype(like.dtype), offset + 2 * size
        return (like.dtype.type(chunk[0]) if isinstance(like, np.generic) else complex(chunk[0])), offset + 2 * size
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
        flat_g = _flatten(gi, values[i], conjugate=True)
        dirs, derivs = numerical_grad(plain, values, i, eps)
        for d, fd in zip(dirs, derivs):
            ad = float(flat_g @ d)
            if not np.isclose(ad, fd, rtol=rtol, atol=atol * max(1.0, np.abs(d).sum())):
                raise AssertionError(
                    f"gradient of argument {i} does not match finite differences along a direction:\n"
                    f"  compiled: {ad!r}\n  finite differences: {fd!r}\n  compiled gradient: {gi!r}")
    return g[0] if isinstance(wrt, int) else g


def _flat_output(value) -> np.ndarray:
    if isinstance(value, Buffer):
        value = value.data
    if isinstance(value, (tuple, list)):
        parts = [_flat_output(v) for v in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    if value is None:
        return np.zeros(0)
    a = np.asarray(value)
    if a.dtype.kind == "c":
        return np.concatenate([a.real.ravel(), a.imag.ravel()])
    return np.asarray(value, dtype=float).ravel()


def check_jvp(f, *args, wrt=None, rtol: float = 1e-5, atol: float = 1e-6, eps: float = 1e-6, directions: int = 2,
              seed: int = 0):
    """Raise AssertionError (showing both values) unless `jvp(f, args, tangents)` matches central
    finite differences of `f` along random tangents of the arguments in `wrt` (all float and
    complex arguments by default; the others get zero tangents), and its value matches `f(*args)`.
    A complex argument's tangent is a random complex direction; a complex output's tangent is
    compared in its real and imaginary parts."""
    from .forward_api import _integer, _numeric, jvp

    rng = np.random.default_rng(seed)
    positions = range(len(args)) if wrt is None else ((wrt,) if isinstance(wrt, int) else tuple(wrt))
    positions = [i for i in positions if _numeric(args[i]) and not _integer(args[i])]

    def zero(a):
        if isinstance(a, (tuple, list)):
            return type(a)(zero(v) for v in a)
        return 0.0 if np.ndim(a) == 0 and not isinstance(a, (np.ndarray, Buffer)) else np.zeros(np.shape(a))

    def random(a):
        if isinstance(a, (tuple, list)):
            return type(a)(random(v) for v in a)
        if _integer(a) or not _numeric(a):
            return zero(a)
        t = rng.standard_normal(np.shape(a))
        if np.iscomplexobj(a) and not isinstance(a, Buffer):
            t = t + 1j * rng.standard_normal(np.shape(a))
            return complex(t) if np.ndim(a) == 0 and not isinstance(a, np.ndarray) else t
        return float(t) if np.ndim(a) == 0 and not isinstance(a, (np.ndarray, Buffer)) else t

    def moved(t):
        out = []
        for i, a in enumerate(args):
            if i in positions and tangents[i] is not None:
                flat = _flatten(a) + t * _flatten(tangents[i])
                out.append(_unflatten(flat, a)[0] if not isinstance(a, Buffer) else Buffer(flat.reshape(a.shape)))
            else:
                out.append(_fresh(a))
        return out

    for _ in range(directions):
        tangents = [random(a) if i in positions else zero(a) for i, a in enumerate(args)]
        value, tangent = jvp(f, tuple(_fresh(a) for a in args), tuple(tangents))
        expected = _flat_output(f(*[_fresh(a) for a in args]))
        if not np.allclose(_flat_output(value), expected, rtol=1e-10, atol=1e-12, equal_nan=True):
            raise AssertionError(f"jvp's value differs from the function's:\n  jvp: {value!r}\n  f: {expected!r}")
        fd = (_flat_output(f(*moved(eps))) - _flat_output(f(*moved(-eps)))) / (2 * eps)
        got = _flat_output(tangent)
        scale = 1.0 + sum(float(np.abs(_flatten(tangents[i])).sum()) for i in positions)
        if got.shape != fd.shape or not np.allclose(got, fd, rtol=rtol, atol=atol * scale):
            raise AssertionError(f"jvp does not match finite differences along a tangent:\n  compiled: {got!r}\n"
                                 f"  finite differences: {fd!r}")
    return value, tangent

"""Helpers called by the built-in rule templates in `rules/` (re-exported by `runtime` as `rt.*`).

Each helper is the part of an adjoint rule too long for a one-line template. Like the rest of
`runtime`, a helper takes plain NumPy values or Python scalars, returns a new value (or a read-only
broadcast view) and never writes into its arguments.

Subgradient conventions (where a function has a kink or a tie):
- `abs` / `np.abs` / `math.fabs` at 0: 0 (`np.sign(0) == 0`);
- max/min reductions (`np.max`, `np.amax`, `x.min()`, ...) and `norm(ord=inf)`: the gradient is
  split equally among the entries tied for the extremum;
- `np.maximum`, `np.minimum`, `np.fmax`, `np.fmin` and the builtins `max`/`min` of scalars: tied
  arguments share the gradient equally (0.5 each for two);
- `np.clip(a, lo, hi)`: `a` receives the gradient where `lo <= a <= hi`, bounds included; an array
  bound receives it only where it is strictly active (`a < lo`, `a > hi`).
"""
from __future__ import annotations

import functools
import math
import operator
import string as _string

import numpy as np

from .errors import NoGradientError as _NoGradientError

from . import runtime_facts as _facts


def _scalar(v):
    """A 0-d array as a NumPy scalar (so gradients of scalars stay scalars)."""
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def _axes(axis, ndim: int) -> tuple:
    """`axis` (None, an int or a tuple) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        return (int(axis) % ndim,)
    return tuple(int(a) % ndim for a in axis)


# -- elementwise ----------------------------------------------------------------------------------

@_facts.numeric
def choice_weight(z, x, y):
    """The share of `x` in `z`, where `z` is one of `x`, `y` (maximum, minimum, fmax, fmin):
    1 where `z` took `x`, 0 where it took `y`, 0.5 on ties."""
    took = np.equal(z, x) * 1.0  # (two passes where the rare ties are looked for afterwards: a
    tie = np.equal(x, y)         # nested `np.where` with scalar branches costs ten times more)
    if np.any(tie):
        took = np.where(tie, 0.5, took)
    return _scalar(took)


def _bounds(a, lo, hi):
    lo = -np.inf if lo is None else lo
    hi = np.inf if hi is None else hi
    below = np.logical_and(a < lo, lo <= hi)  # np.clip applies the upper bound last
    inside = np.logical_and(a >= lo, a <= hi)
    return below, inside


def clip_inside(a, lo, hi, min=None, max=None):
    """1.0 where `np.clip(a, lo, hi)` passes `a` through (bounds included), else 0.0. (`min`,
    `max`: the bounds spelled as keywords.) A missing bound is no test (ReLU as `np.clip(a, 0,
    None)` costs one comparison)."""
    lo, hi = lo if min is None else min, hi if max is None else max
    if lo is None or hi is None:
        inside = np.ones(np.shape(a), dtype=bool) if lo is None and hi is None else (a <= hi if lo is None else a >= lo)
    else:
        inside = np.logical_and(a >= lo, a <= hi)
    return _scalar(inside * 1.0)


def clip_below(a, lo, hi, min=None, max=None):
    """1.0 where the lower bound `lo` is the result of `np.clip(a, lo, hi)` (strictly), else 0.0."""
    return _scalar(_bounds(a, lo if min is None else min, hi if max is None else max)[0] * 1.0)


def clip_above(a, lo, hi, min=None, max=None):
    """1.0 where the upper bound `hi` is the result of `np.clip(a, lo, hi)` (strictly), else 0.0."""
    below, inside = _bounds(a, lo if min is None else min, hi if max is None else max)
    return _scalar(np.logical_not(np.logical_or(below, inside)) * 1.0)


@_facts.fresh
@_facts.numeric
def masked(g, condition, keep=True):
    """`np.where(condition, g, 0.0)` (with `keep=False`: `np.where(condition, 0.0, g)`), the
    gradient of `np.where`'s chosen operand. A real array `g` is multiplied by the mask (a
    fifth of `np.where`'s cost with a scalar branch); a nan in the product sends it to
    `np.where`, so an infinite `g` where the mask is off still gives exactly 0 there."""
    mask = np.asarray(condition)
    if mask.dtype != bool:
        mask = mask.astype(bool)
    if not keep:
        mask = np.logical_not(mask)
    if type(g) is np.ndarray and g.dtype.kind == "f" and g.ndim:
        with np.errstate(invalid="ignore"):  # (inf * 0 where the mask is off: replaced below)
            out = g * mask
        if out.flags.c_contiguous and out.dtype.itemsize >= 4:
            flat = out.reshape(-1)
            total = flat @ flat  # a nan somewhere, or not (squares overflow to inf, never to nan)
        else:
            total = np.add.reduce(out, axis=None)
        if total == total:
            return out
    return _scalar(np.where(mask, g, 0.0))


@_facts.fresh
@_facts.numeric
def chain(g, d):
    """`g * d`, exactly 0 wherever the cotangent `g` is 0, even where the local derivative `d` is
    infinite: a path that contributes nothing (a branch not taken, a loop run zero times, an entry
    `np.where` did not select, a slot later overwritten) contributes nothing, never `0 * inf = nan`.
    Used by the elementwise rules (`sqrt`, `log`, `arcsin`, `cbrt`, `*`, `/`, `x ** p`...)."""
    if isinstance(d, _PLAIN) and isinstance(g, _PLAIN):  # the scalar fast path: no errstate
        if g == 0 and not math.isfinite(d):
            return g * 0.0
        return g * d
    return _zero_cotangent_gives_zero(g, g * d)  # (no errstate: it costs more than the product)


@_facts.fresh
@_facts.numeric
def chain_div(g, d):
    """`g / d`, exactly 0 wherever `g` is 0 (as `chain`); never raises for a Python zero `d`."""
    if isinstance(d, _PLAIN) and isinstance(g, _PLAIN) and d != 0 and math.isfinite(d):
        return g / d
    with np.errstate(invalid="ignore", divide="ignore"):
        return _zero_cotangent_gives_zero(g, np.true_divide(g, d))


_PLAIN = (float, int)  # np.float64 is a float; bool is an int


def _zero_cotangent_gives_zero(g, out):
    if isinstance(out, float) or (isinstance(out, np.generic) and out.dtype.kind == "f"):
        if out == out or g != 0:  # not nan, or nan from a cotangent that is not zero
            return out
        return out.dtype.type(0.0) if isinstance(out, np.generic) else 0.0
    if type(g) is np.ndarray and g.base is not None and g.ndim and g.size and not any(g.strides):
        g = g.flat[0]  # one number broadcast (the gradient of a sum or mean)
    if isinstance(g, (float, int)) and g != 0:
        return out  # a cotangent zero nowhere: any nan is the derivative's own
    if isinstance(out, np.ndarray) and out.dtype.kind == "f":
        if out.flags.c_contiguous and out.dtype.itemsize >= 4:
            flat = out.reshape(-1)
            total = flat @ flat  # a nan somewhere, or not (BLAS: cheaper than a sum or a scan)
        else:
            total = np.add.reduce(out, axis=None)
        if total != total and np.isnan(out).any():  # (inf - inf in a sum: a nan that was not there)
            out = np.where(np.broadcast_to(np.equal(g, 0), out.shape), out.dtype.type(0.0), out)
    return out


def log_of_base(base):
    """log(base) for `math.log(x, base)`; 1.0 for the natural log."""
    return 1.0 if base is None else np.log(base)


def _cast_is_constant(dtype, x) -> bool:
    """Whether converting `x` to `dtype` is piecewise constant (no gradient): a conversion to
    booleans, or to integers of numbers that are not integers (floats, complex numbers). An
    integer `x` converted to integers keeps its value: its gradient passes, as through `x * 1.0`.
    `x` is read for its dtype alone (an array, a scalar or a ShapeOf; None: a float); a `dtype`
    of None keeps `x`'s (never constant)."""
    if dtype is None:
        return False
    kind = np.dtype(dtype).kind
    return kind == "b" or (kind in "iu" and not _runtime._integer_storage(x))


@_facts.identity_unless(1)
@_facts.reads_only_dtype(2)
def cast_adjoint(g, dtype, x=None):
    """The gradient of `x` in its conversion to `dtype` (`x.astype(dtype)`, `np.int64(x)`): `g`
    itself, or zero where the conversion is piecewise constant (`_cast_is_constant`: floats cast
    to integers, anything to booleans). A complex `x` cast to a real dtype passes `g` (the
    gradient of its real part). Linear in `g`, and its own transpose."""
    if _cast_is_constant(dtype, x):
        return np.zeros(np.shape(g)) if np.ndim(g) else 0.0
    return g


def expand_like(g, like):
    """`g` broadcast to the shape of `like` (a read-only view)."""
    return np.broadcast_to(g, np.shape(like))


# -- reductions -----------------------------------------------------------------------------------

def _expand(g, x, axis, keepdims):
    return _runtime.expand_reduced(g, x, axis, keepdims)


@_facts.reads_only_shape(0)
def reduced_size(x, axis=None):
    """How many entries of `x` a reduction over `axis` combines into each result; 1 for an empty
    reduction (the gradient it divides is spread over no entry: nothing is divided by zero)."""
    shape = x.shape if hasattr(x, "shape") else np.shape(x)
    if axis is None or not shape:
        return max(1, math.prod(shape))
    return max(1, math.prod([shape[a] for a in _axes(axis, len(shape))]))


def extremum_adjoint(g, x, y, axis=None, keepdims=False):
    """The gradient of `x` in `y = max(x, axis)` (or min): split equally among tied entries."""
    if np.ndim(x) == 0:
        return g
    x = np.asarray(x)
    hit = x == _expand(y, x, axis, keepdims)
    if not keepdims and axis is not None:  # (the cotangent and the counts in the reduced shape)
        g = np.expand_dims(g, _axes(axis, x.ndim))
    if np.count_nonzero(hit) == np.size(y) and not np.isnan(y).any():
        return hit * g  # every extremum is hit (none is nan) and once: no ties to split
    with np.errstate(invalid="ignore", divide="ignore"):
        return hit * (g / np.count_nonzero(hit, axis=axis, keepdims=True))


def prod_adjoint(g, x, axis=None, keepdims=False):
    """The gradient of `x` in `np.prod(x, axis)`: each entry gets the product of the others
    (exclusive cumulative products, so zeros in `x` are fine)."""
    x = np.asarray(x)
    if x.ndim == 0:
        return g
    if x.size == 0:
        return np.zeros(x.shape)  # (the cumulative products below would pad an empty axis to one entry)
    axes = _axes(axis, x.ndim)
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, last)
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(flat, -1)[..., :-1]], -1), -1), -1)
    others = np.moveaxis((before * after).reshape(moved.shape), last, axes)
    return _expand(g, x, axis, keepdims) * others


def var_adjoint(g, x, axis=None, ddof=0, keepdims=False):
    """The gradient of `x` in `np.var(x, axis, ddof=ddof)`: 2 (x - mean) / (N - ddof)."""
    if np.ndim(x) == 0:
        return 0.0  # a scalar's variance is 0 whatever the scalar
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return _expand(g, x, axis, keepdims) * (2.0 / (reduced_size(x, axis) - ddof)) * centered


def cumsum_adjoint(g, x, axis=None):
    """The gradient of `x` in `np.cumsum(x, axis)`: the reversed cumulative sum of `g`."""
    if axis is None:
        return np.flip(np.cumsum(np.flip(np.ravel(g)))).reshape(np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod_adjoint(g, x, y, axis=None):
    """The gradient of `x` in `y = np.cumprod(x, axis)`, exact where `x` has zeros:
    x_bar[i] = prod(x[:i]) * s[i] with s[i] = g[i] + x[i+1] * s[i+1] (no division by `x`)."""
    if axis is None:
        return np.reshape(cumprod_adjoint(np.ravel(g), np.ravel(x), np.ravel(y), 0), np.shape(x))
    x = np.asarray(x)
    g = np.broadcast_to(g, x.shape)
    if np.all(x != 0):
        return cumsum_adjoint(g * y, x, axis) / x
    gm, xm = np.moveaxis(g, axis, 0), np.moveaxis(x, axis, 0)
    s = np.empty(gm.shape, dtype=np.result_type(gm, xm, float))
    n = xm.shape[0]
    s[n - 1] = gm[n - 1]
    for i in range(n - 2, -1, -1):
        s[i] = gm[i] + xm[i + 1] * s[i + 1]
    before = np.cumprod(np.concatenate([np.ones((1,) + xm.shape[1:]), xm[:-1]]), axis=0)
    return np.moveaxis(before * s, 0, axis)


@_facts.identity_unless(1)
def through_dtype(g, dtype=None):
    """`g`, or no gradient when the operation computes in an integer or boolean `dtype`."""
    if dtype is not None and np.dtype(dtype).kind in "biu":
        return np.zeros(np.shape(g))
    return g


def std_adjoint(g, x, y, axis=None, ddof=0, keepdims=False):
    """The gradient of `x` in `y = np.std(x, axis, ddof=ddof)`: var's over 2 y; 0 where the slice
    is constant (the standard deviation has a cone there, 0 is its least subgradient). A constant
    slice whose mean is not exact in floating point has a std of rounding noise (1e-17 for
    [0.37, 0.37, 0.37]): a std within a few ulps of the slice's magnitude counts as 0."""
    y = np.asarray(y)
    if np.ndim(x) == 0:
        return 0.0
    scale = np.max(np.abs(x), axis=axis, keepdims=keepdims, initial=0.0)  # (0 over no entry)
    tip = y <= 16.0 * np.finfo(float).eps * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        gy = np.where(tip, 0.0, g / (2.0 * np.where(tip, 1.0, y)))
    return var_adjoint(_scalar(gy), x, axis, ddof, keepdims)


# -- norms and traces -----------------------------------------------------------------------------

def _vector_norm_adjoint(x, y, ord):
    """d norm / dx for the vector norms other than the 2-norm, `y` the norm broadcast to `x`'s shape."""
    ax = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ord == 0:
            return np.zeros(np.shape(x))
        if ord == 1:
            return np.sign(x)
        d = np.sign(x) * (ax / np.where(y == 0, 1.0, y)) ** (ord - 1)
        return np.where(np.logical_or(y == 0, x == 0), 0.0, d)  # a norm at 0: 0, like |x| at 0


def _two_norm_adjoint(g, x, y, axis, keepdims):
    """`g * x / y` for the 2-norm (or Frobenius norm) `y` of `x` over `axis`, 0 where `y` is 0 (there
    `x` is 0): the cotangent is scaled in the reduced shape, and `x` multiplied once."""
    if np.ndim(y) == 0:
        scale = g * 0.0 if y == 0 else g / y
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(y == 0, 0.0, np.true_divide(g, y))
    return x * (scale if np.ndim(scale) == 0 else _expand(scale, x, axis, keepdims))


def norm_adjoint(g, x, y, ord=None, axis=None, keepdims=False):
    """The gradient of `x` in `y = np.linalg.norm(x, ord, axis, keepdims)`. Vector ord: p-norms,
    inf and -inf (ties split equally); matrix ord: 'fro', 'nuc', 2, -2, 1, -1, inf, -inf."""
    if ord is None and axis is None and type(x) is np.ndarray and x.dtype.kind == "f" and not keepdims:
        return x * (g * 0.0 if y == 0 else g / y)  # the 2-norm of all the slots, the common call
    x = np.asarray(x)
    matrix = (axis is None and ord is not None and x.ndim == 2) or (np.ndim(axis) == 1 and len(axis) == 2)
    if not matrix:
        if ord is None or ord == 2:
            return _two_norm_adjoint(g, x, y, axis, keepdims)
        ge, ye = _expand(g, x, axis, keepdims), _expand(y, x, axis, keepdims)
        if ord in (np.inf, -np.inf):
            hit = np.abs(x) == ye
            return ge * np.sign(x) * hit / np.sum(hit, axis=axis, keepdims=True)
        return ge * _vector_norm_adjoint(x, ye, ord)
    if ord in (None, "fro"):
        return _two_norm_adjoint(g, x, y, axis, keepdims)
    rows, cols = (0, 1) if axis is None else _axes(axis, x.ndim)
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    gm = np.reshape(g, xm.shape[:-2])[..., None, None]
    if ord in ("nuc", 2, -2):
        u, sv, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":  # the singular vectors of nonzero singular values only (the least subgradient)
            tol = max(xm.shape[-2:]) * np.finfo(float).eps * np.max(sv, axis=-1, keepdims=True)
            d = (u * (sv > tol)[..., None, :]) @ vh
        else:
            k = 0 if ord == 2 else -1
            d = u[..., :, k, None] * vh[..., k, None, :]
    elif ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1  # 1: max column sum (sum over rows); inf: max row sum
        sums = np.sum(np.abs(xm), axis=along, keepdims=True)
        across = -1 if along == -2 else -2
        best = np.max(sums, axis=across, keepdims=True) if ord in (1, np.inf) else \
            np.min(sums, axis=across, keepdims=True)
        hit = sums == best
        d = np.sign(xm) * hit / np.sum(hit, axis=across, keepdims=True)
    else:
        raise ValueError(f"no gradient for the matrix norm ord={ord!r}")
    ym = np.reshape(y, xm.shape[:-2])[..., None, None]
    return np.moveaxis(gm * np.where(ym == 0, 0.0, d), (-2, -1), (rows, cols))


def trace_adjoint(g, x, offset=0, axis1=0, axis2=1):
    """The gradient of `x` in `np.trace(x, offset, axis1, axis2)`: `g` on that diagonal."""
    shape = np.shape(x)
    eye = np.eye(shape[axis1], shape[axis2], k=offset)
    axes = (axis1 % len(shape), axis2 % len(shape))
    return np.moveaxis(np.asarray(g)[..., None, None] * eye, (-2, -1), axes)


def diagonal_adjoint(g, x, offset=0, axis1=0, axis2=1):
    """The gradient of `x` in `np.diagonal(x, offset, axis1, axis2)`: `g` written onto that diagonal."""
    shape = np.shape(x)
    axis1, axis2 = axis1 % len(shape), axis2 % len(shape)
    g = np.asarray(g)
    out = np.zeros(g.shape[:-1] + (shape[axis1], shape[axis2]), dtype=np.result_type(g, float))
    k = np.arange(g.shape[-1])
    out[..., k + max(-offset, 0), k + max(offset, 0)] = g
    return np.moveaxis(out, (-2, -1), (axis1, axis2))


def diag_adjoint(g, v, k=0):
    """The gradient of `v` in `np.diag(v, k)`: the k-th diagonal of `g` for a vector `v` (which
    `np.diag` put on a diagonal), `g` on that diagonal for a matrix `v`."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return diagonal_adjoint(g, v, k)


# -- products -------------------------------------------------------------------------------------

def _contraction(a, b, axes):
    """(a_axes, b_axes) of `np.tensordot(a, b, axes)` as lists of non-negative axes."""
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(np.ndim(a) - n, np.ndim(a))), list(range(n))
    a_axes, b_axes = axes
    a_axes = [a_axes] if np.ndim(a_axes) == 0 else list(a_axes)
    b_axes = [b_axes] if np.ndim(b_axes) == 0 else list(b_axes)
    return [int(i) % np.ndim(a) for i in a_axes], [int(i) % np.ndim(b) for i in b_axes]


def tensordot_left(g, a, b, axes=2):
    """The gradient of `a` in `np.tensordot(a, b, axes)`."""
    a_axes, b_axes = _contraction(a, b, axes)
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    g = np.asarray(g)
    r = np.tensordot(g, b, axes=(list(range(len(a_free), g.ndim)), b_free))
    src = a_free + [a_axes[b_axes.index(i)] for i in sorted(b_axes)]
    return _scalar(r.transpose([src.index(i) for i in range(np.ndim(a))]))


def tensordot_right(g, a, b, axes=2):
    """The gradient of `b` in `np.tensordot(a, b, axes)`."""
    a_axes, b_axes = _contraction(a, b, axes)
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    r = np.tensordot(a, np.asarray(g), axes=(a_free, list(range(len(a_free)))))
    src = [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + b_free
    return _scalar(r.transpose([src.index(i) for i in range(np.ndim(b))]))


def _dot_axes(a, b):
    return ([np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)])


def dot_left(g, a, b):
    """The gradient of `a` in `np.dot(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _runtime.unbroadcast(g * b, a)
    return tensordot_left(g, a, b, _dot_axes(a, b))


def dot_right(g, a, b):
    """The gradient of `b` in `np.dot(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _runtime.unbroadcast(g * a, b)
    return tensordot_right(g, a, b, _dot_axes(a, b))


def inner_left(g, a, b):
    """The gradient of `a` in `np.inner(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _runtime.unbroadcast(g * b, a)
    return tensordot_left(g, a, b, ([-1], [-1]))


def inner_right(g, a, b):
    """The gradient of `b` in `np.inner(a, b)`."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _runtime.unbroadcast(g * a, b)
    return tensordot_right(g, a, b, ([-1], [-1]))


@functools.lru_cache(maxsize=512)
def einsum_spec(subscripts: str, ndims: tuple) -> tuple:
    """(input subscripts, output subscript) with every `...` spelled out as letters."""
    spec = subscripts.replace(" ", "")
    lhs, out = spec.split("->") if "->" in spec else (spec, None)
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(f"einsum subscripts {subscripts!r} name {len(inputs)} operands, got {len(ndims)}")
    spare = [c for c in _string.ascii_letters if c not in spec]
    extra = [nd - (len(t) - 3) for t, nd in zip(inputs, ndims) if "..." in t]
    ell = "".join(spare[:max(extra, default=0)])
    spelled = [t.replace("...", ell[len(ell) - (nd - (len(t) - 3)):]) if "..." in t else t
               for t, nd in zip(inputs, ndims)]
    if out is None:
        letters = "".join(t.replace("...", "") for t in inputs)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    else:
        out = out.replace("...", ell)
    return tuple(spelled), out


def _sublist_subscripts(args) -> tuple:
    """(subscripts string, operands) of the interleaved form `einsum(a, [0, 1], b, [1], [0])`."""
    def letters(sub):
        return "".join("..." if k is Ellipsis else _string.ascii_letters[int(k)] for k in sub)
    operands, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(subs) == len(operands) - 1 or len(args) % 2 == 1:  # a trailing output sublist
        out = operands.pop() if len(args) % 2 == 1 else None
    spec = ",".join(letters(s) for s in subs[:len(operands)])
    if out is not None:
        spec += "->" + letters(out)
    return spec, operands


@functools.lru_cache(maxsize=512)
def product_plan(ta: str, tb: str, out: str):
    """How `einsum(ta + "," + tb + "->" + out)` is a batched matrix product, or None: batch letters
    are in both operands and the output, summed ones in both operands only, own ones in one
    operand and the output; no letter repeats within an operand or the output, and some letter is
    summed. The plan: (the permutations putting `a` in the order batch, own, summed and `b` in the
    order batch, summed, own, and the product in the output's order (None where they are the
    identity), and how many batch, own-of-`a` and summed letters there are)."""
    if len(set(ta)) != len(ta) or len(set(tb)) != len(tb) or len(set(out)) != len(out) \
            or not set(ta) | set(tb) >= set(out) or (set(ta) ^ set(tb)) - set(out):
        return None
    batch = [c for c in out if c in ta and c in tb]
    summed = [c for c in ta if c in tb and c not in out]
    own_a, own_b = [c for c in ta if c not in tb], [c for c in tb if c not in ta]
    if not summed:
        return None  # (an outer product along the batch: einsum's own loops are as fast)

    def perm(have, want):
        return None if list(have) == want else tuple(have.index(c) for c in want)
    return (perm(ta, batch + own_a + summed), perm(tb, batch + summed + own_b),
            perm("".join(batch + own_a + own_b), list(out)), len(batch), len(own_a), len(summed))


def _product(plan, a, b):
    """The einsum `plan` (`product_plan`) describes, as `a @ b` of the operands put in order, or
    of (batch, rows, summed) by (batch, summed, columns) stacks: BLAS. None where the shared
    letters' lengths differ (einsum broadcasts a length 1 against another; `@` would raise)."""
    pa, pb, pr, nb, na, ns = plan
    a = a if pa is None else a.transpose(pa)
    b = b if pb is None else b.transpose(pb)
    if a.shape[:nb] != b.shape[:nb] or a.shape[nb + na:] != b.shape[nb:nb + ns]:
        return None
    if nb == 0 and na <= 1 and ns == 1 and b.ndim <= 2:
        r = a @ b  # (a matrix or vector product: no reshaping)
    else:
        batch, rows, cols = a.shape[:nb], a.shape[nb:nb + na], b.shape[nb + ns:]
        k = math.prod(a.shape[nb + na:])
        r = np.matmul(a.reshape(batch + (math.prod(rows), k)), b.reshape(batch + (k, math.prod(cols))))
        r = r.reshape(batch + rows + cols)
    return r if pr is None else r.transpose(pr)


def einsum(*args, **kwargs):
    """`np.einsum(*args, **kwargs)`, the same values; called in its place by the generated code
    (`registry.computed_by`). Two operands in the subscripts form whose product is a (batched)
    matrix product go through BLAS (`_contract`): einsum's own loops are ten times slower."""
    if kwargs or len(args) != 3 or not isinstance(args[0], str):
        return np.einsum(*args, **kwargs)
    a, b = np.asarray(args[1]), np.asarray(args[2])
    if a.dtype == object or b.dtype == object:
        return np.einsum(*args)
    (ta, tb), out = einsum_spec(args[0], (a.ndim, b.ndim))
    return _contract([ta, tb], [a, b], out)


def _contract(terms: list, operands: list, out: str):
    """`np.einsum(",".join(terms) + "->" + out, *operands)`. Two operands whose product is a
    (batched) matrix product (`product_plan`) go through BLAS, ten times faster than einsum's
    own loops."""
    if len(terms) == 2 and np.ndim(operands[0]) and np.ndim(operands[1]):
        plan = product_plan(terms[0], terms[1], out)
        r = _product(plan, operands[0], operands[1]) if plan is not None else None
        if r is not None:
            return r
    return np.einsum(",".join(terms) + "->" + out, *operands)


def einsum_adjoint(g, args):
    """`einsum_adjoint(g, args)[i]`: the gradient of `args[i]` in `np.einsum(*args)`, one einsum
    of `g` with the other operands, for the subscripts form (`args[0]` a string) and the
    interleaved operand/sublist form. Indexing computes only the requested operand's gradient."""
    return _EinsumGradients(g, args)


def _einsum_positions(args) -> range:
    """The positions of the operands in the arguments of `np.einsum(*args)` (either form)."""
    if isinstance(args[0], str):
        return range(1, len(args))
    return range(0, len(args) - (len(args) % 2 == 1), 2)


def einsum_adjoint_transpose(h, g, args):
    """The gradients `(g_bar, args_bar)` in `grads = einsum_adjoint(g, args)`, given `h[i]`, the
    gradient of `grads[i]` (None where it has none). `grads[i]` is linear in `g` with the einsum
    itself, operand i replaced by h[i], as its transpose; in each other operand j it is the
    gradient of operand j of that same einsum."""
    g_bar, args_bar = None, [None] * len(args)
    positions = _einsum_positions(args)
    for i in positions:
        hi = h[i] if i < len(h) else None
        if hi is None:
            continue
        ops = list(args)
        ops[i] = hi
        term = np.einsum(*ops)
        g_bar = term if g_bar is None else g_bar + term
        grads = _EinsumGradients(g, ops)
        for j in positions:
            if j != i:
                t = grads[j]
                args_bar[j] = t if args_bar[j] is None else args_bar[j] + t
    g_bar = np.zeros(np.shape(g)) if g_bar is None else _runtime.unbroadcast(g_bar, g)
    return g_bar, _rebuild_like(args, args_bar)


def _rebuild_like(args, items: list):
    return tuple(items) if isinstance(args, tuple) else items


class _TangentItems:
    """The tangent of `einsum_adjoint(g, args)`: item i, the tangent of the gradient of operand i,
    computed when read; `+` adds item by item (the tangent rule's terms)."""

    def __init__(self, parts: list, n: int):
        self.parts, self.n = parts, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        values = [v for v in (p(i) for p in self.parts) if v is not None]
        return None if not values else functools.reduce(operator.add, values)

    def __add__(self, other):
        return _TangentItems(self.parts + other.parts, self.n)


def einsum_adjoint_g_tangent(g_dot, args):
    """The part of the tangent of `einsum_adjoint(g, args)` from `g`'s tangent (it is linear in g)."""
    grads = _EinsumGradients(g_dot, args)
    positions = set(_einsum_positions(args))
    return _TangentItems([lambda i: grads[i] if i in positions else None], len(args))


def einsum_adjoint_args_tangent(g, args, args_dot):
    """The part of the tangent of `einsum_adjoint(g, args)` from the operands' tangents: for item
    i, the gradients of operand i with each other operand j replaced by its tangent."""
    positions = list(_einsum_positions(args))

    def item(i):
        if i not in positions:
            return None
        total = None
        for j in positions:
            if j != i and args_dot is not None and args_dot[j] is not None:
                ops = list(args)
                ops[j] = args_dot[j]
                t = _EinsumGradients(g, ops)[i]
                total = t if total is None else total + t
        return total
    return _TangentItems([item], len(args))


@functools.lru_cache(maxsize=512)
def _gradient_letters(inputs: tuple, output: str, i: int) -> tuple:
    """For the gradient of operand `i` of `einsum(inputs -> output)`: the subscripts of the einsum
    computing it (the output's, then the other operands'), the operand's distinct letters, those
    of them the result keeps, and the positions of those summed in this operand alone."""
    others = [t for j, t in enumerate(inputs) if j != i]
    unique = "".join(dict.fromkeys(inputs[i]))
    available = set(output).union(*others)
    keep = "".join(c for c in unique if c in available)
    return [output] + others, unique, keep, tuple(pos for pos, c in enumerate(unique) if c not in available)


class _EinsumGradients:
    """The gradients of the operands of `np.einsum(*args)` (`einsum_adjoint`), each computed when
    it is read."""

    def __len__(self) -> int:
        return len(self.args)

    def __init__(self, g, args):
        self.args = args
        if isinstance(args[0], str):
            subscripts, operands = args[0], args[1:]
            self.position = {k + 1: k for k in range(len(operands))}
        else:
            subscripts, operands = _sublist_subscripts(args)
            self.position = {2 * k: k for k in range(len(operands))}
        self.g = g
        self.operands = [np.asarray(o) for o in operands]
        self.inputs, self.output = einsum_spec(subscripts, tuple(o.ndim for o in self.operands))

    def __getitem__(self, i):
        i = self.position[i]
        own, x = self.inputs[i], self.operands[i]
        terms, unique, keep, alone = _gradient_letters(self.inputs, self.output, i)
        r = _contract(terms, [self.g] + [o for j, o in enumerate(self.operands) if j != i], keep)
        for pos in alone:  # summed over in this operand alone: the gradient is constant along it
            r = np.expand_dims(r, pos)
        size = dict(zip(own, x.shape))
        target = tuple(size[c] for c in unique)
        spread = tuple(k for k, (n, m) in enumerate(zip(target, r.shape)) if n == 1 and m != 1)
        if spread:  # this operand was broadcast along these axes
            r = np.sum(r, axis=spread, keepdims=True)
        if r.shape != target:
            r = np.broadcast_to(r, target)
        if len(unique) == len(own):
            return _scalar(r)
        out = np.zeros(x.shape, dtype=np.result_type(r, float))
        np.einsum(own + "->" + unique, out)[...] = r  # a repeated index: write onto that diagonal
        return out


# -- linear algebra -------------------------------------------------------------------------------

def mT(x):
    """The matrix transpose of (a stack of) matrices: the last two axes swapped."""
    return np.swapaxes(x, -1, -2)


def solve_a_adjoint(b_adj, a, x, b):
    """The gradient of `a` in `x = np.linalg.solve(a, b)`, given `b_adj`, the gradient of `b`."""
    if np.ndim(b) == 1:
        return _runtime.unbroadcast(-b_adj[..., :, None] * x[..., None, :], a)
    return _runtime.unbroadcast(-(b_adj @ mT(x)), a)


def det_adjoint(g, y, a):
    """The gradient of `a` in `y = np.linalg.det(a)`: g times the cofactor matrix, g * y * inv(a)^T
    where `a` is invertible, and from the SVD where it is singular (cofactors need no inverse)."""
    a = np.asarray(a)
    if np.all(np.asarray(y) != 0):
        try:
            return np.asarray(g * y)[..., None, None] * mT(np.linalg.inv(a))
        except np.linalg.LinAlgError:
            pass
    return np.asarray(g)[..., None, None] * cofactors(a)


def cofactors(a):
    """The cofactor matrix of (a stack of) square matrices, singular ones included:
    a = u diag(s) vh gives det(u) det(vh) u diag(prod of the other s) vh."""
    u, sv, vh = np.linalg.svd(a)
    n = sv.shape[-1]
    ones = np.ones(sv.shape[:-1] + (1,))
    before = np.cumprod(np.concatenate([ones, sv[..., :-1]], -1), -1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(sv, -1)[..., :-1]], -1), -1), -1)
    others = (before * after)[..., :n]
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * ((u * others[..., None, :]) @ vh)


def slogdet_adjoint(g, a):
    """The gradient of `a` in `(sign, logabsdet) = np.linalg.slogdet(a)`, from the pair of
    gradients `g` (the sign's is ignored): g_logabsdet * inv(a)^T."""
    g_log = g[1]
    if g_log is None:
        return np.zeros(np.shape(a))
    try:
        return np.asarray(g_log)[..., None, None] * mT(np.linalg.inv(a))
    except np.linalg.LinAlgError:  # singular: log|det| is -inf there, its gradient cofactors / 0
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(g_log)[..., None, None] * cofactors(a) / np.linalg.det(a)[..., None, None]


def _inverse_for_second_order(a, what: str):
    """inv(a) for the rules of det's and slogdet's adjoints: where `a` is singular their second
    derivatives need more than the inverse, a clear error."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _NoGradientError(f"the second derivative of {what} at a singular matrix is not supported") from None


def det_adjoint_transpose(h, g, y, a):
    """The gradients `(g_bar, y_bar, a_bar)` in `d = det_adjoint(g, y, a) = g y inv(a)^T`, given `h`,
    the gradient of `d`: with B = inv(a), dB = -B da B, so a_bar = -g y (B h B)^T."""
    b = _inverse_for_second_order(a, "np.linalg.det")
    h = np.asarray(h)
    inner = np.sum(h * mT(b), axis=(-2, -1))
    gy = np.asarray(g * y)
    return _runtime.unbroadcast(y * inner, g), _runtime.unbroadcast(g * inner, y), \
        -gy[..., None, None] * mT(b @ h @ b)


def det_adjoint_tangent(g_dot, y_dot, a_dot, g, y, a):
    """The tangent of `det_adjoint(g, y, a)`: (g y)' inv(a)^T - g y (B a_dot B)^T (None: no tangent)."""
    b = _inverse_for_second_order(a, "np.linalg.det")
    scale = 0.0
    if g_dot is not None:
        scale = scale + g_dot * y
    if y_dot is not None:
        scale = scale + g * y_dot
    out = np.asarray(scale)[..., None, None] * mT(b)
    if a_dot is not None:
        out = out - np.asarray(g * y)[..., None, None] * mT(b @ a_dot @ b)
    return out


def slogdet_adjoint_transpose(h, g, a):
    """The gradients `(g_bar, a_bar)` in `d = slogdet_adjoint(g, a) = g[1] inv(a)^T` (the sign's
    gradient g[0] is not read), given `h`: a_bar = -g[1] (B h B)^T."""
    if g[1] is None:
        return (None, None), np.zeros(np.shape(a))
    b = _inverse_for_second_order(a, "np.linalg.slogdet")
    h = np.asarray(h)
    inner = np.sum(h * mT(b), axis=(-2, -1))
    return (None, _runtime.unbroadcast(inner, g[1])), -np.asarray(g[1])[..., None, None] * mT(b @ h @ b)


def slogdet_adjoint_tangent(g_dot, a_dot, g, a):
    """The tangent of `slogdet_adjoint(g, a)`."""
    if g[1] is None:
        return np.zeros(np.shape(a))
    b = _inverse_for_second_order(a, "np.linalg.slogdet")
    out = np.zeros(np.shape(b))
    if g_dot is not None and g_dot[1] is not None:
        out = out + np.asarray(g_dot[1])[..., None, None] * mT(b)
    if a_dot is not None:
        out = out - np.asarray(g[1])[..., None, None] * mT(b @ a_dot @ b)
    return out


# -- shape ----------------------------------------------------------------------------------------

def inverse_permutation(axes):
    """The axes undoing `np.transpose(x, axes)` (None for the default reversal). Accepts the forms
    of `x.transpose(...)`: `()`, `(None,)`, `(1, 0)` and `((1, 0),)`."""
    if isinstance(axes, tuple) and len(axes) == 1 and (axes[0] is None or np.ndim(axes[0]) == 1):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return None
    return tuple(int(i) for i in np.argsort(np.mod(axes, len(axes))))


def _like(parts, items):
    """Per-item gradients in the structure of `items`: a list, or one array for an array."""
    if isinstance(items, np.ndarray):
        return np.stack(parts)
    return [_scalar(p) for p in parts]


def _split(g, items, promoted, axis):
    """`g` cut along `axis` into pieces the sizes of `promoted`, each reshaped like its item."""
    g = np.asarray(g)
    index = [slice(None)] * g.ndim
    start, parts = 0, []
    for p, item in zip(promoted, items):  # (slicing: `np.split` costs ten times more)
        stop = start + _shape(p)[axis]
        index[axis] = slice(start, stop)
        part = g[tuple(index)]
        shape = _shape(item)
        parts.append(part if part.shape == shape else np.reshape(part, shape))
        start = stop
    return _like(parts, items)


def _shape(v) -> tuple:
    """np.shape(v), without converting an array (or a list of numbers) first."""
    if type(v) is np.ndarray:
        return v.shape
    if type(v) is list and all(type(e) in (float, int, np.float64) for e in v):
        return (len(v),)
    return np.shape(v)


@_facts.reads_only_shapes
def part_span(k, axis, *parts):
    """The positions `parts[k]` takes along `axis` in `np.concatenate(parts, axis)`, as a slice:
    `W[rt.part_span(0, 1, h, x)]` are the rows of `W` that `h` meets in `np.concatenate([h, x],
    axis=1) @ W` (`parts` are read for their shapes alone: arrays or `rt.shape_of`s)."""
    start = 0
    for p in parts[:k]:
        start += p.shape[axis]
    return slice(start, start + parts[k].shape[axis])


def concatenate_adjoint(g, arrays, axis=0):
    """The gradients of the items of `arrays` in `np.concatenate(arrays, axis)`."""
    if axis is None:
        return _split(np.ravel(g), arrays, [np.ravel(a) for a in arrays], 0)
    return _split(g, arrays, list(arrays), axis)


def stack_adjoint(g, arrays, axis=0):
    """The gradients of the items of `arrays` in `np.stack(arrays, axis)`."""
    return _like(list(np.moveaxis(np.asarray(g), axis, 0)), arrays)


def hstack_adjoint(g, tup):
    """The gradients of the items of `tup` in `np.hstack(tup)`."""
    promoted = [np.atleast_1d(a) for a in tup]
    return _split(g, tup, promoted, 0 if promoted[0].ndim == 1 else 1)


def vstack_adjoint(g, tup):
    """The gradients of the items of `tup` in `np.vstack(tup)`."""
    return _split(g, tup, [np.atleast_2d(a) for a in tup], 0)


def array_adjoint(g, obj, dtype=None, ndmin=0):
    """The gradient of `obj` in `np.array(obj, dtype, ndmin=ndmin)` (`np.asarray`, ...): for a
    (nested) list or tuple, one gradient per item; for an array or a scalar, `g` itself (without
    the leading axes `ndmin` added). An item gets `cast_adjoint`'s gradient: none where `dtype`
    makes integers of floats (or booleans of anything); integers kept integers pass theirs (with no
    `dtype`, NumPy never truncates an item: every item passes its gradient). Linear in `g`."""
    if ndmin and np.ndim(g) > 0:
        g = np.reshape(g, np.shape(obj) if not isinstance(obj, (list, tuple)) else np.shape(np.asarray(obj)))
    if isinstance(obj, (list, tuple)):
        return [array_adjoint(g[i], item, dtype) if isinstance(item, (list, tuple)) else _item_adjoint(g[i], item, dtype)
                for i, item in enumerate(obj)]
    return _item_adjoint(g, obj, dtype)


def _item_adjoint(g, item, dtype):
    """`array_adjoint` of an array or a number."""
    if dtype is not None:
        g = cast_adjoint(g, dtype, item)
    return g if isinstance(item, np.ndarray) else _scalar(g)


def array_adjoint_transpose(h, g, obj, dtype=None, ndmin=0):
    """The transpose of `array_adjoint(g, obj, dtype, ndmin)` in `g` (it is linear in `g`, and
    reads `obj` for its structure and its items' dtypes only): the items' gradients `h`, in the
    structure of `obj`, as one array of `g`'s shape (an item without a gradient, or whose
    conversion is piecewise constant, zeros)."""
    def dense(hi, item):
        if isinstance(item, (list, tuple)):
            return [dense(None if hi is None else hi[k], v) for k, v in enumerate(item)]
        if hi is None or _cast_is_constant(dtype, item):
            return np.zeros(np.shape(item))
        return np.asarray(hi, dtype=np.result_type(hi, float))
    h = np.array(dense(h, obj))
    return np.reshape(h, np.shape(g))


def tile_adjoint(g, a, reps):
    """The gradient of `a` in `np.tile(a, reps)`: the sum of `g` over the copies."""
    shape = np.shape(a)
    reps = tuple(int(r) for r in np.atleast_1d(reps))
    d = max(len(shape), len(reps))
    full = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    blocks = np.reshape(g, [n for pair in zip(reps, full) for n in pair])
    return np.reshape(np.sum(blocks, axis=tuple(range(0, 2 * d, 2))), shape)


def repeat_adjoint(g, a, repeats, axis=None):
    """The gradient of `a` in `np.repeat(a, repeats, axis)`: the sum of `g` over the repeats."""
    shape = np.shape(a)
    if axis is None:
        g, axis, n = np.ravel(g), 0, int(np.prod(shape))
    else:
        axis = axis % len(shape)
        n = shape[axis]
    moved = np.moveaxis(np.asarray(g), axis, 0)
    out = np.zeros((n,) + moved.shape[1:], dtype=np.result_type(moved, float))
    np.add.at(out, np.repeat(np.arange(n), repeats), moved)
    return np.reshape(np.moveaxis(out, 0, axis) if len(shape) else out, shape)


def item_adjoint(g, a, args):
    """The gradient of `a` in `a.item(*args)`: `g` at that one entry."""
    out = np.zeros(np.shape(a))
    if not args:
        out.flat[0] = g
    elif len(args) == 1 and np.ndim(args[0]) == 0:
        out.flat[args[0]] = g
    else:
        out[tuple(args[0]) if len(args) == 1 else tuple(args)] = g
    return out


# -- builtins -------------------------------------------------------------------------------------

def refuse_joining_sum(start) -> None:
    """`sum(parts, [])` (a list or tuple start) joins lists or tuples: refused, with the spelling
    that works."""
    if isinstance(start, (list, tuple)):
        from .errors import MissingRuleError
        raise MissingRuleError("`sum(parts, start)` with a list or tuple `start` joins sequences, which is not "
                               "differentiated; join them with `+` in a loop, or `[v for part in parts for v in part]`")


def sum_items_adjoint(g, iterable, start=0):
    """The gradients of the items summed by the builtin `sum(iterable)`: `g` for each item (rows of
    an array, entries of a list or tuple), summed back to the item's shape. A list or tuple
    `start` makes `sum` join sequences, which is refused here (not differentiated as a sum)."""
    refuse_joining_sum(start)
    if isinstance(iterable, np.ndarray):
        if not len(iterable):
            return np.zeros(iterable.shape)
        return np.broadcast_to(_runtime.unbroadcast(g, iterable[0]), iterable.shape)
    return [_runtime.unbroadcast(g, item) for item in iterable]


def _shares(g, y, items):
    """`g` shared by the items equal to the result `y`; where none is (`y` is nan: `max(nan, 1.0)`
    is nan, as Python keeps the first item no other exceeds), by the item that is `y` itself, or
    by the nan items."""
    hits = [1.0 if bool(v == y) else 0.0 for v in items]
    if not any(hits):
        hits = [1.0 if v is y else 0.0 for v in items]
    if not any(hits):
        hits = [1.0 if bool(np.isnan(v)) else 0.0 for v in items]
    n = sum(hits) or 1.0
    return [g * h / n for h in hits]


def extremum_args_adjoint(g, y, args):
    """The gradients of the arguments of the builtin `max`/`min` with result `y`: `max(a, b, ...)`
    or `max(iterable)`; tied arguments share `g` equally."""
    if len(args) != 1:
        return _shares(g, y, args)
    items = args[0]
    if isinstance(items, np.ndarray):
        hit = items == y
        return (g * hit / np.sum(hit),)
    return (_shares(g, y, items),)


from . import runtime as _runtime


def diff_adjoint(g, n=1, axis=-1):
    """The gradient of `a` in `np.diff(a, n, axis)`: each difference passes -g to its left entry
    and +g to its right one (applied n times)."""
    g = np.asarray(g)
    for _ in range(n):
        shape = list(g.shape)
        shape[axis] += 1
        out = np.zeros(shape, g.dtype)
        head, tail = [slice(None)] * g.ndim, [slice(None)] * g.ndim
        head[axis], tail[axis] = slice(None, -1), slice(1, None)
        out[tuple(tail)] = g
        out[tuple(head)] -= g
        g = out
    return g


def safe_ratio(num, den):
    """`num / den`, 0 where `den` is 0 (the gradient of a cone at its tip: hypot(0, 0),
    arctan2(0, 0), by the same convention as `abs` at 0)."""
    if np.ndim(den) == 0 and np.ndim(num) == 0:
        return num / den if den != 0 else 0.0 * num
    with np.errstate(divide="ignore", invalid="ignore"):
        return _scalar(np.where(den == 0, 0.0, num / np.where(den == 0, 1.0, den)))


# -- constructors ---------------------------------------------------------------------------------

def fill_adjoint(g, y, fill_value):
    """The gradient of `fill_value` in `np.full(shape, fill_value)` / `np.full_like(a, fill_value)`:
    `g` summed over the entries it filled; none into an integer or boolean result."""
    if np.result_type(y).kind in "biu":
        return _runtime.zeros_like(fill_value)
    return _runtime.unbroadcast(g, fill_value)


def _linspace_weights(g, num, endpoint, axis):
    """(g with the sample axis first, t) where sample i is start + t[i] * (stop - start)."""
    num = int(num)
    div = num - 1 if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    gm = np.moveaxis(np.asarray(g), axis, 0)
    return gm, t.reshape((num,) + (1,) * (gm.ndim - 1))


def linspace_start_adjoint(g, start, num=50, endpoint=True, axis=0, dtype=None):
    """The gradient of `start` in `np.linspace(start, stop, num, endpoint, axis=axis)`."""
    gm, t = _linspace_weights(through_dtype(g, dtype), num, endpoint, axis)
    return _runtime.unbroadcast(_scalar(np.sum(gm * (1.0 - t), axis=0)), start)


def linspace_stop_adjoint(g, stop, num=50, endpoint=True, axis=0, dtype=None):
    """The gradient of `stop` in `np.linspace(start, stop, num, endpoint, axis=axis)`."""
    gm, t = _linspace_weights(through_dtype(g, dtype), num, endpoint, axis)
    return _runtime.unbroadcast(_scalar(np.sum(gm * t, axis=0)), stop)


def logspace_exponent_adjoint(g, y, base=10.0, dtype=None):
    """The gradient of the exponents in `y = base ** linspace(...)` (`np.logspace`)."""
    return through_dtype(g, dtype) * y * np.log(base)


def logspace_base_adjoint(g, y, base, start, stop, num=50, endpoint=True, axis=0, dtype=None):
    """The gradient of `base` in `y = base ** t`, t = np.linspace(start, stop, num, endpoint, axis=axis)."""
    t = np.linspace(start, stop, num, endpoint, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(t == 0, 0.0, t * base ** (t - 1.0))
    return _runtime.unbroadcast(through_dtype(g, dtype) * d, base)


def arange_start_adjoint(g, stop):
    """The gradient of `start` in `np.arange(start, stop, step)` (entry i is start + i * step; the
    length is piecewise constant); none when `start` is the only bound given (it is the stop)."""
    if stop is None:
        return 0.0
    return np.sum(g)


def arange_step_adjoint(g):
    """The gradient of `step` in `np.arange(start, stop, step)`: entry i moves by i."""
    g = np.asarray(g)
    return np.sum(g * np.arange(g.shape[0]))


# -- layouts --------------------------------------------------------------------------------------

def _layout_order(a, order):
    """The index order `np.reshape`/`np.ravel` with `order` read `a` in: 'C' or 'F' ('A': F for a
    Fortran-contiguous array), or None for 'K' on an array neither C- nor F-contiguous."""
    if order in (None, "C", "F"):
        return order or "C"
    a = np.asarray(a)
    if a.flags.c_contiguous:
        return "C"
    if a.flags.f_contiguous:
        return "F"
    return "F" if order == "A" and a.flags.f_contiguous else ("C" if order == "A" else None)


def reshape_adjoint(g, a, order="C"):
    """The gradient of `a` in `np.reshape(a, shape, order)` (and `ravel`/`flatten(order)`):
    `g` put back in the same index order."""
    shape = np.shape(a)
    resolved = _layout_order(a, order)
    if resolved is not None:
        return np.reshape(g, shape, order=resolved)
    # ravel(order='K') of an array with arbitrary strides: read positions in memory order
    ids = np.empty_like(np.asarray(a), dtype=np.intp, order="K")
    ids[...] = np.arange(np.size(a)).reshape(shape)
    out = np.zeros(np.size(a), dtype=np.result_type(g, float))
    out[np.ravel(ids, order="K")] = np.ravel(g)
    return out.reshape(shape)


# -- np.diff with prepend / append ----------------------------------------------------------------

def _diff_lengths(a, axis, prepend, append):
    def length(v):
        if v is None:
            return 0
        return 1 if np.ndim(v) == 0 else np.shape(v)[axis]
    return length(prepend), np.shape(a)[axis], length(append)


def diff_parts_adjoint(g, a, n=1, axis=-1, prepend=None, append=None):
    """(a's, prepend's, append's) gradients in `np.diff(a, n, axis, prepend=, append=)`: the
    differences of the joined array, cut back into its three parts."""
    full = diff_adjoint(g, n, axis)
    if prepend is None and append is None:
        return full, None, None
    k0, k1, _ = _diff_lengths(a, axis, prepend, append)
    cut = np.split(full, [k0, k0 + k1], axis=axis)
    def back(part, v):
        if v is None:
            return None
        return _runtime.unbroadcast(part, v) if np.ndim(v) else _scalar(np.sum(part))
    return cut[1], back(cut[0], prepend), back(cut[2], append)


# -- index tricks ---------------------------------------------------------------------------------

class concatenator_adjoint:
    """`concatenator_adjoint(g, obj, items)[k]`: the gradient of `items[k]` in `obj[items]` for
    `obj` np.r_ (joined along the first axis, a scalar as one entry) or np.c_ (1-d items as
    columns, joined along the last axis); slices of numbers are constant pieces."""

    def __init__(self, g, obj, items):
        column = obj is np.c_
        sizes = []
        for i in items:
            if isinstance(i, slice):
                sizes.append(1 if column else len(np.r_[i]))
            elif column:
                sizes.append(1 if np.ndim(i) <= 1 else np.shape(i)[-1])
            else:
                sizes.append(1 if np.ndim(i) == 0 else np.shape(i)[0])
        self.items = items
        self.parts = np.split(np.asarray(g), np.cumsum(sizes)[:-1], axis=-1 if column else 0)

    def __getitem__(self, k):
        return _scalar(np.reshape(self.parts[k], np.shape(self.items[k])))


def sort_adjoint(g, a, axis=-1):
    """The gradient of `a` in `np.sort(a, axis)`: each entry of `g` back where its value came from
    (ties in the order of a stable argsort, one valid choice where sort has a kink)."""
    a = np.asarray(a)
    if axis is None:
        out = np.zeros(a.size, dtype=np.result_type(g, float))
        out[np.argsort(a, axis=None, kind="stable")] = np.ravel(g)
        return out.reshape(a.shape)
    if a.ndim == 0:
        return g
    out = np.zeros(a.shape, dtype=np.result_type(g, float))
    np.put_along_axis(out, np.argsort(a, axis=axis, kind="stable"), np.asarray(g), axis=axis)
    return out


def sort_transpose(h, a, axis=-1):
    """The transpose of `sort_adjoint(g, a, axis)` in `g`: `h` read in the sorted order of `a` (the
    transpose of a permutation is its inverse)."""
    a, h = np.asarray(a), np.asarray(h)
    if axis is None:
        return np.ravel(h)[np.argsort(a, axis=None, kind="stable")]
    if a.ndim == 0:
        return h
    return np.take_along_axis(h, np.argsort(a, axis=axis, kind="stable"), axis=axis)


# -- transposes of the runtime's own helpers (rules/runtime_helpers.py: generated code is
#    differentiable again) --------------------------------------------------------------------------

def broadcast_like(h, g):
    """The transpose of `unbroadcast(g, x)`: `h` (the gradient of the reduced value, shaped like
    `x`) spread back over `g`'s shape, as broadcasting spread `x`. A new array."""
    shape = np.shape(g)
    h = np.asarray(h)
    if h.ndim > len(shape):  # the assignment case: leading axes of length 1 were dropped
        h = h.reshape(h.shape[h.ndim - len(shape):])
    return _scalar(np.array(np.broadcast_to(h, shape)))


def reduce_like(h, g, axis=None, keepdims=False):
    """The transpose of `expand_reduced(g, x, axis, keepdims)`: `h` (shaped like `x`) summed over
    the reduced axes, in `g`'s shape."""
    if np.ndim(h) == np.ndim(g) and np.shape(h) == np.shape(g):
        return h
    return _scalar(np.reshape(np.sum(h, axis=axis, keepdims=keepdims), np.shape(g)))


def getitem_transpose(h, g, idx):
    """The transpose of `getitem_adjoint(g, x, idx)`: the slots `idx` of `h`, in `g`'s shape (of a
    list's or tuple's gradient, its items there; one without a gradient, zeros)."""
    if isinstance(h, (tuple, list)):
        part = h[idx]
        if isinstance(idx, slice):
            return [np.zeros(np.shape(v)) if p is None else p for p, v in zip(part, g)]
        return np.zeros(np.shape(g)) if part is None else _runtime.unbroadcast(part, g)
    return _runtime.unbroadcast(np.asarray(h)[idx], g)


def extremum_transpose(h, g, x, y, axis=None, keepdims=False):
    """The transpose of `extremum_adjoint(g, x, y, axis, keepdims)` in `g`: `h` weighted by each
    entry's share of the extremum, summed over the reduced axes."""
    share = extremum_adjoint(np.ones(np.shape(g)), x, y, axis, keepdims)
    return reduce_like(h * share, g, axis, keepdims)


def _array_gradient(g, what: str):
    """The adjoint array a write helper's transpose reads; a list's or an object array's gradient
    (slots holding arrays or None) has no transpose yet: a clear error, never a wrong number."""
    data = _runtime._gdata(g)
    if not isinstance(data, np.ndarray) or data.dtype == object:
        raise _NoGradientError(f"the derivative of {what} for a list or an object Buffer is not "
                                  "supported yet (differentiating a gradient through a list write)")
    return data


def written_transpose(h, g, idx, into=None):
    """The transpose of `written_adjoint(g, idx, into)` in `g`: `h` put at the slots `idx` of a
    zero array shaped like `g` (at the winning write of a duplicate index)."""
    data = _array_gradient(g, "a write")
    out = np.zeros(data.shape)
    if _runtime._integer_storage(into):
        return out
    h = np.broadcast_to(h, np.shape(data[idx]))
    if _runtime._is_advanced(idx):
        h = np.where(_runtime._winners(data.shape, idx), h, 0.0)
        np.add.at(out, idx, h)
    else:
        out[idx] = h
    return _scalar(out)


def written_total_transpose(h, g, idx, into=None):
    """The transpose of `written_total(g, idx, into)` in `g`."""
    return written_transpose(h, g, idx, into)


def copied_transpose(h, g, src, where=True, into=None):
    """The transpose of `copied_adjoint(g, src, where, into)` in `g`: `h` spread over `g`'s shape
    where `where` holds."""
    data = _array_gradient(g, "a copyto")
    if _runtime._integer_storage(into):
        return np.zeros(data.shape)
    spread = np.array(np.broadcast_to(h, data.shape), dtype=float)
    return spread if where is True else np.where(where, spread, 0.0)


def seq_place(h, g, start: int):
    """A list like the sequence gradient `g` holding the items of `h` from position `start`, None
    (no gradient) elsewhere: the transpose of taking `g[start:start + len(h)]`."""
    out = [None] * len(g)
    out[start:start + len(h)] = list(h)
    return out


def item_transpose(h, g, i):
    """The transpose of `item(g, i, like)`: `h` at position i of a list like `g` (of zeros like `g`
    when `g` is an array: a list's gradient made by an array rule, `np.var([x, y])`'s)."""
    if isinstance(g, np.ndarray):
        out = np.zeros(g.shape, dtype=np.result_type(g, h, float))
        out[i] = h
        return out
    out = [None] * len(g)
    out[i] = h
    return out


def stack_transpose(h, g, axis=0):
    """The transpose of `stack_adjoint(g, arrays, axis)`: the items' gradients stacked back
    along `axis` (a structural zero, None, as zeros)."""
    like = np.moveaxis(np.asarray(g), axis, 0)
    return np.stack([np.zeros(like.shape[1:]) if p is None else p for p in h], axis)


def items_transpose(h, g, items, into=None):
    """The transpose of `items_adjoint(g, items, into)` in `g`: the items' gradients `h`, element
    by element in C order, in the first slots of a zero array shaped like `g`."""
    data = _array_gradient(g, "a copyto from an iterator")
    out = np.zeros(data.shape)
    if _runtime._integer_storage(into):
        return out
    flat = np.concatenate([np.ravel(np.zeros(np.shape(x)) if p is None else p) for p, x in zip(h, items)]) \
        if len(items) else np.zeros(0)
    out.reshape(-1)[:flat.size] = flat
    return out


# -- linear algebra: factorizations and decompositions (issue 15) ---------------------------------
# Conventions, stated once (README "What is supported"):
# - `cholesky`, `eigh`, `eigvalsh` read one triangle of their argument (NumPy's `UPLO`, `upper`):
#   the gradient is with respect to the entries read, so the other triangle gets none. For a
#   symmetric matrix built symmetrically (`K = k(X, X)`) this is the same gradient as the usual
#   symmetrized one; unlike it, it also matches finite differences in every direction.
# - Eigenvalues or singular values that are equal (to 1e-10 relative) share their gradient
#   equally (the cluster's mean, as ties of `max`); eigenvectors or singular vectors of equal
#   values have a gradient only when the loss does not depend on the basis chosen inside their
#   space (a projector, a sum over the cluster): otherwise `UndefinedGradientError`.
# - `pinv`, `lstsq` need full rank, `qr` a full-rank leading block: else `UndefinedGradientError`.

from .errors import AdjointCompilerError as _AdjointCompilerError


class UndefinedGradientError(_AdjointCompilerError, ArithmeticError):
    """The derivative does not exist, or is not determined, at this point: eigenvectors of a
    repeated eigenvalue under a loss that depends on the basis chosen, the pseudo-inverse of a
    rank-deficient matrix, ... Raised by the gradient when it runs, naming the function."""


_TIE = 1e-10  # values closer than this (relative to the largest) are equal
_GAUGE = 1e-8  # a basis-dependent part smaller than this (relative) is rounding


def _diag_embed(d):
    """Matrices (stacked) with `d` on their diagonal."""
    d = np.asarray(d)
    return d[..., None, :] * np.eye(d.shape[-1])


def _diag_part(x):
    return np.diagonal(x, axis1=-2, axis2=-1)


def _fold_triangle(s, lower: bool):
    """The gradient with respect to the triangle a factorization of a symmetric matrix reads,
    from `s`, a gradient whose symmetric part is right for symmetric perturbations."""
    full = s + mT(s)
    tri = np.tril(full) if lower else np.triu(full)
    return tri - _diag_embed(_diag_part(s))


def _tie_tolerance(w):
    return _TIE * np.max(np.abs(w), axis=-1, keepdims=True)


def _cluster_mean(g, w):
    """`g` with each run of equal sorted values of `w` given the mean of its entries."""
    g = np.array(np.broadcast_to(g, np.shape(w)), dtype=float)
    w = np.asarray(w)
    if w.shape[-1] < 2:
        return g
    gaps = np.abs(np.diff(w, axis=-1)) > _tie_tolerance(w)
    if np.all(gaps):
        return g
    for idx in np.ndindex(w.shape[:-1]):
        ids = np.concatenate([[0], np.cumsum(gaps[idx])])
        means = np.bincount(ids, weights=g[idx]) / np.bincount(ids)
        g[idx] = means[ids]
    return g


def _pair_inverse(w, k, what: str):
    """`k * F`, with F_ij = 1 / (w_j - w_i) off the diagonal, for the basis-dependent part `k`
    (antisymmetric): 0 at pairs of equal `w` where `k` is rounding there, else an error."""
    w = np.asarray(w)
    diff = w[..., None, :] - w[..., :, None]
    tie = np.abs(diff) <= _tie_tolerance(w)[..., None]
    n = w.shape[-1]
    tie = tie & ~np.eye(n, dtype=bool)
    if np.any(tie):
        scale = np.max(np.abs(k), axis=(-2, -1), keepdims=True)
        if np.any(tie & (np.abs(k) > _GAUGE * scale + 1e-300)):
            raise UndefinedGradientError(
                f"the gradient of {what} at repeated values is not determined: the loss depends on the basis "
                "chosen inside their space (it is defined only for losses that do not, such as a projector "
                "onto the whole space); perturb the matrix or use the values alone")
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(tie | np.eye(n, dtype=bool), 0.0, 1.0 / np.where(diff == 0, 1.0, diff))
    return k * f


def _parts(g, n: int):
    """The cotangent of a tuple result as a list of n entries (None where none)."""
    if g is None:
        return [None] * n
    return list(g)


@_facts.fresh
def cholesky_adjoint(g, l, upper=False):
    """The gradient of `a` in `l = np.linalg.cholesky(a, upper=upper)` (lower: `a = l l^T`), with
    respect to the triangle NumPy reads (the lower one, the upper with `upper=True`)."""
    l = np.asarray(l)
    g = np.asarray(g, dtype=float)
    if upper:
        l, g = mT(l), mT(g)
    p = mT(l) @ g
    p = np.tril(p) - 0.5 * _diag_embed(_diag_part(p))
    lt = mT(l)
    s = mT(solve_triangle(lt, mT(solve_triangle(lt, p, False)), False))
    return _fold_triangle(s, lower=not upper)


@_facts.fresh
def solve_triangle(t, b, lower=False):
    """`np.linalg.solve(t, b)` for a triangular `t`: by substitution where SciPy is installed
    (n^2 per column, where an LU solve factorizes again), else NumPy's solve. Differentiated as
    that solve (rules/linalg.py)."""
    if np.ndim(t) != 2:
        return np.linalg.solve(t, b)  # (a stack of matrices)
    try:
        from scipy.linalg import solve_triangular
    except ImportError:  # (SciPy is an optional extra)
        return np.linalg.solve(t, b)
    return solve_triangular(t, b, lower=lower, check_finite=False)


_TRIANGLE_CHECKED = 32  # from this order on, a matrix is checked for a triangle (O(n^2), to save O(n^3))


@_facts.fresh
def solve_rhs(a, r, b):
    """`np.linalg.solve(a, r)` with `r` read as `solve(a, b)` reads its `b`: a stack of vectors
    where `b` has one axis (NumPy 2 solves a 1-D `b` against every matrix of a stack)."""
    if np.ndim(b) == 1 and np.ndim(r) > 1:
        return np.linalg.solve(a, np.asarray(r)[..., None])[..., 0]
    return np.linalg.solve(a, r)


def solve_transposed(a, g, b=None):
    """`np.linalg.solve(a^T, g)` (the adjoint of `solve(a, b)`, `g` read as `b` is: `solve_rhs`);
    by substitution when `a` is a triangle (a Cholesky factor: checked, for matrices of order 32
    and more)."""
    at = mT(a)
    if np.ndim(a) == 2 and len(a) >= _TRIANGLE_CHECKED and np.isrealobj(a):
        if not np.any(np.tril(a, -1)):
            return solve_triangle(at, g, True)
        if not np.any(np.triu(a, 1)):
            return solve_triangle(at, g, False)
    return solve_rhs(at, g, g if b is None else b)


@_facts.fresh
def eigh_adjoint(g, a, y, UPLO="L"):
    """The gradient of `a` in `w, v = np.linalg.eigh(a, UPLO)`, from the pair of gradients `g`
    (either may be None): v (diag(w_bar) + F o (v^T v_bar)) v^T, F_ij = 1 / (w_j - w_i), folded
    onto the triangle read. Eigenvectors need distinct eigenvalues (see `_pair_inverse`)."""
    w, v = y[0], y[1]
    gw, gv = _parts(g, 2)
    inner = np.zeros(np.shape(v))
    if gw is not None:
        inner = inner + _diag_embed(_cluster_mean(gw, w))
    if gv is not None:
        m = mT(v) @ gv
        inner = inner + _pair_inverse(w, 0.5 * (m - mT(m)), "the eigenvectors of np.linalg.eigh")
    return _fold_triangle(v @ inner @ mT(v), lower=str(UPLO).upper() == "L")


@_facts.fresh
def eigvalsh_adjoint(g, a, UPLO="L"):
    """The gradient of `a` in `w = np.linalg.eigvalsh(a, UPLO)`: v diag(w_bar) v^T folded onto the
    triangle read (equal eigenvalues share their gradient)."""
    w, v = np.linalg.eigh(a, UPLO)
    return _fold_triangle((v * _cluster_mean(g, w)[..., None, :]) @ mT(v), lower=str(UPLO).upper() == "L")


def _complement(q, qbar, k: int, what: str):
    """The cotangent of the first k columns of the square orthogonal `q` that carries the
    cotangent `qbar` of its last columns (a completion of the basis, chosen by LAPACK): through
    the constraint that they stay orthogonal to the first k. The rotation among the completion's
    columns is arbitrary: a loss that depends on it has no gradient."""
    qk, qp, gp = q[..., :, :k], q[..., :, k:], qbar[..., :, k:]
    w = mT(qp) @ gp
    scale = np.max(np.abs(w), axis=(-2, -1), keepdims=True) if w.size else 0.0
    if w.size and np.any(np.abs(w - mT(w)) > _GAUGE * scale + 1e-300):
        raise UndefinedGradientError(
            f"the gradient of {what} through the columns completing the basis (full_matrices=True or "
            "mode='complete' on a non-square matrix) is not determined: LAPACK chooses them up to a rotation "
            "and the loss depends on it; use the reduced factorization")
    return qbar[..., :, :k] - qp @ mT(gp) @ qk


@_facts.fresh
def svd_adjoint(g, a, y, full_matrices=True, compute_uv=True):
    """The gradient of `a` in `np.linalg.svd(a, full_matrices, compute_uv)` (Townsend's formula):
    a = u s v^T, F_ij = 1 / (s_j^2 - s_i^2),
    u [(F o (u^T u_bar - u_bar^T u)) s + diag(s_bar) + s (F o (v^T v_bar - v_bar^T v))] v^T
    + (1 - u u^T) u_bar s^-1 v^T + u s^-1 v_bar^T (1 - v v^T).
    Singular vectors need distinct nonzero singular values, or a loss that does not depend on the
    basis chosen for equal ones; a zero singular value's own gradient is 0 (as `abs` at 0)."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return (u * _svd_values_bar(y if g is None else g, s)[..., None, :]) @ vh
    u, s, vh = y[0], y[1], y[2]
    gu, gs, gvh = _parts(g, 3)
    v = mT(vh)
    gv = None if gvh is None else mT(np.asarray(gvh, dtype=float))
    if full_matrices and gu is not None and m > k:
        gu = _complement(u, np.asarray(gu, dtype=float), k, "the left singular vectors")
    if full_matrices and gv is not None and n > k:
        gv = _complement(v, gv, k, "the right singular vectors")
    u, v = u[..., :, :k], v[..., :, :k]
    inner = np.zeros(s.shape + (k,))
    out = np.zeros(a.shape)
    if gs is not None:
        inner = inner + _diag_embed(_svd_values_bar(gs, s))
    if gu is not None or gv is not None:
        ju = 0.0 if gu is None else mT(u) @ gu
        jv = 0.0 if gv is None else mT(v) @ gv
        au = ju - mT(ju) if gu is not None else np.zeros(inner.shape)
        av = jv - mT(jv) if gv is not None else np.zeros(inner.shape)
        # F o (au s + s av) (the pairs' parts): with s_i = s_j = sigma it is sigma (au + av) / 0
        sq = s * s
        mixed = au * s[..., None, :] + s[..., :, None] * av
        inner = inner + _pair_inverse(sq, mixed, "the singular vectors of np.linalg.svd")
        tol = _TIE * np.max(s, axis=-1, keepdims=True)
        zero = s <= tol
        # the singular vectors of a zero singular value have no derivative (their signs, and their
        # basis for several, are free: a perturbation picks them)
        for part in (gu, gv):
            if part is not None:
                _check_zero_columns(np.asarray(part)[..., :, :k], zero, "the singular vectors")
        with np.errstate(divide="ignore"):
            sinv = np.where(zero, 0.0, 1.0 / np.where(zero, 1.0, s))
        if gu is not None and m > k:
            out = out + ((gu - u @ ju) * sinv[..., None, :]) @ mT(v)
        if gv is not None and n > k:
            out = out + (u * sinv[..., None, :]) @ mT(gv - v @ jv)
    return out + u @ inner @ mT(v)


def _check_zero_columns(p, zero, what: str):
    if np.any(zero):
        scale = np.max(np.abs(p), axis=(-2, -1), keepdims=True)
        if np.any(zero[..., None, :] & (np.abs(p) > _GAUGE * scale + 1e-300)) and np.any(scale > 0):
            raise UndefinedGradientError(f"the gradient of {what} of np.linalg.svd at a zero singular value "
                                         "is not determined (the matrix is rank-deficient); the singular values "
                                         "and the vectors of nonzero ones have one")


def _svd_values_bar(gs, s):
    """The singular values' cotangent as used: equal values share it, zero values pass none."""
    gs = _cluster_mean(gs, s)
    return np.where(s <= _TIE * np.max(s, axis=-1, keepdims=True), 0.0, gs)


def _copyltu(x):
    """The symmetric matrix with the lower triangle of `x`."""
    low = np.tril(x, -1)
    return low + mT(low) + _diag_embed(_diag_part(x))


def _qr_square_adjoint(q, r, gq, gr):
    """The gradient of `a` in `q, r = qr(a)` for a tall or square `a` (k = n columns in q):
    (q_bar + q copyltu(M)) r^-T with M = r r_bar^T - q_bar^T q."""
    d = np.abs(_diag_part(r))
    if np.any(d <= max(r.shape[-2:]) * np.finfo(float).eps * np.max(np.abs(r), axis=(-2, -1))[..., None]):
        raise UndefinedGradientError("the gradient of np.linalg.qr is not determined: the matrix (its leading "
                                     "square block, for a wide one) does not have full rank")
    mat = r @ mT(gr) - mT(gq) @ q
    b = gq + q @ _copyltu(mat)
    return mT(np.linalg.solve(r, mT(b)))


@_facts.fresh
def qr_adjoint(g, a, y, mode="reduced"):
    """The gradient of `a` in `np.linalg.qr(a, mode)` ('reduced', 'complete', 'r'); a wide matrix
    `[x | z]` is `q [r1 | r2]` with `x = q r1` and `r2 = q^T z`."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"np.linalg.qr: no gradient for mode={mode!r} (use 'reduced', 'complete' or 'r')")
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = np.zeros(q.shape), (np.zeros(r.shape) if g is None else np.asarray(g, dtype=float))
    else:
        q, r = y[0], y[1]
        gq, gr = _parts(g, 2)
        gq = np.zeros(q.shape) if gq is None else np.asarray(gq, dtype=float)
        gr = np.zeros(r.shape) if gr is None else np.asarray(gr, dtype=float)
        if mode == "complete" and m > k:
            gq = _complement(q, gq, k, "np.linalg.qr")
            q, r, gr = q[..., :, :k], r[..., :k, :], gr[..., :k, :]
    if m >= n:
        return _qr_square_adjoint(q, r, gq, gr)
    r1, gr1, gr2 = r[..., :, :m], gr[..., :, :m], gr[..., :, m:]
    gx = _qr_square_adjoint(q, r1, gq + a[..., :, m:] @ mT(gr2), gr1)
    return np.concatenate([gx, q @ gr2], axis=-1)


def _full_rank(a, what: str, rcond=None):
    """Refuse a matrix whose rank is not full at NumPy's cutoff (`rcond` times the largest
    singular value; by default max(m, n) * eps, as `pinv` and `lstsq`)."""
    s = np.linalg.svd(a, compute_uv=False)
    if rcond is None or rcond == -1:
        rcond = max(a.shape[-2:]) * np.finfo(float).eps
    tol = np.asarray(rcond)[..., None] * np.max(s, axis=-1, keepdims=True)
    if np.any(s <= tol):
        raise UndefinedGradientError(f"the gradient of {what} needs a matrix of full rank: the pseudo-inverse "
                                     "jumps where the rank changes")


@_facts.fresh
def pinv_adjoint(g, a, y, rcond=None):
    """The gradient of `a` in `y = np.linalg.pinv(a, rcond)` (full rank):
    -y^T g y^T + (1 - a y) g^T y y^T + y^T y g^T (1 - y a)."""
    a = np.asarray(a)
    _full_rank(a, "np.linalg.pinv", rcond)
    m, n = a.shape[-2:]
    yt, gt = mT(y), mT(g)
    return -yt @ g @ yt + (np.eye(m) - a @ y) @ gt @ (y @ yt) + (yt @ y) @ gt @ (np.eye(n) - y @ a)


def lstsq_adjoint(g, a, b, y, rcond=None):
    """The gradients `(a_bar, b_bar)` in `x, residuals, rank, s = np.linalg.lstsq(a, b)` (full
    rank), from the gradients of `x`, `residuals` and `s` (the rank passes none)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    _full_rank(a, "np.linalg.lstsq", rcond)
    gx, gres, _, gs = _parts(g, 4)
    x, res = y[0], y[1]
    vector = b.ndim == 1
    b2 = b[:, None] if vector else b
    x2 = np.asarray(x)[:, None] if vector else np.asarray(x)
    ga, gb = np.zeros(a.shape), np.zeros(b2.shape)
    if gx is not None:
        gx2 = np.reshape(gx, x2.shape)
        p = np.linalg.pinv(a)
        gb = gb + mT(p) @ gx2
        ga = ga + pinv_adjoint(gx2 @ mT(b2), a, p)
    if gres is not None and np.size(res):
        r = (b2 - a @ x2) * np.reshape(gres, (1, -1))
        gb = gb + 2.0 * r
        ga = ga - 2.0 * r @ mT(x2)
    if gs is not None:
        ga = ga + svd_adjoint(gs, a, y[3], compute_uv=False)
    return ga, (gb[:, 0] if vector else gb)


@_facts.fresh
def matrix_power_adjoint(g, a, n):
    """The gradient of `a` in `np.linalg.matrix_power(a, n)`: the sum over i of
    (a^T)^i g (a^T)^(n-1-i); for n < 0 the same for inv(a), then through the inverse."""
    a = np.asarray(a, dtype=float)
    g = np.asarray(g, dtype=float)
    n = int(n)
    if n == 0:
        return np.zeros(a.shape)
    base = np.linalg.inv(a) if n < 0 else a
    k = abs(n)
    bt = mT(base)
    powers = [np.broadcast_to(np.eye(a.shape[-1]), a.shape)]
    for _ in range(k - 1):
        powers.append(powers[-1] @ bt)
    out = sum(powers[i] @ g @ powers[k - 1 - i] for i in range(k))
    if n < 0:
        out = -bt @ out @ bt
    return out


def field_adjoint(g, result, name: str):
    """The gradient of a structure `result` (a named tuple such as the result of `np.linalg.eigh(a)`,
    `svd`, `qr`, `slogdet`; a user's NamedTuple, dataclass or object) from the gradient `g` of its
    field `name`: `g` there, structural zeros elsewhere."""
    from . import trees

    return trees.field_adjoint(g, result, name)


@_facts.fresh
def build_dict(keys: tuple, *values):
    """A dict display used as a value: `{keys[0]: values[0], ...}`."""
    return dict(zip(keys, values))


def dict_values(g, keys: tuple) -> tuple:
    """The gradients of a dict display's values from the dict's gradient (None where it has none)."""
    if g is None:
        return (None,) * len(keys)
    return tuple(g.get(k) for k in keys)


def build_record(cls, fields: tuple, *values):
    """`cls(...)` of a NamedTuple or a plain dataclass, its arguments bound to `fields`."""
    if issubclass(cls, tuple):
        return cls(*values)
    return cls(**dict(zip(fields, values)))


def build_object(cls, names: tuple, *values):
    """An object of a user's class made in a differentiated function and returned: its fields set
    to `values` without calling `__init__` again (it ran, inlined, when the object was made)."""
    obj = object.__new__(cls)
    for n, v in zip(names, values):
        object.__setattr__(obj, n, v)
    return obj


def dict_pairs_adjoint(g, pairs):
    """The gradient of `pairs` in `dict(pairs)` (a list of (key, value) pairs, as a dict
    comprehension makes, or a dict): each value's gradient from the dict's, None for the keys and
    for a pair a later one with the same key replaced."""
    if isinstance(pairs, dict):
        return None if g is None else {k: g.get(k) for k in pairs}
    last = {}
    for i, (k, _) in enumerate(pairs):
        last[k] = i
    return [(None, None if g is None or last[k] != i else g.get(k)) for i, (k, _) in enumerate(pairs)]


def dict_values_list(d) -> list:
    """`d.values()` of a dict made at run time, as a list (loops read it by position)."""
    return list(d.values())


def dict_items_list(d) -> list:
    """`d.items()` of a dict made at run time, as a list of pairs."""
    return list(d.items())


def dict_keys_list(d) -> list:
    """`d.keys()` of a dict made at run time, as a list."""
    return list(d)


def dict_view_adjoint(g, d, pairs: bool):
    """The gradient of dict `d` from the gradient `g` of `list(d.values())` (or of `d.items()`)."""
    if g is None:
        return None
    return {k: (gi[1] if gi is not None else None) if pairs else gi for k, gi in zip(d, g)}


def dict_pairs_tangent(t, pairs) -> dict:
    """The tangent of `dict(pairs)` from the tangent `t` of `pairs` (a list of (key, value) pairs
    and their tangents, or a dict and its tangent): each key's value tangent, a later pair with
    the same key replacing an earlier one, as in the dict."""
    if isinstance(pairs, dict):
        return {k: (0.0 if t is None else t.get(k, 0.0)) for k in pairs}
    out = {}
    for (k, _), ti in zip(pairs, t if t is not None else [None] * len(pairs)):
        out[k] = 0.0 if ti is None or ti[1] is None else ti[1]
    return out


def dict_view_tangent(t, d, pairs: bool) -> list:
    """The tangent of `list(d.values())` (or of `d.items()`, keys with no tangent) from the
    tangent `t` of dict `d`."""
    values = [0.0 if t is None else t.get(k, 0.0) for k in d]
    return [(0.0, v) for v in values] if pairs else values


def record_tangent(cls, fields: tuple, *values):
    """The tangent of `build_record(cls, fields, *values)`: a structure of the class holding the
    tangents (a named tuple of them; a dataclass made without calling `__init__`)."""
    if issubclass(cls, tuple):
        return cls._make(values)
    return build_object(cls, fields, *values)


def record_values(g, fields: tuple) -> tuple:
    """The gradients of the fields of a structure built with build_record, from its gradient (a
    named tuple, a Record, or an instance of the class given as a cotangent)."""
    from . import trees

    if g is None:
        return (None,) * len(fields)
    if type(g) is trees.Record:
        return tuple(g.fields.get(f) for f in fields)
    if isinstance(g, tuple):
        return tuple(g)
    return tuple(getattr(g, f, None) for f in fields)


def field_tangent(t, result, name: str):
    """The tangent of field `name` of a structure from the structure's tangent `t` (of its shape:
    a dict, a named tuple or an object whose fields hold the tangents); zero for a class constant."""
    from . import trees

    if t is None:
        return 0.0
    if type(t) is trees.Record:
        return t.fields.get(name, 0.0)
    if type(t) is dict:
        return t.get(name, 0.0)
    fields = getattr(type(result), "_fields", None)
    if type(t) is tuple and fields is not None:  # a library's named tuple (`np.linalg.eigh(a)`), its
        return t[fields.index(name)]  # tangent a plain tuple of the fields' tangents
    return getattr(t, name)


# -- scipy (issue 15): the helpers of rules/scipy_*.py. SciPy is imported inside each helper, which
#    runs only in a gradient of a program that called SciPy (so it is imported already) ------------

@_facts.fresh
def digamma(x):
    """scipy.special.digamma (the derivative of gammaln)."""
    from scipy import special
    return special.digamma(x)


@_facts.fresh
def polygamma(n, x):
    """scipy.special.polygamma (the derivatives of digamma)."""
    from scipy import special
    return _scalar(np.asarray(special.polygamma(n, x)))


@_facts.fresh
def ratio_or_zero(x, d):
    """`x / d`, and 0 wherever `x` is 0 whatever `d` is (the derivative in y of xlogy(x, y) and
    xlog1py(x, y), which are 0 for x == 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _scalar(np.where(np.asarray(x) == 0, 0.0, np.true_divide(x, d)))


def no_tangent(t, what: str, param: str):
    """0.0, when the tangent `t` of the argument `param` of `what` is zero: its tangent rule has no
    term for it (the order of a Bessel function, the `a` of gammainc); else UndefinedGradientError.
    (Reverse mode refuses such an argument at its line when it depends on the differentiated ones.)"""
    if np.any(np.asarray(t) != 0):
        raise UndefinedGradientError(f"the tangent of {what} with respect to its argument `{param}` is not "
                                     f"available (no closed form SciPy computes); give `{param}` a zero tangent")
    return 0.0


@_facts.reads_only_shapes
def convolution_shape(in1, in2) -> tuple:
    """The shape of scipy.signal.convolve(in1, in2, 'full'): s1 + s2 - 1 along each axis."""
    return tuple(int(a + b - 1) for a, b in zip(np.shape(in1), np.shape(in2)))


@_facts.fresh
def centered(a, shape):
    """The block of `a` of `shape` centred as scipy.signal's modes cut it from the full
    convolution (scipy's `_centered`: it starts at (a.shape - shape) // 2 along each axis)."""
    a = np.asarray(a)
    starts = [(n - m) // 2 for n, m in zip(a.shape, shape)]
    return a[tuple(slice(s, s + m) for s, m in zip(starts, shape))].copy()


@_facts.fresh
def uncentered(a, shape):
    """Zeros of `shape` holding `a` at the block `centered(., a.shape)` reads (its adjoint)."""
    a = np.asarray(a)
    out = np.zeros(shape, dtype=np.result_type(a.dtype, float))
    starts = [(n - m) // 2 for n, m in zip(shape, a.shape)]
    out[tuple(slice(s, s + m) for s, m in zip(starts, a.shape))] = a
    return out


def logsumexp_adjoint(g, a, y, axis=None, b=None, keepdims=False, return_sign=False):
    """The gradients `(a_bar, b_bar)` in `y = scipy.special.logsumexp(a, axis, b, keepdims,
    return_sign)`: with s = sum(b exp(a)), d log|s| = (b exp(a) da + exp(a) db) / s, computed as
    exp(a - y) (times the sign of s with `return_sign`)."""
    a = np.asarray(a, dtype=float)
    if return_sign:
        r, sign = y[0], y[1]
        g = None if g is None else g[0]
    else:
        r, sign = y, 1.0
    if g is None:
        return np.zeros(a.shape), (None if b is None else np.zeros(np.shape(b)))
    shape = np.broadcast_shapes(a.shape, np.shape(b)) if b is not None else a.shape
    nd = len(shape)
    axes = _axes(axis, nd) if nd else ()

    def expand(v):
        v = np.asarray(v, dtype=float)
        if not keepdims and axes:
            v = np.expand_dims(v, axes)
        return v
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(a - expand(r)) * (expand(sign) if return_sign else 1.0) * expand(g)
    a_bar = e if b is None else e * b
    b_bar = None if b is None else _runtime.unbroadcast(np.broadcast_to(e, shape), np.asarray(b))
    return _scalar(_runtime.unbroadcast(np.broadcast_to(a_bar, shape), a)), b_bar


def _trans_code(trans) -> int:
    return {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}[trans]


def solve_triangular_adjoint(g, a, b, x, trans=0, lower=False, unit_diagonal=False):
    """The gradients `(a_bar, b_bar)` in `x = scipy.linalg.solve_triangular(a, b, trans, lower,
    unit_diagonal)`: b_bar = op(a)^-T g, op(a)_bar = -b_bar x^T, given to the triangle read (not
    its diagonal with `unit_diagonal`)."""
    from scipy import linalg
    a, b = np.asarray(a), np.asarray(b)
    t = _trans_code(trans)
    vector = b.ndim == 1
    gm = np.asarray(g, dtype=float)
    xm = np.asarray(x, dtype=float)
    if vector:
        gm, xm = gm[..., None], xm[..., None]
    bm_bar = linalg.solve_triangular(a, gm, trans=1 - t, lower=lower, unit_diagonal=unit_diagonal)
    op_bar = -bm_bar @ mT(xm)
    a_bar = op_bar if t == 0 else mT(op_bar)
    a_bar = np.tril(a_bar) if lower else np.triu(a_bar)
    if unit_diagonal:
        a_bar = a_bar - _diag_embed(_diag_part(a_bar))
    b_bar = bm_bar[..., 0] if vector else bm_bar
    return _runtime.unbroadcast(a_bar, a), _runtime.unbroadcast(b_bar, b)


def _flag(v) -> bool:
    """cho_factor's `lower`: a bool, or one per matrix of a stack (all the same)."""
    return bool(np.ravel(v)[0])


def cho_factor_adjoint(g, a, y):
    """The gradient of `a` in `(c, lower) = scipy.linalg.cho_factor(a, lower)`: the factor's
    triangle through the Cholesky adjoint; the other triangle of `c` holds `a`'s own entries
    (checked), so its gradient goes to them."""
    c, lower = y[0], _flag(y[1])
    gc = None if g is None else g[0]
    a = np.asarray(a, dtype=float)
    if gc is None:
        return np.zeros(a.shape)
    gc = np.asarray(gc, dtype=float)
    tri = np.tril if lower else np.triu
    factor_bar = tri(gc)
    other_bar = gc - factor_bar
    out = cholesky_adjoint(factor_bar, tri(c), upper=not lower)
    if np.any(other_bar != 0):
        other = c - tri(c)
        if not np.array_equal(other, a - tri(a)):
            raise UndefinedGradientError("the gradient of scipy.linalg.cho_factor through the triangle of its "
                                         "result outside the factor is not defined (it holds no computed values)")
        out = out + other_bar
    return out


def cho_solve_adjoint(g, c_and_lower, b, x):
    """The gradients `((c_bar, None), b_bar)` in `x = scipy.linalg.cho_solve((c, lower), b)`,
    x = (l l^T)^-1 b with `l` the triangle of `c`: b_bar = cho_solve(g), and with
    m = -(b_bar x^T + x b_bar^T), l_bar = tril(m l) (lower) or u_bar = triu(u m) (upper)."""
    from scipy import linalg
    c, lower = c_and_lower[0], _flag(c_and_lower[1])
    b = np.asarray(b)
    vector = b.ndim == 1
    gm = np.asarray(g, dtype=float)
    xm = np.asarray(x, dtype=float)
    if vector:
        gm, xm = gm[..., None], xm[..., None]
    bm_bar = linalg.cho_solve((c, c_and_lower[1]), gm)
    m = -(bm_bar @ mT(xm) + xm @ mT(bm_bar))
    if lower:
        c_bar = np.tril(m @ np.tril(c))
    else:
        c_bar = np.triu(np.triu(c) @ m)
    b_bar = bm_bar[..., 0] if vector else bm_bar
    c_bar = _runtime.unbroadcast(c_bar, np.asarray(c))
    return _runtime._rebuild(c_and_lower, [c_bar, None]), _runtime.unbroadcast(b_bar, b)


@_facts.fresh
def expm_adjoint(g, a):
    """The gradient of `a` in `scipy.linalg.expm(a)`: the Frechet derivative of expm at a^T in
    the direction g (scipy.linalg.expm_frechet), matrix by matrix for a stack."""
    from scipy import linalg
    a = np.asarray(a, dtype=float)
    g = np.broadcast_to(np.asarray(g, dtype=float), a.shape)
    out = np.zeros(a.shape)
    for idx in np.ndindex(a.shape[:-2]):
        out[idx] = linalg.expm_frechet(a[idx].T, g[idx], compute_expm=False)
    return out


# -- more of NumPy (issue 15): gathers, padding, splitting, joining, interpolation, nan-reductions --

def _flat_axis(a, axis):
    """(a moved so `axis` is last, the axis) for a gather along `axis` (None: the flat array)."""
    a = np.asarray(a)
    if axis is None:
        return np.ravel(a), 0
    return a, int(axis) % max(a.ndim, 1)


@_facts.fresh
def take_adjoint(g, a, indices, axis=None, mode="raise"):
    """The gradient of `a` in `np.take(a, indices, axis, mode)`: `g` added back at the indices
    (duplicates accumulate; 'wrap' and 'clip' indices as NumPy resolves them)."""
    a = np.asarray(a)
    n = a.size if axis is None else a.shape[int(axis) % a.ndim]
    idx = np.asarray(indices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    if axis is None:
        out = np.zeros(a.size, dtype=np.result_type(g, float))
        np.add.at(out, idx, g)
        return _scalar(out.reshape(a.shape))
    ax = int(axis) % a.ndim
    out = np.zeros(np.moveaxis(a, ax, 0).shape, dtype=np.result_type(g, float))
    gm = np.moveaxis(np.asarray(g), tuple(range(ax, ax + idx.ndim)), tuple(range(idx.ndim)))
    np.add.at(out, idx, gm)
    return np.moveaxis(out, 0, ax)


@_facts.fresh
def take_along_axis_adjoint(g, arr, indices, axis):
    """The gradient of `arr` in `np.take_along_axis(arr, indices, axis)` (duplicates accumulate;
    `arr` broadcast against `indices` is summed back)."""
    arr = np.asarray(arr)
    g = np.asarray(g)
    if axis is None:
        out = np.zeros(arr.size, dtype=np.result_type(g, float))
        np.add.at(out, np.asarray(indices), g)
        return out.reshape(arr.shape)
    ax = int(axis) % arr.ndim
    idx = np.asarray(indices)
    shape = g.shape
    full = []
    for d in range(arr.ndim):
        if d == ax:
            full.append(np.broadcast_to(idx, shape))
        else:
            grid = np.arange(shape[d]) if arr.shape[d] == shape[d] else np.zeros(shape[d], dtype=int)
            full.append(np.broadcast_to(grid.reshape([-1 if k == d else 1 for k in range(arr.ndim)]), shape))
    out = np.zeros(arr.shape, dtype=np.result_type(g, float))
    np.add.at(out, tuple(full), g)
    return out


_PAD_GATHERS = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_adjoint(g, array, pad_width, mode="constant", constant_values=0):
    """The gradients `(array_bar, constant_values_bar)` in `np.pad(array, pad_width, mode,
    constant_values=...)`: every padding mode that copies entries (constant, edge, reflect,
    symmetric, wrap) is a gather, found by padding the entries' positions the same way (and, for
    'constant', a code per axis and side where the constants go)."""
    if mode not in _PAD_GATHERS:
        raise _NoGradientError(f"no gradient for np.pad(mode={mode!r}); the modes with one are {_PAD_GATHERS}")
    array = np.asarray(array)
    nd = array.ndim
    positions = np.arange(array.size).reshape(array.shape)
    if mode == "constant":
        codes = -1 - np.arange(2 * nd).reshape(nd, 2)  # -1 - (2 axis + side)
        where = np.pad(positions, pad_width, mode="constant", constant_values=codes if nd else -1)
    else:
        where = np.pad(positions, pad_width, mode=mode)
    gg = np.ravel(np.broadcast_to(g, where.shape))
    flat = where.ravel()
    inside = flat >= 0
    array_bar = np.bincount(flat[inside], weights=gg[inside], minlength=array.size).reshape(array.shape)
    if mode != "constant":
        return _scalar(array_bar), 0.0
    bar = np.bincount(-1 - flat[~inside], weights=gg[~inside], minlength=max(2 * nd, 1))[:max(2 * nd, 1)]
    cv = np.asarray(constant_values, dtype=float)
    if cv.ndim == 0 or cv.size == 1:
        return _scalar(array_bar), _scalar(np.reshape(np.sum(bar), cv.shape))
    return _scalar(array_bar), _runtime.unbroadcast(bar.reshape(nd, 2), cv)


def split_adjoint(g, ary, y, axis=0):
    """The gradient of `ary` in `np.split(ary, ...)` (and array_split, hsplit, vsplit, dsplit):
    the pieces' gradients joined back along `axis` (a piece without one, zeros)."""
    parts = _parts(g, len(y))
    pieces = [np.zeros(np.shape(p)) if q is None else np.asarray(q, dtype=float) for p, q in zip(y, parts)]
    return np.concatenate(pieces, axis=axis) if pieces else np.zeros(np.shape(ary))


def hsplit_axis(ary):
    """The axis np.hsplit splits: 1, or 0 for a vector."""
    return 0 if np.ndim(ary) == 1 else 1


def append_adjoint(g, arr, values, axis=None):
    """The gradients `(arr_bar, values_bar)` in `np.append(arr, values, axis)`."""
    if axis is None:
        flat = np.ravel(g)
        n = np.size(arr)
        return _scalar(np.reshape(flat[:n], np.shape(arr))), _scalar(np.reshape(flat[n:], np.shape(values)))
    n = np.shape(arr)[axis]
    first, second = np.split(np.asarray(g), [n], axis=axis)
    return first, np.reshape(second, np.shape(values))


def column_stack_adjoint(g, tup):
    """The gradients of the items of `tup` in `np.column_stack(tup)` (vectors are columns)."""
    promoted = [np.atleast_2d(a).T if np.ndim(a) < 2 else np.asarray(a) for a in tup]  # (NumPy's: a number is 1x1)
    return _split(g, tup, promoted, 1)


def dstack_adjoint(g, tup):
    """The gradients of the items of `tup` in `np.dstack(tup)`."""
    return _split(g, tup, [np.atleast_3d(a) for a in tup], 2)


def kron_adjoint(g, a, b):
    """The gradients `(a_bar, b_bar)` in `np.kron(a, b)`: with both brought to the same rank,
    kron(a, b) reshaped to (a0, b0, a1, b1, ...) is the outer product."""
    a, b = np.asarray(a), np.asarray(b)  # (complex operands stay complex: the rule holds for them)
    a, b = np.asarray(a, dtype=np.result_type(a, float)), np.asarray(b, dtype=np.result_type(b, float))
    nd = max(a.ndim, b.ndim)
    a2 = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b2 = b.reshape((1,) * (nd - b.ndim) + b.shape)
    inter = [s for pair in zip(a2.shape, b2.shape) for s in pair]
    g4 = np.reshape(g, inter)
    a_axes = tuple(range(0, 2 * nd, 2))
    b_axes = tuple(range(1, 2 * nd, 2))
    a_exp = np.expand_dims(a2, b_axes)
    b_exp = np.expand_dims(b2, a_axes)
    return _scalar(np.sum(g4 * b_exp, axis=b_axes).reshape(a.shape)), _scalar(np.sum(g4 * a_exp, axis=a_axes).reshape(b.shape))


def cross_adjoint(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The gradients `(a_bar, b_bar)` in `c = np.cross(a, b, axisa, axisb, axisc, axis)` (vectors
    along the axes given, the last by default; 2-vectors as 3-vectors with a zero third
    component): a_bar = b x g, b_bar = g x a."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if (axisa, axisb, axisc) != (-1, -1, -1):
        a_m, b_m = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
        has_vector_axis = not (a_m.shape[-1] == 2 and b_m.shape[-1] == 2)  # (else c has no axisc)
        g_m = np.moveaxis(np.asarray(g, dtype=float), axisc, -1) if has_vector_axis else g
        ga, gb = _cross_last_axis(g_m, a_m, b_m)
        return np.moveaxis(ga, -1, axisa), np.moveaxis(gb, -1, axisb)
    return _cross_last_axis(g, a, b)


def _cross_last_axis(g, a, b):
    """`cross_adjoint` of vectors along the last axis (no recursion: a gradient differentiates again)."""
    def three(v):
        return np.concatenate([v, np.zeros(v.shape[:-1] + (1,))], -1) if v.shape[-1] == 2 else v
    a3, b3 = three(a), three(b)
    g = np.asarray(g, dtype=float)
    if a.shape[-1] == 2 and b.shape[-1] == 2:  # c is the z component alone
        g = np.stack([np.zeros(g.shape), np.zeros(g.shape), g], -1)
    ga = np.cross(b3, g)[..., :a.shape[-1]]
    gb = np.cross(g, a3)[..., :b.shape[-1]]
    return _runtime.unbroadcast(ga, a), _runtime.unbroadcast(gb, b)


def interp_adjoint(g, x, xp, fp, left=None, right=None):
    """The gradients `(x_bar, xp_bar, fp_bar, left_bar, right_bar)` in `np.interp(x, xp, fp, left,
    right)` (xp increasing). At a knot, where the function has a kink, the derivative in `x` (and
    in `xp`) is the mean of the two one-sided ones (the central difference's limit); beyond the
    ends the result is constant."""
    x = np.asarray(x, dtype=float)
    xp, fp = np.asarray(xp, dtype=float), np.asarray(fp, dtype=float)
    g = np.broadcast_to(np.asarray(g, dtype=float), x.shape)
    n = xp.size
    gx = np.zeros(x.shape)
    gxp, gfp = np.zeros(n), np.zeros(n)
    gleft = gright = 0.0
    below, above = x < xp[0], x > xp[-1]
    if left is None:
        gfp[0] += np.sum(g[below])
    else:
        gleft = np.sum(g[below])
    if right is None:
        gfp[-1] += np.sum(g[above])
    else:
        gright = np.sum(g[above])
    inside = ~(below | above)
    xi, gi = x[inside], g[inside]
    for side, weight in (("left", 0.5), ("right", 0.5)):
        j = np.searchsorted(xp, xi, side=side) - 1  # the segment [xp[j], xp[j+1]] on that side
        flat = (j < 0) | (j >= n - 1)  # beyond an end: constant
        jj = np.clip(j, 0, max(n - 2, 0))
        if n < 2:
            gfp[0] += weight * np.sum(gi)
            continue
        h = xp[jj + 1] - xp[jj]
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(h > 0, (fp[jj + 1] - fp[jj]) / h, 0.0)
            t = np.where(h > 0, (xi - xp[jj]) / h, 0.0)
        # the constant piece at an end reads the end value (fp[0] at x == xp[0], fp[-1] at xp[-1])
        end = np.where(j < 0, 0, n - 1)
        w = np.where(flat, 0.0, weight * gi)
        np.add.at(gfp, end[flat], weight * gi[flat])
        gx[inside] += w * slope
        np.add.at(gfp, jj, w * (1.0 - t))
        np.add.at(gfp, jj + 1, w * t)
        np.add.at(gxp, jj, -w * slope * (1.0 - t))
        np.add.at(gxp, jj + 1, -w * slope * t)
    return _scalar(gx), gxp, gfp, gleft, gright


def trapezoid_adjoint(g, y, x=None, dx=1.0, axis=-1):
    """The gradients `(y_bar, x_bar, dx_bar)` in `np.trapezoid(y, x, dx, axis)` =
    sum(d * (y[1:] + y[:-1]) / 2) with d = diff(x) (or dx)."""
    y = np.asarray(y, dtype=float)
    ax = int(axis) % y.ndim
    G = np.expand_dims(np.asarray(g, dtype=float), ax)
    n = y.shape[ax]

    def cut(v, start, stop):
        index = [slice(None)] * v.ndim
        index[ax if v.ndim == y.ndim else 0] = slice(start, stop)
        return v[tuple(index)]
    s = (cut(y, 1, n) + cut(y, 0, n - 1)) / 2.0
    if x is None:
        d = dx
    else:
        xa = np.asarray(x, dtype=float)
        d = np.diff(xa, axis=ax if xa.ndim == y.ndim else 0)
        if xa.ndim == 1 and y.ndim > 1:
            d = d.reshape([-1 if k == ax else 1 for k in range(y.ndim)])
    s_bar = G * d
    y_bar = np.zeros(y.shape)
    pad_hi = [(0, 0)] * y.ndim
    pad_lo = [(0, 0)] * y.ndim
    pad_hi[ax], pad_lo[ax] = (1, 0), (0, 1)
    y_bar = y_bar + np.pad(np.broadcast_to(s_bar / 2.0, s.shape), pad_hi) + np.pad(np.broadcast_to(s_bar / 2.0, s.shape), pad_lo)
    d_bar = G * s
    x_bar = None
    dx_bar = 0.0
    if x is None:
        dx_bar = _runtime.unbroadcast(np.sum(d_bar), np.asarray(dx)) if np.ndim(dx) == 0 else \
            _runtime.unbroadcast(d_bar, np.asarray(dx))
    else:
        xa = np.asarray(x, dtype=float)
        if xa.ndim == 1 and y.ndim > 1:
            d_bar = np.sum(d_bar, axis=tuple(k for k in range(y.ndim) if k != ax))
            xax = 0
        else:
            d_bar = _runtime.unbroadcast(d_bar, np.diff(xa, axis=ax))
            xax = ax
        hi = [(0, 0)] * xa.ndim
        lo = [(0, 0)] * xa.ndim
        hi[xax], lo[xax] = (1, 0), (0, 1)
        x_bar = np.pad(d_bar, hi) - np.pad(d_bar, lo)
    return _scalar(y_bar), x_bar, dx_bar


def polyval_adjoint(g, p, x):
    """The gradients `(p_bar, x_bar)` in `np.polyval(p, x)` (coefficients highest power first)."""
    p = np.asarray(p, dtype=float)
    x = np.asarray(x, dtype=float)
    n = p.shape[0]
    g = np.asarray(g, dtype=float)
    powers = np.asarray(x)[..., None] ** np.arange(n - 1, -1, -1)
    p_bar = np.tensordot(np.broadcast_to(g, x.shape), powers, axes=x.ndim)
    dp = p[:-1] * np.arange(n - 1, 0, -1)
    x_bar = g * (np.polyval(dp, x) if n > 1 else 0.0)
    return p_bar, _scalar(np.asarray(x_bar))


def sinc_derivative(x):
    """d/dx sinc(x) = (cos(pi x) - sinc(x)) / x, 0 at x = 0."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(x == 0, 0.0, (np.cos(np.pi * x) - np.sinc(x)) / np.where(x == 0, 1.0, x))
    return _scalar(d)


def nan_reduction_adjoint(g, a, axis=None, keepdims=False, mean=False):
    """The gradient of `a` in `np.nansum(a, axis)` (or `nanmean`): the reduction's over the entries
    that are not nan, none to the nan entries."""
    a = np.asarray(a, dtype=float)
    keep = ~np.isnan(a)
    ge = _expand(g, a, axis, keepdims)
    if mean:
        with np.errstate(divide="ignore", invalid="ignore"):
            ge = ge / np.sum(keep, axis=axis, keepdims=True)
    return _scalar(np.where(keep, ge, 0.0))


def median_adjoint(g, a, y, axis=None, keepdims=False):
    """The gradient of `a` in `y = np.median(a, axis)`: the middle value (the two middle ones, half
    each, for an even count) gets the gradient, split equally among the entries equal to it (as
    ties of `max`)."""
    a = np.asarray(a, dtype=float)
    if a.ndim == 0:
        return g
    axes = _axes(axis, a.ndim)
    rest = [k for k in range(a.ndim) if k not in axes]
    moved = np.transpose(a, rest + list(axes))
    flat = moved.reshape(moved.shape[:len(rest)] + (-1,))
    m = flat.shape[-1]
    s = np.sort(flat, axis=-1)
    lo, hi = s[..., (m - 1) // 2, None], s[..., m // 2, None]
    hit_lo, hit_hi = flat == lo, flat == hi
    with np.errstate(divide="ignore", invalid="ignore"):
        share = 0.5 * hit_lo / np.sum(hit_lo, -1, keepdims=True) + 0.5 * hit_hi / np.sum(hit_hi, -1, keepdims=True)
    gg = np.reshape(g, flat.shape[:-1] + (1,))
    out = (share * gg).reshape(moved.shape)
    return np.transpose(out, inverse_permutation(rest + list(axes)))

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

import math
import string as _string

import numpy as np


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

def choice_weight(z, x, y):
    """The share of `x` in `z`, where `z` is one of `x`, `y` (maximum, minimum, fmax, fmin):
    1 where `z` took `x`, 0 where it took `y`, 0.5 on ties."""
    return _scalar(np.where(z == x, np.where(x == y, 0.5, 1.0), 0.0))


def _bounds(a, lo, hi):
    lo = -np.inf if lo is None else lo
    hi = np.inf if hi is None else hi
    below = np.logical_and(a < lo, lo <= hi)  # np.clip applies the upper bound last
    inside = np.logical_and(a >= lo, a <= hi)
    return below, inside


def clip_inside(a, lo, hi):
    """1.0 where `np.clip(a, lo, hi)` passes `a` through (bounds included), else 0.0."""
    return _scalar(_bounds(a, lo, hi)[1] * 1.0)


def clip_below(a, lo, hi):
    """1.0 where the lower bound `lo` is the result of `np.clip(a, lo, hi)` (strictly), else 0.0."""
    return _scalar(_bounds(a, lo, hi)[0] * 1.0)


def clip_above(a, lo, hi):
    """1.0 where the upper bound `hi` is the result of `np.clip(a, lo, hi)` (strictly), else 0.0."""
    below, inside = _bounds(a, lo, hi)
    return _scalar(np.logical_not(np.logical_or(below, inside)) * 1.0)


def log_of_base(base):
    """log(base) for `math.log(x, base)`; 1.0 for the natural log."""
    return 1.0 if base is None else np.log(base)


def cast_adjoint(g, y):
    """The gradient through a cast to `y`'s dtype: none through a cast to integers or booleans."""
    if _runtime._integer_storage(y):
        return np.zeros(np.shape(g))
    return g


def expand_like(g, like):
    """`g` broadcast to the shape of `like` (a read-only view)."""
    return np.broadcast_to(g, np.shape(like))


# -- reductions -----------------------------------------------------------------------------------

def _expand(g, x, axis, keepdims):
    return _runtime.expand_reduced(g, x, axis, keepdims)


def reduced_size(x, axis=None):
    """How many entries of `x` a reduction over `axis` combines into each result."""
    shape = x.shape if hasattr(x, "shape") else np.shape(x)
    if axis is None or not shape:
        return math.prod(shape)
    return math.prod([shape[a] for a in _axes(axis, len(shape))])


def extremum_adjoint(g, x, y, axis=None, keepdims=False):
    """The gradient of `x` in `y = max(x, axis)` (or min): split equally among tied entries."""
    if np.ndim(x) == 0:
        return g
    hit = np.asarray(x) == _expand(y, x, axis, keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = hit / np.sum(hit, axis=axis, keepdims=True)
    return _expand(g, x, axis, keepdims) * share


def prod_adjoint(g, x, axis=None, keepdims=False):
    """The gradient of `x` in `np.prod(x, axis)`: each entry gets the product of the others
    (exclusive cumulative products, so zeros in `x` are fine)."""
    x = np.asarray(x)
    if x.ndim == 0:
        return g
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
    """The gradient of `x` in `y = np.cumprod(x, axis)` (for `x` without zeros along `axis`)."""
    if axis is None:
        return np.reshape(cumsum_adjoint(np.ravel(g) * np.ravel(y), np.ravel(x), 0), np.shape(x)) / x
    return cumsum_adjoint(g * y, x, axis) / x


# -- norms and traces -----------------------------------------------------------------------------

def _vector_norm_adjoint(x, y, ord):
    """d norm / dx for vector norms, `y` the norm broadcast to `x`'s shape."""
    ax = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ord is None or ord == 2:
            return np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y))
        if ord == 0:
            return np.zeros(np.shape(x))
        if ord == 1:
            return np.sign(x)
        return np.sign(x) * (ax / y) ** (ord - 1)


def norm_adjoint(g, x, y, ord=None, axis=None, keepdims=False):
    """The gradient of `x` in `y = np.linalg.norm(x, ord, axis, keepdims)`. Vector ord: p-norms,
    inf and -inf (ties split equally); matrix ord: 'fro', 'nuc', 2, -2, 1, -1, inf, -inf."""
    x = np.asarray(x)
    matrix = (axis is None and ord is not None and x.ndim == 2) or (np.ndim(axis) == 1 and len(axis) == 2)
    if not matrix:
        ge, ye = _expand(g, x, axis, keepdims), _expand(y, x, axis, keepdims)
        if ord in (np.inf, -np.inf):
            hit = np.abs(x) == ye
            return ge * np.sign(x) * hit / np.sum(hit, axis=axis, keepdims=True)
        return ge * _vector_norm_adjoint(x, ye, ord)
    if ord in (None, "fro"):
        return _expand(g, x, axis, keepdims) * _vector_norm_adjoint(x, _expand(y, x, axis, keepdims), None)
    rows, cols = (0, 1) if axis is None else _axes(axis, x.ndim)
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    gm = np.reshape(g, xm.shape[:-2])[..., None, None]
    if ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            d = u @ vh
        else:
            k = 0 if ord == 2 else -1
            d = u[..., :, k, None] * vh[..., k, None, :]
    elif ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1  # 1: max column sum (sum over rows); inf: max row sum
        sums = np.sum(np.abs(xm), axis=along, keepdims=True)
        across = -1 if along == -2 else -2
        pick = np.max if ord in (1, np.inf) else np.min
        hit = sums == pick(sums, axis=across, keepdims=True)
        d = np.sign(xm) * hit / np.sum(hit, axis=across, keepdims=True)
    else:
        raise ValueError(f"no gradient for the matrix norm ord={ord!r}")
    return np.moveaxis(gm * d, (-2, -1), (rows, cols))


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


def _einsum_spec(subscripts: str, ndims: list) -> tuple:
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
    return spelled, out


class einsum_adjoint:
    """`einsum_adjoint(g, subscripts, operands)[i]`: the gradient of `operands[i]` in
    `np.einsum(subscripts, *operands)`, one einsum of `g` with the other operands. Indexing computes
    only the requested operand's gradient."""

    def __init__(self, g, subscripts, operands):
        if not isinstance(subscripts, str):
            raise TypeError("the gradient of np.einsum needs the subscripts as a string "
                            "(the interleaved operand/sublist form is not supported)")
        self.g = g
        self.operands = [np.asarray(o) for o in operands]
        self.inputs, self.output = _einsum_spec(subscripts, [o.ndim for o in self.operands])

    def __getitem__(self, i):
        own, x = self.inputs[i], self.operands[i]
        others = [t for j, t in enumerate(self.inputs) if j != i]
        other_ops = [o for j, o in enumerate(self.operands) if j != i]
        unique = "".join(dict.fromkeys(own))
        available = set(self.output).union(*others)
        keep = "".join(c for c in unique if c in available)
        r = np.einsum(",".join([self.output] + others) + "->" + keep, self.g, *other_ops)
        for pos, c in enumerate(unique):
            if c not in available:  # summed over in this operand alone: the gradient is constant along it
                r = np.expand_dims(r, pos)
        size = dict(zip(own, x.shape))
        target = tuple(size[c] for c in unique)
        spread = tuple(k for k, (n, m) in enumerate(zip(target, r.shape)) if n == 1 and m != 1)
        if spread:  # this operand was broadcast along these axes
            r = np.sum(r, axis=spread, keepdims=True)
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
    """The gradient of `a` in `y = np.linalg.det(a)`: g * y * inv(a)^T."""
    return np.asarray(g * y)[..., None, None] * mT(np.linalg.inv(a))


def slogdet_adjoint(g, a):
    """The gradient of `a` in `(sign, logabsdet) = np.linalg.slogdet(a)`, from the pair of
    gradients `g` (the sign's is ignored): g_logabsdet * inv(a)^T."""
    g_log = g[1]
    if g_log is None:
        return np.zeros(np.shape(a))
    return np.asarray(g_log)[..., None, None] * mT(np.linalg.inv(a))


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
    cuts = np.cumsum([np.shape(p)[axis] for p in promoted])[:-1]
    parts = np.split(g, cuts, axis=axis)
    return _like([np.reshape(p, np.shape(item)) for p, item in zip(parts, items)], items)


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


def array_adjoint(g, obj, y=None):
    """The gradient of `obj` in `np.array(obj)`: for a (nested) list or tuple, one gradient per
    item; for an array or a scalar, `g` itself. None through a cast to integers or booleans (the
    result `y` is read for its dtype only)."""
    if y is not None and _runtime._integer_storage(y):
        g = np.zeros(np.shape(g))
    if isinstance(obj, (list, tuple)):
        return [array_adjoint(g[i], item) for i, item in enumerate(obj)]
    return _scalar(g) if not isinstance(obj, np.ndarray) else g


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

def sum_items_adjoint(g, iterable):
    """The gradients of the items summed by the builtin `sum(iterable)`: `g` for each item (rows of
    an array, entries of a list or tuple), summed back to the item's shape."""
    if isinstance(iterable, np.ndarray):
        if not len(iterable):
            return np.zeros(iterable.shape)
        return np.broadcast_to(_runtime.unbroadcast(g, iterable[0]), iterable.shape)
    return [_runtime.unbroadcast(g, item) for item in iterable]


def _shares(g, y, items):
    hits = [1.0 if bool(v == y) else 0.0 for v in items]
    n = sum(hits)
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
        pad = [(0, 0)] * g.ndim
        pad[axis] = (1, 0)
        left = np.pad(g, pad)
        pad[axis] = (0, 1)
        g = left - np.pad(g, pad)
    return g

"""Helpers of the tangent rules (forward mode), re-exported by `runtime` as `rt.*`.

A tangent has the shape and structure of its value: a float for a number, a float array of the
same shape for an array, a Buffer for a Buffer, a tuple or list of tangents for a tuple or list,
None for a value with no numbers (a string, None). `zero_tangent` makes the zero tangent of any
value; the rule helpers below compute the tangent of one primitive from its arguments" tangents.
Like the rest of `runtime`, they never write into their arguments, except where said (the
write helpers `rt.copyto`, `rt.copyto_items` write into the tangent of the array they write).
"""
from __future__ import annotations

import copy as _copy

import numpy as np

from . import runtime_facts as _facts
from .buffer import Buffer


def _rebuild(like, items: list):
    kind = type(like)
    if hasattr(kind, "_make"):
        return kind._make(items)
    return kind(items) if kind in (tuple, list) else tuple(items)


@_facts.fresh
def zero_tangent(*likes):
    """The zero tangent of a value (of the broadcast of several values): 0.0 for a number, float
    zeros for an array (a Buffer of zeros for a Buffer), the same structure for a tuple, list or
    dict, None for a value without numbers (None, a string, a slice)."""
    if len(likes) > 1:
        shape = np.broadcast_shapes(*(np.shape(v) for v in likes))
        return np.zeros(shape) if shape else 0.0
    x = likes[0]
    kind = type(x)
    if kind is float or kind is int or kind is bool or kind is complex:
        return 0.0
    if kind is np.ndarray:
        if x.dtype == object:
            out = np.empty(x.shape, dtype=object)
            for k, v in enumerate(x.flat):
                out.flat[k] = None if v is None else zero_tangent(v)
            return out
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind == "f" else float)
    if isinstance(x, Buffer):
        return Buffer(zero_tangent(x.data))
    if isinstance(x, (tuple, list)):
        return _rebuild(x, [zero_tangent(v) for v in x])
    if isinstance(x, dict):
        return {k: zero_tangent(v) for k, v in x.items()}
    if isinstance(x, np.generic):
        return x.dtype.type(0) if x.dtype.kind == "f" else 0.0
    if isinstance(x, np.ndarray):  # a subclass
        return np.zeros(x.shape)
    return None


@_facts.reads_only_shape(1)
def sum_start_tangent(t, start):
    """The tangent `start` adds to the builtin `sum(iterable, start)`: its own; a list or tuple
    `start` (`sum` then joins sequences) is refused, as in reverse mode."""
    from .runtime_rules import refuse_joining_sum
    refuse_joining_sum(start)
    return t


def broadcast_tangent(t, like):
    """`t` broadcast to the shape of `like` (a new array when it had to be broadcast): the tangent
    of an elementwise result whose other operands carry no tangent (`x + c`: `x_dot`, spread over
    the shape `c` gave the result)."""
    kind = type(t)
    if (kind is float or kind is np.float64) and type(like) is float:
        return t
    shape = np.shape(like)
    if np.shape(t) == shape:
        return t
    return np.array(np.broadcast_to(t, shape), dtype=np.result_type(t, float))


@_facts.reads_only_dtype(1)
def stored_tangent(t, into):
    """The tangent a write stores into `into`: `t`, or zeros of its shape when `into` holds
    integers or booleans (NumPy truncated or tested the value written: it carries none)."""
    dtype = getattr(into, "dtype", None)
    if dtype is not None and not isinstance(into, Buffer) and dtype.kind in "biu":
        return zero_tangent(t)
    return t


@_facts.fresh
def tangent_copy(t):
    """A copy of a tangent that another tangent may share, for a value that is a new array (and
    that, or what the tangent shares, is written later)."""
    if isinstance(t, np.ndarray):
        return t.copy()
    if isinstance(t, Buffer):
        return Buffer(t)
    if isinstance(t, list):
        return list(t)
    return t


def tangent_view(t, y, x, x_dot):
    """`t`, the tangent of `y` computed from `x_dot` by an operation that returns a view or a copy
    of `x` depending on its layout (`reshape`, `ravel`, `asarray`): a copy where `y` is a copy of
    `x` but `t` a view of `x_dot`, so that writing into one never changes the other."""
    if isinstance(t, np.ndarray) and isinstance(x_dot, np.ndarray) and np.may_share_memory(t, x_dot) \
            and not (isinstance(y, np.ndarray) and isinstance(x, np.ndarray) and np.may_share_memory(y, x)):
        return t.copy()
    return t


@_facts.fresh
def shallow_copy(x):
    """`copy.copy(x)` (the tangent of `copy.copy`): a snapshot of a Buffer, a copy of an array."""
    return _copy.copy(x)


# -- casts ----------------------------------------------------------------------------------------

def _scalar_of(t):
    a = np.asarray(t)
    return a.reshape(-1)[0] if a.ndim else a[()]


@_facts.fresh
def cast_tangent(t, y):
    """The tangent of `y`, a cast of a value with tangent `t` (`float(x)`, `np.float32(x)`,
    `x.astype(dtype)`): `t` in `y`"s type; zero for a cast to integers or booleans."""
    if type(y) is float:
        return float(_scalar_of(t))
    dtype = getattr(y, "dtype", None)
    if dtype is None or dtype.kind in "biu":
        return np.zeros(np.shape(y)) if np.ndim(y) else 0.0
    if isinstance(y, np.ndarray):
        return np.array(np.broadcast_to(t, y.shape), dtype=dtype)
    return dtype.type(_scalar_of(t))


def array_tangent(t, y):
    """The tangent of `y = np.array(obj)` (`asarray`, ...) from the tangent `t` of `obj` (an
    array, a number or nested lists of tangents): an array of `y`"s shape; zero for an integer or
    boolean `y`."""
    if y.dtype.kind in "biu":
        return np.zeros(y.shape)
    if type(t) is np.ndarray and t.shape == y.shape and t.dtype == y.dtype:
        return t
    if isinstance(t, Buffer):
        t = t.data
    return np.reshape(np.asarray(t, dtype=y.dtype if y.dtype.kind == "f" else float), y.shape)


@_facts.fresh
def fill_tangent(t, y):
    """The tangent of `y = np.full(shape, fill)` / `np.full_like(a, fill)`: `t` in every entry."""
    if np.result_type(y).kind in "biu":
        return np.zeros(np.shape(y))
    return np.array(np.broadcast_to(t, np.shape(y)), dtype=float)


# -- reductions -------------------------------------------------------------------------------------

def reduction_tangent(weights, t, axis=None, keepdims=False):
    """`sum(weights * t)` over the reduced axes: the tangent of a reduction whose output entry
    depends on its slice alone, `weights` being its adjoint for a cotangent of ones."""
    out = np.sum(weights * t, axis=axis, keepdims=keepdims)
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out


def prod_tangent(t, a, y, axis=None, keepdims=False):
    """The tangent of `y = np.prod(a, axis)`: each entry"s tangent times the product of the others
    (exact through zeros)."""
    from .runtime import prod_adjoint
    return reduction_tangent(prod_adjoint(np.ones_like(y), a, axis, keepdims), t, axis, keepdims)


def extremum_tangent(t, a, y, axis=None, keepdims=False):
    """The tangent of a max or min reduction: the tangent of the extremal entry (the mean of the
    tied ones, the convention of the adjoint)."""
    from .runtime import extremum_adjoint
    return reduction_tangent(extremum_adjoint(np.ones_like(y), a, y, axis, keepdims), t, axis, keepdims)


def var_tangent(t, a, y, axis=None, ddof=0, keepdims=False):
    """The tangent of `y = np.var(a, axis, ddof=ddof)`."""
    from .runtime import var_adjoint
    return reduction_tangent(var_adjoint(np.ones_like(y), a, axis, ddof, keepdims), t, axis, keepdims)


def std_tangent(t, a, y, axis=None, ddof=0, keepdims=False):
    """The tangent of `y = np.std(a, axis, ddof=ddof)` (0 where the slice is constant, the
    convention of the adjoint)."""
    from .runtime import std_adjoint
    return reduction_tangent(std_adjoint(np.ones_like(y), a, y, axis, ddof, keepdims), t, axis, keepdims)


def norm_tangent(t, x, y, ord=None, axis=None, keepdims=False):
    """The tangent of `y = np.linalg.norm(x, ord, axis, keepdims)`."""
    from .runtime import norm_adjoint
    weights = norm_adjoint(np.ones_like(y), x, y, ord, axis, keepdims)
    return reduction_tangent(weights, t, None if axis is None else axis, keepdims)


def cumprod_tangent(t, a, y, axis=None):
    """The tangent of `y = np.cumprod(a, axis)`: y_k" = y_{k-1}" a_k + y_{k-1} a_k" (exact
    through zeros)."""
    a, t, y = np.asarray(a), np.asarray(t), np.asarray(y)
    if axis is None:
        a, t, y, axis = a.ravel(), np.ravel(t), y.ravel(), 0
    if a.ndim == 0:
        return t
    am, tm, ym = (np.moveaxis(v, axis, 0) for v in (a, np.broadcast_to(t, a.shape), y))
    out = np.empty(am.shape, dtype=np.result_type(t, float))
    if len(am):
        out[0] = tm[0]
    for k in range(1, len(am)):
        out[k] = out[k - 1] * am[k] + ym[k - 1] * tm[k]
    return np.moveaxis(out, 0, axis)


# -- products and linear algebra --------------------------------------------------------------------

def einsum_tangent(operands, tangents, dtype=None):
    """The tangent of `np.einsum(*operands)` (either form), the tangents of the operands in
    `tangents` (None for the subscripts): one einsum per operand with a tangent, summed."""
    from .runtime import through_dtype
    if isinstance(operands[0], str):
        positions = range(1, len(operands))
    else:  # interleaved: operand, sublist, operand, sublist, ... [, output sublist]
        positions = range(0, len(operands) - (len(operands) % 2 == 1), 2)
    total = None
    for k in positions:
        if tangents[k] is None:
            continue
        ops = list(operands)
        ops[k] = tangents[k]
        term = np.einsum(*ops)
        total = term if total is None else total + term
    if total is None:
        return zero_tangent(np.einsum(*operands))
    return through_dtype(total, dtype)


def solve_product(a, x, b=None):
    """`a @ x` with `x` read as `np.linalg.solve` reads its `b` (`x` itself if not given): a
    vector, or a stack of vectors, when `b` has one axis."""
    x = np.asarray(x)
    if x.ndim == 1:
        return np.asarray(a) @ x
    if b is not None and np.ndim(b) == 1:
        return np.matmul(a, x[..., None])[..., 0]
    return np.matmul(a, x)


def det_tangent(t, a, y):
    """The tangent of `y = np.linalg.det(a)`: the cofactors of `a` against `t` (singular `a` too)."""
    from .runtime import det_adjoint
    return reduction_tangent(det_adjoint(np.ones_like(y), y, a), t, (-2, -1))


def slogdet_tangent(t, a, y):
    """The tangent of `y = np.linalg.slogdet(a)`: (0 for the sign, trace(inv(a) t))."""
    from .runtime import slogdet_adjoint
    sign, logabsdet = y
    weights = slogdet_adjoint((None, np.ones_like(logabsdet)), a)
    return _rebuild(y, [zero_tangent(sign), reduction_tangent(weights, t, (-2, -1))])


# -- shapes -----------------------------------------------------------------------------------------

def reshape_tangent(t, y, a, order="C"):
    """The tangent of `y = np.reshape(a, shape, order)` (`ravel`, `flatten`): `t` read in the index
    order `a` was read in (which 'A' and 'K' take from the layout of `a`, not of `t`)."""
    from .runtime_rules import _layout_order
    resolved = _layout_order(a, order)
    if resolved is not None:
        return np.reshape(t, np.shape(y), order=resolved)
    ids = np.empty_like(np.asarray(a), dtype=np.intp, order="K")
    ids[...] = np.arange(np.size(a)).reshape(np.shape(a))
    return np.reshape(np.ravel(t)[np.ravel(ids, order="K")], np.shape(y))


def sort_tangent(t, a, axis=-1):
    """The tangent of `np.sort(a, axis)`: `t` in the order of a stable argsort of `a`."""
    a = np.asarray(a)
    if axis is None:
        return np.ravel(t)[np.argsort(a, axis=None, kind="stable")]
    if a.ndim == 0:
        return t
    return np.take_along_axis(np.broadcast_to(t, a.shape), np.argsort(a, axis=axis, kind="stable"), axis=axis)


@_facts.fresh
def arange_tangent(y, start, step, stop, dtype=None):
    """The tangent of `y = np.arange(start, stop, step)` from the tangents `start`, `step` (entry i
    is start + i * step; the length is piecewise constant); zero when the first argument is the
    only bound given (it is the stop)."""
    if stop is None or np.result_type(y).kind in "biu" or (dtype is not None and np.dtype(dtype).kind in "biu"):
        return np.zeros(np.shape(y))
    return (0.0 if start is None else start) + np.arange(len(y)) * (0.0 if step is None else step)


def item_tangent(t, args):
    """The tangent of `a.item(*args)`."""
    return np.asarray(t).item(*args)


def seq_concat(x, y):
    """The tangent of `x + y` for tuples or lists: the tangents joined (of `xs += (a, b)`,
    a list extended by a tuple, a list)."""
    return x + list(y) if isinstance(x, list) and not isinstance(y, list) else x + y


def plus_tangent(x_dot, y_dot, z):
    """The tangent of `z = x + y` of values that may be lists or tuples: the tangents joined
    when `z` is a sequence, else added and spread over `z`'s shape."""
    if isinstance(z, (list, tuple)):
        return x_dot + y_dot
    return broadcast_tangent(x_dot + y_dot, z)


def extremum_args_tangent(y, args, tangents):
    """The tangent of the builtin `max(a, b, ...)` / `max(iterable)` with result `y`: the tangent
    of the winning argument (the mean of the tied ones, the convention of the adjoint)."""
    if len(args) == 1:
        args, tangents = args[0], tangents[0]
    if isinstance(args, np.ndarray):
        hit = args == y
        return np.sum(np.where(hit, tangents, 0.0)) / np.sum(hit)
    hits = [t for a, t in zip(args, tangents) if bool(a == y)]
    return sum(hits) / len(hits)


def concatenator_tangent(obj, items, tangents):
    """The tangent of `np.r_[items]` / `np.c_[items]`: the items" tangents joined the same way, a
    constant slice as zeros of its length."""
    parts = [np.zeros(len(np.r_[i])) if isinstance(i, slice) else (zero_tangent(i) if t is None else t)
             for i, t in zip(items, tangents)]
    return obj[tuple(parts)]


__all__ = [
    "sum_start_tangent",
    "arange_tangent",
    "array_tangent",
    "broadcast_tangent",
    "cast_tangent",
    "concatenator_tangent",
    "cumprod_tangent",
    "det_tangent",
    "einsum_tangent",
    "extremum_args_tangent",
    "extremum_tangent",
    "fill_tangent",
    "item_tangent",
    "norm_tangent",
    "plus_tangent",
    "prod_tangent",
    "reduction_tangent",
    "reshape_tangent",
    "seq_concat",
    "shallow_copy",
    "slogdet_tangent",
    "solve_product",
    "sort_tangent",
    "std_tangent",
    "stored_tangent",
    "tangent_copy",
    "tangent_view",
    "var_tangent",
    "zero_tangent",
]

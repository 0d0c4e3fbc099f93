"""What the result of an operation may share memory with: the aliasing facts of the primitives.

Decided by an allow-list. A result is fresh (shares memory with none of its operands) only when
the operation is known to return a new value; a known *view* operation returns a view of its
first operand, which the compiler can follow (`ssa` writes through it and re-reads it after its
base is written); anything else (unknown functions, containers, `np.einsum`, `max` over a list)
may alias every array operand, and `mutation` refuses a write whose effect it could not follow.

    y = np.sin(x)          fresh
    v = x[1:3]             view of x (always an array view)
    r = x[i]               view of x, or a scalar copy (decided at run time where it matters)
    t = (u, 1.0)           may alias u
"""
from __future__ import annotations

import copy
import math
import operator

import numpy as np

from . import ir
from . import runtime as rt
from . import runtime_facts

# Operations whose result is a view of their first operand whenever that operand is an array.
VIEW_FUNCTIONS = {np.transpose, np.swapaxes, np.moveaxis, np.squeeze, np.expand_dims, np.flip, np.fliplr,
                  np.flipud, np.rot90, np.diagonal, np.real, np.imag}
VIEW_METHODS = {"transpose", "swapaxes", "squeeze", "view", "diagonal"}
VIEW_ATTRS = {"T", "mT", "real", "imag"}
# Operations that return their operand itself, a view of it, or a copy, depending on its layout
# or dtype at run time: a view of it as far as aliasing goes, re-checked at run time by a write.
# (The scalar types called on an array return it itself when it already has their dtype, and a
# real array's `conj()` is the array itself.)
MAYBE_VIEW_FUNCTIONS = {np.reshape, np.ravel, np.asarray, np.asanyarray, np.ascontiguousarray,
                        np.asfortranarray, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_to,
                        np.require, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_,
                        np.complex128, np.complex64}
MAYBE_VIEW_METHODS = {"reshape", "ravel", "conj", "conjugate"}
# View operations whose result NumPy makes read-only: a write through it (or a view of it) raises.
READ_ONLY_VIEW_FUNCTIONS = {np.broadcast_to, np.diagonal, np.lib.stride_tricks.sliding_window_view}
READ_ONLY_VIEW_METHODS = {"diagonal"}


def read_only_view(prim, kwargs: dict) -> bool:
    """Whether a view operation makes a read-only view (`np.broadcast_to`, `diagonal`,
    `sliding_window_view` without `writeable=True`)."""
    if isinstance(prim, ir.Method):
        return prim.name in READ_ONLY_VIEW_METHODS
    try:
        if prim not in READ_ONLY_VIEW_FUNCTIONS:
            return False
    except TypeError:  # an unhashable callee
        return False
    writeable = kwargs.get("writeable")
    return not (isinstance(writeable, ir.Const) and writeable.value)

# Operations known to return a new value (or a number), never memory of an operand. (The rule
# modules of optional libraries, rules/scipy_*.py, add their functions when they load.)
FRESH_FUNCTIONS = {
    np.copy, np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.arange, np.linspace, np.logspace, np.eye, np.identity, np.tri, np.concatenate,
    np.stack, np.hstack, np.vstack, np.column_stack, np.dstack, np.tile, np.repeat, np.where, np.clip,
    np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.kron, np.cross, np.sum, np.mean, np.prod,
    np.max, np.min, np.amax, np.amin, np.var, np.std, np.cumsum, np.cumprod, np.diff, np.sort,
    np.argsort, np.argmax, np.argmin, np.trace, np.tril, np.triu, np.roll, np.append, np.insert,
    np.delete, np.pad, np.take, np.take_along_axis, np.select, np.searchsorted, np.digitize,
    np.bincount, np.convolve, np.correlate, np.average, np.median, np.percentile, np.quantile,
    np.nansum, np.nanmean, np.nanmax, np.nanmin, np.cov, np.corrcoef, np.interp, np.polyval,
    np.gradient, np.vander, np.nan_to_num, np.around, np.round, np.shape, np.ndim, np.size,
    np.count_nonzero, np.any, np.all, np.isclose, np.allclose, np.array_equal, np.nonzero,
    np.flatnonzero, np.argwhere, np.unique, np.meshgrid, np.linalg.inv, np.linalg.solve, np.linalg.det, np.linalg.slogdet, np.linalg.norm,
    np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr, np.linalg.cholesky,
    np.linalg.pinv, np.linalg.lstsq, np.linalg.matrix_power, np.linalg.eig, np.linalg.eigvals,
    float, int, bool, complex, abs, len, round, pow, sum, range, isinstance, print, divmod, copy.copy,
    copy.deepcopy,
}
# Functions of FRESH_FUNCTIONS that return an operand itself, or write into it, for some value of
# one argument: (its position, its keyword, whether a constant value of it makes a new array). An
# argument not given has its default (a new array); one not a constant may be any value.
SOMETIMES_FRESH = {np.diff: (1, "n", lambda n: type(n) is int and n >= 1),  # n=0: the operand itself
                   np.linalg.matrix_power: (1, "n", lambda n: type(n) is int and n != 1),  # n=1: itself
                   np.nan_to_num: (1, "copy", lambda copy: copy is True),  # copy=False: in place
                   np.meshgrid: (None, "copy", lambda copy: copy is True)}  # copy=False: views


def _makes_new(stmt: ir.Assign) -> bool:
    """Whether a call of a function of SOMETIMES_FRESH makes a new array, by the argument that says."""
    position, keyword, fresh = SOMETIMES_FRESH[stmt.prim]
    given = stmt.kwargs.get(keyword)
    if given is None and position is not None and len(stmt.args) > position:
        given = stmt.args[position]
    return given is None or isinstance(given, ir.Const) and fresh(given.value)


# The runtime helpers of generated gradients that return new values, beyond those marked `@fresh`
# (a gradient read back as source is differentiated like user code; `expand_reduced`, `unbroadcast`
# may return their operand or a view of it, so they are not here).
FRESH_FUNCTIONS |= {rt.seed, rt.zeros_like, rt.shape_of, rt.broadcast_shape, rt.reduced_size, rt.part_span, rt.sum_to_scalar,
                    rt.getitem_adjoint, rt.broadcast_like, rt.chain, rt.chain_div, rt.pow_base_derivative,
                    rt.pow_derivative, rt.pow_exponent_derivative, rt.dot_left, rt.dot_right, rt.matmul_left,
                    rt.matmul_right,
                    rt.sum_of_product, rt.extremum_adjoint, rt.extremum_transpose, rt.save_slots,
                    rt.written_adjoint, rt.written_transpose, rt.written_total, rt.written_total_transpose,
                    rt.overwritten_adjoint, rt.copied_adjoint, rt.copied_transpose, rt.overcopied_adjoint,
                    rt.items_transpose, rt.overfilled_adjoint, rt.stack_transpose, rt.seq_place, rt.item_transpose,
                    rt.shares_memory, rt.positions, rt.slots_at}  # (a bool, integer positions)
# Runtime helpers whose result is one of their operands, a view of it, or new: they may alias only
# the operands at these positions (`unbroadcast(g, x)` returns `g` itself when nothing was summed).
ALIASED_OPERANDS = {rt.unbroadcast: (0,), rt.expand_reduced: (0,), rt.reduce_like: (0,), rt.expand_like: (0,),
                    rt.getitem_transpose: (0,), rt.accum: (0, 1)}
FRESH_METHODS = {"copy", "sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod", "dot",
                 "round", "clip", "tolist", "item", "all", "any", "argmax", "argmin", "argsort",
                 "flatten", "repeat", "trace", "nonzero", "searchsorted", "ptp",
                 "astype"}
FRESH_ATTRS = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"}
FRESH_PRIMS = {ir.SQUARE, ir.OWN, ir.SAVE, ir.SHARES, ir.POSITIONS, ir.SLOTS_AT, ir.CHECK_UPDATE}
_OPERATORS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
              operator.pow, operator.matmul, operator.neg, operator.pos, operator.abs, operator.invert,
              operator.not_, operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
              operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift,
              operator.is_, operator.is_not}


def _may_skip_copy(stmt: ir.Assign) -> bool:
    """`np.array(x, copy=False)`, `x.astype(t, copy=None)`: may return `x` itself."""
    copy = stmt.kwargs.get("copy")
    return copy is not None and not (isinstance(copy, ir.Const) and copy.value is True)


def _layout_free(stmt: ir.Assign) -> bool:
    """Whether a reshape or ravel reads its operand in an order that does not depend on its memory
    layout (no `order`, 'C' or 'F'): a write through the view is then followed by the same steps
    applied to an array of positions (C-ordered). With 'A' or 'K' the view's slots follow the
    operand's memory (`(B.T * 1.0).ravel('K')` is in Fortran order), which positions do not have."""
    p = stmt.prim
    if isinstance(p, ir.Method):
        name, position = p.name, (1 if p.name == "ravel" else None)
    elif isinstance(p, ir.Attr) or not _hashable(p):
        return True
    else:
        name, position = {np.ravel: ("ravel", 1), np.reshape: ("reshape", 2)}.get(p, (None, None))
    if name not in ("ravel", "reshape"):
        return True
    order = stmt.kwargs.get("order")
    if order is None and position is not None and len(stmt.args) > position:  # (passed by position)
        order = stmt.args[position]
    return order is None or (isinstance(order, (ir.Const, ir.Global)) and order.value in ("C", "F", None))


def _hashable(p) -> bool:
    try:
        hash(p)
    except TypeError:
        return False
    return True


def view_kind(stmt: ir.Assign) -> str | None:
    """'view' when the result is a view of the first operand whenever that is an array, 'maybe' when
    it may be a view of it or a copy (run-time layout, or a scalar element), else None."""
    p = stmt.prim
    if stmt.target is None or not stmt.args:
        return None
    if p is operator.getitem:
        return _getitem_kind(stmt.args[0], stmt.args[1])
    if not _layout_free(stmt):
        return None  # (`ravel(order='K')`: a view in memory order, whose slots it cannot follow)
    try:
        if p in VIEW_FUNCTIONS:
            return "view"
        if p in MAYBE_VIEW_FUNCTIONS:
            return "maybe"
        if p is np.array and _may_skip_copy(stmt):
            return "maybe"
    except TypeError:  # an unhashable callee
        return None
    if isinstance(p, ir.Method):
        if p.name in VIEW_METHODS:
            return "view"
        if p.name in MAYBE_VIEW_METHODS or (p.name == "astype" and _may_skip_copy(stmt)):
            return "maybe"
    if isinstance(p, ir.Attr) and p.name in VIEW_ATTRS:
        return "view"
    return None


def _index_parts(index) -> tuple:
    return index.items if isinstance(index, ir.Struct) and index.kind == "tuple" else (index,)


def _getitem_kind(base, index) -> str | None:
    array = isinstance(base, ir.Global) and isinstance(base.value, np.ndarray)  # (a global array's slice: a view)
    if not array and (not isinstance(base, ir.Var) or base.is_buffer or base.kind != "num"):
        return None  # Buffer reads are copies; an item of what may be a tuple or list is an alias
    parts = _index_parts(index)
    for q in parts:
        if isinstance(q, (ir.Const, ir.Global)) and isinstance(q.value, (list, np.ndarray)):
            return None  # advanced indexing: a copy
    if any(isinstance(q, ir.Struct) or (isinstance(q, (ir.Const, ir.Global)) and (q.value is None or q.value is Ellipsis))
           for q in parts):
        return "view"
    return "maybe"  # integers (a scalar, or a view of a row), or an index held in a variable


def is_fresh(stmt: ir.Assign, ranks: dict | None = None) -> bool:
    """Whether the result of `stmt` surely shares memory with none of its operands (`ranks`, when
    given, tells an element of an array, a scalar copy, from a row of it, a view)."""
    p = stmt.prim
    kind = view_kind(stmt)
    if kind == "maybe" and p is operator.getitem and ranks is not None and ranks.get(stmt.target) == 0:
        return True  # every axis indexed by an integer: a scalar
    if kind == "maybe" and p is operator.getitem and ranks is not None and any(
            isinstance(q, ir.Var) and q.kind == "num" and (ranks.get(q) or 0) >= 1
            for q in _index_parts(stmt.args[1])):
        return True  # an index array (integers or booleans, of one axis or more): advanced indexing copies
    if kind is not None:
        return False
    if p is operator.getitem:
        base = stmt.args[0]
        if isinstance(base, ir.Var) and base.is_buffer:
            return True
        if isinstance(base, ir.Var) and base.kind != "num":
            return False  # an item of what may be a tuple or list: the item itself
        return True  # advanced indexing
    if p in (ir.PLUS, ir.TIMES):  # as the operators below
        return all(not isinstance(a, ir.Var) or a.kind != "seq" for a in stmt.args)
    if isinstance(p, ir.Prim):
        return p in FRESH_PRIMS
    arrays = [a for a in stmt.args if isinstance(a, ir.Var) and a.kind != "seq"]
    if arrays and all(a.is_buffer for a in arrays):
        return True  # what reads a Buffer reads a copy of it
    if isinstance(p, ir.Method):  # NumPy's methods (`xs.copy()` of a list or a dict keeps its items)
        receiver = stmt.args[0]
        container = isinstance(receiver, ir.Var) and receiver.kind != "num" and not receiver.is_buffer
        return p.name in FRESH_METHODS and not container
    if isinstance(p, ir.Attr):
        return p.name in FRESH_ATTRS
    if isinstance(p, np.ufunc):
        return "out" not in stmt.kwargs
    if p in _OPERATORS:  # on numbers and arrays; `+` and `*` of lists keep their items
        return all(not isinstance(a, ir.Var) or a.kind != "seq" for a in stmt.args)
    if runtime_facts.facts(p).fresh:  # a runtime helper that says so (`@fresh`)
        return True
    if p is np.diag and ranks is not None and stmt.args and ranks.get(stmt.args[0]) == 1:
        return True  # (of a vector: a new matrix; of a matrix, a read-only view of its diagonal)
    try:
        if p in SOMETIMES_FRESH:
            return _makes_new(stmt)
        if p in FRESH_FUNCTIONS or p is np.array:  # np.array copies unless told otherwise (a view, above)
            return True
        from . import registry
        if registry.load_optional() and p in FRESH_FUNCTIONS:  # an optional library's (rules/scipy_*.py)
            return True
    except TypeError:
        return False
    if getattr(p, "__module__", None) == "math" or getattr(math, getattr(p, "__name__", ""), None) is p:
        return True
    from .buffer import Buffer
    return p is Buffer or getattr(p, "__self__", None) is Buffer  # a new Buffer holds a copy


def may_alias(stmt: ir.Assign, ranks: dict | None = None) -> list:
    """The operands whose memory the result of `stmt` may share (its first operand for a view)."""
    if stmt.target is None or is_fresh(stmt, ranks):
        return []
    if view_kind(stmt) is not None and isinstance(stmt.args[0], ir.Var):
        return [stmt.args[0]]
    operands = list(stmt.args) + list(stmt.kwargs.values())
    if callable(stmt.prim) and not isinstance(stmt.prim, ir.Prim) and stmt.prim in ALIASED_OPERANDS:
        operands = [stmt.args[i] for i in ALIASED_OPERANDS[stmt.prim] if i < len(stmt.args)]
    return [a for a in operands
            if isinstance(a, (ir.Var, ir.Global)) and not (isinstance(a, ir.Global) and _immutable(a.value))]


def _immutable(value) -> bool:
    return isinstance(value, (int, float, complex, bool, str, type(None), tuple)) and not isinstance(value, np.ndarray) \
        or callable(value) or isinstance(value, type(np))


def makes_list(stmt: ir.Assign) -> bool:
    """Whether `stmt` surely makes a new Python list (whose slots are never another array's memory):
    also `xs.copy()` of a sequence (a tuple has no `copy`: that raises, as in Python)."""
    return stmt.prim in (ir.BUILD_LIST, ir.REPEAT, ir.CONCAT) or stmt.prim is list or ir.is_sequence_copy(stmt)

"""Effects: which statements are pure, which may raise, and which may run where the program would not.

One place for these facts until the primitive records of the registry carry them (issue 12): the
passes that move or merge statements (`hoist`, `cse`) ask here and nowhere else. Everything is an
allow-list: an operation not named here may raise and is not pure.

    p_0 = p[0]          pure; may raise (IndexError when p is empty)
    a = s + t           s, t scalars: cannot raise, and its adjoint (g, g) is 0 when g is 0
    b = s * t           cannot raise, but its adjoint g * t is nan for g = 0, t = inf
    c = s / 2.0         cannot raise; adjoint g / 2.0: may run speculatively
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import ir

# Deterministic, no side effects, the value depends only on the operands (indexing reads an array:
# the callers check it is not written).
PURE = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos,
        ir.SQUARE, operator.getitem, range}

_ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.neg, operator.pos, ir.SQUARE}
# adjoints that pass the cotangent on unscaled (summed over broadcast axes): zero in, zero out
_PASS_THROUGH = {operator.add, operator.sub, operator.neg, operator.pos}


def _number(op) -> bool:
    return isinstance(op, ir.Const) and type(op.value) in (int, float, bool)


def _finite_number(op) -> bool:
    return _number(op) and math.isfinite(op.value)


def constant_index(op) -> bool:
    """A basic index made of integer literals only (`x[0]`, `x[1, 2]`; not `x[(0, 1), (2, 3)]`,
    whose tuples inside the index make it a fancy one)."""
    if isinstance(op, ir.Const):
        return type(op.value) is int
    return isinstance(op, ir.Struct) and op.kind == "tuple" and \
        all(isinstance(i, ir.Const) and type(i.value) is int for i in op.items)


def pure(s) -> bool:
    """Whether the statement computes its value from its operands alone (no side effect, no
    hidden state): two identical pure statements give equal values."""
    if not (isinstance(s, ir.Assign) and s.target is not None and not s.kwargs):
        return False
    return s.prim in PURE and (s.prim is not operator.getitem or constant_index(s.args[1]))


# Calls that read their operands and do nothing else, whose value depends on them alone: an
# identical call later gives the same value, or the earlier one raised (`cse` merges them; it
# moves nothing). Reductions take constant `axis` and `keepdims` at most.
_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin}
_REDUCING_METHODS = {"sum", "mean", "prod", "max", "min"}
_PRODUCTS = {operator.matmul, np.matmul, np.dot}


def repeatable(s) -> bool:
    """Whether two identical runs of the statement give equal values and the second has no effect
    of its own: a pure statement, a one-output ufunc, `@`/`np.dot`, or a sum, mean, product,
    max or min (function or method) over a constant axis."""
    if pure(s):
        return True
    if not (isinstance(s, ir.Assign) and s.target is not None and s.args):
        return False
    p = s.prim
    if isinstance(p, np.ufunc) or p in _PRODUCTS:
        return not s.kwargs and (p in _PRODUCTS or p.nout == 1)
    reducing = p in _REDUCTIONS or (isinstance(p, ir.Method) and p.name in _REDUCING_METHODS
                                    and isinstance(s.args[0], ir.Var) and s.args[0].kind == "num")
    return reducing and set(s.kwargs) <= {"axis", "keepdims"} \
        and all(isinstance(v, ir.Const) for v in s.kwargs.values())


def _compatible(ops, classes: dict) -> bool:
    """Operands that surely broadcast together: numbers, scalars, and values of one shape class."""
    tokens = set()
    for op in ops:
        if _number(op):
            continue
        if not isinstance(op, ir.Var) or op.kind != "num" or op not in classes or classes[op] is None:
            return False
        if classes[op] != 0:
            tokens.add(classes[op])
    return len(tokens) <= 1


def may_raise(s, classes: dict) -> bool:
    """Whether running the statement may raise. False only for arithmetic on numbers, scalars
    and values of one shape class (`+ - * unary`), and division by a nonzero literal."""
    if not (isinstance(s, ir.Assign) and not s.kwargs):
        return True
    if s.prim in _ARITHMETIC:
        return not _compatible(s.args, classes)
    if s.prim is range:  # TypeError for a float bound
        return not all(isinstance(a, ir.Const) and type(a.value) is int for a in s.args)
    if s.prim is operator.truediv and len(s.args) == 2:
        divisor = s.args[1]
        return not (_finite_number(divisor) and divisor.value != 0 and _compatible(s.args, classes))
    return True


_WHOLE_SUMS = {np.sum, np.mean}  # (of an empty array: 0 and nan, a warning; never an exception)
_DIVISIONS = {operator.truediv, operator.floordiv, operator.mod, operator.pow}


def unused_may_raise(s, classes: dict, ranks: dict, numpy_values: set) -> bool:
    """Whether a statement may raise, so that it runs even where nothing reads its value (Python
    would raise there: the gradient must too). False only for an operator or a one-output ufunc
    on numbers and arrays that surely broadcast together (NumPy warns, it does not raise, for a
    division by zero or an overflow), a division, floor division, remainder or power of which an
    operand is NumPy's (`numpy_values`: an array, a NumPy scalar) or the divisor a nonzero literal
    (Python's numbers raise ZeroDivisionError), a product `@` of arrays whose contracted axes are
    known to be of one length, a sum or mean of a number or an array, a copy, a tuple or list
    display, and the compiler's own bookkeeping of writes (the writes themselves are judged by
    the caller)."""
    if not (isinstance(s, ir.Assign) and s.target is not None):
        return True
    p = s.prim
    if _member(p, _BOOKKEEPING):
        return False
    if not (not s.kwargs and s.args and all(_number(a) or (isinstance(a, ir.Var) and a.kind in ("num", "int"))
                                            for a in s.args)):
        return True
    from .buffer import Buffer
    if (_member(p, _COPIES) or p is Buffer or p == ir.Method("copy")) and len(s.args) == 1:
        return False  # (a copy of an array, a Buffer's included, or an array of its shape)
    if any(isinstance(a, ir.Var) and a.is_buffer for a in s.args):
        return True
    if _member(p, _DIVISIONS):
        numpy = any(a in numpy_values for a in s.args if isinstance(a, ir.Var))
        divisor = s.args[-1]
        nonzero = _finite_number(divisor) and divisor.value != 0 and (p is not operator.pow or divisor.value > 0)
        return not (_broadcast_together(s.args, classes) and (numpy or nonzero))
    if _member(p, _ARITHMETIC) or (isinstance(p, np.ufunc) and p.nout == 1 and p.nin == len(s.args)):
        return not _broadcast_together(s.args, classes)
    if _member(p, _PRODUCTS) and len(s.args) == 2:
        return not _contractible(s.args, classes, ranks)
    return not (len(s.args) == 1 and (_member(p, _WHOLE_SUMS) or (isinstance(p, ir.Method) and p.name in ("sum", "mean"))))


def _member(p, table) -> bool:
    try:
        return p in table
    except TypeError:  # an unhashable callee
        return False


_COPIES = {np.copy, np.array, np.asarray, np.zeros_like, np.ones_like, np.empty_like}
_BOOKKEEPING = {ir.SAVE, ir.OWN, ir.SHARES, ir.POSITIONS, ir.SLOTS_AT, ir.BUILD_TUPLE, ir.BUILD_LIST}


def numpy_values(fn: ir.Function, ranks: dict) -> set:
    """The values surely NumPy's (arrays, NumPy scalars), never Python's numbers: arrays of known
    rank, what a NumPy function or ufunc returns, and an operator's result on one of them."""
    from .shapes import INT_FUNCTIONS, INT_OF_ONE
    out = {v for v in ir.defined_in(fn.body) | set(fn.params) if ranks.get(v)}
    operators = _ARITHMETIC | _DIVISIONS | _PRODUCTS
    for s in ir.walk(fn.body):
        if not (isinstance(s, ir.Assign) and s.target is not None and s.target.kind == "num"):
            continue
        p = s.prim
        module = (getattr(p, "__module__", None) or "") if callable(p) else ""
        python_number = _member(p, INT_FUNCTIONS) or _member(p, INT_OF_ONE) or _member(p, _PYTHON_RESULTS)
        if isinstance(p, np.ufunc) or (module.startswith("numpy") and not isinstance(p, type) and not python_number) \
                or (_member(p, operators) and any(a in out for a in s.args if isinstance(a, ir.Var))):
            out.add(s.target)
    return out


# NumPy's functions that return Python's numbers or bools (`np.ndim`, `np.count_nonzero` of a whole array)
_PYTHON_RESULTS = {np.isscalar, np.iscomplexobj, np.isrealobj, np.shape, np.ndim, np.size, np.count_nonzero}


def _contractible(ops, classes: dict, ranks: dict) -> bool:
    """`a @ b` of arrays whose contracted axes surely have one length (one shape class for two
    vectors; equal ids of `shapes.Dims` otherwise), with no batch axes."""
    a, b = ops
    if not all(isinstance(v, ir.Var) and ranks.get(v) in (1, 2) for v in ops):
        return False
    from .shapes import Dims
    ta, tb = classes.get(a), classes.get(b)
    if ranks[a] == ranks[b] == 1 and ta is not None and ta == tb:
        return True
    if not (isinstance(ta, Dims) and isinstance(tb, Dims)):
        return False
    return ta.ids[-1] == tb.ids[0 if ranks[b] == 1 else -2]


def _broadcast_together(ops, classes: dict) -> bool:
    """Operands that surely broadcast together: `_compatible`, or arrays whose axes are known by
    id (`shapes.Dims`) and pair equal ids or length one."""
    ops = [op for op in ops if not (isinstance(op, ir.Var) and op.kind == "int")]  # (an integer: one number)
    if _compatible(ops, classes):
        return True
    from .shapes import Dims, broadcast_dims
    tokens = [classes.get(op) for op in ops if not _number(op) and classes.get(op) != 0]
    return all(isinstance(t, Dims) for t in tokens) and broadcast_dims(tokens) is not None


def speculable(s, classes: dict) -> bool:
    """Whether the statement may run where the program would not (ahead of a loop that runs zero
    times): it cannot raise, and its adjoint under a zero cotangent is exactly zero (no operand
    that may be inf or nan scales the cotangent)."""
    if not pure(s) or may_raise(s, classes):
        return False
    if s.prim in _PASS_THROUGH or s.prim is range:  # (a range has no adjoint)
        return True
    if s.prim is operator.mul:  # g * b and g * a: safe when the other factor is a finite literal
        return any(_finite_number(a) for a in s.args)
    return s.prim is operator.truediv  # by a nonzero finite literal (may_raise checked it)

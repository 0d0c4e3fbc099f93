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

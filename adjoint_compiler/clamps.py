"""Clamps: `np.where(x > c, x, c)` computed as the clamp it is.

`np.where` with a condition that varies from element to element costs a mispredicted branch per
element: a ReLU written `np.where(a > 0, a, 0.0)` takes five times as long as `np.maximum(a, 0.0)`.
When the condition is the comparison of the selected array with the other, a number, the
selection is a clamp, and the generated code computes it as one:

    m = a > 0                    m = a > 0
    h = np.where(m, a, 0.0)  ->  h = rt.where_above(m, a, 0.0)      (np.fmax(0.0, a))

`x < c` gives `rt.where_below` (np.fmin). Guarantee: the result is `np.where`'s, element for
element, nan and the sign of zero included (runtime.where_above says how), and the statement keeps
`np.where`'s rules (the helpers are aliases of it: the gradient still goes through the condition).
Only the strict comparisons qualify (`x >= c` keeps a -0.0 that fmax would not), with `c` a number
literal that is neither nan nor -0.0, and the same SSA value compared and selected.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import ir
from . import runtime as rt

# (comparison, whether the array is its left operand) -> the helper selecting `x` where it holds
_CLAMPS = {(operator.gt, True): rt.where_above, (operator.lt, False): rt.where_above,
           (operator.lt, True): rt.where_below, (operator.gt, False): rt.where_below}


def rewrite(fn: ir.Function) -> None:
    """Each `np.where(m, x, c)` whose `m` is `x > c` or `x < c` (either way round) calls its clamp."""
    comparisons = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None
                   and s.prim in (operator.gt, operator.lt) and len(s.args) == 2 and not s.kwargs}
    for s in ir.walk(fn.body):
        if not (isinstance(s, ir.Assign) and s.prim is np.where and len(s.args) == 3 and not s.kwargs):
            continue
        condition, x, c = s.args
        test = comparisons.get(condition) if isinstance(condition, ir.Var) else None
        if test is None or not (isinstance(x, ir.Var) and x.kind == "num" and not x.is_buffer and _number(c)):
            continue
        for left in (True, False):
            array, number = test.args if left else test.args[::-1]
            if array is x and isinstance(number, ir.Const) and number.value == c.value:
                helper = _CLAMPS[(test.prim, left)]
                s.prim = helper
                s.callee = ir.Global(f"rt.{helper.__name__}", helper, rt, ())
                break


def _number(op) -> bool:
    """A number literal other than nan and -0.0 (which the clamp would give as +0.0)."""
    return isinstance(op, ir.Const) and type(op.value) in (int, float) and not math.isnan(op.value) \
        and not (op.value == 0 and math.copysign(1.0, op.value) < 0)

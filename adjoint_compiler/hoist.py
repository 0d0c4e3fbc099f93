"""Hoist: move loop-invariant scalar work out of loops.

A statement in a loop body that only reads values defined before the loop (and none of the arrays
the function writes into), and is cheap and pure (arithmetic, constant indexing), computes the same
value in every iteration: it moves in front of the loop. Its adjoint then runs once, and neither the
forward nor the backward pass repeats it per iteration.

    for i in range(n):            p_0 = p[0]
        p_0 = p[0]          ->    for i in range(n):
        u = u * p_0                   u = u * p_0
"""
from __future__ import annotations

import operator

from . import ir
from .mutation import same_arrays

PURE = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos, ir.SQUARE}


def _constant_index(op) -> bool:
    if isinstance(op, ir.Const):
        return type(op.value) is int
    return isinstance(op, ir.Struct) and op.kind == "tuple" and all(_constant_index(i) for i in op.items)


def hoist(fn: ir.Function) -> None:
    arrays = same_arrays(fn.body)
    written = {arrays.find(s.target) for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.prim in ir.WRITES}

    def movable(s, inside: set) -> bool:
        if not (isinstance(s, ir.Assign) and s.target is not None and not s.kwargs):
            return False
        if not (s.prim in PURE or (s.prim is operator.getitem and _constant_index(s.args[1]))):
            return False
        reads = [v for op in s.args for v in ir.operand_vars(op)]
        return all(v not in inside and arrays.find(v) not in written for v in reads)

    def block(stmts) -> list:
        out = []
        for s in stmts:
            if isinstance(s, ir.If):
                s.body, s.orelse = block(s.body), block(s.orelse)
            elif isinstance(s, ir.Loop):
                s.body = block(s.body)
                inside = ir.defined_in(s.body) | set(s.params) | {v for v in (s.target,) if v is not None}
                kept = []
                for t in s.body:
                    if movable(t, inside):
                        out.append(t)
                        inside.discard(t.target)
                    else:
                        kept.append(t)
                s.body = kept
            out.append(s)
        return out

    fn.body = block(fn.body)

"""Peek: a read of a Buffer whose value is used up before the Buffer changes reads the Buffer's
array in place, without the copy a Buffer read makes.

`b[idx]` returns a copy, so that the value it read stays what it was whatever is written into
`b` later. A copy nobody could tell from a view is wasted work: when every use of the value is an
operation that makes a new array (arithmetic, a ufunc), all of them come, in the same block, before
the next write into `b`, and the backward pass does not read the value (the tape would keep it
past later writes), the generated code reads `rt.held(b)[idx]` (`b.data[idx]`), a view.

    u_slice = u_2[1:-1]                  u_slice = rt.held(u_2)[1:-1]
    times = k * u_2[2:]          ->      ...
    u_2[1:-1] = u_slice + times          u_2[1:-1] = u_slice + times
"""
from __future__ import annotations

import operator

from . import ir
from .aliasing import is_fresh
from .mutation import same_arrays


def _uses(fn: ir.Function) -> dict:
    """{Var: [statements reading it]} (loops and branches count where they read it)."""
    out: dict = {}
    for s in ir.walk(fn.body):
        for op in ir.stmt_operands(s) if not isinstance(s, ir.Assign) else list(s.args) + list(s.kwargs.values()):
            for v in ir.operand_vars(op):
                out.setdefault(v, []).append(s)
    for v in ir.operand_vars(fn.result):
        out.setdefault(v, []).append(None)
    return out


def views(fn: ir.Function, backward_reads: set, ranks: dict | None = None) -> set:
    """The ids of the Buffer reads that may read in place (`backward_reads`: the names the
    backward pass reads)."""
    arrays = same_arrays(fn.body)
    uses = _uses(fn)
    out: set = set()

    def writes(s, root) -> bool:
        return any(isinstance(t, ir.Assign) and t.prim in ir.WRITES and arrays.find(t.target) == root
                   for t in ir.walk([s]))

    def block(stmts):
        for k, s in enumerate(stmts):
            if isinstance(s, ir.If):
                block(s.body)
                block(s.orelse)
            elif isinstance(s, ir.Loop):
                block(s.cond_body)
                block(s.body)
            elif (isinstance(s, ir.Assign) and s.prim is operator.getitem and s.target is not None
                  and isinstance(s.args[0], ir.Var) and s.args[0].is_buffer and s.target.name not in backward_reads):
                readers = uses.get(s.target, [])
                position = {id(t): j for j, t in enumerate(stmts)}
                if not readers or not all(
                        isinstance(t, ir.Assign) and id(t) in position and position[id(t)] > k and t.prim not in ir.WRITES
                        and is_fresh(t, ranks) for t in readers):
                    continue
                last = max(position[id(t)] for t in readers)
                root = arrays.find(s.args[0])
                if not any(writes(t, root) for t in stmts[k + 1:last + 1]):
                    out.add(s)

    block(fn.body)
    return out

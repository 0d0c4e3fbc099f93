"""Slots: the adjoint of an array that a loop reads and writes only at its counter's slot is a
number local to each iteration, not an array.

In `for i in range(n)` (non-negative counters: each iteration its own slot), if every read and
write of a loop-carried float vector `b` is `b[i]`, then in the reverse of iteration `i` the
gradient flowing through `b` meets slot `i` only: the reads add to one number `b_i_bar`, the
write hands it to the value written and starts it afresh. The array adjoint is untouched by the
iteration (but for slot `i`, taken out at the top and put back at the bottom when something
flows into it from after the loop or to before it), so no statement of the iteration costs
O(n), and `b_i_bar` is a plain number simplify can see is zero on a path (a branch not taken),
where the adjoints that read only it vanish.

    for i in range(n):                  for i in reversed(range_n):
        b[i] = x[i] * w                     if c:
        if b[i] > 0:                  ->        b_2_i_bar = 2 * b_i * s_bar
            s = s + b[i] ** 2                   x_i_bar = b_2_i_bar * w ...
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

from . import ir


@dataclass(eq=False)
class Slot:
    """A loop-carried array `param` whose adjoint meets only slot `counter` in each iteration:
    `var` stands for that slot (its adjoint is the slot's gradient); `inside` is the array
    version carried out of the iteration and `rest` the array adjoint without the slot while
    the iteration is reversed; `write_back` tells whether the slot's gradient may be left over at
    the top of the iteration (a read before the first write) and flows on to the array."""

    param: ir.Var
    counter: ir.Var
    var: ir.Var
    rest: ir.Var
    inside: ir.Var
    write_back: bool


def _nonnegative_range(iterable, defs: dict) -> bool:
    """Whether a loop's iterable is a `range(...)` whose items are all >= 0 (so no two items name
    one slot, as `-1` and `n - 1` would)."""
    s = defs.get(iterable)
    if not (isinstance(s, ir.Assign) and s.prim is range and not s.kwargs and 1 <= len(s.args) <= 3):
        return False

    def const(op):
        return op.value if isinstance(op, ir.Const) and type(op.value) is int else None

    if len(s.args) == 1:
        return True
    start = const(s.args[0])
    step = const(s.args[2]) if len(s.args) == 3 else 1
    if step is None or step == 0:
        return False
    if step > 0:
        return start is not None and start >= 0
    stop = const(s.args[1])
    return stop is not None and stop >= -1  # counts down to stop + 1 >= 0


def _operands(s) -> list:
    if isinstance(s, ir.Assign):
        return [v for op in list(s.args) + list(s.kwargs.values()) for v in ir.operand_vars(op)]
    return [v for op in ir.stmt_operands(s) for v in ir.operand_vars(op)] + list(ir.defined_by(s))


def _slot_access(s: ir.Assign, versions: set, counter) -> bool:
    """Whether `s` touches the array's versions only as `b[i]` (a read, a write, or the save of
    the slot a write overwrites)."""
    if s.prim in (operator.getitem, ir.SETITEM, ir.SAVE) and len(s.args) >= 2 and s.args[0] in versions \
            and s.args[1] is counter:
        rest = [v for op in s.args[2:] + list(s.kwargs.values()) for v in ir.operand_vars(op)]
        return not any(v in versions for v in rest)
    return not any(v in versions for v in _operands(s))


def _only_slots(stmts, versions: set, counter) -> bool:
    for s in stmts:
        if isinstance(s, ir.Assign):
            if not _slot_access(s, versions, counter):
                return False
        elif isinstance(s, ir.If):
            if any(v in versions for v in _operands(s)) or not (
                    _only_slots(s.body, versions, counter) and _only_slots(s.orelse, versions, counter)):
                return False
        elif isinstance(s, ir.Loop) and any(v in versions for b in [s, *ir.walk(s.body + s.cond_body)]
                                            for v in _operands(b)):
            return False
    return True


def _read_before_written(body: list, versions: set) -> bool:
    """Whether the slot may be read (its gradient left over) before the first write of the
    iteration that surely runs."""
    for s in body:
        if isinstance(s, ir.Assign) and s.prim is ir.SETITEM and s.args[0] in versions:
            return False
        if isinstance(s, ir.Assign) and s.prim is ir.SAVE:  # (the save before a write reads nothing)
            continue
        if any(v in versions for b in ir.walk([s]) for v in _operands(b)):
            return True
    return True


def find(loop: ir.Loop, active: set, defs: dict, ndims: dict, floats: dict, namer) -> dict:
    """{param: Slot} for the loop-carried arrays of `loop` whose adjoint meets one slot per
    iteration: active float vectors read and written only at the counter of a for loop over a
    non-negative range."""
    if loop.kind != "for" or loop.stop is not None or loop.target is None \
            or not _nonnegative_range(loop.iterable, defs):
        return {}
    out = {}
    for p, n in zip(loop.params, loop.nexts):
        if p not in active or ndims.get(p) != 1 or floats.get(p) != "f" or not isinstance(n, ir.Var):
            continue
        versions = {p} | {v for v in ir.defined_in(loop.body) if v.storage is p}
        if n not in versions or not _only_slots(loop.body, versions, loop.target):
            continue
        if not any(s.prim is ir.SETITEM for s in ir.walk(loop.body) if isinstance(s, ir.Assign)
                   and s.args and s.args[0] in versions):
            continue  # only read: its adjoint is accumulated slot by slot already
        var = ir.Var(namer.fresh(f"{p.name}_{loop.target.name}"), user=f"{p.display}[{loop.target.display}]")
        rest = ir.Var(namer.fresh(f"{p.name}_rest"), user=p.display)
        out[p] = Slot(p, loop.target, var, rest, n, _read_before_written(loop.body, versions))
    return out


def slot_of(s: ir.Assign, slots: dict):
    """The Slot a read or write `s` (`b[i]`, `b[i] = v`) of a slot-local array goes through."""
    if isinstance(s, ir.Assign) and s.prim in (operator.getitem, ir.SETITEM) and s.args:
        base = s.args[0]
        for slot in slots.values():
            if base is slot.param or getattr(base, "storage", None) is slot.param:
                return slot
    return None

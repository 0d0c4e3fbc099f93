"""Sink: adjoint statements that read a gradient one branch of an `if` never defines move into
the other branch.

A gradient no path has defined is zero, and simplify drops every contribution that reads one
(each contribution is linear in the cotangent it reads). When an `if` defines a gradient in one
branch only, the statements after it that read it (and those that read what they define) do
nothing on the other path; instead of materializing a zero there for them to multiply, they move
to the end of the branch that defines it, so the path that contributes nothing runs nothing.

    if c:                                 if c:
        g = 2.0 * b * s_bar                   g = 2.0 * b * s_bar
    else:                         ->          w_bar += g * sin_x
        g = 0.0                               x_bar[i] += g * w * np.cos(x)
    w_bar += g * sin_x
    x_bar[i] += g * w * np.cos(x)

A statement moves only if it commutes with every statement it moves past (tape pops and
restores of the primal values it reads included); otherwise nothing moves.
"""
from __future__ import annotations

import gast

from . import astwalk, ir
from .backward import Accum, BIf, BLoop, Mark, Raw, Reset, Restore


def _names(node, ctx) -> set:
    return {n.id for n in astwalk.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, ctx)}


class _Effects:
    """(adjoint names read, names read, names written, adjoint names defined) of an item."""

    def __init__(self, names: dict, adjoint_names: set):
        self.names = names
        self.adjoint_names = adjoint_names

    def of(self, item) -> tuple:
        from .simplify import loads, stores
        if isinstance(item, Accum):
            name = self.names[item.var]
            read = loads(item.expr)
            return read & self.adjoint_names, read | {name}, {name}, {name}
        if isinstance(item, Raw):
            read = loads(item.stmt)
            rebound, written = stores(item.stmt)
            return read & self.adjoint_names, read, rebound | written, rebound & self.adjoint_names
        if isinstance(item, Reset):
            name = self.names.get(item.var)
            return set(), set(), {name} if name else set(), set()
        if isinstance(item, Mark):  # restores the primal values its statement defined
            return set(), set(), {v.name for v in ir.defined_by(item.stmt)}, set()
        if isinstance(item, Restore):  # puts back slots of the array written
            return set(), set(), {item.stmt.args[0].name}, set()
        if isinstance(item, (BIf, BLoop)):
            adj, read, written, defines = set(), set(), set(), set()
            for inner in item.body + getattr(item, "orelse", []):
                a, r, w, d = self.of(inner)
                adj |= a
                read |= r
                written |= w
                defines |= d
            if isinstance(item, BIf):
                read |= {v.name for v in ir.operand_vars(item.cond)}
            return adj, read, written, defines
        return set(), set(), set(), set()


def split(rest: list, d_body: set, d_else: set, names: dict, adjoint_names: set):
    """For the statements `rest` after an `if` whose branches leave the gradients `d_body` and
    `d_else` defined: (to the end of the body, to the end of the else branch, the rest), or None
    when nothing moves."""
    if d_body == d_else:
        return None
    effects = _Effects(names, adjoint_names)
    on = {"body": set(d_body), "else": set(d_else)}
    dropped = {"body": set(), "else": set()}  # rule locals a dropped statement would have defined
    moved = {"body": [], "else": []}
    kept: list = []
    stay_read, stay_written = set(), set()
    for item in rest:
        adj, read, written, defines = effects.of(item)
        if isinstance(item, (Accum, Raw)):
            runs = {side: not (adj - on[side]) and not (read & dropped[side]) for side in on}
        else:
            runs = {"body": True, "else": True}
            if isinstance(item, (BIf, BLoop)) and adj & (on["body"] ^ on["else"]):
                return None  # a nested block whose work differs between the paths
        if runs["body"] == runs["else"]:
            kept.append(item)
            stay_read |= read
            stay_written |= written
            for side, defined in on.items():
                if runs[side]:
                    defined |= defines
                    if isinstance(item, Reset):
                        defined.discard(names.get(item.var))
            continue
        side = "body" if runs["body"] else "else"
        other = "else" if side == "body" else "body"
        if written & (stay_read | stay_written) or read & stay_written:
            return None  # it does not commute with a statement it would move past
        moved[side].append(item)
        on[side] |= defines
        if isinstance(item, Raw):
            dropped[other] |= written - adjoint_names
    if not moved["body"] and not moved["else"]:
        return None
    return moved["body"], moved["else"], kept

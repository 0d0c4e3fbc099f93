"""The structures of the backward code, from `reverse` to `codegen`.

`reverse` emits, per differentiated statement, `Accum` (a contribution to an adjoint) and `Raw`
(any other adjoint statement), with `Restore`/`Mark` at the points where overwritten slots and
loop values come back, `Reset` where a loop's carried adjoint starts afresh, and `BIf`/`BLoop`
for the adjoints of `if` and loops. `simplify` turns the accumulations into `Code` (one
statement each); `copies` and `tape` rewrite `Code`; `printing.format_backward` prints every
stage of it as the Python it becomes:

    x_bar += y_bar * np.cos(x)        Accum(x, <y_bar * np.cos(x)>)
    restore b_2[i] from b_2_saved     Restore(<the write b_2[i] = v>)
    if c: ...                         BIf(c, [...], [...])
"""
from __future__ import annotations

from dataclasses import dataclass

from . import ir


@dataclass
class Accum:
    """`<var>_bar += expr`. `transfer`: expr is another adjoint name that is dead afterwards (a loop
    hands its carried adjoint over), so the array changes hands instead of being shared."""

    var: ir.Var
    expr: object
    loc: ir.Loc
    transfer: bool = False


@dataclass
class Raw:
    """Any other adjoint statement (a write into an adjoint, a helper call). `transfer`: the
    statement is a copy `a = b` of adjoint names and `b` is dead afterwards, so the array changes
    hands (as for Accum)."""

    stmt: object
    loc: ir.Loc
    transfer: bool = False


@dataclass
class BIf:
    """The adjoint of an If: the same condition, each branch reversed."""

    cond: object
    body: list
    orelse: list
    loc: ir.Loc


@dataclass
class BLoop:
    """The adjoint of a Loop: its iterations in reverse order. `slots`: the loop-carried arrays
    whose adjoint meets one slot per iteration (`slots.Slot`)."""

    loop: object
    body: list
    loc: ir.Loc
    slots: tuple = ()


@dataclass
class Reset:
    """From here on `<var>_bar` holds nothing (a loop param's adjoint at the top of an iteration)."""

    var: ir.Var


@dataclass
class Restore:
    """The point of the backward pass where a write's overwritten slots are put back."""

    stmt: object


@dataclass
class Mark:
    """The point of the backward pass where the primal values `stmt` defined are restored (tape)."""

    stmt: object


@dataclass
class Code:
    """One statement of the backward code (a gast statement), after `simplify`."""

    stmt: object
    loc: ir.Loc
    restore: str | None = None  # for a restore of overwritten slots: the array's name


def counted(loop) -> bool:
    """Whether the reverse of `loop` counts iterations (else it walks the range backwards)."""
    return loop.kind == "while" or loop.stop is not None

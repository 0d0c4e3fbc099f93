"""Stacks (forward mode): a list the function itself made, grown by `xs.append(v)` and shrunk by
`xs.pop()`, is updated in place, and so is its tangent, O(1) per push or pop.

`normalize` lowers `xs.append(v)` to `xs = xs + [v]` and `v = xs.pop()` to `v = xs[-1]` and
`xs = xs[:-1]`, marked `in_place` (ssa checked that no other name holds the list, so no statement
can read the version before the update): as values, each copies the list, which makes a loop that
pushes n items O(n^2), and its tangent too (`rt.seq_concat`). A generated gradient, read back to
be differentiated again, pushes every loop value its adjoints read on such a stack. Here the
version after the update is the same list, updated in place, as Python runs it:

    xs_3 = xs_2 + lst         ->   xs_3 = rt.push(xs_2, lst)      (PUSH: xs_2.extend(lst))
    xs_5 = xs_4[:-1]          ->   xs_5 = rt.drop(xs_4)           (DROP: del xs_4[-1])

with the tangent rules `ys_dot = rt.push(xs_dot, items_dot)` and `ys_dot = rt.drop(xs_dot)`.
Only lists made in the function (a list display, or a `+` of lists) and their versions through
such updates, loops and branches qualify: a list argument is the caller's, which the lowering
leaves intact. Reverse mode keeps the value form: its adjoints run after the whole forward pass,
when the list holds its final items.
"""
from __future__ import annotations

import operator

from . import ir


def _drops_last(s: ir.Assign) -> bool:
    """`xs[:-1]` (what `xs.pop()` rebinds `xs` to)."""
    if s.prim is not operator.getitem or len(s.args) != 2:
        return False
    idx = s.args[1]
    if not (isinstance(idx, ir.Struct) and idx.kind == "slice" and len(idx.items) == 3):
        return False
    lo, hi, step = idx.items
    return (isinstance(lo, ir.Const) and lo.value is None and isinstance(hi, ir.Const) and hi.value == -1
            and isinstance(step, ir.Const) and step.value is None)


def _update(s) -> bool:
    """Whether `s` is an in-place update of a list, as `normalize` lowers it."""
    return isinstance(s, ir.Assign) and s.in_place and s.target is not None and s.args \
        and isinstance(s.args[0], ir.Var) and (s.prim is ir.CONCAT or _drops_last(s))


def _local_lists(fn: ir.Function) -> set:
    """The Vars surely holding a list the function made (the greatest set closed under the rules:
    a new list; an in-place update of one; a loop value entering and carried as one; an `if`
    output that is one on both sides)."""
    made: dict = {}
    loops: dict = {}  # loop param -> (init, next)
    outputs: dict = {}  # if output -> its results
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign) and s.target is not None:
            made[s.target] = s
        elif isinstance(s, ir.Loop):
            for p, init, nxt in zip(s.params, s.inits, s.nexts):
                loops[p] = (init, nxt)
        elif isinstance(s, ir.If):
            for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                outputs[out] = (a, b)
    local = set(made) | set(loops) | set(outputs)

    def holds(v) -> bool:
        if not isinstance(v, ir.Var) or v not in local:
            return False
        if v in made:
            s = made[v]
            if s.prim is ir.BUILD_LIST:
                return True
            if s.prim is ir.CONCAT and not s.in_place:
                return True  # `a + b`: a new list (or tuple, which is never updated in place)
            return _update(s) and s.args[0] in local
        if v in loops:
            return all(isinstance(o, ir.Var) and o in local for o in loops[v])
        return all(isinstance(o, ir.Var) and o in local for o in outputs[v])

    changed = True
    while changed:  # only removes: ends within len(local) rounds
        changed = False
        for v in list(local):
            if not holds(v):
                local.discard(v)
                changed = True
    return local


def rewrite(fn: ir.Function) -> int:
    """Make the in-place updates of the function's own lists PUSH and DROP; returns how many."""
    local = _local_lists(fn)
    count = 0
    for s in ir.walk(fn.body):
        if _update(s) and s.args[0] in local:
            if s.prim is ir.CONCAT:
                s.prim, s.callee = ir.PUSH, None
            else:
                s.prim, s.args, s.callee = ir.DROP, [s.args[0]], None
            s.rule = s.bound = None
            count += 1
    return count

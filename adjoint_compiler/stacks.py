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


def _stack_families(fn: ir.Function, local: set) -> tuple:
    """The local lists (and their versions) used only as stacks: pushed one item at a time
    (`xs + [v]`), read at the top just before a pop (`v = xs[-1]` then `xs[:-1]`), carried by loops
    and branches, and nothing else (no other read, not returned): what their adjoints read then is
    only their cotangent stacks, never the list, which holds its final items by then."""
    made = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None}
    links: dict = {}  # a version -> the versions it is one list with

    def link(a, b):
        if isinstance(a, ir.Var) and isinstance(b, ir.Var):
            links.setdefault(a, set()).add(b)
            links.setdefault(b, set()).add(a)
    bad: set = set()
    tops: set = set()  # the `v = xs[-1]` reads that pop

    def use(op, ok: bool):
        for v in ir.operand_vars(op):
            if v in local and not ok:
                bad.add(v)
    for block in _blocks(fn.body):
        for k, s in enumerate(block):
            if isinstance(s, ir.Assign):
                if _update(s) and s.args[0] in local:
                    link(s.target, s.args[0])
                    pushed = s.prim is ir.CONCAT and isinstance(s.args[1], ir.Var) and \
                        getattr(made.get(s.args[1]), "prim", None) is ir.BUILD_LIST and len(made[s.args[1]].args) == 1
                    if s.prim is ir.CONCAT and not pushed:
                        bad.add(s.args[0])
                    for op in s.args[1:]:
                        use(op, False)
                    continue
                if s.prim is operator.getitem and isinstance(s.args[0], ir.Var) and s.args[0] in local \
                        and isinstance(s.args[1], ir.Const) and s.args[1].value == -1 and k + 1 < len(block) \
                        and _update(block[k + 1]) and block[k + 1].prim is not ir.CONCAT \
                        and block[k + 1].args[0] is s.args[0]:
                    tops.add(s)
                    continue
                for op in list(s.args) + list(s.kwargs.values()):
                    use(op, False)
            elif isinstance(s, ir.Loop):
                for p, init, nxt in zip(s.params, s.inits, s.nexts):
                    link(p, init)
                    link(p, nxt)
                for op in (s.iterable, s.cond, s.stop):
                    if op is not None:
                        use(op, False)
            elif isinstance(s, ir.If):
                for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                    link(out, a)
                    link(out, b)
                use(s.cond, False)
    use(fn.result, False)
    stacks = set(local) - bad
    changed = True
    while changed:  # a family with one bad member is not a stack
        changed = False
        for v in list(stacks):
            if any(o not in stacks for o in links.get(v, ())):
                stacks.discard(v)
                changed = True
    fn_tops = {s for s in tops if s.args[0] in stacks}
    return stacks, fn_tops


def _blocks(stmts):
    """Every block (statement list), nested ones included."""
    yield stmts
    for s in stmts:
        if isinstance(s, ir.If):
            yield from _blocks(s.body)
            yield from _blocks(s.orelse)
        elif isinstance(s, ir.Loop):
            yield from _blocks(s.cond_body)
            yield from _blocks(s.body)


def rewrite(fn: ir.Function, reverse: bool = False) -> int:
    """Make the in-place updates of the function's own lists PUSH and DROP; returns how many.
    With `reverse`, only lists used as stacks alone (`_stack_families`), whose Vars are marked
    `stack` and whose reads at the top become TOP."""
    local = _local_lists(fn)
    tops: set = set()
    if reverse:
        local, tops = _stack_families(fn, local)
        for v in local:
            v.stack = True
    count = 0
    for s in ir.walk(fn.body):
        if _update(s) and s.args[0] in local:
            if s.prim is ir.CONCAT:
                s.prim, s.callee = ir.PUSH, None
            else:
                s.prim, s.args, s.callee = ir.DROP, [s.args[0]], None
            s.rule = s.bound = None
            count += 1
        elif s in tops:
            s.prim, s.args, s.callee, s.rule, s.bound = ir.TOP, [s.args[0]], None, None, None
    return count

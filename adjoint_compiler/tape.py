"""Tape: save only the loop values the backward pass reads, and restore them in reverse.

A value defined inside a loop is overwritten by the next iteration. If (and only if) the adjoint
code reads it, the forward pass pushes its old value just before redefining it, and the backward
pass pops it back right after the adjoint of the defining statement, so every adjoint sees the
value of its own iteration. Loop-carried values are pushed before the end-of-iteration move and
popped at the top of each reverse iteration.

    for i in range(n):                     for i in reversed(range_n):
        x_stack.append(x_2)                    x_2 = x_stack.pop()
        x_3 = np.sin(x_2)                      x_3_bar = x_2_bar
        x_2 = x_3                              x_2_bar = x_3_bar * np.cos(x_2)
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import gast

from . import ir, rtcall, runtime
from .backward import BIf, BLoop, Code, Mark, counted
from .effects import constant_index
from .fixpoint import fixpoint
from .simplify import assign_stmt, header_reads, loads, value_loads


@dataclass
class Plan:
    """What the forward pass runs for the tape, as statements (gast) keyed by the IR statements
    of the function being compiled (its lifetime is that compilation's)."""

    stacks: dict = field(default_factory=dict)        # saved name -> stack name
    before: dict = field(default_factory=dict)        # stmt -> pushes run before it runs
    each_iteration: dict = field(default_factory=dict)  # loop -> pushes run at the end of an iteration
    setup: dict = field(default_factory=dict)         # outermost loop -> stacks made, names set to None
    shape_only: set = field(default_factory=set)      # names the backward reads only for their shape


def _reads_in_loops(code, inside: bool = False, reads=loads) -> set:
    out: set = set()
    for c in code:
        if isinstance(c, Code) and inside:
            out |= reads(c.stmt)
        elif isinstance(c, BIf):
            if inside:
                out |= {v.name for v in ir.operand_vars(c.cond)}
            out |= _reads_in_loops(c.body, inside, reads) | _reads_in_loops(c.orelse, inside, reads)
        elif isinstance(c, BLoop):
            if inside:
                out |= header_reads(c.loop)
            out |= _reads_in_loops(c.body, True, reads)
    return out


def _same_array(param, loop) -> bool:
    """A loop param whose next value is a write-version of itself holds one array throughout."""
    nxt = loop.nexts[loop.params.index(param)]
    return isinstance(nxt, ir.Var) and nxt.storage is param


def _reversed(code) -> set:
    out = set()
    for c in code:
        if isinstance(c, BLoop):
            out.add(c.loop)
        if isinstance(c, (BIf, BLoop)):
            out |= _reversed(c.body) | _reversed(getattr(c, "orelse", []))
    return out


def _method(obj: str, method: str, *args) -> gast.Call:
    return gast.Call(func=gast.Attribute(value=_load(obj), attr=method, ctx=gast.Load()), args=list(args),
                     keywords=[])


def _pop(name: str, stack: str, loc) -> Code:
    """`name = stack.pop()`."""
    return Code(assign_stmt(name, _method(stack, "pop")), loc)


def _push(stack: str, value) -> gast.stmt:
    """`stack.append(value)`."""
    return gast.Expr(value=_method(stack, "append", value))


def _load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


CHEAP = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos, ir.SQUARE}


def _scalar_recipes(loop: ir.Loop, read: set, classes: dict, written, live=None) -> tuple:
    """Which values of one iteration the backward pass can get back without saving them:
    - a value that becomes a loop-carried value (`x_3` in `next x_2 <- x_3`) is that carried value
      at the top of the next iteration: recovered from it before it is popped;
    - a scalar computed by arithmetic or constant indexing from restored or loop-invariant values is
      recomputed at the top of the reverse iteration (cheaper than a push and a pop).
    Only params the forward pass computes (named in `live`, when given) can be restored.
    Returns ({value: param} recovered, [(value, stmt)] recomputed, params they need restored)."""
    local = ir.defined_in(loop.body) | set(loop.params) | ({loop.target} if loop.target else set())
    restorable = {p for p in loop.params if not _same_array(p, loop) and (live is None or p.name in live)}
    recovered: dict = {}
    for p, n in zip(loop.params, loop.nexts):
        if p in restorable and isinstance(n, ir.Var) and n.storage is None and n.name in read \
                and n in ir.defined_in(loop.body) and n not in recovered and n not in loop.params:
            recovered[n] = p
    candidates, ready = [], {}
    for s in loop.body:  # every cheap scalar computable from restored or invariant values, in order
        if not isinstance(s, ir.Assign):
            continue
        row = s.prim is operator.getitem and isinstance(s.args[1], ir.Var) and s.args[1] is loop.target
        if not (s.target is not None and s.target.storage is None
                and s.target not in recovered and (classes.get(s.target) == 0 or row)):
            continue
        # scalar arithmetic, constant indexing, and `xs[t]` (a view) for the loop's own counter
        cheap = s.prim in CHEAP or (s.prim is operator.getitem and (constant_index(s.args[1]) or row))
        operands = [v for op in s.args for v in ir.operand_vars(op)]
        if not cheap or s.kwargs or any(written(v) for v in operands):
            continue
        if all(v in ready or v in restorable or v is loop.target or v not in local for v in operands):
            candidates.append(s)
            ready[s.target] = operands
    wanted = {v for v in ready if v.name in read}  # the read ones and what they are computed from
    for s in reversed(candidates):
        if s.target in wanted:
            wanted.update(v for v in ready[s.target] if v in ready)
    recomputed = [(s.target, s) for s in candidates if s.target in wanted]
    needed = set(recovered.values()) | {v for t in wanted for v in ready[t]
                                        if v in restorable or v is loop.target}
    return recovered, recomputed, needed


def plan(fn: ir.Function, code: list, namer, classes: dict | None = None, kept: set | None = None,
         live: set | None = None, views: dict | None = None) -> tuple:
    """(Plan, backward code with the pops in place). `kept` holds the primal statements the
    forward pass runs (all when None): a statement that does not run pushes nothing, so nothing
    is popped for it (its values are rebound by the backward pass itself, or unread).
    `live` names the values the forward pass computes (all when None): a loop param it does not
    carry cannot stand in for the next value it would hold. `views` (mutation) names the values
    that may share memory with a written array: read again in the backward pass, they could see
    a later write, so they are never recomputed from."""
    from .mutation import same_arrays
    from .printing import assign_node

    classes = classes or {}
    arrays = same_arrays(fn.body)
    written_roots = {arrays.find(s.target) for s in ir.walk(fn.body)
                     if isinstance(s, ir.Assign) and s.prim in ir.WRITES}

    views = views or {}

    def written(v) -> bool:  # (a write's versions, and what may share memory with a written array)
        return arrays.find(v) in written_roots or v.name in views

    read = _reads_in_loops(code)
    result = Plan()
    skip: set = set()  # values recovered or recomputed instead of saved
    # A value the backward pass reads only for its shape is kept as its shape, not its array.
    result.shape_only = read - _reads_in_loops(code, reads=value_loads)
    # The recipes' own code reads values too (a carried value, a recomputation's operands): an
    # enclosing loop must restore those, by value. Grow `read` until the recipes are stable.
    reversed_loops = _reversed(code)  # only these have a reverse loop that pops per iteration
    loops = [s for s in ir.walk(fn.body) if isinstance(s, ir.Loop) and s in reversed_loops]
    recipes: dict = {}

    def grow(read: frozenset) -> frozenset:
        recipes.clear()
        recipes.update({s: _scalar_recipes(s, read, classes, written, live) for s in loops})
        extra = set()
        for recovered, recomputed, needed in recipes.values():
            extra |= {v.name for v in needed} | {p.name for p in recovered.values()}
            extra |= {v.name for _, st in recomputed for op in st.args for v in ir.operand_vars(op)}
        result.shape_only -= extra
        return read | extra

    # (it only grows, by the names of the function's values)
    read = set(fixpoint(grow, frozenset(read), len(ir.defined_in(fn.body)) + len(fn.params) + 2,
                        "the values the tape restores"))
    nested: dict = {}  # stmt -> names it defines, for statements inside a loop body
    per_iteration: dict = {}  # loop -> names restored at the top of each reverse iteration
    setup: dict = {}  # outermost loop -> (stacks, names set to None)
    top: dict = {}  # loop -> code run at the top of each reverse iteration: recoveries, recomputations

    def stack(name: str) -> str:
        if name not in result.stacks:
            result.stacks[name] = namer.fresh(f"{name}_stack")
        return result.stacks[name]

    def runs(s) -> bool:
        return kept is None or s in kept

    def walk(stmts, outer):
        for s in stmts:
            if not runs(s):
                continue
            if outer is not None:
                # a write's version is its array under the same name: writes restore their slots
                # themselves; an `if`'s output holding such a version has a name of its own
                written = isinstance(s, ir.Assign) and s.prim in ir.WRITES
                names = [v.name for v in ir.defined_by(s) if v.name in read and v not in skip and not written]
                if names:
                    nested[s] = names
                    stacks, nones = setup.setdefault(outer, ([], []))
                    nones += [n for n in names if n not in nones]
                    stacks += [stack(n) for n in names if stack(n) not in stacks]
            if isinstance(s, ir.If):
                walk(s.body, outer)
                walk(s.orelse, outer)
            elif isinstance(s, ir.Loop) and s not in reversed_loops:
                continue  # nothing in it is differentiated: its values are read after it, if at all
            elif isinstance(s, ir.Loop):
                recovered, recomputed, needed = recipes[s]
                skip.update(recovered)
                skip.update(v for v, _ in recomputed)
                result.shape_only -= {p.name for p in needed}  # their values are used again
                carried = [p.name for p in s.params if (p.name in read or p in needed)
                           and not _same_array(p, s)]
                if counted(s) and s.target is not None and (s.target.name in read or s.target in needed):
                    carried.append(s.target.name)
                if carried:
                    per_iteration[s] = carried
                    stacks, _ = setup.setdefault(outer or s, ([], []))
                    stacks += [stack(n) for n in carried if stack(n) not in stacks]
                top[s] = ([Code(assign_stmt(n.name, _load(p.name)), s.loc) for n, p in recovered.items()],
                          [Code(assign_node(st), st.loc) for _, st in recomputed])
                walk(s.body, outer or s)

    walk(fn.body, None)

    def push(name: str) -> gast.stmt:  # (a value read only for its shape is saved as its shape)
        value = rtcall.call(runtime.shape_of, _load(name)) if name in result.shape_only else _load(name)
        return _push(result.stacks[name], value)

    result.before = {s: [push(n) for n in names] for s, names in nested.items()}
    result.each_iteration = {s: [push(n) for n in names] for s, names in per_iteration.items()}
    result.setup = {s: [assign_stmt(stack, gast.List(elts=[], ctx=gast.Load())) for stack in stacks]
                    + [assign_stmt(n, gast.Constant(value=None, kind=None)) for n in nones]
                    for s, (stacks, nones) in setup.items()}

    def rewrite(items) -> list:
        out = []
        for c in items:
            if isinstance(c, Mark):
                out += [_pop(n, result.stacks[n], c.stmt.loc) for n in nested.get(c.stmt, [])]
            elif isinstance(c, BIf):
                out.append(BIf(c.cond, rewrite(c.body), rewrite(c.orelse), c.loc))
            elif isinstance(c, BLoop):
                pops = [_pop(n, result.stacks[n], c.loc) for n in per_iteration.get(c.loop, [])]
                recover, recompute = top.get(c.loop, ([], []))
                out.append(BLoop(c.loop, recover + pops + recompute + rewrite(c.body), c.loc))
            else:
                out.append(c)
        return out

    return result, rewrite(code)

"""Hoist: move loop-invariant scalar work out of loops, never running it where the program would not.

A statement at the top level of a loop body that only reads values defined before the loop (and
none of the arrays the function writes into), and is pure (arithmetic, constant indexing), computes
the same value in every iteration: it moves in front of the loop. Its adjoint then runs once, and
neither the forward nor the backward pass repeats it per iteration.

A loop may run zero times, where the moved statement would not run at all: only a statement that
cannot raise and whose adjoint is exactly zero under a zero cotangent (`effects.speculable`) moves
as it is. Any other (`p[5]`, `a / b`, `a * b`) moves under a guard that holds exactly when the loop
runs at least once (its range is not empty), so it runs when the first iteration would have run it
(a top-level statement of a `for` body runs in every iteration). A `while` loop keeps those.

    for i in range(n):            c = dt * 0.5
        c = dt * 0.5              if range_n:  p_0 = p[0]   yield p_0_2 <- p_0
        p_0 = p[0]          ->    else:                     yield p_0_2 <- None
        u = u * p_0 * c           for i in range_n:
                                      u = u * p_0_2 * c
"""
from __future__ import annotations

from . import ir
from .effects import pure, speculable
from .mutation import same_arrays


def _runs_once_at_least(loop: ir.Loop, consts: dict) -> bool:
    """Whether a `for` loop surely runs: its range is built from integer literals and is not empty."""
    rng = consts.get(loop.iterable) if isinstance(loop.iterable, ir.Var) else None
    return rng is not None and len(rng) > 0


def hoist(fn: ir.Function, classes: dict | None = None, namer=None) -> None:
    """Hoist in place. `classes` are the shape classes (shapes.infer), extended with the values
    this pass creates; without a `namer`, no guarded statement is moved."""
    classes = {} if classes is None else classes
    arrays = same_arrays(fn.body)
    written = {arrays.find(s.target) for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.prim in ir.WRITES}
    consts: dict = {}  # Var -> the range object of `range(<int literals>)`
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign) and s.prim is range and s.target is not None and not s.kwargs \
                and s.args and all(isinstance(a, ir.Const) and type(a.value) is int for a in s.args):
            consts[s.target] = range(*(a.value for a in s.args))

    guards: set = set()  # ids of the guards this pass made: they move on out of enclosing loops

    def reads_of(s) -> set:
        if isinstance(s, ir.Assign):
            return {v for op in s.args for v in ir.operand_vars(op)}
        inner = ir.defined_in(s.body)  # a guard: what its condition and body read from outside
        return {v for t in [s, *ir.walk(s.body)] for op in ir.stmt_operands(t)
                for v in ir.operand_vars(op)} - inner - set(s.outputs)

    def movable(s, inside: set) -> bool:
        if not (pure(s) or (isinstance(s, ir.If) and id(s) in guards)):
            return False
        return all(v not in inside and arrays.find(v) not in written for v in reads_of(s))

    def block(stmts) -> list:
        out = []
        for s in stmts:
            if isinstance(s, ir.If):
                s.body, s.orelse = block(s.body), block(s.orelse)
            elif isinstance(s, ir.Loop):
                s.body = block(s.body)
                out += hoist_from(s)
            out.append(s)
        return out

    def hoist_from(s: ir.Loop) -> list:
        """The statements moved out of `s`, in order (a guard `If` last); `s` keeps the others."""
        inside = ir.defined_in(s.body) | set(s.params) | {v for v in (s.target,) if v is not None}
        sure = s.kind == "for" and _runs_once_at_least(s, consts)
        guardable = s.kind == "for" and isinstance(s.iterable, ir.Var) and namer is not None
        free, guarded, kept = [], [], []
        late: set = set()  # targets of guarded statements: whatever reads them is guarded too
        for t in s.body:
            if movable(t, inside):
                defined = set(ir.defined_by(t))
                if sure or (isinstance(t, ir.Assign) and speculable(t, classes) and not reads_of(t) & late):
                    free.append(t)
                    inside -= defined
                    continue
                if guardable:  # (a guard from an inner loop moves into this loop's guard)
                    guarded.append(t)
                    late |= defined
                    inside -= defined
                    continue
            kept.append(t)
        s.body = kept
        if not guarded:
            return free
        read = {v for t in ir.walk([s]) for op in ir.stmt_operands(t) for v in ir.operand_vars(op)}
        outputs, mapping = [], {}
        for v in [v for t in guarded for v in ir.defined_by(t)]:
            if v not in read:
                continue
            out = ir.Var(namer.fresh(v.name), v.kind)
            if v in classes:
                classes[out] = classes[v]
            outputs.append(out)
            mapping[v] = out
        ir.substitute([s], mapping)
        guard = ir.If(s.iterable, guarded, [], outputs, list(mapping),
                      [ir.Const(None)] * len(outputs), s.loc)
        guards.add(id(guard))
        return free + [guard]

    fn.body = block(fn.body)


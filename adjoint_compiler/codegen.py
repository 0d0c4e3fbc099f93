"""Codegen: the IR (forward) and the simplified adjoint code (backward) as Python source.

Guarantees: the output parses; names are the IR's (deterministic); each block of statements is
preceded by `# L<line>: <the user's statement>`; unneeded primal statements are not emitted.
Two shapes: 'joint' (one function, forward then backward, for grad) and 'split' (forward returning
the result and a `pullback` closure, for vjp); and forward mode's `<f>_jvp` (`generate_jvp`:
primal and tangent statements interleaved, returning the value and its tangent).

    def f_grad(x):                         def f_vjp(x):
        # L2: y = np.sin(x)                    ...
        y = np.sin(x)                          def f_pullback(y_bar): ...
        ...                                    return y, f_pullback
"""
from __future__ import annotations

import operator
import os

import gast

from . import astwalk, ir, rtcall, runtime
from .backward import BIf, BLoop, Code, counted
from .forward import Tangent
from .printing import expression, operand, to_source
from .simplify import header_reads, loads, stores

INDENT = "    "


class Writer:
    """Prints the forward statements (and, for a gradient, the backward code). `guards`: {power
    statement: its user line}, each checked right after it: a negative Python float to a
    fractional power is complex, which compile time cannot see, and `abs`, `.real` or a comparison
    could turn it back into a real number with a wrong derivative."""

    def __init__(self, home_file: str, tape=None, recipes=None, views=frozenset(), guards=None):
        self.tape = tape
        self.guards = guards or {}
        self.recipes = recipes or {}  # stmt -> the operands whose shape its target has (simplify)
        self.views = views  # the Buffer reads that read the Buffer's array in place (peek)
        self.lines: list[str] = []
        self.home_file = home_file
        self.last_line = None
        self.line_locs: dict = {}  # generated line number (1-based) -> Loc

    def emit(self, depth: int, text: str, loc=None) -> None:
        for part in text.splitlines() or [""]:
            self.lines.append((INDENT * depth + part) if part else "")
            if loc is not None:
                self.line_locs[len(self.lines)] = loc

    def comment(self, depth: int, loc) -> None:
        key = (loc.file, loc.line)
        if key == self.last_line:
            return
        self.last_line = key
        where = f"L{loc.line}" if loc.file == self.home_file else f"{os.path.basename(loc.file)} L{loc.line}"
        self.emit(depth, f"# {where}: {loc.text}")

    def new_block(self) -> None:
        self.last_line = None

    # -- forward -----------------------------------------------------------------------------
    def forward(self, stmts, depth: int, keep: set, needed: set) -> int:
        count = 0
        for s in stmts:
            if s not in keep:
                continue
            if s in self.recipes and (self.recipes[s] is None or s.target.name == operand(s.args[0])):
                continue  # its shape is read only through another shape, or a write kept its shape
            recipe = self.recipes.get(s)
            count += 1
            self.comment(depth, s.loc)
            for push in self.tape.before.get(s, []) if self.tape else []:
                self.emit(depth, to_source(push), s.loc)
            if isinstance(s, ir.Loop):
                self.loop(s, depth, keep, needed)
                continue
            if recipe is not None:  # only the shape is needed
                helper = runtime.shape_of if len(recipe) == 1 else runtime.broadcast_shape
                self.emit(depth, f"{s.target.name} = {rtcall.name(helper)}({', '.join(map(operand, recipe))})", s.loc)
                continue
            if isinstance(s, ir.Assign):
                rhs = expression(s) if s not in self.views else \
                    f"{rtcall.name(runtime.held)}({operand(s.args[0])})[{operand(s.args[1], in_index=True)}]"
                plain = s.target is None or s.prim in ir.WRITES
                self.emit(depth, rhs if plain else f"{s.target.name} = {rhs}", s.loc)
                if s in self.guards:
                    self.emit(depth, f"{rtcall.name(runtime.refuse_complex)}(({s.target.name},), "
                                     f"{self.guards[s]!r})", s.loc)
            else:
                self.emit(depth, f"if {operand(s.cond)}:", s.loc)
                for block, results in ((s.body, s.body_results), (s.orelse, s.orelse_results)):
                    mark = len(self.lines)
                    if block is s.orelse:
                        self.emit(depth, "else:")
                    self.new_block()
                    n = self.forward(block, depth + 1, keep, needed)
                    for out, r in zip(s.outputs, results):
                        if out.name in needed:
                            self.emit(depth + 1, f"{out.name} = {operand(r)}", s.loc)
                            n += 1
                    if not n and block is s.orelse:  # (an empty `else` is left out)
                        del self.lines[mark:]
                        self.line_locs = {k: v for k, v in self.line_locs.items() if k <= mark}
                    elif not n:
                        self.emit(depth + 1, "pass")
                self.new_block()
        return count

    def loop(self, s: ir.Loop, depth: int, keep: set, needed: set) -> None:
        tape = self.tape
        for stmt in tape.setup.get(s, []) if tape else []:
            self.emit(depth, to_source(stmt), s.loc)
        carried = [(p, i, n) for p, i, n in zip(s.params, s.inits, s.nexts) if p.name in needed]
        for p, i, _ in carried:
            if p.name != operand(i):
                self.emit(depth, f"{p.name} = {operand(i)}", s.loc)
        count = counted(s) and s.trips.name in needed
        if count:
            self.emit(depth, f"{s.trips.name} = 0", s.loc)
        if s.kind == "for":
            self.emit(depth, f"for {s.target.name} in {operand(s.iterable)}:", s.loc)
        else:
            self.emit(depth, "while True:", s.loc)
            self.new_block()
            self.forward(s.cond_body, depth + 1, keep, needed)
            self.emit(depth + 1, f"if not {operand(s.cond)}:", s.loc)
            self.emit(depth + 2, "break")
        self.new_block()
        n = self.forward(s.body, depth + 1, keep, needed)
        for push in tape.each_iteration.get(s, []) if tape else []:
            self.emit(depth + 1, to_source(push), s.loc)
        moves = [(p.name, operand(nx)) for p, _, nx in carried if p.name != operand(nx)]
        if len(moves) == 1:
            self.emit(depth + 1, f"{moves[0][0]} = {moves[0][1]}", s.loc)
        elif moves:
            self.emit(depth + 1, ", ".join(m[0] for m in moves) + " = " + ", ".join(m[1] for m in moves),
                      s.loc)
        if count:
            self.emit(depth + 1, f"{s.trips.name} += 1", s.loc)
        if s.stop is not None:
            self.emit(depth + 1, f"if {operand(s.stop)}:", s.loc)
            self.emit(depth + 2, "break")
        if not (n or moves or count or s.stop is not None or s.kind == "while"):
            self.emit(depth + 1, "pass")
        self.new_block()

    # -- backward ----------------------------------------------------------------------------
    def backward(self, code, depth: int) -> None:
        for c in code:
            if isinstance(c, BLoop) and _does_nothing(c.body):
                continue  # (nothing to do per trip: a carried adjoint only passes through)
            self.comment(depth, c.loc)
            if isinstance(c, Code):
                self.emit(depth, to_source(c.stmt), c.loc)
            elif isinstance(c, BLoop):
                loop = c.loop
                if counted(loop):
                    self.emit(depth, f"for _ in range({loop.trips.name}):", c.loc)
                else:
                    self.emit(depth, f"for {loop.target.name} in reversed({operand(loop.iterable)}):", c.loc)
                self.new_block()
                self.backward(c.body, depth + 1)
                self.new_block()
            else:
                self.emit(depth, f"if {operand(c.cond)}:", c.loc)
                for block in (c.body, c.orelse):
                    if block is c.orelse:
                        if not block:
                            break
                        self.emit(depth, "else:")
                    self.new_block()
                    if block:
                        self.backward(block, depth + 1)
                    else:
                        self.emit(depth + 1, "pass")
                self.new_block()


def _does_nothing(code) -> bool:
    """Whether backward code holds no statement (at most reversed loops that hold none)."""
    return all(isinstance(c, BLoop) and _does_nothing(c.body) for c in code)


def power_statements(fn: ir.Function, arrays: frozenset) -> dict:
    """{statement: its user line} of the powers that may turn a real number complex: `x ** y` or
    `pow(x, y)` of a value not known to be an array (NumPy arrays stay real; a negative Python
    float to a fractional power is complex), with an exponent that is not an integer literal."""
    out = {}
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign) and s.prim in (operator.pow, pow) and len(s.args) == 2 and not s.complex \
                and s.target is not None and s.target.name not in arrays \
                and not (isinstance(s.args[1], ir.Const) and type(s.args[1].value) is int):
            out[s] = f"{os.path.basename(s.loc.file)} line {s.loc.line}"
    return out


def _set_on_some_paths(fn: ir.Function) -> set:
    """The names the forward pass binds only on some paths: inside a branch or a loop body (the
    outputs of an `if` and the params of a loop are bound on every path)."""
    surely = {p.name for p in fn.params}
    for s in fn.body:
        surely |= {v.name for v in (s.outputs if isinstance(s, ir.If) else s.params if isinstance(s, ir.Loop)
                                    else [s.target] if s.target is not None else [])}
    return {v.name for v in ir.defined_in(fn.body)} - surely


def code_names(code, want, reads: bool = True) -> set:
    """Names `want` finds in the backward code's statements, plus (for reads) the names `if`
    conditions and loop headers read."""
    out: set = set()
    for c in code:
        if isinstance(c, Code):
            out |= want(c.stmt)
        elif isinstance(c, (BIf, BLoop)):  # (tape marks, before the tape plan, read nothing)
            if reads:
                out |= {v.name for v in ir.operand_vars(getattr(c, "cond", None))}
                if isinstance(c, BLoop):
                    out |= header_reads(c.loop)
            out |= code_names(c.body, want, reads) | code_names(getattr(c, "orelse", []), want, reads)
    return out


def names_in(expr) -> set:
    """The names an expression (gast) reads."""
    return {n.id for n in astwalk.walk(expr) if isinstance(n, gast.Name)}


def generate(fn: ir.Function, mode: str, result_bar, backward, grads: list, keep: set, needed: set,
             header: str, tape=None, namer=None, arrays: frozenset = frozenset(), seeded: bool = False,
             recipes=None, views=frozenset(), guarded=None, aliases=None) -> tuple:
    """(source, {generated line: Loc}) of the gradient function of `fn`.

    `result_bar` is the result's adjoint name (None if the result is inactive), `grads` the returned
    gradient expressions (gast), one per wrt parameter. 'joint' is one function returning
    `(value, grads)`; 'grad' the same returning `grads` alone (with `seeded`, the result is known
    to be a scalar and its value is not computed unless the adjoint reads it); 'split' is `<f>_vjp(*args) -> (value, saved)` and
    `<f>_pullback(saved, result_bar) -> grads`. `arrays` are the names known to hold arrays (a
    power of anything else may turn complex: checked right after it); `release` then deletes them
    after their last use. `views` are the Buffer reads that read the Buffer's array in place (peek).
    `guarded`: the gradients that must come out real (default all; a complex argument's is
    complex), checked at the end where a power's value is not computed, only its adjoint.
    `aliases`: {name: the names that may hold the same array} (split mode: every name of an array
    the pullback restores in place is put back to the state the forward pass left)."""
    w = Writer(fn.loc.file, tape, recipes, views, power_statements(fn, arrays))
    w.emit(0, header)
    w.emit(0, "import numpy as np")
    w.emit(0, "from adjoint_compiler import runtime as rt")
    w.emit(0, "")
    w.emit(0, "")
    params = ", ".join(p.name for p in fn.params)
    result = operand(fn.result)
    grad_tuple = "(" + ", ".join(map(to_source, grads)) + ("," if len(grads) == 1 else "") + ")"
    restored = code_names(backward, lambda s: stores(s)[0] | stores(s)[1], reads=False)
    unchecked = ", ".join(dict.fromkeys(where for s, where in w.guards.items() if s not in keep))
    guarded = grads if guarded is None else guarded
    guarded_tuple = "(" + ", ".join(map(to_source, guarded)) + ("," if len(guarded) == 1 else "") + ")"
    guard = f"{rtcall.name(runtime.refuse_complex)}({guarded_tuple}, {unchecked!r})" if unchecked and guarded else None
    snapshot, seed = rtcall.name(runtime.snapshot), rtcall.name(runtime.seed)
    if mode != "split":
        w.emit(0, f"def {fn.name}_grad({params}):")
        maybe = sorted(_set_on_some_paths(fn) & code_names(backward, loads) - set(tape.stacks.values() if tape else ()))
        if maybe:  # Python needs no binding here, but code read back by the compiler does
            w.emit(1, " = ".join(maybe) + " = None  # (set on some paths)")
        w.forward(fn.body, 1, keep, needed)
        w.new_block()
        if result in restored and mode == "joint":  # the backward pass restores it: keep the value
            value = namer.fresh(f"{result}_value")
            w.emit(1, f"{value} = {snapshot}({result})")
            result = value
        w.emit(1, "# adjoint")
        if not seeded:  # (a seeded result's 1.0 is part of the backward code)
            call = f"{seed}({result})"
            w.emit(1, f"{result_bar} = {call}" if result_bar else call)
        w.backward(backward, 1)
        if guard:
            w.emit(1, guard)
        w.emit(1, f"return {result}, {grad_tuple}" if mode == "joint" else f"return {grad_tuple}")
    else:
        forward_names = {p.name for p in fn.params} | {v.name for v in ir.defined_in(fn.body)}
        if tape:
            forward_names |= set(tape.stacks.values())
        read = code_names(backward, loads) | {n for g in grads for n in names_in(g)}
        # arrays the pullback restores in place: kept as they end the forward pass, so that every
        # call of the pullback starts from that state
        restored_in_place = code_names(backward, lambda s: stores(s)[1], reads=False)
        restored_in_place |= {m for n in restored_in_place for m in (aliases or {}).get(n, ()) if m in read}
        in_place = sorted(restored_in_place & forward_names)
        finals = {name: namer.fresh(f"{name}_final") for name in in_place}
        # (the earlier versions of such an array, kept on a tape stack, are restored in place too)
        stacked = {tape.stacks[name]: namer.fresh(f"{tape.stacks[name]}_final") for name in in_place
                   if tape and name in tape.stacks and tape.stacks[name] in read} if tape else {}
        saved = sorted((read & forward_names) | set(finals.values()) | set(stacked.values()))
        saved_tuple = "(" + ", ".join(saved) + ("," if len(saved) == 1 else "") + ")"
        w.emit(0, f"def {fn.name}_vjp({params}):")
        # A saved value that only some paths define (a branch, a loop that may run zero times) is
        # bound first: the pullback reads it only on the paths that defined it.
        surely = {p.name for p in fn.params} | {s.target.name for s in fn.body
                                                if isinstance(s, ir.Assign) and s.target is not None}
        stacks = set(tape.stacks.values()) if tape else set()
        maybe = [n for n in saved if n not in surely and n not in finals.values() and n not in stacked.values()]
        if [n for n in maybe if n not in stacks]:
            w.emit(1, " = ".join(n for n in maybe if n not in stacks) + " = None  # (set on some paths)")
        for n in maybe:
            if n in stacks:
                w.emit(1, f"{n} = []")
        w.forward(fn.body, 1, keep, needed)
        w.new_block()
        for name, final in finals.items():
            w.emit(1, f"{final} = {snapshot}({name})")
        for stack, final in stacked.items():
            w.emit(1, f"{final} = {rtcall.name(runtime.snapshot_items)}({stack})")
        if result in restored:
            result = f"{snapshot}({result})"
        w.emit(1, f"return {result}, {saved_tuple}")
        w.emit(0, "")
        w.emit(0, "")
        w.emit(0, f"def {fn.name}_pullback(saved, {result_bar or 'result_bar'}):")
        if saved:
            w.emit(1, f"{', '.join(saved)}, = saved")
        for stack in (sorted(set(tape.stacks.values()) & set(saved)) if tape else []):
            w.emit(1, f"{stack} = list({stack})  # a pullback may run more than once")
        for name, final in finals.items():  # (a list, or a value not known to be an array: rt.refill)
            depth = 1
            if name in maybe:  # (made on some paths only: None where the forward pass did not make it)
                w.emit(1, f"if {name} is not None:")
                depth = 2
            w.emit(depth, f"{name}[...] = {final}  # the state the forward pass left" if name in arrays
                   else f"{rtcall.name(runtime.refill)}({name}, {final})  # the state the forward pass left")
        for stack, final in stacked.items():
            w.emit(1, f"{rtcall.name(runtime.refill_items)}({stack}, {final})  # the states the forward pass left")
        w.backward(backward, 1)
        if guard:
            w.emit(1, guard)
        w.emit(1, f"return {grad_tuple}")
    return "\n".join(w.lines) + "\n", w.line_locs


# -- forward mode ----------------------------------------------------------------------------------

class TangentWriter(Writer):
    """Prints the statements of `forward` (the IR with `Tangent` statements among its own)."""

    def forward(self, stmts, depth: int, keep: set, needed: set) -> int:
        count = 0
        for s in stmts:
            if isinstance(s, Tangent):
                self.comment(depth, s.loc)
                self.emit(depth, s.text, s.loc)
                count += 1
            else:
                count += super().forward([s], depth, keep, needed)
        return count


def generate_jvp(fn: ir.Function, body: list, tangent_params: list, result_dot, header: str, keep: set,
                 needed: set, arrays: frozenset = frozenset()) -> tuple:
    """(source, {generated line: Loc}) of `<f>_jvp(*primals, *tangents) -> (value, tangent)`: the
    statements `forward` made (primal and tangent interleaved) that are in `keep`, loop and branch
    values whose names are `needed`, under one `# L<n>` comment per user line, returning the
    result and its tangent. A power that may turn a real number complex is checked right after it."""
    w = TangentWriter(fn.loc.file, guards=power_statements(fn, arrays))
    w.emit(0, header)
    w.emit(0, "import numpy as np")
    w.emit(0, "from adjoint_compiler import runtime as rt")
    w.emit(0, "")
    w.emit(0, "")
    params = ", ".join([p.name for p in fn.params] + list(tangent_params))
    w.emit(0, f"def {fn.name}_jvp({params}):")
    w.forward(body, 1, keep, needed)
    w.new_block()
    result, tangent = operand(fn.result), operand(result_dot)
    w.emit(1, f"return {result}, {tangent}")
    return "\n".join(w.lines) + "\n", w.line_locs

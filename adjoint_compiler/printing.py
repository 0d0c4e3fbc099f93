"""Text forms of every stage: `gast` trees as Python source, the SSA IR one statement per line
(`format_ir`), and the backward code as the Python it becomes (`format_backward`).

    y = x * w                             # L5          x_bar += y_bar * w
    if c_gt_0:                            # L6          restore b_2[i] from b_2_saved
        ...                                             for i in reversed(range_n):
    yield y_2 <- (y, b)                                     tape mark: x_3
"""
from __future__ import annotations

import ast
import operator
import os

import gast

from . import astwalk, ir, rtcall, runtime
from .backward import Accum, BIf, BLoop, Code, Mark, Raw, Reset, Restore, counted

BINOPS = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
    operator.eq: "==", operator.ne: "!=", operator.is_: "is", operator.is_not: "is not",
}
UNARY = {operator.neg: "-", operator.pos: "+", operator.not_: "not ", operator.invert: "~"}
# primitives of the IR that are calls of runtime helpers (writes through views)
_RUNTIME_PRIMS = {ir.SHARES: runtime.shares_memory, ir.POSITIONS: runtime.positions, ir.SLOTS_AT: runtime.slots_at,
                  ir.CHECK_UPDATE: runtime.check_update,
                  ir.PUSH: runtime.push, ir.DROP: runtime.drop, ir.TOP: runtime.top}


def _fill_empty(node):
    for sub in astwalk.walk(node):
        for field in ("body", "orelse"):
            block = getattr(sub, field, None)
            if isinstance(block, list) and not block and isinstance(sub, (ast.If, ast.For, ast.While)) \
                    and field == "body":
                block.append(ast.Pass())
    return node


def to_source(node) -> str:
    """Python source of a gast (or ast) node; empty `if` bodies print as `pass`."""
    tree = gast.gast_to_ast(node) if isinstance(node, gast.AST) else node
    if isinstance(tree, (ast.stmt, ast.expr)):
        tree = ast.Module(body=[tree], type_ignores=[]) if isinstance(tree, ast.stmt) else tree
    tree = ast.fix_missing_locations(_fill_empty(tree))
    return ast.unparse(tree)


# -- operands and statements as Python text (used by codegen and the IR dump) -------------------

def operand(op, in_index: bool = False) -> str:
    if isinstance(op, ir.Var):
        return op.name
    if isinstance(op, ir.Global):
        return op.path
    if isinstance(op, ir.Const):
        if op.value is Ellipsis:
            return "..."
        text = repr(op.value)
        # a negative number is an operand: `(-0.8) ** 2`, never `-0.8 ** 2`
        return f"({text})" if isinstance(op.value, (int, float, complex)) and text.startswith("-") else text
    if isinstance(op, ir.Struct):
        if op.kind == "slice":
            lo, hi, step = (("" if isinstance(p, ir.Const) and p.value is None else operand(p))
                            for p in op.items)
            if in_index:
                return f"{lo}:{hi}" + (f":{step}" if step else "")
            return f"slice({lo or None}, {hi or None}, {step or None})"
        # (only the index's own tuple loses its parentheses: `x[(0, 1), (2, 3)]` is a fancy index of
        # two tuples, `x[0, 1, 2, 3]` another read; its slices print as `a:b`)
        items = [operand(p, in_index and isinstance(p, ir.Struct) and p.kind == "slice") for p in op.items]
        if in_index and items:
            return ", ".join(items) + ("," if len(items) == 1 else "")  # (`x[a,]` is not `x[a]`)
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise TypeError(op)


def expression(stmt: ir.Assign) -> str:
    """The right-hand side of an Assign, as the user would write it."""
    p, args = stmt.prim, stmt.args
    if p in BINOPS:
        return f"{operand(args[0])} {BINOPS[p]} {operand(args[1])}"
    if isinstance(p, ir.Prim) and p.name in ("in", "not in"):
        return f"{operand(args[1])} {p.name} {operand(args[0])}"
    if p is ir.CONCAT and stmt.extends:
        return f"{rtcall.name(runtime.extended)}({operand(args[0])}, {operand(args[1])})"
    if p in (ir.CONCAT, ir.PLUS):
        return f"{operand(args[0])} + {operand(args[1])}"
    if p is ir.SQUARE:
        return f"{operand(args[0])} * {operand(args[0])}"
    if p in (ir.REPEAT, ir.TIMES):
        return f"{operand(args[0])} * {operand(args[1])}"
    if p is ir.SETITEM:
        return f"{operand(args[0])}[{operand(args[1], in_index=True)}] = {operand(args[2])}"
    if p is ir.COPYTO:
        return f"{rtcall.name(runtime.copyto)}({operand(args[0])}, {operand(args[1])}, {operand(args[2])})"
    if p is ir.COPYTO_ITEMS:
        return f"{rtcall.name(runtime.copyto_items)}({operand(args[0])}, {operand(args[1])})"
    if p is ir.SAVE:
        return f"{rtcall.name(runtime.save_slots)}({', '.join(operand(a) for a in args)})"
    if p is ir.OWN:
        return f"{rtcall.name(runtime.own)}({operand(args[0])})"
    if isinstance(p, ir.Prim) and p in _RUNTIME_PRIMS:
        return f"{rtcall.name(_RUNTIME_PRIMS[p])}({', '.join(operand(a) for a in args)})"
    if p in UNARY:
        return f"{UNARY[p]}{operand(args[0])}"
    if p is operator.getitem:
        return f"{operand(args[0])}[{operand(args[1], in_index=True)}]"
    if p is ir.BUILD_TUPLE:
        return operand(ir.Struct("tuple", tuple(args)))
    if p is ir.BUILD_LIST:
        return "[" + ", ".join(operand(a) for a in args) + "]"
    if isinstance(p, ir.Attr):
        return f"{operand(args[0])}.{p.name}"
    if p is getattr and len(args) == 2 and isinstance(args[1], ir.Const) and _plain_field(args[1].value):
        return f"{operand(args[0])}.{args[1].value}"  # a field (`getattr(p, 'W')` for `.T`, `.shape`)
    call_args = [operand(a) for a in args]
    if isinstance(p, ir.Method):
        head, call_args = f"{operand(args[0])}.{p.name}", call_args[1:]
    else:
        head = stmt.callee.path
    call_args += [f"{k}={operand(v)}" for k, v in stmt.kwargs.items()]
    return f"{head}({', '.join(call_args)})"


def _plain_field(name) -> bool:
    """A field name that reads back as a field read (not an ndarray attribute with a rule)."""
    import keyword

    import numpy as np

    from . import registry

    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) \
        and not hasattr(np.ndarray, name) and registry.lookup(ir.Attr(name)) is None


def assign_node(stmt: ir.Assign) -> gast.stmt:
    """An Assign of the IR as a gast statement, `target = <its expression>` (for backward code
    that recomputes a primal value)."""
    return gast.parse(f"{stmt.target.name} = {expression(stmt)}").body[0]


def format_ir(fn: ir.Function, note=None) -> str:
    """The SSA IR: one statement per line, each with the user's line number; `note(stmt)` may add
    a remark after it (what an analysis found)."""
    lines = [f"def {fn.name}({', '.join(p.name for p in fn.params)}):"]

    def where(s) -> str:
        remark = note(s) if note is not None else ""
        return f"  # L{s.loc.line}" + (f"  {remark}" if remark else "")

    def block(stmts, depth):
        pad = "    " * depth
        for s in stmts:
            if isinstance(s, ir.Assign):
                text = expression(s) if s.target is None or s.prim in ir.WRITES else \
                    f"{s.target.name} = {expression(s)}"
                lines.append(f"{pad}{text}".ljust(48) + where(s))
            elif isinstance(s, ir.Loop):
                carried = ", ".join(f"{p.name} <- {operand(i)}" for p, i in zip(s.params, s.inits))
                head = (f"for {s.target.name} in {operand(s.iterable)}" if s.kind == "for" else "while")
                lines.append(f"{pad}{head} [{carried}]:".ljust(48) + where(s))
                if s.kind == "while":
                    block(s.cond_body, depth + 1)
                    lines.append(f"{pad}    if not {operand(s.cond)}: exit")
                block(s.body, depth + 1)
                if s.params:
                    lines.append(f"{pad}    next " + ", ".join(
                        f"{p.name} <- {operand(n)}" for p, n in zip(s.params, s.nexts)))
                if s.stop is not None:
                    lines.append(f"{pad}    if {operand(s.stop)}: exit")
            elif isinstance(s, ir.If):
                outs = ", ".join(v.name for v in s.outputs)
                lines.append(f"{pad}if {operand(s.cond)}:".ljust(48) + where(s))
                block(s.body, depth + 1)
                if s.outputs:
                    lines.append(f"{pad}    yield {outs} <- " + ", ".join(map(operand, s.body_results)))
                if s.orelse or s.outputs:  # (an `if` with nothing to do otherwise has no `else:`)
                    lines.append(f"{pad}else:")
                block(s.orelse, depth + 1)
                if s.outputs:
                    lines.append(f"{pad}    yield {outs} <- " + ", ".join(map(operand, s.orelse_results)))
            else:  # a statement of generated code (forward mode's tangents), printed as it is
                lines.append(f"{pad}{s.text}".ljust(48) + where(s))
    block(fn.body, 1)
    lines.append(f"    return {operand(fn.result)}")
    return "\n".join(lines)


# -- the backward code (reverse .. tape) as the Python it becomes ----------------------------------

def format_backward(items: list, names: dict | None = None, home_file: str | None = None) -> str:
    """The backward code at any stage, one statement per line, each block headed by the user's line
    (`# L<n>: <statement>`) like the generated code. Before `simplify` a contribution prints as
    `x_bar += e`; the points where overwritten slots and loop values come back as
    `restore b_2[i] from b_2_saved` and `tape mark: x_3` (popped there, if taped); a loop's carried
    adjoint starting afresh as `reset x_2_bar`. `names` maps Vars to adjoint names (reverse's)."""
    names = names or {}
    lines: list = []
    last: list = [None]

    def adjoint(var) -> str:
        return names.get(var) or f"{var.name}_bar"

    def comment(depth: int, loc) -> None:
        if loc is None or (loc.file, loc.line) == last[0]:
            return
        last[0] = (loc.file, loc.line)
        where = f"L{loc.line}" if home_file is None or loc.file == home_file else \
            f"{os.path.basename(loc.file)} L{loc.line}"
        lines.append(f"{'    ' * depth}# {where}: {loc.text}")

    def emit(depth: int, text: str) -> None:
        lines.extend(f"{'    ' * depth}{part}" for part in text.splitlines())

    def block(block_items: list, depth: int) -> None:
        if not block_items:
            emit(depth, "pass")
        for c in block_items:
            stmt = getattr(c, "stmt", None)
            comment(depth, getattr(c, "loc", None) or getattr(stmt, "loc", None))
            if isinstance(c, Accum):
                handed = "  # hands the array over" if c.transfer else ""
                emit(depth, f"{adjoint(c.var)} += {to_source(c.expr)}{handed}")
            elif isinstance(c, (Raw, Code)):
                emit(depth, to_source(c.stmt))
            elif isinstance(c, Reset):
                emit(depth, f"reset {adjoint(c.var)}")
            elif isinstance(c, Restore):
                base, saved = stmt.args[0], stmt.args[-1]
                index = operand(stmt.args[1], in_index=True) if stmt.prim is ir.SETITEM else "..."
                emit(depth, f"restore {base.name}[{index}] from {saved.name}")
            elif isinstance(c, Mark):
                values = [v.name for v in ir.defined_by(stmt)]
                if values:
                    emit(depth, f"tape mark: {', '.join(values)}")
            elif isinstance(c, BIf):
                emit(depth, f"if {operand(c.cond)}:")
                last[0] = None
                block(c.body, depth + 1)
                if c.orelse:
                    emit(depth, "else:")
                    last[0] = None
                    block(c.orelse, depth + 1)
                last[0] = None
            elif isinstance(c, BLoop):
                loop = c.loop
                emit(depth, f"for _ in range({loop.trips.name}):" if counted(loop) else
                     f"for {loop.target.name} in reversed({operand(loop.iterable)}):")
                last[0] = None
                block(c.body, depth + 1)
                last[0] = None
            else:
                raise TypeError(f"not a backward item: {type(c).__name__}")

    block(items, 0)
    return "\n".join(lines)

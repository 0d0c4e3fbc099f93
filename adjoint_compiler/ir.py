"""The typed IR shared by every pass after `ssa`.

A function is a list of statements in structured SSA form: every `Var` is assigned once, and
control flow is structured (`If` yields one value per output, like a block with parameters).
Each statement carries the `Loc` of the user's line it came from.

    y = x * w                Assign(y, operator.mul, [x, w])
    if c: y = a  else: y = b If(c, [...], [...], outputs=[y_2], body_results=[a], orelse_results=[b])
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Loc:
    """Where a statement came from: file, 1-based line, 0-based column, the raw source line."""

    file: str
    line: int
    col: int
    raw_text: str

    @property
    def text(self) -> str:
        return self.raw_text.strip()


@dataclass(eq=False)
class Var:
    """An SSA value. `kind` is 'num' (scalar or array), 'seq' (tuple/list) or 'any'."""

    name: str
    kind: str = "num"
    storage: Var | None = None  # for a version made by a write: the value first holding the array
    is_buffer: bool = False
    user: str = ""  # the name in the user's code this is a version of (for messages)
    stack: bool = False  # a list only pushed and popped (stacks.py): its adjoint is a cotangent stack
    tree: Any = None  # for a structure (dict, named tuple, dataclass, object): its kind (trees.py)
    complex: bool = False  # dtypes: the value may hold complex numbers (else it surely holds real ones)

    @property
    def display(self) -> str:
        """The user's name for this value (`x` for the SSA version `x_3`)."""
        return self.user or self.name

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class Const:
    """A literal: number, bool, None, str, Ellipsis."""

    value: Any

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(eq=False)
class Global:
    """A name read from the function's globals or closure (a module, a constant array, ...).
    `root_value` is the value of the path's first name (what the generated code must bind)."""

    path: str
    value: Any
    root_value: Any = None
    origin: tuple = ()  # (function, name) it was looked up in, or (function, ("default", param))

    def __repr__(self) -> str:
        return self.path


@dataclass(eq=False)
class Struct:
    """An index built in place: kind 'tuple' or 'slice' over operands (`x[1:n, i]`)."""

    kind: str
    items: tuple

    def __repr__(self) -> str:
        return f"{self.kind}({', '.join(map(repr, self.items))})"


Operand = Var | Const | Global | Struct


@dataclass(frozen=True)
class Prim:
    """A primitive with no Python object of its own (tuple and list displays)."""

    name: str


@dataclass(frozen=True)
class Method:
    """`receiver.name(...)`: the receiver is the first argument."""

    name: str


@dataclass(frozen=True)
class Attr:
    """`receiver.name` read as a value."""

    name: str


BUILD_TUPLE = Prim("tuple")
BUILD_LIST = Prim("list")
CONCAT = Prim("concat")  # `+` of two tuples or lists
REPEAT = Prim("repeat")  # `xs * n` of a tuple or list
# `x + y` and `x * y` of values that may be lists or tuples at run time (an item of a list, a
# function's result): joined when both are sequences, repeated when one is and the other an
# integer, else NumPy's sum or product. Their rules ask the operands at run time.
PLUS = Prim("plus")
TIMES = Prim("times")
SQUARE = Prim("square")  # `x * x`: one adjoint term, 2 * x * g
# Write nodes: each makes a new version of the array it writes into (same Python object).
SETITEM = Prim("setitem")  # b[idx] = v              args: b, idx, v, saved
COPYTO = Prim("copyto")  # copyto(b, src, where)       args: b, src, where, saved
COPYTO_ITEMS = Prim("copyto_items")  # copyto(b, <iterator>) args: b, items, saved
SAVE = Prim("save")  # the slots a write will overwrite  args: b[, idx]
OWN = Prim("own")  # a private copy of an argument the function writes into
# Writing through a view (printed as calls of the runtime; they pass no gradient):
SHARES = Prim("rt.shares_memory")  # whether a value is a view into an array   args: value, array
POSITIONS = Prim("rt.positions")  # each slot's flat position in its array     args: array
SLOTS_AT = Prim("rt.slots_at")  # the index of an array's slots at positions    args: positions, array
# `a op= e` of an array is compiled as `a = a op e`; NumPy computes into `a` itself and raises
# where the result has another shape or does not cast to `a`'s dtype (no result):  args: a, a op e
CHECK_UPDATE = Prim("rt.check_update")
WRITES = (SETITEM, COPYTO, COPYTO_ITEMS)
# A list used as a stack, updated in place (forward mode: `stacks.py` makes them of the `xs + [v]`
# and `xs[:-1]` that `xs.append(v)` and `xs.pop()` are lowered to, where only that list holds it):
PUSH = Prim("rt.push")  # xs extended by the items of a list, the same list  args: xs, items
DROP = Prim("rt.drop")  # xs without its last item, the same list            args: xs
TOP = Prim("rt.top")  # the last item of a stack, read before its DROP      args: xs
STACK_OPS = (PUSH, DROP, TOP)


@dataclass(eq=False)
class Assign:
    """`target = prim(*args, **kwargs)`; `callee` is the Global the user called (its path prints)."""

    target: Var
    prim: Any
    args: list
    kwargs: dict
    loc: Loc
    callee: Global | None = None
    rule: Any = None  # set by activity: the Rule from the registry
    bound: dict | None = None  # rule parameter -> operand
    in_place: bool = False  # `x op= e` rebinding `x` (Python may update an array in place)
    extends: bool = False  # `xs += ys` of sequences: Python extends a list by any sequence (a tuple too)
    item_of: Var | None = None  # `xs[i] op= e` on a list `xs`: Python updates the item in place
    into_copy: bool = False  # a write `ssa` checked at run time not to go through a view
    complex: bool = False  # dtypes: differentiated under the complex convention (a complex operand or result)


@dataclass(eq=False)
class If:
    """Structured conditional: each branch yields one operand per output."""

    cond: Operand
    body: list
    orelse: list
    outputs: list
    body_results: list
    orelse_results: list
    loc: Loc


@dataclass(eq=False)
class Loop:
    """Structured loop. `params` hold the loop-carried values: `inits` on entry, `nexts` at the end
    of each iteration, and their final values after the loop (a param is its own output).

    kind 'for': `target` takes each item of `iterable` (a range object).
    kind 'while': `cond_body` computes `cond` at the top of each iteration.
    `stop` (a break flag computed in the body) ends the loop after the iteration that set it.
    `trips` counts the iterations when the adjoint needs to know it."""

    kind: str
    params: list
    inits: list
    body: list
    nexts: list
    loc: Loc
    target: Var | None = None
    iterable: Operand | None = None
    cond_body: list = field(default_factory=list)
    cond: Operand | None = None
    stop: Operand | None = None
    trips: Var | None = None


@dataclass(eq=False)
class Function:
    name: str
    params: list
    body: list
    result: Operand
    loc: Loc
    defaults: dict = field(default_factory=dict)
    inlined: list = field(default_factory=list)  # the user functions inlined into it
    shared_updates: list = field(default_factory=list)  # in-place updates of shared values (ssa)
    lost_arguments: list = field(default_factory=list)  # arguments whose array ssa could not follow


def is_sequence_copy(stmt) -> bool:
    """Whether `stmt` is `xs.copy()` of a tuple or list (kind "seq"): a new list holding the items
    of `xs`, as `list(xs)` (a tuple has no `copy`: the call raises, as in Python)."""
    return isinstance(stmt, Assign) and stmt.prim == Method("copy") and len(stmt.args) == 1 \
        and not stmt.kwargs and isinstance(stmt.args[0], Var) and stmt.args[0].kind == "seq"


def operand_vars(op) -> list:
    """The Vars an operand reads."""
    if isinstance(op, Var):
        return [op]
    if isinstance(op, Struct):
        return [v for item in op.items for v in operand_vars(item)]
    return []


def stmt_reads(stmt) -> list:
    """The Vars a statement reads directly (not inside nested blocks)."""
    if isinstance(stmt, Assign):
        ops = list(stmt.args) + list(stmt.kwargs.values())
    elif isinstance(stmt, If):
        ops = [stmt.cond]
    elif isinstance(stmt, Loop):
        ops = list(stmt.inits) + [stmt.iterable] if stmt.kind == "for" else list(stmt.inits)
    else:
        raise TypeError(stmt)
    return [v for op in ops for v in operand_vars(op)]


def stmt_operands(stmt) -> list:
    """Every operand a statement mentions directly (results and loop values included)."""
    if isinstance(stmt, Assign):
        return list(stmt.args) + list(stmt.kwargs.values())
    if isinstance(stmt, If):
        return [stmt.cond] + list(stmt.body_results) + list(stmt.orelse_results)
    if isinstance(stmt, Loop):
        return [op for op in [*stmt.inits, *stmt.nexts, stmt.iterable, stmt.cond, stmt.stop] if op is not None]
    raise TypeError(stmt)


def substitute(stmts, mapping: dict) -> None:
    """Replace operands everywhere in a block (nested blocks included), in place."""
    def sub(op):
        if isinstance(op, Struct):
            return Struct(op.kind, tuple(sub(i) for i in op.items))
        return mapping.get(op, op) if isinstance(op, Var) else op

    for s in walk(stmts):
        if isinstance(s, Assign):
            s.args = [sub(a) for a in s.args]
            s.kwargs = {k: sub(v) for k, v in s.kwargs.items()}
        elif isinstance(s, If):
            s.cond = sub(s.cond)
            s.body_results = [sub(r) for r in s.body_results]
            s.orelse_results = [sub(r) for r in s.orelse_results]
        elif isinstance(s, Loop):
            s.inits = [sub(i) for i in s.inits]
            s.nexts = [sub(n) for n in s.nexts]
            s.iterable, s.cond, s.stop = sub(s.iterable), sub(s.cond), sub(s.stop)


def walk(stmts):
    """Every statement, nested blocks included, in program order."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, If):
            yield from walk(stmt.body)
            yield from walk(stmt.orelse)
        elif isinstance(stmt, Loop):
            yield from walk(stmt.cond_body)
            yield from walk(stmt.body)


def defined_by(s) -> list:
    """The Vars one statement defines (a loop: its params, target and trip count)."""
    if isinstance(s, Assign):
        return [s.target] if s.target is not None else []
    if isinstance(s, If):
        return list(s.outputs)
    if isinstance(s, Loop):
        return list(s.params) + [v for v in (s.target, s.trips) if v is not None]
    return []


def defined_in(stmts) -> set:
    """Every Var defined in a block, nested blocks included (loop params and targets too)."""
    out = set()
    for s in walk(stmts):
        if isinstance(s, Assign) and s.target is not None:
            out.add(s.target)
        elif isinstance(s, If):
            out.update(s.outputs)
        elif isinstance(s, Loop):
            out.update(s.params)
            out.update(v for v in (s.target, s.trips) if v is not None)
    return out

"""Copies: peepholes on simplify's backward code, each dropping a statement a person would not
write.

- A copy `a_bar = b_bar` goes; reads of `a_bar` read `b_bar` (`a_bar = a_bar` goes too).
- A number (`a_bar = 1.0`, the seed of `grad`, its negations and scalings) goes into its readers,
  where number-only arithmetic is folded (`x * 1.0` stays: it makes a new array the code may own).
- A negation read once, by the next statement, folds into it (`u * -2.0`, `x -= u`).
- Zeroing slots of a private adjoint whose only reader is a total over every slot becomes a sum
  around those slots (`rt.total_after_zeroing`).

Guarantee: the backward code binds the same values to the names it keeps. A copy `a = b` of
adjoint names goes only when `a` is bound nowhere else and is not kept (returned), every read of
`a` follows the copy in its own block, and `b` is not rebound before the last of them: `a` and `b`
name one object throughout, so in-place updates through either are the same. A copy back `b = a`
while both still name one object binds nothing new and goes too. A number is immutable, so the
same conditions (without `b`) let it replace its name.

    total_bar = 1.0
    total_2_bar = total_bar            ->     x_2_bar += 2.0 * x_2 * 0.5
    xx_bar = total_2_bar * 0.5
    x_2_bar += 2.0 * x_2 * xx_bar
"""
from __future__ import annotations

import operator

import gast

from . import astwalk, rtcall, runtime
from .backward import BIf, BLoop, Code, Mark
from .fixpoint import fixpoint
from .simplify import whole_index


def propagate(code: list, adjoints: set, kept: set) -> list:
    """`code` (simplify's backward code) without its removable adjoint copies."""
    names = _Names()

    def sweep(removed: int) -> int:
        """One pass over the whole code; how many passes removed something so far."""
        return removed + 1 if _block(code, adjoints, kept, _count_stores(code, names), _readers(code, names), names) \
            else removed

    # until a pass finds nothing more: each pass that finds something removes an item
    fixpoint(sweep, 0, _size(code) + 2, "copy propagation")
    return _without_empty(code)


def _without_empty(code: list) -> list:
    """`code` without the loops and branches its copies left empty: a reversed loop whose every
    statement was a copy (a carried adjoint passing through each trip) has nothing to do (as in
    `simplify.prune`, tape marks alone are nothing to do)."""
    out = []
    for c in code:
        if isinstance(c, BLoop):
            c.body = _without_empty(c.body)
            if all(isinstance(b, Mark) for b in c.body):
                continue
        elif isinstance(c, BIf):
            c.body, c.orelse = _without_empty(c.body), _without_empty(c.orelse)
            if not c.body and not c.orelse:
                continue
        out.append(c)
    return out


def _size(code: list) -> int:
    return sum(1 + _size(_nested(item)) for item in code)


class _Names:
    """The names each item loads and stores (nested blocks included), and each statement reads and
    stores, computed once per item and statement until `forget(item)` (its statements changed)."""

    def __init__(self):
        self.cache: dict = {}
        self.statements: dict = {}

    def of(self, item) -> tuple:
        key = id(item)
        if key not in self.cache:
            loads, stored = set(), set()
            for stmt in _statements(item):
                reads, stores = self.of_statement(stmt)
                loads |= reads
                stored |= stores.keys()
            self.cache[key] = (item, loads, stored)
        return self.cache[key][1:]

    def of_statement(self, stmt) -> tuple:
        """(the names `stmt` reads, {name: how many times it stores it})."""
        key = id(stmt)
        if key not in self.statements:
            reads, stored = set(), {}
            for n in astwalk.walk(stmt):
                if isinstance(n, gast.Name):
                    if isinstance(n.ctx, gast.Load):
                        reads.add(n.id)
                    elif isinstance(n.ctx, gast.Store):
                        stored[n.id] = stored.get(n.id, 0) + 1
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                reads.add(stmt.target.id)
            self.statements[key] = (stmt, reads, stored)
        return self.statements[key][1:]

    def forget(self, item) -> None:
        self.cache.pop(id(item), None)
        for stmt in _statements(item):
            self.statements.pop(id(stmt), None)


def _number(node):
    """The value of a number literal (`2.0`, `-1.0`), else None."""
    if isinstance(node, gast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    return None


def _literal(value):
    node = gast.Constant(value=abs(value), kind=None)
    return gast.UnaryOp(op=gast.USub(), operand=node) if value < 0 else node


_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv}


class _Substitute(gast.NodeTransformer):
    """Reads of `name` become the number `value`; then number-only arithmetic is folded."""

    def __init__(self, name: str, value):
        self.name, self.value = name, value

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return _literal(self.value)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        value = _number(node.operand)
        if isinstance(node.op, gast.USub) and value is not None:
            return _literal(-value)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = _number(node.left), _number(node.right)
        fold = _FOLD.get(type(node.op))
        if fold is None or left is None or right is None or (fold is operator.truediv and right == 0):
            return node
        return _literal(fold(left, right))


def _binding(item) -> tuple:
    """(name, value expression) for a Code item `name = value`, else (None, None)."""
    if isinstance(item, Code) and item.restore is None and isinstance(item.stmt, gast.Assign) \
            and len(item.stmt.targets) == 1 and isinstance(item.stmt.targets[0], gast.Name):
        return item.stmt.targets[0].id, item.stmt.value
    return None, None


def _constant(item):
    """(a, value) for a Code item `a = <number>`, else None."""
    name, value = _binding(item)
    number = None if name is None else _number(value)
    return None if number is None else (name, number)


def _copy(item):
    """(a, b) for a Code item `a = b` of two names, else None."""
    name, value = _binding(item)
    return (name, value.id) if isinstance(value, gast.Name) else None


def _nested(item) -> list:
    return item.body + getattr(item, "orelse", []) if isinstance(item, (BIf, BLoop)) else []


def _statements(item):
    if isinstance(item, Code):
        yield item.stmt
    for inner in _nested(item):
        yield from _statements(inner)


def _count_stores(code: list, names: _Names) -> dict:
    counts: dict = {}
    for item in code:
        for stmt in _statements(item):
            for name, k in names.of_statement(stmt)[1].items():
                counts[name] = counts.get(name, 0) + k
    return counts


def _readers(code: list, names: _Names) -> dict:
    """{name: how many statements read it}, nested blocks included."""
    counts: dict = {}
    for item in code:
        for stmt in _statements(item):
            for name in names.of_statement(stmt)[0]:
                counts[name] = counts.get(name, 0) + 1
    return counts


def _block(items: list, adjoints: set, kept: set, stores: dict, readers: dict, names: _Names) -> bool:
    """Remove the removable copies of `items` and of the blocks nested in it; whether any went."""
    removed, i = False, 0
    while i < len(items):
        item = items[i]
        pair = _copy(item)
        if pair and pair[0] in adjoints and pair[1] in adjoints:
            a, b = pair
            if a == b or _copied_back(items, i, a, b, names):  # (`a = a` binds nothing new either)
                del items[i]
                stores[a] -= 1
                removed = True
                continue
            if stores.get(a) == 1 and a not in kept and _renamable(items, i, a, b, readers, names):
                for later in items[i + 1:]:
                    if a in names.of(later)[0]:
                        for stmt in _statements(later):
                            _rename(stmt, a, b)
                        names.forget(later)
                readers[b] = readers.get(b, 0) + readers.pop(a, 0)
                stores[a] = 0
                del items[i]
                removed = True
                continue
        if _total_without_zeroing(items, i, adjoints, kept, stores, readers, names):
            del items[i]
            removed = True
            continue
        folded_into = _fold_negation(items, i, adjoints, kept, stores, readers)
        if folded_into is not None:
            names.forget(items[folded_into])
            del items[i]
            removed = True
            continue
        number = _constant(item)
        if number and number[0] in adjoints and stores.get(number[0]) == 1 and number[0] not in kept \
                and _renamable(items, i, number[0], None, readers, names):
            substitute = _Substitute(*number)
            for later in items[i + 1:]:
                if number[0] in names.of(later)[0]:
                    for stmt in _statements(later):
                        substitute.visit(stmt)
                    names.forget(later)
            readers.pop(number[0], None)
            stores[number[0]] = 0
            del items[i]
            removed = True
            continue
        if isinstance(item, (BIf, BLoop)):
            for inner in (item.body, getattr(item, "orelse", [])):
                if _block(inner, adjoints, kept, stores, readers, names):
                    removed = True
                    names.forget(item)
        i += 1
    return removed


def _fold_negation(items: list, i: int, adjoints: set, kept: set, stores: dict, readers: dict):
    """`t = -u` read only by the next statement, as `t * k` (k a number) or in `x += t`: that
    statement reads `u * -k` or does `x -= u` instead (one pass over an array less). Nothing runs
    between the two but tape marks (which restore primal values, never adjoints), so `u` holds the
    same value for both. Returns the index of the statement it was folded into, or None."""
    t, value = _binding(items[i])
    after = next((j for j in range(i + 1, len(items)) if not isinstance(items[j], Mark)), None)
    if not (isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub)
            and isinstance(value.operand, gast.Name) and after is not None and isinstance(items[after], Code)):
        return None
    u = value.operand.id
    if t not in adjoints or t in kept or stores.get(t) != 1 or readers.get(t) != 1:
        return None
    stmt = items[after].stmt
    if sum(1 for n in astwalk.walk(stmt) if isinstance(n, gast.Name) and n.id == t) != 1:
        return None
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) and isinstance(stmt.value, gast.Name) \
            and stmt.value.id == t:
        stmt.op, stmt.value = gast.Sub(), _load(u)
        return after
    for node in astwalk.walk(stmt):
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
            for this, other in (("left", "right"), ("right", "left")):
                side, k = getattr(node, this), _number(getattr(node, other))
                if isinstance(side, gast.Name) and side.id == t and k is not None:
                    node.left, node.right = _load(u), _literal(-k)
                    return after
    return None


def _total_without_zeroing(items, i, adjoints, kept, stores, readers, names) -> bool:
    """`a = rt.zero_slots(b, idx)` whose one reader is `rt.written_total(a, <every slot>)` (a scalar
    broadcast into the whole array, earlier in the program): the reader becomes
    `rt.total_after_zeroing(b, idx)`, which sums around the slots instead of writing zeros (b is
    private and dead after the zeroing, which is why simplify zeroed it in place)."""
    a, value = _binding(items[i])
    if not (rtcall.is_call(value, runtime.zero_slots) and isinstance(value.args[0], gast.Name)):
        return False
    b, idx = value.args[0].id, value.args[1]
    if a not in adjoints or a in kept or stores.get(a) != 1 or readers.get(a) != 1:
        return False
    for later in items[i + 1:]:
        if b in names.of(later)[0] | names.of(later)[1]:
            return False  # b is read or rebound again: not dead
        if a in names.of(later)[0]:
            for stmt in _statements(later):
                for node in astwalk.walk(stmt):
                    if rtcall.is_call(node, runtime.written_total) and isinstance(node.args[0], gast.Name) \
                            and node.args[0].id == a and whole_index(node.args[1]):
                        rtcall.retarget(node, runtime.total_after_zeroing)
                        node.args = [_load(b), idx] + node.args[2:]
                        names.forget(later)
                        return True
            return False
    return False


def _load(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _copied_back(items: list, i: int, a: str, b: str, names: _Names) -> bool:
    """Whether `items[i]` (`a = b`) follows a copy `b = a` with neither name rebound between."""
    for j in range(i - 1, -1, -1):
        if _copy(items[j]) == (b, a):
            return True
        if {a, b} & names.of(items[j])[1]:
            return False
    return False


def _renamable(items: list, i: int, a: str, b: str, readers: dict, names: _Names) -> bool:
    """Every read of `a` is in items[i + 1:], and `b` is not rebound before the last of them (a
    single statement may read `a` and then rebind `b`)."""
    positions = [j for j in range(i + 1, len(items)) if a in names.of(items[j])[0]]
    if sum(1 for j in positions for stmt in _statements(items[j]) if a in names.of_statement(stmt)[0]) \
            != readers.get(a, 0):
        return False  # read elsewhere: another block, or before the copy
    if not positions:
        return True
    last = positions[-1]
    if any(b in names.of(items[j])[1] for j in range(i + 1, last)):
        return False
    return isinstance(items[last], Code) or b not in names.of(items[last])[1]


def _rename(stmt, a: str, b: str) -> None:
    for n in astwalk.walk(stmt):
        if isinstance(n, gast.Name) and n.id == a and isinstance(n.ctx, gast.Load):
            n.id = b

"""Copies: an adjoint that only renames another (`a_bar = b_bar`) is dropped; its reads read the
other name.

Guarantee: the backward code binds the same objects to the names it keeps. A copy `a = b` of
adjoint names goes when `a` is bound nowhere else and is not kept (returned, seeded), every read
of `a` follows the copy in its own block, and `b` is not rebound before the last of them: `a` and
`b` name one object throughout, so in-place updates through either are the same. A copy back
`b = a` while both still name one object binds nothing new and goes too.

    total_2_bar = total_bar
    total_bar = total_2_bar            ->     x_2_bar += 2.0 * x_2 * total_bar
    xx_bar = total_2_bar
    x_2_bar += 2.0 * x_2 * xx_bar
"""
from __future__ import annotations

import gast

from .simplify import Code
from .template import BIf, BLoop


def propagate(code: list, adjoints: set, kept: set) -> list:
    """`code` (simplify's backward code) without its removable adjoint copies."""
    names = _Names()
    while _block(code, adjoints, kept, _count_stores(code), _readers(code), names):
        pass
    return code


class _Names:
    """The names each item loads and stores (nested blocks included), computed once per item."""

    def __init__(self):
        self.cache: dict = {}

    def of(self, item) -> tuple:
        key = id(item)
        if key not in self.cache:
            self.cache[key] = (item, _names(item, gast.Load), _names(item, gast.Store))
        return self.cache[key][1:]

    def forget(self, item) -> None:
        self.cache.pop(id(item), None)


def _copy(item):
    """(a, b) for a Code item `a = b` of two names, else None."""
    if isinstance(item, Code) and item.restore is None and isinstance(item.stmt, gast.Assign) \
            and len(item.stmt.targets) == 1 and isinstance(item.stmt.targets[0], gast.Name) \
            and isinstance(item.stmt.value, gast.Name):
        return item.stmt.targets[0].id, item.stmt.value.id
    return None


def _nested(item) -> list:
    return item.body + getattr(item, "orelse", []) if isinstance(item, (BIf, BLoop)) else []


def _statements(item):
    if isinstance(item, Code):
        yield item.stmt
    for inner in _nested(item):
        yield from _statements(inner)


def _names(item, ctx) -> set:
    """Names `item`'s statements load (an augmented target too) or store."""
    if ctx is gast.Load:
        return {name for stmt in _statements(item) for name in _reads(stmt)}
    return {n.id for stmt in _statements(item) for n in gast.walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _count_stores(code: list) -> dict:
    counts: dict = {}
    for item in code:
        for stmt in _statements(item):
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _readers(code: list) -> dict:
    """{name: how many statements read it}, nested blocks included."""
    counts: dict = {}
    for item in code:
        for stmt in _statements(item):
            for name in _reads(stmt):
                counts[name] = counts.get(name, 0) + 1
    return counts


def _reads(stmt) -> set:
    out = {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        out.add(stmt.target.id)
    return out


def _block(items: list, adjoints: set, kept: set, stores: dict, readers: dict, names: _Names) -> bool:
    """Remove the removable copies of `items` and of the blocks nested in it; whether any went."""
    removed, i = False, 0
    while i < len(items):
        item = items[i]
        pair = _copy(item)
        if pair and pair[0] in adjoints and pair[1] in adjoints:
            a, b = pair
            if _copied_back(items, i, a, b, names):
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
        if isinstance(item, (BIf, BLoop)):
            for inner in (item.body, getattr(item, "orelse", [])):
                if _block(inner, adjoints, kept, stores, readers, names):
                    removed = True
                    names.forget(item)
        i += 1
    return removed


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
    if sum(1 for j in positions for stmt in _statements(items[j]) if a in _reads(stmt)) != readers.get(a, 0):
        return False  # read elsewhere: another block, or before the copy
    if not positions:
        return True
    last = positions[-1]
    if any(b in names.of(items[j])[1] for j in range(i + 1, last)):
        return False
    return isinstance(items[last], Code) or b not in names.of(items[last])[1]


def _rename(stmt, a: str, b: str) -> None:
    for n in gast.walk(stmt):
        if isinstance(n, gast.Name) and n.id == a and isinstance(n.ctx, gast.Load):
            n.id = b

"""Release: `del` each array temporary of a generated function right after its last use.

A hand-written gradient lets an intermediate go as soon as nothing reads it; generated code names
every intermediate, so without this each one would live until the function returns. Guarantees:
only names in `arrays` are released, only where a plain top-level `name = ...` binds them (so they
are bound on every path), never parameters, and only after the last statement that reads them
(reads inside loops and branches count as reads by the whole statement). An array read later only
for its shape (`rt.unbroadcast(g, a)`) is replaced by its shape after its last value read.

    h = np.tanh(a)                 h = np.tanh(a)
    s = h * 2.0           ->       del a
    ...                            s = h * 2.0
"""
from __future__ import annotations

import textwrap

import gast

from . import rtcall, runtime
from .simplify import value_loads

INDENT = "    "


def _statements(body: list) -> list:
    """(first, end) line ranges of the top-level statements of a function body; comment lines
    at the body's depth belong to no statement (they head the next block)."""
    groups: list = []
    for i, line in enumerate(body):
        top = line.startswith(INDENT) and not line.startswith(INDENT * 2) and line.strip()
        clause = line.strip() == "else:" or line.lstrip().startswith("elif ")
        if top and not clause and not line.lstrip().startswith("#"):
            groups.append([i, i + 1])
        elif groups and (line.startswith(INDENT * 2) or (top and clause)):
            groups[-1][1] = i + 1
    return groups


def _is_shape(expr) -> bool:
    return rtcall.facts_of(expr).all_shapes


def _reads_binds(text: str) -> tuple:
    """(names read, names read for their values, names bound by a plain assignment, is a return)."""
    stmt = gast.parse(textwrap.dedent(text)).body[0]
    reads = {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    values = value_loads(stmt)
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        reads.add(stmt.target.id)
        values.add(stmt.target.id)
    binds = set()
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
            and not _is_shape(stmt.value):  # (a shape is small)
        binds.add(stmt.targets[0].id)
    return reads, values, binds, isinstance(stmt, gast.Return)


def _release_body(body: list, arrays: set) -> dict:
    """{index of the last line of a statement: lines to add after it}."""
    groups = _statements(body)
    bound_at: dict = {}
    last_read: dict = {}
    last_value: dict = {}
    returns: set = set()
    for k, (first, end) in enumerate(groups):
        reads, values, binds, is_return = _reads_binds("\n".join(body[first:end]))
        if is_return:
            returns |= reads
        for name in reads:
            last_read[name] = k
        for name in values:
            last_value[name] = k
        for name in binds & arrays:
            bound_at.setdefault(name, k)
    dels: dict = {}
    shapes: dict = {}
    for name, k in bound_at.items():
        if name in returns:
            continue
        at = max(k, last_value.get(name, k))
        if last_read.get(name, k) > at:  # only its shape is read from here on
            shapes.setdefault(groups[at][1] - 1, []).append(name)
        else:  # (after `b = a` too: then releasing `b` frees the array)
            dels.setdefault(groups[at][1] - 1, []).append(name)
    after: dict = {}
    for line, names in shapes.items():
        after[line] = [f"{INDENT}{n} = {rtcall.name(runtime.shape_of)}({n})  # only its shape is read below" for n in sorted(names)]
    for line, names in dels.items():
        after.setdefault(line, []).append(f"{INDENT}del {', '.join(sorted(names))}")
    return after


def release(lines: list, line_locs: dict, arrays: set) -> tuple:
    """(lines, line_locs) with `del` statements added to every function in `lines` (module text
    whose functions start with `def` at column 0); `line_locs` maps 1-based line numbers."""
    out: list = []
    locs: dict = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("def "):
            j = i + 1
            while j < len(lines) and (not lines[j] or lines[j].startswith(" ")):
                j += 1
            body = lines[i + 1:j]
            after = _release_body(body, arrays)
            for k, text in enumerate([line] + body):
                out.append(text)
                if i + k + 1 in line_locs:
                    locs[len(out)] = line_locs[i + k + 1]
                out += after.get(k - 1, [])
            i = j
            continue
        out.append(line)
        if i + 1 in line_locs:
            locs[len(out)] = line_locs[i + 1]
        i += 1
    return out, locs

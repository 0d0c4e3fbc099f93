"""Release: `del` each array temporary of a generated function right after its last use.

A hand-written gradient lets an intermediate go as soon as nothing reads it; generated code names
every intermediate, so without this each one would live until the function returns. It works on
the parsed statements of the generated module (each top-level statement of a function, with the
lines it spans), and adds lines after them. Guarantees:
only names in `arrays` (known arrays) or `maybe` (values that may be arrays) are released, only
where a plain top-level `name = ...` binds them (so they are bound on every path), never
parameters, only after the last statement that reads them (reads inside loops and branches count
as reads by the whole statement), and not just before the final `return` (nothing would be gained).
A known array read later only for its shape (`rt.unbroadcast(g, a)`) is replaced by its shape
after its last value read.

    h = np.tanh(a)                 h = np.tanh(a)
    s = h * 2.0           ->       del a
    ...                            s = h * 2.0
"""
from __future__ import annotations

import ast

import gast

from . import rtcall, runtime
from .printing import to_source
from .simplify import assign_stmt, load_sets

INDENT = "    "


def _is_shape(expr) -> bool:
    return rtcall.facts_of(expr, ast).all_shapes


def _reads_binds(stmt) -> tuple:
    """(names read, names read for their values, names bound by a plain assignment, is a return),
    of a statement of the generated text as `ast` parses it (a `gast` tree reads the same names)."""
    reads, values, _ = load_sets(stmt, ast)
    for node in ast.walk(stmt):  # (`n += 1` reads `n`, inside a loop or a branch too)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            reads.add(node.target.id)
            values.add(node.target.id)
    binds = set()
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and not _is_shape(stmt.value):  # (a shape is small)
        binds.add(stmt.targets[0].id)
    return reads, values, binds, isinstance(stmt, ast.Return)


def _name(name: str, ctx) -> gast.Name:
    return gast.Name(id=name, ctx=ctx, annotation=None, type_comment=None)


def _release_body(body: list, arrays: set, maybe: frozenset = frozenset()) -> dict:
    """{line of the last line of a top-level statement of a function: lines to add after it}."""
    bound_at: dict = {}
    last_read: dict = {}
    last_value: dict = {}
    returns: set = set()
    for k, stmt in enumerate(body):
        reads, values, binds, is_return = _reads_binds(stmt)
        if is_return:
            returns |= reads
        for name in reads:
            last_read[name] = k
        for name in values:
            last_value[name] = k
        for name in binds & (arrays | maybe):
            bound_at.setdefault(name, k)
    dels: dict = {}
    shapes: dict = {}
    last = len(body) - 2 if body and isinstance(body[-1], ast.Return) else len(body) - 1
    for name, k in bound_at.items():
        if name in returns:
            continue
        at = max(k, last_value.get(name, k))
        if last_read.get(name, k) > at:  # only its shape is read from here on
            if name in arrays:
                shapes.setdefault(body[at].end_lineno, []).append(name)
        elif at < last:  # (after `b = a` too: then releasing `b` frees the array; not just before the end)
            dels.setdefault(body[at].end_lineno, []).append(name)
    after: dict = {}
    for line, names in shapes.items():
        after[line] = [f"{INDENT}{to_source(assign_stmt(n, rtcall.call(runtime.shape_of, _name(n, gast.Load()))))}"
                       "  # only its shape is read below" for n in sorted(names)]
    for line, names in dels.items():
        delete = gast.Delete(targets=[_name(n, gast.Del()) for n in sorted(names)])
        after.setdefault(line, []).append(f"{INDENT}{to_source(delete)}")
    return after


def release(lines: list, line_locs: dict, arrays: set, maybe: frozenset = frozenset()) -> tuple:
    """(lines, line_locs) with `del` statements added to every function of the module `lines`
    (parsed once; its functions are at its top level); `line_locs` maps 1-based line numbers.
    `maybe` are names that may hold arrays (a dict's item, a value of unknown rank): released
    after their last read, never replaced by their shape."""
    after: dict = {}
    for node in ast.parse("\n".join(lines)).body:  # (plain `ast`: parsed to be read, not rewritten)
        if isinstance(node, ast.FunctionDef):
            after.update(_release_body(node.body, arrays, maybe))
    out: list = []
    locs: dict = {}
    for number, line in enumerate(lines, 1):
        out.append(line)
        if number in line_locs:
            locs[len(out)] = line_locs[number]
        out += after.get(number, [])
    return out, locs

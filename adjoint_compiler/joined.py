"""Products of a concatenation: the adjoint of `np.concatenate(parts, axis) @ W` per part.

When an operand of a matrix product is a concatenation along the axis the product contracts,
each part meets only its own rows of the other operand, so the cotangent of part k is the
product's cotangent times those rows (transposed), and the cotangent of the whole
concatenation, cut into pieces afterwards, is never formed:

    c = np.concatenate([h, x], axis=1)        h_bar += z_bar @ W[rt.part_span(0, 1, h, x)].T
    z = c @ W                                 W_bar += c.T @ z_bar
                                              (not c_bar = z_bar @ W.T, then h_bar = its first columns)

and alike for the right operand (`A @ np.concatenate([h, x])`: `h_bar += A[..., span].T @ z_bar`).
The part of a value that is not differentiated (data `x`) then costs nothing. `rt.part_span`
reads the parts' shapes alone, so no part is kept for the backward pass beyond its shape.

Guarantee of `split_product`: a rule is given only where the identity surely holds, where the
ranks of every part and of the other operand are known, the parts are a tuple or list display
joined by `np.concatenate` with a literal axis, or by `np.hstack` / `np.vstack`, and the joined
axis is the contracted one (the last axis of a left operand; the first of a right vector, the
next to last of a right matrix or stack). Elsewhere (an unknown rank, `axis=0` of a left matrix,
a rule the user replaced, complex values) the statement keeps its own rule, whose adjoint is the
chain rule through the concatenation. It is used only when some part needs no cotangent: when
every part does, one product and its split do the same work in fewer operations.
"""
from __future__ import annotations

import operator

import gast
import numpy as np

from . import ir, registry
from .shapes import joined_parts
from .template import Rule

PRODUCTS = (operator.matmul, np.matmul)
_JOINS = (np.concatenate, np.hstack, np.vstack)


def _axis(d: ir.Assign, rank: int, items: dict):
    """The non-negative axis the statement `d` joins its parts along, with the parts, for parts
    of ndim `rank`; (None, None) where it is not known."""
    parts, axis = joined_parts(d, items)
    if parts is None or d.prim not in _JOINS or rank < 1:
        return None, None
    if d.prim is np.hstack:
        axis = 0 if rank == 1 else 1
    elif d.prim is np.vstack:
        axis = 0 if rank >= 2 else None  # (vectors are stacked as rows: not a concatenation of them)
    if axis is None or not -rank <= axis < rank:
        return None, None
    return axis % rank, parts


def _user(prim) -> bool:
    try:
        return prim in registry.USER_KEYS
    except TypeError:
        return False


def _index(text: str, rank: int, rows: bool) -> str:
    """`W[span]` (rows of a matrix or vector), `W[..., span, :]`, `A[:, span]`, `A[..., span]`."""
    if rows:
        return text if rank <= 2 else f"..., {text}, :"
    return text if rank == 1 else (f":, {text}" if rank == 2 else f"..., {text}")


def split_product(stmt: ir.Assign, defs: dict, ndims: dict, active: set, items: dict):
    """(rule, bound) giving the product `stmt` the adjoint per part of its concatenated operand,
    or None where the identity is not known to hold (see the module's guarantee). `defs` maps
    each Var to its defining Assign, `items` each display's Var to its items."""
    if stmt.prim not in PRODUCTS or len(stmt.args) != 2 or stmt.kwargs or stmt.complex \
            or _user(stmt.prim) or stmt.rule is not registry.lookup(stmt.prim):
        return None
    for side in (0, 1):
        c, other = stmt.args[side], stmt.args[1 - side]
        d = defs.get(c) if isinstance(c, ir.Var) else None
        if d is None or d.prim not in _JOINS or _user(d.prim) or d.complex or c.complex:
            continue
        r, q = ndims.get(c), ndims.get(other) if isinstance(other, ir.Var) else None
        if r is None or q is None or q < 1 or r < 1:
            continue
        display = d.args[0]
        parts_rank = {ndims.get(p) if isinstance(p, ir.Var) else None for p in items.get(display, ())}
        if len(parts_rank) != 1:
            continue
        rank = parts_rank.pop()
        axis, parts = _axis(d, rank, items) if rank is not None else (None, None)
        if axis is None or rank != r or len(parts) < 2 or defs.get(display) is None \
                or defs[display].prim not in (ir.BUILD_LIST, ir.BUILD_TUPLE):
            continue
        if any(not isinstance(p, ir.Var) or p.kind != "num" or p.is_buffer or p.complex for p in parts):
            continue
        contracted = r - 1 if side == 0 else (0 if r == 1 else r - 2)
        if axis != contracted or all(p in active for p in parts):
            continue
        return _rule(side, len(parts), axis, q), _bound(stmt, side, parts)
    return None


def _bound(stmt: ir.Assign, side: int, parts: list) -> dict:
    bound = {"z": stmt.target, "x": stmt.args[0], "y": stmt.args[1]}
    bound.update({f"p{k}": p for k, p in enumerate(parts)})
    return bound


_RULES: dict = {}  # (side, number of parts, axis, ndim of the other operand) -> its Rule


def _rule(side: int, n: int, axis: int, q: int) -> Rule:
    key = (side, n, axis, q)
    if key not in _RULES:
        names = [f"p{k}" for k in range(n)]
        spans = [f"rt.part_span({k}, {axis}, {', '.join(names)})" for k in range(n)]
        if side == 0:  # z = concatenate(parts) @ y
            lines = [f"p{k}_bar += rt.matmul_left(z_bar, p{k}, y[{_index(spans[k], q, True)}])" for k in range(n)]
            lines.append("y_bar += rt.matmul_right(z_bar, x, y)")
        else:  # z = x @ concatenate(parts)
            lines = ["x_bar += rt.matmul_left(z_bar, x, y)"]
            lines += [f"p{k}_bar += rt.matmul_right(z_bar, x[{_index(spans[k], q, False)}], p{k})" for k in range(n)]
        body = [gast.parse(line).body[0] for line in lines]
        diff = set(names) | {"y" if side == 0 else "x"}
        what = "a matrix product of a concatenation"
        _RULES[key] = Rule(what, "z", ["x", "y", *names], {}, None, body, diff)
    return _RULES[key]

"""Mutation safety: reject writes whose effect on other names the IR could not follow.

A NumPy view shares memory with its base. The IR follows every name bound to a written array, but
not views of it, so two patterns would differentiate wrongly and are rejected (MutationError,
at the user's line):
- a write into a view of another array (`v = x[1:3]; v[0] = 1.0`);
- a view of an array used after that array was written (`v = x[1:]; x[2] = 0.0; y = v * 2`).
Buffer reads are copies, never views, so buffers are exempt.

    v = x[:2]           # L3
    x[0] = 5.0          # L4
    return np.sum(v)    # L5 -> MutationError: `v` (a view of `x`, L3) is used after the write on L4
"""
from __future__ import annotations

import operator

import numpy as np

from . import ir
from .errors import MutationError

VIEW_METHODS = {"reshape", "ravel", "transpose", "squeeze", "swapaxes", "view", "diagonal"}
VIEW_FUNCTIONS = {np.reshape, np.ravel, np.transpose, np.squeeze, np.swapaxes, np.moveaxis, np.expand_dims,
                  np.broadcast_to, np.asarray, np.diagonal, np.atleast_1d, np.atleast_2d, np.atleast_3d}


def _basic(index) -> bool:
    """Whether an index selects a view (no integer or boolean arrays in it)."""
    parts = index.items if isinstance(index, ir.Struct) and index.kind == "tuple" else (index,)
    for p in parts:
        if isinstance(p, ir.Const) and isinstance(p.value, (list, np.ndarray)):
            return False
        if isinstance(p, ir.Global) and isinstance(p.value, (list, np.ndarray)):
            return False
        if isinstance(p, ir.Var) and p.kind != "num":
            return False
    return True


def _view_base(s: ir.Assign):
    """The array `s` makes a view of, if it may make one."""
    if s.target is None or not s.args or not isinstance(s.args[0], ir.Var) or s.args[0].is_buffer:
        return None
    p = s.prim
    if (p is operator.getitem and _basic(s.args[1])) or p == ir.Attr("T") or p in VIEW_FUNCTIONS \
            or (isinstance(p, ir.Method) and p.name in VIEW_METHODS):
        return s.args[0]
    return None


class _Arrays:
    """Union-find over Vars that may hold the same array object."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, v):
        while self.parent.get(v, v) is not v:
            v = self.parent[v]
        return v

    def union(self, a, b) -> None:
        if isinstance(a, ir.Var) and isinstance(b, ir.Var):
            self.parent[self.find(a)] = self.find(b)


def check_shared_updates(fn: ir.Function, classes: dict) -> None:
    """`x += e` or `xs.append(v)` where another name holds the same array or list: NumPy and Python
    would change both names; the IR would not. Rejected unless the value is surely a scalar."""
    for value, name, other, loc in fn.shared_updates:
        if classes.get(value) != 0:
            raise MutationError(f"`{name}` is updated in place here, but `{other}` names the same array or list, "
                                f"and would change too; write `{name} = {name} + ...` (a new value) or copy "
                                f"it first (`{other} = {name}.copy()`)", loc)


def same_arrays(body) -> _Arrays:
    """Which Vars may hold one array object: a write's versions, loop params with their values,
    `if` outputs with their branch values."""
    arrays = _Arrays()
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and s.prim in ir.WRITES and s.target is not None:
            arrays.union(s.target, s.args[0])
        elif isinstance(s, ir.If):
            for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                arrays.union(out, a)
                arrays.union(out, b)
        elif isinstance(s, ir.Loop):
            for p, i, n in zip(s.params, s.inits, s.nexts):
                arrays.union(p, i)
                arrays.union(p, n)
    return arrays


def check(fn: ir.Function) -> dict:
    """Raise MutationError for unsafe writes; return {name: names of the written arrays it may
    share memory with} for views and aliases of written arrays (reading them reads those arrays)."""
    arrays = same_arrays(fn.body)
    order: list = []  # (stmt, enclosing loops)
    views: dict = {}  # view Var -> (base Var, defining stmt)
    aliases: dict = {}  # Var that may be another array, made by an `if` -> (that array, the `if`)

    def walk(stmts, loops):
        for s in stmts:
            order.append((s, loops))
            if isinstance(s, ir.Assign):
                base = _view_base(s)
                if base is not None:
                    views[s.target] = (base, s)
            elif isinstance(s, ir.If):
                walk(s.body, loops)
                walk(s.orelse, loops)
                # an output that may be an array from before the `if` (or a view of one) is an alias
                made = ir.defined_in(s.body) | ir.defined_in(s.orelse)
                for out, *ends in zip(s.outputs, s.body_results, s.orelse_results):
                    if out.storage is not None:
                        continue  # the new version of an array written in a branch
                    for end in ends:
                        if isinstance(end, ir.Var) and end in views:
                            views[out] = views[end]
                            break
                        if isinstance(end, ir.Var) and end not in made and end.kind == "num":
                            # both names may be one array: neither may be used after a write
                            aliases[out] = (end, s)
                            aliases.setdefault(end, (out, s))
                            break
            elif isinstance(s, ir.Loop):
                walk(s.cond_body, loops + (s,))
                walk(s.body, loops + (s,))

    walk(fn.body, ())
    # a loop-carried value or `if` output that may hold a view holds it as well
    members: dict = {}
    for s, _ in order:
        for v in ir.defined_by(s):
            members.setdefault(arrays.find(v), []).append(v)
    for view, (base, made) in list(views.items()):
        for other in members.get(arrays.find(view), []):
            if other is not view and other is not base and other not in views and other.storage is None:
                views[other] = (base, made)
    write_stmts = [s for s, _ in order if isinstance(s, ir.Assign) and s.prim in ir.WRITES]
    names_of_root: dict = {}
    for w in write_stmts:
        names_of_root.setdefault(arrays.find(w.args[0]), set()).add(w.args[0].name)
    shares = {}
    for s, _ in order:
        for v in ir.defined_by(s):
            root = arrays.find(v)
            if root in names_of_root and v.name not in names_of_root[root]:
                shares[v.name] = names_of_root[root]
    for p in fn.params:
        if arrays.find(p) in names_of_root:
            shares.setdefault(p.name, names_of_root[arrays.find(p)])
    if not views and not aliases:
        return shares
    # views of views share the root array
    view_root = {v: arrays.find(_first_base(v, views)) for v in views}
    position = {id(s): k for k, (s, _) in enumerate(order)}
    writes = [(k, arrays.find(s.args[0]), s, loops) for k, (s, loops) in enumerate(order)
              if isinstance(s, ir.Assign) and s.prim in ir.WRITES]
    for _, _, w, _ in writes:
        if w.args[0] in views:
            base, made = views[w.args[0]]
            raise MutationError(f"cannot differentiate a write into `{w.args[0].name}`, a view of "
                                f"`{base.name}` made on line {made.loc.line}; write into `{base.name}` "
                                "itself, or make the view a copy (`.copy()`)", w.loc)
    # Views, and both sides of an `if`-made alias, must not be used after their array is written
    # (the IR would not see the write through them). A write's own result is never stale.
    watched = {v: (base, made, view_root[v], "a view of") for v, (base, made) in views.items()}
    for v, (other, made) in aliases.items():
        watched.setdefault(v, (other, made, arrays.find(v), "possibly the same array as"))
    for k, (s, loops) in enumerate(order):
        reads = [op for op in ir.stmt_operands(s) for op in ir.operand_vars(op)] if not isinstance(s, ir.Loop) \
            else [v for op in s.inits for v in ir.operand_vars(op)]
        for v in reads:
            if v not in watched:
                continue
            other, made, root_of_v, relation = watched[v]
            start = position[id(made)]
            for w_pos, root, w, w_loops in writes:
                if w.target is not None and (w.args[0] is v or w.target is v):
                    continue
                between = start < w_pos < k
                # a loop that contains the use and the write but not the view: the write of one
                # iteration comes before the use of the next
                around = any(loop in w_loops and loop not in order[start][1] for loop in loops)
                if root == root_of_v and (between or around):
                    raise MutationError(
                        f"`{v.name}` is {relation} `{other.name}` (line {made.loc.line}) and is used "
                        f"after `{w.args[0].name}` is written on line {w.loc.line}; make it a copy "
                        f"(`{v.name} = ....copy()`) or read it again after the write", s.loc)
    for v in views:
        base = _first_base(v, views)
        if view_root[v] in names_of_root:
            shares[v.name] = shares.get(v.name, set()) | {base.name} | names_of_root[view_root[v]]
    return shares


def _first_base(v, views: dict):
    """The array a view (of a view ...) of `v` was first made from; a cycle of names that may hold
    one another (an `if` that binds `v = a` on one side and `v = a[...]` on the other) ends where
    it closes."""
    seen = {v}
    base = views[v][0]
    while base in views and base not in seen:
        seen.add(base)
        base = views[base][0]
    return base

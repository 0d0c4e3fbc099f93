"""Simplify: adjoint accumulations to plain assignments, zeros only where paths merge, dead code out.

Guarantees on the output (a list of `Code` and `BIf`):
- the first contribution to `v_bar` on every path is `v_bar = e`, later ones `v_bar = v_bar + e`;
- a contribution that reads an adjoint no path has defined (a zero) is dropped, not computed;
- a `v_bar` defined in only one branch of an `if` gets `rt.zeros_like(v)` in the other branch;
- every statement whose result is never read before the gradients are returned is removed.

    y_bar = 1.0; x_bar += y_bar * 2; x_bar += y_bar    ->   x_bar = y_bar * 2; x_bar = x_bar + y_bar
"""
from __future__ import annotations

from dataclasses import dataclass

import gast

from . import ir
from .printing import operand as operand_text
from .template import Accum, BIf, BLoop, Mark, Raw, Reset, Restore


@dataclass
class Code:
    stmt: object
    loc: ir.Loc
    restore: str | None = None  # for a restore of overwritten slots: the array's name


def _name(id_: str, store: bool = False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def assign_stmt(target: str, value) -> gast.Assign:
    return gast.Assign(targets=[_name(target, True)], value=value, type_comment=None)


_assign = assign_stmt


def rt_call(func: str, *args) -> gast.Call:
    return gast.Call(func=gast.Attribute(value=_name("rt"), attr=func, ctx=gast.Load()),
                     args=list(args), keywords=[])


def loads(node) -> set:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def stores(node) -> tuple:
    """(names rebound, names written into through a subscript or attribute)."""
    rebound, written = set(), set()
    targets = node.targets if isinstance(node, gast.Assign) else (
        [node.target] if isinstance(node, (gast.AugAssign, gast.AnnAssign)) else [])
    for t in targets:
        for n in gast.walk(t):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                rebound.add(n.id)
        root = t
        while isinstance(root, (gast.Subscript, gast.Attribute)):
            root = root.value
        if root is not t and isinstance(root, gast.Name):
            written.add(root.id)
    return rebound, written


class Resolver:
    def __init__(self, names: dict):
        self.names = names  # Var -> adjoint name
        self.adjoint_of = {n: v for v, n in names.items()}
        self.adjoint_names = set(self.adjoint_of)

    def block(self, stmts, defined: set) -> list:
        out: list = []
        for s in stmts:
            if isinstance(s, Accum):
                name = self.names[s.var]
                if (loads(s.expr) & self.adjoint_names) - defined:
                    continue
                if name in defined:
                    if s.var.kind == "num":
                        value = gast.BinOp(left=_name(name), op=gast.Add(), right=s.expr)
                    else:
                        value = rt_call("accum", _name(name), s.expr)
                else:
                    value = s.expr
                    defined.add(name)
                out.append(Code(_assign(name, value), s.loc))
            elif isinstance(s, Raw):
                if (loads(s.stmt) & self.adjoint_names) - defined:
                    continue
                defined |= stores(s.stmt)[0] & self.adjoint_names
                out.append(Code(s.stmt, s.loc))
            elif isinstance(s, Reset):
                defined.discard(self.names[s.var])
            elif isinstance(s, Mark):
                out.append(s)
            elif isinstance(s, Restore):
                out.append(restore_code(s.stmt))
            elif isinstance(s, BLoop):
                out += self.loop(s, defined)
            elif isinstance(s, BIf):
                d_body, d_else = set(defined), set(defined)
                body, orelse = self.block(s.body, d_body), self.block(s.orelse, d_else)
                for name in sorted(d_body - d_else):
                    orelse.append(self.zeros(name, s.loc))
                for name in sorted(d_else - d_body):
                    body.append(self.zeros(name, s.loc))
                defined |= d_body | d_else
                out.append(BIf(s.cond, body, orelse, s.loc))
        return out

    def loop(self, s: BLoop, defined: set) -> list:
        """Adjoints accumulated across iterations start from zero before the loop; adjoints of
        values local to one iteration start undefined in each; carried adjoints are defined at the
        end of every iteration."""
        loop = s.loop
        carried = [self.names[p] for p in loop.params if p in self.names]
        local = {self.names[v] for v in ir.defined_in(loop.body) | {loop.target} if v in self.names}
        before = []
        for name in carried + sorted(self.accumulated(s.body) - local - set(carried)):
            if name not in defined:
                before.append(self.zeros(name, s.loc))
                defined.add(name)
        inside = defined - local
        body = self.block(s.body, inside)
        body += [self.zeros(name, s.loc) for name in carried if name not in inside]
        return before + [BLoop(loop, body, s.loc)]

    def accumulated(self, stmts) -> set:
        """Adjoint names that `stmts` add to or write into."""
        out = set()
        for s in stmts:
            if isinstance(s, Accum):
                out.add(self.names[s.var])
            elif isinstance(s, Raw):
                out |= set().union(*stores(s.stmt)) & self.adjoint_names
            elif isinstance(s, (BIf, BLoop)):
                out |= self.accumulated(s.body) | self.accumulated(getattr(s, "orelse", []))
        return out

    def zeros(self, name: str, loc) -> Code:
        var = self.adjoint_of[name]
        return Code(_assign(name, rt_call("zeros_like", _name(var.name))), loc)


def counted(loop) -> bool:
    """Whether the reverse of `loop` counts iterations (else it walks the range backwards)."""
    return loop.kind == "while" or loop.stop is not None


def header_reads(loop) -> set:
    return {loop.trips.name} if counted(loop) else {v.name for v in ir.operand_vars(loop.iterable)}


def restore_code(write: ir.Assign) -> Code:
    """`b[idx] = b_saved`: the array holds again what it held before the write."""
    base, saved = write.args[0], write.args[-1]
    index = operand_text(write.args[1], in_index=True) if write.prim is ir.SETITEM else "..."
    stmt = gast.parse(f"{base.name}[{index}] = {saved.name}").body[0]
    return Code(stmt, write.loc, restore=base.name)


SHAPE_ONLY = {"getitem_adjoint": 1, "unbroadcast": 1, "expand_reduced": 1, "zeros_like": 0}


def value_loads(node) -> set:
    """Names whose values (not just shapes) a statement reads."""
    skip = set()
    for n in gast.walk(node):
        if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name)
                and n.func.value.id == "rt" and n.func.attr in SHAPE_ONLY
                and len(n.args) > SHAPE_ONLY[n.func.attr] and isinstance(n.args[SHAPE_ONLY[n.func.attr]], gast.Name)):
            skip.add(id(n.args[SHAPE_ONLY[n.func.attr]]))
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            and id(n) not in skip}


def prune_restores(stmts, needed: set, views: dict) -> tuple:
    """Keep a restore of overwritten slots only if a later adjoint reads the array's values (itself
    or through a view, `views` mapping view names to array names).
    Returns (kept, arrays whose values are read on entry)."""
    kept: list = []
    needed = set(needed)
    for s in reversed(stmts):
        if isinstance(s, Code) and s.restore:
            if s.restore in needed:
                kept.append(s)
        elif isinstance(s, Code):
            read = value_loads(s.stmt)
            needed |= read | {views[n] for n in read if n in views}
            kept.append(s)
        elif isinstance(s, BIf):
            body, n_body = prune_restores(s.body, needed, views)
            orelse, n_else = prune_restores(s.orelse, needed, views)
            needed = n_body | n_else
            kept.append(BIf(s.cond, body, orelse, s.loc))
        elif isinstance(s, BLoop):
            out = set(needed)
            while True:
                body, n_in = prune_restores(s.body, out, views)
                if n_in <= out:
                    break
                out |= n_in
            needed = out
            kept.append(BLoop(s.loop, body, s.loc))
        else:
            kept.append(s)
    kept.reverse()
    return kept, needed


def prune(stmts, live: set) -> tuple:
    """Drop statements whose results are not live; return (kept, names live on entry)."""
    kept: list = []
    live = set(live)
    for s in reversed(stmts):
        if isinstance(s, Mark):
            kept.append(s)
        elif isinstance(s, BLoop):
            out = set(live)
            while True:
                body, live_in = prune(s.body, out)
                if live | live_in <= out:
                    break
                out |= live_in
            if not any(not isinstance(b, Mark) for b in body):
                continue
            live = live | live_in | header_reads(s.loop)
            kept.append(BLoop(s.loop, body, s.loc))
        elif isinstance(s, Code):
            rebound, written = stores(s.stmt)
            if (rebound or written) and not ((rebound | written) & live):
                continue
            live = (live - rebound) | loads(s.stmt)
            kept.append(s)
        else:
            body, live_b = prune(s.body, live)
            orelse, live_o = prune(s.orelse, live)
            if not body and not orelse:
                continue
            live = live_b | live_o | {v.name for v in ir.operand_vars(s.cond)}
            kept.append(BIf(s.cond, body, orelse, s.loc))
    kept.reverse()
    return kept, live


def simplify(backward: list, adjoint_names: dict, seeded: set, returned: set, views=None) -> tuple:
    """(backward code, primal and adjoint names it reads on entry).

    `adjoint_names` maps Var -> adjoint name; `seeded` are the adjoints defined before the backward
    pass (the result's); `returned` the adjoint names the gradient function returns, and `defined`
    tells which of those exist at the end."""
    resolver = Resolver(adjoint_names)
    defined = set(seeded)
    code = resolver.block(backward, defined)
    code, _ = prune_restores(code, set(), views or {})
    code, live_in = prune(code, returned & defined)
    return code, live_in, defined


def forward_needed(fn: ir.Function, needed: set) -> set:
    """The statements of the primal needed to produce the Var names in `needed` (and side effects);
    grows `needed` with everything those statements read."""
    keep: set = set()

    def block(stmts):
        for s in reversed(stmts):
            if isinstance(s, ir.Assign):
                if s.target is None or s.target.name in needed:
                    keep.add(id(s))
                    needed.update(v.name for v in ir.stmt_reads(s))
            elif isinstance(s, ir.If):
                used = [(o, a, b) for o, a, b in zip(s.outputs, s.body_results, s.orelse_results)
                        if o.name in needed]
                for _, a, b in used:
                    needed.update(v.name for v in ir.operand_vars(a) + ir.operand_vars(b))
                before = len(keep)
                block(s.body)
                block(s.orelse)
                if used or len(keep) > before:
                    keep.add(id(s))
                    needed.update(v.name for v in ir.operand_vars(s.cond))
            elif isinstance(s, ir.Loop):
                loop(s)

    def loop(s: ir.Loop):
        while True:
            count = (len(needed), len(keep))
            for p, i, n in zip(s.params, s.inits, s.nexts):
                if p.name in needed:
                    needed.update(v.name for v in ir.operand_vars(i) + ir.operand_vars(n))
            block(s.body)
            if any(id(b) in keep for b in s.body) or any(p.name in needed for p in s.params):
                keep.add(id(s))
                for op in (s.iterable, s.cond, s.stop):
                    needed.update(v.name for v in ir.operand_vars(op))
                block(s.cond_body)
            if (len(needed), len(keep)) == count:
                return

    block(fn.body)
    return keep

"""Reverse: one adjoint block per active statement, in reverse order, from the rule table.

Guarantee: the result is a list of `Accum` / `Raw` / `BIf` in backward order, each tagged with the
Loc of the statement it differentiates; nothing is produced for inactive statements.

    y = np.sin(x)         ->  x_bar += y_bar * np.cos(x)
    if c: yield r <- a    ->  if c: a_bar += r_bar
"""
from __future__ import annotations

import gast

from . import ir
from .shapes import broadcast_free
from .simplify import assign_stmt
from .template import Accum, BIf, BLoop, Mark, Raw, Reset, Restore, instantiate


class Reverser:
    def __init__(self, active: set, namer, ranks: dict | None = None, ndims: dict | None = None):
        self.active = active
        self.ranks = ranks or {}
        self.ndims = ndims or {}
        self.namer = namer
        self.names: dict = {}
        self.in_loop = 0

    def adjoint_name(self, var: ir.Var) -> str:
        if var not in self.names:
            self.names[var] = self.namer.adjoint(var.name)
        return self.names[var]

    def block(self, stmts) -> list:
        out: list = []
        for s in reversed(stmts):
            if isinstance(s, ir.Assign):
                if s.target is not None and s.target in self.active and s.rule.body is not None:
                    out += instantiate(s.rule, s, self.active, self.adjoint_name, self.namer.fresh,
                                       lambda stmt, op: broadcast_free(stmt, op, self.ranks),
                                       lambda op: self.ranks.get(op) == 0, self.ndims)
                if s.prim in ir.WRITES:
                    out.append(Restore(s))
            elif isinstance(s, ir.If):
                body = self.branch(s, s.body, s.body_results)
                orelse = self.branch(s, s.orelse, s.orelse_results)
                if body or orelse:
                    out.append(BIf(s.cond, body, orelse, s.loc))
            elif isinstance(s, ir.Loop):
                out += self.loop(s)
            if self.in_loop:
                out.append(Mark(s))
        return out

    def loop(self, s: ir.Loop) -> list:
        """Each reverse iteration hands the carried adjoints to the values that produced them
        (`x_3_bar = x_2_bar`), starts the carried adjoints afresh, then reverses the body."""
        carried = [(p, n, i) for p, n, i in zip(s.params, s.nexts, s.inits) if p in self.active]
        body: list = []
        snapshot = any(isinstance(n, ir.Var) and n in s.params for _, n, _ in carried)
        handoff = []
        for p, n, _ in carried:
            if not (isinstance(n, ir.Var) and n in self.active):
                continue
            if snapshot:
                held = self.namer.fresh(self.adjoint_name(p) + "_in")
                body.append(Raw(assign_stmt(held, ir_name(self.adjoint_name(p))), s.loc, transfer=True))
                handoff.append(Accum(n, ir_name(held), s.loc, transfer=True))
            else:
                body.append(Accum(n, ir_name(self.adjoint_name(p)), s.loc, transfer=True))
        body += [Reset(p) for p, _, _ in carried] + handoff
        self.in_loop += 1
        body += self.block(s.body)
        self.in_loop -= 1
        out = [BLoop(s, body, s.loc)]
        out += [Accum(i, ir_name(self.adjoint_name(p)), s.loc)
                for p, _, i in carried if isinstance(i, ir.Var) and i in self.active]
        return out

    def branch(self, s: ir.If, stmts, results) -> list:
        seeds = [Accum(r, ir_name(self.adjoint_name(o)), s.loc)
                 for o, r in zip(s.outputs, results)
                 if o in self.active and isinstance(r, ir.Var) and r in self.active]
        return seeds + self.block(stmts)


def ir_name(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def reverse(fn: ir.Function, active: set, namer, wrt: list, ranks: dict | None = None,
            ndims: dict | None = None) -> tuple:
    """(backward statements, {Var: adjoint name}) for `fn`. The `wrt` parameters and the result
    are named first, so they read `x_bar`, `y_bar` whatever the function's temporaries are called."""
    rev = Reverser(active, namer, ranks, ndims)
    for v in wrt + ir.operand_vars(fn.result):
        if v in active:
            rev.adjoint_name(v)
    return rev.block(fn.body), rev.names

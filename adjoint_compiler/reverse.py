"""Reverse: one adjoint block per active statement, in reverse order, from the rule table.

Guarantee: the result is a list of `Accum` / `Raw` / `BIf` in backward order, each tagged with the
Loc of the statement it differentiates; nothing is produced for inactive statements.

    y = np.sin(x)         ->  x_bar += y_bar * np.cos(x)
    if c: yield r <- a    ->  if c: a_bar += r_bar
"""
from __future__ import annotations

import dataclasses

import gast

from . import ir, joined, runtime, slots
from .backward import Accum, BIf, BLoop, Mark, Raw, Reset, Restore
from .errors import InternalError
from .shapes import broadcast_free
from .simplify import assign_stmt, rt_call
from .template import instantiate


class Reverser:
    def __init__(self, active: set, namer, ranks: dict | None = None, ndims: dict | None = None,
                 defs: dict | None = None, floats: dict | None = None):
        self.active = active
        self.ranks = ranks or {}
        self.ndims = ndims or {}
        self.namer = namer
        self.names: dict = {}
        self.in_loop = 0
        self.defs = defs or {}  # Var -> the Assign defining it
        # a tuple or list display's Var -> its items
        self.items = {v: d.args for v, d in self.defs.items() if d.prim in (ir.BUILD_LIST, ir.BUILD_TUPLE)}
        self.floats = floats or {}
        self.slots: dict = {}  # loop param -> slots.Slot, for the loops being reversed
        self.zeros: dict = {}  # adjoint name -> the expression of its zero, where not rt.zeros_like

    def adjoint_name(self, var: ir.Var) -> str:
        if var not in self.names:
            self.names[var] = self.namer.adjoint(var.name)
            if var.stack:  # a cotangent stack (stacks.py): None is the empty one, all zero
                self.zeros[self.names[var]] = gast.Constant(value=None, kind=None)
        return self.names[var]

    def block(self, stmts) -> list:
        out: list = []
        for s in reversed(stmts):
            if isinstance(s, ir.Assign):
                slot = slots.slot_of(s, self.slots)
                if slot is not None:
                    out += self.slot_adjoint(s, slot)
                elif s.target is not None and s.target in self.active and s.rule.body is not None:
                    split = joined.split_product(s, self.defs, self.ndims, self.active, self.items)
                    # (the product of a concatenation: a cotangent per part, `joined`)
                    bound = s if split is None else dataclasses.replace(s, rule=split[0], bound=split[1])
                    made = instantiate(bound.rule, bound, self.active, self.adjoint_name, self.namer.fresh,
                                       lambda stmt, op: broadcast_free(stmt, op, self.ranks),
                                       lambda op: self.ranks.get(op) == 0, self.ndims)
                    out += [self.projected(a, True) for a in made] if s.complex else made
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

    def projected(self, a, complex_source: bool):
        """A contribution from a complex adjoint (`complex_source`) into a value that is surely
        real keeps its real part: v real, z = v * c gives v_bar += np.real(z_bar * c)."""
        if not complex_source:
            return a
        if isinstance(a, Raw):
            raise InternalError(f"a rule for complex operands wrote `{a.stmt}` (only `x_bar += ...` can be projected)")
        if not isinstance(a, Accum) or a.var.complex:
            return a
        real = gast.Call(func=gast.Attribute(value=ir_name("np"), attr="real", ctx=gast.Load()), args=[a.expr],
                         keywords=[])
        return Accum(a.var, real, a.loc)

    def slot_adjoint(self, s: ir.Assign, slot) -> list:
        """`y = b[i]` adds `y_bar` to the slot's gradient; `b[i] = v` hands it to `v` and starts it
        afresh (the array adjoint itself is not touched)."""
        bar = ir_name(self.adjoint_name(slot.var))
        if s.prim is ir.SETITEM:
            v = s.args[2]
            out = []
            if isinstance(v, ir.Var) and v in self.active:
                out.append(Accum(v, bar if self.ndims.get(v) == 0 else rt_call(runtime.unbroadcast, bar, ir_name(v.name)),
                                 s.loc))
            return out + [Reset(slot.var)]
        if s.target in self.active:
            return [Accum(slot.var, ir_name(self.adjoint_name(s.target)), s.loc)]
        return []

    def slot_ends(self, s: ir.Loop, slot) -> tuple:
        """(statements at the top of a reversed iteration, statements at its end) for a
        slot-local array: the slot's gradient is taken out of the array adjoint and the rest put
        back (only where the array adjoint is defined), and what is left of the slot flows on."""
        p, i = slot.param, ir_name(slot.counter.name)
        inside = ir_name(self.adjoint_name(slot.inside))
        top = [Accum(slot.inside, ir_name(self.adjoint_name(p)), s.loc, transfer=True), Reset(p),
               Accum(slot.var, rt_call(runtime.written_adjoint, inside, i), s.loc),
               Accum(slot.rest, rt_call(runtime.overwritten_adjoint, ir_name(self.adjoint_name(slot.inside)), i), s.loc)]
        end = [Accum(p, ir_name(self.adjoint_name(slot.rest)), s.loc, transfer=True)]
        if slot.write_back:
            end.append(Accum(p, rt_call(runtime.getitem_adjoint, ir_name(self.adjoint_name(slot.var)), ir_name(p.name), i),
                             s.loc))
        self.zeros[self.adjoint_name(slot.var)] = gast.Constant(value=0.0, kind=None)  # a scalar slot
        return top, end

    def loop(self, s: ir.Loop) -> list:
        """Each reverse iteration hands the carried adjoints to the values that produced them
        (`x_3_bar = x_2_bar`), starts the carried adjoints afresh, then reverses the body."""
        found = slots.find(s, self.active, self.defs, self.ndims, self.floats, self.namer)
        self.slots.update(found)
        carried = [(p, n, i) for p, n, i in zip(s.params, s.nexts, s.inits) if p in self.active and p not in found]
        body: list = []
        ends: list = []
        for slot in found.values():
            top, end = self.slot_ends(s, slot)
            body += top
            ends += end
        snapshot = any(isinstance(n, ir.Var) and n in s.params for _, n, _ in carried)
        handoff = []
        for p, n, _ in carried:
            if not (isinstance(n, ir.Var) and n in self.active):
                continue
            if snapshot:
                held = self.namer.fresh(self.adjoint_name(p) + "_in")
                body.append(Raw(assign_stmt(held, ir_name(self.adjoint_name(p))), s.loc, transfer=True))
                handoff.append(self.projected(Accum(n, ir_name(held), s.loc, transfer=True), p.complex))
            else:
                body.append(self.projected(Accum(n, ir_name(self.adjoint_name(p)), s.loc, transfer=True), p.complex))
        body += [Reset(p) for p, _, _ in carried] + handoff
        self.in_loop += 1
        body += self.block(s.body) + ends
        self.in_loop -= 1
        out = [BLoop(s, body, s.loc, tuple(found.values()))]
        out += [self.projected(Accum(i, ir_name(self.adjoint_name(p)), s.loc), p.complex)
                for p, _, i in carried + [(p, None, i) for p, i in zip(s.params, s.inits) if p in found]
                if isinstance(i, ir.Var) and i in self.active]
        return out

    def branch(self, s: ir.If, stmts, results) -> list:
        seeds = [self.projected(Accum(r, ir_name(self.adjoint_name(o)), s.loc), o.complex)
                 for o, r in zip(s.outputs, results)
                 if o in self.active and isinstance(r, ir.Var) and r in self.active]
        return seeds + self.block(stmts)


def ir_name(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def reverse(fn: ir.Function, active: set, namer, wrt: list, ranks: dict | None = None,
            ndims: dict | None = None, floats: dict | None = None, zeros: dict | None = None) -> tuple:
    """(backward statements, {Var: adjoint name}) for `fn`. The `wrt` parameters and the result
    are named first, so they read `x_bar`, `y_bar` whatever the function's temporaries are called.
    `zeros` receives the zero of each adjoint name `rt.zeros_like` cannot build (a slot's)."""
    defs = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None}
    rev = Reverser(active, namer, ranks, ndims, defs, floats)
    for v in wrt + ir.operand_vars(fn.result):
        if v in active:
            rev.adjoint_name(v)
    backward = rev.block(fn.body)
    if zeros is not None:
        zeros.update(rev.zeros)
    return backward, rev.names

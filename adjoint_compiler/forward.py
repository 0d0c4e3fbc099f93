"""Forward: the tangent of every active statement, right after it (forward mode, `jvp`).

Guarantees: the result is the IR's statements in their order, each active Assign followed by its
tangent block (`Tangent` statements, from its tangent rule, tagged with its Loc, so they print
under its `# L<n>` comment); every active loop value and `if` output carries its tangent as one
more block parameter (a zero where the value entering it has none); a write node writes the
tangent of the written value into the tangent of the array (`b_dot[idx] = v_dot`), which is the
same object for every version of the array, as the array is; a statement with a varied operand
and no tangent rule is a located MissingRuleError. `SAVE` statements (for adjoints only) go.

    y = np.sin(x)           y = np.sin(x)
                            y_dot = rt.chain(x_dot, np.cos(x))
    b[i] = y                b[i] = y
                            b_dot[i] = y_dot
    for [s <- 0.0]: ...     for [s <- 0.0, s_dot <- 0.0]: ...

Tangents share memory only where their values do: a tangent that would be a view or the same
array as another (`x + c` has tangent `x_dot`) while its value is a new array is copied where a
write could tell them apart (`rt.tangent_copy`, `rt.tangent_view`).
"""
from __future__ import annotations

from dataclasses import dataclass

import gast
import numpy as np

from . import activity, aliasing, astwalk, effects, ir, registry, rtcall, runtime
from .errors import AdjointCompilerError, MissingRuleError
from .mutation import same_arrays
from .printing import to_source
from .shapes import broadcast_free
from .simplify import forward_needed
from .template import instantiate_tangent, operand_expr


@dataclass(eq=False)
class Tangent:
    """A statement of the tangent code (a gast statement), printed under the Loc of the primal
    statement it differentiates."""

    stmt: object
    loc: ir.Loc

    @property
    def text(self) -> str:
        return to_source(self.stmt)


def _lookup(stmt) -> tuple:
    """(tangent rule or None, the arguments it binds): `activity`'s lookup, in the tangent table."""
    obj = activity._index_object(stmt)
    if obj is None:
        return registry.lookup_tangent(activity.rule_primitive(stmt)), stmt.args
    try:
        rule = registry.lookup_tangent(activity.IndexOf(obj))
    except TypeError:
        rule = None
    idx = stmt.args[1]
    items = list(idx.items) if isinstance(idx, ir.Struct) and idx.kind == "tuple" else [idx]
    if isinstance(idx, ir.Var) and idx.kind != "num" or any(isinstance(i, ir.Const) and isinstance(i.value, str)
                                                              for i in items):
        rule = None
    return rule, [stmt.args[0]] + items


def bind_tangents(fn: ir.Function) -> None:
    """Bind each statement to its tangent rule where it has one that accepts its arguments (the
    activity analysis then follows the arguments each tangent rule reads)."""
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign) and stmt.rule is None:
            rule, args = _lookup(stmt)
            if rule is None:
                continue
            try:
                stmt.bound = rule.bind(args, activity.call_kwargs(stmt, rule), stmt.loc)
            except AdjointCompilerError:
                stmt.bound = None
                continue
            stmt.rule = rule


def analyze(fn: ir.Function, wrt: list) -> set:
    """The active Vars of forward mode: varied by a tangent input, useful to the result, through
    the arguments the tangent rules read. A varied call with no rule at all is a located error
    that names `@tangent`."""
    try:
        return activity.analyze(fn, wrt)
    except MissingRuleError as exc:
        text = str(exc).split('\n  File "')[0]
        raise MissingRuleError(f"{text} (forward mode: register its tangent with `@tangent(...)`, whose body "
                               "assigns `<result>_dot` from the arguments' `<arg>_dot`)", exc.loc) from None


def missing_tangent_message(stmt) -> str:
    rule = stmt.rule
    name = stmt.callee.path if stmt.callee is not None else (f'"{stmt.prim.name}"' if isinstance(
        stmt.prim, ir.Method) else repr(stmt.prim))
    params = ", ".join(rule.params + ([f"*{rule.varargs}"] if rule.varargs else [])) if rule else "x"
    first = (rule.params or [rule.varargs or "x"])[0] if rule else "x"
    return (f"`{name}` has an adjoint rule but no tangent rule, so it cannot be differentiated in forward "
            f"mode (jvp, jacfwd); register one with `@tangent({name})` over `def _(result, {params}): "
            f"result_dot = ...` (the body computes the result's tangent from `{first}_dot`, ...), or use "
            "reverse mode (grad, vjp, jacrev)")


_FRESH_NUMPY = {name for name in dir(np) if isinstance(getattr(np, name, None), np.ufunc)} | {
    f.__name__ for f in aliasing.FRESH_FUNCTIONS if getattr(f, "__module__", "") in ("numpy", "numpy.linalg")}


_FRESH_HELPERS = (runtime.own, runtime.Buffer, runtime.save_slots)
_FLOAT_CONSTRUCTORS = (np.zeros, np.ones, np.empty)


def _fresh_expr(expr) -> bool:
    """Whether a tangent expression surely makes a new value (never an operand's memory)."""
    if isinstance(expr, (gast.BinOp, gast.UnaryOp, gast.Constant, gast.Tuple, gast.List)):
        return True
    if isinstance(expr, gast.Call):
        helper = rtcall.helper(expr)
        if helper is not None:
            return rtcall.facts_of(expr).fresh or helper in _FRESH_HELPERS
        func = expr.func
        return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id == "np" \
            and func.attr in _FRESH_NUMPY
    return False


class Forward:
    def __init__(self, fn: ir.Function, active: set, namer, classes: dict, ndims: dict, views: dict,
                 real: dict | None = None):
        self.fn = fn
        self.real = real or {}
        self.active = active
        self.namer = namer
        self.classes = classes
        self.ndims = ndims
        self.names: dict = {}  # primal name -> tangent name (the versions of an array share both)
        self.written = self._written(views)
        self.made: dict = {}  # a new If or Loop (tangents carried) -> the IR's own
        self.defs = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None}
        self.inits = {p: i for s in ir.walk(fn.body) if isinstance(s, ir.Loop) for p, i in zip(s.params, s.inits)}

    def tangent_name(self, var) -> str:
        if var.name not in self.names:
            self.names[var.name] = self.namer.fresh(var.name + "_dot", shorten=False)
        return self.names[var.name]

    def _written(self, views: dict) -> set:
        """The names of values that may share memory with an array some write changes."""
        writes = [s for s in ir.walk(self.fn.body) if isinstance(s, ir.Assign) and s.prim in ir.WRITES]
        if not writes:
            return set()
        arrays = same_arrays(self.fn.body)
        roots = {arrays.find(s.args[0]) for s in writes if isinstance(s.args[0], ir.Var)}
        every = ir.defined_in(self.fn.body) | set(self.fn.params)
        names = {v.name for v in every if arrays.find(v) in roots}
        names |= set(views) | {n for arrays_ in views.values() for n in arrays_}
        return names

    # -- statements ----------------------------------------------------------------------------
    def block(self, stmts) -> list:
        out: list = []
        for s in stmts:
            if isinstance(s, ir.Assign):
                if s.prim is ir.SAVE:
                    continue  # the slots a write overwrites: read by adjoints only
                out.append(s)
                if s.target is not None and s.target in self.active:
                    out += self.assign(s)
            elif isinstance(s, ir.If):
                out.append(self.branch(s))
            elif isinstance(s, ir.Loop):
                out += self.loop(s)
        return out

    def zero(self, op, name: str | None, loc, into: list):
        """The zero tangent of operand `op` as an operand: a constant, or a Var bound to
        `rt.zero_tangent(op)` by a statement added to `into`."""
        if isinstance(op, ir.Const) and (isinstance(op.value, (bool, int, float)) or op.value is None):
            return ir.Const(None if op.value is None else 0.0)
        name = name or self.namer.fresh("zero_dot")
        into.append(Tangent(_assign(name, rtcall.call(runtime.zero_tangent, operand_expr(op))), loc))
        return ir.Var(name)

    def tangent_of(self, op, loc, into: list):
        """The tangent of operand `op` as an operand (made zero in `into` when it has none)."""
        if isinstance(op, ir.Var) and op in self.active:
            return ir.Var(self.tangent_name(op))
        return self.zero(op, self.tangent_name(op) if isinstance(op, ir.Var) else None, loc, into)

    def assign(self, s: ir.Assign) -> list:
        rule = s.rule
        if rule is None or rule.kind != "tangent":
            raise MissingRuleError(missing_tangent_message(s), s.loc)
        out: list = []
        active = self.active
        if s.prim in ir.WRITES and not (isinstance(s.args[0], ir.Var) and s.args[0] in active):
            base = s.args[0]  # a constant array written with a varied value: its tangent starts at zero
            self.zero(base, self.tangent_name(base), s.loc, out)
            active = active | {base}
        body = instantiate_tangent(rule, s, active, self.tangent_name, self.namer.fresh,
                                   lambda stmt, var: self.full_shape(stmt, var),
                                   s.prim in ir.WRITES and self.holds_floats(s.args[0]),
                                   lambda op: self.ndims.get(op) == 0 or self.classes.get(op) == 0)
        mine = self.tangent_name(s.target)
        for t in body:
            if isinstance(t, gast.Assign) and isinstance(t.targets[0], gast.Name) and t.targets[0].id == mine:
                t.value = self.protect(s, t.value)
            out.append(Tangent(t, s.loc))
        if s.prim in ir.WRITES and self.tangent_name(s.args[0]) != mine:  # (versions share their name)
            out.append(Tangent(_assign(mine, _load(self.tangent_name(s.args[0]))), s.loc))
        return out

    def holds_floats(self, var, depth: int = 0) -> bool:
        """Whether the array `var` holds surely holds floats: a Buffer, or made by `np.zeros(shape)`,
        `np.ones(shape)`, `np.empty(shape)` (no dtype), also through the loop values it entered as, or
        known to (`floats`)."""
        if not isinstance(var, ir.Var) or depth > 8:
            return False
        if var.is_buffer or self.real.get(var) == "f" or self.real.get(var.storage) == "f":
            return True
        root = var.storage or var
        if root in self.inits:
            return self.holds_floats(self.inits[root], depth + 1)
        made = self.defs.get(root)
        return made is not None and made.callee is not None and made.prim in _FLOAT_CONSTRUCTORS \
            and len(made.args) == 1 and not made.kwargs

    def full_shape(self, stmt, var) -> bool:
        if var is stmt.target:
            return self.ndims.get(var) == 0
        return broadcast_free(stmt, var, self.classes)

    def protect(self, s: ir.Assign, value):
        """The tangent of `s`'s result, copied where it could share memory with another tangent
        while the values do not, and a write could then change one through the other."""
        if not self.written or _fresh_expr(value):
            return value
        touched = {v.name for v in ir.stmt_reads(s)} | {s.target.name}
        if not touched & self.written:
            return value
        if aliasing.is_fresh(s, self.ndims):
            return rtcall.call(runtime.tangent_copy, value)
        if aliasing.view_kind(s) == "maybe" and isinstance(s.args[0], ir.Var) and s.args[0] in self.active:
            x = s.args[0]
            return rtcall.call(runtime.tangent_view, value, _load(s.target.name), _load(x.name),
                               _load(self.tangent_name(x)))
        return value

    def branch(self, s: ir.If) -> ir.If:
        body, orelse = self.block(s.body), self.block(s.orelse)
        outputs, body_results, orelse_results = list(s.outputs), list(s.body_results), list(s.orelse_results)
        for o, a, b in zip(s.outputs, s.body_results, s.orelse_results):
            if o in self.active:
                outputs.append(ir.Var(self.tangent_name(o)))
                body_results.append(self.tangent_of(a, s.loc, body))
                orelse_results.append(self.tangent_of(b, s.loc, orelse))
        made = ir.If(s.cond, body, orelse, outputs, body_results, orelse_results, s.loc)
        self.made[made] = s
        return made

    def loop(self, s: ir.Loop) -> list:
        before: list = []
        params, inits, nexts = list(s.params), list(s.inits), list(s.nexts)
        cond_body = self.block(s.cond_body)
        body = self.block(s.body)
        for p, i, n in zip(s.params, s.inits, s.nexts):
            if p in self.active:
                params.append(ir.Var(self.tangent_name(p)))
                inits.append(self.tangent_of(i, s.loc, before))
                nexts.append(self.tangent_of(n, s.loc, body))
        loop = ir.Loop(s.kind, params, inits, body, nexts, s.loc, s.target, s.iterable, cond_body, s.cond, s.stop,
                       s.trips)
        self.made[loop] = s
        return before + [loop]

    def result(self, into: list):
        return self.tangent_of(self.fn.result, self.fn.loc, into)


def forward(fn: ir.Function, active: set, namer, wrt: list, classes: dict, ndims: dict, views: dict,
            real: dict | None = None) -> tuple:
    """(the statements of the jvp function, the tangent parameters' names, the result's tangent
    operand, {primal name: tangent name}, the statements to print, the names they need). The
    `wrt` parameters are named first (`x_dot`). A primal statement is printed when the result or
    a tangent needs its value (or it may have side effects), as `grad` computes only what its
    adjoints read (`simplify.forward_needed`). `real`: the values surely holding real floats
    (`floats`), whose writes store their tangents as they are."""
    fw = Forward(fn, active, namer, classes, ndims, views, real)
    tangent_params = [fw.tangent_name(p) for p in wrt]
    body = fw.block(fn.body)
    result_dot = fw.result(body)
    needed = {v.name for v in ir.operand_vars(fn.result)}
    tangents = [t for t in ir.walk(body) if isinstance(t, Tangent)]
    for t in tangents:
        needed |= {n.id for n in astwalk.walk(t.stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    numpy = effects.numpy_values(fn, ndims)
    keep, _ = forward_needed(fn, needed, may_raise=lambda s: s.prim in ir.WRITES
                             or effects.unused_may_raise(s, classes, ndims, numpy))
    carrying = {made for made in fw.made if any(isinstance(t, Tangent) for t in ir.walk([made]))}
    keep = keep | set(tangents) | carrying | {made for made, own in fw.made.items() if own in keep}
    needed |= set(fw.names.values())
    return body, tangent_params, result_dot, fw.names, keep, needed


def _load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _assign(name: str, value) -> gast.Assign:
    return gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)],
                       value=value)

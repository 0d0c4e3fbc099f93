"""Rule templates: parsed and checked at registration, instantiated per statement.

A template is a plain function whose parameters are the primal result and the primal arguments
and whose body is the adjoint code, e.g.

    def sin(y, x):
        x_bar += y_bar * np.cos(x)

Instantiating it for `s = np.sin(t)` gives `Accum(t, s_bar * np.cos(t))`, i.e. `t_bar += ...`.
Parameters after `*args` are keyword-only (with literal defaults). A keyword argument of a call
in the body whose value is a parameter bound to its own default is dropped, so
`np.reshape(y_bar, s, order=order)` prints as `np.reshape(y_bar, s)` unless the user gave an
order; `rt.through_dtype(g)` left without its dtype is `g`. A rule parameter named `out` only
accepts None (an `out=` array is a write).
"""
from __future__ import annotations

import builtins
import copy
import inspect
import textwrap
from dataclasses import dataclass, field

import gast

from . import ir, rtcall, runtime
from .backward import (  # the structures instantiate makes (others re-exported)  # noqa: F401
    Accum,
    BIf,
    BLoop,
    Mark,
    Raw,
    Reset,
    Restore,
)
from .errors import CompileError, RuleError
from .printing import operand as operand_text


@dataclass
class Rule:
    name: str
    result: str | None
    params: list
    defaults: dict
    varargs: str | None
    body: list | None  # None: the primitive passes no gradient
    diff_params: set = field(default_factory=set)
    locals: set = field(default_factory=set)
    kwonly: list = field(default_factory=list)  # keyword-only parameters (after `*args`), with defaults

    @property
    def differentiable(self) -> bool:
        return bool(self.diff_params)

    @property
    def shown(self) -> str:
        """The primitive's name for messages: `numpy.sum`, `.reshape()` for a method."""
        name = self.name
        if len(name) > 2 and name[0] == name[-1] == "'":
            return f".{name[1:-1]}()"
        return name

    def bind(self, args: list, kwargs: dict, loc) -> dict:
        """Map template parameters to the call's operands (defaults as constants)."""
        bound: dict = {}
        if len(args) > len(self.params) and not self.varargs:
            raise CompileError(f"`{self.shown}` takes at most {len(self.params)} positional arguments in "
                               f"its adjoint rule, got {len(args)}", loc)
        for p, a in zip(self.params, args):
            bound[p] = a
        if self.varargs:
            bound[self.varargs] = tuple(args[len(self.params):])
        for k, v in kwargs.items():
            if self.body is None:  # passes no gradient: any keyword is fine
                bound[k] = v
                continue
            if k not in self.params and k not in self.kwonly:
                raise CompileError(f"the adjoint rule of `{self.shown}` does not support the keyword "
                                   f"argument `{k}` (at this value it may change the derivative); leave it "
                                   "out, or register a rule that takes it with `@adjoint`", loc)
            if k in bound:
                raise CompileError(f"`{self.shown}` got multiple values for `{k}`", loc)
            bound[k] = v
        for p in self.params + self.kwonly:
            if p not in bound:
                if p not in self.defaults:
                    raise CompileError(f"`{self.shown}` is missing the argument `{p}`", loc)
                bound[p] = ir.Const(self.defaults[p])
        out = bound.get("out")
        if self.body is not None and out is not None and not (isinstance(out, ir.Const) and out.value is None):
            # a rule's `out` parameter only accepts None: an `out=` array is a write
            raise CompileError(f"the adjoint rule of `{self.shown}` does not support writing the result "
                               "into `out=`; assign the result instead (`y = ...`)", loc)
        return bound


def _bar_base(name: str):
    return name[:-4] if name.endswith("_bar") else None


def parse_template(template, what: str) -> Rule:
    """Read and check a template function; malformed templates raise RuleError here."""
    try:
        src = textwrap.dedent(inspect.getsource(template))
    except (OSError, TypeError) as exc:
        raise RuleError(f"cannot read the source of the rule for {what}: {exc}") from None
    fn = gast.parse(src).body[0]
    a = fn.args
    if a.kwarg or a.posonlyargs:
        raise RuleError(f"rule for {what}: use plain parameters (result, then the primal's arguments)")
    names = [x.id for x in a.args]
    if not names:
        raise RuleError(f"rule for {what}: the first parameter must name the primal result")
    result, params = names[0], names[1:]
    default_nodes = a.defaults
    defaults = {}
    kwonly = [x.id for x in a.kwonlyargs]
    if any(d is None for d in a.kw_defaults):
        raise RuleError(f"rule for {what}: keyword-only parameters need literal defaults")
    for p, d in list(zip(params[len(params) - len(default_nodes):], default_nodes)) + list(zip(kwonly, a.kw_defaults)):
        negative = isinstance(d, gast.UnaryOp) and isinstance(d.op, gast.USub)
        node = d.operand if negative else d
        if not isinstance(node, gast.Constant) or (negative and not isinstance(node.value, (int, float))):
            raise RuleError(f"rule for {what}: default of `{p}` must be a literal")
        defaults[p] = -node.value if negative else node.value
    varargs = a.vararg.id if a.vararg else None
    known = set(params) | set(kwonly) | {result} | ({varargs} if varargs else set())
    body = [s for s in fn.body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    diff, local_names = set(), set()
    for s in body:
        for node in gast.walk(s):
            if isinstance(node, gast.Name):
                base = _bar_base(node.id)
                if base is not None and base not in known:
                    raise RuleError(f"rule for {what} uses `{node.id}`, but `{base}` is not one of its "
                                    f"parameters {[result] + params}")
                if isinstance(node.ctx, gast.Store) and base is None:
                    local_names.add(node.id)
        if isinstance(s, gast.AugAssign):
            if not (isinstance(s.op, gast.Add) and isinstance(s.target, gast.Name)
                    and _bar_base(s.target.id) in known - {result}):
                raise RuleError(f"rule for {what}: augmented assignments must be `<arg>_bar += ...`")
            diff.add(_bar_base(s.target.id))
        for node in gast.walk(s):
            if isinstance(node, (gast.Assign, gast.AugAssign)):
                for t in getattr(node, "targets", None) or [node.target]:
                    root = t
                    while isinstance(root, (gast.Subscript, gast.Attribute)):
                        root = root.value
                    if isinstance(root, gast.Name) and _bar_base(root.id) in set(params):
                        diff.add(_bar_base(root.id))
    _check_free_names(body, known | local_names, what)
    return Rule(what, result, params, defaults, varargs, body, diff, local_names, kwonly)


_GENERATED_SCOPE = frozenset({"np", "rt"} | set(dir(builtins)))


def _check_free_names(body: list, bound: set, what: str) -> None:
    """Refuse a template that reads a name other than its parameters, their adjoints, its own
    locals, `np`, `rt` and the builtins: the generated code that runs it has no other name, and a
    global of the same name in the differentiated function's module would be another object."""
    for s in body:
        for node in gast.walk(s):
            if isinstance(node, (gast.comprehension, gast.Lambda)):
                raise RuleError(f"rule for {what}: comprehensions and lambdas are not supported in a rule "
                                "template; write the loop as NumPy operations or a runtime helper")
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                base = _bar_base(node.id)
                if node.id in bound or base in bound or node.id in _GENERATED_SCOPE:
                    continue
                raise RuleError(f"rule for {what} reads `{node.id}`, which is none of its parameters: a rule "
                                f"template sees only its parameters, their `_bar` adjoints, its own locals, `np` "
                                f"and the builtins. Compute `{node.id}` from the parameters, or make it a "
                                "parameter of the primal function")


def nondiff_rule(what: str) -> Rule:
    return Rule(what, None, [], {}, "args", None)


def operand_expr(op):
    return gast.parse(operand_text(op), mode="eval").body


class _Substitute(gast.NodeTransformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            new = self.names[node.id]
            if isinstance(new, str):
                return gast.copy_location(gast.Name(id=new, ctx=node.ctx, annotation=None,
                                                    type_comment=None), node)
            return copy.deepcopy(new)  # every occurrence its own node (passes tell them apart)
        return node


class _DropDefaults(gast.NodeTransformer):
    """A keyword argument of a call in the template whose value is a parameter bound to that
    parameter's own default goes (`np.reshape(g, s, order=order)` -> `np.reshape(g, s)` for the
    default order), so the generated code mentions only what the user wrote; then a helper that
    is the identity with one argument left (`rt.through_dtype(g)`, no dtype) is that argument."""

    def __init__(self, defaults: set):
        self.defaults = defaults

    def visit_Call(self, node):
        self.generic_visit(node)
        node.keywords = [k for k in node.keywords
                         if not (isinstance(k.value, gast.Name) and k.value.id in self.defaults)]
        if rtcall.facts_of(node).identity_alone and len(node.args) == 1 and not node.keywords:
            return node.args[0]
        return node


def _at_default(rule: Rule, stmt) -> set:
    """The template parameters bound to their own literal default."""
    out = set()
    for p, default in rule.defaults.items():
        op = stmt.bound.get(p)
        if isinstance(op, ir.Const) and type(op.value) is type(default) and op.value == default:
            out.add(p)
    return out


class _DropUnbroadcast(gast.NodeTransformer):
    """`rt.unbroadcast(g, x)` -> `g` where template parameter `x` provably has the shape of `g`,
    and -> `rt.sum_to_scalar(g)` where `x` is provably a scalar (`rt.written_total(...)` for the
    slots a scalar overwrote, `rt.sum_of_product(a, b)` for `a * b`): either way `x` itself is not
    read."""

    def __init__(self, shape_free: set, scalars: set):
        self.shape_free = shape_free
        self.scalars = scalars

    def visit_Call(self, node):
        self.generic_visit(node)
        if rtcall.is_call(node, runtime.unbroadcast) and len(node.args) == 2 \
                and isinstance(node.args[1], gast.Name):
            if node.args[1].id in self.shape_free:
                return node.args[0]
            if node.args[1].id in self.scalars:
                g = node.args[0]
                helper, args = runtime.sum_to_scalar, [g]
                if rtcall.is_call(g, runtime.written_adjoint):
                    helper, args = runtime.written_total, g.args  # no copy of the slots, only their sum
                elif isinstance(g, gast.BinOp) and isinstance(g.op, gast.Mult):
                    helper, args = runtime.sum_of_product, [g.left, g.right]  # a dot product, no temporary
                return rtcall.call(helper, *args)
        return node


def _plain_matmul(body: list, stmt: ir.Assign, ndims: dict) -> list:
    """`rt.matmul_left(g, x, y)` -> `g @ y.T` (and `x.T @ g` for the right; `rt.dot_left`,
    `rt.dot_right` alike) when the operands' ranks are known (matrix or vector): no rank dispatch
    at run time."""
    ranks = tuple(ndims.get(a) for a in stmt.args)
    left, right = runtime.matmul_left, runtime.matmul_right
    forms = {(2, 2): {left: "{g} @ {y}.T", right: "{x}.T @ {g}"},
             (2, 1): {left: "np.multiply.outer({g}, {y})", right: "{x}.T @ {g}"},
             (1, 2): {left: "{y} @ {g}", right: "np.multiply.outer({x}, {g})"}}.get(ranks)
    if forms is not None:  # np.dot of matrices and vectors is the matrix product
        forms = {**forms, runtime.dot_left: forms[left], runtime.dot_right: forms[right]}
    if len(stmt.args) != 2 or forms is None:
        return body

    class Plain(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            helper = rtcall.helper(node)
            if helper in forms and len(node.args) == 3 and all(isinstance(a, gast.Name) for a in node.args[1:]):
                g = printing_source(node.args[0])
                text = forms[helper].format(g=f"({g})", x=node.args[1].id, y=node.args[2].id)
                return gast.parse(text, mode="eval").body
            return node
    return [Plain().visit(copy.deepcopy(s)) for s in body]


def printing_source(expr) -> str:
    from .printing import to_source
    return to_source(expr)


def instantiate(rule: Rule, stmt: ir.Assign, active: set, adjoint_name, temp_name,
                broadcast_free=lambda stmt, op: False, is_scalar=lambda op: False, ndims=None) -> list:
    """The adjoint statements of `stmt` from its rule; contributions to inactive values are dropped,
    and `rt.unbroadcast` is simplified for operands known to need none or to be scalars."""
    shape_free = {p for p, op in stmt.bound.items() if isinstance(op, ir.Var) and broadcast_free(stmt, op)}
    scalars = {p for p, op in stmt.bound.items() if isinstance(op, ir.Var) and p not in shape_free
               and is_scalar(op)}
    mapping: dict = {}
    inactive_bars: set = set()
    if rule.result:
        mapping[rule.result] = operand_expr(stmt.target)
        mapping[rule.result + "_bar"] = adjoint_name(stmt.target)
    for p, op in stmt.bound.items():
        if p == rule.varargs:
            mapping[p] = gast.Tuple(elts=[operand_expr(o) for o in op], ctx=gast.Load())
            continue
        mapping[p] = operand_expr(op)
        if isinstance(op, ir.Var) and op in active:
            mapping[p + "_bar"] = adjoint_name(op)
        else:
            inactive_bars.add(p + "_bar")
    for name in sorted(rule.locals):
        mapping[name] = temp_name(f"{stmt.target.name}_{name}")
    out = []
    drop = _DropUnbroadcast(shape_free, scalars)
    body = [drop.visit(copy.deepcopy(s)) for s in rule.body] if shape_free or scalars else rule.body
    at_default = _at_default(rule, stmt)
    if at_default:
        body = [_DropDefaults(at_default).visit(copy.deepcopy(s)) for s in body]
    body = _plain_matmul(body, stmt, ndims or {})
    result_bar = rule.result and rule.result + "_bar"
    uses = sum(1 for s in body for n in gast.walk(s) if isinstance(n, gast.Name) and n.id == result_bar)
    for s in body:
        spread = isinstance(s, gast.AugAssign) and rule.varargs and _bar_base(s.target.id) == rule.varargs
        if not spread and any(isinstance(n, gast.Name) and n.id in inactive_bars for n in gast.walk(s)):
            continue
        if spread:
            # `items_bar += e` over `*items`: item i receives `e[i]`
            for i, item in enumerate(stmt.bound[rule.varargs]):
                if isinstance(item, ir.Var) and item in active:
                    expr = _Substitute(mapping).visit(copy.deepcopy(s.value))
                    index = gast.Constant(value=i, kind=None)
                    pick = rtcall.call(runtime.item, expr, index, operand_expr(item))
                    out.append(Accum(item, pick, stmt.loc))
        elif isinstance(s, gast.AugAssign):
            var = stmt.bound[_bar_base(s.target.id)]
            # `x_bar += y_bar` as the only use of y_bar: the array changes hands (y_bar is dead after)
            hands_over = uses == 1 and isinstance(s.value, gast.Name) and s.value.id == result_bar
            out.append(Accum(var, _Substitute(mapping).visit(copy.deepcopy(s.value)), stmt.loc, hands_over))
        else:
            out.append(Raw(_Substitute(mapping).visit(copy.deepcopy(s)), stmt.loc))
    return out

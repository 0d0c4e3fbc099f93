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
import math
import textwrap
import threading
from dataclasses import dataclass, field

import gast

from . import astwalk, ir, rtcall, runtime
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
    kind: str = "adjoint"  # or "tangent" (a forward-mode rule: `y_dot = ...`, see `parse_tangent`)
    free: dict = field(default_factory=dict)  # a global the body reads -> its name in `rt.rule_globals`
    refused: dict = field(default_factory=dict)  # parameter -> why it gets no gradient (a varied one is refused)
    # each `rt.unbroadcast(g, x)` of the body undoes the broadcast of its array operands among
    # themselves (a composite over elementwise forms): where they share one shape, it is `g`
    broadcasts_operands: bool = False

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
                               f"its {self.kind} rule, got {len(args)}", loc)
        for p, a in zip(self.params, args):
            bound[p] = a
        if self.varargs:
            bound[self.varargs] = tuple(args[len(self.params):])
        for k, v in kwargs.items():
            if self.body is None:  # passes no gradient: any keyword is fine
                bound[k] = v
                continue
            if k not in self.params and k not in self.kwonly:
                raise CompileError(f"the {self.kind} rule of `{self.shown}` does not support the keyword "
                                   f"argument `{k}` (at this value it may change the derivative); leave it "
                                   f"out, or register a rule that takes it with `@{self.kind}`", loc)
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
            raise CompileError(f"the {self.kind} rule of `{self.shown}` does not support writing the result "
                               "into `out=`; assign the result instead (`y = ...`)", loc)
        return bound


class Deferred(Rule):
    """A built-in rule read from its template at its first use: the same `Rule` once any field is
    asked for (`read(template, what)`, `parse_template` or `parse_tangent`, runs then, once). A
    process that differentiates a few primitives reads a few templates, not all six hundred;
    `registry.check_builtin_rules` reads and checks every one (the test suite calls it)."""

    def __init__(self, read, template, what: str, kind: str):
        self.__dict__.update(name=what, kind=kind, _pending=(read, template))

    def __getattr__(self, attr: str):
        pending = self.__dict__.get("_pending")
        if pending is None or attr.startswith("__"):
            raise AttributeError(attr)
        with _READING:
            if "_pending" in self.__dict__:
                read, template = pending
                self.__dict__.update(read(template, self.name).__dict__)
                del self.__dict__["_pending"]
        return getattr(self, attr)


_READING = threading.RLock()


def _bar_base(name: str):
    return name[:-4] if name.endswith("_bar") else None


def _read_template(template, what: str) -> tuple:
    """(the template's FunctionDef, result, params, defaults, varargs, kwonly), checked."""
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
    return fn, result, params, defaults, varargs, kwonly


def parse_template(template, what: str) -> Rule:
    """Read and check a template function; malformed templates raise RuleError here."""
    fn, result, params, defaults, varargs, kwonly = _read_template(template, what)
    known = set(params) | set(kwonly) | {result} | ({varargs} if varargs else set())
    body = [s for s in fn.body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    diff, local_names = set(), set()
    for s in body:
        for node in astwalk.walk(s):
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
        for node in astwalk.walk(s):
            if isinstance(node, (gast.Assign, gast.AugAssign)):
                for t in getattr(node, "targets", None) or [node.target]:
                    root = t
                    while isinstance(root, (gast.Subscript, gast.Attribute)):
                        root = root.value
                    if isinstance(root, gast.Name) and _bar_base(root.id) in set(params):
                        diff.add(_bar_base(root.id))
    free = _check_free_names(body, known | local_names, what, scope=_scope(template))
    return Rule(what, result, params, defaults, varargs, body, diff, local_names, kwonly, free=free)


def _dot_base(name: str):
    return name[:-4] if name.endswith("_dot") else None


def _store_root(target):
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def parse_tangent(template, what: str) -> Rule:
    """Read and check a tangent template (forward mode); malformed ones raise RuleError here.

    Parameters are the primal result then its arguments, as for an adjoint rule; the body assigns
    `<result>_dot` from the arguments' tangents `<arg>_dot`, or (a write) stores into an argument's
    tangent (`b_dot[idx] = v_dot`). The body is linear in the tangents: a missing tangent is zero,
    so `instantiate_tangent` drops the terms that read it. A call statement writes into the tangents
    it is given (`rt.copyto(b_dot, src_dot, where)`)."""
    fn, result, params, defaults, varargs, kwonly = _read_template(template, what)
    known = set(params) | set(kwonly) | {result} | ({varargs} if varargs else set())
    body = [s for s in fn.body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    diff, local_names, assigns = set(), set(), False
    for s in body:
        if isinstance(s, gast.AugAssign):
            raise RuleError(f"tangent rule for {what}: write `{result}_dot = a + b`, not an augmented assignment")
        if not isinstance(s, (gast.Assign, gast.Expr)):
            raise RuleError(f"tangent rule for {what}: the body is assignments (and calls) only")
        for node in astwalk.walk(s):
            if isinstance(node, gast.Name):
                if _bar_base(node.id) is not None:
                    raise RuleError(f"tangent rule for {what} uses `{node.id}`: a tangent rule reads "
                                    "`<arg>_dot` tangents, not adjoints")
                base = _dot_base(node.id)
                if base is not None and base not in known:
                    raise RuleError(f"tangent rule for {what} uses `{node.id}`, but `{base}` is not one of "
                                    f"its parameters {[result] + params}")
                if base is not None and base != result and isinstance(node.ctx, gast.Load):
                    diff.add(base)
        if isinstance(s, gast.Expr):  # a helper writing into an argument's tangent (`rt.copyto(b_dot, ...)`)
            assigns = assigns or any(isinstance(n, gast.Name) and _dot_base(n.id) in known - {result}
                                     for n in astwalk.walk(s))
        if isinstance(s, gast.Assign):
            for t in s.targets:
                root = _store_root(t)
                if isinstance(t, gast.Name) and t.id == result + "_dot":
                    assigns = True
                elif isinstance(t, gast.Name) and _dot_base(t.id) is None:
                    local_names.add(t.id)
                elif root is not None and not isinstance(t, gast.Name) and _dot_base(root) in known - {result}:
                    assigns = True  # a write into an argument's tangent (a write node)
                    diff.add(_dot_base(root))
                else:
                    raise RuleError(f"tangent rule for {what}: cannot assign `{printing_source(t)}`; assign "
                                    f"`{result}_dot` (or write into an argument's tangent)")
    if not assigns:
        raise RuleError(f"tangent rule for {what}: the body must assign `{result}_dot`")
    free = _check_free_names(body, known | local_names, what, _dot_base, scope=_scope(template))
    return Rule(what, result, params, defaults, varargs, body, diff, local_names, kwonly, kind="tangent", free=free)


_GENERATED_SCOPE = frozenset({"np", "rt"} | set(dir(builtins)))


def _scope(template) -> dict:
    """The names a template function's body may read besides its parameters: its module's globals
    and its closure cells (a rule registered inside a function)."""
    scope = dict(getattr(template, "__globals__", {}))
    code = getattr(template, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), getattr(template, "__closure__", None) or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return scope


def _bind_rule_global(name: str, value) -> str:
    """The attribute of `rt.rule_globals` holding `value` (named after `name`; `name_2` when that
    attribute holds another object): generated code reads a rule's helper through it."""
    from . import runtime
    space = runtime.rule_globals
    attr, k = name, 1
    while hasattr(space, attr) and getattr(space, attr) is not value:
        k += 1
        attr = f"{name}_{k}"
    setattr(space, attr, value)
    return attr


def _check_free_names(body: list, bound: set, what: str, suffix_base=None, scope=None) -> dict:
    """Refuse a template that reads a name other than its parameters, their adjoints, its own
    locals, `np`, `rt`, the builtins and the globals (or closure cells) of its own module: the
    generated code reads those (the user's helpers a user rule calls) through `rt.rule_globals`,
    bound when the rule is registered; a global of the same name in the differentiated
    function's module may be another object. Returns {name: its attribute in rt.rule_globals}."""
    free: dict = {}
    for s in body:
        for node in astwalk.walk(s):
            if isinstance(node, (gast.comprehension, gast.Lambda)):
                raise RuleError(f"rule for {what}: comprehensions and lambdas are not supported in a rule "
                                "template; write the loop as NumPy operations or a runtime helper")
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                base = (suffix_base or _bar_base)(node.id)
                if node.id in bound or base in bound or node.id in _GENERATED_SCOPE or node.id in free:
                    continue
                if scope is not None and node.id in scope:
                    free[node.id] = _bind_rule_global(node.id, scope[node.id])
                    continue
                raise RuleError(f"rule for {what} reads `{node.id}`, which is none of its parameters: a rule "
                                f"template sees only its parameters, their `_bar` adjoints (`_dot` tangents), its own locals, `np`, "
                                f"the builtins and the globals of its module. Compute `{node.id}` from the parameters, "
                                "or make it a parameter of the primal function")
    return free


def _free_nodes(rule) -> dict:
    """The template's free names as the generated code reads them: `rt.rule_globals.<attr>`."""
    return {name: gast.Attribute(value=gast.Attribute(value=gast.Name(id="rt", ctx=gast.Load(), annotation=None,
                                                                      type_comment=None),
                                                      attr="rule_globals", ctx=gast.Load()),
                                 attr=attr, ctx=gast.Load())
            for name, attr in rule.free.items()}


def nondiff_rule(what: str) -> Rule:
    return Rule(what, None, [], {}, "args", None)


_PARSED: dict = {}  # the text of an operand built no other way -> its node, parsed once


def operand_expr(op):
    """The expression node of an IR operand, built from the operand itself: a name, a dotted
    global, a literal, an index tuple or slice. Only a literal with no node of its own (a
    complex number, a tuple constant, a non-finite float) goes through its printed text."""
    if isinstance(op, ir.Var):
        return _load(op.name)
    if isinstance(op, ir.Global) and all(part.isidentifier() for part in op.path.split(".")):
        first, *rest = op.path.split(".")
        node = _load(first)
        for attr in rest:
            node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
        return node
    if isinstance(op, ir.Const) and (op.value is None or op.value is Ellipsis or type(op.value) in (bool, str)):
        return gast.Constant(value=op.value, kind=None)
    if isinstance(op, ir.Const) and type(op.value) in (int, float) and math.isfinite(op.value):
        if math.copysign(1, op.value) > 0:
            return gast.Constant(value=op.value, kind=None)
        return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-op.value, kind=None))  # (-0.0 too)
    if isinstance(op, ir.Struct) and op.kind == "tuple":
        return gast.Tuple(elts=[operand_expr(i) for i in op.items], ctx=gast.Load())
    if isinstance(op, ir.Struct) and op.kind == "slice":
        return gast.Call(func=_load("slice"), args=[operand_expr(i) for i in op.items], keywords=[])
    text = operand_text(op)
    node = _PARSED.get(text)
    if node is None:
        if len(_PARSED) > 4096:
            _PARSED.clear()
        node = _PARSED[text] = gast.parse(text, mode="eval").body
    return astwalk.clone(node)


class _Substitute:
    """Each name of `names` in a tree becomes its new name (a str) or a copy of its expression;
    `visit(tree)` changes the tree in place and returns it (or the replacement of a lone name),
    as a `gast.NodeTransformer` with only `visit_Name` would, without one's dispatch per node."""

    def __init__(self, names: dict):
        self.names = names

    def visit(self, node):
        if type(node) is gast.Name:
            return self.visit_Name(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, gast.AST):
                        value[i] = self.visit(item)
            elif isinstance(value, gast.AST):
                setattr(node, name, self.visit(value))
        return node

    def visit_Name(self, node):
        if node.id in self.names:
            new = self.names[node.id]
            if isinstance(new, str):
                return gast.copy_location(gast.Name(id=new, ctx=node.ctx, annotation=None,
                                                    type_comment=None), node)
            return astwalk.clone(new)  # every occurrence its own node (passes tell them apart)
        return node

    def copy(self, tree):
        """`self.visit(astwalk.clone(tree))`, made in one pass over `tree`."""
        return self._copy(tree, {})

    def _copy(self, x, memo: dict):
        kind = type(x)
        if kind is gast.Name:
            new = self.names.get(x.id, _NOT_COPIED)
            if new is _NOT_COPIED:  # (copied whole: `visit` does not look inside a name)
                return astwalk.clone(x, memo)
            if isinstance(new, str):  # (the copy's own context node, as the clone would have it)
                return gast.copy_location(gast.Name(id=new, ctx=astwalk.clone(x.ctx, memo), annotation=None,
                                                    type_comment=None), x)
            return astwalk.clone(new)
        if not isinstance(x, gast.AST) and kind is not list:
            return astwalk.clone(x, memo)
        y = memo.get(id(x), _NOT_COPIED)
        if y is not _NOT_COPIED:
            return y
        if kind is list:
            y = memo[id(x)] = []
            y.extend([self._copy(item, memo) for item in x])
            return y
        y = kind.__new__(kind)
        memo[id(x)] = y
        fields = y.__dict__
        for name, value in x.__dict__.items():
            fields[name] = self._copy(value, memo)
        return y


_NOT_COPIED = object()


class _DropDefaults(gast.NodeTransformer):
    """A keyword argument of a call in the template whose value is a parameter bound to that
    parameter's own default goes (`np.reshape(g, s, order=order)` -> `np.reshape(g, s)` for the
    default order), so the generated code mentions only what the user wrote; then a helper that
    is the identity without a given argument (`runtime_facts.identity_unless`: `rt.through_dtype(g)`,
    `rt.cast_adjoint(g, dtype, x)` with `dtype` at its default None) is its first argument."""

    def __init__(self, defaults: set):
        self.defaults = defaults

    def at_default(self, arg) -> bool:
        return isinstance(arg, gast.Name) and arg.id in self.defaults or isinstance(arg, gast.Constant) \
            and arg.value is None

    def visit_Call(self, node):
        self.generic_visit(node)
        node.keywords = [k for k in node.keywords
                         if not (isinstance(k.value, gast.Name) and k.value.id in self.defaults)]
        at = rtcall.facts_of(node).identity_unless
        if at is not None and not node.keywords and (len(node.args) <= at or self.at_default(node.args[at])):
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

    def applies(self, body: list) -> bool:
        """Whether a call in `body` is one to change (else the body stays as it is, uncopied)."""
        return any(self._dropped(n) for s in body for n in astwalk.walk(s))

    def _dropped(self, node) -> bool:
        return rtcall.is_call(node, runtime.unbroadcast) and len(node.args) == 2 \
            and isinstance(node.args[1], gast.Name) and node.args[1].id in self.shape_free | self.scalars

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
    """`rt.matmul_left(g, x, y)` -> `g @ y.T` (and `x.T @ g` for the right; `g * y` for two vectors;
    `rt.dot_left`, `rt.dot_right` alike) when the operands' ranks are known (matrix or vector): no rank dispatch
    at run time."""
    ranks = tuple(ndims.get(a) for a in stmt.args)
    left, right = runtime.matmul_left, runtime.matmul_right
    forms = {(1, 1): {left: "{g} * {y}", right: "{g} * {x}"},  # (a number: the scalar product's)
             (2, 2): {left: "{g} @ {y}.T", right: "{x}.T @ {g}"},
             (2, 1): {left: "np.multiply.outer({g}, {y})", right: "{x}.T @ {g}"},
             (1, 2): {left: "{y} @ {g}", right: "np.multiply.outer({x}, {g})"}}.get(ranks)
    if forms is not None:  # np.dot of matrices and vectors is the matrix product
        forms = {**forms, runtime.dot_left: forms[left], runtime.dot_right: forms[right]}
    if len(stmt.args) != 2 or forms is None:
        return body
    if not any(rtcall.helper(n) in forms for s in body for n in astwalk.walk(s)):
        return body  # (nothing to rewrite: the body as it came, uncopied, like any other)

    class Plain(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            helper = rtcall.helper(node)
            if helper in forms and len(node.args) == 3 and all(map(_operand_name, node.args[1:])):
                g = printing_source(node.args[0])
                x, y = (printing_source(a) for a in node.args[1:])
                text = forms[helper].format(g=f"({g})", x=x, y=y)
                return gast.parse(text, mode="eval").body
            return node
    return [Plain().visit(astwalk.clone(s)) for s in body]


def _operand_name(node) -> bool:
    """A name, or a name indexed (`W[rt.part_span(0, 1, h, x)]`, by `joined`): an operand printed
    as it is before `.T` or `@`, with no parentheses."""
    return isinstance(node, gast.Name) or (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name))


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
    mapping.update(_free_nodes(rule))
    out = []
    drop = _DropUnbroadcast(shape_free, scalars)
    body = [drop.visit(astwalk.clone(s)) for s in rule.body] if drop.applies(rule.body) else rule.body
    at_default = _at_default(rule, stmt)
    if at_default:
        body = [_DropDefaults(at_default).visit(astwalk.clone(s)) for s in body]
    body = _plain_matmul(body, stmt, ndims or {})
    result_bar = rule.result and rule.result + "_bar"
    uses = sum(1 for s in body for n in astwalk.walk(s) if isinstance(n, gast.Name) and n.id == result_bar)
    for s in body:
        spread = isinstance(s, gast.AugAssign) and rule.varargs and _bar_base(s.target.id) == rule.varargs
        if not spread and any(isinstance(n, gast.Name) and n.id in inactive_bars for n in astwalk.walk(s)):
            continue
        if spread:
            # `items_bar += e` over `*items`: item i receives `e[i]`
            for i, item in enumerate(stmt.bound[rule.varargs]):
                if isinstance(item, ir.Var) and item in active:
                    expr = _Substitute(mapping).copy(s.value)
                    index = gast.Constant(value=i, kind=None)
                    pick = rtcall.call(runtime.item, expr, index, operand_expr(item))
                    out.append(Accum(item, pick, stmt.loc))
        elif isinstance(s, gast.AugAssign):
            var = stmt.bound[_bar_base(s.target.id)]
            # `x_bar += y_bar` as the only use of y_bar: the array changes hands (y_bar is dead after)
            hands_over = uses == 1 and isinstance(s.value, gast.Name) and s.value.id == result_bar
            out.append(Accum(var, _Substitute(mapping).copy(s.value), stmt.loc, hands_over))
        else:
            out.append(Raw(_Substitute(mapping).copy(s), stmt.loc))
    return out


# -- tangent templates (forward mode) ---------------------------------------------------------------

class _Zero:
    """A tangent known to be zero while a tangent template is instantiated: the tangent of an
    argument that has none (`origins`: the operands whose zero it is)."""

    __slots__ = ("origins",)

    def __init__(self, origins):
        self.origins = list(origins)


def _merge(*parts) -> _Zero:
    return _Zero([o for p in parts if isinstance(p, _Zero) for o in p.origins])


def _zero_of(op):
    """The zero tangent of operand `op` as an expression: 0.0 for a number, None for a value
    without numbers (None, a string, a slice), else `rt.zero_tangent(op)`."""
    if isinstance(op, ir.Const):
        value = op.value
        if isinstance(value, (bool, int, float)):
            return gast.Constant(value=0.0, kind=None)
        if value is None or value is Ellipsis or isinstance(value, str):
            return gast.Constant(value=None, kind=None)
    if isinstance(op, ir.Struct) and op.kind == "slice":
        return gast.Constant(value=None, kind=None)
    return rtcall.call(runtime.zero_tangent, operand_expr(op))


def _materialize(value):
    """An expression for a value that may be a known zero."""
    if not isinstance(value, _Zero):
        return value
    origins = [o for o in value.origins if not (isinstance(o, ir.Const) and isinstance(o.value, (bool, int, float)))]
    if not origins:
        return gast.Constant(value=0.0, kind=None)
    if len(origins) == 1:
        return _zero_of(origins[0])
    return rtcall.call(runtime.zero_tangent, *[operand_expr(o) for o in origins])


class _Lower:
    """Substitutes a tangent template's names and propagates known zeros (see `instantiate_tangent`).
    `names`: template name -> expression (gast), `_Zero`, or a list of either (a `*args` tangent)."""

    def __init__(self, names: dict, dots: set):
        self.names = names
        self.dots = dots  # the template names that hold tangents (and the locals computed from them)

    def reads_dot(self, node) -> bool:
        return any(isinstance(n, gast.Name) and n.id in self.dots for n in astwalk.walk(node))

    def name(self, node):
        value = self.names.get(node.id)
        if value is None:
            return node  # np, rt, a builtin
        if isinstance(value, _Zero):
            return value
        if isinstance(value, list):
            return self.display([v for v in value], gast.Tuple, [True] * len(value))
        return astwalk.clone(value)

    def display(self, values: list, kind, reading: list):
        """A tuple or list display of lowered `values`: a known zero when every tangent in it is."""
        if any(reading) and all(isinstance(v, _Zero) for v, r in zip(values, reading) if r):
            return _merge(*values)
        return kind(elts=[_materialize(v) for v in values], ctx=gast.Load())

    def elements(self, elts) -> tuple:
        values, reading = [], []
        for e in elts:
            if isinstance(e, gast.Starred) and isinstance(e.value, gast.Name) \
                    and isinstance(self.names.get(e.value.id), list):
                for v in self.names[e.value.id]:  # `*items_dot`: each item's tangent in place
                    values.append(v if isinstance(v, _Zero) else astwalk.clone(v))
                    reading.append(True)
                continue
            values.append(self.lower(e))
            reading.append(self.reads_dot(e))
        return values, reading

    def lower(self, node):
        if isinstance(node, gast.Name):
            return self.name(node)
        if isinstance(node, gast.BinOp):
            left, right = self.lower(node.left), self.lower(node.right)
            lz, rz = isinstance(left, _Zero), isinstance(right, _Zero)
            if lz and rz:
                return _merge(left, right)
            if isinstance(node.op, gast.Add) and (lz or rz):
                return right if lz else left
            if isinstance(node.op, gast.Sub) and (lz or rz):
                return gast.UnaryOp(op=gast.USub(), operand=right) if lz else left
            if lz or rz:  # a product or quotient with a zero tangent factor
                return _merge(left, right)
            return gast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node, gast.UnaryOp):
            operand = self.lower(node.operand)
            return operand if isinstance(operand, _Zero) else gast.UnaryOp(op=node.op, operand=operand)
        if isinstance(node, (gast.Subscript, gast.Attribute)):
            value = self.lower(node.value)
            if isinstance(value, _Zero):
                return value
            out = copy.copy(node)
            out.value = value
            if isinstance(node, gast.Subscript):
                out.slice = _materialize(self.lower(node.slice))
            return out
        if isinstance(node, gast.Call):
            args, reading = self.elements(node.args)
            kw_values = [self.lower(k.value) for k in node.keywords]
            kw_reading = [self.reads_dot(k.value) for k in node.keywords]
            everything = args + kw_values
            flags = reading + kw_reading
            if any(flags) and all(isinstance(v, _Zero) for v, r in zip(everything, flags) if r):
                return _merge(*everything)  # linear in its tangents, all of them zero
            return gast.Call(func=self.lower(node.func), args=[_materialize(a) for a in args],
                             keywords=[gast.keyword(arg=k.arg, value=_materialize(v))
                                       for k, v in zip(node.keywords, kw_values)])
        if isinstance(node, (gast.Tuple, gast.List)):
            values, reading = self.elements(node.elts)
            return self.display(values, type(node), reading)
        if isinstance(node, gast.Constant):
            return node
        out = astwalk.clone(node)  # anything else: its parts as they are, known zeros made explicit

        class Sub(gast.NodeTransformer):
            def visit_Name(inner, n):
                return _materialize(self.name(n))
        return Sub().visit(out)


def _index_form(node):
    """An index as the user writes it: `slice(1, 3, None)` -> `1:3` (also inside a tuple)."""
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[_index_form(e) for e in node.elts], ctx=node.ctx)
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "slice" \
            and not node.keywords and 1 <= len(node.args) <= 3:
        parts = [None if isinstance(a, gast.Constant) and a.value is None else a for a in node.args]
        lower, upper, step = ([None] + parts + [None])[:3] if len(parts) == 1 else (parts + [None])[:3]
        return gast.Slice(lower=lower, upper=upper, step=step)
    return node


class _SimplifyTangent(gast.NodeTransformer):
    """`rt.broadcast_tangent(t, y)` -> `t` where a tangent in `t` surely has the result's shape (or
    the result is a scalar); `rt.stored_tangent(t, b)` -> `t` for a Buffer (always floats) or a
    zero `t`."""

    def __init__(self, full_shape, float_storage: bool):
        self.full_shape = full_shape
        self.float_storage = float_storage

    def visit_Subscript(self, node):
        self.generic_visit(node)
        node.slice = _index_form(node.slice)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if rtcall.is_call(node, runtime.broadcast_tangent) and len(node.args) == 2 and self.full_shape(node.args[0]):
            return node.args[0]
        if rtcall.is_call(node, runtime.stored_tangent) and len(node.args) == 2 and (
                self.float_storage or (isinstance(node.args[0], gast.Constant) and node.args[0].value == 0.0)):
            return node.args[0]
        return node


class _DropComplete(gast.NodeTransformer):
    """`rt.broadcast_tangent(e, y)` -> `e` where every tangent `e` reads is there, or missing only
    for scalars: the terms left have the shape of the elementwise result."""

    def __init__(self, names: dict, dots: set, is_scalar):
        self.names, self.dots, self.is_scalar = names, dots, is_scalar

    def complete(self, value) -> bool:
        if isinstance(value, list):
            return all(self.complete(v) for v in value)
        if isinstance(value, _Zero):
            return all(self.is_scalar(o) for o in value.origins)
        return True

    def visit_Call(self, node):
        self.generic_visit(node)
        if rtcall.is_call(node, runtime.broadcast_tangent) and len(node.args) == 2:
            read = [n.id for n in astwalk.walk(node.args[0]) if isinstance(n, gast.Name) and n.id in self.dots]
            values = [self.names.get(r) for r in read]
            if any(not isinstance(v, _Zero) for v in values) and all(self.complete(v) for v in values):
                return node.args[0]
        return node


def instantiate_tangent(rule: Rule, stmt: ir.Assign, active: set, tangent_name, temp_name,
                        full_shape=lambda stmt, var: False, float_storage: bool = False,
                        is_scalar=lambda op: False) -> list:
    """The tangent statements (gast) of `stmt` from its tangent rule. The tangent of an argument
    that has none (not in `active`) is zero: a sum drops the terms reading it, a product, quotient
    or call all of whose tangents are zero is zero, and a call or display with some tangents gets
    explicit zeros for the others (`rt.zero_tangent(x)`, 0.0 for a number); a result whose
    tangent comes out zero is `rt.zero_tangent(y)`. `full_shape(stmt, var)` tells a tangent that
    surely has the result's shape, `is_scalar(op)` an operand surely a number (where only numbers
    miss a tangent, `rt.broadcast_tangent` is dropped too); `float_storage`, that a write's array
    surely holds floats (`rt.stored_tangent` is then dropped)."""
    names: dict = {}
    dots: set = set()
    dot_vars: dict = {}
    if rule.result:
        names[rule.result] = operand_expr(stmt.target)
        names[rule.result + "_dot"] = _load(tangent_name(stmt.target))
        dots.add(rule.result + "_dot")
    for p, op in stmt.bound.items():
        dots.add(p + "_dot")
        if p == rule.varargs:
            names[p] = gast.Tuple(elts=[operand_expr(o) for o in op], ctx=gast.Load())
            names[p + "_dot"] = [_load(tangent_name(o)) if isinstance(o, ir.Var) and o in active else _Zero([o])
                                 for o in op]
            for o in op:
                if isinstance(o, ir.Var) and o in active:
                    dot_vars[tangent_name(o)] = o
            continue
        names[p] = operand_expr(op)
        if isinstance(op, ir.Var) and op in active:
            names[p + "_dot"] = _load(tangent_name(op))
            dot_vars[tangent_name(op)] = op
        else:
            names[p + "_dot"] = _Zero([op])
    for name in sorted(rule.locals):
        names[name] = _load(temp_name(f"{stmt.target.name}_{name}"))
    names.update(_free_nodes(rule))
    at_default = _at_default(rule, stmt)
    body = rule.body
    if at_default:
        body = [_DropDefaults(at_default | {p + "_dot" for p in at_default}).visit(astwalk.clone(s)) for s in body]
    def scalar(op) -> bool:
        return isinstance(op, ir.Const) and isinstance(op.value, (bool, int, float)) or is_scalar(op)
    body = [_DropComplete(names, dots, scalar).visit(astwalk.clone(s)) for s in body]
    lower = _Lower(names, dots)

    def surely_full(expr) -> bool:
        if stmt.target is not None and full_shape(stmt, stmt.target):
            return True  # (the result is a scalar)
        return any(isinstance(n, gast.Name) and n.id in dot_vars and full_shape(stmt, dot_vars[n.id])
                   for n in astwalk.walk(expr))
    storage = stmt.target if stmt.prim in ir.WRITES else None
    simplify = _SimplifyTangent(lambda e: surely_full(e), storage is not None and (storage.is_buffer or float_storage))
    out = []
    for s in body:
        value = lower.lower(s.value)
        if isinstance(s, gast.Expr):
            if not isinstance(value, _Zero):
                out.append(gast.Expr(value=simplify.visit(value)))
            continue
        target = s.targets[0]
        if isinstance(target, gast.Name) and target.id in rule.locals:
            if lower.reads_dot(s.value):
                dots.add(target.id)
            if isinstance(value, _Zero):
                names[target.id] = value
                continue
            out.append(gast.Assign(targets=[_store(names[target.id].id)], value=simplify.visit(value)))
            continue
        if isinstance(target, gast.Name):  # `<result>_dot = ...`
            if isinstance(value, _Zero):
                value = rtcall.call(runtime.zero_tangent, operand_expr(stmt.target))
            out.append(gast.Assign(targets=[_store(tangent_name(stmt.target))], value=simplify.visit(value)))
            continue
        lowered_target = lower.lower(target)  # a write into an argument's tangent
        if isinstance(lowered_target, _Zero):
            raise RuleError(f"tangent rule for {rule.name}: writes into the tangent of an argument that has none")
        lowered_target = simplify.visit(lowered_target)
        lowered_target.ctx = gast.Store()
        out.append(gast.Assign(targets=[lowered_target], value=simplify.visit(_materialize(value))))
    return out


def _load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)

"""SSA: the normalized `gast` function to the typed IR, every name assigned once.

Guarantees: every `Var` has one definition; a name assigned in both branches of an `if` becomes an
`If` output; plain copies (`y = x`) and constant indexing of a tuple display are resolved
statically (no statement); free names become `Global`s with their values; every statement has a Loc.

    x = x * 2          x_2 = x * 2
    if c: y = x        if c: yield y <- x_2
    else: y = 0.0      else: yield y <- 0.0
"""
from __future__ import annotations

import inspect
import operator
import types

import gast

from . import fence, frontend, ir, registry
from .errors import CompileError, MissingRuleError, UnsupportedSyntaxError
from .frontend import Source, SourceError
from .naming import Namer

RETURN = "<return>"

BINARY = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv,
    gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod, gast.Pow: operator.pow,
    gast.MatMult: operator.matmul, gast.BitAnd: operator.and_, gast.BitOr: operator.or_,
    gast.BitXor: operator.xor, gast.LShift: operator.lshift, gast.RShift: operator.rshift,
}
COMPARE = {
    gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Is: operator.is_, gast.IsNot: operator.is_not,
}
UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
         gast.Invert: operator.invert}
CONTAINS = ir.Prim("in")
NOT_CONTAINS = ir.Prim("not in")


LIBRARIES = {"numpy", "scipy", "math", "builtins", "operator", "functools", "itertools"}


class SSABuilder:
    def __init__(self, source: Source, namer: Namer, normalized, own=None, inlining=frozenset()):
        self.source = source
        self.namer = namer
        fn = source.node
        self.locals = {a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        for node in gast.walk(normalized):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.locals.add(node.id)
        self.load_counts = _loads(normalized)
        self.own = own  # for an inlined function: the names its normalize pass introduced
        self.inlining = inlining  # functions being inlined around this one (recursion check)
        self.seen: set[str] = set()
        self.env: dict = {}
        self.tuples: dict = {}  # Var -> operands of the tuple display that defined it

    def version(self, name: str, kind: str = "num") -> ir.Var:
        """The next SSA version of a user (or normalize) name: `x`, then `x_2`, `x_3`, ..."""
        if name not in self.seen and (self.own is None or name in self.own):
            self.seen.add(name)
            self.namer.reserve(name)
            return ir.Var(name, kind)
        self.seen.add(name)
        return ir.Var(self.namer.fresh(name), kind)

    # -- calls to user functions ---------------------------------------------------------------
    def inlinable(self, prim) -> bool:
        func = frontend._unwrap(prim) if callable(prim) else prim
        return (isinstance(func, types.FunctionType) and registry.lookup(prim) is None
                and registry.lookup(func) is None
                and (func.__module__ or "").split(".")[0] not in LIBRARIES)

    def inline(self, prim, args: list, kwargs: dict, callee, at, out: list):
        """Splice the IR of a called user function in place of the call; returns its result."""
        func = frontend._unwrap(prim)
        name = callee.path if callee else func.__name__
        if func in self.inlining or func is frontend._unwrap(self.source.func):
            raise CompileError(f"the recursive call to `{name}` cannot be differentiated; write the "
                               "recursion as a loop", self.loc(at))
        try:
            source = frontend.read_function(func)
        except SourceError as exc:
            raise MissingRuleError(f"cannot compile the call to `{name}`: {exc}. Register a rule with "
                                   f"`@adjoint({name})`", self.loc(at)) from None
        fence.check(source)
        from .normalize import normalize

        sub_namer = Namer(self.namer.used)
        normalized = normalize(source, sub_namer)
        own = sub_namer.used - self.namer.used
        self.namer.used |= sub_namer.used
        sig = inspect.signature(func)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise CompileError(f"in the call to `{name}`: {exc}", self.loc(at)) from None
        sub = SSABuilder(source, self.namer, normalized, own,
                         self.inlining | {frontend._unwrap(self.source.func)})
        for pname, param in sig.parameters.items():
            if pname in bound.arguments:
                sub.env[pname] = bound.arguments[pname]
            elif isinstance(param.default, (int, float, complex, bool, str, type(None))):
                sub.env[pname] = ir.Const(param.default)
            else:
                label = self.namer.fresh(f"{func.__name__}_{pname}_default")
                sub.env[pname] = ir.Global(label, param.default, param.default)
        out.extend(sub.block(normalized.body))
        return sub.env[RETURN]

    def loc(self, node):
        return self.source.loc(node)

    # -- operands ----------------------------------------------------------------------------
    def operand(self, e, allow_dict: bool = False):
        if isinstance(e, gast.Constant):
            return ir.Const(e.value)
        if isinstance(e, gast.Name):
            if e.id in self.env:
                value = self.env[e.id]
                if isinstance(value, _Dict) and not allow_dict:
                    raise UnsupportedSyntaxError(f"the dict `{e.id}` may only be read with constant keys "
                                                 f"(`{e.id}['key']`)", self.loc(e))
                return value
            if e.id in self.locals:
                raise CompileError(f"`{e.id}` may be used before it is assigned (it is not assigned on "
                                   "every path that reaches here)", self.loc(e))
            found, value = self.source.lookup(e.id)
            if not found:
                raise CompileError(f"name `{e.id}` is not defined", self.loc(e))
            return ir.Global(e.id, value, value)
        if isinstance(e, gast.Attribute):
            base = self.operand(e.value)
            if isinstance(base, ir.Global):
                try:
                    return ir.Global(f"{base.path}.{e.attr}", getattr(base.value, e.attr), base.root_value)
                except AttributeError:
                    raise CompileError(f"`{base.path}` has no attribute `{e.attr}`", self.loc(e)) from None
        raise AssertionError(f"normalize left a non-atom operand: {gast.dump(e)}")

    def index(self, e):
        if isinstance(e, gast.Slice):
            return ir.Struct("slice", tuple(ir.Const(None) if p is None else self.operand(p)
                                            for p in (e.lower, e.upper, e.step)))
        if isinstance(e, gast.Tuple):
            return ir.Struct("tuple", tuple(self.index(x) for x in e.elts))
        return self.operand(e)

    def is_atom(self, e) -> bool:
        return isinstance(e, (gast.Constant, gast.Name)) or (
            isinstance(e, gast.Attribute) and self.is_atom(e.value) and
            isinstance(self.operand(e.value), ir.Global))

    # -- operations --------------------------------------------------------------------------
    def operation(self, e):
        """(prim, args, kwargs, callee) for a one-operation expression."""
        if isinstance(e, gast.BinOp):
            left, right = self.operand(e.left), self.operand(e.right)
            if isinstance(e.op, gast.Add) and _kind(left) == "seq" and _kind(right) == "seq":
                return ir.CONCAT, [left, right], {}, None
            if isinstance(e.op, gast.Mult) and "seq" in (_kind(left), _kind(right)):
                seq, count = (left, right) if _kind(left) == "seq" else (right, left)
                return ir.REPEAT, [seq, count], {}, None
            return BINARY[type(e.op)], [left, right], {}, None
        if isinstance(e, gast.UnaryOp):
            return UNARY[type(e.op)], [self.operand(e.operand)], {}, None
        if isinstance(e, gast.Compare):
            left, right, op = self.operand(e.left), self.operand(e.comparators[0]), type(e.ops[0])
            if op in (gast.In, gast.NotIn):
                return (CONTAINS if op is gast.In else NOT_CONTAINS), [right, left], {}, None
            return COMPARE[op], [left, right], {}, None
        if isinstance(e, gast.Subscript):
            return operator.getitem, [self.operand(e.value), self.index(e.slice)], {}, None
        if isinstance(e, gast.Tuple):
            return ir.BUILD_TUPLE, [self.operand(x) for x in e.elts], {}, None
        if isinstance(e, gast.List):
            return ir.BUILD_LIST, [self.operand(x) for x in e.elts], {}, None
        if isinstance(e, gast.Attribute):
            return ir.Attr(e.attr), [self.operand(e.value)], {}, None
        if isinstance(e, gast.Call):
            args = [self.operand(a) for a in e.args]
            kwargs = {kw.arg: self.operand(kw.value) for kw in e.keywords}
            func = e.func
            if isinstance(func, gast.Attribute) and not isinstance(self.operand_or_none(func), ir.Global):
                return ir.Method(func.attr), [self.operand(func.value)] + args, kwargs, None
            callee = self.operand(func)
            if not isinstance(callee, ir.Global):
                raise UnsupportedSyntaxError("calling a value computed inside the differentiated "
                                             "function is not supported; call the function by name",
                                             self.loc(e))
            return callee.value, args, kwargs, callee
        raise AssertionError(f"normalize left an unexpected expression: {gast.dump(e)}")

    def operand_or_none(self, e):
        try:
            return self.operand(e) if self.is_atom(e) else None
        except CompileError:
            return None

    # -- statements --------------------------------------------------------------------------
    def block(self, stmts) -> list:
        out: list = []
        for s in stmts:
            self.stmt(s, out)
        return out

    def stmt(self, s, out: list) -> None:
        if isinstance(s, gast.Assign):
            self.assign(s.targets[0].id, s.value, s, out)
        elif isinstance(s, gast.Expr):
            prim, args, kwargs, callee = self.operation(s.value)
            if self.inlinable(prim):
                self.inline(prim, args, kwargs, callee, s, out)
            else:
                out.append(ir.Assign(None, prim, args, kwargs, self.loc(s), callee))
        elif isinstance(s, gast.Return):
            self.env[RETURN] = self.operand(s.value)
        elif isinstance(s, gast.If):
            self.branch(s, out)
        elif isinstance(s, (gast.For, gast.While)):
            self.loop(s, out)
        else:
            raise AssertionError(f"normalize left an unexpected statement: {type(s).__name__}")

    def assign(self, name: str, value, at, out: list) -> None:
        if self.is_atom(value):
            self.env[name] = self.operand(value)  # a copy: no statement
            return
        if isinstance(value, gast.Dict):
            self.env[name] = _Dict({k.value: self.operand(v) for k, v in zip(value.keys, value.values)})
            return
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                and isinstance(self.env.get(value.value.id), _Dict):
            table = self.env[value.value.id]
            if not (isinstance(value.slice, gast.Constant) and value.slice.value in table.items):
                raise UnsupportedSyntaxError(f"the dict `{value.value.id}` may only be read with one of its "
                                             f"constant keys {sorted(map(repr, table.items))}", self.loc(at))
            self.env[name] = table.items[value.slice.value]
            return
        prim, args, kwargs, callee = self.operation(value)
        if self.inlinable(prim):
            self.env[name] = self.inline(prim, args, kwargs, callee, at, out)
            return
        if prim is operator.getitem and args[0] in self.tuples and isinstance(args[1], ir.Const) \
                and isinstance(args[1].value, int):
            items = self.tuples[args[0]]
            if -len(items) <= args[1].value < len(items):
                self.env[name] = items[args[1].value]
                return
        kind = "seq" if prim in (ir.BUILD_TUPLE, ir.BUILD_LIST, ir.CONCAT, ir.REPEAT) else "num"
        if prim is operator.getitem and isinstance(args[0], ir.Var) and args[0].kind != "num":
            kind = "any"
        target = self.version(name, kind)
        if prim is ir.BUILD_TUPLE:
            self.tuples[target] = args
        out.append(ir.Assign(target, prim, args, kwargs, self.loc(at), callee))
        self.env[name] = target

    def branch(self, s, out: list) -> None:
        cond = self.operand(s.test)
        before = self.env
        self.env = dict(before)
        body = self.block(s.body)
        env_body, self.env = self.env, dict(before)
        orelse = self.block(s.orelse)
        env_orelse = self.env
        merged = {k: v for k, v in before.items()}
        outputs, body_results, orelse_results = [], [], []
        for name in sorted(set(env_body) & set(env_orelse), key=_order(env_body, env_orelse)):
            a, b = env_body[name], env_orelse[name]
            if a is b:
                merged[name] = a
                continue
            kind = a.kind if isinstance(a, ir.Var) and isinstance(b, ir.Var) and a.kind == b.kind else (
                "num" if _numeric(a) and _numeric(b) else "any")
            out_var = ir.Var(self.namer.fresh("result"), kind) if name == RETURN else self.version(name, kind)
            outputs.append(out_var)
            body_results.append(a)
            orelse_results.append(b)
            merged[name] = out_var
        self.env = merged
        out.append(ir.If(cond, body, orelse, outputs, body_results, orelse_results, self.loc(s)))


    def loop(self, s, out: list) -> None:
        is_for = isinstance(s, gast.For)
        body_nodes = list(s.body)
        cond_nodes: list = []
        if not is_for:
            cond_nodes, body_nodes = body_nodes[:s.cond_len], body_nodes[s.cond_len + 1:]
        if s.stop_flag:
            body_nodes = body_nodes[:-1]
        assigned = _stored(cond_nodes + body_nodes)
        target_name = s.target.id if is_for else None
        outside = self.reads_outside(s)
        exposed = _exposed(cond_nodes + body_nodes, {target_name} if is_for else set())
        carried = [n for n in assigned if n != target_name and (n in self.env or n in outside or n in exposed)]
        before = self.env
        params = []
        for n in carried:
            init = before.get(n, ir.Const(None))
            params.append(self.version(n, init.kind if isinstance(init, ir.Var) else
                                       ("num" if _numeric(init) else "any")))
        inits = [before.get(n, ir.Const(None)) for n in carried]
        self.env = dict(before)
        self.env.update(zip(carried, params))
        loop = ir.Loop("for" if is_for else "while", params, inits, [], [], self.loc(s))
        if is_for:
            loop.iterable = self.operand(s.iter)
            loop.target = self.version(target_name)
            self.env[target_name] = loop.target
        else:
            loop.cond_body = self.block(cond_nodes)
            loop.cond = self.operand(s.cond_atom)
        loop.body = self.block(body_nodes)
        missing = [n for n in carried if n not in self.env]
        if missing:
            raise CompileError(f"`{missing[0]}` is assigned in this loop only on some paths",
                               self.loc(s))
        loop.nexts = [self.env[n] for n in carried]
        for p, nxt in zip(params, loop.nexts):
            if p.kind != (nxt.kind if isinstance(nxt, ir.Var) else ("num" if _numeric(nxt) else "any")):
                p.kind = "any"
        if s.stop_flag:
            loop.stop = self.env[s.stop_flag]
        loop.trips = ir.Var(self.namer.fresh(f"{target_name or 'while'}_trips"))
        self.env = dict(before)
        self.env.update(zip(carried, params))
        for n in set(assigned) | ({target_name} if is_for else set()):
            if n not in carried:
                self.env.pop(n, None)
        out.append(loop)

    def reads_outside(self, node) -> set:
        inside = _loads(node)
        return {n for n, count in self.load_counts.items() if count > inside.get(n, 0)}


def _loads(node) -> dict:
    counts: dict = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _stored(stmts) -> dict:
    """Names assigned in `stmts` (nested blocks included), in order of first assignment."""
    out: dict = {}
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out.setdefault(n.id, None)
    return out


def _exposed(stmts, assigned: set) -> set:
    """Names read in `stmts` before they are certainly assigned there (read from a previous
    iteration when `stmts` is a loop body)."""
    out: set = set()
    assigned = set(assigned)
    for s in stmts:
        if isinstance(s, gast.Assign):
            out |= set(_loads(s.value)) - assigned
            assigned.add(s.targets[0].id)
        elif isinstance(s, gast.If):
            out |= set(_loads(s.test)) - assigned
            a_body, a_else = set(assigned), set(assigned)
            out |= _exposed(s.body, a_body) | _exposed(s.orelse, a_else)
            assigned |= _certain(s.body, assigned) & _certain(s.orelse, assigned)
        elif isinstance(s, gast.For):
            out |= set(_loads(s.iter)) - assigned
            out |= _exposed(s.body, assigned | {s.target.id})
        elif isinstance(s, gast.While):
            out |= _exposed(s.body, set(assigned))
        else:
            out |= set(_loads(s)) - assigned
    return out


def _certain(stmts, assigned: set) -> set:
    got = set(assigned)
    for s in stmts:
        if isinstance(s, gast.Assign):
            got.add(s.targets[0].id)
        elif isinstance(s, gast.If):
            got |= _certain(s.body, got) & _certain(s.orelse, got)
    return got


class _Dict:
    """A dict display: resolved statically, it never reaches the IR."""

    def __init__(self, items: dict):
        self.items = items


def _kind(op) -> str:
    if isinstance(op, ir.Var):
        return op.kind
    if isinstance(op, ir.Const):
        return "seq" if isinstance(op.value, (tuple, list)) else "num"
    if isinstance(op, ir.Global):
        return "seq" if isinstance(op.value, (tuple, list)) else "any"
    return "any"


def _numeric(op) -> bool:
    if isinstance(op, ir.Var):
        return op.kind == "num"
    return isinstance(op, ir.Const) and isinstance(op.value, (int, float, complex))


def _order(*envs):
    """Sort merged names by first appearance, so If outputs are in a deterministic, natural order."""
    position = {}
    for env in envs:
        for i, k in enumerate(env):
            position.setdefault(k, i)
    return lambda k: position[k]


def build(source: Source, normalized: gast.FunctionDef, namer: Namer, kinds: dict) -> ir.Function:
    """The IR of a normalized function; `kinds` maps parameter names to 'num' or 'seq'."""
    fn = source.node
    param_names = [a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    builder = SSABuilder(source, namer, normalized)
    params = []
    for p in param_names:
        var = builder.version(p, kinds.get(p, "num"))
        builder.env[p] = var
        params.append(var)
    body = builder.block(normalized.body)
    return ir.Function(fn.name, params, body, builder.env[RETURN], source.loc(fn))

"""Normalize: one operation per statement, control flow made explicit, one return at the end.

Guarantees on the output `gast.FunctionDef`:
- every `Assign` has one `Name` target and a value that is an atom (`Name`, `Constant`, a global
  path like `np.pi`) or one operation whose operands are atoms (indices keep slice/tuple structure);
- conditional expressions, `and`/`or` and comparison chains become `if` statements;
- tuple targets become indexing, `x op= e` becomes `x = x op e`;
- every path ends in exactly one `return <atom>`, and nothing follows a `return`.

    y = np.sin(x * w) + b     ->   x_times_w = x * w
                                   sin_x_times_w = np.sin(x_times_w)
                                   y = sin_x_times_w + b
"""
from __future__ import annotations

import gast

from . import astwalk
from .errors import MutationError, UnsupportedSyntaxError
from .frontend import Source
from .functions import FunctionNode, local_names, scope_walk
from .naming import Namer
from .python_lowering import PythonLowering

OP_WORDS = {
    gast.Add: "plus", gast.Sub: "minus", gast.Mult: "times", gast.Div: "over", gast.Pow: "pow",
    gast.MatMult: "matmul", gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.BitAnd: "and",
    gast.BitOr: "or", gast.BitXor: "xor", gast.LShift: "lshift", gast.RShift: "rshift",
    gast.Lt: "lt", gast.LtE: "le", gast.Gt: "gt", gast.GtE: "ge", gast.Eq: "eq", gast.NotEq: "ne",
    gast.Is: "is", gast.IsNot: "is_not", gast.In: "in", gast.NotIn: "not_in",
    gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not", gast.Invert: "invert",
}


def name(id_: str, store: bool = False) -> gast.Name:
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def assign(target: str, value, at) -> gast.Assign:
    return gast.copy_location(gast.Assign(targets=[name(target, True)], value=value, type_comment=None), at)


def hint(e, is_global=lambda e: False) -> str:
    """A readable name for the value of `e` (whose operands are atoms)."""
    def h(x):
        return hint(x, is_global)

    if isinstance(e, gast.Name):
        return e.id
    if isinstance(e, FunctionNode):
        return e.display
    if isinstance(e, gast.Constant):
        v = e.value
        return str(v) if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 100 else "c"
    if isinstance(e, gast.Attribute):
        return f"{h(e.value)}_{e.attr}"
    if isinstance(e, gast.BinOp):
        return _short(f"{h(e.left)}_{OP_WORDS[type(e.op)]}_{h(e.right)}", OP_WORDS[type(e.op)])
    if isinstance(e, gast.UnaryOp):
        return _short(f"{OP_WORDS[type(e.op)]}_{h(e.operand)}", OP_WORDS[type(e.op)])
    if isinstance(e, gast.Compare):
        word = OP_WORDS[type(e.ops[0])]
        return _short(f"{h(e.left)}_{word}_{h(e.comparators[0])}", word)
    if isinstance(e, gast.Call):
        fname = e.func.attr if isinstance(e.func, gast.Attribute) else h(e.func)
        if isinstance(e.func, gast.Attribute) and not is_global(e.func.value):
            return _short(f"{h(e.func.value)}_{fname}", fname)
        return _short(f"{fname}_{h(e.args[0])}", fname) if e.args else fname
    if isinstance(e, gast.Subscript):
        idx = e.slice
        if isinstance(idx, (gast.Name, gast.Constant)):
            return _short(f"{h(e.value)}_{h(idx)}", f"{h(e.value)}_item")
        return _short(f"{h(e.value)}_slice", "item")
    if isinstance(e, (gast.Tuple, gast.List)):
        return "tup" if isinstance(e, gast.Tuple) else "lst"
    return "t"


SET_FIELD = "__set_field__"  # `obj.name = v`, as normalize spells it: ssa.SSABuilder.set_field


def _names_read(e) -> set:
    """Every name `e` loads (inside its comprehensions and lambdas too)."""
    return {n.id for n in astwalk.walk(e) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _by_position(node):
    """Mark the item a loop reads by position (`xs[k]` for `for x in xs`): for a dict, ssa reads
    its k-th key instead, as iterating a dict does."""
    node.by_position = True
    return node


def _eager_names(e) -> list:
    """The Name nodes `e` reads when it is evaluated (not those inside a lambda or a comprehension,
    which are read when it runs)."""
    if isinstance(e, gast.Name):
        return [e] if isinstance(e.ctx, gast.Load) else []
    if isinstance(e, (gast.Lambda, gast.GeneratorExp, gast.ListComp, gast.SetComp, gast.DictComp)):
        return []
    return [n for child in gast.iter_child_nodes(e) for n in _eager_names(child)]


def _short(full: str, fallback: str) -> str:
    return full if len(full) <= 20 else fallback


_RESIZING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear"}


class Normalizer(PythonLowering):
    def __init__(self, source: Source, namer: Namer):
        self.source = source
        self.namer = namer
        fn = source.node
        nodes = list(astwalk.walk(fn))  # (walked once: the scans below read these lists)
        scoped = list(scope_walk(fn))
        for node in nodes:  # (nested functions' names too: their locals get names of their own)
            if isinstance(node, gast.Name):
                namer.reserve(node.id)
        self.locals = local_names(fn, scoped)  # this function's own scope (a nested def's names are its own)
        self.outer = set(source.outer)  # a nested function's free names bound in an enclosing function
        self.scan_scope(fn, scoped)
        self.current = fn
        for n in self.locals:
            namer.reserve(n)
        self.counters = _range_counters(fn, nodes)
        self.made_here = _made_here(fn, nodes)
        self.callees: dict = {}  # id of a callee node -> (the node, the value it names)

    def temp(self, base: str) -> str:
        tmp = self.namer.fresh(base)
        self.locals.add(tmp)
        return tmp

    def hint(self, e) -> str:
        return hint(e, self.is_global_path)

    # -- expressions -------------------------------------------------------------------------
    def is_global_path(self, e) -> bool:
        if isinstance(e, gast.Name):
            return e.id not in self.locals and e.id not in self.outer
        return isinstance(e, gast.Attribute) and self.is_global_path(e.value) and not self.is_property(e)

    def is_property(self, e) -> bool:
        """`obj.name` on a global object of a user's class whose `name` is a property: computed (its
        getter is inlined), not a value to read when compiling."""
        import inspect
        import types

        base = self.callee_value(e.value)
        if base is None or isinstance(base, (type, types.ModuleType)):
            return False
        return isinstance(inspect.getattr_static(type(base), e.attr, None), property)

    def atom(self, e, out: list):
        """Evaluate `e` into `out`; return a Name, Constant or global path."""
        if isinstance(e, (gast.Constant, gast.Name)) or self.is_global_path(e):
            return e
        value = self.simple(e, out)
        if isinstance(value, (gast.Name, gast.Constant)) or self.is_global_path(value):
            return value
        tmp = self.temp(self.hint(value))
        out.append(assign(tmp, value, e if getattr(e, "lineno", None) else self.current))
        return name(tmp)

    def simple(self, e, out: list, target: str | None = None):
        """Evaluate the operands of `e` into `out`; return one operation over atoms."""
        if isinstance(e, (gast.Name, gast.Constant)) or self.is_global_path(e):
            return e
        if isinstance(e, gast.Attribute):
            return gast.Attribute(value=self.atom(e.value, out), attr=e.attr, ctx=gast.Load())
        if isinstance(e, gast.BinOp):
            formatted = self.string_method(e, out)  # `'%.3f' % x`
            if formatted is not None:
                return formatted
            return gast.BinOp(left=self.atom(e.left, out), op=e.op, right=self.atom(e.right, out))
        if isinstance(e, gast.UnaryOp):
            if (isinstance(e.op, (gast.USub, gast.UAdd)) and isinstance(e.operand, gast.Constant)
                    and isinstance(e.operand.value, (int, float, complex))
                    and not isinstance(e.operand.value, bool)):
                v = e.operand.value
                return gast.Constant(value=-v if isinstance(e.op, gast.USub) else v, kind=None)
            return gast.UnaryOp(op=e.op, operand=self.atom(e.operand, out))
        if isinstance(e, gast.Compare):
            if len(e.ops) == 1:
                return gast.Compare(left=self.atom(e.left, out), ops=e.ops,
                                    comparators=[self.atom(e.comparators[0], out)])
            return self.chain(e, out, target)
        if isinstance(e, gast.Call):
            return self.call(e, out)
        if isinstance(e, gast.Subscript):
            made = gast.Subscript(value=self.atom(e.value, out), slice=self.index(e.slice, out), ctx=gast.Load())
            if getattr(e, "by_position", False):
                made.by_position = True  # (an item of a loop over `e.value`: a dict gives its k-th key)
            return made
        if isinstance(e, (gast.Tuple, gast.List)):
            if any(isinstance(x, gast.Starred) for x in e.elts):
                return self.simple(self.unstarred_display(e), out, target)
            elts = [self.atom(x, out) for x in e.elts]
            return type(e)(elts=elts, ctx=gast.Load())
        if isinstance(e, gast.IfExp):
            return self.ifexp(e, out, target)
        if isinstance(e, gast.DictComp):  # `{k: f(v) for k, v in p.items()}`: dict() of a list of pairs
            pairs = gast.copy_location(gast.ListComp(elt=gast.Tuple(elts=[e.key, e.value], ctx=gast.Load()),
                                                     generators=e.generators), e)
            return self.simple(gast.copy_location(gast.Call(func=name("dict"), args=[pairs], keywords=[]), e), out,
                               target)
        if isinstance(e, (gast.ListComp, gast.GeneratorExp)):
            return self.comprehension(e, out, target)
        if isinstance(e, gast.Dict):
            if not all(isinstance(k, gast.Constant) for k in e.keys):
                raise UnsupportedSyntaxError("dict displays need constant keys", self.source.loc(e))
            return gast.Dict(keys=e.keys, values=[self.atom(v, out) for v in e.values])
        if isinstance(e, gast.BoolOp):
            return self.boolop(e, out, target)
        if isinstance(e, gast.Lambda):
            return self.function_node(e, out, "lambda")
        if isinstance(e, FunctionNode):
            return e
        if isinstance(e, gast.JoinedStr):
            return self.fstring(e, out)
        raise UnsupportedSyntaxError(
            f"{type(e).__name__} expressions are not supported in a differentiated function",
            self.source.loc(e))

    def comprehension(self, e, out, target):
        """`[f(x) for x in xs if c]` is a loop appending to a new list (generators are made lists)."""
        result = target or self.temp("items")
        renames = {}
        for gen in e.generators:
            if getattr(gen, "is_async", 0):
                raise UnsupportedSyntaxError("async comprehensions are not supported", self.source.loc(e))
            for n in astwalk.walk(gen.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.temp(n.id)
        e = _Rename(renames).visit(astwalk.clone(e))
        stmt = gast.copy_location(gast.Assign(targets=[name(result, True)], value=gast.BinOp(
            left=name(result), op=gast.Add(), right=gast.List(elts=[e.elt], ctx=gast.Load())),
            type_comment=None), e)
        for gen in reversed(e.generators):
            for cond in reversed(gen.ifs):
                stmt = gast.copy_location(gast.If(test=cond, body=[stmt], orelse=[]), e)
            stmt = gast.copy_location(gast.For(target=gen.target, iter=gen.iter, body=[stmt], orelse=[],
                                               type_comment=None), e)
        out.append(assign(result, gast.List(elts=[], ctx=gast.Load()), e))
        self.stmt(stmt, out)
        return name(result)

    def call(self, e, out):
        lowered = self.vectorize_call(e, out) or self.piecewise_call(e, out)
        if lowered is not None:
            return lowered
        lowered = self.python_call(e, out)
        if lowered is None:
            lowered = self.fill_call(e, out) or self.inplace_call(e, out) or self.where_call(e, out) \
                or self.out_call(e, out)
        if lowered is not None:
            return lowered
        func = e.func
        if not self.is_global_path(func):
            if isinstance(func, gast.Attribute):
                func = gast.Attribute(value=self.atom(func.value, out), attr=func.attr, ctx=gast.Load())
            elif not isinstance(func, gast.Name):
                func = self.atom(func, out)
        args = [self.atom(a, out) for a in e.args]
        keywords = []
        for kw in e.keywords:
            if kw.arg is None:
                raise UnsupportedSyntaxError("`**kwargs` in a call is not supported", self.source.loc(kw.value))
            keywords.append(gast.keyword(arg=kw.arg, value=self.atom(kw.value, out)))
        return gast.Call(func=func, args=args, keywords=keywords)

    def index(self, e, out):
        if isinstance(e, gast.Slice):
            parts = [None if p is None else self.atom(p, out) for p in (e.lower, e.upper, e.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(e, gast.Tuple):
            return gast.Tuple(elts=[self.index(x, out) for x in e.elts], ctx=gast.Load())
        return self.atom(e, out)

    def _branch_value(self, e, target: str):
        block: list = []
        value = self.simple(e, block, target)
        block.append(assign(target, value, e))
        return block

    def ifexp(self, e, out, target):
        target = target or self.temp("cond_value")
        test = self.atom(e.test, out)
        out.append(gast.copy_location(gast.If(test=test, body=self._branch_value(e.body, target),
                                              orelse=self._branch_value(e.orelse, target)), e))
        return name(target)

    def boolop(self, e, out, target):
        """`a and b` is `b if a else a`; `a or b` is `a if a else b`; operands evaluated lazily."""
        target = target or self.temp("and_value" if isinstance(e.op, gast.And) else "or_value")
        first = self.simple(e.values[0], out)
        out.append(assign(target, first, e))
        rest = e.values[1:]
        later = rest[0] if len(rest) == 1 else gast.copy_location(gast.BoolOp(op=e.op, values=rest), e)
        branch = self._branch_value(later, target)
        body, orelse = (branch, []) if isinstance(e.op, gast.And) else ([], branch)
        out.append(gast.copy_location(gast.If(test=name(target), body=body, orelse=orelse), e))
        return name(target)

    def chain(self, e, out, target):
        """`a < b < c` is `(a < b) and (b < c)` with `b` evaluated once."""
        target = target or self.temp("cmp_value")
        left = self.atom(e.left, out)
        block = out
        for i, (op, right) in enumerate(zip(e.ops, e.comparators)):
            right = self.atom(right, block)
            block.append(assign(target, gast.Compare(left=left, ops=[op], comparators=[right]), e))
            if i < len(e.ops) - 1:
                nxt: list = []
                block.append(gast.copy_location(gast.If(test=name(target), body=nxt, orelse=[]), e))
                block, left = nxt, right
        return name(target)

    # -- statements --------------------------------------------------------------------------
    def popped_list(self, value):
        """The local list `xs` of `xs.pop()` (no arguments: the last item), else None."""
        if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "pop"
                and isinstance(value.func.value, gast.Name) and value.func.value.id in self.locals
                and not value.args and not value.keywords):
            return value.func.value.id
        return None

    def pop_last(self, seq: str, at, out: list) -> None:
        """`xs.pop()` removes the last item: `xs` rebinds to `xs[:-1]`, a new list (as `append`
        rebinds to `xs + [v]`), so earlier versions stay intact; ssa checks nothing else holds it."""
        before = len(out)
        self.stmt(gast.copy_location(gast.Assign(targets=[name(seq, True)], value=gast.Subscript(
            value=name(seq), slice=gast.Slice(lower=None, upper=gast.Constant(value=-1, kind=None), step=None),
            ctx=gast.Load()), type_comment=None), at), out)
        out[-1].in_place = len(out) > before
        out[-1].list_method = "pop" if len(out) > before else None

    def block(self, stmts) -> list:
        out: list = []
        for s in stmts:
            self.stmt(s, out)
        return out

    def stmt(self, s, out: list) -> None:
        if getattr(s, "lineno", None):
            self.current = s
        loc = self.source.loc
        if isinstance(s, (gast.Assign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            if s.value is None:
                return
            single = targets[0].id if len(targets) == 1 and isinstance(targets[0], gast.Name) else None
            popped = self.popped_list(s.value)
            if popped is not None:  # `v = xs.pop()`: `v = xs[-1]`, then `xs` rebinds to `xs[:-1]`
                self.stmt(gast.copy_location(gast.Assign(targets=targets, value=gast.Subscript(
                    value=name(popped), slice=gast.Constant(value=-1, kind=None), ctx=gast.Load()),
                    type_comment=None), s), out)
                self.pop_last(popped, s, out)
                return
            if single is not None and self.bind_stream(single, s.value, s, out):
                return  # `it = map(...)`, read once: a list
            if len(targets) == 1 and isinstance(targets[0], (gast.Tuple, gast.List)) \
                    and any(isinstance(t, gast.Starred) for t in targets[0].elts):
                self.unpack_starred(targets[0], s.value, s, out)
                return
            if len(targets) == 1 and isinstance(targets[0], gast.Subscript):
                base = self.write_base(targets[0], s, out)
                index = self.index(targets[0].slice, out)
                out.append(self.write(base, index, self.atom(s.value, out), s))
                return
            # (a lowering may bind its target before it reads the rest of the expression: so the
            # target is its scratch name only when the expression does not read it, as in
            # `h = [v * 2 for v in h]` or `s = c and s * 3`)
            scratch = single if single is not None and single not in _names_read(s.value) else None
            value = self.simple(s.value, out, scratch)
            if single is not None:
                if not (isinstance(value, gast.Name) and value.id == single):
                    out.append(assign(single, value, s))
                return
            if not (isinstance(value, (gast.Name, gast.Constant)) or self.is_global_path(value)):
                tmp = self.temp(self.hint(value))
                out.append(assign(tmp, value, s))
                value = name(tmp)
            for t in targets:
                self.store(t, value, out, s)
        elif isinstance(s, gast.AugAssign):
            if isinstance(s.target, gast.Subscript):
                # `b[i] += v` reads the slots, then writes them: t = b[i]; b[i] = t + v
                base = self.write_base(s.target, s, out)
                index = self.index(s.target.slice, out)
                right = self.atom(s.value, out)
                read = self.atom(gast.copy_location(gast.Subscript(value=base, slice=index, ctx=gast.Load()),
                                                    s), out)
                new = self.atom(gast.copy_location(gast.BinOp(left=read, op=s.op, right=right), s), out)
                if out and isinstance(out[-1], gast.Assign) and isinstance(base, gast.Name):
                    # Python runs `read op= right` on the item itself: an array held in a list is
                    # updated in place (ssa checks nothing else holds it)
                    out[-1].item_update_of = base.id
                out.append(self.write(base, index, new, s))
                return
            if isinstance(s.target, gast.Attribute) and isinstance(s.target.value, gast.Name):
                # `obj.u op= e` is `t = obj.u; t op= e; obj.u = t`: what Python runs (an array
                # updated in place, then the field set to it; a number rebound)
                field = self.temp(f"{s.target.value.id}_{s.target.attr}")
                out.append(assign(field, gast.Attribute(value=s.target.value, attr=s.target.attr, ctx=gast.Load()), s))
                self.stmt(gast.copy_location(gast.AugAssign(target=name(field, True), op=s.op, value=s.value), s), out)
                self.store(gast.Attribute(value=s.target.value, attr=s.target.attr, ctx=gast.Store()), name(field), out, s)
                return
            if not isinstance(s.target, gast.Name):
                raise UnsupportedSyntaxError("augmented assignment into an attribute is not supported",
                                             loc(s))
            right = self.atom(s.value, out)
            rebind = assign(s.target.id, gast.BinOp(left=name(s.target.id), op=s.op, right=right), s)
            rebind.in_place = True  # NumPy updates an array in place: ssa checks no other name shares it
            # (a list `+=` a tuple, a range, ... extends it, where `xs + (a, b)` raises)
            rebind.extends = isinstance(s.op, gast.Add) and not isinstance(s.value, (gast.List, gast.ListComp))
            out.append(rebind)
        elif isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant):
                return  # docstring or bare literal
            call = s.value
            if self.popped_list(call) is not None:
                self.pop_last(self.popped_list(call), s, out)
                return
            if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                    and call.func.attr in ("append", "extend") and isinstance(call.func.value, gast.Name)
                    and call.func.value.id in self.locals and len(call.args) == 1 and not call.keywords):
                # `xs.append(v)` rebinds `xs` to `xs + [v]`, `xs.extend(ys)` to `xs + list(ys)` (a
                # display: `xs + [a, b]`): a new list, so earlier versions stay intact
                seq, arg = call.func.value.id, call.args[0]
                if call.func.attr == "append":
                    item = gast.List(elts=[arg], ctx=gast.Load())
                elif isinstance(arg, (gast.List, gast.Tuple)):
                    item = gast.List(elts=list(arg.elts), ctx=gast.Load())
                else:
                    item = gast.Call(func=name("list"), args=[arg], keywords=[])
                before = len(out)
                self.stmt(gast.copy_location(gast.Assign(targets=[name(seq, True)], value=gast.BinOp(
                    left=name(seq), op=gast.Add(), right=item), type_comment=None), s), out)
                out[-1].in_place = len(out) > before
                out[-1].list_method = call.func.attr if len(out) > before else None  # (ssa: `seq` is a list)
                return
            if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "sort"
                    and isinstance(call.func.value, gast.Name) and call.func.value.id in self.locals
                    and not call.args and call.keywords and {k.arg for k in call.keywords} <= {"key", "reverse"}):
                # `xs.sort(key=..., reverse=...)` (a list's: an array's sort takes neither) rebinds
                # `xs` to `sorted(xs, key=..., reverse=...)`, as `append` does to a new list
                seq = call.func.value.id
                before = len(out)
                self.stmt(gast.copy_location(gast.Assign(targets=[name(seq, True)], value=gast.Call(
                    func=name("sorted"), args=[name(seq)], keywords=call.keywords), type_comment=None), s), out)
                out[-1].in_place = len(out) > before
                out[-1].list_method = "sort" if len(out) > before else None
                return
            if isinstance(call, gast.Call) and self.is_copyto(call) and len(call.args) >= 2 \
                    and self.stream_of(call.args[1]) is not None:
                # copyto(b, <generator, map, islice, iter, ...>) fills b's slots in C order from slot 0
                items = self.stream_list(call.args[1], out)
                stream = gast.Call(func=name(COPYTO_ITEMS), args=[call.args[0], items], keywords=[])
                s = gast.copy_location(gast.Expr(value=stream), s)
                if call.keywords or len(call.args) > 2:
                    raise UnsupportedSyntaxError("copyto from an iterator takes no `where`", loc(s))
            value = self.simple(s.value, out)
            if isinstance(value, gast.Call):
                out.append(gast.copy_location(gast.Expr(value=value), s))
        elif self.python_stmt(s, out):
            return
        elif isinstance(s, gast.If) and self.guard_branches(s) is not None:
            guard, rest = self.guard_branches(s)
            self.stmt(guard, out)
            for t in rest:
                self.stmt(t, out)
        elif isinstance(s, gast.If):
            test = self.atom(s.test, out)
            out.append(gast.copy_location(gast.If(test=test, body=self.block(s.body),
                                                  orelse=self.block(s.orelse)), s))
        elif isinstance(s, gast.Return):
            value = gast.Constant(value=None, kind=None) if s.value is None else self.atom(s.value, out)
            out.append(gast.copy_location(gast.Return(value=value), s))
        elif isinstance(s, gast.Pass):
            return
        elif isinstance(s, gast.Delete):  # `del x`: ssa unbinds the names
            out.append(s)
        elif isinstance(s, (gast.Break, gast.Continue)):
            out.append(s)
        elif isinstance(s, gast.For):
            self.for_loop(s, out)
        elif isinstance(s, gast.While):
            self.while_loop(s, out)
        else:
            raise UnsupportedSyntaxError(f"{type(s).__name__} statements are not supported in a differentiated "
                                         "function", loc(s))

    # -- out= ------------------------------------------------------------------------------------
    def fill_call(self, e, out):
        """`a.fill(v)` of a local array is the write `a[...] = v`, and `a[i:j].fill(v)` of a basic
        index with a slice or `...` (surely a view of `a`) is `a[i:j] = v` (it returns None). (Not
        `a[0].fill(v)`: of a vector that is a NumPy scalar, whose `fill` changes nothing.)"""
        f = e.func
        if not (isinstance(f, gast.Attribute) and f.attr == "fill" and len(e.args) == 1 and not e.keywords):
            return None
        target = f.value
        if isinstance(target, gast.Name) and target.id in self.locals:
            base, index = target, gast.Constant(value=Ellipsis, kind=None)
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and target.value.id in self.locals and _view_index(target.slice):
            base, index = target.value, self.index(target.slice, out)
        else:
            return None
        out.append(self.write(base, index, self.atom(e.args[0], out), e))
        return gast.Constant(value=None, kind=None)

    def vectorize_call(self, e, out):
        """`np.vectorize(f)(x, y)` (or a module-level `g = np.vectorize(f)` called as `g(x, y)`, no
        rule registered for `g`) of a Python function `f`: `f` compiled for each entry,
        `rt.vectorize_result([f(u, v) for u, v in rt.vectorize_items(x, y)], x, y)`. `otypes` is
        accepted; `excluded`, `signature` and keywords at the call are left to the rules (refused)."""
        import numpy as np

        from .python_lowering import VECTORIZE_ITEMS, VECTORIZE_RESULT
        f = e.func
        pyfunc = None
        if isinstance(f, gast.Call) and self.callee_value(f.func) is np.vectorize and len(f.args) == 1 \
                and all(k.arg == "otypes" for k in f.keywords):
            pyfunc = f.args[0]
        else:
            callee = self.callee_value(f)
            if isinstance(callee, np.vectorize):
                from . import registry
                if registry.lookup(callee) is not None or callee.signature is not None or callee.excluded:
                    return None
                pyfunc = gast.Attribute(value=f, attr="pyfunc", ctx=gast.Load())
        if pyfunc is None or not e.args or e.keywords or any(isinstance(a, gast.Starred) for a in e.args):
            return None
        args = [self.atom(a, out) for a in e.args]
        if isinstance(pyfunc, gast.Lambda):
            held = self.temp("vectorized")
            self.stmt(assign(held, pyfunc, e), out)
            pyfunc = name(held)
        entries = [self.temp("v") for _ in args]
        target = name(entries[0], True) if len(args) == 1 else \
            gast.Tuple(elts=[name(v, True) for v in entries], ctx=gast.Store())
        comp = gast.ListComp(elt=gast.Call(func=pyfunc, args=[name(v) for v in entries], keywords=[]),
                             generators=[gast.comprehension(target=target, iter=gast.Call(
                                 func=name(VECTORIZE_ITEMS), args=list(args), keywords=[]), ifs=[], is_async=0)])
        whole = gast.Call(func=name(VECTORIZE_RESULT), args=[gast.copy_location(comp, e)] + list(args), keywords=[])
        return self.call(gast.copy_location(whole, e), out)

    def piecewise_call(self, e, out):
        """`np.piecewise(x, [c0, c1, ...], [f0, f1, ...(, otherwise)])` with list (or tuple) displays:
        NumPy's loop, written out: `y = zeros like x; y[m0] = f0(x[m0]); y[m1] = v1; ...` (a later
        condition overwrites an earlier one; the extra function or value, where none holds), each
        `f` compiled where it is called. Extra arguments to the functions are refused."""
        import numpy as np

        from .python_lowering import PIECEWISE_MASK, PIECEWISE_OTHERWISE, PIECEWISE_ZEROS
        if self.callee_value(e.func) is not np.piecewise or len(e.args) != 3 or e.keywords:
            return None
        x, conds, funcs = e.args
        if not (isinstance(conds, (gast.List, gast.Tuple)) and isinstance(funcs, (gast.List, gast.Tuple))):
            return None
        n = len(conds.elts)
        if len(funcs.elts) not in (n, n + 1) or n == 0:
            return None
        x = self.atom(x, out)
        masks = []
        for c in conds.elts:
            m = self.temp("mask")
            self.stmt(assign(m, gast.Call(func=name(PIECEWISE_MASK), args=[x, c], keywords=[]), e), out)
            masks.append(name(m))
        if len(funcs.elts) == n + 1:
            m = self.temp("otherwise")
            self.stmt(assign(m, gast.Call(func=name(PIECEWISE_OTHERWISE), args=[x] + masks, keywords=[]), e), out)
            masks.append(name(m))
        y = self.temp("piecewise")
        self.stmt(assign(y, gast.Call(func=name(PIECEWISE_ZEROS), args=[x], keywords=[]), e), out)
        for m, f in zip(masks, funcs.elts):
            if isinstance(f, gast.Constant) or (isinstance(f, gast.UnaryOp) and isinstance(f.operand, gast.Constant)):
                value = f
            else:
                value = gast.Call(func=f, args=[gast.Subscript(value=x, slice=m, ctx=gast.Load())], keywords=[])
            self.stmt(gast.copy_location(gast.Assign(targets=[gast.Subscript(value=name(y), slice=m, ctx=gast.Store())],
                                                     value=value, type_comment=None), e), out)
        return name(y)

    def inplace_call(self, e, out):
        """The in-place library calls on a local array, as a write of their pure form (they return
        None): `a.sort(...)` is `a[...] = rt.sorted_copy(a, ...)`, likewise `a.partition(kth)`,
        `a.put(ind, v)` and `np.put(a, ind, v)`, `np.add.at(a, idx, v)`, `np.subtract.at(a, idx, v)`,
        `np.fill_diagonal(a, v)`, `np.put_along_axis(a, idx, v, axis)`, `np.putmask(a, mask, v)`."""
        import numpy as np

        from .python_lowering import (ADDED_AT, DIAGONAL_FILLED, PARTITIONED_COPY, PUT_ALONG_AXIS_COPY, PUT_COPY,
                                      PUTMASK_COPY, SORTED_COPY, SUBTRACTED_AT, UFUNC_AT_COPY)
        f = e.func
        prefix = []  # the ufunc's name, for rt.ufunc_at_copy
        if any(isinstance(a, gast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            return None
        marker, base, args = None, None, list(e.args)
        methods = {"sort": SORTED_COPY, "partition": PARTITIONED_COPY, "put": PUT_COPY}
        if isinstance(f, gast.Attribute) and f.attr in methods and isinstance(f.value, gast.Name) \
                and f.value.id in self.locals:
            marker, base = methods[f.attr], f.value
        else:
            callee = self.callee_value(f)
            found = {id(np.put): PUT_COPY, id(np.fill_diagonal): DIAGONAL_FILLED,
                     id(np.put_along_axis): PUT_ALONG_AXIS_COPY, id(np.putmask): PUTMASK_COPY}
            try:
                if callee == np.add.at:
                    found[id(callee)] = ADDED_AT
                elif callee == np.subtract.at:
                    found[id(callee)] = SUBTRACTED_AT
                else:
                    for ufunc in (np.multiply, np.maximum, np.minimum):
                        if callee == ufunc.at:
                            found[id(callee)] = UFUNC_AT_COPY
                            prefix = [gast.Constant(value=ufunc.__name__, kind=None)]
            except Exception:  # noqa: BLE001 (a callee whose == raises)
                pass
            if callee is None or id(callee) not in found or not args:
                return None
            marker = found[id(callee)]
            base, args = args[0], args[1:]
            if not (isinstance(base, gast.Name) and base.id in self.locals):
                raise UnsupportedSyntaxError("this call writes into its first argument: pass an array of the "
                                             "function's by name (`b = ...; np.add.at(b, idx, v)`)", self.source.loc(e))
        value = gast.Call(func=name(marker), args=prefix + [base] + args, keywords=e.keywords)
        value = self.call(gast.copy_location(value, e), out)
        tmp = self.temp(f"{base.id}_{'sorted' if marker == SORTED_COPY else 'written'}")
        out.append(assign(tmp, value, e))
        out.append(self.write(name(base.id), gast.Constant(value=Ellipsis, kind=None), name(tmp), e))
        out[-1].inplace_call = f.attr if isinstance(f, gast.Attribute) else "at"  # (ssa: not into a list)
        return gast.Constant(value=None, kind=None)

    def where_call(self, e, out):
        """A reduction with `where=` (`np.sum(a, where=m)`, `a.mean(axis=0, where=m)`; and max/min
        with `initial=`) is `rt.where_reduce('sum', a, m, axis, dtype, keepdims, initial)`,
        whose rule gives gradient to the selected entries only. Positional arguments as NumPy's."""
        import numpy as np

        from .python_lowering import WHERE_REDUCE
        f = e.func
        kw = {k.arg: k.value for k in e.keywords}
        if None in kw or any(isinstance(a, gast.Starred) for a in e.args):
            return None
        names = {"sum": ("axis", "dtype", "out", "keepdims", "initial", "where"),
                 "mean": ("axis", "dtype", "out", "keepdims", "where"),
                 "max": ("axis", "out", "keepdims", "initial", "where"),
                 "min": ("axis", "out", "keepdims", "initial", "where")}
        callee = self.callee_value(f)
        functions = {np.sum: "sum", np.mean: "mean", np.max: "max", np.min: "min", np.amax: "max", np.amin: "min"}
        args = list(e.args)
        try:
            kind = functions.get(callee)
        except TypeError:
            kind = None
        if kind is not None:
            if not args:
                return None
            base, args = args[0], args[1:]
        elif isinstance(f, gast.Attribute) and f.attr in names and not self.is_global_path(f):
            kind, base = f.attr, f.value
        else:
            return None
        params = names[kind]
        if len(args) > len(params):
            return None
        bound = dict(zip(params, args))
        if set(bound) & set(kw) or set(kw) - set(params):
            return None
        bound.update(kw)

        def default(key, value) -> bool:
            v = bound.get(key)
            return v is None or (isinstance(v, gast.Constant) and v.value is value)
        if default("where", True) and (kind in ("sum", "mean") or default("initial", None)):
            return None
        if not default("out", None):
            raise UnsupportedSyntaxError(f"`{kind}` with `where=` (or `initial=`) and `out=` is not supported; "
                                         "leave out `out=`", self.source.loc(e))
        none = gast.Constant(value=None, kind=None)
        operands = [gast.Constant(value=kind, kind=None), base, bound.get("where", gast.Constant(value=True, kind=None)),
                    bound.get("axis", none), bound.get("dtype", none),
                    bound.get("keepdims", gast.Constant(value=False, kind=None)), bound.get("initial", none)]
        return self.call(gast.copy_location(gast.Call(func=name(WHERE_REDUCE), args=operands, keywords=[]), e), out)

    def out_call(self, e, out):
        """`r = f(args, out=y)` (a keyword, a ufunc's positional outputs past `nin`, or the
        positional `out` of a function whose signature has one) is a write into `y`:
        `t = f(args)`, then `copyto(y, t)` (NumPy's same-kind casting), and `r` is `y` (the same
        array). `out=None` writes nothing; a tuple `out=(a, b)` writes each output; a ufunc's
        `where=w` writes only the masked slots. Returns the call's value, or None when `e` has no
        `out` to lower."""
        import numpy as np

        loc = self.source.loc(e)
        callee = self.callee_value(e.func)
        ufunc = callee if isinstance(callee, np.ufunc) else None
        method = isinstance(e.func, gast.Attribute) and not self.is_global_path(e.func)
        library = ufunc is not None or (callee is not None and _is_library(callee))
        if not (library or method):
            return None  # a function of the user's (inlined, its own writes lowered) or unknown
        args, keywords = list(e.args), list(e.keywords)
        outs = None
        if any(k.arg == "out" for k in keywords):
            value = next(k.value for k in keywords if k.arg == "out")
            keywords = [k for k in keywords if k.arg != "out"]
            outs = list(value.elts) if isinstance(value, gast.Tuple) else [value]
            if ufunc is None and isinstance(value, gast.Tuple):
                raise UnsupportedSyntaxError("`out=` takes an array here, not a tuple", loc)
        elif ufunc is not None and ufunc.nin < len(args) <= ufunc.nin + ufunc.nout:
            outs, args = args[ufunc.nin:], args[:ufunc.nin]
        elif ufunc is None and not any(isinstance(a, gast.Starred) for a in args):
            names = _positional_names(callee if callee is not None else self.method_of(e.func))
            if "out" in names and len(args) > names.index("out"):
                k = names.index("out")
                outs = [args[k]]
                keywords += [gast.keyword(arg=n, value=a) for n, a in zip(names[k + 1:], args[k + 1:])]
                args = args[:k]
        if outs is None:
            if ufunc is not None and any(k.arg == "where" and not (isinstance(k.value, gast.Constant)
                                                                  and k.value.value is True) for k in keywords):
                raise UnsupportedSyntaxError("`where=` without `out=` leaves the unselected entries of the "
                                             "result uninitialized; pass `out=` an array to write into", loc)
            return None
        where = next((k.value for k in keywords if k.arg == "where"), None) if ufunc is not None else None
        if where is not None:
            keywords = [k for k in keywords if k.arg != "where"]
            if isinstance(where, gast.Constant) and where.value is True:
                where = None
        casting = next((k.value for k in keywords if k.arg == "casting"), None)
        unsafe = False
        if casting is not None:
            if not (isinstance(casting, gast.Constant) and casting.value in ("same_kind", "unsafe")) or (
                    casting.value == "unsafe" and where is not None):
                raise UnsupportedSyntaxError("this `casting=` with `out=` is not supported; write the result "
                                             "and convert it with `.astype(...)`", loc)
            unsafe = casting.value == "unsafe"  # written as `y[...] = t`, which casts unsafely
            keywords = [k for k in keywords if k.arg != "casting"]
        if all(isinstance(o, gast.Constant) and o.value is None for o in outs):
            if where is not None:
                raise UnsupportedSyntaxError("`where=` without `out=` leaves the unselected entries of the "
                                             "result uninitialized; pass `out=` an array to write into", loc)
            return self.call(gast.copy_location(gast.Call(func=e.func, args=args, keywords=keywords), e), out)
        args = [self.atom(a, out) for a in args]
        targets = []
        for o in outs:
            if isinstance(o, gast.Constant) and o.value is None:
                targets.append(None)
            elif where is None and self.slots_of_view(o):  # `out=h[t]`: a write into h's slots
                targets.append((o.value, self.index(o.slice, out)))
            else:
                targets.append(self.atom(o, out))
        mask = self.atom(where, out) if where is not None else None
        if mask is not None:
            from . import registry

            rule = registry.lookup(ufunc)
            if rule is not None and rule.body is not None:
                like = next(t for t in targets if t is not None)
                args = [a if isinstance(a, gast.Constant) else self.masked_operand(a, mask, like, e, out)
                        for a in args]
        plain = gast.copy_location(gast.Call(func=e.func, args=args, keywords=keywords), e)
        call = self.call(plain, out)
        result = self.temp(self.hint(call))
        out.append(assign(result, call, e))
        single = len(outs) == 1 and (ufunc is None or ufunc.nout == 1)
        values = []
        for i, target in enumerate(targets):
            item = name(result)
            if not single:
                item = name(self.temp(f"{result}_{i}"))
                out.append(assign(item.id, gast.Subscript(value=name(result), slice=gast.Constant(value=i, kind=None),
                                                          ctx=gast.Load()), e))
            if target is None:
                values.append(item)
                continue
            if isinstance(target, tuple):  # the slots of a basic index: the result is the view, read again
                base, index = target
                out.append(self.write(base, index, item, e))
                out[-1].out_slots = True  # (ssa refuses it into a Buffer, whose reads are copies)
                values.append(self.atom(gast.copy_location(gast.Subscript(value=base, slice=index, ctx=gast.Load()),
                                                           e), out))
                continue
            if unsafe:
                out.append(self.write(target, gast.Constant(value=Ellipsis, kind=None), item, e))
            else:
                write = gast.Call(func=name(OUT_WRITE), args=[target, item] + ([mask] if mask is not None else []),
                                  keywords=[])
                out.append(gast.copy_location(gast.Expr(value=write), e))
            values.append(target)
        return values[0] if single else gast.Tuple(elts=values, ctx=gast.Load())

    def slots_of_view(self, e) -> bool:
        """Whether `e` is `h[idx]` of a local `h` with an index that surely makes a view (slices,
        integer literals, `...`, `None`, counters of `range` loops and integer arithmetic on
        them): an `out=e` then writes into those slots of `h`, as `h[idx] = result` does."""
        def integral(x) -> bool:
            if isinstance(x, gast.Constant):
                return type(x.value) is int
            if isinstance(x, gast.Name):
                return x.id in self.counters
            if isinstance(x, gast.UnaryOp) and isinstance(x.op, (gast.USub, gast.UAdd)):
                return integral(x.operand)
            return isinstance(x, gast.BinOp) and isinstance(x.op, (gast.Add, gast.Sub, gast.Mult)) \
                and integral(x.left) and integral(x.right)

        def basic(x) -> bool:
            if isinstance(x, gast.Slice):
                return all(p is None or integral(p) or (isinstance(p, gast.Constant) and p.value is None)
                           for p in (x.lower, x.upper, x.step))
            if isinstance(x, gast.Constant) and (x.value is None or x.value is Ellipsis):
                return True
            return integral(x)

        if not (isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name) and e.value.id in self.made_here):
            return False
        parts = e.slice.elts if isinstance(e.slice, gast.Tuple) else [e.slice]
        return all(basic(x) for x in parts)

    def masked_operand(self, a, mask, like, at, out):
        """An operand of `f(a, ..., out=y, where=mask)`: `a` where `mask` holds, 1.0 elsewhere, in
        an array of `y`'s shape. `f` is then computed at every entry, and the unselected ones get
        exactly no gradient (the copyto's adjoint selects), whatever `f`'s derivative is there
        (`np.divide(a, b, out=..., where=b != 0)`)."""
        held = self.temp(f"{self.hint(a)}_where")
        out.append(assign(held, gast.Call(func=gast.Attribute(value=like, attr="copy", ctx=gast.Load()),
                                          args=[], keywords=[]), at))
        for args in ([name(held), gast.Constant(value=1.0, kind=None)], [name(held), a, mask]):
            out.append(gast.copy_location(gast.Expr(value=gast.Call(func=name(OUT_WRITE), args=args,
                                                                    keywords=[])), at))
        return name(held)

    def callee_value(self, func):
        """The object a global path (`np.exp`, `exp`, `np.add.reduce`) names, or None. (Asked
        several times per call node, by each lowering that may apply: looked up once per node.)"""
        known = self.callees.get(id(func))
        if known is None or known[0] is not func:
            known = self.callees[id(func)] = (func, self._callee_value(func))
        return known[1]

    def _callee_value(self, func):
        if not self.is_global_path(func):
            return None
        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return None
        found, value = self.source.lookup(func.id)
        if not found:
            return None
        for attr in reversed(parts):
            value = getattr(value, attr, None)
        return value

    def method_of(self, func):
        """For `x.name(...)` on a local value: ndarray's method of that name (its signature tells
        where a positional `out` goes), else None."""
        import numpy as np

        if isinstance(func, gast.Attribute) and not self.is_global_path(func):
            return getattr(np.ndarray, func.attr, None)
        return None

    # -- copyto from iterators -------------------------------------------------------------------
    def is_copyto(self, call) -> bool:
        f = call.func
        return (isinstance(f, gast.Name) and f.id == "copyto" and f.id not in self.locals) or (
            isinstance(f, gast.Attribute) and f.attr == "copyto" and self.is_global_path(f))

    # -- loops -------------------------------------------------------------------------------
    def is_builtin_call(self, e, name_: str) -> bool:
        return (isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == name_
                and e.func.id not in self.locals)

    def index_form(self, e, out) -> tuple:
        """(length atom, item(k) -> expression) for iterating `e` by index."""
        if isinstance(e, gast.Call) and e.keywords and any(
                self.is_builtin_call(e, f) for f in ("enumerate", "zip", "reversed")):
            if not (self.is_builtin_call(e, "enumerate") and [k.arg for k in e.keywords] == ["start"]):
                raise UnsupportedSyntaxError("keyword arguments other than enumerate's `start` are not "
                                             "supported in a loop header", self.source.loc(e))
            e = gast.Call(func=e.func, args=e.args + [e.keywords[0].value], keywords=[])
        if self.is_builtin_call(e, "enumerate") and e.args:
            n, item = self.index_form(e.args[0], out)
            start = self.atom(e.args[1], out) if len(e.args) > 1 else None
            if start is None:
                return n, lambda k: gast.Tuple(elts=[k, item(k)], ctx=gast.Load())
            return n, lambda k: gast.Tuple(elts=[gast.BinOp(left=k, op=gast.Add(), right=start), item(k)],
                                           ctx=gast.Load())
        if self.is_builtin_call(e, "zip") and e.args:
            parts = [self.index_form(a, out) for a in e.args]
            return self.shortest(parts, out), lambda k: gast.Tuple(elts=[item(k) for _, item in parts], ctx=gast.Load())
        if self.is_builtin_call(e, "reversed") and len(e.args) == 1:
            n, item = self.index_form(e.args[0], out)
            if n is None:
                raise UnsupportedSyntaxError("`reversed` of an endless iterator", self.source.loc(e))
            last = self.atom(gast.BinOp(left=n, op=gast.Sub(), right=gast.Constant(value=1, kind=None)), out)
            return n, lambda k: item(gast.BinOp(left=last, op=gast.Sub(), right=k))
        form = self.stream_index_form(e, out)  # map, islice, count, repeat, chain, zip_longest, ...
        if form is not None:
            return form
        seq = self.atom(e, out)
        n = self.atom(gast.Call(func=name("len"), args=[seq], keywords=[]), out)
        return n, lambda k: _by_position(gast.Subscript(value=seq, slice=k, ctx=gast.Load()))

    def for_loop(self, s, out) -> None:
        if s.orelse:
            raise UnsupportedSyntaxError("`for ... else` is not supported", self.source.loc(s))
        if self.filtered_loop(s, out) or self.unrolled_loop(s, out):
            return
        self.refuse_resized_while_iterated(s)
        s = self.iterate_what_the_loop_began_with(s, out)
        seq = None  # the sequence iterated by position, when it is held in a local name
        if self.is_builtin_call(s.iter, "range") and isinstance(s.target, gast.Name):
            iterable = self.atom(s.iter, out)
            target, head = s.target.id, []
        else:
            base = s.target.id if isinstance(s.target, gast.Name) else "item"
            plain = not isinstance(s.iter, gast.Call) or self.stream_of(s.iter) is None and not any(
                self.is_builtin_call(s.iter, f) for f in ("enumerate", "zip", "reversed"))
            seq = self.atom(s.iter, out) if plain else None
            n, item = self.index_form(seq if seq is not None else s.iter, out)
            if n is None:  # an endless iterator (`count()`): a `while True` that a break ends
                self.endless_loop(s, item, out)
                return
            iterable = self.atom(gast.Call(func=name("range"), args=[n], keywords=[]), out)
            target = self.temp(f"{base}_index")
            head = self.block([gast.copy_location(gast.Assign(targets=[s.target], value=item(name(target)),
                                                              type_comment=None), s)])
        self.locals.add(target)
        flags = _Flags(self)
        body = lower_jumps(head + self.block(s.body), flags)
        loop = gast.copy_location(gast.For(target=name(target, True), iter=iterable, body=body, orelse=[],
                                           type_comment=None), s)
        if isinstance(seq, gast.Name) and seq.id in self.locals | self.outer:
            loop.unroll_over = seq.id  # (ssa unrolls it if `seq` holds functions: a StaticSeq)
        elif self.is_builtin_call(s.iter, "enumerate") and len(s.iter.args) == 1 and not s.iter.keywords \
                and isinstance(s.iter.args[0], gast.Name) and s.iter.args[0].id in self.locals | self.outer:
            loop.unroll_over = s.iter.args[0].id  # (`enumerate(layers)` of a StaticSeq: unrolled alike)
        self.emit_loop(loop, flags, out)

    def iterate_what_the_loop_began_with(self, s, out):
        """`for v in x: x = x * 2.0`: Python iterates the object `x` held when the loop began, but
        the loop here reads its items by position from the name (`x[k]`), which the body rebinds;
        a name the iterable reads and the body (or the target) binds is first bound to a temporary
        (`x_iterated = x`), which the loop reads instead."""
        bound = {n.id for stmt in s.body for n in astwalk.walk(stmt) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Store)} | {n.id for n in astwalk.walk(s.target) if isinstance(n, gast.Name)}
        iterable = astwalk.clone(s.iter)
        reads = [n for n in _eager_names(iterable) if n.id in bound]  # (a lambda's read late: not these)
        if not reads:
            return s
        renamed: dict = {}
        for n in reads:
            if n.id not in renamed:
                renamed[n.id] = self.temp(f"{n.id}_iterated")
                out.append(assign(renamed[n.id], name(n.id), s))
            n.id = renamed[n.id]
        return gast.copy_location(gast.For(target=s.target, iter=iterable, body=s.body, orelse=s.orelse,
                                           type_comment=None), s)

    def refuse_resized_while_iterated(self, s) -> None:
        """`for v in xs` (or `enumerate(xs)`, `zip(xs, ...)`, `reversed(xs)`) whose body changes the
        length of the list `xs` (`append`, `extend`, `insert`, `pop`, `remove`, `clear`, `xs += [...]`,
        `del xs[k]`): Python's iterator sees the change, the loop here runs over the items `xs`
        had when it began; refused. (Rebinding `xs = xs + [v]` leaves the iterated list alone.)"""
        iterated = [s.iter] + (list(s.iter.args) if isinstance(s.iter, gast.Call) and any(
            self.is_builtin_call(s.iter, f) for f in ("enumerate", "zip", "reversed")) else [])
        names = {e.id for e in iterated if isinstance(e, gast.Name)}
        for node in (n for stmt in s.body for n in astwalk.walk(stmt)):
            changed = None
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and isinstance(
                    node.func.value, gast.Name) and node.func.attr in _RESIZING_METHODS:
                changed, how = node.func.value.id, f"`{node.func.value.id}.{node.func.attr}(...)`"
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) \
                    and isinstance(node.value, (gast.List, gast.ListComp)):
                changed, how = node.target.id, f"`{node.target.id} += [...]`"
            elif isinstance(node, gast.Delete):
                hit = [t.value.id for t in node.targets if isinstance(t, gast.Subscript)
                       and isinstance(t.value, gast.Name) and t.value.id in names]
                changed, how = (hit[0], f"`del {hit[0]}[...]`") if hit else (None, "")
            if changed in names:
                raise UnsupportedSyntaxError(f"this loop changes the length of `{changed}`, which it iterates over "
                                             f"({how}): Python's iteration would see the change; iterate over a "
                                             f"copy (`list({changed})`) or over `range(...)`", self.source.loc(node))

    def while_loop(self, s, out) -> None:
        if s.orelse:
            raise UnsupportedSyntaxError("`while ... else` is not supported", self.source.loc(s))
        cond_body: list = []
        test = self.atom(s.test, cond_body)
        flags = _Flags(self)
        body = lower_jumps(self.block(s.body), flags)
        check = gast.copy_location(gast.If(test=gast.UnaryOp(op=gast.Not(), operand=test),
                                           body=[gast.Break()], orelse=[]), s)
        loop = gast.copy_location(gast.While(test=gast.Constant(value=True, kind=None),
                                             body=cond_body + [check] + body, orelse=[]), s)
        loop.cond_len = len(cond_body)
        loop.cond_atom = test
        self.emit_loop(loop, flags, out)

    def emit_loop(self, loop, flags, out) -> None:
        """Initialize the loop's flags, end each iteration with `if <stop>: break`, and return after
        the loop when its body returned."""
        loop.stop_flag = flags.stop
        if flags.stop:
            out.append(assign(flags.stop, gast.Constant(value=False, kind=None), loop))
            loop.body.append(gast.copy_location(gast.If(test=name(flags.stop), body=[gast.Break()],
                                                        orelse=[]), loop))
        if flags.returned:
            out.append(assign(flags.returned, gast.Constant(value=False, kind=None), loop))
            out.append(assign(flags.value, gast.Constant(value=None, kind=None), loop))
        out.append(loop)
        if flags.returned:
            out.append(gast.copy_location(gast.If(test=name(flags.returned), body=[
                gast.copy_location(gast.Return(value=name(flags.value)), loop)], orelse=[]), loop))

    def store(self, target, value, out, at) -> None:
        """Assign the atom `value` to a (possibly nested) target."""
        if isinstance(target, gast.Name):
            out.append(assign(target.id, value, at))
        elif isinstance(target, (gast.Tuple, gast.List)):
            from .python_lowering import UNPACKED
            check = gast.Call(func=name(UNPACKED), args=[value, gast.Constant(value=len(target.elts), kind=None)],
                              keywords=[])
            out.append(gast.copy_location(gast.Expr(value=check), at))  # (Python raises on another length)
            for i, elt in enumerate(target.elts):
                item = gast.Subscript(value=value, slice=gast.Constant(value=i, kind=None), ctx=gast.Load())
                if isinstance(elt, gast.Name):
                    out.append(assign(elt.id, item, at))
                else:
                    tmp = self.temp(f"{self.hint(value)}_{i}")
                    out.append(assign(tmp, item, at))
                    self.store(elt, name(tmp), out, at)
        elif isinstance(target, gast.Subscript):
            base = self.write_base(target, at, out)
            out.append(self.write(base, self.index(target.slice, out), value, at))
        elif isinstance(target, gast.Attribute) and isinstance(target.value, gast.Name) \
                and not self.is_global_path(target.value):
            # `obj.name = v` on a local: ssa allows it in the `__init__` of an object the function makes
            call = gast.Call(func=name(SET_FIELD), args=[name(target.value.id), gast.Constant(value=target.attr, kind=None),
                                                        self.atom(value, out)], keywords=[])
            out.append(gast.copy_location(gast.Expr(value=call), at))
        else:
            raise UnsupportedSyntaxError("assignment into an attribute is not supported in a differentiated "
                                         "function", self.source.loc(at))

    def write_base(self, target, at, out):
        """The array a subscript assignment writes into, as a name: `np.flip(a)[0] = v` and
        `b[i][j] = v` write into the value of `np.flip(a)` and `b[i]` (views: ssa writes their base)."""
        if isinstance(target.value, gast.Name):
            return target.value
        if isinstance(target.value, gast.Attribute) and target.value.attr == "flat":
            raise MutationError("cannot differentiate a write through `.flat`; write `b[np.unravel_index(i, "
                                "b.shape)] = v` or into `b.ravel()`", self.source.loc(at))
        base = self.atom(target.value, out)
        if not isinstance(base, gast.Name):
            raise MutationError("cannot write into a module-level value; copy it first", self.source.loc(at))
        return base

    def write(self, base, index, value, at):
        return gast.copy_location(gast.Assign(targets=[gast.Subscript(value=base, slice=index,
                                                                      ctx=gast.Store())],
                                              value=value, type_comment=None), at)


def _view_index(index) -> bool:
    """Whether an index is basic and has a slice or `...`: `a[index]` is a view of `a`."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    basic = all(isinstance(p, gast.Slice) or (isinstance(p, gast.Constant) and (
        p.value is None or p.value is Ellipsis or type(p.value) is int)) for p in parts)
    return basic and any(isinstance(p, gast.Slice) or (isinstance(p, gast.Constant) and p.value is Ellipsis)
                         for p in parts)


class _Rename(gast.NodeTransformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            node.id = self.names[node.id]
        return node


class _Flags:
    """The variables a loop body's `break`/`return` set; created on first use."""

    def __init__(self, normalizer):
        self.normalizer = normalizer
        self.stop = self.returned = self.value = None

    def need_stop(self) -> str:
        self.stop = self.stop or self.normalizer.temp("stop")
        return self.stop

    def need_return(self) -> tuple:
        self.returned = self.returned or self.normalizer.temp("returned")
        self.value = self.value or self.normalizer.temp("return_value")
        return self.returned, self.value


def _jumps(stmts) -> bool:
    """Whether `stmts` break, continue or return out of the enclosing loop (not out of a nested one)."""
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue, gast.Return)):
            return True
        if isinstance(s, gast.If) and (_jumps(s.body) or _jumps(s.orelse)):
            return True
    return False


def lower_jumps(stmts, flags: _Flags) -> list:
    """Replace `break`, `continue` and `return` in a loop body by flag assignments, moving the rest of
    the block into the branches that fall through."""
    out: list = []
    for i, s in enumerate(stmts):
        if isinstance(s, gast.Break):
            out.append(assign(flags.need_stop(), gast.Constant(value=True, kind=None), s))
            return out
        if isinstance(s, gast.Continue):
            return out
        if isinstance(s, gast.Return):
            returned, value = flags.need_return()
            out += [assign(value, s.value, s), assign(returned, gast.Constant(value=True, kind=None), s),
                    assign(flags.need_stop(), gast.Constant(value=True, kind=None), s)]
            return out
        if isinstance(s, gast.If) and (_jumps(s.body) or _jumps(s.orelse)):
            rest = stmts[i + 1:]
            s.body = lower_jumps(s.body + astwalk.clone(rest), flags)
            s.orelse = lower_jumps(s.orelse + astwalk.clone(rest), flags)
            out.append(s)
            return out
        out.append(s)
    return out


COPYTO_ITEMS = "__copyto_items__"  # normalize's name for "copyto from a list of items"
OUT_WRITE = "__out_write__"  # normalize's name for "copyto(y, t[, where])", the write of an `out=` argument


def _range_counters(fn, nodes=None) -> set:
    """Names assigned only as the counter of `for <name> in range(...)`: they hold integers.
    `nodes`: `list(astwalk.walk(fn))`, if already made."""
    nodes = list(astwalk.walk(fn)) if nodes is None else nodes
    stores: dict = {}
    counters: set = set()
    for node in nodes:
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name) and isinstance(node.iter, gast.Call) \
                and isinstance(node.iter.func, gast.Name) and node.iter.func.id == "range":
            counters.add(node.target.id)
    loops = {}
    for node in nodes:
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name) and node.target.id in counters:
            loops[node.target.id] = loops.get(node.target.id, 0) + 1
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    return {n for n in counters if stores.get(n) == loops.get(n) and n not in params}


def _made_here(fn, nodes=None) -> set:
    """Local names every assignment of which computes a new value (no parameter, no plain alias
    `a = b`, no loop or tuple target): they hold an array of this function's own. `nodes`:
    `list(astwalk.walk(fn))`, if already made."""
    stores: dict = {}
    assigns: dict = {}
    for node in astwalk.walk(fn) if nodes is None else nodes:
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            fresh = not isinstance(node.value, (gast.Name, gast.Attribute, gast.Subscript))
            assigns[node.targets[0].id] = assigns.get(node.targets[0].id, 0) + (1 if fresh else 1000)
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    return {n for n, count in stores.items() if assigns.get(n) == count and n not in params}


def _is_library(func) -> bool:
    """Whether `func` is NumPy's (or SciPy's): its `out` parameter is a write into an array."""
    module = getattr(func, "__module__", None) or getattr(getattr(func, "__self__", None), "__module__", None) or ""
    return module.split(".")[0] in ("numpy", "scipy")


def _positional_names(func) -> list:
    """The names of `func`'s parameters that may be passed by position (a method's `self` left
    out), or [] when its signature is unknown."""
    import inspect

    if func is None:
        return []
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if names and names[0] == "self":
        names = names[1:]
    return names


def may_return(stmts) -> bool:
    return any(isinstance(n, gast.Return) for s in stmts for n in astwalk.walk(s))


def single_exit(stmts, at) -> list:
    """Move the statements after a branch that may return into its branches, so every path ends in
    one return and nothing follows it."""
    out: list = []
    for i, s in enumerate(stmts):
        if isinstance(s, gast.Return):
            out.append(s)
            return out
        if isinstance(s, gast.If) and may_return([s]):
            rest = stmts[i + 1:]
            s.body = single_exit(s.body + astwalk.clone(rest), at)
            s.orelse = single_exit(s.orelse + astwalk.clone(rest), at)
            out.append(s)
            return out
        out.append(s)
    out.append(gast.copy_location(gast.Return(value=gast.Constant(value=None, kind=None)), at))
    return out


def normalize(source: Source, namer: Namer) -> gast.FunctionDef:
    """The function of `source`, normalized (see the module docstring)."""
    fn = source.node
    body = single_exit(Normalizer(source, namer).block(fn.body), fn.body[-1] if fn.body else fn)
    return gast.FunctionDef(name=fn.name, args=fn.args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])

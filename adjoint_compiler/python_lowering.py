"""Normalize, continued: the Python around the NumPy (a mixin of `normalize.Normalizer`).

Guarantees, on top of normalize's: nested `def`s and lambdas are `FunctionNode`s (inlined by ssa
where they are called); `map`, `filter`, `functools.reduce`, `sorted`/`min`/`max` with `key=`,
`next`, the `itertools` iterators (`islice count repeat chain accumulate zip_longest product
combinations combinations_with_replacement permutations`) and `np.ndindex`/`np.ndenumerate` are
loops, comprehensions or index arithmetic over what they read; `assert`, `raise`, f-strings and
`with np.errstate(...)` are calls of runtime helpers (`rt.raise_exception`, `rt.set_errstate`)
in plain `if`s, so they run in the forward pass exactly where the primal runs them.

    total = sum(map(lambda i: p * i, range(n)))      fn = <FunctionNode lambda>
                                                     items = []
                                                     for item in range(n):
                                                         fn_item = fn(item)
                                                         items = items + [fn_item]
                                                     total = sum(items)
    assert x.shape == (3,), "x"                  ->  if not x_shape_eq: rt.raise_exception(AssertionError, 'x')

A stream is read lazily where its items are used one at a time (`for v in map(f, xs)` calls `f` at
the top of each trip); it is materialized as a list where a consumer takes it whole (`sum`,
`list`, `sorted`, `copyto`), and an iterator bound to a name is accepted only when that name is
read once, by such a consumer or a loop, so that materializing it cannot change what Python does.
"""
from __future__ import annotations

import functools
import itertools

import gast
import numpy as np

from . import astwalk
from .errors import MutationError, UnsupportedSyntaxError
from .functions import FunctionNode, free_names, scope_walk

# Names normalize writes for runtime helpers (ssa reads each as `rt.<helper>`).
RAISE = "__raise_exception__"
SORT_ORDER = "__sort_order__"
EXTREME = "__extreme_index__"
ERRSTATE_ENTER = "__set_errstate__"
ERRSTATE_EXIT = "__restore_errstate__"
WHERE_REDUCE = "__where_reduce__"  # np.sum(a, where=m) ... (see normalize.inplace_call)
SORTED_COPY = "__sorted_copy__"  # a.sort() is a[...] = rt.sorted_copy(a)
PARTITIONED_COPY = "__partitioned_copy__"
ADDED_AT = "__added_at__"  # np.add.at(a, i, v) is a[...] = rt.added_at(a, i, v)
SUBTRACTED_AT = "__subtracted_at__"
PUT_COPY = "__put_copy__"  # np.put(a, i, v) is a[...] = rt.put_copy(a, i, v)
DIAGONAL_FILLED = "__diagonal_filled__"  # np.fill_diagonal(a, v) is a[...] = rt.diagonal_filled(a, v)
PUT_ALONG_AXIS_COPY = "__put_along_axis_copy__"  # np.put_along_axis(a, i, v, axis): a[...] = rt.put_along_axis_copy(...)
PUTMASK_COPY = "__putmask_copy__"  # np.putmask(a, m, v) is a[...] = rt.putmask_copy(a, m, v)
UFUNC_AT_COPY = "__ufunc_at_copy__"  # np.maximum.at(a, i, v) is a[...] = rt.ufunc_at_copy('maximum', a, i, v)
VECTORIZE_ITEMS = "__vectorize_items__"  # np.vectorize(f)(x): [f(v) for v in rt.vectorize_items(x)]
VECTORIZE_RESULT = "__vectorize_result__"
PIECEWISE_ZEROS = "__piecewise_zeros__"  # np.piecewise(x, [c0, c1], [f0, f1]): y[c0] = f0(x[c0]), ...
PIECEWISE_MASK = "__piecewise_mask__"
PIECEWISE_OTHERWISE = "__piecewise_otherwise__"
UNPACKED = "__check_unpack__"  # `a, b = v`: rt.check_unpack(v, 2) before `a = v[0]; b = v[1]`
# product(xs, ys): (xs[p[0]], ys[p[1]]) for p in rt.combinatoric_positions('product', ...)
POSITIONS = "__positions__"


@functools.cache
def runtime_markers() -> dict:
    """marker name -> the runtime helper it stands for."""
    from . import runtime
    return {RAISE: runtime.raise_exception, SORT_ORDER: runtime.sort_order, EXTREME: runtime.extreme_index,
            ERRSTATE_ENTER: runtime.set_errstate, ERRSTATE_EXIT: runtime.restore_errstate,
            WHERE_REDUCE: runtime.where_reduce, SORTED_COPY: runtime.sorted_copy,
            PARTITIONED_COPY: runtime.partitioned_copy, ADDED_AT: runtime.added_at,
            SUBTRACTED_AT: runtime.subtracted_at, PUT_COPY: runtime.put_copy, DIAGONAL_FILLED: runtime.diagonal_filled,
            PUT_ALONG_AXIS_COPY: runtime.put_along_axis_copy, PUTMASK_COPY: runtime.putmask_copy,
            VECTORIZE_ITEMS: runtime.vectorize_items, VECTORIZE_RESULT: runtime.vectorize_result,
            PIECEWISE_ZEROS: runtime.piecewise_zeros, PIECEWISE_MASK: runtime.piecewise_mask,
            PIECEWISE_OTHERWISE: runtime.piecewise_otherwise, UFUNC_AT_COPY: runtime.ufunc_at_copy,
            UNPACKED: runtime.check_unpack, POSITIONS: runtime.combinatoric_positions}


STREAMS = {
    "map": map, "filter": filter, "iter": iter, "zip": zip, "enumerate": enumerate, "reversed": reversed,
    "islice": itertools.islice, "count": itertools.count, "repeat": itertools.repeat, "chain": itertools.chain,
    "chain.from_iterable": itertools.chain.from_iterable, "accumulate": itertools.accumulate,
    "zip_longest": itertools.zip_longest,
    "product": itertools.product, "combinations": itertools.combinations, "permutations": itertools.permutations,
    "combinations_with_replacement": itertools.combinations_with_replacement,
    "ndindex": np.ndindex, "ndenumerate": np.ndenumerate,
}
# The iterators whose items are tuples picked from their arguments by positions (`combinatoric`).
COMBINATORIC = ("product", "combinations", "permutations", "combinations_with_replacement", "ndindex", "ndenumerate")
# Calls that take a whole iterable once: a stream given to them is materialized as a list first.
CONSUMERS = (sum, list, tuple, sorted, min, max, any, all, next, functools.reduce)
# Methods that change a list or an array in place (refused on a name of an enclosing function).
MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "fill", "update",
            "setdefault", "popitem", "resize", "itemset", "put", "partition", "setflags", "add", "discard"}


def _same(value, obj) -> bool:
    if value is obj:
        return True
    try:  # bound builtin methods (itertools.chain.from_iterable) are made anew at each access
        return type(value) is type(obj) and callable(obj) and bool(value == obj)
    except Exception:
        return False


def _name(id_: str, store: bool = False) -> gast.Name:
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def _const(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def _call(func, args, keywords=()) -> gast.Call:
    return gast.Call(func=func, args=list(args), keywords=list(keywords))


def _located(node, at):
    """`node` and everything in it located at `at` (where it has no location of its own)."""
    for n in astwalk.walk(node):
        if "lineno" in getattr(n, "_attributes", ()) and getattr(n, "lineno", None) is None:
            gast.copy_location(n, at)
    return node


def _str_method(attr: str) -> gast.Attribute:
    return gast.Attribute(value=_name("str"), attr=attr, ctx=gast.Load())


def _raises(stmts) -> bool:
    """Whether every path through `stmts` ends in a `raise` (or an `assert False`)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, gast.Raise):
        return True
    if isinstance(last, gast.Assert) and isinstance(last.test, gast.Constant) and not last.test.value:
        return True
    return isinstance(last, gast.If) and _raises(last.body) and _raises(last.orelse)


class PythonLowering:
    """Methods of `normalize.Normalizer` for functions as values, iterators, and the statements
    that only check or report (see the module docstring)."""

    # -- set up ------------------------------------------------------------------------------
    def scan_scope(self, fn, scoped=None) -> None:
        """Where each name of this scope is read and bound, and the loops around each node (for
        the iterator-binding check). `scoped`: `list(scope_walk(fn))`, if already made."""
        scoped = list(scope_walk(fn)) if scoped is None else scoped
        self.scope_nodes, self.scope_body = scoped, fn.body
        self.loops_of: dict = {}
        self.parents: dict = {}

        def visit(node, loops):
            self.loops_of[id(node)] = loops
            if isinstance(node, (gast.FunctionDef, gast.Lambda, FunctionNode)):
                return
            for child in astwalk.children(node):
                self.parents[id(child)] = node
                once = isinstance(node, gast.For) and child is node.iter  # (evaluated before the loop)
                visit(child, loops + (id(node),) if isinstance(node, (gast.For, gast.While)) and not once else loops)

        for stmt in fn.body:
            visit(stmt, ())
        self.load_nodes: dict = {}
        self.store_count: dict = {}
        assigned: dict = {}  # name -> whether every binding of it is a def or a lambda
        for node in scoped:
            if isinstance(node, gast.FunctionDef):
                assigned.setdefault(node.name, True)
            elif isinstance(node, gast.Assign):
                for t in node.targets:
                    for n in astwalk.walk(t):
                        if isinstance(n, gast.Name):
                            simple = isinstance(t, gast.Name) and isinstance(node.value, gast.Lambda)
                            assigned[n.id] = assigned.get(n.id, True) and simple
            elif isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and node.id not in assigned:
                assigned[node.id] = False
        for node in scoped:  # (loop targets, augmented assignments, ... bind other values)
            if isinstance(node, (gast.For, gast.AugAssign, gast.AnnAssign)):
                for n in astwalk.walk(node.target):
                    if isinstance(n, gast.Name):
                        assigned[n.id] = False
        self.def_names = {n for n, only in assigned.items() if only}
        for node in scoped:
            if isinstance(node, gast.Name):
                if isinstance(node.ctx, gast.Load):
                    self.load_nodes.setdefault(node.id, []).append(node)
                else:
                    self.store_count[node.id] = self.store_count.get(node.id, 0) + 1

    def value_is(self, e, *objs) -> bool:
        """Whether the call `e` calls one of `objs` (looked up, so a user's own `map` is not it)."""
        if not isinstance(e, gast.Call):
            return False
        value = self.callee_value(e.func)
        return value is not None and any(_same(value, o) for o in objs)

    def stream_of(self, e) -> str | None:
        """'genexp', or the name in STREAMS of the iterator `e` makes, else None."""
        if isinstance(e, gast.GeneratorExp):
            return "genexp"
        if not isinstance(e, gast.Call):
            return None
        value = self.callee_value(e.func)
        if value is None:
            return None
        return next((k for k, obj in STREAMS.items() if _same(value, obj)), None)

    def refuse(self, message: str, at):
        raise UnsupportedSyntaxError(message, self.source.loc(at))

    # -- functions as values -------------------------------------------------------------------
    def function_node(self, node, out, display: str) -> FunctionNode:
        """A nested def or lambda: its defaults evaluated here, the body kept for ssa to inline."""
        a = node.args
        defaults = [self.atom(d, out) for d in a.defaults]
        kw_defaults = [None if d is None else self.atom(d, out) for d in a.kw_defaults]
        enclosing = self.locals | self.outer
        reads = [_name(n) for n in sorted(free_names(node) & enclosing)]
        return FunctionNode(node, defaults, kw_defaults, reads, display)

    def check_outer_mutation(self, call) -> None:
        """In a nested function: `xs.append(v)` (any method that changes its receiver) on a name of
        an enclosing function is refused; Python would change the enclosing function's value."""
        f = call.func
        if (isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and f.value.id in self.outer
                and f.attr in MUTATING):
            raise MutationError(f"a nested function or lambda cannot change `{f.value.id}` of the enclosing "
                                f"function in place (`.{f.attr}(...)`); pass it in and return the new value",
                                self.source.loc(call))

    # -- calls of Python builtins ----------------------------------------------------------------
    def python_call(self, e, out):
        """The lowered value of a call of `map`/`filter`/`reduce`/`sorted`/... (an atom or one
        operation), or None when `e` is no such call."""
        lowered = self.string_method(e, out)
        if lowered is not None:
            return lowered
        if not isinstance(e, gast.Call) or self.callee_value(e.func) is None:
            if isinstance(e, gast.Call) and self.outer:
                self.check_outer_mutation(e)
            return None
        if self.value_is(e, functools.reduce):
            return self.reduce(e, out)
        if self.value_is(e, dict) and (e.keywords or (len(e.args) == 1 and isinstance(e.args[0], gast.Dict))) \
                and len(e.args) <= 1 and (not e.args or isinstance(e.args[0], gast.Dict)) \
                and all(k.arg is not None for k in e.keywords):
            # `dict(a=x, b=y)`, `dict({'a': x}, b=y)`: the display `{'a': x, 'b': y}`
            given = e.args[0] if e.args else gast.Dict(keys=[], values=[])
            keys = list(given.keys) + [_const(k.arg) for k in e.keywords]
            values = list(given.values) + [k.value for k in e.keywords]
            return gast.copy_location(gast.Dict(keys=keys, values=[self.atom(v, out) for v in values]), e)
        if self.value_is(e, sorted):
            return self.sorted_by_key(e, out)
        if self.value_is(e, min, max) and any(k.arg in ("key", "default") for k in e.keywords):
            return self.extreme_by_key(e, out)
        if self.value_is(e, next):
            return self.next_item(e, out)
        kind = self.stream_of(e)
        if kind is not None and kind not in ("zip", "enumerate", "reversed", "iter"):
            # an iterator made and used in one expression: its consumer (below) takes it whole
            return None
        if self.value_is(e, *CONSUMERS) and e.args and self.stream_of(e.args[0]) not in (None, "genexp"):
            items = self.stream_list(e.args[0], out)
            if self.value_is(e, list) and len(e.args) == 1 and not e.keywords:
                return items
            return self.call(gast.copy_location(_call(e.func, [items] + e.args[1:], e.keywords), e), out)
        return None

    def reduce(self, e, out):
        """`functools.reduce(f, xs[, init])`: unrolled over a display, else a loop."""
        if e.keywords or not 2 <= len(e.args) <= 3:
            self.refuse("functools.reduce takes (function, iterable[, initial]) here", e)
        f = self.atom(e.args[0], out)
        seq = e.args[1]
        acc = self.temp("acc")
        if isinstance(seq, (gast.List, gast.Tuple)) and not any(isinstance(x, gast.Starred) for x in seq.elts):
            items = [self.atom(x, out) for x in seq.elts]
            if len(e.args) == 3:
                items = [self.atom(e.args[2], out)] + items
            if not items:
                self.stmt(self.raise_stmt(_name("TypeError"), [_const("reduce() of empty iterable with no initial "
                                                                       "value")], e), out)
                return _const(None)
            value = items[0]
            for item in items[1:]:
                value = self.atom(gast.copy_location(_call(f, [value, item]), e), out)
            out.append(gast.copy_location(gast.Assign(targets=[_name(acc, True)], value=value, type_comment=None), e))
            return _name(acc)
        seq = self.stream_list(seq, out) if self.stream_of(seq) else self.atom(seq, out)
        item = self.temp("item")
        body = [gast.Assign(targets=[_name(acc, True)], value=_call(f, [_name(acc), _name(item)]), type_comment=None)]
        if len(e.args) == 3:
            stmts = [gast.Assign(targets=[_name(acc, True)], value=e.args[2], type_comment=None),
                     gast.For(target=_name(item, True), iter=seq, body=body, orelse=[], type_comment=None)]
        else:
            empty = gast.Compare(left=_call(_name("len"), [seq]), ops=[gast.Eq()], comparators=[_const(0)])
            stmts = [gast.If(test=empty, body=[self.raise_stmt(_name("TypeError"), [_const(
                         "reduce() of empty iterable with no initial value")], e)], orelse=[]),
                     gast.Assign(targets=[_name(acc, True)], value=gast.Subscript(value=seq, slice=_const(0),
                                                                                  ctx=gast.Load()), type_comment=None),
                     gast.For(target=_name(item, True), iter=gast.Subscript(
                         value=seq, slice=gast.Slice(lower=_const(1), upper=None, step=None), ctx=gast.Load()),
                         body=body, orelse=[], type_comment=None)]
        for s in stmts:
            self.stmt(_located(s, e), out)
        return _name(acc)

    def keyed_items(self, e, out) -> tuple:
        """(items, keys) atoms for `sorted/min/max(xs, key=k)`: the items (a sequence, or a stream
        as a list), and the list of their keys (each computed once, in order, as Python does)."""
        if len(e.args) != 1:
            self.refuse("with `key=`, pass one iterable", e)
        seq = e.args[0]
        # (a display is read by position as it is; anything else as the list of what iterating it
        # gives, as Python does: a dict's keys, an array's rows, a stream's items)
        items = self.atom(seq, out) if isinstance(seq, (gast.List, gast.Tuple)) else self.stream_list(seq, out)
        key = next((k.value for k in e.keywords if k.arg == "key"), None)
        if key is None or (isinstance(key, gast.Constant) and key.value is None):
            return items, items
        key = self.atom(key, out)
        item = self.temp("item")
        keys = self.atom(_located(gast.ListComp(elt=_call(key, [_name(item)]), generators=[
            gast.comprehension(target=_name(item, True), iter=items, ifs=[], is_async=0)]), e), out)
        return items, keys

    def pick(self, items, order, e, out):
        """`[items[i] for i in order]`."""
        i = self.temp("i")
        return self.atom(_located(gast.ListComp(elt=gast.Subscript(value=items, slice=_name(i), ctx=gast.Load()),
                                                generators=[gast.comprehension(target=_name(i, True), iter=order,
                                                                               ifs=[], is_async=0)]), e), out)

    def sorted_by_key(self, e, out):
        """`sorted(xs, key=k, reverse=r)`: the order comes from the keys (no gradient through it,
        as in Python the keys only compare), the items are read at those positions."""
        if set(k.arg for k in e.keywords) - {"key", "reverse"}:
            self.refuse("sorted takes `key=` and `reverse=` here", e)
        items, keys = self.keyed_items(e, out)
        reverse = next((k.value for k in e.keywords if k.arg == "reverse"), _const(False))
        order = self.atom(gast.copy_location(_call(_name(SORT_ORDER), [keys, self.atom(reverse, out)]), e), out)
        return self.pick(items, order, e, out)

    def extreme_by_key(self, e, out):
        """`max(xs, key=k)` / `min(xs, key=k, default=d)`: the item Python picks by its key."""
        if set(k.arg for k in e.keywords) - {"key", "default"}:
            self.refuse("min and max take `key=` and `default=` here", e)
        largest = self.value_is(e, max)
        items, keys = self.keyed_items(e, out)
        default = next((k.value for k in e.keywords if k.arg == "default"), None)
        result = self.temp("largest" if largest else "smallest")
        pick = gast.Assign(targets=[_name(result, True)], value=gast.Subscript(
            value=items, slice=_call(_name(EXTREME), [keys, _const(largest)]), ctx=gast.Load()), type_comment=None)
        if default is None:
            self.stmt(_located(pick, e), out)
        else:
            empty = gast.Compare(left=_call(_name("len"), [items]), ops=[gast.Eq()], comparators=[_const(0)])
            self.stmt(_located(gast.If(test=empty, body=[gast.Assign(targets=[_name(result, True)], value=default,
                                                                     type_comment=None)],
                                       orelse=[pick]), e), out)
        return _name(result)

    def next_item(self, e, out):
        """`next(<stream>[, default])`: the first item (the stream is read whole first)."""
        if e.keywords or not 1 <= len(e.args) <= 2 or not self.stream_of(e.args[0]):
            self.refuse("`next(...)` is supported on an iterator made in the same expression "
                        "(`next(x for x in xs if ...)`, `next(iter(xs))`) only", e)
        items = self.stream_list(e.args[0], out)
        result = self.temp("first")
        first = gast.Assign(targets=[_name(result, True)], value=gast.Subscript(value=items, slice=_const(0),
                                                                                ctx=gast.Load()), type_comment=None)
        empty = gast.Compare(left=_call(_name("len"), [items]), ops=[gast.Eq()], comparators=[_const(0)])
        fallback = gast.Assign(targets=[_name(result, True)], value=e.args[1], type_comment=None) \
            if len(e.args) == 2 else self.raise_stmt(_name("StopIteration"), [], e)
        self.stmt(_located(gast.If(test=empty, body=[fallback], orelse=[first]), e), out)
        return _name(result)

    # -- iterators -----------------------------------------------------------------------------
    def stream_list(self, e, out):
        """An atom holding the items of the stream `e`, in order, as a new list."""
        kind = self.stream_of(e)
        if kind == "genexp":
            return self.atom(gast.copy_location(gast.ListComp(elt=e.elt, generators=e.generators), e), out)
        if kind == "accumulate":
            return self.accumulate(e, out)
        if kind in ("count", "repeat") and not (kind == "repeat" and (len(e.args) == 2 or e.keywords)):
            self.refuse(f"`{kind}(...)` never ends: read it through `zip(...)` or `islice(...)`", e)
        item = self.temp("item")
        return self.atom(_located(gast.ListComp(elt=_name(item), generators=[
            gast.comprehension(target=_name(item, True), iter=e, ifs=[], is_async=0)]), e), out)

    def accumulate(self, e, out):
        """`itertools.accumulate(xs, func=operator.add, *, initial=None)` as a loop appending the
        running value."""
        kw = {k.arg: k.value for k in e.keywords}
        if set(kw) - {"func", "initial"} or not 1 <= len(e.args) <= 2 or ("func" in kw and len(e.args) == 2):
            self.refuse("accumulate takes (iterable[, func], initial=...) here", e)
        func = e.args[1] if len(e.args) == 2 else kw.get("func")
        seq = self.stream_list(e.args[0], out) if self.stream_of(e.args[0]) else self.atom(e.args[0], out)
        f = self.atom(func, out) if func is not None else None
        result, total, item, k = self.temp("running"), self.temp("total"), self.temp("item"), self.temp("k")

        def combine(a, b):
            return _call(f, [a, b]) if f is not None else gast.BinOp(left=a, op=gast.Add(), right=b)

        def append(v):
            return gast.Assign(targets=[_name(result, True)], value=gast.BinOp(
                left=_name(result), op=gast.Add(), right=gast.List(elts=[v], ctx=gast.Load())), type_comment=None)

        initial = kw.get("initial")
        stmts = [gast.Assign(targets=[_name(result, True)], value=gast.List(elts=[], ctx=gast.Load()),
                             type_comment=None)]
        if initial is not None and not (isinstance(initial, gast.Constant) and initial.value is None):
            stmts += [gast.Assign(targets=[_name(total, True)], value=initial, type_comment=None), append(_name(total)),
                      gast.For(target=_name(item, True), iter=seq, body=[
                          gast.Assign(targets=[_name(total, True)], value=combine(_name(total), _name(item)),
                                      type_comment=None), append(_name(total))], orelse=[], type_comment=None)]
        else:
            stmts += [gast.For(target=gast.Tuple(elts=[_name(k, True), _name(item, True)], ctx=gast.Store()),
                               iter=_call(_name("enumerate"), [seq]), body=[
                gast.If(test=gast.Compare(left=_name(k), ops=[gast.Eq()], comparators=[_const(0)]),
                        body=[gast.Assign(targets=[_name(total, True)], value=_name(item), type_comment=None)],
                        orelse=[gast.Assign(targets=[_name(total, True)], value=combine(_name(total), _name(item)),
                                            type_comment=None)]),
                append(_name(total))], orelse=[], type_comment=None)]
            stmts.insert(1, gast.Assign(targets=[_name(total, True)], value=_const(None), type_comment=None))
        for s in stmts:
            self.stmt(_located(s, e), out)
        return _name(result)

    def stream_index_form(self, e, out):
        """(length atom or None for an endless stream, item(k) -> expression) for the iterators of
        STREAMS that can be read by position; None for anything else."""
        kind = self.stream_of(e)
        if kind is None or kind in ("zip", "enumerate", "reversed"):
            return None
        if kind == "genexp":
            return self.positional(self.stream_list(e, out), out)
        args, kw = list(e.args), {k.arg: k.value for k in e.keywords}
        if kind == "iter" and len(args) == 1 and not kw:
            return self.index_form(args[0], out)
        if kind == "map" and len(args) >= 2 and not kw:
            f = self.atom(args[0], out)
            parts = [self.index_form(a, out) for a in args[1:]]
            return self.shortest(parts, out), lambda k: _call(f, [item(k) for _, item in parts])
        if kind == "count" and len(args) + len(kw) <= 2 and set(kw) <= {"start", "step"}:
            start = self.atom(args[0] if args else kw.get("start", _const(0)), out)
            step = self.atom(args[1] if len(args) > 1 else kw.get("step", _const(1)), out)

            def counted(k):
                if not (isinstance(step, gast.Constant) and step.value == 1):
                    k = gast.BinOp(left=k, op=gast.Mult(), right=step)
                if isinstance(start, gast.Constant) and start.value == 0:
                    return k
                return gast.BinOp(left=start, op=gast.Add(), right=k)
            return None, counted
        if kind == "repeat" and 1 <= len(args) + len(kw) <= 2 and set(kw) <= {"times"}:
            value = self.atom(args[0], out)
            times = args[1] if len(args) > 1 else kw.get("times")
            if times is None:
                return None, lambda k: value
            n = self.atom(gast.Call(func=_name("max"), args=[self.atom(times, out), _const(0)], keywords=[]), out)
            return n, lambda k: value
        if kind == "islice" and 2 <= len(args) <= 4 and not kw:
            n0, inner = self.index_form(args[0], out)
            bounds = [self.atom(b, out) for b in args[1:]]
            start, stop, step = (_const(None), bounds[0], _const(None)) if len(bounds) == 1 else \
                (bounds + [_const(None)])[:3]
            start = _const(0) if isinstance(start, gast.Constant) and start.value is None else start
            step = _const(1) if isinstance(step, gast.Constant) and step.value is None else step
            if isinstance(stop, gast.Constant) and stop.value is None:
                if n0 is None:
                    return None, lambda k: inner(gast.BinOp(left=start, op=gast.Add(),
                                                            right=gast.BinOp(left=k, op=gast.Mult(), right=step)))
                stop = n0
            elif n0 is not None:
                stop = self.atom(gast.Call(func=_name("min"), args=[stop, n0], keywords=[]), out)
            n = self.atom(gast.Call(func=_name("len"), args=[gast.Call(func=_name("range"), args=[start, stop, step],
                                                                        keywords=[])], keywords=[]), out)
            return n, lambda k: inner(gast.BinOp(left=start, op=gast.Add(),
                                                 right=gast.BinOp(left=k, op=gast.Mult(), right=step)))
        if kind == "zip_longest" and args and set(kw) <= {"fillvalue"}:
            fill = self.atom(kw.get("fillvalue", _const(None)), out)
            parts = [self.index_form(a, out) for a in args]
            if any(n is None for n, _ in parts):
                self.refuse("zip_longest of an endless iterator never ends", e)
            n = parts[0][0] if len(parts) == 1 else self.atom(gast.Call(func=_name("max"), args=[p[0] for p in parts],
                                                                         keywords=[]), out)
            return n, lambda k: gast.Tuple(elts=[gast.IfExp(test=gast.Compare(left=k, ops=[gast.Lt()], comparators=[m]),
                                                            body=item(k), orelse=fill) for m, item in parts],
                                           ctx=gast.Load())
        if kind == "chain" and not kw:
            lists = [self.stream_list(a, out) if self.stream_of(a) else
                     self.atom(gast.copy_location(_call(_name("list"), [a]), e), out) for a in args]
            if not lists:
                seq = self.atom(gast.List(elts=[], ctx=gast.Load()), out)
            else:
                seq = lists[0]
                for other in lists[1:]:
                    seq = self.atom(gast.copy_location(gast.BinOp(left=seq, op=gast.Add(), right=other), e), out)
            return self.positional(seq, out)
        if kind == "chain.from_iterable" and len(args) == 1 and not kw:
            group, item = self.temp("group"), self.temp("item")
            seq = self.atom(_located(gast.ListComp(elt=_name(item), generators=[
                gast.comprehension(target=_name(group, True), iter=args[0], ifs=[], is_async=0),
                gast.comprehension(target=_name(item, True), iter=_name(group), ifs=[], is_async=0)]), e), out)
            return self.positional(seq, out)
        if kind in ("filter", "accumulate"):
            return self.positional(self.stream_list(e, out), out)
        if kind in COMBINATORIC:
            return self.combinatoric(kind, e, out)
        self.refuse(f"this call of `{kind}` is not supported as an iterator here", e)

    def combinatoric(self, kind, e, out) -> tuple:
        """`product(xs, ys, repeat=r)`, `combinations(xs, r)`, `permutations(xs[, r])`,
        `combinations_with_replacement(xs, r)`, `np.ndindex(shape)`, `np.ndenumerate(a)` by position:
        the tuples of positions are computed from the lengths alone (`rt.combinatoric_positions`, integers), and
        each item picks its entries from the sequences by them, so that the sequences (of numbers or
        arrays being differentiated, or any other iterable) are read by index as a loop reads them.
        The length of an item must be known when the code is compiled: `r` a number (or, for
        `permutations`, of a display or a `range` of numbers, their count)."""
        args, kw = list(e.args), {k.arg: k.value for k in e.keywords}

        def number(v, what):
            if not (isinstance(v, gast.Constant) and isinstance(v.value, int) and not isinstance(v.value, bool)):
                self.refuse(f"`{kind}(...)` here needs {what} written as a number (the length of its items)", e)
            return v.value

        def positions(lengths, r=None):
            held, result = self.temp("shape" if kind.startswith("nd") else "lengths"), self.temp(f"{kind}_positions")
            call = _call(_name(POSITIONS), [_const(kind if kind != "ndenumerate" else "ndindex"), _name(held)]
                         + ([] if r is None else [_const(r)]))
            for target, value in ((held, lengths), (result, call)):
                self.stmt(_located(gast.Assign(targets=[_name(target, True)], value=value, type_comment=None), e), out)
            return self.positional(_name(result), out)

        if kind in ("ndindex", "ndenumerate"):
            if kw or not args or (kind == "ndenumerate" and len(args) != 1):
                self.refuse(f"`np.{kind}` takes {'one array' if kind == 'ndenumerate' else 'a shape'} here", e)
            if kind == "ndindex":
                return positions(gast.Tuple(elts=[self.atom(a, out) for a in args], ctx=gast.Load()))
            a = self.atom(args[0], out)
            shape = self.atom(gast.copy_location(_call(gast.Attribute(value=_name("np"), attr="shape", ctx=gast.Load()),
                                                       [a]), e), out)
            n, index = positions(gast.Tuple(elts=[shape], ctx=gast.Load()))
            return n, lambda k: gast.Tuple(elts=[index(k), gast.Subscript(value=a, slice=index(k), ctx=gast.Load())],
                                           ctx=gast.Load())
        if kind == "product":
            if set(kw) - {"repeat"} or not args:
                self.refuse("`product` takes iterables and `repeat=` here", e)
            r = number(kw["repeat"], "`repeat=`") if "repeat" in kw else 1
        else:
            given = args[1] if len(args) == 2 else kw.get("r")
            if len(args) + len(kw) > 2 or set(kw) - {"r"} or not args:
                self.refuse(f"`{kind}` takes (iterable, r) here", e)
            if given is None and kind == "permutations":  # (all of a display, or of `range(3)`)
                given = self.known_length(args[0])
            r = number(given, "`r`")
            args = args[:1]
        parts = [self.index_form(a, out) for a in args]
        if any(n is None for n, _ in parts):
            self.refuse(f"`{kind}` of an endless iterator never ends", e)
        n, index = positions(gast.Tuple(elts=[m for m, _ in parts], ctx=gast.Load()), None if kind == "product"
                             and r == 1 else r)
        width = len(parts) * r if kind == "product" else r
        return n, lambda k: gast.Tuple(elts=[parts[p % len(parts)][1](gast.Subscript(value=index(k), slice=_const(p),
                                                                                    ctx=gast.Load()))
                                             for p in range(width)], ctx=gast.Load())

    def known_length(self, e):
        """The length of `e` as a constant when the code shows it (a display without starred
        items, `range` of numbers), else None."""
        if isinstance(e, (gast.List, gast.Tuple)) and not any(isinstance(x, gast.Starred) for x in e.elts):
            return _const(len(e.elts))
        if self.is_builtin_call(e, "range") and not e.keywords and all(
                isinstance(a, gast.Constant) and type(a.value) is int for a in e.args):
            return _const(len(range(*(a.value for a in e.args))))
        return None

    def positional(self, seq, out) -> tuple:
        n = self.atom(gast.Call(func=_name("len"), args=[seq], keywords=[]), out)
        return n, lambda k: gast.Subscript(value=seq, slice=k, ctx=gast.Load())

    def shortest(self, parts, out):
        """The length of a zip of `parts` (None when every part is endless)."""
        finite = [n for n, _ in parts if n is not None]
        if not finite:
            return None
        if len(finite) == 1:
            return finite[0]
        return self.atom(gast.Call(func=_name("min"), args=finite, keywords=[]), out)

    # -- loops over functions --------------------------------------------------------------------
    def is_function_atom(self, e) -> bool:
        """Whether `e` surely names a function known when the code is compiled: a lambda, a name
        every binding of which is a def or lambda, or a global path to a function."""
        if isinstance(e, gast.Lambda):
            return True
        if isinstance(e, gast.Name) and e.id in self.locals:
            return e.id in self.def_names
        value = self.callee_value(e) if self.is_global_path(e) else None
        return callable(value) and not isinstance(value, type)

    def function_sequence(self, e):
        """(length, item(k)) of a sequence of functions whose length and items are known when the
        code is compiled (a list or tuple display of them, a module-level list or tuple of
        functions), else None. Display items are evaluated by the caller (`unrolled_loop`)."""
        if isinstance(e, (gast.List, gast.Tuple)) and e.elts and not any(isinstance(x, gast.Starred) for x in e.elts) \
                and any(self.is_function_atom(x) for x in e.elts):
            return len(e.elts), None
        if self.is_global_path(e) and not isinstance(e, gast.Constant):
            value = self.callee_value(e)
            if isinstance(value, (list, tuple)) and 0 < len(value) <= 64 and all(callable(v) for v in value) \
                    and any(not isinstance(v, type) for v in value):
                return len(value), lambda k: gast.Subscript(value=astwalk.clone(e), slice=k, ctx=gast.Load())
        return None

    def unrolled_loop(self, s, out) -> bool:
        """`for f in (g, np.sin, lambda t: ...)` (a sequence of functions, also inside `zip` or
        `enumerate`) is unrolled: one copy of the body per function, each calling a function known
        when the code is compiled. Other sequences zipped with it are read by position, and a copy
        runs only while they have items (as `zip` stops at the shortest)."""
        parts = s.iter.args if self.value_is(s.iter, zip) and not s.iter.keywords else None
        enum = self.value_is(s.iter, enumerate) and len(s.iter.args) == 1 and not s.iter.keywords
        if enum:
            parts = s.iter.args
        candidates = parts if parts is not None else [s.iter]
        static = [self.function_sequence(p) for p in candidates]
        if not any(static):
            return False
        from .normalize import _jumps

        returns = any(isinstance(n, gast.Return) for n in scope_walk(gast.If(test=_const(True), body=s.body,
                                                                               orelse=[])))
        if _jumps(s.body) or returns:
            self.refuse("a loop over a list or tuple of functions is unrolled, one copy of its body per "
                        "function: `break`, `continue` and `return` are not supported in it", s)
        n = min(form[0] for form in static if form)
        items, bounds = [], []
        for part, form in zip(candidates, static):
            if form is None:
                m, item = self.index_form(part, out)
                if m is None:
                    items.append(item)
                    continue
                bounds.append(m)
                items.append(item)
            elif form[1] is None:  # a display: each item evaluated once, before the loop
                atoms = [self.atom(x, out) for x in part.elts]
                items.append(lambda k, atoms=atoms: astwalk.clone(atoms[k.value]))
            else:
                items.append(form[1])

        def value(k):
            got = [item(_const(k)) for item in items]
            if enum:
                return gast.Tuple(elts=[_const(k), got[0]], ctx=gast.Load())
            return got[0] if parts is None else gast.Tuple(elts=got, ctx=gast.Load())

        nested: list = []
        for k in reversed(range(n)):
            copy_ = [_located(gast.Assign(targets=[astwalk.clone(s.target)], value=value(k), type_comment=None), s)] \
                + astwalk.clone(s.body) + nested
            if bounds:
                test = gast.BoolOp(op=gast.And(), values=[gast.Compare(left=_const(k), ops=[gast.Lt()],
                                                                       comparators=[b]) for b in bounds]) \
                    if len(bounds) > 1 else gast.Compare(left=_const(k), ops=[gast.Lt()], comparators=[bounds[0]])
                nested = [_located(gast.If(test=test, body=copy_, orelse=[]), s)]
            else:
                nested = copy_
        for t in nested:
            self.stmt(t, out)
        return True

    def filtered_loop(self, s, out) -> bool:
        """`for t in filter(p, xs): body` is `for item in xs: if p(item): t = item; body`."""
        if self.stream_of(s.iter) != "filter":
            return False
        e = s.iter
        if e.keywords or len(e.args) != 2:
            self.refuse("filter takes (function or None, iterable)", e)
        pred = e.args[0]
        none = isinstance(pred, gast.Constant) and pred.value is None
        pred = None if none else self.atom(pred, out)
        item = self.temp("item")
        test = _name(item) if pred is None else _call(pred, [_name(item)])
        body = [gast.Assign(targets=[s.target], value=_name(item), type_comment=None)] + s.body
        loop = gast.For(target=_name(item, True), iter=e.args[1], body=[gast.If(test=test, body=body, orelse=[])],
                        orelse=s.orelse, type_comment=None)
        self.for_loop(_located(gast.copy_location(loop, s), s), out)
        return True

    def endless_loop(self, s, item, out) -> None:
        """`for t in count(): body` (an endless iterator; a `break` or `return` ends it) is
        `k = -1; while True: k = k + 1; t = item(k); body`."""
        k = self.temp("k")
        out.append(gast.copy_location(gast.Assign(targets=[_name(k, True)], value=_const(-1), type_comment=None), s))
        head = [gast.Assign(targets=[_name(k, True)], value=gast.BinOp(left=_name(k), op=gast.Add(), right=_const(1)),
                            type_comment=None),
                gast.Assign(targets=[s.target], value=item(_name(k)), type_comment=None)]
        loop = gast.While(test=_const(True), body=[_located(h, s) for h in head] + s.body, orelse=[])
        self.while_loop(gast.copy_location(loop, s), out)

    def bind_stream(self, target: str, value, s, out) -> bool:
        """`it = map(...)` (any iterator): materialized as a list when `it` is read exactly once,
        by a loop or a consumer, in no loop the binding is not in; otherwise refused."""
        kind = self.stream_of(value)
        if kind is None:
            return False
        loads = self.load_nodes.get(target, [])
        if not loads:  # an iterator nobody reads: only its arguments are evaluated (its items never are)
            parts = [value.generators[0].iter] if isinstance(value, gast.GeneratorExp) else \
                list(value.args) + [k.value for k in value.keywords]
            for part in parts:
                self.atom(part, out)
            return True
        single = len(loads) == 1 and self.store_count.get(target, 0) == 1
        if single:
            inside = set(self.loops_of.get(id(loads[0]), ())) <= set(self.loops_of.get(id(s), ()))
            single = inside and not self.read_by_next(loads[0])
        if not single:
            self.refuse(f"the iterator `{target}` is read more than once (or with `next`), and each read would "
                        f"continue where the last stopped; bind `{target} = list(...)` instead", s)
        changed = self.changed_before_read(value, s, loads[0])
        if changed is not None:
            self.refuse(f"the iterator `{target}` computes its items only when they are read, and {changed} "
                        f"before that; computed here (as a list) they would not see it: bind `{target} = "
                        f"list(...)` where the items are meant to be computed, or read it first", s)
        out.append(gast.copy_location(gast.Assign(targets=[_name(target, True)], value=self.stream_list(value, out),
                                                  type_comment=None), s))
        return True

    def changed_before_read(self, value, s, load) -> str | None:
        """What may change the items of the iterator `value` bound at `s` before its one read
        `load` (Python computes them only then): a statement between them, in the block of `s`,
        that binds, writes into, updates or passes to a call a name the iterator reads (its
        lambdas' and local functions' free names included); a read that is not a loop's or a
        consumer's (a helper may do anything before it reads); a read outside that block.
        None where nothing can."""
        parent = self.parents.get(id(load))
        consumed = (isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is load) \
            or self.value_is(parent, *CONSUMERS) or self.stream_of(parent) is not None
        if not consumed:
            return "the function it is passed to may change what they read"
        block = self.block_of(s)
        if not any(t is s for t in block):
            return None  # (a statement the lowering made: read where it was made, as before)
        top = load
        while top is not None and not any(top is t for t in block):
            top = self.parents.get(id(top))
        if top is None:
            return "it is read outside the block it is made in"
        late, held = self.lazy_reads(value)
        start = next(k for k, t in enumerate(block) if t is s)
        for stmt in block[start + 1:next(k for k, t in enumerate(block) if t is top)]:
            for node in astwalk.walk(stmt):
                if isinstance(node, gast.Name) and ((node.id in late and not isinstance(node.ctx, gast.Load))
                                                    or (node.id in held and self.changes(node))):
                    return f"line {self.source.loc(stmt).line} changes `{node.id}`"
        return None

    def changes(self, name_node) -> bool:
        """Whether a read of a name may change its object: written into through it, updated in place,
        or handed to a call (which may write into it) or a method of it called."""
        parent = self.parents.get(id(name_node))
        if isinstance(parent, (gast.Subscript, gast.Attribute)) and parent.value is name_node:
            grand = self.parents.get(id(parent))
            return not isinstance(parent.ctx, gast.Load) or (isinstance(grand, gast.Call) and grand.func is parent)
        return isinstance(parent, gast.Call) or (isinstance(parent, gast.AugAssign) and parent.target is name_node)

    def lazy_reads(self, value) -> tuple:
        """(the names an iterator's items read by name when computed: in its lambdas, in a
        generator's expression and conditions, the free names of the local functions it calls;
        the names of every object it reads, whose change in place its items would see)."""
        def names_in(node) -> set:
            return {n.id for n in astwalk.walk(node) if isinstance(n, gast.Name)}
        held = names_in(value)
        late: set = set()
        if isinstance(value, gast.GeneratorExp):  # (its first iterable is evaluated where it is made)
            late = held - names_in(value.generators[0].iter) - names_in(value.generators[0].target)
        for node in astwalk.walk(value):
            if isinstance(node, gast.Lambda):
                late |= names_in(node.body)
        for node in self.scope_nodes:
            if isinstance(node, gast.FunctionDef) and node.name in held:
                late |= names_in(node)
            elif isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda) and any(
                    isinstance(t, gast.Name) and t.id in held for t in node.targets):
                late |= names_in(node.value)
        return late, held | late

    def block_of(self, s) -> list:
        """The statement list `s` is in."""
        parent = self.parents.get(id(s))
        if parent is None:
            return self.scope_body
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list) and any(t is s for t in stmts):
                return stmts
        return [s]

    def read_by_next(self, load) -> bool:
        parent = self.parents.get(id(load))
        return isinstance(parent, gast.Call) and self.value_is(parent, next)

    # -- statements ----------------------------------------------------------------------------
    def raise_stmt(self, exc_func, args, at):
        """`raise exc_func(*args)`, located at `at` (lowered by `python_stmt`)."""
        return _located(gast.copy_location(gast.Raise(exc=_call(exc_func, args), cause=None), at), at)

    def python_stmt(self, s, out) -> bool:
        """Lower a def, raise, assert or with statement into `out`; False for any other statement."""
        if isinstance(s, gast.FunctionDef):
            out.append(gast.copy_location(gast.Assign(targets=[_name(s.name, True)],
                                                      value=self.function_node(s, out, s.name), type_comment=None), s))
            return True
        if isinstance(s, gast.Raise):
            exc = s.exc
            if isinstance(exc, gast.Call) and not any(isinstance(a, gast.Starred) for a in exc.args) \
                    and all(k.arg is not None for k in exc.keywords):
                func = self.atom(exc.func, out)
                args = [self.atom(a, out) for a in exc.args]
                keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, out)) for k in exc.keywords]
                raised = _call(_name(RAISE), [func] + args, keywords)
            else:
                raised = _call(_name(RAISE), [self.atom(exc, out)])
            out.append(gast.copy_location(gast.Expr(value=raised), s))
            return True
        if isinstance(s, gast.Assert):
            fail = gast.copy_location(gast.Raise(exc=_call(_name("AssertionError"), [s.msg] if s.msg else []),
                                                 cause=None), s)
            test = gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=s.test), s)
            self.stmt(gast.copy_location(gast.If(test=test, body=[fail], orelse=[]), s), out)
            return True
        if isinstance(s, gast.With):
            self.errstate(s, out)
            return True
        return False

    def guard_branches(self, s):
        """`if c: <raises> else: rest` is `if c: <raises>` followed by `rest` (the raising branch
        never falls through), so names `rest` binds need no value on the raising path."""
        if _raises(s.body) and s.orelse and not _raises(s.orelse):
            return gast.copy_location(gast.If(test=s.test, body=s.body, orelse=[]), s), s.orelse
        if _raises(s.orelse) and not _raises(s.body):
            negated = gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=s.test), s)
            return gast.copy_location(gast.If(test=negated, body=s.orelse, orelse=[]), s), s.body
        return None

    def errstate(self, s, out) -> None:
        """`with np.errstate(**kw): body` is `token = rt.set_errstate(**kw); body;
        rt.restore_errstate(token)`, the restore also before each jump out of the body."""
        item = s.items[0] if len(s.items) == 1 else None
        if item is None or item.optional_vars is not None or not self.value_is(item.context_expr, np.errstate) \
                or item.context_expr.args:
            self.refuse("`with` is supported for `with np.errstate(...)` (keyword arguments, no `as`) only", s)
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, out)) for k in item.context_expr.keywords]
        if any(k.arg is None for k in keywords):
            self.refuse("`**kwargs` in np.errstate is not supported", s)
        token = self.temp("errstate")
        out.append(gast.copy_location(gast.Assign(targets=[_name(token, True)],
                                                  value=_call(_name(ERRSTATE_ENTER), [], keywords), type_comment=None), s))

        def restore():
            return gast.copy_location(gast.Expr(value=_call(_name(ERRSTATE_EXIT), [_name(token)])), s)

        def before_jumps(stmts):
            result = []
            for t in stmts:
                if isinstance(t, (gast.Return, gast.Break, gast.Continue)):
                    result.append(restore())
                elif isinstance(t, gast.If):
                    t.body, t.orelse = before_jumps(t.body), before_jumps(t.orelse)
                result.append(t)
            return result

        body = before_jumps(self.block(s.body))
        out.extend(body)
        if not (body and isinstance(body[-1], (gast.Return, gast.Break, gast.Continue))):
            out.append(restore())

    def fstring(self, e, out):
        """An f-string as `'<format>'.format(values...)`: the same text (conversions, format specs
        and nested fields kept), no gradient through it."""
        args: list = []

        def text(values) -> str:
            parts = []
            for v in values:
                if isinstance(v, gast.Constant):
                    parts.append(str(v.value).replace("{", "{{").replace("}", "}}"))
                elif isinstance(v, gast.FormattedValue):
                    args.append(self.atom(v.value, out))
                    conv = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[v.conversion]
                    spec = ""
                    if v.format_spec is not None:
                        spec = ":" + text(v.format_spec.values)
                    parts.append("{" + conv + spec + "}")
                else:
                    self.refuse("this f-string is not supported", e)
            return "".join(parts)

        fmt = text(e.values)
        if not args:
            return _const(fmt.replace("{{", "{").replace("}}", "}"))
        return _call(_str_method("format"), [_const(fmt)] + args)

    def builtin(self, fname: str, at):
        """The builtin `fname` as a name, refused where the function's own names shadow it."""
        if not self.is_global_path(_name(fname)):
            raise UnsupportedSyntaxError(f"a starred expression is lowered through the builtin `{fname}`, which "
                                         "a name of this function shadows", self.source.loc(at))
        return _name(fname)

    def unstarred_display(self, e):
        """`(a, *b, c)` as `(a,) + tuple(b) + (c,)`, `[a, *b]` as `[a] + list(b)`: the same items."""
        kind = "tuple" if isinstance(e, gast.Tuple) else "list"
        parts, run = [], []
        for x in e.elts:
            if isinstance(x, gast.Starred):
                if run:
                    parts.append(type(e)(elts=run, ctx=gast.Load()))
                    run = []
                parts.append(_call(self.builtin(kind, e), [x.value]))
            else:
                run.append(x)
        if run:
            parts.append(type(e)(elts=run, ctx=gast.Load()))
        total = parts[0]
        for part in parts[1:]:
            total = gast.BinOp(left=total, op=gast.Add(), right=part)
        return gast.copy_location(total, e)

    def unpack_starred(self, target, value, at, out: list) -> None:
        """`first, *rest, last = value`, as Python runs it: the items as a list, a ValueError when
        there are fewer than the plain targets, each plain target one item and the starred one the
        list of the items between."""
        items = self.temp("unpacked")
        self.stmt(gast.copy_location(gast.Assign(targets=[_name(items, True)], type_comment=None,
                                                 value=_call(self.builtin("list", at), [value])), at), out)
        star = next(k for k, t in enumerate(target.elts) if isinstance(t, gast.Starred))
        before, after = star, len(target.elts) - star - 1
        too_few = gast.Compare(left=_call(self.builtin("len", at), [_name(items)]), ops=[gast.Lt()],
                               comparators=[_const(before + after)])
        message = f"not enough values to unpack (expected at least {before + after})"
        self.stmt(gast.copy_location(gast.If(test=too_few, orelse=[], body=[gast.copy_location(gast.Raise(
            exc=_call(self.builtin("ValueError", at), [_const(message)]), cause=None), at)]), at), out)
        for k, t in enumerate(target.elts):
            if k < star:
                item = gast.Subscript(value=_name(items), slice=_const(k), ctx=gast.Load())
            elif k > star:
                item = gast.Subscript(value=_name(items), slice=_const(k - len(target.elts)), ctx=gast.Load())
            else:
                stop = _const(-after) if after else None
                item = gast.Subscript(value=_name(items), ctx=gast.Load(),
                                      slice=gast.Slice(lower=_const(before), upper=stop, step=None))
                t = t.value
            self.stmt(gast.copy_location(gast.Assign(targets=[t], value=item, type_comment=None), at), out)

    def string_method(self, e, out):
        """`'...'.join(xs)`, `'...'.format(x)`, `'%.3f' % x`: calls of `str`'s own methods
        (`str.join(', ', xs)`), which pass no gradient, never a method of whatever `x` is."""
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Mod) and isinstance(e.left, gast.Constant) \
                and isinstance(e.left.value, str) and self.is_global_path(_name("str")):
            return _call(_str_method("__mod__"), [e.left, self.atom(e.right, out)])
        f = e.func if isinstance(e, gast.Call) else None
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Constant) and isinstance(f.value.value, str) \
                and hasattr(str, f.attr) and self.is_global_path(_name("str")) \
                and not any(isinstance(a, gast.Starred) for a in e.args) and all(k.arg for k in e.keywords):
            return _call(_str_method(f.attr), [f.value] + [self.atom(a, out) for a in e.args],
                         [gast.keyword(arg=k.arg, value=self.atom(k.value, out)) for k in e.keywords])
        return None


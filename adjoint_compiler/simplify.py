"""Simplify: adjoint accumulations to plain assignments, zeros only where paths merge, dead code out.

Guarantees on the output (a list of `Code` and `BIf`):
- the first contribution to `v_bar` on every path is `v_bar = e`, later ones `v_bar = v_bar + e`;
- a contribution that reads an adjoint no path has defined (a zero) is dropped, not computed;
- a `v_bar` defined in only one branch of an `if` gets `rt.zeros_like(v)` in the other branch;
- every statement whose result is never read before the gradients are returned is removed.

    y_bar = 1.0; x_bar += y_bar * 2; x_bar += y_bar    ->   x_bar = y_bar * 2; x_bar = x_bar + y_bar
"""
from __future__ import annotations

import gast

from . import aliasing, astwalk, ir, rtcall, runtime, sink
from .backward import Accum, BIf, BLoop, Code, Mark, Raw, Reset, Restore, counted
from .fixpoint import fixpoint
from .printing import operand as operand_text
from .runtime_facts import NOTHING
from .shapes import SAME_SHAPE, is_elementwise


def _name(id_: str, store: bool = False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def assign_stmt(target: str, value) -> gast.Assign:
    return gast.Assign(targets=[_name(target, True)], value=value, type_comment=None)


_assign = assign_stmt


rt_call = rtcall.call  # rt_call(runtime.<helper>, *args): the node of `rt.<helper>(*args)`
rt_helper = rtcall.helper  # the runtime function a call node calls, else None


def loads(node) -> set:
    """Names a statement reads (an augmented assignment reads its target too)."""
    out = {n.id for n in astwalk.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
        out.add(node.target.id)
    return out


def stores(node) -> tuple:
    """(names rebound, names written into through a subscript or attribute)."""
    rebound, written = set(), set()
    targets = node.targets if isinstance(node, gast.Assign) else (
        [node.target] if isinstance(node, (gast.AugAssign, gast.AnnAssign)) else [])
    for t in targets:
        for n in astwalk.walk(t):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                rebound.add(n.id)
        root = t
        while isinstance(root, (gast.Subscript, gast.Attribute)):
            root = root.value
        if root is not t and isinstance(root, gast.Name):
            written.add(root.id)
    return rebound, written


def _int_literal(e) -> bool:
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        e = e.operand
    return isinstance(e, gast.Constant) and type(e.value) is int


def _literal_index(idx, top: bool = True):
    """A basic index written with literals (ints, slices of ints) as subscript syntax, else None
    (a tuple inside the index's tuple makes it a fancy index, whose repeated slots `+=` would not
    add up: `x[(0, 1, 1),]`)."""
    if _int_literal(idx):
        return idx
    if isinstance(idx, gast.Call) and isinstance(idx.func, gast.Name) and idx.func.id == "slice" \
            and len(idx.args) == 3 and all(_int_literal(a) or (isinstance(a, gast.Constant) and a.value is None)
                                           for a in idx.args):
        lo, hi, step = (None if isinstance(a, gast.Constant) and a.value is None else a for a in idx.args)
        return gast.Slice(lower=lo, upper=hi, step=step)
    if isinstance(idx, gast.Tuple) and idx.elts and top:
        parts = [_literal_index(e, top=False) for e in idx.elts]
        return None if None in parts else gast.Tuple(elts=parts, ctx=gast.Load())
    return None


def whole_index(idx) -> bool:
    """Whether a printed index selects every slot: `...`, `:` or a tuple of them."""
    if isinstance(idx, gast.Constant):
        return idx.value is Ellipsis
    if isinstance(idx, gast.Call) and isinstance(idx.func, gast.Name) and idx.func.id == "slice":
        return all(isinstance(a, gast.Constant) and a.value is None for a in idx.args)
    return isinstance(idx, gast.Tuple) and bool(idx.elts) and all(whole_index(e) for e in idx.elts)


def _overwrites_all(expr) -> bool:
    """Whether `expr` is the gradient of an array before a write that replaced every slot: zero,
    so it is never materialized (`b[...] = v`, `b[:] = v`, `copyto(b, src)`)."""
    helper = rt_helper(expr)
    if helper is runtime.overwritten_adjoint:
        return whole_index(expr.args[1])
    return helper is runtime.overcopied_adjoint and (len(expr.args) == 1 or (
        isinstance(expr.args[1], gast.Constant) and expr.args[1].value is True))


def _fresh(expr) -> bool:
    """Whether `expr` surely evaluates to a new value (arithmetic makes new arrays;
    `rt.unbroadcast(g, x)` is `g` itself or a new array)."""
    if rt_helper(expr) is runtime.unbroadcast:
        return _fresh(expr.args[0])
    return isinstance(expr, (gast.BinOp, gast.UnaryOp)) or rtcall.facts_of(expr).fresh


class Resolver:
    """Turns accumulations into assignments. It also tracks which adjoint arrays are *owned* (held
    by one name only, so they may be updated in place): `x_bar += e`, `rt.add_at(x_bar, idx, g)`
    and in-place zeroing of overwritten slots are used only on owned arrays."""

    def __init__(self, names: dict, zeros: dict | None = None, scalars: set = frozenset()):
        self.names = names  # Var -> adjoint name
        self.adjoint_of = {n: v for v, n in names.items()}
        self.adjoint_names = set(self.adjoint_of)
        self.zero_values = zeros or {}  # adjoint name -> its zero, where not rt.zeros_like(value)
        self.scalars = scalars  # adjoint names of values known to be scalars (never updated in place)

    def accumulate(self, s: Accum, name: str, defined: set, owned: set):
        """The statement adding `s.expr` into `name`, and `name`'s ownership after it."""
        expr = s.expr
        if name not in defined:
            defined.add(name)
            source = expr.id if isinstance(expr, gast.Name) else None
            if s.transfer and source in owned:
                owned.discard(source)
                owned.add(name)
            elif rt_helper(expr) is runtime.overwritten_adjoint and isinstance(expr.args[0], gast.Name) \
                    and expr.args[0].id in owned:
                owned.discard(expr.args[0].id)  # its only reader: zero the slots in place
                expr = rt_call(runtime.zero_slots, *expr.args)
                owned.add(name)
            elif _fresh(expr):
                owned.add(name)
            else:
                owned.discard(name)
            return _assign(name, expr)
        if s.var.kind != "num":
            owned.discard(name)
            return _assign(name, rt_call(runtime.accum, _name(name), expr))
        if s.var.complex:  # (its first contribution may be a real array: never added into in place)
            owned.discard(name)
        if name in owned and rt_helper(expr) is runtime.getitem_adjoint:
            g, _, idx = expr.args
            literal = _literal_index(idx)
            if literal is not None:  # x_bar[1:-1] += g, as one would write it
                return gast.AugAssign(target=gast.Subscript(value=_name(name), slice=literal, ctx=gast.Store()),
                                      op=gast.Add(), value=g)
            return _assign(name, rt_call(runtime.add_at, _name(name), idx, g))
        if name in owned:
            return gast.AugAssign(target=_name(name, True), op=gast.Add(), value=expr)
        owned.add(name)
        return _assign(name, gast.BinOp(left=_name(name), op=gast.Add(), right=expr))

    def block(self, stmts, defined: set, owned: set | None = None) -> list:
        owned = set() if owned is None else owned
        out: list = []
        dropped: set = set()  # locals of rule statements dropped for reading a zero adjoint
        stmts = list(stmts)
        k = 0
        while k < len(stmts):
            s = stmts[k]
            k += 1
            if isinstance(s, Accum):
                name = self.names[s.var]
                read = loads(s.expr)
                if (read & self.adjoint_names) - defined or _overwrites_all(s.expr) or read & dropped:
                    continue
                out.append(Code(self.accumulate(s, name, defined, owned), s.loc))
            elif isinstance(s, Raw):
                read = loads(s.stmt)
                if (read & self.adjoint_names) - defined or read & dropped:
                    dropped |= stores(s.stmt)[0] - self.adjoint_names  # a rule's local made from a zero
                    continue
                defined |= stores(s.stmt)[0] & self.adjoint_names
                source = s.stmt.value.id if s.transfer and isinstance(s.stmt.value, gast.Name) else None
                handed = source in owned
                owned -= set().union(*stores(s.stmt))
                if handed:  # `held = x_bar`, x_bar dead after: the array changes hands
                    owned.discard(source)
                    owned |= stores(s.stmt)[0]
                out.append(Code(s.stmt, s.loc))
            elif isinstance(s, Reset):
                defined.discard(self.names[s.var])
                owned.discard(self.names[s.var])
            elif isinstance(s, Mark):
                out.append(s)
            elif isinstance(s, Restore):
                out.append(restore_code(s.stmt))
            elif isinstance(s, BLoop):
                out += self.loop(s, defined, owned)
            elif isinstance(s, BIf):
                d_body, d_else = set(defined), set(defined)
                o_body, o_else = set(owned), set(owned)
                body, orelse = self.block(s.body, d_body, o_body), self.block(s.orelse, d_else, o_else)
                moved = sink.split(stmts[k:], d_body, d_else, self.names, self.adjoint_names)
                if moved:  # what reads a gradient only one branch defines runs in that branch
                    body += self.block(moved[0], d_body, o_body)  # (resolution goes on where it stopped)
                    orelse += self.block(moved[1], d_else, o_else)
                    stmts[k:] = moved[2]
                for name in sorted(d_body - d_else):
                    orelse.append(self.zeros(name, s.loc))
                    o_else.add(name)
                for name in sorted(d_else - d_body):
                    body.append(self.zeros(name, s.loc))
                    o_body.add(name)
                defined |= d_body | d_else
                owned.intersection_update(o_body & o_else)
                owned |= o_body & o_else
                out.append(BIf(s.cond, body, orelse, s.loc))
        return out

    def loop(self, s: BLoop, defined: set, owned: set) -> list:
        """Adjoints accumulated across iterations start from zero before the loop; adjoints of
        values local to one iteration start undefined in each; carried adjoints are defined at the
        end of every iteration."""
        loop = s.loop
        carried = [self.names[p] for p in loop.params if p in self.names]
        local = {self.names[v] for v in ir.defined_in(loop.body) | {loop.target} if v in self.names}
        local |= {self.names[v] for slot in s.slots for v in (slot.var, slot.rest) if v in self.names}
        # a slot-local array's adjoint is defined by an iteration only if it was on entry
        lent = {self.names[slot.param] for slot in s.slots if not slot.write_back and slot.param in self.names}
        carried = [name for name in carried if name not in lent]
        before = []
        for name in carried + sorted(self.accumulated(s.body) - local - set(carried)):
            if name not in defined:
                if name in lent:
                    continue
                before.append(self.zeros(name, s.loc))
                defined.add(name)
                owned.add(name)
            elif name not in owned and self.adjoint_of[name].kind == "num" and name not in self.scalars:
                # shared (or a read-only broadcast): one private copy here, not one per iteration
                before.append(Code(_assign(name, rt_call(runtime.private, _name(name))), s.loc))
                owned.add(name)
        # An array owned at the top of an iteration must still be owned at its end (the next
        # iteration starts there): shrink the assumption until it holds.
        result: list = []

        def iteration(start: frozenset) -> frozenset:
            inside, end = defined - local, set(start)
            result[:] = self.block(s.body, inside, end)
            for name in carried:
                if name not in inside:
                    result.append(self.zeros(name, s.loc))
                    end.add(name)
            return start & end

        # (it only shrinks: at worst to nothing owned, which holds)
        start = fixpoint(iteration, frozenset(owned - local), len(owned) + 2,
                         "ownership of adjoints around a loop")
        owned.intersection_update(start)
        return before + [BLoop(loop, result, s.loc, s.slots)]

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
        if name in self.zero_values:
            return Code(_assign(name, astwalk.clone(self.zero_values[name])), loc)
        var = self.adjoint_of[name]
        return Code(_assign(name, rt_call(runtime.zeros_like, _name(var.name))), loc)


def header_reads(loop) -> set:
    return {loop.trips.name} if counted(loop) else {v.name for v in ir.operand_vars(loop.iterable)}


def _rebound_by_header(loop) -> set:
    """Names the header of a reverse loop binds at the top of each iteration: the target of
    `for t in reversed(items)` (a counted reverse loop binds none: its target is popped)."""
    return set() if counted(loop) or loop.target is None else {loop.target.name}


def restore_code(write: ir.Assign) -> Code:
    """`b[idx] = b_saved`: the array holds again what it held before the write."""
    base, saved = write.args[0], write.args[-1]
    index = operand_text(write.args[1], in_index=True) if write.prim is ir.SETITEM else "..."
    stmt = gast.parse(f"{base.name}[{index}] = {saved.name}").body[0]
    return Code(stmt, write.loc, restore=base.name)


def _shape_args(node, dtypes: bool = False):
    """(call, position) of each Name under `node` that an `rt` helper reads only for its shape
    (with `dtypes`, also those it reads only for their dtype: the array a write stored into; no
    value read, so no restore of its slots, but never replaced by another value of its shape).
    The helpers say which (`runtime_facts`)."""
    for n in astwalk.walk(node):
        facts = rtcall.facts_of(n)
        if facts is NOTHING:
            continue
        yield from ((n, i) for i in _shape_positions(n, facts, dtypes))


def _shape_positions(call, facts, dtypes: bool, tree=gast):
    """The positions of `_shape_args` in one helper call, whose facts are `facts`."""
    at = facts.dtype_only
    if dtypes and at is not None and len(call.args) > at and isinstance(call.args[at], tree.Name):
        yield at
    if facts.all_shapes:
        yield from (i for i, a in enumerate(call.args) if isinstance(a, tree.Name))
    else:
        yield from (i for i in facts.shape_only if len(call.args) > i and isinstance(call.args[i], tree.Name))


def shapes_from_params(backward: list, classes: dict, params: list, top: list = (), body: list = ()) -> None:
    """Where the backward pass reads a value only for its shape and a parameter surely has that
    shape, read the parameter instead, or else a top-level value (of `top`) it reads anyway, or
    else the operand of the same shape it was computed from elementwise (of `body`, the forward
    IR: defined before it, so it holds that iteration's value wherever it does), the first such
    operand the backward pass reads anyway: the value need not be computed or kept for it."""
    read = _value_reads(backward)
    sources = list(params) + [v for v in top if v.name in read and v not in params]
    by_class = {(classes[v], _sort(v)): v.name for v in reversed(sources) if classes.get(v) not in (None, 0)}
    # a value of a loop whose class is one of the loop's own (a carried value's, or of what the
    # loop computes) has that class's shape in its own iteration alone: not a top-level value's
    in_loops = {v for s in ir.walk(body) if isinstance(s, ir.Loop) for v in ir.defined_in([s])}

    def varies(token) -> bool:
        return token in in_loops or (isinstance(token, tuple) and any(map(varies, token)))
    by_name = {v.name: by_class[t, _sort(v)] for v, t in classes.items()
               if (t, _sort(v)) in by_class and not (v in in_loops and varies(t))}
    defs = {s.target: s for s in ir.walk(body) if isinstance(s, ir.Assign) and s.target is not None}
    for v, token in classes.items():
        if token in (None, 0) or v.name in by_name:
            continue
        source, seen = v, set()
        # down a chain of elementwise operations that keep the shape, to a value read anyway
        while source not in seen and source.name not in read:
            seen.add(source)
            s = defs.get(source)
            same = [a for a in s.args if isinstance(a, ir.Var) and _sort(a) == _sort(v) and classes.get(a) == token] \
                if s is not None and is_elementwise(s) and not s.kwargs else []
            if not same:
                break
            source = same[0]
        if source is not v:
            by_name[v.name] = source.name
    _read_shapes_from(backward, by_name)


def _sort(v: ir.Var) -> tuple:
    """What a helper reading `v` "for its shape alone" may still branch on besides the shape: an
    array or a sequence (`getitem_adjoint`, `zeros_like` and `unbroadcast` build a list's gradient
    for a list), the kind of structure, and real or complex (the zeros made for it). A value is
    read in place of another of its shape only when both have the same sort."""
    return v.kind, v.tree, v.complex


def _nodes(backward: list):
    for item in backward:
        if isinstance(item, (BIf, BLoop)):
            yield from _nodes(item.body)
            yield from _nodes(getattr(item, "orelse", []))
            continue
        node = item.expr if isinstance(item, Accum) else getattr(item, "stmt", None)
        if isinstance(node, gast.AST):
            yield node


def _value_reads(backward: list) -> set:
    return {n for node in _nodes(backward) for n in value_loads(node)}


def _read_shapes_from(backward: list, by_name: dict) -> None:
    for node in _nodes(backward):
        for call, i in list(_shape_args(node)):
            if call.args[i].id in by_name:  # a new node: Name nodes may be shared with value reads
                call.args[i] = _name(by_name[call.args[i].id])


def forget_dtypes(backward: list, names: set) -> None:
    """The dtype reads of `names` (Buffers, which always hold floats, complex numbers or objects)
    are dropped (the argument defaults to None): there is nothing to ask, and the Buffer need not
    be computed for it."""
    for node in _nodes(backward):
        for call, i in list(_shape_args(node, dtypes=True)):
            facts = rtcall.facts_of(call)
            if i == facts.dtype_only and facts.dtype_optional and call.args[i].id in names \
                    and i == len(call.args) - 1:
                del call.args[i]


def dtype_loads(node) -> set:
    """Names a statement reads only for their dtype (kept, never rebuilt from other shapes)."""
    return {call.args[i].id for call, i in _shape_args(node, dtypes=True) if i == rtcall.facts_of(call).dtype_only}


def value_loads(node) -> set:
    """Names whose values (not just shapes or dtypes) a statement reads."""
    return load_sets(node)[1]


def load_sets(node, tree=gast) -> tuple:
    """(names `node` loads, names whose values it reads: `value_loads`, the names `dtype_loads`
    finds), in one walk. (`tree`: `gast`, or `ast` for a node of generated text parsed back.)"""
    skip: set = set()
    names: list = []
    dtypes: set = set()
    name_kind, load = tree.Name, tree.Load
    for n in astwalk.walk(node):
        if isinstance(n, name_kind):
            if isinstance(n.ctx, load):
                names.append(n)
            continue
        facts = rtcall.facts_of(n, tree)
        if facts is not NOTHING:
            for i in _shape_positions(n, facts, True, tree):
                skip.add(id(n.args[i]))
                if i == facts.dtype_only:
                    dtypes.add(n.args[i].id)
    return {n.id for n in names}, {n.id for n in names if id(n) not in skip}, dtypes


def kept_loads(node) -> set:
    """`value_loads(node) | dtype_loads(node)`: the names read as they are (not for a shape)."""
    _, values, dtypes = load_sets(node)
    return values | dtypes


def prune_restores(stmts, needed: set, views: dict) -> tuple:
    """Keep a restore of overwritten slots only if a later adjoint reads the array's values (itself
    or through a view, `views` mapping view names to array names) before the tape gives its name
    an earlier trip's array: a `Mark` of the statement that made the array new (`lap = a + b`,
    one array per trip, sharing memory with no other name), after which the name holds another.
    Returns (kept, arrays whose values are read on entry)."""
    kept: list = []
    needed = set(needed)
    shared = set(views).union(*views.values())
    for s in reversed(stmts):
        if isinstance(s, Mark):
            needed -= _made_anew(s.stmt) - shared
            kept.append(s)
        elif isinstance(s, Code) and s.restore:
            if s.restore in needed:
                kept.append(s)
        elif isinstance(s, Code):
            read = value_loads(s.stmt)
            needed |= read
            for n in read:
                needed |= views.get(n, set())
            kept.append(s)
        elif isinstance(s, BIf):
            body, n_body = prune_restores(s.body, needed, views)
            orelse, n_else = prune_restores(s.orelse, needed, views)
            needed = n_body | n_else
            kept.append(BIf(s.cond, body, orelse, s.loc))
        elif isinstance(s, BLoop):
            found: list = []

            def iteration(out: frozenset, s=s, found=found) -> frozenset:
                found[:] = prune_restores(s.body, out, views)
                return out | found[1]

            bound = _names_bound(s) * (1 + max(map(len, views.values()), default=0)) + 2
            needed = set(fixpoint(iteration, frozenset(needed), bound, "restores read around a loop"))
            kept.append(BLoop(s.loop, found[0], s.loc))
        else:
            kept.append(s)
    kept.reverse()
    return kept, needed


def sharing_groups(views: dict) -> dict:
    """`views` (a name -> the written arrays it may share memory with) made symmetric and
    transitive: each name -> every other name of its group. A read through any name of an array
    (a view of it, an `if`'s or a loop's name for it) needs the restores of writes through any
    other: `t_3`, the `if`'s name for `t_2` after a branch wrote into it, reads what `t_2[1] =
    t_2_saved` put back."""
    group: dict = {}
    for name, arrays in views.items():
        members = {name, *arrays}
        for m in list(members):
            members |= group.get(m, set())
        for m in members:
            group[m] = members
    return {m: members - {m} for m, members in group.items()}


def _made_anew(stmt) -> set:
    """The name of the new array `stmt` makes (a fresh result, not a version a write made), which
    the tape restores at its `Mark` by rebinding the name; else nothing."""
    if isinstance(stmt, ir.Assign) and stmt.target is not None and stmt.target.storage is None \
            and stmt.prim not in ir.WRITES and aliasing.is_fresh(stmt):
        return {stmt.target.name}
    return set()


def _names_bound(item) -> int:
    """How many names the code of a reverse loop or branch reads, at most: a bound on how often a
    set of them can grow."""
    count = 0
    for c in item.body + getattr(item, "orelse", []):
        if isinstance(c, Code):
            count += sum(isinstance(n, gast.Name) for n in astwalk.walk(c.stmt))
        elif isinstance(c, BLoop):
            count += _names_bound(c) + len(header_reads(c.loop))
        elif isinstance(c, BIf):
            count += _names_bound(c) + len(ir.operand_vars(c.cond))
    return count + len(header_reads(item.loop) if isinstance(item, BLoop) else ())


def prune(stmts, live: set) -> tuple:
    """Drop statements whose results are not live; return (kept, names live on entry)."""
    kept: list = []
    live = set(live)
    for s in reversed(stmts):
        if isinstance(s, Mark):
            kept.append(s)
        elif isinstance(s, BLoop):
            found: list = []

            def iteration(out: frozenset, s=s, found=found) -> frozenset:
                body, live_in = prune(s.body, out)
                found[:] = body, live_in - _rebound_by_header(s.loop)
                return out | found[1]

            fixpoint(iteration, frozenset(live), _names_bound(s) + 2, "liveness around a loop")
            body, live_in = found
            if not any(not isinstance(b, Mark) for b in body):
                continue
            live = live | (live_in - _rebound_by_header(s.loop)) | header_reads(s.loop)
            kept.append(BLoop(s.loop, body, s.loc))
        elif isinstance(s, Code):
            rebound, written = stores(s.stmt)
            if (rebound or written) and not ((rebound | written) & live) and not s.restore:
                continue  # (prune_restores decided which restores stay: views read them too)
            killed = set() if isinstance(s.stmt, gast.AugAssign) else rebound
            live = (live - killed) | loads(s.stmt)
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


def simplify(backward: list, adjoint_names: dict, seeded: set, returned: set, views=None,
             zeros: dict | None = None, scalars: set = frozenset()) -> tuple:
    """(backward code, primal and adjoint names it reads on entry).

    `adjoint_names` maps Var -> adjoint name; `seeded` are the adjoints defined before the backward
    pass (the result's); `returned` the adjoint names the gradient function returns, and `defined`
    tells which of those exist at the end. `zeros` maps adjoint names to their zero where it is
    not `rt.zeros_like` of the value; `scalars` are the adjoint names of known scalars."""
    resolver = Resolver(adjoint_names, zeros, scalars)
    defined = set(seeded)
    code = resolver.block(backward, defined)
    code, _ = prune_restores(code, set(), sharing_groups(views or {}))
    code, live_in = prune(code, returned & defined)
    return code, live_in, defined


def forward_needed(fn: ir.Function, needed: set, shaped: set | None = None, may_raise=None) -> tuple:
    """(the primal statements needed to produce the Var names in `needed` (and side
    effects), {stmt: operands} for top-level ones that need only compute the shape of a name in
    `shaped`: the values (or parameters) whose broadcast shape it has, through any chain of such
    statements, or None where the backward pass does not read it); grows `needed` with
    everything read. `may_raise(stmt)` tells a statement that runs even when its value is unused
    (None: the writes)."""
    keep: set = set()
    recipes: dict = {}
    read_for_shape = set() if shaped is None else set(shaped)
    shaped = set(read_for_shape)

    def shape_recipe(s) -> str | None:
        if s.target is None or s.target.name in needed or s.target.name not in shaped or s.kwargs:
            return None
        if is_elementwise(s):
            return "broadcast"
        # (a write only where it cannot raise, for an index out of bounds or too many items)
        if s.prim in SAME_SHAPE or (isinstance(s.prim, ir.Method) and s.prim.name == "copy" and len(s.args) == 1) \
                or (s.prim in ir.WRITES and may_raise is not None and not may_raise(s)):
            return "same"
        return None

    def want(name: str) -> bool:
        return name in needed or name in shaped

    def block(stmts, top=False):
        for s in reversed(stmts):
            if isinstance(s, ir.Assign):
                recipe = shape_recipe(s) if top else None
                if recipe:
                    keep.add(s)
                    recipes[s] = recipe
                    shaped.update(v.name for op in s.args[:1 if recipe == "same" else None]
                                  for v in ir.operand_vars(op))
                    continue
                # a call without a rule (on constants only, see activity) may have side effects
                # (`rng.normal()` advances the generator), and a write may raise (an index out of
                # bounds, too many items), and so may other statements (`may_raise`): they run
                # even when their values are unused
                raising = s.prim in ir.WRITES if may_raise is None else may_raise(s)
                if s.target is None or s.rule is None or raising or want(s.target.name):
                    if s.target is not None:
                        needed.add(s.target.name)
                    keep.add(s)
                    # a write's saved slots are needed only by a restore that reads them
                    reads = ir.stmt_reads(s) if s.prim not in ir.WRITES else \
                        [v for op in s.args[:-1] for v in ir.operand_vars(op)]
                    needed.update(v.name for v in reads)
            elif isinstance(s, ir.If):
                used = [(o, a, b) for o, a, b in zip(s.outputs, s.body_results, s.orelse_results)
                        if want(o.name)]
                needed.update(o.name for o, _, _ in used)
                for _, a, b in used:
                    needed.update(v.name for v in ir.operand_vars(a) + ir.operand_vars(b))
                before = len(keep)
                block(s.body)
                block(s.orelse)
                if used or len(keep) > before:
                    keep.add(s)
                    needed.update(v.name for v in ir.operand_vars(s.cond))
            elif isinstance(s, ir.Loop):
                loop(s)

    def loop(s: ir.Loop):
        def iteration(count, s=s):
            for p, i, n in zip(s.params, s.inits, s.nexts):
                if want(p.name):
                    needed.add(p.name)
                    needed.update(v.name for v in ir.operand_vars(i) + ir.operand_vars(n))
            block(s.body)
            if any(b in keep for b in s.body) or any(p.name in needed for p in s.params) \
                    or any(v is not None and v.name in needed for v in (s.trips, s.target)):
                keep.add(s)
                for op in (s.iterable, s.cond, s.stop):
                    needed.update(v.name for v in ir.operand_vars(op))
                block(s.cond_body)
            return len(needed), len(keep)

        # each round that changes anything keeps one more of the loop's statements or values
        size = sum(1 + len(ir.defined_by(t)) + sum(len(ir.operand_vars(op)) for op in ir.stmt_operands(t))
                   for t in ir.walk([s]))
        fixpoint(iteration, (len(needed), len(keep)), size + 2, "the primal values a loop's adjoint needs")

    block(fn.body, top=True)
    return keep, _shape_sources(fn.body, recipes, read_for_shape)


def _shape_sources(stmts, kinds: dict, read: set) -> dict:
    """For each shape-only statement, the operands whose broadcast shape its value has (scalar
    constants dropped, other shape-only values replaced by their own operands); None for one
    only other shape-only statements read."""
    sources: dict = {}  # Var -> its operands
    out: dict = {}
    for s in stmts:
        kind = kinds.get(s) if isinstance(s, ir.Assign) else None
        if kind is None:
            continue
        ops: list = []
        for op in s.args[:1] if kind == "same" else s.args:
            for item in sources.get(op, [op]) if isinstance(op, ir.Var) else []:
                if not any(item is o for o in ops):
                    ops.append(item)
        if not ops:  # made from constants alone (`np.array(2.0)`): their shape
            ops = [op for op in (s.args[:1] if kind == "same" else s.args) if isinstance(op, ir.Const)]
        sources[s.target] = ops
        out[s] = ops if s.target.name in read else None
    return out

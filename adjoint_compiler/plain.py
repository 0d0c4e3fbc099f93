"""Plain: runtime helper calls of the backward code whose run-time checks are settled at compile
time become the NumPy statements they run.

A write helper checks, at every call, what kind of index it got (advanced indices need
`np.add.at` and the winning duplicates), whether its array is a number or an array, and what it
returns (a slot or a copy of slots). Where the index is basic (integers known to be integers,
literal slices), the adjoint array's rank is known and the array written holds floats (the
helper was not given its dtype: `floats`), the answer is known and the call is replaced:

    x_bar = rt.add_at(x_bar, i, g)              x_bar[i] += g
    v_bar = rt.written_total(b_bar, i)     ->   v_bar = b_bar[i]
    b_bar_2 = rt.zero_slots(b_bar, i)           b_bar[i] = 0.0
                                                b_bar_2 = b_bar

Each rewrite lives beside the helper it replaces, keyed by the helper itself (never its name),
and reproduces exactly the branch the helper would take.
"""
from __future__ import annotations

import math

import gast
import numpy as np

from . import astwalk, rtcall
from . import runtime as rt
from .backward import BIf, BLoop, Code
from .simplify import assign_stmt


class Facts:
    """What the rewrites may assume: `ints` are names surely holding integers, `ranks` the ndim of
    the values (and adjoints) bound to a name."""

    def __init__(self, ints: set, ranks: dict, classes: dict | None = None, differentiable: bool = False):
        self.ints = ints
        self.ranks = ranks
        self.classes = classes or {}  # name -> shape class (shapes), for the arrays of `ranks`
        # the code is to be differentiated again (nesting): no rewrite may leave a value that the
        # compiler reading it back cannot tell from a view of an adjoint array written next
        self.differentiable = differentiable

    def same_shape(self, a, b) -> bool:
        """Whether the names `a` and `b` surely hold arrays of one shape."""
        ta = self.classes.get(a.id) if isinstance(a, gast.Name) else None
        return ta is not None and isinstance(b, gast.Name) and ta == self.classes.get(b.id)

    def parts(self, idx) -> list | None:
        """The parts of a basic index (each 'int' or 'slice'), or None for any other index."""
        items = idx.elts if isinstance(idx, gast.Tuple) else [idx]
        out = []
        for item in items:
            if _int_literal(item) or (isinstance(item, gast.Name) and item.id in self.ints):
                out.append("int")
            elif _literal_slice(item, self.ints) is not None:
                out.append("slice")
            else:
                return None
        return out if items else None

    def selects_one(self, g, idx) -> bool | None:
        """Whether `g[idx]` is one element (True), an array of slots (False), or unknown (None)."""
        parts = self.parts(idx)
        rank = self.ranks.get(g.id) if isinstance(g, gast.Name) else None
        if parts is None or rank is None or rank < 1 or len(parts) > rank:
            return None
        return parts.count("int") == rank


def _int_literal(e) -> bool:
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        e = e.operand
    return isinstance(e, gast.Constant) and type(e.value) is int


def _literal_slice(e, ints: set = frozenset()):
    """`slice(a, b, c)` whose bounds are int literals, None or names of integers (`ints`) as
    subscript syntax (`a:b:c`), else None."""
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "slice" and len(e.args) == 3 \
            and not e.keywords and all(_int_literal(a) or (isinstance(a, gast.Constant) and a.value is None)
                                       or (isinstance(a, gast.Name) and a.id in ints) for a in e.args):
        lo, hi, step = (None if isinstance(a, gast.Constant) and a.value is None else a for a in e.args)
        return gast.Slice(lower=lo, upper=hi, step=step)
    return None


def _subscript_index(idx):
    """A basic index (checked by Facts.parts) as subscript syntax."""
    if isinstance(idx, gast.Tuple):
        return gast.Tuple(elts=[_subscript_index(e) for e in idx.elts], ctx=gast.Load())
    return _literal_slice(idx, _ANY_NAME) or idx


class _AnyName(frozenset):
    def __contains__(self, name) -> bool:
        return True


_ANY_NAME = _AnyName()


def _subscript(g, idx, store: bool = False):
    return gast.Subscript(value=gast.Name(id=g.id, ctx=gast.Load(), annotation=None, type_comment=None),
                          slice=_subscript_index(astwalk.clone(idx)), ctx=gast.Store() if store else gast.Load())


def _method(value, name: str):
    return gast.Call(func=gast.Attribute(value=value, attr=name, ctx=gast.Load()), args=[], keywords=[])


# -- expressions: helper(args) -> an expression, or None to keep the call ---------------------------

def _written_total(call, facts: Facts):
    """`rt.written_total(g, idx)` of a float array, basic index: the slot, or the sum of the slots."""
    if len(call.args) != 2 or call.keywords:
        return None
    g, idx = call.args
    one = facts.selects_one(g, idx)
    if one is None or (one and facts.differentiable):  # (`g[i]`: a scalar, or a view read back)
        return None
    return _subscript(g, idx) if one else _method(_subscript(g, idx), "sum")


def _written_adjoint(call, facts: Facts):
    """`rt.written_adjoint(g, idx)` of a float array, basic index: the slot, or a copy of the slots."""
    if len(call.args) != 2 or call.keywords:
        return None
    g, idx = call.args
    one = facts.selects_one(g, idx)
    if one is None or (one and facts.differentiable):  # (`g[i]`: a scalar, or a view read back)
        return None
    return _subscript(g, idx) if one else _method(_subscript(g, idx), "copy")


def _pow_base_derivative(call, facts: Facts):
    """`rt.pow_base_derivative(x, k)` for an integer literal k >= 2: `k * x ** (k - 1)`."""
    if len(call.args) != 2 or call.keywords or not (isinstance(call.args[1], gast.Constant)
                                                    and type(call.args[1].value) is int and call.args[1].value >= 2):
        return None
    x, k = call.args
    power = x if k.value == 2 else gast.BinOp(left=x, op=gast.Pow(), right=gast.Constant(value=k.value - 1, kind=None))
    return gast.BinOp(left=gast.Constant(value=k.value, kind=None), op=gast.Mult(), right=power)


def _chain(call, facts: Facts):
    """`rt.chain(c, d)` for a nonzero finite number literal `c`: the cotangent is zero nowhere, so
    it is the product (`d` itself for c = 1 and a `d` that is a new array)."""
    if len(call.args) != 2 or call.keywords:
        return None
    c, d = call.args
    value = _nonzero_number(c)
    if value is None:
        return _chain_of_numbers(c, d, facts) or _number_times_scaled(c, d, facts)
    if value == 1 and isinstance(d, (gast.BinOp, gast.UnaryOp)):
        return d
    return gast.BinOp(left=c, op=gast.Mult(), right=d)


def _nonzero_number(e):
    """The value of a nonzero finite int or float literal `e` (`2`, `-0.5`), else None."""
    negated = isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub)
    node = e.operand if negated else e
    value = node.value if isinstance(node, gast.Constant) else None
    if type(value) not in (int, float) or value == 0 or not math.isfinite(value):
        return None
    return -value if negated else value


def _chain_of_numbers(g, d, facts: Facts):
    """`rt.chain(g, d)` of a cotangent and a derivative known to be numbers (names of ndim 0 and
    arithmetic of them): `g * d if g else g * 0.0`, the helper's branches without its call (a
    scalar loop runs it every trip), up to the sign of a zero product."""
    def number(node) -> bool:
        return all(isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Constant, gast.Name, gast.operator,
                                  gast.unaryop, gast.expr_context)) for n in astwalk.walk(node)) \
            and all(facts.ranks.get(n.id) == 0 for n in astwalk.walk(node) if isinstance(n, gast.Name))
    if not (isinstance(g, gast.Name) and number(g) and number(d)):
        return None
    zero = gast.BinOp(left=astwalk.clone(g), op=gast.Mult(), right=gast.Constant(value=0.0, kind=None))
    return gast.IfExp(test=astwalk.clone(g), body=gast.BinOp(left=g, op=gast.Mult(), right=d), orelse=zero)


def _number_times_scaled(g, d, facts: Facts):
    """`rt.chain(g, k * x)` (or `x * k`) of a number `g` and a nonzero finite number literal `k`:
    `rt.chain(g * k, x)`, zero exactly where `g` is, with the scaling done on the number and not
    on the array (`np.sum(r ** 2)`'s gradient `g * (2 * r)` in one pass over `r`, not two)."""
    if not (isinstance(g, gast.Name) and facts.ranks.get(g.id) == 0 and isinstance(d, gast.BinOp)
            and isinstance(d.op, gast.Mult)):
        return None
    for k, x in ((d.left, d.right), (d.right, d.left)):
        if _nonzero_number(k) is not None:
            return rtcall.call(rt.chain, gast.BinOp(left=g, op=gast.Mult(), right=k), x)
    return None


EXPRESSIONS = {rt.written_total: _written_total, rt.written_adjoint: _written_adjoint,
               rt.pow_base_derivative: _pow_base_derivative, rt.chain: _chain}


# -- statements: `a = helper(g, ...)` that update g in place -> statements, or None ------------------

def _in_place(target: str, g, stmt) -> list:
    """`stmt` (which updates the array `g` in place), then `target = g` unless they are one name."""
    out = [stmt]
    if target != g.id:
        out.append(assign_stmt(target, gast.Name(id=g.id, ctx=gast.Load(), annotation=None, type_comment=None)))
    return out


def _zero_slots(target: str, call, facts: Facts):
    """`a = rt.zero_slots(g, idx)`, g an array of floats, basic index: `g[idx] = 0.0`."""
    if len(call.args) != 2 or call.keywords or not isinstance(call.args[0], gast.Name):
        return None
    g, idx = call.args
    if facts.selects_one(g, idx) is None:
        return None
    zero = gast.Assign(targets=[_subscript(g, idx, store=True)], value=gast.Constant(value=0.0, kind=None),
                       type_comment=None)
    return _in_place(target, g, zero)


def _add_at(target: str, call, facts: Facts):
    """`a = rt.add_at(g, idx, v)`, basic index: `g[idx] += v`."""
    if len(call.args) != 3 or call.keywords or not isinstance(call.args[0], gast.Name):
        return None
    g, idx, v = call.args
    if facts.parts(idx) is None:
        return None
    add = gast.AugAssign(target=_subscript(g, idx, store=True), op=gast.Add(), value=v)
    return _in_place(target, g, add)


STATEMENTS = {rt.zero_slots: _zero_slots, rt.add_at: _add_at}


def _add_copied(call, facts: Facts):
    """`x += rt.copied_adjoint(g, src, True)` (`np.copyto` of every slot into a float array):
    the copy protects `g` from later updates of what it is assigned to; added in place, it is
    only read, so `x += g` (or its sum over the axes `src` was broadcast along)."""
    if len(call.args) != 3 or call.keywords or not (isinstance(call.args[2], gast.Constant)
                                                    and call.args[2].value is True):
        return None
    g, src, _ = call.args
    if facts.ranks.get(getattr(g, "id", None)) is None:
        return None
    return g if facts.same_shape(g, src) else rtcall.call(rt.unbroadcast, g, src)


ADDED = {rt.copied_adjoint: _add_copied}  # `x += helper(...)`: the value is only read


_helper = rtcall.helper  # the runtime function a call node calls, else None


class _Expressions(gast.NodeTransformer):
    def __init__(self, facts: Facts):
        self.facts = facts

    def visit_Call(self, node):
        self.generic_visit(node)
        rewrite = EXPRESSIONS.get(_helper(node))
        new = rewrite(node, self.facts) if rewrite else None
        return node if new is None else new


def _statement(stmt, facts: Facts) -> list:
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
        rewrite = STATEMENTS.get(_helper(stmt.value))
        new = rewrite(stmt.targets[0].id, stmt.value, facts) if rewrite else None
        if new is not None:
            return new
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add):
        rewrite = ADDED.get(_helper(stmt.value))
        new = rewrite(stmt.value, facts) if rewrite else None
        if new is not None:
            stmt = gast.AugAssign(target=stmt.target, op=stmt.op, value=new)
    if not any(_helper(n) in EXPRESSIONS for n in astwalk.walk(stmt)):
        return [stmt]  # (no call to rewrite: the transformer would give it back as it is)
    return [_Expressions(facts).visit(stmt)]


# -- across statements: the gradient of a full reduction read as the number it broadcasts --------

def _is_rt(node, helper) -> bool:
    return _helper(node) is helper


def _scalar(e, facts: Facts) -> bool:
    """Whether an expression surely is one number."""
    if isinstance(e, gast.Constant):
        return type(e.value) in (int, float)
    if isinstance(e, gast.Name):
        return facts.ranks.get(e.id) == 0
    if isinstance(e, gast.UnaryOp):
        return _scalar(e.operand, facts)
    if isinstance(e, gast.BinOp):
        return _scalar(e.left, facts) and _scalar(e.right, facts)
    return _is_rt(e, rt.reduced_size)


def _shape_class(e, facts: Facts):
    """The shape class of an elementwise expression of names and numbers (None if unknown)."""
    if isinstance(e, gast.Name):
        return facts.classes.get(e.id)
    if isinstance(e, gast.UnaryOp):
        return _shape_class(e.operand, facts)
    operands = [e.left, e.right] if isinstance(e, gast.BinOp) and isinstance(e.op, _ELEMENTWISE) else _ufunc_args(e)
    if not operands:
        return None
    arrays = [side for side in operands if not _scalar(side, facts)]
    classes = {_shape_class(side, facts) for side in arrays}
    return classes.pop() if len(classes) == 1 else None


_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.Div)  # (binary operators applied slot by slot)


def _ufunc_args(e) -> list | None:
    """The arguments of a call `np.<ufunc>(...)` of one output given all its inputs and no
    keyword, else None."""
    func = _numpy_function(e.func) if isinstance(e, gast.Call) else None
    if isinstance(func, np.ufunc) and func.nout == 1 and func.nin == len(e.args) and not e.keywords \
            and not any(isinstance(a, gast.Starred) for a in e.args):
        return list(e.args)
    return None


def _broadcast_reads(stmt, name: str, token, facts: Facts, updated: set):
    """How `stmt` reads `name`, one number broadcast to the shape class `token`: (the places of
    the reads, (parent node, field, index); whether `stmt` binds a name to one number computed
    from it), if every read stays one number (`-a`, `a * 2.0`, `np.exp(a)`) until it meets,
    slot by slot, an operand of shape class `token` (`rt.chain(a, d)`, `a * d`, `d - a`,
    `np.maximum(a, d)`) or makes the whole value bound to a name never written into; else None."""
    parents = {}
    for node in astwalk.walk(stmt):
        for field, value in gast.iter_fields(node):
            for index, child in enumerate(value) if isinstance(value, list) else [(None, value)]:
                if isinstance(child, gast.AST):
                    parents[id(child)] = (node, field, index)
    sites, whole = [], False
    for read in astwalk.walk(stmt):
        if not (isinstance(read, gast.Name) and read.id == name and isinstance(read.ctx, gast.Load)):
            continue
        node, ok = read, False
        while id(node) in parents:
            parent = parents[id(node)][0]
            if (_is_rt(parent, rt.chain) or _is_rt(parent, rt.chain_div)) and len(parent.args) == 2 \
                    and not parent.keywords and parent.args[0] is node:
                ok = _shape_class(parent.args[1], facts) == token
                break
            if parent is stmt:  # the whole value is one number: `b = -a`
                ok = whole = isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id not in updated | {name}
                break
            if isinstance(parent, gast.UnaryOp) and isinstance(parent.op, (gast.USub, gast.UAdd)):
                node = parent  # still one number
                continue
            operands = [parent.left, parent.right] if isinstance(parent, gast.BinOp) \
                and isinstance(parent.op, _ELEMENTWISE) else _ufunc_args(parent)
            if operands is None or not any(a is node for a in operands):
                break
            others = [a for a in operands if a is not node]
            if all(_scalar(a, facts) for a in others):
                node = parent  # still one number
                continue
            ok = all(_scalar(a, facts) or _shape_class(a, facts) == token for a in others)
            break
        if not ok:
            return None
        sites.append(parents[id(read)])
    return sites, whole


def _scalar_gradients(items: list, facts: Facts, reads: dict, updated: set, made: set | None = None) -> list:
    """`a = rt.expand_reduced(c, x, None, False)` (one number `c` broadcast to `x`'s shape) whose
    every reader combines it slot by slot with something of `x`'s shape is the number itself,
    `a = rt.broadcast_number(c)` (of the dtype the broadcast array had): the operation broadcasts
    it the same way, with one pass fewer. A reader that only makes another such number, `b = -a`,
    becomes `b = rt.expand_reduced(-a, x, None, False)` (no array made), a candidate in its turn.
    `reads` counts the reads of each name in the whole code (every one must be such a reader);
    `updated` are the names whose arrays may be written; `made` the names made numbers here."""
    from .backward import Mark
    from .simplify import stores
    made = set() if made is None else made
    out = []
    for item in items:
        if isinstance(item, BIf):
            item = BIf(item.cond, _scalar_gradients(item.body, facts, reads, updated, made),
                       _scalar_gradients(item.orelse, facts, reads, updated, made), item.loc)
        elif isinstance(item, BLoop):
            item = BLoop(item.loop, _scalar_gradients(item.body, facts, reads, updated, made), item.loc)
        out.append(item)
    k = 0
    while k < len(out):
        c = out[k]
        k += 1
        call = c.stmt.value if isinstance(c, Code) and isinstance(c.stmt, gast.Assign) else None
        if not (_is_rt(call, rt.expand_reduced) and len(call.args) == 4 and not call.keywords
                and len(c.stmt.targets) == 1 and isinstance(c.stmt.targets[0], gast.Name)):
            continue
        value, x, axis, keep = call.args
        token = facts.classes.get(getattr(x, "id", None))
        if not (token is not None and _scalar(value, facts) and isinstance(axis, gast.Constant)
                and axis.value is None and isinstance(keep, gast.Constant) and keep.value is False):
            continue
        name = c.stmt.targets[0].id
        needs = {n.id for n in astwalk.walk(value) if isinstance(n, gast.Name)} | {x.id}
        plan, numbers = [], []
        for item in out[k:]:  # the readers that follow, while `a`, `x` and what `c` reads stay bound
            if isinstance(item, Mark):
                if needs & {v.name for v in ir_defined(item.stmt)}:
                    break
                continue
            if not isinstance(item, Code) or item.restore is not None:
                break
            found = _broadcast_reads(item.stmt, name, token, facts, updated)
            if found is None:
                break
            plan += found[0]
            if found[1]:
                numbers.append(item.stmt)
            changed = set().union(*stores(item.stmt))
            if name in changed or needs & changed:
                break
        if not plan or len(plan) != reads.get(name, 0):
            continue
        # a literal is read as itself (`1.0 * w` is then `w`); another number through its name, as
        # `rt.broadcast_number` makes it: of the dtype the spread array had (a float64 for a Python
        # float: a float32 array it meets is computed with in float64, as before)
        literal = not needs - {x.id}  # (numbers alone: `1.0`, `-1.0`)
        for node, field, index in plan:
            read = astwalk.clone(value) if literal else gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                                                  type_comment=None)
            if index is None:
                setattr(node, field, read)
            else:
                getattr(node, field)[index] = read
        for stmt in numbers:  # `b = -a`: `b` broadcast as `a` was
            stmt.value = rtcall.call(rt.expand_reduced, stmt.value, astwalk.clone(x), *map(astwalk.clone, (axis, keep)))
        if literal:
            k -= 1
            del out[k]
        else:  # (a number made from such numbers alone, `-a`, has their dtype already)
            if not needs - {x.id} <= made:
                c.stmt.value = rtcall.call(rt.broadcast_number, value)
            else:
                c.stmt.value = value
            facts.ranks[name] = 0  # (every read of it is one of those just checked)
            made.add(name)
    return out


_NUMPY_WRITERS = (np.copyto, np.put, np.place, np.put_along_axis, np.fill_diagonal)  # (of their first argument)
_UPDATING_METHODS = frozenset({"at", "put", "fill", "sort", "partition", "resize", "setfield", "itemset", "setflags",
                               "byteswap"})  # (of their receiver: `np.add.at(a, ...)`'s first argument too)


def _numpy_function(func):
    """The NumPy function `np.<name>` a call's function node names, else None."""
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id == "np":
        return getattr(np, func.attr, None)
    return None


def _updated_names(code: list) -> set:
    """The names whose arrays some statement of `code` may write into: the targets of `op=`, the
    arrays written through a subscript or attribute, the first argument of a helper that updates
    it (`rt.add_at`, `rt.zero_slots`) or of a NumPy writer (`np.add.at`, `np.copyto`, `out=`), a
    receiver of an updating method, every name a restore reads or writes, and every name copied
    to another (`held = x_bar`: the array may be updated under the other name)."""
    from .simplify import stores
    out: set = set()
    for item in code:
        for stmt in _statements(item):
            names = {n.id for n in astwalk.walk(stmt) if isinstance(n, gast.Name)}
            if getattr(item, "restore", None) is not None:
                out |= names
                continue
            rebound, written = stores(stmt)
            out |= written
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                out.add(stmt.target.id)
            if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name):
                out.add(stmt.value.id)
            for call in (n for n in astwalk.walk(stmt) if isinstance(n, gast.Call)):
                writer = rtcall.facts_of(call).updates or any(k.arg == "out" for k in call.keywords) \
                    or any(_numpy_function(call.func) is f for f in _NUMPY_WRITERS) or (
                        _helper(call) is None and isinstance(call.func, gast.Attribute)
                        and call.func.attr in _UPDATING_METHODS)
                if writer:
                    out |= {n.id for a in call.args[:1] for n in astwalk.walk(a) if isinstance(n, gast.Name)}
                    if isinstance(call.func, gast.Attribute):
                        out |= {n.id for n in astwalk.walk(call.func.value) if isinstance(n, gast.Name)}
    return out


def _unit_products(code: list, facts: Facts, stored: dict, updated: set) -> list:
    """`a = 1.0 * b` (or `b * 1.0`: the seed of `grad` folded in by `copies`) of a name `b` surely
    bound to real floats is `a = b` when neither array is ever written into (`_updated_names`) and
    `a` is bound once: the product only made a new array that nothing updates (1.0 * b is b in
    every slot, nan and -0.0 included). A gradient handed back that is an argument is copied by
    the entry point. `a += 1.0 * b` is `a += b`."""
    out = []
    for item in code:
        if isinstance(item, BIf):
            item = BIf(item.cond, _unit_products(item.body, facts, stored, updated),
                       _unit_products(item.orelse, facts, stored, updated), item.loc)
        elif isinstance(item, BLoop):
            item = BLoop(item.loop, _unit_products(item.body, facts, stored, updated), item.loc)
        elif isinstance(item, Code) and item.restore is None and isinstance(item.stmt, gast.Assign) \
                and len(item.stmt.targets) == 1 and isinstance(item.stmt.targets[0], gast.Name):
            name, value = item.stmt.targets[0].id, item.stmt.value
            operand = _times_one(value)
            if operand is not None and operand.id in facts.ranks and stored.get(name) == 1 \
                    and not {name, operand.id} & updated:
                item = Code(assign_stmt(name, operand), item.loc)
        elif isinstance(item, Code) and item.restore is None and isinstance(item.stmt, gast.AugAssign) \
                and isinstance(item.stmt.op, (gast.Add, gast.Sub)):
            operand = _times_one(item.stmt.value)  # (`a += 1.0 * b` only reads the product)
            if operand is not None and operand.id in facts.ranks:
                item = Code(gast.AugAssign(target=item.stmt.target, op=item.stmt.op, value=operand), item.loc)
        out.append(item)
    return out


def _scaled_chains(code: list, facts: Facts, reads: dict, stored: dict, updated: set) -> list:
    """`b = rt.chain(n, x)` of a number `n`, whose one reader scales it by a number (`a = -b`,
    `a = b * k`, `a = k * b`), is `a = rt.chain(-n, x)` (`n * k`, `k * n`): the number is scaled
    and the array made once (`r = y - X @ w` passes `-r_bar` on: no second pass over the slots).
    A zero `n` still gives exactly zero. `b` must be bound once, read once and never written."""
    from .backward import Mark
    from .simplify import stores
    out = []
    for item in code:
        if isinstance(item, BIf):
            item = BIf(item.cond, _scaled_chains(item.body, facts, reads, stored, updated),
                       _scaled_chains(item.orelse, facts, reads, stored, updated), item.loc)
        elif isinstance(item, BLoop):
            item = BLoop(item.loop, _scaled_chains(item.body, facts, reads, stored, updated), item.loc)
        out.append(item)
    k = 0
    while k < len(out):
        c = out[k]
        k += 1
        target = _single_target(c)
        call = c.stmt.value if target is not None else None
        if not (_is_rt(call, rt.chain) and len(call.args) == 2 and not call.keywords and _scalar(call.args[0], facts)
                and reads.get(target) == 1 and stored.get(target) == 1 and target not in updated):
            continue
        needs = {n.id for a in call.args for n in astwalk.walk(a) if isinstance(n, gast.Name)} | {target}
        for j in range(k, len(out)):
            item = out[j]
            if isinstance(item, Mark):
                if needs & {v.name for v in ir_defined(item.stmt)}:
                    break
                continue
            if not isinstance(item, Code) or item.restore is not None:
                break
            if any(isinstance(n, gast.Name) and n.id == target for n in astwalk.walk(item.stmt)):
                number = _scaling(item.stmt, target, call.args[0], facts)
                if number is not None:
                    item.stmt.value = rtcall.call(rt.chain, number, call.args[1])
                    k -= 1
                    del out[k]
                break
            if needs & set().union(*stores(item.stmt)):
                break
    return out


def _single_target(item):
    """The name a `Code` item `name = value` binds, else None."""
    if isinstance(item, Code) and item.restore is None and isinstance(item.stmt, gast.Assign) \
            and len(item.stmt.targets) == 1 and isinstance(item.stmt.targets[0], gast.Name):
        return item.stmt.targets[0].id
    return None


def _scaling(stmt, name: str, n, facts: Facts):
    """For `a = -name`, `a = name * k` or `a = k * name` (k a number), the number `n` scaled
    alike; else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    e = stmt.value

    def is_name(node) -> bool:
        return isinstance(node, gast.Name) and node.id == name
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub) and is_name(e.operand):
        return gast.UnaryOp(op=gast.USub(), operand=n)
    if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Mult):
        if is_name(e.left) and _scalar(e.right, facts) and not any(map(is_name, astwalk.walk(e.right))):
            return gast.BinOp(left=n, op=gast.Mult(), right=e.right)
        if is_name(e.right) and _scalar(e.left, facts) and not any(map(is_name, astwalk.walk(e.left))):
            return gast.BinOp(left=e.left, op=gast.Mult(), right=n)
    return None


def _times_one(e):
    """`b` for `1.0 * b` or `b * 1.0` (`b` a name), else None."""
    if not (isinstance(e, gast.BinOp) and isinstance(e.op, gast.Mult)):
        return None
    for one, other in ((e.left, e.right), (e.right, e.left)):
        if isinstance(one, gast.Constant) and type(one.value) in (int, float) and one.value == 1 \
                and isinstance(other, gast.Name):
            return other
    return None


def ir_defined(stmt) -> list:
    from . import ir
    return ir.defined_by(stmt)


def _statements(item):
    if isinstance(item, Code):
        yield item.stmt
    for inner in (item.body + getattr(item, "orelse", [])) if isinstance(item, (BIf, BLoop)) else []:
        yield from _statements(inner)


def rewrite(code: list, facts: Facts) -> list:
    """`code` with the settled helper calls replaced (nested blocks included)."""
    code = _rewrite(code, facts)
    numbers = Facts(facts.ints, dict(facts.ranks), facts.classes, facts.differentiable)  # (+ the names made numbers)
    code = _rewrite(_scalar_gradients(code, numbers, _name_counts(code, gast.Load), _updated_names(code)), numbers)
    code = _scaled_chains(code, numbers, _name_counts(code, gast.Load), _name_counts(code, gast.Store),
                          _updated_names(code))
    return _unit_products(code, facts, _name_counts(code, gast.Store), _updated_names(code))


def _name_counts(code: list, context) -> dict:
    """{name: how many times the code reads it (`context` gast.Load) or binds it (gast.Store)}."""
    counts: dict = {}
    for item in code:
        for stmt in _statements(item):
            for n in astwalk.walk(stmt):
                if isinstance(n, gast.Name) and isinstance(n.ctx, context):
                    counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _rewrite(code: list, facts: Facts) -> list:
    out = []
    for c in code:
        if isinstance(c, Code) and c.restore is None:
            out += [Code(s, c.loc) for s in _statement(c.stmt, facts)]
        elif isinstance(c, BIf):
            out.append(BIf(c.cond, _rewrite(c.body, facts), _rewrite(c.orelse, facts), c.loc))
        elif isinstance(c, BLoop):
            out.append(BLoop(c.loop, _rewrite(c.body, facts), c.loc))
        else:
            out.append(c)
    return out

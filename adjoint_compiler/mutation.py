"""Mutation safety: reject writes whose effect on other values the IR could not follow.

`ssa` follows every name bound to a written array, and the views it knows (`aliasing.view_kind`):
a write through such a view writes its base, and the views of a written array are read again.
What it cannot follow is any other sharing of memory: an array held in a tuple, list or dict, the
result of an operation not known to return a fresh array (`aliasing.may_alias`), an `if` that binds
one name to either of two arrays. Two patterns would then differentiate wrongly and are rejected
(MutationError, at the user's line):
- a write (or an augmented assignment of an array) into a value that may share memory with another;
- a value that may share memory with an array used after that array was written.

    rows = list(A)        # L3
    A[0] = 5.0            # L4
    return rows[0]        # L5 -> MutationError: `rows` (L3) may share memory with `A`, written on L4
"""
from __future__ import annotations

import operator

import numpy as np

from . import aliasing, ir, runtime_facts
from .errors import MutationError
from .fixpoint import fixpoint


class _Arrays:
    """Union-find over Vars that may hold the same array object."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, v):
        while self.parent.get(v, v) is not v:
            v = self.parent[v]
        return v

    def union(self, a, b) -> None:
        if isinstance(a, ir.Var) and isinstance(b, ir.Var):
            self.parent[self.find(a)] = self.find(b)


_ZERO_D_MAKERS = (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.zeros, np.ones, np.empty, np.full,
                  np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy)


def zero_d_arrays(fn: ir.Function, params: set, ranks: dict | None = None) -> set:
    """The values that may be 0-d arrays (`params`, the arguments known to be, and what array
    constructors, copies, in-place updates, writes, `x[...]`, branches and loops make of them):
    a rank-0 value that is no number, which an in-place update changes for every name bound to
    it. Every other rank-0 value is an immutable number. A list, tuple or dict that may hold such
    an array counts too (`out = [np.array(0.0)]`), and so do its items and copies. With `ranks`, a
    value known to have one axis or more is none (nor is what it holds: `a[3]` of `np.zeros(4)`)."""
    out = set(params)

    def held_by(s) -> list:  # (what the result may be or hold: a container's items, an item read)
        if s.prim is ir.SETITEM:
            return [s.args[2]]
        return aliasing.may_alias(s) + (list(s.args) if s.in_place or s.prim is operator.getitem else [])
    stmts = list(ir.walk(fn.body))
    changed = True
    while changed:
        changed = False
        for s in stmts:
            made = []
            if isinstance(s, ir.Assign) and s.target is not None:
                first = s.args[0] if s.args else None
                try:
                    maker = s.prim in _ZERO_D_MAKERS or s.prim in (ir.OWN, ir.Method("copy"))
                except TypeError:
                    maker = False
                if maker or ((s.in_place or s.prim in ir.WRITES) and first in out) or \
                        any(op in out for op in held_by(s)):
                    made.append(s.target)
            elif isinstance(s, ir.If):
                made += [o for o, a, b in zip(s.outputs, s.body_results, s.orelse_results) if a in out or b in out]
            elif isinstance(s, ir.Loop):
                made += [p for p, i, n in zip(s.params, s.inits, s.nexts) if i in out or n in out]
            for v in made:
                if v not in out and not (ranks or {}).get(v):
                    out.add(v)
                    changed = True
    return out


def check_shared_updates(fn: ir.Function, classes: dict, zero_d: set = frozenset()) -> None:
    """`x += e` or `xs.append(v)` where another name holds the same array or list: NumPy and Python
    would change both names; the IR would not. Rejected unless the value is surely a scalar.
    Besides the names `ssa` saw bound to the value, any value of another of the user's names
    that may be the same object (through `if` results, loop-carried values and earlier in-place
    updates, `same_arrays(..., updates=True)`) and is read after the update counts."""
    computed: list = []

    def order() -> list:  # (once per function, when first needed)
        if not computed:
            computed.append(program_order(fn))
        return computed[0]

    mutable = zero_d_arrays(fn, zero_d)

    def number(v) -> bool:  # (a number may be shared freely; a 0-d array is updated in place)
        return classes.get(v) == 0 and v not in mutable

    for value, name, other, loc, held in fn.shared_updates:
        if number(value):
            continue
        if held == "argument":
            raise MutationError(f"`{name}` is updated in place here, and it may be the array the caller passed as "
                                f"`{other}` (through a branch or an earlier trip of a loop), which the caller sees "
                                f"change; write into the array itself (`{other}[...] = ...`) or make `{name}` a "
                                f"copy first", loc)
        if not held and not _unread_after_update(fn, value, loc, classes):
            _refuse_shared(name, other, loc)
        if not held:
            continue
        updates = [st for st in ir.walk(fn.body) if isinstance(st, ir.Assign) and st.in_place and st.loc == loc]
        if updates and all(number(st.target) for st in updates):
            continue  # (the update makes a scalar: as the value itself being one, above)
        defined = any(value is p for p in fn.params) or any(value in ir.defined_by(t) for t in ir.walk(fn.body))
        if len(updates) != 1 or not defined or _read_after(fn, value, updates[0], classes, order()):
            _refuse_shared(name, other, loc)  # (a value that held the object before a loop, read after; or
            # one ssa replaced by another since, whose reads are not its own)
    objects = same_arrays(fn.body, updates=True)
    written = {objects.find(st.args[0]) for st in ir.walk(fn.body) if isinstance(st, ir.Assign) and st.prim in ir.WRITES}
    for st in ir.walk(fn.body):
        if isinstance(st, ir.Assign) and st.in_place and st.prim not in ir.WRITES and st.args \
                and st.args[0] in mutable and classes.get(st.args[0]) == 0 and objects.find(st.target) in written:
            # (`a op= e` of a 0-d array is compiled as `a = a op e`, a number, into which nothing can write)
            raise MutationError(f"`{st.target.display}` may be a 0-d array that is updated in place here and "
                                f"also written into (by a write or a helper's `op=`); write the update into it "
                                f"(`{st.target.display}[...] = {st.target.display} ...`)", st.loc)
    members: dict = {}
    for v in list(fn.params) + [v for st in ir.walk(fn.body) for v in ir.defined_by(st)]:
        members.setdefault(objects.find(v), []).append(v)
    for st in ir.walk(fn.body):
        if not (isinstance(st, ir.Assign) and st.in_place and st.args and isinstance(st.args[0], ir.Var)) \
                or number(st.target):
            continue
        name = st.target.display
        for v in members.get(objects.find(st.args[0]), []):
            if v.user and v.user != st.target.user and not number(v) and _read_after(fn, v, st, classes, order()):
                _refuse_shared(name, v.display, st.loc)


def check_arguments_followed(fn: ir.Function) -> None:
    """The arguments the caller sees after the call (`ssa.build(track_arguments=True)`) hold
    their arrays' last versions: refused where a write made a newer one that no name followed."""
    for p in fn.lost_arguments:
        raise MutationError(f"the array passed as `{p}` is written into in place where the compiler cannot tell "
                            f"which name holds it afterwards (a loop that swaps or rebinds the names of arrays it "
                            f"writes into); copy it first (`{p} = {p}.copy()`), and write the result back into "
                            f"`{p}` at the end (`{p}[...] = ...`)", fn.loc)


def check_loop_entries(fn: ir.Function) -> None:
    """A name a loop does not rebind, holding the array one of its carried names entered with,
    which the loop writes into while that carried name is rebound (`cur, nxt = a, b; for:
    nxt[:] = f(cur); cur, nxt = nxt, cur`, then `a` read): the name keeps the array's version from
    before the loop, stale once a trip wrote into it. (A carried name only written through is one
    loop value with every name of its array, `ssa`'s `bind`; then this cannot happen.) Refused
    where the name is read."""
    objects = same_arrays(fn.body, updates=True)
    order = program_order(fn)
    for k, (loop, outer, _) in enumerate(order):
        if not isinstance(loop, ir.Loop):
            continue
        other_arms = [t for branch in outer if isinstance(branch, ir.If)  # (no path runs the loop and these)
                      for arm in (branch.body, branch.orelse) if not any(t is loop for t in ir.walk(arm))
                      for t in ir.walk(arm)]
        inner = list(ir.walk(loop.cond_body + loop.body))
        written = {objects.find(st.args[0]) for st in inner if isinstance(st, ir.Assign) and st.prim in ir.WRITES}
        for p, init in zip(loop.params, loop.inits):
            if not isinstance(init, ir.Var) or objects.find(p) not in written:
                continue
            # (after an enclosing loop carrying `init`, the name is that loop's final value)
            carrier = next((e for e in outer if isinstance(e, ir.Loop) and init in e.params), None)
            later = [t for t, around, reads in order[k + 1:] if init in reads and t is not loop
                     and not any(t is u for u in other_arms) and (carrier is None or carrier in around)]
            if later:
                raise MutationError(f"this reads the array `{init.display}` held before the loop on line "
                                    f"{loop.loc.line}, which writes into it through `{p.display}` while rebinding "
                                    f"`{p.display}` to other arrays; which array holds what after a trip cannot be "
                                    f"followed: read it through the loop's names, or copy it before the loop",
                                    later[0].loc)


def _read_at_end(t, inside=None) -> list:
    """The operands a block statement reads once its blocks have run: an `if`'s results, a loop's
    next values and its condition (read again at the top of the next trip). With `inside` (a
    statement in one arm of the `if`), the results of that arm alone: the other arm's are read
    only on a path that does not run `inside`."""
    if isinstance(t, ir.If):
        if inside is not None and any(s is inside for s in ir.walk(t.body)):
            return list(t.body_results)
        if inside is not None and any(s is inside for s in ir.walk(t.orelse)):
            return list(t.orelse_results)
        return list(t.body_results) + list(t.orelse_results)
    return list(t.nexts) + [t.cond, t.stop] if isinstance(t, ir.Loop) else []


def program_order(fn: ir.Function) -> list:
    """[(statement, the statements enclosing it, the Vars it reads)] of `fn` in program order."""
    order: list = []

    def walk(stmts, outer):
        for t in stmts:
            order.append((t, outer, [v for op in _value_operands(t) for v in ir.operand_vars(op)]))
            if isinstance(t, ir.If):
                walk(t.body, outer + (t,))
                walk(t.orelse, outer + (t,))
            elif isinstance(t, ir.Loop):
                walk(t.cond_body, outer + (t,))
                walk(t.body, outer + (t,))

    walk(fn.body, ())
    return order


def _read_after(fn: ir.Function, value, update, classes: dict, order: list, seen=()) -> bool:
    """Whether `value` (or a value that may hold it: a view, a container) may be read once the
    statement `update` has run: by a later statement, by a statement enclosing it (an `if`'s
    results, a loop's next values), in a later trip of a loop around it that does not define
    `value`, or as the result. `order`: `program_order(fn)`."""
    if value in ir.operand_vars(fn.result):
        return True
    at = next(k for k, (t, _, _) in enumerate(order) if t is update)
    if any(value in ir.defined_by(t) for t, _, _ in order[at + 1:]):
        return False  # made after the update (from its result, or from another name read then)
    enclosing = order[at][1]
    defined_in = next((outer for t, outer, _ in order if value in ir.defined_by(t)), ())
    repeating = [t for t in enclosing if isinstance(t, ir.Loop) and t not in defined_in
                 and value not in t.params]
    renewed = _renewed_in(value, [t for t in enclosing if isinstance(t, ir.Loop)])
    for k, (t, outer, reads) in enumerate(order):
        if k == at or not any(v is value for v in reads):
            continue
        if (k > at and any(loop not in outer for loop in renewed)) or (
                isinstance(t, ir.Assign) and t.prim is ir.CHECK_UPDATE):
            continue  # (read after a loop that renews it; the update's own check of shape and dtype)
        if k > at or any(loop in outer for loop in repeating):
            return True
        if t in enclosing and value in [v for op in _read_at_end(t, update) for v in ir.operand_vars(op)]:
            return True
        if isinstance(t, ir.Assign) and value in aliasing.may_alias(t, classes) and t.target is not None \
                and all(t.target is not w for w in seen) \
                and _read_after(fn, t.target, update, classes, order, seen + (value,)):
            return True  # a view or a container made from it earlier is read afterwards
    return False


def _refuse_shared(name: str, other, loc) -> None:
    holder = "another value (an item of the sequence looped over) is" if not other else \
        f"{other} names" if other.startswith("the ") else f"`{other}` names"  # (`the default of c in h`)
    raise MutationError(f"`{name}` is updated in place here, but {holder} the same array or list, "
                        f"and would change too; write into it for a change every name sees "
                        f"(`{name}[...] = {name} + ...`), or `{name} = {name} + ...` for a new value, or copy "
                        f"it first (`{name} = {name}.copy()`)", loc)


def _only_in_other_branch(branch_stmt: ir.If, update, value) -> bool:
    """Whether the `if` yields `value` only from the branch that does not hold `update` (and does
    not test it), so its result is the object `update` changed only on the path that did not run."""
    for own, own_results in ((branch_stmt.body, branch_stmt.body_results),
                             (branch_stmt.orelse, branch_stmt.orelse_results)):
        if any(t is update for t in ir.walk(own)):
            return value not in ir.operand_vars(branch_stmt.cond) \
                and not any(value in ir.operand_vars(r) for r in own_results)
    return False


def _renewed_in(value, loops) -> list:
    """The loops among `loops` (around an update of `value`) of which `value` is a param that each
    trip leaves a new object in: read after such a loop, `value` is the last trip's new object,
    not the one a trip updated (`g = g_in; g += e; g_in = f(g)`)."""
    return [loop for loop in loops if any(value is p for p in loop.params) and _made_in_trip(
        loop.nexts[next(j for j, p in enumerate(loop.params) if p is value)],
        {v: t for t in ir.walk(loop.body) for v in ir.defined_by(t)})]


def _made_in_trip(v, defs: dict) -> bool:
    """Whether the object `v` holds at the end of a trip was made during the trip (a fresh result,
    perhaps updated or written in place since), so it is not the one the loop param held. `defs`:
    the statements of the loop body by the Vars they define."""
    todo, seen = [v], []
    while todo:
        u = todo.pop()
        if not isinstance(u, ir.Var):
            continue  # a constant holds no array
        if any(u is w for w in seen):
            continue
        seen.append(u)
        st = defs.get(u)
        if isinstance(st, ir.Assign) and (st.prim in ir.WRITES or st.in_place) and st.args:
            todo.append(st.args[0])
        elif isinstance(st, ir.Assign) and (aliasing.is_fresh(st) or aliasing.makes_list(st)):
            continue  # (a new list holds old arrays, but appending to it changes no other list)
        elif isinstance(st, ir.If):
            k = next(j for j, out in enumerate(st.outputs) if out is u)
            todo += [st.body_results[k], st.orelse_results[k]]
        elif isinstance(st, ir.Loop) and any(u is p for p in st.params):
            k = next(j for j, p in enumerate(st.params) if p is u)  # an inner loop's value: the
            todo += [st.inits[k], st.nexts[k]]  # object it entered with, or one a trip of it left
        else:
            return False  # a param, a value from outside the loop, a view or an unknown result
    return True


def _read_at_return(fn: ir.Function) -> list:
    """The values read once the function returns: its result's, and the arguments' values the
    caller sees after the call (`vjp` and `jacfwd(out=k)` of a function writing into them)."""
    after = [v for v in getattr(fn, "arguments_after", None) or () if isinstance(v, ir.Var)]
    return list(ir.operand_vars(fn.result)) + after


def _unread_after_update(fn: ir.Function, value, loc, classes: dict, base=None, seen=frozenset()) -> bool:
    """Whether nothing reads `value` once an in-place update or a write at `loc` (of `value`
    itself, or of `base`, which may share its memory) has run: then nothing can see the change (the IR computes
    a new value), and the update is as safe as a rebinding. A read later in program order, a read
    anywhere in a loop that repeats the update but not the definition of `value`, and any value
    that may share memory with `value` count as reads."""
    if not isinstance(value, ir.Var):
        return False
    base = value if base is None else base
    order: list = []  # (stmt, enclosing loops)

    def walk(stmts, loops):
        for st in stmts:
            order.append((st, loops))
            if isinstance(st, ir.If):
                walk(st.body, loops)
                walk(st.orelse, loops)
            elif isinstance(st, ir.Loop):
                walk(st.cond_body, loops + (st,))
                walk(st.body, loops + (st,))

    walk(fn.body, ())
    updates = [k for k, (st, _) in enumerate(order) if isinstance(st, ir.Assign) and st.loc == loc
               and (st.in_place or st.prim in ir.WRITES) and st.args and st.args[0] is base]
    if len(updates) != 1 or value in _read_at_return(fn):
        return False
    at = updates[0]
    defined_in = next((loops for st, loops in order if value in ir.defined_by(st)), ())
    defined_in += tuple(st for st, _ in order if isinstance(st, ir.Loop) and value in st.params)
    repeating = [loop for loop in order[at][1] if loop not in defined_in]
    # a param of a loop around the update, read after that loop, is its last trip's next value:
    # not the object updated when each trip makes a new one (`g = g_in; g += e; g_in = f(g)`)
    renewed = _renewed_in(value, order[at][1])
    for k, (st, loops) in enumerate(order):
        if k == at or value not in [v for op in _value_operands(st) for v in ir.operand_vars(op)]:
            continue
        if (k > at and any(loop not in loops for loop in renewed)) or (
                isinstance(st, ir.Assign) and st.prim is ir.CHECK_UPDATE):
            continue  # (the update's own check reads the shape and dtype it keeps)
        if isinstance(st, ir.If) and _only_in_other_branch(st, order[at][0], value) \
                and not any(loop in loops for loop in repeating):
            continue  # (the branch that did not run the update yields it: the object not updated)
        if not isinstance(st, ir.Assign):
            return False  # a block's result may hold it
        if value in aliasing.may_alias(st, classes) and st.target is not base and (
                st.target in seen or not _unread_after_update(fn, st.target, loc, classes, base, seen | {value})):
            return False  # a value that may hold it (a view, a container) is read afterwards
        if k > at or any(loop in loops for loop in repeating):
            return False
    return True


def same_arrays(body, updates: bool = False) -> _Arrays:
    """Which Vars may hold one array object: a write's versions, loop params with their values,
    `if` outputs with their branch values. With `updates`, which may hold one object once in-place
    updates are followed (the result of `x += e` is `x`'s object), where a loop param is not the
    value the loop makes anew each trip (`_made_in_trip`)."""
    arrays = _Arrays()
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and s.target is not None and s.args \
                and (s.prim in ir.WRITES or (updates and s.in_place)):
            arrays.union(s.target, s.args[0])
        elif isinstance(s, ir.If):
            for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                arrays.union(out, a)
                arrays.union(out, b)
        elif isinstance(s, ir.Loop):
            defs = {v: t for t in ir.walk(s.body) for v in ir.defined_by(t)} if updates else {}
            for p, i, n in zip(s.params, s.inits, s.nexts):
                arrays.union(p, i)
                if not (updates and _made_in_trip(n, defs)):
                    arrays.union(p, n)
    return arrays


def updated_params(fn: ir.Function) -> dict:
    """{position of a parameter: the Loc of the first statement that changes its object}: a write
    into it (through a view, or in a helper, too), an in-place update (`op=`, `append`, `pop`) or
    an in-place update of an item of it (`xs[0] += v`), followed through the versions writes and
    updates make, loops, `if`s and the copy made on entry (`OWN`). Conservative: a number's `op=`
    counts too (its caller asks only about parameters holding arrays, lists or dicts)."""
    arrays = same_arrays(fn.body, updates=True)
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign) and s.prim is ir.OWN and s.target is not None and s.args:
            arrays.union(s.target, s.args[0])
    roots = {arrays.find(p): i for i, p in enumerate(fn.params)}
    out: dict = {}
    for s in ir.walk(fn.body):
        if not (isinstance(s, ir.Assign) and s.args):
            continue
        changed = [s.args[0]] if s.prim in ir.WRITES or s.in_place else []
        changed += [s.item_of] if s.item_of is not None else []
        for v in changed:
            i = roots.get(arrays.find(v)) if isinstance(v, ir.Var) else None
            if i is not None:
                out.setdefault(i, s.loc)
    return out


def drop_number_checks(fn: ir.Function, ranks: dict, zero_d: set = frozenset()) -> None:
    """Remove the `rt.check_update(a, a op e)` that ssa put after each `a op= e` where `a` is surely
    a number (rank 0 and no 0-d array, `zero_d_arrays`): Python rebinds a number, NumPy checks
    nothing."""
    mutable = zero_d_arrays(fn, zero_d, ranks)

    def prune(block: list) -> None:
        block[:] = [s for s in block if not (isinstance(s, ir.Assign) and s.prim is ir.CHECK_UPDATE
                                             and ranks.get(s.args[0]) == 0 and s.args[0] not in mutable)]
        for s in block:
            for sub in (s.body, s.orelse) if isinstance(s, ir.If) else \
                    (s.cond_body, s.body) if isinstance(s, ir.Loop) else ():
                prune(sub)
    prune(fn.body)


def check(fn: ir.Function, ranks: dict | None = None, zero_d: set = frozenset()) -> dict:
    """Raise MutationError for unsafe writes; return {name: names of the written arrays it may
    share memory with} (reading it reads those arrays). `zero_d`: the arguments that are 0-d
    arrays (`zero_d_arrays`)."""
    mutable = zero_d_arrays(fn, zero_d)

    def number(v) -> bool:  # (an immutable scalar: no write or update changes another name's)
        return (ranks or {}).get(v) == 0 and v not in mutable
    arrays = same_arrays(fn.body)
    order: list = []  # (stmt, enclosing loops)
    shares: dict = {}  # Var -> {root of another array it may share memory with: (Var, made at)}
    made_at: dict = {}  # Var -> position in `order` from which its value is current
    if_aliases: dict = {}  # Var -> position after the `if` that may have made it another name's array
    loop_aliases: dict = {}  # Var -> (loop position, its end if it surely runs) of a loop that rebinds it
    carried: dict = {}
    made_by: dict = {}  # Var -> the statement that made it
    lists: dict = {}  # Var -> whether it surely is a Python list  # loop param -> (its loop's position, its value at the end of an iteration)

    # how many arrays a value may share memory with, at most: one per value, parameter or global
    bound = len(ir.defined_in(fn.body)) + len(fn.params) + sum(
        isinstance(op, ir.Global) for t in ir.walk(fn.body) for op in ir.stmt_operands(t)) + 1

    def aliases_of(op, relation: str) -> dict:
        """{root: (the value, how the new value relates to it)} for a value made from `op`."""
        if isinstance(op, ir.Global):
            return {("global", op.path): (op, relation)}
        if not isinstance(op, ir.Var):
            return {}
        out = {arrays.find(op): (op, relation)}
        out.update(shares.get(op, {}))
        return out

    def define(v, found: dict) -> None:
        found = {r: w for r, w in found.items() if r is not arrays.find(v)}
        if found:
            shares[v] = {**shares.get(v, {}), **found}

    sides: list = []  # per position in `order`: {id of an enclosing `if`: the branch it is in}

    def walk(stmts, loops, side=None):
        side = side or {}
        for s in stmts:
            order.append((s, loops))
            sides.append(side)
            if isinstance(s, ir.Assign) and s.target is not None:
                made_at[s.target] = len(order) - 1
                made_by[s.target] = s
                lists[s.target] = aliasing.makes_list(s) or (s.prim in ir.WRITES and lists.get(s.args[0], False))
                # a write's version, or `x op= e`'s, is the same array: it keeps what it shares
                found = dict(shares.get(s.args[0], {})) if s.prim in ir.WRITES or s.in_place else {}
                if s.prim not in ir.WRITES:
                    relation = "a view of" if aliasing.view_kind(s) else "may share memory with"
                    for op in aliasing.may_alias(s, ranks):
                        found.update(aliases_of(op, relation))
                define(s.target, found)
            elif isinstance(s, ir.If):
                walk(s.body, loops, {**side, id(s): 0})
                walk(s.orelse, loops, {**side, id(s): 1})
                inner = ir.defined_in(s.body) | ir.defined_in(s.orelse)
                for out, *ends in zip(s.outputs, s.body_results, s.orelse_results):
                    made_at[out] = len(order) - 1
                    lists[out] = all(lists.get(end, False) for end in ends)
                    for end in ends:
                        if not isinstance(end, ir.Var):
                            continue
                        define(out, shares.get(end, {}))
                        if out.storage is None and end.kind == "num" and (end not in inner or end in if_aliases):
                            # both names may be one array: neither may be used after a write (an
                            # inner `if`'s alias is one of the outer `if` too)
                            if_aliases.setdefault(out, len(order) - 1)
                            if_aliases.setdefault(end, len(order) - 1)
            elif isinstance(s, ir.Loop):
                loop_start = len(order) - 1
                for p, init, nxt in zip(s.params, s.inits, s.nexts):
                    made_at[p] = len(order) - 1
                    made_by[p] = init  # (a loop-carried list: made by what made its value on entry)
                    carried[p] = (len(order) - 1, nxt)
                    lists[p] = lists.get(init, False)
                    define(p, aliases_of(init, "may share memory with") if not (isinstance(init, ir.Var) and arrays.find(init) is
                                                       arrays.find(p)) else shares.get(init, {}))

                def iteration(_, s=s, loops=loops, side=side):
                    """What a carried value may share after one more iteration (only grows)."""
                    mark = len(order)
                    walk(s.cond_body, loops + (s,), side)
                    walk(s.body, loops + (s,), side)
                    for p, nxt in zip(s.params, s.nexts):
                        define(p, shares.get(nxt, {}) if isinstance(nxt, ir.Var) else {})
                    del order[mark:], sides[mark:]
                    return sum(map(len, shares.values()))

                # each round that changes anything gives one of the loop's values another array
                fixpoint(iteration, sum(map(len, shares.values())), len(ir.defined_in([s])) * bound + 2,
                         "what loop-carried values may share")
                walk(s.cond_body, loops + (s,), side)
                walk(s.body, loops + (s,), side)
                for p in s.params:
                    carried[p] = carried[p] + (len(order) - 1,)
                runs = _surely_runs(s, made_by)
                for p, init, nxt in zip(s.params, s.inits, s.nexts):
                    made = made_by.get(nxt) if isinstance(nxt, ir.Var) else None
                    if isinstance(init, ir.Var) and init.kind == "num" and isinstance(made, ir.Assign) \
                            and made.prim not in ir.WRITES and not made.in_place:
                        # rebound to a new value each trip: the name holds the array it came with
                        # during the first trip, and after a loop that may not run, like an alias
                        # made in one branch (a loop that surely runs leaves it a new array)
                        for v in (p, init):
                            loop_aliases.setdefault(v, (loop_start, len(order) - 1 if runs else None))

    walk(fn.body, ())
    writes = []  # (position, root written, stmt, loops)
    for k, (s, loops) in enumerate(order):
        if not isinstance(s, ir.Assign):
            continue
        if s.in_place and s.args and s.prim not in ir.WRITES and (ranks or {}).get(s.args[0]) != 0:
            _refuse_lasting_update(s, shares, lists)
        # (a statement marked in place whose first operand is a constant writes no memory)
        in_place = s.in_place and isinstance(s.args[0], ir.Var) and (ranks or {}).get(s.args[0]) != 0
        if in_place and s.prim not in ir.WRITES and (s.args[0].kind == "seq" or lists.get(s.args[0])):
            continue  # `xs.append(v)`, `xs.pop()`: the list changes, no array's memory does
        if s.prim in ir.WRITES or in_place:
            base = s.args[0]
            origin = made_by.get(base.storage or base) if isinstance(base, ir.Var) else None
            if isinstance(origin, ir.Assign) and origin.prim is np.diag and origin.args \
                    and (ranks or {}).get(origin.args[0]) != 1:
                raise MutationError(f"`{_name_of(base)}` may be the read-only view `np.diag` makes of a matrix (of a "
                                    "vector it makes a new matrix): NumPy raises 'assignment destination is "
                                    "read-only' here; copy it first (`.copy()`)", s.loc)
            # what the written memory may be part of: nothing for a list (its slots, or an append,
            # change the list, not the items it shares with others; no list is a view of another)
            others = {} if s.into_copy or s.prim is ir.CONCAT or base.kind == "seq" or lists.get(base) \
                else shares.get(base, {})
            if others and all(_unread_after_update(fn, o, s.loc, ranks or {}, base) for o, _ in others.values()) \
                    and (s.prim not in ir.WRITES or not any(o in fn.params or isinstance(o, ir.Global)
                                                             for o, _ in others.values())):
                others = {}  # `x op= e` or a write on memory nothing else reads afterwards (a rebinding, a
                # write into `x` alone: `g = rt.unbroadcast(t, x)` may be `t`, which is dead), unless
                # the memory is an argument's or a global's (a write would change the caller's array)
            if others:
                other, relation = next(iter(others.values()))
                if isinstance(other, ir.Global) and lasting(other.value):
                    raise MutationError(lasting_change(other), s.loc)  # (a global's array, or a default's)
                what = "a write into" if s.prim in ir.WRITES else "an in-place update of"
                raise MutationError(
                    f"cannot differentiate {what} `{_name_of(base)}`, {_relation(relation)} "
                    f"`{_describe(other)}`: the write would change it too, which the gradient cannot "
                    f"follow; write into `{_describe(other)}` itself, or make `{_name_of(base)}` a copy "
                    f"first (`.copy()`)", s.loc)
            writes.append((k, arrays.find(base), s, loops))
        elif s.item_of is not None and not number(s.args[0]) and not _holds_numbers(s.item_of, made_by, ranks):
            # `xs[i] op= v`: Python runs `op=` on the item itself, then stores it back; an array item
            # that another value may hold (a view of an array, an array bound to a name) changes too
            held = {r: w for r, w in shares.get(s.item_of, {}).items()
                    if r is not arrays.find(s.item_of) and not (isinstance(w[0], ir.Var) and (
                        lists.get(w[0]) or number(w[0])))}  # numbers are never changed
            other = _item_seen_after(fn, s, held, shares, arrays, ranks or {}) if held else None
            if other is not None:
                raise MutationError(
                    f"cannot differentiate an in-place update of an item of the list `{_name_of(s.item_of)}`: "
                    f"`{_describe(other)}` may hold the same array, and would change too; write "
                    f"`{_name_of(s.item_of)}[i] = {_name_of(s.item_of)}[i] + ...` (a new array) instead", s.loc)
    if writes:
        # every statement's reads, then the result's (read when the function returns)
        reading = [(k, s.loc, loops, sides[k], [v for op in _value_operands(s) for v in ir.operand_vars(op)]
                    if not isinstance(s, ir.Loop) else [v for op in s.inits for v in ir.operand_vars(op)])
                   for k, (s, loops) in enumerate(order)]
        reading.append((len(order), fn.loc, (), {}, _read_at_return(fn)))
        for k, loc, loops, side, reads in reading:
            for v in reads:
                watched = [(root, other, relation, made_at.get(v, -1), None)
                           for root, (other, relation) in shares.get(v, {}).items()]
                if v in if_aliases:  # the `if` may have bound it to the same array as another name
                    watched.append((arrays.find(v), None, "possibly the same array as", if_aliases[v], None))
                if v in loop_aliases:  # so may a loop, until its end if it surely runs
                    watched.append((arrays.find(v), None, "loop", *loop_aliases[v]))
                for root, other, relation, start, until in watched:
                    for w_pos, w_root, w, w_loops in writes:
                        if until is not None and w_pos > until:
                            continue
                        if relation in ("a view of", "may share memory with") and w.prim is ir.SETITEM \
                                and lists.get(w.args[0]):
                            continue  # (a slot of a list rebound: no object changes, an item read before included)
                        if w_root is root and w.target is not v and not _exclusive(sides[w_pos], side) \
                                and _stale(v, start, k, w_pos, w_loops, loops, order, carried, made_at):
                            other = w.args[0] if other is None else other
                            if relation == "loop":
                                raise MutationError(
                                    f"`{_name_of(v)}` may be the array written into on line {w.loc.line}: the loop "
                                    f"on line {order[start][0].loc.line} rebinds `{_describe(other)}` to a new "
                                    "array, but not during its first trip, nor when it does not run; make a copy "
                                    "before the loop (`.copy()`)", loc)
                            raise MutationError(
                                f"`{_name_of(v)}` {_verb(relation)} `{_describe(other)}` (line "
                                f"{order[start][0].loc.line if start >= 0 else fn.loc.line}) and is used "
                                f"after `{_name_of(w.args[0])}` is written on line {w.loc.line}; make it a "
                                f"copy (`.copy()`) or read it again after the write", loc)
    names_of_root: dict = {}
    for _, root, w, _ in writes:
        names_of_root.setdefault(root, set()).add(w.args[0].name)
    out: dict = {}
    for s, _ in order:
        for v in ir.defined_by(s):
            root = arrays.find(v)
            if root in names_of_root and v.name not in names_of_root[root]:
                out.setdefault(v.name, set()).update(names_of_root[root])
            for r in shares.get(v, {}):
                if r in names_of_root:
                    out.setdefault(v.name, set()).update(names_of_root[r])
    for p in fn.params:
        if arrays.find(p) in names_of_root:
            out.setdefault(p.name, set()).update(names_of_root[arrays.find(p)])
    return out


def _value_operands(s) -> list:
    """The operands a statement reads for their values: a runtime helper's arguments it reads only
    for their shapes (`rt.unbroadcast(g, x)`, in a gradient read back as source) are left out, as
    a write changes no shape; `rt.check_update` reads shapes and dtypes alone."""
    if isinstance(s, ir.Assign) and s.prim is ir.CHECK_UPDATE:
        return []
    if isinstance(s, ir.Assign) and s.args:
        facts = runtime_facts.facts(s.prim)
        if facts.all_shapes or facts.shape_only:
            return [op for i, op in enumerate(s.args) if not facts.shape_position(i)] + list(s.kwargs.values())
    return ir.stmt_operands(s)


def _surely_runs(loop: ir.Loop, made_by: dict) -> bool:
    """Whether a `for` loop runs at least once: over `range` of integer constants, not empty."""
    made = made_by.get(loop.iterable) if loop.kind == "for" and isinstance(loop.iterable, ir.Var) else None
    if not (isinstance(made, ir.Assign) and made.prim is range and not made.kwargs and made.args
            and all(isinstance(a, ir.Const) and type(a.value) is int for a in made.args)):
        return False
    try:
        return len(range(*[a.value for a in made.args])) > 0
    except (TypeError, ValueError):
        return False


def _item_seen_after(fn: ir.Function, update, held: dict, shares: dict, arrays: _Arrays, ranks: dict):
    """The value (a Var, or a global) that may hold the item `update` changes in place (`xs[i] op= v`)
    and may be read once it has run, else None. `held`: {root: (value, relation)} of the arrays
    the list may hold. The list's own versions, the statements of the update itself, and values
    nothing reads afterwards (the temporary `[np.zeros(3)]` was made of) do not count; an
    argument, a global, an item read from the list before or a copy of it does."""
    own = arrays.find(update.item_of)
    versions = tuple(v for v in list(fn.params) + list(ir.defined_in(fn.body)) if arrays.find(v) is own)
    for root, (other, _) in held.items():
        if not isinstance(other, ir.Var) or any(arrays.find(other) is arrays.find(p) for p in fn.params) \
                or not _placed_once(fn, root, arrays, versions):
            return other
    at_update = {v for t in ir.walk(fn.body) if t.loc == update.loc for v in ir.defined_by(t)}
    order = program_order(fn)
    for st in ir.walk(fn.body):
        for v in ir.defined_by(st):
            if v in at_update or arrays.find(v) is own:
                continue
            if (arrays.find(v) in held or any(r in held for r in shares.get(v, {}))) \
                    and _read_after(fn, v, update, ranks, order, versions):
                return v
    return None


def _placed_once(fn: ir.Function, root, arrays: _Arrays, versions: tuple, depth: int = 0) -> bool:
    """Whether the object `root` stands for went into a container once only, not by `xs * n`,
    afresh in every trip of the loops around that (`[np.zeros(3) for _ in range(n)]`, not `[z] * 2`
    or `[z, z]`), into the list whose `versions` are given or into a container placed so in turn
    (`xs.append(a)` is `xs + [a]`)."""
    placements = []
    for st, outer, _ in program_order(fn):
        if isinstance(st, ir.Assign) and st.target is not None and arrays.find(st.target) is not root:
            held = [st.args[2]] if st.prim is ir.SETITEM else aliasing.may_alias(st) + [
                u for u in st.args[1:] if st.in_place and u not in aliasing.may_alias(st)]
            loops = [t for t in outer if isinstance(t, ir.Loop)]
            placements.extend((st, loops, u) for u in held if isinstance(u, ir.Var) and arrays.find(u) is root)
    if len(placements) != 1:
        return False
    st, loops, u = placements[0]
    if st.prim is ir.REPEAT or not all(u in ir.defined_in(loop.body) for loop in loops):
        return False
    return st.target in versions or (depth < 4 and _placed_once(fn, arrays.find(st.target), arrays, versions,
                                                                depth + 1))


def _holds_numbers(seq, made_by: dict, ranks) -> bool:
    """Whether `seq` is a list or tuple of the elements of a 1-d array (`list(x)`): numbers."""
    stmt, seen = made_by.get(seq), set()
    while id(stmt) not in seen:  # back through slot writes and loops to the list's making
        seen.add(id(stmt))
        if isinstance(stmt, ir.Var):
            stmt = made_by.get(stmt)
        elif isinstance(stmt, ir.Assign) and stmt.prim in ir.WRITES:
            stmt = made_by.get(stmt.args[0])
        else:
            break
    return isinstance(stmt, ir.Assign) and stmt.prim in (list, tuple) and len(stmt.args) == 1 \
        and isinstance(stmt.args[0], ir.Var) and (ranks or {}).get(stmt.args[0]) == 1


def _exclusive(a: dict, b: dict) -> bool:
    """Whether two statements lie in different branches of one `if` (no path runs both)."""
    return any(b.get(key, side) != side for key, side in a.items())


def _stale(v, start, k, w_pos, w_loops, loops, order, carried, made_at) -> bool:
    """Whether the write at `w_pos` comes between the making of `v` (at `start`) and its use at `k`:
    in program order, or around a loop that contains both but not the making. A loop-carried `v`
    whose value is made again in the body is stale only if the write follows that making."""
    if v in carried:
        loop_pos, nxt, end = carried[v]
        loop = order[loop_pos][0]
        if loop not in loops:  # read after the loop: its final value
            start = end
        elif start < w_pos < k:
            return True
        elif loop in w_loops:  # a write in the loop, after the read: the next iteration reads `v` again
            made_again = isinstance(nxt, ir.Var) and nxt is not v and made_at.get(nxt, -1) > loop_pos
            return not made_again or made_at[nxt] < w_pos
    if start < w_pos < k:
        return True
    made_loops = order[start][1] if start >= 0 else ()
    return any(loop in w_loops and loop not in made_loops for loop in loops)


def _verb(relation: str) -> str:
    return relation if relation.startswith("may") else f"is {relation}"


def lasting(value) -> bool:
    """Whether `value` is an object an in-place update changes (an array, a list, a dict, a set, a
    Buffer), where a number, a string or a tuple is rebound instead."""
    from .buffer import Buffer
    return isinstance(value, (np.ndarray, list, dict, set, bytearray, Buffer))


def default_of(op) -> tuple | None:
    """(function, parameter) when `op` is the default value of a parameter of a called function."""
    origin = op.origin if isinstance(op, ir.Global) else ()
    if len(origin) == 2 and isinstance(origin[1], tuple) and origin[1][:1] == ("default",):
        return origin[0], origin[1][1]
    return None


def default_change(func, param: str) -> str:
    """Why a change in place of the default value of `func`'s parameter `param` is refused."""
    return (f"this line changes the default value of `{getattr(func, '__qualname__', func)}`'s parameter `{param}` "
            "in place: in Python that change persists between calls (a default is made once, when the `def` "
            f"runs), which the compiled code cannot do; pass `{param}` explicitly, build a new value "
            "(`xs = xs + [v]`, `a = a + v`), or default to None and make the value inside the function")


def lasting_change(op) -> str:
    """Why a change of `op` (a global, a closure's value or a default: not the function's own, so
    it outlives the call) in place is refused: Python's change persists, the generated code's
    would not."""
    default = default_of(op)
    if default is not None:
        return default_change(*default)
    return (f"this line changes `{op.path}` in place, which is not local to the differentiated function: in "
            "Python that change outlives the call, which the compiled code cannot do; copy it first "
            f"(`a = {op.path}.copy()`)")


def _refuse_lasting_update(s: ir.Assign, shares: dict, lists: dict) -> None:
    """`x op= e`, `xs.append(v)`, `xs.pop()` of a global, a closure's value or a default (or of a
    view of one): refused, for the generated code computes a new value where Python changes that
    object, which outlives the call (the next call, or the caller, would see the change)."""
    base = s.args[0]
    if isinstance(base, ir.Global):
        held = [base] if lasting(base.value) else []
    elif isinstance(base, ir.Var) and not (base.kind == "seq" or lists.get(base)):
        held = [o for o, _ in shares.get(base, {}).values() if isinstance(o, ir.Global) and lasting(o.value)]
    else:  # (appending to a list holding a global's array changes the list alone)
        held = []
    if held:
        raise MutationError(lasting_change(held[0]), s.loc)


def _relation(relation: str) -> str:
    return "which may share memory with" if relation.startswith("may") else relation


def _name_of(v: ir.Var) -> str:
    return v.display


def _describe(op) -> str:
    return op.path if isinstance(op, ir.Global) else op.display

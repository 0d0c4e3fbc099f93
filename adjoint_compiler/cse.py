"""CSE: compute a pure expression once where the user's code (or inlining) repeats it.

A statement whose repeat gives the same value and does nothing else (`effects.repeatable`:
arithmetic, constant indexing, ufuncs, `@`, reductions over a constant axis) and that reads none
of the arrays the function writes into gives the value of an identical statement that dominates
it (earlier in its block or in an enclosing one): it is dropped and its uses read that value. Neither the forward nor the backward pass repeats it, and the tape keeps one value.

    u_0 = u[0]                     u_0 = u[0]
    a = p_0 * u_0        ->        a = p_0 * u_0
    u_0_2 = u[0]                   b = p_1 * u_0
    b = p_1 * u_0_2

A product of a value with itself that this finds (`np.log(x) * np.log(x)`) is a square, as
`x * x` is (`ir.SQUARE`: one adjoint term).
"""
from __future__ import annotations

import operator

from . import ir
from .effects import repeatable
from .mutation import same_arrays


def _key(op):
    if isinstance(op, ir.Var):
        return op
    if isinstance(op, ir.Const):
        return ("const", type(op.value), op.value)
    if isinstance(op, ir.Struct):
        return (op.kind,) + tuple(_key(i) for i in op.items)
    return ("global", op.path)


def eliminate(fn: ir.Function) -> None:
    arrays = same_arrays(fn.body)
    written = {arrays.find(s.target) for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.prim in ir.WRITES}
    mapping: dict = {}

    def candidate(s) -> bool:
        if not (repeatable(s) and s.target.kind == "num"):
            return False
        reads = [v for op in s.args for v in ir.operand_vars(op)] + [s.target]
        return all(arrays.find(v) not in written for v in reads)

    def block(stmts, seen: dict) -> list:
        seen = dict(seen)
        out = []
        for s in stmts:
            if isinstance(s, ir.Assign):
                s.args = [_sub(a, mapping) for a in s.args]
                s.kwargs = {k: _sub(v, mapping) for k, v in s.kwargs.items()}
                if s.prim is operator.mul and len(s.args) == 2 and s.args[0] is s.args[1] \
                        and isinstance(s.args[0], ir.Var) and s.args[0].kind == "num":
                    s.prim, s.args = ir.SQUARE, s.args[:1]  # (`np.log(x) * np.log(x)`: as `x * x` is)
                if candidate(s):
                    key = (s.prim,) + tuple(_key(a) for a in s.args) \
                        + tuple(sorted((k, _key(v)) for k, v in s.kwargs.items()))
                    if key in seen:
                        mapping[s.target] = seen[key]
                        continue
                    seen[key] = s.target
            elif isinstance(s, ir.If):
                s.cond = _sub(s.cond, mapping)
                s.body, s.orelse = block(s.body, seen), block(s.orelse, seen)
                s.body_results = [_sub(r, mapping) for r in s.body_results]
                s.orelse_results = [_sub(r, mapping) for r in s.orelse_results]
                _merge_outputs(s, mapping, lambda v: arrays.find(v) not in written)
            elif isinstance(s, ir.Loop):
                s.inits = [_sub(i, mapping) for i in s.inits]
                s.iterable = _sub(s.iterable, mapping)
                s.cond_body = block(s.cond_body, seen)
                s.cond = _sub(s.cond, mapping)
                s.body = block(s.body, seen)
                s.nexts = [_sub(n, mapping) for n in s.nexts]
                s.stop = _sub(s.stop, mapping)
            out.append(s)
        return out

    fn.body = block(fn.body, {})
    fn.result = _sub(fn.result, mapping)


def _sub(op, mapping: dict):
    if isinstance(op, ir.Struct):
        return ir.Struct(op.kind, tuple(_sub(i, mapping) for i in op.items))
    return mapping.get(op, op) if isinstance(op, ir.Var) else op


def _merge_outputs(s: ir.If, mapping: dict, unwritten) -> None:
    """Outputs of one `if` that yield the same operands on both branches are one value (the
    guards `hoist` builds yield one per hoisted copy of `p[0]`)."""
    first: dict = {}
    keep = []
    for k, out in enumerate(s.outputs):
        key = (_key(s.body_results[k]), _key(s.orelse_results[k]))
        if key in first and out.kind == first[key].kind and unwritten(out):
            mapping[out] = first[key]
            continue
        first.setdefault(key, out)
        keep.append(k)
    s.outputs = [s.outputs[k] for k in keep]
    s.body_results = [s.body_results[k] for k in keep]
    s.orelse_results = [s.orelse_results[k] for k in keep]

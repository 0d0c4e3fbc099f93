"""Activity: which values carry derivatives. Also binds each statement to its rule.

Guarantees: every Assign has `rule` and `bound` set (or a located MissingRuleError was raised);
`analyze` returns the active Vars: varied (depend differentiably on a `wrt` parameter) and
useful (reach the result through differentiable operations). Only active values get adjoints.

    n = x.shape[0]      not varied (shape passes no gradient)
    y = np.sin(x) * n   active when x is in wrt
"""
from __future__ import annotations

from . import ir, registry
from .errors import MissingRuleError
from .template import Rule


def _describe_callee(stmt) -> str:
    if stmt.callee:
        return f"`{stmt.callee.path}`"
    if isinstance(stmt.prim, ir.Method):
        return f"the method `.{stmt.prim.name}()`"
    if isinstance(stmt.prim, ir.Attr):
        return f"the attribute `.{stmt.prim.name}`"
    return repr(stmt.prim)


def bind_rules(fn: ir.Function) -> None:
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign) and stmt.rule is None:
            rule = registry.lookup(stmt.prim)
            if rule is None:
                what = _describe_callee(stmt)
                name = stmt.callee.path if stmt.callee else "func"
                raise MissingRuleError(
                    f"no adjoint rule for {what}, and it has no Python source to compile. Register one "
                    f"with `@adjoint({name})` over `def _(result, *args): ...`, or "
                    f"declare it with `nondifferentiable({name})`", stmt.loc)
            stmt.rule = rule
            stmt.bound = rule.bind(stmt.args, stmt.kwargs, stmt.loc)


def diff_operands(stmt: ir.Assign) -> list:
    """The Vars bound to parameters through which `stmt`'s rule passes gradient."""
    rule: Rule = stmt.rule
    out = []
    for p in rule.diff_params:
        op = stmt.bound.get(p)
        ops = op if isinstance(op, tuple) else (op,)
        out += [v for o in ops for v in ir.operand_vars(o)]
    return out


def _varied(stmts, varied: set) -> None:
    for s in stmts:
        if isinstance(s, ir.Assign):
            if s.target is not None and any(v in varied for v in diff_operands(s)):
                varied.add(s.target)
        elif isinstance(s, ir.If):
            _varied(s.body, varied)
            _varied(s.orelse, varied)
            for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                if a in varied or b in varied:
                    varied.add(out)
        elif isinstance(s, ir.Loop):
            while True:
                count = len(varied)
                varied.update(p for p, i, n in zip(s.params, s.inits, s.nexts) if i in varied or n in varied)
                _varied(s.cond_body, varied)
                _varied(s.body, varied)
                if len(varied) == count:
                    break


def _useful(stmts, useful: set) -> None:
    for s in reversed(stmts):
        if isinstance(s, ir.Assign):
            if s.target is not None and s.target in useful:
                useful.update(diff_operands(s))
        elif isinstance(s, ir.If):
            for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                if out in useful:
                    useful.update(v for v in (a, b) if isinstance(v, ir.Var))
            _useful(s.body, useful)
            _useful(s.orelse, useful)
        elif isinstance(s, ir.Loop):
            while True:
                count = len(useful)
                for p, i, n in zip(s.params, s.inits, s.nexts):
                    if p in useful:
                        useful.update(v for v in (i, n) if isinstance(v, ir.Var))
                _useful(s.body, useful)
                if len(useful) == count:
                    break


def analyze(fn: ir.Function, wrt: list) -> set:
    """Active Vars of `fn` for the parameters `wrt` (a list of Vars)."""
    bind_rules(fn)
    varied = set(wrt)
    _varied(fn.body, varied)
    useful = set(ir.operand_vars(fn.result))
    _useful(fn.body, useful)
    return varied & useful

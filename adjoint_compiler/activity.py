"""Activity: which values carry derivatives. Also binds each statement to its rule.

Guarantees: every Assign that reads a varied value has `rule` and `bound` set (or a located
MissingRuleError was raised); a statement on constants only needs no rule (`np.float32(0.5)`,
`W.sum(axis=0)` of a module constant) and may keep `rule = None`;
`analyze` returns the active Vars: varied (depend differentiably on a `wrt` parameter) and
useful (reach the result through differentiable operations). Only active values get adjoints.

    n = x.shape[0]      not varied (shape passes no gradient)
    y = np.sin(x) * n   active when x is in wrt
"""
from __future__ import annotations

import inspect
import sys

import numpy as np

from . import frontend, ir, registry
from .errors import AdjointCompilerError, MissingRuleError
from .template import Rule


def _signature_template(func, fallback: str) -> tuple:
    """(parameter list, first parameter) of a rule template for `func`, from its signature."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return fallback, fallback.split(",")[0].lstrip("*")
    parts = []
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        if p.default is p.empty:
            parts.append(p.name)
        elif isinstance(p.default, (int, float, bool, str, type(None))):
            parts.append(f"{p.name}={p.default!r}")
        else:
            break
    if not parts:
        return fallback, fallback.split(",")[0].lstrip("*")
    return ", ".join(parts), parts[0].split("=")[0]


def _library(func) -> str | None:
    """'NumPy', 'SciPy', 'Python builtin', ... for a function of a library, else None."""
    mod = getattr(func, "__module__", None) or ""
    owner = getattr(func, "__self__", None)
    if owner is not None and not inspect.ismodule(owner) and not mod:
        mod = getattr(type(owner), "__module__", None) or ""
    if isinstance(func, np.ufunc) or isinstance(owner, np.ufunc) or mod.split(".")[0] == "numpy":
        return "NumPy"
    root = mod.split(".")[0]
    if root == "builtins":
        return "Python builtin"
    if root in frontend.LIBRARIES or root in sys.stdlib_module_names:
        return f"`{root}`"
    if root:
        try:
            file = getattr(sys.modules.get(root), "__file__", "") or ""
        except Exception:
            file = ""
        if "site-packages" in file or "dist-packages" in file:
            return f"`{root}`"
    return None


def missing_rule_message(stmt) -> str:
    """What is true about a call with no adjoint rule, then how to give it one."""
    prim = stmt.prim
    zero = ("`nondifferentiable({name})` instead declares a zero gradient: right only for a function "
            "whose output does not vary smoothly with its inputs (integer-valued, boolean, or constant)")
    if isinstance(prim, ir.Method):
        name = prim.name
        if not hasattr(np.ndarray, name):
            return (f"`.{name}()` is not an ndarray method with an adjoint rule, and methods of user "
                    "objects cannot be differentiated yet; compute the value with NumPy functions or a "
                    "plain Python function instead")
        return (f"the ndarray method `.{name}()` has no adjoint rule yet. Register a rule with "
                f"`@adjoint(\"{name}\")` over `def _(result, a, *args): a_bar += ...` (the receiver "
                f"comes first; the body accumulates `<arg>_bar` from `result_bar`); "
                + zero.format(name=f'"{name}"'))
    if isinstance(prim, ir.Attr):
        return (f"reading the attribute `.{prim.name}` of a value that depends on the differentiated "
                f"arguments has no adjoint rule")
    if stmt.callee is None:
        return f"`{prim!r}` has no adjoint rule"
    name = stmt.callee.path
    func = stmt.callee.value
    params, first = _signature_template(func, "*args")
    library = _library(func)
    bound_to = getattr(func, "__self__", None)
    if inspect.ismethod(func) or (bound_to is not None and not inspect.ismodule(bound_to)
                                  and not inspect.isclass(bound_to) and library is None):
        return (f"`{name}` is a method of an object, and methods of user objects cannot be "
                "differentiated yet; call a plain Python function instead (it is compiled from its source)")
    if library == "Python builtin":
        what = f"`{name}` is a Python builtin without an adjoint rule"
    elif inspect.isclass(func) and library is None:
        return (f"`{name}` is a class, and constructing user objects cannot be differentiated yet; "
                "call a plain Python function instead")
    elif library == "NumPy":
        what = f"`{name}` is a NumPy function without an adjoint rule yet"
    elif library:
        what = f"`{name}` is a library function (from {library}) without an adjoint rule"
    else:
        what = f"`{name}` has no adjoint rule, and there is no Python source to compile for it"
    return (f"{what}. Register a rule with `@adjoint({name})` over `def _(result, {params}): "
            f"{first}_bar += ...` (the body accumulates `<arg>_bar` from `result_bar`); "
            + zero.format(name=name))


def _rule_error(stmt):
    """The located error for a statement with no usable rule (no rule, or a rule that rejects the
    call's arguments)."""
    rule = registry.lookup(stmt.prim)
    if rule is None:
        return MissingRuleError(missing_rule_message(stmt), stmt.loc)
    try:
        rule.bind(stmt.args, stmt.kwargs, stmt.loc)
    except AdjointCompilerError as exc:
        return exc
    return None


def bind_rules(fn: ir.Function) -> None:
    """Bind each statement to its rule where it has one that accepts its arguments. A statement
    with none keeps `rule = None`: that is an error only if one of its operands is varied (see
    `analyze`), for a statement on constants needs no gradient."""
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign) and stmt.rule is None:
            rule = registry.lookup(stmt.prim)
            if rule is None:
                continue
            try:
                stmt.bound = rule.bind(stmt.args, stmt.kwargs, stmt.loc)
            except AdjointCompilerError:
                stmt.bound = None
                continue
            stmt.rule = rule


def diff_operands(stmt: ir.Assign) -> list:
    """The Vars bound to parameters through which `stmt`'s rule passes gradient."""
    rule: Rule = stmt.rule
    if rule is None:
        return []
    out = []
    for p in rule.diff_params:
        op = stmt.bound.get(p)
        ops = op if isinstance(op, tuple) else (op,)
        out += [v for o in ops for v in ir.operand_vars(o)]
    return out


def _check_rule(stmt: ir.Assign, varied: set) -> None:
    """A statement without a usable rule that reads a varied value: a located error."""
    if stmt.rule is None and any(v in varied for v in ir.stmt_reads(stmt)):
        err = _rule_error(stmt)
        if err is not None:
            raise err


def _varied(stmts, varied: set) -> None:
    for s in stmts:
        if isinstance(s, ir.Assign):
            _check_rule(s, varied)
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

"""Composite rules: an expression of several statements whose adjoint, taken whole, is simpler
than the chain rule through its parts (the sigmoid, the log-loss of a sigmoid, the log-softmax).

A composite is a template like any rule, registered with the forms it matches: Python expressions
over the template's parameters, with `where=` forms a parameter's own value must have.

    @composite("u * np.log(p) + (1 - u) * np.log(1 - p)", p=["1 / (1 + np.exp(-z))"])
    def sigmoid_log_loss(s, u, p, z):
        z_bar += rt.unbroadcast(s_bar * (u - p), z)
        u_bar += rt.unbroadcast(s_bar * z, u)

Guarantee of `fuse`: a statement whose value matches a form gets the composite as its rule, bound
to the matched leaves. Only that statement's rule changes: the statements inside the form still
compute the value, keep their own rules, and pass on what they receive from any other use; so the
gradient is the chain rule's whichever of them are also used elsewhere. A call in a form matches
on its rule's parameters (positional or keyword; the parameters a form does not name must hold
their defaults), only where the user has not replaced that rule, and only over leaves the function
never writes into (the composite reads them where the form ends, not where the parts read them).
"""
from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass

import numpy as np

from . import ir, registry
from .errors import RuleError
from .mutation import same_arrays
from .template import Rule, parse_template

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_COMMUTATIVE = {operator.add, operator.mul}
_SAME_FUNCTION = {np.exp: (np.exp, math.exp), np.log: (np.log, math.log), np.log1p: (np.log1p, math.log1p),
                  np.sum: (np.sum, ir.Method("sum")), np.mean: (np.mean, ir.Method("mean"))}


@dataclass
class Composite:
    rule: Rule
    forms: list  # parsed patterns of the expression
    where: dict  # parameter -> parsed patterns its value must match


COMPOSITES: list = []


def composite(*forms: str, **where):
    """Register the decorated template as the adjoint of expressions matching one of `forms`."""
    def register(template):
        rule = parse_template(template, f"composite {template.__name__}")
        c = Composite(rule, [_parse(f) for f in forms], {name: [_parse(f) for f in fs] for name, fs in where.items()})
        named = {n for p in c.forms + [q for fs in c.where.values() for q in fs] for n in _names(p)}
        missing = set(rule.params) - named
        if missing or rule.varargs:
            raise RuleError(f"composite {template.__name__}: its forms do not name {sorted(missing)}")
        COMPOSITES.append(c)
        return template
    return register


def _parse(form: str):
    """A pattern: ("var", name) | ("const", value) | ("call", functions, {rule parameter position or
    name: pattern}); a call matches a statement whose rule binds those parameters to operands
    matching them, and every other parameter to its default."""
    def build(node):
        if isinstance(node, ast.Name):
            return ("var", node.id)
        if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (int, float, bool)):
            return ("const", node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return ("call", (_BINARY[type(node.op)],), {0: build(node.left), 1: build(node.right)})
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return ("call", (operator.neg,), {0: build(node.operand)})
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
            func = getattr(np, node.func.attr)
            parts = {i: build(a) for i, a in enumerate(node.args)}
            parts.update({k.arg: build(k.value) for k in node.keywords})
            return ("call", _SAME_FUNCTION.get(func, (func,)), parts)
        raise ValueError(f"unsupported composite form: {ast.unparse(node)}")
    return build(ast.parse(form, mode="eval").body)


def _user_rule(prim) -> bool:
    try:
        return prim in registry.USER_KEYS
    except TypeError:  # unhashable
        return False


def _names(pattern) -> set:
    if pattern[0] == "var":
        return {pattern[1]}
    return {n for p in pattern[2].values() for n in _names(p)} if pattern[0] == "call" else set()


def _equal_constants(a, b) -> bool:
    """`1` matches `1.0`, but True matches only True and None only None."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    return type(a) in (int, float) and type(b) in (int, float) and a == b


def _same(a, b) -> bool:
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return type(a.value) is type(b.value) and a.value == b.value
    return a is b


class _Matcher:
    def __init__(self, defs: dict, where: dict):
        self.defs, self.where = defs, where

    def match(self, pattern, op, env: dict):
        """Every extension of `env` under which `op` is `pattern` (a generator)."""
        kind = pattern[0]
        if kind == "var":
            name = pattern[1]
            if name in env:
                if _same(env[name], op):
                    yield env
                return
            env = {**env, name: op}
            if name not in self.where:
                yield env
            for form in self.where.get(name, ()):
                yield from self.match(form, op, env)
        elif kind == "const":
            if isinstance(op, ir.Const) and _equal_constants(op.value, pattern[1]):
                yield env
        else:
            s = self.defs.get(op) if isinstance(op, ir.Var) else None
            if s is None or s.prim not in pattern[1] or _user_rule(s.prim) or s.rule is None or s.rule.varargs:
                return
            params = s.rule.params
            named = {params[k] if isinstance(k, int) and k < len(params) else k: p for k, p in pattern[2].items()}
            if set(named) - set(params) or not all(
                    p in named or (p in s.rule.defaults and isinstance(s.bound[p], ir.Const)
                                   and _equal_constants(s.bound[p].value, s.rule.defaults[p])) for p in params):
                return
            orders = [named]
            if s.prim in _COMMUTATIVE and len(params) == 2:
                orders.append({params[0]: named[params[1]], params[1]: named[params[0]]})
            for parts in orders:
                yield from self.parts(list(parts.items()), s.bound, env)

    def parts(self, patterns: list, bound: dict, env):
        if not patterns:
            yield env
            return
        (param, pattern), rest = patterns[0], patterns[1:]
        for found in self.match(pattern, bound[param], env):
            yield from self.parts(rest, bound, found)


def fuse(fn: ir.Function) -> None:
    """Give each statement that matches a composite's form the composite as its rule."""
    registry.load_builtin_rules()
    if not COMPOSITES:
        return
    defs = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None}
    arrays = same_arrays(fn.body)
    written = {arrays.find(s.target) for s in defs.values() if s.prim in ir.WRITES}
    fused = []  # (statement, composite, match): all found first, on the parts' own rules
    for s in defs.values():
        if s.prim in ir.WRITES or s.target.kind != "num":
            continue
        for c in COMPOSITES:
            env = _first_match(c, s.target, defs)
            if env is not None and all(arrays.find(v) not in written
                                       for op in env.values() for v in ir.operand_vars(op)):
                fused.append((s, c, env))
                break
    for s, c, env in fused:
        s.rule = c.rule
        s.bound = {p: env[p] for p in c.rule.params}


def _first_match(c: Composite, target: ir.Var, defs: dict):
    matcher = _Matcher(defs, c.where)
    for form in c.forms:
        for env in matcher.match(form, target, {}):
            return env
    return None

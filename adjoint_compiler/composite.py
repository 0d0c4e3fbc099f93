"""Composite rules: an expression of several statements whose adjoint, taken whole, is simpler
than the chain rule through its parts (the sigmoid, the log-loss of a sigmoid).

A composite is a template like any rule, registered with the forms it matches: Python expressions
over the template's parameters, with `where=` forms a parameter's own value must have.

    @composite("u * np.log(p) + (1 - u) * np.log(1 - p)", p=["1 / (1 + np.exp(-z))"])
    def sigmoid_log_loss(s, u, p, z):
        z_bar += rt.unbroadcast(s_bar * (u - p), z)
        u_bar += rt.unbroadcast(s_bar * z, u)

Guarantee of `fuse`: a statement whose value matches a form gets the composite as its rule, bound
to the matched leaves. Only that statement's rule changes: the statements inside the form still
compute the value, keep their own rules, and pass on what they receive from any other use; so the
gradient is the chain rule's whichever of them are also used elsewhere. A form matches only
statements without keywords whose rules the user has not replaced, and leaves the function never
writes into (the composite reads them where the form ends, not where the parts read them).
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
    """A pattern: ("var", name) | ("const", number) | ("call", functions, [patterns])."""
    def build(node):
        if isinstance(node, ast.Name):
            return ("var", node.id)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return ("const", node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return ("call", (_BINARY[type(node.op)],), [build(node.left), build(node.right)])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return ("call", (operator.neg,), [build(node.operand)])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
            func = getattr(np, node.func.attr)
            return ("call", _SAME_FUNCTION.get(func, (func,)), [build(a) for a in node.args])
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
    return {n for p in pattern[2] for n in _names(p)} if pattern[0] == "call" else set()


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
            if isinstance(op, ir.Const) and type(op.value) in (int, float) and op.value == pattern[1]:
                yield env
        else:
            s = self.defs.get(op) if isinstance(op, ir.Var) else None
            if s is None or s.kwargs or s.prim not in pattern[1] or len(s.args) != len(pattern[2]) \
                    or _user_rule(s.prim):
                return
            orders = [pattern[2]]
            if s.prim in _COMMUTATIVE:
                orders.append(pattern[2][::-1])
            for parts in orders:
                yield from self.args(parts, s.args, env)

    def args(self, patterns, ops, env):
        if not patterns:
            yield env
            return
        for found in self.match(patterns[0], ops[0], env):
            yield from self.args(patterns[1:], ops[1:], found)


def fuse(fn: ir.Function) -> None:
    """Give each statement that matches a composite's form the composite as its rule."""
    registry.load_builtin_rules()
    if not COMPOSITES:
        return
    defs = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None}
    arrays = same_arrays(fn.body)
    written = {arrays.find(s.target) for s in defs.values() if s.prim in ir.WRITES}
    for s in defs.values():
        if s.prim in ir.WRITES or s.target.kind != "num":
            continue
        for c in COMPOSITES:
            env = _first_match(c, s.target, defs)
            if env is not None and all(arrays.find(v) not in written
                                       for op in env.values() for v in ir.operand_vars(op)):
                s.rule = c.rule
                s.bound = {p: env[p] for p in c.rule.params}
                break


def _first_match(c: Composite, target: ir.Var, defs: dict):
    matcher = _Matcher(defs, c.where)
    for form in c.forms:
        for env in matcher.match(form, target, {}):
            return env
    return None

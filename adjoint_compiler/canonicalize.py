"""Canonical forms of elementwise expressions: the view composite rules are matched on.

`view(fn)` gives each numeric value of the forward SSA a *canonical term*: the expression that
computes it, read through the statements that computed its operands, in one form per meaning.
Two spellings of the same mathematics get the same term, so a composite rule written once
(`1 / (1 + np.exp(-z))`) matches all of them:

    p = np.exp(z) / (1 + np.exp(z))        p: (1 + exp(-z))**-1
    q = 0.5 * (1 + np.tanh(z / 2))         q: (1 + exp(-z))**-1
    s = np.logaddexp(0, -m)                s: log(1 + exp(-m))
    t = np.log1p(np.exp(-m))               t: log(1 + exp(-m))

Guarantee: the pass changes nothing in the IR. The statements still compute the values the
user's code computes; only the *matching* of composites reads the view. A term denotes the
same real number (elementwise) as the value it stands for: every rewrite below is an identity
of real arithmetic, on the values' common domain:

- `x - y` is `x + -1*y`, `x / y` is `x * y**-1`, `-x` is `-1*x`; sums and products are flat,
  their operands sorted; like terms and like factors are combined (`x*x` is `x**2`); numbers
  are exact rationals (`Fraction` of the float), folded without rounding; a number times a
  single sum is distributed (`0.5*(1 + u)` is `0.5 + 0.5*u`);
- `log1p(x)` is `log(1 + x)`, `expm1(x)` is `exp(x) - 1`, `logaddexp(a, b)` is
  `log(exp(a) + exp(b))`, `tanh(x)` is `2*(1 + exp(-2*x))**-1 - 1`, `sqrt`/`square`/`**c` are
  powers, scipy.special's `expit`, `log_expit`, `logsumexp`, `softmax` and `log_softmax` (when
  scipy is loaded) are what they compute;
- `exp(a) * exp(b)` is `exp(a + b)`, `exp(a)**c` is `exp(c*a)`, `exp(0)` is 1, `log(exp(a))`
  is `a`, `log(exp(c) * r)` is `c + log(r)`, `log(1/x)` is `-log(x)`;
- `exp(a) * S**-1` for a sum S is `(S * exp(-a))**-1`, distributed: so
  `exp(z) / (1 + exp(z))` is `(exp(-z) + 1)**-1`;
- `sum(exp(x + c), axis=k, keepdims=True)` is `exp(c) * sum(exp(x), axis=k, keepdims=True)`
  where `c` is constant along the summed axis (a number, a keepdims reduction of `x` along the
  same axis, a reduction over every axis): so the max-shifted logsumexp is the logsumexp.

A matmul, dot, index or transpose computed again from the same operands is the same leaf
(`matmul(X, w)`), so `np.exp(X @ w) / (1 + np.exp(X @ w))` is a sigmoid too.

Broadcasting is part of a value: `x + 0*y` is x's values in the shape of `x` and `y` together.
Every cancellation is therefore remembered on the term (`ghosts`): a value whose term lost an
operand that may have widened its shape does not stand for its term (`View.realize` never
answers it), nor is a reduction over it looked into. Values that are not elementwise
arithmetic, exponentials, logarithms or the sum/mean/max reductions (matmuls, indexing, writes,
loop and `if` results, calls whose rule the user replaced) are leaves, named by their SSA name;
so is a value whose term would exceed `LIMIT` nodes.
"""
from __future__ import annotations

import math
import operator
import sys
from fractions import Fraction

import numpy as np

from . import ir, registry
from .errors import AdjointCompilerError
from .shapes import inserted_axis

LIMIT = 200  # nodes in a term; a bigger value is a leaf (terms are trees: sharing is not counted)
_MAX_FOLD_EXPONENT = 64  # integer powers of numbers folded up to this exponent


class Term:
    """A canonical expression. `op` is one of 'leaf' (an IR operand, `operand`), 'const' (a
    non-numeric constant: None, True, an axis tuple; `operand`), 'num' (a Fraction), 'add' and
    'mul' (sorted parts; a number first), 'pow' (base, Fraction exponent), 'call' (name,
    operands, params) and 'var' (a pattern variable of a composite form). Terms are equal when
    their keys (their printed forms) are."""

    __slots__ = ("_calls", "_sig", "_vars", "args", "ghosts", "key", "op", "operand", "size")

    def __init__(self, op, args, key, size=1, ghosts=frozenset(), operand=None):
        self.op, self.args, self.key, self.size = op, args, key, size
        self.ghosts, self.operand = ghosts, operand
        self._sig = self._vars = self._calls = None

    def __eq__(self, other):
        return isinstance(other, Term) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return self.key

    @property
    def vars(self) -> frozenset:
        """The pattern variables in the term."""
        if self._vars is None:
            if self.op == "var":
                self._vars = frozenset({self.args})
            elif self.op in _ATOMS:
                self._vars = _NONE
            else:
                self._vars = frozenset().union(*(c.vars for c in children(self)))
        return self._vars

    @property
    def calls(self) -> frozenset:
        """The names of the calls in the term (a form needs its own in a value it matches)."""
        if self._calls is None:
            if self.op in _ATOMS or self.op == "var":
                self._calls = _NONE
            else:
                own = frozenset({self.args[0]}) if self.op == "call" else _NONE
                self._calls = own.union(*(c.calls for c in children(self)))
        return self._calls


_ATOMS = ("leaf", "num", "const")  # (terms without parts: no variables, no calls)
_NONE = frozenset()


def children(t: Term) -> list:
    if t.op in ("add", "mul"):
        return list(t.args)
    if t.op == "pow":
        return [t.args[0]]
    if t.op == "call":
        return list(t.args[1]) + [v for _, v in t.args[2]]
    return []


# -- atoms ------------------------------------------------------------------------------------------
def _number_text(f: Fraction) -> str:
    if f.denominator == 1:
        return str(f.numerator)
    x = float(f)
    return repr(x) if Fraction(x) == f else f"{f.numerator}/{f.denominator}"


_NUMBERS: dict = {}
_F0, _F1, _F_MINUS_1 = Fraction(0), Fraction(1), Fraction(-1)  # (immutable: shared)


def num(value) -> Term:
    t = _NUMBERS.get(value)
    if t is None:
        f = Fraction(value)
        t = Term("num", f, _number_text(f))
        if len(_NUMBERS) < 4096:
            _NUMBERS[value] = t
    return t


ZERO, ONE, MINUS_ONE = num(0), num(1), num(-1)


def var(name: str) -> Term:
    return Term("var", name, "?" + name)


def leaf(op) -> Term:
    """The term of an IR operand read as it is."""
    if isinstance(op, ir.Var):
        return Term("leaf", None, op.name, operand=op)
    if isinstance(op, ir.Global):
        return Term("leaf", None, "@" + op.path, operand=op)
    if isinstance(op, ir.Const):
        v = op.value
        if type(v) in (int, float) and math.isfinite(v):
            return num(v)
        return Term("const", v, f"float('{v}')" if type(v) is float else repr(v), operand=op)
    if isinstance(op, ir.Struct) and all(isinstance(i, ir.Const) for i in op.items):
        return Term("const", None, f"{op.kind}{tuple(i.value for i in op.items)!r}", operand=op)
    return None


def _with_ghosts(t: Term, ghosts) -> Term:
    if not ghosts or ghosts <= t.ghosts:
        return t
    return Term(t.op, t.args, t.key, t.size, t.ghosts | frozenset(ghosts), t.operand)


def _order(t: Term):
    return (t.op != "num", t.key)


def _term_order(t: Term):
    """Terms of a sum: the number first, then by what they scale (`x - y`, not `-y + x`)."""
    return (t.op != "num", _split_coefficient(t)[1].key, t.key)


def _sum_text(parts) -> str:
    text = parts[0].key
    for p in parts[1:]:
        text += " - " + p.key[1:] if p.key.startswith("-") else " + " + p.key
    return text


def _factor_text(t: Term) -> str:
    """A factor of a product: sums and negative numbers in parentheses."""
    return f"({t.key})" if t.op == "add" or (t.op == "num" and t.args < 0) else t.key


def _base_text(t: Term) -> str:
    """The base of a power: anything but an atom in parentheses."""
    return t.key if t.op in ("leaf", "var", "call") or (t.op == "num" and t.args >= 0) else f"({t.key})"


def _product_text(parts) -> str:
    if parts[0].op == "num" and parts[0].args == -1:
        return "-" + "*".join(_factor_text(p) for p in parts[1:])
    return "*".join(_factor_text(p) if i or p.op != "num" else p.key for i, p in enumerate(parts))


def _make(op, parts, ghosts) -> Term:
    size = 1 + sum(p.size for p in parts)
    text = _sum_text(parts) if op == "add" else _product_text(parts)
    return Term(op, tuple(parts), text, size, frozenset(ghosts).union(*(p.ghosts for p in parts)))


# -- sums, products, powers -------------------------------------------------------------------------
def _flat(op, terms):
    for t in terms:
        if t.op == op:
            yield from t.args
        else:
            yield t


def _split_coefficient(t: Term):
    """(c, r) with t = c * r and r without a numeric factor."""
    if t.op == "mul" and t.args[0].op == "num":
        rest = t.args[1:]
        return t.args[0].args, (rest[0] if len(rest) == 1 else _make("mul", rest, ()))
    return _F1, t


def _scaled(c: Fraction, r: Term) -> Term:
    """c * r for r without a numeric factor and not a sum (no rewrite can apply)."""
    if c is _F1 or c == 1:
        return r
    parts = [num(c)] + (list(r.args) if r.op == "mul" else [r])
    return _make("mul", parts, r.ghosts)


def add(*terms: Term) -> Term:
    total = _F0
    groups: dict = {}
    ghosts: set = set()
    for t in _flat("add", terms):
        ghosts |= t.ghosts
        if t.op == "num":
            total += t.args
            continue
        c, r = _split_coefficient(t)
        if r.key in groups:
            groups[r.key][1] += c
        else:
            groups[r.key] = [r, c]
    parts = []
    for r, c in groups.values():
        if c is not _F1 and c == 0:
            ghosts.add(r)
        else:
            parts.append(_scaled(c, r))
    if (total is not _F0 and total != 0) or not parts:
        parts.append(num(total))
    if len(parts) == 1:
        return _with_ghosts(parts[0], ghosts)
    return _make("add", sorted(parts, key=_term_order), ghosts)


def _is_call(t: Term, name: str) -> bool:
    return t.op == "call" and t.args[0] == name


def mul(*terms: Term) -> Term:
    coef = _F1
    bases: dict = {}
    exps: list = []
    ghosts: set = set()
    everything = []
    for t in _flat("mul", terms):
        ghosts |= t.ghosts
        if t.op == "num":
            coef *= t.args
            continue
        everything.append(t)
        base, e = (t.args[0], t.args[1]) if t.op == "pow" else (t, _F1)
        if _is_call(base, "exp"):
            exps.append(_scaled_term(e, base.args[1][0]))
        elif base.key in bases:
            bases[base.key][1] += e
        else:
            bases[base.key] = [base, e]
    if coef is not _F1 and coef == 0:
        return _with_ghosts(ZERO, ghosts | set(everything))
    factors = []
    for base, e in bases.values():
        if e is _F1:  # (the usual exponent: `power` would return the base)
            factors.append(base)
        elif e == 0:
            ghosts.add(base)
        else:
            factors.append(power(base, e))
    exp_factor = None
    if exps:
        merged = exp(add(*exps))
        if merged.op == "num":
            coef *= merged.args
            ghosts |= merged.ghosts
        else:
            exp_factor = merged
    if exp_factor is not None:
        sums = sorted((f for f in factors if f.op == "pow" and f.args[1] == -1 and f.args[0].op == "add"),
                      key=_order)
        if sums:  # exp(a) / S  ->  1 / (S * exp(-a)), S distributed
            s = sums[0]
            inverse = exp(mul(num(-1), exp_factor.args[1][0]))
            denominator = add(*(mul(t, inverse) for t in s.args[0].args))
            rest = [f for f in factors if f is not s]
            return _with_ghosts(mul(num(coef), *rest, power(denominator, _F_MINUS_1)),
                                ghosts | exp_factor.ghosts)
        factors.append(exp_factor)
    if coef != 1 and len(factors) == 1 and factors[0].op == "add":
        return _with_ghosts(add(*(mul(num(coef), t) for t in factors[0].args)), ghosts)
    if not factors:
        return _with_ghosts(num(coef), ghosts)
    if coef == 1 and len(factors) == 1:
        return _with_ghosts(factors[0], ghosts)
    parts = ([num(coef)] if coef != 1 else []) + sorted(factors, key=_order)
    return _make("mul", parts, ghosts)


def _scaled_term(e: Fraction, t: Term) -> Term:
    return t if e == 1 else mul(num(e), t)


def power(base: Term, e) -> Term:
    e = e if type(e) is Fraction else Fraction(e)
    if e == 0:
        return _with_ghosts(ONE, {base} | set(base.ghosts))
    if e == 1:
        return base
    integer = e.denominator == 1
    if base.op == "num":
        if integer and abs(e) <= _MAX_FOLD_EXPONENT and not (base.args == 0 and e < 0):
            return _with_ghosts(num(base.args ** int(e)), base.ghosts)
    elif base.op == "pow" and integer:
        return power(base.args[0], base.args[1] * e)
    elif base.op == "mul" and integer:
        return mul(*(power(f, e) for f in base.args))
    elif _is_call(base, "exp"):
        return exp(mul(num(e), base.args[1][0]))
    text = f"{_base_text(base)}**{_number_text(e) if integer else '(' + _number_text(e) + ')'}"
    return Term("pow", (base, e), text, base.size + 1, base.ghosts)


# -- calls ------------------------------------------------------------------------------------------
REDUCTIONS = {"sum", "mean", "max"}


def call(name: str, operands: tuple, params: tuple = ()) -> Term:
    """A call term as it is (no rewrite): `operands` are terms, `params` (name, term) pairs."""
    shown = [o.key for o in operands] + [f"{k}={v.key}" for k, v in params if not _at_default(k, v)]
    size = 1 + sum(o.size for o in operands) + sum(v.size for _, v in params)
    ghosts = frozenset().union(*(o.ghosts for o in operands))
    return Term("call", (name, tuple(operands), tuple(params)), f"{name}({', '.join(shown)})", size, ghosts)


def _at_default(param: str, value: Term) -> bool:
    return value.op == "const" and ((param == "axis" and value.args is None and value.key == "None")
                                    or (param == "keepdims" and value.args is False))


def exp(a: Term) -> Term:
    if a.op == "num" and a.args == 0:
        return _with_ghosts(ONE, a.ghosts)
    return call("exp", (a,))


def log(a: Term) -> Term:
    if a.op == "num" and a.args == 1:
        return _with_ghosts(ZERO, a.ghosts)
    if _is_call(a, "exp"):
        return _with_ghosts(a.args[1][0], a.ghosts)
    if a.op == "pow" and a.args[1] == -1:  # log(1/x) = -log(x), on one domain (x > 0)
        return mul(MINUS_ONE, log(a.args[0]))
    if a.op == "mul":
        shifts = [f for f in a.args if _is_call(f, "exp")]
        if shifts:  # log(exp(c) * r) = c + log(r): exp(c) > 0
            rest = [f for f in a.args if f is not shifts[0]]
            return _with_ghosts(add(shifts[0].args[1][0], log(mul(*rest))), a.ghosts)
    return call("log", (a,))


def const(value) -> Term:
    return Term("const", value, repr(value), operand=ir.Const(value))


def _reduction_parts(t: Term):
    """(coefficient, name, operand, axis, keepdims) of `c * reduce(x, ...)`, or None."""
    c, r = _split_coefficient(t)
    if r.op == "call" and r.args[0] in REDUCTIONS:
        params = dict(r.args[2])
        return c, r.args[0], r.args[1][0], params["axis"], params["keepdims"]
    return None


def _constant_along(t: Term, x: Term, axis: Term, keepdims: Term) -> bool:
    """Whether `t` (a part of the exponent `x + t`) is constant along the axis a keepdims sum over
    `x + t` reduces: a number, a keepdims reduction of `x` along that axis, or a scalar (a
    reduction over every axis without keepdims)."""
    if t.op == "num":
        return True
    parts = _reduction_parts(t)
    if parts is None:
        return False
    _, _, operand, t_axis, t_keep = parts
    if t_axis.key == "None" and t_keep.args is False and t_keep.op == "const":
        return True
    return (keepdims.op == "const" and keepdims.args is True and t_keep.op == "const" and t_keep.args is True
            and t_axis.key == axis.key and operand == x)


def reduce(name: str, a: Term, axis: Term, keepdims: Term) -> Term:
    if name == "sum" and _is_call(a, "exp"):
        exponent = a.args[1][0]
        terms = list(exponent.args) if exponent.op == "add" else [exponent]
        shifts = [t for t in terms if t.op == "num" or _reduction_parts(t) is not None]
        if shifts:
            x = add(*(t for t in terms if t not in shifts))
            if x.op != "num" and all(_constant_along(t, x, axis, keepdims) for t in shifts):
                return mul(exp(add(*shifts)), call("sum", (exp(x),), (("axis", axis), ("keepdims", keepdims))))
    return call(name, (a,), (("axis", axis), ("keepdims", keepdims)))


def kept_axis(t: Term, at: int, rank: int) -> Term | None:
    """The term of `t` (a value of `rank` axes) with a length-1 axis inserted at `at`, where that
    is the axis the one reduction in `t` removed: `log(sum(x, axis=1))[:, None]` is
    `log(sum(x, axis=1, keepdims=True))`. None unless `t` is elementwise arithmetic,
    exponentials and logarithms of numbers and of one such reduction (so the reduction's result
    has `t`'s axes, and its operand one more)."""
    found: set = set()

    def kept(u: Term):
        if u.op == "num":
            return u
        if u.op in ("add", "mul"):
            parts = [kept(p) for p in u.args]
            return None if None in parts else (add if u.op == "add" else mul)(*parts)
        if u.op == "pow":
            base = kept(u.args[0])
            return None if base is None else power(base, u.args[1])
        if u.op != "call":
            return None
        name, operands, params = u.args
        if name in ("exp", "log"):
            inner = kept(operands[0])
            return None if inner is None else (exp if name == "exp" else log)(inner)
        params = dict(params)
        axis, keep = params["axis"], params["keepdims"]
        if name not in REDUCTIONS or keep.op != "const" or keep.args is not False or axis.op != "num" \
                or axis.args.denominator != 1 or not -(rank + 1) <= int(axis.args) <= rank \
                or int(axis.args) % (rank + 1) != at:
            return None
        found.add(u.key)
        return reduce(name, operands[0], axis, const(True))

    out = kept(t) if not t.ghosts else None
    return out if out is not None and len(found) == 1 else None


def negate(t: Term, memo: dict | None = None) -> Term:
    """-t, with the minus inside a sum or mean (`-sum(x)` is `sum(-x)`). `memo` (id of a term ->
    (the term, its negation)) keeps the negations made, for terms negated again (inside others)."""
    if memo is not None:
        hit = memo.get(id(t))
        if hit is None:
            hit = memo[id(t)] = (t, negate(t) if t.op != "call" else _negate(t, memo))
        return hit[1]
    return _negate(t, None)


def _negate(t: Term, memo) -> Term:
    if t.op == "call" and t.args[0] in ("sum", "mean"):
        params = dict(t.args[2])
        return reduce(t.args[0], negate(t.args[1][0], memo), params["axis"], params["keepdims"])
    return mul(MINUS_ONE, t)


def tanh(x: Term) -> Term:
    return add(num(-1), mul(num(2), power(add(ONE, exp(mul(num(-2), x))), -1)))


def sigmoid(x: Term) -> Term:
    return power(add(ONE, exp(mul(num(-1), x))), -1)


def rebuild(t: Term, env: dict, part=None) -> Term:
    """`t` with its pattern variables replaced by the terms `env` binds them to, canonical.
    `part(sub, env)` rebuilds each part of `t` (by default `rebuild` itself)."""
    if not (t.vars & env.keys()):
        return t
    if t.op == "var":
        return env[t.args]
    part = rebuild if part is None else part
    if t.op == "add":
        return add(*(part(p, env) for p in t.args))
    if t.op == "mul":
        return mul(*(part(p, env) for p in t.args))
    if t.op == "pow":
        return power(part(t.args[0], env), t.args[1])
    name, operands, params = t.args
    operands = [part(o, env) for o in operands]
    params = [(k, part(v, env)) for k, v in params]
    if name == "exp":
        return exp(operands[0])
    if name == "log":
        return log(operands[0])
    return reduce(name, operands[0], dict(params)["axis"], dict(params)["keepdims"])


# -- shapes: what a cancellation may have removed ---------------------------------------------------
def signature(t: Term) -> frozenset:
    """The shape tokens of a term: its value has the broadcast shape of these. A leaf is its own
    token; a reduction is one token (kind, axis, its operand's signature); numbers have none."""
    if t._sig is None:
        if t.op in ("leaf", "var"):
            t._sig = frozenset({t.key})
        elif t.op == "call" and t.args[0] in REDUCTIONS:
            params = dict(t.args[2])
            keep = params["keepdims"].op == "const" and params["keepdims"].args is True
            t._sig = frozenset({("kd" if keep else "r", params["axis"].key, signature(t.args[1][0]))})
        elif t.op in ("add", "mul", "pow") or t.op == "call":
            t._sig = frozenset().union(*(signature(c) for c in children(t) if c.op not in ("const",)))
        else:
            t._sig = frozenset()
    return t._sig


def _token_within(token, tokens: frozenset) -> bool:
    if token in tokens:
        return True
    # a keepdims reduction is no larger than its operand
    return isinstance(token, tuple) and token[0] == "kd" and all(_token_within(u, tokens) for u in token[2])


def shape_safe(t: Term) -> bool:
    """Whether nothing that cancelled out of `t` could have widened its shape."""
    tokens = signature(t)
    return all(_token_within(u, tokens) for g in t.ghosts for u in signature(g))


# -- primitives -> terms ----------------------------------------------------------------------------
def _binary(f):
    return lambda b, p: f(b[p[0]], b[p[1]])


def _unary(f):
    return lambda b, p: f(b[p[0]])


def _pow(b, p):
    y = b[p[1]]
    return power(b[p[0]], y.args) if y.op == "num" else None


def _reduction(name):
    def build(b, p):
        for param, default in (("dtype", None), ("out", None), ("initial", 0)):
            if param in b:
                v = b[param]
                if not ((v.op == "const" and v.args is None and default is None) or
                        (v.op == "num" and default == 0 and v.args == 0)):
                    return None
        if not shape_safe(b[p[0]]):  # the reduced value may have more slots than its term
            return None
        axis, keepdims = b.get("axis"), b.get("keepdims")
        if axis is None or keepdims is None or axis.op not in ("const", "num", "var") \
                or keepdims.op not in ("const", "var"):
            return None
        return reduce(name, b[p[0]], axis, keepdims)
    return build


def _math_log(b, p):
    base = b.get("base")
    return log(b[p[0]]) if base is None or (base.op == "const" and base.args is None) else None


_HANDLERS = [
    ((operator.add, np.add), _binary(add)),
    ((operator.sub, np.subtract), _binary(lambda x, y: add(x, mul(num(-1), y)))),
    ((operator.mul, np.multiply), _binary(mul)),
    ((operator.truediv, np.divide), _binary(lambda x, y: mul(x, power(y, -1)))),
    ((operator.neg, np.negative), _unary(lambda x: mul(num(-1), x))),
    ((operator.pos, np.positive), _unary(lambda x: x)),
    ((operator.pow, np.power, math.pow, pow), _pow),
    ((ir.SQUARE, np.square), _unary(lambda x: power(x, 2))),
    ((np.sqrt, math.sqrt), _unary(lambda x: power(x, Fraction(1, 2)))),
    ((np.exp, math.exp), _unary(exp)),
    ((np.log,), _unary(log)),
    ((math.log,), _math_log),
    ((np.log1p, math.log1p), _unary(lambda x: log(add(ONE, x)))),
    ((np.expm1, math.expm1), _unary(lambda x: add(exp(x), num(-1)))),
    ((np.tanh, math.tanh), _unary(tanh)),
    ((np.logaddexp,), _binary(lambda x, y: log(add(exp(x), exp(y))))),
    ((np.sum, ir.Method("sum")), _reduction("sum")),
    ((np.mean, ir.Method("mean")), _reduction("mean")),
    ((np.max, np.amax, ir.Method("max")), _reduction("max")),
]
HANDLERS = {prim: h for prims, h in _HANDLERS for prim in prims}
# operations that are not elementwise but give equal values for equal operands
_DETERMINISTIC = {operator.matmul: "matmul", np.matmul: "matmul", np.dot: "dot", operator.getitem: "getitem",
                  ir.Attr("T"): "transpose", np.transpose: "transpose"}


def _softmax(x: Term, axis: Term) -> Term:
    return mul(exp(x), power(reduce("sum", exp(x), axis, const(True)), -1))


# scipy.special's functions with a term: (parameters, the builder of the term from them)
_SCIPY = {
    "expit": (("x",), lambda b: sigmoid(b["x"])),
    "log_expit": (("x",), lambda b: mul(MINUS_ONE, log(add(ONE, exp(mul(MINUS_ONE, b["x"])))))),
    "logsumexp": (("a", "axis", "b", "keepdims", "return_sign"),
                  lambda b: log(reduce("sum", exp(b["a"]), b["axis"], b["keepdims"]))),
    "softmax": (("x", "axis"), lambda b: _softmax(b["x"], b["axis"])),
    "log_softmax": (("x", "axis"), lambda b: add(b["x"], mul(MINUS_ONE, log(reduce(
        "sum", exp(b["x"]), b["axis"], const(True)))))),
}


def _scipy_form(prim) -> bool:
    """Whether `prim` is one of scipy.special's functions above (scipy already loaded); their
    built-in rules (rules/scipy_special.py) leave them matchable by the composites."""
    special = sys.modules.get("scipy.special")
    name = getattr(prim, "__name__", None)
    return special is not None and name in _SCIPY and getattr(special, name, None) is prim


def _scipy_term(prim, args: list, kwargs: dict):
    """The term of a call of one of scipy.special's functions above (only when scipy is already
    loaded): the array operand first, then constant parameters at their defaults (None, False)
    except `axis` and `keepdims`."""
    special = sys.modules.get("scipy.special")
    name = getattr(prim, "__name__", None)
    if special is None or name not in _SCIPY or getattr(special, name, None) is not prim:
        return None
    params, build = _SCIPY[name]
    if len(args) > len(params) or set(kwargs) - set(params[len(args):]):
        return None
    bound = dict(zip(params, args), **kwargs)
    if params[0] not in bound:
        return None
    for p in params[1:]:
        v = bound.setdefault(p, const(None) if p == "axis" else const(False) if p == "keepdims" else const(None))
        if p == "axis" and v.op not in ("const", "num"):
            return None
        if p != "axis" and not (v.op == "const" and v.key in ("None", "False")) \
                and not (p == "keepdims" and v.key == "True"):
            return None
    if not shape_safe(bound[params[0]]):
        return None
    return build(bound)


def _user_rule(prim) -> bool:
    try:
        return prim in registry.USER_KEYS
    except TypeError:  # unhashable
        return False


def statement_term(s: ir.Assign, term_of) -> Term | None:
    """The canonical term of what `s` computes, its operands read by `term_of`; None if it is
    not an operation the view knows (its value is then a leaf)."""
    if s.target is None or s.target.kind == "seq" or s.prim in ir.WRITES or _user_rule(s.prim):
        return None
    try:
        handler = HANDLERS.get(s.prim)
    except TypeError:
        return None
    if handler is None and s.prim in _DETERMINISTIC and s.rule is not None and not s.kwargs:
        # a value computed again from the same operands is the same value (a leaf of one name)
        operands = [term_of(a) for a in s.args]
        if any(t is None for t in operands):
            return None
        return Term("leaf", None, f"{_DETERMINISTIC[s.prim]}({', '.join(t.key for t in operands)})",
                    operand=s.target)
    if handler is None:  # a library function: only scipy.special's forms above have a term
        if s.rule is not None and not _scipy_form(s.prim):
            return None
        terms = [term_of(a) for a in s.args]
        kwterms = {k: term_of(v) for k, v in s.kwargs.items()}
        if any(t is None for t in terms + list(kwterms.values())):
            return None
        return _scipy_term(s.prim, terms, kwterms)
    if s.target.kind != "num":
        return None
    rule, bound_ops = s.rule, s.bound
    own = registry.RULES.get(s.prim)
    if rule is not own and own is not None:  # a composite's statement, viewed after `fuse`
        from .activity import call_kwargs
        try:
            rule, bound_ops = own, own.bind(s.args, call_kwargs(s, own), s.loc)
        except AdjointCompilerError:
            return None
    if rule is None or rule.varargs or bound_ops is None:
        return None
    bound = {}
    for p in rule.params:
        t = term_of(bound_ops[p])
        if t is None:
            return None
        bound[p] = t
    return handler(bound, rule.params)


def parse_form(text: str) -> Term:
    """The canonical term of a composite's form, a Python expression over pattern variables
    (its names) with `np.<function>` calls bound to those functions' rules' parameters."""
    import ast

    def build(node):
        if isinstance(node, ast.Name):
            return var(node.id)
        if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (int, float, bool)):
            return leaf(ir.Const(node.value))
        if isinstance(node, ast.BinOp):
            prim = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                    ast.Div: operator.truediv, ast.Pow: operator.pow}.get(type(node.op))
            return _apply(prim, [build(node.left), build(node.right)], {}, node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return _apply(operator.neg, [build(node.operand)], {}, node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
            return _apply(getattr(np, node.func.attr), [build(a) for a in node.args],
                          {k.arg: build(k.value) for k in node.keywords}, node)
        raise ValueError(f"unsupported composite form: {ast.unparse(node)}")

    def _apply(prim, args, kwargs, node):
        registry.load_builtin_rules()
        rule = registry.RULES.get(prim)
        handler = HANDLERS.get(prim)
        if rule is None or handler is None or rule.varargs:
            raise ValueError(f"unsupported composite form: {ast.unparse(node)}")
        bound = dict(zip(rule.params, args))
        bound.update(kwargs)
        for p in rule.params:
            if p not in bound:
                if p not in rule.defaults:
                    raise ValueError(f"composite form {ast.unparse(node)}: `{p}` is missing")
                bound[p] = leaf(ir.Const(rule.defaults[p]))
        t = handler(bound, rule.params)
        if t is None:
            raise ValueError(f"unsupported composite form: {ast.unparse(node)}")
        return t

    return build(ast.parse(text, mode="eval").body)


# -- the view of a function -------------------------------------------------------------------------
class View:
    """The canonical term of every numeric value of a function (`term`), and the values that hold
    a given term (`realize`)."""

    def __init__(self, fn: ir.Function, ndims: dict | None = None):
        self.ndims = ndims or {}  # Var -> its number of axes, where the shapes pass knows it
        self.terms: dict = {}  # Var -> Term, for values computed by a known operation
        self.place: dict = {}  # Var -> its statement's position: ((block id, index), ...)
        self.holders: dict = {}  # term key -> [Var], in program order
        self._block(fn.body, ())

    def _block(self, stmts, outer: tuple) -> None:
        for i, s in enumerate(stmts):
            here = outer + ((id(stmts), i),)
            if isinstance(s, ir.Assign):
                if s.target is not None:
                    self.place[s.target] = here
                t = self.expanded(s) or statement_term(s, self.term)
                if t is not None and t.size <= LIMIT:
                    if shape_safe(t):  # the value has the term's shape: it may stand for the term
                        if t.ghosts:
                            t = Term(t.op, t.args, t.key, t.size, frozenset(), t.operand)
                        self.holders.setdefault(t.key, []).append(s.target)
                    self.terms[s.target] = t
            elif isinstance(s, ir.If):
                self._block(s.body, here)
                self._block(s.orelse, here)
            elif isinstance(s, ir.Loop):
                self._block(s.cond_body, here)
                self._block(s.body, here)

    def expanded(self, s: ir.Assign) -> Term | None:
        """The term of `s` that inserts a length-1 axis (`r[:, None]`, `np.expand_dims(r, 1)`)
        where a reduction in its operand's term removed one (`kept_axis`), else None."""
        rank = self.ndims.get(s.args[0]) if s.args and isinstance(s.args[0], ir.Var) else None
        at = inserted_axis(s, rank)
        operand = self.terms.get(s.args[0]) if at is not None else None
        return kept_axis(operand, at, rank) if operand is not None else None

    def term(self, op) -> Term | None:
        """The canonical term of an operand (a leaf when nothing better is known)."""
        if isinstance(op, ir.Var) and op in self.terms:
            return self.terms[op]
        return leaf(op)

    def visible(self, v: ir.Var, at: ir.Var) -> bool:
        """Whether `v` is computed before, and in a block enclosing, the statement defining `at`."""
        d, u = self.place.get(v), self.place.get(at)
        if d is None or u is None or len(d) > len(u):
            return False
        k = len(d) - 1
        return d[:k] == u[:k] and d[k][0] == u[k][0] and d[k][1] < u[k][1]

    def realize(self, t: Term, at: ir.Var):
        """An operand holding the value of `t` where `at` is computed, or None."""
        if t.op == "const" or (t.op == "leaf" and not (t.operand in self.place and not self.visible(t.operand, at))):
            return t.operand
        if t.op == "num":
            f = t.args
            if f.denominator == 1:
                return ir.Const(int(f))
            return ir.Const(float(f)) if Fraction(float(f)) == f else None
        for v in self.holders.get(t.key, ()):
            if self.visible(v, at):
                return v
        return None

    def format(self) -> str:
        """One line per value with a canonical term: `name: term`."""
        return "\n".join(f"{v.name}: {t.key}" for v, t in self.terms.items())


def view(fn: ir.Function, ndims: dict | None = None) -> View:
    """The canonical terms of `fn`'s values; `ndims` (the shapes pass's ranks) lets an inserted
    axis restore one a reduction removed."""
    return View(fn, ndims)

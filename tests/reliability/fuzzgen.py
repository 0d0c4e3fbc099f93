"""A generator of random, well-conditioned differentiable programs, and a differential checker.

`generate(chooser)` writes a random module: a function `f(a0, a1, ...)` returning a scalar, and
possibly helper functions it calls.  Every program stays inside the subset the compiler promises
to differentiate: straight-line NumPy over scalars and small arrays with broadcasting, bounded
unary ops, safe divisions, reductions with axes, data-dependent branches, early returns (in f,
at the top or inside a loop), `for`/`while` loops with loop-carried state, calls to generated helpers (including an ODE-style helper that writes into its
first argument), and Buffer / ndarray writes (slices, steps, masks, duplicate fancy indices,
broadcast-assign, copyto from arrays / lists / generators, snapshots, augmented assignment).

Values are kept bounded: the generator tracks a bound on the magnitude of every expression and
squashes (`np.tanh`, scaling) whatever grows too large, so central finite differences with
eps=1e-6 are accurate to ~1e-8 relative.

`check_program(program)` imports the module from a real file (the compiler reads source with
`inspect`), then compares `value_and_grad(f, wrt=all)` against running `f` directly and against
central finite differences taken coordinate by coordinate; it also checks that inputs are not
modified, that gradients have the structure of their arguments and alias nothing, and that a
single-argument `grad` agrees with the all-argument one.

The generator draws its decisions from a `Chooser`: `RandomChooser` (a seeded `random.Random`,
used by tools/fuzz_long.py) or `HypothesisChooser` (hypothesis `data.draw`, so failures shrink).
"""
from __future__ import annotations

import copy as _copy
import dataclasses
import importlib.util
import itertools
import os
import random
import sys
import tempfile
import traceback
import uuid

import numpy as np

import entry_modes as entry

# -------------------------------------------------------------------------------------------------
# choosers
# -------------------------------------------------------------------------------------------------


class RandomChooser:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def int(self, lo, hi):
        return self.r.randint(lo, hi)

    def choice(self, seq):
        seq = list(seq)
        return seq[self.r.randrange(len(seq))]

    def coin(self, p=0.5):
        return self.r.random() < p

    def float(self, lo, hi):
        return round(self.r.uniform(lo, hi), 2)


class HypothesisChooser:
    def __init__(self, data):
        from hypothesis import strategies as st
        self.st = st
        self.data = data

    def int(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))

    def choice(self, seq):
        seq = list(seq)
        return seq[self.data.draw(self.st.integers(0, len(seq) - 1))]

    def coin(self, p=0.5):
        # integers shrink toward 0 -> False (the simpler program)
        return self.data.draw(self.st.integers(0, 999)) >= 1000 * (1 - p)

    def float(self, lo, hi):
        return round(self.data.draw(self.st.floats(lo, hi, allow_nan=False, allow_infinity=False)), 2)


# -------------------------------------------------------------------------------------------------
# shapes
# -------------------------------------------------------------------------------------------------

ARG_SHAPES = [(), (3,), (2, 3), (3, 1)]
UNIVERSE = [(), (3,), (2, 3), (3, 1), (3, 3), (2, 1), (1, 3), (2,)]
LIMIT = 8.0        # squash expressions whose bound exceeds this
# Known bugs the generator can steer around (for finding *other* bugs; the default is none):
#   "neg_const_pow": a negative literal as the base of `**`, e.g. `(-0.8) ** 2`
#   "fortran_copyto_iter": copyto from an iterator into a Buffer made from an F-ordered array
AVOID: set = set()


def bshape(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def fits(s, target):
    """Whether shape s broadcasts to exactly target."""
    return bshape(s, target) == tuple(target)


def slot_shape(shape, idx_code):
    """The shape `np.empty(shape)[idx]` has (idx given as source), or None if invalid."""
    try:
        return tuple(np.empty(shape)[eval(f"np.s_[{idx_code}]", {"np": np})].shape)
    except Exception:
        return None


def fmt(c):
    return repr(float(c))


@dataclasses.dataclass
class E:
    code: str
    shape: tuple
    bound: float


@dataclasses.dataclass
class Var:
    name: str
    shape: tuple
    bound: float


@dataclasses.dataclass
class Container:
    name: str
    kind: str           # 'buffer' or 'ndarray'
    shape: tuple
    bound: float


@dataclasses.dataclass
class Program:
    source: str
    arg_shapes: list           # shape per argument of f; () means a scalar
    arg_kinds: list            # 'float', 'np64', 'C', 'F', 'strided'
    arg_seed: int
    features: set
    written_args: set


# -------------------------------------------------------------------------------------------------
# the generator
# -------------------------------------------------------------------------------------------------


class Gen:
    def __init__(self, ch, max_stmts=8):
        self.ch = ch
        self.max_stmts = max_stmts
        self.counter = itertools.count()
        self.helpers: list[str] = []
        self.features: set = set()
        self.n_helpers = 0

    # -- names -------------------------------------------------------------------------------
    def fresh(self, prefix="v"):
        return f"{prefix}{next(self.counter)}"

    # -- expressions ---------------------------------------------------------------------------
    def squash(self, e: E) -> E:
        if e.bound <= LIMIT:
            return e
        if e.bound <= 10 * LIMIT and self.ch.coin(0.5):
            return E(f"0.1 * ({e.code})", e.shape, e.bound * 0.1)
        return E(f"np.tanh({e.code})", e.shape, 1.0)

    def leaf(self, env, target) -> E:
        vs = [v for v in env["vars"] if fits(v.shape, target)]
        cs = [c for c in env["containers"] if c.shape and self.reads_ok(c)]
        r = self.ch.int(0, 9)
        if r <= 5 and vs:
            v = self.ch.choice(vs)
            return E(v.name, v.shape, v.bound)
        if r <= 7:
            # an index read of a variable or container
            pool = [v for v in env["vars"] if v.shape] + cs
            if pool:
                v = self.ch.choice(pool)
                idx = self.read_index(v.shape, env)
                if idx is not None:
                    s = slot_shape(v.shape, idx[0]) if idx[1] is None else idx[1]
                    if s is not None and fits(s, target):
                        return E(f"{v.name}[{idx[0]}]", s, v.bound)
        c = self.ch.float(-1.5, 1.5)
        return E(fmt(c), (), abs(c))

    def reads_ok(self, c):
        return True

    def read_index(self, shape, env):
        """(index source, shape or None to compute)."""
        loopvars = [(n, k) for n, k in env["loopvars"] if shape and k <= shape[0]]
        if loopvars and self.ch.coin(0.3):
            n, k = self.ch.choice(loopvars)
            return n, tuple(shape[1:])
        return self.ch.choice(read_indices(shape)), None

    def expr(self, env, target, depth) -> E:
        if depth <= 0:
            return self.leaf(env, target)
        r = self.ch.int(0, 13)
        if r <= 2:
            return self.leaf(env, target)
        if r <= 5:
            return self.unary(env, target, depth)
        if r <= 9:
            return self.binary(env, target, depth)
        if r <= 11:
            return self.reduction(env, target, depth)
        if r == 12:
            return self.where(env, target, depth)
        return self.power(env, target, depth)

    def unary(self, env, target, depth) -> E:
        a = self.expr(env, target, depth - 1)
        op = self.ch.choice(["sin", "cos", "tanh", "exp", "log", "sqrt", "neg", "square", "method"])
        if op in ("sin", "cos", "tanh"):
            return E(f"np.{op}({a.code})", a.shape, 1.0)
        if op == "exp":
            if a.bound <= 2.0:
                return E(f"np.exp({a.code})", a.shape, float(np.exp(a.bound)))
            return E(f"np.exp(np.sin({a.code}))", a.shape, float(np.e))
        if op == "log":
            if self.ch.coin():
                return E(f"np.log(1.5 + {a.code} * {a.code})" if a.code.isidentifier()
                         else f"np.log(1.5 + np.square({a.code}))", a.shape, float(np.log(1.5 + a.bound ** 2)))
            return E(f"np.log(2.0 + np.sin({a.code}))", a.shape, 1.1)
        if op == "sqrt":
            return E(f"np.sqrt(1.5 + ({self.base(a.code)}) ** 2)", a.shape, float(np.sqrt(1.5 + a.bound ** 2)))
        if op == "neg":
            return E(f"-({a.code})", a.shape, a.bound)
        if op == "square":
            return self.squash(E(f"np.square({a.code})", a.shape, a.bound ** 2))
        # method forms (not on a literal: `(0.5).sum()` is not NumPy)
        if not a.shape:
            return E(f"np.sum({a.code})", a.shape, a.bound)
        m = self.ch.choice(["sum", "mean"])
        if a.shape and self.ch.coin():
            ax = self.ch.int(0, len(a.shape) - 1)
            s = tuple(d for i, d in enumerate(a.shape) if i != ax)
            if fits(s, target):
                return self.squash(E(f"({a.code}).{m}(axis={ax})", s,
                                     a.bound * (a.shape[ax] if m == "sum" else 1)))
        n = int(np.prod(a.shape)) if a.shape else 1
        return self.squash(E(f"({a.code}).{m}()", (), a.bound * (n if m == "sum" else 1)))

    def binary(self, env, target, depth) -> E:
        a = self.expr(env, target, depth - 1)
        b = self.expr(env, target, depth - 1)
        s = bshape(a.shape, b.shape)
        op = self.ch.choice("+-*/")
        if op in "+-":
            return self.squash(E(f"({a.code}) {op} ({b.code})", s, a.bound + b.bound))
        if op == "*":
            return self.squash(E(f"({a.code}) * ({b.code})", s, a.bound * b.bound))
        if self.ch.coin():
            return self.squash(E(f"({a.code}) / (1.5 + np.square({b.code}))", s, a.bound / 1.5))
        return self.squash(E(f"({a.code}) / (2.0 + np.cos({b.code}))", s, a.bound))

    def base(self, code):
        if "neg_const_pow" in AVOID and code.startswith("-"):
            return f"np.abs({code})"
        return code

    def power(self, env, target, depth) -> E:
        a = self.expr(env, target, depth - 1)
        a = E(self.base(a.code), a.shape, a.bound)
        k = self.ch.choice([2, 3, 2.0, 0.5])
        if k == 0.5:
            return E(f"(1.5 + ({a.code}) ** 2) ** 0.5", a.shape, float(np.sqrt(1.5 + a.bound ** 2)))
        return self.squash(E(f"({a.code}) ** {k}", a.shape, a.bound ** k))

    def where(self, env, target, depth) -> E:
        c = self.expr(env, target, depth - 1)
        a = self.expr(env, target, depth - 1)
        b = self.expr(env, target, depth - 1)
        s = bshape(c.shape, a.shape, b.shape)
        thr = self.ch.float(-0.5, 0.5)
        return E(f"np.where(({c.code}) > {fmt(thr)}, {a.code}, {b.code})", s, max(a.bound, b.bound))

    def reduction(self, env, target, depth) -> E:
        inner_t = self.ch.choice([t for t in UNIVERSE if t])
        a = self.expr(env, inner_t, depth - 1)
        fn = self.ch.choice(["sum", "mean"])
        if a.shape and self.ch.coin(0.7):
            ax = self.ch.int(-len(a.shape), len(a.shape) - 1)
            keep = self.ch.coin()
            axp = ax % len(a.shape)
            if keep:
                s = tuple(1 if i == axp else d for i, d in enumerate(a.shape))
            else:
                s = tuple(d for i, d in enumerate(a.shape) if i != axp)
            if fits(s, target):
                kd = ", keepdims=True" if keep else ""
                mult = a.shape[axp] if fn == "sum" else 1
                return self.squash(E(f"np.{fn}({a.code}, axis={ax}{kd})", s, a.bound * mult))
        n = int(np.prod(a.shape)) if a.shape else 1
        return self.squash(E(f"np.{fn}({a.code})", (), a.bound * (n if fn == "sum" else 1)))

    def exact(self, env, target, depth) -> E:
        e = self.expr(env, target, depth)
        if e.shape != tuple(target):
            e = E(f"({e.code}) + np.zeros({target!r})", tuple(target), e.bound)
        return e

    # -- statements ----------------------------------------------------------------------------
    def block(self, env, n, indent, allow_compound=True):
        lines = []
        for _ in range(n):
            lines += self.stmt(env, indent, allow_compound)
        return lines

    def stmt(self, env, ind, allow_compound=True):
        choices = ["assign"] * 4 + ["loss"]
        if allow_compound:
            choices += ["if", "for", "while", "call", "buffer", "ndarray", "accum_loop", "buffer_loop"]
            if env["args_writable"]:
                choices += ["write_arg"]
            if env.get("in_f"):
                choices += ["early_return"]
        kind = self.ch.choice(choices)
        return getattr(self, "s_" + kind)(env, ind)

    def new_var(self, env, e: E, ind, name=None):
        name = name or self.fresh()
        env["vars"].append(Var(name, e.shape, e.bound))
        return [f"{ind}{name} = {e.code}"]

    def s_loss(self, env, ind):
        """A sigmoid and a log-loss of it, or a log-softmax, written in the forms the composite
        rules match (rules/composites.py) or close to them: composites and chain rule must agree."""
        t = self.ch.choice([s for s in UNIVERSE if len(s) == 2] if self.ch.coin(0.3) else UNIVERSE)
        z = self.expr(env, t, self.ch.int(0, 2))
        if len(z.shape) == 2 and self.ch.coin(0.3):  # log-softmax over an axis, maybe max-shifted
            a, k = self.fresh("lg"), self.ch.int(0, 1)
            lines = self.new_var(env, self.squash(z), ind, a)
            zs = a
            if self.ch.coin():
                zs = self.fresh("sh")
                lines.append(f"{ind}{zs} = {a} - np.max({a}, axis={k}, keepdims=True)")
            return lines + self.new_var(env, self.squash(E(
                f"{zs} - np.log(np.sum(np.exp({zs}), axis={k}, keepdims=True))", z.shape, 2 * LIMIT + 2)), ind)
        p = self.fresh("sg")
        lines = [f"{ind}{p} = 1.0 / (1.0 + np.exp(-({self.squash(z).code})))"]
        env["vars"].append(Var(p, z.shape, 1.0))
        u = self.leaf(env, t)
        shape = bshape(u.shape, z.shape)
        log_one_minus = self.ch.choice([f"np.log(1.0 - {p})", f"np.log1p(-{p})"])
        loss = self.ch.choice([f"{u.code} * np.log({p}) + (1.0 - {u.code}) * {log_one_minus}",
                               f"(1 - {u.code}) * {log_one_minus} + np.log({p}) * {u.code}",
                               f"np.log({p})", log_one_minus])
        if "*" not in loss:
            shape = z.shape
        bound = (1.0 + 2.0 * u.bound) * (LIMIT + 1.0)
        form = self.ch.int(0, 3)
        if form == 1:
            return lines + self.new_var(env, self.squash(E(f"np.sum({loss})", (), bound * 9)), ind)
        if form == 2:
            return lines + self.new_var(env, self.squash(E(f"np.mean({loss})", (), bound)), ind)
        return lines + self.new_var(env, self.squash(E(loss, shape, bound)), ind)

    def s_assign(self, env, ind):
        t = self.ch.choice(UNIVERSE)
        return self.new_var(env, self.expr(env, t, self.ch.int(1, 3)), ind)

    def cond(self, env):
        t = self.ch.choice(UNIVERSE)
        e = self.expr(env, t, self.ch.int(0, 2))
        c = self.ch.float(-1.0, 1.0)
        op = self.ch.choice([">", "<"])
        red = self.ch.choice(["np.sum", "np.mean", "np.max"]) if e.shape else ""
        return f"{red}({e.code}) {op} {fmt(c)}" if red else f"{e.code} {op} {fmt(c)}"

    def subenv(self, env):
        return {"vars": list(env["vars"]), "containers": list(env["containers"]),
                "loopvars": list(env["loopvars"]), "args_writable": env["args_writable"],
                "in_f": env.get("in_f", False)}

    def result_terms(self, env, picks) -> str:
        """A scalar made of reductions of the variables `picks`: what f returns."""
        terms = []
        for v in picks:
            w = self.ch.choice(["np.sum({})", "np.mean({})", "np.sum(np.sin({}))", "np.sum({} * {})",
                                "{}"]) if v.shape else self.ch.choice(["{}", "np.sin({})", "{} * {}"])
            if w == "{}" and v.shape:
                w = "np.sum({})"
            terms.append(w.format(v.name, v.name))
        return " + ".join(terms)

    def s_early_return(self, env, ind):
        """`if <cond>: return <scalar>` in f, at the top or at the end of a loop's trip."""
        if not env["vars"]:
            return self.s_assign(env, ind)
        self.features.add("early_return")
        picks = [self.ch.choice(env["vars"]) for _ in range(self.ch.int(1, 2))]
        if self.ch.coin(0.6) or not [v for v in env["vars"] if v.bound <= LIMIT]:
            return [f"{ind}if {self.cond(env)}:", f"{ind}    return {self.result_terms(env, picks)}"]
        v = self.ch.choice(env["vars"])
        i = self.fresh("i")
        sub = self.subenv(env)
        sub["loopvars"].append((i, 3))
        line, nb = self.loop_update(sub, v, ind + "    ", i)
        v.bound = max(v.bound, nb)
        lines = [f"{ind}for {i} in range({self.ch.int(1, 3)}):", line,
                 f"{ind}    if {self.cond(sub)}:", f"{ind}        return {self.result_terms(sub, picks)}"]
        if v.bound > LIMIT:
            lines.append(f"{ind}{v.name} = np.tanh({v.name})")
            v.bound = 1.0
        return lines

    def s_if(self, env, ind):
        self.features.add("if")
        # a new variable assigned on every path, plus maybe a reassigned existing one
        t = self.ch.choice(UNIVERSE)
        name = self.fresh()
        nb = self.ch.choice([1, 2, 2, 3])       # if / if-else / if-elif-else
        lines = []
        first = None
        reassign = self.ch.choice(env["vars"]) if env["vars"] and self.ch.coin(0.4) else None
        bounds = []
        for b in range(nb):
            head = "if" if b == 0 else ("elif" if b < nb - 1 or nb == 1 else "else")
            if b == nb - 1 and nb > 1:
                lines.append(f"{ind}else:")
            else:
                lines.append(f"{ind}{head} {self.cond(env)}:")
            sub = self.subenv(env)
            if self.ch.coin(0.3):
                lines += self.block(sub, 1, ind + "    ", allow_compound=False)
            e = self.expr(sub, t, 2) if first is None else self.exact(sub, first, 2)
            if first is None:
                first = e.shape
            bounds.append(e.bound)
            lines.append(f"{ind}    {name} = {e.code}")
            if reassign is not None:
                r = self.exact(sub, reassign.shape, 1)
                lines.append(f"{ind}    {reassign.name} = {r.code}")
                reassign.bound = max(reassign.bound, r.bound)
        if nb == 1:
            # plain `if` without else: define the variable before
            e0 = self.exact(env, first, 1)
            lines.insert(0, f"{ind}{name} = {e0.code}")
            bounds.append(e0.bound)
        env["vars"].append(Var(name, first, max(bounds)))
        return lines

    def loop_update(self, sub, v: Var, ind, i_name):
        """A bounded loop-carried update of v."""
        form = self.ch.int(0, 2)
        e = self.expr(sub, v.shape, self.ch.int(0, 2))
        if form == 0:
            a = self.ch.float(-0.9, 0.9)
            nb = abs(a) * v.bound + 1.0
            return f"{ind}{v.name} = {fmt(a)} * {v.name} + np.sin({e.code} + 0.1 * {i_name})", nb
        if form == 1:
            return f"{ind}{v.name} = np.tanh({v.name} * {e.code} + 0.2)", 1.0
        return f"{ind}{v.name} = {v.name} / (1.5 + np.square({e.code})) + 0.3 * np.cos({v.name})", \
            v.bound / 1.5 + 0.3

    def s_for(self, env, ind):
        self.features.add("for")
        n = self.ch.int(1, 4)
        i = self.fresh("i")
        state = [v for v in env["vars"]]
        if not state:
            return self.s_assign(env, ind)
        carried = [self.ch.choice(state) for _ in range(self.ch.int(1, 2))]
        lines = [f"{ind}for {i} in range({n}):"]
        sub = self.subenv(env)
        sub["loopvars"].append((i, n))
        if self.ch.coin(0.3):
            lines += self.block(sub, 1, ind + "    ", allow_compound=False)
        if self.ch.coin(0.2):
            # a nested loop
            j = self.fresh("i")
            m = self.ch.int(1, 3)
            lines.append(f"{ind}    for {j} in range({m}):")
            sub2 = self.subenv(sub)
            sub2["loopvars"].append((j, m))
            v = self.ch.choice(carried)
            line, nb = self.loop_update(sub2, v, ind + "        ", j)
            lines.append(line)
            v.bound = max(v.bound, nb, nb * 1.0)
        for v in carried:
            line, nb = self.loop_update(sub, v, ind + "    ", i)
            lines.append(line)
            v.bound = max(v.bound, nb)
        for v in carried:  # bounds can only be trusted as a fixed point; squash if needed
            if v.bound > LIMIT:
                lines.append(f"{ind}{v.name} = np.tanh({v.name})")
                v.bound = 1.0
        return lines

    def s_accum_loop(self, env, ind):
        """acc = 0; for i in range(n): acc = acc + <expr using i, maybe x[i]>."""
        self.features.add("for")
        n = self.ch.int(1, 4)
        i = self.fresh("i")
        t = self.ch.choice(UNIVERSE)
        acc = self.fresh("acc")
        lines = [f"{ind}{acc} = {self.ch.choice(['0.0', 'np.zeros(' + repr(t) + ')'])}"]
        lines.append(f"{ind}for {i} in range({n}):")
        sub = self.subenv(env)
        sub["loopvars"].append((i, n))
        e = self.expr(sub, t, self.ch.int(1, 2))
        lines.append(f"{ind}    {acc} = {acc} + {e.code}")
        bound = n * e.bound
        env["vars"].append(Var(acc, bshape(e.shape, t if "zeros" in lines[0] else ()), bound))
        if bound > LIMIT:
            lines.append(f"{ind}{acc} = np.tanh({acc})")
            env["vars"][-1].bound = 1.0
        return lines

    def s_while(self, env, ind):
        self.features.add("while")
        if not env["vars"]:
            return self.s_assign(env, ind)
        k = self.fresh("k")
        n = self.ch.int(1, 4)
        v = self.ch.choice(env["vars"])
        lines = [f"{ind}{k} = 0"]
        if self.ch.coin(0.4):
            lines.append(f"{ind}while {k} < {n} and np.sum({v.name}) < {fmt(self.ch.float(-1.0, 3.0))}:")
        else:
            lines.append(f"{ind}while {k} < {n}:")
        sub = self.subenv(env)
        line, nb = self.loop_update(sub, v, ind + "    ", k)
        lines.append(line)
        lines.append(f"{ind}    {k} {self.ch.choice(['+= 1', '= ' + k + ' + 1'])}")
        v.bound = max(v.bound, nb)
        if v.bound > LIMIT:
            lines.append(f"{ind}{v.name} = np.tanh({v.name})")
            v.bound = 1.0
        return lines

    def s_call(self, env, ind):
        self.features.add("call")
        if len(self.helpers) >= 3 or not env["vars"]:
            return self.s_assign(env, ind)
        params = [self.ch.choice(env["vars"]) for _ in range(self.ch.int(1, 3))]
        hname = f"helper{self.n_helpers}"
        self.n_helpers += 1
        if self.ch.coin(0.3) and any(p.shape for p in params):
            return self.ode_call(env, ind, hname, params)
        pnames = [f"p{j}" for j in range(len(params))]
        henv = {"vars": [Var(pn, p.shape, p.bound) for pn, p in zip(pnames, params)],
                "containers": [], "loopvars": [], "args_writable": False}
        body = self.block(henv, self.ch.int(0, 2), "    ", allow_compound=self.ch.coin(0.5))
        t = self.ch.choice(UNIVERSE)
        r = self.expr(henv, t, 2)
        src = [f"def {hname}({', '.join(pnames)}):"] + body + [f"    return {r.code}"]
        self.helpers.append("\n".join(src))
        call = f"{hname}({', '.join(p.name for p in params)})"
        return self.new_var(env, E(call, r.shape, r.bound), ind)

    def ode_call(self, env, ind, hname, params):
        """def rhs(du, u, p): du[...] = ...; called with a fresh np.zeros array."""
        self.features.add("ode")
        u = self.ch.choice([p for p in params if p.shape])
        others = [p for p in params if p is not u]
        pnames = ["u"] + [f"p{j}" for j in range(len(others))]
        as_buffer = self.ch.coin(0.3)
        henv = {"vars": [Var("u", u.shape, u.bound)] + [Var(pn, p.shape, p.bound)
                                                        for pn, p in zip(pnames[1:], others)],
                "containers": [Container("du", "buffer" if as_buffer else "ndarray", u.shape, 0.0)],
                "loopvars": [],
                "args_writable": False}
        body = []
        for _ in range(self.ch.int(1, 3)):
            body += self.write(henv, henv["containers"][0], "    ")
        src = [f"def {hname}(du, {', '.join(pnames)}):"] + body
        if self.ch.coin():
            src.append("    return du")
        self.helpers.append("\n".join(src))
        out = self.fresh("du")
        call = f"{ind}{hname}({out}, {', '.join([u.name] + [p.name for p in others])})"
        bound = henv["containers"][0].bound
        if as_buffer:
            # the helper writes into a Buffer it is passed
            self.features.add("buffer_arg")
            snap = self.fresh("s")
            lines = [f"{ind}{out} = Buffer.zeros({u.shape!r})", call, f"{ind}{snap} = {out}.copy()"]
            env["vars"].append(Var(snap, u.shape, bound))
            return lines
        lines = [f"{ind}{out} = np.zeros({u.shape!r})", call]
        env["vars"].append(Var(out, u.shape, bound))
        return lines

    # -- writes --------------------------------------------------------------------------------
    def write(self, env, c: Container, ind):
        """One write into container c (a Buffer or an ndarray)."""
        shape = c.shape
        kind = self.ch.choice(["index", "index", "index", "mask", "aug", "copyto", "copyto_where",
                               "copyto_gen", "copyto_list", "ellipsis"])
        if kind == "index":
            idx = self.ch.choice(write_indices(shape))
            s = slot_shape(shape, idx)
            if "[" in idx:
                self.features.add("fancy")
            e = self.expr(env, s, self.ch.int(0, 2))
            if e.shape != s:
                self.features.add("broadcast_assign")
            c.bound = max(c.bound, e.bound)
            return [f"{ind}{c.name}[{idx}] = {e.code}"]
        if kind == "ellipsis":
            e = self.expr(env, shape, self.ch.int(0, 2))
            c.bound = max(c.bound, e.bound)
            return [f"{ind}{c.name}[...] = {e.code}"]
        if kind == "mask":
            self.features.add("mask")
            m = self.expr(env, shape, 1)
            mname = self.fresh("m")
            lines = [f"{ind}{mname} = ({m.code}) > {fmt(self.ch.float(-0.5, 0.5))}"]
            if bshape(m.shape) != shape:
                lines.append(f"{ind}{mname} = {mname} & np.ones({shape!r}, dtype=bool)")
            if self.ch.coin():
                e = self.expr(env, (), 1)
                lines.append(f"{ind}{c.name}[{mname}] = {e.code}")
            else:
                e = self.exact(env, shape, 1)
                lines.append(f"{ind}{c.name}[{mname}] = ({e.code})[{mname}]")
            c.bound = max(c.bound, e.bound)
            return lines
        if kind == "aug":
            self.features.add("aug")
            idx = self.ch.choice(write_indices(shape) + AUG_DUP.get(shape, []))
            s = slot_shape(shape, idx)
            op = self.ch.choice(["+=", "-=", "*=", "/="])
            e = self.expr(env, s, self.ch.int(0, 1))
            if op in ("+=", "-="):
                c.bound = c.bound + e.bound
                code = e.code
            elif op == "*=":
                code = f"np.tanh({e.code})"
                c.bound = c.bound
            else:
                code = f"(1.5 + np.square({e.code}))"
            line = f"{ind}{c.name}[{idx}] {op} {code}"
            lines = [line]
            if c.bound > LIMIT:
                lines.append(f"{ind}{c.name}[...] = np.tanh({self.read_all(c)})")
                c.bound = 1.0
            return lines
        if kind == "copyto":
            self.features.add("copyto")
            e = self.expr(env, shape, self.ch.int(0, 2))
            c.bound = max(c.bound, e.bound)
            return [f"{ind}{self.copyto_name(c)}({c.name}, {e.code})"]
        if kind == "copyto_where":
            self.features.add("copyto")
            e = self.expr(env, shape, self.ch.int(0, 2))
            m = self.expr(env, shape, 1)
            c.bound = max(c.bound, e.bound)
            return [f"{ind}{self.copyto_name(c)}({c.name}, {e.code}, "
                    f"where=({m.code}) > {fmt(self.ch.float(-0.5, 0.5))})"]
        if kind == "copyto_list":
            self.features.add("copyto")
            if len(shape) != 1:
                return self.write(env, c, ind)
            items = [self.expr(env, (), self.ch.int(0, 1)) for _ in range(shape[0])]
            c.bound = max([c.bound] + [i.bound for i in items])
            return [f"{ind}{self.copyto_name(c)}({c.name}, [{', '.join(i.code for i in items)}])"]
        # copyto from a generator / iterator: only the compiler's copyto accepts these
        self.features.add("copyto_gen")
        size = int(np.prod(shape))
        k = self.ch.int(1, size)
        g = self.fresh("j")
        form = self.ch.int(0, 2)
        vecs = [v for v in env["vars"] if len(v.shape) == 1 and v.shape[0] <= size]
        if form == 1 and vecs:
            v = self.ch.choice(vecs)
            c.bound = max(c.bound, 1.0)
            src = self.ch.choice([f"map(np.sin, {v.name})", f"(np.tanh(t) for t in {v.name})"])
        elif form == 2 and vecs:
            v = self.ch.choice(vecs)
            c.bound = max(c.bound, v.bound)
            src = f"iter({v.name})"
        else:
            sub = self.subenv(env)
            e = self.expr(sub, (), self.ch.int(0, 2))
            c.bound = max(c.bound, 1.0)
            src = f"(np.sin({e.code} + 0.3 * {g}) for {g} in range({k}))"
        return [f"{ind}copyto({c.name}, {src})"]

    def copyto_name(self, c):
        return "copyto" if c.kind == "buffer" or self.ch.coin() else "np.copyto"

    def read_all(self, c):
        return f"{c.name}.copy()" if c.kind == "buffer" else c.name

    def snapshot(self, env, c, ind):
        self.features.add("snapshot")
        name = self.fresh("s")
        if c.kind == "buffer":
            code = self.ch.choice([f"{c.name}.copy()", f"{c.name}.copy()", f"np.array({c.name})",
                                   f"copy.copy({c.name})"])
        else:
            code = f"{c.name}.copy()"
        env["vars"].append(Var(name, c.shape, c.bound))
        return [f"{ind}{name} = {code}"]

    def s_buffer(self, env, ind, kind="buffer"):
        self.features.add(kind)
        shape = self.ch.choice([(3,), (2, 3), (3, 1), (4,), (3, 3)])
        name = self.fresh("b" if kind == "buffer" else "w")
        init = self.ch.int(0, 2)
        if kind == "buffer":
            if init == 0:
                lines = [f"{ind}{name} = Buffer.zeros({shape!r})"]
                bound = 0.0
            elif init == 1:
                e = self.exact(env, shape, 1)
                lines = [f"{ind}{name} = Buffer({e.code})"]
                bound = e.bound
            else:
                src = [v for v in env["vars"] if v.shape == shape]
                if src:
                    v = self.ch.choice(src)
                    lines = [f"{ind}{name} = Buffer.zeros_like({v.name})"]
                else:
                    lines = [f"{ind}{name} = Buffer.zeros({shape!r})"]
                bound = 0.0
        else:
            if init == 0:
                lines = [f"{ind}{name} = np.zeros({shape!r})"]
                bound = 0.0
            elif init == 1:
                e = self.exact(env, shape, 1)
                lines = [f"{ind}{name} = np.array({e.code})"]
                bound = e.bound
            else:
                src = [v for v in env["vars"] if v.shape == shape]
                if src:
                    v = self.ch.choice(src)
                    lines = [f"{ind}{name} = {v.name}.copy()"]
                    bound = v.bound
                else:
                    lines = [f"{ind}{name} = np.ones({shape!r})"]
                    bound = 1.0
        c = Container(name, kind, shape, bound)
        for _ in range(self.ch.int(1, 4)):
            lines += self.write(env, c, ind)
            if self.ch.coin(0.35):
                lines += self.snapshot(env, c, ind)
            if c not in env["containers"]:
                env["containers"].append(c)
        lines += self.snapshot(env, c, ind)
        return lines

    def s_ndarray(self, env, ind):
        return self.s_buffer(env, ind, kind="ndarray")

    def s_buffer_loop(self, env, ind):
        """A recurrence written into a buffer / array inside a loop: b[i + 1] = a * b[i] + g(i)."""
        self.features.add("buffer_loop")
        n = self.ch.int(2, 5)
        kind = self.ch.choice(["buffer", "ndarray"])
        name = self.fresh("b" if kind == "buffer" else "w")
        row = self.ch.choice([(), (), (3,)])
        shape = (n,) + row
        lines = [f"{ind}{name} = " + (f"Buffer.zeros({shape!r})" if kind == "buffer"
                                      else f"np.zeros({shape!r})")]
        e0 = self.expr(env, row, 1)
        lines.append(f"{ind}{name}[0] = {e0.code}")
        i = self.fresh("i")
        a = self.ch.float(-0.9, 0.9)
        lines.append(f"{ind}for {i} in range({n - 1}):")
        sub = self.subenv(env)
        sub["loopvars"].append((i, n - 1))
        e = self.expr(sub, row, self.ch.int(0, 2))
        form = self.ch.int(0, 2)
        if form == 2:
            # accumulate into the slots with an augmented assignment
            self.features.add("aug")
            lines.append(f"{ind}    {name}[{i}] += np.sin({e.code})")
            lines.append(f"{ind}    {name}[{i} + 1] -= {fmt(a)} * {name}[{i}]")
        elif form == 1:
            lines.append(f"{ind}    {name}[{i} + 1] = {fmt(a)} * {name}[{i}] + np.sin({e.code})")
        else:
            lines.append(f"{ind}    {name}[{i} + 1] = np.tanh({name}[{i}] * {e.code} + {fmt(a)})")
        c = Container(name, kind, shape, max(1.0, e0.bound) / (1 - abs(a)) + 1)
        if c.bound > LIMIT:
            lines.append(f"{ind}{name}[...] = np.tanh({self.read_all(c)})")
            c.bound = 1.0
        env["containers"].append(c)
        lines += self.snapshot(env, c, ind)
        return lines

    def s_write_arg(self, env, ind):
        """Write into an ndarray argument (the caller's array must not change: it's copied)."""
        args = [v for v in env["vars"] if v.name in env["args_writable"]]
        if not args:
            return self.s_assign(env, ind)
        self.features.add("write_arg")
        v = self.ch.choice(args)
        env["args_writable"] = env["args_writable"] - {v.name}
        self.written.add(v.name)
        c = Container(v.name, "ndarray", v.shape, v.bound)
        lines = self.write(env, c, ind)
        v.bound = max(v.bound, c.bound)
        return lines

    # -- whole programs ------------------------------------------------------------------------
    def program(self, arg_seed) -> Program:
        nargs = self.ch.int(1, 4)
        shapes = [self.ch.choice(ARG_SHAPES) for _ in range(nargs)]
        kinds = []
        for s in shapes:
            if s == ():
                kinds.append(self.ch.choice(["float", "float", "np64"]))
            else:
                kinds.append(self.ch.choice(["C", "C", "C", "F", "strided"]))
        names = [f"a{k}" for k in range(nargs)]
        env = {"vars": [Var(n, s, 1.0) for n, s in zip(names, shapes)], "containers": [],
               "loopvars": [], "args_writable": {n for n, s in zip(names, shapes) if s},
               "in_f": self.ch.coin(0.5)}
        self.written = set()
        body = self.block(env, self.ch.int(1, self.max_stmts), "    ")
        # the result: a sum of reductions of some of the variables (always the latest ones)
        pool = env["vars"]
        picks = pool[-2:] + [self.ch.choice(pool) for _ in range(self.ch.int(0, 3))]
        body.append(f"    return {self.result_terms(env, picks)}")
        src = ["import copy", "import itertools", "", "import numpy as np", "",
               "from adjoint_compiler import Buffer, copyto", "", ""]
        for h in self.helpers:
            src += [h, "", ""]
        src += [f"def f({', '.join(names)}):"] + body + [""]
        return Program("\n".join(src), shapes, kinds, arg_seed, set(self.features), set(self.written))


_READ_CANDIDATES = {
    1: ["0", "-1", "1:", ":2", "::2", "::-1", "[0, 1, 0]", "1", "..."],
    2: ["0", "-1", ":, 0", "..., -1", "0, 0", "::-1", ":, :1", "[0, 0]", ":, [0, 0]", "1:, ::2"],
}
_READ_CACHE: dict = {}


def read_indices(shape):
    if shape not in _READ_CACHE:
        opts = [i for i in _READ_CANDIDATES.get(len(shape), ["..."]) if slot_shape(shape, i) is not None]
        _READ_CACHE[shape] = opts or ["..."]
    return _READ_CACHE[shape]


WRITE_INDICES = {
    (3,): ["0", "-1", "1:", ":2", "::2", "::-1", "[0, 2, 0]", "[2, 1]", "1:3", "[True, False, True]"],
    (4,): ["0", "1:3", "::2", "1::2", "[3, 0, 3, 1]", "::-2", "-1"],
    (2, 3): ["0", "1", "0, 2", ":, 1", ":, 1:", "1, ::2", "[1, 0, 1]", ":, [0, 0, 2]", "..., 0",
             "::-1, 1:", "[0, 1], [2, 2]"],
    (3, 1): ["0", ":, 0", "1:, :", "[2, 0, 2]", "::2", "-1, 0"],
    (3, 3): ["0", ":, 1", "1:, ::2", "[0, 2, 0]", "[0, 1, 2], [2, 1, 2]", "::-1, 0", "..., 1:"],
    (2,): ["0", "1", ":", "[1, 1]"],
    (5,): ["0", "2:", "[4, 4, 0]"],
    (1, 3): ["0", ":, 1", "0, [2, 0, 2]"],
    (2, 1): ["0", ":, 0", "[1, 1]"],
}
_WRITE_CANDIDATES = {
    1: ["0", "-1", "1:", ":2", "::2", "::-1", "[0, 1, 0]", "1::2", "[1, 1]"],
    2: ["0", "-1", ":, 0", "..., -1", "1:, ::2", "::-1, 0", "[0, 1, 0]", ":, [0, 0]", "0, [2, 0, 2]"],
}


def write_indices(shape):
    if shape not in WRITE_INDICES:
        opts = [i for i in _WRITE_CANDIDATES.get(len(shape), []) if slot_shape(shape, i) is not None]
        WRITE_INDICES[shape] = opts or ["..."]
    return WRITE_INDICES[shape]


# augmented assignment with duplicate fancy indices (NumPy applies the last, not both)
AUG_DUP = {(3,): ["[0, 0]", "[1, 2, 1]"], (4,): ["[0, 3, 0]"], (2, 3): ["[1, 1]"]}
for _s in list(WRITE_INDICES):
    for _i in WRITE_INDICES[_s]:
        assert slot_shape(_s, _i) is not None, (_s, _i)


def generate(ch, max_stmts=8) -> Program:
    seed = ch.int(0, 2 ** 31 - 1)
    return Gen(ch, max_stmts).program(seed)


# -------------------------------------------------------------------------------------------------
# arguments
# -------------------------------------------------------------------------------------------------


def make_args(prog: Program):
    rng = np.random.default_rng(prog.arg_seed)
    args = []
    for s, k in zip(prog.arg_shapes, prog.arg_kinds):
        if s == ():
            x = float(rng.uniform(-1.0, 1.0))
            args.append(np.float64(x) if k == "np64" else x)
            continue
        x = rng.uniform(-1.0, 1.0, size=s)
        if k == "F" and "fortran_copyto_iter" not in AVOID:
            x = np.asfortranarray(x)
        elif k == "strided":
            big = np.zeros(s[:-1] + (2 * s[-1],))
            big[..., ::2] = x
            x = big[..., ::2]
        args.append(x)
    return args


def copy_args(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


# -------------------------------------------------------------------------------------------------
# loading and checking
# -------------------------------------------------------------------------------------------------

_TMP = None


def load(source: str, tag: str = "fz"):
    """Write source to a real file and import it; returns the module."""
    global _TMP
    if _TMP is None:
        _TMP = tempfile.mkdtemp(prefix="adjoint_fuzz_")
    name = f"{tag}_{uuid.uuid4().hex[:12]}"
    path = os.path.join(_TMP, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def unload(mod):
    sys.modules.pop(mod.__name__, None)
    try:
        os.remove(mod.__file__)
    except OSError:
        pass


@dataclasses.dataclass
class Outcome:
    status: str                 # 'pass', 'expected_error', or a failure kind
    detail: str = ""
    modes: dict = dataclasses.field(default_factory=dict)  # entry point -> pass/refused/wrong/crash/skipped

    @property
    def ok(self):
        return self.status in ("pass", "expected_error")


def fd_grad(f, args, i, eps=1e-6):
    """Central differences of f w.r.t. every element of argument i (args are copied per call)."""
    x = args[i]
    if not isinstance(x, np.ndarray):
        def at(t):
            a = copy_args(args)
            a[i] = type(x)(x + t) if isinstance(x, np.float64) else float(x + t)
            return float(f(*a))
        return (at(eps) - at(-eps)) / (2 * eps)
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        def at(t):
            a = copy_args(args)
            y = a[i]
            y[j] = x[j] + t
            return float(f(*a))
        g[j] = (at(eps) - at(-eps)) / (2 * eps)
    return g


def _close(ad, fd, scale):
    ad = np.asarray(ad, dtype=float)
    fd = np.asarray(fd, dtype=float)
    return bool(np.all(np.abs(ad - fd) <= 1e-5 * np.abs(fd) + 1e-6 * scale))


def _same(a, b):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-9, atol=1e-11)


def _arrays(v):
    if isinstance(v, np.ndarray):
        return [v]
    if isinstance(v, (tuple, list)):
        return [a for x in v for a in _arrays(x)]
    return []


def check_module(mod, prog: Program, single_wrt=None, modes=None) -> Outcome:
    """The differential checks on one loaded program: the classic ones (`value_and_grad` with
    wrt=all, the cached second call, a single-argument `grad`), then every entry point in `modes`
    (default all, `entry.MODES`). `Outcome.modes` has each mode's status."""
    from adjoint_compiler import AdjointCompilerError, MutationError, grad, value_and_grad

    f = mod.f
    args = make_args(prog)
    n = len(args)
    try:
        expected = f(*copy_args(args))
    except Exception:
        return Outcome("generator_error", traceback.format_exc(limit=3))
    if not np.isfinite(expected) or np.ndim(expected) != 0:
        return Outcome("generator_error", f"primal value {expected!r}")

    before = [_copy.deepcopy(a) for a in args]
    wrt = tuple(range(n))
    scale = max(1.0, abs(float(expected)))
    subject = entry.Subject(f, args, wrt, expected, scale, fd=lambda k, eps=1e-6: fd_grad(f, args, k, eps),
                            inplace=lambda: _inplace_variant(prog, expected),
                            decorated=lambda: _decorated_variant(prog), seed=prog.arg_seed)
    try:
        value, grads = value_and_grad(f, wrt=wrt)(*args)
    except MutationError as exc:
        # `v = x[1:]` then a write into x, then v used: NumPy views, documented as rejected
        if "is a view of" in str(exc):
            return entry.finish(Outcome("expected_error", f"{type(exc).__name__}: {exc}"), subject, modes)
        return entry.finish(Outcome("rejected", f"{type(exc).__name__}: {exc}"), subject, modes)
    except AdjointCompilerError as exc:
        return entry.finish(Outcome("rejected", f"{type(exc).__name__}: {exc}"), subject, modes)
    except Exception:
        return entry.finish(Outcome("internal_error", traceback.format_exc()), subject, modes)

    # inputs untouched (arguments f writes into are copied on entry)
    for k, (b, a) in enumerate(zip(before, args)):
        if isinstance(b, np.ndarray):
            if not np.array_equal(a, b):
                return Outcome("input_modified", f"argument {k} changed: {b!r} -> {a!r}")
        elif a != b:
            return Outcome("input_modified", f"argument {k} changed")

    if not _same(value, expected):
        return Outcome("value_mismatch", f"value_and_grad value {value!r} != direct {expected!r}")

    # structure and aliasing
    if not isinstance(grads, tuple) or len(grads) != n:
        return Outcome("structure", f"expected a tuple of {n} gradients, got {grads!r}")
    seen = []
    for k, (g, a) in enumerate(zip(grads, args)):
        if isinstance(a, np.ndarray):
            if not isinstance(g, np.ndarray) or g.shape != a.shape or g.dtype.kind != "f":
                return Outcome("structure", f"gradient {k}: {g!r} for an array of shape {a.shape}")
            for other in [x for x in args if isinstance(x, np.ndarray)] + seen:
                if np.shares_memory(g, other):
                    return Outcome("alias", f"gradient {k} shares memory with an input or gradient")
            seen.append(g)
        elif type(g) is not type(a):
            return Outcome("structure", f"gradient {k}: {g!r} ({type(g).__name__}) for a {type(a).__name__}")

    # finite differences
    for k in range(n):
        fd = subject.fd_of(k)
        if not _close(grads[k], fd, scale):
            # guard against an FD artifact (a branch or mask threshold crossed inside +-eps):
            # accept if FD at other step sizes agrees
            alt = [fd_grad(f, args, k, eps) for eps in (1e-5, 1e-7)]
            if not any(_close(grads[k], a, scale) for a in alt):
                return Outcome("grad_mismatch",
                               f"argument {k}:\n  compiled: {grads[k]!r}\n  finite differences: {fd!r}")

    # the compiled function again (cached path) and a single-argument gradient
    try:
        value2, grads2 = value_and_grad(f, wrt=wrt)(*args)
    except Exception:
        return Outcome("internal_error", "second call: " + traceback.format_exc())
    if not _same(value2, value) or not all(_same(a, b) for a, b in zip(grads, grads2)):
        return Outcome("nondeterministic", f"second call differs: {grads2!r} vs {grads!r}")
    k = (prog.arg_seed % n) if single_wrt is None else single_wrt
    try:
        gk = grad(f, wrt=k)(*args)
    except AdjointCompilerError as exc:
        return entry.finish(Outcome("rejected", f"grad(wrt={k}): {type(exc).__name__}: {exc}"), subject, modes)
    except Exception:
        return entry.finish(Outcome("internal_error", f"grad(wrt={k}): " + traceback.format_exc()), subject, modes)
    if not _same(gk, grads[k]):
        return Outcome("wrt_mismatch", f"grad(wrt={k}) = {gk!r} but wrt=all gives {grads[k]!r}")
    return entry.finish(Outcome("pass"), subject, modes)


def check_program(prog: Program, modes=None) -> Outcome:
    mod = load(prog.source)
    try:
        return check_module(mod, prog, modes=modes)
    finally:
        unload(mod)


def _inplace_variant(prog: Program, expected):
    """The program as an in-place function `f(res, a0, ...)` that writes its result into `res[0]`
    (entry_modes.inplace_variant): its outputs are exactly `res` and the arguments it writes into."""
    source, args = entry.inplace_variant(prog.source, "f", make_args(prog), expected)
    names = [f"a{k}" for k in range(len(args) - 1)]
    return source, args, [0] + sorted(names.index(n) + 1 for n in prog.written_args)


def _decorated_variant(prog: Program) -> str:
    """The program with `@differentiable` on f and on every helper (calls go through the wrapper)."""
    lines = prog.source.split("\n")
    out = ["from adjoint_compiler import differentiable"]
    for line in lines:
        if line.startswith("def "):
            out.append("@differentiable" if not line.startswith("def f(") else "@differentiable(wrt=0)")
        out.append(line)
    return "\n".join(out)


def report(prog: Program, out: Outcome) -> str:
    return (f"--- {out.status} (features: {', '.join(sorted(prog.features))}) ---\n"
            f"args: shapes={prog.arg_shapes} kinds={prog.arg_kinds} seed={prog.arg_seed}\n"
            f"{prog.source}\n{out.detail}\n")


# -------------------------------------------------------------------------------------------------
# minimization: drop statements / blocks / return terms while the failure kind stays the same
# -------------------------------------------------------------------------------------------------


def _blocks(lines):
    """(start, end) spans of each statement with its indented body, innermost too."""
    spans = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or not line.startswith("    ") or stripped.startswith("return") \
                or line.startswith("def "):
            continue
        ind = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > ind:
            j += 1
        spans.append((i, j))
    return spans


def _return_variants(lines):
    for i, line in enumerate(lines):
        if line.strip().startswith("return ") and " + " in line and line.startswith("    return"):
            head, expr = line.split("return ", 1)
            terms = _split_top(expr)
            for k in range(len(terms)):
                rest = terms[:k] + terms[k + 1:]
                if rest:
                    yield lines[:i] + [head + "return " + " + ".join(rest)] + lines[i + 1:]


def _split_top(expr):
    out, depth, cur = [], 0, ""
    k = 0
    while k < len(expr):
        ch = expr[k]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and expr.startswith(" + ", k):
            out.append(cur)
            cur = ""
            k += 3
            continue
        cur += ch
        k += 1
    out.append(cur)
    return out


def minimize(prog: Program, status: str, budget: int = 300) -> Program:
    def fails(src):
        p = dataclasses.replace(prog, source=src)
        try:
            return check_program(p).status == status
        except Exception:
            return False

    lines = prog.source.split("\n")
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        for cand in list(_return_variants(lines)):
            tries += 1
            if fails("\n".join(cand)):
                lines, changed = cand, True
                break
        if changed:
            continue
        for a, b in sorted(_blocks(lines), key=lambda s: s[0] - s[1]):
            cand = lines[:a] + lines[b:]
            # keep compound statements syntactically valid: a header needs a body
            tries += 1
            if tries > budget:
                break
            if fails("\n".join(cand)):
                lines, changed = cand, True
                break
    return dataclasses.replace(prog, source="\n".join(lines))

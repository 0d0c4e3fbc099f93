"""Family generators for the entry points (issue 17): early returns and in-place functions.

- `early_return`: `return` inside `if`/`elif`/`else`, inside `for` and `while` loops (nested too),
  in a helper the function calls, before statements that write into an array or that would fail
  if they ran; with a scalar result (every entry point) and with an array or tuple result (`vjp`,
  the pullback twice, the dumps, the in-place variant);
- `in_place`: ODE-style functions that write into their arguments in every spelling (`du[i] =`,
  `du[:] =`, `du[...] =`, `np.copyto`, `out=`, `du += ...`, `du[k] op= ...`, through a helper, in
  branches and loops, through an alias, after an early `return`), called from a function whose
  value reads the written array. `check_case`'s `inplace` mode then differentiates the function as
  in-place itself: its outputs are the arguments it writes into.

Every case must work (an early return and an in-place write are supported constructs), but one:
`du op= e` in a helper on an array its caller's name holds is refused (README, Limitations).
"""
from __future__ import annotations

import numpy as np
from families import Case, family

_REDUCE = ["np.sum({e})", "np.mean({e})", "np.sum({e} * {e})", "np.sum(np.sin({e}))", "np.max({e})"]
_ELEMENT = ["np.exp({e}) * {e}", "np.sin({e}) ** 3", "np.tanh({e}) * 2.0", "{e} * {e} + 1.0", "np.cos({e}) - {e}",
            "np.sqrt(1.5 + {e} ** 2)"]


def _arr(ch, shape, lo=-1.5, hi=1.5):
    return np.array([ch.float(lo, hi) for _ in range(int(np.prod(shape)))]).reshape(shape)


def _value(ch, scalar: bool, names=("x",)) -> str:
    name = ch.choice(list(names))
    e = ch.choice(_ELEMENT).format(e=name if name.isidentifier() else f"({name})")
    return ch.choice(_REDUCE).format(e=f"({e})") if scalar else e


def _cond(ch, name="x") -> str:
    left = ch.choice([f"np.sum({name})", f"{name}[0]", f"np.max({name})", f"np.mean({name} * {name})"])
    return f"{left} {ch.choice(['>', '<'])} {ch.float(-0.5, 0.5)}"


def _early(ch, scalar: bool, pair: bool = False) -> list:
    """The lines of `f(x, y)` (and of a helper it calls): returns at several depths, then a last
    return; with `pair`, f returns `(a number, the value)` on every path."""
    lines, helper = ["def f(x, y):"], []
    form = ch.choice(["if", "elif", "else", "for", "while", "nested", "helper", "after_write", "guard"])
    def v():
        return _value(ch, scalar, ("x", "y", "x * y"))
    if form == "if":
        lines += [f"    if {_cond(ch)}:", f"        return {v()}"]
    elif form == "elif":
        lines += [f"    if {_cond(ch)}:", f"        return {v()}", f"    elif {_cond(ch, 'y')}:",
                  "        z = y * 2.0", f"        return {_value(ch, scalar, ('z', 'x'))}"]
    elif form == "else":
        lines += [f"    if {_cond(ch)}:", "        t = x * 0.5", "    else:", f"        return {v()}",
                  "    x = t + y"]
    elif form == "for":
        n = ch.int(0, 3)
        lines += ["    s = 0.0 * x", f"    for i in range({n}):", "        s = s + np.sin(x + i)",
                  f"        if np.sum(s) > {ch.float(-1.0, 1.0)}:",
                  f"            return {_value(ch, scalar, ('s', 'y'))}", "    y = y + s"]
    elif form == "while":
        lines += ["    k = 0", "    t = x", f"    while k < {ch.int(1, 4)}:", "        t = np.tanh(t * 1.5 + y)",
                  "        k = k + 1", f"        if {_cond(ch, 't')}:", f"            return {_value(ch, scalar, ('t',))}",
                  "    x = t"]
    elif form == "nested":
        lines += [f"    if {_cond(ch)}:", f"        if {_cond(ch, 'y')}:", f"            return {v()}",
                  "        x = x * 0.5", f"        for j in range({ch.int(1, 2)}):",
                  f"            if np.sum(x) > {ch.float(-0.5, 0.5)} + j:", f"                return {v()}"]
    elif form == "helper":
        helper = ["def g(a, b):", f"    if {_cond(ch, 'a')}:", f"        return {_value(ch, scalar, ('a',))}",
                  f"    return {_value(ch, scalar, ('b', 'a * b'))}", ""]
        lines += [f"    x = g(x, y){' + 0.0' if ch.coin() else ''}" if not scalar else
                  f"    return g(x, y) + {_value(ch, True)}"]
        if not scalar:
            lines += [f"    if {_cond(ch)}:", "        return x"]
    elif form == "after_write":
        lines += ["    b = x.copy()", f"    b[0] = {ch.choice(['y[1]', 'np.sin(y[0])', '2.5'])}",
                  f"    if {_cond(ch, 'b')}:", f"        return {_value(ch, scalar, ('b', 'x'))}",
                  f"    b[{ch.choice(['1', '-1', ':2'])}] = y[0] * 3.0", "    x = b"]
    else:  # a read after the return that would fail where the return is taken
        lines += ["    n = len(x) if np.sum(x) > 100.0 else 0", "    if n == 0:", f"        return {v()}",
                  "    x = x[n + 5] * y"]
    lines.append(f"    return {_value(ch, scalar, ('x', 'y'))}")
    if pair:
        lines = [line.replace("return ", "return np.sum(y) * 2.0, ", 1) for line in lines]
    return helper + lines


@family("early_return")
def scalar_result(ch) -> Case:
    return Case("\n".join(_early(ch, True)) + "\n", [_arr(ch, (3,)), _arr(ch, (3,))], wrt=ch.int(0, 1),
                must_work=True)


@family("early_return")
def array_result(ch) -> Case:
    lines = _early(ch, False, pair=ch.coin(0.3))
    return Case("\n".join(lines) + "\n", [_arr(ch, (3,)), _arr(ch, (3,))], wrt=ch.int(0, 1), must_work=True)


# ---------------------------------------------------------------------------------------------
# in-place functions
# ---------------------------------------------------------------------------------------------

def _write(ch, target: str, n: int) -> str:
    """One write of a value made from `u` and `p` into `target` (shape (n,))."""
    i = ch.int(0, n - 1)
    value = ch.choice(["p[{i}] * u[{i}] - p[{j}] * u[{i}] * u[{j}]", "np.sin(u[{j}]) * p[{i}]",
                       "u[{i}] ** 2 + p[{j}]"]).format(i=i, j=(i + 1) % n)
    whole = ch.choice(["u * p[:{n}]", "np.tanh(u) + p[{i}]", "u[::-1] * u"]).format(n=n, i=i)
    return ch.choice([
        f"{target}[{i}] = {value}",
        f"{target}[:] = {whole}",
        f"{target}[...] = {whole}",
        f"np.copyto({target}, {whole})",
        f"np.multiply(u, p[:{n}], out={target})",
        f"{target}[{i}] += {value}",
        f"{target}[{i}] *= {ch.choice(['0.5', 'p[0]', 'np.cos(u[0])'])}",
        f"{target}[{ch.choice(['1:', ':2', '::2'])}] -= u[{i}]",
    ])


@family("in_place")
def rhs_in_every_spelling(ch) -> Case:
    n = 3
    body = [f"    {_write(ch, 'du', n)}" for _ in range(ch.int(1, 3))]
    form = ch.choice(["plain", "branch", "loop", "alias", "helper", "early", "augmented"])
    if form == "branch":
        body = [f"    if {_cond(ch, 'u')}:"] + ["    " + line for line in body] + ["    else:",
                                                                               f"        {_write(ch, 'du', n)}"]
    elif form == "loop":
        body = [f"    for k in range({ch.int(0, 2)}):"] + ["    " + line for line in body]
    elif form == "alias":
        body = ["    d = du"] + [line.replace("du", "d") for line in body]
    elif form == "helper":
        body = ["    fill(du, u, p)"]
    elif form == "early":
        body = body[:1] + [f"    if {_cond(ch, 'u')}:", "        return"] + body[1:] + [f"    {_write(ch, 'du', n)}"]
    elif form == "augmented":
        body = body + [f"    du {ch.choice(['+=', '-=', '*='])} {ch.choice(['u', 'p[0]', 'np.sin(u)'])}"]
    helper = (["def fill(out, u, p):"] + [f"    {_write(ch, 'out', n)}" for _ in range(ch.int(1, 2))] + [""]) \
        if form == "helper" else []
    rhs = ["def rhs(du, u, p):"] + body + [""]
    caller = ch.choice(["direct", "through"])
    if caller == "direct":  # f itself is the in-place function, and returns what it wrote
        lines = helper + ["def f(du, u, p):"] + body + [f"    return {ch.choice(['np.sum(du * u)', 'np.sum(du ** 2)'])}"]
        if form == "early":  # (an early bare `return` has no value for f: return one)
            lines = [line if line.strip() != "return" else "        return np.sum(du) * 2.0" for line in lines]
    else:
        lines = helper + rhs + ["def f(du, u, p):", "    rhs(du, u, p)",
                                f"    return np.sum(du * {ch.choice(['u', 'p[:3]', 'du'])})"]
    args = [_arr(ch, (n,)), _arr(ch, (n,), 0.2, 1.2), _arr(ch, (4,), 0.2, 1.2)]
    # (`du op= e` in a helper whose caller's name holds the same array is refused, documented)
    return Case("\n".join(lines) + "\n", args, wrt=ch.int(0, 2),
                must_work=not (form == "augmented" and caller == "through"))

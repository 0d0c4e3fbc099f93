"""Family generator: an expression that `normalize` lowers into statements (a comprehension, `and`
/ `or`, a chained comparison, a conditional expression, nested in one another) assigned to a name
it reads, as in `h = [v * 2 for v in h]`, `s = c and s * 3`, `y = 0 < y < 1`.

The lowering once built such a value in its target name, so the name was overwritten before the
expression had read it (a wrong value and gradient, or an IndexError). Python's result is what
counts: the gradient must match finite differences, or the program be refused at its line.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

_MAPS = ["{v} * 2.0", "np.sin({v})", "{v} ** 2", "{v} * {v} + 1.0", "np.tanh({v}) * 3.0"]


def _map(ch, v: str) -> str:
    return ch.choice(_MAPS).format(v=v)


def _cut(ch) -> str:
    return f"{ch.float(-1.2, 1.2):.3f}"


@family("expressions")
def self_target(ch) -> Case:
    """`s = <expression reading s>` for a list `s` (comprehensions, nested lists, a conditional
    choosing between a comprehension and `s`) or a number `s` (`and`, `or`, the old `c and a or
    b`, chained comparisons, conditionals), read into the loss with the other inputs."""
    n = ch.int(2, 4)
    kind = ch.choice(["list", "nested", "number", "number"])
    if kind == "list":
        start = ch.choice(["list(x)", "[v * 1.0 for v in x]", "[x[0], x[-1]]"])
        step = ch.choice([
            f"s = [{_map(ch, 'v')} for v in s]",
            f"s = [{_map(ch, 'v')} for v in s if v > {_cut(ch)}] + [x[0]]",
            f"s = [{_map(ch, 'v')} for v in s] if x[0] > {_cut(ch)} else s",
            f"s = [{_map(ch, 'w')} for w in s] + s",
            f"s = [a * b for a, b in zip(s, s[::-1])]",
        ])
        read = ch.choice(["sum(s)", "s[0] + s[-1] * 2.0", "np.sum(np.array(s) ** 2)", "sum(v * x[0] for v in s)"])
    elif kind == "nested":
        start = "[[x[0], x[1]], [x[-1], x[0] * 2.0]]"
        step = ch.choice([f"s = [[{_map(ch, 'v')} for v in row] for row in s]",
                          f"s = [row[::-1] for row in s] if x[1] > {_cut(ch)} else s"])
        read = ch.choice(["s[0][1] + s[1][0]", "sum(sum(row) for row in s)"])
    else:
        start = ch.choice(["x[1]", "x[0] * x[1]", "np.sum(x)"])
        cut = _cut(ch)
        step = ch.choice([
            f"s = (x[0] > {cut}) and {_map(ch, 's')}",
            f"s = (x[0] < {cut}) or {_map(ch, 's')}",
            f"s = s > {cut} and {_map(ch, 's')} or -s",
            f"s = {cut} < s < {cut} + 1.0",
            f"s = {_map(ch, 's')} if s > {cut} else s * 0.5",
            f"s = s if x[-1] > {cut} else (s < {cut} and s * 3.0)",
            f"s = sum({_map(ch, 'v')} for v in x) + s",
        ])
        read = ch.choice(["s * x[0]", "x[-1] * s + s", "s"])
    src = f"def f(x):\n    s = {start}\n    {step}\n    return {read}\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(-1.5, 1.5, n)])


@family("expressions")
def gen_selection_by_comparison(ch) -> Case:
    """`np.where(<comparison>, a, b)` where the comparison may read the selected array and the
    other branch's number (a ReLU `np.where(a > 0, a, 0.0)`, a clip `np.where(a < 1, a, 1)`, either
    way round, strict or not, the other number, the other array, the branches swapped, the array
    written between the comparison and the selection) (`clamps` computes some as np.fmax /
    np.fmin: the values and np.where's gradient must stay; test_clamps checks float32 and ints)."""
    c = ch.choice(["0", "0.0", "0.5", "-1.0", "1"])
    other = ch.choice([c, c, "0.25", "b"])
    test = ch.choice(["{a} > {c}", "{c} < {a}", "{a} < {c}", "{c} > {a}", "{a} >= {c}", "{a} <= {c}"])
    branches = ch.choice(["{a}, {o}", "{a}, {o}", "{o}, {a}"])
    source = ch.choice(["x", "np.sin(x) * 2.0", "x * w", "x[::-1]"])
    lines = ["def f(x, w):", "    b = w * 0.5", f"    a = {source}", "    m = " + test.format(a="a", c=c)]
    if ch.coin(0.2):
        lines.append("    a[0] = 3.0" if source != "x" else "    a = a * 1.0")
    lines.append("    h = np.where(m, " + branches.format(a="a", o=other) + ")")
    lines.append(f"    return np.sum({ch.choice(['h ** 2', 'h * w', 'np.tanh(h)', 'h'])})")
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    x = rng.choice([-1.3, -0.6, 0.2, 0.8, 1.4, 0.35, -0.2], 5) + rng.uniform(-0.05, 0.05, 5)  # (no ties)
    w = rng.uniform(0.5, 1.5, 5)
    return Case("\n".join(lines) + "\n", [x, w], wrt=ch.choice([0, 1]))

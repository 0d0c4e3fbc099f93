"""Family generators: loops whose trips take branches (on the data, on the trip count), where the
branches write into arrays, rebind names to other arrays, `continue` or `break`, and the names an
`if` merges are read later in the trip, in later trips and after the loop.

The backward pass must give every name, in every reversed trip, the value that trip saw: an
`if`'s output (its own name for a value a branch made or wrote into), a carried array one branch
rebinds and the other writes into, a value bound before a `continue`.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

_COND = ["s > {c}", "u[0] > {c}", "i % 2 == 0", "np.sum(u) > {c} * {n}", "i > 0", "t[1] < {c}"]
_MAKE = ["np.sin(u) * w", "u * {c} + w", "u[::-1] * w", "np.exp(-u) + {c}", "u.copy()", "u ** 2 * {c}"]
_WRITE = ["t[0] = {v}", "t[-1] *= {c}", "t[1:3] = {v}", "t[i % {n}] = {v}", "u[0] = {v}", "u[1:] += {c} * t[1:]"]
_VALUE = ["{c}", "u[1] * {c}", "np.cos(w[0])", "t[0] * t[1]"]
_REBIND = ["t = t * u", "t = np.tanh(t)", "u = u * {c} + t", "t = w * u", "u = np.sin(u)"]


def _c(ch) -> str:
    return f"{ch.float(0.1, 0.9):.3f}"


def _branch_body(ch, n, depth=0) -> list:
    """Statements of one branch: writes, rebinds, maybe a nested if."""
    out = []
    for _ in range(ch.int(1, 2)):
        kind = ch.choice(["write", "write", "rebind", "nested" if depth == 0 else "write"])
        if kind == "write":
            out.append(ch.choice(_WRITE).format(v=ch.choice(_VALUE).format(c=_c(ch)), c=_c(ch), n=n))
        elif kind == "rebind":
            out.append(ch.choice(_REBIND).format(c=_c(ch)))
        else:
            out.append(f"if {ch.choice(_COND).format(c=_c(ch), n=n)}:")
            out += [f"    {b}" for b in _branch_body(ch, n, depth + 1)]
    return out


@family("branch_loops")
def gen_branches_in_a_loop(ch) -> Case:
    n = 4
    lines = ["def f(u0, w):", "    u = u0.copy()", "    s = 0.0", f"    for i in range({ch.int(1, 4)}):"]
    body = [f"t = {ch.choice(_MAKE).format(c=_c(ch))}"]
    for _ in range(ch.int(1, 3)):
        form = ch.choice(["if", "ifelse", "ifelse", "continue", "break", "pick"])
        cond = ch.choice(_COND).format(c=_c(ch), n=n)
        if form == "if":
            body.append(f"if {cond}:")
            body += [f"    {b}" for b in _branch_body(ch, n)]
        elif form == "ifelse":
            body.append(f"if {cond}:")
            body += [f"    {b}" for b in _branch_body(ch, n)]
            body.append("else:")
            body += [f"    {b}" for b in _branch_body(ch, n)]
        elif form in ("continue", "break"):
            body.append(f"s = s + np.sum(t * u) * {_c(ch)}")
            body.append(f"if {cond}:")
            body.append(f"    {form}")
        else:  # a name bound to one of two arrays
            body.append(f"a = t if {cond} else u")
            body.append(f"s = s + np.sum(a * w) * {_c(ch)}")
        if ch.coin(0.5):
            body.append(ch.choice([f"s = s + np.sum(t * t) * {_c(ch)}", f"s = s + t[{ch.int(0, n - 1)}] * u[0]",
                                   f"s = s + np.dot(t, u) * {_c(ch)}"]))
    body.append(ch.choice([f"u = u + {_c(ch)} * t", f"u = u * np.cos({_c(ch)} * t)", "u = 0.5 * (u + t)"]))
    lines += [f"        {b}" for b in body]
    lines.append(ch.choice(["    return np.sum(u * u) + s", "    return np.sum(u * t) + s",
                            "    return np.sum(np.sin(u)) + s * s"]))
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    args = [rng.uniform(0.2, 1.5, n), rng.uniform(0.2, 1.5, n)]
    return Case("\n".join(lines) + "\n", args, wrt=ch.choice([0, 1]))


@family("branch_loops")
def gen_branches_in_nested_loops(ch) -> Case:
    """An inner loop (`for` over a range or the trip count, or a `while`) whose branches write into
    the outer trip's temporary and the carried state, with views taken in the branches."""
    n = 4
    inner = ch.choice([f"for j in range({ch.int(1, 3)}):", "for j in range(i + 1):", "j = 0\n        while j < 2:"])
    lines = ["def f(u0, w):", "    u = u0.copy()", "    s = 0.0", f"    for i in range({ch.int(1, 3)}):",
             f"        t = {ch.choice(_MAKE).format(c=_c(ch))}"]
    lines += [f"        {b}" for b in inner.split("\n        ")]
    body = []
    for _ in range(ch.int(1, 2)):
        cond = ch.choice(_COND).format(c=_c(ch), n=n)
        branch = _branch_body(ch, n, depth=1)
        if ch.coin(0.3):
            branch = [f"v = {ch.choice(['t', 'u'])}[{ch.choice(['1:', ':2', '::-1'])}]",
                      f"v[0] = {ch.choice(_VALUE).format(c=_c(ch))}"] + branch
        body += [f"if {cond}:"] + [f"    {b}" for b in branch]
        if ch.coin(0.5):
            body += ["else:"] + [f"    {b}" for b in _branch_body(ch, n, depth=1)]
        if ch.coin(0.6):
            body.append(ch.choice([f"s = s + np.sum(t * w) * {_c(ch)}", f"s = s + t[j % 4] * u[0]",
                                   f"s = s + np.dot(u, w) * {_c(ch)}"]))
    if inner.startswith("j = 0"):
        body.append("j = j + 1")
    lines += [f"            {b}" for b in body]
    lines.append(f"        u = {ch.choice(['u + 0.3 * t', 'u * np.cos(0.2 * t)', '0.5 * (u + t)'])}")
    lines.append(ch.choice(["    return np.sum(u * u) + s", "    return np.sum(u * t) + s"]))
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case("\n".join(lines) + "\n", [rng.uniform(0.2, 1.5, n), rng.uniform(0.2, 1.5, n)],
                wrt=ch.choice([0, 1]))

"""Family generators: an array made anew on each trip of a loop, written into at some slots, and
read by the rest of the trip (and by later trips, through what it was combined into).

The backward pass restores a written array's overwritten slots only where a later adjoint reads
its values before the tape gives the name the previous trip's array (`simplify.prune_restores`).
These programs read the temporary before and after its writes, through views taken before or
after them, through other names that may hold the same array (an alias, the carried state itself
when the "temporary" is not new), in branches, and after the loop, so that a restore dropped
where it was needed shows as a wrong gradient.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

# how the temporary is made from the carried state `u` (all but the last two are new arrays)
_MADE = ["u * {c}", "np.sin(u) + {c}", "u[::-1] - u * {c}", "np.roll(u, 1) - 2.0 * u + np.roll(u, -1)",
         "u.copy()", "np.cumsum(u) * {c}", "np.tanh(u) * w", "u + w * {c}", "np.zeros_like(u) + u ** 2",
         "u", "u[:]"]
# a write into it: the slots and the value written
_WRITE = ["t[0] = {v}", "t[-1] = {v}", "t[1:3] = {v}", "t[i % {n}] = {v}", "t[::2] = {v}", "t[t > {c}] = {c}",
          "t[0] += {v}", "t[1:] *= {c}"]
_VALUE = ["0.0", "{c}", "u[0] * {c}", "np.sin(w[1])", "t[1] * {c}"]
# how the rest of the trip reads it
_READ = ["u = u + {c} * t", "u = u * np.cos(t * {c})", "u = u + t[::-1] * {c}", "u = 0.5 * (u + t)",
         "s = s + np.sum(t * t)\n        u = u + {c} * t", "u = u - {c} * t * u"]


def _c(ch) -> str:
    return f"{ch.float(0.1, 0.9):.3f}"


@family("temporaries")
def gen_temporary_written_per_trip(ch) -> Case:
    n = 4
    trips = ch.int(1, 4)
    lines = ["def f(u0, w):", "    u = u0.copy()" if ch.coin(0.8) else "    u = u0 * 1.0", "    s = 0.0",
             f"    for i in range({trips}):"]
    body = [f"t = {ch.choice(_MADE).format(c=_c(ch))}"]
    if ch.coin(0.3):  # read before the writes
        body.append(f"s = s + np.sum(t * {_c(ch)}) * w[0]")
    view = ch.choice([None, "before", "after"])
    if view == "before":
        body.append(f"v = t[{ch.choice(['1:', ':2', '::-1', '...'])}]")
    for _ in range(ch.int(1, 3)):
        write = ch.choice(_WRITE).format(v=ch.choice(_VALUE).format(c=_c(ch)), c=_c(ch), n=n)
        if ch.coin(0.25):
            body.append(f"if s > {ch.float(-1, 1):.2f}:")
            body.append(f"    {write}")
        else:
            body.append(write)
    if view == "after":
        body.append(f"v = t[{ch.choice(['1:', ':2', '::-1'])}]")
    if view is not None:
        body.append(f"s = s + np.sum(v * w[:v.shape[0]] if v.ndim else v * w[0])")
    if ch.coin(0.3):
        body.append("kept = t")
    body += ch.choice(_READ).format(c=_c(ch)).split("\n        ")
    if ch.coin(0.3):  # read after the read of the rest of the trip
        body.append(f"s = s + t[{ch.int(0, n - 1)}] * {_c(ch)}")
    lines += [f"        {b}" for b in body]
    tail = ["    return np.sum(u * u) + s"]
    if any(b == "kept = t" for b in body) and ch.coin():
        tail = ["    return np.sum(u * u) + s + np.sum(kept * w)"]
    lines += tail
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    args = [rng.uniform(0.2, 1.5, n), rng.uniform(0.2, 1.5, n)]
    return Case("\n".join(lines) + "\n", args, wrt=ch.choice([0, 1]))


@family("temporaries")
def gen_temporary_written_in_an_inner_loop(ch) -> Case:
    """The temporary of an outer trip written by an inner loop (its trips' own names for it: loop
    values holding one array), under branches, and read by both loops."""
    n = 4
    inner = ch.choice([f"for j in range({ch.int(1, 3)}):", "for j in range(i + 1):", "j = 0\n        while j < 2:"])
    lines = ["def f(u0, w):", "    u = u0.copy()", "    s = 0.0", f"    for i in range({ch.int(1, 3)}):",
             f"        t = {ch.choice(_MADE[:-2]).format(c=_c(ch))}"]
    lines += [f"        {b}" for b in inner.split("\n        ")]
    body = []
    for _ in range(ch.int(1, 2)):
        write = ch.choice(["t[j % 4] = {v}", "t[j % 4] += {v}", "t[(j + 1) % 4] *= {c}", "t[1:3] = {v}",
                           "t[0] = t[1] * {c}"]).format(v=ch.choice(_VALUE).format(c=_c(ch)), c=_c(ch))
        if ch.coin(0.3):
            body += [f"if s > {ch.float(-1, 1):.2f}:", f"    {write}"]
        else:
            body.append(write)
        if ch.coin(0.5):
            body.append(ch.choice([f"s = s + t[j % 4] * {_c(ch)}", f"s = s + np.sum(t * w) * {_c(ch)}"]))
    if inner.startswith("j = 0"):
        body.append("j = j + 1")
    lines += [f"            {b}" for b in body]
    lines += [f"        {b}" for b in ch.choice(_READ).format(c=_c(ch)).split("\n        ")]
    lines.append("    return np.sum(u * u) + s")
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case("\n".join(lines) + "\n", [rng.uniform(0.2, 1.5, n), rng.uniform(0.2, 1.5, n)],
                wrt=ch.choice([0, 1]))

"""Family 12 (shapes): one function called with arrays of the same ranks in two patterns of axis
lengths (equal lengths, lengths 1 that broadcast, lengths that happen to coincide).

The compiler specializes a gradient to the pattern of axis lengths of its arguments
(`shapes.dims_of`: which axes have equal lengths, which have length 1), where that tells it
nothing is broadcast. The second gradient, at arguments of another pattern and the same kinds,
must not reuse code that holds only for the first: every case is checked against finite
differences at both, through broadcasting, `@`, reductions, transposes, indexing and loops that
carry a value whose shape may change in the first iteration.
"""
from __future__ import annotations

import numpy as np
from families import Case, family


def _lengths(ch) -> dict:
    """Axis lengths n, m, k: 1, 2 or 3 each, often equal to one another."""
    n = ch.int(1, 3)
    m = n if ch.coin() else ch.int(1, 3)
    k = ch.choice([n, m, ch.int(1, 3)])
    return {"n": n, "m": m, "k": k, "1": 1, "3": 3}


def _array(ch, spec: str, lengths: dict):
    rng = np.random.default_rng(ch.int(0, 10_000))
    return rng.uniform(0.3, 1.2, size=tuple(lengths[c] for c in spec))


ELEMENTWISE = ["np.tanh(a * b + c)", "(a - b) ** 2 * c", "np.sin(a) * b + c * a", "a * b / (1.0 + c * c)",
               "np.exp(-(a + b) * c)"]


def _elementwise(ch):
    """Two 2-d arrays and a vector broadcast against each other."""
    specs = [ch.choice(["nm", "n1", "1m"]), ch.choice(["nm", "n1", "1m", "nm"]), ch.choice(["m", "1"])]
    return f"def f(a, b, c):\n    u = {ch.choice(ELEMENTWISE)}\n    return np.sum(u * u)\n", specs


def _matmul(ch):
    bias = ch.choice(["m", "nm", "1m", "n1"])
    spec = ["nk", "km", bias]
    body = ch.choice(["np.tanh(a @ W + c)", "(a @ W - c) ** 2", "np.sin(c + a @ W) * (a @ W)"])
    return f"def f(a, W, c):\n    u = {body}\n    return np.sum(u)\n", spec


def _loop(ch):
    h0 = ch.choice(["nm", "1m", "m"])
    spec = ["3nk", "km", "mm", h0]
    update = ch.choice(["np.tanh(x[t] @ W + h @ U)", "np.tanh(x[t] @ W) + 0.5 * np.sin(h @ U)",
                        "h * 0.5 + np.tanh(x[t] @ W + h @ U)"])
    loss = ch.choice(["np.sum(h * h)", "np.sum(np.mean((h - 0.5) ** 2, axis=0))"])
    src = (f"def f(x, W, U, h0):\n    h = h0\n    s = 0.0\n    for t in range(x.shape[0]):\n"
           f"        h = {update}\n        s = s + np.sum(h)\n    return {loss} + 0.1 * s\n")
    return src, spec


def _reduce(ch):
    axis, keep = ch.choice([0, 1, -1]), ch.coin()
    spec = ["nm", ch.choice(["mn", "1n", "m1", "nm"] if keep else ["mn", "1n", "m1"])]
    src = (f"def f(a, b):\n    r = np.mean(a, axis={axis}, keepdims={keep})\n"
           f"    return np.sum(np.sin(r * b.T)) + np.sum(a.T * b)\n")
    return src, spec


def _indexed(ch):
    spec = ["3nm", ch.choice(["m", "1"]), ch.choice(["nm", "1m", "n1"])]
    src = ("def f(x, y, z):\n    u = x[1] * y + x[0] ** 2\n    v = np.cos(x[2] - z) * u\n"
           "    return np.sum(v) + np.sum(x[0].T @ z)\n")
    return src, spec


SHAPES = [_elementwise, _matmul, _loop, _reduce, _indexed]


def _fits(src: str, args) -> bool:
    namespace = {"np": np}
    exec(src, namespace)
    try:
        with np.errstate(all="ignore"):
            namespace["f"](*args)
    except ValueError:  # these lengths do not broadcast (or multiply): a program NumPy refuses
        return False
    return True


@family("shapes")
def gen_two_patterns(ch) -> Case:
    src, spec = ch.choice(SHAPES)(ch)
    patterns = []
    while len(patterns) < 2:
        lengths = _lengths(ch)
        args = [_array(ch, s, lengths) for s in spec]
        if _fits(src, args):
            patterns.append(args)
    return Case(src, patterns[0], must_work=True, then_args=patterns[1])

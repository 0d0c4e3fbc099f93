"""Family generators: conversions (`np.array`, `np.asarray`, casts, list displays), arrays built
from lists and read with every kind of index, and `np.triu`/`np.tril` of every rank.

`gen_int_arrays` passes an integer scalar `k` (and a float array) through the conversions that keep
its value (`np.array`, `np.asarray`, `np.asanyarray`, `np.float64`, `float`, list and tuple
displays of integer items, `.astype(float)`): the gradient passes, as through `k * 1.0`. (The
finite differences perturb `k` as a float, so only spellings whose value is smooth in a float `k`
are written here; integer-to-integer casts of integer arguments, `np.int64(k)` and `n.astype(int)`,
are checked in tests/rules/test_shape.py against hand-computed gradients.)
`gen_float_to_int` casts floats to integers (`x.astype(int)`, `np.array(x, dtype=int)`,
`np.int64(x[0])`, ...): piecewise constant, no gradient through the cast.
`gen_built_then_indexed` builds a matrix with `np.array` / `np.stack` / `np.vstack` of a list of
arrays and reads it with basic, multi-axis, fancy, boolean-mask, negative and Ellipsis indices.
`gen_triangles` takes `np.triu` / `np.tril` with offsets of 1-D (broadcast to a square), 2-D and
stacked 3-D arrays.
"""
from __future__ import annotations

import numpy as np
from families import Case, family


def _vec(ch, shape, lo=0.3, hi=1.7):
    rng = np.random.default_rng(ch.int(0, 10_000))
    return rng.uniform(lo, hi, size=shape)


# conversions of an integer scalar `k` whose value is smooth in k (a float k for the differences)
_INT_SCALAR = [
    "np.array([1, 2, k])", "np.array([k, k * 2, 3])", "np.asarray(k)", "np.asanyarray(k)", "np.array(k)",
    "np.float64(k)", "float(k)", "np.array([[k, 1], [2, k]])", "np.array([k, 1.5])", "np.asarray([k, 3])",
    "np.array((k, 2))", "np.array(k, dtype=float)", "np.array([k, 2], ndmin=2)",
    "np.array([k, 2]).astype(float)", "np.asarray([2, k], dtype=np.float64)", "np.array([k, 2]) * 1.0",
    "np.asarray(np.array([k, 4]))", "np.array(np.asarray(k) + 1)", "np.array([k])[0]",
    "np.array([[k, 2, 3]])[0, :]", "np.array([k, k]) + x[:2]", "np.asanyarray([x[0], k])",
]
_USE = ["np.sum({e} * 2.0)", "np.sum({e} ** 2)", "np.sum(np.sin({e}))", "np.sum({e}) * x[0]",
        "np.sum({e} * 1.5) + np.sum(x ** 2)"]


@family("conversions")
def gen_int_arrays(ch) -> Case:
    k = ch.int(-3, 4)
    lines = ["def f(k, x):", "    total = 0.0"]
    for _ in range(ch.int(1, 3)):
        lines.append(f"    total = total + {ch.choice(_USE).format(e='(' + ch.choice(_INT_SCALAR) + ')')}")
    lines.append("    return total")
    return Case("\n".join(lines) + "\n", [k, _vec(ch, 3)], wrt=ch.choice([0, 0, 1]), must_work=True)


# casts of floats to integers or booleans: piecewise constant, no gradient through them
_FLOAT_TO_INT = [
    "x.astype(int)", "x.astype(np.int64)", "x.astype('int32')", "np.array(x, dtype=int)",
    "np.asarray(x, dtype=np.int32)", "np.asanyarray(x, dtype=np.int16)", "np.ascontiguousarray(x, dtype=int)",
    "np.array([x[0], x[1]], dtype=int)", "np.array([x[0], 2], dtype=np.int64)", "np.int64(x[0])",
    "np.int32(x[1])", "np.array(x * 2.0, dtype=np.uint8)", "(x * 3.0).astype(int)", "x.astype(bool)",
    "np.array(x, dtype=bool)", "np.array(x.astype(int))", "np.asarray(x.astype(np.int64))",
]


@family("conversions")
def gen_float_to_int(ch) -> Case:
    n = ch.int(2, 4)
    x = _vec(ch, n, 0.1, 0.9) + ch.int(0, 3)  # (no entry within 0.1 of an integer)
    lines = ["def f(x):", "    total = np.sum(x ** 2)"]
    for _ in range(ch.int(1, 3)):
        e = ch.choice(_FLOAT_TO_INT)
        lines.append(f"    total = total + {ch.choice(_USE).format(e='(' + e + ')')}")
    lines.append("    return total")
    return Case("\n".join(lines) + "\n", [x], must_work=True)


# reads of a matrix A of `rows` rows and 3 columns ({mask}: a boolean list over the rows)
_INDICES = [
    "1", "-1", "0, 1", "-1, -2", ":, 1", ":, -1", "1, :", "1:, :2", "::-1, 1", "..., 1", "1, ...",
    "[0, 1], 1", "[0, 1], [2, 0]", "[1, 1, 0]", "[-1, 0], :", ":, [2, 0, 2]", "(0, 1), (1, 2)",
    "A > 1.0", "A[:, 0] > 0.5", "{mask}, :", "{mask}", "None, 1, :", "np.array([0, 1]), 1:",
    "[[0, 1], [1, 0]], 2", "..., [0, 2]", ":, np.array([True, False, True])", "-2:, ::-2",
]
_BUILD = [  # (the matrix, its rows)
    ("np.array([x, 2 * x])", 2), ("np.array([x, x ** 2, x + 1.0])", 3), ("np.array((x, np.sin(x)))", 2),
    ("np.stack([x, 2 * x])", 2), ("np.stack((x, x * 3.0, x - 1.0))", 3), ("np.vstack([x, np.cos(x)])", 2),
    ("np.vstack((x, x ** 2, 2 * x))", 3), ("np.asarray([x, x * x])", 2), ("np.array([list(x), list(2 * x)])", 2),
    ("np.array([x[0:3], x[1:4]])", 2), ("np.stack([x, x], axis=0)", 2), ("np.asanyarray([x, x + 2.0, x])", 3),
]


@family("conversions")
def gen_built_then_indexed(ch) -> Case:
    build, rows = ch.choice(_BUILD)
    n = 4 if "x[1:4]" in build else 3
    lines = ["def f(x):", f"    A = {build}", "    total = 0.0"]
    for _ in range(ch.int(1, 3)):
        mask = str([ch.coin() for _ in range(rows)])
        idx = ch.choice(_INDICES).format(mask=mask)
        read = ch.choice(["np.sum({e} ** 2)", "np.sum(np.sin({e}) * 2.0)", "np.sum({e}) * 1.5"])
        lines.append(f"    total = total + {read.format(e='A[' + idx + ']')}")
    if ch.coin(0.3):
        lines.append("    total = total + np.sum(A * A)")
    lines.append("    return total")
    return Case("\n".join(lines) + "\n", [_vec(ch, n)], must_work=True)


@family("conversions")
def gen_triangles(ch) -> Case:
    shape = ch.choice([(3,), (4,), (3, 3), (3, 4), (4, 2), (2, 3, 3), (2, 3, 4)])
    lines = ["def f(x):", "    total = 0.0"]
    for _ in range(ch.int(1, 3)):
        fn = ch.choice(["np.triu", "np.tril"])
        k = ch.choice(["", ", 0", ", 1", ", -1", ", 2", ", -2", ", k=1", ", k=-1"])
        e = ch.choice([f"{fn}(x{k})", f"{fn}(x * 2.0{k})", f"{fn}(np.sin(x){k})"])
        read = ch.choice(["np.sum({e} ** 2)", "np.sum({e} * 3.0)", "np.sum({e} * w)", "np.sum({e}[..., 0])",
                          "np.sum({e}[-1])"])
        lines.append(f"    w = np.arange(1.0, 1.0 + {fn}(x{k}).size).reshape({fn}(x{k}).shape)")
        lines.append(f"    total = total + {read.format(e=e)}")
    lines.append("    return total")
    return Case("\n".join(lines) + "\n", [_vec(ch, shape, -1.2, 1.2)], must_work=True)

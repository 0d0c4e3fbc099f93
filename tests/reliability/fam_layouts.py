"""Family generator: an array argument in another memory layout (transposed: F order; reversed:
negative strides; every other row: gaps; or plain C order), reshaped or ravelled inside `f` and
written through the result. NumPy's `reshape`/`ravel` give a view or a copy by the strides, so
the write reaches the argument for some layouts only; the compiler's private copy of the argument
once had other strides (a copy for a view or the reverse: a wrong value and gradient)."""
from __future__ import annotations

import numpy as np
from families import Case, family


@family("layouts")
def argument_layouts(ch) -> Case:
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    rows, cols = ch.int(2, 3), ch.int(2, 4)
    layout = ch.choice(["C", "transposed", "reversed", "gapped"])
    if layout == "transposed":
        A = rng.uniform(0.5, 1.5, (cols, rows)).T
    elif layout == "reversed":
        A = rng.uniform(0.5, 1.5, (rows, cols))[:, ::-1]
    elif layout == "gapped":
        A = rng.uniform(0.5, 1.5, (2 * rows, cols))[::2]
    else:
        A = rng.uniform(0.5, 1.5, (rows, cols))
    flat = ch.choice(["A.reshape(-1)", "A.ravel()", "np.reshape(A, -1)", "A.reshape(A.shape[1], A.shape[0])",
                      "A.T.reshape(-1)", "np.ravel(A)"])
    c = ch.float(0.5, 1.5)
    write = ch.choice([f"B[0] *= s + {c}", f"B[:2] = B[:2] * s + {c}", "B += s", f"B[-1] = np.sin(B[-1]) * {c}"])
    read = ch.choice(["np.sum(A * W)", "np.sum(A ** 2) + np.sum(B * B)", "np.sum(np.sin(A) * W) + np.sum(B)"])
    src = f"""
def f(A, s):
    W = np.arange(A.size, dtype=float).reshape(A.shape) * 0.1 + 1.0
    B = {flat}
    {write}
    return {read}
"""
    return Case(src, [A, ch.float(0.5, 1.5)], wrt=ch.choice([0, 1]))

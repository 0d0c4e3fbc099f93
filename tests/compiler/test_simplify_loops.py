"""Adjoint arrays of loops: allocated once, updated in place across iterations (simplify's
ownership of adjoint arrays), checked on the generated source and against finite differences."""
from __future__ import annotations

import numpy as np

from adjoint_compiler import adjoint_source
from adjoint_compiler.testing import check_grads


def swapped(u0, k):
    u = u0.copy()
    v = u0.copy()
    for _ in range(3):
        v[1:] = u[1:] * k + u[:-1]
        u, v = v, u
    return np.sum(u * u) + np.sum(v)


def test_swapped_arrays_keep_their_adjoints_in_place():
    """The carried adjoints change hands at the swap: neither is copied nor rebuilt per iteration."""
    src = adjoint_source(swapped, args=(np.ones(4), 0.5))
    backward = src.split("for _ in reversed(")[1]
    assert "rt.overwritten_adjoint(" not in backward and "rt.zeros_like(" not in backward
    assert "] += " in backward and " = u_2_bar + " not in backward
    check_grads(swapped, np.array([0.5, -1.0, 2.0, 0.3]), 0.7, wrt=(0, 1))


def growing(x, W, U, h0):
    h = h0
    for t in range(x.shape[0]):
        h = h * 0.5 + np.tanh(x[t] @ W + h @ U)
    return np.sum((h - 0.5) ** 2)


def test_a_shape_read_in_a_loop_is_of_that_iteration():
    """h0 is a vector and h a matrix after the first step: `h * 0.5` has h's shape in each
    iteration, not the shape of `h - 0.5` after the loop (fuzz family shapes, seed 9012: the
    adjoint read that one and crashed in the first iteration's)."""
    rng = np.random.default_rng(4)
    args = [rng.uniform(0.3, 1.2, s) for s in [(3, 2, 2), (2, 2), (2, 2), (2,)]]
    src = adjoint_source(growing, 0, args=args)
    line = next(ln for ln in src.splitlines() if ln.strip().startswith("h_times_c_bar = "))
    assert line.strip().endswith(", h)"), line  # (h of this iteration, popped)
    check_grads(growing, *args, wrt=(0, 1, 2, 3))

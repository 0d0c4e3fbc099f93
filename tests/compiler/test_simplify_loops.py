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

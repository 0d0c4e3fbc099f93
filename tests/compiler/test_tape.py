"""Tests of `tape` on the generated source: what a reversed loop saves, and what it gets back
without saving (a carried value, a cheap scalar recomputed from restored values)."""
from __future__ import annotations

import numpy as np

from adjoint_compiler import adjoint_source
from adjoint_compiler.testing import check_grads


def squares_through_a_view(x):
    y = x.copy()
    v = y[:2]
    for i in range(2):
        v[i] = v[i] ** 2
    return np.sum(y)


def scaled_rows(x):
    total = 0.0
    for i in range(x.shape[0]):
        s = x[i] * 2.0
        total = total + np.sin(s)
    return total


def test_an_entry_of_a_view_of_a_written_array_is_saved_not_read_again():
    """`v[i]` read again in the backward pass would see the later trips' writes into `y`."""
    x = np.array([0.3, -1.2, 0.7])
    src = adjoint_source(squares_through_a_view, 0, (x,))
    assert "v_i_stack.append(v_i)" in src and src.count("v_i = v_2[i]") == 1
    check_grads(squares_through_a_view, x)


def test_a_cheap_scalar_of_an_unwritten_array_is_recomputed():
    x = np.array([0.3, -1.2, 0.7])
    src = adjoint_source(scaled_rows, 0, (x,))
    assert "s_stack" not in src and src.count("s = x_i * 2.0") == 2
    check_grads(scaled_rows, x)

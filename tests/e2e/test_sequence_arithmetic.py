"""A list or tuple in arithmetic: `seq * n` repeats it for an integer `n`, and is NumPy's
elementwise product for an array `n` (`np.sin(x) * x` of a list `x`); `seq + seq` joins. Before
the fix, the elementwise product took the repetition's gradient: a silently wrong number.
Checked against finite differences, in reverse and forward mode."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import grad, jvp
from adjoint_compiler.testing import check_grads


def sin_times_list(x):
    return np.sum(np.sin(x) * x)


def list_times_array(x):
    return np.sum(x * np.cos(x))


def repeated(x, n):
    return np.sum(np.array([x[0], x[1] * 2.0] * n) ** 2)


def repeated_then_scaled(x):
    return np.sum(np.asarray([x[0] * 1.0] * 3) * np.arange(3.0))


@pytest.mark.parametrize("f", [sin_times_list, list_times_array])
@pytest.mark.parametrize("kind", [list, tuple])
def test_a_sequence_times_an_array_is_elementwise(f, kind):
    x = kind([0.4, -1.3, 2.0])
    g = grad(f)(x)
    assert type(g) is kind
    v = np.array(x)
    fd = [(f(kind(v + e)) - f(kind(v - e))) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    value, tangent = jvp(f, (x,), (kind([1.0, 0.0, 0.0]),))
    np.testing.assert_allclose(tangent, fd[0], rtol=1e-6)


def test_a_sequence_times_an_integer_repeats():
    assert grad(repeated)([1.0, 2.0], 3) == [6.0, 48.0]  # 3 copies of x0 ** 2 and of (2 x1) ** 2
    check_grads(repeated_then_scaled, np.array([0.5, 1.0]))

"""The clamps pass (stage "clamps"): `np.where(x > c, x, c)` calls `rt.where_above` / `rt.where_below`,
which give `np.where`'s values exactly; the gradient keeps `np.where`'s rule."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import grad, jvp
from adjoint_compiler import runtime as rt
from adjoint_compiler.pipeline import compile_gradient
from adjoint_compiler.testing import check_grads


def stage(f):
    return compile_gradient(f, (0,), ("r2",), stage="clamps")


def relu(a):
    return np.sum(np.where(a > 0, a, 0.0) ** 2)


def relu_mirrored(a):
    return np.sum(np.where(0.5 < a, a, 0.5) * a)


def clipped_above(a):
    return np.sum(np.where(a < 1.0, a, 1.0) * a)


def test_a_selection_by_its_own_comparison_is_a_clamp():
    assert "rt.where_above(a_gt_0, a, 0.0)" in stage(relu)
    assert "rt.where_above(" in stage(relu_mirrored)
    assert "rt.where_below(" in stage(clipped_above)


def inclusive(a):
    return np.sum(np.where(a >= 0, a, 0.0))


def another_array(a):
    b = a * 2.0
    return np.sum(np.where(a > 0, b, 0.0))


def another_number(a):
    return np.sum(np.where(a > 0, a, 1.0))


def negative_zero(a):
    return np.sum(np.where(a > 0, a, -0.0))


def nan_fill(a):
    return np.sum(np.where(a > np.nan, a, np.nan))


def swapped_branches(a):
    return np.sum(np.where(a > 0, 0.0, a))


@pytest.mark.parametrize("f", [inclusive, another_array, another_number, negative_zero, nan_fill, swapped_branches])
def test_other_selections_stay_np_where(f):
    text = stage(f)
    assert "rt.where_" not in text and "np.where(" in text


VALUES = np.array([-0.0, 0.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 3e-310, -3e-310, 0.5, 1.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("c", [0.0, 0, 0.5, 1.0, -2.0, np.inf])
def test_the_clamps_give_np_where_s_values_bit_for_bit(dtype, c):
    rng = np.random.default_rng(7)
    values = VALUES if dtype is not np.int64 else np.array([-2, 0, 1, 5, -7])
    for n in (1, 5, 17, 1000):
        x = rng.choice(values, n).astype(dtype)
        for x in (x, x[::2], x.reshape(-1, 1)[: n // 2 + 1]):
            for helper, mask in ((rt.where_above, x > c), (rt.where_below, x < c)):
                want, got = np.where(mask, x, c), helper(mask, x, c)
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_anything_but_a_real_array_goes_to_np_where():
    for x in (2.0, np.float64(-1.0), [1.0, -1.0], np.array([1 + 1j, -1j]), np.array(3.0)):
        m = np.real(np.asarray(x)) > 0
        want = np.where(m, x, 0.0)
        got = rt.where_above(m, x, 0.0)
        assert type(got) is type(want) and np.array_equal(got, want)


def test_the_gradient_is_np_where_s():
    a = np.array([[0.7, -1.2, 0.3], [-0.4, 1.1, -2.0]])
    check_grads(relu, a)
    check_grads(relu_mirrored, a)
    check_grads(clipped_above, a)
    # at a tie (a == c) np.where selects c: no gradient for that element (np.maximum's rule gives half)
    tie = np.array([[0.0, 2.0], [-1.0, 0.0]])
    np.testing.assert_array_equal(grad(relu)(tie), [[0.0, 4.0], [0.0, 0.0]])
    _, t = jvp(relu, (a,), (np.ones_like(a),))
    np.testing.assert_allclose(t, np.sum(2 * np.maximum(a, 0.0)), rtol=1e-12)

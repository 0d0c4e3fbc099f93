"""Gradients at special points (issue 12, family 12): entries exactly zero, singular matrices,
constant arrays. Smooth functions get their exact gradient there (checked against finite
differences); at a cone's tip (a norm, `std`, `hypot` at 0) the convention is 0, which is also
what central differences give; `arctan2(0, 0)` has no limit and gets 0 by convention."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads

W23 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def s_cumprod(x): return np.sum(np.cumprod(x) * np.arange(1.0, 1.0 + x.size))
def s_cumprod_axis0(x): return np.sum(np.cumprod(x, axis=0) * W23)
def s_cumprod_axis1(x): return np.sum(np.cumprod(x, 1) ** 2)
def s_cumprod_method(x): return np.sum(x.cumprod(axis=-1) * W23)
def s_prod(x): return np.prod(x)
def s_prod_axis(x): return np.sum(np.prod(x, axis=0) * W23[0])
def s_prod_square(x): return np.prod(x * x)


ZEROS = {"one_zero": np.array([[1.0, 0.0, 2.0], [3.0, -1.5, 0.5]]),
         "zero_first": np.array([[0.0, 2.0, 2.0], [0.0, 0.0, 1.5]]),
         "zero_last": np.array([[1.0, 2.0, 0.0], [2.0, -1.0, 0.0]]),
         "all_zero": np.zeros((2, 3))}


@pytest.mark.parametrize("x", ZEROS.values(), ids=ZEROS.keys())
@pytest.mark.parametrize("f", [s_cumprod, s_cumprod_axis0, s_cumprod_axis1, s_cumprod_method, s_prod,
                               s_prod_axis, s_prod_square])
def test_products_through_zeros(f, x):
    g = grad(f)(x)
    assert np.all(np.isfinite(g))
    check_grads(f, x)


def test_cumprod_zero_exact_value():
    # d/dx1 of sum(cumprod([1, x1, 2])) = 1 + 2 at x1 = 0
    np.testing.assert_allclose(grad(lambda_free_cumsum)(np.array([1.0, 0.0, 2.0])), [1.0, 3.0, 0.0])


def lambda_free_cumsum(x): return np.sum(np.cumprod(x))


def s_pow_const(x): return np.sum(x ** 2.0 + x ** 1 + 3.0 * x ** 0 + x ** 0.0 + np.power(x, 3))
def s_pow_both(x, e): return np.sum(x ** e)
def s_pow_exponent(e): return np.sum(np.array([0.0, 2.0]) ** e)
def s_pow_builtin(x): return pow(x, 2) + pow(x, 0) + x ** 1.0


def test_power_at_zero_constant_exponent():
    x = np.array([0.0, 1.5, -2.0])
    g = grad(s_pow_const)(x)
    assert np.all(np.isfinite(g))
    check_grads(s_pow_const, x)
    check_grads(s_pow_builtin, 0.0)


def test_power_at_zero_active_exponent():
    x, e = np.array([0.0, 2.0]), np.array([1.0, 2.5])
    gx, ge = grad(s_pow_both, (0, 1))(x, e)
    assert np.all(np.isfinite(gx)) and np.all(np.isfinite(ge))
    check_grads(s_pow_both, x, e, wrt=(0, 1))
    check_grads(s_pow_exponent, np.array([1.5, 2.0]))


def s_norm(x): return np.linalg.norm(x)
def s_norm_ord(x): return np.linalg.norm(x, 3) + np.linalg.norm(x, ord=1) + np.linalg.norm(x, np.inf)
def s_norm_rows(x): return np.sum(np.linalg.norm(x, axis=1))
def s_norm_matrix(x): return np.linalg.norm(x, "fro") + np.linalg.norm(x, "nuc") + np.linalg.norm(x, 2)
def s_std(x): return np.std(x) + np.sum(np.std(x, axis=0)) + np.var(x) + np.sum(x.std(axis=1, ddof=1))
def s_hypot(x, y): return np.sum(np.hypot(x, y) * np.array([1.0, 2.0]))
def s_abs(x): return np.sum(np.abs(x) * np.array([1.0, 2.0]))


CONES = [(s_norm, np.zeros(3)), (s_norm_ord, np.zeros(3)), (s_norm_rows, np.zeros((2, 2))),
         (s_norm_matrix, np.zeros((2, 2))), (s_std, np.full((2, 3), 1.5)), (s_abs, np.zeros(2))]


@pytest.mark.parametrize("f,x", CONES, ids=[f.__name__ for f, _ in CONES])
def test_cone_tips_are_zero(f, x):
    g = grad(f)(x)
    np.testing.assert_array_equal(g, np.zeros_like(x))
    check_grads(f, x)  # central differences at a cone's tip are 0 too


def test_norm_rows_with_one_zero_row():
    check_grads(s_norm_rows, np.array([[0.0, 0.0], [1.0, 2.0]]))


def test_hypot_and_arctan2_at_origin():
    gx, gy = grad(s_hypot, (0, 1))(np.zeros(2), np.array([0.0, 3.0]))
    np.testing.assert_allclose(gx, [0.0, 0.0])
    np.testing.assert_allclose(gy, [0.0, 2.0])
    check_grads(s_hypot, np.array([0.0, 1.0]), np.array([0.0, 3.0]), wrt=(0, 1))
    ga, gb = grad(s_arctan2, (0, 1))(0.0, 0.0)
    assert (ga, gb) == (1.0, 0.0)
    check_grads(s_arctan2, 0.5, 0.0, wrt=(0, 1))


def s_arctan2(y, x): return np.arctan2(y, x) * 3.0 + np.arctan2(2.0 * y, x) + y


def s_det(a): return np.linalg.det(a)
def s_det_scaled(a): return np.linalg.det(a * 2.0) + np.sum(a)
def s_det_batch(a): return np.sum(np.linalg.det(a) * np.array([1.0, -2.0]))


SINGULAR = {"rank1": np.array([[1.0, 2.0], [2.0, 4.0]]), "zero": np.zeros((3, 3)),
            "rank2": np.arange(1.0, 10.0).reshape(3, 3), "rank1_3x3": np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5])}


@pytest.mark.parametrize("a", SINGULAR.values(), ids=SINGULAR.keys())
def test_det_of_singular_matrices(a):
    for f in (s_det, s_det_scaled):
        assert np.all(np.isfinite(grad(f)(a)))
        check_grads(f, a)


def test_det_batch_with_a_singular_matrix():
    a = np.stack([np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[2.0, 1.0], [0.5, 3.0]])])
    check_grads(s_det_batch, a)


def test_std_of_a_constant_whose_mean_rounds():
    x = np.zeros((2, 3)) + 0.37  # np.std(x, axis=1) is 1e-17, not 0: rounding noise of the mean
    for f in (s_std, s_std_rows):
        np.testing.assert_allclose(grad(f)(x), 0.0, atol=1e-12)
        check_grads(f, x)


def s_std_rows(x): return x.std(axis=1, ddof=1).sum() + np.std(x, axis=0, keepdims=True).sum()

"""Finite-difference tests of the reductions (rules/reductions.py): functions and methods, with
`axis` (int, negative, tuple) and `keepdims`, plus the tie convention of max/min."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads


def r_sum(x, w): return np.sum(x) * w
def r_sum_axis0(x, w): return np.sum(np.sum(x, axis=0) * w)
def r_sum_axis1_keep(x, w): return np.sum(np.sum(x, axis=1, keepdims=True) * w)
def r_sum_axes(x, w): return np.sum(np.sum(x, axis=(0, 2)) * w)
def r_sum_positional(x, w): return np.sum(np.sum(x, -1) * w)
def r_sum_method(x, w): return np.sum(x.sum(axis=0) * w)
def r_sum_method_keep(x, w): return np.sum(x.sum(1, keepdims=True) * w)
def r_mean(x, w): return np.mean(x) * w
def r_mean_axis1(x, w): return np.sum(np.mean(x, axis=1) * w)
def r_mean_axes_keep(x, w): return np.sum(np.mean(x, axis=(1, 2), keepdims=True) * w)
def r_mean_method(x, w): return np.sum(x.mean(axis=-1) * w)
def r_prod(x, w): return np.prod(x) * w
def r_prod_axis0(x, w): return np.sum(np.prod(x, axis=0) * w)
def r_prod_axes_keep(x, w): return np.sum(np.prod(x, axis=(0, 2), keepdims=True) * w)
def r_prod_method(x, w): return np.sum(x.prod(axis=1) * w)
def r_max(x, w): return np.max(x) * w
def r_max_axis1(x, w): return np.sum(np.max(x, axis=1) * w)
def r_amax_keep(x, w): return np.sum(np.amax(x, axis=0, keepdims=True) * w)
def r_max_method(x, w): return np.sum(x.max(axis=0) * w)
def r_min(x, w): return np.min(x) * w
def r_min_axis1(x, w): return np.sum(np.min(x, axis=-1) * w)
def r_amin_axes(x, w): return np.sum(np.amin(x, axis=(0, 1)) * w)
def r_min_method(x, w): return np.sum(x.min(1) * w)
def r_var(x, w): return np.var(x) * w
def r_var_axis0_ddof(x, w): return np.sum(np.var(x, axis=0, ddof=1) * w)
def r_var_keep(x, w): return np.sum(np.var(x, axis=1, keepdims=True) * w)
def r_var_method(x, w): return np.sum(x.var(axis=1, ddof=1) * w)
def r_std(x, w): return np.std(x) * w
def r_std_axis1_ddof(x, w): return np.sum(np.std(x, axis=1, ddof=1) * w)
def r_std_axes_keep(x, w): return np.sum(np.std(x, axis=(0, 2), keepdims=True) * w)
def r_std_method(x, w): return np.sum(x.std(axis=0) * w)
def r_cumsum(x, w): return np.sum(np.cumsum(x) * w)
def r_cumsum_axis0(x, w): return np.sum(np.cumsum(x, axis=0) * w)
def r_cumsum_axis1(x, w): return np.sum(np.cumsum(x, axis=-1) * w)
def r_cumsum_method(x, w): return np.sum(x.cumsum(axis=1) * w)
def r_cumprod(x, w): return np.sum(np.cumprod(x) * w)
def r_cumprod_axis1(x, w): return np.sum(np.cumprod(x, axis=1) * w)
def r_cumprod_method(x, w): return np.sum(x.cumprod(axis=0) * w)


M, T, V = (3, 4), (2, 3, 4), (5,)
CASES = [
    (r_sum, M, ()), (r_sum, V, ()), (r_sum_axis0, M, (4,)), (r_sum_axis0, V, ()),
    (r_sum_axis1_keep, M, (3, 1)), (r_sum_axes, T, (3,)), (r_sum_positional, T, (2, 3)),
    (r_sum_method, M, (4,)), (r_sum_method_keep, T, (2, 1, 4)),
    (r_mean, M, ()), (r_mean, V, ()), (r_mean_axis1, M, (3,)), (r_mean_axes_keep, T, (2, 1, 1)),
    (r_mean_method, T, (2, 3)),
    (r_prod, M, ()), (r_prod, V, ()), (r_prod_axis0, M, (4,)), (r_prod_axes_keep, T, (1, 3, 1)),
    (r_prod_method, M, (3,)),
    (r_max, M, ()), (r_max, V, ()), (r_max_axis1, M, (3,)), (r_amax_keep, M, (1, 4)),
    (r_max_method, T, (3, 4)),
    (r_min, M, ()), (r_min, V, ()), (r_min_axis1, M, (3,)), (r_amin_axes, T, (4,)),
    (r_min_method, M, (3,)),
    (r_var, M, ()), (r_var, V, ()), (r_var_axis0_ddof, M, (4,)), (r_var_keep, M, (3, 1)),
    (r_var_method, T, (2, 4)),
    (r_std, M, ()), (r_std, V, ()), (r_std_axis1_ddof, M, (3,)), (r_std_axes_keep, T, (1, 3, 1)),
    (r_std_method, M, (4,)),
    (r_cumsum, M, (12,)), (r_cumsum, V, (5,)), (r_cumsum_axis0, M, (3, 4)),
    (r_cumsum_axis1, T, (2, 3, 4)), (r_cumsum_method, M, (3, 4)),
    (r_cumprod, M, (12,)), (r_cumprod_axis1, M, (3, 4)), (r_cumprod_method, T, (2, 3, 4)),
]


@pytest.mark.parametrize("f,x_shape,w_shape", CASES,
                         ids=[f"{f.__name__}-{'x'.join(map(str, s))}" for f, s, _ in CASES])
def test_reduction(f, x_shape, w_shape):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, x_shape) * rng.choice([-1.0, 1.0], x_shape)
    w = rng.standard_normal(w_shape)
    check_grads(f, x, float(w) if w_shape == () else w)


@pytest.mark.filterwarnings("ignore:divide by zero")  # std of a scalar: y_bar / (2 * 0) times 0
@pytest.mark.parametrize("f", [r_sum, r_mean, r_prod, r_max, r_min, r_var, r_std, r_cumsum])
def test_reduction_of_scalar(f):
    check_grads(f, 0.7, 1.3)


def t_prod(x): return np.prod(x)
def t_prod_axis(x): return np.sum(np.prod(x, axis=1) * np.array([1.0, 2.0]))


def test_prod_with_zeros():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    np.testing.assert_allclose(grad(t_prod)(x), [0.0, 24.0, 0.0, 0.0])
    x = np.array([[0.0, 0.0, 3.0], [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(grad(t_prod_axis)(x), [[0.0, 0.0, 0.0], [12.0, 6.0, 4.0]])


def t_max(x): return np.max(x)
def t_min_axis(x): return np.sum(np.min(x, axis=1) * np.array([1.0, 2.0]))
def t_max_method(x): return x.max()


def test_max_min_ties_split_equally():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_array_equal(grad(t_max)(x), [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_array_equal(grad(t_max_method)(np.array([4.0, 4.0, 4.0, 4.0])), [0.25] * 4)
    x = np.array([[1.0, 1.0, 2.0], [0.0, 5.0, 7.0]])
    np.testing.assert_array_equal(grad(t_min_axis)(x), [[0.5, 0.5, 0.0], [2.0, 0.0, 0.0]])


def mean_of_squares(x):
    return np.mean(x ** 2)


def test_mean_over_no_entry_has_an_empty_gradient():
    """NumPy's mean of an empty array is nan (with a warning); its gradient is the empty array, as
    autograd's, never a ZeroDivisionError; over an empty axis of a non-empty shape too."""
    import warnings

    from adjoint_compiler import value_and_grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in (np.zeros(0), np.zeros((3, 0))):
            value, g = value_and_grad(mean_of_squares)(x)
            assert np.isnan(value) and g.shape == x.shape


def e_std_slice(x): return np.std(x[:0]) + 2.0 * x[0]
def e_prod_slice(x): return np.prod(x[:0]) * x[1]
def e_prod_rows(a, c): return np.sum(np.prod(a, axis=1) * c)
def e_std_rows(a, c): return np.sum(np.std(a, axis=1, keepdims=True)) + c


def test_std_and_prod_over_no_entry():
    """prod over no entry is 1 and std nan (as NumPy): the empty part gets an empty gradient, the
    rest its own (before: the adjoints' helpers crashed reducing or padding the empty axis)."""
    import warnings

    from adjoint_compiler import jvp
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_array_equal(grad(e_prod_slice)(x), [0.0, 1.0, 0.0])
    assert jvp(e_prod_slice, (x,), (np.ones(3),))[1] == 1.0
    a_bar, c_bar = grad(e_prod_rows, wrt=(0, 1))(np.zeros((2, 0)), 1.5)
    assert a_bar.shape == (2, 0) and c_bar == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(grad(e_std_slice)(x), [2.0, 0.0, 0.0])
        assert jvp(e_std_slice, (x,), (np.ones(3),))[1] == 2.0
        a_bar, c_bar = grad(e_std_rows, wrt=(0, 1))(np.zeros((2, 0)), 1.5)
        assert a_bar.shape == (2, 0) and c_bar == 1.0


def r_int_dtype_of_ints(n, x):
    return np.sum(n, dtype=int) * x[0] + np.cumsum(n, dtype=np.int64)[-1] * x[1] + np.prod(n, dtype=int)


def r_int_dtype_of_floats(n, x):
    return np.sum(n * 1.5, dtype=int) * x[0] + np.add.reduce(n * 0.5, dtype=np.int32) + np.mean(n, dtype=int)


def test_integer_dtype_passes_the_gradient_of_integers_but_not_of_floats():
    # integers summed (multiplied) as integers are exact: d/dn of sum(n) x0 + sum(n) x1 + prod(n)
    n, x = np.array([1, 2, 3]), np.array([2.0, -1.0])
    np.testing.assert_allclose(grad(r_int_dtype_of_ints)(n, x), x[0] + x[1] + np.prod(n) / n)
    # floats truncated to integers, and a mean computed in integers, are piecewise constant
    np.testing.assert_allclose(grad(r_int_dtype_of_floats)(n, x), np.zeros(3))

"""Keywords NumPy users pass (issue 12, family 15): accepted where they do not change the
derivative, implemented where they do (`order` in reshape/ravel/flatten, `prepend`/`append` in
diff, an integer `dtype`, `ndmin`), and refused with a located error where the rule cannot
follow them (`out=` an array, `where=` a mask)."""
import numpy as np
import pytest

from adjoint_compiler import AdjointCompilerError, grad
from adjoint_compiler.testing import check_grads

W6 = np.arange(6.0) - 2.0
W23 = np.arange(6.0).reshape(2, 3) * 0.5 - 1.0
W32 = W23.T.copy()


# -- dtype, out=None, keepdims ----------------------------------------------------------------
def k_sum_dtype(x): return np.sum(x, dtype=np.float64) * 2.0 + np.sum(x * x, dtype=float)
def k_sum_dtype_str(x): return np.sum(np.sum(x, 0, "float64") * W23[0])
def k_mean_dtype(x): return np.mean(x ** 2, dtype=np.float64) + x.mean(axis=1, dtype=float).sum()
def k_prod_dtype(x): return np.prod(x, dtype=np.float64) + np.sum(x.prod(0, np.float64, None, True))
def k_cumsum_dtype(x): return np.sum(np.cumsum(x, axis=1, dtype=np.float64) * W23)
def k_cumprod_dtype(x): return np.sum(x.cumprod(dtype=float) * W6)
def k_var_positional(x): return np.sum(np.var(x, 0, None, None, 1) * W23[0]) + np.std(x, None, float, None, 0)
def k_max_positional(x): return np.sum(np.max(x, 1, None, True) * W23) + x.min(0, None, False).sum()
def k_out_none(x): return np.sum(x, out=None) + np.sum(np.sin(x, out=None)) + np.sum(x.sum(axis=0, out=None))
def k_ufunc_keywords(x): return np.sum(np.exp(x, dtype=np.float64, where=True, casting="same_kind", order="K") * W23)
def k_integer_dtype(x): return np.sum(x, dtype=int) * x[0, 0] + np.sum(np.cumsum(x, dtype=np.int64)) * x[1, 1]
def k_integer_mean(x): return np.mean(x, dtype=int) * np.sum(x)
def k_concat_dtype(x): return np.sum(np.concatenate([x, x * 2], axis=0, dtype=np.float64) ** 2)
def k_einsum_optimize(x): return np.einsum("ij,ij->", x, x, optimize=True) + np.einsum("ij->j", x, optimize="greedy").sum()


DTYPES = [k_sum_dtype, k_sum_dtype_str, k_mean_dtype, k_prod_dtype, k_cumsum_dtype, k_cumprod_dtype,
          k_var_positional, k_max_positional, k_out_none, k_ufunc_keywords, k_integer_dtype, k_integer_mean,
          k_concat_dtype, k_einsum_optimize]


@pytest.mark.parametrize("f", DTYPES, ids=[f.__name__ for f in DTYPES])
def test_harmless_and_dtype_keywords(f):
    check_grads(f, np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]]))


# -- order: the adjoint puts entries back in the same order ------------------------------------
def o_reshape_f(x): return np.sum(x.reshape(3, 2, order="F") * W32)
def o_reshape_f_tuple(x): return np.sum(x.reshape((3, 2), order="F") * W32)
def o_np_reshape_f(x): return np.sum(np.reshape(x, (3, 2), order="F") * W32)
def o_np_reshape_kw(x): return np.sum(np.reshape(x, shape=(6,), order="F") * W6)
def o_reshape_c(x): return np.sum(x.reshape(3, 2, order="C") * W32)
def o_reshape_a(x): return np.sum(x.T.reshape(6, order="A") * W6)
def o_ravel_f(x): return np.sum(np.ravel(x, order="F") * W6) + np.sum(x.ravel("F") * W6 ** 2)
def o_ravel_k(x): return np.sum(x.T.ravel(order="K") * W6) + np.sum(np.ravel(x, "K") * W6 ** 2)
def o_ravel_a(x): return np.sum(np.ravel(x.T, order="A") * W6)
def o_flatten_f(x): return np.sum(x.flatten(order="F") * W6) + np.sum(x.T.flatten("K") * W6 ** 2)
def o_vector_f(x): return np.sum(x[0].reshape((3, 1), order="F") ** 2)


ORDERS = [o_reshape_f, o_reshape_f_tuple, o_np_reshape_f, o_np_reshape_kw, o_reshape_c, o_reshape_a,
          o_ravel_f, o_ravel_k, o_ravel_a, o_flatten_f, o_vector_f]


@pytest.mark.parametrize("f", ORDERS, ids=[f.__name__ for f in ORDERS])
def test_order(f):
    check_grads(f, np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]]))


def o_ravel_k_3d(x): return np.sum(np.ravel(x.transpose(1, 0, 2), order="K") * np.arange(24.0))
def o_ravel_k_reversed(x): return np.sum(np.ravel(x[::-1, :, ::2], order="K") * np.arange(12.0))


def test_order_k_of_strided_views():
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    check_grads(o_ravel_k_3d, x)
    check_grads(o_ravel_k_reversed, x)


def test_order_f_differs_from_c():
    x = np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]])
    assert not np.allclose(grad(o_reshape_f)(x), grad(o_reshape_c)(x))


# -- diff with prepend / append: those values get their gradient too ---------------------------
def d_prepend_const(x): return np.sum(np.diff(x, prepend=0.0) ** 2)
def d_prepend_active(x, p): return np.sum(np.diff(x, prepend=p) ** 2 * np.arange(3.0))
def d_append_active(x, p): return np.sum(np.diff(x, append=p * 2.0) ** 3)
def d_both(x, p): return np.sum(np.diff(x, n=2, prepend=p, append=np.array([p, 1.0])) ** 2)
def d_matrix(x, p): return np.sum(np.diff(x, axis=0, prepend=p, append=x[:1] * 3.0) ** 2)
def d_matrix_last(x, p): return np.sum(np.diff(x, 1, -1, p, x[:, :1]) ** 2)


def test_diff_prepend_append():
    v = np.array([0.3, -1.2, 0.8])
    check_grads(d_prepend_const, v)
    check_grads(d_prepend_active, v, 0.7, wrt=(0, 1))
    check_grads(d_append_active, v, 0.7, wrt=(0, 1))
    check_grads(d_both, v, 0.7, wrt=(0, 1))
    m = np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]])
    check_grads(d_matrix, m, np.array([[0.1, 0.2, 0.3]]), wrt=(0, 1))
    check_grads(d_matrix, m, 0.25, wrt=(0, 1))
    check_grads(d_matrix_last, m, np.array([[0.1], [0.2]]), wrt=(0, 1))


# -- array / asarray / copy ---------------------------------------------------------------------
def a_array_copy(x): return np.sum(np.array(x, copy=True) ** 2)
def a_array_dtype(x): return np.sum(np.array(x, dtype=float, order="F") ** 2) + np.sum(np.array(x, dtype=int)) * x[0]
def a_array_ndmin(x): return np.sum(np.array(x, ndmin=3) ** 2 * W6[:3])
def a_asarray(x): return np.sum(np.asarray(x, order="C") ** 3) + np.sum(np.asarray(x, dtype=np.float64) * W6[:3])
def a_copy_order(x): return np.sum(np.copy(x, order="F") * W6[:3]) + np.sum(x.astype(float, order="C", copy=True) ** 2)


@pytest.mark.parametrize("f", [a_array_copy, a_array_dtype, a_array_ndmin, a_asarray, a_copy_order])
def test_array_keywords(f):
    check_grads(f, np.array([0.3, -1.2, 0.8]))


# -- refused: the rule cannot follow these -----------------------------------------------------
def r_out_array(x):
    y = np.zeros(2)
    np.sum(x, axis=1, out=y)
    return np.sum(y)


def r_where_mask(x): return np.prod(x, where=x > 0)  # (sum, mean, max, min take `where=`)
def r_linspace_retstep(a): return np.sum(np.linspace(0.0, a, 4, retstep=True)[0])


def test_out_array_is_a_write():  # `out=` an array: a write node into it (family 8)
    check_grads(r_out_array, np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]]))


@pytest.mark.parametrize("f", [r_where_mask, r_linspace_retstep])
def test_refused_keywords_are_located(f):
    with pytest.raises(AdjointCompilerError) as info:
        grad(f)(np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]]) if f is not r_linspace_retstep else 1.5)
    assert "test_keywords.py" in str(info.value), str(info.value)


# -- other spellings ------------------------------------------------------------------------------
def s_clip_keywords(x): return np.sum(np.clip(x, min=-0.5, max=1.0) ** 2) + np.sum(np.clip(x, a_min=0.0, a_max=None) * W6[:3])
def s_clip_bounds_active(x, lo): return np.sum(np.clip(x, min=lo, max=lo + 1.0) * W6[:3])
def s_scalar_casts(x): return np.sum(x * np.float32(x[0])) + np.float64(x[1]) * 2.0 + np.sum(x * np.int64(x[2]))


def test_clip_keyword_bounds_and_casts():
    x = np.array([0.3, -1.2, 1.8])
    check_grads(s_clip_keywords, x)
    check_grads(s_clip_bounds_active, x, np.array([-0.5, 0.1, 0.2]), wrt=(0, 1))
    check_grads(s_scalar_casts, x, rtol=1e-4, atol=1e-4, eps=1e-3)  # float32 rounds the value


def s_ndmin_broadcast(x): return np.sum(np.array(x, ndmin=2) * x * np.array([[1.0], [2.0]]))
def s_like_shape(x): return np.sum((np.ones_like(x, shape=(2, 3)) + x) ** 2) + np.sum(np.zeros_like(x, shape=(2, 1)) * x)


def test_keywords_that_change_the_shape():
    check_grads(s_ndmin_broadcast, np.array([0.5, 1.0, 2.0]))
    check_grads(s_like_shape, np.array([0.5, 1.0, 2.0]))


def s_sum_initial(x, b): return np.sum(np.sum(x, axis=0, initial=b) ** 2) + x.sum(initial=1.0) + np.sum(x, None, None, None, False, b)


def test_sum_initial():
    check_grads(s_sum_initial, np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]]), 0.7, wrt=(0, 1))

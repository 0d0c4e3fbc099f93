"""Issue 12, families 8, 9, 11 and 13: `out=` arguments, integer and boolean storage, a value of
shape (1, n) written into (n,) slots, and 0-d booleans used as indices.

Each program is checked in the three call forms (`grad`, `value_and_grad`, `vjp`) against central
finite differences of running it, never against the compiler itself. Inputs stay away from the
points where a truncation to integers jumps, so finite differences are exact there.
"""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import AdjointCompilerError, Buffer, copyto, grad, value_and_grad, vjp

V = np.array([1.3, 2.4, 3.6])
X = np.array([[1.3, -0.4, 2.2], [0.7, 1.9, -1.1]])


def fd(f, args, i, eps=1e-6):
    x = np.asarray(args[i], dtype=float)
    out = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        for sign in (1, -1):
            a = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in args]
            xk = x.copy()
            xk[k] += sign * eps
            a[i] = xk
            out[k] += sign * float(f(*a)) / (2 * eps)
    return out


def check_all(f, *args, wrt=0):
    """The gradient from grad, value_and_grad and vjp equals finite differences; the value
    equals running `f`; the caller's arrays are unchanged."""
    fresh = lambda: [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in args]
    expected = f(*fresh())
    want = fd(f, args, wrt)
    before = fresh()
    g1 = grad(f, wrt)(*args)
    value, g2 = value_and_grad(f, wrt)(*args)
    out, pullback = vjp(f, *args)
    g3 = pullback(1.0)[wrt]
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    for g in (g1, g2, g3):
        assert np.shape(g) == want.shape
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


# -- family 8: out= ---------------------------------------------------------------------------

def out_floor(v):
    y = v * 1.0
    np.floor(v, out=y)
    return np.sum(y * v)


def out_exp_self(x):
    x = x * 1.0
    np.exp(x, out=x)
    return np.sum(x)


def out_positional_ufunc(x):
    y = np.zeros(3)
    np.multiply(x, x, y)
    return np.sum(y * x)


def out_returned(x):
    y = np.zeros(3)
    r = np.add(x, 1.0, out=y)
    return np.sum(r * x) + np.sum(y ** 2)


def out_tuple(x):
    y = np.empty(3)
    np.sin(x, out=(y,))
    return np.sum(y * x)


def out_none(x):
    y = np.sin(x, out=None)
    return np.sum(y * x)


def out_reduction(X):
    y = np.zeros(3)
    np.sum(X, axis=0, out=y)
    return np.sum(y ** 2)


def out_reduction_positional(X):
    y = np.zeros(2)
    np.sum(X, 1, None, y)
    return np.sum(y ** 2)


def out_cumsum(x):
    y = np.zeros(3)
    r = np.cumsum(x, out=y)
    return np.sum(r ** 2)


def out_clip_positional(x):
    y = np.zeros(3)
    np.clip(x, 1.5, 3.0, y)
    return np.sum(y * x)


def out_matmul(X):
    y = np.zeros((2, 2))
    np.matmul(X, X.T, out=y)
    return np.sum(y ** 2)


def out_dot_positional(X):
    y = np.zeros((2, 2))
    np.dot(X, X.T, y)
    return np.sum(y ** 2)


def out_method(X):
    y = np.zeros(3)
    X.sum(axis=0, out=y)
    return np.sum(y ** 2)


def out_in_loop(x):
    y = x * 1.0
    for _ in range(3):
        np.multiply(y, x, out=y)
    return np.sum(y)


def out_nested(x):
    y = np.zeros(3)
    s = np.sum(np.exp(x, out=y) * x)
    return s + np.sum(y)


def out_where_nondiff(x):
    y = x * 1.0
    np.floor(x, out=y, where=x > 2)
    return np.sum(y * x)


def out_broadcast(x):
    y = np.zeros((2, 3))
    np.multiply(x, 2.0, out=y)
    return np.sum(y * np.arange(6.0).reshape(2, 3))


def _tanh_into(a, out):
    np.tanh(a, out=out)
    return out


def out_user_parameter_named_out(x):
    y = np.zeros(3)
    _tanh_into(x * 2, y)
    return np.sum(y * x)


def out_into_argument(y, x):
    np.sin(x, out=y)
    return np.sum(y * x)


@pytest.mark.parametrize("f, args", [
    (out_floor, [V]), (out_exp_self, [V]), (out_positional_ufunc, [V]), (out_returned, [V]),
    (out_tuple, [V]), (out_none, [V]), (out_reduction, [X]), (out_reduction_positional, [X]),
    (out_cumsum, [V]), (out_clip_positional, [V]), (out_matmul, [X]), (out_dot_positional, [X]),
    (out_method, [X]), (out_in_loop, [V]), (out_nested, [V]), (out_where_nondiff, [V]),
    (out_broadcast, [V]), (out_user_parameter_named_out, [V]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_out_argument_is_a_write(f, args):
    check_all(f, *args)


def test_out_into_an_argument():
    check_all(out_into_argument, np.zeros(3), V, wrt=1)
    check_all(out_into_argument, np.ones(3), V, wrt=0)


def where_without_out(x):
    y = np.sin(x, where=x > 2)
    return np.sum(y)


def out_casting_where(x):
    y = np.zeros(3, int)
    np.floor(x, out=y, casting="unsafe", where=x > 2)
    return np.sum(y * x)


@pytest.mark.parametrize("f, words", [(where_without_out, "uninitialized"),
                                      (out_casting_where, "`casting=`")])
def test_out_refusals_are_located(f, words):
    with pytest.raises(AdjointCompilerError, match=words) as info:
        grad(f)(V)
    assert "test_soundness_writes.py" in str(info.value)


# -- family 9: integer and boolean storage ------------------------------------------------------

def int_zeros_slice(v):
    b = np.zeros(3, int)
    b[:] = v
    return np.sum(b * v)


def int_array_cast(v):
    b = np.array(v, dtype=int)
    return np.sum(b * v)


def int_asarray_positional(v):
    b = np.asarray(v, int)
    return np.sum(b * v)


def int_literal_written(v):
    b = np.array([0, 0, 0])
    b[0] = v[0]
    b[1] = v[1]
    return np.sum(b * v)


def uint8_image(X):
    img = np.zeros((2, 3), np.uint8)
    for i in range(2):
        img[i] = X[i] * 7 + 9
    return np.sum(img * X)


def bool_storage(v):
    m = np.zeros(3, dtype=bool)
    m[1:] = v[1:] - 2
    return np.sum(m * v)


def comparison_written(v):
    m = v > 2
    m[0] = v[0]
    return np.sum(m * v)


def int_zeros_like_keyword(v):
    b = np.zeros_like(v, dtype=np.int64)
    b[1] = v[1] * 3
    return np.sum(b * v)


def int_zeros_like_positional(v):
    b = np.zeros_like(v, int)
    b[...] = v
    return np.sum(b * v) + np.sum(b)


def int_arange_written(v):
    b = np.arange(3)
    b[1:] = v[1:] ** 2
    return np.sum(b * v)


def int_full_in_loop(v):
    b = np.full(3, 0)
    for i in range(3):
        b[i] = v[i] * 3
    return np.sum(b * v)


def int_copyto(v):
    b = np.zeros(3, int)
    np.copyto(b, v.astype(int))
    return np.sum(b * v)


def int_fancy_duplicates(v):
    b = np.zeros(4, int)
    b[[0, 2, 2]] = v
    return np.sum(b[:3] * v)


def int_augmented(v):
    b = np.ones(3, int)
    b[1] += v[1]
    return np.sum(b * v)


def _fill(b, v):
    b[:] = v
    return b


def int_written_in_helper(v):
    b = np.zeros(3, np.int32)
    b = _fill(b, v * 2)
    return np.sum(b * v)


def int_astype_and_round(v):
    b = np.round(v).astype(int) + v.astype("int32") + np.ascontiguousarray(v, dtype=np.int16)
    return np.sum(b * v)


def int_scalar_type(v):
    b = np.int64(v[0])
    return b * v[1] + v[2]


def int_buffer(v):
    b = Buffer.zeros(3, dtype=int)  # a Buffer holds floats: the write passes gradient
    b[:] = v
    return np.sum(b.copy() * v)


def int_floats_after(v):
    b = np.array([1, 2, 3])
    b[0] = v[0]
    c = b * 1.5
    c[1] = v[1]
    return np.sum(c * v)


@pytest.mark.parametrize("f, args", [
    (int_zeros_slice, [V]), (int_array_cast, [V]), (int_asarray_positional, [V]), (int_literal_written, [V]),
    (uint8_image, [X]), (bool_storage, [V]), (comparison_written, [V]), (int_zeros_like_keyword, [V]),
    (int_zeros_like_positional, [V]), (int_arange_written, [V]), (int_full_in_loop, [V]), (int_copyto, [V]),
    (int_fancy_duplicates, [V]), (int_augmented, [V]), (int_written_in_helper, [V]),
    (int_astype_and_round, [V]), (int_scalar_type, [V]), (int_buffer, [V]), (int_floats_after, [V]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_integer_storage_passes_no_gradient(f, args):
    check_all(f, *args)


def write_into_argument(b, v):
    b[:] = v * 2
    return np.sum(b * v)


@pytest.mark.parametrize("dtype", [int, np.uint8, bool, float])
def test_write_into_an_argument_of_any_dtype(dtype):
    check_all(write_into_argument, np.zeros(3, dtype), V, wrt=1)


# -- family 11: a (1, n) value written into (n,) slots ------------------------------------------

def row_reshaped(v):
    b = np.zeros(3)
    b[:] = v.reshape(1, 3)
    return np.sum(b * np.array([1.0, 2.0, 3.0]))


def row_matmul(X, W):
    out = np.zeros((2, 2))
    for i in range(2):
        out[i] = X[i:i + 1] @ W
    return np.sum(out * np.array([[1.0, 2.0], [3.0, 4.0]]))


def row_keepdims(X):
    out = np.zeros((2, 3))
    out[0] = np.sum(X, axis=0, keepdims=True)
    out[1] = X.max(axis=0, keepdims=True) * X[1]
    return np.sum(out * np.arange(6.0).reshape(2, 3))


def row_copyto(v):
    b = np.zeros(3)
    np.copyto(b, v.reshape(1, 3))
    return np.sum(b * np.array([1.0, 2.0, 3.0]))


def row_buffer(v):
    b = Buffer.zeros((2, 3))
    b[0] = v.reshape(1, 3)
    b[1] = v[None, None, :] * 2
    return np.sum(b.copy() * np.arange(6.0).reshape(2, 3))


def row_broadcast_and_singletons(X):
    b = np.zeros((2, 3))
    b[:, :] = X[:1, :1][None]       # (1, 1, 1) into (2, 3): summed over both axes
    c = np.zeros((2, 3))
    c[...] = X[None, :, :1]          # (1, 2, 1) into (2, 3)
    return np.sum(b * np.arange(6.0).reshape(2, 3)) + np.sum(c * c)


def row_fancy_and_mask(v):
    b = np.zeros((3, 3))
    b[[0, 2, 0]] = v.reshape(1, 1, 3)
    b[np.array([False, True, False])] = v[None, None] * 3
    return np.sum(b * np.arange(9.0).reshape(3, 3))


def row_out_keyword(X):
    y = np.zeros((1, 3))
    np.sum(X, axis=0, keepdims=True, out=y)
    b = np.zeros(3)
    b[:] = y
    np.copyto(b, b + X[:1] * 2)
    return np.sum(b * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("f, args", [
    (row_reshaped, [V]), (row_matmul, [X, np.ones((3, 2))]), (row_keepdims, [X]), (row_copyto, [V]),
    (row_buffer, [V]), (row_broadcast_and_singletons, [X]), (row_fancy_and_mask, [V]), (row_out_keyword, [X]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_leading_singleton_axes_are_dropped_not_summed(f, args):
    check_all(f, *args)


def test_row_matmul_weights():
    check_all(row_matmul, X, np.ones((3, 2)), wrt=1)


# -- family 13: a 0-d boolean index ---------------------------------------------------------------

def mask_read(v):
    m = v[0] > -10
    return np.sum(v[m] ** 2)


def mask_read_false(v):
    m = v[0] < -10
    return np.sum(v[m] ** 2) + np.sum(v)


def mask_read_2d(X):
    m = np.any(X > 1.5)
    w = X[m] @ np.ones(3)
    return np.sum(w * w)


def mask_all(v):
    m = np.all(v > 0)
    return np.sum(v[m] @ np.arange(3.0))


def mask_python_bool(v):
    return np.sum(v[True] * np.arange(3.0)) + np.sum(v[False])


def mask_sum_positive(x):
    return np.sum(x[np.sum(x) > 0] ** 2)


def mask_np_bool(v):
    m = np.bool_(v[0] > 0)
    return np.sum(v[m] @ np.arange(3.0))


def mask_scalar_times(v):
    x = v[1]
    m = x > 0
    w = x * v[m]
    return np.sum(w)


def mask_in_loop(v):
    s = 0.0
    for i in range(3):
        m = v[i] > 1.5
        s = s + np.sum(v[m] * v[i])
    return s


def mask_in_branch(v):
    m = v[0] > 0
    if m:
        w = v[m]
    else:
        w = v[None]
    return np.sum(w[0] * np.arange(3.0))


def mask_write(v):
    b = np.zeros((2, 3))
    m = v[0] > -10
    b[m] = v
    return np.sum(b * np.arange(6.0).reshape(2, 3))


def mask_write_scalar(v):
    b = v * 1.0
    m = v[1] > 0
    b[m] = v[0]
    return np.sum(b * np.arange(3.0))


def mask_augmented(v):
    b = v * 1.0
    m = v[0] > 0
    b[m] += v
    return np.sum(b * np.arange(3.0))


def mask_buffer(v):
    b = Buffer.zeros(3)
    m = v[0] > 0
    b[m] = v
    return np.sum(b.copy() * np.arange(3.0)) + np.sum(b[m] ** 2)


def mask_tuple_index(X):
    m = X[0, 0] > 0
    w = X[m, 1]
    return np.sum(w * np.arange(3.0))


@pytest.mark.parametrize("f, args", [
    (mask_read, [V]), (mask_read_false, [V]), (mask_read_2d, [X]), (mask_all, [V]), (mask_python_bool, [V]),
    (mask_sum_positive, [V]), (mask_np_bool, [V]), (mask_scalar_times, [V]), (mask_in_loop, [V]),
    (mask_in_branch, [V]), (mask_write, [V]), (mask_write_scalar, [V]), (mask_augmented, [V]),
    (mask_buffer, [V]), (mask_tuple_index, [X]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_zero_d_boolean_index_adds_an_axis(f, args):
    check_all(f, *args)


# -- where= with out= of a differentiable ufunc, casting='unsafe' -------------------------------

def where_divide(a, b):
    r = np.divide(a, b, out=np.zeros_like(a), where=b != 0)
    return np.sum(r ** 2)


def where_log(x):
    y = x * 1.0
    np.log(x, out=y, where=x > 0)
    return np.sum(y * x)


def where_broadcast(x):
    y = np.zeros((2, 3))
    np.sqrt(x, out=y, where=np.arange(6.0).reshape(2, 3) > 2)
    return np.sum(y * y * x)


def where_list_mask(x):
    y = x * 2
    np.multiply(x, 3.0, out=y, where=[True, False, True])
    return np.sum(y ** 2)


def unsafe_into_int(x):
    y = np.zeros(3, int)
    np.multiply(x, 2.0, out=y, casting="unsafe")
    return np.sum(y * x)


def copyto_unsafe_keyword(v):
    b = np.full(3, 0)
    np.copyto(b, v * 2, casting="unsafe")
    return np.sum(b * v)


def copyto_unsafe_positional(v):
    b = np.zeros(3, np.uint8)
    np.copyto(b, v * 5 + 0.1, "unsafe")
    return np.sum(b * v)


def copyto_positional_where(v):
    b = np.zeros(3)
    np.copyto(b, v * 2, "same_kind", v > 2)
    return np.sum(b * v)


@pytest.mark.parametrize("f, args", [
    (where_log, [np.array([1.3, -2.4, 3.6])]), (where_broadcast, [V]), (where_list_mask, [V]),
    (unsafe_into_int, [V]), (copyto_unsafe_keyword, [V]), (copyto_unsafe_positional, [V]),
    (copyto_positional_where, [V]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_where_and_casting(f, args):
    check_all(f, *args)


def test_where_divide_passes_no_nan_from_the_unselected_entries():
    a, b = np.array([1.3, 2.4, 3.6]), np.array([0.0, 2.0, -1.5])  # b == 0 where the mask is off
    check_all(where_divide, a, b, wrt=0)
    g = grad(where_divide, 1)(a, b)
    np.testing.assert_allclose(g, [0.0, -2 * 2.4 ** 2 / 2.0 ** 3, -2 * 3.6 ** 2 / (-1.5) ** 3])


# -- writes into 0-d arrays, iterators into integer arrays --------------------------------------

def zero_d_copyto(x):
    y = np.zeros(())
    np.copyto(y, np.sum(x))
    return float(y) * 2


def zero_d_out(x):
    y = np.zeros(())
    np.sum(x * x, out=y)
    return y * 2 + 1.0


def zero_d_setitem(x):
    a = np.array(1.5)
    a[...] = x[0] * 2
    a[()] = a * x[2]
    return a * x[1]


def items_into_int(v):
    b = np.zeros(3, int)
    copyto(b, (v[i] * 2 for i in range(3)))
    return np.sum(b * v)


def items_into_bool(v):
    b = np.zeros(4, bool)
    copyto(b, map(np.sin, v))
    return np.sum(b[:3] * v)


@pytest.mark.parametrize("f", [zero_d_copyto, zero_d_out, zero_d_setitem, items_into_int, items_into_bool],
                         ids=lambda v: v.__name__)
def test_zero_d_and_iterator_writes(f):
    check_all(f, np.array([1.3, -2.4, 3.6]))


# -- out= into the slots of an array (`out=h[t]`) ----------------------------------------------

def out_rows_in_loop(X):
    Z = np.zeros((2, 3))
    for i in range(2):
        np.multiply(X[i], 2.0, out=Z[i])
    return np.sum(Z * X)


def out_recurrence(x):
    h = np.zeros((4, 3))
    h[0] = x
    for t in range(1, 4):
        np.tanh(h[t - 1] * 0.9 + x, out=h[t])
    return np.sum(h ** 2)


def out_slice_overlapping(x):
    y = x ** 2
    z = y[:2] * 1.0
    np.add(x[:2], x[1:], out=y[:2])
    return np.sum(y * x) + np.sum(z)


def out_row_returned(X):
    Z = np.zeros((2, 3))
    r = np.exp(X[0], out=Z[1])
    return np.sum(r * X[1]) + np.sum(Z)


def out_dot_rows(X):
    Z = np.zeros((2, 2))
    for i in range(2):
        np.dot(X, X[i], out=Z[i])
    return np.sum(Z ** 2)


@pytest.mark.parametrize("f, args", [
    (out_rows_in_loop, [X]), (out_recurrence, [V]), (out_slice_overlapping, [V]), (out_row_returned, [X]),
    (out_dot_rows, [X]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_out_into_slots(f, args):
    check_all(f, *args)


def out_buffer_row(X):
    Z = Buffer.zeros((2, 3))
    np.exp(X[0], out=Z[1])  # Z[1] is a copy: NumPy writes into it, not into Z
    return np.sum(Z.copy()) + np.sum(X)


def out_fancy_rows(X):
    Z = np.zeros((2, 3))
    idx = np.array([0, 1])
    np.exp(X, out=Z[idx])  # Z[idx] is a copy
    return np.sum(Z) + np.sum(X)


@pytest.mark.parametrize("f", [out_buffer_row, out_fancy_rows], ids=lambda v: v.__name__)
def test_out_into_a_copy_is_refused_or_right(f):
    try:
        g = grad(f)(X)
    except AdjointCompilerError as exc:
        assert "test_soundness_writes.py" in str(exc)
        return
    np.testing.assert_allclose(g, fd(f, [X], 0), rtol=1e-5, atol=1e-6)


def buffer_from_integers(p, x, w):
    b = Buffer(x)  # a Buffer holds floats, whatever it was made from
    b[...] = p
    b[::2] = p * p
    return np.sum(b.copy() * w)


def test_a_buffer_made_from_integers_takes_gradient():
    x, w = np.arange(6), np.linspace(0.5, 2.0, 6)
    for g in (grad(buffer_from_integers)(1.7, x, w), value_and_grad(buffer_from_integers)(1.7, x, w)[1]):
        np.testing.assert_allclose(g, w[1::2].sum() + 2 * 1.7 * w[::2].sum())


def fill_method(x):
    y = x * 2
    y.fill(x[0])
    z = np.zeros(3, int)
    z.fill(x[1] * 3)  # truncated: no gradient
    return np.sum(y * x) + np.sum(z * x)


def test_fill_is_a_write():
    check_all(fill_method, V)


def fill_of_views(x):
    y = x * 2
    y[2:].fill(np.sum(x))       # a view: writes into y
    m = np.outer(x, x)
    n = len(x)
    m[1, :n - 1].fill(x[0])     # a row's prefix
    m[..., 0].fill(x[1] * 3.0)
    return np.sum(y ** 2) + np.sum(m * m)


def fill_of_a_copy(x):
    y = x * 2
    y[[0, 2]].fill(5.0)         # fancy indexing: a copy, y unchanged
    return np.sum(y ** 2)


def test_fill_of_a_slice_writes_into_the_array_and_of_a_copy_is_not_taken_for_a_write():
    check_all(fill_of_views, V)
    with pytest.raises(AdjointCompilerError, match="fill"):  # (a no-op in NumPy: refused, not written)
        grad(fill_of_a_copy)(V)


def _index_ranks(v):
    m = v[0] > 0
    a = v[m]            # a 0-d boolean: adds an axis
    n = len(v)
    b = v[n - 1]        # an integer: removes one
    s = 0.0
    for i in range(3):
        s = s + v[i]    # a counter: removes one
    return np.sum(a) + b + s


def test_index_kinds_decide_ranks():
    from adjoint_compiler import frontend, ir, normalize, shapes, ssa
    from adjoint_compiler.naming import Namer

    source = frontend.read_function(_index_ranks)
    namer = Namer(set())
    fn = ssa.build(source, normalize.normalize(source, namer), namer, {"v": "num"})
    _, ranks = shapes.infer(fn, {fn.params[0]: 1})
    by_name = {s.target.name: s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target}
    assert by_name["a"] not in ranks or ranks[by_name["a"]] == 2
    assert ranks[by_name["b"]] == 0
    reads = [s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target
             and s.target.name.startswith("v_i")]
    assert reads and all(ranks[t] == 0 for t in reads)


def _add_square(a, u):
    a += u * u


def zero_d_written_and_scaled(u):
    a = np.array(0.5)
    for _ in range(2):
        _add_square(a, u)  # (a write into the caller's 0-d array)
        a *= 1.5  # compiled as `a = a * 1.5`: a number the next write cannot go into
    return a * u


def zero_d_written_and_written_scaled(u):
    a = np.array(0.5)
    for _ in range(2):
        _add_square(a, u)
        a[...] = a * 1.5
    return a * u


def test_a_zero_d_array_a_helper_writes_into_and_op_updates_is_refused_not_crashed():
    from adjoint_compiler.errors import MutationError
    with pytest.raises(MutationError, match="0-d array that is updated in place here"):
        grad(zero_d_written_and_scaled)(0.7)
    u = 0.7  # a = ((0.5 + u^2) 1.5 + u^2) 1.5, f = a u
    np.testing.assert_allclose(grad(zero_d_written_and_written_scaled)(u), 1.125 + 3.75 * 3 * u ** 2)


def double_buffer_read_by_first_names(u0):
    a = u0.copy()
    b = np.zeros(3)
    cur, nxt = a, b
    for _ in range(3):
        nxt[:] = np.sin(cur)
        cur, nxt = nxt, cur
    return np.sum(b)  # (the IR kept `b` from before the loop: a zero gradient)


def double_buffer_read_by_loop_names(u0):
    a = u0.copy()
    b = np.zeros(3)
    cur, nxt = a, b
    for _ in range(3):
        nxt[:] = np.sin(cur)
        cur, nxt = nxt, cur
    return np.sum(cur)


def test_a_name_held_before_a_swapping_loop_is_refused_where_read():
    from adjoint_compiler.errors import MutationError
    u0 = np.array([1.0, 2.0, 0.5])
    with pytest.raises(MutationError, match="held before the loop on line"):
        grad(double_buffer_read_by_first_names)(u0)
    s = np.sin
    np.testing.assert_allclose(grad(double_buffer_read_by_loop_names)(u0),
                               np.cos(s(s(u0))) * np.cos(s(u0)) * np.cos(u0))


def row_pointer_moved(x):
    y = np.zeros((2, 3))
    r = y[0]
    for _ in range(2):
        r += x  # (was written into row 0 on both trips: a gradient of [0, 1, 2])
        r = y[1]
    return np.sum(y * np.arange(6.0).reshape(2, 3))


def row_pointer_read_after_its_base_is_written(x):
    y = np.zeros((2, 3))
    r = y[0]
    s = 0.0
    for _ in range(2):
        s = s + np.sum(r * x)
        r = y[1]
    y[1] = 2 * x
    return s + np.sum(r * x)


def trajectory(x0):
    t = np.zeros((4, 2))
    cur = t[0]
    cur[:] = x0
    for i in range(3):
        nxt = t[i + 1]
        nxt[:] = cur + 0.1 * np.sin(cur)
        cur = nxt
    return np.sum(t ** 2) + np.sum(cur * x0)


def row_updated_twice_per_trip(x):
    y = np.ones((3, 3))
    r = y[0]
    for _ in range(3):
        r += x
        r *= 2
    return np.sum(y * y)


def test_a_view_a_loop_rebinds_is_refused_where_written_through_or_read_stale():
    from adjoint_compiler.errors import MutationError
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(MutationError, match="a loop rebinds to another view or value") as info:
        grad(row_pointer_moved)(x)
    assert "r += x" in str(info.value)
    with pytest.raises(MutationError, match="used after `y` is written"):
        grad(row_pointer_read_after_its_base_is_written)(x)


def test_a_view_a_loop_rebinds_to_another_row_it_only_reads_is_followed():
    check_all(trajectory, np.array([0.3, -0.7]))
    x = np.array([1.0, 2.0, 3.0])  # y[0] = 8 + 14 x
    np.testing.assert_allclose(grad(row_updated_twice_per_trip)(x), 28 * (8 + 14 * x))


def widened_by_an_update(x):
    a = np.zeros(3)
    a += x[:, None]  # (NumPy: non-broadcastable output operand; was a (3, 3) array)
    return np.sum(a)


def integers_updated_by_floats(x):
    a = np.arange(3)
    for _ in range(2):
        a += x  # (NumPy: cannot cast float64 to int64; was a float array)
    return np.sum(a * x)


def integers_updated_through_a_view(x):
    a = np.ones((2, 3), dtype=int)
    v = a[0]
    v *= x  # (NumPy: cannot cast; the write into `a` had cast the floats to integers)
    return np.sum(a * x)


def slice_of_integers_updated(x):
    a = np.arange(4)
    a[0:2] += x[:2]  # (NumPy: cannot cast; the write cast the floats to integers)
    return np.sum(a * x[0])


def dict_item_updated(x):
    d = {"a": np.zeros(3)}
    d["a"] += x[:, None]
    return np.sum(d["a"])


def helper_widens(b, x):
    b -= np.ones((2, 3)) * x
    return b


def updated_by_a_helper(x):
    return np.sum(helper_widens(x * 1.0, x))


@pytest.mark.parametrize("f", [widened_by_an_update, integers_updated_by_floats,
                               integers_updated_through_a_view, updated_by_a_helper, slice_of_integers_updated,
                               dict_item_updated])
def test_an_update_numpy_refuses_raises_as_numpy_does(f):
    x = np.array([0.5, 1.5, 2.5])
    with pytest.raises((TypeError, ValueError)):
        f(x.copy())
    before = x.copy()
    with pytest.raises((TypeError, ValueError)):
        value_and_grad(f)(x)
    np.testing.assert_array_equal(x, before)


def accumulated(x):
    s = 0.0
    a = np.zeros((2, 3))
    for k in range(2):
        s += np.sum(x * k)
        a += x  # (a (3,) update into (2, 3): NumPy broadcasts it)
    return s + np.sum(a ** 2)


def test_updates_numpy_accepts_still_work():
    check_all(accumulated, V)


def written_through_broadcast_to(x):
    y = np.broadcast_to(x, (3, 3))
    y[0, 0] = 1.0  # (NumPy: read-only; the base's slot was written, a gradient of [0, 3, 3])
    return np.sum(y)


def updated_through_a_diagonal(x):
    m = np.outer(x, x)
    d = m.diagonal()[1:]
    d *= 2.0
    return np.sum(m)


def diagonal_copied_then_updated(x):
    m = np.outer(x, x)
    d = np.diagonal(m).copy()
    d *= 2.0
    return np.sum(m) + np.sum(d)


def test_a_write_through_a_read_only_view_is_refused_and_a_copy_is_not():
    from adjoint_compiler.errors import MutationError
    for f in (written_through_broadcast_to, updated_through_a_diagonal):
        with pytest.raises(ValueError, match="read-only"):
            f(V.copy())
        with pytest.raises(MutationError, match="read-only view") as info:
            grad(f)(V)
        assert info.value.loc is not None
    check_all(diagonal_copied_then_updated, V)


def double_buffer_squared(u):
    a = u * 1.0
    b = u * 0.5
    cur, nxt = a, b
    for _ in range(2):
        nxt[...] = cur * cur * 0.5
        cur, nxt = nxt, cur
    return np.sum(cur ** 2)


def test_a_pullback_of_a_double_buffer_gives_the_same_gradient_twice():
    u = np.array([0.3, -0.5, 0.8])
    _, pullback = vjp(double_buffer_squared, u)
    first = pullback(1.0)[0]  # f = sum(u^8 / 64): the backward put b's slots back, not `cur`'s final state
    np.testing.assert_allclose(first, u ** 7 / 8)
    np.testing.assert_allclose(pullback(1.0)[0], first)


def written_per_trip(u0):
    total = 0.0
    for k in range(2):
        a = np.array(u0 * (k + 1.0))
        a[0] = a[0] * 0.9 + a[-1]
        total = total + np.sum(a * u0)
    return total


def test_a_pullback_run_twice_starts_each_time_from_the_arrays_the_forward_pass_left():
    """Each trip's array is restored in place by the pullback (its slot before the write): the
    arrays of earlier trips, kept on the tape, are put back as the forward pass left them before
    every run (the second run read the first trip's array already restored: another gradient)."""
    from test_core import fd_grad

    u0 = np.array([0.4, -0.3, 0.2, 0.5, -0.6])
    expected = fd_grad(written_per_trip, u0)
    _, pullback = vjp(written_per_trip, u0)
    first = pullback(1.0)[0].copy()
    np.testing.assert_allclose(first, expected, atol=1e-6)
    np.testing.assert_allclose(pullback(1.0)[0], expected, atol=1e-6)

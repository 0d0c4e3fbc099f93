"""Views, augmented assignment through them, and arrays held in containers (issue 12, families 1-3).

A write or `op=` through a view writes its base, as NumPy does; a view read after its base is
written sees the write. Sharing the compiler cannot follow (containers, unknown operations) is
refused with a located MutationError, never differentiated as a snapshot. Every gradient here is
checked against central finite differences (`check`).
"""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import MutationError, grad, hessian, value_and_grad, vjp
from test_core import check

rng = np.random.default_rng(12)
Y = rng.uniform(0.5, 2.0, (3, 4))
V = rng.uniform(0.5, 2.0, 6)


# -- family 1: augmented assignment through a view updates its base -----------------------------

def rows_scaled(A):
    A = A.copy()
    for row in A:
        row *= 2.0
    return np.sum(A ** 2)


def rows_normalized(P):
    P = P * 1.0
    for row in P:
        row /= row.sum()
    return np.sum(P ** 3)


def rows_by_index(A):
    B = A + 0.0
    for i in range(B.shape[0]):
        r = B[i]
        r -= np.mean(r)
    return np.sum(B * A)


def rows_centered_twice(A):
    B = A + 0.0
    for r in B:
        r -= r.mean()
        r *= r
    return np.sum(B)


def columns_through_transpose(A):
    B = A * 1.0
    for col in B.T:
        col /= np.sqrt(np.sum(col * col))
    return np.sum(B * A)


def slice_view_scaled(y):
    y = y * 1.0
    v = y[0:2]
    v *= 3.0
    return np.sum(y ** 2)


def transpose_bound_then_updated(A):
    B = A * 1.0
    Bt = B.T
    Bt += 1.0
    Bt *= B.T
    return np.sum(B)


def reshape_view_written(y):
    y = y * 2.0
    v = y.reshape(2, 3)
    v[0] -= 1.0
    v[1] *= v[0]
    return np.sum(y ** 2)


def nested_subscript_writes(A):
    B = A * 1.0
    B[0][1] = 7.0
    B.T[2] *= 3.0
    np.flip(B)[0] = B[1, 1]
    return np.sum(B ** 2)


@pytest.mark.parametrize("f, arg", [
    (rows_scaled, Y), (rows_normalized, Y), (rows_by_index, Y), (rows_centered_twice, Y),
    (columns_through_transpose, Y), (slice_view_scaled, V), (transpose_bound_then_updated, Y),
    (reshape_view_written, V), (nested_subscript_writes, Y),
])
def test_update_through_view_writes_the_base(f, arg):
    value, _ = value_and_grad(f)(arg)
    assert np.isclose(value, f(arg.copy()))
    check(f, arg)


def rows_of_a_vector_are_numbers(v):
    w = v * 1.0
    for x in w:
        x *= 10.0  # a number: rebinding, `w` unchanged
    return np.sum(w ** 2)


def test_items_of_a_vector_are_copies():
    value, g = value_and_grad(rows_of_a_vector_are_numbers)(V)
    assert np.isclose(value, np.sum(V ** 2))
    np.testing.assert_allclose(g, 2 * V)


# -- family 2: view-ness by an allow-list -------------------------------------------------------

def flipped_then_written(a):
    a = a * 1.0
    b = np.flipud(a)
    b[0] = 0.0
    return np.sum(a ** 2)


def contiguous_alias_written(a):
    a = a * 1.0
    b = np.ascontiguousarray(a)
    b[0] = 5.0
    return np.sum(a ** 2) + np.sum(b)


def asanyarray_alias_written(a):
    a = a * 1.0
    b = np.asanyarray(a)
    b[1] *= a[2]
    return np.sum(a ** 2)


def index_held_in_a_variable(a):
    a = a * 1.0
    idx = slice(1, 3)
    v = a[idx]
    v[0] = 7.0
    return np.sum(a ** 2)


def tuple_of_slices_built_at_run_time(A):
    A = A * 1.0
    idx = (slice(0, 1), slice(None))
    v = A[idx]
    v[0, 0] = 7.0
    return np.sum(A ** 2)


def swap_through_an_element(a):
    a = a * 1.0
    t = a[0]
    a[0] = a[2]
    a[2] = t
    return np.sum(a * np.arange(6.0))


def view_read_after_base_written(a):
    a = a * 1.0
    v = a[::-1]
    a[0] = 0.0
    return np.sum(v ** 2)


def view_method_written(a):
    a = a * 1.0
    v = a.view()
    v[0] = 0.0
    return np.sum(a ** 2)


def copy_from_reshape_is_not_a_view(A):
    B = A.T * 1.0            # not C-contiguous: reshape copies
    r = B.reshape(-1)
    r[0] = 100.0             # writes the copy only
    return np.sum(B ** 2) + np.sum(r)


@pytest.mark.parametrize("f, arg", [
    (flipped_then_written, V), (contiguous_alias_written, V), (asanyarray_alias_written, V),
    (index_held_in_a_variable, V), (tuple_of_slices_built_at_run_time, Y), (swap_through_an_element, V),
    (view_read_after_base_written, V), (copy_from_reshape_is_not_a_view, Y), (view_method_written, V),
])
def test_views_decided_by_allow_list(f, arg):
    value, _ = value_and_grad(f)(arg)
    assert np.isclose(value, f(arg.copy()))
    check(f, arg)


# -- family 3: containers hold references -------------------------------------------------------

def list_of_rows_then_base_written(A):
    A = A * 1.0
    rows = list(A)
    A[0] *= 3.0
    return np.sum(rows[0] ** 2)


def appended_then_written(u):
    u = u * 1.0
    hist = []
    hist.append(u)
    u[0] = 10.0
    return np.sum(hist[0] ** 2)


def tuple_then_written(u):
    u = u * 1.0
    t = (u, 1.0)
    u[0] = 10.0
    return np.sum(t[0] ** 2)


def zip_over_rows_updated(A):
    A = A * 1.0
    rows = list(A)
    s = 0.0
    for a, b in zip(rows, [1.0, 2.0]):
        a *= b
        s = s + np.sum(a)
    return s + np.sum(A ** 2)


def appended_then_updated_in_place(u):
    u = u * 1.0
    hist = [u]
    u += 1.0
    return np.sum(hist[0] ** 2)


def element_of_a_list_written(u):
    u = u * 1.0
    L = [u, u * 2]
    L[0][0] = 5.0
    return np.sum(u ** 2)


def dict_then_written(u):
    u = u * 1.0
    d = {"u": u}
    u[1] = 0.0
    return np.sum(d["u"] ** 2)


@pytest.mark.parametrize("f, arg, line", [
    (dict_then_written, V, 'return np.sum(d["u"] ** 2)'),
    (list_of_rows_then_base_written, Y, "return np.sum(rows[0] ** 2)"),
    (appended_then_written, V, "return np.sum(hist[0] ** 2)"),
    (tuple_then_written, V, "return np.sum(t[0] ** 2)"),
    (zip_over_rows_updated, Y, "a *= b"),
    (appended_then_updated_in_place, V, "return np.sum(hist[0] ** 2)"),
    (element_of_a_list_written, V, "L[0][0] = 5.0"),
])
def test_containers_holding_written_arrays_are_refused(f, arg, line):
    with pytest.raises(MutationError) as info:
        grad(f)(arg)
    assert line in str(info.value), str(info.value)
    assert info.value.loc is not None


def tuple_read_before_write(u):
    u = u * 1.0
    t = (u, 2.0)
    s = np.sum(t[0] * t[1])
    u[0] = 10.0
    return s + np.sum(u)


def list_of_copies(A):
    rows = [r.copy() for r in A]
    A = A * 2.0
    A[0] = 0.0
    return np.sum(rows[0] ** 2) + np.sum(A)


@pytest.mark.parametrize("f, arg", [(tuple_read_before_write, V), (list_of_copies, Y)])
def test_containers_without_stale_reads_work(f, arg):
    check(f, arg)


# -- found by the family generators -------------------------------------------------------------

def tuple_then_updated_in_place(A):
    B = A.copy()
    c = (B, 1.0)
    B *= 1.5
    return np.sum(c[0] ** 2) + np.sum(B * A)


def row_of_a_list_updated(A):
    B = A * 1.0
    rows = list(B)
    r = rows[0]
    r -= 2.0
    return np.mean(B ** 3) + np.sum(rows[0])


@pytest.mark.parametrize("f", [tuple_then_updated_in_place, row_of_a_list_updated])
def test_items_of_containers_updated_in_place_are_refused(f):
    with pytest.raises(MutationError):
        grad(f)(Y)


def number_in_a_tuple_then_incremented(x):
    s = (x, 2.0)
    x += 1.0
    return s[0] * s[1] + x


def list_of_zeros_written_in_a_while_loop(x):
    out = list(np.zeros(2))
    i = 0
    while i < 2:
        out[i] = np.sin(x[i])
        i += 1
    return out[0] * out[-1] + out[1]


def test_numbers_and_list_slots_are_not_arrays_shared():
    check(number_in_a_tuple_then_incremented, 0.7)
    check(list_of_zeros_written_in_a_while_loop, V[:2])


# -- an argument's memory layout: `reshape`/`ravel` are views or copies by the strides -----------------
def scaled_through_reshape(A, s):
    B = A.reshape(-1)  # a view of a C-ordered A, a copy of any other
    B[0] *= s
    return np.sum(A * np.arange(1.0, 7.0).reshape(A.shape))


LAYOUTS = {  # each call makes the argument afresh, in its layout
    "C": lambda: np.arange(1.0, 7.0).reshape(2, 3),
    "F": lambda: np.arange(1.0, 7.0).reshape(3, 2).T,
    "reversed": lambda: np.arange(1.0, 7.0).reshape(2, 3)[:, ::-1],
    "gapped": lambda: np.arange(1.0, 13.0).reshape(4, 3)[::2],
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_private_copy_of_an_argument_keeps_its_layout(layout):
    from adjoint_compiler import runtime as rt

    make = LAYOUTS[layout]
    assert rt.layout_copy(make()).strides == make().strides
    first = make().reshape(-1)[0]
    expected_s = first * 1.0 if layout == "C" else 0.0  # (only a C-ordered A's reshape is a view)
    value, (_, gs) = value_and_grad(scaled_through_reshape, wrt=(0, 1))(make(), 2.0)
    assert np.isclose(value, scaled_through_reshape(make(), 2.0)) and np.isclose(gs, expected_s)
    out, pullback = vjp(scaled_through_reshape, make(), 2.0)
    assert np.isclose(out, value) and np.isclose(pullback(1.0)[1], expected_s)


def copy_by_a_mask_then_written(x):
    y = x * 2.0
    m = x > 0
    z = y[m]            # a boolean array index: a copy, whatever writes y after
    y[m] = 0.0
    idx = np.arange(1, 4)
    w = y[idx]          # an integer array index: a copy too
    y[idx[:2]] = 1.0
    return np.sum(z ** 2) + np.sum(w * x[:3]) + np.sum(y * x)


def test_an_index_array_held_in_a_variable_reads_a_copy():
    """`y[m]` with `m` an index array (known from ranks) copies: reading it after `y` is written
    is its old values (it was refused as a possible view)."""
    x = np.array([0.7, -0.4, 1.3, 0.25, -0.9])
    eps = 1e-6
    fd = np.array([(copy_by_a_mask_then_written(x + eps * e) - copy_by_a_mask_then_written(x - eps * e)) / (2 * eps)
                   for e in np.eye(5)])
    np.testing.assert_allclose(grad(copy_by_a_mask_then_written)(x), fd, rtol=1e-6, atol=1e-8)


def masked_update(x):
    y = x * 1.0
    y[x > 0] *= 2.0
    return np.sum(y ** 3)


def test_the_gradient_of_a_masked_update_differentiates_again():
    """Its generated gradient reads `y[x_gt_0]` (a copy) after writing `y[x_gt_0]`."""
    x = np.array([0.7, -0.4, 1.3, 0.25, 0.9])
    c = np.where(x > 0, 2.0, 1.0)
    np.testing.assert_allclose(hessian(masked_update)(x), np.diag(6 * x * c ** 3), rtol=1e-10)


def fortran_view_written(x, order):
    B = x.reshape(3, 2).T * 1.0  # NumPy keeps the Fortran layout of `x.reshape(3, 2).T`
    v = B.ravel(order)
    v[1] = 0.0
    return np.sum(B * np.arange(1.0, 7.0).reshape(2, 3)) + np.sum(v ** 2)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_write_through_a_ravel_in_c_or_f_order(order):
    check(lambda x: fortran_view_written(x, order), V)


@pytest.mark.parametrize("order", ["K", "A"])
def test_a_write_through_a_ravel_in_memory_order_is_refused(order):
    """`ravel('K')` of a Fortran-ordered array is a view in memory order: `v[1]` is `B[1, 0]`.
    The gradient wrote `B[0, 1]`, a wrong value and gradient."""
    with pytest.raises(MutationError, match="may share memory"):
        grad(lambda x: fortran_view_written(x, order))(V)


def diagonal_of_a_matrix_updated(v):
    d = np.diag(np.outer(v, v))
    d += 1.0  # (NumPy: "output array is read-only")
    return np.sum(d ** 2)


def test_an_update_of_the_diagonal_np_diag_reads_from_a_matrix_is_refused_as_numpy_raises():
    from adjoint_compiler.errors import MutationError

    v = np.array([0.3, 0.5, 0.2])
    with pytest.raises(ValueError, match="read-only"):
        diagonal_of_a_matrix_updated(v)
    with pytest.raises(MutationError, match="read-only view `np.diag` makes of a matrix"):
        grad(diagonal_of_a_matrix_updated)(v)

"""End-to-end tests of in-place writes: `b[idx] = v`, augmented assignment, `copyto` / `np.copyto`
into Buffers and into plain ndarrays (created in the function or passed in), ODE right-hand sides
that write into their argument, self-aliasing writes, overwritten values read nonlinearly, and the
MutationError cases.

Every gradient is checked against central finite differences (`check` from test_core, which wraps
`check_grads` and also checks the value contract: inputs unchanged, no aliasing, gradient types)
or against a gradient derived by hand -- never against the compiler itself.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from adjoint_compiler import Buffer, MutationError, copyto, grad, vjp
from test_core import check, fd_grad

RNG = np.random.default_rng(2468)


def rand(*shape):
    return RNG.standard_normal(shape)


def check_mutating(f, *args, wrt=0):
    """For an `f` that writes into some of its arguments: the compiled gradient against full
    central differences taken on fresh copies of *every* argument (check_grads passes the
    arguments it does not perturb by reference, so `f` would corrupt them), plus the contract:
    the caller's arrays are unchanged and gradients have the arguments' types and shapes."""
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    wrts = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    g = grad(f, wrt)(*args)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg="grad modified the caller's array")
    gs = (g,) if isinstance(wrt, int) else g
    assert len(gs) == len(wrts)
    for gi, i in zip(gs, wrts):
        def h(z, i=i):
            fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in before]
            fresh[i] = z
            return f(*fresh)
        expected = fd_grad(h, before[i])
        if isinstance(before[i], np.ndarray):
            assert isinstance(gi, np.ndarray) and gi.shape == before[i].shape and gi.dtype.kind == "f"
            assert not any(np.may_share_memory(gi, a) for a in args if isinstance(a, np.ndarray))
        else:
            assert isinstance(gi, float) or isinstance(gi, np.floating)
        np.testing.assert_allclose(gi, expected, rtol=1e-5, atol=1e-6,
                                   err_msg=f"gradient of argument {i} vs finite differences")
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in before]
    out, pullback = vjp(f, *args)
    np.testing.assert_allclose(out, f(*fresh), rtol=1e-12)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg="vjp modified the caller's array")
    return g


# ---------------------------------------------------------------------------------------------
# 1. the motivating cases
# ---------------------------------------------------------------------------------------------

def fill_ellipsis(p):
    b = Buffer(np.array([1.0, 2.0, 3.0]))
    b[...] = p
    return np.sum(b.copy())


def fill_ellipsis_len1(p):
    b = Buffer(np.array([1.0]))
    b[...] = p
    return np.sum(b.copy())


def test_fill_ellipsis_is_three():
    g = check(fill_ellipsis, 0.7)
    assert g == pytest.approx(3.0, abs=1e-12)


def test_fill_ellipsis_length_one():
    g = check(fill_ellipsis_len1, -1.3)
    assert g == pytest.approx(1.0, abs=1e-12)


def copyto_generator(p):
    b = Buffer(np.array([1.0, 2.0, 3.0]))
    copyto(b, (p * i for i in range(1, 4)))
    return np.sum(b.copy())


def copyto_listcomp(p):
    b = Buffer(np.array([1.0, 2.0, 3.0]))
    copyto(b, [p * i for i in range(1, 4)])
    return np.sum(b.copy())


def copyto_ndarray(p):
    b = Buffer(np.array([1.0, 2.0, 3.0]))
    copyto(b, p * np.arange(1.0, 4.0))
    return np.sum(b.copy())


def copyto_islice(p):
    b = Buffer(np.array([1.0, 2.0, 3.0]))
    copyto(b, itertools.islice((p * i for i in range(1, 10)), 3))
    return np.sum(b.copy())


def times(a, c):
    return a * c


def copyto_map(p):
    b = Buffer(np.array([1.0, 2.0, 3.0]))
    copyto(b, map(times, [p, p, p], [1.0, 2.0, 3.0]))
    return np.sum(b.copy())


@pytest.mark.parametrize("f", [copyto_generator, copyto_listcomp, copyto_ndarray, copyto_islice,
                               copyto_map])
def test_copyto_sources_are_six(f):
    g = check(f, 0.4)
    assert g == pytest.approx(6.0, abs=1e-12)


def three_snapshots(x):
    b = Buffer(x)
    t1 = np.sum(b.copy())
    b[0] = 30.0
    t2 = np.sum(b.copy())
    copyto(b, (2.0 * i for i in range(1, 6)))
    t3 = np.sum(b.copy())
    return t1 + t2 + t3


def test_three_snapshots_exact():
    x = np.arange(1.0, 11.0)
    g = check(three_snapshots, x)
    np.testing.assert_array_equal(g, [1, 2, 2, 2, 2, 3, 3, 3, 3, 3])


def lv_rhs(du, u, p, t):
    du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
    du[1] = -p[2] * u[1] + p[3] * u[0] * u[1]


def lv_euler_buffer(u0, p):
    u = u0
    du = Buffer.zeros(2)
    dt = 0.05
    for k in range(20):
        lv_rhs(du, u, p, k * dt)
        u = u + dt * du.copy()
    return np.sum(u * u) + u[0]


def lv_euler_ndarray(u0, p):
    u = u0
    du = np.zeros(2)
    dt = 0.05
    for k in range(20):
        lv_rhs(du, u, p, k * dt)
        u = u + dt * du
    return np.sum(u * u) + u[0]


def lv_rk4_buffer(u0, p):
    u = u0
    du = Buffer.zeros(2)
    dt = 0.1
    t = 0.0
    for k in range(8):
        lv_rhs(du, u, p, t)
        k1 = du.copy()
        lv_rhs(du, u + 0.5 * dt * k1, p, t + 0.5 * dt)
        k2 = du.copy()
        lv_rhs(du, u + 0.5 * dt * k2, p, t + 0.5 * dt)
        k3 = du.copy()
        lv_rhs(du, u + dt * k3, p, t + dt)
        k4 = du.copy()
        u = u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return np.sum(u * u) + u[1]


def lv_rk4_ndarray(u0, p):
    u = u0
    du = np.zeros(2)
    dt = 0.1
    t = 0.0
    for k in range(8):
        lv_rhs(du, u, p, t)
        k1 = du.copy()
        lv_rhs(du, u + 0.5 * dt * k1, p, t + 0.5 * dt)
        k2 = du.copy()
        lv_rhs(du, u + 0.5 * dt * k2, p, t + 0.5 * dt)
        k3 = du.copy()
        lv_rhs(du, u + dt * k3, p, t + dt)
        k4 = du.copy()
        u = u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return np.sum(u * u) + u[1]


def lv_rk4_separate_ndarrays(u0, p):
    u = u0
    dt = 0.1
    t = 0.0
    k1 = np.zeros(2)
    k2 = np.zeros(2)
    k3 = np.zeros(2)
    k4 = np.zeros(2)
    for k in range(8):
        lv_rhs(k1, u, p, t)
        lv_rhs(k2, u + 0.5 * dt * k1, p, t + 0.5 * dt)
        lv_rhs(k3, u + 0.5 * dt * k2, p, t + 0.5 * dt)
        lv_rhs(k4, u + dt * k3, p, t + dt)
        u = u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return np.sum(u * u) + u[1]


LV_U0 = np.array([1.0, 0.8])
LV_P = np.array([1.1, 0.4, 0.9, 0.3])


@pytest.mark.parametrize("f", [lv_euler_buffer, lv_euler_ndarray, lv_rk4_buffer, lv_rk4_ndarray,
                               lv_rk4_separate_ndarrays])
def test_lotka_volterra_inplace_rhs(f):
    check(f, LV_U0, LV_P, wrt=(0, 1))


def zero_rhs(du, u, p, t):
    du[...] = 0.0


def zero_rhs_into_buffer(u, p, t):
    du = Buffer(u)
    zero_rhs(du, u, p, t)
    return du.copy()


def test_zero_rhs_vjp_gives_zeros_not_none():
    u = np.array([0.5, -1.0, 2.0])
    p = np.array([1.0, 2.0])
    out, pullback = vjp(zero_rhs_into_buffer, u, p, 0.3)
    np.testing.assert_array_equal(out, np.zeros(3))
    gu, gp, gt = pullback(np.array([1.0, -2.0, 3.0]))
    assert gu is not None and gp is not None and gt is not None
    assert isinstance(gu, np.ndarray) and gu.shape == (3,)
    assert isinstance(gp, np.ndarray) and gp.shape == (2,)
    np.testing.assert_array_equal(gu, 0.0)
    np.testing.assert_array_equal(gp, 0.0)
    assert isinstance(gt, float) and gt == 0.0


# ---------------------------------------------------------------------------------------------
# 2. writes: single slots, slices, broadcasts
# ---------------------------------------------------------------------------------------------

def repeated_slot(x):
    b = Buffer.zeros(3)
    b[1] = x[0]
    b[1] = x[1] * 2.0
    b[1] = np.sin(x[2]) * x[1]
    b[0] = x[0] ** 2
    return np.sum(b.copy() ** 2)


def test_repeated_writes_to_one_slot():
    g = check(repeated_slot, rand(3))
    assert g.shape == (3,)


def repeated_slot_with_reads(x):
    b = Buffer.zeros(2)
    b[0] = x[0]
    s = b[0] * b[0]
    b[0] = x[1]
    s = s + b[0] ** 3
    b[0] = x[2] * x[0]
    return s + b[0] * b[1]


def test_repeated_writes_with_reads_between():
    check(repeated_slot_with_reads, rand(3))


def overlapping_slices(x, y, w):
    b = Buffer(x)
    b[0:3] = y[0:3] * 2.0
    b[2:5] = np.sin(y[1:4])
    b[1:4] = b[0:3] * y[3]
    return np.sum(b.copy() * w)


def test_overlapping_slices():
    check(overlapping_slices, rand(6), rand(5), rand(6), wrt=(0, 1, 2))


def scalar_broadcast_2d(A, s):
    b = Buffer(A)
    b[...] = s
    b[1] = s ** 2
    b[2, 1:3] = np.sin(s)
    return np.sum(b.copy() * A)


def test_scalar_broadcast_into_2d():
    check(scalar_broadcast_2d, rand(3, 4), 0.6, wrt=(0, 1))


def row_broadcast(A, row):
    b = Buffer(A)
    b[1:, :] = row * 2.0
    return np.sum(np.tanh(b.copy()) * A)


def test_row_broadcast_into_2d():
    check(row_broadcast, rand(3, 4), rand(4), wrt=(0, 1))


def column_broadcast(A, col):
    b = Buffer(A)
    b[:, 1:3] = col.reshape(3, 1)
    b[0, :] = col[0]
    return np.sum(b.copy() ** 2 * A)


def test_column_broadcast_into_2d():
    check(column_broadcast, rand(3, 4), rand(3), wrt=(0, 1))


def column_broadcast_none(A, col):
    b = Buffer.zeros_like(A)
    b[:, :] = col[:, None]
    return np.sum(b.copy() * A)


def test_column_broadcast_with_none():
    A, col = rand(3, 4), rand(3)
    g = check(column_broadcast_none, A, col, wrt=(0, 1))
    np.testing.assert_allclose(g[1], A.sum(axis=1), rtol=1e-12)


def ndarray_broadcast(A, row):
    out = np.zeros((3, 4))
    out[...] = row
    out[1] = row * row
    out[:, 0] = A[:, 1]
    return np.sum(out * A)


def test_broadcast_into_local_ndarray():
    check(ndarray_broadcast, rand(3, 4), rand(4), wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# masks
# ---------------------------------------------------------------------------------------------

MASK6 = np.array([True, False, True, True, False, False])


def mask_setitem_scalar(x, p):
    b = Buffer(x)
    b[MASK6] = p
    return np.sum(b.copy() ** 2)


def mask_setitem_array(x, y):
    b = Buffer(x)
    b[MASK6] = y[MASK6] * 3.0
    return np.sum(np.sin(b.copy()))


def mask_from_data(x, y):
    b = Buffer(x)
    b[x > 0.0] = np.exp(y[x > 0.0])
    return np.sum(b.copy() * y)


def copyto_where(x, y):
    b = Buffer(x)
    copyto(b, y * 2.0, where=MASK6)
    return np.sum(b.copy() ** 3)


def copyto_where_scalar(x, p):
    b = Buffer(x)
    copyto(b, p, where=MASK6)
    return np.sum(b.copy() * x)


def np_copyto_where(x, y):
    out = np.zeros(6)
    np.copyto(out, x)
    np.copyto(out, y * y, where=MASK6)
    return np.sum(out * x)


def np_copyto_where_argument(x, y):
    np.copyto(x, y, where=MASK6)
    return np.sum(x ** 2)


def test_mask_setitem_scalar():
    x = rand(6)
    g = check(mask_setitem_scalar, x, 0.9, wrt=(0, 1))
    np.testing.assert_allclose(g[0], np.where(MASK6, 0.0, 2 * x), rtol=1e-12)
    assert g[1] == pytest.approx(2 * 0.9 * 3, rel=1e-12)


def test_mask_setitem_array():
    check(mask_setitem_array, rand(6), rand(6), wrt=(0, 1))


def test_mask_computed_from_data():
    x = np.array([0.5, -0.7, 1.2, -0.3, 0.9, -1.5])
    check(mask_from_data, x, rand(6), wrt=(0, 1))


def test_copyto_where_mask():
    check(copyto_where, rand(6), rand(6), wrt=(0, 1))


def test_copyto_where_scalar():
    check(copyto_where_scalar, rand(6), 0.3, wrt=(0, 1))


def test_np_copyto_where():
    x = rand(6)
    g = check(np_copyto_where, x, rand(6), wrt=(0, 1))
    assert g[0].shape == (6,)


def test_np_copyto_where_into_argument():
    x, y = rand(6), rand(6)
    g = check_mutating(np_copyto_where_argument, x, y, wrt=(0, 1))
    np.testing.assert_allclose(g[0], np.where(MASK6, 0.0, 2 * x), rtol=1e-12)
    np.testing.assert_allclose(g[1], np.where(MASK6, 2 * y, 0.0), rtol=1e-12)


def mask_2d(A, B):
    b = Buffer(A)
    b[A > 0.0] = B[A > 0.0] ** 2
    return np.sum(b.copy() * B)


def test_mask_2d():
    A = np.array([[0.5, -0.4, 1.1], [-0.8, 0.3, -1.2]])
    check(mask_2d, A, rand(2, 3), wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# self-aliasing writes
# ---------------------------------------------------------------------------------------------

def shift_buffer(x):
    b = Buffer(x)
    b[1:] = b[:-1] * 2.0
    return np.sum(b.copy() ** 2 * np.arange(1.0, 6.0))


def shift_ndarray(x):
    b = x * 1.0
    b[1:] = b[:-1] * 2.0
    return np.sum(b ** 2 * np.arange(1.0, 6.0))


def reverse_buffer(x):
    b = Buffer(x)
    b[:] = b[::-1]
    return np.sum(b.copy() * np.arange(1.0, 6.0)) + b[0] ** 2


def reverse_ndarray(x):
    b = np.exp(x)
    b[:] = b[::-1]
    return np.sum(b * np.arange(1.0, 6.0)) + b[0] ** 2


def shift_argument(x):
    x[1:] = x[:-1] * 2.0
    return np.sum(x ** 2 * np.arange(1.0, 6.0))


@pytest.mark.parametrize("f", [shift_buffer, shift_ndarray, reverse_buffer, reverse_ndarray,
                               shift_argument])
def test_self_aliasing(f):
    check(f, rand(5))


def test_shift_analytic():
    x = rand(5)
    w = np.arange(1.0, 6.0)
    expected = np.zeros(5)
    expected[0] = 2 * x[0] * w[0]
    expected[:4] += 2 * (2 * x[:4]) * 2 * w[1:]
    np.testing.assert_allclose(grad(shift_buffer)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(grad(shift_ndarray)(x), expected, rtol=1e-12)


def swap_halves(x):
    b = Buffer(x)
    b[0:2], b[2:4] = b[2:4] * 1.0, b[0:2] * 3.0
    return np.sum(b.copy() * np.array([1.0, 2.0, 3.0, 4.0]))


def test_swap_halves_tuple_assign():
    check(swap_halves, rand(4))


# ---------------------------------------------------------------------------------------------
# loops: read-after-write, write-after-read
# ---------------------------------------------------------------------------------------------

def recurrence_buffer(x):
    b = Buffer.zeros(6)
    b[0] = x[0]
    for i in range(1, 6):
        b[i] = b[i - 1] * x[i] + np.sin(b[i - 1])
    return np.sum(b.copy())


def recurrence_ndarray(x):
    b = np.zeros(6)
    b[0] = x[0]
    for i in range(1, 6):
        b[i] = b[i - 1] * x[i] + np.sin(b[i - 1])
    return b[5] + b[2] * b[3]


def test_read_after_write_loop_buffer():
    check(recurrence_buffer, rand(6))


def test_read_after_write_loop_ndarray():
    check(recurrence_ndarray, rand(6))


def write_after_read(x):
    b = Buffer(x)
    y = b[2]
    b[2] = 0.0
    return y * np.sum(b.copy()) + y ** 2


def test_write_after_read():
    x = rand(4)
    g = check(write_after_read, x)
    s = x.sum() - x[2]
    expected = np.full(4, x[2])
    expected[2] = s + 2 * x[2]
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def write_same_slot_in_loop(x, n):
    b = Buffer.zeros(2)
    b[0] = 1.0
    for i in range(n):
        b[0] = b[0] * x[0] + x[1]
        b[1] = b[1] + b[0] ** 2
    return b[1]


@pytest.mark.parametrize("n", [0, 1, 4])
def test_overwrite_same_slot_in_loop(n):
    check(write_same_slot_in_loop, np.array([0.7, 0.3]), n)


def cumulative_product(x):
    b = Buffer(np.ones(5))
    for i in range(5):
        b[i:] *= x[i]
    return np.sum(b.copy())


def test_cumulative_product_inplace():
    x = RNG.uniform(0.5, 1.5, 5)
    g = check(cumulative_product, x)
    np.testing.assert_allclose(g, fd_grad(lambda z: np.sum(np.cumprod(z)), x), rtol=1e-6)


def while_write(x):
    b = Buffer(x)
    i = 0
    while i < 4:
        b[i + 1] = b[i + 1] + np.tanh(b[i])
        i = i + 1
    return np.sum(b.copy() ** 2)


def test_write_in_while_loop():
    check(while_write, rand(5))


# ---------------------------------------------------------------------------------------------
# augmented assignment
# ---------------------------------------------------------------------------------------------

def aug_slices(x, y):
    b = Buffer(x)
    b[1:3] += y[0:2]
    b[::2] *= y[2]
    b[0] -= y[1] ** 2
    b[1:] /= (2.0 + y[3] ** 2)
    return np.sum(b.copy() ** 2)


def test_augmented_slices_buffer():
    check(aug_slices, rand(5), rand(4), wrt=(0, 1))


def aug_slices_ndarray(x, y):
    b = x + 0.0
    b[1:3] += y[0:2]
    b[::2] *= y[2]
    b[0] -= y[1] ** 2
    b[1:] /= (2.0 + y[3] ** 2)
    return np.sum(b ** 2)


def test_augmented_slices_ndarray():
    check(aug_slices_ndarray, rand(5), rand(4), wrt=(0, 1))


def test_augmented_buffer_gradients_match_ndarray_twins():
    # The compiled Buffer versions against finite differences of the ndarray versions (which run
    # as plain Python even where the Buffer versions do not).
    x, y = rand(5), rand(4)
    g = grad(aug_slices, (0, 1))(x, y)
    np.testing.assert_allclose(g[0], fd_grad(lambda z: aug_slices_ndarray(z, y), x), rtol=1e-6)
    np.testing.assert_allclose(g[1], fd_grad(lambda z: aug_slices_ndarray(x, z), y), rtol=1e-6)


def scale_slice_inplace(x, s):
    b = x + 0.0
    b[::2] *= s
    return np.sum(b ** 2)


def scale_slice_explicit(x, s):
    b = x + 0.0
    b[0:2] = b[0:2] * s
    return np.sum(b ** 2)


def test_slice_read_then_overwritten_ndarray():
    x = np.array([1.0, 2.0, 3.0])
    g = check(scale_slice_inplace, x, 0.5, wrt=(0, 1))
    assert g[1] == pytest.approx(2 * 0.5 * (1.0 + 9.0), rel=1e-12)
    g = check(scale_slice_explicit, x, 0.5, wrt=(0, 1))
    assert g[1] == pytest.approx(2 * 0.5 * (1.0 + 4.0), rel=1e-12)


def aug_fancy(x, v):
    b = Buffer(x)
    b[[0, 3]] += v
    b[np.array([1, 4])] *= v
    return np.sum(b.copy() ** 2)


def test_augmented_fancy():
    check(aug_fancy, rand(5), rand(2), wrt=(0, 1))


def aug_fancy_duplicates(x, v):
    b = Buffer(x)
    b[[0, 0, 2]] += v
    return np.sum(b.copy() ** 2)


def test_augmented_fancy_duplicates_numpy_semantics():
    # NumPy: b[[0, 0]] += v is b[[0, 0]] = b[[0, 0]] + v, so only the last duplicate lands.
    x, v = rand(3), rand(3)
    g = check(aug_fancy_duplicates, x, v, wrt=(0, 1))
    assert g[1][0] == 0.0


def aug_whole(x, y):
    b = Buffer(x)
    b[...] += y
    b[...] *= y
    return np.sum(b.copy())


def test_augmented_whole_buffer():
    x, y = rand(4), rand(4)
    g = check(aug_whole, x, y, wrt=(0, 1))
    np.testing.assert_allclose(g[0], y, rtol=1e-12)
    np.testing.assert_allclose(g[1], x + 2 * y, rtol=1e-12)


def aug_argument(x, y):
    x[1] += y * x[0]
    x[2] *= y
    return np.sum(x ** 2)


def test_augmented_on_argument():
    check_mutating(aug_argument, rand(3), 0.8, wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# fancy writes
# ---------------------------------------------------------------------------------------------

def fancy_duplicates(x, v):
    b = Buffer(x)
    b[[1, 1, 2]] = v
    return np.sum(b.copy() ** 2 * np.array([1.0, 2.0, 3.0, 4.0]))


def test_fancy_write_duplicates_last_wins():
    x, v = rand(4), rand(3)
    g = check(fancy_duplicates, x, v, wrt=(0, 1))
    w = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(g[0], [2 * x[0] * w[0], 0.0, 0.0, 2 * x[3] * w[3]], rtol=1e-12)
    np.testing.assert_allclose(g[1], [0.0, 2 * v[1] * w[1], 2 * v[2] * w[2]], rtol=1e-12)
    assert g[1][0] == 0.0


def fancy_duplicates_ndarray(x, v):
    b = np.zeros(4)
    b[np.array([3, 0, 3])] = v * x[1:]
    return np.sum(np.sin(b) * x)


def test_fancy_write_duplicates_ndarray():
    x, v = rand(4), rand(3)
    g = check(fancy_duplicates_ndarray, x, v, wrt=(0, 1))
    assert g[1][0] == 0.0


def fancy_permutation(x, v):
    b = Buffer(x)
    b[[2, 0, 1]] = v
    return np.sum(b.copy() * np.array([1.0, 10.0, 100.0, 1000.0]))


def test_fancy_permutation():
    x, v = rand(4), rand(3)
    g = check(fancy_permutation, x, v, wrt=(0, 1))
    np.testing.assert_allclose(g[0], [0.0, 0.0, 0.0, 1000.0])
    np.testing.assert_allclose(g[1], [100.0, 1.0, 10.0])


def fancy_2d(A, v):
    b = Buffer(A)
    b[[0, 1, 2], [2, 0, 1]] = v
    b[np.array([1]), :] = v[0] ** 2
    return np.sum(b.copy() ** 2)


def test_fancy_2d():
    check(fancy_2d, rand(3, 3), rand(3), wrt=(0, 1))


def fancy_scalar_broadcast(x, p):
    b = Buffer(x)
    b[[0, 2, 4]] = p
    return np.sum(b.copy() * x)


def test_fancy_scalar_broadcast():
    x = rand(5)
    g = check(fancy_scalar_broadcast, x, 0.5, wrt=(0, 1))
    assert g[1] == pytest.approx(x[0] + x[2] + x[4], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# 2-D loops, negative indices, steps, None
# ---------------------------------------------------------------------------------------------

def columns_in_loop(A, v):
    b = Buffer.zeros((3, 4))
    for i in range(4):
        b[:, i] = v * A[0, i] + b[:, i - 1] * 0.5
    return np.sum(b.copy() ** 2)


def rows_in_loop(A, v):
    b = Buffer(A)
    for i in range(3):
        b[i, :] = np.sin(b[i, :]) * v[i]
    return np.sum(b.copy() * A)


def rows_in_loop_ndarray(A, v):
    out = np.zeros((3, 4))
    for i in range(3):
        out[i, :] = A[i] * v[i]
        out[i] = out[i] + out[i - 1]
    return np.sum(out ** 2)


def test_columns_in_loop():
    check(columns_in_loop, rand(3, 4), rand(3), wrt=(0, 1))


def test_rows_in_loop():
    check(rows_in_loop, rand(3, 4), rand(3), wrt=(0, 1))


def test_rows_in_loop_ndarray():
    check(rows_in_loop_ndarray, rand(3, 4), rand(3), wrt=(0, 1))


def negative_and_steps(x, v):
    b = Buffer(x)
    b[-1] = v[0]
    b[-3:-1] = v[1:3] * 2.0
    b[::-2] = b[::-2] * v[3]
    b[6:0:-3] = np.cos(v[4:6])
    return np.sum(b.copy() ** 2 * np.arange(1.0, 9.0))


def test_negative_indices_and_steps():
    check(negative_and_steps, rand(8), rand(6), wrt=(0, 1))


def negative_index_loop(x):
    b = Buffer.zeros(4)
    for i in range(4):
        b[-i - 1] = x[i] * (i + 1.0)
    return np.sum(b.copy() * np.array([1.0, 2.0, 3.0, 4.0]))


def test_negative_index_in_loop():
    g = check(negative_index_loop, rand(4))
    np.testing.assert_allclose(g, [4.0, 6.0, 6.0, 4.0])


def none_index(A, v):
    b = Buffer(A)
    b[None, 1, 1:3] = v[None, 0:2]
    b[0, None] = v[2] ** 2
    b[..., None, 0] = np.sin(v[:, None] * 0.0 + v[0])
    return np.sum(b.copy() ** 2 * A)


def test_none_in_index():
    check(none_index, rand(3, 4), rand(3), wrt=(0, 1))


def tuple_index(A, p):
    b = Buffer(A)
    b[1, 2] = p
    idx = (0, 1)
    b[idx] = p ** 2
    b[(2, 0)] = p * 3.0
    return np.sum(b.copy() * A)


def test_tuple_index():
    A = rand(3, 3)
    g = check(tuple_index, A, 0.4, wrt=(0, 1))
    assert g[1] == pytest.approx(A[1, 2] + 2 * 0.4 * A[0, 1] + 3 * A[2, 0], rel=1e-12)


def slice_object_index(A, p):
    b = Buffer(A)
    b[(2, slice(0, 2))] = p * 3.0
    return np.sum(b.copy() * A)


def test_slice_object_in_index():
    A = rand(3, 3)
    g = check(slice_object_index, A, 0.4, wrt=(0, 1))
    assert g[1] == pytest.approx(3 * (A[2, 0] + A[2, 1]), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# branches and nested loops
# ---------------------------------------------------------------------------------------------

def branch_write(x, p):
    b = Buffer(x)
    if p > 0.0:
        b[0] = p ** 2
    else:
        b[1] = np.sin(p)
    return np.sum(b.copy() * x)


def branch_write_one_sided(x, p):
    b = x * 2.0
    if p > 0.0:
        b[1:3] = p
    return np.sum(b ** 2)


@pytest.mark.parametrize("p", [0.7, -0.7])
def test_write_in_branch(p):
    check(branch_write, rand(3), p, wrt=(0, 1))
    check(branch_write_one_sided, rand(4), p, wrt=(0, 1))


def nested_loops_2d(x, y):
    b = Buffer.zeros((3, 4))
    for i in range(3):
        for j in range(4):
            b[i, j] = x[i] * y[j] + b[i, j - 1] * 0.3
    return np.sum(b.copy() ** 2)


def nested_loops_ndarray(x, y):
    b = np.zeros((3, 4))
    for i in range(3):
        for j in range(4):
            if j > 0:
                b[i, j] = np.tanh(x[i] * y[j] + b[i, j - 1])
            else:
                b[i, j] = x[i]
    return np.sum(b * b)


def test_writes_in_nested_loops():
    check(nested_loops_2d, rand(3), rand(4), wrt=(0, 1))
    check(nested_loops_ndarray, rand(3), rand(4), wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# heat equation stencil
# ---------------------------------------------------------------------------------------------

def heat_buffer(u0, r):
    u = Buffer(u0)
    u_new = Buffer(u0)
    for k in range(5):
        u_new[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        copyto(u, u_new)
    return np.sum(u.copy() ** 2 * np.arange(1.0, 8.0))


def heat_ndarray(u0, r):
    u = u0.copy()
    u_new = u0.copy()
    for k in range(5):
        u_new[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        np.copyto(u, u_new)
    return np.sum(u ** 2 * np.arange(1.0, 8.0))


def heat_argument(u, r):
    u_new = np.zeros_like(u)
    for k in range(5):
        u_new[0] = u[0]
        u_new[-1] = u[-1]
        u_new[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        copyto(u, u_new)
    return np.sum(u ** 2 * np.arange(1.0, 8.0))


@pytest.mark.parametrize("f", [heat_buffer, heat_ndarray])
def test_heat_equation(f):
    u0 = np.sin(np.linspace(0.0, np.pi, 7)) + 0.1 * rand(7)
    check(f, u0, 0.2, wrt=(0, 1))


def heat_split_terms(u0, r):
    u = u0 * 1.0
    u_new = u0 * 1.0
    for k in range(3):
        u_new[1:-1] = (1.0 - 2.0 * r) * u[1:-1] + r * u[2:] + r * u[:-2]
        np.copyto(u, u_new)
    return np.sum(u ** 2 * np.arange(1.0, 8.0))


def test_heat_equation_slices_multiplied_by_r():
    # r multiplies slices of u directly: the adjoint for r needs those slices' values from before
    # the later copyto overwrites u.
    u0 = np.sin(np.linspace(0.0, np.pi, 7)) + 0.1 * rand(7)
    check(heat_split_terms, u0, 0.2, wrt=(0, 1))


def test_heat_equation_writing_into_argument():
    u0 = np.sin(np.linspace(0.0, np.pi, 7)) + 0.1 * rand(7)
    check_mutating(heat_argument, u0, 0.2, wrt=(0, 1))


def write_argument_in_loop(u):
    for k in range(2):
        u[0] = u[0] * 2.0
    return np.sum(u ** 2)


def test_argument_written_in_loop_is_copied_on_entry():
    u = np.array([1.0, 2.0])
    g = check_mutating(write_argument_in_loop, u)
    np.testing.assert_allclose(g, [32.0, 4.0], rtol=1e-12)
    np.testing.assert_array_equal(u, [1.0, 2.0])


# ---------------------------------------------------------------------------------------------
# overwritten values read nonlinearly (the compiler must restore them)
# ---------------------------------------------------------------------------------------------

def nonlinear_then_overwrite(x):
    b = x * 1.0
    y = b * b
    b[0] = 5.0
    return np.sum(y * b)


def nonlinear_then_overwrite_all(x):
    b = np.exp(x)
    y = np.sin(b)
    b[:] = 2.0 * x
    return np.sum(y * b) + np.sum(b * b)


def nonlinear_buffer_reads(x):
    b = Buffer(x)
    y = np.sin(b[:]) * b[1]
    b[1] = 5.0
    b[0] = b[0] * b[2]
    return np.sum(y * b.copy()) + b[0] ** 2


def nonlinear_in_loop(x):
    b = Buffer(x)
    s = 0.0
    for i in range(4):
        s = s + np.sum(np.tanh(b[:]) * b[i])
        b[i] = b[i] ** 2 + 0.5
    return s + np.sum(b.copy() ** 3)


def test_nonlinear_read_then_overwrite():
    x = rand(4)
    g = check(nonlinear_then_overwrite, x)
    expected = 2 * x * x
    expected[0] = 2 * x[0] * 5.0
    expected[1:] = 3 * x[1:] ** 2
    np.testing.assert_allclose(g, expected, rtol=1e-12)


@pytest.mark.parametrize("f", [nonlinear_then_overwrite_all, nonlinear_buffer_reads,
                               nonlinear_in_loop])
def test_nonlinear_reads_of_overwritten_values(f):
    check(f, rand(4))


def product_reads_then_writes(x):
    b = Buffer(x)
    b[0] = b[0] * b[1]
    b[1] = b[0] + b[1]
    b[2] = b[0] * b[1] * b[2]
    return np.sum(b.copy())


def test_write_uses_freshly_written_values():
    check(product_reads_then_writes, rand(3))


# ---------------------------------------------------------------------------------------------
# arguments written in place
# ---------------------------------------------------------------------------------------------

def write_then_read_argument(x):
    x[0] = x[1] * x[2]
    return np.sum(x * x)


def test_write_argument_then_read():
    x = rand(3)
    before = x.copy()
    g = check(write_then_read_argument, x)
    np.testing.assert_array_equal(x, before)
    p = x[1] * x[2]
    np.testing.assert_allclose(g, [0.0, 2 * x[1] + 2 * p * x[2], 2 * x[2] + 2 * p * x[1]], rtol=1e-12)


def overwrite_argument_completely(x, y):
    x[...] = y * 2.0
    return np.sum(x ** 2)


def test_overwritten_argument_gets_zero_gradient():
    x, y = rand(4), rand(4)
    g = check_mutating(overwrite_argument_completely, x, y, wrt=(0, 1))
    np.testing.assert_array_equal(g[0], np.zeros(4))
    np.testing.assert_allclose(g[1], 8 * y, rtol=1e-12)


def overwrite_argument_partially(x, y):
    x[1:3] = 0.0
    x[3] = y
    return np.sum(np.exp(x))


def test_partially_overwritten_argument():
    x = rand(5)
    before = x.copy()
    g = check_mutating(overwrite_argument_partially, x, 0.3, wrt=(0, 1))
    assert g[0][1] == 0.0 and g[0][2] == 0.0 and g[0][3] == 0.0
    np.testing.assert_allclose(g[0][[0, 4]], np.exp(x[[0, 4]]), rtol=1e-12)
    np.testing.assert_array_equal(x, before)


def test_caller_array_unchanged_after_grad_and_vjp():
    x = rand(5)
    before = x.copy()
    grad(shift_argument)(x)
    np.testing.assert_array_equal(x, before)
    out, pullback = vjp(shift_argument, x)
    pullback(1.0)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(out, shift_argument(x.copy()), rtol=1e-12)


def rhs_argument(du, u, p):
    lv_rhs(du, u, p, 0.0)
    return np.sum(du ** 2) + np.sum(du * u)


def test_rhs_writing_into_passed_array():
    du = rand(2)
    before = du.copy()
    g = check_mutating(rhs_argument, du, LV_U0, LV_P, wrt=(0, 1, 2))
    np.testing.assert_array_equal(g[0], np.zeros(2))
    np.testing.assert_array_equal(du, before)


def rhs_slices(du, u, p):
    du[:] = -p * u
    du[1:] += u[:-1] * u[1:]


def decay_euler(u0, p):
    u = u0
    du = np.zeros(3)
    for k in range(10):
        rhs_slices(du, u, p)
        u = u + 0.1 * du
    return np.sum(u ** 2)


def test_rhs_with_slice_writes_in_loop():
    check(decay_euler, rand(3), RNG.uniform(0.5, 1.5, 3), wrt=(0, 1))


def fill_helper(b, v):
    for i in range(len(v)):
        b[i] = v[i] ** 2


def helper_fills_local(v):
    b = Buffer.zeros(4)
    fill_helper(b, v)
    c = np.zeros(4)
    fill_helper(c, v * 2.0)
    return np.sum(b.copy() * c)


def fill_two(b, v):
    b[0] = v[0] ** 2
    b[1] = v[1] ** 2


def helper_straight_line(v):
    c = np.zeros(4)
    fill_two(c, v)
    return np.sum(c)


def test_helper_straight_line_writes_into_callers_array():
    v = rand(4)
    g = check(helper_straight_line, v)
    np.testing.assert_allclose(g, [2 * v[0], 2 * v[1], 0.0, 0.0], rtol=1e-12)


def test_helper_writes_into_callers_arrays():
    v = rand(4)
    g = check(helper_fills_local, v)
    np.testing.assert_allclose(g, 4 * 4 * v ** 3, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# 3. errors
# ---------------------------------------------------------------------------------------------

def write_through_view(p):
    x = p * np.ones(4)
    v = x[1:3]
    v[0] = 1.0
    return np.sum(x)


def view_read_before_write(p):
    x = p * np.arange(1.0, 5.0)
    v = x[1:3]
    x[1] = 5.0
    return np.sum(v * v)


def write_through_transpose(A):
    B = A * 2.0
    t = B.T
    t[0, 1] = 0.0
    return np.sum(B)


def write_through_reshape(x):
    y = x * 1.0
    r = y.reshape(2, 2)
    r[0, 0] = 3.0
    return np.sum(y * y)


def write_through_argument_view(x):
    v = x[::2]
    v[0] = 0.0
    return np.sum(x)


GLOBAL_ARRAY = np.zeros(3)


def write_global(p):
    GLOBAL_ARRAY[0] = p
    return np.sum(GLOBAL_ARRAY) * p


def write_flat(x):
    y = x * 2.0
    y.flat[0] = 1.0
    return np.sum(y)


def write_flat_argument(x):
    x.flat[0] = 1
    return np.sum(x)


def assert_mutation_error(f, arg, line_text):
    with pytest.raises(MutationError) as info:
        grad(f)(arg)
    assert line_text in str(info.value), str(info.value)
    assert info.value.loc is not None


# Writes through views write their base (NumPy semantics), and views read after a write of their
# base see it: each checked against finite differences.

def test_write_through_slice_view():
    g = check(write_through_view, 0.5)
    np.testing.assert_allclose(g, 3.0, rtol=1e-9)  # x = p * ones(4) with x[1] replaced by 1.0


def test_view_read_after_write_of_its_base():
    g = check(view_read_before_write, 0.5)
    np.testing.assert_allclose(g, 2 * 0.5 * 3.0 ** 2, rtol=1e-9)  # v = [5, 3p]: d/dp (25 + 9p^2)


def test_write_through_transpose():
    check(write_through_transpose, rand(2, 3))


def test_write_through_reshape():
    check(write_through_reshape, rand(4))


def test_write_through_argument_view():
    x = rand(4)
    before = x.copy()
    g = check(write_through_argument_view, x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(g, [0.0, 1.0, 1.0, 1.0])


def test_write_into_module_level_array_rejected():
    before = GLOBAL_ARRAY.copy()
    assert_mutation_error(write_global, 0.5, "GLOBAL_ARRAY[0] = p")
    np.testing.assert_array_equal(GLOBAL_ARRAY, before)


def test_flat_write_rejected():
    assert_mutation_error(write_flat, rand(3), "y.flat[0] = 1.0")
    assert_mutation_error(write_flat_argument, rand(3), "x.flat[0] = 1")


def test_mutation_error_is_adjoint_compiler_error():
    from adjoint_compiler import AdjointCompilerError
    assert issubclass(MutationError, AdjointCompilerError)


# ---------------------------------------------------------------------------------------------
# aliases: names bound to the same array see its writes; rebinding is not a write
# ---------------------------------------------------------------------------------------------

def buffer_alias(x, p):
    b = Buffer(x)
    c = b
    c[0] = p * p
    return np.sum(b.copy() * x)


def buffer_alias_in_loop(x, p):
    b = Buffer(x)
    c = b
    for i in range(3):
        c[i] = c[i] * p
    return np.sum(b.copy() ** 2)


def ndarray_alias(x, p):
    a = x * 1.0
    c = a
    c[1:] = p
    return np.sum(a * x)


def test_write_through_alias_is_seen_by_the_other_name():
    x = rand(4)
    g = check(buffer_alias, x, 0.5, wrt=(0, 1))
    np.testing.assert_allclose(g[0], np.concatenate([[0.25], 2 * x[1:]]), rtol=1e-12)
    check(buffer_alias_in_loop, x, 0.5, wrt=(0, 1))
    g = check(ndarray_alias, x, 0.5, wrt=(0, 1))
    assert g[1] == pytest.approx(x[1:].sum(), rel=1e-12)


def rebind_from_argument_in_loop(u0, p):
    u = u0
    for i in range(2):
        u = u * p + u0
    return np.sum(u)


def rebind_from_argument_with_buffer(u0, p):
    b = Buffer.zeros(2)
    u = u0
    for i in range(2):
        b[i] = np.sum(u)
        u = u * p + u0
    return np.sum(b.copy()) + np.sum(u)


def test_rebinding_a_name_initialised_from_an_argument_is_not_aliasing():
    # `u = u0` then `u = u * p + u0` in a loop: u0 keeps its value inside the loop.
    u0 = np.array([1.0, 2.0])
    g = check(rebind_from_argument_in_loop, u0, 3.0, wrt=(0, 1))
    np.testing.assert_allclose(g[0], [13.0, 13.0], rtol=1e-12)
    check(rebind_from_argument_with_buffer, u0, 3.0, wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# a pullback whose backward pass restores overwritten slots can be called more than once
# ---------------------------------------------------------------------------------------------

def overwrite_after_square(x):
    b = x * 1.0
    y = b * b
    b[0] = 5.0
    return y + b ** 2


def test_pullback_with_restores_called_twice():
    x = np.array([1.0, 2.0, 3.0])
    out, pullback = vjp(overwrite_after_square, x)
    np.testing.assert_allclose(out, overwrite_after_square(x.copy()))
    out_bar = np.array([0.5, -1.0, 2.0])
    expected = fd_vjp(overwrite_after_square, x, out_bar)
    for _ in range(3):
        (g,) = pullback(out_bar)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)


def fd_vjp(f, x, out_bar, eps=1e-6):
    grad = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        grad[i] = (np.sum(out_bar * f(x + e)) - np.sum(out_bar * f(x - e))) / (2 * eps)
    return grad


# -- a scalar broadcast into every slot, then part of it overwritten: the scalar's gradient is the
#    total of the slots the later write left, summed around them (rt.total_after_zeroing) ---------

def boundary_then_interior(c, u, k):
    du = Buffer.zeros(u.shape)
    du[...] = c
    du[1:-1] = k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(du.copy() * u)


def fill_then_every_third(p, q, w):
    b = np.zeros(w.shape)
    b[...] = p
    b[1::3] = q
    return np.sum(b * w)


def fill_then_reversed_rows(p, q, w):
    b = np.zeros(w.shape)
    b[:] = p
    b[::-2] = q
    return np.sum(b * w)


def fill_then_column(p, q, w):
    b = np.zeros(w.shape)
    b[...] = p
    b[:, 1] = q
    return np.sum(b * w)


@pytest.mark.parametrize("f, args", [
    (boundary_then_interior, (0.7, np.linspace(0.0, 1.0, 9) ** 2, 0.3)),
    (fill_then_every_third, (0.4, -1.2, np.arange(12.0) - 4.0)),
    (fill_then_reversed_rows, (0.4, -1.2, np.arange(12.0).reshape(6, 2) - 4.0)),
    (fill_then_column, (0.4, -1.2, np.arange(12.0).reshape(4, 3) - 4.0)),
], ids=["boundary_then_interior", "every_third", "reversed_rows", "column"])
def test_fill_then_partial_overwrite(f, args):
    check(f, *args, wrt=(0, 1, 2))


def diagonal_matrix_written(v):
    d = np.diag(v)
    d[0, 1] = v[2] * 3.0
    return np.sum(d @ v)


def test_the_matrix_np_diag_makes_of_a_vector_is_new_and_can_be_written():
    from adjoint_compiler.testing import check_grads

    check_grads(diagonal_matrix_written, np.array([0.3, -0.2, 0.5]))

"""Finite-difference tests of the shape functions, copies and casts (rules/shape.py)."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads


def s_reshape(x, w): return np.sum(np.reshape(x, (4, 3)) * w)
def s_reshape_kw(x, w): return np.sum(np.reshape(x, shape=(2, 6)) * w)
def s_reshape_method(x, w): return np.sum(x.reshape(4, 3) * w)
def s_reshape_method_tuple(x, w): return np.sum(x.reshape((2, 2, 3)) * w)
def s_reshape_method_flat(x, w): return np.sum(x.reshape(-1) * w)
def s_ravel(x, w): return np.sum(np.ravel(x) * w)
def s_ravel_method(x, w): return np.sum(x.ravel() * w)
def s_flatten(x, w): return np.sum(x.flatten() * w)
def s_T(x, w): return np.sum(x.T * w)
def s_transpose(x, w): return np.sum(np.transpose(x) * w)
def s_transpose_axes(x, w): return np.sum(np.transpose(x, (1, 2, 0)) * w)
def s_transpose_neg(x, w): return np.sum(np.transpose(x, axes=(-1, 0, 1)) * w)
def s_transpose_method(x, w): return np.sum(x.transpose() * w)
def s_transpose_method_args(x, w): return np.sum(x.transpose(2, 0, 1) * w)
def s_transpose_method_tuple(x, w): return np.sum(x.transpose((0, 2, 1)) * w)
def s_swapaxes(x, w): return np.sum(np.swapaxes(x, 0, 2) * w)
def s_swapaxes_method(x, w): return np.sum(x.swapaxes(1, 2) * w)
def s_moveaxis(x, w): return np.sum(np.moveaxis(x, 0, -1) * w)
def s_expand_dims(x, w): return np.sum(np.expand_dims(x, 1) * w)
def s_expand_dims_kw(x, w): return np.sum(np.expand_dims(x, axis=(0, 2)) * w)
def s_squeeze(x, w): return np.sum(np.squeeze(x) * w)
def s_squeeze_axis(x, w): return np.sum(np.squeeze(x, axis=0) * w)
def s_squeeze_method(x, w): return np.sum(x.squeeze() * w)
def s_atleast_1d(x, w): return np.sum(np.atleast_1d(x) * w)
def s_atleast_2d(x, w): return np.sum(np.atleast_2d(x) * w)
def s_atleast_3d(x, w): return np.sum(np.atleast_3d(x) * w)
def s_broadcast_to(x, w): return np.sum(np.broadcast_to(x, (2, 3, 4)) * w)
def s_tile(x, w): return np.sum(np.tile(x, 2) * w)
def s_tile_2d(x, w): return np.sum(np.tile(x, (2, 1, 3)) * w)
def s_repeat(x, w): return np.sum(np.repeat(x, 2) * w)
def s_repeat_axis(x, w): return np.sum(np.repeat(x, 3, axis=1) * w)
def s_repeat_counts(x, w): return np.sum(np.repeat(x, [1, 0, 2], axis=0) * w)
def s_repeat_method(x, w): return np.sum(x.repeat(2, axis=0) * w)
def s_flip(x, w): return np.sum(np.flip(x) * w)
def s_flip_axis(x, w): return np.sum(np.flip(x, 0) * w)
def s_fliplr(x, w): return np.sum(np.fliplr(x) * w)
def s_flipud(x, w): return np.sum(np.flipud(x) * w)
def s_roll(x, w): return np.sum(np.roll(x, 2) * w)
def s_roll_axes(x, w): return np.sum(np.roll(x, (1, -1), axis=(0, 1)) * w)
def s_copy(x, w): return np.sum(np.copy(x) * w)
def s_copy_method(x, w): return np.sum(x.copy() * w)
def s_astype(x, w): return np.sum(x.astype(float) * w)
def s_asarray(x, w): return np.sum(np.asarray(x) * w)
def s_asanyarray(x, w): return np.sum(np.asanyarray(x) * w)
def s_ascontiguousarray(x, w): return np.sum(np.ascontiguousarray(x.T) * w)
def s_astype_function(x, w): return np.sum(np.astype(x, np.float64) * w)
def s_array(x, w): return np.sum(np.array(x) * w)
def s_array_float(x, w): return np.sum(np.array(x, dtype=float) * w)
def s_array_scalars(x, w): return np.sum(np.array([x[0], x[1] * x[2], 2.0]) * w)
def s_array_rows(x, w): return np.sum(np.array([x[0], x[1], x[0] * x[1]]) * w)
def s_array_nested(x, w): return np.sum(np.array([[x[0], x[1]], [x[2], x[0] * x[2]]]) * w)


M, T, V = (3, 4), (2, 3, 4), (4,)
UNARY = [
    (s_reshape, M, (4, 3)), (s_reshape_kw, M, (2, 6)), (s_reshape_method, M, (4, 3)),
    (s_reshape_method_tuple, M, (2, 2, 3)), (s_reshape_method_flat, T, (24,)), (s_ravel, M, (12,)),
    (s_ravel_method, T, (24,)), (s_flatten, M, (12,)), (s_T, M, (4, 3)), (s_T, T, (4, 3, 2)),
    (s_transpose, M, (4, 3)), (s_transpose_axes, T, (3, 4, 2)), (s_transpose_neg, T, (4, 2, 3)),
    (s_transpose_method, T, (4, 3, 2)), (s_transpose_method_args, T, (4, 2, 3)),
    (s_transpose_method_tuple, T, (2, 4, 3)), (s_swapaxes, T, (4, 3, 2)),
    (s_swapaxes_method, T, (2, 4, 3)), (s_moveaxis, T, (3, 4, 2)), (s_expand_dims, M, (3, 1, 4)),
    (s_expand_dims_kw, M, (1, 3, 1, 4)), (s_squeeze, (1, 3, 1), (3,)), (s_squeeze_axis, (1, 3, 1), (3, 1)),
    (s_squeeze_method, (3, 1), (3,)), (s_atleast_1d, (), (1,)), (s_atleast_2d, V, (1, 4)),
    (s_atleast_3d, M, (3, 4, 1)), (s_broadcast_to, (3, 1), (2, 3, 4)),
    (s_broadcast_to, (), (2, 3, 4)), (s_tile, V, (8,)), (s_tile, M, (3, 8)), (s_tile_2d, M, (2, 3, 12)),
    (s_repeat, M, (24,)), (s_repeat_axis, M, (3, 12)), (s_repeat_counts, M, (3, 4)),
    (s_repeat_method, M, (6, 4)), (s_flip, M, (3, 4)), (s_flip_axis, T, (2, 3, 4)), (s_fliplr, M, (3, 4)),
    (s_flipud, M, (3, 4)), (s_roll, M, (3, 4)), (s_roll_axes, M, (3, 4)), (s_copy, M, (3, 4)),
    (s_copy_method, M, (3, 4)), (s_astype, M, (3, 4)), (s_asarray, M, (3, 4)), (s_asanyarray, V, (4,)),
    (s_ascontiguousarray, M, (4, 3)), (s_array, V, (4,)),
    (s_array_float, M, (3, 4)), (s_array_scalars, V, (3,)), (s_array_rows, M, (3, 4)),
    (s_array_nested, V, (2, 2)),
]


if hasattr(np, "astype"):  # NumPy >= 2.1
    UNARY.append((s_astype_function, M, (3, 4)))


@pytest.mark.parametrize("f,sx,sw", UNARY, ids=[f"{f.__name__}-{sx}" for f, sx, _ in UNARY])
def test_unary(f, sx, sw):
    rng = np.random.default_rng(9)
    x = rng.standard_normal(sx) if sx else float(rng.standard_normal())
    check_grads(f, x, rng.standard_normal(sw))


def s_concat(a, b, w): return np.sum(np.concatenate([a, b]) * w)
def s_concat_axis1(a, b, w): return np.sum(np.concatenate((a, b, a), axis=1) * w)
def s_concat_none(a, b, w): return np.sum(np.concatenate([a, b], axis=None) * w)
def s_stack(a, b, w): return np.sum(np.stack([a, b]) * w)
def s_stack_last(a, b, w): return np.sum(np.stack((a, b, a * b), axis=-1) * w)
def s_hstack(a, b, w): return np.sum(np.hstack([a, b]) * w)
def s_vstack(a, b, w): return np.sum(np.vstack([a, b]) * w)
def s_array_pair(a, b, w): return np.sum(np.array([a, b]) * w)


PAIRS = [
    (s_concat, (2, 3), (4, 3), (6, 3)), (s_concat, (2,), (3,), (5,)),
    (s_concat_axis1, (3, 1), (3, 2), (3, 4)), (s_concat_none, (2, 2), (3,), (7,)),
    (s_stack, (3,), (3,), (2, 3)), (s_stack, (2, 3), (2, 3), (2, 2, 3)), (s_stack_last, (2, 3), (2, 3), (2, 3, 3)),
    (s_hstack, (2,), (3,), (5,)), (s_hstack, (2, 1), (2, 3), (2, 4)), (s_hstack, (), (3,), (4,)),
    (s_vstack, (3,), (3,), (2, 3)), (s_vstack, (1, 3), (2, 3), (3, 3)), (s_vstack, (3,), (2, 3), (3, 3)),
    (s_array_pair, (), (), (2,)), (s_array_pair, (2, 3), (2, 3), (2, 2, 3)),
]


@pytest.mark.parametrize("f,sa,sb,sw", PAIRS, ids=[f"{f.__name__}-{sa}-{sb}" for f, sa, sb, _ in PAIRS])
def test_join(f, sa, sb, sw):
    rng = np.random.default_rng(10)
    a, b = (rng.standard_normal(s) if s else float(rng.standard_normal()) for s in (sa, sb))
    check_grads(f, a, b, rng.standard_normal(sw), wrt=(0, 1))


def s_stack_seq(xs, w): return np.sum(np.stack(xs, axis=1) * w)
def s_concat_seq(xs, w): return np.sum(np.concatenate(xs) * w)
def s_array_seq(xs, w): return np.sum(np.array(xs) * w)


@pytest.mark.parametrize("f,sw", [(s_stack_seq, (3, 2)), (s_concat_seq, (6,)), (s_array_seq, (2, 3))])
def test_sequence_argument(f, sw):
    rng = np.random.default_rng(11)
    xs = (rng.standard_normal(3), rng.standard_normal(3))
    check_grads(f, xs, rng.standard_normal(sw))
    check_grads(f, list(xs), rng.standard_normal(sw))


def s_astype_int(x): return np.sum(x.astype(int) * x)


def test_astype_int_passes_no_gradient():
    x = np.array([1.5, 2.5, -0.5])
    np.testing.assert_array_equal(grad(s_astype_int)(x), x.astype(int))


def s_int_scalar_cast(k, x): return np.int64(k) * 1.0 * x[0] + np.int32(k) * x[1]
def s_int_array_astype(n, x): return np.sum(n.astype(int) * x) + np.sum(n.astype(np.int32) * 2.0)
def s_int_array_asarray(n, x): return np.sum(np.asarray(n) * x) + np.sum(np.array(n, dtype=np.int64) ** 2)


def test_integer_casts_of_integers_pass_their_gradient():
    # an integer kept an integer keeps its value: d/dk of k * x[0] + k * x[1] is x[0] + x[1]
    x = np.array([1.5, -2.0, 0.5])
    n = np.array([1, 2, 3])
    assert grad(s_int_scalar_cast)(3, x) == pytest.approx(x[0] + x[1])
    np.testing.assert_allclose(grad(s_int_array_astype)(n, x), x + 2.0)
    np.testing.assert_allclose(grad(s_int_array_asarray)(n, x), x + 2.0 * n)
    # (and the other argument's gradient is the integers themselves, as floats)
    np.testing.assert_allclose(grad(s_int_array_astype, wrt=1)(n, x), n)


def s_diff(x, w):
    return np.sum(np.diff(x) * w)


def s_diff_2_axis0(x, w):
    return np.sum(np.diff(x, 2, axis=0) * w)


@pytest.mark.parametrize("f, shape, out_shape", [
    (s_diff, (5,), (4,)), (s_diff, (3, 4), (3, 3)), (s_diff_2_axis0, (5, 2), (3, 2))])
def test_diff(f, shape, out_shape):
    rng = np.random.default_rng(7)
    check_grads(f, rng.standard_normal(shape), rng.standard_normal(out_shape))


def s_sort(x): return np.sum(np.sort(x) * np.arange(1.0, 1.0 + x.shape[-1]))
def s_sort_axis0(x): return np.sum(np.sort(x, axis=0) ** 2 * np.arange(1.0, 1.0 + x.shape[0])[:, None])
def s_sort_none(x): return np.sum(np.sort(x, axis=None) * np.arange(float(x.size)))
def s_sort_kind(x): return np.sum(np.sin(np.sort(x, -1, kind="stable")) * np.arange(float(x.shape[-1])))


@pytest.mark.parametrize("f", [s_sort, s_sort_axis0, s_sort_none, s_sort_kind])
def test_sort(f):
    rng = np.random.default_rng(41)
    check_grads(f, rng.standard_normal((3, 4)))
    if f is not s_sort_axis0:
        check_grads(f, rng.standard_normal(5))

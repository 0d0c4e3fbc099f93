"""Rules of the runtime helpers that generated gradients call (rules/runtime_helpers.py), each
checked against finite differences over scalar, vector, matrix and broadcast shapes, in every
argument that carries a gradient."""
import numpy as np
import pytest

from adjoint_compiler import runtime as rt
from adjoint_compiler.testing import check_grads

R = np.random.default_rng(7)
V3, V4 = R.normal(size=3), R.normal(size=4)
M23, M34, M43 = R.normal(size=(2, 3)), R.normal(size=(3, 4)), R.normal(size=(4, 3))
B223 = R.normal(size=(2, 2, 3))
POS3 = np.abs(R.normal(size=3)) + 0.5


def weigh(y):
    """A fixed nonlinear scalar of a helper's result (so second derivatives are not trivial)."""
    return np.sum(np.sin(y) * (1.0 + 0.1 * np.arange(np.size(y)).reshape(np.shape(y))))


def h_unbroadcast_lead(g): return weigh(rt.unbroadcast(g, V3))
def h_unbroadcast_ones(g): return weigh(rt.unbroadcast(g, np.ones((2, 1))))
def h_unbroadcast_scalar(g): return weigh(rt.unbroadcast(g, 1.0))
def h_broadcast_like(h): return weigh(rt.broadcast_like(h, M23))
def h_expand_all(g): return weigh(rt.expand_reduced(g, M23, None, False))
def h_expand_axis(g): return weigh(rt.expand_reduced(g, M23, 1, False))
def h_expand_keep(g): return weigh(rt.expand_reduced(g, M23, 0, True))
def h_reduce_like(h): return weigh(rt.reduce_like(h, V3, 0, False))
def h_expand_like(g): return weigh(rt.expand_like(g, M23))
def h_sum_to_scalar(g): return np.sin(rt.sum_to_scalar(g))
def h_getitem_slice(g): return weigh(rt.getitem_adjoint(g, V4, slice(1, 3)))
def h_getitem_repeat(g): return weigh(rt.getitem_adjoint(g, V4, np.array([0, 2, 0])))
def h_getitem_row(g): return weigh(rt.getitem_adjoint(g, M23, 1))
def h_getitem_transpose(h): return weigh(rt.getitem_transpose(h, V3, np.array([0, 2, 0])))
def h_accum(a, b): return weigh(rt.accum(a, b))
def h_chain(g, d): return weigh(rt.chain(g, d))
def h_masked(g): return weigh(rt.masked(g, M23 > 0))
def h_masked_off(g): return weigh(rt.masked(g, np.array([1.0, 0.0, 2.0]), False))
def h_chain_div(g, d): return weigh(rt.chain_div(g, d))
def h_pow_base(x): return weigh(rt.pow_base_derivative(x, 3))
def h_pow_base_square(x): return weigh(rt.pow_base_derivative(x, 2))
def h_pow_base_exponent(x, y): return weigh(rt.pow_base_derivative(x, y))
def h_pow_exponent(z, x): return weigh(rt.pow_exponent_derivative(z, x))
def h_array_adjoint(g): return weigh(rt.array_adjoint(g, [V3, V3 * 2.0])[1])
def h_array_transpose(h0, h1): return weigh(rt.array_adjoint_transpose([h0, h1], M23, [V3, V3]))
def h_pow_second(x): return weigh(rt.pow_derivative(x, 2.5, 2))
def h_pow_third(x): return weigh(rt.pow_derivative(x, 1.0, 3) + rt.pow_derivative(x, 4, 3))
def h_dot_left(g, a, b): return weigh(rt.dot_left(g, a, b))
def h_dot_right(g, a, b): return weigh(rt.dot_right(g, a, b))
def h_matmul_left(g, x, w): return weigh(rt.matmul_left(g, x, w))
def h_matmul_right(g, x, w): return weigh(rt.matmul_right(g, x, w))
def h_sum_of_product(a, b): return np.sin(rt.sum_of_product(a, b))
def h_save_slots(b): return weigh(rt.save_slots(b, slice(1, 3)))
def h_written(g): return weigh(rt.written_adjoint(g, slice(0, 2)))
def h_written_repeat(g): return weigh(rt.written_adjoint(g, np.array([1, 3, 1])))
def h_written_int(g): return weigh(rt.written_adjoint(g, 1, np.zeros(4, dtype=int))) + np.sum(g)
def h_written_transpose(h): return weigh(rt.written_transpose(h, V4, np.array([1, 3, 1])))
def h_written_total(g): return np.sin(rt.written_total(g, slice(1, 3)))
def h_overwritten(g): return weigh(rt.overwritten_adjoint(g, (0, slice(1, None))))
def h_copied(g): return weigh(rt.copied_adjoint(g, V3, np.array([True, False, True])))
def h_copied_transpose(h): return weigh(rt.copied_transpose(h, M23, V3, np.array([True, False, True])))
def h_overcopied(g): return weigh(rt.overcopied_adjoint(g, np.array([True, False, True])))
def h_zero_slots(g): return weigh(rt.zero_slots(g * 1.0, slice(1, 3)))
def h_add_at(a, g): return weigh(rt.add_at(a * 1.0, np.array([0, 2, 0]), g))
def h_total_after_zeroing(g): return np.sin(rt.total_after_zeroing(g * 1.0, slice(0, 4, 2)))
def h_extremum(g): return weigh(rt.extremum_adjoint(g, M23, np.max(M23, axis=1), 1, False))
def h_plus_added(g): return weigh(rt.plus_adjoint(g, V3, M23, 0) + rt.plus_adjoint(g, V3, M23, 1))
def h_plus_joined(g): return weigh(np.asarray(rt.plus_adjoint(list(g), [1.0], [2.0, 3.0], 1)))
def h_plus_transpose(h): return weigh(rt.plus_adjoint_transpose(h, M23, V3, M23, 0))
def h_times_product(g, y): return weigh(rt.times_adjoint(g, V3, y, 0) + rt.times_adjoint(g, V3, y, 1))
def h_times_repeated(g): return weigh(np.asarray(rt.times_adjoint(list(g), [1.0, 2.0], 2, 0)))
TRIANGLE = np.tril(R.normal(size=(32, 32))) * 0.1 + 3.0 * np.eye(32)  # (order 32: checked for a triangle)
def h_solve_transposed(a, g): return weigh(rt.solve_transposed(a, g))
def h_sort_adjoint(g): return weigh(rt.sort_adjoint(g, M23[:, ::-1] + np.arange(3.0), 1))
def h_sort_transpose(h): return weigh(rt.sort_transpose(h, M23, 0))
def h_repetition_transpose(h): return weigh(np.asarray(rt.repetition_transpose(list(h), V4, [1.0, 2.0], 2, 0)))


CASES = [
    (h_unbroadcast_lead, (M23,)), (h_unbroadcast_lead, (B223,)), (h_unbroadcast_ones, (M23,)),
    (h_unbroadcast_scalar, (V3,)), (h_broadcast_like, (V3,)), (h_broadcast_like, (np.ones((2, 1)) * 0.3,)),
    (h_expand_all, (0.7,)), (h_expand_axis, (R.normal(size=2),)), (h_expand_keep, (R.normal(size=(1, 3)),)),
    (h_reduce_like, (M23,)), (h_expand_like, (V3,)), (h_sum_to_scalar, (M23,)), (h_sum_to_scalar, (0.4,)),
    (h_getitem_slice, (R.normal(size=2),)), (h_getitem_repeat, (V3,)), (h_getitem_row, (V3,)),
    (h_getitem_transpose, (V4,)), (h_accum, (M23, M23 + 1.0)), (h_chain, (M23, V3)), (h_masked, (M23,)), (h_masked, (V3,)),
    (h_masked_off, (M23,)), (h_masked_off, (0.4,)), (h_chain, (0.3, V3)),
    (h_chain_div, (M23, POS3)), (h_chain_div, (V3, 1.7)), (h_pow_base, (V3,)), (h_pow_base_square, (M23,)),
    (h_pow_base_exponent, (POS3, 2.5)), (h_pow_exponent, (V3, POS3)), (h_pow_second, (POS3,)), (h_array_adjoint, (M23,)), (h_array_transpose, (V3, V3 * 0.5)), (h_pow_third, (V3,)), (h_dot_left, (V3, V4, M43)),
    (h_dot_right, (V3, V4, M43)), (h_dot_left, (M23, M23, np.eye(3) + 0.1 * M34[:, :3])),
    (h_dot_left, (V3, 0.5, V3)), (h_matmul_left, (R.normal(size=(2, 4)), M23, M34)),
    (h_matmul_right, (R.normal(size=(2, 4)), M23, M34)), (h_matmul_left, (R.normal(size=2), M23, V3)),
    (h_matmul_right, (R.normal(size=4), V3, M34)), (h_sum_of_product, (M23, M23 * 2.0)),
    (h_sum_of_product, (V3, 0.5)), (h_extremum, (R.normal(size=2),)),
    (h_save_slots, (V4,)), (h_written, (M23,)), (h_written_repeat, (V4,)), (h_written_int, (V4,)),
    (h_written_transpose, (V3,)), (h_written_total, (V4,)), (h_overwritten, (M23,)), (h_copied, (M23,)),
    (h_copied_transpose, (V3,)), (h_overcopied, (M23,)), (h_zero_slots, (V4,)), (h_add_at, (V4, V3)),
    (h_total_after_zeroing, (R.normal(size=5),)), (h_plus_added, (M23,)), (h_plus_joined, (V3,)),
    (h_plus_transpose, (V3,)), (h_times_product, (M23, M23 * 0.5)), (h_times_repeated, (V4,)),
    (h_repetition_transpose, (R.normal(size=2),)), (h_sort_adjoint, (M23,)), (h_sort_transpose, (M23,)), (h_solve_transposed, (TRIANGLE, R.normal(size=(32, 2)))),
    (h_solve_transposed, (TRIANGLE.T, R.normal(size=32))), (h_solve_transposed, (M23[:, :2] + 2 * np.eye(2), V3[:2])),
]


@pytest.mark.parametrize("f,args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_helper_rule(f, args):
    check_grads(f, *args, wrt=tuple(range(len(args))))


def _expand_cases():
    import itertools

    for shape in [(3,), (3, 4), (2, 3, 4), (1, 4), (2, 1, 4), (0, 3)]:
        for r in range(len(shape) + 1):
            for axes in itertools.combinations(range(len(shape)), r):
                for keep in (False, True):
                    for how in ("plain", "one number", "transposed", "float32", "int", "np.int64 axis", "negative axis"):
                        yield shape, axes, keep, how


def test_expand_reduced_is_broadcast_to():
    """`rt.expand_reduced` builds its read-only view itself where it can: the same values, shape
    and dtype as np.broadcast_to of the gradient with the reduced axes put back."""
    rng = np.random.default_rng(0)
    for shape, axes, keep, how in _expand_cases():
        reduced = np.sum(np.zeros(shape), axis=axes or None, keepdims=keep)
        g = rng.standard_normal(np.shape(reduced))
        if how == "one number" and g.ndim:
            g = np.broadcast_to(np.array(1.5), g.shape)
        elif how == "transposed" and g.ndim:
            g = rng.standard_normal(g.shape[::-1]).T
        elif how in ("float32", "int"):
            g = np.round(g * 10).astype(np.float32 if how == "float32" else int)
        axis = axes or None
        if len(axes) == 1:
            axis = {"np.int64 axis": np.int64(axes[0]), "negative axis": axes[0] - len(shape)}.get(how, axes[0])
        got = rt.expand_reduced(g, np.zeros(shape), axis, keep)
        want = np.broadcast_to(g if keep or not axes else np.expand_dims(g, axes), shape)
        assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want), (shape, axes, how)
        assert not got.flags.writeable


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_masked_is_where(dtype):
    """rt.masked(g, c, keep) is np.where(c, g, 0) (keep) or np.where(c, 0, g), entry for entry and
    in dtype, also where g is infinite or nan on either side of the mask and for a truthy
    non-boolean condition, a broadcast condition, a scalar g and a transposed g."""
    g = R.normal(size=(4, 5)).astype(dtype)
    g[0, 0], g[1, 1], g[2, 2] = np.inf, -np.inf, np.nan
    conditions = [R.normal(size=(4, 5)) > 0, np.array([0.0, 2.0, -1.0, 0.0, np.nan]), True, False,
                  np.arange(4)[:, None] % 2]
    for c in conditions:
        for arg in (g, g.T.copy().T, g[:, :1], dtype(1.5)):
            for keep in (True, False):
                want = np.where(c, arg, 0.0) if keep else np.where(c, 0.0, arg)
                got = rt.masked(arg, c, keep)
                assert np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want)
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("terms,out,shapes", [
    (["ij", "jk"], "ik", [(2, 3), (3, 4)]), (["ij", "kj"], "ik", [(2, 3), (4, 3)]),
    (["ji", "jk"], "ki", [(3, 2), (3, 4)]), (["i", "ij"], "j", [(3,), (3, 4)]), (["ij", "j"], "i", [(2, 3), (3,)]),
    (["i", "j"], "ij", [(3,), (4,)]), (["i", "j"], "ji", [(3,), (4,)]), (["ijk", "kjl"], "li", [(2, 3, 4), (4, 3, 5)]),
    (["bij", "bjk"], "bik", [(2, 3, 4), (2, 4, 5)]), (["ii", "ij"], "j", [(3, 3), (3, 4)]),
    (["ij", "jk"], "ik", [(2, 1), (3, 4)]), (["ij", "jk"], "i", [(2, 3), (3, 4)]), (["", "ij"], "ij", [(), (2, 3)]),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_contract_is_einsum(terms, out, shapes, dtype):
    """The einsum gradients' two-operand products through `@`/tensordot equal np.einsum (including
    the forms that must stay with einsum: batch letters, a repeated letter, a broadcast length-1
    axis, a letter summed in one operand alone, a 0-d operand)."""
    from adjoint_compiler.runtime_rules import _contract
    ops = [(R.normal(size=s) + (1j * R.normal(size=s) if dtype is np.complex128 else 0)).astype(dtype) for s in shapes]
    want = np.einsum(",".join(terms) + "->" + out, *ops)
    got = _contract(terms, ops, out)
    assert np.shape(got) == want.shape and np.result_type(got) == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype is np.float32 else 1e-12)

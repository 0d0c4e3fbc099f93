"""Finite-difference tests of products, contractions and np.linalg (rules/linalg.py)."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads


def l_dot(a, b, w): return np.sum(np.dot(a, b) * w)
def l_dot_method(a, b, w): return np.sum(a.dot(b) * w)
def l_matmul(a, b, w): return np.sum(np.matmul(a, b) * w)
def l_matmul_op(a, b, w): return np.sum((a @ b) * w)
def l_inner(a, b, w): return np.sum(np.inner(a, b) * w)
def l_outer(a, b, w): return np.sum(np.outer(a, b) * w)
def l_tensordot(a, b, w): return np.sum(np.tensordot(a, b) * w)
def l_tensordot_1(a, b, w): return np.sum(np.tensordot(a, b, axes=1) * w)
def l_tensordot_0(a, b, w): return np.sum(np.tensordot(a, b, 0) * w)
def l_tensordot_pairs(a, b, w): return np.sum(np.tensordot(a, b, axes=([1, 0], [0, 2])) * w)
def l_tensordot_ints(a, b, w): return np.sum(np.tensordot(a, b, axes=(2, 0)) * w)
def l_einsum_mm(a, b, w): return np.sum(np.einsum("ij,jk->ik", a, b) * w)
def l_einsum_dot(a, b, w): return np.einsum("ij,ij->", a, b) * w
def l_einsum_implicit(a, b, w): return np.sum(np.einsum("ij,j", a, b) * w)
def l_einsum_outer(a, b, w): return np.sum(np.einsum("i,j->ij", a, b) * w)
def l_einsum_batch(a, b, w): return np.sum(np.einsum("bij,bjk->bik", a, b) * w)
def l_einsum_ellipsis(a, b, w): return np.sum(np.einsum("...ij,jk->...ik", a, b) * w)
def l_einsum_broadcast(a, b, w): return np.sum(np.einsum("...i,...i->...", a, b) * w)
def l_einsum_sum_out(a, b, w): return np.sum(np.einsum("ij,kj->k", a, b) * w)
def l_einsum_three(a, b, w): return np.sum(np.einsum("ij,jk,k->i", a, b, b[0]) * w)

PRODUCTS = [
    (l_dot, (5,), (5,), ()), (l_dot, (3, 4), (4,), (3,)), (l_dot, (4,), (4, 3), (3,)),
    (l_dot, (3, 4), (4, 2), (3, 2)), (l_dot, (2, 3, 4), (4, 5), (2, 3, 5)),
    (l_dot, (2, 3, 4), (5, 4, 2), (2, 3, 5, 2)), (l_dot, (), (3, 4), (3, 4)), (l_dot, (3,), (), (3,)),
    (l_dot_method, (3, 4), (4, 2), (3, 2)), (l_dot_method, (3, 4), (4,), (3,)),
    (l_matmul, (3, 4), (4, 2), (3, 2)), (l_matmul, (2, 3, 4), (4, 5), (2, 3, 5)),
    (l_matmul, (4,), (2, 4, 3), (2, 3)),
    (l_matmul, (4,), (4, 3), (3,)), (l_matmul, (2, 3, 4), (4,), (2, 3)),
    (l_matmul_op, (2, 1, 3, 4), (5, 4, 2), (2, 5, 3, 2)),
    (l_inner, (5,), (5,), ()), (l_inner, (3, 4), (5, 4), (3, 5)), (l_inner, (2, 3, 4), (4,), (2, 3)),
    (l_inner, (), (3, 2), (3, 2)),
    (l_outer, (3,), (4,), (3, 4)), (l_outer, (2, 2), (3,), (4, 3)),
    (l_tensordot, (2, 3, 4), (3, 4, 5), (2, 5)), (l_tensordot_1, (3, 4), (4, 5), (3, 5)),
    (l_tensordot_0, (3,), (2, 2), (3, 2, 2)), (l_tensordot_pairs, (3, 4, 2), (4, 5, 3), (2, 5)),
    (l_tensordot_ints, (2, 3, 4), (4, 5), (2, 3, 5)),
    (l_einsum_mm, (3, 4), (4, 2), (3, 2)), (l_einsum_dot, (3, 4), (3, 4), ()),
    (l_einsum_implicit, (3, 4), (4,), (3,)), (l_einsum_outer, (3,), (4,), (3, 4)),
    (l_einsum_batch, (2, 3, 4), (2, 4, 5), (2, 3, 5)), (l_einsum_ellipsis, (2, 3, 4), (4, 5), (2, 3, 5)),
    (l_einsum_broadcast, (3, 4), (1, 4), (3,)), (l_einsum_sum_out, (3, 4), (5, 4), (5,)),
    (l_einsum_three, (3, 4), (4, 5), (3,)),
]


def _id(case):
    f, sa, sb, _ = case.values if hasattr(case, "values") else case
    return f"{f.__name__}-{sa}-{sb}"


@pytest.mark.parametrize("f,sa,sb,sw", PRODUCTS, ids=[_id(c) for c in PRODUCTS])
def test_product(f, sa, sb, sw):
    rng = np.random.default_rng(5)
    a, b, w = (rng.standard_normal(s) if s else float(rng.standard_normal()) for s in (sa, sb, sw))
    check_grads(f, a, b, w, wrt=(0, 1))


def l_einsum_diag(a, w): return np.sum(np.einsum("ii->i", a) * w)
def l_einsum_trace(a, w): return np.einsum("ii", a) * w
def l_einsum_transpose(a, w): return np.sum(np.einsum("ji", a) * w)
def l_einsum_rowsum(a, w): return np.sum(np.einsum("ij->i", a) * w)
def l_einsum_batch_diag(a, w): return np.sum(np.einsum("bii->bi", a) * w)
def l_trace(a, w): return np.trace(a) * w
def l_trace_offset(a, w): return np.trace(a, offset=1) * w
def l_trace_axes(a, w): return np.sum(np.trace(a, axis1=1, axis2=2) * w)
def l_trace_method(a, w): return a.trace() * w
def l_inv(a, w): return np.sum(np.linalg.inv(a) * w)
def l_det(a, w): return np.sum(np.linalg.det(a) * w)
def l_norm(x, w): return np.linalg.norm(x) * w
def l_norm_1(x, w): return np.linalg.norm(x, 1) * w
def l_norm_3(x, w): return np.linalg.norm(x, ord=3) * w
def l_norm_inf(x, w): return np.linalg.norm(x, np.inf) * w
def l_norm_minf(x, w): return np.linalg.norm(x, -np.inf) * w
def l_norm_axis1(x, w): return np.sum(np.linalg.norm(x, axis=1) * w)
def l_norm_axis0_keep(x, w): return np.sum(np.linalg.norm(x, axis=0, keepdims=True) * w)
def l_norm_axis1_ord1(x, w): return np.sum(np.linalg.norm(x, ord=1, axis=1) * w)
def l_norm_fro(x, w): return np.linalg.norm(x, "fro") * w
def l_norm_nuc(x, w): return np.linalg.norm(x, "nuc") * w
def l_norm_2(x, w): return np.linalg.norm(x, 2) * w
def l_norm_m2(x, w): return np.linalg.norm(x, -2) * w
def l_norm_mat_1(x, w): return np.linalg.norm(x, 1) * w
def l_norm_mat_m1(x, w): return np.linalg.norm(x, -1) * w
def l_norm_mat_inf(x, w): return np.linalg.norm(x, np.inf) * w
def l_norm_mat_minf(x, w): return np.linalg.norm(x, -np.inf) * w
def l_norm_batch_fro(x, w): return np.sum(np.linalg.norm(x, axis=(1, 2)) * w)
def l_norm_batch_nuc(x, w): return np.sum(np.linalg.norm(x, "nuc", axis=(2, 0)) * w)
def l_norm_batch_inf(x, w): return np.sum(np.linalg.norm(x, np.inf, (0, 1), True) * w)


def wellcond(rng, shape):
    n = shape[-1]
    return rng.standard_normal(shape) * 0.3 + np.eye(n) * 2.0


UNARY = [
    (l_einsum_diag, (4, 4), (4,)), (l_einsum_trace, (4, 4), ()), (l_einsum_transpose, (3, 4), (4, 3)),
    (l_einsum_rowsum, (3, 4), (3,)), (l_einsum_batch_diag, (2, 3, 3), (2, 3)),
    (l_trace, (4, 4), ()), (l_trace, (3, 5), ()), (l_trace_offset, (4, 4), ()),
    (l_trace_axes, (2, 3, 3), (2,)), (l_trace_method, (3, 3), ()),
    (l_inv, (3, 3), (3, 3)), (l_inv, (2, 3, 3), (2, 3, 3)), (l_det, (3, 3), ()), (l_det, (2, 3, 3), (2,)),
    (l_norm, (5,), ()), (l_norm, (3, 4), ()), (l_norm, (2, 3, 4), ()), (l_norm_1, (5,), ()),
    (l_norm_3, (5,), ()), (l_norm_inf, (5,), ()), (l_norm_minf, (5,), ()), (l_norm_axis1, (3, 4), (3,)),
    (l_norm_axis0_keep, (3, 4), (1, 4)), (l_norm_axis1_ord1, (3, 4), (3,)),
    (l_norm_fro, (3, 4), ()), (l_norm_nuc, (3, 4), ()), (l_norm_2, (3, 4), ()), (l_norm_m2, (4, 3), ()),
    (l_norm_mat_1, (3, 4), ()), (l_norm_mat_m1, (3, 4), ()), (l_norm_mat_inf, (3, 4), ()),
    (l_norm_mat_minf, (3, 4), ()), (l_norm_batch_fro, (2, 3, 4), (2,)),
    (l_norm_batch_nuc, (3, 2, 4), (2,)), (l_norm_batch_inf, (3, 4, 2), (1, 1, 2)),
]


@pytest.mark.parametrize("f,sx,sw", UNARY, ids=[f"{f.__name__}-{sx}" for f, sx, _ in UNARY])
def test_unary(f, sx, sw):
    rng = np.random.default_rng(6)
    x = wellcond(rng, sx) if f in (l_inv, l_det) else rng.standard_normal(sx)
    w = rng.standard_normal(sw) if sw else float(rng.standard_normal())
    check_grads(f, x, w)


def l_solve(a, b, w): return np.sum(np.linalg.solve(a, b) * w)


@pytest.mark.parametrize("sb", [(3,), (3, 2)])
def test_solve(sb):
    rng = np.random.default_rng(7)
    a, b, w = wellcond(rng, (3, 3)), rng.standard_normal(sb), rng.standard_normal(sb)
    check_grads(l_solve, a, b, w, wrt=(0, 1))


@pytest.mark.parametrize("sa,sb", [((2, 3, 3), (2, 3, 2)), ((2, 2, 2), (2,)), ((2, 3, 3), (3,)),
                                   ((4, 2, 3, 3), (3,)), ((2, 2, 2), (2, 1)), ((2, 3, 3), (3, 2)),
                                   ((4, 2, 3, 3), (2, 3, 2))])
def test_solve_batched(sa, sb):
    """A stack of matrices against a stack of right-hand sides, one vector (NumPy 2: solved
    against every matrix; it gave a wrong gradient of `a` where the stack was as long as the
    vector, else crashed) or one matrix broadcast over the stack (its gradient was not summed)."""
    rng = np.random.default_rng(8)
    a, b = wellcond(rng, sa), rng.standard_normal(sb)
    w = rng.standard_normal(np.linalg.solve(a, b).shape)
    check_grads(l_solve, a, b, w, wrt=(0, 1))
    from adjoint_compiler import jvp
    ta, tb = rng.standard_normal(sa), rng.standard_normal(sb)
    eps = 1e-6
    fd = (l_solve(a + eps * ta, b + eps * tb, w) - l_solve(a - eps * ta, b - eps * tb, w)) / (2 * eps)
    np.testing.assert_allclose(jvp(l_solve, (a, b, w), (ta, tb, np.zeros_like(w)))[1], fd, rtol=1e-5, atol=1e-7)


def n_inf(x): return np.linalg.norm(x, np.inf)


def test_norm_inf_ties_split_equally():
    np.testing.assert_array_equal(grad(n_inf)(np.array([1.0, -3.0, 3.0, 2.0])), [0.0, -0.5, 0.5, 0.0])


def test_norm_at_zero_is_zero():
    np.testing.assert_array_equal(grad(l_norm)(np.zeros(3), 1.0), np.zeros(3))


def l_diagonal(a, w): return np.sum(np.diagonal(a) * w)
def l_diagonal_offset(a, w): return np.sum(np.diagonal(a, -1) * w)
def l_diagonal_axes(a, w): return np.sum(np.diagonal(a, 1, axis1=2, axis2=1) * w)
def l_diagonal_method(a, w): return np.sum(a.diagonal() * w)
def l_diag_vector(a, w): return np.sum(np.diag(a, 1) * w)
def l_diag_matrix(a, w): return np.sum(np.diag(a) * w)
def l_triu(a, w): return np.sum(np.triu(a) * w)
def l_tril(a, w): return np.sum(np.tril(a, -1) * w)
def l_slogdet(a, w): return np.linalg.slogdet(a)[1] * w
def l_slogdet_attr(a, w): return np.sum(np.linalg.slogdet(a).logabsdet * w)
def l_slogdet_unpacked(a, w):
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(sign * logdet * w)


DIAGONALS = [(l_diagonal, (3, 4), (3,)), (l_diagonal_offset, (4, 3), (3,)),
             (l_diagonal_axes, (2, 4, 3), (2, 3)), (l_diagonal_method, (3, 3), (3,)),
             (l_diag_vector, (3,), (4, 4)), (l_diag_matrix, (3, 4), (3,)), (l_triu, (3, 4), (3, 4)),
             (l_tril, (3, 4), (3, 4)), (l_slogdet_attr, (3, 3), ()), (l_slogdet_attr, (2, 3, 3), (2,))]
DIAGONALS += [(l_slogdet, (3, 3), ()), (l_slogdet_unpacked, (2, 3, 3), (2,))]


@pytest.mark.parametrize("f,sx,sw", DIAGONALS,
                         ids=[f"{c[0].__name__}-{c[1]}"
                              for c in (getattr(c, "values", c) for c in DIAGONALS)])
def test_diagonals(f, sx, sw):
    rng = np.random.default_rng(16)
    x = wellcond(rng, sx) if f in (l_slogdet, l_slogdet_attr, l_slogdet_unpacked) else rng.standard_normal(sx)
    w = rng.standard_normal(sw) if sw else float(rng.standard_normal())
    check_grads(f, x, w)

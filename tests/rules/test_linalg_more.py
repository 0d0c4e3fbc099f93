"""Finite-difference tests of the np.linalg factorizations (rules/linalg.py, issue 15): cholesky,
eigh, eigvalsh, svd, qr, pinv, lstsq, matrix_power, over square, tall, wide and stacked matrices
and their keywords; and the documented behaviour at degenerate points (repeated eigenvalues,
zero singular values, rank deficiency): the convention, or `UndefinedGradientError`."""
import numpy as np
import pytest

from adjoint_compiler import grad, value_and_grad, vjp
from adjoint_compiler.runtime import UndefinedGradientError
from adjoint_compiler.testing import check_grads

rng = np.random.default_rng(150)


def spd(shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def weights_like(*values):
    return [rng.standard_normal(np.shape(v)) for v in values]


def mT(x):
    return np.swapaxes(x, -1, -2)


# -- cholesky, eigh, eigvalsh: symmetric input, one triangle read ---------------------------------
def chol(a, w): return np.sum(np.linalg.cholesky(a) * w)
def chol_upper(a, w): return np.sum(np.linalg.cholesky(a, upper=True) * w)
def chol_logdet(a, w): return 2.0 * np.sum(np.log(np.diagonal(np.linalg.cholesky(a), axis1=-2, axis2=-1))) * np.sum(w)


def eigh_values(a, w, wv):
    return np.sum(np.linalg.eigh(a)[0] * w)


def eigh_both(a, w, wv):
    lam, v = np.linalg.eigh(a)
    return np.sum(lam * w) + np.sum(v * wv)


def eigh_upper(a, w, wv):
    lam, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(lam * w) + np.sum(np.sin(v) * wv)


def eigh_fields(a, w, wv):
    r = np.linalg.eigh(a)
    return np.sum(r.eigenvalues * w) + np.sum(r.eigenvectors * wv)


def eigh_vectors_only(a, w, wv):
    return np.sum(np.linalg.eigh(a)[1] * wv)


def eigvalsh(a, w, wv): return np.sum(np.linalg.eigvalsh(a) * w)
def eigvalsh_upper(a, w, wv): return np.sum(np.linalg.eigvalsh(a, "U") ** 2 * w)


@pytest.mark.parametrize("f", [chol, chol_upper, chol_logdet])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
def test_cholesky(f, shape):
    a = spd(shape)
    check_grads(f, a, rng.standard_normal(shape))


@pytest.mark.parametrize("f", [eigh_values, eigh_both, eigh_upper, eigh_fields, eigh_vectors_only, eigvalsh,
                               eigvalsh_upper])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
def test_eigh(f, shape):
    a = spd(shape)
    w, wv = rng.standard_normal(shape[:-1]), rng.standard_normal(shape)
    check_grads(f, a, w, wv)


def test_the_triangle_read_gets_the_gradient():
    """NumPy reads the lower triangle (the upper with UPLO='U' / upper=True): the other one gets
    no gradient, and for symmetric perturbations the gradient is the symmetric one, v v^T."""
    a = spd((3, 3))
    g = grad(lambda_top)(a)
    assert np.all(np.triu(g, 1) == 0)
    v = np.linalg.eigh(a)[1][:, -1]
    sym = np.outer(v, v)
    np.testing.assert_allclose(g, 2 * np.tril(sym, -1) + np.diag(np.diag(sym)), atol=1e-12)
    gu = grad(chol_upper)(a, np.ones((3, 3)))
    assert np.all(np.tril(gu, -1) == 0)


def lambda_top(a):
    return np.linalg.eigvalsh(a)[-1]


def kernel_logdet(x):
    k = np.exp(-(x[:, None] - x[None, :]) ** 2) + np.eye(x.shape[0])
    return np.sum(np.log(np.diagonal(np.linalg.cholesky(k))))


def test_cholesky_of_a_matrix_built_symmetrically():
    check_grads(kernel_logdet, rng.standard_normal(5))


# -- svd -------------------------------------------------------------------------------------------
def svd_reduced(a, wu, ws, wv):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * wu) + np.sum(s * ws) + np.sum(vh * wv)


def svd_fields(a, wu, ws, wv):
    r = np.linalg.svd(a, False)
    return np.sum(r.U * wu) + np.sum(r.S * ws) + np.sum(r.Vh * wv)


def svd_full(a, wu, ws, wv):
    """The leading columns of the full factors, and the completed ones through their projectors
    (which do not depend on the basis LAPACK picks for them)."""
    u, s, vh = np.linalg.svd(a)
    k = s.shape[-1]
    up, vp = u[..., :, k:], mT(vh)[..., :, k:]
    return (np.sum(u[..., :, :k] * wu[..., :, :k]) + np.sum(s * ws) + np.sum(vh[..., :k, :] * wv[..., :k, :])
            + np.sum((up @ mT(up)) * (wu @ mT(wu))) + np.sum((vp @ mT(vp)) * (wv @ mT(wv))))


def svd_values(a, wu, ws, wv):
    return np.sum(np.linalg.svd(a, compute_uv=False) * ws)


def svd_values_kw(a, wu, ws, wv):
    return np.sum(np.linalg.svd(a, full_matrices=True, compute_uv=False) ** 2 * ws)


SHAPES = [(1, 1), (4, 3), (3, 3), (3, 5), (2, 4, 3), (2, 3, 4)]


@pytest.mark.parametrize("f", [svd_reduced, svd_fields, svd_full, svd_values, svd_values_kw])
@pytest.mark.parametrize("shape", SHAPES)
def test_svd(f, shape):
    a = rng.standard_normal(shape)
    full = f is svd_full
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    check_grads(f, a, *weights_like(u, s, vh))


# -- qr ----------------------------------------------------------------------------------------------
def qr_reduced(a, wq, wr):
    q, r = np.linalg.qr(a)
    return np.sum(q * wq) + np.sum(r * wr)


def qr_fields(a, wq, wr):
    res = np.linalg.qr(a, mode="reduced")
    return np.sum(res.Q * wq) + np.sum(np.tanh(res.R) * wr)


def qr_complete(a, wq, wr):
    q, r = np.linalg.qr(a, mode="complete")
    k = min(a.shape[-2:])
    return np.sum(q[..., :, :k] * wq[..., :, :k]) + np.sum(r * wr)


def qr_r(a, wq, wr):
    return np.sum(np.linalg.qr(a, mode="r") * wr)


@pytest.mark.parametrize("f, mode", [(qr_reduced, "reduced"), (qr_fields, "reduced"), (qr_complete, "complete"),
                                     (qr_r, "reduced")])
@pytest.mark.parametrize("shape", SHAPES)
def test_qr(f, mode, shape):
    a = rng.standard_normal(shape)
    q, r = np.linalg.qr(a, mode=mode)
    check_grads(f, a, *weights_like(q, r))


# -- pinv, lstsq, matrix_power -------------------------------------------------------------------------
def pinv(a, w): return np.sum(np.linalg.pinv(a) * w)
def pinv_rcond(a, w): return np.sum(np.linalg.pinv(a, rcond=1e-12) ** 2 * w)


@pytest.mark.parametrize("f", [pinv, pinv_rcond])
@pytest.mark.parametrize("shape", SHAPES)
def test_pinv(f, shape):
    a = rng.standard_normal(shape)
    check_grads(f, a, *weights_like(np.linalg.pinv(a)))


def lstsq_x(a, b, w):
    x, _residuals, _rank, _s = np.linalg.lstsq(a, b)
    return np.sum(x * w)


def lstsq_all(a, b, w):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x * w) + 0.3 * np.sum(residuals) + 0.7 * np.sum(s) + 0.0 * rank


def lstsq_index(a, b, w):
    return np.sum(np.linalg.lstsq(a, b)[0] ** 2 * w)


@pytest.mark.parametrize("f", [lstsq_x, lstsq_all, lstsq_index])
@pytest.mark.parametrize("sa, sb", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 3), (3,)), ((2, 4), (2,)),
                                    ((2, 4), (2, 3))])
def test_lstsq(f, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    check_grads(f, a, b, *weights_like(np.linalg.lstsq(a, b)[0]), wrt=(0, 1))


def mpow3(a, w): return np.sum(np.linalg.matrix_power(a, 3) * w)
def mpow1(a, w): return np.sum(np.linalg.matrix_power(a, 1) * w)
def mpow0(a, w): return np.sum(np.linalg.matrix_power(a, 0) * w) + np.sum(a * w)
def mpow_neg(a, w): return np.sum(np.linalg.matrix_power(a, -2) * w)


@pytest.mark.parametrize("f", [mpow3, mpow1, mpow0, mpow_neg])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3)])
def test_matrix_power(f, shape):
    a = rng.standard_normal(shape) * 0.4 + np.eye(shape[-1])
    check_grads(f, a, rng.standard_normal(shape))


# -- a longer program: PCA, vjp of a factor -----------------------------------------------------------
def pca_loss(x, w):
    xc = x - np.mean(x, axis=0)
    cov = xc.T @ xc / x.shape[0]
    lam, v = np.linalg.eigh(cov)
    top = v[:, -2:]
    return np.sum((xc @ top) ** 2 * w[:, :2]) + np.sum(lam)


def test_pca_through_eigh():
    x = rng.standard_normal((8, 4)) * np.array([3.0, 2.0, 1.0, 0.5])
    check_grads(pca_loss, x, rng.standard_normal((8, 4)))


def cholesky_factor(a):
    return np.linalg.cholesky(a)


def test_vjp_of_cholesky():
    a = spd((3, 3))
    out, pullback = vjp(cholesky_factor, a)
    np.testing.assert_allclose(out, np.linalg.cholesky(a))
    (g,) = pullback(np.tril(np.ones((3, 3))))
    _value, g2 = value_and_grad(chol)(a, np.tril(np.ones((3, 3))))
    np.testing.assert_allclose(g, g2)


# -- degenerate points: the conventions, or a clear error --------------------------------------------
Q3, _ = np.linalg.qr(rng.standard_normal((3, 3)))
REPEATED = Q3 @ np.diag([1.0, 1.0, 3.0]) @ Q3.T


def eig_projector(a, w):
    _lam, v = np.linalg.eigh(a)
    p = v[:, :2] @ v[:, :2].T
    return np.sum(p * w)


def eig_one_vector(a, w):
    return np.sum(np.linalg.eigh(a)[1][:, 0] * w[0])


def test_repeated_eigenvalues_projector_is_differentiable():
    check_grads(eig_projector, REPEATED, rng.standard_normal((3, 3)))


def test_repeated_eigenvalues_one_vector_is_refused():
    with pytest.raises(UndefinedGradientError, match="repeated values"):
        grad(eig_one_vector)(REPEATED, np.ones((3, 3)))


def test_repeated_eigenvalues_share_their_gradient():
    w = np.array([1.0, 2.0, 6.0])
    g = grad(eigvalsh)(np.eye(3), w, np.zeros((3, 3)))
    np.testing.assert_allclose(g, 3.0 * np.eye(3))
    g = grad(eigh_values)(REPEATED, w, np.zeros((3, 3)))  # the pair (1, 1) shares 1.5, the 3 gets 6
    v = np.linalg.eigh(REPEATED)[1]
    sym = v @ np.diag([1.5, 1.5, 6.0]) @ v.T
    np.testing.assert_allclose(g, 2 * np.tril(sym, -1) + np.diag(np.diag(sym)), atol=1e-12)


def test_singular_values_at_ties_and_zero():
    g = grad(svd_values)(np.diag([2.0, 2.0, 0.0]), 0.0, np.array([1.0, 3.0, 5.0]), 0.0)
    np.testing.assert_allclose(g, np.diag([2.0, 2.0, 0.0]))


def svd_u(a, w):
    return np.sum(np.linalg.svd(a)[0] * w)


def svd_u_leading(a, w):
    return np.sum(np.linalg.svd(a)[0][:, 0] * w[0])


def svd_u_completion(a, w):
    return np.sum(np.linalg.svd(a)[0][:, -1] * w[0])


def test_singular_vectors_at_a_zero_singular_value_are_refused():
    q2, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    a = Q3 @ np.diag([2.0, 1.0, 0.0]) @ q2.T
    with pytest.raises(UndefinedGradientError, match="zero singular value"):
        grad(svd_u)(a, np.ones((3, 3)))
    check_grads(svd_u_leading, a, np.ones((3, 3)))  # the vectors of the nonzero values are fine


def test_a_completed_column_of_full_matrices_is_refused():
    a = rng.standard_normal((4, 2))
    with pytest.raises(UndefinedGradientError, match="completing the basis"):
        grad(svd_u_completion)(a, np.ones((4, 4)))


def qr_complete_extra(a, w):
    return np.sum(np.linalg.qr(a, mode="complete")[0][:, -1] * w[0])


def test_a_single_completing_column_is_determined():
    """One column completing the basis is fixed up to its sign: it has a derivative."""
    check_grads(qr_complete_extra, rng.standard_normal((3, 2)), rng.standard_normal((3, 3)))
    check_grads(svd_u_completion, rng.standard_normal((3, 2)), rng.standard_normal((3, 3)))


@pytest.mark.parametrize("f, a, match", [
    (pinv, np.ones((3, 2)), "full rank"),
    (qr_reduced, np.ones((3, 2)), "full rank"),
    (lstsq_x, np.ones((3, 2)), "full rank"),
    (qr_complete_extra, np.arange(8.0).reshape(4, 2) + np.eye(4, 2), "completing the basis"),
])
def test_rank_deficiency_and_free_bases_are_refused(f, a, match):
    args = {pinv: (a, np.ones((2, 3))), qr_reduced: (a, np.ones((3, 2)), np.ones((2, 2))),
            lstsq_x: (a, np.ones(3), np.ones(2)), qr_complete_extra: (a, np.ones((4, 4)))}[f]
    with pytest.raises(UndefinedGradientError, match=match):
        grad(f)(*args)


def svd_hermitian(a): return np.sum(np.linalg.svd(a, hermitian=True)[1])
def qr_raw(a): return np.sum(np.linalg.qr(a, mode="raw")[1])


def test_refused_keywords():
    from adjoint_compiler.errors import CompileError
    with pytest.raises(CompileError, match="hermitian"):
        grad(svd_hermitian)(spd((3, 3)))
    with pytest.raises(ValueError, match="raw"):
        grad(qr_raw)(rng.standard_normal((3, 3)))

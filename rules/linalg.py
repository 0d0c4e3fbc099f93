"""Products, contractions, diagonals and `np.linalg`: dot, inner, outer, tensordot, einsum, trace,
diagonal, diag, triu, tril, inv, solve, det, slogdet, norm, and the factorizations cholesky, eigh,
eigvalsh, svd, qr, pinv, lstsq, matrix_power. (`@` and `np.matmul` share the
operator's rule: see `arithmetic` and `ufuncs`.)"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.ir import Attr
from adjoint_compiler.registry import adjoint, alias, computed_by, differentiate_as, nondifferentiable, tangent


@adjoint(np.dot)
def dot(c, a, b):
    a_bar += rt.dot_left(c_bar, a, b)
    b_bar += rt.dot_right(c_bar, a, b)


@tangent(np.dot)
def dot_dot(c, a, b):
    c_dot = np.dot(a_dot, b) + np.dot(a, b_dot)


alias("dot", np.dot)


@adjoint(np.inner)
def inner(c, a, b):
    a_bar += rt.inner_left(c_bar, a, b)
    b_bar += rt.inner_right(c_bar, a, b)


@tangent(np.inner)
def inner_dot(c, a, b):
    c_dot = np.inner(a_dot, b) + np.inner(a, b_dot)


@adjoint(np.outer)
def outer(c, a, b):
    a_bar += np.reshape(c_bar @ np.ravel(b), np.shape(a))
    b_bar += np.reshape(np.ravel(a) @ c_bar, np.shape(b))


@tangent(np.outer)
def outer_dot(c, a, b):
    c_dot = np.outer(a_dot, b) + np.outer(a, b_dot)


@adjoint(np.multiply.outer)  # (the gradient of a matrix-vector product is one: differentiable again)
def multiply_outer(c, a, b):
    a_bar += np.tensordot(c_bar, b, axes=np.ndim(b))
    b_bar += np.tensordot(a, c_bar, axes=np.ndim(a))


@tangent(np.multiply.outer)
def multiply_outer_dot(c, a, b):
    c_dot = np.multiply.outer(a_dot, b) + np.multiply.outer(a, b_dot)


@adjoint(np.add.outer)
def add_outer(c, a, b):
    parts = rt.outer_sums(c_bar, a, b)
    a_bar += parts[0]
    b_bar += parts[1]


@tangent(np.add.outer)
def add_outer_dot(c, a, b):
    c_dot = np.add.outer(a_dot, b_dot)


@adjoint(np.subtract.outer)
def subtract_outer(c, a, b):
    parts = rt.outer_sums(c_bar, a, b)
    a_bar += parts[0]
    b_bar += -parts[1]


@tangent(np.subtract.outer)
def subtract_outer_dot(c, a, b):
    c_dot = np.subtract.outer(a_dot, b_dot)


@adjoint(np.tensordot)
def tensordot(c, a, b, axes=2):
    a_bar += rt.tensordot_left(c_bar, a, b, axes)
    b_bar += rt.tensordot_right(c_bar, a, b, axes)


@tangent(np.tensordot)
def tensordot_dot(c, a, b, axes=2):
    c_dot = np.tensordot(a_dot, b, axes=axes) + np.tensordot(a, b_dot, axes=axes)


@adjoint(np.einsum)
def einsum(y, *operands, dtype=None, out=None):
    """Both forms: `einsum('ij,j->i', a, b)` and the interleaved `einsum(a, [0, 1], b, [1], [0])`."""
    operands_bar += rt.einsum_adjoint(rt.through_dtype(y_bar, dtype=dtype), operands)


@tangent(np.einsum)
def einsum_dot(y, *operands, dtype=None, out=None):
    y_dot = rt.einsum_tangent(operands, operands_dot, dtype=dtype)


computed_by(np.einsum, rt.einsum)  # (two operands: matrix products through BLAS)


@adjoint(np.trace)
def trace(y, a, offset=0, axis1=0, axis2=1):
    a_bar += rt.trace_adjoint(y_bar, a, offset, axis1, axis2)


@tangent(np.trace)
def trace_dot(y, a, offset=0, axis1=0, axis2=1):
    y_dot = np.trace(a_dot, offset=offset, axis1=axis1, axis2=axis2)


alias("trace", np.trace)


@adjoint(np.diagonal)
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    a_bar += rt.diagonal_adjoint(y_bar, a, offset, axis1, axis2)


@tangent(np.diagonal)
def diagonal_dot(y, a, offset=0, axis1=0, axis2=1):
    y_dot = np.diagonal(a_dot, offset=offset, axis1=axis1, axis2=axis2)


alias("diagonal", np.diagonal)


@adjoint(np.diag)
def diag(y, v, k=0):
    v_bar += rt.diag_adjoint(y_bar, v, k)


@tangent(np.diag)
def diag_dot(y, v, k=0):
    y_dot = np.diag(v_dot, k=k)


@adjoint(np.triu)
def triu(y, m, k=0):
    m_bar += rt.unbroadcast(np.triu(y_bar, k), m)  # (a 1-D `m` is broadcast to a square: summed back)


@tangent(np.triu)
def triu_dot(y, m, k=0):
    y_dot = np.triu(m_dot, k=k)


@adjoint(np.tril)
def tril(y, m, k=0):
    m_bar += rt.unbroadcast(np.tril(y_bar, k), m)  # (a 1-D `m` is broadcast to a square: summed back)


@tangent(np.tril)
def tril_dot(y, m, k=0):
    y_dot = np.tril(m_dot, k=k)


@adjoint(np.linalg.inv)
def inv(y, a):
    a_bar += -rt.mT(y) @ y_bar @ rt.mT(y)


@tangent(np.linalg.inv)
def inv_dot(y, a):
    y_dot = -(y @ a_dot @ y)


@adjoint(np.linalg.solve)
def solve(x, a, b):
    b_adj = rt.solve_transposed(a, x_bar, b)
    b_bar += rt.unbroadcast(b_adj, b)  # (a `b` broadcast against a stack of matrices)
    a_bar += rt.solve_a_adjoint(b_adj, a, x, b)


@differentiate_as(rt.solve_triangle)
def solve_triangle(t, b, lower=False):
    return np.linalg.solve(t, b)  # (what it computes, whichever way it solves)


@differentiate_as(rt.solve_transposed)
def solve_transposed(a, g, b=None):
    return rt.solve_rhs(rt.mT(a), g, g if b is None else b)  # (what it computes, whichever way it solves)


@differentiate_as(rt.solve_rhs)
def solve_rhs(a, r, b):
    if np.ndim(b) == 1 and np.ndim(r) > 1:
        return np.linalg.solve(a, r[..., None])[..., 0]
    return np.linalg.solve(a, r)


@tangent(np.linalg.solve)
def solve_dot(x, a, b):
    x_dot = rt.solve_rhs(a, b_dot - rt.solve_product(a_dot, x, b), b)


@adjoint(np.linalg.det)
def det(y, a):
    a_bar += rt.det_adjoint(y_bar, y, a)


@tangent(np.linalg.det)
def det_dot(y, a):
    y_dot = rt.det_tangent(a_dot, a, y)


@adjoint(np.linalg.slogdet)
def slogdet(y, a):
    a_bar += rt.slogdet_adjoint(y_bar, a)


@tangent(np.linalg.slogdet)
def slogdet_dot(y, a):
    y_dot = rt.slogdet_tangent(a_dot, a, y)


@adjoint(Attr("logabsdet"))
def logabsdet(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "logabsdet")


@adjoint(Attr("sign"))  # slogdet's sign passes nothing (its adjoint ignores it); a user's field does
def sign(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "sign")


@tangent(Attr("sign"))
def sign_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "sign")


@tangent(Attr("logabsdet"))
def logabsdet_dot(y, result):
    y_dot = result_dot[1]



@adjoint(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    x_bar += rt.norm_adjoint(y_bar, x, y, ord, axis, keepdims)


# -- factorizations and decompositions (issue 15); conditions in runtime_rules ---------------------
# Eigenvectors and singular vectors need distinct values (or a loss that does not depend on the
# basis of a repeated value's space); `pinv` and `lstsq` need full rank; `cholesky`, `eigh` and
# `eigvalsh` give their gradient to the triangle NumPy reads.
@adjoint(np.linalg.cholesky)
def cholesky(l, a, *, upper=False):
    a_bar += rt.cholesky_adjoint(l_bar, l, upper=upper)


@tangent(np.linalg.cholesky)
def cholesky_dot(l, a, *, upper=False):
    l_dot = rt.cholesky_tangent(a_dot, l, upper=upper)


@adjoint(np.linalg.eigh)
def eigh(y, a, UPLO="L"):
    a_bar += rt.eigh_adjoint(y_bar, a, y, UPLO)


@tangent(np.linalg.eigh)
def eigh_dot(y, a, UPLO="L"):
    y_dot = rt.eigh_tangent(a_dot, a, y, UPLO)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(w, a, UPLO="L"):
    a_bar += rt.eigvalsh_adjoint(w_bar, a, UPLO)


@tangent(np.linalg.eigvalsh)
def eigvalsh_dot(w, a, UPLO="L"):
    w_dot = rt.eigvalsh_tangent(a_dot, a, UPLO)


@adjoint(np.linalg.svd)
def svd(y, a, full_matrices=True, compute_uv=True):
    a_bar += rt.svd_adjoint(y_bar, a, y, full_matrices, compute_uv)


@tangent(np.linalg.svd)
def svd_dot(y, a, full_matrices=True, compute_uv=True):
    y_dot = rt.svd_tangent(a_dot, a, y, full_matrices, compute_uv)


@adjoint(np.linalg.qr)
def qr(y, a, mode="reduced"):
    a_bar += rt.qr_adjoint(y_bar, a, y, mode)


@tangent(np.linalg.qr)
def qr_dot(y, a, mode="reduced"):
    y_dot = rt.qr_tangent(a_dot, a, y, mode)


@adjoint(np.linalg.pinv)
def pinv(y, a, rcond=None):
    a_bar += rt.pinv_adjoint(y_bar, a, y, rcond)


@tangent(np.linalg.pinv)
def pinv_dot(y, a, rcond=None):
    y_dot = rt.pinv_tangent(a_dot, a, y, rcond)


@adjoint(np.linalg.lstsq)
def lstsq(y, a, b, rcond=None):
    parts = rt.lstsq_adjoint(y_bar, a, b, y, rcond)
    a_bar += parts[0]
    b_bar += parts[1]


@tangent(np.linalg.lstsq)
def lstsq_dot(y, a, b, rcond=None):
    y_dot = rt.lstsq_tangent(a_dot, b_dot, a, b, y, rcond)


@adjoint(np.linalg.matrix_power)
def matrix_power(y, a, n):
    a_bar += rt.matrix_power_adjoint(y_bar, a, n)


@tangent(np.linalg.matrix_power)
def matrix_power_dot(y, a, n):
    y_dot = rt.matrix_power_tangent(a_dot, a, n)


# The fields of the named results (`np.linalg.eigh(a).eigenvectors`): the gradient of the one
# field, checked at run time to be a field of a named tuple (a user's NamedTuple works alike).
@adjoint(Attr("eigenvalues"))
def eigenvalues(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "eigenvalues")


@tangent(Attr("eigenvalues"))
def eigenvalues_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "eigenvalues")


@adjoint(Attr("eigenvectors"))
def eigenvectors(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "eigenvectors")


@tangent(Attr("eigenvectors"))
def eigenvectors_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "eigenvectors")


@adjoint(Attr("U"))
def U(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "U")


@tangent(Attr("U"))
def U_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "U")


@adjoint(Attr("S"))
def S(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "S")


@tangent(Attr("S"))
def S_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "S")


@adjoint(Attr("Vh"))
def Vh(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "Vh")


@tangent(Attr("Vh"))
def Vh_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "Vh")


@adjoint(Attr("Q"))
def Q(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "Q")


@tangent(Attr("Q"))
def Q_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "Q")


@adjoint(Attr("R"))
def R(y, result):
    result_bar += rt.field_adjoint(y_bar, result, "R")


@tangent(Attr("R"))
def R_dot(y, result):
    y_dot = rt.field_tangent(result_dot, result, "R")


@tangent(np.linalg.norm)
def norm_dot(y, x, ord=None, axis=None, keepdims=False):
    y_dot = rt.norm_tangent(x_dot, x, y, ord, axis, keepdims)

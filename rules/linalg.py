"""Products, contractions, diagonals and `np.linalg`: dot, inner, outer, tensordot, einsum, trace,
diagonal, diag, triu, tril, inv, solve, det, slogdet, norm. (`@` and `np.matmul` share the
operator's rule: see `arithmetic` and `ufuncs`.)"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.ir import Attr
from adjoint_compiler.registry import adjoint, alias, nondifferentiable


@adjoint(np.dot)
def dot(c, a, b):
    a_bar += rt.dot_left(c_bar, a, b)
    b_bar += rt.dot_right(c_bar, a, b)


alias("dot", np.dot)


@adjoint(np.inner)
def inner(c, a, b):
    a_bar += rt.inner_left(c_bar, a, b)
    b_bar += rt.inner_right(c_bar, a, b)


@adjoint(np.outer)
def outer(c, a, b):
    a_bar += np.reshape(c_bar @ np.ravel(b), np.shape(a))
    b_bar += np.reshape(np.ravel(a) @ c_bar, np.shape(b))


@adjoint(np.tensordot)
def tensordot(c, a, b, axes=2):
    a_bar += rt.tensordot_left(c_bar, a, b, axes)
    b_bar += rt.tensordot_right(c_bar, a, b, axes)


@adjoint(np.einsum)
def einsum(y, *operands, dtype=None, out=None):
    """Both forms: `einsum('ij,j->i', a, b)` and the interleaved `einsum(a, [0, 1], b, [1], [0])`."""
    operands_bar += rt.einsum_adjoint(rt.through_dtype(y_bar, dtype=dtype), operands)


@adjoint(np.trace)
def trace(y, a, offset=0, axis1=0, axis2=1):
    a_bar += rt.trace_adjoint(y_bar, a, offset, axis1, axis2)


alias("trace", np.trace)


@adjoint(np.diagonal)
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    a_bar += rt.diagonal_adjoint(y_bar, a, offset, axis1, axis2)


alias("diagonal", np.diagonal)


@adjoint(np.diag)
def diag(y, v, k=0):
    v_bar += rt.diag_adjoint(y_bar, v, k)


@adjoint(np.triu)
def triu(y, m, k=0):
    m_bar += np.triu(y_bar, k)


@adjoint(np.tril)
def tril(y, m, k=0):
    m_bar += np.tril(y_bar, k)


@adjoint(np.linalg.inv)
def inv(y, a):
    a_bar += -rt.mT(y) @ y_bar @ rt.mT(y)


@adjoint(np.linalg.solve)
def solve(x, a, b):
    b_adj = np.linalg.solve(rt.mT(a), x_bar)
    b_bar += b_adj
    a_bar += rt.solve_a_adjoint(b_adj, a, x, b)


@adjoint(np.linalg.det)
def det(y, a):
    a_bar += rt.det_adjoint(y_bar, y, a)


@adjoint(np.linalg.slogdet)
def slogdet(y, a):
    a_bar += rt.slogdet_adjoint(y_bar, a)


@adjoint(Attr("logabsdet"))
def logabsdet(y, result):
    result_bar += (None, y_bar)


nondifferentiable(Attr("sign"))


@adjoint(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    x_bar += rt.norm_adjoint(y_bar, x, y, ord, axis, keepdims)

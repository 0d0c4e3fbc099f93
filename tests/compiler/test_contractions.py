"""The contractions pass (stage "contractions"): a two-operand `np.einsum` that is a matrix product
in `@`'s order becomes `@` where the shared axes are known to be of one length."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import grad, jvp
from adjoint_compiler.pipeline import compile_gradient
from adjoint_compiler.shapes import dims_of
from adjoint_compiler.testing import check_grads


def stage(f, *args):
    kinds = tuple(f"r{np.ndim(a)}" for a in args)
    return compile_gradient(f, (0,), kinds, stage="contractions", dims=dims_of(args))


def matvec(X, w):
    return np.sum(np.einsum("ij,j->i", X, w) ** 2)


def matmat(A, B):
    return np.sum(np.tanh(np.einsum("ij,jk->ik", A, B)))


def vecmat(v, B):
    return np.sum(np.einsum("j,jk", v, B) ** 2)


def batched(A, B):
    return np.sum(np.einsum("bij,bjk->bik", A, B) ** 2)


def dot(a, b):
    return np.einsum("i,i->", a, b) ** 2


def transposed(A, B):
    return np.sum(np.einsum("ji,jk->ik", A, B) ** 2)


def outer_order(A, B):
    return np.sum(np.einsum("ij,jk->ki", A, B) ** 2)


def two_sums(A, B):
    return np.einsum("ij,ij->", A, B) ** 2


rng = np.random.default_rng(3)
M34, M45, V4, V3 = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=4), rng.normal(size=3)
S234, S245 = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))


@pytest.mark.parametrize("f, args, product", [
    (matvec, (M34, V4), "X @ w"), (matmat, (M34, M45), "A @ B"), (vecmat, (V4, M45), "v @ B"),
    (batched, (S234, S245), "A @ B"), (dot, (V4, V4), "a @ b")])
def test_a_product_in_matmul_order_is_a_matmul(f, args, product):
    text = stage(f, *args)
    assert f"= {product}" in text and "rt.einsum(" not in text
    check_grads(f, *args, wrt=0)
    check_grads(f, *args, wrt=1)


@pytest.mark.parametrize("f, args", [(transposed, (M34, M34)), (outer_order, (M34, M45)), (two_sums, (M34, M34))])
def test_other_orders_stay_einsum(f, args):
    assert "rt.einsum(" in stage(f, *args)
    check_grads(f, *args, wrt=0)


def test_without_the_pattern_of_axis_lengths_it_stays_einsum():
    assert "rt.einsum(" in compile_gradient(matvec, (0,), ("r2", "r1"), stage="contractions")


def test_an_axis_of_length_one_einsum_broadcasts_stays_einsum():
    X, w = rng.normal(size=(3, 1)), rng.normal(size=4)  # einsum broadcasts j: 1 against 4; `@` raises
    assert "rt.einsum(" in stage(matvec, X, w)
    expected = 2 * np.einsum("ij,j->i", X, w)[:, None] * w.sum()
    np.testing.assert_allclose(grad(matvec)(X, w), expected.sum(axis=1, keepdims=True))


def test_the_tangent_goes_through_the_product_too():
    value, tangent = jvp(matvec, (M34, V4), (np.ones_like(M34), np.zeros(4)))
    z = M34 @ V4
    np.testing.assert_allclose(value, np.sum(z ** 2))
    np.testing.assert_allclose(tangent, np.sum(2 * z * (np.ones_like(M34) @ V4)))

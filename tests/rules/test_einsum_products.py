"""`rt.einsum`, which the generated code calls for `np.einsum` without keywords: the same values
as NumPy's for every subscripts form, matrix products through BLAS; gradients through it against
finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import adjoint_source, grad
from adjoint_compiler import runtime as rt

CASES = [("ij,j->i", (5, 4), (4,)), ("ij,jk->ik", (3, 4), (4, 2)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
         ("bij,bkj->bik", (2, 3, 4), (2, 5, 4)), ("ij,ij->i", (3, 4), (3, 4)),
         ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)), ("i,i->", (3,), (3,)),
         ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 2)), ("ij,j->", (3, 4), (4,)), ("ij,jk", (3, 4), (4, 2)),
         ("ii,i->i", (3, 3), (3,)), ("bij,jk->bik", (2, 3, 4), (4, 5)), ("ijk,jk->i", (2, 3, 4), (3, 4)),
         ("ij,kj->ik", (3, 1), (2, 4)),         # (einsum broadcasts the length 1: no matrix product)
         ("bij,bjk->bik", (1, 3, 4), (2, 4, 5)),  # (a batch of 1 against 2: the same)
         ("i,j->ij", (3,), (2,))]


@pytest.mark.parametrize("subscripts,sa,sb", CASES)
def test_the_same_values_as_numpy(subscripts, sa, sb):
    rng = np.random.default_rng(len(subscripts))
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    want, got = np.einsum(subscripts, a, b), rt.einsum(subscripts, a, b)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_mismatched_lengths_raise_as_numpy_does():
    a, b = np.ones((3, 4)), np.ones((5,))
    with pytest.raises(ValueError):
        np.einsum("ij,j->i", a, b)
    with pytest.raises(ValueError):
        rt.einsum("ij,j->i", a, b)


def attention_scores(q, k):
    s = np.einsum("bqd,bkd->bqk", q, k) / 2.0
    return np.sum(np.tanh(s) * np.einsum("bqk->bq", s)[..., None])


def fd(f, args, i, eps=1e-6):
    x = args[i]
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        for sign in (1, -1):
            a = [v.copy() for v in args]
            a[i][idx] += sign * eps
            out[idx] += sign * f(*a) / (2 * eps)
    return out


def test_a_batched_product_differentiates_and_is_printed_as_rt_einsum():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 3, 4)) * 0.5, rng.standard_normal((2, 5, 4)) * 0.5
    for i in (0, 1):
        np.testing.assert_allclose(grad(attention_scores, i)(q, k), fd(attention_scores, [q, k], i), rtol=1e-6,
                                   atol=1e-8)
    assert "rt.einsum('bqd,bkd->bqk', q, k)" in adjoint_source(attention_scores)

"""Finite-difference tests of indexing, the tuple/list displays and `.item()` (rules/indexing.py)."""
import numpy as np
import pytest

from adjoint_compiler.testing import check_grads


def i_int(x, w): return x[1] * w[0]
def i_slice(x, w): return np.sum(x[1:3] * w[:2])
def i_neg_step(x, w): return np.sum(x[::-2] * w[:3])
def i_rows(x, w): return np.sum(x[1] * w[0])
def i_tuple(x, w): return x[1, 2] * w[0, 0]
def i_mixed(x, w): return np.sum(x[:, 1:3] * w[:, :2])
def i_fancy(x, w): return np.sum(x[[0, 2, 0]] * w[:3])
def i_mask(x, w): return np.sum(x[x > 0.0] * 2.0)
def i_ellipsis(x, w): return np.sum(x[..., 0] * w[:, 0])
def i_newaxis(x, w): return np.sum(x[:, None] * w[:, :1, None])
def i_display(x, w): return np.sum(np.sin((x, x * 2.0)[1]) * w) + np.sum([x, w][0][0])
def i_item(x, w): return x.item() * 3.0
def i_item_flat(x, w): return x.item(4) * w[0, 0]
def i_item_multi(x, w): return x.item(1, 2) * w[0, 0]


VECTOR, MATRIX = (6,), (3, 4)
CASES = [(i_int, VECTOR), (i_slice, VECTOR), (i_neg_step, VECTOR), (i_fancy, VECTOR), (i_mask, VECTOR),
         (i_display, VECTOR), (i_rows, MATRIX), (i_tuple, MATRIX), (i_mixed, MATRIX), (i_fancy, MATRIX),
         (i_mask, MATRIX), (i_ellipsis, MATRIX), (i_newaxis, MATRIX), (i_display, MATRIX),
         (i_item_flat, MATRIX), (i_item_multi, MATRIX), (i_item, (1,)), (i_item, (1, 1))]


@pytest.mark.parametrize("f,shape", CASES, ids=[f"{f.__name__}-{s}" for f, s in CASES])
def test_indexing(f, shape):
    rng = np.random.default_rng(15)
    x = rng.standard_normal(shape)
    check_grads(f, x, rng.standard_normal(shape))


def tuples_of_tuples(x):
    return np.sum(x[(0, 1, 1), (2, 2, 0)] ** 2) + np.sum(np.sin(x[(0, 1, 1),])) + np.sum(x[((1, 0), (2, 2))] * 3.0)


def tuple_index_written(x):
    b = x * 1.0
    b[(0, 1), (1, 1)] = np.cos(x[(0, 1), (1, 1)])
    b[(2, 2),] = x[0] * 2.0  # (a repeated row: the last write wins)
    return np.sum(b ** 2)


@pytest.mark.parametrize("f", [tuples_of_tuples, tuple_index_written])
def test_fancy_indices_written_as_tuples(f):
    # (`x[(0, 1, 1), (2, 2, 0)]` was printed `x[0, 1, 1, 2, 2, 0]`, and `g[(0, 1, 1),] += v` added
    # one of the two repeated rows: fuzz family indexing)
    check_grads(f, np.random.default_rng(3).normal(size=(3, 4)))

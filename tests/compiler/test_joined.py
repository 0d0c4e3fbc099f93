"""Products of a concatenation (`joined.py`): the cotangent of each part of a concatenation along
the contracted axis of `@` is the product's cotangent times that part's rows of the other
operand, so the undifferentiated parts cost nothing. Checked on the generated source (what is
rewritten, and what must not be) and against central finite differences for each shape."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import adjoint_source, grad, hvp, jvp
from adjoint_compiler import runtime as rt
from adjoint_compiler.testing import check_grads

rng = np.random.default_rng(3)


def step(W, h, x):
    return np.sum(np.tanh(np.concatenate([h, x], axis=1) @ W))


def step_last_axis(W, h, x):
    return np.sum(np.tanh(np.concatenate((h, x), axis=-1) @ W))


def step_hstack(W, h, x):
    return np.sum(np.tanh(np.hstack([h, x]) @ W))


def step_vector(W, h, x):
    return np.sum(np.tanh(np.concatenate([h, x]) @ W))


def step_right(A, h, x):
    return np.sum(np.tanh(A @ np.concatenate([h, x])))


def step_right_matrix(A, h, x):
    return np.sum(np.tanh(A @ np.concatenate([h, x], axis=0)))


def three(W, a, x, b):
    return np.sum(np.sin(np.concatenate([a, x, b], axis=1) @ W))


def rows(W, h, x):  # axis 0 of a left matrix is not the contracted axis
    return np.sum(np.tanh(np.concatenate([h, x], axis=0) @ W))


def batched(W, h, x):  # stacks of matrices, joined along the last axis
    return np.sum(np.tanh(np.concatenate([h, x], axis=2) @ W))


def batched_middle(W, h, x):  # a stack joined along its middle axis: not the contracted one
    return np.sum(np.tanh(np.concatenate([h, x], axis=1) @ W))


def shared(Wz, Wr, h, x):  # one concatenation, two products, and a use of its own
    hx = np.concatenate([h, x], axis=1)
    return np.sum(np.tanh(hx @ Wz) * (hx @ Wr)) + np.sum(hx ** 2)


def rnn(W, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(np.concatenate([h, xs[t]], axis=1) @ W + b)
    return np.sum(h ** 2)


B, H, D = 4, 3, 5
W = rng.normal(size=(H + D, 6))
h, x = rng.normal(size=(B, H)), rng.normal(size=(B, D))
hv, xv = rng.normal(size=H), rng.normal(size=D)


def source(f, wrt, args):
    return adjoint_source(f, wrt, args=args)


@pytest.mark.parametrize("f", [step, step_last_axis, step_hstack])
def test_matrix_parts_meet_their_rows_of_the_right_operand(f):
    src = source(f, (0, 1), (W, h, x))
    assert "rt.part_span(0, 1, h, x)" in src and "concatenate_adjoint" not in src \
        and "hstack_adjoint" not in src and "rt.item(" not in src
    assert ".T @ " in src  # W's gradient is still one product with the whole concatenation
    check_grads(f, W, h, x, wrt=(0, 1))


def test_a_vector_part_and_a_right_operand():
    src = source(step_vector, (0, 1), (W, hv, xv))
    assert "rt.part_span(0, 0, h, x)" in src and "concatenate_adjoint" not in src
    check_grads(step_vector, W, hv, xv, wrt=(0, 1))
    A = rng.normal(size=(6, H + D))
    src = source(step_right, (0, 1), (A, hv, xv))
    assert "A[:, rt.part_span(0, 0, h, x)].T @ " in src and "concatenate_adjoint" not in src
    check_grads(step_right, A, hv, xv, wrt=(0, 1))
    src = source(step_right_matrix, (0, 1), (A, h.T, x.T))
    assert "A[:, rt.part_span(0, 0, h, x)].T @ " in src
    check_grads(step_right_matrix, A, h.T, x.T, wrt=(0, 1))


@pytest.mark.parametrize("wrt", [(0, 1), (0, 3), (1, 3), (2,), (0, 2)])
def test_three_parts_any_of_them_differentiated(wrt):
    a, b = rng.normal(size=(B, 2)), rng.normal(size=(B, 1))
    Wt = rng.normal(size=(2 + D + 1, 3))
    args = (Wt, a, x, b)
    src = source(three, wrt, args)
    if 2 in wrt:  # the middle part: the rows after those of `a`
        assert "rt.part_span(1, 1, a, x, b)" in src
    assert "concatenate_adjoint" not in src
    check_grads(three, *args, wrt=wrt)


def test_every_part_differentiated_keeps_one_product_and_its_split():
    src = source(step, (0, 1, 2), (W, h, x))
    assert "part_span" not in src and "concatenate_adjoint" in src
    check_grads(step, W, h, x, wrt=(0, 1, 2))


def test_axis_zero_of_a_left_matrix_is_not_the_contracted_axis():
    Wr = rng.normal(size=(H, 6))
    args = (Wr, rng.normal(size=(2, H)), rng.normal(size=(3, H)))
    src = source(rows, (0, 1), args)
    assert "part_span" not in src and "concatenate_adjoint" in src
    check_grads(rows, *args, wrt=(0, 1))


def test_stacks_of_matrices_joined_along_the_contracted_axis_and_not():
    Wb = rng.normal(size=(H + D, 2))
    args = (Wb, rng.normal(size=(2, B, H)), rng.normal(size=(2, B, D)))
    src = source(batched, (0, 1), args)
    assert "rt.part_span(0, 2, h, x)" in src
    check_grads(batched, *args, wrt=(0, 1))
    Ws = rng.normal(size=(2, H + D, 2))  # a stack on the right too: its rows are W[..., span, :]
    args = (Ws, rng.normal(size=(2, B, H)), rng.normal(size=(2, B, D)))
    assert "W[..., rt.part_span(0, 2, h, x), :]" in source(batched, (0, 1), args)
    check_grads(batched, *args, wrt=(0, 1))
    args = (rng.normal(size=(H, 2)), rng.normal(size=(2, B, H)), rng.normal(size=(2, 3, H)))
    src = source(batched_middle, (0, 1), args)
    assert "part_span" not in src
    check_grads(batched_middle, *args, wrt=(0, 1))


def test_unknown_ranks_keep_the_chain_rule():
    src = adjoint_source(step, (0, 1))  # (no argument kinds: the ranks are unknown)
    assert "part_span" not in src and "concatenate_adjoint" in src


def test_a_concatenation_read_by_two_products_and_itself():
    Wz, Wr = rng.normal(size=(H + D, 3)), rng.normal(size=(H + D, 3))
    args = (Wz, Wr, h, x)
    src = source(shared, (0, 1, 2), args)
    assert src.count("rt.part_span(0, 1, h, x)") == 2
    assert "concatenate_adjoint" in src  # (the square of the concatenation passes its own share)
    check_grads(shared, *args, wrt=(0, 1, 2))


def test_a_recurrence_and_its_second_derivatives():
    b, xs, h0 = rng.normal(size=6), rng.normal(size=(3, B, D)), rng.normal(size=(B, 6))
    Wq = rng.normal(size=(6 + D, 6)) / 3
    args = (Wq, b, xs, h0)
    src = source(rnn, (0, 1, 3), args)
    assert "part_span" in src and "concatenate_adjoint" not in src
    check_grads(rnn, *args, wrt=(0, 1, 3))
    v = rng.normal(size=Wq.shape)
    step_size = 1e-5
    numeric = (grad(rnn)(Wq + step_size * v, b, xs, h0) - grad(rnn)(Wq - step_size * v, b, xs, h0)) / (2 * step_size)
    product = hvp(rnn, wrt=0)  # forward over reverse: the jvp of the generated gradient
    np.testing.assert_allclose(product(*args, v), numeric, rtol=1e-5, atol=1e-6)
    assert getattr(product, "fallback", None) is None
    _, tangent = jvp(lambda Wq: grad(rnn, wrt=3)(Wq, b, xs, h0), (Wq,), (v,))
    numeric = (grad(rnn, wrt=3)(Wq + step_size * v, b, xs, h0)
               - grad(rnn, wrt=3)(Wq - step_size * v, b, xs, h0)) / (2 * step_size)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-5, atol=1e-6)


def hoisted(W, h, xs):  # one concatenation before the loop, its product in every trip
    hx = np.concatenate([h, xs[0]], axis=1)
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.tanh(hx @ W) * xs[t][:, :1])
    return total


def repeated(W, h, x):  # one part twice: both of its rows' cotangents
    return np.sum(np.tanh(np.concatenate([h, x, h], axis=1) @ W))


def right_rows(A, h, x):
    return np.sum(np.tanh(A @ np.vstack([h, x])))


def test_a_part_used_twice_a_product_in_a_loop_and_stacked_rows():
    xs = rng.normal(size=(3, B, D))
    src = source(hoisted, (0, 1), (W, h, xs))
    assert "part_span" in src
    check_grads(hoisted, W, h, xs, wrt=(0, 1))
    W2 = rng.normal(size=(2 * H + D, 3))
    src = source(repeated, (0, 1), (W2, h, x))
    assert "rt.part_span(0, 1, h, x, h)" in src and "rt.part_span(2, 1, h, x, h)" in src
    check_grads(repeated, W2, h, x, wrt=(0, 1))
    A = rng.normal(size=(6, H + D))
    args = (A, rng.normal(size=(H, 2)), rng.normal(size=(D, 2)))
    assert "A[:, rt.part_span(0, 0, h, x)].T @ " in source(right_rows, (0, 1), args)
    check_grads(right_rows, *args, wrt=(0, 1))


def test_part_span():
    a, b, c = np.zeros((2, 3)), np.zeros((2, 0)), np.zeros((2, 4))
    assert rt.part_span(0, 1, a, b, c) == slice(0, 3)
    assert rt.part_span(1, 1, a, b, c) == slice(3, 3)
    assert rt.part_span(2, 1, a, b, c) == slice(3, 7)
    assert rt.part_span(1, 1, rt.shape_of(a), rt.shape_of(c)) == slice(3, 7)  # (shapes alone)

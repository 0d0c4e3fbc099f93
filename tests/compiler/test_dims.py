"""Shapes for one pattern of axis lengths (`shapes.dims_of`, `shapes.Dims`): what the shapes pass
derives from it, on the printed IR, and that a gradient compiled for one pattern never serves
another (each checked against finite differences)."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import adjoint_source, grad, shapes
from adjoint_compiler.pipeline import compile_gradient
from adjoint_compiler.testing import check_grads


def notes(func, args, kinds) -> dict:
    """{line text: its shape facts} of the shapes stage for arguments `args`."""
    printed = compile_gradient(func, (0,), kinds, "grad", stage="shapes", dims=shapes.dims_of(args))
    facts = {}
    for line in printed.splitlines():
        code, _, note = line.partition("#")
        facts[code.strip()] = note.split("  ", 1)[1].strip() if "  " in note else ""
    return facts


def test_dims_of_numbers_equal_lengths_alike_and_one_apart():
    a, b, c = np.zeros((3, 1)), np.zeros((4, 3)), np.zeros(4)
    pattern = shapes.dims_of([a, 2.0, b, c])
    assert pattern == (2, 1, 3, 2, 3)
    assert shapes.split_dims(pattern, [2, 0, 2, 1]) == [(2, 1), (), (3, 2), (3,)]
    assert shapes.split_dims(pattern, [2, None, 2, 2]) is None  # (not these ranks)
    assert shapes.dims_of([1.0, [a]]) == () and shapes.dims_of([np.zeros(())]) == ()


def rnn(x, W, U, h0):
    h = h0
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h @ U)
    return np.sum(h * h)


def test_a_carried_value_keeps_its_shape_and_matmuls_match():
    x, W, U, h0 = np.zeros((5, 4, 3)), np.zeros((3, 6)), np.zeros((6, 6)), np.zeros((4, 6))
    facts = notes(rnn, (x, W, U, h0), ("f3", "f2", "f2", "f2"))
    assert facts["x_t_matmul_W = x_t @ W"] == "x_t_matmul_W: shape (d3, d5)"
    assert facts["h_matmul_U = h @ U"] == "h_matmul_U: shape (d3, d5)"
    assert "h: shape (d3, d5)" in facts["for t in range_x_shape_0 [h <- h0]:"]


def test_a_carried_value_whose_shape_changes_has_no_shape_claimed():
    """h0 is a vector: h is (6,) in the first iteration and (4, 6) after. Nothing then shares
    a shape that did not without the pattern: the code is for every pattern."""
    x, W, U, h0 = np.zeros((5, 4, 3)), np.zeros((3, 6)), np.zeros((6, 6)), np.zeros(6)
    facts = notes(rnn, (x, W, U, h0), ("f3", "f2", "f2", "f1"))
    assert not any(": shape (" in note for note in facts.values())
    assert facts["h_matmul_U = h @ U"] == "" and facts["x_t_matmul_W = x_t @ W"] == "x_t_matmul_W: ndim 2"


def gru_cell(Wz, Wh, xs, target):
    B, H = xs.shape[1], Wz.shape[1]
    h = np.zeros((B, H))
    for t in range(xs.shape[0]):
        hx = np.concatenate([h, xs[t]], axis=1)
        z = 1.0 / (1.0 + np.exp(-(hx @ Wz)))
        hc = np.tanh(np.concatenate([z * h, xs[t]], axis=1) @ Wh)
        h = (1 - z) * h + z * hc
    return 0.5 * np.sum((h - target) ** 2)


def test_zeros_of_axis_lengths_concatenations_and_their_products():
    """`np.zeros((B, H))` of two axes' lengths has their ids; a concatenation keeps the axes it
    does not join, and the joined one (a sum of lengths) is an id of its own; a product with it
    has the outer axes whatever its inner ones are (they are equal, or NumPy raises). So `h`
    keeps its shape around the loop and the gradient needs no `rt.unbroadcast` there."""
    args = (np.zeros((7, 4)), np.zeros((7, 4)), np.zeros((5, 2, 3)), np.zeros((2, 4)))
    facts = notes(gru_cell, args, ("f2", "f2", "f3", "f2"))
    assert facts["h = np.zeros(tup_2)"] == "h: shape (d5, d3)"
    assert facts["hx = np.concatenate(lst, axis=1)"] == "hx: shape (d5, hx.1)"
    assert facts["hx_matmul_Wz = hx @ Wz"] == "hx_matmul_Wz: shape (d5, d3)"
    assert "h_2: shape (d5, d3)" in facts["for t in range_xs_shape_2_0 [h_2 <- h]:"]
    args = tuple(np.random.default_rng(1).normal(size=np.shape(a)) for a in args)
    backward = adjoint_source(gru_cell, (0, 1), args=args).split("# adjoint")[1]
    assert "unbroadcast" not in backward.split("for t in reversed")[1]
    check_grads(gru_cell, *args, wrt=(0, 1))


def joins(a, b, c):
    rows = np.concatenate([a, b])
    cols = np.hstack((a, c))
    mismatched = np.concatenate([a, c])  # (NumPy raises for these: no shape claimed)
    one = np.concatenate([a], axis=1)
    return np.sum(rows) + np.sum(cols) + np.sum(mismatched) + np.sum(one)


def test_a_joined_axis_has_an_id_of_its_own_and_the_others_must_agree():
    facts = notes(joins, (np.zeros((2, 3)), np.zeros((4, 3)), np.zeros((2, 5))), ("f2", "f2", "f2"))
    assert facts["rows = np.concatenate(lst)"] == "rows: shape (rows.0, d3)"
    assert facts["cols = np.hstack(tup)"] == "cols: shape (d2, cols.1)"
    assert facts["mismatched = np.concatenate(lst_2)"] == "mismatched: ndim 2"
    assert facts["one = np.concatenate(lst_3, axis=1)"] == "one: shape (d2, d3)"


def reductions(a, b):
    r = np.mean(a, axis=0, keepdims=True)
    s = a.sum(axis=1)
    return np.sum(r * b.T) + np.sum(s * b[0])


def test_reductions_transposes_and_length_one():
    a, b = np.zeros((3, 4)), np.zeros((4, 1))
    facts = notes(reductions, (a, b), ("f2", "f2"))
    assert facts["r = np.mean(a, axis=0, keepdims=True)"] == "r: shape (1, d3)"
    assert facts["s = a.sum(axis=1)"] == "s: shape (d2,)"
    assert facts["b_T = b.T"] == "b_T: shape (1, d3)"
    assert facts["r_times_b_T = r * b_T"] == "r_times_b_T: shape (1, d3)"


def broadcasting(a, b):
    return np.sum(np.sin(a * b) * a)


def test_lengths_not_known_equal_claim_nothing():
    """(3, 1) * (1, 4) broadcasts both: a shape of its own, equal to neither."""
    facts = notes(broadcasting, (np.zeros((3, 1)), np.zeros((1, 4))), ("f2", "f2"))
    assert facts["a_times_b = a * b"] == "a_times_b: shape (d2, d3)"
    facts = notes(broadcasting, (np.zeros((3, 2)), np.zeros((2, 3))), ("f2", "f2"))  # NumPy refuses it
    assert "shape" not in facts["a_times_b = a * b"]


PATTERNS = [((4, 3), (3,)), ((4, 3), (1,)), ((4, 1), (3,)), ((3, 3), (3,)), ((1, 3), (1,))]


def bias(a, b):
    return np.sum(np.tanh(a + b) * a)


@pytest.mark.parametrize("order", [PATTERNS, PATTERNS[::-1]])
def test_one_function_in_every_pattern_of_lengths(order):
    """Each pattern compiles code of its own where the lengths matter; calls in any order get
    the gradient of their own arguments."""
    rng = np.random.default_rng(1)
    g = grad(bias, (0, 1))
    for sa, sb in order + order[:2]:
        a, b = rng.uniform(0.2, 1.0, sa), rng.uniform(0.2, 1.0, sb)
        ga, gb = g(a, b)
        assert ga.shape == sa and gb.shape == sb
        check_grads(bias, a, b, wrt=(0, 1))


def test_the_source_for_one_pattern_drops_unbroadcast_and_another_keeps_it():
    a, b = np.ones((4, 3)), np.ones(3)
    same = adjoint_source(bias, (0, 1), args=(a, np.ones((4, 3))))
    assert "unbroadcast" not in same
    assert "rt.unbroadcast(" in adjoint_source(bias, (0, 1), args=(a, b))
    assert "rt.unbroadcast(" in adjoint_source(bias, (0, 1))  # no arguments: every pattern


def shifted_sum(a, k):
    u = a + k
    return np.sum(u * 2.0)


def test_forward_mode_in_every_pattern_of_lengths():
    """jvp uses the same shape facts: with `k` an integer array (no tangent), `a`'s tangent is the
    sum's as such where `a` has the shape of `a + k`, and broadcast first where `a` is a row."""
    from adjoint_compiler import jvp

    rng = np.random.default_rng(2)
    k = np.arange(12).reshape(3, 4)
    for shape in [(3, 4), (1, 4), (3, 1), (3, 4), (1, 4)]:
        a, da = rng.uniform(0.2, 1.0, shape), rng.standard_normal(shape)
        value, tangent = jvp(shifted_sum, (a, k), (da, None))
        np.testing.assert_allclose(value, shifted_sum(a, k), rtol=1e-12)
        np.testing.assert_allclose(tangent, 2.0 * np.sum(np.broadcast_to(da, (3, 4))), rtol=1e-12)


def einsums(A, B, v, w):
    C = np.einsum("ij,jk->ik", A, B)
    u = np.einsum("ij,j", A, v) * w  # (the implicit output: `i`)
    t = np.einsum("ij->ji", C)
    return np.einsum("i,i->", u, u) + np.sum(np.einsum("ki,kj->ij", t, t) * B[:3, :]) + np.sum(t.T * C)


def test_einsum_results_have_the_axes_their_subscripts_name():
    A, B, v, w = np.zeros((3, 4)), np.zeros((4, 3)), np.zeros(4), np.zeros(3)
    facts = notes(einsums, (A, B, v, w), ("f2", "f2", "f1", "f1"))
    assert facts["C = rt.einsum('ij,jk->ik', A, B)"] == "C: shape (d2, d2)"
    assert facts["einsum_c = rt.einsum('ij,j', A, v)"] == "einsum_c: shape (d2,)"
    assert facts["einsum_c_2 = rt.einsum('i,i->', u, u)"] == ""  # (a number: no axes)
    assert facts["t = rt.einsum('ij->ji', C)"] == "t: shape (d2, d2)"
    assert adjoint_source(einsums, args=(A, B, v, w)).count("rt.unbroadcast") == 0
    rng = np.random.default_rng(3)
    check_grads(einsums, rng.standard_normal((3, 4)), rng.standard_normal((4, 3)), rng.standard_normal(4),
                rng.standard_normal(3))


def repeated_letter(A, v):
    return np.sum(np.einsum("ii,i->i", A, v))  # (a diagonal: no shape claimed)


def test_einsum_with_a_repeated_letter_claims_no_shape():
    facts = notes(repeated_letter, (np.zeros((3, 3)), np.zeros(3)), ("f2", "f1"))
    assert all("shape" not in f for k, f in facts.items() if "einsum" in k)


def norms(A, v):
    return np.linalg.norm(A) ** 2 + np.linalg.norm(v, 1) + np.sum(np.linalg.norm(A, axis=1))


def test_a_norm_over_every_axis_is_a_number():
    printed = compile_gradient(norms, (0,), ("f2", "f1"), "grad", stage="shapes")
    assert "norm_A: ndim 0" in printed and "norm_v: ndim 0" in printed
    assert not any("ndim 0" in line for line in printed.splitlines() if "axis=1" in line)
    check_grads(norms, np.array([[0.3, -1.2], [0.5, 2.0]]), np.array([0.4, -0.7, 1.1]))


def whole_reductions(a, v):
    return np.average(a, weights=a * a + 1.0) + np.median(v) * np.ptp(a) + np.nanmean(a) + np.vdot(v, v) \
        + np.sum(np.average(a, axis=0))


def test_whole_array_reductions_are_numbers():
    printed = compile_gradient(whole_reductions, (0,), ("f2", "f1"), "grad", stage="shapes")
    for name in ("average_a", "median_v", "ptp_a", "nanmean_a", "vdot_v"):
        assert f"{name}: ndim 0" in printed, name
    assert " average_a_2: ndim" not in printed  # (over axis 0: not a number; its rank is not claimed)
    check_grads(whole_reductions, np.array([[0.3, -1.2, 0.7], [0.5, 2.0, -0.1]]), np.array([0.4, -0.7, 1.1]))

"""End-to-end tests of loops: for over range/arrays/lists/tuples, enumerate, zip, reversed, while,
break/continue/return inside loops, nested loops, loop-carried structures, and the tape size.

Every gradient is checked against central finite differences (`check` from test_core, which wraps
`check_grads` and also checks the value contract) or against a gradient derived by hand.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from adjoint_compiler import adjoint_source, grad, value_and_grad, vjp
from adjoint_compiler.testing import check_grads
from test_core import check, fd_grad

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(4321)


def rand(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------------------------------------
# for over range(...)
# ---------------------------------------------------------------------------------------------

def range_const(x, w):
    for i in range(4):
        x = np.sin(x * w) + x
    return np.sum(x ** 2)


def range_start_stop(x):
    s = 0.0
    for i in range(2, 6):
        s = s + x ** i
    return s


def range_step(x):
    s = 1.0
    for i in range(1, 10, 3):
        s = s * (x + i)
    return s


def range_runtime(x, n):
    for i in range(n):
        x = x * 0.9 + np.cos(x) * 0.1
    return np.sum(x)


def range_runtime_start_stop_step(x, lo, hi, step):
    s = x * 0.0
    for i in range(lo, hi, step):
        s = s + x[i] * (i + 1.0)
    return np.sum(s ** 2)


def range_negative_step(x):
    acc = 0.0
    for i in range(len(x) - 1, -1, -1):
        acc = acc * 0.5 + x[i] ** 2
    return acc


def range_negative_step_runtime(x, n):
    acc = 1.0
    for i in range(n, 0, -2):
        acc = acc * x[i - 1] + 1.0
    return acc


def range_index_used(x):
    # the loop index enters the arithmetic as a constant
    y = x * 0.0
    for k in range(3):
        y = y + np.sin(x * k) / (k + 1)
    return np.sum(y)


def test_range_constant():
    check(range_const, rand(5), rand(5), wrt=(0, 1))


def test_range_start_stop_analytic():
    x = 1.3
    g = check(range_start_stop, x)
    expected = sum(i * x ** (i - 1) for i in range(2, 6))
    assert np.isclose(g, expected, rtol=1e-12)


def test_range_step():
    check(range_step, 0.7)
    # s = (x+1)(x+4)(x+7); derivative by the product rule
    x = 0.7
    expected = (x + 4) * (x + 7) + (x + 1) * (x + 7) + (x + 1) * (x + 4)
    assert np.isclose(grad(range_step)(x), expected, rtol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_range_runtime_trip_count(n):
    check(range_runtime, rand(4), n)


@pytest.mark.parametrize("lo, hi, step", [(0, 6, 1), (1, 6, 2), (5, 0, -1), (5, -1, -2), (3, 3, 1)])
def test_range_runtime_start_stop_step(lo, hi, step):
    check(range_runtime_start_stop_step, rand(6), lo, hi, step)


def test_range_negative_step():
    x = rand(5)
    g = check(range_negative_step, x)
    # acc = sum_i x[i]^2 * 0.5^i  (x[0] is added last, x[4] first)
    expected = 2 * x * 0.5 ** np.arange(5)
    np.testing.assert_allclose(g, expected, rtol=1e-12)


@pytest.mark.parametrize("n", [6, 5, 1, 0])
def test_range_negative_step_runtime(n):
    check(range_negative_step_runtime, rand(6), n)


def test_range_index_used():
    check(range_index_used, rand(4))


# ---------------------------------------------------------------------------------------------
# for over arrays, lists, tuples; enumerate, zip, reversed
# ---------------------------------------------------------------------------------------------

def over_vector(x):
    s = 0.0
    for v in x:
        s = s * 0.7 + np.sin(v)
    return s


def over_rows(A, w):
    s = 0.0
    for row in A:
        s = s + np.tanh(row @ w) ** 2
    return s


def over_rows_carry_array(A):
    h = A[0] * 0.0
    for row in A:
        h = np.tanh(h + row)
    return np.sum(h ** 2)


def over_list(xs, w):
    s = 0.0
    for v in xs:
        s = s + np.sum(v * w)
    return s


def over_tuple(t):
    p = 1.0
    for v in t:
        p = p * v
    return p


def over_literal_list(x):
    s = 0.0
    for c in [1.0, 2.0, 3.0]:
        s = s + np.sin(c * x)
    return s


def over_literal_tuple_of_values(x, y):
    s = 0.0
    for v in (x, y, x * y):
        s = s + v ** 2
    return s


def with_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + (i + 1.0) * v ** 2
    return s


def with_enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, start=2):
        s = s + i * np.sin(v)
    return s


def with_enumerate_start_positional(x):
    s = 0.0
    for i, v in enumerate(x, 1):
        s = s + v ** i
    return s


def with_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s = s + a * np.exp(b)
    return s


def with_zip_three(xs, y, z):
    s = 0.0
    for a, b, c in zip(xs, y, z):
        s = s + np.sum(a * b) * c
    return s


def with_enumerate_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s = s + i * a * b
    return s


def with_reversed_range(x):
    acc = 0.0
    for i in reversed(range(len(x))):
        acc = acc * 0.5 + x[i]
    return acc ** 2


def with_reversed_list(xs):
    acc = 0.0
    for v in reversed(xs):
        acc = np.tanh(acc + v)
    return acc


def with_reversed_array(x):
    acc = 0.0
    for v in reversed(x):
        acc = acc * 0.3 + v ** 3
    return acc


def test_for_over_vector():
    x = rand(6)
    g = check(over_vector, x)
    expected = np.cos(x) * 0.7 ** np.arange(5, -1, -1)
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_for_over_2d_rows():
    check(over_rows, rand(4, 3), rand(3), wrt=(0, 1))


def test_for_over_2d_rows_carrying_an_array():
    check(over_rows_carry_array, rand(5, 3))


def test_for_over_list_argument():
    xs = [rand(3), rand(3), rand(3)]
    check(over_list, xs, rand(3), wrt=(0, 1))


def test_for_over_tuple_argument():
    t = (1.5, -0.5, 2.0)
    g = check(over_tuple, t)
    assert isinstance(g, tuple)
    np.testing.assert_allclose(g, (-1.0, 3.0, -0.75), rtol=1e-12)


def test_for_over_literal_list():
    x = 0.4
    g = check(over_literal_list, x)
    assert np.isclose(g, sum(c * np.cos(c * x) for c in (1.0, 2.0, 3.0)), rtol=1e-12)


def test_for_over_literal_tuple_of_values():
    check(over_literal_tuple_of_values, 0.8, -1.2, wrt=(0, 1))


def test_enumerate():
    x = rand(4)
    g = check(with_enumerate, x)
    np.testing.assert_allclose(g, 2 * (np.arange(4) + 1.0) * x, rtol=1e-12)


def test_enumerate_start_keyword():
    x = rand(4)
    g = check(with_enumerate_start, x)
    np.testing.assert_allclose(g, (np.arange(4) + 2.0) * np.cos(x), rtol=1e-12)


def test_enumerate_start_positional():
    check(with_enumerate_start_positional, np.abs(rand(4)) + 0.5)


def test_zip():
    x, y = rand(4), rand(4)
    gx, gy = check(with_zip, x, y, wrt=(0, 1))
    np.testing.assert_allclose(gx, np.exp(y), rtol=1e-12)
    np.testing.assert_allclose(gy, x * np.exp(y), rtol=1e-12)


def test_zip_three_with_list():
    xs = [rand(2), rand(2), rand(2)]
    check(with_zip_three, xs, rand(3, 2), rand(3), wrt=(0, 1, 2))


def test_zip_unequal_lengths_stops_at_shortest():
    x, y = rand(5), rand(3)
    gx, gy = check(with_zip, x, y, wrt=(0, 1))
    np.testing.assert_array_equal(gx[3:], 0.0)


def test_enumerate_zip():
    check(with_enumerate_zip, rand(4), rand(4), wrt=(0, 1))


def test_reversed_range():
    x = rand(5)
    g = check(with_reversed_range, x)
    acc = with_reversed_range(x) ** 0.5 * np.sign(sum(x[i] * 0.5 ** i for i in range(5)))
    np.testing.assert_allclose(g, 2 * acc * 0.5 ** np.arange(5), rtol=1e-10)


def test_reversed_list():
    check(with_reversed_list, [0.3, -0.2, 0.9, 0.1])


def test_reversed_array():
    check(with_reversed_array, rand(4))


# ---------------------------------------------------------------------------------------------
# while loops
# ---------------------------------------------------------------------------------------------

def halve_until_small(x):
    while x >= 1.0:
        x = x / 2.0
    return x * x


def while_counter(x, w):
    i = 0
    while i < 4:
        x = np.tanh(x * w + 0.1)
        i = i + 1
    return np.sum(x)


def while_data_condition_array(x):
    y = x
    while np.sum(y ** 2) < 10.0:
        y = y * 1.5 + 0.1
    return np.sum(np.sin(y))


def while_true_break(x):
    n = 0
    while True:
        x = x * 1.1 + 0.2
        n += 1
        if x > 3.0:
            break
    return x * n


@pytest.mark.parametrize("x, halvings", [(0.5, 0), (1.5, 1), (3.0, 2), (100.0, 7), (0.9999, 0)])
def test_while_trip_count_depends_on_input(x, halvings):
    g = check(halve_until_small, x)
    # x_final = x / 2^k with k fixed near x, so d(x_final^2)/dx = 2 x / 4^k
    assert np.isclose(g, 2 * x / 4.0 ** halvings, rtol=1e-12)


def test_while_counter():
    check(while_counter, rand(3), 0.7, wrt=(0, 1))


def test_while_data_condition_on_array():
    check(while_data_condition_array, rand(3) * 0.3)


@pytest.mark.parametrize("x", [-1.0, 0.5, 2.95, 5.0])
def test_while_true_break(x):
    check(while_true_break, x)


# ---------------------------------------------------------------------------------------------
# break / continue / return inside loops
# ---------------------------------------------------------------------------------------------

def loop_break(x, limit):
    s = 0.0
    for v in x:
        if s > limit:
            break
        s = s + v ** 2
    return s * 2.0


def loop_continue(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + np.sin(v) * v
    return s


def loop_return(x, w):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * w
        if s > 1.0:
            return s ** 2
    return s * 3.0


def while_return(x):
    k = 0
    while k < 10:
        x = x * 1.5
        if x > 2.0:
            return np.sin(x)
        k = k + 1
    return x * 0.5


def loop_break_and_continue(x):
    s = 0.0
    for i, v in enumerate(x):
        if i % 2 == 1:
            continue
        if v > 2.0:
            break
        s = s + v * np.exp(-v)
    return s


def nested_break(A):
    s = 0.0
    for row in A:
        for v in row:
            if v < 0:
                break
            s = s + v ** 2
    return s


@pytest.mark.parametrize("limit", [100.0, 0.5, -1.0])
def test_break(limit):
    x = np.array([0.5, 0.8, -0.6, 1.2, 0.3])
    g = check(loop_break, x, limit)
    s, exp = 0.0, np.zeros(5)
    for i, v in enumerate(x):
        if s > limit:
            break
        s += v ** 2
        exp[i] = 4 * v
    np.testing.assert_allclose(g, exp, rtol=1e-12)


@pytest.mark.parametrize("x", [np.array([0.5, -0.3, 1.2, -2.0]), np.array([0.3, 0.4, 0.5, 0.6]),
                               -np.ones(3)])
def test_continue(x):
    g = check(loop_continue, x)
    np.testing.assert_allclose(g, np.where(x < 0, 0.0, np.cos(x) * x + np.sin(x)), rtol=1e-12)


@pytest.mark.parametrize("scale", [0.1, 2.0])
def test_return_inside_for(scale):
    # scale 0.1: no early return; 2.0: return on an early iteration
    check(loop_return, np.array([0.3, 0.4, 0.2, 0.5]) * scale, 1.3, wrt=(0, 1))


@pytest.mark.parametrize("x", [0.001, 0.1, 1.0, 3.0])
def test_return_inside_while(x):
    check(while_return, x)


def test_break_and_continue_together():
    check(loop_break_and_continue, np.array([0.5, 9.0, 1.0, 9.0, 3.0, 0.2]))
    check(loop_break_and_continue, np.array([0.5, 9.0, 1.0, 9.0, 1.5, 0.2]))


def test_inner_break_only_leaves_inner_loop():
    A = np.array([[0.5, -1.0, 2.0], [1.5, 0.7, -0.1], [-0.2, 3.0, 3.0]])
    g = check(nested_break, A)
    expected = np.array([[1.0, 0, 0], [3.0, 1.4, 0], [0, 0, 0]])
    np.testing.assert_allclose(g, expected, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# nested loops, loop-carried structures, branches in the body
# ---------------------------------------------------------------------------------------------

def triangular(x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i):
            s = s + x[i] * x[j]
    return s


def triangular_carry(x, w):
    y = x
    for i in range(3):
        for j in range(i + 1):
            y = np.sin(y * w) + y * 0.5
    return np.sum(y)


def tuple_swap(a, b, n):
    for i in range(n):
        a, b = b, a * b
    return a + b


def array_tuple_carry(x, y):
    for i in range(3):
        x, y = np.tanh(y), x * 0.5 + y
    return np.sum(x * y)


def carried_tuple_value(x):
    t = (x, x * 2.0)
    for i in range(3):
        t = (t[1] * 0.5, t[0] + t[1])
    return t[0] * t[1]


def carried_list_value(x):
    acc = [x, x * 0.5]
    for i in range(3):
        acc = [acc[0] * acc[1], acc[0] - acc[1]]
    return acc[0] + acc[1] ** 2


def branch_in_body(x):
    s = 0.0
    for v in x:
        if v > 0:
            s = s + v ** 2
        else:
            s = s - np.sin(v)
    return s


def branch_on_carry(x, w):
    h = x
    for i in range(6):
        if np.sum(h) > 0:
            h = h * w - 0.3
        else:
            h = np.exp(h) * w
    return np.sum(h ** 2)


def test_nested_triangular_analytic():
    x = rand(5)
    g = check(triangular, x)
    # s = sum_{j<i} x_i x_j, ds/dx_k = sum_{j != k} x_j
    np.testing.assert_allclose(g, np.sum(x) - x, rtol=1e-12)


def test_nested_loop_carrying_array():
    check(triangular_carry, rand(3), 0.8, wrt=(0, 1))


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_loop_carried_tuple_swap(n):
    a, b = 1.1, 0.9
    ga, gb = check(tuple_swap, a, b, n, wrt=(0, 1))
    # each pair is a^p b^q; compare with derivatives of the exponents
    pa, pb = (1, 0), (0, 1)
    for _ in range(n):
        pa, pb = pb, (pa[0] + pb[0], pa[1] + pb[1])

    def d(p, wrt_a):
        if wrt_a:
            return p[0] * a ** (p[0] - 1) * b ** p[1] if p[0] else 0.0
        return p[1] * a ** p[0] * b ** (p[1] - 1) if p[1] else 0.0
    assert np.isclose(ga, d(pa, True) + d(pb, True), rtol=1e-12)
    assert np.isclose(gb, d(pa, False) + d(pb, False), rtol=1e-12)


def test_loop_carried_array_tuple():
    check(array_tuple_carry, rand(3), rand(3), wrt=(0, 1))


def test_loop_carried_tuple_value():
    check(carried_tuple_value, 0.7)


def test_loop_carried_list_value():
    check(carried_list_value, 0.7)


def test_branch_in_loop_body():
    x = np.array([0.5, -0.4, 1.3, -2.0])
    g = check(branch_in_body, x)
    np.testing.assert_allclose(g, np.where(x > 0, 2 * x, -np.cos(x)), rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_branch_on_loop_carried_value(seed):
    r = np.random.default_rng(seed)
    check(branch_on_carry, r.standard_normal(3) * 0.5, 0.9, wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# zero-iteration loops
# ---------------------------------------------------------------------------------------------

def zero_trip_for(x, w, n):
    for i in range(n):
        x = x * w
    return np.sum(x ** 2)


def zero_trip_list(x, xs):
    for v in xs:
        x = x + v
    return x * 3.0


def zero_trip_while(x, w):
    while np.sum(x) > 100.0:
        x = x * w
    return np.sum(np.sin(x))


def test_zero_iteration_for():
    x, w = rand(3), rand(3)
    gx, gw = check(zero_trip_for, x, w, 0, wrt=(0, 1))
    np.testing.assert_allclose(gx, 2 * x, rtol=1e-12)
    assert isinstance(gw, np.ndarray) and gw.shape == (3,)
    np.testing.assert_array_equal(gw, 0.0)


def test_zero_iteration_for_scalar_weight():
    gx, gw = check(zero_trip_for, rand(3), 0.5, 0, wrt=(0, 1))
    assert gw == 0.0 and isinstance(gw, float)


def test_zero_iteration_over_empty_list():
    g = check(zero_trip_list, 0.5, [], wrt=0)
    assert g == 3.0


def test_zero_iteration_while():
    x, w = rand(3), rand(3)
    gx, gw = check(zero_trip_while, x, w, wrt=(0, 1))
    np.testing.assert_allclose(gx, np.cos(x), rtol=1e-12)
    np.testing.assert_array_equal(gw, 0.0)


# ---------------------------------------------------------------------------------------------
# a tanh RNN over time steps
# ---------------------------------------------------------------------------------------------

T, B, D, H = 8, 3, 4, 5


def rnn_final(x, Wx, Wh, b, h0):
    h = h0
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ Wx + h @ Wh + b)
    return np.sum(h ** 2)


def rnn_all(x, Wx, Wh, b, h0):
    h = h0
    hs = []
    for t in range(len(x)):
        h = np.tanh(x[t] @ Wx + h @ Wh + b)
        hs.append(h)
    H_all = np.stack(hs)
    return np.sum(H_all ** 2)


def rnn_rows(x, Wx, Wh, b, h0):
    h = h0
    loss = 0.0
    for xt in x:
        h = np.tanh(xt @ Wx + h @ Wh + b)
        loss = loss + np.sum(h * h)
    return loss


def rnn_args():
    r = np.random.default_rng(7)
    return (r.standard_normal((T, B, D)), r.standard_normal((D, H)) * 0.5,
            r.standard_normal((H, H)) * 0.5, r.standard_normal(H) * 0.1, r.standard_normal((B, H)))


def rnn_reference_grads(x, Wx, Wh, b, h0, all_steps):
    """Backpropagation through time written out by hand."""
    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(x[t] @ Wx + hs[-1] @ Wh + b))
    gWx, gWh, gb = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = np.zeros_like(h0)
    for t in reversed(range(T)):
        if all_steps or t == T - 1:
            dh = dh + 2 * hs[t + 1]
        da = dh * (1 - hs[t + 1] ** 2)
        gWx += x[t].T @ da
        gWh += hs[t].T @ da
        gb += da.sum(axis=0)
        dh = da @ Wh.T
    return gWx, gWh, gb, dh


@pytest.mark.parametrize("f, all_steps", [(rnn_final, False), (rnn_all, True), (rnn_rows, True)],
                         ids=["final", "stack", "rows"])
def test_rnn(f, all_steps):
    args = rnn_args()
    g = check(f, *args, wrt=(1, 2, 3, 4))
    ref = rnn_reference_grads(*args, all_steps)
    for gi, ri in zip(g, ref):
        np.testing.assert_allclose(gi, ri, rtol=1e-10, atol=1e-12)
    gx = grad(f, 0)(*args)
    np.testing.assert_allclose(gx[0], fd_grad(lambda x0: f(np.concatenate([x0[None], args[0][1:]]),
                                                           *args[1:]), args[0][0]),
                               rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# a long loop: the tape stays small
# ---------------------------------------------------------------------------------------------

N_LONG = 100_000


def long_loop(x, a):
    for i in range(N_LONG):
        x = x * a + 0.1 * np.sin(x) + 1.0
    return x


def long_while(x, a):
    i = 0
    while i < N_LONG:
        x = x * a + 0.1 * np.sin(x) + 1.0
        i = i + 1
    return x


def fixed_point_derivatives(a):
    """x* = a x* + 0.1 sin x* + 1: its derivative in a; the loop forgets x0 (|a + 0.1 cos| < 1)."""
    x = 1.0
    for _ in range(500):
        x = (0.1 * np.sin(x) + 1.0) / (1.0 - a)
    return x / (1.0 - a - 0.1 * np.cos(x))


@pytest.mark.parametrize("f", [long_loop, long_while])
def test_long_loop_gradient_and_memory(f):
    a = 0.5
    g = grad(f, (0, 1))
    g(0.3, a)  # compile outside the measurement
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        gx, ga = g(0.3, a)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"{f.__name__}: peak traced memory during the gradient call {peak / 1e6:.2f} MB")
    assert abs(gx) < 1e-12
    assert np.isclose(ga, fixed_point_derivatives(a), rtol=1e-9)
    eps = 1e-6
    fd = (f(0.3, a + eps) - f(0.3, a - eps)) / (2 * eps)
    assert np.isclose(ga, fd, rtol=1e-6)
    assert peak < 8e6, f"peak memory {peak / 1e6:.2f} MB for a {N_LONG}-iteration scalar loop"


def short_contracting(x, a, n):
    for i in range(n):
        x = x * a + 0.1 * np.sin(x)
    return x


def test_long_loop_gradient_wrt_initial_value():
    # a = 0.999: the gradient in x0 survives 2000 steps; compare with the analytic product
    x0, a, n = 0.3, 0.999, 2000
    gx = grad(short_contracting, 0)(x0, a, n)
    x, prod = x0, 1.0
    for _ in range(n):
        prod *= a + 0.1 * np.cos(x)
        x = x * a + 0.1 * np.sin(x)
    assert np.isclose(gx, prod, rtol=1e-9)
    check_grads(short_contracting, x0, a, n, wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# the generated source of a loop
# ---------------------------------------------------------------------------------------------

def source_loop(x, a):
    for i in range(5):
        x = x * a + 0.1 * np.sin(x)
    return x


def source_while(x):
    while x > 2.0:
        x = np.sqrt(x)
    return x


def _line_of(func, text):
    import inspect
    lines, first = inspect.getsourcelines(func)
    return [first + i for i, ln in enumerate(lines) if text in ln][0]


def test_adjoint_source_of_loop_pushes_and_pops_named_variables():
    src = adjoint_source(source_loop, (0, 1))
    compile(src, "<adjoint>", "exec")
    pushes = re.findall(r"\b(x\w*)_stack\.append\((\1)\)", src)
    pops = re.findall(r"\b(x\w*) = (\1)_stack\.pop\(\)", src)
    assert pushes, src
    assert pops, src
    assert {p[0] for p in pushes} & {p[0] for p in pops}, src
    loop_line = _line_of(source_loop, "for i in range(5)")
    body_line = _line_of(source_loop, "x = x * a")
    assert re.search(rf"# L{loop_line}:\s*for i in range\(5\):", src), src
    assert re.search(rf"# L{body_line}:\s*x = x \* a", src), src
    # the backward sweep runs the loop in reverse
    assert re.search(r"for \w+ in reversed\(", src) or "while" in src, src


def test_adjoint_source_of_while_loop():
    src = adjoint_source(source_while)
    compile(src, "<adjoint>", "exec")
    loop_line = _line_of(source_while, "while x > 2.0")
    assert re.search(rf"# L{loop_line}:\s*while x > 2\.0:", src), src
    assert re.search(r"\w+_stack\.append\(", src) and re.search(r"_stack\.pop\(\)", src), src
    assert np.isclose(grad(source_while)(16.0), 0.25 * 16.0 ** (-0.75), rtol=1e-12)


def _subprocess_source(hashseed):
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "import test_loops as m\n"
        "from adjoint_compiler import adjoint_source\n"
        "for f, wrt in [(m.source_loop, (0, 1)), (m.source_while, 0), (m.rnn_all, (1, 2, 3, 4)),\n"
        "               (m.nested_break, 0), (m.tuple_swap, (0, 1))]:\n"
        "    print(adjoint_source(f, wrt))\n"
    )
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=str(HERE.parent.parent), timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_adjoint_source_of_loops_is_identical_across_processes():
    first = _subprocess_source("1")
    second = _subprocess_source("98765")
    assert first == second
    assert "_stack" in first


# ---------------------------------------------------------------------------------------------
# other entry points through loops
# ---------------------------------------------------------------------------------------------

def loop_vector_out(x):
    ys = []
    for i in range(3):
        x = np.sin(x) + 1.0
        ys.append(x)
    return np.stack(ys)


def test_vjp_through_loop():
    x = rand(4)
    out, pullback = vjp(loop_vector_out, x)
    np.testing.assert_allclose(out, loop_vector_out(x), rtol=1e-12)
    w = rand(3, 4)
    (gx,) = pullback(w)
    np.testing.assert_allclose(gx, fd_grad(lambda z: np.sum(w * loop_vector_out(z)), x),
                               rtol=1e-6, atol=1e-8)


def test_value_and_grad_through_while():
    v, g = value_and_grad(halve_until_small)(5.0)
    assert v == halve_until_small(5.0)
    assert np.isclose(g, 2 * 5.0 / 4.0 ** 3, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# more loop shapes: augmented assignment, loop variables after the loop, nested exits
# ---------------------------------------------------------------------------------------------

def augmented_in_loop(x, w):
    s = 0.0
    p = 1.0
    y = x * 1.0
    for v in x:
        s += v * w
        p *= np.cos(v)
        y += v
    y -= s
    return s + p + np.sum(y ** 2)


def loop_variable_after_loop(x):
    for v in x:
        pass
    return v * 3.0 + x[0]


def defined_in_loop_used_after(x, n):
    for i in range(n):
        last = x * (i + 1.0)
    return np.sum(np.sin(last))


def conditionally_defined_in_loop(x):
    best = x[0]
    for v in x:
        if v > best:
            best = v
    return best ** 2


def return_from_inner_loop(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + A[i, j] ** 2
            if s > 2.0:
                return s * A[i, j]
    return -s


def while_with_continue(x):
    i = 0
    s = 0.0
    while i < len(x):
        i = i + 1
        if x[i - 1] < 0:
            continue
        s = s + np.sqrt(x[i - 1])
    return s


def while_and_condition(x, w):
    k = 0
    while k < 20 and x < 5.0:
        x = x * w + 0.5
        k += 1
    return x * k


def nested_while(x):
    outer = 0
    while outer < 3:
        inner = 0
        while inner < outer + 1:
            x = np.sin(x) + x * 0.5
            inner += 1
        outer += 1
    return x


def enumerate_list_of_arrays(xs, w):
    acc = w * 0.0
    for i, x in enumerate(xs):
        acc = acc + x * w ** (i + 1)
    return np.sum(acc ** 2)


def test_augmented_assignment_in_loop():
    check(augmented_in_loop, rand(3), 0.7, wrt=(0, 1))


def test_loop_variable_after_loop():
    x = rand(4)
    g = check(loop_variable_after_loop, x)
    np.testing.assert_allclose(g, [1.0, 0.0, 0.0, 3.0], rtol=1e-12)


@pytest.mark.parametrize("n", [1, 3])
def test_defined_in_loop_used_after(n):
    x = rand(3)
    g = check(defined_in_loop_used_after, x, n)
    np.testing.assert_allclose(g, n * np.cos(n * x), rtol=1e-12)


def test_running_max_in_loop():
    x = np.array([0.3, 1.7, -2.0, 0.9])
    g = check(conditionally_defined_in_loop, x)
    np.testing.assert_allclose(g, [0.0, 3.4, 0.0, 0.0], rtol=1e-12)


@pytest.mark.parametrize("scale", [0.1, 1.0])
def test_return_from_inner_loop(scale):
    A = np.array([[0.5, -0.9, 0.3], [1.2, 0.4, -0.7]]) * scale
    check(return_from_inner_loop, A)


def test_while_with_continue():
    x = np.array([0.5, -1.0, 2.0, -0.3, 1.1])
    g = check(while_with_continue, x)
    np.testing.assert_allclose(g, np.where(x < 0, 0.0, 0.5 / np.sqrt(np.abs(x))), rtol=1e-12)


@pytest.mark.parametrize("x, w", [(0.5, 0.9), (0.5, 1.3), (6.0, 1.1)])
def test_while_with_and_condition(x, w):
    check(while_and_condition, x, w, wrt=(0, 1))


def test_nested_while():
    check(nested_while, 0.8)


def test_enumerate_list_of_arrays():
    xs = [rand(2), rand(2), rand(2)]
    gxs, gw = check(enumerate_list_of_arrays, xs, rand(2), wrt=(0, 1))
    assert type(gxs) is list


def test_vjp_pullback_of_loop_can_be_called_twice():
    x = rand(4)
    out, pullback = vjp(loop_vector_out, x)
    w = rand(3, 4)
    (g1,) = pullback(w)
    (g2,) = pullback(w)
    (g3,) = pullback(2.0 * w)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    np.testing.assert_allclose(g3, 2.0 * g1, rtol=1e-12)
    np.testing.assert_allclose(g1, fd_grad(lambda z: np.sum(w * loop_vector_out(z)), x),
                               rtol=1e-6, atol=1e-8)


def test_gradient_of_loop_is_reentrant():
    # the same compiled gradient called with different trip counts, interleaved
    g = grad(range_runtime)
    x = rand(3)
    a = g(x, 3)
    b = g(x, 7)
    c = g(x, 3)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_allclose(b, fd_grad(lambda z: range_runtime(z, 7), x), rtol=1e-6, atol=1e-8)


# -- one name assigned in consecutive loops (the tape once restored a loop-carried value that the
#    forward pass never computed: UnboundLocalError) ---------------------------------------------

def reused_in_two_loops(x):
    s = 0.0
    for i in range(3):
        c = i + 1.0
        s = s + np.sum(x * c)
    for i in range(3):
        c = i + 1.0
        s = s + np.sum(np.sin(x * c))
    return s


def reused_and_read_between(x):
    for i in range(3):
        c = i + 1.0
        t = x * c
    b = x * 0.0
    for i in range(3):
        c = i + 1.0
        b = b + np.cos(t) * c
    return np.sum(b)


@pytest.mark.parametrize("f", [reused_in_two_loops, reused_and_read_between])
def test_names_reused_in_consecutive_loops(f):
    check_grads(f, np.array([0.3, -0.5]))


def lu_in_place(A):
    A = A.copy()
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):  # (runs no trip for the last k: `i` is bound on some paths only)
            A[i, k] = A[i, k] / A[k, k]
            for j in range(k + 1, n):
                A[i, j] = A[i, j] - A[i, k] * A[k, j]
    for i in range(n):  # `i` again: bound by this loop before any read
        A[i, i] = A[i, i] * 2.0
    return np.sum(A ** 2)


def last_inner_index(x):
    s = 0.0
    for k in range(3):
        for i in range(k):
            s = s + x[i]
    return s * i  # (unbound while no inner trip has run, then bound: 1 after the last)


def preset_index(x, n):
    i = 0
    for i in range(n):
        x = x * 1.1
    return x[i] ** 2  # (0 after a loop that ran no trips)


def index_set_in_the_body(x, n):
    s = 0.0
    for j in range(n):
        k = j + 1
        s = s + x[j]
    return s + np.sum(x[k])  # (Python raises after no trips; `x[None]` gave a number)


def test_a_name_a_loop_binds_is_read_after_it_with_its_last_value():
    x = np.array([0.3, 0.5, 0.2, 0.7])
    check(last_inner_index, x)
    np.testing.assert_allclose(grad(last_inner_index)(x), [2.0, 1.0, 0.0, 0.0], rtol=1e-12)
    for n in (0, 1, 3):
        np.testing.assert_allclose(grad(preset_index)(x, n), fd_grad(lambda x: preset_index(x, n), x), atol=1e-6)
    np.testing.assert_allclose(grad(index_set_in_the_body)(x, 2), [1.0, 1.0, 1.0, 0.0], rtol=1e-12)


def last_inner_index_of(x, n):
    s = 0.0
    for k in range(n):
        for i in range(k):
            s = s + x[i]
    return s * i


@pytest.mark.parametrize("func", [last_inner_index_of, index_set_in_the_body])
def test_reading_it_after_a_loop_that_ran_no_trips_raises_as_python_does(func):
    x = np.array([0.3, 0.5, 0.2])
    with pytest.raises(UnboundLocalError):
        func(x, 0)
    with pytest.raises(UnboundLocalError, match="read after the loop ran no trips"):
        grad(func)(x, 0)
    np.testing.assert_allclose(grad(func)(x, 2), fd_grad(lambda x: func(x, 2), x), atol=1e-6)


def shifted_start(h0, v):
    h = h0
    for _ in range(3):
        for _ in range(2):
            h = h + v  # (the carried adjoint passes through each trip unchanged: no reverse loop)
    return h * h


def test_a_reversed_loop_with_nothing_to_do_is_left_out():
    from adjoint_compiler.testing import check_grads

    check_grads(shifted_start, 0.5, 0.3, wrt=(0, 1))
    assert "reversed(" not in adjoint_source(shifted_start, 0, (0.5, 0.3))


def shifted_in_a_while(h0, v):
    h = h0
    i = 0
    while i < 2:
        for _ in range(2):
            h = h + i * 0.1  # (nothing to do in reverse: no counter kept for a loop left out)
        i += 1
    return np.sum(h ** 3)


def test_a_while_loop_with_nothing_to_do_in_reverse_keeps_no_counter():
    from adjoint_compiler.testing import check_grads

    check_grads(shifted_in_a_while, 0.3, 0.2)
    check_grads(shifted_in_a_while, np.array([0.3, -0.5]), 0.2)
    assert "while_trips" not in adjoint_source(shifted_in_a_while, 0, (0.3, 0.2))

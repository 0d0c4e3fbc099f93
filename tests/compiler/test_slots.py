"""Slot-local adjoints (`slots`) and sinking into the branch that defines a gradient (`sink`):
on the generated source, and against finite differences for the spellings they apply to and
those they must leave alone."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import Buffer, adjoint_source
from adjoint_compiler.testing import check_grads

RNG = np.random.default_rng(77)


def backward_of(f, *args, wrt=0):
    return adjoint_source(f, wrt=wrt, args=args).split("# adjoint")[1]


def write_then_branch(x, w):
    b = np.zeros(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        b[i] = np.sin(x[i]) * w
        if b[i] > 0:
            s = s + b[i] ** 2
    return s


def test_the_slot_gradient_is_a_number_and_the_untaken_branch_runs_nothing():
    back = backward_of(write_then_branch, np.ones(4), 0.5, wrt=(0, 1))
    assert "b_2_bar" not in back and "rt.zeros_like(b" not in back  # no array adjoint for b
    loop = back.split("for i in reversed(")[1]
    branch, after = loop.split("return")[0].split("else:")
    assert "np.cos(x_i)" in branch and "w_bar +=" in branch and "x_bar[i] +=" in branch
    assert "np.cos" not in after and "w_bar" not in after


def test_slot_loops_match_finite_differences():
    x = RNG.standard_normal(7)
    check_grads(write_then_branch, x, 0.8, wrt=(0, 1))
    check_grads(write_then_branch, x, -0.3, wrt=(0, 1))


def read_then_write(x, w):
    b = x.copy()
    for i in range(x.shape[0]):
        b[i] = b[i] * w + 1.0
    return np.sum(b * b)


def read_after_the_loop(x, w):
    b = Buffer.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        b[i] = x[i] * w
        if b[i] < 0.5:
            b[i] = b[i] * 2.0
    return np.sum(b.copy() * x)


def counting_down(x, w):
    b = np.empty(x.shape[0])
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -2):
        b[i] = x[i] * w
        s = s + b[i] * x[i]
    return s


def test_reads_before_writes_and_reads_after_the_loop_flow_through_the_array():
    x = RNG.standard_normal(6)
    back = backward_of(read_then_write, x, 0.5, wrt=(0, 1))
    assert "b_2_i_bar" in back  # the slot, read before it is written: what is left flows on
    for f in (read_then_write, read_after_the_loop, counting_down):
        check_grads(f, x, 0.7, wrt=(0, 1))


def mixed_signs(x, w):
    b = x.copy()
    for i in range(-2, 2):  # b[-2] and b[2] may be one slot
        b[i] = b[i] * w + x[i]
    return np.sum(b ** 2)


def neighbour(x, w):
    b = x.copy()
    for i in range(1, x.shape[0]):
        b[i] = b[i - 1] * w + x[i]
    return np.sum(b ** 2)


def whole_read(x, w):
    b = np.zeros(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        b[i] = x[i] * w
        s = s + np.sum(b)
    return s


@pytest.mark.parametrize("f", [mixed_signs, neighbour, whole_read], ids=lambda f: f.__name__)
def test_arrays_read_elsewhere_than_their_slot_keep_an_array_adjoint(f):
    x = RNG.standard_normal(4)
    back = backward_of(f, x, 0.5, wrt=(0, 1))
    assert "b_2_i_bar" not in back and "b_2_bar" in back
    check_grads(f, x, 0.6, wrt=(0, 1))


def integers(x, w):
    b = np.zeros(x.shape[0], dtype=int)
    s = 0.0
    for i in range(x.shape[0]):
        b[i] = x[i] * w
        s = s + b[i] * x[i]
    return s


def test_an_integer_array_keeps_its_run_time_checks():
    """The value written is truncated: it gets no gradient (only `b[i] * x[i]`'s x does)."""
    x = np.array([0.5, 2.5, -1.5])
    back = backward_of(integers, x, 0.9, wrt=(0, 1))
    assert "b_2_i_bar" not in back
    from adjoint_compiler import grad
    gx, gw = grad(integers, wrt=(0, 1))(x, 0.9)
    np.testing.assert_allclose(gx, np.trunc(x * 0.9))
    assert gw == 0.0


def test_slot_loops_in_split_mode_and_with_the_value():
    from adjoint_compiler import grad, value_and_grad, vjp
    x = RNG.standard_normal(6)
    for f in (write_then_branch, read_then_write, read_after_the_loop):
        out, pullback = vjp(f, x, 0.7)
        gx, gw = grad(f, wrt=(0, 1))(x, 0.7)
        first, second = pullback(1.0), pullback(2.0)  # a pullback may run more than once
        np.testing.assert_allclose(first[0], gx)
        np.testing.assert_allclose(second[0], 2.0 * gx)
        assert first[1] == pytest.approx(gw)
        value, _ = value_and_grad(f, wrt=(0, 1))(x, 0.7)
        assert value == pytest.approx(f(x, 0.7)) and out == pytest.approx(value)

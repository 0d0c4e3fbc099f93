"""Tests of `normalize` on its printed output: an expression lowered into statements (a
comprehension, `and`/`or`, a chained comparison) binds its value under its target's name only
when the expression does not read that name, so the old value is read before it is replaced."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import value_and_grad
from adjoint_compiler.pipeline import compile_gradient


def normalized(f) -> list:
    return [line.strip() for line in compile_gradient(f, (0,), ("r1",), stage="normalize").splitlines()]


def squares_in_place(x):
    h = list(x)
    h = [v ** 2 for v in h]
    return sum(h)


def gated(x):
    s = x[1]
    s = (x[0] > 0) and s * 3
    return s


def in_unit_interval(x):
    y = x[0]
    y = 0.0 < y < 1.0
    return x[1] * y


def squares_of_fresh(x):
    h = [v ** 2 for v in x]
    return sum(h)


def test_a_lowering_that_reads_its_target_builds_into_another_name():
    lines = normalized(squares_in_place)
    assert "h = []" not in lines and "h = items" in lines  # (the loop reads the old `h`)
    assert "s = and_value" in normalized(gated)
    assert "y = cmp_value" in normalized(in_unit_interval)


def test_a_lowering_that_does_not_read_its_target_builds_into_it():
    assert "h = []" in normalized(squares_of_fresh)


@pytest.mark.parametrize("f, value, gradient", [
    (squares_in_place, 2.02, [0.6, -1.4, 2.4]),
    (gated, -2.1, [0.0, 3.0, 0.0]),
    (in_unit_interval, -0.7, [0.0, 1.0, 0.0]),
])
def test_the_old_value_is_read_before_it_is_replaced(f, value, gradient):
    x = np.array([0.3, -0.7, 1.2])
    v, g = value_and_grad(f)(x)
    assert np.isclose(v, f(x)) and np.isclose(v, value)
    np.testing.assert_allclose(g, gradient)  # (the analytic gradient)

"""`*x` in tuple and list displays and in unpacking assignments: the same values as Python, and
gradients against central finite differences; `*x` in a call stays refused, saying where."""
import numpy as np
import pytest

from adjoint_compiler import grad, value_and_grad, vjp
from adjoint_compiler.errors import UnsupportedSyntaxError
from adjoint_compiler.testing import check_grads

W = np.array([[0.3, -1.2, 0.8], [0.1, 0.2, 0.3], [1.1, -0.4, 0.6]])


def shape_display(w):
    z = np.zeros((2, *w.shape))
    z[0] = w
    z[1] = w ** 2
    return np.sum(np.sin(z))


def list_display(w):
    rows = [r for r in w]
    return np.sum(np.stack([*rows, rows[0] * 2.0, *rows[1:]]) ** 2)


def head_and_rest(w):
    first, *rest = w
    return np.sum(first * sum(rest))


def head_rest_tail(w):
    first, *middle, last = w
    return np.sum(first * np.tanh(sum(middle)) * last)


def rest_in_a_loop(w):
    total = 0.0
    for k in range(2):
        *front, back = w * (k + 1.0)
        total = total + np.sum(back * front[0])
    return total


def rest_of_a_tuple(w):
    pair = (w[0], w[1] ** 2, w[2])
    a, *bc = pair
    return np.sum(a * bc[0] + bc[1])


def rest_in_a_branch(w):
    if np.sum(w) > 0:
        a, *rest = w
    else:
        *rest, a = w
    return np.sum(a ** 2 * rest[0])


@pytest.mark.parametrize("f", [shape_display, list_display, head_and_rest, head_rest_tail, rest_in_a_loop,
                               rest_of_a_tuple, rest_in_a_branch])
def test_starred_gradients_match_finite_differences(f):
    check_grads(f, W)
    value, _ = value_and_grad(f)(W)
    assert value == pytest.approx(f(W))
    out, pullback = vjp(f, W)
    check = grad(f)(W)
    np.testing.assert_allclose(pullback(1.0)[0], check)


def test_too_few_values_raise_as_python_does():
    with pytest.raises(ValueError, match="not enough values to unpack"):
        head_rest_tail(W[:1])
    with pytest.raises(ValueError, match="not enough values to unpack"):
        grad(head_rest_tail)(W[:1])


def test_an_empty_starred_name_is_an_empty_list():
    def two_rows(w):
        a, *rest, b = w
        assert rest == []
        return np.sum(a * b)
    check_grads(two_rows, W[:2])


def spread_into_a_call(w):
    return np.sum(np.maximum(*w[:2]))


def test_star_in_a_call_is_refused_at_its_line():
    with pytest.raises(UnsupportedSyntaxError, match=r"`\*x` in a call is not supported.*test_starred.py, line"):
        grad(spread_into_a_call)(W)

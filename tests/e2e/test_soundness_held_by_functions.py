"""An array or list held by a function value: a lambda's or nested def's default, a
`functools.partial`'s bound argument.

Python evaluates a default once, at the `def`, and a partial keeps the very object it was given,
so a write into that array afterwards is seen by the call. Before the fix the call read the
version bound when the function was made: `h = lambda t, c=a: np.sum(t * c)`, then `a[0] =
x[0]`, gave half the gradient; `partial(np.dot, w)`, then `w += x`, gave zero; a list appended
to after it was bound gave a wrong value. A write in the block that made the function is
followed; a write inside a loop or `if` there, and an in-place update (`+=`, `.append`), are
refused with a MutationError at the user's line, as they are for a second name bound to the
array. Gradients computed are checked against central finite differences.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest

from adjoint_compiler import MutationError, grad
from adjoint_compiler.testing import check_grads

X = np.array([0.3, -0.7, 1.2])


def lambda_default_written(x):
    a = np.zeros(3)
    h = lambda t, c=a: np.sum(t * c)  # noqa: E731
    a[0] = x[0]
    return h(x)


def def_default_written_whole(x):
    a = np.ones(3)

    def g(t, c=a):
        return np.sum(t * c)
    a[:] = np.sin(x)
    return g(x) + g(x, np.ones(3))


def keyword_only_default_written(x):
    a = np.zeros(3)

    def g(t, *, c=a):
        return np.sum(t * c)
    a[2] = x[2] * 2
    return g(x) + g(x, c=x)


def partial_argument_written(x):
    a = np.ones(3)
    p = functools.partial(np.dot, a)
    a[1:] = x[:-1]
    return p(x)


def partial_keyword_of_a_lambda_written(x):
    a = np.ones(3)
    p = functools.partial(lambda t, w: np.sum(t * w), w=a)
    a[0] = x[1]
    return p(x)


def default_then_rebound(x):
    a = np.zeros(3)
    h = lambda t, c=a: np.sum(t * c)  # noqa: E731
    a = a + x  # a new array: the default keeps the old one
    return h(x) + np.sum(a)


@pytest.mark.parametrize("f", [lambda_default_written, def_default_written_whole, keyword_only_default_written,
                               partial_argument_written, partial_keyword_of_a_lambda_written, default_then_rebound])
def test_a_write_after_the_function_is_made_is_seen_by_the_call(f):
    check_grads(f, X)


def test_the_default_written_gives_the_whole_gradient():
    np.testing.assert_allclose(grad(lambda_default_written)(X), [2 * X[0], 0.0, 0.0])


def written_in_a_loop(x):
    a = np.zeros(3)
    h = lambda t, c=a: np.sum(t * c)  # noqa: E731
    for i in range(3):
        a[i] = x[i]
    return h(x)  # <-- HERE


def partial_argument_updated(x):
    w = np.zeros(3)
    p = functools.partial(np.dot, w)
    w += x  # <-- HERE
    return p(x)


def list_default_appended(x):
    L = [x[0]]
    h = lambda t, c=L: sum(c) * t[1]  # noqa: E731
    L.append(x[2])  # <-- HERE
    return h(x)


@pytest.mark.parametrize("f, says", [(written_in_a_loop, "the default of c of the lambda is an array written"),
                                     (partial_argument_updated, "the argument 1 bound by partial(np.dot)"),
                                     (list_default_appended, "the default of c of the lambda names the same")])
def test_what_cannot_be_followed_is_refused_at_the_line(f, says):
    with pytest.raises(MutationError) as info:
        grad(f)(X)
    assert says in str(info.value)
    lines, first = inspect.getsourcelines(f)
    here = first + next(k for k, line in enumerate(lines) if "<-- HERE" in line)
    assert f"line {here}" in str(info.value)

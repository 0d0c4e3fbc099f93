"""Entry-point checks of issue 12: size-1 results, pullback cotangents, higher order, complex
arguments. Each gradient is checked against central finite differences; each refusal is an
AdjointCompilerError whose message says what is wrong and where.
"""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import SourceError, grad, value_and_grad, vjp
from adjoint_compiler.errors import AdjointCompilerError, ArgumentError, MissingRuleError
from adjoint_compiler.testing import check_grads

V = np.array([0.3, -1.2, 0.8])


def as_matrix(x):
    return np.array([[np.sum(x ** 2)]])


def as_vector(x):
    return (x[:1] * np.sin(x[1])) * 2.0


def via_keepdims(x):
    return np.sum(np.outer(x, x), keepdims=True)


def pair(x):
    return x * 2.0, np.sum(np.sin(x))


def square(x):
    return np.sum(x ** 2)


GRAD_SQUARE = grad(square)


def calls_a_gradient(x):
    return np.sum(GRAD_SQUARE(x))


def calls_grad_inside(x):
    return np.sum(grad(square)(x))


def mixes(x, z):
    return np.sum(x * z)


# -- a size-1 result is a scalar ---------------------------------------------------------------
def central(f, x, eps=1e-6):
    g = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[k] = eps
        g[k] = (f(x + e).item() - f(x - e).item()) / (2 * eps)
    return g


@pytest.mark.parametrize("f", [as_matrix, as_vector, via_keepdims])
def test_size_one_result_is_differentiated_as_a_scalar(f):
    np.testing.assert_allclose(grad(f)(V), central(f, V), rtol=1e-6, atol=1e-8)
    value, g = value_and_grad(f)(V)
    np.testing.assert_array_equal(value, f(V))
    np.testing.assert_allclose(g, central(f, V), rtol=1e-6, atol=1e-8)


def test_larger_result_is_still_refused():
    with pytest.raises(TypeError, match=r"returns a scalar.*shape \(3,\)"):
        grad(lambda_free_vector)(V)


def lambda_free_vector(x):
    return x * 2.0


# -- pullback cotangents -----------------------------------------------------------------------
def test_pullback_checks_the_cotangent_structure_shape_and_kind():
    _, pullback = vjp(pair, V)
    with pytest.raises(ArgumentError, match=r"pullback of pair: the cotangent must be a tuple of 2 cotangents"):
        pullback(np.ones(3))
    with pytest.raises(ArgumentError, match=r"tuple of 2 cotangents.*got a tuple of length 1"):
        pullback((np.ones(3),))
    with pytest.raises(ArgumentError, match=r"the cotangent\[0\] must have the shape of the output, \(3,\), "
                                            r"got shape \(2,\)"):
        pullback((np.ones(2), 1.0))
    with pytest.raises(ArgumentError, match=r"the cotangent\[1\] must hold real numbers.*complex"):
        pullback((np.ones(3), 1j))
    _, pullback = vjp(as_vector, V)
    with pytest.raises(ArgumentError, match=r"pullback of as_vector: the cotangent must have the shape of the "
                                            r"output, \(1,\), got shape \(3,\)"):
        pullback(np.ones(3))
    with pytest.raises(ArgumentError, match=r"must hold real numbers.*dtype <U1"):
        pullback(np.array(["a"]))


def test_pullback_accepts_right_cotangents():
    _, pullback = vjp(pair, V)
    g, = pullback((np.array([1.0, -2.0, 0.5]), 3))
    np.testing.assert_allclose(g, 2.0 * np.array([1.0, -2.0, 0.5]) + 3 * np.cos(V))
    g, = pullback([np.ones(3), np.float64(1.0)])  # a list for a tuple, a NumPy scalar for a float
    np.testing.assert_allclose(g, 2.0 + np.cos(V))


# -- higher order ------------------------------------------------------------------------------
def test_higher_order_is_refused_clearly():
    for make in (grad, value_and_grad):
        with pytest.raises(SourceError, match="higher-order derivatives .* not supported yet"):
            make(grad(square))(V)
    with pytest.raises(SourceError, match="higher-order derivatives .* not supported yet"):
        vjp(vjp(square, V)[1], 1.0)
    with pytest.raises(MissingRuleError, match="higher-order derivatives .* not supported yet"):
        grad(calls_a_gradient)(V)
    with pytest.raises(AdjointCompilerError, match="higher-order derivative, which is not supported yet"):
        grad(calls_grad_inside)(V)


# -- complex arguments -------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    (V + 1j, np.ones(3)),
    (V, np.ones(3) * (1 + 2j)),
    (V, 2j),
    (V, np.complex64(1.0)),
    (V, (np.ones(3), np.ones(3) * 1j)),
])
def test_complex_arguments_are_refused(args):
    with pytest.raises(ArgumentError, match=r"mixes: argument `[xz]` is complex; complex numbers are not supported yet"):
        grad(mixes)(*args)
    with pytest.raises(ArgumentError, match=r"complex numbers are not supported yet"):
        vjp(mixes, *args)


def test_real_arguments_of_every_kind_still_work():
    check_grads(mixes, V, np.arange(3))
    check_grads(mixes, V, 2.0)
    check_grads(mixes, V, np.float32(2.0))


# -- two names of one array merged by an `if` stay one array ------------------------------------
def alias_written_in_branch_then_loop(x, y):
    d = y
    if x[0] > 0:
        d[0] = x[1]
    for i in range(2):
        d[1] += x[i]
    return np.sum(y * y)


def alias_written_in_branch_then_after(x, y):
    d = y
    if x[0] > 0:
        d[0] = x[1]
    d[1] = x[0] * 3
    return np.sum(y * y)


@pytest.mark.parametrize("f", [alias_written_in_branch_then_loop, alias_written_in_branch_then_after])
@pytest.mark.parametrize("x0", [0.5, -0.5])
def test_alias_written_in_a_branch_then_written_again(f, x0):
    # the `if` gave `y` and `d` two outputs, so the later write through `d` missed `y`
    x, y = np.array([x0, 0.7]), np.array([1.0, 2.0])
    value, _ = value_and_grad(f, wrt=(0, 1))(x, y)
    assert value == pytest.approx(f(x.copy(), y.copy()))
    check_grads(f, x, y, wrt=(0, 1))

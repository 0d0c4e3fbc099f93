"""`value_and_grad(f, has_aux=True)` and `vjp(f, *args, wrt=...)`, against finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import ArgumentError, grad, value_and_grad, vjp
from adjoint_compiler.errors import ArgumentIndexError
from adjoint_compiler.testing import check_grads

X = np.arange(6.0).reshape(3, 2) / 4.0
W = np.array([0.5, -1.0])


def loss_with_metrics(w, x):
    z = x @ w
    loss = np.sum(np.tanh(z) ** 2)
    return loss, (z, np.mean(z), 3)


def loss_only(w, x):
    return loss_with_metrics(w, x)[0]


def test_has_aux_returns_the_pair_and_the_loss_gradient():
    (loss, (z, mean, count)), g = value_and_grad(loss_with_metrics, has_aux=True)(W, X)
    assert loss == pytest.approx(loss_only(W, X))
    np.testing.assert_allclose(z, X @ W)
    assert mean == pytest.approx(np.mean(X @ W)) and count == 3
    eps = 1e-6
    fd = [(loss_only(W + eps * e, X) - loss_only(W - eps * e, X)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_has_aux_tuple_wrt_and_keywords():
    _, (gw, gx) = value_and_grad(loss_with_metrics, wrt=(0, 1), has_aux=True)(W, x=X)
    assert gw.shape == W.shape and gx.shape == X.shape
    check_grads(loss_only, W, X, wrt=(0, 1))
    eps = 1e-6
    e = np.zeros_like(X)
    e[1, 0] = eps
    fd = (loss_only(W, X + e) - loss_only(W, X - e)) / (2 * eps)
    assert gx[1, 0] == pytest.approx(fd, rel=1e-6)


def test_has_aux_needs_a_pair_and_a_scalar_loss():
    with pytest.raises(ArgumentError, match="a pair"):
        value_and_grad(lambda_free_sin, has_aux=True)(W)
    with pytest.raises(ArgumentError, match="must be a scalar"):
        value_and_grad(vector_loss, has_aux=True)(W)


def lambda_free_sin(w):
    return np.sin(w)


def vector_loss(w):
    return np.sin(w), 1.0


def product(a, b):
    return np.sin(a) * b


def test_vjp_wrt_returns_only_those_cotangents():
    b = np.array([2.0, -3.0])
    out, pullback = vjp(product, W, b, wrt=1)
    np.testing.assert_allclose(pullback(np.ones(2)), np.sin(W))
    out, pullback = vjp(product, W, b, wrt=(0,))
    (ga,) = pullback(np.array([1.0, 2.0]))
    np.testing.assert_allclose(ga, np.cos(W) * b * np.array([1.0, 2.0]))
    out, pullback = vjp(product, W, b, wrt=(1, 0))
    gb, ga = pullback(np.ones(2))
    np.testing.assert_allclose(gb, np.sin(W))
    np.testing.assert_allclose(ga, np.cos(W) * b)
    with pytest.raises(ArgumentIndexError, match="wrt=2"):
        vjp(product, W, b, wrt=2)


def with_defaults(a, b, c=1.0, *, d=2.0):
    return np.sum(a * b ** 2) * c + d * np.sum(a)


class Scaled:
    def loss(self, a, b):
        return np.sum(a * b ** 2)


def test_a_negative_wrt_counts_the_positional_arguments_given_at_every_entry_point():
    """`wrt=-1` is the last positional argument the call passes (as JAX counts): not a default or
    keyword-only parameter, not the object a method is bound to (grad took `self` for a bound
    method, and `d` for a function with defaults, while vjp took `c`)."""
    import functools

    from adjoint_compiler import hessian, hvp, jacfwd, jacobian, vjp
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    expected = 2 * x * y * 3.0  # d/db at c = 3
    np.testing.assert_allclose(grad(with_defaults, wrt=-2)(x, y, 3.0), expected)
    np.testing.assert_allclose(grad(with_defaults, wrt=-1)(x, y), 2 * x * y)
    assert grad(with_defaults, wrt=-1)(x, y, 3.0) == pytest.approx(np.sum(x * y ** 2))
    np.testing.assert_allclose(value_and_grad(with_defaults, wrt=-2)(x, y, 3.0)[1], expected)
    np.testing.assert_allclose(vjp(with_defaults, x, y, 3.0, wrt=-2)[1](1.0), expected)
    np.testing.assert_allclose(grad(Scaled().loss, wrt=-1)(x, y), 2 * x * y)
    np.testing.assert_allclose(grad(Scaled().loss, wrt=-2)(x, y), y ** 2)
    np.testing.assert_allclose(grad(functools.partial(with_defaults, x), wrt=-1)(y), 2 * x * y)
    np.testing.assert_allclose(jacobian(lambda a, b, c=1.0: a * b * c, wrt=-1)(x, y), np.diag(x))
    np.testing.assert_allclose(jacfwd(lambda a, b, c=1.0: a * b * c, wrt=-1)(x, y), np.diag(x))
    np.testing.assert_allclose(hessian(with_defaults, wrt=-1)(x, y), np.diag(2 * x))
    np.testing.assert_allclose(hvp(with_defaults, wrt=-1)(x, y, np.ones(3)), 2 * x)
    with pytest.raises(ArgumentIndexError):
        grad(with_defaults, wrt=-3)(x, y)

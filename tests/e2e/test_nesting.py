"""Derivatives of derivatives (adjoint_compiler/nesting.py): `grad(grad(f))`, `vjp` of a gradient,
`hvp` and `hessian` (forward over reverse: the jvp of the generated gradient; reverse over reverse
where that has no tangent rule), through the generated gradient's source.

Each Hessian-vector product is checked against central finite differences of the gradient (itself
checked against finite differences of `f` throughout the suite), and a few against analytic
Hessians."""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_writes import three_snapshots

from adjoint_compiler import (
    Buffer,
    MissingRuleError,
    adjoint,
    copyto,
    grad,
    hessian,
    hvp,
    value_and_grad,
    vjp,
)


def fd_of_gradient(f, args, wrt, v, eps=1e-6):
    gradient = grad(f, wrt)
    plus = list(args)
    minus = list(args)
    plus[wrt] = args[wrt] + eps * v
    minus[wrt] = args[wrt] - eps * v
    return (np.asarray(gradient(*plus)) - np.asarray(gradient(*minus))) / (2 * eps)


# -- the functions -------------------------------------------------------------------------------

def poly(x): return np.sum(x ** 3 - 2.0 * x ** 2 * x[0])
def trig(x): return np.sum(np.sin(x) * np.cos(x[::-1]))
def logsumexp(x): return np.log(np.sum(np.exp(x - np.max(x)))) + np.max(x)
def sigmoid_loss(w): return np.mean(np.log1p(np.exp(-(X @ w) * Y)))
def tanh_layer(w): return np.sum(np.tanh(X @ w) ** 2)
def quadratic_form(x): return x @ A @ x + np.sum(x) ** 2
def norm_like(x): return np.sqrt(np.sum(x * x) + 1.0)
def division(x): return np.sum(1.0 / (1.0 + x * x))
def power_sum(x): return np.sum(np.abs(x) ** 2.5)
def reductions(x): return np.sum(x) * np.mean(x ** 2) + np.prod(x[:2])


def for_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(x * (i + 1.0)))
    return s


def loop_carried_array(x):
    h = x
    for _ in range(4):
        h = np.tanh(h * 0.9 + 0.1)
    return np.sum(h ** 2)


def while_loop(x):
    s = 0.0
    k = 0
    while k < 4:
        s = s + np.sum(x ** (k + 1)) / (k + 1.0)
        k = k + 1
    return s


def branches(x):
    if np.sum(x) > 0:
        y = np.exp(x) * x
    else:
        y = np.sin(x) ** 3
    return np.sum(y)


def early_return(x):
    if x[0] > 10.0:
        return np.sum(x)
    return np.sum(np.cos(x) * x ** 2)


def _inner(a, b):
    return np.sin(a) * b + a * a


def helper_call(x):
    return np.sum(_inner(x, x[::-1]))


def write_ndarray(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * x[(i + 1) % x.shape[0]]
    return np.sum(out ** 2)


def write_slice(x):
    u = x.copy()
    u[1:] = u[1:] * u[:-1]
    return np.sum(u ** 2)


def buffer_writes(x):
    b = Buffer.zeros(x.shape[0])
    for i in range(x.shape[0]):
        b[i] = x[i] ** 2 * x[0]
    return np.sum(np.sin(b.copy()))


def copyto_generator(x):
    b = Buffer(x)
    copyto(b, (x[i] * x[i - 1] for i in range(x.shape[0])))
    return np.sum(b.copy() ** 2)


def three_snapshots_squared(x):  # the [1, 2, 2, 2, 2, 3, 3, 3, 3, 3] function, times a nonlinear loss
    return three_snapshots(x) ** 2


def lotka_volterra(du, u, p, t):
    du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
    du[1] = p[2] * u[0] * u[1] - p[3] * u[1]


def rk4_inplace(p):
    u = np.array([1.0, 1.2])
    dt = 0.05
    k1, k2, k3, k4 = Buffer.zeros(2), Buffer.zeros(2), Buffer.zeros(2), Buffer.zeros(2)
    for _ in range(5):
        lotka_volterra(k1, u, p, 0.0)
        lotka_volterra(k2, u + 0.5 * dt * k1[:], p, 0.0)
        lotka_volterra(k3, u + 0.5 * dt * k2[:], p, 0.0)
        lotka_volterra(k4, u + dt * k3[:], p, 0.0)
        u = u + dt / 6.0 * (k1[:] + 2.0 * k2[:] + 2.0 * k3[:] + k4[:])
    return np.sum(u ** 2)


def stencil(u0):
    u = Buffer(u0)
    u_new = Buffer.zeros(u0.shape)
    for _ in range(3):
        u_new[1:-1] = u[1:-1] + 0.2 * (u[2:] - 2.0 * u[1:-1] + u[:-2]) + 0.1 * u[1:-1] ** 2
        copyto(u, u_new)
    return np.sum(u.copy() ** 3)


def list_of_arrays(x):
    parts = [x * 1.0]
    for i in range(3):
        parts.append(np.sin(parts[-1]) + x)
    return np.sum(np.stack(parts) ** 2)


def tuple_unpacking(x):
    a, b = x[0], x[1:]
    return a * np.sum(b ** 2) + np.sum(np.exp(b) * a)


R = np.random.default_rng(11)
X = R.normal(size=(6, 3))
Y = np.sign(R.normal(size=6))
A = R.normal(size=(4, 4))
V4 = np.array([0.4, -0.7, 1.1, 0.25])
V3 = V4[:3]

FUNCTIONS = [
    (poly, V4), (trig, V4), (logsumexp, V4), (sigmoid_loss, V3), (tanh_layer, V3), (quadratic_form, V4),
    (norm_like, V4), (division, V4), (power_sum, V4), (reductions, V4 + 1.0), (for_loop, V4),
    (loop_carried_array, V4), (while_loop, V4), (branches, V4), (branches, -V4 - 1.0), (early_return, V4),
    (helper_call, V4), (write_ndarray, V4), (write_slice, V4), (buffer_writes, V4), (copyto_generator, V4),
    (three_snapshots_squared, np.arange(1.0, 11.0) * 0.1), (rk4_inplace, np.array([1.5, 1.0, 1.0, 3.0])),
    (stencil, np.linspace(0.1, 0.9, 6)), (list_of_arrays, V3), (tuple_unpacking, V4),
]


@pytest.mark.parametrize("f,x", FUNCTIONS, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(FUNCTIONS)])
def test_hvp_matches_finite_differences_of_the_gradient(f, x):
    v = np.random.default_rng(5).normal(size=x.shape)
    h = hvp(f)
    np.testing.assert_allclose(h(x, v), fd_of_gradient(f, (x,), 0, v), rtol=1e-5, atol=1e-6)
    assert h.fallback is None  # forward over reverse: the jvp of the generated gradient


@pytest.mark.parametrize("f,x", FUNCTIONS[::5], ids=[f.__name__ for f, _ in FUNCTIONS[::5]])
def test_hvp_reverse_over_reverse_agrees(f, x):
    """The fallback (the pullback of the gradient) on the same functions."""
    from adjoint_compiler.nesting import _reverse_over_reverse
    v = np.random.default_rng(5).normal(size=x.shape)
    np.testing.assert_allclose(_reverse_over_reverse(grad(f), [x], (0,), v, False), hvp(f)(x, v),
                               rtol=1e-9, atol=1e-10)


def _softplus_scalar(x):
    return math.log1p(math.exp(x))


softplus_adjoint_only = np.vectorize(_softplus_scalar, otypes=[float])


@adjoint(softplus_adjoint_only)
def _softplus_adjoint(y, x):
    x_bar += y_bar / (1.0 + np.exp(-x))  # noqa: F821, F841 (a rule template)


def uses_softplus_adjoint_only(x):
    return np.sum(softplus_adjoint_only(x) ** 2 * x)


def test_hvp_without_a_tangent_rule_is_reverse_over_reverse_and_says_why():
    x = np.array([0.3, -0.2, 0.5])
    v = np.array([1.0, 2.0, -1.0])
    h = hvp(uses_softplus_adjoint_only)
    np.testing.assert_allclose(h(x, v), fd_of_gradient(uses_softplus_adjoint_only, (x,), 0, v), rtol=1e-6)
    assert isinstance(h.fallback, MissingRuleError) and "no tangent rule" in str(h.fallback)
    assert "line" in str(h.fallback)  # located in the generated gradient
    H = hessian(uses_softplus_adjoint_only)
    np.testing.assert_allclose(H(x) @ v, h(x, v), rtol=1e-10)
    assert isinstance(H.fallback, MissingRuleError)


def test_hvp_of_a_tuple_wrt():
    def f(x, w): return np.sum(np.tanh(x * w) ** 2) + np.sum(w ** 3 * x[0])
    x, w = V3, V3[::-1] * 2.0
    vx, vw = np.array([1.0, -1.0, 0.5]), np.array([0.2, 0.3, -0.7])
    hx, hw = hvp(f, wrt=(0, 1))(x, w, (vx, vw))
    eps = 1e-6
    g = grad(f, wrt=(0, 1))
    plus, minus = g(x + eps * vx, w + eps * vw), g(x - eps * vx, w - eps * vw)
    np.testing.assert_allclose(hx, (plus[0] - minus[0]) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(hw, (plus[1] - minus[1]) / (2 * eps), rtol=1e-6)
    (one,) = hvp(f, wrt=(1,))(x, w, (vw,))
    np.testing.assert_allclose(one, hvp(f, wrt=1)(x, w, vw), rtol=1e-12)
    H = hessian(f, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(H[0][0] @ vx + H[0][1] @ vw, hx, rtol=1e-10)
    np.testing.assert_allclose(H[1][0] @ vx + H[1][1] @ vw, hw, rtol=1e-10)


def test_grad_of_grad_scalar_and_third_order():
    def h(x): return np.sin(x) * x
    assert grad(grad(h))(1.0) == pytest.approx(2 * np.cos(1.0) - np.sin(1.0), rel=1e-12)
    assert grad(grad(grad(h)))(1.0) == pytest.approx(-3 * np.sin(1.0) - np.cos(1.0), rel=1e-12)


def _df(x):
    return np.sum(np.exp(x) * x)


_DF = grad(_df)


def calls_a_gradient(x):
    return np.sum(_DF(x) ** 2)


def test_a_gradient_called_inside_is_refused_clearly():
    from adjoint_compiler import AdjointCompilerError
    with pytest.raises(AdjointCompilerError, match="higher-order"):
        grad(calls_a_gradient)(V3)


def test_vjp_of_a_gradient_is_a_hessian_vector_product():
    def f(x, w): return np.sum(np.tanh(x * w) ** 2) + np.sum(w ** 3)
    x, w, v = V3, V3[::-1] * 2.0, np.array([1.0, 2.0, -1.0])
    out, pullback = vjp(grad(f, wrt=1), x, w)
    np.testing.assert_allclose(out, grad(f, wrt=1)(x, w))
    np.testing.assert_allclose(pullback(v)[1], fd_of_gradient(f, (x, w), 1, v), rtol=1e-6)


def test_hessian_analytic():
    def quad(x): return 0.5 * x @ A @ x
    np.testing.assert_allclose(hessian(quad)(V4), 0.5 * (A + A.T), atol=1e-12)

    def s(a, b): return a ** 3 * b + np.sin(a * b)
    a, b = 0.7, 1.3
    h = hessian(s, wrt=(0, 1))(a, b)
    expected = ((6 * a * b - b * b * np.sin(a * b), 3 * a * a + np.cos(a * b) - a * b * np.sin(a * b)),
                (3 * a * a + np.cos(a * b) - a * b * np.sin(a * b), -a * a * np.sin(a * b)))
    np.testing.assert_allclose(np.array(h), np.array(expected), rtol=1e-12)
    assert isinstance(hessian(s)(a, b), float)


def test_hessian_of_a_matrix_argument_has_shape_twice():
    def f(W): return np.sum(np.tanh(X @ W) ** 2)
    W = R.normal(size=(3, 2))
    H = hessian(f)(W)
    assert H.shape == (3, 2, 3, 2)
    v = R.normal(size=W.shape)
    np.testing.assert_allclose(np.tensordot(H, v, axes=2), fd_of_gradient(f, (W,), 0, v), rtol=1e-5, atol=1e-7)


def test_vjp_of_value_and_grad():
    def h(x): return np.sum(np.sin(x) ** 2)
    out, pullback = vjp(value_and_grad(h), V3)
    assert out[0] == pytest.approx(h(V3))
    np.testing.assert_allclose(pullback((0.0, np.ones(3)))[0], fd_of_gradient(h, (V3,), 0, np.ones(3)), rtol=1e-6)

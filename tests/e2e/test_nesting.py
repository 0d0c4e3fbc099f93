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

from adjoint_compiler.testing import check_grads
from adjoint_compiler import (
    Buffer,
    MissingRuleError,
    adjoint,
    copyto,
    grad,
    hessian,
    hvp,
    jvp,
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


def items_read(x):
    return x[0].item() ** 3 * x[1] + x.item(2) ** 2 * x.item(1)


def per_step_loss(x):  # (the gradient's carried adjoint updated in place under two names: refused)
    s = 0.0
    h = x
    for _ in range(3):
        h = np.tanh(0.5 * h + x)
        s = s + np.sum(h * h)
    return s


def write_through_a_slice_view(x):  # (an item of `rt.own(x)` read back as a list item: refused)
    v = x[1:]
    v[0] = x[0] ** 2
    return np.sum(x * x * x)


def per_step_loss_in_a_branch(x):  # (the update in one branch, the param yielded by the other)
    total = 0.0
    h = x
    for t in range(3):
        h = np.sin(h)
        if t % 2 == 0:
            total = total + np.sum(h ** 2)
    return total


def element_recurrence(x):  # (`for i in range_1` read back: an item of a range was not an integer)
    u = x.copy()
    for i in range(1, 3):
        u[i] = u[i - 1] ** 2
    return u[2] + u[1]


def write_through_a_flipped_view(x):  # (the flip's rank was lost: an item of it read as a view)
    f = np.flip(x)
    f[0] = f[1] ** 2
    return np.sum(x ** 3)


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
    (stencil, np.linspace(0.1, 0.9, 6)), (list_of_arrays, V3), (tuple_unpacking, V4), (items_read, V4),
    (per_step_loss, V3), (write_through_a_slice_view, V4), (write_through_a_flipped_view, V4),
    (element_recurrence, V3), (per_step_loss_in_a_branch, V3),
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


def test_a_module_level_gradient_called_inside():
    def reference(x):
        return np.sum((np.exp(x) * (x + 1.0)) ** 2)
    np.testing.assert_allclose(calls_a_gradient(V3), reference(V3), rtol=1e-12)
    np.testing.assert_allclose(grad(calls_a_gradient)(V3), central(reference, (V3,), 0), rtol=1e-6)


# -- gradients taken inside a differentiated function ----------------------------------------------
# Each `outer` is checked against central finite differences of `reference`, the same function
# with the inner gradient written out by hand.

XS = np.array([0.3, -0.2, 0.5])
SCALE = [2.0]


def central(f, args, wrt, eps=1e-6):
    x = np.asarray(args[wrt], dtype=float)
    out = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        plus, minus = list(args), list(args)
        xp, xm = x.copy(), x.copy()
        xp[k] += eps
        xm[k] -= eps
        plus[wrt], minus[wrt] = (xp, xm) if x.ndim else (float(xp), float(xm))
        out[k] = (f(*plus) - f(*minus)) / (2 * eps)
    return out if x.ndim else float(out)


def sin_sq(w, x): return np.sum(np.sin(w * x) ** 2)
def sin_sq_dw(w, x): return np.sin(2 * w * x) * x
def sin_sq_dx(w, x): return np.sin(2 * w * x) * w
def tanh_loss(w): return np.sum(np.tanh(X @ w) ** 2)
def tanh_loss_dw(w): return X.T @ (2 * np.tanh(X @ w) * (1 - np.tanh(X @ w) ** 2))


def looping_inner(w, x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.cos(w * x + k))
    return s


def looping_inner_dw(w, x):
    return sum(-np.sin(w * x + k) * x for k in range(3))


def scaled(w): return SCALE[0] * np.sum(w ** 3)
def scaled_dw(w): return SCALE[0] * 3 * w ** 2


def squared_norm_of_grad(w): return np.sum(grad(sin_sq)(w, XS) ** 2)
def squared_norm_of_grad_ref(w): return np.sum(sin_sq_dw(w, XS) ** 2)
def grad_times_v(w): return np.sum(grad(tanh_loss)(w) * V3)
def grad_times_v_ref(w): return np.sum(tanh_loss_dw(w) * V3)


def assigned_then_used(w, x):
    g = grad(sin_sq)(w, x)
    return np.sum(g ** 2) + np.sum(g * w)


def assigned_then_used_ref(w, x):
    g = sin_sq_dw(w, x)
    return np.sum(g ** 2) + np.sum(g * w)


def gradient_steps(w):
    for _ in range(3):
        w = w - 0.1 * grad(tanh_loss)(w)
    return tanh_loss(w)


def gradient_steps_ref(w):
    for _ in range(3):
        w = w - 0.1 * tanh_loss_dw(w)
    return tanh_loss(w)


def in_a_branch(w, x):
    if np.sum(w) > 0:
        g = grad(sin_sq)(w, x)
    else:
        g = grad(sin_sq, wrt=1)(w, x)
    return np.sum(g * g * w)


def in_a_branch_ref(w, x):
    g = sin_sq_dw(w, x) if np.sum(w) > 0 else sin_sq_dx(w, x)
    return np.sum(g * g * w)


def bound_to_a_name(w, x):
    d = grad(sin_sq, 1)
    return np.sum(np.sin(d(w, x)) * x)


def bound_to_a_name_ref(w, x):
    return np.sum(np.sin(sin_sq_dx(w, x)) * x)


def both_arguments(w, x):
    gw, gx = grad(sin_sq, wrt=(0, 1))(w, x)
    return np.sum(gw * gx) + np.sum(x * w)


def both_arguments_ref(w, x):
    return np.sum(sin_sq_dw(w, x) * sin_sq_dx(w, x)) + np.sum(x * w)


def value_and_gradient_inside(w, x):
    value, g = value_and_grad(sin_sq)(w, x)
    return value * np.sum(g * x)


def value_and_gradient_inside_ref(w, x):
    return sin_sq(w, x) * np.sum(sin_sq_dw(w, x) * x)


def inner_with_a_loop(w, x):
    return np.sum(np.tanh(grad(looping_inner)(w, x)))


def inner_with_a_loop_ref(w, x):
    return np.sum(np.tanh(looping_inner_dw(w, x)))


def a_loop_around(w, x):
    s = 0.0
    for k in range(2):
        s = s + np.sum(grad(sin_sq)(w * (k + 1.0), x) * x)
    return s


def a_loop_around_ref(w, x):
    return sum(np.sum(sin_sq_dw(w * (k + 1.0), x) * x) for k in range(2))


def cube(b): return b ** 3 + np.sin(b)


def scalar_inner_ref(a): return (3 * a ** 2 + np.cos(a)) * a


INSIDE = [
    (squared_norm_of_grad, squared_norm_of_grad_ref, (V3[::-1] + 0.2,), 0),
    (grad_times_v, grad_times_v_ref, (V3,), 0),
    (assigned_then_used, assigned_then_used_ref, (V3, XS), 0),
    (assigned_then_used, assigned_then_used_ref, (V3, XS), 1),
    (gradient_steps, gradient_steps_ref, (V3,), 0),
    (in_a_branch, in_a_branch_ref, (V3, XS), 0),
    (in_a_branch, in_a_branch_ref, (-V3 - 1.0, XS), 0),
    (bound_to_a_name, bound_to_a_name_ref, (V3, XS), 1),
    (both_arguments, both_arguments_ref, (V3, XS), 0),
    (both_arguments, both_arguments_ref, (V3, XS), 1),
    (value_and_gradient_inside, value_and_gradient_inside_ref, (V3, XS), 0),
    (inner_with_a_loop, inner_with_a_loop_ref, (V3, XS), 0),
    (a_loop_around, a_loop_around_ref, (V3, XS), 0),
    (a_loop_around, a_loop_around_ref, (V3, XS), 1),
]


@pytest.mark.parametrize("outer, reference, args, wrt", INSIDE,
                         ids=[f"{c[0].__name__}-{c[3]}" for c in INSIDE])
def test_grad_of_a_function_that_takes_a_gradient(outer, reference, args, wrt):
    np.testing.assert_allclose(outer(*args), reference(*args), rtol=1e-12)
    np.testing.assert_allclose(grad(outer, wrt)(*args), central(reference, args, wrt), rtol=1e-6, atol=1e-9)


def test_a_scalar_gradient_inside():
    assert grad(lambda a: grad(cube)(a) * a)(0.7) == pytest.approx(central(scalar_inner_ref, (0.7,), 0), rel=1e-7)


def test_the_guard_sees_the_inner_function_change():
    def outer(w): return np.sum(grad(scaled)(w) * w)
    w = V3.copy()
    first = grad(outer)(w)
    np.testing.assert_allclose(first, central(lambda w: np.sum(scaled_dw(w) * w), (w,), 0), rtol=1e-6)
    SCALE[0] = 5.0  # a global the inner function reads
    try:
        np.testing.assert_allclose(grad(outer)(w), 2.5 * first, rtol=1e-12)
    finally:
        SCALE[0] = 2.0
    global cube
    old = cube
    cube = lambda b: b ** 2  # (the name the body reads, rebound)
    try:
        assert grad(lambda a: grad(cube)(a) * a)(0.7) == pytest.approx(4 * 0.7, rel=1e-12)
    finally:
        cube = old
    global sin_sq
    old = sin_sq
    sin_sq = lambda w, x: np.sum(np.cos(w * x) ** 2)

    def ref(w): return np.sum((-np.sin(2 * w * XS) * XS) ** 2)
    try:
        np.testing.assert_allclose(grad(squared_norm_of_grad)(V3), central(ref, (V3,), 0), rtol=1e-6)
    finally:
        sin_sq = old
    np.testing.assert_allclose(grad(squared_norm_of_grad)(V3), central(squared_norm_of_grad_ref, (V3,), 0),
                               rtol=1e-6)


def of_a_lambda(w, x):
    g = grad(lambda v: tanh_loss_of(v, x))(w)
    return np.sum(g ** 2)


def tanh_loss_of(w, x): return np.sum(np.tanh(x @ w) ** 2)
def tanh_loss_of_dw(w, x): return x.T @ (2 * np.tanh(x @ w) * (1 - np.tanh(x @ w) ** 2))
def of_a_lambda_ref(w, x): return np.sum(tanh_loss_of_dw(w, x) ** 2)


def of_a_nested_def(w, x):
    s = 0.0

    def inner(v, k):
        return np.sum(np.sin(v * x * k))
    for k in range(2):
        s = s + np.sum(grad(inner)(w, k + 1.0) * w)
    return s


def of_a_nested_def_ref(w, x):
    return sum(np.sum(np.cos(w * x * (k + 1.0)) * x * (k + 1.0) * w) for k in range(2))


def late_binding(w, x):
    f = lambda v: np.sum(np.exp(v * x))
    x = x * 2.0  # (read when the gradient is called, as Python reads it)
    return np.sum(grad(f)(w) * x)


def late_binding_ref(w, x):
    return np.sum(np.exp(w * 2.0 * x) * 2.0 * x * 2.0 * x)


LIFTED = [
    (of_a_lambda, of_a_lambda_ref, (np.array([0.3, -0.7]), X[:3, :2]), 0),
    (of_a_lambda, of_a_lambda_ref, (np.array([0.3, -0.7]), X[:3, :2]), 1),
    (of_a_nested_def, of_a_nested_def_ref, (np.array([0.3, -0.7]), np.array([0.5, 1.5])), 0),
    (of_a_nested_def, of_a_nested_def_ref, (np.array([0.3, -0.7]), np.array([0.5, 1.5])), 1),
    (late_binding, late_binding_ref, (V3, XS), 0),
    (late_binding, late_binding_ref, (V3, XS), 1),
]


@pytest.mark.parametrize("outer, reference, args, wrt", LIFTED,
                         ids=[f"{c[0].__name__}-{c[3]}" for c in LIFTED])
def test_grad_of_a_function_made_inside(outer, reference, args, wrt):
    """A lambda or nested def made inside is lifted to a function of its own, the enclosing
    function's names it reads passed as arguments where the gradient is called."""
    np.testing.assert_allclose(outer(*args), reference(*args), rtol=1e-12)
    np.testing.assert_allclose(grad(outer, wrt)(*args), central(reference, args, wrt), rtol=1e-6, atol=1e-9)


def test_the_guard_sees_what_a_lifted_lambda_calls_change():
    global tanh_loss_of
    w, x = np.array([0.3, -0.7]), X[:3, :2]
    np.testing.assert_allclose(grad(of_a_lambda)(w, x), central(of_a_lambda_ref, (w, x), 0), rtol=1e-6)
    old = tanh_loss_of
    tanh_loss_of = lambda w, x: np.sum((x @ w) ** 2)

    def ref(w): return np.sum((2 * x.T @ (x @ w)) ** 2)
    try:
        np.testing.assert_allclose(grad(of_a_lambda)(w, x), central(ref, (w,), 0), rtol=1e-6)
    finally:
        tanh_loss_of = old
    np.testing.assert_allclose(grad(of_a_lambda)(w, x), central(of_a_lambda_ref, (w, x), 0), rtol=1e-6)


def test_gradients_inside_that_cannot_be_compiled_are_refused_where_they_are_taken():
    from adjoint_compiler import AdjointCompilerError
    scale = 2.0

    def reads_a_closure_cell(w):
        return np.sum(grad(lambda v: np.sum(np.sin(v * scale)))(w))
    with pytest.raises(AdjointCompilerError, match="reads `scale` from the closure") as info:
        grad(reads_a_closure_cell)(V3)
    assert "test_nesting.py" in str(info.value)

    def with_a_default(w):
        return np.sum(grad(lambda v, k=2.0: np.sum(v ** k))(w))
    with pytest.raises(AdjointCompilerError, match="define it at module level"):
        grad(with_a_default)(V3)

    def with_aux(w):
        return value_and_grad(sin_sq, has_aux=True)(w, XS)[1]
    with pytest.raises(AdjointCompilerError, match="has_aux"):
        grad(with_aux)(V3)

    def jvp_of_a_lambda_with_a_default(w):
        return jvp(lambda v, k=3: np.sum(v ** k), (w,), (w,))[1]
    with pytest.raises(AdjointCompilerError, match="define it at module level"):
        grad(jvp_of_a_lambda_with_a_default)(V3)


def jvp_of_a_lambda(w, x):
    return jvp(lambda v: np.sum(np.sin(v * x) * v), (w,), (DIR,))[1]


def jvp_of_a_lambda_ref(w, x):
    return np.sum((np.cos(w * x) * x * w + np.sin(w * x)) * DIR)


def test_grad_of_a_jvp_of_a_lambda_made_inside():
    for wrt in (0, 1):
        np.testing.assert_allclose(jvp_of_a_lambda(V3, XS), jvp_of_a_lambda_ref(V3, XS), rtol=1e-12)
        np.testing.assert_allclose(grad(jvp_of_a_lambda, wrt)(V3, XS), central(jvp_of_a_lambda_ref, (V3, XS), wrt),
                                   rtol=1e-6)


def takes_its_own_gradient(w):
    return np.sum(grad(takes_its_own_gradient)(w))


def test_a_function_that_takes_its_own_gradient_is_refused():
    from adjoint_compiler import AdjointCompilerError
    with pytest.raises(AdjointCompilerError, match="recursive"):
        grad(takes_its_own_gradient)(V3)


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


# -- vjp of jvp: the jvp's generated code, differentiated again ----------------------------------------

DIR = np.array([1.0, 2.0, -0.5])


def elementwise(x): return np.sin(x) * x[::-1]
def elementwise_jv(x, v): return np.cos(x) * v * x[::-1] + np.sin(x) * v[::-1]
def two_args(x, y): return np.sum(np.exp(x * y)) + np.sum(y ** 3)
def two_args_jv(x, y, vx, vy): return np.sum(np.exp(x * y) * (vx * y + x * vy)) + np.sum(3 * y ** 2 * vy)


def loop_map(x):
    h = x
    for _ in range(3):
        h = np.tanh(h) * 1.5
    return h


def loop_map_jv(x, v):
    h, t = x, v
    for _ in range(3):
        t = 1.5 * (1 - np.tanh(h) ** 2) * t
        h = np.tanh(h) * 1.5
    return t


def test_vjp_of_jvp_is_a_vector_jacobian_product_of_the_tangent():
    u = np.array([0.5, -1.0, 2.0])
    out, pullback = vjp(lambda x: jvp(elementwise, (x,), (DIR,))[1], V3)
    np.testing.assert_allclose(out, elementwise_jv(V3, DIR), rtol=1e-12)
    np.testing.assert_allclose(pullback(u)[0], central(lambda x: u @ elementwise_jv(x, DIR), (V3,), 0), rtol=1e-6)
    out, pullback = vjp(lambda x: jvp(loop_map, (x,), (DIR,))[1], V3)
    np.testing.assert_allclose(out, loop_map_jv(V3, DIR), rtol=1e-12)
    np.testing.assert_allclose(pullback(u)[0], central(lambda x: u @ loop_map_jv(x, DIR), (V3,), 0), rtol=1e-6)


def test_vjp_of_jvp_of_two_arguments_and_of_the_value():
    y = V3[::-1] * 0.5
    vy = np.array([0.3, 0.1, -0.2])

    def f(x, y):
        value, tangent = jvp(two_args, (x, y), (DIR, vy))
        return value * tangent
    _, pullback = vjp(f, V3, y)
    gx, gy = pullback(1.0)

    def ref(x, y): return two_args(x, y) * two_args_jv(x, y, DIR, vy)
    np.testing.assert_allclose(gx, central(ref, (V3, y), 0), rtol=1e-6)
    np.testing.assert_allclose(gy, central(ref, (V3, y), 1), rtol=1e-6)


def test_grad_of_jvp_of_a_scalar_function_is_a_hessian_vector_product():
    g = grad(lambda x: jvp(tanh_loss, (x,), (DIR,))[1])(V3)
    np.testing.assert_allclose(g, central(lambda x: tanh_loss_dw(x) @ DIR, (V3,), 0), rtol=1e-6)


def test_jvp_inside_with_an_integer_constant_primal():
    def power(x, k): return np.sum(x ** k)

    def f(x): return jvp(power, (x, 3), (DIR, 0.0))[1]
    np.testing.assert_allclose(grad(f)(V3), central(lambda x: np.sum(3 * x ** 2 * DIR), (V3,), 0), rtol=1e-6)

    def loop(x):  # (a zero tangent for the exponent: not differentiated, so no 0 * log(x) of a negative x)
        s = 0.0
        for k in range(2, 4):
            s = s + jvp(power, (x, k), (DIR, 0.0))[1]
        return s
    x = np.array([-0.5, 0.7, -1.2])
    with np.errstate(invalid="raise"):
        np.testing.assert_allclose(grad(loop)(x), central(lambda x: np.sum((2 * x + 3 * x ** 2) * DIR), (x,), 0),
                                   rtol=1e-6)

    def g(x): return jvp(power, (x, 3), (DIR, 1.0))[1]
    from adjoint_compiler import AdjointCompilerError
    with pytest.raises(AdjointCompilerError, match="carries no tangent"):
        grad(g)(V3)


# -- integer arguments: taken as floats, as `grad` takes them ------------------------------------------

def cubic(x): return x ** 3 + x * 2
def cubic_sum(x, y): return np.sum(x ** 3 * y)


def test_hvp_and_hessian_take_integer_arguments_as_floats_like_grad():
    assert grad(cubic)(2) == 14.0  # grad: an int argument gets a float gradient
    for x in (2, np.int64(2), 2.0):  # (the float one crashed in mutation.check before)
        assert hvp(cubic)(x, 1) == pytest.approx(12.0, rel=1e-12)
        assert hvp(cubic)(x, 0.5) == pytest.approx(6.0, rel=1e-12)
        assert hessian(cubic)(x) == pytest.approx(12.0, rel=1e-12)
    xi, y = np.array([1, 2, -1]), np.array([0.5, 1.0, 2.0])
    v = np.array([1.0, -1.0, 0.5])
    expected = 6 * xi * y * v  # the Hessian in x is diag(6 x y)
    np.testing.assert_allclose(hvp(cubic_sum)(xi, y, v), expected, rtol=1e-12)
    np.testing.assert_allclose(hvp(cubic_sum)(xi.astype(float), y, v), expected, rtol=1e-12)
    np.testing.assert_allclose(hessian(cubic_sum)(xi, y), np.diag(6 * xi * y), rtol=1e-12)
    hx, hy = hvp(cubic_sum, wrt=(0, 1))(xi, np.array([1, 1, 2]), (v, v))
    np.testing.assert_allclose(hx, 6 * xi * np.array([1, 1, 2]) * v + 3 * xi ** 2 * v, rtol=1e-12)
    np.testing.assert_allclose(hy, 3 * xi ** 2 * v, rtol=1e-12)


def test_hvp_of_a_function_that_takes_a_gradient():
    """Third derivatives: the jvp of the gradient of a function whose body calls `grad`."""
    def analytic_gradient(w): return 2 * np.sin(4 * w * XS) * XS ** 3  # of squared_norm_of_grad
    w, v = V3[::-1] + 0.2, np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(grad(squared_norm_of_grad)(w), analytic_gradient(w), rtol=1e-12)
    eps = 1e-6
    expected = (analytic_gradient(w + eps * v) - analytic_gradient(w - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp(squared_norm_of_grad)(w, v), expected, rtol=1e-6, atol=1e-10)


# -- hvp taken inside ----------------------------------------------------------------------------------

def hvp_inside(w, x):
    return np.sum(hvp(sin_sq)(w, x, DIR) * x)


def hvp_inside_ref(w, x):  # the Hessian of sin_sq in w is diag(2 x^2 cos(2 w x))
    return np.sum(2 * x ** 2 * np.cos(2 * w * x) * DIR * x)


def hvp_of_both_inside(w, x):
    hw, hx = hvp(sin_sq, wrt=(0, 1))(w, x, (DIR, V3))
    return np.sum(hw * w) + np.sum(hx ** 2)


def hvp_of_both_inside_ref(w, x):
    # d2/dw2 = 2 x^2 cos(2wx), d2/dwdx = sin(2wx) + 2wx cos(2wx), d2/dx2 = 2 w^2 cos(2wx)
    c, m = np.cos(2 * w * x), np.sin(2 * w * x) + 2 * w * x * np.cos(2 * w * x)
    hw = 2 * x ** 2 * c * DIR + m * V3
    hx = m * DIR + 2 * w ** 2 * c * V3
    return np.sum(hw * w) + np.sum(hx ** 2)


def hvp_of_a_lambda_inside(w, x):
    return np.sum(hvp(lambda v: np.sum(np.sin(v * x) ** 2))(w, DIR))


def hvp_of_a_lambda_inside_ref(w, x):
    return np.sum(2 * x ** 2 * np.cos(2 * w * x) * DIR)


HVP_INSIDE = [(hvp_inside, hvp_inside_ref), (hvp_of_both_inside, hvp_of_both_inside_ref),
              (hvp_of_a_lambda_inside, hvp_of_a_lambda_inside_ref)]


@pytest.mark.parametrize("outer, reference", HVP_INSIDE, ids=[c[0].__name__ for c in HVP_INSIDE])
@pytest.mark.parametrize("wrt", [0, 1])
def test_grad_of_a_function_that_takes_an_hvp(outer, reference, wrt):
    args = (V3, XS)
    np.testing.assert_allclose(outer(*args), reference(*args), rtol=1e-12)
    np.testing.assert_allclose(grad(outer, wrt)(*args), central(reference, args, wrt), rtol=1e-6, atol=1e-9)


def power_zero(x):
    return x ** 0.0


def power_one(x):
    return x ** 1.0


def power_three(x):
    return np.power(x, 3)


@pytest.mark.parametrize("x", [0.0, 0.7])
def test_higher_derivatives_of_powers_are_exact_at_zero(x):
    # (autograd's test_power_arg0: grad(grad(x ** 0.0))(0.0) raised ZeroDivisionError: 0 * 0.0 ** -2)
    for f, second, third in [(power_zero, 0.0, 0.0), (power_one, 0.0, 0.0), (power_three, 6 * x, 6.0)]:
        assert grad(grad(f))(x) == pytest.approx(second, abs=1e-12)
        assert grad(grad(grad(f)))(x) == pytest.approx(third, abs=1e-12)


def _two_items(xs):
    return np.sum(np.sin(xs[0])) + np.sum(np.cos(xs[1]))


def _of_gradient(xs):
    g = grad(_two_items)(xs)
    return np.sum(g[0]) + np.sum(np.sin(g[0])) + np.sum(np.sin(g[1]))


@pytest.mark.parametrize("kind", [list, tuple])
def test_gradient_of_a_gradient_of_a_list_of_arrays_of_several_shapes(kind):
    # (autograd's test_list/test_tuple: the transpose of an item's adjoint read the list as one array)
    rng = np.random.default_rng(4)
    xs = kind([rng.normal(size=(3, 2)), rng.normal(size=4), rng.normal(size=(2, 2))])
    g = grad(_of_gradient)(xs)
    np.testing.assert_allclose(g[0], -np.sin(xs[0]) - np.cos(np.cos(xs[0])) * np.sin(xs[0]), rtol=1e-12)
    np.testing.assert_allclose(g[1], np.cos(-np.sin(xs[1])) * -np.cos(xs[1]), rtol=1e-12)
    np.testing.assert_array_equal(g[2], np.zeros((2, 2)))


def _spread(x):
    return np.var([x, 3.0 * x, x ** 2]) + np.std([np.sin(x), x])


def _spread_slope(x):
    return grad(_spread)(x)


@pytest.mark.parametrize("x", [0.4, 1.3])
def test_second_derivative_through_a_reduction_of_a_list(x):
    # (autograd's test_std_list_of_boxes at order 2: the array gradient of the list, `[x, ...]`,
    # was transposed into a list, and two such lists were added by concatenation)
    eps = 1e-5
    by_differences = (grad(_spread)(x + eps) - grad(_spread)(x - eps)) / (2 * eps)
    assert grad(_spread_slope)(x) == pytest.approx(by_differences, rel=1e-6, abs=1e-8)


def _einsums(x, y):
    a = np.einsum("ij,jk->ik", x, y) + np.einsum("...j,jk->...k", x, y)
    b = np.einsum("ii->", x[:, :2] @ y[:2, :]) + np.einsum("i,i->", x[0], y[:, 1])
    c = np.einsum(x, [0, 1], y, [1, 2], [0])  # interleaved operands and sublists
    d = np.einsum("ij,k->jk", x, y[0]) + np.einsum("ij->j", x)[None, :2]  # a sum within one operand
    return np.sum(np.sin(a)) + b ** 2 + np.sum(c ** 3) + np.sum(np.cos(d))


def _einsums_slope(x, y):
    gx, gy = grad(_einsums, (0, 1))(x, y)
    return np.sum(gx * x) + np.sum(np.tanh(gy))


def test_second_order_through_einsum():
    # (the gradient of an einsum was a lazy class, refused when differentiated again)
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    check_grads(_einsums_slope, x, y, wrt=(0, 1))
    v = rng.normal(size=x.shape)
    np.testing.assert_allclose(hvp(_einsums)(x, y, v), fd_of_gradient(_einsums, (x, y), 0, v), rtol=1e-6, atol=1e-8)


def _built(x):
    a = np.array([x[0] ** 2, np.sin(x[1]), x[0] * x[1]])
    b = np.array([[x[1], x[0]], [x[0] ** 3, 1.0]])
    return np.sum(a ** 2) + np.sum(np.cos(b))


def _built_slope(x):
    return np.sum(np.tanh(grad(_built)(x)))


def test_second_order_through_an_array_built_from_a_list():
    # (np.array's adjoint recursed over the list: "the recursive call to array_adjoint")
    x, v = np.array([0.3, 0.8]), np.array([0.4, -0.2])
    check_grads(_built_slope, x)
    np.testing.assert_allclose(hvp(_built)(x, v), fd_of_gradient(_built, (x,), 0, v), rtol=1e-6, atol=1e-9)


def _norms(x):
    return np.linalg.norm(x) ** 3 + np.linalg.norm(x, 1) ** 2 + np.sum(np.linalg.norm(x, axis=1) ** 3) \
        + np.linalg.norm(x, np.inf) * np.linalg.norm(x, "fro")


def _norms_slope(x):
    return np.sum(np.tanh(grad(_norms)(x)))


def test_second_order_through_norms():
    # (the matrix norm's adjoint picked np.max or np.min as a value: refused when differentiated again)
    x = np.array([[0.3, -1.2], [0.8, 0.5], [-0.4, 1.0]])  # (no ties among row or column sums)
    check_grads(_norms_slope, x)
    v = np.array([[0.2, 0.1], [-0.3, 0.4], [0.5, -0.1]])
    np.testing.assert_allclose(hvp(_norms)(x, v), fd_of_gradient(_norms, (x,), 0, v), rtol=1e-6, atol=1e-9)


def _determinants(a):
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(2.0 * logdet + 0.01 * np.linalg.det(a) ** 2) + np.sum(a ** 2)


def _determinants_slope(a):
    return np.sum(np.sin(0.1 * grad(_determinants)(a)))


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_second_order_through_det_and_slogdet(shape):
    # (their adjoints try the inverse first: a `try`, refused when differentiated again)
    rng = np.random.default_rng(1)
    a, v = rng.normal(size=shape) + 3 * np.eye(3), rng.normal(size=shape)
    check_grads(_determinants_slope, a)
    np.testing.assert_allclose(hvp(_determinants)(a, v), fd_of_gradient(_determinants, (a,), 0, v),
                               rtol=1e-6, atol=1e-8)


def _products(a, b):
    return np.sum(np.cross(a, b, axisa=0) ** 2) + np.sum(np.cross(a.T, b) ** 3) + np.sum(np.kron(a, b[:2]) ** 3)


def _products_slope(a, b):
    return np.sum(np.sin(grad(_products)(a, b)))


def test_second_order_through_cross_and_kron():
    # (cross's adjoint called itself for axisa=..., kron's cast with `.astype(copy=False)`: both refused
    # when differentiated again)
    rng = np.random.default_rng(5)
    a, b, v = rng.normal(size=(3, 4)), rng.normal(size=(4, 3)), rng.normal(size=(3, 4))
    check_grads(_products_slope, a, b)
    np.testing.assert_allclose(hvp(_products)(a, b, v), fd_of_gradient(_products, (a, b), 0, v), rtol=1e-6, atol=1e-8)


def gp_like(x):
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 0.5 * np.eye(3)
    L = np.linalg.cholesky(K)  # (its adjoint solves triangles: differentiated as np.linalg.solve)
    return np.sum(np.log(np.diag(L))) + np.sum(L)


def test_hvp_through_a_cholesky_factor():
    from adjoint_compiler.testing import check_grads

    x, v = np.array([0.1, 0.7, -0.4]), np.array([1.0, -0.5, 0.25])
    check_grads(gp_like, x)  # (the gradient first, against finite differences)
    g = grad(gp_like)
    np.testing.assert_allclose(hvp(gp_like)(x, v), (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5, rtol=1e-5, atol=1e-8)


def sorted_weights(x):
    return np.sum(np.sort(x) ** 2 * np.arange(4.0))


def test_hessian_through_np_sort():
    x = np.array([0.3, -1.2, 0.8, 2.0])
    # each entry weighted by its rank in the sorted order: 2 * rank on the diagonal (analytic)
    np.testing.assert_allclose(hessian(sorted_weights)(x), np.diag([2.0, 0.0, 4.0, 6.0]), atol=1e-12)


def where_sqrt(x):
    with np.errstate(all="ignore"):
        return np.sum(np.where(x > 0, np.sqrt(x), -x))


def where_cubed_sqrt(x):
    with np.errstate(all="ignore"):
        return np.sum(np.where(x <= 0, x * x, np.sqrt(x) ** 3))


def where_log_times_log(x):
    with np.errstate(all="ignore"):
        return np.sum(np.where(x > 0, np.log(x) * np.log(x), -x))


@pytest.mark.parametrize("f,h_neg", [(where_sqrt, 0.0), (where_cubed_sqrt, 2.0), (where_log_times_log, 0.0)])
def test_second_derivatives_through_a_branch_not_taken_are_the_taken_ones(f, h_neg):
    """`np.where` with a branch that is nan where it is not taken: the Hessian there is the taken
    branch's (a nan from the derivatives of the untaken one was the result, by both forward over
    reverse and reverse over reverse)."""
    x = np.array([0.7, -0.4, 1.3])
    with np.errstate(all="ignore"):
        h = hessian(f)(x)
        v = np.array([0.3, -1.2, 0.5])
        _, pullback = vjp(grad(f), x)
        backward = pullback(v)[0]
    eps = 1e-4
    fd = np.array([(f(x + eps * e) - 2 * f(x) + f(x - eps * e)) / eps ** 2 for e in np.eye(3)])
    np.testing.assert_allclose(np.diag(h), fd, rtol=1e-4, atol=1e-5)
    assert h[1, 1] == pytest.approx(h_neg) and not np.any(np.isnan(h))
    np.testing.assert_allclose(backward, h @ v, rtol=1e-9, atol=1e-12)


def writes_its_argument(du, u):
    du[0] = u[0] ** 2
    return np.sum(du * np.array([0.3, -1.1, 0.8])) + np.sum(u[1:] ** 2 * np.array([-1.1, 0.8]))


def a_helper_updates_its_argument(du, u):
    rhs_update(du, u)
    return np.sum(du * np.array([0.3, -1.1, 0.8]))


def rhs_update(du, u):
    du += u * u


def test_the_hessian_of_a_function_writing_into_its_argument():
    """Its gradient copies the argument it writes into (`rt.own`), which has rules (the Hessian
    was refused inside the runtime's copy helper), and writes into an adjoint that
    `rt.unbroadcast` may have given as its operand, which nothing reads again (refused as a write
    into memory another value shares)."""
    u, du = np.array([0.5, 1.2, -0.4]), np.array([0.1, 0.2, 0.3])
    for f in (writes_its_argument, a_helper_updates_its_argument):
        np.testing.assert_allclose(hessian(f, wrt=1)(du, u), np.diag([0.6, -2.2, 1.6]), atol=1e-12)

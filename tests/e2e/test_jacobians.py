"""`jacrev` / `jacobian` (adjoint_compiler/jacobians.py): shapes `out.shape + arg.shape`, tuples over
`wrt`, and the Jacobian of an in-place right-hand side (`out=`), against finite differences and
analytic Jacobians."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import ArgumentError, Buffer, copyto, jacobian, jacrev


def fd_jacobian(f, args, wrt, eps=1e-6, out=None):
    def value(*a):
        if out is None:
            return np.asarray(f(*a), dtype=float)
        a = [x.copy() if isinstance(x, np.ndarray) else x for x in a]
        f(*a)
        return np.asarray(a[out], dtype=float)
    x = np.asarray(args[wrt], dtype=float)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.shape)
        e.reshape(-1)[k] = eps
        plus, minus = list(args), list(args)
        plus[wrt], minus[wrt] = x + e, x - e
        cols.append((value(*plus) - value(*minus)) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(value(*args).shape + x.shape)


def layer(x, W): return np.tanh(W @ x) * x[0]
def scalar_out(x): return np.sum(np.sin(x) * x)
def matrix_out(x): return np.outer(x, x) ** 2
def loop_out(x):
    h = x
    for _ in range(3):
        h = np.sin(h) + 0.5 * h[::-1]
    return h


R = np.random.default_rng(2)
X3 = np.array([0.3, -0.5, 0.9])
W23 = R.normal(size=(2, 3))


@pytest.mark.parametrize("f,args,wrt", [(layer, (X3, W23), 0), (layer, (X3, W23), 1), (scalar_out, (X3,), 0),
                                        (matrix_out, (X3,), 0), (loop_out, (X3,), 0)])
def test_jacrev_matches_finite_differences(f, args, wrt):
    J = jacrev(f, wrt)(*args)
    expected = fd_jacobian(f, args, wrt)
    assert np.shape(J) == expected.shape
    np.testing.assert_allclose(J, expected, rtol=1e-6, atol=1e-8)


def test_jacrev_tuple_wrt_and_scalar_argument():
    def f(a, x): return np.sin(a * x)
    Ja, Jx = jacrev(f, wrt=(0, 1))(0.7, X3)
    np.testing.assert_allclose(Ja, X3 * np.cos(0.7 * X3))
    np.testing.assert_allclose(Jx, np.diag(0.7 * np.cos(0.7 * X3)), atol=1e-15)
    assert jacobian is jacrev


def lotka_volterra(du, u, p, t):
    du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
    du[1] = p[2] * u[0] * u[1] - p[3] * u[1]


def robertson_buffer(du, u, p, t):
    b = Buffer.zeros(3)
    b[0] = -p[0] * u[0] + p[2] * u[1] * u[2]
    b[2] = p[1] * u[1] ** 2
    b[1] = -b[0] - b[2]
    copyto(du, b.copy())


def test_in_place_right_hand_side():
    p = np.array([1.5, 1.0, 1.0, 3.0])
    u = np.array([1.0, 1.2])
    du = np.full(2, 7.0)
    J = jacobian(lotka_volterra, wrt=1, out=0)(du, u, p, 0.0)
    np.testing.assert_allclose(J, [[p[0] - p[1] * u[1], -p[1] * u[0]], [p[2] * u[1], p[2] * u[0] - p[3]]])
    np.testing.assert_array_equal(du, 7.0)  # the caller's array is left alone
    Jp = jacobian(lotka_volterra, wrt=2, out=0)(du, u, p, 0.0)
    np.testing.assert_allclose(Jp, fd_jacobian(lotka_volterra, (du, u, p, 0.0), 2, out=0), rtol=1e-6)


def test_in_place_through_buffer_and_copyto():
    p = np.array([0.04, 3e1, 1e1])
    u = np.array([0.7, 0.2, 0.3])
    J = jacobian(robertson_buffer, wrt=1, out=0)(np.zeros(3), u, p, 0.0)
    np.testing.assert_allclose(J, fd_jacobian(robertson_buffer, (np.zeros(3), u, p, 0.0), 1, out=0),
                               rtol=1e-6, atol=1e-8)


def test_out_of_range_and_tuple_results_are_located_errors():
    with pytest.raises(ArgumentError, match="out=5"):
        jacobian(lotka_volterra, wrt=1, out=5)

    def pair(x): return x, x * 2
    with pytest.raises(ArgumentError, match="one array"):
        jacrev(pair)(X3)


def rhs_with_default(du, u, p=np.array([1.0, 2.0, 3.0])):
    du += p * u


def rhs_scaled(du, u, scale):
    du += scale * u


def rhs_named_like_its_parameter(rhs_named_like_its_parameter, u):
    rhs_named_like_its_parameter += u


def rhs_keyword_only(du, u, *, c=2.0):
    du += c * u


rhs_lambda = lambda du, u: rhs_with_default(du, u)  # noqa: E731


@pytest.mark.parametrize("entry", ["jacfwd", "jacobian"])
def test_out_takes_any_in_place_function(entry):
    """`out=k` differentiates a function calling `func` and returning its argument k: a lambda, a
    partial, defaults and keyword-only parameters of `func`, a parameter named like it, a
    negative `out` (it crashed or refused them: the wrapper was written from names alone)."""
    import functools

    from adjoint_compiler import jacfwd, jacobian
    take = {"jacfwd": jacfwd, "jacobian": jacobian}[entry]
    du, u = np.zeros(3), np.array([0.5, 1.2, -0.4])
    cases = [(rhs_with_default, 0, [1.0, 2.0, 3.0]), (rhs_lambda, 0, [1.0, 2.0, 3.0]),
             (functools.partial(rhs_scaled, scale=2.0), 0, [2.0] * 3), (rhs_named_like_its_parameter, 0, [1.0] * 3),
             (rhs_keyword_only, 0, [2.0] * 3), (rhs_with_default, -3, [1.0, 2.0, 3.0]), (rhs_with_default, -2, [1.0] * 3)]
    for func, out, diagonal in cases:
        np.testing.assert_allclose(take(func, wrt=1, out=out)(du, u), np.diag(diagonal), err_msg=repr(func))
    with pytest.raises(ArgumentError, match="out=2 is out of range"):
        take(rhs_named_like_its_parameter, wrt=1, out=2)(du, u)
    # keyword arguments at the call (jacobian raised TypeError)
    np.testing.assert_allclose(take(rhs_keyword_only, wrt=1, out=0)(du, u, c=0.5), np.diag([0.5] * 3))
    np.testing.assert_allclose(take(rhs_scaled, wrt=1, out=0)(du, u, scale=3.0), np.diag([3.0] * 3))

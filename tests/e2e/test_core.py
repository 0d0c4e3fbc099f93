"""End-to-end tests of the core language subset.

Every gradient is checked against central finite differences (`check_grads`, or the independent
`fd_grad` below) or against a gradient derived by hand -- never against the compiler itself.
Every case also checks the contract on gradient values: inputs are unchanged afterwards, gradients
never alias inputs or each other, and each gradient has the type and structure of its argument.
"""
from __future__ import annotations

import inspect
import numbers

import numpy as np
import pytest

from adjoint_compiler import (AdjointCompilerError, differentiable, grad, value_and_grad, vjp)
from adjoint_compiler.testing import check_grads

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def snapshot(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (tuple, list)):
        return type(v)(snapshot(x) for x in v)
    if isinstance(v, dict):
        return {k: snapshot(x) for k, x in v.items()}
    return v


def assert_unchanged(before, after, what="input"):
    assert type(before) is type(after), what
    if isinstance(before, np.ndarray):
        assert before.dtype == after.dtype and before.shape == after.shape, what
        assert np.array_equal(before, after, equal_nan=True), f"{what} was modified"
    elif isinstance(before, (tuple, list)):
        assert len(before) == len(after), what
        for i, (b, a) in enumerate(zip(before, after)):
            assert_unchanged(b, a, f"{what}[{i}]")
    elif isinstance(before, dict):
        for k in before:
            assert_unchanged(before[k], after[k], f"{what}[{k!r}]")
    else:
        assert before == after or (before != before and after != after), f"{what} was modified"


def arrays_in(v):
    if isinstance(v, np.ndarray):
        return [v]
    if isinstance(v, (tuple, list)):
        return [a for x in v for a in arrays_in(x)]
    if isinstance(v, dict):
        return [a for x in v.values() for a in arrays_in(x)]
    return []


def assert_structure(g, x, what="gradient"):
    """A float for a Python/NumPy scalar, a float array of the same shape for an array, the same
    container type and length for a tuple/list. Never None."""
    assert g is not None, f"{what} is None"
    if isinstance(x, (tuple, list)):
        assert type(g) is type(x), f"{what}: expected {type(x).__name__}, got {type(g).__name__}"
        assert len(g) == len(x)
        for i, (gi, xi) in enumerate(zip(g, x)):
            assert_structure(gi, xi, f"{what}[{i}]")
    elif isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray), f"{what}: expected an ndarray, got {type(g).__name__}"
        assert g.shape == x.shape, f"{what}: shape {g.shape} != {x.shape}"
        assert g.dtype.kind == "f", f"{what}: dtype {g.dtype} is not float"
        assert g.flags.writeable, f"{what} is read-only"
    else:
        assert isinstance(g, numbers.Real) and not isinstance(g, (bool, np.bool_)), \
            f"{what}: expected a float, got {type(g).__name__}"
        assert isinstance(g, float) or (isinstance(g, np.ndarray) and g.ndim == 0) or \
            isinstance(g, np.floating), f"{what}: expected a float, got {type(g).__name__}"


def assert_no_alias(grads, inputs):
    g_arrays = arrays_in(list(grads))
    in_arrays = arrays_in(list(inputs))
    for i, g in enumerate(g_arrays):
        for a in in_arrays:
            assert not np.may_share_memory(g, a), "a gradient aliases an input"
        for h in g_arrays[i + 1:]:
            assert not np.may_share_memory(g, h), "two gradients alias each other"


def check(f, *args, wrt=0, **kwargs):
    """check_grads plus the value contract; returns the gradient(s) as `grad(f, wrt)` does."""
    before_args, before_kwargs = snapshot(args), snapshot(kwargs)
    wrts = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    check_grads(f, *args, wrt=wrts, **kwargs)
    assert_unchanged(before_args, args)
    assert_unchanged(before_kwargs, kwargs)

    g = grad(f, wrt)(*args, **kwargs)
    assert_unchanged(before_args, args)
    assert_unchanged(before_kwargs, kwargs)
    gs = (g,) if isinstance(wrt, int) else g
    assert isinstance(gs, tuple) and len(gs) == len(wrts)
    bound = inspect.signature(f).bind(*args, **kwargs)
    bound.apply_defaults()
    values = list(bound.arguments.values())
    for gi, i in zip(gs, wrts):
        assert_structure(gi, values[i], f"gradient of argument {i}")
    assert_no_alias(gs, values)

    value, g2 = value_and_grad(f, wrt)(*args, **kwargs)
    expected = f(*snapshot(args), **snapshot(kwargs))
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=0)
    assert_unchanged(before_args, args)
    g2s = (g2,) if isinstance(wrt, int) else g2
    for a, b in zip(arrays_in(list(gs)), arrays_in(list(g2s))):
        assert not np.may_share_memory(a, b), "two calls returned the same gradient array"
    return g


def fd_grad(h, x, eps=1e-6):
    """Full central-difference gradient of scalar h at x (float or array)."""
    if isinstance(x, np.ndarray):
        x = x.astype(float)
        out = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            out[idx] = (h(xp) - h(xm)) / (2 * eps)
        return out
    return (h(x + eps) - h(x - eps)) / (2 * eps)


# ---------------------------------------------------------------------------------------------
# functions under test
# ---------------------------------------------------------------------------------------------

def straight(x, w):
    y = np.sin(x * w) + 0.5
    z = np.exp(-y) * np.tanh(x)
    return np.sum(z * z) / 3.0


def scalar_ops(a, b):
    c = a ** 2 * b - a / b
    d = c % 1.7 + (-a) * (+b)
    return d ** 3 - 2.0 * c


def power_ops(x, p):
    return np.sum(x ** p + 2.0 ** x - x ** 2.5)


def matvec(A, x):
    return np.sum(np.tanh(A @ x) ** 2)


def matmat(A, B):
    return (A @ B).sum()


def method_sum(x):
    return (x * x).sum() + np.sum(np.exp(x), axis=0).sum()


def reduce_axis(x):
    return np.sum(np.sum(np.sin(x), axis=1) ** 2)


def reads(x, A):
    return x[0] * x[2] + np.sum(x[1:3]) * x[-1] + np.sum(A[1, :] * A[:, 0]) + A[0][1] * A[2, 2]


def strided_reads(x):
    return np.sum(x[::2] * x[1::2]) + np.sum(x[..., 1:] - x[..., :-1])


def piecewise(x):
    if x > 1.0:
        y = x ** 2
    elif x > 0.0:
        y = np.sin(x)
    else:
        y = -3.0 * x
    return y * x


def array_branch(x, w):
    s = np.sum(x * w)
    if s > 0:
        z = np.tanh(x) * w
    else:
        z = np.exp(x) - w
    return np.sum(z * z)


def one_sided_branch(x, y):
    z = x * y
    if x > y:
        z = z * x
    return z + y


def nested_branch(x, y):
    if x > 0:
        if y > 0:
            r = x * y
        else:
            r = x - y ** 2
    else:
        if y > x:
            r = np.sin(x + y)
        else:
            r = np.exp(x) * y
    return r * 2.0


def nested_if_no_else(x, y):
    u = x * 2.0
    if y > 0:
        if x > 0:
            u = u * y
    return u


def swap_in_branch(x, y):
    if x > 0:
        x, y = y, x
    return x * y ** 2


def constant_branch_value(x):
    c = 1.0 if x > 0 else 2.0
    y = x if x > 0 else 0.0
    return c * x + y * 3.0


def ifexp(x, y):
    z = x * y if x > y else x ** 3 - y
    return z * 2.0


def nested_ifexp(x):
    z = x * 2.0 if x > 1.0 else (np.sin(x) if x > 0.0 else x ** 2)
    return z + x


def array_ifexp(x):
    return np.sum(x * x) if np.sum(x) > 0 else np.sum(np.exp(x))


def and_cond(x, y):
    if x > 0 and y > 0:
        return x * y
    return x + y


def or_cond(x, y):
    if x > 1 or y > 1:
        return x ** 2 + y
    return x * y * 3.0


def and_value(x, y):
    return (x and y) * 2.0


def or_value(x, y):
    return (x or y) * 2.0


def three_and(x, y, z):
    return (x and y and z) * 3.0


def chain(x, y):
    if 0.0 < x < y <= 4.0:
        return x * y
    return x - y


def chain_value(x):
    c = 0.0 < x < 1.0
    return x * 2.0 if c else x * 3.0


def early(x):
    if x > 0:
        return x ** 2
    y = np.sin(x)
    return y * 3.0


def nested_early(x, y):
    if x > 0:
        if y > 0:
            return x * y
        z = x - y
    else:
        z = x + y
        if z > 1.0:
            return z ** 2
    return z * 3.0


def early_arrays(x, w):
    if np.sum(x) > 0:
        y = x * w
        if np.sum(y) > 1.0:
            return np.sum(y ** 2)
        return np.sum(np.sin(y))
    return np.sum(x * 0.5) + np.sum(w)


def swap(a, b):
    a, b = b, a
    return a * 2.0 + b ** 2


def swap_arrays(a, b):
    a, b = b * 1.0, a
    a, b = b, a
    return np.sum(a * np.sin(b))


def nested_unpack(x, y, z):
    t = (x, (y, z))
    a, (b, c) = t
    return np.sum(a * b + c ** 2)


def pack_unpack(x, y):
    p = x, y
    q = p
    u, v = q
    return u * v + p[0]


def multi_target(x):
    a = b = x * 2.0
    return a * b


def rotate3(x, y, z):
    x, y, z = y, z, x
    return x * 1.0 + y * 10.0 + z * 100.0 + x * y * z


def tuple_param(p):
    a, b = p
    return a * b + p[0]


def nested_tuple_param(p, s):
    a, (b, c) = p
    return np.sum(a * b) + c * s


def scalar_times_array(s, x):
    return np.sum(s * x + x * s + x / s)


def array_plus_scalar(x, s):
    return np.sum((x + s) ** 2 + (s - x))


def bcast_col_row(c, r):
    return np.sum(np.sin(c + r) * (c * r))


def bcast_vec_mat(v, M):
    return np.sum((v + M) ** 2 - v * M)


def int_literals(x):
    y = x * 2 + 1
    z = 3 - y / 4
    return np.sum(z ** 2)


def reassign(x):
    x = x * 2
    x = np.sin(x)
    return np.sum(x)


def reassign_branch(x, y):
    if y > 0:
        x = x * y
    else:
        x = x - y
    x = x ** 2
    return x


def unused_args(x, unused_arr, unused_float):
    return np.sum(x ** 2)


def only_in_condition(x, t):
    if t > 0:
        return x * 2.0
    return x * 3.0


def constant_result(x):
    return 3.0


def returns_param(x, y):
    return x


def plus_same_shape(x, y):
    return np.sum(x + y)


def identity_sum(x):
    return np.sum(x)


def copy_then_use(x, y):
    z = x
    w = y
    return np.sum(z) + np.sum(w) + np.sum(z)


def with_defaults(x, scale=2.0, shift=0.5):
    return np.sum((x * scale + shift) ** 2)


def with_kwonly(x, *, scale=2.0):
    return np.sum(np.sin(x) * scale)


def vector_out(x, W):
    return np.tanh(W @ x)


def tuple_out(x, y):
    return x * y, np.sin(x) * 2.0


def scalar_out(x, y):
    return np.sum(x * y)


def nonscalar(x):
    return x * 2.0


# ---------------------------------------------------------------------------------------------
# straight-line code
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("wrt", [0, 1, (0, 1), (1, 0)])
def test_straight_line(wrt):
    x = RNG.standard_normal(5)
    w = RNG.standard_normal(5)
    check(straight, x, w, wrt=wrt)


@pytest.mark.parametrize("wrt", [0, 1, (0, 1)])
def test_scalar_arithmetic(wrt):
    check(scalar_ops, 1.3, 0.7, wrt=wrt)


def test_scalar_arithmetic_analytic():
    a, b = 1.3, 0.7
    c = a ** 2 * b - a / b
    d = c % 1.7 - a * b
    dc_da, dc_db = 2 * a * b - 1 / b, a ** 2 + a / b ** 2
    dd_da, dd_db = dc_da - b, dc_db - a
    ga, gb = grad(scalar_ops, (0, 1))(a, b)
    assert ga == pytest.approx(3 * d ** 2 * dd_da - 2.0 * dc_da, rel=1e-12)
    assert gb == pytest.approx(3 * d ** 2 * dd_db - 2.0 * dc_db, rel=1e-12)


def test_powers():
    x = RNG.uniform(0.5, 2.0, 4)
    p = RNG.uniform(0.5, 2.0, 4)
    check(power_ops, x, p, wrt=(0, 1))
    check(power_ops, x, 3.0, wrt=(0, 1))


def test_matmul():
    A = RNG.standard_normal((3, 4))
    x = RNG.standard_normal(4)
    check(matvec, A, x, wrt=(0, 1))
    B = RNG.standard_normal((4, 2))
    check(matmat, A, B, wrt=(0, 1))
    ga, gb = grad(matmat, (0, 1))(A, B)
    np.testing.assert_allclose(ga, np.ones((3, 2)) @ B.T)
    np.testing.assert_allclose(gb, A.T @ np.ones((3, 2)))


def test_method_sum_and_axis():
    x = RNG.standard_normal((3, 4))
    check(method_sum, x)
    check(reduce_axis, x)


def test_indexing_reads():
    x = RNG.standard_normal(5)
    A = RNG.standard_normal((3, 3))
    check(reads, x, A, wrt=(0, 1))
    check(strided_reads, RNG.standard_normal(6))


def test_indexing_reads_analytic():
    x = np.arange(1.0, 7.0)
    gx = grad(strided_reads)(x)
    # sum(x[::2] * x[1::2]) pairs (0,1), (2,3), (4,5); the telescoping sum is x[-1] - x[0]
    np.testing.assert_allclose(gx, [x[1] - 1, x[0], x[3], x[2], x[5], x[4] + 1])


# ---------------------------------------------------------------------------------------------
# branches
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("x, expected", [
    (2.0, 3 * 2.0 ** 2),                                  # if: x**3
    (0.5, np.sin(0.5) + 0.5 * np.cos(0.5)),               # elif: x*sin(x)
    (-1.5, -6.0 * -1.5),                                  # else: -3x**2
])
def test_if_elif_else_each_branch(x, expected):
    g = check(piecewise, x)
    assert g == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_array_branch(sign):
    x = np.abs(RNG.standard_normal(4)) * sign
    w = np.abs(RNG.standard_normal(4)) + 0.1
    check(array_branch, x, w, wrt=(0, 1))


@pytest.mark.parametrize("x, y", [(2.0, 1.0), (1.0, 2.0)])
def test_branch_without_else(x, y):
    check(one_sided_branch, x, y, wrt=(0, 1))


@pytest.mark.parametrize("x, y", [(1.2, 0.7), (1.2, -0.7), (-0.4, 0.7), (-0.4, -0.9)])
def test_nested_branches(x, y):
    check(nested_branch, x, y, wrt=(0, 1))


@pytest.mark.parametrize("x, y", [(1.0, 2.0), (-1.0, 2.0), (1.0, -2.0)])
def test_nested_if_without_else(x, y):
    check(nested_if_no_else, x, y, wrt=(0, 1))


@pytest.mark.parametrize("x, y", [(1.0, 2.0), (-1.0, 2.0)])
def test_swap_in_branch(x, y):
    check(swap_in_branch, x, y, wrt=(0, 1))


@pytest.mark.parametrize("x, expected", [(1.5, 4.0), (-1.5, 2.0)])
def test_constant_branch_values(x, expected):
    assert check(constant_branch_value, x) == expected


@pytest.mark.parametrize("x, y", [(2.0, 1.0), (0.5, 1.5)])
def test_conditional_expression(x, y):
    check(ifexp, x, y, wrt=(0, 1))


@pytest.mark.parametrize("x", [2.0, 0.5, -0.7])
def test_nested_conditional_expression(x):
    check(nested_ifexp, x)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_array_conditional_expression(sign):
    check(array_ifexp, sign * (np.abs(RNG.standard_normal(4)) + 0.1))


@pytest.mark.parametrize("x, y", [(1.5, 2.0), (-1.5, 2.0), (1.5, -2.0)])
def test_and_condition(x, y):
    check(and_cond, x, y, wrt=(0, 1))


@pytest.mark.parametrize("x, y", [(1.5, 0.2), (0.5, 2.0), (0.5, 0.2)])
def test_or_condition(x, y):
    check(or_cond, x, y, wrt=(0, 1))


def test_and_or_values():
    # `x and y` is y when x is truthy, else x; `x or y` is x when x is truthy, else y.
    check(and_value, 1.5, 2.5, wrt=(0, 1))
    check(or_value, 1.5, 2.5, wrt=(0, 1))
    # at x == 0 the finite differences straddle a jump: use the derivative of the branch taken
    assert grad(and_value, (0, 1))(0.0, 2.5) == (2.0, 0.0)
    assert grad(or_value, (0, 1))(0.0, 2.5) == (0.0, 2.0)
    assert grad(and_value, (0, 1))(1.5, 2.5) == (0.0, 2.0)
    assert grad(or_value, (0, 1))(1.5, 2.5) == (2.0, 0.0)
    check(three_and, 1.0, 2.0, 4.0, wrt=(0, 1, 2))
    assert grad(three_and, (0, 1, 2))(1.0, 0.0, 4.0) == (0.0, 3.0, 0.0)


@pytest.mark.parametrize("x, y", [(1.0, 2.0), (3.0, 2.0), (-1.0, 2.0), (1.0, 5.0)])
def test_comparison_chain(x, y):
    check(chain, x, y, wrt=(0, 1))


@pytest.mark.parametrize("x", [0.5, 1.5, -0.5])
def test_comparison_chain_value(x):
    g = check(chain_value, x)
    assert g == (2.0 if 0.0 < x < 1.0 else 3.0)


# ---------------------------------------------------------------------------------------------
# early return
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("x, expected", [(1.5, 3.0), (-0.5, 3.0 * np.cos(-0.5))])
def test_early_return(x, expected):
    assert check(early, x) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("x, y", [(1.0, 2.0), (1.0, -2.0), (-0.5, 2.0), (-0.5, 0.5)])
def test_nested_early_return(x, y):
    check(nested_early, x, y, wrt=(0, 1))


@pytest.mark.parametrize("sx, scale", [(1.0, 2.0), (1.0, 0.01), (-1.0, 1.0)])
def test_early_return_arrays(sx, scale):
    x = sx * (np.abs(RNG.standard_normal(4)) + 0.2)
    w = np.full(4, scale)
    check(early_arrays, x, w, wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# tuples
# ---------------------------------------------------------------------------------------------

def test_swap():
    g = check(swap, 1.5, -0.5, wrt=(0, 1))
    assert g == (pytest.approx(2 * 1.5), pytest.approx(2.0))


def test_swap_arrays():
    check(swap_arrays, RNG.standard_normal(3), RNG.standard_normal(3), wrt=(0, 1))


def test_nested_unpacking():
    check(nested_unpack, 1.5, -0.5, 2.0, wrt=(0, 1, 2))
    check(nested_unpack, RNG.standard_normal(3), 2.0, RNG.standard_normal(3), wrt=(0, 1, 2))


def test_pack_unpack_and_multi_target():
    check(pack_unpack, 1.5, -0.5, wrt=(0, 1))
    g = check(multi_target, 1.25)
    assert g == pytest.approx(8 * 1.25)


def test_rotation():
    check(rotate3, 1.5, -0.5, 2.0, wrt=(0, 1, 2))


def test_tuple_argument_gets_tuple_gradient():
    g = check(tuple_param, (1.5, 2.5))
    assert g == (pytest.approx(3.5), pytest.approx(1.5))
    gl = grad(tuple_param)([1.5, 2.5])
    assert isinstance(gl, list) and gl == [pytest.approx(3.5), pytest.approx(1.5)]


def test_nested_tuple_argument():
    p = (RNG.standard_normal(3), (RNG.standard_normal(3), 0.5))
    g = check(nested_tuple_param, p, 2.0, wrt=(0, 1))
    assert isinstance(g[0], tuple) and isinstance(g[0][1], tuple)
    np.testing.assert_allclose(g[0][0], p[1][0])
    np.testing.assert_allclose(g[0][1][0], p[0])
    assert g[0][1][1] == pytest.approx(2.0)
    assert g[1] == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------
# scalars, ints, arrays, broadcasting
# ---------------------------------------------------------------------------------------------

def test_scalar_times_array():
    s, x = 1.7, RNG.standard_normal(4)
    gs, gx = check(scalar_times_array, s, x, wrt=(0, 1))
    assert gs == pytest.approx(2 * np.sum(x) - np.sum(x) / s ** 2)
    np.testing.assert_allclose(gx, np.full(4, 2 * s + 1 / s))


def test_array_plus_scalar():
    check(array_plus_scalar, RNG.standard_normal((2, 3)), 0.3, wrt=(0, 1))
    check(array_plus_scalar, RNG.standard_normal((2, 3)), 2, wrt=(0, 1))


def test_broadcast_column_plus_row():
    c = RNG.standard_normal((3, 1))
    r = RNG.standard_normal((1, 4))
    check(bcast_col_row, c, r, wrt=(0, 1))


def test_broadcast_vector_plus_matrix():
    v = RNG.standard_normal(4)
    M = RNG.standard_normal((3, 4))
    gv, gm = check(bcast_vec_mat, v, M, wrt=(0, 1))
    np.testing.assert_allclose(gv, np.sum(2 * (v + M) - M, axis=0))
    np.testing.assert_allclose(gm, 2 * (v + M) - v)


def test_int_literals_and_python_scalars():
    check(int_literals, RNG.standard_normal(3))
    check(int_literals, 1.25)


def test_python_int_argument_gets_float():
    g = check(scalar_ops, 2, 3, wrt=(0, 1))
    assert all(isinstance(x, float) for x in g)
    g = grad(piecewise)(2)
    assert isinstance(g, float) and g == 12.0


def test_integer_array_gets_float_gradient():
    x = np.arange(1, 5)
    g = check(int_literals, x)
    assert g.dtype == np.float64
    g = check(scalar_times_array, 2, np.arange(4), wrt=(0, 1))
    assert isinstance(g[0], float) and g[1].dtype.kind == "f"


def test_float32_array_keeps_shape():
    x = RNG.standard_normal(3).astype(np.float32)
    g = grad(identity_sum)(x)
    assert g.shape == (3,) and g.dtype.kind == "f"
    np.testing.assert_allclose(g, 1.0)


# ---------------------------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------------------------

def test_reassign_parameter():
    x = RNG.standard_normal(4)
    g = check(reassign, x)
    np.testing.assert_allclose(g, 2 * np.cos(2 * x))


@pytest.mark.parametrize("y", [0.5, -0.5])
def test_reassign_parameter_in_branch(y):
    check(reassign_branch, 1.3, y, wrt=(0, 1))


def test_unused_arguments_get_zeros():
    x = RNG.standard_normal(3)
    unused = RNG.standard_normal((3, 2))
    g = check(unused_args, x, unused, 0.5, wrt=(0, 1, 2))
    assert isinstance(g[1], np.ndarray) and g[1].shape == (3, 2) and not g[1].any()
    assert isinstance(g[2], float) and g[2] == 0.0
    g1 = grad(unused_args, 1)(x, unused, 0.5)
    assert isinstance(g1, np.ndarray) and g1.shape == (3, 2) and not g1.any()
    g2 = grad(unused_args, 2)(x, unused, 0.5)
    assert isinstance(g2, float) and g2 == 0.0
    gi = grad(unused_args, 1)(x, np.arange(6).reshape(3, 2), 0.5)
    assert gi.dtype.kind == "f" and gi.shape == (3, 2) and not gi.any()
    gt = grad(unused_args, 1)(x, (1.0, np.ones(2)), 0.5)
    assert isinstance(gt, tuple) and gt[0] == 0.0 and np.array_equal(gt[1], np.zeros(2))


def test_argument_only_in_condition_gets_zero():
    for t in (1.0, -1.0):
        g = check(only_in_condition, 2.0, t, wrt=(0, 1))
        assert g[1] == 0.0 and isinstance(g[1], float)


def test_constant_result_gets_zeros():
    assert grad(constant_result)(1.5) == 0.0
    g = grad(returns_param, 1)(1.5, np.ones(3))
    assert isinstance(g, np.ndarray) and g.shape == (3,) and not g.any()


def test_returning_a_parameter():
    g = check(returns_param, 1.5, 2.0, wrt=(0, 1))
    assert g == (1.0, 0.0)


def test_no_aliasing_between_gradients():
    x = RNG.standard_normal(4)
    y = RNG.standard_normal(4)
    gx, gy = check(plus_same_shape, x, y, wrt=(0, 1))
    np.testing.assert_array_equal(gx, np.ones(4))
    np.testing.assert_array_equal(gy, np.ones(4))
    gx[0] = 100.0
    assert gy[0] == 1.0
    gx2, gy2 = check(copy_then_use, x, y, wrt=(0, 1))
    np.testing.assert_allclose(gx2, 2.0)
    np.testing.assert_allclose(gy2, 1.0)


def test_same_argument_twice_in_wrt():
    x = RNG.standard_normal(3)
    g1, g2 = grad(identity_sum, (0, 0))(x)
    np.testing.assert_array_equal(g1, np.ones(3))
    assert not np.may_share_memory(g1, g2)


def test_mutating_a_gradient_does_not_affect_later_calls():
    x = RNG.standard_normal(3)
    g = grad(identity_sum)(x)
    g[:] = 42.0
    np.testing.assert_array_equal(grad(identity_sum)(x), np.ones(3))
    np.testing.assert_array_equal(x, x.copy())


# ---------------------------------------------------------------------------------------------
# wrt handling
# ---------------------------------------------------------------------------------------------

def test_wrt_int_and_tuple():
    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    g0 = grad(straight, 0)(x, w)
    g1 = grad(straight, 1)(x, w)
    assert isinstance(g0, np.ndarray)
    both = grad(straight, (0, 1))(x, w)
    assert isinstance(both, tuple) and len(both) == 2
    np.testing.assert_allclose(both[0], g0)
    np.testing.assert_allclose(both[1], g1)
    rev = grad(straight, (1, 0))(x, w)
    np.testing.assert_allclose(rev[0], g1)
    np.testing.assert_allclose(rev[1], g0)
    single = grad(straight, (1,))(x, w)
    assert isinstance(single, tuple) and len(single) == 1
    np.testing.assert_allclose(single[0], g1)


def test_negative_wrt_counts_from_the_end():
    # Decision (API.md is silent): an in-range negative wrt indexes like a Python sequence.
    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    np.testing.assert_allclose(grad(straight, -1)(x, w), grad(straight, 1)(x, w))
    np.testing.assert_allclose(grad(straight, (-2,))(x, w)[0], grad(straight, 0)(x, w))


@pytest.mark.parametrize("wrt", [2, 5, -3, (0, 2)])
def test_out_of_range_wrt(wrt):
    g = grad(straight, wrt)
    with pytest.raises(IndexError, match="out of range"):
        g(np.ones(3), np.ones(3))


@pytest.mark.parametrize("wrt", [True, (), "0", 1.0, (0, 1.0), None])
def test_bad_wrt_type(wrt):
    with pytest.raises(TypeError):
        grad(straight, wrt)


def test_non_numeric_argument_rejected():
    with pytest.raises(TypeError):
        grad(scalar_ops)("a", 1.0)
    with pytest.raises(TypeError):
        grad(identity_sum)(np.array(["a", "b"]))


# ---------------------------------------------------------------------------------------------
# value_and_grad, vjp
# ---------------------------------------------------------------------------------------------

def test_value_and_grad():
    x, w = RNG.standard_normal(4), RNG.standard_normal(4)
    value, g = value_and_grad(straight)(x, w)
    assert value == pytest.approx(straight(x, w), rel=1e-14)
    np.testing.assert_allclose(g, fd_grad(lambda t: straight(t, w), x), rtol=1e-6, atol=1e-8)
    value, (gx, gw) = value_and_grad(straight, (0, 1))(x, w)
    assert value == pytest.approx(straight(x, w), rel=1e-14)
    np.testing.assert_allclose(gw, fd_grad(lambda t: straight(x, t), w), rtol=1e-6, atol=1e-8)
    value, g = value_and_grad(piecewise)(0.5)
    assert value == pytest.approx(piecewise(0.5)) and g == pytest.approx(np.sin(0.5) + 0.5 * np.cos(0.5))


def test_vjp_array_output():
    x = RNG.standard_normal(3)
    W = RNG.standard_normal((4, 3))
    before = snapshot((x, W))
    out, pullback = vjp(vector_out, x, W)
    np.testing.assert_allclose(out, vector_out(x, W))
    out_bar = RNG.standard_normal(4)
    bar_before = out_bar.copy()
    gx, gW = pullback(out_bar)
    np.testing.assert_allclose(gx, fd_grad(lambda t: np.sum(out_bar * vector_out(t, W)), x),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gW, fd_grad(lambda t: np.sum(out_bar * vector_out(x, t)), W),
                               rtol=1e-6, atol=1e-8)
    assert_unchanged(before, (x, W))
    assert_unchanged(bar_before, out_bar)
    assert_no_alias((gx, gW), (x, W, out_bar, out))
    # the pullback can be called again with another cotangent
    gx2, _ = pullback(2.0 * out_bar)
    np.testing.assert_allclose(gx2, 2.0 * gx)
    assert not np.may_share_memory(gx, gx2)


def test_vjp_tuple_output():
    x = RNG.standard_normal(3)
    y = RNG.standard_normal(3)
    out, pullback = vjp(tuple_out, x, y)
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_allclose(out[0], x * y)
    np.testing.assert_allclose(out[1], np.sin(x) * 2.0)
    a_bar, b_bar = RNG.standard_normal(3), RNG.standard_normal(3)

    def inner(xx, yy):
        p, q = tuple_out(xx, yy)
        return np.sum(a_bar * p) + np.sum(b_bar * q)
    gx, gy = pullback((a_bar, b_bar))
    np.testing.assert_allclose(gx, fd_grad(lambda t: inner(t, y), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, fd_grad(lambda t: inner(x, t), y), rtol=1e-6, atol=1e-8)
    assert_no_alias((gx, gy), (x, y, a_bar, b_bar) + tuple(out))


def test_vjp_scalar_output_and_scalar_args():
    x = RNG.standard_normal(3)
    out, pullback = vjp(scalar_out, x, 2.0)
    assert out == pytest.approx(np.sum(2.0 * x))
    gx, gy = pullback(1.5)
    np.testing.assert_allclose(gx, np.full(3, 3.0))
    assert isinstance(gy, float) and gy == pytest.approx(1.5 * np.sum(x))


def vjp_branch(x, y):
    if np.sum(x) > 0:
        return x * y
    return np.sin(x) + y


def vjp_identity(x):
    return x


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_vjp_with_branch(sign):
    x = sign * (np.abs(RNG.standard_normal(3)) + 0.1)
    y = 0.7
    out, pullback = vjp(vjp_branch, x, y)
    np.testing.assert_allclose(out, vjp_branch(x, y))
    out_bar = RNG.standard_normal(3)
    gx, gy = pullback(out_bar)
    np.testing.assert_allclose(gx, fd_grad(lambda t: np.sum(out_bar * vjp_branch(t, y)), x),
                               rtol=1e-6, atol=1e-8)
    assert isinstance(gy, float)
    assert gy == pytest.approx(fd_grad(lambda t: np.sum(out_bar * vjp_branch(x, t)), y), rel=1e-6)


def test_vjp_identity_does_not_alias_cotangent():
    x = RNG.standard_normal(3)
    out, pullback = vjp(vjp_identity, x)
    out_bar = RNG.standard_normal(3)
    (gx,) = pullback(out_bar)
    np.testing.assert_array_equal(gx, out_bar)
    assert not np.may_share_memory(gx, out_bar) and not np.may_share_memory(gx, x)


def test_vjp_unused_argument():
    out, pullback = vjp(unused_args, np.ones(2), np.ones((2, 2)), 3.0)
    gx, gu, gf = pullback(1.0)
    np.testing.assert_allclose(gx, 2.0)
    assert isinstance(gu, np.ndarray) and gu.shape == (2, 2) and not gu.any()
    assert gf == 0.0


# ---------------------------------------------------------------------------------------------
# keywords and defaults
# ---------------------------------------------------------------------------------------------

def test_default_parameter_values():
    x = RNG.standard_normal(3)
    g = check(with_defaults, x)
    np.testing.assert_allclose(g, 2 * (2.0 * x + 0.5) * 2.0)


def test_keyword_arguments():
    x = RNG.standard_normal(3)
    g = check(with_defaults, x, scale=3.0)
    np.testing.assert_allclose(g, 2 * (3.0 * x + 0.5) * 3.0)
    check(with_defaults, x, shift=-1.0, scale=0.5, wrt=(0, 1, 2))
    gx, gs = grad(with_defaults, (0, 1))(x=x, scale=3.0)
    np.testing.assert_allclose(gs, np.sum(2 * (3.0 * x + 0.5) * x))


def test_default_parameter_is_differentiable():
    x = RNG.standard_normal(3)
    gs = grad(with_defaults, 1)(x)
    assert gs == pytest.approx(np.sum(2 * (2.0 * x + 0.5) * x))
    gshift = grad(with_defaults, 2)(x)
    assert gshift == pytest.approx(np.sum(2 * (2.0 * x + 0.5)))


def test_keyword_only_parameter():
    x = RNG.standard_normal(3)
    gx = grad(with_kwonly)(x, scale=0.5)
    np.testing.assert_allclose(gx, fd_grad(lambda t: with_kwonly(t, scale=0.5), x), rtol=1e-6, atol=1e-8)
    gs = grad(with_kwonly, 1)(x, scale=0.5)
    assert gs == pytest.approx(fd_grad(lambda s: with_kwonly(x, scale=s), 0.5), rel=1e-6)
    assert grad(with_kwonly, 1)(x) == pytest.approx(np.sum(np.sin(x)))


def test_check_grads_keyword_only_parameter():
    # check_grads itself must call `f` with keyword-only parameters by keyword
    x = RNG.standard_normal(3)
    check(with_kwonly, x)
    check(with_kwonly, x, scale=0.5, wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# @differentiable
# ---------------------------------------------------------------------------------------------

@differentiable
def deco_plain(x, y):
    return np.sum(np.sin(x) * y)


@differentiable(wrt=(0, 1))
def deco_pair(x, y):
    return np.sum(np.sin(x) * y)


def test_differentiable_calls_unchanged():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    assert deco_plain(x, y) == np.sum(np.sin(x) * y)
    assert deco_pair(x, y) == np.sum(np.sin(x) * y)
    assert deco_plain.__name__ == "deco_plain"


def test_differentiable_grad():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    g = deco_plain.grad()(x, y)
    np.testing.assert_allclose(g, np.cos(x) * y)
    np.testing.assert_allclose(deco_plain.grad(1)(x, y), np.sin(x))
    check(deco_plain, x, y, wrt=(0, 1))
    gx, gy = deco_pair.grad()(x, y)
    np.testing.assert_allclose(gx, np.cos(x) * y)
    np.testing.assert_allclose(gy, np.sin(x))
    np.testing.assert_allclose(deco_pair.grad(wrt=1)(x, y), np.sin(x))


def test_differentiable_value_and_grad():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    v, g = deco_plain.value_and_grad()(x, y)
    assert v == pytest.approx(np.sum(np.sin(x) * y))
    np.testing.assert_allclose(g, np.cos(x) * y)
    v, (gx, gy) = deco_pair.value_and_grad()(x, y)
    assert v == pytest.approx(np.sum(np.sin(x) * y))
    np.testing.assert_allclose(gy, np.sin(x))


def test_differentiable_adjoint_source():
    import ast
    src = deco_plain.adjoint_source()
    ast.parse(src)
    assert "def deco_plain_grad(" in src
    src2 = deco_pair.adjoint_source()
    ast.parse(src2)
    assert "x_bar" in src2 and "y_bar" in src2


def test_differentiable_works_with_plain_grad():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    np.testing.assert_allclose(grad(deco_plain)(x, y), np.cos(x) * y)


# ---------------------------------------------------------------------------------------------
# non-scalar outputs
# ---------------------------------------------------------------------------------------------

def test_grad_of_nonscalar_output_raises_type_error():
    with pytest.raises(TypeError, match="scalar") as info:
        grad(nonscalar)(np.ones(3))
    assert "vjp" in str(info.value)
    assert "(3,)" in str(info.value)
    with pytest.raises(TypeError, match="scalar"):
        grad(tuple_out)(1.0, 2.0)


def test_errors_derive_from_base():
    # SourceError (grad of something with no source) is both an AdjointCompilerError and TypeError
    with pytest.raises(AdjointCompilerError):
        grad(np.sin)(1.0)


# -- `del name` -----------------------------------------------------------------------------------

def del_temporary(x):
    t = np.sin(x)
    u = t * x
    del t
    return np.sum(u)


def del_in_loop(x):
    s = 0.0
    for i in range(3):
        t = x * i
        s = s + np.sum(t ** 2)
        del t
    return s


def del_then_read(x):
    t = x * 2.0
    del t
    return np.sum(t)


def del_item(x):
    y = x.copy()
    del y[0]
    return np.sum(y)


def test_del_of_a_local():
    x = np.array([0.3, 1.2])
    check_grads(del_temporary, x)
    check_grads(del_in_loop, x)


def test_del_then_read_is_a_located_error():
    from adjoint_compiler.errors import CompileError
    with pytest.raises(CompileError, match="`t`") as info:
        grad(del_then_read)(np.array([0.3, 1.2]))
    assert "return np.sum(t)" in str(info.value)


def test_del_of_an_item_is_refused():
    from adjoint_compiler.errors import UnsupportedSyntaxError
    with pytest.raises(UnsupportedSyntaxError, match="only `del name`"):
        grad(del_item)(np.array([0.3, 1.2]))

"""Entry-point checks of issue 12: size-1 results, pullback cotangents, higher order, complex
arguments. Each gradient is checked against central finite differences; each refusal is an
AdjointCompilerError whose message says what is wrong and where.
"""
from __future__ import annotations

import ast

import numpy as np
import pytest

from adjoint_compiler import (
    Buffer,
    SourceError,
    adjoint_source,
    differentiable,
    grad,
    hessian,
    value_and_grad,
    vjp,
)
from adjoint_compiler.errors import AdjointCompilerError, ArgumentError, MutationError
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


def calls_hessian_inside(x):
    return np.sum(hessian(square)(x))


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
    # grad(grad(f)) differentiates the generated gradient (tests/e2e/test_nesting.py); of a vector
    # gradient, grad asks for a scalar like for any function
    for make in (grad, value_and_grad):
        with pytest.raises(ArgumentError, match="returns a scalar"):
            make(grad(square))(V)
    with pytest.raises(SourceError, match="higher-order derivatives .* not supported yet"):
        vjp(vjp(square, V)[1], 1.0)
    # a gradient called inside is inlined (tests/e2e/test_nesting.py): d/dx sum(2 x) = 2
    np.testing.assert_allclose(grad(calls_a_gradient)(V), 2.0 * np.ones(3), rtol=1e-12)
    np.testing.assert_allclose(grad(calls_grad_inside)(V), 2.0 * np.ones(3), rtol=1e-12)
    with pytest.raises(AdjointCompilerError, match="entry point: calling it inside a differentiated function"):
        grad(calls_hessian_inside)(V)


# -- complex arguments -------------------------------------------------------------------------
def mixes_real(x, z):
    return np.real(np.sum(x * z))


@pytest.mark.parametrize("args", [
    (V + 1j, np.ones(3)),
    (V, np.ones(3) * (1 + 2j)),
    (V, 2j),
    (V, np.complex64(1.0)),
])
def test_complex_arguments_need_a_real_result(args):
    from adjoint_compiler.errors import ComplexError
    with pytest.raises(ComplexError, match=r"result may be complex"):
        grad(mixes)(*args)
    with pytest.raises(ComplexError, match=r"result may be complex"):
        vjp(mixes, *args)
    g = grad(mixes_real, wrt=(0, 1))(*args)  # with a real loss: gradients of the arguments' dtypes
    for a, b in zip(g, args):
        assert np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)


def test_complex_values_inside_containers_are_refused():
    args = (V, (np.ones(3), np.ones(3) * 1j))
    with pytest.raises(ArgumentError, match=r"mixes: argument `z` is complex inside a container"):
        grad(mixes)(*args)
    with pytest.raises(ArgumentError, match=r"inside a container"):
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


# -- vjp of an in-place function: the written arguments are its outputs -------------------------
def rhs(du, u, p, t):
    du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
    du[1] = -p[2] * u[1] + p[3] * u[0] * u[1] * np.cos(t)


def rhs_early(du, u):
    du[0] = u[0] ** 2
    if u[1] > 0:
        return
    du[1] = u[0] * u[1]


def rhs_out_keyword(du, u, p):
    np.multiply(u, p, out=du)
    du += u  # an in-place update of the argument's array


def rhs_copyto(du, u):
    np.copyto(du, np.exp(u))
    du[...] *= 2.0


def rhs_two(du, dv, u):
    du[:] = u * 2.0
    dv[1:] = du[:1] + u[1]


def _square_into(out, v):
    out[:] = v ** 2


def rhs_helper_loop(du, u):
    _square_into(du, u)
    for i in range(2):
        du[i] += u[i]


def rhs_alias_then_rebound(du, u):
    d = du
    for i in range(2):
        d[i] = d[i] * u[i]
    du = np.zeros(2)  # the caller's array is `d` from here on
    du[0] = 5.0


def rhs_augmented(du, u):
    du += u
    du *= u


def rhs_zero_d(t, x):
    t += np.sum(x)


def rhs_list(xs, x):
    xs[0] = xs[0] * x
    xs[1] = np.cos(x) + xs[1]


def _copy(args):
    return [[a.copy() for a in v] if isinstance(v, list) else v.copy() if isinstance(v, np.ndarray) else v
            for v in args]


def _inner(cts, outs) -> float:
    if isinstance(outs, list):
        return sum(_inner(c, o) for c, o in zip(cts, outs))
    return float(np.sum(np.asarray(cts) * np.asarray(outs)))


def _after(f, args, written):
    """The written arguments as `f` leaves them (run on copies)."""
    a = _copy(args)
    assert f(*a) is None
    return [a[i] for i in written]


def _fd_inner(f, args, written, cts, eps=1e-6):
    """Central differences of <cts, written arguments after f(*args)> w.r.t. each argument."""
    def phi(a):
        return sum(_inner(c, o) for c, o in zip(cts, _after(f, a, written)))

    def along(i, k, j):  # d phi / d args[i][k][j] (k None: not a list; j None: a number)
        up, down = _copy(args), _copy(args)
        for a, step in ((up, eps), (down, -eps)):
            if k is None and j is None:
                a[i] = a[i] + step
            else:
                (a[i] if k is None else a[i][k])[j] += step
        return (phi(up) - phi(down)) / (2 * eps)

    grads = []
    for i, x in enumerate(args):
        if isinstance(x, list):
            grads.append([np.array([along(i, k, j) for j in np.ndindex(v.shape)]).reshape(v.shape)
                          for k, v in enumerate(x)])
        elif isinstance(x, np.ndarray):
            grads.append(np.array([along(i, None, j) for j in np.ndindex(x.shape)]).reshape(x.shape))
        else:
            grads.append(along(i, None, None))
    return grads


U = np.array([0.6, 0.5])
IN_PLACE = [
    (rhs, [np.array([3.0, 4.0]), U, np.array([1.1, 0.4, 0.4, 0.1]), 0.3], [0]),
    (rhs_early, [np.array([3.0, 4.0]), U], [0]),
    (rhs_early, [np.array([3.0, 4.0]), -U], [0]),
    (rhs_out_keyword, [np.zeros(2), U, np.array([2.0, 3.0])], [0]),
    (rhs_copyto, [np.zeros(2), U], [0]),
    (rhs_two, [np.ones(2), np.ones(2), U], [0, 1]),
    (rhs_helper_loop, [np.ones(2), U], [0]),
    (rhs_alias_then_rebound, [np.ones(2) * 2, U], [0]),
    (rhs_augmented, [np.ones(2) * 2, U], [0]),
    (rhs_zero_d, [np.array(1.5), U], [0]),
    (rhs_list, [[np.array([1.0, 2.0]), np.array([3.0, 4.0])], 0.3], [0]),
]


@pytest.mark.parametrize("f, args, written", IN_PLACE, ids=lambda v: getattr(v, "__name__", ""))
def test_vjp_of_an_in_place_function_takes_the_written_arguments_as_outputs(f, args, written):
    before = _copy(args)
    out, pullback = vjp(f, *args)
    expected = _after(f, args, written)
    outs = [out] if len(written) == 1 else list(out)
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(_flat(o), _flat(e), rtol=1e-12)
    for a, b in zip(args, before):  # the caller's arrays are never changed
        np.testing.assert_array_equal(_flat(a), _flat(b))
    rng = np.random.default_rng(len(args))
    cts = [[rng.normal(size=np.shape(x)) for x in e] if isinstance(e, list) else rng.normal(size=np.shape(e))
           for e in expected]
    grads = pullback(cts[0] if len(written) == 1 else tuple(cts))
    assert len(grads) == len(args)
    for g, fd in zip(grads, _fd_inner(f, args, written, cts)):
        np.testing.assert_allclose(_flat(g), _flat(fd), rtol=1e-6, atol=1e-8)
    again = pullback(cts[0] if len(written) == 1 else tuple(cts))
    for g, h in zip(grads, again):
        np.testing.assert_array_equal(_flat(g), _flat(h))


def _flat(v):
    if isinstance(v, (list, tuple)):
        return np.concatenate([np.ravel(x) for x in v])
    return np.ravel(v)


def test_vjp_of_an_in_place_function_names_the_arguments_its_cotangents_are_for():
    du, u, p = np.zeros(2), U, np.array([1.1, 0.4, 0.4, 0.1])
    _, pullback = vjp(rhs, du, u, p, 0.3)
    with pytest.raises(ArgumentError, match=r"pullback of rhs: the cotangent must have the shape of `du` \(the "
                                            r"argument rhs writes into\), \(2,\), got shape \(\)"):
        pullback(1.0)
    with pytest.raises(ArgumentError, match=r"the cotangent must have the shape of `du`.*\(2,\), got shape \(4,\)"):
        pullback(np.ones(4))
    _, pullback = vjp(rhs_two, np.ones(2), np.ones(2), U)
    with pytest.raises(ArgumentError, match=r"pullback of rhs_two: the cotangent must be a tuple of 2 cotangents "
                                            r"\(one per argument it writes into: `du`, `dv`\), got an array"):
        pullback(np.ones(2))
    with pytest.raises(ArgumentError, match=r"the cotangent\[1\] must have the shape of `dv`"):
        pullback((np.ones(2), np.ones(3)))


def returns_nothing(x):
    y = x * 2.0  # noqa: F841 -- a function with no effect at all


def writes_and_returns(du, u):
    du[0] = np.sin(u[0])
    return np.sum(du * u)


def test_vjp_of_a_function_that_returns_none_and_writes_nothing():
    out, pullback = vjp(returns_nothing, U)
    assert out is None
    g, = pullback(None)
    np.testing.assert_array_equal(g, np.zeros(2))
    with pytest.raises(ArgumentError, match=r"pullback of returns_nothing: the cotangent must be None \(the "
                                            r"function returns None and writes into no array argument\), got a float"):
        pullback(1.0)


def test_a_function_that_writes_and_returns_has_its_return_value_as_output():
    du = np.array([3.0, 4.0])
    out, pullback = vjp(writes_and_returns, du, U)
    assert out == pytest.approx(writes_and_returns(du.copy(), U))
    np.testing.assert_array_equal(du, [3.0, 4.0])
    gdu, gu = pullback(2.0)
    np.testing.assert_allclose(gdu, [0.0, 2.0 * U[1]])
    np.testing.assert_allclose(gu, 2.0 * np.array([np.sin(U[0]) + U[0] * np.cos(U[0]), 4.0]))


# -- gradient types follow the argument's type ---------------------------------------------------
def cube(x):
    return x * x * x


def scaled_sum(xs, w):
    return np.sum(xs[0] * w) + xs[1] * 2.0


@pytest.mark.parametrize("arg, kind", [
    (1.5, float), (np.float64(1.5), np.float64), (np.float32(1.5), np.float32), (np.float16(1.5), np.float16),
    (2, float), (np.int64(2), np.float64), (np.array(1.5), np.ndarray), (np.array(1.5, np.float32), np.ndarray),
])
def test_the_gradient_has_the_type_of_its_argument(arg, kind):
    expected = 3.0 * float(arg) ** 2
    results = [grad(cube)(arg), value_and_grad(cube)(arg)[1], vjp(cube, arg)[1](1.0)[0]]
    for g in results:
        assert type(g) is kind, (type(g), kind)
        if isinstance(arg, np.ndarray):
            assert g.shape == () and g.dtype == arg.dtype
        elif isinstance(arg, np.floating):
            assert g.dtype == arg.dtype
        assert float(g) == pytest.approx(expected, rel=1e-3 if kind is np.float16 else 1e-7)


def test_gradient_types_inside_tuples_and_lists():
    for xs in [(np.float32(1.0), 2.0), [np.float64(1.0), np.float32(2.0)]]:
        w = np.array([0.5, -1.0])
        for g in (grad(scaled_sum)(xs, w), vjp(scaled_sum, xs, w)[1](1.0)[0]):
            assert type(g) is type(xs) and [type(v) for v in g] == [type(v) for v in xs]
            assert [float(v) for v in g] == pytest.approx([-0.5, 2.0])


# -- pullback cotangents: structure, shape, kind -------------------------------------------------
def three(x):
    return x * 2.0, (np.sum(x), x[:2]), np.tanh(x)


@pytest.mark.parametrize("bad, message", [
    (np.ones(3), (r"the cotangent must be a tuple of 3 cotangents \(the function returns a tuple of 3\), "
                 r"got an array of shape \(3,\)")),
    ((np.ones(3), (1.0, np.ones(2))), r"the cotangent must be a tuple of 3 cotangents.*got a tuple of length 2"),
    ((np.ones(3), 1.0, np.ones(3)), (r"the cotangent\[1\] must be a tuple of 2 cotangents \(that output is a "
                                     r"tuple of 2\), got a float")),
    ((np.ones(3), (1.0, np.ones(3)), np.ones(3)), (r"the cotangent\[1\]\[1\] must have the shape of the output, "
                                                  r"\(2,\), got shape \(3,\)")),
    ((np.ones(3), (np.ones(1), np.ones(2)), np.ones(3)), (r"the cotangent\[1\]\[0\] must have the shape of the "
                                                         r"output, \(\), got shape \(1,\)")),
    ((np.ones(3), (1j, np.ones(2)), np.ones(3)), (r"the cotangent\[1\]\[0\] must hold real numbers \(an array of "
                                                 r"shape \(\) or a float, for the output\), got complex numbers")),
    ((np.ones(3, bool), (1.0, np.ones(2)), np.ones(3)), r"the cotangent\[0\] must hold real numbers.*got booleans"),
    ((np.ones(3), (1.0, np.ones(2)), None), r"the cotangent\[2\] must hold real numbers.*got None"),
    ((np.ones(3), (1.0, "ab"), np.ones(3)), r"the cotangent\[1\]\[1\] must hold real numbers.*got dtype <U2"),
    ((np.ones(3), (1.0, [[1.0], [1.0, 2.0]]), np.ones(3)), (r"the cotangent\[1\]\[1\] must hold real numbers.*"
                                                           r"got a list of length 2")),
    ((np.ones(3), (1.0, (2.0, 3.0, 4.0)), np.ones(3)), (r"the cotangent\[1\]\[1\] must have the shape of the "
                                                       r"output, \(2,\), got a tuple of length 3, of shape \(3,\)")),
])
def test_a_malformed_cotangent_is_refused_naming_the_function_the_output_and_the_shapes(bad, message):
    _, pullback = vjp(three, V)
    with pytest.raises(ArgumentError, match=r"the pullback of three: " + message):
        pullback(bad)


def test_integer_cotangents_are_taken_as_floats():
    _, pullback = vjp(three, V)
    g, = pullback((np.array([1, 2, 3]), (np.int64(1), [0, 1]), np.ones(3, np.int32)))
    fd = pullback((np.array([1.0, 2.0, 3.0]), (1.0, np.array([0.0, 1.0])), np.ones(3)))[0]
    np.testing.assert_array_equal(g, fd)
    np.testing.assert_allclose(fd, [2.0 + 1.0, 4.0 + 1.0 + 1.0, 6.0 + 1.0] + 1.0 / np.cosh(V) ** 2 - 1.0 + 1.0)


# -- a pullback may run many times, and nothing it keeps leaks -----------------------------------
def restores_a_returned_array(x):
    b = x.copy()
    y = b ** 2
    b[0] = 5.0
    return b * y, b


def test_a_pullback_runs_twice_and_the_output_is_the_callers_own():
    out, pullback = vjp(restores_a_returned_array, V)
    value = [o.copy() for o in out]
    ct = (np.array([1.0, 2.0, 3.0]), np.ones(3))
    first = pullback(ct)[0].copy()
    for o, v in zip(out, value):  # the pullback restores `b` in place: never the caller's `out`
        np.testing.assert_array_equal(o, v)
    for o in out:
        o[...] = 100.0  # the caller's `out` is theirs to change
    ct[0][...] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(pullback(ct)[0], first)
    # out = ([5 x0^2, x1^3, x2^3], [5, x1, x2]): slot 0 of `b` was overwritten
    np.testing.assert_allclose(first, [10.0 * V[0], 3 * V[1] ** 2 * 2.0 + 1.0, 3 * V[2] ** 2 * 3.0 + 1.0])
    np.testing.assert_array_equal(ct[0], [1.0, 2.0, 3.0])


def reads_its_arguments_in_the_pullback(x, parts, scale):
    return np.sin(x) * x * parts[0] + np.tanh(parts[1]) * scale


def test_the_caller_changing_its_arguments_before_the_pullback_changes_nothing():
    x, parts, scale = V.copy(), [V + 0.5, V - 0.25], 1.5
    ct = np.array([1.0, -2.0, 0.5])
    out, pullback = vjp(reads_its_arguments_in_the_pullback, x, parts, scale)
    x[...] = 9.0  # the saved values may be the arguments themselves: they must be the call's
    parts[0][...] = -3.0
    parts[1] = np.zeros(3)
    gx, gparts, gscale = pullback(ct)
    # against finite differences of <ct, f> at the arguments vjp was called with
    def phi(a):
        return float(ct @ reads_its_arguments_in_the_pullback(a[:3], [a[3:6], a[6:9]], a[9]))
    flat = np.concatenate([V, V + 0.5, V - 0.25, [1.5]])
    eps, fd = 1e-6, np.zeros(10)
    for k in range(10):
        up, down = flat.copy(), flat.copy()
        up[k] += eps
        down[k] -= eps
        fd[k] = (phi(up) - phi(down)) / (2 * eps)
    got = np.concatenate([gx, gparts[0], gparts[1], [gscale]])
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


# -- an early return (the case) in every entry point -------------------------------------
def early_return(x):
    if np.sum(x) > 0:
        return np.exp(x) * x
    return np.sin(x) ** 3


def early_return_scalar(x):
    if np.sum(x) > 0:
        return np.sum(np.exp(x) * x)
    return np.sum(np.sin(x) ** 3)


@pytest.mark.parametrize("x", [V + 1.0, V - 1.0])
def test_early_return_in_every_entry_point(x):
    ct = np.array([0.5, -1.0, 2.0])
    out, pullback = vjp(early_return, x)
    np.testing.assert_allclose(out, early_return(x))
    g, = pullback(ct)
    np.testing.assert_allclose(g, central(lambda v: np.sum(ct * early_return(v)), x), rtol=1e-6, atol=1e-8)
    expected = central(early_return_scalar, x)
    np.testing.assert_allclose(grad(early_return_scalar)(x), expected, rtol=1e-6, atol=1e-8)
    value, g = value_and_grad(early_return_scalar)(x)
    assert value == pytest.approx(early_return_scalar(x))
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(vjp(early_return_scalar, x)[1](2.0)[0], 2.0 * expected, rtol=1e-6, atol=1e-8)
    marked = differentiable(early_return_scalar)
    np.testing.assert_allclose(marked.grad()(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(marked.value_and_grad()(x)[1], expected, rtol=1e-6, atol=1e-8)
    for mode in ("grad", "value_and_grad", "vjp"):
        ast.parse(adjoint_source(early_return_scalar, mode=mode, args=(x,)))


def _through(du, u):
    return rhs_early(du, u)  # returns what rhs_early returns: None


def test_an_in_place_function_called_through_a_wrapper_has_the_same_outputs():
    du = np.array([3.0, 4.0])
    out, pullback = vjp(_through, du, -U)
    np.testing.assert_allclose(out, _after(rhs_early, [du, -U], [0])[0])
    ct = np.array([0.5, -2.0])
    for g, fd in zip(pullback(ct), _fd_inner(rhs_early, [du, -U], [0], [ct])):
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _scaled(x, k):
    return np.sum(np.exp(x * k))


def test_adjoint_source_of_a_partial_is_the_code_its_gradient_runs():
    import functools

    f = functools.partial(_scaled, k=1.5)
    for mode in ("grad", "value_and_grad", "vjp"):
        for args in (None, (V,)):
            text = adjoint_source(f, mode=mode, args=args)
            ast.parse(text)
            assert "_scaled" in text and ("vjp of" in text) == (mode == "vjp")
    np.testing.assert_allclose(grad(f)(V), 1.5 * np.exp(1.5 * V))


# -- the early-return and in-place families, through every entry point --------------------------
def _families():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
    import families

    families.load_all()
    return families


@pytest.mark.parametrize("name", ["early_return.scalar_result", "early_return.array_result",
                                  "in_place.rhs_in_every_spelling"])
def test_the_entry_point_families_in_every_mode(name):
    import warnings

    families = _families()
    modes = families.entry.MODES
    seen = {m: set() for m in modes}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(6):
            case = families.generate(name, seed)
            result = families.check_case(case, modes=modes)
            assert result.status == "pass", f"seed {seed}: {result.status}: {result.detail}\n{case.source}"
            for mode, kind in result.modes.items():
                seen[mode].add(kind)
    scalar = name != "early_return.array_result"
    for mode in modes:  # every mode ran (an array result has no grad, value_and_grad or methods)
        assert "pass" in seen[mode] or (not scalar and mode in ("joint", "grad", "methods")), (mode, seen[mode])


def test_the_readme_in_place_example_runs(tmp_path):
    import re
    import subprocess
    import sys
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    first = re.search(r"## Thirty seconds\n\n```python\n(.*?)```", text, re.DOTALL).group(1)
    example = re.search(r"\*\*`vjp` of an in-place function.*?```python\n(.*?)```", text, re.DOTALL).group(1)
    script = tmp_path / "in_place_example.py"
    script.write_text(first.replace("print(adjoint_source(loss))", "") + example +
                      "assert not du.any() and np.allclose(out, [0.9, -0.15])\n"
                      "assert np.allclose(u_bar, [0.95, -0.7]) and np.allclose(p_bar, [1, -0.5, -0.5, 0.5])\n")
    result = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_grad_of_an_in_place_function_points_to_vjp():
    for make in (grad, value_and_grad):
        with pytest.raises(ArgumentError, match=r"rhs returns None and writes into its arguments.*under `vjp`"):
            make(rhs)(np.zeros(2), U, np.array([1.1, 0.4, 0.4, 0.1]), 0.3)


# -- found by fuzzing every entry point: a name that may still hold an argument's array ---------
def alias_then_loop_may_not_run(a, n):
    b = a
    for _ in range(n):
        a = a * 2.0  # rebinds `a`, unless the loop runs zero times
    a[0] = 5.0       # writes `b` too when it did not run
    return np.sum(b * b)


def alias_returned_after_branch(a, c):
    b = a
    if c > 0:
        a = a * 2.0
    a[0] = 5.0
    return b  # the result itself reads the alias (no statement does)


def rebound_then_written_in_place(a, n):  # returns nothing: `a`'s array is the output when n == 0
    for _ in range(n):
        a = a * 2.0
    a[0] = 5.0


@pytest.mark.parametrize("n", [0, 1])
def test_an_alias_a_loop_may_leave_is_refused_not_wrong(n):
    x = np.array([1.0, 2.0])
    with pytest.raises(MutationError, match=r"`a` may be the array written into on line \d+: the loop on line \d+ rebinds `a`"):
        value_and_grad(alias_then_loop_may_not_run)(x, n)
    with pytest.raises(MutationError, match=r"possibly the same array as"):
        vjp(alias_returned_after_branch, x, n)
    with pytest.raises(MutationError, match=r"the loop on line \d+ rebinds `a` to a new array, but not during"):
        vjp(rebound_then_written_in_place, x, n)
    np.testing.assert_array_equal(x, [1.0, 2.0])


def written_after_a_branch_rebinding(a0):  # fuzz seed 210, minimized: `a0` is written on one path
    if np.sum(np.exp(a0)) < -0.43:
        a0 = np.zeros((3, 1))
    else:
        a0 = a0  # noqa: PLW0127 -- (as the fuzzer wrote it)
    a0[:, 0] = 0.12


def written_after_a_while_loop(a0):  # fuzz seed 346, minimized: the loop may not run
    k0 = 0
    while k0 < 2 and np.sum(a0) < -0.43:
        a0 = a0 / (1.5 + np.square(a0))
        k0 += 1
    np.copyto(a0, 0.19)


def test_an_argument_written_on_some_paths_only_is_refused_under_vjp():
    for f in (written_after_a_branch_rebinding, written_after_a_while_loop):
        with pytest.raises(MutationError, match="possibly the same array as|may be the array written into"):
            vjp(f, np.ones((3, 1)))


def early_then_restored(a0, a1):  # fuzz seed 625, minimized
    if np.sum(a1) > 0:
        return np.sum(a1)
    b1 = Buffer.zeros((3,))
    b1[1:3] = a0 * 2.0
    s2 = np.array(b1)
    b1[0] = np.mean(a0)  # overwrites a slot the adjoint of `s2 * b1` reads: restored by the pullback
    return np.sum(s2 * b1.copy())


@pytest.mark.parametrize("a1", [np.ones(2), -np.ones(2)])
def test_a_pullback_restores_only_what_the_path_taken_made(a1):
    # the early return leaves `b1` unmade: the pullback's refill of it is skipped, not a crash
    out, pullback = vjp(early_then_restored, 0.3, a1)
    assert out == pytest.approx(early_then_restored(0.3, a1))
    for _ in range(2):
        g0, g1 = pullback(1.0)
        assert g0 == pytest.approx(0.0 if a1[0] > 0 else 16 * 0.3)
        np.testing.assert_allclose(g1, np.ones(2) if a1[0] > 0 else np.zeros(2))


def rebound_in_a_loop_that_surely_runs(a):
    b = a
    for _ in range(2):
        a = a * 2.0
    a[0] = 5.0  # `a` is a new array here: `b` is not written
    return np.sum(b * b) + np.sum(a)


def written_on_the_first_trip(a):
    b = a
    for _ in range(2):
        a[0] = a[0] * 3.0  # the first trip writes `b`'s array
        a = a * 2.0
    return np.sum(b * b) + np.sum(a)


def test_a_loop_that_surely_runs_leaves_a_new_array():
    x = np.array([1.0, 2.0])
    value, _ = value_and_grad(rebound_in_a_loop_that_surely_runs)(x)
    assert value == pytest.approx(rebound_in_a_loop_that_surely_runs(x.copy()))
    check_grads(rebound_in_a_loop_that_surely_runs, x)
    with pytest.raises(MutationError, match="may be the array written into on line .* first trip"):
        grad(written_on_the_first_trip)(x)


def with_none(x):
    return x * 2.0, None


def test_a_none_inside_a_tuple_output_takes_none():
    _, pullback = vjp(with_none, V)
    np.testing.assert_array_equal(pullback((np.ones(3), None))[0], 2.0 * np.ones(3))
    with pytest.raises(ArgumentError, match=r"the cotangent\[1\] must be None \(that output is None\), got a float"):
        pullback((np.ones(3), 0.0))


def test_hessian_and_hvp_take_keyword_arguments_and_partials():
    """(hessian and hvp took `*args` alone: a keyword argument raised TypeError, and a partial was
    refused as having no source)"""
    import functools

    from adjoint_compiler import hessian, hvp

    def f(a, s=2.0):
        return np.sum(a ** 3) * s

    x = np.array([0.5, 0.7])
    np.testing.assert_allclose(hessian(f)(x, s=1.0), np.diag(6 * x))
    np.testing.assert_allclose(hvp(f)(x, np.ones(2), s=1.0), 6 * x)
    np.testing.assert_allclose(hvp(functools.partial(f, s=3.0))(x, np.ones(2)), 18 * x)
    np.testing.assert_allclose(hessian(functools.partial(f, s=0.5))(x), np.diag(3 * x))


def test_a_top_level_list_with_a_leaf_that_is_no_number_gets_none_for_it():
    x = np.array([1.0, 2.0, 3.0])
    g = grad(lambda p: np.sum(p[0] ** 2))([x, None])
    np.testing.assert_allclose(g[0], 2 * x)
    assert g[1] is None


def test_jacobian_refuses_an_out_that_is_not_a_position():
    from adjoint_compiler import ArgumentError, jacfwd, jacobian

    def rhs(du, u):
        du[0] = u[0] * u[1]

    for take in (jacobian, jacfwd):
        for out in ("du", 1.0, True):
            with pytest.raises(ArgumentError, match="out must be the position"):
                take(rhs, wrt=1, out=out)(np.zeros(2), np.ones(2))

"""Second derivatives through the runtime helpers of first-order gradients: `np.pad`, `np.cumprod`,
`np.convolve`, `np.multiply/maximum/minimum.at`, `np.average`, `np.quantile`/`np.percentile`,
`np.ptp`, writes through a value that may be a view (`y.reshape(...)`, `np.asarray(y)`) and starred
unpacking. The generated gradient calls a helper for each (`rt.pad_adjoint`, `rt.cumprod_adjoint`,
...); each has an adjoint and a tangent rule or a twin in the compiler's subset
(rules/runtime_twins.py), so `hessian` (forward over reverse) and `vjp(grad(f))` (reverse over
reverse) work.

Every Hessian is checked against second differences of `f` (never the compiler against itself),
at points away from the kinks of the piecewise ones (quantile, ptp, maximum.at)."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import MutationError, grad, hessian, vjp


def second_differences(f, x, h=1e-4):
    """The Hessian of `f` at `x` (any shape) by central second differences."""
    x = np.asarray(x, dtype=float)
    n = x.size
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i, n):
            total = 0.0
            for si, sj, sign in ((1, 1, 1.0), (1, -1, -1.0), (-1, 1, -1.0), (-1, -1, 1.0)):
                p = x.copy().ravel()
                p[i] += si * h
                p[j] += sj * h
                total += sign * f(p.reshape(x.shape))
            out[i, j] = out[j, i] = total / (4 * h * h)
    return out.reshape(x.shape + x.shape)


def check_second_order(f, x):
    x = np.asarray(x, dtype=float)
    want = second_differences(f, x)
    scale = max(1.0, float(np.abs(want).max()))
    got = np.asarray(hessian(f)(x))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-5 * scale, rtol=1e-5, err_msg="hessian")
    v = np.random.default_rng(x.size).standard_normal(x.shape)
    _, pullback = vjp(grad(f), x)
    back = np.asarray(pullback(v)[0] if isinstance(pullback(v), tuple) else pullback(v))
    hv = np.tensordot(want, v, axes=x.ndim)
    np.testing.assert_allclose(back, hv, atol=1e-5 * scale, rtol=1e-5, err_msg="vjp(grad(f))")


X1 = np.array([0.7, -0.4, 1.3, 0.25, -1.1])
X2 = np.array([[0.7, -0.4, 1.3], [0.25, -1.1, 0.9]])
X1_ZERO = np.array([0.7, 0.0, 1.3, -0.6])
X2_ZERO = np.array([[0.7, -0.4, 1.3], [0.0, -1.1, 0.9], [0.5, 0.8, -0.3]])


# -- np.pad ---------------------------------------------------------------------------------------
PAD_MODES = ("constant", "edge", "reflect", "wrap", "symmetric")


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("x, width", [(X1, 2), (X1, (1, 3)), (X2, 1), (X2, ((1, 0), (2, 1)))],
                         ids=["1d", "1d-sides", "2d", "2d-axes"])
def test_pad(mode, x, width):
    def f(x):
        return np.sum(np.sin(np.pad(x, width, mode=mode)) * np.pad(x, width, mode=mode) ** 2)
    check_second_order(f, x)


@pytest.mark.parametrize("x", [X1, X2], ids=["1d", "2d"])
def test_pad_constant_values_of_the_argument(x):
    def f(x):
        return np.sum(np.pad(x, 1, constant_values=np.sum(x) ** 2 * 0.3) ** 3)
    check_second_order(f, x)


# -- np.cumprod -----------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [X1, X1_ZERO, X2, X2_ZERO], ids=["1d", "1d-zero", "2d", "2d-zero"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumprod(x, axis):
    if axis in (1, -1) and x.ndim == 1:
        axis = 0 if axis == 1 else -1
    def f(x):
        return np.sum(np.sin(np.cumprod(x, axis=axis)))
    check_second_order(f, x)


# -- np.convolve ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("kernel", [np.array([1.0, -0.5]), np.array([0.3, 1.0, -0.5, 0.2, 0.1, 0.7, -0.2])],
                         ids=["short", "longer-than-x"])
def test_convolve_constant_kernel(mode, kernel):
    def f(x):
        return np.sum(np.convolve(x, kernel, mode) ** 3)
    check_second_order(f, X1)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_of_the_argument_with_itself(mode):
    def f(x):
        return np.sum(np.sin(np.convolve(x[:3], x[::-1], mode)))
    check_second_order(f, X1)


def test_convolve_matrix_rows():
    def f(x):
        return np.sum(np.convolve(x[0], x[1] ** 2, "same") ** 2)
    check_second_order(f, X2)


# -- ufunc.at -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["multiply", "maximum", "minimum"])
def test_ufunc_at_vector(name):
    ufunc = getattr(np, name)
    def f(x):
        out = np.full(3, 0.9) * x[3]
        ufunc.at(out, [0, 0, 2], x[:3])
        return np.sum(out ** 3) + np.sum(out * x[:3] ** 2)
    check_second_order(f, X1)


def test_multiply_at_through_zero():
    def f(x):
        out = x[:3] * 1.0
        np.multiply.at(out, [1, 1, 0], x[1:] ** 2)
        return np.sum(np.sin(out))
    check_second_order(f, X1_ZERO)


@pytest.mark.parametrize("name", ["multiply", "maximum"])
def test_ufunc_at_matrix_rows(name):
    ufunc = getattr(np, name)
    def f(x):
        out = np.ones((3, 3)) * 0.5 + x[0, 0]
        ufunc.at(out, [0, 2, 0], x)
        return np.sum(out ** 3)
    check_second_order(f, X2_ZERO + 0.05 * np.arange(9).reshape(3, 3))


def test_multiply_at_broadcast_scalar():
    def f(x):
        out = x * 1.0
        np.multiply.at(out, (np.array([0, 1, 1]), np.array([2, 0, 0])), x[1, 2])
        return np.sum(out ** 3)
    check_second_order(f, X2)


# -- np.average -----------------------------------------------------------------------------------
@pytest.mark.parametrize("x, axis", [(X1, None), (X2, None), (X2, 0), (X2, 1), (X2, -1)])
@pytest.mark.parametrize("weighted", ["none", "constant", "argument"])
def test_average(x, axis, weighted):
    def f(x):
        if weighted == "none":
            return np.sum(np.average(np.sin(x), axis=axis) ** 3)
        if weighted == "constant":
            return np.sum(np.average(np.sin(x), axis=axis, weights=np.arange(1.0, x.size + 1).reshape(x.shape)) ** 3)
        return np.sum(np.average(np.sin(x), axis=axis, weights=x ** 2 + 1.0) ** 3)
    check_second_order(f, x)


@pytest.mark.parametrize("axis", [0, 1])
def test_average_weights_along_the_axis(axis):
    def f(x):
        w = x[:, 0] ** 2 + 1.0 if axis == 0 else x[0] ** 2 + 1.0
        return np.sum(np.average(x ** 2, axis=axis, weights=w, keepdims=True) ** 3)
    check_second_order(f, X2_ZERO)


# -- np.quantile, np.percentile ------------------------------------------------------------------------
@pytest.mark.parametrize("q", [0.3, np.array([0.2, 0.5, 0.9])], ids=["scalar", "array"])
@pytest.mark.parametrize("x, axis", [(X1, None), (X2, None), (X2, 0), (X2, 1)])
def test_quantile(q, x, axis):
    def f(x):
        return np.sum(np.quantile(x ** 2 + x, q, axis=axis) ** 3)
    check_second_order(f, x)


@pytest.mark.parametrize("method", ["lower", "higher", "nearest", "midpoint"])
def test_quantile_methods(method):
    def f(x):
        return np.sum(np.quantile(np.sin(x), [0.25, 0.6], method=method) ** 3)
    check_second_order(f, X1)


def test_quantile_of_a_differentiated_q():
    def f(x):
        return np.quantile(x[1:] ** 3, 0.4 + 0.1 * np.sin(x[0])) ** 2
    check_second_order(f, X1)


def test_percentile_keepdims():
    def f(x):
        return np.sum(np.percentile(np.exp(x), [30.0, 70.0], axis=1, keepdims=True) ** 2)
    check_second_order(f, X2)


# -- np.ptp ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("x, axis", [(X1, None), (X2, None), (X2, 0), (X2, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_ptp(x, axis, keepdims):
    def f(x):
        return np.sum(np.ptp(x ** 3, axis=axis, keepdims=keepdims) ** 2) + np.sum(x ** 4)
    check_second_order(f, x)


# -- writes through a value that may be a view --------------------------------------------------------
def test_write_through_a_reshape():
    def f(x):
        y = x.copy()
        m = y.reshape(2, 2)
        m[0] *= 2
        return np.sum(y ** 3)
    check_second_order(f, X1[:4])


def test_write_through_a_reshape_of_unknown_rank():
    """`np.reshape(y, shape)` with the shape in a variable: the rank of the view is not known, so
    the gradient reads the view's old row for its shape alone (`rt.unbroadcast(..., m_0)`)."""
    def f(x):
        y = x * 1.0
        m = np.reshape(y, (2, -1))
        m[0] *= 2.0
        return np.mean((y * x) ** 2)
    check_second_order(f, X1[:4])


def test_write_through_asarray():
    def f(x):
        y = x * 1.0
        z = np.asarray(y)
        z[1] = z[0] ** 2
        return np.sum(np.sin(y) * y)
    check_second_order(f, X1)


def test_write_through_a_reshape_of_a_matrix():
    def f(x):
        y = x ** 2
        v = y.reshape(-1)
        v[1:3] = np.sin(x[0, 0]) * x[1, 2]
        return np.sum(y ** 3)
    check_second_order(f, X2)


def test_write_through_a_reshape_reading_its_old_slots_is_refused():
    """The gradient of `v[1:3] *= x[0]` reads `v[1:3]` (a value that may be a view of `y`) after `y`
    is written: the generated code is refused when differentiated again, never a wrong number."""
    def f(x):
        y = x ** 2
        v = y.reshape(-1)
        v[1:3] *= x[0, 0]
        return np.sum(y ** 3)
    with pytest.raises(MutationError):
        hessian(f)(X2)


# -- starred unpacking --------------------------------------------------------------------------------
def test_starred_unpacking():
    def f(x):
        first, *rest = x
        return first * sum(rest) ** 2
    check_second_order(f, X1)


def test_starred_unpacking_in_the_middle():
    def f(x):
        a, *mid, b = x
        return a * b * np.sum(np.array(mid) ** 2)
    check_second_order(f, X1)


def test_starred_unpacking_of_rows():
    def f(x):
        top, *others = x
        return np.sum(top ** 2 * others[0])
    check_second_order(f, X2)


def logabsdet(a):
    return np.linalg.slogdet(a).logabsdet


def test_a_helper_without_a_second_order_rule_is_refused_at_the_gradient_line_that_calls_it():
    """`rt.field_adjoint` (the gradient of a named tuple's field) has no rule and its code is not in
    the compiler's subset: the refusal names it and points at the generated gradient, not into the
    compiler's runtime module."""
    from adjoint_compiler import MissingRuleError

    a = 2.0 * np.eye(2) + np.array([[0.1, 0.4], [-0.2, 0.3]])
    with pytest.raises(MissingRuleError, match=r"rt\.field_adjoint.*differentiating it again") as info:
        hessian(logabsdet)(a)
    assert 'File "<adjoint_compiler' in str(info.value)  # (the generated gradient's line)

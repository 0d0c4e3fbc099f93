"""Complex numbers end to end: complex arguments and intermediates with a real loss, against finite
differences in the real and imaginary parts; mixed real and complex arguments; control flow; and
the refusals (functions outside the allow-list, a complex loss, higher order), each located.

Convention (autograd's and JAX's): the gradient with respect to z = x + iy is dL/dx - i dL/dy.
"""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

from adjoint_compiler import adjoint, grad, hessian, jvp, value_and_grad, vjp
from adjoint_compiler.errors import AdjointCompilerError, ArgumentError, ComplexError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rules"))
from test_complex_rules import check, crand, rand

pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")

Z = crand(4)
X = rand(4)
M = crand(3, 3)


# -- complex intermediates from real inputs ---------------------------------------------------------

def rotate(x):
    return np.sum(np.real(x * 1j * (2.0 - 1j)) ** 2 + np.imag(x * 1j) * x)


def phasor(theta):
    w = np.exp(1j * theta)
    return np.real(np.sum(w * np.conj(w[::-1]))) + np.sum(np.imag(w) * theta)


def power_spectrum(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def spectrum_weighted(x):
    spec = np.fft.rfft(x)
    weights = np.arange(1.0, spec.shape[0] + 1.0)
    return np.sum(np.abs(spec) * weights)


def filter_signal(x):
    spec = np.fft.fft(x)
    n = x.shape[0]
    spec = spec * np.exp(-np.arange(n) / n)
    y = np.fft.ifft(spec)
    return np.sum(np.real(y) ** 2)


def roundtrip(x):
    return np.sum(np.fft.irfft(np.fft.rfft(x) * 0.5, n=x.shape[0]) * x)


def modulus_squared(x):
    z = x + 2j * x[::-1]
    return np.sum(np.real(z * np.conj(z)))


def angle_of(x):
    return np.sum(np.angle(x[:2] + 1j * x[2:]))


@pytest.mark.parametrize("f", [rotate, phasor, power_spectrum, spectrum_weighted, filter_signal, roundtrip,
                               modulus_squared, angle_of])
def test_complex_intermediates_of_real_arguments(f):
    check(f, X)


def test_gradient_of_a_real_argument_is_real_and_projected():
    def f(v):
        z = v * (1.0 + 2.0j)
        return np.sum(np.abs(z))
    g = grad(f)(X)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.sqrt(5.0) * np.sign(X))
    from adjoint_compiler import adjoint_source
    src = adjoint_source(f, args=(X,))
    assert "np.real(" in src  # the contribution into the real v keeps its real part, readably


# -- complex arguments, mixed with real ones ----------------------------------------------------------

def mixed(x, z):
    w = np.sin(z) * x + z ** 2 / (x + 2.0)
    return np.sum(np.abs(w) ** 2) + np.real(np.sum(w))


def matrix_loss(a, z):
    y = a @ z
    return np.sum(np.abs(y)) + np.imag(np.trace(np.outer(z, z)))


def with_loop(z, n):
    acc = z
    for i in range(n):
        acc = acc * z + 0.5
    return np.sum(np.real(acc) + np.imag(acc) * 0.3)


def with_branch(z, x):
    if x[0] > 0:
        w = z * x
    else:
        w = np.conj(z)
    return np.sum(np.abs(w))


def real_init_loop(x, z, n):
    acc = x * 1.0
    for i in range(n):
        acc = acc * z
    return np.sum(np.abs(acc) ** 2)


def helper_rotate(z):
    return z * 1j


def with_helper(z):
    return np.sum(np.real(helper_rotate(z)) * np.imag(helper_rotate(z) ** 2))


def tuple_of_complex(z, x):
    pair = (z, x * 2.0)
    a, b = pair
    return np.sum(np.abs(a * b))


def stacked(z, x):
    s = np.stack([z, x * 1j, z * x])
    return np.sum(np.abs(s) ** 2) + np.real(np.sum(np.concatenate([z, x]) ** 2))


def where_select(z, x):
    return np.sum(np.abs(np.where(x > 0, z, z * 2.0)))


def test_mixed_real_and_complex_arguments():
    check(mixed, X, Z, wrt=(0, 1))
    check(matrix_loss, rand(3, 4), crand(4), wrt=(0, 1))
    check(matrix_loss, crand(3, 4), crand(4), wrt=(0, 1))
    check(tuple_of_complex, Z, X, wrt=(0, 1))
    check(stacked, Z, X, wrt=(0, 1))
    check(where_select, Z, X, wrt=(0, 1))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_loops(n):
    check(with_loop, Z * 0.5, n)
    check(real_init_loop, X, Z * 0.5, n, wrt=(0, 1))


def test_branches_and_helpers():
    check(with_branch, Z, np.abs(X) + 0.1, wrt=(0, 1))
    check(with_branch, Z, -np.abs(X) - 0.1, wrt=(0, 1))
    check(with_helper, Z)


def test_complex_scalars():
    def f(z, x):
        return np.real(z * z * x) + np.abs(z) * x
    check(f, 0.3 + 0.8j, 1.5, wrt=(0, 1))
    check(f, np.complex128(0.3 + 0.8j), 1.5, wrt=(0, 1))
    g = grad(f)(0.3 + 0.8j, 1.5)
    assert type(g) is complex
    g = grad(f)(np.complex128(0.3 + 0.8j), 1.5)
    assert type(g) is np.complex128


def test_gradient_dtypes_and_shapes():
    def f(z, x):
        return np.sum(np.abs(z * x))
    gz, gx = grad(f, (0, 1))(Z, X)
    assert gz.dtype == np.complex128 and gz.shape == Z.shape
    assert gx.dtype == np.float64 and gx.shape == X.shape
    z64 = Z.astype(np.complex64)
    gz = grad(f)(z64, X)
    assert gz.dtype == np.complex64


def test_a_complex_argument_not_influencing_the_loss_gets_complex_zeros():
    def f(z, x):
        return np.sum(x ** 2)
    gz = grad(f)(Z, X)
    assert gz.dtype == np.complex128 and not gz.any()


def test_vjp_with_real_outputs_of_complex_arguments():
    def f(z):
        return np.abs(z) ** 2, np.real(z) * 2.0
    _, pullback = vjp(f, Z)
    g = pullback((np.ones(4), np.ones(4)))[0]
    np.testing.assert_allclose(g, 2 * np.conj(Z) + 2.0)  # d|z|^2 = 2x dx + 2y dy: 2x - 2iy


# -- refusals ---------------------------------------------------------------------------------------

def uses_maximum(z): return np.sum(np.abs(np.maximum(z, 0.5)))
def uses_minimum(z): return np.sum(np.abs(np.minimum(z, z * 2)))
def uses_comparison(z): return np.sum(np.abs(z) * (z > 0.5))
def uses_sort(z): return np.sum(np.abs(np.sort(z)))
def uses_sign(z): return np.sum(np.abs(np.sign(z) * z))
def uses_floor(z): return np.sum(np.abs(np.floor(z)))
def uses_max(z): return np.abs(np.max(z))
def uses_arcsin(z): return np.sum(np.abs(np.arcsin(z)))
def uses_cumsum(z): return np.sum(np.abs(np.cumsum(z)))
def uses_float(z): return float(z[0]) * 2.0
def uses_astype_real(z): return np.sum(z.astype(float))
def uses_constructor(x): return abs(complex(x[0], x[1]))
def uses_emath(x): return np.sum(np.abs(np.emath.sqrt(x)))
def uses_eig(m): return np.sum(np.abs(np.linalg.eigvals(m)))
def uses_linalg(m): return np.sum(np.abs(np.linalg.inv(m)))


def uses_write(z):
    w = z.copy()
    w[0] = 1.0
    return np.sum(np.abs(w))


def uses_condition(z):
    if np.sum(z):
        return np.sum(np.abs(z))
    return 0.0


REFUSED = [uses_maximum, uses_minimum, uses_comparison, uses_sort, uses_sign, uses_floor, uses_max, uses_arcsin,
           uses_cumsum, uses_float, uses_astype_real, uses_write, uses_condition]
REFUSED_REAL = [uses_constructor, uses_emath]


def _assert_located(err, f):
    lines, start = inspect.getsourcelines(f)
    assert err.loc is not None and err.loc.file == inspect.getsourcefile(f)
    assert start <= err.loc.line < start + len(lines)
    assert f"line {err.loc.line}" in str(err)


@pytest.mark.parametrize("f", REFUSED + REFUSED_REAL + [uses_eig, uses_linalg], ids=lambda f: f.__name__)
def test_functions_outside_the_allow_list_refuse_complex_values(f):
    arg = M if f in (uses_eig, uses_linalg) else X if f in REFUSED_REAL else Z
    for call in (lambda: grad(f)(arg), lambda: value_and_grad(f)(arg), lambda: vjp(f, arg)):
        with pytest.raises(ComplexError) as info:
            call()
        assert isinstance(info.value, AdjointCompilerError)
        _assert_located(info.value, f)


def complex_loss(z):
    return np.sum(z * 2.0)


def complex_of_real(x):
    return np.sum(x * 1j)


def complex_output(z):
    return z * 2.0, np.abs(z)


def test_a_complex_result_is_refused():
    with pytest.raises(ComplexError, match="result may be complex") as info:
        grad(complex_loss)(Z)
    _assert_located(info.value, complex_loss)
    with pytest.raises(ComplexError, match="result may be complex"):
        grad(complex_of_real)(X)  # (real argument, complex intermediate: still a complex loss)
    with pytest.raises(ComplexError, match="result may be complex"):
        vjp(complex_output, Z)


def test_a_complex_cotangent_is_refused():
    def f(z):
        return np.abs(z)
    _, pullback = vjp(f, Z)
    with pytest.raises(ArgumentError, match="complex"):
        pullback(np.ones(4) * 1j)


def test_forward_mode_takes_complex_values_and_higher_order_refuses_them():
    # (forward mode's rules are checked in tests/rules/test_complex_tangents.py)
    def f(x):
        return np.sum(np.abs(x * 1j))
    np.testing.assert_allclose(jvp(f, (X,), (np.ones(4),))[1], np.sum(np.sign(X)))
    np.testing.assert_allclose(jvp(f, (Z,), (np.ones(4),))[1], np.sum(np.real(Z) / np.abs(Z)))
    with pytest.raises(ComplexError) as info:
        hessian(f)(X)
    _assert_located(info.value, f)


def test_a_user_rule_replaces_the_complex_rule_and_refuses():
    def my_exp(z):
        return np.exp(z)

    @adjoint(my_exp)
    def _(y, z):
        z_bar += y_bar * y  # noqa: F821, F841 (a rule template)

    def f(z):
        return np.sum(np.abs(my_exp(z)))
    with pytest.raises(ComplexError, match="no rule valid for complex"):
        grad(f)(Z)
    assert np.isfinite(grad(f)(X)).all()  # (real values: the user's rule)


def test_jacrev_of_a_complex_argument():
    from adjoint_compiler import jacrev

    def f(z, x):
        return np.abs(z * x + 1j) ** 2
    z, x = crand(3), rand(3)
    jz, jx = jacrev(f, (0, 1))(z, x)
    assert jz.dtype == np.complex128 and jx.dtype == np.float64
    for k in range(3):
        def out_k(z, x, k=k):
            return f(z, x)[k]
        check(out_k, z, x, wrt=(0, 1))
        np.testing.assert_allclose(jz[k], grad(out_k)(z, x))
        np.testing.assert_allclose(jx[k], grad(out_k, 1)(z, x))


def test_gradients_never_share_memory_through_a_real_part():
    def f(v, z):
        t = z + v  # (v_bar is np.real(t_bar), a view of z_bar = t_bar)
        return np.sum(np.abs(t * t))
    for g in (grad(f, (0, 1))(X, Z), vjp(f, X, Z)[1](1.0)):
        assert not np.shares_memory(g[0], g[1])
        g[0][...] = 0.0
        assert np.abs(g[1]).sum() > 0


def test_a_dtype_known_only_at_run_time():
    def f(x, dt):
        return np.sum(x.astype(dt) * 2.0)
    with pytest.raises(ComplexError, match="complex value at run time|result may be complex"):
        grad(f)(X, complex)
    np.testing.assert_allclose(grad(f)(X, float), 2.0 * np.ones(4))

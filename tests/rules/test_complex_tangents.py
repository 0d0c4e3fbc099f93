"""The tangent rules valid for complex operands (forward mode: jvp, jacfwd), each against central
finite differences along a real and, separately, an imaginary direction of every argument, over
the functions, shapes and keywords of the adjoint side's tests (tests/rules/test_complex_rules.py,
whose lists are imported); then jvp and jacfwd end to end, and the refusals, each located.

Convention (JAX's): the tangent of f at z along a complex t is d/de f(z + e t) for real e, C read
as R^2 (f'(z) t for a holomorphic f). Complex outputs are compared directly: their tangents are
complex, a real output's tangent is real.
"""
from __future__ import annotations

import inspect
import math
import operator

import gast
import numpy as np
import pytest
import test_complex_rules as CR
from test_complex_rules import _inputs_of_this_test, crand, rand  # noqa: F401 (the fixture seeds each test)

from adjoint_compiler import adjoint, hessian, jacfwd, jvp, jvp_source, registry
from adjoint_compiler.errors import AdjointCompilerError, ArgumentError, ComplexError

pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")

RNG = np.random.default_rng(11)
EPS = 1e-6


def _is_complex(a) -> bool:
    return np.iscomplexobj(a)


def _direction(a, imaginary: bool):
    t = RNG.standard_normal(np.shape(a))
    if imaginary:
        t = 1j * t
    if isinstance(a, np.ndarray):
        return t.astype(a.dtype) if _is_complex(a) else t
    if isinstance(a, np.generic):
        return a.dtype.type(t)
    return complex(t) if imaginary or _is_complex(a) else float(t)


def _zero(a):
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        return None
    return np.zeros_like(a) if isinstance(a, np.ndarray) else type(a)(0)


def _moved(args, i, t, e):
    out = list(args)
    out[i] = args[i] + e * t
    if isinstance(args[i], np.ndarray):
        out[i] = np.asarray(out[i], dtype=args[i].dtype)
    return out


def check(f, *args, rtol=1e-5, atol=1e-6):
    """jvp of f along a real direction of each float or complex argument, and along an imaginary
    one of each complex argument, against central differences; the value is f's, the tangent has
    the output's shape and (real or complex) kind."""
    value0 = f(*args)
    for i, a in enumerate(args):
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            continue
        for imaginary in (False, True) if _is_complex(a) else (False,):
            t = _direction(a, imaginary)
            tangents = [_zero(b) for b in args]
            tangents[i] = t
            value, tangent = jvp(f, tuple(args), tuple(tangents))
            np.testing.assert_allclose(value, value0, rtol=1e-12)
            want = (np.asarray(f(*_moved(args, i, t, EPS))) - np.asarray(f(*_moved(args, i, t, -EPS)))) / (2 * EPS)
            assert np.shape(tangent) == np.shape(value0), (np.shape(tangent), np.shape(value0))
            assert _is_complex(tangent) == _is_complex(value0), (tangent, value0)
            np.testing.assert_allclose(tangent, want, rtol=rtol, atol=atol,
                                       err_msg=f"argument {i}, {'imaginary' if imaginary else 'real'} direction")


# -- the registry's fact -------------------------------------------------------------------------------

_NOT_HOLOMORPHIC = {"abs", "absolute", "sign", "real", "imag", "conj", "conjugate", "angle", "maximum", "minimum",
                    "fabs", "floor", "ceil", "round", "clip", "sort", "argmax", "argmin", "max", "min"}


def test_every_complex_rule_has_a_tangent_and_the_shared_ones_are_holomorphic():
    registry.load_builtin_rules()
    for prim, fact in registry.COMPLEX.items():
        assert fact.tangent is not None, prim
        assert fact.tangent.kind == "tangent" or fact.tangent.body is None, prim
        if fact.tangent is registry.TANGENTS.get(prim):  # (declared with holds_for_complex(..., tangent=True))
            for stmt in fact.tangent.body:
                for node in gast.walk(stmt):
                    assert not isinstance(node, gast.Compare), (prim, "compares")
                    if isinstance(node, gast.Attribute):
                        assert node.attr not in _NOT_HOLOMORPHIC and node.attr not in ("real", "imag"), (prim, node.attr)
    assert registry.lookup_complex(np.abs).tangent is not registry.lookup_tangent(np.abs)  # (`x_dot * np.sign(x)`)
    assert registry.lookup_complex(operator.pow).tangent is not registry.lookup_tangent(operator.pow)  # (real log)
    assert registry.lookup_complex(np.maximum) is None


def test_complex_tangent_needs_the_complex_record_first():
    from adjoint_compiler.errors import RuleError

    def nowhere(x):
        return x

    with pytest.raises(RuleError, match="no complex adjoint"):
        @registry.complex_tangent(nowhere)
        def _(y, x):
            y_dot = x_dot  # noqa: F821, F841 (a rule template)


# -- holomorphic, linear and structural: the shared tangent rules --------------------------------------

@pytest.mark.parametrize("shape", [(), (2, 3)], ids=str)
@pytest.mark.parametrize("fn", CR.UNARY, ids=lambda f: f.__name__.strip("_"))
def test_unary(fn, shape):
    z = crand(*shape)
    if fn in (CR._astype, CR._conj_method, CR._copy_method) and shape == ():
        z = np.complex128(z)
    check(fn, z)


@pytest.mark.parametrize("kinds", ["cc", "cr", "rc"])
@pytest.mark.parametrize("shapes", [((), ()), ((2, 1), (1, 3))], ids=str)
@pytest.mark.parametrize("fn", CR.BINARY, ids=lambda f: f.__name__.strip("_"))
def test_binary(fn, shapes, kinds):
    a = crand(*shapes[0]) if kinds[0] == "c" else np.abs(rand(*shapes[0])) + 0.5
    b = crand(*shapes[1]) if kinds[1] == "c" else rand(*shapes[1])
    if fn in (CR._pow, CR._np_pow) and kinds[1] == "r":
        b = np.abs(b) + 0.5 if shapes[1] else abs(b) + 0.5
    if fn in (CR._div, CR._np_div) and kinds[1] == "r":  # (a real divisor away from 0)
        b = np.sign(b) * (np.abs(b) + 0.5) if shapes[1] else math.copysign(abs(b) + 0.5, b)
    check(fn, a, b)


def test_a_negative_real_base_to_a_complex_power():
    check(lambda x, w: x ** w, -np.abs(rand(3)) - 0.5, crand(3))
    check(lambda x, w: np.power(x, w), -1.5, 0.5 + 0.25j)


@pytest.mark.parametrize("name,fn,z", CR.STRUCTURAL, ids=[s[0] for s in CR.STRUCTURAL])
def test_structural(name, fn, z):
    check(fn, z)


def test_matmul_mixed_real_and_complex():
    check(lambda a, b: a @ b, CR.R23, crand(3, 2))
    check(lambda a, b: np.einsum("ij,jk->ik", a, b), crand(2, 3), rand(3, 4))


def test_constants_of_a_complex_dtype():
    def f(x):
        z = np.zeros(3, dtype=complex) + np.ones_like(x) * 1j
        return z * x
    check(f, rand(3))


# -- the non-holomorphic functions: rules of their own --------------------------------------------------

@pytest.mark.parametrize("shape", CR.SHAPES, ids=str)
@pytest.mark.parametrize("fn", CR.NONHOLO, ids=lambda f: f.__name__.strip("_"))
def test_non_holomorphic(fn, shape):
    check(fn, crand(*shape))


@pytest.mark.parametrize("fn", [CR._real, CR._imag, CR._abs, CR._angle, CR._angle_deg], ids=lambda f: f.__name__)
def test_non_holomorphic_of_real_values(fn):
    x = rand(4) + np.array([0.3, -0.3, 0.5, -0.5]) * 3  # (away from 0: abs and angle have kinks there)
    check(fn, x)  # (np.angle of a real array: 0 or pi, tangent 0)
    check(lambda v: fn(v * (1.0 - 2.0j)), x)


@pytest.mark.parametrize("fn", CR.KEEPS_REAL, ids=lambda f: f.__name__.strip("_"))
def test_functions_that_keep_a_real_operand_real(fn):
    check(fn, rand(3, 5))


def test_iscomplex_and_isreal_of_complex_values_pass_no_gradient():
    check(CR.kind_tests_of_complex, crand(4))


def test_real_if_close_of_a_complex_value_is_refused():
    with pytest.raises(ComplexError, match="real_if_close"):
        jvp(CR.real_if_close_of_complex, (np.array([1 + 1e-20j, 2 + 0j]),), (np.ones(2, complex),))


def test_abs_and_angle_at_zero_are_zero():
    z, t = np.array([0j, 3 + 4j]), np.array([1.0 + 2.0j, 1.0 + 1.0j])
    np.testing.assert_allclose(jvp(lambda z: np.abs(z), (z,), (t,))[1], [0.0, (3 + 4) / 5])
    np.testing.assert_allclose(jvp(lambda z: np.angle(z), (z,), (t,))[1], [0.0, (3 - 4) / 25])


@pytest.mark.parametrize("name,fn,z", CR.HOLOMORPHIC_MORE + CR.REAL_OF_COMPLEX,
                         ids=[s[0] for s in CR.HOLOMORPHIC_MORE + CR.REAL_OF_COMPLEX])
def test_more_functions(name, fn, z):
    check(fn, z)


def test_erf_and_erfc_of_complex_values():
    special = pytest.importorskip("scipy.special")
    check(lambda z: special.erf(z) * 2.0 + special.erfc(z * 0.5), crand(3))


def max_of_complex(z):
    return np.abs(np.max(z))  # (NumPy orders complex numbers lexicographically: refused)


def test_max_of_complex_values_stays_refused():
    from adjoint_compiler import grad
    for run in (lambda: grad(max_of_complex)(crand(3)), lambda: jvp(max_of_complex, (crand(3),), (crand(3),))):
        with pytest.raises(ComplexError, match="no rule valid for complex"):
            run()


# -- np.fft: the same transform of the tangent, with the same keywords ----------------------------------

@pytest.mark.parametrize("name,fn,shape", CR.FFT, ids=[f[0] for f in CR.FFT])
def test_fft_complex_input(name, fn, shape):
    check(fn, crand(*shape))


@pytest.mark.parametrize("name,fn,shape", CR.RFFT, ids=[f[0] for f in CR.RFFT])
def test_fft_real_input(name, fn, shape):
    check(fn, rand(*shape))


@pytest.mark.parametrize("name,fn,shape", CR.FFT_S + CR.RFFT_N, ids=[f[0] for f in CR.FFT_S + CR.RFFT_N])
def test_fft_sizes_and_real_transforms(name, fn, shape):
    check(fn, crand(*shape) if (name, fn, shape) in CR.FFT_S else rand(*shape))


# -- end to end: real arguments, complex intermediates ------------------------------------------------

def power_spectrum(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def phasor(x, w):
    return np.real(np.sum(np.exp(1j * x) * w))


def filtered(x):
    spec = np.fft.rfft(x)
    spec = spec * np.exp(-np.arange(spec.shape[0]) / 3.0)
    return np.fft.irfft(spec, n=x.shape[0]) * x


def rotated(x):
    z = x[:2] + 1j * x[2:]
    return np.stack([np.angle(z), np.abs(z) ** 2, np.imag(np.conj(z) * z[::-1])])


def with_loop_and_branch(x, n):
    acc = x * (1.0 + 0.5j)
    for i in range(n):
        if x[0] > 0:
            acc = acc * np.exp(1j * x)
        else:
            acc = np.conj(acc) + x
    return np.abs(acc)


def complex_output(x):
    return np.fft.fft(x * np.exp(0.3j * x))


REAL_ARGUMENT = [(power_spectrum, (rand(6),)), (phasor, (rand(4), rand(4))), (filtered, (rand(7),)),
                 (rotated, (rand(4) + 2.0,)), (with_loop_and_branch, (np.abs(rand(3)) + 0.2, 2)),
                 (with_loop_and_branch, (-np.abs(rand(3)) - 0.2, 3)), (complex_output, (rand(5),))]


def _fd_jacobian(f, args, i):
    x = np.asarray(args[i], dtype=float)
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        e = e.reshape(x.shape)
        columns.append((np.asarray(f(*_moved(args, i, e, EPS))) - np.asarray(f(*_moved(args, i, e, -EPS)))) / (2 * EPS))
    out = np.stack(columns, axis=-1)
    return out.reshape(np.shape(f(*args)) + x.shape)


@pytest.mark.parametrize("f,args", REAL_ARGUMENT, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(REAL_ARGUMENT)])
def test_jvp_and_jacfwd_of_real_arguments_with_complex_intermediates(f, args):
    check(f, *args)
    jac = jacfwd(f)(*args)
    want = _fd_jacobian(f, args, 0)
    assert np.shape(jac) == np.shape(want) and _is_complex(jac) == _is_complex(f(*args))
    np.testing.assert_allclose(jac, want, rtol=1e-5, atol=1e-6)


def test_jacfwd_of_a_scalar_with_a_complex_constant_argument():
    def f(x, c):
        return np.real(np.sum(c * np.exp(1j * x)))
    x, c = rand(3), crand(3)
    np.testing.assert_allclose(jacfwd(f)(x, c), _fd_jacobian(f, (x, c), 0), rtol=1e-5, atol=1e-6)


def test_the_generated_code_is_readable():
    src = jvp_source(power_spectrum, (rand(4),))
    assert "np.fft.fft(x_dot" in src and "rt.abs_direction" in src


# -- end to end: complex arguments, mixed with real ones ----------------------------------------------

def test_complex_arguments_mixed_with_real_ones():
    check(lambda x, z: np.sin(z) * x + z ** 2 / (x + 2.0), rand(4), crand(4))
    check(lambda a, z: np.abs(a @ z) + np.imag(np.trace(np.outer(z, z))), crand(3, 4), crand(4))
    check(lambda z, x: np.where(x > 0, z, z * 2.0), crand(4), rand(4))


@pytest.mark.parametrize("n", [0, 2])
def test_complex_arguments_through_a_loop(n):
    def f(z, x, n):
        acc = x * 1.0
        for i in range(n):
            acc = acc * z + 0.5
        return np.real(acc) + np.imag(acc) * 0.3
    check(f, crand(3) * 0.5, rand(3), n)


def test_complex_scalars_keep_their_types():
    def f(z, x):
        return z * z * x + np.abs(z) * x
    check(f, 0.3 + 0.8j, 1.5)
    _, tangent = jvp(f, (0.3 + 0.8j, 1.5), (1j, 0.0))
    assert type(tangent) is complex
    _, tangent = jvp(lambda z: np.abs(z), (0.3 + 0.8j,), (1.0 + 0.0j,))
    assert type(tangent) is float
    z64 = crand(3).astype(np.complex64)
    assert jvp(lambda z: z * 2.0, (z64,), (np.ones(3),))[1].dtype.kind == "c"


def test_a_real_tangent_of_a_complex_argument_is_the_real_direction():
    z = crand(3)
    np.testing.assert_allclose(jvp(lambda z: np.exp(z), (z,), (np.ones(3),))[1], np.exp(z))


# -- refusals -------------------------------------------------------------------------------------------

def _assert_located(err, f):
    lines, start = inspect.getsourcelines(f)
    assert err.loc is not None and err.loc.file == inspect.getsourcefile(f)
    assert start <= err.loc.line < start + len(lines)


def _adjoint_side_e2e():
    """tests/e2e/test_complex.py, whose refusal lists forward mode shares."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "e2e" / "test_complex.py"
    spec = importlib.util.spec_from_file_location("complex_e2e_lists", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


E2E = _adjoint_side_e2e()


@pytest.mark.parametrize("f", E2E.REFUSED + E2E.REFUSED_REAL, ids=lambda f: f.__name__)
def test_functions_outside_the_allow_list_refuse_complex_values_in_forward_mode(f):
    arg = rand(4) if f in E2E.REFUSED_REAL else crand(4)
    tangent = np.ones(4) if f in E2E.REFUSED_REAL else np.ones(4) * (1 + 1j)
    with pytest.raises(ComplexError) as info:
        jvp(f, (arg,), (tangent,))
    assert isinstance(info.value, AdjointCompilerError)
    _assert_located(info.value, f)


def sign_of_complex(x):
    z = np.exp(1j * x)
    return np.real(np.sign(z))  # <- HERE


def maximum_of_complex(x):
    z = x * 1j
    return np.abs(np.maximum(z, 0.5))  # <- HERE


@pytest.mark.parametrize("f", [sign_of_complex, maximum_of_complex], ids=lambda f: f.__name__)
def test_real_arguments_refused_at_the_line_of_a_complex_value_without_a_rule(f):
    lines, first = inspect.getsourcelines(f)
    line = next(first + k for k, text in enumerate(lines) if "# <- HERE" in text)
    for run in (lambda: jvp(f, (rand(3),), (rand(3),)), lambda: jacfwd(f)(rand(3))):
        with pytest.raises(ComplexError, match="no rule valid for complex") as info:
            run()
        assert info.value.loc is not None and info.value.loc.line == line


def test_a_user_rule_replaces_the_complex_tangent_and_refuses():
    from adjoint_compiler import tangent

    def my_exp(z):
        return np.exp(z)

    @tangent(my_exp)
    def _(y, z):
        y_dot = z_dot * y  # noqa: F821, F841 (a rule template)

    @adjoint(my_exp)
    def _(y, z):
        z_bar += y_bar * y  # noqa: F821, F841 (a rule template)

    def f(z):
        return np.abs(my_exp(z))
    with pytest.raises(ComplexError, match="no rule valid for complex"):
        jvp(f, (crand(3),), (np.ones(3),))
    assert np.isfinite(jvp(f, (rand(3),), (np.ones(3),))[1]).all()  # (real values: the user's rule)


def test_argument_refusals():
    with pytest.raises(ArgumentError, match="real numbers"):
        jvp(np.sin, (rand(3),), (np.ones(3) * 1j,))  # a real argument takes a real tangent
    with pytest.raises(ArgumentError, match="jacfwd .* complex"):
        jacfwd(lambda z: z * 2.0)(crand(3))
    with pytest.raises(ArgumentError, match="complex"):
        jvp(lambda p: p[0] * 2.0, ((crand(3), 1.0),), ((np.ones(3), 0.0),))  # (inside a container)


def test_higher_order_with_complex_values_is_refused_at_the_line():
    def f(x):
        return np.sum(np.abs(np.exp(1j * x)) * x)
    with pytest.raises(ComplexError, match="differentiated again") as info:
        hessian(f)(rand(3))
    _assert_located(info.value, f)


def test_a_power_that_turns_complex_at_run_time_is_refused_when_the_result_may_be_complex():
    def f(x, z):
        return z * (x ** 0.5)
    np.testing.assert_allclose(jvp(f, (2.0, 1j), (1.0, 0j))[1], 0.5j / np.sqrt(2.0))
    with pytest.raises(ComplexError, match="became complex at run time"):
        jvp(f, (-2.0, 1j), (1.0, 0j))


def test_a_complex_constant_as_a_branch_value():
    def g(x, z):
        if x > 0:
            w = 1j
        else:
            w = z
        return w * x
    check(g, 2.0, 0.5 + 1j)
    check(g, -2.0, 0.5 + 1j)


def test_a_complex_output_not_varied_has_a_complex_zero_tangent():
    def f(x, z):
        return z * 2.0, x * 1j, np.sum(z)
    _, (a, b, c) = jvp(f, (rand(3), crand(3)), (np.ones(3), np.zeros(3)))
    assert a.dtype.kind == "c" and not a.any() and b.dtype.kind == "c" and type(c) is complex
    _, tangent = jvp(lambda x, z: z, (1.0, 1j), (1.0, 0j))
    assert tangent == 0 and type(tangent) is complex


def test_check_jvp_takes_complex_arguments_and_outputs():
    from adjoint_compiler.testing import check_jvp

    def f(z, x):
        return np.sin(z) * x + np.conj(z)
    check_jvp(f, crand(3), rand(3))
    check_jvp(f, 0.5 + 1j, 2.0)
    check_jvp(power_spectrum, rand(4))

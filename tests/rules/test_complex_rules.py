"""The rules valid for complex operands (rules/complex.py), each against finite differences in the
real and the imaginary part separately, over scalar, vector, matrix and broadcast shapes.

Convention (autograd's and JAX's): for a real loss L and z = x + iy the gradient is
dL/dx - i dL/dy. Every primitive is checked through two real losses of its complex result w:
sum(real(w) * R1 + imag(w) * R2) (every direction of w) and sum(abs(w) * R1).
"""
from __future__ import annotations

import math
import operator
import warnings
import zlib

import numpy as np
import pytest

from adjoint_compiler import grad, value_and_grad, vjp
from adjoint_compiler.testing import check_grads

pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _inputs_of_this_test(request):
    """Each test draws its inputs from a generator seeded by its own id (the same numbers in any
    order and on any worker: a failure reproduces alone)."""
    RNG.bit_generator.state = np.random.default_rng(zlib.crc32(request.node.nodeid.encode())).bit_generator.state


def crand(*shape, scale=1.0):
    """A complex array (or a Python complex for shape ()) away from 0 and the negative real axis."""
    if not shape:
        return complex(0.6 + 0.4 * RNG.random(), 0.3 + 0.5 * RNG.random())
    return (0.4 + RNG.random(shape)) * scale + 1j * (RNG.random(shape) - 0.5) * scale


def rand(*shape):
    return RNG.standard_normal(shape) if shape else float(RNG.standard_normal())


def fd_complex(f, args, i, eps=1e-6):
    """dL/dx - i dL/dy of argument i by central differences (dL/dx for a real argument)."""
    z = np.asarray(args[i])
    cplx = np.iscomplexobj(z)
    out = np.zeros(z.shape, complex if cplx else float)
    for idx in np.ndindex(z.shape):
        for part, unit in ((1.0, 1.0), (-1j, 1j)) if cplx else ((1.0, 1.0),):
            def at(t, idx=idx, unit=unit):
                a = list(args)
                w = np.array(z, dtype=z.dtype, copy=True)
                w[idx] = w[idx] + t * unit
                a[i] = w if isinstance(args[i], np.ndarray) else \
                    w[()] if isinstance(args[i], np.generic) else w[()].item()
                return f(*a)
            out[idx] += part * (at(eps) - at(-eps)) / (2 * eps)
    return out


def check(f, *args, wrt=0, rtol=1e-5, atol=1e-6, modes=True):
    """grad (and with `modes`, vjp: the split code; value_and_grad's joint code is grad's with the
    value returned, `test_value_and_grad_of_complex_values`) of f against finite differences in x and y;
    the gradient has the argument's shape and (complex or real) kind."""
    wrts = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    g = grad(f, wrts)(*args)
    found = [g]
    if modes:
        value, pullback = vjp(f, *args)
        np.testing.assert_allclose(value, f(*args), rtol=1e-12)
        g3 = pullback(1.0)
        found += [tuple(g3[i] for i in wrts)]
    for k, i in enumerate(wrts):
        want = fd_complex(f, list(args), i)
        for got in (results[k] for results in found):
            assert np.shape(got) == np.shape(args[i])
            assert np.iscomplexobj(got) == np.iscomplexobj(args[i]), (got, args[i])
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    check_grads(f, *args, wrt=wrt, rtol=rtol, atol=atol)  # (random directions, through the library helper)


def losses(fn, shape_like, arity=1):
    """Two real losses of w = fn(...): every direction of w, and its modulus."""
    r1, r2 = RNG.standard_normal(np.shape(shape_like)) + 0.5, RNG.standard_normal(np.shape(shape_like))
    if arity == 2:
        def parts2(a, b):
            w = fn(a, b)
            return np.sum(np.real(w) * r1 + np.imag(w) * r2)

        def modulus2(a, b):
            w = fn(a, b)
            return np.sum(np.abs(w) * r1)
        return parts2, modulus2

    def parts(z):
        w = fn(z)
        return np.sum(np.real(w) * r1 + np.imag(w) * r2)

    def modulus(z):
        w = fn(z)
        return np.sum(np.abs(w) * r1)
    return parts, modulus


def _exp(z): return np.exp(z)
def _log(z): return np.log(z)
def _sqrt(z): return np.sqrt(z)
def _square(z): return np.square(z)
def _reciprocal(z): return np.reciprocal(z)
def _sin(z): return np.sin(z)
def _cos(z): return np.cos(z)
def _tan(z): return np.tan(z)
def _sinh(z): return np.sinh(z)
def _cosh(z): return np.cosh(z)
def _tanh(z): return np.tanh(z)
def _exp2(z): return np.exp2(z)
def _expm1(z): return np.expm1(z)
def _log1p(z): return np.log1p(z)
def _log10(z): return np.log10(z)
def _log2(z): return np.log2(z)
def _neg(z): return -z
def _negative(z): return np.negative(z)
def _pos(z): return +z
def _pow_int(z): return z ** 3
def _pow_half(z): return z ** 0.5
def _pow_neg(z): return z ** -2
def _square_op(z): return z * z
def _conj(z): return np.conj(z)
def _conj_method(z): return z.conj()
def _conjugate(z): return np.conjugate(z) * z
def _copy(z): return np.copy(z) * 2.0
def _copy_method(z): return z.copy() * z
def _astype(z): return z.astype(complex) * z


UNARY = [_exp, _log, _sqrt, _square, _reciprocal, _sin, _cos, _tan, _sinh, _cosh, _tanh, _exp2, _expm1, _log1p,
         _log10, _log2, _neg, _negative, _pos, _pow_int, _pow_half, _pow_neg, _square_op, _conj, _conj_method,
         _conjugate, _copy, _copy_method, _astype]
SHAPES = [(), (2, 3)]  # (a number and an array; the broadcasting shapes are the binary ones)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__.strip("_"))
def test_unary(fn, shape):
    z = crand(*shape)
    if fn in (_astype, _conj_method, _copy_method) and shape == ():
        z = np.complex128(z)  # (methods of an array or a NumPy scalar; a Python complex has no .conj())
    for k, loss in enumerate(losses(fn, z)):  # (every entry point on the first loss)
        check(loss, z, modes=k == 0)


def _add(a, b): return a + b
def _sub(a, b): return a - b
def _mul(a, b): return a * b
def _div(a, b): return a / b
def _pow(a, b): return a ** b
def _np_add(a, b): return np.add(a, b)
def _np_sub(a, b): return np.subtract(a, b)
def _np_mul(a, b): return np.multiply(a, b)
def _np_div(a, b): return np.divide(a, b)
def _np_pow(a, b): return np.power(a, b)


BINARY = [_add, _sub, _mul, _div, _pow, _np_add, _np_sub, _np_mul, _np_div, _np_pow]
PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3))]


# the operators over every pair of shapes; their np.* spellings (the same rules) over a broadcast one
BINARY_CASES = [(fn, shapes) for fn in BINARY for shapes in (PAIRS if not fn.__name__.startswith("_np") else PAIRS[2:3])]


@pytest.mark.parametrize("kinds", ["cc", "cr", "rc"])
@pytest.mark.parametrize("fn,shapes", BINARY_CASES, ids=lambda v: v.__name__.strip("_") if callable(v) else str(v))
def test_binary(fn, shapes, kinds):
    a = crand(*shapes[0]) if kinds[0] == "c" else np.abs(rand(*shapes[0])) + 0.5
    b = crand(*shapes[1]) if kinds[1] == "c" else rand(*shapes[1])
    if fn in (_pow, _np_pow) and kinds[1] == "r":
        b = np.abs(b) + 0.5 if shapes[1] else abs(b) + 0.5
    if fn in (_div, _np_div) and kinds[1] == "r":  # (a real divisor away from 0: finite differences stay accurate)
        b = np.sign(b) * (np.abs(b) + 0.5) if shapes[1] else math.copysign(abs(b) + 0.5, b)
    out = fn(a, b)
    for k, loss in enumerate(losses(fn, out, 2)):  # (every entry point on the first loss)
        check(loss, a, b, wrt=(0, 1), modes=k == 0)


# -- linear and structural ------------------------------------------------------------------------

Z23 = crand(2, 3)
Z3 = crand(3)
Z33 = crand(3, 3)
R23 = rand(2, 3)

STRUCTURAL = [
    ("sum", lambda z: np.sum(z), Z23),
    ("sum_axis", lambda z: np.sum(z, axis=0), Z23),
    ("sum_method", lambda z: z.sum(axis=1, keepdims=True), Z23),
    ("mean", lambda z: np.mean(z, axis=1), Z23),
    ("mean_method", lambda z: z.mean(), Z23),
    ("reshape", lambda z: np.reshape(z, (3, 2)), Z23),
    ("reshape_method", lambda z: z.reshape(6), Z23),
    ("ravel", lambda z: np.ravel(z), Z23),
    ("flatten", lambda z: z.flatten(), Z23),
    ("transpose", lambda z: np.transpose(z), Z23),
    ("transpose_method", lambda z: z.transpose(), Z23),
    ("T", lambda z: z.T * 2.0, Z23),
    ("swapaxes", lambda z: np.swapaxes(z, 0, 1), Z23),
    ("expand_dims", lambda z: np.expand_dims(z, 0), Z23),
    ("squeeze", lambda z: np.squeeze(z[None]), Z23),
    ("getitem_int", lambda z: z[1], Z23),
    ("getitem_slice", lambda z: z[:, 1:], Z23),
    ("getitem_fancy", lambda z: z[[0, 1, 1], [2, 0, 2]], Z23),
    ("getitem_mask", lambda z: z[np.array([[True, False, True], [False, True, True]])], Z23),
    ("concatenate", lambda z: np.concatenate([z, 2.0 * z], axis=1), Z23),
    ("stack", lambda z: np.stack([z, z * z]), Z23),
    ("hstack", lambda z: np.hstack([z, z]), Z3),
    ("vstack", lambda z: np.vstack([z, z]), Z3),
    ("matmul", lambda z: z @ z, Z33),
    ("matmul_vec", lambda z: z @ z[0], Z33),
    ("matmul_vecvec", lambda z: z[0] @ z[1], Z33),
    ("np_matmul", lambda z: np.matmul(z, z.T), Z23),
    ("dot", lambda z: np.dot(z, z), Z33),
    ("dot_method", lambda z: z.dot(z[:, 0]), Z33),
    ("outer", lambda z: np.outer(z, z * 1.5), Z3),
    ("einsum", lambda z: np.einsum("ij,jk->ik", z, z), Z33),
    ("einsum_trace", lambda z: np.einsum("ii", z), Z33),
    ("tensordot", lambda z: np.tensordot(z, z, axes=1), Z33),
    ("trace", lambda z: np.trace(z), Z33),
    ("trace_method", lambda z: z.trace(), Z33),
    ("diag_of_matrix", lambda z: np.diag(z), Z33),
    ("diag_of_vector", lambda z: np.diag(z), Z3),
    ("where", lambda z: np.where(np.array([True, False, True]), z, 2.0 * z), Z3),
    ("where_scalar", lambda z: np.where(np.array([True, False, True]), z, 0.0), Z3),
]


@pytest.mark.parametrize("name,fn,z", STRUCTURAL, ids=[s[0] for s in STRUCTURAL])
def test_structural(name, fn, z):
    # (a linear map: the loss reading every direction of its output decides its adjoint; the modulus
    # loss would test np.abs again, as test_non_holomorphic does. grad alone: the rule is the same
    # in every entry point, which test_unary and test_binary go through)
    check(losses(fn, fn(z))[0], z, modes=False)


def test_matmul_mixed_real_and_complex():
    def f(a, b):
        return np.sum(np.abs(a @ b) ** 2)
    check(f, R23, crand(3, 2), wrt=(0, 1))
    check(f, crand(2, 3), rand(3, 4), wrt=(0, 1))


# -- the non-holomorphic functions ----------------------------------------------------------------

def _real(z): return np.real(z) * 1.5
def _imag(z): return np.imag(z) * 1.5
def _real_attr(z): return z.real * z.imag
def _abs(z): return np.abs(z)
def _abs_builtin(z): return abs(z)
def _angle(z): return np.angle(z)
def _angle_deg(z): return np.angle(z, deg=True)
def _abs2(z): return np.real(z * np.conj(z))
def _absolute(z): return np.absolute(z) ** 2


NONHOLO = [_real, _imag, _real_attr, _abs, _abs_builtin, _angle, _angle_deg, _abs2, _absolute]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn", NONHOLO, ids=lambda f: f.__name__.strip("_"))
def test_non_holomorphic(fn, shape):
    z = crand(*shape)
    r = RNG.standard_normal(shape) + 2.0

    def loss(z):
        return np.sum(fn(z) * r)
    check(loss, z)


# Functions that keep a real operand real (conj of a real array is itself, fftshift a permutation,
# real_if_close of a real array is it; iscomplex and isreal are nondifferentiable): real losses.
def _weights(x): return np.arange(1.0, x.size + 1).reshape(x.shape)
def _conj_of_real(x): return np.sum(np.conj(x) * x * _weights(x) + np.conjugate(x) ** 3 + x.conj() * np.sin(x))
def _shifts_of_real(x): return np.sum((np.fft.fftshift(x) * x + np.fft.ifftshift(x, axes=0) + np.real_if_close(x) ** 2) * _weights(x))
def _iscomplex_isreal(x): return np.sum(np.where(np.iscomplex(x), 0.0, x * x) + np.where(np.isreal(x), x, 0.0))


KEEPS_REAL = [_conj_of_real, _shifts_of_real, _iscomplex_isreal]


@pytest.mark.parametrize("fn", KEEPS_REAL, ids=lambda f: f.__name__.strip("_"))
def test_functions_that_keep_a_real_operand_real(fn):
    check(fn, rand(3, 5))  # (odd lengths: fftshift and ifftshift differ)


def kind_tests_of_complex(z):
    return np.sum(np.where(np.isreal(z), 0.0, np.abs(z)) + np.where(np.iscomplex(z), np.real(z), 0.0)) \
        + np.isrealobj(z) + np.iscomplexobj(z)


def test_iscomplex_and_isreal_of_complex_values_pass_no_gradient():
    z = crand(4)
    check(kind_tests_of_complex, z, modes=False)  # (no entry real: away from the jump)
    z[1] = 2.0
    g = grad(kind_tests_of_complex)(z)
    assert g[1] == 0 and np.iscomplexobj(g)
    np.testing.assert_allclose(g[[0, 2, 3]], np.conj(z[[0, 2, 3]]) / np.abs(z[[0, 2, 3]]) + 1.0)


def real_if_close_of_complex(z):
    return np.sum(np.abs(np.real_if_close(z)))  # (real or complex, by the values: refused)


def test_real_if_close_of_a_complex_value_is_refused():
    from adjoint_compiler.errors import ComplexError
    with pytest.raises(ComplexError, match="real_if_close") as info:
        grad(real_if_close_of_complex)(np.array([1 + 1e-20j, 2 + 0j]))
    assert info.value.loc is not None and info.value.loc.line == real_if_close_of_complex.__code__.co_firstlineno + 1


def test_abs_at_zero_is_zero():
    def f(z):
        return np.sum(np.abs(z))
    g = grad(f)(np.array([0j, 3 + 4j]))
    np.testing.assert_allclose(g, [0.0, (3 - 4j) / 5])

    def h(z):
        return np.sum(np.angle(z))
    np.testing.assert_allclose(grad(h)(np.array([0j, 1j])), [0.0, -1.0])


# -- more holomorphic functions, and real results of complex values ---------------------------------

# (points in every quadrant, near but off the cuts: arccosh (-inf, 1); arcsinh i(-inf, -1], i[1, inf);
# arctanh (-inf, -1], [1, inf). sqrt(z*z - 1) would have the wrong sign for arccosh at Re z < 0.)
BRANCHES = np.array([[-2 + 0.1j, -0.5 - 0.7j, 0.3 + 2j, 2 - 0.5j, -1.5 - 3j, -0.2 + 0.05j],
                     [-2 + 3j, 0.5 + 2j, -0.5 - 2j, -3 + 0.2j, 1 - 1j, 0.1 + 0.5j],
                     [-2 + 0.3j, 1.5 - 0.2j, 0.3 + 2j, -0.4 - 0.1j, -3 - 1j, 0.5 + 0.5j]])
HOLOMORPHIC_MORE = [
    ("kron", lambda z: np.kron(z[:, :2], z[::-1, :2] * 2.0) + np.kron(z[0], z).sum(), crand(2, 3)),
    ("prod", lambda z: np.prod(z, axis=0, keepdims=True) + np.prod(z) + z.prod(axis=1)[:, None], crand(3, 2)),
    ("inverse_hyperbolic", lambda z: np.stack([np.arccosh(z[0]), np.arcsinh(z[1]), np.arctanh(z[2])]), BRANCHES),
]


@pytest.mark.parametrize("name,fn,z", HOLOMORPHIC_MORE, ids=[s[0] for s in HOLOMORPHIC_MORE])
def test_holomorphic_more(name, fn, z):
    check(losses(fn, fn(z))[0], z, modes=False)  # (every direction of the result; the modulus adds only abs)


def test_erf_and_erfc_of_complex_values():
    special = pytest.importorskip("scipy.special")

    def f(z):
        return np.sum(np.real(special.erf(z)) * 1.5 + np.imag(special.erfc(z * 0.5)) + np.abs(special.erf(z)))
    check(f, crand(3))


Z4 = crand(4)
REAL_OF_COMPLEX = [
    ("vector_norms", lambda z: np.stack([np.linalg.norm(z), np.linalg.norm(z, 1), np.linalg.norm(z, 3),
                                         np.linalg.norm(z, np.inf)]), Z4),
    ("norm_axis", lambda z: np.linalg.norm(z, axis=1, keepdims=True), Z23),
    ("matrix_norms", lambda z: np.stack([np.linalg.norm(z), np.linalg.norm(z, "fro"), np.linalg.norm(z, 1),
                                         np.linalg.norm(z, np.inf), np.linalg.norm(z, 2), np.linalg.norm(z, "nuc"),
                                         np.linalg.norm(z, -2)]), Z33),
    ("var_std", lambda z: np.var(z) + np.var(z, axis=0, ddof=1)[:, None] + z.var(axis=1) + np.std(z, axis=1, keepdims=True)
     + z.std(), crand(3, 3)),
]


@pytest.mark.parametrize("name,fn,z", REAL_OF_COMPLEX, ids=[s[0] for s in REAL_OF_COMPLEX])
def test_real_results_of_complex_values(name, fn, z):
    check(losses(fn, fn(z))[0], z, modes=name == "var_std")  # (a real result: no np.real needed)


# -- np.fft ---------------------------------------------------------------------------------------

FFT = [
    ("fft", lambda z: np.fft.fft(z), (5,)),
    ("fft_n_short", lambda z: np.fft.fft(z, 3), (5,)),
    ("fft_n_long", lambda z: np.fft.fft(z, n=8), (5,)),
    ("fft_axis0", lambda z: np.fft.fft(z, axis=0), (4, 3)),
    ("fft_ortho", lambda z: np.fft.fft(z, norm="ortho"), (4, 3)),
    ("fft_forward", lambda z: np.fft.fft(z, norm="forward"), (6,)),
    ("fft_backward", lambda z: np.fft.fft(z, 4, 0, "backward"), (3, 2)),
    ("ifft", lambda z: np.fft.ifft(z), (5,)),
    ("ifft_n", lambda z: np.fft.ifft(z, n=7, axis=0), (4, 2)),
    ("ifft_ortho", lambda z: np.fft.ifft(z, norm="ortho"), (6,)),
    ("fft2", lambda z: np.fft.fft2(z), (3, 4)),
    ("fft2_axes", lambda z: np.fft.fft2(z, axes=(0, 2)), (2, 3, 4)),
    ("ifft2", lambda z: np.fft.ifft2(z, norm="ortho"), (3, 4)),
    ("fftn", lambda z: np.fft.fftn(z), (2, 3, 2)),
    ("fftn_axes", lambda z: np.fft.fftn(z, axes=(1,), norm="forward"), (2, 3, 2)),
    ("ifftn", lambda z: np.fft.ifftn(z), (3, 4)),
    ("fftshift", lambda z: np.fft.fftshift(z) * np.arange(1.0, 6.0), (5,)),
    ("fftshift_axes", lambda z: np.fft.fftshift(z, axes=0) * np.arange(1.0, 5.0)[:, None], (4, 3)),
    ("ifftshift", lambda z: np.fft.ifftshift(z) * np.arange(1.0, 7.0), (6,)),
    ("irfft", lambda z: np.fft.irfft(z), (5,)),
    ("irfft_n_even", lambda z: np.fft.irfft(z, n=6), (4,)),
    ("irfft_n_odd", lambda z: np.fft.irfft(z, n=7), (4,)),
    ("irfft_n_short", lambda z: np.fft.irfft(z, n=4), (5,)),
    ("irfft_n_long", lambda z: np.fft.irfft(z, n=12), (4,)),
    ("irfft_axis_norm", lambda z: np.fft.irfft(z, axis=0, norm="ortho"), (4, 2)),
    ("irfft_forward", lambda z: np.fft.irfft(z, 5, norm="forward"), (3,)),
]


@pytest.mark.parametrize("name,fn,shape", FFT, ids=[f[0] for f in FFT])
def test_fft_complex_input(name, fn, shape):
    z = crand(*shape)
    check(losses(fn, fn(z))[0], z, modes=False)  # (linear: every direction of the output, as test_structural)


RFFT = [
    ("rfft", lambda x: np.fft.rfft(x), (6,)),
    ("rfft_odd", lambda x: np.fft.rfft(x), (5,)),
    ("rfft_n_short", lambda x: np.fft.rfft(x, 4), (7,)),
    ("rfft_n_long", lambda x: np.fft.rfft(x, n=9), (5,)),
    ("rfft_axis", lambda x: np.fft.rfft(x, axis=0), (4, 3)),
    ("rfft_ortho", lambda x: np.fft.rfft(x, norm="ortho"), (3, 6)),
    ("rfft_forward", lambda x: np.fft.rfft(x, norm="forward"), (6,)),
    ("fft_of_real", lambda x: np.fft.fft(x), (5,)),
    ("fft2_of_real", lambda x: np.fft.fft2(x), (3, 4)),
    ("ifft_of_real", lambda x: np.fft.ifft(x, 7), (5,)),
    ("irfft_of_real", lambda x: np.fft.irfft(x), (5,)),
]


@pytest.mark.parametrize("name,fn,shape", RFFT, ids=[f[0] for f in RFFT])
def test_fft_real_input(name, fn, shape):
    x = rand(*shape)
    check(losses(fn, fn(x))[0], x, modes=False)  # (linear: every direction of the output, as test_structural)


# `s=` (cut or zero-padded before the transform) and the real n-dimensional transforms: odd last
# lengths, `axes=`, `norm=` (one loss each, grad only: the entry points are checked above).
FFT_S = [
    ("fft2_s", lambda z: np.fft.fft2(z, s=(4, 2)), (3, 3)),
    ("ifft2_s", lambda z: np.fft.ifft2(z, (2, 5), norm="ortho"), (3, 3)),
    ("fftn_s_axes", lambda z: np.fft.fftn(z, s=(4,), axes=(0,), norm="forward"), (2, 3, 2)),
    ("ifftn_s", lambda z: np.fft.ifftn(z, (3, 1, 4), axes=(0, 1, 2)), (2, 3, 2)),
    ("irfft2", lambda z: np.fft.irfft2(z), (3, 4)),
    ("irfft2_s_odd", lambda z: np.fft.irfft2(z, s=(3, 5), norm="ortho"), (3, 3)),
    ("irfftn_s_axes", lambda z: np.fft.irfftn(z, s=(4, 3), axes=(0, 2)), (3, 2, 3)),
    ("irfftn_s_long", lambda z: np.fft.irfftn(z, s=(5, 8), axes=(0, 1), norm="forward"), (3, 3)),
    ("irfftn", lambda z: np.fft.irfftn(z), (2, 2, 3)),
    ("fft2_3d", lambda z: np.fft.fft2(z) + np.fft.ifft2(z, axes=None), (2, 3, 2)),  # (axes=None given: every axis)
    ("irfft2_axes_none", lambda z: np.fft.irfft2(z, None, None), (2, 3, 2)),
]
RFFT_N = [
    ("rfft2_odd", lambda x: np.fft.rfft2(x), (4, 5)),
    ("rfftn", lambda x: np.fft.rfftn(x, norm="forward"), (2, 3, 3)),
    ("rfftn_s_axes", lambda x: np.fft.rfftn(x, s=(4, 3), axes=(0, 2), norm="ortho"), (3, 2, 4)),
    ("irfftn_of_real", lambda x: np.fft.irfftn(x, s=(3, 5), axes=(0, 1)), (3, 3)),
    ("rfft2_3d", lambda x: np.fft.rfft2(x, (3, 4))[:, :, :2] * 2.0 + np.fft.rfft2(x, axes=None), (2, 3, 3)),
]


@pytest.mark.parametrize("name,fn,shape", FFT_S + RFFT_N, ids=[f[0] for f in FFT_S + RFFT_N])
def test_fft_sizes_and_real_transforms(name, fn, shape):
    z = crand(*shape) if (name, fn, shape) in FFT_S else rand(*shape)
    check(losses(fn, fn(z))[0], z, modes=False)


def test_fft_roundtrip_and_power():
    def f(x):
        return np.sum(np.abs(np.fft.fft(x)) ** 2)
    x = rand(8)
    np.testing.assert_allclose(grad(f)(x), 2 * 8 * x)  # Parseval: sum |X|^2 = n sum x^2

    def g(z):
        return np.sum(np.real(np.fft.ifft(np.fft.fft(z)) * np.conj(z)))
    check(g, crand(6))


@pytest.mark.parametrize("source", [
    "np.fft.fft2(z, out=np.zeros((3, 3), complex))",
    "np.fft.hfft(z)",
    "np.fft.ihfft(np.real(z))",
    "np.fft.rfft2(z)",
    "np.fft.rfftn(z * 2.0)",
    "np.fft.rfft(z)",
])
def test_fft_keywords_and_functions_not_supported_are_refused(source, tmp_path):
    from adjoint_compiler.errors import ComplexError
    path = tmp_path / "fft_case.py"
    path.write_text(f"import numpy as np\n\n\ndef f(z):\n    w = {source}\n    return np.sum(np.abs(w))\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"fft_case_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ComplexError, match="line 5") as info:
            grad(module.f)(crand(3, 3))
    assert info.value.loc is not None and info.value.loc.line == 5


def test_operator_module_functions_are_the_operators():
    # (a rule table keyed by the operator functions: `a * b` and np.multiply share one record)
    from adjoint_compiler import registry
    assert registry.lookup_complex(operator.mul).rule is registry.lookup(operator.mul)
    assert registry.lookup_complex(np.maximum) is None


def test_a_negative_real_base_to_a_complex_power():
    def f(x, w):
        return np.sum(np.abs(x ** w) + np.real(np.power(x, w)))
    check(f, -np.abs(rand(3)) - 0.5, crand(3), wrt=(0, 1))
    check(f, -1.5, 0.5 + 0.25j, wrt=(0, 1))


def test_value_and_grad_of_complex_values():
    """value_and_grad (the joint code) on complex arguments and intermediates: the value, and the
    gradient dL/dx - i dL/dy against finite differences."""
    def f(z, w):
        return np.sum(np.abs(np.exp(z) * w + z ** 2) ** 2) + np.real(np.sum(np.conj(z) * w))

    z, w = crand(3), crand(3)
    value, (gz, gw) = value_and_grad(f, (0, 1))(z, w)
    np.testing.assert_allclose(value, f(z, w), rtol=1e-12)
    np.testing.assert_allclose(gz, fd_complex(f, [z, w], 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, fd_complex(f, [z, w], 1), rtol=1e-5, atol=1e-6)


def test_the_fft_frequencies_are_real_numbers_in_real_code_and_second_order():
    from adjoint_compiler import hvp

    def periodogram_weighted(x):
        return np.sum(np.abs(np.fft.fft(x)) ** 2 * np.abs(np.fft.fftfreq(4))) + np.sum(x ** 2 * np.fft.rfftfreq(6)[:4])

    def weighted(x):
        return np.sum(x ** 3 * np.fft.fftfreq(4, d=0.5))

    x = np.array([0.3, 1.2, -0.5, 2.0])
    check_grads(periodogram_weighted, x)
    check_grads(weighted, x)
    np.testing.assert_allclose(hvp(weighted)(x, np.ones(4)), 6 * x * np.fft.fftfreq(4, d=0.5))

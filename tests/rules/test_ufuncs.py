"""Finite-difference tests of the elementwise rules (rules/ufuncs.py), over scalar, vector, matrix
and broadcast shapes, plus the subgradient conventions at kinks and ties."""
import math

import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads

# Each function is weighted by a fixed random `w` (not differentiated) so every entry matters.


def f_sin(x, w): return np.sum(np.sin(x) * w)
def f_cos(x, w): return np.sum(np.cos(x) * w)
def f_tan(x, w): return np.sum(np.tan(x) * w)
def f_arcsin(x, w): return np.sum(np.arcsin(x) * w)
def f_arccos(x, w): return np.sum(np.arccos(x) * w)
def f_arctan(x, w): return np.sum(np.arctan(x) * w)
def f_sinh(x, w): return np.sum(np.sinh(x) * w)
def f_cosh(x, w): return np.sum(np.cosh(x) * w)
def f_tanh(x, w): return np.sum(np.tanh(x) * w)
def f_arcsinh(x, w): return np.sum(np.arcsinh(x) * w)
def f_arccosh(x, w): return np.sum(np.arccosh(x) * w)
def f_arctanh(x, w): return np.sum(np.arctanh(x) * w)
def f_exp(x, w): return np.sum(np.exp(x) * w)
def f_expm1(x, w): return np.sum(np.expm1(x) * w)
def f_exp2(x, w): return np.sum(np.exp2(x) * w)
def f_log(x, w): return np.sum(np.log(x) * w)
def f_log1p(x, w): return np.sum(np.log1p(x) * w)
def f_log2(x, w): return np.sum(np.log2(x) * w)
def f_log10(x, w): return np.sum(np.log10(x) * w)
def f_sqrt(x, w): return np.sum(np.sqrt(x) * w)
def f_cbrt(x, w): return np.sum(np.cbrt(x) * w)
def f_square(x, w): return np.sum(np.square(x) * w)
def f_abs(x, w): return np.sum(np.abs(x) * w)
def f_absolute(x, w): return np.sum(np.absolute(x) * w)
def f_builtin_abs(x, w): return np.sum(abs(x) * w)
def f_negative(x, w): return np.sum(np.negative(x) * w)
def f_positive(x, w): return np.sum(np.positive(x) * w)
def f_reciprocal(x, w): return np.sum(np.reciprocal(x) * w)
def f_deg2rad(x, w): return np.sum(np.deg2rad(x) * w)
def f_rad2deg(x, w): return np.sum(np.degrees(x) * w)
def f_clip(x, w): return np.sum(np.clip(x, -0.5, 0.6) * w)
def f_clip_lower(x, w): return np.sum(np.clip(x, -0.5, None) * w)
def f_clip_method(x, w): return np.sum(x.clip(-0.5, 0.6) * w)
def f_clip_method_kw(x, w): return np.sum(x.clip(max=0.6) * w)
def f_where(x, w): return np.sum(np.where(x > 0.0, x * x, np.sin(x)) * w)
def f_chain(x, w): return np.sum(np.tanh(np.exp(np.sin(x)) * 0.5) * w)

ANY = (-1.5, 1.5)
UNIT = (-0.9, 0.9)
POS = (0.2, 2.0)
UNARY = [
    (f_sin, ANY), (f_cos, ANY), (f_tan, UNIT), (f_arcsin, UNIT), (f_arccos, UNIT), (f_arctan, ANY),
    (f_sinh, ANY), (f_cosh, ANY), (f_tanh, ANY), (f_arcsinh, ANY), (f_arccosh, (1.2, 3.0)),
    (f_arctanh, UNIT), (f_exp, ANY), (f_expm1, ANY), (f_exp2, ANY), (f_log, POS), (f_log1p, POS),
    (f_log2, POS), (f_log10, POS), (f_sqrt, POS), (f_cbrt, POS), (f_square, ANY), (f_abs, ANY),
    (f_absolute, ANY), (f_builtin_abs, ANY), (f_negative, ANY), (f_positive, ANY),
    (f_reciprocal, POS), (f_deg2rad, ANY), (f_rad2deg, ANY), (f_clip, ANY), (f_clip_lower, ANY),
    (f_clip_method, ANY), (f_clip_method_kw, ANY), (f_where, ANY), (f_chain, ANY),
]
SHAPES = {"scalar": (), "vector": (5,), "matrix": (3, 4)}


def sample(rng, shape, domain):
    low, high = domain
    v = rng.uniform(low, high, shape)
    if domain == ANY:  # keep away from the kinks of abs/clip/where at 0, -0.5 and 0.6
        v = np.where(np.abs(v) < 0.05, 0.3, v)
        v = np.where(np.abs(v + 0.5) < 0.05, -0.8, v)
        v = np.where(np.abs(v - 0.6) < 0.05, 0.9, v)
    return float(v) if shape == () else v


def weights(rng, shape):
    w = rng.standard_normal(shape)
    return float(w) if shape == () else w


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("f,domain", UNARY, ids=[f.__name__ for f, _ in UNARY])
def test_unary(f, domain, shape):
    rng = np.random.default_rng(1)
    x = sample(rng, shape, domain)
    if shape == () and f in (f_clip_method, f_clip_method_kw):
        x = np.asarray(x)  # a Python float has no methods; a 0-d array does
    check_grads(f, x, weights(rng, shape))


def f_add(x, y, w): return np.sum(np.add(x, y) * w)
def f_subtract(x, y, w): return np.sum(np.subtract(x, y) * w)
def f_multiply(x, y, w): return np.sum(np.multiply(x, y) * w)
def f_divide(x, y, w): return np.sum(np.divide(x, y) * w)
def f_true_divide(x, y, w): return np.sum(np.true_divide(x, y) * w)
def f_power(x, y, w): return np.sum(np.power(x, y) * w)
def f_float_power(x, y, w): return np.sum(np.float_power(x, y) * w)
def f_maximum(x, y, w): return np.sum(np.maximum(x, y) * w)
def f_minimum(x, y, w): return np.sum(np.minimum(x, y) * w)
def f_fmax(x, y, w): return np.sum(np.fmax(x, y) * w)
def f_fmin(x, y, w): return np.sum(np.fmin(x, y) * w)
def f_hypot(x, y, w): return np.sum(np.hypot(x, y) * w)
def f_arctan2(x, y, w): return np.sum(np.arctan2(x, y) * w)
def f_logaddexp(x, y, w): return np.sum(np.logaddexp(x, y) * w)
def f_logaddexp2(x, y, w): return np.sum(np.logaddexp2(x, y) * w)
def f_fmod(x, y, w): return np.sum(np.fmod(x, y) * w)
def f_mod(x, y, w): return np.sum(np.mod(x, y) * w)
def f_where3(x, y, w): return np.sum(np.where(x > y, x * y, y - x) * w)
def f_clip_bounds(x, y, w): return np.sum(np.clip(x, y, y + 0.5) * w)


BINARY = [(f_add, POS, POS), (f_subtract, POS, POS), (f_multiply, ANY, ANY), (f_divide, POS, POS),
          (f_true_divide, POS, POS), (f_power, POS, POS), (f_float_power, POS, POS), (f_maximum, ANY, ANY),
          (f_minimum, ANY, ANY), (f_fmax, ANY, ANY), (f_fmin, ANY, ANY), (f_hypot, ANY, ANY),
          (f_arctan2, ANY, ANY), (f_logaddexp, ANY, ANY), (f_logaddexp2, ANY, ANY),
          (f_fmod, (2.1, 3.9), (0.7, 0.8)), (f_mod, (2.1, 3.9), (0.7, 0.8)), (f_where3, ANY, ANY),
          (f_clip_bounds, ANY, ANY)]
PAIRS = {"scalars": ((), ()), "vectors": ((5,), (5,)), "matrices": ((3, 4), (3, 4)),
         "column_row": ((3, 1), (4,)), "matrix_scalar": ((3, 4), ()), "scalar_matrix": ((), (3, 4))}


@pytest.mark.parametrize("shapes", PAIRS.values(), ids=PAIRS.keys())
@pytest.mark.parametrize("f,dx,dy", BINARY, ids=[f.__name__ for f, _, _ in BINARY])
def test_binary(f, dx, dy, shapes):
    rng = np.random.default_rng(2)
    x, y = sample(rng, shapes[0], dx), sample(rng, shapes[1], dy)
    out = np.broadcast_shapes(shapes[0], shapes[1])
    check_grads(f, x, y, weights(rng, out), wrt=(0, 1))


# -- the math module (scalars) --------------------------------------------------------------------

def m_sin(x): return math.sin(x) * 1.3
def m_cos(x): return math.cos(x) * 1.3
def m_tan(x): return math.tan(x) * 1.3
def m_asin(x): return math.asin(x) * 1.3
def m_acos(x): return math.acos(x) * 1.3
def m_atan(x): return math.atan(x) * 1.3
def m_sinh(x): return math.sinh(x) * 1.3
def m_cosh(x): return math.cosh(x) * 1.3
def m_tanh(x): return math.tanh(x) * 1.3
def m_asinh(x): return math.asinh(x) * 1.3
def m_acosh(x): return math.acosh(x + 1.0) * 1.3
def m_atanh(x): return math.atanh(x) * 1.3
def m_exp(x): return math.exp(x) * 1.3
def m_expm1(x): return math.expm1(x) * 1.3
def m_log(x): return math.log(x + 1.0) * 1.3
def m_log_base(x): return math.log(x + 1.0, 3.0) * 1.3
def m_log1p(x): return math.log1p(x) * 1.3
def m_log2(x): return math.log2(x + 1.0) * 1.3
def m_log10(x): return math.log10(x + 1.0) * 1.3
def m_sqrt(x): return math.sqrt(x + 1.0) * 1.3
def m_fabs(x): return math.fabs(x) * 1.3
def m_erf(x): return math.erf(x) * 1.3
def m_erfc(x): return math.erfc(x) * 1.3
def m_degrees(x): return math.degrees(x) * 1.3
def m_radians(x): return math.radians(x) * 1.3
def m_floor(x): return math.floor(x) * x + math.ceil(x) + math.trunc(x)


MATH_UNARY = [m_sin, m_cos, m_tan, m_asin, m_acos, m_atan, m_sinh, m_cosh, m_tanh, m_asinh, m_acosh,
              m_atanh, m_exp, m_expm1, m_log, m_log_base, m_log1p, m_log2, m_log10, m_sqrt, m_fabs,
              m_erf, m_erfc, m_degrees, m_radians, m_floor]


@pytest.mark.parametrize("x", [0.37, -0.61])
@pytest.mark.parametrize("f", MATH_UNARY, ids=[f.__name__ for f in MATH_UNARY])
def test_math_unary(f, x):
    if f in (m_log, m_log_base, m_log1p, m_log2, m_log10, m_sqrt, m_acosh):
        x = abs(x)
    check_grads(f, x)


def m_atan2(x, y): return math.atan2(x, y) * 1.3
def m_hypot(x, y): return math.hypot(x, y) * 1.3
def m_pow(x, y): return math.pow(x, y) * 1.3
def m_log_xb(x, y): return math.log(x, y + 1.5) * 1.3
def b_pow(x, y): return pow(x, y) * 1.3


@pytest.mark.parametrize("f", [m_atan2, m_hypot, m_pow, m_log_xb, b_pow])
def test_math_binary(f):
    check_grads(f, 0.7, 1.9, wrt=(0, 1))


def m_cbrt(x): return math.cbrt(x) * 1.3
def m_exp2(x): return math.exp2(x) * 1.3


@pytest.mark.skipif(not hasattr(math, "cbrt"), reason="math.cbrt and math.exp2 need Python 3.11")
@pytest.mark.parametrize("f", [m_cbrt, m_exp2])
def test_math_311(f):
    check_grads(f, 0.7)


# -- subgradient conventions ----------------------------------------------------------------------

def c_abs(x): return np.sum(np.abs(x))
def c_fabs(x): return math.fabs(x)
def c_maximum(x, y): return np.sum(np.maximum(x, y))
def c_minimum(x, y): return np.sum(np.minimum(x, y))
def c_clip(x): return np.sum(np.clip(x, -1.0, 1.0))
def c_clip_bounds(x, lo, hi): return np.sum(np.clip(x, lo, hi))


def test_abs_at_zero_is_zero():
    assert grad(c_abs)(0.0) == 0.0
    assert grad(c_fabs)(0.0) == 0.0
    np.testing.assert_array_equal(grad(c_abs)(np.array([-2.0, 0.0, 3.0])), [-1.0, 0.0, 1.0])


def test_maximum_minimum_ties_split_half():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0])
    gx, gy = grad(c_maximum, (0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])
    gx, gy = grad(c_minimum, (0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0])
    gx, gy = grad(c_maximum, (0, 1))(2.0, 2.0)
    assert (gx, gy) == (0.5, 0.5)


def test_clip_passes_gradient_at_the_bounds():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(grad(c_clip)(x), [0.0, 1.0, 1.0, 1.0, 0.0])
    lo, hi = np.full(5, -1.0), np.full(5, 1.0)
    gx, glo, ghi = grad(c_clip_bounds, (0, 1, 2))(x, lo, hi)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(glo, [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 0.0, 0.0, 1.0])


def test_scalar_gradients_are_floats():
    assert type(grad(m_sin)(0.3)) is float
    assert type(grad(c_maximum, (0, 1))(1.0, 2.0)[0]) is float

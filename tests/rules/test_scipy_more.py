"""Finite-difference tests (adjoint and tangent) of the SciPy rules added for autograd's test
suite: Bessel functions, more gamma and beta functions, the incomplete gamma and beta functions
(in x only: a varied shape parameter or order is refused), scipy.signal.convolve / correlate,
and the scipy.stats distributions. One or two shapes per function: the suite's time is budgeted."""
import numpy as np
import pytest

pytest.importorskip("scipy", reason="scipy is an optional dependency (the test extra installs it)")
from scipy import special

from adjoint_compiler import grad, jvp
from adjoint_compiler.errors import MissingRuleError
from adjoint_compiler.runtime import UndefinedGradientError
from adjoint_compiler.testing import check_grads, check_jvp

rng = np.random.default_rng(2026)


def both(f, *args, wrt=0):
    check_grads(f, *args, wrt=wrt)
    check_jvp(f, *args, wrt=wrt)


# -- scipy.special ------------------------------------------------------------------------------------
def s_j0(x, w): return np.sum(special.j0(x) * w)
def s_j1(x, w): return np.sum(special.j1(x) * w)
def s_y0(x, w): return np.sum(special.y0(x) * w)
def s_y1(x, w): return np.sum(special.y1(x) * w)
def s_jn(x, w): return np.sum(special.jn(2, x) * w)
def s_jv(x, w): return np.sum(special.jv(1.5, x) * w)
def s_yn(x, w): return np.sum(special.yn(3, x) * w)
def s_yv(x, w): return np.sum(special.yv(0.5, x) * w)
def s_i0(x, w): return np.sum(special.i0(x) * w)
def s_i1(x, w): return np.sum(special.i1(x) * w)
def s_i0e(x, w): return np.sum(special.i0e(x) * w)
def s_i1e(x, w): return np.sum(special.i1e(x) * w)
def s_iv(x, w): return np.sum(special.iv(np.array([[0.5], [2.0]]), x) * w)  # orders broadcast against x
def s_ive(x, w): return np.sum(special.ive(1.0, x) * w)
def s_rgamma(x, w): return np.sum(special.rgamma(x) * w)
def s_multigammaln(x, w): return np.sum(special.multigammaln(x, 3) * w)
def s_gammasgn(x, w): return np.sum(special.gammasgn(x) * w + x)


POS, ANY = (0.5, 5.0), (-3.0, 3.0)
UNARY = [(s_j0, POS), (s_j1, ANY), (s_y0, POS), (s_y1, POS), (s_jn, ANY), (s_jv, POS), (s_yn, POS), (s_yv, POS),
         (s_i0, ANY), (s_i1, ANY), (s_i0e, ANY), (s_i1e, ANY), (s_iv, POS), (s_ive, ANY), (s_rgamma, (0.3, 4.0)),
         (s_multigammaln, (1.5, 4.0)), (s_gammasgn, (0.2, 3.0))]


@pytest.mark.parametrize("f, domain", UNARY, ids=[f.__name__ for f, _ in UNARY])
def test_unary(f, domain):
    x = rng.uniform(*domain, 4)
    w = rng.standard_normal((2, 4) if f is s_iv else 4)
    both(f, x, w)


def multigammaln_scalar(a): return special.multigammaln(a, 2) * a


def test_multigammaln_of_a_scalar():
    both(multigammaln_scalar, 2.5)


def s_beta(a, b): return np.sum(special.beta(a, b))
def s_betaln(a, b): return np.sum(special.betaln(a, b) * a)
def s_gammainc(a, x): return np.sum(special.gammainc(a, x) * x)
def s_gammaincc(a, x): return np.sum(special.gammaincc(a, x))
def s_betainc(a, x): return np.sum(special.betainc(a, 2.5, x))


@pytest.mark.parametrize("f", [s_beta, s_betaln])
def test_beta_broadcast(f):
    both(f, rng.uniform(0.5, 3.0, (3, 1)), rng.uniform(0.5, 3.0, 4), wrt=(0, 1))


@pytest.mark.parametrize("f, high", [(s_gammainc, 3.0), (s_gammaincc, 3.0), (s_betainc, 0.9)])
def test_incomplete_in_x(f, high):
    a, x = rng.uniform(0.5, 3.0, (3, 1)), rng.uniform(0.1, high, 4)
    both(f, a, x, wrt=1)


def gammainc_a(a, x): return special.gammainc(a * 2.0, x)
def jv_order(v, x): return special.jv(v, x)
def betainc_b(b, x): return special.betainc(1.5, b, x)


@pytest.mark.parametrize("f, name", [(gammainc_a, "a"), (jv_order, "v"), (betainc_b, "b")])
def test_a_varied_shape_or_order_is_refused_at_its_line(f, name):
    with pytest.raises(MissingRuleError, match=f"argument `{name}`") as info:
        grad(f, wrt=0)(1.5, 0.5)
    assert info.value.loc is not None and info.value.loc.line == f.__code__.co_firstlineno
    with pytest.raises(UndefinedGradientError, match=f"`{name}`"):
        jvp(f, (1.5, 0.5), (1.0, 0.0))
    _, t = jvp(f, (1.5, 0.5), (0.0, 1.0))  # a zero tangent for it is fine
    assert np.isfinite(t)


def bessel_twice(x): return special.j1(x) * special.gammainc(2.0, x) + special.iv(1.0, x) * special.betainc(2.0, 3.0, x)


def test_second_derivatives():
    check_grads(grad(bessel_twice), 0.6)

"""Finite-difference tests (adjoint and tangent) of the SciPy rules added for autograd's test
suite: Bessel functions, more gamma and beta functions, the incomplete gamma and beta functions
(in x only: a varied shape parameter or order is refused), scipy.signal.convolve / correlate,
and the scipy.stats distributions. One or two shapes per function: the suite's time is budgeted."""
import numpy as np
import pytest

pytest.importorskip("scipy", reason="scipy is an optional dependency (the test extra installs it)")
from scipy import signal, special, stats

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


# -- scipy.stats ----------------------------------------------------------------------------------------
X, LOC, SCALE = rng.uniform(-2.0, 2.0, (3, 4)), rng.uniform(-0.5, 0.5, 4), rng.uniform(0.5, 2.0, (3, 1))
XP, SHAPE = rng.uniform(0.2, 4.0, (3, 4)), rng.uniform(1.5, 5.0, 4)


def norm_sf(x, l, s): return np.sum(stats.norm.sf(x, l, s))
def norm_logsf(x, l, s): return np.sum(stats.norm.logsf(x, loc=l, scale=s))
def t_logpdf(x, df, l, s): return np.sum(stats.t.logpdf(x, df, l, s))
def t_pdf(x, df, l, s): return np.sum(stats.t.pdf(x, df, loc=l, scale=s))
def t_cdf(x, df, l, s): return np.sum(stats.t.cdf(x, df, l, scale=s))
def t_logcdf(x, df, l, s): return np.sum(stats.t.logcdf(x, df, loc=l, scale=s))
def chi2_logpdf(x, df, s): return np.sum(stats.chi2.logpdf(x, df, scale=s))
def chi2_pdf(x, df, s): return np.sum(stats.chi2.pdf(x, df, 0.0, s))
def chi2_cdf(x, df, s): return np.sum(stats.chi2.cdf(x, df, scale=s))
def gamma_logpdf(x, a, s): return np.sum(stats.gamma.logpdf(x, a, scale=s))
def gamma_pdf(x, a, s): return np.sum(stats.gamma.pdf(x, a, scale=s))
def gamma_cdf(x, a, s): return np.sum(stats.gamma.cdf(x, a, scale=s))
def beta_logpdf(x, a, b): return np.sum(stats.beta.logpdf(x, a, b))
def beta_pdf(x, a, b): return np.sum(stats.beta.pdf(x, a, b))
def beta_cdf(x, a, b): return np.sum(stats.beta.cdf(x, a, b))


STATS = [(norm_sf, (X, LOC, SCALE), (0, 1, 2)), (norm_logsf, (X, LOC, SCALE), (0, 1, 2)),
         (t_logpdf, (X, SHAPE, LOC, SCALE), (0, 1, 2, 3)), (t_pdf, (X, SHAPE, LOC, SCALE), (0, 1, 2, 3)),
         (t_cdf, (X, SHAPE, LOC, SCALE), (0, 2, 3)), (t_logcdf, (X, SHAPE, LOC, SCALE), (0, 2, 3)),
         (chi2_logpdf, (XP, SHAPE, SCALE), (0, 1, 2)), (chi2_pdf, (XP, SHAPE, SCALE), (0, 1, 2)),
         (chi2_cdf, (XP, SHAPE, SCALE), (0, 2)),
         (gamma_logpdf, (XP, SHAPE, SCALE), (0, 1, 2)), (gamma_pdf, (XP, SHAPE, SCALE), (0, 1, 2)),
         (gamma_cdf, (XP, SHAPE, SCALE), (0, 2)),
         (beta_logpdf, (XP / 4.5, SHAPE, SCALE + 1.0), (0, 1, 2)), (beta_pdf, (XP / 4.5, SHAPE, SCALE + 1.0), (0, 1, 2)),
         (beta_cdf, (XP / 4.5, SHAPE, SCALE + 1.0), (0,))]


@pytest.mark.parametrize("f, args, wrt", STATS, ids=[f.__name__ for f, _, _ in STATS])
def test_distributions(f, args, wrt):
    both(f, *args, wrt=wrt)


def outside_the_support(x, a): return np.sum(np.exp(stats.gamma.logpdf(x, a)) + stats.beta.cdf(x, a, 2.0))


def test_outside_the_support_the_values_are_scipys_and_the_gradient_zero():
    x = np.array([-1.0, 2.0, 0.5])
    np.testing.assert_allclose(outside_the_support(x, 1.5),
                               np.sum(stats.gamma.pdf(x, 1.5) + stats.beta.cdf(x, 1.5, 2.0)))
    g = grad(outside_the_support)(x, 1.5)
    assert g[0] == 0.0 and np.isfinite(g[2])
    check_grads(outside_the_support, x[2:], 1.5, wrt=(0,))


K = np.array([0, 1, 3, 7])


def poisson_logpmf(k, mu): return np.sum(stats.poisson.logpmf(k, mu))
def poisson_pmf(k, mu): return np.sum(stats.poisson.pmf(k, mu, loc=1))
def poisson_cdf(k, mu): return np.sum(stats.poisson.cdf(k, mu))


@pytest.mark.parametrize("f", [poisson_logpmf, poisson_pmf, poisson_cdf])
def test_poisson_in_the_rate(f):
    mu = rng.uniform(0.5, 4.0, (3, 1))
    np.testing.assert_allclose(f(K, mu), np.sum(getattr(stats.poisson, f.__name__[8:])(K, mu, loc=1 if f is poisson_pmf else 0)))
    both(f, K, mu, wrt=1)


def poisson_float_k(k, mu): return np.sum(stats.poisson.logpmf(k, mu))


def test_poisson_k_gets_no_gradient_and_off_integers_is_impossible():
    k = np.array([2.0, 2.5])
    assert poisson_float_k(k, 1.5) == -np.inf
    g = grad(poisson_float_k, wrt=(0, 1))(np.array([2.0, 3.0]), 1.5)
    assert np.all(g[0] == 0.0)


def mvn_logpdf(x, m, c): return np.sum(stats.multivariate_normal.logpdf(x, m, c))
def mvn_pdf(x, m, c): return stats.multivariate_normal.pdf(x, mean=m, cov=c)


@pytest.mark.parametrize("f, n", [(mvn_logpdf, 5), (mvn_pdf, None)])
def test_multivariate_normal(f, n):
    a = rng.standard_normal((3, 3))
    cov, mean = a @ a.T + 3.0 * np.eye(3), rng.standard_normal(3)
    x = rng.standard_normal(3 if n is None else (n, 3))
    expected = getattr(stats.multivariate_normal, f.__name__[4:])(x, mean, cov)
    np.testing.assert_allclose(f(x, mean, cov), np.sum(expected))
    both(f, x, mean, cov, wrt=(0, 1, 2))  # (the gradient goes to the lower triangle SciPy reads)


def dirichlet_logpdf(u, alpha): return np.sum(stats.dirichlet.logpdf(u / np.sum(u, axis=0), alpha))
def dirichlet_pdf(u, alpha): return stats.dirichlet.pdf(u / np.sum(u), alpha)


@pytest.mark.parametrize("f, shape", [(dirichlet_logpdf, (3, 4)), (dirichlet_pdf, (3,))])
def test_dirichlet(f, shape):
    u, alpha = rng.uniform(0.2, 1.0, shape), rng.uniform(0.5, 3.0, 3)
    both(f, u, alpha, wrt=(0, 1))  # (x on the simplex, as SciPy checks)


def chi2_cdf_df(x, df): return np.sum(stats.chi2.cdf(x, df))
def t_cdf_df(x, df): return np.sum(stats.t.cdf(x, df))


@pytest.mark.parametrize("f", [chi2_cdf_df, t_cdf_df])
def test_a_cdf_in_its_shape_parameter_is_refused_at_the_users_line(f):
    with pytest.raises(MissingRuleError) as info:
        grad(f, wrt=1)(XP, SHAPE)
    assert info.value.loc.line == f.__code__.co_firstlineno and info.value.loc.file == __file__


# -- scipy.signal -----------------------------------------------------------------------------------------

def convolve_full(a, b, w): return np.sum(signal.convolve(a, b) * w)
def convolve_same(a, b, w): return np.sum(signal.convolve(a, b, mode="same") * w)
def convolve_valid(a, b, w): return np.sum(signal.convolve(a, b, "valid", method="direct") * w)
def convolve_valid_fft(a, b, w): return np.sum(signal.convolve(a, b, "valid", "fft") * w)
def correlate_same(a, b, w): return np.sum(signal.correlate(a, b, "same") * w)
def correlate_valid(a, b, w): return np.sum(signal.correlate(a, b, mode="valid") * w)


CONVOLUTIONS = [(convolve_full, (5,), (2,)), (convolve_same, (4, 5), (2, 3)), (convolve_valid, (4, 5), (3, 2)),
                (convolve_valid, (2, 3), (4, 6)),  # in2 larger in every dimension: SciPy swaps them
                (convolve_valid_fft, (3, 4, 2), (2, 2, 2)), (convolve_same, (3,), (6,)),
                (correlate_same, (4, 5), (2, 2)), (correlate_valid, (3,), (6,))]


@pytest.mark.parametrize("f, sa, sb", CONVOLUTIONS, ids=[f"{f.__name__}-{sa}-{sb}" for f, sa, sb in CONVOLUTIONS])
def test_convolve_and_correlate(f, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    mode = f.__name__.split("_")[1]
    out = getattr(signal, f.__name__.split("_")[0])(a, b, mode)
    both(f, a, b, rng.standard_normal(out.shape), wrt=(0, 1))


def convolve_squared(a, b): return np.sum(signal.convolve(a, b, "same") ** 2)


def test_convolve_second_derivative():
    w = rng.standard_normal((4, 3))

    def inner(a, b): return np.sum(grad(convolve_squared)(a, b) * w)
    check_grads(inner, rng.standard_normal((4, 3)), rng.standard_normal((2, 2)), wrt=(0, 1))

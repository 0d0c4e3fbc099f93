"""Finite-difference tests of the SciPy rules (rules/scipy_special.py, scipy_linalg.py,
scipy_stats.py), over shapes, broadcasting and keywords; skipped when SciPy is missing (it is an
optional dependency). The rules load lazily: importing adjoint_compiler never imports SciPy."""
import subprocess
import sys

import numpy as np
import pytest

scipy = pytest.importorskip("scipy", reason="scipy is an optional dependency (the test extra installs it)")
from scipy import linalg, special, stats

from adjoint_compiler import grad, value_and_grad, vjp
from adjoint_compiler.runtime import UndefinedGradientError
from adjoint_compiler.testing import check_grads

rng = np.random.default_rng(151)
SHAPES = [(), (5,), (3, 4)]


def sample(shape, low, high):
    v = rng.uniform(low, high, shape)
    return float(v) if shape == () else v


def weights(shape):
    return float(rng.standard_normal()) if shape == () else rng.standard_normal(shape)


# -- elementwise ----------------------------------------------------------------------------------------
def s_expit(x, w): return np.sum(special.expit(x) * w)
def s_log_expit(x, w): return np.sum(special.log_expit(x) * w)
def s_logit(x, w): return np.sum(special.logit(x) * w)
def s_erf(x, w): return np.sum(special.erf(x) * w)
def s_erfc(x, w): return np.sum(special.erfc(x) * w)
def s_erfinv(x, w): return np.sum(special.erfinv(x) * w)
def s_erfcinv(x, w): return np.sum(special.erfcinv(x) * w)
def s_gammaln(x, w): return np.sum(special.gammaln(x) * w)
def s_gamma(x, w): return np.sum(special.gamma(x) * w)
def s_digamma(x, w): return np.sum(special.digamma(x) * w)
def s_polygamma(x, w): return np.sum(special.polygamma(2, x) * w)
def s_ndtr(x, w): return np.sum(special.ndtr(x) * w)
def s_log_ndtr(x, w): return np.sum(special.log_ndtr(x) * w)
def s_ndtri(x, w): return np.sum(special.ndtri(x) * w)


ANY, UNIT, POS, PROB = (-2.0, 2.0), (-0.9, 0.9), (0.3, 4.0), (0.05, 0.95)
UNARY = [(s_expit, ANY), (s_log_expit, ANY), (s_logit, PROB), (s_erf, ANY), (s_erfc, ANY), (s_erfinv, UNIT),
         (s_erfcinv, (0.1, 1.9)), (s_gammaln, POS), (s_gamma, POS), (s_digamma, POS), (s_polygamma, POS),
         (s_ndtr, ANY), (s_log_ndtr, (-8.0, 3.0)), (s_ndtri, PROB)]


@pytest.mark.parametrize("shape", SHAPES, ids=["scalar", "vector", "matrix"])
@pytest.mark.parametrize("f, domain", UNARY, ids=[f.__name__ for f, _ in UNARY])
def test_unary(f, domain, shape):
    check_grads(f, sample(shape, *domain), weights(shape))


def s_xlogy(x, y, w): return np.sum(special.xlogy(x, y) * w)
def s_xlog1py(x, y, w): return np.sum(special.xlog1py(x, y) * w)


@pytest.mark.parametrize("f", [s_xlogy, s_xlog1py])
@pytest.mark.parametrize("sx, sy", [((), ()), ((4,), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3, 4))])
def test_binary(f, sx, sy):
    x, y = sample(sx, -2.0, 2.0), sample(sy, 0.3, 3.0)
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    check_grads(f, x, y, weights(shape), wrt=(0, 1))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_xlogy_at_zero_passes_nothing_to_y():
    g = grad(s_xlogy, wrt=(0, 1))(np.array([0.0, 2.0]), np.array([0.0, 4.0]), np.ones(2))
    assert g[1][0] == 0.0 and g[0][0] == -np.inf  # d/dx x log y = log 0 there: a true infinity
    np.testing.assert_allclose(g[1][1], 0.5)


def log_ndtr_far(x): return np.sum(special.log_ndtr(x))
def erfinv_edge(x, w): return np.sum(special.erfinv(x) * w)


def test_log_ndtr_stays_finite_in_the_tail():
    g = grad(log_ndtr_far)(np.array([-30.0, -10.0, 5.0]))
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g[0], 30.0, rtol=2e-3)  # ~ -x for x -> -inf


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_a_zero_cotangent_at_an_infinite_derivative_gives_zero():
    g = grad(erfinv_edge)(np.array([1.0, 0.5]), np.array([0.0, 1.0]))
    assert g[0] == 0.0 and np.isfinite(g[1])


# -- normalizations ------------------------------------------------------------------------------------
def s_softmax(x, w): return np.sum(special.softmax(x) * w)
def s_softmax_axis(x, w): return np.sum(special.softmax(x, axis=1) ** 2 * w)
def s_softmax_axis0(x, w): return np.sum(np.sin(special.softmax(x, 0)) * w)
def s_softmax_tuple(x, w): return np.sum(special.softmax(x, axis=(0, 1)) ** 2 * w)
def s_log_softmax(x, w): return np.sum(special.log_softmax(x) * w)
def s_log_softmax_axis(x, w): return np.sum(special.log_softmax(x, axis=-1) * w)
def s_lse(x, w): return special.logsumexp(x) * np.sum(w)
def s_lse_axis(x, w): return np.sum(special.logsumexp(x, axis=1) * w[:, 0])
def s_lse_keep(x, w): return np.sum(special.logsumexp(x, axis=0, keepdims=True) * w[:1])
def s_lse_b(x, w): return special.logsumexp(x, b=w * w + 0.1)
def s_lse_b_axis(x, w): return np.sum(special.logsumexp(x, axis=-1, b=w * w + 0.1) ** 2)
def s_lse_sign(x, w):
    r, sign = special.logsumexp(x, b=w, return_sign=True)
    return r * 2.0 + sign
def s_lse_squared(x, w): return np.sum(x * w) - special.logsumexp(x * 2.0) ** 2


NORMALIZATIONS = [s_softmax, s_softmax_axis, s_softmax_axis0, s_softmax_tuple, s_log_softmax, s_log_softmax_axis,
                  s_lse, s_lse_axis, s_lse_keep, s_lse_b, s_lse_b_axis, s_lse_sign, s_lse_squared]


@pytest.mark.parametrize("f", NORMALIZATIONS, ids=[f.__name__ for f in NORMALIZATIONS])
def test_normalizations(f):
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    if f is s_lse_sign:
        w = np.abs(w) + 0.1  # a positive sum: the sign is constant around the point
    check_grads(f, x, w, wrt=(0, 1) if f in (s_lse_b, s_lse_b_axis, s_lse_sign) else 0)


def lse_vector(x): return special.logsumexp(x)


def test_logsumexp_vector_and_saturation():
    check_grads(lse_vector, rng.standard_normal(6))
    g = grad(lse_vector)(np.array([1000.0, 1000.0, -1000.0]))
    np.testing.assert_allclose(g, [0.5, 0.5, 0.0])


def lse_broadcast_b(x, b): return np.sum(special.logsumexp(x, axis=1, b=b))


def test_logsumexp_with_a_broadcast_b():
    check_grads(lse_broadcast_b, rng.standard_normal((3, 4)), rng.uniform(0.5, 2.0, 4), wrt=(0, 1))


def classifier(w, x, y):
    logits = x @ w
    return -np.mean(np.sum(y * (logits - special.logsumexp(logits, axis=1, keepdims=True)), axis=1))


def composites_used(f, args, wrt) -> list:
    from adjoint_compiler.pipeline import compile_gradient
    compiled = compile_gradient(f, wrt, tuple(f"r{np.ndim(a)}" for a in args))
    return [s.rule.name.split(" ", 1)[1] for s in compiled.ir.body
            if getattr(s, "rule", None) is not None and s.rule.name.startswith("composite ")]


def test_softmax_classifier_and_the_composites_still_match():
    w, x = rng.standard_normal((4, 3)), rng.standard_normal((10, 4))
    y = np.eye(3)[rng.integers(0, 3, 10)]
    check_grads(classifier, w, x, y)
    assert composites_used(classifier, (w, x, y), (0,)) == ["logsumexp", "log_softmax"]


# -- scipy.linalg -------------------------------------------------------------------------------------
def tri(shape, lower):
    a = rng.standard_normal(shape) * 0.3 + 2.0 * np.eye(shape[-1])
    return a  # the other triangle is garbage the solver never reads


def st(a, b, w): return np.sum(linalg.solve_triangular(a, b) * w)
def st_lower(a, b, w): return np.sum(linalg.solve_triangular(a, b, lower=True) * w)
def st_trans(a, b, w): return np.sum(linalg.solve_triangular(a, b, trans=1, lower=True) * w)
def st_trans_t(a, b, w): return np.sum(linalg.solve_triangular(a, b, trans="T") * w)
def st_unit(a, b, w): return np.sum(linalg.solve_triangular(a, b, lower=True, unit_diagonal=True) * w)
def st_positional(a, b, w): return np.sum(linalg.solve_triangular(a, b, 0, True, check_finite=False) * w)


@pytest.mark.parametrize("f", [st, st_lower, st_trans, st_trans_t, st_unit, st_positional])
@pytest.mark.parametrize("sa, sb", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)), ((2, 3, 3), (3,))])
def test_solve_triangular(f, sa, sb):
    a, b = tri(sa, True), rng.standard_normal(sb)
    x = linalg.solve_triangular(a, b)
    check_grads(f, a, b, rng.standard_normal(np.shape(x)), wrt=(0, 1))


def spd(shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def cho(a, b, w): return np.sum(linalg.cho_solve(linalg.cho_factor(a), b) * w)
def cho_lower(a, b, w): return np.sum(linalg.cho_solve(linalg.cho_factor(a, lower=True), b) * w)


def cho_unpacked(a, b, w):
    c, low = linalg.cho_factor(a, lower=True)
    x = linalg.cho_solve((c, low), b)
    return np.sum(x * w) + np.sum(np.log(np.diagonal(c, axis1=-2, axis2=-1)))


def cho_whole_factor(a, b, w):
    c, _low = linalg.cho_factor(a)
    return np.sum(c * w[..., :1]) + np.sum(b)  # the other triangle of c holds a's own entries


@pytest.mark.parametrize("f", [cho, cho_lower, cho_unpacked, cho_whole_factor])
@pytest.mark.parametrize("sa, sb", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2))])
def test_cho_factor_and_solve(f, sa, sb):
    a, b = spd(sa), rng.standard_normal(sb)
    check_grads(f, a, b, rng.standard_normal(sb), wrt=(0, 1))


def expm_sum(a, w): return np.sum(linalg.expm(a) * w)


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3)])
def test_expm(shape):
    check_grads(expm_sum, rng.standard_normal(shape) * 0.7, rng.standard_normal(shape))


# -- scipy.stats.norm -----------------------------------------------------------------------------------
def n_logpdf(x, loc, scale): return np.sum(stats.norm.logpdf(x, loc, scale))
def n_pdf(x, loc, scale): return np.sum(stats.norm.pdf(x, loc=loc, scale=scale))
def n_cdf(x, loc, scale): return np.sum(stats.norm.cdf(x, loc, scale=scale))
def n_logcdf(x, loc, scale): return np.sum(stats.norm.logcdf(x, loc=loc, scale=scale))
def n_logpdf_default(x, loc, scale): return np.sum(stats.norm.logpdf(x) * loc * scale)
def n_cdf_loc(x, loc, scale): return np.sum(stats.norm.cdf(x, loc) * scale)


@pytest.mark.parametrize("f", [n_logpdf, n_pdf, n_cdf, n_logcdf, n_logpdf_default, n_cdf_loc])
@pytest.mark.parametrize("sx, sl, ss", [((), (), ()), ((5,), (), ()), ((5,), (5,), (5,)), ((3, 4), (4,), (3, 1))])
def test_norm(f, sx, sl, ss):
    x, loc, scale = sample(sx, -2.0, 2.0), sample(sl, -1.0, 1.0), sample(ss, 0.5, 2.0)
    check_grads(f, x, loc, scale, wrt=(0, 1, 2))


def norm_nll(mu, log_sigma, data):
    return -np.sum(stats.norm.logpdf(data, loc=mu, scale=np.exp(log_sigma)))


def test_maximum_likelihood_gradient_is_zero_at_the_estimate():
    data = rng.standard_normal(50) * 2.0 + 1.0
    mu, sigma = np.mean(data), np.std(data)
    _value, (gm, gs) = value_and_grad(norm_nll, wrt=(0, 1))(mu, np.log(sigma), data)
    assert abs(gm) < 1e-9 and abs(gs) < 1e-9


# -- loading, nesting, user rules ---------------------------------------------------------------------------
def test_importing_the_compiler_does_not_import_scipy():
    code = "import sys, adjoint_compiler; from adjoint_compiler import registry; registry.load_builtin_rules(); " \
           "print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_rules_load_after_scipy_is_imported_late():
    code = ("import numpy as np, adjoint_compiler as ac\n"
            "from adjoint_compiler import registry\n"
            "registry.load_builtin_rules()\n"
            "import scipy.special\n"
            "assert registry.lookup(scipy.special.erf) is not None\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def second(x): return np.sum(special.gammaln(x) * x)


def test_hessian_through_gammaln_and_erf():
    from adjoint_compiler import hessian
    x = np.array([1.5, 2.5])
    h = hessian(second)(x)
    exact = np.diag(2 * special.digamma(x) + x * special.polygamma(1, x))
    np.testing.assert_allclose(h, exact, rtol=1e-8)


def softmax_jac(x): return special.softmax(x)


def test_softmax_jacobian():
    x = rng.standard_normal(4)
    p = special.softmax(x)
    _, pullback = vjp(softmax_jac, x)
    jac = np.array([pullback(e)[0] for e in np.eye(4)])
    np.testing.assert_allclose(jac, np.diag(p) - np.outer(p, p), atol=1e-12)


def test_cho_factor_of_a_nonsymmetric_matrix_other_triangle():
    """cho_factor's other triangle holds a's entries: their gradient goes to them (checked)."""
    a = spd((3, 3))
    g = grad(cho_whole_factor)(a, np.ones(3), np.ones((3, 3)))
    assert np.all(g[np.tril_indices(3, -1)] == 1.0)


def test_undefined_error_is_exported():
    assert issubclass(UndefinedGradientError, ArithmeticError)

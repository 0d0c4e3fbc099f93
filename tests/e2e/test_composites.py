"""Composite rules (rules/composites.py): the sigmoid, its logs, the log-loss of a sigmoid (also
guarded by eps), the softplus and the log-softmax get one adjoint each, in every spelling of their
mathematics (matched by meaning, adjoint_compiler/canonicalize.py). Every case is checked against
central finite differences (or, where the chain rule through the parts overflows, against the
closed form), and the compiled IR shows which composite each statement got."""
import warnings

import numpy as np
import pytest

from adjoint_compiler import adjoint_source, grad, value_and_grad
from adjoint_compiler.pipeline import compile_gradient
from adjoint_compiler.testing import check_grads

rng = np.random.default_rng(7)
X = rng.standard_normal((30, 4))
W0 = 0.3 * rng.standard_normal(4)
Y = (rng.random(30) < 0.5).astype(float)


def mean_loss(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def sum_loss_log1p(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))


def method_mean_swapped(w, X, y):
    z = X @ w
    p = 1.0 / (np.exp(-z) + 1.0)
    return -((1.0 - y) * np.log(1.0 - p) + np.log(p) * y).mean()


def weighted_loss(w, X, y, c):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    losses = y * np.log(p) + (1.0 - y) * np.log(1.0 - p)
    return -np.sum(c * losses)


def parts_reused(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    log_p = np.log(p)
    loss = -np.mean(y * log_p + (1.0 - y) * np.log(1.0 - p))
    return loss + 0.1 * np.sum(log_p) + np.sum(p * p) + np.sum(z * z)


def sigmoid_only(w, X, c):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return np.sum(c * p)


def log_sigmoids(w, X):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return np.sum(np.log(p)) - 2.0 * np.sum(np.log(1.0 - p))


def loss_in_loop(w, X, y, steps):
    total = 0.0
    for k in range(steps):
        z = (X @ w) * (k + 1.0)
        p = 1.0 / (1.0 + np.exp(-z))
        total = total + np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))
    return -total


def written_after(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    z[0] = 0.0
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) + np.sum(z * z)


def scalar_sigmoid(a, t):
    p = 1.0 / (1.0 + np.exp(-(a * 2.0)))
    return t * np.log(p) + (1.0 - t) * np.log(1.0 - p)


def softmax_cross_entropy(logits, Y):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def log_softmax_columns(a, c):
    logp = a - np.log(np.sum(np.exp(a), axis=0, keepdims=True))
    return np.sum(c * logp)


def log_softmax_whole(a, c):
    m = a.max(keepdims=True)
    z = a - m
    logp = z - np.log(np.sum(np.exp(z), keepdims=True))
    return np.sum(c * logp) + np.sum(m * m)


LOGITS = rng.standard_normal((6, 4))
ONE_HOT = np.eye(4)[rng.integers(0, 4, 6)]

CASES = [
    ("softmax_cross_entropy", softmax_cross_entropy, (LOGITS, ONE_HOT), (0, 1), "np.exp(logp)"),
    ("log_softmax_columns", log_softmax_columns, (LOGITS, rng.random((6, 4))), (0, 1), "np.exp(logp)"),
    ("log_softmax_whole", log_softmax_whole, (LOGITS, rng.random((6, 4))), (0, 1), "np.exp(logp)"),
    ("mean_loss", mean_loss, (W0, 0.2, X, Y), (0, 1, 3), "resid"),
    ("sum_loss_log1p", sum_loss_log1p, (W0, X, Y), (0, 2), "resid"),
    ("method_mean_swapped", method_mean_swapped, (W0, X, Y), (0, 2), "resid"),
    ("weighted_loss", weighted_loss, (W0, X, Y, rng.random(30)), (0, 2, 3), "(y - p)"),
    ("parts_reused", parts_reused, (W0, X, Y), (0, 2), "resid"),
    ("sigmoid_only", sigmoid_only, (W0, X, rng.standard_normal(30)), (0, 2), "(1.0 - p)"),
    ("log_sigmoids", log_sigmoids, (W0, X), (0,), "* p"),
    ("loss_in_loop", loss_in_loop, (W0, X, Y, 3), (0, 2), "resid"),
    ("scalar_sigmoid", scalar_sigmoid, (0.3, 0.8), (0, 1), "(t - p)"),
]


@pytest.mark.parametrize("name, f, args, wrt, marker", CASES, ids=[c[0] for c in CASES])
def test_composite_gradient_matches_finite_differences(name, f, args, wrt, marker):
    check_grads(f, *args, wrt=wrt, rtol=1e-5, atol=1e-7)
    kinds = [a for a in args]
    assert marker in adjoint_source(f, wrt=wrt, args=kinds), "the composite rule was not used"


def test_broadcast_labels():
    """y of shape (3, 1) against z of shape (n,): the loss is (3, n) and y's gradient sums a row."""
    y = (rng.random((3, 1)) < 0.5).astype(float)
    check_grads(mean_loss, W0, 0.2, X, y, wrt=(0, 1, 3))
    check_grads(sum_loss_log1p, W0, X, y, wrt=(0, 2))


def test_labels_of_the_margins_shape_need_no_unbroadcast_and_a_row_of_labels_does():
    """The composite's unbroadcasts undo the broadcast of its operands: gone where y and z have
    one shape (the pattern of lengths tells), kept (and summed right) for y of length 1."""
    src = adjoint_source(mean_loss, (0, 1, 3), args=(W0, 0.2, X, Y))
    assert "unbroadcast" not in src
    check_grads(mean_loss, W0, 0.2, X, Y, wrt=(0, 1, 3))
    y = np.array([1.0])
    assert "rt.unbroadcast(" in adjoint_source(mean_loss, (0, 1, 3), args=(W0, 0.2, X, y))
    check_grads(mean_loss, W0, 0.2, X, y, wrt=(0, 1, 3))


def test_write_into_a_leaf_is_not_fused():
    """z is written after p is computed: the composite would read the new z, so the chain rule runs."""
    check_grads(written_after, W0, X.copy(), Y, wrt=(0,))
    assert "resid" not in adjoint_source(written_after, wrt=0, args=[W0, X.copy(), Y])


def test_saturated_sigmoid_gives_the_closed_form():
    """p rounds to 1.0 for z = 40: the chain rule through log(1 - p) divides by zero, the composite
    gives the exact gradient mean(p - y) x (closed form, not finite differences: the loss is inf)."""
    Xs = np.array([[40.0], [-40.0], [1.0]])
    ys = np.array([0.0, 1.0, 1.0])
    w = np.array([1.0])
    with np.errstate(divide="ignore"):
        value, (gw, gb) = value_and_grad(mean_loss, wrt=(0, 1))(w, 0.0, Xs, ys)
    p = 1.0 / (1.0 + np.exp(-(Xs @ w)))
    np.testing.assert_allclose(gw, Xs.T @ (p - ys) / 3, rtol=1e-12)
    np.testing.assert_allclose(gb, np.mean(p - ys), rtol=1e-12)
    assert np.isinf(value)


def test_unrelated_log_is_not_fused():
    """log(q) of a value that is not a sigmoid, and a sigmoid of another form, use the chain rule."""
    def near_miss(w, X):
        q = 1.0 / (2.0 + np.exp(-(X @ w)))
        return np.sum(np.log(q))
    check_grads(near_miss, W0, X, wrt=0)
    assert "(1.0 - q)" not in adjoint_source(near_miss, wrt=0, args=[W0, X])


def test_gradient_only_function_computes_no_loss_terms():
    src = adjoint_source(mean_loss, wrt=(0, 1), args=[W0, 0.2, X, Y])
    assert "np.log" not in src.split("# adjoint")[0], src
    g = grad(mean_loss, wrt=(0, 1))(W0, 0.2, X, Y)
    p = 1.0 / (1.0 + np.exp(-(X @ W0 + 0.2)))
    np.testing.assert_allclose(g[0], X.T @ (p - Y) / len(Y), rtol=1e-12)


@pytest.mark.parametrize("name, f, args, wrt, marker", CASES, ids=[c[0] for c in CASES])
def test_value_and_vjp_modes_agree(name, f, args, wrt, marker):
    """The joint mode computes the value through the parts; the vjp's pullback gives the same
    gradients as `grad` (which is checked against finite differences above)."""
    from adjoint_compiler import vjp
    value, g = value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    out, pullback = vjp(f, *args)
    np.testing.assert_allclose(out, value, rtol=1e-12)
    pulled = pullback(1.0)
    for i, gi in zip(wrt, g):
        np.testing.assert_allclose(pulled[i], gi, rtol=1e-10, atol=1e-12)


def test_log_softmax_with_tied_maxima():
    """Rows whose maximum is tied: the chain rule splits the max's (zero) gradient among the ties;
    the composite passes none through the max. Both equal finite differences."""
    logits = np.array([[1.0, 3.0, 3.0, 0.5], [2.0, 2.0, 2.0, 2.0]])
    check_grads(softmax_cross_entropy, logits, np.eye(4)[[1, 3]], wrt=0)


def overwritten_loss(a, w):
    p = 1.0 / (1.0 + np.exp(-w))
    v = np.mean(a * np.log(p) + (1.0 - a) * np.log(1.0 - p))
    b = a.copy()
    b[...] = v
    b[...] = np.mean(p * w)
    return np.sum(np.sin(b))


def test_a_composite_whose_gradient_is_zero():
    """Fuzz seed 184757: `v` is written into slots a later write replaces, so its adjoint is zero and
    the composite's statements that read it are dropped, with the rule locals made from it."""
    check_grads(overwritten_loss, Y[:3].copy(), 0.3 * rng.standard_normal(3), wrt=(0, 1))


# -- spellings: one composite each, matched by meaning ---------------------------------------------
def composites_used(f, args, wrt) -> list:
    """The composite rules the compiled gradient's statements got, in program order."""
    kinds = tuple(f"r{np.ndim(a)}" for a in args)
    compiled = compile_gradient(f, wrt, kinds)
    return [s.rule.name.split(" ", 1)[1] for s in compiled.ir.body
            if getattr(s, "rule", None) is not None and s.rule.name.startswith("composite ")]


def sig_plain(z, c):
    return np.sum(c * (1 / (1 + np.exp(-z))))


def sig_exp_ratio(z, c):
    return np.sum(c * (np.exp(z) / (1 + np.exp(z))))


def sig_tanh(z, c):
    return np.sum(c * (0.5 * (1 + np.tanh(z / 2))))


def sig_tanh_spread(z, c):
    return np.sum(c * (0.5 + 0.5 * np.tanh(0.5 * z)))


def sig_swapped(z, c):
    return np.sum(c * (1 / (np.exp(-z) + 1)))


def sig_power(z, c):
    return np.sum(c * (1 + np.exp(-z)) ** -1)


def sig_reciprocal_exp(z, c):
    return np.sum(c * (1.0 / (1.0 + 1.0 / np.exp(z))))


def sig_helper_body(z):
    return np.exp(z) / (np.exp(z) + 1.0)


def sig_helper(z, c):
    return np.sum(c * sig_helper_body(z))


SIGMOIDS = [sig_plain, sig_exp_ratio, sig_tanh, sig_tanh_spread, sig_swapped, sig_power, sig_reciprocal_exp,
            sig_helper]
Z = 2.0 * rng.standard_normal(9)
C = rng.standard_normal(9)
SATURATED = np.array([-40.0, 40.0, 0.3, -3.0, 12.0])


def _sigmoid_closed_form(z):
    return np.where(z >= 0, 1.0 / (1.0 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))))


@pytest.mark.parametrize("f", SIGMOIDS, ids=[f.__name__ for f in SIGMOIDS])
def test_sigmoid_spellings(f):
    check_grads(f, Z, C, wrt=(0, 1), rtol=1e-5, atol=1e-7)
    assert composites_used(f, (Z, C), (0,)) == ["sigmoid"]
    c = np.ones(SATURATED.size)
    g = grad(f)(SATURATED, c)
    p = _sigmoid_closed_form(SATURATED)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, p * (1 - p), rtol=1e-9, atol=1e-15)


def test_scipy_expit_is_the_sigmoid():
    special = pytest.importorskip("scipy.special", reason="scipy is an optional test extra")

    def f(z, c):
        return np.sum(c * special.expit(z))

    check_grads(f, Z, C, wrt=(0, 1))
    assert composites_used(f, (Z, C), (0,)) == ["sigmoid"]


def sp_log_exp(m, c):
    return np.sum(c * np.log(1 + np.exp(-m)))


def sp_log1p(m, c):
    return np.sum(c * np.log1p(np.exp(-m)))


def sp_logaddexp(m, c):
    return np.sum(c * np.logaddexp(0, -m))


def sp_positive(m, c):
    return np.sum(c * np.log(1 + np.exp(m)))


def sp_logaddexp_swapped(m, c):
    return np.sum(c * np.logaddexp(m, 0))


def sp_mean(m, c):
    return np.mean(np.log1p(np.exp(-m))) + np.sum(c * m)


def sp_sum(m, c):
    return np.logaddexp(0.0, m).sum() + np.sum(c * m)


def sp_scaled_margin(m, c):
    return np.mean(np.log(1.0 + np.exp(-(c * m))))


SOFTPLUS = [(sp_log_exp, "softplus_of_exp"), (sp_log1p, "softplus_of_negated"),
            (sp_logaddexp, "softplus_of_negated"), (sp_positive, "softplus_of_exp"),
            (sp_logaddexp_swapped, "softplus"), (sp_mean, "mean_softplus_of_negated"),
            (sp_sum, "sum_softplus"), (sp_scaled_margin, "mean_softplus_of_exp")]


@pytest.mark.parametrize("f, rule", SOFTPLUS, ids=[f.__name__ for f, _ in SOFTPLUS])
def test_softplus_spellings(f, rule):
    check_grads(f, Z, C, wrt=(0, 1), rtol=1e-5, atol=1e-7)
    assert rule in composites_used(f, (Z, C), (0,))


def test_softplus_stays_finite_and_quiet_where_exp_overflows():
    """logaddexp(0, x) is finite for x = -800 and 800; so is its gradient sigmoid(x), computed
    without an overflow (the primal raises none either)."""
    m = np.array([-800.0, 800.0, -40.0, 40.0, 0.7])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        g = grad(sp_logaddexp)(m, np.ones(m.size))
        g_positive = grad(sp_logaddexp_swapped)(m, np.ones(m.size))
    np.testing.assert_allclose(g, -_sigmoid_closed_form(-m), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(g_positive, _sigmoid_closed_form(m), rtol=1e-12, atol=1e-300)


# -- the log-loss with eps: the exact gradient of the eps form -------------------------------------
def eps_mean_loss(w, X, y):
    eps = 1e-7
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))


EPS = 1e-4


def eps_global_sum(w, X, y):
    p = np.exp(X @ w) / (1.0 + np.exp(X @ w))
    return -np.sum(np.log(EPS + p) * y + (1.0 - y) * np.log(1.0 + EPS - p))


def eps_argument(z, y, eps):
    p = 0.5 * (1.0 + np.tanh(0.5 * z))
    losses = y * np.log(p + eps) + (1.0 - y) * np.log(1.0 - p + eps)
    return -np.sum(C[:z.size] * losses)


def eps_mismatched(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-6))


@pytest.mark.parametrize("f, rule", [(eps_mean_loss, "mean_sigmoid_eps_log_loss"),
                                     (eps_global_sum, "sum_sigmoid_eps_log_loss")])
def test_eps_log_loss(f, rule):
    check_grads(f, W0, X, Y, wrt=(0, 2), rtol=1e-5, atol=1e-7)
    assert rule in composites_used(f, (W0, X, Y), (0,))


def test_eps_log_loss_gradient_reaches_eps_and_labels():
    y = rng.random(9)
    check_grads(eps_argument, Z, y, 0.01, wrt=(0, 1, 2), rtol=1e-5, atol=1e-7)
    assert "sigmoid_eps_log_loss" in composites_used(eps_argument, (Z, y, 0.01), (0, 1, 2))


def test_eps_log_loss_saturated_is_the_exact_eps_gradient():
    """z = +-40 (p rounds to 1 or is 4e-18): the gradient is p (1 - p) (u / (p + eps) - (1 - u) /
    (1 - p + eps)), finite, and the loss too."""
    Xs = np.array([[40.0], [-40.0], [40.0], [-40.0], [0.5]])
    ys = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    w = np.array([1.0])
    value, g = value_and_grad(eps_mean_loss)(w, Xs, ys)
    p = _sigmoid_closed_form(Xs @ w)
    dz = -p * (1 - p) * (ys / (p + 1e-7) - (1 - ys) / (1 - p + 1e-7)) / ys.size
    assert np.isfinite(value) and np.all(np.isfinite(g))
    np.testing.assert_allclose(g, Xs.T @ dz, rtol=1e-9, atol=1e-20)


def test_eps_log_loss_with_two_eps_is_not_the_eps_composite():
    check_grads(eps_mismatched, W0, X, Y, wrt=(0, 2))
    assert composites_used(eps_mismatched, (W0, X, Y), (0,)) == ["sigmoid"]


# -- log-softmax through a user's logsumexp -----------------------------------------------------
def logsumexp(z):
    m = np.max(z, axis=1, keepdims=True)
    return m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))


def lsm_helper(a, Y):
    return -np.mean(np.sum(Y * (a - logsumexp(a)), axis=1))


def lsm_methods(a, Y):
    shifted = a - a.max(axis=-1, keepdims=True)
    return -np.sum(Y * (shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))))


def lsm_reused(a, Y):
    lse = logsumexp(a)
    return -np.sum(Y * (a - lse)) + 0.5 * np.sum(lse * lse)


@pytest.mark.parametrize("f, rules", [(lsm_helper, ["logsumexp", "log_softmax"]),
                                      (lsm_methods, ["log_softmax"]),
                                      (lsm_reused, ["logsumexp", "log_softmax"])])
def test_log_softmax_through_logsumexp(f, rules):
    check_grads(f, LOGITS, ONE_HOT, wrt=(0, 1))
    assert composites_used(f, (LOGITS, ONE_HOT), (0,)) == rules
    saturated = LOGITS * 40.0
    g = grad(f)(saturated, ONE_HOT)
    assert np.all(np.isfinite(g))
    check_grads(f, saturated, ONE_HOT, wrt=0, rtol=1e-5, atol=1e-6)


def test_scipy_logsumexp():
    special = pytest.importorskip("scipy.special", reason="scipy is an optional test extra")

    def f(a, Y):
        return -np.mean(np.sum(Y * (a - special.logsumexp(a, axis=1, keepdims=True)), axis=1))

    check_grads(f, LOGITS, ONE_HOT, wrt=(0, 1))
    assert composites_used(f, (LOGITS, ONE_HOT), (0,)) == ["logsumexp", "log_softmax"]


# -- what must not match, and parts used elsewhere ---------------------------------------------------
def near_sigmoid(z, c):
    return np.sum(c / (2 + np.exp(-z)))


def near_softplus(m, c):
    return np.sum(c * np.log(2 + np.exp(m)))


def tanh_without_halving(z, c):
    return np.sum(c * (0.5 * (1 + np.tanh(z))))  # sigmoid(2 z): no value holds 2 z


def shift_along_another_axis(a, Y):
    m = np.max(a, axis=0, keepdims=True)
    return np.sum(Y * (a - m - np.log(np.sum(np.exp(a - m), axis=1, keepdims=True))))


@pytest.mark.parametrize("f", [near_sigmoid, near_softplus, tanh_without_halving])
def test_near_misses_use_the_chain_rule(f):
    check_grads(f, Z, C, wrt=(0, 1))
    assert composites_used(f, (Z, C), (0,)) == []


def test_a_shift_along_another_axis_stays():
    """The max over axis 0 is not constant along the summed axis 1: it does not cancel, the form is
    the log-softmax of `a - m`, and the max passes its gradient."""
    check_grads(shift_along_another_axis, LOGITS, ONE_HOT, wrt=(0, 1))
    assert composites_used(shift_along_another_axis, (LOGITS, ONE_HOT), (0,)) == ["logsumexp", "log_softmax"]
    src = adjoint_source(shift_along_another_axis, wrt=0, args=[LOGITS, ONE_HOT])
    assert "extremum_adjoint" in src


def exp_reused(z, c):
    e = np.exp(-z)
    p = 1 / (1 + e)
    return np.sum(c * p) + np.sum(e * c)


def broadcast_by_cancelling(z, Y):
    p = np.exp(z) / (np.exp(z) + 1) + 0 * Y  # has Y's shape
    return np.sum(p * p)


def softmax_broadcast_by_cancelling(a, Y):
    logp = a - logsumexp(a) + (Y - Y)  # Y is (2, 6, 4): the result too
    return np.sum(logp * logp)


def test_parts_used_elsewhere_and_shapes_widened_by_cancelled_terms():
    check_grads(exp_reused, Z, C, wrt=(0, 1))
    assert composites_used(exp_reused, (Z, C), (0,)) == ["sigmoid"]
    Yw = rng.standard_normal((3, 9))
    check_grads(broadcast_by_cancelling, Z, Yw, wrt=(0, 1))
    check_grads(softmax_broadcast_by_cancelling, LOGITS, rng.standard_normal((2, 6, 4)), wrt=(0, 1))


def test_no_warning_from_the_matching():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f, _ in SOFTPLUS:
            grad(f)(Z, C)


# -- negated forms: the negative log-likelihood written out -----------------------------------------
def nll_mean(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p))


def nll_eps_sum(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return np.sum(-y * np.log(p + 1e-6) - (1 - y) * np.log(1 - p + 1e-6))


def reversed_log_softmax(a, Y):
    return np.sum(Y * (logsumexp(a) - a))  # the log-softmax template reads its result: no negation


@pytest.mark.parametrize("f, rule", [(nll_mean, "mean_sigmoid_log_loss (negated)"),
                                     (nll_eps_sum, "sum_sigmoid_eps_log_loss (negated)")])
def test_negated_forms(f, rule):
    check_grads(f, W0, X, Y, wrt=(0, 2), rtol=1e-5, atol=1e-7)
    assert rule in composites_used(f, (W0, X, Y), (0,))


def test_a_template_reading_its_result_is_not_negated():
    check_grads(reversed_log_softmax, LOGITS, ONE_HOT, wrt=(0, 1))
    assert composites_used(reversed_log_softmax, (LOGITS, ONE_HOT), (0,)) == ["logsumexp"]


def scaled_by_one(z, u):
    p = 1.0 / (1.0 + np.exp(-z))
    return 1.0 * np.mean(u * np.log(p) + (1.0 - u) * np.log(1.0 - p))


def scalar_label_negated(z, u):
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.sum(u * np.log(p + 1e-3) + (1.0 - u) * np.log(1.0 - p + 1e-3))


def test_a_statement_passing_the_form_on_keeps_its_own_rule():
    """`1.0 * mean(...)` and `-sum(...)` have the form's term (or its negation): the mean and the sum
    get the composite, not the product or the negation (whose scalar result would let a template's
    `rt.unbroadcast(g, u)` of a scalar label be dropped)."""
    check_grads(scaled_by_one, Z, 0.3, wrt=(0, 1))
    check_grads(scalar_label_negated, Z, 0.3, wrt=(0, 1))
    assert composites_used(scalar_label_negated, (Z, 0.3), (0, 1))[-1] == "sum_sigmoid_eps_log_loss"
    assert isinstance(grad(scalar_label_negated, wrt=1)(Z, 0.3), float)


# -- softmax, and scipy.special's other forms ---------------------------------------------------
def softmax_then_log(a, Y):
    e = np.exp(a - np.max(a, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    return -np.sum(Y * np.log(p)) / a.shape[0]


def softmax_squared(a, Y):
    e = np.exp(a)
    p = e / e.sum(axis=1, keepdims=True)
    return np.sum(Y * p * p)


@pytest.mark.parametrize("f, rules", [(softmax_then_log, ["softmax", "log_softmax"]),
                                      (softmax_squared, ["softmax"])])
def test_softmax_spellings(f, rules):
    check_grads(f, LOGITS, ONE_HOT, wrt=(0, 1))
    assert composites_used(f, (LOGITS, ONE_HOT), (0,)) == rules


def test_scipy_forms():
    special = pytest.importorskip("scipy.special", reason="scipy is an optional test extra")

    def log_softmax(a, Y):
        return -np.sum(Y * special.log_softmax(a, axis=1))

    def softmax(a, Y):
        return np.sum(Y * special.softmax(a, axis=1) ** 2)

    def log_expit(m, c):
        return np.sum(c * special.log_expit(m))

    for f, args, rule in [(log_softmax, (LOGITS, ONE_HOT), "log_softmax"), (softmax, (LOGITS, ONE_HOT), "softmax"),
                          (log_expit, (Z, C), "softplus_of_negated (negated)")]:
        check_grads(f, *args, wrt=(0, 1))
        assert composites_used(f, args, (0,)) == [rule]


def logsumexp_scalar(a, c):
    m = np.max(a)
    return np.log(np.sum(np.exp(a - m))) + m + np.sum(c * a)


def logsumexp_rows(a, c):
    return np.sum(c[:, 0] * np.log(np.exp(a).sum(axis=1)))


@pytest.mark.parametrize("f", [logsumexp_scalar, logsumexp_rows])
def test_logsumexp_without_keepdims(f):
    c = rng.standard_normal((6, 4))
    check_grads(f, LOGITS, c, wrt=(0, 1))
    assert "logsumexp_reduced" in composites_used(f, (LOGITS, c), (0,))


@pytest.mark.parametrize("f, args", [(sp_logaddexp, (Z, C)), (sig_exp_ratio, (Z, C)), (eps_mean_loss, (W0, X, Y)),
                                     (nll_mean, (W0, X, Y)), (lsm_helper, (LOGITS, ONE_HOT))],
                         ids=["softplus", "sigmoid", "eps", "negated", "log_softmax"])
def test_new_forms_in_joint_and_vjp_modes(f, args):
    from adjoint_compiler import vjp
    value, g = value_and_grad(f, wrt=(0, 1))(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    out, pullback = vjp(f, *args)
    np.testing.assert_allclose(out, value, rtol=1e-12)
    pulled = pullback(2.0)
    for i in (0, 1):
        np.testing.assert_allclose(pulled[i], 2.0 * g[i], rtol=1e-10, atol=1e-12)

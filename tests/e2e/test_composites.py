"""Composite rules (rules/composites.py): the sigmoid, its logs and the log-loss of a sigmoid get
one adjoint each. Every case is checked against central finite differences (or, where the chain
rule through the parts overflows, against the closed form), and the generated source shows whether
the composite was used."""
import numpy as np
import pytest

from adjoint_compiler import adjoint_source, grad, value_and_grad
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
    ("mean_loss", mean_loss, (W0, 0.2, X, Y), (0, 1, 3), "residual"),
    ("sum_loss_log1p", sum_loss_log1p, (W0, X, Y), (0, 2), "residual"),
    ("method_mean_swapped", method_mean_swapped, (W0, X, Y), (0, 2), "residual"),
    ("weighted_loss", weighted_loss, (W0, X, Y, rng.random(30)), (0, 2, 3), "(y - p)"),
    ("parts_reused", parts_reused, (W0, X, Y), (0, 2), "residual"),
    ("sigmoid_only", sigmoid_only, (W0, X, rng.standard_normal(30)), (0, 2), "(1.0 - p)"),
    ("log_sigmoids", log_sigmoids, (W0, X), (0,), "* p"),
    ("loss_in_loop", loss_in_loop, (W0, X, Y, 3), (0, 2), "residual"),
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


def test_write_into_a_leaf_is_not_fused():
    """z is written after p is computed: the composite would read the new z, so the chain rule runs."""
    check_grads(written_after, W0, X.copy(), Y, wrt=(0,))
    assert "residual" not in adjoint_source(written_after, wrt=0, args=[W0, X.copy(), Y])


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

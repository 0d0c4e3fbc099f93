"""Second-order optimization with exact Hessian-vector products: a regularized logistic regression
fitted by Newton-CG and trust-ncg with `hessp=hvp(loss)`.

`hvp(f)(*args, v)` is the Hessian of `f` times `v`, without forming the Hessian: the compiler
differentiates its own generated gradient again (reverse over reverse). Without it, Newton-CG
estimates each product from two extra gradient evaluations (finite differences)."""
import sys

import numpy as np

from adjoint_compiler import grad, hessian, hvp

try:
    from scipy.optimize import minimize
except ImportError:
    print("scipy is not installed; this example needs it (pip install scipy). Skipping.")
    sys.exit(0)


def loss(w, X, y, lam):
    z = X @ w
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.5 * lam * np.sum(w * w)


rng = np.random.default_rng(0)
n, d = 400, 10
X = rng.normal(size=(n, d))
w_true = rng.normal(size=d)
y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-X @ w_true)), 1.0, -1.0)
lam = 1e-2
w0 = np.zeros(d)

dloss = grad(loss)
d2loss_v = hvp(loss)

# The Hessian-vector product against the Hessian written by hand
s = 1.0 / (1.0 + np.exp(y * (X @ w0)))
by_hand = (X.T * (s * (1 - s))) @ X / n + lam * np.eye(d)
v = rng.normal(size=d)
print("max |hvp - hand-written H v|      = %.2e" % np.max(np.abs(d2loss_v(w0, X, y, lam, v) - by_hand @ v)))
print("max |hessian - hand-written H|    = %.2e" % np.max(np.abs(hessian(loss)(w0, X, y, lam) - by_hand)))

counts = {"f": 0, "g": 0, "hv": 0}


def f(w):
    counts["f"] += 1
    return loss(w, X, y, lam)


def g(w):
    counts["g"] += 1
    return dloss(w, X, y, lam)


def hv(w, v):
    counts["hv"] += 1
    return d2loss_v(w, X, y, lam, v)


print(f"\n{'method':34s}{'f evals':>8s}{'grads':>7s}{'H v':>6s}{'iters':>7s}   loss")
results = {}
for label, method, hessp in [("Newton-CG, exact H v", "Newton-CG", hv),
                             ("Newton-CG, H v by differences", "Newton-CG", None),
                             ("trust-ncg, exact H v", "trust-ncg", hv),
                             ("BFGS (gradient only)", "BFGS", None)]:
    counts.update(f=0, g=0, hv=0)
    res = minimize(f, w0, jac=g, hessp=hessp, method=method, options={"gtol": 1e-8} if method != "Newton-CG"
                   else {"xtol": 1e-10})
    results[label] = res
    print(f"{label:34s}{counts['f']:8d}{counts['g']:7d}{counts['hv']:6d}{res.nit:7d}   {res.fun:.12f}")
best = min(r.fun for r in results.values())
print("max |loss - best| over methods = %.2e" % max(abs(r.fun - best) for r in results.values()))

"""Fit a logistic regression with scipy.optimize.minimize, with and without a compiled gradient."""
import sys
import time

import numpy as np

from adjoint_compiler import grad

try:
    from scipy.optimize import minimize
except ImportError:
    print("scipy is not installed; this example needs it (pip install scipy). Skipping.")
    sys.exit(0)


def loss(w, X, y, lam):
    """Mean logistic loss (numerically stable form) plus an L2 penalty."""
    z = X @ w
    # log(1 + exp(-y z)) computed as logaddexp(0, -y z)
    nll = np.mean(np.logaddexp(0.0, -y * z))
    return nll + 0.5 * lam * np.sum(w[1:] ** 2)


def make_data(n=2000, d=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 0] = 1.0  # bias column
    w_true = rng.normal(size=d)
    p = 1.0 / (1.0 + np.exp(-X @ w_true))
    y = np.where(rng.random(n) < p, 1.0, -1.0)
    return X, y, w_true


def run(label, jac, repeats=3):
    w0 = np.zeros(X.shape[1])
    dt = np.inf
    for _ in range(repeats):  # best of a few runs, so one-off start-up costs do not count
        t0 = time.perf_counter()
        res = minimize(loss, w0, args=(X, y, lam), jac=jac, method="L-BFGS-B")
        dt = min(dt, time.perf_counter() - t0)
    acc = np.mean(np.sign(X @ res.x) == y)
    print(f"{label:<22} {res.nit:>6} {res.nfev:>8} {res.fun:>14.10f} {acc:>9.3f} {dt * 1e3:>10.1f}")
    return res


X, y, w_true = make_data()
lam = 1e-3
dloss = grad(loss, wrt=0)
dloss(np.zeros(X.shape[1]), X, y, lam)  # compile once, outside the timing

print(f"logistic regression: n={X.shape[0]} samples, d={X.shape[1]} features, L-BFGS-B\n")
print(f"{'gradient':<22} {'iters':>6} {'f evals':>8} {'final loss':>14} {'accuracy':>9} {'time (ms)':>10}")
r_ad = run("compiled adjoint", dloss)
r_fd = run("finite differences", None)
print()
print("max |w_adjoint - w_fd|  = %.2e" % np.max(np.abs(r_ad.x - r_fd.x)))
print("f evals saved by the gradient: %d -> %d" % (r_fd.nfev, r_ad.nfev))

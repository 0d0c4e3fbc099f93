"""Fit a Gaussian-process kernel by maximizing the log marginal likelihood.

The negative log marginal likelihood of y under a GP with a squared-exponential kernel,

    K = variance * exp(-|x_i - x_j|^2 / (2 lengthscale^2)) + noise * I,
    -log p(y) = 1/2 y^T K^-1 y + 1/2 log det K + n/2 log(2 pi),

is computed through the Cholesky factor K = L L^T (np.linalg.cholesky) and one triangular solve
alpha = L^-1 y (scipy.linalg.solve_triangular): y^T K^-1 y = |alpha|^2 and log det K =
2 sum(log diag L). The three hyperparameters are optimized as log-parameters with
scipy.optimize.minimize, once with the exact gradient from adjoint_compiler and once with
finite differences.
"""
import sys
import time

import numpy as np

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads

try:
    from scipy.linalg import solve_triangular
    from scipy.optimize import minimize
except ImportError:
    print("scipy is not installed; this example needs it (pip install scipy). Skipping.")
    sys.exit(0)


def neg_log_marginal_likelihood(log_params, X, y):
    lengthscale, variance, noise = np.exp(log_params)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = variance * np.exp(-0.5 * sq / lengthscale ** 2) + (noise + 1e-8) * np.eye(X.shape[0])
    L = np.linalg.cholesky(K)
    alpha = solve_triangular(L, y, lower=True)
    return 0.5 * (alpha @ alpha) + np.sum(np.log(np.diag(L))) + 0.5 * X.shape[0] * np.log(2.0 * np.pi)


def predict(log_params, X, y, X_new):
    """The posterior mean at X_new (plain NumPy, for the printout)."""
    lengthscale, variance, noise = np.exp(log_params)

    def k(A, B):
        return variance * np.exp(-0.5 * np.sum((A[:, None, :] - B[None, :, :]) ** 2, axis=-1) / lengthscale ** 2)
    return k(X_new, X) @ np.linalg.solve(k(X, X) + (noise + 1e-8) * np.eye(X.shape[0]), y)


def make_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3.0, 3.0, size=(n, 2))
    f = np.sin(1.5 * X[:, 0]) * np.cos(X[:, 1])
    return X, f + 0.1 * rng.standard_normal(n)


X, y = make_data()
theta0 = np.log(np.array([1.0, 1.0, 0.1]))  # lengthscale, variance, noise
dnlml = grad(neg_log_marginal_likelihood)
check_grads(neg_log_marginal_likelihood, theta0, X, y)  # the exact gradient, against finite differences
print(f"GP regression: n={X.shape[0]} points in 2-D, squared-exponential kernel, L-BFGS-B on log-parameters")
print("gradient at the start:", np.array2string(dnlml(theta0, X, y), precision=6), "(checked against finite differences)\n")

print(f"{'gradient':<20} {'iters':>6} {'f evals':>8} {'-log p(y)':>14} {'lengthscale':>12} {'variance':>10} {'noise':>10} "
      f"{'time (ms)':>10}")
results = {}
for label, jac in [("exact gradient", dnlml), ("finite differences", None)]:
    t0 = time.perf_counter()
    res = minimize(neg_log_marginal_likelihood, theta0, args=(X, y), jac=jac, method="L-BFGS-B")
    dt = time.perf_counter() - t0
    ell, var, noise = np.exp(res.x)
    results[label] = res
    print(f"{label:<20} {res.nit:>6} {res.nfev:>8} {res.fun:>14.8f} {ell:>12.6f} {var:>10.6f} {noise:>10.6f} "
          f"{dt * 1e3:>10.1f}")

exact, fd = results["exact gradient"], results["finite differences"]
print()
print(f"function evaluations: {fd.nfev} with finite differences, {exact.nfev} with the exact gradient")
print(f"gradient norm at the optimum: {np.linalg.norm(dnlml(exact.x, X, y)):.2e}")
X_new = np.array([[0.0, 0.0], [1.0, 0.5], [-2.0, 1.0]])
truth = np.sin(1.5 * X_new[:, 0]) * np.cos(X_new[:, 1])
print("posterior mean at 3 new points:", np.array2string(predict(exact.x, X, y, X_new), precision=3),
      "truth:", np.array2string(truth, precision=3))

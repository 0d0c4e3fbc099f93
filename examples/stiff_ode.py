"""A stiff ODE (Robertson's chemical kinetics) solved with an implicit method, using the exact
Jacobian of the in-place right-hand side.

The right-hand side has the in-place signature ODE libraries use, rhs(du, u, p, t); the compiler
differentiates the writes into du, so `jacobian(rhs, wrt=1, out=0)` is d du / d u. BDF needs that
Jacobian at every Newton iteration; without it, SciPy estimates it by finite differences, at the
price of extra right-hand-side evaluations."""
import sys

import numpy as np

from adjoint_compiler import jacobian

try:
    from scipy.integrate import solve_ivp
except ImportError:
    print("scipy is not installed; this example needs it (pip install scipy). Skipping.")
    sys.exit(0)


def robertson(du, u, p, t):
    k1, k2, k3 = p[0], p[1], p[2]
    du[0] = -k1 * u[0] + k3 * u[1] * u[2]
    du[1] = k1 * u[0] - k3 * u[1] * u[2] - k2 * u[1] ** 2
    du[2] = k2 * u[1] ** 2


p = np.array([0.04, 3e7, 1e4])
u0 = np.array([1.0, 0.0, 0.0])
jac_u = jacobian(robertson, wrt=1, out=0)


calls = {"rhs": 0}


def f(t, u):
    calls["rhs"] += 1  # counted here: SciPy's nfev leaves out the evaluations of its own Jacobian estimate
    du = np.empty(3)
    robertson(du, u, p, t)
    return du


def exact_jacobian(t, u):
    return jac_u(np.empty(3), u, p, t)


# The Jacobian against the one written by hand at a point
u = np.array([0.7, 2e-5, 0.3])
by_hand = np.array([[-p[0], p[2] * u[2], p[2] * u[1]],
                    [p[0], -p[2] * u[2] - 2 * p[1] * u[1], -p[2] * u[1]],
                    [0.0, 2 * p[1] * u[1], 0.0]])
print("max |compiled - hand-written Jacobian| = %.2e" % np.max(np.abs(exact_jacobian(0.0, u) - by_hand)))

t_end = 1e5
with_jac = solve_ivp(f, (0.0, t_end), u0, method="BDF", jac=exact_jacobian, rtol=1e-6, atol=1e-10)
rhs_with, calls["rhs"] = calls["rhs"], 0
without = solve_ivp(f, (0.0, t_end), u0, method="BDF", rtol=1e-6, atol=1e-10)
rhs_without = calls["rhs"]
print(f"\nRobertson kinetics to t = {t_end:g} with BDF")
print(f"{'':24s}{'rhs evals':>10s}{'jac evals':>10s}{'steps':>8s}")
print(f"{'exact Jacobian':24s}{rhs_with:10d}{with_jac.njev:10d}{with_jac.t.size - 1:8d}")
print(f"{'finite differences':24s}{rhs_without:10d}{without.njev:10d}{without.t.size - 1:8d}")
print("final state (exact Jacobian)     :", with_jac.y[:, -1])
print("final state (finite differences) :", without.y[:, -1])
print("max |difference| = %.2e" % np.max(np.abs(with_jac.y[:, -1] - without.y[:, -1])))

"""Inverse heat problem: recover the initial temperature from a measured final state.

The forward solver is an explicit finite-difference scheme written the way one writes it in
NumPy: the stencil writes into u_new in place and copyto(u, u_new) advances the step. The
compiled adjoint of the whole solve gives the gradient of the misfit with respect to u0.
"""
import numpy as np

from adjoint_compiler import Buffer, copyto, value_and_grad

N_CELLS, N_STEPS, R = 50, 20, 0.25  # R = kappa * dt / dx**2 (stable for R <= 0.5)


def heat_solve(u0, n_steps, r):
    """Explicit Euler for u_t = kappa u_xx with u = 0 at both ends."""
    u = Buffer(u0)
    u_new = Buffer.zeros(u0.shape)
    for _ in range(n_steps):
        u_new[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        copyto(u, u_new)
    return u.copy()


def misfit(u0, u_obs, n_steps, r, alpha):
    """Data misfit of the final state plus a small smoothness (Tikhonov) penalty on u0."""
    u_final = heat_solve(u0, n_steps, r)
    smooth = np.sum((u0[1:] - u0[:-1]) ** 2)
    return 0.5 * np.sum((u_final - u_obs) ** 2) + 0.5 * alpha * smooth


x = np.linspace(0.0, 1.0, N_CELLS)
u_true = np.exp(-((x - 0.3) / 0.08) ** 2) + 0.6 * np.exp(-((x - 0.7) / 0.1) ** 2)
u_true[0] = u_true[-1] = 0.0
rng = np.random.default_rng(1)
u_obs = heat_solve(u_true, N_STEPS, R) + 1e-3 * rng.normal(size=N_CELLS)
alpha = 1e-4

vg = value_and_grad(misfit, wrt=0)
u0 = np.zeros(N_CELLS)
print(f"1-D heat equation: {N_CELLS} cells, {N_STEPS} explicit steps; recover u0 from u(T)\n")


HEADER = f"{'iter':>5} {'loss':>14} {'|u0 - u_true| / |u_true|':>26}"


def report(it, u, loss):
    rel = np.linalg.norm(u - u_true) / np.linalg.norm(u_true)
    print(f"{it:>5} {loss:>14.6e} {rel:>26.4f}")


try:
    from scipy.optimize import minimize
except ImportError:
    minimize = None

if minimize is not None:
    print("optimizer: scipy L-BFGS-B with the compiled gradient\n")
    print(HEADER)
    state = {"it": 0}

    def fun(u):
        return vg(u, u_obs, N_STEPS, R, alpha)

    def callback(u):
        state["it"] += 1
        if state["it"] % 5 == 0:
            report(state["it"], u, misfit(u, u_obs, N_STEPS, R, alpha))

    report(0, u0, misfit(u0, u_obs, N_STEPS, R, alpha))
    res = minimize(fun, u0, jac=True, method="L-BFGS-B", callback=callback,
                   options={"maxiter": 40})
    u0 = res.x
    if res.nit % 5:
        report(res.nit, u0, res.fun)
else:
    print("optimizer: plain gradient descent (install scipy for L-BFGS)\n")
    print(HEADER)
    step = 1.0
    for it in range(1001):
        loss, g = vg(u0, u_obs, N_STEPS, R, alpha)
        if it % 100 == 0:
            report(it, u0, loss)
        u0 = u0 - step * g

print("\n   x    u0 true  u0 recovered")
for i in range(0, N_CELLS, 5):
    print(f"{x[i]:5.2f} {u_true[i]:9.4f} {u0[i]:13.4f}")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(x, u_true, "k-", label="true u0")
    ax.plot(x, u0, "r--", label="recovered u0")
    ax.plot(x, u_obs, "b:", label="observed u(T)")
    ax.set_xlabel("x")
    ax.legend()
    fig.tight_layout()
    fig.savefig("heat_inverse.png", dpi=120)
    print("\nsaved heat_inverse.png")

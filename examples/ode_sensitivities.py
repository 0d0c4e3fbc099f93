"""Parameter sensitivities of the Lotka-Volterra predator-prey ODE through an RK4 integrator.

The right-hand side has the in-place signature used by ODE libraries: rhs(du, u, p, t) writes
du[0] and du[1]. The integrator keeps its stage derivatives in Buffers and the compiler
differentiates straight through the writes.
"""
import numpy as np

from adjoint_compiler import Buffer, value_and_grad


def lotka_volterra(du, u, p, t):
    alpha, beta, delta, gamma = p[0], p[1], p[2], p[3]
    prey, pred = u[0], u[1]
    du[0] = alpha * prey - beta * prey * pred
    du[1] = delta * prey * pred - gamma * pred


def rk4(u0, p, dt, n_steps):
    u = u0
    k1 = Buffer.zeros(2)
    k2 = Buffer.zeros(2)
    k3 = Buffer.zeros(2)
    k4 = Buffer.zeros(2)
    traj = [u]
    t = 0.0
    for _ in range(n_steps):
        lotka_volterra(k1, u, p, t)
        lotka_volterra(k2, u + 0.5 * dt * k1[:], p, t + 0.5 * dt)
        lotka_volterra(k3, u + 0.5 * dt * k2[:], p, t + 0.5 * dt)
        lotka_volterra(k4, u + dt * k3[:], p, t + dt)
        u = u + dt / 6.0 * (k1[:] + 2.0 * k2[:] + 2.0 * k3[:] + k4[:])
        t = t + dt
        traj.append(u)
    return np.stack(traj)


def loss(p, u0, data, dt):
    """Squared misfit between the simulated trajectory and observations."""
    traj = rk4(u0, p, dt, data.shape[0] - 1)
    return 0.5 * np.sum((traj - data) ** 2)


dt, n_steps = 0.05, 200
p_true = np.array([1.5, 1.0, 1.0, 3.0])
u0_true = np.array([1.0, 1.0])
rng = np.random.default_rng(0)
# "observations": the true trajectory plus noise (the plain forward run works without the compiler)
data = rk4(u0_true, p_true, dt, n_steps) + 0.05 * rng.normal(size=(n_steps + 1, 2))

p = np.array([1.4, 1.1, 0.9, 3.1])
u0 = np.array([1.1, 0.9])

vg = value_and_grad(loss, wrt=(0, 1))
L, (dp, du0) = vg(p, u0, data, dt)


def central_fd(fun, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (fun(x + e) - fun(x - e)) / (2 * eps)
    return g


fd_p = central_fd(lambda q: loss(q, u0, data, dt), p)
fd_u0 = central_fd(lambda v: loss(p, v, data, dt), u0)

print(f"Lotka-Volterra, RK4, {n_steps} steps of dt={dt}; loss = {L:.6f}\n")
print(f"{'':<16} {'adjoint':>16} {'central FD':>16} {'rel. error':>11}")
for name, g, fd in [("dL/dalpha", dp[0], fd_p[0]), ("dL/dbeta", dp[1], fd_p[1]),
                    ("dL/ddelta", dp[2], fd_p[2]), ("dL/dgamma", dp[3], fd_p[3]),
                    ("dL/dprey0", du0[0], fd_u0[0]), ("dL/dpred0", du0[1], fd_u0[1])]:
    rel = abs(g - fd) / max(abs(fd), 1e-12)
    print(f"{name:<16} {g:>16.8f} {fd:>16.8f} {rel:>11.1e}")

worst = max(np.max(np.abs(dp - fd_p) / np.maximum(np.abs(fd_p), 1e-12)),
            np.max(np.abs(du0 - fd_u0) / np.maximum(np.abs(fd_u0), 1e-12)))
print(f"\nworst relative error: {worst:.1e}")
assert worst < 1e-5, "adjoint and finite differences disagree"

"""Benchmark variants: the loops (RNN, RK4, stencil, element writes) written as people write them.
Each variant is a Workload (see workloads.py) whose `f` is another spelling of a workload's
mathematics and whose `hand` is the hand-written gradient of that mathematics."""
from __future__ import annotations

import numpy as np
from workloads import (
    Workload,
    heat_1d_args,
    heat_1d_hand,
    lotka_volterra,
    rk4_args,
    rk4_hand,
)

from adjoint_compiler import Buffer

# --------------------------------------------------------------------------------------------
# Tanh RNN with a mean-squared readout loss at every step; gradient w.r.t. Wx, Wh, b, V.
# --------------------------------------------------------------------------------------------


def rnn_mse(Wx, Wh, b, V, xs, ys, h0):
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        loss = loss + np.mean((h @ V - ys[t]) ** 2)
    return loss


def rnn_mse_hand(Wx, Wh, b, V, xs, ys, h0):
    hs = [h0]
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        hs.append(h)
    gWx, gWh, gb, gV = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b), np.zeros_like(V)
    scale = 2.0 / (h0.shape[0] * V.shape[1])
    dh = np.zeros_like(h0)
    for t in range(xs.shape[0] - 1, -1, -1):
        h = hs[t + 1]
        dr = scale * (h @ V - ys[t])
        gV += h.T @ dr
        da = (dh + dr @ V.T) * (1.0 - h * h)
        gWx += xs[t].T @ da
        gWh += hs[t].T @ da
        gb += da.sum(axis=0)
        dh = da @ Wh.T
    return gWx, gWh, gb, gV


def rnn_mse_args(rng, size):
    T, B, D, H, O = {"full": (50, 32, 32, 64, 8), "small": (4, 3, 2, 3, 2), "quick": (5, 4, 3, 6, 2)}[size]
    xs = rng.standard_normal((T, B, D))
    ys = rng.standard_normal((T, B, O))
    Wx = rng.standard_normal((D, H)) / np.sqrt(D)
    Wh = 0.9 * rng.standard_normal((H, H)) / np.sqrt(H)
    b = 0.1 * rng.standard_normal(H)
    V = rng.standard_normal((H, O)) / np.sqrt(H)
    h0 = np.zeros((B, H))
    return Wx, Wh, b, V, xs, ys, h0


# --------------------------------------------------------------------------------------------
# RK4 on Lotka-Volterra (in-place right-hand side), stage arrays from Buffer / np.empty.
# --------------------------------------------------------------------------------------------


def rk4_buffer(p, u0, dt, nsteps):
    u = u0.copy()
    k1 = Buffer.zeros_like(u0)
    k2 = Buffer.zeros_like(u0)
    k3 = Buffer.zeros_like(u0)
    k4 = Buffer.zeros_like(u0)
    t = 0.0
    for _ in range(nsteps):
        lotka_volterra(k1, u, p, t)
        lotka_volterra(k2, u + 0.5 * dt * k1, p, t + 0.5 * dt)
        lotka_volterra(k3, u + 0.5 * dt * k2, p, t + 0.5 * dt)
        lotka_volterra(k4, u + dt * k3, p, t + dt)
        u = u + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return np.sum(u * u)


def rk4_empty(p, u0, dt, nsteps):
    u = u0.copy()
    k1 = np.empty_like(u0)
    k2 = np.empty_like(u0)
    k3 = np.empty_like(u0)
    k4 = np.empty_like(u0)
    t = 0.0
    for _ in range(nsteps):
        lotka_volterra(k1, u, p, t)
        lotka_volterra(k2, u + 0.5 * dt * k1, p, t + 0.5 * dt)
        lotka_volterra(k3, u + 0.5 * dt * k2, p, t + 0.5 * dt)
        lotka_volterra(k4, u + dt * k3, p, t + dt)
        u = u + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return np.sum(u * u)


# --------------------------------------------------------------------------------------------
# The 1-D heat stencil (fixed boundary values) in four more spellings; the mathematics, and so
# the hand-written gradient, is the original's.
# --------------------------------------------------------------------------------------------


def heat_buffer(u0, kappa, nsteps):
    u = Buffer(u0)
    for _ in range(nsteps):
        u[1:-1] = u[1:-1] + kappa * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    v = u.copy()
    return np.sum(v * v)


def heat_empty(u0, kappa, nsteps):
    u = u0.copy()
    for _ in range(nsteps):
        u_new = np.empty_like(u)
        u_new[0] = u[0]
        u_new[-1] = u[-1]
        u_new[1:-1] = u[1:-1] + kappa * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = u_new
    return np.sum(u * u)


def heat_swap(u0, kappa, nsteps):
    u = u0.copy()
    u_new = u0.copy()
    for _ in range(nsteps):
        u_new[1:-1] = u[1:-1] + kappa * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u, u_new = u_new, u
    return np.sum(u * u)


def heat_copyto(u0, kappa, nsteps):
    u = u0.copy()
    u_new = u0.copy()
    for _ in range(nsteps):
        u_new[1:-1] = u[1:-1] + kappa * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        np.copyto(u, u_new)
    return np.sum(u * u)


# --------------------------------------------------------------------------------------------
# An element write and a branch on the written value, in a loop over the slots.
# --------------------------------------------------------------------------------------------


def element_write_branch(x, w):
    n = x.shape[0]
    b = np.zeros(n)
    s = 0.0
    for i in range(n):
        b[i] = np.sin(x[i]) * w
        if b[i] > 0:
            s = s + b[i] ** 2
    return s


def element_write_branch_hand(x, w):
    n = x.shape[0]
    b = np.zeros(n)
    s = 0.0
    for i in range(n):
        b[i] = np.sin(x[i]) * w
        if b[i] > 0:
            s = s + b[i] ** 2
    gx = np.zeros(n)
    gw = 0.0
    for i in range(n - 1, -1, -1):
        if b[i] > 0:
            gb = 2.0 * b[i]
            gx[i] = gb * w * np.cos(x[i])
            gw += gb * np.sin(x[i])
    return gx, gw


def _element_write_args(n):
    def make(rng, size):
        m = {"full": n, "small": 12, "quick": 40}[size]
        return rng.standard_normal(m), 0.7
    return make


SPELLINGS: list = [
    Workload("rnn_mse", "tanh RNN, 50 steps, B32 D32 H64, mean-squared readout loss per step", rnn_mse,
             rnn_mse_hand, (0, 1, 2, 3), rnn_mse_args, needs="loops"),
    Workload("rk4_buffer", "RK4 Lotka-Volterra, 500 steps, stages in Buffers", rk4_buffer, rk4_hand,
             (0, 1), rk4_args, needs="loops + buffer writes"),
    Workload("rk4_empty", "RK4 Lotka-Volterra, 500 steps, stages from np.empty_like", rk4_empty, rk4_hand,
             (0, 1), rk4_args, needs="loops + in-place writes"),
    Workload("heat_buffer", "1-D heat stencil, N=1000, 200 steps, in a Buffer", heat_buffer, heat_1d_hand,
             (0, 1), heat_1d_args, needs="loops + buffer writes"),
    Workload("heat_empty", "1-D heat stencil, N=1000, 200 steps, np.empty_like per step", heat_empty,
             heat_1d_hand, (0, 1), heat_1d_args, needs="loops + in-place writes"),
    Workload("heat_swap", "1-D heat stencil, N=1000, 200 steps, two arrays swapped", heat_swap,
             heat_1d_hand, (0, 1), heat_1d_args, needs="loops + in-place writes"),
    Workload("heat_copyto", "1-D heat stencil, N=1000, 200 steps, np.copyto back", heat_copyto,
             heat_1d_hand, (0, 1), heat_1d_args, needs="loops + in-place writes"),
] + [
    Workload(f"elem_branch_{n // 1000}k", f"b[i] = sin(x[i]) * w and a branch on b[i], n={n:,}",
             element_write_branch, element_write_branch_hand, (0, 1), _element_write_args(n),
             needs="loops + element writes")
    for n in (2_000, 8_000, 32_000)
]

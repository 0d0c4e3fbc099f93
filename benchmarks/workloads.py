"""Benchmark workloads for adjoint_compiler.

Each workload is three things:

* ``f`` -- plain user code, written the way a NumPy user would write it; this is what the compiler
  differentiates (``grad(f, wrt=...)``);
* ``hand`` -- a hand-written NumPy gradient with the same signature as ``f``, returning a tuple of
  gradients in ``wrt`` order (verified against central finite differences by the harness before
  anything is timed);
* ``make_args(rng, size)`` -- the arguments, for ``size`` in ``"full"`` (timed), ``"small"`` (the
  finite-difference check) and ``"quick"`` (the CI smoke run, ``bench.py --quick``).

To add a workload, write the three functions below and append a ``Workload`` to ``WORKLOADS`` at
the bottom of this file -- that list is the only place the harness reads.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from adjoint_compiler import Buffer


@dataclass
class Workload:
    name: str
    description: str          # shapes of the full (timed) instance
    f: Callable               # user code: the function the compiler differentiates
    hand: Callable            # hand-written gradient: hand(*args) -> tuple of grads in `wrt` order
    wrt: tuple
    make_args: Callable       # make_args(rng, size) -> tuple of positional arguments
    needs: str = ""           # compiler feature the workload depends on (shown when it is skipped)
    torch_f: Callable | None = None   # optional torch version of f (used only if torch is importable)
    tags: tuple = field(default_factory=tuple)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# --------------------------------------------------------------------------------------------
# 1. Logistic regression: mean log-loss of a sigmoid, gradient w.r.t. weights and bias.
# --------------------------------------------------------------------------------------------

def logistic_regression_loss(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logistic_regression_hand(w, b, X, y):
    p = _sigmoid(X @ w + b)
    r = (p - y) / X.shape[0]
    return X.T @ r, float(r.sum())


def logistic_regression_args(rng, size):
    n, d = {"full": (1000, 100), "small": (20, 5), "quick": (50, 10)}[size]
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d) / np.sqrt(d)
    y = (rng.random(n) < _sigmoid(X @ w_true)).astype(float)
    w = 0.1 * rng.standard_normal(d)
    b = 0.1
    return w, b, X, y


def logistic_regression_torch(w, b, X, y):
    import torch
    z = X @ w + b
    p = 1.0 / (1.0 + torch.exp(-z))
    return -torch.mean(y * torch.log(p) + (1.0 - y) * torch.log(1.0 - p))


# --------------------------------------------------------------------------------------------
# 2. Two-layer tanh MLP with a (max-subtracted) softmax cross-entropy, gradient w.r.t. all four
#    parameter arrays. Y is one-hot.
# --------------------------------------------------------------------------------------------

def mlp_loss(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def mlp_hand(W1, b1, W2, b2, X, Y):
    n = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    # d loss / d logits for one-hot rows (sum(Y) = 1 per row); written for general Y rows.
    dlogits = (p * Y.sum(axis=1, keepdims=True) - Y) / n
    gW2 = h.T @ dlogits
    gb2 = dlogits.sum(axis=0)
    da = (dlogits @ W2.T) * (1.0 - h * h)
    gW1 = X.T @ da
    gb1 = da.sum(axis=0)
    return gW1, gb1, gW2, gb2


def mlp_args(rng, size):
    n, d, hdim, k = {"full": (256, 100, 200, 10), "small": (6, 4, 5, 3), "quick": (16, 8, 12, 4)}[size]
    X = rng.standard_normal((n, d))
    Y = np.eye(k)[rng.integers(0, k, n)]
    W1 = rng.standard_normal((d, hdim)) / np.sqrt(d)
    b1 = 0.1 * rng.standard_normal(hdim)
    W2 = rng.standard_normal((hdim, k)) / np.sqrt(hdim)
    b2 = 0.1 * rng.standard_normal(k)
    return W1, b1, W2, b2, X, Y


def mlp_torch(W1, b1, W2, b2, X, Y):
    import torch
    h = torch.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - torch.max(logits, dim=1, keepdim=True).values
    logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
    return -torch.mean(torch.sum(Y * logp, dim=1))


# --------------------------------------------------------------------------------------------
# 3. Scalar recurrence (Python floats in a loop): logistic map, mean of squares of the trajectory.
# --------------------------------------------------------------------------------------------

def scalar_recurrence(a, x0, n):
    x = x0
    total = 0.0
    for _ in range(n):
        x = a * x * (1.0 - x)
        total = total + x * x
    return total / n


def scalar_recurrence_hand(a, x0, n):
    xs = [x0]
    x = x0
    for _ in range(n):
        x = a * x * (1.0 - x)
        xs.append(x)
    xb, ab = 0.0, 0.0
    for k in range(n, 0, -1):
        x, prev = xs[k], xs[k - 1]
        xb = xb + 2.0 * x / n          # from total += x * x
        ab += xb * prev * (1.0 - prev)
        xb = xb * a * (1.0 - 2.0 * prev)
    return ab, xb


def scalar_recurrence_args(rng, size):
    n = {"full": 1000, "small": 15, "quick": 20}[size]
    return 2.9, 0.3, n


# --------------------------------------------------------------------------------------------
# 4. Tanh RNN, 50 steps, loss on the final hidden state; gradient w.r.t. Wx, Wh, b.
# --------------------------------------------------------------------------------------------

def rnn_loss(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return 0.5 * np.sum(h * h)


def rnn_hand(Wx, Wh, b, xs, h0):
    hs = [h0]
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        hs.append(h)
    gWx, gWh, gb = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = hs[-1]
    for t in range(xs.shape[0] - 1, -1, -1):
        h = hs[t + 1]
        da = dh * (1.0 - h * h)
        gWx += xs[t].T @ da
        gWh += hs[t].T @ da
        gb += da.sum(axis=0)
        dh = da @ Wh.T
    return gWx, gWh, gb


def rnn_args(rng, size):
    T, B, D, H = {"full": (50, 32, 32, 64), "small": (4, 3, 2, 3), "quick": (5, 4, 3, 6)}[size]
    xs = rng.standard_normal((T, B, D))
    Wx = rng.standard_normal((D, H)) / np.sqrt(D)
    Wh = 0.9 * rng.standard_normal((H, H)) / np.sqrt(H)
    b = 0.1 * rng.standard_normal(H)
    h0 = np.zeros((B, H))
    return Wx, Wh, b, xs, h0


# --------------------------------------------------------------------------------------------
# 5. RK4 on Lotka-Volterra with an in-place right-hand side rhs(du, u, p, t); gradient w.r.t. the
#    parameters p and the initial state u0.
# --------------------------------------------------------------------------------------------

def lotka_volterra(du, u, p, t):
    du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
    du[1] = -p[2] * u[1] + p[3] * u[0] * u[1]


def rk4_lotka_volterra(p, u0, dt, nsteps):
    u = u0.copy()
    k1 = np.zeros_like(u0)
    k2 = np.zeros_like(u0)
    k3 = np.zeros_like(u0)
    k4 = np.zeros_like(u0)
    t = 0.0
    for _ in range(nsteps):
        lotka_volterra(k1, u, p, t)
        lotka_volterra(k2, u + 0.5 * dt * k1, p, t + 0.5 * dt)
        lotka_volterra(k3, u + 0.5 * dt * k2, p, t + 0.5 * dt)
        lotka_volterra(k4, u + dt * k3, p, t + dt)
        u = u + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return np.sum(u * u)


def _lv(u, p):
    return np.array([p[0] * u[0] - p[1] * u[0] * u[1], -p[2] * u[1] + p[3] * u[0] * u[1]])


def _lv_vjp(u, p, g):
    """(u_bar, p_bar) of the Lotka-Volterra right-hand side for the cotangent g."""
    ub = np.array([g[0] * (p[0] - p[1] * u[1]) + g[1] * p[3] * u[1],
                   -g[0] * p[1] * u[0] + g[1] * (p[3] * u[0] - p[2])])
    pb = np.array([g[0] * u[0], -g[0] * u[0] * u[1], -g[1] * u[1], g[1] * u[0] * u[1]])
    return ub, pb


def rk4_hand(p, u0, dt, nsteps):
    u = u0.copy()
    stages = []
    for _ in range(nsteps):
        k1 = _lv(u, p)
        u2 = u + 0.5 * dt * k1
        k2 = _lv(u2, p)
        u3 = u + 0.5 * dt * k2
        k3 = _lv(u3, p)
        u4 = u + dt * k3
        k4 = _lv(u4, p)
        stages.append((u, u2, u3, u4))
        u = u + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    ub = 2.0 * u
    pb = np.zeros_like(p)
    for u1, u2, u3, u4 in reversed(stages):
        kb1, kb2, kb3, kb4 = (dt / 6.0) * ub, (dt / 3.0) * ub, (dt / 3.0) * ub, (dt / 6.0) * ub
        s_ub, s_pb = _lv_vjp(u4, p, kb4)
        ub = ub + s_ub
        pb += s_pb
        kb3 = kb3 + dt * s_ub
        s_ub, s_pb = _lv_vjp(u3, p, kb3)
        ub = ub + s_ub
        pb += s_pb
        kb2 = kb2 + 0.5 * dt * s_ub
        s_ub, s_pb = _lv_vjp(u2, p, kb2)
        ub = ub + s_ub
        pb += s_pb
        kb1 = kb1 + 0.5 * dt * s_ub
        s_ub, s_pb = _lv_vjp(u1, p, kb1)
        ub = ub + s_ub
        pb += s_pb
    return pb, ub


def rk4_args(rng, size):
    nsteps = {"full": 500, "small": 8, "quick": 10}[size]
    p = np.array([1.5, 1.0, 3.0, 1.0]) + 0.05 * rng.standard_normal(4)
    u0 = np.array([1.0, 1.0]) + 0.05 * rng.standard_normal(2)
    return p, u0, 0.01, nsteps


# --------------------------------------------------------------------------------------------
# 6. 1-D heat equation, explicit stencil written into a buffer (fixed boundary values); gradient
#    w.r.t. the initial state and the diffusion number kappa.
# --------------------------------------------------------------------------------------------

def heat_1d(u0, kappa, nsteps):
    u = u0.copy()
    for _ in range(nsteps):
        u[1:-1] = u[1:-1] + kappa * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def heat_1d_hand(u0, kappa, nsteps):
    u = u0.copy()
    states = []
    for _ in range(nsteps):
        states.append(u)
        un = u.copy()
        un[1:-1] = u[1:-1] + kappa * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = un
    ub = 2.0 * u
    kb = 0.0
    for u in reversed(states):
        g = ub[1:-1]
        kb += float(g @ (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        g = kappa * g
        ub = ub.copy()
        ub[2:] += g
        ub[1:-1] -= 2.0 * g
        ub[:-2] += g
    return ub, kb


def heat_1d_args(rng, size):
    n, nsteps = {"full": (1000, 200), "small": (10, 4), "quick": (16, 5)}[size]
    u0 = rng.standard_normal(n)
    return u0, 0.25, nsteps


# --------------------------------------------------------------------------------------------
# 7. Broadcast-assign of scalars into a 200,000-slot Buffer (then a weighted read): the write
#    node's adjoint over a large buffer; gradient w.r.t. both written values and the initial data.
# --------------------------------------------------------------------------------------------

def buffer_broadcast(p, q, x, w):
    b = Buffer(x)
    b[...] = p
    b[::2] = q
    return np.sum(b.copy() * w)


def buffer_broadcast_hand(p, q, x, w):
    return float(w[1::2].sum()), float(w[::2].sum()), np.zeros_like(x)


def buffer_broadcast_args(rng, size):
    n = {"full": 200_000, "small": 10, "quick": 1000}[size]
    return 0.3, -0.7, rng.standard_normal(n), rng.standard_normal(n)


# --------------------------------------------------------------------------------------------
# The registry: the harness runs exactly these, in this order.
# --------------------------------------------------------------------------------------------

WORKLOADS = [
    Workload("logreg", "X 1000x100, mean log-loss", logistic_regression_loss, logistic_regression_hand,
             (0, 1), logistic_regression_args, torch_f=logistic_regression_torch),
    Workload("mlp", "batch 256, 100-200-10, tanh + softmax CE", mlp_loss, mlp_hand,
             (0, 1, 2, 3), mlp_args, torch_f=mlp_torch),
    Workload("scalar_loop", "logistic map, 1000 float steps", scalar_recurrence, scalar_recurrence_hand,
             (0, 1), scalar_recurrence_args, needs="loops"),
    Workload("rnn", "tanh RNN, 50 steps, B32 D32 H64", rnn_loss, rnn_hand,
             (0, 1, 2), rnn_args, needs="loops"),
    Workload("rk4_inplace", "RK4 Lotka-Volterra, 500 steps, in-place rhs", rk4_lotka_volterra, rk4_hand,
             (0, 1), rk4_args, needs="loops + in-place writes"),
    Workload("heat_1d", "1-D heat stencil, N=1000, 200 steps", heat_1d, heat_1d_hand,
             (0, 1), heat_1d_args, needs="loops + buffer writes"),
    Workload("buffer_assign", "broadcast-assign into a 200,000-slot Buffer", buffer_broadcast,
             buffer_broadcast_hand, (0, 1, 2), buffer_broadcast_args, needs="buffer writes"),
]


# The same mathematics in other spellings (issue 13): each module lists its own Workloads.
from spellings_loss import SPELLINGS as _LOSS_SPELLINGS  # noqa: E402
from spellings_loops import SPELLINGS as _LOOP_SPELLINGS  # noqa: E402
from spellings_more import SPELLINGS as _MORE_SPELLINGS  # noqa: E402

WORKLOADS += _LOSS_SPELLINGS + _LOOP_SPELLINGS + _MORE_SPELLINGS


def by_name(name: str) -> Workload:
    for w in WORKLOADS:
        if w.name == name:
            return w
    raise KeyError(f"no workload named {name!r}; known: {', '.join(w.name for w in WORKLOADS)}")

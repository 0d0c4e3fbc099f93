"""Benchmark variants written after the issue-13 list, as people outside the team write the same
models: ReLU as `np.maximum`, `np.where` and a mask product, log-softmax through `[:, None]`,
logistic regression through `np.einsum`, least squares through `np.linalg.norm`, a Poisson GLM,
self-attention, layer normalisation, cross-entropy by integer-label indexing, an RNN collecting
its states with `append` and `np.stack`, and the heat stencil rebuilt with `np.concatenate`.
Each `hand` is the hand-written NumPy gradient of the same mathematics."""
from __future__ import annotations

import numpy as np
from workloads import Workload


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


# -- ReLU MLP with a softmax cross-entropy, ReLU in three spellings -------------------------------

def mlp_relu_maximum(W1, b1, W2, b2, X, Y):
    h = np.maximum(X @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.sum(Y * np.log(p)) / X.shape[0]


def mlp_relu_where(W1, b1, W2, b2, X, Y):
    a = X @ W1 + b1
    h = np.where(a > 0, a, 0.0)
    z = h @ W2 + b2
    lse = np.log(np.sum(np.exp(z - np.max(z, axis=1, keepdims=True)), axis=1, keepdims=True)) \
        + np.max(z, axis=1, keepdims=True)
    return -np.mean(np.sum(Y * (z - lse), axis=1))


def mlp_relu_mask(W1, b1, W2, b2, X, Y):
    a = X @ W1 + b1
    h = a * (a > 0)
    z = h @ W2 + b2
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1))[:, None]
    return -(Y * logp).sum() / len(X)


def mlp_relu_hand(W1, b1, W2, b2, X, Y):
    a = X @ W1 + b1
    h = np.maximum(a, 0.0)
    dz = (_softmax(h @ W2 + b2) * Y.sum(axis=1, keepdims=True) - Y) / X.shape[0]
    da = (dz @ W2.T) * (a > 0)
    return X.T @ da, da.sum(0), h.T @ dz, dz.sum(0)


def mlp_relu_args(rng, size):
    n, d, hdim, k = {"full": (256, 100, 200, 10), "small": (6, 4, 5, 3), "quick": (16, 8, 12, 4)}[size]
    X = rng.standard_normal((n, d))
    Y = np.eye(k)[rng.integers(0, k, n)]
    return (rng.standard_normal((d, hdim)) / np.sqrt(d), 0.1 * rng.standard_normal(hdim),
            rng.standard_normal((hdim, k)) / np.sqrt(hdim), 0.1 * rng.standard_normal(k), X, Y)


# -- regressions -----------------------------------------------------------------------------------

def _regression_args(rng, size, kind):
    n, d = {"full": (1000, 100), "small": (20, 5), "quick": (50, 10)}[size]
    X = rng.standard_normal((n, d)) / (np.sqrt(d) if kind == "poisson" else 1.0)
    w = 0.1 * rng.standard_normal(d)
    if kind == "poisson":
        return w, X, rng.poisson(1.0, n).astype(float)
    return w, 0.1, X, (rng.random(n) < _sig(X @ rng.standard_normal(d) / np.sqrt(d))).astype(float)


def logreg_einsum(w, b, X, y):
    z = np.einsum("ij,j->i", X, w) + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logreg_hand(w, b, X, y):
    r = (_sig(X @ w + b) - y) / X.shape[0]
    return X.T @ r, float(r.sum())


def lsq_norm(w, b, X, y):
    r = X @ w + b - y
    return 0.5 * np.linalg.norm(r) ** 2 / len(y)


def lsq_hand(w, b, X, y):
    r = (X @ w + b - y) / X.shape[0]
    return X.T @ r, float(r.sum())


def poisson_glm(w, X, y):
    eta = X @ w
    return np.sum(np.exp(eta) - y * eta) / len(y) + 0.01 * w @ w


def poisson_hand(w, X, y):
    return (X.T @ (np.exp(X @ w) - y)) / len(y) + 0.02 * w,


# -- self-attention, layer normalisation, integer-label cross-entropy ------------------------------

def attention(Wq, Wk, Wv, X):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    s = Q @ K.T / np.sqrt(Q.shape[1])
    s = s - s.max(axis=1, keepdims=True)
    P = np.exp(s)
    P = P / P.sum(axis=1, keepdims=True)
    return 0.5 * np.sum((P @ V) ** 2)


def attention_hand(Wq, Wk, Wv, X):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    c = 1.0 / np.sqrt(Q.shape[1])
    P = _softmax(Q @ K.T * c)
    out = P @ V
    dP = out @ V.T
    ds = P * (dP - np.sum(dP * P, axis=1, keepdims=True)) * c
    return X.T @ (ds @ K), X.T @ (ds.T @ Q), X.T @ (P.T @ out)


def attention_args(rng, size):
    t, d = {"full": (128, 64), "small": (5, 3), "quick": (16, 8)}[size]
    return tuple(rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(3)) + (rng.standard_normal((t, d)),)


def layernorm(g, b, X):
    mu = X.mean(axis=-1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=-1, keepdims=True)
    y = g * (X - mu) / np.sqrt(var + 1e-5) + b
    return np.sum(np.tanh(y))


def layernorm_hand(g, b, X):
    xc = X - X.mean(axis=-1, keepdims=True)
    xh = xc / np.sqrt((xc ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    dy = 1.0 - np.tanh(g * xh + b) ** 2
    return (dy * xh).sum(0), dy.sum(0)


def layernorm_args(rng, size):
    n, d = {"full": (512, 256), "small": (4, 3), "quick": (16, 8)}[size]
    return rng.standard_normal(d), rng.standard_normal(d), rng.standard_normal((n, d))


def labels_ce(W, b, X, labels):
    z = X @ W + b
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(X.shape[0]), labels].mean()


def labels_ce_hand(W, b, X, labels):
    p = _softmax(X @ W + b)
    n = X.shape[0]
    p[np.arange(n), labels] -= 1.0
    p /= n
    return X.T @ p, p.sum(0)


def labels_ce_args(rng, size):
    n, d, k = {"full": (512, 100, 10), "small": (6, 4, 3), "quick": (32, 8, 4)}[size]
    return (rng.standard_normal((d, k)) / np.sqrt(d), np.zeros(k), rng.standard_normal((n, d)),
            rng.integers(0, k, n))


# -- loops: states collected with append, a stencil rebuilt with concatenate ----------------------

def rnn_stack(Wx, Wh, xs, h0):
    hs = []
    h = h0
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
        hs.append(h)
    return np.mean(np.stack(hs) ** 2)


def rnn_stack_hand(Wx, Wh, xs, h0):
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(x @ Wx + hs[-1] @ Wh))
    c = 2.0 / (len(xs) * h0.size)
    gWx, gWh, gh = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(h0)
    for t in range(len(xs) - 1, -1, -1):
        da = (gh + c * hs[t + 1]) * (1.0 - hs[t + 1] ** 2)
        gWx += xs[t].T @ da
        gWh += hs[t].T @ da
        gh = da @ Wh.T
    return gWx, gWh


def rnn_stack_args(rng, size):
    t, b, d, h = {"full": (50, 32, 32, 64), "small": (3, 2, 3, 4), "quick": (8, 4, 6, 8)}[size]
    return (rng.standard_normal((d, h)) / np.sqrt(d), rng.standard_normal((h, h)) / np.sqrt(h),
            rng.standard_normal((t, b, d)), np.zeros((b, h)))


def heat_concat(u0, kappa, nsteps):
    u = u0
    for _ in range(nsteps):
        lap = u[2:] - 2 * u[1:-1] + u[:-2]
        u = np.concatenate([u[:1], u[1:-1] + kappa * lap, u[-1:]])
    return np.sum(u ** 2)


def heat_concat_hand(u0, kappa, nsteps):
    us = [u0]
    for _ in range(nsteps):
        u = us[-1]
        v = u.copy()
        v[1:-1] = u[1:-1] + kappa * (u[2:] - 2 * u[1:-1] + u[:-2])
        us.append(v)
    g, gk = 2 * us[-1], 0.0
    for s in range(nsteps - 1, -1, -1):
        u, gi = us[s], g[1:-1].copy()
        gk += float(gi @ (u[2:] - 2 * u[1:-1] + u[:-2]))
        g[1:-1] = gi * (1 - 2 * kappa)
        g[2:] += kappa * gi
        g[:-2] += kappa * gi
    return g, gk


def heat_concat_args(rng, size):
    n, steps = {"full": (1000, 200), "small": (6, 3), "quick": (50, 10)}[size]
    return rng.standard_normal(n), 0.1, steps


SPELLINGS: list = [
    Workload("mlp_relu_maximum", "batch 256, 100-200-10, ReLU as np.maximum, softmax then log", mlp_relu_maximum,
             mlp_relu_hand, (0, 1, 2, 3), mlp_relu_args, tags=("more",)),
    Workload("mlp_relu_where", "the same, ReLU as np.where, logsumexp written out", mlp_relu_where,
             mlp_relu_hand, (0, 1, 2, 3), mlp_relu_args, tags=("more",)),
    Workload("mlp_relu_mask", "the same, ReLU as a * (a > 0), log-softmax through [:, None]", mlp_relu_mask,
             mlp_relu_hand, (0, 1, 2, 3), mlp_relu_args, tags=("more",)),
    Workload("logreg_einsum", "X 1000x100, z = einsum('ij,j->i'), mean logaddexp(0, z) - y z", logreg_einsum,
             logreg_hand, (0, 1), lambda rng, size: _regression_args(rng, size, "logistic"), tags=("more",)),
    Workload("lsq_norm", "X 1000x100, least squares as 0.5 norm(r) ** 2 / n", lsq_norm, lsq_hand, (0, 1),
             lambda rng, size: _regression_args(rng, size, "lsq"), tags=("more",)),
    Workload("poisson_glm", "X 1000x50, Poisson log-likelihood with an L2 term", poisson_glm, poisson_hand, (0,),
             lambda rng, size: _regression_args(rng, size, "poisson"), tags=("more",)),
    Workload("attention", "one self-attention head, 128 tokens, width 64", attention, attention_hand, (0, 1, 2),
             attention_args, tags=("more",)),
    Workload("layernorm", "layer norm of 512x256 with gain and bias, sum of tanh", layernorm, layernorm_hand,
             (0, 1), layernorm_args, tags=("more",)),
    Workload("labels_ce", "512x100 -> 10, cross-entropy by logp[np.arange(n), labels]", labels_ce,
             labels_ce_hand, (0, 1), labels_ce_args, tags=("more",)),
    Workload("rnn_stack", "tanh RNN, 50 steps, states appended to a list, mean of np.stack(hs) ** 2", rnn_stack,
             rnn_stack_hand, (0, 1), rnn_stack_args, tags=("more",)),
    Workload("heat_concat", "1-D heat stencil, N=1000, 200 steps, rebuilt with np.concatenate", heat_concat,
             heat_concat_hand, (0, 1), heat_concat_args, tags=("more",)),
]

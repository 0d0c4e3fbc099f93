"""Benchmark variants: the losses (logistic regression, MLP) written as people write them.
Each variant is a Workload (see workloads.py) whose `f` is another spelling of a workload's
mathematics and whose `hand` is the hand-written gradient of that mathematics."""
from __future__ import annotations

import numpy as np
from workloads import Workload


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _logreg_data(rng, size, signed):
    n, d = {"full": (1000, 100), "small": (20, 5), "quick": (50, 10)}[size]
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d) / np.sqrt(d)
    y = (rng.random(n) < _sigmoid(X @ w_true)).astype(float)
    if signed:
        y = 2.0 * y - 1.0  # labels in {-1, 1}
    return 0.1 * rng.standard_normal(d), 0.1, X, y


# --------------------------------------------------------------------------------------------
# Logistic regression with labels in {-1, 1}: the loss log(1 + exp(-y z)) (softplus of -y z),
# written with log and exp, and with logaddexp. Gradient w.r.t. the weights and the bias.
# --------------------------------------------------------------------------------------------

def logreg_log_exp(w, b, X, y):
    return np.mean(np.log(1 + np.exp(-y * (X @ w + b))))


def logreg_logaddexp(w, b, X, y):
    margins = y * (X @ w + b)
    return np.mean(np.logaddexp(0, -margins))


def logreg_signed_hand(w, b, X, y):
    m = y * (X @ w + b)
    r = -y / (1.0 + np.exp(m)) / X.shape[0]  # d/dm log(1 + exp(-m)) = -sigmoid(-m)
    return X.T @ r, float(r.sum())


def logreg_signed_args(rng, size):
    return _logreg_data(rng, size, signed=True)


# --------------------------------------------------------------------------------------------
# Logistic regression with a sigmoid and a cross-entropy guarded by eps: the exact gradient of
# the eps form, d/dz log(p + eps) = p (1 - p) / (p + eps).
# --------------------------------------------------------------------------------------------

def logreg_eps(w, b, X, y):
    eps = 1e-7
    p = 1 / (1 + np.exp(-(X @ w + b)))
    return -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))


def logreg_eps_hand(w, b, X, y):
    eps = 1e-7
    p = _sigmoid(X @ w + b)
    q = 1.0 - p
    r = p * q * ((1.0 - y) / (q + eps) - y / (p + eps)) / X.shape[0]
    return X.T @ r, float(r.sum())


def logreg_eps_args(rng, size):
    return _logreg_data(rng, size, signed=False)


# --------------------------------------------------------------------------------------------
# The two-layer MLP of workloads.py with its log-softmax through the user's own logsumexp
# helper; once with one-hot labels, once with integer labels picked by index.
# --------------------------------------------------------------------------------------------

def logsumexp(z):
    m = np.max(z, axis=1, keepdims=True)
    return m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))


def mlp_logsumexp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    logp = logits - logsumexp(logits)
    return -np.mean(np.sum(Y * logp, axis=1))


def log_softmax(z):
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def mlp_labels(W1, b1, W2, b2, X, labels):
    h = np.tanh(X @ W1 + b1)
    logp = log_softmax(h @ W2 + b2)
    return -np.mean(logp[np.arange(X.shape[0]), labels])


def _mlp_backward(X, h, W2, dlogits):
    da = (dlogits @ W2.T) * (1.0 - h * h)
    return X.T @ da, da.sum(axis=0), h.T @ dlogits, dlogits.sum(axis=0)


def _softmax(logits):
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def mlp_logsumexp_hand(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    p = _softmax(h @ W2 + b2)
    dlogits = (p * Y.sum(axis=1, keepdims=True) - Y) / X.shape[0]
    return _mlp_backward(X, h, W2, dlogits)


def mlp_labels_hand(W1, b1, W2, b2, X, labels):
    h = np.tanh(X @ W1 + b1)
    dlogits = _softmax(h @ W2 + b2)
    dlogits[np.arange(X.shape[0]), labels] -= 1.0
    dlogits /= X.shape[0]
    return _mlp_backward(X, h, W2, dlogits)


def _mlp_data(rng, size):
    n, d, hdim, k = {"full": (256, 100, 200, 10), "small": (6, 4, 5, 3), "quick": (16, 8, 12, 4)}[size]
    X = rng.standard_normal((n, d))
    labels = rng.integers(0, k, n)
    W1 = rng.standard_normal((d, hdim)) / np.sqrt(d)
    b1 = 0.1 * rng.standard_normal(hdim)
    W2 = rng.standard_normal((hdim, k)) / np.sqrt(hdim)
    b2 = 0.1 * rng.standard_normal(k)
    return W1, b1, W2, b2, X, labels, k


def mlp_onehot_args(rng, size):
    W1, b1, W2, b2, X, labels, k = _mlp_data(rng, size)
    return W1, b1, W2, b2, X, np.eye(k)[labels]


def mlp_labels_args(rng, size):
    return _mlp_data(rng, size)[:6]


SPELLINGS: list = [
    Workload("logreg_log_exp", "X 1000x100, mean log(1 + exp(-y z)), y in {-1, 1}", logreg_log_exp,
             logreg_signed_hand, (0, 1), logreg_signed_args, tags=("spelling",)),
    Workload("logreg_logaddexp", "X 1000x100, mean logaddexp(0, -y z), y in {-1, 1}", logreg_logaddexp,
             logreg_signed_hand, (0, 1), logreg_signed_args, tags=("spelling",)),
    Workload("logreg_eps", "X 1000x100, sigmoid, cross-entropy with log(p + eps)", logreg_eps,
             logreg_eps_hand, (0, 1), logreg_eps_args, tags=("spelling",)),
    Workload("mlp_logsumexp", "batch 256, 100-200-10, log-softmax via a logsumexp helper", mlp_logsumexp,
             mlp_logsumexp_hand, (0, 1, 2, 3), mlp_onehot_args, tags=("spelling",)),
    Workload("mlp_labels", "batch 256, 100-200-10, log_softmax helper, integer labels", mlp_labels,
             mlp_labels_hand, (0, 1, 2, 3), mlp_labels_args, tags=("spelling",)),
]

"""Composite rules (see adjoint_compiler/composite.py): forms whose adjoint, taken whole, needs
fewer operations than the chain rule through their parts, and stays finite where the parts'
adjoints would divide by a vanishing value (the log of a saturated sigmoid).

Each form is written once: it is matched by meaning (adjoint_compiler/canonicalize.py), so the
sigmoid below is also `np.exp(z) / (1 + np.exp(z))`, `0.5 * (1 + np.tanh(z / 2))` and
`(np.exp(-z) + 1) ** -1`, the softplus is also `np.log1p(np.exp(x))` and `np.logaddexp(0, x)`,
and the log-softmax is also the max-shifted one and `z - logsumexp(z)` through a helper. Where a
composite is registered twice, the first reads values the user's code computes anyway and
applies only where they exist; the second works from the leaves alone.
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.composite import composite

SIGMOID = ["1 / (1 + np.exp(-z))"]
LOG_LOSS = "u * np.log(p) + (1 - u) * np.log(1 - p)"
# the log-loss guarded by eps: d/dz log(p + eps) = p (1 - p) / (p + eps)
EPS_LOG_LOSS = "u * la + (1 - u) * lb"
EPS_PARTS = {"la": ["np.log(a)"], "lb": ["np.log(b)"], "a": ["p + eps"], "b": ["1 - p + eps"], "p": SIGMOID}


# -- the log-loss of a sigmoid: d/dz = u - p, d/du = log(p) - log(1 - p) = z ----------------------
@composite(LOG_LOSS, p=SIGMOID)
def sigmoid_log_loss(s, u, p, z):
    z_bar += rt.unbroadcast(s_bar * (u - p), z)
    u_bar += rt.unbroadcast(s_bar * z, u)


@composite(f"np.sum({LOG_LOSS})", p=SIGMOID)
def sum_sigmoid_log_loss(s, u, p, z):
    """`u - p` has the summed array's shape: the scalar s_bar is never broadcast."""
    residual = u - p
    z_bar += rt.unbroadcast(residual * s_bar, z)
    u_bar += rt.unbroadcast(rt.expand_like(z * s_bar, residual), u)


@composite(f"np.mean({LOG_LOSS})", p=SIGMOID)
def mean_sigmoid_log_loss(s, u, p, z):
    residual = u - p
    scale = s_bar / np.size(residual)
    z_bar += rt.unbroadcast(residual * scale, z)
    u_bar += rt.unbroadcast(rt.expand_like(z * scale, residual), u)


# -- the log-loss of a sigmoid with eps: its exact gradient, without 1/p or the chain through log --
@composite(EPS_LOG_LOSS, **EPS_PARTS)
def sigmoid_eps_log_loss(s, u, la, lb, a, b, eps, p, z):
    z_bar += rt.unbroadcast(s_bar * (p * (1.0 - p)) * (u / a - (1.0 - u) / b), z)
    u_bar += rt.unbroadcast(s_bar * (la - lb), u)
    eps_bar += rt.unbroadcast(s_bar * (u / a + (1.0 - u) / b), eps)


@composite(f"np.sum({EPS_LOG_LOSS})", **EPS_PARTS)
def sum_sigmoid_eps_log_loss(s, u, la, lb, a, b, eps, p, z):
    dz = p * (1.0 - p) * (u / a - (1.0 - u) / b)
    z_bar += rt.unbroadcast(dz * s_bar, z)
    u_bar += rt.unbroadcast(rt.expand_like((la - lb) * s_bar, dz), u)
    eps_bar += rt.unbroadcast(rt.expand_like((u / a + (1.0 - u) / b) * s_bar, dz), eps)


@composite(f"np.mean({EPS_LOG_LOSS})", **EPS_PARTS)
def mean_sigmoid_eps_log_loss(s, u, la, lb, a, b, eps, p, z):
    dz = p * (1.0 - p) * (u / a - (1.0 - u) / b)
    scale = s_bar / np.size(dz)
    z_bar += rt.unbroadcast(dz * scale, z)
    u_bar += rt.unbroadcast(rt.expand_like((la - lb) * scale, dz), u)
    eps_bar += rt.unbroadcast(rt.expand_like((u / a + (1.0 - u) / b) * scale, dz), eps)


# -- the sigmoid and its logs ---------------------------------------------------------------------
@composite("np.log(p)", p=SIGMOID)
def log_sigmoid(s, p, z):
    z_bar += s_bar * (1.0 - p)


@composite("np.log(1 - p)", p=SIGMOID)
def log_one_minus_sigmoid(s, p, z):
    z_bar += -s_bar * p


@composite(*SIGMOID)
def sigmoid(p, z):
    z_bar += p_bar * (p * (1.0 - p))


# -- softplus log(1 + exp(x)): d/dx = sigmoid(x). From the values the user computed where they
#    exist: exp(x) and 1 + exp(x) (nan only where exp(x) is inf, and the softplus with it), or the m
#    of x = -m; else from x alone. The exponent is kept below overflow: there the sigmoid is 0 to
#    within 1e-308 ------------------------------------------------------------------------------
SOFTPLUS_OF_EXP = {"v": ["1 + e"], "e": ["np.exp(x)"]}


@composite("np.sum(np.log(v))", **SOFTPLUS_OF_EXP)
def sum_softplus_of_exp(s, v, e, x):
    x_bar += (e / v) * s_bar


@composite("np.mean(np.log(v))", **SOFTPLUS_OF_EXP)
def mean_softplus_of_exp(s, v, e, x):
    x_bar += (e / v) * (s_bar / np.size(e))


@composite("np.log(v)", **SOFTPLUS_OF_EXP)
def softplus_of_exp(s, v, e, x):
    x_bar += s_bar * (e / v)


@composite("np.sum(np.log(1 + np.exp(-m)))")
def sum_softplus_of_negated(s, m):
    m_bar += -s_bar / (1.0 + np.exp(np.minimum(m, 709.0)))


@composite("np.mean(np.log(1 + np.exp(-m)))")
def mean_softplus_of_negated(s, m):
    m_bar += (-s_bar / np.size(m)) / (1.0 + np.exp(np.minimum(m, 709.0)))


@composite("np.log(1 + np.exp(-m))")
def softplus_of_negated(s, m):
    m_bar += -s_bar / (1.0 + np.exp(np.minimum(m, 709.0)))


@composite("np.sum(np.log(1 + np.exp(x)))")
def sum_softplus(s, x):
    x_bar += s_bar / (1.0 + np.exp(np.minimum(-x, 709.0)))


@composite("np.mean(np.log(1 + np.exp(x)))")
def mean_softplus(s, x):
    x_bar += (s_bar / np.size(x)) / (1.0 + np.exp(np.minimum(-x, 709.0)))


@composite("np.log(1 + np.exp(x))")
def softplus(s, x):
    x_bar += s_bar / (1.0 + np.exp(np.minimum(-x, 709.0)))


# -- log-softmax: d/dz = s_bar - softmax * sum(s_bar). The max a stable form subtracts cancels out
#    of the canonical form, so it passes nothing (the result does not depend on it) ---------------
@composite("z - np.log(np.sum(np.exp(z), axis=k, keepdims=True))")
def log_softmax(s, z, k):
    z_bar += s_bar - np.exp(s) * np.sum(s_bar, axis=k, keepdims=True)


@composite("np.log(np.sum(np.exp(z), axis=k, keepdims=True))")
def logsumexp(s, z, k):
    z_bar += s_bar * np.exp(z - s)


@composite("np.log(np.sum(np.exp(z), axis=k, keepdims=d))")
def logsumexp_reduced(s, z, k, d):
    z_bar += rt.expand_reduced(s_bar, z, k, d) * np.exp(z - rt.expand_reduced(s, z, k, d))


@composite("np.exp(z) / np.sum(np.exp(z), axis=k, keepdims=True)")
def softmax(s, z, k):
    z_bar += s * (s_bar - np.sum(s_bar * s, axis=k, keepdims=True))

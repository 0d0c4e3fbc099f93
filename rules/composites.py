"""Composite rules (see adjoint_compiler/composite.py): forms whose adjoint, taken whole, needs
fewer operations than the chain rule through their parts, and stays finite where the parts'
adjoints would divide by a vanishing value (the log of a saturated sigmoid)."""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.composite import composite

SIGMOID = ["1 / (1 + np.exp(-z))"]
LOG_LOSS = ["u * np.log(p) + (1 - u) * np.log(1 - p)", "u * np.log(p) + (1 - u) * np.log1p(-p)"]


# -- the log-loss of a sigmoid: d/dz = u - p, d/du = log(p) - log(1 - p) = z ----------------------
@composite(*LOG_LOSS, p=SIGMOID)
def sigmoid_log_loss(s, u, p, z):
    z_bar += rt.unbroadcast(s_bar * (u - p), z)
    u_bar += rt.unbroadcast(s_bar * z, u)


@composite(*[f"np.sum({form})" for form in LOG_LOSS], p=SIGMOID)
def sum_sigmoid_log_loss(s, u, p, z):
    """`u - p` has the summed array's shape: the scalar s_bar is never broadcast."""
    residual = u - p
    z_bar += rt.unbroadcast(residual * s_bar, z)
    u_bar += rt.unbroadcast(rt.expand_like(z * s_bar, residual), u)


@composite(*[f"np.mean({form})" for form in LOG_LOSS], p=SIGMOID)
def mean_sigmoid_log_loss(s, u, p, z):
    residual = u - p
    scale = s_bar / np.size(residual)
    z_bar += rt.unbroadcast(residual * scale, z)
    u_bar += rt.unbroadcast(rt.expand_like(z * scale, residual), u)


# -- the sigmoid and its logs ---------------------------------------------------------------------
@composite("np.log(p)", p=SIGMOID)
def log_sigmoid(s, p, z):
    z_bar += s_bar * (1.0 - p)


@composite("np.log(1 - p)", "np.log1p(-p)", p=SIGMOID)
def log_one_minus_sigmoid(s, p, z):
    z_bar += -s_bar * p


@composite(*SIGMOID)
def sigmoid(p, z):
    z_bar += p_bar * (p * (1.0 - p))


# -- log-softmax: d/dz = s_bar - softmax * sum(s_bar); the max a stable form subtracts passes
#    nothing (the result does not depend on it), so its tie-splitting adjoint never runs ----------
LOG_SOFTMAX = ["z - np.log(np.sum(np.exp(z), axis=k, keepdims=True))"]


@composite(*LOG_SOFTMAX, z=["a - np.max(a, axis=k, keepdims=True)"])
def shifted_log_softmax(s, z, a, k):
    a_bar += s_bar - np.exp(s) * np.sum(s_bar, axis=k, keepdims=True)


@composite(*LOG_SOFTMAX)
def log_softmax(s, z, k):
    z_bar += s_bar - np.exp(s) * np.sum(s_bar, axis=k, keepdims=True)

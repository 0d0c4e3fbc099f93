"""Functions and rules used by tests/user (module-level so the compiler can read their source)."""
import math

import numpy as np

from adjoint_compiler import adjoint, nondifferentiable, tangent

W = np.array([0.5, -1.0, 2.0, 0.25])


def _softplus_scalar(x):
    return math.log1p(math.exp(x))


softplus = np.vectorize(_softplus_scalar, otypes=[float])


@adjoint(softplus)
def _softplus_adjoint(y, x):
    x_bar += y_bar / (1.0 + np.exp(-x))


def uses_softplus(x):
    return np.sum(softplus(x) * W)


def opaque_square(x):
    """Source the compiler cannot compile (`try`): only a user rule makes it differentiable."""
    try:
        return x * x
    except TypeError:
        return 0.0


@adjoint(opaque_square)
def _opaque_square_adjoint(y, x):
    x_bar += 2.0 * x * y_bar


def uses_opaque_square(x):
    return np.sum(opaque_square(x) * W)


def staircase(x):
    return np.floor(x * 3.0) / 3.0 + x * 0.0


nondifferentiable(staircase)


def uses_staircase(x):
    return np.sum(x * staircase(x) * W)


def singular(A, x):
    B = np.linalg.inv(A)
    return np.sum(B @ x)


# -- a user rule whose body calls the user's own helpers (and reads a module constant) -------------
SCALE = 3.0


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def _twice(v):
    return 2.0 * v


def smooth_relu(x):
    """Source the compiler cannot compile (`try`): the user rule below is its only derivative."""
    try:
        return np.log1p(np.exp(SCALE * x)) / SCALE
    except FloatingPointError:
        raise


@adjoint(smooth_relu)
def _smooth_relu_adjoint(y, x):
    x_bar += _twice(0.5 * y_bar) * _logistic(SCALE * x)


def uses_smooth_relu(x):
    return np.sum(smooth_relu(x) ** 2 * W)


@tangent(smooth_relu)
def _smooth_relu_tangent(y, x):
    y_dot = x_dot * _logistic(SCALE * x)

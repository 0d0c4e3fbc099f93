"""Non-differentiable functions, methods and attributes (rules/nondiff.py): they pass no gradient,
and the values computed from them are still usable in differentiable code."""
import math

import numpy as np

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads


def n_sign(x): return np.sum(np.sign(x) * x * x)
def n_round(x): return np.sum((np.floor(x) + np.ceil(x) + np.round(x) + np.around(x) + np.trunc(x)) * x)
def n_shape(x): return np.sum(x * x.shape[0] + x * x.ndim + x * x.size) + len(x)
def n_dtype(x): return np.sum(x.astype(x.dtype) * x)
def n_argmax(x): return x[x.argmax()] * 2.0 + x[np.argmin(x)] + np.sum(x[x.argsort()] * np.arange(4.0))
def n_any(x): return np.sum(x * x) * float(x.any()) + float(np.all(x > -10.0))
def n_math(x): return x * math.floor(x) + x * math.ceil(x) + x * round(x) + float(math.isnan(x))
def n_int(x): return x * int(x) + x * math.trunc(x)


def test_nondiff_array():
    x = np.array([0.3, -1.7, 2.6, 0.9])
    for f in (n_sign, n_round, n_shape, n_dtype, n_argmax, n_any):
        check_grads(f, x)


def test_nondiff_scalar():
    for f in (n_math, n_int):
        check_grads(f, 2.3)
        check_grads(f, -1.6)


def n_sign_only(x): return np.sum(np.sign(x))


def test_piecewise_constant_gradient_is_zero():
    np.testing.assert_array_equal(grad(n_sign_only)(np.array([1.0, -2.0])), [0.0, 0.0])

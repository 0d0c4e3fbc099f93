"""scipy.special, registered when a program has imported it (registry.OPTIONAL_MODULES): SciPy
stays an optional dependency, and this module is loaded by the first rule lookup that misses
while `scipy.special` is in `sys.modules`.

Conventions: `xlogy(x, y)` and `xlog1py(x, y)` are 0 for x == 0 whatever y is, so y gets no
gradient there; a derivative infinite at a point (`erfinv` at +-1, `logit` at 0 and 1,
`gammaln` at the poles) is infinite there, and 0 where the cotangent is 0 (`rt.chain`).
`logsumexp`, `softmax` and `log_softmax` also match the composite forms of rules/composites.py,
whose templates then apply.
"""
import numpy as np
from scipy import special

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS
from adjoint_compiler.registry import adjoint, holds_for_complex, tangent

# results that share no memory with the arguments (the ufuncs' are known already)
FRESH_FUNCTIONS.update({special.logsumexp, special.softmax, special.log_softmax, special.polygamma})


# -- the sigmoid and its inverse -------------------------------------------------------------------
@adjoint(special.expit)
def expit(y, x):
    x_bar += y_bar * (y * (1.0 - y))


@tangent(special.expit)
def expit_dot(y, x):
    y_dot = x_dot * (y * (1.0 - y))


@adjoint(special.log_expit)
def log_expit(y, x):
    x_bar += y_bar * -np.expm1(y)


@tangent(special.log_expit)
def log_expit_dot(y, x):
    y_dot = x_dot * -np.expm1(y)


@adjoint(special.logit)
def logit(y, p):
    p_bar += rt.chain_div(y_bar, p * (1.0 - p))


@tangent(special.logit)
def logit_dot(y, p):
    y_dot = rt.chain_div(p_dot, p * (1.0 - p))


# -- normalizations along an axis -------------------------------------------------------------------
@adjoint(special.softmax)
def softmax(y, x, axis=None):
    x_bar += y * (y_bar - np.sum(y_bar * y, axis=axis, keepdims=True))


@tangent(special.softmax)
def softmax_dot(y, x, axis=None):
    y_dot = y * (x_dot - np.sum(x_dot * y, axis=axis, keepdims=True))


@adjoint(special.log_softmax)
def log_softmax(y, x, axis=None):
    x_bar += y_bar - np.exp(y) * np.sum(y_bar, axis=axis, keepdims=True)


@tangent(special.log_softmax)
def log_softmax_dot(y, x, axis=None):
    y_dot = x_dot - np.sum(np.exp(y) * x_dot, axis=axis, keepdims=True)


@adjoint(special.logsumexp)
def logsumexp(y, a, axis=None, b=None, keepdims=False, return_sign=False):
    parts = rt.logsumexp_adjoint(y_bar, a, y, axis, b, keepdims, return_sign)
    a_bar += parts[0]
    b_bar += parts[1]


@tangent(special.logsumexp)
def logsumexp_dot(y, a, axis=None, b=None, keepdims=False, return_sign=False):
    y_dot = rt.logsumexp_tangent(a_dot, b_dot, a, y, axis, b, keepdims, return_sign)


# -- error functions and the normal distribution ------------------------------------------------------
@adjoint(special.erf)
def erf(y, x):
    x_bar += y_bar * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@tangent(special.erf)
def erf_dot(y, x):
    y_dot = x_dot * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@adjoint(special.erfc)
def erfc(y, x):
    x_bar += -y_bar * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@tangent(special.erfc)
def erfc_dot(y, x):
    y_dot = -x_dot * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


holds_for_complex(special.erf, special.erfc, tangent=True)  # (holomorphic: 2 / sqrt(pi) exp(-z*z))


@adjoint(special.erfinv)
def erfinv(y, x):
    x_bar += rt.chain(y_bar, (np.sqrt(np.pi) / 2.0) * np.exp(y * y))


@tangent(special.erfinv)
def erfinv_dot(y, x):
    y_dot = rt.chain(x_dot, (np.sqrt(np.pi) / 2.0) * np.exp(y * y))


@adjoint(special.erfcinv)
def erfcinv(y, x):
    x_bar += rt.chain(y_bar, -(np.sqrt(np.pi) / 2.0) * np.exp(y * y))


@tangent(special.erfcinv)
def erfcinv_dot(y, x):
    y_dot = rt.chain(x_dot, -(np.sqrt(np.pi) / 2.0) * np.exp(y * y))


@adjoint(special.ndtr)
def ndtr(y, x):
    x_bar += y_bar * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


@tangent(special.ndtr)
def ndtr_dot(y, x):
    y_dot = x_dot * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


@adjoint(special.log_ndtr)
def log_ndtr(y, x):
    x_bar += y_bar * np.exp(-0.5 * x * x - y) / np.sqrt(2.0 * np.pi)


@tangent(special.log_ndtr)
def log_ndtr_dot(y, x):
    y_dot = x_dot * np.exp(-0.5 * x * x - y) / np.sqrt(2.0 * np.pi)


@adjoint(special.ndtri)
def ndtri(y, p):
    p_bar += rt.chain(y_bar, np.sqrt(2.0 * np.pi) * np.exp(0.5 * y * y))


@tangent(special.ndtri)
def ndtri_dot(y, p):
    y_dot = rt.chain(p_dot, np.sqrt(2.0 * np.pi) * np.exp(0.5 * y * y))


# -- gamma functions --------------------------------------------------------------------------------
@adjoint(special.gammaln)
def gammaln(y, x):
    x_bar += rt.chain(y_bar, rt.digamma(x))


@tangent(special.gammaln)
def gammaln_dot(y, x):
    y_dot = rt.chain(x_dot, rt.digamma(x))


@adjoint(special.gamma)
def gamma(y, x):
    x_bar += rt.chain(y_bar, y * rt.digamma(x))


@tangent(special.gamma)
def gamma_dot(y, x):
    y_dot = rt.chain(x_dot, y * rt.digamma(x))


@adjoint(special.digamma)
def digamma(y, x):
    x_bar += rt.chain(y_bar, rt.polygamma(1, x))


@tangent(special.digamma, rt.digamma)
def digamma_dot(y, x):
    y_dot = rt.chain(x_dot, rt.polygamma(1, x))


@adjoint(special.polygamma)
def polygamma(y, n, x):
    x_bar += rt.chain(y_bar, rt.polygamma(n + 1, x))


@tangent(special.polygamma, rt.polygamma)
def polygamma_dot(y, n, x):
    y_dot = rt.chain(x_dot, rt.polygamma(n + 1, x))


# the helpers the rules above put in generated code (so a gradient differentiates again)
@adjoint(rt.digamma)
def rt_digamma(y, x):
    x_bar += rt.chain(y_bar, rt.polygamma(1, x))


@adjoint(rt.polygamma)
def rt_polygamma(y, n, x):
    x_bar += rt.chain(y_bar, rt.polygamma(n + 1, x))


# -- x log y ----------------------------------------------------------------------------------------
@adjoint(special.xlogy)
def xlogy(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, np.log(y)), x)
    y_bar += rt.unbroadcast(z_bar * rt.ratio_or_zero(x, y), y)


@tangent(special.xlogy)
def xlogy_dot(z, x, y):
    z_dot = rt.chain(x_dot, np.log(y)) + y_dot * rt.ratio_or_zero(x, y)


@adjoint(special.xlog1py)
def xlog1py(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, np.log1p(y)), x)
    y_bar += rt.unbroadcast(z_bar * rt.ratio_or_zero(x, 1.0 + y), y)


@tangent(special.xlog1py)
def xlog1py_dot(z, x, y):
    z_dot = rt.chain(x_dot, np.log1p(y)) + y_dot * rt.ratio_or_zero(x, 1.0 + y)

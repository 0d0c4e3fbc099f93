"""scipy.special, registered when a program has imported it (registry.OPTIONAL_MODULES): SciPy
stays an optional dependency, and this module is loaded by the first rule lookup that misses
while `scipy.special` is in `sys.modules`.

Conventions: `xlogy(x, y)` and `xlog1py(x, y)` are 0 for x == 0 whatever y is, so y gets no
gradient there; a derivative infinite at a point (`erfinv` at +-1, `logit` at 0 and 1,
`gammaln` at the poles) is infinite there, and 0 where the cotangent is 0 (`rt.chain`).
`logsumexp`, `softmax` and `log_softmax` also match the composite forms of rules/composites.py,
whose templates then apply.

Bessel functions: d/dx f_v = (f_{v-1} - f_{v+1}) / 2 for J and Y, (f_{v-1} + f_{v+1}) / 2 for I
(minus sign(x) f_v for the scaled `ive`, `i0e`, `i1e`). An order (`v`, `n`), the `a` of
`gammainc`/`gammaincc` and the `a`, `b` of `betainc` get no gradient: an integer order has none,
and a float one that depends on the differentiated arguments is refused at its line
(`registry.refuse_gradient`), as autograd does. `multigammaln(a, d)` has its gradient in `a`
(`d` is an integer); `gammasgn` passes none (it is piecewise constant).
"""
import numpy as np
from scipy import special

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS
from adjoint_compiler.registry import adjoint, holds_for_complex, nondifferentiable, refuse_gradient, tangent

# results that share no memory with the arguments (the ufuncs' are known already)
FRESH_FUNCTIONS.update({special.logsumexp, special.softmax, special.log_softmax, special.polygamma,
                        special.multigammaln})


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



# -- more gamma functions ----------------------------------------------------------------------------
nondifferentiable(special.gammasgn)


@adjoint(special.rgamma)
def rgamma(y, x):
    x_bar += rt.chain(y_bar, -y * rt.digamma(x))


@tangent(special.rgamma)
def rgamma_dot(y, x):
    y_dot = rt.chain(x_dot, -y * rt.digamma(x))


@adjoint(special.multigammaln)
def multigammaln(y, a, d):
    a_bar += rt.chain(y_bar, np.sum(rt.digamma(np.expand_dims(a, -1) - 0.5 * np.arange(d)), axis=-1))


@tangent(special.multigammaln)
def multigammaln_dot(y, a, d):
    y_dot = rt.chain(a_dot, np.sum(rt.digamma(np.expand_dims(a, -1) - 0.5 * np.arange(d)), axis=-1))


@adjoint(special.beta)
def beta(y, a, b):
    s = rt.digamma(a + b)
    a_bar += rt.unbroadcast(rt.chain(y_bar, y * (rt.digamma(a) - s)), a)
    b_bar += rt.unbroadcast(rt.chain(y_bar, y * (rt.digamma(b) - s)), b)


@tangent(special.beta)
def beta_dot(y, a, b):
    s = rt.digamma(a + b)
    y_dot = y * (rt.chain(a_dot, rt.digamma(a) - s) + rt.chain(b_dot, rt.digamma(b) - s))


@adjoint(special.betaln)
def betaln(y, a, b):
    s = rt.digamma(a + b)
    a_bar += rt.unbroadcast(rt.chain(y_bar, rt.digamma(a) - s), a)
    b_bar += rt.unbroadcast(rt.chain(y_bar, rt.digamma(b) - s), b)


@tangent(special.betaln)
def betaln_dot(y, a, b):
    s = rt.digamma(a + b)
    y_dot = rt.chain(a_dot, rt.digamma(a) - s) + rt.chain(b_dot, rt.digamma(b) - s)


# -- incomplete gamma and beta functions: a gradient in x only -----------------------------------------
@adjoint(special.gammainc)
def gammainc(y, a, x):
    x_bar += rt.unbroadcast(rt.chain(y_bar, np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))), x)


@tangent(special.gammainc)
def gammainc_dot(y, a, x):
    y_dot = rt.chain(x_dot, np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))) + \
        rt.no_tangent(a_dot, "scipy.special.gammainc", "a")


@adjoint(special.gammaincc)
def gammaincc(y, a, x):
    x_bar += rt.unbroadcast(rt.chain(y_bar, -np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))), x)


@tangent(special.gammaincc)
def gammaincc_dot(y, a, x):
    y_dot = rt.chain(x_dot, -np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))) + \
        rt.no_tangent(a_dot, "scipy.special.gammaincc", "a")


@adjoint(special.betainc)
def betainc(y, a, b, x):
    d = np.exp(special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - special.betaln(a, b))
    x_bar += rt.unbroadcast(rt.chain(y_bar, d), x)


@tangent(special.betainc)
def betainc_dot(y, a, b, x):
    d = np.exp(special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - special.betaln(a, b))
    y_dot = rt.chain(x_dot, d) + rt.no_tangent(a_dot, "scipy.special.betainc", "a") + \
        rt.no_tangent(b_dot, "scipy.special.betainc", "b")


nondifferentiable(rt.no_tangent)  # (its argument is a tangent: the term is a check, never a value)
_NO_SHAPE_GRADIENT = "its derivative in the shape parameter has no closed form SciPy computes"
refuse_gradient(special.gammainc, "a", why=_NO_SHAPE_GRADIENT)
refuse_gradient(special.gammaincc, "a", why=_NO_SHAPE_GRADIENT)
refuse_gradient(special.betainc, "a", "b", why=_NO_SHAPE_GRADIENT)


# -- Bessel functions ----------------------------------------------------------------------------------
@adjoint(special.j0)
def j0(y, x):
    x_bar += y_bar * -special.j1(x)


@tangent(special.j0)
def j0_dot(y, x):
    y_dot = x_dot * -special.j1(x)


@adjoint(special.j1)
def j1(y, x):
    x_bar += y_bar * 0.5 * (special.j0(x) - special.jv(2, x))


@tangent(special.j1)
def j1_dot(y, x):
    y_dot = x_dot * 0.5 * (special.j0(x) - special.jv(2, x))


@adjoint(special.y0)
def y0(y, x):
    x_bar += rt.chain(y_bar, -special.y1(x))


@tangent(special.y0)
def y0_dot(y, x):
    y_dot = rt.chain(x_dot, -special.y1(x))


@adjoint(special.y1)
def y1(y, x):
    x_bar += rt.chain(y_bar, 0.5 * (special.y0(x) - special.yn(2, x)))


@tangent(special.y1)
def y1_dot(y, x):
    y_dot = rt.chain(x_dot, 0.5 * (special.y0(x) - special.yn(2, x)))


@adjoint(special.jv)  # (scipy.special.jn is jv)
def jv(y, v, x):
    x_bar += rt.unbroadcast(rt.chain(y_bar, 0.5 * (special.jv(v - 1, x) - special.jv(v + 1, x))), x)


@tangent(special.jv)
def jv_dot(y, v, x):
    y_dot = rt.chain(x_dot, 0.5 * (special.jv(v - 1, x) - special.jv(v + 1, x))) + \
        rt.no_tangent(v_dot, "scipy.special.jv", "v")


@adjoint(special.yv)
def yv(y, v, x):
    x_bar += rt.unbroadcast(rt.chain(y_bar, 0.5 * (special.yv(v - 1, x) - special.yv(v + 1, x))), x)


@tangent(special.yv)
def yv_dot(y, v, x):
    y_dot = rt.chain(x_dot, 0.5 * (special.yv(v - 1, x) - special.yv(v + 1, x))) + \
        rt.no_tangent(v_dot, "scipy.special.yv", "v")


@adjoint(special.yn)
def yn(y, n, x):
    x_bar += rt.unbroadcast(rt.chain(y_bar, 0.5 * (special.yn(n - 1, x) - special.yn(n + 1, x))), x)


@tangent(special.yn)
def yn_dot(y, n, x):
    y_dot = rt.chain(x_dot, 0.5 * (special.yn(n - 1, x) - special.yn(n + 1, x)))


@adjoint(special.i0)
def i0(y, x):
    x_bar += y_bar * special.i1(x)


@tangent(special.i0)
def i0_dot(y, x):
    y_dot = x_dot * special.i1(x)


@adjoint(special.i1)
def i1(y, x):
    x_bar += y_bar * 0.5 * (special.i0(x) + special.iv(2, x))


@tangent(special.i1)
def i1_dot(y, x):
    y_dot = x_dot * 0.5 * (special.i0(x) + special.iv(2, x))


@adjoint(special.i0e)
def i0e(y, x):
    x_bar += y_bar * (special.i1e(x) - np.sign(x) * y)


@tangent(special.i0e)
def i0e_dot(y, x):
    y_dot = x_dot * (special.i1e(x) - np.sign(x) * y)


@adjoint(special.i1e)
def i1e(y, x):
    x_bar += y_bar * (0.5 * (special.i0e(x) + special.ive(2, x)) - np.sign(x) * y)


@tangent(special.i1e)
def i1e_dot(y, x):
    y_dot = x_dot * (0.5 * (special.i0e(x) + special.ive(2, x)) - np.sign(x) * y)


@adjoint(special.iv)
def iv(y, v, x):
    x_bar += rt.unbroadcast(rt.chain(y_bar, 0.5 * (special.iv(v - 1, x) + special.iv(v + 1, x))), x)


@tangent(special.iv)
def iv_dot(y, v, x):
    y_dot = rt.chain(x_dot, 0.5 * (special.iv(v - 1, x) + special.iv(v + 1, x))) + \
        rt.no_tangent(v_dot, "scipy.special.iv", "v")


@adjoint(special.ive)
def ive(y, v, x):
    d = 0.5 * (special.ive(v - 1, x) + special.ive(v + 1, x)) - np.sign(x) * y
    x_bar += rt.unbroadcast(rt.chain(y_bar, d), x)


@tangent(special.ive)
def ive_dot(y, v, x):
    y_dot = rt.chain(x_dot, 0.5 * (special.ive(v - 1, x) + special.ive(v + 1, x)) - np.sign(x) * y) + \
        rt.no_tangent(v_dot, "scipy.special.ive", "v")


_NO_ORDER_GRADIENT = "the derivative of a Bessel function in its order has no closed form SciPy computes"
for _f in (special.jv, special.yv, special.iv, special.ive):
    refuse_gradient(_f, "v", why=_NO_ORDER_GRADIENT)

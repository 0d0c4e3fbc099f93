"""Elementwise functions: NumPy ufuncs and their `math` (and builtin) counterparts share templates.

Each rule reuses the primal result where that is cheaper (`exp`: `y_bar * y`). Binary rules undo
broadcasting with `rt.unbroadcast`. Subgradient conventions (see `runtime_rules`):
- `abs` at 0: 0; `hypot(0, 0)` and `arctan2(0, 0)`: 0 (`rt.safe_ratio`);
- `maximum`/`minimum`/`fmax`/`fmin` ties: 0.5 to each argument;
- `clip(a, lo, hi)`: `a` gets the gradient where `lo <= a <= hi` (bounds included), a bound only
  where it is strictly active (`a < lo` or `a > hi`).
"""
import math
import operator

import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, alias, tangent

# -- the operators' ufuncs ------------------------------------------------------------------------
alias(np.add, operator.add)
alias(np.subtract, operator.sub)
alias(np.multiply, operator.mul)
alias(np.divide, operator.truediv)  # np.true_divide is np.divide
alias(np.power, operator.pow)
alias(np.float_power, operator.pow)
alias(math.pow, operator.pow)
alias(pow, operator.pow)
alias(np.remainder, operator.mod)  # np.mod is np.remainder
alias(np.negative, operator.neg)
alias(np.positive, operator.pos)
alias(np.matmul, operator.matmul)


# -- trigonometric --------------------------------------------------------------------------------
@adjoint(np.sin, math.sin)
def sin(y, x):
    x_bar += rt.chain(y_bar, np.cos(x))


@tangent(np.sin, math.sin)
def sin_dot(y, x):
    y_dot = rt.chain(x_dot, np.cos(x))


@adjoint(np.cos, math.cos)
def cos(y, x):
    x_bar += rt.chain(y_bar, -np.sin(x))


@tangent(np.cos, math.cos)
def cos_dot(y, x):
    y_dot = rt.chain(x_dot, -np.sin(x))


@adjoint(np.tan, math.tan)
def tan(y, x):
    x_bar += rt.chain(y_bar, 1.0 + y * y)


@tangent(np.tan, math.tan)
def tan_dot(y, x):
    y_dot = rt.chain(x_dot, 1.0 + y * y)


@adjoint(np.arcsin, math.asin)
def arcsin(y, x):
    x_bar += rt.chain_div(y_bar, np.sqrt(1.0 - x * x))


@tangent(np.arcsin, math.asin)
def arcsin_dot(y, x):
    y_dot = rt.chain_div(x_dot, np.sqrt(1.0 - x * x))


@adjoint(np.arccos, math.acos)
def arccos(y, x):
    x_bar += rt.chain_div(-y_bar, np.sqrt(1.0 - x * x))


@tangent(np.arccos, math.acos)
def arccos_dot(y, x):
    y_dot = -rt.chain_div(x_dot, np.sqrt(1.0 - x * x))


@adjoint(np.arctan, math.atan)
def arctan(y, x):
    x_bar += y_bar / (1.0 + x * x)


@tangent(np.arctan, math.atan)
def arctan_dot(y, x):
    y_dot = x_dot / (1.0 + x * x)


@adjoint(np.arctan2, math.atan2)
def arctan2(z, y, x):
    y_bar += rt.unbroadcast(z_bar * rt.safe_ratio(x, x * x + y * y), y)
    x_bar += rt.unbroadcast(-z_bar * rt.safe_ratio(y, x * x + y * y), x)


@tangent(np.arctan2, math.atan2)
def arctan2_dot(z, y, x):
    z_dot = y_dot * rt.safe_ratio(x, x * x + y * y) - x_dot * rt.safe_ratio(y, x * x + y * y)


@adjoint(np.hypot, math.hypot)
def hypot(z, x, y):
    x_bar += rt.unbroadcast(z_bar * rt.safe_ratio(x, z), x)
    y_bar += rt.unbroadcast(z_bar * rt.safe_ratio(y, z), y)


@tangent(np.hypot, math.hypot)
def hypot_dot(z, x, y):
    z_dot = x_dot * rt.safe_ratio(x, z) + y_dot * rt.safe_ratio(y, z)


@adjoint(np.deg2rad, np.radians, math.radians)
def deg2rad(y, x):
    x_bar += y_bar * (np.pi / 180.0)


@tangent(np.deg2rad, np.radians, math.radians)
def deg2rad_dot(y, x):
    y_dot = x_dot * (np.pi / 180.0)


@adjoint(np.rad2deg, np.degrees, math.degrees)
def rad2deg(y, x):
    x_bar += y_bar * (180.0 / np.pi)


@tangent(np.rad2deg, np.degrees, math.degrees)
def rad2deg_dot(y, x):
    y_dot = x_dot * (180.0 / np.pi)


# -- hyperbolic -----------------------------------------------------------------------------------
@adjoint(np.sinh, math.sinh)
def sinh(y, x):
    x_bar += rt.chain(y_bar, np.cosh(x))


@tangent(np.sinh, math.sinh)
def sinh_dot(y, x):
    y_dot = rt.chain(x_dot, np.cosh(x))


@adjoint(np.cosh, math.cosh)
def cosh(y, x):
    x_bar += rt.chain(y_bar, np.sinh(x))


@tangent(np.cosh, math.cosh)
def cosh_dot(y, x):
    y_dot = rt.chain(x_dot, np.sinh(x))


@adjoint(np.tanh, math.tanh)
def tanh(y, x):
    x_bar += rt.chain(y_bar, 1.0 - y * y)


@tangent(np.tanh, math.tanh)
def tanh_dot(y, x):
    y_dot = rt.chain(x_dot, 1.0 - y * y)


@adjoint(np.arcsinh, math.asinh)
def arcsinh(y, x):
    x_bar += y_bar / np.sqrt(x * x + 1.0)


@tangent(np.arcsinh, math.asinh)
def arcsinh_dot(y, x):
    y_dot = x_dot / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh, math.acosh)
def arccosh(y, x):
    x_bar += rt.chain_div(y_bar, np.sqrt(x * x - 1.0))


@tangent(np.arccosh, math.acosh)
def arccosh_dot(y, x):
    y_dot = rt.chain_div(x_dot, np.sqrt(x * x - 1.0))


@adjoint(np.arctanh, math.atanh)
def arctanh(y, x):
    x_bar += rt.chain_div(y_bar, 1.0 - x * x)


@tangent(np.arctanh, math.atanh)
def arctanh_dot(y, x):
    y_dot = rt.chain_div(x_dot, 1.0 - x * x)


# -- exponentials and logarithms ------------------------------------------------------------------
@adjoint(np.exp, math.exp)
def exp(y, x):
    x_bar += rt.chain(y_bar, y)


@tangent(np.exp, math.exp)
def exp_dot(y, x):
    y_dot = rt.chain(x_dot, y)


@adjoint(np.expm1, math.expm1)
def expm1(y, x):
    x_bar += rt.chain(y_bar, y + 1.0)


@tangent(np.expm1, math.expm1)
def expm1_dot(y, x):
    y_dot = rt.chain(x_dot, y + 1.0)


@adjoint(np.exp2, *([math.exp2] if hasattr(math, "exp2") else []))
def exp2(y, x):
    x_bar += rt.chain(y_bar, y * np.log(2.0))


@tangent(np.exp2, *([math.exp2] if hasattr(math, "exp2") else []))
def exp2_dot(y, x):
    y_dot = rt.chain(x_dot, y * np.log(2.0))


@adjoint(np.log)
def log(y, x):
    x_bar += rt.chain_div(y_bar, x)


@tangent(np.log)
def log_dot(y, x):
    y_dot = rt.chain_div(x_dot, x)


@adjoint(math.log)
def math_log(y, x, base=None):
    x_bar += rt.chain_div(y_bar, x * rt.log_of_base(base))
    base_bar += -y_bar * y / (base * np.log(base))


@tangent(math.log)
def math_log_dot(y, x, base=None):
    y_dot = rt.chain_div(x_dot, x * rt.log_of_base(base)) - base_dot * y / (base * np.log(base))


@adjoint(np.log1p, math.log1p)
def log1p(y, x):
    x_bar += rt.chain_div(y_bar, 1.0 + x)


@tangent(np.log1p, math.log1p)
def log1p_dot(y, x):
    y_dot = rt.chain_div(x_dot, 1.0 + x)


@adjoint(np.log2, math.log2)
def log2(y, x):
    x_bar += rt.chain_div(y_bar, x * np.log(2.0))


@tangent(np.log2, math.log2)
def log2_dot(y, x):
    y_dot = rt.chain_div(x_dot, x * np.log(2.0))


@adjoint(np.log10, math.log10)
def log10(y, x):
    x_bar += rt.chain_div(y_bar, x * np.log(10.0))


@tangent(np.log10, math.log10)
def log10_dot(y, x):
    y_dot = rt.chain_div(x_dot, x * np.log(10.0))


@adjoint(np.logaddexp)
def logaddexp(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, np.exp(x - z)), x)
    y_bar += rt.unbroadcast(rt.chain(z_bar, np.exp(y - z)), y)


@tangent(np.logaddexp)
def logaddexp_dot(z, x, y):
    z_dot = rt.chain(x_dot, np.exp(x - z)) + rt.chain(y_dot, np.exp(y - z))


@adjoint(np.logaddexp2)
def logaddexp2(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, np.exp2(x - z)), x)
    y_bar += rt.unbroadcast(rt.chain(z_bar, np.exp2(y - z)), y)


@tangent(np.logaddexp2)
def logaddexp2_dot(z, x, y):
    z_dot = rt.chain(x_dot, np.exp2(x - z)) + rt.chain(y_dot, np.exp2(y - z))


@adjoint(math.erf)
def erf(y, x):
    x_bar += y_bar * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@tangent(math.erf)
def erf_dot(y, x):
    y_dot = x_dot * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@adjoint(math.erfc)
def erfc(y, x):
    x_bar += -y_bar * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@tangent(math.erfc)
def erfc_dot(y, x):
    y_dot = -x_dot * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


# -- powers ---------------------------------------------------------------------------------------
@adjoint(np.sqrt, math.sqrt)
def sqrt(y, x):
    x_bar += rt.chain_div(y_bar, 2.0 * y)


@tangent(np.sqrt, math.sqrt)
def sqrt_dot(y, x):
    y_dot = rt.chain_div(x_dot, 2.0 * y)


@adjoint(np.cbrt, *([math.cbrt] if hasattr(math, "cbrt") else []))
def cbrt(y, x):
    x_bar += rt.chain_div(y_bar, 3.0 * y * y)


@tangent(np.cbrt, *([math.cbrt] if hasattr(math, "cbrt") else []))
def cbrt_dot(y, x):
    y_dot = rt.chain_div(x_dot, 3.0 * y * y)


@adjoint(np.square)
def square(y, x):
    x_bar += rt.chain(y_bar, 2.0 * x)  # (as `x ** 2`)


@tangent(np.square)
def square_dot(y, x):
    y_dot = rt.chain(x_dot, 2.0 * x)


@adjoint(np.reciprocal)
def reciprocal(y, x):
    x_bar += rt.chain(y_bar, -y * y)


@tangent(np.reciprocal)
def reciprocal_dot(y, x):
    y_dot = rt.chain(x_dot, -y * y)


@adjoint(np.abs, math.fabs, abs)  # np.absolute is np.abs
def absolute(y, x):
    x_bar += y_bar * np.sign(x)


@tangent(np.abs, math.fabs, abs)
def absolute_dot(y, x):
    y_dot = x_dot * np.sign(x)


@adjoint(np.fmod, math.fmod)
def fmod(z, x, y):
    x_bar += rt.unbroadcast(z_bar, x)
    y_bar += rt.unbroadcast(-z_bar * np.trunc(x / y), y)


@tangent(np.fmod, math.fmod)
def fmod_dot(z, x, y):
    z_dot = rt.broadcast_tangent(x_dot - y_dot * np.trunc(x / y), z)


# -- selection ------------------------------------------------------------------------------------
@adjoint(np.maximum, np.minimum, np.fmax, np.fmin)
def maximum(z, x, y):
    x_bar += rt.unbroadcast(z_bar * rt.choice_weight(z, x, y), x)
    y_bar += rt.unbroadcast(z_bar * rt.choice_weight(z, y, x), y)


@tangent(np.maximum, np.minimum, np.fmax, np.fmin)
def maximum_dot(z, x, y):
    z_dot = x_dot * rt.choice_weight(z, x, y) + y_dot * rt.choice_weight(z, y, x)


@adjoint(np.where)
def where(z, condition, x=None, y=None):
    x_bar += rt.unbroadcast(rt.masked(z_bar, condition), x)
    y_bar += rt.unbroadcast(rt.masked(z_bar, condition, False), y)


@tangent(np.where)
def where_dot(z, condition, x=None, y=None):
    z_dot = np.where(condition, x_dot, y_dot)


alias(rt.where_above, np.where)  # (`np.where(x > c, x, c)` computed as the clamp: clamps.py)
alias(rt.where_below, np.where)


@adjoint(np.clip)
def clip(y, a, a_min=None, a_max=None, *, min=None, max=None):  # NumPy 2.1 also spells the bounds min=, max=
    a_bar += rt.unbroadcast(y_bar * rt.clip_inside(a, a_min, a_max, min=min, max=max), a)
    a_min_bar += rt.unbroadcast(y_bar * rt.clip_below(a, a_min, a_max, min=min, max=max), a_min)
    a_max_bar += rt.unbroadcast(y_bar * rt.clip_above(a, a_min, a_max, min=min, max=max), a_max)
    min_bar += rt.unbroadcast(y_bar * rt.clip_below(a, a_min, a_max, min=min, max=max), min)
    max_bar += rt.unbroadcast(y_bar * rt.clip_above(a, a_min, a_max, min=min, max=max), max)


@tangent(np.clip)
def clip_dot(y, a, a_min=None, a_max=None, *, min=None, max=None):
    y_dot = (a_dot * rt.clip_inside(a, a_min, a_max, min=min, max=max)
             + a_min_dot * rt.clip_below(a, a_min, a_max, min=min, max=max)
             + a_max_dot * rt.clip_above(a, a_min, a_max, min=min, max=max)
             + min_dot * rt.clip_below(a, a_min, a_max, min=min, max=max)
             + max_dot * rt.clip_above(a, a_min, a_max, min=min, max=max))


@adjoint("clip")
def clip_method(y, a, min=None, max=None):
    a_bar += rt.unbroadcast(y_bar * rt.clip_inside(a, min, max), a)
    min_bar += rt.unbroadcast(y_bar * rt.clip_below(a, min, max), min)
    max_bar += rt.unbroadcast(y_bar * rt.clip_above(a, min, max), max)


@tangent("clip")
def clip_method_dot(y, a, min=None, max=None):
    y_dot = (a_dot * rt.clip_inside(a, min, max) + min_dot * rt.clip_below(a, min, max)
             + max_dot * rt.clip_above(a, min, max))

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
from adjoint_compiler.registry import adjoint, alias

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


@adjoint(np.cos, math.cos)
def cos(y, x):
    x_bar += rt.chain(y_bar, -np.sin(x))


@adjoint(np.tan, math.tan)
def tan(y, x):
    x_bar += rt.chain(y_bar, 1.0 + y * y)


@adjoint(np.arcsin, math.asin)
def arcsin(y, x):
    x_bar += rt.chain_div(y_bar, np.sqrt(1.0 - x * x))


@adjoint(np.arccos, math.acos)
def arccos(y, x):
    x_bar += rt.chain_div(-y_bar, np.sqrt(1.0 - x * x))


@adjoint(np.arctan, math.atan)
def arctan(y, x):
    x_bar += y_bar / (1.0 + x * x)


@adjoint(np.arctan2, math.atan2)
def arctan2(z, y, x):
    y_bar += rt.unbroadcast(z_bar * rt.safe_ratio(x, x * x + y * y), y)
    x_bar += rt.unbroadcast(-z_bar * rt.safe_ratio(y, x * x + y * y), x)


@adjoint(np.hypot, math.hypot)
def hypot(z, x, y):
    x_bar += rt.unbroadcast(z_bar * rt.safe_ratio(x, z), x)
    y_bar += rt.unbroadcast(z_bar * rt.safe_ratio(y, z), y)


@adjoint(np.deg2rad, np.radians, math.radians)
def deg2rad(y, x):
    x_bar += y_bar * (np.pi / 180.0)


@adjoint(np.rad2deg, np.degrees, math.degrees)
def rad2deg(y, x):
    x_bar += y_bar * (180.0 / np.pi)


# -- hyperbolic -----------------------------------------------------------------------------------
@adjoint(np.sinh, math.sinh)
def sinh(y, x):
    x_bar += rt.chain(y_bar, np.cosh(x))


@adjoint(np.cosh, math.cosh)
def cosh(y, x):
    x_bar += rt.chain(y_bar, np.sinh(x))


@adjoint(np.tanh, math.tanh)
def tanh(y, x):
    x_bar += rt.chain(y_bar, 1.0 - y * y)


@adjoint(np.arcsinh, math.asinh)
def arcsinh(y, x):
    x_bar += y_bar / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh, math.acosh)
def arccosh(y, x):
    x_bar += rt.chain_div(y_bar, np.sqrt(x * x - 1.0))


@adjoint(np.arctanh, math.atanh)
def arctanh(y, x):
    x_bar += rt.chain_div(y_bar, 1.0 - x * x)


# -- exponentials and logarithms ------------------------------------------------------------------
@adjoint(np.exp, math.exp)
def exp(y, x):
    x_bar += rt.chain(y_bar, y)


@adjoint(np.expm1, math.expm1)
def expm1(y, x):
    x_bar += rt.chain(y_bar, y + 1.0)


@adjoint(np.exp2, *([math.exp2] if hasattr(math, "exp2") else []))
def exp2(y, x):
    x_bar += rt.chain(y_bar, y * np.log(2.0))


@adjoint(np.log)
def log(y, x):
    x_bar += rt.chain_div(y_bar, x)


@adjoint(math.log)
def math_log(y, x, base=None):
    x_bar += rt.chain_div(y_bar, x * rt.log_of_base(base))
    base_bar += -y_bar * y / (base * np.log(base))


@adjoint(np.log1p, math.log1p)
def log1p(y, x):
    x_bar += rt.chain_div(y_bar, 1.0 + x)


@adjoint(np.log2, math.log2)
def log2(y, x):
    x_bar += rt.chain_div(y_bar, x * np.log(2.0))


@adjoint(np.log10, math.log10)
def log10(y, x):
    x_bar += rt.chain_div(y_bar, x * np.log(10.0))


@adjoint(np.logaddexp)
def logaddexp(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, np.exp(x - z)), x)
    y_bar += rt.unbroadcast(rt.chain(z_bar, np.exp(y - z)), y)


@adjoint(np.logaddexp2)
def logaddexp2(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, np.exp2(x - z)), x)
    y_bar += rt.unbroadcast(rt.chain(z_bar, np.exp2(y - z)), y)


@adjoint(math.erf)
def erf(y, x):
    x_bar += y_bar * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@adjoint(math.erfc)
def erfc(y, x):
    x_bar += -y_bar * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


# -- powers ---------------------------------------------------------------------------------------
@adjoint(np.sqrt, math.sqrt)
def sqrt(y, x):
    x_bar += rt.chain_div(y_bar, 2.0 * y)


@adjoint(np.cbrt, *([math.cbrt] if hasattr(math, "cbrt") else []))
def cbrt(y, x):
    x_bar += rt.chain_div(y_bar, 3.0 * y * y)


@adjoint(np.square)
def square(y, x):
    x_bar += y_bar * 2.0 * x


@adjoint(np.reciprocal)
def reciprocal(y, x):
    x_bar += rt.chain(y_bar, -y * y)


@adjoint(np.abs, math.fabs, abs)  # np.absolute is np.abs
def absolute(y, x):
    x_bar += y_bar * np.sign(x)


@adjoint(np.fmod)
def fmod(z, x, y):
    x_bar += rt.unbroadcast(z_bar, x)
    y_bar += rt.unbroadcast(-z_bar * np.trunc(x / y), y)


# -- selection ------------------------------------------------------------------------------------
@adjoint(np.maximum, np.minimum, np.fmax, np.fmin)
def maximum(z, x, y):
    x_bar += rt.unbroadcast(z_bar * rt.choice_weight(z, x, y), x)
    y_bar += rt.unbroadcast(z_bar * rt.choice_weight(z, y, x), y)


@adjoint(np.where)
def where(z, condition, x=None, y=None):
    x_bar += rt.unbroadcast(np.where(condition, z_bar, 0.0), x)
    y_bar += rt.unbroadcast(np.where(condition, 0.0, z_bar), y)


@adjoint(np.clip)
def clip(y, a, a_min=None, a_max=None, *, min=None, max=None):  # NumPy 2.1 also spells the bounds min=, max=
    a_bar += rt.unbroadcast(y_bar * rt.clip_inside(a, a_min, a_max, min=min, max=max), a)
    a_min_bar += rt.unbroadcast(y_bar * rt.clip_below(a, a_min, a_max, min=min, max=max), a_min)
    a_max_bar += rt.unbroadcast(y_bar * rt.clip_above(a, a_min, a_max, min=min, max=max), a_max)
    min_bar += rt.unbroadcast(y_bar * rt.clip_below(a, a_min, a_max, min=min, max=max), min)
    max_bar += rt.unbroadcast(y_bar * rt.clip_above(a, a_min, a_max, min=min, max=max), max)


@adjoint("clip")
def clip_method(y, a, min=None, max=None):
    a_bar += rt.unbroadcast(y_bar * rt.clip_inside(a, min, max), a)
    min_bar += rt.unbroadcast(y_bar * rt.clip_below(a, min, max), min)
    max_bar += rt.unbroadcast(y_bar * rt.clip_above(a, min, max), max)

"""Reductions (with `axis` and `keepdims`) and cumulative sums, as functions and as methods.

Max/min reductions split the gradient equally among the entries tied for the extremum. A `dtype`
is taken: a boolean one passes no gradient, nor does an integer one where it truncates (floats
summed as integers, `rt.cast_adjoint`; a mean, variance or deviation in integers, `rt.through_dtype`);
integers summed or multiplied as integers pass theirs. `out` must be None
(an `out=` array is a write, not a keyword the rule can ignore).
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, alias, tangent


@adjoint(np.sum)
def sum(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=0.0):
    a_bar += rt.expand_reduced(rt.cast_adjoint(y_bar, dtype, a), a, axis, keepdims)
    initial_bar += rt.unbroadcast(rt.cast_adjoint(y_bar, dtype, initial), initial)


@tangent(np.sum)
def sum_dot(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=0.0):
    y_dot = rt.cast_adjoint(np.sum(a_dot, axis=axis, keepdims=keepdims) + initial_dot, dtype, a)


@adjoint(np.mean)
def mean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.expand_reduced(rt.through_dtype(y_bar, dtype=dtype) / rt.reduced_size(a, axis), a, axis, keepdims)


@tangent(np.mean)
def mean_dot(y, a, axis=None, dtype=None, out=None, keepdims=False):
    y_dot = rt.through_dtype(np.mean(a_dot, axis=axis, keepdims=keepdims), dtype=dtype)


@adjoint(np.prod)
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.prod_adjoint(rt.cast_adjoint(y_bar, dtype, a), a, axis, keepdims)


@tangent(np.prod)
def prod_dot(y, a, axis=None, dtype=None, out=None, keepdims=False):
    y_dot = rt.cast_adjoint(rt.prod_tangent(a_dot, a, y, axis, keepdims), dtype, a)


@adjoint(np.max, np.amax, np.min, np.amin)
def max(y, a, axis=None, out=None, keepdims=False):
    a_bar += rt.extremum_adjoint(y_bar, a, y, axis, keepdims)


@tangent(np.max, np.amax, np.min, np.amin)
def max_dot(y, a, axis=None, out=None, keepdims=False):
    y_dot = rt.extremum_tangent(a_dot, a, y, axis, keepdims)


@adjoint(np.var)
def var(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a_bar += rt.var_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis, ddof, keepdims)


@tangent(np.var)
def var_dot(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    y_dot = rt.through_dtype(rt.var_tangent(a_dot, a, y, axis, ddof, keepdims), dtype=dtype)


@adjoint(np.std)
def std(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a_bar += rt.std_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, y, axis, ddof, keepdims)


@tangent(np.std)
def std_dot(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    y_dot = rt.through_dtype(rt.std_tangent(a_dot, a, y, axis, ddof, keepdims), dtype=dtype)


@adjoint(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    a_bar += rt.cumsum_adjoint(rt.cast_adjoint(y_bar, dtype, a), a, axis)


@tangent(np.cumsum)
def cumsum_dot(y, a, axis=None, dtype=None, out=None):
    y_dot = rt.cast_adjoint(np.cumsum(a_dot, axis=axis), dtype, a)


@adjoint(np.cumprod)
def cumprod(y, a, axis=None, dtype=None, out=None):
    a_bar += rt.cumprod_adjoint(rt.cast_adjoint(y_bar, dtype, a), a, y, axis)


@tangent(np.cumprod)
def cumprod_dot(y, a, axis=None, dtype=None, out=None):
    y_dot = rt.cast_adjoint(rt.cumprod_tangent(a_dot, a, y, axis), dtype, a)


for _name, _func in [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max),
                     ("min", np.min), ("var", np.var), ("std", np.std), ("cumsum", np.cumsum),
                     ("cumprod", np.cumprod)]:
    alias(_name, _func)

"""Reductions (with `axis` and `keepdims`) and cumulative sums, as functions and as methods.

Max/min reductions split the gradient equally among the entries tied for the extremum. A `dtype`
is taken: an integer or boolean one passes no gradient (`rt.through_dtype`). `out` must be None
(an `out=` array is a write, not a keyword the rule can ignore).
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, alias


@adjoint(np.sum)
def sum(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=0.0):
    a_bar += rt.expand_reduced(rt.through_dtype(y_bar, dtype=dtype), a, axis, keepdims)
    initial_bar += rt.unbroadcast(rt.through_dtype(y_bar, dtype=dtype), initial)


@adjoint(np.mean)
def mean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.expand_reduced(rt.through_dtype(y_bar, dtype=dtype) / rt.reduced_size(a, axis), a, axis, keepdims)


@adjoint(np.prod)
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.prod_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis, keepdims)


@adjoint(np.max, np.amax, np.min, np.amin)
def max(y, a, axis=None, out=None, keepdims=False):
    a_bar += rt.extremum_adjoint(y_bar, a, y, axis, keepdims)


@adjoint(np.var)
def var(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a_bar += rt.var_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis, ddof, keepdims)


@adjoint(np.std)
def std(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a_bar += rt.std_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, y, axis, ddof, keepdims)


@adjoint(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    a_bar += rt.cumsum_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis)


@adjoint(np.cumprod)
def cumprod(y, a, axis=None, dtype=None, out=None):
    a_bar += rt.cumprod_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, y, axis)


for _name, _func in [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max),
                     ("min", np.min), ("var", np.var), ("std", np.std), ("cumsum", np.cumsum),
                     ("cumprod", np.cumprod)]:
    alias(_name, _func)

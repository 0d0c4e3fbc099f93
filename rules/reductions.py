"""Reductions (with `axis` and `keepdims`) and cumulative sums, as functions and as methods.

Max/min reductions split the gradient equally among the entries tied for the extremum.
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, alias


@adjoint(np.sum)
def sum(y, a, axis=None, keepdims=False):
    a_bar += rt.expand_reduced(y_bar, a, axis, keepdims)


@adjoint(np.mean)
def mean(y, a, axis=None, keepdims=False):
    a_bar += rt.expand_reduced(y_bar / rt.reduced_size(a, axis), a, axis, keepdims)


@adjoint(np.prod)
def prod(y, a, axis=None, keepdims=False):
    a_bar += rt.prod_adjoint(y_bar, a, axis, keepdims)


@adjoint(np.max, np.amax, np.min, np.amin)
def max(y, a, axis=None, keepdims=False):
    a_bar += rt.extremum_adjoint(y_bar, a, y, axis, keepdims)


@adjoint(np.var)
def var(y, a, axis=None, ddof=0, keepdims=False):
    a_bar += rt.var_adjoint(y_bar, a, axis, ddof, keepdims)


@adjoint(np.std)
def std(y, a, axis=None, ddof=0, keepdims=False):
    a_bar += rt.var_adjoint(y_bar / (2.0 * y), a, axis, ddof, keepdims)


@adjoint(np.cumsum)
def cumsum(y, a, axis=None):
    a_bar += rt.cumsum_adjoint(y_bar, a, axis)


@adjoint(np.cumprod)
def cumprod(y, a, axis=None):
    a_bar += rt.cumprod_adjoint(y_bar, a, y, axis)


for _name, _func in [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max),
                     ("min", np.min), ("var", np.var), ("std", np.std), ("cumsum", np.cumsum),
                     ("cumprod", np.cumprod)]:
    alias(_name, _func)

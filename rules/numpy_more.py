"""More of NumPy (issue 15): gathers (`take`, `take_along_axis`), padding, splitting and joining,
`kron`, `cross`, interpolation and quadrature (`interp`, `trapezoid`, `polyval`), `sinc`,
`fabs`, and the nan-aware reductions and `median`.

Conventions (see runtime_rules): duplicate indices accumulate; `np.pad` has a gradient for the
modes that copy entries (constant, edge, reflect, symmetric, wrap); `np.interp` at a knot takes
the mean of the two one-sided slopes (xp increasing); `median` and `nanmax`/`nanmin` split the
gradient equally among the entries equal to the value taken (as ties of `max`); nan entries get
no gradient from `nansum`/`nanmean`, and the entries `nan_to_num` replaces none either (the
replacement values get theirs). `overwrite_input=True`, `copy=False` and `out=` arrays are writes
and are refused.
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS
from adjoint_compiler.registry import adjoint, alias

FRESH_FUNCTIONS.update({np.trapezoid, np.sinc} if hasattr(np, "trapezoid") else {np.sinc})


# -- gathers ------------------------------------------------------------------------------------------
@adjoint(np.take)
def take(y, a, indices, axis=None, out=None, mode="raise"):
    a_bar += rt.take_adjoint(y_bar, a, indices, axis, mode)


alias("take", np.take)


@adjoint(np.take_along_axis)
def take_along_axis(y, arr, indices, axis=-1):
    arr_bar += rt.take_along_axis_adjoint(y_bar, arr, indices, axis)


@adjoint(np.pad)
def pad(y, array, pad_width, mode="constant", *, constant_values=0):
    parts = rt.pad_adjoint(y_bar, array, pad_width, mode, constant_values)
    array_bar += parts[0]
    constant_values_bar += parts[1]


# -- splitting and joining ----------------------------------------------------------------------------
@adjoint(np.split, np.array_split)
def split(y, ary, indices_or_sections, axis=0):
    ary_bar += rt.split_adjoint(y_bar, ary, y, axis)


@adjoint(np.hsplit)
def hsplit(y, ary, indices_or_sections):
    ary_bar += rt.split_adjoint(y_bar, ary, y, rt.hsplit_axis(ary))


@adjoint(np.vsplit)
def vsplit(y, ary, indices_or_sections):
    ary_bar += rt.split_adjoint(y_bar, ary, y, 0)


@adjoint(np.dsplit)
def dsplit(y, ary, indices_or_sections):
    ary_bar += rt.split_adjoint(y_bar, ary, y, 2)


@adjoint(np.append)
def append(y, arr, values, axis=None):
    parts = rt.append_adjoint(y_bar, arr, values, axis)
    arr_bar += parts[0]
    values_bar += parts[1]


@adjoint(np.column_stack)
def column_stack(y, tup):
    tup_bar += rt.column_stack_adjoint(y_bar, tup)


@adjoint(np.dstack)
def dstack(y, tup):
    tup_bar += rt.dstack_adjoint(y_bar, tup)


# -- products -------------------------------------------------------------------------------------------
@adjoint(np.kron)
def kron(y, a, b):
    parts = rt.kron_adjoint(y_bar, a, b)
    a_bar += parts[0]
    b_bar += parts[1]


@adjoint(np.cross)
def cross(c, a, b):
    parts = rt.cross_adjoint(c_bar, a, b)
    a_bar += parts[0]
    b_bar += parts[1]


# -- interpolation, quadrature, polynomials -------------------------------------------------------------
@adjoint(np.interp)
def interp(y, x, xp, fp, left=None, right=None):
    parts = rt.interp_adjoint(y_bar, x, xp, fp, left, right)
    x_bar += parts[0]
    xp_bar += parts[1]
    fp_bar += parts[2]
    left_bar += parts[3]
    right_bar += parts[4]


if hasattr(np, "trapezoid"):
    @adjoint(np.trapezoid)
    def trapezoid(s, y, x=None, dx=1.0, axis=-1):
        parts = rt.trapezoid_adjoint(s_bar, y, x, dx, axis)
        y_bar += parts[0]
        x_bar += parts[1]
        dx_bar += parts[2]


@adjoint(np.polyval)
def polyval(y, p, x):
    parts = rt.polyval_adjoint(y_bar, p, x)
    p_bar += parts[0]
    x_bar += parts[1]


# -- elementwise --------------------------------------------------------------------------------------------
@adjoint(np.sinc)
def sinc(y, x):
    x_bar += y_bar * rt.sinc_derivative(x)


@adjoint(np.fabs)
def fabs(y, x):
    x_bar += y_bar * np.sign(x)


@adjoint(np.nan_to_num)
def nan_to_num(y, x, *, nan=0.0, posinf=None, neginf=None):
    x_bar += np.where(np.isfinite(x), y_bar, 0.0)
    nan_bar += rt.unbroadcast(np.where(np.isnan(x), y_bar, 0.0), nan)
    posinf_bar += rt.unbroadcast(np.where(np.isposinf(x), y_bar, 0.0), posinf)
    neginf_bar += rt.unbroadcast(np.where(np.isneginf(x), y_bar, 0.0), neginf)


# -- nan-aware reductions and the median -------------------------------------------------------------------
@adjoint(np.nansum)
def nansum(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.nan_reduction_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis, keepdims)


@adjoint(np.nanmean)
def nanmean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.nan_reduction_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis, keepdims, mean=True)


@adjoint(np.nanmax, np.nanmin)
def nanmax(y, a, axis=None, out=None, keepdims=False):
    a_bar += rt.extremum_adjoint(y_bar, a, y, axis, keepdims)


@adjoint(np.median)
def median(y, a, axis=None, out=None, *, keepdims=False):
    a_bar += rt.median_adjoint(y_bar, a, y, axis, keepdims)

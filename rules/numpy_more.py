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
import math

import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS, VIEW_FUNCTIONS
from adjoint_compiler.registry import adjoint, alias, nondifferentiable, tangent

FRESH_FUNCTIONS.update({np.trapezoid, np.sinc} if hasattr(np, "trapezoid") else {np.sinc})


# -- gathers ------------------------------------------------------------------------------------------
@adjoint(np.take)
def take(y, a, indices, axis=None, out=None, mode="raise"):
    a_bar += rt.take_adjoint(y_bar, a, indices, axis, mode)


@tangent(np.take)
def take_dot(y, a, indices, axis=None, out=None, mode="raise"):
    y_dot = np.take(a_dot, indices, axis=axis, mode=mode)


alias("take", np.take)  # (its tangent rule too)


@adjoint(np.take_along_axis)
def take_along_axis(y, arr, indices, axis=-1):
    arr_bar += rt.take_along_axis_adjoint(y_bar, arr, indices, axis)


@tangent(np.take_along_axis)
def take_along_axis_dot(y, arr, indices, axis=-1):
    y_dot = np.take_along_axis(arr_dot, indices, axis)


@adjoint(np.pad)
def pad(y, array, pad_width, mode="constant", *, constant_values=0):
    parts = rt.pad_adjoint(y_bar, array, pad_width, mode, constant_values)
    array_bar += parts[0]
    constant_values_bar += parts[1]


@tangent(np.pad)
def pad_dot(y, array, pad_width, mode="constant", *, constant_values=0):
    y_dot = rt.pad_tangent(array_dot, constant_values_dot, array, pad_width, mode)


# pad_adjoint is linear in its cotangent (the shape of `array` and of `constant_values` is all it
# reads of them): its transpose pads as np.pad does
@adjoint(rt.pad_adjoint)
def pad_adjoint(parts, g, array, pad_width, mode="constant", constant_values=0):
    g_bar += rt.pad_adjoint_transpose(parts_bar, g, array, pad_width, mode, constant_values)


@tangent(rt.pad_adjoint)
def pad_adjoint_dot(parts, g, array, pad_width, mode="constant", constant_values=0):
    parts_dot = rt.pad_adjoint(g_dot, array, pad_width, mode, constant_values)


@adjoint(rt.pad_adjoint_transpose)
def pad_adjoint_transpose(y, h, g, array, pad_width, mode="constant", constant_values=0):
    h_bar += rt.pad_adjoint(y_bar, array, pad_width, mode, constant_values)


@tangent(rt.pad_adjoint_transpose)
def pad_adjoint_transpose_dot(y, h, g, array, pad_width, mode="constant", constant_values=0):
    y_dot = rt.pad_adjoint_transpose(h_dot, g, array, pad_width, mode, constant_values)


# quantile_adjoint(g, a, q, y, ...) = (a_bar, q_bar): linear in g; its weights are piecewise constant
# in `a` and its slopes in `q`, but the weights move with q and the slopes with a
@adjoint(rt.quantile_adjoint)
def quantile_adjoint(parts, g, a, q, y, axis=None, method="linear", keepdims=False, scale=1.0):
    more = rt.quantile_adjoint_transpose(parts_bar, g, a, q, y, axis, method, keepdims, scale)
    g_bar += more[0]
    a_bar += more[1]
    q_bar += more[2]


@tangent(rt.quantile_adjoint)
def quantile_adjoint_dot(parts, g, a, q, y, axis=None, method="linear", keepdims=False, scale=1.0):
    parts_dot = rt.quantile_adjoint_tangent(g_dot, a_dot, q_dot, g, a, q, y, axis, method, keepdims, scale)


# -- splitting and joining ----------------------------------------------------------------------------
@adjoint(np.split, np.array_split)
def split(y, ary, indices_or_sections, axis=0):
    ary_bar += rt.split_adjoint(y_bar, ary, y, axis)


@tangent(np.split)
def split_dot(y, ary, indices_or_sections, axis=0):
    y_dot = np.split(ary_dot, indices_or_sections, axis=axis)


@tangent(np.array_split)
def array_split_dot(y, ary, indices_or_sections, axis=0):
    y_dot = np.array_split(ary_dot, indices_or_sections, axis=axis)


@adjoint(np.hsplit)
def hsplit(y, ary, indices_or_sections):
    ary_bar += rt.split_adjoint(y_bar, ary, y, rt.hsplit_axis(ary))


@tangent(np.hsplit)
def hsplit_dot(y, ary, indices_or_sections):
    y_dot = np.hsplit(ary_dot, indices_or_sections)


@adjoint(np.vsplit)
def vsplit(y, ary, indices_or_sections):
    ary_bar += rt.split_adjoint(y_bar, ary, y, 0)


@tangent(np.vsplit)
def vsplit_dot(y, ary, indices_or_sections):
    y_dot = np.vsplit(ary_dot, indices_or_sections)


@adjoint(np.dsplit)
def dsplit(y, ary, indices_or_sections):
    ary_bar += rt.split_adjoint(y_bar, ary, y, 2)


@tangent(np.dsplit)
def dsplit_dot(y, ary, indices_or_sections):
    y_dot = np.dsplit(ary_dot, indices_or_sections)


@adjoint(np.append)
def append(y, arr, values, axis=None):
    parts = rt.append_adjoint(y_bar, arr, values, axis)
    arr_bar += parts[0]
    values_bar += parts[1]


@tangent(np.append)
def append_dot(y, arr, values, axis=None):
    y_dot = np.append(arr_dot, values_dot, axis=axis)


@adjoint(np.column_stack)
def column_stack(y, tup):
    tup_bar += rt.column_stack_adjoint(y_bar, tup)


@tangent(np.column_stack)
def column_stack_dot(y, tup):
    y_dot = np.column_stack(tup_dot)


@adjoint(np.dstack)
def dstack(y, tup):
    tup_bar += rt.dstack_adjoint(y_bar, tup)


@tangent(np.dstack)
def dstack_dot(y, tup):
    y_dot = np.dstack(tup_dot)


# -- products -------------------------------------------------------------------------------------------
@adjoint(np.kron)
def kron(y, a, b):
    parts = rt.kron_adjoint(y_bar, a, b)
    a_bar += parts[0]
    b_bar += parts[1]


@tangent(np.kron)
def kron_dot(y, a, b):
    y_dot = np.kron(a_dot, b) + np.kron(a, b_dot)


@adjoint(np.cross)
def cross(c, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    parts = rt.cross_adjoint(c_bar, a, b, axisa, axisb, axisc, axis)
    a_bar += parts[0]
    b_bar += parts[1]


@tangent(np.cross)
def cross_dot(c, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    c_dot = np.cross(a_dot, b, axisa, axisb, axisc, axis) + np.cross(a, b_dot, axisa, axisb, axisc, axis)


# -- interpolation, quadrature, polynomials -------------------------------------------------------------
@adjoint(np.interp)
def interp(y, x, xp, fp, left=None, right=None):
    parts = rt.interp_adjoint(y_bar, x, xp, fp, left, right)
    x_bar += parts[0]
    xp_bar += parts[1]
    fp_bar += parts[2]
    left_bar += parts[3]
    right_bar += parts[4]


@tangent(np.interp)
def interp_dot(y, x, xp, fp, left=None, right=None):
    y_dot = rt.interp_tangent(x_dot, xp_dot, fp_dot, left_dot, right_dot, x, xp, fp, left, right)


if hasattr(np, "trapezoid"):
    @adjoint(np.trapezoid)
    def trapezoid(s, y, x=None, dx=1.0, axis=-1):
        parts = rt.trapezoid_adjoint(s_bar, y, x, dx, axis)
        y_bar += parts[0]
        x_bar += parts[1]
        dx_bar += parts[2]


    @tangent(np.trapezoid)
    def trapezoid_dot(s, y, x=None, dx=1.0, axis=-1):
        s_dot = rt.trapezoid_tangent(y_dot, x_dot, dx_dot, y, x, dx, axis)


@adjoint(np.polyval)
def polyval(y, p, x):
    parts = rt.polyval_adjoint(y_bar, p, x)
    p_bar += parts[0]
    x_bar += parts[1]


@tangent(np.polyval)
def polyval_dot(y, p, x):
    y_dot = rt.polyval_tangent(p_dot, x_dot, p, x)


# -- elementwise --------------------------------------------------------------------------------------------
@adjoint(np.sinc)
def sinc(y, x):
    x_bar += y_bar * rt.sinc_derivative(x)


@tangent(np.sinc)
def sinc_dot(y, x):
    y_dot = x_dot * rt.sinc_derivative(x)


@adjoint(np.fabs)
def fabs(y, x):
    x_bar += y_bar * np.sign(x)


@tangent(np.fabs)
def fabs_dot(y, x):
    y_dot = x_dot * np.sign(x)


@adjoint(np.nan_to_num)
def nan_to_num(y, x, *, nan=0.0, posinf=None, neginf=None):
    x_bar += np.where(np.isfinite(x), y_bar, 0.0)
    nan_bar += rt.unbroadcast(np.where(np.isnan(x), y_bar, 0.0), nan)
    posinf_bar += rt.unbroadcast(np.where(np.isposinf(x), y_bar, 0.0), posinf)
    neginf_bar += rt.unbroadcast(np.where(np.isneginf(x), y_bar, 0.0), neginf)


@tangent(np.nan_to_num)
def nan_to_num_dot(y, x, *, nan=0.0, posinf=None, neginf=None):
    y_dot = (np.where(np.isfinite(x), x_dot, 0.0) + np.where(np.isnan(x), nan_dot, 0.0)
             + np.where(np.isposinf(x), posinf_dot, 0.0) + np.where(np.isneginf(x), neginf_dot, 0.0))


# -- nan-aware reductions and the median -------------------------------------------------------------------
@adjoint(np.nansum)
def nansum(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.nan_reduction_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis, keepdims)


@tangent(np.nansum)
def nansum_dot(y, a, axis=None, dtype=None, out=None, keepdims=False):
    y_dot = rt.through_dtype(rt.nan_sum_tangent(a_dot, a, axis, keepdims), dtype=dtype)


@adjoint(np.nanmean)
def nanmean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    a_bar += rt.nan_reduction_adjoint(rt.through_dtype(y_bar, dtype=dtype), a, axis, keepdims, mean=True)


@tangent(np.nanmean)
def nanmean_dot(y, a, axis=None, dtype=None, out=None, keepdims=False):
    y_dot = rt.through_dtype(rt.nan_sum_tangent(a_dot, a, axis, keepdims, mean=True), dtype=dtype)


@adjoint(np.nanmax, np.nanmin)
def nanmax(y, a, axis=None, out=None, keepdims=False):
    a_bar += rt.extremum_adjoint(y_bar, a, y, axis, keepdims)


@tangent(np.nanmax, np.nanmin)
def nanmax_dot(y, a, axis=None, out=None, keepdims=False):
    y_dot = rt.nan_extremum_tangent(a_dot, a, y, axis, keepdims)


@adjoint(np.median)
def median(y, a, axis=None, out=None, *, keepdims=False):
    a_bar += rt.median_adjoint(y_bar, a, y, axis, keepdims)


@tangent(np.median)
def median_dot(y, a, axis=None, out=None, *, keepdims=False):
    y_dot = rt.median_tangent(a_dot, a, y, axis, keepdims)


# -- the rest of the list: rot90, rollaxis, row_stack, vdot, meshgrid, choose, select,
#    partition, gradient, quantile, percentile, tolist (helpers in runtime_numpy_more) ------------------
VIEW_FUNCTIONS.add(np.rollaxis)  # (np.rot90 is a view already)
FRESH_FUNCTIONS.update({np.partition, np.choose})


@adjoint(np.rot90)
def rot90(y, m, k=1, axes=None):
    m_bar += rt.rot90_of(y_bar, -k, axes)


@tangent(np.rot90)
def rot90_dot(y, m, k=1, axes=None):
    y_dot = rt.rot90_of(m_dot, k, axes)


@adjoint(np.rollaxis)
def rollaxis(y, a, axis, start=0):
    a_bar += rt.rollaxis_adjoint(y_bar, a, axis, start)


@tangent(np.rollaxis)
def rollaxis_dot(y, a, axis, start=0):
    y_dot = np.rollaxis(a_dot, axis, start)


if hasattr(np, "row_stack") and np.row_stack is not np.vstack:  # (deprecated: vstack under another name)
    alias(np.row_stack, np.vstack)


@adjoint(np.vdot)
def vdot(c, a, b):
    a_bar += np.reshape(c_bar * np.ravel(b), np.shape(a))
    b_bar += np.reshape(c_bar * np.ravel(a), np.shape(b))


@tangent(np.vdot)
def vdot_dot(c, a, b):
    c_dot = np.vdot(a_dot, b) + np.vdot(a, b_dot)


@adjoint(np.meshgrid)
def meshgrid(y, *xi, sparse=False, indexing="xy"):
    xi_bar += rt.meshgrid_adjoint(y_bar, xi, indexing, sparse)


@tangent(np.meshgrid)
def meshgrid_dot(y, *xi, sparse=False, indexing="xy"):
    y_dot = rt.meshgrid_tangent(xi_dot, y, indexing, sparse)


@adjoint(np.choose)
def choose(y, a, choices, out=None, mode="raise"):
    choices_bar += rt.choose_adjoint(y_bar, a, choices, mode)


@tangent(np.choose)
def choose_dot(y, a, choices, out=None, mode="raise"):
    y_dot = np.choose(a, choices_dot, mode=mode)


@adjoint(np.select)
def select(y, condlist, choicelist, default=0):
    parts = rt.select_adjoint(y_bar, condlist, choicelist, default)
    choicelist_bar += parts[0]
    default_bar += parts[1]


@tangent(np.select)
def select_dot(y, condlist, choicelist, default=0):
    y_dot = rt.select_tangent(condlist, choicelist_dot, default_dot, y)


@adjoint(np.partition)
def partition(y, a, kth, axis=-1, kind="introselect", order=None):
    a_bar += rt.partition_adjoint(y_bar, a, y, axis)


@tangent(np.partition)
def partition_dot(y, a, kth, axis=-1, kind="introselect", order=None):
    y_dot = rt.partition_tangent(a_dot, a, y, axis)


@adjoint(np.gradient)
def gradient(y, f, *varargs, axis=None, edge_order=1):
    f_bar += rt.gradient_adjoint(y_bar, f, varargs, axis, edge_order)
    varargs_bar += rt.gradient_spacing_adjoint(y_bar, varargs)


@tangent(np.gradient)
def gradient_dot(y, f, *varargs, axis=None, edge_order=1):
    y_dot = rt.gradient_tangent(f_dot, varargs_dot, f, varargs, axis, edge_order)


# `overwrite_input` is not a parameter: True reorders `a` in place (refused, as for `median`)
@adjoint(np.quantile)
def quantile(y, a, q, axis=None, out=None, *, method="linear", keepdims=False):
    parts = rt.quantile_adjoint(y_bar, a, q, y, axis, method, keepdims)
    a_bar += parts[0]
    q_bar += parts[1]


@tangent(np.quantile)
def quantile_dot(y, a, q, axis=None, out=None, *, method="linear", keepdims=False):
    y_dot = rt.quantile_tangent(a_dot, q_dot, a, q, y, axis, method, keepdims)


@adjoint(np.percentile)
def percentile(y, a, q, axis=None, out=None, *, method="linear", keepdims=False):
    parts = rt.quantile_adjoint(y_bar, a, q, y, axis, method, keepdims, 0.01)
    a_bar += parts[0]
    q_bar += parts[1]


@tangent(np.percentile)
def percentile_dot(y, a, q, axis=None, out=None, *, method="linear", keepdims=False):
    y_dot = rt.quantile_tangent(a_dot, q_dot, a, q, y, axis, method, keepdims, 0.01)


@adjoint("tolist")
def tolist(y, a):
    a_bar += rt.tolist_adjoint(y_bar, a)


@tangent("tolist")
def tolist_dot(y, a):
    y_dot = rt.tolist_tangent(a_dot, a)


# -- what normalize writes for a reduction with `where=` (max/min also for `initial=`), and the pure
#    forms of the in-place calls it writes back (`a.sort()` is `a[...] = rt.sorted_copy(a)`) ------------
@adjoint(rt.where_reduce)
def where_reduce(y, name, a, where=True, axis=None, dtype=None, keepdims=False, initial=None):
    parts = rt.where_reduce_adjoint(y_bar, name, a, where, y, axis, dtype, keepdims, initial)
    a_bar += parts[0]
    initial_bar += parts[1]


@tangent(rt.where_reduce)
def where_reduce_dot(y, name, a, where=True, axis=None, dtype=None, keepdims=False, initial=None):
    y_dot = rt.where_reduce_tangent(a_dot, initial_dot, name, a, where, y, axis, dtype, keepdims, initial)


@adjoint(rt.sorted_copy)
def sorted_copy(y, a, axis=-1, kind=None, order=None):
    a_bar += rt.partition_adjoint(y_bar, a, y, axis)


@tangent(rt.sorted_copy)
def sorted_copy_dot(y, a, axis=-1, kind=None, order=None):
    y_dot = rt.partition_tangent(a_dot, a, y, axis)


@adjoint(rt.partitioned_copy)
def partitioned_copy(y, a, kth, axis=-1, kind="introselect", order=None):
    a_bar += rt.partition_adjoint(y_bar, a, y, axis)


@tangent(rt.partitioned_copy)
def partitioned_copy_dot(y, a, kth, axis=-1, kind="introselect", order=None):
    y_dot = rt.partition_tangent(a_dot, a, y, axis)


@adjoint(rt.added_at)
def added_at(y, a, indices, b):
    a_bar += y_bar
    b_bar += rt.at_adjoint(y_bar, indices, b)


@tangent(rt.added_at)
def added_at_dot(y, a, indices, b):
    y_dot = rt.added_at(a_dot, indices, b_dot)


@adjoint(rt.subtracted_at)
def subtracted_at(y, a, indices, b):
    a_bar += y_bar
    b_bar += -rt.at_adjoint(y_bar, indices, b)


@tangent(rt.subtracted_at)
def subtracted_at_dot(y, a, indices, b):
    y_dot = rt.subtracted_at(a_dot, indices, b_dot)


@adjoint(rt.put_copy)
def put_copy(y, a, ind, v, mode="raise"):
    parts = rt.put_adjoint(y_bar, a, ind, v, mode)
    a_bar += parts[0]
    v_bar += parts[1]


@tangent(rt.put_copy)
def put_copy_dot(y, a, ind, v, mode="raise"):
    y_dot = rt.put_copy(a_dot, ind, v_dot, mode)


@adjoint(rt.put_along_axis_copy)
def put_along_axis_copy(y, arr, indices, values, axis):
    parts = rt.put_along_axis_adjoint(y_bar, arr, indices, values, axis)
    arr_bar += parts[0]
    values_bar += parts[1]


@tangent(rt.put_along_axis_copy)
def put_along_axis_copy_dot(y, arr, indices, values, axis):
    y_dot = rt.put_along_axis_copy(arr_dot, indices, values_dot, axis)


@adjoint(rt.putmask_copy)
def putmask_copy(y, a, mask, values):
    parts = rt.putmask_adjoint(y_bar, a, mask, values)
    a_bar += parts[0]
    values_bar += parts[1]


@tangent(rt.putmask_copy)
def putmask_copy_dot(y, a, mask, values):
    y_dot = rt.putmask_copy(a_dot, mask, values_dot)


@adjoint(rt.diagonal_filled)
def diagonal_filled(y, a, val, wrap=False):
    parts = rt.fill_diagonal_adjoint(y_bar, a, val, wrap)
    a_bar += parts[0]
    val_bar += parts[1]


@tangent(rt.diagonal_filled)
def diagonal_filled_dot(y, a, val, wrap=False):
    y_dot = rt.diagonal_filled(a_dot, val_dot, wrap)


# np.vectorize(f)(x, ...) of a Python function (normalize.vectorize_call): the entries as numbers,
# `f` compiled for each, the values put back in the broadcast shape
@adjoint(rt.vectorize_items)
def vectorize_items(y, *args):
    args_bar += rt.vectorize_items_adjoint(y_bar, args)


@tangent(rt.vectorize_items)
def vectorize_items_dot(y, *args):
    y_dot = rt.vectorize_items_tangent(args_dot, args)


@adjoint(rt.vectorize_result)
def vectorize_result(y, items, *args):
    items_bar += rt.vectorize_result_adjoint(y_bar, items)


@tangent(rt.vectorize_result)
def vectorize_result_dot(y, items, *args):
    y_dot = rt.vectorize_result(items_dot, *args)


# np.piecewise (normalize.piecewise_call): its starting zeros and its masks pass no gradient
nondifferentiable(rt.piecewise_zeros, rt.piecewise_mask, rt.piecewise_otherwise)


# np.multiply.at, np.maximum.at, np.minimum.at (normalize.inplace_call): a[...] = rt.ufunc_at_copy(...)
@adjoint(rt.ufunc_at_copy)
def ufunc_at_copy(y, name, a, indices, b):
    parts = rt.ufunc_at_adjoint(y_bar, name, a, indices, b, y)
    a_bar += parts[0]
    b_bar += parts[1]


@tangent(rt.ufunc_at_copy)
def ufunc_at_copy_dot(y, name, a, indices, b):
    y_dot = rt.ufunc_at_tangent(a_dot, b_dot, name, a, indices, b, y)


# -- the adjoint helpers above, as generated gradients call them: linear in the cotangent (the
#    permutations, masks and weights they read are piecewise constant), so each adjoint is the
#    transpose and each tangent the helper of the tangent; a gradient through them differentiates again
@adjoint(rt.partition_adjoint)
def partition_adjoint(y, g, a, r, axis=-1):
    g_bar += rt.partition_tangent(y_bar, a, r, axis)


@tangent(rt.partition_adjoint)
def partition_adjoint_dot(y, g, a, r, axis=-1):
    y_dot = rt.partition_adjoint(g_dot, a, r, axis)


@adjoint(rt.partition_tangent)
def partition_tangent(y, t, a, r, axis=-1):
    t_bar += rt.partition_adjoint(y_bar, a, r, axis)


@tangent(rt.partition_tangent)
def partition_tangent_dot(y, t, a, r, axis=-1):
    y_dot = rt.partition_tangent(t_dot, a, r, axis)


@adjoint(rt.rot90_of)
def rot90_of(y, g, k=1, axes=None):
    g_bar += rt.rot90_of(y_bar, -k, axes)


@tangent(rt.rot90_of)
def rot90_of_dot(y, g, k=1, axes=None):
    y_dot = rt.rot90_of(g_dot, k, axes)


@adjoint(rt.rollaxis_adjoint)
def rollaxis_adjoint(y, g, a, axis, start=0):
    g_bar += np.rollaxis(y_bar, axis, start)


@tangent(rt.rollaxis_adjoint)
def rollaxis_adjoint_dot(y, g, a, axis, start=0):
    y_dot = rt.rollaxis_adjoint(g_dot, a, axis, start)


@adjoint(rt.where_reduce_adjoint)
def where_reduce_adjoint(y, g, name, a, where, r, axis=None, dtype=None, keepdims=False, initial=None):
    g_bar += rt.where_reduce_transpose(y_bar, name, a, where, r, axis, dtype, keepdims, initial)


@tangent(rt.where_reduce_adjoint)
def where_reduce_adjoint_dot(y, g, name, a, where, r, axis=None, dtype=None, keepdims=False, initial=None):
    y_dot = rt.where_reduce_adjoint(g_dot, name, a, where, r, axis, dtype, keepdims, initial)


@adjoint(rt.at_adjoint)
def at_adjoint(y, g, indices, b):
    g_bar += rt.added_at(rt.zeros_like(g), indices, y_bar)


@tangent(rt.at_adjoint)
def at_adjoint_dot(y, g, indices, b):
    y_dot = rt.at_adjoint(g_dot, indices, b)


@adjoint(rt.tolist_adjoint)
def tolist_adjoint(y, g, a):
    g_bar += rt.tolist_tangent(y_bar, a)


@tangent(rt.tolist_adjoint)
def tolist_adjoint_dot(y, g, a):
    y_dot = rt.tolist_adjoint(g_dot, a)


@adjoint(rt.vectorize_items_adjoint)
def vectorize_items_adjoint(y, g, args):
    g_bar += rt.vectorize_items_tangent(y_bar, args)


@tangent(rt.vectorize_items_adjoint)
def vectorize_items_adjoint_dot(y, g, args):
    y_dot = rt.vectorize_items_adjoint(g_dot, args)


@adjoint(rt.vectorize_result_adjoint)
def vectorize_result_adjoint(y, g, items):
    g_bar += rt.numbers_to_array(y_bar, g)


@tangent(rt.vectorize_result_adjoint)
def vectorize_result_adjoint_dot(y, g, items):
    y_dot = rt.vectorize_result_adjoint(g_dot, items)


@adjoint(rt.choose_adjoint)
def choose_adjoint(y, g, a, choices, mode="raise"):
    g_bar += rt.choose_transpose(y_bar, a, choices, mode, g)


@tangent(rt.choose_adjoint)
def choose_adjoint_dot(y, g, a, choices, mode="raise"):
    y_dot = rt.choose_adjoint(g_dot, a, choices, mode)


@adjoint(rt.select_adjoint)
def select_adjoint(y, g, condlist, choicelist, default=0):
    g_bar += rt.select_transpose(y_bar, condlist, choicelist, default, g)


@tangent(rt.select_adjoint)
def select_adjoint_dot(y, g, condlist, choicelist, default=0):
    y_dot = rt.select_adjoint(g_dot, condlist, choicelist, default)


@adjoint(rt.put_adjoint)
def put_adjoint(y, g, a, ind, v, mode="raise"):
    g_bar += rt.put_transpose(y_bar, a, ind, v, mode)


@tangent(rt.put_adjoint)
def put_adjoint_dot(y, g, a, ind, v, mode="raise"):
    y_dot = rt.put_adjoint(g_dot, a, ind, v, mode)


@adjoint(rt.fill_diagonal_adjoint)
def fill_diagonal_adjoint(y, g, a, val, wrap=False):
    g_bar += rt.fill_diagonal_transpose(y_bar, a, val, wrap)


@tangent(rt.fill_diagonal_adjoint)
def fill_diagonal_adjoint_dot(y, g, a, val, wrap=False):
    y_dot = rt.fill_diagonal_adjoint(g_dot, a, val, wrap)


@adjoint(rt.meshgrid_adjoint)
def meshgrid_adjoint(y, g, xi, indexing="xy", sparse=False):
    g_bar += rt.meshgrid_transpose(y_bar, xi, indexing, sparse)


@tangent(rt.meshgrid_adjoint)
def meshgrid_adjoint_dot(y, g, xi, indexing="xy", sparse=False):
    y_dot = rt.meshgrid_adjoint(g_dot, xi, indexing, sparse)


@adjoint(rt.gradient_adjoint)
def gradient_adjoint(y, g, f, varargs, axis=None, edge_order=1):
    g_bar += rt.gradient_tangent(y_bar, None, f, varargs, axis, edge_order)


@tangent(rt.gradient_adjoint)
def gradient_adjoint_dot(y, g, f, varargs, axis=None, edge_order=1):
    y_dot = rt.gradient_adjoint(g_dot, f, varargs, axis, edge_order)


# -- more of the programs people write: ptp, average, diagflat, delete, vander, copysign, heaviside,
#    and predicates that pass no gradient ----------------------------------------------------------------
FRESH_FUNCTIONS.update({np.ptp, np.diagflat, np.copysign, np.heaviside, np.add.reduce, np.multiply.reduce,
                        np.maximum.reduce, np.minimum.reduce})
nondifferentiable(np.argpartition, np.array_equiv, np.isneginf, np.isposinf, np.isreal, np.isrealobj,
                  np.iscomplex, np.iscomplexobj, np.isscalar, np.result_type)


@adjoint(np.ptp)
def ptp(y, a, axis=None, out=None, keepdims=False):
    a_bar += rt.ptp_adjoint(y_bar, a, axis, keepdims)


@tangent(np.ptp)
def ptp_dot(y, a, axis=None, out=None, keepdims=False):
    y_dot = rt.ptp_tangent(a_dot, a, axis, keepdims)


@adjoint(np.average)
def average(y, a, axis=None, weights=None, returned=False, *, keepdims=False):
    parts = rt.average_adjoint(y_bar, a, y, axis, weights, returned, keepdims)
    a_bar += parts[0]
    weights_bar += parts[1]


@tangent(np.average)
def average_dot(y, a, axis=None, weights=None, returned=False, *, keepdims=False):
    y_dot = rt.average_tangent(a_dot, weights_dot, a, y, axis, weights, returned, keepdims)


@adjoint(np.diagflat)
def diagflat(y, v, k=0):
    v_bar += np.reshape(np.diagonal(y_bar, k), np.shape(v))


@tangent(np.diagflat)
def diagflat_dot(y, v, k=0):
    y_dot = np.diagflat(v_dot, k)


@adjoint(np.delete)
def delete(y, arr, obj, axis=None):
    arr_bar += rt.delete_adjoint(y_bar, arr, obj, axis)


@tangent(np.delete)
def delete_dot(y, arr, obj, axis=None):
    y_dot = np.delete(arr_dot, obj, axis)


@adjoint(np.vander)
def vander(y, x, N=None, increasing=False):
    x_bar += np.sum(y_bar * rt.vander_derivative(x, N, increasing), axis=1)


@tangent(np.vander)
def vander_dot(y, x, N=None, increasing=False):
    y_dot = np.expand_dims(x_dot, -1) * rt.vander_derivative(x, N, increasing)


@adjoint(np.copysign, math.copysign)
def copysign(y, x1, x2):
    x1_bar += rt.unbroadcast(y_bar * rt.copysign_derivative(x1, x2), x1)


@tangent(np.copysign, math.copysign)
def copysign_dot(y, x1, x2):
    y_dot = x1_dot * rt.copysign_derivative(x1, x2)


@adjoint(np.heaviside)
def heaviside(y, x1, x2):
    x2_bar += rt.unbroadcast(np.where(x1 == 0, y_bar, 0.0), x2)


@tangent(np.heaviside)
def heaviside_dot(y, x1, x2):
    y_dot = np.where(x1 == 0, x2_dot, 0.0)


@adjoint(np.convolve)
def convolve(y, a, v, mode="full"):
    parts = rt.convolve_adjoint(y_bar, a, v, mode)
    a_bar += np.reshape(parts[0], np.shape(a))
    v_bar += np.reshape(parts[1], np.shape(v))


@tangent(np.convolve)
def convolve_dot(y, a, v, mode="full"):
    y_dot = np.convolve(a_dot, v, mode) + np.convolve(a, v_dot, mode)


@adjoint(np.correlate)
def correlate(y, a, v, mode="valid"):
    parts = rt.correlate_adjoint(y_bar, a, v, mode)
    a_bar += np.reshape(parts[0], np.shape(a))
    v_bar += np.reshape(parts[1], np.shape(v))


@tangent(np.correlate)
def correlate_dot(y, a, v, mode="valid"):
    y_dot = np.correlate(a_dot, v, mode) + np.correlate(a, v_dot, mode)


# the reductions and accumulations of ufuncs: np.add.reduce(a) is np.sum(a, axis=0), ...
@adjoint(np.add.reduce)
def add_reduce(y, a, axis=0, dtype=None, out=None, *, keepdims=False):
    a_bar += rt.expand_reduced(rt.cast_adjoint(y_bar, dtype, a), a, axis, keepdims)


@tangent(np.add.reduce)
def add_reduce_dot(y, a, axis=0, dtype=None, out=None, *, keepdims=False):
    y_dot = rt.cast_adjoint(np.sum(a_dot, axis=axis, keepdims=keepdims), dtype, a)


@adjoint(np.multiply.reduce)
def multiply_reduce(y, a, axis=0, dtype=None, out=None, *, keepdims=False):
    a_bar += rt.prod_adjoint(rt.cast_adjoint(y_bar, dtype, a), a, axis, keepdims)


@tangent(np.multiply.reduce)
def multiply_reduce_dot(y, a, axis=0, dtype=None, out=None, *, keepdims=False):
    y_dot = rt.cast_adjoint(rt.prod_tangent(a_dot, a, y, axis, keepdims), dtype, a)


FRESH_FUNCTIONS.update({np.maximum.accumulate, np.minimum.accumulate, np.modf, np.divmod, np.add.outer,
                        np.subtract.outer, np.multiply.outer, np.block})


@adjoint(np.maximum.accumulate, np.minimum.accumulate)  # (the running maximum and minimum)
def maximum_accumulate(y, array, axis=0, dtype=None, out=None):
    array_bar += rt.accumulated_extremum_adjoint(rt.through_dtype(y_bar, dtype=dtype), array, y, axis)


@tangent(np.maximum.accumulate, np.minimum.accumulate)
def maximum_accumulate_dot(y, array, axis=0, dtype=None, out=None):
    y_dot = rt.through_dtype(rt.accumulated_extremum_tangent(array_dot, array, y, axis), dtype=dtype)


@adjoint(np.modf)  # (the fractional part, the integral part: only the first varies)
def modf(y, x):
    x_bar += rt.unbroadcast(rt.item(y_bar, 0, y[0]), x)


@tangent(np.modf)
def modf_dot(y, x):
    y_dot = (rt.broadcast_tangent(x_dot, y[0]), np.zeros(np.shape(y[1])))


@adjoint(np.divmod, divmod)  # (x // y, x % y): the quotient is integral, the remainder x - y (x // y)
def divmod_(z, x, y):
    x_bar += rt.unbroadcast(rt.item(z_bar, 1, z[1]), x)
    y_bar += rt.unbroadcast(-rt.item(z_bar, 1, z[1]) * z[0], y)


@tangent(np.divmod, divmod)
def divmod_dot(z, x, y):
    z_dot = (z[0] * 0.0, rt.broadcast_tangent(x_dot - y_dot * z[0], z[1]))


@adjoint(np.maximum.reduce, np.minimum.reduce)
def maximum_reduce(y, a, axis=0, dtype=None, out=None, *, keepdims=False):
    a_bar += rt.extremum_adjoint(y_bar, a, y, axis, keepdims)


@tangent(np.maximum.reduce, np.minimum.reduce)
def maximum_reduce_dot(y, a, axis=0, dtype=None, out=None, *, keepdims=False):
    y_dot = rt.extremum_tangent(a_dot, a, y, axis, keepdims)


FRESH_FUNCTIONS.update({np.geomspace, np.insert})


@adjoint(np.geomspace)
def geomspace(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    parts = rt.geomspace_adjoint(y_bar, y, start, stop, num, endpoint, axis)
    start_bar += parts[0]
    stop_bar += parts[1]


@tangent(np.geomspace)
def geomspace_dot(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    y_dot = rt.geomspace_tangent(start_dot, stop_dot, y, start, stop, num, endpoint, axis)


@adjoint(np.insert)
def insert(y, arr, obj, values, axis=None):
    parts = rt.insert_adjoint(y_bar, arr, obj, values, axis)
    arr_bar += parts[0]
    values_bar += parts[1]


@tangent(np.insert)
def insert_dot(y, arr, obj, values, axis=None):
    y_dot = rt.insert_tangent(arr_dot, values_dot, arr, obj, values, axis)


# -- np.i0, np.nextafter, np.spacing -------------------------------------------------------------------
FRESH_FUNCTIONS.update({np.i0, np.nextafter})
nondifferentiable(np.spacing)  # (a step function of its argument: the distance to the next float)


@adjoint(np.i0)
def i0(y, x):
    x_bar += y_bar * rt.i0_derivative(x)


@tangent(np.i0)
def i0_dot(y, x):
    y_dot = x_dot * rt.i0_derivative(x)


@adjoint(np.nextafter)
def nextafter(y, x1, x2):
    """The next float after x1 towards x2: x1 moved by at most one ulp, so its derivative in x1 is
    1 (and 0 in x2, which only picks the direction)."""
    x1_bar += rt.unbroadcast(y_bar * np.ones_like(y), x1)


@tangent(np.nextafter)
def nextafter_dot(y, x1, x2):
    y_dot = x1_dot * np.ones_like(y)

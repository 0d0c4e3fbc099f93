"""Shape functions and copies: the gradient is `y_bar` moved back to where each entry came from.

Functions taking a list of arrays (`np.concatenate([a, b])`, `np.stack(xs)`) return a list of
per-item gradients; the list display's own rule hands each item its gradient.
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.ir import Attr
from adjoint_compiler.registry import adjoint, alias, tangent


# -- same entries, another shape ------------------------------------------------------------------
# `order` reads and writes the entries in that index order: the adjoint puts them back in the same
# order (`rt.reshape_adjoint` resolves 'A' and 'K' from `a`'s layout).
@adjoint(np.reshape)
def reshape(y, a, shape=None, order="C", *, newshape=None, copy=None):
    a_bar += rt.reshape_adjoint(y_bar, a, order=order)


@tangent(np.reshape)
def reshape_dot(y, a, shape=None, order="C", *, newshape=None, copy=None):
    y_dot = rt.reshape_tangent(a_dot, y, a, order=order)


@adjoint("reshape")
def reshape_method(y, a, *shape, order="C", copy=None):
    a_bar += rt.reshape_adjoint(y_bar, a, order=order)


@tangent("reshape")
def reshape_method_dot(y, a, *shape, order="C", copy=None):
    y_dot = rt.reshape_tangent(a_dot, y, a, order=order)


@adjoint(np.ravel)
def ravel(y, a, order="C"):
    a_bar += rt.reshape_adjoint(y_bar, a, order=order)


@tangent(np.ravel)
def ravel_dot(y, a, order="C"):
    y_dot = rt.reshape_tangent(a_dot, y, a, order=order)


alias("ravel", np.ravel)
alias("flatten", np.ravel)


@adjoint("view")  # `x.view()`: the same values (a view of another dtype has no rule)
def view(y, a):
    a_bar += y_bar


@tangent("view")
def view_dot(y, a):
    y_dot = a_dot.view()


@adjoint(np.squeeze)
def squeeze(y, a, axis=None):
    a_bar += np.reshape(y_bar, np.shape(a))


@tangent(np.squeeze)
def squeeze_dot(y, a, axis=None):
    y_dot = np.squeeze(a_dot, axis=axis)


alias("squeeze", np.squeeze)


@adjoint(np.expand_dims)
def expand_dims(y, a, axis):
    a_bar += np.reshape(y_bar, np.shape(a))


@tangent(np.expand_dims)
def expand_dims_dot(y, a, axis):
    y_dot = np.expand_dims(a_dot, axis)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd(y, a):
    a_bar += np.reshape(y_bar, np.shape(a))


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_dot(y, a):
    y_dot = np.reshape(a_dot, np.shape(y))


# -- permuted entries -----------------------------------------------------------------------------
@adjoint(np.transpose)
def transpose(y, a, axes=None):
    a_bar += np.transpose(y_bar, rt.inverse_permutation(axes))


@tangent(np.transpose)
def transpose_dot(y, a, axes=None):
    y_dot = np.transpose(a_dot, axes)


@adjoint("transpose")
def transpose_method(y, a, *axes):
    a_bar += np.transpose(y_bar, rt.inverse_permutation(axes))


@tangent("transpose")
def transpose_method_dot(y, a, *axes):
    y_dot = a_dot.transpose(*axes)


@adjoint(Attr("T"))
def T(y, a):
    a_bar += y_bar.T


@tangent(Attr("T"))
def T_dot(y, a):
    y_dot = a_dot.T


@adjoint(np.swapaxes)
def swapaxes(y, a, axis1, axis2):
    a_bar += np.swapaxes(y_bar, axis1, axis2)


@tangent(np.swapaxes)
def swapaxes_dot(y, a, axis1, axis2):
    y_dot = np.swapaxes(a_dot, axis1, axis2)


alias("swapaxes", np.swapaxes)


@adjoint(np.moveaxis)
def moveaxis(y, a, source, destination):
    a_bar += np.moveaxis(y_bar, destination, source)


@tangent(np.moveaxis)
def moveaxis_dot(y, a, source, destination):
    y_dot = np.moveaxis(a_dot, source, destination)


@adjoint(np.flip)
def flip(y, m, axis=None):
    m_bar += np.flip(y_bar, axis)


@tangent(np.flip)
def flip_dot(y, m, axis=None):
    y_dot = np.flip(m_dot, axis=axis)


@adjoint(np.fliplr)
def fliplr(y, m):
    m_bar += np.fliplr(y_bar)


@tangent(np.fliplr)
def fliplr_dot(y, m):
    y_dot = np.fliplr(m_dot)


@adjoint(np.flipud)
def flipud(y, m):
    m_bar += np.flipud(y_bar)


@tangent(np.flipud)
def flipud_dot(y, m):
    y_dot = np.flipud(m_dot)


@adjoint(np.sort)
def sort(y, a, axis=-1, kind=None, order=None):
    a_bar += rt.sort_adjoint(y_bar, a, axis)


@tangent(np.sort)
def sort_dot(y, a, axis=-1, kind=None, order=None):
    y_dot = rt.sort_tangent(a_dot, a, axis)


@adjoint(np.roll)
def roll(y, a, shift, axis=None):
    a_bar += np.roll(y_bar, np.negative(shift), axis)


@tangent(np.roll)
def roll_dot(y, a, shift, axis=None):
    y_dot = np.roll(a_dot, shift, axis=axis)


# -- copies and casts -----------------------------------------------------------------------------
@adjoint(np.copy)
def copy(y, a, order="K"):
    a_bar += y_bar


@tangent(np.copy)
def copy_dot(y, a, order="K"):
    y_dot = np.copy(a_dot)


alias("copy", np.copy)


@adjoint("astype", *([np.astype] if hasattr(np, "astype") else []))
def astype(y, a, dtype):
    a_bar += rt.cast_adjoint(y_bar, dtype, a)


@tangent("astype", *([np.astype] if hasattr(np, "astype") else []))
def astype_dot(y, a, dtype):
    y_dot = rt.cast_tangent(a_dot, y)


@adjoint(np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)
def array(y, object, dtype=None, *, ndmin=0):
    object_bar += rt.array_adjoint(y_bar, object, dtype, ndmin=ndmin)


@tangent(np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)
def array_dot(y, object, dtype=None, *, ndmin=0):
    y_dot = rt.array_tangent(object_dot, y)


# -- joining --------------------------------------------------------------------------------------
@adjoint(np.concatenate)
def concatenate(y, arrays, axis=0):
    arrays_bar += rt.concatenate_adjoint(y_bar, arrays, axis)


@tangent(np.concatenate)
def concatenate_dot(y, arrays, axis=0):
    y_dot = np.concatenate(arrays_dot, axis=axis)


@adjoint(np.broadcast_arrays)
def broadcast_arrays(y, *args):
    args_bar += rt.broadcast_arrays_adjoint(y_bar, args)


@tangent(np.broadcast_arrays)
def broadcast_arrays_dot(y, *args):
    y_dot = rt.broadcast_arrays_tangent(args_dot, y)


@adjoint(np.block)
def block(y, arrays):
    arrays_bar += rt.block_adjoint(y_bar, arrays)


@tangent(np.block)
def block_dot(y, arrays):
    y_dot = np.block(arrays_dot)


@adjoint(np.stack)
def stack(y, arrays, axis=0):
    arrays_bar += rt.stack_adjoint(y_bar, arrays, axis)


@tangent(np.stack)
def stack_dot(y, arrays, axis=0):
    y_dot = np.stack(arrays_dot, axis=axis)


@adjoint(np.hstack)
def hstack(y, tup):
    tup_bar += rt.hstack_adjoint(y_bar, tup)


@tangent(np.hstack)
def hstack_dot(y, tup):
    y_dot = np.hstack(tup_dot)


@adjoint(np.vstack)
def vstack(y, tup):
    tup_bar += rt.vstack_adjoint(y_bar, tup)


@tangent(np.vstack)
def vstack_dot(y, tup):
    y_dot = np.vstack(tup_dot)


# -- copies of entries ----------------------------------------------------------------------------
@adjoint(np.broadcast_to)
def broadcast_to(y, array, shape):
    array_bar += rt.unbroadcast(y_bar, array)


@tangent(np.broadcast_to)
def broadcast_to_dot(y, array, shape):
    y_dot = np.broadcast_to(array_dot, np.shape(y))


@adjoint(np.tile)
def tile(y, A, reps):
    A_bar += rt.tile_adjoint(y_bar, A, reps)


@tangent(np.tile)
def tile_dot(y, A, reps):
    y_dot = np.tile(A_dot, reps)


@adjoint(np.repeat)
def repeat(y, a, repeats, axis=None):
    a_bar += rt.repeat_adjoint(y_bar, a, repeats, axis)


@tangent(np.repeat)
def repeat_dot(y, a, repeats, axis=None):
    y_dot = np.repeat(a_dot, repeats, axis=axis)


alias("repeat", np.repeat)


@adjoint(np.diff)
def diff(y, a, n=1, axis=-1, prepend=None, append=None):
    a_bar += rt.diff_parts_adjoint(y_bar, a, n, axis, prepend=prepend, append=append)[0]
    prepend_bar += rt.diff_parts_adjoint(y_bar, a, n, axis, prepend=prepend, append=append)[1]
    append_bar += rt.diff_parts_adjoint(y_bar, a, n, axis, prepend=prepend, append=append)[2]


@tangent(np.diff)
def diff_dot(y, a, n=1, axis=-1, prepend=None, append=None):
    y_dot = np.diff(a_dot, n=n, axis=axis, prepend=prepend_dot, append=append_dot)


# -- constructors from values ---------------------------------------------------------------------
# (Constructors from shapes alone, `np.zeros`, `np.eye`, ..., pass no gradient: see nondiff.py.)
@adjoint(np.full)
def full(y, shape, fill_value, dtype=None, order="C"):
    fill_value_bar += rt.fill_adjoint(y_bar, y, fill_value)


@tangent(np.full)
def full_dot(y, shape, fill_value, dtype=None, order="C"):
    y_dot = rt.fill_tangent(fill_value_dot, y)


@adjoint(np.full_like)
def full_like(y, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    fill_value_bar += rt.fill_adjoint(y_bar, y, fill_value)


@tangent(np.full_like)
def full_like_dot(y, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    y_dot = rt.fill_tangent(fill_value_dot, y)


@adjoint(np.linspace)
def linspace(y, start, stop, num=50, endpoint=True, *, dtype=None, axis=0):
    start_bar += rt.linspace_start_adjoint(y_bar, start, num, endpoint, axis, dtype)
    stop_bar += rt.linspace_stop_adjoint(y_bar, stop, num, endpoint, axis, dtype)


@tangent(np.linspace)
def linspace_dot(y, start, stop, num=50, endpoint=True, *, dtype=None, axis=0):
    y_dot = rt.through_dtype(np.linspace(start_dot, stop_dot, num, endpoint, axis=axis), dtype=dtype)


@adjoint(np.logspace)
def logspace(y, start, stop, num=50, endpoint=True, base=10.0, *, dtype=None, axis=0):
    start_bar += rt.linspace_start_adjoint(rt.logspace_exponent_adjoint(y_bar, y, base, dtype), start, num, endpoint, axis)
    stop_bar += rt.linspace_stop_adjoint(rt.logspace_exponent_adjoint(y_bar, y, base, dtype), stop, num, endpoint, axis)
    base_bar += rt.logspace_base_adjoint(y_bar, y, base, start, stop, num, endpoint, axis, dtype)


@tangent(np.logspace)
def logspace_dot(y, start, stop, num=50, endpoint=True, base=10.0, *, dtype=None, axis=0):
    y_dot = rt.through_dtype(y * np.log(base) * np.linspace(start_dot, stop_dot, num, endpoint, axis=axis)
                             + base_dot * np.linspace(start, stop, num, endpoint, axis=axis) * y / base,
                             dtype=dtype)


@adjoint(np.arange)
def arange(y, start=None, stop=None, step=None, *, dtype=None):
    start_bar += rt.arange_start_adjoint(rt.through_dtype(y_bar, dtype=dtype), stop)
    step_bar += rt.arange_step_adjoint(rt.through_dtype(y_bar, dtype=dtype))


@tangent(np.arange)
def arange_dot(y, start=None, stop=None, step=None, *, dtype=None):
    y_dot = rt.arange_tangent(y, start_dot, step_dot, stop, dtype=dtype)

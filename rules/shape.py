"""Shape functions and copies: the gradient is `y_bar` moved back to where each entry came from.

Functions taking a list of arrays (`np.concatenate([a, b])`, `np.stack(xs)`) return a list of
per-item gradients; the list display's own rule hands each item its gradient.
"""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.ir import Attr
from adjoint_compiler.registry import adjoint, alias


# -- same entries, another shape ------------------------------------------------------------------
# `order` reads and writes the entries in that index order: the adjoint puts them back in the same
# order (`rt.reshape_adjoint` resolves 'A' and 'K' from `a`'s layout).
@adjoint(np.reshape)
def reshape(y, a, shape=None, order="C", *, newshape=None, copy=None):
    a_bar += rt.reshape_adjoint(y_bar, a, order=order)


@adjoint("reshape")
def reshape_method(y, a, *shape, order="C", copy=None):
    a_bar += rt.reshape_adjoint(y_bar, a, order=order)


@adjoint(np.ravel)
def ravel(y, a, order="C"):
    a_bar += rt.reshape_adjoint(y_bar, a, order=order)


alias("ravel", np.ravel)
alias("flatten", np.ravel)


@adjoint("view")  # `x.view()`: the same values (a view of another dtype has no rule)
def view(y, a):
    a_bar += y_bar


@adjoint(np.squeeze)
def squeeze(y, a, axis=None):
    a_bar += np.reshape(y_bar, np.shape(a))


alias("squeeze", np.squeeze)


@adjoint(np.expand_dims)
def expand_dims(y, a, axis):
    a_bar += np.reshape(y_bar, np.shape(a))


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd(y, a):
    a_bar += np.reshape(y_bar, np.shape(a))


# -- permuted entries -----------------------------------------------------------------------------
@adjoint(np.transpose)
def transpose(y, a, axes=None):
    a_bar += np.transpose(y_bar, rt.inverse_permutation(axes))


@adjoint("transpose")
def transpose_method(y, a, *axes):
    a_bar += np.transpose(y_bar, rt.inverse_permutation(axes))


@adjoint(Attr("T"))
def T(y, a):
    a_bar += y_bar.T


@adjoint(np.swapaxes)
def swapaxes(y, a, axis1, axis2):
    a_bar += np.swapaxes(y_bar, axis1, axis2)


alias("swapaxes", np.swapaxes)


@adjoint(np.moveaxis)
def moveaxis(y, a, source, destination):
    a_bar += np.moveaxis(y_bar, destination, source)


@adjoint(np.flip)
def flip(y, m, axis=None):
    m_bar += np.flip(y_bar, axis)


@adjoint(np.fliplr)
def fliplr(y, m):
    m_bar += np.fliplr(y_bar)


@adjoint(np.flipud)
def flipud(y, m):
    m_bar += np.flipud(y_bar)


@adjoint(np.sort)
def sort(y, a, axis=-1, kind=None, order=None):
    a_bar += rt.sort_adjoint(y_bar, a, axis)


@adjoint(np.roll)
def roll(y, a, shift, axis=None):
    a_bar += np.roll(y_bar, np.negative(shift), axis)


# -- copies and casts -----------------------------------------------------------------------------
@adjoint(np.copy)
def copy(y, a, order="K"):
    a_bar += y_bar


alias("copy", np.copy)


@adjoint("astype", *([np.astype] if hasattr(np, "astype") else []))
def astype(y, a, dtype):
    a_bar += rt.cast_adjoint(y_bar, y)


@adjoint(np.array, np.asarray, np.asanyarray, np.ascontiguousarray)
def array(y, object, dtype=None, *, ndmin=0):
    object_bar += rt.array_adjoint(y_bar, object, y, ndmin=ndmin)


# -- joining --------------------------------------------------------------------------------------
@adjoint(np.concatenate)
def concatenate(y, arrays, axis=0):
    arrays_bar += rt.concatenate_adjoint(y_bar, arrays, axis)


@adjoint(np.stack)
def stack(y, arrays, axis=0):
    arrays_bar += rt.stack_adjoint(y_bar, arrays, axis)


@adjoint(np.hstack)
def hstack(y, tup):
    tup_bar += rt.hstack_adjoint(y_bar, tup)


@adjoint(np.vstack)
def vstack(y, tup):
    tup_bar += rt.vstack_adjoint(y_bar, tup)


# -- copies of entries ----------------------------------------------------------------------------
@adjoint(np.broadcast_to)
def broadcast_to(y, array, shape):
    array_bar += rt.unbroadcast(y_bar, array)


@adjoint(np.tile)
def tile(y, A, reps):
    A_bar += rt.tile_adjoint(y_bar, A, reps)


@adjoint(np.repeat)
def repeat(y, a, repeats, axis=None):
    a_bar += rt.repeat_adjoint(y_bar, a, repeats, axis)


alias("repeat", np.repeat)


@adjoint(np.diff)
def diff(y, a, n=1, axis=-1, prepend=None, append=None):
    a_bar += rt.diff_parts_adjoint(y_bar, a, n, axis, prepend=prepend, append=append)[0]
    prepend_bar += rt.diff_parts_adjoint(y_bar, a, n, axis, prepend=prepend, append=append)[1]
    append_bar += rt.diff_parts_adjoint(y_bar, a, n, axis, prepend=prepend, append=append)[2]


# -- constructors from values ---------------------------------------------------------------------
# (Constructors from shapes alone, `np.zeros`, `np.eye`, ..., pass no gradient: see nondiff.py.)
@adjoint(np.full)
def full(y, shape, fill_value, dtype=None, order="C"):
    fill_value_bar += rt.fill_adjoint(y_bar, y, fill_value)


@adjoint(np.full_like)
def full_like(y, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    fill_value_bar += rt.fill_adjoint(y_bar, y, fill_value)


@adjoint(np.linspace)
def linspace(y, start, stop, num=50, endpoint=True, *, dtype=None, axis=0):
    start_bar += rt.linspace_start_adjoint(y_bar, start, num, endpoint, axis, dtype)
    stop_bar += rt.linspace_stop_adjoint(y_bar, stop, num, endpoint, axis, dtype)


@adjoint(np.logspace)
def logspace(y, start, stop, num=50, endpoint=True, base=10.0, *, dtype=None, axis=0):
    start_bar += rt.linspace_start_adjoint(rt.logspace_exponent_adjoint(y_bar, y, base, dtype), start, num, endpoint, axis)
    stop_bar += rt.linspace_stop_adjoint(rt.logspace_exponent_adjoint(y_bar, y, base, dtype), stop, num, endpoint, axis)
    base_bar += rt.logspace_base_adjoint(y_bar, y, base, start, stop, num, endpoint, axis, dtype)


@adjoint(np.arange)
def arange(y, start=None, stop=None, step=None, *, dtype=None):
    start_bar += rt.arange_start_adjoint(rt.through_dtype(y_bar, dtype=dtype), stop)
    step_bar += rt.arange_step_adjoint(rt.through_dtype(y_bar, dtype=dtype))

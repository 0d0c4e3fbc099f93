"""Write nodes. The value written gets the gradient of the slots it overwrote (for duplicate
indices, only the write that won; summed over broadcast dimensions); then those slots pass no
gradient to what the array held before. Helpers copy before zeroing: NumPy slices are views.
A value written into an integer or boolean array was truncated (or tested) by NumPy: it gets no
gradient (the helpers read the written array `b2` for its dtype only)."""
import copy

from adjoint_compiler import runtime as rt
from adjoint_compiler.buffer import Buffer
from adjoint_compiler.ir import CHECK_UPDATE, COPYTO, COPYTO_ITEMS, OWN, POSITIONS, SAVE, SETITEM, SHARES, SLOTS_AT
from adjoint_compiler.registry import adjoint, nondifferentiable, tangent


@adjoint(SETITEM)
def setitem(b2, b, idx, v, saved):
    v_bar += rt.unbroadcast(rt.written_adjoint(b2_bar, idx, b2), v)
    b_bar += rt.overwritten_adjoint(b2_bar, idx)


@tangent(SETITEM)
def setitem_dot(b2, b, idx, v, saved):
    b_dot[idx] = rt.stored_tangent(v_dot, b2)


@adjoint(COPYTO)
def copyto(b2, b, src, where, saved):
    src_bar += rt.copied_adjoint(b2_bar, src, where, b2)
    b_bar += rt.overcopied_adjoint(b2_bar, where)


@tangent(COPYTO)
def copyto_dot(b2, b, src, where, saved):
    rt.copyto(b_dot, rt.stored_tangent(src_dot, b2), where)


@adjoint(COPYTO_ITEMS)
def copyto_items(b2, b, items, saved):
    items_bar += rt.items_adjoint(b2_bar, items, b2)
    b_bar += rt.overfilled_adjoint(b2_bar, items)


@tangent(COPYTO_ITEMS)
def copyto_items_dot(b2, b, items, saved):
    rt.copyto_items(b_dot, rt.stored_tangent(items_dot, b2))


@adjoint(OWN, Buffer, copy.copy, rt.own)
def own(y, x):
    x_bar += y_bar


@tangent(OWN, rt.own)  # (rt.own: the copy of a written argument, in a gradient differentiated again)
def own_dot(y, x):
    y_dot = rt.own(x_dot)


@tangent(Buffer)
def buffer_dot(y, x):
    y_dot = rt.Buffer(x_dot)


@tangent(copy.copy)
def copy_copy_dot(y, x):
    y_dot = rt.shallow_copy(x_dot)


nondifferentiable(SAVE, Buffer.zeros.__func__, Buffer.zeros_like.__func__)

nondifferentiable(SHARES, POSITIONS, SLOTS_AT)  # writes through a view: which slots of its base
nondifferentiable(CHECK_UPDATE)  # raises where NumPy's `a op= e` would

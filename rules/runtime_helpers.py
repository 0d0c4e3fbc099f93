"""Rules for the runtime helpers that generated gradients call, so a generated gradient read back as
source is differentiable like any user code (the precondition of higher derivatives).

Most helpers are linear in the cotangent they receive; their adjoints are their transposes
(`unbroadcast` <-> `broadcast_like`, `expand_reduced` <-> `reduce_like`). A bilinear helper
(`dot_left(g, a, b)`, the gradient of `a` in `np.dot(a, b)`) satisfies
<h, dot_left(g, a, b)> = <g, np.dot(h, b)>, which gives both of its adjoints.
Helpers that write into their arguments (`add_at`, `zero_slots`, `copyto`) have no rule here: they
are compiled from their source like user code, or refused with a located error."""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, differentiate_as, nondifferentiable

nondifferentiable(rt.seed, rt.zeros_like, rt.shape_of, rt.broadcast_shape, rt.reduced_size)


@adjoint(rt.sum_to_scalar)
def sum_to_scalar(y, g):
    g_bar += rt.expand_reduced(y_bar, g)


@adjoint(rt.unbroadcast)
def unbroadcast(y, g, x):
    g_bar += rt.broadcast_like(y_bar, g)


@adjoint(rt.broadcast_like)
def broadcast_like(y, h, g):
    h_bar += rt.unbroadcast(y_bar, h)


@adjoint(rt.expand_reduced)
def expand_reduced(y, g, x, axis=None, keepdims=False):
    g_bar += rt.reduce_like(y_bar, g, axis, keepdims)


@adjoint(rt.reduce_like)
def reduce_like(y, h, g, axis=None, keepdims=False):
    h_bar += rt.expand_reduced(y_bar, h, axis, keepdims)


@adjoint(rt.expand_like)
def expand_like(y, g, like):
    g_bar += rt.unbroadcast(y_bar, g)


@adjoint(rt.getitem_adjoint)
def getitem_adjoint(y, g, x, idx):
    g_bar += rt.getitem_transpose(y_bar, g, idx)


@adjoint(rt.getitem_transpose)
def getitem_transpose(y, h, g, idx):
    h_bar += rt.getitem_adjoint(y_bar, h, idx)


@adjoint(rt.accum)
def accum(y, a, b):
    a_bar += rt.unbroadcast(y_bar, a)
    b_bar += rt.unbroadcast(y_bar, b)


@adjoint(rt.chain)
def chain(y, g, d):
    g_bar += rt.unbroadcast(rt.chain(y_bar, d), g)
    d_bar += rt.unbroadcast(y_bar * g, d)


@adjoint(rt.chain_div)
def chain_div(y, g, d):
    g_bar += rt.unbroadcast(rt.chain_div(y_bar, d), g)
    d_bar += rt.unbroadcast(-rt.chain(y_bar, rt.chain_div(y, d)), d)


@adjoint(rt.pow_base_derivative)
def pow_base_derivative(d, x, y):
    x_bar += rt.unbroadcast(rt.chain(d_bar, y * rt.pow_base_derivative(x, y - 1)), x)
    y_bar += rt.unbroadcast(d_bar * (x ** (y - 1) + y * rt.pow_exponent_derivative(x ** (y - 1), x)), y)


@adjoint(rt.pow_exponent_derivative)
def pow_exponent_derivative(d, z, x):
    z_bar += rt.unbroadcast(rt.pow_exponent_derivative(d_bar, x), z)
    x_bar += rt.unbroadcast(rt.chain(d_bar, rt.chain_div(z, x)), x)


@adjoint(rt.dot_left)
def dot_left(y, g, a, b):
    g_bar += np.dot(y_bar, b)
    b_bar += rt.dot_right(g, y_bar, b)


@adjoint(rt.dot_right)
def dot_right(y, g, a, b):
    g_bar += np.dot(a, y_bar)
    a_bar += rt.dot_left(g, a, y_bar)


@adjoint(rt.matmul_left)
def matmul_left(y, g, x, w):
    g_bar += rt.unbroadcast(y_bar @ w, g)
    w_bar += rt.matmul_right(g, y_bar, w)


@adjoint(rt.matmul_right)
def matmul_right(y, g, x, w):
    g_bar += rt.unbroadcast(x @ y_bar, g)
    x_bar += rt.matmul_left(g, x, y_bar)


@adjoint(rt.sum_of_product)
def sum_of_product(s, a, b):
    a_bar += rt.unbroadcast(s_bar * b, a)
    b_bar += rt.unbroadcast(s_bar * a, b)


@adjoint(rt.extremum_adjoint)
def extremum_adjoint(d, g, x, y, axis=None, keepdims=False):
    """Linear in `g`; the shares are piecewise constant in `x` (no gradient to `x` or `y`)."""
    g_bar += rt.extremum_transpose(d_bar, g, x, y, axis, keepdims)


# -- writes: the adjoint helpers of write nodes are linear in the adjoint array they read ----------
@adjoint(rt.save_slots)
def save_slots(y, b, idx=...):
    b_bar += rt.getitem_adjoint(y_bar, b, idx)


@adjoint(rt.written_adjoint)
def written_adjoint(y, g, idx, into=None):
    g_bar += rt.written_transpose(y_bar, g, idx, into)


@adjoint(rt.written_transpose)
def written_transpose(y, h, g, idx, into=None):
    h_bar += rt.unbroadcast(rt.written_adjoint(y_bar, idx, into), h)


@adjoint(rt.written_total)
def written_total(y, g, idx, into=None):
    g_bar += rt.written_total_transpose(y_bar, g, idx, into)


@adjoint(rt.overwritten_adjoint)
def overwritten_adjoint(y, g, idx):
    g_bar += rt.overwritten_adjoint(y_bar, idx)


@adjoint(rt.copied_adjoint)
def copied_adjoint(y, g, src, where=True, into=None):
    g_bar += rt.copied_transpose(y_bar, g, src, where, into)


@adjoint(rt.copied_transpose)
def copied_transpose(y, h, g, src, where=True, into=None):
    h_bar += rt.unbroadcast(rt.copied_adjoint(y_bar, h, where, into), h)


@adjoint(rt.overcopied_adjoint)
def overcopied_adjoint(y, g, where=True):
    g_bar += rt.overcopied_adjoint(y_bar, where)


# -- helpers that update an adjoint array in place are differentiated as the values they compute
@differentiate_as(rt.zero_slots)
def zero_slots(g, idx):
    return rt.overwritten_adjoint(g, idx)


@differentiate_as(rt.add_at)
def add_at(a, idx, g):
    return a + rt.getitem_adjoint(g, a, idx)


@differentiate_as(rt.held)
def held(b):
    return b  # read back as source: `rt.held(b)[idx]` is the read `b[idx]`


@differentiate_as(rt.private)
def private(g):
    return g * 1.0  # a copy: the value it holds


@differentiate_as(rt.total_after_zeroing)
def total_after_zeroing(g, idx, into=None):
    return rt.written_total(rt.overwritten_adjoint(g, idx), Ellipsis, into)


# -- sequences: the gradient of a list is a list (None where an item gets no gradient) -------------
@adjoint(rt.seq_head)
def seq_head(y, g, t):
    g_bar += rt.seq_place(y_bar, g, 0)


@adjoint(rt.seq_tail)
def seq_tail(y, g, t):
    g_bar += rt.seq_place(y_bar, g, len(g) - len(y))


@adjoint(rt.item)
def item(v, g, i, like):
    g_bar += rt.item_transpose(v_bar, g, i)


@adjoint(rt.stack_adjoint)
def stack_adjoint(parts, g, arrays, axis=0):
    g_bar += rt.stack_transpose(parts_bar, g, axis)


@adjoint(rt.items_adjoint)
def items_adjoint(y, g, items, into=None):
    g_bar += rt.items_transpose(y_bar, g, items, into)


@adjoint(rt.overfilled_adjoint)
def overfilled_adjoint(y, g, items):
    g_bar += rt.overfilled_adjoint(y_bar, items)

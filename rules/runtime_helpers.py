"""Rules for the runtime helpers that generated gradients call, so a generated gradient read back as
source is differentiable like any user code (the precondition of higher derivatives).

Most helpers are linear in the cotangent they receive; their adjoints are their transposes
(`unbroadcast` <-> `broadcast_like`, `expand_reduced` <-> `reduce_like`). A bilinear helper
(`dot_left(g, a, b)`, the gradient of `a` in `np.dot(a, b)`) satisfies
<h, dot_left(g, a, b)> = <g, np.dot(h, b)>, which gives both of its adjoints.
Helpers that write into their arguments (`add_at`, `zero_slots`, `copyto`) have no rule here: they
are compiled from their source like user code, or refused with a located error. Each tangent rule
(forward mode, so that `jacfwd(grad(f))` works) is the helper applied to the tangents of the
arguments it is linear in, plus the derivative in the others (`chain`, `pow_base_derivative`)."""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, differentiate_as, nondifferentiable, tangent

nondifferentiable(rt.seed, rt.zeros_like, rt.shape_of, rt.broadcast_shape, rt.reduced_size, rt.refuse_complex,
                  rt.is_repetition, rt.zero_tangent, rt.part_span)
# the write through a value that may be a view (`M = y.reshape(2, 2); M[0] *= 2`): whether it is
# one, and the positions of the base's slots it covers, are integers and booleans
nondifferentiable(rt.shares_memory, rt.positions, rt.slots_at, rt.check_update, rt.numpy_operand, rt.refuse_joining_sum)


@adjoint(rt.sum_to_scalar)
def sum_to_scalar(y, g):
    g_bar += rt.expand_reduced(y_bar, g)


@tangent(rt.sum_to_scalar)
def sum_to_scalar_dot(y, g):
    y_dot = rt.sum_to_scalar(g_dot)


@adjoint(rt.unbroadcast)
def unbroadcast(y, g, x):
    g_bar += rt.broadcast_like(y_bar, g)


@tangent(rt.unbroadcast)
def unbroadcast_dot(y, g, x):
    y_dot = rt.unbroadcast(g_dot, x)


@adjoint(rt.broadcast_like)
def broadcast_like(y, h, g):
    h_bar += rt.unbroadcast(y_bar, h)


@tangent(rt.broadcast_like)
def broadcast_like_dot(y, h, g):
    y_dot = rt.broadcast_like(h_dot, g)


@adjoint(rt.broadcast_number)
def broadcast_number(y, g):
    g_bar += y_bar


@tangent(rt.broadcast_number)
def broadcast_number_dot(y, g):
    y_dot = rt.broadcast_number(g_dot)


@adjoint(rt.expand_reduced)
def expand_reduced(y, g, x, axis=None, keepdims=False):
    g_bar += rt.reduce_like(y_bar, g, axis, keepdims)


@tangent(rt.expand_reduced)
def expand_reduced_dot(y, g, x, axis=None, keepdims=False):
    y_dot = rt.expand_reduced(g_dot, x, axis, keepdims)


@adjoint(rt.reduce_like)
def reduce_like(y, h, g, axis=None, keepdims=False):
    h_bar += rt.expand_reduced(y_bar, h, axis, keepdims)


@tangent(rt.reduce_like)
def reduce_like_dot(y, h, g, axis=None, keepdims=False):
    y_dot = rt.reduce_like(h_dot, g, axis, keepdims)


@adjoint(rt.expand_like)
def expand_like(y, g, like):
    g_bar += rt.unbroadcast(y_bar, g)


@tangent(rt.expand_like)
def expand_like_dot(y, g, like):
    y_dot = rt.expand_like(g_dot, like)


@adjoint(rt.getitem_adjoint)
def getitem_adjoint(y, g, x, idx):
    g_bar += rt.getitem_transpose(y_bar, g, idx)


@tangent(rt.getitem_adjoint)
def getitem_adjoint_dot(y, g, x, idx):
    y_dot = rt.getitem_adjoint(g_dot, x, idx)


@adjoint(rt.item_adjoint)
def item_adjoint(y, g, a, args):
    g_bar += rt.item_tangent(y_bar, args)


@tangent(rt.item_adjoint)
def item_adjoint_dot(y, g, a, args):
    y_dot = rt.item_adjoint(g_dot, a, args)


@adjoint(rt.item_tangent)
def item_tangent(y, t, args):
    t_bar += rt.item_adjoint(y_bar, t, args)


@tangent(rt.item_tangent)
def item_tangent_dot(y, t, args):
    y_dot = rt.item_tangent(t_dot, args)


@adjoint(rt.getitem_transpose)
def getitem_transpose(y, h, g, idx):
    h_bar += rt.getitem_adjoint(y_bar, h, idx)


@tangent(rt.getitem_transpose)
def getitem_transpose_dot(y, h, g, idx):
    y_dot = rt.getitem_transpose(h_dot, g, idx)


@adjoint(rt.accum)
def accum(y, a, b):
    a_bar += rt.unbroadcast(y_bar, a)
    b_bar += rt.unbroadcast(y_bar, b)


@tangent(rt.accum)
def accum_dot(y, a, b):
    y_dot = rt.accum(a_dot, b_dot)


@adjoint(rt.masked)
def masked(y, g, condition, keep=True):
    g_bar += rt.unbroadcast(rt.masked(y_bar, condition, keep), g)


@tangent(rt.masked)
def masked_dot(y, g, condition, keep=True):
    y_dot = rt.masked(g_dot, condition, keep)


# The rules of `chain` and `chain_div` keep their guarantee in every derivative: each product
# has first (`rt.chain`'s guarded operand) the factor that is exactly zero where the path
# contributes nothing, `g` or `y` (zero with it), so a nan or infinite `d`, `d_dot` or cotangent
# there (an untaken branch of `np.where`, differentiated again) gives 0, not nan.
@adjoint(rt.chain)
def chain(y, g, d):
    g_bar += rt.unbroadcast(rt.chain(y_bar, d), g)
    d_bar += rt.unbroadcast(rt.chain(g, y_bar), d)


@tangent(rt.chain)
def chain_dot(y, g, d):
    y_dot = rt.chain(g_dot, d) + rt.chain(g, d_dot)


@adjoint(rt.chain_div)
def chain_div(y, g, d):
    g_bar += rt.unbroadcast(rt.chain_div(y_bar, d), g)
    d_bar += rt.unbroadcast(-rt.chain(rt.chain_div(y, d), y_bar), d)


@tangent(rt.chain_div)
def chain_div_dot(y, g, d):
    y_dot = rt.chain_div(g_dot, d) - rt.chain(rt.chain_div(y, d), d_dot)


@adjoint(rt.pow_base_derivative)
def pow_base_derivative(d, x, y):
    x_bar += rt.unbroadcast(rt.chain(d_bar, rt.pow_derivative(x, y, 2)), x)
    y_bar += rt.unbroadcast(d_bar * (x ** (y - 1) + y * rt.pow_exponent_derivative(x ** (y - 1), x)), y)


@tangent(rt.pow_base_derivative)
def pow_base_derivative_dot(d, x, y):
    d_dot = (rt.chain(x_dot, rt.pow_derivative(x, y, 2))
             + y_dot * (x ** (y - 1) + y * rt.pow_exponent_derivative(x ** (y - 1), x)))


@adjoint(rt.pow_derivative)
def pow_derivative(d, x, y, k):
    x_bar += rt.unbroadcast(rt.chain(d_bar, rt.pow_derivative(x, y, k + 1)), x)
    y_bar += rt.pow_derivative_exponent_gradient(y)


@tangent(rt.pow_derivative)
def pow_derivative_dot(d, x, y, k):
    d_dot = rt.chain(x_dot, rt.pow_derivative(x, y, k + 1)) + rt.pow_derivative_exponent_gradient(y_dot)


@adjoint(rt.pow_exponent_derivative)
def pow_exponent_derivative(d, z, x):
    z_bar += rt.unbroadcast(rt.pow_exponent_derivative(d_bar, x), z)
    x_bar += rt.unbroadcast(rt.chain(d_bar, rt.chain_div(z, x)), x)


@tangent(rt.pow_exponent_derivative)
def pow_exponent_derivative_dot(d, z, x):
    d_dot = rt.pow_exponent_derivative(z_dot, x) + rt.chain(x_dot, rt.chain_div(z, x))


@adjoint(rt.dot_left)
def dot_left(y, g, a, b):
    g_bar += np.dot(y_bar, b)
    b_bar += rt.dot_right(g, y_bar, b)


@tangent(rt.dot_left)
def dot_left_dot(y, g, a, b):
    y_dot = rt.dot_left(g_dot, a, b) + rt.dot_left(g, a, b_dot)


@adjoint(rt.dot_right)
def dot_right(y, g, a, b):
    g_bar += np.dot(a, y_bar)
    a_bar += rt.dot_left(g, a, y_bar)


@tangent(rt.dot_right)
def dot_right_dot(y, g, a, b):
    y_dot = rt.dot_right(g_dot, a, b) + rt.dot_right(g, a_dot, b)


@adjoint(rt.matmul_left)
def matmul_left(y, g, x, w):
    g_bar += rt.unbroadcast(y_bar @ w, g)
    w_bar += rt.matmul_right(g, y_bar, w)


@tangent(rt.matmul_left)
def matmul_left_dot(y, g, x, w):
    y_dot = rt.matmul_left(g_dot, x, w) + rt.matmul_left(g, x, w_dot)


@adjoint(rt.matmul_right)
def matmul_right(y, g, x, w):
    g_bar += rt.unbroadcast(x @ y_bar, g)
    x_bar += rt.matmul_left(g, x, y_bar)


@tangent(rt.matmul_right)
def matmul_right_dot(y, g, x, w):
    y_dot = rt.matmul_right(g_dot, x, w) + rt.matmul_right(g, x_dot, w)


@adjoint(rt.sum_of_product)
def sum_of_product(s, a, b):
    a_bar += rt.unbroadcast(s_bar * b, a)
    b_bar += rt.unbroadcast(s_bar * a, b)


@tangent(rt.sum_of_product)
def sum_of_product_dot(s, a, b):
    s_dot = rt.sum_of_product(a_dot, b) + rt.sum_of_product(a, b_dot)


@adjoint(rt.extremum_adjoint)
def extremum_adjoint(d, g, x, y, axis=None, keepdims=False):
    """Linear in `g`; the shares are piecewise constant in `x` (no gradient to `x` or `y`)."""
    g_bar += rt.extremum_transpose(d_bar, g, x, y, axis, keepdims)


@tangent(rt.extremum_adjoint)
def extremum_adjoint_dot(d, g, x, y, axis=None, keepdims=False):
    d_dot = rt.extremum_adjoint(g_dot, x, y, axis, keepdims)


# -- writes: the adjoint helpers of write nodes are linear in the adjoint array they read ----------
@adjoint(rt.save_slots)
def save_slots(y, b, idx=...):
    b_bar += rt.getitem_adjoint(y_bar, b, idx)


@tangent(rt.save_slots)
def save_slots_dot(y, b, idx=...):
    y_dot = rt.save_slots(b_dot, idx)


@adjoint(rt.written_adjoint)
def written_adjoint(y, g, idx, into=None):
    g_bar += rt.written_transpose(y_bar, g, idx, into)


@tangent(rt.written_adjoint)
def written_adjoint_dot(y, g, idx, into=None):
    y_dot = rt.written_adjoint(g_dot, idx, into)


@adjoint(rt.written_transpose)
def written_transpose(y, h, g, idx, into=None):
    h_bar += rt.unbroadcast(rt.written_adjoint(y_bar, idx, into), h)


@tangent(rt.written_transpose)
def written_transpose_dot(y, h, g, idx, into=None):
    y_dot = rt.written_transpose(h_dot, g, idx, into)


@adjoint(rt.written_total)
def written_total(y, g, idx, into=None):
    g_bar += rt.written_total_transpose(y_bar, g, idx, into)


@tangent(rt.written_total)
def written_total_dot(y, g, idx, into=None):
    y_dot = rt.written_total(g_dot, idx, into)


@adjoint(rt.overwritten_adjoint)
def overwritten_adjoint(y, g, idx):
    g_bar += rt.overwritten_adjoint(y_bar, idx)


@tangent(rt.overwritten_adjoint)
def overwritten_adjoint_dot(y, g, idx):
    y_dot = rt.overwritten_adjoint(g_dot, idx)


@adjoint(rt.copied_adjoint)
def copied_adjoint(y, g, src, where=True, into=None):
    g_bar += rt.copied_transpose(y_bar, g, src, where, into)


@tangent(rt.copied_adjoint)
def copied_adjoint_dot(y, g, src, where=True, into=None):
    y_dot = rt.copied_adjoint(g_dot, src, where, into)


@adjoint(rt.copied_transpose)
def copied_transpose(y, h, g, src, where=True, into=None):
    h_bar += rt.unbroadcast(rt.copied_adjoint(y_bar, h, where, into), h)


@tangent(rt.copied_transpose)
def copied_transpose_dot(y, h, g, src, where=True, into=None):
    y_dot = rt.copied_transpose(h_dot, g, src, where, into)


@adjoint(rt.overcopied_adjoint)
def overcopied_adjoint(y, g, where=True):
    g_bar += rt.overcopied_adjoint(y_bar, where)


@tangent(rt.overcopied_adjoint)
def overcopied_adjoint_dot(y, g, where=True):
    y_dot = rt.overcopied_adjoint(g_dot, where)


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
@adjoint(rt.like_sequence)
def like_sequence(y, g, x):
    g_bar += rt.sequence_items(y_bar, g)


@tangent(rt.like_sequence)
def like_sequence_dot(y, g, x):
    y_dot = rt.like_sequence(g_dot, x)


@adjoint(rt.sequence_items)
def sequence_items(y, h, g):
    h_bar += rt.like_sequence(y_bar, h)


@tangent(rt.sequence_items)
def sequence_items_dot(y, h, g):
    y_dot = rt.sequence_items(h_dot, g)


@adjoint(rt.extended)
def extended(z, x, y):  # (`xs += ys`: the adjoint of `xs + ys`)
    x_bar += rt.seq_head(z_bar, y)
    y_bar += rt.seq_tail(z_bar, y)


@tangent(rt.extended)
def extended_dot(z, x, y):
    z_dot = rt.seq_concat(x_dot, y_dot)


@adjoint(rt.seq_head)
def seq_head(y, g, t):
    g_bar += rt.seq_place(y_bar, g, 0)


@tangent(rt.seq_head)
def seq_head_dot(y, g, t):
    y_dot = rt.seq_head(g_dot, t)


@adjoint(rt.seq_tail)
def seq_tail(y, g, t):
    g_bar += rt.seq_place(y_bar, g, len(g) - len(y))


@tangent(rt.seq_tail)
def seq_tail_dot(y, g, t):
    y_dot = rt.seq_tail(g_dot, t)


# `+` and `*` of values that may be lists or tuples (ir.PLUS, ir.TIMES): linear in the cotangent,
# their transposes in pairs; the operands tell which operation ran (none gets a gradient here).
@adjoint(rt.plus_adjoint)
def plus_adjoint(v, g, x, y, which):
    g_bar += rt.plus_adjoint_transpose(v_bar, g, x, y, which)


@tangent(rt.plus_adjoint)
def plus_adjoint_dot(v, g, x, y, which):
    v_dot = rt.plus_adjoint(g_dot, x, y, which)


@adjoint(rt.plus_adjoint_transpose)
def plus_adjoint_transpose(w, h, g, x, y, which):
    h_bar += rt.plus_adjoint(w_bar, x, y, which)


@tangent(rt.plus_adjoint_transpose)
def plus_adjoint_transpose_dot(w, h, g, x, y, which):
    w_dot = rt.plus_adjoint_transpose(h_dot, g, x, y, which)


@adjoint(rt.repetition_adjoint)
def repetition_adjoint(v, g, x, y, which):
    g_bar += rt.repetition_transpose(v_bar, g, x, y, which)


@tangent(rt.repetition_adjoint)
def repetition_adjoint_dot(v, g, x, y, which):
    v_dot = rt.repetition_adjoint(g_dot, x, y, which)


@adjoint(rt.repetition_transpose)
def repetition_transpose(w, h, g, x, y, which):
    h_bar += rt.repetition_adjoint(w_bar, x, y, which)


@tangent(rt.repetition_transpose)
def repetition_transpose_dot(w, h, g, x, y, which):
    w_dot = rt.repetition_transpose(h_dot, g, x, y, which)


@differentiate_as(rt.times_adjoint)
def times_adjoint(g, x, y, which):
    if rt.is_repetition(x, y):
        return rt.repetition_adjoint(g, x, y, which)
    if which == 0:
        return rt.unbroadcast(g * y, x)
    return rt.unbroadcast(g * x, y)


@differentiate_as(rt.plus_tangent)
def plus_tangent(x_dot, y_dot, z):
    if isinstance(z, (list, tuple)):
        return x_dot + y_dot
    return rt.broadcast_tangent(x_dot + y_dot, z)


@adjoint(rt.sort_adjoint)
def sort_adjoint(v, g, a, axis=-1):
    g_bar += rt.sort_transpose(v_bar, a, axis)


@tangent(rt.sort_adjoint)
def sort_adjoint_dot(v, g, a, axis=-1):
    v_dot = rt.sort_adjoint(g_dot, a, axis)


@adjoint(rt.sort_transpose)
def sort_transpose(w, h, a, axis=-1):
    h_bar += rt.sort_adjoint(w_bar, a, axis)


@tangent(rt.sort_transpose)
def sort_transpose_dot(w, h, a, axis=-1):
    w_dot = rt.sort_transpose(h_dot, a, axis)


@adjoint(rt.item)
def item(v, g, i, like):
    g_bar += rt.item_transpose(v_bar, g, i)


@tangent(rt.item)
def item_dot(v, g, i, like):
    v_dot = rt.item(g_dot, i, like)


@adjoint(rt.stack_adjoint)
def stack_adjoint(parts, g, arrays, axis=0):
    g_bar += rt.stack_transpose(parts_bar, g, axis)


@tangent(rt.stack_adjoint)
def stack_adjoint_dot(parts, g, arrays, axis=0):
    parts_dot = rt.stack_adjoint(g_dot, arrays, axis)


@adjoint(rt.items_adjoint)
def items_adjoint(y, g, items, into=None):
    g_bar += rt.items_transpose(y_bar, g, items, into)


@tangent(rt.items_adjoint)
def items_adjoint_dot(y, g, items, into=None):
    y_dot = rt.items_adjoint(g_dot, items, into)


@adjoint(rt.overfilled_adjoint)
def overfilled_adjoint(y, g, items):
    g_bar += rt.overfilled_adjoint(y_bar, items)


@tangent(rt.overfilled_adjoint)
def overfilled_adjoint_dot(y, g, items):
    y_dot = rt.overfilled_adjoint(g_dot, items)


@adjoint(rt.einsum_adjoint)
def einsum_adjoint(grads, g, args):
    parts = rt.einsum_adjoint_transpose(grads_bar, g, args)
    g_bar += parts[0]
    args_bar += parts[1]


@tangent(rt.einsum_adjoint)
def einsum_adjoint_dot(grads, g, args):
    grads_dot = rt.einsum_adjoint_g_tangent(g_dot, args) + rt.einsum_adjoint_args_tangent(g, args, args_dot)


@adjoint(rt.array_adjoint)
def array_adjoint(h, g, obj, dtype=None, ndmin=0):
    """Linear in `g`; `obj` is read for its structure and dtypes only (no gradient)."""
    g_bar += rt.array_adjoint_transpose(h_bar, g, obj, dtype, ndmin)


@tangent(rt.array_adjoint)
def array_adjoint_dot(h, g, obj, dtype=None, ndmin=0):
    h_dot = rt.array_adjoint(g_dot, obj, dtype, ndmin)


@adjoint(rt.cast_adjoint)
def cast_adjoint(h, g, dtype, x=None):
    """Linear in `g` and its own transpose; `x` is read for its dtype only (no gradient)."""
    g_bar += rt.cast_adjoint(h_bar, dtype, x)


@tangent(rt.cast_adjoint)
def cast_adjoint_dot(h, g, dtype, x=None):
    h_dot = rt.cast_adjoint(g_dot, dtype, x)


@adjoint(rt.det_adjoint)
def det_adjoint(d, g, y, a):
    parts = rt.det_adjoint_transpose(d_bar, g, y, a)
    g_bar += parts[0]
    y_bar += parts[1]
    a_bar += parts[2]


@tangent(rt.det_adjoint)
def det_adjoint_dot(d, g, y, a):
    d_dot = rt.det_adjoint_tangent(g_dot, y_dot, a_dot, g, y, a)


@adjoint(rt.slogdet_adjoint)
def slogdet_adjoint(d, g, a):
    parts = rt.slogdet_adjoint_transpose(d_bar, g, a)
    g_bar += parts[0]
    a_bar += parts[1]


@tangent(rt.slogdet_adjoint)
def slogdet_adjoint_dot(d, g, a):
    d_dot = rt.slogdet_adjoint_tangent(g_dot, a_dot, g, a)


@adjoint(rt.array_adjoint_transpose)
def array_adjoint_transpose(a, h, g, obj, dtype=None, ndmin=0):
    """Linear in `h`, the transpose of `array_adjoint`: its own transpose is `array_adjoint`."""
    h_bar += rt.array_adjoint(a_bar, obj, dtype, ndmin)


@tangent(rt.array_adjoint_transpose)
def array_adjoint_transpose_dot(a, h, g, obj, dtype=None, ndmin=0):
    a_dot = rt.array_adjoint_transpose(h_dot, g, obj, dtype, ndmin)

"""Reads by index and the tuple/list displays."""
import operator

import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.activity import IndexOf
from adjoint_compiler.ir import BUILD_LIST, BUILD_TUPLE, CONCAT, DROP, PLUS, PUSH, REPEAT, TIMES, TOP
from adjoint_compiler.registry import adjoint, nondifferentiable, tangent


@adjoint(operator.getitem)
def getitem(y, x, idx):
    x_bar += rt.getitem_adjoint(y_bar, x, idx)


@tangent(operator.getitem)
def getitem_dot(y, x, idx):
    y_dot = x_dot[idx]


@adjoint(BUILD_TUPLE, BUILD_LIST)
def build(y, *items):
    items_bar += y_bar


@tangent(BUILD_TUPLE)
def build_tuple_dot(y, *items):
    y_dot = (*items_dot,)


@tangent(BUILD_LIST)
def build_list_dot(y, *items):
    y_dot = [*items_dot]


@adjoint("item")
def item(y, a, *args):
    a_bar += rt.item_adjoint(y_bar, a, args)


@tangent("item")
def item_dot(y, a, *args):
    y_dot = rt.item_tangent(a_dot, args)


@adjoint(CONCAT)
def concat(z, x, y):
    x_bar += rt.seq_head(z_bar, y)
    y_bar += rt.seq_tail(z_bar, y)


@tangent(CONCAT)
def concat_dot(z, x, y):
    z_dot = rt.seq_concat(x_dot, y_dot)


# A list used as a stack, updated in place (`stacks.py`): one tangent push or drop per push or
# drop, O(1) each, where `xs + [v]` and `xs[:-1]` copy the list and its tangent. In reverse mode
# (a list only pushed and popped) its adjoint is a cotangent stack (`rt.stack_cons`): the adjoint
# of a pop pushes the popped item's cotangent, the adjoint of a push pops it.
@adjoint(PUSH)
def push(ys, xs, items):
    items_bar += rt.stack_items(ys_bar)
    xs_bar += rt.stack_rest(ys_bar)


@tangent(PUSH)
def push_dot(ys, xs, items):
    ys_dot = rt.push(xs_dot, items_dot)


@adjoint(DROP)
def drop(ys, xs):
    xs_bar += rt.stack_cons(None, ys_bar)


@tangent(DROP)
def drop_dot(ys, xs):
    ys_dot = rt.drop(xs_dot)


@adjoint(TOP)
def top(y, xs):
    xs_bar += rt.stack_cons(y_bar, None)


@tangent(TOP)
def top_dot(y, xs):
    y_dot = rt.top(xs_dot)


@adjoint(REPEAT)
def repeat(z, x, n):
    x_bar += rt.seq_repeat_adjoint(z_bar, x, n)
    n_bar += rt.seq_repeat_count_adjoint(z_bar, x, n)


@tangent(REPEAT)
def repeat_dot(z, x, n):
    z_dot = x_dot * n + n_dot * x  # (an integer count has no tangent: the second term is dropped)


# `x + y`, `x * y` of values that may or may not be lists or tuples (ir.PLUS, ir.TIMES): the
# helpers ask the operands which operation ran.
@adjoint(PLUS)
def plus(z, x, y):
    x_bar += rt.plus_adjoint(z_bar, x, y, 0)
    y_bar += rt.plus_adjoint(z_bar, x, y, 1)


@tangent(PLUS)
def plus_dot(z, x, y):
    z_dot = rt.plus_tangent(x_dot, y_dot, z)


@adjoint(TIMES)
def times(z, x, y):
    x_bar += rt.times_adjoint(z_bar, x, y, 0)
    y_bar += rt.times_adjoint(z_bar, x, y, 1)


@tangent(TIMES)
def times_dot(z, x, y):
    z_dot = x_dot * y + x * y_dot  # (as REPEAT's: a count has no tangent; else the product rule)


# `np.r_[a, b, 0.0, 1:3]`, `np.c_[a, b]`: joined arrays, numbers and constant slices (a string
# directive, a slice with varied bounds or an index held in a variable is refused in activity).
@adjoint(IndexOf(np.r_), IndexOf(np.c_))
def concatenator(y, obj, *items):
    items_bar += rt.concatenator_adjoint(y_bar, obj, items)


@tangent(IndexOf(np.r_), IndexOf(np.c_))
def concatenator_dot(y, obj, *items):
    y_dot = rt.concatenator_tangent(obj, items, items_dot)


# (The integer scalar types, `np.int64(k)`, are casts: their rules are in arithmetic.py.)

"""Python operators and the scalar builtins. Every binary rule undoes broadcasting."""
import math
import operator

import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.ir import SQUARE
from adjoint_compiler.registry import adjoint, nondifferentiable, tangent


@adjoint(operator.add)
def add(z, x, y):
    x_bar += rt.unbroadcast(z_bar, x)
    y_bar += rt.unbroadcast(z_bar, y)


@tangent(operator.add)
def add_dot(z, x, y):
    z_dot = rt.broadcast_tangent(x_dot + y_dot, z)


@adjoint(operator.sub)
def sub(z, x, y):
    x_bar += rt.unbroadcast(z_bar, x)
    y_bar += rt.unbroadcast(-z_bar, y)


@tangent(operator.sub)
def sub_dot(z, x, y):
    z_dot = rt.broadcast_tangent(x_dot - y_dot, z)


@adjoint(operator.mul)
def mul(z, x, y):  # plain products (a call per product costs 3x in scalar loops): 0 * inf stays nan
    x_bar += rt.unbroadcast(z_bar * y, x)
    y_bar += rt.unbroadcast(z_bar * x, y)


@tangent(operator.mul)
def mul_dot(z, x, y):
    z_dot = x_dot * y + x * y_dot


@adjoint(SQUARE)
def square(y, x):
    x_bar += rt.chain(y_bar, 2.0 * x)  # (as `x ** 2`: 0 where y_bar is, x nan or not)


@tangent(SQUARE)
def square_dot(y, x):
    y_dot = rt.chain(x_dot, 2.0 * x)


@adjoint(operator.truediv)
def truediv(z, x, y):
    x_bar += rt.unbroadcast(rt.chain_div(z_bar, y), x)
    y_bar += rt.unbroadcast(rt.chain(z_bar, -z / y), y)


@tangent(operator.truediv)
def truediv_dot(z, x, y):
    z_dot = rt.chain_div(x_dot, y) - rt.chain(y_dot, z / y)


@adjoint(operator.pow)
def pow(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, rt.pow_base_derivative(x, y)), x)
    y_bar += rt.unbroadcast(rt.chain(z_bar, rt.pow_exponent_derivative(z, x)), y)


@tangent(operator.pow)
def pow_dot(z, x, y):
    z_dot = rt.chain(x_dot, rt.pow_base_derivative(x, y)) + rt.chain(y_dot, rt.pow_exponent_derivative(z, x))


@adjoint(operator.mod)
def mod(z, x, y):
    x_bar += rt.unbroadcast(z_bar, x)
    y_bar += rt.unbroadcast(-z_bar * np.floor_divide(x, y), y)


@tangent(operator.mod)
def mod_dot(z, x, y):
    z_dot = rt.broadcast_tangent(x_dot - y_dot * np.floor_divide(x, y), z)


@adjoint(operator.matmul)
def matmul(z, x, y):
    x_bar += rt.matmul_left(z_bar, x, y)
    y_bar += rt.matmul_right(z_bar, x, y)


@tangent(operator.matmul)
def matmul_dot(z, x, y):
    z_dot = x_dot @ y + x @ y_dot


@adjoint(operator.neg)
def neg(y, x):
    x_bar += -y_bar


@tangent(operator.neg)
def neg_dot(y, x):
    y_dot = -x_dot


@adjoint(operator.pos)
def pos(y, x):
    x_bar += y_bar


@tangent(operator.pos)
def pos_dot(y, x):
    y_dot = +x_dot


# Piecewise constant or boolean: no gradient.
nondifferentiable(operator.floordiv, operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                  operator.ne, operator.is_, operator.is_not, operator.not_, operator.invert,
                  operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift)


# -- builtins -------------------------------------------------------------------------------------
# `abs` and `pow` share the rules of np.abs and `**` (see ufuncs.py).

@adjoint(float, np.float64, np.float32, np.float16, np.longdouble)
def to_float(y, x):
    x_bar += y_bar


@tangent(float, np.float64, np.float32, np.float16, np.longdouble)
def to_float_dot(y, x):
    y_dot = rt.cast_tangent(x_dot, y)


# Casts to integers: an integer keeps its value and its gradient (as through `k * 1.0`); a float
# made an integer is piecewise constant, no gradient (`rt.cast_adjoint`). Casts to booleans: none.
@adjoint(np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
def to_integer(y, x):
    x_bar += rt.cast_adjoint(y_bar, np.int64, x)


@tangent(np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
def to_integer_dot(y, x):
    y_dot = rt.cast_adjoint(x_dot, np.int64, x)


nondifferentiable(np.bool_)


@adjoint(sum)
def builtin_sum(y, iterable, start=0):
    iterable_bar += rt.sum_items_adjoint(y_bar, iterable, start)
    start_bar += rt.unbroadcast(y_bar, start)


@tangent(sum)
def builtin_sum_dot(y, iterable, start=0):
    y_dot = rt.broadcast_tangent(rt.sum_start_tangent(start_dot, start) + sum(iterable_dot), y)


@adjoint(math.fsum)
def fsum(y, iterable):
    iterable_bar += rt.sum_items_adjoint(y_bar, iterable)


@tangent(math.fsum)
def fsum_dot(y, iterable):
    y_dot = math.fsum(iterable_dot)


@adjoint(math.prod)
def math_prod(y, iterable, *, start=1):
    iterable_bar += rt.product_items_adjoint(y_bar, iterable, start)


@tangent(math.prod)
def math_prod_dot(y, iterable, *, start=1):
    y_dot = rt.product_items_tangent(iterable_dot, iterable, start)


@adjoint(max, min)
def builtin_max(y, *args):
    args_bar += rt.extremum_args_adjoint(y_bar, y, args)


@tangent(max, min)
def builtin_max_dot(y, *args):
    y_dot = rt.extremum_args_tangent(y, args, args_dot)


@adjoint(tuple, list)
def to_sequence(y, x):
    x_bar += rt.like_sequence(y_bar, x)


@tangent(tuple)
def to_tuple_dot(y, x):
    y_dot = tuple(x_dot)


@tangent(list)
def to_list_dot(y, x):
    y_dot = list(x_dot)

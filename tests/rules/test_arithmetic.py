"""Finite-difference tests of the operators and the builtins (rules/arithmetic.py)."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads


def a_add(x, y, w): return np.sum((x + y) * w)
def a_sub(x, y, w): return np.sum((x - y) * w)
def a_mul(x, y, w): return np.sum((x * y) * w)
def a_div(x, y, w): return np.sum((x / y) * w)
def a_pow(x, y, w): return np.sum((x ** y) * w)
def a_mod(x, y, w): return np.sum((x % y) * w)
def a_neg(x, y, w): return np.sum(-x * w + y)
def a_pos(x, y, w): return np.sum(+x * w * y)
def a_builtin_pow(x, y, w): return np.sum(pow(x, y) * w)


BINARY = [a_add, a_sub, a_mul, a_div, a_pow, a_mod, a_neg, a_pos, a_builtin_pow]
PAIRS = {"scalars": ((), ()), "vectors": ((5,), (5,)), "matrices": ((3, 4), (3, 4)),
         "column_row": ((3, 1), (4,)), "matrix_scalar": ((3, 4), ()), "scalar_matrix": ((), (3, 4))}


@pytest.mark.parametrize("shapes", PAIRS.values(), ids=PAIRS.keys())
@pytest.mark.parametrize("f", BINARY, ids=[f.__name__ for f in BINARY])
def test_operator(f, shapes):
    rng = np.random.default_rng(12)
    if f is a_mod:
        x, y = rng.uniform(2.1, 3.9, shapes[0]), rng.uniform(0.7, 0.8, shapes[1])
    else:
        x, y = rng.uniform(0.5, 2.0, shapes[0]), rng.uniform(0.5, 2.0, shapes[1])
    x, y = (float(v) if v.ndim == 0 else v for v in (x, y))
    w = rng.standard_normal(np.broadcast_shapes(*shapes))
    check_grads(f, x, y, float(w) if w.ndim == 0 else w, wrt=(0, 1))


def a_matmul(x, y, w): return np.sum((x @ y) * w)


@pytest.mark.parametrize("sx,sy,sw", [((3, 4), (4, 2), (3, 2)), ((4,), (4,), ()), ((3, 4), (4,), (3,)),
                                      ((4,), (4, 2), (2,)), ((2, 3, 4), (4, 5), (2, 3, 5))])
def test_matmul_operator(sx, sy, sw):
    rng = np.random.default_rng(13)
    w = rng.standard_normal(sw)
    check_grads(a_matmul, rng.standard_normal(sx), rng.standard_normal(sy), float(w) if sw == () else w,
                wrt=(0, 1))


# -- builtins -------------------------------------------------------------------------------------

def b_float(x): return float(x) * 2.5 + x
def b_float_array(x): return float(x[1]) * x[0]
def b_float64(x): return np.float64(x) * x
def b_sum_array(x, w): return np.sum(sum(x) * w)
def b_sum_list(x, w): return np.sum(sum([x, x * x, np.sin(x)]) * w)
def b_sum_tuple_scalars(x, w): return sum((x[0], x[1] * x[2], 1.0)) * w
def b_sum_start(x, w): return np.sum(sum([x, x * x], x[0]) * w)
def b_max2(x, w): return max(x[0], x[1]) * w
def b_min3(x, w): return min(x[0] * 2.0, x[1], x[2] + 1.0) * w
def b_max_list(x, w): return max([x[0], x[1] * x[1], x[2]]) * w
def b_min_array(x, w): return min(x) * w
def b_abs(x, w): return abs(x[0]) * w + abs(x[1] - 3.0)


BUILTINS = [(b_sum_array, (3, 4), (4,)), (b_sum_array, (5,), ()), (b_sum_list, (3, 4), (3, 4)),
            (b_sum_list, (), ()), (b_sum_tuple_scalars, (3,), ()), (b_sum_start, (3,), (3,)),
            (b_max2, (2,), ()), (b_min3, (3,), ()), (b_max_list, (3,), ()), (b_min_array, (4,), ()),
            (b_abs, (2,), ())]


@pytest.mark.parametrize("f,sx,sw", BUILTINS, ids=[f"{f.__name__}-{sx}" for f, sx, _ in BUILTINS])
def test_builtin(f, sx, sw):
    rng = np.random.default_rng(14)
    x = rng.standard_normal(sx) if sx else float(rng.standard_normal())
    w = rng.standard_normal(sw) if sw else float(rng.standard_normal())
    check_grads(f, x, w)


def test_float():
    check_grads(b_float, 0.7)
    check_grads(b_float_array, np.array([0.3, -1.2]))
    check_grads(b_float64, 0.7)


def b_max_scalars(x, y): return max(x, y)
def b_min_scalars(x, y, z): return min(x, y, z)


def test_builtin_max_min_ties_split_equally():
    assert grad(b_max_scalars, (0, 1))(2.0, 2.0) == (0.5, 0.5)
    assert grad(b_max_scalars, (0, 1))(3.0, 2.0) == (1.0, 0.0)
    g = grad(b_min_scalars, (0, 1, 2))(1.0, 1.0, 1.0)
    np.testing.assert_allclose(g, (1 / 3, 1 / 3, 1 / 3))


@pytest.mark.parametrize("sx, sy", [((7,), (7,)), ((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), ()), ((5,), ())])
def test_sum_of_product_helper_matches_the_sum(sx, sy):
    """rt.sum_of_product (the gradient of a scalar factor) equals np.sum(a * b) for every shape pair,
    dot product or not; and a scalar factor's gradient through it matches finite differences."""
    from adjoint_compiler import runtime as rt
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(sx), rng.standard_normal(sy)
    np.testing.assert_allclose(rt.sum_of_product(a, b), np.sum(a * b), rtol=1e-12)
    np.testing.assert_allclose(rt.sum_of_product(np.arange(4), np.arange(4.0)), 14.0)

    def f(k, a, b):
        return np.sum((k * a) * b)
    check_grads(f, 0.7, a, b, wrt=0)

"""Constructors from values (rules/shape.py): `np.full`, `np.full_like`, `np.linspace`,
`np.arange` pass their values' gradients, in positional and keyword spellings, over scalar,
vector and broadcast shapes; constructors from shapes alone stay constant."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads

W6 = np.linspace(-1.0, 2.0, 6)
W23 = np.arange(6.0).reshape(2, 3) - 2.5


def c_full(s): return np.sum(np.full(3, s) ** 2 * W6[:3])
def c_full_kw(s): return np.sum(np.full(shape=(2, 3), fill_value=s) * W23)
def c_full_row(r): return np.sum(np.full((2, 3), r) ** 2 * W23)  # a row broadcast over 2 rows
def c_full_column(c): return np.sum(np.sin(np.full((2, 3), c[:, None])) * W23)
def c_full_dtype(s): return np.sum(np.full(3, s, dtype=np.float64) * W6[:3]) + s
def c_full_int(s): return np.sum(np.full(3, s, dtype=int) * W6[:3]) + s * s
def c_full_like(a): return np.sum(np.full_like(a, a[0]) * a)
def c_full_like_kw(a): return np.sum(np.full_like(a, fill_value=a.sum()) ** 2)
def c_full_like_int(a): return np.sum(np.full_like(np.zeros(3, dtype=int), a[1]) * a)
def c_full_like_shape(a): return np.sum(np.full_like(a, a[2] * 2.0, shape=(2, 2)) ** 2)


@pytest.mark.parametrize("f,x", [(c_full, 1.5), (c_full_kw, -0.7), (c_full_row, np.array([0.5, -1.0, 2.0])),
                                 (c_full_column, np.array([0.3, 1.1])), (c_full_dtype, 0.4),
                                 (c_full_int, 1.3), (c_full_like, np.array([1.0, 2.0, 3.0])),
                                 (c_full_like_kw, np.array([0.5, -1.0, 2.0])),
                                 (c_full_like_int, np.array([0.5, 1.7, 2.0])),
                                 (c_full_like_shape, np.array([0.5, 1.7, 2.0]))])
def test_full(f, x):
    check_grads(f, x)


def c_linspace(a): return np.sum(np.linspace(a, 2 * a, 5) ** 2)
def c_linspace_endpoint(a): return np.sum(np.linspace(0.0, a, 5, endpoint=False) ** 2)
def c_linspace_num_kw(a, b): return np.sum(np.sin(np.linspace(start=a, stop=b, num=7)) * np.arange(7.0))
def c_linspace_one(a, b): return np.sum(np.linspace(a, b, 1) * 3.0) + np.sum(np.linspace(a, b, num=1, endpoint=False))
def c_linspace_two(a, b): return np.sum(np.linspace(a, b, 2) ** 3)
def c_linspace_arrays(a, b): return np.sum(np.linspace(a, b, 4) ** 2 * np.arange(4.0)[:, None])
def c_linspace_axis(a, b): return np.sum(np.linspace(a, b, 4, axis=1) ** 2 * np.arange(4.0))
def c_linspace_axis_neg(a, b): return np.sum(np.cos(np.linspace(a, b, 3, endpoint=False, axis=-1)) * W6[:3])
def c_linspace_broadcast(a, b): return np.sum(np.linspace(a, b, 3) ** 2 * np.arange(3.0)[:, None, None])
def c_linspace_int(a, b): return np.sum(np.linspace(a, b, 4, dtype=int) * 1.0) + a * b


@pytest.mark.parametrize("f,args", [
    (c_linspace, (1.5,)), (c_linspace_endpoint, (1.5,)), (c_linspace_num_kw, (0.3, 2.1)),
    (c_linspace_one, (0.3, 2.1)), (c_linspace_two, (-0.4, 1.1)),
    (c_linspace_arrays, (np.array([0.0, 1.0, -2.0]), np.array([2.0, 3.0, 0.5]))),
    (c_linspace_axis, (np.array([0.0, 1.0, -2.0]), 2.5)),
    (c_linspace_axis_neg, (0.7, np.array([0.0, 1.0]))),
    (c_linspace_broadcast, (np.array([[0.0], [1.0]]), np.array([2.0, 3.0, 0.5]))),
    (c_linspace_int, (0.3, 5.6))])
def test_linspace(f, args):
    check_grads(f, *args, wrt=tuple(range(len(args))))


def c_arange_start(x0): return np.sum(np.arange(x0, 5.0) ** 2)
def c_arange_step(h): return np.sum(np.arange(0, 3, h))
def c_arange_step_kw(h): return np.sum(np.arange(0.5, 3.0, step=h) ** 2)
def c_arange_all(a, h): return np.sum(np.sin(np.arange(a, a + 2.0, h)))
def c_arange_keywords(a): return np.sum(np.arange(start=a, stop=4.0) ** 2)
def c_arange_stop_only(b): return np.sum(np.arange(b) * b) + np.sum(np.arange(stop=b)) * b
def c_arange_constant(h): return np.sum(np.arange(0.0, 1.0, 0.25) * h)
def c_arange_int(a): return np.sum(np.arange(a, 6.0, dtype=int) * a)


@pytest.mark.parametrize("f,args", [(c_arange_start, (0.3,)), (c_arange_step, (0.7,)),
                                    (c_arange_step_kw, (0.35,)), (c_arange_all, (0.2, 0.3)),
                                    (c_arange_keywords, (1.2,)), (c_arange_stop_only, (4.5,)),
                                    (c_arange_constant, (0.3,)), (c_arange_int, (0.6,))])
def test_arange(f, args):
    check_grads(f, *args, wrt=tuple(range(len(args))))


def c_shape_only(x): return np.sum((np.zeros(3) + np.ones(3) + np.eye(3)[0] + np.zeros_like(x)) * x)


def test_constructors_from_shapes_are_constant():
    check_grads(c_shape_only, np.array([0.5, 1.0, 2.0]))


def test_full_gradient_counts_every_entry():
    # d/ds sum(full((2, 3), s)) = 6: one per entry filled
    assert grad(lambda_free_full)(0.7) == pytest.approx(6.0)


def lambda_free_full(s): return np.sum(np.full((2, 3), s))


def c_logspace(a, b): return np.sum(np.logspace(a, b, 4) * np.arange(4.0))
def c_logspace_kw(a, b): return np.sum(np.logspace(start=a, stop=b, num=3, base=2.0, endpoint=False) ** 2)
def c_logspace_base(a, b): return np.sum(np.logspace(0.0, 1.0, 3, base=b) * a)
def c_logspace_arrays(a, b): return np.sum(np.logspace(a, b, 3, axis=-1) ** 2)


def test_logspace():
    for f in (c_logspace, c_logspace_kw, c_logspace_base):
        check_grads(f, 0.3, 1.7, wrt=(0, 1))
    check_grads(c_logspace_arrays, np.array([0.1, -0.5]), np.array([1.0, 0.5]), wrt=(0, 1))

"""End-to-end tests of `Buffer` itself: construction, snapshots (`b.copy()`, `np.array(b)`,
`copy.copy(b)`), reads that copy, `copyto` from every kind of source (arrays, scalars, nested
lists, generators, `map`, `islice`, `iter`), short and long iterators, and object buffers whose
slots hold arrays.

Every gradient is checked against central finite differences (`check` from test_core) or against a
gradient derived by hand -- never against the compiler itself.
"""
from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest

from adjoint_compiler import Buffer, copyto, grad, value_and_grad, vjp
from test_core import check

RNG = np.random.default_rng(97531)


def rand(*shape):
    return RNG.standard_normal(shape)


W4 = np.array([1.0, 2.0, 3.0, 4.0])


# ---------------------------------------------------------------------------------------------
# construction
# ---------------------------------------------------------------------------------------------

def from_argument(x, p):
    b = Buffer(x)
    b[1] = p
    return np.sum(b.copy() ** 2 * W4)


def test_buffer_of_argument_passes_untouched_slots():
    x = rand(4)
    g = check(from_argument, x, 0.3, wrt=(0, 1))
    np.testing.assert_allclose(g[0], [2 * x[0], 0.0, 6 * x[2], 8 * x[3]], rtol=1e-12)
    assert g[1] == pytest.approx(4 * 0.3, rel=1e-12)


def zeros_shapes(p):
    a = Buffer.zeros(3)
    b = Buffer.zeros((2, 2))
    a[0] = p
    b[1, 0] = p * p
    b[0] = a[0:2] * 3.0
    return np.sum(a.copy()) + np.sum(b.copy() ** 2)


def test_buffer_zeros():
    g = check(zeros_shapes, 0.8)
    assert g == pytest.approx(1.0 + 4 * 0.8 ** 3 + 18 * 0.8, rel=1e-12)


def zeros_like(x):
    b = Buffer.zeros_like(x)
    b[::2] = x[::2] ** 2
    return np.sum(b.copy() * x)


def test_buffer_zeros_like():
    x = rand(5)
    g = check(zeros_like, x)
    np.testing.assert_allclose(g, np.where(np.arange(5) % 2 == 0, 3 * x ** 2, 0.0), rtol=1e-12)


def int_buffer(p):
    b = Buffer(np.arange(3))
    b[1] = p * 0.5
    return np.sum(b.copy() * np.array([1.0, 2.0, 3.0]))


def test_buffer_of_integers_is_float():
    g = check(int_buffer, 0.3)
    assert g == pytest.approx(1.0, rel=1e-12)
    b = Buffer(np.arange(3))
    assert b.dtype.kind == "f"


def buffer_of_buffer(x):
    b = Buffer(x)
    c = Buffer(b)
    c[0] = 0.0
    b[1] = x[0] * 2.0
    return np.sum(b.copy() * W4) + np.sum(c.copy() ** 2)


def test_buffer_of_buffer_is_a_copy():
    check(buffer_of_buffer, rand(4))


def buffer_2d(A, v):
    b = Buffer(A)
    b[1] = v
    return np.sum(b[0] * b[1]) + np.sum(b[:, 2] ** 2)


def test_buffer_2d_rows():
    check(buffer_2d, rand(3, 3), rand(3), wrt=(0, 1))


def make_buffer(v):
    b = Buffer.zeros(3)
    b[1:] = v
    return b


def buffer_from_helper(v):
    b = make_buffer(v * 2.0)
    b[0] = v[0] * v[1]
    return np.sum(b.copy() ** 2)


def test_buffer_returned_from_helper():
    check(buffer_from_helper, rand(2))


def shape_len_iteration(x):
    b = Buffer(x)
    b[0] = x[1] * 3.0
    s = 0.0
    for v in b:
        s = s + v ** 2
    for i in range(len(b)):
        s = s + b[i] * (i + 1.0)
    return s * (b.shape[0] + b.ndim + b.size)


def test_shape_len_and_iteration():
    check(shape_len_iteration, rand(4))


# ---------------------------------------------------------------------------------------------
# reads and snapshots
# ---------------------------------------------------------------------------------------------

def read_is_a_copy(x, p):
    b = Buffer(x)
    r = b[0:2]
    b[0] = 10.0 * p
    return np.sum(r * r) + b[0] * x[0]


def test_read_keeps_its_value_after_write():
    x = rand(3)
    g = check(read_is_a_copy, x, 0.2, wrt=(0, 1))
    np.testing.assert_allclose(g[0], [2 * x[0] + 2.0, 2 * x[1], 0.0], rtol=1e-12)
    assert g[1] == pytest.approx(10.0 * x[0], rel=1e-12)


def test_read_is_a_new_array_not_a_view():
    b = Buffer(np.arange(4.0))
    r = b[1:3]
    b[1] = 9.0
    np.testing.assert_array_equal(r, [1.0, 2.0])
    assert not np.may_share_memory(r, b.data)


def buffer_arithmetic_then_overwrite(x):
    b = Buffer(x)
    y = b * b
    b[0] = 5.0
    return np.sum(y * b.copy()) + np.sum(np.sin(b))


def test_buffer_arithmetic_read_then_overwrite():
    x = rand(4)
    g = check(buffer_arithmetic_then_overwrite, x)
    expected = 3 * x ** 2 + np.cos(x)
    expected[0] = 10.0 * x[0]
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def duplicate_reads(x):
    b = Buffer(x)
    r = b[[0, 0, 2, 0]]
    return np.sum(r * np.array([1.0, 2.0, 3.0, 4.0]))


def test_duplicate_reads_accumulate():
    g = check(duplicate_reads, rand(3))
    np.testing.assert_allclose(g, [7.0, 0.0, 3.0])


def snapshots_all_kinds(x):
    b = Buffer(x)
    s1 = b.copy()
    s2 = np.array(b)
    s3 = copy.copy(b)
    b[0] = 0.0
    b[1:] = b[1:] * 2.0
    return np.sum(s1 * s2) + np.sum(s3 * W4) + np.sum(b.copy() ** 2)


def test_snapshots_accumulate():
    x = rand(4)
    g = check(snapshots_all_kinds, x)
    expected = 2 * x + W4 + np.concatenate([[0.0], 8 * x[1:]])
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def snapshot_then_overwrite_all(x, y):
    b = Buffer(x)
    s = np.array(b)
    b[:] = y
    t = copy.copy(b)
    b[...] = 0.0
    return np.sum(s * t) + np.sum(b.copy())


def test_writes_after_snapshots():
    x, y = rand(4), rand(4)
    g = check(snapshot_then_overwrite_all, x, y, wrt=(0, 1))
    np.testing.assert_allclose(g[0], y, rtol=1e-12)
    np.testing.assert_allclose(g[1], x, rtol=1e-12)


def snapshots_in_loop(x):
    b = Buffer(x)
    total = 0.0
    for i in range(4):
        snap = b.copy()
        b[i] = np.sin(snap[i]) + snap[(i + 1) % 4]
        total = total + np.sum(snap * b.copy())
    return total


def test_snapshots_in_loop():
    check(snapshots_in_loop, rand(4))


# ---------------------------------------------------------------------------------------------
# copyto sources
# ---------------------------------------------------------------------------------------------

def copyto_scalar(x, p):
    b = Buffer(x)
    copyto(b, p)
    return np.sum(b.copy() * x)


def test_copyto_scalar():
    x = rand(4)
    g = check(copyto_scalar, x, 0.6, wrt=(0, 1))
    np.testing.assert_allclose(g[0], np.full(4, 0.6), rtol=1e-12)
    assert g[1] == pytest.approx(x.sum(), rel=1e-12)


def copyto_nested_list(p):
    b = Buffer.zeros((2, 3))
    copyto(b, [[p, 2.0 * p, 1.0], [p * p, 0.0, np.sin(p)]])
    return np.sum(b.copy() ** 2)


def test_copyto_nested_list():
    p = 0.7
    g = check(copyto_nested_list, p)
    assert g == pytest.approx(2 * p + 8 * p + 4 * p ** 3 + 2 * np.sin(p) * np.cos(p), rel=1e-12)


def copyto_tuple(x, p):
    b = Buffer(x)
    copyto(b, (p, 2.0, p * 3.0))
    return np.sum(b.copy() ** 2)


def test_copyto_tuple():
    g = check(copyto_tuple, rand(3), 0.4, wrt=(0, 1))
    np.testing.assert_array_equal(g[0], np.zeros(3))
    assert g[1] == pytest.approx(2 * 0.4 + 18 * 0.4, rel=1e-12)


def copyto_row_broadcast(A, row):
    b = Buffer(A)
    copyto(b, row)
    return np.sum(b.copy() * A)


def test_copyto_broadcast_row():
    A, row = rand(3, 4), rand(4)
    g = check(copyto_row_broadcast, A, row, wrt=(0, 1))
    np.testing.assert_allclose(g[1], A.sum(axis=0), rtol=1e-12)


def copyto_from_buffer(x, y):
    b = Buffer(x)
    c = Buffer(y)
    c[0] = x[1] ** 2
    copyto(b, c)
    c[1] = 0.0
    return np.sum(b.copy() * W4) + np.sum(c.copy() ** 2)


def test_copyto_from_another_buffer():
    check(copyto_from_buffer, rand(4), rand(4), wrt=(0, 1))


def copyto_short_generator(x, p):
    b = Buffer(x)
    copyto(b, (p * i for i in range(1, 3)))
    return np.sum(b.copy() ** 2)


def test_copyto_short_generator_writes_a_prefix():
    x = rand(4)
    g = check(copyto_short_generator, x, 0.5, wrt=(0, 1))
    np.testing.assert_allclose(g[0], [0.0, 0.0, 2 * x[2], 2 * x[3]], rtol=1e-12)
    assert g[1] == pytest.approx(2 * 0.5 * 5, rel=1e-12)


def copyto_long_generator(p):
    b = Buffer.zeros(3)
    copyto(b, (p * i for i in range(5)))
    return np.sum(b.copy())


def copyto_long_map(p):
    b = Buffer.zeros(2)
    copyto(b, map(np.sin, [p, 2.0 * p, 3.0 * p]))
    return np.sum(b.copy())


@pytest.mark.parametrize("f", [copyto_long_generator, copyto_long_map])
def test_copyto_long_iterator_raises_value_error(f):
    with pytest.raises(ValueError):
        f(0.5)
    with pytest.raises(ValueError):
        grad(f)(0.5)
    with pytest.raises(ValueError):
        value_and_grad(f)(0.5)


def copyto_generator_2d(x):
    b = Buffer.zeros((2, 3))
    copyto(b, (x[i] * (i + 1.0) for i in range(5)))
    return np.sum(b.copy() * np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))


def test_copyto_generator_fills_c_order():
    g = check(copyto_generator_2d, rand(5))
    np.testing.assert_allclose(g, [1.0, 4.0, 9.0, 16.0, 25.0])


def copyto_iter(x, p):
    b = Buffer(x)
    copyto(b, iter([p, p * p]))
    return np.sum(np.exp(b.copy()))


def test_copyto_iter_of_list():
    x = rand(3)
    g = check(copyto_iter, x, 0.3, wrt=(0, 1))
    assert g[0][0] == 0.0 and g[0][1] == 0.0


def copyto_zip_generator(x, y):
    b = Buffer.zeros(3)
    copyto(b, (a * c for a, c in zip(x, y)))
    return np.sum(b.copy() ** 2)


def test_copyto_generator_over_zip():
    check(copyto_zip_generator, rand(3), rand(3), wrt=(0, 1))


def copyto_map_numpy(x):
    b = Buffer.zeros(3)
    copyto(b, map(np.tanh, x))
    return np.sum(b.copy() * np.array([1.0, -2.0, 3.0]))


def test_copyto_map_numpy_function():
    x = rand(3)
    g = check(copyto_map_numpy, x)
    np.testing.assert_allclose(g, np.array([1.0, -2.0, 3.0]) / np.cosh(x) ** 2, rtol=1e-12)


def copyto_islice_generator(x):
    b = Buffer(x)
    copyto(b, itertools.islice((np.sin(v) for v in x), 2))
    return np.sum(b.copy() ** 2)


def test_copyto_islice_prefix():
    check(copyto_islice_generator, rand(4))


def copyto_generator_in_loop(x, p):
    b = Buffer(x)
    s = 0.0
    for k in range(3):
        copyto(b, (b[i] * p + k for i in range(4)))
        s = s + np.sum(b.copy() ** 2)
    return s


def test_copyto_generator_in_loop_reading_the_buffer():
    check(copyto_generator_in_loop, rand(4), 0.7, wrt=(0, 1))


def np_copyto_buffer(x, y):
    b = x * 1.0
    np.copyto(b, y * 2.0)
    return np.sum(b ** 2)


def test_np_copyto_into_local_ndarray():
    x, y = rand(3), rand(3)
    g = check(np_copyto_buffer, x, y, wrt=(0, 1))
    np.testing.assert_array_equal(g[0], np.zeros(3))
    np.testing.assert_allclose(g[1], 8 * y, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# object buffers
# ---------------------------------------------------------------------------------------------

def object_slots(x):
    ob = Buffer(np.empty(3, dtype=object))
    ob[0] = x * 2.0
    ob[1] = np.sin(x[:2])
    ob[2] = x[1] * x[2]
    return np.sum(ob[0] * x) + np.sum(ob[1] ** 2) + ob[2]


def test_object_buffer_slots_hold_arrays():
    check(object_slots, rand(3))


def object_untouched_slot(x):
    ob = Buffer(np.empty(3, dtype=object))
    ob[0] = x
    ob[2] = x * 3.0
    return np.sum(ob[0]) + np.sum(ob[2] ** 2)


def test_object_buffer_untouched_slot():
    x = rand(3)
    g = check(object_untouched_slot, x)
    np.testing.assert_allclose(g, 1.0 + 18.0 * x, rtol=1e-12)


def object_overwritten(x, y):
    ob = Buffer(np.empty(2, dtype=object))
    ob[0] = x
    ob[0] = y * 2.0
    return np.sum(ob[0] ** 2)


def test_object_buffer_overwritten_slot_gives_zeros():
    x, y = rand(3), rand(3)
    g = check(object_overwritten, x, y, wrt=(0, 1))
    np.testing.assert_array_equal(g[0], np.zeros(3))
    out, pullback = vjp(object_overwritten, x, y)
    gx, gy = pullback(1.0)
    assert isinstance(gx, np.ndarray) and gx.shape == (3,)
    np.testing.assert_array_equal(gx, np.zeros(3))
    np.testing.assert_allclose(gy, 8.0 * y, rtol=1e-12)


def object_unused(x, p):
    ob = Buffer(np.empty(2, dtype=object))
    ob[0] = x
    ob[1] = np.ones(3) * 2.0
    return np.sum(ob[1]) * p


def test_object_buffer_slot_not_reaching_output():
    x = rand(3)
    out, pullback = vjp(object_unused, x, 0.5)
    gx, gp = pullback(1.0)
    assert isinstance(gx, np.ndarray)
    np.testing.assert_array_equal(gx, np.zeros(3))
    assert gp == pytest.approx(6.0)
    check(object_unused, x, 0.5, wrt=(0, 1))


def object_trajectory(u0, p):
    ob = Buffer(np.empty(4, dtype=object))
    u = u0
    for i in range(4):
        ob[i] = u
        u = np.sin(u) * p + u0
    s = 0.0
    for i in range(4):
        s = s + np.sum(ob[i] ** 2) * (i + 1.0)
    return s + np.sum(u)


def test_object_buffer_stores_trajectory():
    check(object_trajectory, rand(3), 0.9, wrt=(0, 1))


def object_copyto_generator(x):
    ob = Buffer(np.empty(3, dtype=object))
    copyto(ob, (x * (i + 1.0) for i in range(3)))
    return np.sum(ob[0] * ob[1]) + np.sum(ob[2])


def test_object_buffer_copyto_generator():
    x = rand(2)
    g = check(object_copyto_generator, x)
    np.testing.assert_allclose(g, 4.0 * x + 3.0, rtol=1e-12)


def object_rewrite_in_loop(x):
    ob = Buffer(np.empty(2, dtype=object))
    ob[0] = x
    ob[1] = x * 0.0
    for k in range(3):
        ob[1] = ob[1] + ob[0] ** 2
        ob[0] = np.tanh(ob[0])
    return np.sum(ob[0]) + np.sum(ob[1])


def test_object_buffer_rewritten_in_loop():
    check(object_rewrite_in_loop, rand(3))


def object_untouched_positional_dtype(x):
    ob = Buffer(np.empty(3, object))
    ob[0] = x
    ob[2] = x * 3.0
    return np.sum(ob[0]) + np.sum(ob[2] ** 2)


def object_overwritten_positional_dtype(x, y):
    ob = Buffer(np.empty(2, object))
    ob[0] = x
    ob[0] = y * 2.0
    return np.sum(ob[0] ** 2)


def test_object_buffer_positional_dtype():
    x, y = rand(3), rand(3)
    g = check(object_untouched_positional_dtype, x)
    np.testing.assert_allclose(g, 1.0 + 18.0 * x, rtol=1e-12)
    g = check(object_overwritten_positional_dtype, x, y, wrt=(0, 1))
    np.testing.assert_array_equal(g[0], np.zeros(3))
    np.testing.assert_allclose(g[1], 8.0 * y, rtol=1e-12)


def copies_of_a_buffer_written(x):
    b = Buffer.zeros((3,))
    b[0] = x[0] * 2.0
    c = copy.copy(b)  # an array: a copy of the Buffer's data
    w = c.copy()
    w[::-1] = 0.36  # writes only w
    return np.sin(c[0] * x[1]) + np.sum(w * x)


def test_a_copy_of_a_buffer_is_a_fresh_array():
    from adjoint_compiler.testing import check_grads

    check_grads(copies_of_a_buffer_written, np.array([0.3, -0.7, 1.2]))

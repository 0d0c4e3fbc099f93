"""End-to-end tests of Python data structures as values: tuples and lists (construction, indexing,
unpacking, len), list append + np.stack / np.array / np.concatenate, list comprehensions and
generator expressions, sum over a generator, dict literals with constant keys, and tuple/list
arguments.

Every gradient is checked against central finite differences or a gradient derived by hand.
"""
from __future__ import annotations

import inspect
import tracemalloc

import numpy as np
import pytest

from adjoint_compiler import (AdjointCompilerError, UnsupportedSyntaxError, adjoint_source, grad,
                              value_and_grad, vjp)
from adjoint_compiler.testing import check_grads
from test_core import check, fd_grad

RNG = np.random.default_rng(2024)


def rand(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------------------------------------
# tuples and lists as values
# ---------------------------------------------------------------------------------------------

def tuple_value(x, y):
    t = (x, y * 2.0, x * y)
    return t[0] * t[2] + t[-1] + len(t) * t[1]


def list_value(x, y):
    xs = [x, np.sin(y), x * y]
    a, b, c = xs
    return a * b + xs[2] * len(xs) + xs[-2]


def nested_structures(x, y):
    t = ([x, y], (x * y, [y, x]))
    (p, q), (r, (s, u)) = t
    return p * q + r * s + t[1][1][1] * u + len(t[1][1])


def tuple_of_arrays(x, w):
    pair = (x * w, np.exp(x))
    first, second = pair
    return np.sum(first * second) + np.sum(pair[1])


def slicing_a_list(x):
    xs = [x, x * 2.0, x * 3.0, x * 4.0]
    ys = xs[1:3]
    zs = xs[::-1]
    return np.sum(ys[0] * ys[1] + zs[0]) + np.sum(np.array(xs[:2]))


def list_concat(x, y):
    xs = [x] + [y, x * y]
    ys = xs + [x]
    return ys[3] * ys[2] + len(ys) * xs[1]


def list_repeat(x):
    ys = [x] * 3
    return ys[0] * ys[1] * ys[2]


def tuple_repeat(x, y):
    t = 2 * (x, y * 2.0)
    return t[0] * t[3] + t[2]


def list_repeat_array(x):
    rows = [x * 2.0] * 2
    return np.sum(np.stack(rows) ** 2)


def test_tuple_construction_indexing_len():
    x, y = 0.7, -1.2
    gx, gy = check(tuple_value, x, y, wrt=(0, 1))
    assert np.isclose(gx, 2 * x * y + y, rtol=1e-12)
    assert np.isclose(gy, x * x + x + 6.0, rtol=1e-12)


def test_list_construction_unpacking_indexing_len():
    x, y = 0.7, -1.2
    gx, gy = check(list_value, x, y, wrt=(0, 1))
    assert np.isclose(gx, np.sin(y) + 3 * y, rtol=1e-12)
    assert np.isclose(gy, x * np.cos(y) + 3 * x + np.cos(y), rtol=1e-12)


def test_nested_structures():
    check(nested_structures, 0.5, 1.5, wrt=(0, 1))


def test_tuple_of_arrays():
    x, w = rand(3), rand(3)
    gx, gw = check(tuple_of_arrays, x, w, wrt=(0, 1))
    np.testing.assert_allclose(gx, w * np.exp(x) * (1 + x) + np.exp(x), rtol=1e-12)
    np.testing.assert_allclose(gw, x * np.exp(x), rtol=1e-12)


def test_list_slicing():
    x = rand(3)
    g = check(slicing_a_list, x)
    np.testing.assert_allclose(g, 12 * x + 4.0 + 3.0, rtol=1e-12)


def test_list_repetition():
    x = 0.7
    g = check(list_repeat, x)
    assert np.isclose(g, 3 * x ** 2, rtol=1e-12)


def test_tuple_repetition():
    x, y = 0.7, -1.3
    gx, gy = check(tuple_repeat, x, y, wrt=(0, 1))
    assert np.isclose(gx, 2 * y + 1.0, rtol=1e-12)
    assert np.isclose(gy, 2 * x, rtol=1e-12)


def test_list_repetition_of_arrays():
    x = rand(3)
    g = check(list_repeat_array, x)
    np.testing.assert_allclose(g, 16 * x, rtol=1e-12)


def test_list_concatenation():
    check(list_concat, 0.4, 2.5, wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# list append, then np.stack / np.array / np.concatenate
# ---------------------------------------------------------------------------------------------

def append_stack(x, w):
    rows = []
    h = x
    for i in range(4):
        h = np.tanh(h * w + i)
        rows.append(h)
    return np.sum(np.stack(rows) ** 2 * np.arange(1.0, 5.0)[:, None])


def append_stack_axis1(x):
    cols = []
    for k in range(3):
        cols.append(x ** (k + 1))
    M = np.stack(cols, axis=1)
    return np.sum(M * np.array([1.0, -2.0, 0.5]))


def append_array_of_scalars(x):
    vals = []
    for v in x:
        vals.append(v * v)
        vals.append(np.sin(v))
    arr = np.array(vals)
    return np.sum(arr * np.arange(len(vals)))


def append_concatenate(x, y):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0))
    parts.append(y)
    z = np.concatenate(parts)
    return np.sum(z ** 3)


def append_outside_loop(x, y):
    out = []
    out.append(x * 2.0)
    out.append(y)
    out.append(x * y)
    return np.sum(np.stack(out) ** 2)


def append_then_index(x):
    hs = []
    for i in range(5):
        x = np.cos(x) + 0.1 * i
        hs.append(x)
    return hs[-1] * hs[0] + hs[2] * len(hs)


def append_conditionally(x):
    keep = []
    for v in x:
        if v > 0:
            keep.append(v ** 2)
    if len(keep) == 0:
        return np.sum(x) * 0.0
    return np.sum(np.array(keep))


def test_append_then_np_stack():
    check(append_stack, rand(3), 0.8, wrt=(0, 1))


def test_append_then_np_stack_axis1():
    x = rand(4)
    g = check(append_stack_axis1, x)
    np.testing.assert_allclose(g, 1.0 - 4.0 * x + 1.5 * x ** 2, rtol=1e-12)


def test_append_then_np_array():
    x = rand(3)
    g = check(append_array_of_scalars, x)
    np.testing.assert_allclose(g, 2 * x * np.arange(0, 6, 2) + np.cos(x) * np.arange(1, 6, 2),
                               rtol=1e-12)


def test_append_then_np_concatenate():
    x, y = rand(2), rand(3)
    gx, gy = check(append_concatenate, x, y, wrt=(0, 1))
    np.testing.assert_allclose(gx, 3 * x ** 2 * (1 + 8 + 27), rtol=1e-12)
    np.testing.assert_allclose(gy, 3 * y ** 2, rtol=1e-12)


def test_append_outside_loop():
    check(append_outside_loop, rand(3), rand(3), wrt=(0, 1))


def test_append_then_index():
    check(append_then_index, 0.3)


@pytest.mark.parametrize("x", [np.array([0.5, -1.0, 2.0]), -np.ones(3)])
def test_conditional_append(x):
    g = check(append_conditionally, x)
    np.testing.assert_allclose(g, np.where(x > 0, 2 * x, 0.0), rtol=1e-12)


def sorted_in_place_by_key(x):
    xs = [x[0], x[1] * 2.0, x[2] - 1.0]
    xs.sort(key=abs, reverse=True)
    return xs[0] * 3.0 + xs[1]


def test_list_sort_with_key_rebinds_the_list():
    x = np.array([0.4, -1.3, 0.2])  # |.|: 0.4, 2.6, 0.8 -> the second, the third, then the first
    g = check(sorted_in_place_by_key, x)
    np.testing.assert_allclose(g, [0.0, 6.0, 1.0], rtol=1e-12)


def sort_shared_list(x):
    xs = [x[0], x[1]]
    ys = xs
    xs.sort(key=lambda v: -v)
    return xs[0] + 2.0 * ys[1]


def test_list_sort_of_a_list_another_name_holds_is_refused():
    with pytest.raises(AdjointCompilerError, match="ys"):
        grad(sort_shared_list)(np.array([0.3, 0.9]))


def long_append(x, n):
    ys = []
    for i in range(n):
        x = x * 0.99 + 0.01
        ys.append(x)
    return np.sum(np.array(ys))


def test_append_in_long_loop_has_linear_memory():
    # the list of n floats and the tape of n values are O(n); O(n^2) would be ~100 MB here
    n = 5000
    g = grad(long_append)
    g(0.3, 10)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        gx = g(0.3, n)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    expected = sum(0.99 ** k for k in range(1, n + 1))
    assert np.isclose(gx, expected, rtol=1e-10)
    assert peak < 10e6, f"peak memory {peak / 1e6:.1f} MB for {n} appends"


# ---------------------------------------------------------------------------------------------
# comprehensions and generator expressions
# ---------------------------------------------------------------------------------------------

def list_comp(x):
    ys = [np.sin(v) * v for v in x]
    return np.sum(np.array(ys))


def list_comp_if(x):
    ys = [v ** 2 for v in x if v > 0]
    return np.sum(np.array(ys)) if len(ys) > 0 else 0.0 * np.sum(x)


def list_comp_nested(x, y):
    prods = [a * b for a in x for b in y]
    return np.sum(np.array(prods) ** 2)


def list_comp_nested_dependent(x):
    pairs = [x[i] * x[j] for i in range(len(x)) for j in range(i)]
    return np.sum(np.array(pairs))


def list_comp_of_arrays(A, w):
    rows = [np.tanh(row * w) for row in A]
    return np.sum(np.stack(rows) ** 2)


def list_comp_enumerate_zip(x, y):
    zs = [i * a + b for i, (a, b) in enumerate(zip(x, y))]
    return np.sum(np.array(zs) ** 2)


def generator_sum(x):
    return sum(v ** 3 for v in x)


def generator_sum_if(x):
    return sum(np.exp(v) for v in x if v < 0.5)


def generator_sum_start(x, s):
    return sum((v * s for v in x), 1.0)


def generator_nested_sum(x, y):
    return sum(a * np.sin(b) for a in x for b in y if a > b)


def generator_into_stack(x):
    return np.sum(np.stack(tuple(np.sin(x * k) for k in range(3))))


def generator_into_list(x):
    return np.sum(np.array(list(np.sin(x * k) for k in range(3))))


def comprehension_uses_outer_name(x, w):
    scale = w * 2.0
    return np.sum(np.array([v * scale for v in x]))


def test_list_comprehension():
    x = rand(4)
    g = check(list_comp, x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-12)


@pytest.mark.parametrize("x", [np.array([0.5, -0.2, 1.5]), -np.ones(2)])
def test_list_comprehension_with_if(x):
    g = check(list_comp_if, x)
    np.testing.assert_allclose(g, np.where(x > 0, 2 * x, 0.0), rtol=1e-12)


def test_list_comprehension_nested_for():
    x, y = rand(3), rand(2)
    gx, gy = check(list_comp_nested, x, y, wrt=(0, 1))
    np.testing.assert_allclose(gx, 2 * x * np.sum(y ** 2), rtol=1e-12)
    np.testing.assert_allclose(gy, 2 * y * np.sum(x ** 2), rtol=1e-12)


def test_list_comprehension_nested_dependent_range():
    x = rand(4)
    g = check(list_comp_nested_dependent, x)
    np.testing.assert_allclose(g, np.sum(x) - x, rtol=1e-12)


def test_list_comprehension_of_arrays():
    check(list_comp_of_arrays, rand(3, 2), rand(2), wrt=(0, 1))


def test_list_comprehension_enumerate_zip():
    check(list_comp_enumerate_zip, rand(3), rand(3), wrt=(0, 1))


def test_comprehension_reads_enclosing_variable():
    x = rand(3)
    gx, gw = check(comprehension_uses_outer_name, x, 0.7, wrt=(0, 1))
    assert np.isclose(gw, 2 * np.sum(x), rtol=1e-12)


def test_sum_of_generator():
    x = rand(4)
    g = check(generator_sum, x)
    np.testing.assert_allclose(g, 3 * x ** 2, rtol=1e-12)


def test_sum_of_generator_with_if():
    x = np.array([0.1, 0.9, -1.0, 0.4])
    g = check(generator_sum_if, x)
    np.testing.assert_allclose(g, np.where(x < 0.5, np.exp(x), 0.0), rtol=1e-12)


def test_sum_of_generator_with_start():
    x = rand(3)
    gx, gs = check(generator_sum_start, x, 1.5, wrt=(0, 1))
    np.testing.assert_allclose(gx, 1.5 * np.ones(3), rtol=1e-12)
    assert np.isclose(gs, np.sum(x), rtol=1e-12)


def test_sum_of_nested_generator_with_if():
    check(generator_nested_sum, rand(3), rand(3), wrt=(0, 1))


@pytest.mark.parametrize("f", [generator_into_stack, generator_into_list])
def test_generator_into_tuple_or_list(f):
    x = rand(3)
    g = check(f, x)
    np.testing.assert_allclose(g, sum(k * np.cos(k * x) for k in range(3)), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# dicts
# ---------------------------------------------------------------------------------------------

def dict_literal(x, y):
    d = {"a": x, "b": y * 2.0, 3: x * y}
    return d["a"] * d["b"] + d[3]


def dict_of_arrays(x, w):
    params = {"w": w, "b": 0.5}
    return np.sum(np.tanh(x * params["w"] + params["b"]))


def dict_in_loop(x):
    d = {"scale": 0.5, "shift": x}
    for i in range(3):
        x = x * d["scale"] + d["shift"]
    return x ** 2


def dict_nonconstant_key(x, key):
    d = {"a": x, "b": x * 2.0}
    return d[key]


def dict_loop_key(x):
    d = {"a": x, "b": x * 2.0}
    s = 0.0
    for k in ["a", "b"]:
        s = s + d[k]
    return s


def test_dict_literal_constant_keys():
    x, y = 0.6, 1.1
    gx, gy = check(dict_literal, x, y, wrt=(0, 1))
    assert np.isclose(gx, 2 * y + y, rtol=1e-12)
    assert np.isclose(gy, 2 * x + x, rtol=1e-12)


def test_dict_of_arrays():
    x, w = rand(3), rand(3)
    gx, gw = check(dict_of_arrays, x, w, wrt=(0, 1))
    t = 1 - np.tanh(x * w + 0.5) ** 2
    np.testing.assert_allclose(gx, t * w, rtol=1e-12)
    np.testing.assert_allclose(gw, t * x, rtol=1e-12)


def test_dict_read_in_loop():
    check(dict_in_loop, 0.8)


@pytest.mark.parametrize("f, args, marker", [
    (dict_nonconstant_key, (1.0, "a"), "return d[key]"),
    (dict_loop_key, (1.0,), "s = s + d[k]"),
])
def test_dict_nonconstant_key_is_located_unsupported_syntax(f, args, marker):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(*args)
    err = info.value
    assert isinstance(err, AdjointCompilerError)
    lines, first = inspect.getsourcelines(f)
    expected = [first + i for i, ln in enumerate(lines) if marker in ln][0]
    assert err.filename == __file__
    assert err.lineno == expected, (err.lineno, expected, err.msg)


# ---------------------------------------------------------------------------------------------
# tuple and list arguments get tuple and list gradients
# ---------------------------------------------------------------------------------------------

def tuple_arg(p):
    a, b, c = p
    return a * b * c + len(p)


def list_arg_of_arrays(xs, w):
    total = 0.0
    for x in xs:
        total = total + np.sum(x * w)
    return total + np.sum(xs[0] ** 2)


def nested_arg(p):
    (a, b), c = p
    return np.sum(a * c[0]) + b * c[1]


def tuple_arg_partly_unused(p, q):
    return p[0] * 2.0 + q


def list_arg_indexed_by_loop(xs):
    s = 0.0
    for i in range(len(xs) - 1):
        s = s + xs[i] * xs[i + 1]
    return s


def test_tuple_argument_gets_tuple_gradient():
    p = (0.5, -2.0, 3.0)
    g = check(tuple_arg, p)
    assert type(g) is tuple
    np.testing.assert_allclose(g, (-6.0, 1.5, -1.0), rtol=1e-12)


def test_list_of_arrays_argument_gets_list_gradient():
    xs = [rand(3), rand(3)]
    w = rand(3)
    gxs, gw = check(list_arg_of_arrays, xs, w, wrt=(0, 1))
    assert type(gxs) is list and len(gxs) == 2
    np.testing.assert_allclose(gxs[0], w + 2 * xs[0], rtol=1e-12)
    np.testing.assert_allclose(gxs[1], w, rtol=1e-12)
    np.testing.assert_allclose(gw, xs[0] + xs[1], rtol=1e-12)


def test_nested_argument_structure():
    p = ((rand(2), 0.5), [rand(2), 1.5])
    g = check(nested_arg, p)
    assert type(g) is tuple and type(g[0]) is tuple and type(g[1]) is list


def test_unused_tuple_elements_get_zeros():
    p = (1.0, rand(3), [2.0, 3.0])
    gp, gq = check(tuple_arg_partly_unused, p, 0.5, wrt=(0, 1))
    assert type(gp) is tuple and type(gp[2]) is list
    assert gp[0] == 2.0
    np.testing.assert_array_equal(gp[1], np.zeros(3))
    assert list(gp[2]) == [0.0, 0.0]


def test_list_argument_indexed_in_loop():
    xs = [0.5, -1.0, 2.0, 0.25]
    g = check(list_arg_indexed_by_loop, xs)
    assert type(g) is list
    np.testing.assert_allclose(g, [-1.0, 2.5, -0.75, 2.0], rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# structured outputs through vjp
# ---------------------------------------------------------------------------------------------

def tuple_out(x, y):
    parts = [x * y, np.sin(x)]
    return parts[0], np.stack(parts) * 2.0


def test_vjp_with_tuple_output_built_from_list():
    x, y = rand(3), rand(3)
    out, pullback = vjp(tuple_out, x, y)
    ref = tuple_out(x, y)
    np.testing.assert_allclose(out[0], ref[0])
    np.testing.assert_allclose(out[1], ref[1])
    b0, b1 = rand(3), rand(2, 3)
    gx, gy = pullback((b0, b1))

    def scalar(xx, yy):
        o = tuple_out(xx, yy)
        return np.sum(o[0] * b0) + np.sum(o[1] * b1)
    np.testing.assert_allclose(gx, fd_grad(lambda z: scalar(z, y), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, fd_grad(lambda z: scalar(x, z), y), rtol=1e-6, atol=1e-8)


def test_value_and_grad_of_comprehension():
    x = rand(4)
    v, g = value_and_grad(list_comp)(x)
    assert np.isclose(v, list_comp(x), rtol=1e-12)
    check_grads(list_comp, x)


def test_adjoint_source_of_comprehension_compiles():
    src = adjoint_source(list_comp_nested, (0, 1))
    compile(src, "<adjoint>", "exec")
    assert "for " in src

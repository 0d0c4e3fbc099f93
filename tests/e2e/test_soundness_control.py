"""Soundness of control flow and storage (issue 12, families 14 and 10): the right gradient or a
located error, in every entry point (`grad` drops forward values the adjoint does not read;
`vjp` saves values for a pullback called later).

Every gradient is compared with central finite differences of the function itself, computed here.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from adjoint_compiler import AdjointCompilerError, copyto, grad, value_and_grad, vjp

RNG = np.random.default_rng(1212)


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else list(a) if isinstance(a, list) else a for a in args]


def fd(f, args, i, eps=1e-6):
    x = args[i]
    if isinstance(x, list):  # a list of numbers: one derivative per item
        def at_item(k, t):
            a = _copy(args)
            a[i][k] = x[k] + t
            return float(f(*a))
        return np.array([(at_item(k, eps) - at_item(k, -eps)) / (2 * eps) for k in range(len(x))])
    if not isinstance(x, np.ndarray):
        def at(t):
            a = _copy(args)
            a[i] = x + t
            return float(f(*a))
        return (at(eps) - at(-eps)) / (2 * eps)
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        def at(t, j=j):
            a = _copy(args)
            a[i] = x.astype(float)
            a[i][j] += t
            return float(f(*a))
        g[j] = (at(eps) - at(-eps)) / (2 * eps)
    return g


def all_modes(f, *args, wrt=0):
    """Check value_and_grad, grad and vjp of `f` against running it and finite differences."""
    want = f(*_copy(args))
    ref = fd(f, list(args), wrt)
    before = _copy(args)
    value, g1 = value_and_grad(f, wrt)(*args)
    g2 = grad(f, wrt)(*args)
    out, pullback = vjp(f, *args)
    g3 = pullback(1.0)[wrt]
    g4 = pullback(1.0)[wrt]  # a pullback may run twice
    for b, a in zip(before, args):
        if isinstance(b, (np.ndarray, list)):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(value, want, rtol=1e-10)
    np.testing.assert_allclose(out, want, rtol=1e-10)
    for g in (g1, g2, g3, g4):
        np.testing.assert_allclose(np.asarray(g, float), ref, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Nested loops whose inner body is dead in `grad` (its values are not needed forward)
# ---------------------------------------------------------------------------------------------

def nested_sum(x):
    s = 0.0
    for i in range(2):
        for j in range(3):
            s = s + x[i, j]
    return s


def nested_triple(x):
    s = 0.0
    for k in range(2):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                s = s + x[i, j] * 2.0
    return s


def nested_triangle(x):
    s = 0.0
    for i in range(2):
        for j in range(i + 1):
            s = s + x[i, j]
    return s


def nested_rows(x):
    s = 0.0
    for row in x:
        for e in row:
            s = s + e
    return s


def nested_enumerate(x):
    s = 0.0
    for i, row in enumerate(x):
        for j, e in enumerate(row):
            s = s + 3.0 * e
    return s


def nested_dead_outer(x):
    s = 0.0
    for i in range(2):
        s = s + x[i, 0]
        for j in range(3):
            s = s * x[i, j]
    return s


def nested_while(x):
    s = 0.0
    i = 0
    while i < 2:
        j = 0
        while j < 3:
            s = s + x[i, j]
            j = j + 1
        i = i + 1
    return s


def nested_break(x):
    s = 0.0
    for i in range(2):
        for j in range(3):
            if j > 1:
                break
            s = s + x[i, j]
    return s


def nested_while_true(x):
    s = 0.0
    for i in range(2):
        j = 0
        while True:
            s = s + x[i, j]
            j += 1
            if j >= 3:
                break
    return s


@pytest.mark.parametrize("f", [nested_sum, nested_triple, nested_triangle, nested_rows, nested_enumerate,
                               nested_dead_outer, nested_while, nested_break, nested_while_true])
def test_nested_loops_with_dead_bodies(f):
    all_modes(f, RNG.standard_normal((2, 3)))


# ---------------------------------------------------------------------------------------------
# Loops that run zero times: nothing moved out of them may raise, or give a nan adjoint
# ---------------------------------------------------------------------------------------------

def zt_out_of_bounds(p, n):
    s = 0.0
    for i in range(n):
        s = s + p[5]
    return s + np.sum(p)


def zt_division_by_zero(p, n):
    a = p[0]
    b = p[1] * 0.0
    s = 0.0
    for i in range(n):
        s = s + a / b
    return s + np.sum(p)


def zt_too_many_indices(p, n):
    s = 0.0
    for _ in range(n):
        s = s + p[1, 2] * 3.0
    return s + np.sum(p)


def zt_while(p, n):
    s = 0.0
    k = 0
    while k < n:
        s = s + p[5] * 2.0
        k = k + 1
    return s + np.sum(p)


def zt_broadcast(p, n, q):
    s = 0.0
    for i in range(n):
        s = s + np.sum(p + q)
    return s + np.sum(p)


def zt_array_division(p, n, q):
    s = 0.0
    for i in range(n):
        s = s + np.sum(p / q)
    return s + np.sum(p)


def zt_list_index(p, n):
    xs = [p[0], p[1]]
    s = 0.0
    for i in range(n):
        s = s + xs[4]
    return s + np.sum(p)


def zt_inf_product(p, n):
    big = p[0] * 1e308 * 1e10  # inf: its product's adjoint would be 0 * inf = nan
    s = 0.0
    for i in range(n):
        s = s + big * p[1]
    return s + np.sum(p)


def zt_math_log(p, n):
    a = p[0] - 5.0
    s = 0.0
    for i in range(n):
        s = s + math.log(a) * p[1]
    return s + np.sum(p)


def zt_index_arg(p, n, i0):
    s = 0.0
    for _ in range(n):
        s = s + p[i0]
    return s + np.sum(p)


def zt_branch_saved(p):
    if p[0] > 5.0:
        t = p[0] / p[1]
        y = t * p[2]
    else:
        y = p[0] * 1.0
    return y


def zt_loop_values_saved(p, n):
    s = 0.0
    for i in range(n):
        s = s + p[i] * p[i + 1]
    return s + np.sum(p)


V = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("f,extra", [
    (zt_out_of_bounds, (0,)), (zt_division_by_zero, (0,)), (zt_too_many_indices, (0,)), (zt_while, (0,)),
    (zt_broadcast, (0, np.ones(2))), (zt_array_division, (0, np.zeros(2))), (zt_list_index, (0,)),
    (zt_inf_product, (0,)), (zt_math_log, (0,)), (zt_index_arg, (0, 7)), (zt_branch_saved, ()),
    (zt_loop_values_saved, (0,)), (zt_loop_values_saved, (2,)), (zt_index_arg, (3, 1)),
    (zt_broadcast, (2, np.ones(3))),
])
def test_zero_trip_loops(f, extra):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inf * 0 in the zero-trip program's own arithmetic
        all_modes(f, V.copy(), *extra)


# ---------------------------------------------------------------------------------------------
# Writes into Python list slots: a list's gradient is a list (None where a slot has none)
# ---------------------------------------------------------------------------------------------

def list_repeat(x):
    out = [0.0] * 3
    for i in range(3):
        out[i] = x[i] ** 2
    return sum(out)


def list_comprehension(x):
    out = [0.0 for _ in range(len(x))]
    for i in range(len(x)):
        out[i] = x[i] * 2.0
    return out[0] + out[2] * out[1]


def list_of_array(x):
    out = list(x)
    out[1] = out[0] * out[2]
    return sum(out)


def list_literal_overwritten(x):
    out = [x[0], x[1], 1.0]
    out[2] = out[0] + out[1]
    out[0] = 5.0
    return out[0] * out[1] * out[2]


def list_negative_index(x):
    out = [0.0] * 3
    out[-1] = x[0] ** 2
    return np.sum(np.array(out) * x)


def list_augmented(x):
    out = [1.0] * 3
    for i in range(3):
        out[i] += x[i] * x[i]
    return sum(out)


def list_of_arrays(x):
    rows = [np.zeros(3), np.zeros(3)]
    rows[0] = x * 2.0
    rows[1] = np.sin(x)
    return np.sum(rows[0] * rows[1])


def list_appended_then_set(x):
    out = []
    for i in range(3):
        out.append(x[i])
    out[1] = out[1] * out[2]
    return sum(out)


def list_carried(x):
    out = [0.0, 0.0]
    for i in range(3):
        out[i % 2] = out[i % 2] + x[i]
    return out[0] * out[1]


def list_while(x):
    out = [0.0] * 3
    k = 0
    while k < 3:
        out[k] = np.sin(x[k])
        k += 1
    return out[0] * out[1] + out[2]


def list_branch(x):
    out = [0.0, 0.0]
    if x[0] > 0:
        out[0] = x[1] * 2.0
    else:
        out[1] = x[2]
    return out[0] + out[1]


def _fill(out, x):
    for i in range(len(out)):
        out[i] = x[i] * x[i]


def list_helper_writes(x):
    out = [0.0] * 3
    _fill(out, x)
    return out[0] + out[1] + out[2]


def list_alias(x):
    a = [0.0, 0.0]
    b = a
    a[0] = x[0] * 3.0
    return b[0] + x[1]


def list_slice_write(x):
    out = [0.0] * 4
    out[1:3] = [x[0], x[1] * 2.0]
    return sum(out) * x[2]


@pytest.mark.parametrize("f", [list_repeat, list_comprehension, list_of_array, list_literal_overwritten,
                               list_negative_index, list_augmented, list_of_arrays, list_appended_then_set,
                               list_carried, list_while, list_branch, list_helper_writes, list_alias,
                               list_slice_write])
def test_list_slot_writes(f):
    all_modes(f, RNG.standard_normal(3) + 2.0)
    all_modes(f, -RNG.standard_normal(3) - 2.0)


def list_written_argument(x, out):
    out[0] = x[0] * 2.0
    return out[0] + out[1] * x[1]


def list_argument_appended(x, out):
    out[0] = x[0] * 2.0 * out[0]
    out.append(x[1])
    return sum(out) * x[2] + len(out)


def list_argument_rebuilt(x, out):
    for i in range(2):
        out[i] = out[i] * x[i] * out[i]
    out = out + [3.0]
    return sum(out) * x[2]


@pytest.mark.parametrize("f", [list_written_argument, list_argument_appended, list_argument_rebuilt])
@pytest.mark.parametrize("wrt", [0, 1])
def test_list_argument_written(f, wrt):
    out = [0.5, 1.5]
    all_modes(f, V.copy(), out, wrt=wrt)
    assert out == [0.5, 1.5]  # the caller's list is not changed by computing a gradient


# ---------------------------------------------------------------------------------------------
# 0-d arrays written (their gradient may be a NumPy scalar) and iterators into copyto
# ---------------------------------------------------------------------------------------------

def zero_d_ellipsis(v):
    a = np.zeros(())
    a[...] = v[0]
    return np.sum(a * v)


def zero_d_empty_tuple(v):
    a = np.zeros(())
    a[()] = v[0]
    return float(a) * v[1]


def zero_d_twice(v):
    a = np.array(2.0)
    a[()] = v[0] * v[1]
    b = a * 3.0
    a[...] = v[2]
    return b + a


def zero_d_augmented(v):
    a = np.zeros(())
    a[...] += v[0]
    a[()] *= v[1]
    return float(a) * v[2]


def zero_d_copyto(v):
    a = np.zeros(())
    np.copyto(a, v[1])
    return float(a) * v[0]


def islice_prefix(x):
    b = np.zeros(2)
    copyto(b, itertools.islice(x, 2))
    return np.sum(b * x[:2])


def islice_bounds(x):
    b = np.zeros(2)
    copyto(b, itertools.islice(x * 2.0, 1, 3))
    return np.sum(b * x[1:])


def islice_rows(x):
    b = np.zeros((2, 3))
    copyto(b, itertools.islice(x.reshape(2, 3), 2))  # rows: their elements fill the first slots
    return np.sum(b * b)


def islice_of_iter(x):
    b = np.zeros(4)
    copyto(b, itertools.islice(iter(x), 1, None, 2))
    return np.sum(b * b) + b[0]


def map_into_copyto(x):
    b = np.zeros(3)
    copyto(b, map(np.sin, x))
    return np.sum(b * x)


@pytest.mark.parametrize("f", [zero_d_ellipsis, zero_d_empty_tuple, zero_d_twice, zero_d_augmented,
                               zero_d_copyto, islice_prefix, islice_bounds, islice_of_iter, map_into_copyto])
def test_zero_d_writes_and_iterators(f):
    all_modes(f, RNG.standard_normal(3))


def test_islice_rows():
    all_modes(islice_rows, RNG.standard_normal(6))


# ---------------------------------------------------------------------------------------------
# Complex numbers: refused at the user's line (compile time), or when a value turns complex (run time)
# ---------------------------------------------------------------------------------------------

from adjoint_compiler.errors import ComplexError

W_COMPLEX = np.array([1 + 1j, 2.0, 3.0])
Z_COMPLEX = 2j
P_COMPLEX = (1.0, 2j)


def cx_literal(v):
    return np.sum(np.abs(v * (1 + 2j)) ** 2)


def cx_literal_add(v):
    z = v + 1j
    return np.sum(np.abs(z))


def cx_exp(v):
    return np.sum(np.abs(np.exp(1j * v)))


def cx_astype(v):
    z = v.astype(complex)
    return np.sum(np.abs(z))


def cx_astype_numpy(v):
    return np.sum(np.abs(v.astype(np.complex128)))


def cx_astype_string(v):
    return np.sum(np.abs(v.astype("complex128")))


def cx_dtype_keyword(v):
    z = np.zeros(3, dtype=complex) + v
    return np.sum(np.abs(z))


def cx_dtype_positional(v):
    z = np.zeros(3, "c16") + v
    return np.sum(np.abs(z))


def cx_array_dtype(v):
    return np.sum(np.abs(np.array(v, dtype=np.complex64)))


def cx_constructor(v):
    return abs(complex(v[0], v[1]))


def cx_scalar_type(v):
    z = np.complex128(v[0])
    return abs(z * z)


def cx_fft(v):
    return np.sum(np.abs(np.fft.fft(v)))


def cx_rfft(v):
    return np.sum(np.abs(np.fft.rfft(v)) ** 2)


def cx_global_array(v):
    return np.sum(np.abs(v * W_COMPLEX))


def cx_global_number(v):
    return np.sum(np.abs(v * Z_COMPLEX))


def cx_global_tuple(v):
    return np.sum(np.abs(v * P_COMPLEX[1]))


def cx_real(v):
    return np.sum(np.real(v) * v)


def cx_imag(v):
    return np.sum(np.imag(v) + v)


def cx_real_attribute(v):
    z = v * 1.0
    return np.sum(z.real * v)


def cx_conj(v):
    return np.sum(v.conj() * v)


def cx_angle(v):
    return np.sum(np.angle(v) + v)


def cx_emath(v):
    return np.sum(np.abs(np.emath.sqrt(v - 2.0)))


def _rotate(x):
    return x * 1j


def cx_in_helper(v):
    return np.sum(np.abs(_rotate(v)))


# Complex intermediates from real arguments: differentiated (a real loss), the real argument's
# gradient the real part (tests/e2e/test_complex.py has the rest).
COMPLEX_SUPPORTED = [cx_literal, cx_literal_add, cx_exp, cx_astype, cx_astype_numpy, cx_astype_string, cx_fft,
                     cx_dtype_keyword, cx_dtype_positional, cx_rfft, cx_global_array, cx_global_number,
                     cx_global_tuple, cx_real, cx_imag,
                     cx_real_attribute, cx_conj, cx_angle, cx_in_helper]
# Functions outside the allow-list: refused at their line.
COMPLEX_REFUSED = [cx_array_dtype, cx_constructor, cx_scalar_type, cx_emath]


@pytest.mark.parametrize("f", COMPLEX_SUPPORTED)
def test_complex_intermediates_of_real_arguments(f):
    all_modes(f, np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("f", COMPLEX_REFUSED)
def test_complex_values_are_refused_at_their_line(f):
    import inspect
    v = np.array([1.0, 2.0, 3.0])
    for call in (lambda: grad(f)(v), lambda: value_and_grad(f)(v), lambda: vjp(f, v)):
        with pytest.raises(ComplexError, match="complex") as info:
            call()
        assert isinstance(info.value, AdjointCompilerError)
        loc = info.value.loc
        target = _rotate if f is cx_in_helper else f
        lines, start = inspect.getsourcelines(target)
        assert loc is not None and loc.file == inspect.getsourcefile(target)
        assert start < loc.line < start + len(lines)
        assert str(loc.line) in str(info.value)


def cx_power(x):
    y = x - 5.0
    return abs(y ** 0.5)


def cx_power_unread(x):
    y = x ** 0.5  # `grad` does not compute y: the gradient itself turns complex
    return y * 3.0


@pytest.mark.parametrize("f", [cx_power, cx_power_unread])
def test_a_value_turning_complex_at_run_time_is_refused(f):
    for call in (lambda: grad(f)(-2.0), lambda: value_and_grad(f)(-2.0), lambda: vjp(f, -2.0)[1](1.0)):
        with pytest.raises(ComplexError, match="became complex at run time.*line"):
            call()
    all_modes(f, 7.0 if f is cx_power else 2.0)  # real where the base is positive


def cx_power_of_an_item(x):
    v = x.tolist()
    return abs(v[0] ** 1.5) + x[1]  # (its gradient came out real, of the wrong sign: +3, not -3)


def test_a_power_turning_complex_is_refused_where_it_is_computed():
    from adjoint_compiler import jvp
    x = np.array([-4.0, 1.0])
    for call in (lambda: grad(cx_power_of_an_item)(x), lambda: vjp(cx_power_of_an_item, x),
                 lambda: jvp(cx_power_of_an_item, (x,), (np.ones(2),))):
        with pytest.raises(ComplexError, match="became complex at run time.*line"):
            call()
    np.testing.assert_allclose(grad(cx_power_of_an_item)(np.array([4.0, 1.0])), [3.0, 1.0])


def real_dtypes(v):
    z = np.zeros(3, dtype=float) + v.astype("f8")
    return np.sum(z ** 2) + np.sum(np.abs(v) ** 1.5)


def test_real_dtypes_and_array_powers_are_not_refused():
    all_modes(real_dtypes, np.array([1.0, -2.0, 3.0]))


def zt_nested(p, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            s = s + p[0] * p[1] + p[2] / p[0] + p[7] * 0.0
    return s + np.sum(p)


def zt_nested_partial(p, n, m):
    s = 0.0
    for i in range(n):
        s = s + p[i]
        for j in range(m):
            s = s * p[5] + p[j]
    return s + np.sum(p)


@pytest.mark.parametrize("n,m", [(0, 0), (0, 2), (2, 0)])
@pytest.mark.parametrize("f", [zt_nested, zt_nested_partial])
def test_zero_trip_nested_loops(f, n, m):
    all_modes(f, V.copy(), n, m)


def unpack_three_into_two(x):
    t = (x, x * 2, x * 3)
    a, b = t
    return np.sum(a * b)


def unpack_an_array(x):
    a, b = x  # (Python raises unless x has two rows)
    return np.sum(a * b)


def unpack_a_helper_pair(x):
    a, (b, c) = x[0], (x[1], x[2])
    return a * b * c


def test_unpacking_of_another_length_raises_as_python_does():
    from adjoint_compiler.errors import CompileError
    with pytest.raises(CompileError, match="too many values to unpack") as info:
        grad(unpack_three_into_two)(np.ones(3))
    assert "a, b = t" in str(info.value)
    with pytest.raises(ValueError, match="too many values to unpack"):
        grad(unpack_an_array)(np.ones(3))
    with pytest.raises(ValueError, match="not enough values to unpack"):
        grad(unpack_an_array)(np.ones(1))
    x = np.array([1.5, 2.0])  # two items: a b
    np.testing.assert_allclose(grad(unpack_an_array)(x), [2.0, 1.5])
    np.testing.assert_allclose(grad(unpack_a_helper_pair)(np.array([2.0, 3.0, 5.0])), [15.0, 10.0, 6.0])


def builtin_max_of_nan(x):
    v = x[0] * np.nan
    return max(v, 1.0) + min(x[1], x[2], 2.0) * 3.0  # (the adjoint divided by no tied items: a crash)


def test_builtin_max_of_a_nan_gives_the_nan_item_the_gradient():
    x = np.array([1.0, 2.5, 0.5])
    with np.errstate(invalid="ignore"):
        g = grad(builtin_max_of_nan)(x)
    assert np.isnan(g[0])  # (Python's max keeps the nan: its derivative is nan, as in NumPy)
    np.testing.assert_array_equal(g[1:], [0.0, 3.0])


def appended_while_iterated(x):
    xs = [x[0], x[1]]
    s = 0.0
    for v in xs:
        s = s + v
        if len(xs) < 4:
            xs.append(v * 2.0)  # (Python's loop sees the new items: the loop ran over two)
    return s


def rebound_while_iterated(x):
    xs = [x[0], x[1]]
    s = 0.0
    for v in xs:
        s = s + v
        xs = xs + [v * 2.0]  # (a new list: the loop goes on over the old one, as in Python)
    return s + sum(xs)


def test_a_list_resized_while_iterated_is_refused_and_a_rebound_one_is_not():
    from adjoint_compiler.errors import UnsupportedSyntaxError
    with pytest.raises(UnsupportedSyntaxError, match="changes the length of `xs`") as info:
        grad(appended_while_iterated)(np.array([1.0, 2.0]))
    assert info.value.loc is not None and "xs.append" in str(info.value)
    np.testing.assert_allclose(grad(rebound_while_iterated)(np.array([1.0, 2.0])), [4.0, 4.0])


def appended_to_an_array(x):
    a = x * 2.0
    a.append(x[0])  # (Python: AttributeError; was `a + [x[0]]`, a broadcast sum)
    return np.sum(a)


def popped_from_an_item(x):
    rows = [[x[0], x[1]], x * 1.0]
    last = rows[1]
    last.pop()  # (an array: AttributeError, checked at run time)
    return np.sum(last)


def extended(x):
    xs = [x[0]]
    xs.extend([x[1] * 2.0, x[2]])
    rows = []
    rows.extend(np.outer(x, x))
    return sum(v * v for v in xs) + sum(np.sum(r) for r in rows)


def test_list_methods_of_what_is_no_list_raise_and_extend_works():
    from adjoint_compiler.errors import CompileError
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(CompileError, match="has no method `.append"):
        grad(appended_to_an_array)(x)
    with pytest.raises(AttributeError, match="pop"):
        grad(popped_from_an_item)(x)
    s = np.sum(x)  # sum of outer(x, x) = s^2
    np.testing.assert_allclose(grad(extended)(x), [2 * x[0] + 2 * s, 8 * x[1] + 2 * s, 2 * x[2] + 2 * s])


def list_slice_shrunk(x):
    items = [x[0], x[1], x[2]]
    items[0:2] = [x[0] * 2]  # (the adjoint read the list as three items long: a crash)
    return items[1]


def list_slice_from_an_array(x):
    items = [x[0], x[1], x[2]]
    items[1:3] = x[1:3] * 2.0  # (Python iterates the array: a crash in the generated code)
    return items[1] * items[2]


def test_assignment_to_a_slice_of_a_list_of_another_length_is_refused():
    from adjoint_compiler.errors import UnsupportedSyntaxError
    for f in (list_slice_shrunk, list_slice_from_an_array):
        with pytest.raises(UnsupportedSyntaxError, match="to a slice of a list of 3 items"):
            grad(f)(np.array([1.0, 2.0, 3.0]))

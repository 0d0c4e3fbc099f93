"""A list or tuple in arithmetic: `seq * n` repeats it for an integer `n`, and is NumPy's
elementwise product for an array `n` (`np.sin(x) * x` of a list `x`); `seq + seq` joins. Before
the fix, the elementwise product took the repetition's gradient: a silently wrong number.
Checked against finite differences, in reverse and forward mode."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import grad, jvp
from adjoint_compiler.testing import check_grads, check_jvp


def sin_times_list(x):
    return np.sum(np.sin(x) * x)


def list_times_array(x):
    return np.sum(x * np.cos(x))


def repeated(x, n):
    return np.sum(np.array([x[0], x[1] * 2.0] * n) ** 2)


def repeated_then_scaled(x):
    return np.sum(np.asarray([x[0] * 1.0] * 3) * np.arange(3.0))


@pytest.mark.parametrize("f", [sin_times_list, list_times_array])
@pytest.mark.parametrize("kind", [list, tuple])
def test_a_sequence_times_an_array_is_elementwise(f, kind):
    x = kind([0.4, -1.3, 2.0])
    g = grad(f)(x)
    assert type(g) is kind
    v = np.array(x)
    fd = [(f(kind(v + e)) - f(kind(v - e))) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    value, tangent = jvp(f, (x,), (kind([1.0, 0.0, 0.0]),))
    np.testing.assert_allclose(tangent, fd[0], rtol=1e-6)


def test_a_sequence_times_an_integer_repeats():
    assert grad(repeated)([1.0, 2.0], 3) == [6.0, 48.0]  # 3 copies of x0 ** 2 and of (2 x1) ** 2
    check_grads(repeated_then_scaled, np.array([0.5, 1.0]))


# -- `+` and `*` of values that may or may not be lists or tuples (ir.PLUS, ir.TIMES) --------------
def rotated(x):
    y = [x[0], x[1]]
    z = y[1:] + y[:1]  # a slice of a list is a list: joined
    return z[0]


def slice_repeated(x):
    y = [x[0], x[1], x[2]]
    return sum(y[1:] * 2)


def nested_joined(x):
    m = [[x[0], x[1]], [x[2]]]
    z = m[0] + m[1]  # items of a list: lists here, known only at run time
    return z[0] * z[2] + z[1]


def nested_repeated(x):
    m = [[x[0], x[1]], [x[2]]]
    return sum(m[0] * 2)


def nested_arrays_added(x):
    m = [x[:2], x[-2:]]
    return np.sum((m[0] + m[1]) ** 2) + np.sum(m[1] * 2)  # items that are arrays: NumPy's + and *


X3 = np.array([0.3, -0.7, 1.2])


@pytest.mark.parametrize("f, expected", [
    (rotated, [0.0, 1.0, 0.0]),
    (slice_repeated, [0.0, 2.0, 2.0]),
    (nested_joined, [X3[2], 1.0, X3[0]]),
    (nested_repeated, [2.0, 2.0, 0.0]),
    (nested_arrays_added, [2 * (X3[0] + X3[1]), 2 * (X3[0] + X3[1]) + 2 * (X3[1] + X3[2]) + 2,
                           2 * (X3[1] + X3[2]) + 2]),
])
def test_plus_and_times_follow_what_ran(f, expected):
    np.testing.assert_allclose(grad(f)(X3.copy()), expected, atol=1e-12)  # (the analytic gradient)
    check_grads(f, X3.copy())
    direction = np.array([0.5, -1.0, 2.0])
    _, tangent = jvp(f, (X3.copy(),), (direction,))
    np.testing.assert_allclose(tangent, np.dot(expected, direction), atol=1e-12)


def test_values_that_may_be_sequences_get_plus_and_times():
    from adjoint_compiler import ir
    from adjoint_compiler.pipeline import compile_gradient

    fn = compile_gradient(nested_joined, (0,), ("r1",)).ir
    assert [s.prim for s in fn.body if getattr(s.target, "name", "") == "z"] == [ir.PLUS]
    fn = compile_gradient(rotated, (0,), ("r1",)).ir
    assert [s.prim for s in fn.body if getattr(s.target, "name", "") == "z"] == [ir.CONCAT]


# -- copies of a list: a new list holding the same items -------------------------------------------------
# Before the fix `xs.copy()` of a list was taken for an array: its tangent was `np.copy(xs_dot)`
# (an array, so `append` added elementwise), its gradient was accumulated into as an array's, and
# it was taken to share no item with `xs`; `xs[1:]` joined by `append` was taken for an array too.
def copy_then_append(x):
    a = [x[0], x[1]]
    b = a.copy()
    b.append(x[2])
    return sum(b) * b[1]


def copy_of_rows(x):
    a = [[x[0], x[1]], [x[2]]]
    b = a.copy()
    b.append([x[0] * x[1]])
    return sum(sum(r) for r in b) * a[0][1]


def slice_then_append(x):
    a = [x[0], x[1], x[2]]
    b = a[1:]
    b.append(x[0])
    return sum(b) * b[0]


def tuple_slice_joined(x):
    a = (x[0], x[1], x[2])
    b = a[1:] + (x[0],)
    return sum(b) * b[0]


def copies_in_a_loop(x):
    acc = [x[0]]
    for v in x:
        nxt = acc.copy()
        nxt.append(v * nxt[-1])
        acc = nxt
    return sum(acc)


def list_then_append(x):
    a = [x[0], x[1]]
    b = list(a)
    b.append(x[2])
    c = b[:]
    c.append(x[0] * x[2])
    return sum(c) * c[0]


@pytest.mark.parametrize("f", [copy_then_append, copy_of_rows, slice_then_append, tuple_slice_joined,
                               copies_in_a_loop, list_then_append])
def test_a_copy_of_a_list_is_a_list(f):
    from adjoint_compiler.testing import check_jvp
    x = np.array([0.3, -0.7, 1.2])
    check_grads(f, x)
    check_jvp(f, x)


def test_the_issue_example_tangent():
    def f(x):
        a = [x[0], x[1]]
        b = a.copy()
        b.append(x[2])
        return sum(b)
    value, tangent = jvp(f, (np.array([0.3, -0.7, 1.2]),), (np.array([0.0, 0.0, 1.0]),))
    assert np.isclose(value, 0.8) and tangent == 1.0  # d sum / d x[2]


def items_updated_through_a_copy(x):
    a = [x * 1.0, x * 2.0]
    b = a.copy()
    b[0] += 1.0  # also a[0]: the copy holds the same arrays
    return np.sum(a[0] ** 2) + np.sum(b[0])


def test_a_copy_of_a_list_shares_its_items():
    from adjoint_compiler.errors import MutationError
    x = np.array([0.3, -0.7, 1.2])
    with pytest.raises(MutationError, match="update of an item of the list"):
        grad(items_updated_through_a_copy)(x)
    with pytest.raises(MutationError, match="update of an item of the list"):
        jvp(items_updated_through_a_copy, (x,), (x,))


def list_times_zero_d(x, n):
    return np.sum(np.asarray([x[0], x[1] * 2.0] * n) ** 2)


def test_a_zero_d_integer_array_multiplies_a_list_elementwise():
    x = np.array([0.5, 1.0])
    # [x0, 2 x1] * np.array(3) is [3 x0, 6 x1] (NumPy), not three copies: the analytic gradient
    np.testing.assert_allclose(grad(list_times_zero_d)(x, np.array(3)), [18 * x[0], 72 * x[1]])
    np.testing.assert_allclose(grad(list_times_zero_d)(x, 3), [6 * x[0], 24 * x[1]])  # (a repetition)


def fresh_items_updated(x):
    acc = [np.zeros(2), np.zeros(2)]
    for k in range(3):
        acc[k % 2] += x * (k + 1)
    return np.sum(acc[0] * acc[1])


def appended_items_updated(x):
    acc = []
    for _ in range(2):
        acc.append(np.ones(2))
    acc[1] *= x
    return np.sum(acc[0] + acc[1] ** 2)


def zero_d_items_updated(x):
    acc = [np.array(0.0), np.array(1.0)]
    for k in range(4):
        acc[k % 2] += np.sum(x) * k
    return acc[0] * acc[1]


def test_items_only_the_list_holds_are_updated_in_place():
    # (refused before as items "another name may hold": nothing else holds them)
    x = np.array([0.7, -0.3])
    np.testing.assert_allclose(grad(fresh_items_updated)(x), 16.0 * x)  # sum((x + 3x) * 2x)
    np.testing.assert_allclose(grad(appended_items_updated)(x), 2.0 * x)
    s = np.sum(x)
    np.testing.assert_allclose(grad(zero_d_items_updated)(x), [16.0 * s + 2.0] * 2)  # (2s)(1 + 4s)


def zero_d_item_read_before(x):
    out = [np.array(1.0)]
    a = out[0]
    out[0] += x  # NumPy changes `a` too: a 0-d array is no number
    return a * x + out[0]


def item_placed_twice(x):
    z = np.zeros(2)
    out = [z, z]
    out[0] += x  # also out[1]
    return np.sum(out[1] * x)


def item_repeated(x):
    out = [np.zeros(2)] * 2
    out[0] += x
    return np.sum(out[1] * x)


def test_an_item_another_holder_sees_is_not_updated_in_place():
    from adjoint_compiler.errors import MutationError
    for f, holder in ((zero_d_item_read_before, "`a`"), (item_placed_twice, "`z`"), (item_repeated, "")):
        with pytest.raises(MutationError, match=f"update of an item of the list `out`: {holder}"):
            grad(f)(np.array([0.7, -0.3]) if f is not zero_d_item_read_before else 0.7)


def list_extended_by_tuples(x):
    xs = [x[0]]
    t = (x[1] * 2.0, x[2])
    for _ in range(2):
        xs += t  # a list `+=` any sequence extends it (`xs = xs + t` would raise)
    xs += (np.sin(x[0]),)
    ys = (x[0],)
    ys += (x[1],)
    return sum(v * v for v in xs) + ys[1] * ys[0]


def test_a_list_updated_by_a_tuple_is_extended():
    x = np.array([0.3, 0.5, 0.7])
    check_grads(list_extended_by_tuples, x)
    check_jvp(list_extended_by_tuples, x)


def test_sum_joining_sequences_is_refused_where_a_numeric_sum_differentiates():
    """`sum(parts, [])` joins lists (its gradient once went through NumPy's sum: zeros, or a crash
    adding to a None slot); a numeric start still differentiates."""
    from adjoint_compiler import UnsupportedSyntaxError

    def joined(x):
        return sum([[x[0], x[1]], [x[2]]], [])[2]

    def joined_tuples(x):
        flat = sum(((x[0], x[1]), (x[2],)), ())
        return flat[2] * flat[0]

    def numeric(x):
        return sum([x[0], x[1] ** 2], 1.0) + sum(x ** 2)

    x = np.array([0.5, -0.3, 0.8])
    for f in (joined, joined_tuples):
        with pytest.raises(UnsupportedSyntaxError, match="joins sequences"):
            grad(f)(x)
    np.testing.assert_allclose(grad(numeric)(x), [2 * 0.5 + 1.0, 2 * -0.3 * 2, 1.6])

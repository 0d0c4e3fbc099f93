"""The plain pass: helper calls whose run-time checks are settled become NumPy statements."""
from __future__ import annotations

import gast
import numpy as np

from adjoint_compiler import adjoint_source, grad, plain
from adjoint_compiler import runtime as rt
from adjoint_compiler.printing import to_source
from adjoint_compiler.simplify import Code
from adjoint_compiler.testing import check_grads

FACTS = plain.Facts(ints={"i", "j"}, ranks={"b": 1, "m": 2, "g": 0})


def rewritten(*lines, facts=FACTS):
    code = plain.rewrite([Code(gast.parse(line).body[0], None) for line in lines], facts)
    return [to_source(c.stmt).strip() for c in code]


def test_an_add_at_a_basic_index_adds_in_place():
    assert rewritten("b = rt.add_at(b, i, g)") == ["b[i] += g"]
    assert rewritten("c = rt.add_at(b, slice(1, -1, None), g)") == ["b[1:-1] += g", "c = b"]


def test_an_add_at_any_other_index_stays():
    """`k` may hold an integer array (duplicates accumulate with np.add.at)."""
    assert rewritten("b = rt.add_at(b, k, g)") == ["b = rt.add_at(b, k, g)"]


def test_the_total_of_written_slots_reads_them():
    assert rewritten("v = rt.written_total(b, i)") == ["v = b[i]"]
    assert rewritten("v = rt.written_total(m, i)") == ["v = m[i].sum()"]
    assert rewritten("v = rt.written_total(m, (i, j))") == ["v = m[i, j]"]
    assert rewritten("v = rt.written_total(b, slice(None, -2, None))") == ["v = b[:-2].sum()"]


def test_written_slots_are_copied_unless_one():
    assert rewritten("v = rt.written_adjoint(b, -1)") == ["v = b[-1]"]
    assert rewritten("v = rt.written_adjoint(m, 0)") == ["v = m[0].copy()"]


def test_zeroing_slots_writes_zeros():
    assert rewritten("a = rt.zero_slots(b, i)") == ["b[i] = 0.0", "a = b"]


def test_unknown_ranks_dtypes_or_indices_keep_the_helper():
    keep = ["v = rt.written_total(x, i)",  # x: rank (so: float) unknown
            "v = rt.written_total(b, i, into)",  # the array written may hold integers
            "v = rt.written_total(m, (i, i, i))",  # more indices than axes: the helper raises
            "a = rt.zero_slots(g, i)",  # a 0-d gradient may be a number
            "v = rt.written_adjoint(b, mask)"]
    for line in keep:
        assert rewritten(line) == [line]


def test_integer_powers():
    assert rewritten("d = rt.pow_base_derivative(x, 2)") == ["d = 2 * x"]
    assert rewritten("d = rt.pow_base_derivative(x, 3)") == ["d = 3 * x ** 2"]
    for line in ("d = rt.pow_base_derivative(x, 0.5)", "d = rt.pow_base_derivative(x, 1)",
                 "d = rt.pow_base_derivative(x, y)"):
        assert rewritten(line) == [line]


def slot_loop(x, w):
    b = np.zeros(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        b[i] = x[i] * w
        s = s + b[i] ** 3
    return s + np.sum(b)


def slot_loop_integers(x, w):
    b = np.zeros(x.shape[0], dtype=int)
    s = 0.0
    for i in range(x.shape[0]):
        b[i] = x[i] * w
        s = s + x[i] * b[i]
    return s


def test_element_writes_in_a_loop_are_plain_numpy():
    src = adjoint_source(slot_loop, args=(np.ones(3), 0.5))
    for helper in ("rt.add_at(", "rt.written_total(", "rt.zero_slots(", "rt.pow_base_derivative("):
        assert helper not in src
    check_grads(slot_loop, np.array([0.3, -1.2, 2.0]), 0.7, wrt=(0, 1))


def test_writes_into_integers_keep_their_checks():
    """The truncated value written into an integer array gets no gradient (at run time)."""
    x = np.array([0.3, -1.2, 2.5])
    src = adjoint_source(slot_loop_integers, args=(x, 0.7))
    assert "rt.written_total(" in src
    gx, gw = grad(slot_loop_integers, wrt=(0, 1))(x, 0.7)
    np.testing.assert_allclose(gx, np.trunc(x * 0.7))
    assert gw == 0.0


def test_a_copy_added_in_place_is_read_in_place():
    facts = plain.Facts(set(), {"g": 1, "u": 1, "v": 1}, {"g": "A", "u": "A", "v": "B"})
    assert rewritten("x += rt.copied_adjoint(g, u, True)", facts=facts) == ["x += g"]
    assert rewritten("x += rt.copied_adjoint(g, v, True)", facts=facts) == ["x += rt.unbroadcast(g, v)"]
    keep = ["x = rt.copied_adjoint(g, u, True)",  # a first assignment: x must not be g
            "x += rt.copied_adjoint(g, u, mask)",  # only the masked slots
            "x += rt.copied_adjoint(g, u, True, b)"]  # b may hold integers
    for line in keep:
        assert rewritten(line, facts=facts) == [line]


def copied_back(u0, k):
    u = u0.copy()
    v = u0.copy()
    for _ in range(3):
        v[1:] = u[1:] * k + u[:-1]
        np.copyto(u, v)
    return np.sum(u * u)


def test_copyto_back_in_a_loop():
    src = adjoint_source(copied_back, args=(np.ones(4), 0.5))
    assert "rt.copied_adjoint(" not in src and "_saved" not in src  # no copy, no save of v's slots
    check_grads(copied_back, np.array([0.5, -1.0, 2.0, 0.3]), 0.7, wrt=(0, 1))


SHAPED = plain.Facts(set(), {"x": 1, "y": 1, "s": 0}, {"x": "A", "y": "B"})


def test_a_broadcast_number_multiplied_elementwise_is_read_as_the_number():
    assert rewritten("a = rt.expand_reduced(1.0 / rt.reduced_size(x, None), x, None, False)",
                     "b = rt.chain(a, 2 * x)", "c = a * x", facts=SHAPED) == \
        ["a = rt.broadcast_number(1.0 / rt.reduced_size(x, None))", "b = rt.chain(a * 2, x)", "c = a * x"]
    assert rewritten("a = rt.expand_reduced(1.0, x, None, False)", "c = a * x", facts=SHAPED) == ["c = x"]  # (unit products)


def test_a_number_times_a_scaled_array_scales_the_number():
    """`rt.chain(g, k * x)` of a number g: the literal scales the number, the array is read once."""
    assert rewritten("b = rt.chain(s, 2 * x)", "c = rt.chain(s, x * -0.5)", facts=SHAPED) == \
        ["b = rt.chain(s * 2, x)", "c = rt.chain(s * -0.5, x)"]
    keep = [("b = rt.chain(a, 2 * x)",),  # `a` may be an array
            ("b = rt.chain(s, 0.0 * x)",),  # (0 * inf is nan: the product's, not a zero cotangent's)
            ("b = rt.chain(s, y * x)",)]  # no literal
    for lines in keep:
        assert rewritten(*lines, facts=SHAPED) == list(lines)


def test_a_chain_of_a_number_scaled_by_its_one_reader_scales_the_number():
    assert rewritten("b = rt.chain(s, x)", "c = -b", facts=SHAPED) == ["c = rt.chain(-s, x)"]
    assert rewritten("b = rt.chain(s, x)", "d = y * 2.0", "c = 3.0 * b", facts=SHAPED) == \
        ["d = y * 2.0", "c = rt.chain(3.0 * s, x)"]
    keep = [("b = rt.chain(s, x)", "c = -b", "e = b + 1.0"),  # read twice
            ("b = rt.chain(s, x)", "s = 2.0", "c = -b"),  # the number rebound between
            ("b = rt.chain(s, x)", "c = b * y"),  # scaled by an array
            ("b = rt.chain(s, x)", "c = b / 2.0")]  # (a division by a Python zero raises)
    for lines in keep:
        assert rewritten(*lines, facts=SHAPED) == list(lines)


def test_a_broadcast_number_read_any_other_way_stays_an_array():
    keep = [("a = rt.expand_reduced(s, x, None, False)", "b = rt.chain(a, 2 * y)"),  # another shape
            ("a = rt.expand_reduced(s, x, None, False)", "b = rt.unbroadcast(a, y)"),  # not a product
            ("a = rt.expand_reduced(s, x, None, False)", "s = 2.0", "b = rt.chain(a, x)"),  # s rebound
            ("a = rt.expand_reduced(s, x, 0, False)", "b = rt.chain(a, x)")]  # along one axis
    for lines in keep:
        assert rewritten(*lines, facts=SHAPED) == list(lines)


def test_a_broadcast_number_through_negation_and_any_slot_by_slot_operation_is_read_as_the_number():
    assert rewritten("a = rt.expand_reduced(s, x, None, False)", "n = -a", "c = n * x",
                     "d = a / (1.0 + np.exp(np.minimum(-x, 709.0)))", "e = x - 2.0 * a", facts=SHAPED) == \
        ["a = rt.broadcast_number(s)", "n = -a", "c = n * x", "d = a / (1.0 + np.exp(np.minimum(-x, 709.0)))",
         "e = x - 2.0 * a"]


def test_a_number_made_from_a_broadcast_one_stays_broadcast_where_it_cannot_be_read_as_a_number():
    assert rewritten("a = rt.expand_reduced(s, x, None, False)", "n = -a", "c = rt.unbroadcast(n, y)",
                     facts=SHAPED) == ["a = rt.broadcast_number(s)", "n = rt.expand_reduced(-a, x, None, False)",
                                       "c = rt.unbroadcast(n, y)"]
    keep = [("a = rt.expand_reduced(s, x, None, False)", "n = -a", "n += y"),  # `n` updated: an array of its own
            ("a = rt.expand_reduced(s, x, None, False)", "c = np.maximum(a, y)"),  # another shape
            ("a = rt.expand_reduced(s, x, None, False)", "c = np.add(a, x, out=x)")]  # not one ufunc's inputs alone
    for lines in keep:
        assert rewritten(*lines, facts=SHAPED) == list(lines)


def test_a_broadcast_number_keeps_the_dtype_the_broadcast_array_had():
    """The gradient of a mean of float32 values was a float64 array (a Python float broadcast); read
    as the number, it is a float64 number, so the chain is computed in float64 as before (a Python
    float there would make it float32: 0.2 * 1.4e-45 underflows to 0)."""
    def mean_of_product(x, y):
        return np.mean(y * np.exp(x))

    x, y = np.full(5, 80.0, np.float32), np.full(5, 1.4e-45, np.float32)
    gx = grad(mean_of_product, (0, 1))(x, y)[0]
    assert gx.dtype == np.float32
    np.testing.assert_allclose(gx, np.exp(80.0) * float(y[0]) / 5, rtol=1e-6)


def test_a_negated_mean_gradient_matches_finite_differences():
    def poisson(w, X, y):
        eta = X @ w
        return np.mean(np.exp(eta) - y * eta) - np.sum(-w) / len(w)
    rng = np.random.default_rng(0)
    args = (0.1 * rng.normal(size=4), rng.normal(size=(6, 4)), rng.poisson(1.0, 6).astype(float))
    check_grads(poisson, *args, wrt=0)
    source = adjoint_source(poisson, args=args)
    assert ", y, None, False)" not in source  # (the mean's gradient is read as one number)
    assert "rt.expand_reduced(sum_neg_w_bar, w, None, False)" in source  # (`w_bar = -...` is updated next)


def test_a_chain_by_a_nonzero_number_is_the_product():
    assert rewritten("d = rt.chain(1.0, 2 * x)") == ["d = 2 * x"]
    assert rewritten("d = rt.chain(0.5, x)") == ["d = 0.5 * x"]
    assert rewritten("d = rt.chain(-2.0, x)") == ["d = -2.0 * x"]
    for line in ("d = rt.chain(0.0, x)", "d = rt.chain(g, x)"):  # zero (or maybe zero): the helper
        assert rewritten(line) == [line]


DIFFERENTIABLE = plain.Facts(ints={"i", "j"}, ranks={"b": 1, "m": 2, "g": 0}, differentiable=True)


def test_code_to_be_differentiated_again_reads_one_slot_through_the_helper():
    """A gradient read back (nesting) keeps `rt.written_total(b, i)`: as `b[i]`, the compiler
    reading it could not tell a scalar from a view of `b`, written next; the in-place zeroing
    and adding are write nodes it follows, and several slots are summed or copied as before."""
    assert rewritten("v = rt.written_total(b, i)", facts=DIFFERENTIABLE) == ["v = rt.written_total(b, i)"]
    assert rewritten("v = rt.written_adjoint(b, -1)", facts=DIFFERENTIABLE) == ["v = rt.written_adjoint(b, -1)"]
    assert rewritten("v = rt.written_total(m, i)", facts=DIFFERENTIABLE) == ["v = m[i].sum()"]
    assert rewritten("c = rt.zero_slots(b, i)", facts=DIFFERENTIABLE) == ["b[i] = 0.0", "c = b"]
    assert rewritten("b = rt.add_at(b, i, g)", facts=DIFFERENTIABLE) == ["b[i] += g"]


def test_a_chain_of_numbers_is_its_branches_inline():
    """`rt.chain(g, d)` of names known to hold numbers (ndim 0): no call per loop trip; where the
    cotangent is zero the result is zero even for an infinite or nan derivative, as the helper's."""
    facts = plain.Facts(ints=set(), ranks={"g": 0, "x": 0, "b": 1})
    assert rewritten("y = rt.chain(g, 2.0 * x)", facts=facts) == ["y = g * (2.0 * x) if g else g * 0.0"]
    assert rewritten("y = rt.chain(g, 2.0 * b)", facts=facts) == ["y = rt.chain(g * 2.0, b)"]  # (an array: a call)
    assert rewritten("y = rt.chain(g, np.cos(x))", facts=facts) == ["y = rt.chain(g, np.cos(x))"]  # (a call)
    for g, x in ((0.0, float("nan")), (0.0, float("inf")), (1.5, 2.0), (-2.0, float("inf"))):
        with np.errstate(all="ignore"):
            inline = g * (2.0 * x) if g else g * 0.0
            helper = rt.chain(g, 2.0 * x)
        np.testing.assert_equal(inline, helper)


def test_a_product_by_one_that_nothing_updates_is_its_operand():
    assert rewritten("a = 1.0 * b", "v = a[::2].sum()") == ["a = b", "v = a[::2].sum()"]
    assert rewritten("a = b * 1", "c = a * m") == ["a = b", "c = a * m"]
    assert rewritten("x += 1.0 * b", "y -= b * 1.0") == ["x += b", "y -= b"]


def test_a_product_by_one_stays_where_an_array_may_be_updated():
    keep = [("a = 1.0 * b", "a += m"),  # the new array is updated in place
            ("a = 1.0 * b", "a[0] = 0.0"),
            ("a = 1.0 * b", "a = rt.zero_slots(a, k)"),
            ("a = 1.0 * b", "c = a", "c += m"),  # (updated under another name)
            ("a = 1.0 * b", "b[1] += g"),  # the operand changes later
            ("a = 1.0 * b", "np.copyto(b, m)"),
            ("a = 1.0 * b", "np.add.at(a, k, g)"),
            ("a = 1.0 * b", "a.fill(0.0)"),
            ("a = 1.0 * x",),  # x: not known to hold floats (1.0 * an integer array makes floats)
            ("a = 2.0 * b",)]
    for lines in keep:
        assert rewritten(*lines)[0] == lines[0], lines


def weighted(x, w):
    return np.sum(w * np.sin(x)) + np.sum(x * w)


def test_a_weighted_sum_reads_its_weights_without_copying_them():
    x, w = np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 2.0, 4)
    source = adjoint_source(weighted, args=(x, w))
    assert "sin_x_bar = w\n" in source and "x_bar = 1.0 * w\n" in source  # (x_bar is updated in place)
    w_before = w.copy()
    g = grad(weighted)(x, w)
    np.testing.assert_allclose(g, w * np.cos(x) + w, rtol=1e-12)  # (by hand)
    g[:] = 0.0
    np.testing.assert_array_equal(w, w_before)  # (the gradient is no view of `w`)
    g = grad(lambda x, w: np.sum(x * w))(x, w)
    assert not np.shares_memory(g, w)
    np.testing.assert_array_equal(g, w)

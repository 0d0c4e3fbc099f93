"""Soundness of the rule table (issue 12, families 7, 15 and 16): index tricks (`np.r_`, `np.c_`)
and the interleaved einsum form get their gradients or a located refusal; statements on
constants need no rule; a missing rule is reported with what is true about the callee and how to
register a rule, with `nondifferentiable` explained as a zero gradient. Gradients are checked
against finite differences."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.special

from adjoint_compiler import MissingRuleError, grad
from adjoint_compiler.testing import check_grads

V3 = np.array([0.5, -1.2, 2.0])
M23 = np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]])
W = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])


def line_of(func, text: str) -> int:
    lines, first = inspect.getsourcelines(func)
    return [first + i for i, ln in enumerate(lines) if text in ln][0]


# -- np.r_ and np.c_ ----------------------------------------------------------------------------
def r_two(a): return np.sum(np.r_[a, 2 * a] ** 2)
def r_scalars(a): return np.sum(np.r_[a[0], a, 3.0, a[1] * a[2]] ** 2 * np.arange(6.0))
def r_slice(a): return np.sum(np.r_[a, 0:3, a[::-1]] * np.arange(9.0) * a[0])
def r_linspace_slice(a): return np.sum(np.r_[0.0:1.0:4j, a] ** 2)
def r_single(a): return np.sum(np.r_[a] * np.arange(3.0))
def r_matrix(m): return np.sum(np.r_[m, m * 2.0] ** 2 * np.arange(3.0))
def c_two(a): return np.sum(np.c_[a, 2 * a] ** 2)
def c_matrix(m): return np.sum(np.c_[m.T, m[0], 1.5 * m[1]] * np.arange(4.0))
def c_single(a): return np.sum(np.c_[a] ** 3)
def r_alias(a):
    join = np.r_
    return np.sum(join[a, np.sin(a)] ** 2)


@pytest.mark.parametrize("f,x", [(r_two, V3), (r_scalars, V3), (r_slice, V3), (r_linspace_slice, V3),
                                 (r_single, V3), (r_matrix, M23), (c_two, V3), (c_matrix, M23),
                                 (c_single, V3), (r_alias, V3)])
def test_index_tricks(f, x):
    check_grads(f, x)


def r_directive(a): return np.sum(np.r_["0,2", a, a])
def r_varied_slice(a): return np.sum(np.r_[0.0:a[0]:5j])
def r_tuple_variable(a):
    t = (a, a * 2.0)
    return np.sum(np.r_[t])
def s_varied(a): return np.sum(a[np.s_[0:2]]) + np.sum(np.s_[a] * 2.0)
def mgrid_varied(a): return np.sum(np.mgrid[0.0:a[0]:3j])


@pytest.mark.parametrize("f", [r_directive, r_varied_slice, r_tuple_variable, s_varied, mgrid_varied])
def test_index_tricks_refused_at_the_users_line(f):
    with pytest.raises(MissingRuleError) as info:
        grad(f)(V3)
    msg = str(info.value)
    assert f"line {line_of(f, 'return np.sum(')}" in msg, msg


def s_constant_index(a): return np.sum(a[np.s_[0:2]] * np.r_[1.0, 2.0]) + np.sum(np.mgrid[0:3] * a)


def test_index_tricks_on_constants_are_constants():
    check_grads(s_constant_index, V3)


# -- einsum, interleaved operand/sublist form ---------------------------------------------------
def e_dot(u):
    w = u * 2
    return np.einsum(u, [0], w, [0])


def e_output(m, v): return np.sum(np.einsum(m, [0, 1], v, [1], [0]) ** 2)
def e_trace(m): return np.einsum(m @ m.T, [0, 0])
def e_ellipsis(m): return np.sum(np.einsum(m, [Ellipsis, 1], m, [Ellipsis, 1], [Ellipsis]) * np.arange(2.0))
def e_outer(u, v): return np.sum(np.einsum(u, [0], v, [1], [0, 1]) * M23.T @ M23[:, :2])
def e_keywords(m, v): return np.sum(np.einsum("ij,j->i", m, v, optimize=True, dtype=np.float64) ** 2)


def test_einsum_sublists():
    check_grads(e_dot, V3)
    check_grads(e_output, M23, V3, wrt=(0, 1))
    check_grads(e_trace, M23)
    check_grads(e_ellipsis, M23)
    check_grads(e_outer, V3, np.array([1.0, -2.0]), wrt=(0, 1))
    check_grads(e_keywords, M23, V3, wrt=(0, 1))


# -- statements on constants need no rule ------------------------------------------------------
def k_float32(x): return np.sum(x * np.float32(0.5))
def k_global_method(x): return np.sum(x * W.sum(axis=0)) + np.sum(x * W.reshape(3, 2).sum(axis=1))
def k_unknown_on_constants(x):
    s = np.partition(W[0], 1)  # np.partition has no rule: fine on a constant
    q, r = np.linalg.qr(W.T)
    rng = np.random.default_rng(0)
    noise = rng.normal(size=3)
    return np.sum(x * s) + np.sum(x * q[:, 0]) + np.sum(x * noise) * r[0, 0]


def k_in_loop_and_branch(x):
    t = 0.0
    for i in range(3):
        if x[0] > 0:
            c = np.median(W[:, i])
        else:
            c = np.percentile(W[:, i], 30.0)
        t = t + x[i] * c
    return t


def k_other_argument(x, y): return np.sum(x * np.unwrap(y))


@pytest.mark.parametrize("f", [k_float32, k_global_method, k_unknown_on_constants, k_in_loop_and_branch])
def test_statements_on_constants_need_no_rule(f):
    check_grads(f, V3)
    check_grads(f, -V3)


def test_a_rule_is_needed_only_where_the_value_is_varied():
    check_grads(k_other_argument, V3, np.array([2.0, 1.0, 3.0]), wrt=0)  # y is not differentiated
    with pytest.raises(MissingRuleError):
        grad(k_other_argument, wrt=1)(V3, np.array([2.0, 1.0, 3.0]))


# -- missing-rule messages say what is true --------------------------------------------------------
class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k


SCALER = Scaler(2.0)


def m_unwrap(x): return np.sum(np.unwrap(x)) * 2.0
def m_spherical_jn(x): return np.sum(scipy.special.spherical_jn(1, x))
def m_bytes(x): return np.sum(np.frombuffer(bytes(x)))
def m_ndarray_method(x): return np.sum(x.byteswap())
def m_user_method(x): return np.sum(SCALER.apply(x))
def m_fill_item(x):
    a = np.outer(x, x)
    a[0].fill(3.0)  # (of a vector, `a[0]` is a number, whose fill changes nothing)
    return np.sum(a)
def m_user_method_argument(x, s): return np.sum(s.apply(x))
def m_user_class(x): return np.sum(Scaler(x).k)


def test_user_methods_are_compiled():  # (issue 16: they were refused before)
    np.testing.assert_allclose(grad(m_user_method)(V3), np.full(3, 2.0))
    np.testing.assert_allclose(grad(m_user_method_argument)(V3, Scaler(3.0)), np.full(3, 3.0))
    np.testing.assert_allclose(grad(m_user_class)(V3), np.ones(3))  # its __init__ inlined


MESSAGES = [
    (m_unwrap, (V3,), "np.unwrap(x)", ["`np.unwrap` is a NumPy function without an adjoint rule",
                                         "@adjoint(np.unwrap)", "def _(result, p", "p_bar +="]),
    (m_spherical_jn, (V3,), "spherical_jn(1, x)", ["`scipy.special.spherical_jn` is a library function",
                                                     "@adjoint(scipy.special.spherical_jn)"]),
    (m_bytes, (V3,), "bytes(x)", ["`bytes` is a Python builtin without an adjoint rule", "@adjoint(bytes)"]),
    (m_ndarray_method, (V3,), "x.byteswap()", ["the ndarray method `.byteswap()` has no adjoint rule",
                                               '@adjoint("byteswap")']),
    (m_fill_item, (V3,), "a[0].fill(3.0)", ["`.fill()` changes its receiver in place", "`a[0] = v`"]),
]


@pytest.mark.parametrize("f,args,text,parts", MESSAGES, ids=[m[0].__name__ for m in MESSAGES])
def test_missing_rule_messages(f, args, text, parts):
    with pytest.raises(MissingRuleError) as info:
        grad(f)(*args)
    msg = str(info.value)
    assert "no Python source" not in msg, msg
    for part in parts:
        assert part in msg, msg
    assert f"line {line_of(f, text)}" in msg and text in msg, msg
    if "@adjoint(" in msg:  # leads with a rule; nondifferentiable is explained as a zero gradient
        assert msg.index("@adjoint(") < msg.index("nondifferentiable("), msg
        assert "zero gradient" in msg and "does not vary smoothly" in msg, msg


def k_dead_draw(x):
    rng = np.random.default_rng(5)
    rng.normal(size=3)  # advances the generator: never dropped, even unused
    first = rng.normal(size=3)  # noqa: F841  (unused, still drawn)
    b = rng.normal(size=3)
    return np.sum(x * b)


def k_global_seed(x):
    np.random.seed(3)
    n = np.random.rand(3)
    return np.sum(x * n)


def test_calls_without_rules_keep_their_side_effects():
    want = np.random.default_rng(5).normal(size=(3, 3))[2]
    np.testing.assert_allclose(grad(k_dead_draw)(V3), want)
    np.random.seed(3)
    want = np.random.rand(3)
    np.random.seed(99)
    np.testing.assert_allclose(grad(k_global_seed)(V3), want)


def r_slice_object(a):
    s = slice(a[0], 3.0)
    return np.sum(np.r_[s] * 2.0)


def r_slice_object_constant(a):
    s = slice(0.5, 3.0)
    return np.sum(np.r_[s] * a[0]) + np.sum(a[slice(1, None)])


def test_slice_objects_in_index_tricks():
    with pytest.raises(MissingRuleError) as info:
        grad(r_slice_object)(V3)
    assert f"line {line_of(r_slice_object, 'return np.sum(')}" in str(info.value)
    check_grads(r_slice_object_constant, V3)

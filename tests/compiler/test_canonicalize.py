"""Tests of `canonicalize` on its printed terms (`View.format`, one `name: term` per value), and of
the matching `composite` does on them."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import canonicalize as cz
from adjoint_compiler import composite, shapes
from adjoint_compiler.pipeline import compile_gradient
from adjoint_compiler.printing import format_ir


def compiled(f, kinds):
    return compile_gradient(f, (0,), kinds).ir


def ranked_view(fn, kinds) -> cz.View:
    """The view with the ranks the shapes pass finds from the argument kinds ("r2": two axes)."""
    _, ndims = shapes.infer(fn, {p: int(k[1:]) for p, k in zip(fn.params, kinds)})
    return cz.view(fn, ndims)


def terms(f, kinds) -> dict:
    """{value name: its canonical term, printed}."""
    return {v.name: t.key for v, t in ranked_view(compiled(f, kinds), kinds).terms.items()}


def result_term(f, kinds) -> str:
    fn = compiled(f, kinds)
    return ranked_view(fn, kinds).term(fn.result).key


# -- one term per meaning ----------------------------------------------------------------------------
def sigmoid_a(z):
    return 1 / (1 + np.exp(-z))


def sigmoid_b(z):
    return np.exp(z) / (1 + np.exp(z))


def sigmoid_c(z):
    return 0.5 * (1 + np.tanh(z / 2))


def sigmoid_d(z):
    return (np.exp(-z) + 1.0) ** -1


def sigmoid_e(z):
    return 0.5 + 0.5 * np.tanh(0.5 * z)


@pytest.mark.parametrize("f", [sigmoid_a, sigmoid_b, sigmoid_c, sigmoid_d, sigmoid_e])
def test_sigmoid_spellings_have_one_term(f):
    assert result_term(f, ("r1",)) == "(1 + exp(-z))**-1"


def softplus_a(m):
    return np.log(1 + np.exp(-m))


def softplus_b(m):
    return np.log1p(np.exp(-m))


def softplus_c(m):
    return np.logaddexp(0, -m)


def softplus_d(m):
    return np.logaddexp(-m, 0.0)


@pytest.mark.parametrize("f", [softplus_a, softplus_b, softplus_c, softplus_d])
def test_softplus_spellings_have_one_term(f):
    assert result_term(f, ("r1",)) == "log(1 + exp(-m))"


def logsumexp_shifted(z):
    m = np.max(z, axis=1, keepdims=True)
    return m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))


def logsumexp_plain(z):
    return np.log(np.exp(z).sum(axis=1, keepdims=True))


def logsumexp_wrong_axis(z):
    m = np.max(z, axis=0, keepdims=True)
    return m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))


def test_a_shift_constant_along_the_summed_axis_cancels():
    assert result_term(logsumexp_shifted, ("r2",)) == "log(sum(exp(z), axis=1, keepdims=True))"
    assert result_term(logsumexp_plain, ("r2",)) == "log(sum(exp(z), axis=1, keepdims=True))"
    assert result_term(logsumexp_wrong_axis, ("r2",)) == (
        "log(sum(exp(-max(z, axis=0, keepdims=True) + z), axis=1, keepdims=True)) + max(z, axis=0, keepdims=True)")


def lse_new_axis(z):
    return np.log(np.sum(np.exp(z), axis=1))[:, None]


def lse_newaxis_after_dots(z):
    return np.log(np.exp(z).sum(axis=-1))[..., np.newaxis]


def lse_expand_dims(z):
    return np.expand_dims(np.log(np.sum(np.exp(z), axis=1)), 1)


def lse_reshape(z):
    return (np.log(np.sum(np.exp(z), axis=1)) + 1.0).reshape(-1, 1)


@pytest.mark.parametrize("f", [lse_new_axis, lse_expand_dims])
def test_an_axis_inserted_where_a_reduction_removed_it_is_keepdims(f):
    assert result_term(f, ("r2",)) == "log(sum(exp(z), axis=1, keepdims=True))"


def test_the_inserted_axis_follows_dots_negative_axes_and_reshapes():
    assert result_term(lse_newaxis_after_dots, ("r2",)) == "log(sum(exp(z), axis=-1, keepdims=True))"
    assert result_term(lse_reshape, ("r2",)) == "1 + log(sum(exp(z), axis=1, keepdims=True))"


def lse_other_axis(z):
    return np.log(np.sum(np.exp(z), axis=0))[:, None]


def lse_two_reductions(z, w):
    return (np.sum(z, axis=1) + np.sum(w, axis=0))[:, None]


def lse_rank_unknown(z):
    return np.log(np.sum(np.exp(z), axis=1))[:, None]


def test_an_axis_inserted_elsewhere_or_over_two_reductions_is_a_leaf():
    for f, kinds in ((lse_other_axis, ("r2",)), (lse_two_reductions, ("r2", "r3"))):
        fn = compiled(f, kinds)
        assert ranked_view(fn, kinds).term(fn.result).op == "leaf"
    fn = compiled(lse_rank_unknown, ("a",))
    assert cz.view(fn).term(fn.result).op == "leaf"  # (no ranks: nothing claimed)


def log_softmax_new_axis(z, y):
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1))[:, None]
    return -np.sum(y * logp)


def test_log_softmax_through_a_new_axis_is_the_composite():
    fn = compile_gradient(log_softmax_new_axis, (0,), ("r2", "r2")).ir
    assert "composite log_softmax" in format_ir(fn, lambda s: s.rule.name if s.rule else "")


# -- the rewrites ---------------------------------------------------------------------------------
def arithmetic(x, y, w):
    a = x - y
    b = x / y
    c = -(x * 2.0) * 0.5
    d = w * y * x - x * (y * w)
    e = (x + 1.0) - 1.0
    f = x * x / x
    g = np.sqrt(x) ** 2 + np.square(y)
    return a + b + c + d + e + f + g


def test_differences_quotients_and_numbers():
    t = terms(arithmetic, ("r1", "r1", "r1"))
    assert t["a"] == "x - y"
    assert t["b"] == "x*y**-1"
    assert t["c"] == "-x"  # -(2x) * 0.5, folded exactly
    assert t["d"] == "0"  # w*y*x - x*(y*w): the same product
    assert t["e"] == "x"
    assert t["f"] == "x"
    assert t["g"] == "x + y**2"
    assert t["plus_2"] == "3*x + x*y**-1 - y + y**2"  # d's cancelled product has the others' shape


def rounding(x):
    a = x + 1.0 + 1e-12
    b = x + 1.000000000001
    return a * b


def test_numbers_fold_without_rounding():
    """1 + 1e-12 is not the float 1.000000000001: a folded sum keeps its exact value."""
    t = terms(rounding, ("r1",))
    assert t["b"] == "1.000000000001 + x"
    assert t["a"] != t["b"] and t["a"].endswith(" + x")


def repeated_matmul(X, w, v):
    return np.exp(X @ w) / (1 + np.exp(X @ w)) + np.sin(v) * np.sin(v)


def test_values_computed_again_from_the_same_operands_are_one_leaf():
    t = terms(repeated_matmul, ("r2", "r1", "r1"))
    assert t["over"] == "(1 + exp(-matmul(X, w)))**-1"
    assert t["sin_v_times_sin_v_2"] == "sin_v**2"  # (cse made the two np.sin(v) one value)


def widened(x, y):
    a = x + 0 * y
    b = x - x + x
    return np.sum(a) + np.sum(b)


def test_a_cancelled_operand_that_may_widen_the_shape_is_remembered():
    """x + 0*y has the shape of x and y together: its term x does not stand for it (no value
    holds x by it, a sum over it is a leaf); x - x + x lost only what it still has."""
    fn = compiled(widened, ("r1", "r2"))
    view = cz.view(fn)
    t = {v.name: u.key for v, u in view.terms.items()}
    assert t["a"] == "x" and t["b"] == "x"
    assert [v.name for v in view.holders["x"]] == ["b"]
    assert "sum_a" not in t and t["sum_b"] == "sum(x)"


def chain(x):
    a = x * x + x
    a = a * a + a
    a = a * a + a
    a = a * a + a
    a = a * a + a
    a = a * a + a
    a = a * a + a
    a = a * a + a
    return a


def test_big_terms_become_leaves():
    t = terms(chain, ("r1",))
    assert all(cz.LIMIT > len(k.split("x")) for k in t.values())  # every term is smaller than the limit
    assert "a_7" not in t and t["a_times_a_7"] == "a_7**2" and t["a_8"] == "a_7 + a_7**2"


def test_the_ir_is_unchanged():
    fn = compiled(sigmoid_b, ("r1",))
    before = format_ir(fn)
    cz.view(fn)
    assert format_ir(fn) == before


# -- realizing a term: only by a value computed before, in an enclosing block ----------------------
def in_a_branch(z, t):
    if t > 0.0:
        a = 1 + np.exp(z)
        u = np.sum(a)
    else:
        u = 0.0
    s = np.log1p(np.exp(z))
    return np.sum(s) + u


def test_a_value_in_a_branch_does_not_hold_a_term_after_it():
    fn = compiled(in_a_branch, ("r1", "r0"))
    view = cz.view(fn)
    top = next(s for s in fn.body if getattr(s, "target", None) is not None and s.target.name == "s")
    one_plus_exp = cz.rebuild(cz.parse_form("1 + np.exp(x)"), {"x": view.term(fn.params[0])})
    assert [v.name for v in view.holders[one_plus_exp.key]] == ["a"]
    assert view.realize(one_plus_exp, top.target) is None
    assert top.rule.name == "composite softplus"  # not softplus_of_exp, which would read `a`


# -- matching ---------------------------------------------------------------------------------------
def bindings(form: str, subject: cz.Term) -> list:
    pattern = cz.parse_form(form)
    return [{k: v.key for k, v in env.items()} for env in composite.match(pattern, subject, {})
            if cz.rebuild(pattern, env) == subject]


X, Y, W = (cz.var(n) for n in "xyw")  # pattern variables stand in for a function's values here


def test_a_sum_binds_its_last_name_to_the_rest():
    subject = cz.add(cz.num(2), Y)
    assert bindings("1 + a", subject) == [{"a": "1 + ?y"}]
    assert bindings("1 + np.exp(a)", subject) == []


def test_products_match_in_any_order_and_solve_for_a_factor():
    subject = cz.mul(cz.num(-1), Y, cz.call("exp", (X,)))
    assert bindings("-(b * np.exp(a))", subject) == [{"a": "?x", "b": "?y"}]
    assert bindings("np.exp(a) * b", subject) == [{"a": "?x", "b": "-?y"}]


def test_a_name_used_twice_must_be_one_value():
    loss = cz.parse_form("y * np.log(p) + (1 - y) * np.log(1 - p)")
    pattern_env = {"u": "?y", "p": "?p"}
    assert bindings("u * np.log(p) + (1 - u) * np.log(1 - p)", loss) == [pattern_env]
    other = cz.parse_form("y * np.log(p) + (1 - w) * np.log(1 - p)")
    assert bindings("u * np.log(p) + (1 - u) * np.log(1 - p)", other) == []

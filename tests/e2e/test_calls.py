"""End-to-end tests of calls from a differentiated function into other plain Python functions:
same module, another module, nested calls, keyword arguments, defaults, helpers with loops, helpers
called in loops, @differentiable helpers, module constants and closures, and the errors for
recursion, methods on user objects, generator functions and closure writes.

Every gradient is checked against central finite differences or a gradient derived by hand.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import loop_helpers
from adjoint_compiler import (AdjointCompilerError, MissingRuleError, UnsupportedSyntaxError,
                              adjoint_source, differentiable, grad, value_and_grad, vjp)
from adjoint_compiler.testing import check_grads
from loop_helpers import accumulate, scaled
from test_core import check, fd_grad

RNG = np.random.default_rng(99)

# Same names as in loop_helpers, different values: each function must read its own module's.
SCALE = 10.0
OFFSETS = np.array([100.0, 200.0, 300.0])
W_CONST = np.array([[1.0, -0.5, 0.2], [0.3, 0.8, -1.1]])


def rand(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------------------------------------
# helpers in this module
# ---------------------------------------------------------------------------------------------

def poly(x):
    return x * SCALE - x ** 3


def square(x):
    return x * x


def twice_then_sin(x):
    x = x * 2.0  # rebinding the parameter must not touch the caller's `x`
    return np.sin(x)


def level3(x):
    return np.exp(-x) * x


def level2(x, y):
    return level3(x * y) + square(y)


def level1(x, y):
    return level2(x, y) * level2(y, x)


def pair(x, y):
    return x * y, x - y


def branchy(x):
    if x > 0:
        return x ** 2
    return -np.sin(x)


def with_defaults(x, k=3.0, bias=0.5):
    return k * x + bias * x * x


def with_array_default(x, w=OFFSETS * 0.01):
    return np.sum(x * w)


def with_kwonly(x, *, p=2.0, q=1.0):
    return q * x ** p


def calls_same_module(x):
    return poly(x) + square(np.sin(x))


def calls_same_helper_twice(x, y):
    return square(x) * square(y + 1.0) + square(x * y)


def rebinding_helper(x):
    y = twice_then_sin(x)
    return y * x


def nested_calls(x, y):
    return level1(x, y)


def tuple_returning_helper(x, y):
    a, b = pair(x, y)
    s, d = pair(a, b)
    return s * d + a


def helper_with_early_return(x):
    return branchy(x) * 3.0 + branchy(-x)


def test_helper_in_same_module():
    x = 0.7
    g = check(calls_same_module, x)
    assert np.isclose(g, SCALE - 3 * x ** 2 + 2 * np.sin(x) * np.cos(x), rtol=1e-12)


def test_same_helper_called_twice():
    check(calls_same_helper_twice, 0.8, -0.3, wrt=(0, 1))


def test_helper_rebinding_its_parameter():
    x = 0.4
    g = check(rebinding_helper, x)
    assert np.isclose(g, 2 * np.cos(2 * x) * x + np.sin(2 * x), rtol=1e-12)


def test_nested_helper_calls():
    check(nested_calls, 0.6, 1.3, wrt=(0, 1))


def test_helper_returning_tuple():
    check(tuple_returning_helper, 1.2, 0.4, wrt=(0, 1))


@pytest.mark.parametrize("x", [0.7, -0.7])
def test_helper_with_early_return(x):
    check(helper_with_early_return, x)


# ---------------------------------------------------------------------------------------------
# keyword arguments and defaults
# ---------------------------------------------------------------------------------------------

def kw_call(x, y):
    return with_defaults(x, bias=y) + with_defaults(k=y, x=x)


def default_call(x):
    return with_defaults(x) + with_defaults(x, 2.0)


def array_default_call(x):
    return with_array_default(x) + with_array_default(x, w=x)


def kwonly_call(x, y):
    return with_kwonly(x, q=y) + with_kwonly(x, p=3.0) + with_kwonly(y, q=x, p=2.0)


def literal_array_default(x, w=np.array([1.0, 2.0, 3.0])):
    return np.sum(w * x ** 2)


def call_literal_array_default(x):
    return literal_array_default(x)


def test_keyword_arguments():
    x, y = 0.9, -0.4
    gx, gy = check(kw_call, x, y, wrt=(0, 1))
    # with_defaults(x, bias=y) = 3x + y x^2 ; with_defaults(k=y, x=x) = y x + 0.5 x^2
    assert np.isclose(gx, 3 + 2 * y * x + y + x, rtol=1e-12)
    assert np.isclose(gy, x * x + x, rtol=1e-12)


def test_literal_defaults():
    x = 1.1
    g = check(default_call, x)
    assert np.isclose(g, (3 + x) + (2 + x), rtol=1e-12)


def test_array_default():
    x = rand(3)
    g = check(array_default_call, x)
    np.testing.assert_allclose(g, OFFSETS * 0.01 + 2 * x, rtol=1e-12)


def test_keyword_only_arguments():
    check(kwonly_call, 0.8, 1.7, wrt=(0, 1))


def test_array_default_of_a_helper_defined_with_a_literal_array():
    x = rand(3)
    g = check(call_literal_array_default, x)
    np.testing.assert_allclose(g, 2 * np.array([1.0, 2.0, 3.0]) * x, rtol=1e-12)


def test_default_of_the_differentiated_function_itself():
    x = rand(3)
    g = check(literal_array_default, x)
    np.testing.assert_allclose(g, 2 * np.array([1.0, 2.0, 3.0]) * x, rtol=1e-12)
    gx, gw = check(literal_array_default, x, np.ones(3), wrt=(0, 1))
    np.testing.assert_allclose(gw, x ** 2, rtol=1e-12)


def top_level_kwonly(x, *, scale=2.0):
    return np.sum(np.sin(x) * scale)


def test_keyword_only_argument_of_the_differentiated_function():
    x = rand(3)
    g = check(top_level_kwonly, x, scale=3.0)
    np.testing.assert_allclose(g, 3.0 * np.cos(x), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# helpers in another module
# ---------------------------------------------------------------------------------------------

def calls_other_module(x):
    return loop_helpers.poly(x) + loop_helpers.softplus_sum(x)


def calls_imported_name(x):
    return np.sum(scaled(x) + scaled(x, 0.5, power=3) + scaled(x, k=x))


def calls_other_module_constant(x):
    return np.sum(loop_helpers.shifted(x) ** 2) + np.sum(OFFSETS * x)


def calls_other_module_chain(x):
    return loop_helpers.chain(x) + poly(x)


def test_helper_in_another_module_uses_its_own_globals():
    x = 0.6
    g = check(calls_other_module, x)
    expected = 2 * x * loop_helpers.SCALE + 1 + 1 / (1 + np.exp(-x))
    assert np.isclose(g, expected, rtol=1e-12)


def test_imported_helper_with_keywords():
    x = rand(4)
    g = check(calls_imported_name, x)
    np.testing.assert_allclose(g, 4 * x + 1.5 * x ** 2 + 3 * x ** 2, rtol=1e-12)


def test_other_module_constant_array():
    x = rand(3)
    g = check(calls_other_module_constant, x)
    np.testing.assert_allclose(g, 2 * (x + loop_helpers.OFFSETS) + OFFSETS, rtol=1e-12)


def test_nested_call_inside_another_module_and_same_names():
    x = 0.3
    g = check(calls_other_module_chain, x)
    s, c = np.sin(x), np.cos(x)
    expected = 0.5 * (2 * s * loop_helpers.SCALE + 1) * c + SCALE - 3 * x ** 2
    assert np.isclose(g, expected, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# helpers with loops; helpers called in loops
# ---------------------------------------------------------------------------------------------

def local_looping_helper(x, n):
    acc = x * 0.0
    for i in range(n):
        acc = acc + np.sin(x * (i + 1))
    return acc


def calls_looping_helpers(x, w):
    y = loop_helpers.iterate(x, w, 3)
    return np.sum(local_looping_helper(y, 4))


def calls_helper_in_loop(x, w):
    for i in range(4):
        x = loop_helpers.iterate(x, w, 2) + square(x) * 0.1
    return np.sum(x)


def calls_helper_in_while(x):
    while x < 10.0:
        x = poly(x) + 1.0
    return x * 2.0


def calls_helper_over_list(xs):
    return accumulate(xs) + accumulate([xs[0], xs[1]])


def test_helper_with_loop():
    check(calls_looping_helpers, rand(3), 0.7, wrt=(0, 1))


def test_helper_called_inside_loop():
    check(calls_helper_in_loop, rand(3) * 0.5, 0.6, wrt=(0, 1))


@pytest.mark.parametrize("x", [0.5, 2.0, 20.0])
def test_helper_called_inside_while(x):
    check(calls_helper_in_while, x)


def test_looping_helper_over_list():
    xs = [0.5, -1.5, 2.0]
    g = check(calls_helper_over_list, xs)
    np.testing.assert_allclose(g, [4 * 0.5, 4 * -1.5, 2 * 2.0], rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# @differentiable helpers
# ---------------------------------------------------------------------------------------------

@differentiable
def energy(x):
    return np.sum(x ** 4) * 0.25


@differentiable(wrt=(0, 1))
def bilinear(x, y):
    return np.sum(x * y)


def calls_differentiable(x, y):
    return energy(x) * 2.0 + bilinear(x, y) + energy(y * x)


def test_differentiable_helper_called_from_another_function():
    x, y = rand(3), rand(3)
    gx, gy = check(calls_differentiable, x, y, wrt=(0, 1))
    np.testing.assert_allclose(gx, 2 * x ** 3 + y + (y * x) ** 3 * y, rtol=1e-12)
    np.testing.assert_allclose(gy, x + (y * x) ** 3 * x, rtol=1e-12)


def test_differentiable_helper_still_works_alone():
    x, y = rand(3), rand(3)
    np.testing.assert_allclose(energy(x), np.sum(x ** 4) * 0.25)
    np.testing.assert_allclose(energy.grad()(x), x ** 3, rtol=1e-12)
    gx, gy = bilinear.grad()(x, y)
    np.testing.assert_allclose(gx, y, rtol=1e-12)
    np.testing.assert_allclose(gy, x, rtol=1e-12)
    src = differentiable(calls_differentiable).adjoint_source()
    assert "def " in src


# ---------------------------------------------------------------------------------------------
# module constants and closures
# ---------------------------------------------------------------------------------------------

def reads_module_constant(x):
    return np.sum(np.tanh(W_CONST @ x)) + SCALE * x[0]


def make_loss(W, scale):
    def loss(x):
        return np.sum(np.tanh(W @ x) ** 2) * scale
    return loss


def make_nested(b):
    def inner(x):
        return np.sum(x * b)

    def outer(x):
        return inner(x) ** 2 + np.sum(b * b)
    return outer


def test_module_constant_array():
    x = rand(3)
    g = check(reads_module_constant, x)
    ref = W_CONST.T @ (1 - np.tanh(W_CONST @ x) ** 2)
    ref[0] += SCALE
    np.testing.assert_allclose(g, ref, rtol=1e-12)


def test_closure_over_array():
    W1, W2 = rand(2, 3), rand(4, 3)
    loss1, loss2 = make_loss(W1, 1.0), make_loss(W2, 3.0)
    x = rand(3)
    for W, s, loss in [(W1, 1.0, loss1), (W2, 3.0, loss2), (W1, 1.0, loss1)]:
        g = check(loss, x)
        t = np.tanh(W @ x)
        np.testing.assert_allclose(g, s * W.T @ (2 * t * (1 - t ** 2)), rtol=1e-12)


def test_closure_calling_closure():
    b = rand(3)
    f = make_nested(b)
    x = rand(3)
    g = check(f, x)
    np.testing.assert_allclose(g, 2 * np.sum(x * b) * b, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

def _line(func, text):
    lines, first = inspect.getsourcelines(func)
    return [first + i for i, ln in enumerate(lines) if text in ln][0]


def fact(x, n):
    if n <= 1:
        return x
    return x * fact(x, n - 1)


def calls_recursive(x):
    return fact(x, 3) + 1.0


def self_recursive(x):
    if x > 10.0:
        return x
    return self_recursive(x * 2.0)


def ping(x):
    return pong(x * 0.5) if x > 1.0 else x


def pong(x):
    return ping(x + 1.0)


def calls_mutual(x):
    return ping(x)


@pytest.mark.parametrize("f, callee, marker", [
    (calls_recursive, "fact", "x * fact(x, n - 1)"),
    (self_recursive, "self_recursive", "return self_recursive(x * 2.0)"),
    (calls_mutual, "ping", "return ping(x + 1.0)"),
])
def test_recursion_is_a_located_error(f, callee, marker):
    where = {"fact": fact, "self_recursive": self_recursive, "ping": pong}[callee]
    line = _line(where, marker)
    with pytest.raises(AdjointCompilerError) as info:
        grad(f)(1.5)
    msg = str(info.value)
    assert callee in msg, msg
    assert "recurs" in msg.lower(), msg
    assert f"line {line}" in msg, msg
    assert __file__.rsplit("/", 1)[-1] in msg, msg


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return self.k * x


SCALER = Scaler(2.0)


def calls_method_of_global_object(x):
    return np.sum(SCALER.apply(x))


def calls_method_of_argument(x, s):
    return np.sum(s.apply(x))


def test_method_call_on_user_object_is_inlined():
    # (issue 16: methods of the user's objects are compiled like functions; test_objects.py has more)
    x = np.linspace(0.1, 1.0, 3)
    np.testing.assert_allclose(grad(calls_method_of_global_object)(x), np.full(3, 2.0))


def test_method_call_on_user_object_argument_is_inlined():
    x = np.linspace(0.1, 1.0, 3)
    np.testing.assert_allclose(grad(calls_method_of_argument)(x, Scaler(3.0)), np.full(3, 3.0))


def gen_helper(x):
    for i in range(3):
        yield x * i


def calls_generator_function(x):
    return sum(gen_helper(x))


def is_generator(x):
    yield x * 2.0


def writes_closure():
    total = 0.0

    def f(x):
        nonlocal total
        total = total + x
        return x * 2.0
    return f


def _assert_located_syntax_error(err, func, marker):
    assert isinstance(err, SyntaxError) and isinstance(err, AdjointCompilerError)
    lines, first = inspect.getsourcelines(func)
    expected = [first + i for i, ln in enumerate(lines) if marker in ln][0]
    assert err.filename == __file__, err.filename
    assert err.lineno == expected, (err.lineno, expected, err.msg)
    assert marker in err.text, err.text


def test_generator_function_is_located_unsupported_syntax():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(is_generator)(1.0)
    _assert_located_syntax_error(info.value, is_generator, "yield")


def test_call_to_generator_function_is_located_unsupported_syntax():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(calls_generator_function)(1.0)
    _assert_located_syntax_error(info.value, gen_helper, "yield")


def test_closure_write_is_located_unsupported_syntax():
    f = writes_closure()
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(1.0)
    _assert_located_syntax_error(info.value, writes_closure, "nonlocal")


def global_writer(x):
    global SCALE
    SCALE = x
    return x * 2.0


def test_global_write_is_located_unsupported_syntax():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(global_writer)(1.0)
    _assert_located_syntax_error(info.value, global_writer, "global SCALE")


# ---------------------------------------------------------------------------------------------
# other entry points through calls
# ---------------------------------------------------------------------------------------------

def vector_helper_out(x, w):
    return loop_helpers.iterate(x, w, 2) * square(w)


def test_vjp_through_calls():
    x, w = rand(3), 0.8
    out, pullback = vjp(vector_helper_out, x, w)
    np.testing.assert_allclose(out, vector_helper_out(x, w), rtol=1e-12)
    ob = rand(3)
    gx, gw = pullback(ob)
    np.testing.assert_allclose(gx, fd_grad(lambda z: np.sum(ob * vector_helper_out(z, w)), x),
                               rtol=1e-6, atol=1e-8)
    assert np.isclose(gw, fd_grad(lambda z: np.sum(ob * vector_helper_out(x, z)), w), rtol=1e-6)


def test_adjoint_source_of_inlined_call_names_the_helper_lines():
    src = adjoint_source(calls_same_module)
    compile(src, "<adjoint>", "exec")
    line = _line(poly, "return x * SCALE - x ** 3")
    assert f"# L{line}:" in src or "test_calls.py" in src, src


def test_value_and_grad_through_calls():
    v, g = value_and_grad(nested_calls, (0, 1))(0.6, 1.3)
    assert np.isclose(v, nested_calls(0.6, 1.3), rtol=1e-12)
    check_grads(nested_calls, 0.6, 1.3, wrt=(0, 1))


# -- a helper that appends to (extends, pops) a list it was given: the caller's list changes -----

def collect(acc, v):
    acc.append(np.sin(v) * 2.0)


def collect_two_then_drop(acc, v):
    acc.extend([v, v * v])
    acc.pop()


def collects_in_straight_line(x):
    acc = [x[1] * 0.5]
    seen = acc
    collect(acc, x[0])
    collect_two_then_drop(acc, x[2])
    return sum(acc) * acc[0] + seen[-1]


def collects_in_a_loop(x):
    acc = []
    for v in x:
        collect(acc, v)
    return sum(a * a for a in acc) + len(acc) * acc[-1]


@pytest.mark.parametrize("f", [collects_in_straight_line, collects_in_a_loop])
def test_a_helper_appending_to_the_callers_list(f):
    """Python's callers see the items a helper appends (once refused: "`acc` names the same list")."""
    x = np.array([0.3, -0.8, 1.1])
    check_grads(f, x)
    assert value_and_grad(f)(x)[0] == pytest.approx(f(x))


def collect_if_positive(acc, v):
    if v > 0:
        acc.append(v * 2.0)  # <-- HERE


def collects_under_the_helpers_branch(x):
    acc = [x[0]]
    collect_if_positive(acc, x[1])
    return sum(acc)


def test_a_helper_appending_under_its_own_branch_is_refused_at_the_line():
    from adjoint_compiler import MutationError
    with pytest.raises(MutationError, match="the calling function's `acc` names the same") as info:
        grad(collects_under_the_helpers_branch)(np.array([0.3, 0.8, 1.1]))
    lines, first = inspect.getsourcelines(collect_if_positive)
    assert f"line {first + 2}" in str(info.value)

"""Tests of `hoist` and `cse` on the printed IR (stage "cse", after both passes), and of the facts
they ask (`effects`)."""
from __future__ import annotations

import re

import numpy as np

from adjoint_compiler import ir
from adjoint_compiler.effects import may_raise, repeatable, speculable
from adjoint_compiler.pipeline import compile_gradient
from adjoint_compiler.testing import check_grads


def ssa(f, kinds):
    return compile_gradient(f, (0,), kinds, stage="cse")


def reads_in_loop(p, n, dt):
    s = 0.0
    for _ in range(n):
        s = s + p[0] * (0.5 * dt) + p[1] / dt
    return s


def test_raising_reads_move_under_a_guard_and_safe_arithmetic_moves_freely():
    text = ssa(reads_in_loop, ("r1", "r0", "r0"))
    lines = text.splitlines()
    guard = next(i for i, t in enumerate(lines) if re.match(r"\s*if range_n:", t))
    loop = next(i for i, t in enumerate(lines) if re.match(r"\s*for _ in range_n", t))
    assert guard < loop
    free = next(i for i, t in enumerate(lines) if "= 0.5 * dt" in t)
    assert free < guard and lines[free].startswith("    c")  # unguarded, at top level
    body = "\n".join(lines[guard:loop])
    assert "p[0]" in body and "p[1]" in body  # p[0] may raise: only when the loop runs
    assert "/ dt" in body  # division by a value may raise (ZeroDivisionError)
    assert "yield" in body and "None" in body
    assert "p[0]" not in "\n".join(lines[loop:])


def constant_trips(p):
    s = 0.0
    for _ in range(3):
        s = s + p[0] * p[1]
    return s


def test_a_loop_that_surely_runs_needs_no_guard():
    text = ssa(constant_trips, ("r1",))
    assert "if " not in text
    loop = text.index("for _ in")
    assert text.index("p[0]") < loop and text.index("p[1]") < loop


def in_while(p, n):
    s = 0.0
    k = 0
    while k < n:
        s = s + p[0] + (n + 1.0)
        k = k + 1
    return s


def test_while_loops_keep_what_may_raise():
    text = ssa(in_while, ("r1", "r0"))
    loop = text.index("    while")
    assert text.index("p[0]") > loop  # no guard for a while loop: it stays
    assert text.index("n + 1.0") < loop  # cannot raise, zero adjoint at zero: moves


def repeated_in_calls(p, n):
    s = 0.0
    for _ in range(n):
        s = s * p[0] + p[0]
    return s


def test_cse_merges_the_guard_outputs():
    text = ssa(repeated_in_calls, ("r1", "r0"))
    assert text.count("p[0]") == 1
    assert re.search(r"yield \w+ <- p_0\n", text)  # one output, not one per copy


def _assign(prim, *args):
    return ir.Assign(ir.Var("t"), prim, list(args), {}, None)


def test_effects_allow_list():
    import operator
    x, y, a = ir.Var("x"), ir.Var("y"), ir.Var("a")
    scalars = {x: 0, y: 0, a: "A"}
    assert not may_raise(_assign(operator.add, x, y), scalars)
    assert not may_raise(_assign(operator.mul, a, x), scalars)
    assert may_raise(_assign(operator.add, a, ir.Var("b")), {**scalars, ir.Var("b"): "B"})
    assert may_raise(_assign(operator.truediv, x, y), scalars)
    assert not may_raise(_assign(operator.truediv, x, ir.Const(2.0)), scalars)
    assert may_raise(_assign(operator.truediv, x, ir.Const(0.0)), scalars)
    assert may_raise(_assign(operator.getitem, a, ir.Const(0)), scalars)
    assert may_raise(_assign(operator.pow, x, y), scalars)  # not on the list
    assert speculable(_assign(operator.sub, x, y), scalars)
    assert not speculable(_assign(operator.mul, x, y), scalars)  # 0 * inf
    assert speculable(_assign(operator.mul, x, ir.Const(3.0)), scalars)
    assert not speculable(_assign(operator.mul, x, ir.Const(float("inf"))), scalars)


def nested_invariant(p, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            s = s + p[0] * p[1]
    return s


def test_an_inner_guard_moves_out_of_the_outer_loop_under_its_guard():
    text = ssa(nested_invariant, ("r1", "r0", "r0"))
    outer = text.index("    for i in")
    assert text.index("if range_n:") < text.index("range(m)") < text.index("if range_m:") \
        < text.index("p[0]") < outer  # p[0] runs only if both loops run at least once
    assert "p[0]" not in text[outer:] and "range(m)" not in text[outer:]


def repeated_reductions(z, w):
    lse = np.log(np.sum(np.exp(z - np.max(z, axis=1, keepdims=True)), axis=1, keepdims=True)) \
        + np.max(z, axis=1, keepdims=True)
    other = np.max(z, axis=0, keepdims=True)  # another axis: another value
    m = z.sum() + z.sum() + np.tanh(z @ w).sum() + np.tanh(z @ w).sum()
    return np.sum(lse) + np.sum(other) + m


def test_cse_merges_repeated_calls_with_equal_keywords_only():
    text = ssa(repeated_reductions, ("r2", "r1"))
    assert text.count("np.max(z, axis=1, keepdims=True)") == 1
    assert text.count("np.max(z, axis=0, keepdims=True)") == 1
    assert text.count("z.sum()") == 1 and text.count("z @ w") == 1 and text.count("np.tanh(") == 1
    z = np.random.default_rng(0).normal(size=(4, 3))
    check_grads(repeated_reductions, z, np.random.default_rng(1).normal(size=3), wrt=(0, 1))


def written_between(z):
    a = np.sum(z)
    z[0] = 2.0 * z[1]
    return a * np.sum(z)


def test_cse_keeps_a_call_repeated_after_a_write():
    text = ssa(written_between, ("r1",))
    assert text.count("np.sum(") == 2
    check_grads(written_between, np.random.default_rng(2).normal(size=3))


def test_repeatable_allow_list():
    z = ir.Var("z")
    assert repeatable(_assign(np.exp, z)) and repeatable(_assign(np.dot, z, z))
    assert not repeatable(ir.Assign(ir.Var("t"), np.exp, [z], {"out": z}, None))
    assert repeatable(ir.Assign(ir.Var("t"), np.sum, [z], {"axis": ir.Const(1)}, None))
    assert not repeatable(ir.Assign(ir.Var("t"), np.sum, [z], {"axis": ir.Var("k")}, None))
    assert not repeatable(_assign(np.random.normal, z)) and not repeatable(_assign(print, z))
    assert not repeatable(_assign(np.divmod, z, z))  # two outputs

"""Tests of `hoist` and `cse` on the printed IR (stage "cse", after both passes), and of the facts
they ask (`effects`)."""
from __future__ import annotations

import re

from adjoint_compiler import ir
from adjoint_compiler.effects import may_raise, speculable
from adjoint_compiler.pipeline import compile_gradient


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

"""sink.split on hand-made backward items: what moves into the branch that defines a gradient,
and what keeps everything in place."""
from __future__ import annotations

import gast

from adjoint_compiler import ir, sink
from adjoint_compiler.template import Accum, BIf, Mark, Reset

LOC = ir.Loc("f.py", 1, 0, "")
V = {n: ir.Var(n) for n in ("g", "v", "u", "a", "x", "y")}
NAMES = {var: f"{n}_bar" for n, var in V.items()}
ADJOINTS = set(NAMES.values())


def acc(var: str, expr: str) -> Accum:
    return Accum(V[var], gast.parse(expr, mode="eval").body, LOC)


def mark(defines: str) -> Mark:
    return Mark(ir.Assign(ir.Var(defines), "op", [], {}, LOC))


def test_what_reads_a_gradient_one_branch_defines_moves_there():
    rest = [acc("v", "g_bar * 2.0"), acc("u", "v_bar * y"), mark("z"), acc("x", "x_bar_unused")]
    body, orelse, kept = sink.split(rest, {"g_bar", "x_bar"}, {"x_bar"}, NAMES, ADJOINTS)
    assert body == rest[:2] and orelse == [] and kept == rest[2:]


def test_the_else_branch_can_receive_too():
    rest = [acc("v", "g_bar * 2.0")]
    assert sink.split(rest, set(), {"g_bar"}, NAMES, ADJOINTS) == ([], rest, [])


def test_same_definitions_move_nothing():
    assert sink.split([acc("v", "g_bar * 2.0")], {"g_bar"}, {"g_bar"}, NAMES, ADJOINTS) is None


def test_a_move_past_a_statement_it_depends_on_is_refused():
    # `a_bar` is updated on both paths, then read together with the one-sided g_bar
    rest = [acc("a", "x_bar * 3.0"), acc("v", "g_bar * a_bar")]
    assert sink.split(rest, {"g_bar", "x_bar"}, {"x_bar"}, NAMES, ADJOINTS) is None


def test_a_move_past_the_restore_of_a_value_it_reads_is_refused():
    rest = [mark("y"), acc("v", "g_bar * y")]
    assert sink.split(rest, {"g_bar"}, set(), NAMES, ADJOINTS) is None


def test_a_move_past_a_reset_of_what_it_defines_is_refused():
    rest = [Reset(V["u"]), acc("u", "g_bar")]
    assert sink.split(rest, {"g_bar"}, set(), NAMES, ADJOINTS) is None


def test_a_nested_branch_reading_a_one_sided_gradient_keeps_everything():
    nested = BIf(ir.Var("c"), [acc("v", "g_bar")], [], LOC)
    assert sink.split([nested], {"g_bar"}, set(), NAMES, ADJOINTS) is None

"""Views in the SSA IR (ssa.py's view machinery) and the aliasing facts (aliasing.py), on printed IR.

A write or `op=` through a view is a write node into its base; a view of a written array is made
again from the new version; where a value may be a view or a copy, an `if` on
`rt.shares_memory` decides at run time."""
from __future__ import annotations

import operator

import numpy as np

from adjoint_compiler import aliasing, ir
from adjoint_compiler.pipeline import compile_gradient


def ssa_of(f, *kinds) -> list:
    return [line.split("#")[0].strip() for line in compile_gradient(f, (0,), kinds, "grad", stage="ssa")
            .splitlines()]


def slice_scaled(y):
    y = y * 1.0
    v = y[0:2]
    v *= 3.0
    return np.sum(y ** 2) + np.sum(v)


def test_update_through_a_slice_writes_the_base_and_reads_the_view_again():
    lines = ssa_of(slice_scaled, "r1")
    assert "v_updated = v * 3.0" in lines
    assert "y_2[0:2] = v_updated" in lines          # the base, at the view's slots
    assert "v_2 = y_2[0:2]" in lines                # the view, made again from the written base
    assert "sum_v = np.sum(v_2)" in lines


def rows_normalized(A):
    B = A * 1.0
    for r in B:
        r /= r.sum()
    return np.sum(B)


def test_row_update_decides_at_run_time_whether_the_row_is_a_view():
    lines = ssa_of(rows_normalized, "r2")
    assert "r_is_view = rt.shares_memory(r, B_2)" in lines
    assert "if r_is_view:" in lines
    assert "B_2[r_index] = r_updated" in lines
    assert any(line.startswith("next B_2 <- B_3") for line in lines)   # the base is loop-carried


def flipped(a):
    a = a * 1.0
    np.flip(a)[0] = 5.0
    return np.sum(a)


def test_write_into_a_computed_view_writes_the_slots_it_shows():
    lines = ssa_of(flipped, "r1")
    assert "a_positions = rt.positions(a_2)" in lines
    assert "a_positions_2 = np.flip(a_positions)" in lines     # the view's steps, on positions
    assert "a_slots = rt.slots_at(a_positions_3, a_2)" in lines
    assert "a_2[a_slots] = 5.0" in lines


def base_updated_with_view_bound(A):
    B = A * 1.0
    v = B[:, 0]
    B *= 2.0
    return np.sum(v)


def test_update_of_a_base_with_views_writes_every_slot():
    lines = ssa_of(base_updated_with_view_bound, "r2")
    assert "B[...] = B_updated" in lines
    assert "v_2 = B[:, 0]" in lines


def stmt(prim, *args, **kwargs):
    return ir.Assign(ir.Var("t"), prim, list(args), kwargs, None)


def test_allow_list_of_fresh_results():
    x = ir.Var("x")
    lst = ir.Var("xs", "seq")
    assert aliasing.is_fresh(stmt(np.sin, x))
    assert aliasing.is_fresh(stmt(operator.add, x, x))
    assert aliasing.is_fresh(stmt(np.array, x))
    assert aliasing.is_fresh(stmt(ir.Method("copy"), x))
    assert not aliasing.is_fresh(stmt(np.array, x, copy=ir.Const(False)))
    assert not aliasing.is_fresh(stmt(np.flip, x))                  # a view
    assert not aliasing.is_fresh(stmt(np.asarray, x))               # x itself, or a copy
    assert not aliasing.is_fresh(stmt(list, x))                     # rows of x
    assert not aliasing.is_fresh(stmt(operator.add, lst, lst))      # a list of the same items
    assert not aliasing.is_fresh(stmt(np.einsum, ir.Const("ii->i"), x))  # unknown here: may alias
    assert not aliasing.is_fresh(stmt(max, lst))                    # one of the items itself


def test_view_kinds():
    x = ir.Var("x")
    assert aliasing.view_kind(stmt(operator.getitem, x, ir.Struct("slice", (ir.Const(1), ir.Const(None),
                                                                            ir.Const(None))))) == "view"
    assert aliasing.view_kind(stmt(operator.getitem, x, ir.Const(0))) == "maybe"   # a row, or a number
    assert aliasing.view_kind(stmt(operator.getitem, x, ir.Var("i"))) == "maybe"   # an int, a slice, an array
    assert aliasing.view_kind(stmt(ir.Attr("T"), x)) == "view"
    assert aliasing.view_kind(stmt(np.reshape, x, ir.Const(-1))) == "maybe"       # a view, or a copy
    assert aliasing.view_kind(stmt(operator.getitem, x, ir.Const([0, 1]))) is None  # advanced: a copy
    ranks = {}
    s = stmt(operator.getitem, x, ir.Const(0))
    ranks[s.target] = 0
    assert aliasing.is_fresh(s, ranks)                              # an element: a number


def updates_of_a_number_and_an_array(x, n):
    s = np.sum(x)
    a = x * 1.0
    for _ in range(n):
        s += np.sum(x)
        a *= 2.0
    return s + np.sum(a)


def test_an_update_in_place_is_checked_as_numpy_checks_it_and_a_number_is_not():
    def stage(name):
        return [line.split("#")[0].strip() for line in compile_gradient(
            updates_of_a_number_and_an_array, (0,), ("r1", "i"), "grad", stage=name).splitlines()]
    ssa = stage("ssa")
    assert any(line.startswith("rt.check_update(s") for line in ssa)   # ssa: after every `op=`
    assert any(line.startswith("rt.check_update(a") for line in ssa)
    checked = [line for line in stage("mutation") if line.startswith("rt.check_update(")]
    assert len(checked) == 1 and checked[0].startswith("rt.check_update(a")  # ranks: `s` is a number

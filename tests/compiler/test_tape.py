"""Tests of `tape` on the generated source: what a reversed loop saves, and what it gets back
without saving (a carried value, a cheap scalar recomputed from restored values)."""
from __future__ import annotations

import numpy as np

from adjoint_compiler import adjoint_source
from adjoint_compiler.testing import check_grads


def squares_through_a_view(x):
    y = x.copy()
    v = y[:2]
    for i in range(2):
        v[i] = v[i] ** 2
    return np.sum(y)


def scaled_rows(x):
    total = 0.0
    for i in range(x.shape[0]):
        s = x[i] * 2.0
        total = total + np.sin(s)
    return total


def test_an_entry_of_a_view_of_a_written_array_is_saved_not_read_again():
    """`v[i]` read again in the backward pass would see the later trips' writes into `y`."""
    x = np.array([0.3, -1.2, 0.7])
    src = adjoint_source(squares_through_a_view, 0, (x,))
    assert "v_i_stack.append(v_i)" in src and src.count("v_i = v_2[i]") == 1
    check_grads(squares_through_a_view, x)


def test_a_cheap_scalar_of_an_unwritten_array_is_recomputed():
    x = np.array([0.3, -1.2, 0.7])
    src = adjoint_source(scaled_rows, 0, (x,))
    assert "s_stack" not in src and src.count("s = x_i * 2.0") == 2
    check_grads(scaled_rows, x)


def written_in_a_branch(u0, w):
    u = u0.copy()
    s = 0.0
    for i in range(3):
        t = np.tanh(u) * w
        if s > 0.88:
            t[1:3] = 0.64
        s = s + np.sum(t * t)
        u = u + 0.74 * t
    return np.sum(u * u) + s


def test_an_ifs_output_holding_a_written_array_is_saved_per_trip():
    """`t_2`, the `if`'s name for `t` after its write, is another trip's array in the backward
    pass unless it is saved too (it read the last trip's `t` in every trip: a wrong gradient)."""
    u0, w = np.array([0.3, 1.2, 0.7, 1.4]), np.array([0.9, 0.4, 1.3, 0.6])
    src = adjoint_source(written_in_a_branch, 0, (u0, w))
    assert "t_2_stack.append(t_2)" in src and "t_2 = t_2_stack.pop()" in src
    check_grads(written_in_a_branch, u0, w)


def boundary_zeroed(u0, kappa):
    u = u0.copy()
    for _ in range(3):
        lap = np.roll(u, 1) - 2 * u + np.roll(u, -1)
        lap[0] = 0.0
        lap[-1] = 0.0
        u = u + kappa * lap
    return np.sum(u ** 2)


def boundary_zeroed_read_before(u0, kappa):
    u = u0.copy()
    s = 0.0
    for _ in range(3):
        lap = np.roll(u, 1) - 2 * u + np.roll(u, -1)
        s = s + np.sum(lap * lap)
        lap[0] = 0.0
        lap[-1] = 0.0
        u = u + kappa * lap
    return np.sum(u ** 2) + s


def test_a_new_array_per_trip_is_not_restored_after_its_last_read():
    """The backward pass reads `lap` (for kappa's gradient) before it gets to the writes, and the
    tape then gives the name the previous trip's array: the overwritten slots are never read."""
    u0 = np.array([0.3, 1.2, 0.7, 1.4, 0.2])
    src = adjoint_source(boundary_zeroed, (0, 1), (u0, 0.2))
    assert "save_slots" not in src and "lap = lap_stack.pop()" in src
    check_grads(boundary_zeroed, u0, 0.2, wrt=(0, 1))


def test_a_new_array_read_before_its_writes_is_restored():
    """`lap * lap`'s adjoint, after the writes' in the backward pass, reads the slots they overwrote."""
    u0 = np.array([0.3, 1.2, 0.7, 1.4, 0.2])
    src = adjoint_source(boundary_zeroed_read_before, (0, 1), (u0, 0.2))
    assert src.count("save_slots") == 2 and "lap[0] = lap_saved" in src
    check_grads(boundary_zeroed_read_before, u0, 0.2, wrt=(0, 1))


def halved_in_a_branch(w):
    t = np.array([0.9, 0.7, 0.6, 0.5])
    s = 0.0
    for j in range(2):
        if j > -1:
            t[1] *= 0.5
        s = s + np.sum(t * w)
        t[2] = 0.7
    return s


def test_a_write_in_a_branch_is_restored_for_the_ifs_name_of_the_array():
    """The backward pass reads `t_3` (the if's name for `t_2` after the branch wrote `t_2[1]`):
    its value in the first trip needs the second trip's write undone (it was not: a wrong
    gradient)."""
    w = np.array([1.1, 0.2, 0.3, 0.8])
    src = adjoint_source(halved_in_a_branch, 0, (w,))
    assert "t_2[1] = t_2_saved" in src
    check_grads(halved_in_a_branch, w)


def test_sharing_groups_are_symmetric_and_transitive():
    from adjoint_compiler.simplify import sharing_groups
    assert sharing_groups({"t": {"t_2", "t_3"}, "v": {"t_3"}, "a": {"b"}}) == {
        "t": {"t_2", "t_3", "v"}, "t_2": {"t", "t_3", "v"}, "t_3": {"t", "t_2", "v"}, "v": {"t", "t_2", "t_3"},
        "a": {"b"}, "b": {"a"}}

"""Minimized regressions for the bugs the differential fuzzer (fuzzgen.py / tools/fuzz_long.py)
found. Each test is the smallest program found for the failure; every gradient is checked against
central finite differences and every value against running the function directly.

Kept even while failing (no xfail): each is a real bug until it passes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import fuzzgen  # noqa: E402

from adjoint_compiler import Buffer, MutationError, copyto, grad, value_and_grad  # noqa: E402,F401


def check(f, *args, wrt=None):
    """value_and_grad(f) agrees with f run directly and with central finite differences."""
    wrt = tuple(range(len(args))) if wrt is None else wrt
    expected = f(*fuzzgen.copy_args(list(args)))
    value, grads = value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12, err_msg="compiled primal value differs")
    for i, g in zip(wrt, grads):
        np.testing.assert_allclose(g, fuzzgen.fd_grad(f, list(args), i), rtol=1e-6, atol=1e-8,
                                   err_msg=f"gradient of argument {i}")
    return grads


# -------------------------------------------------------------------------------------------------
# Bug 1: a negative literal as the base of `**` is printed without parentheses:
# `(-0.8) ** 2` becomes `-0.8 ** 2` == -0.64 in the generated code (printing.operand / expression).
# Fuzz seeds 8, 12, 15, 33, 37, 176, 384, ...
# -------------------------------------------------------------------------------------------------

def neg_const_pow(x):
    return (-0.8) ** 2 + x


def neg_const_pow_in_loop(x):
    acc = 0.0
    for i in range(3):
        acc = acc + (-0.8) ** 2
    return acc * x


def neg_const_pow_through_a_name(x):
    c = -0.8
    return x * c ** 2          # c is constant-propagated into the power


def neg_const_pow_fractional(x):
    # -1.42 ** 0.5 is fine in Python (-(1.42 ** 0.5)), (1.5 + -1.42 ** 2) ** 0.5 is complex
    return x * (1.5 + (-1.42) ** 2) ** 0.5


def neg_const_pow_in_condition(x):
    if np.sqrt(1.5 + (-1.13) ** 2) < 0.54:
        return x
    return -x


def test_negative_literal_base_of_power():
    check(neg_const_pow, 0.5)


def test_negative_literal_base_of_power_in_loop():
    check(neg_const_pow_in_loop, 0.5)


def test_negative_constant_name_as_base_of_power():
    check(neg_const_pow_through_a_name, 0.5)


def test_negative_literal_base_fractional_power():
    # before the fix: TypeError (complex) while running the generated code
    check(neg_const_pow_fractional, 0.5)


def test_negative_literal_base_of_power_in_branch_condition():
    # before the fix: the wrong branch is taken, so value and gradient have the wrong sign
    check(neg_const_pow_in_condition, 0.5)


# -------------------------------------------------------------------------------------------------
# Bug 2: the tape saves only the shape (rt.ShapeOf) of a loop value whose *value* the adjoint of
# `**` reads: `rt.unbroadcast(z_bar * rt.pow_base_derivative(x, 2), x)` -- x is both the
# shape-only argument of unbroadcast and a value. simplify.value_loads skips the name by node id
# and both occurrences are one gast.Name object, so tape.plan puts x in `shape_only`.
# Fuzz seeds 101, 322.
# -------------------------------------------------------------------------------------------------

def pow_of_sum_in_loop(x, c):
    acc = 0.0
    for i in range(3):
        acc = acc + np.sum((c + x[:, 0]) ** 2)
    return acc


def pow_float_exponent_in_carried_loop(a0, a1):
    for i1 in range(2):
        v2 = np.where(np.sum(a1) > 5.0, a0, a1[-1] ** 2.0)
        a1 = 0.5 * a1 + v2
    return np.sum(a1)


def fuzz_seed_101(a0):
    w0 = np.zeros((3,))
    s2 = w0.copy()
    acc4 = np.zeros((3, 3))
    for i3 in range(3):
        acc4 = acc4 + np.sqrt(1.5 + ((s2) + (a0[..., -1])) ** 2)
    return np.sum(np.sin(acc4))


def test_pow_in_loop_keeps_base_value():
    x = np.array([[0.3], [-0.5], [0.8]])
    check(pow_of_sum_in_loop, x, np.ones(3), wrt=(0,))


def test_float_pow_in_loop_keeps_base_value():
    check(pow_float_exponent_in_carried_loop, 0.3, np.array([0.3, -0.5, 0.8]), wrt=(0, 1))


def test_fuzz_seed_101():
    check(fuzz_seed_101, np.array([[0.3], [-0.5], [0.8]]))


# -------------------------------------------------------------------------------------------------
# Bug 3: `copyto(buffer, <iterator>)` writes nothing when the buffer's array is not C-contiguous:
# buffer.copyto fills `data.reshape(-1)`, which is a *copy* for an F-ordered array (Buffer(x) keeps
# x's memory order). This is the runtime Buffer, so running f directly gives the wrong value; the
# compiled code gives the right one. Fuzz seed 0.
# -------------------------------------------------------------------------------------------------

def fill_from_generator(x):
    b = Buffer(x)
    copyto(b, (0.5 * k for k in range(4)))
    return np.sum(b.copy() * np.arange(6.0).reshape(2, 3))


def test_copyto_iterator_into_fortran_ordered_buffer_runtime():
    x = np.asfortranarray(np.arange(1.0, 7.0).reshape(2, 3))
    b = Buffer(x)
    copyto(b, iter([10.0, 20.0, 30.0, 40.0]))
    # C order from slot 0, as for a C-ordered buffer
    np.testing.assert_array_equal(b.copy(), [[10.0, 20.0, 30.0], [40.0, 5.0, 6.0]])


def test_copyto_iterator_into_fortran_ordered_buffer_gradient():
    x = np.asfortranarray(np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]))
    g = check(fill_from_generator, x)[0]
    np.testing.assert_array_equal(g, [[0.0, 0.0, 0.0], [0.0, 4.0, 5.0]])


# =================================================================================================
# Found by the second 10,000-program run (after the three fixes above), compiler at commit 508b488.
# =================================================================================================

# -------------------------------------------------------------------------------------------------
# Bug 4: nested loops that both update one loop-carried value give a wrong gradient (value right).
# Fuzz seeds 911, 1674, 1735, 3213, 5187, 5487, 5623, 5891 (grad_mismatch / wrt_mismatch).
# Suspect: tape.py -- recovering a value that becomes the next carried value / recomputing cheap
# scalars at the top of each reverse iteration (`_scalar_recipes`), when the carried value is also
# carried by an inner loop.
# -------------------------------------------------------------------------------------------------

def nested_loops_scalar(x):
    for i in range(2):
        for j in range(2):
            x = np.tanh(x * 1.5)
        x = 0.5 * x
    return x


def nested_loops_array(a0):
    for i0 in range(2):
        for i1 in range(2):
            a0 = np.tanh(a0 * 1.43 + 0.2)
        a0 = -0.48 * a0 + np.sin(0.1 * i0)
    return np.sum(a0)


def test_nested_loops_scalar_carried():
    check(nested_loops_scalar, 0.3)


def test_nested_loops_array_carried():
    check(nested_loops_array, np.array([0.3, -0.2]))


# -------------------------------------------------------------------------------------------------
# Bug 5: a value computed in an outer loop and read by an inner loop is saved shape-only
# (rt.ShapeOf) but read as a value: TypeError "unsupported operand type(s) for -: 'float' and
# 'ShapeOf'" inside the generated code. Fuzz seed 4876. tape.py plan(): shape_only vs the
# recomputed statements at the top of the reverse iteration.
# -------------------------------------------------------------------------------------------------

def outer_value_read_in_inner_loop(a0):
    for i0 in range(2):
        v1 = np.sum(a0 + a0)
        for i2 in range(1):
            a0 = -0.21 * a0 + np.sin(a0 - v1)
    return a0 * a0


def test_outer_loop_value_read_in_inner_loop():
    check(outer_value_read_in_inner_loop, 0.3)


# -------------------------------------------------------------------------------------------------
# Bug 6: rebinding, inside a branch, a name that aliases a written array makes later reads of the
# array read the rebound name. `p0 = du; if c: p0 = p0 else: p0 = p0 / 2.0; return np.sum(du)`
# compiles to `sum_du = np.sum(p0_2)`: wrong value and gradient. Also through a helper that
# rebinds its parameter (the ODE pattern `rhs(du, u)` followed by a helper taking du). ssa.py:
# the If's phi for `p0` is taken as the new version of the array `du`. Fuzz seed 4342.
# -------------------------------------------------------------------------------------------------

def alias_rebound_in_branch(x, c):
    du = np.zeros(3)
    du[0] = x
    p0 = du
    if c > 0.0:
        p0 = p0
    else:
        p0 = p0 / 2.0
    return np.sum(du)


def _rebinds_param(p0, c):
    if c > 0.0:
        p0 = p0
    else:
        p0 = p0 / 2.0
    return 1.0


def helper_rebinds_written_array(x, c):
    du = np.zeros(3)
    du[0] = x
    _rebinds_param(du, c)
    return np.sum(du)


def test_alias_rebound_in_branch_value():
    check(alias_rebound_in_branch, 0.7, -1.0, wrt=(0,))


def test_helper_rebinding_written_array_parameter():
    check(helper_rebinds_written_array, 0.7, -1.0, wrt=(0,))


# -------------------------------------------------------------------------------------------------
# Bug 7: a name bound in a branch to an argument (`v = a0`), then a write into the argument: in
# Python `v` *is* `a0`, so the overwritten slot passes no gradient; the compiled gradient passes
# one (value right, gradient wrong). With a view in the branch (`v = a1[1:]`) the write should be
# rejected (MutationError, as it is without the branch) or differentiated correctly; today it is a
# silent wrong gradient. mutation.py same_arrays / _view_base do not follow If outputs (phis).
# Fuzz seeds 945, 1679, 1932, 2376, 4447.
# -------------------------------------------------------------------------------------------------

def alias_in_branch_then_write(a0):
    v = a0 * 0.0
    if a0[1] > -10.0:
        v = a0
    a0[0] = 0.11
    return np.sum(v)


def view_in_branch_then_write(a1):
    v = a1 * 0.0
    if a1[0] > -10.0:
        v = a1[1:]
    a1[1] = 5.0
    return np.sum(v)


def test_alias_in_branch_then_write_into_argument():
    # Either the right gradient or a located MutationError (the alias made in a branch), never a
    # wrong number.
    from adjoint_compiler import MutationError
    try:
        g = check(alias_in_branch_then_write, np.array([0.3, -0.2, 0.5]))[0]
    except MutationError as exc:
        assert "is used after `a0` is written" in str(exc)
        return
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0])


def test_view_in_branch_then_write_rejected_or_correct():
    from adjoint_compiler import MutationError
    x = np.array([0.3, -0.2, 0.5])
    try:
        g = check(view_in_branch_then_write, x)[0]
    except MutationError:
        return
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


# -------------------------------------------------------------------------------------------------
# Bug 8: an array rebound in one branch of an `if` (`a0 = np.exp(a0)`), then an augmented write
# `a0[1:] += v0` after the `if` where v0 is also an output of the `if`: the gradient of a0's slots
# [1:] is off by exactly -dv0/dc (v0's adjoint leaks into a0's). Fuzz seed 5837. reverse of If
# outputs followed by a write (reverse.py / rules/writes.py SETITEM adjoint on a phi).
# -------------------------------------------------------------------------------------------------

def write_after_branch_rebinding(a0, c):
    if c > 0.0:
        v0 = 0.5
    else:
        v0 = c * 2.0
        a0 = np.exp(a0)
    a0[1:] += v0
    return np.sum(a0)


def test_write_after_branch_rebinding():
    check(write_after_branch_rebinding, np.array([0.3, -0.2, 0.5]), -1.0)


# -------------------------------------------------------------------------------------------------
# Bug 9 (not yet minimized further; single slot wrong): fuzz seed 5891. Two `while` loops on one
# carried array inside a helper, then an augmented write `a0[:, 1] -= v5` into the argument whose
# value fed the helper. Only the gradient of a0[1, 1] is wrong (0.16676 vs 0.16650).
# -------------------------------------------------------------------------------------------------

def _seed5891_helper0(p0):
    k0 = 0
    while k0 < 3:
        p0 = 0.54 * p0 + np.sin((np.exp(-0.07)) - (np.sin(p0[-1])) + 0.1 * k0)
        k0 = k0 + 1
    k1 = 0
    while k1 < 2:
        p0 = -0.2 * p0 + np.sin((p0) - (-0.06) + 0.1 * k1)
        k1 = k1 + 1
    return np.log(1.5 + np.square((p0[-1]).sum()))


def _seed5891_helper1(p0):
    v3 = np.sum((np.sum(p0)) * (np.mean(-0.85)))
    v4 = ((p0) * (1.18)) / (1.5 + np.square(np.tanh((p0) * (v3))))
    return v4


def fuzz_seed_5891(a0, a1):
    v2 = _seed5891_helper0(a0)
    v5 = _seed5891_helper1(v2)
    v6 = (v5) / (2.0 + np.cos(a1[:2]))
    a0[:, 1] -= v5
    return np.sin(v5) + np.sum(v6) + np.sin(v2) + np.sum(v6) + np.mean(a0)


def test_fuzz_seed_5891():
    rng = np.random.default_rng(1873831590)       # fuzzgen.make_args for this program
    a0, a1 = rng.uniform(-1.0, 1.0, (2, 3)), rng.uniform(-1.0, 1.0, (3,))
    check(fuzz_seed_5891, a0, a1)


# -------------------------------------------------------------------------------------------------
# Bug 10 (fuzz seed 1735): an inactive inner loop (nothing in it depends on `wrt`) still pushed its
# carried value on every inner iteration, while no reverse loop popped those entries: the stack went
# out of step and `grad(f, wrt=0)` differed from the all-argument gradient (tape.plan).
# -------------------------------------------------------------------------------------------------

def inactive_inner_loop(a1, a2):
    for i0 in range(4):
        for i2 in range(3):
            a2 = -0.63 * a2 + np.sin(0.1 * i2)
        a1 = np.tanh(a1 * a2 + 0.2)
        a2 = np.tanh(a2 * 0.14 + 0.2)
    return a1


def test_inactive_inner_loop_keeps_the_tape_in_step():
    g = check(inactive_inner_loop, 0.3, 0.7, wrt=(0,))[0]
    g_all = grad(inactive_inner_loop, wrt=(0, 1))(0.3, 0.7)[0]
    assert g == pytest.approx(g_all, rel=1e-12)


# -------------------------------------------------------------------------------------------------
# Bug 11 (fuzz seed 90439): a loop-carried value that starts as a view (`v = a[:, 0]`) was saved on
# the tape as that view; a later write into `a` changed what the reverse loop popped, and the
# restore was dropped because the carried value was not known to share memory with `a`
# (mutation.check). Now a value merged with a view counts as the view: its reads keep the restore,
# and using it after the write is refused (it is the view itself when the loop runs zero times).
# -------------------------------------------------------------------------------------------------

def carried_view_then_write(a0):
    v0 = a0[:, 0]
    for k in range(3):
        v0 = v0 * 0.9 + 0.3 * np.cos(v0)
    a0[:, 0] = v0 * v0
    return np.sum(a0 * a0)


def carried_view_used_after_write(a0):
    v0 = a0[:, 0]
    for k in range(3):
        v0 = v0 * 0.9 + 0.3 * np.cos(v0)
    a0[:, 0] = v0 * v0
    return np.sum(a0) + np.mean(v0)


def test_carried_view_keeps_the_restore():
    check(carried_view_then_write, np.random.default_rng(3).standard_normal((3, 3)) * 0.5)


def test_carried_view_used_after_write_is_refused():
    from adjoint_compiler import MutationError
    with pytest.raises(MutationError, match="view of `a0`"):
        grad(carried_view_used_after_write)(np.ones((3, 3)))


# -------------------------------------------------------------------------------------------------
# Bug (2026-11-30, fuzz seed 201337): an `if` binding `v = a` on one side and the view `v = a[...]`
# on the other made `a` a view of itself; following views to their first array never ended
# (mutation.py). Now the cycle ends where it closes, and the use after the write is refused.
# -------------------------------------------------------------------------------------------------

def alias_or_view_in_branches(a):
    if np.sum(a) > 0.0:
        v = a
    else:
        v = a[...]
    a[0] = 1.0
    return np.sum(v * v)


def test_alias_or_view_in_branches_is_refused_not_hung():
    from adjoint_compiler import MutationError
    with pytest.raises(MutationError, match="used after"):
        grad(alias_or_view_in_branches)(np.array([0.5, -0.2, 0.3]))


def alias_in_nested_branch_then_written(a0, a1):
    # seed 21002: `v2 = a1` in an `elif` (an `if` inside the `else`), then `a1` written, then `v2` read
    if np.sum(a1[1]) < -0.83:
        v2 = a1 * a0
    elif np.sqrt(1.5 + a1[1] ** 2) > -0.66:
        v2 = a1
    else:
        v2 = a0 + 1.0
    a1[1:] = np.sqrt(1.5 + np.tanh(np.sum(v2)) ** 2)
    return np.sum(v2)


def test_alias_in_nested_branch_then_write_is_refused():
    with pytest.raises(MutationError, match="used after"):
        grad(alias_in_nested_branch_then_written, wrt=1)(np.ones(3), np.ones(3))

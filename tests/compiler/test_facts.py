"""Facts the compiler knows from the argument kinds: ranks (`shapes`) and real floats (`floats`),
checked on the IR analyses and on the generated source they simplify."""
from __future__ import annotations

import numpy as np

from adjoint_compiler import Buffer, adjoint_source, floats, frontend, ir, normalize, shapes, ssa
from adjoint_compiler import runtime as rt
from adjoint_compiler.naming import Namer
from adjoint_compiler.pipeline import RESERVED
from adjoint_compiler.testing import check_grads


def build(func, ranks: dict):
    src = frontend.read_function(func)
    namer = Namer(RESERVED)
    fn = ssa.build(src, normalize.normalize(src, namer), namer, {p: "num" for p in ranks})
    classes, ndims = shapes.infer(fn, {v: ranks[v.name] for v in fn.params})
    return fn, classes, ndims


def by_name(facts: dict) -> dict:
    return {v.name: f for v, f in facts.items()}


# -- ranks ------------------------------------------------------------------------------------

def scalar_then_array(x, a):
    p = a
    for _ in range(3):
        y = p + 1.0
        p = y * x
    return np.sum(p)


def test_a_rank_refuted_by_a_later_iteration_is_forgotten():
    """`y` is a scalar in the first iteration only: no rank is claimed for it."""
    _, _, ndims = build(scalar_then_array, {"x": 1, "a": 0})
    assert "y" not in by_name(ndims) and "p" not in by_name(ndims)


def length_from_shape(x):
    n = x.shape[0]
    b = np.zeros(n)
    s = 0.0
    for i in range(n):
        b[i] = x[i] * 2.0
        s = s + b[i] if b[i] > 0 else s
    return s


def test_an_entry_of_a_shape_is_a_scalar_length():
    """`n = x.shape[0]` is an integer, so `np.zeros(n)` is a vector, `b[i]` a scalar, and the
    branch's output `s` a scalar on both paths."""
    _, _, ndims = build(length_from_shape, {"x": 1})
    names = by_name(ndims)
    assert names["n"] == 0 and names["b"] == 1 and names["b_i"] == 0 and names["s"] == 0


def joins(h, x, v):
    a = np.concatenate([h, x], axis=1)
    b = np.concatenate((h, x), axis=-1)
    c = np.hstack([h, x])
    d = np.vstack([v, v])
    e = np.stack([h, x], axis=2)
    f = np.concatenate([h, x], axis=None)
    g = np.concatenate([h, v], axis=1)  # (ranks differ: NumPy raises; no rank claimed)
    k = np.concatenate([h, x], axis=2)  # (no such axis: NumPy raises)
    m = np.zeros((h.shape[0], v.shape[0]))
    z = np.zeros((2, 3, 4))
    return a, b, c, d, e, f, g, k, m, z


def test_ranks_of_joined_arrays_and_of_zeros_of_a_shape():
    """A concatenation of a display of arrays of one ndim keeps it (vstack makes vectors rows,
    stack adds an axis, `axis=None` flattens); `np.zeros((n, m))` of lengths has one axis each."""
    _, _, ndims = build(joins, {"h": 2, "x": 2, "v": 1})
    names = by_name(ndims)
    assert [names.get(n) for n in "abcdefgkmz"] == [2, 2, 2, 2, 3, 1, None, None, 2, 3]


def thirds(z, w):
    n = w.shape[0]
    a, b, c = z[:, :n], z[:, n:2 * n], z[:, 2 * n:]
    return np.sum(np.sin(a) * np.cos(b) + c ** 2)


def test_a_multiple_of_a_length_is_an_integer_bound():
    """`2 * n` of a length `n` (normalize cannot tell `n`, an item of a shape tuple, from a
    sequence) is an integer: the adjoints of the slices it bounds add in place, without
    `rt.add_at`'s check for an advanced index."""
    fn, _, _ = build(thirds, {"z": 2, "w": 1})
    ints: set = set()
    shapes.infer(fn, {p: {"z": 2, "w": 1}[p.name] for p in fn.params}, ints)
    assert "v2_times_n" in {v.name for v in ints}
    args = (np.linspace(-1.0, 1.0, 14).reshape(2, 7), np.zeros(3))
    src = adjoint_source(thirds, 0, args=args)
    assert "rt.add_at" not in src and "z_bar[:, n:v2_times_n] += " in src
    check_grads(thirds, *args)


def test_scalar_branch_outputs_need_no_shapes_on_the_tape():
    src = adjoint_source(length_from_shape, args=(np.ones(3),))
    assert ".append(rt.shape_of(" not in src and "rt.unbroadcast(" not in src and "s_stack" not in src


# -- real floats ------------------------------------------------------------------------------

def fresh_each_step(u0, k):
    u = u0.copy()
    for _ in range(3):
        v = np.empty_like(u)
        v[0] = u[0]
        v[1:] = u[1:] * k
        u = v
    return np.sum(u * u)


def test_float_facts_flow_from_the_argument_kinds():
    fn, _, _ = build(fresh_each_step, {"u0": 1, "k": 0})
    facts = by_name(floats.infer(fn, {fn.params[0]}))
    assert facts["u"] == facts["v"] == facts["u_2"] == "f"
    assert "u" not in by_name(floats.infer(fn, set()))  # an array of unknown dtype


def test_writes_into_float_arrays_do_not_ask_their_dtype():
    """A float array cannot truncate what is written into it: no dtype read, so nothing about
    the array written in each iteration is kept on the tape."""
    src = adjoint_source(fresh_each_step, args=(np.ones(4), 0.5))
    assert "rt.shape_of(" not in src and "v_stack" not in src
    assert "u_2_bar[1:].copy()" in src and "rt.written_adjoint(" not in src  # (and `plain` reads it)


def test_writes_into_integer_arrays_still_ask_their_dtype():
    src = adjoint_source(fresh_each_step, args=(np.ones(4, dtype=int), 0.5))
    assert "rt.written_adjoint(u_2_bar, slice(1, None, None), v)" in src


def integer_then_float(n, x):
    c = np.zeros(3, int)
    c[0] = n
    b = Buffer(c)
    b[1] = x * 2.0
    return np.sum(b.copy() ** 2)


def test_a_buffer_of_integers_holds_floats():
    fn, _, _ = build(integer_then_float, {"n": 0, "x": 0})
    facts = by_name(floats.infer(fn, set()))
    assert facts["c"] == "r" and facts["b"] == "f"


def buffer_stencil(u0, k):
    u = Buffer(u0)
    for _ in range(2):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u.copy() ** 2)


def test_a_float_buffer_accumulates_like_an_array():
    """A Buffer of floats has an array of floats as gradient: `+=` into slices, not `rt.accum`."""
    src = adjoint_source(buffer_stencil, args=(np.ones(6), 0.25))
    assert "rt.accum(" not in src and "_bar[2:] += " in src


def object_slots(x):
    ob = Buffer(np.empty(2, object))
    ob[0] = x
    ob[1] = x * 2.0
    return np.sum(ob[0]) + np.sum(ob[1] ** 2)


def test_an_object_buffer_is_not_a_float():
    fn, _, _ = build(object_slots, {"x": 1})
    assert "ob" not in by_name(floats.infer(fn, {fn.params[0]}))
    assert "rt.accum(" in adjoint_source(object_slots, args=(np.ones(2),))


# -- shapes of elementwise results ------------------------------------------------------------

def residual_loss(W, X, Y):
    loss = 0.0
    for t in range(X.shape[0]):
        loss = loss + np.mean((X[t] @ W - Y[t]) ** 2)
    return loss


def test_an_elementwise_result_shares_its_shape_with_what_is_computed_from_it():
    """`r = a - b` of two arrays of unknown relative shapes has a shape of its own, which `r ** 2`
    shares: the square's gradient needs no unbroadcast, and its shape (read by the mean's
    gradient) is read from `r`, so the square itself is never computed nor kept."""
    src = adjoint_source(residual_loss, args=(np.ones((3, 2)), np.ones((4, 5, 3)), np.ones((4, 5, 2))))
    forward, backward = src.split("# adjoint")
    assert "= minus ** 2" not in forward and "pow_2_stack" not in forward
    assert "rt.unbroadcast(rt.chain(" not in backward


def test_residual_loss_matches_finite_differences():
    from adjoint_compiler.testing import check_grads
    rng = np.random.default_rng(3)
    check_grads(residual_loss, rng.standard_normal((3, 2)), rng.standard_normal((4, 5, 3)),
                rng.standard_normal((4, 5, 2)), wrt=(0,))


# -- lengths ----------------------------------------------------------------------------------

def stencil_with_lengths(u0, k):
    u = u0.copy()
    n = len(u0)
    for _ in range(3):
        new = np.zeros(n)
        new[0], new[-1] = u[0], u[-1]
        new[1:n - 1] = u[1:n - 1] + k * (u[2:n] - 2 * u[1:n - 1] + u[0:n - 2])
        u = new
    return (u * u).sum()


def test_slices_up_to_a_length_share_the_shape_of_constant_slices():
    """`n = len(u0)`: `np.zeros(n)` has u0's shape, `u[1:n - 1]`, `u[2:n]`, `u[0:n - 2]` have the
    shape of `u[1:-1]`: no shape is kept or compared at run time, and the length arithmetic runs
    once, before the loop."""
    src = adjoint_source(stencil_with_lengths, args=(np.ones(5), 0.2))
    assert "rt.shape_of(" not in src and "rt.unbroadcast(" not in src
    assert "if range_3:" not in src  # `n - 1` on an integer cannot raise: hoisted without a guard
    from adjoint_compiler.testing import check_grads
    for n in (2, 3, 6):
        check_grads(stencil_with_lengths, np.random.default_rng(n).standard_normal(n), 0.2, wrt=(0, 1))


def far_from_the_end(u0, k):
    u = u0.copy()
    n = u0.shape[0]
    for _ in range(2):
        u[1:n - 3] = u[1:n - 3] * k + u[0:n - 4]
    return np.sum(u ** 2)


def test_a_stop_three_before_the_end_is_no_constant_slice():
    """`u[1:n - 3]` is `u[1:-3]` only for n >= 2: its shape stays a run-time fact."""
    from adjoint_compiler.testing import check_grads
    _, classes, _ = build(far_from_the_end, {"u0": 1, "k": 0})
    assert not any(isinstance(c, tuple) and c[0] == "slice" for c in classes.values())
    for n in (1, 2, 4, 5, 6):  # (for n = 3 the two slices differ: NumPy raises)
        check_grads(far_from_the_end, np.random.default_rng(n).standard_normal(n), 0.5, wrt=(0, 1))


# -- writes that run --------------------------------------------------------------------------

def broadcast_assign(p, q, x, w):
    b = Buffer(x)
    b[...] = p
    b[::2] = q
    return np.sum(b.copy() * w)


def out_of_bounds(p, x, w):
    b = Buffer(x)
    b[10] = p
    return np.sum(b.copy() * w)


def test_writes_that_cannot_raise_do_not_run_when_only_shapes_are_read():
    x = np.ones(5)
    forward = adjoint_source(broadcast_assign, wrt=(0, 1), args=(0.5, 0.5, x, x)).split("# adjoint")[0]
    code = [line for line in forward.splitlines() if not line.strip().startswith("#")]
    assert not any("b[" in line for line in code)  # neither write runs: nothing reads what they wrote
    import pytest

    from adjoint_compiler import grad
    with pytest.raises(IndexError):  # a write that may raise runs, as in the primal
        grad(out_of_bounds)(0.5, x, x)


# -- vectors of numbers -----------------------------------------------------------------------

def rhs(u, p):
    return np.array([p[0] * u[0] - p[1] * u[0] * u[1], -p[2] * u[1] + p[3] * u[0] * u[1]])


def euler_functional(p, u0):
    u = u0
    for _ in range(3):
        k1 = rhs(u, p)
        k2 = rhs(u + 0.1 * k1, p)
        u = u + 0.05 * (k1 + k2)
    return np.sum(u * u)


def test_an_array_of_numbers_is_a_vector_of_their_count():
    """`np.array([a, b])` of two scalars has shape (2,): `u[0]` of the carried state stays a
    scalar, and what only meets such vectors elementwise needs no unbroadcast."""
    _, _, ndims = build(euler_functional, {"p": 1, "u0": 1})
    names = by_name(ndims)
    assert names["array_lst"] == 1 and names["u_0"] == 0
    src = adjoint_source(euler_functional, wrt=(0, 1), args=(np.ones(4), np.ones(2)))
    assert src.count("rt.unbroadcast(") <= 4  # (only where a vector meets the state u0)
    from adjoint_compiler.testing import check_grads
    check_grads(euler_functional, np.array([1.5, 1.0, 3.0, 1.0]), np.array([1.0, 0.8]), wrt=(0, 1))


# -- the float facts converge (fixpoint.py), known to unknown only ----------------------------

DTYPE = np.int64


def drifting(x, n):
    s = 0.0
    c = x * 1.0
    for _ in range(n):
        s = s + np.sum(np.sin(x))
        c = c.astype(DTYPE)
        z = np.zeros(3)
    return s + np.sum(np.abs(c)) + np.sum(z)


def _noted(printed: str) -> dict:
    """{statement: its note without the line number} of a printed stage."""
    out = {}
    for line in printed.splitlines():
        code, _, note = line.partition("  # ")
        out[code.strip()] = note.strip().partition(" ")[2].strip()
    return out


def test_a_loop_value_that_becomes_unknown_stays_unknown_and_the_rest_converges():
    """`c` is a float on entry, an integer array after one trip: the loop's `c_2` gets no fact (it
    used to be reset to its entry fact each round, so the analysis never settled and forgot
    every fact); `s`, `sin_x`, `z_2` keep theirs, and `z` (None on entry) gets none."""
    from adjoint_compiler.pipeline import compile_gradient
    noted = _noted(compile_gradient(drifting, (0,), ("f1", "r0"), "joint", stage="floats"))
    assert noted["c = x * 1.0"] == "c: f"
    assert noted["s_2 = s + sum_sin_x"] == "s_2: f" and noted["sin_x = np.sin(x)"] == "sin_x: f"
    assert noted["z_2 = np.zeros(3)"] == "z_2: f"
    assert noted["c_3 = c_2.astype(DTYPE)"] == "" and noted["abs_c = np.abs(c_2)"] == ""
    loop = next(note for code, note in noted.items() if code.startswith("for _ in range_n"))
    assert loop == "s: f"  # (the carried values: only `s` is surely a float)


def zeros_of_a_shape(x):
    z = rt.zeros_like(rt.shape_of(x))
    z[1] = np.sum(x)
    return np.sum(z * x)


def test_runtime_zeros_of_a_shape_have_its_rank_and_are_floats():
    """What a gradient read back allocates its adjoints with: `rt.zeros_like(rt.shape_of(x))`
    has x's rank and holds floats, so `z[1]` is a scalar (a copy, not a view)."""
    from adjoint_compiler.pipeline import compile_gradient
    ranks = _noted(compile_gradient(zeros_of_a_shape, (0,), ("f1",), "joint", stage="shapes"))
    facts = _noted(compile_gradient(zeros_of_a_shape, (0,), ("f1",), "joint", stage="floats"))
    z = next(code for code in ranks if code.startswith("z = rt.zeros_like("))
    assert ranks[z] == "z: ndim 1" and facts[z] == "z: f"


def new_axes(a, m):
    col = a[:, None]
    row = a[None]
    last = a[..., np.newaxis]
    mixed = m[:, 0, None]
    expanded = np.expand_dims(a, -1)
    grid = a.reshape(2, 3)
    masked = m[m > 0]
    return col, row, last, mixed, expanded, grid, masked


def test_indexing_with_slices_and_new_axes_has_its_rank():
    _, _, ndims = build(new_axes, {"a": 1, "m": 2})
    names = by_name(ndims)
    assert [names.get(n) for n in ("col", "row", "last", "mixed", "expanded", "grid")] == [2, 2, 2, 2, 2, 2]
    assert "masked" not in names  # (a mask index: the rank follows the mask, not the parts)


def test_an_inserted_axis_is_found_where_the_others_stay():
    fn, _, ndims = build(new_axes, {"a": 1, "m": 2})
    at = {s.target.name: shapes.inserted_axis(s, ndims.get(s.args[0])) for s in fn.body
          if isinstance(s, ir.Assign) and s.target is not None and s.args}
    assert (at["col"], at["row"], at["last"], at["expanded"]) == (1, 0, 1, 1)
    assert at["mixed"] is None and at["grid"] is None  # (an integer drops an axis; a reshape of 6)


def test_helpers_that_return_numbers_or_arrays_say_so():
    """Code read back as source (a gradient differentiated again) treats their results as arrays,
    not as lists whose items an `+=` would update; `rt.unbroadcast` returns a structure's
    gradient as it is (a list), so it promises nothing."""
    from adjoint_compiler.runtime_facts import facts
    assert all(facts(h).numeric for h in (rt.chain, rt.chain_div, rt.masked, rt.choice_weight))
    assert not facts(rt.unbroadcast).numeric
    assert rt.unbroadcast([1.0, 2.0], [0.0, 0.0]) == [1.0, 2.0]


# -- unused statements that may raise -----------------------------------------------------------

def unused_reads(x, n):
    unused_index = x[n]
    unused_sum = np.sum(x * 2.0)
    unused_ratio = n / 3
    unused_division = 1.0 / n
    return np.sum(np.sin(x))


def test_an_unused_statement_runs_when_it_may_raise():
    from adjoint_compiler.pipeline import compile_gradient

    lines = {line.split("=")[0].strip(): line for line in compile_gradient(
        unused_reads, (0,), ("f1", "int"), mode="grad", stage="needed").splitlines() if "unused" in line}
    assert "not computed" not in lines["unused_index"]  # (IndexError for n out of bounds)
    assert "not computed" not in lines["unused_division"]  # (ZeroDivisionError for n = 0)
    assert "not computed" in lines["unused_sum"] and "not computed" in lines["unused_ratio"]
    import pytest

    from adjoint_compiler import grad
    x = np.array([0.3, -0.2, 0.9])
    with pytest.raises(IndexError):
        grad(unused_reads)(x, 5)
    with pytest.raises(ZeroDivisionError):
        grad(unused_reads)(x, 0)
    np.testing.assert_allclose(grad(unused_reads)(x, 1), np.cos(x))

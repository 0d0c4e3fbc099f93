"""Finite-difference tests, in reverse and forward mode, of the rest of issue 15's NumPy list:
rot90, rollaxis, row_stack, vdot, meshgrid, choose, select, partition, gradient, quantile,
percentile, tolist, the reductions with `where=` (and max/min with `initial=`), and the in-place
calls `ndarray.sort`, `ndarray.partition`, `ndarray.put`/`np.put`, `np.add.at`, `np.subtract.at`
(writes: the array's old values get no gradient where they were overwritten)."""
import math

import numpy as np
import pytest

from adjoint_compiler import grad, jvp
from adjoint_compiler.testing import check_grads, check_jvp

rng = np.random.default_rng(153)


def S(v):
    """A scalar of `v` with weights that differ from entry to entry."""
    v = np.asarray(v)
    return np.sum(np.sin(1.3 * v) * (1.0 + np.arange(v.size).reshape(v.shape) / 7.0))


def both(f, *args, wrt=0):
    check_grads(f, *args, wrt=wrt)
    check_jvp(f, *args, wrt=wrt, directions=1)


# -- views and shapes ---------------------------------------------------------------------------------
def rot_1(m): return S(np.rot90(m))
def rot_k(m): return S(np.rot90(m, 3))
def rot_axes(m): return S(np.rot90(m, k=2, axes=(1, 2)) if m.ndim == 3 else np.rot90(m, 2, (1, 0)))
def roll_0(a): return S(np.rollaxis(a, 1))
def roll_start(a): return S(np.rollaxis(a, -1, 1) if a.ndim == 3 else np.rollaxis(a, 0, 2))


def row_stack_(a, b): return S(np.row_stack((a, b * 2.0)))


@pytest.mark.parametrize("f", [rot_1, rot_k, rot_axes, roll_0, roll_start])
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4)])
def test_rot90_rollaxis(f, shape):
    both(f, rng.standard_normal(shape))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_row_stack():
    if not hasattr(np, "row_stack"):
        pytest.skip("np.row_stack is gone from this NumPy")
    both(row_stack_, rng.standard_normal(3), rng.standard_normal((2, 3)), wrt=(0, 1))


def vdot_(a, b): return np.vdot(a, b) * 1.5


@pytest.mark.parametrize("sa, sb", [((4,), (4,)), ((2, 3), (2, 3)), ((2, 3), (6,))])
def test_vdot(sa, sb):
    both(vdot_, rng.standard_normal(sa), rng.standard_normal(sb), wrt=(0, 1))


def mesh_xy(x, y): return S(np.meshgrid(x, y)[0] * np.meshgrid(x, y)[1] + np.meshgrid(x, y)[0])
def mesh_ij(x, y):
    gx, gy = np.meshgrid(x, y, indexing="ij")
    return S(gx * 2.0 + gy ** 2)
def mesh_sparse(x, y):
    gx, gy = np.meshgrid(x, y, sparse=True)
    return S(gx + gy * gx)
def mesh_three(x, y):
    gx, gy, gz = np.meshgrid(x, y, x * 0.5)
    return S(gx * gy + gz)
def mesh_one(x, y): return S(np.meshgrid(x)[0] + y[0])


@pytest.mark.parametrize("f", [mesh_xy, mesh_ij, mesh_sparse, mesh_three, mesh_one])
def test_meshgrid(f):
    both(f, rng.standard_normal(3), rng.standard_normal(4), wrt=(0, 1))


# -- choose, select, partition --------------------------------------------------------------------------
IDX = np.array([[0, 2, 1], [2, 2, 0]])


def choose_list(a, b): return S(np.choose(IDX, [a, b, a * b]))
def choose_broadcast(a, b): return S(np.choose(IDX, [a[0], b, 1.5]))
def choose_wrap(a, b): return S(np.choose(IDX + 2, (a, b, a), mode="wrap"))
def choose_array(a, b): return S(np.choose(IDX, np.stack([a, b, a - b])))


@pytest.mark.parametrize("f", [choose_list, choose_broadcast, choose_wrap, choose_array])
def test_choose(f):
    both(f, rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), wrt=(0, 1))


def select_(a, b): return S(np.select([a > 0.5, b < 0.0], [a * 2.0, b], default=a[0] * 3.0))
def select_default(a, b): return S(np.select([a > 0.0], [a * b]))
def select_scalar_choice(a, b): return S(np.select([a > 0.0, b > 0.0], [1.0, b], -2.0))


@pytest.mark.parametrize("f", [select_, select_default, select_scalar_choice])
def test_select(f):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    a = np.where(np.abs(a) < 0.05, 0.3, a)
    a = np.where(np.abs(a - 0.5) < 0.05, 0.8, a)
    b = np.where(np.abs(b) < 0.05, 0.3, b)
    both(f, a, b, wrt=(0, 1))


def part_(a): return S(np.partition(a, 2))
def part_axis0(a): return S(np.partition(a, (0, 1), axis=0))
def part_none(a): return S(np.partition(a, 3, axis=None))


@pytest.mark.parametrize("f", [part_, part_axis0, part_none])
def test_partition(f):
    both(f, rng.standard_normal((3, 5)))


# -- gradient -----------------------------------------------------------------------------------------------
def grad_1d(f): return S(np.gradient(f))
def grad_spacing(f): return S(np.gradient(f, 0.3))
def grad_coords(f): return S(np.gradient(f, np.cumsum(np.linspace(0.2, 1.0, f.shape[0])), axis=0))
def grad_edge2(f): return S(np.gradient(f, edge_order=2, axis=-1))
def grad_all(f):
    parts = np.gradient(f)
    return S(parts[0]) + 2.0 * S(parts[-1])


@pytest.mark.parametrize("f", [grad_1d, grad_spacing, grad_coords, grad_edge2, grad_all])
@pytest.mark.parametrize("shape", [(4,), (9,), (7, 3)])
def test_gradient(f, shape):
    both(f, rng.standard_normal(shape))


def grad_spacing_varied(f, h): return S(np.gradient(f, h))


def test_gradient_spacing_is_refused():
    with pytest.raises(NotImplementedError, match="spacing"):
        grad(grad_spacing_varied, wrt=1)(np.arange(4.0) ** 2, 0.5)
    with pytest.raises(NotImplementedError, match="spacing"):
        jvp(grad_spacing_varied, (np.arange(4.0) ** 2, 0.5), (np.zeros(4), 1.0))


# -- quantile, percentile ---------------------------------------------------------------------------------
def quant(a, q): return np.quantile(a, q)
def quant_axis(a, q): return S(np.quantile(a, q, axis=1))
def quant_keep(a, q): return S(np.quantile(a, q, axis=0, keepdims=True))
def quant_many(a, q): return S(np.quantile(a, np.array([0.1, q, 0.9]), axis=-1))
def quant_method(a, q): return S(np.quantile(a, q, axis=1, method="lower") + np.quantile(a, q, method="midpoint"))
def quant_nearest(a, q): return S(np.quantile(a, q, method="higher", axis=0) * 2.0 + np.quantile(a, q, method="nearest"))
def pct(a, q): return S(np.percentile(a, q * 100.0, axis=1))


@pytest.mark.parametrize("f", [quant, quant_axis, quant_keep, quant_many, quant_method, quant_nearest, pct])
@pytest.mark.parametrize("shape", [(3, 5), (4, 6)])
def test_quantile(f, shape):
    a = rng.standard_normal(shape)
    both(f, a, 0.37, wrt=(0, 1) if f in (quant, quant_axis, quant_keep, quant_many, pct) else 0)


def test_quantile_ties_share_and_a_kink_takes_the_mean_slope():
    a = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
    np.testing.assert_allclose(grad(quant)(a, 0.5), [0, 0, 0.5, 0.5, 0])
    dq = grad(quant, wrt=1)(np.array([0.0, 1.0, 3.0]), 0.5)  # v = 1 exactly: slopes 2 and 4, times n - 1
    assert dq == pytest.approx(0.5 * (1.0 + 2.0) * 2)


def quant_weird(a): return np.quantile(a, 0.3, method="hazen")
def quant_overwrite(a): return np.quantile(a, 0.3, overwrite_input=True)


def test_quantile_refusals():
    from adjoint_compiler.errors import CompileError
    with pytest.raises(NotImplementedError, match="hazen"):
        grad(quant_weird)(np.arange(4.0))
    with pytest.raises(CompileError, match="overwrite_input"):
        grad(quant_overwrite)(np.arange(4.0))


# -- tolist --------------------------------------------------------------------------------------------------
def tolist_sum(x): return sum(v * v for v in x.tolist())
def tolist_index(x):
    rows = x.tolist()
    return rows[0][1] * rows[1][0] + rows[1][2]


def test_tolist():
    both(tolist_sum, rng.standard_normal(4))
    both(tolist_index, rng.standard_normal((2, 3)))


# -- reductions with where= ------------------------------------------------------------------------------------
M = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, True]])


def w_sum(a): return np.sum(a * a, where=M)
def w_sum_axis(a): return S(np.sum(a, axis=1, where=M, keepdims=True))
def w_sum_initial(a): return S(a.sum(axis=0, initial=a[0, 0], where=M))
def w_mean(a): return np.mean(a ** 2, where=M)
def w_mean_axis(a): return S(a.mean(1, where=M))
def w_mean_row(a): return S(np.mean(a, axis=0, where=M[2]))
def w_max(a): return S(np.max(a, axis=1, initial=-5.0, where=M))
def w_min(a): return S(a.min(axis=0, initial=a[1, 1] + 3.0, where=M))
def w_amax_initial(a): return S(np.amax(a, axis=0, initial=0.3))


@pytest.mark.parametrize("f", [w_sum, w_sum_axis, w_sum_initial, w_mean, w_mean_axis, w_mean_row, w_max, w_min,
                               w_amax_initial])
def test_where_reductions(f):
    a = rng.standard_normal((3, 4))
    both(f, a)


def w_mask_arg(a, m): return np.sum(a, where=m)
def w_max_plain(a): return np.sum(np.max(a, axis=1, initial=-5.0, where=M))


def test_masked_entries_get_no_gradient():
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(grad(w_mask_arg)(a, M), M.astype(float))
    np.testing.assert_allclose(grad(w_max_plain)(np.ones((3, 4)) * 0.5), M / M.sum(1, keepdims=True))
    np.testing.assert_allclose(grad(w_max_plain)(np.full((3, 4), -5.0)), M / (M.sum(1, keepdims=True) + 1.0))


def e_max(x): return np.max(x, initial=0.0)
def e_max_slice(x): return np.max(x[:0], initial=0.0) + x[0]
def e_min_slice(x): return np.min(x[:0], initial=5.0) * x[1]
def e_max_rows(a, c): return np.sum(np.max(a, axis=1, initial=c) ** 2)
def e_min_keep(a, c): return np.sum(np.min(a, axis=(0, 2), initial=c, keepdims=True) * 3.0)


def test_max_min_initial_over_empty_reduced_axes():
    # Reducing an empty axis gives `initial` itself: its slot gets the whole gradient, no entry any.
    np.testing.assert_array_equal(grad(e_max)(np.zeros(0)), np.zeros(0))
    assert jvp(e_max, (np.zeros(0),), (np.zeros(0),)) == (0.0, 0.0)
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_array_equal(grad(e_max_slice)(x), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad(e_min_slice)(x), [0.0, 5.0, 0.0])
    assert jvp(e_min_slice, (x,), (np.array([0.0, 1.0, 0.0]),))[1] == 5.0
    a_bar, c_bar = grad(e_max_rows, wrt=(0, 1))(np.zeros((2, 0)), 1.5)
    assert a_bar.shape == (2, 0) and c_bar == 2 * 2 * 1.5
    assert jvp(e_max_rows, (np.zeros((2, 0)), 1.5), (np.zeros((2, 0)), 1.0))[1] == 2 * 2 * 1.5
    a_bar, c_bar = grad(e_min_keep, wrt=(0, 1))(np.zeros((0, 3, 2)), 0.4)
    assert a_bar.shape == (0, 3, 2) and c_bar == 3 * 3.0
    both(e_min_keep, rng.standard_normal((2, 3, 2)), 0.1, wrt=(0, 1))


# -- in-place calls ------------------------------------------------------------------------------------------
def sort_inplace(x):
    y = x * 1.0
    y.sort()
    return S(y)


def sort_axis0(x):
    y = np.sin(x)
    y.sort(axis=0)
    return S(y) + S(x)


def sort_argument(x):
    x.sort()
    return S(x)


def partition_inplace(x):
    y = x * 2.0
    y.partition(1, axis=-1)
    return S(y)


def add_at(x, v):
    y = x * 1.0
    np.add.at(y, [0, 2, 2], v)
    return S(y * x)


def add_at_2d(x, v):
    y = np.zeros((3, 4))
    np.add.at(y, (np.array([0, 2, 0]), np.array([1, 1, 1])), v[:3])
    return S(y + x)


def subtract_at(x, v):
    y = x * 1.0
    np.subtract.at(y, np.array([1, 1]), v[0])
    return S(y)


def put_(x, v):
    y = x * 1.0
    np.put(y, [0, 5, 0], v[:3])
    return S(y)


def put_method(x, v):
    y = np.cos(x)
    y.put(np.array([7, 1]), v[1], mode="clip")
    return S(y) + S(v)


@pytest.mark.parametrize("f", [sort_inplace, sort_axis0, sort_argument, partition_inplace])
def test_sort_partition_in_place(f):
    both(f, rng.standard_normal((3, 4)))


@pytest.mark.parametrize("f, sx", [(add_at, (4,)), (add_at, (4, 2)), (add_at_2d, (3, 4)), (subtract_at, (3,)),
                                   (put_, (2, 3)), (put_method, (2, 3))])
def test_writes_at_indices(f, sx):
    x = rng.standard_normal(sx)
    v = rng.standard_normal(sx[1:] if f is add_at and len(sx) > 1 else (3,))
    both(f, x, v, wrt=(0, 1))


def diagonal_of_outer(x, v):
    A = np.outer(x, x) * 1.0
    np.fill_diagonal(A, v[0] * 2.0)
    return S(np.sin(A) * x)


def diagonal_wrapped(x, v):
    A = np.zeros((5, 3)) + x[:3]
    np.fill_diagonal(A, v, wrap=True)  # (v's items repeated down the wrapped diagonal)
    return S(A ** 2 * np.arange(15.0).reshape(5, 3))


@pytest.mark.parametrize("f", [diagonal_of_outer, diagonal_wrapped])
def test_fill_diagonal(f):
    both(f, rng.standard_normal(3), rng.standard_normal(2), wrt=(0, 1))


def test_fill_diagonal_of_zero_passes_nothing_through_the_diagonal():
    def f(x):
        A = np.outer(x, x)
        np.fill_diagonal(A, 0.0)
        return np.sum(A)
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_allclose(grad(f)(x), 2 * (np.sum(x) - x))  # (the analytic gradient)


def test_put_last_write_wins():
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(grad(put_, wrt=1)(np.zeros((2, 3)), v),
                                  grad(put_, wrt=1)(np.zeros((2, 3)), v) * np.array([0.0, 1.0, 1.0]))


def fill_(x, a):
    y = x * 2.0
    y.fill(a)
    return S(y * x)


def test_fill():
    both(fill_, rng.standard_normal((2, 3)), 0.7, wrt=(0, 1))


# -- np.vectorize of a differentiable Python function ------------------------------------------------------
def _bump(t, s):
    if t > 0.0:
        return math.sin(t) * s
    return t * t + s


vbump = np.vectorize(_bump)


@np.vectorize
def vsquare(t):
    return t * t + math.cos(t)


def vec_lambda(x, y): return S(np.vectorize(lambda t: t * t * 3.0)(x) + y)
def vec_global(x, y): return S(vbump(x, y))
def vec_decorated(x, y): return S(vsquare(x) * y)
def vec_broadcast(x, y): return S(np.vectorize(_bump, otypes=[float])(x, y[0]))
def vec_local_def(x, y):
    def h(t):
        return t * np.ravel(y)[0] + math.exp(0.2 * t)
    return S(np.vectorize(h)(x))


@pytest.mark.parametrize("f", [vec_lambda, vec_global, vec_decorated, vec_broadcast, vec_local_def])
@pytest.mark.parametrize("shape", [(4,), (2, 3)])
def test_vectorize(f, shape):
    x = rng.standard_normal(shape)
    x = np.where(np.abs(x) < 0.05, 0.3, x)
    both(f, x, rng.standard_normal(shape), wrt=(0, 1))


def vec_scalar(x): return np.vectorize(lambda t: t ** 3)(x) * 1.0


def test_vectorize_of_a_number():
    both(vec_scalar, 0.7)


# -- np.piecewise ---------------------------------------------------------------------------------------------
def _cube(t):
    return t ** 3


def pw_two(x, y): return S(np.piecewise(x, [x < 0.0, x >= 0.0], [lambda t: t * y[0], _cube]))
def pw_otherwise(x, y): return S(np.piecewise(x, [x < -0.5, x > 0.5], [np.sin, 2.0, lambda t: t * t]))
def pw_overlap(x, y): return S(np.piecewise(x * y, (x < 0.3, x < 0.0), (np.cos, _cube)))


@pytest.mark.parametrize("f", [pw_two, pw_otherwise, pw_overlap])
@pytest.mark.parametrize("shape", [(6,), (2, 3)])
def test_piecewise(f, shape):
    x = rng.uniform(-1.5, 1.5, shape)
    x = np.where(np.min(np.abs(np.subtract.outer(x, [-0.5, 0.0, 0.3, 0.5])), axis=-1) < 0.05, 0.8, x)
    y = rng.standard_normal(shape) if f is pw_overlap else rng.standard_normal(3)
    both(f, x, y, wrt=(0, 1))


# -- complex values without a complex rule are refused, located, in both modes ------------------------------
def c_quantile(x): return np.abs(np.quantile(x * 1j, 0.3))  # <- HERE


def c_add_at(x):
    y = np.zeros(3, dtype=complex)
    np.add.at(y, [0, 1], x[:2])  # <- HERE (a complex constant is allowed, add.at of it is not)
    return np.abs(np.sum(y))


def c_vectorize(x): return np.sum(np.vectorize(lambda t: t * 1j)(x)).real  # <- HERE


def c_eigh_of_a_constant(x): return np.sum(np.abs(np.linalg.eigh(x * ZC)[1]))  # <- HERE


ZC = np.array([[1.0, 1j], [-1j, 2.0]])


@pytest.mark.parametrize("f", [c_quantile, c_add_at, c_vectorize, c_eigh_of_a_constant])
def test_complex_values_are_refused_at_their_line(f):
    import inspect

    from adjoint_compiler.errors import AdjointCompilerError
    lines, first = inspect.getsourcelines(f)
    marked = [first + i for i, text in enumerate(lines) if "# <- HERE" in text]
    x = np.ones((2, 2)) if f is c_eigh_of_a_constant else np.ones(3)
    for run in (lambda: grad(f)(x), lambda: jvp(f, (x,), (np.ones_like(x),))):
        line = marked[0]
        with pytest.raises(AdjointCompilerError, match="complex") as info:
            run()
        assert info.value.loc is not None and info.value.loc.line == line


def multiply_at(x, v):
    y = x * 1.0
    np.multiply.at(y, [0, 2, 2, 0, 1], v[:5])
    return S(y)


def maximum_at(x, v):
    y = np.cos(x)
    np.maximum.at(y, (np.array([0, 1, 1]), np.array([2, 0, 0])), v[:3])
    return S(y)


def minimum_at(x, v):
    y = x * 2.0
    np.minimum.at(y, np.array([1, 1, 3]), v[0])
    return S(y * x)


@pytest.mark.parametrize("f, sx", [(multiply_at, (5,)), (multiply_at, (4, 2)), (maximum_at, (2, 3)), (minimum_at, (4,))])
def test_ufunc_at(f, sx):
    x = rng.standard_normal(sx)
    v = rng.standard_normal((5,) + sx[1:] if f is multiply_at else (5,))
    both(f, x, v, wrt=(0, 1))


def test_maximum_at_ties_share():
    def tie(x, v):
        b = x * 1.0
        np.maximum.at(b, [0, 0], v)
        return np.sum(b)
    np.testing.assert_allclose(grad(tie, wrt=(0, 1))(np.array([1.0, 0.0]), np.array([1.0, 0.5]))[1], [0.5, 0.0])


# -- in-place calls through views, on lists, and writes into the new results ---------------------------------
def sort_through_view(x):
    y = x * 1.0
    v = y[1:4]
    v.sort()
    return S(y)


def write_after_where(x):
    y = np.sum(x.reshape(2, 3), axis=0, where=np.array([True, False, True]))
    y[0] = 5.0 * x[0]
    return S(y * y)


def test_sort_through_a_view_and_a_write_into_a_where_reduction():
    both(sort_through_view, rng.standard_normal(5))
    both(write_after_where, rng.standard_normal(6))


def list_sort(x):
    xs = [x[0], x[1]]
    xs.sort()  # <- HERE
    return xs[0]


def put_into_expression(x):
    y = np.zeros((2, 3))
    np.put(y[0], [0, 2], x[:2])  # <- HERE
    return S(y)


@pytest.mark.parametrize("f", [list_sort, put_into_expression])
def test_in_place_calls_that_are_refused_at_their_line(f):
    import inspect

    from adjoint_compiler.errors import UnsupportedSyntaxError
    lines, first = inspect.getsourcelines(f)
    line = first + next(i for i, text in enumerate(lines) if "# <- HERE" in text)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(np.array([2.0, 1.0]))
    assert info.value.loc.line == line


# -- second derivatives: the adjoint helpers have rules, so a gradient through them differentiates again --
def h_sort(x):
    y = x * 1.0
    y.sort()
    return np.sum(y ** 3 * np.arange(x.size))


def h_partition(x): return np.sum(np.partition(x, 1) ** 3 * np.arange(x.size))
def h_rot90(x): return np.sum(np.rot90(np.stack([x[:3], x[3:]]), axes=(0, 1)) ** 3 * np.arange(6.0).reshape(3, 2))
def h_rollaxis(x): return np.sum(np.sin(np.rollaxis(np.outer(x, x), 1)) * np.arange(36.0).reshape(6, 6))
def h_where(x): return np.sum(x ** 3, where=x > 0) + np.max(x ** 2, initial=-1.0, where=x < 0.5) ** 2
def h_mean_where(x): return np.mean(np.sin(x), where=x > -0.5) ** 2


def h_add_at(x):
    y = np.zeros(3)
    np.add.at(y, [0, 0, 2, 1], x[:4])
    return np.sum(y ** 3)


def h_tolist(x): return sum(v ** 3 for v in x.tolist())
def h_choose(x): return np.sum(np.choose(np.array([0, 1, 1, 0, 1, 0]), [x ** 2, np.sin(x)]) ** 2)
def h_select(x): return np.sum(np.select([x > 1.0, x < 0.0], [x ** 3, np.cos(x)], x * x) ** 2)
def h_meshgrid(x):
    gx, gy = np.meshgrid(x[:2], x[2:5])
    return np.sum(np.sin(gx * gy))
def h_gradient(x): return np.sum(np.gradient(x ** 2, 0.5) ** 2)


def h_put(x):
    y = x ** 2
    np.put(y, [0, 3, 0], x[1:4] ** 2)
    return np.sum(y ** 2)
def h_vectorize(x): return np.sum(np.vectorize(lambda t: t ** 3 + math.sin(t))(x) ** 2)


@pytest.mark.parametrize("f", [h_sort, h_partition, h_rot90, h_rollaxis, h_where, h_mean_where, h_add_at, h_tolist,
                               h_vectorize, h_choose, h_select, h_meshgrid, h_gradient, h_put])
def test_second_derivatives(f):
    from adjoint_compiler import hessian, jacfwd
    x = np.array([0.3, -1.2, 0.8, 1.7, -0.4, 0.9])
    eps = 1e-6
    g = grad(f)
    fd = np.array([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]).T
    np.testing.assert_allclose(hessian(f)(x), fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jacfwd(grad(f))(x), fd, rtol=1e-5, atol=1e-6)


# -- ptp, average, diagflat, delete, vander, copysign, heaviside ------------------------------------------------
def ptp_all(a): return np.ptp(a) * 2.0
def ptp_axis(a): return S(np.ptp(a, axis=1))
def avg_plain(a): return np.average(a ** 2)
def avg_axis(a): return S(np.average(a, axis=0))
def avg_w(a): return S(np.average(a, axis=1, weights=np.arange(1.0, a.shape[1] + 1.0)))
def avg_w_full(a): return np.average(np.sin(a), weights=a * a + 0.5)
def avg_keep(a): return S(np.average(a, axis=1, weights=a[0] ** 2 + 1.0, keepdims=True))
def diagflat_(a): return S(np.diagflat(a[0]) + np.diagflat(a[1], 0)[:, :])
def diagflat_k(a): return S(np.diagflat(a, 1))
def delete_(a): return S(np.delete(a, 1))
def delete_axis(a): return S(np.delete(a, [0, 2], axis=1))
def vander_(a): return S(np.vander(a[0]))
def vander_n(a): return S(np.vander(a[1], 5, increasing=True))
def copysign_(a): return S(np.copysign(a, a[0] - 0.1) + np.copysign(2.0 * a, -1.0))
def heaviside_(a): return S(np.heaviside(np.round(a), a * 3.0) * a)


@pytest.mark.parametrize("f", [ptp_all, ptp_axis, avg_plain, avg_axis, avg_w, avg_w_full, avg_keep, diagflat_,
                               diagflat_k, delete_, delete_axis, vander_, vander_n, copysign_, heaviside_])
def test_more_functions(f):
    a = rng.standard_normal((2, 4))
    a = np.where(np.abs(a) < 0.05, 0.3, a)
    a = np.where(np.abs(a - 0.5) < 0.05, 0.7, a)
    a = np.where(np.abs(a + 0.5) < 0.05, -0.7, a)
    both(f, a)


def test_predicates_pass_no_gradient():
    def p(a):
        return np.sum(a * np.isposinf(a) + a * np.isneginf(-a) + a * np.isreal(a)) + np.argpartition(a, 1)[0]
    np.testing.assert_allclose(grad(p)(np.array([0.3, -1.0, 2.0])), np.ones(3))


def conv_full(a, v): return S(np.convolve(a, v))
def conv_same(a, v): return S(np.convolve(a, v, "same"))
def conv_valid(a, v): return S(np.convolve(a, v, mode="valid"))
def add_reduce_(a, v): return S(np.add.reduce(a * v[0]))
def add_reduce_axis(a, v): return S(np.add.reduce(np.outer(a, v), axis=1, keepdims=True))
def mul_reduce(a, v): return S(np.multiply.reduce(a) * v)
def max_reduce(a, v): return S(np.maximum.reduce(np.outer(a, v), axis=None) + np.minimum.reduce(np.outer(a, v)))


@pytest.mark.parametrize("f", [conv_full, conv_same, conv_valid, add_reduce_, add_reduce_axis, mul_reduce, max_reduce])
@pytest.mark.parametrize("na, nv", [(5, 3), (3, 5), (4, 4), (6, 2)])
def test_convolve_and_ufunc_reductions(f, na, nv):
    both(f, rng.standard_normal(na), rng.standard_normal(nv), wrt=(0, 1))


def geom_(a, b): return S(np.geomspace(a + 1.0, b + 2.0, 5))
def geom_neg(a, b): return S(np.geomspace(-a - 1.0, -b - 2.0, 4, endpoint=False))
def insert_one(a, b): return S(np.insert(a, 1, b[0] * 2.0))
def insert_many(a, b): return S(np.insert(a, [0, 2, 2], b[:3]))
def insert_axis(a, b): return S(np.insert(np.outer(a, b), 1, b, axis=0))
def insert_scalar(a, b): return S(np.insert(np.outer(a, b), 2, b[1], axis=1))


@pytest.mark.parametrize("f", [geom_, geom_neg])
def test_geomspace(f):
    both(f, 0.4, 1.7, wrt=(0, 1))


@pytest.mark.parametrize("f", [insert_one, insert_many, insert_axis, insert_scalar])
def test_insert(f):
    both(f, rng.standard_normal(4), rng.standard_normal(3), wrt=(0, 1))


def insert_int(a, b): return S(np.insert(np.arange(4), 1, b[0]) * a[0])


def test_insert_into_an_integer_array_truncates():
    g = grad(insert_int, wrt=1)(np.ones(4), np.array([2.5, 0.0, 0.0]))
    np.testing.assert_array_equal(g, np.zeros(3))


def average_and_weight_sum(a, w):
    m, s = np.average(a, weights=w, returned=True)
    return m * s


def average_rows_and_sums(a, w):
    m, s = np.average(a, axis=1, weights=w, returned=True)
    return np.sum(m * s) + np.sum(np.sin(s))


def average_plain_pair(a, w):
    m, s = np.average(a * w, axis=0, returned=True)  # (the sum of no weights: a count, constant)
    return np.sum(m * s)


@pytest.mark.parametrize("f, shapes", [(average_and_weight_sum, ((3,), (3,))),
                                       (average_rows_and_sums, ((2, 3), (3,))),
                                       (average_plain_pair, ((2, 3), (2, 3)))])
def test_average_returned_differentiates_the_average_and_the_sum_of_the_weights(f, shapes):
    a, w = rng.standard_normal(shapes[0]), rng.uniform(0.5, 2.0, shapes[1])
    both(f, a, w, wrt=(0, 1))

# -- correlate, running extrema, modf, divmod, and math's fsum, prod, copysign, fmod ------------------
def correlate_valid(a, v): return S(np.correlate(a, v))
def correlate_same(a, v): return S(np.correlate(a, v, "same"))
def correlate_full(a, v): return S(np.correlate(a, v, mode="full"))
def running_max(a): return S(np.maximum.accumulate(a, axis=1))
def running_min(a): return S(np.minimum.accumulate(a))
def modf_parts(a):
    frac, whole = np.modf(a * 3.0)
    return S(frac) + np.sum(whole)
def divmod_parts(a):
    q, r = np.divmod(a * 3.0, 1.3)
    return S(r * q)
def builtin_divmod(a):
    q, r = divmod(a[0, 0] * 3.0, a[1, 1] + 2.0)
    return r ** 2 + q
def math_functions(a):
    return math.fsum([a[0, 0], a[0, 1] * 2.0]) * math.prod([a[1, 0], a[1, 1]], start=2.0) \
        + math.copysign(a[0, 2], a[1, 2]) + math.fmod(a[0, 3] * 5.0, 1.5)


@pytest.mark.parametrize("f", [correlate_valid, correlate_same, correlate_full])
@pytest.mark.parametrize("n, m", [(5, 3), (2, 4), (4, 4), (1, 3)])
def test_correlate(f, n, m):
    both(f, rng.standard_normal(n), rng.standard_normal(m), wrt=(0, 1))


@pytest.mark.parametrize("f", [running_max, running_min, modf_parts, divmod_parts, builtin_divmod, math_functions])
def test_running_extrema_parts_and_math(f):
    a = rng.standard_normal((2, 4))
    a = np.where(np.abs(a) < 0.05, 0.3, a)
    both(f, a)


def test_a_running_maximum_passes_a_tie_to_the_entry_first_holding_it():
    g = grad(lambda a: np.sum(np.maximum.accumulate(a) * np.array([1.0, 2.0, 3.0, 4.0])))(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 9.0, 0.0, 0.0])


# -- np.put_along_axis, np.putmask (writes of their pure forms), ufunc.outer, np.asfortranarray ---------
def put_along_rows(a, v):
    b = a * 1.0
    np.put_along_axis(b, np.array([[0], [2]]), v[:2, None] * 2.0, axis=1)
    return S(b)


def put_along_flat(a, v):
    b = np.sin(a)
    np.put_along_axis(b, np.array([1, 1, 5]), v[:3] * 3.0, None)  # (a repeated slot: the last write wins)
    return S(b)


def putmask_cycled(a, v):
    b = a * 2.0
    np.putmask(b, a > 0.2, v[:3] ** 2)  # (values repeat by flat position)
    return S(b)


def outer_sums_and_differences(a, v):
    return S(np.subtract.outer(a[0], v) + np.add.outer(v, a[1]).T[:, :, None].sum()) + S(np.asfortranarray(a))


@pytest.mark.parametrize("f", [put_along_rows, put_along_flat, putmask_cycled, outer_sums_and_differences])
def test_in_place_puts_and_outer_products(f):
    a = rng.standard_normal((2, 4))
    a = np.where(np.abs(a - 0.2) < 0.05, 0.5, a)
    both(f, a, rng.standard_normal(4), wrt=(0, 1))


def block_matrix(a, v):
    m = np.block([[a[:, :2], np.diag(v[:2])], [a[:, 2:] * 2.0, np.ones((2, 2)) * v[3]]])
    return S(m)


def block_of_numbers(a, v):
    return S(np.block([v, a[0, :2] * 3.0, 1.5]))


def block_element_matrix(a, v):
    k = np.block([[a[:, :2] @ a[:, :2].T + 3.0 * np.eye(2), np.zeros((2, 2))], [np.zeros((2, 2)), np.eye(2) * v[0]]])
    return np.sum(np.linalg.solve(k + 2.0 * np.eye(4), np.arange(1.0, 5.0)))


@pytest.mark.parametrize("f", [block_matrix, block_of_numbers, block_element_matrix])
def test_block(f):
    both(f, rng.standard_normal((2, 4)), rng.uniform(1.0, 2.0, 4), wrt=(0, 1))


def broadcast_pair(a, v):
    p, q = np.broadcast_arrays(a[0][:, None] * 2.0, v)
    return S(np.sin(p) * q)


def broadcast_one_used(a, v):
    p, _ = np.broadcast_arrays(a[1][:, None], v)
    return S(p ** 2)


@pytest.mark.parametrize("f", [broadcast_pair, broadcast_one_used])
def test_broadcast_arrays(f):
    both(f, rng.standard_normal((2, 3)), rng.standard_normal(4), wrt=(0, 1))

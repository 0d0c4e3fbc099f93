"""Every tangent rule (forward mode) against central finite differences, over the same functions,
shapes and arguments as the adjoint rules' tests in tests/rules/ (their lists are imported), plus
the conventions at kinks and ties, exact zeros through infinite derivatives, and a check that
every primitive with an adjoint rule has a tangent rule."""
import math

import numpy as np
import pytest
import test_arithmetic as A
import test_constructors as C
import test_indexing as I
import test_keywords as K
import test_linalg as L
import test_linalg_more as LM
import test_nondiff as N
import test_numpy_more as M
import test_reductions as R
import test_runtime_helpers as H
import test_shape as S
import test_special_points as P
import test_ufuncs as U

from adjoint_compiler import jvp, registry
from adjoint_compiler.testing import check_jvp


def ids(cases):
    return [f"{c[0].__name__}-{k}" for k, c in enumerate(cases)]


# -- elementwise (rules/ufuncs.py) ------------------------------------------------------------------
@pytest.mark.parametrize("shape", U.SHAPES.values(), ids=U.SHAPES.keys())
@pytest.mark.parametrize("f,domain", U.UNARY, ids=[f.__name__ for f, _ in U.UNARY])
def test_unary_ufuncs(f, domain, shape):
    rng = np.random.default_rng(1)
    x = U.sample(rng, shape, domain)
    if shape == () and f in (U.f_clip_method, U.f_clip_method_kw):
        x = np.asarray(x)
    check_jvp(f, x, U.weights(rng, shape), wrt=0, directions=1)


@pytest.mark.parametrize("shapes", U.PAIRS.values(), ids=U.PAIRS.keys())
@pytest.mark.parametrize("f,dx,dy", U.BINARY, ids=[f.__name__ for f, _, _ in U.BINARY])
def test_binary_ufuncs(f, dx, dy, shapes):
    rng = np.random.default_rng(2)
    x, y = U.sample(rng, shapes[0], dx), U.sample(rng, shapes[1], dy)
    w = U.weights(rng, np.broadcast_shapes(shapes[0], shapes[1]))
    check_jvp(f, x, y, w, wrt=(0, 1), directions=1)
    check_jvp(f, x, y, w, wrt=1, directions=1)  # one operand's tangent: the other's terms dropped


@pytest.mark.parametrize("x", [0.37, -0.61])
@pytest.mark.parametrize("f", U.MATH_UNARY, ids=[f.__name__ for f in U.MATH_UNARY])
def test_math_unary(f, x):
    if f in (U.m_log, U.m_log_base, U.m_log1p, U.m_log2, U.m_log10, U.m_sqrt, U.m_acosh):
        x = abs(x)
    check_jvp(f, x, directions=1)


@pytest.mark.parametrize("f", [U.m_atan2, U.m_hypot, U.m_pow, U.m_log_xb, U.b_pow])
def test_math_binary(f):
    check_jvp(f, 0.7, 1.9, directions=1)


# -- operators and builtins (rules/arithmetic.py) ---------------------------------------------------
@pytest.mark.parametrize("shapes", A.PAIRS.values(), ids=A.PAIRS.keys())
@pytest.mark.parametrize("f", A.BINARY, ids=[f.__name__ for f in A.BINARY])
def test_operators(f, shapes):
    rng = np.random.default_rng(12)
    low, high = ((2.1, 3.9), (0.7, 0.8)) if f is A.a_mod else ((0.5, 2.0), (0.5, 2.0))
    x, y = rng.uniform(*low, shapes[0]), rng.uniform(*high, shapes[1])
    x, y = (float(v) if v.ndim == 0 else v for v in (x, y))
    w = rng.standard_normal(np.broadcast_shapes(*shapes))
    w = float(w) if w.ndim == 0 else w
    check_jvp(f, x, y, w, wrt=(0, 1), directions=1)
    check_jvp(f, x, y, w, wrt=0, directions=1)


@pytest.mark.parametrize("sx,sy,sw", [((3, 4), (4, 2), (3, 2)), ((4,), (4,), ()), ((3, 4), (4,), (3,)),
                                      ((4,), (4, 2), (2,)), ((2, 3, 4), (4, 5), (2, 3, 5))])
def test_matmul(sx, sy, sw):
    rng = np.random.default_rng(13)
    w = rng.standard_normal(sw)
    check_jvp(A.a_matmul, rng.standard_normal(sx), rng.standard_normal(sy), float(w) if sw == () else w,
              wrt=(0, 1), directions=1)


@pytest.mark.parametrize("f,sx,sw", A.BUILTINS, ids=ids(A.BUILTINS))
def test_builtins(f, sx, sw):
    rng = np.random.default_rng(14)
    x = rng.standard_normal(sx) if sx else float(rng.standard_normal())
    w = rng.standard_normal(sw) if sw else float(rng.standard_normal())
    check_jvp(f, x, w, directions=1)


def test_float_casts():
    check_jvp(A.b_float, 0.7)
    check_jvp(A.b_float_array, np.array([0.3, -1.2]))
    check_jvp(A.b_float64, 0.7)


# -- reductions -------------------------------------------------------------------------------------
@pytest.mark.parametrize("f,x_shape,w_shape", R.CASES, ids=[f"{f.__name__}-{s}" for f, s, _ in R.CASES])
def test_reductions(f, x_shape, w_shape):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, x_shape) * rng.choice([-1.0, 1.0], x_shape)
    w = rng.standard_normal(w_shape)
    check_jvp(f, x, float(w) if w_shape == () else w, wrt=0, directions=1)


@pytest.mark.parametrize("f", [R.r_sum, R.r_mean, R.r_prod, R.r_max, R.r_min, R.r_var, R.r_std, R.r_cumsum])
def test_reduction_of_scalar(f):
    with np.errstate(divide="ignore", invalid="ignore"):
        check_jvp(f, 0.7, 1.3, directions=1)


@pytest.mark.parametrize("x", P.ZEROS.values(), ids=P.ZEROS.keys())
@pytest.mark.parametrize("f", [P.s_cumprod, P.s_cumprod_axis0, P.s_cumprod_axis1, P.s_cumprod_method, P.s_prod,
                               P.s_prod_axis, P.s_prod_square])
def test_products_through_zeros(f, x):
    _, tangent = check_jvp(f, x, directions=1)
    assert np.isfinite(tangent)


# -- products and linear algebra ------------------------------------------------------------------
@pytest.mark.parametrize("f,sa,sb,sw", L.PRODUCTS, ids=[L._id(c) for c in L.PRODUCTS])
def test_products(f, sa, sb, sw):
    rng = np.random.default_rng(5)
    a, b, w = (rng.standard_normal(s) if s else float(rng.standard_normal()) for s in (sa, sb, sw))
    check_jvp(f, a, b, w, wrt=(0, 1), directions=1)


@pytest.mark.parametrize("f,sx,sw", L.UNARY, ids=[f"{f.__name__}-{sx}" for f, sx, _ in L.UNARY])
def test_linalg_unary(f, sx, sw):
    rng = np.random.default_rng(6)
    x = L.wellcond(rng, sx) if f in (L.l_inv, L.l_det) else rng.standard_normal(sx)
    w = rng.standard_normal(sw) if sw else float(rng.standard_normal())
    check_jvp(f, x, w, wrt=0, directions=1)


@pytest.mark.parametrize("sa,sb", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2))])
def test_solve(sa, sb):
    rng = np.random.default_rng(7)
    a, b, w = L.wellcond(rng, sa), rng.standard_normal(sb), rng.standard_normal(sb)
    check_jvp(L.l_solve, a, b, w, wrt=(0, 1), directions=1)
    check_jvp(L.l_solve, a, b, w, wrt=0, directions=1)


@pytest.mark.parametrize("f,sx,sw", L.DIAGONALS, ids=ids(L.DIAGONALS))
def test_diagonals(f, sx, sw):
    rng = np.random.default_rng(16)
    x = L.wellcond(rng, sx) if f in (L.l_slogdet, L.l_slogdet_attr, L.l_slogdet_unpacked) else rng.standard_normal(sx)
    w = rng.standard_normal(sw) if sw else float(rng.standard_normal())
    check_jvp(f, x, w, wrt=0, directions=1)


def l_det_singular(a): return np.linalg.det(a) * 2.0
def l_multiply_outer(a, b, w): return np.sum(np.multiply.outer(a, b) * w)


@pytest.mark.parametrize("sa,sb", [((3,), (2,)), ((2, 2), (3,)), ((), (3,)), ((3,), ())])
def test_multiply_outer(sa, sb):
    """Its adjoint and tangent (gradients of matrix-vector products call it: they differentiate again)."""
    from adjoint_compiler.testing import check_grads
    rng = np.random.default_rng(17)
    a, b = (rng.standard_normal(s) if s else float(rng.standard_normal()) for s in (sa, sb))
    w = rng.standard_normal(sa + sb)
    check_grads(l_multiply_outer, a, b, w, wrt=(0, 1))
    check_jvp(l_multiply_outer, a, b, w, wrt=(0, 1), directions=1)


def test_det_of_a_singular_matrix():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    check_jvp(l_det_singular, a)


# -- shapes, copies, joins, constructors ------------------------------------------------------------
@pytest.mark.parametrize("f,sx,sw", S.UNARY, ids=[f"{f.__name__}-{sx}" for f, sx, _ in S.UNARY])
def test_shape_functions(f, sx, sw):
    rng = np.random.default_rng(9)
    x = rng.standard_normal(sx) if sx else float(rng.standard_normal())
    check_jvp(f, x, rng.standard_normal(sw), wrt=0, directions=1)


@pytest.mark.parametrize("f,sa,sb,sw", S.PAIRS, ids=[f"{f.__name__}-{sa}-{sb}" for f, sa, sb, _ in S.PAIRS])
def test_joins(f, sa, sb, sw):
    rng = np.random.default_rng(10)
    a, b = (rng.standard_normal(s) if s else float(rng.standard_normal()) for s in (sa, sb))
    w = rng.standard_normal(sw)
    check_jvp(f, a, b, w, wrt=(0, 1), directions=1)
    check_jvp(f, a, b, w, wrt=1, directions=1)  # the other item's tangent a zero of its shape


@pytest.mark.parametrize("f,sw", [(S.s_stack_seq, (3, 2)), (S.s_concat_seq, (6,)), (S.s_array_seq, (2, 3))])
def test_sequence_arguments(f, sw):
    rng = np.random.default_rng(11)
    xs = (rng.standard_normal(3), rng.standard_normal(3))
    check_jvp(f, xs, rng.standard_normal(sw), wrt=0, directions=1)
    check_jvp(f, list(xs), rng.standard_normal(sw), wrt=0, directions=1)


@pytest.mark.parametrize("f, shape, out_shape", [(S.s_diff, (5,), (4,)), (S.s_diff, (3, 4), (3, 3)),
                                                 (S.s_diff_2_axis0, (5, 2), (3, 2))])
def test_diff(f, shape, out_shape):
    rng = np.random.default_rng(7)
    check_jvp(f, rng.standard_normal(shape), rng.standard_normal(out_shape), wrt=0, directions=1)


@pytest.mark.parametrize("f", [S.s_sort, S.s_sort_axis0, S.s_sort_none, S.s_sort_kind])
def test_sort(f):
    rng = np.random.default_rng(41)
    check_jvp(f, rng.standard_normal((3, 4)), directions=1)
    if f is not S.s_sort_axis0:
        check_jvp(f, rng.standard_normal(5), directions=1)


def test_astype_int_passes_no_tangent():
    x = np.array([1.5, 2.5, -0.5])
    _, t = jvp(S.s_astype_int, (x,), (np.ones(3),))
    assert t == pytest.approx(np.sum(x.astype(int)))


CONSTRUCTORS = [(C.c_full, (1.5,)), (C.c_full_kw, (-0.7,)), (C.c_full_row, (np.array([0.5, -1.0, 2.0]),)),
                (C.c_full_column, (np.array([0.3, 1.1]),)), (C.c_full_dtype, (0.4,)), (C.c_full_int, (1.3,)),
                (C.c_full_like, (np.array([1.0, 2.0, 3.0]),)), (C.c_full_like_kw, (np.array([0.5, -1.0, 2.0]),)),
                (C.c_full_like_int, (np.array([0.5, 1.7, 2.0]),)), (C.c_full_like_shape, (np.array([0.5, 1.7, 2.0]),)),
                (C.c_linspace, (1.5,)), (C.c_linspace_endpoint, (1.5,)), (C.c_linspace_num_kw, (0.3, 2.1)),
                (C.c_linspace_one, (0.3, 2.1)), (C.c_linspace_two, (-0.4, 1.1)),
                (C.c_linspace_arrays, (np.array([0.0, 1.0, -2.0]), np.array([2.0, 3.0, 0.5]))),
                (C.c_linspace_axis, (np.array([0.0, 1.0, -2.0]), 2.5)),
                (C.c_linspace_axis_neg, (0.7, np.array([0.0, 1.0]))),
                (C.c_linspace_broadcast, (np.array([[0.0], [1.0]]), np.array([2.0, 3.0, 0.5]))),
                (C.c_linspace_int, (0.3, 5.6)), (C.c_arange_start, (0.3,)), (C.c_arange_step, (0.7,)),
                (C.c_arange_step_kw, (0.35,)), (C.c_arange_all, (0.2, 0.3)), (C.c_arange_keywords, (1.2,)),
                (C.c_arange_stop_only, (4.5,)), (C.c_arange_constant, (0.3,)), (C.c_arange_int, (0.6,)),
                (C.c_shape_only, (np.array([0.5, 1.0, 2.0]),)), (C.c_logspace, (0.3, 1.7)),
                (C.c_logspace_kw, (0.3, 1.7)), (C.c_logspace_base, (0.3, 1.7)),
                (C.c_logspace_arrays, (np.array([0.1, -0.5]), np.array([1.0, 0.5])))]


@pytest.mark.parametrize("f,args", CONSTRUCTORS, ids=ids(CONSTRUCTORS))
def test_constructors(f, args):
    check_jvp(f, *args, directions=1)


# -- indexing, keywords, non-differentiable functions -----------------------------------------------
@pytest.mark.parametrize("f,shape", I.CASES, ids=[f"{f.__name__}-{s}" for f, s in I.CASES])
def test_indexing(f, shape):
    rng = np.random.default_rng(15)
    check_jvp(f, rng.standard_normal(shape), rng.standard_normal(shape), wrt=0, directions=1)


@pytest.mark.parametrize("f", K.DTYPES, ids=[f.__name__ for f in K.DTYPES])
def test_keywords(f):
    check_jvp(f, np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]]), directions=1)


def test_nondifferentiable_functions():
    x = np.array([0.3, -1.7, 2.6, 0.9])
    for f in (N.n_sign, N.n_round, N.n_shape, N.n_dtype, N.n_argmax, N.n_any):
        check_jvp(f, x, directions=1)
    for f in (N.n_math, N.n_int):
        check_jvp(f, 2.3, directions=1)


# -- the runtime helpers (their rules make generated gradients differentiable again) ----------------
@pytest.mark.parametrize("f,args", H.CASES, ids=ids(H.CASES))
def test_runtime_helpers(f, args):
    check_jvp(f, *args, directions=1)


# -- conventions -------------------------------------------------------------------------------------
def c_abs(x): return np.abs(x)
def c_maximum(x, y): return np.maximum(x, y)
def c_max(x): return np.max(x)
def c_builtin_max(x, y): return max(x, y)
def c_clip(x): return np.clip(x, -1.0, 1.0)
def c_sqrt(x): return np.sqrt(x)
def c_log_where(x): return np.where(x > 0.0, np.log(np.where(x > 0.0, x, 1.0)), 0.0) + np.sqrt(x)


def test_conventions_match_the_adjoints():
    """Kinks and ties: the tangent is the adjoint's subgradient applied to the direction."""
    assert jvp(c_abs, (0.0,), (1.0,))[1] == 0.0
    np.testing.assert_array_equal(jvp(c_maximum, (np.array([1.0, 2.0]), np.array([1.0, 0.0])),
                                      (np.array([1.0, 1.0]), np.array([3.0, 5.0])))[1], [2.0, 1.0])
    assert jvp(c_max, (np.array([1.0, 3.0, 3.0]),), (np.array([5.0, 1.0, 2.0]),))[1] == 1.5
    assert jvp(c_builtin_max, (2.0, 2.0), (1.0, 3.0))[1] == 2.0
    np.testing.assert_array_equal(jvp(c_clip, (np.array([-2.0, -1.0, 0.0, 1.0, 2.0]),), (np.ones(5),))[1],
                                  [0.0, 1.0, 1.0, 1.0, 0.0])


def test_a_zero_tangent_through_an_infinite_derivative_is_zero():
    """sqrt at 0 along a direction that does not move that entry: exactly 0, never 0 * inf = nan."""
    _, t = jvp(c_sqrt, (np.array([0.0, 4.0]),), (np.array([0.0, 1.0]),))
    np.testing.assert_array_equal(t, [0.0, 0.25])
    with np.errstate(divide="ignore", invalid="ignore"):
        _, t = jvp(c_log_where, (np.array([0.0, 4.0]),), (np.array([0.0, 1.0]),))
    np.testing.assert_allclose(t, [0.0, 0.5])


# -- issue 15: more of NumPy (rules/numpy_more.py), over the adjoint tests' functions ---------------
M_UNARY = [(f, (3, 4) if f is not M.tal_axis0 else (3, 3)) for f in M.GATHERS] + [(f, (3, 4)) for f in M.PADS]


@pytest.mark.parametrize("f,shape", M_UNARY, ids=ids(M_UNARY))
def test_gathers_and_pads(f, shape):
    check_jvp(f, np.random.default_rng(20).standard_normal(shape), directions=1)


M_PAIRS = [(M.split_even, (4, 6)), (M.split_at, (4, 6)), (M.array_split_uneven, (4, 6)), (M.hsplit_, (4, 6)),
           (M.vsplit_, (4, 6)), (M.hsplit_vector, (4, 6)), (M.dsplit_, (2, 3, 2)), (M.pad_vector, ((5,), (8,))),
           (M.nansum_, (3, 4)), (M.nansum_all, (3, 4)), (M.nansum_keep, (3, 4)), (M.nanmean_, (3, 4)),
           (M.nanmean_all, (3, 4)), (M.nanmax_, (3, 4)), (M.nanmin_, (3, 5)), (M.median_, (3, 4)),
           (M.median_, (3, 5)), (M.median_axis, (3, 4)), (M.median_axis0, (3, 5)), (M.median_axes, (3, 4)),
           (M.ntn, (4,))]


@pytest.mark.parametrize("f,shape", M_PAIRS, ids=ids(M_PAIRS))
def test_splits_and_nan_reductions(f, shape):
    rng = np.random.default_rng(21)
    sa, sw = shape if isinstance(shape[0], tuple) else (shape, shape)
    check_jvp(f, rng.standard_normal(sa), rng.standard_normal(sw), wrt=(0, 1), directions=1)


def test_nan_entries_pass_no_tangent():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 2.0]])
    t = np.arange(6.0).reshape(2, 3) + 1.0
    w = np.ones((2, 3))
    zero = np.zeros((2, 3))
    np.testing.assert_allclose(jvp(M.nansum_, (a, w), (t, zero))[1], 1 + 3 + 5 + 6)
    np.testing.assert_allclose(jvp(M.nanmean_, (a, w), (t, zero))[1], 2.0 + 5.5)
    np.testing.assert_allclose(jvp(M.nanmax_, (a, w), (t, zero))[1], 3.0 + 5.5)  # a tie shares
    x = np.array([1.5, np.nan, np.inf, -np.inf, -0.5])
    w5 = np.array([0.3, 0.2, -0.4, 0.6, 1.1])
    _, tw = jvp(M.ntn_values, (x, w5), (np.zeros(5), np.ones(5)))
    exact = np.nan_to_num(x, nan=w5[0] * 2.0, posinf=w5[1], neginf=-w5[2])
    assert tw == pytest.approx(np.sum(exact) + 2.0 * w5[1] + w5[2] - w5[3])  # the replaced entries' weights


M_JOINS = [(M.append_flat, (2, 3), (4,), (10,)), (M.append_flat, (), (3,), (4,)), (M.append_axis0, (2, 3), (1, 3), (3, 3)),
           (M.append_axis1, (2, 3), (2, 2), (2, 5)), (M.column_stack_, (4,), (4,), (4, 2)),
           (M.column_stack_2d, (4,), (4,), (4, 2)), (M.dstack_, (4,), (4,), (1, 4, 2)),
           (M.dstack_matrices, (2, 3), (2, 3), (2, 3, 2)), (M.kron_, (3,), (2,), (6,)), (M.kron_, (2, 3), (2, 2), (4, 6)),
           (M.kron_, (), (3,), (3,)), (M.kron_, (2, 1, 2), (2, 3), (2, 2, 6)), (M.cross_, (3,), (3,), (3,)),
           (M.cross_, (4, 3), (3,), (4, 3)), (M.cross_, (3,), (2,), (3,)), (M.cross_, (4, 2), (4, 2), (4,)),
           (M.cross_axes, (3, 4), (4, 3), (3, 4)), (M.cross_axis, (5, 3, 2), (5, 3, 2), (5, 3, 2)),
           (M.cross_axisb, (2, 2), (2, 3), (2, 3)),
           (M.pad_const_value, (3, 4), (), (4, 7)), (M.polyval_, (4,), (), ()), (M.polyval_, (4,), (5,), (5,)),
           (M.polyval_, (1,), (3,), (3,)), (M.polyval_, (3,), (2, 3), (2, 3))]


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@pytest.mark.parametrize("f,sa,sb,sw", M_JOINS, ids=ids(M_JOINS))
def test_joins_products_polynomials(f, sa, sb, sw):
    rng = np.random.default_rng(22)
    a, b, w = (rng.standard_normal(s) if s else float(rng.standard_normal()) for s in (sa, sb, sw))
    check_jvp(f, a, b, w, wrt=(0, 1), directions=1)
    check_jvp(f, a, b, w, wrt=1, directions=1)


@pytest.mark.parametrize("f", [M.interp_, M.interp_lr])
@pytest.mark.parametrize("sx", [(), (7,), (3, 4)])
def test_interp(f, sx):
    rng = np.random.default_rng(23)
    x = rng.uniform(-2.0, 3.0, sx) if sx else 0.3
    if sx:
        x = np.where(np.min(np.abs(np.subtract.outer(x, M.XP)), axis=-1) < 0.05, 0.25, x)
    w = rng.standard_normal(sx) if sx else 0.8
    check_jvp(f, x, M.XP.copy(), rng.standard_normal(4), w, wrt=(0, 1, 2), directions=1)


def test_interp_at_a_knot_takes_the_mean_slope():
    fp = np.array([0.0, 1.0, 3.0, 3.0])
    assert jvp(M.interp_at, (0.0, M.XP, fp), (1.0, np.zeros(4), np.zeros(4)))[1] == pytest.approx(0.5 * (1.0 + 4.0))


@pytest.mark.parametrize("f", [M.trap_, M.trap_dx, M.trap_axis0, M.trap_plain])
@pytest.mark.parametrize("sy", [(5,), (3, 5)])
def test_trapezoid(f, sy):
    rng = np.random.default_rng(24)
    check_jvp(f, rng.standard_normal(sy), np.cumsum(rng.uniform(0.2, 1.0, 5)), rng.standard_normal(sy),
              wrt=(0, 1), directions=1)


def test_trapezoid_with_an_x_per_row():
    rng = np.random.default_rng(25)
    check_jvp(M.trap_full_x, rng.standard_normal((3, 5)), np.cumsum(rng.uniform(0.2, 1.0, (3, 5)), axis=1),
              wrt=(0, 1), directions=1)


@pytest.mark.parametrize("f", [M.sinc_, M.fabs_])
@pytest.mark.parametrize("sx", [(), (6,), (2, 3)])
def test_sinc_fabs(f, sx):
    rng = np.random.default_rng(26)
    x = rng.uniform(-2.0, 2.0, sx) if sx else 0.7
    x = np.where(np.abs(x) < 0.05, 0.3, x) if sx else x
    check_jvp(f, x, rng.standard_normal(sx) if sx else 0.4, wrt=0, directions=1)


def test_pad_mode_without_a_tangent_is_refused():
    with pytest.raises(NotImplementedError, match="linear_ramp"):
        jvp(M.pad_linear_ramp, (np.ones(3),), (np.ones(3),))


# -- issue 15: the np.linalg factorizations ------------------------------------------------------------
def _spd(rng, shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


FACTOR = ([(f, s) for f in (LM.chol, LM.chol_upper, LM.chol_logdet) for s in ((1, 1), (3, 3), (2, 4, 4))]
          + [(f, s) for f in (LM.eigh_values, LM.eigh_both, LM.eigh_upper, LM.eigh_fields, LM.eigh_vectors_only,
                              LM.eigvalsh, LM.eigvalsh_upper) for s in ((3, 3), (2, 4, 4))])


@pytest.mark.parametrize("f,shape", FACTOR, ids=ids(FACTOR))
def test_cholesky_eigh(f, shape):
    rng = np.random.default_rng(27)
    a = _spd(rng, shape)
    if f in (LM.chol, LM.chol_upper, LM.chol_logdet):
        check_jvp(f, a, rng.standard_normal(shape), wrt=0, directions=1)
    else:
        check_jvp(f, a, rng.standard_normal(shape[:-1]), rng.standard_normal(shape), wrt=0, directions=1)


def test_the_triangle_read_gets_the_tangent():
    rng = np.random.default_rng(28)
    a, w = _spd(rng, (3, 3)), rng.standard_normal((3, 3))
    upper_only = np.triu(rng.standard_normal((3, 3)), 1)
    assert jvp(LM.chol, (a, w), (upper_only, np.zeros((3, 3))))[1] == 0.0
    assert jvp(LM.chol_upper, (a, w), (upper_only.T, np.zeros((3, 3))))[1] == 0.0


SVD_SHAPES = [(4, 3), (3, 3), (3, 5), (2, 3, 4)]
SVD = [(f, s) for f in (LM.svd_reduced, LM.svd_fields, LM.svd_values, LM.svd_values_kw) for s in SVD_SHAPES] + \
      [(LM.svd_full, (3, 3)), (LM.svd_full, (2, 3, 3))]
QR = [(f, s) for f in (LM.qr_reduced, LM.qr_fields, LM.qr_r) for s in SVD_SHAPES] + \
     [(LM.qr_complete, (3, 3)), (LM.qr_complete, (3, 5))]


@pytest.mark.parametrize("f,shape", SVD + QR, ids=ids(SVD + QR))
def test_svd_qr(f, shape):
    rng = np.random.default_rng(29)
    a = rng.standard_normal(shape)
    if f in (LM.qr_reduced, LM.qr_fields, LM.qr_r, LM.qr_complete):
        q, r = np.linalg.qr(a, mode="complete" if f is LM.qr_complete else "reduced")
        ws = [rng.standard_normal(q.shape), rng.standard_normal(r.shape)]
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=f is LM.svd_full)
        ws = [rng.standard_normal(np.shape(v)) for v in (u, s, vh)]
    check_jvp(f, a, *ws, wrt=0, directions=1)


@pytest.mark.parametrize("f", [LM.svd_full, LM.qr_complete])
def test_completed_bases_are_refused_in_forward_mode(f):
    from adjoint_compiler.runtime import UndefinedGradientError
    a = np.random.default_rng(30).standard_normal((4, 3))
    ws = [np.ones((4, 4)), np.ones(3), np.ones((3, 3))] if f is LM.svd_full else [np.ones((4, 4)), np.ones((4, 3))]
    with pytest.raises(UndefinedGradientError, match="complet"):
        jvp(f, (a, *ws), (np.ones(a.shape),) + tuple(np.zeros(np.shape(w)) for w in ws))


def test_repeated_eigenvalues_in_forward_mode():
    """A direction that splits a repeated eigenvalue moves LAPACK's eigenvectors discontinuously:
    forward mode refuses it (it cannot know that the loss reads only their projector); along one
    that does not split it, the tangent is defined."""
    from adjoint_compiler.runtime import UndefinedGradientError
    a, w = LM.REPEATED, np.random.default_rng(31).standard_normal((3, 3))
    with pytest.raises(UndefinedGradientError, match="eigenvectors"):
        jvp(LM.eig_projector, (a, w), (np.random.default_rng(32).standard_normal((3, 3)), np.zeros((3, 3))))
    _, v = np.linalg.eigh(a)
    t = v @ np.diag([0.3, 0.3, -1.2]) @ v.T + np.outer(v[:, 0], v[:, 2]) + np.outer(v[:, 2], v[:, 0])
    _, got = jvp(LM.eig_projector, (a, w), (t, np.zeros((3, 3))))
    eps = 1e-6
    fd = (LM.eig_projector(a + eps * t, w) - LM.eig_projector(a - eps * t, w)) / (2 * eps)
    assert got == pytest.approx(fd, rel=1e-5, abs=1e-7)


PINV = [(f, s) for f in (LM.pinv, LM.pinv_rcond) for s in SVD_SHAPES] + \
       [(f, s) for f in (LM.mpow3, LM.mpow1, LM.mpow0, LM.mpow_neg) for s in ((1, 1), (3, 3), (2, 3, 3))]


@pytest.mark.parametrize("f,shape", PINV, ids=ids(PINV))
def test_pinv_matrix_power(f, shape):
    rng = np.random.default_rng(33)
    a = rng.standard_normal(shape) * 0.4 + (np.eye(shape[-1]) if shape[-1] == shape[-2] else 0.0)
    w = rng.standard_normal(np.shape(np.linalg.pinv(a)) if f in (LM.pinv, LM.pinv_rcond) else shape)
    check_jvp(f, a, w, wrt=0, directions=1)


LSTSQ = [(f, sa, sb) for f in (LM.lstsq_x, LM.lstsq_all, LM.lstsq_index)
         for sa, sb in (((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 3), (3,)), ((2, 4), (2, 3)))]


@pytest.mark.parametrize("f,sa,sb", LSTSQ, ids=ids(LSTSQ))
def test_lstsq(f, sa, sb):
    rng = np.random.default_rng(34)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    w = rng.standard_normal(np.shape(np.linalg.lstsq(a, b)[0]))
    check_jvp(f, a, b, w, wrt=(0, 1), directions=1)
    check_jvp(f, a, b, w, wrt=1, directions=1)


# -- issue 15: SciPy (skipped without it: an optional dependency) ----------------------------------------
try:
    import scipy  # noqa: F401
    import test_scipy as SC
except ImportError:
    SC = None
needs_scipy = pytest.mark.skipif(SC is None, reason="scipy is an optional dependency")
SC_UNARY = [] if SC is None else [(f, d, s) for f, d in SC.UNARY for s in ((), (3, 4))]


@needs_scipy
@pytest.mark.parametrize("f,domain,shape", SC_UNARY, ids=ids(SC_UNARY))
def test_scipy_elementwise(f, domain, shape):
    rng = np.random.default_rng(35)
    x = rng.uniform(*domain, shape)
    x = float(x) if shape == () else x
    w = float(rng.standard_normal()) if shape == () else rng.standard_normal(shape)
    check_jvp(f, x, w, wrt=0, directions=1)


@needs_scipy
@pytest.mark.parametrize("sx,sy", [((), ()), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3, 4))])
@pytest.mark.parametrize("name", ["s_xlogy", "s_xlog1py"])
def test_scipy_xlogy(name, sx, sy):
    rng = np.random.default_rng(36)
    f = getattr(SC, name)
    x, y = (rng.uniform(0.3, 2.0, s) if s else float(rng.uniform(0.3, 2.0)) for s in (sx, sy))
    shape = np.broadcast_shapes(sx, sy)
    w = rng.standard_normal(shape) if shape else 0.6
    check_jvp(f, x, y, w, wrt=(0, 1), directions=1)
    check_jvp(f, x, y, w, wrt=1, directions=1)


SC_NORMALIZATIONS = [] if SC is None else SC.NORMALIZATIONS


@needs_scipy
@pytest.mark.parametrize("f", SC_NORMALIZATIONS, ids=[f.__name__ for f in SC_NORMALIZATIONS])
def test_scipy_normalizations(f):
    rng = np.random.default_rng(37)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    if f is SC.s_lse_sign:
        w = np.abs(w) + 0.1
    check_jvp(f, x, w, wrt=(0, 1) if f in (SC.s_lse_b, SC.s_lse_b_axis, SC.s_lse_sign) else 0, directions=1)


SC_LINALG = [] if SC is None else (
    [(f, sa, sb) for f in (SC.st, SC.st_lower, SC.st_trans, SC.st_trans_t, SC.st_unit, SC.st_positional)
     for sa, sb in (((3, 3), (3,)), ((2, 3, 3), (2, 3, 2)))]
    + [(SC.st, (2, 3, 3), (3,)), (SC.st_trans, (2, 3, 3), (3,))]
    + [(f, sa, sb) for f in (SC.cho, SC.cho_lower, SC.cho_unpacked, SC.cho_whole_factor)
       for sa, sb in (((3, 3), (3,)), ((3, 3), (3, 2)))]
    + [(SC.cho, (2, 3, 3), (2, 3, 2)), (SC.cho_lower, (2, 3, 3), (2, 3, 2))])


@needs_scipy
@pytest.mark.parametrize("f,sa,sb", SC_LINALG, ids=ids(SC_LINALG))
def test_scipy_linalg(f, sa, sb):
    rng = np.random.default_rng(38)
    if f in (SC.cho, SC.cho_lower, SC.cho_unpacked, SC.cho_whole_factor):
        a = _spd(rng, sa)
    else:
        a = rng.standard_normal(sa) * 0.3 + 2.0 * np.eye(sa[-1])
    b = rng.standard_normal(sb)
    w = rng.standard_normal(np.shape(f.__globals__["linalg"].solve_triangular(a, b)) if f in (SC.st, SC.st_trans)
                            else sb)
    check_jvp(f, a, b, w, wrt=(0, 1), directions=1)
    check_jvp(f, a, b, w, wrt=1, directions=1)


@needs_scipy
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3)])
def test_scipy_expm(shape):
    rng = np.random.default_rng(39)
    check_jvp(SC.expm_sum, rng.standard_normal(shape) * 0.7, rng.standard_normal(shape), wrt=0, directions=1)


SC_NORM = [] if SC is None else [(f, s) for f in (SC.n_logpdf, SC.n_pdf, SC.n_cdf, SC.n_logcdf, SC.n_logpdf_default,
                                                 SC.n_cdf_loc)
                                 for s in (((), (), ()), ((3, 4), (4,), (3, 1)))]


@needs_scipy
@pytest.mark.parametrize("f,shapes", SC_NORM, ids=ids(SC_NORM))
def test_scipy_norm(f, shapes):
    rng = np.random.default_rng(40)
    x = rng.standard_normal(shapes[0]) if shapes[0] else 0.3
    loc = rng.standard_normal(shapes[1]) * 0.3 if shapes[1] else -0.2
    scale = rng.uniform(0.5, 2.0, shapes[2]) if shapes[2] else 1.4
    check_jvp(f, x, loc, scale, wrt=(0, 1, 2), directions=1)
    check_jvp(f, x, loc, scale, wrt=2, directions=1)


# Adjoint rules whose tangent rules are still to be written (forward mode refuses them with a
# located MissingRuleError until then), and those of the SciPy rules (loaded when SciPy is imported).
PENDING_TANGENTS: set = set()
PENDING_SCIPY_TANGENTS: set = set()


def test_every_adjoint_rule_has_a_tangent_rule():
    registry.load_builtin_rules()
    pending = set(PENDING_TANGENTS)
    try:  # the SciPy rules too, whatever the tests before this one imported
        import scipy.linalg  # noqa: F401
        import scipy.special  # noqa: F401
        import scipy.stats  # noqa: F401
        registry.load_optional()
        pending |= PENDING_SCIPY_TANGENTS
    except ImportError:
        pass
    missing = {registry._describe(k) for k, rule in registry.RULES.items()
               if rule.body is not None and k not in registry.USER_KEYS and registry.lookup_tangent(k) is None}
    assert missing - pending == set()
    assert pending <= missing, "a pending tangent rule was written: take it off the pending set"


def _halved(x):
    return x * 0.5


def uses_halved(x):
    return _halved(x) * 2.0


def test_a_primitive_without_a_tangent_rule_is_a_located_error():
    from adjoint_compiler import adjoint
    from adjoint_compiler.errors import MissingRuleError

    @adjoint(_halved)  # an adjoint rule alone: reverse mode works, forward mode is refused
    def _(y, x):
        x_bar += 0.5 * y_bar  # noqa: F821
    with pytest.raises(MissingRuleError, match="_halved"):
        jvp(uses_halved, (np.array([1.0, 3.0, 2.0]),), (np.ones(3),))


def test_tangent_rules_read_only_what_the_adjoints_differentiate():
    """Activity follows each tangent rule's arguments; the built-in tangent rules read the
    tangents of exactly the arguments their adjoints give a gradient (or refuse: a tangent rule
    reads those only to check that theirs is zero, `rt.no_tangent`)."""
    registry.load_builtin_rules()
    for key, rule in registry.TANGENTS.items():
        adjoint = registry.RULES.get(key)
        if adjoint is not None and adjoint.body is not None and key not in registry.USER_KEYS:
            assert rule.diff_params <= adjoint.diff_params | {adjoint.result} | set(adjoint.refused), \
                registry._describe(key)
            assert rule.params == adjoint.params and rule.varargs == adjoint.varargs, registry._describe(key)


def test_math_module_on_floats_gives_floats():
    value, t = jvp(U.m_sin, (0.3,), (1.0,))
    assert type(value) is float and type(t) is float
    assert t == pytest.approx(math.cos(0.3) * 1.3)

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
import test_nondiff as N
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


# The adjoint rules issue 15 added in the same session as forward mode; their tangent rules are
# still to be written (forward mode refuses them with a located MissingRuleError until then).
PENDING_TANGENTS = {
    "Attr(name='Q')", "Attr(name='R')", "Attr(name='S')", "Attr(name='U')", "Attr(name='Vh')",
    "Attr(name='eigenvalues')", "Attr(name='eigenvectors')", "Attr(name='sign')", "Method(name='take')",
    "numpy.append", "numpy.array_split", "numpy.column_stack", "numpy.cross", "numpy.dsplit", "numpy.dstack",
    "numpy.fabs", "numpy.hsplit", "numpy.interp", "numpy.kron", "numpy.linalg.cholesky", "numpy.linalg.eigh",
    "numpy.linalg.eigvalsh", "numpy.linalg.lstsq", "numpy.linalg.matrix_power", "numpy.linalg.pinv",
    "numpy.linalg.qr", "numpy.linalg.svd", "numpy.median", "numpy.nan_to_num", "numpy.nanmax", "numpy.nanmean",
    "numpy.nanmin", "numpy.nansum", "numpy.pad", "numpy.polyval", "numpy.sinc", "numpy.split", "numpy.take",
    "numpy.take_along_axis", "numpy.trapezoid", "numpy.vsplit",
    # dict comprehensions and the views of a dict made at run time (issue 16): reverse mode only so far
    "builtins.dict", "adjoint_compiler.runtime_rules.dict_values_list",
    "adjoint_compiler.runtime_rules.dict_items_list",
}


# ... and those of the SciPy rules (loaded when SciPy is imported).
PENDING_SCIPY_TANGENTS = {
    "adjoint_compiler.runtime_rules.digamma", "adjoint_compiler.runtime_rules.polygamma", "erf", "erfc",
    "erfcinv", "erfinv", "expit", "gamma", "gammaln", "log_expit", "log_ndtr", "logit", "ndtr", "ndtri", "psi",
    "scipy.linalg._basic.solve_triangular", "scipy.linalg._decomp_cholesky.cho_factor",
    "scipy.linalg._decomp_cholesky.cho_solve", "scipy.linalg._matfuncs.expm", "scipy.special._basic.polygamma",
    "scipy.special._logsumexp.log_softmax", "scipy.special._logsumexp.logsumexp",
    "scipy.special._logsumexp.softmax", "scipy.stats._distn_infrastructure.rv_continuous.cdf",
    "scipy.stats._distn_infrastructure.rv_continuous.logcdf",
    "scipy.stats._distn_infrastructure.rv_continuous.logpdf",
    "scipy.stats._distn_infrastructure.rv_continuous.pdf", "xlog1py", "xlogy",
}


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


def test_a_primitive_without_a_tangent_rule_is_a_located_error():
    from adjoint_compiler.errors import MissingRuleError

    def uses_median(x):
        return np.median(x) * 2.0
    with pytest.raises(MissingRuleError):
        jvp(uses_median, (np.array([1.0, 3.0, 2.0]),), (np.ones(3),))


def test_tangent_rules_read_only_what_the_adjoints_differentiate():
    """Activity follows each tangent rule's arguments; the built-in tangent rules read the
    tangents of exactly the arguments their adjoints give a gradient."""
    registry.load_builtin_rules()
    for key, rule in registry.TANGENTS.items():
        adjoint = registry.RULES.get(key)
        if adjoint is not None and adjoint.body is not None and key not in registry.USER_KEYS:
            assert rule.diff_params <= adjoint.diff_params | {adjoint.result}, registry._describe(key)
            assert rule.params == adjoint.params and rule.varargs == adjoint.varargs, registry._describe(key)


def test_math_module_on_floats_gives_floats():
    value, t = jvp(U.m_sin, (0.3,), (1.0,))
    assert type(value) is float and type(t) is float
    assert t == pytest.approx(math.cos(0.3) * 1.3)

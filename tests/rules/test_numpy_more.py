"""Finite-difference tests of rules/numpy_more.py (issue 15): take, take_along_axis, pad, split
and its variants, append, column_stack, dstack, kron, cross, interp, trapezoid, polyval, sinc,
fabs, nan_to_num, nansum, nanmean, nanmax, nanmin, median, over shapes and keywords; and the
conventions at kinks, ties and nan entries."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.testing import check_grads, check_jvp

rng = np.random.default_rng(152)


def w_like(v):
    return rng.standard_normal(np.shape(v)) if np.ndim(v) else float(rng.standard_normal())


# -- gathers ---------------------------------------------------------------------------------------------
IDX = np.array([2, 0, 2, -1])
IDX2 = np.array([[0, 2], [1, 1]])
AIDX = np.array([[0, 2, 2], [1, 0, 0], [2, 2, 1]])


def S(v):
    """A scalar of `v` whose weights differ from entry to entry (no weights array to shape)."""
    return np.sum(np.sin(2.0 * v) + 0.5 * v)


def take_flat(a): return S(np.take(a, IDX))
def take_axis0(a): return S(np.take(a, IDX, axis=0))
def take_axis1(a): return S(np.take(a, IDX2, axis=1))
def take_wrap(a): return S(np.take(a, np.array([5, -7, 1]), mode="wrap"))
def take_clip(a): return S(np.take(a, np.array([9, -3, 1]), axis=-1, mode="clip"))
def take_method(a): return S(a.take(IDX2, axis=0))
def take_scalar(a): return S(np.take(a, 1))
def tal_axis0(a): return S(np.take_along_axis(a, AIDX, axis=0))
def tal_axis1(a): return S(np.take_along_axis(a, np.argsort(a, axis=1), axis=1))
def tal_none(a): return S(np.take_along_axis(a, np.array([4, 4, 0]), axis=None))
def tal_broadcast(a): return S(np.take_along_axis(a, np.array([[0], [2], [1]]), 1))


GATHERS = [take_flat, take_axis0, take_axis1, take_wrap, take_clip, take_method, take_scalar, tal_axis0, tal_axis1,
           tal_none, tal_broadcast]


@pytest.mark.parametrize("f", GATHERS, ids=[f.__name__ for f in GATHERS])
def test_gathers(f):
    check_grads(f, rng.standard_normal((3, 4) if f is not tal_axis0 else (3, 3)))


def pad_const(a): return S(np.pad(a, 2))
def pad_widths(a): return S(np.pad(a, ((1, 2), (0, 3))))
def pad_edge(a): return S(np.pad(a, 2, mode="edge"))
def pad_reflect(a): return S(np.pad(a, ((2, 1), (1, 3)), "reflect"))
def pad_symmetric(a): return S(np.pad(a, 2, mode="symmetric"))
def pad_wrap(a): return S(np.pad(a, (1, 4), mode="wrap"))
def pad_value(a): return S(np.pad(a, 1, constant_values=a[0, 0] * 2.0))
def pad_values(a): return S(np.pad(a, 1, constant_values=((1.0, 2.0), (3.0, 4.0))))


PADS = [pad_const, pad_widths, pad_edge, pad_reflect, pad_symmetric, pad_wrap, pad_value, pad_values]


@pytest.mark.parametrize("f", PADS, ids=[f.__name__ for f in PADS])
def test_pad(f):
    check_grads(f, rng.standard_normal((3, 4)))


def pad_vector(a, w): return np.sum(np.pad(a, (2, 1), mode="reflect") * w)


def test_pad_vector():
    a = rng.standard_normal(5)
    check_grads(pad_vector, a, rng.standard_normal(8))


def pad_const_value(a, c, w): return np.sum(np.pad(a, ((1, 0), (2, 1)), constant_values=c) * w)


def test_pad_constant_gets_its_gradient():
    a, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 7))
    check_grads(pad_const_value, a, 0.5, w, wrt=(0, 1))


def pad_linear_ramp(a): return np.sum(np.pad(a, 1, mode="linear_ramp"))


def test_pad_mode_without_a_gradient_is_refused():
    with pytest.raises(NotImplementedError, match="linear_ramp"):
        grad(pad_linear_ramp)(np.ones(3))


# -- splitting and joining -------------------------------------------------------------------------------------
def split_even(a, w):
    p, _q, r = np.split(a, 3, axis=1)
    return np.sum(p * w[:, :2]) + np.sum(np.sin(r) * w[:, 4:])


def split_at(a, w):
    parts = np.split(a, [1, 3])
    return np.sum(parts[0] * w[:1]) + np.sum(parts[2] ** 2)


def array_split_uneven(a, w):
    p, q = np.array_split(a, 2, axis=1)
    return np.sum(p * w[:, :3]) + np.sum(q * w[:, 3:])


def hsplit_(a, w):
    _p, q = np.hsplit(a, 2)
    return np.sum(q * w[:, 3:])


def vsplit_(a, w):
    p, q = np.vsplit(a, [2])
    return np.sum(p * w[:2]) - np.sum(q)


def hsplit_vector(a, w):
    p, q = np.hsplit(a[0], 2)
    return np.sum(p * q)


@pytest.mark.parametrize("f", [split_even, split_at, array_split_uneven, hsplit_, vsplit_, hsplit_vector])
def test_split(f):
    check_grads(f, rng.standard_normal((4, 6)), rng.standard_normal((4, 6)))


def dsplit_(a, w):
    p, q = np.dsplit(a, 2)
    return np.sum(p * w[..., :1]) + np.sum(q ** 2)


def test_dsplit():
    check_grads(dsplit_, rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 3, 2)))


def append_flat(a, b, w): return np.sum(np.append(a, b) * w)
def append_axis0(a, b, w): return np.sum(np.append(a, b, axis=0) * w)
def append_axis1(a, b, w): return np.sum(np.append(a, b, 1) * w)


@pytest.mark.parametrize("f, sa, sb, sw", [(append_flat, (2, 3), (4,), (10,)), (append_flat, (), (3,), (4,)),
                                           (append_axis0, (2, 3), (1, 3), (3, 3)),
                                           (append_axis1, (2, 3), (2, 2), (2, 5))])
def test_append(f, sa, sb, sw):
    a = rng.standard_normal(sa) if sa else 0.7
    check_grads(f, a, rng.standard_normal(sb), rng.standard_normal(sw), wrt=(0, 1))


def column_stack_(a, b, w): return np.sum(np.column_stack([a, b]) * w)
def column_stack_2d(a, b, w): return np.sum(np.column_stack((a, b[:, None] * b[:, None])) * w)
def dstack_(a, b, w): return np.sum(np.dstack([a, b]) * w)


@pytest.mark.parametrize("f, sw", [(column_stack_, (4, 2)), (column_stack_2d, (4, 2)), (dstack_, (1, 4, 2))])
def test_joining(f, sw):
    check_grads(f, rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(sw), wrt=(0, 1))


def column_stack_numbers(a, w): return np.sum(np.column_stack(a) * w)  # a vector's items: one row
def column_stack_scalar(a, b, w): return np.sum(np.column_stack((2.0 * b, a[0])) * w)


def test_column_stack_of_numbers():
    # (autograd's test_column_stack_1d: the items of a vector are numbers, each a 1x1 block)
    check_grads(column_stack_numbers, rng.standard_normal(3), rng.standard_normal((1, 3)))
    check_grads(column_stack_scalar, rng.standard_normal(3), 0.7, rng.standard_normal((1, 2)), wrt=(0, 1))


def dstack_matrices(a, b, w): return np.sum(np.dstack((a, b)) * w)


def test_dstack_matrices():
    check_grads(dstack_matrices, rng.standard_normal((2, 3)), rng.standard_normal((2, 3)),
                rng.standard_normal((2, 3, 2)), wrt=(0, 1))


# -- products -------------------------------------------------------------------------------------------------
def kron_(a, b, w): return np.sum(np.kron(a, b) * w)


@pytest.mark.parametrize("sa, sb", [((3,), (2,)), ((2, 3), (2, 2)), ((3,), (2, 2)), ((2, 2), (3,)), ((), (3,)),
                                    ((2, 1, 2), (2, 3))])
def test_kron(sa, sb):
    a = rng.standard_normal(sa) if sa else 1.3
    b = rng.standard_normal(sb)
    check_grads(kron_, a, b, w_like(np.kron(a, b)), wrt=(0, 1))


def cross_(a, b, w): return np.sum(np.cross(a, b) * w)


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((4, 3), (3,)), ((2, 4, 3), (4, 3)), ((3,), (2,)),
                                    ((5, 3), (5, 3))])
def test_cross(sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    check_grads(cross_, a, b, w_like(np.cross(a, b)), wrt=(0, 1))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
def test_cross_of_2_vectors():
    a, b = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    check_grads(cross_, a, b, rng.standard_normal(4), wrt=(0, 1))


def cross_axes(a, b, w): return np.sum(np.cross(a, b, axisa=0, axisc=0) * w)
def cross_axis(a, b, w): return np.sum(np.cross(a, b, axis=1) * w)
def cross_axisb(a, b, w): return np.sum(np.cross(a, b, 0, 1, -1) * w)


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@pytest.mark.parametrize("f, sa, sb", [(cross_axes, (3, 4), (4, 3)), (cross_axes, (2, 4), (4, 2)),
                                       (cross_axis, (5, 3, 2), (5, 3, 2)), (cross_axisb, (3, 2), (2, 3)),
                                       (cross_axisb, (2, 2), (2, 3))])
def test_cross_axes(f, sa, sb):
    # (autograd's test_cross: axisa, axisb, axisc and axis)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    w = w_like(np.cross(a, b, axisa=0, axisc=0) if f is cross_axes else np.cross(a, b, axis=1) if f is cross_axis
               else np.cross(a, b, 0, 1, -1))
    check_grads(f, a, b, w, wrt=(0, 1))


# -- interpolation, quadrature, polynomials --------------------------------------------------------------------
XP = np.array([-1.0, 0.0, 0.5, 2.0])


def interp_(x, xp, fp, w): return np.sum(np.interp(x, xp, fp) * w)
def interp_lr(x, xp, fp, w): return np.sum(np.interp(x, xp, fp, left=xp[0] * 3.0, right=-1.0) * w)


@pytest.mark.parametrize("f", [interp_, interp_lr])
@pytest.mark.parametrize("sx", [(), (7,), (3, 4)])
def test_interp(f, sx):
    x = rng.uniform(-2.0, 3.0, sx) if sx else 0.3
    fp = rng.standard_normal(4)
    x = np.where(np.min(np.abs(np.subtract.outer(x, XP)), axis=-1) < 0.05, 0.25, x) if sx else x
    check_grads(f, x, XP.copy(), fp, w_like(x), wrt=(0, 1, 2))


def interp_at(x, xp, fp): return np.interp(x, xp, fp)


def test_interp_at_a_knot_takes_the_mean_slope():
    fp = np.array([0.0, 1.0, 3.0, 3.0])
    assert grad(interp_at)(0.0, XP, fp) == pytest.approx(0.5 * (1.0 / 1.0 + 2.0 / 0.5))
    assert grad(interp_at)(-1.0, XP, fp) == pytest.approx(0.5)  # flat to the left
    assert grad(interp_at)(5.0, XP, fp) == 0.0
    g_fp = grad(interp_at, wrt=2)(0.0, XP, fp)
    np.testing.assert_allclose(g_fp, [0.0, 1.0, 0.0, 0.0])


def trap_(y, x, w): return np.sum(np.trapezoid(y * w, x))
def trap_dx(y, x, w): return np.sum(np.trapezoid(y * w, dx=x[1] - x[0]))
def trap_axis0(y, x, w): return np.sum(np.trapezoid(y * w, x[:y.shape[0]], axis=0))
def trap_plain(y, x, w): return np.sum(np.trapezoid(y * w) * x[0])


@pytest.mark.parametrize("f", [trap_, trap_dx, trap_axis0, trap_plain])
@pytest.mark.parametrize("sy", [(5,), (3, 5)])
def test_trapezoid(f, sy):
    y = rng.standard_normal(sy)
    x = np.cumsum(rng.uniform(0.2, 1.0, 5))
    check_grads(f, y, x, rng.standard_normal(sy), wrt=(0, 1))


def trap_full_x(y, x): return np.sum(np.trapezoid(y, x, axis=1))


def test_trapezoid_with_an_x_per_row():
    y, x = rng.standard_normal((3, 5)), np.cumsum(rng.uniform(0.2, 1.0, (3, 5)), axis=1)
    check_grads(trap_full_x, y, x, wrt=(0, 1))


def polyval_(p, x, w): return np.sum(np.polyval(p, x) * w)


@pytest.mark.parametrize("sp, sx", [((4,), ()), ((4,), (5,)), ((1,), (3,)), ((3,), (2, 3))])
def test_polyval(sp, sx):
    p = rng.standard_normal(sp)
    x = rng.standard_normal(sx) if sx else 0.4
    check_grads(polyval_, p, x, w_like(x), wrt=(0, 1))


# -- elementwise ------------------------------------------------------------------------------------------------
def sinc_(x, w): return np.sum(np.sinc(x) * w)
def fabs_(x, w): return np.sum(np.fabs(x) * w)


@pytest.mark.parametrize("f", [sinc_, fabs_])
@pytest.mark.parametrize("sx", [(), (6,), (2, 3)])
def test_elementwise(f, sx):
    x = rng.uniform(-2.0, 2.0, sx) if sx else 0.7
    x = np.where(np.abs(x) < 0.05, 0.3, x) if sx else x
    check_grads(f, x, w_like(x))


def sinc_at_zero(x): return np.sinc(x)


def test_sinc_at_zero_and_fabs_at_zero():
    assert grad(sinc_at_zero)(0.0) == 0.0
    np.testing.assert_array_equal(grad(fabs_)(np.array([0.0, -2.0]), np.ones(2)), [0.0, -1.0])


def ntn(x, w): return np.sum(np.nan_to_num(x) * w)
def ntn_values(x, w): return np.sum(np.nan_to_num(x * 1.0, nan=w[0] * 2.0, posinf=w[1], neginf=-w[2]) * w)


def test_nan_to_num():
    x = np.array([1.5, np.nan, np.inf, -np.inf, -0.5])
    w = rng.standard_normal(5)
    g = grad(ntn)(x, w)
    np.testing.assert_array_equal(g, [w[0], 0.0, 0.0, 0.0, w[4]])
    gw = grad(ntn_values, wrt=1)(x, w)
    exact = np.nan_to_num(x, nan=w[0] * 2.0, posinf=w[1], neginf=-w[2])
    expected = exact.copy()
    expected[0] += 2.0 * w[1]
    expected[1] += w[2]
    expected[2] -= w[3]
    np.testing.assert_allclose(gw, expected)
    check_grads(ntn, rng.standard_normal(4), rng.standard_normal(4))


# -- nan-aware reductions and the median --------------------------------------------------------------------------
def nansum_(a, w): return np.sum(np.nansum(a, axis=1) * w[:, 0])
def nansum_all(a, w): return np.nansum(a * w)
def nansum_keep(a, w): return np.sum(np.nansum(a, axis=0, keepdims=True) * w[:1])
def nanmean_(a, w): return np.sum(np.nanmean(a, axis=1) * w[:, 0])
def nanmean_all(a, w): return np.nanmean(a) * w[0, 0]
def nanmax_(a, w): return np.sum(np.nanmax(a, axis=1) * w[:, 0])
def nanmin_(a, w): return np.nanmin(a) * w[0, 0]
def median_(a, w): return np.median(a) * w[0, 0]
def median_axis(a, w): return np.sum(np.median(a, axis=1) * w[:, 0])
def median_axis0(a, w): return np.sum(np.median(a, axis=0, keepdims=True) * w[:1])
def median_axes(a, w): return np.median(a, axis=(0, 1)) * w[0, 0]


NAN_REDUCTIONS = [nansum_, nansum_all, nansum_keep, nanmean_, nanmean_all, nanmax_, nanmin_, median_, median_axis,
                  median_axis0, median_axes]


@pytest.mark.parametrize("f", NAN_REDUCTIONS, ids=[f.__name__ for f in NAN_REDUCTIONS])
@pytest.mark.parametrize("shape", [(3, 4), (3, 5)])
def test_reductions(f, shape):
    a = rng.standard_normal(shape)
    check_grads(f, a, rng.standard_normal(shape))


def test_nan_entries_get_no_gradient():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 2.0]])
    w = np.ones((2, 3))
    np.testing.assert_array_equal(grad(nansum_)(a, w), [[1, 0, 1], [0, 1, 1]])
    np.testing.assert_allclose(grad(nanmean_)(a, w), [[0.5, 0, 0.5], [0, 0.5, 0.5]])
    np.testing.assert_allclose(grad(nanmax_)(a, w), [[0, 0, 1], [0, 0.5, 0.5]])  # a tie splits


def median_plain(a): return np.median(a)


def test_median_ties_split_equally():
    np.testing.assert_allclose(grad(median_plain)(np.array([3.0, 1.0, 2.0])), [0, 0, 1])
    np.testing.assert_allclose(grad(median_plain)(np.array([4.0, 1.0, 2.0, 3.0])), [0, 0, 0.5, 0.5])
    np.testing.assert_allclose(grad(median_plain)(np.array([2.0, 1.0, 2.0])), [0.5, 0, 0.5])
    np.testing.assert_allclose(grad(median_plain)(np.array([1.0, 1.0, 3.0, 5.0])), [0.25, 0.25, 0.5, 0])


def median_overwrite(a): return np.median(a, overwrite_input=True)


def test_median_overwrite_input_is_refused():
    from adjoint_compiler.errors import CompileError
    with pytest.raises(CompileError, match="overwrite_input"):
        grad(median_overwrite)(np.ones(3))


# -- np.i0, nextafter, spacing; multi_dot, tensorsolve, tensorinv (twins) -------------------------------------
def i0_(x): return np.sum(np.i0(x) * np.arange(1.0, 4.0))
def nextafter_(x, y): return np.sum(np.nextafter(x, y) ** 2)
def spacing_(x): return np.sum(np.spacing(x) * 1e10 + x)
def multi_dot_(a, b, c): return np.sum(np.linalg.multi_dot([a, b, c]) ** 2)
def multi_dot_vectors(v, b, w): return np.linalg.multi_dot([v, b, w]) ** 2
def tensorsolve_(a, b): return np.sum(np.linalg.tensorsolve(a, b) ** 2)
def tensorinv_(a): return np.sum(np.linalg.tensorinv(a, ind=2) ** 2)


def _well_posed(*shape):
    return (np.eye(6) * 3 + rng.standard_normal((6, 6)) * 0.3).reshape(shape)


@pytest.mark.parametrize("f, shapes", [
    (i0_, [(3,)]), (nextafter_, [(3,), (3,)]), (spacing_, [(3,)]), (multi_dot_, [(2, 3), (3, 4), (4, 2)]),
    (multi_dot_vectors, [(3,), (3, 4), (4,)]), (tensorsolve_, ["a", (2, 3)]), (tensorinv_, ["b"])])
def test_more_functions_adjoint_and_tangent(f, shapes):
    args = [_well_posed(2, 3, 6) if s == "a" else _well_posed(2, 3, 2, 3) if s == "b" else rng.standard_normal(s)
            for s in shapes]
    wrt = tuple(range(len(args)))
    check_grads(f, *args, wrt=wrt)
    check_jvp(f, *args, wrt=wrt)


def test_i0_derivative_without_scipy_matches():
    # (the fallback when SciPy is not installed: a midpoint rule for I1)
    import builtins

    from adjoint_compiler import runtime as rt
    x = np.array([-30.0, -2.0, 0.0, 0.5, 3.0, 30.0])
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name.startswith("scipy"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    builtins.__import__ = no_scipy
    try:
        fallback = rt.i0_derivative(x)
    finally:
        builtins.__import__ = real_import
    eps = 1e-6
    np.testing.assert_allclose(fallback, (np.i0(x + eps) - np.i0(x - eps)) / (2 * eps), rtol=1e-6, atol=1e-12)

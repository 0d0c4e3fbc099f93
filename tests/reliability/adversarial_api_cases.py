"""Adversarial programs for the public API (issue 12, families 5-10 and 15): constructors, dtype
conversions, complex values, NumPy calls in method and function form with keyword and positional
variants, argument kinds (np.float32, 0-d, Fortran-ordered, strided), names that collide with the
generated code's own (`rt`, `np`, builtins). Written the way users write them, not the way the
compiler was designed. `tests/reliability/test_adversarial_api.py` checks each in `grad`,
`value_and_grad` and `vjp` against central finite differences; the ones in `REFUSED` must raise a
located `AdjointCompilerError` instead.
"""
# ruff: noqa: E701, E702, E731, F841, A001
import functools
import math

import numpy
import numpy as np

CASES = []
def case(*args, wrt=0, eps=1e-6, rtol=1e-5):
    def reg(f):
        CASES.append((f, list(args), wrt, eps, rtol)); return f
    return reg
V = np.array([0.3, -1.2, 0.8])
V4 = np.array([0.5, 1.1, -0.7, 2.0])
M = np.array([[0.3, -1.2, 0.8], [1.4, 0.45, -0.6]])
S = np.array([[1.0, 0.2, 0.1], [0.3, 2.0, -0.4], [0.5, 0.1, 1.5]])

@case(0.7)
def full_scalar(s): return np.sum(np.full(3, s) * np.arange(3.0))
@case(0.7)
def full_kw(s): return np.sum(np.full(shape=(2, 2), fill_value=s) ** 2)
@case(0.7)
def full_dtype(s): return np.sum(np.full((3,), s, dtype=np.float64) * 2)
@case(V)
def full_like_s(v): return np.sum(np.full_like(v, v[0]) * v)
@case(0.4, 1.7, wrt=(0, 1))
def lin(a, b): return np.sum(np.linspace(a, b, 5) ** 2)
@case(0.4, 1.7, wrt=(0, 1))
def lin_kw(a, b): return np.sum(np.linspace(start=a, stop=b, num=4, endpoint=False) ** 2)
@case(0.4, 1.7, wrt=(0, 1))
def lin_retstep(a, b):
    xs, step = np.linspace(a, b, 5, retstep=True)
    return np.sum(xs) * step
@case(0.4, 1.7, wrt=(0, 1))
def geom(a, b): return np.sum(np.geomspace(a + 1, b + 1, 4))
@case(0.4, 1.7, wrt=(0, 1))
def logsp(a, b): return np.sum(np.logspace(a, b, 4))
@case(0.3)
def arange_start(x): return np.sum(np.arange(x, 5.0) ** 2)
@case(0.3)
def arange_step(x): return np.sum(np.arange(0.0, 3.0, 0.5 + x * 0.01) )
@case(V)
def arange_int(v): return np.sum(np.arange(3) * v)
@case(0.3, 1.1, -0.5, 2.0, wrt=(0, 1, 2, 3))
def arr22(a, b, c, d):
    m = np.array([[a, b], [c, d]])
    return np.linalg.det(m) + np.sum(m @ m)
@case(0.3, 1.1)
def arr_mixed(a, b):
    m = np.array([[a, 1.0], [2.0, b]])
    return np.sum(m ** 3)
@case(V)
def arr_from_elems(v):
    return np.sum(np.array([v[0], v[1] * 2, 3.0]) ** 2)
@case(V)
def arr_dtype_float(v):
    return np.sum(np.array([v[0], v[2]], dtype=float) ** 2)
@case(V)
def arr_dtype_int(v):
    return np.sum(np.array(v * 3, dtype=int) * v)
@case(V)
def asarray_list(v):
    return np.sum(np.asarray([v, v * 2]) ** 2)
@case(V)
def stack_loop(v):
    rows = []
    for i in range(3):
        rows.append(v * (i + 1))
    return np.sum(np.stack(rows) ** 2)
@case(V)
def stack_axis1(v):
    rows = [v, np.sin(v)]
    return np.sum(np.stack(rows, axis=1) * np.arange(6.0).reshape(3, 2))
@case(V)
def concat_loop(v):
    parts = []
    for i in range(2):
        parts.append(v[i:] * 2.0)
    return np.sum(np.concatenate(parts) ** 2)
@case(M)
def concat_axis(m): return np.sum(np.concatenate([m, m ** 2], axis=1) * np.arange(12.0).reshape(2, 6))
@case(M)
def concat_none(m): return np.sum(np.concatenate((m, m.T), axis=None) ** 2)
@case(V)
def hstack_v(v): return np.sum(np.hstack([v, v ** 2]) * np.arange(6.0))
@case(V)
def vstack_v(v): return np.sum(np.vstack((v, v ** 2)) ** 2)
@case(V)
def column_stack_v(v): return np.sum(np.column_stack([v, v * 3]) ** 2)
@case(0.7)
def eye_s(s): return np.sum((np.eye(3) * s) @ np.ones(3))
@case(0.7)
def eye_kw(s): return np.sum(np.eye(3, k=1) * s ** 2)
@case(0.7)
def identity_s(s): return np.trace(np.identity(2) * s)
@case(V)
def diag_v(v): return np.sum(np.diag(v) @ np.arange(9.0).reshape(3, 3))
@case(S)
def diag_m(m): return np.sum(np.diag(m) ** 2)
@case(S)
def diag_k(m): return np.sum(np.diag(m, k=1) ** 2)
@case(S)
def diagonal_m(m): return np.sum(m.diagonal() ** 2)
@case(S)
def tri_mask(m): return np.sum(np.tri(3) * m)
@case(S)
def tril_m(m): return np.sum(np.tril(m) ** 2) + np.sum(np.triu(m, 1))
@case(V)
def zeros_like_plus(v): return np.sum((np.zeros_like(v) + v) ** 2)
@case(V)
def ones_like_mul(v): return np.sum(np.ones_like(v) * v ** 2)
@case(V)
def empty_like_fill(v):
    out = np.empty_like(v)
    out[:] = v * 2
    return np.sum(out ** 2)
@case(V)
def zeros_write(v):
    z = np.zeros(3)
    z[1] = v[0]
    return np.sum(z * v)
@case(V)
def zeros_shape_kw(v):
    z = np.zeros(shape=v.shape)
    z += v
    return np.sum(z ** 2)
@case(V)
def tile_v(v): return np.sum(np.tile(v, 2) * np.arange(6.0))
@case(V)
def repeat_v(v): return np.sum(np.repeat(v, 2) * np.arange(6.0))
@case(V)
def meshgrid_v(v):
    a, b = np.meshgrid(v, v[:2])
    return np.sum(a * b)
@case(V)
def outer_v(v): return np.sum(np.outer(v, v) ** 2)
@case(V)
def vander_v(v): return np.sum(np.vander(v, 3))
# dtypes
@case(V, eps=1e-3, rtol=1e-2)
def astype32(v): return np.sum(v.astype(np.float32) * 2)
@case(V)
def astype_int(v): return np.sum(v.astype(int) * v)
@case(V)
def astype_str(v): return np.sum(v.astype('float64') ** 2)
@case(V)
def f32_scalar(v): return np.sum(v * np.float32(0.5))
@case(V, eps=1e-3, rtol=1e-2)
def f32_call(v): return float(np.float32(v[0])) * v[1]
@case(V)
def int_call(v): return int(v[0] * 10 + 0.5) * v[1]
@case(V)
def item_call(v): return v[0].item() * v[1] + v.sum().item()
@case(V)
def float_call(v): return float(v[0]) ** 2 + float(np.sum(v))
@case(V)
def f64_call(v): return np.float64(v[1]) ** 2
@case(V)
def round_v(v): return np.sum(np.round(v, 1) * v)
@case(V)
def dtype_kw_zeros(v): return np.sum(np.zeros(3, dtype=np.float32) + v)
@case(V)
def ones_dtype_int(v): return np.sum(np.ones(3, dtype=int) * v)
@case(V)
def sum_dtype(v): return np.sum(v ** 2, dtype=np.float64)
@case(V)
def mean_dtype(v): return np.mean(v ** 2, dtype=float)
@case(V)
def bool_mul(v): return np.sum((v > 0) * v)
@case(V)
def bool_astype(v): return np.sum((v > 0).astype(float) * v ** 2)
@case(V, eps=1e-3, rtol=1e-2)
def np_float_cast(v): return np.sum(np.asarray(v, dtype=np.float32) ** 2)
@case(V.astype(np.float32), eps=1e-2, rtol=1e-2)
def f32_arg(v): return np.sum(v ** 2)
@case(np.float64(0.7))
def npf64_arg(x): return x ** 3
@case(np.float32(0.7), eps=1e-2, rtol=1e-2)
def npf32_arg(x): return x ** 3
@case(np.array(0.7))
def zerod_arg(x): return x ** 3
@case(np.array(0.7))
def zerod_sum(x): return np.sum(np.sin(x) * x)
@case(np.asfortranarray(M))
def fortran_arg(m): return np.sum(m @ m.T)
@case(np.arange(12.0)[::2] * 0.1)
def strided_arg(v): return np.sum(v ** 3)
@case(np.asfortranarray(M))
def fortran_ravel(m): return np.sum(m.ravel() * np.arange(6.0))
@case(np.asfortranarray(M))
def fortran_reshape(m): return np.sum(m.reshape(3, 2) * np.arange(6.0).reshape(3, 2))
@case(np.asfortranarray(M))
def fortran_flat_index(m): return np.sum(m.flatten()[1:4] ** 2)
@case(M.T)
def transposed_arg(m): return np.sum(m[0] * m[1])
@case(V)
def size1_result(v): return np.sum(v, keepdims=True) * 2
@case(V)
def size1_11(v): return (v.reshape(1, 3) @ v.reshape(3, 1))
@case(V)
def size1_arr(v): return v[:1] ** 2
# keyword and call forms
@case(M)
def sum_axis_kd(m): return np.sum(m.sum(axis=0, keepdims=True) * m)
@case(M)
def mean_pos(m): return np.sum(np.mean(m, 0) ** 2)
@case(M)
def mean_neg(m): return np.sum(np.mean(m, axis=-1) ** 2)
@case(M)
def norm_ord_axis(m): return np.sum(np.linalg.norm(m, ord=2, axis=1))
@case(M)
def norm_plain(m): return np.linalg.norm(m)
@case(M)
def norm_fro(m): return np.linalg.norm(m, 'fro')
@case(V)
def norm_1(v): return np.linalg.norm(v, 1)
@case(V)
def norm_inf(v): return np.linalg.norm(v, ord=np.inf)
@case(M)
def norm_axis0_kd(m): return np.sum(np.linalg.norm(m, axis=0, keepdims=True) * m)
@case(V)
def clip_kw(v): return np.sum(np.clip(v, a_min=-0.5, a_max=0.5) ** 2)
@case(V)
def clip_pos(v): return np.sum(np.clip(v, -1.0, 0.5) * v)
@case(V)
def clip_method(v): return np.sum(v.clip(min=-0.5) ** 2)
@case(V)
def clip_none(v): return np.sum(np.clip(v, None, 0.5) ** 2)
@case(V, 0.1)
def clip_bounds_active(v, lo): return np.sum(np.clip(v, lo, lo + 1.0) ** 2)
@case(V)
def where_const(v): return np.sum(np.where(v > 0, v, 0) ** 2)
@case(V)
def where_kw(v): return np.sum(np.where(v > 0, v ** 2, -v))
@case(V)
def max_zero(v): return np.sum(np.maximum(v, 0) ** 2)
@case(V)
def max_zero_rev(v): return np.sum(np.maximum(0.0, v) * v)
@case(V)
def minimum_v(v): return np.sum(np.minimum(v, 0.5) ** 2)
@case(V)
def fmax_v(v): return np.sum(np.fmax(v, 0.0) ** 2)
@case(M)
def max_axis(m): return np.sum(np.max(m, axis=1))
@case(M)
def amax_kw(m): return np.sum(np.amax(m, axis=0, keepdims=True) * m)
@case(M)
def max_method(m): return np.sum(m.max(0) ** 2)
@case(M)
def min_initial(m): return np.sum(m.min(axis=1, initial=0.0))
@case(M)
def prod_axis(m): return np.sum(np.prod(m, axis=0))
@case(M)
def prod_method(m): return m.prod()
@case(M)
def std_ddof(m): return np.sum(np.std(m, axis=0, ddof=1))
@case(M)
def var_kw(m): return np.sum(m.var(axis=1, keepdims=True) * m)
@case(M)
def cumsum_axis(m): return np.sum(np.cumsum(m, axis=1) ** 2)
@case(M)
def cumsum_method(m): return np.sum(m.cumsum() ** 2)
@case(V)
def cumprod_v(v): return np.sum(np.cumprod(v))
@case(M)
def transpose_axes(m): return np.sum(np.transpose(m, (1, 0)) * np.arange(6.0).reshape(3, 2))
@case(M)
def transpose_method_args(m): return np.sum(m.transpose(1, 0) * np.arange(6.0).reshape(3, 2))
@case(M)
def swapaxes_m(m): return np.sum(np.swapaxes(m, 0, 1) * np.arange(6.0).reshape(3, 2))
@case(M)
def moveaxis_m(m): return np.sum(np.moveaxis(m, 0, -1) * np.arange(6.0).reshape(3, 2))
@case(M)
def reshape_kw(m): return np.sum(np.reshape(m, newshape=(3, 2)) * np.arange(6.0).reshape(3, 2)) if np.__version__ < '2.1' else np.sum(np.reshape(m, (3, 2)) * np.arange(6.0).reshape(3, 2))
@case(M)
def reshape_minus1(m): return np.sum(m.reshape(-1) * np.arange(6.0))
@case(M)
def reshape_tuple(m): return np.sum(m.reshape((3, -1)) * np.arange(6.0).reshape(3, 2))
@case(M)
def reshape_F(m): return np.sum(m.reshape(3, 2, order='F') * np.arange(6.0).reshape(3, 2))
@case(M)
def ravel_F(m): return np.sum(np.ravel(m, order='F') * np.arange(6.0))
@case(M)
def flatten_F(m): return np.sum(m.flatten('F') * np.arange(6.0))
@case(M)
def squeeze_m(m): return np.sum(np.squeeze(m[:1]) * np.arange(3.0))
@case(V)
def expand_dims_v(v): return np.sum(np.expand_dims(v, axis=0) * M)
@case(V)
def newaxis_v(v): return np.sum(v[:, None] * v[None, :] * np.arange(9.0).reshape(3, 3))
@case(M)
def dot_kw(m): return np.sum(np.dot(m, m.T))
@case(M)
def matmul_fn(m): return np.sum(np.matmul(m.T, m) ** 2)
@case(M, V)
def tensordot_axes(m, v): return np.sum(np.tensordot(m, v, axes=1) ** 2)
@case(M)
def einsum_opt(m): return np.einsum('ij,ij->', m, m, optimize=True)
@case(V)
def inner_v(v): return np.inner(v, v * 2)
@case(V)
def vdot_v(v): return np.vdot(v, np.sin(v))
@case(V)
def diff_prepend(v): return np.sum(np.diff(v, prepend=0.0) ** 2)
@case(V)
def diff_n2(v): return np.sum(np.diff(v ** 2, n=2) ** 2)
@case(M)
def diff_axis0(m): return np.sum(np.diff(m, axis=0) ** 2)
@case(V)
def power_fn(v): return np.sum(np.power(v, 2))
@case(V)
def power_kw_const(v): return np.sum(np.power(2.0, v))
@case(V)
def abs_fn(v): return np.sum(np.abs(v) ** 1.5)
@case(V)
def absolute_fn(v): return np.sum(np.absolute(v * 2))
@case(V)
def builtin_abs(v): return np.sum(abs(v) ** 2)
@case(V)
def builtin_sum(v): return sum(v ** 2)
@case(V)
def builtin_max(v): return max(v[0], v[1]) * 2
@case(V)
def builtin_min_list(v): return min([v[0], v[1], v[2]]) ** 2
@case(V)
def builtin_pow(v): return pow(v[0], 2) + v[1] ** 3
@case(V)
def math_exp(v): return math.exp(v[0]) + math.sin(v[1]) + math.sqrt(v[2] ** 2 + 1)
@case(V)
def math_log(v): return math.log(v[2] + 2) * math.cos(v[0])
@case(V)
def np_sqrt_kw(v): return np.sum(np.sqrt(v ** 2 + 1.0))
@case(V)
def exp_method_chain(v): return np.exp(v).sum() * v.mean()
@case(V)
def dot_method(v): return v.dot(v) * 0.5
@case(M)
def matmul_at(m): return (m @ m.T).trace()
@case(M)
def sum_tuple_axis(m): return np.sum(m ** 2, axis=(0, 1))
@case(M)
def sum_where(m): return np.sum(m ** 2, where=m > 0)
@case(M)
def mean_where(m): return np.mean(m ** 2, where=m > 0)
@case(V)
def sort_v(v): return np.sum(np.sort(v) * np.arange(3.0))
@case(V)
def logsumexp_manual(v): return np.log(np.sum(np.exp(v)))
@case(V)
def average_w(v): return np.average(v, weights=np.array([1.0, 2.0, 3.0]))
@case(V)
def average_plain(v): return np.average(v ** 2)
@case(V)
def nan_to_num_v(v): return np.sum(np.nan_to_num(v) ** 2)
@case(V)
def square_fn(v): return np.sum(np.square(v))
@case(V)
def hypot_v(v): return np.sum(np.hypot(v, 1.0))
@case(V)
def arctan2_v(v): return np.sum(np.arctan2(v, 2.0))
@case(V)
def log1p_expm1(v): return np.sum(np.log1p(v ** 2) + np.expm1(v))
@case(V)
def sign_mul(v): return np.sum(np.sign(v) * v)
@case(V)
def floor_v(v): return np.sum(np.floor(v * 3) * v)
@case(V)
def heaviside_v(v): return np.sum(np.heaviside(v, 0.5) * v)
@case(V)
def copysign_v(v): return np.sum(np.copysign(v, -1.0))
@case(V)
def trapz_v(v): return np.trapezoid(v ** 2) if hasattr(np, 'trapezoid') else np.trapz(v ** 2)
@case(V)
def interp_v(v): return np.sum(np.interp(np.array([0.5, 1.5]), np.arange(3.0), v))
@case(V)
def polyval_v(v): return np.polyval(v, 0.7)
@case(V)
def convolve_v(v): return np.sum(np.convolve(v, np.array([1.0, -1.0])) ** 2)
@case(V)
def roll_v(v): return np.sum(np.roll(v, 1) * np.arange(3.0))
@case(V)
def flip_v(v): return np.sum(np.flip(v) * np.arange(3.0))
@case(M)
def flip_axis(m): return np.sum(np.flip(m, axis=1) * np.arange(6.0).reshape(2, 3))
@case(V)
def take_v(v): return np.sum(np.take(v, [0, 2, 2]) ** 2)
@case(M)
def take_axis(m): return np.sum(np.take(m, [1, 0], axis=1) ** 2)
@case(M)
def take_along(m): return np.sum(np.take_along_axis(m, np.array([[0], [2]]), axis=1) ** 2)
@case(V)
def pad_v(v): return np.sum(np.pad(v, 1) * np.arange(5.0))
@case(V)
def pad_const(v): return np.sum(np.pad(v, (1, 2), mode='constant', constant_values=1.0) ** 2)
@case(V)
def split_v(v):
    a, b = np.split(np.concatenate([v, v]), 2)
    return np.sum(a * b * np.arange(3.0))
@case(M)
def array_split_m(m):
    parts = np.array_split(m, 3, axis=1)
    return np.sum(parts[0] * 2 + parts[2] ** 2)
@case(V)
def atleast_2d_v(v): return np.sum(np.atleast_2d(v) ** 2)
@case(V)
def broadcast_to_v(v): return np.sum(np.broadcast_to(v, (2, 3)) * M)
@case(V)
def cross_v(v): return np.sum(np.cross(v, np.array([1.0, 2.0, 3.0])) ** 2)
@case(S)
def inv_m(m): return np.sum(np.linalg.inv(m))
@case(S)
def solve_m(m): return np.sum(np.linalg.solve(m, np.ones(3)))
@case(S)
def det_m(m): return np.linalg.det(m)
@case(S)
def slogdet_m(m):
    sign, ld = np.linalg.slogdet(m)
    return ld * sign
@case(S)
def trace_kw(m): return np.trace(m, offset=1)
@case(V)
def dot_scalar(v): return np.sum(np.dot(2.0, v) ** 2)
@case(V)
def multiply_kw(v): return np.sum(np.multiply(v, v, dtype=float))
@case(V)
def add_reduce(v): return np.add.reduce(v ** 2)
@case(V)
def subtract_fn(v): return np.sum(np.subtract(v, 1.0) ** 2)
@case(V)
def divide_fn(v): return np.sum(np.divide(1.0, v ** 2 + 1))
@case(V)
def true_divide_fn(v): return np.sum(np.true_divide(v, 2.0) ** 2)
@case(V)
def negative_fn(v): return np.sum(np.negative(v) ** 3)
@case(V)
def reciprocal_fn(v): return np.sum(np.reciprocal(v ** 2 + 1.0))
@case(V)
def mod_v(v): return np.sum(np.mod(v, 1.0) * v)
@case(V)
def fmod_v(v): return np.sum(np.fmod(v, 0.5) ** 2)
@case(V)
def remainder_op(v): return np.sum((v % 0.7) ** 2)
@case(V)
def floordiv_op(v): return np.sum((v // 0.5) * v)
@case(V)
def sinc_v(v): return np.sum(np.sinc(v))
@case(V)
def ptp_v(v): return np.ptp(v)
@case(M)
def median_m(m): return np.sum(np.median(m, axis=0))
@case(V)
def percentile_v(v): return np.percentile(v, 50)
@case(V)
def quantile_v(v): return np.quantile(v, 0.25)
@case(V)
def argmax_idx(v): return v[np.argmax(v)] ** 2
@case(V)
def argsort_idx(v): return np.sum(v[np.argsort(v)] * np.arange(3.0))
@case(V)
def count_nonzero_mul(v): return np.count_nonzero(v > 0) * np.sum(v)
@case(V)
def any_all(v): return np.sum(v) * (2.0 if np.any(v > 0.5) else 1.0) * (3.0 if np.all(v > -5) else 1.0)
@case(V)
def isclose_v(v): return np.sum(np.where(np.isclose(v, 0.3), v, 2 * v))
@case(V)
def real_v(v): return np.sum(np.real(v) ** 2)
@case(V)
def cplx_const(v): return np.sum(np.abs(v * (1 + 2j)) ** 2)
@case(V)
def cplx_exp(v): return np.sum(np.real(np.exp(1j * v)))
@case(V)
def cplx_abs_exp(v): return np.sum(np.abs(np.exp(1j * v) * v))
@case(V)
def cplx_complex_builtin(v): return abs(complex(v[0], v[1]))
@case(V)
def cplx_astype(v): return np.sum(np.abs(v.astype(complex)) ** 2)
@case(V)
def cplx_dtype_kw(v): return np.sum(np.abs(np.array(v, dtype=np.complex128)))
@case(V)
def cplx_sqrt_neg(v): return np.sum(np.abs(np.emath.sqrt(v)))
@case(V)
def cplx_fft(v): return np.sum(np.abs(np.fft.fft(v)) ** 2)
@case(V)
def cplx_zeros(v):
    z = np.zeros(3, dtype=complex)
    z += v
    return np.sum(np.abs(z) ** 2)
@case(V)
def cplx_j_mul_abs2(v): return np.sum((v * 1j * (v * -1j)).real)
@case(V)
def cplx_imag_attr(v): return np.sum((v + 0j).imag + v)
@case(V)
def cplx_conj_prod(v):
    z = v * (1.0 + 1.0j)
    return np.sum(z * z.conj()).real


# -- names, Python forms, special points ---------------------------------------------------------
onp = numpy
rt = 3.0
np_2 = 2.0
x_bar = 5.0

@case(V)
def local_rt(x):
    rt = x * 2
    return np.sum(rt ** 2)
@case(V)
def global_rt(x): return np.sum(x * rt)
@case(V)
def global_np_2(x): return np.sum(np.sin(x) * np_2)
@case(V)
def global_x_bar(x): return np.sum(x * x_bar)
@case(V)
def local_x_bar(x):
    x_bar = x * 3
    sin_x = np.sin(x_bar)
    return np.sum(sin_x * x_bar)
@case(V)
def param_named_np(np_):
    return numpy.sum(np_ ** 2)
@case(V)
def onp_alias(x): return onp.sum(onp.exp(x))
@case(V)
def local_shadow_builtin(x):
    sum = np.sum(x)
    abs = x ** 2
    return sum * np.sum(abs)
@case(V)
def local_named_float(x):
    float = x * 2.0
    return np.sum(float ** 2)
@case(V)
def local_len(x):
    len = 3.0
    return np.sum(x * len)
@case(V)
def param_named_rt(rt): return np.sum(rt ** 2)
@case(V, 2.0)
def param_np_2(x, np_2): return np.sum(x * np_2)
@case(V)
def numpy_full_name(x): return numpy.sum(numpy.tanh(x))
@case(V)
def local_import(x):
    import numpy as jnp
    return jnp.sum(jnp.sin(x))
@case(V)
def local_from_import(x):
    from numpy import sin, cos
    return np.sum(sin(x) * cos(x))
@case(V)
def math_alias(x):
    import math as m
    return m.exp(x[0]) * 2
@case(V)
def lambda_inside(x):
    sq = lambda t: t ** 2
    return np.sum(sq(x))
@case(V)
def nested_def(x):
    def sq(t): return t ** 2 * 3
    return np.sum(sq(x))
@case(V)
def nested_def_closure(x):
    k = x[0]
    def mul(t): return t * k
    return np.sum(mul(x))
@case(V)
def partial_call(x):
    h = functools.partial(np.power, x)
    return np.sum(h(2))
@case(V)
def map_call(x): return sum(map(np.sin, x))
@case(V)
def list_comp(x): return sum([xi ** 2 for xi in x])
@case(V)
def gen_exp(x): return sum(xi ** 2 for xi in x)
@case(V)
def np_sum_gen(x): return np.sum(np.array([xi ** 2 for xi in x]))
@case(V)
def dict_comp(x):
    d = {i: x[i] ** 2 for i in range(3)}
    return d[0] + d[2]
@case(V)
def enumerate_loop(x):
    s = 0.0
    for i, xi in enumerate(x):
        s = s + i * xi ** 2
    return s
@case(V)
def zip_loop(x):
    s = 0.0
    for a, b in zip(x, x[1:]):
        s = s + a * b
    return s
@case(V)
def reversed_loop(x):
    s = 0.0
    for xi in reversed(x):
        s = s * 0.5 + xi
    return s
@case(V)
def sorted_builtin(x): return sum(sorted(x)[:2])
@case(V)
def tuple_unpack(x):
    a, b, c = x
    return a * b + c ** 2
@case(V)
def star_unpack(x):
    a, *rest = x
    return a * np.sum(np.array(rest) ** 2)
@case(M)
def row_unpack(m):
    r0, r1 = m
    return np.sum(r0 * r1)
@case(V)
def walrus(x):
    if (n := np.sum(x ** 2)) > 0.1:
        return n * 2
    return n
@case(V)
def ternary(x): return np.sum(x ** 2) if x[0] > 0 else np.sum(x)
@case(V)
def while_loop(x):
    s = x[0]
    i = 0
    while i < 3:
        s = s * x[1] + 1
        i += 1
    return s
@case(V)
def try_except(x):
    try:
        y = x ** 2
    except ValueError:
        y = x
    return np.sum(y)
@case(V)
def assert_stmt(x):
    assert x.shape == (3,)
    return np.sum(x ** 2)
@case(V)
def fstring_unused(x):
    msg = f"{x.shape}"
    return np.sum(x ** 2)
@case(V)
def print_call(x):
    return np.sum(x ** 2)
@case(V)
def isinstance_check(x):
    if isinstance(x, np.ndarray):
        return np.sum(x ** 2)
    return x ** 2
@case(0.7)
def isinstance_float(x):
    if isinstance(x, float):
        return x ** 3
    return np.sum(x ** 2)
@case(V)
def shape_unpack(x):
    n, = x.shape
    return np.sum(x * n)
@case(M)
def shape_loop(m):
    rows, cols = m.shape
    s = 0.0
    for i in range(rows):
        for j in range(cols):
            s = s + m[i, j] * (i + j)
    return s
@case(M)
def size_ndim(m): return np.sum(m) * m.size + m.ndim * np.sum(m ** 2)
@case(V)
def len_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + x[i] * x[i + 1]
    return s
@case(V)
def T_attr(x): return np.sum(x.reshape(3, 1).T ** 2)
@case(M)
def mT_flat(m): return np.sum(m.flat[2] * m)
@case(V)
def x_real_attr(x): return np.sum(x.real ** 2)
@case(V)
def item_idx(x): return x.item(1) ** 2
@case(V)
def tolist(x): return sum(x.tolist())
@case(V)
def copy_method(x):
    y = x.copy()
    y[0] = 5.0
    return np.sum(y * x)
@case(V)
def np_copy(x):
    y = np.copy(x)
    y *= 2
    return np.sum(y * x)
@case(V)
def fill_method(x):
    y = np.empty(3)
    y.fill(x[0])
    return np.sum(y * x)
@case(V)
def put_method(x):
    y = np.zeros(3)
    np.put(y, [0, 2], x[:2])
    return np.sum(y * x)
@case(V)
def setitem_neg(x):
    y = np.zeros(4)
    y[-1] = x[0]
    y[:-1] = x ** 2
    return np.sum(y * 2)
@case(V)
def ellipsis_idx(x): return np.sum(x[...] ** 2)
@case(M)
def ellipsis_idx2(m): return np.sum(m[..., 0] ** 2)
@case(M)
def bool_idx2(m): return np.sum(m[m > 0] ** 2)
@case(M)
def int_arr_idx2(m): return np.sum(m[[0, 1], [2, 0]] ** 2)
@case(M)
def ix_idx(m): return np.sum(m[np.ix_([0, 1], [0, 2])] ** 2)
@case(M)
def neg_step(m): return np.sum(m[::-1, ::-2] * np.arange(4.0).reshape(2, 2))
@case(V)
def dot_kw_out(x):
    y = np.empty(())
    return np.sum(x ** 2)
@case(V)
def sum_initial(x): return np.sum(x ** 2, initial=1.0)
@case(V)
def sum_keepdims_pos(x): return np.sum(np.sum(x, 0, None, None, True) * x)
@case(M)
def mean_tuple_axis(m): return np.mean(m ** 2, axis=(0, 1))
@case(M)
def std_plain(m): return np.std(m)
@case(M)
def max_all(m): return np.max(m)
@case(M)
def nanmax(m): return np.nanmax(m)
@case(M)
def nansum(m): return np.nansum(m ** 2)
@case(M)
def nanmean(m): return np.nanmean(m ** 2)
@case(V)
def logaddexp(x): return np.sum(np.logaddexp(x, 0.0))
@case(V)
def expit_like(x): return np.sum(1.0 / (1.0 + np.exp(-x)))
@case(V)
def tanh_method(x): return np.tanh(x).sum()
@case(V)
def arcsin(x): return np.sum(np.arcsin(x / 2))
@case(V)
def deg2rad(x): return np.sum(np.sin(np.deg2rad(x * 30)))
@case(V)
def cbrt(x): return np.sum(np.cbrt(x))
@case(V)
def exp2_log2(x): return np.sum(np.exp2(x) + np.log2(x ** 2 + 1) + np.log10(x ** 2 + 1))
@case(V)
def float_power(x): return np.sum(np.float_power(np.abs(x) + 1, 1.5))
@case(V, 2.0, wrt=(0, 1))
def pow_active_exp(x, p): return np.sum((np.abs(x) + 1) ** p)
@case(V, 2.0, wrt=1)
def pow_base_scalar(x, p): return np.sum(p ** x)
@case(V)
def matrix_power(x):
    m = np.outer(x, x) + np.eye(3)
    return np.sum(np.linalg.matrix_power(m, 2))
@case(M)
def kron_(m): return np.sum(np.kron(m, np.eye(2)) ** 2)
@case(M)
def einsum_trace(m): return np.einsum('ij,kj->', m, m)
@case(M)
def einsum_batch(m): return np.sum(np.einsum('ij->j', m) ** 2)
@case(M)
def einsum_ellipsis(m): return np.sum(np.einsum('...j,...j->...', m, m))
@case(V)
def linalg_norm_kw_keep(x): return np.sum(np.linalg.norm(x, keepdims=True) * x)
@case(V)
def norm_zero_safe(x): return np.linalg.norm(x - x)
@case(V)
def sqrt_zero(x): return np.sum(np.sqrt(x * 0 + 1))
@case(V)
def abs_zero(x): return np.sum(np.abs(x - x[0]))
@case(np.array([0.0, 1.0, 2.0]))
def cumprod_zero(x): return np.sum(np.cumprod(x))
@case(np.array([0.0, 1.0, 2.0]))
def prod_zero(x): return np.prod(x)
@case(np.array([0.0, 0.0, 2.0]))
def prod_two_zeros(x): return np.prod(x + 0.0)
@case(np.array([[0.0, 1.0], [2.0, 0.0]]))
def prod_axis_zero(m): return np.sum(np.prod(m, axis=1) * np.array([1.0, 2.0]))
@case(np.array([0.0, 1.0, 2.0]))
def pow_zero_base(x): return np.sum(x ** 3)
@case(np.array([0.0, 1.0, 2.0]))
def pow_zero_base_half(x): return np.sum((x + 1) ** 0.5)
@case(np.array([0.0, 1.0, 2.0]))
def x_pow_2_zero(x): return np.sum(np.power(x, 2))
@case(np.array([-0.5, 1.0, 2.0]))
def div_zero_safe(x): return np.sum(np.where(x > 0, x, 1.0) ** -1)
@case(np.array([0.0, 1.0, 2.0]), 2.0, wrt=1)
def pow_active_exp_zero_base(x, p): return np.sum(x ** p)
@case(np.array([1.0, 1.0, 2.0]))
def max_ties(x): return np.max(x) * 0 + np.sum(x)
@case(np.array([0.0, 3.0, -1.0]))
def linalg_norm_v_zero_entry(x): return np.linalg.norm(x)
@case(np.array([0.0, 3.0, -1.0]))
def hypot_zero(x): return np.sum(np.hypot(x, 0.0) * 0 + x)
@case(np.array([[1.0, 0.0], [0.0, 1.0]]))
def det_identity(m): return np.linalg.det(m)
@case(np.array([[1.0, 2.0], [2.0, 4.0]]))
def det_singular(m): return np.linalg.det(m)
@case(np.array([0.0, 1.0, 2.0]))
def log_safe(x): return np.sum(np.log(x + 1.0))
@case(np.array([0.0, 1.0, 2.0]))
def arctan2_zero(x): return np.sum(np.arctan2(x, 1.0))
@case(np.array([0.0, 1.0, 2.0]))
def norm_axis_zero_row(x): return np.sum(np.linalg.norm(np.stack([x * 0, x]), axis=1))


# -- constructors, dtypes and call forms, second round ----------------------------------------------
@case(V, eps=1e-3, rtol=1e-2)
def arr_f32(v): return np.sum(np.array(v, dtype=np.float32) ** 2)
@case(0.73)
def full_int(s): return np.sum(np.full(3, s * 10, dtype=int)) + s
@case(0.7)
def arange_times(s): return np.sum(np.arange(4) * s)
@case(0.73)
def lin_int(s): return np.sum(np.linspace(0, s * 10, 5, dtype=int)) * 1.0 + s
@case(V, eps=1e-3, rtol=1e-2)
def astype_roundtrip(v): return np.sum(v.astype(np.float32).astype(np.float64) * 3)
@case(0.7)
def asarray_scalar(s): return np.sum(np.asarray(s) ** 2)
@case(0.7)
def array_scalar(s): return np.array(s) ** 2 * 3
@case(0.7)
def array_list_mul(s): return np.sum(np.array([s] * 3) * np.arange(3.0))
@case(0.73)
def ones_astype_int(s): return np.sum((np.ones(3) * s * 10).astype(int)) + s
@case(0.7, 0.2, wrt=(0, 1))
def zeros_row_write(a, b):
    z = np.zeros((2, 2))
    z[0] = [a, b]
    z[1, :] = (b, a * 2)
    return np.sum(z ** 2)
@case(V)
def fromiter_gen(v): return np.sum(np.fromiter((vi ** 2 for vi in v), float))
@case(0.7)
def tile_scalar(s): return np.sum(np.tile(s, 3) * np.arange(3.0))
@case(V)
def full_like_kw(v): return np.sum(np.full_like(v, fill_value=v[1], dtype=float) * v)
@case(0.7)
def eye_dtype(s): return np.sum(np.eye(2, dtype=np.float64) * s ** 2)
@case(V)
def diagflat_v(v): return np.sum(np.diagflat(v) @ np.arange(9.0).reshape(3, 3))
@case(0.3, 1.1, -0.5, 2.0, wrt=(0, 3))
def arr22_dtype(a, b, c, d): return np.sum(np.linalg.inv(np.array([[a, b], [c, d]], dtype=float)))
@case(V)
def int_index(v): return v[int(v[2] * 2)] ** 2
@case(V)
def round_builtin(v): return round(v[0] * 10 + 0.2) * v[1]
@case(V)
def f64_of_elem(v): return np.float64(v[0]) * v[1] + np.float64(2.0) * v[2]
@case(V)
def astype_bool(v): return np.sum(v.astype(bool) * v)
@case(V)
def uint8_write(v):
    img = np.zeros(3, dtype=np.uint8)
    img[:] = np.abs(v) * 100 + 0.5
    return np.sum(img * v)
@case(V)
def bool_write(v):
    b = np.zeros(3, dtype=bool)
    b[:] = v
    return np.sum(b * v)
@case(V)
def dtype_of_x(v): return np.sum(np.zeros(3, dtype=v.dtype) + v ** 2)
@case(V)
def zeros_pos_dtype(v): return np.sum((np.zeros(3, float) + v) ** 2)
@case(V)
def empty_order(v):
    e = np.empty((3,), order='F')
    e[:] = v
    return np.sum(e ** 3)
@case(V)
def sum_none_kd(v): return np.sum(np.sum(v, axis=None, keepdims=True) * v)
@case(M)
def ones_shape0(m): return np.sum(np.ones(m.shape[0]) @ m)
@case(M)
def mean_axis_tuple1(m): return np.sum(m.mean(axis=(0,)) ** 2)
@case(M)
def max_initial(m): return np.sum(np.max(m, axis=0, initial=-10.0))
@case(M)
def norm_axis_none(m): return np.sum(np.linalg.norm(m, axis=-1, ord=None))
@case(V)
def clip_none_upper(v): return np.sum(np.clip(v, 0, None) ** 2)
@case(V)
def clip_method_pos(v): return np.sum(v.clip(0, 1) ** 2)
@case(V)
def where_single(v): return np.sum(v[np.where(v > 0)] ** 2)
@case(V)
def nonzero_idx(v): return np.sum(v[np.nonzero(v > 0)[0]] ** 2)
@case(V)
def sum_pos_axis(v): return np.sum(v * 2.0, 0)
@case(M)
def sum_neg_axis_method(m): return np.sum(m.sum(-1) ** 2)
@case(M)
def cumsum_neg(m): return np.sum(np.cumsum(m, -1) ** 2)
@case(M)
def argmax_axis_take(m): return np.sum(m[np.arange(2), np.argmax(m, axis=1)])
@case(M)
def max_keepdims_sub(m): return np.sum(np.exp(m - m.max(axis=1, keepdims=True)))
@case(M)
def softmax_rows(m):
    e = np.exp(m - np.max(m, axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return np.sum(p * np.arange(3.0))
@case(M)
def logsumexp_rows(m):
    mx = np.max(m, axis=1)
    return np.sum(mx + np.log(np.sum(np.exp(m - mx[:, None]), axis=1)))
@case(V)
def reshape_neg_kw(v): return np.sum(v.reshape((1, -1)) * np.ones((2, 3)))
@case(V)
def atleast1(v): return np.sum(np.atleast_1d(v[0]) * 2)
@case(V)
def stack_scalars(v): return np.sum(np.stack([v[0], v[1] * 2, 3.0]) ** 2)
@case(V)
def concat_scalars_list(v):
    parts = []
    for i in range(3):
        parts.append(np.array([v[i] ** 2]))
    return np.sum(np.concatenate(parts) * np.arange(3.0))
@case(V)
def hstack_scalars(v): return np.sum(np.hstack([v[0], v[1]]) ** 2)
@case(V)
def np_append(v): return np.sum(np.append(v, v[0] * 2) ** 2)
@case(V)
def np_insert(v): return np.sum(np.insert(v, 1, 5.0) * np.arange(4.0))
@case(V)
def np_delete(v): return np.sum(np.delete(v, 1) ** 2)
@case(V)
def sort_kind(v): return np.sum(np.sort(v, kind='stable') * np.arange(3.0))
@case(V)
def dot_out_none(v): return np.dot(v, v, out=None)
@case(V)
def sum_out(v):
    o = np.zeros(())
    np.sum(v ** 2, out=o)
    return o * 1.0
@case(V)
def exp_out(v):
    o = np.empty(3)
    np.exp(v, out=o)
    return np.sum(o)
@case(V)
def add_at(v):
    o = np.zeros(3)
    np.add.at(o, [0, 0, 1], v)
    return np.sum(o ** 2)
@case(V)
def multiply_where(v): return np.sum(np.multiply(v, 2.0, where=v > 0, out=np.zeros(3)))
@case(V)
def matmul_vec(v): return v @ v
@case(V, 2.0)
def scalar_times_int_param(v, n): return np.sum(v * n)
@case(V)
def ufunc_method_outer(v): return np.sum(np.multiply.outer(v, v))
@case(V)
def np_prod_kw(v): return np.prod(v, axis=0, keepdims=False)
@case(V)
def np_mean_kd(v): return np.sum(np.mean(v, keepdims=True) * v)
@case(V)
def var_ddof_kw(v): return np.var(v, ddof=1)
@case(V)
def std_kd(v): return np.sum(v.std(keepdims=True) * v)


# -- builtins that read the calling frame (in generated code, the generated module's) -------------
SCALE_G = 2.0


@case(V)
def globals_scale(x): return np.sum(np.sin(x * globals()['SCALE_G']))
@case(V)
def dir_len(x):
    names = dir()
    return np.sum(x) * len(names)
@case(V)
def eval_scale(x): return np.sum(x * eval('SCALE_G'))


# -- float32 arguments: the gradient is float32 and right to float32 precision ---------------------
V32 = V.astype(np.float32)
M32 = M.astype(np.float32)


@case(M32, eps=1e-2, rtol=2e-2)
def f32_softmax(m):
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return np.sum(e / e.sum(axis=1, keepdims=True) * np.arange(3.0, dtype=np.float32))
@case(V32, eps=1e-2, rtol=2e-2)
def f32_norm(v): return np.linalg.norm(v)
@case(M32, V32, eps=1e-2, rtol=2e-2)
def f32_matvec(m, v): return np.sum(np.tanh(m @ v))
@case(V32, eps=1e-2, rtol=2e-2)
def f32_times_f64(v): return np.sum(v * np.arange(3.0))
@case(V32, eps=1e-2, rtol=2e-2)
def f32_mean(v): return np.mean(v ** 2)
@case(V32, eps=1e-2, rtol=2e-2)
def f32_write(v):
    out = np.zeros(3, dtype=np.float32)
    out[1:] = v[:2] * 2
    return np.sum(out * v)
@case(V32, eps=1e-2, rtol=2e-2)
def f32_cumsum(v): return np.sum(np.cumsum(v) ** 2)
@case(np.float32(0.7), eps=1e-2, rtol=2e-2)
def f32_scalar_full(s): return np.sum(np.full(3, s) ** 2)
@case(V32, eps=1e-2, rtol=2e-2)
def f32_where(v): return np.sum(np.where(v > 0, v, 0.1 * v))
@case(V32, eps=1e-2, rtol=2e-2)
def f32_int_pow(v): return np.sum(v ** 3)


# The programs refused with a located error (a missing rule or keyword, syntax not handled, complex
# values); every other program must give the right value and gradient.
REFUSED = {
    'globals_scale', 'dir_len', 'eval_scale', 'fromiter_gen', 'cplx_complex_builtin',
    'cplx_dtype_kw', 'cplx_sqrt_neg', 'lin_retstep', 'local_from_import', 'local_import', 'mT_flat',
    'math_alias', 'try_except', 'walrus',
    'trapz_v',  # np.trapz no longer exists in NumPy 2: the branch not taken has no rule
}

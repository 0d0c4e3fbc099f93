"""Complex operands: which adjoint rules hold for them, and the rules of the functions whose real
rule does not (see adjoint_compiler/dtypes.py for the analysis and the refusals).

The convention is autograd's and JAX's: for a real loss L and z = x + iy, z_bar = dL/dx - i dL/dy.
Under it the chain rule of a holomorphic f is z_bar += y_bar * f'(z), so the real rules written as
`x_bar += g * f'(x)` hold unchanged, and a linear map's adjoint is its plain transpose (matmul:
`A_bar = g @ B.T`, no conjugate). A contribution into a value that is surely real is projected
with np.real by `reverse` (v real, z = v * c: v_bar = Re(z_bar * c)). Everything not declared
here refuses complex operands at the user's line.

Forward mode (`jvp`, `jacfwd`) uses JAX's convention: the tangent of f at z along a complex t is
the directional derivative d/de f(z + e t), C read as R^2 (f'(z) t for a holomorphic f). A
declaration with `tangent=True` says the primitive's registered tangent rule holds for complex
operands as written: it reads no abs, sign, comparison or real part of an operand (`y_dot =
rt.chain(x_dot, np.cos(x))`, `z_dot = x_dot @ y + x @ y_dot`, a linear map applied to the
tangent). The others have a `complex_tangent` of their own, beside their adjoint.
"""
import copy
import operator

import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.ir import BUILD_LIST, BUILD_TUPLE, SQUARE, Attr
from adjoint_compiler.registry import adjoint, complex_adjoint, complex_tangent, holds_for_complex, tangent

# Holomorphic elementwise functions: `x_bar += g * f'(x)` (unbroadcast where binary).
holds_for_complex(operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos,
                  SQUARE, np.add, np.subtract, np.multiply, np.divide, np.negative, np.positive, np.exp,
                  np.log, np.sqrt, np.square, np.reciprocal, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
                  np.exp2, np.expm1, np.log1p, np.log10, np.log2, np.arcsinh, np.arctanh, tangent=True)
# (arcsinh: 1 / sqrt(z*z + 1), the principal sqrt's cut being arcsinh's own, |Im z| > 1 on the
# imaginary axis; arctanh: 1 / (1 - z*z). arccosh has a rule of its own below.)
holds_for_complex(np.prod, "prod", tangent=True)  # (exclusive cumulative products, no division)


# `np.kron`: bilinear, the plain transpose (rt.kron_adjoint keeps complex operands complex).
@complex_adjoint(np.kron)
def kron(y, a, b):
    a_bar += rt.kron_adjoint(y_bar, a, b)[0]
    b_bar += rt.kron_adjoint(y_bar, a, b)[1]


@complex_tangent(np.kron)
def kron_dot(y, a, b):
    y_dot = np.kron(a_dot, b) + np.kron(a, b_dot)


# `x ** y`: the exponent's derivative with the complex log (a negative real base to a complex power).
@complex_adjoint(operator.pow, np.power)
def power(z, x, y):
    x_bar += rt.unbroadcast(rt.chain(z_bar, rt.pow_base_derivative(x, y)), x)
    y_bar += rt.unbroadcast(rt.chain(z_bar, rt.pow_exponent_derivative_complex(z, x)), y)


@complex_tangent(operator.pow, np.power)
def power_dot(z, x, y):
    z_dot = rt.chain(x_dot, rt.pow_base_derivative(x, y)) + rt.chain(y_dot, rt.pow_exponent_derivative_complex(z, x))


# Linear and structural: the plain transpose.
holds_for_complex(np.sum, "sum", np.mean, "mean", np.reshape, "reshape", np.ravel, "ravel", "flatten", np.squeeze,
                  "squeeze", np.expand_dims, np.transpose, "transpose", Attr("T"), np.swapaxes, "swapaxes",
                  np.moveaxis, operator.getitem, np.concatenate, np.stack, np.hstack, np.vstack, operator.matmul,
                  np.matmul, np.dot, "dot", np.outer, np.einsum, rt.einsum, np.tensordot, np.trace, "trace", np.diag,
                  np.copy, "copy", copy.copy, BUILD_TUPLE, BUILD_LIST, tangent=True)
holds_for_complex(np.zeros, np.ones, np.zeros_like, np.ones_like, tangent=True)  # constants, whatever the dtype
holds_for_complex(np.iscomplex, np.isreal, np.iscomplexobj, np.isrealobj, tangent=True)  # (booleans: no gradient)
holds_for_complex(np.where, real=("condition",), tangent=True)  # (a complex condition has no truth value)
holds_for_complex("astype", complex_dtype=True, tangent=True)  # to a complex dtype only: a real one drops the imaginary part


# sqrt(z*z - 1) has a cut on the whole imaginary axis and the wrong sign in the left half plane:
# arccosh'(z) = 1 / (sqrt(z - 1) * sqrt(z + 1)), whose cut is arccosh's own, (-inf, 1).
@complex_adjoint(np.arccosh)
def arccosh(y, x):
    x_bar += rt.chain_div(y_bar, np.sqrt(x - 1.0) * np.sqrt(x + 1.0))


@complex_tangent(np.arccosh)
def arccosh_dot(y, x):
    y_dot = rt.chain_div(x_dot, np.sqrt(x - 1.0) * np.sqrt(x + 1.0))


# -- the non-holomorphic functions ------------------------------------------------------------------

@complex_adjoint(np.real, Attr("real"), own=True)
def real(y, val):
    val_bar += y_bar


@complex_tangent(np.real, Attr("real"))
def real_dot(y, val):
    y_dot = np.real(val_dot)


@complex_adjoint(np.imag, Attr("imag"), own=True)
def imag(y, val):
    val_bar += -1j * y_bar


@complex_tangent(np.imag, Attr("imag"))
def imag_dot(y, val):
    y_dot = np.imag(val_dot)


@complex_adjoint(np.conj, "conj", "conjugate", own=True)
def conj(y, x):
    x_bar += np.conj(y_bar)


@complex_tangent(np.conj, "conj", "conjugate")
def conj_dot(y, x):
    y_dot = np.conj(x_dot)


@complex_adjoint(np.abs, abs)
def absolute(y, x):
    x_bar += y_bar * rt.abs_direction(x, y)


# d|z| = Re(conj(z) dz) / |z|, 0 at z == 0 (as the adjoint)
@complex_tangent(np.abs, abs)
def absolute_dot(y, x):
    y_dot = np.real(x_dot * rt.abs_direction(x, y))


@complex_adjoint(np.angle, own=True)
def angle(y, z, deg=False):
    z_bar += y_bar * rt.angle_direction(z, deg=deg)


# d angle(z) = Im(conj(z) dz) / |z|^2 = Re(-1j conj(z) dz) / |z|^2, 0 at z == 0
@complex_tangent(np.angle)
def angle_dot(y, z, deg=False):
    y_dot = np.real(z_dot * rt.angle_direction(z, deg=deg))


# Real results of a complex operand: the adjoint of a real y through w = conj-weights, the tangent
# Re(sum(x_bar * t)). var is mean(|x - mean|^2): its adjoint is the real rule's at conj(x),
# 2 conj(x - mean) / (N - ddof) (the centering is a real symmetric projection).
@complex_adjoint(np.var, "var")
def var(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a_bar += rt.var_adjoint(rt.through_dtype(y_bar, dtype=dtype), np.conj(a), axis, ddof, keepdims)


@complex_tangent(np.var, "var")
def var_dot(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    y_dot = rt.through_dtype(np.real(rt.var_tangent(a_dot, np.conj(a), y, axis, ddof, keepdims)), dtype=dtype)


@complex_adjoint(np.std, "std")
def std(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a_bar += rt.std_adjoint(rt.through_dtype(y_bar, dtype=dtype), np.conj(a), y, axis, ddof, keepdims)


@complex_tangent(np.std, "std")
def std_dot(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    y_dot = rt.through_dtype(np.real(rt.std_tangent(a_dot, np.conj(a), y, axis, ddof, keepdims)), dtype=dtype)


@complex_adjoint(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    x_bar += rt.norm_adjoint_complex(y_bar, x, y, ord, axis, keepdims)


@complex_tangent(np.linalg.norm)
def norm_dot(y, x, ord=None, axis=None, keepdims=False):
    y_dot = rt.norm_tangent_complex(x_dot, x, y, ord, axis, keepdims)


# -- np.fft: linear maps whose matrices are symmetric; the tangent is the same map of the tangent -----
# (`fft2` and its kin: `axes` omitted is the last two, `axes=None` given is every axis; the rules'
# default "last two" is no value NumPy takes, so an explicit None reaches the helper, which reads
# an omitted `axes` with `two=True` as the last two.)

@complex_adjoint(np.fft.fft, own=True)
def fft(y, a, n=None, axis=-1, norm=None):
    a_bar += rt.fft_adjoint(y_bar, a, n=n, axis=axis, norm=norm)


@complex_tangent(np.fft.fft)
def fft_dot(y, a, n=None, axis=-1, norm=None):
    y_dot = np.fft.fft(a_dot, n=n, axis=axis, norm=norm)


@complex_adjoint(np.fft.ifft, own=True)
def ifft(y, a, n=None, axis=-1, norm=None):
    a_bar += rt.fft_adjoint(y_bar, a, n=n, axis=axis, norm=norm, inverse=True)


@complex_tangent(np.fft.ifft)
def ifft_dot(y, a, n=None, axis=-1, norm=None):
    y_dot = np.fft.ifft(a_dot, n=n, axis=axis, norm=norm)


@complex_adjoint(np.fft.fft2, own=True)
def fft2(y, a, s=None, axes="last two", norm=None):
    a_bar += rt.fftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm, two=True)


@complex_tangent(np.fft.fft2)
def fft2_dot(y, a, s=None, axes="last two", norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm, two=True)


@complex_adjoint(np.fft.ifft2, own=True)
def ifft2(y, a, s=None, axes="last two", norm=None):
    a_bar += rt.fftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm, inverse=True, two=True)


@complex_tangent(np.fft.ifft2)
def ifft2_dot(y, a, s=None, axes="last two", norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm, inverse=True, two=True)


@complex_adjoint(np.fft.fftn, own=True)
def fftn(y, a, s=None, axes=None, norm=None):
    a_bar += rt.fftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm)


@complex_tangent(np.fft.fftn)
def fftn_dot(y, a, s=None, axes=None, norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm)


@complex_adjoint(np.fft.ifftn, own=True)
def ifftn(y, a, s=None, axes=None, norm=None):
    a_bar += rt.fftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm, inverse=True)


@complex_tangent(np.fft.ifftn)
def ifftn_dot(y, a, s=None, axes=None, norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm, inverse=True)


@complex_adjoint(np.fft.rfft2, real=("a",), own=True)
def rfft2(y, a, s=None, axes="last two", norm=None):
    a_bar += rt.rfftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm, two=True)


@complex_tangent(np.fft.rfft2)
def rfft2_dot(y, a, s=None, axes="last two", norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm, two=True, real=True)


@complex_adjoint(np.fft.rfftn, real=("a",), own=True)
def rfftn(y, a, s=None, axes=None, norm=None):
    a_bar += rt.rfftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm)


@complex_tangent(np.fft.rfftn)
def rfftn_dot(y, a, s=None, axes=None, norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm, real=True)


@complex_adjoint(np.fft.irfft2, own=True)
def irfft2(y, a, s=None, axes="last two", norm=None):
    a_bar += rt.irfftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm, two=True)


@complex_tangent(np.fft.irfft2)
def irfft2_dot(y, a, s=None, axes="last two", norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm, inverse=True, two=True, real=True)


@complex_adjoint(np.fft.irfftn, own=True)
def irfftn(y, a, s=None, axes=None, norm=None):
    a_bar += rt.irfftn_adjoint(y_bar, a, s=s, axes=axes, norm=norm)


@complex_tangent(np.fft.irfftn)
def irfftn_dot(y, a, s=None, axes=None, norm=None):
    y_dot = rt.fftn_tangent(a_dot, s=s, axes=axes, norm=norm, inverse=True, real=True)


@complex_adjoint(np.fft.rfft, real=("a",), own=True)
def rfft(y, a, n=None, axis=-1, norm=None):
    a_bar += rt.rfft_adjoint(y_bar, a, n=n, axis=axis, norm=norm)


@complex_tangent(np.fft.rfft)
def rfft_dot(y, a, n=None, axis=-1, norm=None):
    y_dot = np.fft.rfft(a_dot, n=n, axis=axis, norm=norm)


@complex_adjoint(np.fft.irfft, own=True)
def irfft(y, a, n=None, axis=-1, norm=None):
    a_bar += rt.irfft_adjoint(y_bar, a, n=n, axis=axis, norm=norm)


@complex_tangent(np.fft.irfft)
def irfft_dot(y, a, n=None, axis=-1, norm=None):
    y_dot = np.fft.irfft(a_dot, n=n, axis=axis, norm=norm)


@complex_adjoint(np.fft.fftshift, own=True)
def fftshift(y, x, axes=None):
    x_bar += rt.fftshift_adjoint(y_bar, axes=axes)


@complex_tangent(np.fft.fftshift)
def fftshift_dot(y, x, axes=None):
    y_dot = np.fft.fftshift(x_dot, axes=axes)


@complex_adjoint(np.fft.ifftshift, own=True)
def ifftshift(y, x, axes=None):
    x_bar += rt.fftshift_adjoint(y_bar, axes=axes, inverse=True)


@complex_tangent(np.fft.ifftshift)
def ifftshift_dot(y, x, axes=None):
    y_dot = np.fft.ifftshift(x_dot, axes=axes)


# `np.real_if_close` of a real array is the array (dtypes.py keeps a real operand's result real); a
# complex operand is refused: its result is real or complex depending on the values.
@adjoint(np.real_if_close)
def real_if_close(y, a, tol=100):
    a_bar += y_bar


@tangent(np.real_if_close)
def real_if_close_dot(y, a, tol=100):
    y_dot = a_dot

"""The helpers of the complex rules (rules/complex.py), as rt.<name> in generated code.

The convention is autograd's and JAX's: for a real loss L and z = x + iy, the adjoint is
z_bar = dL/dx - i dL/dy. A linear map y = A z then has the plain transpose as its adjoint,
z_bar = A.T @ y_bar (no conjugate); the DFT matrix is symmetric, so the adjoint of `fft` is
`fft` itself, with the lengths that `n=` cut or padded put back.
"""
from __future__ import annotations

import numpy as np

from .errors import NoGradientError as _NoGradientError

__all__ = ["pow_exponent_derivative_complex", "abs_direction", "angle_direction", "fft_adjoint", "fftn_adjoint",
           "rfft_adjoint", "irfft_adjoint", "rfftn_adjoint", "irfftn_adjoint", "fftshift_adjoint", "fftn_tangent", "norm_adjoint_complex",
           "norm_tangent_complex"]


def pow_exponent_derivative_complex(z, x):
    """d(x**y)/dy = x**y * log(x) with the principal complex log (a negative real base included,
    as NumPy computes a real base to a complex power); 0 where x == 0 (the limit for Re y > 0)."""
    x = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, z * np.log(np.where(x == 0, 1.0, x).astype(complex)))


def abs_direction(x, y):
    """d|z| as an adjoint factor: conj(z) / |z|, and 0 where z == 0 (the subgradient of least
    norm, as `np.sign(0) == 0` for real `abs`). `y` is |z|."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, 0.0, np.conj(x) / np.where(y == 0, 1.0, y))


def angle_direction(z, deg=False):
    """The adjoint factor of `np.angle(z)`: -1j * conj(z) / |z|**2, and 0 where z == 0."""
    r2 = np.real(z) ** 2 + np.imag(z) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(r2 == 0, 0.0, -1j * np.conj(z) / np.where(r2 == 0, 1.0, r2))
    return d * (180.0 / np.pi) if deg else d


def _fit(g, length: int, axis: int):
    """`g` cut or zero-padded along `axis` to `length` (the transpose of what `n=` did)."""
    have = g.shape[axis]
    if have == length:
        return g
    if have > length:
        return np.take(g, np.arange(length), axis=axis)
    pad = [(0, 0)] * g.ndim
    pad[axis] = (0, length - have)
    return np.pad(g, pad)


def fft_adjoint(g, a, n=None, axis=-1, norm=None, inverse=False):
    """The adjoint of `np.fft.fft(a, n, axis, norm)` (`ifft` with `inverse`): the same transform of
    `g` (the DFT matrix is symmetric), fitted back to `a`'s length along `axis`."""
    a = np.asarray(a)
    out = (np.fft.ifft if inverse else np.fft.fft)(g, axis=axis, norm=norm)
    return _fit(out, a.shape[axis], axis)


def _fft_axes(ndim: int, s=None, axes="omitted", two: bool = False) -> tuple:
    """The axes an n-dimensional transform works on, as NumPy resolves them: `axes`; omitted (a
    string: the helpers' default, the rules' "last two"), the last two with `two` (`fft2` and its
    kin), else as None; None (to `fftn`, or given to `fft2` itself): the last len(s) with `s`,
    else all."""
    if isinstance(axes, str):
        axes = (-2, -1) if two else None
    if axes is None:
        axes = tuple(range(-len(s), 0)) if s is not None else tuple(range(ndim))
    return tuple(int(k) % ndim for k in axes)


def _fft_sizes(a, s, axes, last_real: bool = False) -> list:
    """The transform lengths along `axes`: `s` (-1 for the input's length), else the input's
    lengths (the last 2 (m - 1) for the inverse of a real transform)."""
    out = []
    for i, k in enumerate(axes):
        m = np.shape(a)[k]
        own = 2 * (m - 1) if last_real and i == len(axes) - 1 else m
        out.append(own if s is None or s[i] == -1 else int(s[i]))
    return out


def _fit_back(g, a, axes):
    """`g` cut or zero-padded to `a`'s lengths along `axes` (the transpose of what `s=` did)."""
    for k in axes:
        g = _fit(g, np.shape(a)[k], k)
    return g


def _distinct(axes, s, real: bool = False) -> None:
    """Refuse an axis repeated in `axes=` where the rule would not hold (with `s=`; rfftn, irfftn)."""
    if (s is not None or real) and len(set(axes)) != len(axes):
        raise _NoGradientError("no gradient for an n-dimensional FFT with an axis repeated in `axes=`"
                                  + (" and `s=`" if not real else ""))


def fftn_adjoint(g, a, s=None, axes="omitted", norm=None, inverse=False, two=False):
    """The adjoint of `np.fft.fftn(a, s, axes, norm)` (`fft2` with `two`, whose axes default to the
    last two; the inverses with `inverse`): the same transform of `g` (the DFT matrix is
    symmetric), cut or zero-padded back to `a`'s lengths where `s=` padded or cut."""
    axes = _fft_axes(np.ndim(a), s, axes, two)
    _distinct(axes, s)
    out = (np.fft.ifftn if inverse else np.fft.fftn)(g, axes=axes, norm=norm)
    return _fit_back(out, a, axes)


def fftn_tangent(t, s=None, axes="omitted", norm=None, inverse=False, two=False, real=False):
    """The tangent of `np.fft.fftn(a, s, axes, norm)` (`fft2` with `two`, the inverses with
    `inverse`, `rfftn` / `irfftn` with `real`): the same transform of the tangent `t`."""
    axes = _fft_axes(np.ndim(t), s, axes, two)
    func = {(False, False): np.fft.fftn, (True, False): np.fft.ifftn,
            (False, True): np.fft.rfftn, (True, True): np.fft.irfftn}[(bool(inverse), bool(real))]
    return func(t, s=s, axes=axes, norm=norm)


def rfftn_adjoint(g, a, s=None, axes="omitted", norm=None, two=False):
    """The adjoint of `np.fft.rfftn(a, s, axes, norm)` for a real `a` (`rfft2` with `two`): the
    fftn of `a` cut or padded to `s`, its last axis kept to n//2 + 1 entries; the transpose is the
    fftn of `g` zero-padded to n along the last axis, fitted back to `a` (the caller keeps the
    real part: `a` is real)."""
    axes = _fft_axes(np.ndim(a), s, axes, two)
    _distinct(axes, s, real=True)
    sizes = _fft_sizes(a, s, axes)
    out = np.fft.fftn(_fit(np.asarray(g), sizes[-1], axes[-1]), axes=axes, norm=norm)
    return _fit_back(out, a, axes)


def irfftn_adjoint(g, a, s=None, axes="omitted", norm=None, two=False):
    """The adjoint of `np.fft.irfftn(a, s, axes, norm)` (`irfft2` with `two`). NumPy computes it as
    the ifft along each axis but the last (cut or padded to `s`), then the irfft along the last:
    the adjoint is the irfft's (`irfft_adjoint`: the Hermitian weights c_k) followed by the ifft's
    along the other axes (the same transform, fitted back)."""
    axes = _fft_axes(np.ndim(a), s, axes, two)
    _distinct(axes, s, real=True)
    sizes = _fft_sizes(a, s, axes, last_real=True)
    out = irfft_adjoint(g, a, n=sizes[-1], axis=axes[-1], norm=norm)
    for k in axes[:-1]:
        out = _fit(np.fft.ifft(out, axis=k, norm=norm), np.shape(a)[k], k)
    return out


def rfft_adjoint(g, a, n=None, axis=-1, norm=None):
    """The adjoint of `np.fft.rfft(a, n, axis, norm)` for a real `a`: the rfft keeps the first
    n//2 + 1 entries of the fft, so its transpose is the fft of `g` padded with zeros to n (the
    caller keeps the real part: `a` is real)."""
    a = np.asarray(a)
    length = a.shape[axis] if n is None else n
    out = np.fft.fft(_fit(g, length, axis), axis=axis, norm=norm)
    return _fit(out, a.shape[axis], axis)


def irfft_adjoint(g, a, n=None, axis=-1, norm=None):
    """The adjoint of `np.fft.irfft(a, n, axis, norm)` (real output from the first n//2 + 1
    entries of `a`, the imaginary parts of the first and, for even n, the last ignored):
    c_k * ifft(g)_k with c_k = 2 for the entries that stand for a conjugate pair, 1 for the others."""
    a = np.asarray(a)
    length = 2 * (a.shape[axis] - 1) if n is None else n
    keep = length // 2 + 1
    out = _fit(np.fft.ifft(g, axis=axis, norm=norm), keep, axis)
    weights = np.full(keep, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * out.ndim
    shape[axis] = keep
    return _fit(out * weights.reshape(shape), a.shape[axis], axis)


def fftshift_adjoint(g, axes=None, inverse=False):
    """The adjoint of `np.fft.fftshift(x, axes)` (a permutation): `ifftshift` of `g`, and back."""
    return (np.fft.fftshift if inverse else np.fft.ifftshift)(g, axes=axes)


def _svd_norm(x, ord, axis) -> bool:
    """Whether `np.linalg.norm(x, ord, axis)` is a norm of singular values ('nuc', 2, -2 of a matrix)."""
    matrix = (axis is None and ord is not None and np.ndim(x) == 2) or (np.ndim(axis) == 1 and len(axis) == 2)
    return matrix and isinstance(ord, (int, float, str)) and ord in ("nuc", 2, -2)


def norm_adjoint_complex(g, x, y, ord=None, axis=None, keepdims=False):
    """The adjoint of `y = np.linalg.norm(x, ord, axis, keepdims)` for a complex `x`. The vector
    norms, 'fro' and the matrix 1, -1, inf, -inf norms read the moduli only: the real adjoint at
    |x| times d|x| = conj(x) / |x| (0 at 0). The singular-value norms ('nuc', 2, -2): d sigma =
    Re(u^H dX v), whose adjoint is the conjugate of the real rule's u v^H."""
    from .runtime import norm_adjoint
    x = np.asarray(x)
    if _svd_norm(x, ord, axis):
        return np.conj(norm_adjoint(np.conj(g), x, y, ord, axis, keepdims))
    a = np.abs(x)
    return norm_adjoint(g, a, y, ord, axis, keepdims) * abs_direction(x, a)


def norm_tangent_complex(t, x, y, ord=None, axis=None, keepdims=False):
    """The tangent of `y = np.linalg.norm(x, ...)` along a complex `t`: Re(sum(x_bar * t)) with
    x_bar the adjoint for a cotangent of ones (y is real)."""
    from .runtime_tangents import reduction_tangent
    weights = norm_adjoint_complex(np.ones_like(y), x, y, ord, axis, keepdims)
    return np.real(reduction_tangent(weights, t, axis, keepdims))

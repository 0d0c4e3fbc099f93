"""Helpers of the tangent rules of issue 15's primitives (rules/numpy_more.py, the factorizations of
rules/linalg.py, rules/scipy_*.py), re-exported by `runtime` as `rt.*`.

Each computes the tangent of one primitive's result from its arguments and their tangents (a
missing tangent arrives as the zero `rt.zero_tangent` makes: 0.0, zeros, or None for None), and
is linear in the tangents. The conventions are the adjoints' (runtime_rules): ties share, the
triangle a factorization reads gets the tangent, points where the derivative is not determined
raise `UndefinedGradientError` naming the function.

    y_dot = rt.eigh_tangent(a_dot, a, y, UPLO)   # (w_dot, v_dot), as the named tuple y
"""
from __future__ import annotations

import numpy as np

from .errors import NoGradientError as _NoGradientError

from . import runtime_facts as _facts


def _rr():
    from . import runtime_rules
    return runtime_rules


def _rebuild(like, items: list):
    kind = type(like)
    if hasattr(kind, "_make"):
        return kind._make(items)
    return kind(items) if kind in (tuple, list) else tuple(items)


def _scalar(v):
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def _zero_or(t):
    return 0.0 if t is None else t


def _mT(x):
    return np.swapaxes(x, -1, -2)


# -- reductions whose output entry depends on its slice alone: sum(adjoint(ones) * t) ----------------

def median_tangent(t, a, y, axis=None, keepdims=False):
    """The tangent of `y = np.median(a, axis)` (the middle entries, ties sharing, as the adjoint)."""
    rr = _rr()
    if np.ndim(a) == 0:
        return t
    weights = rr.median_adjoint(np.ones(np.shape(y)), a, y, axis, keepdims)
    out = np.sum(weights * t, axis=axis, keepdims=keepdims)
    return _scalar(out)


def nan_extremum_tangent(t, a, y, axis=None, keepdims=False):
    """The tangent of `np.nanmax` / `np.nanmin`: the mean tangent of the entries equal to the value
    taken (nan entries never are)."""
    rr = _rr()
    weights = rr.extremum_adjoint(np.ones(np.shape(y)), a, y, axis, keepdims)
    return _scalar(np.sum(np.where(np.isnan(a), 0.0, weights * t), axis=axis, keepdims=keepdims))


def nan_sum_tangent(t, a, axis=None, keepdims=False, mean=False):
    """The tangent of `np.nansum` (`np.nanmean` with `mean`): the tangents of the entries that are
    not nan, summed (averaged)."""
    keep = ~np.isnan(np.asarray(a, dtype=float))
    total = np.sum(np.where(keep, t, 0.0), axis=axis, keepdims=keepdims)
    if mean:
        with np.errstate(divide="ignore", invalid="ignore"):
            total = total / np.sum(keep, axis=axis, keepdims=keepdims)
    return _scalar(np.asarray(total))


# -- gathers, padding, interpolation, quadrature, polynomials -----------------------------------------

def pad_tangent(t, cv_t, array, pad_width, mode="constant"):
    """The tangent of `np.pad(array, pad_width, mode, constant_values=cv)`: the tangent padded the
    same way (with the constants' tangents for 'constant')."""
    rr = _rr()
    if mode not in rr._PAD_GATHERS:
        raise _NoGradientError(f"no tangent for np.pad(mode={mode!r}); the modes with one are {rr._PAD_GATHERS}")
    t = np.broadcast_to(np.asarray(t, dtype=float), np.shape(array))
    if mode == "constant":
        return np.pad(t, pad_width, mode="constant", constant_values=_zero_or(cv_t))
    return np.pad(t, pad_width, mode=mode)


def pad_adjoint_transpose(h, g, array, pad_width, mode="constant", constant_values=0):
    """The transpose of `pad_adjoint(g, array, pad_width, mode, constant_values)` in `g`: given
    `h`, the cotangents of its pair (array_bar, constant_values_bar), either None, the first
    padded as np.pad pads (with the second for 'constant'), in the shape of `g`."""
    from .runtime import unbroadcast
    ha, hc = (None, None) if h is None else (h[0], h[1])
    return unbroadcast(pad_tangent(_zero_or(ha), hc, array, pad_width, mode), g)


def interp_tangent(x_t, xp_t, fp_t, left_t, right_t, x, xp, fp, left=None, right=None):
    """The tangent of `np.interp(x, xp, fp, left, right)` (xp increasing), the transpose of
    `interp_adjoint`: at a knot the mean of the two one-sided derivatives."""
    x = np.asarray(x, dtype=float)
    xp, fp = np.asarray(xp, dtype=float), np.asarray(fp, dtype=float)
    tx = np.broadcast_to(np.asarray(_zero_or(x_t), dtype=float), x.shape)
    txp = np.broadcast_to(np.asarray(_zero_or(xp_t), dtype=float), xp.shape)
    tfp = np.broadcast_to(np.asarray(_zero_or(fp_t), dtype=float), fp.shape)
    n = xp.size
    out = np.zeros(x.shape)
    below, above = x < xp[0], x > xp[-1]
    out[below] = tfp[0] if left is None else _zero_or(left_t)
    out[above] = tfp[-1] if right is None else _zero_or(right_t)
    inside = ~(below | above)
    xi, ti = x[inside], tx[inside]
    acc = np.zeros(xi.shape)
    for side in ("left", "right"):
        if n < 2:
            acc = acc + 0.5 * tfp[0]
            continue
        j = np.searchsorted(xp, xi, side=side) - 1
        flat = (j < 0) | (j >= n - 1)
        jj = np.clip(j, 0, n - 2)
        h = xp[jj + 1] - xp[jj]
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(h > 0, (fp[jj + 1] - fp[jj]) / h, 0.0)
            s = np.where(h > 0, (xi - xp[jj]) / h, 0.0)
        end = np.where(j < 0, 0, n - 1)
        inner = (slope * ti + tfp[jj] * (1.0 - s) + tfp[jj + 1] * s
                 - slope * (1.0 - s) * txp[jj] - slope * s * txp[jj + 1])
        acc = acc + 0.5 * np.where(flat, tfp[end], inner)
    out[inside] = acc
    return _scalar(out)


def trapezoid_tangent(y_t, x_t, dx_t, y, x=None, dx=1.0, axis=-1):
    """The tangent of `np.trapezoid(y, x, dx, axis)`, bilinear in `y` and `x` (or `dx`)."""
    trap = np.trapezoid
    y = np.asarray(y, dtype=float)
    out = trap(np.broadcast_to(np.asarray(_zero_or(y_t), dtype=float), y.shape), x=x, dx=dx, axis=axis)
    if x is None:
        out = out + trap(y, dx=_zero_or(dx_t), axis=axis)
    elif x_t is not None:
        out = out + trap(y, x=np.broadcast_to(np.asarray(x_t, dtype=float), np.shape(x)), axis=axis)
    return _scalar(np.asarray(out))


def polyval_tangent(p_t, x_t, p, x):
    """The tangent of `np.polyval(p, x)`: polyval(p', x) + polyval(dp/dx, x) x'."""
    p = np.asarray(p, dtype=float)
    n = p.shape[0]
    out = np.polyval(np.broadcast_to(np.asarray(_zero_or(p_t), dtype=float), p.shape), x)
    if n > 1:
        out = out + np.polyval(p[:-1] * np.arange(n - 1, 0, -1), x) * _zero_or(x_t)
    return _scalar(np.asarray(out, dtype=float))


# -- np.linalg factorizations --------------------------------------------------------------------------

def _read_symmetric(t, lower: bool):
    """The symmetric matrix a factorization reads from `t`: its lower (upper) triangle mirrored."""
    rr = _rr()
    t = np.asarray(t, dtype=float)
    return rr._copyltu(t if lower else _mT(t))


def _solve_lower(l, b):
    return np.linalg.solve(l, b)


@_facts.fresh
def cholesky_tangent(t, l, upper=False):
    """The tangent of `l = np.linalg.cholesky(a, upper)`: with S the symmetric matrix read from
    `t` and X = L^-1 S L^-T, dL = L (tril(X) - diag(X) / 2)."""
    rr = _rr()
    low = _mT(l) if upper else np.asarray(l)
    s = _read_symmetric(t, not upper)
    x = _mT(_solve_lower(low, _mT(_solve_lower(low, s))))
    phi = np.tril(x) - 0.5 * rr._diag_embed(rr._diag_part(x))
    dl = low @ phi
    return _mT(dl) if upper else dl


def eigh_tangent(t, a, y, UPLO="L"):
    """The tangent of `w, v = np.linalg.eigh(a, UPLO)`: with M = v^T S v, dw = diag(M) (equal
    eigenvalues share), dv = v (F o M), F_ij = 1 / (w_j - w_i); eigenvectors need distinct
    eigenvalues along the direction (else `UndefinedGradientError`)."""
    rr = _rr()
    w, v = y[0], y[1]
    m = _mT(v) @ _read_symmetric(t, str(UPLO).upper() == "L") @ v
    dw = rr._cluster_mean(rr._diag_part(m), w)
    dv = v @ rr._pair_inverse(w, m, "the eigenvectors of np.linalg.eigh (forward mode)")
    return _rebuild(y, [dw, dv])


def eigvalsh_tangent(t, a, UPLO="L"):
    """The tangent of `w = np.linalg.eigvalsh(a, UPLO)`: diag(v^T S v), equal eigenvalues sharing."""
    rr = _rr()
    w, v = np.linalg.eigh(a, UPLO)
    m = _mT(v) @ _read_symmetric(t, str(UPLO).upper() == "L") @ v
    return rr._cluster_mean(rr._diag_part(m), w)


def _no_completion(what: str):
    rr = _rr()
    raise rr.UndefinedGradientError(
        f"forward mode of {what} on a non-square matrix is not supported: LAPACK completes the basis up to a "
        "rotation, so the completing columns have no tangent; use the reduced factorization")


def svd_tangent(t, a, y, full_matrices=True, compute_uv=True):
    """The tangent of `np.linalg.svd(a, full_matrices, compute_uv)`: with P = u^T t v,
    ds = diag(P), du = u (F o (P s + s P^T)) + (1 - u u^T) t v s^-1,
    dv = v (F o (s P + P^T s)) + (1 - v v^T) t^T u s^-1, F_ij = 1 / (s_j^2 - s_i^2). Equal values
    share, a zero value's vectors get none (the adjoint's conventions); vectors need distinct
    values along the direction."""
    rr = _rr()
    a = np.asarray(a, dtype=float)
    t = np.broadcast_to(np.asarray(t, dtype=float), a.shape)
    m, n = a.shape[-2:]
    k = min(m, n)
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return rr._svd_values_bar(rr._diag_part(_mT(u) @ t @ _mT(vh)), s)
    if full_matrices and m != n:
        _no_completion("np.linalg.svd(full_matrices=True)")
    u, s, vh = y[0], y[1], y[2]
    v = _mT(vh)
    p = _mT(u) @ t @ v
    ds = rr._svd_values_bar(rr._diag_part(p), s)
    sq = s * s
    zero = s <= rr._TIE * np.max(s, axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        sinv = np.where(zero, 0.0, 1.0 / np.where(zero, 1.0, s))
    ps = p * s[..., None, :]
    sp = s[..., :, None] * p
    what = "the singular vectors of np.linalg.svd (forward mode)"
    du = u @ rr._pair_inverse(sq, ps + _mT(ps), what)
    dv = v @ rr._pair_inverse(sq, sp + _mT(sp), what)
    if m > k:
        du = du + ((t @ v) - u @ (_mT(u) @ t @ v)) * sinv[..., None, :]
    if n > k:
        tu = _mT(t) @ u
        dv = dv + (tu - v @ (_mT(v) @ tu)) * sinv[..., None, :]
    return _rebuild(y, [du, ds, _mT(dv)])


def _qr_tall_tangent(t, q, r):
    rr = _rr()
    d = np.abs(rr._diag_part(r))
    if np.any(d <= max(r.shape[-2:]) * np.finfo(float).eps * np.max(np.abs(r), axis=(-2, -1))[..., None]):
        raise rr.UndefinedGradientError("the tangent of np.linalg.qr is not determined: the matrix (its leading "
                                        "square block, for a wide one) does not have full rank")
    t_rinv = _mT(np.linalg.solve(_mT(r), _mT(t)))  # t r^-1
    c = _mT(q) @ t_rinv
    low = np.tril(c, -1)
    omega = low - _mT(low)
    dq = q @ omega + t_rinv - q @ (_mT(q) @ t_rinv)
    dr = (c - omega) @ r
    return dq, dr


def qr_tangent(t, a, y, mode="reduced"):
    """The tangent of `np.linalg.qr(a, mode)`: with C = q^T t r^-1 and Omega its strictly lower
    part minus its transpose, dq = q Omega + (1 - q q^T) t r^-1, dr = (C - Omega) r; a wide
    `[x | z]` is `q [r1 | q^T z]`."""
    a = np.asarray(a, dtype=float)
    t = np.broadcast_to(np.asarray(t, dtype=float), a.shape)
    m, n = a.shape[-2:]
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"np.linalg.qr: no tangent for mode={mode!r} (use 'reduced', 'complete' or 'r')")
    if mode == "complete" and m > n:
        _no_completion("np.linalg.qr(mode='complete')")
    q, r = np.linalg.qr(a) if mode == "r" else (y[0], y[1])
    if m >= n:
        dq, dr = _qr_tall_tangent(t, q, r)
    else:
        dq, dr1 = _qr_tall_tangent(t[..., :, :m], q, r[..., :, :m])
        dr = np.concatenate([dr1, _mT(dq) @ a[..., :, m:] + _mT(q) @ t[..., :, m:]], axis=-1)
    if mode == "r":
        return dr
    return _rebuild(y, [dq, dr])


@_facts.fresh
def pinv_tangent(t, a, y, rcond=None):
    """The tangent of `y = np.linalg.pinv(a)` (full rank):
    -y t y + y y^T t^T (1 - a y) + (1 - y a) t^T y^T y."""
    rr = _rr()
    a = np.asarray(a, dtype=float)
    rr._full_rank(a, "np.linalg.pinv", rcond)
    t = np.broadcast_to(np.asarray(t, dtype=float), a.shape)
    m, n = a.shape[-2:]
    tt, yt = _mT(t), _mT(y)
    return -y @ t @ y + (y @ yt) @ tt @ (np.eye(m) - a @ y) + (np.eye(n) - y @ a) @ tt @ (yt @ y)


def lstsq_tangent(a_t, b_t, a, b, y, rcond=None):
    """The tangent of `x, residuals, rank, s = np.linalg.lstsq(a, b)` (full rank): dx = d(pinv(a)) b
    + pinv(a) db, d residuals = 2 r . (da x - db) with r = a x - b, no tangent for the rank, the
    singular values' tangent as `svd`'s."""
    rr = _rr()
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rr._full_rank(a, "np.linalg.lstsq", rcond)
    ta = np.broadcast_to(np.asarray(_zero_or(a_t), dtype=float), a.shape)
    tb = np.broadcast_to(np.asarray(_zero_or(b_t), dtype=float), b.shape)
    x, res, rank, s = y
    vector = b.ndim == 1
    b2, tb2 = (b[:, None], tb[:, None]) if vector else (b, tb)
    x2 = np.asarray(x)[:, None] if vector else np.asarray(x)
    p = np.linalg.pinv(a)
    dx = pinv_tangent(ta, a, p) @ b2 + p @ tb2
    if np.size(res):
        r = a @ x2 - b2
        dres = 2.0 * np.sum(r * (ta @ x2 - tb2), axis=0)
    else:
        dres = np.zeros(np.shape(res))
    ds = svd_tangent(ta, a, s, compute_uv=False)
    return _rebuild(y, [dx[:, 0] if vector else dx, dres, 0.0, ds])


@_facts.fresh
def matrix_power_tangent(t, a, n):
    """The tangent of `np.linalg.matrix_power(a, n)`: sum over i of b^i db b^(k-1-i) with b = a (db =
    t), or for n < 0 b = inv(a) (db = -b t b), k = |n|."""
    a = np.asarray(a, dtype=float)
    t = np.broadcast_to(np.asarray(t, dtype=float), a.shape)
    n = int(n)
    if n == 0:
        return np.zeros(a.shape)
    if n < 0:
        base = np.linalg.inv(a)
        dbase = -base @ t @ base
    else:
        base, dbase = a, t
    k = abs(n)
    powers = [np.broadcast_to(np.eye(a.shape[-1]), a.shape)]
    for _ in range(k - 1):
        powers.append(powers[-1] @ base)
    return sum(powers[i] @ dbase @ powers[k - 1 - i] for i in range(k))


# -- scipy ---------------------------------------------------------------------------------------------

def logsumexp_tangent(a_t, b_t, a, y, axis=None, b=None, keepdims=False, return_sign=False):
    """The tangent of `scipy.special.logsumexp(a, axis, b, keepdims, return_sign)`: with
    s = sum(b exp(a)), d log|s| = sum(sign(s) exp(a - log|s|) (b da + db)); the sign has none."""
    rr = _rr()
    a = np.asarray(a, dtype=float)
    r, sign = (y[0], y[1]) if return_sign else (y, 1.0)
    shape = np.broadcast_shapes(a.shape, np.shape(b)) if b is not None else a.shape
    axes = rr._axes(axis, len(shape)) if shape else ()

    def expand(v):
        v = np.asarray(v, dtype=float)
        return np.expand_dims(v, axes) if not keepdims and axes else v
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(a - expand(r)) * (expand(sign) if return_sign else 1.0)
    ta = np.asarray(_zero_or(a_t), dtype=float)
    inner = e * ta if b is None else e * (b * ta + np.asarray(_zero_or(b_t), dtype=float))
    out = np.sum(np.broadcast_to(inner, shape), axis=axes, keepdims=keepdims) if shape else inner
    out = _scalar(np.asarray(out))
    if return_sign:
        return _rebuild(y, [out, np.zeros(np.shape(sign)) if np.ndim(sign) else 0.0])
    return out


def _trans_op(m, t: int):
    return _mT(m) if t else m


def solve_triangular_tangent(a_t, b_t, a, b, x, trans=0, lower=False, unit_diagonal=False):
    """The tangent of `x = scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal)`:
    op(a)^-1 (db - op(da) x), da the triangle read (without its diagonal with `unit_diagonal`)."""
    from scipy import linalg
    rr = _rr()
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    t = rr._trans_code(trans)
    ta = np.broadcast_to(np.asarray(_zero_or(a_t), dtype=float), a.shape)
    tb = np.broadcast_to(np.asarray(_zero_or(b_t), dtype=float), b.shape)
    ta = np.tril(ta) if lower else np.triu(ta)
    if unit_diagonal:
        ta = ta - rr._diag_embed(rr._diag_part(ta))
    vector = b.ndim == 1
    xm = np.asarray(x, dtype=float)
    xm, tbm = (xm[..., None], tb[..., None]) if vector else (xm, tb)
    rhs = tbm - _trans_op(ta, t) @ xm
    out = linalg.solve_triangular(a, rhs, trans=t, lower=lower, unit_diagonal=unit_diagonal)
    return out[..., 0] if vector else out


def cho_factor_tangent(t, a, y):
    """The tangent of `(c, lower) = scipy.linalg.cho_factor(a, lower)`: the factor's triangle as
    `cholesky`'s; the other triangle holds `a`'s own entries (checked), so it carries their tangent."""
    rr = _rr()
    c, flag = y[0], y[1]
    lower = rr._flag(flag)
    a = np.asarray(a, dtype=float)
    t = np.broadcast_to(np.asarray(t, dtype=float), a.shape)
    tri = np.tril if lower else np.triu
    dfactor = cholesky_tangent(t, tri(c), upper=not lower)
    other = c - tri(c)
    if not np.array_equal(other, a - tri(a)):
        raise rr.UndefinedGradientError("the tangent of scipy.linalg.cho_factor: the triangle of its result "
                                        "outside the factor does not hold the matrix's entries")
    return _rebuild(y, [dfactor + (t - tri(t)), np.zeros(np.shape(flag)) if np.ndim(flag) else 0.0])


def cho_solve_tangent(c_t, b_t, c_and_lower, b, x):
    """The tangent of `x = scipy.linalg.cho_solve((c, lower), b)`, x = M^-1 b with M = l l^T (or
    u^T u) from the triangle of `c`: dx = M^-1 (db - dM x)."""
    from scipy import linalg
    rr = _rr()
    c, lower = np.asarray(c_and_lower[0], dtype=float), rr._flag(c_and_lower[1])
    b = np.asarray(b, dtype=float)
    tc = None if c_t is None else c_t[0]
    tc = np.zeros(c.shape) if tc is None else np.broadcast_to(np.asarray(tc, dtype=float), c.shape)
    tb = np.broadcast_to(np.asarray(_zero_or(b_t), dtype=float), b.shape)
    if lower:
        f, df = np.tril(c), np.tril(tc)
        dm = df @ _mT(f) + f @ _mT(df)
    else:
        f, df = np.triu(c), np.triu(tc)
        dm = _mT(df) @ f + _mT(f) @ df
    vector = b.ndim == 1
    xm = np.asarray(x, dtype=float)
    xm, tbm = (xm[..., None], tb[..., None]) if vector else (xm, tb)
    out = linalg.cho_solve((c_and_lower[0], c_and_lower[1]), tbm - dm @ xm)
    return out[..., 0] if vector else out


@_facts.fresh
def expm_tangent(t, a):
    """The tangent of `scipy.linalg.expm(a)`: its Frechet derivative in the direction `t`
    (scipy.linalg.expm_frechet), matrix by matrix for a stack."""
    from scipy import linalg
    a = np.asarray(a, dtype=float)
    t = np.broadcast_to(np.asarray(t, dtype=float), a.shape)
    out = np.zeros(a.shape)
    for idx in np.ndindex(a.shape[:-2]):
        out[idx] = linalg.expm_frechet(a[idx], t[idx], compute_expm=False)
    return out


__all__ = [
    "cho_factor_tangent",
    "cho_solve_tangent",
    "cholesky_tangent",
    "eigh_tangent",
    "eigvalsh_tangent",
    "expm_tangent",
    "interp_tangent",
    "logsumexp_tangent",
    "lstsq_tangent",
    "matrix_power_tangent",
    "median_tangent",
    "nan_extremum_tangent",
    "nan_sum_tangent",
    "pad_adjoint_transpose",
    "pad_tangent",
    "pinv_tangent",
    "polyval_tangent",
    "qr_tangent",
    "solve_triangular_tangent",
    "svd_tangent",
    "trapezoid_tangent",
]

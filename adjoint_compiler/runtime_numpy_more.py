"""Helpers of the rules of the rest of issue 15's NumPy list (rules/numpy_more.py): rot90, rollaxis,
vdot, meshgrid, choose, select, partition, gradient, quantile/percentile, tolist, the reductions
with `where=`, and the pure forms of the in-place calls (`ndarray.sort`, `ndarray.partition`,
`np.add.at`, `np.subtract.at`, `np.put`) that normalize writes back with `a[...] = ...`.
Re-exported by `runtime` as `rt.*`; adjoint helpers end in `_adjoint`, tangent ones in `_tangent`.

    a.sort(axis=0)            ->   a_sorted = rt.sorted_copy(a, 0); a[...] = a_sorted
    np.add.at(a, idx, v)      ->   a_added = rt.added_at(a, idx, v); a[...] = a_added
"""
from __future__ import annotations

import math

import numpy as np

from .errors import NoGradientError as _NoGradientError

from . import runtime_facts as _facts
from .buffer import Buffer


def _rr():
    from . import runtime_rules
    return runtime_rules


def _scalar(v):
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def _zero_or(t):
    return 0.0 if t is None else t


# -- rot90, rollaxis --------------------------------------------------------------------------------------

def rot90_of(g, k=1, axes=None):
    """`np.rot90(g, k, axes)` (axes None: (0, 1)): the adjoint of rot90 by k is rot90 by -k."""
    return np.rot90(g, k, (0, 1) if axes is None else axes)


def _rollaxis_perm(ndim: int, axis, start):
    return np.rollaxis(np.empty(tuple(range(2, ndim + 2)), dtype=np.uint8), axis, start).shape


@_facts.fresh
def rollaxis_adjoint(g, a, axis, start=0):
    """The gradient of `a` in `np.rollaxis(a, axis, start)`: `g` with the axes put back."""
    nd = np.ndim(a)
    perm = [s - 2 for s in _rollaxis_perm(nd, axis, start)]
    return np.array(np.transpose(g, np.argsort(perm)), dtype=float)


# -- meshgrid ----------------------------------------------------------------------------------------

def _grid_axis(k: int, n: int, indexing: str) -> int:
    if indexing == "xy" and n >= 2 and k < 2:
        return 1 - k
    return k


def meshgrid_adjoint(g, xi, indexing="xy", sparse=False):
    """The gradients of the inputs of `np.meshgrid(*xi, indexing, sparse)`: each output's gradient
    summed over every axis but the one its input runs along."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(xi)
    parts = [None] * n if g is None else list(g)
    out = []
    for k, (x, gk) in enumerate(zip(xi, parts)):
        if gk is None:
            out.append(np.zeros(np.shape(x)) if np.ndim(x) else 0.0)
            continue
        gk = np.asarray(gk, dtype=float)
        ax = _grid_axis(k, n, indexing)
        total = np.sum(gk, axis=tuple(i for i in range(gk.ndim) if i != ax))
        out.append(_scalar(np.reshape(total, np.shape(x))))
    return tuple(out)


def meshgrid_tangent(ts, y, indexing="xy", sparse=False):
    """The tangent of `np.meshgrid(*xi)`: the meshgrid of the inputs' tangents."""
    ts = [np.asarray(_zero_or(t), dtype=float) for t in ts]
    out = np.meshgrid(*ts, indexing=indexing, sparse=sparse)
    return type(y)(np.array(v, dtype=float) for v in out) if isinstance(y, (tuple, list)) else out


# -- choose, select ------------------------------------------------------------------------------------

def _choose_index(a, n: int, mode: str):
    a = np.asarray(a)
    if mode == "wrap":
        return np.mod(a, n)
    if mode == "clip":
        return np.clip(a, 0, n - 1)
    return a


def choose_adjoint(g, a, choices, mode="raise"):
    """The gradients of `choices` in `np.choose(a, choices, mode=mode)`: each choice gets `g` where
    `a` picks it (summed over the axes it was broadcast along)."""
    rr = _rr()
    n = len(choices)
    idx = _choose_index(a, n, mode)
    g = np.asarray(g, dtype=float)
    parts = [rr._runtime.unbroadcast(np.where(idx == k, g, 0.0), np.asarray(c)) for k, c in enumerate(choices)]
    return rr._like(parts, choices)


def select_adjoint(g, condlist, choicelist, default=0):
    """The gradients `(choicelist_bar, default_bar)` in `np.select(condlist, choicelist, default)`:
    each choice gets `g` where its condition is the first that holds, `default` where none does."""
    rr = _rr()
    g = np.asarray(g, dtype=float)
    taken = np.zeros(g.shape, dtype=bool)
    parts = []
    for cond, choice in zip(condlist, choicelist):
        here = np.broadcast_to(np.asarray(cond, dtype=bool), g.shape) & ~taken
        parts.append(rr._runtime.unbroadcast(np.where(here, g, 0.0), np.asarray(choice)))
        taken = taken | here
    default_bar = rr._runtime.unbroadcast(np.where(taken, 0.0, g), np.asarray(default))
    return rr._like(parts, choicelist), _scalar(default_bar)


def select_tangent(condlist, choicelist_t, default_t, y):
    """The tangent of `np.select(condlist, choicelist, default)`."""
    ts = [np.asarray(_zero_or(t), dtype=float) for t in choicelist_t]
    out = np.select(condlist, ts, _zero_or(default_t))
    return _scalar(np.array(np.broadcast_to(out, np.shape(y)), dtype=float))


# -- partition -----------------------------------------------------------------------------------------

def _partition_perm(a, y, axis):
    """An index array p with take_along_axis(a, p, axis) == y: y's entries matched to a's in
    sorted order (ties matched in a stable order)."""
    a, y = np.asarray(a), np.asarray(y)
    if axis is None:
        a, y, axis = a.ravel(), y.ravel(), 0
    sa = np.argsort(a, axis=axis, kind="stable")
    sy = np.argsort(y, axis=axis, kind="stable")
    perm = np.empty_like(sa)
    np.put_along_axis(perm, sy, sa, axis=axis)
    return perm, axis


@_facts.fresh
def partition_adjoint(g, a, y, axis=-1):
    """The gradient of `a` in `y = np.partition(a, kth, axis)`: `g` put back where each value came
    from (ties in a stable order, as `sort`)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return g
    perm, ax = _partition_perm(a, y, axis)
    out = np.zeros(perm.shape)
    np.put_along_axis(out, perm, np.asarray(g, dtype=float).reshape(perm.shape), axis=ax)
    return out.reshape(a.shape)


def partition_tangent(t, a, y, axis=-1):
    """The tangent of `y = np.partition(a, kth, axis)`."""
    a = np.asarray(a)
    if a.ndim == 0:
        return t
    perm, ax = _partition_perm(a, y, axis)
    t = np.broadcast_to(np.asarray(t, dtype=float), a.shape)
    return np.take_along_axis(t.ravel() if axis is None else t, perm, axis=ax)


# -- gradient (finite differences) ----------------------------------------------------------------------

def _gradient_axes(f, axis):
    nd = np.ndim(f)
    if axis is None:
        return list(range(nd)), False
    if np.ndim(axis) == 0:
        return [int(axis) % nd], True
    return [int(a) % nd for a in axis], False


def _spacing_for(varargs, k: int, n_axes: int):
    if len(varargs) == 0:
        return ()
    if len(varargs) == 1:
        return (varargs[0],)
    if len(varargs) != n_axes:
        raise TypeError("invalid number of arguments")
    return (varargs[k],)


def _stencil_transpose(g, n: int, spacing, ax: int, edge_order: int):
    """`M^T g` along axis `ax`, M the matrix np.gradient applies along an axis of length n (its
    bandwidth is at most 2, so five combs recover every entry)."""
    if n <= 5:
        m = np.gradient(np.eye(n), *spacing, axis=0, edge_order=edge_order)
        return np.moveaxis(np.tensordot(m.T, np.moveaxis(g, ax, 0), axes=1), 0, ax)
    gm = np.moveaxis(g, ax, 0)
    out = np.zeros(gm.shape)
    rows = np.arange(n)
    for r in range(5):
        comb = (rows % 5 == r).astype(float)
        col = np.gradient(comb, *spacing, edge_order=edge_order)  # col[i] = M[i, j(i)] for the comb's j near i
        for d in (-2, -1, 0, 1, 2):
            i = rows[(rows + d >= 0) & (rows + d < n) & ((rows + d) % 5 == r)]
            j = i + d
            np.add.at(out, j, col[i].reshape((-1,) + (1,) * (gm.ndim - 1)) * gm[i])
    return np.moveaxis(out, 0, ax)


@_facts.fresh
def gradient_adjoint(g, f, varargs, axis=None, edge_order=1):
    """The gradient of `f` in `np.gradient(f, *varargs, axis, edge_order)` (linear in `f`)."""
    f = np.asarray(f, dtype=float)
    axes, _ = _gradient_axes(f, axis)
    parts = [g] if len(axes) == 1 else list(g)
    out = np.zeros(f.shape)
    for k, (ax, gk) in enumerate(zip(axes, parts)):
        if gk is None:
            continue
        spacing = _spacing_for(varargs, k, len(axes))
        out = out + _stencil_transpose(np.asarray(gk, dtype=float), f.shape[ax], spacing, ax, edge_order)
    return out


def gradient_spacing_adjoint(g, varargs):
    """np.gradient's spacing (`varargs`) is not differentiated: a located refusal."""
    raise _NoGradientError("np.gradient: no gradient with respect to the spacing (`varargs`); pass the "
                              "spacing as a constant")


def gradient_tangent(t, spacing_t, f, varargs, axis=None, edge_order=1):
    """The tangent of `np.gradient(f, *varargs, axis, edge_order)` along `t` (spacing constant)."""
    if isinstance(spacing_t, (tuple, list)) and any(s is not None and np.any(np.asarray(s) != 0) for s in spacing_t):
        gradient_spacing_adjoint(None, varargs)
    t = np.broadcast_to(np.asarray(t, dtype=float), np.shape(f))
    out = np.gradient(t, *varargs, axis=axis, edge_order=edge_order)
    return tuple(out) if isinstance(out, (list, tuple)) else out


# -- quantile, percentile --------------------------------------------------------------------------------

_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile_parts(a, q, axis, method):
    """(flat, weights, dq, rest, axes): `a` as (rest..., m) with the reduced axes last, and for
    every quantile (leading axes of q) the weight of each entry (ties of a value share its
    weight) and the derivative in q (the mean of the one-sided ones at a kink)."""
    rr = _rr()
    if method not in _QUANTILE_METHODS:
        raise _NoGradientError(f"no gradient for np.quantile(method={method!r}); the methods with one are "
                                  f"{_QUANTILE_METHODS}")
    a = np.asarray(a, dtype=float)
    axes = rr._axes(axis, a.ndim) if a.ndim else ()
    rest = [k for k in range(a.ndim) if k not in axes]
    moved = np.transpose(a, rest + list(axes)) if a.ndim else a.reshape(1)
    flat = moved.reshape(moved.shape[:len(rest)] + (-1,))
    m = flat.shape[-1]
    s = np.sort(flat, axis=-1)
    qs = np.atleast_1d(np.asarray(q, dtype=float)).ravel()
    weights = np.zeros((qs.size,) + flat.shape)
    dq = np.zeros((qs.size,) + flat.shape[:-1])
    slopes = np.zeros((qs.size,) + flat.shape)  # d dq / d flat (the order statistics' shares)

    def share(k):  # d s[..., k] / d flat: entries equal to it share it
        hit = flat == s[..., k, None]
        return hit / np.sum(hit, axis=-1, keepdims=True)

    for i, qq in enumerate(qs):
        v = qq * (m - 1)
        lo = int(np.floor(v))
        hi = min(lo + 1, m - 1)
        frac = v - lo
        if method == "linear":
            picks = [(lo, 1.0 - frac), (hi, frac)]
            if 0 < frac < 1 or m == 1:
                slope = s[..., hi] - s[..., lo]
                if hi != lo:
                    slopes[i] = (m - 1) * (share(hi) - share(lo))
            else:  # a kink at an order statistic: the mean of the two one-sided slopes
                k = lo
                left = s[..., k] - s[..., k - 1] if k > 0 else None
                right = s[..., k + 1] - s[..., k] if k < m - 1 else None
                slope = (left + right) / 2.0 if left is not None and right is not None else \
                    (left if left is not None else right)
                below, above = (k - 1 if k > 0 else k), (k + 1 if k < m - 1 else k)
                slopes[i] = (m - 1) * (share(above) - share(below)) / (2.0 if 0 < k < m - 1 else 1.0)
            dq[i] = slope * (m - 1)
        elif method == "lower":
            picks = [(lo, 1.0)]
        elif method == "higher":
            picks = [(int(np.ceil(v)), 1.0)]
        elif method == "nearest":
            picks = [(int(np.around(v)), 1.0)]
        else:  # midpoint
            picks = [(lo, 0.5), (int(np.ceil(v)), 0.5)]
        for k, w in picks:
            if w == 0.0:
                continue
            hit = flat == s[..., k, None]
            weights[i] = weights[i] + w * hit / np.sum(hit, axis=-1, keepdims=True)
    return flat, weights, dq, rest, axes, slopes


def _quantile_check(y, flat, weights, q, keepdims, a, axes):
    got = np.sum(weights * flat, axis=-1)
    expected = np.reshape(np.asarray(y, dtype=float), got.shape)
    if not np.allclose(got, expected, rtol=1e-9, atol=1e-12 * (1.0 + np.max(np.abs(flat), initial=0.0)),
                       equal_nan=True):
        raise _NoGradientError("np.quantile: this NumPy's interpolation differs from the rule's; no gradient")


def _quantile_out_shape(a, q, axes, keepdims):
    shape = np.shape(a)
    red = tuple(1 if k in axes else n for k, n in enumerate(shape)) if keepdims else \
        tuple(n for k, n in enumerate(shape) if k not in axes)
    return np.shape(q) + red


def quantile_adjoint(g, a, q, y, axis=None, method="linear", keepdims=False, scale=1.0):
    """The gradients `(a_bar, q_bar)` in `y = np.quantile(a, q, axis, method=..., keepdims=...)`
    (`np.percentile` with scale=1/100): the order statistics the value interpolates get their
    weights (entries equal to one share it, as `median`), and q the slope between them."""
    a_arr = np.asarray(a, dtype=float)
    flat, weights, dq, rest, axes, _ = _quantile_parts(a_arr, np.asarray(q, dtype=float) * scale, axis, method)
    _quantile_check(y, flat, weights, q, keepdims, a_arr, axes)
    nq = weights.shape[0]
    gg = np.reshape(np.asarray(g, dtype=float), (nq,) + flat.shape[:-1])
    a_flat = np.sum(weights * gg[..., None], axis=0)
    if a_arr.ndim == 0:
        a_bar = _scalar(a_flat.reshape(()))
    else:
        moved_shape = tuple(a_arr.shape[k] for k in rest) + tuple(a_arr.shape[k] for k in axes)
        a_bar = np.transpose(a_flat.reshape(moved_shape), np.argsort(rest + list(axes)))
    q_bar = np.sum(gg * dq, axis=tuple(range(1, gg.ndim))) * scale
    return a_bar, _scalar(np.reshape(q_bar, np.shape(q)))


def quantile_tangent(a_t, q_t, a, q, y, axis=None, method="linear", keepdims=False, scale=1.0):
    """The tangent of `y = np.quantile(a, q, ...)` (`np.percentile` with scale=1/100)."""
    a_arr = np.asarray(a, dtype=float)
    flat, weights, dq, rest, axes, _ = _quantile_parts(a_arr, np.asarray(q, dtype=float) * scale, axis, method)
    _quantile_check(y, flat, weights, q, keepdims, a_arr, axes)
    t = np.broadcast_to(np.asarray(_zero_or(a_t), dtype=float), a_arr.shape)
    if a_arr.ndim:
        t = np.transpose(t, rest + list(axes)).reshape(flat.shape)
    else:
        t = t.reshape(1)
    out = np.sum(weights * t, axis=-1)
    tq = np.broadcast_to(np.asarray(_zero_or(q_t), dtype=float), np.shape(q)).ravel() * scale
    out = out + dq * tq.reshape((-1,) + (1,) * (dq.ndim - 1))
    return _scalar(np.reshape(out, _quantile_out_shape(a_arr, q, axes, keepdims)))


def _quantile_to_a(flat_value, a_arr, rest, axes):
    """An array shaped like `flat` (the reduced axes last, flattened) back in the shape of `a`."""
    if a_arr.ndim == 0:
        return _scalar(flat_value.reshape(()))
    moved_shape = tuple(a_arr.shape[k] for k in rest) + tuple(a_arr.shape[k] for k in axes)
    return np.transpose(flat_value.reshape(moved_shape), np.argsort(rest + list(axes)))


def quantile_cross(g, a_t, q_t, a, q, y, axis=None, method="linear", keepdims=False, scale=1.0):
    """The part of the tangent of `quantile_adjoint(g, a, q, y, ...)` = (a_bar, q_bar) that comes
    from `a_t` and `q_t` (the weights are piecewise constant in `a`, the slopes in `q`): a_bar
    changes with q by d weights / dq, q_bar with a by d slopes / da, one array of derivatives
    (the mixed second derivative of the quantile; 0 for the methods other than 'linear')."""
    a_arr = np.asarray(a, dtype=float)
    flat, weights, _, rest, axes, slopes = _quantile_parts(a_arr, np.asarray(q, dtype=float) * scale, axis,
                                                             method)
    nq = weights.shape[0]
    gg = np.reshape(np.asarray(g, dtype=float), (nq,) + flat.shape[:-1])
    tq = np.broadcast_to(np.asarray(_zero_or(q_t), dtype=float), np.shape(q)).ravel() * scale
    a_part = np.sum(slopes * (gg * tq.reshape((-1,) + (1,) * (gg.ndim - 1)))[..., None], axis=0)
    t = np.broadcast_to(np.asarray(_zero_or(a_t), dtype=float), a_arr.shape)
    t = np.transpose(t, rest + list(axes)).reshape(flat.shape) if a_arr.ndim else t.reshape(1)
    q_part = np.sum(gg * np.sum(slopes * t, axis=-1), axis=tuple(range(1, gg.ndim))) * scale
    return _quantile_to_a(a_part, a_arr, rest, axes), _scalar(np.reshape(q_part, np.shape(q)))


def quantile_adjoint_tangent(g_t, a_t, q_t, g, a, q, y, axis=None, method="linear", keepdims=False, scale=1.0):
    """The tangent of `quantile_adjoint(g, a, q, y, ...)`: linear in `g`, plus `quantile_cross`."""
    cross = quantile_cross(g, a_t, q_t, a, q, y, axis, method, keepdims, scale)
    if g_t is None:
        return cross
    part = quantile_adjoint(g_t, a, q, y, axis, method, keepdims, scale)
    return part[0] + cross[0], part[1] + cross[1]


def quantile_adjoint_transpose(h, g, a, q, y, axis=None, method="linear", keepdims=False, scale=1.0):
    """The gradients `(g_bar, a_bar, q_bar)` in `(a_bar, q_bar) = quantile_adjoint(g, a, q, y, ...)`,
    given `h`, the cotangents of that pair (either None): the quantile's tangent for `g`, and the
    transposes of `quantile_cross`, which is symmetric in (a_t, q_t)."""
    ha, hq = (None, None) if h is None else (h[0], h[1])
    g_bar = quantile_tangent(ha, hq, a, q, y, axis, method, keepdims, scale)
    from .runtime import unbroadcast
    a_bar, _ = quantile_cross(g, None, hq, a, q, y, axis, method, keepdims, scale)
    _, q_bar = quantile_cross(g, ha, None, a, q, y, axis, method, keepdims, scale)
    return unbroadcast(g_bar, g), a_bar, q_bar


# -- tolist ---------------------------------------------------------------------------------------------

def tolist_adjoint(g, a):
    """The gradient of `a` in `a.tolist()`: the nested list of gradients as an array (a missing
    entry, None, is 0)."""
    def fill(v):
        if v is None:
            return 0.0
        if isinstance(v, (list, tuple)):
            return [fill(x) for x in v]
        return float(v)
    out = np.array(fill(g), dtype=float)
    return _scalar(np.reshape(out, np.shape(a)))


def tolist_tangent(t, a):
    """The tangent of `a.tolist()`: the tangent's values as nested lists of floats."""
    return np.array(np.broadcast_to(np.asarray(_zero_or(t), dtype=float), np.shape(a))).tolist()


# -- reductions with `where=` (and max/min with `initial=`) ----------------------------------------------

@_facts.fresh
def where_reduce(name, a, where=True, axis=None, dtype=None, keepdims=False, initial=None):
    """`np.<name>(a, axis, dtype, keepdims=..., where=..., initial=...)` for name in sum, mean,
    max, min: what normalize calls for a reduction with `where=` (or a max/min with `initial=`)."""
    kwargs = {"axis": axis, "keepdims": keepdims, "where": where}
    if name in ("sum", "mean") and dtype is not None:
        kwargs["dtype"] = dtype
    if initial is not None:
        kwargs["initial"] = initial
    return getattr(np, name)(a, **kwargs)


def _kept_shape(shape, axis, rr):
    """The shape of a reduction over `axis` of an array of `shape` with keepdims=True (also when
    the reduced axes are empty, which no reduction of the expanded result could give)."""
    axes = rr._axes(axis, len(shape))
    return tuple(1 if k in axes else n for k, n in enumerate(shape))


def _where_parts(name, a, where, y, axis, dtype, keepdims, initial):
    """The weights (a_weight, initial_weight) of each entry (and of `initial`) in each output."""
    rr = _rr()
    a = np.asarray(a, dtype=float)
    mask = np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
    if dtype is not None and np.dtype(dtype).kind in "biu":
        return np.zeros(a.shape), 0.0
    if name == "sum":
        return mask.astype(float), (None if initial is None else 1.0)
    if name == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            count = np.sum(mask, axis=axis, keepdims=True)
            return np.where(mask, 1.0 / np.where(count == 0, 1.0, count), 0.0), None
    ye = rr._expand(np.asarray(y, dtype=float), a, axis, keepdims)
    hit = mask & (a == ye)
    n = np.sum(hit, axis=axis, keepdims=True).astype(float)
    init_hit = 0.0
    if initial is not None:
        y_keep = np.reshape(np.asarray(y, dtype=float), _kept_shape(a.shape, axis, rr)) if a.ndim else ye
        init_hit = (np.asarray(initial, dtype=float) == y_keep).astype(float)
        n = n + init_hit
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(n > 0, 1.0 / np.where(n > 0, n, 1.0), 0.0)
    return hit * share, (None if initial is None else init_hit * share)


def where_reduce_adjoint(g, name, a, where, y, axis=None, dtype=None, keepdims=False, initial=None):
    """The gradients `(a_bar, initial_bar)` of a reduction with `where=`: only the selected entries
    get gradient (a mean divides by their count; a max/min splits among the selected entries tied
    for it and `initial` when it ties too)."""
    rr = _rr()
    wa, wi = _where_parts(name, a, where, y, axis, dtype, keepdims, initial)
    ge = rr._expand(np.asarray(g, dtype=float), np.asarray(a), axis, keepdims) if np.ndim(a) else np.asarray(g)
    a_bar = _scalar(np.asarray(ge * wa))
    initial_bar = None
    if initial is not None:
        if name == "sum":
            initial_bar = rr._runtime.unbroadcast(np.asarray(g, dtype=float), np.asarray(initial))
        else:
            w_out = np.sum(wi, axis=axis, keepdims=keepdims) if np.ndim(a) else wi
            initial_bar = rr._runtime.unbroadcast(np.asarray(np.asarray(g, dtype=float) * w_out), np.asarray(initial))
        initial_bar = _scalar(np.asarray(initial_bar))
    return a_bar, initial_bar


def where_reduce_tangent(a_t, initial_t, name, a, where, y, axis=None, dtype=None, keepdims=False, initial=None):
    """The tangent of a reduction with `where=` (and max/min with `initial=`)."""
    wa, wi = _where_parts(name, a, where, y, axis, dtype, keepdims, initial)
    t = np.broadcast_to(np.asarray(_zero_or(a_t), dtype=float), np.shape(a))
    out = np.sum(wa * t, axis=axis, keepdims=keepdims) if np.ndim(a) else wa * t
    if initial is not None and initial_t is not None:
        if name == "sum":
            out = out + initial_t
        else:
            wr = np.sum(wi, axis=axis, keepdims=keepdims) if np.ndim(a) else wi
            out = out + wr * initial_t
    return _scalar(np.asarray(np.broadcast_to(out, np.shape(y)), dtype=float))


# -- the pure forms of in-place calls --------------------------------------------------------------------

def _array_receiver(a, method: str) -> None:
    """`a.<method>(...)`, compiled as NumPy's in-place array method, called on something else
    (a list from `tolist()`, a user's object with a method of that name): refused, located."""
    if not isinstance(a, (np.ndarray, Buffer)):
        from .errors import MissingRuleError
        hint = "sort a list with `sorted(...)`" if isinstance(a, list) else "rename the method"
        raise MissingRuleError(f"`.{method}(...)` is called on a `{type(a).__name__}`, not an array: the compiler "
                               f"took it for NumPy's in-place `ndarray.{method}`; {hint}")


@_facts.fresh
def sorted_copy(a, axis=-1, kind=None, order=None):
    """`np.sort(a, axis, kind)`: what `a.sort(axis, kind)` writes back into `a`."""
    _array_receiver(a, "sort")
    if order is not None:
        raise _NoGradientError("ndarray.sort(order=...) sorts structured arrays: no gradient")
    return np.sort(a, axis=axis, kind=kind)


@_facts.fresh
def partitioned_copy(a, kth, axis=-1, kind="introselect", order=None):
    """`np.partition(a, kth, axis)`: what `a.partition(kth, axis)` writes back into `a`."""
    _array_receiver(a, "partition")
    if order is not None:
        raise _NoGradientError("ndarray.partition(order=...) partitions structured arrays: no gradient")
    return np.partition(a, kth, axis=axis, kind=kind)


@_facts.fresh
def added_at(a, indices, b):
    """A copy of `a` after `np.add.at(a, indices, b)` (duplicate indices accumulate)."""
    out = np.array(a, copy=True)
    np.add.at(out, indices, b)
    return out


@_facts.fresh
def subtracted_at(a, indices, b):
    """A copy of `a` after `np.subtract.at(a, indices, b)`."""
    out = np.array(a, copy=True)
    np.subtract.at(out, indices, b)
    return out


def at_adjoint(g, indices, b):
    """The gradient of `b` in `np.add.at(a, indices, b)`: `g` read at each index (duplicates read
    it again), summed over the axes `b` was broadcast along."""
    rr = _rr()
    gi = np.asarray(g, dtype=float)[indices if not isinstance(indices, list) else np.asarray(indices)]
    return _scalar(np.asarray(rr._runtime.unbroadcast(np.asarray(gi), np.asarray(b))))


def _put_positions(n: int, ind, mode: str):
    ind = np.ravel(np.asarray(ind, dtype=np.intp))
    if mode == "wrap":
        return np.mod(ind, n)
    if mode == "clip":
        return np.clip(ind, 0, n - 1)
    if np.any((ind < -n) | (ind >= n)):
        raise IndexError(f"index out of bounds for size {n}")
    return np.where(ind < 0, ind + n, ind)


@_facts.fresh
def put_copy(a, ind, v, mode="raise"):
    """A copy of `a` after `np.put(a, ind, v, mode)`."""
    _array_receiver(a, "put")
    out = np.array(a, copy=True)
    np.put(out, ind, v, mode=mode)
    return out


def put_adjoint(g, a, ind, v, mode="raise"):
    """The gradients `(a_bar, v_bar)` in `np.put(a, ind, v, mode)` (flat indices; `v` repeated to the
    length of `ind`; for a repeated index the last write wins and alone gets the gradient)."""
    a = np.asarray(a)
    n = a.size
    pos = _put_positions(n, ind, mode)
    gflat = np.ravel(np.asarray(g, dtype=float)).copy()
    vv = np.asarray(v, dtype=float)
    nv = max(vv.size, 1)
    v_bar = np.zeros(vv.size)
    if pos.size and vv.size:
        last = {}
        for k, p in enumerate(pos):
            last[int(p)] = k
        for p, k in last.items():
            v_bar[k % nv] += gflat[p]
    a_bar = gflat
    a_bar[pos] = 0.0
    return _scalar(a_bar.reshape(a.shape)), _scalar(v_bar.reshape(vv.shape))


@_facts.fresh
def put_along_axis_copy(arr, indices, values, axis):
    """A copy of `arr` after `np.put_along_axis(arr, indices, values, axis)`."""
    out = np.array(arr, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


def put_along_axis_adjoint(g, arr, indices, values, axis):
    """The gradients `(arr_bar, values_bar)` in `np.put_along_axis(arr, indices, values, axis)`: the
    slots written pass nothing to `arr`; each passes its gradient to the write it holds (the last
    of the writes to one slot), summed back to `values`' shape."""
    from .runtime import unbroadcast

    arr = np.asarray(arr)
    shape = arr.shape
    gf = np.broadcast_to(np.asarray(g, dtype=float), shape)
    if axis is None:  # (NumPy writes into the flattened array)
        arr, gf, axis = arr.ravel(), gf.ravel(), 0
    idx = np.asarray(indices)
    ax = int(axis) % arr.ndim
    writes = np.broadcast_shapes(idx.shape, tuple(1 if k == ax else n for k, n in enumerate(arr.shape)))
    marker = np.full(arr.shape, -1, dtype=np.intp)
    np.put_along_axis(marker, indices, np.arange(math.prod(writes)).reshape(writes), axis)
    held = marker >= 0
    arr_bar = np.where(held, 0.0, gf)
    write_bar = np.zeros(math.prod(writes))
    write_bar[marker[held]] = gf[held]
    return arr_bar.reshape(shape), _scalar(unbroadcast(write_bar.reshape(writes), values))


@_facts.fresh
def putmask_copy(a, mask, values):
    """A copy of `a` after `np.putmask(a, mask, values)`."""
    out = np.array(a, copy=True)
    np.putmask(out, mask, values)
    return out


def putmask_adjoint(g, a, mask, values):
    """The gradients `(a_bar, values_bar)` in `np.putmask(a, mask, values)`, which sets
    `a.flat[n] = values.flat[n % values.size]` where `mask.flat[n]`."""
    a = np.asarray(a)
    m = np.broadcast_to(np.asarray(mask, dtype=bool), a.shape)
    gf = np.broadcast_to(np.asarray(g, dtype=float), a.shape)
    vv = np.asarray(values)
    v_bar = np.zeros(vv.size)
    if vv.size:
        np.add.at(v_bar, np.flatnonzero(m) % vv.size, gf[m])
    return np.where(m, 0.0, gf), _scalar(v_bar.reshape(vv.shape))


def broadcast_arrays_adjoint(g, args) -> tuple:
    """The gradients of the arguments of `np.broadcast_arrays(*args)` from the pair of gradients of
    its results (None for an unused one): each summed back to its argument's shape."""
    from .runtime import unbroadcast

    return tuple(np.zeros(np.shape(a)) if gi is None else unbroadcast(gi, a) for gi, a in zip(g, args))


def broadcast_arrays_tangent(tangents, y) -> tuple:
    """The tangent of `y = np.broadcast_arrays(*args)`: each argument's tangent (zeros for none)
    broadcast to its result's shape."""
    return tuple(np.zeros(np.shape(yi)) if t is None else np.array(np.broadcast_to(t, np.shape(yi)), dtype=float)
                 for t, yi in zip(tangents, y))


def block_adjoint(g, arrays):
    """The gradients of the blocks in `np.block(arrays)` (nested lists of arrays and numbers), in
    the same nesting: each block's entries are found where `np.block` of the entries' positions
    puts them."""
    leaves: list = []

    def collect(node):
        if isinstance(node, list):
            for item in node:
                collect(item)
        else:
            leaves.append(np.asarray(node))
    collect(arrays)
    offsets = np.cumsum([0] + [leaf.size for leaf in leaves])
    count = iter(range(len(leaves)))

    def positions(node):
        if isinstance(node, list):
            return [positions(item) for item in node]
        k = next(count)
        return np.arange(offsets[k], offsets[k + 1]).reshape(leaves[k].shape)
    where = np.block(positions(arrays))
    flat = np.zeros(int(offsets[-1]))
    flat[np.ravel(where)] = np.ravel(np.broadcast_to(np.asarray(g, dtype=float), where.shape))
    count = iter(range(len(leaves)))

    def gradients(node):
        if isinstance(node, list):
            return [gradients(item) for item in node]
        k = next(count)
        return _scalar(flat[offsets[k]:offsets[k + 1]].reshape(leaves[k].shape))
    return gradients(arrays)


def outer_sums(g, a, b):
    """The gradients `(a_bar, b_bar)` in `np.add.outer(a, b)` (`a`'s axes first, then `b`'s): the
    sums of `g` over the other operand's axes."""
    g = np.asarray(g, dtype=float)
    na, nb = np.ndim(a), np.ndim(b)
    g = np.broadcast_to(g, np.shape(a) + np.shape(b))
    return _scalar(np.sum(g, axis=tuple(range(na, na + nb)))), _scalar(np.sum(g, axis=tuple(range(na))))


__all__ = [
    "block_adjoint",
    "broadcast_arrays_adjoint",
    "broadcast_arrays_tangent",
    "outer_sums",
    "put_along_axis_adjoint",
    "put_along_axis_copy",
    "putmask_adjoint",
    "putmask_copy",
    "added_at",
    "at_adjoint",
    "choose_adjoint",
    "gradient_adjoint",
    "gradient_spacing_adjoint",
    "gradient_tangent",
    "meshgrid_adjoint",
    "meshgrid_tangent",
    "partition_adjoint",
    "partition_tangent",
    "partitioned_copy",
    "put_adjoint",
    "put_copy",
    "quantile_adjoint",
    "quantile_adjoint_tangent",
    "quantile_adjoint_transpose",
    "quantile_cross",
    "quantile_tangent",
    "rollaxis_adjoint",
    "rot90_of",
    "select_adjoint",
    "select_tangent",
    "sorted_copy",
    "subtracted_at",
    "tolist_adjoint",
    "tolist_tangent",
    "where_reduce",
    "where_reduce_adjoint",
    "where_reduce_tangent",
]


# -- np.vectorize of a Python function: normalize writes `rt.vectorize_result([f(v) for v in
#    rt.vectorize_items(x)], x)`, so the function is compiled (inlined) for each entry ----------------

def _broadcast_shape(args) -> tuple:
    return np.broadcast_shapes(*(np.shape(a) for a in args))


def vectorize_items(*args):
    """The entries of the arguments broadcast together, in C order, as Python numbers: a list of
    numbers for one argument, of tuples for several."""
    shape = _broadcast_shape(args)
    flat = [np.broadcast_to(np.asarray(a), shape).ravel().tolist() for a in args]
    return flat[0] if len(args) == 1 else list(zip(*flat))


def vectorize_items_adjoint(g, args):
    """The gradients of the arguments of `vectorize_items(*args)` from the list of the entries'
    gradients (None for an entry without one)."""
    rr = _rr()
    shape = _broadcast_shape(args)
    n = len(args)
    size = int(np.prod(shape))
    g = [None] * size if g is None else list(g)
    out = []
    for k, a in enumerate(args):
        vals = np.zeros(size)
        for i, gi in enumerate(g):
            v = gi if n == 1 else (None if gi is None else gi[k])
            if v is not None:
                vals[i] = v
        out.append(_scalar(np.asarray(rr._runtime.unbroadcast(vals.reshape(shape), np.asarray(a)))))
    return tuple(out)


def vectorize_items_tangent(ts, args):
    """The tangent of `vectorize_items(*args)`: the tangents' entries in the same structure."""
    shape = _broadcast_shape(args)
    flat = [np.broadcast_to(np.asarray(_zero_or(t), dtype=float), shape).ravel().tolist() for t in ts]
    return flat[0] if len(args) == 1 else list(zip(*flat))


@_facts.fresh
def vectorize_result(items, *args):
    """The array np.vectorize makes from the entries' values: their broadcast shape, C order."""
    shape = _broadcast_shape(args)
    out = np.asarray(items)
    if out.size == 0:
        return np.zeros(shape)
    return out.reshape(shape)


def vectorize_result_adjoint(g, items):
    """The gradient of the list `items` in `vectorize_result(items, ...)`: one number each."""
    return [float(v) for v in np.ravel(np.asarray(g, dtype=float))]


__all__ += ["vectorize_items", "vectorize_items_adjoint", "vectorize_items_tangent", "vectorize_result",
            "vectorize_result_adjoint"]


@_facts.fresh
def piecewise_zeros(x):
    """The array np.piecewise starts from (zeros like `x`, its dtype), and the mask of each
    condition as np.piecewise reads it."""
    return np.zeros_like(np.asarray(x))


def piecewise_mask(x, cond):
    """A condition of np.piecewise as the boolean mask it applies (broadcast to `x`)."""
    return np.broadcast_to(np.asarray(cond, dtype=bool), np.shape(x))


def piecewise_otherwise(x, *conds):
    """The entries no condition of np.piecewise selects."""
    taken = np.zeros(np.shape(x), dtype=bool)
    for c in conds:
        taken = taken | piecewise_mask(x, c)
    return ~taken


__all__ += ["piecewise_mask", "piecewise_otherwise", "piecewise_zeros"]


# -- np.multiply.at, np.maximum.at, np.minimum.at: normalize writes a[...] = rt.ufunc_at_copy(name, a, i, b) --

_AT_UFUNCS = ("multiply", "maximum", "minimum")


@_facts.fresh
def ufunc_at_copy(name, a, indices, b):
    """A copy of `a` after `np.<name>.at(a, indices, b)` (name: multiply, maximum, minimum)."""
    if name not in _AT_UFUNCS:
        raise _NoGradientError(f"no gradient for np.{name}.at")
    out = np.array(a, copy=True)
    getattr(np, name).at(out, indices, b)
    return out


def _at_occurrences(a, indices, b):
    """(the flat slot of each occurrence, b at each occurrence, the shape of a[indices])."""
    a = np.asarray(a)
    ids = np.arange(a.size).reshape(a.shape)[indices if not isinstance(indices, list) else np.asarray(indices)]
    ids = np.asarray(ids)
    bv = np.broadcast_to(np.asarray(b, dtype=float), ids.shape)
    return ids.ravel(), bv.ravel(), ids.shape


def _at_weights(name, a, indices, b, y):
    """(the weight of a's entry in its slot, the weight of each occurrence of b): for multiply the
    products of the other factors, for maximum/minimum the share of a tie (1/count of the values
    equal to the result among a's entry and the occurrences at that slot)."""
    af = np.ravel(np.asarray(a, dtype=float))
    yf = np.ravel(np.asarray(y, dtype=float))
    slots, bv, shape = _at_occurrences(a, indices, b)
    if name == "multiply":
        total = np.ones(af.size)
        np.multiply.at(total, slots, bv)
        wb = np.zeros(bv.size)
        order = np.argsort(slots, kind="stable")
        for s in np.unique(slots):
            ks = order[slots[order] == s]
            vals = bv[ks]
            before = np.concatenate([[1.0], np.cumprod(vals)[:-1]])
            after = np.concatenate([np.cumprod(vals[::-1])[:-1][::-1], [1.0]])
            wb[ks] = af[s] * before * after
        return total, wb, slots, shape
    hit_b = (bv == yf[slots]).astype(float)
    count = (af == yf).astype(float)
    np.add.at(count, slots, hit_b)
    wa = np.where(count > 0, (af == yf) / np.where(count > 0, count, 1.0), 0.0)
    wb = hit_b / np.where(count[slots] > 0, count[slots], 1.0)
    return wa, wb, slots, shape


def ufunc_at_adjoint(g, name, a, indices, b, y):
    """The gradients `(a_bar, b_bar)` in `np.<name>.at(a, indices, b)` (a copy: `y`)."""
    rr = _rr()
    a = np.asarray(a)
    wa, wb, slots, shape = _at_weights(name, a, indices, b, y)
    gf = np.ravel(np.broadcast_to(np.asarray(g, dtype=float), a.shape))
    a_bar = (gf * wa).reshape(a.shape)
    b_bar = (gf[slots] * wb).reshape(shape)
    return _scalar(a_bar), _scalar(np.asarray(rr._runtime.unbroadcast(b_bar, np.asarray(b))))


def ufunc_at_tangent(a_t, b_t, name, a, indices, b, y):
    """The tangent of `np.<name>.at(a, indices, b)` (a copy: `y`)."""
    a = np.asarray(a)
    wa, wb, slots, shape = _at_weights(name, a, indices, b, y)
    ta = np.ravel(np.broadcast_to(np.asarray(_zero_or(a_t), dtype=float), a.shape))
    tb = np.ravel(np.broadcast_to(np.asarray(_zero_or(b_t), dtype=float), shape))
    out = ta * wa
    np.add.at(out, slots, wb * tb)
    return out.reshape(a.shape)


def at_slots(a, indices):
    """(the flat slot of `a` each occurrence of `np.<ufunc>.at(a, indices, b)` updates, the shape of
    `a[indices]`, which `b` is broadcast to): integers, for `ufunc_at_adjoint`'s twin."""
    slots, _, shape = _at_occurrences(a, indices, 0.0)
    return slots, shape


def at_shares(name, a, indices, b, y):
    """(the share of `a`'s entry, the share of each occurrence of `b`) in the result of
    `np.maximum.at` / `np.minimum.at` (a copy: `y`): 1 for the value taken, split among ties."""
    wa, wb, _, _ = _at_weights(name, a, indices, b, y)
    return wa, wb


__all__ += ["at_shares", "at_slots", "ufunc_at_adjoint", "ufunc_at_copy", "ufunc_at_tangent"]


# -- transposes of the adjoint helpers above (their rules make a generated gradient differentiable) ----

def where_reduce_transpose(h, name, a, where, y, axis=None, dtype=None, keepdims=False, initial=None):
    """The transpose of `where_reduce_adjoint` in its cotangent: from the pair `h` of cotangents
    of (a_bar, initial_bar) (either None), the reduction's tangent."""
    ha, hi = (None, None) if h is None else (h[0], h[1])
    return where_reduce_tangent(ha, hi, name, a, where, y, axis, dtype, keepdims, initial)


def numbers_to_array(items, like):
    """The list of numbers `items` (None for 0) as an array of the shape of `like`."""
    vals = [0.0 if v is None else float(v) for v in (items or [])]
    out = np.zeros(np.shape(like)) if not vals else np.asarray(vals).reshape(np.shape(like))
    return _scalar(out)


__all__ += ["numbers_to_array", "where_reduce_transpose"]


def choose_transpose(h, a, choices, mode, like):
    """The transpose of `choose_adjoint` in its cotangent: np.choose of the choices' cotangents
    (None for 0), in the shape of `like` (the gradient it was given)."""
    parts = [np.zeros(np.shape(c)) if p is None else np.asarray(p, dtype=float)
             for p, c in zip([None] * len(choices) if h is None else list(h), choices)]
    idx = _choose_index(a, len(choices), mode)
    return _scalar(np.array(np.broadcast_to(np.choose(idx, parts), np.shape(like)), dtype=float))


def select_transpose(h, condlist, choicelist, default, like):
    """The transpose of `select_adjoint` in its cotangent."""
    parts, hd = (None, None) if h is None else (h[0], h[1])
    parts = [None] * len(choicelist) if parts is None else list(parts)
    return select_tangent(condlist, parts, hd, like)


def put_transpose(h, a, ind, v, mode="raise"):
    """The transpose of `put_adjoint` in its cotangent: the pair's first part with the second put
    at the indices (as np.put writes them)."""
    ha, hv = (None, None) if h is None else (h[0], h[1])
    ha = np.zeros(np.shape(a)) if ha is None else np.asarray(ha, dtype=float)
    hv = np.zeros(np.shape(v)) if hv is None else np.asarray(hv, dtype=float)
    return put_copy(ha, ind, hv, mode)


def meshgrid_transpose(h, xi, indexing="xy", sparse=False):
    """The transpose of `meshgrid_adjoint` in its cotangent: each input's cotangent spread over the
    grid (None for 0)."""
    hs = [np.zeros(np.shape(x)) if p is None else np.asarray(p, dtype=float)
          for p, x in zip([None] * len(xi) if h is None else list(h), xi)]
    return tuple(np.array(v, dtype=float) for v in np.meshgrid(*[np.ravel(v) for v in hs], indexing=indexing,
                                                                  sparse=sparse))


__all__ += ["choose_transpose", "meshgrid_transpose", "put_transpose", "select_transpose"]


# -- ptp, average, delete, vander, copysign ------------------------------------------------------------

def ptp_adjoint(g, a, axis=None, keepdims=False):
    """The gradient of `a` in `np.ptp(a, axis)` = max - min (ties share, as for max and min; a
    constant slice gets 0)."""
    rr = _rr()
    hi = np.max(a, axis=axis, keepdims=keepdims)
    lo = np.min(a, axis=axis, keepdims=keepdims)
    return rr.extremum_adjoint(g, a, hi, axis, keepdims) - rr.extremum_adjoint(g, a, lo, axis, keepdims)


def ptp_tangent(t, a, axis=None, keepdims=False):
    """The tangent of `np.ptp(a, axis)`."""
    from .runtime_tangents import extremum_tangent
    hi = np.max(a, axis=axis, keepdims=keepdims)
    lo = np.min(a, axis=axis, keepdims=keepdims)
    return extremum_tangent(t, a, hi, axis, keepdims) - extremum_tangent(t, a, lo, axis, keepdims)


def _average_weights(a, axis, weights):
    a = np.asarray(a, dtype=float)
    if weights is None:
        return a, np.ones(a.shape)
    w = np.asarray(weights, dtype=float)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise TypeError("np.average: weights of another shape than `a` need an axis and one dimension")
        ax = int(axis) % a.ndim
        w = np.broadcast_to(w.reshape([-1 if k == ax else 1 for k in range(a.ndim)]), a.shape)
    return a, w


def along_axis_shape(a, axis) -> list:
    """The shape that puts a vector along `axis` of `a` (-1 there, 1 elsewhere): `np.average`'s
    one-dimensional weights."""
    ax = int(axis) % np.ndim(a)
    return [-1 if k == ax else 1 for k in range(np.ndim(a))]


def other_axes(a, axis) -> tuple:
    """The axes of `a` other than `axis`."""
    ax = int(axis) % np.ndim(a)
    return tuple(k for k in range(np.ndim(a)) if k != ax)


def average_adjoint(g, a, y, axis=None, weights=None, returned=False, keepdims=False):
    """The gradients `(a_bar, weights_bar)` in `y = np.average(a, axis, weights)`:
    y = sum(w a) / sum(w), so a_bar = g w / sum(w), w_bar = g (a - y) / sum(w). With
    `returned`, `y` is (average, sum of the weights) and `g` their pair of gradients (None for an
    unused one): the sum passes its gradient to every weight it adds."""
    rr = _rr()
    g_sum = None
    if returned:
        (g, g_sum), y = g, y[0]
    a, w = _average_weights(a, axis, weights)
    total = np.sum(w, axis=axis, keepdims=True)
    ge = np.zeros(a.shape) if g is None else \
        rr._expand(np.asarray(g, dtype=float), a, axis, keepdims) if a.ndim else np.asarray(g)
    ye = rr._expand(np.asarray(y, dtype=float), a, axis, keepdims) if a.ndim else np.asarray(y)
    a_bar = _scalar(np.asarray(ge * w / total))
    if weights is None:
        return a_bar, None
    w_full = ge * (a - ye) / total
    if g_sum is not None:  # (the sum has the average's shape: expanded as its gradient is)
        w_full = w_full + (rr._expand(np.asarray(g_sum, dtype=float), a, axis, keepdims) if a.ndim
                           else np.asarray(g_sum, dtype=float))
    wt = np.asarray(weights)
    if wt.shape != a.shape:
        ax = int(axis) % a.ndim
        w_full = np.sum(w_full, axis=tuple(k for k in range(a.ndim) if k != ax))
    return a_bar, _scalar(np.asarray(w_full))


def average_tangent(a_t, w_t, a, y, axis=None, weights=None, returned=False, keepdims=False):
    """The tangent of `y = np.average(a, axis, weights)` (with `returned`, of the pair (average,
    sum of the weights))."""
    rr = _rr()
    if returned:
        y = y[0]
    a, w = _average_weights(a, axis, weights)
    total = np.sum(w, axis=axis, keepdims=keepdims)
    ta = np.broadcast_to(np.asarray(_zero_or(a_t), dtype=float), a.shape)
    out = np.sum(w * ta, axis=axis, keepdims=keepdims) / total
    sum_t = np.zeros(np.shape(out))
    if weights is not None and w_t is not None:
        _, tw = _average_weights(a, axis, np.broadcast_to(np.asarray(w_t, dtype=float), np.shape(weights)))
        ye = rr._expand(np.asarray(y, dtype=float), a, axis, keepdims) if a.ndim else np.asarray(y)
        out = out + np.sum(tw * (a - ye), axis=axis, keepdims=keepdims) / total
        sum_t = np.broadcast_to(np.sum(tw, axis=axis, keepdims=keepdims), np.shape(out))
    if returned:
        return _scalar(np.asarray(out)), _scalar(np.array(sum_t))
    return _scalar(np.asarray(out))


@_facts.fresh
def delete_adjoint(g, arr, obj, axis=None):
    """The gradient of `arr` in `np.delete(arr, obj, axis)`: `g` back at the entries kept."""
    arr = np.asarray(arr)
    kept = np.delete(np.arange(arr.size).reshape(arr.shape), obj, axis)
    out = np.zeros(arr.size)
    out[np.ravel(kept)] = np.ravel(np.asarray(g, dtype=float))
    return _scalar(out.reshape(arr.shape))


def vander_derivative(x, N=None, increasing=False):
    """d/dx of the columns of `np.vander(x, N, increasing)`: p x^(p - 1) (0 for p = 0)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[0] if N is None else int(N)
    p = np.arange(n, dtype=float) if increasing else np.arange(n - 1, -1, -1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(p == 0, 0.0, p * x[:, None] ** np.where(p == 0, 0.0, p - 1.0))
    return d


def copysign_derivative(x1, x2):
    """d/dx1 of `np.copysign(x1, x2)` = |x1| with the sign of x2: +-1, and 0 at x1 = 0 (as abs)."""
    x1 = np.asarray(x1, dtype=float)
    flip = np.signbit(x1) ^ np.signbit(np.asarray(x2, dtype=float))
    return _scalar(np.where(x1 == 0, 0.0, np.where(flip, -1.0, 1.0)))


__all__ += ["along_axis_shape", "average_adjoint", "average_tangent", "copysign_derivative", "delete_adjoint",
            "other_axes", "ptp_adjoint", "ptp_tangent", "vander_derivative"]


def convolve_adjoint(g, a, v, mode="full"):
    """The gradients `(a_bar, v_bar)` in `np.convolve(a, v, mode)`: the cotangent put where the
    mode's output sits in the full convolution, correlated with the other operand."""
    a, v = np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(v, dtype=float))
    n, m = a.size, v.size
    k = min(n, m)
    start = {"full": 0, "same": (k - 1) // 2, "valid": k - 1}.get(mode)
    if start is None:
        raise ValueError(f"np.convolve: mode must be 'full', 'same' or 'valid', not {mode!r}")
    g = np.ravel(np.asarray(g, dtype=float))
    full = np.zeros(n + m - 1)
    full[start:start + g.size] = g
    return np.correlate(full, v, "valid"), np.correlate(full, a, "valid")


def correlate_adjoint(g, a, v, mode="valid"):
    """The gradients `(a_bar, v_bar)` in `np.correlate(a, v, mode)`, which is
    `np.convolve(a, v[::-1], mode)`, or, for a shorter `a` (NumPy swaps the operands),
    `np.convolve(v, a[::-1], mode)[::-1]`."""
    a, v = np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(v, dtype=float))
    if a.size >= v.size:
        a_bar, v_flipped_bar = convolve_adjoint(g, a, v[::-1], mode)
        return a_bar, v_flipped_bar[::-1]
    v_bar, a_flipped_bar = convolve_adjoint(np.ravel(np.asarray(g, dtype=float))[::-1], v, a[::-1], mode)
    return a_flipped_bar[::-1], v_bar


__all__ += ["convolve_adjoint", "correlate_adjoint"]


def _running_sources(a, y, axis):
    """For `y = np.maximum.accumulate(a, axis)` (or minimum), with `axis` moved first: the index
    along it of the entry each y takes its value from (where the running extremum last changed:
    a tie with the running value keeps the earlier entry), and the other axes' indices."""
    am, ym = np.moveaxis(np.asarray(a), axis, 0), np.moveaxis(np.asarray(y), axis, 0)
    n = am.shape[0]
    changed = np.ones(am.shape, dtype=bool)
    changed[1:] = ym[1:] != ym[:-1]
    position = np.arange(n).reshape((n,) + (1,) * (am.ndim - 1))
    source = np.maximum.accumulate(np.where(changed, position, 0), axis=0)
    return (source,) + tuple(np.indices(am.shape)[1:])


def accumulated_extremum_adjoint(g, a, y, axis=0):
    """The gradient of `a` in `y = np.maximum.accumulate(a, axis)` (or minimum): each entry of `y`
    passes its gradient to the entry of `a` it holds (the first of tied ones)."""
    where = _running_sources(a, y, axis)
    out = np.zeros(np.shape(where[0]))
    np.add.at(out, where, np.moveaxis(np.broadcast_to(np.asarray(g, dtype=float), np.shape(y)), axis, 0))
    return np.moveaxis(out, 0, axis)


def accumulated_extremum_tangent(t, a, y, axis=0):
    """The tangent of `y = np.maximum.accumulate(a, axis)` (or minimum): each entry's source's."""
    if t is None:
        return np.zeros(np.shape(y))
    tm = np.moveaxis(np.broadcast_to(np.asarray(t, dtype=float), np.shape(a)), axis, 0)
    return np.moveaxis(tm[_running_sources(a, y, axis)], 0, axis)


def product_items_adjoint(g, iterable, start=1):
    """The gradients of the items of `math.prod(iterable, start=start)`: each item's is `g` times
    the product of `start` and the other items (no division: zeros are fine)."""
    items = list(iterable)
    out = []
    for k in range(len(items)):
        others = start
        for j, v in enumerate(items):
            if j != k:
                others = others * v
        out.append(g * others)
    return out


def product_items_tangent(tangents, iterable, start=1):
    """The tangent of `math.prod(iterable, start=start)`: each item's tangent times the product of
    `start` and the other items, summed."""
    total = 0.0
    for t, part in zip(tangents, product_items_adjoint(1.0, iterable, start)):
        if t is not None:
            total = total + t * part
    return total


__all__ += ["accumulated_extremum_adjoint", "accumulated_extremum_tangent", "product_items_adjoint",
            "product_items_tangent"]


def _geom_fractions(y, num, endpoint, axis):
    if np.ndim(y) != 1:
        raise _NoGradientError("np.geomspace: a gradient for scalar start and stop only")
    return np.linspace(0.0, 1.0, int(num), endpoint=endpoint)


def geomspace_adjoint(g, y, start, stop, num=50, endpoint=True, axis=0):
    """The gradients `(start_bar, stop_bar)` in `y = np.geomspace(start, stop, num, endpoint)`:
    y = start (stop / start)^t, so dy/dstart = y (1 - t) / start, dy/dstop = y t / stop."""
    t = _geom_fractions(y, num, endpoint, axis)
    gy = np.asarray(g, dtype=float) * np.asarray(y, dtype=float)
    return float(np.sum(gy * (1.0 - t)) / start), float(np.sum(gy * t) / stop)


def geomspace_tangent(start_t, stop_t, y, start, stop, num=50, endpoint=True, axis=0):
    """The tangent of `y = np.geomspace(start, stop, num, endpoint)`."""
    t = _geom_fractions(y, num, endpoint, axis)
    return np.asarray(y, dtype=float) * ((1.0 - t) * (_zero_or(start_t) / start) + t * (_zero_or(stop_t) / stop))


def insert_adjoint(g, arr, obj, values, axis=None):
    """The gradients `(arr_bar, values_bar)` in `np.insert(arr, obj, values, axis)`: the entries'
    positions found by inserting their numbers the same way (values broadcast to the inserted
    slots accumulate; none when an integer `arr` truncated them)."""
    arr = np.asarray(arr)
    g = np.ravel(np.asarray(g, dtype=float))
    ids = np.arange(1.0, arr.size + 1.0).reshape(arr.shape)
    where_arr = np.ravel(np.insert(ids, obj, 0.0, axis=axis))
    arr_bar = np.zeros(arr.size)
    keep = where_arr > 0
    arr_bar[(where_arr[keep] - 1).astype(np.intp)] = g[keep]
    vals = np.asarray(values)
    values_bar = np.zeros(vals.size)
    if arr.dtype.kind == "f":
        vid = np.arange(1.0, vals.size + 1.0).reshape(vals.shape)
        where_val = np.ravel(np.insert(np.zeros(arr.shape), obj, vid, axis=axis))
        hit = where_val > 0
        values_bar = np.bincount((where_val[hit] - 1).astype(np.intp), weights=g[hit], minlength=vals.size)
    return _scalar(arr_bar.reshape(arr.shape)), _scalar(values_bar.reshape(vals.shape))


def insert_tangent(arr_t, values_t, arr, obj, values, axis=None):
    """The tangent of `np.insert(arr, obj, values, axis)` (none from values an integer `arr` truncates)."""
    arr = np.asarray(arr)
    ta = np.broadcast_to(np.asarray(_zero_or(arr_t), dtype=float), arr.shape)
    tv = np.broadcast_to(np.asarray(_zero_or(values_t), dtype=float), np.shape(values))
    if arr.dtype.kind != "f":
        tv = np.zeros(np.shape(values))
    return np.insert(ta, obj, tv, axis=axis)


__all__ += ["geomspace_adjoint", "geomspace_tangent", "insert_adjoint", "insert_tangent"]


def i0_derivative(x):
    """d/dx np.i0(x) = I1(x), the modified Bessel function of order 1: SciPy's when it is installed,
    else (1/pi) times the integral over [0, pi] of exp(x cos t) cos t, by the trapezoid rule, which
    for this periodic integrand converges geometrically (enough nodes for |x| up to i0's overflow)."""
    x = np.asarray(x, dtype=float)
    try:
        from scipy.special import i1
    except ImportError:
        n = 64 + int(np.ceil(np.max(np.abs(x), initial=0.0)))
        t = np.pi * (np.arange(n) + 0.5) / n  # (the midpoint rule: the same geometric convergence)
        with np.errstate(over="ignore"):
            d = np.mean(np.exp(x[..., None] * np.cos(t)) * np.cos(t), axis=-1)
    else:
        d = i1(x)
    return _scalar(d)


__all__ += ["i0_derivative"]


# -- np.fill_diagonal(a, val, wrap): the write a[...] = rt.diagonal_filled(a, val, wrap) -------------
@_facts.fresh
def diagonal_filled(a, val, wrap=False):
    """A copy of `a` after `np.fill_diagonal(a, val, wrap)` (its dtype kept, as NumPy does)."""
    out = np.array(a, copy=True)
    np.fill_diagonal(out, val, wrap=wrap)
    return out


def _diagonal_positions(shape, wrap) -> np.ndarray:
    """The flat positions `np.fill_diagonal` writes, in the order it writes `val`'s items."""
    mask = np.zeros(shape, dtype=bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    return np.flatnonzero(mask)


def fill_diagonal_adjoint(g, a, val, wrap=False):
    """The gradients `(a_bar, val_bar)` of `diagonal_filled(a, val, wrap)`: `g` with the diagonal
    zeroed, and the diagonal's entries summed into the items of `val` they came from (`val` is
    repeated along the diagonal)."""
    g = np.asarray(g, dtype=float)
    entries = g.ravel()[_diagonal_positions(np.shape(a), wrap)]
    size = max(np.size(val), 1)
    val_bar = np.bincount(np.arange(entries.size) % size, weights=entries, minlength=size)
    return diagonal_filled(g, 0.0, wrap), val_bar.reshape(np.shape(val)) if np.ndim(val) else float(val_bar[0])


def fill_diagonal_transpose(h, a, val, wrap=False):
    """The transpose of `fill_diagonal_adjoint` in its cotangent: the pair's first part with the second
    written along the diagonal (as np.fill_diagonal writes it)."""
    ha, hv = (None, None) if h is None else (h[0], h[1])
    ha = np.zeros(np.shape(a)) if ha is None else np.asarray(ha, dtype=float)
    hv = np.zeros(np.shape(val)) if hv is None else np.asarray(hv, dtype=float)
    return diagonal_filled(ha, hv, wrap)


__all__ += ["fill_diagonal_adjoint", "diagonal_filled", "fill_diagonal_transpose"]

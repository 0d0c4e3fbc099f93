"""Programs written the way outside users write numerical code (adversarial_flow_cases.py):
control flow, broadcasting, shapes, the numerical library, special points. Each is checked in
`grad`, `value_and_grad` and `vjp` (a random cotangent, against finite differences of
<cotangent, f>); the value against running the function. A refusal must be a located
`AdjointCompilerError` naming the cases file; a case marked `works` must not be refused."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import adversarial_flow_cases as cases  # noqa: E402

from adjoint_compiler import AdjointCompilerError, grad, value_and_grad, vjp  # noqa: E402


def _copy(a):
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, (list, tuple)):
        return type(a)(_copy(v) for v in a)
    return a


def _fd(fun, args, i, eps):
    x = args[i]
    if not isinstance(x, np.ndarray):
        def at(t):
            a = _copy(args)
            a[i] = float(x) + t
            return float(fun(*a))
        return np.float64((at(eps) - at(-eps)) / (2 * eps))
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        def at(t, j=j):
            a = _copy(args)
            a[i][j] = x[j] + t
            return float(fun(*a))
        g[j] = (at(eps) - at(-eps)) / (2 * eps)
    return g


def _close(a, b, rtol=1e-5, atol=1e-6):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    if not np.array_equal(np.isnan(a), np.isnan(b)) or not np.array_equal(np.isinf(a), np.isinf(b)):
        return False
    fin = np.isfinite(b)
    if np.any(np.isinf(b)) and not np.array_equal(a[~fin & ~np.isnan(b)], b[~fin & ~np.isnan(b)]):
        return False
    a, b = a[fin], b[fin]
    return bool(np.all(np.abs(a - b) <= rtol * np.abs(b) + atol * max(1.0, np.abs(b).max(initial=0))))


def _expected_grad(fun, args, c):
    if c.expect is not None:
        return np.asarray(c.expect(*_copy(args)), dtype=float)
    return None


_FD: dict = {}


def _grad_ok(g, fun, args, wrt, exact, scale=1.0, key=None):
    """`g` against `exact`, else against central differences of `fun` times `scale` (a scalar
    cotangent), at three step sizes; the differences are computed once per program and step."""
    if exact is not None:
        return _close(g, exact), exact
    fd = None
    for eps in (1e-6, 1e-5, 1e-7):
        if (key, eps) not in _FD:
            _FD[key, eps] = _fd(fun, args, wrt, eps)
        fd = _FD[key, eps] * scale
        if _close(g, fd):
            return True, fd
    return False, fd


def _run(c, mode):
    fun, args, wrt = c.func, c.args, c.wrt
    scale, key = 1.0, (c.name, "f")
    expected = fun(*_copy(args))
    a = _copy(args)
    before = _copy(args)
    try:
        if mode == "grad":
            g = grad(fun, wrt)(*a)
            value = None
        elif mode == "value_and_grad":
            value, g = value_and_grad(fun, wrt)(*a)
        else:
            value, pull = vjp(fun, *a)
            ct = np.random.default_rng(1).standard_normal(np.shape(value))
            ct = float(ct) if np.ndim(value) == 0 else ct
            g = pull(ct)[wrt]
            c_ct = ct
            if np.ndim(value) == 0:
                scale = ct  # <ct, f> is ct * f: the differences of f serve
            else:
                def fun_ct(*xs, plain=c.func):
                    return float(np.sum(np.asarray(plain(*xs)) * c_ct))
                fun, key = fun_ct, (c.name, "vjp")
    except AdjointCompilerError as exc:
        where = Path(cases.__file__).name
        assert f'{where}", line' in str(exc) or getattr(exc, "filename", "") == cases.__file__, \
            f"{c.name} ({mode}): refusal without a location: {exc}"
        assert not c.works, f"{c.name} ({mode}) must work, refused: {exc}"
        return "refused"
    for b, x in zip(before, a):
        if isinstance(b, np.ndarray):
            assert np.array_equal(b, x, equal_nan=True), f"{c.name} ({mode}): argument changed"
    if value is not None:
        assert _close(value, expected, 1e-9, 1e-11), f"{c.name} ({mode}): value {value!r} != {expected!r}"
    exact = _expected_grad(c.func, args, c)
    if exact is not None and mode == "vjp":
        exact = exact * c_ct  # expect is given for scalar-valued programs only
    ok, ref = _grad_ok(g, fun, args, wrt, exact, scale, key)
    assert ok, f"{c.name} ({mode}): gradient {g!r}, expected {ref!r}"
    return "right"


@pytest.mark.parametrize("c", cases.CASES, ids=lambda c: c.name)
def test_adversarial_program(c):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mode in ("value_and_grad", "grad", "vjp"):
            _run(c, mode)


def test_there_are_many_programs():
    assert len(cases.CASES) >= 150

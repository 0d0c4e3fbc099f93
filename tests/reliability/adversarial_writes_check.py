"""The checker of the adversarial write programs (adversarial_writes_cases.py): each program's
value against running it, its gradient in `grad`, `value_and_grad` and `vjp` (a random cotangent)
against central finite differences, and the caller's arrays unchanged; or a refusal, which must
be one of our errors naming a line of the program."""
from __future__ import annotations

import inspect
import re
import traceback

import numpy as np


def _copy(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(x) for x in v)
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    return v


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)


def _leaves(v):
    if isinstance(v, (list, tuple)):
        return [x for y in v for x in _leaves(y)]
    return [np.asarray(v, dtype=float)]


def _inner(out, ct) -> float:
    return float(sum(np.sum(a * b) for a, b in zip(_leaves(out), _leaves(ct))))


def _fd(scalar, args, i, eps=1e-6):
    x = args[i]
    if not isinstance(x, np.ndarray):
        def at(t):
            a = _copy(args)
            a[i] = float(x) + t
            return scalar(*a)
        return (at(eps) - at(-eps)) / (2 * eps)
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        def at(t):
            a = _copy(args)
            a[i] = a[i].astype(float) if a[i].dtype.kind != "f" else a[i]
            a[i][j] = x[j] + t
            return scalar(*a)
        g[j] = (at(eps) - at(-eps)) / (2 * eps)
    return g


def _close(a, b, rtol=1e-5, atol=1e-6) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) <= rtol * np.abs(b) + atol * max(1.0, np.abs(b).max(initial=0))))


def _fd_close(g, scalar, args, i) -> bool:
    if _close(g, _fd(scalar, args, i)):
        return True
    return any(_close(g, _fd(scalar, args, i, eps)) for eps in (1e-5, 1e-7, 1e-4, 1e-2))


def _located(exc, func) -> bool:
    """Our error, naming the file of `func` and a line inside it."""
    from adjoint_compiler import AdjointCompilerError
    if not isinstance(exc, AdjointCompilerError):
        return False
    text = "\n".join([str(exc)] + list(getattr(exc, "__notes__", [])))
    fname = inspect.getsourcefile(func).rsplit("/", 1)[-1]
    return fname in text and re.search(r"line \d+", text) is not None


MODES = ("value_and_grad", "grad", "vjp")


def check(func, args, wrt=0, seed=0, modes=MODES) -> tuple:
    """('pass', '') | ('refused', message) | ('wrong', detail) | ('crash', traceback)."""
    from adjoint_compiler import AdjointCompilerError, grad, value_and_grad, vjp

    expected = func(*_copy(args))
    before = _copy(args)
    refused = None
    rng = np.random.default_rng(seed)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    scalar_out = not isinstance(expected, (tuple, list)) and np.ndim(expected) == 0
    for mode in modes if scalar_out else ("vjp",):
        work = _copy(args)
        try:
            if mode == "value_and_grad":
                value, g = value_and_grad(func, wrt=wrt)(*work)
                gs = g if isinstance(wrt, tuple) else (g,)
                if not _close(value, expected, 1e-9, 1e-11):
                    return "wrong", f"{mode}: value {value!r}, running it gives {expected!r}"
                scalar = lambda *a: float(func(*a))  # noqa: E731
            elif mode == "grad":
                g = grad(func, wrt=wrt)(*work)
                gs = g if isinstance(wrt, tuple) else (g,)
                scalar = lambda *a: float(func(*a))  # noqa: E731
            else:
                out, pull = vjp(func, *work)
                if not all(_close(a, b, 1e-9, 1e-11) for a, b in zip(_leaves(out), _leaves(expected))) \
                        or len(_leaves(out)) != len(_leaves(expected)):
                    return "wrong", f"vjp: value {out!r}, running it gives {expected!r}"
                ct = _ct(expected, rng)
                allg = pull(ct)
                gs = tuple(allg[i] for i in wrts)
                scalar = lambda *a: _inner(func(*a), ct)  # noqa: E731
        except AdjointCompilerError as exc:
            if not _located(exc, func):
                return "crash", f"{mode}: unlocated {type(exc).__name__}: {exc}"
            refused = refused or f"{type(exc).__name__}: {exc}"
            continue
        except Exception:
            return "crash", f"{mode}: {traceback.format_exc()}"
        if not _same(work, before):
            return "wrong", f"{mode}: the caller's arguments changed: {before!r} -> {work!r}"
        for i, gi in zip(wrts, gs):
            if isinstance(args[i], np.ndarray) and np.shape(gi) != args[i].shape:
                return "wrong", f"{mode}: gradient shape {np.shape(gi)} for argument of shape {args[i].shape}"
            if not _fd_close(gi, scalar, args, i):
                return "wrong", f"{mode}: gradient {gi!r} for argument {i}, finite differences {_fd(scalar, args, i)!r}"
    if refused:
        return "refused", refused
    return "pass", ""


def _ct(out, rng):
    if isinstance(out, tuple):
        return tuple(_ct(o, rng) for o in out)
    if isinstance(out, list):
        return [_ct(o, rng) for o in out]
    if isinstance(out, np.ndarray):
        return rng.standard_normal(out.shape)
    return float(rng.standard_normal())


if __name__ == "__main__":
    import collections
    import sys

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import adversarial_writes_cases as cases

    counts: collections.Counter = collections.Counter()
    for func, args, wrt in cases.CASES:
        status, detail = check(func, list(args), wrt)
        counts[status] += 1
        if status != "pass":
            print(f"{status:8} {func.__name__}: {detail[:300]}")
    print(dict(counts), "of", len(cases.CASES))

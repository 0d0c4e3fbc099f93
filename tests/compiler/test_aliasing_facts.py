"""The aliasing allow-list checked against NumPy itself: an operation `aliasing.is_fresh` calls
fresh must never hand back memory of its operand, for any of a grid of arguments (dtypes, ranks,
the extra arguments that make NumPy return its input: `np.diff(a, n=0)`, `matrix_power(A, 1)`,
`np.float64(a)` of a float64 array, `a.conj()` of a real one, `copy=False`)."""
from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

from adjoint_compiler import aliasing, grad, ir
from adjoint_compiler.errors import MutationError
from adjoint_compiler.testing import check_grads

ARRAYS = [np.arange(6.0).reshape(2, 3), np.arange(4.0).reshape(2, 2), np.arange(3.0), np.arange(3, dtype=np.float32),
          np.arange(3), np.array([True, False]), np.arange(3.0) + 0j]
EXTRAS = [(), (0,), (1,), (2,), (0.0,), ((0, 0),), (None,)]
KEYWORDS = [{}, {"n": 0}, {"n": 1}, {"copy": False}, {"copy": True}, {"axis": 0}, {"k": 0}, {"decimals": 0}]
LOC = ir.Loc("<test>", 1, 0, "")


def _arrays_in(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _arrays_in(item)


def _numpy_functions():
    return sorted((f for f in aliasing.FRESH_FUNCTIONS | set(aliasing.SOMETIMES_FRESH)
                   if (getattr(f, "__module__", "") or "").startswith("numpy")), key=repr)


def _returned_memory(call, a) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call(a)
        except Exception:
            return False
    return any(x.size and np.shares_memory(x, a) for x in _arrays_in(out))


def _statement(prim, extra, keywords) -> ir.Assign:
    operand = ir.Var("a")
    return ir.Assign(ir.Var("r"), prim, [operand] + [ir.Const(e) for e in extra],
                     {k: ir.Const(v) for k, v in keywords.items()}, LOC)


@pytest.mark.parametrize("function", _numpy_functions(), ids=lambda f: getattr(f, "__name__", repr(f)))
def test_a_function_called_fresh_never_returns_its_operands_memory(function):
    for a in ARRAYS:
        for extra in EXTRAS:
            for keywords in KEYWORDS:
                b = a.copy()
                if _returned_memory(lambda x: function(x, *extra, **keywords), b):
                    assert not aliasing.is_fresh(_statement(function, extra, keywords)), (function, a.dtype, extra, keywords)


@pytest.mark.parametrize("method", sorted(aliasing.FRESH_METHODS))
def test_a_method_called_fresh_never_returns_its_receivers_memory(method):
    for a in ARRAYS:
        for extra in EXTRAS:
            for keywords in KEYWORDS:
                b = a.copy()
                if _returned_memory(lambda x: getattr(x, method)(*extra, **keywords), b):
                    assert not aliasing.is_fresh(_statement(ir.Method(method), extra, keywords)), (method, a.dtype, extra)


def conj_then_write(a):
    b = a.conj()
    b[0] = 5.0 * a[1]
    return np.sum(a * a)


def float64_then_write(a):
    a = np.float64(a)
    a[0] = 5.0 * a[1]
    return np.sum(a * a)


def diff_of_order_zero(a):
    d = np.diff(a, n=0)
    d[0] = 5.0 * a[1]
    return np.sum(a * a)


def power_one_read_after_write(A):
    P = np.linalg.matrix_power(A, 1)
    A[0, 0] = 2.0 * A[1, 1]
    return np.sum(P)


@pytest.mark.parametrize("f", [conj_then_write, float64_then_write, diff_of_order_zero, power_one_read_after_write])
def test_what_returns_its_operand_is_followed_or_refused_and_the_callers_array_is_kept(f):
    x = np.array([[1.0, 2.0], [3.0, 4.0]]) if f is power_one_read_after_write else np.array([0.5, -1.0, 2.0])
    kept = x.copy()
    with contextlib.suppress(MutationError):  # (refused, or it matches finite differences)
        check_grads(f, x)
    np.testing.assert_array_equal(x, kept)
    with contextlib.suppress(MutationError):
        grad(f)(x)
    np.testing.assert_array_equal(x, kept)
    if f is conj_then_write:
        np.testing.assert_allclose(grad(f)(x), [0.0, -52.0, 4.0])  # (b is a itself: a[0] = 5 a[1])

"""Statements that real code contains around its math: `assert` (checked in the forward pass, same
exception and message as Python), `raise` in a guard (raised as the primal raises it; that branch
gives no gradient), f-strings and %-formatting whose value goes to `print` or `logging`, calls of
`logging` and `warnings.warn` (run, no gradient), `with np.errstate(...)`, docstrings, type
annotations and `del` of a local.

Gradients are checked against central finite differences (`check`); what the gradient code prints,
logs, warns and raises is compared with what calling the function itself does.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

from adjoint_compiler import grad, value_and_grad
from adjoint_compiler.errors import CompileError
from statement_helpers import asserts, asserts_in_loop_and_branch, calls_asserting_helper
from test_core import check

V = np.array([0.3, -1.2, 2.0])
logger = logging.getLogger("adjoint_compiler.tests.statements")


class BadInput(ValueError):
    pass


def raised_by(f, *args):
    """(type, args) of what `f(*args)` raises."""
    with pytest.raises(Exception) as info:
        f(*args)
    return type(info.value), info.value.args


# ---------------------------------------------------------------------------------------------
# assert (the functions are in statement_helpers.py, whose asserts pytest does not rewrite)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [asserts, asserts_in_loop_and_branch, calls_asserting_helper])
def test_assert_passes_and_gradient_is_right(f):
    check(f, V)


@pytest.mark.parametrize("f, bad", [(asserts, np.ones(4)), (asserts, np.array([1.0, np.nan, 2.0])),
                                    (asserts, np.full(3, 1e7)), (asserts_in_loop_and_branch, np.ones(2)),
                                    (calls_asserting_helper, np.ones((3, 1)))])
def test_failed_assert_raises_as_python(f, bad):
    expected = raised_by(f, bad)
    assert expected[0] is AssertionError
    assert raised_by(grad(f), bad) == expected
    assert raised_by(value_and_grad(f), bad) == expected


def checks_with_numpy_testing(p):
    q = np.exp(p) / np.sum(np.exp(p))
    np.testing.assert_allclose(np.sum(q), 1.0, rtol=1e-12)
    assert type(q) is np.ndarray and callable(np.sum) and hasattr(q, "shape")
    return -np.log(q[0])


def test_numpy_testing_checks_run_and_pass_no_gradient():
    check(checks_with_numpy_testing, V)


# ---------------------------------------------------------------------------------------------
# raise in a guard
# ---------------------------------------------------------------------------------------------

def guard(x):
    if x < 0:
        raise ValueError(f"x must be non-negative, got {x}")
    return np.sqrt(x) * 3.0


def guard_with_else(x):
    if x < 0:
        raise BadInput("negative", x)
    else:
        y = np.log1p(x)  # bound only on the path that does not raise
    return y * y


def guard_negated(x):
    if x >= 0:
        y = x ** 3
    else:
        raise ValueError
    return y


def guard_in_loop(v):
    s = 0.0
    for i in range(len(v)):
        if v[i] > 10.0:
            raise OverflowError("entry %d is %.1f" % (i, v[i]))
        s = s + np.exp(v[i])
    return s


def guard_nested(x):
    if x > 0:
        if x > 100:
            raise ValueError("too large") from None
        y = x * x
    else:
        y = -x
    return y


def guard_in_helper(t):
    if t == 0:
        raise ZeroDivisionError("t is zero")
    return 1.0 / t


def calls_guarded_helper(x):
    return guard_in_helper(x) * x + guard_in_helper(x + 1.0)


@pytest.mark.parametrize("f, good, bad", [(guard, 1.3, -0.5), (guard_with_else, 0.7, -2.0), (guard_negated, 0.8, -0.1),
                                          (guard_in_loop, V, np.array([1.0, 11.0])), (guard_nested, 1.5, 200.0),
                                          (calls_guarded_helper, 1.3, 0.0)])
def test_raise_in_a_guard(f, good, bad):
    check(f, good)
    if f is guard_nested:
        check(f, -1.5)
    expected = raised_by(f, bad)
    assert raised_by(grad(f), bad) == expected


# ---------------------------------------------------------------------------------------------
# f-strings and %-formatting to print and logging; logging and warnings calls
# ---------------------------------------------------------------------------------------------

def reports(x):
    y = np.tanh(x)
    print(f"step: loss={np.sum(y):.4f} first={y[0]!r:>12} n={len(y)} {{literal}}")
    print("mean %.3f, max %s" % (np.mean(y), np.max(y)), "; ".join("%.2f" % v for v in y))
    print("{} and {:.2e}".format(y[1], x[2]), f"{x[0]:{'.3f'}}")
    logger.info(f"loss {np.sum(y):.6f}")
    logger.debug("values %s", y)
    logging.getLogger("adjoint_compiler.tests.statements").warning("x0 = %.2f", 1.0)
    if np.sum(y) > 100:
        warnings.warn(f"large loss {np.sum(y)}")
    return np.sum(y * x)


def reports_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] ** 2
        label = f"iteration {i}: s={s:.5f}"
        logger.info(label)
        print(label)
    return s


def warns(x):
    if x[0] < 1.0:
        warnings.warn(f"x[0] = {x[0]:.2f} is small", RuntimeWarning)
    return np.sum(x ** 3)


@pytest.mark.parametrize("f", [reports, reports_in_loop])
def test_prints_and_logs_what_the_primal_does(f, capsys, caplog):
    check(f, V)
    capsys.readouterr()
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        f(V)
        expected_out, expected_log = capsys.readouterr().out, [r.getMessage() for r in caplog.records]
        caplog.clear()
        grad(f)(V)
        out, log = capsys.readouterr().out, [r.getMessage() for r in caplog.records]
    assert expected_out and out == expected_out
    assert expected_log and log == expected_log


def test_warnings_warn_runs_in_the_forward_pass():
    check(warns, np.array([2.0, 1.0]))
    with pytest.warns(RuntimeWarning, match="is small"):
        g = grad(warns)(V)
    np.testing.assert_allclose(g, 3 * V ** 2)


# ---------------------------------------------------------------------------------------------
# with np.errstate(...)
# ---------------------------------------------------------------------------------------------

def errstate_ignore(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(x > 0, np.log(np.abs(x)), 0.0)
    return np.sum(y * x)


def errstate_raise(x):
    with np.errstate(divide="raise"):
        y = 1.0 / x
    return np.sum(y)


def errstate_return_inside(x):
    with np.errstate(over="ignore"):
        return np.sum(np.exp(x) * x)


def errstate_in_loop_with_break(x):
    s = 0.0
    for i in range(3):
        with np.errstate(all="ignore"):
            if s > 2.0:
                break
            s = s + x[i] ** 2
    return s


@pytest.mark.parametrize("f", [errstate_ignore, errstate_raise, errstate_return_inside, errstate_in_loop_with_break])
def test_errstate_blocks(f):
    before = np.geterr()
    check(f, V)
    assert np.geterr() == before  # left as it was, also after a `return` or `break` inside the block


def test_errstate_applies_in_the_forward_pass():
    before = np.geterr()
    x = np.array([1.0, 0.0, 2.0])
    expected = raised_by(errstate_raise, x)
    assert expected[0] is FloatingPointError
    raised = None
    try:
        grad(errstate_raise)(x)
    except FloatingPointError as exc:
        raised = type(exc)
    assert raised is FloatingPointError
    assert np.geterr() == before  # left when the exception was handled
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the forward pass of errstate_ignore warns nothing at log(0)
        value, _ = value_and_grad(errstate_ignore)(np.array([1.0, 2.0, 0.5]))
    assert value == pytest.approx(errstate_ignore(np.array([1.0, 2.0, 0.5])))


# ---------------------------------------------------------------------------------------------
# annotations, docstrings, del
# ---------------------------------------------------------------------------------------------

def annotated(x: np.ndarray, k: float = 2.0) -> float:
    """Annotated parameters, result and locals."""
    y: np.ndarray = np.sin(x) * k
    total: float
    total = float(np.sum(y))
    n: int = len(x)
    for i in range(n):
        part: float = y[i] * x[i]
        total = total + part
    return total


def deletes(x):
    tmp = x * 2
    y = np.sum(tmp ** 2)
    del tmp
    tmp = x + 1.0  # the name is free again
    s = 0.0
    for i in range(2):
        t = tmp * i
        s = s + np.sum(t)
        del t
    return y + s


@pytest.mark.parametrize("f", [annotated, deletes])
def test_annotations_docstrings_and_del(f):
    check(f, V)


def test_reading_a_deleted_name_is_a_located_error():
    def f(x):
        y = x * 2
        del y
        return y  # <-- the error's line
    with pytest.raises(CompileError) as info:
        grad(f)(1.0)
    assert "y" in str(info.value) and info.value.loc.text == "return y  # <-- the error's line"


def test_hessian_through_checks_and_reports():
    from adjoint_compiler import hessian

    def f(x):
        assert x.shape == (3,), f"shape {x.shape}"
        if np.sum(x) > 100:
            raise ValueError("too large")
        with np.errstate(divide="ignore"):
            y = np.log(np.abs(x))
        logger.debug("y = %s", y)
        return np.sum(y * x ** 2)

    g = grad(f)
    eps = 1e-6
    expected = np.array([(g(V + eps * e) - g(V - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(hessian(f)(V), expected, rtol=1e-5, atol=1e-6)

"""The text facts of the primitive records (registry.text_of): what makes text, what keeps it, what
reports it; a user's own report (`declare_text(REPORTS, f)`) takes text made from differentiated
values like `print` does, and a function with no text fact is refused it."""
from __future__ import annotations

import logging
import operator
import warnings

import numpy as np
import pytest

from adjoint_compiler import grad, ir, registry
from adjoint_compiler import runtime as rt
from adjoint_compiler.errors import RuleError, TextGradientError
from adjoint_compiler.registry import KEEPS_TEXT, MAKES_TEXT, REPORTS, declare_text, text_of


@pytest.mark.parametrize("prim", [format, str, repr, ascii, str.format, str.join, str.__mod__, str.upper,
                                  ir.Method("join"), ir.Method("strip")])
def test_what_makes_text(prim):
    assert text_of(prim) == MAKES_TEXT


@pytest.mark.parametrize("prim", [print, rt.raise_exception, warnings.warn, logging.info, logging.debug,
                                  logging.getLogger("x").info, logging.Logger.warning, ir.Method("info"),
                                  np.testing.assert_allclose])
def test_what_reports(prim):
    assert text_of(prim) == REPORTS


@pytest.mark.parametrize("prim", [operator.add, operator.mod, operator.eq, operator.getitem, len, range,
                                  ir.BUILD_LIST, ir.CONCAT, rt.sort_order])
def test_what_keeps_text(prim):
    assert text_of(prim) == KEEPS_TEXT


@pytest.mark.parametrize("prim", [float, int, complex, np.array, np.asarray, np.float64, np.sin, np.sum,
                                  ir.SETITEM, eval])
def test_what_may_not_read_text(prim):
    assert text_of(prim) is None


def test_an_unknown_text_kind_is_a_rule_error():
    with pytest.raises(RuleError):
        declare_text("shows", print)


SHOWN = []


def show_on_screen(message):
    SHOWN.append(message)


def reports_with_own_function(x):
    y = np.sin(x) * x
    show_on_screen(f"y = {y:.4f}")
    return y


def test_a_function_declared_a_report_takes_text():
    assert text_of(show_on_screen) is None
    registry.nondifferentiable(show_on_screen)
    with pytest.raises(TextGradientError, match="show_on_screen"):
        grad(reports_with_own_function)(0.7)
    declare_text(REPORTS, show_on_screen)
    g = grad(reports_with_own_function)(0.7)
    assert np.isclose(g, np.cos(0.7) * 0.7 + np.sin(0.7))
    assert SHOWN and SHOWN[-1] == f"y = {np.sin(0.7) * 0.7:.4f}"

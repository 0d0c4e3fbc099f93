"""Text made from differentiated values: reports only.

Text carries no gradient, so a number read back from text made from a differentiated value would
differentiate as a constant: `float(f"{x}") * x` is x**2, yet its gradient came out x. Such text
(an f-string, `%`, `str()`, `repr()`, `format()`, `.format()`, a join, a concatenation) may reach
`print`, `logging`, `warnings.warn`, a raised exception, an `assert` message, further string
operations and branch conditions; converting it back to a number, computing with it or returning
it is refused at compile time, naming the function, the line and the value, in every entry mode.
Text made from values that are not differentiated (constants, shapes, integer arguments) is free.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

from adjoint_compiler import grad, jvp, value_and_grad, vjp
from adjoint_compiler.errors import CompileError, TextGradientError
from adjoint_compiler.testing import check_jvp
from test_core import check

logger = logging.getLogger("adjoint_compiler.tests.text")
V = np.array([0.3, -1.2, 2.0])


# ---------------------------------------------------------------------------------------------
# refused: text made from a differentiated value turned back into a number, or returned
# ---------------------------------------------------------------------------------------------

def fstring_to_float(x):
    return float(f"{x}") * x


def percent_to_float(x):
    s = "%f" % x
    return float(s) * x


def str_to_float(x):
    return float(str(x)) * x


def repr_to_numpy(x):
    return np.float64(repr(x)) * x


def format_to_int(x):
    return int(format(x * 10.0, ".0f")) * x


def method_format_to_array(x):
    return np.sum(np.array(["{:.6f}".format(v) for v in x]).astype(float) * x)


def text_helper(y):
    return f"{y:.8f}"


def helper_text_to_float(x):
    y = x * 2.0
    return float(text_helper(y)) * x


def joined_to_float(x):
    parts = [str(v) for v in x]
    return float(", ".join(parts).split(",")[0]) * np.sum(x)


def concatenated_in_loop(x):
    s = ""
    for i in range(3):
        s = s + str(x * i)
    return float(s[:3]) * x


def branch_text_to_float(x):
    if x > 0:
        s = f"{x:.4f}"
    else:
        s = "0"
    return float(s) * x


def returns_text(x):
    return str(x * 2.0)


def returns_text_in_tuple(x):
    return x * 2.0, f"{x}"


def computes_with_text_length(x):
    return x * len(str(x))


REFUSED = [  # (function, argument, the line's text, the value named)
    (fstring_to_float, 1.5, 'float(f"{x}")', "x"),
    (percent_to_float, 1.5, "float(s)", "x"),
    (str_to_float, 1.5, "float(str(x))", "x"),
    (repr_to_numpy, 1.5, "np.float64(repr(x))", "x"),
    (format_to_int, 1.5, "int(format(", None),
    (method_format_to_array, V, "np.array(", None),
    (helper_text_to_float, 1.5, "float(text_helper(y))", None),
    (joined_to_float, V, 'float(", ".join(parts)', None),
    (concatenated_in_loop, 1.5, "float(s[:3])", None),
    (branch_text_to_float, 1.5, "float(s)", "x"),
    (computes_with_text_length, 1.5, "x * len(str(x))", "x"),
]


def _refusal(call):
    with pytest.raises(TextGradientError) as info:
        call()
    return info.value


@pytest.mark.parametrize("f, arg, line, value", REFUSED, ids=[r[0].__name__ for r in REFUSED])
@pytest.mark.parametrize("mode", ["grad", "value_and_grad", "vjp", "jvp"])
def test_text_back_to_a_number_is_refused(f, arg, line, value, mode):
    calls = {"grad": lambda: grad(f)(arg), "value_and_grad": lambda: value_and_grad(f)(arg),
             "vjp": lambda: vjp(f, arg), "jvp": lambda: jvp(f, (arg,), (np.ones_like(arg) * 1.0,))}
    err = _refusal(calls[mode])
    assert isinstance(err, CompileError) and err.loc is not None
    message = str(err)
    assert line in err.loc.text, (err.loc.text, line)
    assert f"{f.__name__} line {err.loc.line}:" in message, message
    assert "a gradient through text is not defined" in message
    assert "made from the differentiated value `" in message
    if value is not None:
        assert f"differentiated value `{value}`" in message, message
    assert err.loc.file.endswith("test_text.py")


def test_the_reported_bug_names_function_line_and_value():
    err = _refusal(lambda: grad(fstring_to_float)(1.5))
    assert str(err).startswith(f"fstring_to_float line {err.loc.line}: `float(...)` converts text made from "
                               "the differentiated value `x` back to a number; a gradient through text is not "
                               "defined")


def test_a_helper_making_the_text_is_named_where_it_is_converted():
    err = _refusal(lambda: grad(helper_text_to_float)(1.5))
    assert str(err).startswith(f"helper_text_to_float line {err.loc.line}: `float(...)` converts text")


@pytest.mark.parametrize("f", [returns_text, returns_text_in_tuple])
def test_returning_text_is_refused(f):
    err = _refusal(lambda: vjp(f, 1.5))
    assert f"`{f.__name__}` returns text made from the differentiated value `x`" in str(err)
    assert f"{f.__name__} line {err.loc.line}:" in str(err)
    _refusal(lambda: jvp(f, (1.5,), (1.0,)))


def text_to_float_in_helper(y):
    return float(f"{y}")


def calls_converting_helper(x):
    return text_to_float_in_helper(x * 3.0) * x


def test_a_conversion_inside_a_helper_names_the_helper():
    err = _refusal(lambda: grad(calls_converting_helper)(1.5))
    expected = f"text_to_float_in_helper line {err.loc.line}: `float(...)` converts"
    assert str(err).startswith(expected), str(err)


# ---------------------------------------------------------------------------------------------
# allowed: text to reports, string operations and branches; text of values not differentiated
# ---------------------------------------------------------------------------------------------

def reports_in_loop_and_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
        label = f"step {i}: s={s:.5f} " + "x=%s" % x[i] + ", ".join(str(v) for v in x[:i])
        if s > 0:
            print(label.upper(), repr(s), format(s, ".2e"), "{:.3f}".format(s))
            logger.info("positive %s", label)
        else:
            logging.getLogger("adjoint_compiler.tests.text").debug(f"negative {s!r}")
    if s > 100:
        warnings.warn(f"large {s}")
    assert np.isfinite(s), f"not finite: {s}"
    if s < -1e9:
        raise ValueError(f"diverged: {s}")
    return s * 2.0


def branches_on_text(x):
    y = np.tanh(x)
    s = f"{y:.3f}"
    if s.startswith("-") or "9" in s:
        y = y * 3.0
    n = 0
    while len(s) < 12:
        s = s + "0"
        n = n + 1
    for _ in range(len(s) % 4):
        y = y + x
    print(s, n)
    return y * x


def helper_value_and_message(y):
    z = y * y
    return z, f"z = {z:.4f}"


def helper_message_printed(x):
    z, message = helper_value_and_message(x + 1.0)
    print(message)
    return z * x


def numpy_text_reported(x):
    y = np.tanh(x) * x
    print(np.array2string(y, precision=3), np.format_float_positional(np.sum(y), precision=4))
    return np.sum(y)


def numpy_text_to_number(x):
    return float(np.format_float_scientific(np.sum(x))) * np.sum(x)


def test_numpy_text_is_text():
    err = _refusal(lambda: grad(numpy_text_to_number)(V))
    assert "`float(...)` converts text made from the differentiated value" in str(err)


def inactive_text_is_free(x, n):
    eps = float("1e-3")
    scale = float(f"{n}.5") + int(str(len(x))) + float(repr(x.shape[0]))
    return np.sum(x * scale) + eps * np.sum(x ** 2)


@pytest.mark.parametrize("f, args", [(reports_in_loop_and_branch, (V,)), (branches_on_text, (0.4,)),
                                     (branches_on_text, (-0.7,)), (helper_message_printed, (0.8,)),
                                     (numpy_text_reported, (V,)),
                                     (inactive_text_is_free, (V, 3))])
def test_reporting_text_keeps_the_gradient_right(f, args, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(f, *args)
        check_jvp(f, *args, wrt=0)
    capsys.readouterr()


def test_reports_print_what_the_function_prints(capsys):
    reports_in_loop_and_branch(V)
    expected = capsys.readouterr().out
    grad(reports_in_loop_and_branch)(V)
    assert capsys.readouterr().out == expected
    assert "STEP 0" in expected


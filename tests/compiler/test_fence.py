"""The fence: unsupported syntax and uncompilable callables fail at compile time, pointing at the
user's code.

Expected positions are computed from the source of the functions below with `inspect`, never
hard-coded: each function marks the offending line with a `# <-- HERE` comment, and the expected
column is where a given snippet starts on that line.
"""
from __future__ import annotations

import inspect
import traceback

import numpy as np
import pytest

from adjoint_compiler import (AdjointCompilerError, MissingRuleError, UnsupportedSyntaxError,
                              adjoint_source, grad, value_and_grad, vjp)

COUNTER = 0


# ---------------------------------------------------------------------------------------------
# functions with unsupported syntax; the offending line carries the marker `# <-- HERE`
# ---------------------------------------------------------------------------------------------

def uses_try(x):
    y = x * 2.0
    try:  # <-- HERE
        y = y + 1.0
    except ValueError:
        pass
    return y


def uses_with(x):  # (`with np.errstate(...)` is supported; other context managers are not)
    y = x * 2.0
    with open(__file__) as handle:  # <-- HERE
        y = y / 0.5
    return y


def uses_yield(x):
    y = x * 2.0
    yield y  # <-- HERE


def uses_global(x):
    global COUNTER  # <-- HERE
    return x * 2.0


def uses_class(x):
    y = x * 2.0
    class Inner:  # <-- HERE
        pass
    return y


async def uses_async(x):  # <-- HERE
    y = x * 2.0
    await something(y)
    return y


async def something(y):
    return y


def uses_lambda(x):  # (lambdas are supported; `*args` in them is not)
    y = x * 2.0
    z = (lambda *t: t[0] * 3.0)(y)  # <-- HERE
    return z


def uses_nested_def(x):  # (nested defs are supported; decorated ones are not)
    y = x * 2.0
    @staticmethod  # <-- HERE
    def helper(t):
        return t * 3.0
    return y


def uses_del(x):
    y = x * 2.0
    z = [y, 1.0]
    del z[0]  # <-- HERE
    return y


def uses_import(x):
    import math  # <-- HERE
    return x * math.pi


def uses_import_from(x):
    y = x * 2.0
    from math import pi  # <-- HERE
    return y * pi


def uses_walrus(x):
    if (y := x * 2.0) > 1.0:  # <-- HERE
        return y
    return x


def uses_set(x):
    y = x * 2.0
    s = {y, 1.0}  # <-- HERE
    return y


def uses_try_in_branch(x):
    if x > 0.0:
        y = x * 2.0
    else:
        y = x * 3.0
        try:  # <-- HERE
            y = y + 1.0
        finally:
            pass
    return y


def uses_del_in_branch(x):
    y = x * 2.0
    if y > 1.0:
        pass
    else:
        z = y
        if z > 0.0:
            del z.real  # <-- HERE
    return y


def uses_raise(x):  # (`raise ValueError(...)` is supported; a bare re-raise is not)
    if x < 0.0:
        raise  # <-- HERE
    return x * 2.0


def uses_starred(x, y):
    t = (x, y)
    z = np.hypot(*t)  # <-- HERE
    return z


def uses_nonlocal_outer():
    k = 1.0

    def inner(x):
        nonlocal k  # <-- HERE
        return x * k
    return inner


uses_nonlocal = uses_nonlocal_outer()


CASES = [
    # (function, snippet the caret should sit under, word the message should contain)
    (uses_try, "try", "try"),
    (uses_with, "with", "with"),
    (uses_yield, "yield", "yield"),
    (uses_global, "global", "global"),
    (uses_class, "class", "class"),
    (uses_async, "async def", "async"),
    (uses_lambda, "lambda", "lambda"),
    (uses_nested_def, "staticmethod", "nested function"),
    (uses_del, "del", "del"),  # of an item; `del name` is supported
    (uses_import, "import", "import"),
    (uses_import_from, "from math", "import"),
    (uses_walrus, "y := x", ":="),
    (uses_set, "{y, 1.0}", "set"),
    (uses_try_in_branch, "try", "try"),
    (uses_del_in_branch, "del", "del"),
    (uses_raise, "raise", "raise"),
    (uses_starred, "*t", "in a call"),
    (uses_nonlocal, "nonlocal", "nonlocal"),
]


def expected_position(func, snippet: str):
    """(filename, 1-based line, 0-based column, raw line) of `snippet` on the marked line."""
    lines, first = inspect.getsourcelines(func)
    marked = [i for i, line in enumerate(lines) if "# <-- HERE" in line]
    assert len(marked) == 1, f"{func.__name__} must mark exactly one line"
    raw = lines[marked[0]]
    return func.__code__.co_filename, first + marked[0], raw.index(snippet), raw.rstrip("\n")


@pytest.mark.parametrize("func, snippet, word", CASES, ids=[c[0].__name__ for c in CASES])
def test_unsupported_syntax_is_located(func, snippet, word):
    filename, line, col, raw = expected_position(func, snippet)
    g = grad(func)  # creating the gradient does not compile it
    with pytest.raises(UnsupportedSyntaxError) as info:
        g(*([1.0] * len(inspect.signature(func).parameters)))
    err = info.value
    assert isinstance(err, SyntaxError)
    assert isinstance(err, AdjointCompilerError)
    assert err.filename == filename
    assert err.lineno == line, f"line {err.lineno}, expected {line}: {raw.strip()}"
    assert err.offset == col + 1, f"column {err.offset}, expected {col + 1} (under {snippet!r})"
    assert err.text.rstrip("\n") == raw
    assert word.lower() in err.msg.lower(), err.msg


@pytest.mark.parametrize("func, snippet, word", CASES[:4], ids=[c[0].__name__ for c in CASES[:4]])
def test_unsupported_syntax_prints_a_caret(func, snippet, word):
    filename, line, col, raw = expected_position(func, snippet)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(func)(1.0)
    text = "".join(traceback.format_exception_only(type(info.value), info.value))
    assert f'File "{filename}", line {line}' in text
    assert raw.strip() in text
    caret_line = [ln for ln in text.splitlines() if ln.strip().startswith("^")]
    assert caret_line, text
    # the caret sits under the snippet on the printed (dedented) source line
    printed = [ln for ln in text.splitlines() if raw.strip() in ln][0]
    assert caret_line[0].index("^") == printed.index(raw.strip()) + (col - (len(raw) - len(raw.lstrip())))


@pytest.mark.parametrize("entry", ["value_and_grad", "vjp", "adjoint_source"])
def test_every_entry_point_fences(entry):
    filename, line, _, _ = expected_position(uses_try, "try")
    with pytest.raises(UnsupportedSyntaxError) as info:
        if entry == "value_and_grad":
            value_and_grad(uses_try)(1.0)
        elif entry == "vjp":
            vjp(uses_try, 1.0)
        else:
            adjoint_source(uses_try)
    assert info.value.lineno == line and info.value.filename == filename


def test_fence_error_is_raised_again_on_the_next_call():
    g = grad(uses_del)
    for _ in range(2):
        with pytest.raises(UnsupportedSyntaxError):
            g(1.0)


# ---------------------------------------------------------------------------------------------
# callables the compiler cannot read
# ---------------------------------------------------------------------------------------------

def test_grad_of_lambda_without_source():
    ns = {}
    exec("f = lambda x: x * 2.0", ns)  # a lambda whose source cannot be read
    f = ns["f"]
    with pytest.raises(AdjointCompilerError, match="lambda"):
        grad(f)(1.0)
    with pytest.raises(AdjointCompilerError, match="lambda"):
        vjp(f, 1.0)
    with pytest.raises(AdjointCompilerError, match="lambda"):
        adjoint_source(f)


@pytest.mark.parametrize("builtin, arg", [(np.sin, 1.0), (np.exp, np.ones(2)), (len, [1.0, 2.0]),
                                          (abs, -1.0)])
def test_grad_of_builtin(builtin, arg):
    with pytest.raises(AdjointCompilerError) as info:
        grad(builtin)(arg)
    msg = str(info.value)
    assert "source" in msg or "not a Python function" in msg, msg


@pytest.mark.parametrize("builtin", [np.sin, len])
def test_adjoint_source_of_builtin(builtin):
    with pytest.raises(AdjointCompilerError):
        adjoint_source(builtin)


def test_grad_of_exec_defined_function():
    ns = {"np": np}
    exec("def made(x):\n    return np.sin(x) * 2.0\n", ns)
    made = ns["made"]
    assert made(0.0) == 0.0
    with pytest.raises(AdjointCompilerError) as info:
        grad(made)(1.0)
    msg = str(info.value)
    assert "made" in msg and "source" in msg, msg


def test_grad_of_non_callable():
    with pytest.raises(TypeError):
        grad(3.0)(1.0)


# ---------------------------------------------------------------------------------------------
# calls with no rule
# ---------------------------------------------------------------------------------------------

def calls_frexp(x):
    y = np.sin(x)
    m, e = np.frexp(y)  # <-- HERE
    return np.sum(m * 2.0)


def calls_frexp_in_branch(x):
    y = x * 2.0
    if np.sum(y) > 0:
        z = y + 1.0
    else:
        z = np.frexp(y)[0]  # <-- HERE
    return np.sum(z)


def calls_byteswap(x):
    y = x * 2.0
    z = y.byteswap()  # <-- HERE
    return np.sum(z)


@pytest.mark.parametrize("func, callee", [(calls_frexp, "np.frexp"),
                                          (calls_frexp_in_branch, "np.frexp"),
                                          (calls_byteswap, "byteswap")])
def test_missing_rule(func, callee):
    filename, line, _, raw = expected_position(func, "=")
    g = grad(func)
    with pytest.raises(MissingRuleError) as info:
        g(np.ones(3))
    err = info.value
    msg = str(err)
    assert callee in msg, msg
    assert f'File "{filename}", line {line}' in msg, msg
    assert raw.strip() in msg, msg
    assert "@adjoint(" in msg, msg
    assert isinstance(err, AdjointCompilerError)


def test_missing_rule_even_when_branch_not_taken():
    # compile time, not run time: the rule is missing whichever branch the data takes
    with pytest.raises(MissingRuleError):
        grad(calls_frexp_in_branch)(np.ones(3))
    with pytest.raises(MissingRuleError):
        grad(calls_frexp_in_branch)(-np.ones(3))

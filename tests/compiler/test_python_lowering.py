"""normalize's lowering of the Python around the NumPy, on its printed output (`--stage normalize`):
nested functions kept for ssa, iterators as loops, checks and reports as runtime calls in `if`s."""
import itertools
from functools import reduce

import numpy as np

from adjoint_compiler.pipeline import compile_gradient


def normalized(f, n=1) -> str:
    return compile_gradient(f, (0,), ("num",) * n, "grad", stage="normalize")


def checks(x):
    assert x.shape == (3,), f"shape {x.shape}"
    if np.sum(x) > 10:
        raise ValueError("too large")
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(y)


def test_assert_raise_and_errstate_are_runtime_calls_in_ifs():
    text = normalized(checks)
    assert "rt.raise_exception(AssertionError, format_" in text
    assert "str.format('shape {}', " in text
    assert "rt.raise_exception(ValueError, 'too large')" in text
    assert "errstate = rt.set_errstate(divide='ignore')" in text
    assert text.index("rt.set_errstate") < text.index("np.log(x)") < text.index("rt.restore_errstate(errstate)")


def functions(p, x):
    g = lambda t: p * t  # noqa: E731

    def h(t, k=2.0):
        return t * k
    return g(x) + h(x)


def test_nested_functions_stay_for_ssa_to_inline():
    text = normalized(functions, 2)
    assert "g = lambda t: p * t" in text and "def h(t, k=2.0):" in text
    assert "g_x = g(x)" in text and "h_x = h(x)" in text


def iterators(x):
    s = 0.0
    for i, v in zip(itertools.count(1), map(np.sin, x)):
        s = s + i * v
    return s + reduce(lambda a, b: a * b, x) + sum(sorted(x, key=abs)[:1])


def test_iterators_are_loops_by_position():
    text = normalized(iterators)
    assert "itertools.count" not in text and "map(" not in text and "reduce(lambda" not in text
    assert "rt.sort_order(" in text
    assert "np.sin(x_" in text  # map's function is called on each item, in the loop


def starred(w):
    first, *rest = (*w, w[0])
    return np.sum(first * sum(rest))


def test_starred_displays_concatenate_and_starred_targets_slice_a_list():
    text = normalized(starred)
    assert "tuple_w = tuple(w)" in text and "tup = (w_0,)" in text
    assert "tuple_w_plus_tup = tuple_w + tup" in text
    assert "unpacked = list(tuple_w_plus_tup)" in text
    assert "rt.raise_exception(ValueError, 'not enough values to unpack (expected at least 1)')" in text
    assert "rest = unpacked[1:]" in text and "first = unpacked[0]" in text


def _pair(x):
    return x * 2.0, x + 1.0


def unpacked(x):
    a, b = _pair(x)  # (a tuple display, seen through the helper: its length is known)
    c, d = x         # (an array: its length is known at run time)
    return np.sum(a * b) + c * d


def test_unpacking_checks_the_length_at_run_time_unless_it_is_known():
    assert "rt.check_unpack(x, 2)" in normalized(unpacked)
    ssa = compile_gradient(unpacked, (0,), ("r1",), "grad", stage="ssa")
    assert ssa.count("rt.check_unpack(") == 1 and "rt.check_unpack(x, 2)" in ssa

"""Python's own reporting and ordering functions: they pass no gradient.

Strings carry no gradient, so the functions that make them from numbers (`format`, `str`, `repr`,
`'...'.format(x)`, which f-strings become) and the calls that only report (`print`, `logging`,
`warnings`) are declared here, each with its part in text (MAKES_TEXT, KEEPS_TEXT, REPORTS): text
made from a differentiated value may reach only reports, never a number (see `activity.check_text`).
So are the runtime helpers normalize lowers `raise`, `assert`, `sorted(key=)`, `min/max(key=)` and
`with np.errstate` to, whose results are exceptions, positions or state, and the checks a function
makes of its values (`type(x)`, `np.testing.assert_allclose(...)`).
"""
import logging
import operator
import warnings

import numpy as np

from adjoint_compiler import ir
from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import KEEPS_TEXT, MAKES_TEXT, REPORTS, declare_text, nondifferentiable
from adjoint_compiler.ssa import CONTAINS, NOT_CONTAINS

# Text from values. `str`'s own methods: normalize calls them as `str.join(', ', xs)`,
# `str.__mod__('%.3f', x)`; on a text value they are methods (`s.upper()`, `sep.join(parts)`).
_STR_METHODS = [name for name in dir(str) if not name.startswith("_")]
nondifferentiable(format, str, repr, ascii, str.__mod__, *(getattr(str, name) for name in _STR_METHODS),
                  text=MAKES_TEXT)
declare_text(MAKES_TEXT, *_STR_METHODS)
# NumPy's text of arrays and numbers (`print(np.array2string(x, precision=3))`)
nondifferentiable(np.array2string, np.array_str, np.array_repr, np.format_float_positional,
                  np.format_float_scientific, text=MAKES_TEXT)
# Given text, these give text (`"a" + s`, `s * 2`, `"%s" % s`, lists of it, an item of it) or a
# question about it (`s == "1.5"`, `len(s)`, `len(s) % 3`, `range(len(s))`), which is text again:
# it may steer a branch, a loop or an index, but is no number to compute with. (Pure operations
# only: what they give stays text, so a use that computes with it is still refused.)
declare_text(KEEPS_TEXT, operator.add, operator.mul, operator.mod, operator.sub, operator.truediv,
             operator.floordiv, operator.pow, operator.neg, operator.pos, operator.and_, operator.or_,
             operator.xor, operator.invert, operator.lshift, operator.rshift, operator.getitem, operator.eq,
             operator.ne, operator.lt, operator.le, operator.gt, operator.ge, operator.is_, operator.is_not,
             operator.not_, CONTAINS, NOT_CONTAINS, ir.BUILD_LIST, ir.BUILD_TUPLE, ir.CONCAT, ir.REPEAT, ir.PLUS, ir.TIMES, len,
             range, slice, bool, isinstance, list, tuple, abs, min, max, divmod, pow)

# Reports: they show text (and values) and return nothing to compute with; an exception raised
# (`raise E(msg)`, a failed `assert x, msg`) is a report too.
nondifferentiable(print, rt.raise_exception, rt.check_unpack, rt.check_list, rt.check_slice_assign, warnings.warn, logging.debug, logging.info, logging.warning,
                  logging.error, logging.critical, logging.exception, logging.log, text=REPORTS)
nondifferentiable(*(getattr(cls, name) for cls in (logging.Logger, logging.LoggerAdapter)
                    for name in ("debug", "info", "warning", "error", "critical", "exception", "log")),
                  text=REPORTS)
# a logger's methods on a logger held in a variable (`logging.getLogger(__name__).info(msg)`); what
# such a method returns, given text, is text again, so another object's `.info()` cannot turn it
# into a number unseen
declare_text(REPORTS, "debug", "info", "warning", "error", "critical", "exception", "log")
# positions of a sort or of an extreme: given text (`sorted(names)`), a question about it again
nondifferentiable(rt.sort_order, rt.extreme_index, text=KEEPS_TEXT)
nondifferentiable(rt.combinatoric_positions)  # (positions: integers)
nondifferentiable(rt.set_errstate, rt.restore_errstate)

# Checks and questions about a value (their results are None, booleans, types or ids).
nondifferentiable(type, callable, id, hasattr, text=KEEPS_TEXT)
nondifferentiable(*(getattr(np.testing, name) for name in (
    "assert_", "assert_allclose", "assert_almost_equal", "assert_approx_equal", "assert_array_almost_equal",
    "assert_array_equal", "assert_array_less", "assert_equal")), text=REPORTS)

"""Python's own reporting and ordering functions: they pass no gradient.

Strings carry no gradient, so the functions that make them from numbers (`format`, `str`, `repr`,
`'...'.format(x)`, which f-strings become) and the calls that only report (`logging`, `warnings`)
are declared here; so are the runtime helpers normalize lowers `raise`, `assert`, `sorted(key=)`,
`min/max(key=)` and `with np.errstate` to, whose results are exceptions, positions or state, and
the checks a function makes of its values (`type(x)`, `np.testing.assert_allclose(...)`).
"""
import logging
import warnings

import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import nondifferentiable

nondifferentiable(format, str, repr, ascii)
# `str`'s own methods (normalize calls them as `str.join(', ', xs)`, `str.__mod__('%.3f', x)`)
nondifferentiable(str.__mod__, *(getattr(str, name) for name in dir(str) if not name.startswith("_")))
nondifferentiable(rt.raise_exception, rt.sort_order, rt.extreme_index, rt.set_errstate, rt.restore_errstate)
nondifferentiable(warnings.warn, logging.debug, logging.info, logging.warning, logging.error, logging.critical,
                  logging.exception, logging.log)
nondifferentiable(*(getattr(cls, name) for cls in (logging.Logger, logging.LoggerAdapter)
                    for name in ("debug", "info", "warning", "error", "critical", "exception", "log")))

# Checks and questions about a value (their results are None, booleans, types or ids).
nondifferentiable(type, callable, id, hasattr)
nondifferentiable(*(getattr(np.testing, name) for name in (
    "assert_", "assert_allclose", "assert_almost_equal", "assert_approx_equal", "assert_array_almost_equal",
    "assert_array_equal", "assert_array_less", "assert_equal")))

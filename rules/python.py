"""Python's own reporting and ordering functions: they pass no gradient.

Strings carry no gradient, so the functions that make them from numbers (`format`, `str`, `repr`,
`'...'.format(x)`, which f-strings become) and the calls that only report (`logging`, `warnings`)
are declared here; so are the runtime helpers normalize lowers `raise`, `assert`, `sorted(key=)`,
`min/max(key=)` and `with np.errstate` to, whose results are exceptions, positions or state.
"""
import logging
import warnings

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import nondifferentiable

nondifferentiable(format, str, repr, ascii, "format")
nondifferentiable(rt.raise_exception, rt.sort_order, rt.extreme_index, rt.set_errstate, rt.restore_errstate)
nondifferentiable(warnings.warn, logging.debug, logging.info, logging.warning, logging.error, logging.critical,
                  logging.exception, logging.log)
nondifferentiable(*(getattr(cls, name) for cls in (logging.Logger, logging.LoggerAdapter)
                    for name in ("debug", "info", "warning", "error", "critical", "exception", "log")))

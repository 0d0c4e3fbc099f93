"""Functions that pass no gradient: predicates, integer-valued and shape queries."""
import numpy as np

from adjoint_compiler.registry import nondifferentiable
from adjoint_compiler.ssa import CONTAINS, NOT_CONTAINS

nondifferentiable(CONTAINS, NOT_CONTAINS, len, int, bool, range, isinstance, print, np.shape,
                  np.ndim, np.size, np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc, np.argmax,
                  np.argmin, np.argsort, np.isnan, np.isinf, np.isfinite, np.zeros, np.ones,
                  np.zeros_like, np.ones_like, np.empty, np.arange, np.linspace, np.eye,
                  np.identity, np.full, np.logical_and, np.logical_or, np.logical_not, np.equal,
                  np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, np.any, np.all,
                  np.nonzero, np.count_nonzero, np.floor_divide)

"""Functions that pass no gradient: predicates, integer-valued and shape queries.

An entry belongs here only if its output is constant or piecewise constant (integer- or
boolean-valued) in every argument that could carry a gradient: `np.zeros(shape)` but not
`np.full(shape, s)`, `np.floor(x)` but not `np.linspace(a, b)`. Constructors from values
(`full`, `full_like`, `linspace`, `arange`) have rules in shape.py.
"""
import math

import numpy as np

from adjoint_compiler.ir import Attr
from adjoint_compiler.registry import nondifferentiable
from adjoint_compiler.ssa import CONTAINS, NOT_CONTAINS

nondifferentiable(CONTAINS, NOT_CONTAINS, slice, len, int, bool, range, isinstance, np.shape,
                  np.ndim, np.size, np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc, np.argmax,
                  np.argmin, np.argsort, np.isnan, np.isinf, np.isfinite, np.zeros, np.ones,
                  np.zeros_like, np.ones_like, np.empty, np.eye,
                  np.identity, np.logical_and, np.logical_or, np.logical_not, np.equal,
                  np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, np.any, np.all,
                  np.nonzero, np.count_nonzero, np.floor_divide)

# Builtins and `math`: rounding, predicates and integer functions.
nondifferentiable(round, math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
                  math.isclose, math.factorial, math.gcd, math.comb, math.perm)

# More NumPy: rounding, predicates, indices and constructors.
nondifferentiable(np.around, np.fix, np.signbit, np.isclose, np.allclose, np.array_equal,
                  np.empty_like, np.argwhere, np.flatnonzero, np.searchsorted,
                  np.digitize, np.logical_xor, np.tri, np.diag_indices, np.tril_indices,
                  np.triu_indices)

# ndarray methods and attributes that are indices, predicates or metadata.
nondifferentiable("argmax", "argmin", "argsort", "nonzero", "all", "any")
nondifferentiable(Attr("shape"), Attr("ndim"), Attr("size"), Attr("dtype"), Attr("itemsize"),
                  Attr("nbytes"), Attr("flags"))

"""adjoint_compiler: source-transformation reverse-mode AD for Python + NumPy."""
from .buffer import Buffer, copyto
from .api import adjoint_source, differentiable, grad, value_and_grad, vjp
from .errors import (AdjointCompilerError, MissingRuleError, MutationError, RuleError,
                     UnsupportedSyntaxError)
from .frontend import SourceError
from .registry import adjoint, nondifferentiable

__version__ = "0.1.0"
__all__ = ["Buffer", "copyto", "grad", "value_and_grad", "vjp", "differentiable", "adjoint_source", "adjoint",
           "nondifferentiable", "AdjointCompilerError", "UnsupportedSyntaxError", "MissingRuleError",
           "MutationError", "RuleError", "SourceError"]

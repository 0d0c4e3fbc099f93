"""adjoint_compiler: source-transformation reverse-mode AD for Python + NumPy."""
from .api import adjoint_source, differentiable, grad, value_and_grad, vjp
from .buffer import Buffer, copyto
from .errors import (AdjointCompilerError, ArgumentError, MissingRuleError, MutationError, RuleError,
                     UnsupportedSyntaxError)
from .frontend import SourceError
from .jacobians import jacobian, jacrev
from .nesting import hessian, hvp
from .registry import adjoint, nondifferentiable

__version__ = "0.1.0"
__all__ = [
                     "AdjointCompilerError",
                     "ArgumentError",
                     "Buffer",
                     "MissingRuleError",
                     "MutationError",
                     "RuleError",
                     "SourceError",
                     "UnsupportedSyntaxError",
                     "adjoint",
                     "adjoint_source",
                     "copyto",
                     "differentiable",
                     "grad",
                     "hessian",
                     "hvp",
                     "jacobian",
                     "jacrev",
                     "nondifferentiable",
                     "value_and_grad",
                     "vjp",
]

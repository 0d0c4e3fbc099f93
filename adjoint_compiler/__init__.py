"""adjoint_compiler: source-transformation reverse-mode AD for Python + NumPy."""
from .api import adjoint_source, differentiable, grad, value_and_grad, vjp
from .buffer import Buffer, copyto
from .errors import (AdjointCompilerError, ArgumentError, MissingRuleError, MutationError, RuleError,
                     UnsupportedSyntaxError)
from .forward_api import jacfwd, jvp, jvp_source
from .frontend import SourceError
from .jacobians import jacobian, jacrev
from .nesting import hessian, hvp
from .registry import adjoint, nondifferentiable, tangent

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
                     "jacfwd",
                     "jacobian",
                     "jacrev",
                     "jvp",
                     "jvp_source",
                     "nondifferentiable",
                     "tangent",
                     "value_and_grad",
                     "vjp",
]

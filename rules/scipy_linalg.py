"""scipy.linalg, registered when a program has imported it (registry.OPTIONAL_MODULES):
solve_triangular, cho_factor / cho_solve, expm. Like their NumPy counterparts, the factor's
gradient goes to the triangle each function reads; stacks of matrices work where SciPy batches."""
from scipy import linalg

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS
from adjoint_compiler.registry import adjoint, tangent

# results that share no memory with the arguments (the ufuncs' are known already)
FRESH_FUNCTIONS.update({linalg.solve_triangular, linalg.cho_factor, linalg.cho_solve, linalg.expm})


@adjoint(linalg.solve_triangular)
def solve_triangular(x, a, b, trans=0, lower=False, unit_diagonal=False, check_finite=True):
    parts = rt.solve_triangular_adjoint(x_bar, a, b, x, trans, lower, unit_diagonal)
    a_bar += parts[0]
    b_bar += parts[1]


@tangent(linalg.solve_triangular)
def solve_triangular_dot(x, a, b, trans=0, lower=False, unit_diagonal=False, check_finite=True):
    x_dot = rt.solve_triangular_tangent(a_dot, b_dot, a, b, x, trans, lower, unit_diagonal)


@adjoint(linalg.cho_factor)
def cho_factor(y, a, lower=False, check_finite=True):
    a_bar += rt.cho_factor_adjoint(y_bar, a, y)


@tangent(linalg.cho_factor)
def cho_factor_dot(y, a, lower=False, check_finite=True):
    y_dot = rt.cho_factor_tangent(a_dot, a, y)


@adjoint(linalg.cho_solve)
def cho_solve(x, c_and_lower, b, check_finite=True):
    parts = rt.cho_solve_adjoint(x_bar, c_and_lower, b, x)
    c_and_lower_bar += parts[0]
    b_bar += parts[1]


@tangent(linalg.cho_solve)
def cho_solve_dot(x, c_and_lower, b, check_finite=True):
    x_dot = rt.cho_solve_tangent(c_and_lower_dot, b_dot, c_and_lower, b, x)


@adjoint(linalg.expm)
def expm(y, A):
    A_bar += rt.expm_adjoint(y_bar, A)


@tangent(linalg.expm)
def expm_dot(y, A):
    y_dot = rt.expm_tangent(A_dot, A)

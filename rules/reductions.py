"""Rules: reductions."""
import numpy as np

from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, alias


@adjoint(np.sum)
def sum(y, a, axis=None, keepdims=False):
    a_bar += rt.expand_reduced(y_bar, a, axis, keepdims)


alias("sum", np.sum)

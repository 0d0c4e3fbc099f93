"""scipy.signal, registered when a program has imported it (registry.OPTIONAL_MODULES):
`convolve(in1, in2, mode, method)` of N-d arrays, and `correlate` as its twin (for real arrays,
`correlate(a, b, mode)` is `convolve(a, flip(b), mode)`).

Every mode is the centred block of the full convolution (scipy's `_centered`, which starts at
(full - out) // 2 along each axis; 'valid' with an `in2` larger in every dimension, which SciPy
swaps, is the same block). So with g_full the cotangent put back at that block of zeros:

    in1_bar = convolve(g_full, flip(in2), 'valid')      in2_bar = convolve(g_full, flip(in1), 'valid')

and the tangent is convolve(in1_dot, in2, mode) + convolve(in1, in2_dot, mode). Complex arrays
are refused (no complex rule).
"""
import numpy as np
from scipy import signal

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS
from adjoint_compiler.registry import adjoint, differentiate_as, nondifferentiable, tangent

FRESH_FUNCTIONS.update({signal.convolve, signal.correlate})


@adjoint(signal.convolve)
def convolve(y, in1, in2, mode="full", method="auto"):
    g = rt.uncentered(y_bar, rt.convolution_shape(in1, in2))
    in1_bar += signal.convolve(g, np.flip(in2), "valid", method)
    in2_bar += signal.convolve(g, np.flip(in1), "valid", method)


@tangent(signal.convolve)
def convolve_dot(y, in1, in2, mode="full", method="auto"):
    y_dot = signal.convolve(in1_dot, in2, mode, method) + signal.convolve(in1, in2_dot, mode, method)


@differentiate_as(signal.correlate)
def correlate(in1, in2, mode="full", method="auto"):
    return signal.convolve(in1, np.flip(in2), mode, method)


# the helpers the rule puts in generated code (linear maps, each the other's adjoint)
nondifferentiable(rt.convolution_shape)


@adjoint(rt.uncentered)
def uncentered(y, a, shape):
    a_bar += rt.centered(y_bar, np.shape(a))


@tangent(rt.uncentered)
def uncentered_dot(y, a, shape):
    y_dot = rt.uncentered(a_dot, shape)


@adjoint(rt.centered)
def centered(y, a, shape):
    a_bar += rt.uncentered(y_bar, np.shape(a))


@tangent(rt.centered)
def centered_dot(y, a, shape):
    y_dot = rt.centered(a_dot, shape)

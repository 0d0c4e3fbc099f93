"""Helper functions living in another module, called from functions under test in test_calls.py.

The module deliberately defines globals (`SCALE`, `OFFSETS`, `poly`) with the same names as
globals in test_calls.py but different values: a call into this module must read these.
"""
import numpy
import numpy as np

SCALE = 3.0
OFFSETS = np.array([0.5, -1.0, 2.0])


def poly(x):
    return x * x * SCALE + x


def softplus_sum(x):
    return np.sum(np.log1p(np.exp(x)))


def scaled(x, k=2.0, *, power=2):
    return k * x ** power


def shifted(x):
    # reads a module-level constant array of this module
    return x + OFFSETS


def chain(x):
    # a helper calling another helper of this module
    return poly(np.sin(x)) * 0.5


def iterate(x, w, n):
    # a helper with a loop inside
    for i in range(n):
        x = numpy.tanh(x * w) + x * 0.1
    return x


def accumulate(xs):
    total = 0.0
    for v in xs:
        total = total + v * v
    return total

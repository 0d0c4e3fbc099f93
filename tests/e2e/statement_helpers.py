"""Functions with `assert` statements, in a module pytest does not rewrite: the messages of their
failed asserts are plain Python's, to compare with what the gradient code raises."""
import numpy as np


def asserts(x):
    """A docstring is fine."""
    assert x.shape == (3,), f"expected 3 values, got shape {x.shape}"
    assert np.all(np.isfinite(x))
    y = np.sin(x) * x
    assert np.sum(y) < 1e6, "too large: %g" % np.sum(y)
    return np.sum(y)


def asserts_in_loop_and_branch(x):
    s = 0.0
    for i in range(3):
        assert i < len(x), f"index {i} out of range"
        if x[i] > 0:
            assert x[i] > 0.0
            s = s + x[i] ** 2
        else:
            s = s - x[i]
    return s


def asserts_in_helper(v):
    assert v.ndim == 1, "a vector"
    return np.sum(v * v)


def calls_asserting_helper(x):
    return asserts_in_helper(x) + asserts_in_helper(2 * x)

"""NumPy functions differentiated as their twins (rules/numpy_twins.py): gradients and tangents
against central finite differences, with NaNs in the arrays (they are skipped, and their entries
get no gradient), over axes, keepdims and ddof; an unsupported keyword is refused at the call."""
import numpy as np
import pytest

from adjoint_compiler import grad
from adjoint_compiler.errors import CompileError
from adjoint_compiler.testing import check_grads, check_jvp

rng = np.random.default_rng(7)
A = rng.normal(size=(3, 4))
A[0, 1] = A[2, 3] = np.nan
V = np.array([0.4, np.nan, -1.1, 0.7])
R = rng.normal(size=4)


def nanvar_all(a):
    return np.nanvar(a)


def nanvar_rows_ddof(a):
    return np.sum(np.nanvar(a, axis=1, ddof=1) * R[:3])


def nanvar_cols_keepdims(a):
    return np.sum(np.nanvar(a, axis=0, keepdims=True) * R)


def nanstd_rows(a):
    return np.sum(np.nanstd(a, axis=-1) ** 3)


def nanstd_vector(a):
    return np.nanstd(a, ddof=1)


def nanprod_cols(a):
    return np.sum(np.nanprod(a, axis=0) * R)


def nanprod_keepdims(a):
    return np.sum(np.sin(np.nanprod(a, axis=1, keepdims=True)))


@pytest.mark.parametrize("f, x", [(nanvar_all, A), (nanvar_rows_ddof, A), (nanvar_cols_keepdims, A),
                                  (nanstd_rows, A), (nanstd_vector, V), (nanprod_cols, A),
                                  (nanprod_keepdims, A), (nanvar_all, V)])
def test_twins_match_finite_differences(f, x):
    g = check_grads(f, x)
    assert np.all(g[np.isnan(x)] == 0.0)  # a skipped entry passes nothing
    check_jvp(f, x)


def test_the_values_are_numpys():
    for f in (nanvar_all, nanvar_rows_ddof, nanstd_rows, nanprod_cols):
        from adjoint_compiler import value_and_grad
        value, _ = value_and_grad(f)(A)
        assert value == pytest.approx(f(A), rel=1e-12)


def test_a_keyword_the_twin_does_not_take_is_refused_at_the_call():
    def with_dtype(a):
        return np.nanvar(a, dtype=np.float32)
    with pytest.raises(CompileError, match=r"in the call to `np.nanvar`: .*'dtype'") as info:
        grad(with_dtype)(A)
    assert info.value.loc.file.endswith("test_numpy_twins.py")

"""rt.chain (the product of a cotangent and a local derivative, exactly 0 where the cotangent
is 0): its shortcuts for a cotangent that is one number give what the general path gives."""
import numpy as np
import pytest

from adjoint_compiler import runtime as rt

D = np.array([np.inf, -np.inf, np.nan, 2.0, 0.0])
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered")


def test_a_zero_broadcast_cotangent_contributes_exact_zeros():
    out = rt.chain(np.broadcast_to(0.0, D.shape), D)
    np.testing.assert_array_equal(out, np.zeros(5))
    np.testing.assert_array_equal(rt.chain(0.0, D), np.zeros(5))


def test_a_nonzero_broadcast_cotangent_keeps_the_derivatives_own_values():
    g = np.broadcast_to(0.5, D.shape)
    np.testing.assert_array_equal(rt.chain(g, D), 0.5 * D)
    np.testing.assert_array_equal(rt.chain(2.0, D), 2.0 * D)


def test_a_cotangent_zero_in_some_entries_is_checked_entry_by_entry():
    g = np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(rt.chain(g, D), [0.0, -np.inf, 0.0, 2.0, 0.0])


def test_an_empty_broadcast_cotangent():
    assert rt.chain(np.broadcast_to(1.0, (0,)), np.zeros(0)).shape == (0,)

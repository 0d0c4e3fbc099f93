"""The pipeline's own machinery: the fixpoint helper every loop analysis uses."""
from __future__ import annotations

import pytest

from adjoint_compiler.errors import AdjointCompilerError, InternalError
from adjoint_compiler.fixpoint import fixpoint


def test_fixpoint_returns_the_first_state_the_step_keeps():
    calls = []

    def step(n):
        calls.append(n)
        return min(n + 1, 5)

    assert fixpoint(step, 0, limit=10) == 5
    assert calls == [0, 1, 2, 3, 4, 5]  # the last call confirms the fixed point


def test_fixpoint_raises_when_the_step_does_not_converge():
    with pytest.raises(InternalError, match="counting did not converge within 3 rounds"):
        fixpoint(lambda n: n + 1, 0, limit=3, what="counting")
    assert issubclass(InternalError, AdjointCompilerError)


def test_fixpoint_needs_a_round_to_confirm():
    # converging on the limit-th call is fine; one call short is not
    assert fixpoint(lambda n: min(n + 1, 2), 0, limit=3) == 2
    with pytest.raises(InternalError):
        fixpoint(lambda n: min(n + 1, 2), 0, limit=2)

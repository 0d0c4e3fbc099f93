"""One loop for every iterative analysis: run a step until its state stops changing.

Loop analyses (what is varied or useful around a loop, shape classes, what a carried value may
share, which adjoints are live or owned, which values the tape restores) all iterate to a fixed
point. They do it here, so that each states a bound on the number of rounds and none silently
settles for a state that is still changing (an unconverged analysis is a wrong gradient):

    count = fixpoint(lambda n: grow(varied) or len(varied), len(varied), limit=len(universe) + 2,
                     what="activity around a loop")

`step(state)` returns the next state; the fixed point is reached when it returns a state equal to
the one it was given. Exceeding `limit` rounds raises `InternalError`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .errors import InternalError

State = TypeVar("State")


def fixpoint(step: Callable[[State], State], state: State, limit: int, what: str = "an analysis") -> State:
    """The first state `s` with `step(s) == s`, starting from `state`, found within `limit` calls
    of `step`; `InternalError` if there is none."""
    for _ in range(max(limit, 1)):
        new = step(state)
        if new == state:
            return new
        state = new
    raise InternalError(f"{what} did not converge within {limit} rounds (a compiler bug; please report it "
                        "with the function being differentiated)")

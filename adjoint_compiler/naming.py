"""Deterministic, readable names for SSA versions, temporaries and adjoints.

The first version of `x` is `x`, later ones `x_2`, `x_3`; a temporary is named after what it
computes (`x_times_w`, `sin_x`); the adjoint of `v` is `v_bar`. Names never depend on ids or hashes,
so dumps are identical across processes.
"""
from __future__ import annotations

import builtins
import re

MAX_NAME = 20
# Names generated code reads for itself: its imports and the builtins. A user's variable of one of
# these names is printed under a fresh name (`rt` -> `rt_2`), so it never shadows what the code reads.
GENERATED_READS = frozenset({"np", "rt"} | set(dir(builtins)))


def sanitize(text: str) -> str:
    text = re.sub(r"\W+", "_", text).strip("_")
    if text and text[0].isdigit():
        text = "v" + text
    return text


class Namer:
    """Hands out names not used before; `reserved` names (the user's, `np`, `rt`) are never produced."""

    def __init__(self, reserved=()):
        self.used: set[str] = set(reserved)

    def reserve(self, name: str) -> None:
        self.used.add(name)

    def fresh(self, base: str, shorten: bool = True) -> str:
        base = sanitize(base) or "t"
        if shorten and len(base) > MAX_NAME:
            base = base[:MAX_NAME].rstrip("_")
        name, n = base, 2
        while name in self.used:
            name, n = f"{base}_{n}", n + 1
        self.used.add(name)
        return name

    def adjoint(self, name: str) -> str:
        return self.fresh(name + "_bar", shorten=False)

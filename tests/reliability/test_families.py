"""Every family generator (families.py, fam_*.py) on a few fixed seeds: 0 wrong, 0 crashes.

The long run is `python tools/fuzz_long.py --families --n 20000`."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import families  # noqa: E402

GENERATORS = sorted(families.load_all())
SEEDS = range(2)  # (the long run: tools/fuzz_long.py --families)
EVERY_MODE = 1  # the first seeds go through every entry point (entry_modes.MODES), the rest value_and_grad


@pytest.mark.parametrize("name", GENERATORS)
def test_family_generator(name):
    failures = []
    for seed in SEEDS:
        case = families.generate(name, seed)
        result = families.check_case(case, modes=families.entry.MODES if seed < EVERY_MODE else ("joint",))
        if not result.ok:
            failures.append(f"seed {seed}: {result.status}: {result.detail}\n{case.source}")
    assert not failures, f"{name}: {len(failures)} of {len(SEEDS)} failed; the first:\n" + failures[0]


def test_some_generators_exist():
    assert len(GENERATORS) >= 1

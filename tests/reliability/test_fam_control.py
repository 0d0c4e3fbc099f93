"""A few seeds of each control-flow and storage family generator (fam_control.py), checked in
value_and_grad, grad and vjp against finite differences (or a located refusal where allowed)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fam_control
import families

NAMES = sorted(name for name, (_, gen) in families.FAMILIES.items() if gen.__module__ == "fam_control")


def test_the_generators_are_registered():
    assert {families.FAMILIES[n][0] for n in NAMES} >= {"dead_loops", "zero_trip", "list_slots", "zero_d",
                                                          "iterators", "complex"}


@pytest.mark.parametrize("name", NAMES)
def test_family_generator(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(3):
            case = families.generate(name, seed)
            result = fam_control.check_modes(case)
            assert result.ok, f"{name} seed {seed}: {result.status}: {result.detail}\n{case.source}"
            if families.FAMILIES[name][0] == "complex" and "lookalike" not in name:
                # differentiated under the complex convention, or refused outside the allow-list
                assert result.status == "pass" or (result.status == "refused" and "complex" in result.detail), \
                    (seed, result, case.source)

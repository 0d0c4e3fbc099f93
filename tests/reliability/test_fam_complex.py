"""The complex family generators (fam_complex.py) on fixed seeds: programs mixing complex and real
operations give the gradient of finite differences (with respect to a real and to a complex
argument, in every entry point for the first seeds) or a located refusal; those with an operation
outside the allow-list on a complex value are always refused, at their line."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fam_complex  # noqa: F401
import families

SEEDS = range(30)


@pytest.mark.parametrize("chunk", range(3))
def test_mixed_programs_match_finite_differences(chunk):
    failures, passed = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        for seed in SEEDS[chunk::3]:
            case = families.generate("complex.mixed", seed)
            result = families.check_case(case, modes=families.entry.MODES if seed < 3 else ("joint",))
            if not result.ok:
                failures.append(f"seed {seed}: {result.status}: {result.detail}\n{case.source}")
            passed += result.status == "pass"
    assert not failures, f"{len(failures)} failed; the first:\n" + failures[0]
    assert passed >= len(SEEDS[chunk::3]) * 0.8  # (refusals allowed, but these are all allow-listed)


def test_gradients_with_respect_to_the_complex_argument():
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        for seed in range(12):
            case = families.generate("complex.complex_wrt", seed)
            result = families.check_case(case, modes=families.entry.MODES if seed < 3 else ("joint",))
            if result.status != "pass":
                failures.append(f"seed {seed}: {result.status}: {result.detail}\n{case.source}")
    assert not failures, f"{len(failures)} failed; the first:\n" + failures[0]


def test_programs_outside_the_allow_list_are_refused_at_their_line():
    for seed in range(20):
        case = families.generate("complex.outside", seed)
        result = families.check_case(case, modes=("joint", "grad", "vjp"))
        if result.status == "generator_error":  # (NumPy itself refuses it: np.clip of complex values)
            continue
        assert result.status == "refused", (seed, result, case.source)
        assert "Complex" in result.detail and "line" in result.detail, (seed, result.detail)

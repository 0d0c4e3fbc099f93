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


# -- forward mode (jvp): the same programs, along real and complex directions -------------------------

def _forward_of(case: families.Case):
    import fuzzgen
    mod = fuzzgen.load(families.HEADER + case.source, "famcomplex")
    return mod, getattr(mod, case.fname)


@pytest.mark.parametrize("family,seeds", [("complex.mixed", range(12)), ("complex.complex_wrt", range(8))])
def test_jvp_of_the_programs_matches_finite_differences(family, seeds):
    import fuzzgen

    from adjoint_compiler.errors import ComplexError
    from adjoint_compiler.testing import check_jvp
    failures, passed = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        for seed in seeds:
            case = families.generate(family, seed)
            mod, f = _forward_of(case)
            try:
                check_jvp(f, *case.args, directions=1, seed=seed)
                passed += 1
            except ComplexError as exc:  # (a located refusal is allowed; reverse mode's test counts them)
                if exc.loc is None:
                    failures.append(f"seed {seed}: unlocated refusal {exc}\n{case.source}")
            except Exception as exc:  # noqa: BLE001
                failures.append(f"seed {seed}: {type(exc).__name__}: {exc}\n{case.source}")
            finally:
                fuzzgen.unload(mod)
    assert not failures, f"{len(failures)} failed; the first:\n" + failures[0]
    assert passed >= len(seeds) * 0.7


def test_jvp_of_programs_outside_the_allow_list_is_refused_at_their_line():
    import fuzzgen

    from adjoint_compiler import jvp
    from adjoint_compiler.errors import ComplexError
    for seed in range(10):
        case = families.generate("complex.outside", seed)
        mod, f = _forward_of(case)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    f(*case.args)
                except Exception:  # noqa: BLE001, S112 (NumPy itself refuses it: np.clip of complex values)
                    continue
                with pytest.raises(ComplexError) as info:
                    jvp(f, tuple(case.args), tuple(np.ones_like(a) for a in case.args))
            assert info.value.loc is not None, (seed, case.source)
        finally:
            fuzzgen.unload(mod)

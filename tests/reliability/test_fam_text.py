"""The text family (fam_text.py): text made from differentiated values that only reaches reports
gives the right gradient (every entry point, and `jvp`); text converted back to a number or
returned is refused with the located TextGradientError (every entry point, and `jvp`)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import families  # noqa: E402
import fam_text  # noqa: E402, F401  (registers the generators)
import fuzzgen  # noqa: E402

from adjoint_compiler import jvp  # noqa: E402
from adjoint_compiler.errors import TextGradientError  # noqa: E402
from adjoint_compiler.testing import check_jvp  # noqa: E402

SEEDS = range(6)


def _jvp_of(case: families.Case):
    """(the module, its `f`) loaded as check_case loads it; unload the module after use."""
    mod = fuzzgen.load(families.HEADER + case.source, "famtext")
    return mod, getattr(mod, case.fname)


@pytest.mark.parametrize("seed", SEEDS)
def test_reports_pass_in_every_mode(seed, capsys):
    case = families.generate("text.reports", seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = families.check_case(case, modes=families.entry.MODES if seed < 3 else ("joint", "grad"))
        assert result.status == "pass", f"{result.status}: {result.detail}\n{case.source}"
        mod, f = _jvp_of(case)
        try:
            check_jvp(f, *case.args)
        finally:
            fuzzgen.unload(mod)
    capsys.readouterr()


@pytest.mark.parametrize("seed", SEEDS)
def test_conversions_are_refused_in_every_mode(seed, capsys):
    case = families.generate("text.converts", seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        modes = families.entry.MODES if seed < 3 else ("joint", "grad", "vjp")
        result = families.check_case(case, modes=modes)
    assert result.status == "refused", f"{result.status}: {result.detail}\n{case.source}"
    assert "a gradient through text is not defined" in result.detail, result.detail
    assert "f line " in result.detail or "describe line " in result.detail or "step line " in result.detail
    mod, f = _jvp_of(case)
    try:
        with pytest.raises(TextGradientError) as info:
            jvp(f, tuple(case.args), tuple(np.ones_like(a) for a in case.args))
        assert info.value.loc is not None
    finally:
        fuzzgen.unload(mod)
    capsys.readouterr()

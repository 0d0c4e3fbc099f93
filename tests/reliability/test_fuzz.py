"""Differential fuzzing: random well-conditioned programs (fuzzgen.py), their compiled gradients
against central finite differences and their compiled primal values against running them directly.

Two quick runs are part of the suite (< 60 s together; the first 20 seeded programs through every
entry point, entry_modes.py):
- a hypothesis-driven one (derandomized; a failure is reported minimized by statement deletion), and
- a fixed-seed loop over the same generator driven by `random.Random` (reproducible by seed:
  `python tools/fuzz_long.py --start SEED --n 1`).
The long run is tools/fuzz_long.py; its last result is recorded in tools/FUZZ_RESULTS.md.
"""
from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import fuzzgen  # noqa: E402


def _explain(prog, out):
    """The failure, with the program minimized by statement deletion (hypothesis' own shrinking is
    off: at ~70 ms a program it takes minutes)."""
    small = fuzzgen.minimize(prog, out.status, budget=120)
    return fuzzgen.report(small, fuzzgen.check_program(small)) + "\n(unminimized)\n" + fuzzgen.report(prog, out)


@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_fuzz_hypothesis(data):
    prog = fuzzgen.generate(fuzzgen.HypothesisChooser(data))
    out = fuzzgen.check_program(prog, modes=("joint",))
    assert out.status != "generator_error", fuzzgen.report(prog, out)
    assert out.ok, _explain(prog, out)


SEEDS = range(30)  # (tools/fuzz_long.py runs thousands; the suite keeps a sample)
EVERY_MODE = 6  # the first seeds go through every entry point (entry_modes.MODES), the rest value_and_grad


def test_fuzz_seeded():
    failures = []
    for seed in SEEDS:
        prog = fuzzgen.generate(fuzzgen.RandomChooser(seed))
        out = fuzzgen.check_program(prog, modes=None if seed < EVERY_MODE else ("joint",))
        if not out.ok:
            failures.append((seed, prog, out))
    assert not failures, f"{len(failures)} of {len(SEEDS)} programs failed (seeds " \
        f"{[s for s, _, _ in failures]}); the first, minimized:\n\n" + _explain(*failures[0][1:])


def test_generator_is_deterministic():
    a = fuzzgen.generate(fuzzgen.RandomChooser(7))
    b = fuzzgen.generate(fuzzgen.RandomChooser(7))
    assert a.source == b.source and a.arg_seed == b.arg_seed


def test_generated_programs_run():
    """The generator stays inside valid NumPy (a generator bug would hide compiler bugs)."""
    import numpy as np
    for seed in range(300):
        prog = fuzzgen.generate(fuzzgen.RandomChooser(10_000 + seed))
        mod = fuzzgen.load(prog.source)
        try:
            value = mod.f(*fuzzgen.make_args(prog))
        finally:
            fuzzgen.unload(mod)
        assert np.ndim(value) == 0 and np.isfinite(value), prog.source

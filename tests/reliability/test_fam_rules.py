"""A few programs of each rule-table family generator (fam_rules.py) on every run; the long
campaign is `python tools/fuzz_long.py --families`."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import fam_rules  # noqa: E402,F401  (registers its generators)
import families  # noqa: E402

NAMES = sorted(n for n, (_, gen) in families.FAMILIES.items() if gen.__module__ == "fam_rules")


def test_generators_registered():
    assert len(NAMES) >= 12, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_family(name):
    for seed in range(4):
        case = families.generate(name, seed)
        result = families.check_case(case)
        assert result.status == "pass", f"{name} seed {seed}: {result.status}\n{result.detail}\n{case.source}"

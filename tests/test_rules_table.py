"""The README's table of supported functions is the one tools/rules_table.py generates from the
registry: adding a rule (or a tangent rule) without regenerating it fails here."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_readme_rules_table_is_up_to_date():
    pytest.importorskip("scipy")  # the table lists the SciPy rules too
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "rules_table.py"), "--check"],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr + "\n(run `python tools/rules_table.py` and commit README.md)"


def test_the_table_lists_by_family_with_both_modes():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import rules_table
    finally:
        sys.path.pop(0)
    text = rules_table.render()
    assert text.startswith(rules_table.BEGIN) and text.endswith(rules_table.END)
    row = next(line for line in text.splitlines() if "rules/reductions.py" in line)
    assert "`np.sum`" in row.split("|")[2]  # adjoint and tangent
    nondiff = next(line for line in text.splitlines() if "rules/nondiff.py" in line)
    assert "`np.argmax`" in nondiff.split("|")[4]


def test_every_builtin_rule_reads_and_fits_its_primitive():
    """Built-in templates are read at their first use (`template.Deferred`): this reads every one,
    with the SciPy rule modules, and checks each as a user's rule is checked at registration."""
    pytest.importorskip("scipy")
    import scipy.linalg  # noqa: F401
    import scipy.signal  # noqa: F401
    import scipy.special  # noqa: F401
    import scipy.stats  # noqa: F401

    from adjoint_compiler import registry
    registry.load_builtin_rules()
    registry.load_optional()
    assert registry.check_builtin_rules() > 800


def test_a_deferred_rule_is_checked_when_first_read():
    from adjoint_compiler import RuleError
    from adjoint_compiler.template import Deferred, parse_template

    def bad(y, x):
        z_bar += y_bar  # noqa: F821

    rule = Deferred(parse_template, bad, "bad", "adjoint")
    assert rule.name == "bad" and rule.kind == "adjoint"  # (known without reading the template)
    with pytest.raises(RuleError, match="z_bar"):
        rule.params

"""The README's thirty-second example runs as written."""
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(tmp_path):
    text = README.read_text()
    snippet = re.search(r"## Thirty seconds\n\n```python\n(.*?)```", text, re.S).group(1)
    script = tmp_path / "readme_example.py"
    script.write_text(snippet)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "def loss_grad" in result.stdout


def test_readme_commands_match_ci():
    ci = (README.parent / ".ci" / "run").read_text()
    assert "pip install -q -e '.[test]'" in ci and "python -m pytest" in ci
    assert "pip install -e '.[test]' && python -m pytest -q -n auto" in README.read_text()

"""`python -m adjoint_compiler show FILE.py:FUNC` reads FUNC without running the file's top-level
code: only the imports, definitions and assignments FUNC reads (transitively) run. When a name FUNC
reads is set by some other statement, the file is imported and a note on stderr says why."""
import subprocess
import sys
import textwrap

import pytest

from adjoint_compiler import adjoint_source

SCRIPT = textwrap.dedent('''
    """A training script: its top level must not run for `show`."""
    from __future__ import annotations

    import numpy as np

    LR = 0.1
    X = np.linspace(0.0, 1.0, 5)
    CFG = {"scale": 2.0}


    def helper(w):
        return np.sin(w) * CFG["scale"]


    def loss(w: np.ndarray, x=X) -> float:
        return np.sum(helper(w) * x)


    def reads_weights(v):
        return np.sum(v * w)


    w = np.ones(5)
    for step in range(3):
        print("training step", step)
        w = w - LR * w
    open("TRAINED", "w").write("the top level ran")

    if __name__ == "__main__":
        print("main")
''')


def show(*args, cwd):
    return subprocess.run([sys.executable, "-m", "adjoint_compiler", "show", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=60)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train_script.py"
    path.write_text(SCRIPT)
    return path


def test_show_does_not_run_the_training_loop(script, tmp_path, monkeypatch):
    result = show(f"{script}:loss", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "training step" not in result.stdout + result.stderr
    assert not (tmp_path / "TRAINED").exists()
    assert "def loss_grad" in result.stdout and "# L17: return np.sum(helper(w) * x)" in result.stdout
    assert "note: ran line 8 of" in result.stderr  # X = np.linspace(...) computed something
    sys.path.insert(0, str(tmp_path))
    monkeypatch.chdir(tmp_path)  # (importing it here runs its top level, which writes a file)
    try:
        import train_script  # (importing it here runs the loop, in this process: compare the code)
        assert result.stdout.strip() == adjoint_source(train_script.loss).strip()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("train_script", None)


def test_show_imports_the_file_when_the_function_reads_what_the_top_level_computes(script, tmp_path):
    result = show(f"{script}:reads_weights", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: importing" in result.stderr and "`w`" in result.stderr and "line 25" in result.stderr
    assert "training step" in result.stderr and "training step" not in result.stdout  # its prints go to stderr
    assert "def reads_weights_grad" in result.stdout


def test_show_of_a_function_that_is_not_a_def(tmp_path):
    path = tmp_path / "made.py"
    path.write_text("import numpy as np\nf = lambda x: np.sum(x * x)\n")
    result = show(f"{path}:f", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: importing" in result.stderr and "def lambda_grad" in result.stdout

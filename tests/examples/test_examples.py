"""Run every script in examples/ as a user would and check its key output lines."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name, tmp_path):
    path = EXAMPLES / name
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, f"{name} exited with {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def table_rows(out, n_cols):
    """Rows of whitespace-separated numbers with exactly n_cols columns."""
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == n_cols:
            try:
                rows.append([float(p) for p in parts])
            except ValueError:
                pass
    return rows


def test_quickstart(tmp_path):
    out = run_example("quickstart.py", tmp_path)
    err = float(re.search(r"max \|error\| = (\S+)", out).group(1))
    assert err < 1e-6
    assert "generated adjoint of f" in out
    assert "def " in out and "# L" in out  # the generated source, with its line comments


def test_logistic_regression_scipy(tmp_path):
    out = run_example("logistic_regression_scipy.py", tmp_path)
    ad = re.search(r"compiled adjoint\s+(\d+)\s+(\d+)\s+(\S+)", out)
    fd = re.search(r"finite differences\s+(\d+)\s+(\d+)\s+(\S+)", out)
    assert ad and fd, out
    assert int(ad.group(2)) < int(fd.group(2))  # fewer function evaluations with the gradient
    assert abs(float(ad.group(3)) - float(fd.group(3))) < 1e-6


def test_ode_sensitivities(tmp_path):
    out = run_example("ode_sensitivities.py", tmp_path)
    worst = float(re.search(r"worst relative error: (\S+)", out).group(1))
    assert worst < 1e-5
    assert "dL/dalpha" in out and "dL/dpred0" in out


def test_heat_inverse(tmp_path):
    out = run_example("heat_inverse.py", tmp_path)
    assert "recover u0 from u(T)" in out
    # optimizer history: "iter  loss(1.234e-05)  relative error"
    history = re.findall(r"^\s*(\d+)\s+(\d\.\d+e[-+]\d+)\s+(\d\.\d+)\s*$", out, re.M)
    assert len(history) >= 3, out
    first_loss, final_loss = float(history[0][1]), float(history[-1][1])
    assert final_loss < 1e-3 * first_loss
    assert float(history[-1][2]) < 0.1  # recovered u0 within 10% of the truth


def test_mlp_training(tmp_path):
    out = run_example("mlp_training.py", tmp_path)
    rows = table_rows(out, 3)  # epoch, loss, accuracy
    assert len(rows) >= 2
    assert rows[-1][1] < 0.5 * rows[0][1]
    assert rows[-1][2] >= 0.9


def test_stiff_ode(tmp_path):
    pytest.importorskip("scipy", reason="the example uses scipy.integrate.solve_ivp")
    out = run_example("stiff_ode.py", tmp_path)
    assert float(re.search(r"hand-written Jacobian\| = (\S+)", out).group(1)) < 1e-9
    exact = re.search(r"exact Jacobian\s+(\d+)\s+(\d+)\s+(\d+)", out)
    fd = re.search(r"finite differences\s+(\d+)\s+(\d+)\s+(\d+)", out)
    assert exact and fd, out
    assert int(exact.group(1)) < int(fd.group(1))  # the Jacobian costs no right-hand-side calls
    assert float(re.search(r"max \|difference\| = (\S+)", out).group(1)) < 1e-8


def test_newton_fit(tmp_path):
    pytest.importorskip("scipy", reason="the example uses scipy.optimize.minimize")
    out = run_example("newton_fit.py", tmp_path)
    assert float(re.search(r"hand-written H v\|\s+= (\S+)", out).group(1)) < 1e-12
    assert float(re.search(r"hand-written H\|\s+= (\S+)", out).group(1)) < 1e-12
    exact = re.search(r"Newton-CG, exact H v\s+(\d+)\s+(\d+)\s+(\d+)", out)
    diff = re.search(r"Newton-CG, H v by differences\s+(\d+)\s+(\d+)\s+(\d+)", out)
    bfgs = re.search(r"BFGS \(gradient only\)\s+(\d+)\s+(\d+)", out)
    assert int(exact.group(2)) < int(diff.group(2))  # no gradients spent on differences
    assert int(exact.group(1)) < int(bfgs.group(1))
    assert float(re.search(r"max \|loss - best\| over methods = (\S+)", out).group(1)) < 1e-8


def test_gaussian_process(tmp_path):
    pytest.importorskip("scipy", reason="the example needs scipy (an optional test extra)")
    out = run_example("gaussian_process.py", tmp_path)
    number = r"(\S+)"
    pattern = r"\s+(\d+)\s+(\d+)\s+" + r"\s+".join([number] * 5)
    exact = re.search(r"exact gradient" + pattern, out)
    fd = re.search(r"finite differences" + pattern, out)
    assert exact and fd, out
    assert int(exact.group(2)) < int(fd.group(2))  # fewer function evaluations with the exact gradient
    assert abs(float(exact.group(3)) - float(fd.group(3))) < 1e-5  # the same optimum
    lengthscale, variance, noise = (float(exact.group(i)) for i in (4, 5, 6))
    assert 0.3 < lengthscale < 3.0 and 0.1 < variance < 3.0 and 0.003 < noise < 0.03  # data noise 0.1 ** 2
    assert "checked against finite differences" in out


def test_class_model(tmp_path):
    out = run_example("class_model.py", tmp_path)
    assert "gradient type: Params with fields W1, b1, W2, b2" in out
    assert "gradient matches finite differences" in out
    losses = [row[1] for row in table_rows(out, 2)]
    assert len(losses) >= 5 and all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.1 * losses[0]

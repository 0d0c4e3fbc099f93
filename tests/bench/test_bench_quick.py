"""Smoke test of the benchmark harness (benchmarks/bench.py --quick): tiny instances, no timing
assertions. It checks that every workload runs (or is skipped with a reason), that every
hand-written gradient passes its finite-difference check, and that no compiled gradient that
compiles disagrees with the hand-written one."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("adjoint_compiler_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _names():
    sys.path.insert(0, str(BENCH.parent))
    import workloads
    return [w.name for w in workloads.WORKLOADS]


@pytest.mark.parametrize("name", _names())
def test_workload_runs_and_agrees(bench, name):
    """Each workload (one test each, so the run spreads over the workers): it runs or is skipped
    with a reason, its hand-written gradient passes the finite-difference check, and the compiled
    gradient agrees with it."""
    (r,) = bench.run(quick=True, only=[name], rounds=1, frameworks=False)
    assert r["status"] in ("ok", "skipped"), r.get("traceback") or r.get("reason")
    if r["status"] == "skipped":
        assert r["reason"]
    assert "times" in r and r["times"]["hand"] > 0 and r["times"]["primal"] > 0
    assert r["hand_fd"], r["fail"]
    assert not r["fail"], r["fail"]


@pytest.fixture(scope="module")
def results(bench):
    return bench.run(quick=True, only=["logreg", "heat_1d"], rounds=1, frameworks=False)


def test_report_renders(bench, results):
    env = bench.environment()
    assert any(k == "numpy" for k, _ in env)
    text = bench.report(results, env, markdown=True, size="quick", rounds=2)
    assert "| workload |" in text
    for r in results:
        assert f"| {r['name']} |" in text
    assert "compiled/hand" in bench.report(results, env, markdown=False, size="quick", rounds=2)


def test_cli_list(bench, capsys):
    assert bench.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "logreg" in out and "mlp" in out

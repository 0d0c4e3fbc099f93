"""The pipeline's own machinery: the fixpoint helper every loop analysis uses, and passes that ask
runtime helpers for their facts instead of naming them."""
from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from adjoint_compiler.errors import AdjointCompilerError, InternalError
from adjoint_compiler.fixpoint import fixpoint

PACKAGE = Path(__file__).resolve().parents[2] / "adjoint_compiler"


def test_fixpoint_returns_the_first_state_the_step_keeps():
    calls = []

    def step(n):
        calls.append(n)
        return min(n + 1, 5)

    assert fixpoint(step, 0, limit=10) == 5
    assert calls == [0, 1, 2, 3, 4, 5]  # the last call confirms the fixed point


def test_fixpoint_raises_when_the_step_does_not_converge():
    with pytest.raises(InternalError, match="counting did not converge within 3 rounds"):
        fixpoint(lambda n: n + 1, 0, limit=3, what="counting")
    assert issubclass(InternalError, AdjointCompilerError)


def test_fixpoint_needs_a_round_to_confirm():
    # converging on the limit-th call is fine; one call short is not
    assert fixpoint(lambda n: min(n + 1, 2), 0, limit=3) == 2
    with pytest.raises(InternalError):
        fixpoint(lambda n: min(n + 1, 2), 0, limit=2)


# ---------------------------------------------------------------------------------------------
# No pass names a runtime helper in a string: passes ask the helper objects (runtime_facts)
# ---------------------------------------------------------------------------------------------

PASS_MODULES = ("simplify", "copies", "tape", "release", "codegen", "template", "reverse", "pipeline",
                "printing", "backward", "rtcall")


def _helper_names() -> set:
    from adjoint_compiler import runtime
    return {name for name, value in vars(runtime).items()
            if inspect.isfunction(value) and not name.startswith("_")
            and value.__module__.startswith("adjoint_compiler.")}


def _strings(tree) -> list:
    """(line, text, whether inside an f-string) of the string constants of a module, docstrings
    left out."""
    docstrings, formatted = set(), set()
    for node in ast.walk(tree):
        for stmt in getattr(node, "body", []) if isinstance(getattr(node, "body", None), list) else []:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                docstrings.add(id(stmt.value))
        if isinstance(node, ast.JoinedStr):
            formatted |= {id(n) for n in ast.walk(node)}
    return [(n.lineno, n.value, id(n) in formatted) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def named_helpers(source: str, helpers: set) -> list:
    """The string constants of `source` that name one of `helpers`: `"zero_slots"` (a name alone,
    outside f-strings, whose words are text), or `rt.seed` in any string."""
    found = []
    for line, text, in_fstring in _strings(ast.parse(source)):
        words = ({text} if not in_fstring else set()) | set(re.findall(r"\brt\.(\w+)", text))
        hit = sorted(words & helpers)
        if hit:
            found.append(f"line {line}: {text!r} names rt.{hit[0]}")
    return found


def test_no_pass_names_a_runtime_helper_in_a_string():
    helpers = _helper_names()
    assert {"zero_slots", "written_total", "shape_of", "through_dtype", "seed"} <= helpers
    problems = []
    for module in PASS_MODULES:
        source = (PACKAGE / f"{module}.py").read_text()
        problems += [f"{module}.py {p}" for p in named_helpers(source, helpers)]
    assert not problems, "\n".join(problems)


def test_the_name_check_finds_names():
    helpers = _helper_names()
    assert named_helpers('x = "zero_slots"\n', helpers)
    assert named_helpers('x = f"{a} = rt.seed({b})"\n', helpers)
    assert named_helpers('if attr in {"through_dtype"}: pass\n', helpers)
    assert not named_helpers('"""Docstrings may say rt.zero_slots."""\nx = "rt"\n', helpers)
    assert not named_helpers('x = f"the {\'vjp\' if split else \'gradient\'}"\n', helpers)  # words of text

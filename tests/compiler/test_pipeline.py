"""The pipeline's own machinery: the declared passes and the text each prints (`stage=NAME`), the
fixpoint helper every loop analysis uses, and passes that ask runtime helpers for their facts
instead of naming them."""
from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

from adjoint_compiler import Buffer, pipeline
from adjoint_compiler.errors import AdjointCompilerError, InternalError
from adjoint_compiler.fixpoint import fixpoint
from adjoint_compiler.pipeline import PASSES, STAGES, Pass, compile_gradient

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
                "printing", "backward", "rtcall", "floats", "slots", "sink", "plain", "peek")


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
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
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


# ---------------------------------------------------------------------------------------------
# The declared passes, and what each prints
# ---------------------------------------------------------------------------------------------

W = np.array([0.5, -1.0, 2.0])


def looped(x, w):
    y = np.sin(x * w)
    s = 0.0
    b = Buffer.zeros(3)
    for i in range(3):
        b[i] = y * i
        if s > 1.0:
            s = s + np.exp(b[i])
        else:
            s = s * 2.0 + y
    k = 0
    while k < 2:
        s = s * np.cos(s)
        k = k + 1
    return s + np.sum(b)


def sigmoid_loss(z, u):
    p = 1.0 / (1.0 + np.exp(-z))
    return np.sum(u * np.log(p) + (1 - u) * np.log(1 - p)) + np.sum(W * z)


def row_writes(A):
    B = A * 1.0
    for r in B:
        r /= r.sum()
    out = np.zeros(3)
    out[1:] = B[0, 1:] ** 2
    return np.sum(B) + np.sum(out)


CASES = [(looped, ("num", "num"), "grad"), (sigmoid_loss, ("r1", "r1"), "joint"),
         (row_writes, ("r2",), "split"), (looped, ("r0", "r0"), "joint")]
# the classes of the IR and of the backward code: printed as such, a stage printed a structure
REPR = re.compile(r"\b(Accum|Raw|BIf|BLoop|Reset|Restore|Mark|Code|Assign|If|Loop|Var|Const|Global|Struct|Prim"
                  r"|Method|Attr|Loc|Rule|Plan|Context|Pass|Name|Call|Attribute|Constant)\(")


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_prints_readable_text(stage):
    for func, kinds, mode in CASES:
        text = compile_gradient(func, (0,), kinds, mode, stage=stage)
        assert isinstance(text, str) and text.strip(), (stage, func.__name__)
        assert "object at 0x" not in text, text
        assert not REPR.search(text), (stage, REPR.search(text).group(0), text)


def test_the_backward_stages_print_the_python_they_become():
    reverse = compile_gradient(looped, (0,), ("num", "num"), "grad", stage="reverse")
    assert "x_bar += rt.unbroadcast(x_times_w_bar * w, x)" in reverse
    assert "restore b_2[i] from b_2_saved" in reverse
    assert "reset s_bar" in reverse and "for _ in range(while_trips):" in reverse
    assert re.search(r"^    if s_gt_c:$", reverse, re.MULTILINE) and re.search(r"^    else:$", reverse, re.MULTILINE)
    assert re.search(r"^# L\d+: y = np.sin\(x \* w\)$", reverse, re.MULTILINE)
    simplified = compile_gradient(looped, (0,), ("num", "num"), "grad", stage="simplify")
    assert "x_bar = rt.unbroadcast(x_times_w_bar * w, x)" in simplified  # the first contribution
    tape = compile_gradient(looped, (0,), ("num", "num"), "grad", stage="tape")
    assert "s = s_stack.pop()" in tape and "tape mark" not in tape


def test_stages_are_the_passes_in_pipeline_order():
    assert STAGES == tuple(p.name for p in PASSES)
    assert len(set(STAGES)) == len(STAGES)
    order = ["frontend", "fence", "normalize", "ssa", "shapes", "mutation", "hoist", "cse", "composite",
             "activity", "reverse", "simplify", "copies", "tape", "codegen", "release", "loader"]
    assert [s for s in STAGES if s in order] == order
    assert all(p.summary for p in PASSES)  # each says what it does (`show --help` lists them)


def test_each_stage_shows_its_own_pass():
    """A stage's text is what its pass made: hoisting shows at `hoist`, not at `ssa`; the dels of
    `release` are not yet in `codegen`; the final text is `adjoint_source`'s."""
    def f(x, n):
        s = 0.0
        for i in range(n):
            s = s + np.sin(x[0]) * i
        return s

    ssa_text = compile_gradient(f, (0,), ("r1", "r0"), "grad", stage="ssa")
    hoisted = compile_gradient(f, (0,), ("r1", "r0"), "grad", stage="hoist")

    def inside(text):
        return text.index("x_0 = x[0]") > text.index("for i in")

    assert inside(ssa_text) and not inside(hoisted)
    generated = compile_gradient(sigmoid_loss, (0,), ("r1", "r1"), "grad", stage="codegen")
    released = compile_gradient(sigmoid_loss, (0,), ("r1", "r1"), "grad", stage="release")
    assert "del " not in generated and "del " in released
    from adjoint_compiler import adjoint_source
    assert compile_gradient(looped, (0,), ("num", "num"), "grad", stage="release") == adjoint_source(looped, 0)


def test_each_pass_reads_only_what_an_earlier_pass_established():
    pipeline._check_declarations(PASSES)
    by_name = {p.name: p for p in PASSES}
    swapped = [by_name["frontend"], by_name["reverse"], by_name["activity"]]
    with pytest.raises(InternalError, match="pass reverse reads"):
        pipeline._check_declarations(swapped)
    with pytest.raises(InternalError, match="establishes"):
        pipeline._check_declarations([Pass("odd", lambda c: None, lambda c: "", (), ("no_such_fact",))])


def test_an_unknown_stage_is_refused():
    with pytest.raises(ValueError, match="unknown stage 'tapes'"):
        compile_gradient(looped, (0,), ("num", "num"), "grad", stage="tapes")

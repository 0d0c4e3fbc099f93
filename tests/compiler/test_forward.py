"""The forward pass (forward mode) on its printed output: the IR after `forward` and the generated
`<f>_jvp` source, the tangent template language (`@tangent`), and the forward pipeline's stages.

The golden file tests/compiler/golden/jvp/euler.txt pins one generated jvp; rewrite it with
`ADJOINT_UPDATE_GOLDEN=1 pytest tests/compiler/test_forward.py` after an intended change."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from adjoint_compiler import Buffer, MissingRuleError, RuleError, jvp_source, tangent
from adjoint_compiler.pipeline import FORWARD_PASSES, FORWARD_STAGES, compile_gradient
from adjoint_compiler.registry import TANGENTS

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"


def stage(func, name, wrt=(0,), kinds=None):
    kinds = kinds or ("num",) * func.__code__.co_argcount
    return compile_gradient(func, wrt, kinds, "jvp", stage=name)


def straight(x, w):
    y = np.sin(x * w) + 1.0
    return np.sum(y * x)


def looped(x, n):
    s = 0.0
    for i in range(n):
        s = s * x + i
    return s


def branch(x):
    if x > 0.0:
        y = x * x
    else:
        y = 2.0
    return y


def writes(x):
    b = np.zeros(3)
    b[0] = x * 2.0
    b[1:] = np.sin(x)
    return b


def buffer_and_copyto(x):
    b = Buffer.zeros(3)
    b[1] = x
    return b.copy()


def aliased_then_written(x):
    y = x + 0.0
    y[0] = 1.0
    return y * x


def euler(u0, p):
    u, du = u0, np.zeros(2)
    for _ in range(10):
        du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
        du[1] = -p[2] * u[1] + p[3] * u[0] * u[1]
        u = u + 0.01 * du
    return u


def test_each_tangent_follows_its_statement_under_its_line():
    text = jvp_source(straight)
    lines = [line.strip() for line in text.splitlines()]
    i = lines.index("x_times_w = x * w")
    assert lines[i - 1] == "# L32: y = np.sin(x * w) + 1.0"
    assert lines[i + 1] == "x_times_w_dot = x_dot * w + x * w_dot"
    assert "sin_x_times_w_dot = rt.chain(x_times_w_dot, np.cos(x_times_w))" in lines
    assert lines[-1] == "return sum_y_times_x, sum_y_times_x_dot"
    assert "def straight_jvp(x, w, x_dot, w_dot):" in text
    ast.parse(text)


def test_terms_of_arguments_without_tangents_are_dropped():
    text = stage(straight, "forward", wrt=(0,))
    assert not re.search(r"\bw_dot\b", text)
    assert "x_times_w_dot = x_dot * w" in text
    assert "y_dot = sin_x_times_w_dot" in text  # `+ 1.0`: the constant's term dropped, the shape kept
    text = stage(straight, "forward", wrt=(1,))
    assert not re.search(r"\bx_dot\b", text.split("y_times_x =")[0])
    assert "y_times_x_dot = y_dot * x" in text


def test_loops_and_branches_carry_tangents_as_block_parameters():
    text = stage(looped, "forward")
    assert re.search(r"for i in range_n \[s <- 0\.0, s_dot <- 0\.0\]:", text)
    assert "next s <- s_2, s_dot <- s_2_dot" in text
    text = stage(branch, "forward")
    assert "yield y_2, y_2_dot <- y, y_dot" in text
    assert "yield y_2, y_2_dot <- 2.0, 0.0" in text


def test_writes_write_the_tangent_into_the_arrays_tangent():
    text = jvp_source(writes)
    assert "b_dot = rt.zero_tangent(b)" in text  # the constant array's tangent starts at zero
    assert "b_dot[0] = x_times_c_dot" in text  # np.zeros holds floats: no dtype check
    assert "b_dot[1:] = sin_x_dot" in text
    assert "save_slots" not in text  # saved slots are for adjoints
    text = jvp_source(buffer_and_copyto)
    assert "b_dot[1] = x_dot" in text


def test_tangents_are_copied_only_where_a_write_could_tell_them_apart():
    assert "y_dot = rt.tangent_copy(x_dot)" in jvp_source(aliased_then_written)
    assert "tangent_copy" not in jvp_source(straight)


def test_golden_jvp():
    text = jvp_source(euler, (np.ones(2), np.ones(4)))
    path = GOLDEN / "jvp" / "euler.txt"
    if os.environ.get("ADJOINT_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert text == path.read_text()


def test_jvp_source_is_the_same_in_another_process():
    code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import test_forward as t; "
            "from adjoint_compiler import jvp_source; print(jvp_source(t.euler), end='')")
    env = dict(os.environ, ADJOINT_COMPILER_CACHE="0", PYTHONHASHSEED="7")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out == jvp_source(euler)


def test_the_forward_stages():
    assert FORWARD_STAGES[-7:] == ("rules", "complex", "activity", "forward", "codegen", "release", "loader")
    assert FORWARD_STAGES[:13] == ("frontend", "fence", "normalize", "ssa", "dtypes", "shapes", "contractions",
                                   "floats", "mutation", "hoist", "cse", "clamps", "globals")
    for p in FORWARD_PASSES:
        text = stage(euler, p.name)
        assert isinstance(text, str) and text.strip(), p.name
    assert "tangent numpy.sin" in stage(straight, "rules")
    assert "not computed" in stage(euler, "forward")  # a tuple the unpacking built: nothing reads it


def uses_unwrap(x):
    return np.unwrap(x) * 2.0


def test_a_primitive_without_any_rule_is_located_and_names_tangent():
    with pytest.raises(MissingRuleError, match=r"unwrap[\s\S]*@tangent[\s\S]*line \d+\n\s+return np.unwrap"):
        stage(uses_unwrap, "forward")


def test_tangent_templates_are_checked_when_registered():
    def f(x):
        return x

    with pytest.raises(RuleError, match="adjoints"):
        @tangent(f)
        def _(y, x):
            y_dot = x_bar  # noqa: F821, F841
    with pytest.raises(RuleError, match="must assign `y_dot`"):
        @tangent(f)
        def _(y, x):
            t = x_dot  # noqa: F821, F841
    with pytest.raises(RuleError, match="augmented"):
        @tangent(f)
        def _(y, x):
            y_dot += x_dot  # noqa: F821, F841
    with pytest.raises(RuleError, match="`z` is not one of its parameters"):
        @tangent(f)
        def _(y, x):
            y_dot = z_dot  # noqa: F821, F841
    with pytest.raises(RuleError, match="reads `W`"):
        @tangent(f)
        def _(y, x):
            y_dot = W * x_dot  # noqa: F821, F841
    assert f not in TANGENTS


def test_show_jvp_on_the_command_line(capsys):
    from adjoint_compiler.__main__ import main
    target = f"{__file__}:straight"
    assert main(["show", target, "--jvp"]) == 0
    assert capsys.readouterr().out.rstrip("\n") == jvp_source(straight).rstrip("\n")
    assert main(["show", target, "--jvp", "--wrt", "1", "--stage", "forward"]) == 0
    out = capsys.readouterr().out
    assert "def straight(x, w, w_dot):" in out and "x_times_w_dot = x * w_dot" in out
    assert main(["show", target, "--jvp", "--ir"]) == 0
    assert "tangent numpy.sin" in capsys.readouterr().out
    assert main(["show", target, "--jvp", "--stage", "tape"]) == 2
    assert "pass of reverse mode" in capsys.readouterr().err

"""The user's view: user rules, nondifferentiable, the `show` command and located run-time errors."""
import subprocess
import sys
import textwrap
import traceback
import types

import numpy as np
import pytest

import rule_samples as s
from adjoint_compiler import RuleError, adjoint, adjoint_source, grad
from adjoint_compiler.testing import check_grads

X = np.array([0.3, -1.2, 0.8, 2.0])


def test_vectorized_function_with_user_rule_matches_finite_differences():
    g = check_grads(s.uses_softplus, X)
    np.testing.assert_allclose(g, s.W / (1.0 + np.exp(-X)), rtol=1e-12)


def test_user_rule_takes_precedence_over_compiling_source():
    g = check_grads(s.uses_opaque_square, X)
    np.testing.assert_allclose(g, 2.0 * X * s.W, rtol=1e-12)
    assert "opaque_square(" in adjoint_source(s.uses_opaque_square)


def test_nondifferentiable_passes_no_gradient():
    g = grad(s.uses_staircase)(X)
    np.testing.assert_allclose(g, s.staircase(X) * s.W, rtol=1e-12)


def test_a_user_rule_calls_the_users_own_helpers():
    """The rule body reads `_twice`, `_logistic` and `SCALE` from its own module: generated code
    reads them through `rt.rule_globals` (they were a NameError at run time)."""
    from adjoint_compiler import jvp, hessian
    from adjoint_compiler.testing import check_jvp
    expected = 2.0 * s.smooth_relu(X) * s.W / (1.0 + np.exp(-s.SCALE * X))
    np.testing.assert_allclose(check_grads(s.uses_smooth_relu, X), expected, rtol=1e-10)
    assert "rt.rule_globals._logistic(" in adjoint_source(s.uses_smooth_relu)
    check_jvp(s.uses_smooth_relu, X)
    _, t = jvp(s.uses_smooth_relu, (X,), (np.ones(4),))
    assert t == pytest.approx(np.sum(expected))
    h = hessian(s.uses_smooth_relu)(X)  # the generated gradient (it calls the helpers) differentiates again
    eps = 1e-6
    fd = (grad(s.uses_smooth_relu)(X + eps * np.eye(4)[1]) - grad(s.uses_smooth_relu)(X - eps * np.eye(4)[1])) / (2 * eps)
    np.testing.assert_allclose(h[:, 1], fd, rtol=1e-5, atol=1e-7)


def test_a_rule_reading_a_name_its_module_does_not_have_is_refused():
    def f(x):
        return x

    with pytest.raises(RuleError, match="not_defined_anywhere"):
        @adjoint(f)
        def _(y, x):
            x_bar += y_bar * not_defined_anywhere(x)  # noqa: F821


def test_rule_with_unknown_bar_name_fails_at_registration():
    def f(x):
        return x

    with pytest.raises(RuleError, match="z_bar"):
        @adjoint(f)
        def _(y, x):
            z_bar += y_bar  # noqa: F821


def test_rule_with_wrong_arity_fails_at_registration():
    def two(a, b):
        return a * b

    with pytest.raises(RuleError, match="argument parameters"):
        @adjoint(two)
        def _(y, a):
            a_bar += y_bar  # noqa: F821


def test_error_in_generated_forward_names_the_user_line():
    with pytest.raises(np.linalg.LinAlgError) as info:
        grad(s.singular)(np.zeros((2, 2)), np.ones(2))
    text = "".join(traceback.format_exception(info.value))
    line = s.singular.__code__.co_firstlineno + 1
    assert f'File "{s.__file__}", line {line}' in text
    assert "B = np.linalg.inv(A)" in text


def test_error_in_generated_backward_names_the_user_line():
    def bad_pullback_shape(x):
        return np.tanh(x)

    from adjoint_compiler import vjp
    out, pullback = vjp(s.uses_softplus, X)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError) as info:
        pullback(1e308)  # overflows inside the generated backward code (`out_bar * W`)
    text = "".join(traceback.format_exception(info.value))
    assert s.__file__ in text


# -- python -m adjoint_compiler show ------------------------------------------------------------

SOURCE = textwrap.dedent("""
    import numpy as np

    def f(x, w):
        y = np.sin(x * w)
        return np.sum(y * y)
""")


def show(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "adjoint_compiler", "show", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=60)


_SHOW_MANY = """
import contextlib, io, json, sys
from adjoint_compiler.__main__ import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["show", *argv])
        except SystemExit as exc:
            code = exc.code
    results.append({"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(results))
"""


def show_many(*argvs):
    """`python -m adjoint_compiler show ARGV` for each argv, run by `main` in one fresh process (the
    CLI's own entry point, without a process start per command)."""
    import json

    done = subprocess.run([sys.executable, "-c", _SHOW_MANY, json.dumps([list(map(str, a)) for a in argvs])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [types.SimpleNamespace(**r) for r in json.loads(done.stdout)]


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "user_code.py"
    path.write_text(SOURCE)
    return path


def test_show_prints_the_same_code_as_adjoint_source(user_file):
    result = show(f"{user_file}:f", "--wrt", "0,1")
    assert result.returncode == 0, result.stderr
    sys.path.insert(0, str(user_file.parent))
    try:
        import user_code
        assert result.stdout.strip() == adjoint_source(user_code.f, (0, 1)).strip()
    finally:
        sys.path.remove(str(user_file.parent))
    assert "# L5: y = np.sin(x * w)" in result.stdout


def test_show_ir_and_stages(user_file):
    stages = ("normalize", "ssa", "activity", "reverse", "simplify", "tape", "codegen")
    ir, *results = show_many([f"{user_file}:f", "--ir"], *[[f"{user_file}:f", "--stage", s] for s in stages])
    assert ir.returncode == 0 and "# L5" in ir.stdout and "x_times_w = x * w" in ir.stdout
    for stage, result in zip(stages, results):
        assert result.returncode == 0, (stage, result.stderr)
        assert result.stdout.strip()


BAD_ARGUMENTS = [
    (["nowhere.py:f"], "no such file"),
    (["{file}:g"], "no function 'g'"),
    (["{file}"], "expected FILE.py:FUNC"),
    (["{file}:f", "--wrt", "5"], "out of range"),
    (["{file}:f", "--wrt", "a"], "comma-separated"),
]


def test_show_bad_arguments_get_one_line_errors(user_file):
    results = show_many(*[[a.format(file=user_file) for a in args] for args, _ in BAD_ARGUMENTS])
    for (args, message), result in zip(BAD_ARGUMENTS, results):
        assert result.returncode == 2, args
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    # (and one through the command line itself: the exit status)
    assert show("nowhere.py:f").returncode == 2


def test_show_works_on_the_examples():
    import pathlib
    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"
    result = show(f"{example}:f", "--wrt", "1")
    assert result.returncode == 0, result.stderr
    assert "def f_grad" in result.stdout


def test_generated_code_is_visible_to_inspect():
    import inspect

    from adjoint_compiler.api import compiled
    entry = compiled(s.uses_softplus, (0,), [X], "joint")
    source = inspect.getsource(entry.function)
    assert source.startswith("def uses_softplus_grad(x):")
    assert "# L" in source

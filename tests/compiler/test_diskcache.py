"""A second process with a warm on-disk cache skips compilation; stale entries are not used."""
import os
import subprocess
import sys
import textwrap

import numpy as np

MODULE = textwrap.dedent("""
    import numpy as np
    W = np.array([1.0, 2.0, 3.0])

    def helper(v, k=2.0):
        return v * k

    def f(x):
        s = 0.0
        for i in range(3):
            s = s + np.sum(np.sin(helper(x)) * W)
        return s
""")

RUN = textwrap.dedent("""
    import sys
    import numpy as np
    import adjoint_compiler.api as api
    from adjoint_compiler import grad
    import user_mod
    calls = []
    original = api.compile_gradient
    api.compile_gradient = lambda *a, **k: calls.append(1) or original(*a, **k)
    g = grad(user_mod.f)(np.array([0.1, 0.2, 0.3]))
    print("compiled" if calls else "cached", repr(g.tolist()))
""")


def run(tmp_path, cache):
    env = dict(os.environ, ADJOINT_COMPILER_CACHE=str(cache), PYTHONPATH=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split(" ", 1)


def test_second_process_uses_the_cache(tmp_path):
    (tmp_path / "user_mod.py").write_text(MODULE)
    cache = tmp_path / "cache"
    first, value = run(tmp_path, cache)
    second, again = run(tmp_path, cache)
    assert (first, second) == ("compiled", "cached")
    assert value == again


def test_changed_helper_source_is_a_miss(tmp_path):
    (tmp_path / "user_mod.py").write_text(MODULE)
    cache = tmp_path / "cache"
    run(tmp_path, cache)
    (tmp_path / "user_mod.py").write_text(MODULE.replace("v * k", "v * k * 1.5"))
    status, value = run(tmp_path, cache)
    assert status == "compiled"


def test_disabled_and_cleared(tmp_path):
    (tmp_path / "user_mod.py").write_text(MODULE)
    cache = tmp_path / "cache"
    run(tmp_path, cache)
    env = dict(os.environ, ADJOINT_COMPILER_CACHE=str(cache))
    out = subprocess.run([sys.executable, "-m", "adjoint_compiler", "clear-cache"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert out.returncode == 0 and "removed 1" in out.stdout
    assert run(tmp_path, cache)[0] == "compiled"
    assert run(tmp_path, "0")[0] == "compiled" and run(tmp_path, "0")[0] == "compiled"


PATTERN_MODULE = textwrap.dedent("""
    import numpy as np

    def f(a, b):
        return np.sum(np.tanh(a + b) * a)
""")

PATTERN_RUN = textwrap.dedent("""
    import sys
    import numpy as np
    import adjoint_compiler.api as api
    from adjoint_compiler import grad
    import user_mod
    calls = []
    original = api.compile_gradient
    api.compile_gradient = lambda *a, **k: calls.append(1) or original(*a, **k)
    a, b = np.linspace(0.1, 1.2, 12).reshape(3, 4), np.linspace(-0.5, 0.5, int(sys.argv[1]))
    g = grad(user_mod.f, 1)(a, b)
    print("compiled" if calls else "cached", repr(g.tolist()))
""")


def test_code_for_one_pattern_of_lengths_serves_that_pattern_alone(tmp_path):
    """A row `b` (code for that pattern: nothing to undo but the sum over rows), kept on disk and
    loaded again; then one number `b`, of the same kind (rank 1) in another pattern: compiled
    again, never the first pattern's code."""
    (tmp_path / "user_mod.py").write_text(PATTERN_MODULE)
    env = dict(os.environ, ADJOINT_COMPILER_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))

    def run(n):
        result = subprocess.run([sys.executable, "-c", PATTERN_RUN, str(n)], capture_output=True, text=True,
                                env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        status, value = result.stdout.split(" ", 1)
        return status, np.array(eval(value))

    a = np.linspace(0.1, 1.2, 12).reshape(3, 4)
    assert run(4)[0] == "compiled"
    for n, status in ((4, "cached"), (1, "compiled")):
        b = np.linspace(-0.5, 0.5, n)
        found, g = run(n)
        assert found == status
        np.testing.assert_allclose(g, np.sum((1 - np.tanh(a + b) ** 2) * a, axis=0) if n == 4
                                   else [np.sum((1 - np.tanh(a + b) ** 2) * a)], rtol=1e-12)


LOCATED = textwrap.dedent("""
    import numpy as np
    from adjoint_compiler import adjoint_source, grad
    {gap}
    def shift(v):
        return v + 1.0

    def crashy(x):
        y = shift(x) * 2.0
        return y[10] + np.sum(y)

    if __name__ == "__main__":
        x = np.arange(3.0)
        header = adjoint_source(crashy, 0, (x,)).splitlines()[0]
        try:
            grad(crashy)(x)
        except IndexError as exc:
            print(header)
            print(exc.__notes__[0])
""")


def test_the_same_text_elsewhere_is_a_miss(tmp_path):
    """Two files holding the same function at different lines (each run as a script, `__main__`,
    one process each) get their own entries: the header, the `# L<n>` comments and the location
    of a run-time error name each file's own lines (before: the first file's, from its entry)."""
    cache = tmp_path / "cache"
    env = dict(os.environ, ADJOINT_COMPILER_CACHE=str(cache))
    out = {}
    for name, gap in (("a_first.py", ""), ("b_later.py", "\n" * 6)):
        path = tmp_path / name
        path.write_text(LOCATED.replace("{gap}", gap))
        result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        out[name] = result.stdout
        lines = path.read_text().splitlines()
        first = lines.index("def crashy(x):") + 1
        assert f"crashy ({name}:{first})" in result.stdout
        assert f'"{path}", line {first + 2}' in result.stdout  # `return y[10] + ...`
    assert out["a_first.py"] != out["b_later.py"]
    assert len(list(cache.glob("*.pickle"))) == 2

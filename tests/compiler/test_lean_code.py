"""The generated code is lean: `grad` computes no value it does not need, and array temporaries are
released after their last use (peak memory close to a hand-written gradient's).

Gradients here are checked against central finite differences (`check_grads`) or by hand."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from adjoint_compiler import adjoint_source, grad, value_and_grad
from adjoint_compiler.testing import check_grads


def chain(x):
    a = x * 2.0
    b = np.exp(a)
    c = b + 1.0
    d = np.tanh(c)
    e = d * d
    return np.sum(e)


def chain_hand(x):
    b = np.exp(2.0 * x)
    d = np.tanh(b + 1.0)
    return 2.0 * d * (1.0 - d * d) * b * 2.0


def recurrence(a, x0, n):
    x = x0
    total = 0.0
    for _ in range(n):
        x = a * x * (1.0 - x)
        total = total + x * x
    return total / n


def bias_add(X, W, b):
    h = X @ W + b
    return np.sum(np.tanh(h))


def peak_bytes(fn, *args) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_chain_gradient_and_release_lines():
    x = np.linspace(-1.0, 0.5, 7)
    check_grads(chain, x)
    np.testing.assert_allclose(grad(chain)(x), chain_hand(x), rtol=1e-12)
    src = adjoint_source(chain, 0, args=(x,))
    assert "del a" in src.replace("del a_bar", "") or "a = rt.shape_of(a)" in src
    compile(src, "<src>", "exec")


def test_chain_peak_memory_is_a_few_arrays():
    """Five temporaries of 8 MB each: without releasing them the gradient would hold them all
    (and their adjoints) at once."""
    x = np.linspace(-1.0, 0.5, 1_000_000)
    g = grad(chain)
    g(x)  # compile outside the measurement
    peak = peak_bytes(g, x)
    assert peak <= 1.1 * peak_bytes(chain_hand, x), f"peak {peak / x.nbytes:.1f} arrays of x's size"


def test_value_read_only_for_its_shape_is_kept_as_its_shape():
    rng = np.random.default_rng(0)
    X, W, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    # (5, 3) @ (3, 4) + (4,): the pattern of axis lengths tells nothing is broadcast there
    src = adjoint_source(bias_add, (1, 2), args=(X, W, b))
    assert "shape_of" not in src and "rt.unbroadcast(h_bar, X_matmul_W)" not in src
    check_grads(bias_add, X, W, b, wrt=(1, 2))
    # the matmul result (5, 1) is broadcast against b: its shape is kept to undo that
    W = rng.standard_normal((3, 1))
    src = adjoint_source(bias_add, (1, 2), args=(X, W, b))
    assert "X_matmul_W = rt.shape_of(X_matmul_W)" in src
    check_grads(bias_add, X, W, b, wrt=(1, 2))


def scaled_recurrence(a, x0, n):
    x = x0
    total = 0.0
    for _ in range(n):
        x = a * x * (1.0 - x)
        total = total + x * x
    return total * 0.1


def test_grad_skips_the_value_it_does_not_need():
    src = adjoint_source(scaled_recurrence, (0, 1), args=(2.9, 0.3, 10))
    assert "total" not in src.split("# adjoint")[0].split("def ")[1]
    # (`total / n` of Python numbers raises for n = 0, so it runs: the gradient raises too)
    assert "total / n" in adjoint_source(recurrence, (0, 1), args=(2.9, 0.3, 10))
    with pytest.raises(ZeroDivisionError):
        grad(recurrence, (0, 1))(2.9, 0.3, 0)
    ga, gx = grad(recurrence, (0, 1))(2.9, 0.3, 10)
    h = 1e-6
    fd_a = (recurrence(2.9 + h, 0.3, 10) - recurrence(2.9 - h, 0.3, 10)) / (2 * h)
    fd_x = (recurrence(2.9, 0.3 + h, 10) - recurrence(2.9, 0.3 - h, 10)) / (2 * h)
    assert ga == pytest.approx(fd_a, rel=1e-6)
    assert gx == pytest.approx(fd_x, rel=1e-6)
    value, (ga2, gx2) = value_and_grad(recurrence, (0, 1))(2.9, 0.3, 10)
    assert value == pytest.approx(recurrence(2.9, 0.3, 10), rel=1e-15)
    assert (ga2, gx2) == pytest.approx((ga, gx), rel=1e-15)


def test_grad_still_refuses_a_non_scalar_result():
    def vector(x):
        return np.sin(x) * 2.0

    with pytest.raises(TypeError, match="returns a scalar"):
        grad(vector)(np.ones(3))
    with pytest.raises(TypeError, match="returns a scalar"):
        grad(lambda_free_int)(np.ones(3))


def lambda_free_int(x):
    return x > 0.0


def dead_while(a0):
    k0 = 0
    while k0 < 3:
        a0 = -0.89 * a0 + np.sin(-0.87 + 0.1 * k0)
        k0 += 1
    return np.sum(a0) + np.sum(a0) + np.sum(a0)


def test_loop_whose_values_are_dead_still_counts_its_trips():
    """Fuzz seed 121364: `grad` needs no value of the loop, but its adjoint runs once per trip."""
    a0 = np.linspace(-1.0, 1.0, 3).reshape(3, 1)
    np.testing.assert_allclose(grad(dead_while)(a0), np.full((3, 1), 3 * (-0.89) ** 3), rtol=1e-14)
    check_grads(dead_while, a0)


def only_shapes_of_the_loss(X, w, y):
    p = np.tanh(X @ w)
    return np.sum(y * np.log(p * p + 1.0))


def test_values_read_only_for_their_shape_are_not_computed():
    rng = np.random.default_rng(3)
    X, w, y = rng.standard_normal((6, 3)), rng.standard_normal(3), rng.standard_normal(6)
    src = adjoint_source(only_shapes_of_the_loss, 1, args=(X, w, y))
    assert "np.log" not in _forward_part(src) and "rt.shape_of(" not in _forward_part(src)  # y has the shape
    check_grads(only_shapes_of_the_loss, X, w, y, wrt=1)
    y = rng.standard_normal(1)  # broadcast: the product has p's shape
    src = adjoint_source(only_shapes_of_the_loss, 1, args=(X, w, y))
    assert "np.log" not in _forward_part(src)
    check_grads(only_shapes_of_the_loss, X, w, y, wrt=1)


def _forward_part(src: str) -> str:
    return "\n".join(ln for ln in src.split("# adjoint")[0].splitlines() if not ln.strip().startswith("#"))


# -- code size is linear in the number of `continue`s / `break`s (flags and guarded blocks) ------

def _guarded_continues(k: int) -> str:
    lines = ["import numpy as np", "", "", "def f(x):", "    s = 0.0", "    for i in range(x.shape[0]):",
             "        v = x[i]"]
    for j in range(k):
        lines += [f"        if v > {j / 10}:", f"            s = s + v * {j + 1}", "            continue",
                  "        s = s + np.sin(v)"]
    return "\n".join(lines + ["    return s", ""])


@pytest.mark.parametrize("kind", ["continue", "break"])
def test_sequential_guarded_exits_stay_linear(tmp_path, kind):
    import importlib.util
    sizes = {}
    for k in (5, 10):
        path = tmp_path / f"exits_{kind}_{k}.py"
        path.write_text(_guarded_continues(k).replace("continue", kind))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sizes[k] = len(adjoint_source(module.f).splitlines())
        x = np.linspace(-0.5, 1.3, 7)
        check_grads(module.f, x)
    assert sizes[10] < 2.3 * sizes[5], sizes  # linear (with a constant part), not 2**k


def _prod_of_sines(x, axis):
    if axis is None:
        return np.prod(np.sin(x))
    return np.sum(np.prod(np.sin(x), axis=axis))


def prod_of_sines(x):
    return _prod_of_sines(x, None) + _prod_of_sines(x, 0)


def test_a_test_on_literals_compiles_only_the_branch_taken():
    # `axis is None` with `axis=None` known when compiling: the other branch is not generated
    # (before, `None[i]` from an inlined helper's loop over `axis` was, with a SyntaxWarning)
    import warnings

    from adjoint_compiler import grad, jvp_source

    x = np.array([0.3, 0.7, -0.4])
    source = adjoint_source(prod_of_sines, args=(x,))
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert not any(" is None" in line or line.strip().startswith("if ") for line in code), source
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        second = jvp_source(grad(prod_of_sines), args=(x,))
    assert "None[" not in second and "None is None" not in second
    check_grads(prod_of_sines, x)
    check_grads(prod_of_sines, np.array([[0.3, 0.7], [-0.4, 1.1]]))


def returns_early_never(x):
    v = np.sum(x)
    for _ in range(2):
        v = v * 2.0
        if 1.1 < -0.23:  # (a test on literals: never taken)
            return np.sin(v)
    return v + 1.0


def test_an_early_return_in_a_branch_never_taken_leaves_no_flag():
    # (the loop's text assigns the return flags; no trip does: they keep their values after it)
    source = adjoint_source(returns_early_never)
    assert "break" not in source and "returned" not in source, source
    check_grads(returns_early_never, np.array([0.5, -1.0]))

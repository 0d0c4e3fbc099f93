"""No surprises: computing a gradient never changes the caller's arrays (even arguments the function
writes into: they are copied on entry), returned gradients never alias the inputs or each other,
and compiling / running one gradient from 8 threads at once is correct and compiles exactly once.
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import fuzzgen  # noqa: E402

import adjoint_compiler.api as api  # noqa: E402
from adjoint_compiler import grad, value_and_grad, vjp  # noqa: E402

SOURCE = '''
import numpy as np
from adjoint_compiler import Buffer, copyto


def step(du, u, p):
    du[0] = -p * u[0] + u[1]
    du[1:] = np.sin(u[1:]) * p
    return du


def pure(x, y):
    return np.sum(np.sin(x) * y) + np.sum(x * x)


def writes_args(x, y):
    x[0] = y * 2.0
    x[1:] *= y
    y = y * 3.0
    return np.sum(x * x) + y


def writes_buffer_and_loops(x, w):
    b = Buffer.zeros((4, x.shape[0]))
    b[0] = x
    for i in range(3):
        b[i + 1] = np.tanh(b[i] * w + 0.1 * i)
    copyto(b, (np.sin(w * k) for k in range(2)))
    total = 0.0
    k = 0
    while k < 2:
        total = total + np.sum(b[k + 2] ** 2)
        k += 1
    return total + np.sum(b.copy())


def ode(u, p):
    du = np.zeros(u.shape)
    for i in range(3):
        step(du, u, p)
        u = u + 0.1 * du
    return np.sum(u * u)


def identity_sum(x, y):
    return np.sum(x) + np.sum(y)


def passthrough(x):
    return x


def same_twice(a, b):
    return np.sum(a * 1.0) + np.sum(b * 1.0)
'''

_MOD = None


def mod():
    global _MOD
    if _MOD is None:
        _MOD = fuzzgen.load(SOURCE, tag="threads")
    return _MOD


def fresh():
    """A freshly imported copy of SOURCE: its functions are not in any cache."""
    return fuzzgen.load(SOURCE, tag="threads_fresh")


def fd_all(f, args, eps=1e-6):
    return [fuzzgen.fd_grad(f, list(args), i, eps) for i in range(len(args))]


def rng_args(seed, n=3):
    r = np.random.default_rng(seed)
    return r.uniform(-1, 1, n), float(r.uniform(0.5, 1.5))


# -------------------------------------------------------------------------------------------------
# inputs never change
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pure", "writes_args", "writes_buffer_and_loops", "ode"])
def test_inputs_unchanged_and_gradient_correct(name):
    f = getattr(mod(), name)
    x, y = rng_args(1)
    x_before = x.copy()
    for call in (lambda: grad(f, wrt=(0, 1))(x, y), lambda: value_and_grad(f, wrt=(0, 1))(x, y)[1],
                 lambda: vjp(f, x, y)[1](1.0)):
        g = call()
        np.testing.assert_array_equal(x, x_before)   # even when f writes into x: copied on entry
        expected = fd_all(f, [x, y])
        np.testing.assert_allclose(g[0], expected[0], rtol=1e-6, atol=1e-8)
        assert np.isclose(g[1], expected[1], rtol=1e-6, atol=1e-8)


def test_written_argument_value_is_what_f_returns():
    """value_and_grad's value is f's value on the *original* arguments, and f run directly still
    writes into its argument (the compiler changes nothing about the primal)."""
    f = mod().writes_args
    x, y = rng_args(2)
    v, _ = value_and_grad(f, wrt=(0, 1))(x, y)
    x_direct = x.copy()
    assert np.isclose(v, f(x_direct, y), rtol=1e-13)
    assert not np.array_equal(x_direct, x)   # the direct call did write


def test_input_flags_and_strides_unchanged():
    f = mod().writes_args
    base = np.arange(8.0)
    x = base[::2]                        # a strided view into base
    base_before = base.copy()
    ro = np.array([0.5, -0.25, 1.0])
    ro.flags.writeable = False           # a read-only argument f writes into
    grad(f, wrt=(0, 1))(x, 0.7)
    grad(f, wrt=(0, 1))(ro, 0.7)
    np.testing.assert_array_equal(base, base_before)
    assert not ro.flags.writeable and np.array_equal(ro, [0.5, -0.25, 1.0])


# -------------------------------------------------------------------------------------------------
# gradients never alias inputs or each other
# -------------------------------------------------------------------------------------------------

def _no_alias(grads, inputs):
    arrays = [g for g in grads if isinstance(g, np.ndarray)]
    for k, g in enumerate(arrays):
        assert g.flags.writeable, f"gradient {k} is read-only"
        for a in inputs:
            if isinstance(a, np.ndarray):
                assert not np.shares_memory(g, a), f"gradient {k} aliases an input"
        for h in arrays[k + 1:]:
            assert not np.shares_memory(g, h), "two gradients share memory"


def test_gradients_do_not_alias_each_other():
    f = mod().identity_sum
    x, y = np.ones(3), np.ones(3)
    g = grad(f, wrt=(0, 1))(x, y)
    _no_alias(g, [x, y])
    g[0][0] = 99.0                       # writing one gradient changes nothing else
    assert g[1][0] == 1.0 and x[0] == 1.0


def test_same_array_passed_twice():
    f = mod().same_twice
    x = np.linspace(-1, 1, 4)
    g = grad(f, wrt=(0, 1))(x, x)
    _no_alias(g, [x])
    np.testing.assert_array_equal(g[0], np.ones(4))
    np.testing.assert_array_equal(g[1], np.ones(4))


def test_repeated_calls_return_new_arrays():
    f = mod().pure
    x, y = rng_args(3)
    g1 = grad(f)(x, y)
    g2 = grad(f)(x, y)
    assert not np.shares_memory(g1, g2)
    g1[:] = 0.0
    assert np.any(g2 != 0.0)


def test_vjp_pullback_does_not_alias_cotangent():
    f = mod().passthrough
    x = np.array([1.0, 2.0, 3.0])
    out, pullback = vjp(f, x)
    assert not np.shares_memory(out, x) or np.array_equal(out, x)
    ct = np.array([0.5, -1.0, 2.0])
    (gx,) = pullback(ct)
    np.testing.assert_array_equal(gx, ct)
    _no_alias([gx], [x, ct, out])
    (gx2,) = pullback(ct)
    assert not np.shares_memory(gx, gx2)


# -------------------------------------------------------------------------------------------------
# threads
# -------------------------------------------------------------------------------------------------

class CountingCompile:
    def __init__(self, real, delay=0.05):
        self.real, self.delay = real, delay
        self.calls = []
        self.lock = threading.Lock()

    def __call__(self, func, wrt, kinds, mode="joint", *rest, **kw):
        with self.lock:
            self.calls.append((getattr(func, "__name__", func), wrt, kinds, mode))
        threading.Event().wait(self.delay)   # widen the race window
        return self.real(func, wrt, kinds, mode, *rest, **kw)


def _run_threads(n, target):
    barrier = threading.Barrier(n)
    errors, results = [], [None] * n

    def body(k):
        try:
            barrier.wait()
            results[k] = target(k)
        except BaseException as exc:     # noqa: BLE001 - reported below
            errors.append((k, exc))
    threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread hung (deadlock?)"
    assert not errors, errors
    return results


@pytest.mark.parametrize("name", ["pure", "writes_buffer_and_loops", "ode"])
def test_concurrent_compile_once_and_correct(monkeypatch, name):
    counter = CountingCompile(api.compile_gradient)
    monkeypatch.setattr(api, "compile_gradient", counter)
    m = fresh()
    try:
        f = getattr(m, name)
        inputs = [rng_args(100 + k) for k in range(8)]
        expected = [fd_all(f, list(a)) for a in inputs]
        g = grad(f, wrt=(0, 1))
        results = _run_threads(8, lambda k: g(*inputs[k]))
        assert len(counter.calls) == 1, counter.calls
        for k in range(8):
            np.testing.assert_allclose(results[k][0], expected[k][0], rtol=1e-6, atol=1e-8)
            assert np.isclose(results[k][1], expected[k][1], rtol=1e-6, atol=1e-8)
        # now run the compiled gradient concurrently, many times each, on different inputs
        many = _run_threads(8, lambda k: [g(*inputs[(k + j) % 8]) for j in range(20)])
        for k in range(8):
            for j, r in enumerate(many[k]):
                e = expected[(k + j) % 8]
                np.testing.assert_allclose(r[0], e[0], rtol=1e-6, atol=1e-8)
        assert len(counter.calls) == 1, counter.calls
    finally:
        fuzzgen.unload(m)


def test_concurrent_distinct_keys_compile_once_each(monkeypatch):
    counter = CountingCompile(api.compile_gradient)
    monkeypatch.setattr(api, "compile_gradient", counter)
    m = fresh()
    try:
        f = m.writes_buffer_and_loops
        x, y = rng_args(7)
        # threads 0-3 ask for wrt=0, threads 4-7 for wrt=(0, 1): two compilations, no more
        results = _run_threads(8, lambda k: grad(f, wrt=0 if k < 4 else (0, 1))(x, y))
        assert sorted(c[1] for c in counter.calls) == [(0,), (0, 1)], counter.calls
        for r in results[:4]:
            np.testing.assert_array_equal(r, results[4][0])
    finally:
        fuzzgen.unload(m)


def test_concurrent_inputs_unchanged(monkeypatch):
    m = fresh()
    try:
        f = m.writes_args
        xs = [rng_args(200 + k)[0] for k in range(8)]
        before = [x.copy() for x in xs]
        _run_threads(8, lambda k: [grad(f, wrt=(0, 1))(xs[k], 0.9) for _ in range(10)])
        for x, b in zip(xs, before):
            np.testing.assert_array_equal(x, b)
    finally:
        fuzzgen.unload(m)

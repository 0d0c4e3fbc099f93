"""peek: Buffer reads used up before the Buffer changes read its array in place."""
from __future__ import annotations

import numpy as np

from adjoint_compiler import Buffer, adjoint_source, grad
from adjoint_compiler.testing import check_grads

RNG = np.random.default_rng(5)


def stencil(u0, k):
    u = Buffer(u0)
    for _ in range(3):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u.copy() ** 2)


def test_reads_used_up_before_the_next_write_are_views():
    src = adjoint_source(stencil, args=(np.ones(6), 0.2))
    assert src.count("rt.held(") == 4
    check_grads(stencil, RNG.standard_normal(6), 0.2, wrt=(0, 1))


def read_then_overwritten(x, w):
    b = Buffer(x)
    r = b[0:2]
    b[0] = 5.0 * w
    return np.sum(r * w) + np.sum(b.copy())


def read_by_the_adjoint(x, w):
    b = Buffer(x)
    r = b[1:]
    b[1] = w
    return np.sum(np.sin(r)) + np.sum(b.copy())


def transposed(x, w):
    b = Buffer(x)
    r = b[0:2].T
    b[0] = w
    return np.sum(r * 3.0) + np.sum(b.copy())


def test_reads_that_must_keep_their_value_are_copies():
    """A value used after the write, one the adjoint reads, one whose view is taken: copies."""
    x = RNG.standard_normal(4)
    for f in (read_then_overwritten, read_by_the_adjoint, transposed):
        assert "rt.held(" not in adjoint_source(f, wrt=(0, 1), args=(x, 0.5)), f.__name__
        check_grads(f, x, 0.5, wrt=(0, 1))
        np.testing.assert_allclose(grad(f, wrt=1)(x, 0.5), grad(f, wrt=1)(x.copy(), 0.5))


def test_a_gradient_to_be_differentiated_again_reads_no_views():
    """The inner gradient of a nested one (`Context.differentiable`) skips peek and plain; the
    stencil's hvp matches finite differences of its gradient."""
    from adjoint_compiler.pipeline import compile_gradient
    from adjoint_compiler import hvp
    kinds = ("f1", "f0")
    assert "rt.held(" in compile_gradient(stencil, (0,), kinds, "grad").source
    assert "rt.held(" not in compile_gradient(stencil, (0,), kinds, "grad", differentiable=True).source
    u0, v, eps = RNG.standard_normal(6), RNG.standard_normal(6), 1e-6
    g = grad(stencil)
    fd = (g(u0 + eps * v, 0.2) - g(u0 - eps * v, 0.2)) / (2 * eps)
    np.testing.assert_allclose(hvp(stencil)(u0, 0.2, v), fd, rtol=1e-5, atol=1e-7)

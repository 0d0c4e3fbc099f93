"""The loop workloads (stencil, RK4 stages, element writes with a branch, an RNN with a loss per
step) in the spellings people write them, each checked against central finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import Buffer, copyto, grad
from adjoint_compiler.testing import check_grads

RNG = np.random.default_rng(1313)


def heat_inplace(u0, k):
    u = u0.copy()
    for _ in range(3):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def heat_buffer(u0, k):
    u = Buffer(u0)
    for _ in range(3):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    v = u.copy()
    return np.sum(v * v)


def heat_empty(u0, k):
    u = u0.copy()
    for _ in range(3):
        u_new = np.empty_like(u)
        u_new[0] = u[0]
        u_new[-1] = u[-1]
        u_new[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = u_new
    return np.sum(u * u)


def heat_swap(u0, k):
    u = u0.copy()
    u_new = u0.copy()
    for _ in range(3):
        u_new[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u, u_new = u_new, u
    return np.sum(u * u)


def heat_copyto(u0, k):
    u = u0.copy()
    u_new = u0.copy()
    for _ in range(3):
        u_new[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        np.copyto(u, u_new)
    return np.sum(u * u)


def heat_buffer_copyto(u0, k):
    u = Buffer(u0)
    u_new = Buffer.zeros_like(u0)
    for _ in range(3):
        u_new[0] = u[0]
        u_new[-1] = u[-1]
        u_new[1:-1] = u[1:-1] + k * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        copyto(u, u_new)
    return np.sum(u.copy() ** 2)


HEAT = [heat_inplace, heat_buffer, heat_empty, heat_swap, heat_copyto, heat_buffer_copyto]


@pytest.mark.parametrize("f", HEAT, ids=lambda f: f.__name__)
def test_heat_stencil_spellings(f):
    u0 = RNG.standard_normal(7)
    check_grads(f, u0, 0.2, wrt=(0, 1))
    np.testing.assert_allclose(grad(f, wrt=(0, 1))(u0, 0.2)[0], grad(heat_inplace, wrt=(0, 1))(u0, 0.2)[0])


def rhs(du, u, p):
    du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
    du[1] = -p[2] * u[1] + p[3] * u[0] * u[1]


def rk4_buffer(p, u0):
    u = u0.copy()
    k1, k2 = Buffer.zeros_like(u0), Buffer.zeros(2)
    dt = 0.05
    for _ in range(4):
        rhs(k1, u, p)
        rhs(k2, u + dt * k1, p)
        u = u + 0.5 * dt * (k1 + k2)
    return np.sum(u * u)


def rk4_empty(p, u0):
    u = u0.copy()
    k1, k2 = np.empty_like(u0), np.empty(2)
    dt = 0.05
    for _ in range(4):
        rhs(k1, u, p)
        rhs(k2, u + dt * k1, p)
        u = u + 0.5 * dt * (k1 + k2)
    return np.sum(u * u)


@pytest.mark.parametrize("f", [rk4_buffer, rk4_empty], ids=lambda f: f.__name__)
def test_stage_arrays_spellings(f):
    p, u0 = np.array([1.5, 1.0, 3.0, 1.0]), np.array([1.0, 0.8])
    check_grads(f, p, u0, wrt=(0, 1))


def branch_zeros(x, w):
    n = x.shape[0]
    b = np.zeros(n)
    s = 0.0
    for i in range(n):
        b[i] = np.sin(x[i]) * w
        if b[i] > 0:
            s = s + b[i] ** 2
    return s


def branch_buffer_read_after(x, w):
    b = Buffer.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        b[i] = np.sin(x[i]) * w
        if b[i] > 0:
            s = s + b[i] ** 2
    return s + np.sum(b.copy() * x)


def branch_empty_rows(x, w):
    b = np.empty((x.shape[0], 2))
    s = 0.0
    for i in range(x.shape[0]):
        b[i] = np.sin(x[i]) * w
        if b[i, 0] > 0:
            s = s + np.sum(b[i] ** 2)
        b[i, 1] = b[i, 1] * 0.5
    return s + np.sum(b)


def branch_backwards(x, w):
    n = x.shape[0]
    b = np.zeros(n)
    s = 0.0
    for i in range(n - 1, -1, -1):
        b[i] = np.sin(x[i]) * w
        if b[i] > 0:
            s = s + b[i] ** 2
    return s + b[0]


@pytest.mark.parametrize("f", [branch_zeros, branch_buffer_read_after, branch_empty_rows, branch_backwards],
                         ids=lambda f: f.__name__)
def test_element_write_and_branch_spellings(f):
    x = RNG.standard_normal(9)
    check_grads(f, x, 0.7, wrt=(0, 1))
    check_grads(f, x, -0.7, wrt=(0, 1))


def rnn_mse(Wx, Wh, V, xs, ys):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
        loss = loss + np.mean((h @ V - ys[t]) ** 2)
    return loss


def rnn_mse_list(Wx, Wh, V, xs, ys):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    losses = []
    for x, y in zip(xs, ys):
        h = np.tanh(x @ Wx + h @ Wh)
        losses.append(np.mean(np.square(h @ V - y)))
    return sum(losses)


@pytest.mark.parametrize("f", [rnn_mse, rnn_mse_list], ids=lambda f: f.__name__)
def test_rnn_with_a_loss_per_step(f):
    T, B, D, H, O = 3, 2, 3, 4, 2
    args = (RNG.standard_normal((D, H)) * 0.5, RNG.standard_normal((H, H)) * 0.5, RNG.standard_normal((H, O)),
            RNG.standard_normal((T, B, D)), RNG.standard_normal((T, B, O)))
    check_grads(f, *args, wrt=(0, 1, 2))

"""A generated gradient, read back as source, is differentiable by the compiler like user code.

For each example's function, `adjoint_source(f)` is written to a module, imported, and the compiler
differentiates `<v, grad f(x)>` (a Hessian-vector product by reverse over reverse), checked against
central finite differences of the generated gradient itself."""
from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pytest

from adjoint_compiler import Buffer, adjoint_source, copyto
from adjoint_compiler.testing import check_grads

_count = itertools.count()


def _module(tmp_path, text: str):
    name = f"generated_{next(_count)}"
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_second_order(tmp_path, f, args, wrt, seed=0, specialised=False):
    """grad of <v, gradient of f> w.r.t. argument `wrt` (and the rest of the gradient's inputs)
    matches finite differences. `specialised`: the source is the one for the kinds of `args`
    (ranks known), which is what runs for them."""
    generated = _module(tmp_path, adjoint_source(f, wrt=wrt, args=args if specialised else None))
    gradient = getattr(generated, f"{f.__name__}_grad")
    gradient.__globals__.update(Buffer=Buffer, copyto=copyto)  # the names the primal module bound
    v = np.random.default_rng(seed).normal(size=np.shape(args[wrt]))
    params = ", ".join(f"a{i}" for i in range(len(args)))
    wrapper = _module(tmp_path, f"import numpy as np\n\n\ndef hv({params}):\n"
                                f"    return np.sum(gradient({params})[0] * v)\n")
    wrapper.gradient, wrapper.v = gradient, v
    check_grads(wrapper.hv, *args, wrt=wrt)


def softplus_tanh(x, w):  # examples/quickstart.py
    h = np.tanh(x * w)
    return np.sum(np.log1p(np.exp(h))) + 0.5 * np.dot(w, w)


def logistic(w, X, y, lam):  # examples/logistic_regression_scipy.py
    z = X @ w
    nll = np.mean(np.logaddexp(0.0, -y * z))
    return nll + 0.5 * lam * np.sum(w[1:] ** 2)


def mlp(W1, b1, W2, b2, X, Y):  # examples/mlp_training.py
    logits = np.tanh(X @ W1 + b1) @ W2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    log_z = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * (logits - log_z), axis=1))


def heat(u0, n_steps, r, u_obs):  # examples/heat_inverse.py
    u = Buffer(u0)
    u_new = Buffer.zeros(u0.shape)
    for _ in range(n_steps):
        u_new[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        copyto(u, u_new)
    return 0.5 * np.sum((u.copy() - u_obs) ** 2)


def lotka_volterra(du, u, p, t):
    du[0] = p[0] * u[0] - p[1] * u[0] * u[1]
    du[1] = p[2] * u[0] * u[1] - p[3] * u[1]


def rk4(p, u0, dt, n_steps):  # examples/ode_sensitivities.py
    u = u0
    k1, k2, k3, k4 = Buffer.zeros(2), Buffer.zeros(2), Buffer.zeros(2), Buffer.zeros(2)
    total = 0.0
    for _ in range(n_steps):
        lotka_volterra(k1, u, p, 0.0)
        lotka_volterra(k2, u + 0.5 * dt * k1[:], p, 0.0)
        lotka_volterra(k3, u + 0.5 * dt * k2[:], p, 0.0)
        lotka_volterra(k4, u + dt * k3[:], p, 0.0)
        u = u + dt / 6.0 * (k1[:] + 2.0 * k2[:] + 2.0 * k3[:] + k4[:])
        total = total + np.sum(u ** 2)
    return total


RNG = np.random.default_rng(3)
STRAIGHT = {
    "quickstart": (softplus_tanh, (RNG.normal(size=3), RNG.normal(size=3)), 1),
    "logistic": (logistic, (RNG.normal(size=4), RNG.normal(size=(6, 4)), np.sign(RNG.normal(size=6)), 0.1), 0),
    "mlp": (mlp, (RNG.normal(size=(2, 5)), RNG.normal(size=5), RNG.normal(size=(5, 3)), RNG.normal(size=3),
                  RNG.normal(size=(7, 2)), np.eye(3)[RNG.integers(0, 3, 7)]), 0),
}


@pytest.mark.parametrize("name", sorted(STRAIGHT))
def test_straight_line_gradients_differentiate_again(tmp_path, name):
    f, args, wrt = STRAIGHT[name]
    check_second_order(tmp_path, f, args, wrt)


LOOPS = {
    "heat": (heat, (RNG.normal(size=8), 3, 0.25, RNG.normal(size=8)), 0),
    "rk4": (rk4, (np.array([1.5, 1.0, 1.0, 3.0]), np.array([1.0, 1.2]), 0.05, 4), 0),
}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loop_gradients_differentiate_again(tmp_path, name):
    f, args, wrt = LOOPS[name]
    check_second_order(tmp_path, f, args, wrt)


def two_steps(W, b, x0, x1, h0):  # a recurrent cell, np.concatenate([h, x], axis=1) @ W (joined.py)
    n = h0.shape[1]
    g = np.concatenate([h0, x0], axis=1) @ W + b
    h1 = np.tanh(g[:, :n]) * np.tanh(g[:, n:])
    g = np.concatenate([h1, x1], axis=1) @ W + b
    return np.sum(np.tanh(g[:, :n]) * np.tanh(g[:, n:]) ** 2)


def test_the_product_of_a_concatenation_differentiates_again(tmp_path):
    args = (RNG.normal(size=(5, 4)) / 2, RNG.normal(size=4), RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3)),
            RNG.normal(size=(2, 2)))
    for wrt in (0, 4):
        assert "rt.part_span(" in adjoint_source(two_steps, wrt=wrt, args=args)
        check_second_order(tmp_path, two_steps, args, wrt, specialised=True)

"""A model written as a class, its parameters a dataclass, trained with `grad(model.loss)`.

The model object holds the hyperparameters and the methods (`predict`, a `@property`, a
`@staticmethod`); `grad(model.loss)` differentiates the bound method with respect to its first
argument, the `Params` dataclass, and returns the gradient as a `Params` of the same fields. The
object the method is bound to is a constant (as in JAX): its fields are read at each call.
"""
from dataclasses import dataclass, fields

import numpy as np

from adjoint_compiler import grad, value_and_grad
from adjoint_compiler.testing import check_grads


@dataclass
class Params:
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: float


class Regressor:
    """A one-hidden-layer tanh network for scalar regression, with an L2 penalty."""

    def __init__(self, hidden: int, weight_decay: float):
        self.hidden = hidden
        self.weight_decay = weight_decay

    def init(self, n_in: int, seed: int = 0) -> Params:
        rng = np.random.default_rng(seed)
        return Params(W1=rng.normal(scale=1.0, size=(n_in, self.hidden)), b1=np.zeros(self.hidden),
                      W2=rng.normal(scale=1.0 / np.sqrt(self.hidden), size=self.hidden), b2=0.0)

    @staticmethod
    def activation(z):
        return np.tanh(z)

    @property
    def penalty_scale(self):
        return 0.5 * self.weight_decay

    def predict(self, params: Params, X):
        h = self.activation(X @ params.W1 + params.b1)
        return h @ params.W2 + params.b2

    def penalty(self, params: Params):
        return self.penalty_scale * (np.sum(params.W1 ** 2) + np.sum(params.W2 ** 2))

    def loss(self, params: Params, X, y):
        residual = self.predict(params, X) - y
        return np.mean(residual ** 2) + self.penalty(params)


def step(params: Params, g: Params, lr: float) -> Params:
    """One gradient-descent step, field by field."""
    return Params(**{f.name: getattr(params, f.name) - lr * getattr(g, f.name) for f in fields(Params)})


rng = np.random.default_rng(1)
X = rng.uniform(-2.0, 2.0, size=(200, 2))
y = np.sin(X[:, 0]) * np.cos(X[:, 1])

model = Regressor(hidden=16, weight_decay=1e-3)
params = model.init(n_in=2)

loss_grad = grad(model.loss)  # with respect to `params` (the first argument of the bound method)
g = loss_grad(params, X, y)
print(f"gradient type: {type(g).__name__} with fields {', '.join(f.name for f in fields(g))}")
check_grads(model.loss, params, X, y)  # raises unless it matches central finite differences
print("gradient matches finite differences")

value_and_gradient = value_and_grad(model.loss)
lr = 0.2
print(f"\n{'step':>5} {'loss':>10}")
losses = []
for it in range(201):
    L, g = value_and_gradient(params, X, y)
    losses.append(float(L))
    if it % 25 == 0:
        print(f"{it:5d} {L:10.5f}")
    params = step(params, g, lr)
print(f"\nloss {losses[0]:.5f} -> {losses[-1]:.5f} (decreased: {losses[-1] < losses[0]})")

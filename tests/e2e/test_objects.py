"""End-to-end tests of the user's objects: `grad(model.loss)` of a bound method (the object is a
constant, as in JAX: pass it explicitly to differentiate it), attribute reads `self.W @ x`,
calls of other methods `self.helper(x)`, `@property`, `@staticmethod`, `@classmethod`,
inheritance, methods of a global object, fields holding functions, and the refusal of
attribute writes.

Every gradient is checked against central finite differences (check_grads).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import pytest
from tree_helpers import assert_same_structure, check_tree

from adjoint_compiler import UnsupportedSyntaxError, grad, value_and_grad, vjp
from adjoint_compiler.testing import check_grads

RNG = np.random.default_rng(161)


def rand(*shape):
    return RNG.standard_normal(shape)


class Base:
    gain = 2.0  # a class constant

    def activate(self, z):
        return np.tanh(z) * self.gain


class Model(Base):
    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.nonlinearity = np.sin
        self.label = "model"

    @property
    def Wb(self):
        return self.W * self.b

    @staticmethod
    def square(z):
        return z * z

    @classmethod
    def offset(cls, z):
        return z + cls.gain

    def helper(self, x):
        return self.activate(self.W @ x + self.b)

    def loss(self, x):
        return np.sum(self.helper(x) ** 2)

    def uses_property(self, x):
        return np.sum(self.Wb @ x)

    def uses_static_and_class_methods(self, x):
        return np.sum(self.square(x)) + np.sum(Model.square(x)) + np.sum(self.offset(x) * Model.offset(x))

    def uses_field_function(self, x):
        return np.sum(self.nonlinearity(self.W @ x))

    def in_loop_and_branch(self, x, n):
        h = x
        for i in range(n):
            if i % 2 == 0:
                h = self.helper(h)
            else:
                h = np.cos(self.W @ h)
        return np.sum(h)

    def with_closure(self, x):
        def inner(z):
            return self.W @ z + self.b
        return np.sum(inner(inner(x)) ** 2)

    def writes_attribute(self, x):
        self.b = x  # <-
        return np.sum(x)

    def loss_with_params(self, params, x):
        return np.sum(np.tanh(params.W @ x + params.b) ** 2) * self.gain


MODEL = Model(rand(3, 3), rand(3))


@pytest.mark.parametrize("method", ["loss", "uses_property", "uses_static_and_class_methods",
                                    "uses_field_function", "with_closure"])
def test_grad_of_a_bound_method(method):
    x = rand(3)
    check_grads(getattr(MODEL, method), x)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_methods_called_in_loops_and_branches(n):
    check_grads(MODEL.in_loop_and_branch, rand(3), n)


def test_bound_object_is_not_differentiated_but_read_at_each_call():
    model = Model(rand(3, 3), rand(3))
    g = grad(model.loss)
    x = rand(3)
    first = g(x)
    assert isinstance(first, np.ndarray) and first.shape == (3,)
    model.W = model.W * 2.0  # rebinding a field: the next call reads it
    np.testing.assert_allclose(g(x), check_grads(model.loss, x), rtol=1e-12)
    assert not np.allclose(g(x), first)
    other = Model(rand(3, 3), rand(3))  # another object of the class: its own fields
    np.testing.assert_allclose(grad(other.loss)(x), check_grads(other.loss, x), rtol=1e-12)


def test_object_passed_explicitly_is_differentiated():
    x = rand(3)
    model = Model(rand(3, 3), rand(3))
    g = check_tree(Model.loss, model, x)
    assert type(g) is Model
    assert g.nonlinearity is None and g.label is None  # (leaves that are not numbers)
    check_tree(Model.uses_property, model, x)
    check_tree(Model.with_closure, model, x)


@dataclass
class Params:
    W: np.ndarray
    b: np.ndarray


def test_method_with_a_dataclass_of_parameters():
    params = Params(rand(3, 3), rand(3))
    g = check_grads(MODEL.loss_with_params, params, rand(3))
    assert_same_structure(g, params)


def test_value_and_grad_and_vjp_of_a_bound_method():
    x = rand(3)
    value, g = value_and_grad(MODEL.loss)(x)
    assert np.isclose(value, MODEL.loss(x))
    np.testing.assert_allclose(g, grad(MODEL.loss)(x), rtol=1e-12)
    out, pullback = vjp(MODEL.helper, x)
    np.testing.assert_allclose(out, MODEL.helper(x))
    (gx,) = pullback(np.ones(3))
    np.testing.assert_allclose(gx, grad(lambda z: np.sum(MODEL.helper(z)))(x), rtol=1e-12)


def calls_global_object(x):
    return MODEL.loss(x) + np.sum(MODEL.Wb @ x) + MODEL.gain * np.sum(x)


def calls_argument_object(x, model):
    return model.loss(x) * model.gain + np.sum(model.Wb @ x)


def test_methods_and_properties_of_a_global_object():
    check_grads(calls_global_object, rand(3))


def test_methods_and_properties_of_an_argument_object():
    check_grads(calls_argument_object, rand(3), Model(rand(3, 3), rand(3)))


def test_classmethod_and_staticmethod_differentiated_directly():
    x = rand(3)
    np.testing.assert_allclose(grad(lambda z: np.sum(Model.offset(z) ** 2))(x), 2 * (x + 2.0))
    check_grads(lambda z: np.sum(Model.offset(z) ** 2), x)
    np.testing.assert_allclose(grad(lambda z: np.sum(Model.square(z)))(x), 2 * x)


def test_attribute_write_is_refused_and_located():
    model = Model(rand(3, 3), rand(3))
    before = model.b.copy()
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(model.writes_attribute)(rand(3))
    lines, first = inspect.getsourcelines(Model.writes_attribute)
    expected = first + next(i for i, ln in enumerate(lines) if "# <-" in ln)
    assert info.value.lineno == expected and info.value.filename == __file__
    assert "attribute" in str(info.value)
    np.testing.assert_array_equal(model.b, before)


# ---------------------------------------------------------------------------------------------
# named results and fields of simple objects
# ---------------------------------------------------------------------------------------------

def slogdet_field(a):
    return np.linalg.slogdet(a).logabsdet


def slogdet_fields_in_loop(a):
    s = 0.0
    for k in range(1, 3):
        r = np.linalg.slogdet(a * k)
        if r.sign > 0:
            s = s + r.logabsdet
    return s


def test_named_tuple_fields_of_numpy_results():
    a = rand(3, 3) + 4.0 * np.eye(3)
    g = check_grads(slogdet_field, a)
    np.testing.assert_allclose(g, np.linalg.inv(a).T, rtol=1e-10)
    check_grads(slogdet_fields_in_loop, a)


class Holder:
    def __init__(self, scale):
        self.scale = scale


def reads_simple_object(x, holder):
    return np.sum(x * holder.scale) ** 2


def test_attributes_of_a_simple_object():
    check_grads(reads_simple_object, rand(3), Holder(1.5))
    g = check_tree(reads_simple_object, rand(3), Holder(1.5), wrt=1)
    assert type(g) is Holder and type(g.scale) is float


class Patched:
    def __init__(self, W):
        self.W = W

    def helper(self, x):
        return np.tanh(self.W @ x)

    def loss(self, x):
        return np.sum(self.helper(x))


def _sine_helper(self, x):
    return np.sin(self.W @ x)


def test_redefining_a_method_recompiles():
    model = Patched(rand(3, 3))
    g = grad(model.loss)
    x = rand(3)
    first = g(x)
    old = Patched.helper
    try:
        Patched.helper = _sine_helper  # the class now resolves `helper` to another function
        np.testing.assert_allclose(g(x), model.W.T @ np.cos(model.W @ x), rtol=1e-12)
    finally:
        Patched.helper = old
    np.testing.assert_allclose(g(x), first, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# objects made inside the differentiated function: `__init__` inlined, fields known
# ---------------------------------------------------------------------------------------------

class Gaussian:
    def __init__(self, mu, log_sigma):
        self.mu = mu
        self.log_sigma = log_sigma
        self.size = 3

    @property
    def sigma(self):
        return np.exp(self.log_sigma)

    def log_prob(self, x):
        z = (x - self.mu) / self.sigma
        return np.sum(-0.5 * z ** 2 - self.log_sigma)

    def __call__(self, x):
        return self.log_prob(x)


class Shifted(Gaussian):
    def __init__(self, mu):
        Gaussian.__init__(self, mu, 0.0)
        self.shift = mu * 2.0


def makes_gaussian(mu, log_sigma, x):
    return Gaussian(mu, log_sigma).log_prob(x)


def calls_made_object(mu, x):
    g = Gaussian(mu, 0.3)
    return g(x) + np.sum(g.mu * g.size)


def subclass_made(mu, x):
    return Shifted(mu).log_prob(x) + np.sum(Shifted(mu).shift)


def made_in_loop(mu, x):
    s = 0.0
    for i in range(3):
        g = Gaussian(mu * i, 0.1)
        if i > 0:
            s = s + g.log_prob(x)
    return s


def field_set_after(mu, x):
    g = Gaussian(mu, 0.1)
    g.mu = mu * 2.0
    return g.log_prob(x)


def returns_made_object(mu):
    return Gaussian(mu * 2.0, 0.1)


def field_set_in_branch(mu, x):
    g = Gaussian(mu, 0.1)
    if np.sum(x) > 0:
        g.mu = mu * 2.0  # <-
    return g.log_prob(x)


MU = rand(3)


def test_object_made_inside_the_function():
    check_grads(makes_gaussian, MU, 0.2, rand(3), wrt=(0, 1))
    check_grads(calls_made_object, MU, rand(3))
    check_grads(subclass_made, MU, rand(3))


def test_object_made_in_a_loop_and_read_in_a_branch():
    check_grads(made_in_loop, MU, rand(3))


def test_field_of_a_made_object_set_in_the_same_block():
    check_grads(field_set_after, MU, rand(3))


def test_made_object_returned_through_vjp():
    out, pullback = vjp(returns_made_object, MU)
    assert type(out) is Gaussian and out.size == 3
    np.testing.assert_allclose(out.mu, MU * 2.0)
    (g,) = pullback(Gaussian(np.ones(3), 1.0))
    np.testing.assert_allclose(g, np.full(3, 2.0))


def test_field_of_a_made_object_set_in_a_branch_is_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(field_set_in_branch)(MU, rand(3))
    assert "branch or loop" in str(info.value)
    lines, first = inspect.getsourcelines(field_set_in_branch)
    assert info.value.lineno == first + next(i for i, ln in enumerate(lines) if "# <-" in ln)


def test_second_derivatives_and_forward_mode_of_a_bound_method():
    from adjoint_compiler import hessian, hvp, jacfwd, jacrev

    model = Model(rand(3, 3), rand(3))
    x = rand(3)
    H = hessian(model.loss)(x)
    g = grad(model.loss)
    eps = 1e-6
    fd = np.array([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-6)
    v = rand(3)
    np.testing.assert_allclose(hvp(model.loss)(x, v), H @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jacfwd(model.helper)(x), jacrev(model.helper)(x), rtol=1e-10, atol=1e-12)


class Holds:
    def __init__(self, mu):
        self.mu = mu


def updates_a_field_array_in_place(mu, y):
    g = Holds(mu)
    mu += y  # <- (the same array as g.mu: Python changes both)
    return np.sum(g.mu * y)


def test_in_place_update_of_an_array_an_object_holds_is_refused():
    from adjoint_compiler import MutationError

    with pytest.raises(MutationError) as info:
        grad(updates_a_field_array_in_place, 1)(rand(3), rand(3))
    assert "g.mu" in str(info.value)


@dataclass
class Temperature:
    T: float
    W: np.ndarray


def reads_T(p, x):
    return p.T * np.sum(p.W @ x)


def test_generated_code_reads_fields_by_name():
    from adjoint_compiler import adjoint_source

    src = adjoint_source(MODEL.loss)
    assert "self.W" in src and "self.b" in src and "getattr(" not in src
    assert "# L" in src
    check_grads(reads_T, Temperature(1.5, rand(3, 3)), rand(3))
    src = adjoint_source(reads_T, args=(Temperature(1.5, rand(3, 3)), rand(3)))
    assert "getattr(p, 'T')" in src  # (`p.T` would read as a transpose)


# ---------------------------------------------------------------------------------------------
# super()
# ---------------------------------------------------------------------------------------------

class Affine:
    def __init__(self, W):
        super().__init__()
        self.W = W

    def apply(self, x):
        return self.W @ x


class AffineTanh(Affine):
    def __init__(self, W, b):
        super().__init__(W)
        self.b = b

    def apply(self, x):
        return np.tanh(super().apply(x) + self.b)


def uses_super(layer, x):
    return np.sum(layer.apply(x) ** 2)


def makes_with_super(w, b, x):
    return np.sum(AffineTanh(w, b).apply(x))


def test_super_in_methods_and_init():
    layer = AffineTanh(rand(3, 3), rand(3))
    check_grads(uses_super, layer, rand(3))
    g = check_tree(uses_super, layer, rand(3))
    assert type(g) is AffineTanh
    check_grads(makes_with_super, rand(3, 3), rand(3), rand(3), wrt=(0, 1, 2))


class WithOptionalBias:
    scale = 3.0

    def __init__(self, w):
        self.w = w


def optional_fields(x):
    m = WithOptionalBias(x * 2.0)
    b = getattr(m, "bias", None)
    s = np.sum(getattr(m, "w") ** 2) * getattr(m, "scale", 1.0)
    if b is not None:
        s = s + b
    if hasattr(m, "w") and not hasattr(m, "bias"):
        s = s * 2.0
    return s


def test_getattr_with_a_default_and_hasattr_are_decided_as_python_decides_them():
    from adjoint_compiler.testing import check_grads

    x = np.array([0.5, 1.0, -0.3])
    check_grads(optional_fields, x)
    np.testing.assert_allclose(grad(optional_fields)(x), 48.0 * x, rtol=1e-12)  # (by hand: 6 * 4 x**2)


def relu(h):
    return np.maximum(h, 0.0)


class Dense:
    def __init__(self, W, act):
        self.W, self.act = W, act

    def __call__(self, h):
        return self.act(h @ self.W)


def layers_in_a_display(W1, W2, X):
    h = X
    for layer in [Dense(W1, np.tanh), Dense(W2, relu)]:
        h = layer(h)
    return np.sum(h ** 2)


def layers_in_a_list(W1, W2, X):
    layers = [Dense(W1, np.tanh), Dense(W2, np.sin)]
    h = X
    for k, layer in enumerate(layers):
        h = layer(h) * (k + 1.0)
    return np.sum(h ** 2)


@pytest.mark.parametrize("f", [layers_in_a_display, layers_in_a_list])
def test_a_loop_over_objects_made_here_calls_each_one_s_methods(f):
    rng = np.random.default_rng(11)
    W1, W2, X = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((5, 3))
    check_grads(f, W1, W2, X, wrt=(0, 1))


class Rod:
    def __init__(self, u0, dt):
        self.u = u0.copy()
        self.dt = dt

    def step(self):
        self.u[1:] += self.dt * np.sin(self.u[:-1])
        self.u[0] = self.u[0] * 0.9

    def energy(self):
        return np.sum(self.u ** 2)


def rod_steps(u0):
    rod = Rod(u0, 0.1)
    rod.step()
    rod.step()
    return rod.energy() + np.sum(rod.u)


def rods_made_per_trip(u0):
    total = 0.0
    for k in range(2):
        rod = Rod(u0 * (k + 1.0), 0.1)
        rod.step()
        total = total + rod.energy()
    return total


def rod_stepped_in_a_loop(u0):
    rod = Rod(u0, 0.1)
    for _ in range(3):
        rod.step()
    return rod.energy()


def test_a_method_writing_into_a_field_in_place_is_followed_in_the_block_that_made_the_object():
    u0 = np.array([0.3, -0.5, 0.8, 0.1])
    check_grads(rod_steps, u0)
    check_grads(rods_made_per_trip, u0)
    # written by a loop the object was made before: the field is not a loop value, refused
    from adjoint_compiler.errors import MutationError

    with pytest.raises(MutationError, match=r"`self.u` holds an array that was written .* in a loop or branch"):
        grad(rod_stepped_in_a_loop)(u0)


class Accumulator:
    def __init__(self, x):
        self.total = 0.0
        self.u = x * 1.0

    def add(self, v):
        self.total = self.total + np.sum(v * self.u)
        self.u = self.u * 1.1

    def scale(self, c):
        self.u *= c
        self.total += 1.0


def accumulate_twice(x):
    acc = Accumulator(x)
    acc.add(x)
    acc.scale(2.0)
    acc.add(np.sin(x))
    return acc.total + np.sum(acc.u)


def field_set_after_the_object_was_put_in_a_list(x):
    g = Accumulator(x)
    items = [g]
    items.append(g)
    g.u = x * 3.0
    return np.sum(items[0].u)


def test_methods_set_fields_and_update_them_in_place_in_the_block_that_made_the_object():
    check_grads(accumulate_twice, np.array([0.3, -0.5, 0.9]))


def test_a_field_set_after_the_object_was_built_at_run_time_is_refused():
    """`items` holds the object itself in Python, so `items[0].u` is the new field; the list was
    built at run time from the fields as they were (the gradient of the old `u` came out)."""
    with pytest.raises(UnsupportedSyntaxError, match=r"`g.u = \.\.\.`: the object was put in a list"):
        grad(field_set_after_the_object_was_put_in_a_list)(np.array([1.0, 2.0]))


def layers_returned(W1, W2, X):
    layers = [Dense(W1, np.tanh), Dense(W2 * 2.0, np.tanh)]
    h = X
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2), layers


def test_a_display_of_objects_iterated_then_returned_is_built_at_the_return():
    rng = np.random.default_rng(5)
    W1, W2, X = rng.standard_normal((3, 3)), rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    (value, layers), g = value_and_grad(layers_returned, wrt=(0, 1), has_aux=True)(W1, W2, X)
    assert isinstance(layers, list) and isinstance(layers[1], Dense)
    np.testing.assert_array_equal(layers[1].W, W2 * 2.0)
    check_grads(lambda W1, W2, X: layers_returned(W1, W2, X)[0], W1, W2, X, wrt=(0, 1))
    fd = np.zeros_like(W1)
    for k in np.ndindex(W1.shape):
        e = np.zeros_like(W1)
        e[k] = 1e-6
        fd[k] = (layers_returned(W1 + e, W2, X)[0] - layers_returned(W1 - e, W2, X)[0]) / 2e-6
    np.testing.assert_allclose(g[0], fd, rtol=1e-5, atol=1e-7)  # (the has_aux gradient: finite differences)

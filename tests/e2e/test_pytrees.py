"""End-to-end tests of structured parameters (pytrees): dicts, tuples, lists, NamedTuples,
dataclasses and the user's objects as arguments and as results, nested; the gradient has the
argument's structure (dataclasses and named tuples rebuilt as their own type, dict keys kept, None
for a leaf that is not a number); `wrt` names a structured argument; `vjp` takes structured
cotangents and checks them.

Every gradient is checked against central finite differences (check_grads, random directions).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest
from tree_helpers import assert_same_structure, check_tree

from adjoint_compiler import ArgumentError, MutationError, grad, jvp, value_and_grad, vjp

RNG = np.random.default_rng(16)


def rand(*shape):
    return RNG.standard_normal(shape)


@dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class Params:
    layers: list
    scale: float
    name: str = "net"
    depth: int = 2


class Gauss(NamedTuple):
    mean: np.ndarray
    log_std: float


class Plain:
    def __init__(self, w, c):
        self.w = w
        self.c = c


def layers(n=2):
    return [Layer(rand(3, 3), rand(3)) for _ in range(n)]


X = rand(3)


# ---------------------------------------------------------------------------------------------
# one test per container kind: the gradient's structure and leaf types are the argument's
# ---------------------------------------------------------------------------------------------

def dict_loss(p, x):
    return np.sum(np.tanh(p["W"] @ x + p["b"])) * p["s"]


def tuple_loss(p, x):
    W, b = p
    return np.sum(np.sin(W @ x) * b)


def list_loss(p, x):
    return np.sum(p[0] * x) * p[1] + np.sum(p[2] ** 2)


def namedtuple_loss(g, x):
    return np.sum((x - g.mean) ** 2) * np.exp(-2.0 * g.log_std) + g.log_std


def dataclass_loss(layer, x):
    return np.sum(np.tanh(layer.W @ x + layer.b) ** 2)


def object_loss(o, x):
    return np.sum(o.w * x) * o.c


@pytest.mark.parametrize("f, p", [
    (dict_loss, {"W": rand(3, 3), "b": rand(3), "s": 0.7}),
    (tuple_loss, (rand(3, 3), rand(3))),
    (list_loss, [rand(3), 1.5, rand(2)]),
    (namedtuple_loss, Gauss(rand(3), 0.3)),
    (dataclass_loss, Layer(rand(3, 3), rand(3))),
    (object_loss, Plain(rand(3), 2.0)),
], ids=["dict", "tuple", "list", "namedtuple", "dataclass", "object"])
def test_gradient_has_the_structure_of_the_argument(f, p):
    g = check_tree(f, p, X)
    assert type(g) is type(p)
    gx = check_tree(f, p, X, wrt=1)  # the structure as a constant
    assert isinstance(gx, np.ndarray)


def test_dict_keys_kept_in_order():
    p = {"s": 0.7, "W": rand(3, 3), "b": rand(3)}
    g = grad(dict_loss)(p, X)
    assert list(g) == ["s", "W", "b"]


# ---------------------------------------------------------------------------------------------
# nesting, loops and branches
# ---------------------------------------------------------------------------------------------

def mlp(p, x):
    h = x
    for layer in p.layers:
        h = np.tanh(layer.W @ h + layer.b)
    return p.scale * np.sum(h ** 2)


def dict_mlp(p, x):
    h = x
    for layer in p["layers"]:
        h = np.tanh(layer["W"] @ h + layer["b"])
    return np.sum(h ** 2) * p["s"]


def by_depth(p, x):
    s = 0.0
    for i in range(p.depth):  # an integer field as a loop bound
        s = s + np.sum(p.layers[i].b * x) * p.scale
    return s


def branchy(p, x):
    if p.scale > 0:
        s = np.sum(p.layers[0].W @ x)
    else:
        s = np.sum(p.layers[1].W @ x)
    if p.name == "net":
        s = s * p.scale
    return s


def mixed(p, x):
    g = p["gauss"]
    return namedtuple_loss(g, x) + np.sum(p["pair"][0] * x) * p["pair"][1] + p["plain"].c * np.sum(p["plain"].w)


def test_dataclass_holding_a_list_of_dataclasses():
    p = Params(layers(), 0.7)
    g = check_tree(mlp, p, X)
    assert type(g.layers) is list and all(type(item) is Layer for item in g.layers)
    assert g.name is None and g.depth == 0.0


def test_dict_of_lists_of_dicts():
    p = {"layers": [{"W": rand(3, 3), "b": rand(3)} for _ in range(2)], "s": 1.5}
    g = check_tree(dict_mlp, p, X)
    assert type(g["layers"][1]) is dict


def test_integer_field_as_loop_bound():
    check_tree(by_depth, Params(layers(), 0.7), X)


@pytest.mark.parametrize("scale", [0.7, -0.7])
def test_fields_read_in_branches(scale):
    check_tree(branchy, Params(layers(), scale), X)
    check_tree(branchy, Params(layers(), scale, name="other"), X)


def test_nested_mixed_containers():
    p = {"gauss": Gauss(rand(3), 0.2), "pair": (rand(3), 2.0), "plain": Plain(rand(3), 0.5)}
    g = check_tree(mixed, p, X)
    assert type(g["gauss"]) is Gauss and type(g["pair"]) is tuple and type(g["plain"]) is Plain


def unpacks(g, x):
    mean, log_std = g
    return np.sum(mean * x) * log_std + g[0][1]


def test_named_tuple_unpacked_and_indexed():
    check_tree(unpacks, Gauss(rand(3), 0.4), X)


def test_wrt_tuple_with_structures():
    p = {"W": rand(3, 3), "b": rand(3), "s": 0.7}
    gp, gx = check_tree(dict_loss, p, X, wrt=(0, 1))
    assert type(gp) is dict and isinstance(gx, np.ndarray)


def test_value_and_grad_with_structure():
    p = Params(layers(), 0.7)
    value, g = value_and_grad(mlp)(p, X)
    assert np.isclose(value, mlp(p, X))
    assert_same_structure(g, p)


def test_non_numeric_leaves_get_none():
    p = {"W": rand(3, 3), "b": rand(3), "s": 0.7, "label": "layer", "flag": True, "none": None, "f": np.tanh}
    g = grad(dict_loss)(p, X)
    assert g["label"] is None and g["flag"] is None and g["none"] is None and g["f"] is None


def test_unused_leaves_get_zeros():
    p = {"W": rand(3, 3), "b": rand(3), "s": 0.7, "unused": rand(2), "k": 3}
    g = grad(dict_loss)(p, X)
    np.testing.assert_array_equal(g["unused"], np.zeros(2))
    assert g["k"] == 0.0 and type(g["k"]) is float


def test_cache_follows_the_structure():
    f = grad(dict_loss)
    p1 = {"W": rand(3, 3), "b": rand(3), "s": 0.7}
    p2 = {"W": rand(3, 3), "b": 0.5, "s": 0.7}  # b a number now: compiled again
    assert type(f(p1, X)["b"]) is np.ndarray
    assert type(f(p2, X)["b"]) is float
    check_tree(dict_loss, p2, X)


# ---------------------------------------------------------------------------------------------
# structures as results: vjp and structured cotangents
# ---------------------------------------------------------------------------------------------

@dataclass
class Out:
    y: np.ndarray
    total: float
    tag: str


def returns_dict(x):
    return {"a": x * 2.0, "b": np.sin(x)}


def returns_record(x):
    return Out(x * 3.0, np.sum(x ** 2), "hi")


def returns_namedtuple(g):
    return Gauss(g.mean * 2.0, g.log_std ** 2)


def returns_pair(x):
    d = {"u": x ** 2}
    return np.sum(x), d


def test_vjp_of_a_dict_result():
    x = rand(3)
    out, pullback = vjp(returns_dict, x)
    assert type(out) is dict and list(out) == ["a", "b"]
    (gx,) = pullback({"a": np.ones(3), "b": np.full(3, 2.0)})
    np.testing.assert_allclose(gx, 2.0 + 2.0 * np.cos(x), rtol=1e-12)


def test_vjp_of_a_dataclass_result():
    x = rand(3)
    out, pullback = vjp(returns_record, x)
    assert type(out) is Out and out.tag == "hi"
    (gx,) = pullback(Out(np.ones(3), 2.0, "ignored"))
    np.testing.assert_allclose(gx, 3.0 + 4.0 * x, rtol=1e-12)


def test_vjp_of_a_namedtuple_result_takes_structured_arguments():
    g = Gauss(rand(3), 0.3)
    out, pullback = vjp(returns_namedtuple, g)
    assert type(out) is Gauss
    (gg,) = pullback(Gauss(np.ones(3), 1.0))
    assert type(gg) is Gauss
    np.testing.assert_allclose(gg.mean, np.full(3, 2.0))
    assert np.isclose(gg.log_std, 0.6)


def test_vjp_of_a_tuple_holding_a_dict():
    x = rand(3)
    _, pullback = vjp(returns_pair, x)
    (gx,) = pullback((1.0, {"u": np.ones(3)}))
    np.testing.assert_allclose(gx, 1.0 + 2.0 * x, rtol=1e-12)


@pytest.mark.parametrize("f, bad, words", [
    (returns_dict, {"a": np.ones(3)}, ["returns_dict", "dict with keys 'a', 'b'", "got a dict with keys 'a'"]),
    (returns_dict, {"a": np.ones(3), "b": np.ones(2)}, ["cotangent['b']", "(3,)", "(2,)"]),
    (returns_record, {"y": np.ones(3)}, ["Out with fields 'y', 'total', 'tag'", "got a dict"]),
    (returns_record, Out(np.ones(3), "x", "t"), ["cotangent.total", "real numbers"]),
])
def test_vjp_checks_structured_cotangents(f, bad, words):
    _, pullback = vjp(f, rand(3))
    with pytest.raises(ArgumentError) as info:
        pullback(bad)
    for w in words:
        assert w in str(info.value), str(info.value)


def aux_dict(x):
    return np.sum(x ** 2), {"mean": np.mean(x), "tag": "t"}


def test_has_aux_with_a_dict():
    x = rand(3)
    (_, aux), g = value_and_grad(aux_dict, has_aux=True)(x)
    assert aux["tag"] == "t" and np.isclose(aux["mean"], np.mean(x))
    np.testing.assert_allclose(g, 2.0 * x)


def built_inside(x, w):
    layer = Layer(W=w, b=x * 0.5)
    g = Gauss(mean=x, log_std=0.1)
    return dataclass_loss(layer, x) + namedtuple_loss(g, x * 2.0)


def test_structures_built_inside_the_function():
    check_tree(built_inside, rand(3), rand(3, 3), wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# refusals
# ---------------------------------------------------------------------------------------------

def writes_into_a_field(p, x):
    W = p["W"]
    W[0] = 0.0  # <-
    return np.sum(W @ x)


def test_write_into_an_array_of_a_structure_is_refused_and_located():
    p = {"W": rand(3, 3)}
    before = p["W"].copy()
    with pytest.raises(MutationError) as info:
        grad(writes_into_a_field)(p, X)
    assert "W[0] = 0.0" in str(info.value)
    np.testing.assert_array_equal(p["W"], before)


@dataclass
class Shaped:
    size: float
    W: np.ndarray


def reads_size_of_items(ps, x):
    return sum(p.size * np.sum(p.W @ x) for p in ps)


@dataclass
class Sized:
    size: float
    W: np.ndarray


def test_field_named_like_an_array_attribute_in_a_list_of_one_kind_works():
    check_tree(reads_size_of_items, [Shaped(2.0, rand(3, 3)), Shaped(-1.0, rand(3, 3))], X)


def test_field_named_like_an_array_attribute_in_a_list_of_two_classes_works():
    check_tree(reads_size_of_items, [Shaped(2.0, rand(3, 3)), Sized(1.0, rand(3, 3))], X)


def scaled_items(ps, x):
    return sum(np.sum(p.W @ x) for p in ps if not isinstance(p, float))


def test_field_named_like_an_array_attribute_in_a_list_of_unknown_items_is_refused():
    # a structure beside a number: items of unknown kind, where `p.size` could be ndarray.size
    with pytest.raises(ArgumentError) as info:
        grad(scaled_items)([Shaped(2.0, rand(3, 3)), 1.0], X)
    assert "`size`" in str(info.value)


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, h):
        return np.tanh(self.W @ h + self.b)


def net(layers, x):
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def test_list_of_objects_of_one_class():
    ls = [Dense(rand(3, 3), rand(3)) for _ in range(3)]
    g = check_tree(net, ls, X)
    assert type(g) is list and all(type(item) is Dense for item in g)


def size_of_argument(p, x):
    return p.size * np.sum(p.W @ x)


def test_field_named_like_an_array_attribute_of_an_argument_works():
    check_tree(size_of_argument, Shaped(2.0, rand(3, 3)), X)


def test_forward_mode_refuses_structures_clearly():
    with pytest.raises(ArgumentError) as info:
        jvp(dict_loss, ({"W": rand(3, 3), "b": rand(3), "s": 0.7}, X), ({"W": rand(3, 3), "b": rand(3), "s": 1.0}, X))
    assert "reverse mode" in str(info.value)


# ---------------------------------------------------------------------------------------------
# a dict of parameters read whole: .values(), .items(), .keys(), a key held in a variable
# ---------------------------------------------------------------------------------------------

def l2_penalty(p, x):
    return np.sum(p["W"] @ x) + 0.1 * sum(np.sum(w ** 2) for w in p.values())


def over_items(p, x):
    s = 0.0
    for k, v in p.items():
        if k == "W":
            s = s + np.sum(v @ x)
        else:
            s = s + np.sum(v * x)
    return s


def over_keys(p, x):
    s = 0.0
    for k in p.keys():  # noqa: SIM118 -- (the method is what is tested)
        s = s + np.sum(p[k] * 2.0) * np.sum(x)
    return s


def over_dict(p, x):
    return np.sum(np.stack([np.sum(p[k] ** 2) for k in p])) + len(p) * np.sum(x)


@pytest.mark.parametrize("f", [l2_penalty, over_items, over_keys, over_dict])
def test_dict_read_whole(f):
    p = {"W": rand(3, 3), "b": rand(3)}
    g = check_tree(f, p, X)
    assert list(g) == ["W", "b"]
    check_tree(f, p, X, wrt=1)


class Node:
    def __init__(self, w):
        self.w = w
        self.parent = self  # a cycle


def reads_node(n, x):
    return np.sum(n.w * x)


def test_cyclic_object_gradient_cut_where_it_repeats():
    n = Node(rand(3))
    g = grad(reads_node)(n, X)
    np.testing.assert_allclose(g.w, X)
    assert g.parent is None


@dataclass
class ComplexHolder:
    z: np.ndarray


def test_complex_array_inside_a_dataclass_is_refused():
    with pytest.raises(ArgumentError) as info:
        grad(lambda p, x: np.sum(np.abs(p.z) * x))(ComplexHolder(np.ones(3) * 1j), X)
    assert "complex" in str(info.value)


def test_jacrev_and_hessian_refuse_structures():
    from adjoint_compiler import hessian, jacrev

    with pytest.raises(ArgumentError, match="argument 0 is a dict"):
        jacrev(lambda p, x: p["W"] @ x)({"W": rand(3, 3)}, X)
    with pytest.raises(ArgumentError, match="argument 0 is a dict"):
        hessian(lambda p: np.sum(p["W"] ** 3))({"W": rand(3, 3)})


# ---------------------------------------------------------------------------------------------
# functional updates and dispatch on the type
# ---------------------------------------------------------------------------------------------

def replaced_layer(layer, x):
    doubled = dataclasses.replace(layer, b=layer.b * 2.0)
    return dataclass_loss(doubled, x)


def replaced_gauss(g, x):
    wider = g._replace(log_std=g.log_std + 0.5)
    return namedtuple_loss(wider, x)


def dispatch(p, x):
    if isinstance(p, dict):
        return np.sum(p["W"] @ x)
    return np.sum(p.W @ x)


def test_dataclass_replace_and_namedtuple_replace():
    g = check_tree(replaced_layer, Layer(rand(3, 3), rand(3)), X)
    assert type(g) is Layer
    g = check_tree(replaced_gauss, Gauss(rand(3), 0.2), X)
    assert type(g) is Gauss


def test_isinstance_dispatch_between_structures():
    check_tree(dispatch, {"W": rand(3, 3)}, X)
    check_tree(dispatch, Layer(rand(3, 3), rand(3)), X)


# ---------------------------------------------------------------------------------------------
# dict comprehensions and dicts made at run time
# ---------------------------------------------------------------------------------------------

def scaled_tree(p, x):
    q = {k: v * 2.0 for k, v in p.items() if k != "skip"}
    return np.sum(q["W"] @ x) + np.sum(q["b"] ** 2)


def repeated_key(p, x):
    q = dict([("a", p["W"] @ x), ("a", p["b"] * 3.0)])  # the later pair wins  # noqa: C406 -- (dict() of pairs is what is tested)
    return np.sum(q["a"])


def sgd_step_total(p, g, lr):
    new = {k: p[k] - lr * g[k] for k in p}
    return sum(np.sum(v ** 2) for v in new.values()) + sum(np.sum(v) for _, v in new.items())


def mapped_tree(p):
    return {k: np.sin(v) for k, v in p.items()}


def test_dict_comprehension():
    p = {"W": rand(3, 3), "b": rand(3), "skip": 1.0}
    check_tree(scaled_tree, p, X)
    g = check_tree(repeated_key, p, X)
    np.testing.assert_array_equal(g["W"], np.zeros((3, 3)))


def test_dict_made_at_run_time_read_whole():
    p = {"W": rand(3, 3), "b": rand(3)}
    check_tree(sgd_step_total, p, {"W": rand(3, 3), "b": rand(3)}, 0.1, wrt=(0, 1))


def test_vjp_of_a_dict_comprehension():
    p = {"W": rand(3, 3), "b": rand(3)}
    out, pullback = vjp(mapped_tree, p)
    assert list(out) == ["W", "b"]
    (g,) = pullback({"W": np.ones((3, 3)), "b": np.ones(3)})
    np.testing.assert_allclose(g["W"], np.cos(p["W"]))
    np.testing.assert_allclose(g["b"], np.cos(p["b"]))


# ---------------------------------------------------------------------------------------------
# a list of objects of several classes (layers): read by position, loops over it unrolled
# ---------------------------------------------------------------------------------------------

class Tanh:
    def __call__(self, h):
        return np.tanh(h)


class Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, h):
        return h * self.s


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def loss(self, x):
        return np.sum(self(x) ** 2) + np.sum(self.layers[0].W ** 2)


def enumerated_layers(layers, x):
    for i, layer in enumerate(layers):
        x = layer(x) * (i + 1)
    return np.sum(x ** 2)


def mixed_layers():
    return [Dense(rand(3, 3), rand(3)), Tanh(), Scale(0.5), Dense(rand(2, 3), rand(2))]


def test_list_of_objects_of_several_classes():
    layers = mixed_layers()
    g = check_tree(enumerated_layers, layers, X)
    assert [type(item) for item in g] == [Dense, Tanh, Scale, Dense]
    check_tree(enumerated_layers, layers, X, wrt=1)


def test_model_holding_layers_of_several_classes():
    model = Sequential(mixed_layers())
    check_grads_x = check_tree(model.loss, X)
    assert check_grads_x.shape == (3,)
    g = check_tree(Sequential.loss, model, X)
    assert type(g) is Sequential and type(g.layers[2]) is Scale


@dataclass
class Inner:
    size: float


@dataclass
class Outer:
    inner: Inner
    W: np.ndarray


def nested_size(ls, x):
    return sum(item.inner.size * np.sum(item.W @ x) for item in ls if not isinstance(item, float))


def test_nested_field_named_like_an_array_attribute_in_a_list_of_unknown_items_is_refused():
    with pytest.raises(ArgumentError, match="`size`"):
        grad(nested_size)([Outer(Inner(2.0), rand(3, 3)), 1.0], X)
    check_tree(nested_size, [Outer(Inner(2.0), rand(3, 3)), Outer(Inner(3.0), rand(3, 3))], X)


class TreeNode:
    def __init__(self, w, parent=None):
        self.w = w
        self.parent = parent
        self.children = []


def reads_tree(n, x):
    return np.sum(n.w * x) + np.sum(n.children[1].w * x)


def test_object_graph_with_cycles_and_fan_out_stays_cheap():
    import time

    root = TreeNode(rand(3))
    for _ in range(10):
        child = TreeNode(rand(3), root)
        root.children.append(child)
        child.children = [TreeNode(rand(3), child) for _ in range(10)]
    g = grad(reads_tree)
    g(root, X)
    start = time.perf_counter()
    out = g(root, X)
    assert time.perf_counter() - start < 5.0
    np.testing.assert_allclose(out.w, X)
    np.testing.assert_allclose(out.children[1].w, X)
    assert out.children[0].parent is None  # (cut where the walk meets the root again)


def builds_structures(x, w):
    layer = Layer(w, x)
    g = Gauss(x * 2.0, 0.5)
    return np.sum(np.tanh(layer.W @ x + layer.b)) + np.sum(g.mean * g.log_std)


def test_forward_mode_through_structures_built_inside():
    from adjoint_compiler import jvp
    from adjoint_compiler.testing import check_jvp

    check_jvp(builds_structures, rand(3), rand(3, 3))
    _, tangent = jvp(returns_dict, (rand(3),), (np.ones(3),))
    assert type(tangent) is dict and list(tangent) == ["a", "b"]
    np.testing.assert_allclose(tangent["a"], np.full(3, 2.0))


def dict_comprehension_values(x, w):
    d = {k: x[k] * w for k in range(3)}
    return sum(v ** 2 for v in d.values()) + d[1] * d[2]


def dict_comprehension_items(x, w):
    d = {("k%d" % k): np.sin(x[k]) * w for k in range(3)}
    s = 0.0
    for name, v in d.items():
        s = s + v * len(name)
    return s


def dict_comprehension_repeated_keys(x, w):
    d = {k % 2: x[k] * w for k in range(3)}  # (the later pair replaces the earlier one)
    return d[0] * 2.0 + d[1]


@pytest.mark.parametrize("f", [dict_comprehension_values, dict_comprehension_items,
                               dict_comprehension_repeated_keys])
def test_dicts_made_at_run_time_in_both_modes(f):
    from adjoint_compiler.testing import check_grads, check_jvp

    x, w = np.array([0.3, -1.2, 0.8]), 1.7
    check_grads(f, x, w, wrt=(0, 1))
    check_jvp(f, x, w)


def by_sorted_keys(d):
    total = 0.0
    for i, k in enumerate(sorted(d)):
        total = total + np.sum(np.sin(d[k])) * (i + 1.0)
    return total


def by_key_order(d):
    first = min(d, key=lambda k: k[::-1])
    return sum(np.sum(d[k] ** 2) * (j + 1.0) for j, k in enumerate(sorted(d, reverse=True))) + np.sum(d[first])


def test_sorted_min_max_of_a_dict_iterate_its_keys():
    # (autograd's test_dict test_iter: `sorted(d)` read the dict by position, a KeyError)
    d = {"item_2": np.array([0.3, -0.7, 1.1]), "item_1": np.array([0.5, 0.2]), "b": np.array([1.3])}
    g = check_tree(by_sorted_keys, d)
    np.testing.assert_allclose(g["item_1"], 2.0 * np.cos(d["item_1"]))  # "b" < "item_1" < "item_2"
    check_tree(by_key_order, d)


def with_defaults(d, x):
    missing = d.get("zz")
    return np.sum(d.get("item_1", x) ** 2) + np.sum(d.get("zz", x * 2.0) * 3.0) + (1.0 if missing is None else 0.0)


def test_dict_get_with_a_literal_key():
    # (autograd's test_dict test_get: `d.get('item_1', x)` had no rule)
    d = {"item_1": np.array([0.3, -0.5]), "item_2": np.array([1.0])}
    g = check_tree(with_defaults, d, np.array([1.0, 2.0]), wrt=(0, 1))
    np.testing.assert_allclose(g[1], [6.0, 6.0])


def by_keywords(x):
    d = dict(a=x * 2.0, b=np.sin(x))
    e = dict({"a": x}, c=x * 3.0)
    return np.sum(d["a"] * d["b"]) + np.sum(e["a"] * e["c"])


def test_dict_made_by_keywords_is_a_display():
    # (autograd's test_dict: `dict(..., b=x)` had no rule for its keyword, `dict({'a': x})` named an
    # internal name in its error)
    x = np.array([0.3, 0.7])
    g = check_tree(by_keywords, x)
    np.testing.assert_allclose(g, 2 * np.sin(x) + 2 * x * np.cos(x) + 6 * x)

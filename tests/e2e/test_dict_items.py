"""`d[k] = v` and `d[k] op= v` into a dict the function makes (resolved at compile time, ssa's
`set_dict_item`): a forward cache filled key by key, keys replaced and added, an item updated in
place. Gradients are checked against finite differences; where Python would change another
holder of the dict or of the item, the program is refused at the user's line."""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import MutationError, UnsupportedSyntaxError, grad
from adjoint_compiler.testing import check_grads

X = np.array([0.5, -1.5, 0.8])


def forward_cache(x):
    cache = {}
    z = x * 2.0
    cache["z"] = z
    cache["a"] = np.tanh(cache["z"])
    return np.sum(cache["a"] ** 2) + np.sum(cache["z"])


def replaced_and_added(x):
    d = {"h": x, "k": 1.5}
    d["h"] = np.sin(d["h"]) * d["k"]
    d["g"] = d["h"] * x
    return np.sum(d["g"]) + d["k"]


def item_updated(x):
    d = {"h": x * 1.0, "n": 2.0}
    d["h"] += x ** 2
    d["h"] *= d["n"]
    return np.sum(d["h"] ** 2)


def list_item_extended(x):
    d = {"hs": [x]}
    d["hs"] += [np.cos(x)]
    return np.sum(d["hs"][0] * d["hs"][1])


@pytest.mark.parametrize("f", [forward_cache, replaced_and_added, item_updated, list_item_extended])
def test_dict_items_assigned(f):
    check_grads(f, X.copy())


def item_updated_while_held(x):
    d = {"h": x * 1.0}
    h = d["h"]
    d["h"] += x  # Python changes `h` too
    return np.sum(h * x)


def dict_held_in_a_tuple(x):
    d = {"h": x}
    t = (d, 1.0)
    d["h"] = x * 2.0  # `t[0]` is the same dict
    return np.sum(t[0]["h"])


def test_an_item_another_name_holds_is_not_updated_in_place():
    with pytest.raises(MutationError, match=r"`d\[...\]` is updated in place here, but `h`") as err:
        grad(item_updated_while_held)(X.copy())
    assert err.value.loc.line == item_updated_while_held.__code__.co_firstlineno + 3


def test_a_dict_another_holder_shares_is_not_changed():
    with pytest.raises((MutationError, UnsupportedSyntaxError)):
        grad(dict_held_in_a_tuple)(X.copy())


def variable_key(x, k):
    d = {"a": x}
    d[k] = x * 2.0
    return np.sum(d["a"])


def test_a_key_that_is_not_a_constant_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="constant key"):
        grad(variable_key)(X.copy(), "a")


def scales_its_argument_through_a_dict(res, x):
    d = {"a": x, "s": 2.0}
    d["a"] *= 1.28  # Python updates the argument `x` itself
    res[0] = np.sum(d["a"] ** 2)


def test_an_argument_updated_through_a_dict_item_is_an_output_of_the_in_place_vjp():
    from adjoint_compiler import vjp

    x = np.array([0.3, -0.7, 1.2])
    out, pullback = vjp(scales_its_argument_through_a_dict, np.zeros(2), x.copy())
    np.testing.assert_allclose(out[1], 1.28 * x)  # (what the call leaves in `x`)
    _, gx = pullback((np.array([1.0, 0.0]), np.ones(3)))
    np.testing.assert_allclose(gx, 2 * 1.28 ** 2 * x + 1.28)  # (the analytic gradient)


def dense(params, x, scale=1.0):
    return np.sum(np.tanh(params["W"] @ x + params["b"])) * scale


def dict_display_passed(W, b, x):
    return dense({"W": W, "b": b * 2.0}, x) + dense(params={"W": W * W, "b": b}, x=x, scale=0.5)


def test_a_dict_display_passed_to_a_helper_is_read_there_as_here():
    from adjoint_compiler.testing import check_grads

    rng = np.random.default_rng(2)
    check_grads(dict_display_passed, rng.standard_normal((2, 3)), rng.standard_normal(2), rng.standard_normal(3),
                wrt=(0, 1))


def dict_to_a_library(W):
    d = {"W": W}
    return np.sum(np.array(list(d)))


def test_a_dict_made_here_passed_to_a_library_function_is_refused_at_its_line():
    from adjoint_compiler.errors import UnsupportedSyntaxError

    with pytest.raises(UnsupportedSyntaxError, match=r"the dict `d` is passed to a function that is not compiled"):
        grad(dict_to_a_library)(np.ones(2))

"""Family 5 (caching): programs whose baked-in values change between two gradients.

Each case's `then` changes something the compiled code read (a global constant, a loop bound or
branch flag, a helper, a default, a closure, an attribute, a rule) and the second gradient must
match finite differences of the changed program. All of these must work (`must_work`).
"""
from __future__ import annotations

import numpy as np
from families import Case, family

SHAPES = [(3,), (4,), (2, 3)]


def _arg(ch):
    shape = ch.choice(SHAPES)
    rng = np.random.default_rng(ch.int(0, 10_000))
    return rng.uniform(0.2, 1.5, size=shape)


def _use(ch, name: str, x: str) -> str:
    """An expression of `x` whose derivative depends on the value of `name`."""
    return ch.choice([f"{x} * {name}", f"np.sin({x} * {name})", f"{x} ** 2 * {name}", f"np.exp({x} * {name} / 4.0)",
                      f"({x} + {name}) ** 2", f"{name} * np.tanh({x})"])


@family("caching")
def gen_global_rebound(ch) -> Case:
    name = ch.choice(["SCALE", "alpha", "LR", "k_"])
    old, new = ch.float(-2.0, 2.0), ch.float(-3.0, 3.0)
    where = ch.choice(["direct", "helper", "nested"])
    expr = _use(ch, name, "x")
    if where == "direct":
        body = f"def f(x):\n    y = {expr}\n    return np.sum(y)\n"
    elif where == "helper":
        body = f"def helper(x):\n    return {expr}\n\ndef f(x):\n    return np.sum(helper(x) * 1.5)\n"
    else:
        body = (f"def inner(x):\n    return {expr}\n\ndef outer(x):\n    return inner(x) + x\n\n"
                f"def f(x):\n    return np.sum(outer(x) ** 2)\n")
    then = ch.choice([f"{name} = {new}", f"globals()['{name}'] = {new}", f"{name} = {name} + {new}"])
    return Case(f"{name} = {old}\n\n{body}", [_arg(ch)], must_work=True, then=then)


@family("caching")
def gen_loop_bound_or_flag(ch) -> Case:
    n, m = ch.int(0, 3), ch.int(0, 4)
    flag = ch.coin()
    src = (f"N = {n}\nFLAG = {flag}\n\n"
           "def f(x):\n    s = np.sum(x) * 0.5\n    for i in range(N):\n        s = s + np.sum(np.sin(x * (i + 1)))\n"
           "    if FLAG:\n        s = s * s\n    else:\n        s = s - np.sum(x ** 3)\n    return s\n")
    then = ch.choice([f"N = {m}", f"FLAG = {not flag}", f"N = {m}\nFLAG = {not flag}"])
    return Case(src, [_arg(ch)], must_work=True, then=then)


@family("caching")
def gen_helper_rebound(ch) -> Case:
    bodies = ["x ** 2", "np.sin(x)", "x * 3.0 - 1.0", "np.exp(x / 2.0)", "np.tanh(x) * x"]
    a, b = ch.choice(bodies), ch.choice(bodies)
    src = (f"def helper_a(x):\n    return {a}\n\ndef helper_b(x):\n    return {b}\n\nhelper = helper_a\n\n"
           "def f(x):\n    return np.sum(helper(x) * x)\n")
    how = ch.choice(["rebind", "cell", "code"])
    if how == "rebind":
        then = "helper = helper_b"
    elif how == "code":
        then = "helper_a.__code__ = helper_b.__code__"
    else:  # a notebook re-runs a cell defining `helper` again: a new file, new source
        cell = f"import numpy as np\\ndef helper(x):\\n    return {b}\\n"
        then = f"import fuzzgen as _fz\nhelper = _fz.load('{cell}', 'cell').helper"
    return Case(src, [_arg(ch)], must_work=True, then=then)


@family("caching")
def gen_default_changed(ch) -> Case:
    k, k2 = ch.float(-2.0, 2.0), ch.float(-2.0, 2.0)
    kind = ch.choice(["helper", "helper_kwonly", "top"])
    if kind == "helper":
        src = f"def helper(x, k={k}):\n    return {_use(ch, 'k', 'x')}\n\ndef f(x):\n    return np.sum(helper(x))\n"
        then = f"helper.__defaults__ = ({k2},)"
    elif kind == "helper_kwonly":
        src = f"def helper(x, *, k={k}):\n    return {_use(ch, 'k', 'x')}\n\ndef f(x):\n    return np.sum(helper(x))\n"
        then = ch.choice([f"helper.__kwdefaults__ = {{'k': {k2}}}", f"helper.__kwdefaults__['k'] = {k2}"])
    else:
        src = f"def f(x, k={k}):\n    return np.sum({_use(ch, 'k', 'x')})\n"
        then = f"f.__defaults__ = ({k2},)"
    return Case(src, [_arg(ch)], must_work=True, then=then)


@family("caching")
def gen_closure_changed(ch) -> Case:
    s, s2 = ch.float(-2.0, 2.0), ch.float(-2.0, 2.0)
    expr = _use(ch, "s", "x")
    kind = ch.choice(["rebuilt", "cell", "helper"])
    if kind == "rebuilt":
        src = f"def make(s):\n    def f(x):\n        return np.sum({expr})\n    return f\n\nf = make({s})\n"
        then = f"f = make({s2})"
    elif kind == "cell":
        src = (f"def make(s):\n    def f(x):\n        return np.sum({expr})\n    def set_s(v):\n"
               f"        nonlocal s\n        s = v\n    return f, set_s\n\nf, set_s = make({s})\n")
        then = f"set_s({s2})"
    else:
        src = (f"def make(s):\n    def helper(x):\n        return {expr}\n    return helper\n\nhelper = make({s})\n\n"
               "def f(x):\n    return np.sum(helper(x) * 2.0)\n")
        then = f"helper = make({s2})"
    return Case(src, [_arg(ch)], must_work=True, then=then)


@family("caching")
def gen_attribute_changed(ch) -> Case:
    v, v2 = ch.float(-2.0, 2.0), ch.float(-2.0, 2.0)
    kind = ch.choice(["namespace", "class"])
    if kind == "namespace":
        src = f"import types\ncfg = types.SimpleNamespace(scale={v})\n\ndef f(x):\n    return np.sum({_use(ch, 'cfg.scale', 'x')})\n"
        then = f"cfg.scale = {v2}"
    else:
        src = f"class Config:\n    scale = {v}\n\ndef f(x):\n    return np.sum({_use(ch, 'Config.scale', 'x')})\n"
        then = f"Config.scale = {v2}"
    return Case(src, [_arg(ch)], must_work=True, then=then)


RULES = ["y_bar * 3.0", "y_bar * np.cos(x)", "y_bar * 2.0 * x", "-y_bar", "y_bar * np.exp(x)"]


@family("caching")
def gen_rule_reregistered(ch) -> Case:
    first, second = ch.choice(RULES), ch.choice(RULES)
    forward = {"y_bar * 3.0": "3.0 * x", "y_bar * np.cos(x)": "np.sin(x)", "y_bar * 2.0 * x": "x ** 2",
               "-y_bar": "-x", "y_bar * np.exp(x)": "np.exp(x)"}
    src = ("from adjoint_compiler import adjoint\n\n"
           "def opaque(x):\n    return np.asarray(OPAQUE(x))\n\n"
           f"OPAQUE = lambda x: {forward[first]}\n\n"
           f"@adjoint(opaque)\ndef _(y, x):\n    x_bar += {first}\n\n"
           f"def f(x):\n    return np.sum(opaque(x) * {ch.float(0.5, 2.0)})\n")
    rule = (f"from adjoint_compiler import adjoint\\nimport numpy as np\\n\\ndef register(target):\\n"
            f"    @adjoint(target)\\n    def _(y, x):\\n        x_bar += {second}\\n")
    then = (f"OPAQUE = lambda x: {forward[second]}\n"
            f"import fuzzgen as _fz\n_fz.load('{rule}', 'rule').register(opaque)")
    return Case(src, [_arg(ch)], must_work=True, then=then)


@family("caching")
def gen_partial(ch) -> Case:
    """A `functools.partial` differentiated (or called by the function) with its bound values
    changed by rebuilding it: the bound values are arguments, never baked in."""
    k, k2 = ch.float(-2.0, 2.0), ch.float(-2.0, 2.0)
    expr = _use(ch, "k", "x")
    kind = ch.choice(["keyword", "positional", "inside"])
    if kind == "keyword":
        src = f"import functools\n\ndef g(x, k):\n    return np.sum({expr})\n\nf = functools.partial(g, k={k})\n"
        then = f"f = functools.partial(g, k={k2})"
    elif kind == "positional":
        src = f"import functools\n\ndef g(k, x):\n    return np.sum({expr})\n\nf = functools.partial(g, {k})\n"
        then = f"f = functools.partial(g, {k2})"
    else:
        src = (f"import functools\n\ndef g(x, k):\n    return {expr}\n\nh = functools.partial(g, k={k})\n\n"
               "def f(x):\n    return np.sum(h(x) * 1.5)\n")
        then = f"h = functools.partial(g, k={k2})"
    return Case(src, [_arg(ch)], must_work=(kind != "inside"), then=then)


@family("caching")
def gen_generated_names(ch) -> Case:
    """User names that the generated code also uses (`np`, `rt`, builtins), as globals, locals or
    parameters, some holding another object than the generated code's own."""
    kind = ch.choice(["np_other", "rt_global", "rt_local", "rt_param", "builtin_local", "builtin_global"])
    expr = _use(ch, "c", "x")
    if kind == "np_other":
        src = (f"import types\nimport numpy\nc = {ch.float(0.5, 2.0)}\n"
               f"np = types.SimpleNamespace(sin=numpy.{ch.choice(['cos', 'tanh', 'exp'])}, sum=numpy.sum, "
               "cos=numpy.sin, tanh=numpy.tanh, exp=numpy.exp)\n\n"
               f"def f(x):\n    return np.sum(np.sin({expr}))\n")
    elif kind == "rt_global":
        src = f"rt = {ch.float(0.5, 2.0)}\nc = 1.5\n\ndef f(x):\n    return np.sum({expr} * rt)\n"
    elif kind == "rt_local":
        src = f"c = 1.5\n\ndef f(x):\n    rt = {expr}\n    return np.sum(rt * rt)\n"
    elif kind == "rt_param":
        src = f"c = 1.5\n\ndef f(rt):\n    x = rt * 1.0\n    return np.sum({expr} * rt)\n"
    elif kind == "builtin_local":
        name = ch.choice(["sum", "abs", "float", "len", "max", "range", "tuple"])
        src = f"c = 1.5\n\ndef f(x):\n    {name} = {expr}\n    return np.sum({name} ** 2)\n"
    else:
        name = ch.choice(["abs", "float", "len", "max", "tuple"])
        src = f"{name} = {ch.float(0.5, 2.0)}\nc = 1.5\n\ndef f(x):\n    return np.sum({expr} * {name})\n"
    return Case(src, [_arg(ch)], must_work=True)


@family("caching")
def gen_object_changed(ch) -> Case:
    """A module-level object whose method the compiler inlines, then changed where the inlined
    code read it: an instance attribute shadowing the method, the object's class reassigned, a
    function or an object held in a field rebound (to another class's object), a class's
    staticmethod or method replaced, a number in a field rebound."""
    a, b = ch.choice(["x ** 2", "np.sin(x)", "x * 3.0 - 1.0"]), ch.choice(["np.tanh(x) * x", "np.exp(x / 2.0)", "x ** 3"])
    w, w2 = ch.float(0.5, 2.0), ch.float(-2.0, 2.0)
    classes = (f"def op_a(x):\n    return {a}\n\ndef op_b(x):\n    return {b}\n\n"
               "class Scale:\n    def __init__(self, w):\n        self.w = w\n\n    def __call__(self, x):\n"
               "        return x * self.w\n\n"
               "class Wave:\n    def __call__(self, x):\n        return np.sin(x) * 2.0\n\n"
               "class Model:\n    act = staticmethod(op_a)\n\n"
               f"    def __init__(self):\n        self.op = op_a\n        self.layer = Scale({w})\n        self.w = {w}\n\n"
               "    def forward(self, x):\n"
               "        return np.sum(self.act(x) + self.op(x) * self.w + self.layer(x) ** 2)\n\n"
               "    def other(self, x):\n        return np.sum(self.op(x) * x)\n\n"
               "class Other(Model):\n    def forward(self, x):\n        return np.sum(op_b(x) * self.w)\n\n"
               "m = Model()\n\n")
    via = ch.choice(["direct", "helper"])
    call = "m.forward(x)" if via == "direct" else "run(m, x)"
    helper = "def run(model, x):\n    return model.forward(x)\n\n" if via == "helper" else ""
    src = classes + helper + f"def f(x):\n    return {call} * 1.5\n"
    then = ch.choice(["m.forward = m.other", "m.__class__ = Other", "m.op = op_b", "m.layer = Wave()",
                      f"m.layer = Scale({w2})", "Model.act = staticmethod(op_b)",
                      "Model.forward = Model.other", f"m.w = {w2}", f"m.layer.w = {w2}"])
    return Case(src, [_arg(ch)], must_work=True, then=then)


@family("caching")
def gen_global_container_iterated(ch) -> Case:
    """A loop over a dict, list, tuple or set the function reads from outside, in the spellings
    people use (`for k in D`, `D.items()`, `D.values()`, `sorted(D)`, `enumerate(D)`), then the
    container changed in place. A dict iterates its keys (ints here collide with positions), a set
    is refused; the second gradient sees the new contents."""
    kind = ch.choice(["dict_int", "dict_str", "list", "tuple", "set"])
    keys = [0, 1, 2][:ch.int(1, 3)] if kind == "dict_int" else ["a", "b", "c"][:ch.int(1, 3)]
    weights = [round(ch.float(0.5, 3.0), 2) for _ in keys]
    if kind.startswith("dict"):
        value = "{" + ", ".join(f"{k!r}: {w}" for k, w in zip(keys, weights)) + "}"
        loop = ch.choice([("for k in W:", "W[k]"), ("for k, w in W.items():", "w"), ("for w in W.values():", "w"),
                          ("for k in sorted(W):", "W[k]"), ("for i, k in enumerate(W):", "(W[k] + i)"),
                          ("for k in W.keys():", "W[k]")])
        if kind == "dict_int" and ch.coin():
            loop = ("for k in W:", "(k + 1.0)")  # (the key itself: the k-th key, not W[k])
        then = ch.choice([f"W[{keys[0]!r}] = 4.5", f"W['z' if isinstance({keys[0]!r}, str) else 7] = 0.75"])
    else:
        value = {"list": "[{}]", "tuple": "({},)", "set": "{{{}}}"}[kind].format(", ".join(map(str, weights)))
        loop = ch.choice([("for w in W:", "w"), ("for i, w in enumerate(W):", "(w + i)"), ("for w in sorted(W):", "w")])
        then = "W.append(2.25)" if kind == "list" else f"W = {value.replace(str(weights[0]), '1.75', 1)}"
    head, weight = loop
    expr = ch.choice(["x", "np.sin(x)", "x ** 2", "np.tanh(x) * x"])
    src = f"W = {value}\n\ndef f(x):\n    s = 0.0\n    {head}\n        s = s + {weight} * np.sum({expr})\n    return s\n"
    return Case(src, [_arg(ch)], must_work=kind != "set", then=then)

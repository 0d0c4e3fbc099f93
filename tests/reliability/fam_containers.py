"""Family generator: Python builtins that consume a container (issue 15's probe of autograd's own
tests found `sorted(d)` of a dict crashing: the lowering read the dict by position).

`builtins` makes a helper `consume(c)` over one container - a dict of arrays with text keys, a
list or a tuple of arrays, a tuple of floats, a 1-D array, built by `f(x)` from slices of `x`, or
a dict of arrays passed to `f(x, d)` - consumed by `sorted` (plain, `reverse=`,
`key=`), `min`/`max` (plain or `key=`), `list`, `enumerate`, `zip`, `reversed`, `sum` or a
comprehension, and reads the items (by the keys for a dict) into a loss. Python's answer is what
counts: a gradient that matches finite differences, or a located refusal.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

_READS = ["np.sum(np.sin({v}))", "np.sum({v} * {v})", "np.sum(np.tanh({v})) * 2.0", "np.sum({v}) ** 2"]


def _container(ch, kind: str, n: int) -> tuple:
    """(the lines of `f(x)` that build the container `c` from slices of `x`, x's length)."""
    if kind in ("floats", "array"):
        return (["    c = tuple(float(v) for v in x)"] if kind == "floats" else ["    c = x * 1.0"]), n
    sizes = [ch.int(1, 3) for _ in range(n)]
    bounds = np.cumsum([0] + sizes)
    parts = [f"x[{a}:{b}]" for a, b in zip(bounds[:-1], bounds[1:])]
    if kind == "dict":
        keys = ch.choice([["b", "a", "c", "d"], ["item_2", "item_1", "item_3", "item_0"], ["w", "v", "u", "z"]])
        return ["    c = {" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"], int(bounds[-1])
    display = "[" + ", ".join(parts) + "]"
    return [f"    c = {display if kind == 'list' else 'tuple(' + display + ')'}"], int(bounds[-1])


@family("containers")
def builtins(ch) -> Case:
    kind = ch.choice(["dict", "dict_arg", "list", "tuple", "floats", "array"])
    n = ch.int(2, 4)
    build, size = _container(ch, kind, n)
    read = ch.choice(_READS)
    item = {"dict": "c[k]", "dict_arg": "(c[k] * x[0])"}.get(kind, "k")
    key = {"dict": "lambda k: k[::-1]", "dict_arg": "lambda k: k[::-1]", "floats": "lambda v: -v", "array": "lambda v: v * v"}.get(kind, "len")
    way = ch.choice(["sorted", "sorted_reverse", "sorted_key", "min", "max", "min_key", "max_key",
                     "list", "enumerate", "zip", "reversed", "sum", "comprehension"])
    if kind in ("list", "tuple") and way in ("sorted", "sorted_reverse", "min", "max"):
        way = "sorted_key"  # (arrays do not compare)
    if kind in ("dict", "dict_arg", "list", "tuple") and way == "sum":
        way = "comprehension"
    lines = [f"def consume(c{', x' if kind == 'dict_arg' else ''}):", "    total = 0.0"]
    if way in ("sorted", "sorted_reverse", "sorted_key", "list", "reversed"):
        call = {"sorted": "sorted(c)", "sorted_reverse": "sorted(c, reverse=True)", "sorted_key": f"sorted(c, key={key})",
                "list": "list(c)", "reversed": "reversed(list(c))"}[way]
        lines += [f"    for j, k in enumerate({call}):", f"        total = total + {read.format(v=item)} * (j + 1.0)"]
    elif way in ("min", "max", "min_key", "max_key"):
        call = f"{way[:3]}(c{', key=' + key if way.endswith('key') else ''})"
        lines += [f"    k = {call}", f"    total = total + {read.format(v=item)}"]
    elif way == "enumerate":
        lines += ["    for j, k in enumerate(c):", f"        total = total + {read.format(v=item)} / (j + 2.0)"]
    elif way == "zip":
        lines += ["    for j, k in zip(range(10), c):", f"        total = total + {read.format(v=item)} * (j - 0.5)"]
    elif way == "sum":
        lines += ["    total = sum(c) * 2.0 + sum(v * v for v in c)"]
    else:
        lines += [f"    parts = [{read.format(v=item)} for k in c]", "    total = parts[0] * 0.5 + sum(parts)"]
    lines.append("    return total")
    rng = np.random.default_rng(ch.int(0, 10_000))
    if kind == "dict_arg":  # the dict is an argument of `f` (its gradient flows into x through its items)
        keys = ch.choice([["b", "a", "c", "d"], ["item_2", "item_1", "item_3", "item_0"], ["w", "v", "u", "z"]])
        d = {k: rng.uniform(-1.5, 1.5, size=ch.int(1, 3)) for k in keys[:n]}
        lines += ["", "", "def f(x, d):", "    return consume(d, x)"]
        return Case("\n".join(lines) + "\n", [rng.uniform(0.5, 1.5, size=2), d], must_work=True)
    lines += ["", "", "def f(x):"] + build + ["    return consume(c)"]
    x = rng.permutation(np.linspace(-1.4, 1.6, size)) + rng.uniform(0, 0.05, size)  # (distinct: orders are stable)
    # (a dict display is resolved when compiling: read with a key known then, or refused at its line)
    return Case("\n".join(lines) + "\n", [x], must_work=kind != "dict")


@family("containers")
def dict_items(ch) -> Case:
    """A dict the function makes, filled and changed key by key (`d[k] = v`, `d[k] op= v`, a list
    item extended), perhaps while another name holds an item or a tuple holds the dict, perhaps
    inside an `if` or a loop; read by key into the loss. Python's result is what counts."""
    n = ch.int(2, 4)
    start = ch.choice(["{}", "{'a': x * 1.0}", "{'a': x, 's': 2.0}", "dict(a=x * 0.5)"])
    lines = [f"    d = {start}"] + (["    d['a'] = x * 1.0"] if start == "{}" else [])
    steps = []
    for _ in range(ch.int(1, 4)):
        c = ch.float(0.5, 1.5)
        steps.append(ch.choice([f"d['b'] = np.sin(d['a']) * {c}", f"d['a'] = d['a'] * {c} + x",
                                f"d['a'] += x * {c}", f"d['a'] *= {c}", "d['c'] = np.tanh(d['a'] + x)",
                                "d['l'] = [d['a']]", "hold = d['a']", "t = (d, 1.0)"]))
    where = ch.choice(["", "", "if", "loop"])
    body = "".join(f"    {s}\n" for s in steps)
    if where == "if":
        body = f"    if x[0] > {ch.float(-1, 1)}:\n" + "".join(f"        {s}\n" for s in steps)
    elif where == "loop":
        body = f"    for i in range({ch.int(1, 3)}):\n" + "".join(f"        {s}\n" for s in steps)
    reads = ["np.sum(d['a'] ** 2)"] + [f"np.sum(d[{k!r}] * x)" for k in ("b", "c")
                                       if where != "if" and any(f"d['{k}'] =" in s for s in steps)]
    if any("hold =" in s for s in steps) and where == "":
        reads.append("np.sum(hold * x)")
    if any("t = (d" in s for s in steps) and where == "":
        reads.append("np.sum(t[0]['a'] * x)")
    if any("d['l']" in s for s in steps) and where == "":
        reads.append("np.sum(d['l'][0])")
    src = "def f(x):\n" + "\n".join(lines) + "\n" + body + f"    return {' + '.join(reads)}\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(0.3, 1.7, n)])


@family("containers")
def sequence_arithmetic(ch) -> Case:
    """A list or tuple in arithmetic with arrays and numbers: NumPy's elementwise operations when
    the other operand is an array (`np.sin(s) * s`, `s * w`, `s - np.mean(s)`), repetition and
    joining when it is an integer or a sequence (`s * 2`, `s + s`), the sequence made in `f` or
    passed in. Python's result is what counts."""
    n = ch.int(2, 4)
    passed = ch.coin()
    make = "" if passed else ch.choice(["    s = list(x)\n", "    s = tuple(x)\n",
                                        "    s = [x[0] * 1.0] + [v for v in x[1:]]\n", "    s = [np.sin(x[0]), x[-1]]\n"])
    arg = "s" if passed else "x"
    terms = []
    for _ in range(ch.int(1, 3)):
        c = ch.float(0.5, 2.0)
        terms.append(ch.choice([
            "np.sum(np.sin(s) * s)", "np.sum(s * np.cos(s))", f"np.sum(np.asarray(s) * {c})",
            f"np.sum(np.array(s * 2) ** 2) * {c}", "np.sum(np.array(s + s) * np.arange(2.0 * len(s)))",
            "np.sum((s - np.mean(s)) ** 2)", "np.sum(s / (1.0 + np.sum(np.abs(s))))",
            f"np.sum(np.exp(s) * {c} + s)", "np.dot(s, s)"]))
    src = f"def f({arg}):\n{make}    return {' + '.join(terms)}\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    values = rng.uniform(0.3, 1.7, n)
    if passed:
        s = ch.choice([list, tuple])(float(v) for v in values)
        return Case(src, [s])
    return Case(src, [values])


@family("containers")
def sequence_parts_arithmetic(ch) -> Case:
    """`+` and `*` of values the compiler cannot tell are lists or tuples: slices of a list or
    tuple (`s[1:] + s[:1]`, `s[1:] * 2`), items of nested lists, tuples of pairs and dicts of
    lists (`m[0] + m[1]`, `m[0] * 2`), `x.tolist()`; beside them the same operators on arrays and
    numbers. Python decides at run time (joining, repeating, or NumPy's arithmetic); the gradient
    must follow what ran."""
    n = ch.int(3, 5)
    make = ch.choice(["    s = list(x)\n", "    s = tuple(x)\n", "    s = x.tolist()\n",
                      "    s = [np.sin(x[0])] + [v * 1.0 for v in x[1:]]\n"])
    nested = ch.choice(["    m = [[x[0], x[1]], [x[2]]]\n", "    m = ((x[0], x[1]), (x[2], x[0] * 2.0))\n",
                        "    m = {'a': [x[0]], 'b': [x[1], x[2]]}\n", "    m = [x[:2], x[-2:]]\n"])
    first, second = ("m['a']", "m['b']") if "'a'" in nested else ("m[0]", "m[1]")
    terms = []
    for _ in range(ch.int(1, 3)):
        k = ch.int(1, 2)
        terms.append(ch.choice([
            f"sum(v * v for v in s[{k}:] + s[:{k}]) * {ch.float(0.5, 1.5)}",
            f"sum(s[{k}:] * 2)", f"(s[:{k}] + s[{k}:])[0] * x[-1]",
            f"np.sum(np.asarray({first} + {second}) ** 2)", f"np.sum(np.asarray({first} * 2) * {ch.float(0.5, 2.0)})",
            f"np.sum(np.asarray(2 * {second}))", f"np.sum(np.sin(np.asarray({first})) * 3.0)",
            f"({first} + {second})[-1] * {first}[0]", f"np.sum(np.asarray(s[{k}:]) * np.asarray(s[:-{k}]))"]))
    src = f"def f(x):\n{make}{nested}    return {' + '.join(terms)}\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(0.3, 1.7, n)])


@family("containers")
def gen_list_method_receivers(ch):
    """`append`, `extend` and `pop` called on a list, an array, an item of a list that is a list
    or an array, a number, in a loop or not. normalize lowers them by name (`xs + [v]`,
    `xs[:-1]`), which an array would take for a broadcast sum or a slice: Python raises
    AttributeError there, and so must the gradient (it gave a number)."""
    receiver = ch.choice(["[x[0], x[1]]", "x * 1.0", "rows[0]", "rows[1]", "x[0] * 2.0"])
    call = ch.choice(["r.append(x[2] * 2.0)", "r.extend([x[2], x[0]])", "r.pop()", "r.extend(x[1:])"])
    loop = ch.coin()
    body = f"    for _ in range(2):\n        {call}" if loop else f"    {call}"
    src = f"""
def f(x):
    rows = [[x[0], x[1] * 3.0], x * 0.5]
    r = {receiver}
{body}
    return np.sum(np.array(r) ** 2) + np.sum(x)
"""
    return Case(src, [np.array([ch.float(0.5, 1.5) for _ in range(3)])], may_raise=True)


@family("containers")
def gen_sequence_updated(ch):
    """`r += e` and `r *= k` of a list or tuple `r` by a list, a tuple, a comprehension or a
    slice, in a loop or not, with another name sharing `r` or not. Python extends a list in place
    by any sequence (`xs += (a, b)`; `q` sharing it sees the items) and joins a tuple only with a
    tuple (TypeError otherwise); the gradient must follow what ran, or the program refuse."""
    receiver = ch.choice(["[x[0], x[1] * 2.0]", "(x[0], x[1] * 2.0)", "list(x[:2])", "[v * 1.0 for v in x[:2]]"])
    update = ch.choice(["r += (x[2] * 3.0, x[0])", "r += [np.sin(x[1])]", "r += tuple(x[1:] * 0.5)",
                        "r += [v * v for v in x[1:]]", "r += r[:1]", "r *= 2", "r += (x[2],) * 2"])
    share = ch.coin()
    loop = ch.coin()
    body = f"    for _ in range(2):\n        {update}\n" if loop else f"    {update}\n"
    read = ch.choice(["sum(v * v for v in {s})", "np.sum(np.sin(np.asarray({s})))", "{s}[-1] * {s}[0]"])
    total = read.format(s="r") + (" + " + read.format(s="q") if share else "")
    src = f"def f(x):\n    r = {receiver}\n" + ("    q = r\n" if share else "") + body + f"    return {total}\n"
    return Case(src, [np.array([ch.float(0.5, 1.5) for _ in range(3)])], may_raise=True)


@family("containers")
def gen_structures_passed_around(ch) -> Case:
    """Objects made in the function held in a list or tuple display (iterated, enumerated, read at
    constant indices, unpacked) and called through their methods, and dict displays passed to
    helpers by position or keyword (both once refused: a display of objects was built at run time
    and lost the functions its objects held; a dict display could not be passed at all)."""
    act = ch.choice(["np.tanh", "np.sin", "relu", "lambda v: v * 0.5"])
    helpers = ("def relu(v):\n    return np.maximum(v, 0.0)\n\n\n"
               "class Layer:\n    def __init__(self, W, act):\n        self.W, self.act = W, act\n\n"
               "    def __call__(self, h):\n        return self.act(h @ self.W)\n\n\n"
               "def dense(params, h, scale=1.0):\n    return np.tanh(h @ params['W'] + params['b']) * scale\n\n\n")
    layers = f"[Layer(W1, {act}), Layer(W2, np.tanh)]" if ch.coin() else f"(Layer(W1, {act}), Layer(W2, np.tanh))"
    use = ch.choice([
        f"    for layer in {layers}:\n        h = layer(h)\n",
        f"    layers = {layers}\n    for k, layer in enumerate(layers):\n        h = layer(h) * (1.0 + 0.5 * k)\n",
        f"    layers = {layers}\n    h = layers[1](layers[0](h))\n",
        f"    first, second = {layers}\n    h = second(first(h))\n",
        "    h = dense({'W': W1, 'b': W1[0] * 0.5}, h)\n    h = dense(params={'W': W2, 'b': 0.1}, h=h, scale=2.0)\n",
        "    p = {'W': W1 * 2.0, 'b': 0.0}\n    h = dense(p, h) + dense(p, h * 0.5)\n    h = h @ W2\n"])
    src = helpers + "def f(W1, W2, X):\n    h = X\n" + use + "    return np.sum(h ** 2)\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.standard_normal((3, 3)) * 0.7, rng.standard_normal((3, 2)) * 0.7,
                      rng.standard_normal((4, 3))], wrt=ch.choice([0, 1]), must_work=True)


@family("containers")
def gen_object_fields_written(ch) -> Case:
    """Objects made in the function whose methods write into the arrays their fields hold
    (`self.u[1:] += ...`, `self.u[0] = ...`, `np.copyto(self.u, ...)`), called in straight-line code,
    per loop trip on an object made in the trip, in a loop or a branch the object predates (refused
    where the field is read after), with the array also bound to a local name, held by two fields, or
    by a field that is a view of another. Python reads the written array through every name; the
    gradient must too, or refuse. (A field read after such a write was refused everywhere; a write
    in a loop the object predates must not give the value of one trip.)"""
    write = ch.choice(["self.u[1:] += self.dt * np.sin(self.u[:-1])", "self.u[0] = self.u[0] * 0.9 + self.u[-1]",
                       "np.copyto(self.u, self.u * 0.5 + 0.1)", "self.u[::2] -= self.dt"])
    init = ch.choice(["self.u = u0.copy()", "self.u = u0 * 1.0", "self.u = np.array(u0)"])
    extra = ch.choice(["", "        self.w = self.u\n", "        self.v = self.u[1:]\n"])
    cls = (f"class Sim:\n    def __init__(self, u0, dt):\n        {init}\n        self.dt = dt\n{extra}\n"
           f"    def step(self):\n        {write}\n\n    def energy(self):\n        return np.sum(self.u ** 2)\n\n\n")
    read = ch.choice(["s.energy()", "np.sum(s.u * u0)", "s.energy() + np.sum(s.w)" if "w" in extra else "s.energy()",
                      "np.sum(s.v ** 2)" if "v =" in extra else "np.sum(s.u)"])
    shape = ch.choice(["straight", "straight", "per_trip", "loop", "branch", "local"])
    if shape == "straight":
        body = "    s = Sim(u0, 0.1)\n    s.step()\n    s.step()\n"
    elif shape == "per_trip":
        body = "    total = 0.0\n    for k in range(2):\n        s = Sim(u0 * (k + 1.0), 0.1)\n        s.step()\n" \
               f"        total = total + {read}\n    return total\n"
    elif shape == "loop":
        body = "    s = Sim(u0, 0.1)\n    for _ in range(3):\n        s.step()\n"
    elif shape == "branch":
        body = "    s = Sim(u0, 0.1)\n    if u0[0] > 0.0:\n        s.step()\n"
    else:
        body = "    s = Sim(u0, 0.1)\n    u = s.u\n    s.step()\n    return np.sum(u * 2.0) + " + read + "\n"
    src = cls + "def f(u0):\n" + body + ("" if "return" in body else f"    return {read}\n")
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    u0 = rng.uniform(-1.0, 1.0, 5)
    u0[0] = ch.choice([0.4, -0.4])  # (away from the branch)
    return Case(src, [u0], must_work=shape in ("straight", "per_trip", "local") and "v =" not in extra)


@family("containers")
def gen_object_fields_set(ch) -> Case:
    """Objects made in the function whose fields are set (`g.mu = ...`, `g.mu *= c`, in a method
    called there) before or after the object is put in a list or tuple (a display only read at
    constant indices, one appended to, one iterated), read back through the container or the
    object. Python's containers hold the object itself; a list built at run time from the fields
    once kept the old ones (the gradient of the value before the set)."""
    cls = ("class G:\n    def __init__(self, mu):\n        self.mu = mu\n        self.s = 1.0\n\n"
           "    def bump(self, c):\n        self.mu = self.mu * c\n        self.s = self.s + c\n\n\n")
    setter = ch.choice(["g.mu = x * 3.0", "g.mu *= 1.5", "g.bump(1.5)", "g.mu = g.mu + np.sin(x)"])
    hold = ch.choice(["items = [g]", "items = (g, 2.0)", "items = [g]\n    items.append(g)",
                      "items = [g, G(x)]"])
    order = ch.choice(["before", "after"])
    body = [f"    {hold}", f"    {setter}"] if order == "before" else [f"    {setter}", f"    {hold}"]
    read = ch.choice(["np.sum(items[0].mu)", "np.sum(g.mu) + np.sum(items[0].mu)", "np.sum(items[0].mu * items[0].s)"])
    src = cls + "def f(x):\n    g = G(x * 2.0)\n" + "\n".join(body) + f"\n    return {read}\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(-1.0, 1.0, 3)])


@family("containers")
def gen_user_operators_and_array_named_methods(ch) -> Case:
    """A user class whose `+` is its own (`__add__` multiplying, or adding fields) and whose
    methods are named as NumPy's (`sum`, `mean`, `max`, `dot`), reached where the compiler cannot
    tell the class when compiling: the result of `+`, an item of a list. Python runs the class's
    code; the gradient must be that code's, or the call refused, never NumPy's rule for the name."""
    add = ch.choice(["return V(self.a * o.a)", "return V(self.a + o.a)"])
    method = ch.choice(["sum", "mean", "max", "total"])
    weight = ch.choice(["np.array([1.0, 2.0, 3.0])", "2.0"])
    use = ch.choice([f"(V(x) + V(x ** 2)).{method}()", f"[V(x), V(2.0 * x)][1].{method}()",
                     f"(V(x) + V(np.sin(x))).{method}() * 2.0", "np.sum((V(x) + V(x ** 2)).a)",
                     f"(p + V(x)).{method}()", "np.sum((p + p).a * x)"])
    if ch.coin():
        head = "@dataclasses.dataclass\nclass V:\n    a: np.ndarray\n"
    else:
        head = "class V:\n    def __init__(self, a):\n        self.a = a\n"
    src = (f"import dataclasses\n\n{head}\n    def __add__(self, o):\n        {add}\n\n"
           f"    def {method}(self):\n        return np.sum(self.a * {weight})\n\n"
           f"def f(x):\n    p = V(x * 0.5 + 1.0)\n    return {use}\n")
    rng = np.random.default_rng(ch.int(0, 10_000))
    return Case(src, [rng.uniform(0.3, 1.7, size=3)])


@family("containers")
def gen_helper_changes_callers_list(ch) -> Case:
    """A helper that `append`s to, `extend`s or `pop`s a list it was given (a common way to collect
    results), called in straight-line code or in the caller's loop, maybe through a second helper,
    with the update in the helper's own `if` or loop or not, and the caller holding the list under
    a second name or not. Python changes the caller's list: the gradient follows it, or refuses."""
    update = ch.choice(["acc.append(v * {k})", "acc.append(np.sin(v) * {k})", "acc.extend([v, v * {k}])",
                        "acc.append(v * acc[-1] * {k})" if ch.coin() else "acc.extend((v ** 2, {k}))"])
    update = update.format(k=ch.float(0.5, 2.0))
    inner = ch.choice(["plain", "plain", "if", "loop", "pop"])
    body = {"plain": f"    {update}\n",
            "if": f"    if v > 0.7:\n        {update}\n",
            "loop": f"    for _ in range(2):\n        {update}\n",
            "pop": f"    {update}\n    acc.pop()\n"}[inner]
    helpers = f"def collect(acc, v):\n{body}\n\n"
    call = "collect(acc, v)"
    if ch.coin(0.3):
        helpers += "def through(acc, v):\n    collect(acc, v * 1.5)\n    return v\n\n\n"
        call = "through(acc, v)"
    caller = ch.choice(["loop", "straight"])
    uses = (f"    for v in x:\n        {call}\n" if caller == "loop" else
            "".join(f"    {call.replace('v)', f'x[{i}])')}\n" for i in range(3)))
    alias = ch.coin(0.3)
    read = ch.choice(["sum(acc) * acc[0]", "sum(v * v for v in acc)", "acc[-1] + len(acc) * acc[0]"])
    src = helpers + "def f(x):\n    acc = [x[1] * 0.5]\n" + ("    b = acc\n" if alias else "") + uses + \
        f"    return {read}" + (" + b[-1]" if alias else "") + "\n"
    return Case(src, [np.array([ch.float(0.5, 1.5) for _ in range(3)])],
                must_work=inner in ("plain", "pop") and not alias)

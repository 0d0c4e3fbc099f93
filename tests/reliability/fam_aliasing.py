"""Family 4 (aliasing): a function writes into one array while reading it through another name.

`gen_aliased_helper` calls a writing helper with aliased arguments inside `f` (the same array,
a view, a reversed view, an array inside a tuple): Python's result is what counts, so the
compiler must follow the write through every name or refuse. `gen_aliased_entry` passes the
same array twice to a writing `f` itself: the call must be refused (a MutationError), or, when
the arguments do not overlap, differentiate. `gen_aliased_nested` hides the second name inside
lists, tuples and dicts nested up to twelve deep, past the depth at which structures become
opaque values (trees.MAX_DEPTH): the aliasing check must still see it.
"""
from __future__ import annotations

import numpy as np
from families import Case, family


def _vec(ch, n):
    rng = np.random.default_rng(ch.int(0, 10_000))
    return rng.uniform(0.3, 1.7, size=n)


WRITES = [
    "{o}[0] = {c} * {u}[1]",
    "{o}[1:] = {u}[:-1] * {c}",
    "np.copyto({o}, {u} * {c})",
    "{o}[...] = np.sin({u}) * {c}",
    "{o}[-1] += {u}[0] * {c}",
]


def _write(ch, o="o", u="u"):
    """One write into array `o` of values read from array `u` (of the same length)."""
    return ch.choice(WRITES).format(o=o, u=u, c=ch.float(0.5, 3.0))


@family("aliasing")
def gen_aliased_helper(ch) -> Case:
    n = ch.int(3, 5)
    read = ch.choice(["np.sum(o * u)", "np.sum(u ** 2)", "np.sum(np.sin(o) + u)"])
    how = ch.choice(["same", "prefix", "suffix", "reversed", "copy", "fresh"])
    second = {"same": "u", "prefix": "u", "suffix": "u", "reversed": "u[::-1]", "copy": "u", "fresh": "u"}[how]
    first = {"same": "u", "prefix": f"u[:{n - 1}]", "suffix": "u[1:]", "reversed": "u",
             "copy": "u.copy()", "fresh": "np.zeros_like(u)"}[how]
    if how in ("prefix", "suffix"):  # the helper's arrays have different lengths: index within both
        write = ch.choice(["o[0] = {c} * u[1]", "o[-1] += u[0] * {c}"]).format(c=ch.float(0.5, 3.0))
        read = ch.choice(["np.sum(o) * np.sum(u)", "np.sum(u ** 2)"])
    else:
        write = _write(ch)
    prelude = ch.choice(["    u = u * 1.0\n", "    u = u + 0.0\n", ""])
    src = (f"def step(o, u):\n    {write}\n    return {read}\n\n"
           f"def f(u):\n{prelude}    return step({first}, {second}) + np.sum(u)\n")
    return Case(src, [_vec(ch, n)], must_work=how in ("copy", "fresh"))


@family("aliasing")
def gen_aliased_entry(ch) -> Case:
    n = ch.int(3, 5)
    write = _write(ch, "out", "u")
    src = f"def f(out, u):\n    {write}\n    return np.sum(out * u) + np.sum(u ** 2)\n"
    u = _vec(ch, n)
    how = ch.choice(["same", "view", "separate"])
    if how == "same":
        args = [u, u]
    elif how == "view":
        args = [u, u[::-1]] if ch.coin() else [u, u[:]]
    else:
        args = [u.copy(), u]
    return Case(src, args, wrt=ch.choice([0, 1]), must_work=how == "separate")


@family("aliasing")
def gen_aliased_nested(ch) -> Case:
    n = ch.int(3, 5)
    depth = ch.int(1, 12)
    u = _vec(ch, n)
    leaf = u if ch.coin() else u.copy()
    path, p = "", leaf
    for _ in range(depth):
        if ch.coin():
            p, path = {"k": p}, '["k"]' + path
        else:
            p, path = (list if ch.coin() else tuple)([p, 1.0]), "[0]" + path
    write = _write(ch, "out", "out")
    src = f"def f(out, p):\n    {write}\n    return np.sum(out * out) + np.sum(p{path} ** 2)\n"
    return Case(src, [u, p], wrt=0, must_work=leaf is not u)


@family("aliasing")
def gen_loop_update_alias(ch) -> Case:
    """An array or list updated in place inside a loop (`a += e`, `xs.append(v)`, `a *= c`,
    `a[i] = v`), while another name, a tuple or a dict took hold of it before the loop; the holder
    is read after the loop, or not at all; the loop may rebind the name to a new value after the
    update (so later trips update another object). Python's result is what counts: the gradient
    must match it or the program be refused."""
    n, trips = ch.int(2, 4), ch.int(1, 3)
    c = ch.float(0.5, 1.5)
    kind = ch.choice(["array", "list"])
    hold = ch.choice(["name", "tuple", "dict", "none", "copy"])
    if kind == "array":
        start = ch.choice(["x * 1.0", "np.zeros_like(x)", "np.sin(x)"])
        update = ch.choice([f"a += x * {c}", f"a *= {c}", f"a -= np.cos(x) * {c}", f"a[i % {n}] = x[0] * {c}"])
        final = "np.sum(a * x)"
    else:
        start = ch.choice(["[x]", "[x * 1.0, x * 2.0]"])
        update = ch.choice([f"a.append(a[-1] * {c})", f"a.append(np.sin(a[-1]) + x * {c})"])
        final = "np.sum(a[-1] * x) + len(a)"
    holder, read = {"name": ("b = a", "b"), "tuple": ("b = (a, 1.0)", "b[0]"), "dict": ("b = {'k': a}", "b['k']"),
                    "none": ("b = 0.0", None), "copy": ("b = a.copy()" if kind == "array" else "b = list(a)", "b")}[hold]
    rebind = ch.choice(["", "a = a * 1.0" if kind == "array" else "a = a + []", ""])
    uses = ch.choice(["after", "never"]) if read else "never"
    tail = {"array": f"np.sum({read} * x)", "list": f"np.sum({read}[-1] * x) + len({read})"}[kind] \
        if uses == "after" else "0.0"
    body = f"        {update}\n" + (f"        {rebind}\n" if rebind else "")
    inside = ch.choice(["", "", "before", "after", "previous"]) if read and hold == "name" else ""
    if inside:  # the holder is taken inside the loop: under an `if`, before or after the update
        holder = "b = a * 0.0" if kind == "array" else "b = [x * 0.0]"
        take = f"        if i == {ch.int(0, trips - 1)}:\n            b = a\n"
        if inside == "previous":  # the previous iterate, then a new value updated in place
            take = "        b = a\n"
            body = f"        a = a * {c}\n" if kind == "array" else "        a = a + []\n"
            body += f"        {update}\n"
        body = take + body if inside in ("before", "previous") else body + take
    src = (f"def f(x):\n    a = {start}\n    {holder}\n    for i in range({trips}):\n{body}"
           f"    return {final} + {tail}\n")
    return Case(src, [_vec(ch, n)], must_work=hold in ("none", "copy") or inside == "previous")


@family("aliasing")
def gen_nested_loop_update(ch) -> Case:
    """An inner loop updating in place (`z -= e`, `z *= c`, `z[0] = v`) a value made each outer trip
    from the outer loop's value (a copy, `y * 1.0`, or `y` itself), perhaps held by another name in
    the inner loop, then handed back (`y = z`, `y = z + w`, `y += z`): an implicit-Euler shape.
    Python's result is what counts: a copy made each trip is a new object (no refusal), `y` itself
    is the object the inner loop changes (the gradient follows it, or the program is refused)."""
    c = ch.float(0.3, 0.9)
    start = ch.choice(["y.copy()", "y * 1.0", "np.array(y)", "y"])
    update = ch.choice([f"z -= {c} * (z - y * p)", "z *= p", f"z[0] = z[0] * p + {c}", f"z += np.sin(y) * {c}"])
    hold = ch.choice(["", "", "w = z"])
    back = ch.choice(["y = z", "y = z * 1.0 + y", "y += z"])
    inner = f"            {hold}\n" if hold else ""
    src = (f"def f(x, p):\n    y = x * 1.0\n    for k in range({ch.int(1, 3)}):\n        z = {start}\n"
           f"        for j in range({ch.int(1, 3)}):\n{inner}            {update}\n        {back}\n"
           f"    return np.sum(y ** 2){' + np.sum(w)' if hold else ''}\n")
    return Case(src, [_vec(ch, ch.int(2, 4)), ch.float(0.5, 1.2)],
                must_work=start != "y" and not hold and back != "y += z")


@family("aliasing")
def gen_weighted_sums(ch) -> Case:
    """A loss that weights a sum by an array (`np.sum(w * e)`, `(e * w).sum()`, `w @ e`, a
    weight made in the function, a weight written into after it is read, a weighted sum in a loop
    or twice). The adjoint of `e` is then the weight itself (`1.0 * w` without the product): the
    gradient handed back must not be the argument's array or change with a later write, and a
    gradient updated in place must be a new array (`x_bar += ...` into `w` would change the input)."""
    n = ch.int(3, 5)
    weight = ch.choice(["w", "w", "v", "w[::-1]", "w.T"])
    term = ch.choice(["np.sin(x)", "x", "x * x", "np.exp(x) * 0.5", "x[::-1]", "b"])
    total = ch.choice(["np.sum({w} * {e})", "({e} * {w}).sum()", "{w} @ {e}", "np.dot({e}, {w})",
                       "np.sum({w} * {e}) + np.sum({e} * {w})"]).format(w=weight, e=term)
    lines = ["def f(x, w):", "    v = np.tanh(w) + x", "    b = x * 2.0"]
    if ch.coin(0.5):
        lines += ["    s = 0.0", f"    for k in range({ch.int(1, 3)}):", f"        s = s + {total}"]
    else:
        lines.append(f"    s = {total}")
    after = ch.choice(["", "    v[0] = x[1] * 3.0", "    b[1:] = w[:-1]", "    v += x", "    b *= 2.0",
                       "    w2 = w.copy()\n    w2[0] = 5.0\n    s = s + np.sum(w2 * x)"])
    if after:
        lines.append(after)
    lines.append(f"    return s + {ch.choice(['0.0', 'np.sum(v * b)', 'np.sum(x ** 2)', 'np.sum(w * w)'])}")
    src = "\n".join(lines) + "\n"
    return Case(src, [_vec(ch, n), _vec(ch, n)], wrt=ch.choice([0, 1]))


@family("aliasing")
def gen_returns_its_operand(ch) -> Case:
    """A NumPy call that, for these arguments, hands back its operand itself or its memory (a real
    array's `conj()`, `np.float64` of a float64 array, `np.diff(a, n=0)`, `matrix_power(A, 1)`,
    `np.asarray`, `astype(copy=False)`, `nan_to_num(copy=False)`), then a write through the
    result or into the operand, and both read. Python's numbers count: followed, or refused; the
    caller's array never changes."""
    matrix = ch.coin()
    call = ch.choice(["np.linalg.matrix_power(a, 1)", "a.conj()", "np.asarray(a)", "a.T.T"] if matrix else
                     ["a.conj()", "a.conjugate()", "np.float64(a)", "np.diff(a, n=0)", "np.asarray(a)",
                      "a.astype(float, copy=False)", "np.nan_to_num(a, copy=False)", "np.conj(a)"])
    first = "a[0, 0]" if matrix else "a[0]"
    second = "a[1, 1]" if matrix else "a[1]"
    step = ch.choice([f"b{first[1:]} = {ch.float(0.5, 3.0)} * {second}",  # through the result
                      f"{first} = {ch.float(0.5, 3.0)} * {second}",  # into the operand
                      f"b{first[1:]} += {second} ** 2"])
    read = ch.choice(["np.sum(a * a) + np.sum(b)", "np.sum(b * b)", "np.sum(a ** 3)"])
    src = f"def f(a):\n    b = {call}\n    {step}\n    return {read}\n"
    rng = np.random.default_rng(ch.int(0, 10_000))
    return Case(src, [rng.uniform(0.3, 1.7, size=(2, 2) if matrix else 3)])


@family("aliasing")
def gen_function_holds_array(ch) -> Case:
    """A function value that holds an array or list (a lambda's or def's default, keyword-only
    or not; `functools.partial`'s bound argument, of NumPy's function or of the user's), which is
    written, updated or appended to after the function is made, in straight-line code, a loop or
    an `if`, then called: Python passes the written object (a default is evaluated once, at the
    `def`). Followed, or refused; a rebinding (`a = a + ...`) leaves the held object alone."""
    n = ch.int(3, 5)
    holder = ch.choice(["lam", "def", "kwonly", "partial_np", "partial_user", "partial_kw"])
    made = ch.choice(["np.zeros(n)", "x * 0.5", "np.ones(n)", "list(x * 1.0)"]).replace("n)", f"{n})")
    is_list = made.startswith("list")
    use = "sum(c) * np.sum(t)" if is_list else "np.sum(t * c)"
    make = {"lam": f"h = lambda t, c=a: {use}",
            "def": f"def h(t, c=a):\n        return {use}",
            "kwonly": f"def h(t, *, c=a):\n        return {use}",
            "partial_np": "h = functools.partial(np.dot, a)",
            "partial_user": f"h = functools.partial(lambda c, t: {use}, a)",
            "partial_kw": f"h = functools.partial(lambda t, c: {use}, c=a)"}[holder]
    if is_list and holder == "partial_np":
        make = f"h = functools.partial(lambda c, t: {use}, a)"
    k = ch.float(0.5, 3.0)
    change = ch.choice(["a[0] = x[1] * {k}", "a[1:] = x[:-1] * {k}", "a += x * {k}", "a = a + x * {k}",
                        "a.append(x[0] * {k})" if is_list else "a[...] = np.sin(x) * {k}"]).format(k=k)
    where = ch.choice(["line", "loop", "if"])
    body = {"line": f"    {change}",
            "loop": f"    for i in range(2):\n        {change}",
            "if": f"    if x[0] > 0:\n        {change}"}[where]
    tail = ch.choice(["h(x)", "h(x) + np.sum(x)", "h(x * 2.0) * h(x)"])
    src = (f"import functools\n\ndef f(x):\n    a = {made}\n    " + make.replace("\n        ", "\n        ") +
           f"\n{body}\n    return {tail}\n")
    return Case(src, [_vec(ch, n)])

"""Family generators for issue 12's write families: `out=` arguments (8), integer and boolean
storage (9), values with leading singleton axes written into slots (11) and 0-d booleans used as
indices (13). Each writes one random program in one of many spellings: shapes, index forms,
Buffer or ndarray, setitem, copyto or `op=`, arithmetic around, inside loops and helpers.

Arguments are drawn at full float precision, so a truncation to integers never sits within the
finite-difference step of a jump.
"""
from __future__ import annotations

import numpy as np
import families
from families import Case, family


def _args(ch, *shapes):
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return [rng.uniform(0.2, 3.0, s) * ch.choice([1.0, -1.0, 1.0]) for s in shapes]


def _around(ch, expr: str, v: str) -> str:
    """`expr` with some arithmetic around it."""
    return ch.choice([expr, f"{expr} * {ch.float(0.5, 2.0)}", f"({expr}) + {v}", f"np.sin({expr})",
                      f"{expr} - {v} * {v}"])


# -- family 8: out= ---------------------------------------------------------------------------

UNARY = ["np.exp", "np.sin", "np.tanh", "np.floor", "np.negative", "np.square", "np.cos", "np.rint"]
BINARY = ["np.add", "np.multiply", "np.subtract", "np.maximum", "np.minimum"]


@family("out")
def gen_out(ch) -> Case:
    n = ch.int(2, 4)
    form = ch.choice(["unary", "binary", "reduce", "cumsum", "clip", "matmul", "where", "where_diff", "self",
                      "loop", "helper", "none", "unsafe", "rows"])
    into = ch.choice(["np.zeros({n})", "np.empty({n})", "x * 1.0", "np.ones({n}) * 2"]).format(n=n)
    use_ret = ch.coin()
    lines = []
    f = ch.choice(UNARY)
    arg = _around(ch, "x", "x") if ch.coin(0.4) else "x"
    if form in ("unary", "none"):
        spell = ch.choice(["out=y", "out=(y,)", "y"]) if form == "unary" else "out=None"
        call = f"{f}({arg}, {spell})"
        lines = [f"y = {into}", f"r = {call}" if use_ret else call]
        if form == "none":  # y is never written: not np.empty
            lines = [f"y = {into.replace('empty', 'zeros')}", f"r = {call}"]
            use_ret = True
    elif form == "binary":
        g = ch.choice(BINARY)
        other = ch.choice(["x", f"{ch.float(-1, 1)}", "x[::-1]", "np.cos(x)"])
        spell = ch.choice(["out=y", "y", "out=(y,)"])
        lines = [f"y = {into}", f"r = {g}({arg}, {other}, {spell})" if use_ret else f"{g}({arg}, {other}, {spell})"]
    elif form == "reduce":
        red = ch.choice(["np.sum", "np.mean", "np.max", "np.prod"])
        spell = ch.choice(["out=y", "axis=0, out=y"]) if red != "np.sum" or ch.coin() else "0, None, y"
        if spell == "out=y":
            spell = "axis=0, out=y"
        lines = ["X = np.outer(x, x[::-1]) + x", f"y = np.zeros({n})", f"r = {red}(X, {spell})"]
        use_ret = ch.coin()
        lines[-1] = lines[-1] if use_ret else lines[-1][4:]
    elif form == "cumsum":
        lines = [f"y = {into}", ch.choice(["r = np.cumsum(x * x, out=y)", "r = np.cumsum(x, axis=0, out=y)",
                                           "r = (x * 2).cumsum(out=y)"])]
        use_ret = True
    elif form == "clip":
        lo, hi = sorted([ch.float(-2, 2), ch.float(-2, 2)])
        lines = [f"y = {into}", ch.choice([f"r = np.clip(x, {lo}, {hi + 0.5}, out=y)",
                                           f"r = np.clip(x, {lo}, {hi + 0.5}, y)",
                                           f"r = x.clip({lo}, {hi + 0.5}, out=y)"])]
        use_ret = True
    elif form == "matmul":
        lines = ["A = np.outer(x, x) + 1.0", f"y = np.zeros({n})",
                 ch.choice(["r = np.matmul(A, x, out=y)", "r = np.dot(A, x, y)", "r = np.dot(A, np.sin(x), out=y)"])]
        use_ret = True
    elif form == "where":
        c = ch.float(-1, 1)
        lines = [f"y = {into.replace('empty', 'zeros')}",  # (the unselected entries keep y's values)
                 f"{ch.choice(['np.floor', 'np.sign', 'np.rint'])}(x, out=y, where=x > {c})"]
        use_ret = False
    elif form == "where_diff":  # the unselected entries' derivatives may be infinite: they get none
        c = ch.float(-1, 1)
        call = ch.choice([f"np.divide(1.0, x - {c}, out=y, where=x > {c})", "np.log(x, out=y, where=x > 0)",
                          "np.sqrt(x, out=y, where=x >= 0)", f"np.multiply(x, x, out=y, where=x < {c})",
                          f"np.power(x, 1.5, out=y, where=x > {c} + 1)"])
        lines = [f"y = {into.replace('empty', 'zeros')}", f"r = {call}"]
        use_ret = ch.coin()
        lines[-1] = lines[-1] if use_ret else lines[-1][4:]
    elif form == "unsafe":
        lines = [f"y = np.zeros({n}, {ch.choice(['int', 'np.int32', 'float'])})",
                 f"{ch.choice(UNARY)}(x * 3.0, out=y, casting='unsafe')"]
        use_ret = False
    elif form == "rows":  # out= the slots of an array: a row per iteration, a recurrence, a slice
        m = ch.int(2, 3)
        lines = [f"H = np.zeros(({m}, {n}))", ch.choice(["H[0] = x", "H[0] = np.cos(x)"]),
                 f"for t in range(1, {m}):",
                 ch.choice([f"    {f}(H[t - 1] * 0.5 + x, out=H[t])", "    np.multiply(H[t - 1], x, out=H[t])",
                            "    np.add(H[t - 1], x, H[t, :])"]),
                 ch.choice(["y = H[-1] * 1.0", "y = H.sum(axis=0)", "y = H[1:, :].sum(axis=0)"])]
        use_ret = False
    elif form == "self":
        lines = ["x = x * 1.0", f"{f}(x, out=x)", "y = x"]
        use_ret = False
    elif form == "loop":
        k = ch.int(1, 3)
        lines = [f"y = {into.replace('empty', 'ones')}", f"for i in range({k}):", f"    {ch.choice(BINARY)}(y, x, out=y)"]
        use_ret = False
    elif form == "helper":
        helper = f"def into(a, dst):\n    {f}(a, out=dst)\n    return dst\n\n\n"
        lines = [f"y = {into}", "r = into(x * 2.0, y)"]
        use_ret = ch.coin()
        body = "\n".join("    " + ln for ln in lines)
        tail = "np.sum(r * x) + np.sum(y)" if use_ret else "np.sum(y * x)"
        return Case(helper + f"def f(x):\n{body}\n    return {tail}\n", _args(ch, (n,)), must_work=True)
    tail = ch.choice(["np.sum(r * x)", "np.sum(r ** 2) + np.sum(y * x)"]) if use_ret else \
        ch.choice(["np.sum(y * x)", "np.sum(np.sin(y) * x) + np.sum(y)"])
    body = "\n".join("    " + ln for ln in lines)
    return Case(f"def f(x):\n{body}\n    return {tail}\n", _args(ch, (n,)), must_work=True)


# -- family 9: integer and boolean storage ------------------------------------------------------

@family("dtypes")
def gen_dtypes(ch) -> Case:
    n = ch.int(2, 4)
    kind = ch.choice(["int", "uint8", "bool"])
    make = {
        "int": [f"np.zeros({n}, int)", f"np.zeros({n}, dtype=np.int32)", f"np.array([0] * {n})",
                f"np.arange({n})", f"np.full({n}, 0)", "np.zeros_like(v, dtype=int)", "np.zeros_like(v, int)",
                "np.array(v, dtype=int)", "v.astype('int64')", "np.round(v).astype(int)", "np.asarray(v, np.int16)"],
        "uint8": [f"np.zeros({n}, np.uint8)", f"np.zeros({n}, dtype=np.uint8)", "np.zeros_like(v, dtype=np.uint8)"],
        "bool": [f"np.zeros({n}, dtype=bool)", f"np.ones({n}, bool)", "v > 0.5", "np.zeros_like(v, dtype=bool)"],
    }[kind]
    base = ch.choice(make)
    value = "np.abs(v) * 7.0 + 1.0" if kind == "uint8" else _around(ch, "v", "v")
    write = ch.choice(["b[:] = {e}", "b[...] = {e}", "b[1:] = ({e})[1:]", "b[0] = ({e})[0]", "loop",
                       "b[[0, {last}, 0]] = ({e})[:3] if False else ({e})[[0, {last}, 1]]", "aug", "copyto",
                       "helper", "none"])
    lines = [f"b = {base}"]
    helper = ""
    e = value
    if write == "loop":
        lines += [f"for i in range({n}):", f"    b[i] = ({e})[i] * {ch.float(0.5, 2)}"]
    elif write == "aug":
        if kind == "bool":
            lines += [f"b[0] = ({e})[0]"]
        else:
            lines += [f"b[1] += ({e})[1]"]
    elif write == "copyto":
        lines += [ch.choice([f"np.copyto(b, ({e}).astype(b.dtype))", f"np.copyto(b, {e}, casting='unsafe')",
                             f"np.copyto(b, {e}, 'unsafe')"])]
    elif write == "helper":
        helper = "def fill(dst, src):\n    dst[:] = src\n    return dst\n\n\n"
        lines += [f"b = fill(b, {e})"]
    elif write.startswith("b[[0"):
        lines += [f"b[[0, {n - 1}, 0]] = ({e})[[0, {n - 1}, 1]]"]
    elif write != "none":
        lines += [write.format(e=e)]
    use = ch.choice(["np.sum(b * v)", "np.sum(b * v) + np.sum(v ** 2)", "np.sum(np.sin(v) * b) + np.sum(b)",
                     "np.sum((b * 1.5 + v) ** 2)"])
    body = "\n".join("    " + ln for ln in lines)
    # np.asarray with another dtype copies, but the compiler takes np.asarray for a view: a write
    # into its result is refused (a MutationError, allowed)
    return Case(helper + f"def f(v):\n{body}\n    return {use}\n", _args(ch, (n,)), must_work="asarray" not in base)


# -- family 11: values with leading singleton axes written into slots ---------------------------

@family("unbroadcast")
def gen_unbroadcast(ch) -> Case:
    m, n = ch.int(1, 3), ch.int(2, 4)
    buffer = ch.coin(0.3)
    make = f"Buffer.zeros(({m}, {n}))" if buffer else ch.choice([f"np.zeros(({m}, {n}))", "X * 0.0"])
    value = ch.choice(["X[{i}:{i} + 1]", "X[{i}].reshape(1, {n})", "X[{i}][None]", "X[{i}][None, None]",
                       "np.sum(X, axis=0, keepdims=True)", "X[{i}:{i} + 1] @ W", "X.max(axis=0, keepdims=True)",
                       "np.mean(X, 0, keepdims=True)[None]", "X[:1, :1][None]", "X[{i}][None, :] * X[{i}]"])
    target = ch.choice(["b[{i}] = {e}", "b[{i}, :] = {e}", "b[:] = {e}", "b[...] = {e}", "copyto", "fancy",
                        "mask", "loop", "aug"])
    lines = [f"b = {make}"]
    if target == "loop":
        lines += [f"for i in range({m}):", "    " + f"b[i] = {value.format(i='i', n=n)}"]
    elif target == "copyto":
        fn = "copyto" if buffer else "np.copyto"
        lines += [f"{fn}(b, {value.format(i=0, n=n)})"]
    elif target == "fancy":
        lines += [f"b[[0, 0]] = {value.format(i=m - 1, n=n)}"]
    elif target == "mask":
        lines += [f"b[X[:, 0] > {ch.float(-1, 1)}] = {value.format(i=0, n=n)}"]
    elif target == "aug":  # (NumPy's `+=` does not drop leading axes: the slots keep their rank)
        lines += [f"b[{m - 1}:{m}] += {ch.choice(['X[0:1]', 'np.sum(X, axis=0, keepdims=True)', 'X[:1, :1]'])}"]
    else:
        lines += [target.format(i=ch.int(0, m - 1), e=value.format(i=ch.int(0, m - 1), n=n))]
    read = "b.copy()" if buffer else "b"
    weights = f"np.arange({m * n}.0).reshape({m}, {n})"
    use = ch.choice([f"np.sum({read} * {weights})", f"np.sum({read} ** 2) + np.sum({read} * {weights})"])
    body = "\n".join("    " + ln for ln in lines)
    args = _args(ch, (m, n), (n, n))
    return Case(f"def f(X, W):\n{body}\n    return {use}\n", args, wrt=ch.choice([0, 0, 1]), must_work=True)


# -- family 13: 0-d booleans used as indices ----------------------------------------------------

@family("bool_index")
def gen_bool_index(ch) -> Case:
    two_d = ch.coin(0.4)
    n = ch.int(2, 4)
    c = ch.float(-4, 4)
    v = "X" if two_d else "v"
    first = "X[0, 0]" if two_d else "v[0]"
    mask = ch.choice([f"{first} > {c}", f"np.all({v} > {c})", f"np.any({v} < {c})", "True", "False",
                      f"np.sum({v}) > {c}", f"np.bool_({first} < {c})", f"not ({first} > {c})"])
    form = ch.choice(["read", "read_matmul", "write", "write_scalar", "aug", "loop", "branch", "buffer"])
    lines = [f"m = {mask}"]
    w = f"np.arange({n}.0)"
    if form == "read":
        lines += [f"w = {v}[m]", "s = np.sum(w ** 2) + np.sum(w)"]
    elif form == "read_matmul":
        lines += [f"w = {v}[m] @ {w}", "s = np.sum(w * w)"]
    elif form in ("write", "write_scalar", "aug"):
        rhs = {"write": f"{v} * 2", "write_scalar": f"{first} * 3", "aug": f"np.sin({v})"}[form]
        op = "+=" if form == "aug" else "="
        lines += [f"b = {v} * 1.0", f"b[m] {op} {rhs}", "s = np.sum(b * b) + np.sum(b)"]
    elif form == "loop":
        lines = ["s = 0.0", f"for i in range({2 if two_d else n}):",
                 f"    m = {v}[i].sum() > {c}" if not two_d else f"    m = X[i, 0] > {c}",
                 f"    s = s + np.sum({v}[m] * {v}[i])"]
    elif form == "branch":
        lines += ["if m:", f"    w = {v}[m]", "else:", f"    w = {v}[None]", "s = np.sum(w[0] ** 2)"]
    else:
        lines += [f"b = Buffer({v})", f"b[m] = {v} * 3", "s = np.sum(b.copy() ** 2) + np.sum(b[m])"]
    body = "\n".join("    " + ln for ln in lines)
    shape = (2, n) if two_d else (n,)
    return Case(f"def f({v}):\n{body}\n    return s\n", _args(ch, shape), must_work=True)


def gen_argument_updated_in_loop(ch) -> Case:
    """An in-place right-hand side `f(du, u)` that updates its argument `du` in a loop, in one of
    the spellings NumPy runs alike (`du += e`, `du *= e`, `du[...] = du + e`, `du[:] += e`,
    `np.add(du, e, out=du)`), perhaps in a branch or a helper: the outputs (the arguments it
    writes into) and their derivatives are Python's (an in-place update of the argument in a loop
    went unseen: vjp had no output; jacfwd(out=0) refused `du += e`)."""
    n = ch.int(2, 4)
    term = ch.choice(["u * u", "np.sin(u) * 0.5", "u[::-1] * 0.25", "0.5 * u"])
    update = ch.choice([f"du += {term}", f"du -= {term}", f"du *= 1.0 + 0.1 * {term}", f"du[...] = du + {term}",
                        f"du[:] += {term}", f"np.add(du, {term}, out=du)"])
    inner = ch.choice(["        " + update, "        if i > 0:\n            " + update])
    trips = ch.int(1, 3)
    helper = ch.coin()
    if helper:
        src = f"""
def step(du, u, i):
{inner[4:].replace(chr(10) + '    ', chr(10))}

def f(du, u):
    for i in range({trips}):
        step(du, u, i)
"""
    else:
        src = f"""
def f(du, u):
    for i in range({trips}):
{inner}
"""
    return Case(src, [np.linspace(0.5, 1.5, n), np.array([ch.float(-1.5, 1.5) for _ in range(n)])], wrt=1)


def check_argument_updates(case: Case) -> tuple:
    """(status, detail) of a `gen_argument_updated_in_loop` case, judged by what the function does
    to its first argument: `vjp`'s output is the final `du` that running it leaves (on copies), its
    pullback along a random cotangent and `jacfwd(out=0)` match finite differences of that final
    `du` in `u`; 'refused' for a located MutationError. (The generic modes compare outputs with
    the function's value, None here.)"""
    import fuzzgen
    from adjoint_compiler import MutationError, jacfwd, vjp

    mod = fuzzgen.load(families.HEADER + case.source, "argupd")
    try:
        f = mod.f
        du0, u = case.args

        def final(u_):
            du = du0.copy()
            f(du, u_.copy())
            return du

        want = final(u)
        eps = 1e-6
        fd = np.stack([(final(u + eps * e) - final(u - eps * e)) / (2 * eps) for e in np.eye(u.size)], axis=-1)
        ct = np.linspace(-1.0, 1.0, du0.size)
        refused = []
        try:
            out, pullback = vjp(f, du0.copy(), u.copy())
            if out is None:
                return "wrong", f"vjp output None, but running it leaves du = {want!r}"
            checks = [("vjp output", out, want), ("pullback", pullback(ct)[1], ct @ fd)]
        except MutationError as exc:
            checks, refused = [], [str(exc)]
        try:
            checks.append(("jacfwd(out=0)", jacfwd(f, wrt=1, out=0)(du0.copy(), u.copy()), fd))
        except MutationError as exc:
            refused.append(str(exc))
        for what, got, expected in checks:
            if np.shape(got) != np.shape(expected) or not np.allclose(got, expected, rtol=1e-5, atol=1e-7):
                return "wrong", f"{what}: {got!r}, expected {expected!r}"
        return ("refused", refused[0]) if refused else ("pass", "")
    finally:
        fuzzgen.unload(mod)


@family("zero_d_updates")
def gen_zero_d_array_updated(ch) -> Case:
    """A 0-d array (an argument `np.array(0.7)`, or one the function makes) updated in place
    (`a += e`, `a *= e`, through a helper, in a loop) while another name holds it, or read after
    a helper updated it: NumPy changes the array for every name (it was taken for a number, which
    `+=` rebinds: wrong values and gradients; a helper's update and `a *= c` in one loop crashed).
    Right, or refused at the update."""
    op = ch.choice(["+=", "-=", "*="])
    term = ch.choice(["u * u", "np.sin(u)", "0.5 * u", "u"])
    made = ch.choice(["argument", "np.array(0.5)", "np.zeros(())", "np.asarray(0.25)", "a0.copy()"])
    head = "def f(a, u):\n" if made == "argument" else f"def f(a0, u):\n    a = {made}\n"
    shape = ch.choice(["alias", "helper", "loop", "alias_loop", "helper_and_update"])
    if shape == "alias":
        body = f"    b = a\n    a {op} {term}\n    return np.sum(b * u) + np.sum(a)\n"
    elif shape == "helper":
        body = f"    step(a, u)\n    return np.sum(a * 2.0)\n"
    elif shape == "loop":
        body = f"    for _ in range({ch.int(1, 3)}):\n        a {op} {term} * 0.5\n    return np.sum(a * u)\n"
    elif shape == "alias_loop":
        body = f"    b = a\n    for _ in range(2):\n        a {op} {term} * 0.5\n    return np.sum(b * 3.0)\n"
    else:  # (the helper writes into the array; `a *= 1.5` here made it a number: a crash)
        update = ch.choice(["a *= 1.5", "a += u", "a[...] = a * 1.5"])
        body = f"    for _ in range(2):\n        step(a, u)\n        {update}\n    return np.sum(a * u)\n"
    helper = f"def step(du, u):\n    du {op} {term}\n\n\n" if shape.startswith("helper") else ""
    first = np.array(ch.float(0.4, 1.2))
    return Case(helper + head + body, [first, ch.float(0.3, 0.9)], wrt=ch.choice([0, 1]) if made == "argument" else 1)


@family("argument_updates")
def gen_local_array_through_helper(ch) -> Case:
    """A loss that makes an array (`np.zeros_like(u)`, `np.empty(3)` filled, `np.array(...)`),
    hands it to an in-place right-hand side updating it (`du += e`, `du *= e`, in a loop or a
    branch of the helper, or the helper called in a loop), then reads it: NumPy updates the
    caller's array (the update was refused as one of an array another name holds; made by a
    constructor, it must work)."""
    make = ch.choice(["np.zeros_like(u)", "np.ones(3) * 0.5", "np.array([0.1, 0.2, 0.3])", "np.full(3, 0.25)",
                      "np.zeros(3)"])
    term = ch.choice(["u * u", "np.sin(u)", "0.5 * u", "u[::-1] * 0.25"])
    update = ch.choice([f"du += {term}", f"du -= {term}", f"du *= 1.0 + 0.1 * {term}"])
    inner = ch.choice([f"    {update}\n", f"    for _ in range(2):\n        {update}\n",
                       f"    if np.sum(u) > -10.0:\n        {update}\n"])
    call = ch.choice(["    rhs(du, u)\n", "    for _ in range(2):\n        rhs(du, u)\n"])
    use = ch.choice(["np.sum(du * w)", "np.sum(du ** 2)", "du @ w + np.sum(u)"])
    src = f"w = np.array([0.3, -1.1, 0.8])\n\n\ndef rhs(du, u):\n{inner}\n\ndef f(u):\n    du = {make}\n{call}    return {use}\n"
    # (an array made by arithmetic, `np.ones(3) * 0.5`, may be a number until ranks are known: `+=`
    # in the helper is then refused where the caller reads it, never a wrong number)
    return Case(src, [np.array([ch.float(-1.2, 1.2) for _ in range(3)])], must_work="*" not in make)


@family("argument_updates")
def gen_list_item_updated(ch) -> Case:
    """An item of a list updated in place (`xs[k] += e`, `*=`, in a loop or not), the items made
    afresh (`[np.zeros(3), ...]`, a comprehension, `append` in a loop), placed twice (`[z, z]`,
    `[z] * 2`), or 0-d (`np.array(0.5)`), while another value may hold the item (`a = xs[0]`, a
    copy `list(xs)`, `tuple(xs)`, the name it was made under) or only the list does. Python
    changes the item for every holder: right, or refused at the update (a 0-d item was taken for
    a number: wrong values; fresh items were refused)."""
    zero_d = ch.coin()
    item = "np.array(0.5)" if zero_d else "np.zeros(3)"
    make = ch.choice(["display", "comprehension", "append", "named", "twice", "repeat"])
    if make == "display":
        lines = [f"    xs = [{item}, {item}]"]
    elif make == "comprehension":
        lines = [f"    xs = [{item} for _ in range(2)]"]
    elif make == "append":
        lines = ["    xs = []", "    for _ in range(2):", f"        xs.append({item})"]
    elif make == "named":
        lines = [f"    z = {item}", f"    xs = [z, {item}]"]
    elif make == "twice":
        lines = [f"    z = {item}", "    xs = [z, z]"]
    else:
        lines = [f"    xs = [{item}] * 2"]
    holder = ch.choice(["none", "none", "item", "copy", "tuple", "alias"])
    lines += {"none": [], "item": ["    a = xs[0]"], "copy": ["    a = list(xs)[0]"],
              "tuple": ["    t = tuple(xs)", "    a = t[0]"], "alias": ["    ys = xs", "    a = ys[0]"]}[holder]
    op = ch.choice(["+=", "-=", "*="])
    term = ch.choice(["u", "np.sin(u)", "u * u"]) if not zero_d else ch.choice(["np.sum(u)", "np.sum(u * u)"])
    k = ch.choice(["0", "1"])
    if ch.coin():
        lines += [f"    for i in range({ch.int(1, 3)}):", f"        xs[(i + {k}) % 2] {op} {term} + 0.5"]
    else:
        lines += [f"    xs[{k}] {op} {term} + 0.5"]
    use = "np.sum(xs[0] * u) + np.sum(xs[1] ** 2)"
    if holder != "none":
        use += " + np.sum(a * u)"
    if make == "named":
        use += ch.choice(["", " + np.sum(z)"])
    src = "def f(u):\n" + "\n".join(lines) + f"\n    return {use}\n"
    safe = holder in ("none",) and make in ("display", "comprehension", "append")
    return Case(src, [np.array([ch.float(-1.2, 1.2) for _ in range(3)])], must_work=safe)


@family("in_place_checks")
def gen_update_numpy_refuses(ch) -> Case:
    """`a op= e` of an array where NumPy may refuse the update: the result has another shape
    (`y += x[:, None]`, a (3,) array updated by a (2, 3) one) or does not cast to `a`'s dtype (an
    integer or boolean array updated by a float, a real one by a complex value), in a loop, a
    helper, through a view or with views bound, or a number. The compiler once rebound `a` to
    the result and differentiated a function the primal cannot run."""
    dtype = ch.choice(["float", "float", "int", "bool"])  # (float32: README, limitations)
    shape = ch.choice([(3,), (3, 1), (1, 3), (2, 3)])
    make = ch.choice([f"np.ones({shape}, dtype={dtype})", f"np.zeros({shape}, dtype={dtype}) + u[0] * 0",
                      f"np.full({shape}, 2, dtype={dtype})"])
    term = ch.choice(["u", "u[:, None]", "u[None, :]", "u[:2, None] * u", "np.sum(u)", "u * 1j", "2",
                      "np.ones((2, 3)) * u"])
    op = ch.choice(["+=", "-=", "*=", "/=", "//="])
    where = ch.choice(["plain", "loop", "view", "bound", "helper", "slice", "item"])
    pre, target, post = [], "a", []
    if where == "view":
        pre, target = ["    v = a[...]"], "v"
    elif where == "slice":
        target = "a[...]"
    elif where == "item":
        pre, target, post = ["    d = {'k': a}"], "d['k']", ["    a = d['k']"]
    elif where == "bound":
        pre, post = ["    w = a.T"], ["    s = s + np.sum(w)"]
    if where == "loop":
        update = [f"    for _ in range(2):", f"        {target} {op} {term}"]
    elif where == "helper":
        update = [f"    a = bump(a, u)"]
    else:
        update = [f"    {target} {op} {term}"]
    helper = f"def bump(b, u):\n    b {op} {term}\n    return b\n\n" if where == "helper" else ""
    src = (helper + "def f(u):\n" + f"    a = {make}\n    s = 0.0\n" + "\n".join(pre + update + post)
           + "\n    return s + np.sum(np.real(a) * u[0])\n")
    return Case(src, [np.array([ch.float(0.5, 1.5) for _ in range(3)])], may_raise=True)


@family("argument_updates")
def gen_double_buffer(ch) -> Case:
    """Two arrays swapped by a loop that writes one from the other (`nxt[:] = f(cur)`, a slice
    write, `np.copyto`), the names swapped by a tuple, a temporary or not at all, then read
    through the loop's names or through the names the arrays had before it. The IR once kept
    the first names' arrays from before the loop: a zero gradient."""
    write = ch.choice(["nxt[:] = np.sin(cur) + 0.5 * cur", "nxt[1:] = cur[1:] * 0.5 + cur[:-1] * 0.25",
                       "np.copyto(nxt, np.tanh(cur))", "nxt[...] = cur * cur * 0.5"])
    swap = ch.choice(["cur, nxt = nxt, cur", "t = cur\n        cur = nxt\n        nxt = t", ""])
    make = ch.choice(["a = u.copy()\n    b = np.zeros(3)", "a = u * 1.0\n    b = u * 0.5"])
    read = ch.choice(["np.sum(cur ** 2)", "np.sum(nxt)", "np.sum(a)", "np.sum(b ** 2)", "np.sum(cur * a)"])
    src = f"""
def f(u):
    {make}
    cur, nxt = a, b
    for _ in range({ch.int(1, 4)}):
        {write}
        {swap}
    return {read}
"""
    return Case(src, [np.array([ch.float(-1.0, 1.0) for _ in range(3)])])


@family("in_place_calls")
def gen_in_place_library_call(ch) -> Case:
    """A library call that writes into its first argument (`np.put`, `np.put_along_axis`,
    `np.putmask`, `np.fill_diagonal`, `np.add.at`, `np.copyto`, `a.sort()`, `a.fill(v)`) on an
    array the function made, maybe a view of it, with repeated indices, values to repeat or
    broadcast, inside a loop; the array and a value read before the write are read after it
    (the write must be followed: the old slots pass nothing, the new ones pass to the values)."""
    shape = ch.choice([(3, 4), (4, 4), (2, 5)])
    n = shape[0] * shape[1]
    v = ch.choice(["w[:3] * 2.0", "np.sin(w[:3])", "w[0] * 1.5", "w[1:4] ** 2"])  # (three values or one)
    one = ch.choice(["w[0] * 2.0", "np.sin(w[1])", "w[2] ** 2"])
    call = ch.choice([
        f"np.put(b, [{ch.int(0, n - 1)}, {ch.int(0, n - 1)}, {ch.int(0, n - 1)}], {v})",
        f"np.put_along_axis(b, np.array([[{ch.int(0, shape[1] - 1)}]] * {shape[0]}), {one} * np.ones(({shape[0]}, 1)), axis=1)",
        f"np.put_along_axis(b, np.array([{ch.int(0, n - 1)}, {ch.int(0, n - 1)}]), {one} * np.ones(2), None)",
        f"np.putmask(b, b > {ch.float(-0.5, 0.5):.2f}, {v})",
        f"np.fill_diagonal(b, {v})",
        f"np.add.at(b, ([0, 1, 1], [{ch.int(0, shape[1] - 1)}, 0, 0]), {v})",
        f"np.copyto(b, {one} * np.ones(({shape[1]},)), where=b > 0.0)",
        "b.sort(axis=1)",
        f"b[1:2].fill({one})"])
    lines = ["def f(x, w):", f"    b = np.sin(x) * {ch.float(0.5, 1.5):.2f}", "    before = b[0, 0] * 2.0"]
    if ch.coin(0.3):
        lines += ["    for k in range(2):", f"        {call}", "        b = b * 1.1"]
    else:
        lines.append(f"    {call}")
    lines.append(f"    return np.sum(b * np.arange({float(n)}).reshape({shape})) + before * np.sum(x)")
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    x = rng.uniform(-1.5, 1.5, shape)
    x = np.where(np.abs(np.sin(x) * 1.5) < 0.6, x + 0.3, x)  # (comparisons not at the finite differences' scale)
    return Case("\n".join(lines) + "\n", [x, rng.uniform(0.3, 1.2, 5)], wrt=ch.choice([0, 1]), must_work=True)


@family("argument_updates")
def gen_array_made_per_trip_written(ch) -> Case:
    """A loop that makes an array each trip (`np.array(...)`, `x.copy()`, `np.zeros`, a Buffer),
    writes into it (a slot, a slice, `+=`, `copyto`) and reads it, in one loop or two nested. The
    pullback restores each trip's array in place to get at the values before the write: a pullback
    run twice (`vjp`) once started from the restored arrays of all but the last trip, and gave
    another gradient the second time."""
    make = ch.choice(["np.array(u0 * (k + 1.0))", "(u0 * (k + 1.0)).copy()", "u0 * (k + 1.0)",
                      "np.zeros(u0.shape) + u0 * k"])
    write = ch.choice(["a[0] = a[0] * 0.9 + a[-1]", "a[1:] += a[:-1] * 0.5", "a[::2] = np.sin(a[::2])",
                       "np.copyto(a, a * a)", "a *= 1.5"])
    inner = ch.coin(0.3)
    lines = ["def f(u0):", "    total = 0.0", f"    for k in range({ch.int(1, 3)}):", f"        a = {make}"]
    if inner:
        lines += ["        for j in range(2):", f"            {write}"]
    else:
        lines.append(f"        {write}")
    lines.append(f"        total = total + np.sum(a * {ch.choice(['u0', 'a', '2.0'])})")
    lines.append("    return total")
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case("\n".join(lines) + "\n", [rng.uniform(-1.0, 1.0, 5)], must_work=True)

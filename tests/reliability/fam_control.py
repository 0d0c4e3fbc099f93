"""Family generators for control flow and storage (issue 12, families 14 and 10).

- `dead_loops`: nested loops (for over ranges, rows, enumerate; while; break/continue) whose inner
  or outer body computes nothing the gradient reads forward (`grad` drops it);
- `zero_trip`: loops that may run zero times around reads that would raise or overflow if they
  ran anyway (`p[5]`, `a / b` with b = 0, mismatched shapes, `math.log` of a negative number);
- `list_slots`: Python lists written slot by slot (`out = [0.0] * n; out[i] = ...`);
- `zero_d`: 0-d arrays written (`a[...] = v`, `a[()] = v`, `np.copyto(a, v)`);
- `iterators`: `itertools.islice`, `iter`, `map` and generators into `copyto`;
- `complex`: complex values in many spellings (differentiated or refused outside the allow-list), and real programs that look like them;
- `reused_names`: one name assigned in consecutive loops (the tape once restored a loop-carried
  value the forward pass never computed: UnboundLocalError).

`check_modes(case)` checks a case in `grad` and `vjp` too (families.check_case uses value_and_grad
only, and `grad` drops forward values the adjoint does not read).
"""
from __future__ import annotations

import numpy as np
from families import Case, Result, check_case, family

_SCALAR_OPS = ["{a} * 2.0", "np.sin({a})", "{a} * {a}", "{a} + 1.5", "np.tanh({a}) * 3.0", "-{a}", "{a} ** 2"]


def _term(ch, a: str) -> str:
    return ch.choice(_SCALAR_OPS).format(a=a)


def _arr(ch, shape, lo=-1.5, hi=1.5):
    return np.array([ch.float(lo, hi) for _ in range(int(np.prod(shape)))]).reshape(shape)


# ---------------------------------------------------------------------------------------------
# dead_loops
# ---------------------------------------------------------------------------------------------

def _loop_header(ch, var: str, extent: str, outer: str | None, depth: int):
    """(header lines, element expression builder) for one loop level over `extent` items."""
    kind = ch.choice(["range", "range_shape", "triangle", "while", "while_true"] if outer else
                     ["range", "range_shape", "rows", "enumerate", "while"])
    ind = "    " * depth
    if kind == "range":
        return [f"{ind}for {var} in range({extent}):"], None
    if kind == "range_shape":
        return [f"{ind}for {var} in range(x.shape[{0 if outer is None else 1}]):"], None
    if kind == "triangle" and outer:
        return [f"{ind}for {var} in range(min({outer} + 1, x.shape[1])):"], None
    if kind == "rows":
        return [f"{ind}for {var}, row_{var} in enumerate(x):"], None
    if kind == "enumerate":
        return [f"{ind}for {var}, _unused_{var} in enumerate(x):"], None
    if kind == "while":
        return [f"{ind}{var} = 0", f"{ind}while {var} < {extent}:"], f"{ind}    {var} = {var} + 1"
    return [f"{ind}{var} = 0", f"{ind}while True:"], \
        f"{ind}    {var} += 1\n{ind}    if {var} >= {extent}:\n{ind}        break"


@family("dead_loops")
def nested(ch) -> Case:
    rows, cols = ch.int(1, 3), ch.int(1, 4)
    lines = ["def f(x):", "    s = 0.0"]
    head, tail_i = _loop_header(ch, "i", str(rows), None, 1)
    lines += head
    if ch.coin(0.3):
        lines.append(f"        s = s + {_term(ch, 'x[i, 0]')}")
    deeper = ch.coin(0.3)
    head, tail_j = _loop_header(ch, "j", str(cols), "i", 2)
    lines += head
    ind = "            "
    if ch.coin(0.25):
        lines += [f"{ind}if j == {ch.int(0, cols - 1)}:", f"{ind}    {ch.choice(['continue', 'break'])}"] \
            if not tail_j else []
    if deeper:
        lines += [f"{ind}for k in range({ch.int(1, 2)}):", f"{ind}    s = s + {_term(ch, 'x[i, j]')} * 0.5"]
    else:
        update = ch.choice([f"s = s + {_term(ch, 'x[i, j]')}", "s = s + x[i, j]", "s = s * 0.5 + x[i, j]",
                            "s = s + x[i, j] * x[i, 0]"])
        lines.append(f"{ind}{update}")
    if tail_j:
        lines.append(tail_j)
    if ch.coin(0.3):
        lines.append(f"        s = s * {ch.float(0.5, 1.5)}")
    if tail_i:
        lines.append(tail_i)
    lines.append("    return s")
    return Case("\n".join(lines) + "\n", [_arr(ch, (rows, cols))], must_work=True)


# ---------------------------------------------------------------------------------------------
# zero_trip
# ---------------------------------------------------------------------------------------------

_RISKY = [  # (setup lines, expression that would raise or overflow, extra args and their names)
    ([], "p[{big}]", [], []),
    (["    a = p[0]", "    b = p[1] * 0.0"], "a / b", [], []),
    ([], "p[1, 2] * 3.0", [], []),
    ([], "p[i0]", [7], ["i0"]),
    (["    xs = [p[0], p[1]]"], "xs[{big}]", [], []),
    ([], "np.sum(p + q)", [np.ones(2)], ["q"]),
    ([], "np.sum(p / q)", [np.zeros(2)], ["q"]),
    (["    a = p[0] - 10.0"], "math.log(a)", [], []),
    (["    big = p[0] * 1e308 * 1e10"], "big * p[1]", [], []),
    (["    t = (p[0], p[1])"], "t[{big}] * p[0]", [], []),
    ([], "p[{big}] / p[0]", [], []),
]


@family("zero_trip")
def guarded_reads(ch) -> Case:
    setup, risky, extra, names = ch.choice(_RISKY)
    n = ch.choice(["n", "n * 1", "len(p) - 3 + n"])  # zero trips
    risky = risky.format(big=ch.int(3, 9))
    loop = ch.choice(["for", "while", "for_slice", "for_break"])
    body = [f"s = s + {risky}"] if ch.coin() else [f"t = {risky}", "s = s + t * 2.0"]
    lines = ["import math", "", f"def f(p, n{''.join(', ' + a for a in names)}):", "    s = 0.0"] + setup
    if loop == "for":
        lines.append(f"    for i in range({n}):")
    elif loop == "for_slice":
        lines.append(f"    for e in p[:{n}]:")
    elif loop == "for_break":
        lines += [f"    for i in range({ch.int(1, 3)}):", f"        if i >= {n}:", "            break"]
    else:
        lines += ["    k = 0", f"    while k < {n}:", "        k = k + 1"]
    lines += ["        " + b for b in body]
    lines.append(f"    return s + np.sum({ch.choice(['p', 'p * p', 'np.sin(p)'])})")
    return Case("\n".join(lines) + "\n", [_arr(ch, (3,), 0.5, 1.5), 0] + extra, must_work=True)


@family("zero_trip")
def nested_guards(ch) -> Case:
    """Invariant reads in nested loops with 0..2 trips each; risky ones only where a loop is empty."""
    n, m = ch.int(0, 2), ch.int(0, 2)
    safe = ch.choice(["p[0] * p[1]", "p[2] / p[0]", "p[1] + 0.5", "np.sin(p[0])", "p[0] * dt"])
    risky = ch.choice(["p[7]", "p[0] / (p[1] * 0.0)", "p[1, 1]"]) if n * m == 0 else safe
    inner = ch.choice(["range(m)", "range(m + 0)", "range(i, i + m)"])
    lines = ["def f(p, dt, n, m):", "    s = 0.0", "    for i in range(n):",
             f"        s = s + {ch.choice(['p[i]', '0.0', safe])}", f"        for j in {inner}:",
             f"            s = s * 0.5 + {safe} + {risky} * 0.0", "    return s + np.sum(p) * dt"]
    return Case("\n".join(lines) + "\n", [_arr(ch, (3,), 0.5, 1.5), ch.float(0.2, 0.9), n, m],
                wrt=ch.choice([0, 1]), must_work=True)


@family("zero_trip")
def running_invariants(ch) -> Case:
    """Invariant work in a loop that runs 0..3 times: hoisted or not, the same numbers."""
    n = ch.int(0, 3)
    inv = ch.choice(["p[0] * dt", "p[1] / dt", "0.5 * dt", "p[0] + p[1]", "-p[2]", "dt * dt", "p[0] * 2.0"])
    lines = ["def f(p, dt, n):", "    u = p[2]", "    for _ in range(n):",
             f"        u = u * 0.9 + {inv} * {ch.choice(['u', '1.0', 'p[1]'])}",
             "    return u + dt * p[0]"]
    return Case("\n".join(lines) + "\n", [_arr(ch, (3,), 0.5, 1.5), ch.float(0.2, 0.9), n],
                wrt=ch.choice([0, 1]), must_work=True)


# ---------------------------------------------------------------------------------------------
# reused_names: one name assigned in several consecutive (or nested) loops, read across them
# ---------------------------------------------------------------------------------------------

@family("reused_names")
def consecutive_loops(ch) -> Case:
    """The same temporaries (`c`, `t`) assigned in two or three loops in a row, sometimes read
    after the loop that set them last (a loop-carried value the next loop starts from)."""
    loops = ch.int(2, 3)
    lines = ["def f(x):", "    s = 0.0", "    t = x * 0.5"]
    for k in range(loops):
        trips = ch.int(0, 3)
        lines.append(f"    for i in range({trips}):")
        lines.append(f"        c = i + {ch.choice(['1.0', '0.5', '2.0'])}")
        if ch.coin():
            lines.append(f"        t = {ch.choice(['np.sin(t) * c', 't * c', 'x * c + t * 0.5'])}")
        lines.append(f"        s = s + np.sum({ch.choice(['np.sin(x * c)', 't * c', 'x * x * c', 'np.cos(t) * c'])})")
        if ch.coin():
            lines.append(f"    s = s + {ch.choice(['np.sum(t)', 's * 0.5', 'np.sum(t * x)'])}")
    lines.append(f"    return s + np.sum({ch.choice(['t', 'x', 't * t'])})")
    return Case("\n".join(lines) + "\n", [_arr(ch, (3,))], must_work=True)


# ---------------------------------------------------------------------------------------------
# singular_unused: an infinite local derivative where nothing flows back (0 * inf is no nan)
# ---------------------------------------------------------------------------------------------

# (expression of the entry `v`, the value of v where its local derivative is infinite)
_SINGULAR = [("np.sqrt({v})", 0.0), ("np.log({v})", 0.0), ("{v} ** 0.5", 0.0), ("np.cbrt({v})", 0.0),
             ("np.arcsin({v})", 1.0), ("np.arccos({v})", 1.0), ("np.arctanh({v})", 1.0),
             ("np.log1p({v} - 1.0)", 0.0), ("1.0 / {v}", 0.0), ("p[1] / {v}", 0.0), ("{v} ** -2", 0.0),
             ("np.reciprocal({v})", 0.0), ("np.log(np.sqrt({v}))", 0.0), ("np.log10({v}) * 2.0", 0.0),
             ("np.sqrt({v}) * p[1]", 0.0), ("np.arccosh({v})", 1.0)]


@family("singular_unused")
def guarded(ch) -> Case:
    """A value whose derivative is infinite at the argument (`sqrt(0)`, `log(0)`, `arcsin(1)`,
    `1 / 0`...) computed, then used only in a branch not taken, a loop that runs zero times, or
    entries `np.where` does not select: its cotangent is zero and so is its contribution."""
    expr, at = ch.choice(_SINGULAR)
    # not `t * t`: a product's rule multiplies by the other factor unguarded (0 * inf is nan there)
    terms = ["{a} * 2.0", "np.sin({a})", "{a} + 1.5", "np.tanh({a}) * 3.0", "-{a}", "{a} ** 2", "np.exp({a} * 0.1)"]

    def _term(ch, a):
        return ch.choice(terms).format(a=a)
    guard = ch.choice(["if", "for", "while", "where", "where_all", "helper"])
    whole = guard == "where_all"
    t = expr.format(v="p" if whole else "p[0]")
    lines = ["def f(p, n):", f"    t = {t}", f"    s = {ch.choice(['np.sum(p * p)', 'p[1] * p[2]', 'np.sum(np.sin(p))'])}"]
    if guard == "if":
        lines += [f"    if p[1] > {ch.float(3.0, 9.0):.3f}:", f"        s = s + {_term(ch, 't')}"]
    elif guard == "for":
        lines += [f"    for i in range({ch.choice(['n', 'n * 2', 'len(p) - 3'])}):", f"        s = s + {_term(ch, 't')}"]
    elif guard == "while":
        lines += ["    k = 0", "    while k < n:", f"        s = s * 0.5 + {_term(ch, 't')}", "        k = k + 1"]
    elif guard == "where":
        lines += [f"    s = s + np.where(p[1] > 50.0, {_term(ch, 't')}, p[2])"]
    elif guard == "helper":
        lines = ["def pick(c, a, b):", "    if c:", "        return a", "    return b", ""] + lines
        lines += [f"    s = s + pick(p[1] > 50.0, {_term(ch, 't')}, p[2] * 2.0)"]
    else:
        lines += [f"    s = s + np.sum(np.where(p > 50.0, {_term(ch, 't')}, p))"]
    lines.append("    return s")
    p = _arr(ch, (3,), 0.5, 1.5)
    p[0] = at
    return Case("\n".join(lines) + "\n", [p, 0], must_work=True)


# ---------------------------------------------------------------------------------------------
# list_slots
# ---------------------------------------------------------------------------------------------

_MAKE_LIST = ["[0.0] * {n}", "[0.0 for _ in range({n})]", "list(np.zeros({n}))", "[1.0] * {n}",
              "list(x)", "[x[k] * 1.0 for k in range({n})]"]


@family("list_slots")
def slot_writes(ch) -> Case:
    n = ch.int(2, 4)
    make = ch.choice(_MAKE_LIST).format(n=n)
    lines = ["def f(x):", f"    out = {make}"]
    style = ch.choice(["loop", "constant", "negative", "augmented", "recurrence", "branch", "while", "append"])
    if style == "loop":
        lines += [f"    for i in range({n}):", f"        out[i] = {_term(ch, 'x[i]')}"]
    elif style == "constant":
        k = ch.int(0, n - 1)
        lines += [f"    out[{k}] = {_term(ch, 'x[0]')} + out[{n - 1 - k}]"]
    elif style == "negative":
        lines += [f"    out[-1] = {_term(ch, 'x[1]')}", "    out[0] = out[-1] * x[0]"]
    elif style == "augmented":
        lines += [f"    for i in range({n}):", f"        out[i] += {_term(ch, 'x[i]')}"]
    elif style == "recurrence":
        lines += ["    out[0] = x[0]", f"    for i in range(1, {n}):", "        out[i] = out[i - 1] * x[i] + 0.5"]
    elif style == "branch":
        lines += ["    if x[0] > 0:", f"        out[0] = {_term(ch, 'x[1]')}", "    else:",
                  f"        out[1] = {_term(ch, 'x[0]')}"]
    elif style == "while":
        lines += ["    i = 0", f"    while i < {n}:", f"        out[i] = {_term(ch, 'x[i]')}", "        i += 1"]
    else:
        lines = ["def f(x):", "    out = []", f"    for i in range({n}):", "        out.append(x[i])",
                 f"    out[{ch.int(0, n - 1)}] = {_term(ch, 'x[0]')}"]
    if ch.coin(0.3):
        lines.append(f"    out[{ch.int(0, n - 1)}] = {ch.float(-1, 1)}")
    result = ch.choice(["sum(out)", "out[0] * out[-1] + out[1]", "np.sum(np.array(out) * x)",
                        "sum(o * o for o in out)", "np.sum(np.array(out) ** 2)"])
    lines.append(f"    return {result}")
    return Case("\n".join(lines) + "\n", [_arr(ch, (n,))], must_work=True)


@family("list_slots")
def lists_of_arrays(ch) -> Case:
    n = ch.int(2, 3)
    lines = ["def f(x):", f"    rows = {ch.choice(['[np.zeros(3)] * ' + str(n), '[x * 0.0 for _ in range(' + str(n) + ')]'])}",
             f"    for i in range({n}):", f"        rows[i] = {ch.choice(['x * x[i]', 'np.sin(x) + i', 'x[i] * 2.0 + x'])}",
             f"    return np.sum(rows[0] * rows[{n - 1}])"]
    return Case("\n".join(lines) + "\n", [_arr(ch, (3,))], must_work=True)


# ---------------------------------------------------------------------------------------------
# zero_d
# ---------------------------------------------------------------------------------------------

@family("zero_d")
def zero_d_writes(ch) -> Case:
    make = ch.choice(["np.zeros(())", "np.array(2.0)", "np.asarray(0.5).copy()", "np.ones(())", "np.empty(())"])
    lines = ["def f(v):", f"    a = {make}"]
    for _ in range(ch.int(1, 3)):
        write = ch.choice(["a[...] = {e}", "a[()] = {e}", "a[...] += {e}", "a[()] *= {e}", "np.copyto(a, {e})",
                           "a[...] = a * {e}"])
        if write.startswith(("a[...] +=", "a[()] *=", "a[...] = a")) and make == "np.empty(())":
            write = "a[...] = {e}"
        lines.append("    " + write.format(e=_term(ch, f"v[{ch.int(0, 2)}]")))
        if ch.coin(0.3):
            lines.append(f"    b{len(lines)} = a * 1.0")
    lines.append(f"    return {ch.choice(['float(a) * v[1]', 'np.sum(a * v)', 'a[()] + v[2]', 'float(a)'])}")
    return Case("\n".join(lines) + "\n", [_arr(ch, (3,))], must_work=True)


# ---------------------------------------------------------------------------------------------
# iterators
# ---------------------------------------------------------------------------------------------

@family("iterators")
def into_copyto(ch) -> Case:
    size = ch.int(2, 4)
    src = ch.choice([
        "itertools.islice(x, {k})", "itertools.islice(x * 2.0, 1, {k1})", "itertools.islice(iter(x), 0, {k2}, 2)",
        "iter(x[:{k}])", "map(np.sin, x[:{k}])", "(x[i] * x[i] for i in range({k}))",
        "itertools.islice((v * 3.0 for v in x), {k})", "itertools.islice(x.reshape(2, 3), 1)"])
    k = ch.int(1, size)
    src = src.format(k=k, k1=k + 1, k2=2 * k - 1)
    dst = ch.choice([f"np.zeros({size})", f"Buffer(np.zeros({size}))", f"np.ones({size})"])
    read = "b.copy()" if dst.startswith("Buffer") else "b"
    lines = ["import itertools", "", "def f(x):", f"    b = {dst}", f"    copyto(b, {src})",
             f"    return np.sum({read} * {read}) + np.sum({read}) * x[0]"]
    return Case("\n".join(lines) + "\n", [_arr(ch, (6,))], must_work=True)


# ---------------------------------------------------------------------------------------------
# complex
# ---------------------------------------------------------------------------------------------

_COMPLEX = [
    "z = v * (1 + 2j)\n    return np.sum(np.abs(z) ** 2)",
    "z = v + 1j\n    return np.sum(np.abs(z))",
    "return np.sum(np.abs(np.exp(1j * v)))",
    "z = v.astype({ctype})\n    return np.sum(np.abs(z * z))",
    "z = np.zeros(3, dtype={ctype}) + v\n    return np.sum(np.abs(z))",
    "z = np.array(v, dtype={ctype})\n    return np.sum(np.abs(z))",
    "return abs(complex(v[0], v[1]))",
    "return abs(np.complex128(v[0]) ** 2)",
    "return np.sum(np.abs(np.fft.fft(v)))",
    "return np.sum(np.abs(np.fft.rfft(v)) ** 2)",
    "return np.sum(np.abs(v * W))",
    "return np.sum(np.abs(v * Z))",
    "return np.sum(np.real(v * 1.0) * v)",
    "return np.sum((v * 1.0).real * v)",
    "return np.sum(np.angle(v) + v)",
    "return np.sum(np.abs(np.emath.sqrt(v - 2.0)))",
    "return np.sum(np.abs(rot(v)))",
    "return abs((s - 0.0) ** 0.5) * v[0] + np.sum(v)",
    "t = s ** 1.5\n    return np.sum(v) * 2.0 + abs(t)",
]


@family("complex")
def complex_values(ch) -> Case:
    body = ch.choice(_COMPLEX).format(ctype=ch.choice(["complex", "np.complex128", "'complex64'", "'c16'",
                                                       "np.dtype('complex128')"]))
    src = ("W = np.array([1 + 1j, 2.0, 3.0])\nZ = 2j\n\n\ndef rot(x):\n    return x * 1j\n\n\n"
           f"def f(v, s):\n    {body}\n")
    v = _arr(ch, (3,))
    v[np.abs(v) < 0.1] = 0.5  # (np.angle of a real number jumps at 0: finite differences there are no derivative)
    return Case(src, [v, ch.float(-2.0, -0.5)])


@family("complex")
def real_lookalikes(ch) -> Case:
    body = ch.choice(["z = v.astype({rtype})\n    return np.sum(z * z)",
                      "z = np.zeros(3, dtype={rtype}) + v\n    return np.sum(z ** 2)",
                      "return np.sum(np.abs(v) ** 1.5)",
                      "return np.sum(np.array(v, dtype={rtype}) * v)",
                      "return s ** 2 * np.sum(v)"])
    body = body.format(rtype=ch.choice(["float", "np.float64", "'float64'", "'f8'"]))
    return Case(f"def f(v, s):\n    {body}\n", [_arr(ch, (3,)), ch.float(0.5, 2.0)], must_work=True)


# ---------------------------------------------------------------------------------------------
# grad and vjp modes
# ---------------------------------------------------------------------------------------------

def check_modes(case: Case) -> Result:
    """`families.check_case` through `value_and_grad`, `grad` and `vjp`."""
    return check_case(case, modes=("joint", "grad", "vjp"))


@family("pass_through_loops")
def carried_unchanged_adjoint(ch) -> Case:
    """Loops (for, while, nested) whose trips change a carried value only by adding or scaling
    with values that carry no gradient (the other argument when it is not differentiated, a
    constant, the counter), so the reverse pass has nothing to do per trip: the carried adjoint
    passes through (once printed as a `for` with no body). Differentiated with respect to the
    start value; the other argument sometimes too."""
    start = ch.choice(["h0", "h0 * 1.0", "np.sin(h0)"])
    step = ch.choice(["h = h + v", "h += v", "h = h - 0.5 * v", "h = h + i * 0.1", "h += 1.5"])
    inner = ch.coin(0.4)
    loop = ch.choice(["for", "while"])
    n = ch.int(1, 3)
    body = f"            {step}\n" if inner else f"        {step}\n"
    if inner:
        body = f"        for j in range({ch.int(1, 2)}):\n" + body
    if loop == "for":
        head, tail = f"    for i in range({n}):\n", ""
    else:
        head, tail = f"    i = 0\n    while i < {n}:\n", "        i += 1\n"
    finish = ch.choice(["h * h", "np.sum(h ** 3)", "np.sum(np.tanh(h)) + np.sum(v)"])
    src = f"def f(h0, v):\n    h = {start}\n{head}{body}{tail}    return {finish}\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    shape = ch.choice([(), (3,)])
    h0 = float(rng.uniform(-0.8, 0.8)) if shape == () else rng.uniform(-0.8, 0.8, shape)
    # (an array start updated with `+=` is the argument's own array: refusing it is allowed)
    return Case(src, [h0, float(rng.uniform(0.1, 0.5))], wrt=0, must_work=shape == () or "+=" not in step)


@family("control")
def gen_unpacked(ch):
    """`a, b = v` and nested targets, of a tuple or list display, an array's rows, a helper's
    returned tuple, a shape, a loop over `zip` or `enumerate`, with as many targets as items or
    not. Python raises on another length: the gradient must raise too (it once read the first
    items and gave a number)."""
    have, want = ch.int(2, 3), ch.int(2, 3)
    names = ["a", "b", "c"][:want]
    target = ", ".join(names)
    use = " * ".join(f"np.sum({n})" for n in names)
    source = ch.choice(["tuple", "list", "rows", "helper", "loop", "nested"])
    items = [f"v[{k}] * {k + 1}.0" for k in range(have)]
    helper = ""
    if source == "tuple":
        body = [f"    t = ({', '.join(items)},)", f"    {target} = t"]
    elif source == "list":
        body = [f"    {target} = [{', '.join(items)}]"]
    elif source == "rows":
        body = [f"    m = np.reshape(v[:{have * 2}], ({have}, 2))", f"    {target} = m"]
    elif source == "helper":
        helper = f"def parts(v):\n    return {', '.join(items)}\n\n"
        body = [f"    {target} = parts(v)"]
    elif source == "nested":
        body = [f"    p, ({target}) = v[0], ({', '.join(items)},)"]
        use += " * p"
    else:
        body = ["    s = 0.0", f"    for k, ({target}) in enumerate(zip({', '.join(['v'] * have)})):",
                f"        s = s + {use.replace('np.sum', '')}", "    return s"]
        src = helper + "def f(v):\n" + "\n".join(body) + "\n"
        return Case(src, [np.array([ch.float(0.5, 1.5) for _ in range(6)])], may_raise=True)
    src = helper + "def f(v):\n" + "\n".join(body) + f"\n    return {use}\n"
    return Case(src, [np.array([ch.float(0.5, 1.5) for _ in range(6)])], may_raise=True)


@family("control")
def gen_list_changed_while_iterated(ch):
    """A loop over a list (`for v in xs`, `enumerate`, `zip`, `reversed`) whose body grows or
    shrinks it (`append`, `pop`, `+= [...]`, `del xs[-1]`, guarded by its length), writes its
    items, rebinds it, or changes another list. Python's iterator sees a change of length (the
    loop once ran over the items the list began with: wrong values, or a crash on `pop`)."""
    loop = ch.choice(["for v in xs:", "for k, v in enumerate(xs):", "for v, w in zip(xs, ys):",
                      "for v in reversed(xs):"])
    change = ch.choice(["if len(xs) < 5:\n            xs.append(v * 2.0)", "if len(xs) > 1:\n            xs.pop()",
                        "if len(xs) < 5:\n            xs += [v * 0.5]", "if len(xs) > 1:\n            del xs[-1]",
                        "xs = xs + [v * 2.0]", "ys.append(v * v)", "xs[0] = v * 1.5"])
    src = f"""
def f(x):
    xs = [x[0], x[1], x[2]]
    ys = [x[2], x[1], x[0]]
    s = 0.0
    {loop}
        s = s + v * {ch.float(0.5, 1.5)}
        {change}
    return s + sum(ys) * 0.5 + xs[0]
"""
    return Case(src, [np.array([ch.float(0.5, 1.5) for _ in range(3)])])


@family("control")
def gen_name_read_after_its_loop(ch):
    """A name a loop binds (its target, a name assigned in the body or in one branch of it, or by an
    inner loop) read after the loop, bound before it or not, by loops that may run no trips. Python
    reads the last value bound, the value from before the loop, or raises UnboundLocalError: the
    gradient must do the same (a read was refused, and a name bound in the body entered as None, so
    `x[k]` after no trip read `x[None]`: a wrong number where Python raises)."""
    n = ch.int(0, 3)
    trips = ch.choice([str(n), "n", "len(x) - 3", "x.shape[0] // 2"])
    pre = ch.choice(["", "    i = 1\n", "    k = 2\n", "    i = 0\n    k = 0\n"])
    loop = ch.choice([f"    for i in range({trips}):\n", f"    for i, v in enumerate(x[:{trips}]):\n",
                      f"    for j in range(2):\n        for i in range({trips}):\n"])
    ind = "        " if loop.count("for") == 1 else "            "
    body = ch.choice([f"{ind}s = s + x[i] * {ch.float(0.5, 1.5)}\n",
                      f"{ind}k = i + 1\n{ind}s = s + np.sin(x[k])\n",
                      f"{ind}if x[i] > 0.9:\n{ind}    k = i\n{ind}s = s + x[i] ** 2\n",
                      f"{ind}s = s * 0.5 + x[i]\n"])
    use = ch.choice(["x[i]", "x[k]", "x[i] * i", "np.sum(x[:i + 1])", "x[i + k]"])
    src = f"def f(x, n):\n    s = 0.0\n{pre}{loop}{body}    return s + {use} ** 2\n"
    x = np.array([ch.float(0.2, 0.7) if ch.coin(0.5) else ch.float(1.1, 1.5) for _ in range(6)])  # (none near 0.9)
    return Case(src, [x, n], may_raise=True)


@family("zero_trip")
def gen_unused_statement_that_raises(ch) -> Case:
    """A statement whose value nothing reads (so `grad` need not compute it) but which raises in
    Python for these arguments: an index out of bounds, a Python integer or float divided by
    zero, `math.log` of a negative number, a product or sum of mismatched shapes. The gradient
    must raise too; the same statements where they do not raise must still be differentiated."""
    raising = ch.coin()
    n = 10 if raising else 1
    zero = 0 if raising else 2
    unused = ch.choice([f"unused = x[{n}] * 2.0", f"unused = {n} // ({zero} * k)", f"unused = 3.0 / ({zero} * k)",
                        f"unused = math.log({-1.0 if raising else 1.0} * k)", f"unused = {n} % ({zero} * k)",
                        f"unused = x @ np.ones({4 if raising else 3})", f"unused = x + np.ones({2 if raising else 3})",
                        "unused = x[k * 10]" if raising else "unused = x[k]"])
    where = ch.choice(["top", "loop", "branch"])
    body = {"top": f"    {unused}\n", "loop": f"    for i in range(2):\n        {unused}\n",
            "branch": f"    if np.sum(x) > -100.0:\n        {unused}\n"}[where]
    src = f"import math\n\n\ndef f(x, k):\n{body}    return np.sum(np.sin(x) * x)\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(-1.0, 1.0, 3), 1], wrt=0, may_raise=True)


@family("iterators")
def gen_iterated_name_rebound(ch) -> Case:
    """A loop over a name (`for v in x`, `enumerate(x)`, `zip(x, y)`, a list of it) whose body
    rebinds that name: Python iterates the object the name held when the loop began."""
    head = ch.choice(["for v in x:", "for i, v in enumerate(x):", "for v, w in zip(x, x * 0.5):",
                      "for v in list(x):", "for v in x[1:]:"])
    rebind = ch.choice(["x = x * 2.0", "x = np.sin(x)", "x = x[::-1] + 1.0", "x = x[1:]" if "zip" not in head else "x = x + 0.5"])
    use = ch.choice(["s = s + v", "s = s + v * np.sum(x)", "s = s + np.sin(v) * 2.0", "s += v * v"])
    src = f"def f(x):\n    s = 0.0\n    {head}\n        {use}\n        {rebind}\n    return s + np.sum(x)\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(-1.0, 1.0, 4)], must_work=True)


@family("iterators")
def gen_stream_read_after_a_change(ch) -> Case:
    """An iterator (a generator expression, `map`, `filter`, `zip`, `enumerate`) bound to a name
    and read once, later, by a consumer or a loop, with a statement between that rebinds a name
    its items read or writes into an array they read (Python computes the items only when read):
    the gradient follows Python, or the program is refused."""
    make = ch.choice(["it = (v * k for v in y)", "it = map(lambda v: v * k, y)", "it = filter(lambda v: v > t, y)",
                      "it = zip(y, y * k)", "it = enumerate(y)", "it = map(np.sin, y)"])
    between = ch.choice(["k = 3.0", "t = 0.5", "y[0] = 10.0 * x[1]", "y *= 2.0", "z = 1.5", ""])
    read = ch.choice(["total = sum(it)" if "zip" not in make and "enumerate" not in make else "total = sum(a * b for a, b in it)",
                      "total = 0.0\n    for q in it:\n        total = total + np.sum(q)"])
    src = (f"def f(x):\n    k = 2.0\n    t = 0.0\n    y = x * 1.0\n    {make}\n    {between}\n    {read}\n"
           f"    return total + np.sum(y)\n")
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(-1.0, 1.0, 4)])

"""Family generators for the rule table (issue 12, families 6, 7, 12 and 15): constructors from
values, index tricks and the interleaved einsum form, special points (zeros, singular matrices,
cones), keywords that do or do not change the derivative, and calls on constants that need no
rule. Each writes one program in a random spelling (positional or keyword, function or method,
random shapes, constants and surrounding arithmetic); every case here must work.

    python tools/fuzz_long.py --families --n 300 --workers 1
"""
from __future__ import annotations

import numpy as np
from families import Case, family


def _vec(ch, n, lo=-2.0, hi=2.0, away_from_integers=False):
    out = []
    for _ in range(n):
        v = ch.float(lo, hi)
        if away_from_integers:
            v = float(np.floor(v)) + ch.choice([0.25, 0.35, 0.45, 0.55, 0.65, 0.75])
        out.append(v)
    return np.array(out)


def _wrap(ch, expr: str, n_out: str = "") -> str:
    """A scalar from an array expression, with some arithmetic around it."""
    return ch.choice([
        f"np.sum({expr} ** 2)",
        f"np.sum(np.sin({expr}))",
        f"np.sum({expr} * {expr})",
        f"({expr}).sum() * 0.5",
        f"np.sum(np.tanh({expr}) * 1.5) + 0.25",
        f"np.mean(({expr}) ** 2)",
    ])


# -- family 6: constructors -----------------------------------------------------------------------

@family("constructors")
def gen_full(ch) -> Case:
    n = ch.int(2, 4)
    a = _vec(ch, n)
    fill = ch.choice(["a[0]", "a[1] * 2.0", "np.sum(a)", "s", "a", "a[-1]"])
    kind = ch.choice(["full", "full_like"])
    if kind == "full":
        shape = ch.choice([f"{n}", f"({n},)", f"(2, {n})", f"shape=(2, {n})", f"[{n}]"])
        if fill == "a":
            shape = ch.choice([f"(2, {n})", f"({n},)", f"shape=(3, {n})"])
        fv = ch.choice([fill, f"fill_value={fill}"]) if not shape.startswith("shape=") else f"fill_value={fill}"
        extra = ch.choice(["", ", dtype=float", ", dtype=np.float64", ", order='F'"])
        if fv.startswith("fill_value") and extra == "" and ch.coin():
            extra = ", order='C'"
        call = f"np.full({shape}, {fv}{extra})"
    else:
        like = ch.choice(["a", "a * 2.0", "np.zeros((2, %d))" % n])
        fv = ch.choice([fill, f"fill_value={fill}"])
        extra = ch.choice(["", ", dtype=float", ", shape=(3, %d)" % n, ", order='K'"])
        call = f"np.full_like({like}, {fv}{extra})"
    src = f"""
def f(a, s):
    c = {call}
    return {_wrap(ch, "c")} + s * np.sum(a)
"""
    return Case(src, [a, ch.float(-1.0, 1.0)], wrt=ch.choice([0, 1]), must_work=True)


@family("constructors")
def gen_linspace(ch) -> Case:
    n = ch.int(2, 4)
    a = _vec(ch, n)
    arrays = ch.coin(0.3)
    if arrays:
        start = ch.choice(["a", "a * 0.5", "0.0"])
        stop = ch.choice(["a * 2.0 + 1.0", "3.0", "np.cos(a)"])
        if start == "0.0" and stop == "3.0":
            start = "a"
    else:
        start = ch.choice(["a[0]", "0.0", "a[1] * a[0]", "s"])
        stop = ch.choice(["a[1] + 2.0", "s * 3.0", "5.0", "np.sum(a)"])
    num = ch.int(1, 6)
    num_text = ch.choice([f"{num}", f"num={num}"])
    args = [ch.choice([start, f"start={start}"])]
    args.append(f"stop={stop}" if args[0].startswith("start=") else ch.choice([stop, f"stop={stop}"]))
    if args[-1].startswith("stop=") and not num_text.startswith("num="):
        num_text = f"num={num}"
    args.append(num_text)
    if ch.coin():
        args.append(f"endpoint={ch.choice(['True', 'False'])}")
    if arrays and ch.coin():
        args.append(f"axis={ch.choice([0, 1, -1])}")
    src = f"""
def f(a, s):
    t = np.linspace({', '.join(args)})
    return {_wrap(ch, "t")}
"""
    return Case(src, [a, ch.float(0.5, 1.5)], wrt=ch.choice([0, 1]), must_work=True)


@family("constructors")
def gen_arange(ch) -> Case:
    x0 = ch.choice([0.15, 0.3, 0.45, 0.6]) + ch.int(0, 2)
    stop = x0 + ch.int(2, 4) + ch.choice([0.3, 0.5, 0.7])
    if abs(stop - round(stop)) < 0.1:  # np.arange(stop) changes length at integers
        stop += 0.25
    h = ch.choice([0.35, 0.45, 0.7, 1.1])
    while abs((stop - x0) / h - round((stop - x0) / h)) < 0.15:
        h += 0.07
    form = ch.choice(["start", "step", "both", "keywords", "stop_only", "constant"])
    if form == "start":
        call = ch.choice([f"np.arange(a[0], {stop})", f"np.arange(a[0], {stop}, 1.0)",
                          f"np.arange(start=a[0], stop={stop})"])
        a = np.array([x0, h])
    elif form == "step":
        call = ch.choice([f"np.arange({x0}, {stop}, a[1])", f"np.arange({x0}, {stop}, step=a[1])"])
        a = np.array([x0, h])
    elif form == "both":
        call = f"np.arange(a[0], a[0] + {stop - x0}, a[1])"
        a = np.array([x0, h])
    elif form == "keywords":
        call = f"np.arange(start=a[0], stop={stop}, step=a[1])"
        a = np.array([x0, h])
    elif form == "stop_only":
        call = ch.choice(["np.arange(a[0])", "np.arange(stop=a[0])"])
        a = np.array([stop, h])
    else:
        call = f"np.arange(0.0, {stop}, {h}) * a[1]"
        a = np.array([x0, h])
    src = f"""
def f(a):
    r = {call}
    return {_wrap(ch, "r")} + a[0] * a[1]
"""
    return Case(src, [a], must_work=True)


# -- family 7: index tricks and the interleaved einsum ----------------------------------------------

@family("index_tricks")
def gen_r_c(ch) -> Case:
    n = ch.int(2, 4)
    a = _vec(ch, n)
    if ch.coin():
        pool = ["a", "a * 2.0", "a[0]", "1.5", "np.sin(a)", "a[::-1]", "0:3", "a[1] * a[0]"]
        items = [ch.choice(pool) for _ in range(ch.int(1, 4))]
        if not any(i.startswith("a") or i.startswith("np") for i in items):
            items.append("a")
        expr = f"np.r_[{', '.join(items)}]"
    else:
        pool = ["a", "a * 2.0", "np.cos(a)", "a[::-1]", "M.T"]
        items = [ch.choice(pool) for _ in range(ch.int(1, 3))] + ["a"]
        expr = f"np.c_[{', '.join(items)}]"
    src = f"""
M = np.arange({2 * n}.0).reshape(2, {n}) * 0.1
def f(a):
    j = {expr}
    return {_wrap(ch, "j")}
"""
    return Case(src, [a], must_work=True)


@family("index_tricks")
def gen_einsum_sublist(ch) -> Case:
    n, m = ch.int(2, 4), ch.int(2, 3)
    form = ch.choice(["dot", "matvec", "matvec_out", "outer", "trace", "frob", "ellipsis"])
    body = {
        "dot": "np.einsum(u, [0], u * 2.0, [0])",
        "matvec": "np.sum(np.einsum(A, [0, 1], u, [1]) ** 2)",
        "matvec_out": "np.sum(np.einsum(A, [0, 1], u, [1], [0]) ** 2)",
        "outer": "np.sum(np.einsum(u, [0], A[:, 0], [1], [1, 0]) * np.einsum(A, [0, 1], [1, 0]).T[0, 0])",
        "trace": "np.einsum(A.T @ A, [0, 0])",
        "frob": "np.einsum(A, [0, 1], A, [0, 1], [])",
        "ellipsis": "np.sum(np.einsum(A, [Ellipsis, 1], u, [1], [Ellipsis]))",
    }[form]
    a_shape = (m, n)
    src = f"""
def f(u, A):
    return {body}
"""
    args = [_vec(ch, n), np.reshape(_vec(ch, m * n), a_shape)]
    return Case(src, args, wrt=ch.choice([0, 1]), must_work=True)


# -- family 12: special points -------------------------------------------------------------------

@family("special_points")
def gen_products_with_zeros(ch) -> Case:
    shape = ch.choice([(4,), (2, 3), (3, 2)])
    x = np.reshape(_vec(ch, int(np.prod(shape)), 0.5, 2.0), shape)
    for _ in range(ch.int(1, 3)):
        x[tuple(ch.int(0, s - 1) for s in shape)] = 0.0
    axis = ch.choice([None, 0, -1]) if len(shape) == 2 else ch.choice([None, 0])
    ax = "" if axis is None else ch.choice([f", {axis}", f", axis={axis}"])
    expr = ch.choice([f"np.cumprod(x{ax})", f"x.cumprod({ax[2:]})", f"np.prod(x{ax})", f"x.prod({ax[2:]})",
                      f"np.cumprod(x * x{ax})", f"np.prod(np.sin(x) + x{ax})"])
    src = f"""
def f(x):
    p = {expr}
    return np.sum(p * np.arange(1.0, 1.0 + np.size(p)).reshape(np.shape(p)))
"""
    return Case(src, [x], must_work=True)


@family("special_points")
def gen_power_at_zero(ch) -> Case:
    n = ch.int(2, 4)
    x = _vec(ch, n, 0.5, 2.0)
    x[ch.int(0, n - 1)] = 0.0
    # (a non-integer exponent at 0 has only a one-sided derivative: central differences give nan)
    p = ch.choice(["0", "1", "2", "3", "0.0", "1.0", "2.0", "3.0", "e[0]"])
    spelled = ch.choice([f"x ** {p}", f"np.power(x, {p})", f"pow(x, {p})"])
    if p == "e[0]":
        e = np.array([ch.choice([1.0, 2.0, 3.0]), 0.5])
    else:
        e = np.array([1.0, 0.5])
    src = f"""
def f(x, e):
    return np.sum({spelled} * np.arange(1.0, {n + 1}.0)) + np.sum(x * e[1])
"""
    return Case(src, [x, e], wrt=0 if p != "e[0]" else ch.choice([0, 1]), must_work=True)


# a function singular (nan or inf, or its derivative) on one side of 0, and one smooth there
_ONE_SIDED = ["np.sqrt(x)", "np.log(x)", "x ** 0.5", "np.power(x, 1.5)", "1.0 / x", "np.arcsin(x - 1.0)",
              "np.arccos(1.0 - x)", "np.arccosh(x + 1.0)", "np.log1p(x - 0.5)", "np.log(x) ** 2", "np.sqrt(x) ** 3",
              "np.log(x) * np.log(x)", "np.square(np.log(x))", "np.sqrt(x) * np.sqrt(x) * 2.0"]
_SMOOTH = ["-x", "x * x", "np.sin(x)", "0.0", "np.exp(x) - 1.0", "2.0 * x"]


@family("special_points")
def gen_where_singular_branch_second(ch) -> Case:
    """`np.where(x > 0, F(x), G(x))` with F singular where x < 0 (nan or inf in the branch not
    taken, in its derivative, or in its second derivative): the first and the second derivatives
    (Hessian-vector products both ways) are those of the branch taken."""
    n = ch.int(2, 5)
    x = _vec(ch, n, 0.3, 1.6)  # (away from 0 and from the singular points of F)
    for j in range(n):
        if ch.coin():
            x[j] = -x[j]
    if not (x < 0).any():
        x[0] = -x[0]
    if not (x > 0).any():
        x[-1] = -x[-1]
    if "arcsin" in (f := ch.choice(_ONE_SIDED)) or "arccos(" in f:
        x = np.where(x > 0, np.minimum(x, 1.8), x)  # (inside the domain where taken)
    if "log1p" in f:
        x = np.where(x > 0, np.maximum(x, 0.7), x)
    g = ch.choice(_SMOOTH)
    cond, taken, other = ch.choice([("x > 0", f, g), ("x < 0", g, f), ("x <= 0", g, f), ("0 < x", f, g)])
    where = ch.choice([f"np.where({cond}, {taken}, {other})", f"np.where(~({cond}), {other}, {taken})"])
    use = ch.choice(["np.sum(y)", "np.sum(y * w)", "np.sum(y ** 2) * 0.5", "np.sum(np.sin(y) * w)", "y @ w"])
    src = f"""
def f(x, w):
    with np.errstate(all="ignore"):
        y = {where}
    return {use}
"""
    return Case(src, [x, _vec(ch, n, 0.5, 1.5)], wrt=0, must_work=True, second_order=True)


@family("special_points")
def gen_cone_tips(ch) -> Case:
    form = ch.choice(["norm", "norm_ord", "norm_axis", "std", "var", "hypot", "abs", "nuc"])
    n = ch.int(2, 4)
    if form in ("norm_axis", "std", "var", "nuc"):
        x = np.zeros((2, n)) + (ch.float(-1.0, 1.0) if form in ("std", "var") else 0.0)
        if form == "norm_axis" and ch.coin():
            x[1] = _vec(ch, n, 0.5, 1.5)
    else:
        x = np.zeros(n)
    expr = {
        "norm": ch.choice(["np.linalg.norm(x)", "np.linalg.norm(x, 2)", "np.linalg.norm(x, ord=None) * 2.0"]),
        "norm_ord": f"np.linalg.norm(x, {ch.choice(['1', '3', 'np.inf', 'ord=4'])})",
        "norm_axis": f"np.sum(np.linalg.norm(x, axis={ch.choice([0, 1, -1])}))",
        "std": ch.choice(["np.std(x)", "np.sum(np.std(x, axis=0))", "x.std(axis=1, ddof=1).sum()"]),
        "var": ch.choice(["np.var(x)", "np.sum(x.var(axis=0))"]),
        "hypot": "np.sum(np.hypot(x, x * 2.0))",
        "abs": "np.sum(np.abs(x) * 2.0)",
        "nuc": "np.linalg.norm(x, %s)" % ch.choice(["'nuc'", "'fro'", "2"]),
    }[form]
    src = f"""
def f(x):
    return {expr} + np.sum(x) * 0.5
"""
    return Case(src, [x], must_work=True)


@family("special_points")
def gen_det_singular(ch) -> Case:
    n = ch.int(2, 3)
    u, v = _vec(ch, n), _vec(ch, n)
    a = ch.choice([np.outer(u, v), np.zeros((n, n)), np.arange(1.0, 1.0 + n * n).reshape(n, n)])
    expr = ch.choice(["np.linalg.det(a)", "np.linalg.det(a * 2.0) + np.sum(a)", "np.linalg.det(a.T) ** 2 + np.linalg.det(a)"])
    return Case(f"\ndef f(a):\n    return {expr}\n", [a], must_work=True)


# -- family 15: keywords ----------------------------------------------------------------------------

@family("keywords")
def gen_reduction_dtype(ch) -> Case:
    x = np.reshape(_vec(ch, 6, away_from_integers=True), (2, 3))
    fn = ch.choice(["sum", "mean", "prod", "cumsum", "cumprod", "var", "std"])
    dtype = ch.choice(["np.float64", "float", "'float64'", "None", "int", "np.int64"])
    if fn in ("var", "std", "mean") and dtype in ("int", "np.int64"):
        dtype = "float"
    axis = ch.choice(["", "axis=0, ", "axis=1, ", "axis=None, "])
    if ch.coin():
        call = f"np.{fn}(x, {axis}dtype={dtype})"
    else:
        call = f"x.{fn}({axis}dtype={dtype})"
    if fn not in ("cumsum", "cumprod") and ch.coin(0.3):
        call = call[:-1] + ", out=None)"
    src = f"""
def f(x):
    r = {call}
    return np.sum(r * 1.5) + np.sum(x * x)
"""
    return Case(src, [x], must_work=True)


@family("keywords")
def gen_order(ch) -> Case:
    x = np.reshape(_vec(ch, 6), (2, 3))
    src_x = ch.choice(["x", "x.T", "(x * 2.0)", "x[::-1]"])
    order = ch.choice(["'C'", "'F'", "'A'"])
    form = ch.choice(["method", "method_tuple", "function", "ravel", "ravel_method", "flatten"])
    if form == "method":
        call = f"{src_x}.reshape(3, 2, order={order})"
    elif form == "method_tuple":
        call = f"{src_x}.reshape((6,), order={order})"
    elif form == "function":
        call = ch.choice([f"np.reshape({src_x}, (3, 2), order={order})", f"np.reshape({src_x}, (3, 2), {order})"])
    elif form == "ravel":
        call = ch.choice([f"np.ravel({src_x}, order={order})", f"np.ravel({src_x}, order='K')"])
    elif form == "ravel_method":
        call = f"{src_x}.ravel({order})"
    else:
        call = ch.choice([f"{src_x}.flatten(order={order})", f"{src_x}.flatten('K')"])
    src = f"""
def f(x):
    r = {call}
    return np.sum(r * np.arange(6.0).reshape(r.shape)) + np.sum(r ** 2 * np.arange(6.0).reshape(r.shape))
"""
    return Case(src, [x], must_work=True)


@family("keywords")
def gen_diff_pad(ch) -> Case:
    if ch.coin():
        x = _vec(ch, ch.int(3, 5))
        pre = ch.choice(["0.0", "x[0] * 2.0", "s", "np.array([s, 1.0])", None])
        app = ch.choice(["1.5", "x[-1] * s", "s", "np.array([s])", None])
        axis = ""
    else:
        x = np.reshape(_vec(ch, 6), (2, 3))
        ax = ch.choice([0, 1, -1])
        pre = ch.choice(["0.0", "s", "x[:1] * s" if ax == 0 else "x[:, :1] * s", None])
        app = ch.choice(["1.5", "s * 2.0", None])
        axis = f", axis={ax}"
    n = ch.choice(["", ", n=1", ", n=2", ", 1"])
    if n == ", 1" and axis:
        n = ", n=1"
    kws = "".join(f", {k}={v}" for k, v in (("prepend", pre), ("append", app)) if v is not None)
    src = f"""
def f(x, s):
    d = np.diff(x{n}{axis}{kws})
    return np.sum(d ** 2) + np.sum(np.sin(d))
"""
    return Case(src, [x, ch.float(-1.0, 1.0)], wrt=ch.choice([0, 1]), must_work=True)


@family("keywords")
def gen_array_keywords(ch) -> Case:
    x = _vec(ch, ch.int(2, 4))
    call = ch.choice(["np.array(x, copy=True)", "np.array(x, dtype=float)", "np.array(x, ndmin=2)",
                      "np.asarray(x, order='C')", "np.asarray(x, dtype=np.float64, order='F')",
                      "np.copy(x, order='F')", "x.astype(float, order='C')", "np.ascontiguousarray(x)",
                      "np.einsum('i,i->i', x, x, optimize=True)", "np.concatenate([x, x], axis=0, dtype=float)",
                      "np.sin(x, dtype=np.float64, where=True)", "np.sum(x, keepdims=True, out=None)"])
    src = f"""
def f(x):
    r = {call}
    return np.sum(r ** 2 * 1.5) + np.sum(np.cos(r))
"""
    return Case(src, [x], must_work=True)


@family("keywords")
def gen_calls_on_constants(ch) -> Case:
    n = 3
    stmt = ch.choice(["c = np.float32(0.5) * np.sum(x * 0.0 + 1.0)",
                      "c = W.sum(axis=0)", "c = W.reshape(3, 2, order='F').sum(axis=1)",
                      "c = np.sort(W[0])", "c = np.median(W, axis=0)",
                      "q, r = np.linalg.qr(W.T)\n    c = q[:, 0] * r[0, 0]",
                      "c = np.unique(W[1])[:3]", "c = np.percentile(W, 40.0, axis=0)",
                      "c = W.mean(0, dtype=np.float32).astype(float)",
                      "c = np.random.default_rng(1).normal(size=3)",
                      "rng = np.random.default_rng(2)\n    skipped = rng.normal(size=2)\n    c = rng.normal(size=3)"])
    src = f"""
W = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
def f(x):
    {stmt}
    return np.sum(x * c) + np.sum(x ** 2)
"""
    return Case(src, [_vec(ch, n)], must_work=True)


# -- second derivatives through the runtime helpers of first-order gradients ----------------------

def _distinct(ch, n, lo=-2.0, hi=2.0):
    """n values in [lo, hi] in a random order, at least 0.4 (hi - lo) / n apart (no ties: the
    maximum, quantile and ptp cases stay away from their kinks)."""
    values = [lo + (hi - lo) * (k + 0.5 + ch.float(-0.3, 0.3)) / n for k in range(n)]
    pool, out = list(range(n)), []
    while pool:
        out.append(values[pool.pop(ch.int(0, len(pool) - 1))])
    return np.round(np.array(out), 3)


@family("second_order")
def gen_helper_second(ch) -> Case:
    """An operation whose gradient calls a runtime helper (`rt.pad_adjoint`, `rt.cumprod_adjoint`,
    `rt.convolve_adjoint`, `rt.ufunc_at_adjoint`, `rt.average_adjoint`, `rt.quantile_adjoint`,
    `rt.ptp_adjoint`, the write through a value that may be a view, starred unpacking), in a random
    spelling: the Hessian-vector products both ways against second differences of f."""
    op = ch.choice(["pad", "cumprod", "convolve", "ufunc_at", "average", "quantile", "ptp", "view_write",
                    "starred"])
    shape = ch.choice([(ch.int(3, 6),), (2, 3), (3, 2)])
    if op in ("convolve", "ufunc_at"):
        shape = (ch.int(6, 8),)
    if op == "view_write" and len(shape) == 1:
        shape = (ch.choice([4, 6]),)
    n = int(np.prod(shape))
    x = _distinct(ch, n).reshape(shape)
    two_d = len(shape) == 2
    axis = ch.choice(["None", "0", "-1"] + (["1"] if two_d else []))
    body = ""
    if op == "pad":
        mode = ch.choice(["constant", "edge", "reflect", "wrap", "symmetric"])
        width = ch.choice(["1", "2", "(1, 2)", "[2, 1]"] + (["((1, 0), (0, 2))", "((0, 1),)"] if two_d else []))
        spelled = ch.choice([f"'{mode}'", f"mode='{mode}'"])
        extra = ""
        if mode == "constant" and ch.coin():
            extra = ", constant_values=" + ch.choice(["0.5", "np.sum(x) * 0.3", "(x.ravel()[0], 1.0)"])
            spelled = "mode='constant'"
        expr = f"np.pad(x, {width}, {spelled}{extra})"
    elif op == "cumprod":
        if ch.coin(0.3):
            x.flat[ch.int(0, n - 1)] = 0.0
        expr = ch.choice([f"np.cumprod(x, axis={axis})", f"np.cumprod(x, {axis})", f"x.cumprod({axis})",
                          f"x.cumprod(axis={axis})"] + (["np.cumprod(x)"] if axis == "None" else []))
    elif op == "convolve":
        kernel = ch.choice(["np.array([1.0, -0.5])", "np.array([0.2, 1.0, -0.7])", "x[::-1]", "x[:2] ** 2",
                            "np.sin(x[1:4])"])
        mode = ch.choice(["", ", 'full'", ", 'same'", ", 'valid'", ", mode='same'", ", mode='valid'"])
        first, second = ("x", kernel) if ch.coin() else (kernel, "x")
        expr = f"np.{ch.choice(['convolve', 'convolve', 'correlate'])}({first}, {second}{mode})"
    elif op == "ufunc_at":
        name = ch.choice(["multiply", "maximum", "minimum"])
        idx = ch.choice(["[0, 0, 2]", "[2, 1, 2]", "np.array([1, 1, 1])", "[0, 1, 2]"])
        values = ch.choice(["x[3:6]", f"x[{n - 3}:]", "x[3]"] if name == "multiply" else ["x[3:6]", f"x[{n - 3}:]"])
        start = ch.choice(["x[:3] * 1.0", "x[:3].copy()", "np.array(x[:3])"])
        body = f"    out = {start}\n    np.{name}.at(out, {idx}, {values})\n"
        expr = "out * x[:3]" if ch.coin() else "out"
    elif op == "average":
        weights = ch.choice(["", ", weights=w", ", weights=x ** 2 + 1.0", ", weights=np.exp(x)"])
        if two_d and axis in ("0", "1", "-1") and ch.coin():
            along = shape[int(axis)]
            weights = ch.choice([f", weights=w.ravel()[:{along}]", f", weights=x.ravel()[:{along}] ** 2 + 0.5"])
        keep = ch.choice(["", ", keepdims=True"]) if axis != "None" else ""
        expr = f"np.average(np.sin(x), axis={axis}{weights}{keep})"
        if weights and ch.coin(0.3):  # (the pair: the average and the sum of the weights)
            pair = f"np.average(np.sin(x), axis={axis}{weights}{keep}, returned=True)"
            expr = f"{pair}[0] * {pair}[1] + np.cos({pair}[1])"
    elif op == "quantile":
        q = ch.choice(["0.3", "0.5", "[0.2, 0.75]", "np.array([0.1, 0.5, 0.9])"])
        keep = ch.choice(["", ", keepdims=True"])
        method = ch.choice(["", ", method='linear'", ", method='lower'", ", method='midpoint'"])
        if ch.coin(0.3):
            pq = "[20.0, 75.0]" if "[" in q else str(float(q) * 100)
            expr = f"np.percentile(x ** 3 + x, {pq}, axis={axis}{keep}{method})"
        else:
            expr = f"np.quantile(x ** 3 + x, {q}, axis={axis}{keep}{method})"
    elif op == "ptp":
        keep = ch.choice(["", ", keepdims=True"])
        expr = ch.choice([f"np.ptp(x ** 3, axis={axis}{keep})", f"np.ptp(x ** 3, {axis}{keep})"]) + " * x.mean()"
    elif op == "view_write":
        view = ch.choice(["y.reshape(2, -1)", "np.asarray(y)", "y.reshape(-1)", "np.reshape(y, (2, -1))"])
        write = ch.choice(["m[0] *= 2.0", "m[0] = np.sin(x.ravel()[1])", "m[1] += 0.5", "m[...] = m * 3.0",
                           "m[0] = x.ravel()[0] ** 2"])
        body = f"    y = x * 1.0\n    m = {view}\n    {write}\n"
        expr = "y * x"
    else:  # starred
        pattern, used = ch.choice([("first, *rest = x", "first * sum(rest)"),
                                   ("*init, last = x", "last * np.sum(np.array(init) ** 2)"),
                                   ("a, *mid, b = x", "a * b + np.sum(np.array(mid))")])
        body = f"    {pattern}\n"
        expr = used
    src = f"""
def f(x, w):
{body}    return {_wrap(ch, expr)}
"""
    return Case(src, [x, _distinct(ch, n, 0.5, 1.5).reshape(shape)], wrt=0, must_work=True, second_order=True)

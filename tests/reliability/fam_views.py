"""Family generators: views written and updated in place, views read after their base is written,
and arrays held in containers (issue 12, families 1-3). See families.py."""
from __future__ import annotations

import numpy as np

from families import Case, family

COPIES = ["{a} * 1.0", "{a}.copy()", "np.array({a})", "{a} + 0.0", "np.copy({a})"]
UPDATES = ["+=", "-=", "*=", "/="]


def _expr(ch, v, a):
    """A well-conditioned expression of the view `v` and the argument `a` (or a constant)."""
    return ch.choice([
        f"{ch.float(0.5, 2.0)}",
        f"np.sum({v}) * {ch.float(0.1, 0.5)}",
        f"np.tanh({v})",
        f"({v} * {v} + 1.0)",
        f"np.mean({a}) + 0.5",
        f"np.cos({v}) + 2.0",
    ])


def _base(ch):
    rows, cols = ch.int(1, 3), ch.int(2, 4)
    arg = np.round(np.random.default_rng(ch.int(0, 10 ** 6)).uniform(0.5, 2.0, (rows, cols)), 3)
    return arg, rows, cols


def _result(ch, b, a):
    return ch.choice([f"np.sum({b} ** 2)", f"np.sum({b} * {a})", f"np.sum(np.sin({b}))", f"np.mean({b} ** 3)"])


@family("views")
def gen_rows_updated(ch):
    """Each row (or column) of a 2-d array updated in place, spelled as the loop users write."""
    arg, rows, cols = _base(ch)
    op = ch.choice(UPDATES)
    loop = ch.choice([
        ("for r in B:", "r"),
        ("for r in B.T:", "r"),
        (f"for i in range({rows}):\n        r = B[i]", "r"),
        ("for i in range(B.shape[0]):\n        r = B[i, :]", "r"),
        ("for i, r in enumerate(B):", "r"),
        ("for r in reversed(B):", "r"),
        ("for r in np.transpose(B):", "r"),
    ])
    head, v = loop
    rhs = _expr(ch, v, "A")
    second = ch.choice(["", f"\n        {v} {ch.choice(UPDATES)} {ch.float(0.5, 1.5)}"])
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    {head}
        {v} {op} {rhs}{second}
    return {_result(ch, "B", "A")}
"""
    return Case(src, [arg], must_work=True)


@family("views")
def gen_view_written(ch):
    """A view bound to a name, then written or updated, then the base (and the view) read."""
    arg, rows, cols = _base(ch)
    view = ch.choice([
        "B[0:1]", "B[:, 1:]", "B[::-1]", "B.T", "np.transpose(B)", "B[0]", f"B[{rows - 1}]",
        "np.flip(B)", "np.flipud(B)", "np.fliplr(B)", "B.reshape(-1)", "np.ravel(B)", "np.asarray(B)",
        "np.ascontiguousarray(B)", "B[idx]", "B[..., 0]", "B.swapaxes(0, 1)", "np.squeeze(B)",
        "B[np.newaxis]",
    ])
    write = ch.choice([
        "v {op} {rhs}", "v[...] = {rhs}", "v[:] = {rhs}", "v[0] = {rhs0}", "np.copyto(v, {rhs})",
        "v {op} {rhs}\n    v {op} 1.5",
    ])
    rhs = _expr(ch, "v", "A")
    body = write.format(op=ch.choice(UPDATES), rhs=rhs, rhs0=f"np.sum(v) * {ch.float(0.1, 0.9)}")
    idx = "idx = slice(0, 1)\n    " if "idx" in view else ""
    after = ch.choice(["", "\n    B[0] = B[0] * 0.5", f"\n    B *= {ch.float(0.5, 1.5)}"])
    result = ch.choice([_result(ch, "B", "A"), _result(ch, "B", "A") + " + np.sum(v ** 2)"])
    # a value that may be a view or a copy (a row, a reshape) is not read again after its base is
    # written: used after such a write, it is refused
    maybe = view in MAYBE_VIEWS or view == f"B[{rows - 1}]"
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    {idx}v = {view}
    {body}{after}
    return {result}
"""
    return Case(src, [arg], must_work=not (maybe and after and "v **" in result))


MAYBE_VIEWS = {"B[0]", "B.reshape(-1)", "np.ravel(B)", "np.asarray(B)", "np.ascontiguousarray(B)", "B[idx]"}


@family("views")
def gen_view_read_after_write(ch):
    """A view made, its base written (by index, slice, op=, copyto), the view read afterwards."""
    arg, rows, cols = _base(ch)
    view = ch.choice(["B[0]", "B[:, 0]", "B[::-1]", "B.T", "B[1:]", "np.flip(B, 0)", "B[0, :]"])
    write = ch.choice(["B[0] = 1.5", "B[:, -1] = np.sum(A)", "B *= 2.0", "B[...] = A ** 2",
                       "np.copyto(B, A * 3.0)", "B[0, 0] += np.mean(A)"])
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    v = {view}
    s = np.sum(v)
    {write}
    return s + np.sum(v ** 2) + {_result(ch, "B", "A")}
"""
    return Case(src, [arg], must_work=view != "B[0]")


@family("containers")
def gen_container_then_write(ch):
    """An array placed in a tuple, list, dict or `list(...)`, the array written, the container read:
    right, or refused (never the container's old value)."""
    arg, rows, cols = _base(ch)
    put = ch.choice(["c = (B, 1.0)", "c = [B, B * 2.0]", "c = []\n    c.append(B)", "c = list(B)",
                     "c = {'b': B}", "c = [r for r in B]", "c = tuple(B)", "c = [B[0], B[-1]]"])
    read = {"c = {'b': B}": "c['b']"}.get(put, "c[0]")
    write = ch.choice(["B[0] = 2.0", "B *= 1.5", "B[..., 0] = np.sum(A)", "np.copyto(B, A + 1.0)",
                       "B[0] += 1.0", "for r in B:\n        r *= 0.5"])
    when = ch.choice(["before", "after"])
    use = f"np.sum({read} ** 2)"
    if when == "before":
        src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    {put}
    s = {use}
    {write}
    return s + {_result(ch, "B", "A")}
"""
    else:
        src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    {put}
    {write}
    return {use} + {_result(ch, "B", "A")}
"""
    return Case(src, [arg])


@family("containers")
def gen_container_item_updated(ch):
    """An item of a container updated in place (an alias of the array it came from)."""
    arg, rows, cols = _base(ch)
    put = ch.choice(["rows = list(B)", "rows = [B[i] for i in range(B.shape[0])]", "rows = (B[0], B[-1])"])
    op = ch.choice(UPDATES)
    loop = ch.choice(["for r in rows:\n        r {op} 1.5", "r = rows[0]\n    r {op} 2.0",
                      "for r, w in zip(rows, [1.0, 2.0, 3.0]):\n        r {op} w"]).format(op=op)
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    {put}
    {loop}
    return {_result(ch, "B", "A")} + np.sum(rows[0])
"""
    return Case(src, [arg])


@family("containers")
def gen_slot_updated(ch):
    """`c[i] op= e` on a list or dict slot: Python runs `op=` on the item itself, so an array item
    that is a row of `B` (or is `B`) changes `B` too; a number or a fresh array does not."""
    arg, rows, cols = _base(ch)
    put = ch.choice(["c = list(B)", "c = [B[0], B[-1]]", "c = [B, B * 2.0]", "c = [B.copy(), A[0] * 1.0]",
                     "c = [0.0] * 3", "c = [np.sum(B), np.sum(A), 1.0]", "c = [r for r in B]",
                     "c = {'b': B, 'z': 1.0}"])
    key = "'b'" if put.startswith("c = {") else ch.choice(["0", "-1", "1 if len(c) > 1 else 0"])
    op = ch.choice(UPDATES)
    value = ch.choice(["1.5", "np.mean(A)", "A[0, 0]"])
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    {put}
    c[{key}] {op} {value}
    return {_result(ch, "B", "A")} + np.sum(np.asarray(c[{key}]) ** 2)
"""
    return Case(src, [arg], must_work=put in ("c = [0.0] * 3", "c = [np.sum(B), np.sum(A), 1.0]"))


@family("containers")
def gen_dict_then_update(ch):
    """A dict display holding a name's value, then `name op= e`: the dict sees the update when the
    value is an array (the same object), not when it is a number."""
    arg, rows, cols = _base(ch)
    value = ch.choice(["B", "B[0]", "float(np.sum(B))", "np.sum(B)"])
    op = ch.choice(UPDATES)
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    v = {value}
    d = {{'v': v, 'k': 2.0}}
    v {op} {ch.float(0.5, 1.5)}
    return np.sum(np.asarray(d['v']) ** 2) * d['k'] + np.sum(np.asarray(v)) + {_result(ch, "B", "A")}
"""
    return Case(src, [arg])


@family("views")
def gen_helper_loop_through_view(ch):
    """A helper that writes into its parameter in a loop (for, while, over rows, nested), called with
    a view of the caller's array: every trip writes the caller's array."""
    arg, rows, cols = _base(ch)
    body = ch.choice([
        "for i in range(M.shape[0]):\n        M[i] = M[i] * w + {c}",
        "i = 0\n    while i < M.shape[0]:\n        M[i] += w * {c}\n        i += 1",
        "for r in M:\n        r {op} (np.sum(r) * 0.1 + {c})",
        "for i in range(M.shape[0]):\n        for j in range(M.shape[1]):\n            M[i, j] = M[i, j] * w + {c}",
        "for i in range(M.shape[0]):\n        if i % 2 == 0:\n            M[i] *= w\n        else:\n            M[i] -= {c}",
    ]).format(c=ch.float(0.1, 1.0), op=ch.choice(UPDATES))
    view = ch.choice(["B.T", "B[::-1]", "B[:, ::-1]", "B[1:]", "B[:, 1:]", "B.reshape(B.shape)", "np.flip(B)",
                      "B"])
    src = f"""
def helper(M, w):
    {body}


def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    helper({view}, {ch.choice(["1.5", "np.mean(A)", "A[0, 0]"])})
    return {_result(ch, "B", "A")}
"""
    return Case(src, [arg])


@family("views")
def gen_base_rebound_in_loop(ch):
    """A view made before a loop that updates it, while the loop rebinds (or updates) its base:
    a rebound base is a new array the view does not see."""
    arg, rows, cols = _base(ch)
    view = ch.choice(["B[0]", "B[:, 0]", "B[1:]", "B.T", "B[::-1]"])
    update = ch.choice(UPDATES)
    rebind = ch.choice(["B = B + np.sum(v) * 0.1", "B = B * 0.5", "B += 0.25", "B[0] = B[0] * 0.5",
                        "B = np.tanh(B)"])
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    v = {view}
    for k in range({ch.int(1, 3)}):
        v {update} {ch.float(0.5, 1.5)}
        {rebind}
    return np.sum(v ** 2) + {_result(ch, "B", "A")}
"""
    return Case(src, [arg])


@family("containers")
def gen_dict_in_control(ch):
    """A dict display made, rebound or updated inside an `if` or a loop, read after it."""
    arg, rows, cols = _base(ch)
    make = ch.choice([
        "if A[0, 0] > 1.0:\n        d = {'b': B * 2.0}\n    else:\n        d = {'b': B + 1.0}",
        "d = {'b': B}\n    if A[0, 0] > 1.0:\n        d = {'b': B * 3.0}",
        "d = {'b': B * 1.0}\n    for k in range(2):\n        d['b'] = d['b'] * 0.5",
        "d = {'b': B * 1.0}\n    for k in range(2):\n        d['b'] += 0.5",
        "d = {'b': B * 1.0}\n    if A[0, 0] > 1.0:\n        d['b'] *= 2.0",
        "d = {'b': B * 1.0}\n    for k in range(2):\n        B = B + d['b']",
    ])
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    {make}
    return np.sum(d['b'] ** 2) + {_result(ch, "B", "A")}
"""
    return Case(src, [arg])


@family("views")
def gen_view_written_by_element_in_loop(ch):
    """A view made before a loop (a slice, a column, a row, a transpose, a reversed vector), whose
    entries the loop reads and writes one at a time (`v[i] = v[i] * w`, `v[i] *= w`, through a
    temporary, through the base): the backward pass once recomputed `v[i]` from the view after a
    later write had changed it (the tape took a view of a written array for an unchanged value)."""
    arg, rows, cols = _base(ch)
    view, length = ch.choice([("B[0]", "B.shape[1]"), ("B[:, 0]", "B.shape[0]"), ("B[-1, ::-1]", "B.shape[1]"),
                              ("B.T[0]", "B.shape[0]"), ("B.reshape(-1)[:2]", "2")])
    c = ch.float(0.5, 1.5)
    step = ch.choice([f"v[i] = v[i] * w + {c}", "v[i] *= w", f"t = v[i]\n        v[i] = t * t * w + {c}",
                      "v[i] = np.sin(v[i]) * w", f"v[i] = max(v[i], {c}) * w",
                      f"v[i] = v[i] ** 2 * w\n        B[-1, -1] += v[i] * {c}"])
    src = f"""
def f(A, w):
    B = {ch.choice(COPIES).format(a="A")}
    v = {view}
    for i in range({length}):
        {step}
    return {_result(ch, "B", "A")}
"""
    return Case(src, [arg, ch.float(0.5, 1.5)])


@family("views")
def gen_view_rebound_in_loop(ch):
    """A view carried by a loop that rebinds it (to another row, a slice, a computed value, in a
    branch or not), written through or updated before or after the rebinding, read or written
    after the loop, and the trajectory spelling (`nxt = T[i + 1]; nxt[:] = f(cur); cur = nxt`).
    A write through such a view was once placed at the slots it showed on entry: wrong values."""
    arg, rows, cols = _base(ch)
    if ch.coin(0.25):
        step = ch.choice(["cur + 0.1 * np.sin(cur)", "cur * 0.5 + A[0]", "np.tanh(cur) * 1.5"])
        src = f"""
def f(A):
    T = np.zeros(({rows + 2}, {cols}))
    cur = T[0]
    cur[:] = A[-1]
    for i in range({rows + 1}):
        nxt = T[i + 1]
        nxt[:] = {step}
        cur = nxt
    return np.sum(T ** 2) + np.sum(cur * A[0])
"""
        return Case(src, [arg], must_work=True)
    first = ch.choice(["B[0]", "B[:, 0]", "B[-1]", "B[1:]" if rows > 1 else "B[0:]"])
    other = ch.choice(["B[k % B.shape[0]]", "B[-1]", "B[0] * 1.0", "np.sin(r)", "r.copy()", "r + 0.5"])
    if first == "B[:, 0]" and other in ("B[k % B.shape[0]]", "B[-1]", "B[0] * 1.0"):
        other = "B[:, k % B.shape[1]]"
    rebind = f"r = {other}"
    if ch.coin():
        rebind = f"if k % 2 == 0:\n            {rebind}"
    write = ch.choice([f"r {ch.choice(UPDATES)} {ch.float(0.5, 1.5)}", "r[0] = np.sum(A) * 0.1",
                       "r[...] = r * 0.5 + 0.25", "s = s + np.sum(r * r)"])
    body = [write, rebind] if ch.coin() else [rebind, write]
    after = ch.choice(["", "r *= 1.5", "B[0] = B[0] + 1.0", "r[0] = A[0, 0]"])
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    r = {first}
    s = 0.0
    for k in range({ch.int(1, 3)}):
        {body[0]}
        {body[1]}
    {after}
    return s + np.sum(r ** 2) + {_result(ch, "B", "A")}
"""
    return Case(src, [arg])


@family("views")
def gen_read_only_view_written(ch):
    """A write or `op=` through a view NumPy makes read-only (`np.broadcast_to`, `np.diagonal`,
    `.diagonal()`, and views of those), here or in a helper; or through a copy of one. NumPy
    raises at the write (the gradient once wrote the base at the view's slots), and a copy is an
    array of its own."""
    arg, rows, cols = _base(ch)
    view = ch.choice([f"np.broadcast_to(B[0], (2, {cols}))", "np.diagonal(B)", "B.diagonal()",
                      f"np.broadcast_to(B, (2, {rows}, {cols}))[1]", "B.T.diagonal()[:1]"])
    copied = ch.coin(0.3)
    if copied:
        view += ".copy()"
    write = ch.choice(["v[0] = np.sum(A) * 0.5", f"v {ch.choice(UPDATES)} 1.5", "v[...] = np.tanh(v)",
                       "zero_first(v)"])
    src = f"""
def zero_first(a):
    a[0] = 0.0


def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    v = {view}
    {write}
    return np.sum(v ** 2) + {_result(ch, "B", "A")}
"""
    return Case(src, [arg], may_raise=not copied, must_work=copied)


@family("views")
def gen_view_in_another_order(ch):
    """A write through `ravel` or `reshape` with an `order` (C, F, A, K), of an array in C order,
    transposed, or Fortran-ordered by NumPy (`B.T * 1.0` keeps the layout), in each spelling. A
    view in another order than C has its slots in that order (the memory's, for K): the gradient
    wrote the base at the C-order slots."""
    arg, rows, cols = _base(ch)
    layout = ch.choice(["B", "B.T", "(B.T * 1.0)", "B[:, ::-1]"])
    order, shaped = ch.choice(["'C'", "'F'", "'A'", "'K'"]), ch.choice(["'C'", "'F'", "'A'"])  # (reshape: no K)
    n = rows * cols
    view = ch.choice([f"{layout}.ravel({order})", f"{layout}.ravel(order={order})", f"np.ravel({layout}, {order})",
                      f"{layout}.reshape({n}, order={shaped})", f"np.reshape({layout}, ({n},), order={shaped})",
                      f"{layout}.reshape(-1, order={shaped})"])
    write = ch.choice([f"v[{ch.int(0, n - 1)}] = np.sum(A) * 0.5", f"v[:2] {ch.choice(UPDATES)} 1.5",
                       "v[...] = np.tanh(v)"])
    src = f"""
def f(A):
    B = {ch.choice(COPIES).format(a="A")}
    v = {view}
    {write}
    return np.sum(v ** 2) + {_result(ch, "B", "A")} + np.sum(B * np.arange({n}.0).reshape({rows}, {cols}))
"""
    return Case(src, [arg])


@family("views")
def gen_constructed_then_written(ch):
    """An array made by a NumPy constructor from the function's values (`np.diag` of a vector,
    `np.outer`, `np.tile`, `np.repeat`, `np.kron`, `np.stack`, `np.eye(n) * v`), written into
    (a slot, a row, `+=`), then its operands read again. A new array can be written; what may be
    a view (`np.diag` of a matrix is a read-only one) must be refused or followed."""
    make = ch.choice(["np.diag(v)", "np.outer(v, v)", "np.tile(v, (2, 1))", "np.repeat(v[None, :], 2, axis=0)",
                      "np.kron(v[:2], np.ones((2, 1)))", "np.stack([v, v * 2.0])", "np.eye(3) * v",
                      "np.diag(np.outer(v, v))"])
    write = ch.choice(["d[0, 1] = v[2] * 3.0", "d[1] = v[0]", "d += 1.5", "d[-1, -1] *= 2.0", "d[0] = np.sin(v[:1])"])
    read = ch.choice(["np.sum(d @ v) if d.ndim == 2 and d.shape[1] == 3 else np.sum(d) * np.sum(v)",
                      "np.sum(d ** 2) + np.sum(v)"])
    if make == "np.diag(np.outer(v, v))":
        write = ch.choice(["d[0] = v[1]", "d += 1.0"])
    src = f"def f(v):\n    d = {make}\n    {write}\n    return {read}\n"
    rng = np.random.default_rng(ch.int(0, 10 ** 6))
    return Case(src, [rng.uniform(-1.0, 1.0, 3)], may_raise=True)

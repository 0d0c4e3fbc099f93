"""Family generators: loops and comprehensions over the combinatoric iterators, `itertools.product`
(with `repeat=`), `combinations`, `combinations_with_replacement`, `permutations`, and NumPy's
`np.ndindex` / `np.ndenumerate`.

`gen_index_tuples` iterates them over ranges and shapes (the items are indices into a
differentiated array); `gen_value_tuples` over the differentiated values themselves (an array, its
rows, a list of its entries, a slice), so that the items carry the gradient. Each is written in
many ways: a `for` unpacking the tuple or indexing it, a generator into `sum`, a list
comprehension, the iterator bound to a name first, inside `enumerate` or `zip`, imported under
its own name or through the module.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

_HEADER = "import itertools\nfrom itertools import product, combinations, permutations\n" \
          "from itertools import combinations_with_replacement as cwr\n\n"

# (iterator over indices of x (length n) or of A (n by 3), names of the tuple's entries)
_INDEX_ITERS = [
    ("itertools.product(range(n), range(n))", "i, j"), ("product(range(n), repeat=2)", "i, j"),
    ("itertools.product(range(1, n), range(2))", "i, j"), ("combinations(range(n), 2)", "i, j"),
    ("itertools.combinations(range(n), r=2)", "i, j"), ("cwr(range(n), 2)", "i, j"),
    ("itertools.combinations_with_replacement(range(n - 1), 2)", "i, j"), ("permutations(range(n), 2)", "i, j"),
    ("itertools.permutations(range(3))", "i, j, k"), ("itertools.product(range(n), range(2), range(1))", "i, j, k"),
    ("np.ndindex(n, 2)", "i, j"), ("np.ndindex((n, 3))", "i, j"), ("np.ndindex(A.shape)", "i, j"),
    ("combinations(range(n), 3)", "i, j, k"), ("itertools.product([0, n - 1], range(n))", "i, j"),
]
_TERMS = {2: ["x[i] * x[j]", "np.sin(x[i] - x[j])", "A[i, j % 3] * x[j]", "(x[i] + x[j]) ** 2", "x[i] * A[j, 0]"],
          3: ["x[i] * x[j] * x[k]", "A[i, j % 3] + x[k]", "np.cos(x[i] + x[j] - x[k])"]}


def _vec(ch, shape):
    rng = np.random.default_rng(ch.int(0, 10_000))
    return rng.uniform(-1.2, 1.2, size=shape)


def _loop(ch, it: str, names: str, term: str) -> list:
    """Lines summing `term` over the items of `it` (`names`: the tuple's entries), in one of many
    spellings."""
    style = ch.choice(["unpack", "index", "genexp", "listcomp", "bound", "enumerate", "zip"])
    width = names.count(",") + 1
    if style == "unpack":
        return [f"    for {names} in {it}:", f"        s = s + {term}"]
    if style == "index":
        picks = "; ".join(f"{v} = t[{p}]" for p, v in enumerate(names.split(", ")))
        return [f"    for t in {it}:", f"        {picks}", f"        s = s + {term}"]
    if style == "genexp":
        return [f"    s = s + sum({term} for {names} in {it})"]
    if style == "listcomp":
        return [f"    terms = [{term} for {names} in {it}]", "    s = s + sum(terms)"]
    if style == "bound":
        return [f"    pairs = {it}", f"    for {names} in pairs:", f"        s = s + {term}"]
    if style == "enumerate":
        return [f"    for m, ({names}) in enumerate({it}):", f"        s = s + ({term}) * (m + 1)"]
    del width
    return [f"    for u, ({names}) in zip(x, {it}):", f"        s = s + ({term}) * u"]


@family("combinatoric")
def gen_index_tuples(ch) -> Case:
    n = ch.int(2, 4)
    lines = ["def f(x, A):", f"    n = {n}", "    s = 0.0"]
    for _ in range(ch.int(1, 2)):
        it, names = ch.choice(_INDEX_ITERS)
        if "range(n), 3)" in it and n < 3:
            it = it.replace("range(n), 3)", "range(3), 3)")
        lines += _loop(ch, it, names, ch.choice(_TERMS[names.count(",") + 1]))
    lines.append("    return s")
    return Case(_HEADER + "\n".join(lines) + "\n", [_vec(ch, 4), _vec(ch, (4, 3))],  # (n <= 4; ndindex(n, 3))
                wrt=ch.choice([0, 1]), must_work=True)


# (iterator over the values, names of the tuple's entries, the term summed)
_VALUE_ITERS = [
    ("itertools.product(x, x)", "a, b", "a * b"), ("product(x, w)", "a, b", "np.sin(a) * b"),
    ("product(x[:2], repeat=2)", "a, b", "a * a * b"), ("combinations(x, 2)", "a, b", "(a - b) ** 2"),
    ("itertools.combinations(list(x), 3)", "a, b, c", "a * b + c"), ("cwr(x[1:], 2)", "a, b", "a * b"),
    ("permutations(x, 2)", "a, b", "a * np.cos(b)"), ("itertools.permutations([x[0], x[1], 2.0])", "a, b, c", "a * b - c"),
    ("combinations(A, 2)", "a, b", "np.sum(a * b)"), ("product(A, x)", "a, b", "np.sum(a) * b"),
    ("np.ndenumerate(x)", "idx, v", "v * (idx[0] + 1.0)"), ("np.ndenumerate(A)", "idx, v", "v * v * (idx[1] + 0.5)"),
    ("np.ndenumerate(A * 2.0)", "idx, v", "np.sin(v)"), ("combinations(x * 2.0, 2)", "a, b", "a * b"),
    ("product(map(np.sin, x), x[:2])", "a, b", "a * b"), ("combinations((v * 3.0 for v in x), 2)", "a, b", "a + a * b"),
]


@family("combinatoric")
def gen_value_tuples(ch) -> Case:
    n = ch.int(3, 4)
    lines = ["def f(x, A, w):", "    s = 0.0"]
    for _ in range(ch.int(1, 2)):
        it, names, term = ch.choice(_VALUE_ITERS)
        lines += _loop(ch, it, names, term)
    lines.append("    return s")
    return Case(_HEADER + "\n".join(lines) + "\n", [_vec(ch, n), _vec(ch, (3, 2)), _vec(ch, 2)],
                wrt=ch.choice([0, 0, 1]), must_work=True)

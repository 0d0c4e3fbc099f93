"""Family generator: literal indices in every spelling NumPy reads differently (issue 15's probe of
autograd's tests found `a[(0, 1, 0), (3, 3, 2)]` printed as `a[0, 1, 0, 3, 3, 2]`, and
`g[(0, 1, 1),] += ...` adding one of two repeated slots).

`literal_index` reads (and sometimes writes) a 2-D or 3-D array at indices written with literals:
tuples of tuples (fancy, with repeated slots), one-item tuples `x[(0, 1, 1),]`, lists, ints,
slices, `...`, and mixes of them; several reads in one function so the gradient's slots are added
into one array. Every spelling is valid NumPy: a gradient matching finite differences is required.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

# (index text, the shapes it applies to)
_INDICES_2D = ["(0, 1, 1), (2, 2, 0)", "(0, 1, 1),", "[0, 1, 1]", "((1, 0), (2, 2))", "[(0, 1), (1, 1)]",
               "1, (0, 2, 2)", "(0, 2), 1:", "..., (1, 1, 0)", "(1,), 2", "0, 1", "1:, ::2", "(1, 1), [0, 2]",
               "[[0, 1], [1, 1]], 2", "(0, 1),"]
_INDICES_3D = ["(0, 1, 1), (2, 2, 0), 1", "(1, 1),", "0, (1, 0), (2, 2)", "..., (0, 1)", "(0, 1), :, (2, 2)",
               "[0, 0], 1:, 1", "1, 2, 0"]
_READS = ["np.sum({e} ** 2)", "np.sum(np.sin({e}) * 2.0)", "np.sum({e}) * 1.5", "np.sum(np.exp({e} * 0.5))"]


@family("indexing")
def literal_index(ch) -> Case:
    three = ch.coin()
    shape = (2, 3, 3) if three else (3, 4)
    pool = _INDICES_3D if three else _INDICES_2D
    lines = ["def f(x):", "    total = 0.0"]
    for _ in range(ch.int(1, 3)):
        lines.append(f"    total = total + {ch.choice(_READS).format(e='x[' + ch.choice(pool) + ']')}")
    if ch.coin():  # a write at such an index (repeated slots: the last write wins, as in NumPy)
        idx = ch.choice(pool)
        lines += ["    b = x * 1.0", f"    b[{idx}] = np.cos(x[{idx}]) * 3.0",
                  f"    total = total + {ch.choice(_READS).format(e='b')}"]
    lines.append("    return total")
    rng = np.random.default_rng(ch.int(0, 10_000))
    return Case("\n".join(lines) + "\n", [rng.uniform(-1.2, 1.2, size=shape)], must_work=True)

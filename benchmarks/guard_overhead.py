"""Per-call cost of the run-time guard (adjoint_compiler/guard.py) on a small gradient.

    python benchmarks/guard_overhead.py

Prints how many checks the guard of a typical function holds, the time of `guard.holds()` alone,
and the time of a whole `grad(f)(x)` call on a 3-vector (where the guard is one part).
"""
from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import timeit

import numpy as np

os.environ.setdefault("ADJOINT_COMPILER_CACHE", "0")

SOURCE = textwrap.dedent("""
    import numpy as np
    SCALE = 2.0

    def helper(x, k=1.5):
        return np.tanh(x * k) * SCALE

    def f(x, w):
        return np.sum(helper(x) * w) + np.sum(w ** 2)
""")


def main() -> None:
    from adjoint_compiler import api, grad

    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "guard_bench_mod.py"), "w") as fh:
        fh.write(SOURCE)
    sys.path.insert(0, folder)
    import guard_bench_mod as m

    x, w = np.linspace(-1.0, 1.0, 3), np.ones(3)
    g = grad(m.f)
    g(x, w)
    entry = next(e for k, e in api._CACHE.items() if k[0] is m.f)
    gd = entry.guard
    n = 100_000
    holds = min(timeit.repeat(gd.holds, number=n, repeat=5)) / n
    call = min(timeit.repeat(lambda: g(x, w), number=n // 10, repeat=5)) / (n // 10)
    checks = len(gd.dicts) + len(gd.attrs) + len(gd.cells) + len(gd.snapshots)
    print(f"guard checks: {checks}  holds(): {holds * 1e9:.0f} ns  whole grad call: {call * 1e6:.2f} us  "
          f"({100 * holds / call:.1f}% of the call)")


if __name__ == "__main__":
    main()

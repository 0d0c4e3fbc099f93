"""Higher-order costs, as ratios: a Hessian-vector product (`hvp`, reverse over reverse) against a
gradient, and a reverse-mode Jacobian (`jacobian(..., out=0)`) of the in-place RK4 right-hand side
against that right-hand side itself. Medians of interleaved rounds.

    python benchmarks/higher_order.py [--rounds N] [--steps N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("ADJOINT_COMPILER_CACHE", "0")

import workloads as W  # noqa: E402

from adjoint_compiler import grad, hvp, jacobian  # noqa: E402


def _median_times(functions: dict, rounds: int) -> dict:
    times = {name: [] for name in functions}
    for _ in range(rounds):
        for name, fn in functions.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    p, u0, dt, _ = W.rk4_args(rng, "full")
    n = args.steps
    v = rng.normal(size=p.shape)
    g = grad(W.rk4_lotka_volterra, wrt=0)
    h = hvp(W.rk4_lotka_volterra, wrt=0)
    jac = jacobian(W.lotka_volterra, wrt=1, out=0)
    du = np.zeros(2)
    start = time.perf_counter()
    h(p, u0, dt, n, v)
    first_hvp = time.perf_counter() - start
    g(p, u0, dt, n)
    jac(du, u0, p, 0.0)
    t = _median_times({"primal": lambda: W.rk4_lotka_volterra(p, u0, dt, n),
                       "grad": lambda: g(p, u0, dt, n),
                       "hvp": lambda: h(p, u0, dt, n, v),
                       "rhs": lambda: W.lotka_volterra(du, u0, p, 0.0),
                       "jacobian": lambda: jac(du, u0, p, 0.0)}, args.rounds)
    print(f"RK4 Lotka-Volterra, {n} steps, in-place right-hand side; medians of {args.rounds} rounds")
    print(f"  primal        {t['primal'] * 1e3:9.3f} ms")
    print(f"  grad          {t['grad'] * 1e3:9.3f} ms   grad / primal   {t['grad'] / t['primal']:6.2f}x")
    print(f"  hvp           {t['hvp'] * 1e3:9.3f} ms   hvp / grad      {t['hvp'] / t['grad']:6.2f}x"
          f"   (first call, compiling: {first_hvp * 1e3:.0f} ms)")
    print(f"  rhs           {t['rhs'] * 1e6:9.1f} us")
    print(f"  jacobian      {t['jacobian'] * 1e6:9.1f} us   jacobian / rhs  {t['jacobian'] / t['rhs']:6.1f}x")


if __name__ == "__main__":
    main()

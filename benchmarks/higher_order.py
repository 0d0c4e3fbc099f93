"""Higher-order costs, as ratios: a Hessian-vector product (`hvp`, forward over reverse: the jvp
of the generated gradient) against a gradient, at several step counts of the in-place RK4
integrator (the ratio stays flat when both grow linearly with the steps), and the forward-mode
(`jacfwd(..., out=0)`) and reverse-mode (`jacobian(..., out=0)`) Jacobians of the in-place RK4
right-hand side against that right-hand side itself. Medians of interleaved rounds.

    python benchmarks/higher_order.py [--rounds N] [--steps N [N ...]] [--reverse-over-reverse] [--cpu]
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

import workloads as W

from adjoint_compiler import grad, hvp, jacfwd, jacobian
from adjoint_compiler.nesting import _reverse_over_reverse

CLOCK = time.perf_counter


def _median_times(functions: dict, rounds: int) -> dict:
    times = {name: [] for name in functions}
    for _ in range(rounds):
        for name, fn in functions.items():
            start = CLOCK()
            fn()
            times[name].append(CLOCK() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--reverse-over-reverse", action="store_true",
                        help="also time the reverse-over-reverse hvp (the pullback of the gradient)")
    parser.add_argument("--cpu", action="store_true",
                        help="time with the process's CPU clock (steadier on a loaded machine)")
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    rng = np.random.default_rng(0)
    p, u0, dt, _ = W.rk4_args(rng, "full")
    v = rng.normal(size=p.shape)
    g = grad(W.rk4_lotka_volterra, wrt=0)
    h = hvp(W.rk4_lotka_volterra, wrt=0)
    clock = "CPU time" if args.cpu else "wall time"
    print(f"RK4 Lotka-Volterra, in-place right-hand side; medians of {args.rounds} rounds ({clock})")
    for k, n in enumerate(args.steps):
        start = time.perf_counter()
        h(p, u0, dt, n, v)
        first_hvp = time.perf_counter() - start
        g(p, u0, dt, n)
        runs = {"primal": lambda n=n: W.rk4_lotka_volterra(p, u0, dt, n),
                "grad": lambda n=n: g(p, u0, dt, n),
                "hvp": lambda n=n: h(p, u0, dt, n, v)}
        if args.reverse_over_reverse:
            runs["rr"] = lambda n=n: _reverse_over_reverse(g, [p, u0, dt, n], (0,), v, False)
            runs["rr"]()
        t = _median_times(runs, args.rounds)
        print(f"{n} steps")
        print(f"  primal        {t['primal'] * 1e3:9.3f} ms")
        print(f"  grad          {t['grad'] * 1e3:9.3f} ms   grad / primal   {t['grad'] / t['primal']:6.2f}x")
        print(f"  hvp           {t['hvp'] * 1e3:9.3f} ms   hvp / grad      {t['hvp'] / t['grad']:6.2f}x"
              + (f"   (first call, compiling: {first_hvp * 1e3:.0f} ms)" if k == 0 else ""))
        if "rr" in t:
            print(f"  hvp (rev/rev) {t['rr'] * 1e3:9.3f} ms   hvp / grad      {t['rr'] / t['grad']:6.2f}x")
    if h.fallback is not None:
        print(f"  (hvp fell back to reverse over reverse: {h.fallback})")
    jac_fwd = jacfwd(W.lotka_volterra, wrt=1, out=0)
    jac_rev = jacobian(W.lotka_volterra, wrt=1, out=0)
    du = np.zeros(2)
    jac_fwd(du, u0, p, 0.0)
    jac_rev(du, u0, p, 0.0)
    t = _median_times({"rhs": lambda: W.lotka_volterra(du, u0, p, 0.0),
                       "jacfwd": lambda: jac_fwd(du, u0, p, 0.0),
                       "jacobian": lambda: jac_rev(du, u0, p, 0.0)}, args.rounds)
    print("right-hand side lotka_volterra(du, u, p, t), d du / d u (2 x 2)")
    print(f"  rhs           {t['rhs'] * 1e6:9.1f} us")
    print(f"  jacfwd        {t['jacfwd'] * 1e6:9.1f} us   jacfwd / rhs    {t['jacfwd'] / t['rhs']:6.1f}x")
    print(f"  jacobian      {t['jacobian'] * 1e6:9.1f} us   jacobian / rhs  {t['jacobian'] / t['rhs']:6.1f}x   (reverse mode)")


if __name__ == "__main__":
    main()

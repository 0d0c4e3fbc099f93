"""Compile time per workload: the CPU time of a cold first call minus that of a warm call.

    python benchmarks/compile_time.py                      # every workload, 7 cold compiles each
    python benchmarks/compile_time.py --only logreg,mlp --reps 11
    python benchmarks/compile_time.py --root ../other/checkout --raw   # another checkout's compiler

Each cold compile clears the in-process cache of the workload's function (the on-disk cache is off:
ADJOINT_COMPILER_CACHE=0) and calls the gradient on the small instance; a second call is subtracted.
CPU time (`time.process_time`), not wall time: on a shared machine it moves less. The compiler warms
up (rule tables, imports) on a first compile of each workload, which is not counted. `--raw` prints
every sample (for interleaving runs of two checkouts and taking medians across them); `--root`
measures the checkout at that path (its `benchmarks/workloads.py` and its `adjoint_compiler`).
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

os.environ["ADJOINT_COMPILER_CACHE"] = "0"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--only", default="")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--raw", action="store_true")
    args = ap.parse_args(argv)
    sys.path[:0] = [args.root, os.path.join(args.root, "benchmarks")]
    import numpy as np
    import workloads as W

    from adjoint_compiler import api, grad

    def clear(func):
        for cache in (api._CACHE, getattr(api, "_EXACT", {})):  # (the exact-signature layer, where there is one)
            for key in list(cache):
                if key and key[0] is func:
                    cache.pop(key, None)

    names = args.only.split(",") if args.only else [w.name for w in W.WORKLOADS]
    for name in names:
        wl = W.by_name(name)
        small = wl.make_args(np.random.default_rng(0), "small")
        g = grad(wl.f, wrt=wl.wrt)
        clear(wl.f)
        try:
            g(*small)  # (warm-up: not counted)
        except Exception as exc:  # noqa: BLE001 -- reported, the other workloads still run
            print(f"{name} skipped: {type(exc).__name__}: {exc}", flush=True)
            continue
        samples = []
        for _ in range(args.reps):
            g = grad(wl.f, wrt=wl.wrt)
            clear(wl.f)
            gc.collect()
            t0 = time.process_time()
            g(*small)
            t1 = time.process_time()
            g(*small)
            t2 = time.process_time()
            samples.append(1000 * ((t1 - t0) - (t2 - t1)))
        if args.raw:
            print(name, *[f"{s:.2f}" for s in samples], flush=True)
        else:
            print(f"{name:18s} median {statistics.median(samples):7.1f} ms   min {min(samples):7.1f} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Long differential fuzzing run: N random programs (tests/reliability/fuzzgen.py), each checked
against finite differences and against running it directly, through every entry point.

    python tools/fuzz_long.py                 # 10,000 programs, seeds 0..9999, 2 worker processes
    python tools/fuzz_long.py --n 500 --start 20000 --workers 1
    python tools/fuzz_long.py --n 1 --start 1234 --show      # one program: print it and its outcome
    python tools/fuzz_long.py --avoid neg_const_pow          # steer around a known bug
    python tools/fuzz_long.py --families --n 20000           # the family generators (families.py)
    python tools/fuzz_long.py --modes joint,vjp              # only these entry points

`--modes` (default all, tests/reliability/entry_modes.py): joint (value_and_grad), grad, vjp (a
random cotangent), twice (a pullback called twice, nothing leaking), methods (@differentiable),
dumps (adjoint_source of each mode parses and is deterministic), inplace (the program as an
in-place function under vjp). Every mode runs on every program; a mode that does not apply (grad
of an array-valued family program) is `skipped`.

Prints a summary: programs tried, passed, failures by kind, counts per mode (pass, refused, wrong,
crash, skipped), and for each failure its seed and its program minimized by statement deletion
(the unminimized program with --full). Exit status 1 if any program failed.
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("ADJOINT_COMPILER_CACHE", "0")   # do not fill the on-disk cache
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "reliability"))

import entry_modes  # noqa: E402
import families  # noqa: E402
import fuzzgen  # noqa: E402


MODES = entry_modes.MODES
_MODES: tuple = MODES  # the modes of this run (set in each worker by _init)


def _init(avoid, modes=MODES):
    import warnings
    global _MODES
    warnings.simplefilter("ignore")
    fuzzgen.AVOID |= set(avoid)
    _MODES = tuple(modes)


def _one(seed):
    try:
        prog = fuzzgen.generate(fuzzgen.RandomChooser(seed))
        out = fuzzgen.check_program(prog, modes=_MODES)
    except Exception as exc:   # the harness itself failed: report, never stop the run
        return seed, "harness_error", repr(exc), None, {}
    if out.ok:
        return seed, out.status, "", None, out.modes
    return seed, out.status, out.detail, prog, out.modes


def _one_family(job):
    """One program of a family generator (`--families`): (name, seed, status, detail, source, modes)."""
    name, seed = job
    try:
        case = families.generate(name, seed)
        result = families.check_case(case, modes=_MODES)
    except Exception as exc:
        return name, seed, "harness_error", repr(exc), "", {}
    return name, seed, result.status, result.detail, case.source, result.modes


def _mode_table(per_mode: dict, modes) -> list:
    lines = [f"  {'mode':10s} {'pass':>7s} {'refused':>8s} {'wrong':>6s} {'crash':>6s} {'skipped':>8s} {'not run':>8s}"]
    for mode in modes:
        c = per_mode[mode]
        lines.append(f"  {mode:10s} {c['pass']:7d} {c['refused']:8d} {c['wrong']:6d} {c['crash']:6d} "
                     f"{c['skipped']:8d} {c['not run']:8d}")
    return lines


def _count_modes(per_mode: dict, modes, seen: dict) -> None:
    for mode in modes:
        per_mode[mode][seen.get(mode, "not run")] += 1


def run_families(args) -> int:
    """`--families`: N programs spread over every family generator; counts per generator."""
    _init([], args.modes)
    names = sorted(families.load_all())
    jobs = [(names[k % len(names)], args.start + k // len(names)) for k in range(args.n)]
    t0 = time.time()
    counts: dict = collections.defaultdict(collections.Counter)
    per_mode: dict = collections.defaultdict(collections.Counter)
    failures = []
    if args.workers > 1:
        pool = mp.get_context("fork").Pool(args.workers, initializer=_init, initargs=([], args.modes))
        results = pool.imap_unordered(_one_family, jobs, chunksize=8)
    else:
        pool, results = None, map(_one_family, jobs)
    tried = 0
    try:
        for name, seed, status, detail, source, seen in results:
            tried += 1
            counts[name][status] += 1
            _count_modes(per_mode, args.modes, seen)
            if status not in ("pass", "refused"):
                failures.append((name, seed, status, detail, source))
                print(f"  FAILED {name} seed {seed}: {status}: {detail.splitlines()[0] if detail else ''}",
                      file=sys.stderr, flush=True)
            if tried % 500 == 0:
                print(f"  ... {tried} programs, {len(failures)} failed, {time.time() - t0:.0f} s", file=sys.stderr,
                      flush=True)
    finally:
        if pool is not None:
            pool.terminate()
    total = collections.Counter()
    for c in counts.values():
        total.update(c)
    print(f"fuzz_long --families: {args.n} programs over {len(names)} generators, modes "
          f"{','.join(args.modes)}, {time.time() - t0:.0f} s")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    print("\n".join(_mode_table(per_mode, args.modes)))
    print(f"  {'generator':44s} {'pass':>6s} {'refused':>8s} {'wrong':>6s} {'crash':>6s} {'other':>6s}")
    for name in names:
        c = counts[name]
        other = sum(v for k, v in c.items() if k not in ("pass", "refused", "wrong", "crash"))
        print(f"  {name:44s} {c['pass']:6d} {c['refused']:8d} {c['wrong']:6d} {c['crash']:6d} {other:6d}")
    for name, seed, status, detail, source in sorted(failures)[:args.max_report]:
        print(f"\n=== {name} seed {seed}: {status}\n{detail}\n{source}")
    return 0 if not failures else 1


def _minimized(prog, status, budget):
    small = fuzzgen.minimize(prog, status, budget=budget)
    return small, fuzzgen.check_program(small)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000, help="number of programs (default 10000)")
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--avoid", default="", help="comma-separated known bugs to steer around "
                    "(see fuzzgen.AVOID)")
    ap.add_argument("--time-limit", type=float, default=None, help="stop after this many seconds")
    ap.add_argument("--show", action="store_true", help="print every program")
    ap.add_argument("--full", action="store_true", help="also print failing programs unminimized")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--max-report", type=int, default=40, help="failures printed in full")
    ap.add_argument("--families", action="store_true", help="run the family generators "
                    "(tests/reliability/families.py) instead of the main generator")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated entry points to check "
                    f"(default all: {','.join(MODES)})")
    args = ap.parse_args(argv)
    args.modes = tuple(m for m in args.modes.split(",") if m)
    unknown = [m for m in args.modes if m not in MODES]
    if unknown:
        ap.error(f"unknown modes {unknown}; the modes are {','.join(MODES)}")
    if args.families:
        return run_families(args)
    avoid = [a for a in args.avoid.split(",") if a]
    _init(avoid, args.modes)

    seeds = range(args.start, args.start + args.n)
    t0 = time.time()
    counts = collections.Counter()
    per_mode: dict = collections.defaultdict(collections.Counter)
    failures = []
    tried = 0
    if args.workers > 1:
        pool = mp.get_context("fork").Pool(args.workers, initializer=_init, initargs=(avoid, args.modes))
        results = pool.imap_unordered(_one, seeds, chunksize=8)
    else:
        pool, results = None, map(_one, seeds)
    try:
        for seed, status, detail, prog, seen in results:
            tried += 1
            counts[status] += 1
            _count_modes(per_mode, args.modes, seen)
            if prog is not None or status == "harness_error":
                failures.append((seed, status, detail, prog))
                print(f"  FAILED seed {seed}: {status}: {detail.splitlines()[0] if detail else ''}", file=sys.stderr,
                      flush=True)
            if args.show:
                print(f"seed {seed}: {status}")
                if prog is not None:
                    print(prog.source)
            if tried % 500 == 0:
                print(f"  ... {tried} programs, {sum(v for k, v in counts.items() if k in ('pass', 'expected_error'))}"
                      f" passed, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
            if args.time_limit and time.time() - t0 > args.time_limit:
                break
    finally:
        if pool is not None:
            pool.terminate()
    elapsed = time.time() - t0

    passed = counts["pass"] + counts["expected_error"]
    print(f"fuzz_long: seeds {args.start}..{args.start + tried - 1}"
          + (f", avoiding {', '.join(avoid)}" if avoid else ""))
    print(f"tried {tried}, passed {passed} ({counts['expected_error']} of them rejected as documented), "
          f"failed {tried - passed}, {elapsed:.0f} s")
    for status, k in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {status:18s} {k}")
    print("\n".join(_mode_table(per_mode, args.modes)))
    failures.sort()
    for seed, status, detail, prog in failures[:args.max_report]:
        print(f"\n=== seed {seed}: {status}")
        if prog is None:
            print(detail)
            continue
        if not args.no_minimize:
            small, out = _minimized(prog, status, 150)
            print(fuzzgen.report(small, out))
        if args.full or args.no_minimize:
            print("unminimized:\n" + fuzzgen.report(prog, fuzzgen.Outcome(status, detail)))
    if len(failures) > args.max_report:
        print(f"\n... and {len(failures) - args.max_report} more failures (seeds "
              f"{[s for s, *_ in failures[args.max_report:]]})")
    return 0 if passed == tried else 1


if __name__ == "__main__":
    sys.exit(main())

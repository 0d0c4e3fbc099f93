"""Benchmark suite: compiled gradients (adjoint_compiler.grad) against hand-written NumPy gradients.

    python benchmarks/bench.py              # full run, plain-text table
    python benchmarks/bench.py --markdown   # the table as Markdown (for benchmarks/RESULTS.md)
    python benchmarks/bench.py --quick      # tiny sizes, few rounds: a smoke run for CI
    python benchmarks/bench.py --only mlp,logreg

For every workload in benchmarks/workloads.py (WORKLOADS):

1. the hand-written gradient is checked against central finite differences on a small instance
   (random directional derivatives plus a few single coordinates);
2. the compiled gradient is built on the small instance; if the compiler raises (an unsupported
   feature, a missing rule) the workload is reported as skipped with the reason -- the harness
   never crashes because of one workload;
3. on the full instance: the first call of the compiled gradient is timed with the compile cache
   cleared (a cold compile), the compiled gradient is compared with the hand-written one
   (np.allclose; a loud FAIL otherwise), then primal / compiled / hand-written (and autograd, jax,
   torch if importable) are timed interleaved in rounds, reporting medians, and the peak memory of
   one call of each gradient is measured with tracemalloc.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
import traceback
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads as W  # noqa: E402

# First calls must compile: the on-disk cache of generated modules stays out of the measurement.
os.environ["ADJOINT_COMPILER_CACHE"] = "0"

import adjoint_compiler  # noqa: E402
from adjoint_compiler import api as _api  # noqa: E402
from adjoint_compiler import grad  # noqa: E402

FRAMEWORKS = ("autograd", "jax", "torch")
NOISY = 0.25  # interquartile range / median above which a timing is flagged as noisy


# ----------------------------------------------------------------------------------------------
# Environment
# ----------------------------------------------------------------------------------------------

def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas_info() -> str:
    try:
        import threadpoolctl  # optional; never a dependency
        parts = []
        for info in threadpoolctl.threadpool_info():
            parts.append(f"{info.get('internal_api')} {info.get('version')} "
                         f"({info.get('threading_layer', '?')}, {info.get('num_threads')} threads)")
        if parts:
            return "; ".join(parts)
    except Exception:
        pass
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        text = f"{blas.get('name')} {blas.get('version')}"
        conf = blas.get("openblas configuration")
        if conf:
            text += f" [{conf}]"
        return text
    except Exception:
        return "unknown"


def _git_commit() -> str:
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=5)
        if out.returncode == 0:
            dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                                   capture_output=True, text=True, timeout=5).stdout.strip()
            return out.stdout.strip() + (" (+ uncommitted changes)" if dirty else "")
    except Exception:
        pass
    return "unknown"


def environment() -> list[tuple[str, str]]:
    threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
               if k in os.environ}
    rows = [
        ("date", datetime.datetime.now().astimezone().isoformat(timespec="seconds")),
        ("machine", f"{platform.platform()}, {platform.machine()}, {_cpu_model()}, "
                    f"{os.cpu_count()} CPUs"),
        ("python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("numpy", np.__version__),
        ("BLAS", _blas_info() + (f" {threads}" if threads else "")),
        ("adjoint_compiler", f"{adjoint_compiler.__version__}, git {_git_commit()}"),
    ]
    for name in FRAMEWORKS:
        mod = _optional(name)
        if mod is not None:
            rows.append((name, _version(name, mod)))
    return rows


def _version(name, mod) -> str:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return getattr(mod, "__version__", "?")


def _optional(name):
    try:
        return __import__(name)
    except Exception:
        return None


# ----------------------------------------------------------------------------------------------
# Checking
# ----------------------------------------------------------------------------------------------

def _as_tuple(g, n):
    return tuple(g) if n > 1 or isinstance(g, tuple) else (g,)


def _perturb(args, wrt, dirs, eps):
    out = list(args)
    for i, d in zip(wrt, dirs):
        x = args[i]
        out[i] = (np.asarray(x, dtype=float) + eps * d) if isinstance(x, np.ndarray) else float(x) + eps * float(d)
    return out


def check_fd(f, grads, args, wrt, rng, n_dirs=3, n_coords=3, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Central finite differences of `f` against `grads` (directional derivatives along random
    directions, then a few single coordinates). Returns None or a message describing the mismatch."""
    shapes = [np.shape(args[i]) for i in wrt]
    probes = []
    for _ in range(n_dirs):
        probes.append([rng.standard_normal(s) if s else rng.standard_normal() for s in shapes])
    for _ in range(n_coords):
        k = rng.integers(len(wrt))
        dirs = [np.zeros(s) if s else 0.0 for s in shapes]
        if shapes[k]:
            idx = tuple(rng.integers(n) for n in shapes[k])
            dirs[k][idx] = 1.0
        else:
            dirs[k] = 1.0
        probes.append(dirs)
    for dirs in probes:
        fd = float(f(*_perturb(args, wrt, dirs, eps)) - f(*_perturb(args, wrt, dirs, -eps))) / (2 * eps)
        an = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, dirs))
        if not np.isclose(an, fd, rtol=rtol, atol=atol):
            return f"directional derivative: finite differences {fd:.10g}, gradient {an:.10g}"
    return None


def grads_close(a, b, rtol=1e-6, atol=1e-9):
    """None if the two gradient tuples agree, else a message naming the first differing argument."""
    if len(a) != len(b):
        return f"{len(a)} gradients vs {len(b)}"
    for k, (x, y) in enumerate(zip(a, b)):
        if np.shape(x) != np.shape(y):
            return f"gradient {k}: shape {np.shape(x)} vs {np.shape(y)}"
        if not np.allclose(x, y, rtol=rtol, atol=atol):
            err = float(np.max(np.abs(np.asarray(x, dtype=float) - np.asarray(y, dtype=float))))
            return f"gradient {k}: max abs difference {err:.3g}"
    return None


# ----------------------------------------------------------------------------------------------
# The compiled gradient, and the optional frameworks
# ----------------------------------------------------------------------------------------------

def clear_compile_cache(func) -> None:
    """Drop every cached compilation of `func`, so the next call compiles cold."""
    target = getattr(func, "__wrapped__", func)
    for cache in (_api._CACHE, _api._EXACT):
        for key in list(cache):
            if key and (key[0] is func or key[0] is target):
                cache.pop(key, None)


def _rebind(func, module):
    """A copy of `func` (and of the functions of its module it calls by name) that reads `np` as
    `module` -- how autograd and jax run NumPy-style user code."""
    mod_globals = func.__globals__
    new_globals = dict(mod_globals)
    new_globals["np"] = module
    for name, value in mod_globals.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is mod_globals:
            new_globals[name] = types.FunctionType(value.__code__, new_globals, value.__name__,
                                                   value.__defaults__, value.__closure__)
    return new_globals[func.__name__] if func.__name__ in new_globals else types.FunctionType(
        func.__code__, new_globals, func.__name__, func.__defaults__, func.__closure__)


def framework_gradient(name, wl, args):
    """(callable taking no arguments returning the gradient tuple as NumPy arrays) or raises."""
    wrt = wl.wrt
    if name == "autograd":
        import autograd
        import autograd.numpy as anp
        fa = _rebind(wl.f, anp)

        def packed(ws, rest):
            full = list(rest)
            for i, w in zip(wrt, ws):
                full[i] = w
            return fa(*full)
        g = autograd.grad(packed)
        ws = tuple(args[i] for i in wrt)
        return lambda: tuple(np.asarray(x) for x in g(ws, args))
    if name == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        fj = _rebind(wl.f, jnp)
        static = tuple(i for i, a in enumerate(args) if isinstance(a, int) and i not in wrt)
        gj = jax.jit(jax.grad(fj, argnums=wrt), static_argnums=static)
        jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)

        def run():
            return jax.block_until_ready(gj(*jargs))
        run()  # trace + compile outside the timed region
        return run, (lambda: tuple(np.asarray(x) for x in run()))
    if name == "torch":
        if wl.torch_f is None:
            raise NotImplementedError("no torch version of this workload")
        import torch
        targs = [torch.tensor(a, dtype=torch.float64) if isinstance(a, (np.ndarray, float)) else a
                 for a in args]
        for i in wrt:
            targs[i].requires_grad_(True)
        params = [targs[i] for i in wrt]

        def run():
            return torch.autograd.grad(wl.torch_f(*targs), params)
        return run, (lambda: tuple(x.detach().numpy() for x in run()))
    raise ValueError(name)


# ----------------------------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------------------------

def _calibrate(fn, target):
    """Number of calls per timed batch so that a batch takes about `target` seconds."""
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    return max(1, min(10000, int(target / max(dt, 1e-7))))


def time_interleaved(fns: dict, rounds: int, target: float) -> tuple:
    """({name: median seconds per call}, {name: per-round samples}) of each of `fns`, measured in
    rounds that alternate the functions (the order rotates every round)."""
    names = list(fns)
    reps = {n: _calibrate(fns[n], target) for n in names}
    samples = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            fn, k = fns[n], reps[n]
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            samples[n].append((time.perf_counter() - t0) / k)
    return {n: statistics.median(s) for n, s in samples.items()}, samples


def spread(samples) -> float:
    """Interquartile range over median of a list of timings (0 for fewer than 4 samples)."""
    if len(samples) < 4:
        return 0.0
    q = statistics.quantiles(samples, n=4)
    return (q[2] - q[0]) / statistics.median(samples)


def peak_memory(fn) -> int:
    """Peak bytes traced by tracemalloc above the starting level during one call of `fn`."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        tracemalloc.stop()
    return max(0, peak - base)


# ----------------------------------------------------------------------------------------------
# Running one workload
# ----------------------------------------------------------------------------------------------

def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def run_workload(wl, size: str, rounds: int, target: float, frameworks: bool, seed: int = 0,
                 cold_compiles: int = 3) -> dict:
    res = {"name": wl.name, "description": wl.description, "status": "ok", "notes": [], "fail": []}
    rng = np.random.default_rng(seed)
    n = len(wl.wrt)

    # 1. The hand-written gradient against finite differences (small instance).
    small = wl.make_args(rng, "small")
    try:
        msg = check_fd(wl.f, _as_tuple(wl.hand(*small), n), small, wl.wrt, rng)
    except Exception as exc:
        msg = f"raised {_reason(exc)}"
    res["hand_fd"] = msg is None
    if msg:
        res["fail"].append(f"hand-written gradient vs finite differences: {msg}")

    # 2. The compiled gradient on the small instance; a compile error skips it (the rest still runs).
    g = grad(wl.f, wrt=wl.wrt)
    clear_compile_cache(wl.f)
    try:
        g_small = _as_tuple(g(*small), n)
    except adjoint_compiler.AdjointCompilerError as exc:
        res["status"] = "skipped"
        res["reason"] = _reason(exc) + (f" (needs {wl.needs})" if wl.needs else "")
    except Exception as exc:
        res["status"] = "skipped"
        res["reason"] = "compiler crashed: " + _reason(exc)
        res["traceback"] = traceback.format_exc()
    if res["status"] == "ok":
        msg = grads_close(g_small, _as_tuple(wl.hand(*small), n))
        if msg:
            res["fail"].append(f"compiled vs hand-written (small instance): {msg}")
        try:
            msg = check_fd(wl.f, g_small, small, wl.wrt, rng)
        except Exception as exc:
            msg = f"raised {_reason(exc)}"
        if msg:
            res["fail"].append(f"compiled gradient vs finite differences: {msg}")

    # 3. Full instance: a cold first call, then the check against the hand-written gradient.
    args = wl.make_args(rng, size)
    primal = lambda: wl.f(*args)  # noqa: E731
    hand = lambda: wl.hand(*args)  # noqa: E731
    h_full = _as_tuple(hand(), n)
    fns = {"primal": primal}
    if res["status"] == "ok":
        firsts = []
        try:
            for _ in range(cold_compiles):  # median of a few cold first calls
                g = grad(wl.f, wrt=wl.wrt)
                clear_compile_cache(wl.f)
                gc.collect()
                t0 = time.perf_counter()
                g_full = _as_tuple(g(*args), n)
                firsts.append(time.perf_counter() - t0)
        except Exception as exc:
            res["status"] = "skipped"
            res["reason"] = "full instance: " + _reason(exc)
            res["traceback"] = traceback.format_exc()
        else:
            res["first_call"] = statistics.median(firsts)
            fns["compiled"] = lambda: g(*args)
            msg = grads_close(g_full, h_full)
            if msg:
                res["fail"].append(f"compiled vs hand-written (full instance): {msg}")
    fns["hand"] = hand

    # 4. Optional frameworks, checked against the hand-written gradient.
    res["frameworks"] = {}
    if frameworks:
        for name in FRAMEWORKS:
            if _optional(name) is None:
                continue
            try:
                made = framework_gradient(name, wl, args)
                run, values = made if isinstance(made, tuple) else (made, made)
                msg = grads_close(_as_tuple(values(), n), h_full, rtol=1e-5, atol=1e-8)
                res["frameworks"][name] = {"ok": msg is None, "note": msg}
                if msg:
                    res["fail"].append(f"{name} vs hand-written: {msg}")
                fns[name] = run
            except Exception as exc:
                res["frameworks"][name] = {"ok": False, "note": "n/a: " + _reason(exc)}

    # 5. Interleaved timing, then peak memory of one call each.
    times, samples = time_interleaved(fns, rounds, target)
    res["times"] = times
    res["spread"] = {k: spread(v) for k, v in samples.items()}
    noisy = [k for k, v in res["spread"].items() if v > NOISY]
    if noisy:
        res["noisy"] = noisy
    for name in res["frameworks"]:
        if name in times:
            res["frameworks"][name]["time"] = times[name]
    res["mem_compiled"] = peak_memory(fns["compiled"]) if "compiled" in fns else None
    res["mem_hand"] = peak_memory(hand)
    res["mem_primal"] = peak_memory(primal)
    return res


# ----------------------------------------------------------------------------------------------
# Reporting
# ----------------------------------------------------------------------------------------------

def _ms(t):
    if t is None:
        return "-"
    ms = t * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def _mb(b):
    return "-" if b is None else f"{b / 2**20:.2f}"


def table(results: list, markdown: bool) -> str:
    fw_cols = [name for name in FRAMEWORKS if any(name in r.get("frameworks", {}) for r in results)]
    head = ["workload", "primal ms", "compiled ms", "hand ms", "compiled/hand", "compiled/primal",
            "first call ms", "compile ms", "peak MB compiled", "peak MB hand"] + [f"{n} ms" for n in fw_cols] + ["check"]
    rows = []
    for r in results:
        t = r.get("times")
        if t is None:
            rows.append([r["name"]] + ["-"] * (len(head) - 2) + ["ERROR"])
            continue
        c = t.get("compiled")
        if c is None:
            row = [r["name"], _ms(t["primal"]), "skipped", _ms(t["hand"]), "-", "-", "-", "-", "-",
                   _mb(r["mem_hand"])]
        else:
            row = [r["name"], _ms(t["primal"]), _ms(c), _ms(t["hand"]),
                   f"{c / t['hand']:.2f}x", f"{c / t['primal']:.2f}x",
                   _ms(r["first_call"]), _ms(max(r["first_call"] - c, 0.0)), _mb(r["mem_compiled"]),
                   _mb(r["mem_hand"])]
        for name in fw_cols:
            fw = r["frameworks"].get(name)
            if fw is None or "time" not in fw:
                row.append("n/a")
            else:
                row.append(_ms(fw["time"]) + ("" if fw["ok"] else " FAIL"))
        status = "FAIL" if r["fail"] else ("ok" if c is not None else "SKIPPED")
        if r.get("noisy"):
            status += " (noisy)"
        row.append(status)
        rows.append(row)
    if markdown:
        lines = ["| " + " | ".join(head) + " |",
                 "| " + " | ".join(["---"] + ["---:"] * (len(head) - 2) + ["---"]) + " |"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = lambda row: "  ".join(str(x).rjust(w) if i else str(x).ljust(w)  # noqa: E731
                                for i, (x, w) in enumerate(zip(row, widths)))
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(row) for row in rows])


def report(results: list, env: list, markdown: bool, size: str, rounds: int) -> str:
    out = []
    if markdown:
        out += [f"- **{k}**: {v}" for k, v in env]
        out += [f"- **mode**: {size} instances, {rounds} interleaved rounds, medians", ""]
    else:
        out += [f"{k:>17}: {v}" for k, v in env]
        out += [f"{'mode':>17}: {size} instances, {rounds} interleaved rounds, medians", ""]
    out.append(table(results, markdown))
    out.append("")
    out.append("ms = median milliseconds per call; compiled = `grad(f, wrt)(*args)` "
               "including the API wrapper; first call = cold compile + one run (median of 3 cold compiles); compile = first call - "
               "compiled; peak MB = tracemalloc peak of one call.")
    out.append("")
    for r in results:
        desc = f"{r['name']} ({r['description']})"
        if r["status"] != "ok":
            out.append(("- " if markdown else "") + f"SKIPPED {desc}: {r['reason']}")
        for msg in r["fail"]:
            out.append(("- " if markdown else "") + f"FAIL {desc}: {msg}")
        if r.get("noisy"):
            detail = ", ".join(f"{k} {r['spread'][k]:.0%}" for k in r["noisy"])
            out.append(("- " if markdown else "") + f"noisy timings for {r['name']} (interquartile range / "
                       f"median: {detail}); another process was probably competing for the CPU -- rerun")
        for name, fw in r.get("frameworks", {}).items():
            if fw.get("note") and "time" not in fw:
                out.append(("- " if markdown else "") + f"{name} on {r['name']}: {fw['note']}")
    return "\n".join(out)


def _banner(results) -> str:
    bad = [r["name"] for r in results if r["fail"]]
    if not bad:
        return ""
    bar = "!" * 78
    return f"\n{bar}\n!!! FAIL: gradient check failed for: {', '.join(bad)}\n{bar}"


# ----------------------------------------------------------------------------------------------
# Profiling: where does a gradient spend its time?
# ----------------------------------------------------------------------------------------------

def compiled_entry(func, wrt):
    """The cached compilation of `func` for `wrt` (compile by calling the gradient first)."""
    target = getattr(func, "__wrapped__", func)
    for key, entry in _api._CACHE.items():
        if key[0] is target and tuple(key[1]) == tuple(wrt) and key[-1] == "grad":
            return entry
    return None


def statement_costs(source: str, name: str, namespace: dict, args, reps: int) -> list:
    """Run function `name` defined in `source` with each top-level statement of its body timed
    (a compound statement counts as one). Returns [(seconds per call, source text)], costliest first."""
    import ast
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = source.splitlines()
    body, texts = [], []
    for i, stmt in enumerate(fn.body):
        if isinstance(stmt, ast.Expr) and isinstance(getattr(stmt, "value", None), ast.Constant):
            continue  # docstring
        text = " ".join(l.strip() for l in lines[stmt.lineno - 1:stmt.end_lineno])
        k = len(texts)
        texts.append(text if len(text) <= 100 else text[:97] + "...")
        start = ast.parse("__t0 = __pc()").body
        stop = ast.parse(f"__acc[{k}] += __pc() - __t0").body
        if isinstance(stmt, ast.Return):
            value = stmt.value or ast.Constant(None)
            body += start + [ast.Assign([ast.Name("__ret", ast.Store())], value)] + stop
            body.append(ast.Return(ast.Name("__ret", ast.Load())))
        else:
            body += start + [stmt] + stop
    fn.body = body
    fn.decorator_list = []
    tree.body = [fn]
    ast.fix_missing_locations(tree)
    acc = [0.0] * len(texts)
    ns = dict(namespace)
    ns.update(__pc=time.perf_counter, __acc=acc)
    exec(compile(tree, f"<profiled {name}>", "exec"), ns)
    for _ in range(reps):
        ns[name](*args)
    return sorted(((t / reps, text) for t, text in zip(acc, texts)), reverse=True)


def profile_workload(wl, size: str, top: int = 12, reps: int | None = None) -> str:
    """The generated source of the workload's gradient, its costliest statements next to those of
    the hand-written gradient, and a cProfile summary of the compiled call."""
    import cProfile
    import inspect
    import io
    import pstats
    import textwrap
    rng = np.random.default_rng(0)
    args = wl.make_args(rng, size)
    g = grad(wl.f, wrt=wl.wrt)
    out = [f"=== {wl.name}: {wl.description} ==="]
    try:
        g(*args)
    except Exception as exc:
        return "\n".join(out + [f"compiled gradient unavailable: {_reason(exc)}"])
    entry = compiled_entry(wl.f, wl.wrt)
    if reps is None:
        reps = max(3, min(2000, _calibrate(lambda: g(*args), 0.5)))  # about half a second
    out += ["--- generated source ---", entry.source.rstrip()]
    t, _ = time_interleaved({"grad": lambda: g(*args), "generated": lambda: entry.function(*args),
                          "hand": lambda: wl.hand(*args)}, rounds=7, target=0.02)
    out.append(f"--- per call: grad(f)(*args) {t['grad'] * 1e6:.1f} us = generated function "
               f"{t['generated'] * 1e6:.1f} us + API wrapper {(t['grad'] - t['generated']) * 1e6:.1f} us; "
               f"hand-written {t['hand'] * 1e6:.1f} us ---")
    fname = entry.function.__name__
    comp = statement_costs(entry.source, fname, entry.function.__globals__, args, reps)
    hand_src = textwrap.dedent(inspect.getsource(wl.hand))
    hand = statement_costs(hand_src, wl.hand.__name__, wl.hand.__globals__, args, reps)
    for title, costs in (("compiled (generated function body)", comp), ("hand-written", hand)):
        total = sum(t for t, _ in costs)
        out.append(f"--- costliest statements: {title}; total {total * 1e3:.3g} ms/call ---")
        for t, text in costs[:top]:
            out.append(f"{t * 1e6:10.1f} us {100 * t / total:5.1f}%  {text}")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(reps):
        g(*args)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    text = buf.getvalue()
    out += [f"--- cProfile of grad(f)(*args), {reps} calls, by own time ---",
            text[text.find("ncalls"):].rstrip() if "ncalls" in text else text.rstrip()]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------------

def run(quick: bool = False, only=None, rounds: int | None = None, frameworks: bool = True,
        progress=None) -> list:
    size = "quick" if quick else "full"
    rounds = rounds or (3 if quick else 15)
    target = 0.002 if quick else 0.03
    try:  # load the built-in rules up front, so that "first call" measures the function's compile
        from adjoint_compiler import registry
        registry.load_builtin_rules()
    except Exception:
        pass
    selected = W.WORKLOADS if not only else [W.by_name(n) for n in only]
    results = []
    for wl in selected:
        if progress:
            progress(f"[bench] {wl.name} ...")
        try:
            res = run_workload(wl, size, rounds, target, frameworks, cold_compiles=1 if quick else 3)
        except Exception as exc:  # a bug in a workload or the harness: report it, keep going
            res = {"name": wl.name, "description": wl.description, "status": "error",
                   "reason": "harness error: " + _reason(exc), "fail": [f"harness error: {_reason(exc)}"],
                   "traceback": traceback.format_exc()}
        results.append(res)
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny instances and 3 rounds (CI smoke run)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved timing rounds (default 15)")
    ap.add_argument("--only", default=None, help="comma-separated workload names")
    ap.add_argument("--no-frameworks", action="store_true", help="skip autograd / jax / torch columns")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    ap.add_argument("--verbose", action="store_true", help="print tracebacks of compiler crashes")
    ap.add_argument("--profile", action="store_true",
                    help="print the generated source, per-statement costs (compiled vs hand-written) and a "
                         "cProfile summary for each selected workload, instead of the table")
    ns = ap.parse_args(argv)
    if ns.list:
        for wl in W.WORKLOADS:
            print(f"{wl.name:14} wrt={wl.wrt}  {wl.description}")
        return 0
    only = [s.strip() for s in ns.only.split(",")] if ns.only else None
    if ns.profile:
        for wl in (W.WORKLOADS if not only else [W.by_name(n) for n in only]):
            print(profile_workload(wl, "quick" if ns.quick else "full"), end="\n\n")
        return 0
    results = run(quick=ns.quick, only=only, rounds=ns.rounds, frameworks=not ns.no_frameworks,
                  progress=lambda m: print(m, file=sys.stderr, flush=True))
    rounds = ns.rounds or (3 if ns.quick else 15)
    print(report(results, environment(), ns.markdown, "quick" if ns.quick else "full", rounds))
    if ns.verbose:
        for r in results:
            if r.get("traceback"):
                print(f"\n--- {r['name']} ---\n{r['traceback']}")
    banner = _banner(results)
    if banner:
        print(banner)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

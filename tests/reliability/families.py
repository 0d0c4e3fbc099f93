"""Family generators: random programs from the constructs the compiler was *not* designed around.

`fuzzgen.py` writes the programs the compiler promises to differentiate; the programs written
outside the team found their wrong gradients elsewhere: views updated in place, arrays held in
containers, aliased arguments, globals changed between calls, constructors, `out=`, integer
storage, complex values, broadcasting writes, special points, zero-trip loops. Each family here
has one or more generators (`@family("views")` over `def gen(ch) -> Case`) that write such a
program in one of several spellings, with random shapes and constants.

A `Case` is judged by `check_case`, through every entry point (`entry_modes.MODES`:
value_and_grad, grad, vjp with a random cotangent, a pullback twice, @differentiable's methods,
the dumps, the function rewritten as an in-place one; `Result.modes` has each mode's kind):
- `pass`: the value equals running the function, and the gradient equals central finite
  differences; the caller's arrays are unchanged;
- `refused`: one of our located errors (an `AdjointCompilerError`). Allowed unless the case says
  `must_work` (a refusal of valid code is a missing feature, never a wrong number);
- `wrong` (value, gradient, or an input changed) and `crash` (any other exception): defects.

A case with `then` runs it (Python statements, in the module's namespace) after the first
gradient, and checks a second gradient against finite differences of the changed program: a
global rebound, a helper redefined, a rule re-registered must take effect. A case with
`then_args` takes its second gradient at those arguments (arrays of other shapes: code compiled
for one pattern of axis lengths must not serve another).

    python tools/fuzz_long.py --families --n 20000     # every generator, counts per generator and mode
"""
from __future__ import annotations

import copy
import dataclasses
import traceback

import numpy as np

import entry_modes as entry

FAMILIES: dict = {}  # generator name -> (family, generate(chooser) -> Case)

HEADER = "import numpy as np\nfrom adjoint_compiler import Buffer, copyto\n"


def family(name: str):
    """Register the decorated generator under `name` (the family it exercises)."""
    def register(gen):
        FAMILIES[f"{name}.{gen.__name__}"] = (name, gen)
        return gen
    return register


@dataclasses.dataclass
class Case:
    source: str          # a module defining `f` (HEADER is prepended)
    args: list
    wrt: int = 0
    must_work: bool = False
    then: str = ""        # statements run in the module between the first and second gradient
    then_args: list | None = None  # the arguments of the second gradient (else `args` again)
    fname: str = "f"
    second_order: bool = False  # also check the second derivative (entry_modes.check_second)
    may_raise: bool = False  # the function may raise: then the gradient must raise too (or refuse)


@dataclasses.dataclass
class Result:
    status: str           # pass, refused, wrong, crash, generator_error
    detail: str = ""
    modes: dict = dataclasses.field(default_factory=dict)  # entry point -> pass/refused/wrong/crash/skipped

    @property
    def ok(self) -> bool:
        return self.status == "pass" or self.status == "refused"


copy_args = entry.copy_args  # (an array argument in another layout keeps it)


def fd_grad(f, args, i, eps=1e-6):
    """Central differences of f w.r.t. every element of argument i (arguments copied per call); for
    a complex argument z = x + iy, dL/dx - i dL/dy (the convention of autograd and JAX)."""
    x = args[i]
    if np.iscomplexobj(x):
        return _fd_complex(f, args, i, eps)
    if isinstance(x, (list, tuple)) and all(type(v) is float for v in x):  # a sequence of floats
        def at_item(k, t):
            a = copy_args(args)
            a[i] = type(x)(v + t if j == k else v for j, v in enumerate(x))
            return float(np.real(f(*a)))
        return type(x)((at_item(k, eps) - at_item(k, -eps)) / (2 * eps) for k in range(len(x)))
    if not isinstance(x, np.ndarray):
        def at(t):
            a = copy_args(args)
            a[i] = float(x) + t
            return float(np.real(f(*a)))
        return (at(eps) - at(-eps)) / (2 * eps)
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        def at(t):
            a = copy_args(args)
            a[i][j] = x[j] + t
            return float(np.real(f(*a)))
        g[j] = (at(eps) - at(-eps)) / (2 * eps)
    return g


def _fd_complex(f, args, i, eps):
    x = np.asarray(args[i])
    g = np.zeros(x.shape, complex)
    for j in np.ndindex(x.shape):
        for unit, part in ((1.0, 1.0), (1j, -1j)):
            def at(t, j=j, unit=unit):
                a = copy_args(args)
                if isinstance(args[i], np.ndarray):
                    a[i][j] = x[j] + t * unit
                else:
                    a[i] = type(args[i])(x[()] + t * unit)
                return float(np.real(f(*a)))
            g[j] += part * (at(eps) - at(-eps)) / (2 * eps)
    return g if isinstance(args[i], np.ndarray) else complex(g[()])


def _real_view(a):
    """A complex value as the real array of its real and imaginary parts (compared as such)."""
    a = np.asarray(a)
    return np.stack([a.real, a.imag]).astype(float) if a.dtype.kind == "c" else np.asarray(a, dtype=float)


def _close(a, b, rtol=1e-5, atol=1e-6) -> bool:
    a, b = _real_view(a), _real_view(b)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * np.abs(b) + atol * max(1.0, np.abs(b).max(initial=0))))


def _one_gradient(f, case: Case, mode: str = "joint") -> Result | None:
    """None when the value and `value_and_grad` gradient of `f` are right; else what is wrong."""
    from adjoint_compiler import AdjointCompilerError, value_and_grad

    args = case.args
    try:
        expected = f(*copy_args(args))
    except Exception:
        return Result("generator_error", traceback.format_exc(limit=3))
    before = copy_args(args)
    try:
        value, g = value_and_grad(f, wrt=case.wrt)(*case.args)
    except AdjointCompilerError as exc:
        return Result("refused", f"{mode}: {type(exc).__name__}: {exc}")
    except Exception:
        return Result("crash", f"{mode}: " + traceback.format_exc())
    for k, (b, a) in enumerate(zip(before, args)):
        if isinstance(b, np.ndarray) and not np.array_equal(a, b):
            return Result("wrong", f"{mode}: argument {k} changed: {b!r} -> {a!r}")
    if value is not None and not _close(value, expected, 1e-9, 1e-11):
        return Result("wrong", f"{mode}: value {value!r}, running the function gives {expected!r}")
    fd = fd_grad(f, args, case.wrt)
    if not _close(g, fd):
        alt = [fd_grad(f, args, case.wrt, eps) for eps in (1e-5, 1e-7)]
        single = np.asarray(expected).dtype in (np.float32, np.complex64)  # (differences of rounded numbers)
        if not any(_close(g, a) for a in alt) and not (single and _close(g, fd_grad(f, args, case.wrt, 1e-2), 1e-3, 1e-4)):
            return Result("wrong", f"{mode}: gradient {g!r}, finite differences {fd!r}")
    return None


def _raises_too(f, case: Case, primal: Exception) -> Result:
    """The function raised `primal`: its gradient must raise too (the same kind of error, or a
    refusal), never return a number, and leave the arguments as they were."""
    from adjoint_compiler import AdjointCompilerError, value_and_grad

    before = copy_args(case.args)
    try:
        value, g = value_and_grad(f, wrt=case.wrt)(*case.args)
    except AdjointCompilerError as exc:
        return Result("refused", f"joint: {type(exc).__name__}: {exc}")
    except Exception as exc:
        kind = next(t for t in type(primal).__mro__ if t.__module__ == "builtins")  # (NumPy's: TypeError)
        refusals = (TypeError, ValueError)  # (NumPy checks the dtype, then the shape; either is an error)
        if not isinstance(exc, kind) and not (issubclass(kind, refusals) and isinstance(exc, refusals)):
            return Result("crash", f"joint: the function raises {primal!r}; the gradient {exc!r}")
        changed = [k for k, (b, a) in enumerate(zip(before, case.args))
                   if isinstance(b, np.ndarray) and not np.array_equal(a, b)]
        return Result("wrong", f"joint: argument {changed[0]} changed") if changed else Result("pass")
    return Result("wrong", f"joint: the function raises {primal!r}, its gradient gave {g!r}")


def subject(f, case: Case, expected, source: str) -> entry.Subject:
    """The case as `entry_modes` checks it (its in-place variant made from `source`)."""
    numbers = entry.arrays_and_numbers(expected)
    scale = max([1.0] + [float(np.max(np.abs(v), initial=0)) for v in numbers])

    def inplace():
        made = entry.inplace_variant(source, case.fname, case.args, expected)
        return None if made is None else (made[0], made[1], None)
    return entry.Subject(f, case.args, (case.wrt,), expected, scale,
                         fd=lambda k, eps=1e-6: fd_grad(f, case.args, k, eps), inplace=inplace,
                         seed=abs(hash(case.source)) % 10_000)


def check_case(case: Case, modes: tuple = entry.MODES) -> Result:
    """Judge a case through each entry point in `modes` (`entry_modes.MODES`: value_and_grad
    ('joint'), grad, vjp, a pullback twice, @differentiable's methods, the dumps, the in-place
    variant); the first failure is the result, `Result.modes` has each mode's kind. A function
    whose value is not a number is checked by the modes that take any output (vjp, twice, dumps)."""
    import fuzzgen  # the module loader of the main fuzzer (a real file, so `inspect` reads it)

    source = HEADER + case.source
    mod = fuzzgen.load(source, "fam")
    kinds: dict = {}
    try:
        f = getattr(mod, case.fname)
        try:
            expected = f(*copy_args(case.args))
        except Exception as exc:
            if case.may_raise:
                return _raises_too(f, case, exc)
            return Result("generator_error", traceback.format_exc(limit=3))
        scalar = entry.is_scalar(expected)
        about = subject(f, case, expected, source)
        failed = refused = None
        for mode in modes + (("second",) if case.second_order and "second" not in modes else ()):
            if mode == "joint":
                result = _one_gradient(f, case) if scalar else None
                kind = "skipped" if not scalar else "pass" if result is None else result.status
                detail = result.detail if result is not None else ""
            else:
                kind, detail = entry.run(mode, about)
            if kind == "refused" and case.must_work:
                kind, detail = "wrong", "refused, but this construct must work: " + detail
            kinds[mode] = kind
            if kind not in ("pass", "skipped", "refused"):
                failed = failed or Result(kind, detail)
            elif kind == "refused":
                refused = refused or Result(kind, detail)
        bad = failed or refused
        if (bad is None or bad.ok) and (case.then or case.then_args is not None) and scalar:
            exec(case.then, vars(mod))
            second = case if case.then_args is None else dataclasses.replace(case, args=case.then_args)
            again = _one_gradient(getattr(mod, case.fname), second)
            if again is not None:
                again.detail = f"after `{case.then or 'new arguments'}`: {again.detail}"
                if again.status == "refused" and case.must_work:
                    again = Result("wrong", "refused, but this construct must work: " + again.detail)
                bad = again if not again.ok or bad is None else bad
    finally:
        fuzzgen.unload(mod)
    result = bad or Result("pass")
    result.modes = kinds
    return result


def load_all() -> dict:
    """Import every generator module (`fam_*.py` beside this file) and return FAMILIES."""
    import importlib
    import pathlib
    import sys

    here = pathlib.Path(__file__).parent
    sys.path.insert(0, str(here))
    for path in sorted(here.glob("fam_*.py")):
        importlib.import_module(path.stem)
    return FAMILIES


def generate(name: str, seed: int) -> Case:
    import fuzzgen

    return FAMILIES[name][1](fuzzgen.RandomChooser(seed))

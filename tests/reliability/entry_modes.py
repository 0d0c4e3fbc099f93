"""Every entry point on one program, each checked against finite differences or the primal itself.

`fuzzgen.check_module` and `families.check_case` describe a program as a `Subject` (the function,
its arguments, the positions checked, its value, finite differences of it) and call `run(mode,
subject)` for each mode:

- `joint`: `value_and_grad` (its checks live in the callers, which know their programs);
- `grad`: `grad(f, wrt=positions)`: gradients against central finite differences, of the type of
  their argument (a NumPy scalar's is a NumPy scalar of that type), aliasing nothing, inputs unchanged;
- `vjp`: `vjp(f, *args)` and its pullback on a random cotangent, against finite differences of
  `<cotangent, f>`; `out` equals running `f`;
- `twice`: a pullback called twice gives the same gradients, and nothing leaks between calls (the
  caller writing into its arguments after `vjp`, into `out`, into the first gradients or into its
  cotangent changes nothing);
- `methods`: `@differentiable`'s `.grad` and `.value_and_grad`; with `decorated`, the program with
  `@differentiable` on every function (calls go through the wrapper);
- `dumps`: `adjoint_source` for each of grad, value_and_grad and vjp parses, and is the same text
  when compiled again with the caches cleared;
- `inplace`: the program rewritten as an in-place function `f(res, *args)` that returns nothing
  and writes its result into `res[0]` (`inplace_variant`): under `vjp` its outputs are the arguments
  it writes into; each equals the argument after running the primal; the caller's arrays are
  unchanged; the pullback, called twice, against finite differences of `<cotangents, written
  arguments after f>` (w.r.t. `res` and one of the positions, in turn by seed).

A mode's result is `pass`, `skipped` (not applicable), `refused` (one of our located errors),
`wrong` (a wrong number, structure, a changed input, a leak, a bad dump) or `crash` (any other
exception).
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import os
import traceback

import numpy as np

MODES = ("joint", "grad", "vjp", "twice", "methods", "dumps", "inplace")
KINDS = ("pass", "refused", "wrong", "crash", "skipped")


class Wrong(Exception):
    """A check failed: a wrong value, gradient, structure, a changed input, a leak, a bad dump."""


@dataclasses.dataclass
class Subject:
    f: object                 # the function (a module attribute: its source is read)
    args: list
    wrt: tuple                # the positions checked against finite differences
    expected: object          # f(*args) run directly (on copies)
    scale: float              # max(1, |f|): the absolute tolerance's scale
    fd: object                # fd(k, eps) -> central differences of scalar f w.r.t. argument k
    inplace: object = None    # () -> (module source, args, the positions it may write into or None), or None
    decorated: object = None  # () -> module source with @differentiable on every function, or None
    seed: int = 0
    _fds: dict = dataclasses.field(default_factory=dict)

    def fd_of(self, k):
        if k not in self._fds:
            self._fds[k] = self.fd(k, 1e-6)
        return self._fds[k]

    @property
    def scalar(self) -> bool:
        return is_scalar(self.expected)


def is_scalar(value) -> bool:
    """A number, or a 0-d array: what `grad` differentiates."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "biuf"
    return isinstance(value, (float, int, np.number)) and not isinstance(value, (bool, np.bool_))


def arrays_and_numbers(value) -> list:
    if isinstance(value, (tuple, list)):
        return [v for x in value for v in arrays_and_numbers(x)]
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" or is_scalar(value):
        return [value]
    return []


def copy_args(args):
    """Fresh copies of the arguments; an object passed twice stays one object (aliasing kept), and
    an array argument that is a view in another layout (transposed, reversed, strided) keeps it."""
    made = copy.deepcopy(list(args))
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.base is not None and not a.flags.c_contiguous \
                and sum(b is a for b in args) == 1:
            made[k] = _same_layout(a)
    return made


def _same_layout(x):
    """A copy of the view `x` with its strides: the array it views copied, the same window taken
    again (NumPy's reshape and ravel give a view or a copy by the layout, so checks must run on
    what the caller passed)."""
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous:
        return copy.deepcopy(x)
    offset = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(x.shape, x.dtype, buffer=root.copy(), offset=offset, strides=x.strides)


def _real_view(a):
    """A complex value as the real array of its real and imaginary parts (compared as such)."""
    a = np.asarray(a)
    return np.stack([a.real, a.imag]).astype(float) if a.dtype.kind == "c" else np.asarray(a, dtype=float)


def close(ad, fd, scale) -> bool:
    try:
        ad, fd = _real_view(ad), _real_view(fd)
    except (TypeError, ValueError):
        return False
    return ad.shape == fd.shape and bool(np.all(np.abs(ad - fd) <= 1e-5 * np.abs(fd) + 1e-6 * scale))


def central(phi, args, k, eps=1e-6):
    """Central differences of scalar `phi(args)` w.r.t. every element of argument k (for a complex
    argument z = x + iy, dphi/dx - i dphi/dy)."""
    x = args[k]
    if np.iscomplexobj(x):
        g = np.zeros(np.shape(x), complex)
        for j in np.ndindex(np.shape(x)):
            for unit, part in ((1.0, 1.0), (1j, -1j)):
                def at(t, j=j, unit=unit):
                    a = copy_args(args)
                    if isinstance(x, np.ndarray):
                        a[k][j] = x[j] + t * unit
                    else:
                        a[k] = type(x)(x + t * unit)
                    return phi(a)
                g[j] += part * (at(eps) - at(-eps)) / (2 * eps)
        return g if isinstance(x, np.ndarray) else complex(g[()])
    if not isinstance(x, np.ndarray):
        def at(t):
            a = copy_args(args)
            a[k] = (np.float64(x) if isinstance(x, np.floating) else float(x)) + t
            return phi(a)
        return (at(eps) - at(-eps)) / (2 * eps)
    g = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        def at(t, j=j):
            a = copy_args(args)
            a[k][j] = x[j] + t
            return phi(a)
        g[j] = (at(eps) - at(-eps)) / (2 * eps)
    return g


def inner(ct, value) -> float:
    if isinstance(value, (tuple, list)):
        return sum(inner(c, v) for c, v in zip(ct, value))
    return float(np.sum(np.asarray(ct, dtype=float) * np.asarray(value, dtype=float)))


def run(mode: str, subject: Subject) -> tuple:
    """(kind, detail) of one mode on the subject."""
    from adjoint_compiler import AdjointCompilerError

    try:
        return CHECKS[mode](subject), ""
    except AdjointCompilerError as exc:
        return "refused", f"{mode}: {type(exc).__name__}: {exc}"
    except Wrong as exc:
        return "wrong", f"{mode}: {exc}"
    except Exception:  # noqa: BLE001 -- any other exception is a crash to report
        return "crash", f"{mode}: " + traceback.format_exc()


# -- checks shared by the modes ---------------------------------------------------------------

def _unchanged(before, args, what: str) -> None:
    for k, (b, a) in enumerate(zip(before, args)):
        if not _equal(a, b):
            raise Wrong(f"{what} changed argument {k}: {b!r} -> {a!r}")


def _equal(a, b) -> bool:
    if isinstance(b, dict):
        return isinstance(a, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in b)
    if isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
    try:
        return bool(a == b) or bool(np.isnan(a) and np.isnan(b))
    except Exception:  # noqa: BLE001
        return a is b


def _typed_like(g, x, where: str) -> None:
    """The gradient-type rule: a float's gradient is a float, a NumPy scalar's a NumPy scalar of its
    float type, an array's a float array of its shape (a complex array's a complex array of its
    dtype), a tuple's or list's the same structure."""
    if isinstance(x, np.ndarray):
        if not isinstance(g, np.ndarray) or g.shape != x.shape or g.dtype.kind != ("c" if x.dtype.kind == "c" else "f") \
                or (x.dtype.kind in "fc" and g.dtype != x.dtype):
            raise Wrong(f"{where}: {g!r} for an array of shape {x.shape} and dtype {x.dtype}")
    elif type(x) is complex:
        if type(g) is not complex:
            raise Wrong(f"{where}: a {type(g).__name__} for a complex (expected a complex)")
    elif isinstance(x, np.generic):
        want = type(x) if x.dtype.kind in "fc" else np.float64
        if type(g) is not want:
            raise Wrong(f"{where}: a {type(g).__name__} for a {type(x).__name__} (expected a {want.__name__})")
    elif type(x) in (float, int):
        if type(g) is not float:
            raise Wrong(f"{where}: a {type(g).__name__} for a {type(x).__name__} (expected a float)")
    elif isinstance(x, (tuple, list)):
        if type(g) is not type(x) or len(g) != len(x):
            raise Wrong(f"{where}: {g!r} for a {type(x).__name__} of length {len(x)}")
        for k, (a, b) in enumerate(zip(g, x)):
            _typed_like(a, b, f"{where}[{k}]")


def _alias_free(grads, args, where: str) -> None:
    inputs = [a for a in _arrays(args)]
    seen: list = []
    for k, g in enumerate(grads):
        for a in _arrays(g):
            if any(np.shares_memory(a, b) for b in inputs + seen):
                raise Wrong(f"{where}: gradient {k} shares memory with an input or another gradient")
            seen.append(a)


def _arrays(v) -> list:
    if isinstance(v, np.ndarray):
        return [v]
    if isinstance(v, (tuple, list)):
        return [a for x in v for a in _arrays(x)]
    return []


def _against_fd(subject: Subject, g, k: int, where: str, factor=1.0, fd=None) -> None:
    """`g` against `factor *` the finite differences of argument k (re-checked at eps 1e-5 and
    1e-7 before it counts: a branch threshold inside +-eps)."""
    if isinstance(subject.args[k], (tuple, list)):
        return  # (finite differences are taken for numbers and arrays only)
    want = fd(1e-6) if fd is not None else factor * np.asarray(subject.fd_of(k))
    if close(g, want, subject.scale * max(1.0, abs(factor))):
        return
    for eps in (1e-5, 1e-7):
        alt = fd(eps) if fd is not None else factor * np.asarray(subject.fd(k, eps))
        if close(g, alt, subject.scale * max(1.0, abs(factor))):
            return
    if np.asarray(subject.expected).dtype in (np.float32, np.complex64):  # (differences of rounded numbers:
        alt = fd(1e-2) if fd is not None else factor * np.asarray(subject.fd(k, 1e-2))  # a wide step, loosely)
        if close(g, alt, 100 * subject.scale * max(1.0, abs(factor))) or np.allclose(_real_view(g), _real_view(alt),
                                                                                      rtol=1e-3, atol=1e-4):
            return
    raise Wrong(f"{where}: gradient of argument {k}\n  compiled: {g!r}\n  finite differences: {want!r}")


def _cotangent(subject: Subject, like, salt: int = 0):
    rng = np.random.default_rng(subject.seed * 7919 + salt)
    if isinstance(like, (tuple, list)):
        return type(like)(_cotangent(subject, v, salt + 1 + k) for k, v in enumerate(like))
    if np.ndim(like) == 0:
        return float(rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0]))
    return rng.uniform(-1.0, 1.0, size=np.shape(like))


# -- the modes ---------------------------------------------------------------------------------

def check_grad(subject: Subject) -> str:
    from adjoint_compiler import grad

    if not subject.scalar:
        return "skipped"
    before = copy_args(subject.args)
    grads = grad(subject.f, wrt=subject.wrt)(*subject.args)
    _unchanged(before, subject.args, "grad")
    if not isinstance(grads, tuple) or len(grads) != len(subject.wrt):
        raise Wrong(f"grad: expected a tuple of {len(subject.wrt)} gradients, got {grads!r}")
    for g, k in zip(grads, subject.wrt):
        _typed_like(g, subject.args[k], f"grad: gradient {k}")
        _against_fd(subject, g, k, "grad")
    _alias_free(grads, subject.args, "grad")
    return "pass"


def _vjp_fd(subject: Subject, ct, k):
    """Finite differences of <ct, f> w.r.t. argument k, as a function of eps."""
    if subject.scalar:
        return lambda eps: ct * np.asarray(subject.fd(k, eps)) if eps != 1e-6 else ct * np.asarray(subject.fd_of(k))
    return lambda eps: central(lambda a: inner(ct, subject.f(*a)), subject.args, k, eps)


def check_vjp(subject: Subject) -> str:
    from adjoint_compiler import vjp

    before = copy_args(subject.args)
    out, pullback = vjp(subject.f, *subject.args)
    _unchanged(before, subject.args, "vjp")
    if not close(out, subject.expected, 1e-9 * subject.scale) and not _equal(out, subject.expected):
        raise Wrong(f"vjp: out {out!r}, running the function gives {subject.expected!r}")
    ct = _cotangent(subject, subject.expected)
    grads = pullback(ct)
    _unchanged(before, subject.args, "the pullback")
    if not isinstance(grads, tuple) or len(grads) != len(subject.args):
        raise Wrong(f"vjp: expected a tuple of {len(subject.args)} gradients, got {grads!r}")
    for k, g in enumerate(grads):
        _typed_like(g, subject.args[k], f"vjp: gradient {k}")
    for k in subject.wrt:
        _against_fd(subject, grads[k], k, "vjp", fd=_vjp_fd(subject, ct, k))
    _alias_free(grads, subject.args, "vjp")
    return "pass"


def _scribble(value) -> None:
    """Write garbage into every array in `value` (the caller owns them)."""
    for a in _arrays(value):
        if a.flags.writeable:
            a[...] = 7.25


def _twice(pullback, ct, out, what: str) -> tuple:
    kept_ct = copy.deepcopy(ct)
    first = pullback(ct)
    saved = copy.deepcopy(first)
    if not _equal(ct, kept_ct):
        raise Wrong(f"{what}: the pullback changed its cotangent: {kept_ct!r} -> {ct!r}")
    _scribble(first)
    _scribble(out)
    second = pullback(ct)
    if not _equal(second, saved):
        raise Wrong(f"{what}: a second call of the pullback (after the caller wrote into `out` and the first "
                    f"gradients) gives {second!r}, the first gave {saved!r}")
    return saved


def check_twice(subject: Subject) -> str:
    from adjoint_compiler import vjp

    args = copy_args(subject.args)
    out, pullback = vjp(subject.f, *args)
    kept_out = copy.deepcopy(out)
    _scribble(args)  # (the pullback must see the arguments as the call did)
    ct = _cotangent(subject, subject.expected, 1)
    if isinstance(ct, float) and subject.seed % 2:
        ct = np.array(ct)  # (a 0-d array: the caller could write into it)
    first = _twice(pullback, ct, out, "twice")
    again_out, again = vjp(subject.f, *subject.args)
    if not _equal(again_out, kept_out) or not _equal(again(ct), first):
        raise Wrong("twice: a second vjp of the same arguments differs from the first")
    return "pass"


def check_methods(subject: Subject) -> str:
    from adjoint_compiler import differentiable

    if not subject.scalar:
        return "skipped"
    marked = differentiable(subject.f)
    if not _equal(marked(*copy_args(subject.args)), subject.expected) and \
            not close(marked(*copy_args(subject.args)), subject.expected, 1e-9 * subject.scale):
        raise Wrong("methods: calling the @differentiable function changed its value")
    k = subject.wrt[0]
    _against_fd(subject, marked.grad(k)(*subject.args), k, "methods .grad")
    value, grads = differentiable(wrt=subject.wrt)(subject.f).value_and_grad()(*subject.args)
    if not close(value, subject.expected, 1e-9 * subject.scale):
        raise Wrong(f"methods .value_and_grad: value {value!r}, running the function gives {subject.expected!r}")
    if not isinstance(grads, tuple) or len(grads) != len(subject.wrt):
        raise Wrong(f"methods .value_and_grad: expected a tuple of {len(subject.wrt)} gradients, got {grads!r}")
    for g, j in zip(grads, subject.wrt):
        _against_fd(subject, g, j, "methods .value_and_grad")
    if subject.decorated is not None:
        import fuzzgen

        mod = fuzzgen.load(subject.decorated(), "dec")
        try:
            f = getattr(mod, subject.f.__name__)
            value, g = f.value_and_grad(k)(*subject.args)
            if not close(value, subject.expected, 1e-9 * subject.scale):
                raise Wrong(f"methods (decorated): value {value!r}, expected {subject.expected!r}")
            _against_fd(subject, g, k, "methods (every function @differentiable) .value_and_grad")
            _against_fd(subject, f.grad(k)(*subject.args), k, "methods (every function @differentiable) .grad")
        finally:
            fuzzgen.unload(mod)
    return "pass"


def _forget(f, mode: str) -> None:
    """Drop `f`'s compiled entries of one mode from the in-memory cache (the disk cache is off
    here): the next `adjoint_source` compiles it again from scratch."""
    from adjoint_compiler import api

    kinds = {"grad": ("grad",), "value_and_grad": ("joint",), "vjp": ("split", "split_written")}[mode]
    for cache in (api._CACHE, api._EXACT):
        for key in [k for k in list(cache) if k[0] is f and k[3] in kinds]:
            cache.pop(key, None)


def check_dumps(subject: Subject) -> str:
    from adjoint_compiler import adjoint_source

    saved = os.environ.get("ADJOINT_COMPILER_CACHE")
    os.environ["ADJOINT_COMPILER_CACHE"] = "0"
    try:
        for mode in ("grad", "value_and_grad", "vjp"):
            if mode != "vjp" and not subject.scalar:
                continue
            wrt = None if mode == "vjp" else subject.wrt
            first = adjoint_source(subject.f, wrt, subject.args, mode)
            try:
                ast.parse(first)
            except SyntaxError as exc:
                raise Wrong(f"dumps: adjoint_source(mode={mode!r}) does not parse: {exc}\n{first}") from None
            _forget(subject.f, mode)
            second = adjoint_source(subject.f, wrt, subject.args, mode)
            if second != first:
                raise Wrong(f"dumps: adjoint_source(mode={mode!r}) differs between two compiles:\n{first}\n"
                            f"---\n{second}")
    finally:
        if saved is None:
            os.environ.pop("ADJOINT_COMPILER_CACHE", None)
        else:
            os.environ["ADJOINT_COMPILER_CACHE"] = saved
    return "pass"


def inplace_variant(source: str, fname: str, args: list, expected):
    """`source` with `fname` rewritten as an in-place function: a first parameter `res` (shape
    `(2,) + shape of the result`), every `return e` of the function itself as `res[0] = e` then
    `return`; `res[1]` is never written. (module source, arguments) or None when the function is
    no plain `def` at module level or its result is no number or array."""
    if not isinstance(expected, (float, int, np.number, np.ndarray)) or isinstance(expected, bool):
        return None
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname), None)
    if fn is None or fn.args.vararg or fn.args.posonlyargs:
        return None
    name = "res"
    while name in source:
        name += "_"

    class Returns(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            return node if node is not fn else self.generic_visit(node)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Lambda(self, node):
            return node

        def visit_Return(self, node):
            if node.value is None:
                return node
            store = ast.Assign(targets=[ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()),
                                                      slice=ast.Constant(value=0), ctx=ast.Store())],
                               value=node.value, lineno=node.lineno)
            return [store, ast.Return(value=None)]

    Returns().visit(fn)
    fn.args.args.insert(0, ast.arg(arg=name))
    res = np.linspace(-0.75, 0.5, 2 * int(np.size(expected))).reshape((2,) + np.shape(expected))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", [res] + list(args)


def check_inplace(subject: Subject) -> str:
    from adjoint_compiler import api, vjp

    variant = subject.inplace() if subject.inplace is not None else None
    if variant is None:
        return "skipped"
    source, args, exact = variant
    import fuzzgen

    mod = fuzzgen.load(source, "inpl")
    try:
        g = getattr(mod, subject.f.__name__)
        after = copy_args(args)
        if g(*after) is not None:
            raise Wrong("inplace: the variant returns a value")
        before = copy_args(args)
        out, pullback = vjp(g, *args)  # (first: a refusal, of aliased arguments say, comes from here)
        _unchanged(before, args, "inplace vjp")
        values = api._bind(g, tuple(args), {})
        entry = api.compiled(g, tuple(range(len(values))), values, api.vjp_mode(g))
        written = [i for i in entry.outputs if isinstance(args[i], (np.ndarray, list))]
        changed = [i for i, (a, b) in enumerate(zip(after, args)) if not _equal(a, b)]
        if exact is not None and not set(written) <= set(exact):
            raise Wrong(f"inplace: the outputs are arguments {written}, the program writes into {list(exact)} only")
        if not set(changed) <= set(written):
            raise Wrong(f"inplace: the call changes arguments {changed}, vjp's outputs are {written}")
        outs = [out] if len(written) == 1 else list(out) if written else []
        if not written and out is not None:
            raise Wrong(f"inplace: out {out!r} for a function that writes into no argument")
        for i, o in zip(written, outs):
            if not _equal(o, after[i]) and not close(o, after[i], 1e-9 * subject.scale):
                raise Wrong(f"inplace: out for argument {i} is {o!r}, the call leaves {after[i]!r}")
        cts = [_cotangent(subject, after[i], 10 + i) for i in written]
        ct = cts[0] if len(written) == 1 else tuple(cts)
        grads = _twice(pullback, ct, out, "inplace")
        _unchanged(before, args, "the inplace pullback")
        if not isinstance(grads, tuple) or len(grads) != len(args):
            raise Wrong(f"inplace: expected a tuple of {len(args)} gradients, got {grads!r}")

        def phi(a):
            b = copy_args(a)
            g(*b)
            return sum(inner(c, b[i]) for c, i in zip(cts, written))
        inner_subject = dataclasses.replace(subject, args=args, _fds={})
        # `res` and one of the positions (in turn by seed): the other modes check them all
        for k in (0, 1 + subject.wrt[subject.seed % len(subject.wrt)]):
            _typed_like(grads[k], args[k], f"inplace: gradient {k}")
            _against_fd(inner_subject, grads[k], k, "inplace",
                        fd=lambda eps, k=k: central(phi, args, k, eps))
    finally:
        fuzzgen.unload(mod)
    return "pass"


def _second_difference(subject: Subject, k: int, v, h=1e-4):
    """(d/dx) (d/dv) f at the arguments by central differences of f alone (independent of any
    gradient): entry j is [f(+e_j +v) - f(+e_j -v) - f(-e_j +v) + f(-e_j -v)] / 4h^2."""
    x = subject.args[k]
    out = np.zeros(x.shape)
    for j in np.ndindex(x.shape):
        total = 0.0
        for sj, sv in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            a = copy_args(subject.args)
            a[k] = x + sv * h * v
            a[k][j] += sj * h
            total += sj * sv * float(subject.f(*a))
        out[j] = total / (4 * h * h)
    return out


def check_second(subject: Subject) -> str:
    """The Hessian-vector product (forward over reverse) and the pullback of the gradient (reverse
    over reverse) along a random direction, against second differences of f, for each real array
    argument checked. Asked for by the cases whose second derivative is the point (`second_order`)."""
    from adjoint_compiler import grad, hvp, vjp

    if not subject.scalar:
        return "skipped"
    checked = [k for k in subject.wrt if isinstance(subject.args[k], np.ndarray)
               and subject.args[k].dtype.kind == "f" and subject.args[k].size <= 8]
    if not checked:
        return "skipped"
    rng = np.random.default_rng(subject.seed + 17)
    for k in checked:
        v = rng.standard_normal(subject.args[k].shape)
        want = _second_difference(subject, k, v)
        scale = max(1.0, float(np.abs(want).max(initial=0)))
        before = copy_args(subject.args)
        forward = hvp(subject.f, wrt=k)(*subject.args, v)
        _, pullback = vjp(grad(subject.f, wrt=k), *subject.args)
        reverse = pullback(v)[k]
        _unchanged(before, subject.args, "second")
        for how, got in (("hvp (forward over reverse)", forward), ("vjp of grad (reverse over reverse)", reverse)):
            got = np.asarray(got, dtype=float)
            if got.shape != want.shape or not np.all(np.abs(got - want) <= 1e-4 * scale):
                raise Wrong(f"second: {how} along v of argument {k}: {got!r}, second differences {want!r}")
    return "pass"


CHECKS = {"grad": check_grad, "vjp": check_vjp, "twice": check_twice, "methods": check_methods,
          "dumps": check_dumps, "inplace": check_inplace,
          "second": check_second}


def finish(outcome, subject: Subject, modes=None):
    """Run every mode but `joint` (the caller's own checks, already in `outcome`) on the subject;
    record each mode's kind in `outcome.modes`; a failing mode turns a passing outcome into
    `<mode>_<kind>` with its detail."""
    modes = MODES if modes is None else modes
    outcome.modes = {"joint": kind_of(outcome.status)} if "joint" in modes else {}
    for mode in modes:
        if mode == "joint":
            continue
        kind, detail = run(mode, subject)
        outcome.modes[mode] = kind
        if kind in ("wrong", "crash") and outcome.ok:
            outcome.status, outcome.detail = f"{mode}_{kind}", detail
    return outcome


def kind_of(status: str) -> str:
    """A fuzzgen / families status as pass, refused, wrong or crash."""
    if status in ("pass", "skipped"):
        return status
    if status in ("expected_error", "rejected", "refused"):
        return "refused"
    if status in ("internal_error", "crash", "harness_error", "generator_error") or status.endswith("_crash"):
        return "crash"
    return "wrong"

"""Public entry points: grad, value_and_grad, vjp, differentiable, adjoint_source.

A gradient is compiled once per (function, wrt, argument kinds, shape of output) and cached;
later calls run the cached generated function while its guard holds (guard.py: every global,
closure cell, attribute, default, inlined function's code and the rule table it baked in is still
the same object), and compile it again when not. Returned gradients never alias the inputs or each
other, and computing one never writes into the caller's arrays.

Checked at each call: complex arguments are refused (ArgumentError); when the function writes
into an argument, that argument must share no memory with another argument or a global array the
code reads (MutationError); a pullback's cotangent must have the output's structure and shapes
(ArgumentError). Our own gradient functions and pullbacks cannot be differentiated (SourceError:
higher order is not supported yet).
"""
from __future__ import annotations

import functools
import inspect
import numbers
import threading

import numpy as np

from . import diskcache, frontend, guard, registry
from . import runtime as rt
from .buffer import Buffer
from .errors import ArgumentError, ArgumentIndexError, MutationError
from .frontend import SourceError, _unwrap
from .pipeline import compile_gradient

_CACHE: dict = {}
_LOCKS: dict = {}
_CACHE_LOCK = threading.Lock()


_RANKS = tuple(f"r{n}" for n in range(33))
_FLOAT_RANKS = tuple(f"f{n}" for n in range(33))


def _kind(value) -> str:
    """What the compiled code may assume about an argument: 'seq', 'f<ndim>' (a real float or an
    array of real floats), 'r<ndim>' (another number or array) or 'num'."""
    kind = type(value)
    if kind is np.ndarray:
        return (_FLOAT_RANKS if value.dtype.kind == "f" else _RANKS)[value.ndim]
    if kind is float:
        return "f0"
    if kind is int:
        return "r0"
    if isinstance(value, (tuple, list)):
        return "seq"
    if isinstance(value, np.ndarray):
        return f"{'f' if value.dtype.kind == 'f' else 'r'}{value.ndim}"
    if isinstance(value, np.floating):
        return "f0"
    if isinstance(value, (numbers.Number, np.generic)):
        return "r0"
    return "num"


def _check_numeric(value, what: str) -> None:
    if isinstance(value, (tuple, list)):
        for v in value:
            _check_numeric(v, what)
        return
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise ArgumentError(f"{what} must be numeric to be differentiated, got an array of dtype {value.dtype}")
        return
    if isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (bool, np.bool_)):
        return
    raise ArgumentError(f"{what} must be a number, an array or a tuple/list of them to be differentiated, "
                        f"got {type(value).__name__}")


def _is_complex(value) -> bool:
    """Whether `value` is, or holds (in tuples, lists, dicts, Buffers), a complex number or array."""
    kind = type(value)
    if kind is np.ndarray:
        return value.dtype.kind == "c"
    if kind is float or kind is int:
        return False
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    if isinstance(value, Buffer):
        return value.data.dtype.kind == "c"
    if isinstance(value, (tuple, list)):
        return any(_is_complex(v) for v in value)
    if isinstance(value, dict):
        return any(_is_complex(v) for v in value.values())
    return False


def _check_real(func, values) -> None:
    """Refuse complex arguments: their values flow into intermediates the rules treat as real."""
    for i, v in enumerate(values):
        if isinstance(v, (np.matrix, np.ma.MaskedArray)):
            names = _param_names(func)
            name = names[i] if i < len(names) else str(i)
            raise ArgumentError(f"{_name(func)}: argument `{name}` is a {type(v).__name__}, whose operators "
                                "differ from an ndarray's (`*` of np.matrix is a product of matrices, a masked array "
                                "skips masked slots); pass a plain array (`np.asarray(...)`)")
        if type(v) is not float and _is_complex(v):
            names = _param_names(func)
            name = names[i] if i < len(names) else str(i)
            raise ArgumentError(f"{_name(func)}: argument `{name}` is complex; complex numbers are not "
                                "supported yet (pass real arrays, e.g. the real and imaginary parts separately)")


def _name(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


def _param_names(func) -> list:
    try:
        return list(inspect.signature(_unwrap(func)).parameters)
    except (TypeError, ValueError):
        return []


def _arrays_in(value, out: list) -> list:
    """Every ndarray in `value` (itself, a Buffer's data, inside tuples, lists and dicts)."""
    if isinstance(value, np.ndarray):
        out.append(value)
    elif isinstance(value, Buffer):
        out.append(value.data)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _arrays_in(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _arrays_in(v, out)
    return out


def _check_aliasing(func, entry, values) -> None:
    """Refuse a call where an argument the function writes into shares memory with another
    argument, with itself (two views inside one tuple), or with a global array the code reads:
    the compiled code copies a written argument on entry, so it would not see the writes through
    the other name. Nothing is checked when the function writes into no argument."""
    def refuse(i, other: str):
        names = _param_names(func)
        raise MutationError(
            f"{_name(func)}: argument `{names[i] if i < len(names) else i}`, which the function writes into, "
            f"shares memory with {other}; differentiating a write through aliased arguments is not supported, "
            "pass separate arrays (e.g. a `.copy()`)")

    for i in entry.written:
        if i >= len(values):
            continue
        mine = _arrays_in(values[i], [])
        if not mine:
            continue
        for k, a in enumerate(mine):
            for b in mine[k + 1:]:
                if np.may_share_memory(a, b):
                    refuse(i, "another array inside the same argument")
        for j, v in enumerate(values):
            if j != i and any(np.may_share_memory(a, b) for b in _arrays_in(v, []) for a in mine):
                names = _param_names(func)
                refuse(i, f"argument `{names[j] if j < len(names) else j}`")
        for gname, g in entry.function.__globals__.items():
            if isinstance(g, (np.ndarray, Buffer, tuple, list)) and \
                    any(np.may_share_memory(a, b) for b in _arrays_in(g, []) for a in mine):
                refuse(i, f"the global `{gname}` the function reads")


def _normalize_wrt(wrt):
    if isinstance(wrt, (int, np.integer)) and not isinstance(wrt, bool):
        return (int(wrt),), False
    if isinstance(wrt, (tuple, list)) and wrt and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                                                      for i in wrt):
        return tuple(int(i) for i in wrt), True
    raise ArgumentError(f"wrt must be an int or a non-empty tuple of ints, got {wrt!r}")


_POSITIONAL: dict = {}  # function -> its parameter count, when all are plain positional parameters


def _bind(func, args, kwargs):
    """The function's arguments in parameter order, defaults applied (a list, or the positional
    tuple itself when it already is that)."""
    if not kwargs and _POSITIONAL.get(func) == len(args):
        return args
    target = _unwrap(func)
    frontend.check_first_order(target)
    if not callable(target):
        raise ArgumentError(f"{target!r} is not callable")
    try:
        sig = inspect.signature(target)
        if all(p.kind is p.POSITIONAL_OR_KEYWORD for p in sig.parameters.values()):
            _POSITIONAL[func] = len(sig.parameters)
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise ArgumentError(f"{getattr(target, '__name__', target)}: {exc}") from None
    except ValueError:
        raise SourceError(f"cannot differentiate {target!r}: it has no Python signature or source") from None
    bound.apply_defaults()
    return [bound.arguments[p] for p in sig.parameters]


def compiled(func, wrt: tuple, values: list, mode: str):
    """The cached compiled gradient for these argument kinds, compiling it once (thread-safe)."""
    key = (func, wrt, tuple([(_FLOAT_RANKS if v.dtype.kind == "f" else _RANKS)[v.ndim] if type(v) is np.ndarray
                             else _kind(v) for v in values]), mode)
    entry = _CACHE.get(key)
    if entry is not None and entry.guard.holds():
        return entry
    n = len(values)
    for i in wrt:
        if not -n <= i < n:
            raise ArgumentIndexError(f"wrt={i} is out of range: {getattr(func, '__name__', func)} takes {n} arguments")
    if any(i < 0 for i in wrt):
        return compiled(func, tuple(i % n for i in wrt), values, mode)
    with _CACHE_LOCK:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        entry = _CACHE.get(key)
        if entry is None or not entry.guard.holds():
            _CACHE.pop(key, None)
            entry = _build(_unwrap(func), wrt, key[2], mode)
            _CACHE[key] = entry
    return entry


def _build(target, wrt: tuple, kinds: tuple, mode: str):
    """A Compiled with its guard: from the disk cache if a valid entry is there, else compiled
    (recording every function read and name looked up) and stored."""
    generation = registry.GENERATION  # read first: a registration during compilation is seen next call
    entry = diskcache.load(target, wrt, kinds, mode, generation)
    if entry is None:
        with frontend.recording() as reading:
            entry = compile_gradient(target, wrt, kinds, mode)
        entry.guard = guard.build(target, reading, generation)
        diskcache.store(target, wrt, kinds, mode, entry)
    return entry


def _locate(exc, entry) -> None:
    """Give an exception raised inside generated code a note naming the user's file and line of
    the statement responsible (the generated frames alone would only show generated lines)."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == entry.filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    loc = entry.line_locs.get(line) if line else None
    if loc is not None:
        note = (f"while running the generated gradient code for this line:\n"
                f'  File "{loc.file}", line {loc.line}\n    {loc.text}')
        if hasattr(exc, "add_note"):
            exc.add_note(note)
        elif exc.args and isinstance(exc.args[0], str):  # Python 3.10: no notes
            exc.args = (f"{exc.args[0]}\n{note}",) + exc.args[1:]


def _deliver(raw, picked: list, values: list) -> list:
    """The gradients handed to the user (`rt.gradient`, then `_owned`); a fresh float array of
    its argument's shape and dtype, or a float for a float, passes through untouched."""
    out = []
    for g, x in zip(raw, picked):
        if type(x) is float:
            out.append(0.0 if g is None else float(g))
            continue
        if type(x) is np.ndarray and type(g) is np.ndarray and g.base is None and g.dtype is x.dtype \
                and g.shape == x.shape and x.dtype.kind == "f" and g.flags.writeable and _fresh(g, out):
            for v in values:  # not an input (nor inside one)
                if v is g or (type(v) is not np.ndarray and type(v) is not float and not _fresh(g, _arrays(v))):
                    break
            else:
                out.append(g)
                continue
        return _owned(list(map(rt.gradient, raw, picked)), values)
    return out


def _owned(grads: list, inputs: list) -> list:
    """Copy any gradient array that shares memory with an input or an earlier gradient, or that is
    read-only (a broadcast view)."""
    out, seen = [], []
    flat_inputs = [a for v in inputs for a in _arrays(v)]
    for g in grads:
        out.append(_own(g, flat_inputs, seen))
    return out


def _fresh(g, arrays: list) -> bool:
    for a in arrays:
        if g is a:
            return False
    return True


def _arrays(v):
    if isinstance(v, np.ndarray):
        return [v]
    if isinstance(v, (tuple, list)):
        return [a for x in v for a in _arrays(x)]
    return []


def _own(g, inputs, seen):
    if isinstance(g, (tuple, list)):
        return type(g)(_own(x, inputs, seen) for x in g)
    if isinstance(g, np.ndarray):
        fresh = g.flags.owndata and g.flags.writeable and all(g is not a for a in inputs + seen)
        if not fresh and (not g.flags.writeable or any(np.may_share_memory(g, a) for a in inputs + seen)):
            g = g.copy()
        seen.append(g)
    return g


def _through_partial(func, wrt: tuple, args, kwargs):
    """A `functools.partial` as the function it wraps: `(target, wrt, args, kwargs)` where the
    partial's bound arguments are ordinary arguments of `target` (read at each call, never baked
    in) and each `wrt` position, counted among the partial's own parameters, is moved to the
    position of that parameter in `target`."""
    if not isinstance(func, functools.partial):
        return func, wrt, args, kwargs
    target = func.func
    try:
        mine = list(inspect.signature(func).parameters)
        theirs = list(inspect.signature(_unwrap(target)).parameters)
    except (TypeError, ValueError):
        raise SourceError(f"cannot differentiate {func!r}: the signature of the function it wraps cannot be "
                          "read") from None
    n = len(mine)
    moved = []
    for i in wrt:
        if not -n <= i < n:
            raise ArgumentIndexError(f"wrt={i} is out of range: {func!r} takes {n} arguments")
        if mine[i] not in theirs:
            raise SourceError(f"cannot differentiate {func!r} with respect to its parameter `{mine[i]}`")
        moved.append(theirs.index(mine[i]))
    return target, tuple(moved), tuple(func.args) + tuple(args), {**func.keywords, **kwargs}


def _run(func, wrt_t, as_tuple, args, kwargs, mode):
    """Run the compiled 'joint' (value and gradient) or 'grad' (gradient only) function."""
    func, wrt_t, args, kwargs = _through_partial(func, wrt_t, args, kwargs)
    values = _bind(func, args, kwargs)
    for v in values:  # complex arguments are refused before anything is compiled for them
        if type(v) is not float and type(v) is not int and (type(v) is not np.ndarray or v.dtype.kind == "c"):
            _check_real(func, values)
            break
    entry = compiled(func, wrt_t, values, mode)
    n = len(values)
    picked = []
    for i in wrt_t:
        v = values[i % n]
        picked.append(v)
        if not (type(v) is float or (type(v) is np.ndarray and v.dtype.kind in "fc")):
            _check_numeric(v, f"argument {i} of {getattr(func, '__name__', func)}")
    if entry.written:
        _check_aliasing(func, entry, values)
    try:
        if mode == "joint":
            value, raw = entry.function(*values)
        else:
            value, raw = None, entry.function(*values)
    except Exception as exc:
        _locate(exc, entry)
        raise
    grads = _deliver(raw, picked, values)
    return value, (tuple(grads) if as_tuple else grads[0])


def grad(func, wrt=0):
    """The gradient of scalar-valued `func` w.r.t. argument `wrt` (an int or a tuple of ints)."""
    wrt_t, as_tuple = _normalize_wrt(wrt)

    def gradient(*args, **kwargs):
        return _run(func, wrt_t, as_tuple, args, kwargs, "grad")[1]
    return _named_after(gradient, func)


def value_and_grad(func, wrt=0):
    """Like `grad`, returning `(func(*args), gradient)` from one forward pass."""
    wrt_t, as_tuple = _normalize_wrt(wrt)

    def value_and_gradient(*args, **kwargs):
        return _run(func, wrt_t, as_tuple, args, kwargs, "joint")
    return _named_after(value_and_gradient, func)


def _named_after(wrapper, func):
    """`wrapper` with `func`'s name and docstring, but not marked as wrapping it (`__wrapped__`
    would make the compiler differentiate `func` when given the gradient function itself)."""
    functools.update_wrapper(wrapper, _unwrap(func))
    del wrapper.__wrapped__
    frontend.DERIVATIVES.add(wrapper)
    return wrapper


def vjp(func, *args):
    """`(out, pullback)`: `pullback(out_bar)` returns one gradient per positional argument."""
    func, wrt, args, kwargs = _through_partial(func, tuple(range(len(args))), args, {})
    values = _bind(func, args, kwargs)
    for i in wrt:
        _check_numeric(values[i], f"argument {i} of {getattr(func, '__name__', func)}")
    _check_real(func, values)
    entry = compiled(func, wrt, values, "split")
    if entry.written:
        _check_aliasing(func, entry, values)
    try:
        out, saved = entry.function(*values)
    except Exception as exc:
        _locate(exc, entry)
        raise
    expected = _cotangent_spec(out)

    def pullback(out_bar):
        _check_cotangent(func, expected, out_bar, "the cotangent")
        try:
            raw = entry.pullback(saved, out_bar)
        except Exception as exc:
            _locate(exc, entry)
            raise
        grads = [rt.gradient(g, values[i]) for g, i in zip(raw, wrt)]
        return tuple(_owned(grads, list(values) + [out_bar]))
    frontend.DERIVATIVES.add(pullback)
    return out, pullback


def _cotangent_spec(out):
    """What a cotangent of `out` must look like: a tuple of specs for a tuple or list output,
    else the output's shape (None for a value that is not a number or an array)."""
    if isinstance(out, (tuple, list)):
        return tuple(_cotangent_spec(o) for o in out)
    if isinstance(out, Buffer):
        out = out.data
    if isinstance(out, (np.ndarray, numbers.Number, np.generic)) and not isinstance(out, (str, bytes)):
        return ("shape", np.shape(out))
    return None


def _check_cotangent(func, spec, out_bar, what: str) -> None:
    """Raise ArgumentError unless `out_bar` has the structure and shape of the output (`spec`)
    and holds real numbers."""
    if spec is None:
        return
    if isinstance(spec, tuple) and (not spec or spec[0] != "shape"):
        if not isinstance(out_bar, (tuple, list)) or len(out_bar) != len(spec):
            got = f"a {type(out_bar).__name__} of length {len(out_bar)}" if isinstance(out_bar, (tuple, list)) \
                else f"a {type(out_bar).__name__}"
            raise ArgumentError(f"the pullback of {_name(func)}: {what} must be a tuple of {len(spec)} cotangents "
                                f"(the function returns a tuple of {len(spec)}), got {got}")
        for k, (s, b) in enumerate(zip(spec, out_bar)):
            _check_cotangent(func, s, b, f"{what}[{k}]")
        return
    shape = spec[1]
    try:
        value = np.asarray(out_bar.data if isinstance(out_bar, Buffer) else out_bar)
    except Exception:  # noqa: BLE001 -- ragged nesting and the like: not a cotangent
        value = None
    if value is None or value.dtype.kind not in "fiu":
        kind = "complex" if value is not None and value.dtype.kind == "c" else \
            (f"dtype {value.dtype}" if value is not None else type(out_bar).__name__)
        raise ArgumentError(f"the pullback of {_name(func)}: {what} must hold real numbers (an array of shape "
                            f"{shape} or a float), got {kind}")
    if value.shape != shape:
        raise ArgumentError(f"the pullback of {_name(func)}: {what} must have the shape of the output, "
                            f"{shape}, got shape {value.shape}")


def adjoint_source(func, wrt=0, args=None) -> str:
    """The generated Python source of the gradient of `func` (forward and backward): the code
    `grad(func, wrt)` runs.

    Without `args` the code makes no assumption about the arguments (this is what
    `python -m adjoint_compiler show` prints); with example `args` it is the code that runs for
    arguments of those kinds (scalars, arrays of each ndim), which may skip shape bookkeeping."""
    wrt_t, _ = _normalize_wrt(wrt)
    target = _unwrap(func)
    frontend.check_first_order(target)
    values = [None] * len(inspect.signature(target).parameters) if args is None else _bind(func, args, {})
    return compiled(func, wrt_t, values, "grad").source


def differentiable(func=None, *, wrt=0):
    """Mark a function as differentiable; calling it is unchanged. Adds `.grad(wrt)`,
    `.value_and_grad(wrt)` and `.adjoint_source(wrt)`. Usable as `@differentiable(wrt=(0, 1))`."""
    if func is None:
        return lambda f: differentiable(f, wrt=wrt)
    _normalize_wrt(wrt)
    default = wrt

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    wrapper.grad = lambda wrt=default: grad(func, wrt)
    wrapper.value_and_grad = lambda wrt=default: value_and_grad(func, wrt)
    wrapper.adjoint_source = lambda wrt=default, args=None: adjoint_source(func, wrt, args)
    return wrapper


def _own_wrapper_code():
    """The code object of `differentiable`'s wrapper: the one wrapper the compiler sees through."""
    probe = differentiable(lambda: None)
    return probe.__code__


frontend.OWN_WRAPPER_CODE.append(_own_wrapper_code())

"""Public entry points: grad, value_and_grad, vjp, differentiable, adjoint_source.

A gradient is compiled once per (function, wrt, argument kinds, shape of output) and cached;
later calls run the cached generated function. Returned gradients never alias the inputs or each
other, and computing one never writes into the caller's arrays.
"""
from __future__ import annotations

import functools
import inspect
import numbers
import threading

import numpy as np

from . import diskcache
from . import runtime as rt
from .frontend import SourceError, _unwrap
from .pipeline import compile_gradient

_CACHE: dict = {}
_LOCKS: dict = {}
_CACHE_LOCK = threading.Lock()


_RANKS = tuple(f"r{n}" for n in range(33))


def _kind(value) -> str:
    """What the compiled code may assume about an argument: 'seq', 'r<ndim>' or 'num'."""
    kind = type(value)
    if kind is np.ndarray:
        return _RANKS[value.ndim]
    if kind is float or kind is int:
        return "r0"
    if isinstance(value, (tuple, list)):
        return "seq"
    if isinstance(value, np.ndarray):
        return f"r{value.ndim}"
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
            raise TypeError(f"{what} must be numeric to be differentiated, got an array of dtype {value.dtype}")
        return
    if isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (bool, np.bool_)):
        return
    raise TypeError(f"{what} must be a number, an array or a tuple/list of them to be differentiated, "
                    f"got {type(value).__name__}")


def _normalize_wrt(wrt):
    if isinstance(wrt, (int, np.integer)) and not isinstance(wrt, bool):
        return (int(wrt),), False
    if isinstance(wrt, (tuple, list)) and wrt and all(isinstance(i, int) and not isinstance(i, bool)
                                                      for i in wrt):
        return tuple(wrt), True
    raise TypeError(f"wrt must be an int or a non-empty tuple of ints, got {wrt!r}")


_POSITIONAL: dict = {}  # function -> its parameter count, when all are plain positional parameters


def _bind(func, args, kwargs):
    """The function's arguments in parameter order, defaults applied (a list, or the positional
    tuple itself when it already is that)."""
    if not kwargs and _POSITIONAL.get(func) == len(args):
        return args
    target = _unwrap(func)
    if not callable(target):
        raise TypeError(f"{target!r} is not callable")
    try:
        sig = inspect.signature(target)
        if all(p.kind is p.POSITIONAL_OR_KEYWORD for p in sig.parameters.values()):
            _POSITIONAL[func] = len(sig.parameters)
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{getattr(target, '__name__', target)}: {exc}") from None
    except ValueError:
        raise SourceError(f"cannot differentiate {target!r}: it has no Python signature or source") from None
    bound.apply_defaults()
    return [bound.arguments[p] for p in sig.parameters]


def compiled(func, wrt: tuple, values: list, mode: str):
    """The cached compiled gradient for these argument kinds, compiling it once (thread-safe)."""
    key = (func, wrt, tuple([_RANKS[v.ndim] if type(v) is np.ndarray else _kind(v) for v in values]), mode)
    entry = _CACHE.get(key)
    if entry is not None:
        return entry
    n = len(values)
    for i in wrt:
        if not -n <= i < n:
            raise IndexError(f"wrt={i} is out of range: {getattr(func, '__name__', func)} takes {n} arguments")
    if any(i < 0 for i in wrt):
        return compiled(func, tuple(i % n for i in wrt), values, mode)
    with _CACHE_LOCK:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        entry = _CACHE.get(key)
        if entry is None:
            target = _unwrap(func)
            entry = diskcache.load(target, wrt, key[2], mode)
            if entry is None:
                entry = compile_gradient(target, wrt, key[2], mode)
                diskcache.store(target, wrt, key[2], mode, entry)
            _CACHE[key] = entry
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


def _run(func, wrt_t, as_tuple, args, kwargs, mode):
    """Run the compiled 'joint' (value and gradient) or 'grad' (gradient only) function."""
    values = _bind(func, args, kwargs)
    entry = compiled(func, wrt_t, values, mode)
    n = len(values)
    picked = []
    for i in wrt_t:
        v = values[i % n]
        picked.append(v)
        if not (type(v) is float or (type(v) is np.ndarray and v.dtype.kind in "fc")):
            _check_numeric(v, f"argument {i} of {getattr(func, '__name__', func)}")
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
    return wrapper


def vjp(func, *args):
    """`(out, pullback)`: `pullback(out_bar)` returns one gradient per positional argument."""
    values = _bind(func, args, {})
    wrt = tuple(range(len(args)))
    for i in wrt:
        _check_numeric(values[i], f"argument {i} of {getattr(func, '__name__', func)}")
    entry = compiled(func, wrt, values, "split")
    try:
        out, saved = entry.function(*values)
    except Exception as exc:
        _locate(exc, entry)
        raise

    def pullback(out_bar):
        try:
            raw = entry.pullback(saved, out_bar)
        except Exception as exc:
            _locate(exc, entry)
            raise
        grads = [rt.gradient(g, values[i]) for g, i in zip(raw, wrt)]
        return tuple(_owned(grads, list(values) + [out_bar]))
    return out, pullback


def adjoint_source(func, wrt=0, args=None) -> str:
    """The generated Python source of the gradient of `func` (forward and backward): the code
    `grad(func, wrt)` runs.

    Without `args` the code makes no assumption about the arguments (this is what
    `python -m adjoint_compiler show` prints); with example `args` it is the code that runs for
    arguments of those kinds (scalars, arrays of each ndim), which may skip shape bookkeeping."""
    wrt_t, _ = _normalize_wrt(wrt)
    target = _unwrap(func)
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

"""Public entry points: grad, value_and_grad, vjp, differentiable, adjoint_source.

A gradient is compiled once per (function, wrt, argument kinds, shape of output) and cached;
later calls run the cached generated function while its guard holds (guard.py: every global,
closure cell, attribute, default, inlined function's code and the rule table it baked in is still
the same object), and compile it again when not. Returned gradients never alias the inputs or each
other, and computing one never writes into the caller's arrays.

Checked at each call: complex values inside container arguments are refused (ArgumentError; a
complex number or array passed itself is differentiated under the convention of dtypes.py); when the function writes
into an argument, that argument must share no memory with another argument or a global array the
code reads (MutationError); a pullback's cotangent must have the output's structure, shapes and
real numbers (ArgumentError naming the function, the output, expected and received). Our own
gradient functions and pullbacks cannot be differentiated (SourceError: higher order is not
supported yet).

A gradient has its argument's type (a NumPy scalar's is a NumPy scalar of its float type); a
structured argument (dict, tuple, list, NamedTuple, dataclass, object of a user's class; trees.py)
gets a gradient of its structure, with None for the leaves that are not numbers or arrays. A bound
method `obj.f` is differentiated as `f` with `obj` its first argument, never differentiated. `vjp`
of a function that returns nothing takes the arguments it writes into as its outputs
('split_written': `out` is their values after the call, the pullback takes their cotangents);
the caller's arrays are never written. `out` never shares memory with what a pullback restores.
"""
from __future__ import annotations

import functools
import inspect
import numbers
import threading
import types

import gast
import numpy as np

from . import diskcache, frontend, guard, mutation, nesting, registry, shapes, trees
from . import runtime as rt
from .buffer import Buffer
from .errors import ArgumentError, ArgumentIndexError, MutationError
from .frontend import SourceError, _unwrap
from .pipeline import compile_gradient

_CACHE: dict = {}
# (func, wrt, exact signature, mode) -> the entry `_CACHE` gives for those arguments: the whole of
# what their kinds and pattern of axis lengths are computed from, looked up first (bounded)
_EXACT: dict = {}
_EXACT_LIMIT = 4096
# One lock for every compilation, reentrant for the nested ones (grad of grad). Compiling is pure
# Python under the GIL, so serializing it costs nothing; and CPython before 3.12 keeps the AST
# converter's recursion depth per interpreter, so two threads building ASTs at once can fail with
# "AST constructor recursion depth mismatch".
_COMPILE_LOCK = threading.RLock()


_RANKS = tuple(f"r{n}" for n in range(33))
_FLOAT_RANKS = tuple(f"f{n}" for n in range(33))
_COMPLEX_RANKS = tuple(f"c{n}" for n in range(33))


def _array_kind(value) -> str:
    """'f<ndim>', 'c<ndim>' or 'r<ndim>'; a 0-d array's letter is a capital ('F0'): unlike a
    number, it can be updated in place (`a += 1` changes every name bound to it)."""
    kind = value.dtype.kind
    name = (_FLOAT_RANKS if kind == "f" else _COMPLEX_RANKS if kind == "c" else _RANKS)[value.ndim]
    return name.upper() if value.ndim == 0 else name


def _kind(value) -> str:
    """What the compiled code may assume about an argument: 'seq', 'f<ndim>' (a real float or an
    array of real floats), 'c<ndim>' (a complex number or array), 'r<ndim>' (another number or
    array) or 'num'."""
    kind = type(value)
    if kind is np.ndarray:
        return _array_kind(value)
    if kind is float:
        return "f0"
    if kind is int:
        return "r0"
    if kind is dict or (isinstance(value, tuple) and trees.is_namedtuple(value)):
        return _tree_kind(value, 0)
    if isinstance(value, (tuple, list)):
        return _seq_kind(value, 0)
    if isinstance(value, np.ndarray):
        return _array_kind(value)
    if isinstance(value, np.floating):
        return "f0"
    if isinstance(value, (complex, np.complexfloating)):
        return "c0"
    if isinstance(value, (numbers.Number, np.generic)):
        return "r0"
    if isinstance(value, type):
        return ("static", value)  # a class (the `cls` of a classmethod): baked in
    if trees.record_fields(value) is not None:
        return _tree_kind(value, 0)
    return "num"


class _Walk:
    """The state of one walk over an argument's structure: the objects on the current path (a
    cycle is cut: opaque where it repeats) and a budget of nodes (a huge or shared graph becomes
    opaque past it, so a call never spends more than that on kinds)."""

    __slots__ = ("budget", "path")

    def __init__(self):
        self.budget = 20000
        self.path: set = set()


def _seq_kind(value, depth: int, walk: _Walk | None = None):
    """'seq', or for a list or tuple whose items are all structures of one kind (a list of layers)
    `("tree", "seq", type, (), (item kind,))`: an item read by any index has that kind."""
    walk = walk or _Walk()
    if not value or depth > trees.MAX_DEPTH or trees.fields_of(value[0]) is None:
        return "seq"
    if any(trees.fields_of(v) is None for v in value[1:]):
        return "seq"
    kinds = [_tree_kind(v, depth + 1, walk) for v in value]
    first = kinds[0]
    if "num" in kinds:
        return "seq"
    if all(k == first for k in kinds):
        return ("tree", "seq", type(value), (), (first,))
    if len(value) <= trees.MAX_MIXED:
        # structures of several kinds (a list of layers of different classes): each item's kind,
        # read at constant positions and by loops, which are unrolled
        return ("tree", "mixed", type(value), (), tuple(kinds))
    return "seq"


def _tree_kind(value, depth: int, walk: _Walk | None = None):
    """The kind of a structure (trees.py): its tag, class, keys and the kinds of its items; a
    function, class or module inside it is baked in; deeper than trees.MAX_DEPTH, on a cycle or
    past the walk's budget it is opaque ('num')."""
    walk = walk or _Walk()
    walk.budget -= 1
    if depth > trees.MAX_DEPTH or walk.budget < 0 or id(value) in walk.path:
        return "num"
    tag, keys = trees.fields_of(value)
    walk.path.add(id(value))
    try:
        kinds = []
        for k in keys:
            v = trees.item(value, k)
            if trees.is_static(v):
                kinds.append(("static", v))
            elif trees.fields_of(v) is not None:
                kinds.append(_tree_kind(v, depth + 1, walk))
            elif isinstance(v, (tuple, list)):
                kinds.append(_seq_kind(v, depth + 1, walk))
            else:
                kinds.append(_kind(v))
    finally:
        walk.path.discard(id(value))
    return ("tree", tag, type(value), keys, tuple(kinds))


_NAMED_RESULT_FIELDS = frozenset(("logabsdet", "sign", "eigenvalues", "eigenvectors", "U", "S", "Vh", "Q", "R"))


def _array_attribute(name: str) -> bool:
    """Whether `x.name` on a value of unknown type is compiled as an array attribute with a rule of
    its own (`.T`, `.shape`, `.size`): not a field read."""
    from .ir import Attr

    return name not in _NAMED_RESULT_FIELDS and registry.lookup(Attr(name)) is not None


def _check_fields(value, what: str, in_sequence: bool, depth: int = 0, seen: set | None = None) -> None:
    """Refuse a record inside a list or tuple with a field named like an ndarray attribute (`size`,
    `T`): read from an item of unknown type, `item.size` would be taken for the array attribute."""
    if seen is None:
        if not _has_array_field(value):  # (the common case: no field of such a name anywhere)
            return
        seen = set()
    if depth > trees.MAX_DEPTH or (id(value), in_sequence) in seen:
        return
    shape = trees.fields_of(value)
    if shape is not None:
        seen.add((id(value), in_sequence))
        for k in shape[1]:
            if in_sequence and shape[0] != "dict" and isinstance(k, str) and _array_attribute(k):
                raise ArgumentError(
                    f"{what} holds, inside a list or tuple, a {type(value).__name__} with a field named `{k}`, "
                    f"the name of an ndarray attribute: the compiler cannot tell `item.{k}` from the array "
                    "attribute there; rename the field, or pass the structure as an argument of its own")
            _check_fields(trees.item(value, k), what, in_sequence, depth + 1, seen)
    elif isinstance(value, (tuple, list)):
        # items of known structure kinds are known when compiling (`_seq_kind`, computed only where
        # an item has a field named like an array attribute: rare)
        unknown = in_sequence or (any(_has_array_field(v) for v in value) and _seq_kind(value, 0) == "seq")
        for v in value:
            _check_fields(v, what, unknown, depth + 1, seen)


def _has_array_field(v, depth: int = 0, seen: set | None = None) -> bool:
    """Whether `v` holds (at any depth) a record with a field named like an array attribute."""
    seen = set() if seen is None else seen
    if depth > trees.MAX_DEPTH or id(v) in seen:
        return False
    shape = trees.fields_of(v)
    if shape is None:
        return isinstance(v, (tuple, list)) and any(_has_array_field(x, depth + 1, seen) for x in v)
    seen.add(id(v))
    if shape[0] != "dict" and any(isinstance(k, str) and _array_attribute(k) for k in shape[1]):
        return True
    return any(_has_array_field(trees.item(v, k), depth + 1, seen) for k in shape[1])


def _check_numeric(value, what: str) -> None:
    if trees.fields_of(value) is not None:  # a structure: any leaf (the ones that are not numbers get None)
        _check_fields(value, what, False)
        return
    if isinstance(value, (tuple, list)):
        if any(trees.fields_of(v) is not None for v in value):
            _check_fields(value, what, False)
            return
        for v in value:
            if not (v is None or isinstance(v, (str, bool, np.bool_))):  # (those leaves get None)
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


def _is_complex(value, depth: int = 0, seen: set | None = None) -> bool:
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
    if depth > trees.MAX_DEPTH:
        return False
    seen = set() if seen is None else seen
    if isinstance(value, (tuple, list)):
        return any(_is_complex(v, depth + 1, seen) for v in value)
    if id(value) in seen:
        return False
    if isinstance(value, dict):
        seen.add(id(value))
        return any(_is_complex(v, depth + 1, seen) for v in value.values())
    if trees.record_fields(value) is not None:
        seen.add(id(value))
        return any(_is_complex(getattr(value, k), depth + 1, seen) for k in trees.record_fields(value))
    return False


def _top_complex(value) -> bool:
    """A complex number or array passed as an argument itself (`grad`, `vjp` accept those)."""
    return isinstance(value, (complex, np.complexfloating)) or \
        (isinstance(value, np.ndarray) and not isinstance(value, (np.matrix, np.ma.MaskedArray))
         and value.dtype.kind == "c")


def _check_real(func, values, allow_complex: bool = False) -> None:
    """Refuse complex arguments (with `allow_complex`, only those inside tuples, lists, dicts and
    Buffers: a complex number or array passed itself is followed by the complex analysis)."""
    for i, v in enumerate(values):
        if isinstance(v, (np.matrix, np.ma.MaskedArray)):
            names = _param_names(func)
            name = names[i] if i < len(names) else str(i)
            raise ArgumentError(f"{_name(func)}: argument `{name}` is a {type(v).__name__}, whose operators "
                                "differ from an ndarray's (`*` of np.matrix is a product of matrices, a masked array "
                                "skips masked slots); pass a plain array (`np.asarray(...)`)")
        if type(v) is not float and _is_complex(v) and not (allow_complex and _top_complex(v)):
            names = _param_names(func)
            name = names[i] if i < len(names) else str(i)
            where = ("inside a container or Buffer; grad, vjp and jvp take complex numbers and arrays passed "
                     "as arguments themselves" if allow_complex else
                     "and a gradient differentiated again (hessian, hvp) does not support complex numbers; grad, "
                     "vjp and jvp do")
            raise ArgumentError(f"{_name(func)}: argument `{name}` is complex {where} (or pass the real and "
                                "imaginary parts separately)")


def _name(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


def _param_names(func) -> list:
    try:
        return list(inspect.signature(_unwrap(func)).parameters)
    except (TypeError, ValueError):
        return []


def _arrays_in(value) -> list:
    """Every ndarray in `value`: itself, a Buffer's data, and those inside tuples, lists, dicts,
    named tuples, dataclasses and the user's objects, at any depth (each container once, so a
    cycle ends). Complete on purpose: the aliasing check of written arguments, the copies `vjp`
    makes and the ownership of gradients rely on seeing every array."""
    out, seen, todo = [], set(), [value]
    while todo:
        v = todo.pop()
        if isinstance(v, np.ndarray):
            out.append(v)
        elif isinstance(v, Buffer):
            out.append(v.data)
        elif id(v) in seen:
            continue
        elif isinstance(v, (tuple, list)):
            seen.add(id(v))
            todo.extend(reversed(v))
        else:
            shape = trees.fields_of(v)
            if shape is not None:
                seen.add(id(v))
                todo.extend(trees.item(v, k) for k in reversed(shape[1]))
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
        mine = _arrays_in(values[i])
        if not mine:
            continue
        for k, a in enumerate(mine):
            for b in mine[k + 1:]:
                if np.may_share_memory(a, b):
                    refuse(i, "another array inside the same argument")
        for j, v in enumerate(values):
            if j != i and any(np.may_share_memory(a, b) for b in _arrays_in(v) for a in mine):
                names = _param_names(func)
                refuse(i, f"argument `{names[j] if j < len(names) else j}`")
        for gname, g in entry.function.__globals__.items():
            if isinstance(g, (np.ndarray, Buffer, tuple, list)) and \
                    any(np.may_share_memory(a, b) for b in _arrays_in(g) for a in mine):
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
    if not hasattr(target, "__adjoint_spec__"):  # a gradient made by `grad` differentiates again (nesting)
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


def _exact(values) -> tuple | None:
    """The dtype and shape of each array and the type of each float or int, for arguments of
    those types alone (else None): arguments of one exact signature have one kind and one pattern
    of axis lengths, so they get one compiled entry."""
    out = []
    for v in values:
        kind = type(v)
        if kind is np.ndarray:
            out.append((v.dtype, v.shape))
        elif kind is float or kind is int:
            out.append(kind)
        else:
            return None
    return tuple(out)


def compiled(func, wrt: tuple, values: list, mode: str, exact=...):
    """The cached compiled gradient for these argument kinds, compiling it once (thread-safe).
    `exact` is `_exact(values)` where the caller has it. A call whose arguments take a default
    the function changes in place is refused (`_refuse_changed_default`)."""
    if exact is ...:
        exact = _exact(values)
    if exact is not None:
        entry = _EXACT.get((func, wrt, exact, mode))
        if entry is not None and entry.guard.holds():
            if entry.changed_defaults:
                _refuse_changed_default(func, entry, values)
            return entry
    entry = _kinds_entry(func, wrt, values, mode)
    if exact is not None:
        if len(_EXACT) >= _EXACT_LIMIT:
            _EXACT.clear()
        _EXACT[(func, wrt, exact, mode)] = entry
    if entry.changed_defaults:
        _refuse_changed_default(func, entry, values)
    return entry


def _refuse_changed_default(func, entry, values: list) -> None:
    """A MutationError at the line that changes a parameter's default in place (`acc.append(v)`
    of `def f(x, acc=[])`), when this call's argument is that default: Python would change the
    default itself, and the next call would see the change; the generated code changes a copy.
    A call that passes its own value is not refused (the caller's value is never changed)."""
    params = list(inspect.signature(_unwrap(func)).parameters.values())
    for i, loc in entry.changed_defaults:
        if i < len(values) and i < len(params) and values[i] is params[i].default:
            raise MutationError(mutation.default_change(_unwrap(func), params[i].name), loc)


def _kinds_entry(func, wrt: tuple, values: list, mode: str):
    key = (func, wrt, tuple([(_FLOAT_RANKS[v.ndim] if v.dtype.kind == "f" and v.ndim else _array_kind(v))
                             if type(v) is np.ndarray else _kind(v) for v in values]), mode)
    entry = _CACHE.get(key)
    if entry is not None and entry.dims is not None:  # code for one pattern of axis lengths
        dims = shapes.dims_of(values)
        if dims != entry.dims:
            entry = _CACHE.get(key + (dims,))
    if entry is not None and entry.guard.holds():
        return entry
    n = len(values)
    for i in wrt:
        if not -n <= i < n:
            if _variadic(func):
                frontend.read_function(_unwrap(func))  # (refused there, saying so)
            raise ArgumentIndexError(f"wrt={i} is out of range: {getattr(func, '__name__', func)} takes {n} arguments")
    if any(i < 0 for i in wrt):
        return _kinds_entry(func, tuple(i % n for i in wrt), values, mode)
    dims = shapes.dims_of(values)
    with _COMPILE_LOCK:
        entry = _CACHE.get(key + (dims,)) or _CACHE.get(key)
        if entry is None or not entry.guard.holds() or entry.dims not in (None, dims):
            entry = _build(_unwrap(func), wrt, key[2], mode, dims=dims)
            _CACHE[key + (dims,)] = entry
        _CACHE[key] = entry
    return entry


def _variadic(func) -> bool:
    """Whether `func` takes `*args` or `**kwargs` of its own."""
    try:
        params = inspect.signature(_unwrap(func), follow_wrapped=False).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _build(target, wrt: tuple, kinds: tuple, mode: str, differentiable: bool = False, dims: tuple | None = None):
    """A Compiled with its guard: from the disk cache if a valid entry is there, else compiled
    (recording every function read and name looked up) and stored. With `differentiable` (the
    inner gradient of a nested one), its code stays differentiable and bypasses the disk cache.
    With `dims` (the arguments' pattern of axis lengths), the code may hold for that pattern alone
    (its `dims`), where that lets it skip shape bookkeeping."""
    generation = registry.GENERATION  # read first: a registration during compilation is seen next call
    spec = getattr(target, "__adjoint_spec__", None)
    if spec is not None:  # a gradient made by `grad`: differentiate its generated source
        func, inner_wrt, as_tuple, inner_mode = spec
        inner = _build(_unwrap(func), inner_wrt, kinds, inner_mode, differentiable=True)
        target = nesting.as_function(inner, as_tuple, inner_mode)
        with frontend.recording() as reading:
            entry = compile_gradient(target, wrt, kinds, mode, differentiable=differentiable)
        entry.guard = nesting.Both(_guard(target, reading, generation), inner.guard)
        entry.changed_defaults = inner.changed_defaults  # (it takes `func`'s arguments)
        return entry
    if differentiable:
        with frontend.recording() as reading:
            entry = compile_gradient(target, wrt, kinds, mode, differentiable=True)
        entry.guard = _guard(target, reading, generation)
        return entry
    portable = not any(isinstance(k, tuple) for k in kinds)  # (a structure's kind holds its class)
    entry = None
    if portable:  # code for this pattern of axis lengths, or code for every pattern
        entry = (dims and diskcache.load(target, wrt, (kinds, dims), mode, generation)) \
            or diskcache.load(target, wrt, kinds, mode, generation)
    if entry is None:
        with frontend.recording() as reading:
            entry = compile_gradient(target, wrt, kinds, mode, dims=dims)
        entry.guard = _guard(target, reading, generation)
        if portable and not reading.guards:  # (a gradient called inside: its guard is not portable)
            diskcache.store(target, wrt, kinds if entry.dims is None else (kinds, entry.dims), mode, entry)
    return entry


def _guard(target, reading, generation):
    """The guard of what one compilation read, and of the gradients compiled for calls inside."""
    own = guard.build(target, reading, generation)
    return nesting.AllOf(own, reading.guards) if reading.guards else own


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
                if v is g or (type(v) is not np.ndarray and type(v) is not float and not _fresh(g, _arrays_in(v))):
                    break
            else:
                out.append(g)
                continue
        return _owned(list(map(_gradient, raw, picked)), values)
    return out


def _gradient(g, x):
    """The gradient handed to the user for argument `x` (`rt.gradient`), of `x`'s type: a NumPy
    scalar's is a NumPy scalar of its float type (`np.float32` stays `np.float32`, an integer one
    gets `np.float64`), inside tuples and lists too."""
    return _typed(rt.gradient(g, x), x)


def _typed(g, x):
    if isinstance(x, np.generic):
        kind = x.dtype.type if x.dtype.kind in "fc" else np.float64
        return g if type(g) is kind else kind(g)
    if isinstance(x, (tuple, list)) and isinstance(g, (tuple, list)) and len(g) == len(x) \
            and any(isinstance(v, (np.generic, tuple, list, dict)) or trees.record_fields(v) is not None for v in x):
        return rt._rebuild(g, [_typed(a, b) for a, b in zip(g, x)])
    if type(x) is dict and type(g) is dict:
        return {k: _typed(g[k], v) if g.get(k) is not None else None for k, v in x.items()}
    if trees.record_fields(x) is not None and type(g) is type(x):
        for k in trees.record_fields(x):
            if getattr(g, k, None) is not None:
                object.__setattr__(g, k, _typed(getattr(g, k), getattr(x, k)))
        return g
    return g


def _owned(grads: list, inputs: list) -> list:
    """Copy any gradient array that shares memory with an input or an earlier gradient, or that is
    read-only (a broadcast view)."""
    out, seen = [], []
    flat_inputs = [a for v in inputs for a in _arrays_in(v)]
    for g in grads:
        out.append(_own(g, flat_inputs, seen))
    return out


def _fresh(g, arrays: list) -> bool:
    for a in arrays:
        if g is a:
            return False
    return True


def _own(g, inputs, seen):
    if isinstance(g, (tuple, list)):
        return rt._rebuild(g, [_own(x, inputs, seen) for x in g])
    if type(g) is dict:
        return {k: _own(v, inputs, seen) for k, v in g.items()}
    if trees.record_fields(g) is not None:  # (a gradient made by trees.rebuild: fields set in place)
        for k in trees.record_fields(g):
            object.__setattr__(g, k, _own(getattr(g, k), inputs, seen))
        return g
    if isinstance(g, np.ndarray):
        # (an array owning its data may still be seen through an earlier gradient: `np.real(z_bar)`
        # of a complex adjoint is a view of it)
        fresh = g.flags.owndata and g.flags.writeable and all(g is not a for a in inputs) \
            and not any(np.may_share_memory(g, a) for a in seen)
        if not fresh and (not g.flags.writeable or any(np.may_share_memory(g, a) for a in inputs + seen)):
            g = g.copy()
        seen.append(g)
    return g


def positional_wrt(func, wrt: tuple, args) -> tuple:
    """`wrt` with each negative position counted from the end of the positional arguments the call
    passes (`-1`: the last one given, as JAX counts), so every entry point, and a bound method or a
    partial, means one argument by it."""
    if all(i >= 0 for i in wrt):
        return wrt
    n = len(args)
    for i in wrt:
        if i < -n:
            raise ArgumentIndexError(f"wrt={i} is out of range: {getattr(func, '__name__', func)} is given {n} "
                                     "positional arguments")
    return tuple(i % n if i < 0 else i for i in wrt)


def _through_partial(func, wrt: tuple, args, kwargs, negatives_positional: bool = True):
    """A `functools.partial` as the function it wraps: `(target, wrt, args, kwargs)` where the
    partial's bound arguments are ordinary arguments of `target` (read at each call, never baked
    in) and each `wrt` position, counted among the partial's own parameters, is moved to the
    position of that parameter in `target`. A negative position counts from the end of the
    positional arguments given (`positional_wrt`), unless `negatives_positional` is False (then it
    counts the parameters, as `out=` does)."""
    wrt = positional_wrt(func, wrt, args) if negatives_positional else wrt
    if isinstance(func, types.MethodType) and isinstance(func.__func__, types.FunctionType) \
            and not frontend.is_derivative(func.__func__):
        # a bound method: the function, with the object it is bound to as its first argument,
        # never differentiated (JAX's convention: pass the object explicitly to differentiate it)
        return func.__func__, tuple(i + 1 if i >= 0 else i for i in wrt), (func.__self__,) + tuple(args), kwargs
    if not isinstance(func, (functools.partial, types.FunctionType, types.MethodType, type)) \
            and trees.record_fields(func) is not None \
            and isinstance(inspect.getattr_static(type(func), "__call__", None), types.FunctionType):
        return _through_partial(func.__call__, wrt, args, kwargs, negatives_positional)  # an object with `__call__`
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
    if isinstance(target, types.MethodType):  # a partial of a bound method
        return _through_partial(target, tuple(moved), tuple(func.args) + tuple(args), {**func.keywords, **kwargs},
                                negatives_positional)
    return target, tuple(moved), tuple(func.args) + tuple(args), {**func.keywords, **kwargs}


def _run(func, wrt_t, as_tuple, args, kwargs, mode):
    """Run the compiled 'joint' (value and gradient) or 'grad' (gradient only) function."""
    if type(func) is not types.FunctionType:  # (a plain function is itself: the common case, kept cheap)
        func, wrt_t, args, kwargs = _through_partial(func, wrt_t, args, kwargs)
    elif wrt_t[0] < 0 or len(wrt_t) > 1:
        wrt_t = positional_wrt(func, wrt_t, args)
    values = _bind(func, args, kwargs)
    exact = _exact(values)
    if exact is None:  # complex values in structures are refused before anything is compiled for them
        _check_real(func, values, allow_complex=True)  # (arrays, floats and ints alone: nothing to refuse)
    entry = compiled(func, wrt_t, values, mode, exact)
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
    except ArgumentError as exc:
        if str(exc).startswith(_NONE_RESULT) and entry.written:
            raise ArgumentError(f"{_name(func)} returns None and writes into its arguments: an in-place function "
                                "has no scalar result to differentiate. Its outputs are the arguments it writes "
                                "into under `vjp` (`out, pullback = vjp(f, *args)`), or return the scalar you "
                                "want the gradient of") from None
        _locate(exc, entry)
        raise
    except Exception as exc:
        _locate(exc, entry)
        raise
    grads = _deliver(raw, picked, values)
    return value, (tuple(grads) if as_tuple else grads[0])


_NONE_RESULT = "grad needs a function that returns a scalar, but it returned a value of type NoneType"


def grad(func, wrt=0):
    """The gradient of scalar-valued `func` w.r.t. argument `wrt` (an int or a tuple of ints). A
    structured argument's gradient has its structure (dict keys, named tuple and dataclass types
    kept; None for a leaf that is not a number or an array). For a bound method `obj.f`, `wrt`
    counts the method's own arguments and `obj` is a constant."""
    wrt_t, as_tuple = _normalize_wrt(wrt)

    def gradient(*args, **kwargs):
        return _run(func, wrt_t, as_tuple, args, kwargs, "grad")[1]
    return _named_after(gradient, func, (func, wrt_t, as_tuple, "grad"))


def value_and_grad(func, wrt=0, has_aux=False):
    """Like `grad`, returning `(func(*args), gradient)` from one forward pass. With `has_aux`,
    `func` returns `(loss, aux)`: the result is `((loss, aux), gradient)`, the gradient of the
    loss alone (aux passes no gradient; it may hold numbers, arrays and tuples of them)."""
    wrt_t, as_tuple = _normalize_wrt(wrt)
    if has_aux:
        return _with_aux(func, wrt_t, as_tuple)

    def value_and_gradient(*args, **kwargs):
        return _run(func, wrt_t, as_tuple, args, kwargs, "joint")
    return _named_after(value_and_gradient, func, (func, wrt_t, as_tuple, "joint"))


def _with_aux(func, wrt_t: tuple, as_tuple: bool):
    """`value_and_grad(func, has_aux=True)`: one forward pass (vjp) and one pullback of the loss."""
    name = getattr(func, "__name__", func)

    def value_and_gradient(*args, **kwargs):
        out, pullback = vjp(func, *_bind(func, args, kwargs), wrt=wrt_t)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ArgumentError(f"value_and_grad(has_aux=True) needs {name} to return a pair (loss, aux); "
                                f"it returned {_received(out)}")
        loss, aux = out
        if np.size(loss) != 1 or isinstance(loss, (tuple, list)):
            raise ArgumentError(f"value_and_grad(has_aux=True): the loss {name} returns must be a scalar, "
                                f"got {_received(loss)}")
        grads = pullback((np.ones(np.shape(loss)) if np.ndim(loss) else 1.0, _zero_cotangent(aux)))
        return (loss, aux), (grads if as_tuple else grads[0])
    frontend.DERIVATIVES.add(value_and_gradient)
    return functools.update_wrapper(value_and_gradient, _unwrap(func))


def _zero_cotangent(out):
    """The zero cotangent of an output, in its structure (None for what takes none)."""
    shape = trees.fields_of(out)
    if shape is not None and not isinstance(out, tuple):
        zeros = {k: _zero_cotangent(trees.item(out, k)) for k in shape[1]}
        if shape[0] == "dict":
            return zeros
        made = object.__new__(type(out))
        for k, v in zeros.items():
            object.__setattr__(made, k, v)
        return made
    if isinstance(out, (tuple, list)):
        return type(out)(_zero_cotangent(o) for o in out) if type(out) in (tuple, list) \
            else tuple(_zero_cotangent(o) for o in out)
    if isinstance(out, Buffer):
        out = out.data
    if isinstance(out, (np.ndarray, numbers.Number, np.generic)) and not isinstance(out, (str, bytes, bool)):
        return np.zeros(np.shape(out)) if np.ndim(out) else 0.0
    return None


def _named_after(wrapper, func, spec=None):
    """`wrapper` with `func`'s name, docstring and signature, but not marked as wrapping it
    (`__wrapped__` would make the compiler differentiate `func` when given the gradient function
    itself). `spec` = (func, wrt, as_tuple, mode) lets `nesting` differentiate it again."""
    functools.update_wrapper(wrapper, _unwrap(func))
    del wrapper.__wrapped__
    try:
        wrapper.__signature__ = inspect.signature(_unwrap(func))
    except (TypeError, ValueError):
        pass
    if spec is not None:
        wrapper.__adjoint_spec__ = spec
    frontend.DERIVATIVES.add(wrapper)
    return wrapper


def vjp(func, *args, wrt=None):
    """`(out, pullback)`: `pullback(out_bar)` returns one gradient per positional argument; with
    `wrt` (an int or a tuple of ints) only those, computed alone (one value for an int).

    A function that returns nothing (no `return <value>`, or None from this call) and writes into
    arguments (an in-place `rhs(du, u, p, t)`) has those arguments as its outputs: `out` is each written array as the
    call leaves it (one value, or a tuple in argument order) and the pullback takes their
    cotangents; a written argument's gradient is with respect to its value on entry. The caller's
    arrays are never changed (the compiled code writes into copies)."""
    requested, as_tuple = (tuple(range(len(args))), True) if wrt is None else _normalize_wrt(wrt)
    for i in requested:
        if not -len(args) <= i < len(args):
            raise ArgumentIndexError(f"wrt={i} is out of range: {getattr(func, '__name__', func)} is given "
                                     f"{len(args)} arguments")
    requested = tuple(i % len(args) for i in requested) if args else requested
    func, wrt, args, kwargs = _through_partial(func, requested, args, {})
    values = _bind(func, args, kwargs)
    for i in wrt:
        _check_numeric(values[i], f"argument {i} of {getattr(func, '__name__', func)}")
    _check_real(func, values, allow_complex=True)
    mode = vjp_mode(func)
    while True:
        entry = compiled(func, wrt, values, mode)
        if entry.written:
            _check_aliasing(func, entry, values)
        try:
            # on copies: the caller may change its arrays before calling the pullback, which must
            # see them as this call did (the saved values may be the arguments themselves)
            out, saved = entry.function(*[_copy_arrays(v) for v in values])
        except Exception as exc:
            _locate(exc, entry)
            raise
        if mode == "split_written" or out is not None or not entry.written:
            break
        mode = "split_written"  # (returned None here, through a wrapper or on this path: the same rule)
    if mode == "split_written" and entry.written:
        out, spec, feed = _written_outputs(func, entry.written, entry.outputs, out, values)
    else:
        out = _unshared(out, saved)
        spec, feed = _cotangent_spec(out), None

    def pullback(out_bar):
        _check_cotangent(func, spec, out_bar, "the cotangent")
        internal = _as_float(spec, out_bar) if feed is None else feed(out_bar)
        try:
            raw = entry.pullback(saved, internal)
        except Exception as exc:
            _locate(exc, entry)
            raise
        grads = [_gradient(g, values[i]) for g, i in zip(raw, wrt)]
        grads = tuple(_owned(grads, list(values) + [out_bar, internal]))
        return grads if as_tuple else grads[0]
    frontend.DERIVATIVES.add(pullback)
    return out, pullback


_RETURNS_NOTHING: dict = {}  # code object -> whether the function has no `return <value>`


def vjp_mode(func) -> str:
    """The compiled form `vjp` uses: 'split_written' for a function whose own body returns no value
    (every `return` bare or `return None`, or none at all), whose outputs are then the arguments
    it writes into; else 'split'."""
    target = _unwrap(func)
    if isinstance(target, functools.partial):
        target = _unwrap(target.func)
    code = getattr(target, "__code__", None)
    if code is None:
        return "split"
    known = _RETURNS_NOTHING.get(code)
    if known is None:
        try:
            node = frontend.read_function(target).node
        except SourceError:
            return "split"  # (compiling it raises the located error)
        known = not any(isinstance(n, gast.Return) and n.value is not None
                        and not (isinstance(n.value, gast.Constant) and n.value.value is None)
                        for n in gast.walk(node))
        _RETURNS_NOTHING[code] = known
    return "split_written" if known else "split"


def _written_outputs(func, positions: tuple, outputs: tuple, out, values: list):
    """`vjp` of a function that returns nothing: (the user's `out`, its cotangent spec, the map
    from the user's cotangent to the compiled pullback's). The compiled code returns the value
    each argument it may write into (`positions`) is left with; the outputs are those the call
    changes (`outputs`) that the caller could see change (arrays and lists; a number is rebound,
    never changed), each a fresh copy of the value the call leaves, of the argument's shape and
    dtype."""
    names = _param_names(func)
    produced = list(out) if len(positions) > 1 else [out]
    shown, specs, kept = [], [], []
    for k, i in enumerate(positions):
        arg, value = values[i], produced[k]
        name = names[i] if i < len(names) else str(i)
        if i not in outputs:
            continue  # (it leaves the value it came with: a name rebound before a write)
        if isinstance(arg, np.ndarray):
            if np.shape(value) != arg.shape or not np.can_cast(np.asarray(value).dtype, arg.dtype, "same_kind"):
                raise MutationError(
                    f"{_name(func)}: the argument `{name}` (shape {arg.shape}, dtype {arg.dtype}) is updated in "
                    f"place to a value of shape {np.shape(value)} and dtype {np.asarray(value).dtype}; NumPy refuses "
                    "that update")
            value = np.array(value, dtype=arg.dtype)
        elif isinstance(arg, list):
            value = [np.array(v) if isinstance(v, np.ndarray) else v for v in value]
        else:
            continue  # a number: the caller's value never changes
        kept.append(k)
        shown.append(value)
        specs.append(_cotangent_spec(value, f"`{name}` (the argument {_name(func)} writes into)"))
    if not shown:
        return None, _cotangent_spec(None), lambda out_bar: _zero_cotangents(produced, positions)
    if len(shown) == 1:
        user_out, spec = shown[0], specs[0]
    else:
        written = ", ".join(f"`{names[positions[k]] if positions[k] < len(names) else positions[k]}`"
                            for k in kept)
        user_out, spec = tuple(shown), ("tuple", tuple(specs), f"one per argument it writes into: {written}")

    def feed(out_bar):
        given = [out_bar] if len(shown) == 1 else list(out_bar)
        internal = [rt.zeros_like(p) for p in produced]
        for k, b, s in zip(kept, given, specs):
            internal[k] = _as_float(s, b)
            if isinstance(produced[k], list):  # (a list's slots are written: its adjoint is a list)
                internal[k] = list(internal[k])
        return tuple(internal) if len(positions) > 1 else internal[0]
    return user_out, spec, feed


def _zero_cotangents(produced: list, positions: tuple):
    zeros = [rt.zeros_like(p) for p in produced]
    return tuple(zeros) if len(positions) > 1 else zeros[0]


def _unshared(out, saved):
    """`out`, with a copy of each array in it that shares memory with what the pullback keeps: the
    pullback restores saved arrays in place, and a caller writing into `out` must not change it."""
    arrays = [a for a in _arrays_in(out) if isinstance(a, np.ndarray)]
    if not arrays:
        return out
    kept = {id(a if a.base is None else a.base) for a in _arrays_in(saved)}
    if not any(id(a if a.base is None else a.base) in kept for a in arrays):
        return out
    return _copy_arrays(out)


def _copy_arrays(value, memo: dict | None = None):
    """`value` with a copy of every array in it (`_arrays_in`'s), its containers rebuilt; what is
    shared stays shared, and a cycle ends (`memo`, by id, as `copy.deepcopy` keeps it)."""
    if memo is None:
        memo = {}
    made = memo.get(id(value))
    if made is not None:
        return made[1]
    if isinstance(value, np.ndarray):
        made = rt.layout_copy(value)  # (a reshape of it is a view exactly when one of `value` is)
    elif isinstance(value, Buffer):
        made = Buffer(value.data.copy())
    elif type(value) is list:
        made = []
        memo[id(value)] = (value, made)
        made.extend(_copy_arrays(v, memo) for v in value)
    elif isinstance(value, (tuple, list)):
        made = rt._rebuild(value, [_copy_arrays(v, memo) for v in value])
    elif type(value) is dict:
        made = {}
        memo[id(value)] = (value, made)
        made.update((k, _copy_arrays(v, memo)) for k, v in value.items())
    elif trees.record_fields(value) is not None:
        import copy

        made = copy.copy(value)
        memo[id(value)] = (value, made)
        for k in trees.record_fields(value):
            object.__setattr__(made, k, _copy_arrays(getattr(value, k), memo))
    else:
        return value
    memo[id(value)] = (value, made)  # (the value kept alive: its id is not reused meanwhile)
    return made


def _cotangent_spec(out, whose: str = "the output", top: bool = True):
    """What a cotangent of `out` must look like: ("none", why) for None; ("tuple", specs, what they
    are) for a tuple or list; ("array", shape, whose) for a number, array or Buffer; None (anything)
    for another value."""
    if out is None:
        return ("none", "the function returns None and writes into no array argument" if top
                else "that output is None")
    if isinstance(out, (tuple, list)):
        about = f"{'the function returns' if top else 'that output is'} a {type(out).__name__} of {len(out)}"
        return ("tuple", tuple(_cotangent_spec(o, top=False) for o in out), about)
    shape = trees.fields_of(out)
    if shape is not None:  # a dict, dataclass or object: a cotangent of the same structure
        keys = shape[1]
        about = (f"{'the function returns' if top else 'that output is'} a {type(out).__name__} with "
                 f"{'keys' if shape[0] == 'dict' else 'fields'} {', '.join(map(repr, keys))}")
        return ("struct", shape[0], type(out), keys,
                tuple(_cotangent_spec(trees.item(out, k), top=False) for k in keys), about)
    if isinstance(out, Buffer):
        out = out.data
    if isinstance(out, (np.ndarray, numbers.Number, np.generic)) and not isinstance(out, (str, bytes)):
        return ("array", np.shape(out), whose)
    return None


def _received(value) -> str:
    if value is None:
        return "None"
    shape = trees.fields_of(value)
    if shape is not None and not isinstance(value, tuple):
        return (f"a {type(value).__name__} with {'keys' if shape[0] == 'dict' else 'fields'} "
                f"{', '.join(map(repr, shape[1])) or '(none)'}")
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of length {len(value)}"
    if isinstance(value, Buffer):
        value = value.data
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


def _check_cotangent(func, spec, out_bar, what: str) -> None:
    """Raise ArgumentError unless `out_bar` has the structure and shape of the output (`spec`)
    and holds real numbers (integers are taken as floats; booleans, complex numbers, strings and
    other objects are refused)."""
    if spec is None:
        return
    name = _name(func)
    if spec[0] == "none":
        if out_bar is not None:
            raise ArgumentError(f"the pullback of {name}: {what} must be None ({spec[1]}), got {_received(out_bar)}")
        return
    if spec[0] == "struct":
        _, tag, kind, keys, items, about = spec
        got = trees.fields_of(out_bar)
        same = got is not None and type(out_bar) is kind and tuple(got[1]) == tuple(keys)
        if not same and not (tag == "dict" and type(out_bar) is dict and set(out_bar) == set(keys)):
            raise ArgumentError(f"the pullback of {name}: {what} must be a {kind.__name__} with "
                                f"{'keys' if tag == 'dict' else 'fields'} {', '.join(map(repr, keys))} "
                                f"({about}), got {_received(out_bar)}")
        for k, s in zip(keys, items):
            _check_cotangent(func, s, trees.item(out_bar, k), f"{what}[{k!r}]" if tag == "dict" else f"{what}.{k}")
        return
    if spec[0] == "tuple":
        items = spec[1]
        if not isinstance(out_bar, (tuple, list)) or len(out_bar) != len(items):
            raise ArgumentError(f"the pullback of {name}: {what} must be a tuple of {len(items)} cotangents "
                                f"({spec[2]}), got {_received(out_bar)}")
        for k, (s, b) in enumerate(zip(items, out_bar)):
            _check_cotangent(func, s, b, f"{what}[{k}]")
        return
    shape, whose = spec[1], spec[2]
    try:
        value = None if out_bar is None else np.asarray(out_bar.data if isinstance(out_bar, Buffer) else out_bar)
    except Exception:  # noqa: BLE001 -- ragged nesting and the like: not a cotangent
        value = None
    if value is None or value.dtype.kind not in "fiu":
        kind = "complex numbers" if value is not None and value.dtype.kind == "c" else \
            "booleans" if value is not None and value.dtype.kind == "b" else \
            f"dtype {value.dtype}" if value is not None else _received(out_bar)
        raise ArgumentError(f"the pullback of {name}: {what} must hold real numbers (an array of shape "
                            f"{shape} or a float, for {whose}), got {kind}")
    if value.shape != shape:
        got = f"{_received(out_bar)}, of shape {value.shape}" if isinstance(out_bar, (tuple, list)) \
            else f"shape {value.shape}"
        raise ArgumentError(f"the pullback of {name}: {what} must have the shape of {whose}, {shape}, got {got}")


def _as_float(spec, out_bar):
    """The cotangent as the compiled pullback takes it: integers as floats (a written slot of an
    integer cotangent would truncate), arrays of the output's shape."""
    if spec is None or spec[0] == "none":
        return out_bar
    if spec[0] == "struct":
        _, tag, kind, keys, items, _about = spec
        values = {k: None if s is None else _as_float(s, trees.item(out_bar, k)) for k, s in zip(keys, items)}
        return values if tag == "dict" else trees.Record(kind, values)
    if spec[0] == "tuple":
        return tuple(_as_float(s, b) for s, b in zip(spec[1], out_bar))
    if isinstance(out_bar, Buffer):
        out_bar = out_bar.data
    if type(out_bar) is float or (type(out_bar) is np.ndarray and out_bar.dtype.kind == "f"):
        return out_bar
    value = np.asarray(out_bar)
    if value.dtype.kind != "f":
        value = value.astype(float)
    return value if value.ndim else (value[()] if not isinstance(out_bar, np.ndarray) else value)


_SOURCE_MODES = {"grad": "grad", "value_and_grad": "joint", "vjp": "split"}


def adjoint_source(func, wrt=None, args=None, mode: str = "grad") -> str:
    """The generated Python source of the gradient of `func` (forward and backward): the code
    `grad(func, wrt)` runs, or with `mode="value_and_grad"` the code `value_and_grad` runs, or with
    `mode="vjp"` the forward and pullback functions `vjp` runs. `wrt` is 0 by default, every
    parameter for "vjp".

    Without `args` the code makes no assumption about the arguments (this is what
    `python -m adjoint_compiler show` prints); with example `args` it is the code that runs for
    arguments of those kinds (scalars, arrays of each ndim), which may skip shape bookkeeping."""
    if mode not in _SOURCE_MODES:
        raise ArgumentError(f"mode must be one of {', '.join(map(repr, _SOURCE_MODES))}, got {mode!r}")
    frontend.check_first_order(_unwrap(func))
    if wrt is None:
        wrt = tuple(range(len(inspect.signature(func).parameters) if args is None else len(args))) \
            if mode == "vjp" else 0
    wrt_t = _normalize_wrt(wrt)[0] if wrt != () else ()
    kind = vjp_mode(func) if mode == "vjp" else _SOURCE_MODES[mode]
    func, wrt_t, given, kwargs = _through_partial(func, wrt_t, () if args is None else tuple(args), {})
    target = _unwrap(func)
    if not hasattr(target, "__adjoint_spec__"):
        frontend.check_first_order(target)
    values = [None] * len(inspect.signature(target).parameters) if args is None else _bind(func, given, kwargs)
    if args is None and given:  # a bound method (or a partial): the values bound are known
        values[:len(given)] = given
    return compiled(func, wrt_t, values, kind).source


def differentiable(func=None, *, wrt=0):
    """Mark a function as differentiable; calling it is unchanged. Adds `.grad(wrt)`,
    `.value_and_grad(wrt)` and `.adjoint_source(wrt, args, mode)`. Usable as
    `@differentiable(wrt=(0, 1))`."""
    if func is None:
        return lambda f: differentiable(f, wrt=wrt)
    _normalize_wrt(wrt)
    default = wrt

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    wrapper.grad = lambda wrt=default: grad(func, wrt)
    wrapper.value_and_grad = lambda wrt=default: value_and_grad(func, wrt)
    wrapper.adjoint_source = lambda wrt=None, args=None, mode="grad": adjoint_source(
        func, default if wrt is None and mode != "vjp" else wrt, args, mode)
    return wrapper


def _own_wrapper_code():
    """The code object of `differentiable`'s wrapper: the one wrapper the compiler sees through."""
    probe = differentiable(lambda: None)
    return probe.__code__


frontend.OWN_WRAPPER_CODE.append(_own_wrapper_code())

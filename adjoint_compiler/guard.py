"""Run-time guards: everything a compiled gradient baked in, re-checked cheaply at each call.

While compiling, the frontend records every function whose source it read and every free name
it looked up (`frontend.recording`). `build` turns that record into a `Guard`: a few flat tuples
of `(where, key, value)` that `holds()` compares by identity (`is`):

    the module dict entry of every global read         SCALE = 5.0          -> recompile
    the closure cell of every free variable read       nonlocal s; s = 3.0  -> recompile
    the attributes read through them (`cfg.scale`)     cfg.scale = 5.0      -> recompile
    an inlined method's reads through `self`, and the class of its object
                                                       m.op = g; m.__class__ = B; m.forward = h
    `__code__`, `__defaults__`, `__kwdefaults__` of the function and of every inlined one
    the contents of mutable containers read (lists, dicts, the kwdefaults dict)
    the rule table's generation (any `@adjoint` / `nondifferentiable` registration)

A guard that no longer holds makes `api` compile again. `portable` is the same record in a form
another process can re-check (`diskcache`): functions named by how they were reached, values by
a fingerprint; it is None when something cannot be found again or fingerprinted.

Attributes of library modules and their objects (`np.sin`, `math.pi`) are not guarded: patching
NumPy at run time is not tracked.
"""
from __future__ import annotations

import builtins
import hashlib
import inspect
import types

import numpy as np

from . import registry
from .frontend import LIBRARIES

MISSING = object()
_BUILTINS = vars(builtins)


class _Mark(tuple):
    """A container's type and length inside a snapshot (compared by ==, leaves by `is`)."""


def _snapshot(value, out: list) -> list:
    if isinstance(value, (list, tuple)):
        out.append(_Mark((type(value), len(value))))
        for item in value:
            _snapshot(item, out)
    elif isinstance(value, dict):
        out.append(_Mark((type(value), len(value))))
        for k, v in value.items():
            out.append(k)
            _snapshot(v, out)
    else:
        out.append(value)
    return out


def _mutable_inside(value) -> bool:
    if isinstance(value, (list, dict)):
        return True
    return isinstance(value, tuple) and any(_mutable_inside(v) for v in value)


def _same(snapshot: list, value) -> bool:
    now = _snapshot(value, [])
    return len(now) == len(snapshot) and all(
        a is b or (type(a) is _Mark and a == b) for a, b in zip(now, snapshot))


class Guard:
    """`holds()` is True while every value the compiled code baked in is still the same object.

    `holds` is generated once per guard as one boolean expression over default arguments
    (`d0.get('SCALE', M) is v0 and f1.__code__ is v1 and ...`), the cheapest form in CPython."""

    __slots__ = ("_portable", "attrs", "cells", "dicts", "holds", "snapshots")

    def __init__(self, dicts=(), attrs=(), cells=(), snapshots=(), portable=None):
        self.dicts = tuple(dicts)          # (dict, key, value): d.get(key, MISSING) is value
        self.attrs = tuple(attrs)          # (object, name, value): getattr(object, name) is value
        self.cells = tuple(cells)          # (cell, value): cell.cell_contents is value
        self.snapshots = tuple(snapshots)  # (container, snapshot): its items are the same objects
        self._portable = portable  # the portable form, or a function making it (see `portable`)
        self.holds = self._generate()

    @property
    def portable(self):
        """The portable form (`_portable`), made when first asked for: only the on-disk cache
        asks (it reads every function's source again), and only for a function it can keep."""
        if callable(self._portable):
            self._portable = self._portable()
        return self._portable

    def _generate(self):
        names: dict = {"M": MISSING, "_same": _same, "_empty": _empty}
        tests = []

        def bind(prefix: str, value) -> str:
            name = f"{prefix}{len(names)}"
            names[name] = value
            return name

        for d, k, v in self.dicts:
            tests.append(f"{bind('d', d)}.get({k!r}, M) is {bind('v', v)}")
        for o, a, v in self.attrs:
            tests.append(f"{bind('o', o)}.{a} is {bind('v', v)}" if a.isidentifier()
                         else f"getattr({bind('o', o)}, {a!r}) is {bind('v', v)}")
        for c, v in self.cells:
            tests.append(f"_empty({bind('c', c)})" if v is MISSING else f"{bind('c', c)}.cell_contents is {bind('v', v)}")
        for container, snap in self.snapshots:
            tests.append(f"_same({bind('s', snap)}, {bind('v', container)})")
        params = ", ".join(f"{n}={n}" for n in names)
        body = " and ".join(tests) or "True"
        text = (f"def holds({params}):\n    try:\n        return {body}\n"
                "    except Exception:  # an attribute deleted, a cell emptied: not the same\n        return False\n")
        scope = dict(names)
        exec(compile(text, "<adjoint_compiler guard>", "exec"), scope)  # noqa: S102 -- our own generated test
        return scope["holds"]


def _empty(cell) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:
        return True
    return False


def _is_library(obj) -> bool:
    if isinstance(obj, types.ModuleType):
        module = obj.__name__
    elif isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        module = getattr(obj, "__module__", None) or ""
    else:
        module = getattr(type(obj), "__module__", None) or ""
    return module.split(".")[0] in LIBRARIES


class _Builder:
    def __init__(self):
        self.dicts, self.attrs, self.cells, self.snapshots = [], [], [], []
        self.seen: set = set()

    def once(self, *key) -> bool:
        ident = tuple(id(k) if not isinstance(k, str) else k for k in key)
        if ident in self.seen:
            return False
        self.seen.add(ident)
        return True

    def watch(self, value) -> None:
        if _mutable_inside(value) and self.once("snap", value):
            self.snapshots.append((value, _snapshot(value, [])))

    def name(self, func, name: str, value) -> None:
        """Guard the lookup of free `name` in `func` (closure, then globals, then builtins)."""
        if not self.once("name", func, name):
            return
        cell = _cell(func, name)
        if cell is not None:
            try:
                contents = cell.cell_contents
            except ValueError:
                contents = MISSING
            self.cells.append((cell, contents))
            if contents is not MISSING:
                self.watch(contents)
                return
        scope = func.__globals__
        if name in scope:
            self.dicts.append((scope, name, scope[name]))
        else:
            self.dicts.append((scope, name, MISSING))
            self.dicts.append((_BUILTINS, name, _BUILTINS.get(name, MISSING)))
        self.watch(value)

    def attr(self, obj, name: str):
        """Guard `obj.name` and return its value (MISSING where it is not guarded)."""
        if _is_library(obj):
            return MISSING
        value = getattr(obj, name, MISSING)
        if value is MISSING or getattr(obj, name, MISSING) is not value:  # absent, or computed anew
            return MISSING
        if self.once("attr", obj, name):
            self.attrs.append((obj, name, value))
            self.watch(value)
        return value

    def object_attr(self, obj, name: str) -> None:
        """Guard `obj.name` read at compile time from an object reached through a global: the
        object's class (the methods inlined for it were its class's), and the value read, or, for
        a method bound anew at each read, that the object's own `__dict__` does not shadow it."""
        if _is_library(obj):
            return
        if not isinstance(obj, (type, types.ModuleType)):
            if self.once("class", obj):
                self.attrs.append((obj, "__class__", type(obj)))
            if isinstance(inspect.getattr_static(type(obj), name, None), property):
                return  # (its getter was inlined: `class_reads` guards it)
        if self.attr(obj, name) is MISSING:
            own = getattr(obj, "__dict__", None)
            if isinstance(own, dict) and not isinstance(obj, type) and self.once("own", obj, name):
                self.dicts.append((own, name, own.get(name, MISSING)))

    def function(self, func) -> None:
        if not self.once("func", func):
            return
        for name in ("__code__", "__defaults__", "__kwdefaults__"):
            value = getattr(func, name)
            self.attrs.append((func, name, value))
            self.watch(value)


def _cell(func, name: str):
    code = func.__code__
    if func.__closure__ and name in code.co_freevars:
        return func.__closure__[code.co_freevars.index(name)]
    return None


def lookup(func, name: str):
    """The value free `name` has in `func` (closure, globals, builtins), or MISSING."""
    cell = _cell(func, name)
    if cell is not None:
        try:
            return cell.cell_contents
        except ValueError:
            pass
    if name in func.__globals__:
        return func.__globals__[name]
    return _BUILTINS.get(name, MISSING)


def build(func, reading, generation) -> Guard:
    """The guard of a compilation of `func` that read what `reading` recorded, started while the
    rule table was at `generation`."""
    b = _Builder()
    b.attrs.append((registry, "GENERATION", generation))
    b.function(func)
    for f in reading.functions:
        b.function(f)
    values = {}
    for f, name, value in reading.lookups:
        b.name(f, name, value)
        values[(f, name)] = value
    for cls, name in getattr(reading, "class_reads", ()):  # methods and properties inlined from classes
        for klass in cls.__mro__:
            found = klass.__dict__.get(name, MISSING)
            b.dicts.append((klass.__dict__, name, found))
            if found is not MISSING:
                break
    for obj, name in getattr(reading, "attr_reads", ()):
        b.object_attr(obj, name)
    for source in reading.sources:
        for path in sorted(source.paths):
            root, *rest = path.split(".")
            obj = values.get((source.func, root), MISSING)
            for attr in rest:
                if obj is MISSING:
                    break
                obj = b.attr(obj, attr)
    # (what the portable form reads of the reading: not the parsed sources it holds)
    read = types.SimpleNamespace(functions=list(reading.functions), attr_reads=[
        (obj, name) for obj, name in getattr(reading, "attr_reads", ()) if not _is_library(obj)], sources=[
        types.SimpleNamespace(func=s.func, paths=s.paths) for s in reading.sources])
    return Guard(b.dicts, b.attrs, b.cells, b.snapshots, lambda: _portable(func, read, values))


# -- the portable form, for the on-disk cache -----------------------------------------------------
def fingerprint(value):
    """A picklable description equal across processes for equal values, or None."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value).__name__, repr(value))
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, repr(value.item()))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape)
    if isinstance(value, (tuple, list)):
        items = tuple(fingerprint(v) for v in value)
        return None if None in items else ("seq", _name_of(type(value)), items)
    if isinstance(value, dict):
        items = tuple((fingerprint(k), fingerprint(v)) for k, v in value.items())
        return None if any(None in kv for kv in items) else ("dict", items)
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if callable(value) and _name_of(value) is not None:
        return ("callable", type(value).__name__, _name_of(value))
    return None


def _name_of(obj):
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def source_digest(func) -> str | None:
    """A digest of what the generated code bakes in of `func`'s source: its text and where it is
    (file and first line: the `# L<n>` comments, the header and the errors name them), so the same
    text at another line or in another file has another digest. None if the source is unknown."""
    try:
        code = func.__code__
        text = inspect.getsource(code)
    except (OSError, TypeError, AttributeError):
        return None
    return hashlib.sha256(repr((code.co_filename, code.co_firstlineno, text)).encode()).hexdigest()


def _portable(func, reading, values: dict):
    """[(kind, ...)] re-checkable in another process: functions are numbered in the order they are
    reached (0 is `func`; another is the value of an earlier `name` or `attr` step)."""
    functions = {func: 0}
    reached_by = {func: None}  # function -> the step whose value it is
    order = [func]
    steps: list = []
    covered: set = set()  # (id(object), name) of the attributes the steps read again
    by_name: dict = {}
    read = set(reading.functions) | {func}
    sources = {}
    for s in reading.sources:
        sources.setdefault(s.func, s)

    def reached(value, step_index):
        if isinstance(value, types.FunctionType) and value in read and value not in functions:
            functions[value] = len(order)
            reached_by[value] = step_index
            order.append(value)
            steps.append(("function", step_index))

    k = 0
    while k < len(order):
        f = order[k]
        for (g, name), value in values.items():
            if g is not f:
                continue
            fp = fingerprint(value)
            if fp is None:
                return None
            steps.append(("name", functions[f], name, fp))
            by_name[(f, name)] = len(steps) - 1
            reached(value, len(steps) - 1)
            paths = sources[f].paths if f in sources else ()
            for path in sorted(paths):
                root, *rest = path.split(".")
                if root != name:
                    continue
                obj, parent = value, len(steps) - 1
                for attr in rest:
                    if _is_library(obj):
                        break
                    covered.add((id(obj), attr))
                    obj = getattr(obj, attr, MISSING)
                    if obj is MISSING:
                        break
                    fp = fingerprint(obj)
                    if fp is None:
                        return None
                    steps.append(("attr", parent, attr, fp))
                    parent = len(steps) - 1
                    reached(obj, parent)
        k += 1
    if read - set(functions) or any((id(obj), name) not in covered for obj, name in reading.attr_reads):
        return None  # (a function, or an attribute read through `self`, it cannot find again)
    for f, index in functions.items():
        digest = source_digest(f)
        defaults = fingerprint(f.__defaults__), fingerprint(f.__kwdefaults__)
        if digest is None or None in defaults:
            return None
        steps.append(("code", index, digest, defaults))
    return {"steps": steps, "reached_by": reached_by, "by_name": by_name}


def from_portable(func, steps: list, generation):
    """Replay the portable `steps` recorded for `func` in this process: `(guard, values)` where
    `values[i]` is what step i found, or None if anything differs from what was recorded."""
    b = _Builder()
    b.attrs.append((registry, "GENERATION", generation))
    functions, found = [func], []
    for step in steps:
        kind = step[0]
        value = None
        if kind == "name":
            _, index, name, fp = step
            value = lookup(functions[index], name)
            if value is MISSING or fingerprint(value) != fp:
                return None
            b.name(functions[index], name, value)
        elif kind == "attr":
            _, parent, name, fp = step
            value = b.attr(found[parent], name)
            if value is MISSING or fingerprint(value) != fp:
                return None
        elif kind == "function":
            value = found[step[1]]
            if not isinstance(value, types.FunctionType):
                return None
            functions.append(value)
        elif kind == "code":
            _, index, digest, defaults = step
            f = functions[index]
            if source_digest(f) != digest or (fingerprint(f.__defaults__), fingerprint(f.__kwdefaults__)) != defaults:
                return None
            b.function(f)
        found.append(value)
    return Guard(b.dicts, b.attrs, b.cells, b.snapshots, None), found

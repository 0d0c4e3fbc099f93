"""Structured values (pytrees): dicts, named tuples, dataclasses and the user's plain objects.

What the API, the compiler and the runtime agree on about a structure:

- its *kind* (the compiled code's assumption, part of the cache key): for a structure argument a
  tuple `("tree", tag, class, keys, child kinds)` with `tag` one of 'dict', 'namedtuple',
  'record' (a dataclass instance or an object of a user's class, whose keys are its fields or
  instance attributes); a function, class or module held in one is `("static", value)`, baked in;
- its gradient, of the same structure: a dict with the same keys, a named tuple of its own type,
  a dataclass / object of its own class (made without calling `__init__`, its fields set to the
  gradients), and `None` for a leaf that is not a number or an array (a string, None, a bool, a
  function); a number gets a float and an array a float array of its shape, as at top level;
- while the backward pass runs, the gradient of a record is a `Record` (its class and a dict of
  field gradients; a missing field is a structural zero), rebuilt as the class by `rebuild`.

    p = Params(W=W, b=0.5, name="layer")    ->   kind ('tree', 'record', Params, ('W', 'b', 'name'),
                                                       ('f2', 'f0', 'num'))
    gradient: Params(W=<array>, b=<float>, name=None)
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import types

import numpy as np

from .frontend import is_library_module

MAX_DEPTH = 8  # structures nested deeper (or cyclic) are opaque values: their reads are refused if varied
MAX_MIXED = 64  # a list of structures of several kinds is unrolled where it is looped over, up to this length


class Record:
    """The gradient of a dataclass instance or user object during the backward pass."""

    __slots__ = ("fields", "kind")

    def __init__(self, kind: type, fields: dict):
        self.kind = kind
        self.fields = fields

    def __repr__(self) -> str:
        return f"Record({self.kind.__name__}, {self.fields!r})"


def is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields") and hasattr(type(x), "_make")


def is_static(x) -> bool:
    """A value the compiled code bakes in when a structure holds it: a function, a class, a module."""
    return isinstance(x, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, np.ufunc))


def record_fields(x) -> tuple | None:
    """The field names of a record (a dataclass instance's fields, a user object's instance
    attributes), or None when `x` is not one."""
    if isinstance(x, (type, tuple, list, dict, np.ndarray, np.generic)):
        return None
    if dataclasses.is_dataclass(x):
        return tuple(f.name for f in dataclasses.fields(x) if hasattr(x, f.name))
    kind = type(x)
    if is_library_module(getattr(kind, "__module__", None)) or getattr(kind, "__module__", "").startswith(
            "adjoint_compiler"):
        return None
    if is_static(x) or isinstance(x, (types.MethodType, types.BuiltinMethodType)) or not hasattr(x, "__dict__"):
        return None
    return tuple(vars(x))


def fields_of(x) -> tuple | None:
    """(tag, keys) of a structure, or None for a leaf (tuples and lists other than named tuples
    are sequences, handled as they always were)."""
    if type(x) is dict:
        return "dict", tuple(x)
    if is_namedtuple(x):
        return "namedtuple", tuple(type(x)._fields)
    keys = record_fields(x)
    if keys is not None:
        return "record", keys
    return None


def item(x, key):
    """The item `key` of structure `x` (a dict's value, a field)."""
    return x[key] if type(x) is dict else getattr(x, key)


def is_tree_kind(kind) -> bool:
    return isinstance(kind, tuple) and kind[0] == "tree"


def child_kind(kind, key):
    """The kind of item `key` of a structure of kind `kind`, or None when it is not one of its items."""
    if not is_tree_kind(kind) or kind[1] in ("seq", "mixed"):
        return None
    keys, kinds = kind[3], kind[4]
    for k, c in zip(keys, kinds):
        if k == key and type(k) is type(key):
            return c
    return None


# -- gradients ------------------------------------------------------------------------------------

def field_adjoint(g, x, name: str):
    """The gradient of structure `x` from the gradient `g` of its attribute `name`: `g` at that
    field, structural zeros elsewhere. An attribute that is no field (a class constant) passes
    none; one computed by a property or descriptor is refused (the compiler inlines properties)."""
    if g is None:
        return None
    if is_namedtuple(x):
        fields = type(x)._fields
        if name in fields:
            out = [None] * len(fields)
            out[fields.index(name)] = g
            return type(x)._make(out)
    keys = record_fields(x)
    if keys is not None and name in keys:
        fields = dict.fromkeys(keys)
        fields[name] = g
        return Record(type(x), fields)
    import inspect

    found = inspect.getattr_static(type(x), name, None)
    if found is not None and not hasattr(found, "__get__") and (keys is not None or is_namedtuple(x)):
        return None  # a class attribute: a constant
    raise TypeError(f"reading `.{name}` of a {type(x).__name__}: only the fields of named tuples, dataclasses and "
                    "objects of the user's classes (and the named results of np.linalg) have a gradient rule")


def item_adjoint(g, x, key):
    """The gradient of dict `x` from the gradient `g` of `x[key]`."""
    out = dict.fromkeys(x)
    out[key] = g
    return out


def accum(a, b, add):
    """`a + b` for dict and Record gradients (`add` accumulates the items)."""
    if type(a) is dict:
        if type(b) is not dict:
            raise TypeError(f"cannot add the gradient of a dict to {type(b).__name__}")
        out = dict(a)
        for k, v in b.items():
            out[k] = add(out.get(k), v)
        return out
    if type(b) is not Record or b.kind is not a.kind:
        raise TypeError(f"cannot add the gradient of a {a.kind.__name__} to {type(b).__name__}")
    fields = dict(a.fields)
    for k, v in b.fields.items():
        fields[k] = add(fields.get(k), v)
    return Record(a.kind, fields)


_VISITING = threading.local()  # the structures being walked (a cyclic object is cut where it repeats)


@contextlib.contextmanager
def _visiting(x):
    seen = getattr(_VISITING, "ids", None)
    if seen is None:
        seen = _VISITING.ids = set()
    seen.add(id(x))
    try:
        yield
    finally:
        seen.discard(id(x))


def _cyclic(x) -> bool:
    return id(x) in getattr(_VISITING, "ids", ()) or len(getattr(_VISITING, "ids", ())) > 4 * MAX_DEPTH


def zeros(x, zeros_like):
    """The zero gradient of a dict or record `x` (None when `x` is neither)."""
    if _cyclic(x):
        return None
    with _visiting(x):
        if type(x) is dict:
            return {k: zeros_like(v) for k, v in x.items()}
        keys = record_fields(x)
        if keys is None:
            return None
        return Record(type(x), {k: zeros_like(getattr(x, k)) for k in keys})


def differentiable_leaf(x) -> bool:
    """Whether a leaf of a structure gets a gradient: numbers (not bools) and numeric arrays."""
    if isinstance(x, (bool, np.bool_)) or x is None:
        return False
    if isinstance(x, (int, float, complex, np.number)):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "biufc"
    data = getattr(x, "data", None)  # a Buffer
    if isinstance(data, np.ndarray) and hasattr(x, "shape"):
        return True
    return isinstance(x, (tuple, list, dict)) or fields_of(x) is not None


def rebuild(g, x, gradient):
    """The gradient handed to the user for structure `x` (a dict or record) from its internal
    gradient `g` (a dict, a Record, an instance of `x`'s class given as a cotangent, or None):
    `gradient(gv, xv)` for each differentiable leaf, None for the others."""
    def leaf(gv, xv):
        return gradient(gv, xv) if differentiable_leaf(xv) and not _cyclic(xv) else None

    with _visiting(x):
        return _rebuild(g, x, leaf)


def _rebuild(g, x, leaf):
    if type(x) is dict:
        return {k: leaf(None if g is None else g.get(k), v) for k, v in x.items()}
    keys = record_fields(x)
    out = object.__new__(type(x))
    for k in keys:
        if g is None:
            gv = None
        elif type(g) is Record:
            gv = g.fields.get(k)
        else:
            gv = getattr(g, k, None)
        object.__setattr__(out, k, leaf(gv, getattr(x, k)))
    return out


def to_internal(v):
    """A user's structured cotangent (dict, dataclass, object) in the form the backward pass adds."""
    if type(v) is dict:
        return {k: to_internal(x) for k, x in v.items()}
    if isinstance(v, tuple) and is_namedtuple(v):
        return type(v)._make([to_internal(x) for x in v])
    if isinstance(v, (tuple, list)):
        return type(v)(to_internal(x) for x in v)
    keys = record_fields(v)
    if keys is not None:
        return Record(type(v), {k: to_internal(getattr(v, k)) for k in keys})
    return v


# -- structures built inside a differentiated function ----------------------------------------------

def constructible(cls: type) -> bool:
    """Whether `cls(...)` is compiled as a structure display: a NamedTuple class, or a dataclass whose
    `__init__` is the generated one (every field an init field, no `__post_init__`)."""
    if issubclass(cls, tuple):
        return hasattr(cls, "_fields") and hasattr(cls, "_make") and cls.__new__ is not tuple.__new__ \
            and not is_library_module(cls.__module__)
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return False
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    if code is None or code.co_filename != "<string>":  # (a hand-written __init__ is compiled as code)
        return False
    return all(f.init for f in dataclasses.fields(cls))


def constructor_fields(cls: type) -> tuple:
    if issubclass(cls, tuple):
        return tuple(cls._fields)
    return tuple(f.name for f in dataclasses.fields(cls))

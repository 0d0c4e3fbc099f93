"""Helpers of the structure tests: deep snapshots and comparisons of dicts, named tuples,
dataclasses and objects, and the check that a gradient has its argument's structure."""
from __future__ import annotations

import copy
import dataclasses
import types

import numpy as np

from adjoint_compiler.testing import check_grads


def fields(v):
    """(keys, items) of a structure, or None."""
    if type(v) is dict:
        return list(v), list(v.values())
    if isinstance(v, tuple) and hasattr(type(v), "_fields"):
        return list(type(v)._fields), list(v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        names = [f.name for f in dataclasses.fields(v)]
        return names, [getattr(v, n) for n in names]
    if hasattr(v, "__dict__") and not isinstance(v, (type, types.FunctionType, types.ModuleType)) \
            and type(v).__module__ not in ("builtins", "numpy") and not type(v).__module__.startswith("numpy"):
        return list(vars(v)), list(vars(v).values())
    return None


def snapshot(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    parts = fields(v)
    if parts is not None:
        made = copy.copy(v)
        for k, item in zip(*parts):
            if type(v) is dict:
                made[k] = snapshot(item)
            elif isinstance(v, tuple):
                return type(v)._make([snapshot(x) for x in v])
            else:
                object.__setattr__(made, k, snapshot(item))
        return made
    if isinstance(v, (tuple, list)):
        return type(v)(snapshot(x) for x in v)
    return v


def assert_unchanged(before, after, what="input"):
    assert type(before) is type(after), what
    if isinstance(before, np.ndarray):
        assert np.array_equal(before, after), f"{what} was modified"
        return
    parts = fields(before)
    if parts is not None:
        for k, b, a in zip(parts[0], parts[1], fields(after)[1]):
            assert_unchanged(b, a, f"{what}.{k}")
        return
    if isinstance(before, (tuple, list)):
        for i, (b, a) in enumerate(zip(before, after)):
            assert_unchanged(b, a, f"{what}[{i}]")
        return
    if callable(before):
        assert before is after, what
        return
    assert before == after, f"{what} was modified"


def assert_same_structure(g, x, what="gradient"):
    """The gradient `g` of argument `x`: the same container types and keys, a float for a number,
    a float array of the same shape for an array, None for a leaf that is not a number."""
    parts = fields(x)
    if parts is not None:
        assert type(g) is type(x), f"{what}: {type(g).__name__} is not {type(x).__name__}"
        gparts = fields(g)
        assert gparts[0] == parts[0], f"{what}: keys {gparts[0]} != {parts[0]}"
        for k, gi, xi in zip(parts[0], gparts[1], parts[1]):
            assert_same_structure(gi, xi, f"{what}.{k}")
        return
    if isinstance(x, (tuple, list)):
        assert type(g) is type(x) and len(g) == len(x), what
        for i, (gi, xi) in enumerate(zip(g, x)):
            assert_same_structure(gi, xi, f"{what}[{i}]")
        return
    if isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray) and g.shape == x.shape and g.dtype.kind == "f", f"{what}: {g!r}"
        return
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(x, str) or callable(x):
        assert g is None, f"{what}: {g!r} for the non-numeric leaf {x!r}"
        return
    if isinstance(x, (int, float)):
        assert type(g) is float, f"{what}: {type(g).__name__}"
        return
    raise AssertionError(f"{what}: unexpected leaf {x!r}")


def arrays_of(v, out=None):
    out = [] if out is None else out
    if isinstance(v, np.ndarray):
        out.append(v)
        return out
    parts = fields(v)
    items = parts[1] if parts is not None else (v if isinstance(v, (tuple, list)) else [])
    for item in items:
        arrays_of(item, out)
    return out


def check_tree(f, *args, wrt=0):
    """check_grads (finite differences), then: the arguments unchanged, each gradient of its
    argument's structure, sharing no memory with any argument."""
    before = snapshot(args)
    wrts = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    g = check_grads(f, *args, wrt=wrts)
    assert_unchanged(before, args, "arguments")
    for gi, i in zip(g, wrts):
        assert_same_structure(gi, args[i], f"gradient of argument {i}")
        for a in arrays_of(gi):
            assert not any(np.shares_memory(a, b) for b in arrays_of(args)), "a gradient aliases an argument"
    return g[0] if isinstance(wrt, int) else g

"""Forward mode: jvp, jvp_source and jacfwd.

`jvp(f, primals, tangents)` runs the generated `<f>_jvp` function (primal and tangent statements
interleaved, see `forward.py`), compiled once per (function, differentiated positions, argument
kinds) and cached like the gradients (guard and disk cache included). JAX's conventions:

    value, tangent = jvp(f, (x, y), (x_dot, y_dot))     # f(x, y) and its derivative along (x_dot, y_dot)
    J = jacfwd(f)(x)                                      # shape f(x).shape + x.shape

A tangent has its primal's structure: a float for a number, a float array of the same shape for an
array, a tuple or list of tangents for a tuple or list. Integer and boolean arguments carry no
tangent (give None or zeros). The tangent returned never shares memory with an argument or a
tangent passed in.

Complex values follow JAX: a complex argument (a number or an array passed itself) takes a
complex (or real) tangent t, and the tangent out is the derivative along t with C read as R^2
(f'(z) t for a holomorphic f); a complex output has a complex tangent. `jacfwd` takes real
arguments (complex intermediates and outputs are fine); with respect to a complex argument it
is refused (its Jacobian over R^2 is not one complex matrix unless f is holomorphic).
"""
from __future__ import annotations

import inspect
import numbers

import numpy as np

from . import frontend, trees
from .api import (
    _arrays_in,
    _bind,
    _check_aliasing,
    _check_real,
    _locate,
    _name,
    _normalize_wrt,
    _param_names,
    _through_partial,
    compiled,
)
from .buffer import Buffer
from .errors import ArgumentError, ArgumentIndexError
from .frontend import _unwrap
from .jacobians import returning_argument


def _integer(value) -> bool:
    """Whether `value` holds only integers or booleans (it carries no tangent)."""
    if isinstance(value, (bool, np.bool_, numbers.Integral)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biu"
    return False


def _numeric(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_numeric(v) for v in value)
    if isinstance(value, Buffer):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fiubc"
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (str, bytes))


def _complex(value) -> bool:
    return isinstance(value, (complex, np.complexfloating)) or (isinstance(value, np.ndarray)
                                                                and value.dtype.kind == "c")


def _zero(tangent) -> bool:
    if tangent is None:
        return True
    try:
        return not np.any(np.asarray(tangent, dtype=float))
    except (TypeError, ValueError):
        return False


def _tangent_for(primal, tangent, what: str):
    """The tangent `tangent` of `primal` in the form the generated code reads (a float, a float
    array of the primal's shape, a Buffer, a tuple or list), or ArgumentError."""
    if type(primal) is dict or (not isinstance(primal, (tuple, list)) and trees.record_fields(primal) is not None):
        raise ArgumentError(f"{what}: forward mode (jvp, jacfwd) takes numbers, arrays, tuples and lists; "
                            f"a {type(primal).__name__} argument is supported by reverse mode (grad, value_and_grad, "
                            "vjp) only so far: pass its arrays as arguments of their own")
    if isinstance(primal, (tuple, list)):
        if not isinstance(tangent, (tuple, list)) or len(tangent) != len(primal):
            raise ArgumentError(f"{what} must be a tuple or list of {len(primal)} tangents, like its primal")
        items = [_tangent_for(p, t, f"{what}[{k}]") for k, (p, t) in enumerate(zip(primal, tangent))]
        return type(primal)(items) if type(primal) in (tuple, list) else type(primal)._make(items)
    if _integer(primal) or not _numeric(primal):
        if not _zero(tangent):
            raise ArgumentError(f"{what} belongs to an integer, boolean or non-numeric value, which carries no "
                                "tangent: give None or zeros")
        return 0.0 if np.ndim(primal) == 0 else np.zeros(np.shape(primal))
    if tangent is None:
        raise ArgumentError(f"{what} is None; give a tangent of the primal's shape (zeros for none)")
    try:
        value = np.asarray(tangent.data if isinstance(tangent, Buffer) else tangent)
    except Exception:  # noqa: BLE001 -- ragged nesting and the like: not a tangent
        value = None
    if value is None or value.dtype.kind not in ("fiubc" if _complex(primal) else "fiub"):
        kind = "complex numbers" if value is not None and value.dtype.kind == "c" else type(tangent).__name__
        raise ArgumentError(f"{what} must hold real numbers, got {kind}" + (
            " (a real argument takes a real tangent; a complex argument a complex one)"
            if kind == "complex numbers" else ""))
    shape = np.shape(primal)
    if value.shape != shape:
        raise ArgumentError(f"{what} must have the shape of its primal, {shape}, got shape {value.shape}")
    if isinstance(primal, Buffer):
        return Buffer(value.astype(float))
    if _complex(primal):  # (a real tangent of a complex value: the direction t + 0j)
        return np.array(value, dtype=primal.dtype) if isinstance(primal, np.ndarray) else complex(value)
    if isinstance(primal, np.ndarray):
        return np.array(value, dtype=primal.dtype if primal.dtype.kind == "f" else float)
    return float(value)


def _deliver(tangent, value, inputs: list):
    """The tangent handed to the user: the output's structure, floats, float arrays of the
    output's shape (zeros for integer outputs), None for None, never memory of an input or of
    another part of the tangent (`inputs` grows with the arrays handed out)."""
    if isinstance(value, (tuple, list)):
        tangent = [None] * len(value) if tangent is None else tangent
        items = [_deliver(t, v, inputs) for t, v in zip(tangent, value)]
        return type(value)(items) if type(value) in (tuple, list) else type(value)._make(items)
    if value is None or isinstance(value, (str, bytes)):
        return None
    shape = trees.fields_of(value)
    if shape is not None:  # a dict, dataclass or object made by the function: its structure
        items = {k: _deliver(None if tangent is None else trees.item(tangent, k) if trees.fields_of(tangent)
                             else None, trees.item(value, k), inputs) for k in shape[1]}
        if shape[0] == "dict":
            return items
        made = object.__new__(type(value))
        for k, v in items.items():
            object.__setattr__(made, k, v)
        return made
    if isinstance(value, Buffer):
        value = value.data
    if isinstance(tangent, Buffer):
        tangent = tangent.data
    if not isinstance(value, np.ndarray) and np.ndim(value) == 0:
        if tangent is None or _integer(value):
            return 0j if _complex(value) else 0.0
        scalar = _real_unless(np.asarray(tangent).reshape(()), value)
        return complex(scalar) if scalar.dtype.kind == "c" else float(scalar)
    shape = np.shape(value)
    if tangent is None or _integer(value):
        return np.zeros(shape, dtype=value.dtype if _complex(value) else float)
    out = _real_unless(np.asarray(tangent), value)
    if out.shape != shape:
        out = np.broadcast_to(out, shape)
    if not out.flags.writeable or not out.flags.owndata or any(np.may_share_memory(out, a) for a in inputs):
        out = np.array(out)
    inputs.append(out)
    return out


def _real_unless(tangent: np.ndarray, value) -> np.ndarray:
    """The tangent as a float array, or a complex one for a complex `value` (a complex tangent of a
    real value would be a wrong rule: never dropped silently)."""
    if _complex(value):
        return tangent if tangent.dtype.kind == "c" else tangent.astype(np.result_type(value))
    if tangent.dtype.kind == "c":
        from .errors import InternalError
        raise InternalError(f"the tangent of a real value came out complex ({type(value).__name__}); "
                            "please report this")
    return tangent.astype(float, copy=False) if tangent.dtype != float else tangent


def _run(func, entry, values: list, tangents: list, checked: bool = False):
    """The generated jvp function's `(value, tangent)`; `checked`: the arguments' aliasing was
    checked already (a Jacobian runs it once per entry of an argument)."""
    if entry.written and not checked:
        _check_aliasing(func, entry, values)
    try:
        return entry.function(*values, *tangents)
    except Exception as exc:
        _locate(exc, entry)
        raise


def jvp(func, primals: tuple, tangents: tuple) -> tuple:
    """`(func(*primals), tangent_out)`: the value and its derivative along `tangents` (forward
    mode). `primals` and `tangents` are tuples of the same structure as the positional arguments;
    `tangent_out` has the structure of the output (a float, an array, a tuple)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise ArgumentError("jvp(f, primals, tangents): primals and tangents must be tuples of the positional "
                            "arguments and their tangents")
    if len(primals) != len(tangents):
        raise ArgumentError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    own = tuple(range(len(primals)))
    target, moved, args, kwargs = _through_partial(func, own, tuple(primals), {})
    values = _bind(target, args, kwargs)
    _check_real(target, values, allow_complex=True)
    names = _param_names(target)
    wrt, given = [], []
    for k, i in zip(own, moved):
        what = f"the tangent of `{names[i] if i < len(names) else i}`"
        tangent = _tangent_for(values[i], tangents[k], what)
        if _numeric(values[i]) and not _integer(values[i]):
            wrt.append(i)
            given.append(tangent)
    order = sorted(range(len(wrt)), key=lambda j: wrt[j])
    wrt, given = [wrt[j] for j in order], [given[j] for j in order]
    entry = compiled(target, tuple(wrt), values, "jvp")
    value, tangent = _run(target, entry, values, given)
    if value is None and entry.written:
        raise ArgumentError(f"jvp: {_name(func)} returns None and writes its result into an argument; jvp gives "
                            "the tangent of what a function returns: use jacfwd(f, wrt, out=k) for the argument k "
                            "it writes, or vjp(f, ...), whose outputs are the arguments it writes into")
    return value, _deliver(tangent, value, _arrays_in(list(values) + list(given)))


def jvp_source(func, args: tuple | None = None) -> str:
    """The generated Python source of `func`'s jvp (forward mode), with tangents for every
    parameter; with example `args`, the code that runs for arguments of those kinds (integer
    arguments then get no tangent)."""
    target = _unwrap(func)
    if not hasattr(target, "__adjoint_spec__"):
        frontend.check_first_order(target)
    n = len(inspect.signature(target).parameters)
    if args is None:
        return compiled(func, tuple(range(n)), [None] * n, "jvp").source
    values = _bind(func, tuple(args), {})
    wrt = tuple(i for i, v in enumerate(values) if _numeric(v) and not _integer(v))
    return compiled(func, wrt, values, "jvp").source


# -- Jacobians --------------------------------------------------------------------------------------

def _unit(like, flat: int):
    """The tangent that moves entry `flat` of `like` (a number or an array) by one."""
    if not isinstance(like, np.ndarray):
        return 1.0
    e = np.zeros(like.shape, dtype=like.dtype if like.dtype.kind == "f" else float)
    e.reshape(-1)[flat] = 1.0
    return e


def _column(tangent, value):
    """The tangent of a value as an array of the value's shape (zeros for an integer output)."""
    if isinstance(value, Buffer):
        value = value.data
    if isinstance(tangent, Buffer):
        tangent = tangent.data
    if tangent is None or _integer(value):
        return np.zeros(np.shape(value))
    column = _real_unless(np.asarray(tangent), value)
    return column if column.shape == np.shape(value) else np.broadcast_to(column, np.shape(value))


def jacfwd(func, wrt: int | tuple = 0, out: int | None = None):
    """A function of `func`'s arguments returning the Jacobian of its output with respect to
    argument `wrt`, of shape `output.shape + argument.shape` (a float for scalars; a tuple over
    `wrt` when it is a tuple; a tuple over the outputs for a tuple output), from one jvp per
    entry of the argument (forward mode). With `out=k`, the output is the final value of argument
    k, which `func` writes into (`jacfwd(rhs, wrt=1, out=0)` is d du / d u for an in-place
    `rhs(du, u, p, t)`)."""
    wrt_t, as_tuple = _normalize_wrt(wrt)
    if out is not None and (not isinstance(out, (int, np.integer)) or isinstance(out, bool)):
        raise ArgumentError(f"out must be the position of an argument, got {out!r}")

    def jacobian(*args, **kwargs):
        target, moved, args2, kwargs2 = _through_partial(func, wrt_t, args, kwargs)
        values = list(_bind(target, args2, kwargs2))
        n = len(values)
        for i in moved:
            if not -n <= i < n:
                raise ArgumentIndexError(f"wrt={i} is out of range: {_name(func)} takes {n} arguments")
        positions = [i % n for i in moved]
        _check_real(target, values, allow_complex=True)
        for i in positions:
            v = values[i]
            if _complex(v):
                names = _param_names(target)
                raise ArgumentError(f"jacfwd: argument `{names[i] if i < len(names) else i}` of {_name(func)} is "
                                    "complex; jacfwd differentiates with respect to real arguments (a complex "
                                    "function of a complex argument has one complex Jacobian only if it is "
                                    "holomorphic). Use jvp with complex tangents, or pass the real and imaginary "
                                    "parts as real arguments")
            if isinstance(v, (tuple, list, Buffer)) or not _numeric(v):
                raise ArgumentError(f"jacfwd: argument {i} of {_name(func)} must be a number or an array, got "
                                    f"{type(v).__name__}")
            if _integer(v):  # an integer argument is differentiated as the float it stands for
                values[i] = float(v) if np.ndim(v) == 0 and not isinstance(v, np.ndarray) else np.asarray(v, float)
        if out is None:
            runner = target
        else:  # (a position among `func`'s own parameters, as `wrt`)
            runner = returning_argument(target, _through_partial(func, (int(out),), args, kwargs, negatives_positional=False)[1][0])
        blocks = []
        value = None
        for i in positions:
            entry = compiled(runner, (i,), values, "jvp")
            shape = np.shape(values[i])
            columns = []
            for flat in range(int(np.prod(shape))):
                value, tangent = _run(runner, entry, values, [_unit(values[i], flat)], checked=flat > 0)
                columns.append(tangent)
            blocks.append((shape, columns))
        if value is None:  # an argument with no entries: run once for the output's structure
            value = runner(*values)
        return _assemble(value, blocks, as_tuple, _name(func))

    jacobian.__name__ = f"jacfwd_{getattr(func, '__name__', 'f')}"
    frontend.DERIVATIVES.add(jacobian)
    return jacobian


def _assemble(value, blocks: list, as_tuple: bool, name: str):
    """The Jacobian(s) from the tangent columns: `blocks` holds, per `wrt` argument, its shape and
    the output tangent for each of its entries."""
    if value is None:
        raise ArgumentError(f"jacfwd: {name} returns None; for a function that writes its result into an "
                            "argument, give that argument's position as `out=`")
    if isinstance(value, (tuple, list)):
        parts = [_assemble(v, [(s, [c[k] for c in cols]) for s, cols in blocks], as_tuple, name)
                 for k, v in enumerate(value)]
        return tuple(parts)
    if isinstance(value, dict):  # (as JAX: a dict of the Jacobians of its items)
        return {key: _assemble(v, [(s, [c[key] for c in cols]) for s, cols in blocks], as_tuple, name)
                for key, v in value.items()}
    out_shape = np.shape(value.data if isinstance(value, Buffer) else value)
    jacobians = []
    for shape, columns in blocks:
        if not columns:
            jacobians.append(np.zeros(out_shape + shape))
            continue
        stacked = np.stack([_column(c, value) for c in columns], axis=-1)
        jac = stacked.reshape(out_shape + shape)
        jacobians.append((complex(jac) if jac.dtype.kind == "c" else float(jac)) if jac.ndim == 0 else jac)
    return tuple(jacobians) if as_tuple else jacobians[0]

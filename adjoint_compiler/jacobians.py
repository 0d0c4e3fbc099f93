"""Jacobians by reverse mode: one forward pass, one pullback per entry of the output.

    jacrev(f, wrt=0)(*args)            the Jacobian d f / d args[wrt], of shape out.shape + arg.shape
    jacobian(rhs, wrt=1, out=0)(*args) for an in-place `rhs(du, u, p, t)`: d du / d u, where `du`
                                       holds the result when `rhs` returns

For `out=k` the compiler differentiates a small generated function that calls `rhs` and returns
its argument `k` (the writes into it are write nodes like any other):

    def rhs_out_0(du, u, p, t):
        rhs(du, u, p, t)
        return du
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from . import loader
from .errors import ArgumentError, ArgumentIndexError


_RETURNING: dict = {}  # (function, out position) -> the function returning that argument's final value


def returning_argument(func, out: int):
    """A plain function with `func`'s parameters (their kinds and defaults) that calls it and
    returns its positional argument `out` (negative counts from the end): what an in-place
    `rhs(du, u, p, t)` computes. Its source is registered for the compiler to read; the callee and
    the defaults are bound in its namespace, so any function value serves (a lambda, a partial, a
    parameter named like the function). Raises ArgumentError for `*args` / `**kwargs` or an `out`
    that is no positional parameter."""
    key = (func, out)
    if key in _RETURNING:
        return _RETURNING[key]
    shown = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or type(func).__name__
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        raise ArgumentError(f"out={out}: the parameters of {shown} cannot be read") from None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise ArgumentError(f"out={out}: {shown} takes *args or **kwargs; an in-place function for out= names "
                            "its parameters")
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not -len(positional) <= out < len(positional):
        raise ArgumentIndexError(f"out={out} is out of range: {shown} takes {len(positional)} positional arguments")
    names = {p.name for p in params}
    callee = "inplace_function"
    while callee in names:
        callee += "_"
    namespace = {callee: func}
    heads, passed, seen_keyword = [], [], False
    for p in params:
        head = p.name
        if p.default is not p.empty:
            label = f"{callee}_default_{p.name}"
            namespace[label] = p.default
            head += f"={label}"
        if p.kind is p.KEYWORD_ONLY and not seen_keyword:
            heads.append("*")
            seen_keyword = True
        heads.append(head)
        passed.append(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}")
    base = getattr(func, "__name__", None)
    name = (base if isinstance(base, str) and base.isidentifier() else "function") + f"_out{out % len(positional)}"
    source = (f"def {name}({', '.join(heads)}):\n    {callee}({', '.join(passed)})\n"
              f"    return {positional[out].name}\n")
    _RETURNING[key] = loader.load(source, f"<adjoint_compiler {name} of {shown}>", namespace)[name]
    return _RETURNING[key]


def refuse_structures(entry: str, func, args, wrt_t) -> None:
    """A Jacobian or Hessian is taken with respect to arrays and numbers (and tuples of them): a
    dict, named tuple, dataclass or object argument is refused, naming it."""
    from . import trees

    for i in wrt_t:
        if -len(args) <= i < len(args) and trees.fields_of(args[i]) is not None:
            raise ArgumentError(f"{entry} of {getattr(func, '__name__', func)}: argument {i} is a "
                                f"{type(args[i]).__name__}; Jacobians and Hessians are taken with respect to arrays "
                                "and numbers: pass its arrays as arguments of their own (grad and vjp take structures)")


def jacrev(func, wrt=0, out=None):
    """The Jacobian of `func` w.r.t. argument `wrt` (an int or a tuple of ints), by reverse mode:
    a function of `func`'s arguments returning an array of shape `out.shape + arg.shape` (a tuple
    over `wrt` when it is a tuple). `func` returns a scalar or an array; with `out=k`, `func` is an
    in-place function whose result is what it leaves in its argument `k` (its return value is
    ignored), and its Jacobian is that of argument k's final value."""
    from .api import _normalize_wrt, vjp
    wrt_t, as_tuple = _normalize_wrt(wrt)
    if out is not None and (not isinstance(out, (int, np.integer)) or isinstance(out, bool)):
        raise ArgumentError(f"out must be the position of an argument, got {out!r}")
    target = func if out is None else returning_argument(func, int(out))

    def jacobian_function(*args, **kwargs):
        refuse_structures("jacrev", func, args, wrt_t)
        # (keyword arguments are bound as a partial binds them: jacfwd takes them alike)
        value, pullback = vjp(functools.partial(target, **kwargs) if kwargs else target, *args)
        if isinstance(value, (tuple, list)):
            raise ArgumentError(f"jacrev needs a function that returns one array or number; "
                                f"{getattr(func, '__name__', func)} returned a {type(value).__name__}")
        value = np.asarray(value)
        arg_shapes = [np.shape(args[i]) for i in wrt_t]
        # (a complex argument's rows are complex: each is the gradient dL/dx - i dL/dy of one output)
        blocks = [np.zeros(value.shape + s, complex if np.iscomplexobj(args[i]) else float)
                  for s, i in zip(arg_shapes, wrt_t)]
        for flat in range(value.size):
            cotangent = np.zeros(value.shape)
            cotangent.reshape(-1)[flat] = 1.0
            grads = pullback(cotangent if value.shape else 1.0)
            at = np.unravel_index(flat, value.shape) if value.shape else ()
            for block, i in zip(blocks, wrt_t):
                block[at] = grads[i]
        blocks = [(complex(b) if b.dtype.kind == "c" else float(b)) if b.ndim == 0 else b for b in blocks]
        return tuple(blocks) if as_tuple else blocks[0]
    jacobian_function.__name__ = f"jacobian_{getattr(func, '__name__', 'f')}"
    return jacobian_function


jacobian = jacrev

"""Derivatives of derivatives: a gradient made by `grad` or `value_and_grad` is differentiated
through its generated source, which is plain Python + NumPy in the compiler's own input language
(every runtime helper it calls has a rule, `rules/runtime_helpers.py`).

For `grad(grad(f))(x)`, the inner gradient is compiled for the argument kinds of the call, and
the outer one differentiates a small generated function that calls it and returns what the user's
`grad(f)` returns (the gradient, or the tuple of gradients for a tuple `wrt`):

    def f_gradient(x):                 # printed by `adjoint_source(grad(f))`
        return f_grad(x)[0]
"""
from __future__ import annotations

import inspect

from . import loader


def as_function(inner, as_tuple: bool, mode: str):
    """A plain function with the signature of the compiled gradient `inner` that returns what the
    user's gradient function returns; its source is registered for the compiler to read."""
    name = inner.function.__name__
    params = ", ".join(inspect.signature(inner.function).parameters)
    pick = "grads" if as_tuple else "grads[0]"
    if mode == "joint":
        body = f"    value, grads = {name}({params})\n    return value, {pick}\n"
    else:
        body = f"    grads = {name}({params})\n    return {pick}\n"
    wrapper = name[:-len("_grad")] + "_gradient"
    source = f"def {wrapper}({params}):\n{body}"
    namespace = loader.load(source, f"<adjoint_compiler {wrapper} of {inner.filename}>",
                            {name: inner.function})
    return namespace[wrapper]


class Both:
    """The guard of a gradient of a gradient: it holds while both compiled gradients' guards do."""

    __slots__ = ("inner", "outer")

    def __init__(self, outer, inner):
        self.outer, self.inner = outer, inner

    def holds(self) -> bool:
        return self.outer.holds() and self.inner.holds()


def _method_parts(func, wrt_t: tuple, as_tuple: bool):
    """(function, its wrt, the object) for a bound method of a user's function, else None."""
    import types

    from . import frontend

    if not (isinstance(func, types.MethodType) and isinstance(func.__func__, types.FunctionType)
            and not frontend.is_derivative(func.__func__)):
        return None
    moved = tuple(i + 1 if i >= 0 else i for i in wrt_t)
    return func.__func__, (moved if as_tuple else moved[0]), func.__self__


def hvp(func, wrt=0):
    """`hvp(f, wrt)(*args, v)`: the Hessian of scalar `f` w.r.t. argument `wrt`, times `v`, without
    forming the Hessian (reverse over reverse: the pullback of the gradient). With a tuple `wrt`,
    `v` is a tuple with one direction per argument and the result a tuple."""
    from .api import _normalize_wrt, grad, vjp
    wrt_t, as_tuple = _normalize_wrt(wrt)
    method = _method_parts(func, wrt_t, as_tuple)
    if method is not None:  # a bound method: the function's, its object first (not differentiated)
        inner = hvp(method[0], method[1])
        return lambda *args: inner(method[2], *args)
    gradient = grad(func, wrt)

    def hessian_vector_product(*args):
        *args, v = args
        _, pullback = vjp(gradient, *args)
        cotangents = pullback(v)
        picked = tuple(cotangents[i] for i in wrt_t)
        return picked if as_tuple else picked[0]
    hessian_vector_product.__name__ = f"hvp_{getattr(func, '__name__', 'f')}"
    return hessian_vector_product


def hessian(func, wrt=0):
    """`hessian(f, wrt)(*args)`: the Hessian of scalar `f` w.r.t. argument `wrt`, of shape
    `arg.shape + arg.shape` (a float for a float argument); with a tuple `wrt`, a tuple of rows of
    blocks, `H[i][j]` of shape `args[i].shape + args[j].shape`. Built from one forward pass of the
    gradient and one pullback per entry of the arguments (reverse over reverse)."""
    import numpy as np

    from .api import _normalize_wrt, grad, vjp
    wrt_t, as_tuple = _normalize_wrt(wrt)
    method = _method_parts(func, wrt_t, as_tuple)
    if method is not None:  # a bound method: the function's, its object first (not differentiated)
        inner = hessian(method[0], method[1])
        return lambda *args: inner(method[2], *args)
    gradient = grad(func, wrt_t)

    def full_hessian(*args):
        from .jacobians import refuse_structures

        refuse_structures("hessian", func, args, wrt_t)
        _, pullback = vjp(gradient, *args)
        shapes = [np.shape(args[i]) for i in wrt_t]
        rows = []
        for k, shape in enumerate(shapes):
            columns = [np.zeros(shape + s) for s in shapes]
            for flat in range(int(np.prod(shape))):
                directions = tuple(np.zeros(s) if i != k else _unit(s, flat) for i, s in enumerate(shapes))
                cotangents = pullback(directions)
                for j, i in enumerate(wrt_t):
                    columns[j][np.unravel_index(flat, shape) if shape else ()] = cotangents[i]
            rows.append(tuple(float(c) if c.ndim == 0 else c for c in columns))
        return tuple(rows) if as_tuple else rows[0][0]
    full_hessian.__name__ = f"hessian_{getattr(func, '__name__', 'f')}"
    return full_hessian


def _unit(shape: tuple, flat: int):
    import numpy as np
    e = np.zeros(shape)
    e.reshape(-1)[flat] = 1.0
    return e if shape else 1.0

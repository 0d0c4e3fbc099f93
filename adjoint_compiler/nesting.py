"""Derivatives of derivatives: a gradient made by `grad` or `value_and_grad` is differentiated
through its generated source, which is plain Python + NumPy in the compiler's own input language
(every runtime helper it calls has a rule, `rules/runtime_helpers.py`).

For `grad(grad(f))(x)`, the inner gradient is compiled for the argument kinds of the call, and
the outer one differentiates a small generated function that calls it and returns what the user's
`grad(f)` returns (the gradient, or the tuple of gradients for a tuple `wrt`):

    def f_gradient(x):                 # printed by `adjoint_source(grad(f))`
        return f_grad(x)[0]

`hvp` and `hessian` take the jvp of that gradient (forward over reverse, linear in its loop trips:
`stacks` updates its tape lists in place, with their tangents); `grad(grad(f))` and `vjp` of a
gradient, its pullback (reverse over reverse, where `stacks` gives the tape lists cotangent
stacks), which is also `hvp`'s fallback for a gradient without tangent rules.

A function that takes a gradient inside its body (`np.sum(grad(loss)(w, x) ** 2)`, or a
`value_and_grad` or a `jvp` there) has it inlined by `ssa`: `inner_gradient` compiles the inner
function's gradient (or jvp) as differentiable code for the kinds of the call's arguments, and the
caller inlines its generated source like any helper call; the caller's guard holds while the inner
one does (`AllOf`), so a change to the inner function recompiles the caller. A lambda or nested
`def` made inside is lifted first (`ssa.lift`: its free names become parameters).
"""
from __future__ import annotations

import inspect
import threading

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


_BUILDING = threading.local()  # the functions whose inner gradients are being compiled, innermost last


def inner_gradient(func, wrt: tuple, as_tuple: bool, mode: str, kinds: tuple):
    """For `grad(func, wrt)` (mode 'grad') or `value_and_grad` ('joint') called inside a
    differentiated function: `func`'s gradient compiled as differentiable code for these argument
    kinds, as a plain function (`as_function`) the caller inlines, the guard of that compiled
    gradient (which the caller's guard must include) and its `changed_defaults` (a call taking
    one of those defaults must be refused). For `jvp(func, ...)` (mode 'jvp'): the
    generated jvp function itself, `f_jvp(*args, *tangents of wrt)` returning (value, tangent). A function whose body takes its own
    gradient is refused by `ssa` before it gets here (`being_built`)."""
    from . import api
    from .frontend import _unwrap
    building = getattr(_BUILDING, "stack", None)
    if building is None:
        building = _BUILDING.stack = []
    building.append(func)
    try:
        with api._COMPILE_LOCK:
            inner = api._build(_unwrap(func), wrt, kinds, mode, differentiable=True)
    finally:
        building.pop()
    return (inner.function if mode == "jvp" else as_function(inner, as_tuple, mode)), inner.guard, \
        inner.changed_defaults


def being_built(func) -> bool:
    """Whether `func`'s gradient is being compiled for a call inside a differentiated function."""
    return func in getattr(_BUILDING, "stack", ())


class AllOf:
    """The guard of a function whose body calls gradients: it holds while its own guard and
    those of the gradients compiled for it hold."""

    __slots__ = ("inner", "own")

    def __init__(self, own, inner: list):
        self.own, self.inner = own, tuple(inner)

    def holds(self) -> bool:
        return self.own.holds() and all(g.holds() for g in self.inner)

    portable = None  # (never stored on disk: the inner gradients' guards have no portable form)


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
    forming the Hessian. With a tuple `wrt`, `v` is a tuple with one direction per argument and the
    result a tuple.

    Forward over reverse: the jvp of the generated gradient along `v` (tangents for the `wrt`
    arguments alone), which costs a few gradients whatever the number of loop trips, as every
    statement of the gradient, tape pushes and pops included, gets one tangent statement. Where
    the gradient's code cannot be run forward (a helper it calls has no tangent rule), it is
    reverse over reverse (the pullback of the gradient), and `.fallback` on the returned function
    holds the located reason."""
    from .api import _normalize_wrt, grad, positional_wrt
    wrt_all, as_tuple = _normalize_wrt(wrt)
    method = _method_parts(func, wrt_all, as_tuple)
    if method is not None:  # a bound method: the function's, its object first (not differentiated)
        inner = hvp(method[0], method[1])
        return lambda *args: inner(method[2], *args)
    built = grad(func, wrt)

    def hessian_vector_product(*args, **kwargs):
        *args, v = args
        plain = _as_plain_call(func, wrt_all, args, kwargs)
        if plain is not None:  # a partial, or keyword arguments: the function's, all by position
            target, moved, values = plain
            return hvp(target, moved if as_tuple else moved[0])(*values, v)
        wrt_t = positional_wrt(func, wrt_all, args)
        gradient = built if wrt_t == wrt_all else grad(func, wrt_t if as_tuple else wrt_t[0])
        args = _as_floats(args, wrt_t)
        directions = tuple(v) if as_tuple else (v,)
        if len(directions) != len(wrt_t):
            from .errors import ArgumentError
            raise ArgumentError(f"hvp: give one direction per differentiated argument ({len(wrt_t)}), got "
                                f"{len(directions)}")
        if hessian_vector_product.fallback is None:
            try:
                tangent = _forward_over_reverse(gradient, args, wrt_t, directions, as_tuple)
            except _NoForward as exc:
                hessian_vector_product.fallback = exc.reason
            else:
                return tangent if as_tuple else tangent[0]
        return _reverse_over_reverse(gradient, args, wrt_t, v, as_tuple)
    hessian_vector_product.__name__ = f"hvp_{getattr(func, '__name__', 'f')}"
    hessian_vector_product.fallback = None  # why forward over reverse was not used (an error), or None
    return hessian_vector_product


def _as_plain_call(func, wrt: tuple, args, kwargs):
    """(the plain function, its `wrt`, every argument by position) for a call of a partial or a
    call with keyword arguments, else None (then `func(*args)` is already one)."""
    import inspect
    import types

    from .api import _bind, _through_partial
    from .errors import ArgumentError
    if not kwargs and isinstance(func, types.FunctionType):
        return None
    target, moved, args, kwargs = _through_partial(func, wrt, tuple(args), kwargs)
    if target is func and not kwargs:
        return None
    if any(p.kind is p.KEYWORD_ONLY for p in inspect.signature(target).parameters.values()):
        raise ArgumentError(f"hessian and hvp take every argument of {getattr(target, '__name__', target)} by "
                            "position, and it has keyword-only parameters; wrap it in a function of "
                            "positional parameters")
    return target, moved, list(_bind(target, args, kwargs))


class _NoForward(Exception):
    def __init__(self, reason):
        super().__init__(str(reason))
        self.reason = reason


def _forward_over_reverse(gradient, args: list, wrt_t: tuple, directions: tuple, as_tuple: bool) -> tuple:
    """The tangent of `gradient(*args)` along `directions` at the `wrt_t` arguments (a tuple, one
    entry per argument), from the generated jvp of the generated gradient."""
    from . import forward_api as fa
    from .api import _bind, _check_real, compiled
    from .errors import AdjointCompilerError, ArgumentError, ArgumentIndexError, InternalError
    values = list(_bind(gradient, tuple(args), {}))
    _check_real(gradient, values)
    n = len(values)
    for i in wrt_t:
        if not -n <= i < n:
            raise ArgumentIndexError(f"wrt={i} is out of range: {fa._name(gradient)} takes {n} arguments")
    positions = [i % n for i in wrt_t]
    names = fa._param_names(gradient)
    tangents = {}
    for i, d in zip(positions, directions):
        tangents[i] = fa._tangent_for(values[i], d, f"the direction for `{names[i] if i < len(names) else i}`")
    active = sorted(i for i in tangents if fa._numeric(values[i]) and not fa._integer(values[i]))
    try:
        entry = compiled(gradient, tuple(active), values, "jvp")
    except (ArgumentError, ArgumentIndexError, InternalError):
        raise  # (the user's call, or a bug of the compiler: not a reason to change method)
    except AdjointCompilerError as exc:  # (a located error: what the jvp could not differentiate)
        raise _NoForward(exc) from None
    _, tangent = fa._run(gradient, entry, values, [tangents[i] for i in active])
    # the gradient's value is a tuple of gradients, one per `wrt` argument, or the gradient itself
    value = tuple(values[i] for i in positions)
    parts = tangent if as_tuple else (tangent,)
    return tuple(fa._deliver(t, x, fa._arrays_in(list(values) + list(tangents.values())))
                 for t, x in zip(parts, value))


def _reverse_over_reverse(gradient, args: list, wrt_t: tuple, v, as_tuple: bool):
    from .api import vjp
    _, pullback = vjp(gradient, *args)
    cotangents = pullback(v)
    picked = tuple(cotangents[i] for i in wrt_t)
    return picked if as_tuple else picked[0]


def hessian(func, wrt=0):
    """`hessian(f, wrt)(*args)`: the Hessian of scalar `f` w.r.t. argument `wrt`, of shape
    `arg.shape + arg.shape` (a float for a float argument); with a tuple `wrt`, a tuple of rows of
    blocks, `H[i][j]` of shape `args[i].shape + args[j].shape`. Forward over reverse: one jvp of the
    gradient per entry of the arguments (a column of every row); where the gradient's code cannot
    be run forward, one pullback of the gradient per entry (reverse over reverse), and
    `.fallback` holds the located reason."""
    import numpy as np

    from .api import _normalize_wrt, grad, positional_wrt, vjp
    wrt_all, as_tuple = _normalize_wrt(wrt)
    method = _method_parts(func, wrt_all, as_tuple)
    if method is not None:  # a bound method: the function's, its object first (not differentiated)
        inner = hessian(method[0], method[1])
        return lambda *args: inner(method[2], *args)
    built = grad(func, wrt_all)

    def forward(gradient, args, shapes, wrt_t):
        blocks = [[np.zeros(si + sk) for sk in shapes] for si in shapes]
        for k, shape in enumerate(shapes):
            for flat in range(int(np.prod(shape))):
                directions = tuple(np.zeros(s) if i != k else _unit(s, flat) for i, s in enumerate(shapes))
                tangents = _forward_over_reverse(gradient, args, wrt_t, directions, True)
                at = np.unravel_index(flat, shape) if shape else ()
                for i, t in enumerate(tangents):
                    blocks[i][k][(Ellipsis,) + tuple(at)] = t
        return [tuple(float(c) if c.ndim == 0 else c for c in row) for row in blocks]

    def reverse(gradient, args, shapes, wrt_t):
        _, pullback = vjp(gradient, *args)
        rows = []
        for k, shape in enumerate(shapes):
            columns = [np.zeros(shape + s) for s in shapes]
            for flat in range(int(np.prod(shape))):
                directions = tuple(np.zeros(s) if i != k else _unit(s, flat) for i, s in enumerate(shapes))
                cotangents = pullback(directions)
                for j, i in enumerate(wrt_t):
                    columns[j][np.unravel_index(flat, shape) if shape else ()] = cotangents[i]
            rows.append(tuple(float(c) if c.ndim == 0 else c for c in columns))
        return rows

    def full_hessian(*args, **kwargs):
        from .jacobians import refuse_structures

        plain = _as_plain_call(func, wrt_all, args, kwargs)
        if plain is not None:  # a partial, or keyword arguments: the function's, all by position
            target, moved, values = plain
            return hessian(target, moved if as_tuple else moved[0])(*values)
        wrt_t = positional_wrt(func, wrt_all, args)
        gradient = built if wrt_t == wrt_all else grad(func, wrt_t)
        refuse_structures("hessian", func, args, wrt_t)
        args = _as_floats(args, wrt_t)
        shapes = [np.shape(args[i]) for i in wrt_t]
        rows = None
        if full_hessian.fallback is None:
            try:
                rows = forward(gradient, list(args), shapes, wrt_t)
            except _NoForward as exc:
                full_hessian.fallback = exc.reason
        if rows is None:
            rows = reverse(gradient, args, shapes, wrt_t)
        return tuple(rows) if as_tuple else rows[0][0]
    full_hessian.__name__ = f"hessian_{getattr(func, '__name__', 'f')}"
    full_hessian.fallback = None  # why forward over reverse was not used (an error), or None
    return full_hessian


def _as_floats(args, wrt_t: tuple) -> list:
    """The arguments, with each differentiated integer one (a Python or NumPy integer, an integer
    array, inside tuples and lists too) taken as floats, as `grad` takes it (its gradient is a
    float, README "Gradient types follow the argument"): the Hessian is that of the function of
    real numbers the code computes. Booleans are left alone (refused where they are checked)."""
    args = list(args)
    n = len(args)
    for i in wrt_t:
        if -n <= i < n:
            args[i % n] = _float_leaves(args[i % n])
    return args


def _float_leaves(value):
    import numpy as np
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, np.integer):
        return np.float64(value)
    if type(value) is np.ndarray and value.dtype.kind in "iu":
        return value.astype(np.float64)
    if type(value) in (tuple, list):
        return type(value)(_float_leaves(v) for v in value)
    return value


def _unit(shape: tuple, flat: int):
    import numpy as np
    e = np.zeros(shape)
    e.reshape(-1)[flat] = 1.0
    return e if shape else 1.0

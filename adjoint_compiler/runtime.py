"""The one module generated code imports (as `rt`): small helpers rule templates call.

Every helper takes plain NumPy values or Python scalars and returns a new value; none writes into
its arguments. Gradients of Python scalars stay Python/NumPy scalars (no 0-d array churn).
"""
from __future__ import annotations

import numpy as np

from .errors import NoGradientError as _NoGradientError

from . import buffer as _buffer
from . import runtime_facts as _facts
from . import trees as _trees
from .buffer import Buffer
from .errors import ArgumentError, MissingRuleError

_SCALARS = (float, int, complex, bool, np.generic)

# The globals user rules read (the user's own helpers a rule body calls): bound when the rule is
# registered (template._bind_rule_global), read by generated code as `rt.rule_globals.<name>`.
import types as _types  # noqa: E402

rule_globals = _types.SimpleNamespace()


class _Unbound:
    """What generated code binds a name to before a loop binds it, when nothing bound it before the
    loop: any use of it (after a loop that ran no trips, where Python raises UnboundLocalError)
    raises that error instead of reading a placeholder."""

    def _refuse(self, *args, **kwargs):
        raise UnboundLocalError("a name assigned only in a loop was read after the loop ran no trips")

    for _name in ("__bool__", "__index__", "__int__", "__float__", "__complex__", "__array__", "__len__",
                  "__iter__", "__getitem__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                  "__neg__", "__pos__", "__abs__", "__invert__", "__call__",
                  *(f"__{k}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                               "matmul", "and", "or", "xor", "lshift", "rshift")
                    for k in ("", "r"))):
        locals()[_name] = _refuse
    del _name
    __hash__ = object.__hash__
    __array_ufunc__ = None  # (NumPy defers to the reflected operator, which raises)

    def __repr__(self) -> str:
        return "rt.UNBOUND"


UNBOUND = _Unbound()


def describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a value of type {type(value).__name__}"


def seed(y, powers: str = ""):
    """The adjoint seed of a scalar result: 1.0 for a number or a 0-d array, ones of the result's
    shape for an array of one element (`(1,)`, `(1, 1)`: a scalar to `float()`, as in autograd);
    a clear error for any other result."""
    if isinstance(y, (complex, np.complexfloating)) or (isinstance(y, np.ndarray) and y.dtype.kind == "c"):
        if powers:  # (`powers`: the user's lines where a power may have made it complex)
            refuse_complex((y,), powers)
        from .errors import ComplexError
        raise ComplexError("grad needs a real loss, but the function returned a complex value at run time "
                           "(return np.real(...), np.abs(...) or np.abs(...)**2 of it)")
    if isinstance(y, _SCALARS) and not isinstance(y, (bool, np.bool_)):
        return 1.0
    if isinstance(y, np.ndarray) and y.size == 1 and y.dtype.kind in "fiu":
        return 1.0 if y.ndim == 0 else np.ones(y.shape)
    raise ArgumentError(f"grad needs a function that returns a scalar, but it returned {describe(y)}; "
                    "use vjp for array or tuple outputs")


@_facts.fresh
@_facts.reads_only_shape(0)
def zeros_like(x):
    """The zero gradient of `x`: 0.0 for scalars, float zeros for arrays, the same structure for
    tuples and lists."""
    if hasattr(x, "data") and hasattr(x, "shape") and not isinstance(x, np.ndarray):  # a Buffer
        x = x.data
    if isinstance(x, ShapeOf):
        return np.full(x.shape, None, dtype=object) if x.dtype == object else np.zeros(x.shape)
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            return np.full(x.shape, None, dtype=object)
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind in "fc" else float)
    if isinstance(x, (tuple, list)):
        return _rebuild(x, [zeros_like(v) for v in x])
    if not isinstance(x, _SCALARS):  # a dict, dataclass or object: zeros in its structure
        z = _trees.zeros(x, zeros_like)
        if z is not None:
            return z
    return 0.0


def _rebuild(like, items: list):
    """A tuple/list of `like`'s type holding `items` (namedtuples included; as a plain tuple if the
    type cannot be built from items)."""
    kind = type(like)
    if hasattr(kind, "_make"):
        return kind._make(items)
    return kind(items) if kind in (tuple, list) else tuple(items)


@_facts.reads_only_shape(1)
def unbroadcast(g, x):
    """The gradient of `x` from the gradient `g` of a value NumPy broadcast `x` to (an operand of an
    elementwise operation, or the value of an assignment `b[idx] = x`): undo exactly what
    broadcasting did. Axes align at the end; the axes `g` has in front of `x`'s are summed; an
    axis of length 1 in `x` is summed (kept as 1); the leading axes of length 1 that an assignment
    drops from `x` (`b[:] = x.reshape(1, n)`) are put back (a reshape, nothing summed).
    A structural zero (None, from an object buffer's empty slot) becomes zeros like `x`."""
    if type(g) is np.ndarray and g.dtype.kind != "O":  # the common case first
        gs, xs = g.shape, (x.shape if hasattr(x, "shape") else np.shape(x))
        if gs == xs:
            return g
        lead = len(gs) - len(xs)
        if lead > 0 and gs[lead:] == xs:  # broadcast along leading axes only (a bias)
            return g.sum(axis=0) if lead == 1 else g.sum(axis=tuple(range(lead)))
    if g is None:
        return zeros_like(x)
    if isinstance(g, (list, tuple, dict, _trees.Record)) and not isinstance(x, np.ndarray):
        return g  # a structure's gradient: never broadcast
    if isinstance(g, np.ndarray) and g.dtype == object and not (isinstance(x, np.ndarray) and x.dtype == object):
        return _rebuild(x, [zeros_like(v) if gi is None else gi for gi, v in zip(g, x)]) \
            if isinstance(x, (list, tuple)) else g
    xs = x.shape if hasattr(x, "shape") else np.shape(x)
    gs = np.shape(g)
    if gs == xs:
        return g
    if not xs:
        return np.sum(g)
    lead = len(gs) - len(xs)
    if lead > 0:
        g = np.sum(g, axis=tuple(range(lead)))
    elif lead < 0:  # axes align at the end: an assignment dropped leading axes of length 1 of `x`
        g = np.reshape(g, (1,) * -lead + tuple(gs))
    axes = tuple(i for i, (a, b) in enumerate(zip(xs, np.shape(g))) if a == 1 and b != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    if np.shape(g) != xs:
        g = np.array(np.broadcast_to(g, xs))  # a new array, like every other result but `g` itself
    return g


def accum(a, b):
    """`a + b` for gradients of any structure; None is a structural zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (tuple, list)):
        return _rebuild(a, [accum(u, v) for u, v in zip(a, b)])
    if isinstance(a, np.ndarray) and a.dtype == object:
        return _accum_objects(a, b)
    if type(a) is dict or type(a) is _trees.Record:
        return _trees.accum(a, b, accum)
    return a + b


_accum_objects = np.frompyfunc(lambda u, v: accum(u, v), 2, 1)


_BASIC = (int, slice, type(None), type(Ellipsis), np.integer)


def _is_advanced(idx) -> bool:
    """Whether an index has integer or boolean arrays in it (duplicates possible)."""
    if type(idx) in (int, slice):
        return False
    for part in idx if type(idx) is tuple else (idx,):
        if not isinstance(part, _BASIC) and not (isinstance(part, np.ndarray) and part.ndim == 0):
            return True
    return False


@_facts.fresh
@_facts.reads_only_shape(1)
def getitem_adjoint(g, x, idx):
    """The gradient of `x` from the gradient `g` of `x[idx]`; duplicate indices accumulate."""
    kind = type(idx)
    if (kind is slice or kind is int) and type(x) is np.ndarray and x.dtype.kind != "O":  # the common case
        kind = type(g)
        if kind is np.ndarray and g.dtype.kind == "f" or kind is float or kind is np.float64:
            out = np.zeros(x.shape, g.dtype if kind is np.ndarray else np.float64)
            out[idx] = g
            return out
    if type(x) is dict:
        return _trees.item_adjoint(g, x, idx)
    if isinstance(x, (tuple, list)):
        out = [None] * len(x)
        if isinstance(idx, slice):
            for i, v in zip(range(*idx.indices(len(x))), g):
                out[i] = v
        else:
            out[idx] = g
        return _rebuild(x, out)
    shape = x.shape if hasattr(x, "shape") else np.shape(x)
    if getattr(x, "dtype", None) == object:
        out = np.full(shape, None, dtype=object)
        out[idx] = g
        return out
    out = np.zeros(shape, dtype=np.result_type(g, float))
    if _is_advanced(idx):
        np.add.at(out, idx, g)
    else:
        out[idx] = g
    return out


def gradient(g, x):
    """The gradient handed to the user for argument `x`: a float for a scalar, a float array of
    `x`'s shape for an array, the same structure for tuples and lists. Structural zeros become zeros."""
    kind = type(x)
    if kind is float:
        if _is_complex(g):
            _complex_gradient()
        return 0.0 if g is None else float(g)
    if kind is np.ndarray and type(g) is np.ndarray and g.dtype == x.dtype and g.shape == x.shape \
            and x.dtype.kind == "f":
        return g
    if isinstance(x, (tuple, list)):
        if g is None:
            g = [None] * len(x)
        return _rebuild(x, [gradient(gv, xv) if _trees.differentiable_leaf(xv) else None for gv, xv in zip(g, x)])
    if type(x) is dict or _trees.record_fields(x) is not None:
        return _trees.rebuild(g, x, gradient)
    if isinstance(x, (complex, np.complexfloating)):
        return 0j if g is None else complex(g)
    if hasattr(x, "data") and hasattr(x, "shape") and not isinstance(x, (np.ndarray, np.generic)):  # a Buffer
        x = x.data
    if isinstance(x, np.ndarray) and x.dtype == object:
        return np.full(x.shape, None, dtype=object) if g is None else np.array(g, dtype=object)
    if isinstance(x, np.ndarray):
        dtype = x.dtype if x.dtype.kind in "fc" else np.float64
        if g is None:
            return np.zeros(x.shape, dtype)
        g = np.asarray(g)
        if g.dtype.kind == "c" and x.dtype.kind != "c":
            _complex_gradient()
        if g.shape != x.shape:
            g = np.broadcast_to(g, x.shape)
        return g.astype(dtype, copy=False)
    if g is None:
        return 0.0
    if _is_complex(g):
        _complex_gradient()
    return float(g)


def _complex_gradient():
    from .errors import ComplexError
    raise ComplexError("the gradient of a real argument came out complex, which the compiler cannot explain "
                       "(a value it took for real held complex numbers at run time); refused rather than "
                       "dropping its imaginary part")


def pow_base_derivative(x, y):
    """d(x**y)/dx = y * x**(y-1), with the integer powers exact at x = 0."""
    if type(y) is int and y == 2:
        return 2 * x
    if np.ndim(y) == 0:
        return y * x ** (y - 1) if y != 0 else 0.0 * x  # x ** 0 is 1 everywhere, 0 included
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, 0.0, y * x ** (y - 1))


def pow_derivative(x, y, k: int):
    """The k-th derivative of x**y in x (k >= 2): y (y-1) ... (y-k+1) x**(y-k), an exact zero
    where that falling factorial is (x**0 and x**1 at x = 0 too, where x**(y-k) is infinite)."""
    factor = 1.0
    for j in range(k):
        factor = factor * (y - j)
    if np.ndim(y) == 0 and np.ndim(x) == 0 and isinstance(x, _SCALARS):
        return 0.0 * x if factor == 0 else factor * x ** (y - k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.equal(factor, 0), 0.0, factor * np.power(x, np.subtract(y, k), dtype=float))


def pow_derivative_exponent_gradient(y):
    """The exponent's part of the gradient of `pow_derivative` (a third derivative of x ** y with a
    varied exponent): not supported, a located refusal."""
    raise _NoGradientError("the third derivative of `x ** y` with respect to a varied exponent `y` is not "
                              "supported; make the exponent a constant")


def pow_exponent_derivative(z, x):
    """d(x**y)/dy = x**y * log(x); 0 where x == 0 (the limit for y > 0)."""
    if isinstance(x, _SCALARS):
        return z * np.log(x) if x != 0 else 0.0 * z
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, z * np.log(np.where(x == 0, 1.0, x)))


@_facts.fresh
def matmul_left(g, x, y):
    """The gradient of `x` in `x @ y` (vectors, matrices and stacks of matrices)."""
    xd, yd = np.ndim(x), np.ndim(y)
    if xd == 1 and yd == 1:
        return g * y
    if yd == 1:  # (..., n, k) @ (k,) -> (..., n)
        return unbroadcast(np.multiply(np.expand_dims(g, -1), y), x)
    if xd == 1:  # (k,) @ (..., k, m) -> (..., m)
        return unbroadcast(np.matmul(y, np.expand_dims(g, -1))[..., 0], x)
    return unbroadcast(np.matmul(g, np.swapaxes(y, -1, -2)), x)


@_facts.fresh
def matmul_right(g, x, y):
    """The gradient of `y` in `x @ y`."""
    xd, yd = np.ndim(x), np.ndim(y)
    if xd == 1 and yd == 1:
        return g * x
    if xd == 1:  # (k,) @ (..., k, m) -> (..., m)
        return unbroadcast(np.multiply(np.expand_dims(x, -1), np.expand_dims(g, -2)), y)
    if yd == 1:  # (..., n, k) @ (k,) -> (..., n)
        return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), np.expand_dims(g, -1))[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), g), y)


@_facts.numeric
def broadcast_number(g):
    """The number `expand_reduced(g, x)` spreads over `x` (the gradient of a sum or a mean), with
    the dtype of the array it spreads it as: a Python float is a float64 (a float32 array it
    meets is then computed with in float64, as with the spread array), a complex a complex128."""
    kind = type(g)
    if kind is float:
        return np.float64(g)
    if kind is complex:
        return np.complex128(g)
    return np.int_(g) if kind is int else g


@_facts.reads_only_shape(1)
def expand_reduced(g, x, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction of `x` over `axis` back to `x`'s shape."""
    shape = x.shape if hasattr(x, "shape") else np.shape(x)
    if not shape:
        return g
    if axis is None and (type(g) is float or type(g) is np.float64):  # np.broadcast_to, faster
        view = np.ndarray(shape, float, np.array(g), 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    if axis is not None and not keepdims:
        axes = {a % len(shape) for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis)}
        if type(g) is np.ndarray and g.ndim == len(shape) - len(axes):
            g = g.reshape(tuple([1 if k in axes else n for k, n in enumerate(shape)]))
        else:
            g = np.expand_dims(g, tuple(axes))
    return _broadcast_view(g, shape)


def _broadcast_view(g, shape: tuple):
    """`np.broadcast_to(g, shape)` (a read-only view), built directly where `g` has `shape`'s
    rank and holds one number, or is C-contiguous (np.broadcast_to costs several microseconds)."""
    if type(g) is not np.ndarray or g.ndim != len(shape) or not g.size or g.dtype.kind not in "biufc":
        return np.broadcast_to(g, shape)
    uniform = not any(g.strides)  # one number (the gradient of a sum, expanded)
    if not (uniform or g.flags.c_contiguous):
        return np.broadcast_to(g, shape)
    strides, step = [], g.itemsize
    for n, m in zip(reversed(g.shape), reversed(shape)):
        if n == 1:
            strides.append(0)
        elif n == m:
            strides.append(0 if uniform else step)
            step *= n
        else:
            return np.broadcast_to(g, shape)  # (not broadcastable: its error)
    view = np.ndarray(shape, g.dtype, np.array(g.flat[0]) if uniform else g, 0, tuple(strides[::-1]))
    view.flags.writeable = False
    return view


from .runtime_rules import *  # the rule templates' helpers, as rt.<name>
from .runtime_tangents import *  # the tangent rules' helpers (forward mode), as rt.<name>
from .runtime_tangents_more import *  # ... and those of issue 15's primitives
from .runtime_numpy_more import *  # the rest of issue 15's NumPy list (rot90 ... np.add.at)
from .runtime_complex import *  # the complex rules' helpers, as rt.<name>


def push(xs, items):
    """`xs.extend(items)` in place, for a list used as a stack (`xs.append(v)` is `push(xs, [v])`);
    returns `xs`. A tangent list may be None (no tangent): it stays None."""
    if xs is None:
        return None
    xs.extend(items)
    return xs


def drop(xs):
    """`del xs[-1]` in place (`v = xs.pop()` reads `xs[-1]` first); returns `xs`."""
    if xs is None:
        return None
    del xs[-1]
    return xs


def top(xs):
    """`xs[-1]`, the item `xs.pop()` returns (its DROP follows)."""
    return xs[-1]


# The adjoint of a stack (a list only pushed and popped, stacks.py) is a cotangent stack: a pair
# (cotangent of the last item, cotangent stack of the items below) or None (all zero), so that the
# adjoint of a pop pushes and that of a push pops, O(1) each, and `accum` of a stack with a pair
# whose other part is None is O(1) too.
def stack_cons(head, rest):
    """The cotangent stack `rest` with `head` on top (None: zero, and nothing below)."""
    return None if head is None and rest is None else (head, rest)


def stack_items(g):
    """The cotangents of the items of `ys = push(xs, [v])` from that of `ys`: `[v_bar]`."""
    return [None if g is None else g[0]]


def stack_rest(g):
    """The cotangent stack of `xs` in `ys = push(xs, [v])` from that of `ys`."""
    return None if g is None else g[1]


def extended(x, y):
    """`x += y` of a tuple or list `x` by a tuple or list `y`, as Python runs it: a list is
    extended by the items of any sequence (`xs += (a, b)`), a tuple only by a tuple."""
    return x + list(y) if isinstance(x, list) and not isinstance(y, list) else x + y


def seq_head(g, y):
    """The gradient of `x` in `x + y` (tuples or lists): `g` without its last len(y) items.
    (It reads the short appended part, so a growing list is never kept on the tape.)"""
    return g[:len(g) - len(y)]


def seq_tail(g, y):
    """The gradient of `y` in `x + y` (tuples or lists): the last len(y) items of `g`."""
    return g[len(g) - len(y):]


def item(g, i, like):
    """Item i of a sequence gradient; a structural zero (None) becomes zeros shaped like `like`."""
    v = g[i]
    return zeros_like(like) if v is None else v


def like_sequence(g, x):
    """The gradient of `x` in `tuple(x)` / `list(x)`: `g` in the structure of `x`."""
    if isinstance(x, np.ndarray):
        return np.array([zeros_like(v) if gi is None else gi for gi, v in zip(g, x)])
    return _rebuild(x, list(g)) if isinstance(x, (tuple, list)) else g


def sequence_items(h, g):
    """The transpose of `like_sequence(g, x)` in `g`: the items of `h` (the cotangent of `x`'s
    structure: an array's rows, a tuple's or list's items) as a list like `g` (None: no gradient)."""
    if h is None:
        return None
    if isinstance(g, (tuple, list)) and isinstance(h, (np.ndarray, tuple, list)):
        return list(h)
    return h


def _repeats(n) -> bool:
    """Whether `x * n` of a list or tuple `x` is a repetition (a Python or NumPy integer `n`), not
    NumPy's elementwise product (an array `n`, a 0-d one too: `[1.0, 2.0] * np.array(2)` is
    `[2.0, 4.0]`; `np.sin(x) * x`)."""
    return isinstance(n, (int, np.integer))


def seq_repeat_adjoint(g, x, n=2):
    """The gradient of `x` in `x * n` (tuples or lists): the sum of the n chunks of `g`; for an
    array `n`, NumPy's elementwise product: `g * n` summed to `x`'s shape, in `x`'s structure."""
    if not _repeats(n):
        items = np.asarray(x)
        return _rebuild(x, list(unbroadcast(np.asarray(g) * np.conj(n), items)))
    k = len(x)
    out = list(g[:k])
    for start in range(k, len(g), k):
        out = [accum(a, b) for a, b in zip(out, g[start:start + k])]
    return _rebuild(x, out)


def plus_adjoint(g, x, y, which: int):
    """The gradient of `x` (`which` 0) or `y` (1) in `x + y` of values that may be lists or
    tuples: the head or the tail of `g` when both are (joined), else `g` undoing NumPy's
    broadcasting (added)."""
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return seq_head(g, y) if which == 0 else seq_tail(g, y)
    numpy_operand(x, "`+`")
    numpy_operand(y, "`+`")
    return unbroadcast(g, y if which else x)


def times_adjoint(g, x, y, which: int):
    """The gradient of `x` (`which` 0) or `y` (1) in `x * y` where one may be a list or tuple:
    a repetition's, or NumPy's product's."""
    if is_repetition(x, y):
        return repetition_adjoint(g, x, y, which)
    numpy_operand(x, "`*`")
    numpy_operand(y, "`*`")
    return unbroadcast(g * y, x) if which == 0 else unbroadcast(g * x, y)


def is_repetition(x, y) -> bool:
    """Whether `x * y` repeats a list or tuple (the other operand an integer count)."""
    return isinstance(x, (list, tuple)) and _repeats(y) or isinstance(y, (list, tuple)) and _repeats(x)


def repetition_adjoint(g, x, y, which: int):
    """The gradient of operand `which` of the repetition `x * y`: the sum of the copies in `g`
    for the sequence, none (zeros) for the count."""
    seq, count, at = (x, y, 0) if isinstance(x, (list, tuple)) and _repeats(y) else (y, x, 1)
    return seq_repeat_adjoint(g, seq, count) if which == at else zeros_like(count)


def repetition_transpose(h, g, x, y, which: int):
    """The transpose of `repetition_adjoint(g, x, y, which)` in `g`: `h` copied into each copy's
    place for the sequence, zeros like `g` for the count."""
    seq, count, at = (x, y, 0) if isinstance(x, (list, tuple)) and _repeats(y) else (y, x, 1)
    return list(h) * int(count) if which == at else zeros_like(g)


def plus_adjoint_transpose(h, g, x, y, which: int):
    """The transpose of `plus_adjoint(g, x, y, which)` in `g`: `h` in its place in a sequence
    like `g` (joined), or broadcast to `g`'s shape (added)."""
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return seq_place(h, g, 0 if which == 0 else len(g) - len(y))
    return broadcast_like(h, g)


def seq_repeat_count_adjoint(g, x, n):
    """The gradient of `n` in `x * n`: none for a repetition count, `g * x` summed to `n`'s shape
    for NumPy's elementwise product with an array `n`."""
    if _repeats(n):
        return zeros_like(n)
    return unbroadcast(np.asarray(g) * np.conj(np.asarray(x)), n)


# -- writes ------------------------------------------------------------------------------------
copyto = _facts.updates(_buffer.copyto)  # generated code calls rt.copyto


def _data(b):
    return b.data if isinstance(b, Buffer) else b


def _gdata(g):
    """The array of an adjoint the write helpers read: a 0-d array's gradient may arrive as a
    number (NumPy returns scalars from 0-d arithmetic); it is read as a 0-d array."""
    g = _data(g)
    return g if isinstance(g, (np.ndarray, list)) else np.asarray(g, dtype=np.result_type(g, float))


@_facts.fresh
def own(x):
    """A private copy of an argument the differentiated function writes into (a list stays a
    list: its slots are written, it may be appended to); an array keeps its memory layout
    (`layout_copy`); a tuple is itself (nothing can be written into it)."""
    if isinstance(x, list):
        return list(x)
    if isinstance(x, tuple):  # (written into, as Python does, it raises TypeError at that write)
        return x
    if isinstance(x, Buffer):
        return Buffer(x)
    return layout_copy(x) if isinstance(x, np.ndarray) else np.array(x, copy=True)


def layout_copy(x: np.ndarray) -> np.ndarray:
    """A copy of `x` with its strides (F order, reversed and gapped axes too): NumPy decides from
    the strides whether `reshape`, `ravel` or `flatten`-like calls give a view or a copy, so on
    the copy they decide as on `x`, and a write through their result reaches the same array."""
    if x.flags.c_contiguous:
        return x.copy(order="C")
    if x.flags.f_contiguous:
        return x.copy(order="F")
    size = x.itemsize
    if 0 in x.shape or any(s % size for s in x.strides):
        return np.array(x, copy=True)
    low = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) // size
    high = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) // size + 1
    memory = np.empty(high - low, dtype=x.dtype)
    out = np.lib.stride_tricks.as_strided(memory[-low:], shape=x.shape, strides=x.strides, writeable=True)
    out[...] = x
    return out


def snapshot(x):
    """A copy of a returned array that the backward pass will restore in place."""
    return x.copy() if isinstance(x, (np.ndarray, Buffer)) else list(x) if isinstance(x, list) else x


def refuse_complex(values, where: str):
    """Raise ComplexError if a returned value or gradient came out complex: a negative Python
    float raised to a fractional power is complex (`(-8.0) ** 0.5`), which compile time cannot
    see. `where` names the user's lines with such powers."""
    for v in values:
        if type(v) is complex or (isinstance(v, (np.ndarray, np.complexfloating)) and v.dtype.kind == "c") \
                or (isinstance(v, (tuple, list)) and any(_is_complex(u) for u in v)):
            from .errors import ComplexError
            raise ComplexError("a value the compiler took for real became complex at run time (a negative "
                               f"number to a fractional power is complex in Python: {where}); to differentiate "
                               "it as a complex value, raise a complex one (`(x * (1 + 0j)) ** 0.5`)")


def _is_complex(v) -> bool:
    return type(v) is complex or getattr(getattr(v, "dtype", None), "kind", "") == "c"


@_facts.fresh
def where_above(condition, x, c):
    """`np.where(condition, x, c)` where `condition` is `x > c` and `c` a number (clamps.py):
    `np.fmax(c, x)`, five times faster on a condition that varies from element to element. The
    same values: a nan in `x` fails `x > c` and fmax gives `c` for it; a tie gives `c`, equal to
    `x`, but of either sign when `c` is 0, so a zero result is made +0.0 (`x > 0` never selects a
    zero of `x`)."""
    return _clamp(np.fmax, condition, x, c)


@_facts.fresh
def where_below(condition, x, c):
    """`np.where(condition, x, c)` where `condition` is `x < c` and `c` a number: `np.fmin(c, x)`
    (as `where_above`)."""
    return _clamp(np.fmin, condition, x, c)


def _clamp(clamp, condition, x, c):
    if not (type(x) is np.ndarray and x.ndim and x.dtype.kind in "fi"):
        return np.where(condition, x, c)  # (a number, a list, complex or object values: as written)
    out = clamp(c, x)
    if c == 0 and out.dtype.kind == "f":
        out += 0.0  # (-0.0 + 0.0 is +0.0; every other value is unchanged)
    return out


def snapshot_items(xs) -> list:
    """A snapshot of each item of a tape stack (None kept): the arrays as the forward pass left them."""
    return [None if x is None else snapshot(x) for x in xs]


def refill_items(xs, finals) -> None:
    """Put back every slot of each item of a tape stack from `snapshot_items`: a pullback that
    restored them in place runs again from the state the forward pass left."""
    for x, final in zip(xs, finals):
        if x is not None and x is not final:  # (a number is its own snapshot)
            refill(x, final)


@_facts.updates
def refill(b, value):
    """Put back every slot of an array or list (`b[...] = value`, `b[:] = value` for a list)."""
    if isinstance(b, list):
        b[:] = value
    else:
        b[...] = value


def save_slots(b, idx=Ellipsis):
    """A copy of the slots a write is about to overwrite."""
    value = _data(b)[idx]
    return value.copy() if isinstance(value, np.ndarray) else value


@_facts.updates
def copyto_items(b, items):
    """Fill `b`'s first len(items) slots in C order (the items of an iterator)."""
    data = _data(b)
    if len(items) > data.size:
        raise ValueError(f"copyto: the iterator yields more than the buffer's {data.size} slots")
    if data.dtype == object:
        for k, v in enumerate(items):
            data.flat[k] = v
    else:
        data.flat[:len(items)] = items  # C order whatever the memory layout
    return b


def _zero(g):
    return None if g.dtype == object else 0


def _winners(shape, idx):
    """For an advanced index: a mask over the written elements, True where the write wins (the last
    occurrence of each slot in C order)."""
    flat = np.arange(int(np.prod(shape))).reshape(shape)[idx]
    order = flat.ravel()[::-1]
    _, first = np.unique(order, return_index=True)
    keep = np.zeros(order.size, dtype=bool)
    keep[order.size - 1 - first] = True
    return keep.reshape(flat.shape)


def _integer_storage(into) -> bool:
    """Whether the array a write stored into holds integers or booleans: NumPy truncated (or
    tested) the value written, which then receives no gradient. `into` is the array, a Buffer, a
    ShapeOf or a scalar (None when unknown: a float array)."""
    dtype = getattr(into, "dtype", None)
    if dtype is None:
        return type(into) is int or type(into) is bool
    return getattr(dtype, "kind", "O") in "biu"


def _slots(seq, idx) -> range:
    """The positions `seq[idx]` selects in a list (an int or a slice)."""
    return range(*idx.indices(len(seq))) if isinstance(idx, slice) else range(idx % len(seq), idx % len(seq) + 1)


@_facts.reads_only_dtype(2)
def written_adjoint(g, idx, into=None):
    """The gradient of the slots `b[idx] = v` overwrote (only the winning write of a duplicate
    index); the rule then sums it over the dimensions `v` was broadcast along. Nothing when `b`
    (`into`) holds integers or booleans. A list's gradient is a list (None for a slot with no
    gradient)."""
    if isinstance(g, list):
        return g[idx] if not isinstance(idx, slice) else list(g[idx])
    g = _gdata(g)
    picked = g[idx]
    if _integer_storage(into):
        return np.zeros(np.shape(picked)) if isinstance(picked, np.ndarray) else 0.0
    if not isinstance(picked, np.ndarray):
        return picked  # one slot: a scalar, nothing to copy
    if g.dtype == object:
        return picked.copy()
    picked = picked.copy()
    if _is_advanced(idx):
        picked = np.where(_winners(g.shape, idx), picked, 0.0)
    return picked


@_facts.fresh
def overwritten_adjoint(g, idx):
    """The gradient of the array before `b[idx] = v`: the overwritten slots pass nothing."""
    if isinstance(g, list):
        return zero_slots(list(g), idx)
    out = np.array(_gdata(g), copy=True)
    out[idx] = _zero(out)
    return out


@_facts.reads_only_shape(1)
@_facts.reads_only_dtype(3)
def copied_adjoint(g, src, where=True, into=None):
    """The gradient of `src` in `copyto(b, src, where)`: nothing when `b` (`into`) holds integers
    or booleans."""
    g = _gdata(g)
    if _integer_storage(into):
        return unbroadcast(np.zeros(g.shape), src)
    if g.dtype == object:
        return g.copy()
    picked = np.array(g, copy=True) if where is True else np.where(where, g, 0.0)
    return unbroadcast(picked, src)


@_facts.fresh
def overcopied_adjoint(g, where=True):
    """The gradient of the array before `copyto(b, src, where)`."""
    g = _gdata(g)
    if where is True:
        return np.full(g.shape, None, dtype=object) if g.dtype == object else np.zeros_like(g)
    return np.where(where, _zero(g) if g.dtype != object else None, g)


@_facts.reads_only_dtype(2)
def items_adjoint(g, items, into=None):
    """The gradients of the items an iterator wrote into the first slots of a buffer (none into
    integers or booleans). As the write did (`b.flat[:n] = items`), items that are arrays give
    their elements in C order: slot k received element k of the stacked items. An array of items
    gets an array gradient."""
    if _integer_storage(into):
        return np.zeros(np.shape(items)) if isinstance(items, np.ndarray) else [zeros_like(x) for x in items]
    data = _gdata(g)
    flat, n = data.flat, len(items)
    if data.dtype == object or (not isinstance(items, np.ndarray) and all(np.ndim(x) == 0 for x in items)):
        out = [zeros_like(x) if flat[k] is None else flat[k] for k, x in enumerate(items)]
        return np.array(out, dtype=float) if isinstance(items, np.ndarray) and data.dtype != object else out
    stacked = np.zeros(np.shape(items))
    stacked.reshape(-1)[:n] = data.reshape(-1)[:n]
    return stacked if isinstance(items, np.ndarray) else _rebuild(items, list(stacked))


@_facts.fresh
def overfilled_adjoint(g, items):
    out = np.array(_gdata(g), copy=True)
    out.flat[:len(items)] = _zero(out)
    return out


@_facts.fresh
@_facts.updates
def add_at(a, idx, g):
    """`a[idx] += g` in place (duplicate indices accumulate); `a` is an adjoint array nobody else
    holds. Returns `a`."""
    if _is_advanced(idx):
        np.add.at(a, idx, g)
    else:
        a[idx] += g
    return a


@_facts.reads_only_dtype(2)
def written_total(g, idx, into=None):
    """The gradient of a scalar `v` in `b[idx] = v`: the sum of `written_adjoint(g, idx)`, read
    from the slots in place where no copy is needed."""
    if into is None and type(idx) is int and type(g) is np.ndarray and g.ndim == 1 and g.dtype.kind == "f":
        return g[idx]  # the common case (one slot of a float vector): the branches below, settled
    if _integer_storage(into):
        return 0.0
    if isinstance(g, list):
        picked = [g[k] for k in _slots(g, idx)] if idx is not Ellipsis else g
        return sum(sum_to_scalar(v) for v in picked if v is not None)
    data = _gdata(g)
    if data.dtype == object or _is_advanced(idx):
        return sum_to_scalar(written_adjoint(g, idx))
    return sum_to_scalar(data[idx])


@_facts.reads_only_dtype(2)
def total_after_zeroing(g, idx, into=None):
    """`written_total(zero_slots(g, idx), ...)`, the total of `g` without its slots `idx`, for a
    private `g` nobody reads afterwards: for a slice along the first axis (step up to 4), the sum of
    the slices around and between the selected rows (nothing written); otherwise zeroed in place
    and summed."""
    if _integer_storage(into):
        return 0.0
    data = _gdata(g)
    if isinstance(data, list):
        return written_total(zero_slots(g, idx), ...)
    if isinstance(idx, slice) and data.ndim and data.dtype != object and 0 < (idx.step or 1) <= 4:
        start, stop, step = idx.indices(data.shape[0])
        count = len(range(start, stop, step))
        if not count:
            return sum_to_scalar(data)
        last = start + step * (count - 1)
        total = data[:start].sum() + data[last + 1:].sum()
        for offset in range(1, step):
            total += data[start + offset:last:step].sum()
        return total
    return written_total(zero_slots(g, idx), ...)


def held(b):
    """The array a Buffer holds, for a read that uses its value up before the Buffer changes
    (`peek`: `rt.held(b)[idx]`, a view, not the copy `b[idx]` makes)."""
    return b.data


@_facts.fresh
def private(g):
    """A copy of an adjoint array that another name may hold (or a read-only broadcast), for a
    loop that updates it in place; a number as it is."""
    return g.copy() if isinstance(g, np.ndarray) else g


@_facts.fresh
@_facts.updates
def zero_slots(g, idx):
    """The overwritten slots of an adjoint array nobody else holds, zeroed in place. Returns `g`."""
    if isinstance(g, list):
        for k in _slots(g, idx):
            g[k] = None
        return g
    if not isinstance(_data(g), np.ndarray):  # a number (the gradient of a 0-d array): a new 0-d array
        g = _gdata(g).copy()
    g[idx] = None if g.dtype == object else 0
    return g


class ShapeOf:
    """What the backward pass keeps of a value it reads only for its shape."""

    __slots__ = ("dtype", "shape")

    def __init__(self, x):
        self.shape = x.shape if hasattr(x, "shape") else np.shape(x)
        self.dtype = getattr(x, "dtype", None)
        if self.dtype is None and isinstance(x, (bool, int)):
            self.dtype = np.dtype(type(x))  # what the write and cast adjoints ask

    @property
    def ndim(self):
        return len(self.shape)


@_facts.reads_only_shapes
def shape_of(x):
    """What the backward pass keeps of `x` when it reads only its shape: a ShapeOf, but a list or
    tuple itself (the adjoints of its items read its length and its type)."""
    if type(x) is np.ndarray:  # the common case first
        kept = ShapeOf.__new__(ShapeOf)
        kept.shape, kept.dtype = x.shape, x.dtype
        return kept
    if x is None or x is UNBOUND or isinstance(x, (list, tuple, dict)) or _trees.record_fields(x) is not None:
        return x
    return ShapeOf(x)


@_facts.reads_only_shapes
def broadcast_shape(*operands):
    """The shape of an elementwise result of `operands` (arrays, scalars or ShapeOfs), computed
    from their shapes alone, for a value the backward pass reads only for its shape."""
    out = ShapeOf.__new__(ShapeOf)
    shapes = [x.shape if hasattr(x, "shape") else np.shape(x) for x in operands]
    first = shapes[0]
    out.shape = first if all(s == first for s in shapes) else np.broadcast_shapes(*shapes)
    out.dtype = object if any(getattr(x, "dtype", None) == object for x in operands) else None
    return out


def sum_of_product(a, b):
    """`sum_to_scalar(a * b)`; for two real float arrays of one shape, a dot product (no temporary)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape and a.dtype.kind == "f" \
            and b.dtype.kind == "f":
        return a @ b if a.ndim == 1 else np.dot(a.ravel(), b.ravel())
    return sum_to_scalar(a * b)


def sum_to_scalar(g):
    """The gradient of a scalar operand: `g` itself when it is one, else its sum."""
    kind = type(g)
    if kind is float or kind is np.float64:
        return g
    if kind is np.ndarray:
        return g[()] if g.ndim == 0 else g.sum()
    return np.sum(g)


# -- writes through views (ssa writes the base array at the view's slots) ---------------------------
def shares_memory(value, array) -> bool:
    """Whether `value` is an array whose memory lies in `array`'s (a view of it, or it). An array
    taken out of a list, tuple or dict may be any other array's memory (`list(B)` holds B's rows):
    an update of it cannot be followed (MutationError)."""
    if isinstance(value, np.ndarray) and isinstance(array, (list, tuple, dict)):
        from .errors import MutationError
        raise MutationError("an array taken out of a list, tuple or dict is updated in place: it may be "
                            "(a view of) another array, which Python would change too, and the gradient "
                            "cannot follow it; copy it first (`.copy()`), or write into the array it came from")
    return isinstance(value, np.ndarray) and isinstance(array, np.ndarray) and np.may_share_memory(value, array)


_NUMPY_OPERANDS = (np.ndarray, float, int, complex, bool, np.generic, list, tuple, dict, str, type(None))


def numpy_operand(x, operation: str) -> None:
    """`x` takes part in `operation` (`.sum()`, `+`), which the gradient differentiates as NumPy's
    (or a list's, a tuple's, a dict's): an object of another class would run its class's own
    method or operator, which the compiler did not read; that is refused here, before its result
    is used (else the gradient would be NumPy's, silently wrong)."""
    if not isinstance(x, _NUMPY_OPERANDS) and not isinstance(x, Buffer):
        raise MissingRuleError(f"{operation} is applied to a `{type(x).__name__}` object, whose class's own "
                               "code runs here, but the compiler could not tell its class when compiling and "
                               "would differentiate NumPy's: call the method on an object whose class is known "
                               "where it is called (made in the function, or an argument)")


def check_update(before, value) -> None:
    """`a op= e` of an array `a` (`before`), compiled as `a = a op e` (`value`): NumPy computes the
    result into `a` itself, so it raises where the result has another shape than `a` (`y += x[:,
    None]`) or does not cast to `a`'s dtype under the 'same_kind' rule (an integer array updated by
    a float, a real one by a complex value); so does this. A number is rebound, as in Python."""
    if not isinstance(before, np.ndarray):
        return
    shape, dtype = np.shape(value), getattr(value, "dtype", None)
    if shape != before.shape:
        raise ValueError(f"non-broadcastable output operand with shape {before.shape} doesn't match the "
                         f"broadcast shape {shape} (an in-place update must keep the array's shape)")
    dtype = dtype if dtype is not None else np.result_type(value)
    if dtype != before.dtype and not np.can_cast(dtype, before.dtype, "same_kind"):
        raise TypeError(f"Cannot cast the result of an in-place update from dtype('{dtype}') to "
                        f"dtype('{before.dtype}') with casting rule 'same_kind'")


def positions(array):
    """The flat (C-order) position of each slot of `array`, in an array of its shape."""
    return np.arange(np.size(array)).reshape(np.shape(array))


def slots_at(flat, array) -> tuple:
    """The index of `array`'s slots at the flat positions `flat` (any shape)."""
    return np.unravel_index(np.asarray(flat, dtype=np.intp), np.shape(array))


# -- the Python around the NumPy (normalize's lowerings of builtins and statements; no gradient) -----
def check_list(value, method: str) -> None:
    """`xs.append(v)`, `xs.extend(ys)`, `xs.pop()` of a value the compiler could not tell for a
    list: Python raises AttributeError unless it is one."""
    if not isinstance(value, list):
        raise AttributeError(f"'{type(value).__name__}' object has no attribute '{method}'")


def check_slice_assign(items, index, value) -> None:
    """`items[i:j] = value` where `items` may be a list: the compiler follows it as a write of
    slots, so it is refused unless `value` is a list or tuple of as many items as the slice
    (Python would change the list's length, or iterate an array into it)."""
    if not isinstance(items, list):
        return
    if not isinstance(value, (list, tuple)) or len(value) != len(range(*index.indices(len(items)))):
        from .errors import UnsupportedSyntaxError
        raise UnsupportedSyntaxError(f"assignment of {describe(value)} to a slice of a list of {len(items)} items: "
                                     "only a list or tuple of as many items as the slice is supported (Python "
                                     "would change the list's length); build a new list (`xs = xs[:i] + [...] + "
                                     "xs[j:]`)")


def check_unpack(value, n: int) -> None:
    """`a, b = value`: Python raises unless `value` has exactly `n` items (`ssa` checks a tuple
    display at compile time instead). A value without a length is left to its item reads."""
    try:
        got = len(value)
    except TypeError:
        if np.ndim(value) == 0 and not hasattr(value, "__iter__"):
            raise TypeError(f"cannot unpack non-iterable {type(value).__name__} object") from None
        return
    if got != n:
        raise ValueError(f"too many values to unpack (expected {n})" if got > n else
                         f"not enough values to unpack (expected {n}, got {got})")


def raise_exception(exc, *args, **kwargs):
    """`raise exc(*args, **kwargs)` (or `raise exc` without arguments): `raise` and a failed
    `assert` in the forward pass, exactly as the primal raises them."""
    if args or kwargs:
        exc = exc(*args, **kwargs)
    raise exc


def sort_order(keys, reverse=False) -> list:
    """The positions of the items whose keys are `keys`, in the order `sorted(items, key=...,
    reverse=reverse)` puts them (the same comparisons, so ties and NaNs come out as in Python)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def combinatoric_positions(kind, lengths, r=None) -> list:
    """The tuples of positions `itertools.<kind>` yields over sequences of `lengths`, in its order:
    `product(xs, ys, repeat=r)` yields `(xs[i], ys[j], ...)` for `(i, j, ...)` in
    `combinatoric_positions("product", (len(xs), len(ys)), r)`; `combinations`,
    `combinations_with_replacement` and `permutations` take one length and `r`;
    `combinatoric_positions("ndindex", shape)` is `list(np.ndindex(*shape))`."""
    if kind == "ndindex":
        return list(np.ndindex(*lengths))
    import itertools
    ranges = [range(n) for n in lengths]
    if kind == "product":
        return list(itertools.product(*ranges, repeat=1 if r is None else r))
    return list(getattr(itertools, kind)(*ranges, *(() if r is None else (r,))))


def extreme_index(keys, largest) -> int:
    """The position of the item `max(items, key=...)` (largest) or `min(...)` returns."""
    pick = max if largest else min
    return pick(range(len(keys)), key=keys.__getitem__)


class _ErrorState:
    """An entered `np.errstate`; left by `restore_errstate`, or, when an exception leaves the
    generated code between the two, once the exception is handled and the frame is freed."""

    __slots__ = ("entered", "state")

    def __init__(self, kwargs):
        self.state = np.errstate(**kwargs)
        self.state.__enter__()
        self.entered = True

    def leave(self) -> None:
        if self.entered:
            self.entered = False
            self.state.__exit__(None, None, None)

    def __del__(self):
        try:
            self.leave()
        except Exception:  # noqa: BLE001 -- (interpreter shutdown, another context): nothing to restore into
            pass


def set_errstate(**kwargs):
    """Enter `np.errstate(**kwargs)`; returns what `restore_errstate` needs to leave it."""
    return _ErrorState(kwargs)


def restore_errstate(state) -> None:
    """Leave the error state `set_errstate` entered."""
    state.leave()

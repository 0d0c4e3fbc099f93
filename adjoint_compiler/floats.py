"""Floats: which values surely hold real floating-point numbers, known from the argument kinds.

A value is 'f' when it surely is a real float (a Python float, a NumPy floating scalar, an array
or Buffer of a floating dtype), 'r' when it surely is real (a bool, int or float, or an array of
them) and unknown otherwise (a complex or object array, a tuple, anything not followed). The
facts flow forward through the IR, loops to a fixpoint (`fixpoint.py`, which checks that it
converged) in a lattice where a fact only goes from known to unknown ('f', 'r', unknown): a
carried value starts with its initial value's fact and is joined with what each trip gives it. A
float array passed by the caller is 'f' when its argument kind says so (`f<ndim>`).

    u0: f1                   u = u0.copy()          u: f
    n: an int                b = np.zeros(n)        b: f    (the default dtype)
                             c = b > 0              c: r    (booleans)
                             k = Buffer.zeros_like(u0)  k: f

Two uses: a write into a float array cannot truncate the value written, so the backward pass
need not ask the array's dtype at run time; and a float Buffer's gradient is an array of
numbers (never an object array), so it accumulates like any other array.
"""
from __future__ import annotations

import math
import numbers
import operator
import warnings

import numpy as np

from . import ir
from . import runtime as rt
from .buffer import Buffer
from .fixpoint import fixpoint
from .shapes import _integer_result

# (n, ...) constructors whose default dtype is float64
_FLOAT_BY_DEFAULT = {np.zeros, np.ones, np.empty, Buffer.zeros}
# f(x, ...) with the dtype of x (floats from integers for a Buffer)
_LIKE = {np.zeros_like, np.ones_like, np.empty_like, np.copy, np.array, np.asarray}
_BUFFERS = {Buffer, Buffer.zeros_like}
_KEEPS = {ir.OWN, ir.SETITEM, ir.COPYTO, ir.COPYTO_ITEMS, operator.getitem}
_METHODS_KEEP = {"copy", "reshape", "ravel", "flatten", "transpose", "squeeze", "sum", "max", "min", "prod",
                 "cumsum", "cumprod"}
_REDUCTIONS = {np.sum, np.max, np.min, np.amax, np.amin, np.prod, np.cumsum, np.cumprod, np.transpose,
               np.reshape, np.ravel, np.squeeze}
_TO_FLOAT = {np.mean, np.average, np.std, np.var}  # real in, float out
_METHODS_TO_FLOAT = {"mean", "std", "var"}
_ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
               operator.neg, operator.pos, abs, ir.SQUARE, operator.matmul, np.dot, np.matmul, np.where,
               np.maximum, np.minimum}
_MATH_FLOATS = {getattr(math, name) for name in ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "pow", "hypot", "fabs", "fmod", "copysign", "erf", "erfc", "gamma", "lgamma", "degrees", "radians", "fsum"]}
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.not_}


def _float_dtype(op) -> bool | None:
    """True for a `dtype=` naming a real floating type, False for another one, None if unknown."""
    value = op.value if isinstance(op, (ir.Const, ir.Global)) else None
    if value is None:
        return None
    try:
        return np.dtype(value).kind == "f"
    except TypeError:
        return None


def _real_dtype(op) -> bool:
    """Whether a `dtype=` names a boolean or integer type."""
    try:
        return np.dtype(op.value).kind in "biu"
    except TypeError:
        return False


_UFUNC_FLOAT: dict = {}


def _ufunc_gives_float(u: np.ufunc) -> bool:
    """Whether the ufunc maps real floats to a real float (sin, exp, hypot: yes; isnan: no)."""
    if u not in _UFUNC_FLOAT:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (`scipy.special.yn` truncates a float order, saying so)
                out = u(*[np.float64(0.5)] * u.nin)
            _UFUNC_FLOAT[u] = isinstance(out, np.floating)
        except (TypeError, ValueError):  # no loop for floats
            _UFUNC_FLOAT[u] = False
    return _UFUNC_FLOAT[u]


class Floats:
    def __init__(self, params: dict):
        self.facts: dict = dict(params)
        self.ints: set = set()  # Vars that surely hold an integer (as `shapes` finds them)
        self.shape_tuples: set = set()

    def of(self, op):
        if isinstance(op, ir.Var):
            if op in self.ints:
                return "r"
            fact = self.facts.get(op)
            return None if fact is UNKNOWN or fact == SHAPE else fact
        if isinstance(op, (ir.Const, ir.Global)):
            v = op.value
            if isinstance(v, (bool, np.bool_)) or (isinstance(v, numbers.Integral) and not isinstance(v, bool)):
                return "r"
            if isinstance(v, (float, np.floating)):
                return "f"
            if isinstance(v, np.ndarray):
                return "f" if v.dtype.kind == "f" else ("r" if v.dtype.kind in "biu" else None)
        return None

    def assign(self, s: ir.Assign):
        p, args, kw = s.prim, s.args, s.kwargs
        facts = [self.of(a) for a in args]
        given = kw.get("dtype", args[1] if len(args) == 2 else None)  # (the second positional one)
        if p is rt.shape_of and len(args) == 1 and not kw:  # (what zeros_like then makes is float)
            return SHAPE if facts[0] in ("f", "r") else None
        if p is rt.zeros_like and len(args) == 1 and not kw:  # float zeros of a real value's shape
            return "f" if facts[0] in ("f", "r") or self.facts.get(args[0]) == SHAPE else None
        try:
            if (p in _FLOAT_BY_DEFAULT or p in _LIKE) and 1 <= len(args) <= 2 and set(kw) <= {"dtype"} \
                    and not (len(args) == 2 and "dtype" in kw):
                if given is not None:
                    return "f" if _float_dtype(given) else ("r" if _float_dtype(given) is False
                                                             and _real_dtype(given) else None)
                if p in _FLOAT_BY_DEFAULT:
                    return "f"
                return facts[0] if p not in (np.array, np.asarray) or isinstance(args[0], ir.Var) else None
            if p in _BUFFERS and len(args) == 1 and not kw:
                return "f" if facts[0] in ("f", "r") else None
            if p in _KEEPS and args:  # (a value with a fact is a number, an array or a Buffer)
                return facts[0]
            if (p in _REDUCTIONS or p in _TO_FLOAT) and args and not ({"dtype", "out", "initial", "where"} & set(kw)):
                return ("f" if facts[0] in ("f", "r") else None) if p in _TO_FLOAT else facts[0]
            if p in _COMPARISONS and None not in facts:
                return "r"
            if p in _ARITHMETIC and args and not kw and None not in facts:
                if p is np.where:
                    facts = facts[1:]
                return "f" if "f" in facts or p is operator.truediv else "r"
        except TypeError:  # an unhashable callee
            return None
        if p is operator.pow and len(args) == 2 and facts[0] == "f" and isinstance(args[1], ir.Const) \
                and type(args[1].value) is int:
            return "f"  # (a fractional power of a negative Python float is complex)
        if isinstance(p, ir.Method) and args:
            if p.name in _METHODS_KEEP and not ({"dtype", "out", "initial", "where"} & set(kw)):
                return facts[0]
            if p.name in _METHODS_TO_FLOAT and not ({"dtype", "out", "where"} & set(kw)):
                return "f" if facts[0] in ("f", "r") else None
            if p.name == "astype" and len(args) == 2:
                return "f" if _float_dtype(args[1]) else None
            return None
        if p == ir.Attr("T"):
            return facts[0] if facts else None
        if isinstance(p, np.ufunc) and p.nout == 1 and p.signature is None and not kw and None not in facts:
            return "f" if _ufunc_gives_float(p) else None
        if p is float or p in _MATH_FLOATS:
            return "f"
        return None

    def set(self, var, fact) -> bool:
        """Join `fact` into what `var` holds: facts only go from known to unknown ('f', then 'r',
        then unknown), never back, so every loop analysis settles (at most two rises per value)."""
        old = self.facts.get(var, _UNSET)
        new = fact if old is _UNSET else _join(None if old is UNKNOWN else old, fact)
        new = UNKNOWN if new is None else new
        if new == old:
            return False
        self.facts[var] = new
        return True

    def snapshot(self) -> tuple:
        return dict(self.facts), len(self.ints), len(self.shape_tuples)

    def block(self, stmts) -> None:
        for s in stmts:
            if isinstance(s, ir.Assign):
                if s.target is not None:
                    if s.prim == ir.Attr("shape") or s.prim is np.shape:
                        self.shape_tuples.add(s.target)
                    if _integer_result(s, self.ints, self.shape_tuples):
                        self.ints.add(s.target)
                    self.set(s.target, self.assign(s))
            elif isinstance(s, ir.If):
                self.block(s.body)
                self.block(s.orelse)
                for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                    self.set(out, _join(self.of(a), self.of(b)))
            elif isinstance(s, ir.Loop):
                self.loop(s)

    def loop(self, s: ir.Loop) -> None:
        """A carried value starts with its initial value's fact (optimistic) and takes in what
        each trip gives it, until nothing changes (fixpoint.py checks that it does)."""
        if s.target is not None:
            self.ints.add(s.target)  # a counter over a range
        for p, i in zip(s.params, s.inits):
            self.set(p, self.of(i))

        def trip(_state):
            self.block(s.cond_body)
            self.block(s.body)
            for p, n in zip(s.params, s.nexts):
                self.set(p, self.of(n))
            return self.snapshot()
        values = len(ir.defined_in(s.cond_body) | ir.defined_in(s.body)) + len(s.params)
        fixpoint(trip, self.snapshot(), limit=3 * values + 3, what="the float facts around a loop")


_UNSET = object()  # (no fact computed yet: the bottom of the lattice)
UNKNOWN = "?"  # a value whose kind is not known (the top); `of` reads it as None
SHAPE = "s"  # `rt.shape_of(x)` of a real x (a ShapeOf, no number): only `rt.zeros_like` reads it


def _join(a, b):
    """What both facts promise."""
    if a == b:
        return a
    return "r" if a in ("f", "r") and b in ("f", "r") else None


def infer(fn: ir.Function, param_floats: set) -> dict:
    """{Var: 'f' or 'r'}; `param_floats` are the parameters known to be real floats."""
    floats = Floats({p: "f" for p in param_floats})

    def run(_state):
        floats.block(fn.body)
        return floats.snapshot()
    values = len(ir.defined_in(fn.body)) + len(fn.params)
    fixpoint(run, floats.snapshot(), limit=3 * values + 3, what="the float facts")
    return {v: f for v, f in floats.facts.items() if f in ("f", "r")}


def apply(fn: ir.Function, facts: dict) -> None:
    """A float Buffer (and what is read from one) is a number like any array: its gradient is an
    array of floats, accumulated with `+`, never an object array."""
    for v in ir.defined_in(fn.body) | set(fn.params):
        if facts.get(v) == "f" and v.kind == "any":
            v.kind = "num"


def float_names(fn: ir.Function, facts: dict) -> set:
    """The names whose every value is a Buffer or a real float: a write into them never truncates
    (a Buffer holds floats, complex numbers or objects, never integers)."""
    values = set(fn.params) | ir.defined_in(fn.body)
    names = {v.name for v in values if v.is_buffer or facts.get(v) == "f"}
    return names - {v.name for v in values if not (v.is_buffer or facts.get(v) == "f")}


def write_may_raise(s: ir.Assign, ndims: dict, facts: dict) -> bool:
    """Whether a write may raise (so it runs even where nothing reads what it wrote): False only
    for a number written into every slot, or into slices with literal bounds, of a float array or
    a Buffer (no index out of bounds, no broadcasting, no NaN into integers)."""
    base = s.args[0]
    if not (isinstance(base, ir.Var) and (base.is_buffer or facts.get(base) == "f")):
        return True
    if s.prim is ir.SETITEM:
        index, value = s.args[1], s.args[2]
    elif s.prim is ir.COPYTO:
        index, value = ir.Const(Ellipsis), s.args[1]
        if not (isinstance(s.args[2], ir.Const) and s.args[2].value is True):
            return True
    else:
        return True
    number = (isinstance(value, ir.Const) and type(value.value) in (int, float, bool)) or \
        (isinstance(value, ir.Var) and ndims.get(value) == 0 and facts.get(value) in ("f", "r"))
    parts = index.items if isinstance(index, ir.Struct) and index.kind == "tuple" else (index,)
    literal = all((isinstance(q, ir.Const) and q.value is Ellipsis) or (
        isinstance(q, ir.Struct) and q.kind == "slice"
        and all(isinstance(b, ir.Const) and (b.value is None or type(b.value) is int) for b in q.items)
        and not (isinstance(q.items[2], ir.Const) and q.items[2].value == 0)) for q in parts)
    return not (number and literal and (len(parts) <= 1 or ndims.get(base) is not None
                                        and len([q for q in parts if not (isinstance(q, ir.Const))]) <= ndims[base]))

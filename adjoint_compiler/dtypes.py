"""Dtypes: refuse complex values, at the user's line, until the complex rules exist (issue 12).

Every rule assumes real numbers; a complex intermediate would give a gradient that is wrong under
every convention. `check(fn)` runs on the SSA IR (helpers inlined, so their lines are named too)
and raises `ComplexError` for anything that makes or reads a complex value:

    z = v * (1 + 2j)               a complex literal (also in a default argument)
    complex(a, b), np.complex128   complex constructors and scalar types
    x.astype(complex), dtype='c8'  a complex dtype, as a type, np.dtype or string
    np.fft.fft(x), np.real(z)      functions that return or expect complex values (fft, emath,
                                   cmath, eig, roots; real, imag, conj, angle, `.real`, `.imag`)
    W = np.array([1j])  (global)   a complex module global or closure value read by the function

What compile time cannot see is guarded at run time: a Python float raised to a fractional
power is complex when the base is negative (`(-2.0) ** 0.5`); `rt.gradient` refuses a complex
gradient instead of dropping its imaginary part. Complex arguments are refused by the API.
"""
from __future__ import annotations

import numpy as np

from . import ir
from .errors import ComplexError, ComplexRuleError

SUFFIX = "complex numbers are not supported yet"

# Functions that take or give complex values by nature (no rule for them yet).
_COMPLEX_FUNCTIONS = {np.real, np.imag, np.conj, np.conjugate, np.angle, np.real_if_close,
                      np.linalg.eig, np.linalg.eigvals, np.roots}
_COMPLEX_MODULES = ("numpy.fft", "numpy.lib.scimath", "numpy.emath", "cmath", "scipy.fft", "scipy.fftpack")
_COMPLEX_ATTRS = {"real", "imag"}
_COMPLEX_METHODS = {"conj", "conjugate"}
_DTYPE_METHODS = {"astype", "view"}
# positional index of the dtype parameter of NumPy constructors
_DTYPE_POSITION = {np.zeros: 1, np.ones: 1, np.empty: 1, np.zeros_like: 1, np.ones_like: 1, np.empty_like: 1,
                   np.array: 1, np.asarray: 1, np.asanyarray: 1, np.full: 2, np.full_like: 2, np.eye: 3,
                   np.identity: 1, np.dtype: 0, np.arange: 3, np.linspace: 5, np.frombuffer: 1, np.fromiter: 1}


def complex_value(value, depth: int = 0) -> bool:
    """Whether a constant is or holds a complex number (containers looked into, a few levels)."""
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c" or (value.dtype == object and depth < 3
                                           and any(complex_value(v, depth + 1) for v in value.flat[:1000]))
    if depth < 3 and isinstance(value, (tuple, list)):
        return any(complex_value(v, depth + 1) for v in value[:1000])
    if depth < 3 and isinstance(value, dict):
        return any(complex_value(v, depth + 1) for v in list(value.values())[:1000])
    return complex_dtype(value, strings=False)


def complex_dtype(value, strings: bool = True) -> bool:
    """Whether a value names a complex dtype: `complex`, `np.complex64`, `np.dtype('c16')`, and (where
    a dtype is expected) a string such as 'complex128' or 'F'."""
    if value is complex:
        return True
    if isinstance(value, type):
        return issubclass(value, np.complexfloating)
    if isinstance(value, np.dtype):
        return value.kind == "c"
    if strings and isinstance(value, str):
        try:
            return np.dtype(value).kind == "c"
        except TypeError:
            return False
    return False


def _operand_value(op):
    return op.value if isinstance(op, (ir.Const, ir.Global)) else None


def _complex_operand(op, counts: bool = False) -> bool:
    """Whether an operand holds a complex value (with `counts`, a slice's imaginary step is a
    number of points, as `np.r_[0:1:5j]` reads it, not a complex value)."""
    if isinstance(op, ir.Struct):
        items = op.items[:2] if counts and op.kind == "slice" else op.items
        return any(_complex_operand(i, counts) for i in items)
    return isinstance(op, (ir.Const, ir.Global)) and complex_value(op.value)


def _function_name(s: ir.Assign) -> str:
    if s.callee is not None:
        return s.callee.path
    if isinstance(s.prim, ir.Method):
        return f".{s.prim.name}()"
    if isinstance(s.prim, ir.Attr):
        return f".{s.prim.name}"
    return getattr(s.prim, "__name__", repr(s.prim))


def _refuse(what: str, loc, error=ComplexError) -> None:
    raise error(f"{SUFFIX}: {what}", loc)


def _check_assign(s: ir.Assign) -> None:
    prim = s.prim
    name = _function_name(s)
    if prim is complex or (isinstance(prim, type) and issubclass(prim, np.complexfloating)):
        _refuse(f"`{name}(...)` makes a complex number", s.loc)
    module = getattr(prim, "__module__", None) or ""
    if prim in _COMPLEX_FUNCTIONS or any(module == m or module.startswith(m + ".") for m in _COMPLEX_MODULES):
        _refuse(f"`{name}` works with complex values and has no rule yet", s.loc, ComplexRuleError)
    if isinstance(prim, ir.Attr) and prim.name in _COMPLEX_ATTRS:
        _refuse(f"`{name}` reads a part of a complex value", s.loc, ComplexRuleError)
    if isinstance(prim, ir.Method) and prim.name in _COMPLEX_METHODS:
        _refuse(f"`{name}` works with complex values and has no rule yet", s.loc, ComplexRuleError)
    dtype_args = [s.kwargs[k] for k in ("dtype",) if k in s.kwargs]
    if isinstance(prim, ir.Method) and prim.name in _DTYPE_METHODS and len(s.args) > 1:
        dtype_args.append(s.args[1])
    try:
        position = _DTYPE_POSITION.get(prim)
    except TypeError:  # an unhashable primitive
        position = None
    if position is not None and len(s.args) > position:
        dtype_args.append(s.args[position])
    for op in dtype_args:
        if complex_dtype(_operand_value(op)):
            value = _operand_value(op)
            shown = op.path if isinstance(op, ir.Global) else repr(value)
            _refuse(f"`{name}` is given the complex dtype `{shown}`", s.loc)
    counts = _index_trick(s)
    for op in list(s.args) + list(s.kwargs.values()):
        if _complex_operand(op, counts):
            what = "a complex literal" if isinstance(op, ir.Const) else f"`{getattr(op, 'path', op)}` holds complex values"
            _refuse(f"{what} in this statement", s.loc)


def _index_trick(s: ir.Assign) -> bool:
    """`np.r_[...]`, `np.mgrid[...]`: a slice step `5j` there means five points."""
    from .activity import _index_object
    return _index_object(s) is not None


def check(fn: ir.Function) -> None:
    """Raise ComplexError at the first statement that makes or reads a complex value."""
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign):
            _check_assign(s)
        else:
            for op in ir.stmt_operands(s):
                if _complex_operand(op):
                    _refuse("a complex value in this statement", s.loc)
    if _complex_operand(fn.result):
        _refuse("the function returns a complex constant", fn.loc)

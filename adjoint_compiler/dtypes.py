"""Dtypes: which values may be complex, and the allow-list of what may touch them.

Reverse mode (`grad`, `value_and_grad`, `vjp`) follows autograd's and JAX's convention: for a real
loss L and z = x + iy, the gradient is dL/dx - i dL/dy. `infer(fn)` marks every IR value that may
hold complex numbers (`Var.complex`), forward through the IR, loops to a fixpoint:

    z: c1                  w = z * x          w: complex  (x: f1)
                           r = np.real(w)     r: real     (real, imag, abs, angle, irfft, irfftn, var, std, norm)
                           s = 1j * x         s: complex  (a complex literal, np.fft.fft, astype(complex))
                           c = np.conj(x)     c: real     (conj, fftshift, real_if_close: x's kind)

`check(fn)` then refuses, at the user's line, every statement that reads or makes a complex
value without a rule valid for complex operands (`registry.lookup_complex`: holomorphic
elementwise functions, linear and structural ones, and the non-holomorphic real, imag, conj,
abs, angle and np.fft with rules of their own) and binds those rules (`Assign.complex`). `reverse`
projects a contribution flowing from such a statement into a value that is surely real with
`np.real`. A complex result of `grad` (or output of `vjp`) is refused: the loss must be real.

Forward mode (`check(fn, forward=True)`, JAX's convention: the tangent along a complex t is the
derivative along t with C read as R^2) binds the tangent rules of the same records
(`ComplexRule.tangent`) and refuses what has none; its result may be complex. A real value's
tangent stays real: only a rule with a real result (real, imag, abs, angle, irfft, norm...) reads a
complex tangent into one, and those are written to return real tangents.

Code to be differentiated again keeps the syntactic refusal (`refuse_all`):

    z = v * (1 + 2j)               a complex literal (also in a default argument)
    complex(a, b), np.complex128   complex constructors and scalar types
    x.astype(complex), dtype='c8'  a complex dtype, as a type, np.dtype or string
    np.fft.fft(x), np.real(z)      functions that return or expect complex values
    W = np.array([1j])  (global)   a complex module global or closure value read by the function

What compile time cannot see is guarded at run time: a Python float raised to a fractional
power is complex when the base is negative (`(-2.0) ** 0.5`), so the generated code checks each
such power right after it (`codegen.power_statements`: `abs` or `.real` could make it real again,
with a wrong derivative); `rt.gradient` refuses a complex gradient for a real argument instead of
dropping its imaginary part.
"""
from __future__ import annotations

import numpy as np

from . import ir
from .errors import ComplexError, ComplexRuleError

SUFFIX = "complex numbers are not supported in a gradient differentiated again (hessian, hvp, grad of grad)"

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


def _refuse(what: str, loc, error=ComplexError, prefix: str = SUFFIX) -> None:
    raise error(f"{prefix}: {what}", loc)


ALLOW_LIST = "complex values are differentiated by the allow-listed functions only"


def _refuse_complex(what: str, loc, error=ComplexError) -> None:
    _refuse(what, loc, error, ALLOW_LIST)


def _check_assign(s: ir.Assign) -> None:
    prim = s.prim
    name = _function_name(s)
    if prim is complex or (isinstance(prim, type) and issubclass(prim, np.complexfloating)):
        _refuse(f"`{name}(...)` makes a complex number", s.loc)
    module = getattr(prim, "__module__", None) or ""
    if prim in _COMPLEX_FUNCTIONS or any(module == m or module.startswith(m + ".") for m in _COMPLEX_MODULES) \
            and not _member(prim, _FREQUENCIES):
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


def refuse_all(fn: ir.Function) -> None:
    """Raise ComplexError at the first statement that makes or reads a complex value (forward mode,
    and code to be differentiated again)."""
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign):
            _check_assign(s)
        else:
            for op in ir.stmt_operands(s):
                if _complex_operand(op):
                    _refuse("a complex value in this statement", s.loc)
    if _complex_operand(fn.result):
        _refuse("the function returns a complex constant", fn.loc)


# -- reverse mode: complex values under the allow-list ----------------------------------------

_REAL_RESULT = {np.real, np.imag, np.abs, np.absolute, abs, np.angle, np.fft.irfft, np.fft.irfft2, np.fft.irfftn,
                np.var, np.std, np.linalg.norm, ir.Method("var"), ir.Method("std"), np.iscomplex, np.isreal,
                np.iscomplexobj, np.isrealobj}
_FREQUENCIES = {np.fft.fftfreq, np.fft.rfftfreq}  # (of `numpy.fft`, but real numbers from a length and a spacing)
_REAL_RESULT |= _FREQUENCIES
_REAL_ATTRS = {"real", "imag"}
# A real operand gives a real result (conj of a real array is itself, fftshift a permutation,
# real_if_close of a real array is it); a complex one may give a complex result.
_KIND_PRESERVING = {np.conj, np.conjugate, np.fft.fftshift, np.fft.ifftshift, np.real_if_close}
_COMPLEX_RESULT = {np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft,
                   np.fft.rfft2, np.fft.rfftn}
# Questions about a complex value's shape: no gradient, nothing to refuse.
_QUERIES = {len, np.shape, np.ndim, np.size, ir.CHECK_UPDATE}  # (read for shapes and dtypes alone)
_QUERY_ATTRS = {"shape", "ndim", "size", "dtype"}


def _member(prim, table) -> bool:
    try:
        return prim in table
    except TypeError:  # an unhashable primitive
        return False


def operand_complex(op, counts: bool = False) -> bool:
    """Whether an operand may hold a complex value (a Var marked by `infer`, a complex constant or
    global, or a Struct holding one)."""
    if isinstance(op, ir.Var):
        return op.complex
    return _complex_operand(op, counts)


def _reads_complex(s: ir.Assign) -> bool:
    counts = _index_trick(s)
    return any(operand_complex(op, counts) for op in list(s.args) + list(s.kwargs.values()))


def _dtype_operands(s: ir.Assign) -> list:
    """The operands of `s` that name a dtype (`dtype=`, `.astype(t)`, `np.zeros(n, t)`)."""
    prim = s.prim
    out = [s.kwargs["dtype"]] if "dtype" in s.kwargs else []
    if isinstance(prim, ir.Method) and prim.name in _DTYPE_METHODS and len(s.args) > 1:
        out.append(s.args[1])
    if prim is getattr(np, "astype", None) and len(s.args) > 1:
        out.append(s.args[1])
    try:
        position = _DTYPE_POSITION.get(prim)
    except TypeError:
        position = None
    if position is not None and len(s.args) > position:
        out.append(s.args[position])
    return out


def given_complex_dtype(s: ir.Assign) -> bool | None:
    """True if `s` is given a complex dtype, False if a dtype that is not complex, None if none
    (or one compile time cannot read)."""
    found = None
    for op in _dtype_operands(s):
        if isinstance(op, ir.Var):  # (`z.dtype`: complex if z may be)
            if op.complex:
                return True
            found = False
            continue
        if not isinstance(op, (ir.Const, ir.Global)):
            return None
        if op.value is None:
            continue
        if complex_dtype(op.value):
            return True
        found = False
    return found


def _makes_complex(s: ir.Assign, reads: bool) -> bool:
    prim = s.prim
    if prim is complex or (isinstance(prim, type) and issubclass(prim, np.complexfloating)) \
            or _member(prim, _COMPLEX_RESULT):
        return True
    if isinstance(prim, ir.Attr) and prim.name == "dtype":
        return reads  # (a complex value's dtype names a complex type: `np.zeros(n, dtype=z.dtype)`)
    if _member(prim, _REAL_RESULT) or _member(prim, _QUERIES) \
            or (isinstance(prim, ir.Attr) and prim.name in (_REAL_ATTRS | _QUERY_ATTRS)):
        return False
    dtype = given_complex_dtype(s)
    if dtype is not None:
        return dtype
    if _member(prim, _KIND_PRESERVING):
        return reads
    module = getattr(prim, "__module__", None) or ""
    if any(module == m or module.startswith(m + ".") for m in _COMPLEX_MODULES) or _member(prim, _COMPLEX_FUNCTIONS):
        return True  # (refused by `check` unless it has a complex rule)
    return reads


def infer(fn: ir.Function, complex_params: set) -> None:
    """Mark each value that may hold complex numbers (`Var.complex`), loops to a fixpoint."""
    for p in fn.params:
        p.complex = p in complex_params
    for v in ir.defined_in(fn.body):
        v.complex = False
    for _ in range(10_000):
        if not _mark(fn.body):
            return
    from .errors import InternalError
    raise InternalError("the complex-value analysis did not converge")


def _mark(stmts) -> bool:
    changed = False

    def see(v, value: bool) -> None:
        nonlocal changed
        if value and v is not None and not v.complex:
            v.complex = True
            changed = True

    for s in stmts:
        if isinstance(s, ir.Assign):
            if s.target is not None:
                see(s.target, _makes_complex(s, _reads_complex(s)))
        elif isinstance(s, ir.If):
            changed = _mark(s.body) or changed
            changed = _mark(s.orelse) or changed
            for o, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                see(o, operand_complex(a) or operand_complex(b))
        elif isinstance(s, ir.Loop):
            for p, i in zip(s.params, s.inits):
                see(p, operand_complex(i))
            if s.target is not None and s.iterable is not None:
                see(s.target, operand_complex(s.iterable))
            changed = _mark(s.cond_body) or changed
            changed = _mark(s.body) or changed
            for p, n in zip(s.params, s.nexts):
                see(p, operand_complex(n))
    return changed


def _located(s: ir.Assign, message: str, error=ComplexError):
    raise error(message, s.loc)


def check(fn: ir.Function, ndims: dict | None = None, forward: bool = False) -> None:
    """Refuse, at the user's line, what reads or makes a complex value without a rule valid for
    complex operands; bind those rules (`Assign.complex`). Run after `infer` and rule binding.
    `ndims` (the values known to be numbers or arrays) lets `.real`, `.imag`, `.conj()` of a real
    array take the complex rule; of any other object they keep their own. With `forward` (jvp,
    jacfwd), the rules bound are the tangent rules declared valid for complex operands
    (`ComplexRule.tangent`), and the result may be complex (its tangent is)."""
    ndims = ndims or {}
    from . import registry
    from .activity import call_kwargs
    from .errors import AdjointCompilerError
    for s in ir.walk(fn.body):
        if isinstance(s, ir.If):
            if operand_complex(s.cond):
                _refuse_complex("a complex value as the condition of `if` (complex numbers have no order or truth "
                        "value here; compare np.abs(z) or np.real(z))", s.loc)
            continue
        if isinstance(s, ir.Loop):
            if any(operand_complex(op) for op in (s.cond, s.stop) if op is not None):
                _refuse_complex("a complex value as a loop condition", s.loc)
            continue
        if not isinstance(s, ir.Assign):
            continue
        entry = registry.lookup_complex(s.prim)
        reads = _reads_complex(s)
        makes = s.target is not None and s.target.complex
        own = entry is not None and entry.own and (
            not isinstance(s.prim, (ir.Attr, ir.Method)) or (s.args and ndims.get(s.args[0]) is not None))
        if not (reads or makes or own):
            continue
        name = _function_name(s)
        if s.prim in ir.WRITES or s.prim in (ir.SAVE, ir.OWN) or any(
                isinstance(v, ir.Var) and v.is_buffer for v in [s.target, *s.args]):
            _refuse_complex(f"`{name}` writes or holds complex values in an array or Buffer, which is not supported; "
                    "build the complex array with arithmetic, np.stack or np.concatenate instead", s.loc)
        if _index_trick(s):
            _refuse_complex(f"`{name}` with complex values has no rule", s.loc, ComplexRuleError)
        if _member(s.prim, _QUERIES) or (isinstance(s.prim, ir.Attr) and s.prim.name in _QUERY_ATTRS):
            continue  # (its shape: no gradient)
        if entry is None or (forward and entry.tangent is None):
            mode = " in forward mode (jvp, jacfwd)" if entry is not None else ""
            _refuse_complex(f"`{name}` has no rule valid for complex values{mode} (the README lists the functions "
                    "that take them; real and imaginary parts can be passed separately)", s.loc, ComplexRuleError)
        if given_complex_dtype(s) is False and reads:
            _refuse_complex(f"`{name}` is given a dtype that is not complex for a complex value (its imaginary "
                            "part would be dropped); take np.real(z) or np.abs(z) explicitly", s.loc)
        if entry.complex_dtype and given_complex_dtype(s) is not True:
            _refuse_complex(f"`{name}` converts a complex value to a dtype that is not complex (its imaginary part "
                    "would be dropped); take np.real(z) or np.abs(z) explicitly", s.loc)
        rule = entry.tangent if forward else entry.rule
        try:
            bound = rule.bind(list(s.args), call_kwargs(s, rule), s.loc)
        except AdjointCompilerError as exc:
            raise ComplexError(f"complex values: {str(exc).splitlines()[0]}", s.loc) from None
        for p in entry.real:
            if any(operand_complex(op) for op in (bound.get(p) if isinstance(bound.get(p), tuple)
                                                  else (bound.get(p),)) if op is not None):
                _refuse_complex(f"`{name}` needs a real `{p}`, got a value that may be complex", s.loc)
        s.rule, s.bound, s.complex = rule, bound, True
    result = fn.result
    if operand_complex(result) and not forward:
        defs = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None}
        loc = defs[result].loc if isinstance(result, ir.Var) and result in defs else fn.loc
        raise ComplexError("the function's result may be complex: `grad` needs a real loss and `vjp` real outputs "
                           "(return np.real(z), np.imag(z), np.abs(z) or np.abs(z)**2; for a complex output, "
                           "return its real and imaginary parts separately)", loc)

"""The rule tables: primitive -> Rule, for the adjoint (reverse mode) and the tangent (forward
mode). Built-in rules live in `rules/`, each tangent rule beside its adjoint; users add theirs with
`@adjoint(func)`, `@tangent(func)` and `nondifferentiable(func)` (which declares both zero). User
rules take precedence over compiling source. A primitive's part in text is a fact of its record too
(`nondifferentiable(str, text=MAKES_TEXT)`, `declare_text(...)`): activity lets text made from a
differentiated value reach only reports, never a number again.

    @adjoint(np.sin)                      @tangent(np.sin)
    def sin(y, x):                        def sin(y, x):
        x_bar += y_bar * np.cos(x)            y_dot = x_dot * np.cos(x)
"""
from __future__ import annotations

import importlib
import inspect
import sys
import threading
from dataclasses import dataclass, replace

from . import ir
from .errors import RuleError
from .template import Deferred, Rule, nondiff_rule, parse_tangent, parse_template

RULES: dict = {}
TANGENTS: dict = {}  # primitive -> its tangent Rule (kind 'tangent'); a nondifferentiable one is in RULES
ORIGIN: dict = {}  # primitive -> the module that registered its rule (the README's table groups by it)
_loaded = False
_loading = False  # while built-in rules load, they never replace a rule the user registered
_lock = threading.RLock()
BUILTIN_MODULES = ("arithmetic", "ufuncs", "reductions", "linalg", "shape", "indexing", "writes", "nondiff", "numpy_more",
                   "composites", "runtime_helpers", "python", "structures", "numpy_twins", "runtime_twins", "complex")


def _key(func):
    if isinstance(func, str):
        return ir.Method(func)
    return func


def _describe(func) -> str:
    if isinstance(func, (ir.Method, ir.Attr, ir.Prim)):
        return repr(func)
    mod = getattr(func, "__module__", None) or ""
    return f"{mod}.{getattr(func, '__qualname__', getattr(func, '__name__', repr(func)))}".lstrip(".")


def _check_arity(func, rule: Rule) -> None:
    if not callable(func) or isinstance(func, (ir.Method, ir.Attr, ir.Prim)):
        return
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()) or rule.varargs:
        return
    required = [p for p in positional if p.default is p.empty]
    if not (len(required) <= len(rule.params) <= len(positional)):
        raise RuleError(f"rule for {_describe(func)} has {len(rule.params)} argument parameters after the "
                        f"result, but {_describe(func)}{sig} takes {len(positional)}")


USER_RULES: list = []  # (primitive, rule text) users registered, in order (the on-disk cache key)
USER_KEYS: set = set()  # the primitives whose rules users registered (composites leave them alone)
GENERATION = object()  # replaced at every user registration: compiled gradients record it


def _registered(func, text: str) -> None:
    """Note a user registration: it is part of the disk cache key, and every compiled gradient
    made before it is compiled again at its next call (its guard records GENERATION)."""
    global GENERATION
    USER_RULES.append((_describe(func), text))
    USER_KEYS.add(_key(func))
    GENERATION = object()


def _template_text(template) -> str:
    try:
        return inspect.getsource(template)
    except (OSError, TypeError):  # parse_template has read it already; this is only a fallback
        code = template.__code__
        return repr((code.co_code, code.co_consts, code.co_names, code.co_varnames))


def _read(parse, template, what: str, kind: str) -> Rule:
    """A user's template is read and checked now (a malformed one raises RuleError at its
    registration); a built-in one at its first use (`Deferred`; `check_builtin_rules` checks them)."""
    return Deferred(parse, template, what, kind) if _loading else parse(template, what)


def check_builtin_rules() -> int:
    """Read every built-in rule's template and check it against its primitive's arity (what
    registration checks for a user's rule); the number of rules checked. Raises RuleError."""
    load_builtin_rules()
    count = 0
    for table in (RULES, TANGENTS):
        for key, rule in list(table.items()):
            if rule.body is not None:
                _check_arity(key, rule)
                count += 1
    return count


def adjoint(*funcs):
    """Register the decorated template as the adjoint rule of each of `funcs`."""
    def register(template):
        rule = _read(parse_template, template, _describe(funcs[0]), "adjoint")
        with _lock:
            for func in funcs:
                if not _loading:
                    _check_arity(func, rule)
                if not (_loading and _key(func) in RULES):
                    RULES[_key(func)] = rule
                    ORIGIN[_key(func)] = getattr(template, "__module__", None)
                if not _loading:
                    _registered(func, _template_text(template))
        return template
    return register


def tangent(*funcs):
    """Register the decorated template as the tangent (forward-mode) rule of each of `funcs`:
    parameters are the primal result then its arguments, the body assigns `<result>_dot` from the
    arguments' tangents `<arg>_dot` (a missing tangent is zero: the terms reading it are dropped)."""
    def register(template):
        rule = _read(parse_tangent, template, _describe(funcs[0]), "tangent")
        with _lock:
            for func in funcs:
                if not _loading:
                    _check_arity(func, rule)
                if not (_loading and _key(func) in TANGENTS):
                    TANGENTS[_key(func)] = rule
                if not _loading:
                    _registered(func, "tangent " + _template_text(template))
        return template
    return register


def nondifferentiable(*funcs, text: str | None = None):
    """Declare that calls to `funcs` pass no gradient (and no tangent); `text` (MAKES_TEXT,
    KEEPS_TEXT or REPORTS) also declares their part in text (see `declare_text`)."""
    with _lock:
        for func in funcs:
            if not (_loading and _key(func) in RULES):
                RULES[_key(func)] = nondiff_rule(_describe(func))
                TANGENTS.pop(_key(func), None)
                ORIGIN[_key(func)] = sys._getframe(1).f_globals.get("__name__")
            if not _loading:
                _registered(func, "nondifferentiable")
        if text is not None:
            declare_text(text, *funcs)
    return funcs[0] if len(funcs) == 1 else funcs


def refuse_gradient(func, *params, why: str) -> None:
    """Declare that the adjoint rule of `func` passes nothing to `params` although its value
    depends on them smoothly (the order `v` of `scipy.special.jv`, the `a` of `gammainc`): a call
    whose argument for one of them depends on the differentiated arguments is refused at its line
    (MissingRuleError, saying `why`), never given a zero. Call it after registering the rule. (A
    tangent rule instead adds `rt.no_tangent(a_dot, ...)`: `jvp` gives every float argument a
    tangent, so only a nonzero one is refused, when it runs.)"""
    with _lock:
        rule = RULES.get(_key(func))
        if rule is not None:
            rule.refused = {**rule.refused, **{p: why for p in params}}


# A primitive's part in text. Text carries no gradient, so a number read back from text made from
# a differentiated value would have a zero gradient where the function's is not: `float(f"{x}")`
# is x. Activity therefore lets such text (and what is computed from it) reach only primitives
# with one of these facts, the allow-list; any other use, or returning it, is a located error.
MAKES_TEXT = "makes text"  # the result is text made from the arguments: `str`, `format`, str methods
KEEPS_TEXT = "keeps text"  # given text, the result is text or a question about it: `+`, `==`, `len`, lists
REPORTS = "reports"  # shows its arguments and gives nothing to compute with: `print`, `logging`, raise
TEXT_KINDS = (MAKES_TEXT, KEEPS_TEXT, REPORTS)
TEXT: dict = {}  # primitive (or ir.Method of a method name) -> its text kind; absent: none


def declare_text(kind: str, *funcs) -> None:
    """Declare the part `funcs` (functions, ir primitives, or method names as strings) play in
    text: MAKES_TEXT, KEEPS_TEXT or REPORTS. Only the text fact changes, never a rule."""
    if kind not in TEXT_KINDS:
        raise RuleError(f"unknown text kind {kind!r}; use one of {', '.join(map(repr, TEXT_KINDS))}")
    with _lock:
        for func in funcs:
            if not (_loading and _key(func) in TEXT):
                TEXT[_key(func)] = kind
            if not _loading:
                _registered(func, f"text: {kind}")


def text_of(prim) -> str | None:
    """The text kind of `prim` (MAKES_TEXT, KEEPS_TEXT, REPORTS), or None: a primitive with none
    may not read text made from a differentiated value."""
    load_builtin_rules()
    try:
        kind = TEXT.get(prim)
        if kind is None and hasattr(prim, "__func__"):  # a bound method (`logger.info`)
            kind = TEXT.get(prim.__func__)
    except TypeError:  # unhashable callee
        return None
    return kind


def alias(target, source) -> None:
    """Give `target` (a function or a method name) the rule of `source`."""
    with _lock:
        if not (_loading and _key(target) in RULES):
            RULES[_key(target)] = RULES[_key(source)]
            ORIGIN[_key(target)] = sys._getframe(1).f_globals.get("__name__")
            if _key(source) in TANGENTS:
                TANGENTS[_key(target)] = TANGENTS[_key(source)]
        if not _loading:
            _registered(target, f"alias of {_describe(source)}")


def load_builtin_rules() -> None:
    global _loaded, _loading
    if _loaded:
        return
    with _lock:
        if not _loaded:
            _loading = True
            try:
                for name in BUILTIN_MODULES:
                    importlib.import_module(f"adjoint_compiler.rules.{name}")
            finally:
                _loading = False
            _loaded = True


# Rule modules of optional libraries: (the library module, the rule module). The compiler never
# imports a library itself: a rule module loads the first time a lookup misses while its library
# is imported (a program calling `scipy.special.erf` has imported it).
OPTIONAL_MODULES = (("scipy.special", "scipy_special"), ("scipy.linalg", "scipy_linalg"),
                    ("scipy.stats", "scipy_stats"), ("scipy.signal", "scipy_signal"))
_optional_loaded: set = set()


def load_optional() -> bool:
    """Load the rule modules of the optional libraries imported since the last call (built-in
    rules: they never replace a user's). True if one was loaded."""
    global _loading
    if len(_optional_loaded) == len(OPTIONAL_MODULES):
        return False
    pending = [rules for library, rules in OPTIONAL_MODULES if rules not in _optional_loaded and library in sys.modules]
    if not pending:
        return False
    with _lock:
        before, _loading = _loading, True
        try:
            for rules in pending:
                if rules not in _optional_loaded:
                    _optional_loaded.add(rules)
                    importlib.import_module(f"adjoint_compiler.rules.{rules}")
        finally:
            _loading = before
    return True


TWINS: dict = {}  # function -> the plain function the compiler reads instead of its source
FASTER: dict = {}  # function -> the runtime function the generated code calls in its place


def computed_by(func, faster) -> None:
    """The generated code calls `faster` (a runtime function computing the same values as `func`,
    faster) where the user calls `func` without keyword arguments; `faster` takes `func`'s rules (`alias`; rules/complex.py
    lists it beside `func`)."""
    FASTER[func] = faster
    alias(faster, func)


def faster_form(func):
    """What the generated code calls in place of `func` (`computed_by`), or None."""
    load_builtin_rules()
    try:
        return FASTER.get(func)
    except TypeError:  # an unhashable callee
        return None


def differentiate_as(func):
    """Register the decorated function as what the compiler differentiates in place of `func`: the
    same values, written in the subset the compiler follows (a runtime helper that updates an
    adjoint array in place, for speed, is differentiated as the pure function it computes)."""
    def register(twin):
        TWINS[func] = twin
        return twin
    return register


def twin_of(func):
    load_builtin_rules()
    twin = TWINS.get(func)
    if twin is None and load_optional():  # an optional library's twins (rules/scipy_stats.py)
        twin = TWINS.get(func)
    return func if twin is None else twin


def lookup(prim):
    load_builtin_rules()
    try:
        rule = RULES.get(prim)
    except TypeError:  # unhashable callee
        return None
    if rule is None and load_optional():
        rule = RULES.get(prim)
    if rule is None and hasattr(prim, "__func__"):  # a classmethod, bound anew at each access
        rule = RULES.get(prim.__func__)
    return rule


@dataclass(frozen=True)
class ComplexRule:
    """A primitive's fact for complex operands: the adjoint rule valid for them under the
    convention z_bar = dL/dx - i dL/dy (`rule`), the tangent rule valid for them, the directional
    derivative along a complex tangent with C read as R^2 (`tangent`; None: forward mode refuses
    complex operands), the parameters that must stay real (`real`: the condition of `np.where`,
    the signal of `np.fft.rfft`), whether its dtype parameter must name a complex type (`astype`),
    and whether the rule is the primitive's only one (`own`: `np.real`, `np.fft.fft`: a real
    operand takes the complex path too, its contribution projected)."""

    rule: Rule
    real: tuple = ()
    complex_dtype: bool = False
    own: bool = False
    tangent: Rule | None = None


COMPLEX: dict = {}  # primitive -> ComplexRule; absent: complex operands are refused


def _registered_tangent(func) -> Rule | None:
    """The tangent rule `func` has for real operands: its own, or the zero rule of a constant."""
    rule = TANGENTS.get(_key(func))
    if rule is None and RULES.get(_key(func)) is not None and RULES[_key(func)].body is None:
        rule = RULES[_key(func)]
    if rule is None:
        raise RuleError(f"holds_for_complex(..., tangent=True): {_describe(func)} has no tangent rule")
    return rule


def holds_for_complex(*funcs, real: tuple = (), complex_dtype: bool = False, tangent: bool = False) -> None:
    """Declare that the adjoint rule registered for each of `funcs` is valid for complex operands
    (a holomorphic function's `x_bar += g * f'(x)`, a linear map's plain transpose); with
    `tangent`, that its tangent rule is too (`y_dot = f'(x) * x_dot`: no abs, sign, comparison
    or real part of an operand in it), so forward mode takes complex operands."""
    with _lock:
        for func in funcs:
            COMPLEX[_key(func)] = ComplexRule(RULES[_key(func)], tuple(real), complex_dtype,
                                              tangent=_registered_tangent(func) if tangent else None)


def complex_adjoint(*funcs, real: tuple = (), own: bool = False):
    """Register the decorated template as the adjoint rule of `funcs` for complex operands (a
    non-holomorphic function, or one whose real rule does not hold for them)."""
    def register(template):
        rule = _read(parse_template, template, _describe(funcs[0]), "adjoint")
        with _lock:
            for func in funcs:
                if not _loading:
                    _check_arity(func, rule)
                COMPLEX[_key(func)] = ComplexRule(rule, tuple(real), own=own)
        return template
    return register


def complex_tangent(*funcs):
    """Register the decorated template as the tangent rule of `funcs` for complex operands (after
    their `complex_adjoint` or `holds_for_complex`: it completes the same record). The body is the
    derivative along a complex tangent `x_dot`, C read as R^2 (`np.real(x_dot)` for `np.real`)."""
    def register(template):
        rule = _read(parse_tangent, template, _describe(funcs[0]), "tangent")
        with _lock:
            for func in funcs:
                if not _loading:
                    _check_arity(func, rule)
                if _key(func) not in COMPLEX:
                    raise RuleError(f"complex_tangent: {_describe(func)} has no complex adjoint rule yet "
                                    "(declare it with holds_for_complex or complex_adjoint first)")
                COMPLEX[_key(func)] = replace(COMPLEX[_key(func)], tangent=rule)
        return template
    return register


def lookup_complex(prim) -> ComplexRule | None:
    """The complex fact of `prim`, or None: complex operands are refused (also once a user has
    registered a rule of their own for it, which may assume real numbers)."""
    load_builtin_rules()
    try:
        if prim in USER_KEYS:
            return None
        return COMPLEX.get(prim)
    except TypeError:  # unhashable callee
        return None


def lookup_tangent(prim):
    """The tangent rule of `prim`: its registered one, or the zero rule of a nondifferentiable
    primitive; None when it has none."""
    load_builtin_rules()
    try:
        rule = TANGENTS.get(prim)
        if rule is None and hasattr(prim, "__func__"):
            rule = TANGENTS.get(prim.__func__)
    except TypeError:  # unhashable callee
        return None
    if rule is None and load_optional():  # an optional library's rules, loaded at their first lookup
        return lookup_tangent(prim)
    if rule is None:
        adjoint_rule = lookup(prim)
        if adjoint_rule is not None and adjoint_rule.body is None:
            return adjoint_rule
    return rule

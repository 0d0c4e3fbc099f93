"""The rule table: primitive -> Rule. Built-in rules live in `rules/`; users add theirs with
`@adjoint(func)` and `nondifferentiable(func)`. User rules take precedence over compiling source.

    @adjoint(np.sin)
    def sin(y, x):
        x_bar += y_bar * np.cos(x)
"""
from __future__ import annotations

import importlib
import inspect
import threading

from . import ir
from .errors import RuleError
from .template import Rule, nondiff_rule, parse_template

RULES: dict = {}
_loaded = False
_loading = False  # while built-in rules load, they never replace a rule the user registered
_lock = threading.RLock()
BUILTIN_MODULES = ("arithmetic", "ufuncs", "reductions", "linalg", "shape", "indexing", "writes", "nondiff",
                   "composites", "runtime_helpers")


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


def adjoint(*funcs):
    """Register the decorated template as the adjoint rule of each of `funcs`."""
    def register(template):
        rule = parse_template(template, _describe(funcs[0]))
        with _lock:
            for func in funcs:
                _check_arity(func, rule)
                if not (_loading and _key(func) in RULES):
                    RULES[_key(func)] = rule
                if not _loading:
                    _registered(func, _template_text(template))
        return template
    return register


def nondifferentiable(*funcs):
    """Declare that calls to `funcs` pass no gradient."""
    with _lock:
        for func in funcs:
            if not (_loading and _key(func) in RULES):
                RULES[_key(func)] = nondiff_rule(_describe(func))
            if not _loading:
                _registered(func, "nondifferentiable")
    return funcs[0] if len(funcs) == 1 else funcs


def alias(target, source) -> None:
    """Give `target` (a function or a method name) the rule of `source`."""
    with _lock:
        if not (_loading and _key(target) in RULES):
            RULES[_key(target)] = RULES[_key(source)]
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


TWINS: dict = {}  # function -> the plain function the compiler reads instead of its source


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
    return TWINS.get(func, func)


def lookup(prim):
    load_builtin_rules()
    try:
        rule = RULES.get(prim)
    except TypeError:  # unhashable callee
        return None
    if rule is None and hasattr(prim, "__func__"):  # a classmethod, bound anew at each access
        rule = RULES.get(prim.__func__)
    return rule

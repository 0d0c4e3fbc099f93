"""Activity: which values carry derivatives. Also binds each statement to its rule.

Guarantees: every Assign that reads a varied value has `rule` and `bound` set (or a located
MissingRuleError was raised); a statement on constants only needs no rule (`np.float32(0.5)`,
`W.sum(axis=0)` of a module constant) and may keep `rule = None`;
`analyze` returns the active Vars: varied (depend differentiably on a `wrt` parameter) and
useful (reach the result through differentiable operations). Only active values get adjoints.
Text made from a varied value (`f"{x}"`, `str(x)`, `"%f" % x`, and what is computed from it) is
not varied: it may reach only reports, string operations and branch conditions, by the text facts
of the primitive records (`registry.text_of`); any other use, or returning it, is a located
TextGradientError, for a number read back from it would get a zero gradient.

    n = x.shape[0]      not varied (shape passes no gradient)
    y = np.sin(x) * n   active when x is in wrt
    s = str(y)          text made from y: print(s) is fine, float(s) is refused
"""
from __future__ import annotations

import builtins
import inspect
import numbers
import operator
import re
import sys
from dataclasses import dataclass

import numpy as np

from . import frontend, ir, registry
from .errors import AdjointCompilerError, MissingRuleError, TextGradientError, UnsupportedSyntaxError
from .fixpoint import fixpoint
from .template import Rule


@dataclass(frozen=True)
class IndexOf:
    """The rule key of `obj[...]` for an object that is not data (np.r_, np.c_, np.s_, np.mgrid,
    ...): its index items are the rule's arguments after `obj`."""

    obj: object


# The ndarray methods that change their receiver (normalize lowers them on a named array), and
# the write to use for another receiver.
_IN_PLACE_METHODS = {"fill": "`a[0] = v`", "sort": "`a[1:] = np.sort(a[1:], axis=-1)`",
                     "partition": "`a[1:] = np.partition(a[1:], k)`", "put": "`b = a[1:]; b.put(ind, v)`",
                     "resize": "`a = np.resize(a, shape)`", "itemset": "`a[i] = v`"}


def _data(value) -> bool:
    from .buffer import Buffer
    return isinstance(value, (np.ndarray, np.generic, numbers.Number, list, tuple, dict, str, bytes, range,
                              Buffer)) or value is None


def _index_object(stmt):
    """The object indexed by `stmt` when it is a global that is not data, else None."""
    if stmt.prim is operator.getitem and isinstance(stmt.args[0], ir.Global) and not _data(stmt.args[0].value):
        return stmt.args[0].value
    return None


def rule_primitive(stmt):
    """The primitive whose rules (adjoint and tangent) differentiate `stmt`: its own, except that
    `s.copy()` of a sequence (kind "seq": a list) is a sequence copy, differentiated as `list(s)`
    (NumPy's `copy` rule would make its tangent an array, which a later `append` adds to)."""
    return list if ir.is_sequence_copy(stmt) else stmt.prim


def _lookup(stmt) -> tuple:
    """(rule or None, the arguments it binds) for `stmt`."""
    obj = _index_object(stmt)
    if obj is None:
        return registry.lookup(rule_primitive(stmt)), stmt.args
    try:
        rule = registry.lookup(IndexOf(obj))
    except TypeError:
        rule = None
    idx = stmt.args[1]
    items = list(idx.items) if isinstance(idx, ir.Struct) and idx.kind == "tuple" else [idx]
    if isinstance(idx, ir.Var) and idx.kind != "num" or any(isinstance(i, ir.Const) and isinstance(i.value, str)
                                                              for i in items):
        rule = None  # a tuple held in a variable, or a string directive (`np.r_['0,2', a, b]`)
    return rule, [stmt.args[0]] + items


def _signature_template(func, fallback: str) -> tuple:
    """(parameter list, first parameter) of a rule template for `func`, from its signature."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return fallback, fallback.split(",")[0].lstrip("*")
    parts = []
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        if p.default is p.empty:
            parts.append(p.name)
        elif isinstance(p.default, (int, float, bool, str, type(None))):
            parts.append(f"{p.name}={p.default!r}")
        else:
            break
    if not parts:
        return fallback, fallback.split(",")[0].lstrip("*")
    return ", ".join(parts), parts[0].split("=")[0]


def _library(func) -> str | None:
    """'NumPy', 'SciPy', 'Python builtin', ... for a function of a library, else None."""
    mod = getattr(func, "__module__", None) or ""
    owner = getattr(func, "__self__", None)
    if owner is not None and not inspect.ismodule(owner) and not mod:
        mod = getattr(type(owner), "__module__", None) or ""
    if isinstance(func, np.ufunc) or isinstance(owner, np.ufunc) or mod.split(".")[0] == "numpy":
        return "NumPy"
    root = mod.split(".")[0]
    if root == "builtins":
        return "Python builtin"
    if root in frontend.LIBRARIES or root in sys.stdlib_module_names:
        return f"`{root}`"
    if root:
        try:
            file = getattr(sys.modules.get(root), "__file__", "") or ""
        except Exception:
            file = ""
        if "site-packages" in file or "dist-packages" in file:
            return f"`{root}`"
    return None


def missing_rule_message(stmt) -> str:
    """What is true about a call with no adjoint rule, then how to give it one."""
    prim = stmt.prim
    zero = ("`nondifferentiable({name})` instead declares a zero gradient: right only for a function "
            "whose output does not vary smoothly with its inputs (integer-valued, boolean, or constant)")
    if isinstance(prim, ir.Method):
        name = prim.name
        if not hasattr(np.ndarray, name):
            return (f"`.{name}()` is not an ndarray method with an adjoint rule, and the receiver's class is not "
                    "known when compiling (methods of the user's objects are compiled when the object is an "
                    "argument, a field of one, or a global; not an item of a list or a dict's `.items()`); "
                    "call the method on an argument, or compute the value with NumPy functions or a plain "
                    "Python function")
        if name in _IN_PLACE_METHODS:
            return (f"`.{name}()` changes its receiver in place, which is differentiated only on an array of the "
                    f"function's own named by it (`a.{name}(...)`{', `a[i:j].fill(v)`' if name == 'fill' else ''}); "
                    "here the receiver is another expression: write into the array instead "
                    f"({_IN_PLACE_METHODS[name]})")
        return (f"the ndarray method `.{name}()` has no adjoint rule yet. Register a rule with "
                f"`@adjoint(\"{name}\")` over `def _(result, a, *args): a_bar += ...` (the receiver "
                f"comes first; the body accumulates `<arg>_bar` from `result_bar`); "
                + zero.format(name=f'"{name}"'))
    if isinstance(prim, ir.Attr):
        return (f"reading the attribute `.{prim.name}` of a value that depends on the differentiated "
                f"arguments has no adjoint rule")
    obj = _index_object(stmt)
    if obj is not None:
        name = stmt.args[0].path
        return (f"`{name}[...]` with an index that depends on the differentiated arguments has no adjoint "
                f"rule (np.r_ and np.c_ have one for arrays, numbers and constant slices, without a string "
                f"directive or an index held in a variable); build the array with np.concatenate, "
                f"np.stack or np.linspace instead")
    if stmt.callee is None:
        return f"`{prim!r}` has no adjoint rule"
    name = stmt.callee.path
    func = stmt.callee.value
    params, first = _signature_template(func, "*args")
    library = _library(func)
    bound_to = getattr(func, "__self__", None)
    if inspect.ismethod(func) or (bound_to is not None and not inspect.ismodule(bound_to)
                                  and not inspect.isclass(bound_to) and library is None):
        return (f"`{name}` is a method of an object, and methods of user objects cannot be "
                "differentiated yet; call a plain Python function instead (it is compiled from its source)")
    if library == "Python builtin":
        what = f"`{name}` is a Python builtin without an adjoint rule"
    elif inspect.isclass(func) and library is None:
        return (f"`{name}` is a class, and constructing user objects cannot be differentiated yet; "
                "call a plain Python function instead")
    elif library == "NumPy":
        what = f"`{name}` is a NumPy function without an adjoint rule yet"
    elif library:
        what = f"`{name}` is a library function (from {library}) without an adjoint rule"
    else:
        what = f"`{name}` has no adjoint rule, and there is no Python source to compile for it"
    return (f"{what}. Register a rule with `@adjoint({name})` over `def _(result, {params}): "
            f"{first}_bar += ...` (the body accumulates `<arg>_bar` from `result_bar`); "
            + zero.format(name=name))


def _numpy_callable(stmt) -> bool:
    if isinstance(stmt.prim, ir.Method):
        return hasattr(np.ndarray, stmt.prim.name)
    return stmt.callee is not None and _library(stmt.callee.value) == "NumPy"


def _float_dtype(value) -> bool:
    try:
        return isinstance(value, (type, str, np.dtype)) and np.dtype(value).kind == "f"
    except TypeError:
        return False


# Keywords of NumPy functions and ndarray methods that do not change the math at these values
# (when the rule does not take the keyword itself): where to put the result (only `None`: an
# `out=` array is a write), the memory layout of a fresh result, the casting policy, a float
# dtype, forcing a copy, the array-protocol hooks, einsum's contraction order.
_HARMLESS = {
    "out": lambda v: v is None,
    "where": lambda v: v is True,
    "order": lambda v: v in ("K", "A", "C", "F", None),
    "casting": lambda v: isinstance(v, str),
    "subok": lambda v: isinstance(v, bool),
    "dtype": _float_dtype,
    "copy": lambda v: v is True,
    "like": lambda v: v is None,
    "device": lambda v: v in (None, "cpu"),
    "optimize": lambda v: isinstance(v, (bool, str)),
}


def _constant_value(op):
    if isinstance(op, ir.Const):
        return True, op.value
    if isinstance(op, ir.Global):
        return True, op.value
    return False, None


def call_kwargs(stmt, rule: Rule) -> dict:
    """The keyword arguments of `stmt` its rule must bind: a keyword the rule does not take is left
    out where it cannot change the derivative: its value is the callee's own default, or (for NumPy)
    a layout, casting or float-dtype choice, `out=None`, `where=True`."""
    if rule.body is None:
        return stmt.kwargs
    taken = set(rule.params) | set(rule.kwonly)
    try:
        sig = inspect.signature(stmt.callee.value) if stmt.callee is not None else None
    except (TypeError, ValueError):
        sig = None
    numpy = _numpy_callable(stmt)
    out = {}
    for k, op in stmt.kwargs.items():
        known, value = _constant_value(op)
        if k not in taken and known:
            param = sig.parameters.get(k) if sig is not None else None
            if param is not None and param.default is not param.empty and _same_value(param.default, value):
                continue
            if numpy and k in _HARMLESS and _HARMLESS[k](value):
                continue
        out[k] = op
    return out


def _same_value(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _rule_error(stmt):
    """The located error for a statement with no usable rule (no rule, or a rule that rejects the
    call's arguments)."""
    rule, args = _lookup(stmt)
    if rule is None:
        return MissingRuleError(missing_rule_message(stmt), stmt.loc)
    try:
        rule.bind(args, call_kwargs(stmt, rule), stmt.loc)
    except AdjointCompilerError as exc:
        return exc
    return None


# Builtins whose result depends on the calling frame (the generated code's, once compiled).
_FRAME_BUILTINS = tuple(getattr(builtins, n) for n in ("globals", "locals", "vars", "eval", "exec", "dir",
                                                         "breakpoint", "super", "compile", "__import__"))


def _frame_dependent(prim) -> bool:
    return any(prim is b for b in _FRAME_BUILTINS)


def bind_rules(fn: ir.Function) -> None:
    """Bind each statement to its rule where it has one that accepts its arguments. A statement
    with none keeps `rule = None`: that is an error only if one of its operands is varied (see
    `analyze`), for a statement on constants needs no gradient."""
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign) and _frame_dependent(stmt.prim):
            raise UnsupportedSyntaxError(
                f"`{stmt.prim.__name__}()` reads the frame it is called from, which is the generated code's, not "
                "your function's; name the global, attribute or value directly", stmt.loc)
        if isinstance(stmt, ir.Assign) and stmt.rule is None:
            rule, args = _lookup(stmt)
            if rule is None:
                continue
            try:
                stmt.bound = rule.bind(args, call_kwargs(stmt, rule), stmt.loc)
            except AdjointCompilerError:
                stmt.bound = None
                continue
            stmt.rule = rule


def diff_operands(stmt: ir.Assign) -> list:
    """The Vars bound to parameters through which `stmt`'s rule passes gradient."""
    rule: Rule = stmt.rule
    if rule is None:
        return []
    out = []
    for p in rule.diff_params:
        op = stmt.bound.get(p)
        ops = op if isinstance(op, tuple) else (op,)
        out += [v for o in ops for v in ir.operand_vars(o)]
    return out


def _check_rule(stmt: ir.Assign, varied: set) -> None:
    """A statement without a usable rule that reads a varied value: a located error. So is a
    varied value inside a slice the rule differentiates through (`np.r_[0:x]`): rules give
    gradients to whole operands only."""
    if stmt.rule is None and any(v in varied for v in ir.stmt_reads(stmt)):
        err = _rule_error(stmt)
        if err is not None:
            raise err
    if stmt.rule is not None:
        for p, why in stmt.rule.refused.items():
            op = stmt.bound.get(p)
            if any(v in varied for o in (op if isinstance(op, tuple) else (op,)) for v in ir.operand_vars(o)):
                raise MissingRuleError(
                    f"{_describe(stmt)} has no gradient with respect to its argument `{p}` ({why}), and "
                    f"`{p}` here depends on the differentiated arguments; pass a constant `{p}` (or leave it "
                    f"out of `wrt`), or register a rule that differentiates it", stmt.loc)
        for p in stmt.rule.diff_params:
            op = stmt.bound.get(p)
            for o in op if isinstance(op, tuple) else (op,):
                if isinstance(o, ir.Struct) and any(v in varied for v in ir.operand_vars(o)):
                    raise MissingRuleError(
                        f"a slice whose bounds depend on the differentiated arguments, passed to "
                        f"{_describe(stmt)}, has no adjoint rule; build the values with np.arange or "
                        f"np.linspace instead", stmt.loc)


def _describe(stmt) -> str:
    if stmt.callee is not None:
        return f"`{stmt.callee.path}`"
    if _index_object(stmt) is not None:
        return f"`{stmt.args[0].path}[...]`"
    if isinstance(stmt.prim, ir.Method):
        return f"the method `.{stmt.prim.name}()`"
    return f"`{stmt.rule.name}`"


def _formats(stmt) -> bool:
    """`'...' % v`: the `%` of a string literal formats its operands into text."""
    first = stmt.args[0] if stmt.args else None
    return stmt.prim is operator.mod and isinstance(first, ir.Const) and isinstance(first.value, str)


_CONTAINERS = (ir.BUILD_TUPLE, ir.BUILD_LIST, ir.CONCAT, ir.REPEAT)
# The operand that only chooses where to read or write (`x[i]`, `b[i] = v`): like a branch
# condition, text may steer it; the item read or written is not made from it.
_POSITION_OPERAND = {operator.getitem: 1, ir.SETITEM: 1, ir.SAVE: 1}


def _text_reads(stmt) -> list:
    """The Vars `stmt` reads as values (its operands but a position it reads or writes at)."""
    try:
        skip = _POSITION_OPERAND.get(stmt.prim)
    except TypeError:  # unhashable callee
        skip = None
    ops = [a for k, a in enumerate(stmt.args) if k != skip] + list(stmt.kwargs.values())
    return [v for op in ops for v in ir.operand_vars(op)]


def _text_source(stmt, varied: set, text: dict, builds: dict):
    """The varied value the text `stmt` makes was made from, when it makes text from one (a
    primitive that makes text, given a varied value or text; one that keeps text or reports,
    given text: what a report returns is no number to compute with either); else None. An item
    read at a constant position of a tuple or list display in `builds` is text only when that item
    is (`tup = (y, str(y)); tup[0]` is a number)."""
    kind = registry.text_of(stmt.prim)
    if kind is None or stmt.target is None:
        return None
    if stmt.prim is operator.getitem and stmt.args[0] in builds and isinstance(stmt.args[1], ir.Const) \
            and type(stmt.args[1].value) is int:
        items, i = builds[stmt.args[0]].args, stmt.args[1].value
        item = items[i] if -len(items) <= i < len(items) else None
        return text.get(item) if isinstance(item, ir.Var) else None
    source = next((text[v] for v in _text_reads(stmt) if v in text), None)
    if source is None and (kind == registry.MAKES_TEXT or _formats(stmt)):
        source = next((v for v in ir.stmt_reads(stmt) if v in varied), None)
    return source


def _varied(stmts, varied: set, slices: set, text: dict, builds: dict) -> None:
    """Grow `varied`; `slices` collects the slice objects built from varied values (`slice(a, b)`
    passes no gradient, so an index trick reading one is refused, never silently zero); `text`
    maps each value that is text made from a varied value (or a question about such text) to that
    varied value (see `check_text`); `builds` holds the tuple and list displays by their Var."""
    for s in stmts:
        if isinstance(s, ir.Assign):
            source = _text_source(s, varied, text, builds)
            if source is not None:
                text.setdefault(s.target, source)
                if s.prim not in _CONTAINERS:  # a tuple or list may hold numbers beside the text
                    continue  # text passes no gradient; `check_text` judges where it goes
            _check_rule(s, varied)
            if s.prim is slice and any(v in varied for v in ir.stmt_reads(s)):
                slices.add(s.target)
            if _index_object(s) is not None and any(v in slices for v in ir.stmt_reads(s)):
                raise MissingRuleError(
                    f"a slice whose bounds depend on the differentiated arguments, passed to "
                    f"`{s.args[0].path}[...]`, has no adjoint rule; build the values with np.arange or "
                    f"np.linspace instead", s.loc)
            if s.target is not None and any(v in varied for v in diff_operands(s)):
                varied.add(s.target)
        elif isinstance(s, ir.If):
            _varied(s.body, varied, slices, text, builds)
            _varied(s.orelse, varied, slices, text, builds)
            for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                if a in varied or b in varied:
                    varied.add(out)
                source = text.get(a) or text.get(b)
                if source is not None:
                    text.setdefault(out, source)
        elif isinstance(s, ir.Loop):
            def step(_, s=s):
                varied.update(p for p, i, n in zip(s.params, s.inits, s.nexts) if i in varied or n in varied)
                for p, i, n in zip(s.params, s.inits, s.nexts):
                    source = text.get(i) or text.get(n)
                    if source is not None:
                        text.setdefault(p, source)
                over = next((text[v] for v in ir.operand_vars(s.iterable) if v in text), None) \
                    if s.kind == "for" else None
                if over is not None and s.target is not None:  # the items of text (`for c in s`)
                    text.setdefault(s.target, over)
                _varied(s.cond_body, varied, slices, text, builds)
                _varied(s.body, varied, slices, text, builds)
                return len(varied) + len(text)
            # each round that changes anything adds one of the loop's values to one of the two sets
            fixpoint(step, len(varied) + len(text), 2 * _loop_size(s) + 2,
                     "activity (varied values) around a loop")


_NUMBER_MAKERS = (float, int, complex, bool, np.array, np.asarray, np.asanyarray, np.fromstring, np.loadtxt,
                  np.genfromtxt, eval)


def _shown(stmt) -> str:
    """The call or operation `stmt` is, as the user wrote it (`float(...)`, `.upper()`, `-`)."""
    from .printing import BINOPS, UNARY
    if stmt.callee is not None:
        return f"`{stmt.callee.path}(...)`"
    if isinstance(stmt.prim, ir.Method):
        return f"`.{stmt.prim.name}(...)`"
    if isinstance(stmt.prim, ir.Attr):
        return f"reading `.{stmt.prim.name}`"
    if stmt.prim in BINOPS:
        return f"`{BINOPS[stmt.prim]}`"
    if stmt.prim in UNARY:
        return f"`{UNARY[stmt.prim].strip()}`"
    if stmt.prim in ir.WRITES:
        return "a write into an array or list"
    return f"`{getattr(stmt.prim, 'name', None) or getattr(stmt.prim, '__name__', repr(stmt.prim))}`"


def _converts(stmt) -> bool:
    value = stmt.callee.value if stmt.callee is not None else stmt.prim
    try:
        return any(value is m for m in _NUMBER_MAKERS) or (isinstance(value, type)
                                                           and issubclass(value, np.generic))
    except TypeError:
        return False


def _in_function(fn: ir.Function, loc) -> str:
    """The name of the user function whose line `loc` is (the differentiated one, or a helper
    inlined into it)."""
    best, best_line = fn.name, fn.loc.line if fn.loc.file == loc.file and fn.loc.line <= loc.line else -1
    for func in fn.inlined:
        code = getattr(func, "__code__", None)
        if code is not None and code.co_filename == loc.file and best_line < code.co_firstlineno <= loc.line:
            best, best_line = getattr(func, "__name__", best), code.co_firstlineno
    return best


_ONLY = ("text made from differentiated values may only reach reports (`print`, `logging`, `warnings.warn`, "
         "an exception raised, an `assert` message), string operations and branch conditions")


def _user_value(v, fn: ir.Function, defs: dict, varied: set):
    """`v`, or when it is a temporary (`x_times_c`), the nearest varied value it is computed from
    that has a name in the user's code."""
    seen, todo = set(), [v]
    while todo:
        u = todo.pop(0)
        if u in fn.params or u not in defs or re.search(rf"\b{re.escape(u.display)}\b", defs[u].loc.raw_text):
            return u
        seen.add(u)
        todo += [w for w in ir.stmt_reads(defs[u]) if w in varied and w not in seen]
    return v


def check_text(fn: ir.Function, text: dict, varied: set = frozenset()) -> None:
    """Refuse, at the user's line, each use of text made from a varied value other than by a
    primitive whose record allows it (MAKES_TEXT, KEEPS_TEXT, REPORTS), and returning it: a
    number read back from text gets no gradient (`float(f"{x}")` is x, yet would differentiate
    as a constant)."""
    if not text:
        return
    defs = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None}

    def made(v) -> str:
        what = f"text made from the differentiated value `{_user_value(text[v], fn, defs, varied).display}`"
        if v in defs and registry.text_of(defs[v].prim) != registry.MAKES_TEXT \
                and defs[v].prim not in _CONTAINERS:
            return "a value computed from " + what
        return what
    for s in ir.walk(fn.body):
        if not isinstance(s, ir.Assign):
            continue
        read = next((v for v in _text_reads(s) if v in text), None)
        if read is None or registry.text_of(s.prim) is not None:
            continue
        where = f"{_in_function(fn, s.loc)} line {s.loc.line}"
        if _converts(s):
            what = f"{_shown(s)} converts {made(read)} back to a number"
        else:
            what = f"{_shown(s)} reads {made(read)}"
        raise TextGradientError(f"{where}: {what}; a gradient through text is not defined: {_ONLY}; compute "
                                "with the number itself", s.loc)
    returned = next((v for v in ir.operand_vars(fn.result) if v in text), None)
    if returned is not None:
        loc = defs[returned].loc if returned in defs else fn.loc
        raise TextGradientError(
            f"{_in_function(fn, loc)} line {loc.line}: `{fn.name}` returns {made(returned)}; a gradient "
            f"through text is not defined: {_ONLY}; return the number itself", loc)


def _useful(stmts, useful: set) -> None:
    for s in reversed(stmts):
        if isinstance(s, ir.Assign):
            if s.target is not None and s.target in useful:
                useful.update(diff_operands(s))
        elif isinstance(s, ir.If):
            for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                if out in useful:
                    useful.update(v for v in (a, b) if isinstance(v, ir.Var))
            _useful(s.body, useful)
            _useful(s.orelse, useful)
        elif isinstance(s, ir.Loop):
            def step(_, s=s):
                for p, i, n in zip(s.params, s.inits, s.nexts):
                    if p in useful:
                        useful.update(v for v in (i, n) if isinstance(v, ir.Var))
                _useful(s.body, useful)
                return len(useful)
            # each round that changes anything adds a value read in the loop or one of its inits
            fixpoint(step, len(useful), _loop_size(s) + 2, "activity (useful values) around a loop")


def _loop_size(s: ir.Loop) -> int:
    """How many values a loop's statements read or define: a bound on how often a set of them grows."""
    return sum(len(ir.operand_vars(op)) for t in ir.walk([s]) for op in ir.stmt_operands(t)) \
        + sum(len(ir.defined_by(t)) for t in ir.walk([s]))


def analyze(fn: ir.Function, wrt: list) -> set:
    """Active Vars of `fn` for the parameters `wrt` (a list of Vars)."""
    bind_rules(fn)
    varied = set(wrt)
    text: dict = {}
    builds = {s.target: s for s in ir.walk(fn.body)
              if isinstance(s, ir.Assign) and s.prim in (ir.BUILD_TUPLE, ir.BUILD_LIST)}
    _varied(fn.body, varied, set(), text, builds)
    check_text(fn, text, varied)
    useful = set(ir.operand_vars(fn.result))
    _useful(fn.body, useful)
    return varied & useful

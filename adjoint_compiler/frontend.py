"""Frontend: a Python function to its `gast` tree, with every node located in the user's file.

Guarantees: `Source.node` is the function's `gast.FunctionDef` whose `lineno`s are file lines and
whose `col_offset`s are columns in the file; `Source.loc(node)` gives the `Loc` of any node.

The source read is that of the function's own code object: a decorated function is the wrapper
the user wrote (only our own `@differentiable` is seen through). A decorator's forwarding wrapper
`def wrapper(*args, **kwargs): return -func(*args, **kwargs)` is rewritten to take the wrapped
function's parameters (`def wrapper(v): return -func(v)`); any other use of `*args` is refused.
Inside `recording()`, every function read and every free name looked up is noted (the run-time
guard of the compiled code is built from that record, see guard.py).
"""
from __future__ import annotations

import builtins
import contextlib
import inspect
import linecache
import os
import sys
import sysconfig
import textwrap
import threading
import types
import weakref
from dataclasses import dataclass, field

import gast

from . import astwalk
from .errors import AdjointCompilerError
from .ir import Loc

LIBRARIES = {"numpy", "scipy", "math", "builtins", "operator", "functools", "itertools"}


def is_library_module(module: str | None) -> bool:
    """Whether a function of `module` is a library's (never compiled from its source): NumPy,
    SciPy and the standard library (`logging.info` runs as written, it is not inlined)."""
    root = (module or "").split(".")[0]
    if root in LIBRARIES:
        return True
    if root not in _STDLIB_NAMES:
        return False
    loaded = sys.modules.get(root)  # (a user's own `test.py` or `random.py` is not the standard library's)
    file = getattr(loaded, "__file__", None)
    return loaded is not None and (file is None or os.path.abspath(file).startswith(_STDLIB_DIR))


_STDLIB_NAMES = frozenset(getattr(sys, "stdlib_module_names", ()))
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


class SourceError(AdjointCompilerError, TypeError):
    """The object has no Python source the compiler can read."""


@dataclass
class Source:
    func: types.FunctionType
    node: gast.FunctionDef
    file: str
    lines: list
    globals: dict
    closure: dict
    first: int  # file line of `lines[0]`
    reading: object = None  # the `Reading` of the compilation that read this source, if any
    paths: set = field(default_factory=set)  # dotted names read from free names (`cfg.scale`)
    outer: frozenset = frozenset()  # for a nested def or lambda: free names local to an enclosing function

    def loc(self, node) -> Loc:
        line = getattr(node, "lineno", None) or self.node.lineno
        col = getattr(node, "col_offset", 0) or 0
        raw = linecache.getline(self.file, line) or ""
        if not raw and self.lines:
            raw = self.lines[min(max(line - self.first, 0), len(self.lines) - 1)]
        return Loc(self.file, line, col, raw.rstrip("\n"))

    def lookup(self, name: str):
        """The value a free name has for the function: closure, then globals, then builtins."""
        for scope in (self.closure, self.globals, vars(builtins)):
            if name in scope:
                if self.reading is not None:
                    self.reading.lookups.append((self.func, name, scope[name]))
                return True, scope[name]
        return False, None


class Reading:
    """What one compilation read: every function whose source it read (in order) and every free
    name it looked up, as `(function, name, value)`. The run-time guard is built from it."""

    def __init__(self):
        self.functions: list = []
        self.sources: list = []
        self.lookups: list = []
        self.class_reads: list = []  # (class, name): a method or property found on a class
        self.attr_reads: list = []  # (object, name): an attribute of a global object read at compile time
        self.guards: list = []  # the guards of gradients compiled for calls inside (nesting)


def note_class_read(cls, name: str) -> None:
    """Record that the compilation resolved `name` on class `cls` (a method, property or class
    constant it inlined or read): the guard re-checks that `cls` still resolves it alike."""
    reading = getattr(_state, "reading", None)
    if reading is not None and isinstance(cls, type) and isinstance(name, str):
        reading.class_reads.append((cls, name))


def note_attr_read(obj, name: str) -> None:
    """Record that the compilation read `obj.name` of an object it reached from a global (inside an
    inlined method too, where the object is `self`): the guard re-checks the object's class and
    that `obj.name` is still what was read (or, for a method made anew at each read, that the
    object's own `__dict__` does not shadow it)."""
    reading = getattr(_state, "reading", None)
    if reading is not None and isinstance(name, str):
        reading.attr_reads.append((obj, name))


_state = threading.local()


@contextlib.contextmanager
def recording():
    """Record, in this thread, every function `read_function` reads and every name looked up."""
    outer = getattr(_state, "reading", None)
    _state.reading = reading = Reading()
    try:
        yield reading
    finally:
        _state.reading = outer


# Our own `differentiable` wrapper, the only wrapper the compiler sees through (api sets it).
OWN_WRAPPER_CODE: list = []
# The gradient functions and pullbacks api hands out (differentiating them is higher order).
DERIVATIVES: weakref.WeakSet = weakref.WeakSet()


def _unwrap(func):
    """The function to differentiate for `func`: `func` itself, except that our own
    `@differentiable` wrapper is seen through. A user's decorator (with or without
    `functools.wraps`) is differentiated as the wrapper it is, never as its `__wrapped__`."""
    while getattr(func, "__code__", None) in OWN_WRAPPER_CODE:
        code = func.__code__
        func = func.__closure__[code.co_freevars.index("func")].cell_contents
    return func


def is_derivative(func) -> bool:
    """Whether `func` is a gradient function or pullback made by this package."""
    try:
        return func in DERIVATIVES
    except TypeError:  # unhashable or not weakly referenceable: not ours
        return False


def check_first_order(func) -> None:
    """Raise SourceError if `func` is one of our own gradient functions or pullbacks, or one of
    the entry points that make them (`grad`, `vjp`, ...): differentiating it is higher order."""
    name = getattr(func, "__qualname__", None) or repr(func)
    if is_derivative(func):
        raise SourceError(f"`{name}` here is a gradient function or pullback made by adjoint_compiler (of "
                          f"`{name}`): higher-order derivatives (`grad(grad(f))`, or differentiating a function "
                          "that calls a gradient) are not supported yet")
    if isinstance(func, types.FunctionType) and func.__module__ in ("adjoint_compiler.api",
                                                                     "adjoint_compiler.forward_api",
                                                                     "adjoint_compiler.nesting",
                                                                     "adjoint_compiler.jacobians"):
        raise SourceError(f"`{name}` is an adjoint_compiler entry point: calling it inside a differentiated "
                          "function is a higher-order derivative, which is not supported yet for it (`grad`, "
                          "`value_and_grad`, `hvp` and `jvp` are)")


def read_function(func) -> Source:
    """Parse `func`'s source. Raises SourceError for builtins, C functions, lambdas, exec'd code,
    and our own gradient functions (higher order). The source read is that of `func`'s own code
    object: a decorated function is read as the wrapper, never as its `__wrapped__`."""
    func = _unwrap(func)
    check_first_order(func)
    if inspect.ismethod(func):
        raise SourceError(f"{func!r} is a bound method; differentiate a plain function instead")
    if not isinstance(func, types.FunctionType):
        raise SourceError(
            f"cannot differentiate {func!r}: it is not a Python function with source "
            "(builtins, NumPy functions and C functions are differentiated through rules, not compiled)")
    if (func.__module__ or "").split(".")[0] in LIBRARIES:
        raise SourceError(f"{func.__module__}.{func.__qualname__} is a library function: it is differentiated "
                          "through its rule when a function you write calls it, e.g. "
                          f"`def f(x): return {func.__module__.split('.')[0]}.{func.__name__}(x)`")
    if func.__name__ == "<lambda>":
        node, lines, first = _read_lambda(func)
    else:
        node, lines, first = _read_def(func)
    if _runs_other_code(func):
        raise SourceError(f"the source of `{func.__qualname__}` in {func.__code__.co_filename} (line {first}) is not "
                          "the code Python runs for it: the file was edited after it was imported. Reload the "
                          "module (`importlib.reload`) or restart, so that what is differentiated is what runs")
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet, so it is not a constant
                continue
    reading = getattr(_state, "reading", None)
    source = Source(func, node, func.__code__.co_filename, lines, func.__globals__, closure, first, reading,
                    _free_paths(node))
    if node.args.vararg or node.args.kwarg:
        _forward(source)
    elif hasattr(func, "__wrapped__") and not _same_signature(func):
        from .errors import UnsupportedSyntaxError
        raise UnsupportedSyntaxError(
            f"cannot differentiate `{node.name}` (the wrapper of a decorator, {source.file}:{node.lineno}): its "
            f"parameters {inspect.signature(func, follow_wrapped=False)} differ from those `functools.wraps` "
            f"gives it, {inspect.signature(func)}; declare the same parameters as the wrapped function",
            source.loc(node))
    if reading is not None:
        reading.functions.append(func)
        reading.sources.append(source)
    return source


_MODULE_CODE: dict = {}  # (file name, hash of its text) -> the text compiled (None: not Python)


def _runs_other_code(func) -> bool:
    """True when the file text the source of `func` was read from (`linecache`) does not compile,
    at `func`'s first line, to the bytecode `func` runs: the file was edited after it was loaded.
    The whole text is compiled, so that the code is compiled in its own context (closures,
    methods and CPython's module-aware optimizations come out as they did on import)."""
    code = func.__code__
    text = "".join(linecache.getlines(code.co_filename))
    if not text:
        return False
    rewritten = "@pytest_ar" in func.__globals__  # a test module whose asserts pytest rewrote on import
    key = (code.co_filename, hash(text), rewritten)
    if key not in _MODULE_CODE:
        try:
            _MODULE_CODE[key] = _compile_module(text, code.co_filename, rewritten)
        except (SyntaxError, ValueError):  # not plain Python (a notebook cell with magics, ...)
            _MODULE_CODE[key] = None
    module = _MODULE_CODE[key]
    if module is None:
        return False
    stack, found = [module], []
    while stack:
        c = stack.pop()
        if c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno:
            found.append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return not any(_same_code(c, code) for c in found)


def _compile_module(text: str, filename: str, rewritten: bool):
    """The module's code as Python compiled it on import (with pytest's rewriting of `assert`
    statements when the module is a test module pytest imported)."""
    if rewritten:
        try:
            import ast

            from _pytest.assertion.rewrite import rewrite_asserts
            tree = ast.parse(text, filename)
            rewrite_asserts(tree, text.encode(), filename, None)
            return compile(tree, filename, "exec", dont_inherit=True)
        except Exception:  # noqa: BLE001 -- pytest changed its rewriter: the code cannot be compared
            return None
    return compile(text, filename, "exec", dont_inherit=True)


def _same_code(a, b) -> bool:
    if a.co_code != b.co_code or a.co_names != b.co_names or a.co_varnames != b.co_varnames \
            or len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType) and _same_code(x, y)):
                return False
        elif type(x) is not type(y) or (x != y and repr(x) != repr(y)):
            return False
    return True


def _same_signature(func) -> bool:
    """Whether `func`'s own parameters are those its `__wrapped__` advertises (what callers bind)."""
    try:
        return inspect.signature(func) == inspect.signature(func, follow_wrapped=False)
    except (TypeError, ValueError):
        return False


def _free_paths(node) -> set:
    """Every dotted name `a.b.c` in the function (nested functions included) whose root `a` is not
    a local name of the function (the attribute reads whose values the compiler may bake in)."""
    from .functions import local_names

    local = local_names(node)  # (the function's own scope: a nested function's reads of globals count)
    paths = set()
    for n in astwalk.walk(node):
        parts = []
        while isinstance(n, gast.Attribute):
            parts.append(n.attr)
            n = n.value
        if parts and isinstance(n, gast.Name) and n.id not in local:
            paths.add(".".join([n.id] + parts[::-1]))
    return paths


def _read_def(func) -> tuple:
    """(FunctionDef with file lines and columns, the source lines, the first line) of a `def`."""
    try:
        lines, first = inspect.getsourcelines(func.__code__)
    except (OSError, TypeError) as exc:
        raise SourceError(f"cannot read the source of {func.__qualname__} "
                          f"(defined in {func.__code__.co_filename}): {exc}") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _indent_of(lines[0]) - _indent_of(dedented.splitlines()[0] + "\n")
    tree = gast.parse(dedented)
    node = tree.body[0]
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise SourceError(f"cannot find the definition of {func.__qualname__} in its source")
    for sub in astwalk.walk(node):
        if hasattr(sub, "lineno"):
            sub.lineno += first - 1
            sub.col_offset += indent
            if getattr(sub, "end_lineno", None):
                sub.end_lineno += first - 1
    return node, lines, first


def _read_lambda(func) -> tuple:
    """(FunctionDef `def lambda(params): return body`, the file's lines, 1) for a lambda made
    outside the differentiated function (`grad(lambda w: loss(w, X))`, `sq = lambda t: t * t`).
    The file is parsed whole and the lambda found by its line, its parameters and (CPython 3.11+)
    the column its code starts at; several candidates left is an error."""
    from .functions import as_def, parameters

    code = func.__code__
    where = f"{code.co_filename}:{code.co_firstlineno}"
    lines = linecache.getlines(code.co_filename)
    try:
        tree = gast.parse("".join(lines))
    except (SyntaxError, ValueError):
        tree = None
    if tree is None:
        raise SourceError(f"cannot read the source of the lambda at {where}; define it with `def` instead")
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in astwalk.walk(tree) if isinstance(n, gast.Lambda) and n.lineno == code.co_firstlineno
             and not n.args.vararg and not n.args.kwarg and parameters(n) == names]
    if len(found) > 1 and hasattr(code, "co_positions"):
        starts = [(p[0], p[2]) for p in code.co_positions() if p[0] is not None and p[2] is not None and p[3]]
        if starts:
            line, col = starts[0]

            def holds(n):
                return (n.lineno, n.col_offset) <= (line, col) <= (n.end_lineno, n.end_col_offset)
            inside = [n for n in found if holds(n)]
            found = [max(inside, key=lambda n: (n.lineno, n.col_offset))] if inside else []
    if len(found) != 1:
        raise SourceError(f"cannot tell which lambda at {where} this is (its line holds "
                          f"{'none with these parameters' if not found else 'several'}); define it with `def` instead")
    return as_def(found[0]), lines, 1


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _forward(source: Source) -> None:
    """Rewrite a decorator's forwarding wrapper `def wrapper(*args, **kwargs): ...
    func(*args, **kwargs) ...` in place into a function with the wrapped function's parameters,
    each forwarded call `func(*args, **kwargs)` passing them on (`func(x, y, k=k)`). The wrapper
    keeps its own body, so the result differentiates exactly what calling the wrapper computes.

    Only the plain pattern is accepted: no other parameters, `*args`/`**kwargs` used only in
    forwarded calls, the wrapper declared with `functools.wraps` of a function with the same
    parameters, and no name of the wrapper's body clashing with them. Anything else raises
    UnsupportedSyntaxError naming the decorator's wrapper."""
    from .errors import UnsupportedSyntaxError

    func, fn = source.func, source.node
    a = fn.args
    star = a.vararg.id if a.vararg else None
    double = a.kwarg.id if a.kwarg else None
    where = f"`{fn.name}` (the wrapper of a decorator, {source.file}:{fn.lineno})"

    def refuse(why: str, node=fn):
        raise UnsupportedSyntaxError(f"cannot differentiate {where}: {why}. Differentiate the undecorated "
                                     "function instead, or write the wrapper with named parameters",
                                     source.loc(node))

    passes_on = any((isinstance(n, gast.Starred) and isinstance(n.value, gast.Name) and n.value.id == star)
                    or (isinstance(n, gast.keyword) and n.arg is None and isinstance(n.value, gast.Name)
                        and n.value.id == double) for stmt in fn.body for n in gast.walk(stmt))
    if not hasattr(func, "__wrapped__") and not passes_on:  # a function of its own with `*args`/`**kwargs`
        variadic = ", ".join(f"`{p}`" for p in (f"*{star}" if star else None, f"**{double}" if double else None) if p)
        raise UnsupportedSyntaxError(
            f"cannot differentiate `{fn.name}` ({source.file}:{fn.lineno}): it takes {variadic}; variadic "
            "parameters are not supported. Name the parameters, or pass the arrays as one tuple or list argument",
            source.loc(fn))

    if a.posonlyargs or a.args or a.kwonlyargs:
        refuse("it mixes named parameters with `*args`/`**kwargs`")

    def forwarding(call) -> bool:
        starred = [x for x in call.args if isinstance(x, gast.Starred)]
        doubled = [k for k in call.keywords if k.arg is None]
        if not starred and not doubled:
            return False
        plain_star = (len(call.args) == 1 and isinstance(call.args[0], gast.Starred)
                      and isinstance(call.args[0].value, gast.Name) and call.args[0].value.id == star) \
            if star else not call.args
        plain_double = (len(call.keywords) == 1 and call.keywords[0].arg is None
                        and isinstance(call.keywords[0].value, gast.Name) and call.keywords[0].value.id == double) \
            if double else not call.keywords
        if not (plain_star and plain_double):
            refuse("it passes `*args`/`**kwargs` on other than unchanged (`func(*args, **kwargs)`)", call)
        return True

    body = [n for stmt in fn.body for n in astwalk.walk(stmt)]
    calls = [n for n in body if isinstance(n, gast.Call) and forwarding(n)]
    if not calls:
        refuse("it takes `*args`/`**kwargs` without forwarding them to the function it wraps")
    try:
        sig = inspect.signature(func)  # follows `__wrapped__`: the parameters callers bind to
    except (TypeError, ValueError):
        refuse("its signature cannot be read")
    params = list(sig.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        refuse("it does not declare the parameters it forwards (decorate it with `functools.wraps(func)` "
               "of a function with named parameters)")
    names = {p.name for p in params}
    for call in calls:
        if not isinstance(call.func, gast.Name):
            refuse("it forwards its arguments to a computed callee", call)
        found, callee = source.lookup(call.func.id)
        try:
            same = found and inspect.signature(callee) == sig
        except (TypeError, ValueError):
            same = False
        if not same:
            refuse(f"`{call.func.id}` does not take the parameters the wrapper declares {sig}", call)
    for n in body:
        if isinstance(n, gast.Name) and n.id in names:
            refuse(f"the name `{n.id}` in its body is also a parameter of the function it wraps", n)
    # rewrite: the wrapped function's parameters, forwarded by name
    def name(pid, ctx):
        return gast.Name(id=pid, ctx=ctx, annotation=None, type_comment=None)

    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    for call in calls:
        call.args = [gast.copy_location(name(p, gast.Load()), call) for p in positional]
        call.keywords = [gast.keyword(arg=k, value=gast.copy_location(name(k, gast.Load()), call))
                         for k in keyword_only]
    fn.args = gast.arguments(args=[gast.copy_location(name(p, gast.Param()), fn) for p in positional],
                             posonlyargs=[], vararg=None,
                             kwonlyargs=[gast.copy_location(name(k, gast.Param()), fn) for k in keyword_only],
                             kw_defaults=[None] * len(keyword_only), kwarg=None, defaults=[])
    for n in (n for stmt in fn.body for n in astwalk.walk(stmt)):
        if isinstance(n, gast.Name) and n.id in (star, double):
            refuse(f"it uses `{n.id}` other than to forward it", n)
    source.paths = _free_paths(fn)

"""Frontend: a Python function to its `gast` tree, with every node located in the user's file.

Guarantees: `Source.node` is the function's `gast.FunctionDef` whose `lineno`s are file lines and
whose `col_offset`s are columns in the file; `Source.loc(node)` gives the `Loc` of any node.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass

import gast

from .errors import AdjointCompilerError
from .ir import Loc

LIBRARIES = {"numpy", "scipy", "math", "builtins", "operator", "functools", "itertools"}


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
                return True, scope[name]
        return False, None


def _unwrap(func):
    while isinstance(func, functools.partial) is False and hasattr(func, "__wrapped__"):
        func = func.__wrapped__
    return func


def read_function(func) -> Source:
    """Parse `func`'s source. Raises SourceError for builtins, C functions, lambdas, exec'd code."""
    func = _unwrap(func)
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
        raise SourceError(f"cannot differentiate the lambda at {func.__code__.co_filename}:"
                          f"{func.__code__.co_firstlineno}; define it with `def` instead")
    try:
        lines, first = inspect.getsourcelines(func)
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
    for sub in gast.walk(node):
        if hasattr(sub, "lineno"):
            sub.lineno += first - 1
            sub.col_offset += indent
            if getattr(sub, "end_lineno", None):
                sub.end_lineno += first - 1
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet, so it is not a constant
                continue
    return Source(func, node, func.__code__.co_filename, lines, func.__globals__, closure, first)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())

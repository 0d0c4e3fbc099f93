"""Fence: reject syntax the compiler does not handle, at the user's line and column.

Guarantee: after `check(source)` the function body uses only the statements and expressions the
later passes lower. Anything else raises `UnsupportedSyntaxError` with file, line, column and text.

    def f(x):
        try: ...        ->  UnsupportedSyntaxError: `try` is not supported ... (file.py, line 2)
"""
from __future__ import annotations

import gast

from .errors import UnsupportedSyntaxError
from .frontend import Source

_REJECTED = {
    gast.Try: "`try` statements are not supported in a differentiated function",
    gast.With: "`with` statements are not supported in a differentiated function",
    gast.AsyncWith: "`async with` is not supported in a differentiated function",
    gast.AsyncFor: "`async for` is not supported in a differentiated function",
    gast.AsyncFunctionDef: "async functions cannot be differentiated",
    gast.Await: "`await` is not supported in a differentiated function",
    gast.Yield: "generators (`yield`) cannot be differentiated; return a value instead",
    gast.YieldFrom: "generators (`yield from`) cannot be differentiated; return a value instead",
    gast.Global: "`global` is not supported: a differentiated function may not rebind module names",
    gast.Nonlocal: "`nonlocal` is not supported: a differentiated function may not rebind closure names",
    gast.ClassDef: "class definitions are not supported inside a differentiated function",
    gast.FunctionDef: "nested function definitions are not supported; define the helper at module level",
    gast.Lambda: "lambdas are not supported inside a differentiated function; use a module-level def",
    gast.Import: "imports are not supported inside a differentiated function; import at module level",
    gast.ImportFrom: "imports are not supported inside a differentiated function; import at module level",
    gast.Raise: "`raise` is not supported in a differentiated function",
    gast.NamedExpr: "assignment expressions (`:=`) are not supported",
    gast.Set: "set displays are not supported",
    gast.SetComp: "set comprehensions are not supported",
    gast.DictComp: "dict comprehensions are not supported",
    gast.Starred: "starred expressions (`*x`) are not supported",
    gast.JoinedStr: "f-strings are not supported in a differentiated function",
}
for _name, _msg in (("Match", "`match` statements are not supported"),
                    ("TryStar", "`try`/`except*` statements are not supported")):
    if hasattr(gast, _name):
        _REJECTED[getattr(gast, _name)] = _msg

# Lowered by a later issue; until then they are rejected here with a clear message.
PENDING: dict = {}


def reject(source: Source, node, message: str):
    raise UnsupportedSyntaxError(message, source.loc(node))


def check(source: Source) -> None:
    fn = source.node
    if isinstance(fn, gast.AsyncFunctionDef):
        reject(source, fn, _REJECTED[gast.AsyncFunctionDef])
    args = fn.args
    if args.vararg or args.kwarg:
        reject(source, fn, "`*args` and `**kwargs` parameters are not supported in a differentiated function")
    for stmt in fn.body:
        for node in gast.walk(stmt):
            kind = type(node)
            if kind in _REJECTED:
                reject(source, node, _REJECTED[kind])
            if kind is gast.Delete and not all(isinstance(t, gast.Name) for t in node.targets):
                reject(source, node, "`del` of an item, slice or attribute is not supported; only `del name`")
            if kind in PENDING:
                reject(source, node, PENDING[kind])

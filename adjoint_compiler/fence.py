"""Fence: reject syntax the compiler does not handle, at the user's line and column.

Guarantee: after `check(source)` the function body uses only the statements and expressions the
later passes lower. Anything else raises `UnsupportedSyntaxError` with file, line, column and text.
Nested `def`s and lambdas are checked with the body that contains them (no decorators, no
`*args`); `with` is left to normalize, which accepts `with np.errstate(...)` only.

    def f(x):
        try: ...        ->  UnsupportedSyntaxError: `try` is not supported ... (file.py, line 2)
"""
from __future__ import annotations

import gast

from . import astwalk
from .errors import UnsupportedSyntaxError
from .frontend import Source

_REJECTED = {
    gast.Try: "`try` statements are not supported in a differentiated function",
    gast.AsyncWith: "`async with` is not supported in a differentiated function",
    gast.AsyncFor: "`async for` is not supported in a differentiated function",
    gast.AsyncFunctionDef: "async functions cannot be differentiated",
    gast.Await: "`await` is not supported in a differentiated function",
    gast.Yield: "generators (`yield`) cannot be differentiated; return a value instead",
    gast.YieldFrom: "generators (`yield from`) cannot be differentiated; return a value instead",
    gast.Global: "`global` is not supported: a differentiated function may not rebind module names",
    gast.Nonlocal: "`nonlocal` is not supported: a differentiated function may not rebind closure names",
    gast.ClassDef: "class definitions are not supported inside a differentiated function",
    gast.Import: "imports are not supported inside a differentiated function; import at module level",
    gast.ImportFrom: "imports are not supported inside a differentiated function; import at module level",
    gast.NamedExpr: "assignment expressions (`:=`) are not supported",
    gast.Set: "set displays are not supported",
    gast.SetComp: "set comprehensions are not supported",
    gast.Starred: "`*x` in a call is not supported; pass the items as arguments of their own",
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
    lowered = _lowered_stars(fn)
    for stmt in fn.body:
        for node in astwalk.walk(stmt):
            kind = type(node)
            if kind in _REJECTED and node not in lowered:
                reject(source, node, _REJECTED[kind])
            if kind is gast.Delete and not all(isinstance(t, gast.Name) for t in node.targets):
                reject(source, node, "`del` of an item, slice or attribute is not supported; only `del name`")
            if kind in PENDING:
                reject(source, node, PENDING[kind])
            if kind is gast.FunctionDef:
                _check_nested(source, node, "nested function")
            elif kind is gast.Lambda:
                _check_nested(source, node, "lambda")
            elif kind is gast.Raise:
                if node.exc is None:
                    reject(source, node, "a bare `raise` re-raises the exception being handled, and `try` is not "
                                         "supported; raise an exception object (`raise ValueError(...)`)")
                if node.cause is not None and not (isinstance(node.cause, gast.Constant) and node.cause.value is None):
                    reject(source, node, "`raise ... from <exception>` is not supported (there is no `try`); "
                                         "`raise ... from None` is")


def _lowered_stars(fn) -> set:
    """The `*x` normalize lowers: an item of a tuple or list display, and the one starred name of
    an unpacking assignment (`first, *rest = xs`)."""
    out = set()
    for node in gast.walk(fn):
        if isinstance(node, (gast.Tuple, gast.List)) and isinstance(node.ctx, gast.Load):
            out.update(x for x in node.elts if isinstance(x, gast.Starred))
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], (gast.Tuple, gast.List)):
            stars = [x for x in node.targets[0].elts if isinstance(x, gast.Starred)]
            if len(stars) == 1 and isinstance(stars[0].value, gast.Name):
                out.add(stars[0])
    return out


def _check_nested(source: Source, node, what: str) -> None:
    """A nested `def` or lambda is inlined where it is called: no decorators, no `*args`/`**kwargs`."""
    if getattr(node, "decorator_list", None):
        reject(source, node.decorator_list[0], f"decorators on a {what} inside a differentiated function are "
                                               "not supported; apply the decorator at module level")
    if node.args.vararg or node.args.kwarg:
        reject(source, node, f"`*args` and `**kwargs` parameters of a {what} are not supported in a "
                             "differentiated function")

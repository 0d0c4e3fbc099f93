"""Calls of runtime helpers in generated code, made and recognised by the helper object.

Generated code reaches the runtime as `rt` (`from adjoint_compiler import runtime as rt`). Passes
build and match those calls through the function objects of `runtime`, never through their names
as strings, and ask a helper's facts (`runtime_facts`) of the object:

    call(runtime.zero_slots, g, idx)     ->  the node of `rt.zero_slots(g, idx)`
    helper(<node of rt.zero_slots(...)>) ->  runtime.zero_slots      (None for any other node)
    facts_of(node).fresh                 ->  whether the call makes a new array

`name(runtime.zero_slots)` is the text `rt.zero_slots`, checked to be what `rt` binds.
"""
from __future__ import annotations

import gast

from . import runtime
from .errors import InternalError
from .runtime_facts import NOTHING, Facts, facts

ALIAS = "rt"  # the name the generated module binds the runtime to


def _attr(function) -> str:
    attr = getattr(function, "__name__", None)
    if attr is None or getattr(runtime, attr, None) is not function:
        raise InternalError(f"{function!r} is not a helper of adjoint_compiler.runtime")
    return attr


def name(function) -> str:
    """`rt.<helper>`: how generated code names a runtime function."""
    return f"{ALIAS}.{_attr(function)}"


def _load(id_: str) -> gast.Name:
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


def call(function, *args, keywords=()) -> gast.Call:
    """The node of `rt.<helper>(*args, **keywords)`."""
    return gast.Call(func=gast.Attribute(value=_load(ALIAS), attr=_attr(function), ctx=gast.Load()),
                     args=list(args), keywords=list(keywords))


def helper(node, tree=gast):
    """The runtime function a call node `rt.<attr>(...)` calls, else None. (`tree`: the module of
    the node classes, `gast`, or `ast` for generated text parsed back.)"""
    if (isinstance(node, tree.Call) and isinstance(node.func, tree.Attribute)
            and isinstance(node.func.value, tree.Name) and node.func.value.id == ALIAS):
        return getattr(runtime, node.func.attr, None)
    return None


def is_call(node, function) -> bool:
    """Whether `node` is a call of the runtime function `function`."""
    return function is not None and helper(node) is function


def facts_of(node, tree=gast) -> Facts:
    """The facts of the helper a call node calls (NOTHING for anything else)."""
    function = helper(node, tree)
    return NOTHING if function is None else facts(function)


def retarget(node: gast.Call, function) -> None:
    """Make the call node `node` call `function` instead (its arguments stay)."""
    node.func = gast.Attribute(value=_load(ALIAS), attr=_attr(function), ctx=gast.Load())

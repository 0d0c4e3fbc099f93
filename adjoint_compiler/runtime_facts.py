"""What a runtime helper promises, recorded on the helper itself.

The backward passes rewrite calls of `rt.<helper>` by what the helper does: a helper that returns
a new array lets the adjoint it makes be updated in place; an argument read only for its shape
need not be computed or kept, only its shape. Those facts are stated where the helper is defined,
as decorators that set one attribute on the function and change nothing else:

    @fresh                       returns a new array that nothing else holds
    @reads_only_shape(1)         reads argument 1 for its shape alone
    @reads_only_shapes           reads every argument for its shape alone
    @reads_only_dtype(2)         reads argument 2 for its dtype alone; when that parameter
                                 defaults to None, the argument may be left out
    @identity_unless(1)          returns its first argument unless argument 1 is given (not
                                 None): `rt.through_dtype(g)` is g
    @numeric                     returns a number or an array, never a list or tuple
    @updates                     writes into its first argument (in place)

A pass resolves the call `rt.<attr>(...)` to the function object and asks `facts(function)`
(see `rtcall.helper`); no pass names a helper in a string, so renaming a helper renames it
everywhere, or fails at import. This module imports nothing of the compiler (the runtime uses it).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Facts:
    """The facts of one helper; the defaults promise nothing."""

    fresh: bool = False  # returns a new array no other name holds
    shape_only: tuple = ()  # positions of the arguments read only for their shapes
    all_shapes: bool = False  # every argument is read only for its shape
    dtype_only: int | None = None  # position of an argument read only for its dtype
    dtype_optional: bool = False  # ... and that argument may be left out (its parameter defaults to None)
    identity_unless: int | None = None  # returns its first argument unless the one at this position is given
    numeric: bool = False  # returns a number or an array (never a list or a tuple)
    updates: bool = False  # writes into its first argument

    def shape_position(self, position: int) -> bool:
        """Whether the argument at `position` is read only for its shape."""
        return self.all_shapes or position in self.shape_only


NOTHING = Facts()
_ATTRIBUTE = "__adjoint_helper_facts__"


def facts(function) -> Facts:
    """The facts recorded on `function` (NOTHING for any other object)."""
    return getattr(function, _ATTRIBUTE, NOTHING) if callable(function) else NOTHING


def _record(function, **changes):
    setattr(function, _ATTRIBUTE, replace(facts(function), **changes))
    return function


def fresh(function):
    """The helper returns a new array that nothing else holds."""
    return _record(function, fresh=True)


def numeric(function):
    """The helper returns a number or an array, never a list or a tuple (so code read back as
    source updates its result in place as an array, not as a list's item)."""
    return _record(function, numeric=True)


def reads_only_shape(*positions: int):
    """The helper reads the arguments at `positions` for their shapes alone."""
    def decorate(function):
        return _record(function, shape_only=tuple(sorted(set(facts(function).shape_only) | set(positions))))
    return decorate


def reads_only_shapes(function):
    """The helper reads every argument for its shape alone."""
    return _record(function, all_shapes=True)


def reads_only_dtype(position: int):
    """The helper reads the argument at `position` for its dtype alone. If that parameter defaults
    to None, a caller that has no dtype to give may leave the argument out."""
    def decorate(function):
        parameter = list(inspect.signature(function).parameters.values())[position]
        optional = parameter.default is None
        return _record(function, dtype_only=position, dtype_optional=optional)
    return decorate


def updates(function):
    """The helper writes into its first argument (the generated code's in-place updates)."""
    return _record(function, updates=True)


def identity_unless(position: int):
    """The helper returns its first argument unchanged unless the argument at `position` is
    given (left out, or None: `rt.through_dtype(g)`, `rt.cast_adjoint(g, None, x)`)."""
    def decorate(function):
        return _record(function, identity_unless=position)
    return decorate

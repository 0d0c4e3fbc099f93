"""Functions as values: the scopes of nested `def`s and lambdas, and the compile-time values that
stand for them until a call inlines them.

A `def` or `lambda` inside a differentiated function never becomes a run-time object. `normalize`
leaves it in the tree as a `FunctionNode` (its body hidden from every walk of the enclosing
function, its default values evaluated where it is defined); `ssa` binds the name to a `Closure`
and inlines the body at each call, reading each free name in the enclosing function's scope *at
the time of the call*, as Python's late binding does. `functools.partial` of such a value (or of
any function) is a `Partial`, peeled off at the call.

    def f(p, x):                       def f(p, x):
        g = lambda t: p * t     ->         t = x            # the call g(x), inlined
        return g(x)                        p_times_t = p * t
                                           return p_times_t

A function value may be called, bound to another name, passed to a function that is inlined, and
returned from one (a closure factory); anything else (put in a tuple, chosen by an `if`, rebound in
a loop and used after it, returned by the differentiated function) is refused with a located error.
"""
from __future__ import annotations

import gast

from . import astwalk

# -- scopes --------------------------------------------------------------------------------------

def _function_kinds():
    return (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)


def scope_walk(fn):
    """Every node of `fn`'s own scope (a FunctionDef or Lambda): its body, but not the bodies of
    the functions defined in it. Their decorators and default values are evaluated in this scope
    and are included; so is each nested definition node itself."""
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    kinds = _function_kinds()
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, kinds):
            todo.extend(getattr(node, "decorator_list", []))
            todo.extend(node.args.defaults)
            todo.extend(d for d in node.args.kw_defaults if d is not None)
        elif isinstance(node, FunctionNode):
            continue  # (already normalized: its fields are this scope's reads)
        else:
            todo.extend(astwalk.children(node))


def parameters(fn) -> list:
    """The parameter names of a FunctionDef or Lambda, in order."""
    a = fn.args
    names = [p.id for p in a.posonlyargs + a.args]
    if a.vararg is not None:
        names.append(a.vararg.id)
    names += [p.id for p in a.kwonlyargs]
    if a.kwarg is not None:
        names.append(a.kwarg.id)
    return names


def local_names(fn, scoped=None) -> set:
    """The names local to `fn` in Python's sense: its parameters, every name it assigns or deletes,
    and the names of the functions it defines. `scoped`: `list(scope_walk(fn))`, if already made."""
    names = set(parameters(fn))
    for node in scope_walk(fn) if scoped is None else scoped:
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            names.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            names.add(node.name)
    return names


def free_names(fn) -> set:
    """The names `fn` reads without binding them (its own and those of the functions it defines)."""
    loads = set()
    for node in scope_walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads.add(node.id)
        elif isinstance(node, _function_kinds()) and node is not fn:
            loads |= free_names(node)
    return loads - local_names(fn)


def as_def(fn) -> gast.FunctionDef:
    """A FunctionDef for a lambda (`def lambda(args): return body`), located at the lambda."""
    if isinstance(fn, gast.FunctionDef):
        return fn
    ret = gast.copy_location(gast.Return(value=fn.body), fn.body)
    node = gast.FunctionDef(name="lambda", args=fn.args, body=[ret], decorator_list=[], returns=None,
                            type_comment=None, type_params=[])
    return gast.copy_location(node, fn)


# -- in the normalized tree ------------------------------------------------------------------------

class FunctionNode(gast.AST):
    """`g = <def or lambda>` in a normalized function: the definition (a FunctionDef, hidden from
    walks), the atoms its default values were evaluated to where it is defined, and a load of
    every free name of its body (so that loop analyses see what a call of it may read)."""

    _fields = ("defaults", "kw_defaults", "reads")

    def __init__(self, node=None, defaults=(), kw_defaults=(), reads=(), display="function"):
        super().__init__()  # (the defaults make it copyable: normalize copies statements it moves)
        self.written = node  # the def or lambda as the user wrote it
        self.node = as_def(node) if node is not None else None  # a gast.FunctionDef
        self.defaults = defaults
        self.kw_defaults = kw_defaults  # one per keyword-only parameter: an atom or None
        self.reads = reads
        self.display = display  # `g`, or `lambda` (for messages)


# -- in the SSA environment -----------------------------------------------------------------------

class FunctionValue:
    """A function known at compile time, inlined where it is called."""

    display = "function"


class Closure(FunctionValue):
    """A nested function or lambda: its definition, the builder of the scope that defined it (free
    names are read there at each call), its defaults (IR operands) and the free names it reads
    from enclosing scopes."""

    def __init__(self, node, source, defining, defaults, kw_defaults, outer, display, loc):
        self.node = node
        self.source = source
        self.defining = defining
        self.defaults = defaults  # list of operands, for the last positional parameters
        self.kw_defaults = kw_defaults  # keyword-only name -> operand
        self.outer = outer  # free names of the body that are local to an enclosing function
        self.display = display
        self.loc = loc
        self.builder, self.nesting = None, 0  # where it was made (a write there is seen by its defaults)

    def held(self) -> list:
        """(how a message names it, operand) for each value the function holds: its defaults,
        which are the objects Python evaluated at the `def` (an array written later is seen)."""
        positional = [p.id for p in self.node.args.posonlyargs + self.node.args.args]
        named = positional[len(positional) - len(self.defaults):]
        return [(f"the default of {p} of {self.display}", d) for p, d in zip(named, self.defaults)] + \
            [(f"the default of {p} of {self.display}", d) for p, d in self.kw_defaults.items()]

    def rebind(self, old, new) -> None:
        """`new` in place of `old` among the values held (a write made them one array)."""
        self.defaults = [new if d is old else d for d in self.defaults]
        self.kw_defaults = {p: new if d is old else d for p, d in self.kw_defaults.items()}

    def __repr__(self) -> str:
        return f"<function {self.display}>"


class Partial(FunctionValue):
    """`functools.partial(func, *args, **kwargs)`: `func` is a FunctionValue or an ir.Global."""

    def __init__(self, func, args, kwargs, display):
        self.func = func
        self.args = list(args)
        self.kwargs = dict(kwargs)
        self.display = display
        self.builder, self.nesting = None, 0  # where it was made (a write there is seen by its arguments)

    def held(self) -> list:
        """(how a message names it, operand) for each value the partial holds: its bound arguments
        (and what the function it wraps holds)."""
        inner = self.func.held() if isinstance(self.func, (Closure, Partial)) else []
        return [(f"the argument {k + 1} bound by {self.display}", a) for k, a in enumerate(self.args)] + \
            [(f"the argument {k} bound by {self.display}", a) for k, a in self.kwargs.items()] + inner

    def rebind(self, old, new) -> None:
        """`new` in place of `old` among the values held (a write made them one array)."""
        self.args = [new if a is old else a for a in self.args]
        self.kwargs = {k: new if a is old else a for k, a in self.kwargs.items()}
        if isinstance(self.func, (Closure, Partial)):
            self.func.rebind(old, new)

    def __repr__(self) -> str:
        return f"<partial {self.display}>"


class Derivative(FunctionValue):
    """`grad(f, wrt)` or `value_and_grad(f, wrt)` made in (or read by) the differentiated code, `f`
    a module-level function: at each call `ssa` compiles `f`'s gradient as differentiable code and
    inlines it (`nesting.inline_derivative`)."""

    def __init__(self, func, wrt: tuple, as_tuple: bool, mode: str, display: str, extra=(), defining=None):
        self.func = func  # the Python function differentiated
        self.wrt = wrt
        self.as_tuple = as_tuple
        self.mode = mode  # 'grad' or 'joint'
        self.display = display
        # a lambda or nested def lifted to a function of its own: the free names it reads from the
        # enclosing function, passed as extra (keyword) arguments, read in `defining`'s scope at the call
        self.extra = tuple(extra)
        self.defining = defining

    def __repr__(self) -> str:
        return f"<derivative {self.display}>"


class StaticSeq(FunctionValue):
    """A tuple or list display holding a function value (`[partial(f, w), np.tanh, lambda z: ...]`):
    kept at compile time, read at constant indices and slices, measured by `len`, and iterated by
    loops that are unrolled (one copy of the body per item)."""

    def __init__(self, items, kind: str):
        self.items = list(items)
        self.kind = kind  # 'tuple' or 'list'
        self.display = f"a {kind} of functions"

    def __repr__(self) -> str:
        return f"<{self.kind} of {len(self.items)} items>"


class Unusable:
    """A name whose function value cannot be followed past this point (different functions chosen
    by an `if`, a function rebound in a loop): reading it raises `reason` at the read."""

    def __init__(self, name: str, reason: str):
        self.name = name
        self.reason = reason


def is_function_value(value) -> bool:
    return isinstance(value, (FunctionValue, Unusable))


def printable(tree):
    """A copy of a normalized tree in which every `g = <FunctionNode>` is the def or lambda as
    written (for `show --stage normalize`)."""

    from .python_lowering import runtime_markers

    markers = runtime_markers()

    class Restore(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in markers:  # a runtime helper, as generated code calls it
                return gast.Attribute(value=gast.Name(id="rt", ctx=gast.Load(), annotation=None, type_comment=None),
                                      attr=markers[node.id].__name__, ctx=gast.Load())
            return node

        def visit_Assign(self, node):
            self.generic_visit(node)
            if isinstance(node.value, FunctionNode):
                written = astwalk.clone(node.value.written)
                if isinstance(written, gast.FunctionDef):
                    return written
                node.value = written
            return node

    return Restore().visit(astwalk.clone(tree))

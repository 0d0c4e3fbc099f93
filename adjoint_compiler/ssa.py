"""SSA: the normalized `gast` function to the typed IR, every name assigned once.

Guarantees: every `Var` has one definition; a name assigned in both branches of an `if` becomes an
`If` output; plain copies (`y = x`) and constant indexing of a tuple display are resolved
statically (no statement); free names become `Global`s with their values; every statement has a Loc.

    x = x * 2          x_2 = x * 2
    if c: y = x        if c: yield y <- x_2
    else: y = 0.0      else: yield y <- 0.0
"""
from __future__ import annotations

import copy
import functools
import inspect
import operator
import types
from dataclasses import dataclass

import gast
import numpy as np

from . import aliasing, astwalk, fence, frontend, ir, mutation, registry, rtcall, runtime_facts, trees
from .errors import AdjointCompilerError, CompileError, MissingRuleError, MutationError, UnsupportedSyntaxError
from .frontend import Source, SourceError, is_library_module
from .functions import (
    Closure,
    Derivative,
    FunctionNode,
    FunctionValue,
    Partial,
    StaticSeq,
    Unusable,
    is_function_value,
)
from .naming import GENERATED_READS, Namer
from .normalize import COPYTO_ITEMS as COPYTO_ITEMS_NAME
from .normalize import OUT_WRITE as OUT_WRITE_NAME
from .normalize import SET_FIELD as SET_FIELD_NAME
from .normalize import normalize
from .python_lowering import UNPACKED, runtime_markers

RETURN = "<return>"
ARGUMENT = "__argument "  # `build(track_arguments=True)`: the name following an argument's array

BINARY = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv,
    gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod, gast.Pow: operator.pow,
    gast.MatMult: operator.matmul, gast.BitAnd: operator.and_, gast.BitOr: operator.or_,
    gast.BitXor: operator.xor, gast.LShift: operator.lshift, gast.RShift: operator.rshift,
}
COMPARE = {
    gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Is: operator.is_, gast.IsNot: operator.is_not,
}
UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
         gast.Invert: operator.invert}
CONTAINS = ir.Prim("in")
NOT_CONTAINS = ir.Prim("not in")


class SSABuilder:
    def __init__(self, source: Source, namer: Namer, normalized, own=None, inlining=frozenset()):
        self.source = source
        self.namer = namer
        fn = source.node
        self.locals = {a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        for node in astwalk.walk(normalized):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.locals.add(node.id)
        self.load_counts = _loads(normalized)
        # the names read only by a loop over them (unrolled if they hold functions or objects made
        # here), at constant indices, by `len` or an unpacking: a display of objects they name stays
        # a compile-time sequence (one that may escape is built at run time)
        self.iterated = _read_statically(normalized)
        self.own = own  # for an inlined function: the names its normalize pass introduced
        self.parent = None  # the builder of the calling function, for an inlined one
        self.changeable_defaults: set = set()  # the parameters whose default is an array, list or dict
        # (the root builder) the parameters known to hold arrays (`build(arrays=...)`): `x += e` of
        # one that a caller sees change is a write (`caller_sees`)
        self.seen_arrays: frozenset = frozenset()
        self.made_arrays: set = set()  # (the root builder) the values array constructors made
        self.inlining = inlining  # functions being inlined around this one (recursion check)
        self.inlined: list = []  # every function inlined (shared with the inlined builders)
        # (value, name, other name, loc, held) of in-place updates to check (`note_in_place`); held
        # "argument": an update that may reach the array an argument passed without being its value
        # (through a loop or a branch: `arguments_after` could not follow it)
        self.shared_updates: list = []
        self.seen: set[str] = set()
        self.env: dict = {}
        self.tuples: dict = {}  # Var -> operands of the tuple display that defined it
        self.lengths: dict = {}  # Var -> the length of the tuple display that defined it (shared)
        self.views: dict = {}  # view Var -> View (shared with inlined builders)
        self.view_uses: list = []  # every View whose steps made a value or a write (shared)
        self.written: set = set()  # versions of arrays written since (and loop values they entered as)
        self.entered: dict = {}  # a loop-carried value -> its value on entry
        self.branches: dict = {}  # an `if` output -> its results (in either branch)
        self.kept: set = set()  # loop-carried values each trip of whose loop keeps the same array
        self.nesting = 0  # how many branches and loops of this function enclose the statement
        self.defining = None  # for an inlined nested function: the builder of the scope that defined it
        self.free_reads: set = set()  # the arrays a nested function read from enclosing scopes
        self.closures: frozenset = frozenset()  # nested functions being inlined around this one
        self.open_loops: list = []  # per loop being built (shared): its arrays' values on entry

    def fresh_var(self, hint: str, kind: str = "num") -> ir.Var:
        """A value the compiler introduces (no user name): a fresh name from `hint`."""
        return ir.Var(self.namer.fresh(hint), kind)

    def version(self, name: str, kind: str = "num") -> ir.Var:
        """The next SSA version of a user (or normalize) name: `x`, then `x_2`, `x_3`, ..."""
        if name not in self.seen and (self.own is None or name in self.own) and name not in GENERATED_READS:
            self.seen.add(name)
            self.namer.reserve(name)
            return ir.Var(name, kind, user=name)
        self.seen.add(name)
        return ir.Var(self.namer.fresh(name), kind, user=name)

    # -- calls to user functions ---------------------------------------------------------------
    def inlinable(self, prim) -> bool:
        if isinstance(prim, FunctionValue):
            return isinstance(prim, (Closure, Derivative))
        if _twinned(prim):  # a library function differentiated as its twin (rules/numpy_twins.py)
            return True
        func = frontend._unwrap(prim) if callable(prim) else prim
        return (isinstance(func, types.FunctionType) and registry.lookup(prim) is None
                and registry.lookup(func) is None
                and not is_library_module(func.__module__))

    def inline(self, prim, args: list, kwargs: dict, callee, at, out: list):
        """Splice the IR of a called user function in place of the call; returns its result."""
        if isinstance(prim, Closure):
            return self.inline_closure(prim, args, kwargs, at, out)
        if isinstance(prim, Derivative):
            return self.inline_derivative(prim, args, kwargs, at, out)
        twinned = _twinned(prim)
        func = prim if twinned else frontend._unwrap(prim)
        name = callee.path if callee else func.__name__
        if func in self.inlining or func is frontend._unwrap(self.source.func):
            raise CompileError(f"the recursive call to `{name}` cannot be differentiated; write the "
                               "recursion as a loop", self.loc(at))
        func = registry.twin_of(func)
        if not twinned and _runtime_helper(func):
            try:  # (a helper of a gradient read back as source, differentiated again: `hvp`)
                return self.inline_source(func, name, args, kwargs, at, out, twinned)
            except AdjointCompilerError as exc:
                first = str(exc).splitlines()[0]
                raise MissingRuleError(f"`{name}`, which the generated gradient calls, has no rule for "
                                       f"differentiating it again, and its code cannot be differentiated "
                                       f"({first}): this derivative of a derivative is not supported",
                                       self.loc(at)) from None
        return self.inline_source(func, name, args, kwargs, at, out, twinned)

    def inline_source(self, func, name: str, args: list, kwargs: dict, at, out: list, twinned: bool):
        """Splice the IR of `func`, compiled from its source, in place of a call; returns its result."""
        try:
            source = frontend.read_function(func)
        except SourceError as exc:
            raise MissingRuleError(f"cannot compile the call to `{name}`: {exc}. Register a rule with "
                                   f"`@adjoint({name})`", self.loc(at)) from None
        fence.check(source)

        sub_namer = Namer(self.namer.used)
        normalized = normalize(source, sub_namer)
        own = sub_namer.used - self.namer.used
        self.namer.used |= sub_namer.used
        sig = inspect.signature(func)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise CompileError(f"in the call to `{name}`: {exc}", self.loc(at)) from None
        sub = SSABuilder(source, self.namer, normalized, own,
                         self.inlining | {frontend._unwrap(self.source.func)})
        sub.parent = self
        # a twin's statements are located at the user's call (its errors name the user's line), a
        # runtime helper's at the generated gradient's line that calls it
        sub.call_loc = self.call_loc or (self.loc(at) if twinned or _runtime_helper(func) else None)
        sub.inlined = self.inlined
        sub.shared_updates = self.shared_updates
        sub.views, sub.view_uses = self.views, self.view_uses
        sub.lengths = self.lengths
        sub.written, sub.entered, sub.kept = self.written, self.entered, self.kept
        sub.branches = self.branches
        sub.open_loops = self.open_loops
        self.inlined.append(func)
        for pname, param in sig.parameters.items():
            if pname in bound.arguments:
                sub.env[pname] = bound.arguments[pname]
            elif isinstance(param.default, (int, float, complex, bool, str, type(None))):
                sub.env[pname] = ir.Const(param.default)
            else:
                label = self.namer.fresh(f"{func.__name__}_{pname}_default")
                sub.env[pname] = ir.Global(label, param.default, param.default, (func, ("default", pname)))
        out.extend(sub.block(normalized.body))
        return sub.env[RETURN]

    call_loc = None  # inside a twin (rules/*_twins, scipy_stats): the user's line that called it

    def loc(self, node):
        return self.call_loc or self.source.loc(node)

    # -- operands ----------------------------------------------------------------------------
    def operand(self, e, allow_dict: bool = False, allow_function: bool = False):
        if isinstance(e, _Operand):
            return e.op
        if isinstance(e, gast.Constant):
            return ir.Const(e.value)
        if isinstance(e, gast.Name):
            free = e.id not in self.env and e.id not in self.locals and self.defining is not None \
                and e.id in self.source.outer
            if e.id in self.env or free:
                value = self.env[e.id] if not free else self.free_value(e.id, e)
                if isinstance(value, _Dict) and not allow_dict:
                    raise UnsupportedSyntaxError(f"the dict `{e.id}` may only be read with constant keys "
                                                 f"(`{e.id}['key']`)", self.loc(e))
                return self.function_operand(value, e, allow_function)
            if e.id in self.locals:
                raise CompileError(f"`{e.id}` may be used before it is assigned (it is not assigned on "
                                   "every path that reaches here)", self.loc(e))
            if e.id in runtime_markers():
                helper = runtime_markers()[e.id]
                from . import runtime
                return ir.Global(f"rt.{helper.__name__}", helper, runtime, ())
            found, value = self.source.lookup(e.id)
            if not found:
                raise CompileError(f"name `{e.id}` is not defined", self.loc(e))
            return ir.Global(e.id, value, value, (self.source.func, e.id))
        if isinstance(e, gast.Attribute):
            base = self.operand(e.value)
            if isinstance(base, ir.Global):
                frontend.note_attr_read(base.value, e.attr)
                try:
                    return ir.Global(f"{base.path}.{e.attr}", getattr(base.value, e.attr), base.root_value,
                                     base.origin)
                except AttributeError:
                    raise CompileError(f"`{base.path}` has no attribute `{e.attr}`", self.loc(e)) from None
        raise AssertionError(f"normalize left a non-atom operand: {gast.dump(e)}")

    def index(self, e):
        if isinstance(e, gast.Slice):
            return ir.Struct("slice", tuple(ir.Const(None) if p is None else self.operand(p)
                                            for p in (e.lower, e.upper, e.step)))
        if isinstance(e, gast.Tuple):
            return ir.Struct("tuple", tuple(self.index(x) for x in e.elts))
        return self.operand(e)

    def is_atom(self, e) -> bool:
        if isinstance(e, (gast.Constant, gast.Name, _Operand)):
            return True
        if not (isinstance(e, gast.Attribute) and self.is_atom(e.value)):
            return False
        base = self.operand(e.value, allow_function=True)
        return isinstance(base, ir.Global) and not (
            _class_of(base) is not None and isinstance(inspect.getattr_static(_class_of(base), e.attr, None), property))

    # -- operations --------------------------------------------------------------------------
    def operation(self, e):
        """(prim, args, kwargs, callee) for a one-operation expression."""
        if isinstance(e, gast.BinOp):
            left, right = self.operand(e.left, allow_function=True), self.operand(e.right, allow_function=True)
            if isinstance(e.op, gast.Add) and _kind(left) == "seq" and _kind(right) == "seq":
                return ir.CONCAT, [left, right], {}, None
            if isinstance(e.op, gast.Mult) and left is right and isinstance(left, ir.Var) and left.kind == "num":
                return ir.SQUARE, [left], {}, None
            if isinstance(e.op, gast.Mult) and "seq" in (_kind(left), _kind(right)):
                seq, count = (left, right) if _kind(left) == "seq" else (right, left)
                return ir.REPEAT, [seq, count], {}, None
            if isinstance(e.op, gast.Add) and _may_be_sequence(left) and _may_be_sequence(right):
                return ir.PLUS, [left, right], {}, None
            if isinstance(e.op, gast.Mult) and (_may_be_sequence(left) and _may_be_count(right)
                                                or _may_be_sequence(right) and _may_be_count(left)):
                return ir.TIMES, [left, right], {}, None
            return BINARY[type(e.op)], [left, right], {}, None
        if isinstance(e, gast.UnaryOp):
            return UNARY[type(e.op)], [self.operand(e.operand)], {}, None
        if isinstance(e, gast.Compare):
            left, right, op = self.operand(e.left), self.operand(e.comparators[0]), type(e.ops[0])
            if op in (gast.In, gast.NotIn):
                return (CONTAINS if op is gast.In else NOT_CONTAINS), [right, left], {}, None
            return COMPARE[op], [left, right], {}, None
        if isinstance(e, gast.Subscript):
            return operator.getitem, [self.operand(e.value, allow_function=True), self.index(e.slice)], {}, None
        if isinstance(e, gast.Tuple):
            return ir.BUILD_TUPLE, [self.operand(x, allow_function=True) for x in e.elts], {}, None
        if isinstance(e, gast.List):
            return ir.BUILD_LIST, [self.operand(x, allow_function=True) for x in e.elts], {}, None
        if isinstance(e, gast.Attribute):
            base = self.operand(e.value)
            return self.attribute(base, e.attr) or (ir.Attr(e.attr), [base], {}, None)
        if isinstance(e, gast.Call):
            # (a dict display may be passed to a function compiled from source, which reads it as
            # the caller does: resolved when compiling)
            args = [self.operand(a, allow_dict=True, allow_function=True) for a in e.args]
            kwargs = {kw.arg: self.operand(kw.value, allow_dict=True, allow_function=True) for kw in e.keywords}
            found = self.call_operation(e, args, kwargs)
            passed = next((v for v in list(args) + list(kwargs.values()) if isinstance(v, _Dict)), None)
            if passed is not None and not self.inlinable(found[0]):
                shown = next((n for n, v in self.env.items() if v is passed and not n.startswith("__")), None)
                raise UnsupportedSyntaxError(f"{f'the dict `{shown}`' if shown else 'a dict display'} is passed "
                                             "to a function that is not compiled from source: a dict the "
                                             "function makes is resolved when compiling, read with constant "
                                             "keys or passed to the user's own functions",
                                             self.loc(e if getattr(e, "lineno", None) else
                                                      getattr(self, "current_stmt", None) or e))
            return found
        raise AssertionError(f"normalize left an unexpected expression: {gast.dump(e)}")

    def call_operation(self, e, args: list, kwargs: dict):
        """(prim, args, kwargs, callee) for the call `e` whose operands are `args` and `kwargs`."""
        func = e.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and isinstance(self.env_value(func.value.id), _Super):
            return self.super_method(self.env_value(func.value.id), func.attr, args, kwargs, e)
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and isinstance(self.env_value(func.value.id), _Object):
            return self.object_method(self.env_value(func.value.id), func.attr, args, kwargs, e)
        if isinstance(func, gast.Name) and isinstance(self.env_value(func.id), _Object):
            return self.object_method(self.env_value(func.id), "__call__", args, kwargs, e)
        if isinstance(func, gast.Attribute) and not isinstance(self.operand_or_none(func), ir.Global):
            receiver = self.operand(func.value)
            method = self.method(receiver, func.attr, args, kwargs, e)
            if method is not None:
                return method
            if func.attr in _DICT_VIEWS and not args and not kwargs and isinstance(receiver, ir.Var) \
                    and receiver.kind == "any" and receiver.tree is None:
                # `d.values()` of a dict made at run time (a comprehension): a list, read by position
                from . import runtime

                helper = _DICT_VIEWS[func.attr](runtime)
                return helper, [receiver], {}, ir.Global(f"rt.{helper.__name__}", helper, runtime, ())
            return ir.Method(func.attr), [receiver] + args, kwargs, None
        callee = self.operand(func, allow_function=True)
        view = getattr(callee, "value", None)
        if isinstance(callee, ir.Global) and isinstance(getattr(view, "__self__", None), dict) \
                and getattr(view, "__name__", None) in _DICT_VIEWS and not args and not kwargs:
            # `d.values()` of a global dict: a list, read by position (as of a dict made at run time)
            from . import runtime

            helper = _DICT_VIEWS[view.__name__](runtime)
            return helper, [self.operand(func.value)], {}, ir.Global(rtcall.name(helper), helper, runtime, ())
        if isinstance(callee, ir.Global) and callee.value is super:
            raise UnsupportedSyntaxError("`super()` is supported only as `super().method(...)` inside a method "
                                         "of the user's class (it reads the frame it is called from); call the "
                                         "base class's method by name (`Base.method(self, ...)`)", self.loc(e))
        if isinstance(callee, ir.Var) and callee.tree is not None and callee.tree[1] == "record" and \
                isinstance(inspect.getattr_static(callee.tree[2], "__call__", None), types.FunctionType):
            frontend.note_class_read(callee.tree[2], "__call__")
            return inspect.getattr_static(callee.tree[2], "__call__"), [callee] + args, kwargs, None
        if isinstance(callee, ir.Global) and not isinstance(callee.value, type) and \
                trees.record_fields(callee.value) is not None and \
                isinstance(inspect.getattr_static(type(callee.value), "__call__", None), types.FunctionType):
            frontend.note_class_read(type(callee.value), "__call__")
            return inspect.getattr_static(type(callee.value), "__call__"), [callee] + args, kwargs, None
        if isinstance(callee, ir.Global) and _user_method(callee.value):
            owner = callee.value.__self__
            frontend.note_class_read(owner if isinstance(owner, type) else type(owner),
                                     callee.path.rpartition(".")[2])
            # `model.loss(w)`, `Model.make(x)` (a classmethod): the function, its object first
            return callee.value.__func__, [self.bound_object(callee)] + args, kwargs, None

        callee, args, kwargs = self.peel_partial(callee, args, kwargs, e)
        faster = registry.faster_form(callee.value) if isinstance(callee, ir.Global) and not kwargs else None
        if faster is not None:  # (`np.einsum`: `rt.einsum`, the same values, faster)
            from . import runtime
            callee = ir.Global(f"rt.{faster.__name__}", faster, runtime, ())
        if isinstance(callee, ir.Global) and getattr(callee.value, "__adjoint_spec__", None) is not None:
            callee = self.derivative_of(callee, e)
        if isinstance(callee, FunctionValue):
            return callee, args, kwargs, None
        if not isinstance(callee, ir.Global):
            raise UnsupportedSyntaxError("calling a value computed inside the differentiated "
                                         "function is not supported (a function must be known when the "
                                         "code is compiled: not taken from a container by a run-time "
                                         "index); call the function by name",
                                         self.loc(e if getattr(e, "lineno", None) else
                                                  getattr(self, "current_stmt", None) or e))
        return callee.value, args, kwargs, callee

    # -- structures (trees.py): fields, properties and methods of the user's objects -------------
    def attribute(self, base, name: str):
        """(prim, args, kwargs, callee) for `base.name` when `base` is a structure or an object of
        the user's: a field is `getattr(base, 'name')` (a dict has no attributes), a property's
        getter is inlined, a class constant is read at run time; None for the ndarray attributes
        (`.T`, `.shape`, ...), whose rules the IR's `Attr` finds."""
        cls = _class_of(base)
        if cls is not None:
            frontend.note_class_read(cls, name)
        if isinstance(base, ir.Global):
            if cls is not None and isinstance(inspect.getattr_static(cls, name, None), property):
                return self.property_call(inspect.getattr_static(cls, name), base)
            return None
        if not isinstance(base, ir.Var):
            return None
        tree = base.tree
        if tree is not None:
            if tree[1] in ("dict", "seq"):  # (Python raises AttributeError, if this line runs)
                return getattr, [base, ir.Const(name)], {}, _getattr_global()
            if trees.child_kind(tree, name) is not None:
                return getattr, [base, ir.Const(name)], {}, _getattr_global()
            found = inspect.getattr_static(tree[2], name, None)
            if isinstance(found, property):
                return self.property_call(found, base)
            if found is None or not hasattr(found, "__get__"):
                # a class constant (no gradient), or no such attribute (AttributeError when it runs)
                return getattr, [base, ir.Const(name)], {}, _getattr_global()
            return None
        if base.kind != "num" and registry.lookup(ir.Attr(name)) is None and not hasattr(np.ndarray, name):
            return getattr, [base, ir.Const(name)], {}, _getattr_global()  # (an item of a list of structures)
        return None

    def materialize(self, name: str, at, out: list) -> ir.Var:
        """A dict display used as a value (returned, or put in a tuple): the dict, built at run time
        from its current items (`rt.build_dict(keys, *values)`), of a structure kind."""
        from . import runtime

        table = self.env_value(name)
        for key, item in table.items.items():
            if not self.current(item):
                raise MutationError(f"`{name}[{key!r}]` holds an array that was written after it was put in the "
                                    "dict: Python would return the written array, the gradient cannot follow it",
                                    self.loc(at))
            if is_function_value(item) or isinstance(item, _Dict):
                raise UnsupportedSyntaxError(f"the dict `{name}` holds a function or a dict display: it cannot be "
                                             "returned or put in a tuple", self.loc(at))
        table.materialized = True  # (a run-time dict now holds its items: `d[k] = v` would miss it)
        keys = tuple(table.items)
        values = list(table.items.values())
        target = self.version(name, "any")
        target.tree = ("tree", "dict", dict, keys, tuple(_operand_kind(v) for v in values))
        callee = ir.Global("rt.build_dict", runtime.build_dict, runtime, ())
        out.append(ir.Assign(target, runtime.build_dict, [ir.Const(keys)] + values, {}, self.loc(at), callee))
        return target

    def make_object(self, cls: type, args: list, kwargs: dict, at, out: list):
        """`Cls(...)` of a user's class with a Python `__init__`: the `__init__` inlined with `self` an
        object known at compile time, whose fields are the values `__init__` assigns (`self.mu = mu`).
        None (the call is then left as it is) when `__init__` cannot be compiled."""
        from .errors import AdjointCompilerError

        obj = _Object(cls)
        obj.builder, obj.nesting = self, self.nesting
        frontend.note_class_read(cls, "__init__")
        made: list = []
        obj.constructing = True
        saved = self.snapshot()
        try:
            self.inline(cls.__init__, [obj] + list(args), kwargs, None, at, made)
        except AdjointCompilerError:
            self.restore(saved)  # (what the failed inlining noted is forgotten: the call stays a call)
            return None
        finally:
            obj.constructing = False
        out.extend(made)
        return obj

    def zero_argument_super(self):
        """`super()` inside a method being compiled: (the class that defines the method, its first
        argument), when that argument's class is known (an argument, a field, an object made here)."""
        func = frontend._unwrap(self.source.func)
        code = getattr(func, "__code__", None)
        if code is None or "__class__" not in code.co_freevars or not code.co_varnames:
            return None
        owner = func.__closure__[code.co_freevars.index("__class__")].cell_contents
        receiver = self.env.get(code.co_varnames[0])
        cls = receiver.cls if isinstance(receiver, _Object) else _class_of(receiver)
        if cls is None or not isinstance(owner, type) or owner not in cls.__mro__:
            return None
        return _Super(owner, receiver, cls)

    def super_method(self, sup, name: str, args: list, kwargs: dict, at):
        """`super().name(...)`: the function the classes after the method's own class in the MRO of
        the object's class resolve `name` to, inlined with the object first."""
        mro = sup.cls.__mro__
        for klass in mro[mro.index(sup.owner) + 1:]:
            found = klass.__dict__.get(name)
            if found is None:
                continue
            frontend.note_class_read(klass, name)
            if isinstance(found, staticmethod):
                return found.__func__, args, kwargs, None
            if isinstance(found, classmethod):
                return found.__func__, [ir.Global(self.namer.fresh(_identifier(sup.cls, "cls")), sup.cls, sup.cls,
                                                  ())] + args, kwargs, None
            if isinstance(found, types.FunctionType):
                return found, [sup.receiver] + args, kwargs, None
            if klass is object and name == "__init__":
                return _OBJECT_INIT, [], {}, None
            break
        if name == "__init__":  # object.__init__: nothing to do
            return _OBJECT_INIT, [], {}, None
        raise UnsupportedSyntaxError(f"`super().{name}(...)`: the base classes of {sup.cls.__name__} have no "
                                     f"Python method `{name}`", self.loc(at))

    def snapshot(self) -> tuple:
        """What inlining a function may change in this builder and the ones around it."""
        builders = []
        b = self
        while b is not None:
            builders.append((b, dict(b.env), dict(b.tuples)))
            b = b.parent
        return (builders, len(self.inlined), len(self.shared_updates), set(self.written), dict(self.entered),
                set(self.kept), dict(self.views))

    def restore(self, saved: tuple) -> None:
        builders, inlined, updates, written, entered, kept, views = saved
        for b, env, tuples in builders:
            b.env.clear()
            b.env.update(env)
            b.tuples.clear()
            b.tuples.update(tuples)
        del self.inlined[inlined:]
        del self.shared_updates[updates:]
        self.written.clear()
        self.written.update(written)
        self.entered.clear()
        self.entered.update(entered)
        self.kept.clear()
        self.kept.update(kept)
        self.views.clear()
        self.views.update(views)

    def set_field(self, call, at) -> None:
        """`obj.name = v`: allowed in the `__init__` of an object the function makes (outside branches
        and loops of that `__init__`); anywhere else a located UnsupportedSyntaxError."""
        target = self.env_value(call.args[0].id)
        allowed = isinstance(target, _Object) and (
            (target.constructing and self.nesting == 0)  # (its own `__init__`, straight-line)
            or self.in_block_of(target))  # (where it was made, same block; in a method called there too)
        if allowed and target.built_at is not None:
            raise UnsupportedSyntaxError(f"`{call.args[0].id}.{call.args[1].value} = ...`: the object was put in a "
                                         f"list, tuple or structure built at run time on line {target.built_at.line}, "
                                         "which would not see the new field; set the field before that, or build a "
                                         "new object", self.loc(at))
        if not allowed:
            what = ("an object made outside the differentiated function" if not isinstance(target, _Object)
                    else "an object made here, but written in a branch or loop (or a function) other than the "
                         "block that made it")
            raise UnsupportedSyntaxError(f"assignment into an attribute is not supported in a differentiated function: "
                                         f"`{call.args[0].id}` is {what}; build a new object instead (dataclasses."
                                         "replace, a NamedTuple's _replace), or return the new value", self.loc(at))
        target.items[call.args[1].value] = self.operand(call.args[2], allow_function=True)

    def object_method(self, obj, name: str, args: list, kwargs: dict, at):
        """`obj.name(...)` of an object made in the function: its class's function, inlined."""
        frontend.note_class_read(obj.cls, name)
        if name in obj.items:
            item = obj.items[name]
            if isinstance(item, (ir.Global, FunctionValue)):
                return (item.value if isinstance(item, ir.Global) else item), args, kwargs, (
                    item if isinstance(item, ir.Global) else None)
            raise UnsupportedSyntaxError(f"calling the field `{name}` of an object made here: a function must be known "
                                         "when the code is compiled", self.loc(at))
        found = inspect.getattr_static(obj.cls, name, None)
        if isinstance(found, staticmethod):
            return found.__func__, args, kwargs, None
        if isinstance(found, classmethod):
            return found.__func__, [ir.Global(self.namer.fresh(_identifier(obj.cls, "cls")), obj.cls, obj.cls, ())] \
                + args, kwargs, None
        if isinstance(found, types.FunctionType):
            return found, [obj] + args, kwargs, None
        raise UnsupportedSyntaxError(f"`.{name}()` of an object of {obj.cls.__name__} made here is not a method "
                                     "written in Python", self.loc(at))

    def materialize_sequence(self, seq, at, out: list) -> ir.Var:
        """A compile-time display holding objects made here (`layers`), returned: built at run time,
        each object from its fields, nested displays alike; a function in it is refused."""
        elts = []
        for k, item in enumerate(seq.items):
            if isinstance(item, _Object):
                self.env[f"__item{k}"] = item
                item = self.materialize_object(f"__item{k}", at, out, label=f"{item.cls.__name__.lower()}_{k}")
            elif isinstance(item, StaticSeq):
                item = self.materialize_sequence(item, at, out)
            elif is_function_value(item) or isinstance(item, ir.Global) and callable(item.value):
                raise UnsupportedSyntaxError("the differentiated function returns a function (in a tuple or list); "
                                             "differentiate the function it returns instead", self.loc(at))
            elts.append(_Operand(item))
        name = self.namer.fresh("returned")
        display = (gast.Tuple if seq.kind == "tuple" else gast.List)(elts=elts, ctx=gast.Load())
        self.assign(name, display, at, out)
        return self.env[name]

    def materialize_object(self, name: str, at, out: list, label: str = "") -> ir.Var:
        """An object made here, returned (or put in a returned tuple): built at run time from its
        fields without calling `__init__` again (`rt.build_object(cls, names, *values)`)."""
        from . import runtime

        obj = self.env_value(name)
        for key, item in obj.items.items():
            if is_function_value(item) or isinstance(item, (_Dict, _Object)):
                raise UnsupportedSyntaxError(f"the object `{label or name}` holds a function, a dict display or an "
                                             "object made here: it cannot be returned", self.loc(at))
            if isinstance(item, ir.Var) and not self.current(item):
                raise MutationError(f"`{name}.{key}` holds an array that was written after it was assigned: the "
                                    "gradient cannot follow it", self.loc(at))
        keys = tuple(obj.items)
        values = list(obj.items.values())
        obj.built_at = obj.built_at or self.loc(at)  # (a field set later would not reach the run-time object)
        target = self.version(label or name, "any")
        target.tree = ("tree", "record", obj.cls, keys, tuple(_operand_kind(v) for v in values))
        cls_global = ir.Global(self.namer.fresh(_identifier(obj.cls, "cls")), obj.cls, obj.cls, ())
        callee = ir.Global("rt.build_object", runtime.build_object, runtime, ())
        out.append(ir.Assign(target, runtime.build_object, [cls_global, ir.Const(keys)] + values, {}, self.loc(at),
                             callee))
        return target

    def replaced(self, prim, args: list, kwargs: dict, at, out: list):
        """`dataclasses.replace(p, **changes)` / `p._replace(**changes)` of a structure of known kind:
        the construction of its class from the changes and the other fields read from `p`."""
        import dataclasses

        if prim is dataclasses.replace or isinstance(prim, ir.Method) and prim.name == "_replace":
            obj = args[0] if args else None
        else:
            return None
        tree = obj.tree if isinstance(obj, ir.Var) else None
        if tree is None or tree[1] not in ("record", "namedtuple") or len(args) != 1 \
                or not trees.constructible(tree[2]) or (prim is not dataclasses.replace) != (tree[1] == "namedtuple"):
            return None
        fields = trees.constructor_fields(tree[2])
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise CompileError(f"`{sorted(unknown)[0]}` is not a field of {tree[2].__name__}", self.loc(at))
        values = {}
        for f in fields:
            if f in kwargs:
                values[f] = kwargs[f]
                continue
            child = trees.child_kind(tree, f)
            item = self.fresh_var(f"{obj.display}_{f}", "seq" if child == "seq" or (
                trees.is_tree_kind(child) and child[1] in ("namedtuple", "seq")) else
                "num" if isinstance(child, str) and child != "any" else "any")
            if trees.is_tree_kind(child):
                item.tree = child
            out.append(ir.Assign(item, getattr, [obj, ir.Const(f)], {}, self.loc(at), _getattr_global()))
            values[f] = item
        cls_global = ir.Global(self.namer.fresh(_identifier(tree[2], "cls")), tree[2], tree[2], ())
        return self.construct(tree[2], [], values, cls_global, at)

    def construct(self, cls: type, args: list, kwargs: dict, callee, at):
        """`P(a, b=...)` of a NamedTuple or a plain dataclass: `rt.build_record(P, fields, *values)`, its
        arguments bound to the fields when compiling (defaults that are literals filled in)."""
        from . import runtime

        fields = trees.constructor_fields(cls)
        try:
            bound = inspect.signature(cls).bind(*args, **kwargs)
        except TypeError as exc:
            raise CompileError(f"`{callee.path}(...)`: {exc}", self.loc(at)) from None
        values = []
        for f in fields:
            if f in bound.arguments:
                values.append(bound.arguments[f])
                continue
            default = inspect.signature(cls).parameters[f].default
            if isinstance(default, (int, float, complex, bool, str, type(None))):
                values.append(ir.Const(default))
            else:
                raise CompileError(f"`{callee.path}(...)`: give the field `{f}` (its default is not a literal)",
                                   self.loc(at))
        self.pending_tree = ("tree", "namedtuple" if issubclass(cls, tuple) else "record", cls, fields,
                             tuple(_operand_kind(v) for v in values))
        helper = ir.Global("rt.build_record", runtime.build_record, runtime, ())
        return runtime.build_record, [callee, ir.Const(fields)] + values, {}, helper

    def dict_view(self, value, name: str, at, out: list):
        """`p.values()` / `p.items()` / `p.keys()` of a dict argument (or item) whose keys the cache key
        holds: a list display of its items read by key (`[p['W'], p['b']]`, `[('W', p['W']), ...]`),
        so loops and comprehensions over it differentiate. None for anything else."""
        if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and not value.args
                and not value.keywords and value.func.attr in ("values", "items", "keys")
                and isinstance(value.func.value, gast.Name) and value.func.value.id in self.env):
            return None
        obj = self.env[value.func.value.id]
        if not (isinstance(obj, ir.Var) and obj.tree is not None and obj.tree[1] == "dict"):
            return None
        loc = self.loc(at)
        items = []
        for key, child in zip(obj.tree[3], obj.tree[4]):
            if value.func.attr == "keys":
                items.append(ir.Const(key))
                continue
            item = self.fresh_var(f"{obj.display}_item", "seq" if child == "seq" or (
                trees.is_tree_kind(child) and child[1] in ("namedtuple", "seq")) else
                "num" if isinstance(child, str) and child != "any" else "any")
            if trees.is_tree_kind(child):
                item.tree = child
            out.append(ir.Assign(item, operator.getitem, [obj, ir.Const(key)], {}, loc, None))
            if value.func.attr == "items":
                pair = self.fresh_var(f"{obj.display}_pair", "seq")
                out.append(ir.Assign(pair, ir.BUILD_TUPLE, [ir.Const(key), item], {}, loc, None))
                self.tuples[pair] = [ir.Const(key), item]
                item = pair
            items.append(item)
        target = self.version(name, "seq")
        out.append(ir.Assign(target, ir.BUILD_LIST, items, {}, loc, None))
        return target

    def dict_get(self, value):
        """`p.get('k')` / `p.get('k', default)` of a dict argument (or item) whose keys the cache key
        holds, with a literal key: `p['k']` when the dict has it, else the default (None without
        one). None for anything else."""
        if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "get"
                and 1 <= len(value.args) <= 2 and not value.keywords and isinstance(value.args[0], gast.Constant)
                and isinstance(value.func.value, gast.Name) and value.func.value.id in self.env):
            return None
        obj = self.env[value.func.value.id]
        if not (isinstance(obj, ir.Var) and obj.tree is not None and obj.tree[1] == "dict"):
            return None
        if value.args[0].value in obj.tree[3]:
            return gast.Subscript(value=value.func.value, slice=value.args[0], ctx=gast.Load())
        return value.args[1] if len(value.args) == 2 else gast.Constant(value=None, kind=None)

    def mixed_items(self, seq: ir.Var, loc, out: list) -> StaticSeq:
        """A list or tuple of structures of several kinds (`[Dense(...), Relu(), Dense(...)]`): its
        items read now, each of its own kind, held in a StaticSeq (constant indices, `len`, loops
        unrolled), so each item's methods are known."""
        items = []
        for k, child in enumerate(seq.tree[4]):
            item = self.fresh_var(f"{seq.display}_{k}", "seq" if trees.is_tree_kind(child) and child[1] in (
                "namedtuple", "seq") else "any")
            item.tree = child
            out.append(ir.Assign(item, operator.getitem, [seq, ir.Const(k)], {}, loc, None))
            items.append(self.mixed_items(item, loc, out) if child[1] == "mixed" else item)
        made = StaticSeq(items, "tuple" if issubclass(seq.tree[2], tuple) else "list")
        made.display = f"`{seq.display}` (a {made.kind} of structures of several kinds)"
        return made

    def static_field(self, value):
        """The Global for `obj.name` when structure `obj` holds at `name` a function, class or module
        (baked in, its kind part of the cache key), else None."""
        if not (isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name)
                and value.value.id in self.env and isinstance(self.env[value.value.id], ir.Var)):
            return None
        child = trees.child_kind(self.env[value.value.id].tree, value.attr)
        if isinstance(child, tuple) and child[0] == "static":
            return ir.Global(self.namer.fresh(_identifier(child[1], value.attr)), child[1], child[1], ())
        return None

    def property_call(self, prop: property, base):
        if prop.fget is None or not isinstance(frontend._unwrap(prop.fget), types.FunctionType):
            raise CompileError("a property without a Python getter cannot be differentiated", self.loc(self.current_stmt))
        return prop.fget, [base], {}, None

    def method(self, receiver, name: str, args: list, kwargs: dict, at):
        """`obj.name(...)` on a structure of a user's class: its function (a method, a staticmethod,
        a classmethod), inlined; a field holding a function known at compile time is called. None
        for anything else (an ndarray method)."""
        tree = receiver.tree if isinstance(receiver, ir.Var) else None
        if tree is None or tree[1] == "dict":
            return None
        child = trees.child_kind(tree, name)
        if child is not None:
            if isinstance(child, tuple) and child[0] == "static":
                return child[1], args, kwargs, ir.Global(_identifier(child[1], name), child[1], child[1], ())
            return None
        if tree[1] == "namedtuple" and name == "_replace":
            return None  # (a new named tuple: see `replaced`)
        cls = tree[2]
        frontend.note_class_read(cls, name)
        found = inspect.getattr_static(cls, name, None)
        if isinstance(found, staticmethod):
            return found.__func__, args, kwargs, None
        if isinstance(found, classmethod):
            return found.__func__, [ir.Global(self.namer.fresh(_identifier(cls, "cls")), cls, cls, ())] + args, kwargs, None
        if isinstance(found, types.FunctionType):
            return found, [receiver] + args, kwargs, None
        return None

    def bound_object(self, callee: ir.Global) -> ir.Global:
        """The object a bound method read as a global path (`model.loss`) is bound to, as a global."""
        obj = callee.value.__self__
        path, _, _ = callee.path.rpartition(".")
        if path:
            return ir.Global(path, obj, callee.root_value, callee.origin)
        return ir.Global(self.namer.fresh(_identifier(obj, "obj")), obj, obj, ())

    def operand_or_none(self, e):
        try:
            return self.operand(e, allow_function=True) if self.is_atom(e) else None
        except CompileError:
            return None

    # -- statements --------------------------------------------------------------------------
    def block(self, stmts) -> list:
        out: list = []
        for s in stmts:
            self.stmt(s, out)
        return out

    def stmt(self, s, out: list) -> None:
        self.current_stmt = s  # (where an error about a temporary of normalize's is reported)
        if getattr(s, "list_method", None):
            self.check_list(s.targets[0].id, s.list_method, s, out)
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript) \
                and isinstance(s.targets[0].value, gast.Name) and isinstance(self.env.get(s.targets[0].value.id), _Dict):
            self.set_dict_item(s.targets[0].value.id, s.targets[0].slice, s)
        elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            target = s.targets[0]
            if getattr(s, "inplace_call", None) and _kind(self.operand(target.value)) == "seq":
                raise UnsupportedSyntaxError(f"`{target.value.id}.{s.inplace_call}(...)` changes a list in place, "
                                             "which is not supported; build a new list (`xs = sorted(xs)`)", self.loc(s))
            if getattr(s, "out_slots", False) and getattr(self.env.get(target.value.id), "is_buffer", False):
                raise MutationError(f"`out={target.value.id}[...]` writes into a copy: a Buffer's reads are copies; "
                                    f"write `{target.value.id}[...] = ...` instead", self.loc(s))
            self.write(ir.SETITEM, target.value, [self.index(target.slice), self.operand(s.value)], s, out,
                       getattr(s, "through", None))
        elif isinstance(s, gast.Assign) and getattr(s, "in_place", False) \
                and self.env.get(s.targets[0].id) in self.views:
            self.update_view(s.targets[0].id, s, out)
        elif isinstance(s, gast.Assign) and getattr(s, "in_place", False) and self.has_views(s.targets[0].id):
            self.update_base(s.targets[0].id, s, out)
        elif isinstance(s, gast.Assign) and getattr(s, "in_place", False) and self.caller_sees(s.targets[0].id):
            self.update_argument(s.targets[0].id, s, out)
        elif isinstance(s, gast.Assign):
            before = self.env.get(s.targets[0].id)
            followers = self.note_in_place(s.targets[0].id, s) if getattr(s, "in_place", False) else []
            dict_item = isinstance(self.env.get(getattr(s, "item_update_of", None) or ""), _Dict) \
                and isinstance(s.value, gast.BinOp) and isinstance(s.value.left, gast.Name)
            if dict_item:  # `d[k] op= v`: Python runs `item op= v` on the item itself, then stores it
                followers += self.note_in_place(s.value.left.id, s, shown=f"{s.item_update_of}[...]")
            self.assign(s.targets[0].id, s.value, s, out)
            for builder, name in followers:  # the argument's array, updated in place: its new value
                builder.env[name] = self.env[s.targets[0].id]
            if (getattr(s, "in_place", False) or dict_item) and isinstance(self.env.get(s.targets[0].id), ir.Var) \
                    and out and isinstance(out[-1], ir.Assign) and out[-1].target is self.env[s.targets[0].id]:
                out[-1].in_place = True
                out[-1].extends = out[-1].prim is ir.CONCAT and getattr(s, "extends", False)
            holder = self.env.get(getattr(s, "item_update_of", None) or "")
            if isinstance(holder, ir.Var) and holder.kind != "num" and not holder.is_buffer and out \
                    and isinstance(out[-1], ir.Assign) and out[-1].target is self.env[s.targets[0].id]:
                out[-1].item_of = holder  # `xs[i] op= v` on a list updates the item in place (mutation)
            if getattr(s, "in_place", False):
                self.check_update(before, self.env.get(s.targets[0].id), s, out)
            elif getattr(s, "item_update_of", None) and isinstance(s.value, gast.BinOp) \
                    and isinstance(s.value.left, gast.Name):  # (`b[i] op= v`: `t = b[i]; t op v`)
                self.check_update(self.env.get(s.value.left.id), self.env.get(s.targets[0].id), s, out)
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name) \
                and s.value.func.id == SET_FIELD_NAME:
            self.set_field(s.value, s)
        elif isinstance(s, gast.Expr) and self.is_write_call(s.value):
            self.write_call(s.value, s, out)
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name) \
                and s.value.func.id == UNPACKED:
            self.check_unpack(s.value, s, out)
        elif isinstance(s, gast.Expr):
            prim, args, kwargs, callee = self.operation(s.value)
            if self.inlinable(prim):
                self.inline(prim, args, kwargs, callee, s, out)
            else:
                self.refuse_function_arguments(args, kwargs, callee, s)
                self.check_receiver(prim, args, s, out)
                out.append(ir.Assign(None, prim, args, kwargs, self.loc(s), callee))
        elif isinstance(s, gast.Return):
            if isinstance(s.value, gast.Name) and isinstance(self.env_value(s.value.id), _Dict):
                s = gast.Return(value=_Operand(self.materialize(s.value.id, s, out)))
            elif self.parent is None and isinstance(s.value, gast.Name) \
                    and isinstance(self.env_value(s.value.id), _Object):
                s = gast.Return(value=_Operand(self.materialize_object(s.value.id, s, out)))
            elif self.parent is None and isinstance(s.value, gast.Name) \
                    and isinstance(self.env_value(s.value.id), StaticSeq):  # (a display of objects made here)
                s = gast.Return(value=_Operand(self.materialize_sequence(self.env_value(s.value.id), s, out)))
            self.env[RETURN] = self.returned_value(s)
        elif isinstance(s, gast.Delete):
            self.unbind([t.id for t in s.targets], s)
        elif isinstance(s, gast.If):
            self.branch(s, out)
        elif isinstance(s, (gast.For, gast.While)):
            self.loop(s, out)
        else:
            raise AssertionError(f"normalize left an unexpected statement: {type(s).__name__}")

    def set_dict_item(self, name: str, key, s) -> None:
        """`d[k] = v` for a dict of known keys and a constant `k`: `d` is bound to the dict with that
        item (the dict is resolved at compile time). Refused where another name, dict or tuple holds
        the same dict (Python would change it too)."""
        table = self.env[name]
        if not isinstance(key, gast.Constant) or getattr(s, "in_place", False) or getattr(s, "through", None):
            raise UnsupportedSyntaxError(f"`{name}[...] = ...`: a dict is resolved at compile time and takes "
                                         "only a constant key here, assigned a new value (`d['key'] = value`)",
                                         self.loc(s))
        if table.materialized:
            raise MutationError(f"`{name}[{key.value!r}] = ...` changes the dict `{name}` after it was put in a "
                                "tuple or list (or returned), which holds it too; make a new dict (`dict(...)`)",
                                self.loc(s))
        builder = self
        while builder is not None:
            held = [k for k, v in builder.env.items() if v is table and not (builder is self and k == name)]
            held += [f"{k}[{j!r}]" for k, v in builder.env.items() if isinstance(v, _Dict)
                     for j, item in v.items.items() if item is table]
            held += [t.display for t, items in builder.tuples.items() if any(item is table for item in items)]
            if held:
                raise MutationError(f"`{name}[{key.value!r}] = ...` changes the dict `{name}`, which `{held[0]}` "
                                    "holds too; make a new dict for one of them (`dict(...)`)", self.loc(s))
            builder = builder.parent
        self.env[name] = _Dict({**table.items, key.value: self.operand(s.value, allow_function=True)})

    def unbind(self, names: list, at) -> None:
        """`del x`: later reads of `x` are errors, as in Python. Only a local bound in this block or
        before it can be deleted (a loop body that deletes a name its next trip reads is refused where
        the loop's carried values are collected)."""
        for n in names:
            if n not in self.env:
                raise CompileError(f"`del {n}`: name `{n}` is not defined here", self.loc(at))
            del self.env[n]

    def entry_object(self, v):
        """In a loop, a carried value is the object it entered the loop with (first trip at least)."""
        seen = []
        while self.entered.get(v) is not None and all(v is not u for u in seen):
            seen.append(v)
            v = self.entered[v]
        return v

    def possible_objects(self, v) -> set:
        """The ids of the values whose object `v` may hold: itself, what a loop param entered with,
        both results of an `if` output (`branches`), the array a written version is (`storage`)."""
        out, todo = set(), [v]
        while todo:
            u = todo.pop()
            if not isinstance(u, ir.Var) or id(u) in out:
                continue
            out.add(id(u))
            todo += [self.entered.get(u), u.storage, *self.branches.get(u, ())]
        return out

    def caller_sees(self, name: str) -> bool:
        """Whether `name` holds an array a caller sees change: a parameter's (`seen_arrays`: known
        to be an array) when the caller sees the arguments after the call
        (`build(track_arguments=True)`) or this function is inlined into another, or one an array
        constructor made (`made_arrays`) in a function this one is inlined into, which holds it.
        Then `x += e` updates that array, as NumPy does, instead of rebinding `x`."""
        old = self.env.get(name)
        root = self.root()
        seen = []  # (a version written since is its array's: `storage`)
        while isinstance(old, ir.Var) and all(old is not v for v in seen):
            seen.append(old)
            old = self.entry_object(old)
            old = old.storage or old
        if not isinstance(old, ir.Var):
            return False
        if old in root.seen_arrays:
            return self.parent is not None or any(k.startswith(ARGUMENT) for k in root.env)
        # an array a caller made (`du = np.zeros_like(u); rhs(du, u)`) and holds
        return old in root.made_arrays and self.parent is not None and any(
            id(old) in self.possible_objects(v) for b in self.callers() for v in b.env.values())

    def callers(self):
        """The builders of the functions this one is inlined into, innermost first."""
        b = self.parent
        while b is not None:
            yield b
            b = b.parent

    def update_argument(self, name: str, at, out: list) -> None:
        """`x += e` of an argument's array: `x op e` computed, then written into the array
        (`np.copyto(x, x op e)`: NumPy's casting and broadcasting checks), so that every name bound
        to it, the caller's and a loop's included, sees the new version (`write`)."""
        value = self.namer.fresh(f"{name}_updated")
        self.assign(value, at.value, at, out)
        self.write(ir.COPYTO, gast_name(name), [self.env.pop(value), ir.Const(True)], at, out)

    def note_in_place(self, name: str, at, shown: str | None = None) -> list:
        """`x += e` / `xs.append(v)` rebind `x` here, but Python updates an array or list in place:
        equal only if no other name holds the same value. In a loop a carried value is also the
        object it entered the loop with, so a name, dict item or tuple item that held that object
        before the loop is another holder (recorded `held`: judged by its reads after the update).
        Shared values are checked once ranks are known (a scalar may be shared freely). Returns the
        (builder, name) of the arguments tracked for `build(track_arguments=True)` that hold the
        value: they follow the update. `shown`: how a message names the updated value."""
        old = self.env.get(name)
        b = self
        while b is not None:
            if old in b.tuples:  # a tuple display: `t += (v,)` makes a new tuple, whoever holds `t`
                return []
            b = b.parent
        base = self.possible_objects(old)
        holders: list = []  # values other than `old` that may be its object

        def same(v) -> bool:
            if v is old or (isinstance(v, ir.Var) and self.possible_objects(v) & base):
                holders.extend([] if v is old else [v])
                return True
            return False

        builder, others, followers = self, [], []
        for k, v in self.env.items():
            if k.startswith(ARGUMENT) and v is not old and isinstance(v, ir.Var) and self.possible_objects(v) & base:
                # (the argument's array, which `old` may be without being its value: a loop's, a branch's)
                self.shared_updates.append((self.entry_object(v), shown or name, k[len(ARGUMENT):], self.loc(at),
                                            "argument"))  # (the array on entry: a loop's param may be dropped)
        # a list's `append`/`extend`/`pop` run once per run of a calling block (no branch or loop
        # of the functions between encloses it) is seen by that block's names for the list
        straight = bool(getattr(at, "list_method", None))
        while builder is not None:
            follows = builder is not self and straight
            followers += [(builder, k) for k, v in builder.env.items()
                          if v is old and (k.startswith(ARGUMENT) or follows)]
            theirs = set() if builder is self else {n.id for n in astwalk.walk(builder.source.node)
                                                     if isinstance(n, gast.Name)}
            others += [f"the calling function's `{k}`" if k in theirs else k for k, v in builder.env.items()
                       if not (builder is self and k == name) and not k.startswith(ARGUMENT)
                       and not (follows and v is old) and same(v)]
            others += [f"{k}[{key!r}]" for k, v in builder.env.items() if isinstance(v, _Dict)
                       for key, item in v.items.items() if same(item)]  # a dict holds the same array
            others += [f"{t.display}[{k}]" for t, items in builder.tuples.items()
                       for k, item in enumerate(items) if same(item)]  # so does a tuple display
            others += [path for k, v in builder.env.items() if isinstance(v, _Object)
                       for path in _paths_to(v, old, k)]  # and an object made here (its fields, nested)
            others += [label for k, v in builder.env.items() if isinstance(v, (Closure, Partial))
                       for label, item in v.held() if same(item)]  # and a function's default, a partial's argument
            straight = straight and not builder.nesting
            builder = builder.parent
        if isinstance(old, ir.Var) and others:
            written = {n.id for n in astwalk.walk(self.source.node) if isinstance(n, gast.Name)}
            users = [k for k in others if k.split("[")[0].split(".")[0] in written or k.startswith("the ")]  # the user's names
            if len(holders) < len(others):  # (some other holds `old` itself, not only its object on entry)
                self.shared_updates.append((old, shown or name, users[0] if users else None, self.loc(at), False))
            for v in [h for k, h in enumerate(holders) if all(h is not g for g in holders[:k])]:
                # (a value that entered a loop with the object: its reads after the update see it)
                self.shared_updates.append((v, shown or name, users[0] if users else None, self.loc(at), True))
        return followers

    # -- writes into arrays --------------------------------------------------------------------
    def is_write_call(self, call) -> bool:
        if not isinstance(call, gast.Call):
            return False
        if isinstance(call.func, gast.Name) and call.func.id in (COPYTO_ITEMS_NAME, OUT_WRITE_NAME):
            return True  # (the write of an `out=` argument is a copyto)
        callee = self.operand_or_none(call.func)
        return isinstance(callee, ir.Global) and (callee.value in _copyto_functions() or self.is_items_write(call))

    def is_items_write(self, call) -> bool:
        """`copyto(b, <iterator>)`, as normalize spells it or as generated code prints it
        (`rt.copyto_items(b, items)`, read back when a gradient is differentiated again)."""
        if isinstance(call.func, gast.Name) and call.func.id == COPYTO_ITEMS_NAME:
            return True
        from . import runtime
        callee = self.operand_or_none(call.func)
        return isinstance(callee, ir.Global) and callee.value is runtime.copyto_items and len(call.args) == 2

    def write_call(self, call, at, out: list) -> None:
        if self.is_items_write(call):
            self.write(ir.COPYTO_ITEMS, call.args[0], [self.operand(call.args[1])], at, out)
            return
        args = [self.operand(a) for a in call.args[1:]]
        kwargs = {kw.arg: self.operand(kw.value) for kw in call.keywords}
        if isinstance(call.func, gast.Name) and call.func.id == OUT_WRITE_NAME and _kind(self.operand(call.args[0])) == "seq":
            raise MutationError("`out=` must be an array or a tuple display of arrays (`out=(y,)`)", self.loc(at))
        if self.operand_or_none(call.func) is not None and self.operand_or_none(call.func).value is np.copyto:
            # np.copyto(dst, src, casting='same_kind', where=True): `casting='unsafe'` is `dst[...] = src`
            if len(args) > 1:
                kwargs.setdefault("casting", args[1])
                if len(args) > 2:
                    kwargs.setdefault("where", args[2])
                args = args[:1]
            casting = kwargs.pop("casting", ir.Const("same_kind"))
            unsafe = isinstance(casting, ir.Const) and casting.value == "unsafe"
            if not (isinstance(casting, ir.Const) and casting.value in ("same_kind", "unsafe")) or (
                    unsafe and not (isinstance(kwargs.get("where", ir.Const(True)), ir.Const)
                                    and kwargs.get("where", ir.Const(True)).value is True)):
                raise CompileError("np.copyto takes casting='same_kind' or (without `where`) 'unsafe' here",
                                   self.loc(at))
            if unsafe and (args or "src" in kwargs):
                self.write(ir.SETITEM, call.args[0], [ir.Const(Ellipsis), args[0] if args else kwargs["src"]],
                           at, out)
                return
        if len(args) + len(kwargs) > 2 or set(kwargs) - {"src", "where"} or not (args or "src" in kwargs):
            raise CompileError("copyto takes (dst, src, where=True); `casting` is not supported", self.loc(at))
        src = args[0] if args else kwargs["src"]
        where = args[1] if len(args) > 1 else kwargs.get("where", ir.Const(True))
        self.write(ir.COPYTO, call.args[0], [src, where], at, out)

    def write(self, prim, base_expr, rest: list, at, out: list, through=None) -> None:
        """A write node: save the slots it overwrites, then make a new version of the array. A write
        into a view writes its base (`through`: known at run time to be a view, True, or a copy)."""
        base = self.operand(base_expr)
        loc = self.loc(at)
        if isinstance(base, ir.Var) and base.tree is not None:
            default = base in self.root().changeable_defaults
            raise MutationError(f"cannot write into an item of `{base.display}`, a structure (dict, named tuple, "
                                "dataclass or object): build a new one instead" + (
                                    " (as its default value it would also keep the change between calls, in "
                                    "Python)" if default else ""), loc)
        if isinstance(base, ir.Global) and mutation.default_of(base) is not None:
            raise MutationError(mutation.lasting_change(base), loc)
        if isinstance(base, ir.Global):
            raise MutationError(f"cannot write into `{base.path}`, which is not local to the differentiated "
                                "function; copy it first (`a = np.array(...)` or `Buffer(...)`)", loc)
        if not isinstance(base, ir.Var):
            raise MutationError("can only write into an array or Buffer held in a variable", loc)
        if prim is ir.SETITEM and base.kind != "num" and not base.is_buffer and _is_slice(rest[0]):
            from . import runtime  # (`xs[i:j] = ys` of a list: followed only where it keeps the length)
            self.run_check(runtime.check_slice_assign, [base, rest[0], rest[1]], at, out)
        if base in self.views and through is not False:
            self.write_through(prim, base_expr.id, rest, at, out, sure=bool(through))
            return
        self.write_var(prim, base, rest, at, out, into_copy=through is False)

    def write_var(self, prim, base: ir.Var, rest: list, at, out: list, known=None, into_copy=False) -> ir.Var:
        """The write node into `base` itself; every name bound to it, and every view of it, sees the
        new version."""
        self.check_free_write(base, at)
        loc = self.loc(at)
        saved = ir.Var(self.namer.fresh(f"{base.name}_saved"), "any")
        out.append(ir.Assign(saved, ir.SAVE, [base] + (rest[:1] if prim is ir.SETITEM else []), {}, loc))
        new = ir.Var(base.name, base.kind, base.storage or base, base.is_buffer, base.user)
        out.append(ir.Assign(new, prim, [base] + rest + [saved], {}, loc, into_copy=into_copy))
        self.supersede(base)
        self.rebind_everywhere(base, new)
        self.reread_views(new, at, out, known)
        return new

    # -- views ---------------------------------------------------------------------------------
    # A value made from an array by a view operation (`aliasing.view_kind`) is recorded as a View:
    # its base array and the steps that make it from the base. A write into a view writes the base
    # at the view's slots; after any write into an array, the names bound to its views are bound to
    # the views made again from the new version. Where it is known only at run time whether a value
    # is a view (`A[i]` may be a row or a number, `x.reshape(...)` a view or a copy), an `if` on
    # `rt.shares_memory(value, base)` writes the base in one branch and the value in the other.

    def record_view(self, stmt: ir.Assign) -> None:
        kind = aliasing.view_kind(stmt)
        source = stmt.args[0] if stmt.args else None
        if kind is None or not isinstance(source, ir.Var) or source.is_buffer or source.kind != "num":
            return  # (a value that may be a list has no views: what it holds is aliased, see mutation)
        step = (stmt.prim, tuple(stmt.args[1:]), dict(stmt.kwargs), stmt.callee)
        parent = self.views.get(source)
        if parent is None:
            self.views[stmt.target] = View(source, (step,), kind == "view")
        elif parent.steps is None:
            self.views[stmt.target] = View(parent.base, None, False)
        else:
            self.views[stmt.target] = View(parent.base, parent.steps + (step,), parent.sure and kind == "view")

    def refuse_read_only(self, view: View, name: str, at) -> None:
        """NumPy raises at a write through a read-only view (`np.broadcast_to`, `diagonal`)."""
        if any(aliasing.read_only_view(prim, kwargs) for prim, _, kwargs, _ in view.steps or ()):
            raise MutationError(f"`{name}` is a read-only view of `{view.base.display}` (made by `np.broadcast_to`, "
                                "`diagonal` or `sliding_window_view`): NumPy raises 'assignment destination is "
                                "read-only' here; copy it first (`.copy()`)", self.loc(at))

    def steps_of(self, view: View, at) -> tuple:
        """The view's steps, noted as used (a loop checks that a view it carries keeps its steps);
        refused for a view whose steps a loop changed (`View.steps` None)."""
        if view.steps is None:
            raise MutationError(f"this writes through a view of `{view.base.display}` that a loop rebinds "
                                "to another view or value on some trip: which slots it shows is not known "
                                f"when compiling; write into `{view.base.display}` at those slots instead",
                                self.loc(at))
        self.view_uses.append(view)
        return view.steps

    def remake(self, view: View, base: ir.Var, hint: str, at, out: list) -> ir.Var:
        """The view's steps applied to `base` (a new version of its base, or an array of positions)."""
        value = base
        for prim, rest, kwargs, callee in self.steps_of(view, at):
            value = self.emit(prim, [value, *rest], hint, at, out, dict(kwargs), callee)
        return value

    def emit(self, prim, args: list, hint: str, at, out: list, kwargs=None, callee=None) -> ir.Var:
        target = ir.Var(self.namer.fresh(hint), "num", user=hint)
        out.append(ir.Assign(target, prim, list(args), kwargs or {}, self.loc(at), callee))
        return target

    def reread_views(self, new: ir.Var, at, out: list, known=None) -> None:
        """Bind every name holding a view of `new`'s array to that view made again from `new`: the
        sure views, and `known` (a value just found to be a view at run time); a value that may be a
        copy keeps its value (`mutation` refuses its use after the write unless it is surely a
        number). Names of the calling functions only when this write is not inside a branch or loop
        here (their merges would not see them; `mutation` then refuses a stale use)."""
        root = new.storage or new
        remade: dict = {}
        builder = self
        while builder is not None:
            for name, v in list(builder.env.items()):
                view = self.views.get(v) if isinstance(v, ir.Var) else None
                if view is None or (view.base.storage or view.base) is not root or not (view.sure or v is known):
                    continue
                if v not in remade:
                    remade[v] = self.remake(view, new, v.display, at, out)
                    self.views[remade[v]] = View(new, view.steps, True)
                builder.env[name] = remade[v]
            if self.nesting:
                break
            builder = builder.parent

    def write_through(self, prim, name: str, rest: list, at, out: list, sure: bool) -> None:
        """`name[index] = value` (or `copyto(name, value)`), `name` holding a view, as a write into
        the view's base."""
        view_var = self.env[name]
        view = self.views[view_var]
        self.refuse_read_only(view, name, at)
        if prim is ir.COPYTO and isinstance(rest[1], ir.Const) and rest[1].value is True:
            prim, rest = ir.SETITEM, [ir.Const(Ellipsis), rest[0]]
        if prim is not ir.SETITEM:
            raise MutationError(f"cannot differentiate this write into `{view_var.display}`, which may be a view "
                                f"of `{view.base.display}`; write `{view_var.display}[...] = ...` (or into "
                                f"`{view.base.display}` itself)", self.loc(at))
        index, value = rest
        if view.sure or sure:
            self.write_base(view, index, value, at, out, view_var)
            return
        # a view or a copy: decided at run time
        self.runtime_view_branch(name, at, out, _write_node(name, index, value, at))

    def write_base(self, view: View, index, value, at, out: list, view_var=None) -> None:
        """Write `value` into `view[index]` by writing the view's base at the slots it shows."""
        base = view.base
        whole = isinstance(index, ir.Const) and index.value is Ellipsis
        steps = self.steps_of(view, at)
        if whole and len(steps) == 1 and steps[0][0] is operator.getitem:
            self.write_var(ir.SETITEM, base, [steps[0][1][0], value], at, out, view_var)  # base[i] = value
            return
        flat = self.emit(ir.POSITIONS, [base], f"{base.display}_positions", at, out)
        flat = self.remake(view, flat, f"{base.display}_positions", at, out)
        if not whole:
            flat = self.emit(operator.getitem, [flat, index], f"{base.display}_positions", at, out)
        slots = self.emit(ir.SLOTS_AT, [flat, base], f"{base.display}_slots", at, out)
        self.write_var(ir.SETITEM, base, [slots, value], at, out, view_var)

    def update_view(self, name: str, at, out: list) -> None:
        """`v op= e` where `v` may be a view: the new value is written through it into its base (where
        `v` is a number or a copy at run time, `v` is simply bound to the new value)."""
        view_var = self.env[name]
        self.refuse_read_only(self.views[view_var], name, at)
        new_name = self.namer.fresh(f"{view_var.display}_updated")
        self.assign(new_name, at.value, at, out)
        self.check_update(view_var, self.env[new_name], at, out)
        if self.views[view_var].sure:
            self.write_base(self.views[view_var], ir.Const(Ellipsis), self.operand(gast_name(new_name)), at, out,
                            view_var)
            return

        rebind = gast.copy_location(gast.Assign(targets=[gast_name(name, True)], value=gast_name(new_name),
                                                type_comment=None), at)
        self.runtime_view_branch(name, at, out, _write_node(name, ir.Const(Ellipsis), None, at,
                                                            gast_name(new_name)), rebind)

    def check_list(self, name: str, method: str, at, out: list) -> None:
        """`xs.append(v)`, `xs.extend(ys)`, `xs.pop()` (normalize: `xs = xs + [v]`, `xs[:-1]`) of what
        may not be a list: Python raises AttributeError for an array or a number, which `+` and a
        slice would not; refused here where `xs` surely is one, checked at run time
        (`rt.check_list`) where it may be."""
        value = self.env.get(name)
        kind = value.kind if isinstance(value, ir.Var) else "num" if isinstance(value, ir.Const) else "any"
        if kind == "num" or (isinstance(value, ir.Var) and value.is_buffer):
            raise CompileError(f"`{name}` holds an array or a number, which has no method `.{method}()` "
                               "(Python raises AttributeError here)", self.loc(at))
        if kind != "seq" and isinstance(value, ir.Var):
            from . import runtime
            self.run_check(runtime.check_list, [value, ir.Const(method)], at, out)

    def run_check(self, helper, args: list, at, out: list) -> None:
        """A call of the runtime `helper` that raises where Python would (no result, no gradient)."""
        from . import runtime
        callee = ir.Global(f"rt.{helper.__name__}", helper, runtime, ())
        out.append(ir.Assign(None, helper, args, {}, self.loc(at), callee))

    def check_unpack(self, call: gast.Call, at, out: list) -> None:
        """`a, b = v` (normalize: `rt.check_unpack(v, 2)`, then `a = v[0]; b = v[1]`): where the
        length of `v` is known here (a tuple display, a display of functions, a dict), a wrong one
        is refused now and nothing is checked at run time; else `rt.check_unpack` raises there."""
        value = self.operand(call.args[0], allow_dict=True, allow_function=True)
        want = call.args[1].value
        got = (len(value.items) if isinstance(value, (StaticSeq, _Dict)) else
               self.lengths.get(value) if isinstance(value, ir.Var) else None)
        if got is None:
            prim, args, kwargs, callee = self.operation(call)
            out.append(ir.Assign(None, prim, args, kwargs, self.loc(at), callee))
        elif got != want:
            raise CompileError(f"too many values to unpack (expected {want}, got {got})" if got > want
                               else f"not enough values to unpack (expected {want}, got {got})", self.loc(at))

    def check_update(self, before, value, at, out: list) -> None:
        """After `a op= e` is computed (`value`), where `a` (`before`) may be an array: raise at run
        time where NumPy's update in place would (`rt.check_update`); `mutation.drop_number_checks`
        removes the check where `a` is surely a number."""
        if isinstance(before, ir.Var) and before.kind in ("num", "any") and not before.is_buffer \
                and isinstance(value, ir.Var):
            out.append(ir.Assign(None, ir.CHECK_UPDATE, [before, value], {}, self.loc(at)))

    def has_views(self, name: str) -> bool:
        """Whether a name holds an array with a (surely array) view bound to another name."""
        value = self.env.get(name)
        if not isinstance(value, ir.Var):
            return False
        root = value.storage or value
        return any(v in self.views and self.views[v].sure and (self.views[v].base.storage or self.views[v].base)
                   is root for v in self.env.values() if isinstance(v, ir.Var))

    def update_base(self, name: str, at, out: list) -> None:
        """`b op= e` where views of the array `b` are bound: NumPy updates `b` in place, so the update
        is a write of every slot (`b[...] = b op e`), and the views see it."""
        new_name = self.namer.fresh(f"{self.env[name].display}_updated")
        self.assign(new_name, at.value, at, out)
        self.check_update(self.env[name], self.env[new_name], at, out)
        self.write_var(ir.SETITEM, self.env[name], [ir.Const(Ellipsis), self.operand(gast_name(new_name))], at, out)

    def runtime_view_branch(self, name: str, at, out, write, into_copy=None) -> None:
        """`if rt.shares_memory(v, base): <write through v> else: <write v itself>` (`write`, a gast
        statement writing into `name`; or `into_copy` in the second branch), built as an `if` of the
        user's code, so its branches merge as any other; then `v` is remembered as a view again."""
        view_var = self.env[name]
        view = self.views[view_var]
        test = self.namer.fresh(f"{view_var.display}_is_view")
        self.env[test] = ir.Var(test, "num", user=test)
        out.append(ir.Assign(self.env[test], ir.SHARES, [view_var, view.base], {}, self.loc(at)))
        write.through = True
        if into_copy is None:
            into_copy = copy.copy(write)
            into_copy.through = False
        node = gast.copy_location(gast.If(test=gast_name(test), body=[write], orelse=[into_copy]), at)
        bound = [k for k, v in self.env.items() if v is view_var]
        held = None
        if not any(v is view.base for v in self.env.values()):  # the base is a caller's: name it here,
            held = self.namer.fresh(view.base.display)          # so the `if` yields its new version
            self.env[held] = view.base
        parked = []  # the callers' names for the value: bound to what the `if` yields for it
        builder = self.parent
        while builder is not None:
            parked += [(builder, k) for k, v in builder.env.items() if v is view_var]
            builder = builder.parent
        for builder, k in parked:
            del builder.env[k]
        self.branch(node, out)
        for builder, k in parked:
            builder.env[k] = self.env[name]
        self.env.pop(test, None)
        if held:
            self.env.pop(held, None)
        merged = out[-1]
        base = next((o for o, a in zip(merged.outputs, merged.body_results)
                     if isinstance(a, ir.Var) and (a.storage or a) is (view.base.storage or view.base)), view.base)
        for k in bound:
            v = self.env.get(k)
            if isinstance(v, ir.Var) and v in merged.outputs:
                self.views[v] = View(base, view.steps, False)

    def supersede(self, old) -> None:
        """`old` (and the values a loop took it from) is an array written since."""
        while isinstance(old, ir.Var) and old not in self.written:
            self.written.add(old)
            old = self.entered.get(old)

    def same_array(self, value, array) -> bool:
        """Whether `value` surely is the array `array` (a version written in place, the array
        after a loop that wrote it in place)."""
        seen = set()
        while isinstance(value, ir.Var) and id(value) not in seen:
            seen.add(id(value))
            if value is array or value.storage is array:
                return True
            value = value.storage or value
            value = self.entered.get(value) if value in self.kept else None
        return False

    def current(self, op) -> bool:
        """Whether `op` is not an array written since (a tuple or dict display holding it would
        hold the written array, not this older version)."""
        return op not in self.written

    def rebind_everywhere(self, old, new) -> None:
        """Every name bound to `old` (here and in the functions this one is inlined into) now sees
        `new`: after a write they are the same array, written. So does every field of an object
        made here that holds it, when the write is in the block that made the object (straight-line
        code there, or in the methods it calls; elsewhere a later read of the field is refused)."""
        builder, seen = self, set()
        while builder is not None:
            for k, v in builder.env.items():
                if v is old:
                    builder.env[k] = new
                elif isinstance(v, _Object) and self.in_block_of(v):
                    _rebind_held(v, old, new, seen)
                elif isinstance(v, (Closure, Partial)) and self.in_block_of(v):
                    v.rebind(old, new)  # (its defaults, its bound arguments: the objects themselves)
            builder = builder.parent

    def in_block_of(self, obj) -> bool:
        """Whether this statement runs, once, in the block that made `obj`: the functions inlined
        between are straight-line there."""
        builder = self
        while builder is not None and builder is not obj.builder:
            if builder.nesting:
                return False
            builder = builder.parent
        return builder is obj.builder and builder.nesting == obj.nesting

    def named_field(self, e):
        """For `getattr(obj, "name"[, default])` or `hasattr(obj, "name")` of an object made here
        or a structure of known kind, with a constant name: the expression it stands for, `obj.name`,
        the default, or the answer (`True`/`False`), decided here as Python decides it at run time
        (the fields an object made here has, a structure's fields, its class's attributes); else None."""
        if not (isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and not e.keywords
                and e.func.id not in self.env and e.func.id not in self.locals and len(e.args) in (2, 3)
                and isinstance(e.args[0], gast.Name) and isinstance(e.args[1], gast.Constant)
                and isinstance(e.args[1].value, str)):
            return None
        builtin = self.source.lookup(e.func.id)[1]
        if not (builtin is getattr or (builtin is hasattr and len(e.args) == 2)):
            return None
        obj, field = self.env_value(e.args[0].id), e.args[1].value
        if isinstance(obj, _Object):
            cls, has = obj.cls, field in obj.items
        elif isinstance(obj, ir.Var) and obj.tree is not None and obj.tree[1] not in ("dict", "seq"):
            cls, has = obj.tree[2], trees.child_kind(obj.tree, field) is not None
        else:
            return None
        frontend.note_class_read(cls, field)
        has = has or inspect.getattr_static(cls, field, _MISSING_FIELD) is not _MISSING_FIELD
        if builtin is hasattr:
            return gast.Constant(value=has, kind=None)
        if has or len(e.args) == 2:  # (a missing field without a default: AttributeError, at `obj.name`)
            return gast.copy_location(gast.Attribute(value=e.args[0], attr=field, ctx=gast.Load()), e)
        return e.args[2]

    def assign(self, name: str, value, at, out: list) -> None:
        self.pending_tree = None  # (set by `construct` for this statement's target)
        if isinstance(value, FunctionNode):  # `def g(...)` / `g = lambda ...`: a compile-time value
            self.env[name] = self.make_closure(value, name, at)
            return
        if self.is_atom(value):
            self.env[name] = self.operand(value, allow_function=True)  # a copy: no statement
            return
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name) \
                and isinstance(self.env_value(value.value.id), _Object):
            obj = self.env_value(value.value.id)
            if value.attr in obj.items:  # a field of an object made here: what was assigned to it
                item = obj.items[value.attr]
                if isinstance(item, ir.Var) and not self.current(item):
                    raise MutationError(f"`{value.value.id}.{value.attr}` holds an array that was written after it was "
                                        "assigned to the field, in a loop or branch (or a function called there) other "
                                        "than the block that made the object: the gradient cannot follow it; make the "
                                        "object in that block, or keep the array in a variable of its own", self.loc(at))
                self.env[name] = item
                return
            found = inspect.getattr_static(obj.cls, value.attr, None)
            frontend.note_class_read(obj.cls, value.attr)
            if isinstance(found, property) and isinstance(frontend._unwrap(found.fget), types.FunctionType):
                self.env[name] = self.inline(found.fget, [obj], {}, None, at, out)
                return
            if found is not None and not hasattr(found, "__get__"):
                self.env[name] = ir.Global(self.namer.fresh(value.attr), found, found, ())
                return
            raise UnsupportedSyntaxError(f"`{value.value.id}.{value.attr}`: the object made here has no field "
                                         f"`{value.attr}` (or it is a method read as a value)", self.loc(at))
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == "super" \
                and not value.args and not value.keywords and "super" not in self.env:
            made = self.zero_argument_super()
            if made is not None:  # `super()` in a method: its class and object known here
                self.env[name] = made
                return
        field = self.named_field(value)
        if field is not None:  # `getattr(obj, "name", default)`, `hasattr(obj, "name")`
            self.assign(name, field, at, out)
            return
        static = self.static_field(value)
        if static is not None:  # a function a structure holds (`f = self.activation`)
            self.env[name] = static
            return
        if isinstance(value, gast.Subscript) and getattr(value, "by_position", False) and isinstance(value.value, gast.Name):
            value = self.item_by_position(value, at)
        view = self.dict_view(value, name, at, out)
        if view is not None:  # `p.values()`, `p.items()`, `p.keys()` of a dict of known keys
            self.env[name] = view
            return
        got = self.dict_get(value)
        if got is not None:  # `p.get('W', default)` of a dict of known keys
            if not isinstance(got, gast.Subscript):  # the default: a name or a literal (normalize's atoms)
                self.env[name] = self.operand(got, allow_function=True)
                return
            value = got
        if isinstance(value, gast.Dict):
            self.env[name] = _Dict({k.value: self.operand(v, allow_function=True) for k, v in zip(value.keys, value.values)})
            return
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                and isinstance(self.env_value(value.value.id), _Dict):
            table = self.env_value(value.value.id)
            if not (isinstance(value.slice, gast.Constant) and value.slice.value in table.items):
                raise UnsupportedSyntaxError(f"the dict `{value.value.id}` may only be read with one of its "
                                             f"constant keys {sorted(map(repr, table.items))}", self.loc(at))
            item = table.items[value.slice.value]
            if not self.current(item):
                raise MutationError(f"`{value.value.id}[{value.slice.value!r}]` holds an array that was written "
                                    "after it was put in the dict: Python would read the written array, the "
                                    "gradient cannot follow it; read it through its own name", self.loc(at))
            self.env[name] = item
            return
        if isinstance(value, (gast.Tuple, gast.List)) and any(
                isinstance(v, gast.Name) and isinstance(self.env_value(v.id), _Dict) for v in value.elts):
            value = type(value)(elts=[_Operand(self.materialize(v.id, at, out)) if isinstance(v, gast.Name)
                                      and isinstance(self.env_value(v.id), _Dict) else v for v in value.elts],
                                ctx=gast.Load())
        if self.parent is None and name not in self.iterated and isinstance(value, (gast.Tuple, gast.List)) and any(
                isinstance(v, gast.Name) and isinstance(self.env_value(v.id), _Object) for v in value.elts):
            value = type(value)(elts=[_Operand(self.materialize_object(v.id, at, out)) if isinstance(v, gast.Name)
                                      and isinstance(self.env_value(v.id), _Object) else v for v in value.elts],
                                ctx=gast.Load())
        prim, args, kwargs, callee = self.operation(value)
        replaced = self.replaced(prim, args, kwargs, at, out)
        if replaced is not None:  # `dataclasses.replace(p, b=...)`, `p._replace(b=...)`: a new structure
            prim, args, kwargs, callee = replaced
        elif isinstance(prim, type) and callee is not None and trees.constructible(prim):
            prim, args, kwargs, callee = self.construct(prim, args, kwargs, callee, at)
        elif isinstance(prim, type) and callee is not None and _made_by_init(prim):
            made = self.make_object(prim, args, kwargs, at, out)
            if made is not None:  # `Gaussian(mu, sigma)`: its `__init__` inlined, its fields known here
                self.env[name] = made
                return
        if prim is functools.partial:
            self.env[name] = self.make_partial(args, kwargs, value, at)
            return
        if _derivative_maker(prim) is not None:
            self.env[name] = self.make_derivative(prim, args, kwargs, callee, at)
            return
        if _is_jvp(prim):
            self.env[name] = self.inline_jvp(prim, args, kwargs, callee, at, out)
            return
        if self.inlinable(prim):
            self.env[name] = self.inline(prim, args, kwargs, callee, at, out)
            return
        folded = self.function_item(prim, args) or self.static_sequence_op(prim, args, callee, at) \
            or _folded_test(prim, args, kwargs)
        if folded is not None:  # `FUNCS[0]` of a module-level list or dict of functions, a display of them
            self.env[name] = folded
            return
        self.refuse_function_arguments(args, kwargs, callee, at)
        self.check_receiver(prim, args, at, out)
        if prim is sum and _kind(args[1] if len(args) > 1 else kwargs.get("start", ir.Const(0))) == "seq":
            raise UnsupportedSyntaxError("`sum(parts, start)` with a list or tuple `start` joins sequences, which "
                                         "is not differentiated; join them with `+` in a loop, or "
                                         "`[v for part in parts for v in part]`", self.loc(at))
        if prim is operator.getitem and args[0] in self.tuples and isinstance(args[1], ir.Const) \
                and isinstance(args[1].value, int):
            items = self.tuples[args[0]]
            if -len(items) <= args[1].value < len(items) and self.current(items[args[1].value]):
                self.env[name] = items[args[1].value]
                return
        kind = "seq" if prim in (ir.BUILD_TUPLE, ir.BUILD_LIST, ir.CONCAT, ir.REPEAT, list, tuple) else (
            "num" if _numeric_result(prim) else "any")
        if prim is operator.getitem and isinstance(args[0], ir.Var) and args[0].kind != "num":
            # (a slice of a list or tuple is one too: `xs[1:] + xs[:1]` joins, `xs[1:] * 2` repeats)
            kind = "seq" if args[0].kind == "seq" and _is_slice(args[1]) else "any"
        if prim is sum and _kind(args[1] if len(args) > 1 else kwargs.get("start", ir.Const(0))) != "num":
            kind = "any"  # (a start that may be a list or tuple joins the items: checked at run time)
        if _copies_container(prim, args, kwargs) or _copies_own(prim, args):
            kind = args[0].kind  # `xs.copy()` of a list is a list (of a dict, a dict), not an array
        if _copies_buffer(prim, args):
            kind = "num"
        if prim is np.average and not (isinstance(kwargs.get("returned", ir.Const(False)), ir.Const)
                                       and not kwargs.get("returned", ir.Const(False)).value):
            kind = "seq"  # (`returned=True`: the pair (average, sum of the weights))
        child = _child_kind(prim, args)
        if getattr(self, "pending_tree", None) is not None:  # a structure built here (construct)
            child, self.pending_tree = self.pending_tree, None
        if child is not None:  # an item of a structure: its kind from the argument's
            kind = "seq" if child == "seq" or (trees.is_tree_kind(child) and child[1] in ("namedtuple", "seq")) else (
                "num" if isinstance(child, str) and child != "any" else "any")
        target = self.version(name, kind)
        if trees.is_tree_kind(child):
            target.tree = child
        if trees.is_tree_kind(child) and child[1] == "mixed":  # a field holding structures of several kinds
            out.append(ir.Assign(target, prim, args, kwargs, self.loc(at), callee))
            self.env[name] = self.mixed_items(target, self.loc(at), out)
            return
        if _makes_buffer(prim):  # its gradient may be an object array: accumulate with rt.accum
            target.is_buffer, target.kind = True, "any"
        if prim is ir.BUILD_TUPLE:
            self.tuples[target] = args
            self.lengths[target] = len(args)
        out.append(ir.Assign(target, prim, args, kwargs, self.loc(at), callee))
        self.env[name] = target
        self.record_view(out[-1])
        if _makes_array(prim) and not (prim is np.array and "copy" in kwargs):  # (copy=False may alias)
            self.root().made_arrays.add(target)

    def branch(self, s, out: list) -> None:
        cond = self.operand(s.test)
        if isinstance(cond, ir.Const) and type(cond.value) is bool:
            # a test known here (`axis is None` of an inlined helper called with `axis=None`): only
            # the branch taken is compiled, so no dead code and no `None[i]` is generated
            out.extend(self.block(s.body if cond.value else s.orelse))
            return
        before = self.env
        self.env = dict(before)
        self.nesting += 1
        body = self.block(s.body)
        env_body, self.env = self.env, dict(before)
        orelse = self.block(s.orelse)
        self.nesting -= 1
        env_orelse = self.env
        merged = {k: v for k, v in before.items()}
        outputs, body_results, orelse_results = [], [], []
        pairs: dict = {}  # (body value, orelse value) -> the output: names bound alike stay one value
        for name in sorted(set(env_body) & set(env_orelse), key=_order(env_body, env_orelse)):
            a, b = env_body[name], env_orelse[name]
            if a is b:
                merged[name] = a
                continue
            if is_function_value(a) or is_function_value(b):
                merged[name] = self.unusable_after_if(name, s)
                continue
            if (id(a), id(b)) in pairs and name != RETURN:
                merged[name] = pairs[id(a), id(b)]  # (two names of one array: one output, written as one)
                continue
            if isinstance(a, _Dict) or isinstance(b, _Dict):
                raise UnsupportedSyntaxError(f"the dict `{name}` is made or changed in a branch of this `if`; a "
                                             "dict is resolved at compile time: make it before the `if`, or keep "
                                             "its values in variables of their own", self.loc(s))
            kind = a.kind if isinstance(a, ir.Var) and isinstance(b, ir.Var) and a.kind == b.kind else (
                "num" if _numeric(a) and _numeric(b) else "any")
            out_var = ir.Var(self.namer.fresh("result"), kind) if name == RETURN else self.version(name, kind)
            if isinstance(a, ir.Var) and isinstance(b, ir.Var) and a.tree is not None and a.tree == b.tree:
                out_var.tree = a.tree  # (two structures of one kind)
            outputs.append(out_var)
            body_results.append(a)
            orelse_results.append(b)
            merged[name] = out_var
            if name != RETURN:
                pairs[id(a), id(b)] = out_var
        self.env = merged
        self.branches.update((o, (a, b)) for o, a, b in zip(outputs, body_results, orelse_results))
        self.merge_writes(s, before, body + orelse, outputs, body_results, orelse_results)
        out.append(ir.If(cond, body, orelse, outputs, body_results, orelse_results, self.loc(s)))
        self.merge_views(out[-1])

    def merge_views(self, s: ir.If) -> None:
        """An `if` output that is, on both sides, the same view of (versions of) one array is that
        view of the `if`'s version of the array."""
        for out_var, a, b in zip(s.outputs, s.body_results, s.orelse_results):
            va, vb = self.views.get(a) if isinstance(a, ir.Var) else None, \
                self.views.get(b) if isinstance(b, ir.Var) else None
            if va is None or vb is None or va.steps != vb.steps:
                continue
            if va.base is vb.base:
                self.views[out_var] = View(va.base, va.steps, va.sure and vb.sure)
                continue
            for o, ba, bb in zip(s.outputs, s.body_results, s.orelse_results):
                if ba is va.base and bb is vb.base:
                    self.views[out_var] = View(o, va.steps, va.sure and vb.sure)

    def check_carried_views(self, loop: ir.Loop, carried: list, uses: list, at) -> None:
        """A carried view the body rebinds to anything but the same view of its base: the body was
        built taking it for the view it entered as, so a use of its steps there is refused; after
        the loop its steps are unknown (`steps_of` refuses writes through it, and as a view that may
        not be one, a read after a write into its base is refused by `mutation`)."""
        for n, p, nxt in zip(carried, loop.params, loop.nexts):
            view = self.views.get(p)
            if view is None or view.steps is None or nxt is p:
                continue
            got = self.views.get(nxt) if isinstance(nxt, ir.Var) else None
            base_next = loop.nexts[loop.params.index(view.base)] if view.base in loop.params else view.base
            if got is not None and got.steps == view.steps and (
                    got.base is base_next or self.same_array(got.base, view.base)):
                continue
            if any(u.steps is not None and u.steps[:len(view.steps)] == view.steps for u in uses):
                raise MutationError(f"`{n}` is a view of `{view.base.display}` that this loop writes through and "
                                    "rebinds to another value: which slots each trip writes is not known when "
                                    f"compiling; write into `{view.base.display}` at those slots instead, or copy "
                                    f"the view first (`.copy()`)", self.loc(at))
            self.views[p] = View(view.base, None, False)

    def merge_writes(self, s, before: dict, branches: list, outputs, body_results, orelse_results) -> None:
        """An array written in a branch: where both branches' values of a name are versions of that
        array, the `if`'s output is its new version and every name bound to any of them (here and
        in the callers) sees it. A name left holding an older version would miss the write."""
        made = {v for v in ir.defined_in(branches) if v.storage is not None}
        roots = {v.storage for v in made}
        if not roots:
            return
        for out_var, a, b in zip(outputs, body_results, orelse_results):
            ends = [v for v in (a, b) if isinstance(v, ir.Var)]
            root = next((v.storage for v in ends if v in made), None)
            if root is None or len(ends) < 2 or not all(v is root or v.storage is root for v in ends):
                continue
            out_var.storage = root
            for v in ends:
                self.rebind_everywhere(v, out_var)
            for v in list(before.values()):
                if isinstance(v, ir.Var) and (v is root or v.storage is root):
                    self.rebind_everywhere(v, out_var)
        builder = self
        while builder is not None:
            for name, v in builder.env.items():
                if isinstance(v, ir.Var) and (v.storage in roots or v in roots) and v not in outputs:
                    raise MutationError(f"`{name}` holds an array that one branch of this `if` writes into "
                                        "and the other does not bind the same way; make the branches "
                                        "agree, or copy the array before the `if`", self.loc(s))
            builder = builder.parent


    def loop(self, s, out: list) -> None:
        if self.unroll(s, out):
            return
        is_for = isinstance(s, gast.For)
        body_nodes = list(s.body)
        cond_nodes: list = []
        if not is_for:
            cond_nodes, body_nodes = body_nodes[:s.cond_len], body_nodes[s.cond_len + 1:]
        if s.stop_flag:
            body_nodes = body_nodes[:-1]
        assigned = _stored(cond_nodes + body_nodes)
        for n in _updated_in_place_only(cond_nodes + body_nodes) & set(assigned):
            if self.caller_sees(n):  # (each `n += e` writes into the argument's array: `update_argument`)
                del assigned[n]
        target_name = s.target.id if is_for else None
        outside = self.reads_outside(s)
        exposed = _exposed(cond_nodes + body_nodes, {target_name} if is_for else set())
        written = _written(cond_nodes + body_nodes)
        # (a name the loop binds that is bound before it or read elsewhere is carried, the target
        # included; one bound before by nothing enters as `rt.UNBOUND`, which raises when read
        # after no trip bound it)
        carry_target = is_for and (target_name in outside or target_name in self.env)
        if carry_target:
            assigned.setdefault(target_name, None)
        fresh_target = None if carry_target else target_name
        carried = [n for n in assigned if n != fresh_target and (n in self.env or n in exposed or n in outside)]
        carried += [n for n in written if n not in carried and n != fresh_target and n in self.env]
        if written or _updates_in_place(cond_nodes + body_nodes):
            # a write through a view (made in the loop, perhaps), or into a view's base: any array
            # may change (those that do not are no loop-carried values, below)
            bound = {id(v) for v in self.env.values()}
            for n, v in list(self.env.items()):
                view = self.views.get(v) if isinstance(v, ir.Var) else None
                if view is not None and id(view.base) not in bound:
                    # the base of a view passed to an inlined function: no name here holds it, but
                    # a write through the view makes a new version of it each trip
                    self.env[f"{n} base"] = view.base
                    bound.add(id(view.base))
            header = set(_loads(s.iter)) if is_for else set()
            carried += [n for n, v in self.env.items() if n not in carried and n != fresh_target and n not in header
                        and isinstance(v, ir.Var) and v.kind != "seq" and not n.startswith("__")]
            written = dict.fromkeys(list(written) + carried)
        before = self.env
        carried = self.without_constants(carried, assigned, before)
        # names the body does not rebind, bound to one array on entry, are one array in every trip:
        # one param (`bind` gives it to the others), so a write through one name is read through all
        firsts: dict = {}
        for n in carried:
            v = before.get(n)
            if n not in assigned and isinstance(v, ir.Var):
                firsts.setdefault(id(v), n)
        carried = [n for n in carried if n in assigned or not isinstance(before.get(n), ir.Var)
                   or firsts[id(before[n])] == n]
        for n in carried:
            if isinstance(before.get(n), _Dict):
                raise UnsupportedSyntaxError(f"the dict `{n}` is updated in this loop; a dict is resolved at "
                                             "compile time and cannot be a loop-carried value: keep its "
                                             "arrays in variables of their own", self.loc(s))
        params = []
        # (a name bound before by no statement holds `rt.UNBOUND` until a trip binds it: any use of
        # it after a loop that ran no trips raises, as Python does)
        from . import runtime
        unbound = ir.Global("rt.UNBOUND", runtime.UNBOUND, runtime, ())
        for n in carried:
            init = before.get(n, unbound)
            params.append(self.version(n, init.kind if isinstance(init, ir.Var) else
                                       ("num" if _numeric(init) else "any")))
            params[-1].is_buffer = getattr(init, "is_buffer", False)
            if isinstance(init, ir.Var) and init.tree is not None and n not in assigned:
                params[-1].tree = init.tree  # (a structure the loop does not rebind keeps its kind)
        inits = [before.get(n, unbound) for n in carried]

        def bind(env, values):
            """Bind each carried name to `values`; a name the body only writes through also rebinds
            every other name bound to the same array (they are one array)."""
            for n, init, value in zip(carried, inits, values):
                env[n] = value
                if isinstance(init, ir.Var) and n not in assigned:
                    for k, v in before.items():
                        if v is init and k not in carried:
                            env[k] = value
        self.env = dict(before)
        bind(self.env, params)
        self.entered.update((p, i) for p, i in zip(params, inits) if isinstance(i, ir.Var))
        rebound = set(assigned) - _updated_in_place_only(cond_nodes + body_nodes)
        for n, p, init in zip(carried, params, inits):  # a carried view: a view of its base's carried value
            view = self.views.get(init) if isinstance(init, ir.Var) else None
            if view is not None:  # (one the body rebinds may show other slots from the second trip on)
                base = next((q for q, i in zip(params, inits) if i is view.base), view.base)
                self.views[p] = View(base, None, False) if n in rebound else View(base, view.steps, view.sure)
        self.nesting += 1
        # inside the loop, an array it may write is its param, never its value on entry (a nested
        # function reading the enclosing function's name for it must not see that value)
        self.open_loops.append({i for n, i in zip(carried, inits) if n in written and isinstance(i, ir.Var)})
        uses_before = len(self.view_uses)
        loop = ir.Loop("for" if is_for else "while", params, inits, [], [], self.loc(s))
        if is_for:
            loop.iterable = self.operand(s.iter)
            loop.target = self.version(target_name)
            self.env[target_name] = loop.target
        else:
            loop.cond_body = self.block(cond_nodes)
            loop.cond = self.operand(s.cond_atom)
        loop.body = self.block(body_nodes)
        self.open_loops.pop()
        self.nesting -= 1
        missing = [n for n in carried if n not in self.env]
        if missing:
            raise CompileError(f"`{missing[0]}` is assigned in this loop only on some paths",
                               self.loc(s))
        loop.nexts = [self.env[n] for n in carried]
        dropped = self.drop_function_params(loop, carried, params, inits, s)
        self.check_carried_views(loop, carried, self.view_uses[uses_before:], s)
        for p, init in zip(params, inits):  # a carried view's base must stay one array across trips
            view = self.views.get(p)
            if view is None or view.base not in params or loop.nexts[params.index(p)] is p:
                continue  # (a view the loop leaves alone stays a view of the array it was made from)
            if not self.same_array(loop.nexts[params.index(view.base)], view.base):
                raise MutationError(f"`{carried[params.index(p)]}` is a view of `{carried[params.index(view.base)]}`, "
                                    f"which this loop rebinds to a new array: the view would keep the old one; "
                                    f"copy the view first (`.copy()`), or update `{carried[params.index(view.base)]}` "
                                    "in place", self.loc(s))
        if s.stop_flag:
            stop_value = self.env[s.stop_flag]
        for p, nxt in zip(params, loop.nexts):
            if p.kind != (nxt.kind if isinstance(nxt, ir.Var) else ("num" if _numeric(nxt) else "any")):
                p.kind = "any"
        # A name the body might have written through but did not is no loop-carried value.
        unchanged = {p: i for p, i, n in zip(params, inits, loop.nexts) if n is p}
        # (a name the loop's text assigns but no trip changes - assigned in a branch never taken -
        # keeps its value after the loop)
        unchanged_names = {n: i for n, p, i in zip(carried, params, inits) if p in unchanged and n in before}
        if unchanged:
            ir.substitute(loop.cond_body + loop.body, unchanged)
            loop.nexts = [unchanged.get(n, n) if isinstance(n, ir.Var) else n for n in loop.nexts]
            loop.cond = unchanged.get(loop.cond, loop.cond) if isinstance(loop.cond, ir.Var) else loop.cond
            kept = [k for k, p in enumerate(params) if p not in unchanged]
            carried = [carried[k] for k in kept]
            params = [params[k] for k in kept]
            inits = [inits[k] for k in kept]
            loop.params, loop.inits, loop.nexts = params, inits, [loop.nexts[k] for k in kept]
        if s.stop_flag:
            loop.stop = unchanged.get(stop_value, stop_value) if isinstance(stop_value, ir.Var) else stop_value
            if isinstance(loop.stop, ir.Const) and loop.stop.value is False:
                loop.stop = None  # (every `break` was in a branch never taken)
        loop.trips = ir.Var(self.namer.fresh(f"{target_name or 'while'}_trips"))
        self.env = dict(before)
        bind(self.env, params)
        for n in set(assigned) | ({target_name} if is_for else set()):
            if n not in carried:
                self.env.pop(n, None)
        self.env.update(unchanged_names)
        for p, init, nxt in zip(params, inits, loop.nexts):
            if isinstance(init, ir.Var) and isinstance(nxt, ir.Var) and nxt is not p and self.same_array(nxt, p):
                self.kept.add(p)
                if carried[params.index(p)] in assigned and any(
                        v is init for k, v in before.items() if k != carried[params.index(p)]):
                    raise MutationError(f"`{carried[params.index(p)]}` shares its array with another name, "
                                        "and this loop both writes into it and rebinds it; copy it first "
                                        "(`.copy()`)", self.loc(s))
                self.rebind_everywhere(init, p)  # written in place: the array after the loop
        for k, (p, init, nxt) in enumerate(zip(params, inits, loop.nexts)):
            if p in self.kept or p not in self.written or not isinstance(init, ir.Var):
                continue
            # written into during a trip, then bound to another array by the next, while another
            # carried name entered with the same array (`b = a; for: a[i] = ...; b, a = a, b`):
            # which name holds the written array cannot be followed
            shared = [carried[j] for j, i in enumerate(inits) if j != k and i is init]
            if shared:
                raise MutationError(f"`{carried[k]}` is written into in this loop and then names another array in "
                                    f"the next trip, while `{shared[0]}` names the array it entered with; copy it "
                                    f"first (`{carried[k]} = {carried[k]}.copy()`)", self.loc(s))
        for n, value in dropped.items():
            self.env[n] = value
        out.append(loop)

    # -- functions as values (nested defs, lambdas, functools.partial; see functions.py) ---------
    def make_closure(self, node: FunctionNode, name: str, at) -> Closure:
        """The value of `def name(...)` / `name = lambda ...`: its defaults evaluated now."""
        fn = node.node
        defaults = [self.operand(d, allow_function=True) for d in node.defaults]
        kw_defaults = {p.id: self.operand(d, allow_function=True)
                       for p, d in zip(fn.args.kwonlyargs, node.kw_defaults) if d is not None}
        display = node.display if node.display != "lambda" else "the lambda"
        closure = Closure(fn, self.source, self, defaults, kw_defaults, frozenset(r.id for r in node.reads),
                          display, self.loc(at))
        closure.builder, closure.nesting = self, self.nesting
        return closure

    def function_item(self, prim, args: list):
        """`SEQ[k]` of a global list, tuple or dict of functions at a constant key: that function,
        as a global of its own (the guard re-checks the container's items at each call)."""
        if prim is not operator.getitem or not (isinstance(args[0], ir.Global) and isinstance(args[1], ir.Const)):
            return None
        seq, key = args[0].value, args[1].value
        try:
            item = seq[key] if isinstance(seq, (list, tuple, dict)) else None
        except (IndexError, KeyError, TypeError):
            return None
        if not callable(item) or isinstance(item, type):
            return None
        return ir.Global(self.namer.fresh(f"{args[0].path}_{key}"), item, item, ())

    def static_sequence_op(self, prim, args: list, callee, at):
        """A display holding a function value is a StaticSeq; its constant items and slices, its
        `len` and concatenations are resolved now. None for any other operation."""
        if prim in (ir.BUILD_TUPLE, ir.BUILD_LIST):
            if any(is_function_value(a) or (isinstance(a, ir.Global) and callable(a.value)
                                            and not isinstance(a.value, type)) for a in args):
                return StaticSeq(args, "tuple" if prim is ir.BUILD_TUPLE else "list")
            return None
        if not args or not isinstance(args[0], StaticSeq):
            return None
        seq = args[0]
        if prim is len and callee is not None and len(args) == 1:
            return ir.Const(len(seq.items))
        if prim in (ir.CONCAT, ir.PLUS, operator.add) and len(args) == 2 and isinstance(args[1], StaticSeq):
            return StaticSeq(seq.items + args[1].items, seq.kind)
        if prim is operator.getitem and isinstance(args[1], ir.Const) and type(args[1].value) is int:
            try:
                return seq.items[args[1].value]
            except IndexError:
                raise CompileError(f"index {args[1].value} is out of range for {seq.display} of "
                                   f"{len(seq.items)} items", self.loc(at)) from None
        if prim is operator.getitem and isinstance(args[1], ir.Struct) and args[1].kind == "slice" \
                and all(isinstance(p, ir.Const) and (p.value is None or type(p.value) is int) for p in args[1].items):
            return StaticSeq(seq.items[slice(*(p.value for p in args[1].items))], seq.kind)
        raise UnsupportedSyntaxError(f"{seq.display} can be read only at constant indices and slices, by `len`, "
                                     "and by a loop over it (unrolled): a function must be known when the code is "
                                     "compiled", self.loc(at))

    def unroll(self, s, out: list) -> bool:
        """`for k in range(len(seq)): item = seq[k]; body` over a StaticSeq: one copy of the body
        per item, `k` a constant in each (normalize marks the loops that may be such)."""
        seq = self.env_value(getattr(s, "unroll_over", None) or "")
        if not isinstance(seq, StaticSeq):
            return False
        if s.stop_flag or not isinstance(s, gast.For):
            raise UnsupportedSyntaxError(f"a loop over {seq.display} is unrolled, one copy of its body per item: "
                                         "`break`, `continue` and `return` are not supported in it", self.loc(s))
        target = s.target.id
        for k in range(len(seq.items)):
            self.env[target] = ir.Const(k)
            for t in astwalk.clone(s.body):
                self.stmt(t, out)
        self.env.pop(target, None)
        return True

    # -- gradients taken inside the differentiated code (nesting) ------------------------------------
    def make_derivative(self, prim, args: list, kwargs: dict, callee, at) -> Derivative:
        """`grad(f, wrt)` / `value_and_grad(f, wrt)`: `f` and `wrt` must be known when compiling."""
        from . import api
        mode = _derivative_maker(prim)
        what = callee.path if callee is not None else prim.__name__
        try:
            bound = inspect.signature(prim).bind(*args, **kwargs)
        except TypeError as exc:
            raise CompileError(f"in the call to `{what}`: {exc}", self.loc(at)) from None
        named = dict(bound.arguments)
        func = named.pop("func")
        wrt = self.static_value(named.pop("wrt", ir.Const(0)), f"the `wrt` of `{what}`", at)
        if mode == "joint" and self.static_value(named.pop("has_aux", ir.Const(False)), "`has_aux`", at):
            raise UnsupportedSyntaxError(f"`{what}(..., has_aux=True)` inside a differentiated function is not "
                                         "supported; return the loss alone from the function you differentiate "
                                         "there, and compute the aux outside", self.loc(at))
        try:
            wrt_t, as_tuple = api._normalize_wrt(wrt)
        except api.ArgumentError as exc:
            raise CompileError(f"in the call to `{what}`: {exc}", self.loc(at)) from None
        if isinstance(func, Closure):
            lifted, extra = self.lift(func, what, at)
            n = len(func.node.args.args)
            if not all(-n <= i < n for i in wrt_t):
                raise CompileError(f"in the call to `{what}`: wrt={wrt!r} is out of range: {func.display} takes "
                                   f"{n} arguments", self.loc(at))
            return Derivative(lifted, tuple(i % n for i in wrt_t), as_tuple, mode, f"{what}({func.display})",
                              extra, func.defining)
        if isinstance(func, FunctionValue):
            raise UnsupportedSyntaxError(
                f"`{what}` of {func.display}, a function made inside the differentiated function, is not "
                "supported; define it at module level and pass what it reads from here as arguments, e.g. "
                "`grad(inner)(w, x)` with `def inner(w, x): ...`", self.loc(at))
        if not (isinstance(func, ir.Global) and callable(func.value)):
            raise UnsupportedSyntaxError(f"`{what}` of a value computed inside the differentiated function: pass a "
                                         "function by name", self.loc(at))
        return Derivative(func.value, wrt_t, as_tuple, mode, f"{what}({func.path})")

    def lift(self, c: Closure, what: str, at) -> tuple:
        """A lambda or nested def as a function of its own (its source registered for the compiler
        to read), whose globals are the module's: the free names it reads from the enclosing
        function become keyword parameters, given their values where the gradient is called.
        Returns (function, those names)."""
        import ast
        import linecache

        from .functions import free_names
        a = c.node.args
        if c.defaults or c.kw_defaults or a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise UnsupportedSyntaxError(
                f"`{what}` of {c.display}, made inside the differentiated function with defaults, keyword-only or "
                "variadic parameters, is not supported; define it at module level and pass what it reads from "
                "here as arguments", self.loc(at))
        free = sorted(free_names(c.node))
        extra = [n for n in free if n in c.outer]
        cells = [n for n in free if n not in c.outer and n in c.source.closure]
        if cells:
            raise UnsupportedSyntaxError(
                f"`{what}` of {c.display}: it reads `{cells[0]}` from the closure of `{c.source.node.name}`; define "
                "the function at module level and pass what it reads as arguments", self.loc(at))
        node = copy.deepcopy(c.node)
        name = self.namer.fresh("lifted_lambda" if c.display == "the lambda" else f"lifted_{c.node.name}")
        node.name = name
        node.decorator_list = []
        node.args.args = list(node.args.args) + [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                                                 for n in extra]
        tree = gast.gast_to_ast(gast.Module(body=[node], type_ignores=[]))
        text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
        filename = f"<adjoint_compiler {c.display} at {c.loc.file}:{c.loc.line}, lifted as {name}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        code = compile(text, filename, "exec")
        body = next(k for k in code.co_consts if isinstance(k, types.CodeType) and k.co_name == name)
        return types.FunctionType(body, c.source.globals, name), extra

    def derivative_of(self, callee, at) -> Derivative:
        """A gradient function made by `grad`/`value_and_grad` outside and called here."""
        func, wrt_t, as_tuple, mode = callee.value.__adjoint_spec__
        return Derivative(func, wrt_t, as_tuple, mode, f"`{callee.path}`")

    def static_value(self, op, what: str, at):
        if isinstance(op, ir.Const):
            return op.value
        if isinstance(op, ir.Global):
            return op.value
        if op in self.tuples and all(isinstance(i, ir.Const) for i in self.tuples[op]):
            return tuple(i.value for i in self.tuples[op])
        raise UnsupportedSyntaxError(f"{what} must be known when the code is compiled (a constant)", self.loc(at))

    def inline_derivative(self, d: Derivative, args: list, kwargs: dict, at, out: list):
        """The call of a gradient: the gradient's generated code (differentiable), inlined."""
        from . import api, nesting
        func = frontend._unwrap(d.func)
        if nesting.being_built(func) or func is frontend._unwrap(self.root().source.func) or func in self.inlining:
            raise CompileError(f"{d.display} is taken inside the function it differentiates: a recursive "
                               "derivative cannot be compiled", self.loc(at))
        direction = None
        if d.mode == "hvp":  # `hvp(f, wrt)(*args, v)`: the direction is the last positional argument
            if not args:
                raise CompileError(f"in the call to {d.display}: give the arguments, then the direction", self.loc(at))
            *args, direction = args
        if d.extra:
            given = set(kwargs)
            kwargs = {**kwargs, **{n: self.enclosing_value(d, n, at) for n in d.extra}}
            if given & set(d.extra):
                raise CompileError(f"in the call to {d.display}: unexpected keyword argument", self.loc(at))
        try:
            sig = inspect.signature(d.func)
            bound = sig.bind(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            raise CompileError(f"in the call to {d.display}: {exc}", self.loc(at)) from None
        kinds = []
        for pname, param in sig.parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise UnsupportedSyntaxError(f"{d.display}: a gradient of a function with `*args` or `**kwargs` "
                                             "cannot be taken inside a differentiated function", self.loc(at))
            if pname in bound.arguments:
                kinds.append(self.argument_kind(bound.arguments[pname], pname, d, at))
            else:
                kinds.append(api._kind(param.default))
        if d.mode == "hvp":
            return self.inline_hvp(d, sig, bound, direction, tuple(kinds), at, out)
        wrapper = self.inner_gradient(d, at, d.func, d.wrt, d.as_tuple, d.mode, tuple(kinds),
                                      defaulted=_defaulted(sig, bound))
        return self.inline(wrapper, args, kwargs, None, at, out)

    def inner_gradient(self, d: Derivative, at, *how, defaulted=()):
        """`nesting.inner_gradient(*how)` for the derivative `d` called at `at`: its generated
        function, its guard joined to this compilation's, its errors located here. `defaulted`:
        the positions of the parameters the call leaves to their defaults (refused where the
        function changes that default in place)."""
        from . import api, nesting
        try:
            function, guard, changed = nesting.inner_gradient(*how)
        except CompileError:
            raise
        except (SourceError, api.ArgumentError, api.ArgumentIndexError) as exc:
            raise CompileError(f"cannot compile {d.display} called here: {exc}", self.loc(at)) from None
        for i, loc in changed:
            if i in defaulted:
                param = list(inspect.signature(d.func).parameters)[i]
                raise MutationError(mutation.default_change(frontend._unwrap(d.func), param), loc)
        reading = getattr(frontend._state, "reading", None)
        if reading is not None:
            reading.guards.append(guard)
        return function

    def inline_hvp(self, d: Derivative, sig, bound, direction, kinds: tuple, at, out: list):
        """`hvp(f, wrt)(*args, v)`: the jvp of `f`'s gradient along `v` (forward over reverse, as
        `nesting.hvp` computes it), its generated code inlined; the result is the tangent."""
        from . import api
        params = list(sig.parameters.items())
        n = len(params)
        if not all(-n <= i < n for i in d.wrt):
            raise CompileError(f"in the call to {d.display}: wrt={d.wrt} is out of range", self.loc(at))
        positions = [i % n for i in d.wrt]
        if len(set(positions)) != len(positions):
            raise CompileError(f"in the call to {d.display}: wrt names an argument twice", self.loc(at))
        directions = self.static_items(direction, f"the directions of {d.display} (one per wrt argument)", at) \
            if d.as_tuple else [direction]
        if len(directions) != len(positions):
            raise CompileError(f"{d.display}: give one direction per differentiated argument ({len(positions)}), "
                               f"got {len(directions)}", self.loc(at))
        values = []
        for pname, param in params:
            if pname in bound.arguments:
                values.append(bound.arguments[pname])
            elif isinstance(param.default, (int, float, bool, type(None))):
                values.append(ir.Const(param.default))
            else:
                values.append(ir.Global(self.namer.fresh(f"{d.func.__name__}_{pname}_default"), param.default,
                                        param.default, (d.func, ("default", pname))))
        for i in positions:
            if isinstance(values[i], (ir.Const, ir.Global)) and not _float_valued(values[i].value):
                raise UnsupportedSyntaxError(f"{d.display}: the argument `{params[i][0]}` it differentiates is a "
                                             "constant that is not a float; write it as a float (`2.0`)", self.loc(at))
        gradient = api.grad(d.func, d.wrt if d.as_tuple else d.wrt[0])
        order = sorted(range(len(positions)), key=lambda j: positions[j])
        function = self.inner_gradient(d, at, gradient, tuple(positions[j] for j in order), False, "jvp", kinds,
                                       defaulted=_defaulted(sig, bound))
        pair = self.inline(function, values + [directions[j] for j in order], {}, None, at, out)
        target = self.version("hvp", "seq" if d.as_tuple else "num")
        out.append(ir.Assign(target, operator.getitem, [pair, ir.Const(1)], {}, self.loc(at), None))
        return target

    def enclosing_value(self, d: Derivative, name: str, at):
        """The value a lifted function's free name has in the scope that made it, now."""
        b = d.defining
        while b is not None:
            if name in b.env:
                value = b.env[name]
                if is_function_value(value):
                    raise UnsupportedSyntaxError(f"{d.display}: the function reads `{name}`, a function made in the "
                                                 "differentiated code; pass a module-level function", self.loc(at))
                return value
            b = b.defining
        raise CompileError(f"`{name}` is read by {d.display} before the enclosing function assigns it", self.loc(at))

    def inline_jvp(self, prim, args: list, kwargs: dict, callee, at, out: list):
        """`jvp(f, primals, tangents)`: the generated jvp of `f` (differentiable), inlined; its
        result is the pair (value, tangent). `primals` and `tangents` must be tuple displays (or
        constant tuples) of the same length; every primal but an integer constant carries its
        tangent."""
        from . import api, nesting
        what = callee.path if callee is not None else "jvp"
        try:
            bound = inspect.signature(prim).bind(*args, **kwargs)
        except TypeError as exc:
            raise CompileError(f"in the call to `{what}`: {exc}", self.loc(at)) from None
        func = bound.arguments["func"]
        primals = self.static_items(bound.arguments["primals"], f"the primals of `{what}`", at)
        tangents = self.static_items(bound.arguments["tangents"], f"the tangents of `{what}`", at)
        if len(primals) != len(tangents):
            raise CompileError(f"`{what}`: {len(primals)} primals but {len(tangents)} tangents", self.loc(at))
        if isinstance(func, Closure):  # lifted: the enclosing names it reads are primals without tangents
            lifted, extra = self.lift(func, what, at)
            d = Derivative(lifted, (), False, "jvp", f"{what}({func.display})", extra, func.defining)
            if len(primals) != len(func.node.args.args):
                raise CompileError(f"`{what}`: {func.display} takes {len(func.node.args.args)} arguments, "
                                   f"{len(primals)} primals given", self.loc(at))
            func = ir.Global(lifted.__name__, lifted, lifted, ())
        elif isinstance(func, FunctionValue):
            raise UnsupportedSyntaxError(
                f"`{what}` of {func.display}, a function made inside the differentiated function, is not "
                "supported; define it at module level and pass what it reads from here as arguments", self.loc(at))
        elif not (isinstance(func, ir.Global) and callable(func.value)):
            raise UnsupportedSyntaxError(f"`{what}` of a value computed inside the differentiated function: pass a "
                                         "function by name", self.loc(at))
        else:
            d = Derivative(func.value, (), False, "jvp", f"{what}({func.path})")
        target = frontend._unwrap(func.value)
        if nesting.being_built(target) or target is frontend._unwrap(self.root().source.func) \
                or target in self.inlining:
            raise CompileError(f"{d.display} is taken inside the function it differentiates: a recursive "
                               "derivative cannot be compiled", self.loc(at))
        try:
            sig = inspect.signature(func.value)
            bound_args = sig.bind(*primals, **{n: self.enclosing_value(d, n, at) for n in d.extra})
        except (TypeError, ValueError) as exc:
            raise CompileError(f"in the call to {d.display}: {exc}", self.loc(at)) from None
        values, kinds, wrt = [], [], []
        for k, (pname, param) in enumerate(sig.parameters.items()):
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise UnsupportedSyntaxError(f"{d.display}: a jvp of a function with `*args` or `**kwargs` "
                                             "cannot be taken inside a differentiated function", self.loc(at))
            if pname in bound_args.arguments:
                op = bound_args.arguments[pname]
                kinds.append(self.argument_kind(op, pname, d, at))
                if k >= len(tangents):  # (a lifted function's enclosing name: no tangent)
                    values.append(op)
                    continue
                constant = isinstance(op, (ir.Const, ir.Global))
                zero = isinstance(tangents[k], ir.Const) and tangents[k].value is None or (
                    isinstance(tangents[k], ir.Const) and type(tangents[k].value) in (int, float)
                    and tangents[k].value == 0)
                if zero:
                    pass  # (a zero tangent adds nothing: the position is not differentiated, as `jvp` does for
                    # an integer; `0 * log(x)` of `x ** k` in k would be nan for a negative x)
                elif not (constant and not _float_valued(op.value)):
                    wrt.append(k)
                else:
                    raise UnsupportedSyntaxError(f"{d.display}: the primal `{pname}` is not a float constant, so "
                                                 "it carries no tangent: give None or 0.0 for it", self.loc(at))
            else:
                op = ir.Const(param.default) if isinstance(param.default, (int, float, bool, type(None))) else \
                    ir.Global(self.namer.fresh(f"{target.__name__}_{pname}_default"), param.default, param.default,
                              (target, ("default", pname)))
                kinds.append(api._kind(param.default))
            values.append(op)
        function = self.inner_gradient(d, at, func.value, tuple(wrt), False, "jvp", tuple(kinds),
                                       defaulted=_defaulted(sig, bound_args))
        return self.inline(function, values + [tangents[k] for k in wrt], {}, None, at, out)

    def static_items(self, op, what: str, at) -> list:
        """The operands of a tuple display (or of a constant tuple)."""
        if isinstance(op, ir.Var) and op in self.tuples:
            return list(self.tuples[op])
        if isinstance(op, (ir.Const, ir.Global)) and isinstance(op.value, (tuple, list)):
            return [ir.Const(v) if isinstance(v, (int, float, bool, type(None))) else
                    ir.Global(self.namer.fresh("item"), v, v, ()) for v in op.value]
        raise UnsupportedSyntaxError(f"{what} must be written as a tuple display here, e.g. `(x,)`", self.loc(at))

    def argument_kind(self, op, pname: str, d: Derivative, at) -> str:
        """The argument kind (api._kind) the inner gradient is compiled for."""
        from . import api
        if isinstance(op, (ir.Const, ir.Global)):
            return api._kind(op.value)
        if isinstance(op, ir.Var):
            if op.kind == "seq":
                return "seq"
            if op.kind == "num" or op.is_buffer:
                return "num"
        raise UnsupportedSyntaxError(f"{d.display}: the argument `{pname}` is not known to be a number, an array or "
                                     "a tuple here, so the gradient cannot be compiled for it", self.loc(at))

    def root(self):
        builder = self
        while builder.parent is not None:
            builder = builder.parent
        return builder

    def check_held(self, fv, value, at) -> None:
        """A default or bound argument that is an array written since the function was made, by a
        write in a loop or branch there (a write in the block that made it rebinds it): Python
        would pass the written array, which this version is not."""
        if isinstance(value, ir.Var) and not self.current(value):
            label = next(label for label, item in fv.held() if item is value)
            raise MutationError(f"{label} is an array written after the function was made, inside a "
                                "loop or `if`: the gradient cannot follow it; pass the array as an argument at the call "
                                "instead", self.loc(at))

    def make_partial(self, args: list, kwargs: dict, value, at) -> Partial:
        """`functools.partial(func, *args, **kwargs)`: `func` must be known at compile time."""
        func = args[0] if args else kwargs.get("func")
        if not (isinstance(func, (FunctionValue, ir.Global)) and (isinstance(func, FunctionValue) or callable(func.value))):
            raise UnsupportedSyntaxError("functools.partial of a value computed inside the differentiated function "
                                         "is not supported; pass a function by name", self.loc(at))
        display = func.display if isinstance(func, FunctionValue) else func.path
        partial = Partial(func, args[1:], {k: v for k, v in kwargs.items() if k != "func"}, f"partial({display})")
        partial.builder, partial.nesting = self, self.nesting
        return partial

    def peel_partial(self, callee, args: list, kwargs: dict, at) -> tuple:
        """(the function a call finally calls, its arguments): partials are taken apart, those made
        here and `functools.partial` objects read from globals (their parts baked in as constants)."""
        for _ in range(100):
            if isinstance(callee, Partial):
                for bound in callee.args + list(callee.kwargs.values()):
                    self.check_held(callee, bound, at)
                callee, args, kwargs = callee.func, callee.args + list(args), {**callee.kwargs, **kwargs}
            elif isinstance(callee, ir.Global) and isinstance(callee.value, functools.partial):
                p = callee.value

                def constant(v, what):
                    if isinstance(v, (int, float, bool, str, type(None))):
                        return ir.Const(v)
                    return ir.Global(self.namer.fresh(f"{callee.path}_{what}"), v, v, ())
                parts = [constant(v, f"arg{i}") for i, v in enumerate(p.args)]
                named = {k: constant(v, k) for k, v in p.keywords.items()}
                func = ir.Global(self.namer.fresh(getattr(p.func, "__name__", "func")), p.func, p.func, ())
                callee, args, kwargs = func, parts + list(args), {**named, **kwargs}
            else:
                return callee, args, kwargs
        raise CompileError("functools.partial nested too deeply", self.loc(at))

    def function_operand(self, value, e, allow: bool):
        """`value` (read through the name `e`), unless it is a function value where one is not
        allowed (anything but a call, a copy, an argument of an inlined call, a helper's return)."""
        if not getattr(e, "lineno", None):
            e = gast.copy_location(gast_name(e.id), getattr(self, "current_stmt", None) or self.source.node)
        if isinstance(value, Unusable):
            raise UnsupportedSyntaxError(value.reason, self.loc(e))
        if isinstance(value, FunctionValue) and not allow:
            who = f"`{e.id}`" if value.display == e.id else value.display
            raise UnsupportedSyntaxError(
                f"{who} is a function made in the differentiated code: it can be called, "
                "bound to another name, passed to a function compiled from source or returned from one, but "
                "not held in a container, computed with, or tested", self.loc(e))
        return value

    def refuse_function_arguments(self, args: list, kwargs: dict, callee, at) -> None:
        """A function value passed to a call that is not inlined: its callee would get no function."""
        for v in list(args) + list(kwargs.values()):
            if is_function_value(v) and callee is None:
                raise UnsupportedSyntaxError(
                    f"{getattr(v, 'display', 'a function')} is used in an operation here: a function value can be "
                    "called, bound to a name, passed to a function compiled from source or returned from one, and "
                    "held in a list or tuple display read at constant indices or by a loop", self.loc(at))
            if is_function_value(v):
                what = f"`{callee.path}`"
                raise UnsupportedSyntaxError(
                    f"{getattr(v, 'display', 'a function')} is passed to {what}, which is not compiled from "
                    "source, so the function cannot be followed into it; call the function yourself (a loop or "
                    "a comprehension), or use map/filter/sorted/functools.reduce, which are", self.loc(at))

    def returned_value(self, s):
        """The operand a `return` gives: a helper (or nested function) may return a function value
        (a closure factory); the differentiated function itself may not."""
        if self.parent is None:
            value = self.operand(s.value, allow_function=True)
            if is_function_value(value):
                raise UnsupportedSyntaxError("the differentiated function returns a function; differentiate the "
                                             "function it returns instead", self.loc(s))
            return value
        return self.operand(s.value, allow_function=True)

    def check_receiver(self, prim, args: list, at, out: list) -> None:
        """`x.sum()` of a value whose class is not known here (an item of a list, a result of `+`),
        a method NumPy's arrays have, is differentiated with NumPy's rule for the method: checked at run time to be what NumPy's
        (or a list's) methods are called on (`rt.numpy_operand`), not a user's object."""
        receiver = args[0] if isinstance(prim, ir.Method) and args and hasattr(np.ndarray, prim.name) else None
        if isinstance(receiver, ir.Var) and receiver.kind == "any" and not receiver.is_buffer and receiver.tree is None:
            from . import runtime
            out.append(ir.Assign(None, runtime.numpy_operand, [receiver, ir.Const(f"`.{prim.name}()`")], {},
                                 self.loc(at), ir.Global(rtcall.name(runtime.numpy_operand), runtime.numpy_operand,
                                                         runtime, ())))

    def item_by_position(self, value: gast.Subscript, at) -> gast.Subscript:
        """The k-th item of a loop over `seq` (normalize's `seq[k]`): a dict's k-th key, as iterating
        a dict gives (an argument's keys are in its kind; a global's or a closure's dict is guarded,
        keys included); a global set, dict view or iterator, which has no k-th item, is refused."""
        seq = value.value.id
        held = self.env_value(seq)
        if isinstance(held, ir.Var) and getattr(held.tree, "__getitem__", None) and held.tree[1] == "dict":
            keys = tuple(held.tree[3])
        elif held is None and seq not in self.locals and self.source.lookup(seq)[0]:
            found = self.source.lookup(seq)[1]
            if isinstance(found, (list, tuple, range, str, np.ndarray)):
                return value
            if not isinstance(found, dict):
                raise UnsupportedSyntaxError(f"a loop over `{seq}`, a {type(found).__name__} this function reads from "
                                             "outside: only a list, tuple, range, dict or array is iterated here; "
                                             f"iterate over `list({seq})` or `sorted({seq})` made outside", self.loc(at))
            keys = tuple(found)
        else:
            return value
        return gast.Subscript(value=_Operand(ir.Const(keys)), slice=value.slice, ctx=gast.Load())

    def env_value(self, name: str):
        """What `name` is bound to here (a nested function's free names in their scope), or None."""
        if name in self.env:
            return self.env[name]
        if self.defining is not None and name in self.source.outer and name not in self.locals:
            b = self.defining
            while b is not None:
                if name in b.env:
                    return b.env[name]
                b = b.defining if name in b.source.outer and name not in b.locals else None
        return None

    def free_value(self, name: str, at):
        """A free name of a nested function, read in the scope that binds it as it is now (Python's
        late binding): the enclosing function's current value of the name."""
        b = self.defining
        while b is not None:
            if name in b.env:
                value = b.env[name]
                if isinstance(value, ir.Var):
                    active, up = False, self.parent
                    while up is not None and not active:
                        active, up = up is b, up.parent
                    if any(value in entry for entry in self.open_loops):
                        raise MutationError(f"`{name}` is an array a loop around this call may write into, and the "
                                            f"nested function reads it through the enclosing function's `{name}`: "
                                            f"pass `{name}` to the function as an argument", self.loc(at))
                    if not active and not self.current(value):
                        raise MutationError(f"`{name}` holds an array written after the function that reads it "
                                            "was made, in a scope that has returned: the written array cannot be "
                                            f"followed; pass `{name}` to the function as an argument", self.loc(at))
                    self.free_reads.add(value.storage or value)
                return value
            if name in b.locals or b.defining is None or name not in b.source.outer:
                raise CompileError(f"`{name}` is read by a nested function before the enclosing function assigns "
                                   "it (Python raises NameError)", self.loc(at))
            b = b.defining
        raise CompileError(f"name `{name}` is not defined", self.loc(at))

    def check_free_write(self, base: ir.Var, at) -> None:
        """A nested function may not write into an array of an enclosing function (the enclosing
        function's loops and branches would not see the write)."""
        builder, root = self, base.storage or base
        while builder is not None:
            if root in builder.free_reads:
                raise MutationError(f"a nested function or lambda writes into `{base.display}` of the enclosing "
                                    "function; pass the array to it as an argument instead", self.loc(at))
            builder = builder.parent

    def inline_closure(self, fv: Closure, args: list, kwargs: dict, at, out: list):
        """Splice a nested function's body in place of its call; free names are read in the scope
        that defined it, at this point of the program."""
        if id(fv.node) in self.closures:
            raise CompileError(f"the recursive call to `{fv.display}` cannot be differentiated; write the "
                               "recursion as a loop", self.loc(at))
        src = fv.source
        node = astwalk.clone(fv.node)
        source = Source(src.func, node, src.file, src.lines, src.globals, src.closure, src.first, src.reading,
                        set(), fv.outer)
        fence.check(source)
        sub_namer = Namer(self.namer.used)
        normalized = normalize(source, sub_namer)
        own = sub_namer.used - self.namer.used
        self.namer.used |= sub_namer.used
        a = node.args
        positional = [p.id for p in a.posonlyargs + a.args]
        slots = {}
        params = []
        for i, pname in enumerate(positional):
            k = i - (len(positional) - len(fv.defaults))
            kind = inspect.Parameter.POSITIONAL_ONLY if i < len(a.posonlyargs) else \
                inspect.Parameter.POSITIONAL_OR_KEYWORD
            if k >= 0:
                slots[pname] = fv.defaults[k]
            params.append(inspect.Parameter(pname, kind, default=_DEFAULT if k >= 0 else inspect.Parameter.empty))
        for p in a.kwonlyargs:
            if p.id in fv.kw_defaults:
                slots[p.id] = fv.kw_defaults[p.id]
            params.append(inspect.Parameter(p.id, inspect.Parameter.KEYWORD_ONLY,
                                            default=_DEFAULT if p.id in fv.kw_defaults else inspect.Parameter.empty))
        try:
            bound = inspect.Signature(params).bind(*args, **kwargs)
        except TypeError as exc:
            raise CompileError(f"in the call to {fv.display}: {exc}", self.loc(at)) from None
        sub = SSABuilder(source, self.namer, normalized, own, self.inlining)
        sub.parent, sub.defining, sub.closures = self, fv.defining, self.closures | {id(fv.node)}
        sub.inlined = self.inlined
        sub.shared_updates = self.shared_updates
        sub.views, sub.view_uses = self.views, self.view_uses
        sub.lengths = self.lengths
        sub.written, sub.entered, sub.kept = self.written, self.entered, self.kept
        sub.branches = self.branches
        sub.open_loops = self.open_loops
        for p in params:
            if p.name not in bound.arguments:
                self.check_held(fv, slots[p.name], at)
            sub.env[p.name] = bound.arguments[p.name] if p.name in bound.arguments else slots[p.name]
        out.extend(sub.block(normalized.body))
        return sub.env[RETURN]

    def unusable_after_if(self, name: str, s) -> Unusable:
        what = "returns different functions (or a function and a value) on the two paths" if name == RETURN \
            else f"`{name}` is bound to different functions (or a function and a value) on the two paths"
        return Unusable(name, f"{what} of the `if` at line {s.lineno}: a function value must be known when "
                              "the code is compiled; call the function inside each branch instead")

    def without_constants(self, carried: list, assigned, before: dict) -> list:
        """The loop-carried names, less those bound to a function value or a global that the body
        does not assign (neither can change in the loop)."""
        return [n for n in carried if n in assigned or not (is_function_value(before.get(n))
                                                            or isinstance(before.get(n), ir.Global))]

    def drop_function_params(self, loop, carried: list, params: list, inits: list, s) -> dict:
        """Loop-carried names bound to a function value (before or after a trip): no loop value.
        Returns what each is bound to after the loop (the function, if the loop leaves it; else a
        value that refuses to be used). `carried`, `params`, `inits` and `loop.nexts` shrink."""
        dropped = {}
        for k in reversed(range(len(carried))):
            init, nxt = inits[k], loop.nexts[k]
            if not (is_function_value(init) or is_function_value(nxt)):
                continue
            reads = {v for t in ir.walk(loop.cond_body + loop.body) for v in ir.stmt_reads(t)}
            if params[k] in reads or params[k] is loop.cond:
                raise UnsupportedSyntaxError(f"`{carried[k]}` is bound to a function, and this loop reads it before "
                                             "rebinding it: a function value must be known when the code is "
                                             "compiled", self.loc(s))
            dropped[carried[k]] = init if nxt is init else Unusable(
                carried[k], f"`{carried[k]}` is bound to a function in the loop at line {s.lineno}; a function "
                            "made in a loop can be used only inside it")
            del carried[k], params[k], inits[k], loop.nexts[k]
        return dropped

    def reads_outside(self, node) -> set:
        inside = _loads(node)
        return {n for n, count in self.load_counts.items() if count > inside.get(n, 0)}


_DEFAULT = object()  # a parameter of a nested function that has a default


@dataclass(frozen=True)
class View:
    """A value made from `base` by `steps` (prim, other operands, keywords, callee), each a view
    operation; `sure` when it is an array view whenever `base` is an array."""

    base: ir.Var
    steps: tuple
    sure: bool


def gast_name(id_: str, store: bool = False) -> gast.Name:
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def _write_node(name: str, index, value, at, value_node=None):
    """The gast statement `name[index] = value` for IR operands `index` and `value` (the SSA builder
    reads them back through `_Operand` nodes)."""
    node = gast.Assign(targets=[gast.Subscript(value=gast_name(name), slice=_Operand(index), ctx=gast.Store())],
                       value=value_node if value_node is not None else _Operand(value), type_comment=None)
    return gast.copy_location(node, at)


class _Operand(gast.AST):
    """An IR operand standing in a gast tree the SSA builder makes for itself."""

    _fields = ()

    def __init__(self, op):
        super().__init__()
        self.op = op


def _twinned(prim) -> bool:
    """Whether `prim` is a library function the compiler differentiates as a twin of its own."""
    try:
        return registry.twin_of(prim) is not prim and registry.lookup(prim) is None
    except TypeError:  # unhashable
        return False


def _read_statically(node) -> set:
    """The names every read of which is an index by an integer literal, `len(name)`, the unpacking
    check `rt.check_unpack(name, n)`, and the sequences of loops over them (`unroll_over`)."""
    nodes = list(astwalk.walk(node))
    static_reads = set()  # (the Name nodes read so)
    for n in nodes:
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and isinstance(n.slice, gast.Constant) \
                and type(n.slice.value) is int:
            static_reads.add(id(n.value))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in ("len", UNPACKED) \
                and n.args and isinstance(n.args[0], gast.Name):
            static_reads.add(id(n.args[0]))
    reads = [n for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]
    loops = {n.unroll_over for n in nodes if getattr(n, "unroll_over", None)}
    return loops | ({n.id for n in reads if id(n) in static_reads} - {n.id for n in reads if id(n) not in static_reads})


def _loads(node) -> dict:
    counts: dict = {}
    for n in astwalk.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _stored(stmts) -> dict:
    """Names assigned in `stmts` (nested blocks included), in order of first assignment."""
    out: dict = {}
    for s in stmts:
        for n in astwalk.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out.setdefault(n.id, None)
    return out


def _updated_in_place_only(stmts) -> set:
    """Names that `stmts` (nested blocks included) assign only in augmented assignments (`x += e`)."""
    targets, stores = {}, []
    for s in stmts:
        for n in astwalk.walk(s):
            if isinstance(n, gast.Assign) and getattr(n, "in_place", False) and isinstance(n.targets[0], gast.Name):
                targets[id(n.targets[0])] = n.targets[0].id
            elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                stores.append(n)
    return set(targets.values()) - {n.id for n in stores if id(n) not in targets}


def _written(stmts) -> dict:
    """Names a block may write through (subscript stores, copyto, and, to be safe, every name passed
    to a call: an inlined function may write into its arguments). Loops drop those it did not."""
    out: dict = {}
    for s in stmts:
        for n in astwalk.walk(s):
            if isinstance(n, (gast.Assign, gast.AugAssign)):
                for t in getattr(n, "targets", None) or [n.target]:
                    if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                        out.setdefault(t.value.id, None)
            elif isinstance(n, gast.Call):
                for a in n.args:
                    if isinstance(a, gast.Name):
                        out.setdefault(a.id, None)
    return out


def _updates_in_place(stmts) -> bool:
    """Whether a block has an augmented assignment of a name (it may update a view in place)."""
    return any(getattr(n, "in_place", False) for s in stmts for n in astwalk.walk(s))


def _copyto_functions() -> tuple:
    from .buffer import copyto
    return (copyto, np.copyto)


def _makes_array(prim) -> bool:
    """Whether `prim` always makes a new ndarray (a 0-d one too), never a number or a view."""
    try:
        return prim in _ARRAY_MAKERS
    except TypeError:  # (an unhashable callee)
        return False


_ARRAY_MAKERS = frozenset({np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
                           np.full_like, np.array, np.copy, np.arange, np.linspace, np.eye, np.identity})


def _makes_buffer(prim) -> bool:
    from .buffer import Buffer
    return prim is Buffer or getattr(prim, "__self__", None) is Buffer


def _copies_buffer(prim, args) -> bool:
    """`copy.copy(b)`, `copy.deepcopy(b)`, `b.copy()` of a Buffer: an array, a copy of its data."""
    import copy

    return bool(args) and isinstance(args[0], ir.Var) and args[0].is_buffer and len(args) == 1 \
        and (prim in (copy.copy, copy.deepcopy) or prim == ir.Method("copy"))


def _exposed(stmts, assigned: set) -> set:
    """Names read in `stmts` before they are certainly assigned there (read from a previous
    iteration when `stmts` is a loop body)."""
    out: set = set()
    assigned = set(assigned)
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            out |= set(_loads(s.value)) - assigned
            assigned.add(s.targets[0].id)
        elif isinstance(s, gast.If):
            out |= set(_loads(s.test)) - assigned
            a_body, a_else = set(assigned), set(assigned)
            out |= _exposed(s.body, a_body) | _exposed(s.orelse, a_else)
            assigned |= _certain(s.body, assigned) & _certain(s.orelse, assigned)
        elif isinstance(s, gast.For):
            out |= set(_loads(s.iter)) - assigned
            out |= _exposed(s.body, assigned | {s.target.id})
        elif isinstance(s, gast.While):
            out |= _exposed(s.body, set(assigned))
        else:
            out |= set(_loads(s)) - assigned
    return out


def _certain(stmts, assigned: set) -> set:
    got = set(assigned)
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            got.add(s.targets[0].id)
        elif isinstance(s, gast.If):
            got |= _certain(s.body, got) & _certain(s.orelse, got)
    return got


_DICT_VIEWS = {"values": lambda rt: rt.dict_values_list, "items": lambda rt: rt.dict_items_list,
               "keys": lambda rt: rt.dict_keys_list}


def _getattr_global() -> ir.Global:
    """The builtin `getattr` as a callee (a new Global at each use: bind_globals may rename one)."""
    return ir.Global("getattr", getattr, getattr, ())


def _operand_kind(op):
    """The structure kind (trees.py) of an item put into a structure built in the function."""
    if isinstance(op, ir.Var):
        return op.tree if op.tree is not None else ("seq" if op.kind == "seq" else "num" if op.kind == "num" else "any")
    return "num"


def _is_slice(index) -> bool:
    return isinstance(index, ir.Struct) and index.kind == "slice" \
        or isinstance(index, ir.Const) and isinstance(index.value, slice)


def _child_kind(prim, args):
    """The kind of `getattr(obj, 'name')` or `obj[key]` for a structure `obj` of known kind."""
    if not (prim is getattr or prim is operator.getitem) or len(args) != 2:
        return None
    obj, key = args
    if not (isinstance(obj, ir.Var) and obj.tree is not None):
        return None
    if obj.tree[1] == "seq":  # a list of structures of one kind: an item by an integer index
        if prim is operator.getitem and (isinstance(key, ir.Var) and key.kind == "num" or isinstance(
                key, ir.Const) and isinstance(key.value, int) and not isinstance(key.value, bool)):
            return obj.tree[4][0]
        return None
    if not isinstance(key, ir.Const):
        return None
    key = key.value
    if obj.tree[1] == "namedtuple" and prim is operator.getitem:
        keys = obj.tree[3]
        if not (isinstance(key, int) and not isinstance(key, bool) and -len(keys) <= key < len(keys)):
            return None
        key = keys[key]
    elif (obj.tree[1] == "dict") != (prim is operator.getitem):
        return None
    return trees.child_kind(obj.tree, key)


def _identifier(value, fallback: str) -> str:
    name = getattr(value, "__name__", None)
    return name if isinstance(name, str) and name.isidentifier() else fallback


def _class_of(op):
    """The user's class of a structure operand (or of a global object), else None."""
    if isinstance(op, ir.Var):
        return op.tree[2] if op.tree is not None and op.tree[1] != "dict" else None
    if isinstance(op, ir.Global) and not isinstance(op.value, (type, types.ModuleType)) \
            and trees.record_fields(op.value) is not None:
        return type(op.value)
    return None


def _runtime_helper(func) -> bool:
    """Whether `func` is one of the compiler's own runtime helpers (which generated code calls)."""
    module = func.__module__ or ""
    return module.startswith("adjoint_compiler.") and module != "adjoint_compiler.generated"


def _user_method(value) -> bool:
    """A method of a user's class bound to an object or (a classmethod) to the class."""
    if not (isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType)):
        return False
    module = value.__func__.__module__ or ""
    return not is_library_module(module) and not module.startswith("adjoint_compiler") \
        and not frontend.is_derivative(value.__func__) and registry.lookup(value) is None \
        and registry.lookup(value.__func__) is None


class _Super(FunctionValue):
    """`super()` in a method compiled here: the class defining the method, the object, its class."""

    def __init__(self, owner: type, receiver, cls: type):
        self.owner, self.receiver, self.cls = owner, receiver, cls
        self.display = "super()"


def _nothing():
    """`object.__init__(self)` (through `super().__init__()`): does nothing."""


_OBJECT_INIT = _nothing
_MISSING_FIELD = object()


class _Object(FunctionValue):
    """An object of a user's class made in the differentiated function (`Gaussian(mu, sigma)`):
    resolved at compile time like a dict display, its fields the operands its `__init__` assigned;
    its methods and properties are inlined. (A FunctionValue for the plumbing: it is no IR value,
    and a loop or `if` that rebinds it makes it unusable after them, with a located error.)"""

    def __init__(self, cls: type):
        self.cls = cls
        self.items: dict = {}
        self.constructing = False
        self.builder, self.nesting = None, 0  # where it was made (its fields may be set in that block)
        self.built_at = None  # where a run-time object was first built from its fields
        self.display = f"the {cls.__name__} object made here"


def _paths_to(obj, value, prefix: str, depth: int = 0) -> list:
    """The field paths (`g.mu`, `outer.inner.mu`) by which an object made here holds `value`."""
    out = []
    for field, item in obj.items.items():
        if item is value:
            out.append(f"{prefix}.{field}")
        elif isinstance(item, _Object) and depth < 8:
            out += _paths_to(item, value, f"{prefix}.{field}", depth + 1)
    return out


def _made_by_init(cls: type) -> bool:
    """A user's class whose objects `make_object` can build: a Python `__init__`, the default
    `__new__`, no `__slots__`, no custom attribute hooks."""
    init = getattr(cls, "__init__", None)
    if not isinstance(init, types.FunctionType) or is_library_module(init.__module__) \
            or init.__module__.startswith("adjoint_compiler") or is_library_module(cls.__module__):
        return False
    if cls.__new__ is not object.__new__ or issubclass(cls, BaseException):
        return False
    return not any("__slots__" in k.__dict__ or "__setattr__" in k.__dict__ or "__getattr__" in k.__dict__
                   or "__getattribute__" in k.__dict__ for k in cls.__mro__[:-1])


def _rebind_held(obj, old, new, seen: set) -> None:
    """`new` in place of `old` among the fields of an object made here (and of the objects it holds)."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    for key, item in list(obj.items.items()):
        if item is old:
            obj.items[key] = new
        elif isinstance(item, _Object):
            _rebind_held(item, old, new, seen)


class _Dict:
    """A dict display: resolved statically, it never reaches the IR."""

    def __init__(self, items: dict):
        self.items = items
        self.materialized = False  # built as a run-time dict (put in a tuple or list, returned)


def _derivative_maker(prim):
    """'grad', 'joint' or 'hvp' for `grad` / `value_and_grad` / `hvp` (the entry points), else None."""
    from . import api
    if prim is api.grad:
        return "grad"
    if prim is api.value_and_grad:
        return "joint"
    from . import nesting
    if prim is nesting.hvp:
        return "hvp"
    return None


def _is_jvp(prim) -> bool:
    from . import forward_api
    return prim is forward_api.jvp


def _float_valued(value) -> bool:
    """Whether a constant carries a tangent in `jvp`: a float, or an array of floats."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f"
    return isinstance(value, (float, np.floating))


def _may_be_sequence(op) -> bool:
    """Whether `op` may hold a list or tuple at run time (a global is the value it is bound to:
    the guard compiles again when it is rebound)."""
    if isinstance(op, ir.Global):
        return isinstance(op.value, (list, tuple)) or not isinstance(op.value, (np.ndarray, np.generic, int, float,
                                                                              complex))
    return _kind(op) != "num" and not (isinstance(op, ir.Var) and op.is_buffer)  # (a Buffer is an array)


def _may_be_count(op) -> bool:
    """Whether `op` may hold an integer (a repetition count, with a list or tuple)."""
    if isinstance(op, (ir.Const, ir.Global)):
        return isinstance(op.value, (int, np.integer)) or (
            isinstance(op, ir.Global) and not isinstance(op.value, (float, complex, np.ndarray, np.floating)))
    return _kind(op) != "seq"


def _kind(op) -> str:
    if isinstance(op, ir.Var):
        return op.kind
    if isinstance(op, ir.Const):
        return "seq" if isinstance(op.value, (tuple, list)) else "num"
    if isinstance(op, ir.Global):
        return "seq" if isinstance(op.value, (tuple, list)) else "any"
    return "any"


TUPLE_RESULTS = {np.linalg.slogdet, np.linalg.eig, np.linalg.eigh, np.linalg.svd, np.linalg.qr, np.linalg.lstsq, np.divmod,
                 np.modf, np.frexp, np.nonzero, np.shape, np.histogram, np.meshgrid, np.split, np.hsplit, np.vsplit, np.dsplit,
                 np.array_split, np.unique, np.gradient, np.broadcast_arrays, divmod, tuple, list, zip, enumerate,
                 map, range}


def _defaulted(sig, bound) -> set:
    """The positions of the parameters a call bound by `bound` leaves to their defaults."""
    return {k for k, name in enumerate(sig.parameters) if name not in bound.arguments}


def _parameters(func) -> dict:
    """The parameters of `func`'s signature by name ({} if it has none Python can read)."""
    try:
        return dict(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return {}


def _copies_container(prim, args, kwargs) -> bool:
    """Whether the call is `s.copy()` of a value that is not a number or an array (a list, a dict):
    a container of the same kind, whose items are the receiver's."""
    return isinstance(prim, ir.Method) and prim.name == "copy" and len(args) == 1 and not kwargs \
        and isinstance(args[0], ir.Var) and args[0].kind != "num" and not args[0].is_buffer


def _copies_own(prim, args) -> bool:
    """Whether the call is `rt.own(x)` (a generated gradient read back): a copy of `x`, of its kind."""
    from . import runtime
    return prim is runtime.own and len(args) == 1 and isinstance(args[0], ir.Var)


def _numeric_result(prim) -> bool:
    """Whether a primitive surely returns a number or an array (not a tuple or list): its
    gradient may then be accumulated with `+`."""
    if isinstance(prim, (ir.Prim, ir.Attr)):
        return prim not in (ir.BUILD_TUPLE, ir.BUILD_LIST, ir.PLUS, ir.TIMES) and prim != ir.Attr("shape")
    if isinstance(prim, ir.Method):
        return prim.name not in ("nonzero", "tolist")
    try:
        if prim in TUPLE_RESULTS:
            return False
    except TypeError:
        return False
    module = (getattr(prim, "__module__", None) or "").split(".")[0]
    return module in ("numpy", "math", "_operator", "operator") or isinstance(prim, np.ufunc) \
        or prim in (abs, float, sum, max, min, pow, round, len, int) or runtime_facts.facts(prim).numeric


_FOLDED_TESTS = {operator.is_: 2, operator.is_not: 2, operator.not_: 1, operator.eq: 2, operator.ne: 2,
                 operator.lt: 2, operator.le: 2, operator.gt: 2, operator.ge: 2, np.ndim: 1}


def _folded_test(prim, args, kwargs):
    """`a is b`, `a == b`, `a < b`, `not a`, `np.ndim(a)` (...) on literals (None, bools, ints,
    floats, text) as a literal, or None. Only these: on such literals they cannot raise (an order
    test of text and a number is left alone) and mean the same whatever the literals."""
    if _FOLDED_TESTS.get(prim) != len(args) or kwargs or not all(isinstance(a, ir.Const) for a in args):
        return None
    values = [a.value for a in args]
    if not all(v is None or type(v) in (bool, int, float, str) for v in values):
        return None
    if prim is np.ndim:
        return ir.Const(0) if type(values[0]) in (bool, int, float) else None
    try:
        return ir.Const(bool(prim(*values)))
    except TypeError:  # (`None < 1`: left to run, and raise, as written)
        return None

def _numeric(op) -> bool:
    if isinstance(op, ir.Var):
        return op.kind == "num"
    return isinstance(op, ir.Const) and isinstance(op.value, (int, float, complex))


def _order(*envs):
    """Sort merged names by first appearance, so If outputs are in a deterministic, natural order."""
    position = {}
    for env in envs:
        for i, k in enumerate(env):
            position.setdefault(k, i)
    return lambda k: position[k]


def build(source: Source, normalized: gast.FunctionDef, namer: Namer, kinds: dict,
          track_arguments: bool = False, arrays: frozenset = frozenset()) -> ir.Function:
    """The IR of a normalized function; `kinds` maps parameter names to 'num' or 'seq'. With
    `track_arguments`, `function.arguments_after` is, per parameter, the value its argument holds
    when the function returns: the array the caller passed, as the function's writes (and in-place
    updates `x += e`) leave it, whatever names the function bound it to; `x += e` of one of the
    parameters named in `arrays` (known to hold arrays) is a write into it (`update_argument`)."""
    fn = source.node
    param_names = [a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    builder = SSABuilder(source, namer, normalized)
    params = []
    entry: list = []  # the items of a list of structures of several kinds, read on entry
    for p in param_names:
        kind = kinds.get(p, "num")
        if isinstance(kind, tuple):  # a structure (trees.py), or a class baked in
            var = builder.version(p, "seq" if kind[0] == "tree" and kind[1] in ("namedtuple", "seq") else "any")
            if kind[0] == "tree":
                var.tree = kind
            builder.env[p] = var if kind[0] == "tree" else ir.Global(namer.fresh(_identifier(kind[1], p)), kind[1],
                                                                       kind[1], ())
            if kind[0] == "tree" and kind[1] == "mixed":
                builder.env[p] = builder.mixed_items(var, source.loc(fn), entry)
        else:
            var = builder.version(p, kind)
            builder.env[p] = var
        params.append(var)
    parameters = _parameters(source.func)
    for p, var in zip(param_names, params):
        if p in parameters and mutation.lasting(parameters[p].default):
            builder.changeable_defaults.add(var)  # (named in the message refusing a write into a structure)
    if track_arguments:  # a name no user code can read, bound to the argument's array (rebound by writes)
        for p, var in zip(param_names, params):
            builder.env[ARGUMENT + p] = var
            builder.seen.add(ARGUMENT + p)  # (an `if` output for it is a fresh name, `argument_du`)
    builder.seen_arrays = frozenset(var for p, var in zip(param_names, params) if p in arrays)
    body = entry + builder.block(normalized.body)
    result = builder.env[RETURN]
    after = [builder.env[ARGUMENT + p] for p in param_names] if track_arguments else None
    # (a newer version of an argument's array exists, and its value is no loop's value after the
    # loop that wrote it in place: the name that holds it was lost; refused by `mutation`)
    lost = [p for p, v in zip(param_names, after or ()) if v in builder.written and v not in builder.kept]
    # An argument the function writes into is copied on entry: the caller's array never changes.
    from .mutation import same_arrays

    arrays = same_arrays(body)
    written = {arrays.find(s.target) for s in ir.walk(body) if isinstance(s, ir.Assign) and s.prim in ir.WRITES}
    copies = {}
    for p in params:
        if arrays.find(p) in written:
            copies[p] = ir.Var(p.name, p.kind, None, p.is_buffer, p.user, p.tree)
    if copies:
        ir.substitute(body, copies)
        for s in ir.walk(body):
            if isinstance(s, ir.Assign) and s.target is not None and s.target.storage in copies:
                s.target.storage = copies[s.target.storage]
        result = copies.get(result, result) if isinstance(result, ir.Var) else result
        after = after and [copies.get(v, v) if isinstance(v, ir.Var) else v for v in after]
        body = [ir.Assign(c, ir.OWN, [p], {}, source.loc(fn.body[0])) for p, c in copies.items()] + body
    function = ir.Function(fn.name, params, body, result, source.loc(fn))
    function.arguments_after = after
    function.lost_arguments = lost
    function.inlined = builder.inlined
    function.shared_updates = builder.shared_updates
    return function

"""The pipeline: a list of declared passes, which `compile_gradient` runs in order.

Each pass (`Pass`) names the facts of the compilation's `Context` it reads and those it
establishes, and prints its result: `compile_gradient(..., stage=NAME)` (and `python -m
adjoint_compiler show FILE:FUNC --stage NAME`) stops after the pass NAME and returns that text.

    frontend fence normalize ssa dtypes shapes floats mutation hoist cse globals rules complex
    composite activity reverse simplify copies plain needed tape peek codegen release loader

Forward mode (`mode="jvp"`) shares the passes up to `stacks`, then binds tangent rules (the
complex ones where a value may be complex), finds the values varied by the tangent inputs, and
writes the tangents (`FORWARD_PASSES`):

    ... globals stacks rules complex activity forward codegen release loader
"""
from __future__ import annotations

import builtins
import dataclasses
import inspect
import keyword
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import gast
import numpy as np

from . import (
    activity,
    astwalk,
    clamps,
    codegen,
    composite,
    contractions,
    copies,
    cse,
    dtypes,
    effects,
    fence,
    floats,
    forward,
    frontend,
    hoist,
    ir,
    loader,
    mutation,
    normalize,
    peek,
    plain,
    rtcall,
    shapes,
    ssa,
    stacks,
    tape,
)
from . import runtime as rt
from .backward import Code
from .errors import ComplexError, InternalError
from .functions import printable
from .naming import Namer
from .printing import format_backward, format_ir, to_source
from .release import release
from .reverse import reverse
from .simplify import (
    assign_stmt,
    forget_dtypes,
    forward_needed,
    kept_loads,
    loads,
    shapes_from_params,
    simplify,
)

RESERVED = {"np", "rt"} | set(dir(builtins)) | set(keyword.kwlist)


@dataclass
class Compiled:
    """A compiled gradient: its source, the loaded function and what the source was built from."""

    function: object
    source: str
    filename: str
    ir: ir.Function
    line_locs: dict = field(default_factory=dict)
    pullback: object = None  # split mode: pullback(saved, result_bar) -> gradients
    origins: dict = field(default_factory=dict)  # namespace name -> where its value was looked up
    inlined: list = field(default_factory=list)
    written: tuple = ()  # the parameters (positions) the function writes into (copied on entry)
    outputs: tuple = ()  # 'split_written': the parameters (positions) whose arrays are its outputs
    guard: object = None  # guard.Guard: what the code baked in, re-checked at each call (set by api)
    dims: tuple | None = None  # the pattern of axis lengths it holds for alone (shapes.dims_of), or None
    changed_defaults: tuple = ()  # ((position, Loc), ...): parameters whose default it changes in place


# Names the generated module binds itself (its imports) or reads as builtins: a user's global of
# that name holding anything else is renamed, so the generated code never reads the wrong object.
_TAKEN = {**vars(builtins), "np": np, "rt": rt}


def bind_globals(fn: ir.Function, namer, origins: dict | None = None) -> dict:
    """The namespace of the generated code: each global root name the IR reads, with its value.
    Two functions inlined from different modules may use one name for different objects; the
    later one is renamed (`W` -> `W_2`) so neither shadows the other. `origins` receives, for
    each name, where its value was looked up (for the on-disk cache)."""
    namespace: dict = {}
    renamed: dict = {}
    origins = {} if origins is None else origins

    def see(op):
        if isinstance(op, ir.Struct):
            for item in op.items:
                see(item)
        if not isinstance(op, ir.Global):
            return
        root, _, rest = op.path.partition(".")
        value = op.root_value
        if not op.origin and root in ("np", "rt") and _TAKEN[root] is value:
            return  # (a helper normalize calls: the generated module imports `np` and `rt` itself)
        key = (root, id(value))
        if key in renamed:
            root = renamed[key]
        elif (root in namespace and namespace[root] is not value) or _TAKEN.get(root, value) is not value:
            renamed[key] = root = namer.fresh(root)
        namespace[root] = value
        origins[root] = op.origin
        op.path = root + ("." + rest if rest else "")

    for s in ir.walk(fn.body):
        for op in ir.stmt_operands(s) + ([s.callee] if isinstance(s, ir.Assign) and s.callee else []):
            see(op)
    see(fn.result)
    return namespace


# ---------------------------------------------------------------------------------------------
# The passes
# ---------------------------------------------------------------------------------------------

@dataclass
class Context:
    """One compilation: its inputs, then each fact under the name the pass that establishes it
    declares. A fact is computed once and read by the passes after it; the context lives for one
    call of `compile_gradient` (the Compiled it returns keeps the IR and what the API needs)."""

    func: object
    wrt: tuple
    kinds: tuple  # one per parameter: 'num', 'seq', ..., 'f<ndim>' (real floats) or 'r<ndim>' for an array or scalar
    mode: str  # 'joint', 'grad' or 'split'
    dims: tuple | None = None  # the arguments' pattern of axis lengths (shapes.dims_of); shapes: None if unused
    written_out: bool = False  # 'split_written': the outputs are the arguments the function writes into
    differentiable: bool = False  # the generated code is to be differentiated again (nesting): no plain, no peek
    namer: Namer = field(default_factory=lambda: Namer(RESERVED))
    source: object = None  # frontend: the function's source, parsed, every node located
    normalized: object = None  # normalize: the gast function, one operation per statement
    fn: ir.Function | None = None  # ssa: the IR (later passes transform it in place)
    classes: dict = field(default_factory=dict)  # shapes: Var -> shape class (0 a scalar; equal: same shape)
    ndims: dict = field(default_factory=dict)  # shapes: Var -> ndim, where the argument kinds tell
    ints: set = field(default_factory=set)  # shapes: the Vars that surely hold integers
    real: dict = field(default_factory=dict)  # floats: Var -> 'f' (surely real floats) or 'r' (surely real)
    views: dict = field(default_factory=dict)  # mutation: name -> the written arrays it may share memory with
    changed_defaults: tuple = ()  # mutation: ((position, Loc), ...) of parameters whose default is changed in place
    namespace: dict = field(default_factory=dict)  # globals: what the generated module binds
    origins: dict = field(default_factory=dict)  # globals: where each bound value was looked up
    wrt_vars: list = field(default_factory=list)  # activity: the parameters differentiated
    active: set = field(default_factory=set)  # activity: the Vars that get adjoints
    backward: list = field(default_factory=list)  # reverse: Accum/Raw/BIf/BLoop/... in backward order
    names: dict = field(default_factory=dict)  # reverse: Var -> its adjoint's name
    result_bar: str | None = None  # reverse: the result's adjoint (None when inactive)
    zeros: dict = field(default_factory=dict)  # reverse: adjoint name -> its zero, where not rt.zeros_like (a slot's)
    code: list = field(default_factory=list)  # simplify, copies, tape: the backward code (Code/BIf/BLoop)
    live_in: set = field(default_factory=set)  # simplify: names the backward code reads on entry
    defined: set = field(default_factory=set)  # simplify: adjoint names defined at its end
    returned: set = field(default_factory=set)  # simplify: the adjoint names returned
    seeded: bool = False  # simplify: `grad` of a scalar result: its adjoint is the constant 1.0
    grads: list = field(default_factory=list)  # needed: the returned gradient expressions (gast)
    needed: set = field(default_factory=set)  # needed: primal names the gradient computes
    keep: set = field(default_factory=set)  # needed: the primal statements the forward pass runs
    recipes: dict = field(default_factory=dict)  # needed: stmt -> operands whose shape alone it computes
    plan: object = None  # tape: pushes and stacks (tape.Plan)
    in_place: frozenset = frozenset()  # peek: the Buffer reads that read the Buffer's array in place
    arrays: frozenset = frozenset()  # codegen: names known to hold arrays
    releasable: frozenset = frozenset()  # codegen: names release may delete after their last use
    text: str = ""  # codegen, release: the generated module
    line_locs: dict = field(default_factory=dict)  # codegen, release: generated line -> Loc
    compiled: Compiled | None = None  # loader
    tangent_code: list = field(default_factory=list)  # forward: the IR with tangent statements among its own
    tangent_params: list = field(default_factory=list)  # forward: the tangent parameters (`x_dot`)
    result_dot: object = None  # forward: the result's tangent (an operand)
    tangent_names: dict = field(default_factory=dict)  # forward: primal name -> its tangent's name


@dataclass(frozen=True)
class Pass:
    """A pass of the pipeline: `run(context)` reads the facts named in `reads` and establishes
    those in `establishes`; `show(context)` prints its result (`stage=name`)."""

    name: str
    run: Callable
    show: Callable
    reads: tuple = ()
    establishes: tuple = ()

    @property
    def summary(self) -> str:
        return (self.run.__doc__ or "").strip().splitlines()[0]


def _ir(context) -> str:
    return format_ir(context.fn)


def _backward(context) -> str:
    return format_backward(context.code, home_file=context.fn.loc.file)


def _frontend(c: Context) -> None:
    """Read the function's source (inspect + gast), every node located."""
    c.source = frontend.read_function(c.func)


def _fence(c: Context) -> None:
    """Refuse syntax the compiler does not handle, at the user's line."""
    fence.check(c.source)


def _normalize(c: Context) -> None:
    """One operation per statement; writes, comprehensions and early exits lowered."""
    c.normalized = normalize.normalize(c.source, c.namer)


def _numeric(kind) -> bool:
    """Whether an argument kind is a number or an array: 'f<ndim>', 'c<ndim>', 'r<ndim>' (a 0-d
    array's letter a capital, `api._array_kind`)."""
    return isinstance(kind, str) and len(kind) > 1 and kind[0].lower() in ("f", "c", "r") and kind[1:].isdigit()


def _ssa(c: Context) -> None:
    """Structured SSA IR: block parameters, write nodes, views, user functions inlined."""
    args = c.source.node.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    c.fn = ssa.build(c.source, c.normalized, c.namer,
                     {p: ("num" if _numeric(k) else k) for p, k in zip(params, c.kinds)},
                     track_arguments=c.written_out,
                     arrays=frozenset(p for p, k in zip(params, c.kinds) if _numeric(k) and (k[1:] != "0" or k[0].isupper())))
    if c.written_out:
        written_outputs(c.fn, c.source.node, c.namer)


def _complex_mode(c: Context) -> bool:
    """Whether complex values may be differentiated: in code not differentiated again (reverse
    and forward mode)."""
    return not c.differentiable


def _dtypes(c: Context) -> None:
    """Code differentiated again: refuse complex values, at the user's line."""
    if _complex_mode(c):
        return  # (the `complex` pass, once the rules are bound)
    for v, k in zip(c.fn.params, c.kinds):
        if _numeric(k) and k[0].lower() == "c":
            raise ComplexError(f"argument `{v.display}` is complex: complex numbers are supported by grad, "
                               "value_and_grad, vjp, jvp and jacfwd, not in a gradient differentiated again "
                               "(hessian, hvp, grad of grad)", c.fn.loc)
    dtypes.refuse_all(c.fn)


def _complex(c: Context) -> None:
    """The values that may be complex; what touches them needs a rule valid for complex operands
    (in forward mode, a tangent rule valid for them)."""
    if not _complex_mode(c):
        return
    dtypes.infer(c.fn, {v for v, k in zip(c.fn.params, c.kinds) if _numeric(k) and k[0].lower() == "c"})
    dtypes.check(c.fn, c.ndims, forward=c.mode == "jvp")


def _show_complex(c: Context) -> str:
    return format_ir(c.fn, lambda s: ", ".join([f"{v.name}: complex" for v in ir.defined_by(s) if v.complex]
                                               + (["complex rule"] if isinstance(s, ir.Assign) and s.complex else [])))


def _shapes(c: Context) -> None:
    """Shape classes and ranks, from the argument kinds; with a pattern of axis lengths
    (`c.dims`), from it too where it tells more (values of one shape, an einsum that is a matrix
    product: else the pattern is dropped: the code holds for
    every pattern, and one compilation serves them all)."""
    ranks = {v: (int(k[1:]) if _numeric(k) else None) for v, k in zip(c.fn.params, c.kinds)}
    c.classes, c.ndims = shapes.infer(c.fn, ranks, c.ints)
    ids = shapes.split_dims(c.dims, list(ranks.values())) if c.dims else None
    if ids is None:
        c.dims = None
    else:
        by_dims = shapes.infer(c.fn, ranks, None, {v: d for v, d in zip(c.fn.params, ids) if d is not None})
        if shapes.same_facts(by_dims[0], c.classes) and not contractions.products(c.fn, *by_dims):
            c.dims = None  # (the pattern tells nothing more: no shape shared, no einsum a product)
        else:
            c.classes, c.ndims = by_dims


def _floats(c: Context) -> None:
    """Which values surely hold real floats, from the argument kinds (a float array's writes need no dtype check);
    a value surely a float (a float Buffer, what is read from one, float zeros) becomes a number on the IR
    (`Var.kind`), so the passes after it (mutation, rules) see it as one."""
    c.real = floats.infer(c.fn, {v for v, k in zip(c.fn.params, c.kinds) if _numeric(k) and k[0].lower() == "f"})
    floats.apply(c.fn, c.real)


def _show_floats(c: Context) -> str:
    return format_ir(c.fn, lambda s: ", ".join(f"{v.name}: {c.real[v]}" for v in ir.defined_by(s) if v in c.real))


def _show_shapes(c: Context) -> str:
    def fact(v):
        token = c.classes.get(v)
        if isinstance(token, shapes.Dims):  # the axes by id: equal ids, equal lengths (1: length 1)
            axes = ["1" if i == shapes.ONE else i if isinstance(i, str) else f"d{i}" for i in token.ids]
            return f"{v.name}: shape ({', '.join(axes)}"\
                   f"{',' if len(token.ids) == 1 else ''})"
        return f"{v.name}: ndim {c.ndims[v]}" if v in c.ndims else None
    return format_ir(c.fn, lambda s: ", ".join(filter(None, map(fact, ir.defined_by(s)))))


def _mutation(c: Context) -> None:
    """Refuse writes whose effect the IR cannot follow; what may share memory with a written array;
    the parameters whose default the function would change in place (refused when it is used)."""
    zero_d = {v for v, k in zip(c.fn.params, c.kinds) if _numeric(k) and k[0].isupper()}
    mutation.check_shared_updates(c.fn, c.classes, zero_d)
    c.views = mutation.check(c.fn, c.ndims, zero_d)
    mutation.drop_number_checks(c.fn, c.ndims, zero_d)
    mutation.check_arguments_followed(c.fn)
    mutation.check_loop_entries(c.fn)
    c.changed_defaults = changed_defaults(c.func, c.fn)


def changed_defaults(func, fn: ir.Function) -> tuple:
    """((position, Loc), ...): the parameters whose default is an object (an array, a list, a dict)
    the function changes in place, with the first line changing it. Python changes the default
    itself, which persists between calls; the generated code changes a copy, so a call that uses
    the default is refused (`api.compiled`), one that passes the argument is not."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return ()
    changed = mutation.updated_params(fn)
    return tuple((i, changed[i]) for i, p in enumerate(params[:len(fn.params)])
                 if i in changed and p.default is not p.empty and mutation.lasting(p.default))


def _show_mutation(c: Context) -> str:
    lines = [f"# {name} may share memory with {', '.join(sorted(arrays))}"
             for name, arrays in sorted(c.views.items())]
    return "\n".join([format_ir(c.fn), ""] + lines) if lines else format_ir(c.fn)


def _hoist(c: Context) -> None:
    """Loop-invariant work out of loops (what may raise only under the loop's condition)."""
    hoist.hoist(c.fn, c.classes, c.namer)


def _cse(c: Context) -> None:
    """Identical pure statements computed once."""
    cse.eliminate(c.fn)


def _contractions(c: Context) -> None:
    """A two-operand `np.einsum` that is a matrix product in `@`'s order computed as `@`."""
    contractions.rewrite(c.fn, c.classes, c.ndims)


def _clamps(c: Context) -> None:
    """`np.where(x > c, x, c)` computed as the clamp it is (np.fmax), its rules kept."""
    clamps.rewrite(c.fn)


def _globals(c: Context) -> None:
    """The generated module's namespace: each global the IR reads (clashing names renamed)."""
    c.namespace = bind_globals(c.fn, c.namer, c.origins)  # before any code is printed: it may rename


def _show_globals(c: Context) -> str:
    return format_ir(c.fn) + "\n\n# globals: " + ", ".join(sorted(c.namespace))


def _stacks(c: Context) -> None:
    """The function's own lists grown by `append` and shrunk by `pop` are updated in place (in
    reverse mode, those used as stacks alone: their adjoints are cotangent stacks). Not in code to
    be differentiated again, which keeps the value form of its input language."""
    if not c.differentiable:
        stacks.rewrite(c.fn, reverse=c.mode != "jvp")


def _rules(c: Context) -> None:
    """Each statement bound to its adjoint rule (a float Buffer's values are numbers: the floats pass)."""
    activity.bind_rules(c.fn)


def _show_rules(c: Context) -> str:
    def note(s) -> str:
        if not (isinstance(s, ir.Assign) and s.rule):
            return ""
        return f"rule {s.prim.name}" if isinstance(s.prim, ir.Prim) else f"rule {s.rule.shown}"
    return format_ir(c.fn, note)


def _composite(c: Context) -> None:
    """Multi-statement forms (sigmoid, log-loss, log-softmax) get one adjoint (real code only)."""
    if any(v.complex for v in ir.defined_in(c.fn.body) | set(c.fn.params)):
        return  # (the composites' rules are written for real numbers)
    composite.fuse(c.fn, c.ndims)


def _show_composite(c: Context) -> str:
    return format_ir(c.fn, lambda s: s.rule.name if isinstance(s, ir.Assign) and s.rule
                     and s.rule.name.startswith("composite ") else "")


def _activity(c: Context) -> None:
    """The active values: varied by a wrt parameter and useful to the result."""
    c.wrt_vars = [c.fn.params[i] for i in c.wrt]
    c.active = activity.analyze(c.fn, c.wrt_vars)


def _show_activity(c: Context) -> str:
    return format_ir(c.fn) + "\n\n# active: " + ", ".join(sorted(v.name for v in c.active))


def _reverse(c: Context) -> None:
    """One adjoint per active statement, in reverse order, from the rules."""
    c.backward, c.names = reverse(c.fn, c.active, c.namer, c.wrt_vars, c.classes, c.ndims, c.real, c.zeros)
    c.result_bar = c.names.get(c.fn.result) if isinstance(c.fn.result, ir.Var) else None


def _show_reverse(c: Context) -> str:
    return format_backward(c.backward, c.names, c.fn.loc.file)


def _simplify(c: Context) -> None:
    """First contributions assigned, zeros only at merges, restores only where read, dead code out."""
    fn = c.fn
    shapes_from_params(c.backward, c.classes, fn.params,
                       [s.target for s in fn.body if isinstance(s, ir.Assign) and s.target], fn.body)
    forget_dtypes(c.backward, floats.float_names(fn, c.real))
    c.returned = {c.names[v] for v in c.wrt_vars if v in c.names}
    scalars = {c.names[v] for v, ndim in c.ndims.items() if ndim == 0 and v in c.names}
    c.code, c.live_in, c.defined = simplify(c.backward, c.names, {c.result_bar} if c.result_bar else set(),
                                            c.returned, c.views, c.zeros, scalars)
    # `grad` needs no value: a result known to be an active scalar is seeded with 1.0 unread
    c.seeded = c.mode == "grad" and c.result_bar is not None and c.ndims.get(fn.result) == 0
    if c.seeded:  # a constant like any other: `copies` puts it where it is read
        c.code.insert(0, Code(assign_stmt(c.result_bar, gast.Constant(value=1.0, kind=None)),
                              getattr(c.code[0], "loc", fn.loc) if c.code else fn.loc))


def _copies(c: Context) -> None:
    """Adjoints that only rename another, and numbers, go into their readers."""
    c.code = copies.propagate(c.code, set(c.names.values()), c.returned | (set() if c.seeded else {c.result_bar}))


def _plain(c: Context) -> None:
    """Helper calls whose run-time checks are settled become NumPy (`x_bar[i] += g`)."""
    c.code = plain.rewrite(c.code, plain_facts(c.fn, c.names, c.ints, c.ndims, c.real, c.classes, c.differentiable))
    c.code = copies.propagate(c.code, set(c.names.values()), c.returned | (set() if c.seeded else {c.result_bar}))


def _needed(c: Context) -> None:
    """The primal statements the gradient needs (values, or shapes alone)."""
    fn, names = c.fn, c.names
    c.grads = [_load(names[v]) if v in names and names[v] in c.defined else rtcall.call(rt.zeros_like, _load(v.name))
               for v in c.wrt_vars]
    result = set() if c.seeded else {v.name for v in ir.operand_vars(fn.result)}
    needed = set(c.live_in) | result
    # (dtype reads too: computed as they are, not rebuilt from shapes)
    values = codegen.code_names(c.code, kept_loads) | {n for g in c.grads for n in codegen.names_in(g)}
    values |= result
    shaped = needed - values  # read only for their shapes
    c.needed = needed & values
    numpy = effects.numpy_values(fn, c.ndims)
    c.keep, c.recipes = forward_needed(fn, c.needed, shaped, lambda s: floats.write_may_raise(s, c.ndims, c.real)
                                       if s.prim in ir.WRITES else effects.unused_may_raise(s, c.classes, c.ndims, numpy))


def _show_needed(c: Context) -> str:
    def note(s):
        if s not in c.keep:
            return "not computed"
        return "its shape alone" if s in c.recipes else ""
    return format_ir(c.fn, note)


def _tape(c: Context) -> None:
    """Loop values the adjoints read pushed before overwritten, popped after their adjoint."""
    c.plan, c.code = tape.plan(c.fn, c.code, c.namer, c.classes, c.keep, c.needed, c.views)


def _show_tape(c: Context) -> str:
    stacks = [f"# {name} is saved on {stack}" for name, stack in sorted(c.plan.stacks.items())]
    return "\n".join(stacks + [_backward(c)])


def _peek(c: Context) -> None:
    """Buffer reads used up before the next write into the Buffer read its array in place."""
    if c.differentiable:  # (`b.data[i]` has no adjoint rule)
        return
    read = codegen.code_names(c.code, loads) | {n for g in c.grads for n in codegen.names_in(g)}
    c.in_place = frozenset(peek.views(c.fn, read, c.ndims))


def _show_peek(c: Context) -> str:
    return format_ir(c.fn, lambda s: "read in place" if s in c.in_place else "")


def _codegen(c: Context) -> None:
    """The IR (forward) and the backward code printed as one Python module."""
    fn = c.fn
    header = (f"# Generated by adjoint_compiler: the {'vjp' if c.mode == 'split' else 'gradient'} of "
              f"{fn.name} ({os.path.basename(fn.loc.file)}:{fn.loc.line}) w.r.t. "
              f"{', '.join(v.name for v in c.wrt_vars) or 'nothing'}")
    if c.written_out and fn.written_outputs:
        outputs = ", ".join(fn.params[i].name for i in fn.written_outputs)
        header += f"; its outputs: the arguments it writes into ({outputs})"
    arrays = {v for v, ndim in c.ndims.items() if ndim}
    c.arrays = frozenset({v.name for v in arrays} | {c.names[v] for v in arrays if v in c.names})
    c.releasable = _releasable(c, c.names.get)
    c.text, c.line_locs = codegen.generate(fn, c.mode, c.result_bar, c.code, c.grads, c.keep, c.needed, header,
                                           c.plan, c.namer, c.arrays, c.seeded, c.recipes, c.in_place,
                                           [g for g, v in zip(c.grads, c.wrt_vars) if not v.complex],
                                           _array_aliases(fn) if c.mode == "split" else None)


def _array_aliases(fn: ir.Function) -> dict:
    """{name: the names of the values that may hold the same array} (`mutation.same_arrays`: a
    write's versions, loop values swapped between names, `if` outputs)."""
    arrays = mutation.same_arrays(fn.body)
    values = list(fn.params) + [v for v in ir.defined_in(fn.body)]
    classes: dict = {}
    for v in values:
        classes.setdefault(arrays.find(v), set()).add(v.name)
    return {v.name: classes[arrays.find(v)] for v in values if len(classes[arrays.find(v)]) > 1}


def _releasable(c: Context, partner) -> frozenset:
    """The names `release` may delete: every value of the function, and its adjoint or tangent
    (`partner`), but the result and the values known to be numbers or integers (nothing worth
    freeing): an array, or a value of unknown kind (a dict's item, a concatenation) that may be one."""
    values = (set(c.fn.params) | ir.defined_in(c.fn.body)) - set(ir.operand_vars(c.fn.result))
    big = [v for v in values if c.ndims.get(v) != 0 and c.classes.get(v) != 0 and v not in c.ints
           and (v.kind == "num" or v.is_buffer)]
    return frozenset({v.name for v in big} | {partner(v) for v in big}) - {None}


def _release(c: Context) -> None:
    """`del` after the last use of every array temporary."""
    lines, c.line_locs = release(c.text.split("\n")[:-1], c.line_locs, c.arrays, c.releasable)
    c.text = "\n".join(lines) + "\n"


def _loader(c: Context) -> None:
    """Compile and load the module (linecache keeps its text for tracebacks)."""
    func, mode = c.func, c.mode
    kind = "split_written" if c.written_out else mode
    filename = f"<adjoint_compiler {func.__module__}.{func.__qualname__} {kind} wrt={','.join(map(str, c.wrt))}>"
    c.compiled = finish(c.text, filename, c.namespace, c.fn.name, mode, c.line_locs, c.fn)
    c.compiled.origins = c.origins
    c.compiled.inlined = c.fn.inlined
    c.compiled.written = written_params(c.fn, c.source.node)
    c.compiled.outputs = c.fn.written_outputs if c.written_out else ()
    c.compiled.changed_defaults = c.changed_defaults


def _text(c: Context) -> str:
    return c.text


PASSES = (
    Pass("frontend", _frontend, lambda c: "".join(c.source.lines), ("func",), ("source",)),
    Pass("fence", _fence, lambda c: "".join(c.source.lines), ("source",)),
    Pass("normalize", _normalize, lambda c: to_source(printable(c.normalized)), ("source",), ("normalized",)),
    Pass("ssa", _ssa, _ir, ("source", "normalized", "kinds", "written_out"), ("fn",)),
    Pass("dtypes", _dtypes, _ir, ("fn", "kinds", "mode", "differentiable")),
    Pass("shapes", _shapes, _show_shapes, ("fn", "kinds", "dims"), ("classes", "ndims", "ints", "dims")),
    Pass("contractions", _contractions, _ir, ("fn", "classes", "ndims"), ("fn",)),
    Pass("floats", _floats, _show_floats, ("fn", "kinds"), ("real", "fn")),
    Pass("mutation", _mutation, _show_mutation, ("func", "fn", "classes", "ndims"), ("views", "changed_defaults")),
    Pass("hoist", _hoist, _ir, ("fn", "classes"), ("fn",)),
    Pass("cse", _cse, _ir, ("fn",), ("fn",)),
    Pass("clamps", _clamps, _ir, ("fn",), ("fn",)),
    Pass("globals", _globals, _show_globals, ("fn",), ("namespace", "origins")),
    Pass("stacks", _stacks, _ir, ("fn", "mode", "differentiable"), ("fn",)),
    Pass("rules", _rules, _show_rules, ("fn", "real"), ("fn",)),
    Pass("complex", _complex, _show_complex, ("fn", "kinds", "mode", "differentiable", "ndims"), ("fn",)),
    Pass("composite", _composite, _show_composite, ("fn", "ndims"), ("fn",)),
    Pass("activity", _activity, _show_activity, ("fn", "wrt"), ("wrt_vars", "active")),
    Pass("reverse", _reverse, _show_reverse, ("fn", "active", "wrt_vars", "classes", "ndims", "real"),
         ("backward", "names", "result_bar", "zeros")),
    Pass("simplify", _simplify, _backward, ("backward", "names", "result_bar", "classes", "ndims", "real", "views",
                                            "zeros", "mode"),
         ("code", "live_in", "defined", "returned", "seeded")),
    Pass("copies", _copies, _backward, ("code", "names", "returned", "seeded", "result_bar"), ("code",)),
    Pass("plain", _plain, _backward, ("fn", "code", "names", "ints", "ndims", "real", "classes", "returned",
                                      "seeded", "result_bar", "differentiable"), ("code",)),
    Pass("needed", _needed, _show_needed, ("fn", "code", "names", "defined", "live_in", "seeded", "wrt_vars",
                                           "ndims", "real"),
         ("grads", "needed", "keep", "recipes")),
    Pass("tape", _tape, _show_tape, ("fn", "code", "classes", "keep", "needed", "views"), ("plan", "code")),
    Pass("peek", _peek, _show_peek, ("fn", "code", "grads", "ndims", "differentiable"), ("in_place",)),
    Pass("codegen", _codegen, _text, ("fn", "code", "grads", "keep", "needed", "plan", "recipes", "in_place", "ndims",
                                      "names", "result_bar", "seeded", "mode", "written_out", "classes", "ints"),
         ("arrays", "releasable", "text", "line_locs")),
    Pass("release", _release, _text, ("text", "line_locs", "arrays", "releasable"), ("text", "line_locs")),
    Pass("loader", _loader, _text, ("text", "namespace", "origins", "line_locs", "fn", "source", "written_out",
                                    "changed_defaults"), ("compiled",)),
)
STAGES = tuple(p.name for p in PASSES)


# -- forward mode ------------------------------------------------------------------------------

def _tangent_rules(c: Context) -> None:
    """Each statement bound to its tangent rule."""
    forward.bind_tangents(c.fn)


def _tangent_note(s) -> str:
    return f"tangent {s.rule.shown}" if isinstance(s, ir.Assign) and s.rule and s.rule.kind == "tangent" \
        and not isinstance(s.prim, ir.Prim) else ""


def _show_tangent_rules(c: Context) -> str:
    return format_ir(c.fn, _tangent_note)


def _show_forward_complex(c: Context) -> str:
    """The IR as forward mode differentiates it: each statement's tangent rule, the values that may
    be complex, and the statements bound to a tangent rule for complex operands."""
    return format_ir(c.fn, lambda s: ", ".join(
        ([_tangent_note(s)] if _tangent_note(s) else []) + [f"{v.name}: complex" for v in ir.defined_by(s) if v.complex]
        + (["complex rule"] if isinstance(s, ir.Assign) and s.complex else [])))


def _forward_activity(c: Context) -> None:
    """The active values: varied by a tangent input and useful to the result."""
    c.wrt_vars = [c.fn.params[i] for i in c.wrt]
    c.active = forward.analyze(c.fn, c.wrt_vars)


def _forward(c: Context) -> None:
    """The tangent of each active statement right after it; tangents as loop and branch values."""
    c.tangent_code, c.tangent_params, c.result_dot, c.tangent_names, c.keep, c.needed = forward.forward(
        c.fn, c.active, c.namer, c.wrt_vars, c.classes, c.ndims, c.views, c.real)


def _show_forward(c: Context) -> str:
    shown = ir.Function(c.fn.name, c.fn.params + [ir.Var(n) for n in c.tangent_params], c.tangent_code,
                        ir.Struct("tuple", (c.fn.result, c.result_dot)), c.fn.loc)
    return format_ir(shown, lambda s: "" if s in c.keep else "not computed")


def _jvp_codegen(c: Context) -> None:
    """The IR with its tangents printed as the module of `<f>_jvp(primals, tangents)`."""
    fn = c.fn
    header = (f"# Generated by adjoint_compiler: the jvp (forward mode) of {fn.name} "
              f"({os.path.basename(fn.loc.file)}:{fn.loc.line}) w.r.t. "
              f"{', '.join(v.name for v in c.wrt_vars) or 'nothing'}")
    arrays = {v for v, ndim in c.ndims.items() if ndim}
    c.arrays = frozenset({v.name for v in arrays} | {c.tangent_names[v.name] for v in arrays
                                                     if v.name in c.tangent_names})
    c.releasable = _releasable(c, lambda v: c.tangent_names.get(v.name))
    c.text, c.line_locs = codegen.generate_jvp(fn, c.tangent_code, c.tangent_params, c.result_dot, header,
                                               c.keep, c.needed, c.arrays)


_SHARED = PASSES[:STAGES.index("stacks") + 1]
FORWARD_PASSES = _SHARED + (
    Pass("rules", _tangent_rules, _show_tangent_rules, ("fn",), ("fn",)),
    Pass("complex", _complex, _show_forward_complex, ("fn", "kinds", "mode", "differentiable", "ndims"), ("fn",)),
    Pass("activity", _forward_activity, _show_activity, ("fn", "wrt"), ("wrt_vars", "active")),
    Pass("forward", _forward, _show_forward, ("fn", "active", "wrt_vars", "classes", "ndims", "views", "real"),
         ("tangent_code", "tangent_params", "result_dot", "tangent_names", "keep", "needed")),
    Pass("codegen", _jvp_codegen, _text, ("fn", "tangent_code", "tangent_params", "result_dot", "ndims",
                                          "tangent_names", "keep", "needed", "classes", "ints"),
         ("arrays", "releasable", "text", "line_locs")),
    Pass("release", _release, _text, ("text", "line_locs", "arrays", "releasable"), ("text", "line_locs")),
    Pass("loader", _loader, _text, ("text", "namespace", "origins", "line_locs", "fn", "source",
                                    "changed_defaults"), ("compiled",)),
)
FORWARD_STAGES = tuple(p.name for p in FORWARD_PASSES)
FINAL_TEXT = "release"  # the stage whose text is the generated source (`adjoint_source`)
IR_STAGE = STAGES[STAGES.index("activity") - 1]  # `show --ir`: the IR as differentiated


def _check_declarations(passes) -> None:
    """Each pass reads only inputs and what an earlier pass established."""
    known = {"func", "wrt", "kinds", "dims", "mode", "written_out", "differentiable", "namer"}
    fields = {f.name for f in dataclasses.fields(Context)}
    for p in passes:
        missing = set(p.reads) - known
        if missing:
            raise InternalError(f"pass {p.name} reads {sorted(missing)} before any pass establishes it")
        unknown = set(p.establishes) - fields
        if unknown:
            raise InternalError(f"pass {p.name} establishes {sorted(unknown)}, which the Context does not hold")
        known |= set(p.establishes)


_check_declarations(PASSES)
_check_declarations(FORWARD_PASSES)


def compile_gradient(func, wrt: tuple, kinds: tuple, mode: str = "joint", stage: str | None = None,
                     differentiable: bool = False, dims: tuple | None = None):
    """Compile the gradient of `func` w.r.t. the positional parameters `wrt`: 'joint' (value and
    gradient), 'grad' (the gradient alone), 'split' (vjp and pullback), 'split_written' (vjp and
    pullback of a function that returns nothing: its outputs are the arguments it writes into, as
    it leaves them, one value or a tuple in parameter order; see `written_outputs`) or 'jvp'
    (forward mode: the value and its tangent, from tangents of the `wrt` parameters). With
    `stage`, stop after the pass of that name and return its printed output. With `differentiable`,
    the generated code stays in the compiler's input language (for a gradient differentiated again).
    With `dims` (shapes.dims_of of the arguments), the code may hold for that pattern of axis
    lengths alone: then the Compiled's `dims` is that pattern, else None."""
    passes = FORWARD_PASSES if mode == "jvp" else PASSES
    stages = tuple(p.name for p in passes)
    if stage is not None and stage not in stages:
        raise ValueError(f"unknown stage {stage!r}; the passes are {', '.join(stages)}")
    written_out, mode = mode == "split_written", ("split" if mode == "split_written" else mode)
    context = Context(func, tuple(wrt), tuple(kinds), mode, dims, written_out=written_out,
                      differentiable=differentiable)
    for p in passes:
        p.run(context)
        if p.name == stage:
            return p.show(context)
    context.compiled.dims = context.dims
    return context.compiled


def _load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def written_outputs(fn: ir.Function, node, namer) -> None:
    """'split_written': the result of a function that returns nothing becomes the arguments it may
    write into (`written_params`), each as the function leaves it (`ssa.build(track_arguments=True)`):
    one value, or a tuple in parameter order (None when there is none). Reading them at the end
    lets `mutation` refuse an argument that may or may not hold the array a write changes (a name
    rebound in one branch of an `if`, or in a loop that may not run). `fn.written_outputs` are the
    positions whose value is not the one they came with: the outputs the caller sees (a name
    rebound before a write, or a copy a conservative analysis made, writes nothing of theirs)."""
    positions = written_params(fn, node)
    entry = {s.target: s.args[0] for s in fn.body if isinstance(s, ir.Assign) and s.prim is ir.OWN and s.args}
    fn.written_outputs = tuple(
        i for i in positions
        if fn.arguments_after[i] is not fn.params[i] and entry.get(fn.arguments_after[i]) is not fn.params[i])
    if not positions:
        return
    values = [fn.arguments_after[i] for i in positions]
    if len(values) == 1:
        fn.result = values[0]
        return
    fn.result = ir.Var(namer.fresh("written"), "seq")
    fn.body.append(ir.Assign(fn.result, ir.BUILD_TUPLE, values, {}, fn.loc))


def plain_facts(fn: ir.Function, names: dict, ints: set, ndims: dict, real: dict, classes: dict,
                differentiable: bool = False) -> plain.Facts:
    """The names the backward code binds to integers, and the ranks and shape classes of the names
    bound to real floats (a primal value or its adjoint), for `plain`; a name bound to values
    that disagree is left out. `differentiable`: the code is to be differentiated again."""
    values = set(fn.params) | ir.defined_in(fn.body)
    int_names = {v.name for v in ints} - {v.name for v in values if v not in ints}
    facts: dict = {}
    clash: set = set()
    for v in values:
        fact = (ndims.get(v), classes.get(v)) if real.get(v) == "f" else None
        for name in (v.name, names.get(v)):
            if name is None:
                continue
            if fact is None or fact[0] is None or facts.get(name, fact) != fact:
                clash.add(name)
            facts[name] = fact
    kept = {n: f for n, f in facts.items() if n not in clash}
    return plain.Facts(int_names, {n: f[0] for n, f in kept.items()},
                       {n: f[1] for n, f in kept.items() if f[1] not in (None, 0)}, differentiable)


def written_params(fn: ir.Function, node) -> tuple:
    """The positions of the parameters the function may write into (checked for aliasing at each
    call): those ssa copies on entry (`OWN`), those whose array ssa followed through an in-place
    update (`fn.arguments_after`: `d["a"] *= c` of a dict holding it), and, conservatively, those
    that are the target of an augmented assignment (`out += u` updates `out` in place when it is
    an array)."""
    owned = {id(s.args[0]) for s in fn.body if isinstance(s, ir.Assign) and s.prim is ir.OWN and s.args}
    augmented = {n.target.id for n in astwalk.walk(node) if isinstance(n, gast.AugAssign)
                 and isinstance(n.target, gast.Name)}
    followed = getattr(fn, "arguments_after", None) or fn.params
    return tuple(i for i, p in enumerate(fn.params)
                 if id(p) in owned or p.name in augmented or followed[i] is not p)


def finish(text: str, filename: str, namespace: dict, name: str, mode: str, line_locs: dict, fn=None):
    """Load generated source (fresh or from the on-disk cache) into a Compiled."""
    module = loader.load(text, filename, namespace)
    if mode == "jvp":
        return Compiled(module[f"{name}_jvp"], text, filename, fn, line_locs)
    if not mode.startswith("split"):
        return Compiled(module[f"{name}_grad"], text, filename, fn, line_locs)
    return Compiled(module[f"{name}_vjp"], text, filename, fn, line_locs, module[f"{name}_pullback"])



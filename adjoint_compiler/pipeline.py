"""The passes, in order. `compile_gradient` runs them; `stage=` stops after any one and returns its
printed output.

    frontend -> fence -> normalize -> ssa -> shapes -> mutation -> hoist -> cse -> composite -> activity
    -> reverse -> simplify -> copies -> tape -> codegen -> release -> loader
"""
from __future__ import annotations

import builtins
import keyword
import os
from dataclasses import dataclass, field

import gast
import numpy as np

from . import runtime as rt
from . import (
    activity,
    codegen,
    composite,
    copies,
    cse,
    dtypes,
    fence,
    floats,
    frontend,
    hoist,
    ir,
    loader,
    mutation,
    normalize,
    peek,
    plain,
    shapes,
    ssa,
    tape,
)
from .naming import Namer
from .printing import format_ir, to_source
from .reverse import reverse
from .simplify import (
    Code,
    assign_stmt,
    dtype_loads,
    forget_dtypes,
    forward_needed,
    loads,
    shapes_from_params,
    simplify,
    value_loads,
)

STAGES = ("source", "normalize", "ssa", "activity", "reverse", "simplify", "tape", "codegen")
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
    guard: object = None  # guard.Guard: what the code baked in, re-checked at each call (set by api)


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


def compile_gradient(func, wrt: tuple, kinds: tuple, mode: str = "joint", stage: str | None = None):
    """Compile the gradient of `func` w.r.t. the positional parameters `wrt`: 'joint' (value and
    gradient), 'grad' (the gradient alone) or 'split' (vjp and pullback)."""
    source = frontend.read_function(func)
    if stage == "source":
        return "".join(source.lines)
    fence.check(source)
    namer = Namer(RESERVED)
    normalized = normalize.normalize(source, namer)
    if stage == "normalize":
        return to_source(normalized)
    params = [a.id for a in source.node.args.posonlyargs + source.node.args.args + source.node.args.kwonlyargs]
    fn = ssa.build(source, normalized, namer, {p: ("num" if k[0] in "rf" else k)
                                               for p, k in zip(params, kinds)})
    dtypes.check(fn)  # complex values: refused at the user's line
    ints: set = set()
    ranks, ndims = shapes.infer(fn, {v: (int(k[1:]) if k[0] in "rf" else None)
                                     for v, k in zip(fn.params, kinds)}, ints)
    real = floats.infer(fn, {v for v, k in zip(fn.params, kinds) if k[0] == "f"})
    mutation.check_shared_updates(fn, ranks)
    views = mutation.check(fn, ndims)
    hoist.hoist(fn, ranks, namer)
    cse.eliminate(fn)
    origins: dict = {}
    namespace = bind_globals(fn, namer, origins)  # before any code is printed: it may rename globals
    if stage == "ssa":
        return format_ir(fn)
    wrt_vars = [fn.params[i] for i in wrt]
    floats.apply(fn, real)
    activity.bind_rules(fn)
    composite.fuse(fn)
    active = activity.analyze(fn, wrt_vars)
    if stage == "activity":
        names = sorted(v.name for v in active)
        return format_ir(fn) + "\n\n# active: " + ", ".join(names)
    zeros: dict = {}
    backward, names = reverse(fn, active, namer, wrt_vars, ranks, ndims, real, zeros)
    result_bar = names.get(fn.result) if isinstance(fn.result, ir.Var) else None
    if stage == "reverse":
        return "\n".join(repr(s) for s in backward)
    shapes_from_params(backward, ranks, fn.params, [s.target for s in fn.body if isinstance(s, ir.Assign) and s.target],
                       fn.body)
    forget_dtypes(backward, floats.float_names(fn, real))
    returned = {names[v] for v in wrt_vars if v in names}
    scalars = {names[v] for v, ndim in ndims.items() if ndim == 0 and v in names}
    code, live_in, defined = simplify(backward, names, {result_bar} if result_bar else set(), returned, views,
                                      zeros, scalars)
    # `grad` needs no value: a result known to be an active scalar is seeded with 1.0 unread
    seeded = mode == "grad" and result_bar is not None and ndims.get(fn.result) == 0
    if seeded:  # a constant like any other: `copies` puts it where it is read
        code.insert(0, Code(assign_stmt(result_bar, gast.Constant(value=1.0, kind=None)),
                            getattr(code[0], "loc", fn.loc) if code else fn.loc))
    code = copies.propagate(code, set(names.values()), returned | (set() if seeded else {result_bar}))
    code = plain.rewrite(code, plain_facts(fn, names, ints, ndims, real, ranks))
    code = copies.propagate(code, set(names.values()), returned | (set() if seeded else {result_bar}))
    grads = [names[v] if v in names and names[v] in defined else f"rt.zeros_like({v.name})" for v in wrt_vars]
    needed = set(live_in) | (set() if seeded else {v.name for v in ir.operand_vars(fn.result)})
    values = codegen.code_names(code, value_loads) | {n for g in grads for n in codegen.names_in(g)}
    values |= codegen.code_names(code, dtype_loads)  # computed as they are, not rebuilt from shapes
    values |= set() if seeded else {v.name for v in ir.operand_vars(fn.result)}
    shaped = needed - values  # read only for their shapes
    needed &= values
    keep, recipes = forward_needed(fn, needed, shaped, lambda s: floats.write_may_raise(s, ndims, real))
    plan, code = tape.plan(fn, code, namer, ranks, keep)
    if stage == "tape":
        w = codegen.Writer(fn.loc.file, plan)
        w.backward(code, 0)
        return "\n".join(w.lines)
    if stage == "simplify":
        w = codegen.Writer(fn.loc.file)
        w.backward(code, 0)
        return "\n".join(w.lines)
    header = (f"# Generated by adjoint_compiler: the {'vjp' if mode == 'split' else 'gradient'} of "
              f"{fn.name} ({os.path.basename(fn.loc.file)}:{fn.loc.line}) w.r.t. "
              f"{', '.join(v.name for v in wrt_vars) or 'nothing'}")
    arrays = {v for v, ndim in ndims.items() if ndim}
    arrays = frozenset({v.name for v in arrays} | {names[v] for v in arrays if v in names})
    views = peek.views(fn, codegen.code_names(code, loads) | {n for g in grads for n in codegen.names_in(g)}, ndims)
    text, line_locs = codegen.generate(fn, mode, result_bar, code, grads, keep, needed, header, plan, namer,
                                       arrays, seeded, recipes, views)
    if stage == "codegen":
        return text
    filename = f"<adjoint_compiler {func.__module__}.{func.__qualname__} {mode} wrt={','.join(map(str, wrt))}>"
    compiled = finish(text, filename, namespace, fn.name, mode, line_locs, fn)
    compiled.origins = origins
    compiled.inlined = fn.inlined
    compiled.written = written_params(fn, source.node)
    return compiled


def plain_facts(fn: ir.Function, names: dict, ints: set, ndims: dict, real: dict, classes: dict) -> plain.Facts:
    """The names the backward code binds to integers, and the ranks and shape classes of the names
    bound to real floats (a primal value or its adjoint), for `plain`; a name bound to values
    that disagree is left out."""
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
                       {n: f[1] for n, f in kept.items() if f[1] not in (None, 0)})


def written_params(fn: ir.Function, node) -> tuple:
    """The positions of the parameters the function may write into (checked for aliasing at each
    call): those ssa copies on entry (`OWN`), and, conservatively, those that are the target of an
    augmented assignment (`out += u` updates `out` in place when it is an array)."""
    owned = {id(s.args[0]) for s in fn.body if isinstance(s, ir.Assign) and s.prim is ir.OWN and s.args}
    augmented = {n.target.id for n in gast.walk(node) if isinstance(n, gast.AugAssign)
                 and isinstance(n.target, gast.Name)}
    return tuple(i for i, p in enumerate(fn.params) if id(p) in owned or p.name in augmented)


def finish(text: str, filename: str, namespace: dict, name: str, mode: str, line_locs: dict, fn=None):
    """Load generated source (fresh or from the on-disk cache) into a Compiled."""
    module = loader.load(text, filename, namespace)
    if mode != "split":
        return Compiled(module[f"{name}_grad"], text, filename, fn, line_locs)
    return Compiled(module[f"{name}_vjp"], text, filename, fn, line_locs, module[f"{name}_pullback"])



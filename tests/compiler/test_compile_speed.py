"""The shortcuts that keep compilation fast change nothing it produces: `astwalk.walk` and
`astwalk.clone` are `ast.walk` and `copy.deepcopy` for syntax trees, and composite matching,
which skips values lacking a call every form needs (`composite.needed_calls`), finds the same
composites as trying every form on every value."""
import ast
import copy
import inspect
import sys
from pathlib import Path

import gast
import numpy as np
import pytest

from adjoint_compiler import astwalk, composite, registry, simplify
from adjoint_compiler import canonicalize as cz
from adjoint_compiler.pipeline import compile_gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
import test_composites as tc

TREES = [gast.parse(inspect.getsource(simplify)), ast.parse(inspect.getsource(composite)),
         gast.parse("def f(x, *a, k=1, **kw):\n    global g\n    y = [i for i in x if i]\n    return f'{y!r}'\n")]


@pytest.mark.parametrize("tree", TREES, ids=["gast", "ast", "small"])
def test_walk_is_ast_walk(tree):
    mine, theirs = list(astwalk.walk(tree)), list(ast.walk(tree))
    assert len(mine) == len(theirs)
    assert all(a is b for a, b in zip(mine, theirs))


def test_walk_reads_children_as_lazily():
    # a node's children are read before the node is yielded: a child added to a yielded node is not seen
    tree = gast.parse("a = b")
    seen = []
    for node in astwalk.walk(tree):
        seen.append(type(node).__name__)
        if isinstance(node, gast.Assign):
            node.targets.append(gast.Name(id="c", ctx=gast.Store(), annotation=None, type_comment=None))
    assert seen == [type(n).__name__ for n in ast.walk(gast.parse("a = b"))]


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.AST):
        return a is not b and list(vars(a)) == list(vars(b)) and all(_same(vars(a)[k], vars(b)[k]) for k in vars(a))
    if isinstance(a, list):
        return a is not b and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("tree", TREES, ids=["gast", "ast", "small"])
def test_clone_is_deepcopy(tree):
    assert _same(astwalk.clone(tree), copy.deepcopy(tree))
    assert ast.dump(astwalk.clone(tree)) == ast.dump(tree)


def test_clone_keeps_shared_nodes_shared_and_copies_other_values():
    shared = gast.Name(id="x", ctx=gast.Load(), annotation=None, type_comment=None)
    node = gast.BinOp(left=shared, op=gast.Add(), right=shared)
    node.extra = {"k": [1, 2]}
    new = astwalk.clone(node)
    assert new.left is new.right and new.left is not shared
    assert new.extra == node.extra and new.extra is not node.extra and new.extra["k"] is not node.extra["k"]


# -- composite matching: the needed-calls shortcut against every form on every value ---------------
FUNCTIONS = [(c[1], c[2], c[3]) for c in tc.CASES] \
    + [(f, (tc.Z, tc.C), (0,)) for f in tc.SIGMOIDS] + [(f, (tc.Z, tc.C), (0,)) for f, _ in tc.SOFTPLUS] \
    + [(f, (tc.Z, tc.C), (0,)) for f in (tc.near_sigmoid, tc.near_softplus, tc.tanh_without_halving, tc.exp_reused)] \
    + [(f, (tc.LOGITS, tc.ONE_HOT), (0,)) for f in (tc.lsm_helper, tc.lsm_methods, tc.lsm_reused,
                                                  tc.softmax_then_log, tc.softmax_squared, tc.reversed_log_softmax,
                                                  tc.shift_along_another_axis, tc.softmax_broadcast_by_cancelling)] \
    + [(f, (tc.W0, tc.X, tc.Y), (0,)) for f in (tc.eps_mean_loss, tc.eps_global_sum, tc.eps_mismatched, tc.nll_mean,
                                              tc.nll_eps_sum)]


def _fused(f, args, wrt) -> list:
    kinds = tuple(f"r{np.ndim(a)}" for a in args)
    fn = compile_gradient(f, wrt, kinds).ir
    from adjoint_compiler import ir
    return [(s.target.name, s.rule.name, sorted((k, repr(v)) for k, v in (s.bound or {}).items()))
            for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target is not None
            and getattr(s, "rule", None) is not None and s.rule.name.startswith("composite ")]


@pytest.mark.parametrize("f, args, wrt", FUNCTIONS, ids=[f.__name__ for f, _, _ in FUNCTIONS])
def test_needed_calls_shortcut_finds_what_every_form_finds(f, args, wrt, monkeypatch):
    shortcut = _fused(f, args, wrt)
    assert shortcut or f not in [c[1] for c in tc.CASES]  # (the cases do use composites)
    monkeypatch.setattr(composite, "needed_calls", lambda: frozenset())  # try every form on every value
    assert _fused(f, args, wrt) == shortcut


def test_builtin_forms_all_need_exp():
    registry.load_builtin_rules()
    assert composite.needed_calls() == {"exp"}


@pytest.mark.parametrize("f, args, wrt", FUNCTIONS[:12], ids=[f.__name__ for f, _, _ in FUNCTIONS[:12]])
def test_negation_makes_no_call(f, args, wrt):
    kinds = tuple(f"r{np.ndim(a)}" for a in args)
    view = cz.view(compile_gradient(f, wrt, kinds).ir)
    assert view.terms
    for t in view.terms.values():
        assert cz.negate(t).calls <= t.calls, t.key


class _Fresh(composite.Matcher):
    """The matcher without what it remembers to be fast: every search, remainder and part of a
    whole form made afresh (it keeps `rebuild`'s table, which the matching itself reads)."""

    def match(self, pattern, subject, env):
        return self._match(pattern, subject, env)

    def combine(self, op, parts):
        return composite._combine(op, parts)

    def without(self, op, total, part):
        return composite._without(op, total, part)

    def rebuild_whole(self, pattern, env):
        return self.rebuild(pattern, env)


def _described(env: dict) -> dict:
    return {k: (v.key, sorted(g.key for g in v.ghosts)) for k, v in env.items()}


def _pairs():
    """(form, value term) for every composite form and every value of the composites' test cases
    whose term has the form's calls (what `_first_match` tries)."""
    registry.load_builtin_rules()
    out = []
    for f, args, wrt in FUNCTIONS:
        kinds = tuple(f"r{np.ndim(a)}" for a in args)
        view = cz.view(compile_gradient(f, wrt, kinds).ir)
        for t in view.terms.values():
            for c in composite.COMPOSITES:
                for form, _ in c.forms:
                    if form.op == t.op and form.calls <= t.calls:
                        out.append((form, t))
    return out


def test_remembered_searches_and_rebuilds_find_what_fresh_ones_find():
    pairs = _pairs()
    assert len(pairs) > 50
    remembered = composite.Matcher()  # one for all, as `fuse` has one per function
    for form, t in pairs:
        fresh = _Fresh()
        ours = [env for _, env in zip(range(composite._MATCHES_TRIED), remembered.match(form, t, {}))]
        theirs = [env for _, env in zip(range(composite._MATCHES_TRIED), fresh.match(form, t, {}))]
        assert [_described(e) for e in ours] == [_described(e) for e in theirs], (form.key, t.key)
        for env in ours:
            whole, plain = composite.Matcher().rebuild_whole(form, env), cz.rebuild(form, env)
            assert whole.key == plain.key and whole.ghosts == plain.ghosts
            assert cz.shape_safe(whole) == cz.shape_safe(plain)


@pytest.mark.parametrize("f, args, wrt", FUNCTIONS, ids=[f.__name__ for f, _, _ in FUNCTIONS])
def test_remembering_matcher_fuses_what_a_fresh_one_fuses(f, args, wrt, monkeypatch):
    ours = _fused(f, args, wrt)
    monkeypatch.setattr(composite, "Matcher", _Fresh)
    assert _fused(f, args, wrt) == ours


@pytest.mark.parametrize("tree", TREES, ids=["gast", "ast", "small"])
def test_children_are_iter_child_nodes(tree):
    for node in ast.walk(tree):
        assert astwalk.children(node) == list(ast.iter_child_nodes(node))


class _ReferenceSubstitute(gast.NodeTransformer):
    """What `template._Substitute` did as a NodeTransformer."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            new = self.names[node.id]
            if isinstance(new, str):
                return gast.copy_location(gast.Name(id=new, ctx=node.ctx, annotation=None, type_comment=None), node)
            return copy.deepcopy(new)
        return node


def test_template_substitution_is_the_transformer_it_replaced():
    from adjoint_compiler import template

    registry.load_builtin_rules()
    bodies = [r.body for r in registry.RULES.values() if getattr(r, "body", None)]
    assert len(bodies) > 100
    expr = gast.parse("x_2[i] * 2.0", mode="eval").body
    for body in bodies:
        names = sorted({n.id for s in body for n in ast.walk(s) if isinstance(n, gast.Name)})
        mapping = {n: (f"{n}_renamed" if k % 2 else expr) for k, n in enumerate(names)}
        for s in body:
            theirs = _ReferenceSubstitute(mapping).visit(copy.deepcopy(s))
            for ours in (template._Substitute(mapping).visit(astwalk.clone(s)), template._Substitute(mapping).copy(s)):
                assert ast.dump(ours, include_attributes=True) == ast.dump(theirs, include_attributes=True)
                assert not set(map(id, ast.walk(ours))) & set(map(id, ast.walk(s)))  # (a copy: nothing shared)


def test_generated_text_read_as_ast_reads_what_gast_reads():
    # release reads the generated module as `ast` parses it: the same names as its gast tree
    from adjoint_compiler.simplify import load_sets

    texts = [compile_gradient(f, wrt, tuple(f"r{np.ndim(a)}" for a in args)).source for f, args, wrt in FUNCTIONS[:15]]
    checked = 0
    for text in texts:
        for g, a in zip(gast.parse(text).body, ast.parse(text).body):
            for gs, as_ in zip(getattr(g, "body", []), getattr(a, "body", [])):
                assert load_sets(gs) == load_sets(as_, ast)
                checked += 1
    assert checked > 100

"""Composite rules: an expression of several statements whose adjoint, taken whole, is simpler
than the chain rule through its parts (the sigmoid, the log-loss of a sigmoid, the log-softmax).

A composite is a template like any rule, registered with the forms it matches: Python expressions
over the template's parameters, with `where=` forms a parameter's own value must have.

    @composite("u * np.log(p) + (1 - u) * np.log(1 - p)", p=["1 / (1 + np.exp(-z))"])
    def sigmoid_log_loss(s, u, p, z):
        z_bar += rt.unbroadcast(s_bar * (u - p), z)
        u_bar += rt.unbroadcast(s_bar * z, u)

Forms are matched by meaning: a form and the statement's value are compared as canonical terms
(`canonicalize`), so `np.log1p(-p)` is `np.log(1 - p)`, `np.exp(z) / (1 + np.exp(z))` and
`0.5 * (1 + np.tanh(z / 2))` are the sigmoid, and sums and products match in any order and
grouping. A match binds each of the form's names to a term; a template parameter must be held
by a value of the function (a leaf, a number, or a value computed before the statement whose
term it is), else that form does not apply there. A match is accepted only if the form, rebuilt
from what it bound, has the statement's own term. A template that does not read its result also
matches the form's negation, with `-s_bar` for `s_bar` (`-y * np.log(p) - (1 - y) * np.log(1 - p)`).

    p = np.exp(z) / (1 + np.exp(z))        p: (1 + exp(-z))**-1     sigmoid(p, z=z)
    s = np.mean(np.logaddexp(0, -m))       s: mean(log(1 + exp(-m)))  mean_softplus_of_negated(s, m=m)

Guarantee of `fuse`: a statement whose value matches a form gets the composite as its rule, bound
to the values holding the matched terms. Only that statement's rule changes: the statements inside
the form still compute the value, keep their own rules, and pass on what they receive from any
other use; so the gradient is the chain rule's whichever of them are also used elsewhere. Calls
whose rule the user replaced are not looked through, no composite reads a value, or is matched
over a leaf, that the function writes into (the composite reads them where the form ends, not
where the parts read them), and a statement that only passes another value on (`+x`, `1.0 * x`)
keeps its own rule.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import gast

from . import astwalk, ir, registry
from . import canonicalize as cz
from .errors import RuleError
from .mutation import same_arrays
from .template import Rule, parse_template

_MATCHES_TRIED = 64  # bindings tried per form and statement before giving up


@dataclass
class Composite:
    rule: Rule
    forms: list  # [(canonical term of a form with its where-forms substituted, {where name: term})]
    negated: Rule | None = None  # the rule for the form's negation (`-y*log(p) - ...`), if it has one


def _negated(rule: Rule) -> Rule | None:
    """The template with `-s_bar` for `s_bar`: the adjoint of the negated form. None for a template
    that reads its result `s`, which is the form's value, not its negation."""
    result_bar = rule.result + "_bar"
    names = [n for s in rule.body for n in astwalk.walk(s) if isinstance(n, gast.Name)]
    if any(n.id == rule.result for n in names):
        return None

    class Negate(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == result_bar:
                return gast.UnaryOp(op=gast.USub(), operand=node)
            return node

    body = [Negate().visit(astwalk.clone(s)) for s in rule.body]
    return dataclasses.replace(rule, name=rule.name + " (negated)", body=body)


COMPOSITES: list = []


def composite(*forms: str, **where):
    """Register the decorated template as the adjoint of expressions matching one of `forms`."""
    def register(template):
        rule = parse_template(template, f"composite {template.__name__}")
        try:
            alternatives = [alt for f in forms for alt in _alternatives(cz.parse_form(f), where)]
        except ValueError as exc:
            raise RuleError(f"composite {template.__name__}: {exc}") from None
        named = {n for t, subs in alternatives for n in t.vars | subs.keys()}
        missing = set(rule.params) - named
        if missing or rule.varargs:
            raise RuleError(f"composite {template.__name__}: its forms do not name {sorted(missing)}")
        # (its unbroadcasts are written for the shape of the form's result: with every name of
        # the form a parameter, that is the broadcast of the operands it is bound to)
        rule.broadcasts_operands = named == set(rule.params)
        COMPOSITES.append(Composite(rule, alternatives, _negated(rule)))
        return template
    return register


def _alternatives(term: cz.Term, where: dict, seen=()) -> list:
    """Every way of substituting the where-forms into `term`: [(term, {name: its term})]."""
    for name in sorted(term.vars & where.keys()):
        if name in seen:
            raise ValueError(f"the where-form of `{name}` refers to itself")
        out = []
        for form in where[name]:
            for sub, inner in _alternatives(cz.parse_form(form), where, seen + (name,)):
                for rest, subs in _alternatives(cz.rebuild(term, {name: sub}), where, seen):
                    out.append((rest, {**inner, **subs, name: sub}))
        return out
    return [(term, {})]


# -- matching canonical terms ------------------------------------------------------------------------
class Matcher:
    """Matches forms against terms; remembers the forms it rebuilt from a binding."""

    def __init__(self):
        self.rebuilt: dict = {}
        self.combined: dict = {}  # (op, id of each part) -> (the parts, their combination)
        self.parts: dict = {}  # see `rebuild_whole`
        self.searches: dict = {}  # see `match`

    def combine(self, op: str, parts) -> cz.Term:
        """`_combine`, remembered: the forms of one function try the same parts again and again
        (a term is computed from its parts alone, so the same objects give the same term)."""
        key = (op,) + tuple(map(id, parts))
        hit = self.combined.get(key)
        if hit is None:
            hit = self.combined[key] = (parts, _combine(op, parts))  # (the parts kept: ids stay theirs)
        return hit[1]

    def without(self, op: str, total: cz.Term, part: cz.Term) -> cz.Term:
        """`_without`, remembered like `combine`."""
        key = (op, id(total), id(part), None)
        hit = self.combined.get(key)
        if hit is None:
            hit = self.combined[key] = ((total, part), _without(op, total, part))
        return hit[1]

    def rebuild(self, pattern: cz.Term, env: dict) -> cz.Term:
        key = (pattern.key,) + tuple(env[n].key for n in sorted(pattern.vars))
        t = self.rebuilt.get(key)
        if t is None:
            t = self.rebuilt[key] = cz.rebuild(pattern, env)
        return t

    def rebuild_whole(self, pattern: cz.Term, env: dict) -> cz.Term:
        """`rebuild` of a whole form, to compare with a statement's term: its parts rebuilt once
        for all the forms that share them (`F` and `mean(F)`), remembered by what a comparison
        reads (each part's key, the keys and ghosts of the values bound in it)."""
        key = (pattern.key,) + tuple(env[n].key for n in sorted(pattern.vars))
        t = self.rebuilt.get(key)
        if t is None:
            t = self.rebuilt[key] = self._rebuild_part(pattern, env)
        return t

    def _rebuild_part(self, t: cz.Term, env: dict) -> cz.Term:
        if not (t.vars & env.keys()):
            return t
        if t.op == "var":
            return env[t.args]
        key = (t.key,) + tuple((env[n].key, frozenset(g.key for g in env[n].ghosts)) for n in sorted(t.vars))
        hit = self.parts.get(key)
        if hit is None:
            hit = self.parts[key] = cz.rebuild(t, env, self._rebuild_part)
        return hit

    def match(self, pattern: cz.Term, subject: cz.Term, env: dict):
        """Every extension of `env` under which `pattern` may be `subject` (a generator of
        candidates, checked by the caller: sums and products are matched as multisets, and a
        sum or product binds its one remaining name to whatever is left).

        A search from nothing bound is remembered: forms share parts (`F` in `mean(F)`), so one
        part is matched against one value again; the second search replays what the first
        found and goes on from where it stopped. (What a search finds depends on the pattern's
        structure, its key, and on the subject itself, the object.)"""
        if env:
            return self._match(pattern, subject, env)
        key = (pattern.key, id(subject))
        entry = self.searches.get(key)
        if entry is None:  # [the search (None when done), what it found so far, the subject]
            entry = self.searches[key] = [self._match(pattern, subject, env), [], subject]
        return _replay(entry)

    def _match(self, pattern: cz.Term, subject: cz.Term, env: dict):
        if pattern.op == "var":
            name = pattern.args
            if name not in env:
                yield {**env, name: subject}
            elif env[name] == subject:
                yield env
            return
        if pattern.vars <= env.keys():
            if self.rebuild(pattern, env) == subject:
                yield env
            return
        if pattern.op in ("add", "mul"):
            yield from self._parts(pattern.op, list(pattern.args), subject, env)
        elif pattern.op == "pow":
            if subject.op == "pow" and subject.args[1] == pattern.args[1]:
                yield from self.match(pattern.args[0], subject.args[0], env)
        elif pattern.op == "call" and subject.op == "call":
            name, operands, params = pattern.args
            s_name, s_operands, s_params = subject.args
            if name == s_name and len(operands) == len(s_operands) \
                    and [k for k, _ in params] == [k for k, _ in s_params]:
                pairs = list(zip(operands, s_operands)) + [(v, w) for (_, v), (_, w) in zip(params, s_params)]
                yield from self._all(pairs, env)

    def _all(self, pairs: list, env: dict):
        if not pairs:
            yield env
            return
        (p, s), rest = pairs[0], pairs[1:]
        for found in self.match(p, s, env):
            yield from self._all(rest, found)

    def _parts(self, op: str, patterns: list, subject: cz.Term, env: dict):
        """Match the parts of a sum (or product) pattern against what is left of `subject`: a
        part with every name bound is taken out of it, a structured part is matched against each
        of its parts, and the last unbound name takes the rest."""
        if not patterns:
            if subject == (cz.ZERO if op == "add" else cz.ONE):
                yield env
            return
        ground = [p for p in patterns if p.vars <= env.keys()]
        if ground:
            p = ground[0]
            rest = [q for q in patterns if q is not p]
            yield from self._parts(op, rest, self.without(op, subject, self.rebuild(p, env)), env)
            return
        structured = [p for p in patterns if p.op != "var"]
        if not structured:
            if len(patterns) == 1:
                yield from self.match(patterns[0], subject, env)
            return  # two names sharing what is left: not done
        p = structured[0]
        rest = [q for q in patterns if q is not p]
        parts = list(subject.args) if subject.op == op else [subject]
        tried = set()
        for i, part in enumerate(parts):
            if part.key in tried or not p.calls <= part.calls:
                continue
            tried.add(part.key)
            others = None
            for found in self.match(p, part, env):
                if others is None:
                    others = self.combine(op, parts[:i] + parts[i + 1:])
                yield from self._parts(op, rest, others, found)


def _replay(entry: list):
    """What the remembered search `entry` found, then what it finds next (shared by every replay)."""
    found, i = entry[1], 0
    while True:
        if i < len(found):
            yield found[i]
            i += 1
        elif entry[0] is None:
            return
        else:
            try:
                found.append(next(entry[0]))
            except StopIteration:
                entry[0] = None


def match(pattern: cz.Term, subject: cz.Term, env: dict):
    """`Matcher().match`: the bindings under which `pattern` may be `subject`."""
    return Matcher().match(pattern, subject, env)


def _combine(op: str, parts) -> cz.Term:
    return cz.add(*parts) if op == "add" else cz.mul(*parts)


def _without(op: str, total: cz.Term, part: cz.Term) -> cz.Term:
    """total - part (a sum) or total / part (a product), canonical."""
    if op == "add":
        return cz.add(total, cz.mul(cz.MINUS_ONE, part))
    return cz.mul(total, cz.power(part, -1))


# -- fusing ------------------------------------------------------------------------------------------
def fuse(fn: ir.Function, ndims: dict | None = None) -> None:
    """Give each statement that matches a composite's form the composite as its rule (`ndims`:
    the shapes pass's ranks, for `canonicalize.view`)."""
    registry.load_builtin_rules()
    if not COMPOSITES:
        return
    view = cz.view(fn, ndims)
    arrays = same_arrays(fn.body)
    written = {arrays.find(s.target) for s in ir.walk(fn.body) if isinstance(s, ir.Assign)
               and s.prim in ir.WRITES and s.target is not None}

    def unwritten(ops) -> bool:
        return all(arrays.find(v) not in written for op in ops for v in ir.operand_vars(op))

    needed = needed_calls()
    matcher = Matcher()
    negations: dict = {}  # (cz.negate's memo)
    fused = []  # (statement, rule, bound): all found first, on the parts' own rules
    for s in ir.walk(fn.body):
        if not isinstance(s, ir.Assign) or s.target is None or s.prim in ir.WRITES:
            continue
        subject = view.terms.get(s.target)
        if subject is None or subject.op in ("leaf", "num", "const") or not needed <= subject.calls \
                or not cz.shape_safe(subject):
            continue
        leaves = [t.operand for t in _leaves(subject)]
        if not unwritten(leaves):
            continue
        # a statement that passes another value on (`+x`, `1.0 * x`, `-x` of the negated form) is
        # not the form's: the value it passes gets the composite (a template's unbroadcasts are
        # written for the shapes of the form's own result)
        passed = {view.term(a).key for a in s.args if isinstance(a, ir.Var)}
        if subject.key in passed:
            continue
        negated = cz.negate(subject, negations)
        for c in COMPOSITES:
            rule, bound = c.rule, _first_match(c, subject, s.target, view, matcher)
            if bound is None and c.negated is not None and negated.key not in passed:
                rule, bound = c.negated, _first_match(c, negated, s.target, view, matcher)
            if bound is not None and unwritten(bound.values()):
                fused.append((s, rule, bound))
                break
    for s, rule, bound in fused:
        s.rule = rule
        s.bound = bound


def needed_calls() -> frozenset:
    """The calls every form of every composite has (`exp`, for the built-in ones). A value whose
    term lacks one matches no form (`_first_match` tries a form only on a value with all its
    calls), nor does its negation: negating rescales a term, which makes no call it has not."""
    calls = [form.calls for c in COMPOSITES for form, _ in c.forms]
    return frozenset.intersection(*calls) if calls else frozenset()


def _leaves(t: cz.Term) -> list:
    if t.op == "leaf":
        return [t]
    return [u for c in cz.children(t) for u in _leaves(c)]


def _first_match(c: Composite, subject: cz.Term, target: ir.Var, view: cz.View, matcher: Matcher):
    for form, subs in c.forms:
        if form.op != subject.op or (form.op == "call" and form.args[0] != subject.args[0]) \
                or not form.calls <= subject.calls:
            continue
        for tried, env in enumerate(matcher.match(form, subject, {})):
            if tried >= _MATCHES_TRIED:
                break
            whole = matcher.rebuild_whole(form, env)
            if whole != subject or not cz.shape_safe(whole):
                continue
            bound = {}
            for p in c.rule.params:
                t = matcher.rebuild(subs[p], env) if p in subs else env.get(p)
                op = view.realize(t, target) if t is not None else None
                if op is None:
                    break
                bound[p] = op
            else:
                return bound
    return None

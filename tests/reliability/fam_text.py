"""Family generators for text made from differentiated values (f-strings, `%`, `str()`, `repr()`,
`format()`, `.format()`, joins, concatenation), in the spellings real code reports with.

- `reports`: the text only reaches reports (`print`, a logger, `logging.debug`, `warnings.warn`,
  an `assert` message, a `raise` in a guard that does not fire), maybe after further string
  operations, maybe steering a branch (on its sign); made in the function, in a loop, in a
  branch, in a helper (which may return the value and the message together) or in a
  comprehension. Every case must work: value and gradient equal running it and finite differences.
- `converts`: the same programs, but the text (or a number computed from it) is converted back
  to a number (`float(s)`, `np.float64(s)`, `np.array([s]).astype(float)`, ...) or returned.
  A gradient through text is not defined: the case must be refused, at compile time, with the
  located `TextGradientError` (`test_fam_text.py` checks that and `jvp` too); `float(f"{x}") * x`
  once silently differentiated as if the text were a constant.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

IMPORTS = "import logging\nimport warnings\nLOG = logging.getLogger('adjoint_compiler.fam_text')\n"

# (spelling of text made from the number `{v}`, whether `float()` reads it back)
_TEXT = [
    ('f"{{{v}}}"', True), ('f"{{{v}:.6f}}"', True), ('f"{{{v}!r}}"', False), ('"%f" % ({v})', True),
    ('"%.8g" % ({v},)', True), ("str({v})", True), ("repr({v})", False), ('format({v}, ".7e")', True),
    ('"{{}}".format({v})', True), ('"{{:.5f}}".format({v})', True), ('"value " + str({v})', False),
    ('str({v}).upper()', True), ('"=".join([str({v}), repr({v})])', False), ('("%s" % ({v})).strip()', True),
    ('"" + f"{{{v}:.4e}}"', True),
]
_ELEMENT = ["np.sin({e}) * {e}", "{e} * {e} + 1.0", "np.tanh({e}) * 2.0", "np.exp({e}) - {e}", "{e} ** 3"]
_SINKS = ["print({s})", "LOG.info({s})", 'logging.debug("%s", {s})', "LOG.debug({s} + '!')",
          "warnings.warn({s})", "assert acc == acc, {s}", "if acc > 1e9:\n{ind}    raise ValueError({s})",
          'print("step", {s}, sep=": ")']
_CONVERT = ["float({s})", "np.float64({s})", "np.array([{s}]).astype(float)[0]", "float({s}.strip())",
            "float({s}) + 0.0"]


def _arr(ch, n, lo=-1.5, hi=1.5):
    return np.array([ch.float(lo, hi) for _ in range(n)])


def _spelling(ch, parsable: bool) -> str:
    return ch.choice([t for t, p in _TEXT if p or not parsable])


def _program(ch, convert: bool) -> tuple:
    """(source, args): a loss over x built in a loop, text made from its values somewhere."""
    n = ch.int(1, 3)
    element = ch.choice(_ELEMENT).format(e="x[i]")
    place = ch.choice(["loop", "after", "branch", "helper", "pair_helper", "comprehension"])
    spelling = _spelling(ch, parsable=convert)
    helpers, body, tail = [], [], []
    body += ["    acc = 0.0", f"    for i in range({n}):", f"        acc = acc + {element}"]
    if place == "loop":
        body.append(f"        s = {spelling.format(v='acc')}")
        where = "        "
    elif place == "after":
        body.append(f"    s = {spelling.format(v='acc * 2.0')}")
        where = "    "
    elif place == "branch":
        body += ["    if acc > 0.0:", f"        s = {spelling.format(v='acc')}", "    else:",
                 f"        s = {spelling.format(v='-acc')}"]
        where = "    "
    elif place == "helper":
        helpers += ["def describe(v):", f"    return {spelling.format(v='v')}", ""]
        body.append("    s = describe(acc + x[0])")
        where = "    "
    elif place == "pair_helper":
        helpers += ["def step(v):", "    w = v * v", f"    return w, {spelling.format(v='w')}", ""]
        body += ["    w, s = step(acc)", "    acc = acc + w"]
        where = "    "
    else:  # a comprehension over the values, joined (parsable: only the first item is read back)
        item = spelling.format(v="t")
        body.append(f"    s = \",\".join([{item} for t in x]).split(\",\")[0]" if convert else
                    f"    s = \"; \".join({item} for t in x * acc)")
        where = "    "
    if not convert:
        for _ in range(ch.int(1, 2)):
            body.append(where + ch.choice(_SINKS).format(s="s", ind=where))
        if ch.coin(0.4):  # a branch on text (its sign: away from zero, finite differences agree)
            sign = ch.choice(['f"{acc:.3f}"', "str(acc)", '"%+.2f" % acc'])
            body += [f"    t = {sign}", '    if t.startswith("-"):', "        acc = acc * 1.5"]
        tail.append(f"    return acc * {ch.choice(['1.0', 'x[0]', 'np.sum(x)'])}")
    else:
        how = ch.choice(["convert", "convert", "convert", "returns", "length"])
        if how == "convert":
            back = ch.choice(_CONVERT).format(s="s")
            if where.strip() == "" and len(where) == 8 and ch.coin(0.5):  # inside the loop
                body.append(f"{where}acc = acc + {back} * x[i]")
                tail.append("    return acc")
            else:
                tail.append(f"    return acc * {back}")
        elif how == "returns":
            tail.append(ch.choice(["    return acc, s", "    return s", "    return [acc, s]"]))
        else:
            tail.append("    return acc * len(s)")
    source = IMPORTS + "\n" + "\n".join(helpers) + "\ndef f(x):\n" + "\n".join(body + tail) + "\n"
    return source, [_arr(ch, n)]


@family("text")
def reports(ch) -> Case:
    source, args = _program(ch, convert=False)
    return Case(source, args, must_work=True)


@family("text")
def converts(ch) -> Case:
    source, args = _program(ch, convert=True)
    return Case(source, args)

"""Adversarial programs for the entry points, constructors, dtypes, complex values and the NumPy
API's call forms (issue 12), and programs whose baked-in values change between calls.

Each program of `adversarial_api_cases.py` is run through one of `grad`, `value_and_grad` and
`vjp` (in turn, to keep the module fast) and must either give the value of running it and the
gradient of central finite differences, leaving its arguments unchanged, or (the ones listed in
`REFUSED`) raise an `AdjointCompilerError` that names its line in the cases file. The scenarios
below change what a compiled gradient read (globals, attributes, decorators, `functools.partial`,
rules, the on-disk cache shared by two processes) and check the next gradient against finite
differences of the program as it is then.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import types
import uuid

import numpy as np
import pytest

import adversarial_api_cases as cases
from adjoint_compiler import AdjointCompilerError, RuleError, adjoint, grad, value_and_grad, vjp

CASES_FILE = os.path.abspath(cases.__file__)


def _copy(a):
    if isinstance(a, np.ndarray):
        return a.copy(order="K")
    if isinstance(a, (list, tuple)):
        return type(a)(_copy(x) for x in a)
    return a


def _shifted(args, i, j, t):
    a = [_copy(x) for x in args]
    x = args[i]
    if isinstance(x, np.ndarray):
        y = x.astype(np.float64) if x.dtype.kind != "f" else x.copy()
        y[j] = y[j] + t
        a[i] = y.astype(x.dtype) if x.dtype.kind == "f" else y
    else:
        a[i] = type(x)(float(x) + t) if isinstance(x, np.floating) else float(x) + t
    return a


def central(f, args, i, eps=1e-6, ct=None):
    """Central differences of sum(f(*args) * ct) (ct=1 when None) w.r.t. argument i."""
    def scalar(a):
        out = np.asarray(f(*a), dtype=float)
        return float(np.sum(out if ct is None else out * ct))
    shape = np.shape(args[i])
    g = np.zeros(shape)
    for j in np.ndindex(shape):
        g[j] = (scalar(_shifted(args, i, j, eps)) - scalar(_shifted(args, i, j, -eps))) / (2 * eps)
    return g if isinstance(args[i], np.ndarray) else float(g)


def close(a, b, rtol=1e-5):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    atol = max(rtol / 10, 1e-6) * max(1.0, float(np.abs(b).max(initial=0)))
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * np.abs(b) + atol))


def run_case(f, args, wrt=0, eps=1e-6, rtol=1e-5, mode="grad"):
    """Raise AssertionError unless `mode` gives the right value and gradient; return the
    AdjointCompilerError raised instead, if any."""
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    n = len(args)
    expected = f(*[_copy(a) for a in args])
    before = [_copy(a) for a in args]
    ct = None
    try:
        if mode == "grad":
            value, g = None, grad(f, wrt)(*args)
        elif mode == "value_and_grad":
            value, g = value_and_grad(f, wrt)(*args)
        else:
            value, pullback = vjp(f, *args)
            ct = 0.7 * np.ones(np.shape(value))
            grads = pullback(ct if np.ndim(value) else 0.7)
            g = tuple(grads[i % n] for i in wrts) if isinstance(wrt, tuple) else grads[wrt % n]
    except AdjointCompilerError as exc:
        return exc
    for k, (b, a) in enumerate(zip(before, args)):
        if isinstance(b, np.ndarray):
            assert np.array_equal(a, b), f"{mode}: argument {k} changed"
    if value is not None:
        assert np.shape(value) == np.shape(expected) and close(value, expected, 1e-9), \
            f"{mode}: value {value!r}, running the function gives {expected!r}"
    for gi, i in zip(g if isinstance(wrt, tuple) else (g,), wrts):
        want = central(f, args, i % n, eps, ct)
        if isinstance(args[i % n], np.ndarray):
            assert isinstance(gi, np.ndarray) and gi.shape == args[i % n].shape, f"{mode}: gradient {gi!r}"
        assert close(gi, want, rtol), f"{mode}: gradient {gi!r}, finite differences {want!r}"
    return None


MODES = ("grad", "value_and_grad", "vjp")


@pytest.mark.parametrize("k", range(len(cases.CASES)), ids=[c[0].__name__ for c in cases.CASES])
def test_program(k):
    f, args, wrt, eps, rtol = cases.CASES[k]
    refused = run_case(f, args, wrt, eps, rtol, MODES[k % 3])
    if f.__name__ in cases.REFUSED:
        assert refused is not None, f"{f.__name__} is expected to be refused"
        where = getattr(refused, "loc", None)
        text = str(refused)
        assert (where is not None and os.path.abspath(where.file) == CASES_FILE) or CASES_FILE in text \
            or os.path.basename(CASES_FILE) in text, f"the refusal does not name the user's line: {text}"
    else:
        assert refused is None, f"{type(refused).__name__}: {refused}"


# -- scenarios: what a compiled gradient read changes between calls --------------------------------
V = np.array([0.3, -1.2, 0.8])


@pytest.fixture
def load(tmp_path):
    """load(source) -> a module imported from a real file (so its source can be read)."""
    names = []

    def load(source: str):
        name = f"adv_{uuid.uuid4().hex[:10]}"
        path = tmp_path / f"{name}.py"
        path.write_text("import functools\nimport numpy as np\n" + textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        names.append(name)
        return mod
    yield load
    for name in names:
        sys.modules.pop(name, None)


def right(f, args, wrt=0):
    for mode in MODES:
        refused = run_case(f, args, wrt, mode=mode)
        assert refused is None, f"{type(refused).__name__}: {refused}"


def test_a_global_named_np_that_is_not_numpy(load):
    """The generated module imports numpy as `np`: a user's `np` bound to another object is renamed
    in the generated code, never shadowed (the forward ran the real np.sin while the rule was cos's)."""
    m = load("def f(x): return np.sum(np.sin(x))\n")
    right(m.f, [V])
    fake = types.ModuleType("fake")
    fake.sin, fake.sum = np.cos, np.sum
    m.np = fake
    right(m.f, [V])


def test_names_of_the_generated_code_as_user_names(load):
    m = load("""
    rt = 3.0
    len = 2.0
    def f(x):
        return np.sum(x * rt) * len
    def g(x):
        rt = x * 2
        float = rt + 1.0
        return np.sum(rt ** 2 * float)
    def h(rt, np_2=2.0):
        return np.sum(rt ** 2 * np_2)
    """)
    right(m.f, [V])
    right(m.g, [V])
    right(m.h, [V])


def test_functools_partial_is_the_function_it_wraps(load):
    m = load("""
    def f(x, k): return np.sum(np.sin(x * k))
    def g(k, x, c=1.0): return np.sum(np.sin(x * k)) * c
    """)
    right(functools.partial(m.f, k=2.0), [V])
    right(functools.partial(m.g, 2.0, c=3.0), [V])
    right(functools.partial(m.g, c=3.0), [0.5, V], wrt=(0, 1))
    right(functools.partial(functools.partial(m.g, c=3.0), 0.7), [V])
    p = functools.partial(m.f, k=2.0)
    np.testing.assert_allclose(grad(p)(V, k=3.0), 3.0 * np.cos(3.0 * V))  # a keyword given again wins
    np.testing.assert_allclose(grad(p, wrt=1)(V, k=3.0), np.sum(V * np.cos(3.0 * V)))
    with pytest.raises(IndexError):
        grad(p, wrt=2)(V)


def test_a_rule_template_reading_a_global_is_refused_when_registered(load):
    """The generated code has no name but `np`, `rt` and the builtins for a rule (it raised
    NameError, or read a same-named global of the differentiated function's module)."""
    m = load("""
    FAC = 2.0
    def scaled(x): return x * FAC
    """)
    with pytest.raises(RuleError, match="FAC"):
        @adjoint(m.scaled)
        def _(y, x):
            x_bar += y_bar * FAC  # noqa: F821
    with pytest.raises(RuleError, match="comprehensions"):
        @adjoint(m.scaled)
        def _(y, x):
            x_bar += y_bar * sum([1.0 for _ in range(2)])


def test_values_read_through_globals_change_between_calls(load):
    m = load("""
    import dataclasses
    @dataclasses.dataclass
    class C:
        lr: float = 0.5
        n: int = 2
    cfg = C()
    W = np.array([1.0, 2.0, 3.0])
    IDX = np.array([0, 1, 2])
    CFG = {'opt': {'lr': 0.5}}
    def f(x):
        s = np.sum(W * x[IDX] ** 2)
        for i in range(cfg.n):
            s = s + np.sum(np.sin(x * cfg.lr * CFG['opt']['lr']))
        return s
    """)
    right(m.f, [V])
    m.W[:] = [5.0, -1.0, 2.0]
    m.IDX[:] = [2, 2, 0]
    right(m.f, [V])
    m.cfg.lr, m.cfg.n = 3.0, 0
    m.CFG["opt"]["lr"] = 2.0
    right(m.f, [V])
    m.cfg = m.C(lr=-1.0, n=3)
    right(m.f, [V])


def test_decorators_and_defaults(load):
    m = load("""
    def negated(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return -fn(*args, **kwargs)
        return wrapper
    def twice(fn):
        def wrapper(x):
            return 2 * fn(x)
        return wrapper
    @negated
    @twice
    def f(v, k=2.0): return np.sum(np.sin(v * k))
    """)
    right(m.f, [V])
    m.f.__wrapped__.__defaults__ = (5.0,)
    right(m.f, [V])


_RUNNER = r'''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import adv_shared as mod
from adjoint_compiler import grad, vjp
g = grad(mod.f)(np.array([0.3, -1.2, 0.8]))
out, pullback = vjp(mod.f, np.array([0.3, -1.2, 0.8]))
print(json.dumps([g.tolist(), pullback(1.0)[0].tolist()]))
'''


def test_two_processes_share_the_disk_cache(tmp_path):
    """A second process reads the first one's entry only where what it baked in is the same: a
    `functools.partial`, an edited global and helper are seen (the partial crashed in the cache key)."""
    src = ("import functools\nimport numpy as np\nSCALE = {s}\ndef h(x): return x ** {p}\n"
           "def g(x, k): return np.sum(np.sin(h(x) * k * SCALE))\nf = functools.partial(g, k=2.0)\n")
    env = dict(os.environ, ADJOINT_COMPILER_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(sys.path))
    x = V
    for s, p in ((2.0, 2), (2.0, 2), (5.0, 3)):
        (tmp_path / "adv_shared.py").write_text(src.format(s=s, p=p))
        out = subprocess.run([sys.executable, "-c", _RUNNER, str(tmp_path)], env=env, capture_output=True,
                             text=True, check=True).stdout
        g, pulled = json.loads(out.strip().splitlines()[-1])
        want = np.cos(x ** p * 2.0 * s) * p * x ** (p - 1) * 2.0 * s
        np.testing.assert_allclose(g, want, rtol=1e-10)
        np.testing.assert_allclose(pulled, want, rtol=1e-10)


def _sq(x): return np.sum(x ** 2)
def _vec(x): return x ** 2
def _pair(x, y): return np.sum(x * y)
def _flag(x): return x[0] > 0


@pytest.mark.parametrize("call", [
    lambda: grad(_vec)(V),                      # not a scalar: use vjp
    lambda: grad(_flag)(V),
    lambda: grad(_pair, wrt=2)(V, V),
    lambda: grad(_pair, wrt=-3)(V, V),
    lambda: grad(_pair, wrt="x"),
    lambda: grad(_pair)(V),                     # a missing argument
    lambda: grad(_pair)(V, V, V),
    lambda: grad(None)(V),
    lambda: grad(_sq)(np.matrix([[1.0, 2.0]])),  # `*` would be a matrix product
    lambda: vjp(_pair, V, np.ma.masked_array(V, [0, 1, 0])),
], ids=["vector", "bool", "wrt", "negative_wrt", "wrt_str", "missing", "extra", "none", "matrix", "masked"])
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_misuse_of_the_entry_points_raises_our_errors(call):
    """A raw TypeError, IndexError or a broadcasting error from generated code was raised here."""
    with pytest.raises(AdjointCompilerError):
        call()


def test_wrt_holds_numpy_integers():
    g = grad(_pair, wrt=(np.int64(0), np.int32(1)))(V, 2 * V)
    np.testing.assert_allclose(g[0], 2 * V)
    np.testing.assert_allclose(g[1], V)

"""Family 5 of issue 12: a compiled gradient never runs stale code.

Whatever the compiled code baked in (module globals, closure cells, attributes read through them,
defaults, the code of the function and of every inlined helper, the user rules) takes effect at
the next call when it changes: the guard sees it and the gradient is compiled again. Decorators
are differentiated as the wrapper the user wrote. Every gradient is checked against central
finite differences of the program as it is at that moment.
"""
from __future__ import annotations

import importlib.util
import sys
import textwrap
import uuid

import numpy as np
import pytest

from adjoint_compiler import UnsupportedSyntaxError, adjoint, grad, nondifferentiable, value_and_grad, vjp
from adjoint_compiler.testing import check_grads

V = np.array([0.3, -1.2, 0.8])


@pytest.fixture
def load(tmp_path):
    """load(source) -> a module imported from a real file (so its source can be read)."""
    loaded = []

    def load(source: str, name: str | None = None):
        name = name or f"m_{uuid.uuid4().hex[:10]}"
        path = tmp_path / f"{name}.py"
        path.write_text("import numpy as np\n" + textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        loaded.append(name)
        return mod
    yield load
    for name in loaded:
        sys.modules.pop(name, None)


def _central(f, args, wrt, eps=1e-6):
    x = np.asarray(args[wrt], dtype=float)
    g = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        for sign in (1, -1):
            xx = x.copy()
            xx[k] += sign * eps
            a = list(args)
            a[wrt] = xx if isinstance(args[wrt], np.ndarray) else float(xx)
            g[k] += sign * float(np.sum(f(*a))) / (2 * eps)
    return g if isinstance(args[wrt], np.ndarray) else float(g)


def agrees(f, *args, wrt=0):
    g = grad(f, wrt)(*args)
    np.testing.assert_allclose(g, _central(f, args, wrt), rtol=1e-5, atol=1e-6)
    return g


# -- module globals ----------------------------------------------------------------------------
def test_rebound_global_takes_effect_for_the_same_and_a_fresh_gradient(load):
    m = load("""
        SCALE = 2.0
        def f(x):
            return np.sum(np.sin(x) * SCALE)
    """)
    g = grad(m.f)
    np.testing.assert_allclose(g(V), 2.0 * np.cos(V))
    m.SCALE = 5.0
    np.testing.assert_allclose(g(V), 5.0 * np.cos(V))
    agrees(m.f, V)


def test_hyperparameter_sweep_in_a_loop(load):
    m = load("""
        LR = 0.1
        def helper(x):
            return x * LR
        def loss(x):
            return np.sum(helper(x) ** 2)
    """)
    for lr in (0.5, 1.5, -2.0, 3.25):
        m.LR = lr
        np.testing.assert_allclose(value_and_grad(m.loss)(V)[1], 2 * lr * lr * V)
        agrees(m.loss, V)


def test_loop_bound_and_branch_flag_in_globals(load):
    m = load("""
        N = 2
        FLAG = True
        def f(x):
            s = 0.0
            for i in range(N):
                s = s + np.sum(x ** 2) * (i + 1)
            if FLAG:
                s = s * 3.0
            else:
                s = s - np.sum(x)
            return s
    """)
    agrees(m.f, V)
    m.N = 4
    agrees(m.f, V)
    m.FLAG = False
    agrees(m.f, V)


def test_global_shadowing_a_builtin_and_a_global_list_changed_in_place(load):
    m = load("""
        WEIGHTS = [1.0, 2.0]
        def f(x):
            s = 0.0
            for w in WEIGHTS:
                s = s + w * np.sum(abs(x) ** 3)
            return s
    """)
    agrees(m.f, V)
    m.WEIGHTS.append(4.0)  # same list object, new contents
    agrees(m.f, V)
    m.WEIGHTS[0] = -3.0
    agrees(m.f, V)
    m.abs = np.square  # a module global now shadows the builtin `abs`
    agrees(m.f, V)


def test_attribute_of_a_global_object_and_of_a_user_module(load):
    helpers = load("""
        FACTOR = 2.0
        def scale(x):
            return x * FACTOR
    """)
    m = load(f"""
        import types
        import {helpers.__name__} as helpers
        cfg = types.SimpleNamespace(power=2.0)
        def f(x):
            return np.sum(helpers.scale(x) ** cfg.power)
    """)
    agrees(m.f, np.abs(V) + 0.5)
    m.cfg.power = 3.0
    agrees(m.f, np.abs(V) + 0.5)
    helpers.FACTOR = -1.5
    agrees(m.f, np.abs(V) + 0.5)
    helpers.scale = lambda x: x  # rebinding the module attribute to something else entirely (a lambda)
    agrees(m.f, np.abs(V) + 0.5)



def test_methods_of_a_global_object_inlined_then_the_object_changed(load):
    """A method of a module-level object is inlined; whatever it read through `self` (a field, a
    function or object held in a field, a staticmethod, the method itself, the object's class)
    is re-checked, and the value of `value_and_grad` is the changed program's too."""
    m = load("""
        class Scale:
            def __init__(self, w):
                self.w = w
            def __call__(self, x):
                return x * self.w
        class Wave:
            def __call__(self, x):
                return np.sin(x)
        class Net:
            act = staticmethod(np.tanh)
            def __init__(self):
                self.op = np.cos
                self.layer = Scale(2.0)
            def forward(self, x):
                return np.sum(self.act(x) + self.op(x) + self.layer(x) ** 2)
        class Other(Net):
            def forward(self, x):
                return np.sum(x ** 3)
        net = Net()
        def f(x):
            return net.forward(x)
    """)
    x = np.abs(V) + 0.5
    agrees(m.f, x)
    for change in (lambda: setattr(m.net, "op", np.sin), lambda: setattr(m.net.layer, "w", -0.5),
                   lambda: setattr(m.net, "layer", m.Wave()), lambda: setattr(m.Net, "act", staticmethod(np.exp)),
                   lambda: setattr(m.net, "forward", lambda x: np.sum(x * 4.0)),
                   lambda: setattr(m.net, "__class__", m.Other)):
        change()
        agrees(m.f, x)
        value, _ = value_and_grad(m.f)(x)
        assert value == m.f(x)

# -- helpers and their code --------------------------------------------------------------------
def test_helper_redefined_as_in_a_notebook(load, tmp_path):
    m = load("""
        def helper(x):
            return x ** 2
        def f(x):
            return np.sum(helper(x) * 3.0)
    """)
    g = grad(m.f)
    np.testing.assert_allclose(g(V), 6.0 * V)
    cell = tmp_path / "cell_2.py"  # a notebook cell: new source, run in the module's namespace
    cell.write_text("import numpy as np\ndef helper(x):\n    return np.sin(x)\n")
    exec(compile(cell.read_text(), str(cell), "exec"), vars(m))  # noqa: S102 -- what a notebook does
    np.testing.assert_allclose(g(V), 3.0 * np.cos(V))
    agrees(m.f, V)


def test_code_of_an_inlined_helper_replaced(load):
    m = load("""
        def helper(x):
            return x ** 2
        def other(x):
            return x ** 3
        def f(x):
            return np.sum(helper(x))
    """)
    agrees(m.f, V)
    m.helper.__code__ = m.other.__code__
    np.testing.assert_allclose(grad(m.f)(V), 3 * V ** 2)


def test_changed_defaults_of_the_function_and_of_an_inlined_helper(load):
    m = load("""
        def helper(x, k=2.0, *, p=2):
            return x * k + x ** p
        def f(x, c=1.0):
            return np.sum(helper(x) * c)
        def g(x):
            return np.sum(helper(x, p=3))
    """)
    agrees(m.f, V)
    m.helper.__defaults__ = (-4.0,)
    agrees(m.f, V)
    np.testing.assert_allclose(grad(m.f)(V), -4.0 + 2 * V)
    m.helper.__kwdefaults__["p"] = 3  # the same dict, changed in place
    np.testing.assert_allclose(grad(m.f)(V), -4.0 + 3 * V ** 2)
    m.f.__defaults__ = (2.0,)
    np.testing.assert_allclose(grad(m.f)(V), 2 * (-4.0 + 3 * V ** 2))
    agrees(m.g, V)


# -- closures ----------------------------------------------------------------------------------
def test_closure_rebuilt_and_closure_cell_changed(load):
    m = load("""
        def make(scale):
            def f(x):
                return np.sum(np.sin(x) * scale)
            return f
        def make_pair(scale):
            def f(x):
                return np.sum(x ** 2) * scale
            def set_scale(s):
                nonlocal scale
                scale = s
            return f, set_scale
        def make_caller(scale):
            def helper(x):
                return x * scale
            def f(x):
                return np.sum(helper(x) ** 2)
            return f
    """)
    for s in (1.0, -2.0, 4.0):
        agrees(m.make(s), V)
        agrees(m.make_caller(s), V)
    f, set_scale = m.make_pair(2.0)
    g = grad(f)
    np.testing.assert_allclose(g(V), 4.0 * V)
    set_scale(-1.0)
    np.testing.assert_allclose(g(V), -2.0 * V)


# -- rules -------------------------------------------------------------------------------------
def test_rule_registered_again_takes_effect_at_the_next_call(load):
    m = load("""
        def opaque(x):
            return np.cos(x) * 0.0 + np.sin(x)   # its rule below is what gets differentiated
        def f(x):
            return np.sum(opaque(x) * 2.0)
    """)
    g = grad(m.f)
    np.testing.assert_allclose(g(V), 2 * np.cos(V))  # compiled through the source

    @adjoint(m.opaque)
    def _(y, x):
        x_bar += y_bar * 3.0  # noqa: F821, F841 -- a rule template

    np.testing.assert_allclose(g(V), 6.0 * np.ones(3))

    @adjoint(m.opaque)
    def _(y, x):  # registered again with another body
        x_bar += y_bar * np.cos(x)  # noqa: F821, F841

    np.testing.assert_allclose(g(V), 2 * np.cos(V))
    nondifferentiable(m.opaque)
    np.testing.assert_allclose(g(V), np.zeros(3))
    _, pullback = vjp(m.f, V)
    np.testing.assert_allclose(pullback(1.0)[0], np.zeros(3))


# -- decorators --------------------------------------------------------------------------------
DECORATORS = """
    import functools

    def negated(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return -func(*args, **kwargs)
        return wrapper

    def shifted(func):
        @functools.wraps(func)
        def inner(*a):
            y = func(*a)
            return 2.0 * y + np.sum(y) ** 2
        return inner

    def unwrapped(func):
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs) * 3.0
        return wrapper

    def peeking(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs) + args[0][0]
        return wrapper
"""


def test_functools_wraps_decorator_is_differentiated_as_the_wrapper(load):
    m = load(DECORATORS + """
    @negated
    def f(v):
        return np.sum(v ** 2)

    @shifted
    def g(v, w=1.5):
        return np.sum(np.sin(v) * w)

    from adjoint_compiler import differentiable

    @negated
    @differentiable
    def h(v, *, k=2.0):
        return np.sum(v ** 3) * k

    def caller(v):
        return f(v) * g(v, 0.5) + h(v, k=1.0)
    """)
    np.testing.assert_allclose(grad(m.f)(V), -2 * V)
    agrees(m.f, V)
    agrees(m.g, V)
    agrees(m.g, V, 0.7, wrt=1)
    agrees(m.h, V)
    agrees(m.caller, V)
    check_grads(m.caller, V)


def test_own_differentiable_marker_is_seen_through(load):
    m = load("""
        from adjoint_compiler import differentiable
        @differentiable
        def f(v):
            return np.sum(np.tanh(v))
        def caller(v):
            return f(v) * 2.0
    """)
    agrees(m.f, V)
    agrees(m.caller, V)
    np.testing.assert_allclose(m.f.grad()(V), 1 - np.tanh(V) ** 2)


def test_wrappers_that_do_not_just_forward_are_refused_naming_the_wrapper(load):
    m = load(DECORATORS + """
    @unwrapped
    def f(v):
        return np.sum(v ** 2)

    @peeking
    def g(v):
        return np.sum(v ** 2)

    def caller(v):
        return g(v)
    """)
    with pytest.raises(UnsupportedSyntaxError, match=r"`wrapper` \(the wrapper of a decorator.*parameters"):
        grad(m.f)(V)
    with pytest.raises(UnsupportedSyntaxError, match=r"`wrapper` \(the wrapper of a decorator.*`args`"):
        grad(m.g)(V)
    with pytest.raises(UnsupportedSyntaxError, match=r"`wrapper` \(the wrapper of a decorator"):
        grad(m.caller)(V)


# -- the on-disk cache -------------------------------------------------------------------------
RUN = textwrap.dedent("""
    import sys
    import numpy as np
    import adjoint_compiler.api as api
    from adjoint_compiler import grad
    import {module}
    calls = []
    original = api.compile_gradient
    api.compile_gradient = lambda *a, **k: calls.append(1) or original(*a, **k)
    g = grad({module}.f)(np.array([0.1, 0.2, 0.3]))
    print("compiled" if calls else "cached", repr(g.tolist()))
""")


def run_process(tmp_path, module: str):
    import os
    import subprocess
    env = dict(os.environ, ADJOINT_COMPILER_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", RUN.format(module=module)], capture_output=True,
                            text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    status, value = result.stdout.split(" ", 1)
    return status, np.array(eval(value))


DISK_MODULE = """
import numpy as np
from adjoint_compiler import adjoint
import disk_config

def opaque(x):
    return np.sin(x)

@adjoint(opaque)
def _(y, x):
    x_bar += y_bar * RULE_BODY

def helper(v, k=K_DEFAULT):
    return v * k

def f(x):
    return np.sum(opaque(x) + helper(x) * disk_config.SCALE)
"""


def test_disk_cache_sees_rule_bodies_defaults_and_other_modules(tmp_path):
    x = np.array([0.1, 0.2, 0.3])

    def write(rule, k, scale):
        (tmp_path / "disk_mod.py").write_text(DISK_MODULE.replace("RULE_BODY", rule).replace("K_DEFAULT", k))
        (tmp_path / "disk_config.py").write_text(f"SCALE = {scale}\n")
        return k_value(k) * scale

    def k_value(k):
        return float(k)

    extra = write("np.cos(x)", "2.0", 1.0)
    assert run_process(tmp_path, "disk_mod")[0] == "compiled"
    status, g = run_process(tmp_path, "disk_mod")
    assert status == "cached"
    np.testing.assert_allclose(g, np.cos(x) + extra)
    extra = write("3.0", "2.0", 1.0)  # only the rule body changed
    status, g = run_process(tmp_path, "disk_mod")
    assert status == "compiled"
    np.testing.assert_allclose(g, 3.0 + extra)
    extra = write("3.0", "5.0", 1.0)  # only the default of the inlined helper changed
    status, g = run_process(tmp_path, "disk_mod")
    assert status == "compiled"
    np.testing.assert_allclose(g, 3.0 + extra)
    extra = write("3.0", "5.0", 4.0)  # only a constant in another module changed
    status, g = run_process(tmp_path, "disk_mod")
    np.testing.assert_allclose(g, 3.0 + extra)
    assert run_process(tmp_path, "disk_mod")[0] == "cached"


def test_wrapper_whose_parameters_differ_from_what_wraps_advertises_is_refused(load):
    m = load("""
        import functools
        def swapped(func):
            @functools.wraps(func)
            def wrapper(y, x):
                return func(x, y) * 2.0
            return wrapper
        def renamed(func):
            @functools.wraps(func)
            def wrapper(a):
                return func(a) * 2.0
            return wrapper
        def plain(func):
            @functools.wraps(func)
            def wrapper(x, y):
                return func(x, y) * np.sum(y)
            return wrapper
        @swapped
        def f(x, y):
            return np.sum(x ** 2 * y)
        @renamed
        def g(x):
            return np.sum(x ** 3)
        @plain
        def h(x, y):
            return np.sum(x ** 2 * y)
        def caller(x, y):
            return f(x, y)
    """)
    for fn in (m.f, m.caller):
        with pytest.raises(UnsupportedSyntaxError, match=r"`wrapper` \(the wrapper of a decorator.*\(y, x\) differ"):
            grad(fn)(V, V + 1.0)
    with pytest.raises(UnsupportedSyntaxError, match=r"parameters \(a\) differ from those `functools.wraps` gives it, \(x\)"):
        grad(m.g)(V)
    agrees(m.h, V, V + 1.0)
    agrees(m.h, V, V + 1.0, wrt=1)


def test_nothing_changed_means_no_recompilation(load, monkeypatch):
    from adjoint_compiler import api
    m = load(DECORATORS + """
    import types
    WEIGHTS = [1.0, 2.0]
    TABLE = {"a": 0.5}
    cfg = types.SimpleNamespace(power=2.0)
    class Config:
        shift = 0.25
    def helper(x, *, k=1.5):
        return np.tanh(x * k) + Config.shift
    @negated
    def f(x):
        s = 0.0
        for w in WEIGHTS:
            s = s + w * np.sum(helper(x) ** cfg.power) * TABLE["a"]
        return s + float(len(x)) + abs(np.sum(x))
    """)
    calls = []
    original = api.compile_gradient
    monkeypatch.setattr(api, "compile_gradient", lambda *a, **k: calls.append(1) or original(*a, **k))
    g = grad(m.f)
    for _ in range(5):
        g(V)
        value_and_grad(m.f)(V)
    assert len(calls) == 2  # once per mode
    m.cfg.power = 3.0
    agrees(m.f, V)
    assert len(calls) == 3


def test_disk_cache_keeps_a_decorated_function_as_the_wrapper(tmp_path):
    source = textwrap.dedent(DECORATORS) + textwrap.dedent("""
        @negated
        def f(x):
            return np.sum(np.sin(x) * SCALE)

        SCALE = 2.0
    """)
    (tmp_path / "disk_deco.py").write_text("import numpy as np\n" + source)
    x = np.array([0.1, 0.2, 0.3])
    assert run_process(tmp_path, "disk_deco")[0] == "compiled"
    status, g = run_process(tmp_path, "disk_deco")
    assert status == "cached"
    np.testing.assert_allclose(g, -2.0 * np.cos(x))
    (tmp_path / "disk_deco.py").write_text("import numpy as np\n" + source.replace("return -func", "return 3.0 * func"))
    status, g = run_process(tmp_path, "disk_deco")
    assert status == "compiled"  # only the decorator's wrapper changed
    np.testing.assert_allclose(g, 6.0 * np.cos(x))


def test_file_edited_after_import_is_refused_until_reloaded(load, tmp_path):
    from adjoint_compiler import MissingRuleError, SourceError
    m = load("""
        def helper(x):
            return x ** 2
        def f(x):
            return np.sum(helper(x))
        def g(x):
            return np.sum(helper(x) * 3.0)
    """, name="edited_mod")
    agrees(m.f, V)  # compiled from the source as imported
    path = tmp_path / "edited_mod.py"
    path.write_text(path.read_text().replace("x ** 2", "x ** 3  # edited"))
    np.testing.assert_allclose(grad(m.f)(V), 2 * V)  # Python still runs x ** 2, and so do we
    with pytest.raises(MissingRuleError, match=r"the source of `helper` in .*edited_mod.py \(line \d+\) is not the "
                                               r"code Python runs for it: the file was edited"):
        grad(m.g)(V)
    with pytest.raises(SourceError, match="the file was edited after it was imported"):
        grad(m.helper)(V)
    m.__spec__.loader.exec_module(m)  # what importlib.reload does
    np.testing.assert_allclose(grad(m.g)(V), 9 * V ** 2)
    agrees(m.g, V)


def test_a_function_of_its_own_with_star_args_is_refused_as_variadic_not_as_a_wrapper(load):
    m = load("""
    import numpy as np

    def total(*xs):
        return sum(np.sum(v ** 2) for v in xs)

    def scaled(a, **kw):
        return np.sum(a * kw["s"])
    """)
    for wrt in (0, 1, (0, 1)):  # (wrt=1 is in range of the call, not of the parameter list)
        with pytest.raises(UnsupportedSyntaxError, match=r"`total` \(.*\): it takes `\*xs`; variadic"):
            grad(m.total, wrt=wrt)(V, V + 1.0)
    with pytest.raises(UnsupportedSyntaxError, match=r"`scaled` \(.*\): it takes `\*\*kw`; variadic"):
        grad(m.scaled)(V, s=2.0)

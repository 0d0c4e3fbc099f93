"""The run-time guard (adjoint_compiler/guard.py): what a compilation read is re-checked by
identity, each kind of change makes `holds()` False, and the portable form replays in this
process exactly when nothing changed."""
from __future__ import annotations

import types

import numpy as np

from adjoint_compiler import frontend, guard, registry

SCALE = 2.0
TABLE = {"k": [1.0, 2.0]}
cfg = types.SimpleNamespace(power=2.0)


def helper(x, k=1.5, *, p=2):
    return x * k * SCALE + x ** p


def f(x):
    return np.sum(helper(x) ** cfg.power) + TABLE["k"][0] + abs(x[0])


def portable_f(x):
    return np.sum(helper(x)) + TABLE["k"][0]


def make(s):
    def g(x):
        return x * s

    def set_s(v):
        nonlocal s
        s = v
    return g, set_s


def built(func, names=("np", "helper", "cfg", "TABLE", "abs", "SCALE", "s")):
    """The guard of a compilation of `func` that looked up `names` (and read helper's source)."""
    generation = registry.GENERATION
    with frontend.recording() as reading:
        source = frontend.read_function(func)
        for name in names:
            source.lookup(name)
        if func in (f, portable_f):
            frontend.read_function(helper).lookup("SCALE")
    return guard.build(func, reading, generation)


def test_holds_until_something_read_changes(monkeypatch):
    g = built(f)
    assert g.holds() and g.holds()
    for change in (lambda: monkeypatch.setitem(globals(), "SCALE", 3.0),
                   lambda: monkeypatch.setattr(cfg, "power", 3.0),
                   lambda: TABLE["k"].append(3.0),
                   lambda: monkeypatch.setattr(helper, "__defaults__", (2.5,)),
                   lambda: monkeypatch.setitem(helper.__kwdefaults__, "p", 3),
                   lambda: monkeypatch.setattr(helper, "__code__", make.__code__),
                   lambda: monkeypatch.setitem(globals(), "abs", np.abs),
                   lambda: monkeypatch.setattr(registry, "GENERATION", object())):
        change()
        assert not g.holds()
        monkeypatch.undo()
        if len(TABLE["k"]) == 3:
            TABLE["k"].pop()
        assert g.holds()


def test_closure_cells_are_checked():
    fn, set_s = make(2.0)
    g = built(fn)
    assert g.holds()
    set_s(3.0)
    assert not g.holds()


def test_portable_form_replays_only_while_nothing_changed(monkeypatch):
    assert built(f).portable is None  # `cfg` (a SimpleNamespace) cannot be found again by value
    g = built(portable_f, ("np", "helper", "TABLE"))
    steps = g.portable["steps"]
    replayed = guard.from_portable(portable_f, steps, registry.GENERATION)
    assert replayed is not None and replayed[0].holds()
    for change in (lambda: monkeypatch.setitem(globals(), "SCALE", 2.5),
                   lambda: monkeypatch.setattr(helper, "__defaults__", (7.0,)),
                   lambda: monkeypatch.setitem(TABLE, "k", [1.0, 5.0])):
        change()
        assert guard.from_portable(portable_f, steps, registry.GENERATION) is None
        monkeypatch.undo()
        assert guard.from_portable(portable_f, steps, registry.GENERATION) is not None


def test_unfingerprintable_values_make_the_entry_not_portable():
    assert guard.fingerprint(object()) is None
    assert guard.fingerprint((1.0, [2, "a"], {"k": np.ones(2)})) == guard.fingerprint((1.0, [2, "a"], {"k": np.zeros(2)}))
    assert guard.fingerprint(1.0) != guard.fingerprint(1)
    assert guard.fingerprint(np.ones(2)) != guard.fingerprint(np.ones(3))


class Layer:
    act = staticmethod(np.sin)

    def __init__(self):
        self.op = np.tanh

    def forward(self, x):
        return self.op(x)


class OtherLayer(Layer):
    def forward(self, x):
        return x


def test_reads_through_an_object_check_its_class_fields_and_own_dict(monkeypatch):
    """What an inlined method read through `self` of a global object: the field's value, a
    staticmethod found on the class, that no instance attribute shadows a method bound anew at
    each read, and the object's class."""
    layer = Layer()
    with frontend.recording() as reading:
        for name in ("op", "act", "forward"):
            frontend.note_attr_read(layer, name)
        frontend.note_attr_read(np, "sin")  # (a library's attributes are not guarded)
    g = guard.build(f, reading, registry.GENERATION)
    assert g.holds()
    for change in (lambda: monkeypatch.setattr(layer, "op", np.cos),
                   lambda: monkeypatch.setattr(Layer, "act", staticmethod(np.cos)),
                   lambda: monkeypatch.setattr(layer, "forward", lambda x: x, raising=False),
                   lambda: monkeypatch.setattr(layer, "__class__", OtherLayer)):
        change()
        assert not g.holds()
        monkeypatch.undo()
        assert g.holds()


def test_an_attribute_read_through_self_is_not_portable():
    with frontend.recording() as reading:
        frontend.read_function(portable_f)
        frontend.note_attr_read(Layer(), "op")
    assert guard.build(portable_f, reading, registry.GENERATION).portable is None

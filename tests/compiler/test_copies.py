"""The copies pass on hand-made backward code: which adjoint copies go and which must stay."""
import gast
import numpy as np

from adjoint_compiler.copies import propagate
from adjoint_compiler.printing import to_source
from adjoint_compiler.simplify import Code
from adjoint_compiler.template import BIf


def block(*lines):
    return [Code(gast.parse(line).body[0], None) for line in lines]


def text(code):
    out = []
    for c in code:
        if isinstance(c, Code):
            out.append(to_source(c.stmt).strip())
        else:
            out.append(f"if {c.cond}: " + "; ".join(text(c.body)) + " else: " + "; ".join(text(c.orelse)))
    return out


ADJOINTS = {"a", "b", "c", "d", "e"}


def test_a_copy_read_later_is_renamed():
    code = block("a = b", "d = a * 2.0", "e = a + d")
    assert text(propagate(code, ADJOINTS, {"e"})) == ["d = b * 2.0", "e = b + d"]


def test_a_copy_whose_source_is_rebound_before_a_read_stays():
    code = block("a = b", "b = c", "d = a")
    assert text(propagate(code, ADJOINTS, {"d"})) == ["a = b", "b = c", "d = a"]


def test_an_augmented_copy_stays():
    """`a += x` rebinds a float: `b` must not change with it."""
    code = block("a = b", "a += c", "d = a + b")
    assert text(propagate(code, ADJOINTS, {"d"})) == ["a = b", "a += c", "d = a + b"]


def test_an_augmented_source_keeps_the_copy():
    code = block("a = b", "b += c", "d = a")
    assert text(propagate(code, ADJOINTS, {"d"})) == ["a = b", "b += c", "d = a"]


def test_the_last_reader_may_rebind_the_source():
    code = block("a = b", "b = a * 2.0")
    assert text(propagate(code, ADJOINTS, {"b"})) == ["b = b * 2.0"]


def test_a_copy_back_goes():
    code = block("a = b", "b = a", "d = a + b")
    assert text(propagate(code, ADJOINTS, {"d"})) == ["d = b + b"]


def test_kept_names_and_primal_names_stay():
    code = block("a = b", "x = y", "d = a + x")
    assert text(propagate(code, ADJOINTS, {"a", "d"})) == ["a = b", "x = y", "d = a + x"]


def test_a_read_inside_a_later_branch_is_renamed():
    code = block("a = b") + [BIf(gast.parse("k", mode="eval").body, block("d = a"), block("d = b"), None)]
    assert text(propagate(code, ADJOINTS, {"d"}))[0].endswith("d = b else: d = b")


def test_a_copy_read_outside_its_block_stays():
    branch = BIf(gast.parse("k", mode="eval").body, block("a = b"), block("e = c"), None)
    code = [branch] + block("d = a")
    out = propagate(code, ADJOINTS, {"d"})
    assert text(out[0].body) == ["a = b"] and text(out[1:]) == ["d = a"]


def test_numbers_are_propagated_and_folded():
    code = block("a = 1.0", "b = -a", "c = b * 0.5", "d = x * c")
    assert text(propagate(code, ADJOINTS, {"d"})) == ["d = x * -0.5"]


def test_multiplying_an_array_by_one_is_kept():
    """`y * 1.0` is a new array the backward code may update in place; `y` may be the caller's."""
    code = block("a = 1.0", "d = y * a")
    assert text(propagate(code, ADJOINTS, {"d"})) == ["d = y * 1.0"]


def test_a_division_by_zero_is_not_folded():
    code = block("a = 0.0", "d = 1.0 / a")
    assert text(propagate(code, ADJOINTS, {"d"})) == ["d = 1.0 / 0.0"]


def test_the_grad_seed_disappears_into_its_readers():
    from adjoint_compiler import adjoint_source

    def loss(x):
        return -0.5 * np.sum(x * x)
    src = adjoint_source(loss, wrt=0, args=[np.ones(3)])
    assert "= 1.0" not in src and "-0.5" in src, src


def test_a_negation_folds_into_its_one_reader():
    assert text(propagate(block("t = -u", "v = t * 2.0"), ADJOINTS | {"t", "u", "v"}, {"v"})) == ["v = u * -2.0"]
    assert text(propagate(block("t = -u", "d += t"), ADJOINTS | {"t", "u"}, {"d"})) == ["d -= u"]


def test_a_negation_read_twice_or_not_next_stays():
    assert text(propagate(block("t = -u", "v = t * 2.0 + t"), ADJOINTS | {"t", "u", "v"}, {"v"})) \
        == ["t = -u", "v = t * 2.0 + t"]
    assert text(propagate(block("t = -u", "u += c", "v = t * 2.0"), ADJOINTS | {"t", "u", "v"}, {"v"})) \
        == ["t = -u", "u += c", "v = t * 2.0"]
    assert text(propagate(block("t = -u", "v = t * w"), ADJOINTS | {"t", "u", "v"}, {"v"})) == ["t = -u", "v = t * w"]


def test_a_loop_whose_adjoint_copies_all_went_is_left_out():
    import numpy as np

    from adjoint_compiler import adjoint_source

    def carried(h0, v):
        h = h0
        for _ in range(3):
            h = h + v
        return h * h

    src = adjoint_source(carried, 0, (0.5, 0.3))
    assert "reversed(" not in src and "h0_bar = h_bar" in src
    namespace: dict = {}
    exec(compile(src, "<generated>", "exec"), namespace)
    np.testing.assert_allclose(namespace["carried_grad"](0.5, 0.3), (2 * (0.5 + 0.9),))  # (analytic)

"""The stacks pass (forward mode, adjoint_compiler/stacks.py) on its printed IR: a list the function
made, grown by `append` and shrunk by `pop`, is updated in place (`rt.push`, `rt.drop`) with its
tangent, so a loop of n pushes costs O(n); a list argument keeps the value form. And the
Hessian-vector product of a loop (forward over reverse) uses those stack operations, a count of
them linear in the trips."""
from __future__ import annotations

import numpy as np

from adjoint_compiler import grad, hvp, jvp, jvp_source
from adjoint_compiler import runtime as rt
from adjoint_compiler.pipeline import compile_gradient


def stage(func, name, kinds):
    return compile_gradient(func, (0,), kinds, "jvp", stage=name)


def stack_loop(x, n):
    saved = []
    h = x
    for _ in range(n):
        saved.append(h)
        h = np.sin(h) * 1.5
    s = 0.0
    for _ in range(n):
        v = saved.pop()
        s = s + np.sum(v * h)
    return s + np.sum(h)


def appends_to_argument(x, xs):
    xs.append(x * 2.0)
    return np.sum(xs[-1] * x)


def test_the_stage_prints_push_and_drop():
    text = stage(stack_loop, "stacks", ("f1", "r0"))
    assert "rt.push(saved" in text and "rt.drop(saved" in text
    before = stage(stack_loop, "globals", ("f1", "r0"))
    assert "rt.push" not in before and "saved_2 + " in before.replace("saved_3 = ", "")


def test_the_jvp_pushes_and_drops_tangents_in_place():
    source = jvp_source(stack_loop, (np.ones(3), 4))
    assert "rt.push(saved" in source and "_dot = rt.push(" in source and "_dot = rt.drop(" in source
    assert "seq_concat" not in source and "[:-1]" not in source
    x, t = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -1.0])
    value, tangent = jvp(stack_loop, (x, 5), (t, None))
    eps = 1e-6
    fd = (stack_loop(x + eps * t, 5) - stack_loop(x - eps * t, 5)) / (2 * eps)
    assert value == stack_loop(x, 5)
    np.testing.assert_allclose(tangent, fd, rtol=1e-7)


def test_a_list_argument_keeps_the_value_form():
    assert "rt.push" not in stage(appends_to_argument, "stacks", ("f1", "seq"))
    xs = [np.zeros(3)]
    x, t = np.array([0.3, -0.2, 0.5]), np.ones(3)
    _, tangent = jvp(appends_to_argument, (x, xs), (t, [np.zeros(3)]))
    assert len(xs) == 1  # the caller's list is not the one appended to
    np.testing.assert_allclose(tangent, 4.0 * x @ t)


def rk4_like(p, n):
    u = np.array([1.0, 0.5])
    k = np.zeros(2)
    for _ in range(n):
        k[0] = p[0] * u[0] - p[1] * u[0] * u[1]
        k[1] = -p[2] * u[1] + p[3] * u[0] * u[1]
        u = u + 0.01 * k
    return np.sum(u * u)


def test_the_hvp_of_a_loop_uses_stack_operations_linear_in_the_trips(monkeypatch):
    """Forward over reverse: the jvp of the generated gradient pushes each taped value and its
    tangent once, and pops it once: the count of stack operations is proportional to the trips
    (no list is copied per trip, the quadratic cost of `xs + [v]`)."""
    p = np.array([1.5, 1.0, 3.0, 1.0])
    v = np.array([1.0, -1.0, 0.5, 0.25])
    source = jvp_source(grad(rk4_like), (p, 3))
    assert "rt.push(" in source and "rt.drop(" in source and "seq_concat" not in source
    counts = {"push": 0, "drop": 0}
    push, drop = rt.push, rt.drop
    h = hvp(rk4_like)
    h(p, 3, v)  # compiled (for any trip count) before the helpers are wrapped

    def counting_push(xs, items):
        counts["push"] += 1
        return push(xs, items)

    def counting_drop(xs):
        counts["drop"] += 1
        return drop(xs)
    monkeypatch.setattr(rt, "push", counting_push)
    monkeypatch.setattr(rt, "drop", counting_drop)
    per_trips = {}
    for n in (10, 20, 40):
        counts.update(push=0, drop=0)
        out = h(p, n, v)
        assert h.fallback is None
        per_trips[n] = (counts["push"], counts["drop"])
        eps = 1e-6
        fd = (grad(rk4_like)(p + eps * v, n) - grad(rk4_like)(p - eps * v, n)) / (2 * eps)
        np.testing.assert_allclose(out, fd, rtol=1e-6, atol=1e-9)
    pushes = [per_trips[n][0] for n in (10, 20, 40)]
    assert pushes[0] > 0 and pushes[1] == 2 * pushes[0] and pushes[2] == 4 * pushes[0]
    assert [per_trips[n][1] for n in (10, 20, 40)] == pushes  # every push popped


# -- reverse mode: a list used as a stack alone has a cotangent stack for adjoint ---------------------

def grad_stage(func, name, kinds):
    return compile_gradient(func, (0,), kinds, "grad", stage=name)


def branchy_stack(x, n):
    st = []
    h = x
    for i in range(n):
        if i % 2 == 0:
            st.append(h * 2.0)
        h = np.tanh(h + 0.3)
    s = np.sum(h)
    for i in range(n // 2):
        v = st.pop()
        s = s + np.sum(v * h)
    return s


def leftover_stack(x, n):
    st = []
    for i in range(n):
        st.append(x * (i + 1.0))
    v = st.pop()
    return np.sum(v ** 2)


def read_list(x, n):
    st = []
    for _ in range(n):
        st.append(x * 2.0)
    first = st[0]
    v = st.pop()
    return np.sum(v * first)


def fd_grad(f, x, n, eps=1e-6):
    return np.array([(f(x + eps * e, n) - f(x - eps * e, n)) / (2 * eps) for e in np.eye(x.size)])


def test_reverse_mode_prints_push_top_drop_and_cotangent_stacks():
    text = grad_stage(stack_loop, "stacks", ("f1", "r0"))
    assert "rt.push(saved" in text and "rt.top(saved" in text and "rt.drop(saved" in text
    from adjoint_compiler import adjoint_source
    source = adjoint_source(stack_loop, args=(np.ones(3), 4))
    assert "rt.stack_cons(" in source and "rt.stack_rest(" in source
    assert "seq_head" not in source and "getitem_adjoint(saved" not in source


def test_reverse_mode_stacks_match_finite_differences():
    x = np.array([0.3, -0.2, 0.5])
    for f in (stack_loop, branchy_stack, leftover_stack, read_list):
        for n in (0, 1, 4, 5):
            if f is stack_loop and n == 0 or f in (leftover_stack, read_list) and n == 0:
                continue
            np.testing.assert_allclose(grad(f)(x, n), fd_grad(f, x, n), rtol=1e-6, atol=1e-9, err_msg=f.__name__)


def test_a_list_read_otherwise_keeps_the_value_form_in_reverse_mode():
    text = grad_stage(read_list, "stacks", ("f1", "r0"))
    assert "rt.top" not in text and "rt.push" not in text


def test_reverse_over_reverse_of_a_loop_is_linear_in_the_trips(monkeypatch):
    """The pullback of a generated gradient (grad(grad(f)), vjp of a gradient, the hvp fallback):
    the inner gradient's tape stacks get cotangent stacks, one `rt.stack_cons` per pop, none of
    the list copies (`seq_head`, `getitem_adjoint` of a whole list) that made it O(n^2)."""
    from adjoint_compiler.nesting import _reverse_over_reverse
    p = np.array([1.5, 1.0, 3.0, 1.0])
    v = np.array([1.0, -1.0, 0.5, 0.25])
    g = grad(rk4_like)
    _reverse_over_reverse(g, [p, 3], (0,), v, False)  # compiled before the helper is wrapped
    counts = {"cons": 0, "seq": 0}
    cons, head = rt.stack_cons, rt.seq_head

    def counting_cons(h, r):
        counts["cons"] += 1
        return cons(h, r)

    def counting_head(gr, y):
        counts["seq"] += 1
        return head(gr, y)
    monkeypatch.setattr(rt, "stack_cons", counting_cons)
    monkeypatch.setattr(rt, "seq_head", counting_head)
    seen = []
    for n in (10, 20, 40):
        counts.update(cons=0, seq=0)
        out = _reverse_over_reverse(g, [p, n], (0,), v, False)
        seen.append((counts["cons"], counts["seq"]))
        np.testing.assert_allclose(out, hvp(rk4_like)(p, n, v), rtol=1e-9, atol=1e-12)
    assert seen[0][0] > 0 and seen[1][0] == 2 * seen[0][0] and seen[2][0] == 4 * seen[0][0]
    assert all(s == 0 for _, s in seen)

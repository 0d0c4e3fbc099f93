"""Family 4 of issue 12: arguments that alias each other.

The compiled code copies an argument the function writes into on entry, so a write through one
name would not be seen through another. A call where a written argument shares memory with
another argument (the same array, a view of it, an array inside a tuple or list, a Buffer) or
with a global array the function reads is refused with a MutationError naming the function and
both names; a function that writes into no argument accepts aliased arguments. Gradients that
are computed are checked against central finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

from adjoint_compiler import Buffer, MutationError, grad, hessian, value_and_grad, vjp
from adjoint_compiler.testing import check_grads

U = np.array([1.0, 2.0, 3.0])
G = np.array([0.5, -1.0, 2.0])


def step(out, u):
    out[0] = 3 * u[1]
    return np.sum(out * u)


def step2d(out, a):
    out[0, :] = a[:, 1] * 2.0
    return np.sum(out * a)


def from_tuple(out, t):
    a, s = t
    out[1] = a[0] * 4.0 * s
    return np.sum(out * a)


def into_buffer(b, u):
    b[0] = u[2] * 5.0
    return np.sum(b.copy() * u)


def through_helper(out, u):
    fill(out, u)
    return np.sum(out * u)


def fill(o, u):
    np.copyto(o, u * 2.0)


def augmented(out, u):
    out += u
    return np.sum(out * u)


def reads_only(a, b):
    return np.sum(a * b) + np.sum(np.sin(a))


def writes_global(out):
    out[2] = np.sum(G) * out[0]
    return np.sum(out * G)


@pytest.mark.parametrize("call", [
    lambda u: grad(step, wrt=1)(u, u),
    lambda u: grad(step, wrt=0)(u, u),
    lambda u: value_and_grad(step, wrt=(0, 1))(u, u),
    lambda u: vjp(step, u, u),
    lambda u: grad(step, wrt=1)(u[:2], u),       # a view of the first elements
    lambda u: grad(step, wrt=1)(u, u[::-1]),     # a reversed view
    lambda u: grad(step, wrt=1)(out=u[1:], u=u),  # by keyword
])
def test_written_argument_sharing_memory_with_another_is_refused(call):
    u = U.copy()
    with pytest.raises(MutationError, match=r"step: argument `out`, which the function writes into, shares memory "
                                            r"with argument `u`"):
        call(u)
    np.testing.assert_array_equal(u, U)  # nothing ran


@pytest.mark.parametrize("f", [through_helper, augmented])
def test_writes_through_a_helper_or_an_augmented_assignment_are_checked(f):
    u = U.copy()
    with pytest.raises(MutationError, match=rf"{f.__name__}: argument `out`.*argument `u`"):
        grad(f, wrt=1)(u, u)
    check_grads(through_helper, np.array([0.4, 1.0, -2.0]), U.copy(), wrt=(0, 1))


def test_transposed_view_of_a_2d_argument_is_refused():
    a = np.arange(1.0, 10.0).reshape(3, 3)
    with pytest.raises(MutationError, match=r"step2d: argument `out`.*argument `a`"):
        grad(step2d, wrt=1)(a, a.T)


def test_arrays_inside_a_tuple_and_buffers_are_checked():
    u = U.copy()
    for t in ((u, 2.0), [u[1:], 2.0]):
        with pytest.raises(MutationError, match=r"from_tuple: argument `out`.*argument `t`"):
            grad(from_tuple, wrt=1)(u, t)
    with pytest.raises(MutationError, match=r"into_buffer: argument `b`.*argument `u`"):
        b = Buffer(u)
        grad(into_buffer, wrt=1)(b, b.data)


def test_written_argument_aliasing_a_global_it_reads_is_refused():
    with pytest.raises(MutationError, match=r"writes_global: argument `out`.*the global `G`"):
        grad(writes_global)(G)


def test_separate_arrays_differentiate():
    check_grads(step, np.array([0.4, 1.0, -2.0]), U.copy(), wrt=(0, 1))
    a = np.arange(1.0, 10.0).reshape(3, 3) / 7.0
    check_grads(step2d, np.ones((3, 3)), a, wrt=1)
    check_grads(from_tuple, np.array([0.3, -0.2, 0.9]), (np.array([1.0, 2.0, 3.0]), 0.5), wrt=(0, 1))
    b = Buffer(np.array([0.3, -0.2, 0.9]))
    np.testing.assert_allclose(grad(into_buffer, wrt=1)(b, U.copy()), _into_buffer_grad(U))
    check_grads(writes_global, np.array([0.4, 1.0, -2.0]))


def test_aliased_arguments_of_a_function_that_writes_into_none_are_fine():
    u = np.array([0.3, -0.7, 1.1])
    check_grads(reads_only, u, u)
    g0, g1 = grad(reads_only, wrt=(0, 1))(u, u[::-1])
    np.testing.assert_allclose(g0, u[::-1] + np.cos(u))
    np.testing.assert_allclose(g1, u)


def _into_buffer_grad(u):
    """d/du of sum(b * u) after b[0] = 5 u[2], with b = [*, -0.2, 0.9]: by hand."""
    return np.array([5.0 * u[2], -0.2, 0.9 + 5.0 * u[0]])


# -- an in-place update of an array another name holds: fine when nothing reads the other name (or
#    anything sharing its memory) afterwards; refused when something does -------------------------

def update_dead_alias(x):
    a = np.sin(x)
    b = a          # `a` is never read again: `b += x` changes it unseen
    b += x * x
    return np.sum(b ** 2)


def update_dead_alias_in_loop(x):
    acc = np.zeros_like(x)
    s = 0.0
    for i in range(3):
        held = acc
        held += np.cos(x * i)
        acc = held * 0.5   # `acc` is rebound before it is read again
        s = s + np.sum(acc ** 2)
    return s


def update_live_alias(x):
    a = np.sin(x)
    b = a
    b += x          # Python changes `a` too
    return np.sum(a * b)


def update_live_alias_next_trip(x):
    a = np.sin(x)
    s = 0.0
    for i in range(2):
        b = a
        s = s + np.sum(a * x)  # the next trip reads `a`, which `b += x` changed
        b += x
    return s


def update_through_may_alias_read_later(x):
    a = np.sin(x)
    b = np.asarray(a)   # may be `a` itself
    c = b
    c += x
    return np.sum(a * c)


def test_in_place_update_of_an_unread_alias():
    x = np.array([0.3, -1.2, 0.8])
    check_grads(update_dead_alias, x)
    check_grads(update_dead_alias_in_loop, x)
    check_grads(update_through_may_alias_read_later, x)  # the run-time view branch writes `a` too


@pytest.mark.parametrize("f", [update_live_alias, update_live_alias_next_trip])
def test_in_place_update_of_a_read_alias_is_refused(f):
    with pytest.raises(MutationError):
        grad(f)(np.array([0.3, -1.2, 0.8]))


# -- list.pop() -----------------------------------------------------------------------------------

def pop_stack(x):
    stack = []
    for i in range(3):
        stack.append(x * (i + 1.0))
    s = 0.0
    for i in range(3):
        v = stack.pop()
        s = s + np.sum(np.sin(v)) * (i + 1)
    return s


def pop_discarded(x):
    items = [x, x * 2.0, x * 3.0]
    items.pop()
    return np.sum(items[-1] ** 2) + len(items)


def pop_shared(x):
    items = [x, x * 2.0]
    other = items
    items.pop()
    return np.sum(other[-1])  # Python: `other` lost its last item too


def test_list_pop():
    x = np.array([0.3, 0.8])
    check_grads(pop_stack, x)
    check_grads(pop_discarded, x)


def test_pop_of_a_shared_list_is_refused():
    with pytest.raises(MutationError):
        grad(pop_shared)(np.array([0.3, 0.8]))


def reads_deep(out, p):
    out[0] = 3 * out[1]
    return np.sum(out * out) + np.sum(p[0][0][0][0][0][0][0][0][0][0][0] ** 2)


def _nest(x, depth):
    for _ in range(depth):
        x = [x, 1.0]
    return x


def test_an_alias_nested_deeper_than_structures_are_followed_is_refused():
    # (past trees.MAX_DEPTH the structure is an opaque value; its arrays are still checked)
    u = U.copy()
    with pytest.raises(MutationError, match=r"reads_deep: argument `out`.*argument `p`"):
        grad(reads_deep)(u, _nest(u, 11))
    np.testing.assert_array_equal(u, U)
    check_grads(reads_deep, U.copy(), _nest(G.copy(), 11), wrt=0)


def deep_sum(p):
    return np.sum(p[0][0][0][0][0][0][0][0][0][0][0] ** 3)


def test_vjp_keeps_its_own_copy_of_an_array_nested_deeply():
    p = _nest(U.copy(), 11)
    leaf = p
    for _ in range(11):
        leaf = leaf[0]
    _, pullback = vjp(deep_sum, p)
    leaf *= 10.0  # the caller writes into its array after vjp
    (g,) = pullback(1.0)
    for _ in range(11):
        g = g[0]
    np.testing.assert_allclose(g, 3 * U ** 2)


# -- an in-place update in a loop of a value another name took hold of before the loop -----------

def loop_augassign_alias(x):
    a = x * 1.0
    b = a
    for _ in range(3):
        a += x * 2.0
    return np.sum(b * x)


def loop_append_alias(x):
    hs = [x]
    keep = hs
    for _ in range(3):
        hs.append(hs[-1] * 1.5)
    return np.sum(keep[-1])


def loop_append_in_tuple(x):
    hs = [x]
    t = (hs, 1)
    for _ in range(2):
        hs.append(hs[-1] * 2.0)
    return np.sum(t[0][-1])


def loop_update_input(h0, x):
    h = h0
    for _ in range(2):
        h += x  # (Python changes the caller's h0)
    return np.sum(h * x)


@pytest.mark.parametrize("f", [loop_augassign_alias, loop_append_alias, loop_append_in_tuple])
def test_loop_update_of_a_value_held_before_the_loop_is_refused(f):
    """Python updates the one object both names hold, on the first trip at least; the IR computes a
    new value per trip. Before the fix each of these gave a silently wrong gradient (and value)."""
    with pytest.raises(MutationError, match="updated in place here") as err:
        grad(f)(U.copy())
    assert err.value.loc.line > f.__code__.co_firstlineno


def test_loop_update_of_an_argument_bound_to_another_name_is_refused():
    with pytest.raises(MutationError, match="`h` is updated in place"):
        grad(loop_update_input, wrt=1)(U.copy(), G.copy())


def loop_rebinds_a_new_list(x):
    hs = [x]
    keep = hs
    for _ in range(2):
        hs = hs + [hs[-1] * 2.0]  # a new list: `keep` is not changed
    return np.sum(keep[-1]) + np.sum(hs[-1])


def loop_appends_to_its_own_list(x):
    hs = []
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.5)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


@pytest.mark.parametrize("f", [loop_rebinds_a_new_list, loop_appends_to_its_own_list])
def test_loop_updates_nothing_else_holds_are_differentiated(f):
    check_grads(f, U.copy())


def loop_keeps_under_an_if(x):
    s = x * 1.0
    saved = x * 0.0
    for i in range(3):
        if i == 1:
            saved = s
        s += x
    return np.sum(saved * x)


def loop_keeps_after_the_update(x):
    s = x * 1.0
    saved = x * 0.0
    for i in range(3):
        s += x
        if i == 1:
            saved = s  # the next trip's `s += x` changes it
    return np.sum(saved * x)


def loop_keeps_the_previous_iterate(x):
    a = x * 1.0
    b = a
    for _ in range(3):
        b = a
        a = a * 0.5  # a new array: the update below leaves `b` alone
        a += x
    return np.sum(b * a)


@pytest.mark.parametrize("f", [loop_keeps_under_an_if, loop_keeps_after_the_update])
def test_loop_update_of_a_value_an_if_kept_is_refused(f):
    """`saved` may be the object `s += x` changes: through an `if` result, and through a loop-carried
    value from an earlier trip (mutation.same_arrays with updates). Both were silently wrong before."""
    with pytest.raises(MutationError, match="`saved` names the same"):
        grad(f)(U.copy())


def test_loop_update_of_a_value_made_in_the_trip_is_differentiated():
    check_grads(loop_keeps_the_previous_iterate, U.copy())


def implicit_euler(y0, p):
    y = y0 * 1.0
    for _ in range(3):
        z = y.copy()  # a new object each outer trip: updating it in place changes nothing else
        for _ in range(2):
            z -= 0.1 * (z - y * p)
        y = z
    return np.sum(y ** 2)


def inner_updates_the_outer_value(y0, p):
    y = y0 * 1.0
    for _ in range(3):
        z = y  # the outer value itself: the inner update changes `y` too
        for _ in range(2):
            z -= 0.1 * (z - y * p)
        y = z
    return np.sum(y ** 2)


def test_an_inner_loop_updating_a_copy_made_each_outer_trip_works():
    from adjoint_compiler.testing import check_grads

    check_grads(implicit_euler, np.array([0.3, 0.5]), 0.7, wrt=(0, 1))


def test_an_inner_loop_updating_the_outer_value_itself_is_refused():
    with pytest.raises(MutationError, match="updated in place"):
        grad(inner_updates_the_outer_value)(np.array([0.3, 0.5]), 0.7)


def float_argument_updated_in_a_loop(h0, v):
    h = h0
    for _ in range(3):
        h += v  # (a float: `+=` rebinds `h`, `h0` keeps its value)
    return h * h + h0


def test_an_in_place_update_of_a_number_held_before_a_loop_is_a_rebinding():
    from adjoint_compiler.testing import check_grads

    check_grads(float_argument_updated_in_a_loop, 0.5, 0.3, wrt=(0, 1))


def list_recurrence(x):
    out = [0.0] * len(x)
    for i in range(len(x)):
        out[i] = x[i] * (out[i - 1] if i > 0 else 1.0)
    return sum(out)


def item_read_before_its_slot_is_rebound(x):
    out = [x[0] * 2.0, x[1] ** 2]
    a = out[0]
    out[0] = x[1] * 3.0   # the slot holds another object now; `a` keeps the first
    return a * out[0] + out[1]


def test_a_list_slot_written_changes_no_item_read_before():
    """A slot assignment into a list rebinds the slot and changes no object: an item read before it
    is its old value (it was refused as a value that may share memory with the list, and so was the
    second derivative of a list recurrence, whose generated gradient reads slots so)."""
    x = np.array([0.7, -0.4, 1.3, 0.25])
    np.testing.assert_allclose(grad(item_read_before_its_slot_is_rebound)(x),
                               [6.0 * x[1], 6.0 * x[0] + 2.0 * x[1], 0.0, 0.0], rtol=1e-12)
    h = hessian(list_recurrence)(x)
    want = np.zeros((4, 4))  # sum of the prefix products p_i = x_0 ... x_i
    for i in range(4):
        for j in range(4):
            for k in range(max(i, j), 4):
                if i != j:
                    want[i, j] += np.prod([x[m] for m in range(k + 1) if m not in (i, j)])
    np.testing.assert_allclose(h, want, rtol=1e-10, atol=1e-12)


def alias_read_in_a_writing_loop(u):
    du = u.copy()
    v = du
    for i in range(2):
        du[i + 1] = v[i] * 2.0        # v is du: it reads the slot the trip before wrote
    return np.sum(du * np.array([0.3, -1.1, 0.8]))


def alias_read_whole(u):
    du = u.copy()
    v = du
    for _ in range(3):
        du[:] = du + v * 0.5
    return np.sum(du * np.array([0.3, -1.1, 0.8]))


def alias_of_a_first_trip_update(u):
    du = np.zeros(3)
    x = du
    for i in range(3):
        if i == 1:
            du = du.copy()
        du += u * u                    # the first trip updates x's array, later ones a copy
    return np.sum(x * np.array([0.3, -1.1, 0.8]))


def test_names_of_one_array_in_a_loop_are_one_array():
    """Two names of one array entering a loop that writes through one and reads through the other
    are one loop value (the gradient took the read for the array before the loop); an alias of an
    array that only the first trip updates in place is refused, not read stale."""
    u = np.array([0.5, 1.2, -0.4])
    W = np.array([0.3, -1.1, 0.8])
    np.testing.assert_allclose(grad(alias_read_in_a_writing_loop)(u), [1.3, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(grad(alias_read_whole)(u), 1.5 ** 3 * W, rtol=1e-12)
    with pytest.raises(MutationError):
        grad(alias_of_a_first_trip_update)(u)


def swapped_and_written(du, u, b):
    for _ in range(2):
        du, b = b, du
        du += u


def test_arguments_swapped_in_a_loop_that_writes_them_are_refused():
    """vjp's outputs are the arrays the caller passed as they end; with their names swapped each
    trip, which holds which is not known when the code is compiled (vjp said nothing was written)."""
    with pytest.raises(MutationError, match="passed as `b`"):
        vjp(swapped_and_written, np.ones(3), np.ones(3), np.zeros(3))


def updates_an_item_of_a_tuple(xs, u):
    xs[0] += u


def updates_an_item_read_from_a_list(xs, u):
    a = xs[0]
    a += u            # the caller's list holds that array: it changes


def test_item_updates_of_containers_the_caller_sees():
    """`xs[0] += u` of a tuple raises TypeError, as in Python (the tuple was copied into an array
    and written); an array read from a list argument and updated in place changes the caller's
    list item, which vjp cannot return: refused (vjp said nothing was written)."""
    a, u = np.array([0.3, -0.7, 1.1]), np.array([0.5, 1.2, -0.4])
    with pytest.raises(TypeError, match="tuple"):
        vjp(updates_an_item_of_a_tuple, (a.copy(), u.copy()), u)
    with pytest.raises(MutationError, match="`a`"):
        vjp(updates_an_item_read_from_a_list, [a.copy(), u.copy()], u)


def rhs_adds(du, u):
    du += u * u


def loss_through_an_in_place_rhs(u):
    du = np.zeros_like(u)
    for _ in range(2):
        rhs_adds(du, u)
    return np.sum(du * np.array([0.3, -1.1, 0.8]))


def test_a_helper_updating_an_array_its_caller_made():
    """`du = np.zeros_like(u); rhs(du, u)` with `rhs` doing `du += ...`: the caller's array
    changes, as in NumPy (it was refused as an update of an array another name holds)."""
    u = np.array([0.5, 1.2, -0.4])
    value, g = value_and_grad(loss_through_an_in_place_rhs)(u)
    assert value == pytest.approx(loss_through_an_in_place_rhs(u))
    np.testing.assert_allclose(g, 4 * u * np.array([0.3, -1.1, 0.8]), rtol=1e-12)


def names_of_one_array_swapped(u):
    a = np.ones(2)
    b = a
    for i in range(2):
        a[i] = a[1 - i] * u[i]
        b, a = a, b          # (one array: the swap changes nothing)
    return a[0] + a[1]


def test_names_of_one_array_swapped_in_a_writing_loop_are_refused():
    """The loop writes through `a`, then swaps it with `b`, which names the same array: the
    gradient followed two arrays (a wrong gradient, the value right); refused now."""
    with pytest.raises(MutationError, match="names the array it entered with"):
        grad(names_of_one_array_swapped)(np.array([0.3, -0.7]))


def updated_in_one_branch(x, c):
    a = x * 1.0
    b = a
    if c > 0:
        b += x
        r = b
    else:
        r = a  # (the object the other branch updated, here not updated)
    return np.sum(r * r)


def test_an_update_in_one_branch_with_the_other_name_yielded_by_the_other_branch():
    x = np.array([0.3, -0.5, 0.8])
    for c in (1.0, -1.0):
        check_grads(updated_in_one_branch, x, c)

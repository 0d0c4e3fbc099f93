"""Functions as values: lambdas, nested defs and closures (read at the time of the call, as
Python's late binding does), closure factories, functools.partial, map, filter, functools.reduce,
sorted/min/max with an inactive key, the itertools iterators as sources for loops,
comprehensions and copyto, and the located refusals for a function value that cannot be followed.

Every gradient is checked against central finite differences (`check`), inside loops and
branches too; every refusal names the user's line.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import operator
from functools import partial, reduce

import numpy as np
import pytest

from adjoint_compiler import AdjointCompilerError, Buffer, MutationError, UnsupportedSyntaxError, copyto, grad
from adjoint_compiler.errors import CompileError
from test_core import check

V = np.array([0.3, -1.2, 2.0, 0.7])  # distinct absolute values: no ties in a sort by |v|


def scale(a, t):
    return a * t


def apply(f, x):
    return f(x)


def apply_twice(f, x):
    return f(f(x))


def make_scaled(a):
    return lambda t: a * t


def make_poly(c0, c1):
    def poly(t):
        return c0 + c1 * t * t
    return poly


def compose(f, g):
    return lambda t: f(g(t))


# ---------------------------------------------------------------------------------------------
# lambdas and nested defs
# ---------------------------------------------------------------------------------------------

def lambda_called(x):
    g = lambda t: t * x  # noqa: E731
    return g(x) + g(2.0)


def lambda_called_directly(x):
    return (lambda t: t ** 3)(x)


def nested_def_with_defaults(x):
    def h(t, k=2.0, *, m=1.0):
        u = np.sin(t) * k
        return u * x + m
    return h(x) + h(x, k=3.0) + h(t=x, m=x)


def nested_def_with_loop_and_branch(x):
    def h(t):
        s = 0.0
        for i in range(3):
            if t > i:
                s = s + t * i
            else:
                s = s - t
        return s
    return h(x) + h(2 * x)


def nested_def_calls_nested_def(x):
    def inner(t):
        return np.exp(-t) * x

    def outer(t):
        return inner(t) * inner(2 * t)
    return outer(x)


def nested_closure_two_levels(x):
    a = x * 2

    def mid(t):
        b = t + a

        def leaf(u):
            return u * a * b
        return leaf(t)
    return mid(x)


@pytest.mark.parametrize("f", [lambda_called, lambda_called_directly, nested_def_with_defaults,
                               nested_def_with_loop_and_branch, nested_def_calls_nested_def,
                               nested_closure_two_levels])
def test_lambdas_and_nested_defs(f):
    check(f, 1.3)


def late_binding(x):
    p = x
    g = lambda t: p * t  # noqa: E731
    a = g(1.0)
    p = x * x  # a closure reads `p` when it is called, not when it is made
    b = g(1.0)
    return a + 10 * b


def late_binding_in_loop(x):
    acc = x
    g = lambda t: acc * t  # noqa: E731
    for _ in range(3):
        acc = g(acc)  # each call reads the current `acc`
    return acc


def free_name_first_bound_in_loop(x):
    g = lambda t: q * t  # noqa: E731,F821
    s = 0.0
    for i in range(3):
        q = x * (i + 1)
        s = s + g(x)
    return s


def lambda_made_in_loop(x):
    s = 0.0
    for i in range(4):
        f = lambda t: t * i + x  # noqa: E731
        s = s + f(x)
    return s


def default_captures_loop_value(x):
    fs_sum = 0.0
    k = 5.0
    for i in range(3):
        f = lambda t, i=i, k=k: t * i + k  # noqa: E731  (defaults: the values when it is made)
        k = k * x
        fs_sum = fs_sum + f(x)
    return fs_sum


def lambda_after_continue_and_return(x):
    s = 0.0
    for i in range(4):
        if i == 1:
            continue  # (the statements after it are copied into the branch that goes on)
        g = lambda t: t * i  # noqa: E731
        if i == 3:
            return s + g(x)
        s = s + g(x) * x
    return s


def closure_in_while(x):
    g = lambda t: t * x  # noqa: E731
    y, n = x, 0
    while n < 4 and y < 50.0:
        y = g(y) + 1.0
        n = n + 1
    return y


def closure_in_branches(x):
    g = lambda t: t * 2  # noqa: E731
    if x > 0:
        y = g(x)
    else:
        y = g(-x) * x
    return y


@pytest.mark.parametrize("f", [late_binding, late_binding_in_loop, free_name_first_bound_in_loop,
                               lambda_made_in_loop, default_captures_loop_value, lambda_after_continue_and_return,
                               closure_in_while,
                               closure_in_branches])
def test_closures_read_their_free_names_at_call_time(f):
    check(f, 1.3)
    check(f, -0.7)


def test_late_binding_values_are_pythons():
    for f in (late_binding, late_binding_in_loop, free_name_first_bound_in_loop, default_captures_loop_value):
        # the gradient code runs the forward pass: its value is Python's
        check(f, 0.9)
    assert grad(late_binding)(2.0) == pytest.approx(1.0 + 10 * 2 * 2.0)


def factories(x):
    f = make_scaled(x)
    return f(3.0) + make_poly(1.0, x)(x) + compose(np.sin, make_scaled(2.0))(x)


def function_passed_to_helper(x):
    return apply(lambda t: t * x, x) + apply(np.sin, x) + apply_twice(make_scaled(x), 2.0)


def closure_reads_array_in_loop(w):
    b = np.zeros(3)
    loss = lambda v: np.sum((v - b) ** 2)  # noqa: E731
    total = 0.0
    for i in range(3):
        b[i] = 1.0  # the closure sees the written array
        total = total + loss(w)
    return total


def closure_reads_array_after_loop_and_branch(w):
    b = np.zeros(3)
    loss = lambda v: np.sum((v - b) ** 2)  # noqa: E731
    total = 0.0
    for i in range(3):
        b[i] = w[i] * 2
        total = total + loss(w)
    if w[0] > 0:
        b[0] = w[1]
    else:
        b[1] = w[2]
    return total + loss(w * 3)


def writes_then_calls(a, g):
    for i in range(3):
        a[i] = a[i] + 1.0
    return g()


def closure_reads_array_a_helper_wrote(w):
    a = np.zeros(3)
    g = lambda: np.sum(a * w)  # noqa: E731
    return writes_then_calls(a, g)


def rebinds_own_name(s, g):
    for _ in range(3):
        s = s + g()  # the helper's `s`; the closure reads the caller's
    return s


def closure_reads_name_a_helper_rebinds(w):
    s = w[0]
    return rebinds_own_name(s, lambda: s * w[1])


@pytest.mark.parametrize("f, arg", [(factories, 1.3), (function_passed_to_helper, 1.3),
                                    (closure_reads_array_in_loop, V[:3]),
                                    (closure_reads_array_after_loop_and_branch, V[:3]),
                                    (closure_reads_array_after_loop_and_branch, -V[:3]),
                                    (closure_reads_array_a_helper_wrote, V[:3]),
                                    (closure_reads_name_a_helper_rebinds, V[:3])])
def test_factories_and_helpers(f, arg):
    check(f, arg)


def test_grad_of_a_lambda():
    check(lambda w, k=2.0: k * np.sum(w ** 3), V)
    sq = lambda w: np.sum(np.sin(w) * w)  # noqa: E731
    check(sq, V)
    np.testing.assert_allclose(grad(lambda w: np.sum(w * w))(V), 2 * V)


def make_loss(data):
    def loss(w):
        return np.sum((w - data) ** 2 * np.cos(w))
    return loss


def test_grad_of_a_closure_made_by_a_factory():
    check(make_loss(np.array([1.0, -2.0, 0.5])), V[:3])


# ---------------------------------------------------------------------------------------------
# sequences of functions known when the code is compiled: loops over them are unrolled
# ---------------------------------------------------------------------------------------------

def relu(t):
    return np.maximum(t, 0.0)


ACTIVATIONS = [np.tanh, relu, np.sin]
BY_NAME = {"tanh": np.tanh, "relu": relu}


def loop_over_global_functions(x):
    for f in ACTIVATIONS:
        x = f(x) * 1.5
    return np.sum(x)


def loop_over_display_of_functions(x):
    s = 0.0
    for f in (np.sin, lambda t: t * t, relu):
        if np.sum(x) > 0:
            s = s + np.sum(f(x))
        else:
            s = s - np.sum(f(x))
    return s


def zip_with_functions(x, Ws):
    for W, act in zip(Ws, ACTIVATIONS):  # stops at the shorter, as zip does
        x = act(W @ x)
    return np.sum(x)


def functions_by_constant_key(x):
    return np.sum(BY_NAME["tanh"](x) + ACTIVATIONS[2](x))


def enumerate_functions_and_reduce(x):
    s = 0.0
    for i, f in enumerate(ACTIVATIONS):
        s = s + i * np.sum(f(x))
    return s + np.sum(reduce(lambda acc, f: f(acc), ACTIVATIONS, x)) + sum(np.sum(f(x)) for f in ACTIVATIONS)


@pytest.mark.parametrize("f, args", [(loop_over_global_functions, (V,)), (loop_over_display_of_functions, (V,)),
                                     (loop_over_display_of_functions, (-V,)),
                                     (zip_with_functions, (V[:3], [np.eye(3) * 0.5, np.ones((3, 3)) * 0.3])),
                                     (functions_by_constant_key, (V,)), (enumerate_functions_and_reduce, (V,))])
def test_loops_over_functions_are_unrolled(f, args):
    check(f, *args)


def run_layers(layers, x):
    for W, act in layers:
        x = act(W @ x)
    return x


def layers_of(w):
    return [(np.eye(3) * w[0], np.tanh), (np.full((3, 3), 0.2), relu), (np.eye(3), lambda z: z * w[1])]


def local_list_of_layers(w):
    layers = [(np.eye(3) * w[0], np.tanh), (np.full((3, 3), 0.2), relu)]
    return np.sum(run_layers(layers, w))


def layers_from_a_factory(w):
    return np.sum(run_layers(layers_of(w), w)) + len(layers_of(w))


def pipeline_of_functions(w):
    pipeline = [partial(np.multiply, w), np.tanh, lambda z: z * 2]
    pipeline = pipeline + [np.sin]
    out = reduce(lambda acc, f: f(acc), pipeline[1:], pipeline[0](w))
    return np.sum(out) + sum(np.sum(f(w)) for f in pipeline[::-1])


def tuple_of_lambdas(x):
    fs = (lambda t: t, lambda t: 2 * t)
    return np.sum(fs[0](x) + fs[-1](x) * len(fs))


@pytest.mark.parametrize("f", [local_list_of_layers, layers_from_a_factory, pipeline_of_functions, tuple_of_lambdas])
def test_lists_and_tuples_of_function_values(f):
    check(f, V[:3])


def test_zip_with_functions_stops_at_the_shorter():
    x = V[:3]
    one = [np.eye(3) * 0.5]
    np.testing.assert_allclose(grad(zip_with_functions)(x, one), 0.5 * (1 - np.tanh(0.5 * x) ** 2))


# ---------------------------------------------------------------------------------------------
# functools.partial
# ---------------------------------------------------------------------------------------------

PARTIAL = partial(scale, 3.0)
PARTIAL_LIBRARY = partial(np.sum, axis=0)


def partials(x):
    f = partial(scale, x)
    g = functools.partial(lambda a, b: a * b, b=x)
    h = partial(f, 2.0)  # a partial of a partial
    return f(2.0) + g(3.0) + h() + PARTIAL(x)


def partial_in_loop(x):
    s = 0.0
    for i in range(3):
        f = partial(scale, i + 1.0)
        s = s + f(x * x)
    return s


def partial_of_library(A):
    return np.sum(PARTIAL_LIBRARY(A) ** 2) + np.sum(partial(np.tanh)(A))


@pytest.mark.parametrize("f, arg", [(partials, 1.3), (partial_in_loop, 1.3),
                                    (partial_of_library, np.arange(6.0).reshape(2, 3) / 5)])
def test_partial(f, arg):
    check(f, arg)


# ---------------------------------------------------------------------------------------------
# map, filter, reduce, sorted
# ---------------------------------------------------------------------------------------------

def map_in_sum(x):
    return sum(map(lambda v: v * v, x))


def map_into_list(x):
    return np.sum(np.array(list(map(np.sin, x))) * x)


def map_in_for(x):
    s = 0.0
    for v in map(lambda v: v * 2, x):
        if v > 0:
            s = s + v * v
    return s


def map_of_two_sequences(x):
    return sum(map(operator.mul, x, x[::-1])) + sum(map(scale, x, x))


def map_of_partial_in_comprehension(x):
    return sum([v * 3 for v in map(partial(scale, 2.0), x)])


def map_bound_then_consumed(x):
    m = map(np.cos, x)
    return sum(m)


def iterators_never_read(x):
    m = map(np.sin, x)  # noqa: F841 (Python never calls np.sin here)
    g = (v * v for v in x)  # noqa: F841
    return np.sum(x ** 2)


def map_in_loop_over_rows(A):
    s = 0.0
    for row in A:
        s = s + sum(map(lambda v: v * row[0], row))
    return s


def filter_in_sum(x):
    return sum(filter(lambda v: v > 0, x)) + sum(filter(None, [x[0], 0.0, x[1]]))


def filter_in_for_with_break(x):
    s = 0.0
    for v in filter(lambda v: v > -1.0, x):
        if s > 3.0:
            break
        s = s + v * v
    return s


def copyto_from_map(p):
    b = Buffer(np.zeros(4))
    copyto(b, map(lambda i: p * i, range(4)))
    return np.sum(b.copy() ** 2)


def copyto_from_map_in_loop(p):
    b = np.zeros(3)
    total = 0.0
    for k in range(2):
        copyto(b, map(lambda i: p * (i + k), range(3)))
        total = total + np.sum(b * b)
    return total


@pytest.mark.parametrize("f, arg", [(map_in_sum, V), (map_into_list, V), (map_in_for, V),
                                    (map_of_two_sequences, V), (map_of_partial_in_comprehension, V),
                                    (map_bound_then_consumed, V), (iterators_never_read, V),
                                    (map_in_loop_over_rows, V.reshape(2, 2)),
                                    (filter_in_sum, V), (filter_in_for_with_break, V),
                                    (copyto_from_map, 1.3), (copyto_from_map_in_loop, 1.3)])
def test_map_and_filter(f, arg):
    check(f, arg)


def reduce_with_lambda(x):
    return reduce(lambda a, b: a * b, x)


def reduce_with_initial(x):
    return functools.reduce(lambda a, b: a + b * b, x, 1.0)


def reduce_unrolled_over_display(x):
    return reduce(np.multiply, [x, 2 * x, np.sin(x)])


def reduce_of_matrices(A):
    return np.sum(reduce(np.dot, [A, A.T, A]))  # the shape changes along the way


def reduce_in_loop(x):
    s = 0.0
    for i in range(2):
        s = s + reduce(lambda a, b: a * b + i, x)
    return s


@pytest.mark.parametrize("f, arg", [(reduce_with_lambda, V), (reduce_with_initial, V),
                                    (reduce_unrolled_over_display, 1.3),
                                    (reduce_of_matrices, np.arange(6.0).reshape(2, 3) / 4),
                                    (reduce_in_loop, V)])
def test_reduce(f, arg):
    check(f, arg)


def test_reduce_of_empty_raises_as_python():
    def f(x):
        return reduce(lambda a, b: a + b, x[:0])
    with pytest.raises(TypeError, match="empty"):
        grad(f)(V)


def sorted_by_key(x):
    ys = sorted(x, key=lambda v: abs(v))
    return ys[0] * 1 + ys[1] * 2 + ys[2] * 3 + ys[3] * 4


def sorted_reverse(x):
    ys = sorted(list(x), reverse=True)
    return ys[0] - 2 * ys[3]


def sorted_by_key_reverse_in_loop(x):
    s = 0.0
    for k in range(2):
        ys = sorted(x * (k + 1), key=abs, reverse=True)
        s = s + ys[0] * ys[1]
    return s


def sorted_rows_by_first_entry(A):
    rows = sorted(A, key=lambda r: r[0])
    return np.sum(rows[0] * 3 + rows[1])


def max_and_min_by_key(x):
    return max(x, key=lambda v: -v) * 2 + min(x, key=abs) + max([], key=abs, default=x[0])


def sorted_key_in_branch(x):
    if x[0] > 0:
        return sorted(x, key=lambda v: v * v)[-1]
    return x[0]


@pytest.mark.parametrize("f, arg", [(sorted_by_key, V), (sorted_reverse, V), (sorted_by_key_reverse_in_loop, V),
                                    (sorted_rows_by_first_entry, np.array([[2.0, 1.0], [-1.0, 3.0], [0.5, 0.2]])),
                                    (max_and_min_by_key, V), (sorted_key_in_branch, V)])
def test_sorted_min_max_by_key(f, arg):
    check(f, arg)


def test_sorted_keeps_pythons_order_for_ties():
    def f(x):
        ys = sorted([x[0], x[1], x[2]], key=lambda v: round(v))  # 1.1 and 0.9 tie: kept in order
        return ys[0] * 1 + ys[1] * 10 + ys[2] * 100

    x = np.array([1.1, 0.9, 3.0])
    np.testing.assert_allclose(grad(f)(x), [1.0, 10.0, 100.0])
    check(f, x)


# ---------------------------------------------------------------------------------------------
# itertools
# ---------------------------------------------------------------------------------------------

def zip_with_count(x):
    s = 0.0
    for i, v in zip(itertools.count(1), x):
        s = s + i * v
    return s + sum(itertools.islice(x, 2)) + sum(itertools.islice(x, 1, None, 2))


def islice_of_count_in_comprehension(x):
    return sum([x[k] * k for k in itertools.islice(itertools.count(0, 2), 2)])


def endless_count_with_break(x):
    s = 0.0
    for i in itertools.count():
        if i >= 3:
            break
        s = s + x[i] * i
    return s


def chains(x):
    a = sum(itertools.chain(x, [1.0, x[0]]))
    b = sum(v * v for v in itertools.chain.from_iterable([x, x[:2]]))
    return a + b


def accumulates(x):
    a = list(itertools.accumulate(x))
    b = list(itertools.accumulate(x, operator.mul, initial=2.0))
    c = list(itertools.accumulate(x, max))
    return a[2] + b[3] + c[-1]


def repeats(x):
    s = 0.0
    for a, b in zip(x, itertools.repeat(2.0)):
        s = s + a * b
    return s + sum(itertools.repeat(x[0], 3)) + sum([r * r for r in itertools.repeat(x[1], 2)])


def zip_longests(x):
    s = 0.0
    for a, b in itertools.zip_longest(x, [1.0, x[0]], fillvalue=3.0):
        s = s + a * b
    return s


def copyto_from_islice_of_count(p):
    b = Buffer(np.zeros(3))
    copyto(b, (p * k for k in itertools.islice(itertools.count(1), 3)))
    return np.sum(b.copy() ** 2)


def next_of_iterators(x):
    return next(v for v in x if v > 0) + next(iter(x)) + next((v for v in x if v > 10), x[1])


@pytest.mark.parametrize("f, arg", [(zip_with_count, V), (islice_of_count_in_comprehension, V),
                                    (endless_count_with_break, V), (chains, V), (accumulates, V), (repeats, V),
                                    (zip_longests, V), (copyto_from_islice_of_count, 1.3), (next_of_iterators, V)])
def test_itertools(f, arg):
    check(f, arg)


# ---------------------------------------------------------------------------------------------
# function values that cannot be followed: located refusals
# ---------------------------------------------------------------------------------------------

def in_array(x):
    fs = np.array([lambda t: t, lambda t: 2 * t])  # <-- HERE
    return fs[0](x)


def returns_lambda(x):
    return lambda t: t * x  # <-- HERE


def to_library_function(x):
    return np.sum(np.apply_along_axis(lambda t: t * 2, 0, x))  # <-- HERE


def chosen_by_branch(x):
    if x > 0:
        g = lambda t: t  # noqa: E731
    else:
        g = lambda t: 2 * t  # noqa: E731
    return g(x)  # <-- HERE


def writes_enclosing_array(x):
    a = np.zeros(3)

    def put(v):
        a[0] = v  # <-- HERE
    put(x)
    return np.sum(a)


def appends_to_enclosing_list(x):
    xs = []

    def add(v):
        xs.append(v)  # <-- HERE
    add(x)
    return sum(xs)


def recursive(x):
    def fact(n):
        return 1.0 if n <= 1 else n * fact(n - 1)  # <-- HERE
    return fact(3) * x


def iterator_read_twice(x):
    m = map(lambda v: v * 2, [x, x])  # <-- HERE
    return sum(m) + sum(m)


def free_name_not_yet_bound(x):
    g = lambda t: t * q  # noqa: E731  # <-- HERE
    r = g(x)
    q = 2.0
    return r + q


def rebound_in_loop_used_after(x):
    for i in range(3):
        g = lambda t: t * i  # noqa: E731
    return g(x)  # <-- HERE


def break_in_loop_over_functions(x):
    for f in ACTIVATIONS:  # <-- HERE
        if np.sum(x) > 10:
            break
        x = f(x)
    return np.sum(x)


def function_from_list_by_runtime_index(x):
    fs = ACTIVATIONS
    k = int(x[0] > 0)
    return np.sum(fs[k](x))  # <-- HERE


def list_of_functions_by_runtime_index(x):
    fs = [np.sin, lambda t: t]
    return np.sum(fs[int(x[0] > 0)](x))  # <-- HERE


def endless_comprehension(x):
    return sum(itertools.count())  # <-- HERE


REFUSED = [(in_array, UnsupportedSyntaxError, "constant indices"), (returns_lambda, UnsupportedSyntaxError, "returns a"),
           (to_library_function, UnsupportedSyntaxError, "np.apply_along_axis"),
           (chosen_by_branch, UnsupportedSyntaxError, "different functions"),
           (writes_enclosing_array, MutationError, "writes into `a`"),
           (appends_to_enclosing_list, MutationError, "`xs`"), (recursive, CompileError, "recursive"),
           (iterator_read_twice, UnsupportedSyntaxError, "more than once"),
           (free_name_not_yet_bound, CompileError, "before the enclosing function assigns"),
           (rebound_in_loop_used_after, UnsupportedSyntaxError, "only inside it"),
           (endless_comprehension, UnsupportedSyntaxError, "never ends"),
           (break_in_loop_over_functions, UnsupportedSyntaxError, "unrolled"),
           (function_from_list_by_runtime_index, UnsupportedSyntaxError, "run-time index"),
           (list_of_functions_by_runtime_index, UnsupportedSyntaxError, "constant indices")]


@pytest.mark.parametrize("f, error, words", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_function_values_that_cannot_be_followed_are_refused_at_their_line(f, error, words):
    lines, first = inspect.getsourcelines(f)
    line = first + next(i for i, text in enumerate(lines) if "# <-- HERE" in text)
    with pytest.raises(error) as info:
        grad(f)(1.3)
    assert isinstance(info.value, AdjointCompilerError)
    assert words in str(info.value)
    assert info.value.loc is not None and info.value.loc.line == line, (info.value.loc, line)


def calls_then_writes(a, g):
    s = 0.0
    for i in range(3):
        s = s + g()  # from the second trip on, Python's closure sees the write below
        a[i] = 1.0
    return s


def test_closure_read_inside_a_loop_that_writes_its_array_is_refused():
    def f(w):
        a = np.zeros(3)
        return calls_then_writes(a, lambda: np.sum(a * w))
    with pytest.raises(MutationError, match="a loop around this call may write into"):
        grad(f)(V[:3])


def make_reader(a):
    return lambda w: np.sum(a * w)


def test_write_after_a_factory_returned_is_refused():
    def f(x):
        a = np.ones(3)
        g = make_reader(a)
        a[0] = 5.0  # Python's closure would see this write through the factory's own name
        return g(x)
    with pytest.raises(MutationError, match="written after the function that reads it"):
        grad(f)(V[:3])


# ---------------------------------------------------------------------------------------------
# second derivatives: the generated gradient (plain Python) differentiates again
# ---------------------------------------------------------------------------------------------

def second_order_mix(x):
    g = lambda t: t * x[0]  # noqa: E731
    s = sum(map(g, x)) + sorted(x, key=abs)[0] ** 3
    return s + reduce(lambda a, b: a * b, x) + np.sum(partial(np.multiply, x)(x) ** 2)


def test_hessian_through_functions_as_values():
    from adjoint_compiler import hessian

    g = grad(second_order_mix)
    eps = 1e-6
    expected = np.array([(g(V + eps * e) - g(V - eps * e)) / (2 * eps) for e in np.eye(len(V))])
    np.testing.assert_allclose(hessian(second_order_mix)(V), expected, rtol=1e-5, atol=1e-6)


def test_forward_mode_through_functions_as_values():
    from adjoint_compiler import jvp

    t = np.array([1.0, 0.5, -0.2, 0.3])
    eps = 1e-6
    value, tangent = jvp(second_order_mix, (V,), (t,))
    assert value == pytest.approx(second_order_mix(V))
    expected = (second_order_mix(V + eps * t) - second_order_mix(V - eps * t)) / (2 * eps)
    assert tangent == pytest.approx(expected, rel=1e-6)

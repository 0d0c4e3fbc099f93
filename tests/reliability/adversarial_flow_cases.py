"""Programs for test_adversarial_flow.py, written as outside users write numerical code: control
flow (zero-trip and one-trip loops, data-dependent `while`, break/continue/early return, helpers in
loops, loop-carried tuples and lists), broadcasting, reductions, softmax/logsumexp/sigmoid in many
spellings, losses, `np.linalg`, and special points (ties, zeros, branches not taken)."""
# ruff: noqa: E731
from __future__ import annotations

import dataclasses
import math

import numpy as np

CASES: list = []


@dataclasses.dataclass
class Case:
    func: object
    args: list
    wrt: int = 0
    works: bool = False
    expect: object = None   # the exact gradient where finite differences do not apply (kinks)

    @property
    def name(self):
        return self.func.__name__


def case(*args, wrt=0, works=False, expect=None):
    def register(f):
        CASES.append(Case(f, list(args), wrt, works, expect))
        return f
    return register


_r = np.random.default_rng(12)


def A(*shape, lo=-1.0, hi=1.0):
    return _r.uniform(lo, hi, size=shape)


def P(*shape):
    return _r.uniform(0.5, 2.0, size=shape)


# ---------------------------------------------------------------------------------------------
# loops: zero trips, one trip, while, break, continue, early return
# ---------------------------------------------------------------------------------------------

@case(A(4), 0)
def zero_trip_range(x, n):
    s = np.sum(x)
    for i in range(n):
        s = s * x[i]
    return s


@case(A(4), 1)
def one_trip_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x[i]) * x[i + 1]
    return s


@case(A(3))
def loop_over_empty_slice(x):
    s = 1.0
    for v in x[3:]:
        s = s * v
    return s + np.sum(x ** 2)


@case(P(3))
def while_data_dependent(x):
    s = np.sum(x)
    while s < 50.0:
        s = s * 1.7 + np.prod(x)
    return s


@case(P(3) * 40)
def while_runs_zero_times(x):
    s = np.sum(x)
    while s < 1.0:
        s = s * 2.0
    return s * x[0]


@case(A(6))
def break_on_data(x):
    s = 0.0
    for i in range(6):
        if x[i] > 0.7:
            break
        s = s + x[i] ** 2
    return s


@case(A(6))
def continue_on_data(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + np.exp(v)
    return s


@case(A(8))
def many_breaks_continues(x):
    s = 0.0
    for i in range(8):
        if x[i] < -0.8:
            continue
        if x[i] > 0.9:
            break
        if i == 3:
            continue
        if s > 2.0:
            break
        if x[i] * s > 0.5:
            continue
        s = s + x[i] * x[i] + 0.1
    return s


def _early(v):
    if v > 0.3:
        return v * 2.0
    if v < -0.3:
        return -v
    return v ** 3


@case(A(6))
def helper_with_early_returns_in_loop(x):
    s = 0.0
    for v in x:
        s = s + _early(v)
    return s


@case(A(5))
def early_return_in_loop(x):
    for i in range(5):
        if x[i] > 0.5:
            return x[i] * np.sum(x)
    return np.sum(x ** 2)


@case(A(3, 4))
def nested_break(x):
    s = 0.0
    for i in range(3):
        for j in range(4):
            if x[i, j] > 0.6:
                break
            s = s + x[i, j] * (i + 1)
    return s


@case(A(3, 4))
def nested_continue_outer_flag(x):
    s = 0.0
    for i in range(3):
        stop = False
        for j in range(4):
            if x[i, j] < -0.5:
                stop = True
                break
            s = s + np.sin(x[i, j])
        if stop:
            continue
        s = s * 1.1
    return s


@case(A(4, 3))
def nested_dead_inner(x):
    s = 0.0
    t = 0.0
    for i in range(4):
        for j in range(3):
            t = t + x[i, j]
        s = s + x[i, 0] ** 2
    return s


@case(P(3))
def while_true_break(x):
    k = 0
    s = 1.0
    while True:
        s = s * x[k % 3]
        k += 1
        if k >= 5:
            break
    return s


@case(A(4))
def while_with_index(x):
    i = 0
    s = 0.0
    while i < len(x) and x[i] < 0.8:
        s = s + x[i] * 3.0
        i += 1
    return s


@case(A(4))
def recurrence_tuple(x):
    a, b = x[0], x[1]
    for k in range(5):
        a, b = b, a * 0.5 + b * np.tanh(x[k % 4])
    return a + b


@case(A(3))
def recurrence_list(x):
    hist = [x]
    for _ in range(3):
        hist.append(np.sin(hist[-1]) + x)
    return np.sum(hist[-1] * hist[1])


@case(A(3))
def loop_carried_list_of_scalars(x):
    vals = []
    for i in range(3):
        vals.append(x[i] * (i + 1.0))
    return sum(vals) + max(vals)


@case(A(4), 0)
def zero_trip_then_use_loop_var_default(x, n):
    last = x[0]
    for i in range(n):
        last = x[i] * 2
    return last * x[1]


@case(np.array([0.0, 1.0, 2.0]), 0, works=True)
def sqrt_only_in_zero_trip_loop(p, n):
    t = np.sqrt(p[0])
    s = np.sum(p)
    for _ in range(n):
        s = s + t
    return s


@case(np.array([0.0, 1.0, 2.0]), works=True)
def sqrt_in_branch_not_taken(p):
    t = np.sqrt(p[0])
    if p[1] > 5.0:
        return t * p[1]
    return np.sum(p ** 2)


@case(np.array([0.0, 1.0]), works=True)
def log_in_branch_not_taken(p):
    t = np.log(p[0])
    s = p[1] * 3.0
    if p[1] < 0.0:
        s = s + t
    return s


@case(np.array([0.0, 2.0]), 0, works=True)
def sqrt_in_loop_body_zero_trips(p, n):
    s = p[1]
    for _ in range(n):
        s = s + np.sqrt(p[0])
    return s


@case(np.array([0.0, 2.0]), works=True)
def sqrt_used_times_zero(p):
    t = np.sqrt(p[0])
    return p[1] ** 2 + 0.0 * p[1]


@case(np.array([0.0, 2.0]))
def arcsin_unselected(p):
    t = np.arcsin(p[0] + 1.0)
    flag = p[1] > 10.0
    return np.where(flag, t, p[1] * 2.0)


@case(np.array([-1.0, 2.0, 3.0]))
def where_nan_unselected(x):
    return np.sum(np.where(x > 0, np.sqrt(np.abs(x)) * np.log(np.maximum(x, 1e-300)), 0.0))


@case(np.array([-1.0, 2.0, 3.0]))
def where_safe_log(x):
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, np.log(safe), x))


# ---------------------------------------------------------------------------------------------
# branches on data
# ---------------------------------------------------------------------------------------------

@case(A(3))
def branch_on_sum(x):
    if np.sum(x) > 0:
        y = x * 2
    else:
        y = x ** 2
    return np.sum(y)


@case(A(3))
def branch_elif_chain(x):
    m = np.mean(x)
    if m > 0.5:
        r = np.exp(x)
    elif m > 0.0:
        r = np.sin(x)
    elif m > -0.5:
        r = x * x
    else:
        r = -x
    return np.sum(r)


@case(A(4))
def ternary_expression(x):
    s = 0.0
    for v in x:
        s = s + (v if v > 0 else 0.1 * v)
    return s


@case(A(3))
def branch_assigns_tuple(x):
    if x[0] > 0:
        a, b = x[1], x[2]
    else:
        a, b = x[2], x[1] * 2
    return a * b


# ---------------------------------------------------------------------------------------------
# broadcasting and shapes
# ---------------------------------------------------------------------------------------------

@case(A(3, 1), A(1, 4))
def outer_broadcast(a, b):
    return np.sum(np.sin(a * b))


@case(A(3, 1), A(1, 4), wrt=1)
def outer_broadcast_wrt_b(a, b):
    return np.sum((a - b) ** 2)


@case(A(4))
def pairwise_diffs(x):
    d = x[:, None] - x[None, :]
    return np.sum(d ** 2)


@case(A(4))
def pairwise_newaxis(x):
    d = x[:, np.newaxis] * x[np.newaxis, :]
    return np.sum(np.tanh(d))


@case(A(3, 2))
def pairwise_distances(X):
    d = X[:, None, :] - X[None, :, :]
    return np.sum(np.sqrt(np.sum(d ** 2, axis=-1) + 1e-3))


@case(A(3, 4))
def keepdims_center(X):
    c = X - X.mean(axis=1, keepdims=True)
    return np.sum(c ** 3)


@case(A(3, 4))
def keepdims_normalize(X):
    n = np.sqrt(np.sum(X ** 2, axis=0, keepdims=True))
    return np.sum((X / n) * np.arange(4.0))


@case(A(3, 4))
def standardize(X):
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    return np.sum(((X - mu) / sd) ** 2 * np.arange(1.0, 5.0))


@case(A(3), A(2, 3), wrt=0)
def vector_plus_matrix(b, W):
    return np.sum(np.tanh(W + b))


@case(A(2, 3), 2.0, wrt=1)
def scalar_vs_array(W, s):
    return np.sum(W * s + s ** 2)


@case(A(4), A(4))
def scalar_reshape_broadcast(x, y):
    return np.sum(x.reshape(4, 1) * y.reshape(1, 4))


@case(A(2, 3, 4))
def negative_axis_reductions(x):
    return np.sum(np.max(x, axis=-1) * np.sum(x, axis=-2).mean(axis=-1, keepdims=True))


@case(A(2, 3))
def sum_axis_tuple(x):
    return np.sum(np.sum(x ** 2, axis=(0, 1), keepdims=True) * x)


@case(A(3))
def broadcast_to_then_sum(x):
    return np.sum(np.broadcast_to(x, (4, 3)) * np.arange(12.0).reshape(4, 3))


@case(A(1, 3))
def one_by_n_times_n(x):
    return np.sum(x * np.arange(3.0))


@case(A(3, 1))
def column_plus_row_from_same(x):
    return np.sum((x + x.T) ** 2)


@case(A(1))
def size_one_broadcast(x):
    return np.sum(x * np.ones(5) + x)


@case(A(1, 1))
def one_by_one(x):
    return np.sum(np.exp(x * np.arange(6.0).reshape(2, 3)))


@case(A(3))
def expand_dims_sum(x):
    return np.sum(np.expand_dims(x, 0) * np.expand_dims(x, 1))


@case(A(2, 3))
def sum_keepdims_then_divide(x):
    e = np.exp(x)
    return np.sum(e / e.sum(-1, keepdims=True) * np.array([[1.0, 2.0, 3.0]]))


@case(A(4))
def inplace_broadcast_add(x):
    y = np.zeros((3, 4))
    y += x
    return np.sum(y * np.arange(12.0).reshape(3, 4))


@case(A(3, 4))
def mean_no_keepdims_broadcast(x):
    return np.sum((x - np.mean(x, axis=0)) ** 2)


@case(A(3, 4))
def mean_axis1_needs_newaxis(x):
    return np.sum((x - np.mean(x, axis=1)[:, None]) ** 2)


@case(A(2, 2))
def square_same_shape_trap(x):
    return np.sum(x * x.sum(axis=0) + x * x.sum(axis=1, keepdims=True))


@case(A(3, 3))
def square_transpose_broadcast(x):
    return np.sum(x.T * x[0] + x * x[:, 0:1])


@case(A(2, 3))
def atleast2d(x):
    return np.sum(np.atleast_2d(x[0]) * x)


@case(A(4))
def outer_function(x):
    return np.sum(np.outer(x, x) * np.arange(16.0).reshape(4, 4))


# ---------------------------------------------------------------------------------------------
# softmax, logsumexp, sigmoid in many spellings
# ---------------------------------------------------------------------------------------------

@case(A(5) * 3)
def softmax_plain(z):
    e = np.exp(z)
    p = e / np.sum(e)
    return np.sum(p * np.arange(5.0))


@case(A(5) * 3)
def softmax_stable(z):
    e = np.exp(z - np.max(z))
    p = e / e.sum()
    return p @ np.arange(5.0)


@case(A(2, 4) * 3)
def softmax_rows(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    return np.sum(p * np.arange(8.0).reshape(2, 4))


@case(A(2, 4) * 3)
def softmax_cols(z):
    e = np.exp(z - np.max(z, axis=0))
    p = e / np.sum(e, axis=0)
    return np.sum(p * np.arange(8.0).reshape(2, 4))


@case(A(5) * 3)
def logsumexp_stable(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


@case(A(5) * 3)
def logsumexp_plain(z):
    return np.log(np.sum(np.exp(z)))


@case(A(2, 3) * 3)
def logsumexp_axis(z):
    m = z.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(z - m).sum(axis=1, keepdims=True))
    return np.sum(lse * np.array([[1.0], [2.0]]))


@case(A(2, 3) * 3)
def logsumexp_axis_nokeep(z):
    m = np.max(z, axis=1)
    lse = m + np.log(np.sum(np.exp(z - m[:, None]), axis=1))
    return np.sum(lse * np.array([1.0, 2.0]))


@case(A(4) * 3)
def log_softmax(z):
    lp = z - np.log(np.sum(np.exp(z)))
    return np.sum(lp * np.arange(4.0))


@case(A(4) * 3)
def log_softmax_reuse_shift(z):
    s = z - np.max(z)
    lp = s - np.log(np.sum(np.exp(s)))
    return lp[2] + np.sum(s) * 0.1


@case(A(4) * 3)
def log_sigmoid_log1p(z):
    return np.sum(-np.log1p(np.exp(-z)))


@case(A(4) * 3)
def log_sigmoid_log(z):
    return np.sum(np.log(1 + np.exp(-z)) * np.arange(4.0))


@case(A(4) * 3)
def softplus_log1p(z):
    return np.sum(np.log1p(np.exp(z)) * z)


@case(A(4) * 3)
def softplus_logaddexp(z):
    return np.sum(np.logaddexp(0.0, z) * np.arange(4.0))


@case(A(4) * 3)
def sigmoid_reuse_z(z):
    s = 1 / (1 + np.exp(-z))
    return np.sum(s * z) + np.sum(np.exp(-z)) * 0.01


@case(A(4) * 3)
def sigmoid_tanh(z):
    s = 0.5 * (1 + np.tanh(z / 2))
    return np.sum(s * np.arange(4.0))


@case(A(4) * 3)
def sigmoid_exp_form(z):
    e = np.exp(z)
    s = e / (1.0 + e)
    return np.sum(s ** 2) + np.sum(e) * 0.01


@case(A(4) * 3)
def sigmoid_division_reversed(z):
    s = 1.0 / (np.exp(-z) + 1.0)
    return np.sum(np.log(s))


@case(A(4) * 3)
def sigmoid_then_log_one_minus(z):
    s = 1 / (1 + np.exp(-z))
    return -np.sum(np.log(1 - s) + np.log(s))


@case(A(4) * 3)
def one_minus_sigmoid(z):
    return np.sum(1.0 - 1.0 / (1.0 + np.exp(z)))


@case(A(4) * 3)
def log_one_plus_exp_minus_reused(z):
    t = np.exp(-z)
    return np.sum(np.log(1 + t) + t)


@case(A(4) * 3)
def logaddexp_pair(z):
    return np.sum(np.logaddexp(z, 2 * z))


@case(A(3) * 3)
def softmax_cross_entropy(z):
    y = np.array([0.0, 1.0, 0.0])
    lse = np.log(np.sum(np.exp(z)))
    return -np.sum(y * (z - lse))


@case(A(3) * 3)
def softmax_log_of_softmax(z):
    p = np.exp(z) / np.sum(np.exp(z))
    return -np.log(p[1])


@case(A(4) * 3)
def softmax_temperature_loop(z):
    s = 0.0
    for t in (0.5, 1.0, 2.0):
        e = np.exp(z / t)
        s = s + np.sum(e / np.sum(e) * np.arange(4.0))
    return s


@case(A(3) * 3, A(3))
def sigmoid_of_dot(w, x):
    z = w @ x
    return np.log(1 / (1 + np.exp(-z)))


@case(np.array([500.0, -500.0, 0.0]))
def logsumexp_stable_large(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


@case(np.array([40.0, -40.0, 0.5]))
def logaddexp_large(z):
    return np.sum(np.logaddexp(0.0, -z))


# ---------------------------------------------------------------------------------------------
# models and losses
# ---------------------------------------------------------------------------------------------

_X = A(5, 3)
_Y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])


@case(A(3), _X, _Y)
def logistic_loss(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


@case(A(3), _X, _Y)
def logistic_loss_logaddexp(w, X, y):
    z = X.dot(w)
    return np.sum(np.logaddexp(0, z) - y * z) / len(y)


@case(A(3), _X, _Y)
def least_squares(w, X, y):
    r = X @ w - y
    return 0.5 * r @ r


@case(A(3), _X, _Y)
def ridge(w, X, y):
    return np.linalg.norm(X @ w - y) ** 2 + 0.1 * np.sum(w ** 2)


@case(A(3, 4), A(4), _X)
def mlp_tanh(W1, b1, X):
    h = np.tanh(X @ W1 + b1)
    return np.sum(h ** 2)


@case(A(4), A(3, 4), _X, wrt=0)
def mlp_bias_grad(b1, W1, X):
    h = np.maximum(X @ W1 + b1, 0.0)
    return np.sum(h @ np.arange(4.0))


@case(A(3, 3) * 0.5, A(4, 3))
def rnn_loop(W, xs):
    h = np.zeros(3)
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h)


@case(A(3, 3) * 0.5, A(4, 3))
def rnn_loop_collect(W, xs):
    hs = []
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


@case(A(3, 3) * 0.5, A(0, 3))
def rnn_zero_steps(W, xs):
    h = np.ones(3)
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h * W[0])


@case(A(2, 3), _X[:, :2], _Y)
def softmax_regression(W, X, y):
    logits = X @ W
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    idx = y.astype(int)
    return -np.mean(logp[np.arange(len(y)), idx])


@case(A(3), _X, _Y)
def hinge_loss(w, X, y):
    m = 1 - (2 * y - 1) * (X @ w)
    return np.sum(np.maximum(m, 0))


@case(A(3))
def gd_steps_inside(w0):
    w = w0
    for _ in range(3):
        g = 2 * (w - 1.0)
        w = w - 0.1 * g
    return np.sum(w ** 2)


@case(A(2))
def newton_iterations(x0):
    x = x0
    for _ in range(4):
        x = x - (x ** 3 - 2.0) / (3 * x ** 2 + 1.0)
    return np.sum(x)


@case(P(3))
def fixed_point_while(a):
    x = np.ones(3)
    it = 0
    while np.max(np.abs(np.cos(a * x) - x)) > 1e-3 and it < 50:
        x = np.cos(a * x)
        it += 1
    return np.sum(x)


@case(A(4))
def huber(x):
    d = 0.5
    a = np.abs(x)
    return np.sum(np.where(a <= d, 0.5 * x ** 2, d * (a - 0.5 * d)))


@case(A(4) + 2.0, A(4))
def poisson_nll(log_rate, y):
    return np.sum(np.exp(log_rate) - y * log_rate)


@case(A(3), P(3), wrt=1)
def gaussian_nll(mu, sigma):
    x = np.array([0.1, 0.2, 0.3])
    return np.sum(np.log(sigma) + 0.5 * ((x - mu) / sigma) ** 2)


# ---------------------------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------------------------

def _spd(n):
    m = A(n, n)
    return m @ m.T + n * np.eye(n)


@case(_spd(3))
def inv_trace(M):
    return np.trace(np.linalg.inv(M))


@case(_spd(3), A(3))
def solve_dot(M, b):
    return np.sum(np.linalg.solve(M, b) * b)


@case(_spd(3), A(3), wrt=1)
def solve_wrt_rhs(M, b):
    return np.sum(np.linalg.solve(M, b) ** 2)


@case(_spd(3), A(3, 2))
def solve_matrix_rhs(M, B):
    return np.sum(np.linalg.solve(M, B) * np.arange(6.0).reshape(3, 2))


@case(_spd(3))
def det_log(M):
    return np.log(np.linalg.det(M))


@case(A(3, 3))
def det_general(M):
    return np.linalg.det(M) ** 2


@case(_spd(3))
def slogdet_logabs(M):
    sign, logdet = np.linalg.slogdet(M)
    return sign * logdet


@case(A(3, 3))
def slogdet_index(M):
    return np.linalg.slogdet(M)[1]


@case(A(4))
def norm_vector(x):
    return np.linalg.norm(x)


@case(A(4))
def norm_ord1(x):
    return np.linalg.norm(x, ord=1)


@case(A(4))
def norm_inf(x):
    return np.linalg.norm(x, np.inf)


@case(A(4))
def norm_ord3(x):
    return np.linalg.norm(x, 3)


@case(A(3, 4))
def norm_axis1(x):
    return np.sum(np.linalg.norm(x, axis=1) * np.arange(3.0))


@case(A(3, 4))
def norm_axis0_keepdims(x):
    return np.sum(x / np.linalg.norm(x, axis=0, keepdims=True) * np.arange(12.0).reshape(3, 4))


@case(A(3, 3))
def norm_fro(x):
    return np.linalg.norm(x, "fro")


@case(A(3, 3))
def norm_matrix_default(x):
    return np.linalg.norm(x) ** 2


@case(A(3, 3))
def norm_matrix_2(x):
    return np.linalg.norm(x, 2)


@case(A(3, 3))
def norm_matrix_nuc(x):
    return np.linalg.norm(x, "nuc")


@case(A(3, 3))
def norm_matrix_ord1(x):
    return np.linalg.norm(x, 1)


@case(A(3, 4))
def norm_axis_neg(x):
    return np.sum(np.linalg.norm(x, ord=1, axis=-1))


@case(np.zeros(3), works=True, expect=lambda x: np.zeros(3))
def norm_at_zero(x):
    return np.linalg.norm(x)


@case(_spd(3))
def inv_in_loop(M):
    s = 0.0
    B = M
    for _ in range(2):
        B = np.linalg.inv(B) + np.eye(3)
        s = s + np.sum(B)
    return s


@case(A(3, 3), A(3))
def matvec_chain(M, x):
    return x @ M @ M.T @ x


@case(_spd(2))
def cholesky_logdet(M):
    L = np.linalg.cholesky(M)
    return 2 * np.sum(np.log(np.diag(L)))


@case(_spd(3))
def eigh_sum(M):
    w, v = np.linalg.eigh(M)
    return np.sum(w ** 2)


# ---------------------------------------------------------------------------------------------
# reductions, ties, kinks
# ---------------------------------------------------------------------------------------------

@case(np.array([1.0, 3.0, 3.0, 2.0]), works=True, expect=lambda x: np.array([0.0, 0.5, 0.5, 0.0]))
def max_ties(x):
    return np.max(x)


@case(np.array([1.0, 3.0, 3.0, 2.0]), works=True, expect=lambda x: np.array([0.0, 0.5, 0.5, 0.0]))
def amax_method_ties(x):
    return x.max()


@case(np.array([[1.0, 1.0], [0.0, 2.0]]), works=True,
      expect=lambda x: np.array([[0.5, 0.5], [0.0, 1.0]]))
def max_axis_ties(x):
    return np.sum(np.max(x, axis=1))


@case(np.array([[1.0, 1.0], [0.0, 2.0]]), works=True,
      expect=lambda x: np.array([[0.5, 0.5], [0.0, 1.0]]))
def max_axis_keepdims_ties(x):
    return np.sum(np.max(x, axis=-1, keepdims=True))


@case(np.array([2.0, 1.0, 1.0]), works=True, expect=lambda x: np.array([0.0, 0.5, 0.5]))
def min_ties(x):
    return np.min(x)


@case(np.array([0.0, -1.0, 2.0]), works=True, expect=lambda x: np.array([0.0, -1.0, 1.0]))
def abs_at_zero(x):
    return np.sum(np.abs(x))


@case(np.array([0.0, -1.0, 2.0]), works=True, expect=lambda x: np.array([0.0, -1.0, 1.0]))
def builtin_abs_loop(x):
    s = 0.0
    for v in x:
        s = s + abs(v)
    return s


@case(A(3, 4))
def argmax_index(x):
    i = np.argmax(x[0])
    return x[1, i] * x[0, i]


@case(A(4))
def sort_free_top2(x):
    a = np.max(x)
    b = np.min(x)
    return a * b


@case(A(2, 3))
def prod_axis(x):
    return np.sum(np.prod(x, axis=0))


@case(np.array([1.0, 0.0, 2.0, 3.0]))
def prod_with_zero(x):
    return np.prod(x)


@case(np.array([0.0, 0.0, 2.0]))
def prod_two_zeros(x):
    return np.prod(x)


@case(np.array([1.0, 0.0, 2.0, 3.0]))
def cumprod_zero(x):
    return np.sum(np.cumprod(x))


@case(A(2, 3))
def cumsum_axis(x):
    return np.sum(np.cumsum(x, axis=1) ** 2)


@case(A(3, 4))
def var_axis(x):
    return np.sum(np.var(x, axis=1))


@case(A(3, 4))
def std_ddof(x):
    return np.sum(np.std(x, axis=0, ddof=1))


@case(A(5))
def mean_of_squares_loop(x):
    m = 0.0
    for i, v in enumerate(x):
        m = m + (v * v - m) / (i + 1)
    return m


@case(A(2, 3))
def amax_neg_axis(x):
    return np.sum(np.amax(x, axis=-2) * np.array([1.0, 2.0, 3.0]))


@case(A(4))
def maximum_minimum(x):
    return np.sum(np.maximum(x, 0.2) + np.minimum(x, -0.2))


@case(np.array([0.5, 0.2, 0.2]), works=True, expect=lambda x: np.array([1.0, 0.5, 0.5]))
def maximum_tie_with_scalar(x):
    return np.sum(np.maximum(x, 0.2))


@case(A(4))
def clip_loss(x):
    return np.sum(np.clip(x, -0.3, 0.3) * x)


# ---------------------------------------------------------------------------------------------
# powers
# ---------------------------------------------------------------------------------------------

@case(np.array([-1.5, 0.5, 2.0]))
def int_power_negative(x):
    return np.sum(x ** 3)


@case(np.array([-1.5, 0.5, 2.0]))
def int_power_two_negative(x):
    return np.sum(x ** 2 * np.arange(3.0))


@case(np.array([-1.5, 0.5, 2.0]))
def power_float_int_exponent(x):
    return np.sum(x ** 3.0)


@case(np.array([-1.5, 0.5, 2.0]))
def np_power_int(x):
    return np.sum(np.power(x, 4))


@case(np.array([-1.5, 0.5, 2.0]))
def negative_int_power(x):
    return np.sum(x ** -2)


@case(P(3))
def sqrt_via_half(x):
    return np.sum(x ** 0.5)


@case(P(3), A(3))
def power_active_exponent(x, y):
    return np.sum(np.power(x, y))


@case(P(3), A(3), wrt=1)
def power_active_exponent_wrt_y(x, y):
    return np.sum(np.power(x, y))


@case(2.0, A(3), wrt=1)
def scalar_base_array_exp(b, y):
    return np.sum(b ** y)


@case(np.array([0.0, 1.0, 2.0]), works=True)
def square_at_zero(x):
    return np.sum(x ** 2)


@case(np.array([0.0, 1.0, 2.0]), works=True, expect=lambda x: np.zeros(3))
def power_zero_at_zero(x):
    return np.sum(x ** 0)


@case(np.array([0.0, 1.0, 2.0]), works=True)
def power_one_at_zero(x):
    return np.sum(x ** 1)


@case(np.array([0.0, 1.0, 2.0]), works=True)
def np_square_at_zero(x):
    return np.sum(np.square(x) + x * x)


@case(np.array([0.0, 1.0, 2.0]), works=True)
def power_two_float_at_zero(x):
    return np.sum(x ** 2.0)


@case(np.array([0.0, 1.0, 2.0]), works=True)
def np_power_two_at_zero(x):
    return np.sum(np.power(x, 2))


@case(np.array([0.0, 1.0, 2.0]), 2.0, works=True)
def power_exponent_argument_at_zero(x, p):
    return np.sum(x ** p)


@case(np.array([0.0, 1.0, 2.0]), 2.0, wrt=1)
def power_exponent_grad_base_zero(x, p):
    return np.sum(x ** p)


@case(np.array([-2.0, 1.0, 3.0]))
def cbrt_negative(x):
    return np.sum(np.cbrt(x))


@case(np.array([-8.0, 1.0, 3.0]))
def reciprocal(x):
    return np.sum(1.0 / x + np.reciprocal(x))


@case(A(3))
def exp2_expm1(x):
    return np.sum(np.exp2(x) + np.expm1(x) + np.log2(np.abs(x) + 1) + np.log10(x ** 2 + 1))


# ---------------------------------------------------------------------------------------------
# helpers, recurrences, containers in loops
# ---------------------------------------------------------------------------------------------

def _layer(W, h):
    return np.tanh(W @ h)


@case(A(3, 3), A(3))
def helper_in_loop(W, h):
    for _ in range(3):
        h = _layer(W, h)
    return np.sum(h)


def _step(state, x):
    a, b = state
    return (a * x + b, b - 0.1 * a)


@case(A(4))
def helper_tuple_state(x):
    st = (1.0, 0.5)
    for v in x:
        st = _step(st, v)
    return st[0] * st[1]


def _clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@case(A(6))
def helper_clamp(x):
    return sum(_clamp(v, -0.4, 0.4) * v for v in x)


@case(A(5))
def fibonacci_like(x):
    a, b = x[0], x[1]
    for k in range(2, 5):
        a, b = b, a + b * x[k]
    return b


@case(A(5))
def ema(x):
    m = 0.0
    for v in x:
        m = 0.9 * m + 0.1 * v
    return m


@case(A(4))
def zip_two_arrays(x):
    s = 0.0
    for a, b in zip(x[:-1], x[1:]):
        s = s + (b - a) ** 2
    return s


@case(A(4))
def enumerate_weights(x):
    s = 0.0
    for i, v in enumerate(x):
        s += i * v ** 2
    return s


@case(A(3, 2))
def iterate_rows_dot(X):
    s = 0.0
    for row in X:
        s = s + row @ row
    return s


@case(A(4))
def reversed_loop(x):
    s = 0.0
    for i in reversed(range(4)):
        s = s * 0.5 + x[i]
    return s


@case(A(4))
def range_step(x):
    s = 0.0
    for i in range(0, 4, 2):
        s = s + x[i] * x[i + 1]
    return s


@case(A(4))
def list_comprehension(x):
    return sum([v ** 2 for v in x if v > 0])


@case(A(4))
def dict_accumulator(x):
    d = {"a": 0.0, "b": 0.0}
    for v in x:
        if v > 0:
            d["a"] = d["a"] + v
        else:
            d["b"] = d["b"] - v * 2
    return d["a"] * d["b"] + d["a"]


@case(A(3, 3))
def triangular_loops(M):
    s = 0.0
    for i in range(3):
        for j in range(i):
            s = s + M[i, j] * M[j, i]
    return s


@case(A(3, 3))
def triangular_zero_first(M):
    s = 0.0
    for i in range(3):
        for j in range(i):
            s = s + np.sqrt(M[i, j] ** 2 + 1.0)
    return s


@case(A(4))
def math_functions(x):
    s = 0.0
    for v in x:
        s = s + math.sin(v) + math.exp(v) * math.cos(v)
    return s


@case(A(4))
def builtin_max_of_scalars(x):
    return max(x[0], x[1]) + min(x[2], x[3])


@case(A(5))
def python_sum_of_array(x):
    return sum(x) ** 2


@case(A(3))
def float_conversion(x):
    return float(x[0]) * x[1]


@case(A(4))
def accumulate_in_array(x):
    out = np.zeros(4)
    for i in range(4):
        out[i] = x[i] * (out[i - 1] if i > 0 else 1.0)
    return np.sum(out)


@case(A(4))
def stack_in_loop(x):
    rows = []
    for k in range(3):
        rows.append(x * (k + 1))
    M = np.array(rows)
    return np.sum(M ** 2)


@case(A(4))
def concatenate_in_loop(x):
    acc = x[:1]
    for i in range(1, 4):
        acc = np.concatenate([acc, acc[-1:] * x[i]])
    return np.sum(acc)


@case(A(2, 3))
def while_shrinking(x):
    v = x
    while v.shape[0] > 0:
        v = v[1:] * 2.0
    return np.sum(x ** 2)


# ---------------------------------------------------------------------------------------------
# special points and numeric library
# ---------------------------------------------------------------------------------------------

@case(np.array([0.0, 1.0]), works=True)
def hypot_nonzero(x):
    return np.hypot(x[0], x[1])


@case(np.array([1.0, 1.0]))
def arctan2(x):
    return np.arctan2(x[0], x[1])


@case(A(3))
def sinc_ish(x):
    return np.sum(np.sinc(x))


@case(np.array([0.3, -0.2]))
def tanh_arctanh(x):
    return np.sum(np.arctanh(np.tanh(x)) * x)


@case(A(3))
def erf_like_rational(x):
    return np.sum(x / np.sqrt(1 + x ** 2))


@case(A(3))
def sqrt_of_square_plus(x):
    return np.sum(np.sqrt(x ** 2 + 1e-2))


@case(np.array([0.0, 0.0, 1.0]), works=True)
def safe_norm_where(x):
    n2 = np.sum(x ** 2)
    return np.where(n2 > 0, n2, 0.0)


@case(np.array([0.0, 3.0]), works=True, expect=lambda x: np.array([0.0, 2.0]))
def where_sqrt_guarded(x):
    return np.sum(np.where(x > 0, x, 0.0) * 2.0)


@case(A(4))
def sign_times(x):
    return np.sum(np.sign(x) * x ** 2)


@case(A(4))
def floor_passes_nothing(x):
    return np.sum(np.floor(x * 3) + x)


@case(A(4))
def heaviside_step(x):
    return np.sum(np.heaviside(x, 0.5) * x)


@case(A(4))
def relu_via_multiplication(x):
    return np.sum(x * (x > 0))


@case(A(4))
def leaky_relu_where(x):
    return np.sum(np.where(x > 0, x, 0.01 * x) ** 2)


@case(A(3))
def mean_branch_loop(x):
    m = np.mean(x)
    s = 0.0
    for v in x:
        if v > m:
            s = s + (v - m) ** 2
        else:
            s = s - (v - m)
    return s


@case(A(3, 3))
def diag_trace(M):
    return np.trace(M @ M) + np.sum(np.diag(M) ** 2)


@case(A(3, 3))
def triu_tril(M):
    return np.sum(np.triu(M) * 2 + np.tril(M, -1) ** 2)


@case(A(4))
def diff_sum(x):
    return np.sum(np.diff(x) ** 2)


@case(A(4))
def dot_self_loop(x):
    s = 0.0
    for i in range(len(x)):
        s += np.dot(x[: i + 1], x[: i + 1])
    return s


@case(A(3, 4))
def einsum_bilinear(X):
    return np.einsum("ij,ij->", X, X) + np.einsum("ij->i", X) @ np.arange(3.0)


@case(A(3))
def kron_tile(x):
    return np.sum(np.tile(x, 2) * np.arange(6.0)) + np.sum(np.repeat(x, 2) ** 2)


@case(A(3, 2))
def transpose_reshape(X):
    return np.sum(X.T.reshape(-1) * np.arange(6.0))


@case(A(2, 3))
def swap_ravel(X):
    return np.sum(np.swapaxes(X, 0, 1).ravel() ** 3)


@case(A(4))
def interp_free(x):
    y = np.sort(x)
    return np.sum(y * np.arange(4.0))


@case(A(3))
def trapz_manual(x):
    return np.sum((x[1:] + x[:-1]) * 0.5)


# ---------------------------------------------------------------------------------------------
# second round: near-miss composite forms, shape traps, library corners
# ---------------------------------------------------------------------------------------------

@case(A(2, 3) * 3)
def softmax_wrong_axis_keepdims(z):
    e = np.exp(z)
    p = e / e.sum(axis=0, keepdims=True)
    return np.sum(p * np.arange(6.0).reshape(2, 3))


@case(A(3, 3) * 3)
def softmax_square_axis0_nokeep(z):
    e = np.exp(z)
    p = e / e.sum(axis=0)
    return np.sum(p * np.arange(9.0).reshape(3, 3))


@case(A(3, 3) * 3)
def softmax_square_axis1_nokeep(z):
    e = np.exp(z)
    p = e / e.sum(axis=1)
    return np.sum(p * np.arange(9.0).reshape(3, 3))


@case(A(3, 3) * 3)
def logsumexp_square_axis1_broadcast_wrong_way(z):
    m = z.max(axis=1)
    return np.sum(np.log(np.sum(np.exp(z - m), axis=0)))


@case(A(4) * 3)
def softmax_max_reused(z):
    m = np.max(z)
    e = np.exp(z - m)
    return np.sum(e / np.sum(e) * np.arange(4.0)) + m


@case(A(4) * 3)
def softmax_other_denominator(z):
    e = np.exp(z)
    d = np.sum(np.exp(2 * z))
    return np.sum(e / d)


@case(A(4) * 3, A(4))
def softmax_denominator_of_other(z, w):
    e = np.exp(z)
    return np.sum(e / np.sum(np.exp(w)))


@case(A(4) * 3, A(4), wrt=1)
def softmax_denominator_of_other_wrt_w(z, w):
    e = np.exp(z)
    return np.sum(e / np.sum(np.exp(w)))


@case(A(4) * 3)
def logsumexp_extra_term(z):
    return np.log(np.sum(np.exp(z)) + 1.0)


@case(A(4) * 3)
def logsumexp_scaled_inside(z):
    return np.log(np.sum(np.exp(z) * 2.0))


@case(A(4) * 3)
def log_mean_exp(z):
    return np.log(np.mean(np.exp(z)))


@case(A(4) * 3)
def log_one_plus_exp_two(z):
    return np.sum(np.log(2 + np.exp(-z)))


@case(A(4) * 3)
def log_one_minus_exp(z):
    return np.sum(np.log(1 + np.exp(-z * z)))


@case(A(4) * 3)
def log1p_exp_shifted(z):
    return np.sum(np.log1p(np.exp(z - 1.0)))


@case(A(4) * 3)
def log1p_of_exp_neg_reused(z):
    e = np.exp(-z)
    return np.sum(np.log1p(e) * e)


@case(A(4) * 3)
def sigmoid_two_over(z):
    return np.sum(2 / (1 + np.exp(-z)))


@case(A(4) * 3)
def sigmoid_plus_two(z):
    return np.sum(1 / (2 + np.exp(-z)))


@case(A(4) * 3)
def sigmoid_of_negative_exp(z):
    return np.sum(1 / (1 + np.exp(z)) * np.arange(4.0))


@case(A(4) * 3)
def sigmoid_exp_of_other(z):
    return np.sum(1 / (1 + np.exp(-2 * z)))


@case(A(3) * 3)
def sigmoid_scalar_loop(z):
    s = 0.0
    for v in z:
        s = s + 1.0 / (1.0 + math.exp(-v))
    return s


@case(A(3) * 3)
def logsumexp_python_loop(z):
    m = max(z)
    t = 0.0
    for v in z:
        t = t + math.exp(v - m)
    return m + math.log(t)


@case(A(2, 3, 4))
def max_axis_tuple(x):
    return np.sum(np.max(x, axis=(0, 2)) * np.arange(3.0))


@case(A(2, 3, 4))
def mean_axis_tuple_keep(x):
    return np.sum((x - x.mean(axis=(0, -1), keepdims=True)) ** 2)


@case(A(2, 3, 4))
def sum_neg_axis_tuple(x):
    return np.sum(np.sum(x, axis=(-1, -3)) ** 2)


@case(A(2, 2, 2))
def cube_sum_axes_trap(x):
    return np.sum(x * x.sum(axis=2, keepdims=True) + x * x.sum(axis=0))


@case(A(3, 4))
def norm_tuple_axes(x):
    return np.linalg.norm(x, axis=(0, 1))


@case(A(2, 3, 3))
def norm_batched_matrix(x):
    return np.sum(np.linalg.norm(x, axis=(1, 2)))


@case(A(3, 4))
def norm_ord2_axis0(x):
    return np.sum(np.linalg.norm(x, ord=2, axis=0))


@case(A(3, 4))
def norm_ord_inf_axis1(x):
    return np.sum(np.linalg.norm(x, ord=np.inf, axis=1))


@case(A(3, 4))
def norm_ord_neg_inf_axis(x):
    return np.sum(np.linalg.norm(x, ord=-np.inf, axis=1))


@case(A(4))
def norm_ord_half(x):
    return np.linalg.norm(x, 0.5)


@case(A(3, 3))
def norm_matrix_inf(x):
    return np.linalg.norm(x, np.inf)


@case(A(3, 3))
def norm_matrix_neg2(x):
    return np.linalg.norm(x, -2)


@case(_spd(3), A(3, 1))
def solve_column(M, b):
    return np.sum(np.linalg.solve(M, b))


@case(A(2, 3, 3) + 3 * np.eye(3), A(2, 3))
def solve_batched(M, b):
    return np.sum(np.linalg.solve(M, b[..., None]))


@case(A(2, 3, 3) + 3 * np.eye(3))
def inv_batched(M):
    return np.sum(np.linalg.inv(M) ** 2)


@case(A(2, 3, 3) + 3 * np.eye(3))
def det_batched(M):
    return np.sum(np.linalg.det(M))


@case(A(2, 3, 3) + 3 * np.eye(3))
def slogdet_batched(M):
    s, l = np.linalg.slogdet(M)
    return np.sum(s * l)


@case(np.array([[1.0, 2.0], [2.0, 4.0]]), works=True)
def det_singular(M):
    return np.linalg.det(M)


@case(A(3, 3))
def matrix_power_loop(M):
    R = np.eye(3)
    for _ in range(3):
        R = R @ M
    return np.trace(R)


@case(A(3, 3))
def matrix_power_fn(M):
    return np.trace(np.linalg.matrix_power(M, 3))


@case(_spd(3))
def pinv_sum(M):
    return np.sum(np.linalg.pinv(M))


@case(_spd(3), A(3))
def lstsq_like(M, b):
    return np.sum(np.linalg.inv(M.T @ M) @ M.T @ b)


@case(A(3, 2), A(3))
def qr_free_normal_eq(X, y):
    w = np.linalg.solve(X.T @ X + 0.1 * np.eye(2), X.T @ y)
    return np.sum((X @ w - y) ** 2)


@case(A(3, 2), A(3), wrt=1)
def normal_eq_wrt_y(X, y):
    w = np.linalg.solve(X.T @ X + 0.1 * np.eye(2), X.T @ y)
    return np.sum((X @ w - y) ** 2)


@case(A(4), 0)
def while_zero_trips_counter(x, n):
    i = 0
    s = np.sum(x)
    while i < n:
        s = s * np.sqrt(x[0] ** 2 + 1)
        i += 1
    return s


@case(A(5))
def while_break_continue(x):
    i = -1
    s = 0.0
    while i < 4:
        i += 1
        if x[i] < -0.5:
            continue
        if x[i] > 0.8:
            break
        s = s + x[i] * i
    return s


@case(A(3, 3))
def nested_while_for(M):
    s = 0.0
    i = 0
    while i < 3:
        for j in range(3):
            if j > i:
                break
            s = s + M[i, j] ** 2
        i += 1
    return s


@case(A(3, 3))
def nested_early_return(M):
    for i in range(3):
        for j in range(3):
            if M[i, j] > 0.9:
                return M[i, j] * i
    return np.sum(M)


def _find(x, thr):
    for i in range(len(x)):
        if x[i] > thr:
            return x[i]
    return x[0] * 0.0


@case(A(5))
def helper_search_in_loop(x):
    s = 0.0
    for t in (-0.5, 0.0, 0.5, 2.0):
        s = s + _find(x, t)
    return s


@case(A(4), A(4))
def loop_swap_tuple_arrays(a, b):
    for _ in range(3):
        a, b = b * 0.5, a + b
    return np.sum(a * b)


@case(A(4))
def loop_list_of_arrays_index(x):
    parts = [x[:2], x[2:]]
    s = 0.0
    for k in range(2):
        parts[k] = parts[k] * (k + 2.0)
        s = s + np.sum(parts[k] ** 2)
    return s


@case(A(6))
def loop_over_reshaped_rows(x):
    s = 0.0
    for r in x.reshape(3, 2):
        s = s + r[0] * r[1]
    return s


@case(A(2, 3))
def loop_over_transposed(x):
    s = 0.0
    for c in x.T:
        s = s + np.prod(c)
    return s


@case(A(3))
def loop_range_len_minus(x):
    s = 0.0
    for i in range(len(x) - 3):
        s = s + x[i]
    return s + x[0] ** 2


@case(A(3))
def loop_negative_range(x):
    s = x[1]
    for i in range(3, 0):
        s = s / x[i]
    return s


@case(np.array([0.0, 1.0, 4.0]), works=True)
def power_half_branch_not_taken(x):
    if x[1] > 2.0:
        return np.sum(x ** 0.5)
    return np.sum(x * 2.0)


@case(np.array([0.0, 1.0, 4.0]), works=True)
def power_half_where_unselected(x):
    return np.sum(np.where(x > 0.5, x ** 0.5, x))


@case(np.array([1.0, 0.5, -0.2]), works=True)
def arccos_at_one_unselected(x):
    return np.sum(np.where(x < 0.99, np.arccos(x), 0.0))


@case(np.array([0.0, 2.0]), works=True)
def log_masked_by_multiplication(x):
    m = x > 0.5
    return np.sum(np.where(m, np.log(np.where(m, x, 1.0)), 0.0)) + np.sum(x)


@case(np.array([0.0, 1.0]), works=True)
def sqrt_of_square_then_square(x):
    return np.sum(np.sqrt(x ** 2) ** 4)


@case(np.array([0.0, 2.0]), 0, works=True)
def sqrt_loop_rows_zero_trip(p, n):
    r = np.sqrt(p)
    s = np.sum(p)
    for i in range(n):
        s = s + r[i]
    return s


@case(A(3))
def where_both_active(x):
    return np.sum(np.where(x > 0, np.sin(x), x ** 3))


@case(A(3), A(3))
def where_mixed_arrays(x, y):
    return np.sum(np.where(x > y, x * y, y))


@case(A(3), A(1), wrt=1)
def where_broadcast_other(x, y):
    return np.sum(np.where(x > 0, y, x) * np.arange(3.0))


@case(A(3, 1), A(1, 3))
def where_broadcast_both(x, y):
    return np.sum(np.where(x > y, x, y) ** 2)


@case(A(3), 0.3, wrt=1)
def maximum_scalar_active(x, t):
    return np.sum(np.maximum(x, t))


@case(A(3, 1), A(4))
def maximum_broadcast(x, y):
    return np.sum(np.maximum(x, y) * np.arange(12.0).reshape(3, 4))


@case(A(2, 3))
def min_axis0(x):
    return np.sum(x.min(axis=0) * np.array([1.0, 2.0, 3.0]))


@case(A(3))
def ptp_like(x):
    return np.max(x) - np.min(x)


@case(A(3, 4))
def var_keepdims(x):
    return np.sum(x / np.sqrt(np.var(x, axis=1, keepdims=True) + 1e-5))


@case(A(3))
def mean_scalar_array_reduce(x):
    return np.mean(x) * np.sum(x) / x.size


@case(A(2, 3))
def average_weights(x):
    return np.average(x, axis=1, weights=np.array([1.0, 2.0, 3.0])) @ np.array([1.0, -1.0])


@case(A(3))
def median_free_sort(x):
    return np.sum(np.sort(x)[1:] * 2.0)


# ---------------------------------------------------------------------------------------------
# third round: intermediates of matched forms reused, odd argument kinds, in-place broadcasting
# ---------------------------------------------------------------------------------------------

@case(A(4) * 3)
def sigmoid_denominator_reused(z):
    d = 1 + np.exp(-z)
    s = 1 / d
    return np.sum(s * np.arange(4.0)) + np.sum(np.log(d))


@case(A(4) * 3)
def softmax_exp_reused(z):
    e = np.exp(z)
    t = np.sum(e)
    p = e / t
    return np.sum(p * np.arange(4.0)) + t * 0.1 + e[1]


@case(A(4) * 3)
def logsumexp_sum_reused(z):
    m = np.max(z)
    s = np.sum(np.exp(z - m))
    return m + np.log(s) + s


@case(A(4) * 3, A(4))
def logsumexp_shift_other_max(z, w):
    m = np.max(w)
    return m + np.log(np.sum(np.exp(z - m)))


@case(A(4) * 3, A(4), wrt=1)
def logsumexp_shift_other_max_wrt_w(z, w):
    m = np.max(w)
    return m + np.log(np.sum(np.exp(z - m)))


@case(A(4) * 3)
def softmax_shift_by_mean(z):
    e = np.exp(z - np.mean(z))
    return np.sum(e / np.sum(e) * np.arange(4.0))


@case(A(4) * 3)
def logsumexp_shift_no_add_back(z):
    m = np.max(z)
    return np.log(np.sum(np.exp(z - m)))


@case(A(4) * 3)
def logsumexp_add_back_twice(z):
    m = np.max(z)
    return 2 * m + np.log(np.sum(np.exp(z - m)))


@case(A(4) * 3)
def log_sigmoid_reused_exp(z):
    e = np.exp(-z)
    return np.sum(np.log(1 + e)) + np.sum(e ** 2) * 0.01


@case(A(4) * 3)
def softplus_minus(z):
    return np.sum(np.log(1 + np.exp(z)) - z)


@case(A(2, 3) * 3)
def softmax_then_index(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p[0, 1] + p[1, 2] * 2


@case(A(1, 4))
def row_vector_keepdims_same_shape(x):
    return np.sum((x - np.sum(x, axis=0, keepdims=True)) ** 2 + x * np.mean(x, axis=0))


@case(A(4, 1))
def column_vector_mean_axis1(x):
    return np.sum(x * np.mean(x, axis=1) + x ** 2)


@case(A(1))
def length_one_center(x):
    return np.sum((x - np.mean(x)) ** 2 + x * 3)


@case(np.array(0.7))
def zero_d_array_argument(x):
    return np.sin(x) * x ** 2


@case(0.7)
def python_float_argument_loop(x):
    s = 0.0
    for k in range(3):
        s = s + x ** k
    return s


@case(A(4))
def none_index_variants(x):
    return np.sum(x[None] * x[..., None] + x[:, np.newaxis] ** 2)


@case(A(2, 3))
def middle_newaxis(x):
    return np.sum(x[:, np.newaxis, :] * x[np.newaxis, :, :] * np.arange(3.0))


@case(A(4))
def reshape_minus_one_column(x):
    return np.sum(x.reshape(-1, 1) - x)


@case(A(3), A(3))
def inplace_scale_rows(x, w):
    y = np.ones((3, 3)) * x
    y *= w[:, None]
    return np.sum(y ** 2)


@case(A(3), A(3), wrt=1)
def inplace_scale_rows_wrt_w(x, w):
    y = np.ones((3, 3)) * x
    y *= w[:, None]
    return np.sum(y ** 2)


@case(A(3, 3))
def inplace_subtract_mean(x):
    y = x.copy()
    y -= y.mean(axis=0)
    return np.sum(y ** 3)


@case(A(3, 3))
def inplace_divide_keepdims(x):
    y = np.exp(x)
    y /= y.sum(axis=1, keepdims=True)
    return np.sum(y * np.arange(9.0).reshape(3, 3))


@case(A(3))
def dot_1d(x):
    return x @ x + np.dot(x, x) + np.inner(x, x)


@case(A(3), A(3, 2))
def vec_mat_chain(x, W):
    return np.sum((x @ W) ** 2)


@case(A(2, 3, 4), A(4, 2))
def batched_matmul(x, W):
    return np.sum(np.tanh(x @ W))


@case(A(2, 3, 4), A(2, 4, 5))
def batched_matmul_both(x, W):
    return np.sum(np.matmul(x, W) ** 2)


@case(A(3, 4), A(4), wrt=1)
def matvec_broadcast_grad(M, v):
    return np.sum(M @ v) + np.sum(M * v)


def _rk4(f, y, h):
    k1 = f(y)
    k2 = f(y + 0.5 * h * k1)
    k3 = f(y + 0.5 * h * k2)
    k4 = f(y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _decay(y):
    return -0.5 * y + np.sin(y)


@case(A(2))
def rk4_loop(y0):
    y = y0
    for _ in range(3):
        y = _rk4(_decay, y, 0.1)
    return np.sum(y ** 2)


@case(A(3), 0.1)
def euler_param_grad(y0, h):
    y = y0
    for _ in range(4):
        y = y + h * (-y ** 3)
    return np.sum(y)


@case(A(3), 0.1, wrt=1)
def euler_param_grad_h(y0, h):
    y = y0
    for _ in range(4):
        y = y + h * (-y ** 3)
    return np.sum(y)


@case(A(5))
def bubble_pass(x):
    v = [x[i] for i in range(5)]
    for i in range(4):
        if v[i] > v[i + 1]:
            v[i], v[i + 1] = v[i + 1], v[i]
    return v[-1] * 2 + v[0]


@case(A(4))
def running_max(x):
    m = x[0]
    for v in x[1:]:
        if v > m:
            m = v
    return m


@case(A(4))
def running_max_builtin(x):
    m = -np.inf
    for v in x:
        m = max(m, v)
    return m


@case(A(4))
def argmin_gather(x):
    return x[np.argmin(x)] + x[int(np.argmax(x))] * 2


@case(A(5))
def boolean_mask_sum(x):
    return np.sum(x[x > 0] ** 2) + np.sum(x[np.abs(x) < 0.5])


@case(A(5))
def fancy_index_dup(x):
    return np.sum(x[[0, 0, 2]] * np.array([1.0, 2.0, 3.0]))


@case(A(3, 3))
def fancy_rows_cols(x):
    return np.sum(x[[0, 2]][:, [1, 2]] ** 2)


@case(np.array([-2.0, -0.5, 1.5]))
def negative_base_int_float_power(x):
    return np.sum(np.power(x, 2.0) + x ** 4.0 + (-x) ** 3)


@case(np.array([-2.0, -0.5, 1.5]), np.array([2.0, 3.0, 1.0]), wrt=0)
def negative_base_array_exponent(x, y):
    return np.sum(x ** y)


@case(np.array([0.0, 0.5, 1.5]), 3.0, wrt=1)
def exponent_grad_at_zero_base(x, p):
    return np.sum(x ** p)


@case(np.array([0.0, 0.5, 1.5]), expect=lambda x: 1.5 * np.sqrt(x))
def power_three_halves_at_zero(x):
    return np.sum(x ** 1.5)


@case(np.array([0.0, 0.5, 1.5]))
def float_power(x):
    return np.sum(np.float_power(x, 2) + np.float_power(x + 1, 0.5))


@case(A(3))
def exp_of_log_abs(x):
    return np.sum(np.exp(np.log(np.abs(x) + 1.0)))


# ---------------------------------------------------------------------------------------------
# a zero cotangent through an infinite local derivative (division by 0, cbrt at 0, ...)
# ---------------------------------------------------------------------------------------------

_PAD = np.array([True, True, False])


@case(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 0.0]), works=True)
def masked_division_padding(a, b):
    return np.sum(np.where(_PAD, a / b, 0.0))


@case(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 0.0]), wrt=1, works=True)
def masked_division_padding_wrt_b(a, b):
    return np.sum(np.where(_PAD, a / b, 0.0))


@case(np.array([0.0, 2.0]), works=True)
def division_in_branch_not_taken(x):
    r = x[1] / x[0]
    if x[1] > 5.0:
        return r
    return x[1] ** 2 + x[0]


@case(np.array([0.0, 2.0]), works=True)
def reciprocal_unselected(x):
    return np.sum(np.where(_PAD[:2] & (x > 1.0), np.reciprocal(x), x))


@case(np.array([0.0, 2.0]), works=True)
def cbrt_in_branch_not_taken(x):
    c = np.cbrt(x[0])
    if x[1] > 5.0:
        return c
    return x[0] * 3.0 + x[1]


@case(0.0, 2.0, works=True)
def python_float_log_not_taken(a, b):
    t = np.log(a)
    if b > 5.0:
        return t
    return a * b


@case(0.0, 2.0, works=True)
def python_float_division_not_taken(a, b):
    t = np.float64(b) / a
    if b > 5.0:
        return t
    return a * b + b


@case(np.array([1.0, 0.5, 2.0]), 0, works=True)
def arctanh_in_zero_trip_loop(x, n):
    s = np.sum(x)
    t = np.arctanh(x[0])
    for _ in range(n):
        s = s + t
    return s


@case(np.array([1.0, 3.0, 2.0]), works=True)
def log1p_at_minus_one_unselected(x):
    return np.sum(np.where(x > 0.5, x, np.log1p(x - 2.0)))


@case(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 0.0]), works=True)
def masked_exp_of_ratio(a, b):
    return np.sum(np.where(_PAD, np.exp(a / b), 0.0))


@case(np.array([1.0, 2.0, 0.0]), np.array([2.0, 4.0, 3.0]), works=True)
def masked_log_times_other(x, y):
    return np.sum(np.where(_PAD, np.log(x) * y, 0.0))


@case(np.array([1.0, 2.0, 0.0]), works=True)
def masked_sin_of_reciprocal(x):
    return np.sum(np.where(_PAD, np.sin(1.0 / x) + np.tanh(2.0 / x) ** 2, x))


@case(np.array([1.0, 2.0, 0.0]), works=True)
def overwritten_slot_of_log(x):
    y = np.log(x) * 2.0
    y[2] = 5.0
    return np.sum(y * x)

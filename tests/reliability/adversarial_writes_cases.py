"""Programs written the way users write numerical code that writes into arrays: ODE right-hand
sides, integrators, stencils, in-place normalizations, views, containers, aliased arguments,
out=, integer and boolean storage, broadcasting writes, Buffer. Checked by
test_adversarial_writes.py (each must be right or refused with a located error)."""
# ruff: noqa
import numpy as np

from adjoint_compiler import Buffer, copyto

CASES = []
_rng = np.random.default_rng(12)


def _u(*shape, lo=0.5, hi=1.5):
    return np.round(_rng.uniform(lo, hi, shape), 3) + 0.0001234


def case(*args, wrt=0):
    def register(f):
        CASES.append((f, args, wrt))
        return f
    return register


# ---------------------------------------------------------------- ODE right-hand sides, integrators
def lotka(du, u, p, t):
    a, b, c, d = p
    du[0] = a * u[0] - b * u[0] * u[1]
    du[1] = -c * u[1] + d * u[0] * u[1]


@case(_u(2), np.array([1.5, 1.0, 3.0, 1.0]))
def euler_lotka(u0, p):
    u = u0.copy()
    du = np.zeros(2)
    for k in range(5):
        lotka(du, u, p, k * 0.1)
        u = u + 0.1 * du
    return np.sum(u ** 2)


@case(_u(2), np.array([1.5, 1.0, 3.0, 1.0]), wrt=1)
def euler_lotka_inplace(u0, p):
    u = np.array(u0, dtype=float)
    du = np.empty_like(u)
    for k in range(4):
        lotka(du, u, p, 0.0)
        u += 0.05 * du
    return u[0] * u[1]


def rhs_decay(du, u, p, t):
    du[:] = -p * u


@case(_u(3), 0.7)
def rk4_decay(u0, p):
    h = 0.1
    u = u0.copy()
    k1 = np.zeros_like(u); k2 = np.zeros_like(u); k3 = np.zeros_like(u); k4 = np.zeros_like(u)
    for n in range(3):
        rhs_decay(k1, u, p, 0.0)
        rhs_decay(k2, u + h / 2 * k1, p, 0.0)
        rhs_decay(k3, u + h / 2 * k2, p, 0.0)
        rhs_decay(k4, u + h * k3, p, 0.0)
        u = u + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(u)


@case(_u(3), 0.7, wrt=1)
def rk4_decay_p(u0, p):
    return rk4_decay(u0, p)


def pendulum(du, u, p, t):
    th, om = u
    du[0] = om
    du[1] = -p * np.sin(th)


@case(_u(2))
def pendulum_euler(u0):
    u = u0.copy()
    du = np.zeros(2)
    for i in range(6):
        pendulum(du, u, 9.8, 0.0)
        u[:] = u + 0.01 * du
    return u[0] + 2 * u[1]


def heat_rhs(du, u, p, t):
    n = len(u)
    du[0] = p * (u[1] - 2 * u[0])
    du[n - 1] = p * (u[n - 2] - 2 * u[n - 1])
    du[1:-1] = p * (u[2:] - 2 * u[1:-1] + u[:-2])


@case(_u(5))
def heat_euler(u0):
    u = u0.copy()
    du = np.zeros_like(u)
    for _ in range(4):
        heat_rhs(du, u, 0.3, 0.0)
        u += 0.1 * du
    return np.sum(u ** 3)


@case(_u(2), np.array([1.5, 1.0, 3.0, 1.0]))
def lotka_vjp_out(u, p):
    du = np.zeros(2)
    lotka(du, u, p, 0.0)
    return du


@case(np.zeros(2), _u(2), np.array([1.5, 1.0, 3.0, 1.0]), wrt=1)
def lotka_direct(du, u, p):
    lotka(du, u, p, 0.0)
    return np.sum(du * du)


def rhs_returns(du, u):
    du[0] = u[1]
    du[1] = -u[0]
    return du


@case(_u(2))
def rhs_return_value(u):
    du = np.empty(2)
    out = rhs_returns(du, u)
    out *= 2.0
    return np.sum(du * u) + out[0]


@case(_u(3))
def euler_history_list(u0):
    u = u0.copy()
    hist = []
    for i in range(3):
        u = u * 0.9 + 0.1
        hist.append(u)
    return sum(np.sum(h ** 2) for h in hist)


@case(_u(3))
def euler_history_inplace_bug(u0):
    u = u0.copy()
    hist = []
    for i in range(3):
        u *= 0.9
        hist.append(u)
    return np.sum(hist[0]) + np.sum(hist[-1] ** 2)


@case(_u(3))
def euler_history_copy(u0):
    u = u0.copy()
    hist = [u.copy()]
    for i in range(3):
        u *= 0.9
        u[0] += 0.1 * u[1]
        hist.append(u.copy())
    return np.sum(np.array(hist) ** 2)


@case(_u(3))
def trajectory_rows(u0):
    traj = np.zeros((4, 3))
    traj[0] = u0
    for i in range(1, 4):
        traj[i] = traj[i - 1] * 0.5 + np.sin(traj[i - 1])
    return np.sum(traj[-1])


@case(_u(3))
def trajectory_rows_view(u0):
    traj = np.zeros((4, 3))
    traj[0, :] = u0
    for i in range(1, 4):
        prev = traj[i - 1]
        cur = traj[i]
        cur[:] = prev * 0.5 + np.sin(prev)
    return np.sum(traj ** 2)


# ---------------------------------------------------------------- stencils
@case(_u(6))
def jacobi_stencil(u0):
    u = u0.copy()
    for it in range(3):
        u_new = u.copy()
        u_new[1:-1] = 0.5 * (u[:-2] + u[2:])
        u = u_new
    return np.sum(u * u0)


@case(_u(6))
def stencil_inplace_rhs_reads_self(u0):
    u = u0.copy()
    u[1:-1] = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]
    return np.sum(u ** 2)


@case(_u(6))
def stencil_gauss_seidel(u0):
    u = u0.copy()
    for i in range(1, 5):
        u[i] = 0.5 * (u[i - 1] + u[i + 1])
    return np.sum(u ** 2)


@case(_u(4, 5))
def stencil_2d(u0):
    u = u0.copy()
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    u += 0.1 * lap
    return np.sum(u ** 2)


@case(_u(6))
def stencil_periodic(u0):
    u = u0.copy()
    new = np.empty_like(u)
    new[0] = u[-1] + u[1]
    new[-1] = u[-2] + u[0]
    new[1:-1] = u[:-2] + u[2:]
    return np.sum(new * u)


@case(_u(6))
def stencil_view_names(u0):
    u = u0.copy()
    interior = u[1:-1]
    left = u[:-2]
    right = u[2:]
    interior += 0.1 * (left + right)
    return np.sum(u ** 2)


@case(_u(6))
def stencil_view_names_copy(u0):
    u = u0.copy()
    left = u[:-2].copy()
    right = u[2:].copy()
    u[1:-1] += 0.1 * (left + right)
    return np.sum(u ** 2)


@case(_u(5))
def boundary_fix(u0):
    u = np.pad(u0, 1)
    u[0] = u[1]
    u[-1] = u[-2]
    return np.sum(np.diff(u) ** 2)


# ---------------------------------------------------------------- in-place normalizations
@case(_u(3, 4))
def rows_normalize_loop(A):
    P = A.copy()
    for row in P:
        row /= row.sum()
    return np.sum(P ** 2)


@case(_u(3, 4))
def rows_normalize_keepdims(A):
    P = A.copy()
    P /= P.sum(axis=1, keepdims=True)
    return np.sum(P * A)


@case(_u(3, 4))
def center_columns(A):
    X = A.copy()
    X -= X.mean(0)
    return np.sum(X ** 3)


@case(_u(3, 4))
def center_columns_axis_kw(A):
    X = np.array(A)
    X -= np.mean(X, axis=0, keepdims=True)
    X /= X.std(axis=0) + 1.0
    return np.sum(X * A)


@case(_u(3, 4))
def cols_normalize_transpose(A):
    P = A.copy()
    for col in P.T:
        col /= np.sum(col)
    return np.sum(P ** 2)


@case(_u(3, 4))
def rows_normalize_index_loop(A):
    P = A.copy()
    for i in range(P.shape[0]):
        P[i] /= np.linalg.norm(P[i])
    return np.sum(P[:, 0])


@case(_u(3, 4))
def rows_normalize_index_view(A):
    P = A.copy()
    for i in range(P.shape[0]):
        r = P[i, :]
        r -= r.max()
        r[...] = np.exp(r)
        r /= r.sum()
    return np.sum(P * A)


@case(_u(3, 4))
def softmax_inplace(A):
    Z = A * 2.0
    Z -= Z.max(axis=1, keepdims=True)
    np.exp(Z, out=Z)
    Z /= Z.sum(axis=1)[:, None]
    return np.sum(Z * A)


@case(_u(3, 4))
def rows_normalize_enumerate(A):
    P = A.copy()
    for i, row in enumerate(P):
        row *= (i + 1)
        row /= row.sum()
    return np.sum(P ** 2)


@case(_u(4))
def vec_normalize(v):
    w = v.copy()
    w /= np.sqrt(np.sum(w ** 2))
    return w[0] + 2 * w[2]


@case(_u(3, 4))
def row_normalize_in_arg_copy(A):
    B = A.astype(float)
    B /= B.sum(1)[:, np.newaxis]
    return np.sum(B ** 2)


@case(_u(3, 4))
def rows_scale_zip(A):
    P = A.copy()
    for row, s in zip(P, [1.0, 2.0, 3.0]):
        row *= s
    return np.sum(P * A)


@case(_u(3, 4))
def rows_scale_zip_arr(A):
    P = A.copy()
    s = A[:, 0].copy()
    for row, si in zip(P, s):
        row *= si
    return np.sum(P)


# ---------------------------------------------------------------- views of all kinds
@case(_u(6))
def view_slice_mul(x):
    y = x.copy()
    v = y[0:2]
    v *= 3.0
    return np.sum(y ** 2)


@case(_u(2, 3))
def view_T_add(x):
    Y = x.copy()
    Yt = Y.T
    Yt += 1.0
    Yt[0] *= 2.0
    return np.sum(Y ** 2)


@case(_u(6))
def view_reshape_row(x):
    y = x.copy()
    m = y.reshape(2, 3)
    m[0] -= 1.0
    m[1, 1] = x[0] * 5
    return np.sum(y ** 2)


@case(_u(6))
def view_reshape_inline(x):
    y = x.copy()
    y.reshape(2, 3)[0] -= 1.0
    return np.sum(y ** 2)


@case(_u(2, 3))
def view_ravel(x):
    Y = x.copy()
    r = Y.ravel()
    r[1] = 7.0 * x[0, 0]
    r *= 2
    return np.sum(Y ** 2)


@case(_u(2, 3))
def view_ravel_fn(x):
    Y = x.copy()
    r = np.ravel(Y)
    r[::2] = 0.0
    return np.sum(Y * x)


@case(_u(2, 3))
def view_ravel_of_T(x):
    Y = x.copy()
    r = Y.T.ravel()  # a copy: not contiguous
    r[0] = 100.0
    return np.sum(Y * x) + np.sum(r)


@case(_u(5))
def view_flip(x):
    y = x.copy()
    np.flip(y)[0] = 0.0
    return np.sum(y * x)


@case(_u(5))
def view_flip_var(x):
    y = x.copy()
    f = y[::-1]
    f[:2] = x[:2] * 3
    return np.sum(y * y)


@case(_u(2, 3))
def view_flipud(x):
    Y = x.copy()
    F = np.flipud(Y)
    F[0] = 1.0
    return np.sum(Y * x)


@case(_u(4))
def view_asarray(x):
    y = x.copy()
    z = np.asarray(y)
    z[0] = 5.0
    return np.sum(y * x)


@case(_u(4))
def view_ascontiguous(x):
    y = x.copy()
    z = np.ascontiguousarray(y)
    z += 1.0
    return np.sum(y ** 2)


@case(_u(4))
def view_newaxis(x):
    y = x.copy()
    c = y[..., None]
    c *= 2.0
    return np.sum(y ** 2)


@case(_u(4))
def view_newaxis_none_first(x):
    y = x.copy()
    c = y[None, :]
    c[0, 1] = 3.0
    return np.sum(y * x)


@case(_u(3, 3))
def view_diagonal_readonly(A):
    B = A.copy()
    d = np.diagonal(B)
    return np.sum(d * 2.0) + np.sum(B)


@case(_u(3, 3))
def view_diag_write_fill(A):
    B = A.copy()
    np.fill_diagonal(B, 0.0)
    return np.sum(B ** 2)


@case(_u(3, 3))
def view_diag_index_write(A):
    B = A.copy()
    i = np.arange(3)
    B[i, i] += 1.0
    return np.sum(B ** 2)


@case(_u(6))
def view_idx_var(x):
    y = x.copy()
    idx = slice(1, 3)
    v = y[idx]
    v[:] = 0.0
    return np.sum(y * x)


@case(_u(2, 4))
def view_tuple_idx_runtime(x):
    Y = x.copy()
    sl = (slice(None), slice(1, 3))
    v = Y[sl]
    v *= 0.5
    return np.sum(Y ** 2)


@case(_u(2, 4))
def view_tuple_idx_built(x):
    Y = x.copy()
    sl = tuple([0, slice(None, None, 2)])
    Y[sl] = x[1, ::2] ** 2
    return np.sum(Y ** 2)


@case(_u(4))
def swap_elements(x):
    a = x.copy()
    t = a[0]
    a[0] = a[2]
    a[2] = t
    return np.sum(a * np.arange(4.0))


@case(_u(2, 3))
def swap_rows_view_bug(x):
    A = x.copy()
    t = A[0]
    A[0] = A[1]
    A[1] = t
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(2, 3))
def swap_rows_copy(x):
    A = x.copy()
    t = A[0].copy()
    A[0] = A[1]
    A[1] = t
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(2, 3))
def swap_rows_fancy(x):
    A = x.copy()
    A[[0, 1]] = A[[1, 0]]
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(5))
def swap_tuple_assign(x):
    a = x.copy()
    a[0], a[1] = a[1], a[0]
    return np.sum(a * np.arange(5.0))


@case(_u(2, 3))
def swap_tuple_rows(x):
    A = x.copy()
    A[0], A[1] = A[1], A[0].copy()
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(2, 3))
def swap_tuple_rows_views(x):
    A = x.copy()
    A[0], A[1] = A[1], A[0]
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(6))
def view_of_view(x):
    y = x.copy()
    a = y[1:]
    b = a[1:]
    b[0] = 10.0 * x[0]
    a *= 2
    return np.sum(y ** 2)


@case(_u(6))
def read_view_after_base_write(x):
    y = x.copy()
    v = y[:3]
    y[1] = 5.0 * x[4]
    return np.sum(v ** 2)


@case(_u(6))
def read_view_after_base_aug(x):
    y = x * 1.0
    v = y[::2]
    y += x
    y *= 0.5
    return np.sum(v * x[:3])


@case(_u(2, 3))
def view_T_then_base_write(x):
    Y = x.copy()
    T = Y.T
    Y[0, 0] = 9.0 * x[1, 1]
    return np.sum(T * np.arange(6.0).reshape(3, 2))


@case(_u(6))
def view_in_branch(x):
    y = x.copy()
    if x[0] > 1.0:
        v = y[:3]
    else:
        v = y[3:]
    v *= 2.0
    return np.sum(y ** 2)


@case(_u(6))
def view_maybe_in_branch(x):
    y = x.copy()
    if x[0] > 0.0:
        v = y[:3]
    else:
        v = y[:3].copy()
    v *= 2.0
    return np.sum(y ** 2)


@case(_u(6))
def write_view_in_loop(x):
    y = x.copy()
    for i in range(3):
        w = y[i:i + 3]
        w += 0.1 * x[i]
    return np.sum(y ** 2)


def scale_inplace(v, s):
    v *= s


def set_first(v, value):
    v[0] = value


@case(_u(6))
def helper_writes_view(x):
    y = x.copy()
    scale_inplace(y[2:], 3.0)
    set_first(y[1:], x[5] ** 2)
    return np.sum(y ** 2)


@case(_u(2, 3))
def helper_writes_rows(x):
    Y = x.copy()
    for r in Y:
        scale_inplace(r, r[0])
    return np.sum(Y)


@case(_u(2, 3))
def helper_writes_transpose(x):
    Y = x.copy()
    set_first(Y.T, x[1, :2] * 2)
    return np.sum(Y ** 2)


def normalize_(v):
    v /= v.sum()
    return v


@case(_u(3, 4))
def helper_normalize_rows_return(A):
    P = A.copy()
    out = [normalize_(r) for r in P]
    return np.sum(P ** 2) + np.sum(out[0])


@case(_u(6))
def view_swapaxes_write(x):
    Y = x.reshape(2, 3).copy()
    S = np.swapaxes(Y, 0, 1)
    S[0] = 0.0
    return np.sum(Y * x.reshape(2, 3))


@case(_u(2, 3))
def view_moveaxis_squeeze(x):
    Y = x[None].copy()
    S = np.squeeze(Y)
    S[1, 2] = 4.0 * x[0, 0]
    return np.sum(Y ** 2)


@case(_u(2, 3))
def view_expand_dims_write(x):
    Y = x.copy()
    E = np.expand_dims(Y, 0)
    E[0, 0] = 1.0
    return np.sum(Y * x)


@case(_u(2, 3))
def view_atleast2d(x):
    y = x[0].copy()
    m = np.atleast_2d(y)
    m[0, 0] = 3.0
    return np.sum(y * x[1])


@case(_u(4))
def view_broadcast_to_read(x):
    b = np.broadcast_to(x, (3, 4))
    return np.sum(b ** 2)


@case(_u(4))
def np_array_copy_false(x):
    y = x.copy()
    z = np.array(y, copy=False) if np.__version__ < "2" else np.asarray(y)
    z[0] = 0.0
    return np.sum(y * x)


@case(_u(4))
def astype_same_copy_false(x):
    y = x.copy()
    z = y.astype(float, copy=False)
    z[1] = 2.0
    return np.sum(y * x)


@case(_u(6))
def view_real(x):
    y = x.copy()
    r = y.real
    r[0] = 1.0
    return np.sum(y * x)


@case(_u(6))
def view_np_view(x):
    y = x.copy()
    z = y.view()
    z[2] = 0.0
    return np.sum(y * x)


@case(_u(6))
def view_reshape_minus1(x):
    y = x.copy()
    m = y.reshape(-1, 2)
    m[:, 0] = m[:, 1] ** 2
    return np.sum(y)


@case(_u(6))
def view_reshape_fn(x):
    y = x.copy()
    m = np.reshape(y, (3, 2))
    m[0] += 5.0
    return np.sum(y ** 2)


@case(_u(3, 4))
def diag_view_write_refuse(A):
    B = A.copy()
    d = B.diagonal()
    return np.sum(d ** 2)


@case(_u(6))
def view_ellipsis_write(x):
    y = x.copy()
    y[...] = x ** 2
    y[..., 1] = 0.0
    return np.sum(y)


@case(_u(2, 3))
def ellipsis_view_aug(x):
    Y = x.copy()
    v = Y[..., 1:]
    v -= Y[..., :1]
    return np.sum(Y ** 2)


# ---------------------------------------------------------------- containers
@case(_u(3, 2))
def list_of_rows_then_write(A):
    B = A.copy()
    rows = list(B)
    B[0] *= 3.0
    return np.sum(rows[0]) + np.sum(rows[1] ** 2)


@case(_u(3))
def tuple_holds_ref(u):
    v = u.copy()
    t = (v, 1.0)
    v[0] = 5.0 * u[1]
    return np.sum(t[0] ** 2) + t[1]


@case(_u(3))
def dict_holds_ref(u):
    v = u.copy()
    d = {"a": v, "b": u * 2}
    v *= 2.0
    return np.sum(d["a"] * d["b"])


@case(_u(3))
def dict_write_through(u):
    d = {"x": u.copy()}
    d["x"][1] = 0.0
    d["x"] *= 2
    return np.sum(d["x"] ** 2)


@case(_u(3))
def list_item_write(u):
    L = [u.copy(), u * 2]
    L[0][0] = 7.0
    L[1] += 1.0
    return np.sum(L[0] * L[1])


@case(_u(3, 2))
def zip_rows_write(A):
    B = A.copy()
    C = A * 2.0
    for a, b in zip(B, C):
        a += b
    return np.sum(B ** 2)


@case(_u(3, 2))
def zip_list_rows(A):
    rows = list(A.copy())
    acc = 0.0
    for i, r in enumerate(rows):
        r *= i + 1.0
        acc = acc + np.sum(r ** 2)
    return acc


@case(_u(3))
def unpack_then_write(u):
    v = u.copy()
    a, b, c = v
    v[0] = 10.0
    return a * b + c + np.sum(v)


@case(_u(2, 3))
def unpack_rows_then_write(x):
    Y = x.copy()
    r0, r1 = Y
    Y[0, 0] = 9.0
    return np.sum(r0 * r1)


@case(_u(3))
def list_append_then_mutate(u):
    v = u.copy()
    hist = []
    hist.append(v)
    v[0] = 0.0
    hist.append(v * 2)
    return np.sum(hist[0]) + np.sum(hist[1])


@case(_u(3))
def list_extend_and_stack(u):
    parts = []
    for i in range(3):
        w = u * (i + 1)
        w[i] = 0.0
        parts.append(w)
    M = np.stack(parts)
    M[0] += 1.0
    return np.sum(M ** 2) + np.sum(parts[0])


@case(_u(3))
def tuple_return_and_write(u):
    def pair(v):
        return v, v * 2
    a, b = pair(u.copy())
    a[0] = 3.0
    return np.sum(a * b)


@case(_u(3))
def list_comprehension_views(u):
    y = u.copy()
    parts = [y[i:i + 1] for i in range(3)]
    for p in parts:
        p *= 2.0
    return np.sum(y ** 2)


@case(_u(2, 3))
def list_of_arrays_arg(x):
    L = [x[0].copy(), x[1].copy()]
    for a in L:
        a -= a.mean()
    return sum(np.sum(a ** 2) for a in L)


@case([_u(3), _u(3)])
def list_argument_written(L):
    M = [a.copy() for a in L]
    M[0][1] = M[1][0] * 3
    return np.sum(M[0] ** 2)


@case(_u(3))
def dict_update_loop(u):
    state = {"u": u.copy(), "v": np.zeros(3)}
    for i in range(3):
        state["v"] += state["u"] * 0.1
        state["u"] -= state["v"]
    return np.sum(state["u"] ** 2)


@case(_u(3))
def buffer_of_list(u):
    b = Buffer.zeros((3, 3))
    for i in range(3):
        b[i] = u * (i + 1)
    b[:, 0] = u ** 2
    return np.sum(b[:] ** 2)


# ---------------------------------------------------------------- aliased arguments
def step(out, u):
    out[0] = 3 * u[1]
    return np.sum(out * u)


@case(_u(3))
def alias_step_same(u):
    v = u.copy()
    return step(v, v)


@case(_u(4))
def alias_step_slice(u):
    v = u.copy()
    return step(v[:2], v[2:])


@case(_u(4))
def alias_step_overlap(u):
    v = u.copy()
    return step(v[1:], v[:3])


@case(_u(3))
def alias_direct_args_same(u):
    return step(u * 1.0, u)


def axpy(y, a, x):
    y += a * x


@case(_u(3))
def alias_axpy_self(u):
    v = u.copy()
    axpy(v, 2.0, v)
    return np.sum(v ** 2)


@case(_u(4))
def alias_axpy_shift(u):
    v = u.copy()
    axpy(v[1:], 2.0, v[:-1])
    return np.sum(v ** 2)


def swap_into(a, b):
    t = a.copy()
    a[:] = b
    b[:] = t


@case(_u(2, 3))
def alias_swap_rows_helper(x):
    A = x.copy()
    swap_into(A[0], A[1])
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(4))
def alias_top_level(u, v=None):
    return np.sum(u)


def top_alias(out, u):
    out[0] = 3 * u[1]
    return np.sum(out * u)


# ---------------------------------------------------------------- out=
@case(_u(4))
def out_kw_exp(x):
    y = np.empty_like(x)
    np.exp(x, out=y)
    return np.sum(y * x)


@case(_u(4))
def out_positional(x):
    y = np.zeros(4)
    np.multiply(x, x, y)
    return np.sum(y)


@case(_u(4))
def out_self(x):
    y = x.copy()
    np.exp(y, out=y)
    np.sin(y, y)
    return np.sum(y)


@case(_u(4))
def out_into_view(x):
    y = np.zeros(6)
    np.add(x, 1.0, out=y[1:5])
    return np.sum(y ** 2)


@case(_u(2, 3))
def out_into_row(x):
    Y = np.zeros((2, 3))
    for i in range(2):
        np.multiply(x[i], 2.0, out=Y[i])
    return np.sum(Y * x)


@case(_u(4))
def out_floor_active(x):
    y = x * 2.0
    np.floor(x, out=y)
    return np.sum(y * x)


@case(_u(4))
def out_tuple_kw(x):
    y = np.zeros(4)
    np.sqrt(x, out=(y,))
    return np.sum(y * x)


@case(_u(4))
def out_result_used(x):
    y = np.zeros(4)
    z = np.tanh(x, out=y)
    z *= 2.0
    return np.sum(y)


@case(_u(4))
def out_with_where(x):
    y = np.ones(4)
    np.exp(x, out=y, where=x > 1.0)
    return np.sum(y * x)


@case(_u(4))
def out_matmul(x):
    A = np.arange(16.0).reshape(4, 4) / 10
    y = np.zeros(4)
    np.matmul(A, x, out=y)
    return np.sum(y ** 2)


@case(_u(4))
def out_sum_axis(x):
    M = np.outer(x, x)
    s = np.zeros(4)
    np.sum(M, axis=0, out=s)
    return np.sum(s ** 2)


@case(_u(4))
def out_clip(x):
    y = np.zeros(4)
    np.clip(x, 0.7, 1.2, out=y)
    return np.sum(y * x)


@case(_u(4))
def out_add_accumulate_loop(x):
    acc = np.zeros(4)
    for k in range(3):
        np.add(acc, x * k, out=acc)
    return np.sum(acc ** 2)


@case(_u(4))
def copyto_where(x):
    y = np.zeros(4)
    np.copyto(y, x ** 2, where=x > 1.0)
    return np.sum(y * x)


@case(_u(4))
def copyto_where_list(x):
    y = x.copy()
    np.copyto(y, 0.5, where=[True, False, True, False])
    return np.sum(y ** 2)


@case(_u(4))
def copyto_into_view(x):
    y = np.zeros((2, 4))
    np.copyto(y[1], x)
    copyto(y[0], x * 2)
    return np.sum(y * y)


@case(_u(4))
def copyto_1n(x):
    y = np.zeros(4)
    np.copyto(y, x.reshape(1, 4))
    return np.sum(y * np.arange(4.0))


@case(_u(4))
def out_dtype_int(x):
    y = np.zeros(4, dtype=int)
    np.floor(x * 3, out=y, casting="unsafe")
    return np.sum(y * x)


# ---------------------------------------------------------------- integer and boolean storage
@case(_u(3, lo=0.5, hi=3.0))
def int_storage_slice(v):
    b = np.zeros(3, int)
    b[:] = v
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_array_literal(v):
    b = np.array([0, 0, 0])
    b[0] = v[0] * 2
    b[1:] = v[1:]
    return np.sum(b) + np.sum(v)


@case(_u(3, lo=0.5, hi=3.0))
def int_array_dtype(v):
    b = np.array(v, dtype=int)
    return np.sum(b * v)


@case(_u(4, 4, lo=0.0, hi=255.0))
def uint8_image(img):
    out = np.zeros((4, 4), dtype=np.uint8)
    out[:] = img * 0.5
    return np.sum(out * img) / 100.0


@case(_u(4, 4, lo=0.0, hi=1.0))
def bool_mask_storage(x):
    m = np.zeros((4, 4), dtype=bool)
    m[x > 0.5] = True
    m[0] = x[0]
    return np.sum(x[m]) + np.sum(x)


@case(np.array([[0.1, 0.3, 0.7, 0.9], [0.15, 0.45, 0.55, 0.95], [0.6, 0.05, 0.35, 0.8], [0.25, 0.65, 0.12, 0.4]]))
def image_threshold_write(x):
    img = x.copy()
    img[img > 0.5] = 1.0
    img[img <= 0.2] = 0.0
    return np.sum(img ** 2)


@case(_u(4, 4, lo=0.0, hi=1.0))
def image_where(x):
    img = np.where(x > 0.5, x, 0.0)
    img[1:3, 1:3] *= 2.0
    return np.sum(img)


@case(_u(3, 3, lo=0.0, hi=200.0))
def uint8_astype_clip(img):
    u = np.clip(img, 0, 255).astype(np.uint8)
    f = u.astype(float) / 255.0
    return np.sum(f * img)


@case(_u(3, lo=0.5, hi=3.0))
def int_zeros_like(v):
    k = np.zeros_like(np.arange(3))
    k += (v * 2).astype(int)
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_arange_written(v):
    k = np.arange(3)
    k[1] = v[1] * 10
    return float(np.sum(k * v))


@case(_u(3, lo=0.5, hi=3.0))
def int_full_written(v):
    k = np.full(3, 2)
    k[:2] = v[:2]
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def float_full_written(v):
    k = np.full(3, 2.0)
    k[:2] = v[:2] ** 2
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int32_arg_storage(v):
    k = np.ones(3, dtype=np.int32)
    k *= 2
    out = v.copy()
    out[k - 2] = 0.0
    return np.sum(out ** 2)


@case(_u(3, lo=0.5, hi=3.0))
def bool_array_written_float(v):
    m = np.array([True, False, True])
    m[1] = v[1]
    return np.sum(np.where(m, v, -v))


@case(_u(3, lo=0.5, hi=3.0))
def int_aug_with_float(v):
    k = np.ones(3, dtype=np.int64)
    k[0] += 0  # stays integer
    w = v * k
    return np.sum(w ** 2)


@case(_u(3, lo=0.5, hi=3.0))
def int_view_write(v):
    k = np.zeros((2, 3), dtype=int)
    row = k[0]
    row[:] = v * 3
    return np.sum(k[0] * v)


@case(_u(3, lo=0.5, hi=3.0))
def float32_storage(v):
    b = np.zeros(3, dtype=np.float32)
    b[:] = v
    return float(np.sum(b.astype(float)))


# ---------------------------------------------------------------- broadcasting writes
@case(_u(3))
def write_1n_into_n(v):
    b = np.zeros(3)
    b[:] = v.reshape(1, 3)
    return np.sum(b * np.arange(1.0, 4.0))


@case(_u(2, 3))
def write_row_matmul(X):
    W = np.arange(6.0).reshape(3, 2) / 5
    out = np.zeros((2, 2))
    for i in range(2):
        out[i] = X[i:i + 1] @ W
    return np.sum(out ** 2)


@case(_u(2, 3))
def write_keepdims_row(X):
    out = np.zeros((2, 3))
    out[0] = X.sum(axis=0, keepdims=True)
    out[1] = X.mean(0, keepdims=True) * 2
    return np.sum(out * X)


@case(_u(3))
def write_scalar_broadcast(v):
    b = np.zeros((2, 3))
    b[0] = v[0]
    b[1, :] = v.sum()
    return np.sum(b * np.arange(6.0).reshape(2, 3))


@case(_u(3))
def write_column_broadcast(v):
    b = np.zeros((3, 2))
    b[:] = v[:, None]
    return np.sum(b * np.arange(6.0).reshape(3, 2))


@case(_u(3))
def write_row_broadcast_2d(v):
    b = np.zeros((2, 3))
    b[...] = v
    return np.sum(b * np.arange(6.0).reshape(2, 3))


@case(_u(3))
def write_11_into_scalar_slot(v):
    b = np.zeros(3)
    b[1] = v.reshape(1, 3)[:, 1:2].reshape(1, 1)[0, 0] * 2.0
    b[2] = np.array([[v[0]]]).item()
    return np.sum(b ** 2)


@case(_u(3))
def write_1_into_scalar(v):
    b = np.zeros(3)
    b[1] = v[1:2] * 3.0 if np.ndim(v[1:2] * 3.0) == 0 else (v[1:2] * 3.0)[0]
    return np.sum(b ** 2)


@case(_u(2, 3))
def aug_broadcast_row(X):
    Y = X.copy()
    Y += X[0]
    Y[:, 1:] *= X[1, :2]
    return np.sum(Y ** 2)


@case(_u(2, 3))
def aug_broadcast_keepdims_into_rows(X):
    Y = X.copy()
    for i in range(2):
        Y[i] -= Y[i:i + 1].mean(axis=1, keepdims=True)[0]
    return np.sum(Y ** 3)


@case(_u(4))
def buffer_row_1n(v):
    b = Buffer.zeros((2, 4))
    b[0] = v.reshape(1, 4)
    b[1] = v[None, :] * 2
    return np.sum(b[:] * np.arange(8.0).reshape(2, 4))


@case(_u(4))
def buffer_copyto_where(v):
    b = Buffer(v)
    copyto(b, v ** 2, where=v > 1.0)
    return np.sum(b[:] * v)


@case(_u(4))
def buffer_aug_slice(v):
    b = Buffer(v * 2)
    b[1:3] += v[:2]
    b[0] *= v[3]
    return np.sum(b[:] ** 2)


@case(_u(3))
def buffer_rows_generator(v):
    b = Buffer.zeros((3,))
    copyto(b, (v[i] ** 2 for i in range(3)))
    return np.sum(b[:] * v)


@case(_u(4))
def fancy_dup_write(v):
    b = np.zeros(4)
    b[[0, 0, 1]] = v[:3]
    return np.sum(b * np.arange(1.0, 5.0))


@case(_u(4))
def fancy_dup_aug(v):
    b = np.zeros(4)
    b[[0, 0, 1]] += v[:3]
    return np.sum(b * np.arange(1.0, 5.0))


@case(_u(4))
def add_at_dup(v):
    b = np.zeros(4)
    np.add.at(b, [0, 0, 1], v[:3])
    return np.sum(b * np.arange(1.0, 5.0))


@case(_u(4))
def mask_write_values(v):
    b = v.copy()
    m = v > 1.0
    b[m] = v[m] ** 2
    return np.sum(b)


@case(_u(4))
def mask_write_scalar_from_active(v):
    b = v.copy()
    b[b > 1.0] = v[0]
    return np.sum(b * v)


@case(_u(3, 4))
def mask_2d_row_select(X):
    Y = X.copy()
    Y[X[:, 0] > 1.0] = 0.0
    return np.sum(Y ** 2)


@case(_u(3, 4))
def mask_2d_row_select_assign_row(X):
    Y = X.copy()
    Y[X[:, 0] > 1.0, :] = X[0]
    return np.sum(Y * X)


@case(_u(5))
def negative_step_write(v):
    b = np.zeros(5)
    b[::-2] = v[:3]
    return np.sum(b * np.arange(5.0))


@case(_u(5))
def write_overlap_self(v):
    b = v.copy()
    b[1:] = b[:-1]
    return np.sum(b * np.arange(5.0))


@case(_u(5))
def write_overlap_self_aug(v):
    b = v.copy()
    b[1:] += b[:-1]
    return np.sum(b * np.arange(5.0))


@case(_u(5))
def write_overlap_view_names(v):
    b = v.copy()
    hi = b[1:]
    lo = b[:-1]
    hi[:] = lo * 2
    return np.sum(b * np.arange(5.0))


@case(_u(4))
def cumulative_inplace_loop(v):
    b = v.copy()
    for i in range(1, 4):
        b[i] += b[i - 1]
    return np.sum(b ** 2)


@case(_u(4))
def np_cumsum_out(v):
    b = np.zeros(4)
    np.cumsum(v, out=b)
    return np.sum(b ** 2)


@case(_u(2, 2))
def zero_d_writes(x):
    a = np.zeros(())
    a[...] = x[0, 0]
    a += x[1, 1]
    b = np.array(0.0)
    b[()] = x[0, 1]
    return float(a * b)


@case(_u(4))
def write_item_setitem_method(v):
    b = np.zeros(4)
    b.__setitem__(0, v[1])
    return np.sum(b * v)


@case(_u(4))
def write_fill(v):
    b = np.empty(4)
    b.fill(v[0])
    return np.sum(b * v)


@case(_u(4))
def write_put(v):
    b = np.zeros(4)
    np.put(b, [0, 2], v[:2])
    return np.sum(b * v)


@case(_u(4))
def write_place(v):
    b = v.copy()
    np.place(b, b > 1.0, [0.0])
    return np.sum(b * v)


@case(_u(4))
def write_sort_inplace(v):
    b = v.copy()
    b.sort()
    return np.sum(b * np.arange(4.0))


@case(_u(4))
def write_resize_refuse(v):
    b = v.copy()
    b.shape = (2, 2)
    b[0] *= 2
    return np.sum(b ** 2)


@case(_u(3))
def write_itemset_style(v):
    b = np.zeros(3)
    b.flat[1] = v[0] * 3
    return np.sum(b * v)


@case(_u(3))
def write_flat_slice(v):
    b = np.zeros((2, 3))
    b.flat[:3] = v
    return np.sum(b * np.arange(6.0).reshape(2, 3))


@case(_u(4))
def negate_inplace_ufunc(v):
    b = v.copy()
    np.negative(b, out=b)
    b **= 2
    return np.sum(b)


@case(_u(4))
def pow_inplace(v):
    b = v.copy()
    b **= 3
    b //= 1.0
    return np.sum(b * v)


@case(_u(4))
def matmul_inplace(v):
    b = np.outer(v, v)
    b @= np.eye(4) * 2
    return np.sum(b)


@case(_u(2, 3))
def write_into_argument(x):
    x[0, 0] = 0.0
    return np.sum(x ** 2)


@case(_u(3))
def write_into_argument_view(x):
    v = x[1:]
    v *= 2
    return np.sum(x ** 2)


@case(_u(3), _u(3))
def write_into_second_argument(x, y):
    y[:] = x * 2
    return np.sum(y * x)


# ---------------------------------------------------------------- globals holding arrays
G = np.array([1.0, 2.0, 3.0])


@case(_u(3))
def global_array_read(x):
    y = x.copy()
    y *= G
    return np.sum(y)


@case(_u(3))
def global_array_view_of_local(x):
    g = G.copy()
    g[0] = x[0]
    return np.sum(g * x)


# ---------------------------------------------------------------- misc user idioms
@case(_u(4))
def running_max_inplace(x):
    m = x.copy()
    for i in range(1, 4):
        m[i] = max(m[i], m[i - 1])
    return np.sum(m * np.arange(4.0))


@case(_u(4))
def np_maximum_out(x):
    m = x.copy()
    np.maximum(m, 1.0, out=m)
    return np.sum(m * x)


@case(_u(3, 3))
def triangle_zero(A):
    B = A.copy()
    B[np.triu_indices(3, 1)] = 0.0
    return np.sum(B ** 2)


@case(_u(3, 3))
def symmetrize_inplace(A):
    B = A.copy()
    B += B.T
    return np.sum(B * A)


@case(_u(3, 3))
def symmetrize_inplace_half(A):
    B = A.copy()
    B[:] = 0.5 * (B + B.T)
    return np.sum(B * A)


@case(_u(3, 3))
def transpose_inplace_aliased(A):
    B = A.copy()
    B[:] = B.T
    return np.sum(B * np.arange(9.0).reshape(3, 3))


@case(_u(4))
def ring_buffer(x):
    buf = np.zeros(3)
    acc = 0.0
    for i in range(4):
        buf[:-1] = buf[1:]
        buf[-1] = x[i]
        acc += np.sum(buf * np.array([0.2, 0.3, 0.5]))
    return acc


@case(_u(4))
def ring_buffer_roll(x):
    buf = np.zeros(3)
    for i in range(4):
        buf = np.roll(buf, -1)
        buf[-1] = x[i] ** 2
    return np.sum(buf)


@case(_u(4))
def particle_update(x):
    pos = x.reshape(2, 2).copy()
    vel = np.zeros_like(pos)
    for _ in range(3):
        vel -= 0.1 * pos
        pos += 0.1 * vel
    return np.sum(pos ** 2)


@case(_u(4))
def particle_update_views(x):
    state = np.zeros((2, 4))
    state[0] = x
    pos = state[0]
    vel = state[1]
    for _ in range(3):
        vel -= 0.1 * pos
        pos += 0.1 * vel
    return np.sum(state ** 2)


@case(_u(6))
def unpacked_state_views(x):
    s = x.copy()
    p, q = s[:3], s[3:]
    p += q
    q *= p
    return np.sum(s ** 2)


@case(_u(6))
def split_views(x):
    s = x.copy()
    a, b = np.split(s, 2)
    a += 1.0
    return np.sum(s ** 2) + np.sum(b)


@case(_u(6))
def hsplit_views(x):
    s = x.reshape(2, 3).copy()
    parts = np.hsplit(s, 3)
    parts[0][:] = 0.0
    return np.sum(s * x.reshape(2, 3))


@case(_u(6))
def array_split_views(x):
    s = x.copy()
    for part in np.array_split(s, 3):
        part *= part[0]
    return np.sum(s)


@case(_u(4))
def iterate_1d_elements_write(x):
    y = x.copy()
    for e in y:
        e *= 2.0  # an element of a 1-d array is a copy: no effect
    return np.sum(y ** 2)


@case(_u(4))
def iter_nditer_refuse(x):
    y = x.copy()
    for i in range(len(y)):
        y[i] = y[i] ** 2 if y[i] > 1 else -y[i]
    return np.sum(y)


@case(_u(3, 3))
def row_swap_pivot(A):
    B = A.copy()
    p = int(np.argmax(np.abs(B[:, 0])))
    B[[0, p]] = B[[p, 0]]
    return np.sum(B * np.arange(9.0).reshape(3, 3))


@case(_u(3, 3) + np.eye(3) * 3)
def gaussian_elim(A):
    U = A.copy()
    n = 3
    for k in range(n - 1):
        for i in range(k + 1, n):
            f = U[i, k] / U[k, k]
            U[i, k:] -= f * U[k, k:]
    return np.prod(np.diag(U))


@case(_u(3, 3) + np.eye(3) * 3)
def gaussian_elim_rows(A):
    U = A.copy()
    for k in range(2):
        pivot = U[k]
        for i in range(k + 1, 3):
            row = U[i]
            row -= (row[k] / pivot[k]) * pivot
    return U[2, 2] * U[1, 1]


@case(_u(3))
def np_array_of_list_of_views(x):
    y = x.copy()
    M = np.array([y, y * 2])
    y[0] = 0.0
    return np.sum(M ** 2)


@case(_u(3))
def concatenate_then_write(x):
    y = x.copy()
    z = np.concatenate([y, y])
    y[0] = 5.0
    z[1] = 0.0
    return np.sum(z * 2) + np.sum(y)


@case(_u(3))
def np_asarray_list(x):
    L = [x[0], x[1], x[2]]
    a = np.asarray(L)
    a[0] = 0.0
    return np.sum(a * x)


@case(_u(2, 3))
def x_T_aug_direct(x):
    Y = x.copy()
    Y.T[0] += 1.0
    Y.T[:, 1] *= 3.0
    return np.sum(Y ** 2)


@case(_u(2, 3))
def reshape_aug_direct(x):
    Y = x.copy()
    Y.reshape(3, 2)[:, 0] += Y[0, 0]
    return np.sum(Y ** 2)


@case(_u(2, 3))
def ravel_aug_direct(x):
    Y = x.copy()
    Y.ravel()[::2] += 1.0
    return np.sum(Y ** 2)


@case(_u(2, 3))
def fortran_reshape_write(x):
    Y = np.asfortranarray(x.copy())
    r = Y.reshape(3, 2, order="F")
    r[0, 0] = 7.0
    return np.sum(Y * x)


@case(_u(2, 3))
def fortran_ravel_write(x):
    Y = x.copy()
    r = Y.ravel(order="F")  # a copy for a C array
    r[0] = 7.0
    return np.sum(Y * x) + np.sum(r)


@case(_u(4))
def view_then_rebind_base(x):
    y = x.copy()
    v = y[:2]
    y = y * 2.0
    v[0] = 9.0
    return np.sum(y) + np.sum(v)


@case(_u(4))
def base_rebound_in_loop(x):
    y = x.copy()
    v = y[1:3]
    for i in range(2):
        v += 1.0
        y = y + v.sum()
    return np.sum(y)


@case(_u(4))
def closure_writes(x):
    y = x.copy()

    def bump(i):
        y[i] += 1.0
    bump(0)
    bump(2)
    return np.sum(y ** 2)


@case(_u(4))
def lambda_on_view(x):
    y = x.copy()
    sq = lambda a: a ** 2
    v = y[:2]
    v[:] = sq(v)
    return np.sum(y)


@case(_u(4))
def while_loop_write(x):
    y = x.copy()
    i = 0
    while i < 4:
        y[i] *= (i + 1)
        i += 1
    return np.sum(y ** 2)


@case(_u(4))
def branch_write_in_loop(x):
    y = x.copy()
    for i in range(4):
        if y[i] > 1.0:
            y[i] = 1.0
        else:
            y[i] *= 2.0
    return np.sum(y * x)


@case(_u(4))
def break_in_write_loop(x):
    y = np.zeros(4)
    for i in range(4):
        y[i] = x[i] ** 2
        if i == 2:
            break
    return np.sum(y)


@case(_u(4))
def continue_in_write_loop(x):
    y = x.copy()
    for i in range(4):
        if i % 2:
            continue
        y[i] = -y[i] * x[3 - i]
    return np.sum(y ** 2)


@case(_u(3), _u(3))
def vjp_two_outputs(x, y):
    a = x.copy()
    a += y
    b = a[::-1]
    return a, b


@case(_u(3))
def vjp_returns_view(x):
    y = x.copy()
    v = y[1:]
    y[2] = 0.0
    return v


@case(_u(3))
def vjp_returns_list(x):
    y = x.copy()
    L = [y, y ** 2]
    y *= 3
    return L[0] + L[1]


@case(_u(2, 3))
def vjp_returns_rows(x):
    P = x.copy()
    for r in P:
        r /= r.sum()
    return P


# ---------------------------------------------------------------- more dtype spellings
@case(_u(3, lo=0.5, hi=3.0))
def int_dtype_positional(v):
    b = np.array(v, int)
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_dtype_string(v):
    b = np.zeros(3, "int64")
    b[:] = v * 2
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_dtype_char(v):
    b = np.ones(3, dtype="i")
    b[1] = v[1] * 3
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def uint8_positional(v):
    b = np.zeros(3, np.uint8)
    b[...] = v * 40
    return np.sum(b * v) / 10


@case(_u(2, 2, lo=0.5, hi=3.0))
def bool_dtype_string(v):
    m = np.zeros((2, 2), dtype="bool")
    m[0] = v[0]
    return np.sum(m * v)


@case(_u(3, lo=0.5, hi=3.0))
def empty_like_int(v):
    b = np.empty_like(v, dtype=int)
    b[:] = v
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def zeros_like_int_kw(v):
    b = np.zeros_like(v, dtype=np.int32)
    b += (v * 2).astype(np.int32)
    b[0] = v[0] * 7
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def full_like_int(v):
    b = np.full_like(v, 0, dtype=int)
    b[1:] = v[1:] * 5
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def full_int_fill(v):
    b = np.full(3, 0)
    b[:] = v * 3
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def full_int_fill_shape_tuple(v):
    b = np.full((3,), 1)
    b[2] = v[2] * 3
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0), np.array([1, 2, 3]), wrt=0)
def zeros_like_int_argument(v, k):
    b = np.zeros_like(k)
    b[:] = v * 2
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0), np.array([1, 2, 3]), wrt=0)
def int_argument_written(v, k):
    kk = k.copy()
    kk[0] = v[0] * 3
    return np.sum(kk * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_list_array(v):
    b = np.array([0] * 3)
    b[0] = v[0] * 2
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_range_array(v):
    b = np.array(range(3))
    b[1] = v[1] * 2
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def bool_list_array(v):
    b = np.array([True, False, True])
    b[:] = v > 1.5
    b[0] = v[0]
    return np.sum(np.where(b, v, 0.0))


@case(_u(3, lo=0.5, hi=3.0))
def float_list_array(v):
    b = np.array([1, 2.0, 3])
    b[0] = v[0] * 2
    return np.sum(b * v)


@case(_u(3, 3, lo=0.5, hi=3.0))
def eye_int(v):
    E = np.eye(3, dtype=int)
    E[0] = v[0]
    return np.sum(E * v)


@case(_u(3, lo=0.5, hi=3.0))
def astype_int_then_write(v):
    b = v.astype(int)
    b[0] = v[0] * 10
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def astype_int_positional_np(v):
    b = v.astype(np.int64)
    b += 1
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def asarray_int(v):
    b = np.asarray(v, dtype=int)
    return np.sum(b * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_view_of_int(v):
    k = np.zeros((2, 3), dtype=np.int64)
    r = k.T
    r[:, 0] = v * 4
    return np.sum(k[0] * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_out_ufunc(v):
    k = np.zeros(3, dtype=int)
    np.multiply(v, 3, out=k, casting="unsafe")
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_copyto_unsafe(v):
    k = np.zeros(3, dtype=int)
    np.copyto(k, v * 3, casting="unsafe")
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_plus_float_rebind(v):
    k = np.zeros(3, dtype=int)
    k = k + v
    k[0] = v[1] ** 2
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_buffer(v):
    b = Buffer(np.arange(3))
    b[0] = v[0] * 2.5
    return np.sum(b[:] * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_from_where(v):
    k = np.where(v > 1.0, 1, 0)
    k[0] = v[0] * 3
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_from_argsort_written(v):
    k = np.argsort(v)
    k[0] = v[0]
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_from_comparison_sum(v):
    c = (v > 1.0).astype(int)
    c[1] = v[1] * 2
    return np.sum(c * v)


@case(_u(4, lo=0.5, hi=3.0))
def int_reshape_view_written(v):
    k = np.zeros(4, dtype=int)
    m = k.reshape(2, 2)
    m[0] = v[:2] * 5
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_in_list_then_array(v):
    L = [0, 0, 0]
    for i in range(3):
        L[i] = int(v[i] * 10)
    return np.sum(np.array(L) * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_stack_written(v):
    k = np.stack([np.zeros(3, int), np.ones(3, int)])
    k[0] = v * 3
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_concat_written(v):
    k = np.concatenate([np.zeros(2, int), np.arange(1)])
    k[:] = v * 3
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_tile_written(v):
    k = np.tile(np.arange(3), 1)
    k[:] = v * 3
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_copy_method_written(v):
    k = np.arange(3).copy()
    k[1] = v[1] * 4
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_if_branch_storage(v):
    if v[0] > 0.0:
        k = np.zeros(3, dtype=int)
    else:
        k = np.zeros(3)
    k[:] = v * 3
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_loop_carried_storage(v):
    k = np.zeros(3, dtype=int)
    for i in range(3):
        k[i] = v[i] * 3
    return np.sum(k * v)


@case(_u(3, lo=0.5, hi=3.0))
def int_loop_aug_float(v):
    acc = np.zeros(3, dtype=int)
    for i in range(2):
        acc[:] = acc + v * 2
    return np.sum(acc * v)


@case(_u(3, lo=0.5, hi=3.0))
def bool_view_written(v):
    m = np.zeros((2, 3), dtype=bool)
    r = m[1]
    r[:] = v
    return np.sum(m[1] * v)


# ---------------------------------------------------------------- more views
def first_row(A):
    return A[0]


def col(A, j):
    return A[:, j]


@case(_u(2, 3))
def helper_returns_view(x):
    Y = x.copy()
    r = first_row(Y)
    r *= 2.0
    c = col(Y, 1)
    c[:] = 0.0
    return np.sum(Y * x)


@case(_u(2, 3))
def helper_returns_view_then_read_stale(x):
    Y = x.copy()
    r = first_row(Y)
    Y[0, 0] = 10.0
    return np.sum(r * x[1])


@case(_u(2, 3))
def loop_row_setitem(x):
    Y = x.copy()
    for row in Y:
        row[:] = row / row.sum()
    return np.sum(Y ** 2)


@case(_u(2, 3))
def loop_row_mask(x):
    Y = x.copy()
    for row in Y:
        row[row < 1.0] = 0.0
    return np.sum(Y ** 2)


@case(_u(3, 2))
def swap_cols_views(x):
    A = x.copy()
    A[:, 0], A[:, 1] = A[:, 1], A[:, 0]
    return np.sum(A * np.arange(6.0).reshape(3, 2))


@case(_u(3, 2))
def copyto_transpose(x):
    A = np.zeros((2, 3))
    np.copyto(A.T, x)
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(3, 2))
def out_into_transpose(x):
    A = np.zeros((2, 3))
    np.add(x, 1.0, out=A.T)
    return np.sum(A * np.arange(6.0).reshape(2, 3))


@case(_u(3))
def self_matvec(x):
    M = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.5], [0.5, 0.0, 1.0]])
    u = x.copy()
    u[:] = np.dot(M, u)
    u[...] = u[::-1]
    return np.sum(u * np.arange(3.0))


@case(_u(6))
def out_into_strided(x):
    a = x.copy()
    np.multiply(a[::2], a[1::2], out=a[::2])
    return np.sum(a ** 2)


@case(_u(6))
def reversal_inplace(x):
    a = x.copy()
    a[:] = a[::-1]
    a[:3] += a[3:][::-1]
    return np.sum(a * np.arange(6.0))


@case(_u(4))
def view_written_in_branch_read_after(x):
    y = x.copy()
    v = y[:2]
    if x[0] > 0.0:
        y[0] = 5.0 * x[3]
    return np.sum(v ** 2)


@case(_u(4))
def view_written_in_loop_read_after(x):
    y = x.copy()
    v = y[1:]
    for i in range(3):
        y[i] = y[i + 1] * 0.5
    return np.sum(v ** 2)


@case(_u(4))
def view_of_loop_var_in_loop(x):
    y = x.copy()
    for i in range(2):
        w = y[i:]
        w[0] += w[1]
    return np.sum(y ** 2)


@case(_u(2, 3))
def nested_loop_views(x):
    Y = x.copy()
    for r in Y:
        for j in range(3):
            r[j] *= (j + 1)
    return np.sum(Y ** 2)


@case(_u(2, 3))
def nested_loop_elements_write(x):
    Y = x.copy()
    for row in Y:
        for e in row:
            e *= 2  # elements are copies
    return np.sum(Y ** 2)


@case(_u(2, 3))
def loop_target_rebinding_row(x):
    Y = x.copy()
    for row in Y:
        row = row * 2.0  # a new array: Y unchanged
    return np.sum(Y ** 2)


@case(_u(2, 3))
def loop_row_rebind_then_update(x):
    Y = x.copy()
    out = []
    for row in Y:
        row = row / row.sum()
        row *= 2
        out.append(row)
    return np.sum(Y) + np.sum(np.array(out) ** 2)


@case(_u(2, 3))
def view_in_tuple_written(x):
    Y = x.copy()
    a, b = Y[0], Y[1]
    a += b
    return np.sum(Y ** 2)


@case(_u(2, 3))
def view_from_list_of_rows_written(x):
    Y = x.copy()
    rows = [Y[0], Y[1]]
    rows[0] *= 3
    return np.sum(Y ** 2)


@case(_u(2, 3))
def view_iter_reversed_rows(x):
    Y = x.copy()
    for r in Y[::-1]:
        r += r[0]
    return np.sum(Y ** 2)


@case(_u(2, 3))
def view_iter_rows_of_slice(x):
    Y = x.copy()
    for r in Y[:, 1:]:
        r *= 2
    return np.sum(Y ** 2)


@case(_u(4, 4))
def view_blocks(x):
    Y = x.copy()
    for i in range(2):
        blk = Y[2 * i:2 * i + 2, 2 * i:2 * i + 2]
        blk -= blk.mean()
    return np.sum(Y ** 2)


@case(_u(4))
def np_asarray_arg_written(x):
    y = np.asarray(x)  # the argument itself
    y = y * 2
    return np.sum(y)


@case(_u(4))
def np_asarray_arg_write_inplace(x):
    y = np.asarray(x)
    y[0] = 0.0
    return np.sum(x ** 2)


@case(_u(4))
def np_array_arg_write(x):
    y = np.array(x)
    y[0] = 0.0
    return np.sum(x ** 2) + np.sum(y)


@case(_u(2, 3))
def write_T_of_argument(x):
    x.T[0] = 1.0
    return np.sum(x ** 2)


@case(_u(2, 3))
def out_arg_itself(x):
    np.multiply(x, 2.0, out=x)
    return np.sum(x ** 2)


@case(_u(2, 3))
def aug_arg_row_loop(x):
    for r in x:
        r /= r.sum()
    return np.sum(x ** 2)


@case(_u(4))
def alias_view_view_written_helper(x):
    y = x.copy()
    axpy(y[:2], 1.0, y[2:])
    return np.sum(y ** 2)


@case(_u(4))
def alias_same_view_twice(x):
    y = x.copy()
    axpy(y[1:3], 1.0, y[1:3])
    return np.sum(y ** 2)


def fill_rows(M, v):
    for i in range(M.shape[0]):
        M[i] = v * (i + 1)


@case(_u(3))
def helper_fill_rows(v):
    M = np.zeros((2, 3))
    fill_rows(M, v)
    fill_rows(M.T, v[:2])
    return np.sum(M ** 2)


def rhs_views(du, u):
    x, y = u[0], u[1]
    dx, dy = du[:1], du[1:]
    dx[:] = y
    dy[:] = -x


@case(_u(2))
def rhs_views_call(u0):
    u = u0.copy()
    du = np.zeros(2)
    for _ in range(3):
        rhs_views(du, u)
        u += 0.1 * du
    return np.sum(u ** 2)


def rhs_2d(du, u, p):
    du[:, 0] = u[:, 1]
    du[:, 1] = -p * u[:, 0]


@case(_u(3, 2), 2.0, wrt=(0, 1))
def rhs_2d_euler(u0, p):
    u = u0.copy()
    du = np.zeros_like(u)
    for _ in range(2):
        rhs_2d(du, u, p)
        u = u + 0.1 * du
    return np.sum(u ** 2)


@case(_u(3))
def buffer_view_T(x):
    b = Buffer.zeros((3, 2))
    b[:, 0] = x
    b[:, 1] = x ** 2
    return np.sum(b[:].T @ x)


@case(_u(3))
def buffer_snapshot_then_write(x):
    b = Buffer(x)
    s = np.array(b)
    b[0] = 10.0
    return np.sum(s ** 2) + np.sum(b[:])


@case(_u(3))
def buffer_in_loop_history(x):
    b = Buffer(x)
    hist = []
    for i in range(3):
        b[i] = b[i] * 2 + 1
        hist.append(b[:])
    return np.sum(np.stack(hist) ** 2)


def fill_rows_T(M, v):
    for i in range(M.shape[0]):
        M[i] = v * (i + 1)


@case(_u(3))
def helper_loop_writes_transposed_view(v):
    M = np.zeros((2, 3))
    fill_rows_T(M.T, v[:2])
    return np.sum(M ** 2)


def fill_while(M, v):
    i = 0
    while i < M.shape[0]:
        M[i] = v * i
        i += 1


@case(_u(3))
def helper_while_writes_flipped_view(v):
    M = np.zeros((3, 2))
    fill_while(M[:, ::-1], v[:2])
    return np.sum(M * np.arange(6.0).reshape(3, 2))


def rows_normalize_(M):
    for r in M:
        r /= r.sum()


@case(_u(3))
def helper_normalizes_columns(v):
    M = np.outer(v, v) + 1.0
    rows_normalize_(M.T)
    return np.sum(M ** 2 * np.arange(9.0).reshape(3, 3))


def fill_nested(M, v):
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            M[i, j] = v[i] * v[j]


@case(_u(3))
def helper_nested_loops_write_view(v):
    M = np.zeros((4, 4))
    fill_nested(M[1:, :3], v)
    return np.sum(M ** 2)


@case(_u(3))
def dict_scalar_then_update(u):
    s = float(u[0])
    d = {"s": s, "v": u}
    s += 1.0
    return d["s"] * 2 + s + np.sum(d["v"])


@case(_u(3))
def dict_array_then_aug(u):
    v = u * 1.0
    d = {"v": v}
    v -= 0.5
    return np.sum(d["v"] ** 2)


@case(_u(3))
def list_of_scalars_aug(u):
    out = [0.0] * 3
    for i in range(3):
        out[i] += u[i] ** 2
        out[i] *= 2
    return out[0] + out[1] * out[2]


@case(_u(3))
def list_of_fresh_arrays_aug(u):
    L = [u.copy(), u * 2]
    L[1] += 1.0
    return np.sum(L[0] * L[1])


@case(_u(2, 3))
def list_of_rows_aug_slot(x):
    Y = x.copy()
    rows = list(Y)
    rows[1] -= rows[0]
    return np.sum(Y ** 2)


# ---------------------------------------------------------------- maybe-views decided at run time
@case(_u(2, 3))
def ascontiguous_of_T_write(x):
    Y = x.copy()
    C = np.ascontiguousarray(Y.T)  # a copy: Y.T is not contiguous
    C[0] = 0.0
    return np.sum(Y * x) + np.sum(C ** 2)


@case(_u(2, 3))
def asarray_of_T_write(x):
    Y = x.copy()
    C = np.asarray(Y.T)  # a view
    C[0] = 0.0
    return np.sum(Y * x)


@case(_u(2, 3))
def reshape_of_T_write(x):
    Y = x.copy()
    R = Y.T.reshape(-1)  # a copy
    R[:2] = 5.0
    return np.sum(Y * x) + np.sum(R * R)


@case(_u(2, 3))
def ravel_fn_of_T_aug(x):
    Y = x.copy()
    R = np.ravel(Y.T)
    R += 1.0
    return np.sum(Y * x) + np.sum(R ** 2)


@case(_u(2, 3))
def reshape_contig_aug(x):
    Y = x.copy()
    R = Y.reshape(3, 2)
    R *= 2.0
    return np.sum(Y * x)


@case(_u(2, 3))
def index_row_maybe_scalar(x):
    Y = x.copy()
    r = Y[1]
    r[0] = 3.0
    return np.sum(Y * x)


@case(_u(3))
def index_elem_aug_copy(x):
    y = x.copy()
    e = y[1]
    e += 10.0  # a number: y unchanged
    return np.sum(y ** 2) + e


@case(_u(2, 2))
def index_elem_2d_aug_copy(x):
    Y = x.copy()
    e = Y[1, 0]
    e *= 3.0
    return np.sum(Y ** 2) + e


@case(_u(3, 3))
def index_var_int_row(x):
    Y = x.copy()
    k = int(np.argmax(x[:, 0]))
    row = Y[k]
    row -= 1.0
    return np.sum(Y ** 2)


@case(_u(3, 3))
def index_none_expand_write(x):
    Y = x.copy()
    E = Y[:, None, :]
    E[:, 0, 1] = 0.0
    return np.sum(Y * x)


@case(_u(2, 3))
def diagonal_method_write_refused(x):
    Y = np.zeros((3, 3))
    Y[:2] = x
    d = Y.diagonal()
    return np.sum(d * 2)


# ---------------------------------------------------------------- out= and copyto, more spellings
@case(_u(3))
def out_positional_binary_into_view(x):
    y = np.zeros((2, 3))
    np.subtract(x, 1.0, y[1])
    return np.sum(y * np.arange(6.0).reshape(2, 3))


@case(_u(3))
def out_into_argument_slot_helper(x):
    y = np.zeros(3)
    out_helper(x, y)
    return np.sum(y ** 2)


def out_helper(a, out):
    np.multiply(a, a, out=out)
    out += 1.0


@case(_u(3))
def out_chain(x):
    y = np.empty(3)
    np.exp(x, out=y)
    np.log(y, out=y)
    np.multiply(y, x, out=y)
    return np.sum(y)


@case(_u(3))
def out_reads_other_view(x):
    y = np.concatenate([x, x])
    np.add(y[:3], y[3:], out=y[3:])
    return np.sum(y ** 2)


@case(_u(3))
def out_overlapping_views(x):
    y = np.concatenate([x, x])
    np.add(y[:4], 1.0, out=y[2:])
    return np.sum(y * np.arange(6.0))


@case(_u(3))
def out_none_kw(x):
    y = np.exp(x, out=None)
    return np.sum(y)


@case(_u(2, 3))
def copyto_row_where(x):
    Y = np.zeros((2, 3))
    np.copyto(Y[0], x[1], where=x[0] > 1.0)
    return np.sum(Y * x)


@case(_u(2, 3))
def copyto_broadcast_row(x):
    Y = np.zeros((2, 3))
    np.copyto(Y, x[0])
    return np.sum(Y * x)


@case(_u(2, 3))
def copyto_broadcast_col(x):
    Y = np.zeros((2, 3))
    np.copyto(Y, x[:, :1])
    return np.sum(Y * x)


@case(_u(2, 3))
def copyto_list_src(x):
    Y = x.copy()
    np.copyto(Y[0], [1.0, 2.0, 3.0])
    return np.sum(Y * x)


@case(_u(3))
def copyto_scalar_src(x):
    y = x.copy()
    np.copyto(y, x[0])
    return np.sum(y * x)


@case(_u(3))
def copyto_into_int(x):
    k = np.zeros(3, dtype=int)
    np.copyto(k, x * 3, casting="unsafe")
    return np.sum(k * x)


@case(_u(3))
def copyto_self_reverse(x):
    y = x.copy()
    np.copyto(y, y[::-1])
    return np.sum(y * np.arange(3.0))


# ---------------------------------------------------------------- broadcasting writes, more
@case(_u(2, 3))
def write_1n_row_slice(x):
    Y = np.zeros((2, 3))
    Y[0, :] = x[1:2]
    Y[1:2] = x[0]
    return np.sum(Y * np.arange(6.0).reshape(2, 3))


@case(_u(2, 3))
def write_11n_into_row(x):
    Y = np.zeros((2, 3))
    Y[0] = x[None, 1:2, :]
    return np.sum(Y * np.arange(6.0).reshape(2, 3))


@case(_u(2, 3))
def write_n1_into_column(x):
    Y = np.zeros((3, 2))
    Y[:, 0] = x[0]
    Y[:, 1:] = x[1][:, None]
    return np.sum(Y * np.arange(6.0).reshape(3, 2))


@case(_u(2, 3))
def aug_1n_into_row(x):
    Y = x.copy()
    Y[0] += x.sum(0, keepdims=True)[0]
    Y[1] -= x.mean(axis=0, keepdims=True).ravel()
    return np.sum(Y ** 2)


@case(_u(3))
def buffer_write_keepdims(x):
    b = Buffer.zeros((2, 3))
    M = np.outer(x, x)
    b[0] = M.sum(axis=0, keepdims=True)
    b[1] = (x[None, :] @ M)
    return np.sum(b[:] ** 2)


@case(_u(3))
def buffer_11_into_slot(x):
    b = Buffer.zeros(3)
    b[0] = (x[None, :] @ x[:, None])[0, 0]
    b[1:] = x[1:][None]
    return np.sum(b[:] * x)


@case(_u(3))
def mask_write_broadcast_row(x):
    Y = np.zeros((3, 3))
    m = x > 1.0
    Y[m] = x
    return np.sum(Y * np.arange(9.0).reshape(3, 3))


@case(_u(3))
def fancy_2d_write(x):
    Y = np.zeros((3, 3))
    Y[[0, 1, 2], [2, 1, 0]] = x
    Y[np.arange(3), 0] += x ** 2
    return np.sum(Y * np.arange(9.0).reshape(3, 3))


@case(_u(3))
def fancy_write_row_list(x):
    Y = np.zeros((3, 3))
    Y[[0, 2]] = x
    return np.sum(Y * np.arange(9.0).reshape(3, 3))


@case(_u(3))
def fancy_write_then_read_view(x):
    Y = np.zeros((3, 3))
    v = Y[0]
    Y[[0, 2]] = x
    return np.sum(v * x)


# ---------------------------------------------------------------- integrators with state arrays
def rhs_matrix(du, u, A):
    du[:] = A @ u


@case(_u(3), wrt=0)
def rk2_matrix(u0):
    A = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.5], [0.0, -0.5, 0.0]])
    u = u0.copy()
    k1 = np.empty(3)
    k2 = np.empty(3)
    for _ in range(3):
        rhs_matrix(k1, u, A)
        rhs_matrix(k2, u + 0.1 * k1, A)
        u += 0.05 * (k1 + k2)
    return np.sum(u ** 2)


def rhs_lorenz(du, u, p, t):
    s, r, b = p
    du[0] = s * (u[1] - u[0])
    du[1] = u[0] * (r - u[2]) - u[1]
    du[2] = u[0] * u[1] - b * u[2]


@case(_u(3), np.array([10.0, 28.0, 8.0 / 3.0]), wrt=(0, 1))
def lorenz_euler(u0, p):
    u = u0.copy()
    du = np.zeros(3)
    t = 0.0
    for _ in range(4):
        rhs_lorenz(du, u, p, t)
        u += 0.01 * du
        t += 0.01
    return u[2]


@case(_u(3), np.array([10.0, 28.0, 8.0 / 3.0]))
def lorenz_store_traj(u0, p):
    traj = np.zeros((4, 3))
    u = u0.copy()
    du = np.zeros(3)
    for n in range(4):
        traj[n] = u
        rhs_lorenz(du, u, p, 0.0)
        u = u + 0.01 * du
    return np.sum(traj[:, 0] ** 2)


@case(_u(3), np.array([10.0, 28.0, 8.0 / 3.0]))
def lorenz_traj_rows_alias(u0, p):
    traj = np.zeros((4, 3))
    traj[0] = u0
    du = np.zeros(3)
    for n in range(3):
        rhs_lorenz(du, traj[n], p, 0.0)
        traj[n + 1] = traj[n] + 0.01 * du
    return np.sum(traj ** 2)


@case(_u(3), np.array([10.0, 28.0, 8.0 / 3.0]))
def lorenz_rhs_into_traj_row(u0, p):
    D = np.zeros((3, 3))
    u = u0.copy()
    for n in range(3):
        rhs_lorenz(D[n], u, p, 0.0)
        u = u + 0.01 * D[n]
    return np.sum(D ** 2) * 1e-3


def scale_shift_nested(M, w):
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            M[i, j] = M[i, j] * w + 0.62


@case(_u(2, 3))
def helper_nested_loops_write_argument(A):
    B = A + 0.0
    scale_shift_nested(B, np.mean(A))
    return np.sum(B * A)


@case(_u(2, 3))
def helper_nested_loops_write_transposed(A):
    B = A * 1.0
    scale_shift_nested(B.T, A[0, 0])
    return np.sum(B * A)


def scale_rows_while(M, w):
    i = 0
    while i < M.shape[0]:
        for j in range(M.shape[1]):
            M[i, j] *= w
        i += 1


@case(_u(2, 3))
def helper_while_for_write_argument(A):
    B = A.copy()
    scale_rows_while(B, np.sum(A) * 0.1)
    return np.sum(B ** 2)


@case(_u(2, 3))
def row_from_list_of_rows_updated(A):
    B = A * 1.0
    rows = list(B)
    r = rows[0]
    r -= 2.0
    return np.mean(B ** 3) + np.sum(rows[0])


@case(_u(2, 3))
def row_from_list_of_rows_written(A):
    B = np.copy(A)
    rows = list(B)
    r = rows[1]
    r[0] = 5.0
    return np.sum(B * A)


@case(_u(2, 3))
def row_from_tuple_of_rows_updated(A):
    B = A.copy()
    rows = tuple(B)
    r = rows[0]
    r *= 2.0
    return np.sum(B * A)


@case(_u(2, 3))
def loop_rebinds_nested(x):
    y = x
    for i in range(3):
        for j in range(i + 1):
            y = np.sin(y * 0.8) + y * 0.5
    return np.sum(y)


@case(_u(2, 3))
def tuple_display_then_aug(A):
    B = A.copy()
    c = (B, 1.0)
    B *= 1.5
    return np.sum(c[0] ** 2) + np.sum(B * A)


@case(_u(3))
def tuple_display_scalar_then_aug(x):
    s = float(x[0])
    c = (s, x)
    s *= 3.0
    return c[0] + s + np.sum(c[1])


@case(_u(3))
def unpack_pair_then_aug(x):
    s, t = 0.0, 1.0
    for i in range(3):
        s, t = t, s + t * x[i]
        s *= 2
    return s


# ---------------------------------------------------------------- batch 4: state vectors split into views
def rhs_oscillators(du, u, k):
    n = u.shape[0] // 2
    x = u[:n]
    v = u[n:]
    dx = du[:n]
    dv = du[n:]
    dx[:] = v
    dv[:] = -k * x
    dv[1:] += 0.1 * (x[:-1] - x[1:])


@case(_u(6), 2.0, wrt=(0, 1))
def oscillators_euler(u0, k):
    u = u0.copy()
    du = np.zeros_like(u)
    for _ in range(3):
        rhs_oscillators(du, u, k)
        u += 0.05 * du
    return np.sum(u ** 2)


@case(_u(6))
def oscillators_leapfrog_views(u0):
    u = u0.copy()
    x = u[:3]
    v = u[3:]
    for _ in range(3):
        v -= 0.05 * x
        x += 0.1 * v
        v -= 0.05 * x
    return np.sum(u * u0)


@case(_u(6))
def oscillators_symplectic_copy(u0):
    x = u0[:3].copy()
    v = u0[3:].copy()
    for _ in range(3):
        v = v - 0.1 * np.sin(x)
        x = x + 0.1 * v
    return np.sum(x ** 2) + np.sum(v)


def f_scipy_style(t, y):
    dy = np.empty_like(y)
    dy[0] = y[1]
    dy[1] = -np.sin(y[0]) - 0.1 * y[1]
    return dy


@case(_u(2))
def scipy_style_rk4(y0):
    y = y0.copy()
    h = 0.1
    t = 0.0
    for _ in range(3):
        k1 = f_scipy_style(t, y)
        k2 = f_scipy_style(t + h / 2, y + h / 2 * k1)
        k3 = f_scipy_style(t + h / 2, y + h / 2 * k2)
        k4 = f_scipy_style(t + h, y + h * k3)
        y += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    return y[0] ** 2 + y[1]


@case(_u(2))
def scipy_style_store_all(y0):
    ys = np.zeros((4, 2))
    ys[0] = y0
    for n in range(3):
        ys[n + 1] = ys[n] + 0.1 * f_scipy_style(0.0, ys[n])
    return np.sum(ys[:, 0] * np.arange(4.0))


@case(_u(3))
def buffer_integrator(u0):
    traj = Buffer.zeros((4, 3))
    traj[0] = u0
    for n in range(3):
        prev = traj[n]
        traj[n + 1] = prev - 0.1 * prev ** 3
    return np.sum(traj[:] ** 2)


@case(_u(3))
def buffer_state_aug(u0):
    s = Buffer(u0)
    for n in range(3):
        s[:] = s[:] * 0.9
        s[0] += 0.1 * s[2]
    return np.sum(s[:] ** 2)


def ufunc_into(a, out):
    np.sin(a, out)


@case(_u(2, 3))
def out_positional_in_helper_rows(x):
    Y = np.zeros((2, 3))
    for i in range(2):
        ufunc_into(x[i], Y[i])
    return np.sum(Y * x)


@case(_u(2, 3))
def out_in_loop_rows_inplace(x):
    Y = x.copy()
    for r in Y:
        np.multiply(r, r[0], out=r)
    return np.sum(Y)


@case(_u(4))
def out_overlap_reverse(x):
    y = x.copy()
    np.negative(y, out=y[::-1])
    return np.sum(y * np.arange(4.0))


@case(_u(4))
def out_modf_tuple(x):
    frac = np.zeros(4)
    whole = np.zeros(4)
    np.modf(x * 3, out=(frac, whole))
    return np.sum(frac * x)


@case(_u(4), _u(4))
def out_dot(x, y):
    M = np.outer(x, y)
    z = np.zeros(4)
    np.dot(M, y, out=z)
    return np.sum(z ** 2)


@case(_u(4))
def out_add_reduce(x):
    M = np.outer(x, x)
    s = np.zeros(4)
    np.add.reduce(M, axis=0, out=s)
    return np.sum(s ** 2)


@case(_u(4))
def where_kw_without_out(x):
    y = np.exp(x, where=x > 1.0, out=np.zeros(4))
    return np.sum(y)


@case(_u(3, 3))
def aug_transpose_self_refused_or_right(A):
    B = A.copy()
    B += B.T.copy()
    B -= np.diag(np.diag(B))
    return np.sum(B * A)


@case(_u(3, 3))
def aug_overlapping_self_view(A):
    B = A.copy()
    B[1:] += B[:-1]
    B[:, 1:] *= B[:, :-1]
    return np.sum(B)


@case(_u(3, 3))
def rows_iter_with_prev(A):
    B = A.copy()
    prev = B[0]
    for r in B[1:]:
        r += 0.5 * prev
        prev = r
    return np.sum(B ** 2)


@case(_u(3, 3))
def rows_iter_with_prev_copy(A):
    B = A.copy()
    prev = B[0].copy()
    for r in B[1:]:
        r += 0.5 * prev
        prev = r.copy()
    return np.sum(B ** 2)


@case(_u(4))
def same_array_two_names_write(x):
    a = x.copy()
    b = a
    b[0] = 10.0 * x[1]
    return np.sum(a ** 2)


@case(_u(4))
def same_array_two_names_aug(x):
    a = x.copy()
    b = a
    b += 1.0
    return np.sum(a ** 2)


@case(_u(4))
def same_array_branch_alias(x):
    a = x.copy()
    if x[0] > 1.0:
        b = a
    else:
        b = a.copy()
    b[0] = 0.0
    return np.sum(a ** 2)


@case(_u(4))
def name_rebound_after_view(x):
    a = x.copy()
    v = a[1:]
    a = np.zeros(4)
    v[0] = 3.0
    a[2] = x[0]
    return np.sum(a) + np.sum(v)


@case(_u(2, 3))
def arg_row_view_passed_twice(x):
    Y = x.copy()
    axpy(Y[0], 2.0, Y[1])
    axpy(Y[1], 0.5, Y[0])
    return np.sum(Y ** 2)


@case(_u(4))
def int_index_array_write_float(x):
    idx = np.array([0, 2])
    idx[0] = x[0]  # truncates to int
    y = np.zeros(4)
    y[idx] = x[1:3]
    return np.sum(y * np.arange(4.0))


@case(_u(4, lo=0.0, hi=250.0))
def uint8_wraparound(x):
    img = np.zeros(4, dtype=np.uint8)
    img[:] = x
    img += 10  # wraps
    return np.sum(img.astype(float) * x) / 1000.0


@case(_u(4))
def bool_mask_aug_int(x):
    m = x > 1.0
    c = np.zeros(4, dtype=int)
    c[m] += 1
    return np.sum(c * x)


# ---------------------------------------------------------------- batch 5
@case(_u(2, 3))
def vjp_out_is_written_row(x):
    Y = x.copy()
    r = Y[0]
    Y[0] *= 2.0
    Y[1] = r * x[1]
    return Y


@case(_u(3))
def vjp_out_tuple_of_views(x):
    y = x.copy()
    y[1:] += y[:-1]
    return y[:2], y[::-1]


@case(_u(3))
def vjp_rhs_returns_du(u):
    du = np.zeros(3)
    du[0] = -u[0]
    du[1:] = u[:-1] - u[1:]
    du *= 2.0
    return du


@case(_u(2, 3))
def reshape_in_loop_write(x):
    Y = x.copy()
    for k in range(2):
        flat = Y.reshape(-1)
        flat[k * 2] += 1.0
        flat *= 0.9
    return np.sum(Y ** 2)


@case(_u(2, 3))
def transpose_reshape_in_loop(x):
    Y = x.copy()
    for k in range(2):
        flat = Y.T.reshape(-1)  # a copy
        flat[0] = 10.0
        Y = Y + flat.reshape(3, 2).T * 0.1
    return np.sum(Y ** 2)


@case(_u(3, 3))
def loop_over_columns_index(x):
    Y = x.copy()
    for j in range(3):
        c = Y[:, j]
        c /= np.linalg.norm(c)
        for k in range(j + 1, 3):
            Y[:, k] -= np.dot(c, Y[:, k]) * c
    return np.sum(Y * x)


@case(_u(3, 3))
def gram_schmidt_rows_copy(x):
    Q = np.zeros((3, 3))
    for i in range(3):
        v = x[i].copy()
        for j in range(i):
            v -= np.dot(Q[j], x[i]) * Q[j]
        Q[i] = v / np.linalg.norm(v)
    return np.sum(Q * x)


@case(_u(4))
def cumulative_view_shift(x):
    y = x.copy()
    a = y[1:]
    b = y[:-1]
    for _ in range(2):
        a += 0.5 * b
    return np.sum(y ** 2)


@case(_u(4))
def view_of_arg_written_in_loop(x):
    for i in range(3):
        x[i + 1] += x[i] * 0.5
    return np.sum(x ** 2)


@case(_u(2, 3))
def arg_row_loop_normalize(x):
    for i in range(x.shape[0]):
        x[i] = x[i] / x[i].sum()
    return np.sum(x ** 2)


@case(_u(4))
def np_copy_of_view_then_write_base(x):
    y = x.copy()
    c = np.copy(y[1:3])
    y[1] = 0.0
    return np.sum(c ** 2) + np.sum(y)


@case(_u(4))
def slice_assign_from_list_of_scalars(x):
    y = np.zeros(4)
    y[:] = [x[0], x[1] * 2, x[2] ** 2, 1.0]
    return np.sum(y * x)


@case(_u(4))
def array_from_list_of_scalars_then_write(x):
    y = np.array([x[0], x[1], 0.0, 0.0])
    y[2:] = x[2:] * y[:2]
    return np.sum(y ** 2)


@case(_u(4))
def write_0d_view(x):
    y = x.copy()
    e = y[1:2].reshape(())
    e[...] = 5.0 * x[0]
    return np.sum(y ** 2)


@case(_u(4))
def write_scalar_slot_from_0d(x):
    y = np.zeros(4)
    y[0] = np.sum(x)
    y[1] = np.array(x[1])
    y[2] = x[2:3][0]
    return np.sum(y * np.arange(4.0))


# ---------------------------------------------------------------- dicts in branches and loops
@case(_u(3))
def dict_made_in_branches(x):
    if x[0] > 1.0:
        d = {"a": x * 2}
    else:
        d = {"a": x * 3}
    return np.sum(d["a"])


@case(_u(3))
def dict_read_in_branches(x):
    d = {"a": x * 2}
    if x[0] > 1.0:
        y = d["a"] * 2
    else:
        y = d["a"] + 1
    return np.sum(y)


@case(_u(3))
def dict_read_in_loop(x):
    d = {"a": x * 2}
    for i in range(2):
        x = x + d["a"]
    return np.sum(x)


@case(_u(3))
def dict_in_one_branch(x):
    if x[0] > 1.0:
        d = {"a": x * 2}
        s = np.sum(d["a"])
    else:
        s = 0.0
    return s


@case(_u(3))
def dict_state_loop(x):
    state = {"u": x.copy(), "v": np.zeros(3)}
    for i in range(3):
        state["v"] += state["u"] * 0.1
        state["u"] -= state["v"]
    return np.sum(state["u"] ** 2)


# ---------------------------------------------------------------- Buffer reads are copies
@case(_u(3))
def buffer_copyto_into_read(x):
    b = Buffer.zeros((2, 3))
    copyto(b[0], x)  # b[0] is a copy: b unchanged
    return np.sum(b[:] ** 2) + np.sum(x)


@case(_u(3))
def buffer_read_written(x):
    b = Buffer.zeros((2, 3))
    r = b[0]
    r[:] = x
    return np.sum(b[:] ** 2) + np.sum(r * x)


def buffer_fill_row(buf, v):
    buf[1] = v * 2


@case(_u(3))
def buffer_written_in_helper(x):
    b = Buffer.zeros((2, 3))
    buffer_fill_row(b, x)
    return np.sum(b[:] ** 2)


@case(_u(3))
def buffer_aug_cyclic(x):
    b = Buffer(x)
    for i in range(3):
        b[i] *= b[(i + 1) % 3]
    return np.sum(b[:])


@case(_u(3))
def buffer_read_updated(x):
    b = Buffer(x)
    r = b[:]
    r *= 2
    return np.sum(b[:]) + np.sum(r)


@case(_u(3))
def buffer_reversed_into_itself(x):
    b = Buffer(x)
    b[:] = b[::-1]
    return np.sum(b[:] * np.arange(3.0))


@case(_u(3))
def buffer_reads_in_list_then_write(x):
    b = Buffer(x)
    L = [b[0], b[1]]
    b[0] = 5.0
    return L[0] + L[1] + np.sum(b[:])


# ---------------------------------------------------------------- lists of numbers updated in place
@case(_u(4))
def list_of_elements_aug(x):
    out = list(x)
    for i in range(4):
        out[i] += np.tanh(x[i]) * 3.0
    out[3] = -0.18
    return out[0] * out[-1] + out[1]


@case(_u(4))
def list_of_zeros_aug(x):
    out = list(np.zeros(4))
    for i in range(2):
        out[i] += x[i] * 2.0
    return sum(o * o for o in out)


@case(_u(4))
def list_of_matrix_rows_aug(x):
    M = x.reshape(2, 2).copy()
    out = list(M)
    out[0] += 1.0
    return np.sum(M)


# ---------------------------------------------------------------- rows through zip, enumerate, reversed

@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def zip_rows_both_updated(x):
    P = x.copy(); Q = x * 2
    for p, q in zip(P, Q):
        p += q
        q *= p[0]
    return np.sum(P ** 2) + np.sum(Q)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def enumerate_columns_updated(x):
    P = x.copy()
    for i, col in enumerate(P.T):
        col *= i + 1
    return np.sum(P ** 2)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def reversed_list_rows_updated(x):
    P = x.copy()
    for r in reversed(list(P)):
        r += 1.0
    return np.sum(P ** 2)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def enumerate_zip_rows_written(x):
    P = x.copy(); Q = x.copy()
    for i, (p, q) in enumerate(zip(P, Q)):
        p[:] = q * i
    return np.sum(P ** 2)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def strided_rows_written(x):
    P = x.copy()
    for r in P[::2]:
        r[::2] = r[1::2].sum()
    return np.sum(P * x)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def filtered_rows_updated(x):
    P = x.copy()
    rows = [r for r in P if r[0] > 1.0]
    for r in rows:
        r *= 2
    return np.sum(P)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def row_rebound_then_updated(x):
    P = x.copy()
    for r in P:
        r = r / 2
        r += 1
    return np.sum(P)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def zip_source_into_rows(x):
    P = np.zeros_like(x)
    for src, dst in zip(x, P):
        dst[...] = src ** 2
    return np.sum(P * x)


@case(np.array([[1.5, 2.0, 3.0], [0.5, 1.2, 2.2], [1.1, 0.7, 0.3]]))
def swap_rows_then_center(x):
    P = x.copy()
    P[0], P[1] = P[1].copy(), P[0].copy()
    for r in P:
        r -= r.mean()
    return np.sum(P * x)

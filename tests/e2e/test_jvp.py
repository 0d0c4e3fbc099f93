"""Forward mode end to end: `jvp` against central finite differences (`check_jvp`) on loops,
`while`, branches, helper calls, writes into ndarrays and Buffers, `copyto` from generators, the
in-place RK4 integrator; `jacfwd` shapes and values against finite differences and `grad`'s
transpose convention derived by hand; the API's contract (structures, aliasing, errors)."""
import numpy as np
import pytest

from adjoint_compiler import ArgumentError, Buffer, MissingRuleError, copyto, jacfwd, jvp, jvp_source, tangent
from adjoint_compiler.testing import check_jvp

RNG = np.random.default_rng(21)


def rand(*shape):
    return RNG.uniform(0.3, 1.2, shape) if shape else float(RNG.uniform(0.3, 1.2))


# -- control flow ---------------------------------------------------------------------------------
def loop_carried(x, n):
    s = 0.0
    for i in range(n):
        s = s * 0.5 + np.sin(x[i % 3]) * i
    return s


def loop_array(x):
    h = np.zeros(3)
    for k in range(4):
        h = np.tanh(h * 0.7 + x * k)
    return h


def over_rows(A, w):
    out = 0.0
    for row in A:
        out = out + np.sum(row * w) ** 2
    return out


def enumerate_zip(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        total = total + i * a * b
    return total


def while_data(x):
    s = x
    k = 0
    while s < 10.0:
        s = s * 1.7 + 0.1
        k += 1
    return s * k


def break_continue(x):
    acc = 0.0
    for i in range(10):
        if i % 3 == 1:
            continue
        acc = acc + x[i % 4] * acc + 0.5
        if acc > 50.0:
            break
    return acc


def branches(x, y):
    if x > 0.5:
        z = x * y
    elif x > 0.2:
        z = np.exp(y)
    else:
        z = 3.0
    return z * x


def early_return(x):
    if np.sum(x) > 1.0:
        return np.prod(x)
    return -np.sum(x * x)


def nested_loops(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > 0.6:
                s = s + A[i, j] * s + 1.0
            else:
                s = s - A[i, j]
    return s


def lists(x):
    xs = []
    for i in range(3):
        xs.append(x * (i + 1.0))
    v = xs.pop()
    return sum(xs) * v


# -- helper calls -----------------------------------------------------------------------------------
def helper(a, b):
    return np.sum(a * b) + a[0]


def helper_writes(out, v):
    out[0] = v[0] * v[1]
    out[1:] = np.sin(v[1:])


def calls(x, y):
    buf = np.zeros(3)
    helper_writes(buf, x * y)
    return helper(buf, x) * helper(y, y)


# -- writes -----------------------------------------------------------------------------------------
def setitem_kinds(x):
    b = np.zeros(6)
    b[0] = x[0]
    b[1:3] = x[1] * x[2]
    b[[3, 4, 3]] = x[:3]
    b[b > 0.7] = 0.5
    b[...] = b * x[3]
    return b


def write_argument(u, p):
    u[0] = u[0] * p
    u[1:] += u[:-1] * p
    return np.sum(u * u)


def write_through_views(x, y):
    v = x[1:3]
    v *= y
    r = x.reshape(2, 2)
    r[0, 0] = y * y
    return x * 2.0


def int_storage(x):
    b = np.zeros(3, dtype=int)
    b[:] = x * 10.0
    return b * x


def fresh_then_written(x):
    y = x + 0.0  # its tangent is x's: copied before the write below
    y[0] = 5.0
    z = x + np.zeros(3)
    z[1] = 1.0
    return np.sum(x * y) + np.sum(z * x)


def object_buffer(x):
    b = Buffer(np.empty(2, dtype=object))
    b[0] = x * 2.0
    b[1] = np.sin(x)
    return np.sum(b[0] * b[1])


# -- Buffers and copyto -------------------------------------------------------------------------------
def buffer_snapshots(x):
    b = Buffer(x)
    t1 = np.sum(b.copy())
    b[0] = 30.0
    t2 = np.sum(b.copy())
    copyto(b, (2.0 * i for i in range(1, 6)))
    t3 = np.sum(b.copy())
    return t1 + t2 + t3


def buffer_nonlinear(x):
    b = Buffer(x)
    t1 = np.sum(np.sin(b.copy()))
    b[0] = x[1] * x[2]
    b[2:4] = np.exp(x[:2])
    t2 = np.sum(b.copy() ** 2)
    copyto(b, (x[i] * i for i in range(3)))
    return t1 * t2 + np.sum(b.copy() * x)


def copyto_kinds(x, p):
    b = np.zeros(4)
    copyto(b, p)
    np.copyto(b, x, where=x > 0.7)
    c = Buffer.zeros(4)
    copyto(c, map(np.sin, x))
    return b * c[:]


# -- the in-place RK4 integrator (examples/ode_sensitivities.py) ---------------------------------------
def lotka_volterra(du, u, p, t):
    alpha, beta, delta, gamma = p[0], p[1], p[2], p[3]
    prey, pred = u[0], u[1]
    du[0] = alpha * prey - beta * prey * pred
    du[1] = delta * prey * pred - gamma * pred


def rk4(u0, p):
    dt = 0.05
    u = u0
    k1, k2, k3, k4 = Buffer.zeros(2), Buffer.zeros(2), Buffer.zeros(2), Buffer.zeros(2)
    traj = [u]
    t = 0.0
    for _ in range(20):
        lotka_volterra(k1, u, p, t)
        lotka_volterra(k2, u + 0.5 * dt * k1[:], p, t + 0.5 * dt)
        lotka_volterra(k3, u + 0.5 * dt * k2[:], p, t + 0.5 * dt)
        lotka_volterra(k4, u + dt * k3[:], p, t + dt)
        u = u + dt / 6.0 * (k1[:] + 2.0 * k2[:] + 2.0 * k3[:] + k4[:])
        t = t + dt
        traj.append(u)
    return np.stack(traj)


def euler_ndarray(u0, p):
    u, du = u0, np.zeros(2)
    for _ in range(30):
        lotka_volterra(du, u, p, 0.0)
        u = u + 0.01 * du
    return u


def tuple_output(x, y):
    return np.sin(x) * y, x.sum(), (y * 2.0, 3)


P = np.array([1.5, 1.0, 1.0, 3.0])
U0 = np.array([1.0, 0.8])
CASES = [
    (loop_carried, (rand(3), 5)), (loop_array, (rand(3),)), (over_rows, (rand(3, 2), rand(2))),
    (enumerate_zip, (rand(4), rand(4))), (while_data, (0.7,)), (while_data, (3.0,)),
    (break_continue, (rand(4),)), (branches, (0.7, 0.4)), (branches, (0.3, 0.4)), (branches, (0.1, 0.4)),
    (early_return, (rand(3),)), (early_return, (rand(3) * 0.2,)), (nested_loops, (rand(3, 3),)),
    (lists, (rand(2),)), (calls, (rand(3), rand(3))), (setitem_kinds, (rand(4),)),
    (write_argument, (rand(4), 0.6)), (write_through_views, (rand(4), 0.8)), (int_storage, (rand(3),)),
    (fresh_then_written, (rand(3),)), (object_buffer, (rand(3),)), (buffer_snapshots, (rand(10),)),
    (buffer_nonlinear, (rand(6),)), (copyto_kinds, (rand(4), 0.9)), (rk4, (U0, P)), (euler_ndarray, (U0, P)),
    (tuple_output, (rand(3), rand(3))),
]


@pytest.mark.parametrize("f,args", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_jvp_matches_finite_differences(f, args):
    check_jvp(f, *args)
    tangents = [np.ones(np.shape(a)) if isinstance(a, np.ndarray) else 1.0 if isinstance(a, float) else None
                for a in args]
    before = [np.copy(a) for a in list(args) + tangents]
    jvp(f, args, tangents)
    for a, b in zip(list(args) + tangents, before):  # the caller's arrays and tangents are never written
        np.testing.assert_array_equal(a, b)


def test_buffer_tangent_by_hand():
    """The Buffer function of the README: its derivative along e_k is [1, 2, 2, 2, 2, 3, 3, 3, 3, 3]_k."""
    x = np.arange(1.0, 11.0)
    for k, expected in enumerate([1, 2, 2, 2, 2, 3, 3, 3, 3, 3]):
        e = np.zeros(10)
        e[k] = 1.0
        assert jvp(buffer_snapshots, (x,), (e,))[1] == expected


# -- jacfwd ---------------------------------------------------------------------------------------------
def scalar_to_scalar(x):
    return np.sin(x) * x


def vector_to_scalar(x):
    return np.sum(x ** 3)


def vector_to_vector(x, A):
    return np.tanh(A @ x)


def matrix_to_matrix(X):
    return X @ X.T + np.sin(X[:, :1])


def scalar_to_matrix(s, X):
    return np.exp(s * X)


def finite_jacobian(f, args, i, eps=1e-6):
    x = np.asarray(args[i], dtype=float)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        plus, minus = list(args), list(args)
        plus[i] = (x.ravel() + e).reshape(x.shape) if x.ndim else float(x + eps)
        minus[i] = (x.ravel() - e).reshape(x.shape) if x.ndim else float(x - eps)
        cols.append((np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps))
    out_shape = np.shape(f(*args))
    return np.stack(cols, axis=-1).reshape(out_shape + x.shape)


@pytest.mark.parametrize("f,args,wrt,shape", [
    (scalar_to_scalar, (0.7,), 0, ()), (vector_to_scalar, (rand(4),), 0, (4,)),
    (vector_to_vector, (rand(3), rand(2, 3)), 0, (2, 3)), (vector_to_vector, (rand(3), rand(2, 3)), 1, (2, 2, 3)),
    (matrix_to_matrix, (rand(3, 2),), 0, (3, 3, 3, 2)), (scalar_to_matrix, (0.4, rand(2, 3)), 0, (2, 3)),
    (rk4, (U0, P), 1, (21, 2, 4))])
def test_jacfwd_shapes_and_values(f, args, wrt, shape):
    J = jacfwd(f, wrt)(*args)
    assert np.shape(J) == shape
    if shape == ():
        assert type(J) is float
    np.testing.assert_allclose(J, finite_jacobian(f, args, wrt), rtol=1e-6, atol=1e-8)


def test_jacfwd_tuple_wrt_and_tuple_output():
    x, A = rand(3), rand(2, 3)
    Jx, JA = jacfwd(vector_to_vector, wrt=(0, 1))(x, A)
    assert Jx.shape == (2, 3) and JA.shape == (2, 2, 3)
    np.testing.assert_allclose(Jx, finite_jacobian(vector_to_vector, (x, A), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(JA, finite_jacobian(vector_to_vector, (x, A), 1), rtol=1e-6, atol=1e-8)
    parts = jacfwd(tuple_output, wrt=0)(x, A[0])
    assert [np.shape(p) for p in parts[:2]] == [(3, 3), (3,)]
    np.testing.assert_allclose(parts[0], np.diag(np.cos(x) * A[0]))
    np.testing.assert_allclose(parts[1], np.ones(3))


def test_jacfwd_of_an_in_place_right_hand_side():
    """d du / d u of rhs(du, u, p, t), which writes its result into du (`out=0`)."""
    u = np.array([1.2, 0.7])
    J = jacfwd(lotka_volterra, wrt=1, out=0)(np.zeros(2), u, P, 0.0)
    alpha, beta, delta, gamma = P
    expected = np.array([[alpha - beta * u[1], -beta * u[0]], [delta * u[1], delta * u[0] - gamma]])
    np.testing.assert_allclose(J, expected)
    Jp = jacfwd(lotka_volterra, wrt=2, out=0)(np.zeros(2), u, P, 0.0)
    np.testing.assert_allclose(Jp, [[u[0], -u[0] * u[1], 0, 0], [0, 0, u[0] * u[1], -u[1]]])
    with pytest.raises(ArgumentError, match="out="):
        jacfwd(lotka_volterra, wrt=1)(np.zeros(2), u, P, 0.0)


# -- the API's contract -----------------------------------------------------------------------------------
def identity(x):
    return x


def twice(x):
    y = np.sin(x)
    return y, y


def int_argument(x, n):
    return x * n


def test_tangent_structure_and_aliasing():
    x = rand(3)
    dx = np.ones(3)
    _, t = jvp(identity, (x,), (dx,))
    assert t is not dx and not np.may_share_memory(t, dx) and not np.may_share_memory(t, x)
    np.testing.assert_array_equal(t, dx)
    _, t = jvp(tuple_output, (x, x), (dx, np.zeros(3)))
    assert isinstance(t, tuple) and isinstance(t[2], tuple) and t[2][1] == 0.0
    _, (t1, t2) = jvp(twice, (x,), (dx,))
    assert not np.may_share_memory(t1, t2)
    assert type(jvp(scalar_to_scalar, (0.3,), (1.0,))[1]) is float


def test_integer_arguments_carry_no_tangent():
    assert jvp(int_argument, (2.0, 3), (1.0, None)) == (6.0, 3.0)
    assert jvp(int_argument, (2.0, 3), (1.0, 0)) == (6.0, 3.0)
    with pytest.raises(ArgumentError, match="integer"):
        jvp(int_argument, (2.0, 3), (1.0, 1.0))


def test_bad_tangents_are_refused():
    with pytest.raises(ArgumentError, match="shape"):
        jvp(vector_to_scalar, (rand(3),), (np.ones(4),))
    with pytest.raises(ArgumentError, match="tuples"):
        jvp(vector_to_scalar, rand(3), np.ones(3))
    with pytest.raises(ArgumentError, match="2 primals but 1"):
        jvp(int_argument, (1.0, 2), (1.0,))


def softplus(x):
    return np.log1p(np.exp(x))


def uses_softplus(x):
    return softplus(x) * 2.0


def test_a_primitive_without_a_tangent_rule_is_a_located_error():
    from adjoint_compiler import adjoint, registry
    adjoint(softplus)(_softplus_adjoint)
    try:
        with pytest.raises(MissingRuleError, match=r"no tangent rule[\s\S]*uses_softplus|tangent\(softplus\)"):
            jvp(uses_softplus, (0.3,), (1.0,))
        tangent(softplus)(_softplus_tangent)
        check_jvp(uses_softplus, 0.3)
    finally:
        registry.RULES.pop(softplus, None)
        registry.TANGENTS.pop(softplus, None)


def _softplus_adjoint(y, x):
    x_bar += y_bar / (1.0 + np.exp(-x))  # noqa: F821, F841


def _softplus_tangent(y, x):
    y_dot = x_dot / (1.0 + np.exp(-x))  # noqa: F821, F841


def test_jvp_source_is_readable():
    text = jvp_source(calls)
    assert "def calls_jvp(x, y, x_dot, y_dot):" in text
    assert "# L" in text and "helper_writes" in text
    assert "return " in text


def test_readme_forward_mode_example_runs(tmp_path):
    import re
    import subprocess
    import sys
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    snippet = re.search(r"## Forward mode: jvp, jacfwd\n.*?```python\n(.*?)```", text, re.DOTALL).group(1)
    script = tmp_path / "readme_forward.py"
    script.write_text(snippet + "\nprint(repr(dfdu.tolist()))\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert "def layer_jvp(W, v, W_dot, v_dot):" in result.stdout
    u, p = (1.0, 0.5), (1.1, 0.4, 0.4, 0.1)  # d du / d u of the Lotka-Volterra right-hand side, by hand
    expected = [[p[0] - p[1] * u[1], -p[1] * u[0]], [p[3] * u[1], -p[2] + p[3] * u[0]]]
    np.testing.assert_allclose(eval(result.stdout.strip().splitlines()[-1]), expected)


# -- forward over reverse -------------------------------------------------------------------------------
def sin_square_prod(x):
    return np.sum(np.sin(x) * x ** 2) + np.prod(x)


def buffer_loss(x):
    """The Buffer function written, snapshotted and written again, times a nonlinear loss."""
    b = Buffer(x)
    t1 = np.sum(b.copy())
    b[0] = 30.0
    t2 = np.sum(b.copy())
    copyto(b, (2.0 * i for i in range(1, 6)))
    t3 = np.sum(b.copy())
    return np.sin(0.1 * (t1 + t2 + t3)) + np.sum(np.sin(b.copy()) * x)


def euler_loss(u0, p):
    return np.sum(euler_ndarray(u0, p) ** 2)


def test_jacfwd_of_grad_is_the_hessian():
    from adjoint_compiler import grad
    x = np.array([0.3, 0.7, -0.4])
    H = jacfwd(grad(sin_square_prod))(x)
    by_hand = np.diag(-x ** 2 * np.sin(x) + 4 * x * np.cos(x) + 2 * np.sin(x))
    by_hand += np.prod(x) / np.outer(x, x) * (1 - np.eye(3))
    np.testing.assert_allclose(H, by_hand, rtol=1e-10, atol=1e-12)
    for f, args, wrt in [(buffer_loss, (np.arange(1.0, 11.0) * 0.1,), 0), (euler_loss, (U0, P), 1)]:
        g = grad(f, wrt)
        H = jacfwd(g, wrt)(*args)
        x = args[wrt]

        def moved(t, e, args=args, wrt=wrt, x=x, g=g):
            a = list(args)
            a[wrt] = x + t * e
            return g(*a)
        fd = np.stack([(moved(1e-5, e) - moved(-1e-5, e)) / 2e-5 for e in np.eye(x.size)], axis=-1)
        np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-7)
        v = np.linspace(-1.0, 1.0, x.size)
        tangents = tuple(v if i == wrt else np.zeros(np.shape(a)) for i, a in enumerate(args))
        np.testing.assert_allclose(jvp(g, args, tangents)[1], fd @ v, rtol=1e-6, atol=1e-7)


def dict_result(x):
    return {"square": x ** 2, "total": np.sum(np.sin(x))}


def test_jacfwd_of_a_dict_result_is_a_dict_of_jacobians():
    x = np.array([1.0, 2.0])
    jac = jacfwd(dict_result)(x)
    assert set(jac) == {"square", "total"}
    np.testing.assert_allclose(jac["square"], np.diag(2 * x))  # (the analytic Jacobians)
    np.testing.assert_allclose(jac["total"], np.cos(x))


def fills_its_argument(du, u):
    du[0] = u[0] * u[1]
    du[1] = u[1] ** 2


def test_jvp_of_a_function_writing_its_result_into_an_argument_says_what_to_use():
    with pytest.raises(ArgumentError, match="out=k"):
        jvp(fills_its_argument, (np.zeros(2), np.array([0.3, 0.5])), (np.zeros(2), np.array([1.0, 0.0])))
    J = jacfwd(fills_its_argument, wrt=1, out=0)(np.zeros(2), np.array([0.3, 0.5]))
    np.testing.assert_allclose(J, [[0.5, 0.3], [0.0, 1.0]])  # (the analytic Jacobian)

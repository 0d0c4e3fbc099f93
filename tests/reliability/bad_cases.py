"""Functions for the bad-input matrix (test_bad_inputs.py).

The compiler reads source with `inspect`, so these live in a real file. A line the compiler should
point at carries the marker comment `# <-`.
"""
import numpy as np

from adjoint_compiler import Buffer, copyto

SCALE = 3.0


# -- unsupported syntax ----------------------------------------------------------------------------

def syn_try(x):
    try:  # <-
        y = x * 2.0
    except ValueError:
        y = x
    return y


def syn_with(x):
    with open(__file__) as fh:  # <-
        pass
    return x


def syn_yield(x):
    yield x * 2.0  # <-


def syn_global(x):
    global SCALE  # <-
    return x * SCALE


def syn_nonlocal_outer():
    k = 2.0

    def syn_nonlocal(x):
        nonlocal k  # <-
        k = k + 1.0
        return x * k
    return syn_nonlocal


syn_nonlocal = syn_nonlocal_outer()


def syn_class(x):
    class A:  # <-
        pass
    return x


def syn_nested_def(x):
    def inner(y):  # <-
        return y * 2.0
    return inner(x)


def syn_lambda(x):
    sq = lambda t: t * t  # <-
    return sq(x)


def syn_del(x):
    y = [x * 2.0]
    del y[0]  # <-  (an item: `del name` is supported)
    return x


def syn_import(x):
    import math  # <-
    return math.sin(x)


def syn_raise(x):
    if x > 100.0:
        raise ValueError("too big")  # <-
    return x * x


def syn_walrus(x):
    y = (z := x * 2.0) + 1.0  # <-
    return y * z


def syn_set(x):
    s = {1.0, 2.0}  # <-
    return x * len(s)


def syn_setcomp(x):
    s = {i for i in range(3)}  # <-
    return x * len(s)


def syn_dictcomp(x):
    d = {i: x * i for i in range(3)}  # <-
    return d[1]


def syn_starred(x):
    t = (x, x)
    return np.sum(np.maximum(*t))  # <-


def syn_fstring(x):
    label = f"{x}"  # <-
    return x * 2.0


def syn_match(x):
    match 1:  # <-
        case 1:
            y = x
        case _:
            y = 2.0 * x
    return y


async def syn_async(x):  # <-
    return x


def syn_for_else(x):
    for i in range(3):  # <-
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def syn_while_else(x):
    k = 0
    while k < 3:  # <-
        x = x * 2.0
        k += 1
    else:
        x = x + 1.0
    return x


def syn_star_kwargs_call(x):
    opts = {"axis": 0}
    return np.sum(np.sum(x, **opts))  # <-


def syn_varargs(x, *rest):  # <-
    return x * 2.0


def syn_attr_assign(x):
    b = Buffer(x)
    b.data = x * 2.0  # <-
    return np.sum(b.copy())


def syn_assert(x):
    assert x > -100.0  # <-
    return x * x


# -- calls ------------------------------------------------------------------------------------------

class Thing:
    def __init__(self, w):
        self.w = w

    def scale(self, x):
        return self.w * x


def unknown_method(x, thing):
    return thing.scale(x) * 2.0  # <-


def missing_c_function(x):
    return np.fft.fft(x).real.sum() + np.sum(np.frexp(x)[0])  # <-


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 1.5, n - 1) + x  # <-


def print_inside(x):
    print("inside print_inside", 42)
    return x * x


def flags(x, mode, scale, label, obj):
    if mode == "double":
        y = 2.0 * x
    else:
        y = x
    if scale is None:
        y = y * 3.0
    if label:
        y = y + 1.0
    return np.sum(y * y)


def plain(x):
    return np.sum(np.sin(x) * x)


def vector_out(x):
    return np.sin(x) * 2.0


def tuple_out(x):
    return x, x


def nan_path(x):
    return np.sum(x * x) + np.sum(np.sqrt(x * x + 1.0))


# -- writes -----------------------------------------------------------------------------------------

def write_shape_mismatch(x):
    out = np.zeros(3)
    out[:2] = x  # x has 3 elements
    return np.sum(out)


def generator_too_long(x):
    b = Buffer.zeros(2)
    copyto(b, (x[i] * 2.0 for i in range(3)))
    return np.sum(b.copy())


def write_through_view(x):
    out = np.zeros(4)
    v = out[1:3]
    v[0] = x[0]  # <-
    return np.sum(out) + np.sum(v)


def write_through_transpose(x):
    out = np.zeros((2, 3))
    t = out.T
    t[0, 1] = x[0]  # <-
    return np.sum(out)


def view_used_after_write(x):
    y = x * 1.0
    v = y[:2]
    y[0] = 5.0
    return np.sum(v)  # <-


def flat_write(x):
    out = np.zeros(3)
    out.flat[1] = x[0]  # <-
    return np.sum(out)


def add_at(x):
    out = np.zeros(3)
    np.add.at(out, [0, 0, 1], x)  # <-
    return np.sum(out * out)


def fill_call(x):
    out = x * 1.0
    out.fill(x[0])  # <-
    return np.sum(out * out)


def copyto_view(x):
    out = np.zeros((2, 3))
    np.copyto(out[0], x)  # <-
    return np.sum(out * out)


def setitem_arg(x, y):
    x[0] = y * 2.0
    return np.sum(x * x)


def buffer_object_attr(x):
    b = Buffer(x)
    return np.sum(b.data * 2.0)  # <-


# -- closures ---------------------------------------------------------------------------------------

def make_closure():
    w = np.array([1.0, -2.0, 0.5])
    c = 0.25

    def closure_read(x):
        return np.sum(w * np.sin(x)) + c * np.sum(x)
    return closure_read


closure_read = make_closure()


def calls_exec_defined(x):
    return exec_helper(x) * 2.0  # <-


_ns: dict = {}
exec("def exec_helper(x):\n    return x * 3.0\n", _ns)
exec_helper = _ns["exec_helper"]


def keyword_only(x, *, w=2.0):
    return np.sum(x * w)


def complex_math(x):
    return np.sum(np.abs(x) ** 2)


def int_math(x):
    return np.sum(x * x * 0.5) + np.sum(x)


def list_arg(xs):
    return xs[0] * xs[1] + np.sum(xs[2])

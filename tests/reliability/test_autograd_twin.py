"""A differential check against autograd: the main generator's programs that autograd can run
(no writes, no Buffer: a functional twin of the same source, with `numpy` as `autograd.numpy`)
are differentiated by both, and the gradients must agree. Independent of finite differences: a
second, tape-based implementation of the same mathematics."""
from __future__ import annotations

import sys
import types
import warnings
from pathlib import Path

import autograd
import autograd.numpy as anp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import fuzzgen  # noqa: E402

from adjoint_compiler import value_and_grad  # noqa: E402

WRITES = {"buffer", "ndarray_write", "write_arg", "copyto", "copyto_gen", "ode", "snapshot", "augassign"}


def _twin(source: str):
    """The program's functions with `np` bound to autograd.numpy (run, never compiled by us)."""
    module = types.ModuleType("twin")
    exec(compile(source.replace("import numpy as np", "import autograd.numpy as np"), "<twin>", "exec"),
         vars(module))
    return module


def test_gradients_agree_with_autograd():
    compared = 0
    for seed in range(400):
        prog = fuzzgen.generate(fuzzgen.RandomChooser(50_000 + seed))
        if prog.features & WRITES or "Buffer(" in prog.source or "[" in "".join(
                line.split("=")[0] for line in prog.source.splitlines() if "] =" in line or "] +=" in line):
            continue
        args = fuzzgen.make_args(prog)
        args = [float(a) if np.ndim(a) == 0 else np.ascontiguousarray(a) for a in args]
        try:
            twin = _twin(prog.source)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = [autograd.grad(twin.f, k)(*args) for k in range(len(args))]
        except Exception:  # a construct autograd cannot trace (it is not the program under test)
            continue
        if any(np.shape(e) != np.shape(a) for e, a in zip(expected, args)):
            continue  # autograd's own limit: `np.where` with a broadcast condition is not unbroadcast
        mod = fuzzgen.load(prog.source)
        try:
            value, grads = value_and_grad(mod.f, wrt=tuple(range(len(args))))(*args)
        except Exception:
            fuzzgen.unload(mod)
            raise
        assert np.isclose(value, twin.f(*args)), prog.source
        for k, (g, e) in enumerate(zip(grads, expected)):
            if not np.allclose(g, e, rtol=1e-7, atol=1e-9):
                # autograd's `np.where` does not unbroadcast an operand the condition broadcasts:
                # where the two disagree, finite differences decide
                fd = fuzzgen.fd_grad(mod.f, args, k)
                if np.allclose(g, fd, rtol=1e-5, atol=1e-6) and not np.allclose(e, fd, rtol=1e-5, atol=1e-6):
                    continue
            np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-9, err_msg=f"argument {k}\n{prog.source}")
        fuzzgen.unload(mod)
        compared += 1
    assert compared >= 100, f"only {compared} programs could be compared with autograd"
    print(f"{compared} programs compared with autograd")

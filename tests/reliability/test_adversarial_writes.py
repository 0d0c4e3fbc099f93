"""Programs written as users write code that writes into arrays (adversarial_writes_cases.py):
ODE right-hand sides and integrators, stencils, in-place normalizations, views, containers,
aliased arguments, out=, integer and boolean storage, broadcasting writes, Buffer. Each is right
in grad, value_and_grad and vjp (against central finite differences, the value against running
it, the caller's arrays unchanged), or refused with one of our errors naming a line of the file.
Programs listed in MUST_WORK must not be refused.

    python tests/reliability/adversarial_writes_check.py     # every program in all three entry points
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import adversarial_writes_cases as cases  # noqa: E402
from adversarial_writes_check import MODES, check  # noqa: E402

MUST_WORK = {
    "euler_lotka", "rk4_decay", "heat_euler", "jacobi_stencil", "stencil_view_names", "rows_normalize_loop",
    "rows_normalize_keepdims", "center_columns", "cols_normalize_transpose", "softmax_inplace",
    "view_slice_mul", "view_T_add", "view_reshape_inline", "view_flip", "view_idx_var", "swap_elements",
    "helper_writes_view", "out_kw_exp", "out_positional", "out_self", "out_into_view",
    "copyto_where", "copyto_1n", "int_storage_slice", "uint8_image", "write_1n_into_n", "write_row_matmul",
    "buffer_row_1n", "alias_step_same", "alias_axpy_shift", "helper_loop_writes_transposed_view",
    "helper_while_writes_flipped_view", "helper_normalizes_columns", "list_of_scalars_aug",
    "dict_scalar_then_update", "list_of_elements_aug", "list_of_zeros_aug",
}
NAMES = [f.__name__ for f, _, _ in cases.CASES]


def test_many_programs():
    assert len(NAMES) >= 150 and len(set(NAMES)) == len(NAMES)
    assert MUST_WORK <= set(NAMES)


@pytest.mark.parametrize("k", range(0, len(cases.CASES), 20))
def test_programs(k):
    bad = []
    for j, (func, args, wrt) in enumerate(cases.CASES[k:k + 20], k):
        # one entry point per program here, in turn (tests/reliability/adversarial_writes_check.py
        # run as a script checks every program in all three)
        status, detail = check(func, list(args), wrt, seed=j, modes=(MODES[j % 3],))
        if status in ("wrong", "crash") or (status == "refused" and func.__name__ in MUST_WORK):
            bad.append(f"{func.__name__}: {status}: {detail}")
    assert not bad, "\n\n".join(bad)


def test_aliased_arguments_at_the_call():
    """The caller passes one array twice, one of them written: Python's value, or our error."""
    from adjoint_compiler import AdjointCompilerError, value_and_grad, vjp

    x = np.array([1.0, 2.0, 3.0])
    aliased = x.copy()
    expected = cases.top_alias(aliased, aliased)
    for run in (lambda w: value_and_grad(cases.top_alias, wrt=1)(w, w)[0], lambda w: vjp(cases.top_alias, w, w)[0]):
        w = x.copy()
        try:
            value = run(w)
        except AdjointCompilerError:
            continue
        assert np.isclose(value, expected)


def test_an_argument_updated_in_place_in_a_loop_is_followed_or_refused():
    """fam_writes.gen_argument_updated_in_loop: an in-place right-hand side updating `du` in a loop
    (`du += e` and its spellings, in a branch, through a helper). vjp's outputs and jacfwd(out=0)
    are those of the array running it leaves: vjp returned no output for `du += e` in a loop (the
    caller's array changes in Python), and jacfwd(out=0) refused `du += e` anywhere."""
    import warnings

    import fam_writes
    import fuzzgen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(12):
            case = fam_writes.gen_argument_updated_in_loop(fuzzgen.RandomChooser(seed))
            status, detail = fam_writes.check_argument_updates(case)
            assert status == "pass", f"seed {seed}: {status}: {detail}\n{case.source}"

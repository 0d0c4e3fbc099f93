"""Contractions: an `np.einsum` of two operands that is a matrix product computed as `@`.

`np.einsum("ij,j->i", X, w)` means `X @ w`; written either way, the gradient should cost the same.
Where the subscripts are constant, the operands' ranks known and the shared letters name axes the
shapes pass knows to be of one length, the statement becomes the matrix product, so the rules,
the shapes and the `plain` rewrites of `@` apply to it:

    z = rt.einsum('ij,j->i', X, w)      ->  z = X @ w
    s = rt.einsum('bij,bjk->bik', A, B) ->  s = A @ B

Guarantee: only products whose operands are already in `@`'s order qualify (each operand's letters
in the order batch, own, summed for the left and batch, summed, own for the right, the result's
in the order batch, own left, own right; one summed letter; a batch only with a matrix on each
side), so the values are those `rt.einsum` computes (it takes the same products through `@`),
and where einsum would broadcast an axis of length 1 against a longer one (which `@` refuses),
the shapes pass cannot have proved the lengths equal: such a statement stays an einsum.
"""
from __future__ import annotations

import operator

import numpy as np

from . import ir
from . import runtime as rt
from .shapes import Dims, einsum_dims, einsum_letters


def rewrite(fn: ir.Function, classes: dict, ndims: dict) -> None:
    """Each two-operand einsum that is `a @ b` (module docstring) becomes that product."""
    for s in products(fn, classes, ndims):
        s.prim, s.args, s.callee = operator.matmul, list(s.args[1:]), None


def products(fn: ir.Function, classes: dict, ndims: dict) -> list:
    """The einsum statements that are `a @ b` by these shape facts (none without `Dims`)."""
    return [s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.prim in (np.einsum, rt.einsum)
            and len(s.args) == 3 and _is_product(s, classes, ndims)]


def _is_product(s: ir.Assign, classes: dict, ndims: dict) -> bool:
    operands = s.args[1:]
    if not all(isinstance(v, ir.Var) and v.kind == "num" and not v.is_buffer and ndims.get(v) for v in operands):
        return False
    tokens = [classes.get(v) for v in operands]
    letters = einsum_letters(s, [0] + [ndims[v] for v in operands])
    if letters is None or not all(isinstance(t, Dims) for t in tokens) or einsum_dims(letters, tokens) is None:
        return False  # (a shared letter over axes not known to be of one length)
    (ta, tb), out = letters
    plan = rt.product_plan(ta, tb, out)
    if plan is None or plan[:3] != (None, None, None):
        return False
    batch, own_a, summed = plan[3:]
    own_b = len(tb) - batch - summed
    return summed == 1 and (own_a <= 1 and own_b <= 1 if not batch else own_a == 1 and own_b == 1)

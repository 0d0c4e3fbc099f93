"""Shapes: which values surely have the same shape, known from the argument kinds alone.

Each value gets a shape class: 0 for a scalar, or a token shared by values that surely have equal
shapes (an array argument, and everything computed from it elementwise, with scalars or with
values of its own class). Values without a class are unknown. Rules use it to drop
`rt.unbroadcast(g, x)` where `x` has the class of the result: nothing was broadcast.

    x: float, a: float       y = np.sin(x) * a      class(y) = 0
    v: array                 w = v * 2.0 + v        class(w) = class(v)

When the compilation is for one pattern of axis lengths (`dims_of`: which axes of the array
arguments have equal lengths, and which have length 1), an array argument's class is its `Dims`,
one id per axis, and broadcasting, `@`, integer indexing, transposes, reductions, concatenations
(the joined axis an id of its own) and `np.zeros` of axis lengths compute the `Dims` of their
results: values of equal `Dims` have equal shapes whatever the lengths are.

    xs: (T, B, D), Wx: (D, H), h: (B, H), Wh: (H, H)
    a = xs[t] @ Wx   (B, H)     c = h @ Wh   (B, H)     class(a + c) = class(a) = class(c)
    h = np.zeros((xs.shape[1], Wx.shape[1]))   (B, H)   np.concatenate([h, xs[t]], axis=1)  (B, new)
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import ir
from . import runtime as rt
from .buffer import Buffer
from .fixpoint import fixpoint

ELEMENTWISE = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod,
               operator.floordiv, operator.neg, operator.pos, operator.lt, operator.le, operator.gt,
               operator.ge, operator.eq, operator.ne, operator.and_, operator.or_, operator.xor,
               operator.invert, abs, ir.SQUARE}
REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var}
REDUCING_METHODS = {"sum", "mean", "prod", "max", "min", "std", "var"}
SCALAR_RESULTS = {float, int, len, math.fsum}
SAME_SHAPE = {np.copy, np.array, np.asarray, np.zeros_like, np.ones_like, np.empty_like, Buffer, Buffer.zeros_like}
# the runtime helpers generated code calls that keep their argument's shape (a gradient read back
# and differentiated again allocates its adjoints with them): `rt.zeros_like(x)` has x's shape (a
# Buffer's data's), `rt.shape_of(x)` stands for x's shape (a ShapeOf, or a tuple or list itself)
RUNTIME_SAME_SHAPE = {rt.zeros_like, rt.shape_of, rt.own}  # (`own` of an array: a copy of it)
# the functions whose result has their first argument's ndim (its axes reordered or reversed, its
# entries moved), whatever their other arguments
RANK_KEEPING = {np.flip, np.fliplr, np.flipud, np.rot90, np.transpose, np.swapaxes, np.moveaxis, np.roll, np.real,
                np.imag}
# the functions whose result has their first argument's shape whatever their other arguments
# (its entries moved or their real or imaginary parts taken)
SHAPE_KEEPING = {np.flip, np.fliplr, np.flipud, np.roll, np.real, np.imag}
DOT = ir.Method("dot")  # `a.dot(b)`: np.dot(a, b) of an array `a` (a rank is known for arrays alone)
MATRIX_PRODUCTS = (operator.matmul, np.matmul, np.dot, DOT)  # of vectors and matrices: one rule of ranks
FROM_LENGTH = {np.zeros, np.ones, np.empty, np.full, Buffer.zeros}  # (n, ...) -> an array of n numbers


class GlobalArray:
    """The shape class of an array the function reads from its globals: one per array object
    (arrays are unhashable; the class holds the array, so it lives as long as its readers)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __eq__(self, other) -> bool:
        return isinstance(other, GlobalArray) and other.array is self.array

    def __hash__(self) -> int:
        return hash((GlobalArray, id(self.array)))


ONE = 1  # the id of an axis of length 1 (`dims_of` numbers the other lengths from 2)


class Dims:
    """The shape class of an array whose axes are known by id: equal ids, equal lengths (the
    ids of the arguments' axes come from `dims_of`; an id computed here, as for a slice, may
    stand for any length, 1 included, so only ONE is known to broadcast)."""

    __slots__ = ("ids",)

    def __init__(self, ids: tuple):
        self.ids = ids

    def __eq__(self, other) -> bool:
        return isinstance(other, Dims) and other.ids == self.ids

    def __hash__(self) -> int:
        return hash((Dims, self.ids))

    def __repr__(self) -> str:
        return f"Dims{self.ids}"


def dims_of(values) -> tuple:
    """The pattern of axis lengths of the arrays among `values`: one id per axis of each array,
    in order (ONE for length 1, equal ids for equal lengths). Code compiled for one pattern holds
    for every call with that pattern; `split_dims` gives each parameter its ids."""
    ids = {1: ONE}
    return tuple([ids.setdefault(n, len(ids) + 1) for v in values if isinstance(v, np.ndarray) for n in v.shape])


def split_dims(pattern: tuple, ranks: list) -> list | None:
    """Each parameter's ids (a tuple per array of rank `ranks[i]`, None where the rank is None)
    from a `dims_of` pattern; None if the pattern does not fit the ranks."""
    out, at = [], 0
    for r in ranks:
        out.append(None if r is None else tuple(pattern[at:at + r]))
        at += r or 0
    return out if at == len(pattern) else None


def einsum_letters(s: ir.Assign, ranks: list):
    """(the operands' subscripts, the output's) of `np.einsum` with constant subscripts and
    operands of known ranks (`ranks`: the arguments', the subscripts' first), else None."""
    if s.prim not in (np.einsum, rt.einsum) or s.kwargs or len(s.args) < 2 or not isinstance(s.args[0], ir.Const) \
            or not isinstance(s.args[0].value, str) or None in ranks[1:]:
        return None
    try:
        inputs, out = rt.einsum_spec(s.args[0].value, tuple(ranks[1:]))
    except ValueError:
        return None
    if any(len(t) != r or len(set(t)) != len(t) for t, r in zip(inputs, ranks[1:])) or len(set(out)) != len(out) \
            or not set(out) <= set("".join(inputs)):
        return None  # (a repeated letter takes a diagonal; a malformed one raises in NumPy)
    return inputs, out


def einsum_dims(letters: tuple, tokens: list):
    """The Dims of an einsum's result (`einsum_letters`) from its operands' Dims (0 for a
    number), or None where one letter names axes not known equal."""
    inputs, out = letters
    ids: dict = {}
    for term, token in zip(inputs, tokens):
        for c, axis in zip(term, token.ids if isinstance(token, Dims) else ()):
            if ids.setdefault(c, axis) != axis:
                return None
    return _token(tuple(ids[c] for c in out))


def _token(ids: tuple):
    return Dims(ids) if ids else 0


def _broadcast(operands: list):
    """The Dims of the elementwise result of operands with these Dims, or None where an axis
    pairs two ids not known equal."""
    out = []
    for axis in range(1, max(len(d.ids) for d in operands) + 1):
        ids = {d.ids[-axis] for d in operands if axis <= len(d.ids)} - {ONE}
        if len(ids) > 1:
            return None
        out.append(ids.pop() if ids else ONE)
    return _token(tuple(reversed(out)))


def broadcast_dims(operands: list):
    """The Dims of the elementwise result of operands with these Dims, or None where an axis
    pairs two ids not known equal (then they may not broadcast)."""
    return _broadcast(operands) if operands else 0


def _matmul(a: Dims, b: Dims):
    """The Dims of `a @ b` (np.matmul's rules), or None where the batch axes do not broadcast. The
    inner axes need not be known equal: the product exists only where they are (NumPy never
    broadcasts them), and the result's axes are the outer ones."""
    x, y = a.ids, b.ids
    if not x or not y:
        return None
    if len(y) == 1:
        return _token(x[:-1])
    if len(x) == 1:
        return _token(y[:-2] + y[-1:])
    batch = _broadcast([Dims(x[:-2]), Dims(y[:-2])]) if len(x) > 2 or len(y) > 2 else 0
    if batch is None:
        return None
    return Dims((batch.ids if batch else ()) + (x[-2], y[-1]))


def _reduced(d: Dims, s: ir.Assign):
    """The Dims of a reduction of an array of Dims `d` over a constant `axis`, or None."""
    axis, keep = _axis_keepdims(s)
    if not (isinstance(axis, ir.Const) and isinstance(keep, ir.Const)) or len(s.args) > 2:
        return None
    axes = axis.value if isinstance(axis.value, tuple) else (axis.value,)
    if axis.value is None:
        axes = tuple(range(len(d.ids)))
    if not all(type(a) is int and -len(d.ids) <= a < len(d.ids) for a in axes):
        return None
    axes = {a % len(d.ids) for a in axes}
    if keep.value:
        return _token(tuple(ONE if k in axes else i for k, i in enumerate(d.ids)))
    return _token(tuple(i for k, i in enumerate(d.ids) if k not in axes))


def _member(prim, table) -> bool:
    try:
        return prim in table
    except TypeError:  # an unhashable primitive
        return False


def _same_shape(s) -> bool:
    """`s` is a SAME_SHAPE call that keeps its argument's shape (no `shape=`, no `ndmin=`)."""
    if s.prim in RUNTIME_SAME_SHAPE:
        return len(s.args) == 1 and not s.kwargs
    if _member(s.prim, SHAPE_KEEPING):
        return True
    return s.prim in SAME_SHAPE and not ({"shape", "ndmin"} & set(s.kwargs)) and len(s.args) < 5


def is_elementwise(s: ir.Assign) -> bool:
    """`s` computes its result entry by entry from its operands broadcast together: an operator,
    a one-output ufunc, or `np.where(condition, x, y)`."""
    prim = s.prim
    return prim in ELEMENTWISE or (isinstance(prim, np.ufunc) and prim.nout == 1 and prim.signature is None) \
        or (prim is np.where and len(s.args) == 3)


class Classes(dict):
    """{Var: shape class}, with `lengths`: the integers that are an array's length (Shapes)."""

    lengths: dict = {}  # noqa: RUF012 (replaced per instance by Shapes)


class Shapes:
    def __init__(self, params: dict, ranks: dict | None = None):
        self.known: dict = Classes(params)
        self.ranks: dict = dict(ranks or {})
        self.ints: set = set()  # Vars that surely hold an integer (never a bool): loop counters, len(...)
        self.shape_tuples: set = set()  # Vars holding a `.shape`
        self.ranges: set = set()  # the Vars bound to `range(...)`: their items are integers
        self.refuted: set = set()  # loop params whose rank differs between iterations
        self.shape_bases: dict = {}  # Var holding `x.shape` -> x
        self.items: dict = {}  # Var holding a tuple or list display -> its items
        # integer Var -> (class, rank, offset): it is `len(x) + offset` for x of that class and rank
        self.lengths: dict = dict(getattr(params, "lengths", {}))
        self.known.lengths = self.lengths
        self.axis_ids: dict = {}  # integer Var -> the id of the axis whose length it is (`x.shape[1]`)

    def state(self) -> tuple:
        """Everything `block` reads: the same state gives the same result."""
        return (dict(self.known), dict(self.ranks), frozenset(self.ints), frozenset(self.shape_tuples),
                frozenset(self.refuted), dict(self.lengths), dict(self.axis_ids))

    def rank(self, op):
        if isinstance(op, ir.Var):
            return 0 if self.known.get(op) == 0 else self.ranks.get(op)
        token = self.of(op)
        if token == 0:
            return 0
        return np.ndim(op.value) if isinstance(op, (ir.Const, ir.Global)) and token is not None else None

    def numbers(self, s: ir.Assign):
        """k for `np.array([a, b, ...])` of k scalars (a vector of shape (k,)), else None."""
        if s.prim in (np.array, np.asarray) and len(s.args) == 1 and set(s.kwargs) <= {"dtype"} \
                and _numeric_dtype(s.kwargs.get("dtype")) and s.args[0] in self.items:
            items = self.items[s.args[0]]
            if items and all(self.rank(q) == 0 for q in items):
                return len(items)
        return None

    def statement_rank(self, s: ir.Assign):
        """The ndim of an Assign's result, where the argument ranks determine it."""
        p = s.prim
        if self.numbers(s) is not None:
            return 1
        ranks = [self.rank(a) for a in s.args]
        if is_elementwise(s) and not s.kwargs and ranks and None not in ranks:
            return max(ranks)
        if p in MATRIX_PRODUCTS and len(ranks) == 2 and ranks[0] in (1, 2) \
                and ranks[1] in (1, 2):
            return ranks[0] + ranks[1] - 2
        if p in FROM_LENGTH and s.args and self.rank(s.args[0]) == 0 \
                and _integral(s.args[0], self.ints) and len(s.args) == (2 if p is np.full else 1) \
                and _numeric_dtype(s.kwargs.get("dtype")):
            return 1  # a length: a 1-d array of numbers
        if p in FROM_LENGTH and s.args and s.args[0] in self.items and len(s.args) == (2 if p is np.full else 1) \
                and all(self.rank(q) == 0 and _integral(q, self.ints) for q in self.items[s.args[0]]) \
                and _numeric_dtype(s.kwargs.get("dtype")) and set(s.kwargs) <= {"dtype"}:
            return len(self.items[s.args[0]])  # `np.zeros((B, H))`: one axis per length
        if p in FROM_LENGTH and s.args and isinstance(s.args[0], ir.Const) and type(s.args[0].value) is tuple \
                and all(type(n) is int for n in s.args[0].value) and len(s.args) == (2 if p is np.full else 1) \
                and _numeric_dtype(s.kwargs.get("dtype")) and set(s.kwargs) <= {"dtype"}:
            return len(s.args[0].value)  # `np.zeros((3, 4))`
        if p is np.arange and _numeric_dtype(s.kwargs.get("dtype")):
            return 1
        if p in JOINING:
            return self.joined_rank(s)
        letters = einsum_letters(s, ranks)
        if letters is not None:
            return len(letters[1])
        if p is operator.getitem and ranks[0] is not None:
            return self.indexed_rank(s.args[1], ranks[0])
        if inserted_axis(s, ranks[0] if ranks else None) is not None:
            return ranks[0] + 1
        if p in (np.reshape, ir.Method("reshape")) and not s.kwargs and _const_ints(s.args[1:]) is not None:
            return len(_const_ints(s.args[1:]))
        if (p in REDUCTIONS or (isinstance(p, ir.Method) and p.name in REDUCING_METHODS)) and ranks \
                and ranks[0] is not None:
            return _reduced_rank(s, ranks[0])
        if p in REDUCTIONS and ranks and _reduced_rank(s, -1) == 0:
            return 0  # (NumPy's reduction over every axis: a scalar whatever its operand's ndim)
        if _whole_reduction(s):
            return 0
        if p == ir.Attr("T") or p is ir.OWN or p in ir.WRITES or _same_shape(s) \
                or (isinstance(p, ir.Method) and p.name in ("copy", "transpose", "swapaxes")) or _member(p, RANK_KEEPING):
            return ranks[0] if ranks else None
        return None

    def joined_rank(self, s: ir.Assign):
        """The ndim of `np.concatenate`, `np.hstack`, `np.vstack` or `np.stack` of a tuple or list
        display whose items all have one known ndim (with a constant axis where one is given),
        else None."""
        parts, axis = joined_parts(s, self.items)
        ranks = {self.rank(q) for q in parts or ()}
        if not parts or len(ranks) != 1 or None in ranks:
            return None
        r = ranks.pop()
        if s.prim is np.concatenate:
            if axis is None:
                return 1
            return r if r >= 1 and -r <= axis < r else None
        if s.prim is np.hstack:
            return max(r, 1)
        if s.prim is np.vstack:
            return max(r, 2)
        return r + 1 if axis is not None and -(r + 1) <= axis <= r else None  # np.stack

    def indexed_rank(self, index, rank: int):
        """The ndim of `a[index]` for `a` of ndim `rank`, where `index` is made of integers (each
        removes an axis), slices (each keeps one), `None`s (each adds one) and one `...` (the axes
        the others leave); else None (a mask or an array index)."""
        parts = index_parts(index)
        ints = [q for q in parts if self.rank(q) == 0 and _integral(q, self.ints)]
        slices = [q for q in parts if isinstance(q, ir.Struct) and q.kind == "slice"]
        new = [q for q in parts if _is_newaxis(q)]
        dots = [q for q in parts if _is_ellipsis(q)]
        if len(ints) + len(slices) + len(new) + len(dots) != len(parts) or len(dots) > 1 \
                or len(ints) + len(slices) > rank:
            return None
        return rank - len(ints) + len(new)

    def of(self, op):
        if isinstance(op, ir.Var):
            return self.known.get(op)
        if isinstance(op, (ir.Const, ir.Global)):
            v = op.value
            if isinstance(v, (bool, int, float, complex, np.generic)):
                return 0
            if isinstance(v, np.ndarray):
                return 0 if v.ndim == 0 else GlobalArray(v)
        return None

    def set(self, var, token) -> bool:
        """Record a class; returns True if it changed."""
        changed = self.known.get(var) != token or (token is None and var in self.known)
        if token is None:
            self.known.pop(var, None)
        else:
            self.known[var] = token
        return changed

    def assign(self, s: ir.Assign):
        p = s.prim
        if self.numbers(s) is not None:
            return ("vector", self.numbers(s))  # every vector of k numbers has shape (k,)
        dims = self.dims(s)
        if dims is not None:
            return dims
        if is_elementwise(s) and not s.kwargs:
            tokens = [self.of(a) for a in s.args]
            if None in tokens:
                return s.target  # a shape of its own (what is computed from it elementwise shares it)
            arrays = {t for t in tokens if t != 0}
            return 0 if not arrays else (arrays.pop() if len(arrays) == 1 else s.target)
        if p in REDUCTIONS or (isinstance(p, ir.Method) and p.name in REDUCING_METHODS):
            axis, keep = _axis_keepdims(s)
            if isinstance(axis, ir.Const) and axis.value is None and isinstance(keep, ir.Const) \
                    and not keep.value:
                return 0
        if getattr(p, "__module__", None) == "math" or p in SCALAR_RESULTS or _whole_reduction(s):
            return 0
        if p in ir.WRITES or p is ir.OWN or _same_shape(s) or (isinstance(p, ir.Method) and p.name == "copy"):
            return self.of(s.args[0]) if self.of(s.args[0]) is not None else s.target
        if p in FROM_LENGTH and s.args and s.args[0] in self.lengths and len(s.args) == (2 if p is np.full else 1) \
                and _numeric_dtype(s.kwargs.get("dtype")) and set(s.kwargs) <= {"dtype"}:
            token, rank, offset = self.lengths[s.args[0]]
            if rank == 1 and offset == 0:
                return token  # `np.zeros(len(x))` of a vector x: x's shape
        if p is operator.getitem:
            sliced = self.slice_class(s.args[0], s.args[1])
            if sliced is not None:
                return sliced
        return s.target  # a shape of its own

    def axis_id(self, s: ir.Assign):
        """The id of the axis whose length the integer `s` computes (`x.shape[k]`, `len(x)` of an
        x of known Dims), else None."""
        p, args = s.prim, s.args
        if p is len and len(args) == 1 and not s.kwargs:
            base, k = args[0], 0
        elif p is operator.getitem and args[0] in self.shape_bases and isinstance(args[1], ir.Const) \
                and type(args[1].value) is int:
            base, k = self.shape_bases[args[0]], args[1].value
        else:
            return None
        token = self.of(base)
        if not isinstance(token, Dims) or not -len(token.ids) <= k < len(token.ids):
            return None
        return token.ids[k]

    def joined_dims(self, s: ir.Assign):
        """The Dims of `np.concatenate` (or `np.hstack`) of a display of arrays of known Dims along
        an axis they join, the other axes of one id: the joined axis is an id of its own (the sum
        of the parts' lengths), or the part's own for one part; else None."""
        parts, axis = joined_parts(s, self.items)
        if s.prim not in (np.concatenate, np.hstack) or not parts:
            return None
        tokens = [self.of(q) for q in parts]
        if not all(isinstance(t, Dims) for t in tokens) or len({len(t.ids) for t in tokens}) != 1:
            return None
        r = len(tokens[0].ids)
        if s.prim is np.hstack:
            axis = 0 if r == 1 else 1
        if axis is None or r == 0 or not -r <= axis < r:
            return None
        axis %= r
        others = {t.ids[:axis] + t.ids[axis + 1:] for t in tokens}
        if len(others) != 1:
            return None
        if len(tokens) == 1:
            return tokens[0]
        ids = list(tokens[0].ids)
        ids[axis] = f"{s.target.name}.{axis}"  # (no argument's id is a string)
        return Dims(tuple(ids))

    def dims(self, s: ir.Assign):
        """The Dims (or 0) of a result computed from operands of known Dims, else None."""
        p, args = s.prim, s.args
        first = self.of(args[0]) if args else None
        if p in JOINING:
            return self.joined_dims(s)
        if p in FROM_LENGTH and args and len(args) == (2 if p is np.full else 1) and set(s.kwargs) <= {"dtype"} \
                and _numeric_dtype(s.kwargs.get("dtype")):
            lengths = self.items.get(args[0], (args[0],))
            if all(q in self.axis_ids for q in lengths):  # `np.zeros((B, H))` of axis lengths
                return _token(tuple(self.axis_ids[q] for q in lengths))
            return None
        if p is operator.getitem:
            parts = args[1].items if isinstance(args[1], ir.Struct) and args[1].kind == "tuple" else (args[1],)
            if isinstance(first, Dims) and len(parts) <= len(first.ids) \
                    and all(_integral(q, self.ints) for q in parts):
                return _token(first.ids[len(parts):])
            return None
        tokens = [self.of(a) for a in args]
        letters = einsum_letters(s, [len(t.ids) if isinstance(t, Dims) else 0 if t == 0 else None for t in tokens])
        if letters is not None:
            return einsum_dims(letters, tokens[1:])
        operands = [t for t in tokens if t != 0]
        if not operands or not all(isinstance(t, Dims) for t in operands) or s.kwargs and p not in REDUCTIONS \
                and not isinstance(p, ir.Method):
            return None
        if is_elementwise(s):
            return _broadcast(operands)
        if p in MATRIX_PRODUCTS and len(tokens) == 2 and 0 not in tokens:
            return None if p in (np.dot, DOT) and len(tokens[1].ids) > 2 else _matmul(tokens[0], tokens[1])
        if (p == ir.Attr("T") or p is np.transpose) and len(args) == 1:
            return _token(first.ids[::-1])
        if (p in REDUCTIONS or (isinstance(p, ir.Method) and p.name in REDUCING_METHODS)) \
                and isinstance(first, Dims) and set(s.kwargs) <= {"axis", "keepdims"}:
            return _reduced(first, s)
        return None

    def length(self, s: ir.Assign):
        """(class, rank, offset) when the integer `s` computes is `len(x) + offset` for an array x
        (`len(x)`, `x.shape[0]`, `n - 1` of such an n), else None."""
        p, args = s.prim, s.args
        if p is len and len(args) == 1 and not s.kwargs:
            base = args[0]
        elif p is operator.getitem and args[0] in self.shape_bases and isinstance(args[1], ir.Const) \
                and args[1].value == 0:
            base = self.shape_bases[args[0]]
        elif p in (operator.add, operator.sub) and len(args) == 2 and args[0] in self.lengths \
                and isinstance(args[1], ir.Const) and type(args[1].value) is int:
            token, rank, offset = self.lengths[args[0]]
            return token, rank, offset + (args[1].value if p is operator.add else -args[1].value)
        else:
            return None
        token, rank = self.of(base), self.rank(base)
        return (token, rank, 0) if token not in (None, 0) and rank else None

    def _stop(self, op, token):
        """A slice's stop as a constant (None: the end) where it is one: a literal, or the length
        of the sliced arrays' first axis less 0, 1 or 2 (`n`, `n - 1`, `n - 2` are `None`, `-1`,
        `-2` for every length: a larger offset differs from its negative literal for short
        arrays); else '?'."""
        if isinstance(op, ir.Const):
            return op.value
        length = self.lengths.get(op)
        if length is not None and length[0] == token and -2 <= length[2] <= 0:
            return length[2] or None
        return "?"

    def slice_class(self, base, index):
        """`x[a:]`, `x[a:-b]`, `x[:-b]` along the first axis with constant bounds: the class of
        every such slice of `x` that drops the same number of entries, e.g. `u[2:]`, `u[1:-1]`,
        `u[:-2]` of one `u` all share a class (and `u[1:n - 1]` for `n = len(u)` with them)."""
        token = self.of(base)
        if token in (None, 0) or not (isinstance(index, ir.Struct) and index.kind == "slice"):
            return None
        lo, step = (p.value if isinstance(p, ir.Const) else "?" for p in (index.items[0], index.items[2]))
        hi = self._stop(index.items[1], token)
        if step not in (None, 1) or lo == "?" or hi == "?":
            return None
        lo = lo or 0
        if not isinstance(lo, int) or lo < 0 or not (hi is None or (isinstance(hi, int) and hi < 0)):
            return None
        return ("slice", token, lo - (hi or 0))

    def block(self, stmts) -> bool:
        changed = False
        for s in stmts:
            if isinstance(s, ir.Assign):
                if s.target is not None:
                    if s.prim == ir.Attr("shape") or s.prim is np.shape:
                        self.shape_tuples.add(s.target)
                        self.shape_bases[s.target] = s.args[0]
                    if s.prim in (ir.BUILD_LIST, ir.BUILD_TUPLE):
                        self.items[s.target] = s.args
                    if s.prim is range:
                        self.ranges.add(s.target)
                    integer = _integer_result(s, self.ints, self.shape_tuples, self.ranges)
                    if integer:
                        self.ints.add(s.target)
                        length = self.length(s)
                        if length is not None:
                            self.lengths[s.target] = length
                        else:
                            self.lengths.pop(s.target, None)
                    axis_id = self.axis_id(s) if integer else None
                    if axis_id is not None:
                        self.axis_ids[s.target] = axis_id
                    else:
                        self.axis_ids.pop(s.target, None)
                    rank = 0 if integer else self.statement_rank(s)
                    token = 0 if rank == 0 else self.assign(s)
                    if rank is None and isinstance(token, Dims):
                        rank = len(token.ids)
                    if rank is not None:
                        self.ranks[s.target] = rank
                    elif s.target in self.ranks:  # (an operand's rank was refuted since)
                        del self.ranks[s.target]
                        changed = True
                    changed |= self.set(s.target, token)
            elif isinstance(s, ir.If):
                changed |= self.block(s.body) | self.block(s.orelse)
                for out, a, b in zip(s.outputs, s.body_results, s.orelse_results):
                    ta, tb = self.of(a), self.of(b)
                    changed |= self.set(out, ta if ta == tb and ta is not None else out)
                    ra, rb = self.rank(a), self.rank(b)
                    if ra is not None and ra == rb:
                        self.ranks[out] = ra
                    elif out in self.ranks:
                        del self.ranks[out]
                        changed = True
            elif isinstance(s, ir.Loop):
                if s.target is not None:
                    self.ints.add(s.target)  # a counter over a range
                    changed |= self.set(s.target, 0)
                for p, i in zip(s.params, s.inits):
                    if p not in self.known:
                        changed |= self.set(p, self.of(i) if self.of(i) is not None else p)
                    if self.rank(i) is not None and p not in self.ranks and p not in self.refuted:
                        self.ranks[p] = self.rank(i)

                def step(_, s=s):
                    self.block(s.cond_body)
                    self.block(s.body)
                    for p, n in zip(s.params, s.nexts):
                        if self.of(n) != self.of(p):
                            self.set(p, p)  # differs across iterations: a class of its own
                        if p in self.ranks and self.rank(n) != self.ranks[p]:
                            del self.ranks[p]
                            self.refuted.add(p)  # its rank changes across iterations
                    return self.state()

                # (compared by their state: the entry of an inner loop gives its params their inits'
                # ranks again and the inner loop takes them back, so changes are no measure)
                before = self.state()
                changed |= fixpoint(step, before, _rounds([s]), "shape classes around a loop") != before
        return changed


JOINING = (np.concatenate, np.hstack, np.vstack, np.stack)


def joined_parts(s: ir.Assign, items: dict) -> tuple:
    """(the arrays `s` joins, its axis) for `np.concatenate(display, axis)` (axis an int, or None
    for `axis=None`; 0 by default), `np.stack(display, axis)`, `np.hstack(display)` and
    `np.vstack(display)` (axis None) of a tuple or list display `items` holds; else (None, None)
    (another keyword, an axis not a literal, a sequence made another way)."""
    if s.prim not in JOINING or not s.args or s.args[0] not in items:
        return None, None
    rest = s.args[1:] + [v for k, v in s.kwargs.items() if k == "axis"]
    if set(s.kwargs) - {"axis"} or len(rest) > 1 or (rest and s.prim in (np.hstack, np.vstack)):
        return None, None
    axis = rest[0] if rest else ir.Const(0 if s.prim in (np.concatenate, np.stack) else None)
    if not isinstance(axis, ir.Const) or not (axis.value is None or type(axis.value) is int) \
            or (axis.value is None and s.prim is np.stack):
        return None, None
    return list(items[s.args[0]]), axis.value


def index_parts(index) -> tuple:
    """The parts of an index: `x[i, :]` has two, `x[i]` one."""
    return index.items if isinstance(index, ir.Struct) and index.kind == "tuple" else (index,)


def _is_newaxis(q) -> bool:
    return isinstance(q, (ir.Const, ir.Global)) and q.value is None


def _is_ellipsis(q) -> bool:
    return isinstance(q, ir.Const) and q.value is Ellipsis


def _is_full_slice(q) -> bool:
    return isinstance(q, ir.Struct) and q.kind == "slice" \
        and all(isinstance(b, ir.Const) and b.value is None for b in q.items)


def _const_ints(ops) -> list | None:
    """The integers of constant operands (a shape written out, or one constant tuple), else None."""
    if len(ops) == 1 and isinstance(ops[0], ir.Const) and isinstance(ops[0].value, tuple):
        ops = [ir.Const(v) for v in ops[0].value]
    elif len(ops) == 1 and isinstance(ops[0], ir.Struct) and ops[0].kind == "tuple":
        ops = list(ops[0].items)
    values = [op.value for op in ops if isinstance(op, ir.Const)]
    if len(values) != len(ops) or not all(type(v) is int for v in values):
        return None
    return values


def inserted_axis(s: ir.Assign, rank) -> int | None:
    """The position of the one length-1 axis `s` inserts among its operand's `rank` axes, which it
    keeps as they are: `a[:, None]`, `a[..., np.newaxis]`, `np.expand_dims(a, k)`, and
    `a.reshape(-1, 1)` / `a.reshape(1, -1)` of a vector; else None."""
    if rank is None or not s.args or s.kwargs:
        return None
    if s.prim is operator.getitem and len(s.args) == 2:
        parts = list(index_parts(s.args[1]))
        if sum(map(_is_newaxis, parts)) != 1 or sum(map(_is_ellipsis, parts)) > 1 \
                or not all(_is_newaxis(q) or _is_ellipsis(q) or _is_full_slice(q) for q in parts):
            return None
        slices = sum(map(_is_full_slice, parts))
        if slices > rank:
            return None
        if any(map(_is_ellipsis, parts)):
            at = next(k for k, q in enumerate(parts) if _is_ellipsis(q))
            parts[at:at + 1] = [None] * (rank - slices)  # (the axes `...` stands for)
        return next(k for k, q in enumerate(parts) if q is not None and _is_newaxis(q))
    if s.prim is np.expand_dims and len(s.args) == 2:
        axis = _const_ints(s.args[1:])
        if axis is not None and len(axis) == 1 and -(rank + 1) <= axis[0] <= rank:
            return axis[0] % (rank + 1)
        return None
    if s.prim in (np.reshape, ir.Method("reshape")) and rank == 1:
        shape = _const_ints(s.args[1:])
        return {(-1, 1): 1, (1, -1): 0}.get(tuple(shape)) if shape is not None else None
    return None


# functions reducing over every axis unless given one -> the position of their `axis` parameter
WHOLE_REDUCTIONS = {np.linalg.norm: 2, np.average: 1, np.median: 1, np.ptp: 1, np.nansum: 1, np.nanmean: 1,
                    np.nanmax: 1, np.nanmin: 1}


def _whole_reduction(s: ir.Assign) -> bool:
    """A reduction over every axis (`np.linalg.norm(x, ord)`, `np.average(a, weights=w)`, no
    `axis`, no `keepdims`) or `np.vdot`: one number."""
    try:
        position = WHOLE_REDUCTIONS.get(s.prim)
    except TypeError:  # (an unhashable callee)
        return False
    if s.prim is np.vdot:
        return True
    if position is None or not s.args or len(s.args) > position:
        return False
    axis, keep = s.kwargs.get("axis", ir.Const(None)), s.kwargs.get("keepdims", ir.Const(False))
    return isinstance(axis, ir.Const) and axis.value is None and isinstance(keep, ir.Const) and not keep.value


def _axis_keepdims(s: ir.Assign) -> tuple:
    return (s.kwargs.get("axis", s.args[1] if len(s.args) > 1 else ir.Const(None)),
            s.kwargs.get("keepdims", ir.Const(False)))


def _reduced_rank(s: ir.Assign, rank: int):
    """The ndim of a reduction's result over a constant `axis` (None, an int or a tuple)."""
    axis, keep = _axis_keepdims(s)
    if not (isinstance(axis, ir.Const) and isinstance(keep, ir.Const)) or len(s.args) > 2:
        return None
    if keep.value:
        return rank
    if axis.value is None:
        return 0
    return rank - (len(axis.value) if isinstance(axis.value, tuple) else 1)


def _numeric_dtype(op) -> bool:
    """A `dtype=` keyword absent, or naming a number type (never `object`)."""
    if op is None:
        return True
    try:
        return isinstance(op, (ir.Const, ir.Global)) and np.dtype(op.value).kind in "biuf"
    except TypeError:
        return False


def _integral(op, ints: set) -> bool:
    """An index part that surely selects (removes a dimension): an integer. A boolean (a Python
    bool, `x > 0`, `np.all(...)`) adds an axis instead, and a value of unknown kind may be either."""
    if isinstance(op, ir.Const):
        return isinstance(op.value, int) and not isinstance(op.value, bool)
    return op in ints


INT_FUNCTIONS = {len, int, operator.index, math.floor, math.ceil, math.trunc, np.ndim, np.size}
INT_OF_ONE = {np.argmax, np.argmin, np.count_nonzero, round}  # an integer when called with one argument
INT_ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                  operator.neg, operator.pos, min, max, abs}


# `x + y`, `x * y` of values normalize could not tell from sequences (`2 * H` of `H = W.shape[0]`):
# of integers, integer arithmetic
_SEQUENCE_OR_NUMBER = (ir.PLUS, ir.TIMES)


def _integer_result(s: ir.Assign, ints: set, shape_tuples: set, ranges: set = frozenset()) -> bool:
    """Whether an Assign surely yields an integer (not a bool): a counter, a length, a size, an
    entry of a shape, an item of a range (`ranges`: the values bound to one), integer arithmetic
    on those."""
    p = s.prim
    if isinstance(p, ir.Attr):
        return p.name in ("ndim", "size")
    if isinstance(p, ir.Method):
        return p.name in ("argmax", "argmin") and len(s.args) == 1 and not s.kwargs
    if p is operator.getitem:
        return (s.args[0] in shape_tuples and isinstance(s.args[1], ir.Const) and isinstance(s.args[1].value, int)) \
            or (s.args[0] in ranges and _integral(s.args[1], ints))
    try:
        return (p in INT_FUNCTIONS or (p in INT_OF_ONE and len(s.args) == 1) or (
            (p in INT_ARITHMETIC or p in _SEQUENCE_OR_NUMBER) and bool(s.args)
            and all(_integral(a, ints) for a in s.args))) and not s.kwargs
    except TypeError:  # an unhashable callee
        return False


def infer(fn: ir.Function, param_ranks: dict, ints: set | None = None, param_dims: dict | None = None) -> tuple:
    """({Var: shape class}, {Var: ndim}) for the values whose class or rank is known;
    `param_ranks` maps each parameter to its ndim (or None when not an array or scalar), and
    `param_dims` (a compilation for one pattern of axis lengths, `dims_of`) maps array parameters
    to their axes' ids. `ints`, when given, receives the Vars that surely hold integers."""
    param_dims = param_dims or {}
    shapes = Shapes({p: (_token(param_dims[p]) if p in param_dims else 0 if r == 0 else p)
                     for p, r in param_ranks.items() if r is not None},
                    {p: r for p, r in param_ranks.items() if r is not None})
    # (compared by their state, as around loops)
    fixpoint(lambda state: (shapes.block(fn.body), shapes.state())[1], shapes.state(), _rounds(fn.body),
             "shape classes")
    if ints is not None:
        ints |= shapes.ints
    return shapes.known, shapes.ranks


def same_facts(a: dict, b: dict) -> bool:
    """Whether two results of `infer` (classes) relate the same values: the same values known,
    the same scalars, the same groups of values of one shape."""
    def groups(classes):
        by_token: dict = {}
        for v, token in classes.items():
            by_token.setdefault(token, set()).add(v)
        return {frozenset(vs) for vs in by_token.values()}, {v for v, t in classes.items() if t == 0}
    return groups(a) == groups(b)


def _rounds(body) -> int:
    """A bound on the rounds of `Shapes.block` over `body` until nothing changes: the classes of
    its statements follow from those of the loop params, and each param changes at most twice
    (it gets a class of its own, it loses its rank); a round more sees no change."""
    return 2 * sum(len(s.params) for s in ir.walk(body) if isinstance(s, ir.Loop)) + 4


def broadcast_free(stmt: ir.Assign, operand, known: dict) -> bool:
    """Whether `operand` of an elementwise `stmt` surely has the result's shape (or, for a write
    `b[idx] = v`, whether `v` surely has the shape of the slots it fills; for a composite, whether
    every array it is bound to has `operand`'s shape)."""
    shapes = Shapes(known)
    if stmt.prim is ir.SETITEM and operand is stmt.args[2]:
        base, index = stmt.args[0], stmt.args[1]
        region = shapes.of(base) if isinstance(index, ir.Const) and index.value is Ellipsis \
            else shapes.slice_class(base, index)
        return region is not None and shapes.of(operand) == region
    if getattr(stmt.rule, "broadcasts_operands", False) and stmt.bound:
        tokens = {shapes.of(op) for op in stmt.bound.values() if isinstance(op, ir.Var)}
        if None not in tokens and len(tokens) == 1 and shapes.of(operand) in tokens:
            return True
    if not is_elementwise(stmt) or stmt.kwargs or stmt.target is None:
        return False
    mine = shapes.of(operand)
    return mine is not None and mine == shapes.of(stmt.target)

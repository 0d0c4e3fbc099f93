"""Buffer and copyto: mutable arrays you may write into inside differentiated code.

At run time a Buffer is a thin wrapper around an ndarray whose reads return new arrays (never
views), so a value read from a buffer keeps its value whatever is written afterwards.

    b = Buffer(np.zeros(3)); b[1:] = 2.0; np.sum(b.copy())  ->  4.0
"""
from __future__ import annotations

import itertools

import numpy as np


class Buffer(np.lib.mixins.NDArrayOperatorsMixin):
    """A differentiable mutable array. `Buffer(x)` holds a copy of `x` (float for integer `x`).
    Arithmetic on a buffer (`b * 2`, `np.sin(b)`) reads a snapshot and returns a new ndarray."""

    __slots__ = ("data",)
    __array_priority__ = 20

    def __init__(self, x):
        data = np.array(x.data if isinstance(x, Buffer) else x, copy=True)
        if data.dtype.kind in "biu":
            data = data.astype(float)
        self.data = data

    @classmethod
    def zeros(cls, shape, dtype=float) -> Buffer:
        return cls(np.zeros(shape, dtype=dtype))

    @classmethod
    def zeros_like(cls, x) -> Buffer:
        x = x.data if isinstance(x, Buffer) else np.asarray(x)
        return cls(np.zeros(x.shape, dtype=x.dtype if x.dtype.kind in "fcO" else float))

    # -- reads: always new arrays --------------------------------------------------------------
    def __getitem__(self, idx):
        # A copy, never a view (writable, so that `b[i] += v` works as a read then a write).
        value = self.data[idx]
        return value.copy() if isinstance(value, np.ndarray) else value

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            return NotImplemented
        inputs = [x.data if isinstance(x, Buffer) else x for x in inputs]
        return (ufunc if method == "__call__" else getattr(ufunc, method))(*inputs, **kwargs)

    def copy(self) -> np.ndarray:
        return self.data.copy()

    __copy__ = copy

    def __array__(self, dtype=None, copy=None):
        return np.array(self.data, dtype=dtype, copy=True)

    # -- writes --------------------------------------------------------------------------------
    def __setitem__(self, idx, value):
        self.data[idx] = value

    # -- the ndarray it holds ------------------------------------------------------------------
    shape = property(lambda self: self.data.shape)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)
    dtype = property(lambda self: self.data.dtype)

    def __len__(self) -> int:
        return len(self.data)

    def __iter__(self):
        return (self[i] for i in range(len(self.data)))

    def __repr__(self) -> str:
        return f"Buffer({self.data!r})"


def _data_of(x):
    return x.data if isinstance(x, Buffer) else x


def _binary(ufunc):
    def forward(self, other):
        return ufunc(self.data, _data_of(other))

    def reflected(self, other):
        return ufunc(_data_of(other), self.data)
    return forward, reflected


# The operators compute on the held array directly (what NDArrayOperatorsMixin does through
# `__array_ufunc__`, about ten times slower); in-place operators stay the mixin's.
for _name, _ufunc in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("matmul", np.matmul),
                      ("truediv", np.true_divide), ("floordiv", np.floor_divide), ("mod", np.remainder),
                      ("pow", np.power), ("and", np.bitwise_and), ("or", np.bitwise_or),
                      ("xor", np.bitwise_xor), ("lshift", np.left_shift), ("rshift", np.right_shift),
                      ("divmod", np.divmod)):
    _forward, _reflected = _binary(_ufunc)
    setattr(Buffer, f"__{_name}__", _forward)
    setattr(Buffer, f"__r{_name}__", _reflected)
for _name, _ufunc in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                      ("eq", np.equal), ("ne", np.not_equal)):
    setattr(Buffer, f"__{_name}__", _binary(_ufunc)[0])
def _unary(ufunc):
    return lambda self: ufunc(self.data)


for _name, _ufunc in (("neg", np.negative), ("pos", np.positive), ("abs", np.absolute), ("invert", np.invert)):
    setattr(Buffer, f"__{_name}__", _unary(_ufunc))
Buffer.__hash__ = None  # (as for ndarrays: `==` is elementwise)


def _is_stream(src) -> bool:
    return not isinstance(src, (np.ndarray, Buffer, list, tuple, int, float, complex, np.generic)) and (
        hasattr(src, "__next__") or isinstance(src, (map, filter, zip, range, itertools.islice)))


def copyto(dst, src, where=True):
    """`np.copyto` for buffers and arrays; an iterator or generator `src` fills `dst`'s slots in C
    order from slot 0 (a shorter one writes a prefix, a longer one raises ValueError)."""
    data = dst.data if isinstance(dst, Buffer) else dst
    if _is_stream(src):
        items = list(itertools.islice(src, data.size + 1))
        if len(items) > data.size:
            raise ValueError(f"copyto: the iterator yields more than the buffer's {data.size} slots")
        data.flat[:len(items)] = items if data.dtype != object else _object_items(items)  # C order
        return dst
    if isinstance(src, Buffer):
        src = src.data
    np.copyto(data, np.asarray(src, dtype=data.dtype) if data.dtype == object else src, where=where)
    return dst


def _object_items(items):
    out = np.empty(len(items), dtype=object)
    out[:] = [None] * len(items)
    for i, v in enumerate(items):
        out[i] = v
    return out

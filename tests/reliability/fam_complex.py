"""Family generators of complex programs: real and complex operations mixed in many spellings.

Each program differentiates with respect to a real array `v` (finite differences in the real
framework of `families.check_case`); complex values come from literals, `1j * v`, `np.exp(1j * v)`,
`.astype(complex)`, `np.fft`, a complex global array, a helper, or the complex argument `z` (not
differentiated in `mixed`; `complex_wrt` differentiates with respect to it).
Every program must give the gradient of finite differences or be refused with a located error:

- `complex.mixed`: a chain of allow-listed operations (holomorphic, linear, structural, real,
  imag, conj, abs, angle, FFTs), a loop or a branch, reduced to a real loss;
- `complex.complex_wrt`: the same, differentiated with respect to the complex argument z, against
  finite differences in its real and imaginary parts (value_and_grad);
- `complex.outside`: the same with one operation outside the allow-list on a complex value
  (maximum, sort, comparisons, sign, cumsum, arcsin, clip, float(), np.array, np.empty with a
  complex dtype, np.linalg): must be refused (a located ComplexError), never a number.
"""
from __future__ import annotations

import numpy as np
from families import Case, family

N = 4

_SOURCES = [
    "v * 1j",
    "v + 1j * v[::-1]",
    "np.exp(1j * v)",
    "v.astype(complex) * (0.5 - 0.25j)",
    "np.fft.fft(v)",
    "np.fft.ifft(v * 2.0)",
    "(v + 2j) ** 2 * 0.1",
    "W * v",
    "rot(v)",
    "z * v",
    "z + v",
    "np.zeros({n}, dtype=complex) + v * 0.5j",
    "np.ones_like(z) * v",
    "v * (1 + 2j) + z * 0.5",
    "np.fft.fft(v, n={n})[:{n}]",
    "np.concatenate([np.fft.rfft(v), np.conj(np.fft.rfft(v[::-1]))])[:{n}]",
]

_UNARY = [
    "np.sin({t})",
    "np.cos({t} * 0.5)",
    "np.exp({t} * 0.3)",
    "{t} * {t}",
    "{t} ** 2",
    "{t} ** 3 * 0.2",
    "np.square({t})",
    "np.sqrt({t} + 3.0)",
    "np.log({t} + 4.0)",
    "np.tanh({t} * 0.2)",
    "1.0 / ({t} + 3.0)",
    "np.reciprocal({t} + 3.0)",
    "np.conj({t})",
    "{t}.conj()",
    "np.conjugate({t}) * 0.5",
    "np.fft.ifft({t})",
    "np.fft.fft({t}, norm='ortho')",
    "np.fft.fftshift({t})",
    "np.fft.ifftshift({t}) * 2.0",
    "{t}[::-1]",
    "np.where(np.arange({n}) % 2 == 0, {t}, 2.0 * {t})",
    "{t} * v",
    "{t} - v * 0.5j",
    "np.real({t}) * (1 + 1j)",
    "np.imag({t}) + {t}",
    "np.abs({t}) * {t} * 0.3",
    "{t}.reshape(2, 2).T.reshape({n})",
    "np.stack([{t}, v * 1.0])[0]",
    "np.concatenate([{t}[:2], {t}[2:] * 1j])",
    "{t} @ np.eye({n}) + 0.5",
    "np.dot(np.ones(({n}, {n})) * 0.25, {t})",
    "-{t} + np.exp2({t} * 0.1)",
    "np.log1p({t} * 0.2 + 1.0)",
    "np.sinh({t} * 0.3) + np.cosh({t} * 0.2)",
]

_LOSSES = [
    "np.sum(np.abs({t}) ** 2)",
    "np.sum(np.real({t}) * v)",
    "np.sum(np.imag({t}))",
    "np.real(np.sum({t} * np.conj({t})))",
    "np.sum(np.abs({t} + 2.0))",
    "np.sum(np.angle({t} * 0.05 + 1.0))",
    "np.sum({t}.real ** 2 - {t}.imag * v)",
    "np.real(np.mean({t})) + np.imag(np.sum({t} * {t}))",
    "np.sum(np.abs(np.fft.fft({t})) ** 2)",
    "np.sum(np.fft.irfft({t}[:3], n={n}) * v)",
    "np.abs(np.sum({t})) + np.real(np.trace(np.outer({t}, v)))",
]

_OUTSIDE = [
    "np.maximum({t}, 0.5)",
    "np.minimum({t}, {t} * 2.0)",
    "np.sort({t})",
    "np.sign({t}) * {t}",
    "np.cumsum({t})",
    "{t} * ({t} > 0)",
    "np.arcsin({t} * 0.1)",
    "np.clip({t}, -1.0, 1.0)",
    "{t} + np.empty({n}, dtype=complex) * 0.0",
    "{t} * float({t}[0])",
    "np.array([{t}[0], {t}[1], {t}[2], {t}[3]])",
    "np.linalg.inv(np.outer({t}, {t}) + np.eye({n}))[0]",
]

PREAMBLE = ("W = np.array([1 + 1j, 2.0 - 0.5j, -0.5j, 0.25])\n\n\n"
            "def rot(x):\n    return x * 1j\n\n\n")


def _arr(ch, shape, lo=-1.0, hi=1.0):
    return np.array([ch.float(lo, hi) for _ in range(int(np.prod(shape)))]).reshape(shape)


def _carr(ch, shape):
    return _arr(ch, shape, -0.8, 0.8) + 1j * _arr(ch, shape, -0.8, 0.8)


def _chain(ch, steps: int, outside: str | None = None) -> list:
    """Statements computing t from v (and z), one of them `outside` when given."""
    lines = [f"t = {ch.choice(_SOURCES).format(n=N)}"]
    at = ch.int(0, steps - 1) if outside else -1
    for k in range(steps):
        expr = (outside if k == at else ch.choice(_UNARY)).format(t="t", n=N)
        lines.append(f"t = {expr}")
    return lines


def _control(ch, lines: list) -> list:
    """Maybe wrap part of the chain in a loop or a branch on the real scalar s."""
    kind = ch.choice(["none", "loop", "branch", "helper"])
    if kind == "loop" and len(lines) > 1:
        k = ch.int(1, 3)
        return lines[:1] + [f"for i in range({k}):"] + ["    " + line.replace("t = ", "t = 0.7 * ", 1)
                                                         for line in lines[1:]]
    if kind == "branch" and len(lines) > 1:
        return lines[:1] + ["if s > 0:"] + ["    " + line for line in lines[1:]] + \
            ["else:", "    t = np.conj(t) * 1j"]
    if kind == "helper":
        return lines + ["t = rot(t) + t"]
    return lines


def _case(ch, outside: str | None) -> Case:
    body = _control(ch, _chain(ch, ch.int(1, 3), outside))
    loss = ch.choice(_LOSSES).format(t="t", n=N)
    src = PREAMBLE + "def f(v, z, s):\n" + "".join(f"    {line}\n" for line in body) + f"    return {loss}\n"
    return Case(src, [_arr(ch, (N,)), _carr(ch, (N,)), ch.float(-1.0, 1.0)])


@family("complex")
def mixed(ch) -> Case:
    return _case(ch, None)


@family("complex")
def complex_wrt(ch) -> Case:
    """The same programs differentiated with respect to the complex argument z (value_and_grad
    against finite differences in its real and imaginary parts: `families.fd_grad`)."""
    case = _case(ch, None)
    case.wrt = 1
    return case


@family("complex")
def outside(ch) -> Case:
    return _case(ch, ch.choice(_OUTSIDE))


@family("complex")
def gen_power_turns_complex(ch):
    """A Python number (an item of `tolist()`, `.item()`, `float()`) raised to a fractional power
    and read back as a real number (`abs`, `.real`, a product with `abs`, a comparison): complex
    where the number is negative, as Python computes it. The gradient once came out real with
    the wrong sign; the power must be refused where it turns complex, and work where it does not."""
    item = ch.choice(["v.tolist()[0]", "v[0].item()", "float(v[0])", "v.tolist()[-1]"])
    p = ch.choice(["0.5", "1.5", "2.5", "(1 / 3)"])
    use = ch.choice(["abs(w)", "w.real", "abs(w) * v[1]", "abs(w) ** 2", "(abs(w) if abs(w) > 0.1 else 0.0)"])
    src = f"""
def f(v):
    w = {item} ** {p}
    return {use} + np.sum(v ** 2) * 0.1
"""
    sign = ch.choice([-1.0, 1.0])
    v = np.array([sign * ch.float(0.5, 2.0), ch.float(0.5, 1.5), sign * ch.float(0.5, 2.0)])
    return Case(src, [v])

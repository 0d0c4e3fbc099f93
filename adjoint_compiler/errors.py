"""The error hierarchy. Every compile-time error points at the user's file, line and column."""
from __future__ import annotations


class AdjointCompilerError(Exception):
    """Base of every error the compiler raises on purpose."""


def _located(message: str, loc) -> str:
    if loc is None:
        return message
    line = loc.raw_text.rstrip()
    indent = len(line) - len(line.lstrip())
    caret = " " * max(loc.col - indent, 0) + "^"
    return f'{message}\n  File "{loc.file}", line {loc.line}\n    {line.lstrip()}\n    {caret}{_generated_for(loc)}'


def _generated_for(loc) -> str:
    """For a line of a generated gradient (differentiated again: `hessian`, `grad(grad(f))`), the
    user's line it was generated for, from the `# L<n>: <statement>` comment above it and the
    module's header (`the gradient of f (file.py:3)`)."""
    if not str(loc.file).startswith("<adjoint_compiler"):
        return ""
    import linecache
    import re
    lines = linecache.getlines(loc.file)
    header = re.search(r"the (?:gradient|jvp|value and gradient) of (\S+) \(([^:()]+):\d+\)", "".join(lines[:3]))
    for text in reversed(lines[:loc.line]):
        found = re.match(r"\s*# L(\d+): (.*)", text)
        if found:
            where = f"line {found.group(1)} of {header.group(2)}" if header else f"line {found.group(1)}"
            return (f"\n  (in the generated gradient{f' of `{header.group(1)}`' if header else ''}, computing "
                    f"the derivative of {where}: {found.group(2).strip()})")
    return ""


class UnsupportedSyntaxError(AdjointCompilerError, SyntaxError):
    """Syntax the compiler does not handle; Python prints a caret under the user's code."""

    def __init__(self, message: str, loc=None):
        if loc is None:
            SyntaxError.__init__(self, message)
        else:
            SyntaxError.__init__(self, message, (loc.file, loc.line, loc.col + 1, loc.raw_text))
        self.loc = loc


class MissingRuleError(AdjointCompilerError):
    """A called function has no adjoint rule and no source to compile."""

    def __init__(self, message: str, loc=None):
        super().__init__(_located(message, loc))
        self.loc = loc


class NoGradientError(MissingRuleError, NotImplementedError):
    """Raised when a gradient runs: the rule has no gradient for these values or keywords
    (`np.pad(mode='mean')`, a write's derivative into a list, a singular matrix at second order)."""


class MutationError(AdjointCompilerError):
    """An in-place write the compiler cannot differentiate safely."""

    def __init__(self, message: str, loc=None):
        super().__init__(_located(message, loc))
        self.loc = loc


class RuleError(AdjointCompilerError):
    """A malformed adjoint rule, reported when it is registered."""


class CompileError(AdjointCompilerError):
    """Any other located compile-time problem (a name used before assignment, ...)."""

    def __init__(self, message: str, loc=None):
        super().__init__(_located(message, loc))
        self.loc = loc


class TextGradientError(CompileError):
    """Text made from a differentiated value (`f"{x}"`, `str(x)`, `"%f" % x`) used other than in a
    report: converted back to a number, returned, or passed to a function that computes with it."""


class ArgumentError(AdjointCompilerError, TypeError, ValueError):
    """An argument (or a pullback's cotangent) a gradient cannot accept: complex values inside a
    container argument or in forward mode, a complex cotangent, a
    non-numeric value to differentiate, a cotangent of the wrong structure, shape or kind (the
    message names the function, which output, the expected shape and what was received)."""


class ArgumentIndexError(ArgumentError, IndexError):
    """A `wrt` position out of the range of the function's parameters."""


class ComplexError(AdjointCompilerError):
    """A complex value the compiler will not differentiate, at the user's line: one reaching a
    function outside the complex allow-list (`np.maximum`, `np.sort`, `<`, writes, constructors with
    a complex dtype; README "Complex numbers"), a complex loss of `grad` or output of `vjp`, a
    complex `if` condition, complex values in a gradient differentiated again (hessian, hvp), or
    a real argument's gradient that came out complex at run time."""

    def __init__(self, message: str, loc=None):
        super().__init__(_located(message, loc))
        self.loc = loc


class ComplexRuleError(ComplexError, MissingRuleError):
    """A function given a complex value that has no rule valid for complex operands (`np.maximum`
    of a complex array, `np.emath.sqrt`, `np.fft.hfft`)."""


class InternalError(AdjointCompilerError):
    """A broken promise inside the compiler (an analysis that did not converge): a bug to report,
    never a property of the user's code."""

"""`python -m adjoint_compiler show FILE.py:FUNC [--wrt 0,1] [--ir] [--stage NAME] [--vjp]`
`python -m adjoint_compiler clear-cache`

Prints the generated gradient source of FUNC (the same text `adjoint_source` returns), its IR as
differentiated (`--ir`), or the output of any pipeline pass (`--stage NAME`, one of
`pipeline.STAGES`). Bad arguments get a one-line error.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys

from .api import vjp_mode
from .errors import AdjointCompilerError
from .pipeline import FINAL_TEXT, IR_STAGE, PASSES, STAGES, compile_gradient


class UsageError(Exception):
    """A bad command line: printed as one line, exit status 2."""


def _load(spec: str):
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:FUNC, got {spec!r}")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    module_name = "_adjoint_show_" + os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 -- the user's module failed to import: say so in one line
        raise UsageError(f"cannot import {path}: {type(exc).__name__}: {exc}") from None
    func = getattr(module, name, None)
    if func is None or not callable(func):
        raise UsageError(f"{path} has no function {name!r}")
    return func


def _wrt(text: str, func) -> tuple:
    try:
        wrt = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"--wrt expects comma-separated argument positions like 0,1; got {text!r}") from None
    target = inspect.unwrap(func)
    n = len(inspect.signature(target).parameters)
    for i in wrt:
        if not 0 <= i < n:
            raise UsageError(f"--wrt {i} is out of range: {target.__name__} takes {n} arguments")
    return wrt


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m adjoint_compiler")
    sub = parser.add_subparsers(dest="command", required=True)
    passes = "\n".join(f"  {p.name:<10} {p.summary}" for p in PASSES)
    show = sub.add_parser("show", help="print the generated gradient of a function in a file",
                          formatter_class=argparse.RawDescriptionHelpFormatter,
                          epilog=f"the passes, in order (--stage NAME prints the text after one):\n{passes}")
    show.add_argument("target", metavar="FILE.py:FUNC")
    show.add_argument("--wrt", default="0", help="comma-separated argument positions (default 0)")
    show.add_argument("--ir", action="store_true", help=f"print the IR as differentiated (--stage {IR_STAGE})")
    show.add_argument("--stage", choices=STAGES, metavar="NAME", help="print the output of this pass (below)")
    show.add_argument("--vjp", action="store_true", help="print the split vjp/pullback form")
    sub.add_parser("clear-cache", help="empty the on-disk cache of generated gradients")
    args = parser.parse_args(argv)
    if args.command == "clear-cache":
        from . import diskcache
        print(f"removed {diskcache.clear()} cached gradient modules from {diskcache.directory()}")
        return 0
    try:
        func = _load(args.target)
        wrt = _wrt(args.wrt, func)
        stage = IR_STAGE if args.ir else (args.stage or FINAL_TEXT)
        n = len(inspect.signature(inspect.unwrap(func)).parameters)
        text = compile_gradient(inspect.unwrap(func), wrt, ("num",) * n, vjp_mode(func) if args.vjp else "grad",
                                stage=stage)
    except (UsageError, AdjointCompilerError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {first}", file=sys.stderr)
        return 2
    print(text.rstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

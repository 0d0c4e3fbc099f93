"""`python -m adjoint_compiler show FILE.py:FUNC [--wrt 0,1] [--ir] [--stage NAME] [--vjp | --jvp]`
`python -m adjoint_compiler clear-cache`

Prints the generated gradient source of FUNC (the same text `adjoint_source` returns), its IR as
differentiated (`--ir`), or the output of any pipeline pass (`--stage NAME`, one of
`pipeline.STAGES`); with `--jvp`, the forward-mode source (`jvp_source`, tangents of every
parameter unless `--wrt` says which) or the output of a pass of `pipeline.FORWARD_STAGES`
(`--stage forward`: the IR with its tangents). Bad arguments get a one-line error.

FILE is not imported when FUNC is a top-level `def`: only the statements that bind what FUNC reads
(imports, definitions, assignments; transitively) run, so a script whose top level trains a model
or prints is read without running it. When one of those names is set by another statement (a
loop, an `if`, a `with`), by `import *`, or FUNC is not a plain `def`, the file is imported and a
note on stderr says why; a note also lists the assignments that computed something.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import inspect
import os
import sys
import types

from .api import vjp_mode
from .errors import AdjointCompilerError
from .pipeline import FINAL_TEXT, FORWARD_PASSES, FORWARD_STAGES, IR_STAGE, PASSES, STAGES, compile_gradient


class UsageError(Exception):
    """A bad command line: printed as one line, exit status 2."""


def _load(spec: str):
    """The function FUNC of FILE.py, read without running the file's top-level code where that is
    possible (see `_slice`); otherwise the file is imported, with a note on stderr saying why."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:FUNC, got {spec!r}")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    module_name = "_adjoint_show_" + os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        tree = ast.parse(text, path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    statements, why = _slice(tree, name, text, path)
    if statements is None and why is None:
        raise UsageError(f"{path} has no function {name!r}")
    module = types.ModuleType(module_name)
    module.__file__ = os.path.abspath(path)
    sys.modules[module_name] = module
    if statements is not None:
        ran = [s for s in statements if not _declares_only(s)]
        try:
            code = compile(ast.Module(body=statements, type_ignores=[]), path, "exec", dont_inherit=True)
            with contextlib.redirect_stdout(sys.stderr):  # (stdout is for the generated code)
                exec(code, module.__dict__)  # noqa: S102 -- the user's own file, only what FUNC reads
        except Exception as exc:  # noqa: BLE001 -- fall back to importing the whole file
            statements, why = None, f"running only what `{name}` reads failed ({type(exc).__name__}: {exc})"
            module.__dict__.clear()
            module.__file__ = os.path.abspath(path)
        else:
            if ran:
                lines = ", ".join(str(s.lineno) for s in ran)
                print(f"note: ran line{'s' if len(ran) > 1 else ''} {lines} of {path} (values `{name}` reads); "
                      "the rest of the file was not run", file=sys.stderr)
    if statements is None:
        print(f"note: importing {path} runs its top-level code: {why}", file=sys.stderr)
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        try:
            with contextlib.redirect_stdout(sys.stderr):  # what the file prints is not the generated code
                module_spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 -- the user's module failed to import: say so in one line
            raise UsageError(f"cannot import {path}: {type(exc).__name__}: {exc}") from None
    func = getattr(module, name, None)
    if func is None or not callable(func):
        raise UsageError(f"{path} has no function {name!r}")
    return func


def _bound_names(stmt) -> set:
    """The module names a top-level statement binds (or changes: `cfg.x = 1` changes `cfg`)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    names = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = node
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                names.add(root.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _reads(stmt, tables: dict) -> set:
    """The module names a top-level statement reads (for a def or class: its global names, nested
    functions included, from the symbol table)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return set()
    table = tables.get((stmt.name, stmt.lineno)) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef)) else None
    names = set()
    if table is not None:
        stack = [table]
        while stack:
            t = stack.pop()
            names |= {s.get_name() for s in t.get_symbols() if s.is_global() or (t.get_type() == "class"
                                                                                 and s.is_referenced())}
            stack.extend(t.get_children())
        outside = list(getattr(stmt, "decorator_list", [])) + list(getattr(stmt, "bases", []))
        if not isinstance(stmt, ast.ClassDef):
            outside += stmt.args.defaults + [d for d in stmt.args.kw_defaults if d is not None]
        for node in outside:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        return names
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _declares_only(stmt) -> bool:
    """Imports, definitions and assignments of literals to names: statements that compute nothing."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None \
            and all(isinstance(t, ast.Name) for t in targets):
        try:
            ast.literal_eval(stmt.value)
            return True
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
    return False


def _is_main_guard(stmt) -> bool:
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _slice(tree, name: str, text: str, path: str) -> tuple:
    """(the top-level statements that define FUNC and what it reads, in file order; None) when FUNC
    is a top-level `def` whose globals are bound by imports, definitions and plain assignments
    only. (None, why the file must be imported) otherwise; (None, None) when nothing binds FUNC.
    A training loop, a `print` or any other statement FUNC does not read is never run."""
    import symtable

    body = [s for s in tree.body if not _is_main_guard(s)
            and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    binders: dict = {}
    for index, stmt in enumerate(body):
        for bound in _bound_names(stmt):
            binders.setdefault(bound, []).append(index)
    target = [i for i, s in enumerate(body) if isinstance(s, ast.FunctionDef) and s.name == name]
    if name not in binders:
        return None, None
    if not target or binders[name] != target[-1:]:
        return None, f"`{name}` is not (only) a top-level `def` there"
    try:
        module_table = symtable.symtable(text, path, "exec")
    except SyntaxError as exc:
        return None, f"its symbol table cannot be read ({exc})"
    tables = {(t.get_name(), t.get_lineno()): t for t in module_table.get_children()}
    star = next((s for s in body if isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names)), None)
    if star is not None:
        return None, f"line {star.lineno} imports `*`, so any name may come from there"
    keep = {i for i, s in enumerate(body) if isinstance(s, ast.ImportFrom) and s.module == "__future__"}
    todo, seen = [name], set()
    while todo:
        wanted = todo.pop()
        if wanted in seen:
            continue
        seen.add(wanted)
        for i in binders.get(wanted, []):
            stmt = body[i]
            if not isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                     ast.Assign, ast.AnnAssign, ast.AugAssign)):
                return None, f"`{wanted}`, which `{name}` reads, is set by the statement at line {stmt.lineno}"
            keep.add(i)
            todo.extend(n for n in _reads(stmt, tables) if n not in seen)  # (unbound names: builtins)
    return [body[i] for i in sorted(keep)], None


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
    forward = "\n".join(f"  {p.name:<10} {p.summary}" for p in FORWARD_PASSES[STAGES.index("globals") + 1:])
    show = sub.add_parser("show", help="print the generated gradient of a function in a file",
                          formatter_class=argparse.RawDescriptionHelpFormatter,
                          epilog=f"the passes, in order (--stage NAME prints the text after one):\n{passes}\n\n"
                                 f"with --jvp (forward mode), the passes after globals are:\n{forward}")
    show.add_argument("target", metavar="FILE.py:FUNC")
    show.add_argument("--wrt", default=None,
                      help="comma-separated argument positions (default 0; with --jvp, every argument)")
    show.add_argument("--ir", action="store_true", help=f"print the IR as differentiated (--stage {IR_STAGE})")
    every = STAGES + tuple(name for name in FORWARD_STAGES if name not in STAGES)
    show.add_argument("--stage", choices=every, metavar="NAME", help="print the output of this pass (below)")
    mode = show.add_mutually_exclusive_group()
    mode.add_argument("--vjp", action="store_true", help="print the split vjp/pullback form")
    mode.add_argument("--jvp", action="store_true", help="print the forward-mode (jvp) source")
    sub.add_parser("clear-cache", help="empty the on-disk cache of generated gradients")
    args = parser.parse_args(argv)
    if args.command == "clear-cache":
        from . import diskcache
        print(f"removed {diskcache.clear()} cached gradient modules from {diskcache.directory()}")
        return 0
    try:
        func = _load(args.target)
        n = len(inspect.signature(inspect.unwrap(func)).parameters)
        if args.wrt is None:
            wrt = tuple(range(n)) if args.jvp else (0,)
        else:
            wrt = _wrt(args.wrt, func)
        ir_stage = FORWARD_STAGES[FORWARD_STAGES.index("activity") - 1] if args.jvp else IR_STAGE
        stage = ir_stage if args.ir else (args.stage or FINAL_TEXT)
        if args.jvp and stage not in FORWARD_STAGES:
            raise UsageError(f"--stage {stage} is a pass of reverse mode; with --jvp the passes are "
                             f"{', '.join(FORWARD_STAGES)}")
        mode = "jvp" if args.jvp else vjp_mode(func) if args.vjp else "grad"
        text = compile_gradient(inspect.unwrap(func), wrt, ("num",) * n, mode, stage=stage)
    except (UsageError, AdjointCompilerError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {first}", file=sys.stderr)
        return 2
    print(text.rstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

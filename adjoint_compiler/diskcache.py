"""The on-disk cache of generated gradient modules, so a second process pays no compilation.

An entry is keyed by the compiler's own code, the function's source, `wrt`, the argument kinds and
the mode. It holds the generated source, its line map and a recipe for its namespace (which name is
looked up in which function's globals or closure). It is used only if every function it was built
from (the differentiated one and those inlined into it) still has the same source. Set
ADJOINT_COMPILER_CACHE=0 to disable it, or to a directory to move it; `clear()` empties it.

    ~/.cache/adjoint_compiler/<sha256>.pickle
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import pickle
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def directory() -> Path | None:
    setting = os.environ.get("ADJOINT_COMPILER_CACHE", "")
    if setting.lower() in ("0", "off", "false", "no"):
        return None
    return Path(setting) if setting else Path.home() / ".cache" / "adjoint_compiler"


def _compiler_digest() -> str:
    h = hashlib.sha256()
    for folder in (_HERE, _HERE.parent / "rules", _HERE / "rules"):
        if folder.is_dir():
            for path in sorted(folder.glob("*.py")):
                h.update(path.read_bytes())
    return h.hexdigest()


_DIGEST = None


def _source_hash(func) -> str | None:
    try:
        return hashlib.sha256(inspect.getsource(func).encode()).hexdigest()
    except (OSError, TypeError):
        return None


def _locate(func):
    """(module, qualname) of a module-level function, or None."""
    if "<locals>" in func.__qualname__ or "<lambda>" in func.__qualname__:
        return None
    return func.__module__, func.__qualname__


def _resolve(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return inspect.unwrap(obj)


def _key(func, wrt, kinds, mode) -> str | None:
    global _DIGEST
    source = _source_hash(func)
    if source is None or _locate(func) is None:
        return None
    _DIGEST = _DIGEST or _compiler_digest()
    from .registry import USER_RULES
    key = (_DIGEST, source, _locate(func), wrt, kinds, mode, sorted(USER_RULES))
    return hashlib.sha256(repr(key).encode()).hexdigest()


def _lookup(func, name):
    if isinstance(name, tuple):  # ("default", param)
        return inspect.signature(func).parameters[name[1]].default
    closure = inspect.getclosurevars(func)
    for scope in (closure.nonlocals, func.__globals__, closure.builtins):
        if name in scope:
            return scope[name]
    import builtins
    return getattr(builtins, name)


def load(func, wrt, kinds, mode):
    """The cached Compiled for these arguments, or None."""
    folder = directory()
    key = folder and _key(func, wrt, kinds, mode)
    path = key and folder / f"{key}.pickle"
    if not path or not path.exists():
        return None
    try:
        entry = pickle.loads(path.read_bytes())
        functions = []
        for module, qualname, digest in entry["functions"]:
            f = _resolve(module, qualname)
            if _source_hash(f) != digest:
                return None
            functions.append(f)
        namespace = {root: _lookup(functions[index], name) for root, (index, name) in entry["recipe"].items()}
    except Exception:  # noqa: BLE001 -- a stale or unreadable entry is a miss, never an error
        return None
    from .pipeline import finish
    return finish(entry["source"], entry["filename"], namespace, entry["name"], mode, entry["line_locs"])


def store(func, wrt, kinds, mode, compiled) -> None:
    folder = directory()
    key = folder and _key(func, wrt, kinds, mode)
    if not key or compiled.ir is None:
        return
    functions, index, recipe = [], {}, {}

    def register(f) -> bool:
        """Record a function the entry depends on; False if it cannot be found again by name."""
        if f not in index:
            place = _locate(f)
            if place is None:
                return False
            index[f] = len(functions)
            functions.append((*place, _source_hash(f)))
        return True

    for root, origin in compiled.origins.items():
        if not origin or not register(inspect.unwrap(origin[0])):
            return
        recipe[root] = (index[inspect.unwrap(origin[0])], origin[1])
    for f in [inspect.unwrap(func)] + list(compiled.inlined):
        if not register(f):
            return
    entry = {"source": compiled.source, "filename": compiled.filename, "name": compiled.ir.name,
             "line_locs": compiled.line_locs, "functions": functions, "recipe": recipe}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{key}.{os.getpid()}.tmp"
        tmp.write_bytes(pickle.dumps(entry))
        os.replace(tmp, folder / f"{key}.pickle")
    except OSError:  # a read-only or full disk: the entry is simply not kept
        return


def clear() -> int:
    """Remove every cached module; returns how many were removed."""
    folder = directory()
    if folder is None or not folder.is_dir():
        return 0
    count = 0
    for path in folder.glob("*.pickle"):
        path.unlink(missing_ok=True)
        count += 1
    return count

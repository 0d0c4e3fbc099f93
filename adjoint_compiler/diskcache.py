"""The on-disk cache of generated gradient modules, so a second process pays no compilation.

An entry is keyed by the compiler's own code, the function's module and name, its source with
the file and first line it is at (the generated code's header, `# L<n>` comments and errors name
them), `wrt`, the argument kinds, the mode and the text of every user rule (`@adjoint` bodies,
`nondifferentiable`). It holds the generated source, its line map and the portable form of its
guard (`guard.py`): every name the compilation looked up (with a fingerprint of its value), the
attributes read through them, and the source (with its place) and defaults of every function
inlined, each named by how it was reached. On load the guard is replayed; any difference is a miss. The namespace of the generated
code is rebuilt from the values the replay found. Set ADJOINT_COMPILER_CACHE=0 to disable it, or
to a directory to move it; `clear()` empties it.

    ~/.cache/adjoint_compiler/<sha256>.pickle
"""
from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import types
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


def _locate(func):
    """(module, qualname) of a module-level function, or None."""
    if not isinstance(func, types.FunctionType):
        return None
    if "<locals>" in func.__qualname__ or "<lambda>" in func.__qualname__:
        return None
    return func.__module__, func.__qualname__


def _key(func, wrt, kinds, mode) -> str | None:
    global _DIGEST
    from .guard import source_digest
    from .registry import USER_RULES

    if _locate(func) is None:
        return None
    source = source_digest(func)
    if source is None:
        return None
    _DIGEST = _DIGEST or _compiler_digest()
    key = (_DIGEST, source, _locate(func), wrt, kinds, mode, list(USER_RULES))
    return hashlib.sha256(repr(key).encode()).hexdigest()


def load(func, wrt, kinds, mode, generation):
    """The cached Compiled for these arguments (with its guard), or None."""
    from . import guard

    folder = directory()
    key = folder and _key(func, wrt, kinds, mode)
    path = key and folder / f"{key}.pickle"
    if not path or not path.exists():
        return None
    try:
        entry = pickle.loads(path.read_bytes())
        replayed = guard.from_portable(func, entry["steps"], generation)
        if replayed is None:
            return None
        checks, found = replayed
        namespace = {}
        for root, (kind, where, name) in entry["recipe"].items():
            if kind == "step":
                namespace[root] = found[where]
            else:  # ("default", function step or 0, parameter)
                f = func if where is None else found[where]
                namespace[root] = inspect.signature(f).parameters[name].default
        from .pipeline import finish
        compiled = finish(entry["source"], entry["filename"], namespace, entry["name"], mode, entry["line_locs"])
    except Exception:  # noqa: BLE001 -- a stale or unreadable entry is a miss, never an error
        return None
    compiled.guard = checks
    compiled.written = entry["written"]
    compiled.outputs = entry.get("outputs", ())
    compiled.dims = entry.get("dims")
    compiled.changed_defaults = entry.get("changed_defaults", ())
    return compiled


def store(func, wrt, kinds, mode, compiled) -> None:
    """Keep `compiled` on disk when every value it baked in can be found again by name."""
    folder = directory()
    key = folder and _key(func, wrt, kinds, mode)
    if not key or compiled.ir is None or compiled.guard is None:
        return
    portable = compiled.guard.portable
    if portable is None:
        return
    recipe = {}
    reached_by = portable["reached_by"]
    for root, origin in compiled.origins.items():
        if not origin:
            return
        f, name = origin
        if isinstance(name, tuple):  # ("default", parameter)
            if f not in reached_by:
                return
            recipe[root] = ("default", reached_by[f], name[1])
        elif (f, name) in portable["by_name"]:
            recipe[root] = ("step", portable["by_name"][(f, name)], None)
        else:
            return
    entry = {"source": compiled.source, "filename": compiled.filename, "name": compiled.ir.name,
             "line_locs": compiled.line_locs, "steps": portable["steps"], "recipe": recipe,
             "written": compiled.written, "outputs": compiled.outputs, "dims": compiled.dims,
             "changed_defaults": compiled.changed_defaults}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{key}.{os.getpid()}.tmp"
        tmp.write_bytes(pickle.dumps(entry))
        os.replace(tmp, folder / f"{key}.pickle")
    except (OSError, pickle.PicklingError):  # a read-only or full disk: the entry is simply not kept
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

"""Loader: compile generated source into a function, registered with `linecache` so that
tracebacks, `inspect.getsource` and `pdb` show the generated lines.

    load(src, "<adjoint f_grad>", {"W": W})  ->  the module's namespace (holding `f_grad`)
"""
from __future__ import annotations

import linecache


def load(source: str, filename: str, namespace: dict) -> dict:
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    module_globals = dict(namespace)
    module_globals["__name__"] = "adjoint_compiler.generated"
    exec(code, module_globals)  # noqa: S102 -- running the generated module is the loader's job
    return module_globals

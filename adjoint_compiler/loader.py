"""Loader: compile generated source into a function, registered with `linecache` so that
tracebacks, `inspect.getsource` and `pdb` show the generated lines.

    load(src, "<adjoint f_grad>", {"W": W}, "f_grad")  ->  the function object
"""
from __future__ import annotations

import linecache


def load(source: str, filename: str, namespace: dict, name: str):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    module_globals = dict(namespace)
    module_globals["__name__"] = "adjoint_compiler.generated"
    exec(code, module_globals)
    return module_globals[name]

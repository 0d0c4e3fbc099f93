"""The runtime is one namespace (`rt.<name>`) gathered from several modules by `import *`: a public
helper defined in two of them would silently shadow one with the other (this happened to
`field_tangent` when two branches met)."""
import ast
import collections
import pathlib

import adjoint_compiler

PACKAGE = pathlib.Path(adjoint_compiler.__file__).parent
MODULES = ["runtime.py", "runtime_rules.py", "runtime_tangents.py", "runtime_tangents_more.py",
           "runtime_numpy_more.py"]


def test_no_public_runtime_helper_is_defined_twice():
    where = collections.defaultdict(list)
    for name in MODULES:
        tree = ast.parse((PACKAGE / name).read_text())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                where[node.name].append(name)
    twice = {k: v for k, v in where.items() if len(v) > 1}
    assert not twice, twice

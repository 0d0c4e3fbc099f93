"""`rt` is one namespace: the core helpers and the rule templates' helpers must not shadow each other."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "adjoint_compiler"


def top_level_names(path):
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_runtime_and_rule_helpers_do_not_clash():
    clash = top_level_names(PACKAGE / "runtime.py") & top_level_names(PACKAGE / "runtime_rules.py")
    assert not clash, f"defined in both runtime.py and runtime_rules.py: {sorted(clash)}"


def test_generated_code_helpers_exist():
    from adjoint_compiler import runtime as rt
    for name in ("copyto", "copyto_items", "save_slots", "own", "snapshot", "shape_of", "add_at",
                 "zero_slots", "written_adjoint", "overwritten_adjoint", "sum_to_scalar"):
        assert callable(getattr(rt, name)), name

"""Built-in adjoint rules, one module per family, each a table of templates (see registry.py)."""

"""The mapping rules of tools/build_rows.py, one module per staged file (the rules are in its docstring)."""

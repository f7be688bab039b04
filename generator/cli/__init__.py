"""The command line, a thin layer over the library: one module per command group.

`main` is the ``kb`` and ``python -m generator`` entry point; `main_verify` is
``scripts/verify_code_refs.py``. Shared helpers (exit codes, progress line, the manifest) live
in `common`.
"""

from generator.cli.main import build_parser, main, main_verify

__all__ = ["build_parser", "main", "main_verify"]

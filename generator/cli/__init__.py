"""The command line, a thin layer over the library: one module per command group.

`run` is the ``kb`` and ``python -m generator`` process, `main` its command line; `main_verify` is
``scripts/verify_code_refs.py``. Shared helpers (exit codes, progress line, the manifest) live
in `common`.
"""

from generator.cli.main import build_parser, main, main_verify, run

__all__ = ["build_parser", "main", "main_verify", "run"]

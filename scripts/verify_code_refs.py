#!/usr/bin/env python3
"""Check every code reference and cross-link in Markdown pages against pinned commits.

    python scripts/verify_code_refs.py docs/ [--format text|json|github] [--strict]

A thin entry point over the library (`generator.verify`); `--help` lists every option.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.cli import main_verify

if __name__ == "__main__":
    sys.exit(main_verify(prog="verify_code_refs.py"))

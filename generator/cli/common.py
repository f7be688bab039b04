"""What every command shares: exit codes, the argument parser's error exit, the terminal
progress line, and finding the manifest."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from generator.files import shown_path
from generator.upstream.manifest import MANIFEST_NAME, ConfigError, Manifest, find_manifest
from generator.upstream.manifest import load_manifest as _load_manifest

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_INTERNAL = 3
"""A bug: the command failed on something no input should cause (see `cli.main`)."""
EXIT_FAILED = EXIT_FINDINGS
"""A command that talks to GitHub exits 1 when GitHub fails, as a check exits 1 on findings."""


class Parser(argparse.ArgumentParser):
    """An argument parser that exits with `EXIT_USAGE` on a usage error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        hint = ""
        if message.startswith("unrecognized arguments:") and _VERBOSE.search(message):
            hint = "  hint: -v goes before the command: kb -v COMMAND ...\n"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n{hint}")


_VERBOSE = re.compile(r"(?:^|\s)(?:-v+|--verbose)(?=\s|$)")
"""``-v``, ``-vv`` or ``--verbose`` among arguments a command does not take."""


def interactive(stream: object) -> bool:
    """A terminal a person watches (never in CI)."""
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("CI")


def use_colour(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return interactive(sys.stdout)


class ProgressLine:
    """A single self-overwriting status line on stderr, only on an interactive terminal."""

    def __init__(self) -> None:
        self.enabled = interactive(sys.stderr)
        self._shown = False

    def show(self, text: str) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[2K" + text[:120])
            sys.stderr.flush()
            self._shown = True

    def done(self) -> None:
        if self._shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
            self._shown = False


def manifest_path_of(path: Path | None) -> Path:
    """``path``, or the nearest manifest above the working directory."""
    found = path or find_manifest(Path.cwd())
    if found is None:
        raise ConfigError(
            f"no {MANIFEST_NAME} in {Path.cwd()} or its parents",
            hint="run from the knowledge base, or pass --manifest PATH; kb init DIR starts one",
        )
    return found


def load_manifest(path: Path | None) -> Manifest:
    """The manifest at ``path``, or the nearest one above the working directory."""
    return _load_manifest(manifest_path_of(path))


def shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it, as a user typed it."""
    return shown_path(path)

"""Command-line wiring of the page generators (``pr``, ...), kept apart from generator.cli."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the generator commands on the main parser's subcommands."""


def handlers() -> dict[str, Callable[[argparse.Namespace], int]]:
    """Command name -> handler, for generator.cli's dispatch."""
    return {}

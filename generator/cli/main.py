"""The command line's entry points: one parser over every command group, and the dispatch.

Exit status: 0 all is well, 1 findings with errors (or warnings under ``--strict``), 2 usage or
configuration problems.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from generator import __version__
from generator.cli import demo, generate, ingest, pin, specs, sync, upstreams, verify
from generator.cli.common import EXIT_USAGE, Parser
from generator.upstream.manifest import ConfigError

HANDLERS = {
    **verify.HANDLERS,
    **upstreams.HANDLERS,
    **sync.HANDLERS,
    **demo.HANDLERS,
    **specs.HANDLERS,
    **generate.HANDLERS,
    **ingest.HANDLERS,
    **pin.HANDLERS,
}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m generator",
        description="Generate and verify a code-analysis knowledge base whose code references "
        "are pinned to upstream commits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    verify.add_commands(commands)
    upstreams.add_commands(commands)
    sync.add_commands(commands)
    generate.add_source_command(commands)
    demo.add_commands(commands)  # demo build|record-github|pages
    specs.add_commands(commands)  # specs validate|board, new spec|page
    generate.add_commands(commands)  # pr, review
    ingest.add_commands(commands)
    pin.add_commands(commands)  # pin suggest
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return _dispatch(args)


def main_verify(argv: Sequence[str] | None = None, prog: str = "verify_code_refs.py") -> int:
    args = verify.verify_parser(prog).parse_args(argv)
    args.command, args.verbose = "verify", 0
    return _dispatch(args)


def _dispatch(args: argparse.Namespace) -> int:
    level = logging.WARNING - 10 * min(getattr(args, "verbose", 0), 2)
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s")
    try:
        return HANDLERS[args.command](args)
    except ConfigError as error:
        print(f"error: {error.render()}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, and keep Python from complaining
        # again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141

"""The command line's entry points: one parser over every command group, and the dispatch.

Exit status: 0 all is well, 1 findings with errors (or warnings under ``--strict``), 2 usage or
configuration problems, 3 an internal error (a bug: no input should cause one), 130 interrupted,
141 the reader of the output went away.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn

from generator import __version__
from generator.cli import demo, generate, held, ingest, init, pin, specs, sync, upstreams, verify
from generator.cli.common import EXIT_INTERNAL, EXIT_USAGE, Parser
from generator.model import printable
from generator.upstream.gitstore import RepositoryUnavailable
from generator.upstream.manifest import ConfigError

HANDLERS = {
    **init.HANDLERS,
    **verify.HANDLERS,
    **upstreams.HANDLERS,
    **sync.HANDLERS,
    **held.HANDLERS,
    **demo.HANDLERS,
    **specs.HANDLERS,
    **generate.HANDLERS,
    **ingest.HANDLERS,
    **pin.HANDLERS,
}


ParserAdder = Callable[["argparse._SubParsersAction[Parser]"], None]

COMMAND_PARSERS: tuple[tuple[ParserAdder, tuple[str, ...]], ...] = (
    (init.add_commands, ("init",)),
    (verify.add_commands, ("verify",)),
    (upstreams.add_commands, ("upstreams",)),
    (sync.add_commands, ("sync",)),
    (held.add_commands, ("held",)),  # held list|accept
    (generate.add_source_command, ("source",)),
    (demo.add_commands, ("demo",)),  # demo build|record-github|pages
    (specs.add_commands, ("specs", "new")),  # specs validate|board, new spec|page
    (generate.add_commands, ("pr", "review")),
    (ingest.add_commands, ("ingest",)),
    (pin.add_commands, ("pin",)),  # pin suggest
)
"""Each function that adds commands' parsers, with the commands it adds, in the order of
``kb --help``."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``command``, of that command only (see `main`)."""
    parser = Parser(
        prog="kb",
        description="Generate and verify a code-analysis knowledge base whose code references "
        "are pinned to upstream commits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    for add_parsers, names in COMMAND_PARSERS:
        if command is None or command in names:
            add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_named(arguments))
    args, unknown = parser.parse_known_args(arguments)
    if unknown:
        command = _command_parser(parser, args)
        command.error(_unrecognized(command, unknown))
    return _dispatch(args)


def _command_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the command ``args`` ran (``upstreams fetch``'s, not ``kb``'s), whose
    usage an error in its arguments shows."""
    while True:
        chosen = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(args, action.dest, None) or "")
        if chosen is None:
            return parser
        parser = chosen


def _unrecognized(command: argparse.ArgumentParser, unknown: list[str]) -> str:
    """argparse's message for arguments a command does not take, with the option meant when
    one is close (``--formt``: ``--format``)."""
    import difflib  # (only on this error: not every run's start-up)

    message = f"unrecognized arguments: {' '.join(unknown)}"
    options = [
        option
        for action in command._actions
        for option in action.option_strings
        if option.startswith("--")
    ]
    for argument in unknown:
        written = argument.split("=", 1)[0]
        if written.startswith("--"):
            close = difflib.get_close_matches(written, options, n=1, cutoff=0.7)
            if close:
                return f"{message} (did you mean {close[0]}?)"
    return message


def _command_named(arguments: Sequence[str]) -> str | None:
    """The command the arguments run, when the parser need know no other: building every
    command's parser, and importing what some of them need, took a tenth of ``kb verify`` on
    one page (a pre-commit hook's run). None, for every parser, when the arguments ask for the
    list of commands (``--help`` before any) or name none that exists, so that the help and the
    error list them all."""
    for argument in arguments:
        if not argument.startswith("-"):
            return argument if argument in HANDLERS else None
        if not _is_main_option(argument):
            return None  # -h, or what argparse may take for the command (`-`, `--`, `-1`)
    return None


def _is_main_option(argument: str) -> bool:
    """Whether ``argument`` is one of the options before the command other than help: ``-v``
    (``-vv``...), ``--verbose``, ``--version``, or a prefix argparse may take for one of them."""
    if argument.startswith("--"):
        return len(argument) > 2 and any(
            option.startswith(argument) for option in ("--verbose", "--version")
        )
    return len(argument) > 1 and argument.strip("-v") == ""


def run() -> NoReturn:
    """The process behind ``kb`` and ``python -m generator``: `main`, then an exit that skips
    the interpreter's teardown. A run keeps what it read (trees, blobs, pages) to its end, and
    freeing it object by object took 50-60 ms of a 0.85 s `verify`, for nothing anyone reads.
    Everything else the teardown would do for this program is done here: flush the output."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (`... | head`), as `_dispatch` says it
        code = 141
    logging.shutdown()
    os._exit(code)


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
    except RepositoryUnavailable as error:
        # An object missing from a clone, or its git process gone: the clone, not a bug.
        print(
            f"error: {printable(str(error))}\n"
            "  hint: the clone is damaged or incomplete (a partial or shallow clone lacks "
            "objects): delete it and run `kb upstreams fetch` again",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, and keep Python from complaining
        # again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        return _internal_error(error)


def _internal_error(error: Exception) -> int:
    """Say that the command failed on a bug, keep the traceback in a file for the report, and
    exit with `EXIT_INTERNAL`: a distinct status, so that a script tells a crash from findings."""
    # Imported here, on the way out: every command's start-up would pay for them otherwise.
    import tempfile

    from generator.github.client import scrub_tokens

    details = scrub_tokens("".join(traceback.format_exception(error)))  # it may quote a request
    where = None
    try:
        descriptor, name = tempfile.mkstemp(prefix="kb-generator-crash-", suffix=".txt")
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(f"kb-generator {__version__}\ncommand: {printable(' '.join(sys.argv))}\n\n")
            file.write(details)
        where = name
    except OSError:
        pass
    logging.getLogger(__name__).debug("%s", details)
    print(
        f"internal error: {type(error).__name__}: {printable(str(error))[:300]}\n"
        "This is a bug in kb-generator, not a problem with your input. Please report it to "
        "the kb-generator issue tracker with the command you ran"
        + (f" and the traceback kept in {where}" if where else " and its output with -vv")
        + ".",
        file=sys.stderr,
    )
    return EXIT_INTERNAL

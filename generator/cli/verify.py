"""``verify`` (and ``scripts/verify_code_refs.py``): check every code reference and link."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.checks import CHECKS
from generator.cli.common import EXIT_OK, Parser, ProgressLine, use_colour
from generator.upstream.manifest import MANIFEST_NAME, ConfigError

_LAST_RUN: list[object] = []
"""The last run's verifier and report, kept with all they hold: `generator.cli.run` then ends
the process without freeing them object by object, which took 10-15 ms of a 0.37 s run over 300
pages."""


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        default=[],
        metavar="PATH",
        help="pages or directories of pages to check (default: the knowledge base's docs "
        "directory, mkdocs.yml's docs_dir)",
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        metavar="FILE",
        help=f"upstream manifest (default: the nearest {MANIFEST_NAME})",
    )
    parser.add_argument(
        "--docs-root",
        type=Path,
        metavar="DIR",
        help="directory links are resolved in (default: mkdocs.yml's docs_dir)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "github"),
        default="text",
        help="output format (default: text)",
    )
    parser.add_argument(
        "--list-refs",
        action="store_true",
        help="also list every reference found, not only broken ones: where each leads and "
        'its status (in text, one a line, before the findings; in JSON, under "refs")',
    )
    parser.add_argument("--strict", action="store_true", help="fail on warnings too")
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="verify every page afresh, and leave the verification cache as it is (default: "
        "take unchanged pages from it; it is kept in the upstreams' cache_dir)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CHECK",
        help="skip a check by id (repeatable); see --list-checks",
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="rewrite each reference whose evidence proves where it points (the code it quotes "
        "found at exactly one other place), in the style it was written, and print each "
        "rewrite; nothing fuzzy is rewritten",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="with --fix, print the rewrites but write nothing"
    )
    parser.add_argument(
        "--list-checks", action="store_true", help="print every check id with its severity and exit"
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output (default: only on a terminal)",
    )


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    verify = commands.add_parser(
        "verify",
        help="check every code reference and cross-link against pinned commits",
        description="Check code references (file.py:10-20, permalinks) and relative links in "
        "Markdown pages against the upstreams' pinned commits.",
    )
    add_verify_arguments(verify)


def verify_parser(prog: str) -> argparse.ArgumentParser:
    """The parser of ``scripts/verify_code_refs.py``: the ``verify`` command on its own."""
    parser = Parser(
        prog=prog,
        description="Check code references (file.py:10-20, permalinks) and relative links in "
        "Markdown pages against the upstreams' pinned commits. Exit status: 0 clean, 1 errors "
        "(or warnings with --strict), 2 usage or configuration problem.",
    )
    add_verify_arguments(parser)
    return parser


def run_verify(args: argparse.Namespace) -> int:
    from generator.verification.pipeline import Report, default_workers, open_verifier
    from generator.verification.report import (
        format_fixes,
        format_github,
        format_refs,
        format_text,
        write_json,
    )

    if args.list_checks:
        for check in CHECKS.values():
            print(f"{check.id:22} {check.severity!s:8} {check.summary}")
        return EXIT_OK
    if args.dry_run and not args.fix:
        raise ConfigError(
            "--dry-run goes with --fix", hint="add --fix to see what it would rewrite"
        )
    if args.list_refs and args.format == "github":
        raise ConfigError(
            "--list-refs lists references in text or JSON, not as GitHub annotations",
            hint="use --format text or --format json with --list-refs",
        )
    progress = ProgressLine()

    def on_progress(done: int, total: int) -> None:
        if total >= 50 and (done % 25 == 0 or done == total):
            progress.show(f"verifying pages: {done}/{total}")

    def run() -> Report:
        _LAST_RUN.clear()  # (a second run, after --fix, need not hold the first one's reads)
        try:
            verifier, files = open_verifier(
                args.paths,
                manifest_path=args.manifest,
                docs_root=args.docs_root,
                ignore=args.ignore,
                cache=args.cache,
            )
            with verifier:
                report = verifier.verify(files, on_progress, default_workers())
            _LAST_RUN[:] = [verifier, report]
            return report
        finally:
            progress.done()

    report = run()
    fixes = None
    if args.fix:
        from generator.verification.fix import fix_references

        fixes = fix_references(report, dry_run=args.dry_run)
        if args.format == "text":
            sys.stdout.write(format_fixes(fixes))
        if fixes.pages_written:
            # What the rewritten pages say now: a rewrite settles more than the finding that
            # proved it (the old range past the end of the file, a symbol not in it), and the
            # exit status is the fixed pages'. The unchanged pages come from the cache.
            report = run()
    if args.format == "json":
        write_json(report, sys.stdout, list_refs=args.list_refs, fixes=fixes)
    elif args.format == "github":
        sys.stdout.write(format_github(report))
    else:
        if args.list_refs:
            sys.stdout.write(format_refs(report))
        sys.stdout.write(format_text(report, colour=use_colour(args.color)))
    return report.exit_code(strict=args.strict)


HANDLERS = {"verify": run_verify}

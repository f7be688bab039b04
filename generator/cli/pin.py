"""``pin suggest``: which commit were these pages written against?"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from generator.cli.common import EXIT_FAILED, EXIT_OK, Parser, ProgressLine


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    pin = commands.add_parser("pin", help="find the commit pages were written against")
    actions = pin.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    suggest = actions.add_parser(
        "suggest",
        help="rank the upstream's commits by how well the pages' evidence lines up",
        description="Weigh every reference of the pages into one upstream (the code it "
        "quotes, the symbol it names, its range) at each state of the upstream's "
        "first-parent history (only commits that change a cited file change the score) and "
        "list the commits where the most references line up, best first. With --write, set "
        "the best one as the pin: the manifest's when the pages are all that rely on it, "
        "else each page's own. Exit status: 0 answered, 2 usage problem.",
    )
    suggest.add_argument("paths", nargs="+", metavar="PATH", help="pages or directories")
    suggest.add_argument("--upstream", metavar="NAME", help="the upstream (default: most cited)")
    suggest.add_argument("--since", metavar="DATE", help="only commits from DATE (YYYY-MM-DD)")
    suggest.add_argument("--until", metavar="DATE", help="only commits up to DATE (YYYY-MM-DD)")
    suggest.add_argument(
        "--limit", type=int, default=10, metavar="N", help="candidates to list (default: 10)"
    )
    suggest.add_argument("--format", choices=("text", "json"), default="text")
    suggest.add_argument(
        "--write", action="store_true", help="set the best candidate (its newest commit) as the pin"
    )
    suggest.add_argument("--manifest", type=Path, metavar="FILE", help="upstream manifest")


def run_pin(args: argparse.Namespace) -> int:
    from generator.verification.pin_suggest import suggest_pin
    from generator.verification.report import plural

    progress = ProgressLine()
    progress.show("weighing the pages' evidence along the history ...")
    try:
        suggestion = suggest_pin(
            args.paths,
            manifest_path=args.manifest,
            upstream=args.upstream,
            since=args.since,
            until=args.until,
            limit=args.limit,
            write=args.write,
        )
    finally:
        progress.done()
    if args.format == "json":
        sys.stdout.write(json.dumps(_json(suggestion), ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK if suggestion.not_written is None else EXIT_FAILED
    not_weighed = ""
    if suggestion.held:
        not_weighed += (
            f" ({plural(suggestion.held, 'reference')} sync holds at older commits not weighed)"
        )
    if suggestion.linked:
        not_weighed += (
            f" ({plural(suggestion.linked, 'reference')} naming commits of their own, as "
            "permalinks do, not weighed)"
        )
    print(
        f"{suggestion.upstream}: {plural(suggestion.refs, 'reference')} on "
        f"{plural(len(suggestion.pages), 'page')}, "
        f"pinned at {suggestion.pin[:7]}{not_weighed}"
    )
    header = (
        f"{'commit':9} {'date':10} {'up':>4} {'against':>7} {'unknown':>7} {'whole':>5}  subject"
    )
    print(header)
    for candidate in suggestion.candidates:
        span = (
            f" (+{candidate.commits - 1} to {candidate.last.sha[:7]})"
            if candidate.commits > 1
            else ""
        )
        mark = "  <- the pin" if candidate is suggestion.current else ""
        print(
            f"{candidate.commit.sha[:7]:9} {_date(candidate.commit.time):10} {candidate.up:>4} "
            f"{candidate.against:>7} {candidate.unknown:>7} {candidate.whole:>5}  "
            f"{candidate.commit.subject[:50]}{span}{mark}"
        )
    current = suggestion.current
    if current is not None and current not in suggestion.candidates:
        print(
            f"the pin {suggestion.pin[:7]} scores {current.up} up, {current.against} against, "
            f"{current.unknown} unknown"
        )
    if suggestion.written:
        best = suggestion.candidates[0]
        which = (
            f" (the newest of the first row's {best.commits} commits, which the evidence does not "
            "tell apart)"
            if best.commits > 1
            else ""
        )
        for written in suggestion.written:
            print(f"wrote the pin {best.last.sha[:7]}{which} into {written}")
    if args.write and not suggestion.written and suggestion.not_written is None:
        best = suggestion.candidates[0].last.sha
        print(f"nothing to write: the pages are already pinned to {best[:7]}, the best candidate")
    if suggestion.not_written is not None:
        print(f"error: no pin written: {suggestion.not_written}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _date(seconds: int) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d")


def _json(suggestion) -> dict:  # type: ignore[no-untyped-def]
    def candidate(c):  # type: ignore[no-untyped-def]
        return {
            "commit": c.commit.sha,
            "date": _date(c.commit.time),
            "subject": c.commit.subject,
            "last": c.last.sha,
            "commits": c.commits,
            "up": c.up,
            "against": c.against,
            "unknown": c.unknown,
            "whole": c.whole,
            "holds_pin": c is suggestion.current,
        }

    return {
        "version": 1,
        "upstream": suggestion.upstream,
        "pages": suggestion.pages,
        "refs": suggestion.refs,
        "held": suggestion.held,
        "linked": suggestion.linked,
        "pin": suggestion.pin,
        "candidates": [candidate(c) for c in suggestion.candidates],
        "current": candidate(suggestion.current) if suggestion.current else None,
        "written": suggestion.written,
        "not_written": suggestion.not_written,
    }


HANDLERS = {"pin": run_pin}

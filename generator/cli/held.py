"""``held``: list the references a sync left for review, and accept their candidates."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from generator.cli.common import EXIT_FINDINGS, EXIT_OK, Parser


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    held = commands.add_parser(
        "held",
        help="list the references a sync held for review, and accept their candidates",
        description="A sync holds a reference whose code it could not follow exactly at the old "
        "commit, with the reason and, when it found one, a candidate at the new commit "
        "(held_refs in the page's frontmatter). `list` shows them; `accept` rewrites each to its "
        "candidate, in the style it was written in, and drops its held_refs entry, so that it "
        "is checked at the page's pin again. Review the candidates first: they are where sync "
        "found what the code became, not proof that the page's words still hold.",
    )
    actions = held.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    listing = actions.add_parser(
        "list",
        help="list the held references, with their status and candidate",
        description="List every held reference of the pages (default: the knowledge base's "
        "docs): where it is, why it is held, at which commit, and its candidate. Exit status: "
        "0 none held, 1 some held.",
    )
    listing.add_argument("paths", nargs="*", metavar="PATH", help="pages or directories")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.add_argument("--manifest", type=Path, metavar="FILE", help="upstream manifest")
    accept = actions.add_parser(
        "accept",
        help="rewrite held references to their candidates and drop their held_refs entries",
        description="Rewrite the held references of the pages (default: the knowledge base's "
        "docs; --ref: only those written so) to their candidates, and drop their held_refs "
        "entries (a path written apart from its lines, in a table's path cell, moves with "
        "them). A reference with no candidate, or whose path is written once for it and "
        "another one accepted on its line, is left, with the reason, and so is an ambiguous "
        "one unless --ref names it. Exit status: 0 every one taken was accepted, 1 some were "
        "left (or --ref named none).",
    )
    accept.add_argument("paths", nargs="*", metavar="PATH", help="pages or directories")
    accept.add_argument(
        "--ref",
        action="append",
        default=[],
        metavar="TEXT",
        help="accept only the references written so (repeatable), e.g. --ref pkg/a.py:1-5",
    )
    accept.add_argument(
        "--to",
        metavar="PATH:START-END",
        help="with one --ref: rewrite it to this place instead of its candidate (another of "
        "an ambiguous one's places, which the drift report lists)",
    )
    accept.add_argument(
        "--dry-run", action="store_true", help="write nothing; print what would change"
    )
    accept.add_argument("--manifest", type=Path, metavar="FILE", help="upstream manifest")


def run_held(args: argparse.Namespace) -> int:
    from generator.sync.accept import accept_held, list_held
    from generator.verification.report import plural

    if args.action == "list":
        entries = list_held(args.paths, args.manifest)
        if args.format == "json":
            data = [
                {
                    "page": e.page,
                    "line": e.line,
                    "column": e.column,
                    "text": e.text,
                    "upstream": e.upstream,
                    "commit": e.commit,
                    "status": e.status,
                    "candidate": e.candidate,
                }
                for e in entries
            ]
            sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        else:
            for e in entries:
                candidate = f"candidate {e.candidate}" if e.candidate else "no candidate"
                print(
                    f"{e.page}:{e.line}:{e.column}: {e.text} ({e.status} at "
                    f"{e.upstream}@{e.commit[:7]}; {candidate})"
                )
            print(f"{plural(len(entries), 'reference')} held for review")
        return EXIT_FINDINGS if entries else EXIT_OK
    result = accept_held(
        args.paths, manifest_path=args.manifest, only=args.ref, to=args.to, dry_run=args.dry_run
    )
    verb = "would accept" if result.dry_run else "accepted"
    for accepted in result.accepted:
        e = accepted.entry
        print(f"{e.page}:{e.line}:{e.column}: {verb} {e.text} -> {accepted.after}")
    for left in result.left:
        e = left.entry
        print(f"{e.page}:{e.line}:{e.column}: left {e.text}: {left.reason}")
    for text in result.unmatched:
        print(f"no held reference is written as {text} (kb held list shows them)")
    written = "" if result.dry_run else f"; wrote {plural(len(result.pages_written), 'page')}"
    print(
        f"{verb} {plural(len(result.accepted), 'held reference')}, left "
        f"{len(result.left)}{written}"
        + ("" if result.dry_run or not result.accepted else "; run `kb verify` to check them")
    )
    return EXIT_FINDINGS if result.left or result.unmatched else EXIT_OK


HANDLERS = {"held": run_held}

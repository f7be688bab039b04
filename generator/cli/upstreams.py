"""``upstreams add|remove|fetch|list``: declare, clone or fetch the upstreams, and show them."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from generator.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    Parser,
    ProgressLine,
    load_manifest,
    manifest_path_of,
)


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    upstreams = commands.add_parser(
        "upstreams", help="declare, clone, fetch and list upstreams (upstreams.yaml)"
    )
    upstream_commands = upstreams.add_subparsers(
        dest="action", metavar="ACTION", parser_class=Parser
    )
    upstream_commands.required = True
    fetch = upstream_commands.add_parser("fetch", help="clone missing upstreams, fetch the others")
    fetch.add_argument("names", nargs="*", metavar="NAME", help="upstreams to fetch (default: all)")
    fetch.add_argument("--manifest", type=Path, metavar="FILE")
    listing = upstream_commands.add_parser("list", help="show each upstream, its pin and its clone")
    listing.add_argument("--manifest", type=Path, metavar="FILE")
    add = upstream_commands.add_parser(
        "add",
        help="declare an upstream in upstreams.yaml, clone it and pin it",
        description="Declare the upstream NAME at URL in the manifest (its comments and order "
        "kept), clone it into cache_dir/NAME with progress, and pin it: at the head of its "
        "branch, at --pin, or at the commit --pin-from finds the pages were written against "
        "(pin suggest). On any problem (a bad URL, a failed clone, an unknown commit) the "
        "manifest is left as it was. Exit status: 0 declared, 2 a problem.",
    )
    add.add_argument("name", metavar="NAME", help="its name (letters, digits, _ . -)")
    add.add_argument("url", metavar="URL", help="its clone URL, or a local path")
    add.add_argument("--branch", metavar="BRANCH", help="the branch it tracks (default: main)")
    add.add_argument(
        "--prefix",
        dest="prefixes",
        action="append",
        default=[],
        metavar="PREFIX",
        help="a path prefix that routes a reference to it, e.g. slime/ (repeatable; default: "
        "NAME/)",
    )
    add.add_argument(
        "--search-root",
        dest="search_roots",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory preferred when a bare file name matches several files (repeatable)",
    )
    add.add_argument("--web-url", metavar="URL", help="its browsable home, for links")
    pin = add.add_mutually_exclusive_group()
    pin.add_argument("--pin", metavar="COMMIT", help="pin this commit (a SHA, tag or branch)")
    pin.add_argument(
        "--pin-from",
        type=Path,
        metavar="PATH",
        help="pin the commit the pages under PATH were written against (their quoted code, "
        "symbols and ranges weighed along the branch's history, as pin suggest does)",
    )
    add.add_argument("--manifest", type=Path, metavar="FILE")
    remove = upstream_commands.add_parser(
        "remove",
        help="remove an upstream from upstreams.yaml (its clone is left in the cache)",
    )
    remove.add_argument("name", metavar="NAME")
    remove.add_argument("--manifest", type=Path, metavar="FILE")


def run_upstreams(args: argparse.Namespace) -> int:
    from generator.upstream.clones import fetch_upstreams

    if args.action == "add":
        return _add(args)
    if args.action == "remove":
        return _remove(args)
    manifest = load_manifest(args.manifest)
    if args.action == "list":
        if not manifest.upstreams:
            print(
                f"no upstream is declared in {manifest.display_path()}; "
                "declare one: kb upstreams add NAME URL"
            )
        for upstream in manifest.upstreams.values():
            assert upstream.clone_dir is not None
            cloned = "cloned" if upstream.clone_dir.exists() else "not cloned"
            print(
                f"{upstream.name:16} {upstream.branch:12} pin {upstream.pin[:12]}  "
                f"{cloned:10}  {upstream.url}"
            )
        return EXIT_OK
    progress = ProgressLine()
    try:
        results = fetch_upstreams(manifest, args.names, notify=progress.show)
    finally:
        progress.done()
    status = EXIT_OK
    for result in results:
        pin = "pin present" if result.has_pin else "PIN MISSING"
        print(
            f"{result.upstream}: {result.action}, {manifest.upstreams[result.upstream].branch} "
            f"at {result.head[:12]}, {pin}"
        )
        if not result.has_pin:
            status = EXIT_USAGE
            print(
                f"  the pinned commit {manifest.upstreams[result.upstream].pin} is not in the "
                "upstream; correct the pin in the manifest",
                file=sys.stderr,
            )
    return status


def _as_written_in(manifest_path: Path, url: str) -> str:
    """``url`` as the manifest must say it: a relative path to a local repository, typed
    from where the command runs, made relative to the manifest's directory (where the
    manifest's paths are read from); anything else as given."""
    if "://" in url or Path(url).is_absolute() or _SCP_LIKE.match(url):
        return url
    here = Path(url)
    if not here.exists():
        return url  # (cloning says what is wrong with it)
    return os.path.relpath(here.resolve(), manifest_path.resolve().parent)


_SCP_LIKE = re.compile(r"[^/:]+:")
"""``git@github.com:owner/repo``: a host before a colon, no local path."""


def _add(args: argparse.Namespace) -> int:
    from generator.upstream.declare import NewUpstream, add_upstream

    manifest_path = manifest_path_of(args.manifest)
    choose_pin = None
    if args.pin_from is not None:
        pages = args.pin_from

        def choose_pin(candidate: Path) -> str | None:
            from generator.verification.pin_suggest import suggest_pin

            progress.show(f"{args.name}: weighing the pages' evidence along the history ...")
            suggestion = suggest_pin([pages], manifest_path=candidate, upstream=args.name)
            return suggestion.candidates[0].last.sha if suggestion.candidates else None

    new = NewUpstream(
        args.name,
        _as_written_in(manifest_path, args.url),
        branch=args.branch,
        prefixes=args.prefixes,
        search_roots=args.search_roots,
        web_url=args.web_url,
        pin=args.pin,
    )
    progress = ProgressLine()
    try:
        added = add_upstream(manifest_path, new, notify=progress.show, choose_pin=choose_pin)
    finally:
        progress.done()
    how = {
        "head": f"the head of {added.branch}",
        "given": "the commit given",
        "chosen": f"the commit the pages under {args.pin_from} line up with best",
    }[added.pinned_by]
    print(
        f"{added.name}: {added.fetched.action}, pinned at {added.pin[:12]} ({how}); declared in "
        f"{manifest_path.name}"
    )
    if args.branch is None and added.branch != "main":
        print(f"  it has no branch main: it tracks {added.branch}, the branch its HEAD names")
    if added.pinned_by == "head" and args.pin_from is not None:
        print("  the pages cite nothing the history could weigh; the head is pinned")
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    from generator.upstream.declare import remove_upstream

    manifest_path = manifest_path_of(args.manifest)
    clone = remove_upstream(manifest_path, args.name)
    print(f"{args.name}: removed from {manifest_path.name}")
    if clone is not None:
        print(f"  its clone is left in {clone} (delete it to free the space)")
    return EXIT_OK


HANDLERS = {"upstreams": run_upstreams}

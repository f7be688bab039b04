"""``upstreams fetch|list``: clone or fetch the upstreams, and show them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.cli.common import EXIT_OK, EXIT_USAGE, Parser, ProgressLine, load_manifest


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    upstreams = commands.add_parser("upstreams", help="clone, fetch and list upstreams")
    upstream_commands = upstreams.add_subparsers(
        dest="action", metavar="ACTION", parser_class=Parser
    )
    upstream_commands.required = True
    fetch = upstream_commands.add_parser("fetch", help="clone missing upstreams, fetch the others")
    fetch.add_argument("names", nargs="*", metavar="NAME", help="upstreams to fetch (default: all)")
    fetch.add_argument("--manifest", type=Path, metavar="FILE")
    listing = upstream_commands.add_parser("list", help="show each upstream, its pin and its clone")
    listing.add_argument("--manifest", type=Path, metavar="FILE")


def run_upstreams(args: argparse.Namespace) -> int:
    from generator.upstream.clones import fetch_upstreams

    manifest = load_manifest(args.manifest)
    if args.action == "list":
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


HANDLERS = {"upstreams": run_upstreams}

"""``demo build|record-github|pages``: the embedded demo's upstreams, recording and pages."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Parser, load_manifest, shown
from generator.upstream.manifest import ConfigError


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    demo = commands.add_parser(
        "demo",
        help="the embedded demo: build its upstreams, record its GitHub answers, make its pages",
    )
    demo_commands = demo.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    demo_commands.required = True
    build = demo_commands.add_parser(
        "build", help="replay demo/upstreams/* into git repositories with fixed SHAs"
    )
    build.add_argument(
        "--dest",
        type=Path,
        default=Path(".cache/demo"),
        metavar="DIR",
        help="where to build the repositories (default: .cache/demo)",
    )
    record = demo_commands.add_parser(
        "record-github",
        help="re-record the demo's pull requests (demo/github) from the demo histories",
        description="For every demo/github/*.yaml, build its demo upstream's history afresh and "
        "write what GitHub would answer for that pull request (the pull, its files, its diff "
        "and its review comments) under demo/github/repos/, computed by git.",
    )
    pages = demo_commands.add_parser(
        "pages",
        help="regenerate the demo's PR deep dive and review pages from the recording",
        description="Serve demo/github/ on 127.0.0.1 as the GitHub API (GITHUB_API_URL) to "
        "the pr and review generators and write their pages into DOCS/analysis/, placed in "
        "the spec and learning paths the recording names, dated as it says. Needs the demo "
        "upstreams (make demo-upstreams). Refuses to replace a page without --force.",
    )
    for parser in (build, record, pages):
        parser.add_argument(
            "--source",
            type=Path,
            default=Path("demo"),
            metavar="DIR",
            help="demo directory (default: demo)",
        )
    record.add_argument(
        "--output", type=Path, metavar="DIR", help="where to write (default: SOURCE/github)"
    )
    pages.add_argument(
        "--docs",
        type=Path,
        metavar="DIR",
        help="the docs directory to write into (default: docs/ of the knowledge base)",
    )
    pages.add_argument("--force", action="store_true", help="replace existing pages")
    pages.add_argument("--manifest", type=Path, metavar="FILE", help="upstream manifest")


def run_demo(args: argparse.Namespace) -> int:
    if args.action != "build":
        return _run_recording_action(args)
    from generator.generate.demo import build_all

    if not (args.source / "upstreams").is_dir():
        raise ConfigError(
            f"{args.source}/upstreams: no such directory",
            hint="run from the repository root or pass --source",
        )
    for built in build_all(args.source, args.dest):
        tags = ", ".join(f"{tag} {sha[:12]}" for tag, sha in built.tags.items())
        print(f"{built.name}: {built.path} (head {built.head[:12]}{'; ' + tags if tags else ''})")
    return EXIT_OK


def _run_recording_action(args: argparse.Namespace) -> int:
    """``python -m generator demo record-github`` and ``demo pages``."""
    from generator.generate.demo import generate_demo_pages, record_demo_pulls
    from generator.generate.pr import PrError
    from generator.github.client import GitHubError

    if not (args.source / "github").is_dir():
        raise ConfigError(
            f"{args.source}/github: no such directory",
            hint="run from the repository root or pass --source",
        )
    if args.action == "record-github":
        for path in record_demo_pulls(args.source, args.output):
            sys.stdout.write(f"wrote {shown(path)}\n")
        return EXIT_OK
    manifest = load_manifest(args.manifest)
    docs = args.docs or manifest.root / "docs"
    try:
        written = generate_demo_pages(args.source, manifest, docs, force=args.force)
    except PrError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    except GitHubError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_FAILED
    for path in written:
        sys.stdout.write(f"wrote {shown(path)}\n")
    return EXIT_OK


HANDLERS = {"demo": run_demo}

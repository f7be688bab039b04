"""Command line: a thin layer over the library that parses arguments and formats results.

Exit status: 0 all is well, 1 findings with errors (or warnings under ``--strict``), 2 usage or
configuration problems.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from generator import __version__
from generator.checks import CHECKS
from generator.manifest import MANIFEST_NAME, ConfigError, find_manifest, load_manifest

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _interactive(stream: object) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("CI")


def _use_colour(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return _interactive(sys.stdout)


class _ProgressLine:
    """A single self-overwriting status line on stderr, only on an interactive terminal."""

    def __init__(self) -> None:
        self.enabled = _interactive(sys.stderr)
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


def _add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        default=["docs"],
        metavar="PATH",
        help="pages or directories of pages to check (default: docs)",
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
        help="with --format json, also list every reference found, not only broken ones",
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
        "--list-checks", action="store_true", help="print every check id with its severity and exit"
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output (default: only on a terminal)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m generator",
        description="Generate and verify a code-analysis knowledge base whose code references "
        "are pinned to upstream commits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    verify = commands.add_parser(
        "verify",
        help="check every code reference and cross-link against pinned commits",
        description="Check code references (file.py:10-20, permalinks) and relative links in "
        "Markdown pages against the upstreams' pinned commits.",
    )
    _add_verify_arguments(verify)

    upstreams = commands.add_parser("upstreams", help="clone, fetch and list upstreams")
    upstream_commands = upstreams.add_subparsers(
        dest="action", metavar="ACTION", parser_class=_Parser
    )
    upstream_commands.required = True
    fetch = upstream_commands.add_parser("fetch", help="clone missing upstreams, fetch the others")
    fetch.add_argument("names", nargs="*", metavar="NAME", help="upstreams to fetch (default: all)")
    fetch.add_argument("--manifest", type=Path, metavar="FILE")
    listing = upstream_commands.add_parser("list", help="show each upstream, its pin and its clone")
    listing.add_argument("--manifest", type=Path, metavar="FILE")

    sync = commands.add_parser(
        "sync",
        help="move upstream pins and re-anchor every reference (make sync-upstream)",
        description="Fetch each upstream, move its pin to the tracked branch head (or --to REV), "
        "rewrite every reference whose code moved unchanged, and hold the others at the old "
        "commit for review. Writes a drift report (Markdown and JSON).",
    )
    sync.add_argument(
        "names", nargs="*", metavar="UPSTREAM", help="upstreams to sync (default: all)"
    )
    sync.add_argument(
        "--to",
        metavar="REV",
        help="target revision (one upstream only; default: the tracked branch's head)",
    )
    sync.add_argument(
        "--dry-run", action="store_true", help="write nothing; print what would change"
    )
    sync.add_argument(
        "--force",
        action="store_true",
        help="run even if docs/ or the manifest have uncommitted changes",
    )
    sync.add_argument(
        "--include-pinned-pages",
        action="store_true",
        help="also move pages that carry their own pin (e.g. PR deep dives)",
    )
    sync.add_argument(
        "--no-fetch", action="store_true", help="do not fetch; use the clone as it is"
    )
    sync.add_argument(
        "--report-dir",
        type=Path,
        default=Path(".cache/reports"),
        metavar="DIR",
        help="where drift reports go (default: .cache/reports)",
    )
    sync.add_argument("--manifest", type=Path, metavar="FILE")

    from generator.generate.source import Placement

    source = commands.add_parser(
        "source",
        help="draft a source-analysis page for one file of an upstream",
        description="Write a source-analysis page for PATH at the upstream's pin: an outline of "
        "its classes and functions as pinned references, a Mermaid class diagram of their "
        "inheritance and composition, and a placeholder section per symbol (Python via ast, "
        "other languages from their definition lines).",
    )
    source.add_argument("upstream", metavar="UPSTREAM", help="upstream name in the manifest")
    source.add_argument("path", metavar="PATH", help="file path from the repository root")
    source.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="page to write (default: docs/analysis/<path>-source-analysis.md)",
    )
    source.add_argument("--lang", choices=("en", "zh"), default="en", help="headings' language")
    source.add_argument(
        "--at", metavar="REV", help="another commit than the pin (recorded as the page's own pin)"
    )
    source.add_argument("--force", action="store_true", help="replace an existing page")
    Placement.add_arguments(source)
    source.add_argument("--manifest", type=Path, metavar="FILE")

    demo = commands.add_parser(
        "demo",
        help="the embedded demo: build its upstreams, record its GitHub answers, make its pages",
    )
    demo_commands = demo.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    demo_commands.required = True
    build = demo_commands.add_parser(
        "build", help="replay demo/upstreams/* into git repositories with fixed SHAs"
    )
    build.add_argument(
        "--source",
        type=Path,
        default=Path("demo"),
        metavar="DIR",
        help="demo directory (default: demo)",
    )
    build.add_argument(
        "--dest",
        type=Path,
        default=Path(".cache/demo"),
        metavar="DIR",
        help="where to build the repositories (default: .cache/demo)",
    )
    from generator.generate.cli import add_demo_commands

    add_demo_commands(demo_commands)  # demo record-github|pages
    from generator.specs_cli import add_commands as add_governance_commands

    add_governance_commands(commands)  # specs validate|board, new spec|page
    from generator.generate.cli import add_commands as add_generator_commands

    add_generator_commands(commands)  # pr, ...
    from generator.ingest_cli import add_commands as add_ingest_commands

    add_ingest_commands(commands)
    return parser


def verify_parser(prog: str) -> argparse.ArgumentParser:
    """The parser of ``scripts/verify_code_refs.py``: the ``verify`` command on its own."""
    parser = _Parser(
        prog=prog,
        description="Check code references (file.py:10-20, permalinks) and relative links in "
        "Markdown pages against the upstreams' pinned commits. Exit status: 0 clean, 1 errors "
        "(or warnings with --strict), 2 usage or configuration problem.",
    )
    _add_verify_arguments(parser)
    return parser


def _run_verify(args: argparse.Namespace) -> int:
    from generator.report import format_github, format_json, format_text
    from generator.verify import verify

    if args.list_checks:
        for check in CHECKS.values():
            print(f"{check.id:22} {check.severity!s:8} {check.summary}")
        return EXIT_OK
    progress = _ProgressLine()

    def on_progress(done: int, total: int) -> None:
        if total >= 50 and (done % 25 == 0 or done == total):
            progress.show(f"verifying pages: {done}/{total}")

    try:
        report = verify(
            args.paths,
            manifest_path=args.manifest,
            docs_root=args.docs_root,
            ignore=args.ignore,
            progress=on_progress,
            cache=args.cache,
        )
    finally:
        progress.done()
    if args.format == "json":
        sys.stdout.write(format_json(report, list_refs=args.list_refs))
    elif args.format == "github":
        sys.stdout.write(format_github(report))
    else:
        sys.stdout.write(format_text(report, colour=_use_colour(args.color)))
    return report.exit_code(strict=args.strict)


def _manifest(path: Path | None):  # type: ignore[no-untyped-def]
    found = path or find_manifest(Path.cwd())
    if found is None:
        raise ConfigError(
            f"no {MANIFEST_NAME} in {Path.cwd()} or its parents",
            hint="run from the knowledge base, or pass --manifest PATH",
        )
    return load_manifest(found)


def _run_upstreams(args: argparse.Namespace) -> int:
    from generator.upstreams import fetch_upstreams

    manifest = _manifest(args.manifest)
    if args.action == "list":
        for upstream in manifest.upstreams.values():
            assert upstream.clone_dir is not None
            cloned = "cloned" if upstream.clone_dir.exists() else "not cloned"
            print(
                f"{upstream.name:16} {upstream.branch:12} pin {upstream.pin[:12]}  "
                f"{cloned:10}  {upstream.url}"
            )
        return EXIT_OK
    progress = _ProgressLine()
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


def _run_sync(args: argparse.Namespace) -> int:
    from generator import sync
    from generator.manifest import load_manifest
    from generator.resolve import Resolver
    from generator.upstreams import fetch_upstream

    manifest = _manifest(args.manifest)
    names = args.names or list(manifest.upstreams)
    unknown = [name for name in names if name not in manifest.upstreams]
    if unknown:
        raise ConfigError(
            f"unknown upstream(s): {', '.join(unknown)}",
            hint="known: " + ", ".join(sorted(manifest.upstreams)),
        )
    if args.to and len(names) != 1:
        raise ConfigError("--to needs exactly one upstream name")
    if not args.force and not args.dry_run:
        dirty = sync.dirty_paths(manifest.root, [manifest.root / "docs", manifest.path])
        if dirty:
            raise ConfigError(
                "uncommitted changes in "
                + ", ".join(dirty[:5])
                + (" ..." if len(dirty) > 5 else ""),
                hint="commit or stash them first (sync rewrites pages), or pass --force",
            )
    progress = _ProgressLine()
    status = EXIT_OK
    try:
        for name in names:
            upstream = manifest.upstreams[name]
            if not args.no_fetch:
                fetch_upstream(manifest, upstream, notify=progress.show)
            resolver = Resolver(manifest)
            try:
                store = resolver.store(upstream)
                revision = args.to or upstream.branch
                target = store.resolve(revision)
            finally:
                resolver.close()
            if target is None:
                raise ConfigError(
                    f"'{revision}' is not a commit of '{name}'",
                    hint=f"check the name, or fetch: python -m generator upstreams fetch {name}",
                )
            plan = sync.plan_sync(
                manifest,
                name,
                target,
                include_pinned_pages=args.include_pinned_pages,
                notify=progress.show,
            )
            progress.done()
            _print_sync_summary(plan, args.dry_run)
            if args.dry_run:
                for drift in plan.drifts:
                    if drift.new_text:
                        print(
                            f"  {drift.page}:{drift.line}:{drift.column}: {drift.text} -> "
                            f"{drift.new_text}"
                        )
                    elif drift.drift.status.value not in ("unchanged", "moved"):
                        print(
                            f"  {drift.page}:{drift.line}:{drift.column}: {drift.text}: "
                            f"{drift.drift.status} ({drift.drift.reason})"
                        )
                continue
            result = sync.apply_sync(plan, manifest, notify=progress.show)
            progress.done()
            if not plan.pages and not result.pin_moved:
                print(f"  already at {target[:12]}: nothing to do")
                continue
            reports = sync.write_reports(plan, args.report_dir)
            print(
                f"  wrote {len(result.pages_written)} pages; pin "
                f"{'moved to ' + target[:12] if result.pin_moved else 'already at ' + target[:12]}"
            )
            print(f"  drift report: {reports[0]} (JSON: {reports[1]})")
            manifest = load_manifest(manifest.path)
    finally:
        progress.done()
    return status


def _print_sync_summary(plan, dry_run: bool) -> None:  # type: ignore[no-untyped-def]
    counts = plan.counts()
    parts = ", ".join(
        f"{counts[key]} {key}"
        for key in ("unchanged", "moved", "changed", "deleted", "ambiguous", "was-broken")
        if counts[key]
    )
    verb = "would re-anchor" if dry_run else "re-anchored"
    print(
        f"{plan.upstream.name}: {plan.old[:7]} -> {plan.target[:7]}: {verb} "
        f"{len(plan.drifts)} references on {len(plan.pages)} pages"
        + (f" ({parts})" if parts else "")
    )
    if plan.skipped_pinned:
        print(
            f"  left {len(plan.skipped_pinned)} pages with their own pin alone "
            "(--include-pinned-pages moves them)"
        )


def _run_source(args: argparse.Namespace) -> int:
    from generator.generate.source import Placement, default_output, generate_source_page
    from generator.verify import docs_root_for

    manifest = _manifest(args.manifest)
    output = args.output or default_output(
        docs_root_for(manifest, [manifest.root / "docs"]), args.path
    )
    placement = Placement.from_args(args)
    written = generate_source_page(
        manifest,
        args.upstream,
        args.path,
        output,
        lang=args.lang,
        force=args.force,
        revision=args.at,
        placement=placement,
    )
    try:
        shown = written.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        shown = written
    print(f"wrote {shown}")
    return EXIT_OK


def _run_demo(args: argparse.Namespace) -> int:
    if args.action != "build":
        from generator.generate.cli import run_demo_action

        return run_demo_action(args)
    from generator.demo import build_all

    if not (args.source / "upstreams").is_dir():
        raise ConfigError(
            f"{args.source}/upstreams: no such directory",
            hint="run from the repository root or pass --source",
        )
    for built in build_all(args.source, args.dest):
        tags = ", ".join(f"{tag} {sha[:12]}" for tag, sha in built.tags.items())
        print(f"{built.name}: {built.path} (head {built.head[:12]}{'; ' + tags if tags else ''})")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return _dispatch(args)


def main_verify(argv: Sequence[str] | None = None, prog: str = "verify_code_refs.py") -> int:
    args = verify_parser(prog).parse_args(argv)
    args.command, args.verbose = "verify", 0
    return _dispatch(args)


def _dispatch(args: argparse.Namespace) -> int:
    level = logging.WARNING - 10 * min(getattr(args, "verbose", 0), 2)
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s")
    handlers = {
        "verify": _run_verify,
        "upstreams": _run_upstreams,
        "demo": _run_demo,
        "sync": _run_sync,
        "source": _run_source,
    }
    from generator.specs_cli import run_new, run_specs

    handlers.update({"specs": run_specs, "new": run_new})
    from generator.ingest_cli import run_ingest

    handlers["ingest"] = run_ingest
    from generator.generate.cli import handlers as generator_handlers

    handlers.update(generator_handlers())
    try:
        return handlers[args.command](args)
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

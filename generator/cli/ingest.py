"""``ingest``: import analyses written elsewhere as pages (over `generator.generate.ingest`)."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, ProgressLine, load_manifest

if TYPE_CHECKING:  # the importer loads the GitHub client: not for every command's start-up
    from generator.generate.ingest import Ingested, IngestError, Relinked


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    # The governance modules, imported when this parser is built (see `generator.cli.main`).
    from generator.kb.placement import Placement
    from generator.kb.sections import ANALYSIS_KINDS
    from generator.kb.specs import SPEC_STATUSES

    parser = commands.add_parser(
        "ingest",
        help="import analyses written elsewhere as pages of the knowledge base",
        description="Import Markdown analyses (written by a person, or by an LLM from the seed "
        "prompts) as pages: detect kind and language; add or normalise the frontmatter and place "
        "the page in a spec and learning path; rewrite bare file names and absolute local paths "
        "into canonical path:line references and pin GitHub links that name a branch, where the "
        "resolution is unique; check the kind's mandatory sections and diagrams and, for a "
        "review, that each finding has a severity and cites a line the PR changes. Content is "
        "never dropped; everything not fixed is reported. A file from outside the docs goes to "
        "docs/analysis/ under its own name (--rename kebab renames it and rewrites the links to "
        "it); a page already in the docs is normalised in place. Exit status: 0 all "
        "clean, 1 pages written but problems remain (warnings too with --strict), 2 a file or "
        "option could not be used (nothing written for it).",
    )
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="Markdown files, or directories (every *.md below them, sub-folders kept)",
    )
    parser.add_argument("--kind", choices=ANALYSIS_KINDS, help="the page kind (default: detect)")
    parser.add_argument("--lang", choices=("en", "zh"), help="the language (default: detect)")
    parser.add_argument(
        "--status", choices=SPEC_STATUSES, help="lifecycle status (default: in-progress)"
    )
    Placement.add_arguments(
        parser, path_help="; default: the level path nearest its level, which --level sets"
    )
    parser.add_argument("--order", type=int, help="position within its level (default: last)")
    parser.add_argument("--upstream", metavar="NAME", help="the upstream the page analyses")
    parser.add_argument(
        "--pin", metavar="REV", help="pin the page to this commit (a PR's head): SHA, tag or branch"
    )
    parser.add_argument(
        "--base",
        metavar="REV",
        help="the PR's base commit (reviews, deep dives): SHA, tag or branch",
    )
    parser.add_argument(
        "--pr",
        type=int,
        metavar="N",
        help="the pull request number; with --upstream and without --base/--pin, its base and "
        "head commits are fetched from GitHub (GITHUB_API_URL, the response cache)",
    )
    parser.add_argument(
        "--offline", action="store_true", help="with --pr: use only cached GitHub responses"
    )
    parser.add_argument(
        "--output", "-o", type=Path, metavar="PATH", help="where to write the page (one FILE)"
    )
    parser.add_argument(
        "--output-dir", type=Path, metavar="DIR", help="where pages go (default: docs/analysis)"
    )
    parser.add_argument(
        "--rename",
        choices=("kebab",),
        help="name pages from outside the docs in kebab-case (README.md -> readme.md) and "
        "rewrite every relative link to them, in the imported pages and the docs (default: "
        "keep each file's name)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing page")
    parser.add_argument(
        "--dry-run", action="store_true", help="report what would change; write nothing"
    )
    parser.add_argument("--diff", action="store_true", help="show each page's changes as a diff")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--strict", action="store_true", help="warnings fail the run too")
    parser.add_argument("--manifest", type=Path, metavar="FILE")


def run_ingest(args: argparse.Namespace) -> int:
    from generator.generate.ingest import (
        Ingested,
        IngestError,
        IngestOptions,
        NothingWritten,
        Relinked,
        ingest,
    )
    from generator.kb.placement import Placement
    from generator.verification.pipeline import docs_root_for
    from generator.verification.report import json_document

    manifest = load_manifest(args.manifest)
    try:
        base, pin = _pull_commits(args, manifest)
    except IngestError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    options = IngestOptions(
        kind=args.kind,
        lang=args.lang,
        status=args.status,
        placement=Placement.from_args(args),
        order=args.order,
        upstream=args.upstream,
        pin=pin,
        base=base,
        pr=args.pr,
        output=args.output,
        output_dir=args.output_dir,
        force=args.force,
        dry_run=args.dry_run,
        rename=args.rename,
    )
    docs_root = docs_root_for(manifest, [manifest.root / "docs"])
    progress = ProgressLine()

    def on_progress(done: int, total: int) -> None:
        if total >= 5:
            progress.show(f"ingesting: {done}/{total}")

    try:
        results = ingest(
            args.files, manifest, docs_root, options, on_progress, keep_content=args.diff
        )
    except IngestError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    finally:
        progress.done()
    if args.format == "json":
        sys.stdout.write(json_document(_json(results, args.dry_run)))
        sys.stdout.write("\n")
    else:
        for result in results:
            if isinstance(result, IngestError):
                sys.stderr.write(f"error: {result}\n")
            elif isinstance(result, Relinked):
                sys.stdout.write(_relinked_text(result, args.dry_run))
            else:
                sys.stdout.write(_text(result, args.dry_run, args.diff))
        done = [r for r in results if isinstance(r, Ingested)]
        failed = sum(
            1 for r in results if isinstance(r, IngestError) and not isinstance(r, NothingWritten)
        )
        sys.stdout.write(_summary(done, failed, args.dry_run) + "\n")
    if any(isinstance(r, IngestError) for r in results):
        return EXIT_USAGE
    done = [r for r in results if isinstance(r, Ingested)]
    if any(r.errors or (args.strict and r.warnings) for r in done):
        return EXIT_FAILED
    return EXIT_OK


def _pull_commits(args: argparse.Namespace, manifest: Any) -> tuple[str | None, str | None]:
    """``(base, pin)``: as given, or the pull request's from GitHub when ``--pr`` asks."""
    if args.pr is None or args.upstream is None or (args.base and args.pin):
        return args.base, args.pin
    from generator.generate.ingest import IngestError
    from generator.generate.pr import parse_repository
    from generator.github.client import GitHubClient, GitHubError, default_cache_dir

    upstream = manifest.upstreams.get(args.upstream)
    slug = upstream.github_slug if upstream is not None else None
    if slug is None:
        raise IngestError(
            f"cannot fetch PR #{args.pr}: upstream '{args.upstream}' has no GitHub web_url in "
            "upstreams.yaml; pass --base and --pin"
        )
    owner, repo = parse_repository(slug)
    try:
        with GitHubClient.from_env(
            cache_dir=default_cache_dir(manifest.root), offline=args.offline
        ) as client:
            pull = client.pull(owner, repo, args.pr)
    except GitHubError as error:
        raise IngestError(f"cannot fetch PR #{args.pr} of {slug}: {error}") from error
    return args.base or pull.base_sha, args.pin or pull.head_sha


def _text(result: Ingested, dry_run: bool, diff: bool) -> str:
    from generator.verification.pipeline import Report
    from generator.verification.report import format_text

    if not result.changed:
        verb = "unchanged"
    elif dry_run:
        verb = "would write"
    else:
        verb = "wrote" if result.written else "not written"
    lines = [
        f"{result.source} -> {result.display} ({verb}): {result.kind} ({result.kind_basis}), "
        f"{result.lang}, {result.refs} code references"
    ]
    for fix in result.fixes:
        where = f"{result.display}:{fix.line}" + (f":{fix.column}" if fix.line > 1 else "")
        lines.append(f"  fixed {where}: {fix.what}: {fix.before} -> {fix.after}")
    text = "\n".join(lines) + "\n"
    if result.findings:
        # The verifier's own format, so editors and CI read these like any other finding.
        shown = format_text(Report(findings=result.findings)).splitlines()[:-1]
        text += "".join(f"  {line}\n" for line in shown)
    if diff:  # from the file as given to the page as written
        before = result.original.decode("utf-8", errors="replace")
        text += "".join(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                result.data.decode("utf-8", errors="replace").splitlines(keepends=True),
                str(result.source),
                result.display,
            )
        )
    return text


def _relinked_text(result: Relinked, dry_run: bool) -> str:
    verb = "would rewrite" if dry_run else "rewrote"
    count = len(result.fixes)
    lines = [f"{result.display} ({verb} {count} link{'s' * (count != 1)} to renamed pages)"]
    lines.extend(
        f"  fixed {result.display}:{fix.line}:{fix.column}: {fix.what}: {fix.before} -> {fix.after}"
        for fix in result.fixes
    )
    return "\n".join(lines) + "\n"


def _summary(done: list[Ingested], failed: int, dry_run: bool) -> str:
    fixes = sum(len(r.fixes) for r in done)
    errors = sum(r.errors for r in done)
    warnings = sum(r.warnings for r in done)
    verb = "would ingest" if dry_run else "ingested"
    text = (
        f"{verb} {len(done)} page{'s' * (len(done) != 1)}: {fixes} fixes, "
        f"{errors} error{'s' * (errors != 1)} and {warnings} warning{'s' * (warnings != 1)} left"
    )
    return text + (f"; {failed} file{'s' * (failed != 1)} not ingested" if failed else "")


def _fix_json(fix: Any) -> dict[str, Any]:
    return {
        "line": fix.line,
        "column": fix.column,
        "what": fix.what,
        "before": fix.before,
        "after": fix.after,
    }


def _json(results: list[Ingested | Relinked | IngestError], dry_run: bool) -> dict[str, Any]:
    from generator.generate.ingest import IngestError, Relinked
    from generator.verification.pipeline import Report
    from generator.verification.report import report_json

    pages: list[dict[str, Any]] = []
    for result in results:
        if isinstance(result, IngestError):
            source = {"source": str(result.source)} if result.source is not None else {}
            pages.append({**source, "error": str(result)})
            continue
        if isinstance(result, Relinked):
            pages.append(
                {
                    "page": result.display,
                    "relinked": True,
                    "written": result.written,
                    "fixes": [_fix_json(f) for f in result.fixes],
                }
            )
            continue
        pages.append(
            {
                "source": str(result.source),
                "page": result.display,
                "written": result.written,
                "changed": result.changed,
                "kind": result.kind,
                "kind_basis": result.kind_basis,
                "lang": result.lang,
                "refs": result.refs,
                "fixes": [_fix_json(f) for f in result.fixes],
                "findings": report_json(Report(findings=result.findings))["findings"],
            }
        )
    return {"dry_run": dry_run, "pages": pages}


HANDLERS = {"ingest": run_ingest}

"""Command-line wiring of the page generators (``pr``, ...), kept apart from generator.cli."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the generator commands on the main parser's subcommands."""
    pr = commands.add_parser(
        "pr",
        help="draft a PR deep-dive page from a GitHub pull request",
        description="Fetch pull request OWNER/REPO#N from GitHub (GITHUB_TOKEN or GH_TOKEN, "
        "GITHUB_API_URL) and write a PR deep-dive page (seed 000, sections 1 to 7): metadata, "
        "change scope, file change summary, key functions as refs at the head commit and "
        "Mermaid skeletons; the prose is left as TODO(author) placeholders. Responses are "
        "cached in .cache/github/. Exit status: 0 written, 1 GitHub failed, 2 usage problem.",
    )
    pr.add_argument("repository", metavar="OWNER/REPO", help="the GitHub repository")
    pr.add_argument("number", type=int, metavar="N", help="the pull request number")
    pr.add_argument(
        "--output",
        "-o",
        type=Path,
        metavar="PATH",
        help="where to write the page (default: docs/analysis/pr-N-<title>.md in the "
        "knowledge base)",
    )
    pr.add_argument("--force", action="store_true", help="overwrite an existing page")
    pr.add_argument(
        "--offline", action="store_true", help="use only cached GitHub responses, never the network"
    )
    pr.add_argument(
        "--lang",
        choices=["auto", "en", "zh"],
        default="auto",
        help="headings' language (default: auto, Chinese for a mostly CJK title and body)",
    )
    pr.add_argument("--manifest", type=Path, metavar="FILE", help="upstream manifest")
    pr.add_argument(
        "--cache-dir", type=Path, metavar="DIR", help="GitHub response cache (.cache/github/)"
    )

    review = commands.add_parser(
        "review",
        help="draft a code review page from a GitHub pull request, or export one as JSON",
        description="Fetch pull request OWNER/REPO#N and its review comments from GitHub "
        "(GITHUB_TOKEN or GH_TOKEN, GITHUB_API_URL) and write a review page (seed 002): "
        "summary, test verification, P0 to P3 findings, questions for the author and the PR's "
        "review comments grouped by file, as refs at the head commit. With "
        "--export-review-json PAGE --output FILE, turn a finished review page into the JSON "
        "body of GitHub's create-a-review call instead (written to FILE, never posted). "
        "Exit status: 0 written, 1 GitHub failed, 2 usage problem.",
    )
    review.add_argument("repository", nargs="?", metavar="OWNER/REPO", help="the repository")
    review.add_argument("number", nargs="?", type=int, metavar="N", help="the pull request number")
    review.add_argument(
        "--export-review-json",
        type=Path,
        metavar="PAGE",
        help="export this finished review page as a create-a-review JSON body (needs --output)",
    )
    review.add_argument(
        "--output",
        "-o",
        type=Path,
        metavar="PATH",
        help="where to write the page (default: docs/analysis/review-pr-N-<title>.md in the "
        "knowledge base) or, with --export-review-json, the JSON file",
    )
    review.add_argument("--force", action="store_true", help="overwrite an existing file")
    review.add_argument(
        "--offline", action="store_true", help="use only cached GitHub responses, never the network"
    )
    review.add_argument(
        "--lang",
        choices=["auto", "en", "zh"],
        default="auto",
        help="headings' language (default: auto, Chinese for a mostly CJK title and body)",
    )
    review.add_argument("--manifest", type=Path, metavar="FILE", help="upstream manifest")
    review.add_argument(
        "--cache-dir", type=Path, metavar="DIR", help="GitHub response cache (.cache/github/)"
    )


def _draft_from_pull(
    args: argparse.Namespace,
    build: Callable[..., Any],
    write: Callable[..., Path],
    describe: Callable[[Any], str],
) -> int:
    """Fetch pull request ``args.repository#args.number``, draft a page with ``build`` and write
    it with ``write``: the flow `pr` and `review` share (errors, cache, progress, summary)."""
    from generator.cli import _manifest
    from generator.generate.pr import PrError, parse_repository
    from generator.github import GitHubClient, GitHubError, default_cache_dir, terminal_progress

    try:
        if args.repository is None or args.number is None:
            raise PrError("expected OWNER/REPO N (or --export-review-json PAGE --output FILE)")
        owner, repo = parse_repository(args.repository)
        if args.number < 1:
            raise PrError(f"invalid pull request number {args.number}")
    except PrError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    manifest = _manifest(args.manifest)
    output: Path | None = args.output
    if output is not None and output.exists() and not args.force:  # before fetching anything
        sys.stderr.write(f"error: {output} already exists; pass --force to overwrite it\n")
        return EXIT_USAGE
    lang = None if args.lang == "auto" else args.lang
    try:
        with GitHubClient.from_env(
            cache_dir=args.cache_dir or default_cache_dir(manifest.root),
            offline=args.offline,
            progress=terminal_progress(sys.stderr),
        ) as client:
            page = build(client, manifest, owner, repo, args.number, lang=lang)
        target = output if output is not None else manifest.root / page.default_output
        write(page, target, force=args.force)
    except PrError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    except GitHubError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_FAILED
    for note in page.notes:
        sys.stderr.write(f"note: {note}\n")
    try:
        shown = target.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        shown = target
    sys.stdout.write(f"wrote {shown}: {describe(page)}\n")
    return EXIT_OK


def run_pr(args: argparse.Namespace) -> int:
    """``python -m generator pr OWNER/REPO N``."""
    from generator.generate.pr import build_pr_page, write_pr_page

    return _draft_from_pull(
        args,
        build_pr_page,
        write_pr_page,
        lambda page: (
            f"PR #{page.pull.number} ({page.lang}), {len(page.files)} files, "
            f"{len(page.symbols)} key functions ({page.symbols_source}), pinned to "
            f"{page.pull.head_sha[:12]}"
        ),
    )


def run_export_review(args: argparse.Namespace) -> int:
    """``python -m generator review --export-review-json PAGE --output FILE``."""
    from generator.generate.review import PrError, write_review_json

    if args.repository is not None or args.number is not None:
        sys.stderr.write("error: --export-review-json takes a page, not OWNER/REPO N\n")
        return EXIT_USAGE
    if args.output is None:
        sys.stderr.write("error: --export-review-json needs --output FILE\n")
        return EXIT_USAGE
    try:
        target, payload = write_review_json(args.export_review_json, args.output, force=args.force)
    except PrError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    sys.stdout.write(
        f"wrote {target}: review of {payload['commit_id'][:12]}, "
        f"{len(payload['comments'])} inline comments (not posted)\n"
    )
    return EXIT_OK


def run_review(args: argparse.Namespace) -> int:
    """``python -m generator review OWNER/REPO N`` (or ``--export-review-json``)."""
    if args.export_review_json is not None:
        return run_export_review(args)
    from generator.generate.review import build_review_page, write_review_page

    return _draft_from_pull(
        args,
        build_review_page,
        write_review_page,
        lambda page: (
            f"review of PR #{page.pull.number} ({page.lang}), {len(page.files)} files, "
            f"{len(page.test_files)} test files, {len(page.comments)} review comments, "
            f"pinned to {page.pull.head_sha[:12]}"
        ),
    )


def handlers() -> dict[str, Callable[[argparse.Namespace], int]]:
    """Command name -> handler, for generator.cli's dispatch."""
    return {"pr": run_pr, "review": run_review}

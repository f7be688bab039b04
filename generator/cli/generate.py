"""``pr``, ``review`` and ``source``: draft pages from pull requests and upstream sources."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, load_manifest, shown

DEFAULT_BUDGET = 60_000
"""generator.generate.prompt.DEFAULT_BUDGET, stated here so the help needs no heavy import."""
DEFAULT_GITHUB_DEADLINE = 600.0
"""generator.github.client.DEFAULT_COMMAND_DEADLINE, likewise."""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < 1e7:  # also refuses inf and nan
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of tokens, got {text!r}")
    return value


def _add_shared_options(parser: argparse.ArgumentParser, seed: str) -> None:
    """The options `pr` and `review` share (all but --output, whose help differs)."""
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    parser.add_argument(
        "--offline", action="store_true", help="use only cached GitHub responses, never the network"
    )
    parser.add_argument(
        "--lang",
        choices=["auto", "en", "zh"],
        default="auto",
        help="headings' language (default: auto, Chinese for a mostly CJK title and body)",
    )
    parser.add_argument("--manifest", type=Path, metavar="FILE", help="upstream manifest")
    parser.add_argument(
        "--cache-dir", type=Path, metavar="DIR", help="GitHub response cache (.cache/github/)"
    )
    parser.add_argument(
        "--github-deadline",
        type=_seconds,
        default=DEFAULT_GITHUB_DEADLINE,
        metavar="SECONDS",
        help="the most time the command may spend on GitHub, waits for rate limits included "
        f"(default: {DEFAULT_GITHUB_DEADLINE:g}); each request has its own, shorter limit",
    )
    parser.add_argument(
        "--prompt",
        action="store_true",
        help=f"write a context pack for an LLM instead of the page: the {seed} prompt, the "
        "conventions the page must follow (frontmatter, headings, references), the PR's "
        "metadata and description, the diff per file and the full source of each changed "
        "Python function or class at the head commit with line numbers (default output: "
        ".cache/prompts/<page name>.md)",
    )
    parser.add_argument(
        "--budget",
        type=_positive,
        metavar="TOKENS",
        help=f"with --prompt, the pack's size limit in estimated tokens (default: "
        f"{DEFAULT_BUDGET:,}; a quarter per ASCII character, one per other character). Over "
        "it, the code of the largest changed definitions is left out first, then the diffs "
        "of the largest files, then the description and the review comments; the pack lists "
        "what was left out",
    )
    from generator.kb.placement import Placement

    Placement.add_arguments(parser)


def add_source_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from generator.kb.placement import Placement

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


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``pr`` and ``review`` on the main parser's subcommands."""
    pr = commands.add_parser(
        "pr",
        help="draft a PR deep-dive page from a GitHub pull request",
        description="Fetch pull request OWNER/REPO#N from GitHub (GITHUB_TOKEN or GH_TOKEN, "
        "GITHUB_API_URL) and write a PR deep-dive page (seed 000, sections 1 to 7): metadata, "
        "change scope, file change summary, key functions as refs at the head commit and "
        "Mermaid skeletons; the prose is left as TODO(author) placeholders. With --prompt, "
        "write a context pack for an LLM instead: the deep-dive prompt, the page's conventions, "
        "the PR's metadata, its diff and the changed code at the head commit, sized to "
        "--budget. Responses are cached in .cache/github/. Exit status: 0 written, 1 GitHub "
        "failed, 2 usage problem.",
    )
    pr.add_argument(
        "repository", metavar="OWNER/REPO", help="the GitHub repository, or the PR's address"
    )
    pr.add_argument(
        "number",
        nargs="?",
        type=int,
        metavar="N",
        help="the pull request number (not with the PR's address: .../OWNER/REPO/pull/N)",
    )
    pr.add_argument(
        "--output",
        "-o",
        type=Path,
        metavar="PATH",
        help="where to write the page (default: docs/analysis/pr-N-<title>.md in the "
        "knowledge base) or, with --prompt, the pack (default: .cache/prompts/pr-N-<title>.md)",
    )
    _add_shared_options(pr, "PR deep dive")

    review = commands.add_parser(
        "review",
        help="draft a code review page from a GitHub pull request, or export one as JSON",
        description="Fetch pull request OWNER/REPO#N and its review comments from GitHub "
        "(GITHUB_TOKEN or GH_TOKEN, GITHUB_API_URL) and write a review page (seed 002): "
        "summary, test verification, P0 to P3 findings, questions for the author and the PR's "
        "review comments grouped by file, as refs at the head commit. With "
        "--export-review-json PAGE --output FILE, turn a finished review page into the JSON "
        "body of GitHub's create-a-review call instead (written to FILE, never posted). With "
        "--prompt, write a context pack for an LLM instead of the page: the code review "
        "prompt, the page's conventions, the PR's metadata, diff, changed code at the head "
        "commit and review comments, sized to --budget. "
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
        "knowledge base); with --prompt, the pack (default: .cache/prompts/review-pr-N-"
        "<title>.md); with --export-review-json, the JSON file",
    )
    _add_shared_options(review, "code review")


def _draft_from_pull(
    args: argparse.Namespace,
    build: Callable[..., Any],
    write: Callable[..., Path],
    describe: Callable[[Any], str],
) -> int:
    """Fetch pull request ``args.repository#args.number``, draft a page with ``build`` and write
    it with ``write``: the flow `pr` and `review` share (errors, cache, progress, summary)."""
    from generator.generate.pr import PrError, parse_pull, parse_repository
    from generator.github.client import (
        GitHubClient,
        GitHubError,
        default_cache_dir,
        terminal_progress,
    )

    try:
        pull = parse_pull(args.repository) if args.repository is not None else None
        if pull is not None:  # the PR's address, as copied from the browser
            if args.number not in (None, pull[2]):
                raise PrError(f"{args.repository} is pull request #{pull[2]}, not #{args.number}")
            owner, repo, args.number = pull
        elif args.repository is None or args.number is None:
            raise PrError(
                "expected OWNER/REPO N or the PR's address, https://github.com/OWNER/REPO/pull/N "
                "(or --export-review-json PAGE --output FILE)"
            )
        else:
            owner, repo = parse_repository(args.repository)
        if args.number < 1:
            raise PrError(f"invalid pull request number {args.number}")
    except PrError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    manifest = load_manifest(args.manifest)
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
            command_deadline=args.github_deadline,
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
    sys.stdout.write(f"wrote {shown(target)}: {describe(page)}\n")
    return EXIT_OK


def _placement(args: argparse.Namespace) -> Any:
    from generator.kb.placement import Placement

    return Placement.from_args(args)


def _placed(build: Callable[..., Any], placement: Any, kind: str) -> Callable[..., Any]:
    """``build`` (a page drafter, called with the client and the manifest first), with the page
    placed in its spec and learning paths: those given, else those ``ingest`` would choose."""
    from generator.generate.pr import place_page
    from generator.generate.source import complete_placement

    def build_placed(client: Any, manifest: Any, *args: Any, **options: Any) -> Any:
        page = build(client, manifest, *args, **options)
        place_page(page, complete_placement(placement, manifest, kind))
        return page

    return build_placed


def _pack_placed(build_pack: Callable[..., Any], placement: Any, kind: str) -> Callable[..., Any]:
    """``build_pack``, with the draft in the pack placed as `_placed` places a page."""
    from generator.generate.source import complete_placement

    def build_placed(client: Any, manifest: Any, *args: Any, **options: Any) -> Any:
        return build_pack(
            client,
            manifest,
            *args,
            placement=complete_placement(placement, manifest, kind),
            **options,
        )

    return build_placed


def _describe_pack(pack: Any) -> str:
    what = "PR deep dive" if pack.kind == "pr-deep-dive" else "review"
    left = len(pack.omitted)
    return (
        f"context pack for the {what} of PR #{pack.pull.number} ({pack.lang}), about "
        f"{pack.tokens:,} of {pack.budget:,} tokens: {pack.diffs_shown} of {len(pack.files)} "
        f"file diffs, the code of {pack.definitions_shown} of {pack.definitions_total} changed "
        f"definitions; {left or 'nothing'} left out{' (listed at its end)' if left else ''}"
    )


def _pack_or_page(
    args: argparse.Namespace,
    build_page: Callable[..., Any],
    write_page: Callable[..., Path],
    describe_page: Callable[[Any], str],
    build_pack: Callable[..., Any],
    kind: str,
) -> int:
    """Write the page, or with ``--prompt`` the context pack (the flow `pr` and `review` share)."""
    from generator.generate.prompt import write_pack

    placement = _placement(args)
    if args.prompt:
        builder = functools.partial(
            _pack_placed(build_pack, placement, kind), budget=args.budget or DEFAULT_BUDGET
        )
        return _draft_from_pull(args, builder, write_pack, _describe_pack)
    if args.budget is not None:
        sys.stderr.write("error: --budget sizes a context pack: it needs --prompt\n")
        return EXIT_USAGE
    return _draft_from_pull(args, _placed(build_page, placement, kind), write_page, describe_page)


def run_pr(args: argparse.Namespace) -> int:
    """``python -m generator pr OWNER/REPO N`` (``--prompt``: the context pack instead)."""
    from generator.generate.pr import build_pr_page, write_pr_page
    from generator.generate.prompt import build_pr_pack

    return _pack_or_page(
        args,
        build_pr_page,
        write_pr_page,
        lambda page: (
            f"PR #{page.pull.number} ({page.lang}), {len(page.files)} files, "
            f"{len(page.symbols)} key functions ({page.symbols_source}), pinned to "
            f"{page.pull.head_sha[:12]}"
        ),
        build_pr_pack,
        "pr-deep-dive",
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
    """``python -m generator review OWNER/REPO N`` (or ``--export-review-json``, ``--prompt``)."""
    if args.export_review_json is not None:
        if args.prompt:
            sys.stderr.write("error: --prompt writes a context pack, not an export: drop one\n")
            return EXIT_USAGE
        return run_export_review(args)
    from generator.generate.prompt import build_review_pack
    from generator.generate.review import (
        build_review_page,
        depend_on_deep_dives,
        write_review_page,
    )
    from generator.kb.paths import deep_dives_of, load_pages
    from generator.verification.pipeline import docs_root_for

    def build_after_deep_dives(client: Any, manifest: Any, *pull: Any, **options: Any) -> Any:
        page = build_review_page(client, manifest, *pull, **options)
        docs_root = docs_root_for(manifest, [manifest.root / "docs"])
        if docs_root.is_dir():
            found = deep_dives_of(load_pages(docs_root), page.pull.number, page.upstream)
            depend_on_deep_dives(page, found)
        return page

    return _pack_or_page(
        args,
        build_after_deep_dives,
        write_review_page,
        lambda page: (
            f"review of PR #{page.pull.number} ({page.lang}), {len(page.files)} files, "
            f"{len(page.test_files)} test files, {len(page.comments)} review comments, "
            f"pinned to {page.pull.head_sha[:12]}"
        ),
        build_review_pack,
        "review",
    )


def run_source(args: argparse.Namespace) -> int:
    from generator.generate.source import (
        Placement,
        complete_placement,
        default_output,
        generate_source_page,
    )
    from generator.verification.pipeline import docs_root_for

    manifest = load_manifest(args.manifest)
    output = args.output or default_output(
        docs_root_for(manifest, [manifest.root / "docs"]), args.path
    )
    placement = complete_placement(Placement.from_args(args), manifest, "source-analysis")
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
    print(f"wrote {shown(written)}")
    return EXIT_OK


HANDLERS = {"pr": run_pr, "review": run_review, "source": run_source}

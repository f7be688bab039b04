"""``specs validate|board`` and ``new spec|page``: LeanSpec governance and scaffolding."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from generator.cli.common import EXIT_FINDINGS, EXIT_OK
from generator.upstream.manifest import MANIFEST_NAME, ConfigError, find_manifest, load_manifest


def _commits(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of commits, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more commits, got {text!r}")
    return value


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    specs = commands.add_parser(
        "specs",
        help="validate the LeanSpec specs and page lifecycle; show the spec board",
        description="LeanSpec governance: specs/NNN-name/README.md, page lifecycle fields, "
        "learning paths, and the spec board.",
    )
    actions = specs.add_subparsers(dest="action", metavar="ACTION", parser_class=type(specs))
    actions.required = True
    validate = actions.add_parser(
        "validate",
        help="check specs, page lifecycle fields and learning paths",
        description="Check specs, page frontmatter (status, created, spec, ...) and learning "
        "paths. Exit status: 0 clean, 1 errors (or warnings with --strict), 2 configuration.",
    )
    _common(validate)
    validate.add_argument(
        "--format", choices=("text", "json", "github"), default="text", help="output format"
    )
    validate.add_argument("--strict", action="store_true", help="fail on warnings too")
    board = actions.add_parser(
        "board",
        help="each spec's pages by status, their reference health and computed criteria",
        description="Show each spec's pages grouped by status with their reference health, and "
        "its acceptance criteria computed from the verifier and git. Exit status 0 (1 with "
        "--check when a criterion is not met).",
    )
    _common(board)
    board.add_argument(
        "--format", choices=("text", "json", "markdown"), default="text", help="output format"
    )
    board.add_argument(
        "--max-behind",
        type=_commits,
        metavar="N",
        help="commits a pin may lag its upstream's branch (default: the spec's "
        "acceptance.max_commits_behind, else 20)",
    )
    board.add_argument("--check", action="store_true", help="exit 1 if a criterion is not met")

    new = commands.add_parser("new", help="scaffold a spec or a page from the templates")
    kinds = new.add_subparsers(dest="what", metavar="WHAT", parser_class=type(new))
    kinds.required = True
    spec = kinds.add_parser(
        "spec",
        help="create specs/NNN-name/README.md, numbered like LeanSpec",
        description="Create specs/NNN-NAME/README.md from the LeanSpec template.",
    )
    spec.add_argument("name", metavar="NAME", help="kebab-case name, e.g. memory-path")
    spec.add_argument("--title", help="the spec's title (default: from NAME)")
    spec.add_argument("--status", default="planned", help="initial status (default: planned)")
    spec.add_argument("--priority", default="medium", help="low|medium|high|critical")
    spec.add_argument("--tags", default="", help="comma-separated tags")
    spec.add_argument("--depends-on", action="append", default=[], metavar="SPEC")
    spec.add_argument("--parent", metavar="SPEC")
    spec.add_argument("--manifest", type=Path, metavar="FILE")
    page = kinds.add_parser(
        "page",
        help="create a page with lifecycle frontmatter, governed by a spec",
        description="Create a page under docs/ with the lifecycle fields, its spec, kind, "
        "level and paths, and a body skeleton for its kind.",
    )
    page.add_argument("path", nargs="?", metavar="PATH", help="docs-relative path (optional)")
    page.add_argument("--kind", required=True, help="pr-deep-dive|review|source-analysis|...")
    page.add_argument("--spec", required=True, help="the governing spec (id, number or name)")
    page.add_argument("--title", required=True)
    page.add_argument("--level", help="beginner|intermediate|advanced|expert")
    page.add_argument("--paths", default="", help="comma-separated learning paths")
    page.add_argument("--depends-on", action="append", default=[], metavar="PAGE")
    page.add_argument(
        "--lang",
        help="the page's language, e.g. en or zh (default: the title's: zh when it is "
        "mostly Chinese)",
    )
    page.add_argument("--upstream")
    page.add_argument("--status", default="draft")
    page.add_argument("--tags", default="")
    page.add_argument("--docs-root", type=Path, metavar="DIR")
    page.add_argument("--manifest", type=Path, metavar="FILE")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", type=Path, metavar="FILE")
    parser.add_argument("--docs-root", type=Path, metavar="DIR", help="default: docs")


def _root(args: argparse.Namespace) -> Path:
    manifest = args.manifest or find_manifest(Path.cwd())
    if manifest is not None:
        return manifest.parent
    if (Path.cwd() / ".lean-spec").is_dir() or (Path.cwd() / "specs").is_dir():
        return Path.cwd()
    raise ConfigError(
        f"no {MANIFEST_NAME} or .lean-spec/ in {Path.cwd()} or its parents",
        hint="run from the knowledge base, or pass --manifest PATH",
    )


def _governance_mode(args: argparse.Namespace) -> str:
    """The manifest's ``governance:`` (its default without a manifest)."""
    path = args.manifest or find_manifest(Path.cwd())
    return load_manifest(path).governance if path is not None else "lenient"


def _docs_root(args: argparse.Namespace, root: Path) -> Path:
    if args.docs_root:
        return args.docs_root
    docs = root / "docs"
    try:
        return docs.relative_to(Path.cwd())
    except ValueError:
        return docs


def run_specs(args: argparse.Namespace) -> int:
    from generator.kb.specs import load_governance

    root = _root(args)
    docs_root = _docs_root(args, root)
    if args.action == "validate":
        from generator.kb.specs import lenient

        governance = load_governance(root, docs_root)
        findings = governance.findings
        if _governance_mode(args) != "strict":  # as verify reports them (upstreams.yaml)
            findings = lenient(findings, governance.pages)
        from generator.verification.pipeline import Report
        from generator.verification.report import format_github, format_json, format_text

        report = Report(pages=len(governance.pages), findings=findings)
        if args.format == "json":
            sys.stdout.write(format_json(report))
        elif args.format == "github":
            sys.stdout.write(format_github(report))
        else:
            lines = format_text(report).splitlines()[:-1]
            checked = f"checked {len(governance.specs)} specs and {len(governance.pages)} pages"
            if findings:
                checked += f": {report.errors} errors, {report.warnings} warnings"
            else:
                checked += ": all good"
            text = "\n".join([*lines, checked]) + "\n"
            sys.stdout.write(text)
        return report.exit_code(strict=args.strict)
    from generator.verification.board import (
        board_json,
        build_board,
        format_board_markdown,
        format_board_text,
    )
    from generator.verification.pipeline import verify

    manifest_path = args.manifest or find_manifest(root)
    manifest = load_manifest(manifest_path) if manifest_path else None
    report = verify([docs_root], manifest_path=manifest_path) if manifest_path else None
    from generator.verification.pipeline import Report

    governance = load_governance(root, docs_root)
    board = build_board(governance, report or Report(), manifest, args.max_behind)
    if args.format == "json":
        sys.stdout.write(json.dumps(board_json(board), indent=2, ensure_ascii=False) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(format_board_markdown(board))
    else:
        sys.stdout.write(format_board_text(board))
    unmet = any(c.met is False for card in board.cards for c in card.criteria)
    return EXIT_FINDINGS if args.check and unmet else EXIT_OK


def run_new(args: argparse.Namespace) -> int:
    from generator.generate.pr import detect_language
    from generator.kb.scaffold import new_page, new_spec

    root = _root(args)
    split = lambda text: [t.strip() for t in text.split(",") if t.strip()]  # noqa: E731
    if args.what == "spec":
        created = new_spec(
            root,
            args.name,
            title=args.title,
            status=args.status,
            priority=args.priority,
            tags=split(args.tags),
            depends_on=args.depends_on,
            parent=args.parent,
        )
    else:
        manifest_path = args.manifest or find_manifest(root)
        if args.upstream is not None and manifest_path is not None:
            load_manifest(manifest_path).check_known([args.upstream])
        created = new_page(
            root,
            _docs_root(args, root),
            kind=args.kind,
            spec=args.spec,
            title=args.title,
            path=args.path,
            level=args.level,
            paths=split(args.paths),
            depends_on=args.depends_on,
            lang=args.lang or detect_language(args.title),
            upstream=args.upstream,
            status=args.status,
            tags=split(args.tags),
        )
    try:
        shown = created.path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        shown = created.path
    sys.stdout.write(f"created {shown}\n")
    for placed in created.placed:
        value = ", ".join(placed.value) if isinstance(placed.value, list) else placed.value
        sys.stdout.write(f"  {placed.key}: {value} ({placed.why})\n")
    return EXIT_OK


HANDLERS = {"specs": run_specs, "new": run_new}

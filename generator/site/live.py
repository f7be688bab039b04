"""What ``mkdocs serve`` adds to a page with findings, so the writer sees them where they are.

A one-off ``mkdocs build`` refuses a page with an error; ``mkdocs serve`` keeps serving it and
shows its findings on the page itself:

- each reference with an error finding is wrapped in a *mark* (`FindingMark`): a wavy red
  underline and a warning sign, its messages in the tooltip. Marks travel with the code links
  (`codelinks.mark_links`), so a mark sits exactly where the verifier found the reference;
- a *banner* (`banner`) at the top of the page lists every finding on it: severity, check id,
  line and message, with the help when there is one.

Both are added after the search plugin indexed the page, so neither reaches the search index;
all text in them comes from pages and is escaped. A page without findings gets neither. The
published site (``mkdocs build``) never has them.

`exempt_from_strict` keeps ``strict: true`` (or ``--strict``) from ending ``mkdocs serve`` on
the first warning: MkDocs counts warnings with a handler on its logger and aborts the build,
which stops ``serve`` at start-up and leaves it stuck on the last good build later.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from mkdocs.utils import CountHandler

from generator.kb.specs import load_config
from generator.model import Finding, ResolvedRef, Severity, printable
from generator.refs.extract.markdown import MarkdownLayout
from generator.site.codelinks import CodeLink, ref_span, taken_spans
from generator.upstream.manifest import ConfigError, load_manifest

MARK_CLASS = "kb-finding"
BANNER_CLASS = "kb-findings"

_STYLE = (
    "<style>"
    f".md-typeset .{MARK_CLASS}{{text-decoration:underline wavy #e53935;"
    "text-decoration-skip-ink:none;text-underline-offset:.2em;"
    "background:rgba(229,57,53,.1);cursor:help}"
    f".md-typeset .{MARK_CLASS} code{{text-decoration:inherit;color:#c62828}}"
    f'.md-typeset .{MARK_CLASS}::after{{content:"\\26a0";color:#e53935;'
    "font-size:.85em;margin-left:.15em}"
    f".md-typeset .{BANNER_CLASS} li{{margin:.25em 0}}"
    "</style>"
)
"""Inline, so the serve-only marks need no stylesheet in the site (a clean page gets none)."""


@dataclass(frozen=True)
class FindingMark:
    """Wrap ``text[start:end]`` (a broken reference) in a span that says what is wrong."""

    start: int
    end: int
    message: str
    """The reference's findings, one per line, as the tooltip shows them."""

    def opening(self) -> str:
        return (
            f'<span class="{MARK_CLASS}" title="{escape(self.message)}" '
            f'aria-label="{escape(self.message)}" tabindex="0">'
        )

    closing = "</span>"


def plan_marks(
    layout: MarkdownLayout, refs: Iterable[ResolvedRef], links: Sequence[CodeLink]
) -> tuple[list[CodeLink], list[FindingMark]]:
    """The marks for the page's references with an error, and its links without those that
    would share a mark's span (a code span citing a good and a broken reference is marked, not
    linked). A reference that cannot be marked where it stands (heading, fenced code, inside a
    link) is still listed in the banner."""
    taken = taken_spans(layout)
    by_span: dict[tuple[int, int], list[str]] = {}
    for resolved in refs:
        errors = [f for f in resolved.findings if f.severity is Severity.ERROR]
        if not errors:
            continue
        placed = ref_span(layout, resolved.ref, taken)
        if placed is None:
            continue
        by_span.setdefault(placed, []).extend(_one_line(f) for f in errors)
    marks = [FindingMark(start, end, "\n".join(lines)) for (start, end), lines in by_span.items()]
    marks.sort(key=lambda mark: mark.start)
    kept: list[FindingMark] = []
    for mark in marks:  # two references' spans may overlap only if one holds the other
        if kept and mark.start < kept[-1].end:
            continue
        kept.append(mark)
    free = [link for link in links if not any(_overlap(link, mark) for mark in kept)]
    return free, kept


def banner(findings: Sequence[Finding], page: str, problem: str | None = None) -> str:
    """The box listing the findings of ``page`` (its display path, ``docs/x.md``), for the top
    of its HTML: those on another file are named with it. ``problem`` is why nothing could be
    verified (a broken manifest). Empty without findings or problem."""
    if not findings and problem is None:
        return ""
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    kind = "failure" if errors or problem else "warning"
    count = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
    items = []
    if problem is not None:
        items.append(
            f"<li><strong>Nothing was verified</strong>: <code>{_text(problem)}</code></li>"
        )
    for finding in findings:
        where = f"line {finding.line}"
        if finding.page != page:
            where = f"{_text(finding.page)} {where}"
        help_text = f"<br><em>help: {_text(finding.suggestion)}</em>" if finding.suggestion else ""
        items.append(
            f"<li><code>{escape(str(finding.severity))}[{escape(finding.check)}]</code> "
            f"{where}: {_text(finding.message)}{help_text}</li>"
        )
    verdict = (
        "<code>mkdocs build</code> refuses to publish this site until these errors are fixed."
        if errors or problem
        else "<code>mkdocs build --strict</code> fails on these warnings."
    )
    return (
        f'<div class="admonition {kind} {BANNER_CLASS}" role="alert" data-search-exclude>'
        f"{_STYLE}"
        f'<p class="admonition-title">knowledge-base: {count} on this page</p>'
        f"<ul>{''.join(items)}</ul>"
        f"<p>Shown by <code>mkdocs serve</code> only; {verdict}</p></div>\n"
    )


def findings_by_page(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """The findings grouped by the page they are on (its display path, ``docs/x.md``)."""
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.page, []).append(finding)
    return grouped


def exempt_from_strict(logger: logging.Logger) -> bool:
    """Make this build's strict-mode counter on ``logger`` (MkDocs' own) count nothing: the
    messages are still printed, but none ends ``mkdocs serve``. Returns whether there was one
    (``strict`` is on)."""
    counters = [handler for handler in logger.handlers if isinstance(handler, CountHandler)]
    for counter in counters:
        if _count_nothing not in counter.filters:
            counter.addFilter(_count_nothing)
    return bool(counters)


def _count_nothing(record: logging.LogRecord) -> bool:
    return False


def watched_paths(root: Path, manifest: Path, theme_dir: str | None) -> list[Path]:
    """What a served site depends on beyond ``docs/`` and ``mkdocs.yml`` (which MkDocs watches
    itself): the manifest, the specs and LeanSpec's configuration and templates (the governance
    checks and the board read them), the theme's overrides, and the branches of the upstreams'
    clones (a fetch moves them, and with them each trust line's "behind"); those that exist."""
    candidates = [manifest, load_config(root).specs_dir, root / "specs", root / ".lean-spec"]
    if theme_dir:
        candidates.append(Path(theme_dir))
    try:
        upstreams = load_manifest(manifest).upstreams.values() if manifest.is_file() else ()
    except ConfigError:
        upstreams = ()  # (the build reports the manifest's problem)
    for upstream in upstreams:
        if upstream.clone_dir is not None:
            git_dir = upstream.clone_dir / ".git"
            candidates += [git_dir / "refs", git_dir / "packed-refs"]
    paths: list[Path] = []
    for path in candidates:
        path = path.resolve()
        if path.exists() and path not in paths:
            paths.append(path)
    return paths


def _overlap(link: CodeLink, mark: FindingMark) -> bool:
    return link.start < mark.end and mark.start < link.end


def _one_line(finding: Finding) -> str:
    return f"{finding.severity}[{finding.check}] {printable(finding.message)}"


def _text(text: str) -> str:
    return escape(printable(text))

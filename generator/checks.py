"""The checks: one stable id each, a default severity, and what it means.

The ids are part of the output's stable interface (text, JSON and GitHub annotations); never
rename one. `CHECKS` is also what ``--ignore`` validates against and what the docs list.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.model import Severity


@dataclass(frozen=True)
class Check:
    id: str
    severity: Severity
    summary: str


_E, _W = Severity.ERROR, Severity.WARNING

CHECKS: dict[str, Check] = {
    check.id: check
    for check in [
        Check("file-missing", _E, "the cited file does not exist at the pinned commit"),
        Check("range-invalid", _E, "the line range is reversed or starts at line 0"),
        Check("range-outside-file", _E, "the line range goes past the end of the file"),
        Check("range-blank", _W, "every cited line is blank"),
        Check("ambiguous-file", _E, "a bare or partial file name matches several files"),
        Check(
            "symbol-not-in-range", _E, "the symbol named next to the ref is not in the cited lines"
        ),
        Check(
            "symbol-not-found", _W, "the symbol named next to the ref does not occur in the file"
        ),
        Check("binary-file", _E, "a line range cites a binary file"),
        Check("not-a-file", _E, "the path is a directory, symbolic link or submodule"),
        Check("path-escape", _E, "the path leaves the repository (../../etc/passwd)"),
        Check("absolute-path", _W, "an absolute local path that maps onto an upstream"),
        Check("unattributed", _W, "no configured upstream claims the path"),
        Check("unpinned-permalink", _W, "a GitHub link names a branch or tag, not a commit"),
        Check("commit-missing", _E, "the commit is not in the upstream's clone"),
        Check(
            "unknown-upstream", _E, "the page's frontmatter names an upstream not in the manifest"
        ),
        Check("pin-invalid", _E, "the page's frontmatter pin is not a full commit SHA"),
        Check("link-missing", _E, "a relative link points at a file that does not exist"),
        Check("anchor-missing", _E, "a #fragment names no heading or anchor of the target page"),
        Check("link-outside-docs", _W, "a relative link leaves the docs directory (not published)"),
        Check("footnote-undefined", _W, "a footnote reference has no definition on the page"),
        Check("footnote-unused", _W, "a footnote definition has no reference on the page"),
        Check(
            "ref-needs-review",
            _W,
            "sync held this reference at an older commit: its code "
            "changed, was deleted or became ambiguous, or it was already wrong there",
        ),
        Check(
            "held-ref-unmatched", _W, "a held_refs entry names a reference no longer on the page"
        ),
        # Evidence (generator/refs/prove.py): the cited lines hold what the page says.
        Check(
            "quote-elsewhere",
            _E,
            "the code the page quotes for the ref is at other lines (or in another file)",
        ),
        Check(
            "quote-not-found",
            _E,
            "the code the page quotes for the ref is nowhere at the commit, or the cited lines "
            "hold none of it",
        ),
        Check(
            "quote-differs",
            _W,
            "the code the page quotes for the ref is in the cited lines only with lines the "
            "code does not have there, or in another order",
        ),
        Check("quote-unchecked", _W, "a quote that cannot be compared (unclosed block, binary)"),
        Check(
            "names-not-in-range",
            _W,
            "the identifiers the text names around the ref, or the one its sentence opens "
            "with, are elsewhere in the file, not in its lines",
        ),
        Check(
            "upstream-not-cloned",
            _W,
            "an upstream has no clone here: its references are not checked",
        ),
        Check("frontmatter-invalid", _E, "the frontmatter is not a valid YAML mapping"),
        Check("page-encoding", _E, "the page is not valid UTF-8"),
        Check(
            "page-unreadable",
            _E,
            "the page cannot be read: a special file, a broken link, too large, or refused",
        ),
        Check(
            "page-too-deep",
            _E,
            "the page nests lists or block quotes over 100 levels (renderers cannot take it)",
        ),
        Check(
            "page-too-many-refs",
            _E,
            "the page cites over 10,000 code references: only the first 10,000 are checked",
        ),
        Check(
            "page-outside-docs",
            _E,
            "the page is a symbolic link leading out of the docs directory (not read)",
        ),
        # Governance (generator/specs.py): LeanSpec fields of specs and pages; active when the
        # knowledge base has .lean-spec/ or specs/.
        Check("field-missing", _E, "a required lifecycle field (status, created) is missing"),
        Check("field-invalid", _E, "a lifecycle field has a value LeanSpec rejects (enum, date)"),
        Check("field-alias", _W, "a LeanSpec alias (in_progress, completed) instead of the value"),
        Check("page-no-spec", _E, "the page names no spec (spec: NNN-name)"),
        Check("page-spec-unknown", _E, "the page names a spec that does not exist"),
        Check("spec-config-invalid", _E, ".lean-spec/config.json is malformed"),
        Check("spec-name", _E, "a spec folder is not NNN-kebab-name"),
        Check("spec-number-conflict", _E, "two specs share one sequence number"),
        Check("spec-title", _E, "a spec does not have exactly one '# Title'"),
        Check("spec-section-empty", _W, "a spec section has no content"),
        Check("spec-too-long", _W, "a spec is over the token budget (error over maxTokens)"),
        Check("spec-link-missing", _E, "depends_on or parent names no existing spec"),
        Check("spec-cycle", _E, "depends_on or parent links of specs form a cycle"),
        Check("spec-incomplete-plan", _E, "a complete spec still has unchecked plan items"),
        # Learning paths (generator/paths.py).
        Check("prerequisite-missing", _E, "depends_on names a page that does not exist"),
        Check("prerequisite-cycle", _E, "the pages' prerequisites form a cycle"),
        Check("path-order-conflict", _E, "a page comes before its prerequisite in a path"),
        Check("page-not-in-path", _E, "the page is in no learning path"),
        Check("path-page-missing", _E, "a path's page list names a page that does not exist"),
        Check("path-index-duplicate", _W, "a path has two index pages in one language"),
        Check("path-no-index", _W, "a page names a path with no index page, named like another"),
        Check("level-invalid", _E, "level is not beginner, intermediate, advanced or expert"),
        Check("order-invalid", _E, "order is not an integer"),
        # Site build (generator/site): reported by `mkdocs build`, which --strict fails on.
        Check("frontmatter-missing", _W, "the page has no frontmatter (no title, level or path)"),
        Check("mermaid-syntax", _W, "a Mermaid diagram cannot render (unknown type, unclosed)"),
        # Required diagrams (generator/diagrams.py): from the page's kind or `diagrams: N`.
        Check(
            "diagram-missing",
            _W,
            "a diagram the page's kind requires is missing (or not 'N/A - reason')",
        ),
        # Mandatory sections (generator/sections.py): from the page's kind, in the seed's order.
        Check("section-missing", _W, "a section the page's kind requires is missing"),
        Check("section-order", _W, "a required section comes before one the seed puts first"),
        # Review items (generator/generate/review.py), checked by ingest and the review export.
        Check("review-item-severity", _E, "a review finding has no severity (P0 to P3)"),
        Check("review-item-ref", _W, "a review finding cites no file:line"),
        Check("review-line-unchanged", _E, "a review finding cites a line the PR does not change"),
        Check("no-code-refs", _W, "an analysis page cites no code (file:line) at all"),
    ]
}


REFERENCE_ERROR_CHECKS = frozenset(
    {
        "file-missing",
        "range-invalid",
        "range-outside-file",
        "ambiguous-file",
        "symbol-not-in-range",
        "binary-file",
        "not-a-file",
        "path-escape",
        "commit-missing",
        "unknown-upstream",
        "pin-invalid",
        "quote-elsewhere",
        "quote-not-found",
    }
)
"""The errors that make a code reference invalid: ignoring any of them means the spec board
cannot say that all references are valid."""

LINK_ERROR_CHECKS = frozenset({"link-missing", "anchor-missing"})
"""The errors of a broken link or anchor."""

PAGE_GOVERNANCE_CHECKS = frozenset(
    {
        "field-missing",
        "field-invalid",
        "page-no-spec",
        "prerequisite-missing",
        "prerequisite-cycle",
        "path-order-conflict",
        "page-not-in-path",
        "path-page-missing",
        "level-invalid",
        "order-invalid",
    }
)
"""What a knowledge base asks of a page's frontmatter (lifecycle, spec, learning paths), as
opposed to what makes a page wrong (its references, links and anchors). On a page that names no
spec, under ``governance: lenient`` (the default), these are warnings: a page not yet placed in
the knowledge base (a fresh import) is published, and a page that is wrong is not."""


def severity_of(check_id: str) -> Severity:
    return CHECKS[check_id].severity

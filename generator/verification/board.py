"""The spec board: each spec's pages by status, their reference health, and computed criteria.

``python -m generator specs board [--format text|json|markdown]``. The acceptance criteria the
tool can measure are computed from the verifier's report and git, never ticked by hand:

- ``refs-valid``: every code reference resolves at its pin (count: references with an error);
- ``links-valid``: no broken link or anchor (count: link-missing + anchor-missing findings);
- ``pages-in-paths``: every page is in a learning path (count: pages in none);
- ``diagrams-present``: every required Mermaid diagram is there (`generator.kb.diagrams`: derived
  from the page's kind, e.g. a ``pr-deep-dive`` draws one in sections 2.1, 4.2, 4.3 and 5 or
  says ``N/A - reason``; a page's ``diagrams: N`` or the spec's
  ``acceptance: {diagrams: {KIND: N}}`` overrides; count: pages short of their diagrams);
- ``pins-fresh``: no page's pin is more than N commits behind its upstream's tracked branch
  (``acceptance: {max_commits_behind: N}``, default 20; counted with ``git rev-list`` in the
  clone; not measurable, with the reason, when the clone or the commit is missing).

JSON schema (version 1; fields are only ever added)::

    {"version": 1,
     "specs": [{"id": str, "title": str, "status": str|null, "priority": str|null, "path": str,
                "pages": {STATUS: [{"page": str, "title": str, "status": str|null,
                                    "refs": int, "ref_errors": int, "ref_warnings": int,
                                    "broken_links": int, "errors": int, "warnings": int,
                                    "paths": [str], "index_of": str|null, "diagrams": int,
                                    "diagrams_required": int, "diagrams_met": int,
                                    "diagrams_missing": [str],
                                    "commits_behind": int|null}]},
                "criteria": [{"id": str, "title": str, "met": bool|null, "count": int|null,
                              "total": int|null, "detail": str, "ignored": [str]}],
                "plan": {"done": int, "total": int}, "test": {"done": int, "total": int}}],
     "unassigned": [page, ...]}
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from generator.checks import LINK_ERROR_CHECKS, REFERENCE_ERROR_CHECKS
from generator.kb.diagrams import diagram_status
from generator.kb.paths import NO_PATH_KINDS, as_list
from generator.kb.specs import SPEC_STATUSES, Governance, Spec, mermaid_count, normalise
from generator.model import Severity
from generator.refs.resolve import names_a_commit
from generator.upstream.manifest import Manifest
from generator.verification.pipeline import Report
from generator.verification.report import plural

DEFAULT_MAX_BEHIND = 20
BOARD_SCHEMA_VERSION = 1
_LINK_CHECKS = LINK_ERROR_CHECKS


@dataclass
class PageHealth:
    page: str
    rel: str
    title: str
    status: str | None
    refs: int = 0
    ref_errors: int = 0
    ref_warnings: int = 0
    broken_links: int = 0
    errors: int = 0
    warnings: int = 0
    paths: list[str] = field(default_factory=list)
    diagrams: int = 0
    """Mermaid diagrams on the page, in all."""
    diagrams_required: int = 0
    diagrams_met: int = 0
    """Required diagrams present (or ``N/A - reason``), of ``diagrams_required``."""
    diagrams_missing: list[str] = field(default_factory=list)
    commits_behind: int | None = None
    behind_reason: str | None = None
    kind: str | None = None
    index_of: str | None = None
    """The learning path whose index this page is."""
    exempt_from_paths: bool = False

    def paths_text(self) -> str:
        """Its paths, as the board lists them: a path's index page says whose it is."""
        if self.paths:
            return ", ".join(self.paths)
        return f"index of {self.index_of}" if self.index_of else "none"

    def as_json(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "title": self.title,
            "status": self.status,
            "refs": self.refs,
            "ref_errors": self.ref_errors,
            "ref_warnings": self.ref_warnings,
            "broken_links": self.broken_links,
            "errors": self.errors,
            "warnings": self.warnings,
            "paths": self.paths,
            "index_of": self.index_of,
            "diagrams": self.diagrams,
            "diagrams_required": self.diagrams_required,
            "diagrams_met": self.diagrams_met,
            "diagrams_missing": self.diagrams_missing,
            "commits_behind": self.commits_behind,
        }


@dataclass
class Criterion:
    id: str
    title: str
    met: bool | None
    """``None``: not measurable (see ``detail``)."""
    count: int | None
    total: int | None
    detail: str
    ignored: tuple[str, ...] = ()
    """The checks it rests on that the run skipped: then it is not measured (``met`` None)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "met": self.met,
            "count": self.count,
            "total": self.total,
            "detail": self.detail,
            "ignored": list(self.ignored),
        }


def _unless_ignored(
    criterion: Criterion, checks: frozenset[str], ignored: frozenset[str]
) -> Criterion:
    """``criterion``, or, when the run skipped checks it rests on, the same saying so: a
    criterion is never met because its checks were not run."""
    skipped = tuple(sorted(checks & ignored))
    if not skipped:
        return criterion
    return Criterion(
        criterion.id,
        criterion.title,
        None,
        None,
        None,
        f"not measured: {', '.join(skipped)} ignored",
        skipped,
    )


@dataclass
class SpecCard:
    spec: Spec
    pages: dict[str, list[PageHealth]]
    criteria: list[Criterion]
    plan: tuple[int, int]
    test: tuple[int, int]


@dataclass
class Board:
    cards: list[SpecCard]
    unassigned: list[PageHealth]


def build_board(
    governance: Governance,
    report: Report,
    manifest: Manifest | None = None,
    max_behind: int | None = None,
) -> Board:
    curriculum = governance.curriculum
    overrides = governance.diagram_overrides()
    health: dict[str, PageHealth] = {}
    for page in governance.pages:
        entry = curriculum.pages.get(page.rel)
        status = normalise("status", page.meta.get("status"))[0]
        diagrams = diagram_status(page, overrides.get(page.rel))
        health[page.display] = PageHealth(
            page=page.display,
            rel=page.rel,
            title=entry.title if entry else page.rel,
            status=status,
            paths=list(entry.paths) if entry else [],
            diagrams=(
                diagrams.present
                if diagrams
                else (mermaid_count(page.body) if page.text is not None else 0)
            ),
            diagrams_required=diagrams.required if diagrams else 0,
            diagrams_met=diagrams.met if diagrams else 0,
            diagrams_missing=diagrams.missing if diagrams else [],
            kind=entry.kind if entry else None,
            index_of=entry.index_of if entry else None,
            exempt_from_paths=bool(entry and (entry.index_of or entry.kind in NO_PATH_KINDS)),
        )
    pins: dict[str, set[tuple[str, str]]] = {}
    for resolved in report.refs:
        item = health.get(resolved.ref.page)
        if item is None:
            continue
        item.refs += 1
        if resolved.status == "error":
            item.ref_errors += 1
        elif resolved.status == "warning":
            item.ref_warnings += 1
        if resolved.upstream and resolved.commit and not names_a_commit(resolved.ref):
            # (A permalink to a commit points there on purpose: the page is no staler for it.)
            pins.setdefault(item.page, set()).add((resolved.upstream, resolved.commit))
    for finding in report.findings:
        item = health.get(finding.page)
        if item is None:
            continue
        if finding.check in _LINK_CHECKS:
            item.broken_links += 1
        if finding.severity is Severity.ERROR:
            item.errors += 1
        else:
            item.warnings += 1
    counter = BehindCounter(manifest)
    for item in health.values():
        item.commits_behind, item.behind_reason = counter.behind(pins.get(item.page, set()))

    cards = []
    assigned: set[str] = set()
    for spec in governance.specs:
        pages = [health[p.display] for p in governance.pages_of(spec) if p.display in health]
        assigned.update(p.page for p in pages)
        acceptance = spec.meta.get("acceptance")
        acceptance = acceptance if isinstance(acceptance, dict) else {}
        limit = max_behind
        if limit is None:
            value = acceptance.get("max_commits_behind")
            limit = value if isinstance(value, int) else DEFAULT_MAX_BEHIND
        grouped: dict[str, list[PageHealth]] = {}
        for status in (*SPEC_STATUSES, None):
            members = [p for p in pages if p.status == status]
            if members:
                grouped[status or "unknown"] = members
        plan = spec.checklist("Plan")
        test = spec.checklist("Test")
        cards.append(
            SpecCard(
                spec,
                grouped,
                _criteria(pages, limit, report.ignored),
                (sum(done for done, _ in plan), len(plan)),
                (sum(done for done, _ in test), len(test)),
            )
        )
    unassigned = [item for page, item in health.items() if page not in assigned]
    return Board(cards, unassigned)


_CRITERIA = (
    ("refs-valid", "all code references valid at their pin"),
    ("links-valid", "no broken link or anchor"),
    ("pages-in-paths", "every page in a learning path"),
    ("diagrams-present", "every required diagram present"),
    ("pins-fresh", "no page more than {limit} commits behind its upstream's branch"),
)
"""Each computed criterion's id and title, in the board's order."""


def _criteria(
    pages: list[PageHealth], limit: int, ignored: frozenset[str] = frozenset()
) -> list[Criterion]:
    live = [p for p in pages if p.status != "archived"]
    if not live:  # nothing to measure is not a criterion met
        return [
            Criterion(
                name,
                title.format(limit=limit),
                None,
                None,
                None,
                "not measured: no page names this spec yet",
            )
            for name, title in _CRITERIA
        ]
    refs = sum(p.refs for p in live)
    bad_refs = sum(p.ref_errors for p in live)
    links = sum(p.broken_links for p in live)
    unplaced = [p for p in live if not p.paths and not _exempt(p)]
    placed_total = len([p for p in live if not _exempt(p)])
    needing = [p for p in live if p.diagrams_required]
    short = [p for p in needing if p.diagrams_met < p.diagrams_required]
    required_diagrams = sum(p.diagrams_required for p in needing)
    met_diagrams = sum(p.diagrams_met for p in needing)
    measured = [p for p in live if p.commits_behind is not None]
    stale = [p for p in measured if p.commits_behind is not None and p.commits_behind > limit]
    unmeasured = [p for p in live if p.commits_behind is None and p.refs]
    if measured:
        worst = max(p.commits_behind or 0 for p in measured)
        fresh_detail = f"{len(stale)} of {len(measured)} pages more than {limit} commits behind"
        fresh_detail += f" (most: {worst})"
        if unmeasured:
            fresh_detail += f"; {len(unmeasured)} not measurable ({unmeasured[0].behind_reason})"
        fresh = Criterion(
            "pins-fresh",
            f"no page more than {limit} commits behind its upstream's branch",
            not stale,
            len(stale),
            len(measured),
            fresh_detail,
        )
    else:
        reason = unmeasured[0].behind_reason if unmeasured else "no page cites an upstream"
        fresh = Criterion(
            "pins-fresh",
            f"no page more than {limit} commits behind its upstream's branch",
            None if unmeasured else True,
            None if unmeasured else 0,
            None if unmeasured else 0,
            f"not measurable yet: {reason}" if unmeasured else reason,
        )
    return [
        _unless_ignored(
            Criterion(
                "refs-valid",
                "all code references valid at their pin",
                bad_refs == 0,
                bad_refs,
                refs,
                f"{bad_refs} of {refs} references invalid",
            ),
            REFERENCE_ERROR_CHECKS,
            ignored,
        ),
        _unless_ignored(
            Criterion(
                "links-valid",
                "no broken link or anchor",
                links == 0,
                links,
                None,
                f"{links} broken links or anchors",
            ),
            LINK_ERROR_CHECKS,
            ignored,
        ),
        Criterion(
            "pages-in-paths",
            "every page in a learning path",
            not unplaced,
            len(unplaced),
            placed_total,
            f"{len(unplaced)} of {placed_total} pages in no path"
            + (": " + ", ".join(p.rel for p in unplaced[:3]) if unplaced else ""),
        ),
        Criterion(
            "diagrams-present",
            "every required diagram present",
            not short,
            len(short),
            len(needing),
            (
                f"{len(short)} of {len(needing)} pages that require diagrams lack some "
                f"({met_diagrams} of {required_diagrams} required diagrams present)"
                + (
                    ": " + "; ".join(f"{p.rel}: {', '.join(p.diagrams_missing)}" for p in short[:3])
                    if short
                    else ""
                )
            )
            if needing
            else "no page requires a diagram (a pr-deep-dive does; or set 'diagrams: N')",
        ),
        fresh,
    ]


def _exempt(page: PageHealth) -> bool:
    return page.exempt_from_paths


class BehindCounter:
    """Commits between a pin and its upstream's tracked branch head, one git call per pair."""

    def __init__(self, manifest: Manifest | None) -> None:
        self.manifest = manifest
        self.cache: dict[tuple[str, str], tuple[int | None, str | None, bool]] = {}

    def behind(self, pins: set[tuple[str, str]]) -> tuple[int | None, str | None]:
        if not pins:
            return None, "no code reference"
        worst: int | None = None
        reason = None
        for pin in sorted(pins):
            count, why = self.count(*pin)
            if count is None:
                reason = why
                continue
            worst = count if worst is None else max(worst, count)
        return worst, reason

    def count(self, upstream: str, commit: str) -> tuple[int | None, str | None]:
        """Commits of the branch's head that ``commit`` lacks, or None and why not."""
        behind, reason, _ = self._counted(upstream, commit)
        return behind, reason

    def place(self, upstream: str, commit: str) -> tuple[int | None, bool]:
        """`count`, and whether ``commit`` is off the branch (a pull request's head: commits
        of its own that the branch lacks), for a reader who would take "behind" for "older"."""
        behind, _, off_branch = self._counted(upstream, commit)
        return behind, off_branch

    def _counted(self, upstream: str, commit: str) -> tuple[int | None, str | None, bool]:
        key = (upstream, commit)
        if key not in self.cache:
            self.cache[key] = self._count(upstream, commit)
        return self.cache[key]

    def _count(self, name: str, commit: str) -> tuple[int | None, str | None, bool]:
        if self.manifest is None or name not in self.manifest.upstreams:
            return None, f"upstream {name} is not in the manifest", False
        upstream = self.manifest.upstreams[name]
        clone = upstream.clone_dir
        if clone is None or not Path(clone).exists():
            return None, f"{name} is not cloned (run 'kb upstreams fetch {name}')", False
        for head in (f"refs/remotes/origin/{upstream.branch}", f"refs/heads/{upstream.branch}"):
            # (One walk for both sides: the branch's commits the pin lacks, and the pin's the
            # branch lacks.)
            result = subprocess.run(
                [
                    "git",
                    "-C",
                    str(clone),
                    "rev-list",
                    "--left-right",
                    "--count",
                    f"{head}...{commit}",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            counts = result.stdout.split()
            if result.returncode == 0 and len(counts) == 2 and all(c.isdigit() for c in counts):
                return int(counts[0]), None, int(counts[1]) > 0
        return None, f"{name}: {commit[:12]} or branch {upstream.branch} not in the clone", False


# --------------------------------------------------------------------------------------------
# Output


def board_json(board: Board) -> dict[str, Any]:
    return {
        "version": BOARD_SCHEMA_VERSION,
        "specs": [
            {
                "id": card.spec.id,
                "title": card.spec.title,
                "status": card.spec.status,
                "priority": card.spec.priority,
                "path": card.spec.display,
                "pages": {
                    status: [p.as_json() for p in pages] for status, pages in card.pages.items()
                },
                "criteria": [c.as_json() for c in card.criteria],
                "plan": {"done": card.plan[0], "total": card.plan[1]},
                "test": {"done": card.test[0], "total": card.test[1]},
            }
            for card in board.cards
        ],
        "unassigned": [p.as_json() for p in board.unassigned],
    }


def _mark(criterion: Criterion) -> str:
    if criterion.ignored:
        return "ignored"
    return {True: "met", False: "NOT MET", None: "n/a"}[criterion.met]


def format_board_text(board: Board) -> str:
    lines: list[str] = []
    for card in board.cards:
        spec = card.spec
        tags = ", ".join(str(t) for t in as_list(spec.meta.get("tags")))
        lines.append(
            f"{spec.id}  {spec.title}  [{spec.status or '?'}"
            f"{', ' + spec.priority if spec.priority else ''}]"
            + (f"  tags: {tags}" if tags else "")
        )
        total = sum(len(p) for p in card.pages.values())
        counts = ", ".join(f"{status} {len(pages)}" for status, pages in card.pages.items())
        lines.append(f"  pages: {total} ({counts})" if total else "  pages: none")
        for status, pages in card.pages.items():
            lines.append(f"    {status}")
            for page in pages:
                behind = "" if page.commits_behind is None else f", {page.commits_behind} behind"
                if page.diagrams_required:
                    behind += f", diagrams {page.diagrams_met}/{page.diagrams_required}"
                    if page.diagrams_missing:
                        behind += " (missing: " + "; ".join(page.diagrams_missing) + ")"
                lines.append(
                    f"      {page.page}  refs {page.refs} ({page.ref_errors} errors, "
                    f"{page.ref_warnings} warnings), broken links {page.broken_links}"
                    f"{behind}, paths: {page.paths_text()}"
                )
        lines.append("  acceptance criteria (computed)")
        for criterion in card.criteria:
            lines.append(f"    [{_mark(criterion):7}] {criterion.title}: {criterion.detail}")
        lines.append(
            f"  plan {card.plan[0]}/{card.plan[1]} done, test {card.test[0]}/{card.test[1]} ticked"
        )
        lines.append("")
    if board.unassigned:
        lines.append("pages governed by no spec:")
        lines.extend(f"  {page.page}" for page in board.unassigned)
    return "\n".join(lines).rstrip() + "\n"


def _cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown_mark(criterion: Criterion) -> str:
    if criterion.ignored:
        return "**not measured** (checks ignored)"
    return {True: "met", False: "**not met**", None: "n/a"}[criterion.met]


def format_board_markdown(board: Board, link_prefix: str = "", intro: str = "") -> str:
    """The board as a Markdown page (for the site): per spec, its computed criteria with the
    count behind each, then its pages grouped by status with their reference health.

    Page links are ``link_prefix`` + the page's docs-relative path.
    """
    out = ["# Spec board", ""]
    if intro:
        out += [intro, ""]
    if not board.cards:
        out += ["No spec governs this knowledge base yet (`kb new spec`).", ""]
    for card in board.cards:
        spec = card.spec
        facts = [f"`{spec.id}`", f"status **{spec.status or '?'}**"]
        if spec.priority:
            facts.append(f"priority {spec.priority}")
        facts.append(f"plan {card.plan[0]}/{card.plan[1]} done")
        facts.append(f"test {card.test[0]}/{card.test[1]} ticked")
        met = sum(1 for c in card.criteria if c.met)
        out += [f"## {spec.title}", "", " · ".join(facts), ""]
        skipped = sum(1 for c in card.criteria if c.ignored)
        if all(c.met is None for c in card.criteria) and not skipped:
            heading = "### Acceptance criteria: not measured yet (no pages)"
        else:
            heading = f"### Acceptance criteria: {met} of {len(card.criteria)} met" + (
                f", {skipped} not measured (checks ignored)" if skipped else ""
            )
        out += [heading, ""]
        # Three columns, to fit a phone's screen: the detail starts with the count.
        out += ["| Criterion | Result | Detail |", "|---|---|---|"]
        for criterion in card.criteria:
            out.append(
                f"| {_cell(criterion.title)} | {_markdown_mark(criterion)} | "
                f"{_breakable(_cell(criterion.detail))} |"
            )
        out.append("")
        total = sum(len(pages) for pages in card.pages.values())
        out += [f"### Pages by status ({total})", ""]
        if not total:
            out += ["No page names this spec yet.", ""]
        for status, pages in card.pages.items():
            out += [f"#### {status} ({len(pages)})", ""]
            out += _pages_table(pages, link_prefix)
    if board.unassigned:
        out += [f"## Pages governed by no spec ({len(board.unassigned)})", ""]
        out += _pages_table(board.unassigned, link_prefix)
    return "\n".join(out)


def _pages_table(pages: list[PageHealth], link_prefix: str) -> list[str]:
    """A spec's pages, three columns wide so that the table fits a phone's screen: the page,
    its health (one fact a line) and its paths."""
    out = ["| Page | Health | Paths |", "|---|---|---|"]
    for page in pages:
        # A table cell first (backslashes, pipes), then link text (brackets): each escaped once.
        title = _cell(page.title).replace("[", "\\[").replace("]", "\\]")
        # A name's `#`, `?`, space or bracket would end or break the link's target.
        href = quote(link_prefix + page.rel, safe="/:.-_~")
        facts = [
            f"{plural(page.refs, 'ref')}: {plural(page.ref_errors, 'error')}, "
            f"{plural(page.ref_warnings, 'warning')}",
            plural(page.broken_links, "broken link"),
        ]
        if page.diagrams_required:
            diagrams = f"diagrams {page.diagrams_met}/{page.diagrams_required}"
            diagrams += (
                " met" if not page.diagrams_missing else ": " + "; ".join(page.diagrams_missing)
            )
        else:
            diagrams = f"{plural(page.diagrams, 'diagram')} (none required)"
        facts.append(diagrams)
        if page.commits_behind is not None:
            facts.append(f"{plural(page.commits_behind, 'commit')} behind")
        health = "<br>".join(_breakable(_cell(fact)) for fact in facts)
        out.append(
            f"| [{_breakable(title)}]({href}) | {health} | {_breakable(_cell(page.paths_text()))} |"
        )
    out.append("")
    return out


def _breakable(cell: str) -> str:
    """A cell's text that may break after a ``/``: a page's path is one long word otherwise,
    and a table cell holding one cannot be narrower than it."""
    return cell.replace("/", "/<wbr>")

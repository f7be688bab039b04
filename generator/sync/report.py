"""The drift report of a sync: Markdown for people, JSON for machines.

Written to ``.cache/reports/drift-UPSTREAM-OLD-NEW.{md,json}`` by default.

The Markdown report is meant to be read: the figures first, then one short entry per reference
to review, with the changed lines of the cited code and a little context, capped (a cited body
can be a thousand lines long), then the references it did not resolve and, capped, the rewrites
(which ``git diff`` shows anyway). The JSON report holds everything, full texts included.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from generator.sync.journal import Journal
from generator.sync.reanchor import DriftStatus
from generator.sync.run import HELD, RefDrift, SyncPlan
from generator.verification.report import plural

EXCERPT_LINES = 12
"""Lines of cited code shown per reference in the Markdown report, at most."""
EXCERPT_CONTEXT = 2
"""Unchanged lines shown around each changed line of an excerpt."""
EXCERPT_WIDTH = 160
"""Characters shown of one line of an excerpt, at most."""
REWRITES_LISTED = 200
"""Rewritten references listed in the Markdown report, at most (the JSON lists all)."""


def report_json(plan: SyncPlan) -> dict[str, Any]:
    return {
        "version": 1,
        "upstream": plan.upstream.name,
        "from": plan.old,
        "to": plan.target,
        "summary": dict(sorted(plan.counts().items())),
        "pages": len(plan.pages),
        "skipped_pinned_pages": plan.skipped_pinned,
        "refs": [drift.as_json() for drift in plan.drifts],
        "unresolved": [ref.as_json() for ref in plan.unresolved],
    }


def report_markdown(plan: SyncPlan) -> str:
    counts = plan.counts()
    name = plan.upstream.name
    old, new = plan.old[:7], plan.target[:7]
    lines = [
        f"# Drift report: {name} {old} → {new}",
        "",
        f"{plural(len(plan.drifts), 'reference')} on {plural(len(plan.pages), 'page')}: "
        + (", ".join(f"{counts[str(s)]} {s}" for s in DriftStatus if counts[str(s)]) or "none"),
        "",
    ]
    if plan.unresolved:
        lines += [
            f"{len(plan.unresolved)} references resolved to no single file at {old} and were "
            "left as written: " + plan.unresolved_summary() + ".",
            "",
        ]
    if plan.skipped_pinned:
        lines += [
            "Pages left alone because they have their own pin (use "
            "`--include-pinned-pages` to move them too): "
            + ", ".join(f"`{p}`" for p in plan.skipped_pinned),
            "",
        ]
    review = [d for d in plan.drifts if d.drift.status in (*HELD, DriftStatus.WAS_BROKEN)]
    if review:
        by_page = Counter(item.page for item in review)
        lines += [
            "## For review",
            "",
            "These references were not rewritten. Changed, deleted and ambiguous ones stay "
            f"anchored at {old} (recorded under `held_refs` in the page) until someone updates "
            f"them. Excerpts show at most {EXCERPT_LINES} lines; the JSON report beside this "
            "one has the full texts.",
            "",
            "| page | to review |",
            "|---|---|",
            *(f"| `{page}` | {count} |" for page, count in sorted(by_page.items())),
            "",
        ]
        for item in review:
            lines += _review_entry(item, old, new)
    if plan.unresolved:
        lines += [
            f"## Not resolved at {old}",
            "",
            "Sync cannot tell which file these cite, so they were neither moved nor held; "
            "`verify` reports them too.",
            "",
        ]
        lines += [
            f"- `{ref.page}:{ref.line}` {_code(ref.text)}: {ref.reason}" for ref in plan.unresolved
        ]
        lines.append("")
    moved = [d for d in plan.drifts if d.new_text]
    if moved:
        lines += ["## Rewritten", "", "| page | was | now | why |", "|---|---|---|---|"]
        for item in moved[:REWRITES_LISTED]:
            lines.append(
                f"| `{item.page}:{item.line}` | {_code(item.text)} | {_code(item.new_text or '')}"
                f" | {_cell(item.drift.reason or str(item.drift.status))} |"
            )
        if len(moved) > REWRITES_LISTED:
            lines += [
                "",
                f"… and {len(moved) - REWRITES_LISTED} more rewrites, in the JSON report and in "
                "`git diff` of the pages.",
            ]
        lines.append("")
    return "\n".join(lines)


def _review_entry(item: RefDrift, old: str, new: str) -> list[str]:
    drift = item.drift
    lines = [f"### `{item.page}:{item.line}` {_code(item.text)} — {drift.status}", ""]
    lines.append(drift.reason + ".")
    if drift.candidates:
        lines.append("")
    for path, first, last in drift.candidates:
        lines.append(f"- candidate at {new}: `{path}:{first}-{last}`")
    if drift.more_candidates:
        lines.append(f"- … and {drift.more_candidates} less plausible ones")
    if drift.status is not DriftStatus.WAS_BROKEN and drift.old_lines:
        lines.append("")
        if drift.new_lines:
            lines += [f"Cited at {old} → candidate at {new}:", ""]
            lines += _fenced(excerpt_diff(drift.old_lines, drift.new_lines), "diff")
        else:
            lines += [f"Cited at {old}:", ""]
            lines += _fenced(excerpt(drift.old_lines, drift.old_start or 1))
    lines.append("")
    return lines


def excerpt_diff(old: list[str], new: list[str]) -> list[str]:
    """The changed lines of ``old`` → ``new`` with `EXCERPT_CONTEXT` lines around them, as a
    unified diff without headers, cut at `EXCERPT_LINES` lines."""
    body = [
        line
        for line in difflib.unified_diff(old, new, lineterm="", n=EXCERPT_CONTEXT)
        if not line.startswith(("---", "+++"))
    ]
    if not body:
        body = [" " + line for line in old]  # the same text: only its place changed
    return _capped(body)


def excerpt(code: list[str], first_line: int) -> list[str]:
    """The first lines of ``code``, numbered from ``first_line``, cut at `EXCERPT_LINES`."""
    width = len(str(first_line + len(code)))
    return _capped([f"{first_line + n:>{width}}  {line}" for n, line in enumerate(code)])


def _capped(lines: list[str]) -> list[str]:
    shown = [
        line if len(line) <= EXCERPT_WIDTH else line[: EXCERPT_WIDTH - 1] + "…"
        for line in lines[:EXCERPT_LINES]
    ]
    if len(lines) > EXCERPT_LINES:
        shown.append(f"… {len(lines) - EXCERPT_LINES} more lines in the JSON report")
    return shown


def _code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds, safe in a table cell."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{_cell(text)}{pad}{ticks}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fenced(code: list[str], info: str = "") -> list[str]:
    """Code in a fence longer than any backtick run inside it, so the report cannot break."""
    longest = max((len(run) for line in code for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *code, fence]


def report_paths(plan: SyncPlan, directory: Path) -> list[Path]:
    """Where the Markdown and the JSON report of ``plan`` go."""
    stem = f"drift-{plan.upstream.name}-{plan.old[:7]}-{plan.target[:7]}"
    return [directory / f"{stem}.md", directory / f"{stem}.json"]


def report_files(plan: SyncPlan, directory: Path) -> list[tuple[Path, bytes]]:
    """The Markdown and the JSON report of ``plan``, each with the path it goes to."""
    markdown, data = report_paths(plan, directory)
    return [
        (markdown, report_markdown(plan).encode("utf-8")),
        (data, (json.dumps(report_json(plan), ensure_ascii=False) + "\n").encode()),
    ]


def reports_left_by(journal: Journal, plan: SyncPlan, directory: Path) -> list[Path]:
    """The reports of a sync of the same upstream to the same commit that an interrupted run
    wrote (the journal, resumed, keeps only files still holding that run's bytes), the
    Markdown report first; none unless both are there. That run wrote them before any page,
    so they cover every page of the sync: the ones it wrote and the ones left for the rerun,
    whose plan only knows the latter. When the killed run had already moved the pin, the
    rerun's plan starts from the new commit: only the target is compared."""
    name = re.compile(
        rf"drift-{re.escape(plan.upstream.name)}-[0-9a-f]{{7}}-{plan.target[:7]}\.(md|json)"
    )
    found = [
        Path(path)
        for path in journal.files
        if Path(path).parent == directory.resolve() and name.fullmatch(Path(path).name)
    ]
    # Both or neither: one alone means the run was killed between them, before any page.
    return sorted(found, key=lambda path: path.suffix != ".md") if len(found) == 2 else []

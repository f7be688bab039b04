"""The drift report of a sync: Markdown for people, JSON for machines.

Written to ``.cache/reports/drift-UPSTREAM-OLD-NEW.{md,json}`` by default.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from generator.files import atomic_write
from generator.sync.reanchor import DriftStatus
from generator.sync.run import HELD, SyncPlan


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
    }


def report_markdown(plan: SyncPlan) -> str:
    counts = plan.counts()
    name = plan.upstream.name
    lines = [
        f"# Drift report: {name} {plan.old[:7]} → {plan.target[:7]}",
        "",
        f"{len(plan.drifts)} references on {len(plan.pages)} pages: "
        + ", ".join(f"{counts[str(s)]} {s}" for s in DriftStatus if counts[str(s)]),
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
        lines += [
            "## For review",
            "",
            "These references were not rewritten. Changed, deleted and ambiguous ones stay "
            f"anchored at {plan.old[:7]} (recorded under `held_refs` in the page) until "
            "someone updates them.",
            "",
        ]
        for item in review:
            drift = item.drift
            lines.append(f"### `{item.page}:{item.line}` {item.text} — {drift.status}")
            lines.append("")
            lines.append(drift.reason + ".")
            for path, first, last in drift.candidates[:5]:
                lines.append(f"- candidate: `{path}:{first}-{last}`")
            if drift.old_lines and drift.status is not DriftStatus.WAS_BROKEN:
                lines += ["", f"Cited at {plan.old[:7]}:", "", *_fenced(drift.old_lines)]
            if drift.new_lines:
                lines += ["", f"Candidate at {plan.target[:7]}:", "", *_fenced(drift.new_lines)]
            lines.append("")
    moved = [d for d in plan.drifts if d.new_text]
    if moved:
        lines += ["## Rewritten", "", "| page | was | now | why |", "|---|---|---|---|"]
        for item in moved:
            lines.append(
                f"| `{item.page}:{item.line}` | `{item.text}` | `{item.new_text}` | "
                f"{item.drift.reason} |"
            )
        lines.append("")
    return "\n".join(lines)


def _fenced(code: list[str]) -> list[str]:
    """Code in a fence longer than any backtick run inside it, so the report cannot break."""
    longest = max((len(run) for line in code for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *code, fence]


def report_paths(plan: SyncPlan, directory: Path) -> list[Path]:
    """Where `write_reports` writes the Markdown and the JSON report."""
    stem = f"drift-{plan.upstream.name}-{plan.old[:7]}-{plan.target[:7]}"
    return [directory / f"{stem}.md", directory / f"{stem}.json"]


def write_reports(plan: SyncPlan, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    markdown, data = report_paths(plan, directory)
    atomic_write(markdown, report_markdown(plan).encode("utf-8"))
    atomic_write(data, (json.dumps(report_json(plan), ensure_ascii=False) + "\n").encode())
    return [markdown, data]

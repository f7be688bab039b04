"""``verify --fix``: rewrite the references whose evidence proves where they point.

Only a finding that carries a `Fix` is applied: the code the page quotes was found at exactly
one place, strongly enough to be sure (see `generator.refs.quote`), and not in the cited lines.
Nothing fuzzy is ever rewritten. Each reference keeps the style it was written in
(`generator.refs.rewrite`); every other byte of the page stays as it was (BOM, CRLF line ends,
the frontmatter); each page is written once, atomically.

Left alone, and said why: a reference in a heading (its anchor would change and the links to
it break), one whose path is written apart from its lines and moved to another file, one that
``held_refs`` names (sync holds it for review), one whose page changed since it was
verified, and those of a page that cites a file missing at its pin but present at the branch's
head (written against a later commit: ``pin suggest`` first).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from generator.files import atomic_write
from generator.kb.pages import parse_page
from generator.model import CodeRef, Finding
from generator.refs.resolve import PINNED_OLDER
from generator.refs.rewrite import rewrite_apart, rewrite_ref
from generator.verification.pipeline import Report

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Rewrite:
    """One reference rewritten (or, in a dry run, to be rewritten)."""

    page: str
    line: int
    column: int
    before: str
    after: str
    finding: Finding
    path_before: str | None = None
    path_after: str | None = None
    """For a reference whose path is written apart from its lines: that path, rewritten too."""


@dataclass(frozen=True)
class Skipped:
    """A proven fix left unapplied, and why."""

    page: str
    line: int
    column: int
    text: str
    reason: str


@dataclass
class FixResult:
    rewrites: list[Rewrite]
    skipped: list[Skipped]
    pages_written: list[str]
    dry_run: bool = False

    @property
    def fixed(self) -> set[int]:
        """The ids of the findings the rewrites settle."""
        return {id(rewrite.finding) for rewrite in self.rewrites}


def fix_references(report: Report, dry_run: bool = False) -> FixResult:
    """Apply every proven fix in ``report`` to its page (nothing is written with
    ``dry_run``). Pages are found by the paths the report names them by."""
    proven = [finding for finding in report.findings if finding.fix is not None]
    if not proven:
        return FixResult([], [], [], dry_run)
    refs = {(r.ref.page, r.ref.line, r.ref.column): r.ref for r in report.refs}
    by_page: dict[str, list[tuple[CodeRef, Finding]]] = defaultdict(list)
    skipped: list[Skipped] = []
    seen: set[tuple[str, int, int]] = set()
    for finding in proven:
        key = (finding.page, finding.line, finding.column)
        ref = refs.get(key)
        if ref is None or key in seen:
            continue
        seen.add(key)
        by_page[finding.page].append((ref, finding))
    doubted = {
        (finding.page, finding.upstream) for finding in report.findings if _doubts_pin(finding)
    }
    rewrites: list[Rewrite] = []
    written: list[str] = []
    for page, wanted in by_page.items():
        kept = []
        for ref, finding in wanted:
            if (page, finding.upstream) in doubted:
                # Moved onto the pin's lines, a reference of a page written against another
                # commit would describe code the page never meant, and hide that the pin is
                # what is wrong.
                skipped.append(_skip(ref, _PIN_DOUBTED.format(page=page)))
            else:
                kept.append((ref, finding))
        if not kept:
            continue
        done, left = _fix_page(Path(page), page, kept, dry_run)
        rewrites += done
        skipped += left
        if done and not dry_run:
            written.append(page)
    return FixResult(rewrites, skipped, written, dry_run)


def _fix_page(
    source: Path, display: str, wanted: Sequence[tuple[CodeRef, Finding]], dry_run: bool
) -> tuple[list[Rewrite], list[Skipped]]:
    raw = source.read_bytes()
    page = parse_page(raw, source, display, display)
    skipped: list[Skipped] = []
    if page.text is None:
        return [], [_skip(ref, "the page is not readable text") for ref, _ in wanted]
    bom = raw.startswith(_BOM)
    text = raw[len(_BOM) if bom else 0 :].decode("utf-8")
    if text != page.text:  # the parser normalised something: do not risk the bytes
        return [], [
            _skip(ref, "the page's text could not be kept byte for byte") for ref, _ in wanted
        ]
    held = _held_texts(page.meta)
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    edits: list[tuple[int, int, Rewrite | _Also]] = []
    for ref, finding in wanted:
        fix = finding.fix
        assert fix is not None
        if not 1 <= ref.line < len(starts):
            skipped.append(_skip(ref, "the page changed since it was verified"))
            continue
        offset = starts[ref.line - 1] + ref.column - 1
        if text[offset : offset + len(ref.text)] != ref.text:
            skipped.append(_skip(ref, "the page changed since it was verified"))
            continue
        line_text = text[starts[ref.line - 1] : starts[ref.line] - 1]
        if line_text.lstrip(" ").startswith("#") and not ref.in_code_block:
            skipped.append(
                _skip(ref, "it is in a heading: its anchor would change; fix it by hand")
            )
            continue
        old_path = finding.path or ref.path
        after = rewrite_ref(ref, old_path, fix.path, fix.start, fix.end)
        if ref.text in held or (after is not None and after in held):
            skipped.append(_skip(ref, "held_refs names this text; sync holds it for review"))
            continue
        if after is None:  # the path is written apart: rewrite it where it is on the line
            line_start = starts[ref.line - 1]
            apart = rewrite_apart(
                line_text, ref.column, ref, old_path, fix.path, fix.start, fix.end
            )
            if apart is None:
                skipped.append(
                    _skip(ref, f"its path is not written once on its line; cite {fix.path}")
                )
                continue
            (path_start, path_end, path_text), (_, _, numbers) = apart
            rewrite = Rewrite(
                display, ref.line, ref.column, ref.text, numbers, finding, ref.path, path_text
            )
            edits.append((line_start + path_start, line_start + path_end, _Also(path_text)))
            edits.append((offset, offset + len(ref.text), rewrite))
            continue
        if after == ref.text:
            continue
        rewrite = Rewrite(display, ref.line, ref.column, ref.text, after, finding)
        edits.append((offset, offset + len(ref.text), rewrite))
    if not edits:
        return [], skipped
    edits.sort(key=lambda edit: edit[0])
    if any(a[1] > b[0] for a, b in itertools.pairwise(edits)):
        reason = "two proven fixes overlap on this line; fix it by hand"
        return [], [*skipped, *(_skip(ref, reason) for ref, _ in wanted)]
    pieces: list[str] = []
    cursor = 0
    done: list[Rewrite] = []
    for start, end, rewrite in edits:
        pieces += (text[cursor:start], rewrite.after)
        cursor = end
        if isinstance(rewrite, Rewrite):
            done.append(rewrite)
    pieces.append(text[cursor:])
    if not dry_run and done:
        data = "".join(pieces).encode("utf-8")
        atomic_write(source, (_BOM + data) if bom else data)
    return done, skipped


class _Also(NamedTuple):
    """A second edit of one rewrite: the path of a reference written apart from its lines."""

    after: str


_PIN_DOUBTED = (
    "other references of the page say it was written against another commit than its pin: "
    "run `kb pin suggest {page}` first"
)


def _doubts_pin(finding: Finding) -> bool:
    """Whether ``finding`` says its page was written against a later commit than its pin: a
    file it cites is missing at the pin but at the branch's head. (A quote another commit holds
    whole doubts only its own reference, which has no fix: the page's other quotes are where
    the pin has them, and moving their ranges there is right for it.)"""
    return PINNED_OLDER in finding.message


def _held_texts(meta: dict[str, object]) -> set[str]:
    held = meta.get("held_refs")
    if not isinstance(held, list):
        return set()
    return {str(entry.get("ref")) for entry in held if isinstance(entry, dict)}


def _skip(ref: CodeRef, reason: str) -> Skipped:
    return Skipped(ref.page, ref.line, ref.column, ref.text, reason)

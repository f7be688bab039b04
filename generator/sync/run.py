"""``sync``: move an upstream's pin and re-anchor every reference to it.

For one upstream and a target commit:

1. fetch the clone (unless told not to) and resolve the target;
2. plan: for every page whose references into the upstream are anchored at an older commit
   (the manifest's pin, or the page's own ``anchored_at``), classify each reference with
   `generator.sync.reanchor.Reanchorer`; nothing is written while planning, so a git failure leaves
   everything as it was;
3. write each page once, atomically: rewritten references, ``anchored_at: {upstream: target}``,
   and the references that could not be moved exactly recorded under ``held_refs`` with the commit
   their line numbers still refer to. A page is therefore always either fully old or fully new,
   and it is always unambiguous which commit each of its line numbers means;
4. when every page is at the target, move the manifest's pin (one atomic write of one line).

A run interrupted anywhere is finished by running it again; pages already at the target are
skipped, so no page is re-anchored twice. Running again right after a complete run changes nothing.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.files import atomic_write
from generator.kb.pages import Page, load_page, render_page
from generator.model import CodeRef, Evidence, Finding, Severity, Upstream
from generator.refs.extract import (
    ExtractOptions,
    MarkdownLayout,
    extract_headings,
    extract_refs,
    scan,
)
from generator.refs.extract.evidence import collect_evidence
from generator.refs.extract.refs import RefRecord, ref_records
from generator.refs.resolve import (
    PageContext,
    Resolver,
    bind_held,
    names_a_commit,
    page_context,
    written_before,
)
from generator.refs.rewrite import (
    APART,
    rewrite_apart,
    rewrite_ref,
    shared_paths,
    written_once,
)
from generator.sync.journal import Journal
from generator.sync.reanchor import Drift, DriftStatus, Reanchorer
from generator.upstream.manifest import ConfigError, Manifest, move_pin, moved_pin_bytes
from generator.verification.pipeline import Verifier, collect, docs_root_for

log = logging.getLogger(__name__)

Notify = Callable[[str], None]
_SHA_ON_LINE = re.compile(r"\b[0-9a-f]{40}\b")


@dataclass
class RefDrift:
    """One reference's fate in a sync."""

    page: str
    line: int
    column: int
    text: str
    drift: Drift
    new_text: str | None = None
    """The rewritten reference, when it is rewritten."""
    offset: int = 0
    """Where ``text`` starts in the page's text before the sync rewrites it."""
    line_before: int | None = None
    """``line`` in the page as read, once `renumber` gave it its line in the page as written."""

    def as_json(self) -> dict[str, Any]:
        drift = self.drift
        return {
            "page": self.page,
            "line": self.line,
            "column": self.column,
            "line_before": self.line if self.line_before is None else self.line_before,
            "text": self.text,
            "status": str(drift.status),
            "new_text": self.new_text,
            "old": {"path": drift.old_path, "start": drift.old_start, "end": drift.old_end},
            "new": {"path": drift.new_path, "start": drift.new_start, "end": drift.new_end}
            if drift.new_path
            else None,
            "candidates": [{"path": p, "start": a, "end": b} for p, a, b in drift.candidates],
            "more_candidates": drift.more_candidates,
            "reason": drift.reason,
            "old_lines": drift.old_lines if not drift.status.rewritable else [],
            "new_lines": drift.new_lines,
        }


@dataclass
class Unresolved:
    """A reference into no single file at the old commit (an ambiguous bare name, a path no
    upstream claims): sync cannot tell where its code went, so it leaves it as written."""

    page: str
    line: int
    column: int
    text: str
    check: str
    """The verifier's check that says why (``ambiguous-file``, ``unattributed``)."""
    message: str
    offset: int = 0
    """As `RefDrift.offset`."""
    line_before: int | None = None
    """As `RefDrift.line_before`."""

    @property
    def reason(self) -> str:
        return f"{self.check}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "line": self.line,
            "column": self.column,
            "line_before": self.line if self.line_before is None else self.line_before,
            "text": self.text,
            "check": self.check,
            "reason": self.message,
        }


@dataclass
class PagePlan:
    page: Page
    old: str
    """The commit the page's references into the upstream were anchored at."""
    drifts: list[RefDrift] = field(default_factory=list)
    edits: list[tuple[int, int, str]] = field(default_factory=list)
    """(start offset, end offset, replacement) in the page text."""
    own_pin: bool = False
    kept_held: dict[int, int] = field(default_factory=dict)
    """Index of a ``held_refs`` entry an earlier sync wrote -> offset in the page's text of the
    reference it names (entries naming no reference on the page are not here)."""
    released: set[int] = field(default_factory=set)
    """Indexes of kept ``held_refs`` entries whose reference this sync rewrites: its code is at
    the target exactly as it was where it was held (an edit reverted since, say)."""
    carried: dict[int, str | None] = field(default_factory=dict)
    """Index of a kept ``held_refs`` entry of this upstream -> its candidate where it is at the
    target (None: gone there); its old candidate named lines of the commit the page leaves."""
    options: ExtractOptions | None = None
    """How the verifier extracts references, so that held entries are counted as it counts."""
    unresolved: list[Unresolved] = field(default_factory=list)

    @property
    def held(self) -> list[RefDrift]:
        return [d for d in self.drifts if d.drift.status in HELD]


HELD = (
    DriftStatus.CHANGED,
    DriftStatus.DELETED,
    DriftStatus.AMBIGUOUS,
    DriftStatus.WAS_BROKEN,
    DriftStatus.RELOCATED,
)
"""The classes a sync holds at the old commit for review rather than rewrites. A reference
already wrong at the old commit is held too: left as written but checked at the new pin, its
lines might hold something there and pass, though nobody corrected it."""


@dataclass
class SyncPlan:
    upstream: Upstream
    old: str
    target: str
    pages: list[PagePlan] = field(default_factory=list)
    skipped_pinned: list[str] = field(default_factory=list)
    already_done: list[str] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    """References of the pages to move that resolved to no single file at the old commit."""
    unreadable: list[str] = field(default_factory=list)
    """Pages that could not be read (not UTF-8, frontmatter that is not YAML), each with why:
    their references cannot be found, let alone re-anchored."""

    @property
    def drifts(self) -> list[RefDrift]:
        return [drift for plan in self.pages for drift in plan.drifts]

    def counts(self) -> Counter[str]:
        return Counter(str(drift.drift.status) for drift in self.drifts)

    def unresolved_summary(self, unresolved: Sequence[Unresolved] | None = None) -> str:
        """Why references (``unresolved``, by default all of them) were not resolved, by
        check: ``2 unattributed, 1 ambiguous-file``."""
        kinds = Counter(
            ref.check for ref in (self.unresolved if unresolved is None else unresolved)
        )
        return ", ".join(f"{count} {kind}" for kind, count in kinds.most_common())


@dataclass
class SyncResult:
    plan: SyncPlan
    pages_written: list[str]
    pin_moved: bool
    report_paths: list[Path]


def dirty_paths(root: Path, paths: Sequence[Path], journal: Journal | None = None) -> list[str]:
    """Uncommitted changes under ``paths`` in the knowledge base's own git repository, as paths
    relative to that repository, leaving out the files that hold exactly what ``journal`` says
    an interrupted sync wrote there."""
    result = subprocess.run(
        ["git", "status", "--porcelain", "-z", "--", *[str(p) for p in paths]],
        cwd=root,
        capture_output=True,
        check=False,
    )
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 or top.returncode != 0:
        raise ConfigError(
            f"{root} is not a git repository, so uncommitted changes to the pages cannot be "
            "ruled out",
            hint="put it under git first (git init && git add -A && git commit), or pass --force",
        )
    toplevel = Path(top.stdout.strip())
    entries = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    dirty = []
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if not entry.strip():
            continue
        status, name = entry[:2], entry[3:]
        if "R" in status or "C" in status:
            index += 1  # -z writes a rename's source path after its destination
        if journal is not None and journal.holds_own_write(toplevel / name):
            continue
        dirty.append(name)
    return dirty


def plan_sync(
    manifest: Manifest,
    upstream_name: str,
    target: str,
    *,
    docs_root: Path | None = None,
    include_pinned_pages: bool = False,
    notify: Notify | None = None,
) -> SyncPlan:
    """Work out every page edit of moving ``upstream_name`` to ``target``; writes nothing."""
    upstream = manifest.upstreams[upstream_name]
    root = (docs_root or docs_root_for(manifest, [manifest.root / "docs"])).resolve()
    try:
        shown = root.relative_to(Path.cwd().resolve())  # pages named as the user sees them
    except ValueError:
        shown = root
    files = collect([shown], root)
    plan = SyncPlan(upstream, upstream.pin, target)
    verifier = Verifier(manifest, root)
    resolver = verifier.resolver
    store = resolver.store(upstream)
    reanchorers: dict[str, Reanchorer] = {}
    try:
        for number, file in enumerate(files, 1):
            if notify and (number % 25 == 0 or number == len(files)):
                notify(f"{upstream.name}: planning pages {number}/{len(files)}")
            page = load_page(file.source, file.display, file.rel, root)
            unread = [p for p in page.problems if p.check == "frontmatter-invalid"]
            if page.text is None or unread:
                problem = (unread or page.problems or [None])[0]
                plan.unreadable.append(
                    f"{page.display}:{problem.line}: {problem.message}"
                    if problem is not None
                    else f"{page.display}: not text"
                )
                continue
            context = page_context(page.display, page.meta, manifest, page.frontmatter)
            own_pin = _has_own_pin(page.meta, upstream.name)
            old = resolver.commit_for(upstream, context)
            if old == target:
                plan.already_done.append(page.display)
                continue
            if own_pin and not include_pinned_pages:
                plan.skipped_pinned.append(page.display)
                continue
            if store.resolve(old) != old:
                raise ConfigError(
                    f"{page.display}: its references are anchored at {old}, which "
                    f"is not in the clone of '{upstream.name}'",
                    hint=f"run `kb upstreams fetch {upstream.name}`",
                )
            reanchorer = reanchorers.get(old)
            if reanchorer is None:
                reanchorer = reanchorers[old] = Reanchorer(store, old, target)

            def since(entry: dict[str, Any]) -> Reanchorer | None:
                held_at = str(entry.get("commit") or "")
                if store.resolve(held_at) != held_at:
                    return None  # not in the clone: the reference stays held
                if held_at not in reanchorers:
                    reanchorers[held_at] = Reanchorer(store, held_at, target)
                return reanchorers[held_at]

            page_plan = _plan_page(
                page, context, upstream, resolver, reanchorer, verifier, reanchorer_from=since
            )
            page_plan.own_pin = own_pin
            plan.unresolved.extend(page_plan.unresolved)
            anchored = page.meta.get("anchored_at")
            if page_plan.drifts or (isinstance(anchored, dict) and upstream.name in anchored):
                # A page anchored at the old commit moves to the target with the others, even
                # with nothing to rewrite (all its references held, say): the references added
                # to it later are written against the new pin, and checked there.
                plan.pages.append(page_plan)
    finally:
        verifier.close()
    return plan


def _has_own_pin(meta: dict[str, Any], name: str) -> bool:
    pins = meta.get("pins")
    return (meta.get("upstream") == name and meta.get("pin") is not None) or (
        isinstance(pins, dict) and name in pins
    )


def _plan_page(
    page: Page,
    context: PageContext,
    upstream: Upstream,
    resolver: Resolver,
    reanchorer: Reanchorer,
    verifier: Verifier,
    reanchorer_from: Callable[[dict[str, Any]], Reanchorer | None] | None = None,
) -> PagePlan:
    """The page's rewrites and held references. ``reanchorer_from(entry)`` follows code from
    the commit a ``held_refs`` entry was held at to the target (None: that commit is gone)."""
    assert page.text is not None
    layout = scan(page.text, page.body_start)
    plan = PagePlan(page, reanchorer.old, options=verifier.options)
    records = ref_records(layout, verifier.options)
    held_of = held_entries_bound(page.meta, page.text, layout, records)
    # The code the page quotes for its references: a quote the old lines do not hold makes a
    # reference as wrong there as an error of its own (`_contradicts`).
    evidence = collect_evidence(layout, records, weak=False) if verifier.proving else {}
    context.lean_on(records, evidence)  # (bare names mean here what they mean to `verify`)
    shared = shared_paths(CodeRef(page.display, *record) for record in records)
    together: dict[tuple[int, str], list[tuple[CodeRef, str, RefDrift]]] = {}
    for index, record in enumerate(records):
        ref = CodeRef(page.display, *record)
        offset = layout.line_starts[ref.line - 1] + ref.column - 1
        held_index = held_of.get(index)
        if held_index is not None:
            plan.kept_held[held_index] = offset  # held at an older commit by an earlier sync
            entry = page.meta["held_refs"][held_index]
            if entry.get("upstream") != upstream.name:
                continue
            if reanchorer_from is not None and _release(
                plan,
                ref,
                offset,
                held_index,
                context,
                resolver,
                reanchorer_from(entry),
                shared=(ref.line, ref.path) in shared,
            ):
                continue
            if entry.get("candidate"):
                plan.carried[held_index] = _carried_candidate(str(entry["candidate"]), reanchorer)
            continue
        if names_a_commit(ref) and ref.revision != reanchorer.old:
            # A permalink pinned to its own commit stays where it points, and so does a path
            # written as its link's text (which cites what the link does: `CodeRef.repo_slug`).
            continue
        resolved = resolver.resolve(ref, context)
        if resolved.path is None and resolved.upstream in (None, upstream.name):
            # It may cite this upstream, but which file is not known: say so, never skip it.
            problem = next((f for f in resolved.findings if f.severity is Severity.ERROR), None)
            problem = problem or next(iter(resolved.findings), None)
            plan.unresolved.append(
                Unresolved(
                    ref.page,
                    ref.line,
                    ref.column,
                    ref.text,
                    problem.check if problem else "unresolved",
                    problem.message if problem else "it resolves to no file",
                    offset,
                )
            )
            continue
        if resolved.upstream != upstream.name or resolved.path is None:
            continue
        broken = [f for f in resolved.findings if _contradicts(f)]
        if not broken and index in evidence and resolved.commit == reanchorer.old:
            proof = verifier.prover.prove(ref, resolved, evidence[index], context)
            broken = [f for f in proof if _contradicts(f)]
            # The prover's word that another commit holds the quote whole (the pin, not the
            # range, is what is wrong), and it is this sync's: the page was written against the
            # commit the sync moves to (later than its pin, or earlier), the sync is the
            # correction, and the text stays.
            pin_wrong = all((f.suggestion or "").startswith("kb pin suggest") for f in broken)
            if (
                broken
                and pin_wrong
                and _right_at(ref, evidence[index], context, upstream, reanchorer.new, verifier)
            ):
                drift = Drift(
                    DriftStatus.UNCHANGED,
                    resolved.path,
                    ref.start,
                    ref.end,
                    resolved.path,
                    ref.start,
                    ref.end,
                    reason="the old pin's lines hold its quote only in part, the new commit's "
                    "whole: the page was written against the commit this sync moves to",
                )
                plan.drifts.append(
                    RefDrift(ref.page, ref.line, ref.column, ref.text, drift, offset=offset)
                )
                continue
        if broken or resolved.commit != reanchorer.old:
            if broken:
                drift = Drift(
                    DriftStatus.WAS_BROKEN,
                    resolved.path,
                    ref.start,
                    ref.end,
                    reason=broken[0].message,
                )
                plan.drifts.append(
                    RefDrift(ref.page, ref.line, ref.column, ref.text, drift, offset=offset)
                )
            continue
        drift = reanchorer.classify(resolved.path, ref.start, ref.end, ref.symbol)
        record = RefDrift(ref.page, ref.line, ref.column, ref.text, drift, offset=offset)
        if drift.status.rewritable and (ref.line, ref.path) in shared:
            # Rewritten with the other references its path is written once for, after them.
            together.setdefault((ref.line, ref.path), []).append((ref, resolved.path, record))
            continue
        if drift.status.rewritable:
            _rewrite(plan, layout, ref, resolved.path, record, reanchorer)
        plan.drifts.append(record)
    for key, group in together.items():
        _rewrite_together(plan, layout, group, shared[key], reanchorer)
    plan.drifts.sort(key=lambda drift: drift.offset)
    return plan


def _rewrite(
    plan: PagePlan,
    layout: MarkdownLayout,
    ref: CodeRef,
    path: str,
    record: RefDrift,
    reanchorer: Reanchorer,
    numbers_only: bool = False,
) -> None:
    """Rewrite ``ref`` (at ``path`` at the old commit) to where ``record``'s drift followed
    its code, in the style it was written; hold it when the page writes its path apart from
    its lines and that cannot be rewritten with them. ``numbers_only``: its path, written
    apart, moves with another reference's rewrite."""
    drift = record.drift
    offset = record.offset
    if numbers_only:
        new_text = rewrite_ref(ref, path, path, drift.new_start, drift.new_end)
    else:
        new_text = _rewritten(ref, path, drift, reanchorer)
    if new_text is None:  # moved to another file, and the page writes the path apart
        line_start, line_end = layout.line_bounds(layout.line_starts[ref.line - 1])
        apart = rewrite_apart(
            layout.text[line_start:line_end],
            ref.column,
            ref,
            path,
            drift.new_path or path,
            drift.new_start or 0,
            drift.new_end or 0,
        )
        if apart is not None and not any(
            line_start + edit[0] < end and start < line_start + edit[1]
            for start, end, _ in plan.edits
            for edit in apart
        ):
            for begin, finish, replacement in apart:
                plan.edits.append((line_start + begin, line_start + finish, replacement))
            record.new_text = apart[1][2]
            return
        # The path is not once on its line: a person must update both.
        record.drift = _held_for(
            drift,
            path,
            "the page writes this reference's path apart from its lines, so both need "
            "updating by hand",
        )
    elif new_text != ref.text:
        record.new_text = new_text
        plan.edits.append((offset, offset + len(ref.text), new_text))


def _rewrite_together(
    plan: PagePlan,
    layout: MarkdownLayout,
    group: list[tuple[CodeRef, str, RefDrift]],
    members: int,
    reanchorer: Reanchorer,
) -> None:
    """Rewrite the references of ``group`` (each with its path at the old commit and its
    drift), which a line writes one path for, as `shared_paths` found (``x.py:5-9, 12-16``,
    a table row with two lines cells), ``members`` of them in all. Their lines move in place;
    their path moves only when every one of them moves to the same other file, and it is
    written once on the line. Else those moving to another file are held: moving the path
    would move the others too."""
    old_path = group[0][1]
    targets = {record.drift.new_path or path for _, path, record in group}
    line_start, line_end = layout.line_bounds(layout.line_starts[group[0][0].line - 1])
    moved = targets != {old_path}
    if moved and (
        len(group) < members
        or len(targets) > 1
        or not written_once(layout.text[line_start:line_end], group[0][0].path)
    ):
        for ref, path, record in group:
            if (record.drift.new_path or path) == path:
                _rewrite(plan, layout, ref, path, record, reanchorer)
            else:
                record.drift = _held_for(
                    record.drift,
                    path,
                    "the page writes this path once for several references on its line, and "
                    "they do not all move to the same file, so a person must update them",
                )
            plan.drifts.append(record)
        return
    # An inline reference writes the path in its own text; else the first written apart moves
    # it, if it can (`rewrite_apart`): if not, none of them moves.
    path_moved: bool | None = not moved or any(ref.style not in APART for ref, _, _ in group)
    for ref, path, record in group:
        if path_moved is None:
            record.drift = _held_for(
                record.drift, path, "its path, written apart from its lines, cannot be rewritten"
            )
        elif ref.style in APART and path_moved:
            _rewrite(plan, layout, ref, path, record, reanchorer, numbers_only=True)
        else:
            _rewrite(plan, layout, ref, path, record, reanchorer)
            path_moved = True if record.drift.status.rewritable else None
        plan.drifts.append(record)


def _held_for(drift: Drift, path: str, why: str) -> Drift:
    """``drift``, which would have moved a reference, held instead because of ``why``."""
    return replace(
        drift,
        status=DriftStatus.RELOCATED,
        reason=f"{drift.reason}; {why}",
        candidates=[(drift.new_path or path, drift.new_start or 0, drift.new_end or 0)],
    )


def _right_at(
    ref: CodeRef,
    evidence: Evidence,
    context: PageContext,
    upstream: Upstream,
    commit: str,
    verifier: Verifier,
) -> bool:
    """Whether ``ref``, as written, resolves and holds its evidence at ``commit`` with nothing
    wrong said of it."""
    there = context.at(upstream.name, commit)
    resolved = verifier.resolver.resolve(ref, there)
    if resolved.path is None or any(_contradicts(f) for f in resolved.findings):
        return False
    proof = verifier.prover.prove(ref, resolved, evidence, there)
    return not any(_contradicts(f) for f in proof)


def _contradicts(finding: Finding) -> bool:
    """Whether a finding at the old commit says the reference was already wrong there: an
    error (the code it quotes is not in its lines, say), or a symbol named beside it that the
    file does not hold (its lines are then not the code the page speaks of, and following them
    would carry the mistake along)."""
    return finding.severity is Severity.ERROR or finding.check == "symbol-not-found"


def _rewritten(ref: CodeRef, path: str, drift: Drift, reanchorer: Reanchorer) -> str | None:
    """The reference's text rewritten to where ``drift`` followed its code (``path`` at the
    reanchorer's old commit); None when the page writes the path apart from the lines."""
    store, new = reanchorer.store, reanchorer.new

    def names_one_file(written: str) -> bool:
        name = written.rsplit("/", 1)[-1]
        return (
            sum(p.endswith("/" + written) or p == written for p in store.files_named(new, name))
            == 1
        )

    return rewrite_ref(
        ref,
        path,
        drift.new_path or path,
        drift.new_start,
        drift.new_end,
        reanchorer.old,
        reanchorer.new,
        names_one_file,
    )


def _release(
    plan: PagePlan,
    ref: CodeRef,
    offset: int,
    index: int,
    context: PageContext,
    resolver: Resolver,
    since_held: Reanchorer | None,
    shared: bool = False,
) -> bool:
    """Rewrite a held reference whose code is at the target exactly as it was at the commit it
    was held at (followed through the history in between, as any reference is): it is no
    longer held. False when it stays held; and when its line writes its path once for other
    references too (``shared``: `shared_paths`) and the code is in another file now, as the
    path cannot move for it alone."""
    if since_held is None or ref.start is None or ref.end is None:
        return False
    held = context.held.get((ref.text, plan.page.meta["held_refs"][index].get("occurrence", 1)))
    if held is None or held.status == str(DriftStatus.WAS_BROKEN):
        return False  # (a reference wrong where it was held waits for a person to correct it)
    resolved = resolver.resolve(ref, context.held_at(held))
    if resolved.path is None or any(f.severity is Severity.ERROR for f in resolved.findings):
        return False
    drift = since_held.classify(resolved.path, ref.start, ref.end, ref.symbol)
    if not drift.status.rewritable:
        return False
    if shared and (drift.new_path or resolved.path) != resolved.path:
        return False
    new_text = _rewritten(ref, resolved.path, drift, since_held)
    if new_text is None:
        return False  # the path is written apart from the lines: left held, for a person
    record = RefDrift(ref.page, ref.line, ref.column, ref.text, drift, offset=offset)
    if new_text != ref.text:
        record.new_text = new_text
        plan.edits.append((offset, offset + len(ref.text), new_text))
    plan.drifts.append(record)
    plan.released.add(index)
    del plan.kept_held[index]
    return True


def _carried_candidate(candidate: str, reanchorer: Reanchorer) -> str | None:
    """A held entry's ``candidate`` (``path:first-last`` at the commit the page was anchored
    at) where it is at the target: followed as a reference is, the first candidate when its
    code changed, None when it is gone."""
    path, _, lines = candidate.rpartition(":")
    first, _, last = lines.partition("-")
    if not path or not first.isdigit() or not (last or first).isdigit():
        return candidate  # not written by sync: left as it is
    start, end = int(first), int(last or first)
    entry = reanchorer.store.entry(reanchorer.old, path)
    if entry is None or not 1 <= start <= end <= reanchorer.store.blob(entry.sha).line_count:
        return candidate  # not lines of that commit (edited by hand): left as it is
    drift = reanchorer.classify(path, start, end, None)
    if drift.status.rewritable and drift.new_path and drift.new_start and drift.new_end:
        where = (drift.new_path, drift.new_start, drift.new_end)
    elif drift.candidates:
        where = drift.candidates[0]
    else:
        return None
    new_path, start, end = where
    return f"{new_path}:{start}-{end}" if end != start else f"{new_path}:{start}"


def held_entries_bound(
    meta: dict[str, Any], text: str, layout: MarkdownLayout, records: Sequence[RefRecord]
) -> dict[int, int]:
    """Index of a reference -> index of the ``held_refs`` entry that names it (`bind_held`)."""
    held = meta.get("held_refs")
    if not isinstance(held, list):
        return {}
    entries = {
        index: (
            str(entry.get("ref")),
            int(entry.get("occurrence", 1)),
            entry["context"] if isinstance(entry.get("context"), str) else None,
        )
        for index, entry in enumerate(held)
        if isinstance(entry, dict) and entry.get("ref")
    }
    if not entries:
        return {}
    starts = layout.line_starts
    return bind_held(
        entries,
        [(r[2], written_before(text, starts[r[0] - 1] + r[1] - 1)) for r in records],
    )


class HeldBindings:
    """How ``held_refs`` names the references of a page as written: by text and occurrence,
    the n-th reference with that text in document order, as the verifier and the next sync
    count them. Counted on the final text, so a rewrite that creates a reference's text ahead
    of a held one cannot make its entry name another reference."""

    def __init__(self, page: Page, text: str, options: ExtractOptions | None) -> None:
        layout = scan(text, page.body_start)
        self._offsets: dict[str, list[int]] = {}
        for ref in extract_refs(layout, page.display, options):
            offset = layout.line_starts[ref.line - 1] + ref.column - 1
            self._offsets.setdefault(ref.text, []).append(offset)

    def occurrence(self, text: str, offset: int) -> int:
        """The occurrence of the reference ``text`` found at ``offset`` of the final text."""
        # (The offsets of one text are in document order: a page citing one line thousands
        # of times is counted by bisection.)
        return 1 + bisect.bisect_left(self._offsets.get(text, []), offset)


class OffsetShift:
    """Where an offset of a text (outside every edit) is once ``edits`` are applied; by
    bisection, as a page may hold tens of thousands of references."""

    def __init__(self, edits: list[tuple[int, int, str]]) -> None:
        ordered = sorted(edits, key=lambda edit: edit[1])
        self._ends = [end for _, end, _ in ordered]
        self._shifts = list(
            itertools.accumulate(len(new) - (end - start) for start, end, new in ordered)
        )

    def __call__(self, offset: int) -> int:
        done = bisect.bisect_right(self._ends, offset)  # the edits that end at or before it
        return offset + (self._shifts[done - 1] if done else 0)


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    pieces = []
    cursor = 0
    for start, end, replacement in sorted(edits):
        pieces += (text[cursor:start], replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


_CLOSING_HASHES = re.compile(r"(?:[ \t]+#+)?[ \t]*$")


def kept_anchors(
    page: Page, edits: list[tuple[int, int, str]], rewritten: str
) -> list[tuple[int, int, str]]:
    """Edits that give each heading whose anchor the rewrite changed an explicit ``{#id}``
    with its old anchor, so that links to it keep working, on the site and in the verifier.

    Every changed heading keeps its old anchor, so the headings after it are given the same
    anchors as before too (GitHub's ``x-1`` numbering depends on the anchors before it)."""
    assert page.text is not None
    if not edits:
        return []
    before = scan(page.text, page.body_start)
    old = extract_headings(before)
    edited_lines = {before.position(start)[0] for start, _, _ in edits}
    if not edited_lines & {heading.line for heading in old}:
        return []  # no heading's text changed, so neither did any anchor
    new = extract_headings(scan(rewritten, page.body_start))
    if len(old) != len(new):  # a rewrite never adds or removes a heading; be safe anyway
        log.warning("%s: headings changed while rewriting references", page.display)
        return []
    edits = []
    for was, now in zip(old, new, strict=True):
        if was.anchor == now.anchor:
            continue
        start, end = before.line_bounds(before.line_starts[was.line - 1])
        line = page.text[start:end]
        at = start + (
            _CLOSING_HASHES.search(line).start()  # type: ignore[union-attr]
            if line.lstrip(" ").startswith("#")
            else len(line.rstrip())
        )
        edits.append((at, at, f" {{#{was.anchor}}}"))
    return edits


def _final_edits(plan: PagePlan) -> list[tuple[int, int, str]]:
    """The rewrites of the page's text: its references, and the anchors of its headings."""
    page = plan.page
    assert page.text is not None
    return plan.edits + kept_anchors(page, plan.edits, apply_edits(page.text, plan.edits))


def renumber(plan: PagePlan, data: bytes) -> None:
    """Give the plan's references the lines and columns they have in ``data``, the page as
    `render_plan` writes it (the new frontmatter shifts every line): what the drift report
    names is then where each reference is in the file."""
    page = plan.page
    assert page.text is not None
    text = data.decode("utf-8").removeprefix("\ufeff")
    edits = _final_edits(plan)
    body = apply_edits(page.text, edits)[page.body_start :]
    if not text.endswith(body):
        return  # not the page's body as written here: keep the lines read
    start = len(text) - len(body)
    shifted = OffsetShift(edits)
    newlines = [match.start() for match in re.finditer("\n", text)]
    # Lines the new frontmatter adds above the body (the references' rewrites add none).
    moved = text.count("\n", 0, start) - page.text.count("\n", 0, page.body_start)
    for drift in [*plan.drifts, *plan.unresolved]:
        offset = start + shifted(drift.offset) - page.body_start
        line = bisect.bisect_left(newlines, offset)  # the newlines before it
        line_start = newlines[line - 1] + 1 if line else 0
        if drift.line_before is None:
            drift.line_before = drift.line
        drift.line = line + 1
        drift.column = offset - line_start + 1
        if moved and isinstance(drift, RefDrift) and _QUOTED_AT.search(drift.drift.reason):
            # The reason is the verifier's words on the page as read: its quote's line too.
            reason = _QUOTED_AT.sub(lambda m: f"{m[1]}{int(m[2]) + moved}", drift.drift.reason)
            drift.drift = replace(drift.drift, reason=reason)


_QUOTED_AT = re.compile(r"(quotes at its line )(\d+)")
"""How a finding names the line of its quote (`generator.refs.prove`'s words)."""


def render_plan(plan: PagePlan, upstream: str, target: str) -> bytes:
    """The page's new bytes: rewritten references, anchored commit and held references."""
    page = plan.page
    assert page.text is not None
    edits = _final_edits(plan)
    text = apply_edits(page.text, edits)
    shifted = OffsetShift(edits)
    meta = dict(page.meta)
    holds = plan.held or plan.kept_held or plan.released
    bindings = HeldBindings(page, text, plan.options) if holds else None
    if plan.own_pin:
        if meta.get("upstream") == upstream and meta.get("pin") is not None:
            meta["pin"] = target
        else:
            meta["pins"] = {**meta["pins"], upstream: target}
    # (On a page with a pin of its own too: verify then knows a sync moved it there, and asks
    # for its quotes of older code to be brought up to date rather than the pin moved back.)
    anchored = dict(meta.get("anchored_at") or {})
    anchored[upstream] = target
    meta["anchored_at"] = anchored
    if bindings is not None:
        entries = list(meta.get("held_refs") or [])
        for index, offset in plan.kept_held.items():
            entry = dict(entries[index])
            entry["occurrence"] = bindings.occurrence(str(entry["ref"]), shifted(offset))
            entry["context"] = written_before(text, shifted(offset))
            if index in plan.carried:
                carried = plan.carried[index]
                if carried is None:
                    entry.pop("candidate", None)
                else:
                    entry["candidate"] = carried
            entries[index] = entry
        entries = [entry for index, entry in enumerate(entries) if index not in plan.released]
        for drift in plan.held:
            entry = {
                "upstream": upstream,
                "commit": plan.old,
                "ref": drift.text,
                "occurrence": bindings.occurrence(drift.text, shifted(drift.offset)),
                "context": written_before(text, shifted(drift.offset)),
                "status": str(drift.drift.status),
            }
            if drift.drift.candidates:
                path, first, last = drift.drift.candidates[0]
                entry["candidate"] = (
                    f"{path}:{first}-{last}" if last != first else f"{path}:{first}"
                )
            entries.append(entry)
        if entries:
            meta["held_refs"] = entries
        else:
            meta.pop("held_refs", None)  # the last held reference was released
    return render_page(page, meta, body=text[page.body_start :])


class WriteFailed(Exception):
    """Writing a file failed (disk full, read-only): every file is still fully old or fully new."""

    def __init__(
        self,
        path: Path,
        error: OSError,
        upstream: str,
        written: int,
        total: int,
        pin_moved: bool = False,
    ) -> None:
        self.path = path
        self.error = error
        self.upstream = upstream
        self.written = written
        """How many of the ``total`` pages to write were written before the failure."""
        self.total = total
        self.pin_moved = pin_moved
        super().__init__(f"{path}: {error.strerror or error}")


def page_writes(plan: SyncPlan) -> list[tuple[PagePlan, bytes]]:
    """The new bytes of every planned page that changes. Each of their references is given its
    line in those bytes (`renumber`), which the drift report names."""
    writes = []
    for page_plan in plan.pages:
        data = render_plan(page_plan, plan.upstream.name, plan.target)
        if data != page_plan.page.raw:
            writes.append((page_plan, data))
            renumber(page_plan, data)
    return writes


def apply_sync(
    plan: SyncPlan,
    manifest: Manifest,
    writes: Sequence[tuple[PagePlan, bytes]],
    reports: Sequence[tuple[Path, bytes]] = (),
    notify: Notify | None = None,
    journal: Journal | None = None,
) -> SyncResult:
    """Write the drift ``reports``, then every page of ``writes`` (`page_writes`), each
    atomically, then move the manifest's pin.

    The reports come first, so that a run killed while writing pages has already left the
    report of the whole sync, which the rerun that finishes it keeps. With a ``journal``, every
    file is recorded there (and the journal saved) before the first is written, so that a rerun
    after a kill recognises these writes as its own. Raises `WriteFailed` when a write fails."""
    new_manifest = moved_pin_bytes(manifest, plan.upstream.name, plan.target)
    if not plan.pages and new_manifest is None:
        reports = ()  # nothing to do, nothing to report
    written: list[str] = []
    target = manifest.path
    try:
        if journal is not None and (writes or reports or new_manifest is not None):
            target = journal.path
            for path, data in reports:
                journal.expect(path, data)
            for page_plan, data in writes:
                journal.expect(page_plan.page.source, data)
            if new_manifest is not None:
                journal.expect(manifest.path, new_manifest)
            journal.save()
        for path, data in reports:
            target = path
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
        for number, (page_plan, data) in enumerate(writes, 1):
            target = page_plan.page.source
            atomic_write(page_plan.page.source, data)
            written.append(page_plan.page.display)
            if notify:
                notify(f"{plan.upstream.name}: writing pages {number}/{len(writes)}")
        target = manifest.path
        moved = move_pin(manifest, plan.upstream.name, plan.target)
    except OSError as error:
        raise WriteFailed(target, error, plan.upstream.name, len(written), len(writes)) from error
    return SyncResult(plan, written, moved, [path for path, _ in reports])

"""``held``: the references a sync left at an older commit, listed, and accepted where they are.

A sync holds a reference whose code it could not follow exactly (edited, copied, grown, moved
into another function): the page keeps citing the old commit's lines, its ``held_refs`` entry
says why and, when sync found one, names a candidate at the new commit. Reviewing one is a
person's call; once made, `accept_held` does the edit it comes to: the reference is rewritten
to its candidate in the style it was written in (as sync rewrites, `generator.refs.rewrite`),
and its entry leaves ``held_refs``, so that it is checked at the page's pin again. The page is
written once, atomically; a reference with no candidate, or whose path is written once for it
and another reference accepted on its line, is left, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path

from generator.files import atomic_write
from generator.kb.pages import Page, load_page, render_page
from generator.model import CodeRef
from generator.refs.extract import scan
from generator.refs.extract.refs import RefRecord, ref_records
from generator.refs.resolve import PageContext, page_context, written_before
from generator.refs.rewrite import rewrite_apart, rewrite_ref
from generator.sync.run import (
    HeldBindings,
    OffsetShift,
    apply_edits,
    held_entries_bound,
    kept_anchors,
)
from generator.upstream.manifest import ConfigError
from generator.verification.pipeline import (
    PageFile,
    Verifier,
    collect,
    docs_dir_of,
    docs_root_for,
    manifest_for,
)


@dataclass(frozen=True)
class HeldEntry:
    """A held reference where it is on its page."""

    page: str
    line: int
    column: int
    text: str
    upstream: str
    commit: str
    """The commit the reference is held at (its lines are that commit's)."""
    status: str
    candidate: str | None
    """Where sync found what its code became at the new commit (``path:start-end``), if
    anywhere."""


@dataclass(frozen=True)
class Accepted:
    entry: HeldEntry
    after: str
    """The reference's text now."""


@dataclass(frozen=True)
class Left:
    entry: HeldEntry
    reason: str


@dataclass
class AcceptResult:
    accepted: list[Accepted] = field(default_factory=list)
    left: list[Left] = field(default_factory=list)
    pages_written: list[str] = field(default_factory=list)
    dry_run: bool = False
    unmatched: list[str] = field(default_factory=list)
    """The texts asked for (``only``) that no held reference is written as."""


def list_held(
    paths: Sequence[Path | str] = (), manifest_path: Path | None = None
) -> list[HeldEntry]:
    """Every held reference of the pages under ``paths`` (default: the knowledge base's docs),
    in page order."""
    found: list[HeldEntry] = []
    with _opened(paths, manifest_path) as (verifier, files):
        for file in files:
            read = _held_on(verifier, file)
            if read is not None:
                found.extend(entry for entry, _, _, _ in read[1])
    return found


def accept_held(
    paths: Sequence[Path | str] = (),
    *,
    manifest_path: Path | None = None,
    only: Sequence[str] = (),
    to: str | None = None,
    dry_run: bool = False,
) -> AcceptResult:
    """Rewrite the held references of the pages under ``paths`` (only those whose text is in
    ``only``, when given) to their candidates, or to ``to`` (``path:start-end``, another place
    the person chose: the edited original of an ambiguous one), and drop their ``held_refs``
    entries."""
    if to is not None and len(set(only)) != 1:
        raise ConfigError("--to gives one place: name the one held reference it is for with --ref")
    result = AcceptResult(dry_run=dry_run)
    seen: set[str] = set()
    with _opened(paths, manifest_path) as (verifier, files):
        for file in files:
            read = _held_on(verifier, file)
            if read is None:
                continue
            page, held, records = read
            # (Once for the page, its bare names leaning on its paths as `verify`'s do.)
            context = page_context(page.display, page.meta, verifier.manifest, page.frontmatter)
            context.lean_on(records)
            edits: list[tuple[int, int, str]] = []
            accepted: dict[int, int] = {}  # entry index -> reference offset
            kept: dict[int, int] = {}
            for entry, entry_index, offset, record in held:
                seen.add(entry.text)
                if only and entry.text not in only:
                    kept[entry_index] = offset
                    continue
                if to is not None:
                    entry = replace(entry, candidate=to)
                elif entry.status == "ambiguous" and not only:
                    # Several places hold its code: which one the page means is the person's
                    # to say, by naming the reference (its entry keeps the first candidate).
                    result.left.append(Left(entry, _AMBIGUOUS.format(entry=entry)))
                    kept[entry_index] = offset
                    continue
                made = _accepted_edits(verifier, page, context, entry, record, offset)
                if isinstance(made, Left):
                    result.left.append(made)
                    kept[entry_index] = offset
                    continue
                after, wanted = made
                if any(a < d and c < b for a, b, _ in wanted for c, d, _ in edits):
                    # (A path written once for this reference and another one accepted.)
                    result.left.append(Left(entry, _SHARED.format(entry=entry)))
                    kept[entry_index] = offset
                    continue
                edits.extend(wanted)
                accepted[entry_index] = offset
                result.accepted.append(Accepted(entry, after))
            if edits and not dry_run:
                atomic_write(file.source, _rendered(page, edits, accepted, kept, verifier))
                result.pages_written.append(page.display)
    result.unmatched = [text for text in dict.fromkeys(only) if text not in seen]
    return result


_SHARED = (
    "its path is written once for it and another reference accepted on its line: cite "
    "{entry.candidate}"
)
_AMBIGUOUS = (
    "ambiguous: its code is in several places (the drift report lists them); to take "
    "{entry.candidate}, name it: --ref {entry.text}; for another, add --to PATH:START-END"
)


@contextmanager
def _opened(
    paths: Sequence[Path | str], manifest_path: Path | None
) -> Iterator[tuple[Verifier, list[PageFile]]]:
    """The verifier and the pages of a `held` command (default: the knowledge base's docs)."""
    path_objects = [Path(p) for p in paths]
    manifest = manifest_for(path_objects, manifest_path)
    if not path_objects:
        docs = docs_dir_of(manifest)
        with suppress(ValueError):  # (pages named as the user sees them, as `verify` does)
            docs = docs.relative_to(Path.cwd().resolve())
        path_objects = [docs]
    root = docs_root_for(manifest, path_objects)
    files = collect(path_objects, root.resolve())
    if not files:
        shown = ", ".join(map(str, path_objects))
        raise ConfigError(f"no Markdown pages (*.md) found in {shown}")
    with Verifier(manifest, root) as verifier:
        yield verifier, files


def _held_on(
    verifier: Verifier, file: PageFile
) -> tuple[Page, list[tuple[HeldEntry, int, int, RefRecord]], list[RefRecord]] | None:
    """The page, its held references (each with its entry's index, its offset in the page's
    text and its record), bound to the references on the page as `verify` binds them, and
    every reference of the page."""
    page = load_page(file.source, file.display, file.rel, verifier.docs_root)
    entries = page.meta.get("held_refs") if page.text is not None else None
    if not isinstance(entries, list) or not entries or page.text is None:
        return None
    layout = scan(page.text, page.body_start)
    records = ref_records(layout, verifier.options)
    bound = held_entries_bound(page.meta, page.text, layout, records)
    held = []
    for index, entry_index in sorted(bound.items()):
        record, entry = records[index], entries[entry_index]
        candidate = entry.get("candidate")
        held.append(
            (
                HeldEntry(
                    page.display,
                    record[0],
                    record[1],
                    record[2],
                    str(entry.get("upstream") or ""),
                    str(entry.get("commit") or ""),
                    str(entry.get("status") or ""),
                    str(candidate) if candidate else None,
                ),
                entry_index,
                layout.line_starts[record[0] - 1] + record[1] - 1,
                record,
            )
        )
    return page, held, records


def _accepted_edits(
    verifier: Verifier,
    page: Page,
    context: PageContext,
    entry: HeldEntry,
    record: RefRecord,
    offset: int,
) -> tuple[str, list[tuple[int, int, str]]] | Left:
    """The reference's text at its candidate and the page's edits that write it (its path
    too, when it is written apart from its lines: a table's path cell), or why it cannot be
    rewritten to it."""
    if entry.candidate is None:
        return Left(entry, f"no candidate: its code is gone ({entry.status}); edit it by hand")
    path, start, end = _place(entry.candidate)
    manifest = verifier.manifest
    upstream = manifest.upstreams.get(entry.upstream)
    if upstream is None:
        return Left(entry, f"its upstream '{entry.upstream}' is not in the manifest")
    resolver = verifier.resolver
    ref = CodeRef(page.display, *record)
    old = resolver.resolve(ref, context.at(entry.upstream, entry.commit))
    new_commit = resolver.commit_for(upstream, context)
    store = resolver.store(upstream)

    def names_one_file(name: str) -> bool:
        return len(store.files_named(new_commit, name.rsplit("/", 1)[-1])) == 1

    after = rewrite_ref(
        ref, old.path or ref.path, path, start, end, entry.commit, new_commit, names_one_file
    )
    if after is not None:
        return after, [(offset, offset + len(ref.text), after)]
    assert page.text is not None and start is not None and end is not None
    line_start = page.text.rfind("\n", 0, offset) + 1
    line_end = page.text.find("\n", offset)
    line = page.text[line_start : len(page.text) if line_end == -1 else line_end]
    apart = rewrite_apart(line, record[1], ref, old.path or ref.path, path, start, end)
    if apart is None:
        return Left(entry, f"its path is not written once on its line: cite {entry.candidate}")
    return apart[-1][2], [(line_start + a, line_start + b, text) for a, b, text in apart]


def _place(candidate: str) -> tuple[str, int | None, int | None]:
    """``path:start-end`` (or ``path:line``, or a whole file's path) as its parts."""
    path, _, lines = candidate.rpartition(":")
    first, _, last = lines.partition("-")
    if not path or not first.isdigit() or (last and not last.isdigit()):
        return candidate, None, None
    return path, int(first), int(last or first)


def _rendered(
    page: Page,
    edits: list[tuple[int, int, str]],
    accepted: dict[int, int],
    kept: dict[int, int],
    verifier: Verifier,
) -> bytes:
    """The page with ``edits`` made, the accepted entries gone from ``held_refs`` and the
    kept ones naming their references in the new text (as sync names them)."""
    assert page.text is not None
    # A heading whose reference is rewritten keeps its anchor, as sync keeps it (`{#id}`):
    # the links to it, on other pages or elsewhere, must not break.
    edits = edits + kept_anchors(page, edits, apply_edits(page.text, edits))
    text = apply_edits(page.text, edits)
    shifted = OffsetShift(edits)
    bindings = HeldBindings(page, text, verifier.options)
    meta = dict(page.meta)
    entries = []
    for index, entry in enumerate(meta.get("held_refs") or []):
        if index in accepted:
            continue
        if index in kept:
            entry = dict(entry)
            moved = shifted(kept[index])
            entry["occurrence"] = bindings.occurrence(str(entry["ref"]), moved)
            entry["context"] = written_before(text, moved)
        entries.append(entry)
    if entries:
        meta["held_refs"] = entries
    else:
        meta.pop("held_refs", None)
    return render_page(page, meta, body=text[page.body_start :])

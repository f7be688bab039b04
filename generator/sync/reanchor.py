"""Re-anchoring: where did the code a reference cites go between two commits?

Evidence, strongest first:

1. the diff between the commits (one ``git diff -M -U0`` for the whole tree, with rename
   detection) maps every line of the cited range as unchanged context: the code is where the diff
   says, byte for byte;
2. otherwise the cited lines (whitespace-normalised, blank lines ignored) are searched, exactly, in
   the new version of the file and in every file the diff added or modified: found exactly once,
   that is where they went.

Only those two rewrite a reference. Everything else is classified for a person to review, with
the reason and a candidate location (the symbol's new definition, the diff's new hunk), and is
never rewritten: the worst thing a sync can do is point a reference at the wrong code silently.
"""

from __future__ import annotations

import bisect
import enum
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from pathlib import PurePosixPath

import git

from generator.refs.quote import BlockIndex, normalise
from generator.refs.resolve import definitions
from generator.upstream.gitstore import BlobText, GitStore

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
MAX_CANDIDATES = 5
"""Candidates listed per reference: beyond a few, a list is no help to a person."""
MAX_SEARCHED_FILES = 50
"""Files of the new commit read to find where deleted code's name is defined, at most."""
_DEFINITION_GREP = r"^[[:space:]]*(async[[:space:]]+)?(def|class)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*"
"""A Python definition's header up to its name, for ``git grep -E``."""
_MIN_DISTINCT_CHARS = 12
"""A block shorter than this (non-whitespace characters) is too common to count as a duplicate."""
_WORD = re.compile(r"[^\W\d]\w*")
"""A name as a definition header holds it, and every such run of word characters in a text."""


class DriftStatus(enum.Enum):
    UNCHANGED = "unchanged"
    MOVED = "moved"
    CHANGED = "changed"
    DELETED = "deleted"
    AMBIGUOUS = "ambiguous"
    WAS_BROKEN = "was-broken"
    RELOCATED = "relocated"
    """Moved unchanged to another file, where the page's way of writing the path cannot
    follow it (apart from its lines, or written once for other references too)."""

    def __str__(self) -> str:
        return self.value

    @property
    def rewritable(self) -> bool:
        return self in (DriftStatus.UNCHANGED, DriftStatus.MOVED)


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int


@dataclass
class FileChange:
    old_path: str
    new_path: str | None
    """None when the file was deleted."""
    hunks: list[Hunk] = field(default_factory=list)

    def map_range(self, start: int, end: int) -> tuple[int, int] | None:
        """New lines of old ``start..end`` if the diff leaves all of them unchanged and together."""
        shift = 0
        for hunk in self.hunks:
            if hunk.old_count == 0:
                # Pure insertion after old line `old_start`.
                if hunk.old_start < start:
                    shift += hunk.new_count
                elif hunk.old_start < end:
                    return None  # lines inserted inside the cited range
                continue
            last = hunk.old_start + hunk.old_count - 1
            if last < start:
                shift += hunk.new_count - hunk.old_count
            elif hunk.old_start <= end:
                return None  # a cited line was changed or deleted
        return start + shift, end + shift

    def map_line(self, line: int) -> int | None:
        """The new number of old ``line``, if the diff leaves it unchanged."""
        mapped = self.map_range(line, line)
        return mapped[0] if mapped else None

    def carry_range(self, start: int, end: int) -> tuple[int, int] | None:
        """Where old ``start..end`` is after the change: when it was edited (a candidate only),
        the lines that replace the edited ones, with the cited lines around them the diff left
        unchanged (a function whose name changed is all of it, not its first line); None when
        all of it was deleted."""
        mapped = self.map_range(start, end)
        if mapped is None and (region := self.new_region(start, end)) is not None:
            first, last = self.map_line(start), self.map_line(end)
            mapped = (region[0] if first is None else first, region[1] if last is None else last)
        if mapped is None:
            first, last = self.map_line(start), self.map_line(end)
            mapped = (first, last) if first is not None and last is not None else None
        return mapped

    def new_region(self, start: int, end: int) -> tuple[int, int] | None:
        """The new lines that replace the hunks overlapping ``start..end`` (a candidate only)."""
        touching = [
            h
            for h in self.hunks
            if h.old_count and h.old_start <= end and h.old_start + h.old_count - 1 >= start
        ]
        if not touching or all(h.new_count == 0 for h in touching):
            return None
        first = min(h.new_start for h in touching if h.new_count)
        last = max(h.new_start + h.new_count - 1 for h in touching if h.new_count)
        return first, last


@dataclass
class Drift:
    """What happened to one reference's code between two commits."""

    status: DriftStatus
    old_path: str
    old_start: int | None
    old_end: int | None
    new_path: str | None = None
    new_start: int | None = None
    new_end: int | None = None
    reason: str = ""
    candidates: list[tuple[str, int, int]] = field(default_factory=list)
    """Places at the new commit to look at, most plausible first, at most `MAX_CANDIDATES`."""
    more_candidates: int = 0
    """How many less plausible candidates were left out of ``candidates``."""
    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)


@dataclass
class Step:
    """One commit of the history between the old and the new commit, as a diff to its parent."""

    commit: str
    changes: dict[str, FileChange]
    """Changed files by their path before the commit."""
    added: list[str]
    added_texts: set[str]
    """Normalised text of every line the commit added (where a new copy of a block must show)."""

    @property
    def touched(self) -> list[str]:
        return sorted({c.new_path for c in self.changes.values() if c.new_path} | set(self.added))


class Reanchorer:
    """Follows cited code of one upstream from an old commit to a new one, commit by commit.

    The net diff between two commits cannot tell "moved" from "copied, then the original
    deleted"; the history can. So every reference is tracked through each first-parent commit that
    touches its file (or adds one of its lines): the diff of that commit maps it, or an exact
    search among that commit's files finds it, or it is lost there. One ``git log -p`` reads the
    whole history; when the old commit is not an ancestor of the new one, a single diff is used.
    """

    def __init__(self, store: GitStore, old: str, new: str) -> None:
        self.store = store
        self.old = old
        self.new = new
        self.steps = history_steps(store, old, new)
        self._changed_at: dict[str, list[int]] = defaultdict(list)
        self._added_at: dict[str, list[int]] = defaultdict(list)
        for index, step in enumerate(self.steps):
            for path in step.changes:
                self._changed_at[path].append(index)
            for text in step.added_texts:
                self._added_at[text].append(index)
        self._indexes: dict[tuple[str, str], BlockIndex | None] = {}
        self._direct: tuple[dict[str, FileChange], list[str]] | None = None
        self._changed_words: dict[str, list[tuple[str, BlobText]]] | None = None
        self._verdicts: dict[tuple[str, int | None, int | None, str | None], Drift] = {}
        self._definers: dict[str, defaultdict[str, list[str]]] = {}
        """File suffix -> name -> the new commit's files defining it (`_files_defining`)."""

    # -- reading -------------------------------------------------------------------------

    def _blob(self, commit: str, path: str) -> BlobText | None:
        entry = self.store.entry(commit, path)
        if entry is None or entry.kind != "blob" or entry.is_symlink:
            return None
        return self.store.blob(entry.sha)

    def _index(self, commit: str, path: str) -> BlockIndex | None:
        key = (commit, path)
        if key not in self._indexes:
            blob = self._blob(commit, path)
            self._indexes[key] = (
                None if blob is None or blob.is_binary else BlockIndex.of(blob.lines)
            )
        return self._indexes[key]

    def _direct_diff(self) -> tuple[dict[str, FileChange], list[str]]:
        if self._direct is None:
            self._direct = diff_trees(self.store, self.old, self.new)
        return self._direct

    def _changed_text_files(self) -> list[tuple[str, BlobText]]:
        """The text files changed or added between the old and the new commit, as they are at
        the new one, in path order."""
        changes, added = self._direct_diff()
        touched = sorted({c.new_path for c in changes.values() if c.new_path} | set(added))
        blobs = ((path, self._blob(self.new, path)) for path in touched)
        return [(path, blob) for path, blob in blobs if blob is not None and not blob.is_binary]

    def _files_mentioning(self, name: str) -> list[tuple[str, BlobText]]:
        """The changed text files (see `_changed_text_files`) whose text holds ``name``.

        A long jump changes thousands of files and many references look for a definition in
        them: a name made of word characters is looked up in an index of the words of those
        files, built once, rather than searched for in every file for every reference. A
        definition header holds such a name as a whole word, so the index misses no file in
        which one is defined; other names are searched for in the text as before."""
        if not _WORD.fullmatch(name):
            return [
                (path, blob)
                for path, blob in self._changed_text_files()
                if name in blob.data.decode("utf-8", "replace")
            ]
        if self._changed_words is None:
            self._changed_words = defaultdict(list)
            for path, blob in self._changed_text_files():
                for word in set(_WORD.findall(blob.data.decode("utf-8", "replace"))):
                    self._changed_words[word].append((path, blob))
        return self._changed_words.get(name, [])

    # -- classification ------------------------------------------------------------------

    def classify(self, path: str, start: int | None, end: int | None, symbol: str | None) -> Drift:
        """Where the code at ``path:start-end`` (at the old commit) is at the new commit."""
        key = (path, start, end, symbol)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self._track(path, start, end, symbol)
        return replace(verdict, candidates=list(verdict.candidates))

    def _track(self, path: str, start: int | None, end: int | None, symbol: str | None) -> Drift:
        if start is None or end is None:
            return self._track_file(path)
        old_blob = self._blob(self.old, path)
        assert old_blob is not None, "callers only classify references that resolved at the old pin"
        old_lines = old_blob.lines[start - 1 : end]
        block = [text for text in map(normalise, old_lines) if text]
        drift = Drift(DriftStatus.UNCHANGED, path, start, end, old_lines=old_lines)
        where = (path, start, end)
        # A new copy of the block has every one of its lines added by one commit: those commits
        # are the ones that add the block's rarest line and all the others too.
        copy_steps: list[int] = []
        if _distinctive(block):
            lines = set(block)
            rarest = min(lines, key=lambda text: len(self._added_at.get(text, ())))
            copy_steps = [
                index
                for index in self._added_at.get(rarest, ())
                if self.steps[index].added_texts.issuperset(lines)
            ]
        position = -1
        while True:
            change_step = _next_after(self._changed_at.get(where[0], []), position)
            copy_step = _next_after(copy_steps, position)
            candidates = [s for s in (change_step, copy_step) if s is not None]
            if not candidates:
                break
            position = min(candidates)
            step = self.steps[position]
            if position == change_step:
                moved = self._step(where, block, old_lines, step)
                if isinstance(moved, Drift):
                    restored = self._restored(where, block, old_lines, position, moved)
                    if restored is None:
                        return self._lost(drift, moved, symbol, where, position)
                    position, moved = restored
                elif moved[0] != step.changes[where[0]].new_path and self._still_defined(
                    where, position - 1, self._cited_name(path, start)
                ):
                    # Found in another file the commit wrote, while its own file still defines
                    # it, edited: copied and edited in one commit, which is no move either.
                    original = step.changes[where[0]]
                    region = original.carry_range(*where[1:]) if original.new_path else None
                    places = [moved] + ([(original.new_path, *region)] if region else [])
                    return self._ambiguous(
                        drift,
                        self._carried(places, position, block),  # type: ignore[arg-type]
                        f"commit {step.commit[:7]} copied the cited code to {moved[0]} and "
                        f"edited it where it was, in {where[0]}: which one the page means "
                        "cannot be told",
                    )
                where = moved
            if position == copy_step:
                copies = self._copies(block, where, step)
                if copies and not self._kept_despite(copies, where, position, block):
                    heir = self._heir(where, copies, position, block, path, start)
                    if heir is None:
                        now = self._places_now([where, *copies], position, block)
                        if len(now) == 1 and self._leads_to(where, position, block, path, start):
                            # The copies are gone again: the code is in one place, the one
                            # the lines lead to, in a definition of the cited lines' name.
                            heir = where
                        else:
                            carried = self._carried([where, *copies], position, block)
                            reason = self._copied(len(now), step)
                            return self._ambiguous(drift, carried, reason)
                    where = heir
        return self._arrived(drift, block, where, symbol)

    def _copied(self, holding: int, step: Step) -> str:
        """Why a reference whose code ``step`` copied is ambiguous, ``holding`` places holding
        the code at the new commit: several, or the copy made it impossible to tell which place
        the page means though later commits left fewer."""
        if holding > 1:
            return "the cited code now appears in more than one place"
        return (
            f"commit {step.commit[:7]} copied the cited code, and which copy the page means "
            f"cannot be told; {'one place holds' if holding else 'no place holds'} it at the "
            "new commit"
        )

    def _restored(
        self,
        where: tuple[str, int, int],
        block: list[str],
        old_lines: list[str],
        position: int,
        lost: Drift,
    ) -> tuple[int, tuple[str, int, int]] | None:
        """Edited, then reverted: the first later commit that changes the file and has the
        cited code in it again, exactly and once, and where it is there. Only a distinctive
        block is looked for, and only in its own file (followed through renames): an edit that
        a later commit undoes leaves the code where it was, and the reference with it."""
        if lost.status is not DriftStatus.CHANGED or not _distinctive(block):
            return None
        path: str | None = self.steps[position].changes[where[0]].new_path
        while path is not None:
            index = _next_after(self._changed_at.get(path, []), position)
            if index is None:
                return None
            position, step = index, self.steps[index]
            path = step.changes[path].new_path
            if path is None:
                return None  # the file was deleted before the code came back
            found = self._new_in(step, self._find(block, step.commit, [path]), block)
            if len(found) > 1:
                return None
            if found:
                first, last = self._with_edges(old_lines, step.commit, *found[0])
                return position, (path, first, last)
        return None

    def _kept_despite(
        self,
        copies: list[tuple[str, int, int]],
        where: tuple[str, int, int],
        position: int,
        block: list[str],
    ) -> bool:
        """Whether the cited lines stay the reference's place though the commit at ``position``
        copied their code: the copies are all in other files, and the lines, followed through
        their own file, still hold the code at the new pin. A copy in the same file is another
        matter: its diff may pair the old lines with either copy."""
        if any(path == where[0] for path, _, _ in copies):
            return False
        original = self._carry(where, position)
        return original is not None and self._holds(original, block)

    def _leads_to(
        self,
        where: tuple[str, int, int],
        position: int,
        block: list[str],
        cited_path: str,
        cited_start: int,
    ) -> bool:
        """Whether the lines ``where`` at the commit at ``position``, carried through every
        later diff, hold the cited code at the new commit, in a definition with the qualified
        name the cited lines have at the old one (a body copied under another name, which a diff
        may pair the lines with, is another function)."""
        carried = self._carry(where, position)
        if carried is None or not self._holds(carried, block):
            return False
        old_blob, new_blob = self._blob(self.old, cited_path), self._blob(self.new, carried[0])
        if old_blob is None or new_blob is None:
            return False
        first = _first_code_line(new_blob.lines[carried[1] - 1 : carried[2]], carried[1])
        return _qualified_at(old_blob.lines, cited_start) == _qualified_at(new_blob.lines, first)

    def _places_now(
        self, places: list[tuple[str, int, int]], position: int, block: list[str]
    ) -> list[tuple[str, int, int]]:
        """Where the cited code is at the new commit in the files of ``places`` (at the commit
        at ``position``), each followed through its renames: found by its text, so that code a
        later commit moved within its file is found too."""
        paths = {self._carry_path(path, position) for path, _, _ in places}
        return self._find(block, self.new, sorted(path for path in paths if path))

    def _heir(
        self,
        where: tuple[str, int, int],
        copies: list[tuple[str, int, int]],
        position: int,
        block: list[str],
        cited_path: str,
        cited_start: int,
    ) -> tuple[str, int, int] | None:
        """Copied, then the original deleted or edited: the one copy that still holds the
        cited code at the new commit, when the original does not and the copy sits in a
        definition of the same qualified name as the cited lines (a function moved in two
        commits; a body duplicated under another name is not the cited function)."""
        holders = [
            copy
            for copy in copies
            if (carried := self._carry(copy, position)) is not None and self._holds(carried, block)
        ]
        if len(holders) != 1:
            return None
        old_blob = self._blob(self.old, cited_path)
        copy_path, copy_start, _ = holders[0]
        copy_blob = self._blob(self.steps[position].commit, copy_path)
        if old_blob is None or copy_blob is None:
            return None
        cited = _qualified_at(old_blob.lines, cited_start)
        copied = _qualified_at(copy_blob.lines, copy_start)
        if not cited or cited != copied or self._still_defined(where, position, cited):
            return None
        return holders[0]

    def _cited_name(self, path: str, start: int) -> tuple[str, ...]:
        """The qualified name of the definition the cited lines are (or are in) at the old
        commit: ``("Actor", "sleep")``; empty outside any."""
        blob = self._blob(self.old, path)
        return _qualified_at(blob.lines, start) if blob is not None else ()

    def _still_defined(
        self, where: tuple[str, int, int], position: int, qualified: tuple[str, ...]
    ) -> bool:
        """Whether the lines ``where`` (at the commit at ``position``), followed to the new
        commit through their own file, are still in a definition named ``qualified`` there:
        then its code was copied and edited where it was, not moved, and which of the two the
        page means is a person's call. (Lines a commit deleted are followed nowhere: a move.)"""
        carried = self._carry(where, position)
        blob = self._blob(self.new, carried[0]) if carried and qualified else None
        if carried is None or blob is None or blob.is_binary:
            return False
        lines = blob.lines
        return any(
            first <= carried[2] and carried[1] <= last and _qualified_at(lines, first) == qualified
            for first, last in definitions(tuple(lines), qualified[-1])
        )

    def _track_file(self, path: str) -> Drift:
        where = path
        for position in range(len(self.steps)):
            change = self.steps[position].changes.get(where)
            if change is None:
                continue
            if change.new_path is None:
                return Drift(DriftStatus.DELETED, path, None, None, reason="the file was deleted")
            where = change.new_path
        status = DriftStatus.UNCHANGED if where == path else DriftStatus.MOVED
        reason = "" if where == path else f"the file was renamed to {where}"
        return Drift(status, path, None, None, where, reason=reason)

    def _step(
        self, where: tuple[str, int, int], block: list[str], old_lines: list[str], step: Step
    ) -> tuple[str, int, int] | Drift:
        """Follow the cited code through one commit that changed its file."""
        path, start, end = where
        change = step.changes[path]
        if change.new_path is not None:
            mapped = change.map_range(start, end)
            if mapped is not None:
                if block and not self._unique_or_same_context(
                    path, (start, end), change.new_path, mapped, block, step
                ):
                    return Drift(
                        DriftStatus.AMBIGUOUS,
                        path,
                        start,
                        end,
                        reason="the cited lines occur several times in the file and the "
                        "diff cannot tell which one they became",
                        candidates=[(change.new_path, *mapped)],
                    )
                return (change.new_path, *mapped)
        if not block:
            return Drift(
                DriftStatus.CHANGED, path, start, end, reason="the cited lines were edited"
            )
        paths = ([change.new_path] if change.new_path else []) + [
            p for p in step.touched if p != change.new_path and _same_language(p, path)
        ]
        if not _distinctive(block):
            # One short line is too common to find by itself: find the whole definition around
            # it instead, and take the line at the same offset inside it.
            return self._find_within_definition(where, step, paths)
        found = self._new_in(step, self._find(block, step.commit, paths), block, where)
        if len(found) == 1:
            found_path, first, last = found[0]
            first, last = self._with_edges(old_lines, step.commit, found_path, first, last)
            return (found_path, first, last)
        if len(found) > 1:
            return Drift(
                DriftStatus.AMBIGUOUS,
                path,
                start,
                end,
                reason="the cited code appears in several places",
                candidates=found,
            )
        return Drift(DriftStatus.CHANGED, path, start, end, reason="the cited lines were edited")

    def _new_in(
        self,
        step: Step,
        found: list[tuple[str, int, int]],
        block: list[str],
        cited: tuple[str, int, int] | None = None,
    ) -> list[tuple[str, int, int]]:
        """The places of ``found`` (at the step's commit) that the step put the code at: not
        those where its parent already had it, which the diff leaves as they were. Code that
        was there before is other code of the same text (a second function with the same
        body), not where the cited lines went; unless it was inside the ``cited`` lines (at
        the parent): the cited code itself, which stayed while lines around it went."""
        kept = []
        parent_commit = self._parent_of(step) if found else ""
        for place in found:
            path, first, last = place
            change = next((c for c in step.changes.values() if c.new_path == path), None)
            if change is not None:
                parent = self._index(parent_commit, change.old_path)
                before = parent.find(block) if parent is not None else []
                if any(
                    change.map_range(*span) == (first, last)
                    and not _within(span, change.old_path, cited)
                    for span in before
                ):
                    continue
            kept.append(place)
        return kept

    def _find(self, block: list[str], commit: str, paths: list[str]) -> list[tuple[str, int, int]]:
        return [
            (candidate, first, last)
            for candidate in paths
            if (index := self._index(commit, candidate)) is not None
            for first, last in index.find(block)
        ]

    def _find_within_definition(
        self, where: tuple[str, int, int], step: Step, paths: list[str]
    ) -> tuple[str, int, int] | Drift:
        path, start, end = where
        blob = self._blob(self._parent_of(step), path)
        lost = Drift(DriftStatus.CHANGED, path, start, end, reason="the cited lines were edited")
        name = _enclosing_name(blob.lines, start) if blob is not None else None
        if blob is None or name is None:
            return lost
        spans = [s for s in definitions(tuple(blob.lines), name) if s[0] <= start and end <= s[1]]
        if len(spans) != 1:
            return lost
        first, last = spans[0]
        outer_block = [text for text in map(normalise, blob.lines[first - 1 : last]) if text]
        found = self._find(outer_block, step.commit, paths)
        if len(found) != 1:
            return lost
        found_path, new_first, new_last = found[0]
        if new_last - new_first != last - first:
            return lost  # blank lines changed inside the definition: offsets are not reliable
        return (found_path, start - first + new_first, end - first + new_first)

    def _unique_or_same_context(
        self,
        path: str,
        span: tuple[int, int],
        new_path: str,
        mapped: tuple[int, int],
        block: list[str],
        step: Step,
    ) -> bool:
        """Guard against a diff pairing identical lines wrongly (a "slid" hunk)."""
        index = self._index(step.commit, new_path)
        if index is None or len(index.find(block)) <= 1:
            return True
        before = self._context(self._parent_of(step), path, *span)
        after = self._context(step.commit, new_path, *mapped)
        return before == after

    def _parent_of(self, step: Step) -> str:
        position = self.steps.index(step)
        return self.old if position == 0 else self.steps[position - 1].commit

    def _context(self, commit: str, path: str, start: int, end: int) -> tuple[str, str]:
        blob = self._blob(commit, path)
        if blob is None:
            return ("", "")
        above = next(
            (normalise(line) for line in reversed(blob.lines[: start - 1]) if line.strip()), ""
        )
        below = next((normalise(line) for line in blob.lines[end:] if line.strip()), "")
        return (above, below)

    def _copies(
        self, block: list[str], where: tuple[str, int, int], step: Step
    ) -> list[tuple[str, int, int]]:
        """Places other than ``where`` where this commit put the same block."""
        copies = []
        for candidate in step.touched:
            if not _same_language(candidate, where[0]):
                continue  # a patch or a page quoting the code is no copy of it
            index = self._index(step.commit, candidate)
            if index is None:
                continue
            for first, last in index.find(block):
                if candidate == where[0] and first >= where[1] and last <= where[2]:
                    continue
                copies.append((candidate, first, last))
        return copies

    def _arrived(
        self, drift: Drift, block: list[str], where: tuple[str, int, int], symbol: str | None
    ) -> Drift:
        path, start, end = where
        # Last line of defence: the claimed lines must hold exactly the cited code.
        blob = self._blob(self.new, path)
        lines = blob.lines[start - 1 : end] if blob is not None else []
        if blob is None or [t for t in map(normalise, lines) if t] != block:
            lost = Drift(
                DriftStatus.CHANGED,
                drift.old_path,
                drift.old_start,
                drift.old_end,
                reason="the cited lines were edited",
            )
            return self._lost(drift, lost, symbol, where, len(self.steps))
        left = self._left_definition(drift, blob.lines, start, lines)
        if left is not None:
            # The same lines in another function are not what the page says they are: that
            # the logging happens in `fit` is no longer true once it happens in `step`.
            return Drift(
                DriftStatus.CHANGED,
                drift.old_path,
                drift.old_start,
                drift.old_end,
                reason=f"the cited lines moved out of `{left[0]}` into `{left[1]}`",
                candidates=[where],
                old_lines=drift.old_lines,
                new_lines=lines,
            )
        grown = self._grown_definition(drift, blob.lines, start, end)
        if grown is not None:
            # The page cites the whole function; its lines now are only a part of it, and what
            # the page says the function does may no longer be all it does.
            name, span = grown
            return Drift(
                DriftStatus.CHANGED,
                drift.old_path,
                drift.old_start,
                drift.old_end,
                reason=f"the cited definition `{name}` now spans {span[0]}-{span[1]}: its "
                f"lines as cited are only part of it",
                candidates=[(path, *span)],
                old_lines=drift.old_lines,
                new_lines=blob.lines[span[0] - 1 : span[1]],
            )
        drift.new_path, drift.new_start, drift.new_end = where
        if where != (drift.old_path, drift.old_start, drift.old_end):
            drift.status = DriftStatus.MOVED
            drift.reason = "the cited code was followed unchanged through the history" + (
                f" into {path}" if path != drift.old_path else ""
            )
        return drift

    def _left_definition(
        self, drift: Drift, new_lines: list[str], start: int, lines: list[str]
    ) -> tuple[str, str] | None:
        """For cited lines inside a definition at the old commit, found at ``start`` of
        ``new_lines`` inside another one: the two qualified names (``Trainer.fit``,
        ``Trainer.step``). A whole definition carries its own name along, so only the lines of
        a body moved into another body (or out of any) count."""
        old_blob = self._blob(self.old, drift.old_path)
        if old_blob is None or drift.old_start is None:
            return None
        before = _qualified_name(old_blob.lines, _first_code_line(drift.old_lines, drift.old_start))
        after = _qualified_name(new_lines, _first_code_line(lines, start))
        if not before or before == after:
            return None
        return ".".join(before), ".".join(after) or "the module's top level"

    def _grown_definition(
        self, drift: Drift, new_lines: list[str], start: int, end: int
    ) -> tuple[str, tuple[int, int]] | None:
        """For cited lines that were a whole definition at the old commit, found at
        ``start..end`` of ``new_lines`` where the definition starting there now runs on (lines
        added to its end): its qualified name and its span now."""
        old_blob = self._blob(self.old, drift.old_path)
        if old_blob is None or drift.old_start is None or drift.old_end is None:
            return None
        name = _qualified_at(old_blob.lines, drift.old_start)
        if not name:
            return None
        cited = (drift.old_start, drift.old_end)
        if cited not in definitions(tuple(old_blob.lines), name[-1]):
            return None
        now = next((s for s in definitions(tuple(new_lines), name[-1]) if s[0] == start), None)
        if now is None or now[1] <= end:
            return None
        return ".".join(name), now

    def _lost(
        self,
        drift: Drift,
        lost: Drift,
        symbol: str | None,
        where: tuple[str, int, int],
        position: int,
    ) -> Drift:
        """A reference that could not be followed past the commit at ``position`` (where it was
        ``where`` just before): say why, and suggest where to look at the new commit, following
        what that commit made of the cited lines to the new commit."""
        block = [text for text in map(normalise, drift.old_lines) if text]
        if lost.status is DriftStatus.AMBIGUOUS:
            return self._ambiguous(
                drift, self._carried(lost.candidates, position, block), lost.reason
            )
        path, start, end = where
        new_path: str | None = path
        region: tuple[str, int, int] | None = where
        if position < len(self.steps):
            change = self.steps[position].changes[path]
            lines = change.carry_range(start, end) if change.new_path else None
            new_path = change.new_path and self._carry_path(change.new_path, position)
            region = self._carry((change.new_path, *lines), position) if lines else None
        # Followed the same way as its file, the region is in ``new_path`` when it is anywhere.
        lines_now = region[1:] if region is not None and self._exists(region) else None
        return self._changed_or_deleted(drift, new_path, lines_now, symbol)  # type: ignore[arg-type]

    def _carry(self, where: tuple[str, int, int], position: int) -> tuple[str, int, int] | None:
        """Where lines at the commit at ``position`` are at the new commit: followed through
        every later commit that changes their file, renames included; the lines that replace
        them where they were edited; None when their file or all of them were deleted."""
        path, start, end = where
        while (index := _next_after(self._changed_at.get(path, []), position)) is not None:
            change = self.steps[index].changes[path]
            carried = change.carry_range(start, end) if change.new_path else None
            if change.new_path is None or carried is None:
                return None
            path, (start, end), position = change.new_path, carried, index
        return path, start, end

    def _carry_path(self, path: str, position: int) -> str | None:
        """The name at the new commit of the file ``path`` at ``position`` (None: deleted)."""
        while (index := _next_after(self._changed_at.get(path, []), position)) is not None:
            renamed = self.steps[index].changes[path].new_path
            if renamed is None:
                return None
            path, position = renamed, index
        return path

    def _carried(
        self, candidates: list[tuple[str, int, int]], position: int, block: list[str]
    ) -> list[tuple[str, int, int]]:
        """Candidates found at the commit at ``position``, where they are at the new commit:
        those that still hold the cited code first; those gone are dropped."""
        carried = {
            at for at in (self._carry(c, position) for c in candidates) if at and self._exists(at)
        }
        return sorted(carried, key=lambda at: (not self._holds(at, block), at))

    def _exists(self, where: tuple[str, int, int]) -> bool:
        """The new commit has the file and its lines."""
        blob = self._blob(self.new, where[0])
        return (
            blob is not None and not blob.is_binary and 1 <= where[1] <= where[2] <= len(blob.lines)
        )

    def _holds(self, where: tuple[str, int, int], block: list[str]) -> bool:
        """The lines hold exactly the cited code (whitespace and blank lines aside) at the new
        commit."""
        blob = self._blob(self.new, where[0])
        if blob is None or blob.is_binary:
            return False
        lines = blob.lines[where[1] - 1 : where[2]]
        return [text for text in map(normalise, lines) if text] == block

    def _with_edges(
        self, old_lines: list[str], commit: str, path: str, first: int, last: int
    ) -> tuple[int, int]:
        """Extend a found block by the blank lines the reference also covered at its edges."""
        blob = self._blob(commit, path)
        assert blob is not None
        leading = len(old_lines) - len(_dropwhile_blank(old_lines))
        trailing = len(old_lines) - len(_dropwhile_blank(old_lines[::-1]))
        while leading and first > 1 and not blob.lines[first - 2].strip():
            first, leading = first - 1, leading - 1
        while trailing and last < len(blob.lines) and not blob.lines[last].strip():
            last, trailing = last + 1, trailing - 1
        return first, last

    def _ambiguous(
        self, drift: Drift, candidates: list[tuple[str, int, int]], reason: str
    ) -> Drift:
        """``candidates`` are places at the new commit, most plausible first."""
        drift.status = DriftStatus.AMBIGUOUS
        drift.reason = reason
        _list_candidates(drift, list(dict.fromkeys(candidates)))
        return drift

    def _changed_or_deleted(
        self,
        drift: Drift,
        new_path: str | None,
        region: tuple[int, int] | None,
        symbol: str | None,
    ) -> Drift:
        """``new_path``: the cited file at the new commit (None: deleted); ``region``: the lines
        there that the cited lines became, if any."""
        assert drift.old_start is not None and drift.old_end is not None
        old_blob = self._blob(self.old, drift.old_path)
        # The code the lines cite starts at their first line that is not blank.
        first_code = _first_code_line(drift.old_lines, drift.old_start)
        cited = _qualified_at(old_blob.lines, first_code) if old_blob else ()
        name = symbol.replace("::", ".").rsplit(".", 1)[-1] if symbol else None
        name = name or (cited[-1] if cited else None)
        if cited and cited[-1] != name:
            cited = ()  # the page names a symbol other than the code around the lines
        if new_path is not None:
            new_blob = self._blob(self.new, new_path)
            spans = definitions(tuple(new_blob.lines), name) if new_blob and name else []
            ranked = _ranked_spans(new_blob.lines, spans, cited, region) if new_blob else []
            if region and old_blob and name and _part_of(old_blob, name, first_code, drift):
                ranked = []  # a few lines of a longer definition: what they became, not all of it
            if ranked or region:
                first, last = ranked[0] if ranked else region  # type: ignore[misc]
                drift.status = DriftStatus.CHANGED
                drift.new_path, drift.new_start, drift.new_end = new_path, first, last
                drift.new_lines = new_blob.lines[first - 1 : last] if new_blob else []
                drift.reason = f"`{name}` was edited" if ranked else "the cited lines were edited"
                drift.candidates = [(new_path, first, last)]
                return drift
        drift.status = DriftStatus.DELETED
        drift.reason = (
            "the file was deleted" if new_path is None else "the cited lines were deleted"
        )
        if name:
            elsewhere = self._definition_elsewhere(
                name, drift.old_path, cited, drift.old_lines, self._files_mentioning(name)
            ) or self._definition_elsewhere(
                name,
                drift.old_path,
                cited,
                drift.old_lines,
                self._files_defining(name, drift.old_path),
                twins_only=True,
            )
            if elsewhere:
                _list_candidates(drift, elsewhere)
                where = ", ".join(f"{p}:{a}-{b}" for p, a, b in elsewhere[:3])
                drift.reason += f"; `{name}` is now defined at {where}"
        return drift

    def _definition_elsewhere(
        self,
        name: str,
        cited_path: str,
        cited: tuple[str, ...],
        old_lines: list[str],
        files: list[tuple[str, BlobText]],
        twins_only: bool = False,
    ) -> list[tuple[str, int, int]]:
        """Definitions of ``name`` at the new commit in ``files``, in files of the cited file's
        language only (a ``.patch`` or ``.md`` holding ``def name`` is no definition), most
        plausible first: the same qualified name (``Class.name``), then the most similar
        text. With ``twins_only``, only definitions with the cited code's qualified name (from
        anywhere in the upstream, another class's ``forward`` is no candidate)."""
        scored = []
        for path, blob in files:
            if not _same_language(path, cited_path):
                continue
            for first, last in definitions(blob.line_tuple, name):
                qualified = _qualified_at(blob.lines, first)
                if twins_only and (not cited or qualified != cited):
                    continue
                similarity = SequenceMatcher(
                    None, "\n".join(old_lines), "\n".join(blob.lines[first - 1 : last])
                ).ratio()
                scored.append((qualified != cited, -similarity, path, first, last))
        return [(path, first, last) for _, _, path, first, last in sorted(scored)]

    def _files_defining(self, name: str, cited_path: str) -> list[tuple[str, BlobText]]:
        """The new commit's files of the cited file's language that define ``name``: where
        deleted code's name is defined when none of the files changed since the old commit
        does (a twin that was there all along, which the deleted copy duplicated). Every
        definition header of the commit is listed once, with one ``git grep`` per language."""
        suffix = PurePosixPath(cited_path).suffix
        if suffix not in (".py", ".pyi"):  # (`definitions` reads Python)
            return []
        if suffix not in self._definers:
            self._definers[suffix] = defaultdict(list)
            output = self.store.git(
                "grep", "-I", "-z", "-o", "-E", _DEFINITION_GREP, self.new, "--", f"*{suffix}"
            )
            for record in (output or b"").decode("utf-8", "surrogateescape").splitlines():
                where, _, header = record.partition("\0")
                path = where.partition(":")[2]
                defined = header.split()[-1] if header.split() else ""
                if path and path not in self._definers[suffix][defined]:
                    self._definers[suffix][defined].append(path)
        files = []
        for path in self._definers[suffix].get(name, [])[:MAX_SEARCHED_FILES]:
            blob = self._blob(self.new, path)
            if blob is not None and not blob.is_binary:
                files.append((path, blob))
        return files


def _within(span: tuple[int, int], path: str, cited: tuple[str, int, int] | None) -> bool:
    """Whether the lines ``span`` of ``path`` are among the ``cited`` ones."""
    return cited is not None and cited[0] == path and cited[1] <= span[0] and span[1] <= cited[2]


def _enclosing_name(lines: list[str], line: int) -> str | None:
    """Name of the closest def/class header at or above ``line`` (an indentation-blind scan)."""
    for number in range(min(line, len(lines)), 0, -1):
        match = _DEFINITION.match(lines[number - 1])
        if match:
            return match.group(1)
    return None


def _same_language(path: str, other: str) -> bool:
    """Whether two files hold code of the same language, as far as their names tell: code
    does not move from a ``.py`` file into a ``.patch`` or a ``.md`` that quotes it."""
    return PurePosixPath(path).suffix == PurePosixPath(other).suffix


def _list_candidates(drift: Drift, candidates: list[tuple[str, int, int]]) -> None:
    drift.candidates = candidates[:MAX_CANDIDATES]
    drift.more_candidates = max(0, len(candidates) - MAX_CANDIDATES)


def _qualified_name(lines: list[str], line: int) -> tuple[str, ...]:
    """Names of the def/class around ``line``, outermost first (``("Actor", "sleep")``): the
    innermost one has its header on ``line`` or is the first one above it indented less than
    the code at ``line``; each other one is the first above indented less than the one inside."""
    names: list[str] = []
    indent_below: int | None = None
    for number in range(min(line, len(lines)), 0, -1):
        text = lines[number - 1]
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        match = _DEFINITION.match(text)
        if match and (indent_below is None or indent < indent_below or number == line):
            names.append(match.group(1))
            indent_below = indent
            if indent == 0:
                break
        elif indent_below is None:
            indent_below = indent
    return tuple(reversed(names))


def _qualified_at(lines: list[str], first: int) -> tuple[str, ...]:
    """`_qualified_name` of the definition (or the code) whose span starts at line ``first``."""
    return _qualified_name(lines, _header_line(lines, first))


def _header_line(lines: list[str], first: int) -> int:
    """The ``def``/``class`` line of a definition whose span starts at ``first`` with its
    decorators; ``first`` itself when it is no decorator."""
    number = first
    while number < len(lines) and lines[number - 1].lstrip().startswith("@"):
        number += 1
    return number


_LEFT_OUT_OF_WHOLE = 2
"""Lines of a definition a reference may leave out (a decorator, a closing line) and still
cite all of it."""


def _part_of(blob: BlobText, name: str, first_code: int, drift: Drift) -> bool:
    """Whether the cited lines are a part of the definition of ``name`` around them at the old
    commit, not all of it: more than `_LEFT_OUT_OF_WHOLE` lines of it (and a fifth) left out."""
    assert drift.old_start is not None and drift.old_end is not None
    for first, last in definitions(blob.line_tuple, name):
        if first <= first_code <= last:
            covered = min(last, drift.old_end) - max(first, drift.old_start) + 1
            left_out = (last - first + 1) - covered
            return left_out > max(_LEFT_OUT_OF_WHOLE, (last - first + 1) // 5)
    return False


def _ranked_spans(
    lines: list[str],
    spans: list[tuple[int, int]],
    cited: tuple[str, ...],
    region: tuple[int, int] | None,
) -> list[tuple[int, int]]:
    """The definitions of the cited name that may be what the cited code became: those with
    the same qualified name (``FSDPActor.sleep``; ``MegatronActor.sleep`` is another method),
    the one the diff says the cited lines became first."""
    if cited:
        spans = [s for s in spans if _qualified_at(lines, s[0]) == cited]

    def evidence(span: tuple[int, int]) -> tuple[bool, int]:
        overlaps = region is not None and span[0] <= region[1] and region[0] <= span[1]
        return (not overlaps, span[0])

    return sorted(spans, key=evidence)


def _distinctive(block: list[str]) -> bool:
    """Whether a block is specific enough that a new copy of it makes a reference ambiguous."""
    return len(block) >= 2 and sum(len(text.replace(" ", "")) for text in block) >= (
        _MIN_DISTINCT_CHARS
    )


def _next_after(positions: list[int], position: int) -> int | None:
    index = bisect.bisect_right(positions, position)
    return positions[index] if index < len(positions) else None


def _first_code_line(lines: list[str], start: int) -> int:
    """The number of the first line that is not blank of ``lines``, which start at ``start``."""
    return start + len(lines) - len(_dropwhile_blank(lines))


def _dropwhile_blank(lines: list[str]) -> list[str]:
    index = 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    return lines[index:]


def _direct_diff(
    store: GitStore, old: str, new: str
) -> tuple[dict[str, FileChange], list[str], set[str]]:
    """One diff between two commits, with rename detection and no context lines."""
    output = (
        store.repo.git(c="core.quotePath=false")
        .diff(
            "--no-color",
            "--no-ext-diff",
            "-U0",
            "--find-renames=50%",
            old,
            new,
            stdout_as_string=False,
        )
        .decode("utf-8", "surrogateescape")
    )
    return _parse_diff(output.split("\n"))


def diff_trees(store: GitStore, old: str, new: str) -> tuple[dict[str, FileChange], list[str]]:
    """Files changed between two commits (by old path, with renames and hunks), and files added."""
    changes, added, _ = _direct_diff(store, old, new)
    return changes, added


def history_steps(store: GitStore, old: str, new: str) -> list[Step]:
    """The first-parent commits from ``old`` to ``new``, each with its diff (one git process)."""
    if old == new:
        return []
    try:
        store.repo.git.merge_base("--is-ancestor", old, new)
    except git.GitCommandError:
        # History rewritten, or a jump backwards: compare the two commits directly.
        return [Step(new, *_direct_diff(store, old, new))]
    output = (
        store.repo.git(c="core.quotePath=false")
        .log(
            "--first-parent",
            "--reverse",
            "--diff-merges=first-parent",
            "-p",
            "--no-color",
            "--no-ext-diff",
            "-U0",
            "--find-renames=50%",
            "--format=%x00%H",
            f"{old}..{new}",
            stdout_as_string=False,
        )
        .decode("utf-8", "surrogateescape")
    )
    steps = []
    for chunk in output.split("\x00")[1:]:
        commit, _, body = chunk.partition("\n")
        changes, added, texts = _parse_diff(body.split("\n"))
        steps.append(Step(commit.strip(), changes, added, texts))
    return steps


def _parse_diff(lines: list[str]) -> tuple[dict[str, FileChange], list[str], set[str]]:
    changes: dict[str, FileChange] = {}
    added: list[str] = []
    added_texts: set[str] = set()
    current: FileChange | None = None
    for line in lines:
        if line.startswith("+") and not line.startswith("+++ "):
            text = normalise(line[1:])
            if text:
                added_texts.add(text)
            continue
        if line.startswith("-") and not line.startswith("--- "):
            continue
        if line.startswith("diff --git "):
            current = None
            continue
        if line.startswith("--- "):
            source = _diff_path(line[4:])
            current = FileChange(old_path=source or "", new_path=None)
            continue
        if line.startswith("+++ ") and current is not None:
            current.new_path = _diff_path(line[4:])
            if current.old_path:
                changes[current.old_path] = current
            elif current.new_path:
                added.append(current.new_path)
            continue
        if line.startswith("rename from "):
            current = FileChange(old_path=line[len("rename from ") :], new_path=None)
            continue
        if line.startswith("rename to ") and current is not None:
            current.new_path = line[len("rename to ") :]
            changes[current.old_path] = current
            continue
        if line.startswith("@@") and current is not None:
            match = _HUNK.match(line)
            if match:
                old_start, old_count, new_start, new_count = match.groups()
                current.hunks.append(
                    Hunk(
                        int(old_start),
                        int(old_count) if old_count is not None else 1,
                        int(new_start),
                        int(new_count) if new_count is not None else 1,
                    )
                )
    for change in changes.values():
        if change.new_path is not None and not _same_language(change.old_path, change.new_path):
            # git pairs files by similarity alone: a module deleted while a patch quoting it is
            # added is no rename. Code is followed into another language by no evidence.
            added.append(change.new_path)
            change.new_path, change.hunks = None, []
    return changes, added, added_texts


def _diff_path(raw: str) -> str | None:
    raw = raw.rstrip("\t")
    if raw == "/dev/null":
        return None
    if raw.startswith('"') and raw.endswith('"'):
        raw = raw[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw[2:] if raw[:2] in ("a/", "b/") else raw


__all__ = ["Drift", "DriftStatus", "FileChange", "Hunk", "Reanchorer", "diff_trees"]

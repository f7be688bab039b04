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

import enum
import re
from collections import defaultdict
from dataclasses import dataclass, field

from generator.gitstore import BlobText, GitStore
from generator.resolve import definitions

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
_MIN_DISTINCT_CHARS = 12
"""A block shorter than this (non-whitespace characters) is too common to count as a duplicate."""


class DriftStatus(enum.Enum):
    UNCHANGED = "unchanged"
    MOVED = "moved"
    CHANGED = "changed"
    DELETED = "deleted"
    AMBIGUOUS = "ambiguous"
    WAS_BROKEN = "was-broken"

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
    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)


def _normalise(line: str) -> str:
    return " ".join(line.split())


@dataclass
class _BlockIndex:
    """Normalised non-blank lines of one file, for exact block search."""

    numbers: list[int]
    """Line numbers (1-based) of the non-blank lines, in order."""
    texts: list[str]
    positions: dict[str, list[int]]
    """Normalised text -> indexes into ``numbers``."""

    @classmethod
    def of(cls, lines: list[str]) -> _BlockIndex:
        numbers, texts = [], []
        positions: dict[str, list[int]] = defaultdict(list)
        for number, line in enumerate(lines, 1):
            text = _normalise(line)
            if text:
                positions[text].append(len(numbers))
                numbers.append(number)
                texts.append(text)
        return cls(numbers, texts, positions)

    def find(self, block: list[str]) -> list[tuple[int, int]]:
        """Every (first, last) line range whose non-blank lines are exactly ``block``."""
        found = []
        for index in self.positions.get(block[0], ()):
            if self.texts[index : index + len(block)] == block:
                found.append((self.numbers[index], self.numbers[index + len(block) - 1]))
        return found


class Reanchorer:
    """Classifies references of one upstream between an old and a new commit."""

    def __init__(self, store: GitStore, old: str, new: str) -> None:
        self.store = store
        self.old = old
        self.new = new
        self.changes, self.added = diff_trees(store, old, new)
        self._indexes: dict[str, _BlockIndex] = {}
        self._touched: list[str] | None = None

    # -- reading -------------------------------------------------------------------------

    def _blob(self, commit: str, path: str) -> BlobText | None:
        entry = self.store.tree(commit).get(path)
        if entry is None or entry.kind != "blob" or entry.is_symlink:
            return None
        return self.store.blob(entry.sha)

    def _index(self, path: str) -> _BlockIndex | None:
        index = self._indexes.get(path)
        if index is None:
            blob = self._blob(self.new, path)
            if blob is None or blob.is_binary:
                return None
            index = self._indexes[path] = _BlockIndex.of(blob.lines)
        return index

    def _touched_paths(self) -> list[str]:
        """Files the diff added or modified (where moved or copied code can have gone)."""
        if self._touched is None:
            modified = {c.new_path for c in self.changes.values() if c.new_path}
            self._touched = sorted(modified | set(self.added))
        return self._touched

    # -- classification ------------------------------------------------------------------

    def new_path_of(self, path: str) -> str | None:
        """The file's path at the new commit (renamed or not), or None if it was deleted."""
        change = self.changes.get(path)
        if change is None:
            return path if path in self.store.tree(self.new) else None
        return change.new_path

    def classify(self, path: str, start: int | None, end: int | None, symbol: str | None) -> Drift:
        """Where the code at ``path:start-end`` (at the old commit) is at the new commit."""
        new_path = self.new_path_of(path)
        if start is None or end is None:
            if new_path is None:
                return Drift(DriftStatus.DELETED, path, None, None, reason="the file was deleted")
            status = DriftStatus.UNCHANGED if new_path == path else DriftStatus.MOVED
            reason = "" if new_path == path else f"the file was renamed to {new_path}"
            return Drift(status, path, None, None, new_path, reason=reason)

        old_blob = self._blob(self.old, path)
        assert old_blob is not None, "callers only classify references that resolved at the old pin"
        old_lines = old_blob.lines[start - 1 : end]
        block = [text for text in map(_normalise, old_lines) if text]
        drift = Drift(DriftStatus.UNCHANGED, path, start, end, old_lines=old_lines)

        change = self.changes.get(path)
        mapped = (
            (start, end) if change is None else (change.map_range(start, end) if new_path else None)
        )
        if mapped is not None and new_path is not None:
            copies = self._copies(block, new_path, mapped) if block else []
            if copies:
                return self._ambiguous(
                    drift,
                    [(new_path, *mapped), *copies],
                    "the cited code now appears in more than one place",
                )
            drift.new_path, (drift.new_start, drift.new_end) = new_path, mapped
            if (new_path, mapped) != (path, (start, end)):
                drift.status = DriftStatus.MOVED
                drift.reason = "the diff maps the cited lines unchanged" + (
                    f" into {new_path}" if new_path != path else ""
                )
            return drift

        if block:
            found = self._search(block, new_path)
            if len(found) == 1:
                found_path, first, last = found[0]
                first, last = self._with_edges(old_lines, found_path, first, last)
                drift.status = DriftStatus.MOVED
                drift.new_path, drift.new_start, drift.new_end = found_path, first, last
                drift.reason = "the cited code was found unchanged (whitespace aside)" + (
                    f" in {found_path}" if found_path != path else ""
                )
                return drift
            if len(found) > 1:
                return self._ambiguous(drift, found, "the cited code appears in several places")
        return self._changed_or_deleted(drift, change, new_path, symbol)

    def _copies(
        self, block: list[str], new_path: str, mapped: tuple[int, int]
    ) -> list[tuple[str, int, int]]:
        """Other places the diff put the same block (a copy makes a reference ambiguous)."""
        if sum(len(text.replace(" ", "")) for text in block) < _MIN_DISTINCT_CHARS or (
            len(block) < 2
        ):
            return []
        copies = []
        for candidate in self._touched_paths():
            index = self._index(candidate)
            if index is None:
                continue
            for first, last in index.find(block):
                if candidate == new_path and (first, last) == self._core(new_path, mapped):
                    continue
                copies.append((candidate, first, last))
        return copies

    def _core(self, path: str, span: tuple[int, int]) -> tuple[int, int]:
        """The span without leading and trailing blank lines (how the index reports it)."""
        blob = self._blob(self.new, path)
        assert blob is not None
        first, last = span
        while first < last and not blob.lines[first - 1].strip():
            first += 1
        while last > first and not blob.lines[last - 1].strip():
            last -= 1
        return first, last

    def _search(self, block: list[str], new_path: str | None) -> list[tuple[str, int, int]]:
        paths = [new_path] if new_path else []
        paths += [p for p in self._touched_paths() if p != new_path]
        found = []
        for candidate in paths:
            index = self._index(candidate)
            if index is not None:
                found.extend((candidate, first, last) for first, last in index.find(block))
        return found

    def _with_edges(
        self, old_lines: list[str], path: str, first: int, last: int
    ) -> tuple[int, int]:
        """Extend a found block by the blank lines the reference also covered at its edges."""
        blob = self._blob(self.new, path)
        assert blob is not None
        leading = len(old_lines) - len([*_dropwhile_blank(old_lines)])
        trailing = len(old_lines) - len([*_dropwhile_blank(old_lines[::-1])])
        while leading and first > 1 and not blob.lines[first - 2].strip():
            first, leading = first - 1, leading - 1
        while trailing and last < len(blob.lines) and not blob.lines[last].strip():
            last, trailing = last + 1, trailing - 1
        return first, last

    def _ambiguous(
        self, drift: Drift, candidates: list[tuple[str, int, int]], reason: str
    ) -> Drift:
        drift.status = DriftStatus.AMBIGUOUS
        drift.reason = reason
        drift.candidates = sorted(set(candidates))
        return drift

    def _changed_or_deleted(
        self, drift: Drift, change: FileChange | None, new_path: str | None, symbol: str | None
    ) -> Drift:
        assert drift.old_start is not None and drift.old_end is not None
        name = symbol.replace("::", ".").rsplit(".", 1)[-1] if symbol else None
        name = name or self._enclosing_definition(drift.old_path, drift.old_start)
        if new_path is not None:
            new_blob = self._blob(self.new, new_path)
            spans = definitions(tuple(new_blob.lines), name) if new_blob and name else []
            region = change.new_region(drift.old_start, drift.old_end) if change else None
            if spans or region:
                first, last = spans[0] if spans else region  # type: ignore[misc]
                drift.status = DriftStatus.CHANGED
                drift.new_path, drift.new_start, drift.new_end = new_path, first, last
                drift.new_lines = new_blob.lines[first - 1 : last] if new_blob else []
                drift.reason = f"`{name}` was edited" if spans else "the cited lines were edited"
                drift.candidates = [(new_path, first, last)]
                return drift
        drift.status = DriftStatus.DELETED
        drift.reason = (
            "the file was deleted" if new_path is None else "the cited lines were deleted"
        )
        if name:
            elsewhere = self._definition_elsewhere(name)
            if elsewhere:
                drift.candidates = elsewhere
                where = ", ".join(f"{p}:{a}-{b}" for p, a, b in elsewhere[:3])
                drift.reason += f"; `{name}` is now defined at {where}"
        return drift

    def _enclosing_definition(self, path: str, line: int) -> str | None:
        """The innermost def/class at the old commit whose header is at or above ``line``."""
        blob = self._blob(self.old, path)
        if blob is None:
            return None
        target_indent = None
        for number in range(min(line, len(blob.lines)), 0, -1):
            text = blob.lines[number - 1]
            match = _DEFINITION.match(text)
            indent = len(text) - len(text.lstrip())
            if match and (target_indent is None or indent < target_indent or number == line):
                return match.group(1)
            if text.strip() and target_indent is None:
                target_indent = indent
        return None

    def _definition_elsewhere(self, name: str) -> list[tuple[str, int, int]]:
        found = []
        for path in self._touched_paths():
            blob = self._blob(self.new, path)
            if blob is None or blob.is_binary:
                continue
            found.extend((path, a, b) for a, b in definitions(tuple(blob.lines), name))
        return found


def _dropwhile_blank(lines: list[str]) -> list[str]:
    index = 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    return lines[index:]


def diff_trees(store: GitStore, old: str, new: str) -> tuple[dict[str, FileChange], list[str]]:
    """Files changed between two commits (by old path, with renames and hunks), and files added."""
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
    changes: dict[str, FileChange] = {}
    added: list[str] = []
    current: FileChange | None = None
    for line in output.split("\n"):
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
            pending_rename = line[len("rename from ") :]
            current = FileChange(old_path=pending_rename, new_path=None)
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
    return changes, added


def _diff_path(raw: str) -> str | None:
    raw = raw.rstrip("\t")
    if raw == "/dev/null":
        return None
    if raw.startswith('"') and raw.endswith('"'):
        raw = raw[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw[2:] if raw[:2] in ("a/", "b/") else raw


__all__ = ["Drift", "DriftStatus", "FileChange", "Hunk", "Reanchorer", "diff_trees"]

"""Read-only access to an upstream clone's object database.

Blobs are read at a commit through git's object database, never from a working tree, so a dirty
checkout cannot change a verdict and no path outside the repository can ever be opened: a path is
only read if it is an entry of the commit's tree. One ``git ls-tree`` per commit lists the tree;
blobs come through GitPython's persistent ``git cat-file --batch`` process, so no process is
spawned per reference, and each blob is read at most once per run.
"""

from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import git

log = logging.getLogger(__name__)

_SAFE_REVISION = re.compile(r"^[^\s\x00-\x1f\x7f~^:?*\[\\]+$")
_BINARY_PROBE = 8000  # git's own heuristic: a NUL byte in the first 8000 bytes


class RepositoryUnavailable(Exception):
    """The clone is missing or is not a git repository."""


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str
    """``blob`` for files and symlinks, ``commit`` for submodules."""
    sha: str

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"


@dataclass
class BlobText:
    """A blob decoded for line-based checks."""

    data: bytes

    @cached_property
    def is_binary(self) -> bool:
        return b"\x00" in self.data[:_BINARY_PROBE]

    @cached_property
    def lines(self) -> list[str]:
        text = self.data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return [line.removesuffix("\r") for line in lines]

    @property
    def line_count(self) -> int:
        return len(self.lines)

    @cached_property
    def _line_offsets(self) -> list[int]:
        offsets, total = [], 0
        for line in self.lines:
            offsets.append(total)
            total += len(line) + 1
        return offsets

    @cached_property
    def _triple_quoted(self) -> tuple[list[int], list[int]]:
        """Start and end offsets (in the joined lines) of Python's triple-quoted strings."""
        text = "\n".join(self.lines)
        starts, ends = [], []
        position = 0
        while True:
            opening = _TRIPLE_QUOTE.search(text, position)
            if opening is None:
                break
            closing = text.find(opening.group(), opening.end())
            end = len(text) if closing == -1 else closing + 3
            starts.append(opening.start())
            ends.append(end)
            position = end
        return starts, ends

    def occurs_in_code(self, name: str, start: int, end: int) -> bool:
        """Whether identifier ``name`` is used in lines ``start..end`` outside Python comments
        and docstrings (which only mention it)."""
        starts, ends = self._triple_quoted
        offsets = self._line_offsets
        for number in range(start, min(end, len(self.lines)) + 1):
            line = self.lines[number - 1]
            for column in identifier_columns(line, name):
                offset = offsets[number - 1] + column
                index = bisect.bisect_right(starts, offset) - 1
                if index >= 0 and offset < ends[index]:
                    continue  # inside a docstring
                if _in_comment(line, column):
                    continue
                return True
        return False


_TRIPLE_QUOTE = re.compile("\"\"\"|'''")
_IDENTIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def identifier_columns(line: str, name: str) -> list[int]:
    """Columns (0-based) where ``name`` occurs in ``line`` as a whole identifier."""
    found = []
    index = line.find(name)
    while index != -1:
        after = index + len(name)
        if (index == 0 or line[index - 1] not in _IDENTIFIER_CHARS) and (
            after == len(line) or line[after] not in _IDENTIFIER_CHARS
        ):
            found.append(index)
        index = line.find(name, index + 1)
    return found


def _in_comment(line: str, column: int) -> bool:
    """Whether ``column`` is after a '#' that is not inside a simple string literal."""
    if "#" not in line[:column]:
        return False
    quote: str | None = None
    escaped = False
    for char in line[:column]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return True
    return False


class GitStore:
    """One clone: commits, trees and blobs, each looked up once and cached."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.repo = git.Repo(path)
        except (git.NoSuchPathError, git.InvalidGitRepositoryError) as error:
            raise RepositoryUnavailable(f"{path} is not a git repository") from error
        self._commits: dict[str, str | None] = {}
        self._trees: dict[str, dict[str, TreeEntry]] = {}
        self._directories: dict[str, frozenset[str]] = {}
        self._blobs: dict[str, BlobText] = {}
        self._renames: dict[tuple[str, str], str | None] = {}
        self.blob_reads = 0
        """How many blobs were read from the object database (each at most once)."""

    def close(self) -> None:
        self.repo.close()

    def resolve(self, revision: str) -> str | None:
        """Full SHA of the commit ``revision`` names (SHA, abbreviation, branch, tag), or None."""
        if revision in self._commits:
            return self._commits[revision]
        sha: str | None = None
        if _SAFE_REVISION.match(revision) and not revision.startswith("-"):
            candidates = [revision]
            if not re.fullmatch(r"[0-9a-f]{40}", revision):
                # The remote-tracking branch first: a clone's local branch is never updated.
                candidates = [f"refs/remotes/origin/{revision}", revision, f"refs/tags/{revision}"]
            for candidate in candidates:
                try:
                    sha, _, _ = self.repo.git.get_object_header(f"{candidate}^{{commit}}")
                    break
                except (ValueError, git.GitCommandError):
                    continue
        if isinstance(sha, bytes):
            sha = sha.decode()
        self._commits[revision] = sha
        return sha

    def tree(self, commit: str) -> dict[str, TreeEntry]:
        """Every file of the commit (recursively), by repository-relative path."""
        entries = self._trees.get(commit)
        if entries is None:
            output = self.repo.git.ls_tree(
                "-r", "-z", "--full-tree", commit, stdout_as_string=False
            )
            entries = {}
            for record in output.split(b"\x00"):
                if not record:
                    continue
                info, _, raw_path = record.partition(b"\t")
                mode, kind, sha = info.decode().split(" ")
                entries[raw_path.decode("utf-8", "surrogateescape")] = TreeEntry(mode, kind, sha)
            self._trees[commit] = entries
        return entries

    def directories(self, commit: str) -> frozenset[str]:
        """Every directory of the commit, each with a trailing slash."""
        found = self._directories.get(commit)
        if found is None:
            names: set[str] = set()
            for path in self.tree(commit):
                parts = path.split("/")[:-1]
                for depth in range(1, len(parts) + 1):
                    names.add("/".join(parts[:depth]) + "/")
            found = self._directories[commit] = frozenset(names)
        return found

    def blob(self, sha: str) -> BlobText:
        text = self._blobs.get(sha)
        if text is None:
            _, _, _, data = self.repo.git.get_object_data(sha)
            self.blob_reads += 1
            text = self._blobs[sha] = BlobText(data)
        return text

    def renamed_to(self, path: str, commit: str) -> str | None:
        """Where ``path`` went if git recorded a rename before ``commit`` (following chains)."""
        key = (path, commit)
        if key not in self._renames:
            self._renames[key] = self._follow_rename(path, commit)
        return self._renames[key]

    def _follow_rename(self, path: str, commit: str) -> str | None:
        tree = self.tree(commit)
        current = path
        for _ in range(10):  # renames chain rarely; bound the walk anyway
            try:
                last = self.repo.git.log("-1", "--format=%H", commit, "--", current).strip()
            except git.GitCommandError:
                return None
            if not last:
                return None
            try:
                output = self.repo.git.diff(
                    "-M", "--name-status", "-z", f"{last}^", last, stdout_as_string=False
                )
            except git.GitCommandError:
                return None
            fields = output.decode("utf-8", "surrogateescape").split("\x00")
            destination = None
            index = 0
            while index < len(fields):
                status = fields[index]
                if status.startswith(("R", "C")) and index + 2 < len(fields):
                    if fields[index + 1] == current and status.startswith("R"):
                        destination = fields[index + 2]
                    index += 3
                else:
                    index += 2
            if destination is None:
                return None
            if destination in tree:
                return destination
            current = destination
        return None

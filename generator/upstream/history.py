"""An upstream's first-parent history, and the versions of files along it.

Used to answer "at which commit did this code exist?": for a quote found nowhere at a page's
pin (the nearest commit whose version of the file holds it), and for ``pin suggest`` (the
commits where a page's evidence lines up best). Only commits that change the files asked about
matter, and each distinct version of a file is a blob, read once (`GitStore` caches it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from generator.upstream.gitstore import GitStore

MAX_VERSIONS_TRIED = 200
"""Versions of one file `History.nearest` looks at before giving up (nearest first)."""


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    time: int
    """Committer time, seconds since the epoch."""
    subject: str


@dataclass(frozen=True, slots=True)
class Version:
    """A file as one commit left it."""

    commit: Commit
    blob: str | None
    """The file's blob after the commit; None when the commit deleted it."""


@dataclass(frozen=True, slots=True)
class Found:
    """The commit nearest to a pin whose version of a file passes a test."""

    commit: Commit
    blob: str
    distance: int
    """First-parent commits from the pin: negative before it (older), positive after."""
    changed_by: Commit | None = None
    """For a version before the pin, the commit that changed the file after it."""


class History:
    """The first-parent history of a clone up to ``head`` (a commit SHA)."""

    def __init__(self, store: GitStore, head: str) -> None:
        self.store = store
        self.head = head
        self._versions: dict[str, list[Version]] = {}
        self._commits: dict[str, Commit] = {}

    @cached_property
    def order(self) -> dict[str, int]:
        """Position of each first-parent commit: 0 for ``head``, 1 for its parent, ..."""
        output = self._git("rev-list", "--first-parent", self.head)
        return {sha: position for position, sha in enumerate(output.split())}

    @cached_property
    def shas(self) -> list[str]:
        """The first-parent commits, newest (``head``) first."""
        return sorted(self.order, key=self.order.__getitem__)

    def load_commits(self) -> None:
        """Read every first-parent commit's date and subject in one walk (for callers that
        will ask about many)."""
        output = self._git("log", "--first-parent", "--format=%H%x02%ct%x02%s", self.head)
        for line in output.splitlines():
            if line:
                commit = _commit(line)
                self._commits.setdefault(commit.sha, commit)

    def commit(self, sha: str) -> Commit:
        found = self._commits.get(sha)
        if found is None:
            output = self._git("log", "-1", "--format=%H%x02%ct%x02%s", sha)
            found = _commit(output.strip("\n"))
            self._commits[sha] = found
        return found

    def versions(self, path: str) -> list[Version]:
        """The versions of ``path``, newest first, from the commits that changed it."""
        if path not in self._versions:
            self.load([path])
        return self._versions[path]

    def load(self, paths: Iterable[str]) -> None:
        """Read the versions of ``paths`` in one walk of the history."""
        wanted = [path for path in dict.fromkeys(paths) if path not in self._versions]
        if not wanted:
            return
        for path in wanted:
            self._versions[path] = []
        arguments = ["log", "--first-parent", "-z", "--format=%x01%H%x02%ct%x02%s", "--raw"]
        arguments += ["--no-abbrev", "--no-renames"]
        output = self._git(*arguments, self.head, "--", *wanted)
        for chunk in output.split("\x01")[1:]:
            header, _, raw = chunk.partition("\x00")
            commit = _commit(header)
            self._commits.setdefault(commit.sha, commit)
            fields = raw.split("\x00")
            for index in range(0, len(fields) - 1, 2):
                info, path = fields[index].strip(), fields[index + 1]
                if not info.startswith(":") or path not in self._versions:
                    continue
                parts = info.split()
                blob = None if parts[4].startswith("D") else parts[3]
                self._versions[path].append(Version(commit, blob))

    def blob_at(self, path: str, sha: str) -> str | None:
        """The blob of ``path`` at the first-parent commit ``sha`` (None: absent or unknown)."""
        position = self.order.get(sha)
        if position is None:
            return None
        for version in self.versions(path):  # newest first: the first at or before ``sha``
            if self.order.get(version.commit.sha, -1) >= position:
                return version.blob
        return None

    def nearest(
        self, path: str, pin: str, test: Callable[[str], bool], tried: int = MAX_VERSIONS_TRIED
    ) -> Found | None:
        """The commit nearest to ``pin`` (before or after it, along the first-parent history)
        whose version of ``path`` passes ``test`` (given the blob SHA), other than the pin's
        own version; None if no version within ``tried`` does."""
        order = self.order
        pin_position = order.get(pin)
        if pin_position is None:
            return None
        versions = self.versions(path)
        candidates: list[tuple[int, str, str, str | None]] = []  # (distance, commit, blob, next)
        for index, version in enumerate(versions):
            if version.blob is None:
                continue
            introduced = order.get(version.commit.sha)
            if introduced is None:
                continue
            # The version lasts from the commit that made it up to the next change (newer).
            replaced = order.get(versions[index - 1].commit.sha, -1) if index > 0 else -1
            if replaced < pin_position <= introduced:
                continue  # the pin's own version
            if introduced < pin_position:  # made after the pin
                candidates.append(
                    (pin_position - introduced, version.commit.sha, version.blob, None)
                )
            elif replaced + 1 < len(self.shas):  # replaced before the pin: its last commit
                last = self.shas[replaced + 1]
                changed = versions[index - 1].commit.sha if index > 0 else None
                candidates.append((replaced + 1 - pin_position, last, version.blob, changed))
        candidates.sort(key=lambda item: item[0])
        seen: dict[str, bool] = {}
        for distance, sha, blob, changed in candidates[:tried]:
            passed = seen.get(blob)
            if passed is None:
                passed = seen[blob] = test(blob)
            if passed:
                signed = distance if order[sha] < pin_position else -distance
                changed_by = None if changed is None else self.commit(changed)
                return Found(self.commit(sha), blob, signed, changed_by)
        return None

    def _git(self, *arguments: str) -> str:
        output = self.store.git(*arguments)
        return "" if output is None else output.decode("utf-8", "replace")


def _commit(header: str) -> Commit:
    sha, _, rest = header.partition("\x02")
    time, _, subject = rest.partition("\x02")
    return Commit(sha.strip(), int(time or 0), subject.strip())


def history_for(store: GitStore, pin: str, branch: str, cache: dict[str, History]) -> History:
    """The history to search around ``pin``: the tracked branch's when the pin is on its
    first-parent line, otherwise the pin's own past. ``cache`` keeps one per head."""
    head = store.resolve(branch) or pin
    history = cache.get(head)
    if history is None:
        history = cache[head] = History(store, head)
    if pin in history.order:
        return history
    history = cache.get(pin)
    if history is None:
        history = cache[pin] = History(store, pin)
    return history


__all__: Sequence[str] = ["Commit", "Found", "History", "Version", "history_for"]

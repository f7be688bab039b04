"""Read-only access to an upstream clone's object database.

Blobs are read at a commit through git's object database, never from a working tree, so a dirty
checkout cannot change a verdict and no path outside the repository can ever be opened: a path is
only read if it is an entry of the commit's tree. Commits, trees and blobs come through one
persistent ``git cat-file --batch`` process, so no process is spawned per reference, and each
object is read at most once per run.

Trees are read one directory at a time and kept by their SHA: a tree is content-addressed, so a
directory that three hundred commits share is read once for them all, and a path is found by
walking down its own directories, with no listing of the whole commit. Only what needs every file
(a bare file name, a suggestion) goes through the others, and then each directory it has not met
yet costs one read. GitPython (slow to import) is loaded only for callers that ask for
`GitStore.repo`.
"""

from __future__ import annotations

import atexit
import bisect
import contextlib
import logging
import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from generator.patterns import lazy_pattern

if TYPE_CHECKING:
    import git

log = logging.getLogger(__name__)

_FULL_SHA = lazy_pattern(r"[0-9a-f]{40}")
_PATHS_PER_LOG = 500
"""Paths per ``git log`` when looking for renames: well under any command-line length limit."""
_SAFE_REVISION = lazy_pattern(r"^[^\s\x00-\x1f\x7f~^:?*\[\\]+$")
_ANCESTRY = lazy_pattern(r"(?P<base>[^\s~^:]+)(?P<steps>(?:[~^]\d{0,6})+)")
"""A revision and the steps to one of its ancestors (``main~2``, ``v1.0^2``)."""
_BINARY_PROBE = 8000  # git's own heuristic: a NUL byte in the first 8000 bytes


class RepositoryUnavailable(Exception):
    """The clone is missing or is not a git repository."""


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str
    """``blob`` for files and symlinks, ``commit`` for submodules (``tree`` for a directory,
    which the store's listings of files never hold)."""
    sha: str

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"


_TREE_RECORD = lazy_pattern(rb"(\d+) ([^\x00]*)\x00(.{20})", re.DOTALL)
"""One entry of a tree object: its mode, name and binary SHA."""
_KINDS = {"40000": "tree", "160000": "commit"}


def _parse_tree(data: bytes, known: dict[tuple[bytes, bytes], TreeEntry]) -> dict[str, TreeEntry]:
    """The entries of a tree object by name, in git's order (which is ``git ls-tree``'s).
    ``known`` holds the entries met in other trees, by mode and SHA: a directory's new version
    shares most of its entries with the old one, and they are made once."""
    entries = {}
    for mode, name, sha in _TREE_RECORD.findall(data):
        entry = known.get((mode, sha))
        if entry is None:
            text = mode.decode()
            kind = _KINDS.get(text, "blob")
            entry = known[mode, sha] = TreeEntry(
                "040000" if kind == "tree" else text, kind, sha.hex()
            )
        entries[name.decode("utf-8", "surrogateescape")] = entry
    return entries


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
        if "\r" not in text:
            return lines
        return [line.removesuffix("\r") for line in lines]

    @cached_property
    def line_tuple(self) -> tuple[str, ...]:
        """`lines` as a tuple, for caches keyed by a file's lines."""
        return tuple(self.lines)

    @property
    def line_count(self) -> int:
        return len(self.lines)

    @cached_property
    def _triple_quoted(self) -> _TripleQuotedStrings:
        # The text as `lines` are joined: decoding the blob again takes a fifth of joining them,
        # and gives the same offsets unless carriage returns were taken out.
        if b"\r" in self.data:
            return _TripleQuotedStrings("\n".join(self.lines))
        return _TripleQuotedStrings(self.data.decode("utf-8", errors="replace"))

    def occurs_in_code(self, name: str, start: int, end: int) -> bool:
        """Whether identifier ``name`` is used in lines ``start..end`` outside Python comments
        and docstrings (which only mention it)."""
        lines = self.lines
        # Where line `start` begins in the lines joined by newlines: summed up to it alone
        # (in C), since a blob is usually cited at a few places and never needs every offset.
        offset = sum(map(len, lines[: start - 1])) + start - 1
        for number in range(start, min(end, len(lines)) + 1):
            line = lines[number - 1]
            for column in identifier_columns(line, name):
                if self._triple_quoted.contain(offset + column):
                    continue  # inside a docstring
                if _in_comment(line, column):
                    continue
                return True
            offset += len(line) + 1
        return False


_TRIPLE_QUOTES = ('"""', "'''")


class _TripleQuotedStrings:
    """Where Python's triple-quoted strings are in a text, found from the start only as far as
    someone asks: a reference cites a few lines, often near the top of a long file."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] = []
        self._ends: list[int] = []
        # Where each kind of quote next opens, found with str.find (several times faster than
        # a regular expression for either), and looked for again only once a string passes it.
        self._following = {quote: text.find(quote) for quote in _TRIPLE_QUOTES}
        self._first_single = self._following["'''"]

    def contain(self, offset: int) -> bool:
        """Whether ``offset`` lies inside one of the strings."""
        if not 0 <= self._first_single < offset:
            # Only one kind of quote before ``offset``: the strings are its occurrences paired
            # in turn, so ``offset`` is inside one when an odd number of them lies before it
            # (a count in C, rather than walking every docstring above a cited line).
            return self._text.count('"""', 0, offset) % 2 == 1
        text, following = self._text, self._following
        while not self._ends or self._ends[-1] <= offset:
            start = min((at for at in following.values() if at != -1), default=-1)
            if start == -1 or start > offset:
                break
            closing = text.find(text[start : start + 3], start + 3)
            end = len(text) if closing == -1 else closing + 3
            self._starts.append(start)
            self._ends.append(end)
            for quote, at in following.items():
                if at != -1 and at < end:
                    following[quote] = text.find(quote, end)
        index = bisect.bisect_right(self._starts, offset) - 1
        return index >= 0 and offset < self._ends[index]


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


_BATCH = 256
"""Object names per batch of requests to git cat-file: 256 SHAs and newlines take 10.5 KB."""


_ENDING: list[subprocess.Popen[bytes]] = []
"""``git cat-file`` processes told to end (their input closed) and not yet reaped: a store
that closes does not wait the several milliseconds git takes to exit, since nothing depends on
its end. They are reaped as the next one starts, and waited for when Python exits."""


def _reap_ended() -> None:
    _ENDING[:] = [process for process in _ENDING if process.poll() is None]


@atexit.register
def _wait_for_ended() -> None:
    for process in _ENDING:
        process.wait()


class _CatFile:
    """A persistent ``git cat-file --batch``: one process answers every object request."""

    def __init__(self, path: Path) -> None:
        _reap_ended()
        self._process = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def read(self, name: str) -> tuple[str, str, bytes] | None:
        """(SHA, type, content) of the object ``name`` means, or None if git cannot resolve it."""
        return self.read_many([name])[0]

    def read_many(self, names: list[str]) -> list[tuple[str, str, bytes] | None]:
        """`read` of each of ``names``: all the requests, then all the answers, so that git
        answers them in one go rather than waking up once per object."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        found: list[tuple[str, str, bytes] | None] = []
        # Requests go in batches that fit a pipe's buffer (16 KiB at the least): while this
        # process writes, git may be blocked writing answers that nobody reads yet.
        for first in range(0, len(names), _BATCH):
            batch = names[first : first + _BATCH]
            try:
                stdin.write(b"".join(n.encode("utf-8", "surrogateescape") + b"\n" for n in batch))
                stdin.flush()
            except BrokenPipeError:
                raise RepositoryUnavailable("git cat-file stopped answering") from None
            for _ in batch:
                header = stdout.readline().split()
                if len(header) != 3:  # "<name> missing" or "<name> ambiguous"
                    if not header:
                        raise RepositoryUnavailable("git cat-file stopped answering")
                    found.append(None)
                    continue
                sha, kind, size = header
                data = stdout.read(int(size) + 1)  # the content, then a newline
                if len(data) != int(size) + 1:
                    raise RepositoryUnavailable("git cat-file stopped answering")
                found.append((sha.decode(), kind.decode(), data[:-1]))
        return found

    def close(self) -> None:
        """Tell git to end (its input closes); it is reaped later (`_ENDING`)."""
        with contextlib.suppress(OSError):  # it may be gone already
            if self._process.stdin is not None:
                self._process.stdin.close()
        if self._process.stdout is not None:
            self._process.stdout.close()
        _ENDING.append(self._process)


def _is_repository(path: Path) -> bool:
    """A working tree with ``.git`` (a directory, or a file pointing to one) or a bare repository;
    parent directories are not searched, so a clone missing inside another repository is missing."""
    if (path / ".git").exists():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


_FETCH_STATE_FILES = ("HEAD", "packed-refs", "FETCH_HEAD", "shallow", "objects/info/alternates")


def fetch_state(clone: Path) -> bytes:
    """What a fetch changes in a clone, read from its files (no git process): its refs,
    ``FETCH_HEAD``, ``shallow``, alternates and the list of its packs; ``b"no clone"`` for a
    path that is none."""
    git_dir = _git_directory(clone)
    if git_dir is None:
        return b"no clone"
    parts: list[bytes] = []
    directories = [git_dir]
    common = _read(git_dir / "commondir")  # a linked worktree keeps refs in the main one
    if common is not None:
        directories.append((git_dir / common.decode().strip()).resolve())
    for directory in directories:
        for name in _FETCH_STATE_FILES:
            parts += [name.encode(), _read(directory / name) or b"-"]
        for folder, subfolders, files in os.walk(directory / "refs"):
            subfolders.sort()
            for file in sorted(files):
                path = Path(folder, file)
                parts += [path.relative_to(directory).as_posix().encode(), _read(path) or b"-"]
        packs = directory / "objects" / "pack"
        if packs.is_dir():
            parts.append("\0".join(sorted(pack.name for pack in packs.iterdir())).encode())
    return b"\0".join(parts)


def _git_directory(clone: Path) -> Path | None:
    """The clone's git directory: ``.git``, where a ``.git`` file points, or a bare clone."""
    dot_git = clone / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # "gitdir: PATH", as a linked worktree or a submodule has it
        pointer = (_read(dot_git) or b"").decode(errors="replace").strip()
        if pointer.startswith("gitdir:"):
            return (clone / pointer.removeprefix("gitdir:").strip()).resolve()
        return None
    if (clone / "HEAD").is_file() and (clone / "refs").is_dir():  # a bare repository
        return clone
    return None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


_KEPT_NAMES = 500
"""The most names of files below a directory kept to tell whether a search for a name need go
into it. A directory with more is searched through instead: a commit changing one file has a new
such directory (its parent's, up to the root), and building its set of names anew for each
commit would cost more than looking through its subdirectories' sets."""


class GitStore:
    """One clone: commits, trees and blobs, each looked up once and cached."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_dir() or not _is_repository(path):
            raise RepositoryUnavailable(f"{path} is not a git repository")
        self._cat_file: _CatFile | None = None
        self._commits: dict[str, str | None] = {}
        self._ref_names: frozenset[str] | None = None
        self._grepped: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
        """`grep`'s lines, by its arguments."""
        self._roots: dict[str, str] = {}
        """Each commit's root tree, by commit."""
        self._entries: dict[tuple[bytes, bytes], TreeEntry] = {}
        """Every entry of the trees read, by its mode and binary SHA (see `_parse_tree`)."""
        self._tree_objects: dict[str, dict[str, TreeEntry]] = {}
        """Each tree object read, by its SHA: shared by every commit that has it."""
        self._names_below: dict[str, frozenset[str] | None] = {}
        """The names of the files in each tree and its subtrees, by the tree's SHA (see
        `_KEPT_NAMES`); a tree is here once every tree below it has been read."""
        self._read_whole: set[str] = set()
        """Trees read with every tree below them (`read_trees_ahead`)."""
        self._named_below: dict[tuple[str, str], tuple[str, ...]] = {}
        """The files of each name below a tree searched for it, by the tree's SHA and the name
        (see `_named`)."""
        self._trees: dict[str, dict[str, TreeEntry]] = {}
        self._directory_at: dict[tuple[str, str], dict[str, TreeEntry] | None] = {}
        """`_directory`'s answers, by commit and path: a page cites a few directories of its
        commit many times."""
        self._directories: dict[str, frozenset[str]] = {}
        self._blobs: dict[str, BlobText] = {}
        self._renames: dict[tuple[str, str], str | None] = {}
        self._removed_by: dict[tuple[str, str], str | None] = {}
        """The commit that removed (or renamed) a path missing at a commit, by both."""
        self._renames_in: dict[str, bytes | None] = {}
        """Each commit's changes with renames found (`git diff -M`), by commit."""
        self.blob_reads = 0
        """How many blobs were read from the object database (each at most once)."""
        self.tree_reads = 0
        """How many tree objects were read (each at most once, whichever commits share it)."""

    @cached_property
    def repo(self) -> git.Repo:
        """The clone as a GitPython repository, for callers that run other git commands."""
        import git

        return git.Repo(self.path)

    def close(self) -> None:
        if self._cat_file is not None:
            self._cat_file.close()
            self._cat_file = None
        if "repo" in self.__dict__:
            self.repo.close()

    def forked(self) -> None:
        """In a forked process: let go of the ``git`` processes the parent started, which
        answer the parent only, and start this process's own when it first reads. What was
        read stays: objects are the same in both processes."""
        self._cat_file = None
        self.__dict__.pop("repo", None)

    def _objects(self) -> _CatFile:
        if self._cat_file is None:
            self._cat_file = _CatFile(self.path)
        return self._cat_file

    def git(self, *args: str) -> bytes | None:
        """Output of one git command in the clone; None if it fails."""
        result = subprocess.run(["git", *args], cwd=self.path, capture_output=True, check=False)
        return result.stdout if result.returncode == 0 else None

    def grep(self, commit: str, patterns: Sequence[str], paths: Sequence[str]) -> list[str]:
        """The lines of the commit's files matching paths (``*.py``) that match any of the
        extended regular ``patterns``, from one ``git grep`` (kept for the run)."""
        key = (commit, tuple(patterns), tuple(paths))
        found = self._grepped.get(key)
        if found is None:
            arguments = ["grep", "-h", "-I", "-E"]
            for pattern in patterns:
                arguments += ["-e", pattern]
            output = self.git(*arguments, commit, "--", *paths)
            found = self._grepped[key] = (output or b"").decode("utf-8", "replace").splitlines()
        return found

    def resolve(self, revision: str) -> str | None:
        """Full SHA of the commit ``revision`` names (SHA, abbreviation, branch, tag), or None."""
        if revision in self._commits:
            return self._commits[revision]
        sha: str | None = None
        if not _SAFE_REVISION.match(revision) or revision.startswith("-") or "@{" in revision:
            # `main@{5}` (reflog, upstream, -1 syntax) makes `git cat-file --batch` exit when the
            # reflog is shorter, taking every later read with it; a permalink never needs it.
            pass
        elif _FULL_SHA.fullmatch(revision):
            self.read_commits_ahead([revision])  # (with its root tree, in one exchange)
            return self._commits[revision]
        elif "/" not in revision or "@" in revision or self._may_name_a_ref(revision):
            # The remote-tracking branch first: a clone's local branch is never updated.
            for candidate in (f"refs/remotes/origin/{revision}", revision, f"refs/tags/{revision}"):
                found = self._objects().read(f"{candidate}^{{commit}}")
                if found is not None:
                    sha = found[0]
                    break
        self._commits[revision] = sha
        return sha

    def resolve_given(self, revision: str) -> str | None:
        """`resolve`, and for a revision a person typed, also an ancestor of one
        (``main~1``, ``v0.1^``, ``HEAD~2``): the part before ``~`` or ``^`` is read as
        `resolve` reads a name (a branch as the remote's), the rest by git."""
        sha = self.resolve(revision)
        if sha is not None:
            return sha
        match = _ANCESTRY.fullmatch(revision)
        if match is None:
            return None
        base = self.resolve(match["base"])
        if base is None:
            return None
        found = self.git("rev-parse", "--verify", "--quiet", f"{base}{match['steps']}^{{commit}}")
        return found.decode().strip() if found else None

    def _may_name_a_ref(self, name: str) -> bool:
        """Whether a ref could be what ``name`` (with a slash, so no SHA, and no ``@{...}``,
        which git reads its own way) means: one is named ``name`` or ends with ``/name`` or
        ``/name/HEAD``. A permalink's path is split by trying its longest prefixes as branch
        names; this answers most tries without asking git."""
        if self._ref_names is None:
            output = self.git("for-each-ref", "--format=%(refname)")
            refs = (output or b"").decode("utf-8", "surrogateescape").splitlines()
            names = set()
            for ref in refs:
                parts = ref.removesuffix("/HEAD").split("/")
                names.update("/".join(parts[first:]) for first in range(len(parts)))
            self._ref_names = frozenset(names)
        return name in self._ref_names

    def _root(self, commit: str) -> str:
        """The SHA of the commit's root tree, read (with the tree) once."""
        sha = self._roots.get(commit)
        if sha is None:
            found = self._objects().read(f"{commit}^{{tree}}")
            if found is None:
                raise RepositoryUnavailable(f"commit {commit} is missing from {self.path}")
            sha = self._keep_root(commit, found)
        return sha

    def _keep_root(self, commit: str, tree: tuple[str, str, bytes]) -> str:
        """Keep the root tree of ``commit``, as `read` gave it; returns its SHA."""
        sha = self._roots[commit] = tree[0]
        if sha not in self._tree_objects:
            self._keep_tree(sha, tree[2])
        return sha

    def _keep_tree(self, sha: str, data: bytes) -> dict[str, TreeEntry]:
        self.tree_reads += 1
        entries = self._tree_objects[sha] = _parse_tree(data, self._entries)
        return entries

    def _read_trees(self, shas: Iterable[str]) -> None:
        """Read the tree objects ``shas`` not read yet, in one exchange with git (one that git
        lacks is left for `_tree_object` to report)."""
        wanted = [sha for sha in dict.fromkeys(shas) if sha not in self._tree_objects]
        if not wanted:  # (git is not even started for nothing)
            return
        for sha, found in zip(wanted, self._objects().read_many(wanted), strict=True):
            if found is not None and found[1] == "tree":
                self._keep_tree(sha, found[2])

    def read_commits_ahead(self, commits: Iterable[str]) -> None:
        """Resolve the full SHAs among ``commits`` in one exchange with git, each with its root
        tree, which is walked next (`resolve` of a full SHA); other revisions are left to
        `resolve`."""
        wanted = [
            sha
            for sha in dict.fromkeys(commits)
            if sha not in self._commits and _FULL_SHA.fullmatch(sha)
        ]
        if not wanted:
            return
        found = self._objects().read_many(
            [name for sha in wanted for name in (f"{sha}^{{commit}}", f"{sha}^{{tree}}")]
        )
        for index, revision in enumerate(wanted):
            commit, root = found[2 * index], found[2 * index + 1]
            sha = self._commits[revision] = None if commit is None else commit[0]
            if sha is not None and root is not None:
                self._keep_root(sha, root)

    def read_trees_ahead(
        self, paths: Mapping[str, Iterable[str]], searched: Iterable[str] = ()
    ) -> None:
        """Read, one exchange with git per level of depth for all of them rather than one per
        directory: the directories that `entry` walks through for each path of ``paths`` (by
        commit), and every tree of each commit of ``searched`` that `files_named` looks
        through. Commits and trees git lacks are left for their readers to report (a tree read
        whole with a subtree git lacks is marked so all the same: searching it meets the missing
        one)."""
        searched = list(searched)
        self.read_commits_ahead([*paths, *searched])
        roots = self._roots
        walks = {
            (roots[commit], tuple(path.split("/")[:-1]))
            for commit, found in paths.items()
            if commit in roots
            for path in found
        }
        whole = {roots[commit] for commit in searched if commit in roots}
        whole -= self._read_whole
        below: list[str] = []
        while walks or whole:
            self._read_trees([*(sha for sha, _ in walks), *whole])
            deeper = set()
            for sha, parts in walks:
                entry = self._tree_objects.get(sha, {}).get(parts[0]) if parts else None
                if entry is not None and entry.kind == "tree":
                    deeper.add((entry.sha, parts[1:]))
            walks = deeper
            below.extend(whole)
            # A tree read whole before (or searched, `_names_in`) needs no walk down again.
            whole = {
                entry.sha
                for tree in whole
                for entry in self._tree_objects.get(tree, {}).values()
                if entry.kind == "tree"
                and entry.sha not in self._read_whole
                and entry.sha not in self._names_below
            }
        self._read_whole.update(sha for sha in below if sha in self._tree_objects)

    def _tree_object(self, sha: str) -> dict[str, TreeEntry]:
        entries = self._tree_objects.get(sha)
        if entries is None:
            found = self._objects().read(sha)
            if found is None or found[1] != "tree":
                raise RepositoryUnavailable(f"tree {sha} is missing from {self.path}")
            entries = self._keep_tree(sha, found[2])
        return entries

    def _directory(self, commit: str, path: str) -> dict[str, TreeEntry] | None:
        """The entries of the directory ``path`` ("" for the root) at ``commit``; None if the
        commit has no such directory. Reads only the directories on the way down."""
        key = (commit, path)
        if key in self._directory_at:
            return self._directory_at[key]
        entries: dict[str, TreeEntry] | None = self._tree_object(self._root(commit))
        for name in path.split("/") if path else ():
            entry = entries.get(name)  # type: ignore[union-attr]
            if entry is None or entry.kind != "tree":
                entries = None
                break
            entries = self._tree_object(entry.sha)
        self._directory_at[key] = entries
        return entries

    def entry(self, commit: str, path: str) -> TreeEntry | None:
        """The file (or link, or submodule) ``path`` at ``commit``: `tree`'s entry, found by
        reading only the directories above it; None for a directory or a path not there."""
        directory, _, name = path.rpartition("/")
        entries = self._directory(commit, directory)
        entry = None if entries is None else entries.get(name)
        return None if entry is None or entry.kind == "tree" else entry

    def is_directory(self, commit: str, path: str) -> bool:
        """Whether ``path`` (no trailing slash; "" is the root) is a directory at ``commit``."""
        return self._directory(commit, path) is not None

    def files_named(self, commit: str, name: str) -> list[str]:
        """Every file of the commit whose last component is ``name``, in `tree`'s order. Only
        the directories that may hold such a file are walked; what each holds is known by tree
        SHA, so a directory unchanged since another commit was searched costs nothing."""
        root = self._root(commit)
        if (root, name) not in self._named_below and root not in self._read_whole:
            self.read_trees_ahead({}, [commit])
        return list(self._named(root, name))

    def _named(self, sha: str, name: str) -> tuple[str, ...]:
        """The paths, relative to the tree ``sha``, of the files below it named ``name``; kept
        by tree, so a commit that changed one directory searches only the trees it changed."""
        found = self._named_below.get((sha, name))
        if found is None:
            paths: list[str] = []
            for entry_name, entry in self._tree_object(sha).items():
                if entry.kind != "tree":
                    if entry_name == name:
                        paths.append(entry_name)
                    continue
                names = self._names_in(entry.sha)
                if names is None or name in names:
                    paths.extend(f"{entry_name}/{path}" for path in self._named(entry.sha, name))
            found = self._named_below[sha, name] = tuple(paths)
        return found

    def _names_in(self, sha: str) -> frozenset[str] | None:
        """The names of the files in the tree ``sha`` and in its subtrees; None when there are
        more than `_KEPT_NAMES`."""
        if sha in self._names_below:
            return self._names_below[sha]
        entries = self._tree_object(sha)
        names: set[str] | None = {name for name, entry in entries.items() if entry.kind != "tree"}
        for entry in entries.values():
            if entry.kind == "tree":
                below = self._names_in(entry.sha)  # known for every subtree, kept or not
                if names is not None and below is not None:
                    names |= below
                if names is not None and (below is None or len(names) > _KEPT_NAMES):
                    names = None
        kept = self._names_below[sha] = None if names is None else frozenset(names)
        return kept

    def file_names(self, commit: str) -> frozenset[str]:
        """The last components of every file path of the commit."""
        return frozenset(path.rsplit("/", 1)[-1] for path in self.tree(commit))

    def tree(self, commit: str) -> dict[str, TreeEntry]:
        """Every file of the commit (recursively), by repository-relative path, in the order of
        ``git ls-tree -r``. Built from the directories' tree objects, each read once per run."""
        files = self._trees.get(commit)
        if files is None:
            files = {}
            self._list(self._root(commit), "", files)
            self._trees[commit] = files  # (only once whole: a tree object may be missing)
        return files

    def _list(self, sha: str, prefix: str, files: dict[str, TreeEntry]) -> None:
        for name, entry in self._tree_object(sha).items():
            if entry.kind == "tree":
                self._list(entry.sha, f"{prefix}{name}/", files)
            else:
                files[prefix + name] = entry

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
            found = self._objects().read(sha)
            if found is None:
                raise RepositoryUnavailable(f"blob {sha} is missing from {self.path}")
            self.blob_reads += 1
            text = self._blobs[sha] = BlobText(found[2])
        return text

    def read_ahead(self, shas: Iterable[str]) -> None:
        """Read the blobs ``shas`` that were not read yet, in one exchange with git.

        For a caller that knows which blobs `blob` will be asked for: it then gets them without
        a round trip to git each. Only blobs that are certain to be needed belong here: each is
        counted as read. A blob git does not have is left for `blob` to report.
        """
        wanted = [sha for sha in dict.fromkeys(shas) if sha not in self._blobs]
        if not wanted:
            return
        for sha, found in zip(wanted, self._objects().read_many(wanted), strict=True):
            if found is not None:
                self.blob_reads += 1
                self._blobs[sha] = BlobText(found[2])

    def last_version(self, path: str, commit: str) -> BlobText | None:
        """The file ``path`` as it last was before ``commit``, where it no longer is: in the
        parent of the last commit that touched it (which removed or renamed it); None when
        git has no such file."""
        self.read_renames_ahead([path], commit)
        last = self._removed_by.get((path, commit))
        if last is None:
            return None
        version = self._objects().read(f"{last}^:{path}")
        if version is None or version[1] != "blob":
            return None
        return self.blob(version[0])

    def renamed_to(self, path: str, commit: str) -> str | None:
        """Where ``path`` went if git recorded a rename before ``commit`` (following chains)."""
        self.read_renames_ahead([path], commit)
        return self._renames.get((path, commit))

    def read_renames_ahead(self, paths: Iterable[str], commit: str) -> None:
        """Find out, for every path of ``paths`` missing at ``commit``, whether git recorded a
        rename (`renamed_to`), with one ``git log`` for them all: a page citing a thousand files
        that never existed costs one process, not a thousand. Only the paths that were deleted
        at some point cost more: a ``git diff`` of the commit that removed each (once per
        commit)."""
        tree = self.tree(commit)
        wanted = [
            path
            for path in dict.fromkeys(paths)
            if (path, commit) not in self._renames and path not in tree
        ]
        if not wanted:
            return
        last_touched = self._last_commits(wanted, commit)
        for path in wanted:
            last = self._removed_by[(path, commit)] = last_touched.get(path)
            self._renames[(path, commit)] = (
                None if last is None else self._follow_rename(path, commit, last)
            )

    def _last_commits(self, paths: list[str], commit: str) -> dict[str, str]:
        """The newest commit up to ``commit`` that touched each of ``paths`` (those it never
        touched are left out)."""
        found: dict[str, str] = {}
        for first in range(0, len(paths), _PATHS_PER_LOG):
            batch = paths[first : first + _PATHS_PER_LOG]
            output = self.git(
                "log",
                "--format=%x01%H",
                "--name-only",
                "-z",
                "--no-renames",
                commit,
                "--",
                *(f":(literal){path}" for path in batch),
            )
            if output is None:
                continue
            sha = ""
            for field in output.decode("utf-8", "surrogateescape").split("\x00"):
                field = field.strip("\n")
                if field.startswith("\x01"):
                    sha, _, field = field[1:].partition("\n")
                    field = field.strip("\n")
                if field and sha and field not in found:
                    found[field] = sha
        return found

    def _follow_rename(self, path: str, commit: str, last: str | None = None) -> str | None:
        tree = self.tree(commit)
        current = path
        for _ in range(10):  # renames chain rarely; bound the walk anyway
            if last is None:
                found = self.git("log", "-1", "--format=%H", commit, "--", f":(literal){current}")
                last = found.decode().strip() if found is not None else ""
            if not last:
                return None
            output = self._renames_in.get(last)
            if last not in self._renames_in:
                output = self._renames_in[last] = self.git(
                    "diff", "-M", "--name-status", "-z", f"{last}^", last
                )
            if output is None:
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
            current, last = destination, None
        return None

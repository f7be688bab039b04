"""Declaring upstreams: ``kb upstreams add`` and ``kb upstreams remove`` edit ``upstreams.yaml``.

The manifest is a file people write and comment, so it is edited in place by a round trip
(ruamel.yaml): its comments, key order and blank lines stay. Every edit is validated by loading
the edited text as the manifest it would become before anything is written, and written in one
atomic step: a failed ``add`` (a bad URL, a clone that fails, a pin that does not exist) leaves
the manifest as it was.

``add`` clones (or fetches) the upstream into ``cache_dir/NAME`` before writing its entry, since
the pin must be a commit of that clone: the branch's head by default, a commit given with
``--pin``, or one chosen by the caller from the clone (``pin suggest`` over the pages).
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from generator.files import atomic_write
from generator.model import Upstream
from generator.upstream.clones import (
    FetchResult,
    Notify,
    fetch_upstream,
    remote_default_branch,
)
from generator.upstream.gitstore import GitStore
from generator.upstream.manifest import ConfigError, load_manifest

PLACEHOLDER_PIN = "0" * 40
"""The pin of an entry being added, until its clone says which commit to pin."""


@dataclass(frozen=True)
class NewUpstream:
    """What ``kb upstreams add`` declares; ``None`` leaves a key to its default."""

    name: str
    url: str
    branch: str | None = None
    prefixes: Sequence[str] = ()
    search_roots: Sequence[str] = ()
    web_url: str | None = None
    pin: str | None = None
    """A commit (full or abbreviated SHA, tag or branch) of the upstream; default: the head of
    its branch, unless the caller chooses one from the clone."""


@dataclass(frozen=True)
class Added:
    name: str
    pin: str
    fetched: FetchResult
    pinned_by: str
    """``head``, ``given`` or ``chosen`` (by the caller's ``choose_pin``)."""
    branch: str = "main"
    """The branch it tracks: the one given, else ``main``, else the one its HEAD names."""


PinChooser = Callable[[Path], str | None]
"""Given a manifest file with the new upstream declared (pinned at its branch head, its clone
made), the commit to pin instead, or None to keep the head."""


def add_upstream(
    manifest_path: Path,
    new: NewUpstream,
    *,
    notify: Notify | None = None,
    choose_pin: PinChooser | None = None,
) -> Added:
    """Declare ``new`` in the manifest at ``manifest_path``: validate it, clone it, pin it, and
    write its entry (the file's comments and order kept). Raises `ConfigError`, with the
    manifest unchanged, on any problem."""
    manifest = load_manifest(manifest_path)
    if new.name in manifest.upstreams:
        raise ConfigError(
            f"upstream '{new.name}' is already declared",
            file=manifest.display_path(),
            line=manifest.lines.get(f"upstreams.{new.name}"),
            hint=f"kb upstreams fetch {new.name} updates its clone; kb upstreams remove "
            f"{new.name} first to declare it anew",
        )
    document = _round_trip().load(manifest.path.read_text("utf-8"))
    upstreams = document.get("upstreams")
    if upstreams is None:
        document["upstreams"] = upstreams = _block_mapping()
    upstreams[new.name] = _entry(new, PLACEHOLDER_PIN)
    with _Candidate(manifest.path, _dump(document)) as candidate:
        declared = candidate.manifest.upstreams[new.name]
    assert declared.clone_dir is not None
    clone_dir = declared.clone_dir
    try:
        was_empty = clone_dir.is_dir() and not any(clone_dir.iterdir())
    except OSError:  # unreadable: git says so when it clones into it, and nothing is removed
        was_empty = False
    cloning = was_empty or not clone_dir.exists()
    try:
        try:
            fetched = fetch_upstream(candidate.manifest, declared, notify)
        except ConfigError as error:
            # No --branch, and the repository has no `main`: track the branch its HEAD names
            # (`master`, `dev`), as `git clone` would check out.
            branch = None
            if new.branch is None and error.key == f"upstreams.{new.name}.branch":
                branch = remote_default_branch(declared.clone_dir)
            if branch is None:
                raise _as_given(error) from None
            new = replace(new, branch=branch)
            upstreams[new.name] = _entry(new, PLACEHOLDER_PIN)
            with _Candidate(manifest.path, _dump(document)) as candidate:
                declared = candidate.manifest.upstreams[new.name]
            fetched = fetch_upstream(candidate.manifest, declared, notify)
            if cloning:
                fetched = replace(fetched, action="cloned")
        pin, pinned_by = fetched.head, "head"
        if new.pin is not None:
            pin, pinned_by = commit_of(declared, new.pin), "given"
        elif choose_pin is not None:
            upstreams[new.name]["pin"] = fetched.head
            with _Candidate(manifest.path, _dump(document)) as at_head:
                chosen = choose_pin(at_head.file)
            if chosen is not None:
                pin, pinned_by = commit_of(declared, chosen), "chosen"
        upstreams[new.name]["pin"] = pin
        text = _dump(document)
        with _Candidate(manifest.path, text):
            pass  # valid as it will be written
        atomic_write(manifest.path, text.encode("utf-8"))
    except BaseException:
        if cloning:  # made by this run, for nothing; a directory made before stays, empty
            _remove_clone(clone_dir, keep_directory=was_empty)
        raise
    return Added(new.name, pin, fetched, pinned_by, declared.branch)


def _remove_clone(directory: Path, keep_directory: bool) -> None:
    """Remove the clone ``upstreams add`` made in ``directory``: all of it, or, for a directory
    that was there empty before, what it holds."""
    if not keep_directory:
        shutil.rmtree(directory, ignore_errors=True)
        return
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _as_given(error: ConfigError) -> ConfigError:
    """A problem with what ``upstreams add`` was given, said without the line of the entry it
    was trying out: the manifest was not written, so that line is not in the file."""
    hint = error.hint
    if error.key is not None and error.key.endswith(".branch") and hint:
        hint = hint.replace("set `branch:` of", "pass --branch to declare").replace(
            " in the manifest to the one to track", " with the one to track"
        )
    return ConfigError(error.message, file=error.file, key=error.key, hint=hint)


def remove_upstream(manifest_path: Path, name: str) -> Path | None:
    """Remove ``name``'s entry from the manifest (the rest kept as written). Returns its clone's
    directory when it has one, which is left in place (it is only a cache)."""
    manifest = load_manifest(manifest_path)
    upstream = manifest.upstreams.get(name)
    if upstream is None:
        raise ConfigError(
            f"no upstream '{name}' to remove",
            file=manifest.display_path(),
            hint="declared: " + (", ".join(sorted(manifest.upstreams)) or "none"),
        )
    text = _without_entry(manifest.path.read_text("utf-8"), manifest.lines[f"upstreams.{name}"])
    with _Candidate(manifest.path, text) as candidate:
        if name in candidate.manifest.upstreams or set(candidate.manifest.upstreams) != (
            set(manifest.upstreams) - {name}
        ):
            raise ConfigError(
                f"cannot tell where the entry of '{name}' ends in this manifest's layout",
                file=manifest.display_path(),
                line=manifest.lines.get(f"upstreams.{name}"),
                hint="remove its lines by hand",
            )
        pass
    atomic_write(manifest.path, text.encode("utf-8"))
    clone = upstream.clone_dir
    return clone if clone is not None and clone.exists() else None


def _without_entry(text: str, line: int) -> str:
    """``text`` without the entry whose key is on ``line`` (1-based): that line and every line
    after it that is blank or indented deeper, up to the next key at its depth. Lines of it are
    removed, nothing else is touched: a comment above the next entry stays with that entry (a
    round trip would take it away with this one, to which YAML attaches it)."""
    lines = text.splitlines(keepends=True)
    start = line - 1
    depth = len(lines[start]) - len(lines[start].lstrip(" "))
    end = start + 1
    while end < len(lines):
        stripped = lines[end].strip()
        if stripped and len(lines[end]) - len(lines[end].lstrip(" ")) <= depth:
            break
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # the blank lines before the next entry stay
    return "".join(lines[:start] + lines[end:])


def _round_trip() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()  # round trip: comments, order and quoting kept
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    return yaml


def _dump(document: Any) -> str:
    stream = io.StringIO()
    _round_trip().dump(document, stream)
    return stream.getvalue()


def _block_mapping() -> Any:
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap()


def _entry(new: NewUpstream, pin: str) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def flow(items: Sequence[str]) -> CommentedSeq:
        sequence = CommentedSeq(items)
        sequence.fa.set_flow_style()
        return sequence

    entry = CommentedMap()
    entry["url"] = new.url
    if new.branch is not None:
        entry["branch"] = new.branch
    entry["pin"] = pin
    if new.prefixes:
        entry["prefixes"] = flow(new.prefixes)
    if new.search_roots:
        entry["search_roots"] = flow(new.search_roots)
    if new.web_url is not None:
        entry["web_url"] = new.web_url
    return entry


class _Candidate:
    """The manifest ``text`` would be, loaded (so validated) from a file beside the real one, so
    that relative URLs and ``cache_dir`` resolve as they will; ``manifest`` names the real file
    in its messages, ``file`` is the candidate's own (removed on leaving)."""

    def __init__(self, path: Path, text: str) -> None:
        self.file = path.with_name(f".{path.name}.{os.getpid()}.candidate")
        self._text = text
        self._real = path

    def __enter__(self) -> _Candidate:
        self.file.write_text(self._text, "utf-8")
        try:
            self.manifest = load_manifest(self.file)
        except ConfigError as error:
            self.file.unlink(missing_ok=True)
            # Its line is one of the text tried, which was not written: the file has another.
            raise ConfigError(
                error.message,
                file=os.path.relpath(self._real),
                key=error.key,
                hint=error.hint,
            ) from None
        self.manifest.path = self._real  # messages name the file the user knows
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.file.unlink(missing_ok=True)


def commit_of(upstream: Upstream, revision: str) -> str:
    """The full SHA of ``revision`` in the upstream's clone, or a `ConfigError` naming it."""
    assert upstream.clone_dir is not None
    store = GitStore(upstream.clone_dir)
    try:
        sha = store.resolve_given(revision)  # (as sync --to and source --at read one)
    finally:
        store.close()
    if sha is not None:
        return sha
    raise ConfigError(
        f"'{revision}' is not a commit of {upstream.name} ({upstream.url})",
        hint="give a commit SHA (full or abbreviated), a tag or a branch of the upstream",
    )

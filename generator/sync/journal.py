"""What a ``sync`` run has written or is about to write, so that a rerun can finish its job.

Before a run writes anything, it records in a journal (``.cache/sync-journal.json`` beside the
manifest) every file it is about to write and a digest of the bytes it will write there. Each
write is atomic, so after a kill each of these files holds its old bytes or exactly the recorded
new ones, and at most a temporary file of `generator.files.atomic_write` is left beside it.

A rerun therefore:

- deletes those temporary files, and only those: the files named like ``atomic_write``'s
  temporary files for the files the journal lists (``.NAME.XXXXXXXX.tmp`` beside ``NAME``);
- accepts a file that differs from what is committed when it holds exactly the bytes the journal
  recorded for it (the interrupted run's own write), and refuses any other difference, so that a
  person's edit made after the kill is still protected;
- removes the journal once the whole command has finished.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from generator.files import atomic_write

log = logging.getLogger(__name__)

JOURNAL_NAME = "sync-journal.json"
_VERSION = 1
_TEMPORARY_SUFFIX = re.compile(r"[a-z0-9_]{8}\.tmp")
"""What `tempfile.mkstemp` appends to ``atomic_write``'s prefix ``.NAME.``."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def journal_path(root: Path) -> Path:
    """Where the journal of the knowledge base at ``root`` (the manifest's directory) lives."""
    return root / ".cache" / JOURNAL_NAME


@dataclass
class Journal:
    """The files a sync wrote or is about to write, each with the digests of its new bytes."""

    path: Path
    files: dict[str, list[str]] = field(default_factory=dict)
    """Absolute path -> digests of the contents this sync (or the interrupted one it finishes)
    writes there."""

    @classmethod
    def load(cls, path: Path) -> Journal:
        """The journal at ``path``; empty when there is none or it cannot be read (then nothing
        is accepted, which is the safe side)."""
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as error:
            log.warning("ignoring the unreadable sync journal %s: %s", path, error)
            return cls(path)
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict) or data.get("version") != _VERSION:
            log.warning("ignoring the sync journal %s: not a journal this version writes", path)
            return cls(path)
        return cls(
            path,
            {
                str(name): [str(d) for d in digests]
                for name, digests in files.items()
                if isinstance(digests, list)
            },
        )

    def expect(self, path: Path, data: bytes) -> None:
        """Record that ``data`` is about to be written to ``path`` (call `save` before writing)."""
        digests = self.files.setdefault(str(path.resolve()), [])
        value = digest(data)
        if value not in digests:
            digests.append(value)

    def save(self) -> None:
        """Write the journal to disk, durably, before the files it announces are written."""
        payload = {"version": _VERSION, "files": self.files}
        atomic_write(self.path, (json.dumps(payload, indent=1, sort_keys=True) + "\n").encode())

    def finish(self) -> None:
        """The command finished: nothing is left to resume."""
        self.path.unlink(missing_ok=True)
        self.files = {}

    def holds_own_write(self, path: Path) -> bool:
        """``path`` holds exactly bytes this journal says a sync wrote there."""
        digests = self.files.get(str(path.resolve()))
        if not digests:
            return False
        try:
            return digest(path.read_bytes()) in digests
        except OSError:
            return False

    def resume(self) -> list[Path]:
        """Start a run from this journal: delete the temporary files of the interrupted writes
        it lists (and its own), and keep only the files that still hold the interrupted run's
        bytes (what a person has since changed or restored is no longer the run's doing).
        Returns the temporary files deleted."""
        removed = sweep_temporaries([*(Path(name) for name in self.files), self.path])
        kept: dict[str, list[str]] = {}
        for name in self.files:
            try:
                current = digest(Path(name).read_bytes())
            except OSError:
                continue
            if current in self.files[name]:
                kept[name] = [current]
        self.files = kept
        return removed


def sweep_temporaries(paths: list[Path]) -> list[Path]:
    """Delete the temporary files ``atomic_write`` leaves beside ``paths`` when it is killed.

    Only regular files named ``.NAME.XXXXXXXX.tmp`` beside a listed ``NAME`` are touched."""
    by_directory: dict[Path, set[str]] = {}
    for path in paths:
        by_directory.setdefault(path.parent, set()).add(path.name)
    removed = []
    for directory, names in by_directory.items():
        try:
            entries = list(directory.iterdir())
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(".") or not entry.name.endswith(".tmp"):
                continue
            if not any(
                entry.name.startswith(f".{name}.")
                and _TEMPORARY_SUFFIX.fullmatch(entry.name[len(name) + 2 :])
                for name in names
            ):
                continue
            if entry.is_symlink() or not entry.is_file():
                continue
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed

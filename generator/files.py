"""Files: writing them so that a reader never sees half of one, and naming them to a user."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.
    ``durable=False`` skips the sync to disk, for files that may be lost (a cache)."""
    import tempfile  # only writers need it; verifying reads (and starts faster without it)

    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        Path(temporary).chmod(mode)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def user_cache_dir() -> Path:
    """This user's cache directory for the tool: ``$XDG_CACHE_HOME/kb-generator/``, by default
    ``~/.cache/kb-generator/``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kb-generator"


def shown_path(path: Path | str | None) -> str:
    """``path`` relative to the working directory when it is below it, as a user would type it;
    as it is otherwise."""
    if path is None:
        return "(none)"
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both real paths: `os.path.realpath`)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def link_loops(directory: Path) -> list[str]:
    """The links below ``directory`` (relative to it) that lead to a directory holding them
    (``a/loop -> ..``, ``a/self -> .``): a walk that follows links never ends on them."""
    loops = []
    for folder, subfolders, _ in os.walk(directory):
        for name in sorted(subfolders):
            link = os.path.join(folder, name)  # noqa: PTH118
            if os.path.islink(link) and inside(os.path.realpath(folder), os.path.realpath(link)):  # noqa: PTH114
                loops.append(os.path.relpath(link, directory).replace(os.sep, "/"))
    return sorted(loops)


def file_in_the_way(directory: Path | None) -> Path | None:
    """The existing file (not a directory) at ``directory`` or above it, which stops anything
    from being written there; None when there is none."""
    if directory is None:
        return None
    for path in (directory, *directory.parents):
        if path.exists():
            return None if path.is_dir() else path
    return None

"""What a ``mkdocs serve`` rebuild takes from the build before it.

``mkdocs serve`` rebuilds the whole site after every edit, though an edit changes one page. The
plugin's work on a page (parsing it, planning its code links, marking and unmarking them in its
Markdown and HTML) depends on a few inputs: when they are the same as in the last build, so is
the result. `RebuildMemo` keeps, per kind of work and page, the last result with the inputs it
was made from.

Inputs are compared with ``==``. Most of them are the very objects of the last build (the
same parsed page, the same planned links), which compare at once; text and bytes compare at
memory speed. Only what the last build used is kept (`next_build`), so a long session that
renames or deletes pages holds no more than one build's worth. A one-off ``mkdocs build`` keeps
nothing: there is no next build to save for.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class RebuildMemo:
    """The last result of each kind of work on each page, with the inputs it was made from."""

    def __init__(self, *, keep: bool) -> None:
        self.keep = keep
        """False for a one-off build: every result is made afresh and nothing is kept."""
        self._kept: dict[tuple[str, Hashable], tuple[tuple[Any, ...], Any]] = {}
        """What this build made or took, by kind and key."""
        self._last: dict[tuple[str, Hashable], tuple[tuple[Any, ...], Any]] = {}
        """What the build before it made or took."""

    def next_build(self) -> None:
        """A build starts: what the last one made is what it can take."""
        self._last, self._kept = self._kept, {}

    def get(self, kind: str, key: Hashable, inputs: tuple[Any, ...], make: Callable[[], T]) -> T:
        """``make()``, or what it returned in the last build for ``(kind, key)`` if ``inputs``
        are the same as then."""
        if not self.keep:
            return make()
        kept = self._kept.get((kind, key)) or self._last.get((kind, key))
        if kept is None or kept[0] != inputs:
            kept = (inputs, make())
        self._kept[kind, key] = kept
        return kept[1]

    def kept_or(self, kind: str, key: Hashable, inputs: tuple[Any, ...], value: T) -> T:
        """What the last build kept for ``(kind, key)`` if ``inputs`` are the same as then
        (the very object, which later work compares at once), else ``value``."""
        return self.get(kind, key, inputs, lambda: value)

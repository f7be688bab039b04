"""GitHub-compatible heading anchors.

GitHub (github-slugger) lower-cases the heading's text, drops every character that is not a
letter, mark, number, connector punctuation (``_``), space or hyphen, and turns each space into a
hyphen. CJK text is kept, so ``## 3. 关键 PR 实现细节`` becomes ``#3-关键-pr-实现细节``. MkDocs'
default slugify drops such text and breaks links written on GitHub; the site uses this function
(``toc.slugify``) so that one anchor works in both places and the verifier checks the same thing.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable

_KEPT_CATEGORIES = frozenset("LMN")


def _keep(char: str) -> bool:
    if char in (" ", "-"):
        return True
    category = unicodedata.category(char)
    return category[0] in _KEPT_CATEGORIES or category == "Pc"


@functools.lru_cache(maxsize=65536)
def github_slug(text: str) -> str:
    """Anchor GitHub gives a heading whose rendered text is ``text`` (before de-duplication).
    Kept for the headings met again: ``mkdocs serve`` renders every page after each edit."""
    lowered = text.strip().lower()
    return "".join(char for char in lowered if _keep(char)).replace(" ", "-")


def slugify(value: str, separator: str = "-") -> str:
    """Python-Markdown ``toc`` slugify hook: same anchors as GitHub.

    ``separator`` is accepted for the hook's signature; GitHub always uses a hyphen.
    """
    del separator
    return github_slug(value)


class Slugger:
    """Assigns unique anchors in document order the way GitHub does (``x``, ``x-1``, ``x-2``)."""

    def __init__(self, slug: Callable[[str], str] = github_slug) -> None:
        self._slug = slug
        self._seen: dict[str, int] = {}

    def unique(self, text: str) -> str:
        return self.reserve(self._slug(text))

    def reserve(self, anchor: str) -> str:
        candidate = anchor
        while candidate in self._seen:
            self._seen[anchor] += 1
            candidate = f"{anchor}-{self._seen[anchor]}"
        self._seen[candidate] = 0
        return candidate

"""Where a new page goes in the knowledge base when it does not say: its spec, level, learning
paths, order and, for a review, the deep dive it follows.

``ingest`` places each page it imports this way, and the ``pr``, ``review`` and ``source``
drafts are placed the same way, so that a page added by any of them joins its spec and a
learning path and the next build passes. What the page's frontmatter says is kept; what the
command's options say (``--spec``, ``--path``, ``--level``, ``--order``) wins over both.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from generator.kb.pages import Page
from generator.kb.paths import LEVELS, build_curriculum, deep_dives_of
from generator.kb.sections import ANALYSIS_KINDS, PR_DEEP_DIVE, REVIEW, SOURCE_ANALYSIS
from generator.kb.specs import Spec, find_spec

DEFAULT_LEVEL: dict[str, str] = {
    SOURCE_ANALYSIS: "beginner",
    PR_DEEP_DIVE: "intermediate",
    "pr-explanation": "intermediate",
    REVIEW: "advanced",
}
"""Where a page of each kind sits when neither the file nor the options say."""


@dataclass(frozen=True)
class Placed:
    """One frontmatter key a page is given, and why (shown to the user)."""

    key: str
    value: Any
    why: str


@dataclass(frozen=True)
class Placement:
    """Where a page goes in the knowledge base, as a command's options ask: its spec, learning
    paths and level (None or empty: decide)."""

    spec: str | None = None
    paths: tuple[str, ...] = ()
    level: str | None = None

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser, path_help: str = "") -> None:
        """Add ``--spec``, ``--path`` (repeatable) and ``--level`` to a page-writing command."""
        parser.add_argument("--spec", metavar="NNN-NAME", help="the spec that governs the page")
        parser.add_argument(
            "--path",
            action="append",
            default=[],
            metavar="NAME",
            dest="paths",
            help=f"a learning path the page belongs to (repeatable{path_help})",
        )
        parser.add_argument("--level", choices=LEVELS, help="the page's reading level")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Placement:
        return cls(args.spec, tuple(args.paths), args.level)


def place(
    meta: dict[str, Any],
    kind: str,
    rel: str,
    *,
    specs: Sequence[Spec],
    pages: Sequence[Page],
    requested: Placement = Placement(),
    order: int | None = None,
) -> list[Placed]:
    """The keys to give the page at ``rel`` (of ``kind``, with frontmatter ``meta``) so that it
    has a spec, a level and, for an analysis, a learning path and an order; ``pages`` is the
    rest of the knowledge base."""
    placed: list[Placed] = []
    if requested.spec:
        placed.append(Placed("spec", requested.spec, "from --spec"))
    elif not meta.get("spec") and len(specs) == 1:
        placed.append(Placed("spec", specs[0].id, "the knowledge base's only spec"))
    elif not meta.get("spec") and specs:
        named = _spec_of_its_kind(kind, pages, specs)
        if named is not None:
            placed.append(Placed("spec", named, f"the spec of the other {kind} pages"))
    level = requested.level or meta.get("level")
    if level not in LEVELS:
        level = DEFAULT_LEVEL.get(kind)
    if level is not None:
        why = "from --level" if requested.level else "default for the kind"
        placed.append(Placed("level", level, why))
    if kind not in ANALYSIS_KINDS:
        return placed
    curriculum = build_curriculum([page for page in pages if page.rel != rel])
    paths = list(requested.paths)
    why = "from --path"
    if not paths and not meta.get("paths") and not meta.get("path"):
        chosen = nearest_level_path(level, curriculum.paths)
        why = "the path nearest its level"
        if chosen is None and len(curriculum.paths) == 1:
            chosen, why = next(iter(curriculum.paths)), "the knowledge base's only path"
        paths = [chosen] if chosen else []
    if paths:
        placed.append(Placed("paths", paths, why))
    if order is not None:
        placed.append(Placed("order", order, "from --order"))
    elif "order" not in meta and paths:
        orders = [
            page.order
            for page in curriculum.pages.values()
            if page.order is not None and page.level == level and set(page.paths) & set(paths)
        ]
        placed.append(
            Placed("order", max(orders, default=0) + 1, "after the last page of its level")
        )
    if kind == REVIEW and meta.get("pr") is not None:
        found = deep_dives_of(list(pages), meta["pr"], meta.get("upstream"))
        deep_dives = [other for other in found if other != rel]
        depends = [str(d) for d in meta.get("depends_on") or []]
        missing = [d for d in deep_dives if d not in depends]
        if missing:
            placed.append(
                Placed("depends_on", [*depends, *missing], "the deep dive of the same PR")
            )
    return placed


def nearest_level_path(level: str | None, paths: Iterable[str]) -> str | None:
    """The level path closest to ``level`` (the easier one on a tie), if the docs have one."""
    if level not in LEVELS:
        return None
    rank = LEVELS.index(level)
    existing = [name for name in paths if name in LEVELS]
    if not existing:
        return None
    return min(existing, key=lambda name: (abs(LEVELS.index(name) - rank), LEVELS.index(name)))


def _spec_of_its_kind(kind: str, pages: Sequence[Page], specs: Sequence[Spec]) -> str | None:
    """The spec that pages of ``kind`` name most often, when one does."""
    counts: Counter[str] = Counter()
    for page in pages:
        named = page.meta.get("spec")
        if page.meta.get("kind") == kind and named not in (None, ""):
            spec = find_spec(specs, str(named))
            if spec is not None:
                counts[spec.id] += 1
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]

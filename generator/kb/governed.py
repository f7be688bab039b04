"""Whether a knowledge base has governance to check: specs, or pages placed on learning paths.

Apart from `generator.kb.specs` so that a run can ask without importing the governance modules
(specs, learning paths, sections, diagrams): most runs of ``kb verify`` (a pre-commit hook on one
page, a knowledge base without specs) have nothing for them, and importing them took a tenth of
such a run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from generator.kb.pages import Page

CURRICULUM_KEYS = ("paths", "path", "depends_on", "level", "order", "kind", "diagrams")
"""Frontmatter keys that place a page on learning paths or say what kind of page it is."""


def is_governed(root: Path) -> bool:
    """Whether the knowledge base at ``root`` keeps LeanSpec specs (``.lean-spec/`` or
    ``specs/``)."""
    return (root / ".lean-spec").is_dir() or (root / "specs").is_dir()


def has_governance(root: Path, pages: Iterable[Page]) -> bool:
    """Whether `generator.kb.specs.governance_findings` has anything to check for ``pages``."""
    return is_governed(root) or any(key in page.meta for page in pages for key in CURRICULUM_KEYS)

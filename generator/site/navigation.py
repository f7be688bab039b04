"""Navigation and learning-path boxes, computed from the curriculum at build time.

Nothing here is kept by hand: the nav, the home page's list of paths and levels, each path
index page's ordered page list, and each page's banner, prerequisites and previous/next links
all come from `generator.paths.Curriculum`. Every function returns data or Markdown; the plugin
decides where it goes. Links are relative Markdown links, so MkDocs validates and rewrites them
like any other link.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterable
from typing import Any

from generator.paths import LEVELS, Curriculum, LearningPath, PathPage

PATHS_MARKER = "<!-- kb:learning-paths -->"
"""Replaced (on any page) by the list of learning paths with their pages."""
LEVELS_MARKER = "<!-- kb:levels -->"
"""Replaced (on any page) by every page grouped by level."""
PATH_PAGES_MARKER = "<!-- kb:path-pages -->"
"""Replaced, on a path's index page, by the path's ordered pages (appended when absent)."""

BANNER_STATUSES = ("draft", "planned", "in-progress")

_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "draft": "Draft",
        "planned": "Planned",
        "in-progress": "In progress",
        "draft-text": "This page is a draft: its content is incomplete and may change.",
        "planned-text": "This page is planned: most of its content is not written yet.",
        "in-progress-text": "This page is being written: parts of it may be missing or change.",
        "prerequisites": "Before you read",
        "prerequisites-text": "This page builds on:",
        "path": "Learning path",
        "previous": "Previous",
        "next": "Next",
        "start": "start of the path",
        "end": "end of the path",
        "of": "of",
        "pages-in-path": "Pages in this path",
        "no-pages": "No pages are in this path yet.",
        "level": "Level",
        "status": "Status",
        "page": "Page",
        "paths": "Learning paths",
        "levels": "Pages by level",
        "other": "Other pages",
        "home": "Home",
        "tags": "Tags",
        "board": "Spec board",
        "problem": "by problem",
        "pages": "pages",
    },
    "zh": {
        "draft": "草稿",
        "planned": "计划中",
        "in-progress": "编写中",
        "draft-text": "本页是草稿：内容尚不完整，可能还会修改。",
        "planned-text": "本页尚在计划中：大部分内容还没有写。",
        "in-progress-text": "本页正在编写：部分内容可能缺失或变动。",
        "prerequisites": "阅读前",
        "prerequisites-text": "本页以这些页面为基础：",
        "path": "学习路径",
        "previous": "上一篇",
        "next": "下一篇",
        "start": "路径起点",
        "end": "路径终点",
        "of": "/",
        "pages-in-path": "本路径的页面",
        "no-pages": "本路径还没有页面。",
        "level": "级别",
        "status": "状态",
        "page": "页面",
        "paths": "学习路径",
        "levels": "按级别浏览",
        "other": "其他页面",
        "home": "首页",
        "tags": "标签",
        "board": "规格看板",
        "problem": "按问题",
        "pages": "页",
    },
}
_LEVEL_NAMES = {
    "en": {level: level.capitalize() for level in LEVELS},
    "zh": {"beginner": "入门", "intermediate": "中级", "advanced": "进阶", "expert": "专家"},
}


def words(lang: str | None) -> dict[str, str]:
    """Labels in the page's language (``zh``, ``zh-CN``, ...), English otherwise."""
    key = (lang or "en").split("-", 1)[0].lower()
    return _WORDS.get(key, _WORDS["en"])


def level_name(level: str | None, lang: str | None) -> str:
    key = (lang or "en").split("-", 1)[0].lower()
    names = _LEVEL_NAMES.get(key, _LEVEL_NAMES["en"])
    return names.get(level or "", level or "")


def link(title: str, target: str, from_rel: str) -> str:
    """A Markdown link from page ``from_rel`` to page ``target`` (both docs-relative)."""
    href = _relpath(target, posixpath.dirname(from_rel) or ".")
    label = title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({href.replace(' ', '%20')})"


@functools.lru_cache(maxsize=65536)
def _relpath(target: str, start: str) -> str:
    """``posixpath.relpath``, remembered: every page links the same few pages of its paths."""
    return posixpath.relpath(target, start)


# --------------------------------------------------------------------------------------------
# The nav


def build_nav(
    curriculum: Curriculum,
    rels: Iterable[str],
    home: str | None = "index.md",
    extra: Iterable[Any] = (),
    lang: str | None = None,
) -> list[Any]:
    """MkDocs ``nav`` data: home, the learning paths' index pages, then every page by level.

    Each page appears exactly once (a page can be in several paths; its path neighbours are on
    the page itself). ``rels`` are the pages to place (archived pages already removed).
    """
    w = words(lang)
    remaining = [rel for rel in rels if rel != home]
    nav: list[Any] = [{w["home"]: home}] if home else []
    index_pages = []
    for path in curriculum.ordered_paths():
        for rel in path.indexes or ((path.index,) if path.index else ()):
            if rel in remaining and rel not in index_pages:
                index_pages.append(rel)
    if index_pages:
        nav.append({w["paths"]: index_pages})
    placed = set(index_pages)
    order = {rel: i for i, rel in enumerate(curriculum.order)}
    by_level: dict[str | None, list[str]] = {level: [] for level in LEVELS}
    by_level[None] = []
    for rel in sorted(remaining, key=lambda r: (order.get(r, len(order)), r)):
        if rel in placed:
            continue
        page = curriculum.pages.get(rel)
        by_level[page.level if page is not None else None].append(rel)
    for level in LEVELS:
        if by_level[level]:
            nav.append({level_name(level, lang): by_level[level]})
    if by_level[None]:
        nav.append({w["other"]: by_level[None]})
    nav.extend(extra)
    return nav


# --------------------------------------------------------------------------------------------
# Generated lists


def paths_list(curriculum: Curriculum, from_rel: str, lang: str | None) -> str:
    """Markdown: every learning path (level paths first), each with its pages in order."""
    w = words(lang)
    blocks = []
    for path in curriculum.ordered_paths():
        kind = level_name(path.name, lang) if path.is_level else w["problem"]
        head = link(path.title, path.index, from_rel) if path.index else path.title
        lines = [f"- **{head}** ({kind}, {len(path.pages)} {w['pages']})"]
        for number, rel in enumerate(path.pages, 1):
            lines.append(f"    {number}. {link(curriculum.pages[rel].title, rel, from_rel)}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks) + "\n" if blocks else ""


def levels_list(curriculum: Curriculum, from_rel: str, lang: str | None) -> str:
    """Markdown: every page grouped by level, in reading order, with its status."""
    w = words(lang)
    parts = []
    for level, pages in curriculum.by_level().items():
        pages = [page for page in pages if page.rel != from_rel]
        if not pages:
            continue
        title = level_name(level, lang) if level else w["other"]
        lines = [f"**{title}**", ""]
        for page in pages:
            status = (
                f" ({_status_word(page.status, lang)})" if page.status in BANNER_STATUSES else ""
            )
            lines.append(f"- {link(page.title, page.rel, from_rel)}{status}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n" if parts else ""


def path_pages_table(
    curriculum: Curriculum, path: LearningPath, from_rel: str, lang: str | None
) -> str:
    """Markdown: a path's pages in reading order, with level, status and prerequisites."""
    w = words(lang)
    if not path.pages:
        return w["no-pages"] + "\n"
    lines = [
        f"| # | {w['page']} | {w['level']} | {w['status']} | {w['prerequisites']} |",
        "|---|---|---|---|---|",
    ]
    for number, rel in enumerate(path.pages, 1):
        page = curriculum.pages[rel]
        prerequisites = ", ".join(
            link(dep.title, dep.rel, from_rel) for dep in curriculum.prerequisites(rel)
        )
        lines.append(
            f"| {number} | {link(page.title, rel, from_rel)} | {level_name(page.level, lang)} "
            f"| {_status_word(page.status, lang)} | {prerequisites} |"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Boxes on each page


def page_header(curriculum: Curriculum, rel: str) -> str:
    """Markdown for the top of a page: status banner and prerequisites (may be empty)."""
    page = curriculum.pages.get(rel)
    if page is None:
        return ""
    w = words(page.lang)
    blocks = []
    if page.status in BANNER_STATUSES:
        blocks.append(f'!!! warning kb-status "{w[page.status]}"\n    {w[page.status + "-text"]}\n')
    prerequisites = curriculum.prerequisites(rel)
    if prerequisites:
        items = "\n".join(f"    - {link(dep.title, dep.rel, rel)}" for dep in prerequisites)
        blocks.append(
            f'!!! info kb-prerequisites "{w["prerequisites"]}"\n'
            f"    {w['prerequisites-text']}\n\n{items}\n"
        )
    return "\n".join(blocks)


def page_footer(curriculum: Curriculum, rel: str) -> str:
    """Markdown for the end of a page: its place in each of its paths, previous and next."""
    page = curriculum.pages.get(rel)
    if page is None:
        return ""
    w = words(page.lang)
    blocks = []
    for path in curriculum.paths_of(rel):
        previous, following = curriculum.neighbours(path.name, rel)
        position = (path.position(rel) or 0) + 1
        title = f"{w['path']}: {path.title} ({position} {w['of']} {len(path.pages)})"
        title = title.replace('"', "'")
        before = (
            f"← {w['previous']}: {link(previous.title, previous.rel, rel)}"
            if previous
            else f"← {w['start']}"
        )
        after = (
            f"{w['next']}: {link(following.title, following.rel, rel)} →"
            if following
            else f"{w['end']} →"
        )
        index = f"{link(path.title, path.index, rel)}  \n    " if path.index else ""
        blocks.append(f'!!! abstract kb-path "{title}"\n    {index}{before} · {after}\n')
    return "\n".join(blocks)


def _status_word(status: str | None, lang: str | None) -> str:
    if status is None:
        return ""
    return words(lang).get(status, status)


def is_index_of(page: PathPage | None) -> str | None:
    return page.index_of if page is not None else None

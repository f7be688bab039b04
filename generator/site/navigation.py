"""Navigation and learning-path boxes, computed from the curriculum at build time.

Nothing here is kept by hand: the nav, the home page's list of paths and levels, each path
index page's ordered page list, and each page's banner, prerequisites and previous/next links
all come from `generator.kb.paths.Curriculum`. Every function returns data or HTML; the plugin
decides where it goes. The lists and boxes link pages through an `Href`, the URLs MkDocs gives
the pages, so Markdown never parses their links: on a large site, the home page and the paths'
tables hold hundreds of them.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from typing import Any

from generator.kb.paths import LEVELS, Curriculum, LearningPath, PathPage

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


Href = Callable[[str], str | None]
"""The URL of a page (docs-relative path) from the page being built, or None if not built."""


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
#
# HTML in the form Markdown gives the same lists and tables, put where a page has the marker
# (`fill_markers`); linked like the boxes below, so the links' targets are never parsed.


def marker_blocks(curriculum: Curriculum, rel: str, text: str, href: Href) -> dict[str, str]:
    """The lists for the markers page ``rel`` has (its Markdown is ``text``), by marker.

    A path's index page gets its table even without the marker: the plugin adds the marker
    under a heading of its own at the end of the page.
    """
    page = curriculum.pages.get(rel)
    lang = page.lang if page is not None else None
    blocks = {}
    if PATHS_MARKER in text:
        blocks[PATHS_MARKER] = paths_list(curriculum, href, lang)
    if LEVELS_MARKER in text:
        blocks[LEVELS_MARKER] = levels_list(curriculum, rel, href, lang)
    if page is not None and page.index_of and page.index_of in curriculum.paths:
        path = curriculum.paths[page.index_of]
        blocks[PATH_PAGES_MARKER] = path_pages_table(curriculum, path, href, lang)
    return blocks


def fill_markers(html: str, blocks: dict[str, str]) -> str:
    """The page's HTML with each marker (an HTML comment Markdown kept) replaced by its list."""
    for marker, block in blocks.items():
        if marker in html:
            html = html.replace(f"<p>{marker}</p>", block).replace(marker, block)
    return html


def paths_list(curriculum: Curriculum, href: Href, lang: str | None) -> str:
    """Every learning path (level paths first), each with its pages in order."""
    w = words(lang)
    items = []
    for path in curriculum.ordered_paths():
        kind = level_name(path.name, lang) if path.is_level else w["problem"]
        head = html_link(path.title, path.index, href) if path.index else _text(path.title)
        item = f"<li><strong>{head}</strong> ({_text(kind)}, {len(path.pages)} {_text(w['pages'])})"
        if path.pages:
            pages = "\n".join(
                f"<li>{html_link(curriculum.pages[rel].title, rel, href)}</li>"
                for rel in path.pages
            )
            item += f"<ol>\n{pages}\n</ol>\n"
        items.append(item + "</li>")
    return "<ul>\n" + "\n".join(items) + "\n</ul>" if items else ""


def levels_list(curriculum: Curriculum, from_rel: str, href: Href, lang: str | None) -> str:
    """Every page but ``from_rel``, grouped by level, in reading order, with its status."""
    w = words(lang)
    parts = []
    for level, pages in curriculum.by_level().items():
        pages = [page for page in pages if page.rel != from_rel]
        if not pages:
            continue
        title = level_name(level, lang) if level else w["other"]
        items = []
        for page in pages:
            status = (
                f" ({_text(_status_word(page.status, lang))})"
                if page.status in BANNER_STATUSES
                else ""
            )
            items.append(f"<li>{html_link(page.title, page.rel, href)}{status}</li>")
        parts.append(
            f"<p><strong>{_text(title)}</strong></p>\n<ul>\n" + "\n".join(items) + "\n</ul>"
        )
    return "\n".join(parts)


def path_pages_table(
    curriculum: Curriculum, path: LearningPath, href: Href, lang: str | None
) -> str:
    """A path's pages in reading order, with level, status and prerequisites.

    Three columns, the level and status under the page's title, and titles that may break
    after a ``/``: so that the table fits a phone's screen without scrolling sideways.
    """
    w = words(lang)
    if not path.pages:
        return f"<p>{_text(w['no-pages'])}</p>"
    headings = ("#", w["page"], w["prerequisites"])
    rows = ["<tr>\n" + "\n".join(f"<th>{_text(h)}</th>" for h in headings) + "\n</tr>"]
    body = []
    for number, rel in enumerate(path.pages, 1):
        page = curriculum.pages[rel]
        prerequisites = ", ".join(
            html_link(dep.title, dep.rel, href, breakable=True)
            for dep in curriculum.prerequisites(rel)
        )
        facts = [level_name(page.level, lang), _status_word(page.status, lang)]
        about = " · ".join(_text(fact) for fact in facts if fact)
        cells = (
            str(number),
            html_link(page.title, rel, href, breakable=True)
            + (f"<br />\n{about}" if about else ""),
            prerequisites,
        )
        body.append("<tr>\n" + "\n".join(f"<td>{cell}</td>" for cell in cells) + "\n</tr>")
    return (
        "<table>\n<thead>\n"
        + rows[0]
        + "\n</thead>\n<tbody>\n"
        + "\n".join(body)
        + "\n</tbody>\n</table>"
    )


# --------------------------------------------------------------------------------------------
# Boxes on each page
#
# HTML in the form of the ``admonition`` extension's output, which the theme styles. The plugin
# adds them to a page after it was indexed for search: they repeat other pages' titles, which
# would make every page a search hit for its neighbours.


def page_header(curriculum: Curriculum, rel: str, href: Href) -> str:
    """HTML for the top of a page: status banner and prerequisites (may be empty)."""
    page = curriculum.pages.get(rel)
    if page is None:
        return ""
    w = words(page.lang)
    blocks = []
    if page.status in BANNER_STATUSES:
        blocks.append(
            _box("warning kb-status", w[page.status], f"<p>{_text(w[page.status + '-text'])}</p>")
        )
    prerequisites = curriculum.prerequisites(rel)
    if prerequisites:
        items = "\n".join(
            f"<li>{html_link(dep.title, dep.rel, href)}</li>" for dep in prerequisites
        )
        blocks.append(
            _box(
                "info kb-prerequisites",
                w["prerequisites"],
                f"<p>{_text(w['prerequisites-text'])}</p>\n<ul>\n{items}\n</ul>",
            )
        )
    return "\n".join(blocks)


def page_footer(curriculum: Curriculum, rel: str, href: Href) -> str:
    """HTML for the end of a page: its place in each of its paths, previous and next."""
    page = curriculum.pages.get(rel)
    if page is None:
        return ""
    w = words(page.lang)
    blocks = []
    for path in curriculum.paths_of(rel):
        previous, following = curriculum.neighbours(path.name, rel)
        position = (path.position(rel) or 0) + 1
        # ("Beginner learning path" says it is one: "Learning path: " before it repeats it.)
        named = (
            path.title if w["path"].lower() in path.title.lower() else f"{w['path']}: {path.title}"
        )
        title = f"{named} ({position} {w['of']} {len(path.pages)})"
        before = (
            f"← {_text(w['previous'])}: {html_link(previous.title, previous.rel, href)}"
            if previous
            else f"← {_text(w['start'])}"
        )
        after = (
            f"{_text(w['next'])}: {html_link(following.title, following.rel, href)} →"
            if following
            else f"{_text(w['end'])} →"
        )
        index = f"{html_link(path.title, path.index, href)}<br />\n" if path.index else ""
        blocks.append(_box("abstract kb-path", title, f"<p>{index}{before} · {after}</p>"))
    return "\n".join(blocks)


def html_link(title: str, target: str, href: Href, *, breakable: bool = False) -> str:
    """``<a>`` to page ``target`` titled ``title``; the bare title if the page is not built.

    ``breakable``: the title may break after a ``/`` (a path in a title is one long word, and
    a table cell holding one cannot be narrower than it)."""
    text = _text(title)
    if breakable:
        text = text.replace("/", "/<wbr>")
    url = href(target)
    if url is None:
        return text
    return f'<a href="{html.escape(url)}">{text}</a>'


def _box(kind: str, title: str, body: str) -> str:
    return (
        f'<div class="admonition {kind}">\n'
        f'<p class="admonition-title">{_text(title)}</p>\n{body}\n</div>'
    )


def _text(text: str) -> str:
    return html.escape(text, quote=False)


def _status_word(status: str | None, lang: str | None) -> str:
    if status is None:
        return ""
    return words(lang).get(status, status)


def is_index_of(page: PathPage | None) -> str | None:
    return page.index_of if page is not None else None

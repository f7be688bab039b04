"""Corpora of analyses as teams really bring them, for the tests that import them.

`write_github_corpus` writes a folder of analyses written for GitHub about a real upstream
(its functions' real line ranges, read from a git clone at a commit): no frontmatter,
``snake_case`` file names, a ``README.md`` index linking every page (with ``#anchors``), pages
linking each other, lists that start right after a paragraph line, footnotes, tables of
references with the path and the lines in separate cells, absolute laptop paths in every form
the extractor reads (inline, in a code span, a table's path cell, ``(lines N-M)``,
``（第 N-M 行）``), English and Chinese pages, one page about a pull request, pages that mention a
pull request only in passing near their end, one page whose references are all in a table, and
every page stating the date it was written, each in another style.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

LOCAL_ROOT = "/home/alice/minitrain"
"""Where the upstream was checked out on the author's laptop (the absolute paths' root)."""

INDEX = "README.md"


@dataclass(frozen=True)
class Function:
    """A function or method of the upstream, where it is at the commit."""

    path: str
    name: str
    start: int
    end: int


@dataclass(frozen=True)
class CorpusPage:
    """One page of the corpus, as written."""

    name: str
    """Its file name (``packing_pack_samples.md``)."""
    title: str
    lang: str
    """``en`` or ``zh`` (Chinese prose around English code)."""
    created: dt.date
    """The date the page states."""
    pr: int | None = None
    """The pull request the page is about (its title says so)."""
    mentions_pr_late: bool = False
    """A source analysis that mentions a pull request in passing, near its end."""
    tables_only: bool = False
    """All of its references are in a table."""


@dataclass(frozen=True)
class GithubCorpus:
    """What `write_github_corpus` wrote."""

    directory: Path
    pages: tuple[CorpusPage, ...]
    """Every page, the index (`INDEX`) first."""
    links: tuple[tuple[str, str], ...]
    """Every relative link between pages: (page name, target as written)."""
    absolute_refs: int
    """How many references are written with the laptop path."""

    def page(self, name: str) -> CorpusPage:
        return next(page for page in self.pages if page.name == name)


_DATE_STYLES = (
    "Date: {iso}",
    "日期：{iso}",
    "*Written {iso}*",
    "> 创建于 {year}年{month}月{day}日",
    "_{slashed}_",
)
_HEADINGS = {
    "en": ("1. Overview", "2. Architecture", "3. Data flow", "4. Risks and edge cases"),
    "zh": ("1. 概览", "2. 架构", "3. 数据流", "4. 风险与边界"),
}
"""A source analysis's sections: three of them are also a PR deep dive's, so a page that
mentions a pull request in passing is a trap for a kind detector that reads the whole page."""


def upstream_functions(clone: Path, commit: str) -> list[Function]:
    """Every function and method of the Python files at ``commit`` of the git ``clone``."""
    listing = _git(clone, "ls-tree", "-r", "--name-only", commit).splitlines()
    found = []
    for path in sorted(p for p in listing if p.endswith(".py") and "/" in p):
        tree = ast.parse(_git(clone, "show", f"{commit}:{path}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.end_lineno is not None:
                found.append(Function(path, node.name, node.lineno, node.end_lineno))
    return sorted(found, key=lambda f: (f.path, f.start))


def write_github_corpus(
    directory: Path,
    clone: Path,
    commit: str,
    *,
    pages: int = 16,
    pr: int = 2,
    repository_url: str = "https://github.com/example-org/minitrain",
    local_root: str = LOCAL_ROOT,
) -> GithubCorpus:
    """Write ``pages`` analyses (the index included, at least 6) of the upstream cloned at
    ``clone``, citing its functions at ``commit``, into ``directory``; ``pr`` is the pull
    request one page is about and others mention, on ``repository_url``."""
    if pages < 6:
        raise ValueError("a corpus has at least 6 pages: the index and one page of each trait")
    functions = [f for f in upstream_functions(clone, commit) if f.end > f.start]
    if len(functions) < 3:
        raise ValueError(f"{clone} has too few functions at {commit} to cite")
    directory.mkdir(parents=True, exist_ok=True)
    topics = _topics(functions, pages - 1, pr)
    links: list[tuple[str, str]] = []
    absolute = 0
    for index, (page, cited) in enumerate(topics):
        following = topics[(index + 1) % len(topics)][0]
        text, page_links, page_absolute = _topic_text(
            index, page, cited, following, repository_url, local_root
        )
        (directory / page.name).write_text(text, "utf-8")
        links.extend((page.name, target) for target in page_links)
        absolute += page_absolute
    index_page = CorpusPage(INDEX, "minitrain notes", "en", dt.date(2025, 1, 2))
    text, index_links = _index_text(index_page, [page for page, _ in topics])
    (directory / INDEX).write_text(text, "utf-8")
    links.extend((INDEX, target) for target in index_links)
    return GithubCorpus(
        directory, (index_page, *(page for page, _ in topics)), tuple(links), absolute
    )


def _topics(
    functions: list[Function], count: int, pr: int
) -> list[tuple[CorpusPage, list[Function]]]:
    topics = []
    names: set[str] = set()
    for number in range(count):
        cited = [functions[(number * 3 + k) % len(functions)] for k in range(3)]
        main = cited[0]
        module = Path(main.path)
        stem = module.parent.name if module.stem == "__init__" else module.stem
        name = f"{stem}_{main.name.strip('_')}"
        while f"{name}.md" in names:
            name += f"_{number}"
        names.add(f"{name}.md")
        lang = "zh" if number % 2 else "en"
        created = dt.date(2025, 1 + number % 12, 1 + number)
        if number == 2:
            title = f"PR #{pr}: what changed in `{main.name}`"
            page = CorpusPage(f"{name}.md", title, lang, created, pr=pr)
        elif lang == "zh":
            title = f"`{main.name}` 源码分析"
            page = CorpusPage(
                f"{name}.md", title, lang, created, mentions_pr_late=number in (4, 5),
                tables_only=number == 3,
            )  # fmt: skip
        else:
            title = f"How `{main.name}` works ({stem})"
            page = CorpusPage(f"{name}.md", title, lang, created, mentions_pr_late=number % 4 == 2)
        topics.append((page, cited))
    return topics


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, each space a dash."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _date_line(page: CorpusPage, style: int) -> str:
    day = page.created
    return _DATE_STYLES[style % len(_DATE_STYLES)].format(
        iso=day.isoformat(),
        year=day.year,
        month=day.month,
        day=day.day,
        slashed=day.strftime("%Y/%m/%d"),
    )


_DEEP_DIVE = (
    (2, "1. TL;DR", "first"),
    (2, "2. Big Picture", None),
    (
        3,
        "2.1 Before vs After Architecture",
        "flowchart LR\n    before[one step] --> after[clipped step]",
    ),
    (3, "2.2 Change Scope Summary", "table"),
    (2, "3. Design Rationale", None),
    (3, "3.1 Problem Background", None),
    (3, "3.2 Solution Approach", None),
    (3, "3.3 Key Design Points", None),
    (2, "4. Execution Path Deep Dive", None),
    (3, "4.1 Entry Point", "flow"),
    (3, "4.2 Call Chain Visualization", "sequenceDiagram\n    Trainer->>Actor: train_step()"),
    (3, "4.3 Data Flow", "flowchart TD\n    grads --> clip --> step"),
    (3, "4.4 Core Code Walkthrough", None),
    (2, "5. Module Relationships", "classDiagram\n    Actor <|-- FSDPActor"),
    (2, "6. Risks & Edge Cases", "risks"),
    (2, "7. Quick Reference", None),
    (3, "7.1 File Change Summary", None),
    (3, "7.2 Key Functions Index", None),
    (3, "7.3 Related Code Pointers", None),
)
"""A PR deep dive as the seed prompt outlines it (an LLM-drafted one has every section)."""

_SLOTS = ("first", "table", "flow", "risks")


def _outline(page: CorpusPage) -> tuple[tuple[int, str, str | None], ...]:
    """The page's sections: (level, heading, what goes there: a slot or a Mermaid diagram)."""
    if page.pr is not None:
        return _DEEP_DIVE
    return tuple(
        (2, heading, slot) for heading, slot in zip(_HEADINGS[page.lang], _SLOTS, strict=True)
    )


def _heading_of(page: CorpusPage, slot: str) -> str:
    return next(heading for _level, heading, what in _outline(page) if what == slot)


def _topic_text(
    number: int,
    page: CorpusPage,
    cited: list[Function],
    following: CorpusPage,
    repository_url: str,
    root: str,
) -> tuple[str, list[str], int]:
    main, second, third = cited
    zh = page.lang == "zh"
    links = [
        f"{INDEX}#learning-path",
        f"{following.name}#{_anchor(_heading_of(following, 'table'))}",
        f"#{_anchor(_heading_of(page, 'risks'))}",
    ]
    lines = [f"# {page.title}", "", _date_line(page, number), ""]
    if page.pr is not None:
        lines += [f"Pull request: {repository_url}/pull/{page.pr}", ""]
    if zh:
        lines += ["本文按调用顺序阅读以下函数：", f"- `{main.name}`", f"- `{second.name}`", ""]
    else:
        lines += ["This page reads, in call order:", f"- `{main.name}`", f"- `{second.name}`", ""]
    absolute = 0
    for level, heading, what in _outline(page):
        lines += [f"{'#' * level} {heading}", ""]
        if what == "first" and page.tables_only:
            lines += ["这一页只用表格引用代码。" if zh else "This page cites code in tables only."]
        elif what == "first" and zh:
            lines += [f"`{main.name}()` 实现（{root}/{main.path}:{main.start}-{main.end}）。"]
            absolute += 1
        elif what == "first":
            lines += [f"`{main.name}()` is at `{root}/{main.path}:{main.start}-{main.end}`."]
            absolute += 1
        elif what == "table":
            lines += [
                "| 文件 | 行 | 函数 |" if zh else "| File | Lines | Function |",
                "|------|----|------|",
                f"| `{root}/{second.path}` | {second.start}-{second.end} | `{second.name}` |",
                f"| {third.path} | {third.start}-{third.end} | `{third.name}` |",
            ]
            absolute += 1
        elif what == "flow" and page.tables_only:
            lines += ["数据从上表的函数流向调用方。[^1]"]
        elif what == "flow" and zh:
            lines += [f"调用方在 {root}/{third.path}（第 {third.start}-{third.end} 行）。[^1]"]
            absolute += 1
        elif what == "flow":
            lines += [
                f"The caller is in `{root}/{third.path}` (lines {third.start}-{third.end}).[^1]"
            ]
            absolute += 1
        elif what == "risks":
            lines += [
                f"Back to the [reading list]({links[0]}); next: [{following.title}]({links[1]}); "
                f"or [this section]({links[2]})."
            ]
        elif what is not None:
            lines += ["```mermaid", what, "```"]
        else:
            lines += ["见上文。" if zh else "As above."]
        lines += [""]
    if page.mentions_pr_late:
        lines += [
            f"PR #2 touched this code once ({repository_url}/pull/2); this page reads it as it is.",
            "",
        ]
    lines += ["[^1]: 作者笔记本上的测量。" if zh else "[^1]: Measured on the author's laptop.", ""]
    return "\n".join(lines), links, absolute


def _index_text(index: CorpusPage, pages: list[CorpusPage]) -> tuple[str, list[str]]:
    links = []
    lines = [f"# {index.title}", "", f"Date: {index.created.isoformat()}", "", "Every page:"]
    for page in pages:
        links.append(page.name)
        lines.append(f"- [{page.title}]({page.name})")
    lines += ["", "## Learning path", "", "Read in this order:"]
    for number, page in enumerate(pages, 1):
        target = f"{page.name}#{_anchor(_heading_of(page, 'first'))}"
        links.append(target)
        lines.append(f"{number}. [{page.title}]({target})")
    return "\n".join([*lines, ""]), links


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, check=True
    ).stdout

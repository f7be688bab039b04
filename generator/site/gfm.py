"""Block structure as GitHub reads it (``markdown_extensions: [generator.site.gfm]``).

Python-Markdown needs a blank line before a list, and nests a list item only four spaces in;
GitHub (CommonMark) starts a list right after a paragraph line and nests an item under the one
whose text it is indented to (two spaces under ``- ``, three under ``1. ``). Pages written for
GitHub therefore render as run-on text with literal ``- `` and flattened lists. This
preprocessor rewrites only the layout of such pages before Python-Markdown reads them: it puts
a blank line between a paragraph and a list (or a table) that follows it, re-indents list items
and their content (fenced code included) to Python-Markdown's four spaces a level, and marks a
``<details>`` block ``markdown="1"`` so that ``md_in_html`` renders the Markdown inside it as
GitHub does. The text itself, code included, is never changed; a page already written for
Python-Markdown (four-space nesting, blank lines around lists) comes out the same.

Why not an extension from PyPI: ``mdx_breakless_lists`` does not nest two-space lists,
``mdx_truly_sane_lists`` does not split a paragraph from its list, and ``mdx_better_lists``
(``split_paragraph_lists``) no longer nests four-space lists, which GitHub also accepts, and
splits a list at every blank line.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

_ITEM = re.compile(
    r"^(?P<indent> *)(?P<marker>[-*+]|(?P<number>\d{1,9})\.)(?P<space> +|$)(?P<rest>.*)$"
)
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?: *\1){2,} *$")
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?: |$)")
_QUOTE = re.compile(r"^ {0,3}>[ ]?")
_HTML = re.compile(r"^ {0,3}<")
_TABLE_DELIMITER = re.compile(r"^ {0,3}\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$")
_DETAILS = re.compile(r"^(?P<open> {0,3}<details\b)(?P<attributes>[^>]*)>", re.IGNORECASE)
_MARKDOWN_ATTRIBUTE = re.compile(r"\smarkdown\s*=", re.IGNORECASE)
# Raw HTML whose content is kept as written (CommonMark's HTML blocks of kind 1 and 2).
_VERBATIM_HTML = re.compile(r"^ {0,3}<(?P<tag>pre|script|style|textarea)(?:\s|>|$)", re.IGNORECASE)
_COMMENT_OPEN = "<!--"

# After normalize_whitespace (30), which expands tabs; before the fenced code (25) and HTML
# block (20) preprocessors, which must see the re-indented fences and the marked details.
PRIORITY = 28


@dataclass
class _Fence:
    char: str
    length: int
    source_indent: int
    """Spaces of the source that belong to the list item holding the fence."""
    output_indent: int


class GitHubBlocksPreprocessor(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return list(
            _rewritten(self.md.tab_length, _renders_markdown_in_html(self.md), tuple(lines))
        )


_REMEMBERED_PAGES = 4096


@functools.lru_cache(maxsize=_REMEMBERED_PAGES)
def _rewritten(tab_length: int, markdown_in_html: bool, lines: tuple[str, ...]) -> tuple[str, ...]:
    """The page's lines laid out as Python-Markdown needs them. ``mkdocs serve`` renders every
    page again after an edit of one: the others are rewritten as they were, without a pass."""
    return tuple(_Layout(tab_length, markdown_in_html).rewrite(list(lines)))


class _Layout:
    """One pass over a page's lines, with the open list items as a stack of content columns."""

    def __init__(self, tab_length: int, markdown_in_html: bool) -> None:
        self.tab = tab_length
        self.markdown_in_html = markdown_in_html
        self.items: list[int] = []
        """Source column where the text of each open list item starts, outermost first."""
        self.previous = "blank"
        """What the last line was: blank, text (a paragraph line) or other."""
        self.quote_previous = "blank"
        self.loose_block = False
        """Whether the item's content since its last blank line is indented text, code or a
        fence: Python-Markdown reads an item that follows it without a blank line into it."""
        self.out: list[str] = []

    def rewrite(self, lines: list[str]) -> list[str]:
        fence: _Fence | None = None
        verbatim_end: str | None = None
        for index, line in enumerate(lines):
            if fence is not None:
                self.out.append(_reindent(line, fence.source_indent, fence.output_indent))
                if _closes(line, fence):
                    fence = None
                    self.previous = "other"
                continue
            if verbatim_end is not None:
                self.out.append(line)
                if verbatim_end in line.lower():
                    verbatim_end = None
                continue
            if not line.strip():
                self.out.append(line)
                self.previous = self.quote_previous = "blank"
                continue
            if self._indented_code(line):
                continue
            opened = _FENCE.match(line)
            if opened:
                fence = self._open_fence(line, opened)
                continue
            verbatim = _VERBATIM_HTML.match(line)
            if verbatim and not self.items:
                end = f"</{verbatim.group('tag').lower()}>"
                if end not in line.lower()[verbatim.end() :]:
                    verbatim_end = end
                self.out.append(line)
                self.previous = "other"
                continue
            if line.lstrip().startswith(_COMMENT_OPEN) and not self.items:
                if "-->" not in line:
                    verbatim_end = "-->"
                self.out.append(line)
                self.previous = "other"
                continue
            following = lines[index + 1] if index + 1 < len(lines) else ""
            self._line(line, following)
        return self.out

    def _indented_code(self, line: str) -> bool:
        """An indented code block's line (four spaces past the text of the item it is in, not
        continuing a paragraph): kept as code, moved with its item."""
        if self.previous == "text":
            return False
        indent = len(line) - len(line.lstrip(" "))
        base = self.items[-1] if self.items else 0
        if indent < base + 4:
            return False
        if self.items:
            line = " " * (self.tab * (len(self.items) + 1) + indent - base - 4) + line.lstrip(" ")
            self.loose_block = True
        self.out.append(line)
        self.previous = "code"
        return True

    def _line(self, line: str, following: str) -> None:
        quote = _QUOTE.match(line)
        if quote and not self.items:
            self._quoted(line, quote.end())
            return
        self.quote_previous = "blank"
        item = _ITEM.match(line)
        if item and not _THEMATIC_BREAK.match(line) and self._starts_item(item):
            self._item(item)
            return
        indent = len(line) - len(line.lstrip(" "))
        block = self._is_block_start(line, following)
        if self.items and self.previous == "text" and not block:
            # The paragraph of the innermost item goes on, however the line is indented (and
            # Python-Markdown reads it so as written).
            self.out.append(line)
            return
        while self.items and indent < self.items[-1]:
            self.items.pop()
        if self.items:
            # Spaces past the item's text column mean nothing here (code was taken above).
            line = " " * (self.tab * len(self.items)) + line.lstrip(" ")
            self.loose_block = self.loose_block or self.previous == "blank"
        elif self.previous == "text" and block and not _TABLE_DELIMITER.match(line):
            self.out.append("")  # GitHub ends the paragraph here; Python-Markdown needs a blank
        if self.markdown_in_html and not self.items:
            line = _mark_details(line)
        self.out.append(line)
        self.previous = "other" if block or _HTML.match(line) else "text"

    def _starts_item(self, item: re.Match[str]) -> bool:
        """Whether a line that looks like a list item is one (CommonMark: a list may interrupt a
        paragraph only with a bullet or ``1.``, and not with an empty item)."""
        interrupts = not self.items and self.previous == "text"
        if not interrupts:
            return True
        number = item.group("number")
        return bool(item.group("rest").strip()) and (number is None or int(number) == 1)

    def _item(self, item: re.Match[str]) -> None:
        indent = len(item.group("indent"))
        opening = not self.items
        while self.items and indent < self.items[-1]:
            self.items.pop()
        if (opening and self.previous == "text") or (self.loose_block and self.out[-1]):
            self.out.append("")
        self.loose_block = False
        marker, space, rest = item.group("marker"), item.group("space"), item.group("rest")
        width = len(space) if rest and len(space) <= 4 else 1
        self.out.append(" " * (self.tab * len(self.items)) + f"{marker} {rest}".rstrip(" "))
        self.items.append(indent + len(marker) + width)
        self.previous = "text" if rest.strip() else "other"

    def _open_fence(self, line: str, opened: re.Match[str]) -> _Fence:
        indent = len(opened.group("indent"))
        while self.items and indent < self.items[-1]:
            self.items.pop()
        if self.items:
            self.loose_block = self.loose_block or self.previous == "blank"
            fence = _Fence(
                opened.group("fence")[0],
                len(opened.group("fence")),
                self.items[-1],
                self.tab * len(self.items),
            )
        else:
            fence = _Fence(opened.group("fence")[0], len(opened.group("fence")), 0, 0)
            if self.previous == "text":
                self.out.append("")
        self.out.append(_reindent(line, fence.source_indent, fence.output_indent))
        self.previous = "other"
        return fence

    def _quoted(self, line: str, content_start: int) -> None:
        """A block quote line: a list or table right after a quoted paragraph line gets its
        blank quoted line (nesting inside quotes is left as written)."""
        content = line[content_start:]
        item = _ITEM.match(content)
        starts_list = (
            item is not None and not _THEMATIC_BREAK.match(content) and bool(item.group("rest"))
        )
        if starts_list and self.quote_previous == "text":
            self.out.append(line[:content_start].rstrip())
        self.out.append(line)
        if not content.strip():
            self.quote_previous = "blank"
        elif starts_list:
            self.quote_previous = "list"
        elif self.quote_previous != "list":
            self.quote_previous = "text"
        self.previous = "other"

    def _is_block_start(self, line: str, following: str) -> bool:
        """Whether the line starts a block that ends a paragraph on GitHub (a heading, a rule,
        a quote, HTML, or a table's header row)."""
        return bool(
            _HEADING.match(line)
            or _THEMATIC_BREAK.match(line)
            or _QUOTE.match(line)
            or _HTML.match(line)
            or ("|" in line and _TABLE_DELIMITER.match(following) and "-" in following)
        )


def _closes(line: str, fence: _Fence) -> bool:
    stripped = line.strip()
    return len(stripped) >= fence.length and stripped == fence.char * len(stripped)


def _reindent(line: str, source_indent: int, output_indent: int) -> str:
    if not source_indent and not output_indent:
        return line
    spaces = len(line) - len(line.lstrip(" "))
    return " " * output_indent + line[min(spaces, source_indent) :]


def _mark_details(line: str) -> str:
    details = _DETAILS.match(line)
    if details is None or _MARKDOWN_ATTRIBUTE.search(details.group("attributes")):
        return line
    return (
        f'{details.group("open")}{details.group("attributes")} markdown="1">{line[details.end() :]}'
    )


def _renders_markdown_in_html(md: Markdown) -> bool:
    """Whether ``md_in_html`` is loaded (without it, ``markdown="1"`` would stay in the page)."""
    try:
        from markdown.extensions.md_in_html import HtmlBlockPreprocessor
    except ImportError:  # pragma: no cover - part of Python-Markdown
        return False
    return "html_block" in md.preprocessors and isinstance(
        md.preprocessors["html_block"], HtmlBlockPreprocessor
    )


class GitHubBlocksExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(GitHubBlocksPreprocessor(md), "github_blocks", PRIORITY)


def makeExtension(**kwargs: Any) -> GitHubBlocksExtension:
    return GitHubBlocksExtension(**kwargs)

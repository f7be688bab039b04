"""The block structure of a Markdown page that the extractors need, found in one pass.

Only what matters for finding references, links and headings is recognised: the frontmatter,
fenced code blocks (with their info string) and inline code spans. Every position is an offset
into the decoded page text (BOM removed), convertible to a 1-based line and character column.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

_NEWLINE = re.compile(r"\n")
# A fence line: optional indentation and blockquote markers, then ``` or ~~~ (3 or more).
_FENCE_LINE = re.compile(
    r"^[ \t]*(?:>[ \t]?)*(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$", re.MULTILINE
)
_CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`)(?P<code>[^\n]+?)(?<!`)(?P=ticks)(?!`)")


@functools.lru_cache(maxsize=256)
def _language(info: str) -> str:
    word = info.strip().split(maxsplit=1)
    return word[0].strip("{}.").lower() if word else ""


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block. ``start``/``end`` cover the fence lines themselves."""

    start: int
    end: int
    info: str

    @property
    def language(self) -> str:
        return _language(self.info)


class CodeSpan(NamedTuple):
    """An inline code span (a tuple: pages have thousands and they are built in bulk)."""

    start: int
    """Offset of the opening backtick."""
    end: int
    """Offset just past the closing backtick."""
    code: str


@dataclass
class MarkdownLayout:
    """Offsets of lines, fenced blocks and code spans in a page's text."""

    text: str
    body_start: int = 0
    line_starts: list[int] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)
    _fence_starts: list[int] = field(default_factory=list)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset; the column counts characters."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def line_bounds(self, offset: int) -> tuple[int, int]:
        """Start and end offsets (end excludes the newline) of the line holding ``offset``."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        start = self.line_starts[index]
        if index + 1 < len(self.line_starts):
            end = self.line_starts[index + 1] - 1
        else:
            end = len(self.text)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return start, end

    def fence_at(self, offset: int) -> Fence | None:
        index = bisect.bisect_right(self._fence_starts, offset) - 1
        if index >= 0 and offset < self.fences[index].end:
            return self.fences[index]
        return None

    @cached_property
    def without_code_blocks(self) -> str:
        """The text with frontmatter and fenced blocks blanked; newlines and offsets are kept."""
        pieces = [_blank(self.text[: self.body_start])]
        cursor = self.body_start
        for fence in self.fences:
            pieces.append(self.text[cursor : fence.start])
            pieces.append(_blank(self.text[fence.start : fence.end]))
            cursor = fence.end
        pieces.append(self.text[cursor:])
        return "".join(pieces)

    @cached_property
    def code_spans(self) -> list[CodeSpan]:
        text = self.without_code_blocks
        if "`" not in text:
            return []
        return [
            CodeSpan(match.start(), match.end(), match.group("code"))
            for match in _CODE_SPAN.finditer(text)
        ]

    @cached_property
    def _code_span_starts(self) -> list[int]:
        return [span.start for span in self.code_spans]

    def code_span_at(self, offset: int) -> CodeSpan | None:
        index = bisect.bisect_right(self._code_span_starts, offset) - 1
        if index >= 0 and offset < self.code_spans[index].end:
            return self.code_spans[index]
        return None

    def code_spans_around(
        self, start: int, end: int, line_start: int, line_end: int
    ) -> tuple[CodeSpan | None, CodeSpan | None]:
        """Nearest code spans on the line: ending before ``start``, starting after ``end``."""
        spans = self.code_spans
        index = bisect.bisect_left(self._code_span_starts, start)
        previous = spans[index - 1] if index > 0 else None
        if previous is not None and (previous.end > start or previous.start < line_start):
            previous = None
        following_index = bisect.bisect_left(self._code_span_starts, end)
        following = spans[following_index] if following_index < len(spans) else None
        if following is not None and following.end > line_end + 1:
            following = None
        return previous, following

    @cached_property
    def prose(self) -> str:
        """The text with frontmatter, fenced blocks and inline code blanked: where links live."""
        text = self.without_code_blocks
        pieces = []
        cursor = 0
        for span in self.code_spans:
            pieces.append(text[cursor : span.start])
            pieces.append(" " * (span.end - span.start))
            cursor = span.end
        pieces.append(text[cursor:])
        return "".join(pieces)


_NOT_LINE_BREAK = re.compile(r"[^\r\n]+")


def _blank(segment: str) -> str:
    """Replace every character but line breaks with a space, keeping offsets."""
    return _NOT_LINE_BREAK.sub(lambda match: " " * len(match.group()), segment)


def scan(text: str, body_start: int = 0) -> MarkdownLayout:
    """Find lines and fenced code blocks in ``text``; ``body_start`` skips the frontmatter."""
    line_starts = [0]
    line_starts.extend(match.end() for match in _NEWLINE.finditer(text))
    fences: list[Fence] = []
    open_fence: tuple[int, str, str] | None = None
    for match in _FENCE_LINE.finditer(text, body_start):
        marker = match.group("fence")
        info = match.group("info")
        if open_fence is None:
            if marker[0] == "`" and "`" in info:
                continue  # CommonMark: a backtick fence's info string has no backticks
            open_fence = (match.start(), marker, info)
            continue
        start, open_marker, open_info = open_fence
        if marker[0] == open_marker[0] and len(marker) >= len(open_marker) and not info.strip():
            end = match.end()
            if end < len(text) and text[end] == "\n":
                end += 1
            fences.append(Fence(start, end, open_info))
            open_fence = None
    if open_fence is not None:  # an unclosed fence runs to the end of the document
        fences.append(Fence(open_fence[0], len(text), open_fence[2]))
    return MarkdownLayout(
        text=text,
        body_start=body_start,
        line_starts=line_starts,
        fences=fences,
        _fence_starts=[fence.start for fence in fences],
    )

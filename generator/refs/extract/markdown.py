"""The block structure of a Markdown page that the extractors need, found in one pass.

Only what matters for finding references, links and headings is recognised: the frontmatter,
fenced code blocks (with their info string) and inline code spans. Every position is an offset
into the decoded page text (BOM removed), convertible to a 1-based line and character column.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, chain
from typing import Any, NamedTuple

from generator.patterns import lazy_pattern

# A fence line: optional indentation and blockquote markers, then ``` or ~~~ (3 or more).
_FENCE_LINE = lazy_pattern(
    r"^[ \t]*(?:>[ \t]?)*(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$", re.MULTILINE
)
# Led by a backtick, which the regex engine finds with a string search (four times as fast as a
# leading lookahead, which it tries at every character); the look-behind comes after it.
_CODE_SPAN = lazy_pattern(r"(?P<ticks>`(?<!``)`*)(?!`)(?P<code>[^\n]+?)(?<!`)(?P=ticks)(?!`)")
# Functions over many items at C speed, for map(): no Python-level call per item.
_MATCH_START = re.Match.start
_MATCH_END = re.Match.end
_SPACES = " ".__mul__
_ONE_MORE = (1).__add__


@functools.lru_cache(maxsize=256)
def _language(info: str) -> str:
    word = info.strip().split(maxsplit=1)
    return word[0].strip("{}.").lower() if word else ""


class Fence(NamedTuple):
    """A fenced code block. ``start``/``end`` cover the fence lines themselves (a tuple, cheap
    to build: pages have many)."""

    start: int
    end: int
    info: str
    body_start: int = 0
    """Where the content starts (after the opening fence line)."""
    body_end: int = 0
    """Where the content ends (before the newline of the closing fence line, or at ``end``)."""
    closed: bool = True
    """False for a fence never closed: it runs to the end of the page."""

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
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """What readers of the layout computed once per line or fence (see `refs.extract.refs`),
    so that a thousand references on one line do not each search it again."""

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
    def code_span_matches(self) -> list[re.Match[str]]:
        """The matches `code_spans` are made of (group 2 is the code): callers that look at a
        few fields of many spans read them here, without a tuple built per span."""
        text = self.text
        if "`" not in text:
            return []
        # Code spans never cross a line, and the frontmatter and fenced blocks are whole lines:
        # searching the text between them finds what searching `without_code_blocks` would.
        matches: list[re.Match[str]] = []
        for start, end in self._prose_regions():
            if text.find("`", start, end) != -1:
                matches.extend(_CODE_SPAN.finditer(text, start, end))
        return matches

    @cached_property
    def code_spans(self) -> list[CodeSpan]:
        new = CodeSpan._make  # tuple.__new__: no Python-level constructor per span
        return [new((match.start(), match.end(), match[2])) for match in self.code_span_matches]

    def _prose_regions(self) -> list[tuple[int, int]]:
        """The (start, end) offsets of the text between the frontmatter and fenced blocks."""
        regions = []
        cursor = self.body_start
        for fence in self.fences:
            regions.append((cursor, fence.start))
            cursor = fence.end
        regions.append((cursor, len(self.text)))
        return regions

    @cached_property
    def code_span_starts(self) -> list[int]:
        """Where each of `code_spans` starts, for bisecting."""
        return list(map(_MATCH_START, self.code_span_matches))

    def code_span_at(self, offset: int) -> CodeSpan | None:
        index = bisect.bisect_right(self.code_span_starts, offset) - 1
        if index >= 0 and offset < self.code_spans[index].end:
            return self.code_spans[index]
        return None

    @cached_property
    def prose(self) -> str:
        """The text with frontmatter, fenced blocks and inline code blanked: where links live."""
        text = self.without_code_blocks
        starts = self.code_span_starts
        if not starts:
            return text
        ends = list(map(_MATCH_END, self.code_span_matches))
        # Text before each span, then the span as spaces, all assembled in C.
        kept = map(text.__getitem__, map(slice, [0, *ends[:-1]], starts))
        blanked = map(_SPACES, map(operator.sub, ends, starts))
        return "".join(chain.from_iterable(zip(kept, blanked, strict=True))) + text[ends[-1] :]


_NOT_LINE_BREAK = lazy_pattern(r"[^\r\n]+")


def _blank(segment: str) -> str:
    """Replace every character but line breaks with a space, keeping offsets."""
    if "\r" in segment:
        return _NOT_LINE_BREAK.sub(lambda match: " " * len(match.group()), segment)
    return "\n".join(map(_SPACES, map(len, segment.split("\n"))))


def scan(text: str, body_start: int = 0) -> MarkdownLayout:
    """Find lines and fenced code blocks in ``text``; ``body_start`` skips the frontmatter."""
    # Each line starts one past the end of the previous one: summed lengths, all in C.
    line_starts = list(accumulate(map(_ONE_MORE, map(len, text.split("\n")[:-1])), initial=0))
    fences: list[Fence] = []
    open_fence: tuple[int, str, str, int] | None = None
    length = len(text)
    for match in _fence_lines(text, body_start):
        marker = match.group("fence")
        info = match.group("info")
        if open_fence is None:
            if marker[0] == "`" and "`" in info:
                continue  # CommonMark: a backtick fence's info string has no backticks
            content = match.end() + 1 if match.end() < length else length
            open_fence = (match.start(), marker, info, content)
            continue
        start, open_marker, open_info, content = open_fence
        if marker[0] == open_marker[0] and len(marker) >= len(open_marker) and not info.strip():
            end = match.end()
            if end < length and text[end] == "\n":
                end += 1
            body_end = max(content, match.start() - 1)
            fences.append(Fence(start, end, open_info, content, body_end, True))
            open_fence = None
    if open_fence is not None:  # an unclosed fence runs to the end of the document
        start, _, open_info, content = open_fence
        body_end = length - 1 if text.endswith("\n") and length > content else length
        fences.append(Fence(start, length, open_info, content, max(content, body_end), False))
    return MarkdownLayout(
        text=text,
        body_start=body_start,
        line_starts=line_starts,
        fences=fences,
        _fence_starts=[fence.start for fence in fences],
    )


def _fence_lines(text: str, body_start: int) -> list[re.Match[str]]:
    """The fence lines from ``body_start`` on, in order.

    Only lines holding ``` or ~~~ can be fence lines, and pages have few of them, so those lines
    are found with plain string searches and the pattern is tried at their starts only.
    """
    line_starts: set[int] = set()
    for marker in ("```", "~~~"):
        found = text.find(marker, body_start)
        while found != -1:
            line_start = text.rfind("\n", 0, found) + 1
            line_starts.add(line_start)
            newline = text.find("\n", found)
            if newline == -1:
                break
            found = text.find(marker, newline)
    matches = []
    for line_start in sorted(line_starts):
        match = _FENCE_LINE.match(text, line_start)
        if match is not None:
            matches.append(match)
    return matches

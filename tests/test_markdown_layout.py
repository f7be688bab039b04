"""The page layout the extractors share, against its plain definitions, on arbitrary text.

The layout finds lines, fenced blocks and code spans with shortcuts (string searches, searching
only between fenced blocks); each property here states what the shortcut must equal.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.kb.pages import parse_page
from generator.refs.extract.markdown import _CODE_SPAN, _FENCE_LINE, CodeSpan, scan
from generator.refs.resolve import definitions

_PIECES = st.sampled_from(
    [
        *"ab `\n\r\t>|[]()~:#",
        "```",
        "````",
        "~~~",
        "```py",
        "```mermaid",
        "> ```",
        "  ~~~~ x",
        "``a`b``",
        "`x`",
        "---\n",
        "title: t\n",
        "[a](b.md)",
        "\r\n",
        "实现",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=60).map("".join)


def _layout(text: str):
    page = parse_page(text.encode("utf-8"), None, "p.md", "p.md")  # type: ignore[arg-type]
    assert page.text is not None
    return scan(page.text, page.body_start)


def _fences_by_definition(text: str, body_start: int) -> list[tuple[int, int, str]]:
    """Fenced blocks found by trying the fence pattern at every line, as CommonMark reads them."""
    fences = []
    opened: tuple[int, str, str] | None = None
    for match in _FENCE_LINE.finditer(text, body_start):
        marker, info = match.group("fence"), match.group("info")
        if opened is None:
            if not (marker[0] == "`" and "`" in info):
                opened = (match.start(), marker, info)
        elif marker[0] == opened[1][0] and len(marker) >= len(opened[1]) and not info.strip():
            end = match.end() + (1 if text[match.end() : match.end() + 1] == "\n" else 0)
            fences.append((opened[0], end, opened[2]))
            opened = None
    if opened is not None:
        fences.append((opened[0], len(text), opened[2]))
    return fences


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_TEXTS)
def test_lines_and_fences_match_their_definitions(text):
    layout = _layout(text)
    assert layout.line_starts == [0] + [m.end() for m in re.finditer("\n", layout.text)]
    assert [(f.start, f.end, f.info) for f in layout.fences] == _fences_by_definition(
        layout.text, layout.body_start
    )


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_TEXTS)
def test_code_spans_and_prose_match_their_definitions(text):
    layout = _layout(text)
    blanked = layout.without_code_blocks
    spans = [CodeSpan(m.start(), m.end(), m.group("code")) for m in _CODE_SPAN.finditer(blanked)]
    assert layout.code_spans == spans
    assert layout.code_span_starts == [span.start for span in spans]
    prose = list(blanked)
    for span in spans:
        prose[span.start : span.end] = " " * (span.end - span.start)
    assert layout.prose == "".join(prose)
    for offset in range(len(layout.text) + 1):
        inside = [s for s in spans if s.start <= offset < s.end]
        assert layout.code_span_at(offset) == (inside[0] if inside else None)


_SOURCE = st.lists(
    st.sampled_from(
        [
            *("def ", "class ", "async ", "async\tdef ", " ", "\t", "    ", "@dec", "\n", ":"),
            *("foo", "fooé", "foo\u0301", "٣", "_", "(", ")", "x", "pass", "Beta", "gamma", "."),
        ]
    ),
    max_size=80,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_SOURCE, st.sampled_from(["foo", "fooé", "foo\u0301", "Beta", "gamma", "x٣", "_", "a.b"]))
def test_definitions_match_the_header_pattern(source, name):
    lines = tuple(source.split("\n"))
    header = re.compile(rf"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+{re.escape(name)}\b")
    starts = [number for number, line in enumerate(lines, 1) if header.match(line)]
    found = definitions(lines, name)
    assert [start for start, _ in found] == [
        next(n for n in range(s, 0, -1) if n == 1 or not lines[n - 2].strip().startswith("@"))
        for s in starts
    ]
    assert all(start <= end for start, end in found)

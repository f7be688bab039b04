"""Code references become links to the upstream's web page at the pinned commit and lines.

The rewrite happens on the Markdown MkDocs is about to render, never on the sources. Positions
come from the extractor (`generator.refs.extract.extract_refs`, through the verifier's report),
so the site links exactly what the verifier checked. What is linked and what is not:

- a reference in prose becomes ``<a href="url" title="upstream@shortsha">text</a>``;
- a code span that holds one reference (`` `minitrain/x.py:10-20` ``) is wrapped whole, so it
  keeps its code style: ``<a href="url" title="…">`minitrain/x.py:10-20`</a>``;

- references already inside a link (``[…](…)``, ``[…][…]``, ``<…>``, an HTML tag), on a heading
  line (a link there would change nothing in the anchor but clutters the table of contents), in
  a link reference definition (``[label]: url``; a footnote's note, ``[^1]: …``, is text and is
  linked), or inside a fenced code block stay as they are: a link inside
  highlighted code would break the highlighting, so code blocks are left untouched;
- a reference with an error finding, an unknown upstream or no web URL is not linked.

The site build does not even hand Markdown the tags: `mark_links` puts private-use markers
around each span, Markdown renders the page as if there were no links, and `unmark_links` turns
the markers into the same ``<a>`` tags in the HTML. On pages with hundreds of references,
parsing ``[text](url "title")`` (or inline HTML) was most of what the links cost the build
(``make bench-site``). The site does it in two steps, `strip_marks` then `wrap_links`, with the
search plugin's indexing in between: the index keeps the same text, and its HTML parser never
sees the tags.
"""

from __future__ import annotations

import bisect
import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import NamedTuple, Protocol, TypeVar
from urllib.parse import quote

from generator.model import CodeRef, ResolvedRef, Upstream
from generator.refs.extract.markdown import MarkdownLayout

GITHUB_PATTERN = "{web_url}/{kind}/{commit}/{path}#L{start}-L{end}"
"""How GitHub (and GitHub Enterprise, Gitea, Forgejo) address lines of a file at a commit."""

_EXISTING_LINKS = re.compile(
    r"""
      !?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\([^)\n]*(?:\([^)\n]*\)[^)\n]*)*\)   # [text](target)
    | !?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\[[^\]\n]*\]                        # [text][label]
    | ^[ ]{0,3}\[(?!\^)[^\]\n]+\]:[^\n]*                                      # [label]: url
    | <a\b[^>]*>.*?</a>                                                      # <a …>…</a>
    | <[^>\n]+>                                                              # <url>, any tag
    """,
    re.VERBOSE | re.MULTILINE | re.DOTALL | re.IGNORECASE,
)
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)
_NOT_BRACKET = re.compile(r"[^\[\]\n]")


@dataclass(frozen=True)
class CodeLink:
    """Wrap ``text[start:end]`` in ``<a href="url" title="title">…</a>``; for an upstream
    with no web address (``url`` None: a clone on a local path, an internal server), in a
    button that shows its code card, or a span that only says where it was verified."""

    start: int
    end: int
    url: str | None
    title: str
    card: str | None = None
    """The id of the ``<template>`` holding the code card the link shows (`cards`): the card
    says what the title would, so a link with a card has none (it would pop up over it)."""
    anchor: str | None = None
    """An id for the link, for what points at it (a held reference, from the trust line)."""

    def opening(self) -> str:
        anchor = f' id="{escape(self.anchor)}"' if self.anchor else ""
        shown = (
            f' data-kb-card="{escape(self.card)}"'
            if self.card
            else f' title="{escape(self.title)}"'
        )
        if self.url is not None:
            return f'<a href="{escape(self.url)}"{anchor}{shown}>'
        if self.card:
            return f'<button type="button" class="kb-code-ref"{anchor}{shown}>'
        return f'<span class="kb-code-ref"{anchor}{shown}>'

    @property
    def closing(self) -> str:
        if self.url is not None:
            return "</a>"
        return "</button>" if self.card else "</span>"


class Wrapper(Protocol):
    """What goes around ``text[start:end]``: a `CodeLink`, or the serve-time mark of a broken
    reference (`generator.site.live.FindingMark`); both travel through `mark_links`."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def closing(self) -> str: ...

    def opening(self) -> str: ...


W = TypeVar("W", bound=Wrapper)


def code_url(
    upstream: Upstream,
    commit: str,
    path: str,
    start: int | None = None,
    end: int | None = None,
    is_directory: bool = False,
) -> str | None:
    """The web address of ``path`` (and its lines) at ``commit``, or None without a web URL.

    GitHub's form unless the manifest gives the upstream a ``code_url`` pattern with the
    placeholders ``{web_url}``, ``{commit}``, ``{path}``, ``{start}``, ``{end}`` (and ``{kind}``:
    ``blob`` or ``tree``). The fragment (from ``#``) is dropped for a whole file; a single line
    keeps GitHub's ``#L12`` form.
    """
    if not upstream.web_url:
        return None
    pattern = upstream.code_url or GITHUB_PATTERN
    if start is None or is_directory:
        pattern = pattern.split("#", 1)[0]
    elif (end is None or end == start) and pattern == GITHUB_PATTERN:
        pattern = "{web_url}/{kind}/{commit}/{path}#L{start}"
    return pattern.format(
        web_url=upstream.web_url.rstrip("/"),
        kind="tree" if is_directory else "blob",
        commit=commit,
        path=quote(path, safe="/"),
        start=start if start is not None else "",
        end=end if end is not None else start if start is not None else "",
    )


def commit_url(upstream: Upstream, commit: str) -> str | None:
    """The web address of ``commit`` on GitHub's form of the upstream's forge; None without a
    web URL, or with a ``code_url`` pattern of another forge's (whose commit pages it does not
    say)."""
    if not upstream.web_url or upstream.code_url:
        return None
    return f"{upstream.web_url.rstrip('/')}/commit/{quote(commit, safe='')}"


PLACEHOLDERS = frozenset({"web_url", "kind", "commit", "path", "start", "end"})


def pattern_problem(pattern: str) -> str | None:
    """What is wrong with a manifest ``code_url`` pattern, or None."""
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(pattern) if name is not None}
    except ValueError as error:
        return f"not a valid pattern ({error})"
    unknown = sorted(names - PLACEHOLDERS)
    if unknown:
        return f"unknown placeholder(s) {', '.join('{' + n + '}' for n in unknown)}"
    if "path" not in names or "commit" not in names:
        return "the pattern needs {commit} and {path}"
    return None


def plan_links(
    layout: MarkdownLayout,
    resolved_refs: Iterable[ResolvedRef],
    upstreams: dict[str, Upstream],
) -> list[CodeLink]:
    """The links to make in ``layout.text`` (the whole page, as the references were found in
    it) for the page's resolved references."""
    return [link for link, _ in plan_linked_refs(layout, resolved_refs, upstreams)]


def plan_linked_refs(
    layout: MarkdownLayout,
    resolved_refs: Iterable[ResolvedRef],
    upstreams: dict[str, Upstream],
    symbol_lines: Callable[[ResolvedRef], tuple[int, int] | None] | None = None,
) -> list[tuple[CodeLink, ResolvedRef]]:
    """`plan_links`, each link with the reference it links (for what is shown with it). A
    reference naming a symbol and no lines links to the lines ``symbol_lines`` gives for it,
    when given and found."""
    taken = taken_spans(layout)
    candidates: list[tuple[CodeLink, ResolvedRef]] = []
    for resolved in resolved_refs:
        ref = resolved.ref
        if ref.in_code_block or resolved.status == "error":
            continue
        if resolved.upstream is None or resolved.commit is None:
            continue
        upstream = upstreams.get(resolved.upstream)
        path = resolved.path or ref.path
        if upstream is None or not path:
            continue
        placed = ref_span(layout, ref, taken)
        if placed is None:
            continue
        first, last = ref.start, ref.end
        if first is None and ref.symbol and symbol_lines is not None:
            first, last = symbol_lines(resolved) or (None, None)
        start, end = placed
        url = code_url(upstream, resolved.commit, path, first, last, ref.is_directory)
        if url is None and upstream.web_url:
            continue
        title = f"{upstream.name}@{resolved.commit[:7]}"
        candidates.append((CodeLink(start, end, url, title), resolved))
    return _without_shared_spans(candidates)


def ref_span(
    layout: MarkdownLayout, ref: CodeRef, taken: list[tuple[int, int]]
) -> tuple[int, int] | None:
    """Where in ``layout.text`` something may be put around ``ref``: the reference itself, or the
    whole code span holding it; None on a heading line, in a fenced block, inside a link or HTML
    (``taken``, from `taken_spans`) or when the page no longer holds it there."""
    text = layout.text
    if not 1 <= ref.line <= len(layout.line_starts):
        return None
    start = layout.line_starts[ref.line - 1] + ref.column - 1
    end = start + len(ref.text)
    if text[start:end] != ref.text:
        return None  # the page changed between verification and rendering: touch nothing
    line_start, _ = layout.line_bounds(start)
    if _HEADING_LINE.match(text, line_start) or layout.fence_at(start) is not None:
        return None
    span = layout.code_span_at(start)
    if span is not None:
        start, end = span.start, span.end
    if _overlaps(taken, start, end):
        return None
    return start, end


def apply_links(text: str, links: Iterable[CodeLink]) -> str:
    """``text`` with every planned link made (links must not overlap)."""
    pieces: list[str] = []
    cursor = 0
    for link in sorted(links, key=lambda link: link.start):
        pieces.append(text[cursor : link.start])
        pieces.append(f"{link.opening()}{_literal(text[link.start : link.end])}{link.closing}")
        cursor = link.end
    pieces.append(text[cursor:])
    return "".join(pieces)


_EMPHASIS = re.compile(r"[_*]")
_ESCAPED_EMPHASIS = re.compile(r"\\([_*])")


def _literal(written: str) -> str:
    """A reference's text as Markdown shows it verbatim: ``pkg/__init__.py:3`` written in
    prose would lose its underscores to bold (and the link with them); a code span already
    shows what it holds."""
    if written.startswith("`") or not _EMPHASIS.search(written):
        return written
    return _EMPHASIS.sub(r"\\\g<0>", written)


_OPEN, _MID, _CLOSE = "\ue000", "\ue001", "\ue002"
"""Unicode private-use characters: no meaning to Markdown, never in a page's own text."""
_MARKED = re.compile(f"{_OPEN}(\\d+){_MID}((?:[^<{_OPEN}{_CLOSE}]|</?code>)*){_CLOSE}")
_MARKERS = re.compile(f"{_OPEN}\\d+{_MID}|{_CLOSE}")


def mark_links(text: str, links: Iterable[W]) -> tuple[str, list[W]]:
    """``text`` with each planned link's span between markers, and the links by marker number.

    Markdown renders what is between the markers as usual (a code span stays a code span) and
    passes the markers through; `unmark_links` then turns them into ``<a>`` tags in the HTML.
    This is what `apply_links` produces, at almost no cost to the Markdown conversion.
    """
    ordered = sorted(links, key=lambda link: link.start)
    pieces: list[str] = []
    cursor = 0
    for number, link in enumerate(ordered):
        pieces.append(text[cursor : link.start])
        pieces.append(f"{_OPEN}{number}{_MID}{_literal(text[link.start : link.end])}{_CLOSE}")
        cursor = link.end
    pieces.append(text[cursor:])
    return "".join(pieces), ordered


class LinkSpan(NamedTuple):
    """Where a planned link (or mark) goes in a page's HTML: around ``html[start:end]``."""

    start: int
    end: int
    link: Wrapper


def unmark_links(html: str, links: Sequence[Wrapper]) -> str:
    """The rendered page with the markers of `mark_links` made into links.

    A marked span that Markdown rendered into anything but text and ``<code>`` (it would cross
    an element boundary) stays unlinked; stray markers are removed.
    """
    stripped, spans = strip_marks(html, links)
    return wrap_links(stripped, spans)


def strip_marks(html: str, links: Sequence[Wrapper]) -> tuple[str, list[LinkSpan]]:
    """The rendered page without the markers of `mark_links`, and where each link goes in it.

    The site indexes a page for search between the two steps: the index holds the same text
    with or without the ``<a>`` tags, and its HTML parser is spared a tag pair per link.
    """
    if _OPEN not in html and _CLOSE not in html:
        return html, []
    pieces: list[str] = []
    spans: list[LinkSpan] = []
    length = cursor = 0
    for match in _MARKED.finditer(html):
        before = _MARKERS.sub("", html[cursor : match.start()])
        inner = match.group(2)
        if "\\" in inner and not inner.startswith("<code>"):
            # Left by `_literal` where Markdown did not read the text (a raw HTML block).
            inner = _ESCAPED_EMPHASIS.sub(r"\g<1>", inner)
        pieces += (before, inner)
        length += len(before)
        number = int(match.group(1))
        if number < len(links):
            spans.append(LinkSpan(length, length + len(inner), links[number]))
        length += len(inner)
        cursor = match.end()
    pieces.append(_MARKERS.sub("", html[cursor:]))
    return "".join(pieces), spans


def wrap_links(html: str, spans: Iterable[LinkSpan]) -> str:
    """``html`` with each span (in document order, not overlapping) wrapped in its link."""
    pieces: list[str] = []
    cursor = 0
    for start, end, link in spans:
        pieces += (html[cursor:start], link.opening(), html[start:end], link.closing)
        cursor = end
    pieces.append(html[cursor:])
    return "".join(pieces)


def relocate_spans(spans: Iterable[LinkSpan], old: str, new: str) -> list[LinkSpan]:
    """The spans of ``old`` found again in ``new``, a version of it another plugin edited.

    Each span's text is looked for where the edits so far put it, else further on; a span whose
    text is gone is dropped rather than put around other text.
    """
    moved: list[LinkSpan] = []
    cursor = shift = 0
    for start, end, link in spans:
        fragment = old[start:end]
        expected = start + shift
        if expected >= cursor and new.startswith(fragment, expected):
            found = expected
        else:
            found = new.find(fragment, cursor)
            if found < 0:
                continue
        moved.append(LinkSpan(found, found + len(fragment), link))
        shift = found - start
        cursor = found + len(fragment)
    return moved


def taken_spans(layout: MarkdownLayout) -> list[tuple[int, int]]:
    """Where links (and HTML) already are: nothing inside them is linked again."""
    # Searched in the text with fenced blocks blanked; code spans stay, because a link label
    # may hold one (``[`x.py:3`](…)``) and a code span may hold a '<'.
    searched = _blank_code_spans_but_keep_brackets(layout)
    return [(match.start(), match.end()) for match in _EXISTING_LINKS.finditer(searched)]


def _blank_code_spans_but_keep_brackets(layout: MarkdownLayout) -> str:
    text = layout.without_code_blocks
    pieces = []
    cursor = 0
    for span in layout.code_spans:
        pieces.append(text[cursor : span.start])
        code = text[span.start : span.end]
        if "[" in code or "]" in code or "\n" in code:
            pieces.append(_NOT_BRACKET.sub("x", code))
        else:
            pieces.append("x" * len(code))
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    index = bisect.bisect_right(spans, (start, float("inf"))) - 1
    for candidate in spans[max(index, 0) : index + 2]:
        if candidate[0] < end and start < candidate[1]:
            return True
    return False


def _without_shared_spans(
    links: list[tuple[CodeLink, ResolvedRef]],
) -> list[tuple[CodeLink, ResolvedRef]]:
    """Drop links whose spans overlap: a code span with two references is left as written."""
    links.sort(key=lambda pair: (pair[0].start, pair[0].end))
    clash: set[int] = set()
    for index, (link, _) in enumerate(links):
        if index and link.start < links[index - 1][0].end:
            clash.update({index - 1, index})
    return [pair for index, pair in enumerate(links) if index not in clash]

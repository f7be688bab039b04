"""Find headings (with their anchors) and internal links in a page.

Anchors follow GitHub: the heading's rendered text through `generator.refs.slugs.github_slug`, made
unique in document order (``x``, ``x-1``). An explicit ``{#id}`` (attr_list) or an HTML
``id=``/``name=`` attribute also defines an anchor.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from generator.model import Heading, Link
from generator.patterns import lazy_pattern
from generator.refs.extract.markdown import MarkdownLayout
from generator.refs.slugs import Slugger

_ATX = lazy_pattern(
    r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>[^\n]*?))?(?:[ \t]+#+)?[ \t]*\r?$", re.M
)
_SETEXT_UNDERLINE = lazy_pattern(r"^ {0,3}(?P<marks>=+|-+)[ \t]*\r?$", re.M)
_ATTR_ID = lazy_pattern(r"[ \t]*\{:?[ \t]*[^}]*?#(?P<id>[^\s}]+)[^}]*\}[ \t]*$")
_HTML_ID = lazy_pattern(r"""<[A-Za-z][^>]*?\s(?:id|name)\s*=\s*["'](?P<id>[^"']+)["']""")
# Starts with a literal '[' so the regex engine can skip ahead to candidates; a '!' just before
# the bracket makes it an image.
_INLINE_LINK = lazy_pattern(
    r"""
    \[(?P<label>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]
    \(\s*(?P<target><[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)
    (?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?\s*\)
    """,
    re.VERBOSE,
)
_REFERENCE_DEFINITION = lazy_pattern(
    r"^ {0,3}\[(?P<label>[^\]\n]+)\]:[ \t]*(?P<target><[^>\n]*>|\S+)", re.M
)
_SCHEME = lazy_pattern(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_CODE = lazy_pattern(r"(`+)(.+?)\1")
_LINK_TEXT = lazy_pattern(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)")
_REF_LINK_TEXT = lazy_pattern(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\[[^\]]*\]")
_HTML_TAG = lazy_pattern(r"<[^>]+>")
_STRONG_UNDERSCORE = lazy_pattern(r"(?<![A-Za-z0-9])__(?=\S)(.+?)(?<=\S)__(?![A-Za-z0-9])")
_EM_UNDERSCORE = lazy_pattern(r"(?<![A-Za-z0-9_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![A-Za-z0-9_])")


def heading_text(markdown: str) -> str:
    """The text a heading renders to, as GitHub sees it for its anchor."""
    codes: list[str] = []

    def keep_code(match: re.Match[str]) -> str:
        codes.append(match.group(2).strip())
        return f"\x00{len(codes) - 1}\x00"

    text = _CODE.sub(keep_code, markdown)
    text = _LINK_TEXT.sub(r"\1", text)
    text = _REF_LINK_TEXT.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _STRONG_UNDERSCORE.sub(r"\1", text)
    text = _EM_UNDERSCORE.sub(r"\1", text)
    text = text.replace("\\", "")
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], text).strip()


def extract_headings(layout: MarkdownLayout) -> list[Heading]:
    """Headings in document order, each with its unique GitHub-style anchor."""
    text = layout.without_code_blocks
    found: list[tuple[int, int, str]] = []  # (offset, level, raw text)
    for match in _ATX.finditer(text, layout.body_start):
        found.append((match.start(), len(match.group("marks")), match.group("text") or ""))
    for match in _SETEXT_UNDERLINE.finditer(text, layout.body_start):
        line, _ = layout.position(match.start())
        if line < 2:
            continue
        previous_start = layout.line_starts[line - 2]
        if previous_start < layout.body_start:
            continue
        previous = text[previous_start : match.start()].rstrip("\r\n")
        if _is_paragraph_line(previous) and (
            line < 3
            or text[layout.line_starts[line - 3] : previous_start].strip() == ""
            or match.group("marks")[0] == "="
        ):
            level = 1 if match.group("marks")[0] == "=" else 2
            found.append((previous_start, level, previous.strip()))
    found.sort()

    slugger = Slugger()
    headings = []
    for offset, level, raw in found:
        explicit = _ATTR_ID.search(raw)
        if explicit:
            raw = raw[: explicit.start()]
            anchor = slugger.reserve(explicit.group("id"))
        else:
            anchor = slugger.unique(heading_text(raw))
        line, _ = layout.position(offset)
        headings.append(Heading(level=level, text=raw.strip(), line=line, anchor=anchor))
    return headings


def _is_paragraph_line(line: str) -> bool:
    stripped = line.strip()
    if not stripped or line.startswith(("    ", "\t")):
        return False
    return not re.match(r"(#{1,6}\s|[-*+>|]|\d+[.)]\s|<|---|===)", stripped)


def extract_anchors(layout: MarkdownLayout, headings: list[Heading] | None = None) -> set[str]:
    """Every anchor a link into this page may use."""
    anchors = {heading.anchor for heading in headings or extract_headings(layout)}
    anchors.update(match.group("id") for match in _HTML_ID.finditer(layout.without_code_blocks))
    return anchors


def _only_web_targets(text: str) -> bool:
    """Whether every "](" of the text goes on with a web address: then every inline link the
    page may hold leads out of the site, and the page's prose need not be made to find them
    (pages that cite code by permalinks only, the most common kind)."""
    at = text.find("](")
    while at != -1:
        if not text.startswith(("http://", "https://"), at + 2):
            return False
        at = text.find("](", at + 2)
    return True


def extract_links(layout: MarkdownLayout, page: str) -> list[Link]:
    """Links and images whose target is a file or anchor of the site (not an external URL)."""
    # An inline link has "](" and a reference definition "]:"; blanking code only turns text into
    # spaces, so prose has them only where the text does.
    inline, definitions = "](" in layout.text, "]:" in layout.text
    if not definitions and (not inline or _only_web_targets(layout.text)):
        return []
    prose = layout.prose
    links = []
    matches = []
    if inline:
        matches = [
            (m.start("target"), m.group("target"), m.start() > 0 and prose[m.start() - 1] == "!")
            for m in _INLINE_LINK.finditer(prose, layout.body_start)
        ]
    if definitions:
        matches.extend(
            (m.start("target"), m.group("target"), False)
            for m in _REFERENCE_DEFINITION.finditer(prose, layout.body_start)
            # Markers (see extract.refs) and footnote definitions (`[^1]: text`) are not links.
            if not m.group("label").startswith(("kb:", "^"))
        )
    for offset, raw_target, is_image in sorted(matches):
        target = raw_target[1:-1] if raw_target.startswith("<") else raw_target
        if not target or _SCHEME.match(target) or target.startswith("//"):
            continue
        path_part, _, fragment = target.partition("#")
        path_part = unquote(path_part.partition("?")[0])
        line, column = layout.position(offset)
        links.append(
            Link(
                page=page,
                line=line,
                column=column,
                text=target,
                target_path=path_part,
                fragment=unquote(fragment) if "#" in target else None,
                is_image=is_image,
            )
        )
    return links

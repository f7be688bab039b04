"""GitHub-compatible heading ids (``markdown_extensions: [generator.site.anchors]``).

The ``toc`` extension already slugs with `generator.refs.slugs.slugify`, but it makes repeated ids
unique as ``x_1``, ``x_2`` while GitHub (and the verifier, `generator.refs.slugs.Slugger`) uses
``x-1``, ``x-2``. This tree processor runs after ``attr_list`` and before ``toc`` and gives every
heading its GitHub id in document order; ``toc`` never overrides an id that is already set, so the
table of contents, the permalinks and the verifier all agree. An explicit ``{#id}`` is kept as
written (unless an earlier heading already took it) and takes its place in the sequence, as the
verifier assumes.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as etree
from typing import Any

from markdown import Markdown
from markdown.extensions import Extension
from markdown.extensions.footnotes import FootnotePostprocessor
from markdown.extensions.toc import remove_fnrefs, render_inner_html, strip_tags
from markdown.postprocessors import AndSubstitutePostprocessor, RawHtmlPostprocessor
from markdown.treeprocessors import Treeprocessor

from generator.refs.slugs import Slugger, github_slug

_HEADING = re.compile(r"^h[1-6]$")
# After attr_list (8), which sets explicit ids, and before toc (5), which would add "_1".
PRIORITY = 6


class GitHubAnchorsTreeprocessor(Treeprocessor):
    def run(self, root: etree.Element) -> None:
        slugger = Slugger(github_slug)
        plain = only_placeholder_postprocessors(self.md)
        for element in root.iter():
            if not isinstance(element.tag, str) or not _HEADING.match(element.tag):
                continue
            explicit = element.get("id")
            if explicit:
                # Kept as written unless an earlier heading took it: then the verifier's
                # sequence (``x-1``) decides, so both sides name the same anchor.
                element.set("id", slugger.reserve(explicit))
                continue
            element.set("id", slugger.unique(heading_text(element, self.md, plain)))


def heading_text(element: etree.Element, md: Markdown, plain: bool = False) -> str:
    """A heading's text as ``toc`` names it: rendered, tags stripped, whitespace collapsed.

    ``plain``: the postprocessors only put back what Markdown stashed
    (`only_placeholder_postprocessors`), so a heading of bare text with nothing stashed in it is
    named without rendering it, which would escape what unescaping then restores.
    """
    if plain and _plain_text(element):
        return " ".join("".join(_text_of(element)).split())
    return html.unescape(strip_tags(render_inner_html(remove_fnrefs(element), md)))


_PLAIN_INLINE = frozenset({"code", "em", "strong"})
"""Inline elements whose rendering, tags stripped, is their text: a heading holding only these
(`` `f()` and **x** ``, the usual case) is named from its text, without rendering it."""


def _text_of(element: etree.Element) -> list[str]:
    """The element's text as rendering and unescaping give it: inline code keeps its text
    escaped in the tree (it is written out as it is), other text is escaped on the way out."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == "code":
            parts.append(html.unescape(child.text or ""))
        else:
            parts.extend(_text_of(child))
        parts.append(child.tail or "")
    return parts


def _plain_text(element: etree.Element) -> bool:
    """Whether the heading holds text and `_PLAIN_INLINE` elements only, none of it stashed."""
    if "\x02" in (element.text or ""):
        return False
    for child in element.iter():
        if child is element:
            continue
        if child.tag not in _PLAIN_INLINE or child.attrib:
            return False
        if "\x02" in (child.text or "") or "\x02" in (child.tail or ""):
            return False
    return True


def only_placeholder_postprocessors(md: Markdown) -> bool:
    """Whether every postprocessor only puts back what was stashed behind a placeholder (each
    of which starts with ``\x02``): footnotes' backlinks and spaces are such placeholders."""
    return all(
        isinstance(
            processor, RawHtmlPostprocessor | AndSubstitutePostprocessor | FootnotePostprocessor
        )
        for processor in md.postprocessors
    )


class GitHubAnchorsExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        md.treeprocessors.register(GitHubAnchorsTreeprocessor(md), "github_anchors", PRIORITY)


def makeExtension(**kwargs: Any) -> GitHubAnchorsExtension:
    return GitHubAnchorsExtension(**kwargs)

"""Check relative links between pages and their ``#anchors``, and footnotes to their notes.

Targets are resolved the way MkDocs publishes the docs directory: relative to the linking page,
``/x.md`` from the docs root, and a directory means its ``index.md`` or ``README.md``. Anchors
are computed with the same GitHub-compatible slugs the site uses.
"""

from __future__ import annotations

import bisect
import difflib
import posixpath
import re
import stat
from collections.abc import Callable
from pathlib import Path

from generator.checks import severity_of
from generator.model import Finding, Link
from generator.patterns import lazy_pattern
from generator.refs.extract import MarkdownLayout

_INDEX_NAMES = ("index.md", "README.md")
_MAX_SUGGESTIONS_PER_PAGE = 50
# A footnote reference `[^label]`: not escaped, not the text of a link (`[^label](url)`,
# `[^label][ref]`); a definition's own label is taken out by position (`footnote_findings`).
_FOOTNOTE = lazy_pattern(r"(?<!\\)\[\^(?P<label>[^\]\s]+)\](?![(\[])")
# A definition starts its line, indented or in a list item or a block quote (where it still
# defines); `two reasons[^1]: speed` mid-line is a reference followed by a colon.
_FOOTNOTE_DEFINITION = lazy_pattern(
    r"^[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?<!\\)\[\^(?P<label>[^\]\s]+)\]:", re.M
)
_HTML_COMMENT = lazy_pattern(r"<!--.*?-->", re.S)
# A list item's first line: what makes the indented lines after it the item's text, not code.
_LIST_ITEM = lazy_pattern(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def link_target(link: Link, page_rel: str) -> str:
    """Where ``link`` on the page ``page_rel`` leads, relative to the docs root and normalised
    (``.`` for the root; ``..`` first when it leaves the docs): ``/x.md`` from the docs root,
    anything else from the page's directory."""
    if link.target_path.startswith("/"):
        joined = link.target_path.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(page_rel), link.target_path)
    return posixpath.normpath(joined)


def path_kind(path: Path) -> str:
    """``directory``, ``file`` or ``missing``: a name the system refuses (too long, a NUL byte,
    a link that loops) names nothing, as a name that is not there."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return "missing"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "missing"


class LinkChecker:
    """Checks links against the docs tree; ``anchors_of`` gives the anchors of a page (by rel)."""

    def __init__(self, docs_root: Path, anchors_of: Callable[[str], set[str] | None]) -> None:
        self.docs_root = docs_root
        self._anchors_of = anchors_of
        # What each target in the docs is, looked up once: pages link to the same few pages.
        self._targets: dict[str, tuple[str, str | None]] = {}
        self._listings: dict[str, list[str]] = {}
        self._suggested: dict[str, int] = {}

    def check(self, link: Link, page_rel: str, page_source: Path) -> list[Finding]:
        if not link.target_path:
            return self.check_anchor(link, page_rel, page_rel)
        target = link_target(link, page_rel)
        if target == ".." or target.startswith("../"):
            outside = page_source.parent / link.target_path
            if path_kind(outside) != "missing":
                return [
                    self._finding(
                        link,
                        "link-outside-docs",
                        f"'{link.text}' leaves the docs directory, so the site will not have it",
                        "link to its web address instead",
                    )
                ]
            return [self._finding(link, "link-missing", f"'{link.text}' does not exist")]
        target = "" if target == "." else target
        kind, index = self._target(target)
        if kind == "directory":
            if index is None:
                return [
                    self._finding(
                        link,
                        "link-missing",
                        f"'{link.text}' is a directory without index.md or README.md",
                    )
                ]
            target = posixpath.join(target, index) if target else index
        elif kind != "file":
            return [
                self._finding(
                    link,
                    "link-missing",
                    f"'{link.text}' does not exist",
                    self._closest(target, page_rel),
                )
            ]
        if link.fragment is not None and target.endswith(".md"):
            return self.check_anchor(link, target, page_rel)
        return []

    def _target(self, target: str) -> tuple[str, str | None]:
        """Whether ``target`` is a ``directory`` (with its index page, if any), a ``file`` or
        ``missing``."""
        known = self._targets.get(target)
        if known is None:
            path = self.docs_root / target
            kind = path_kind(path)
            if kind == "directory":
                index = next(
                    (name for name in _INDEX_NAMES if path_kind(path / name) == "file"), None
                )
                known = ("directory", index)
            else:
                known = (kind, None)
            self._targets[target] = known
        return known

    def check_anchor(self, link: Link, target: str, page_rel: str) -> list[Finding]:
        """The finding of ``link``'s ``#fragment`` if the page ``target`` (a rel) lacks it."""
        fragment = link.fragment or ""
        if not fragment:
            return []
        anchors = self._anchors_of(target)
        if anchors is None or fragment in anchors:
            return []
        close = difflib.get_close_matches(fragment.lower(), sorted(anchors), n=1, cutoff=0.6)
        where = "this page" if target == page_rel else f"'{target}'"
        suggestion = None
        if close:
            prefix = link.text.split("#", 1)[0]
            suggestion = f"did you mean '{prefix}#{close[0]}'?"
        return [
            self._finding(
                link, "anchor-missing", f"'#{fragment}' is not an anchor of {where}", suggestion
            )
        ]

    def _closest(self, target: str, page_rel: str) -> str | None:
        # A page of thousands of missing links (a dump, a generated index) gets suggestions for
        # its first few: each costs a fuzzy match against the whole directory.
        searched = self._suggested.get(page_rel, 0)
        if searched >= _MAX_SUGGESTIONS_PER_PAGE:
            return None
        self._suggested[page_rel] = searched + 1
        names = self._names_in(posixpath.dirname(target))
        if not names:
            return None
        close = difflib.get_close_matches(posixpath.basename(target), names, n=1, cutoff=0.6)
        return f"did you mean '{close[0]}'?" if close else None

    def _names_in(self, directory: str) -> list[str]:
        """The entries of a directory of the docs, sorted, listed once per run."""
        names = self._listings.get(directory)
        if names is None:
            path = self.docs_root / directory
            try:
                names = sorted(entry.name for entry in path.iterdir())
            except (OSError, ValueError):
                names = []
            self._listings[directory] = names
        return names

    @staticmethod
    def _finding(link: Link, check: str, message: str, suggestion: str | None = None) -> Finding:
        return Finding(
            severity_of(check),
            check,
            link.page,
            link.line,
            link.column,
            message,
            suggestion,
            text=link.text,
        )


def footnote_findings(layout: MarkdownLayout, page: str) -> list[Finding]:
    """Footnotes whose two halves do not meet, in the page's order:

    - a reference (``[^1]``) with no definition (``[^1]: ...``) on the page: the site and
      GitHub show it as written, ``[^1]``, and the note it promised is nowhere. Drafts lose
      definitions when a section is cut or pasted elsewhere;
    - a definition nothing refers to: the site lists its note with a link back to a place that
      does not exist, GitHub leaves it out. Drafts lose references when the sentence that made
      the claim is rewritten.

    Code and HTML comments are not prose: a ``[^1]`` there says nothing. Labels match as the
    site matches them, case by case; a label used in another case (which GitHub would find) is
    reported once, at the reference, with the definition named in the suggestion."""
    if "[^" not in layout.text:  # most pages: no need to blank their code to look further
        return []
    prose = layout.prose
    comments = [match.span() for match in _HTML_COMMENT.finditer(prose, layout.body_start)]
    comment_starts = [start for start, _ in comments]
    code = _indented_code(prose, layout.body_start)
    code_starts = [start for start, _ in code]

    def in_prose(offset: int) -> bool:
        return not (_inside(comments, comment_starts, offset) or _inside(code, code_starts, offset))

    definitions = [
        match
        for match in _FOOTNOTE_DEFINITION.finditer(prose, layout.body_start)
        if in_prose(match.start("label"))
    ]
    labels_defining = {match.start("label") for match in definitions}
    anywhere = [
        match
        for match in _FOOTNOTE.finditer(prose, layout.body_start)
        if match.start("label") not in labels_defining
        and not _inside(comments, comment_starts, match.start())
    ]
    references = [match for match in anywhere if not _inside(code, code_starts, match.start())]
    defined = {match.group("label") for match in definitions}
    # A note counts as referred to from indented lines too: they may be an admonition's or a
    # note's second paragraph rather than code, and a note wrongly called unused is worse than
    # one not called so.
    referred = {match.group("label").casefold() for match in anywhere}
    by_case = {label.casefold(): label for label in defined}
    found: list[tuple[int, Finding]] = []
    for match in references:
        label = match.group("label")
        if label in defined:
            continue
        other = by_case.get(label.casefold())
        suggestion = (
            f"its note is defined as '[^{other}]': the site matches labels case by case, so "
            "write both alike"
            if other is not None
            else f"add its note, '[^{label}]: ...', or remove the reference"
        )
        message = f"footnote [^{label}] has no definition on this page: it shows as written"
        found.append(
            (
                match.start(),
                _footnote_finding(layout, page, match, "footnote-undefined", message, suggestion),
            )
        )
    for match in definitions:
        label = match.group("label")
        if label.casefold() in referred:
            continue  # referred to, or in another case (reported at the reference)
        message = (
            f"footnote [^{label}] is defined but nothing on this page refers to it: the site "
            "lists its note with a link back to nowhere, and GitHub leaves it out"
        )
        suggestion = f"add '[^{label}]' where its claim is made, or remove the note"
        found.append(
            (
                match.start(),
                _footnote_finding(layout, page, match, "footnote-unused", message, suggestion),
            )
        )
    return [finding for _, finding in sorted(found, key=lambda item: item[0])]


def _footnote_finding(
    layout: MarkdownLayout,
    page: str,
    match: re.Match[str],
    check: str,
    message: str,
    suggestion: str,
) -> Finding:
    line, column = layout.position(match.start())
    text = match.group(0).removesuffix(":")
    return Finding(severity_of(check), check, page, line, column, message, suggestion, text=text)


def _indented_code(prose: str, start: int) -> list[tuple[int, int]]:
    """The indented code blocks of ``prose`` from ``start`` on: lines four columns in after a
    blank line, outside a list, as in a regex ``re.compile(r"[^a-z]")`` indented instead of
    fenced. In a list the same lines are the item's text, which stays prose (a missed note there
    goes unreported rather than a regex being reported)."""
    spans = []
    in_list = False
    blank_before = True
    code_start: int | None = None
    offset = start
    for line in prose[start:].splitlines(keepends=True):
        if not line.strip():
            blank_before = True
            offset += len(line)
            continue
        expanded = line.expandtabs(4)
        indent = len(expanded) - len(expanded.lstrip(" "))
        if code_start is not None and indent < 4:
            spans.append((code_start, offset))
            code_start = None
        if code_start is None:
            if indent >= 4 and blank_before and not in_list:
                code_start = offset
            elif _LIST_ITEM.match(expanded):
                in_list = True
            elif indent == 0 and blank_before:
                in_list = False  # a paragraph of its own after a blank line ends the list
        blank_before = False
        offset += len(line)
    if code_start is not None:
        spans.append((code_start, offset))
    return spans


def _inside(spans: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    """Whether ``offset`` is in one of ``spans`` (in order, not overlapping; ``starts`` their
    starts): by bisection, as a hostile page may hold thousands of each."""
    index = bisect.bisect_right(starts, offset) - 1
    return index >= 0 and offset < spans[index][1]

"""Code cards: the cited code behind each code link, shown on hover, keyboard focus or a click.

A card holds what the reference cites at its pin: the lines (highlighted with Pygments into the
``.highlight`` classes Material's own code blocks use, so the light and the dark palette both
colour it), with their real numbers, the path, ``upstream@shortsha`` and the link to the forge.
A reference to a whole file shows the file's outline (`generator.refs.outline`), one to a
symbol without lines (``x.py:setup()``) the symbol's definition.

The code comes from the build: the blobs the verification read, through the verifier's
`GitStore` (each blob once per build, never a process per reference). Each distinct target
becomes one ``<template>`` at the end of the page, which the link names in ``data-kb-card``;
``cards.js`` (served from the site) shows it. So a page needs no request to show its cards, a
``<template>``'s content is inert until shown, and the search plugin never sees it (it is added
after the page was indexed). Upstream code is untrusted: every character of it is escaped by
Pygments or `html.escape`, so a file holding ``</template>`` or ``<script>`` shows as text.

What a page embeds is bounded (`CardLimits`): lines per card, and bytes per page; a reference
past the page's budget keeps its plain link.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import NamedTuple

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from generator.model import ResolvedRef, Upstream
from generator.refs.outline import Outline, outline_plain, outline_python
from generator.refs.resolve import symbol_definitions
from generator.site.codelinks import CodeLink, code_url
from generator.upstream.gitstore import BlobText, GitStore, RepositoryUnavailable
from generator.upstream.manifest import ConfigError

log = logging.getLogger(__name__)

VISIBLE_LINES = 12
"""Lines a card shows before its expand control."""
LINE_CHARACTERS = 400
"""A longer line (minified code, data) is cut here: one line must not take a page's budget."""
TEMPLATE_PREFIX = "kb-card-"
MAX_KEPT = 20_000
"""Cards kept for other pages citing the same lines (a few KiB each)."""


@dataclass(frozen=True)
class CardLimits:
    """What a page may embed: the plugin options ``card_lines`` and ``card_page_bytes``."""

    lines: int = 60
    """Lines of code (or outline entries) per card; a longer range shows these and says how
    many more the forge has."""
    page_bytes: int = 256 * 1024
    """Bytes of cards per page (the ``<template>`` elements' HTML, UTF-8); the references past
    it keep their plain link."""


class Target(NamedTuple):
    """What a card shows; references citing the same one share its card."""

    upstream: str
    commit: str
    path: str
    start: int | None
    end: int | None
    symbol: str | None


@dataclass
class PageCards:
    """A page's links, those with a card naming it, and the cards' ``<template>`` elements."""

    links: list[CodeLink]
    templates: str = ""
    skipped: int = 0
    """References with a card to show that the page's byte budget left out."""


_WORDS = {
    "en": {
        "lines": "lines {start}–{end}",
        "line": "line {start}",
        "file": "whole file",
        "outline": "Outline",
        "more": "{count} more lines on {forge}",
        "expand": "Show all {count} lines",
        "open": "Open on {forge}",
        "empty": "(empty file)",
        "binary": "(binary file)",
        "more-symbols": "{count} more definitions on {forge}",
        "more-here": "{count} more lines, past what a card shows",
        "more-symbols-here": "{count} more definitions",
    },
    "zh": {
        "lines": "第 {start}–{end} 行",
        "line": "第 {start} 行",
        "file": "整个文件",
        "outline": "大纲",
        "more": "另有 {count} 行，见 {forge}",
        "expand": "显示全部 {count} 行",
        "open": "在 {forge} 打开",
        "empty": "（空文件）",
        "binary": "（二进制文件）",
        "more-symbols": "另有 {count} 个定义，见 {forge}",
        "more-here": "另有 {count} 行未在卡片中显示",
        "more-symbols-here": "另有 {count} 个定义",
    },
}


def card_words(lang: str | None) -> dict[str, str]:
    """Labels in the page's language (``zh``, ``zh-CN``, ...), English otherwise."""
    return _WORDS.get((lang or "en").split("-", 1)[0].lower(), _WORDS["en"])


@dataclass
class CardMaker:
    """Makes the cards of a build's pages, reading blobs from the verifier's clones."""

    upstreams: dict[str, Upstream]
    store: Callable[[Upstream], GitStore] | None = None
    """The clone of an upstream by `Upstream` (the verifier's `Resolver.store`)."""
    limits: CardLimits = field(default_factory=CardLimits)
    _outlines: dict[str, Outline] = field(default_factory=dict)
    _bodies: dict[tuple[Target, str | None, str], str | None] = field(default_factory=dict)
    """Cards already made, for the pages citing the same lines: each is highlighted once."""

    def page_cards(
        self, pairs: Sequence[tuple[CodeLink, ResolvedRef]], lang: str | None
    ) -> PageCards:
        """The page's links with their cards, within the page's byte budget."""
        words = card_words(lang)
        ids: dict[Target, str | None] = {}
        templates: list[str] = []
        used = skipped = 0
        links: list[CodeLink] = []
        for link, resolved in pairs:
            target = _target(resolved)
            if target is None:
                links.append(link)
                continue
            if target not in ids:
                ids[target] = None
                body = self._body(target, link.url, lang, words)
                if body is not None:
                    card_id = f"{TEMPLATE_PREFIX}{len(templates) + 1}"
                    template = f'<template id="{card_id}">{body}</template>'
                    size = len(template.encode("utf-8"))
                    if used + size <= self.limits.page_bytes:
                        used += size
                        templates.append(template)
                        ids[target] = card_id
                    else:
                        skipped += 1
            card_id = ids[target]
            links.append(replace(link, card=card_id) if card_id else link)
        return PageCards(links, "\n".join(templates), skipped)

    # -- one card

    def _body(
        self, target: Target, url: str | None, lang: str | None, words: dict[str, str]
    ) -> str | None:
        key = (target, url, lang or "")
        if key not in self._bodies:
            if len(self._bodies) >= MAX_KEPT:
                self._bodies.clear()
            self._bodies[key] = self._card(target, url, words)
        return self._bodies[key]

    def _card(self, target: Target, url: str | None, words: dict[str, str]) -> str | None:
        upstream = self.upstreams.get(target.upstream)
        blob = self._blob(upstream, target) if upstream is not None else None
        if upstream is None or blob is None:
            return None
        forge = forge_name(upstream.web_url) if upstream.web_url else None
        start, end = target.start, target.end
        if start is None and target.symbol:
            start, end = _definition(blob, target.symbol) or (None, None)
        if start is None:
            where = words["file"]
            body = self._outline(upstream, target, blob, words)
        else:
            end = start if end is None or end < start else end
            where = (words["lines"] if end != start else words["line"]).format(start=start, end=end)
            body = self._code(target.path, blob, start, end, words, forge)
        head = (
            f'<div class="kb-card__head"><span class="kb-card__path">{escape(target.path)}</span>'
            f'<span class="kb-card__where">{escape(where)}</span>'
            f'<span class="kb-card__pin">{escape(target.upstream)}@{target.commit[:7]}</span></div>'
        )
        if url is None:  # (no forge to open it on: the card is all a reader gets)
            return f"{head}{body}"
        foot = (
            f'<a class="kb-card__out" href="{escape(url)}">'
            f"{escape(words['open'].format(forge=forge))}</a>"
        )
        return f"{head}{body}{foot}"

    def symbol_lines(self, resolved: ResolvedRef) -> tuple[int, int] | None:
        """The lines of the definition a reference without lines names (``x.py:Trainer.fit``),
        as its card shows them: for its link to lead there too, not to the top of the file."""
        target = _target(resolved)
        if target is None or target.symbol is None:
            return None
        upstream = self.upstreams.get(target.upstream)
        blob = self._blob(upstream, target) if upstream is not None else None
        return None if blob is None else _definition(blob, target.symbol)

    def _blob(self, upstream: Upstream, target: Target) -> BlobText | None:
        if self.store is None:
            return None
        try:
            store = self.store(upstream)
            entry = store.entry(target.commit, target.path)
            if entry is None or entry.kind != "blob" or entry.is_symlink:
                return None
            return store.blob(entry.sha)
        except (ConfigError, RepositoryUnavailable, OSError) as error:
            # No clone here (its references are unchecked), or the clone lost the commit: the
            # reference keeps its plain link, and the verification has said why.
            log.debug("no card for %s:%s: %s", target.upstream, target.path, error)
            return None

    def _code(
        self,
        path: str,
        blob: BlobText,
        start: int,
        end: int,
        words: dict[str, str],
        forge: str | None,
    ) -> str:
        if blob.is_binary:
            return f'<p class="kb-card__note">{escape(words["binary"])}</p>'
        lines = blob.lines[start - 1 : min(end, start - 1 + self.limits.lines)]
        shown = highlighted_lines(path, lines)
        numbered = [
            f'<span data-n="{number}">{line}</span>' for number, line in enumerate(shown, start)
        ]
        code = "\n".join(numbered[:VISIBLE_LINES])
        rest = numbered[VISIBLE_LINES:]
        if rest:
            code += '<span class="kb-card__rest">\n' + "\n".join(rest) + "</span>"
        digits = len(str(start + len(lines)))
        html = (
            f'<div class="highlight kb-card__code" style="--kb-digits:{digits}"><pre><code>'
            f"{code}</code></pre></div>"
        )
        if rest:
            html += (
                f'<button type="button" class="kb-card__expand">'
                f"{escape(words['expand'].format(count=len(lines)))}</button>"
            )
        more = end - start + 1 - len(lines)
        if more > 0:
            said = words["more"] if forge else words["more-here"]
            html += f'<p class="kb-card__note">{escape(said.format(count=more, forge=forge))}</p>'
        return html

    def _outline(
        self, upstream: Upstream, target: Target, blob: BlobText, words: dict[str, str]
    ) -> str:
        if blob.is_binary:
            return f'<p class="kb-card__note">{escape(words["binary"])}</p>'
        if not blob.lines:
            return f'<p class="kb-card__note">{escape(words["empty"])}</p>'
        key = f"{target.upstream}:{target.commit}:{target.path}"
        outline = self._outlines.get(key)
        if outline is None:
            if target.path.endswith((".py", ".pyi")):
                outline = outline_python(blob.data.decode("utf-8", "replace"))
            else:
                outline = outline_plain(blob.lines)
            self._outlines[key] = outline
        if not outline.symbols:
            # Nothing defined (a config, a README): its first lines say more than an empty list.
            end = min(len(blob.lines), self.limits.lines)
            forge = forge_name(upstream.web_url) if upstream.web_url else None
            return self._code(target.path, blob, 1, end, words, forge)
        items = []
        for symbol in outline.symbols[: self.limits.lines]:
            url = code_url(upstream, target.commit, target.path, symbol.start, symbol.end)
            entry = (
                f'<span class="kb-card__ln">{symbol.start}</span>'
                f'<span class="kb-card__kind">{escape(symbol.kind)}</span> '
                f"<code>{escape(symbol.name)}</code>"
            )
            if url is not None:
                entry = f'<a href="{escape(url)}">{entry}</a>'
            items.append(f'<li style="--kb-depth:{symbol.depth}">{entry}</li>')
        more = len(outline.symbols) - len(items)
        note = ""
        if more > 0:
            said = words["more-symbols"] if upstream.web_url else words["more-symbols-here"]
            text = said.format(count=more, forge=forge_name(upstream.web_url))
            note = f'<p class="kb-card__note">{escape(text)}</p>'
        return (
            f'<p class="kb-card__label">{escape(words["outline"])}</p>'
            f'<ul class="kb-card__outline">{"".join(items)}</ul>{note}'
        )


def _definition(blob: BlobText, symbol: str) -> tuple[int, int] | None:
    """The definition ``symbol`` names in the blob: for a plain name, the module's own (the
    last, which the module keeps when it defines one twice) before any method or nested
    function of that name; for ``Class.method``, the first in the class, and in the last class
    of that name when the module defines it twice (the one it keeps, as for a plain name)."""
    spans = symbol_definitions(blob.line_tuple, symbol)
    if not spans or ":" in symbol:
        return spans[0] if spans else None
    outer, _, inner = symbol.partition(".")
    kept = _module_level(blob, symbol_definitions(blob.line_tuple, outer) if inner else spans)
    if kept is None:
        return spans[0]
    if not inner:
        return kept
    return next((span for span in spans if kept[0] <= span[0] <= kept[1]), spans[0])


def _module_level(blob: BlobText, spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The last of ``spans`` that is defined at the module's top level, if any."""
    top_level = [span for span in spans if not blob.lines[span[0] - 1][:1].isspace()]
    return top_level[-1] if top_level else None


def _target(resolved: ResolvedRef) -> Target | None:
    ref = resolved.ref
    if ref.is_directory or resolved.upstream is None or resolved.commit is None:
        return None
    path = resolved.path or ref.path
    if not path:
        return None
    # A symbol only says what to show when there are no lines: the same lines named with and
    # without it share one card.
    symbol = ref.symbol if ref.start is None else None
    return Target(resolved.upstream, resolved.commit, path, ref.start, ref.end, symbol)


def forge_name(web_url: str | None) -> str:
    """How the card names where its link leads: ``GitHub``, ``GitLab``, or the host."""
    host = (web_url or "").split("://", 1)[-1].split("/", 1)[0].lower()
    if host == "github.com":
        return "GitHub"
    if host == "gitlab.com":
        return "GitLab"
    return host or "the forge"


def highlighted_lines(path: str, lines: Sequence[str]) -> list[str]:
    """``lines`` of the file ``path`` as HTML, one string per line, with Pygments' short class
    names (those Material colours in both palettes); every character of the code escaped."""
    cut = [line if len(line) <= LINE_CHARACTERS else line[:LINE_CHARACTERS] + "…" for line in lines]
    if not cut:
        return []
    html = highlight("\n".join(cut) + "\n", _lexer(_lexer_key(path)), _FORMATTER)
    # The formatter closes and reopens its spans at every line end: each line stands alone.
    out = html.split("\n")
    return out[: len(cut)]


_FORMATTER = HtmlFormatter(nowrap=True)


def _lexer_key(path: str) -> str:
    """The file name as far as choosing a lexer goes: ``file.py`` for any ``*.py``,
    ``Makefile`` as it is."""
    name = path.rsplit("/", 1)[-1]
    return "file." + name.rsplit(".", 1)[1] if "." in name else name


_LEXER_NAMES = {
    "file.py": "python",
    "file.pyi": "python",
    "file.pyx": "cython",
    "file.c": "c",
    "file.h": "c",
    "file.cc": "cpp",
    "file.cpp": "cpp",
    "file.cu": "cuda",
    "file.cuh": "cuda",
    "file.hpp": "cpp",
    "file.rs": "rust",
    "file.go": "go",
    "file.java": "java",
    "file.js": "javascript",
    "file.ts": "typescript",
    "file.sh": "bash",
    "file.yaml": "yaml",
    "file.yml": "yaml",
    "file.json": "json",
    "file.toml": "toml",
}
"""The lexers of the usual files, found by name: finding one by file name weighs every lexer
that claims the pattern (0.13 s in a build's first lookup)."""


@functools.lru_cache(maxsize=256)
def _lexer(filename: str) -> Lexer:
    """The lexer for files named like ``filename``, keeping the blank lines at either end
    (stripping them would put the numbers off)."""
    try:
        name = _LEXER_NAMES.get(filename)
        if name is not None:
            return get_lexer_by_name(name, stripnl=False, ensurenl=True)
        return get_lexer_for_filename(filename, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=True)


def prepare_python_lexer() -> None:
    """Make Pygments' Python lexer ready (it compiles its patterns on first use, 0.1 s).

    For the build to call before it forks the verification, which makes the cards: the child
    inherits the lexer ready, and the build itself would compile it anyway to highlight the
    pages' own Python blocks.
    """
    _lexer("file.py")

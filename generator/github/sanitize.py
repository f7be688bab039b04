"""Untrusted text from GitHub (titles, bodies, comments, file names) made safe for a Markdown page.

Whatever a pull request's author wrote, the page that MkDocs renders from it carries no raw HTML,
no ``<script>``, no ``on*=`` attribute, no ``javascript:`` (or ``data:``, ``vbscript:``) link, no
HTML comment, no remote image (images become plain links), no attribute list (``{: onclick=…}``)
and no heading that would change the page's outline. Control, bidirectional and zero-width
characters are removed everywhere, code included. ``@user`` and ``#123`` become links to the web
site rather than mentions that would notify anyone if the text were posted back.

The approach is an allow list: the body is split into fenced code (re-fenced with a fence longer
than any backtick run inside it) and prose; in prose only a few constructs are recognised and
rebuilt (code spans, links and images with checked URLs, autolinks, bare URLs, mentions, issue
references) and every other character that means something to Markdown or HTML is escaped. A
construct this module does not recognise therefore shows as text, never as markup.

Use :func:`inline_text` for a title, a name or a table cell, :func:`code_span` for a file name,
:func:`fenced_code` for a diff or a snippet and :func:`markdown_text` for a body or a comment::

    links = LinkContext(web_url="https://github.com", repo="THUDM/slime")
    inline_text("Fix <b>#12</b> for @alice", links)
    # 'Fix &lt;b&gt;[\\#12](https://github.com/THUDM/slime/issues/12)&lt;/b&gt; for [@alice](…)'
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

__all__ = [
    "LinkContext",
    "clean_text",
    "code_span",
    "fenced_code",
    "inline_text",
    "markdown_text",
    "one_line",
    "safe_url",
]

# Invisible letters that render as nothing (used to hide text or spoof names), beyond the
# format (Cf) and control (Cc) categories removed wholesale.
_INVISIBLE = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u034f", "\u17b4", "\u17b5"}
_LINE_SEPARATORS = {"\u2028", "\u2029", "\x85"}
_SAFE_SCHEMES = {"http", "https", "mailto"}


@dataclass(frozen=True)
class LinkContext:
    """Where ``@user`` and ``#123`` point: the web site (GitHub or an Enterprise host) and repo."""

    web_url: str = "https://github.com"
    repo: str | None = None  # "owner/name", the repository ``#123`` refers to

    def user_url(self, login: str) -> str:
        return f"{self.web_url.rstrip('/')}/{quote(login)}"

    def issue_url(self, number: str, repo: str | None = None) -> str | None:
        target = repo or self.repo
        if not target:
            return None
        return f"{self.web_url.rstrip('/')}/{quote(target)}/issues/{number}"


# --------------------------------------------------------------------------------------------
# Characters


def clean_text(text: str) -> str:
    """Remove control, bidirectional, zero-width and other invisible characters; unify newlines.

    Tabs and newlines stay; ``\\r\\n``, ``\\r`` and Unicode line separators become ``\\n``.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: list[str] = []
    for char in text:
        if char in "\n\t":
            out.append(char)
        elif char in _LINE_SEPARATORS:
            out.append("\n")
        elif char in _INVISIBLE:
            continue
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs") or _is_noncharacter(char):
            continue  # controls, format (bidi, zero-width, tags, BOM), lone surrogates
        else:
            out.append(char)
    return "".join(out)


def _is_noncharacter(char: str) -> bool:
    code = ord(char)
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def one_line(text: str) -> str:
    """Clean text with every run of whitespace (newlines included) made one space."""
    return " ".join(clean_text(text).split())


# --------------------------------------------------------------------------------------------
# Code


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def code_span(text: str) -> str:
    """Inline code showing ``text`` literally, on one line, whatever backticks it contains."""
    content = one_line(text)
    if not content:
        return ""
    if "<" in content:
        # Python-Markdown looks for raw HTML before it looks for code spans, and a span such as
        # `</p<script>` can end its search inside the span and let a tag out. As an element
        # whose every character of syntax is an entity, the code holds no tag to find.
        return "<code>" + "".join(_CODE_ENTITY.get(char, char) for char in content) + "</code>"
    fence = "`" * (_longest_backtick_run(content) + 1)
    if content.startswith("`") or content.endswith("`"):
        content = f" {content} "
    return f"{fence}{content}{fence}"


_CODE_ENTITY = {char: f"&#{ord(char)};" for char in "<>&\"'`*_[]()\\!#~|{}:="}
"""Characters written as entities in a code element: none of them can start HTML, an entity,
Markdown emphasis, a link, an autolink or an escape."""

_LANG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+.-]{0,31}")


def fenced_code(text: str, lang: str = "") -> str:
    """A fenced code block showing ``text`` literally; the fence is longer than any backtick run.

    ``lang`` is kept only when it is a plain language name (no attributes, no ``mermaid``, which
    the site would execute as a diagram).
    """
    content = clean_text(text).rstrip("\n")
    fence = "`" * max(3, _longest_backtick_run(content) + 1)
    lang = lang.strip()
    if not _LANG.fullmatch(lang) or lang.lower() == "mermaid":
        lang = ""
    return f"{fence}{lang}\n{content}\n{fence}\n"


# --------------------------------------------------------------------------------------------
# Links


def safe_url(url: str, links: LinkContext | None = None) -> str | None:
    """``url`` as a safe absolute link target, or None when it must not be a link.

    Entities are decoded and tabs and newlines removed before the scheme is judged (browsers do
    the same); only http, https and mailto pass. A site-relative path (``/owner/repo/pull/1``) is
    made absolute against the web site; other relative links are refused, since they would point
    into this site instead of GitHub.
    """
    links = links or LinkContext()
    candidate = clean_text(html.unescape(url.strip()))
    if candidate.startswith("<") and candidate.endswith(">"):
        candidate = candidate[1:-1]
    candidate = re.sub(r"[\t\n]", "", candidate).strip()  # browsers drop tabs and newlines
    if not candidate:
        return None
    if candidate.startswith("//"):
        candidate = "https:" + candidate
    elif candidate.startswith("/"):
        candidate = links.web_url.rstrip("/") + candidate
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", candidate)
    if scheme is None or scheme.group(1).lower() not in _SAFE_SCHEMES:
        return None
    if scheme.group(1).lower() in ("http", "https"):
        try:
            if not urlsplit(candidate).netloc:
                return None
        except ValueError:  # such as a malformed IPv6 host
            return None
    return quote(candidate, safe=":/?#@!$&'*+,;=%~-._")


# --------------------------------------------------------------------------------------------
# Inline text (titles, names, table cells)

_MENTION = r"(?<![\w@/.+-])@(?P<user>[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})(?![\w-])"
_ISSUE = (
    r"(?<![\w&/#.-])(?:(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+))?"
    r"\#(?P<number>\d{1,9})(?!\w)"
)
_INLINE_TOKENS = re.compile(f"(?P<mention>{_MENTION})|(?P<issue>{_ISSUE})")
_ALWAYS_ESCAPED = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "[": "\\[",
    "]": "\\]",
    "(": "\\(",
    ")": "\\)",
    "#": "\\#",
    "!": "\\!",
    "|": "\\|",
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
}


def _escape_all(text: str) -> str:
    return "".join(_ALWAYS_ESCAPED.get(char, char) for char in text)


def _link(label: str, url: str) -> str:
    return f"[{label}]({url})"


def _mention_or_issue(match: re.Match[str], links: LinkContext, escape: bool) -> str:
    if match.group("mention"):
        login = match.group("user")
        return _link(f"@{login}", links.user_url(login))
    url = links.issue_url(match.group("number"), match.group("repo"))
    text = match.group("issue")
    label = _escape_all(text)
    if url is None:
        return label if escape else text.replace("#", "\\#")
    return _link(label, url)


def inline_text(text: str, links: LinkContext | None = None) -> str:
    """Plain text (a title, a name, a table cell) for inline use: one line, no Markdown meaning.

    Every character Markdown or HTML would interpret is escaped; ``@user`` and ``#123`` become
    links to ``links.web_url``.
    """
    links = links or LinkContext()
    text = one_line(text)
    out: list[str] = []
    position = 0
    for match in _INLINE_TOKENS.finditer(text):
        out.append(_escape_all(text[position : match.start()]))
        out.append(_mention_or_issue(match, links, escape=True))
        position = match.end()
    out.append(_escape_all(text[position:]))
    result = "".join(out)
    # At the start of a line these would make a list item or a heading underline of the text.
    if result[:1] in ("-", "+"):
        result = "\\" + result
    elif result[:1] == "=":
        result = "&#61;" + result[1:]
    else:
        result = re.sub(r"^(\d+)\.", r"\1\\.", result)
    return result


# --------------------------------------------------------------------------------------------
# Markdown bodies (PR descriptions, review comments)

_URL_TARGET = r"(?P<url><[^<>\n]*>|(?:[^\s()<>]|\([^\s()<>]*\))*)"
_IMAGE_TARGET = _URL_TARGET.replace("?P<url>", "?P<imgurl>")
_BADGE_IMAGE = _URL_TARGET.replace("?P<url>", "?P<badgeimg>")
_BADGE_TARGET = _URL_TARGET.replace("?P<url>", "?P<badgeurl>")
_TITLE = r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?"
_PROSE_TOKENS = re.compile(
    "|".join(
        [
            r"(?P<escape>\\[\\`*_{}\[\]()>#+\-.!|])",
            r"(?P<code>(?P<ticks>`+)(?!`)(?P<codetext>(?:(?!\n[ \t]*\n).)+?)(?<!`)(?P=ticks)(?!`))",
            # A linked image (a badge): one link, never "[" + image + "](target)" as text.
            rf"(?P<badge>\[!\[(?P<badgealt>[^\[\]\n]*)\]\(\s*{_BADGE_IMAGE}{_TITLE}\s*\)\]"
            rf"\(\s*{_BADGE_TARGET}{_TITLE}\s*\))",
            rf"(?P<image>!\[(?P<alt>[^\[\]\n]*)\]\(\s*{_IMAGE_TARGET}{_TITLE}\s*\))",
            rf"(?P<link>\[(?P<label>[^\[\]\n]*)\]\(\s*{_URL_TARGET}{_TITLE}\s*\))",
            r"(?P<autolink><(?P<auto>(?:https?|mailto):[^\s<>]+)>)",
            r"(?P<bare>https?://[^\s<>\[\]()`\"'\\]+[^\s<>\[\]()`\"'\\.,;:!?*_~])",
            r"(?P<text>(?:&\#?[A-Za-z0-9]+;|[^\\`!\[<&h]|h(?!ttps?://))+)",
            r"(?P<char>.)",
        ]
    ),
    re.DOTALL,
)
_PROSE_ESCAPED = {
    "\\": "\\\\",
    "!": "\\!",  # before a link this module writes, "!" would make it an image
    "`": "\\`",
    "[": "\\[",
    "]": "\\]",
    "{": "\\{",
    "}": "\\}",
    "#": "\\#",
    "&": "&amp;",
    "<": "&lt;",
}
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_SETEXT = re.compile(r"^[ ]{0,3}[=-]+[ \t]*$")


def _escape_prose(text: str, links: LinkContext) -> str:
    """Plain prose: entities decoded first (so none hides a character), cleaned, then escaped;
    mentions and issue references linked."""
    text = clean_text(html.unescape(text))
    out: list[str] = []
    position = 0
    for match in _INLINE_TOKENS.finditer(text):
        out.append(_escape_some(text[position : match.start()]))
        out.append(_mention_or_issue(match, links, escape=False))
        position = match.end()
    out.append(_escape_some(text[position:]))
    return "".join(out)


def _escape_some(text: str) -> str:
    return "".join(_PROSE_ESCAPED.get(char, char) for char in text)


def _link_label(text: str) -> str:
    return _escape_all(one_line(html.unescape(text)))


def _prose(text: str, links: LinkContext) -> str:
    text = _COMMENT.sub("", text)

    out: list[str] = []
    plain: list[str] = []  # a run of plain text, escaped as a whole when something else comes

    def flush() -> None:
        if plain:
            escaped = _escape_prose("".join(plain), links)
            # "\](" would still read as the end of a link to a naive scanner (the site's link
            # checker included), which would then report a relative target that does not exist.
            if escaped.startswith("(") and out and out[-1].endswith("]"):
                escaped = "\\" + escaped
            out.append(escaped.replace("\\](", "\\]\\("))
            plain.clear()

    for match in _PROSE_TOKENS.finditer(text):
        kind = match.lastgroup
        if kind in ("text", "char"):
            plain.append(match.group(0))
            continue
        flush()
        if kind == "escape":
            out.append(match.group(0))
        elif kind == "code":
            out.append(code_span(match.group("codetext").strip()))
        elif kind == "badge":
            alt = _link_label(match.group("badgealt")) or "image"
            url = safe_url(match.group("badgeurl"), links) or safe_url(
                match.group("badgeimg"), links
            )
            out.append(_link(f"image: {alt}", url) if url else f"image: {alt}")
        elif kind == "image":
            alt = _link_label(match.group("alt")) or "image"
            url = safe_url(match.group("imgurl"), links)
            out.append(_link(f"image: {alt}", url) if url else f"image: {alt}")
        elif kind == "link":
            url = safe_url(match.group("url"), links)
            label = _link_label(match.group("label"))
            if url is None:
                out.append(label)
            else:
                out.append(_link(label or _escape_all(url), url))
        else:  # an autolink or a bare URL
            raw = match.group("auto") if kind == "autolink" else match.group("bare")
            url = safe_url(raw, links)
            out.append(_link(_escape_all(raw), url) if url else _escape_prose(raw, links))
    flush()
    # A line of '=' or '-' right under text would make that text a heading: keep it a rule/text.
    lines = "".join(out).split("\n")
    for index in range(1, len(lines)):
        if _SETEXT.match(lines[index]) and lines[index - 1].strip():
            lines[index] = "\n" + lines[index].strip()
    return "\n".join(lines)


def markdown_text(text: str, links: LinkContext | None = None) -> str:
    """A GitHub Markdown body as Markdown that is safe to put in a page.

    Formatting that cannot hurt (paragraphs, lists, block quotes, emphasis, tables, code) is
    kept; links and images are rebuilt with checked URLs, images as plain links; headings become
    text, so the page's own outline stays the page's; everything else is shown as text.
    """
    links = links or LinkContext()
    lines = clean_text(text).split("\n")
    blocks: list[str] = []
    prose: list[str] = []
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            prose.append(lines[index])
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        index += 1
        while index < len(lines) and not closing.match(lines[index]):
            line = lines[index]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            index += 1
        index += 1  # the closing fence (or the end of the text)
        if prose:
            blocks.append(_prose("\n".join(prose), links))
            prose = []
        info = opening["info"].strip().split()
        blocks.append(fenced_code("\n".join(body), info[0] if info else ""))
    if prose:
        blocks.append(_prose("\n".join(prose), links))
    return "\n\n".join(block.strip("\n") for block in blocks if block.strip()) + "\n"

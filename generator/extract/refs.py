"""Find code references in a page, in every form people write them (see DESIGN.md).

Recognised forms::

    `slime/backends/fsdp_utils/actor.py:1016-1057`     repository path and range
    actor.py:233                                        bare file name
    （actor.py:165-209）  代码位置：`actor.py:164-210`    full-width brackets and colon
    # slime/backends/fsdp_utils/actor.py:276-287        a comment inside a fenced code block
    `/home/alice/slime/slime/backends/x.py:821`         absolute local path
    https://github.com/OWNER/REPO/blob/<rev>/path.py#L10-L20   permalink
    `slime/backends/fsdp_utils/actor.py`                a whole file, in a code span, when the
                                                        path starts with an upstream's prefix

A range is ``10``, ``10-20``, ``10–20``, ``10~20``, ``L10-L20`` or ``#L10-L20``; a full-width colon
``：`` works like ``:``. Inside fenced code blocks only comments are searched (text after ``#``,
``//``, ``--``, ``%%``, ``/*`` or a leading ``*``), except in Mermaid diagrams, which are searched
whole: this keeps pasted logs and tracebacks (``File "x.py", line 12``) out. Things that look
like references but are not, and are never reported: ``host:8080``, ``10:30``, ``v1.2:3``,
``example.com:443``, ``file.py:10:5`` compiler positions, and any URL that is not a blob or tree
link of a known host.
"""

from __future__ import annotations

import bisect
import functools
import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass

from generator.extract.markdown import CodeSpan, Fence, MarkdownLayout
from generator.model import CodeRef, RefForm

# Extensions recognised on a bare file name (a path with a directory may have any extension).
KNOWN_EXTENSIONS = frozenset(
    [
        "py",
        "pyi",
        "pyx",
        "pxd",
        "c",
        "cc",
        "cpp",
        "cxx",
        "h",
        "hh",
        "hpp",
        "hxx",
        "cu",
        "cuh",
        "cuhk",
        "metal",
        "rs",
        "go",
        "java",
        "kt",
        "scala",
        "js",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "jsx",
        "sh",
        "bash",
        "zsh",
        "yaml",
        "yml",
        "toml",
        "json",
        "jsonl",
        "cfg",
        "ini",
        "conf",
        "md",
        "rst",
        "txt",
        "proto",
        "cmake",
        "sql",
        "lua",
        "rb",
        "swift",
        "m",
        "mm",
        "ipynb",
        "pl",
        "php",
        "r",
        "jl",
        "cs",
        "fs",
        "ml",
        "hs",
        "ex",
        "exs",
        "erl",
        "dart",
        "vue",
        "svelte",
        "html",
        "css",
        "scss",
        "gradle",
        "bzl",
        "mk",
        "ld",
        "s",
        "asm",
        "ptx",
        "triton",
    ]
)
# Well-known file names without an extension.
KNOWN_NAMES = frozenset(
    [
        "Makefile",
        "Dockerfile",
        "BUILD",
        "WORKSPACE",
        "Kconfig",
        "Rakefile",
        "Gemfile",
        "Justfile",
        "Jenkinsfile",
    ]
)

_PATH_CHARS = r"A-Za-z0-9_.+\-"
# A reference is found from its line separator outwards: the `:12` / `：12` / `#L12` part is rare
# in prose, so scanning for it and then walking back over the path is much cheaper than trying a
# path match at every character.
_SEPARATOR = re.compile(r"[:：]L?\d|#L\d")
_RANGE_AT = re.compile(
    r"""
    (?:
        [:：]L?(?P<start>\d+)(?:C\d+)?
      | \#L(?P<hstart>\d+)(?:C\d+)?
    )
    (?:[-–—~]L?(?P<end>\d+)(?:C\d+)?)?
    (?![A-Za-z0-9_]|\.\d|[:：]\d|[-–—~]\d)  # end of the token; not a position like 10:5
    """,
    re.VERBOSE,
)
_PATH_BACKWARDS = re.compile(rf"[{_PATH_CHARS}/~]+")
_PATH_SHAPE = re.compile(rf"(?:~?/)?(?:[{_PATH_CHARS}]+/)*[{_PATH_CHARS}]+")
_TOKEN_BEFORE = frozenset("@\\$%")
_LOOKBACK = 1024
_URL = re.compile(r"""(?:https?://|www\.)[^\s<>"'`)\]）】，。]+""")
_PERMALINK = re.compile(
    r"""
    ^(?P<host>https?://[^/\s]+)/(?P<owner>[^/\s]+)/(?P<repo>[^/\s]+)
    /(?P<kind>blob|tree|blame)/(?P<rest>[^\s#?]+)
    (?:\?[^\s#]*)?
    (?:\#L(?P<start>\d+)(?:C\d+)?(?:-L(?P<end>\d+)(?:C\d+)?)?)?
    """,
    re.VERBOSE,
)
_EXTENSION = re.compile(r"\.([A-Za-z][A-Za-z0-9+]*)$")
_SYMBOL = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)(?:\([^()]*\))?$"
)
_NUMERIC = re.compile(r"[\d.]+")
_COMMENT_MARKERS = ("#", "//", "--", "%%", "/*")
_MAX_SYMBOL_GAP = 12
_GAP_STOPPERS = frozenset(".。;；!?！？")
_NOT_SYMBOLS = frozenset(keyword.kwlist) | {"self", "cls"}
_LARGEST_LINE = 10**30


@dataclass(frozen=True)
class ExtractOptions:
    """What the extractor needs to know about the configured upstreams."""

    permalink_hosts: frozenset[str] = frozenset({"github.com"})
    """Hosts whose ``/OWNER/REPO/blob/...`` URLs are permalinks to code."""
    route_prefixes: tuple[str, ...] = ()
    """Prefixes (``slime/``) that make a bare path in a code span a whole-file reference."""


def extract_refs(
    layout: MarkdownLayout, page: str, options: ExtractOptions | None = None
) -> list[CodeRef]:
    """Every code reference in the page body, in document order."""
    options = options or ExtractOptions()
    text = layout.text
    refs: list[CodeRef] = []
    body = text  # searches start at body_start, so the frontmatter is never looked at

    # URLs first: permalinks become refs; every URL is masked so its parts are not refs again.
    url_spans: list[tuple[int, int]] = []
    for match in _URL.finditer(body, layout.body_start):
        url = match.group().rstrip(".,;:!?'\"")
        start, end = match.start(), match.start() + len(url)
        url_spans.append((start, end))
        if not _searchable(layout, start):
            continue
        ref = _permalink_ref(url, layout, page, start, options)
        if ref is not None:
            refs.append(ref)
    if url_spans:
        pieces = []
        cursor = 0
        for start, end in url_spans:
            pieces.append(body[cursor:start])
            pieces.append(" " * (end - start))
            cursor = end
        pieces.append(body[cursor:])
        body = "".join(pieces)

    line_starts = layout.line_starts
    fences = bool(layout.fences)
    for separator in _SEPARATOR.finditer(body, layout.body_start):
        position = separator.start()
        window = body[max(layout.body_start, position - _LOOKBACK) : position]
        backwards = _PATH_BACKWARDS.match(window[::-1])
        if backwards is None:
            continue
        path = backwards.group()[::-1]
        begin = position - len(path)
        if begin > 0 and body[begin - 1] in _TOKEN_BEFORE:
            continue
        form = _path_form(path)
        if form is None:
            continue
        match = _RANGE_AT.match(body, position)
        if match is None:
            continue
        # One line lookup serves the position, the comment check and the symbol search.
        line_index = bisect.bisect_right(line_starts, begin) - 1
        line_start = line_starts[line_index]
        fence = layout.fence_at(begin) if fences else None
        if fence is not None and not _searchable_in(layout, fence, begin, line_start):
            continue
        start_text = match.group("start") or match.group("hstart")
        end_text = match.group("end")
        start = _line_number(start_text)
        end = _line_number(end_text) if end_text else start
        finish = match.end()
        refs.append(
            CodeRef(
                page,
                line_index + 1,
                begin - line_start + 1,
                body[begin:finish],
                form,
                path,
                start,
                end,
                _symbol_near(layout, begin, finish, line_start),
                in_code_block=fence is not None,
            )
        )

    if options.route_prefixes:
        refs.extend(_whole_file_refs(layout, page, options.route_prefixes, refs))
    refs.sort(key=lambda ref: (ref.line, ref.column))
    return refs


def _line_number(digits: str) -> int:
    # int() refuses very long digit strings; such a line is absurd anyway.
    return int(digits) if len(digits) <= 30 else _LARGEST_LINE


def _form_of(path: str) -> RefForm:
    if path.startswith(("/", "~")):
        return RefForm.ABSOLUTE
    if "/" not in path:
        return RefForm.BARE
    return RefForm.PATH


def _looks_like_file(path: str) -> bool:
    """Tell a file path from things like ``host``, ``10``, ``v1.2`` or ``example.com``."""
    basename = path.rsplit("/", 1)[-1]
    if not basename or basename in (".", ".."):
        return False
    if basename in KNOWN_NAMES:
        return True
    extension = _EXTENSION.search(basename)
    if "/" not in path:
        return bool(extension) and extension.group(1).lower() in KNOWN_EXTENSIONS
    if extension and not basename.startswith("."):
        return not _NUMERIC.fullmatch(basename[: extension.start()] or "0")
    # A directory path without an extension is a file reference only when written explicitly
    # as a path: /abs, ./rel, ../rel, ~/home.
    return path.startswith(("/", "./", "../", "~/"))


@functools.lru_cache(maxsize=65536)
def _path_form(path: str) -> RefForm | None:
    """How a path was written, or None if it is not a file path at all (cached: paths repeat)."""
    if not _PATH_SHAPE.fullmatch(path) or not _looks_like_file(path):
        return None
    return _form_of(path)


def _searchable(layout: MarkdownLayout, offset: int) -> bool:
    """Whether a reference at ``offset`` counts: outside code blocks, or in a comment in one."""
    fence = layout.fence_at(offset)
    return fence is None or _searchable_in(layout, fence, offset)


def _searchable_in(
    layout: MarkdownLayout, fence: Fence, offset: int, line_start: int | None = None
) -> bool:
    if fence.language == "mermaid":
        return True
    if line_start is None:
        line_start, _ = layout.line_bounds(offset)
    if line_start <= fence.start:
        return False  # the opening fence line itself
    before = layout.text[line_start:offset]
    stripped = before.lstrip()
    return stripped.startswith("*") or any(marker in before for marker in _COMMENT_MARKERS)


def _permalink_ref(
    url: str, layout: MarkdownLayout, page: str, offset: int, options: ExtractOptions
) -> CodeRef | None:
    match = _PERMALINK.match(url)
    if match is None:
        return None
    host = match.group("host")
    if host.split("://", 1)[1].lower() not in options.permalink_hosts:
        return None
    rest = match.group("rest").rstrip("/")
    if "/" not in rest and match.group("kind") != "tree":
        return None  # a blob link must name a revision and a path
    revision, _, path = rest.partition("/")
    start_text, end_text = match.group("start"), match.group("end")
    start = _line_number(start_text) if start_text else None
    end = _line_number(end_text) if end_text else start
    line, column = layout.position(offset)
    return CodeRef(
        page=page,
        line=line,
        column=column,
        text=url,
        form=RefForm.PERMALINK,
        path=path,
        start=start,
        end=end,
        repo_slug=f"{match.group('owner')}/{match.group('repo')}".removesuffix(".git").lower(),
        url_host=host,
        revision=revision,
        is_directory=match.group("kind") == "tree",
        in_code_block=layout.fence_at(offset) is not None,
        # The revision may itself contain slashes (a branch such as feature/x); the resolver
        # re-splits ``revision/path`` against the clone's branches.
        symbol=_symbol_near(layout, offset, offset + len(url)),
    )


def _whole_file_refs(
    layout: MarkdownLayout, page: str, prefixes: tuple[str, ...], found: Iterable[CodeRef]
) -> list[CodeRef]:
    """Code spans that hold nothing but a routed repository path: a reference to a whole file."""
    taken = {(ref.line, ref.column) for ref in found}
    refs = []
    for span in layout.code_spans:
        code = span.code.strip()
        if not code.startswith(prefixes) or not _looks_like_file(code):
            continue
        if not _PATH_SHAPE.fullmatch(code.rstrip("/")):
            continue
        ticks = (span.end - span.start - len(span.code)) // 2
        offset = span.start + ticks + span.code.index(code)
        line, column = layout.position(offset)
        if (line, column) in taken:
            continue
        refs.append(
            CodeRef(
                page=page,
                line=line,
                column=column,
                text=code,
                form=RefForm.PATH,
                path=code.rstrip("/"),
                is_directory=code.endswith("/"),
            )
        )
    return refs


def _symbol_near(
    layout: MarkdownLayout, start: int, end: int, line_start: int | None = None
) -> str | None:
    """The symbol a code span names right before the reference, or right after it in brackets.

    `` `sleep()` 实现（actor.py:276-288）`` names ``sleep``; so does a table row
    ``| `sleep()` | `actor.py:276` |`` and ``actor.py:276 (`sleep`)``.
    """
    if line_start is None:
        line_start, line_end = layout.line_bounds(start)
    else:
        newline = layout.text.find("\n", end)
        line_end = len(layout.text) if newline == -1 else newline
    if "`" not in layout.text[line_start:line_end]:
        return None  # no code span on the line, so no symbol
    own = layout.code_span_at(start)
    if own is not None and own.code.strip() != layout.text[start:end]:
        own_symbol = _symbol_in(own.code.replace(layout.text[start:end], " "))
        if own_symbol:
            return own_symbol
    before_edge = own.start if own is not None else start
    after_edge = own.end if own is not None else end
    previous, following = layout.code_spans_around(before_edge, after_edge, line_start, line_end)
    if previous is not None:
        gap = layout.text[previous.end : before_edge]
        # Across a table cell boundary, only a cell holding nothing but the code span names a
        # symbol: `| `f()` | `x.py:3` |` does, `| `f()` drops a byte | x.py:3 |` does not.
        if "|" in gap and (gap.strip() != "|" or _cell_text_before(layout, previous).strip()):
            gap = "."
        if len(gap) <= _MAX_SYMBOL_GAP and not _GAP_STOPPERS.intersection(gap):
            symbol = _symbol_in(previous.code)
            if symbol:
                return symbol
    if following is not None:
        gap = layout.text[after_edge : following.start].strip()
        if gap in ("(", "（", "- (", ": ", ":"):
            return _symbol_in(following.code)
    return None


def _cell_text_before(layout: MarkdownLayout, span: CodeSpan) -> str:
    """Text between the cell's opening '|' and the code span."""
    line_start, _ = layout.line_bounds(span.start)
    before = layout.text[line_start : span.start]
    return before.rsplit("|", 1)[-1] if "|" in before else before


@functools.lru_cache(maxsize=65536)
def _symbol_in(code: str) -> str | None:
    code = code.strip()
    for prefix in ("def ", "class ", "async def "):
        code = code.removeprefix(prefix)
    match = _SYMBOL.match(code)
    if match is None:
        return None
    name = match.group("name")
    last = name.replace("::", ".").rsplit(".", 1)[-1]
    if last in _NOT_SYMBOLS or last.lower() in KNOWN_EXTENSIONS or len(name) == 1:
        return None  # `actor.py` is a file name and `O(log P)` a complexity, not symbols
    return name

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
    `/home/alice/slime/slime/backends/x.py`             one as an absolute local path, when a
                                                        part of it starts with such a prefix
                                                        (for ingest only: `ExtractOptions`)

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
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from generator.model import CodeRef, RefForm
from generator.patterns import lazy_pattern
from generator.refs.extract.markdown import Fence, MarkdownLayout

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
# A reference is found from its line range outwards: the `:12` / `：12` / `#L12` part is rare in
# prose, so scanning for it and then walking back over the path is much cheaper than trying a
# path match at every character. The range is ``[:：]L?12`` or ``#L12``.
_RANGE_AT_SOURCE = r"""
    [:：\#](?:(?<=\#)L(?P<hstart>\d+)|(?<!\#)L?(?P<start>\d+))(?:C\d+)?
    (?:[-–—~～〜]L?(?P<end>\d+)(?:C\d+)?)?
    (?![A-Za-z0-9]|_+[A-Za-z0-9]|\.\d|[:：]\d|[-–—~～〜]\d)  # end of the token; not 10:5
    # (`_a.py:12_` is emphasis: an underscore may end it, not one that goes on to a word)
    """
_RANGE_AT = lazy_pattern(_RANGE_AT_SOURCE, re.VERBOSE)
# The regular expression engine finds a pattern's first character, when it is one, with a string
# search; a set of first characters it tries at every character, four times slower. Text with no
# full-width colon and no `#L` (most pages, once their URLs are blanked) is scanned with the same
# pattern led by `:` alone (`_led_by_colon`).
_RANGE_AT_COLON = lazy_pattern(_RANGE_AT_SOURCE.replace("[:：\\#]", ":", 1), re.VERBOSE)
_PATH_BACKWARDS = lazy_pattern(rf"[{_PATH_CHARS}/~]+")
_PATH_SHAPE = lazy_pattern(rf"(?:~?/)?(?:[{_PATH_CHARS}]+/)*[{_PATH_CHARS}]+")
# Path characters are ASCII, so that prose running into a path (`在slime/x.py:10中`) stays out of
# it. The directories of an absolute local path may still be named in any script
# (`/Users/张三/src/slime/x.py`): its file is in a clone, whose own part of the path is ASCII.
_LOCAL_PATH_SHAPE = lazy_pattern(rf"~?/(?:[\w.+\-]+/)+[{_PATH_CHARS}]+")
_LOCAL_RUN_BACKWARDS = lazy_pattern(r"[\w.+\-~/]+")
_TOKEN_BEFORE = frozenset("@\\$%")
_LOOKBACK = 1024
_URL = lazy_pattern(r"""(?:https?://|www\.)[^\s<>"'`)\]）】，。]+""")
_HTTP_URL = lazy_pattern(r"""https?://[^\s<>"'`)\]）】，。]+""")
"""`_URL` for text without ``www.``: led by one string, found faster."""
_PERMALINK = lazy_pattern(
    r"""
    ^(?P<host>https?://[^/\s]+)/(?P<owner>[^/\s]+)/(?P<repo>[^/\s]+)
    /(?P<kind>blob|tree|blame)/(?P<rest>[^\s#?]+)
    (?:\?[^\s#]*)?
    (?:\#L(?P<start>\d+)(?:C\d+)?(?:-L(?P<end>\d+)(?:C\d+)?)?)?
    """,
    re.VERBOSE,
)
_EXTENSION = lazy_pattern(r"\.([A-Za-z][A-Za-z0-9+]*)$")
_SYMBOL = lazy_pattern(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)(?:\([^()]*\))?$"
)
_NUMERIC = lazy_pattern(r"[\d.]+")
_COMMENT_MARKERS = ("#", "//", "--", "%%", "/*")
_MAX_SYMBOL_GAP = 12
_GAP_STOPPERS = frozenset(".。;；!?！？")
# Longer gaps that still say where the symbol is: "`f()` is defined in x.py:3", "the `A.f`
# method lives in x.py:3".
_SAYS_WHERE = lazy_pattern(
    r"[ \t]*(?:(?:the|its|method|function|class|is|are|was|defined|implemented|declared|"
    r"lives|located|found|written|in|at|see)[ \t]+)+",
    re.IGNORECASE,
)
# A short gap in Chinese is a sentence of its own unless its words say where the symbol is
# ("`f()` 实现（x.py:3）", "`f` 定义在 x.py:3"): "`f()` 不变（x.py:3）" says something of
# `f` beside lines that need not hold it.
_SAYS_WHERE_ZH = lazy_pattern(
    r"(?:[\s()（）:：\-—–,，]|的|实现|定义|声明|位于|在|见|于|代码|源码|函数|方法|类|出自|来自|"
    r"参见|详见|如下|入口|分别|都|均|各)*"
)
_NOT_SYMBOLS = frozenset(keyword.kwlist) | {"self", "cls"}
_INSTANCE_NAMES = frozenset({"self", "cls", "this"})
_LARGEST_LINE = 10**30
_LONGEST_NUMBER = 30  # int() refuses very long digit strings; such a line is absurd anyway


@dataclass(frozen=True)
class ExtractOptions:
    """What the extractor needs to know about the configured upstreams."""

    permalink_hosts: frozenset[str] = frozenset({"github.com"})
    """Hosts whose ``/OWNER/REPO/blob/...`` URLs are permalinks to code."""
    route_prefixes: tuple[str, ...] = ()
    """Prefixes (``slime/``) that make a bare path in a code span a whole-file reference."""
    absolute_whole_files: bool = False
    """Whether an absolute local path in a code span, cited whole, is a reference too when a
    part of it starts with a prefix (for ingest, to write it from the repository root). Left
    off elsewhere: `/root/slime/ckpt/model.pt` names a folder called after the project far more
    often than a clone, and the resolver keeps only those that name a file (`_resolve_absolute`)."""


RefRecord = tuple[
    int,
    int,
    str,
    RefForm,
    str,
    int | None,
    int | None,
    str | None,
    str | None,
    str | None,
    str | None,
    bool,
    bool,
    str,
]
"""A reference as the verifier carries it: a `CodeRef`'s fields after ``page``, in their order
(``CodeRef(page, *record)`` builds the reference). Plain tuples cost a fraction of objects to
build, and pass between processes cheaply."""


def extract_refs(
    layout: MarkdownLayout, page: str, options: ExtractOptions | None = None
) -> list[CodeRef]:
    """Every code reference in the page body, in document order."""
    return [CodeRef(page, *record) for record in ref_records(layout, options)]


def ref_records(layout: MarkdownLayout, options: ExtractOptions | None = None) -> list[RefRecord]:
    """What `extract_refs` finds, as records (see `RefRecord`)."""
    options = options or ExtractOptions()
    text = layout.text
    body_start = layout.body_start
    records: list[RefRecord] = []
    body = text  # searches start at body_start, so the frontmatter is never looked at

    # URLs first: permalinks become refs; every URL is masked so its parts are not refs again.
    if "://" in text or "www." in text:
        url_spans: list[tuple[int, int]] = []
        for match in (_URL if "www." in text else _HTTP_URL).finditer(text, body_start):
            url = match.group().rstrip(".,;:!?'\"")
            start = match.start()
            end = start + len(url)
            url_spans.append((start, end))
            if not _searchable(layout, start):
                continue
            record = _permalink_record(url, layout, start, options)
            if record is not None:
                records.append(record)
        if url_spans:
            pieces = []
            cursor = 0
            for start, end in url_spans:
                pieces.append(text[cursor:start])
                pieces.append(" " * (end - start))
                cursor = end
            pieces.append(text[cursor:])
            body = "".join(pieces)

    # (A search for one character is ten times as fast as for two: the rare one goes first.)
    if "\\" in body and ":\\" in body:
        body = _WINDOWS_PATH.sub(_with_slashes, body)
    line_starts = layout.line_starts
    fences = bool(layout.fences)
    reversed_body = ""
    length = len(body)
    path_form = _path_form
    path_backwards = _PATH_BACKWARDS.match
    range_at = _RANGE_AT if "：" in body or "#L" in body else _RANGE_AT_COLON
    for match in range_at.finditer(body, body_start):
        position = match.start()
        if not reversed_body:
            reversed_body = body[::-1]
        # The path is the run of path characters just before the range, read backwards (in the
        # reversed text, so that nothing is copied per candidate).
        lowest = position - _LOOKBACK
        backwards = path_backwards(
            reversed_body,
            length - position,
            length - (lowest if lowest > body_start else body_start),
        )
        if backwards is None:
            continue
        begin = position - (backwards.end() - backwards.start())
        local_start = _local_root_start(body, reversed_body, begin, max(lowest, body_start))
        if local_start is None:
            continue
        begin = local_start
        if begin > 0 and body[begin - 1] in _TOKEN_BEFORE:
            continue
        begin += _emphasis_before(body, begin, match.end())
        path = body[begin:position]
        form = path_form(path)
        if form is None:
            continue
        # One line lookup serves the position, the comment check and the symbol search.
        line_index = bisect.bisect_right(line_starts, begin) - 1
        line_start = line_starts[line_index]
        fence = layout.fence_at(begin) if fences else None
        if fence is not None and not _searchable_in(layout, fence, begin, line_start):
            continue
        hash_start, start_text, end_text = match.groups()
        digits = start_text or hash_start
        start = int(digits) if len(digits) <= _LONGEST_NUMBER else _LARGEST_LINE
        if end_text is None:
            end = start
        else:
            end = int(end_text) if len(end_text) <= _LONGEST_NUMBER else _LARGEST_LINE
        finish = match.end()
        symbol = None
        if fence is None:  # code blocks hold no code spans, so they name no symbols
            newline = text.find("\n", finish)
            line_end = len(text) if newline == -1 else newline
            if text.find("`", line_start, line_end) != -1:
                symbol = _symbol_on_line(layout, begin, finish, line_start, line_end)
        elif fence.language == "mermaid" or (not fence.language and _is_diagram(layout, fence)):
            symbol = _diagram_symbol(text, line_start, begin)
        records.append(
            (
                line_index + 1,
                begin - line_start + 1,
                text[begin:finish],  # (as written: a Windows path keeps its backslashes)
                form,
                path,
                start,
                end,
                symbol,
                None,
                None,
                None,
                False,
                fence is not None,
                "inline",
            )
        )
        if finish < length and body[finish] in _LIST_SEPARATORS:
            records.extend(
                _listed(body, finish, line_index + 1, line_start, path, fence is not None)
            )

    if options.route_prefixes:
        records.extend(
            _whole_file_records(
                layout, options.route_prefixes, records, options.absolute_whole_files
            )
        )
    if len(records) > 1 and layout.code_span_starts:
        records = _paired_with_names(layout, records)
    split, consumed = _split_records(layout, body, records)
    if consumed:  # a path cell or phrase's path: part of a reference with lines, not one itself
        records = [
            record
            for record in records
            if record[5] is not None or (record[0], record[1]) not in consumed
        ]
    records.extend(split)
    if QUOTED_START in text:
        quoted = quoted_lines(text[body_start:], layout.position(body_start)[0])
        records = [record for record in records if record[0] not in quoted]
    records.sort(key=_position)
    if len(records) > 1 and "](" in text:
        records = _labels_of_permalinks(layout, records)
    return records


def _labels_of_permalinks(layout: MarkdownLayout, records: list[RefRecord]) -> list[RefRecord]:
    """A path or bare name written as the text of a link to a permalink into its own file
    (``[x.py:24-31](https://github.com/o/r/blob/SHA/pkg/x.py#L24-L31)``) cites what the link
    does: it takes the permalink's repository, host and revision, so that it is checked at the
    link's commit rather than the page's pin, and a sync moves it only with the link."""
    text, starts = layout.text, layout.line_starts
    # By line, (first, end) of each link's text and its link: a link's text is on its line.
    labels: dict[int, list[tuple[int, int, RefRecord]]] = {}
    for record in records:
        if record[3] is RefForm.PERMALINK:
            line_start = starts[record[0] - 1]
            url = line_start + record[1] - 1
            opening = text.rfind("[", line_start, url - 2)
            if opening != -1 and text.startswith("](", url - 2):
                labels.setdefault(record[0], []).append((opening + 1, url - 2, record))
    if not labels:
        return records
    paired = []
    for record in records:
        if record[0] in labels and (record[3] is RefForm.PATH or record[3] is RefForm.BARE):
            at = starts[record[0] - 1] + record[1] - 1
            for first, end, link in labels[record[0]]:
                linked = link[4]
                path = record[4].removeprefix("./")
                if first <= at < end and (linked == path or linked.endswith("/" + path)):
                    record = (*record[:8], link[8], link[9], link[10], *record[11:])
                    break
        paired.append(record)
    return paired


_WINDOWS_PATH = lazy_pattern(r"""(?<![A-Za-z0-9_])[A-Za-z]:\\[^\s`'"<>|*?:()（）\[\]]+""")
"""A Windows path from its drive (``C:\\Users\\bob\\src\\x.py``), up to the colon before its
lines."""


def _with_slashes(match: re.Match[str]) -> str:
    """A Windows path with forward slashes, as long as written: read as an absolute path
    (``C:/Users/...``), while the reference's text keeps what the page says."""
    return match.group().replace("\\", "/")


def _local_root_start(body: str, reversed_body: str | None, begin: int, lowest: int) -> int | None:
    """Where the absolute local path starts whose ASCII end is the path from ``begin`` (a
    slash, after a directory named in another script): ``/Users/张三/src/`` before
    ``/slime/x.py``, ``~/项目/``, and prose running into one whose first directory is named in
    ASCII (``在/home/用户/``). ``begin`` when the text before is no such path: an ASCII
    character, prose, or a relative path, running into the path's slash (``数据/slime/x.py``,
    ``输入/输出/slime/x.py``); None when the path goes on from a variable (``$HOME/项目/``), as a
    path in ASCII does. ``reversed_body`` is ``body`` reversed, when the caller has it."""
    if body[begin] != "/" or begin <= lowest or body[begin - 1].isascii():
        return begin  # (most paths: nothing before them to look at)
    if reversed_body is None:
        reversed_body = body[::-1]
    length = len(body)
    run = _LOCAL_RUN_BACKWARDS.match(reversed_body, length - begin, length - lowest)
    if run is None:
        return begin
    run_start = begin - (run.end() - run.start())
    if run_start > 0 and body[run_start - 1] in _TOKEN_BEFORE:
        return None
    if body.startswith(("/", "~/", "~~/"), run_start):  # (`~~` opens strikethrough)
        start = run_start
    else:
        glued = _GLUED_ROOT.search(body, run_start, begin)
        if glued is None:
            return begin
        start = glued.start() + 1
    return begin if body[start:begin].isascii() else start


_GLUED_ROOT = lazy_pattern(rf"[^\x00-\x7f]/[{_PATH_CHARS}]+/")
"""Prose in another script running into an absolute path's first directory (``在/home/``)."""


def _emphasis_before(body: str, begin: int, end: int) -> int:
    """How many characters at ``begin`` open emphasis around the reference ending at ``end``
    rather than belong to its path: ``~~`` (strikethrough, which no path starts with), or as
    many ``_`` as close it after its lines (``_a.py:12_``, ``__a.py:12__``)."""
    if body.startswith("~~", begin):
        return 2
    closing = 0
    while body.startswith("_", end + closing):
        closing += 1
    opening = 0
    while opening < closing and body.startswith("_", begin + opening):
        opening += 1
    return opening if opening == closing else 0


QUOTED_START, QUOTED_END = "[kb:quoted]: #", "[kb:quoted-end]: #"
"""Lines between these markers quote someone else's text (a PR's description, its review
comments): the generators wrap them so, because such text cites code as it was when written
(paths the PR deletes, lines at the base), which is not this page's claim. References there are
not extracted, hence neither checked nor linked. A marker counts on a line of its own; it is a
Markdown link reference definition, so it renders as nothing and is not HTML (quoted text itself
is a ``>`` blockquote, so it cannot end the region early)."""


def quoted_lines(body: str, first_line: int = 1) -> set[int]:
    """Page lines inside quoted regions (markers included); an unclosed region runs to the end."""
    lines: set[int] = set()
    start: int | None = None
    number = first_line - 1
    for number, line in enumerate(body.split("\n"), first_line):
        marker = line.strip()
        if marker == QUOTED_START and start is None:
            start = number
        elif marker == QUOTED_END and start is not None:
            lines.update(range(start, number + 1))
            start = None
    if start is not None:
        lines.update(range(start, number + 1))
    return lines


def _position(record: RefRecord) -> tuple[int, int]:
    return record[0], record[1]


def _line_number(digits: str) -> int:
    return int(digits) if len(digits) <= _LONGEST_NUMBER else _LARGEST_LINE


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
    if not (
        _PATH_SHAPE.fullmatch(path) or (not path.isascii() and _LOCAL_PATH_SHAPE.fullmatch(path))
    ) or not _looks_like_file(path):
        return None
    return _form_of(path)


def _searchable(layout: MarkdownLayout, offset: int) -> bool:
    """Whether a reference at ``offset`` counts: outside code blocks, or in a comment in one."""
    fence = layout.fence_at(offset)
    return fence is None or _searchable_in(layout, fence, offset)


def _searchable_in(
    layout: MarkdownLayout, fence: Fence, offset: int, line_start: int | None = None
) -> bool:
    if fence.language == "mermaid" or (not fence.language and _is_diagram(layout, fence)):
        return True
    if line_start is None:
        line_start, _ = layout.line_bounds(offset)
    if line_start <= fence.start:
        return False  # the opening fence line itself
    return offset >= _comment_from(layout, line_start)


def _comment_from(layout: MarkdownLayout, line_start: int) -> int:
    """The offset from which a reference on the line at ``line_start`` is in a comment: just
    after the first comment marker, or after a leading ``*`` (a block comment's line); past the
    end of the text when the line has neither. Found once per line."""
    key = ("comment", line_start)
    found = layout.memo.get(key)
    if found is None:
        text = layout.text
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end == -1 else line_end
        found = len(text) + 1
        first = len(text[line_start:line_end]) - len(text[line_start:line_end].lstrip())
        if text.startswith("*", line_start + first):
            found = line_start + first + 1
        for marker in _COMMENT_MARKERS:
            position = text.find(marker, line_start, line_end)
            if position != -1:
                found = min(found, position + len(marker))
        layout.memo[key] = found
    return found


def _permalink_record(
    url: str, layout: MarkdownLayout, offset: int, options: ExtractOptions
) -> RefRecord | None:
    match = _PERMALINK.match(url)
    if match is None:
        return None
    host = match.group("host")
    if host.split("://", 1)[1].lower() not in options.permalink_hosts:
        return None
    rest = match.group("rest").rstrip("/")
    if "/" not in rest and match.group("kind") != "tree":
        return None  # a blob link must name a revision and a path
    # The revision may itself contain slashes (a branch such as feature/x); the resolver
    # re-splits ``revision/path`` against the clone's branches.
    revision, _, path = rest.partition("/")
    start_text, end_text = match.group("start"), match.group("end")
    start = _line_number(start_text) if start_text else None
    end = _line_number(end_text) if end_text else start
    line, column = layout.position(offset)
    in_code_block = layout.fence_at(offset) is not None
    return (
        line,
        column,
        url,
        RefForm.PERMALINK,
        path,
        start,
        end,
        _symbol_near(layout, offset, offset + len(url), in_code_block),
        f"{match.group('owner')}/{match.group('repo')}".removesuffix(".git").lower(),
        host,
        revision,
        match.group("kind") == "tree",
        in_code_block,
        "inline",
    )


def _whole_file_records(
    layout: MarkdownLayout,
    prefixes: tuple[str, ...],
    found: Iterable[RefRecord],
    absolute: bool = False,
) -> list[RefRecord]:
    """Code spans that hold nothing but a routed repository path: a reference to a whole file.
    With ``absolute``, an absolute local path (``/home/bob/src/slime/slime/x.py``) is one too
    when a part of it from a directory on starts with a prefix: maybe a file of a clone."""
    taken = {(record[0], record[1]) for record in found}
    records: list[RefRecord] = []
    for match in layout.code_span_matches:
        written = match[2]
        code = written.strip()
        drive = 2 if absolute and _WINDOWS_DRIVE.match(code) else 0  # C:/...: the text before
        code = code[drive:]
        # The cheapest test first: most code spans hold something other than a bare path.
        if not _PATH_SHAPE.fullmatch(code.rstrip("/")) and (
            code.isascii() or not _LOCAL_PATH_SHAPE.fullmatch(code.rstrip("/"))
        ):
            continue
        form = _form_of(code)
        if form is RefForm.ABSOLUTE:
            if not absolute or code.endswith("/") or not _ends_under(code, prefixes):
                continue
        elif not code.startswith(prefixes):
            continue
        if not _looks_like_file(code):
            continue
        span_start, span_end = match.span()
        ticks = (span_end - span_start - len(written)) // 2
        offset = span_start + ticks + written.index(code, drive)
        line, column = layout.position(offset)
        if (line, column) in taken:
            continue
        records.append(
            (
                line,
                column,
                code,
                form if form is RefForm.ABSOLUTE else RefForm.PATH,
                code.rstrip("/"),
                None,
                None,
                None,
                None,
                None,
                None,
                code.endswith("/"),
                False,
                "inline",
            )
        )
    return records


_WINDOWS_DRIVE = lazy_pattern(r"[A-Za-z]:/")


def _ends_under(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the absolute ``path``, from one of its directories on, starts with a prefix. The
    clone's own directory comes first, so a prefix right at the root (``/tools/run.sh``, a
    route of a server more likely than a clone at ``/``) does not count."""
    at = path.find("/", path.find("/") + 1)
    while at != -1:
        if path.startswith(prefixes, at + 1):
            return True
        at = path.find("/", at + 1)
    return False


def _symbol_near(layout: MarkdownLayout, start: int, end: int, in_code_block: bool) -> str | None:
    """The symbol a code span names right before the reference, or right after it in brackets.

    `` `sleep()` 实现（actor.py:276-288）`` names ``sleep``; so does a table row
    ``| `sleep()` | `actor.py:276` |`` and ``actor.py:276 (`sleep`)``. Code blocks hold no code
    spans, so a reference in one names no symbol.
    """
    if in_code_block:
        return None
    line_start, line_end = layout.line_bounds(start)
    if layout.text.find("`", line_start, line_end) == -1:
        return None  # no code span on the line, so no symbol
    return _symbol_on_line(layout, start, end, line_start, line_end)


def _symbol_on_line(
    layout: MarkdownLayout, start: int, end: int, line_start: int, line_end: int
) -> str | None:
    """`_symbol_near` for a reference outside code blocks, on a line that has a backtick."""
    # Code spans never cross a line: only the spans of this line can name the symbol (the one
    # holding the reference, the nearest before it and the nearest after it). They are read
    # from the layout's matches by index, without building a tuple per span.
    starts = layout.code_span_starts
    low = bisect.bisect_left(starts, line_start)
    high = bisect.bisect_right(starts, line_end, low)
    if low == high:
        return None
    text = layout.text
    spans = layout.code_span_matches
    holding = bisect.bisect_right(starts, start, low, high) - 1
    own = spans[holding] if holding >= low and start < spans[holding].end() else None
    if own is not None:
        written = text[start:end]
        code = own[2]
        if code.strip() != written:
            own_symbol = _symbol_in(code.replace(written, " "))
            if own_symbol:
                return own_symbol
        before_edge, after_edge = own.span()
    else:
        before_edge, after_edge = start, end
    before = bisect.bisect_left(starts, before_edge, low, high) - 1
    if before >= low:
        previous = spans[before]
        previous_end = previous.end()
        if previous_end <= before_edge:
            gap = text[previous_end:before_edge]
            # Across a table cell boundary, only a cell holding nothing but the code span
            # names a symbol: `| `f()` | `x.py:3` |` does, `| `f()` drops a byte | x.py:3 |`
            # does not.
            if "|" in gap and (
                gap.strip() != "|" or _cell_text_before(layout, previous.start()).strip()
            ):
                gap = "."
            if (
                (len(gap) <= _MAX_SYMBOL_GAP or _SAYS_WHERE.fullmatch(gap) is not None)
                and not _GAP_STOPPERS.intersection(gap)
                and (gap.isascii() or _SAYS_WHERE_ZH.fullmatch(gap) is not None)
            ):
                symbol = _symbol_in(previous[2])
                if symbol:
                    return symbol
    after = bisect.bisect_left(starts, after_edge, low, high)
    if after < high:
        following = spans[after]
        if following.end() <= line_end + 1:
            gap = text[after_edge : following.start()].strip()
            if gap in ("(", "（", "- (", ": ", ":"):
                return _symbol_in(following[2])
    return None


_DIAGRAM_NAME = lazy_pattern(
    r"(?<![\w.])(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?P<call>\(\))?"
    r"[ \t]*[(（]?[ \t]*$"
)


def _diagram_symbol(text: str, line_start: int, begin: int) -> str | None:
    """The name a diagram's label gives right before a reference, written as code (with an
    underscore, a dot or a call: ``train_step (base.py:46-50)``, ``Attention.forward
    attention.py:53-62``): labels have no code spans to say so."""
    match = _DIAGRAM_NAME.search(text, max(line_start, begin - 80), begin)
    if match is None or (not match["call"] and text.startswith("(", match.end("name"))):
        return None  # `load_ckpt(x.py:6-9)`: a node's id, its label in brackets
    name = match["name"]
    if "_" not in name and "." not in name and not match["call"]:
        return None  # a word of the label (`Loop (x.py:3)`), not necessarily code
    return _symbol_in(name + (match["call"] or ""))


_REFS_JOINED = lazy_pattern(r"[`\s*_]*(?:[,，、]|and|和|与|及|, and)[`\s*_]*")
"""What joins references listed one after another (`` `x.py:3`, and `y.py:7` ``)."""


def _paired_with_names(layout: MarkdownLayout, records: list[RefRecord]) -> list[RefRecord]:
    """``records`` with the names listed before references listed one after another paired
    with them in order (`` `A.f` and `B.f` are at x.py:22-28, x.py:42-45``, or at
    ``x.py:22-28, 42-45``); with another count of names than of references, none is taken:
    the last name was the first one's."""
    text, paired = layout.text, list(records)
    index = 0
    while index < len(paired):
        record = paired[index]
        index += 1
        if (
            record[7] is None
            or record[13] != "inline"
            or index == len(paired)
            or paired[index][0] != record[0]
        ):
            continue  # (most: no reference follows on the line)
        line_start = layout.line_starts[record[0] - 1]
        begin = line_start + record[1] - 1
        group, end = [index - 1], begin + len(record[2])
        while index < len(paired) and paired[index][0] == record[0]:
            following = line_start + paired[index][1] - 1
            if paired[index][13] not in ("inline", "list") or not _REFS_JOINED.fullmatch(
                text, end, following
            ):
                break
            group.append(index)
            end = following + len(paired[index][2])
            index += 1
        if len(group) == 1:
            continue
        starts = layout.code_span_starts
        holding = bisect.bisect_right(starts, begin) - 1  # (the reference's own code span)
        if holding >= 0 and begin < layout.code_span_matches[holding].end():
            begin = starts[holding]
        names = _names_listed_before(layout, begin, line_start)
        if len(names) < 2:
            continue
        symbols = names if len(names) == len(group) else [None] * len(group)
        for at, symbol in zip(group, symbols, strict=True):
            paired[at] = _with_symbol(paired[at], symbol)
    return paired


def _with_symbol(record: RefRecord, symbol: str | None) -> RefRecord:
    return (*record[:7], symbol, *record[8:])  # type: ignore[return-value]


_NAMES_JOINED = lazy_pattern(r"[ \t]*(?:[,，、&]|and|or|和|与|及)[ \t]*|[ \t]*,[ \t]*and[ \t]+")


def _names_listed_before(layout: MarkdownLayout, begin: int, line_start: int) -> list[str]:
    """The symbols of the code spans listed before the reference at ``begin`` (`` `A.f`,
    `B.f` and `C.f` are at ``), in order: the span nearest before it and those joined to it by
    commas and conjunctions."""
    starts, spans, text = layout.code_span_starts, layout.code_span_matches, layout.text
    low = bisect.bisect_left(starts, line_start)
    index = bisect.bisect_left(starts, begin, low) - 1
    names: list[str] = []
    while index >= low:
        symbol = _symbol_in(spans[index][2])
        if symbol is None:
            break
        names.append(symbol)
        if index == low or not _NAMES_JOINED.fullmatch(
            text, spans[index - 1].end(), spans[index].start()
        ):
            break
        index -= 1
    return names[::-1]


def _cell_text_before(layout: MarkdownLayout, span_start: int) -> str:
    """Text between the cell's opening '|' and the code span starting at ``span_start``."""
    line_start, _ = layout.line_bounds(span_start)
    before = layout.text[line_start:span_start]
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
    parts = name.replace("::", ".").split(".")
    if parts[-1] in _NOT_SYMBOLS or parts[-1].lower() in KNOWN_EXTENSIONS or len(name) == 1:
        return None  # `actor.py` is a file name and `O(log P)` a complexity, not symbols
    if parts[0] in _INSTANCE_NAMES and not code.endswith(")"):
        # `self.config`: an attribute of some object, not a name the file defines (a call,
        # `self.sleep()`, names a method, which the file may define)
        return None
    return name


# -- references written apart from their path, or without lines -------------------------------

_LIST_SEPARATORS = frozenset(",，、")
_LISTED = lazy_pattern(
    r"""[ \t]*[,，、][ \t]*(?:L|\#L)?(?P<start>\d{1,9})
    (?:[ \t]*[-–—~～〜][ \t]*L?(?P<end>\d{1,9}))?""",
    re.VERBOSE,
)
# What may follow the last number of a list of lines: not a word, a time or a version.
_LIST_END = lazy_pattern(
    r"""[ \t]*(?:$|[)）\]】`,，;；。、(（]|\.(?!\d)|(?<=[ \t])(?:[^\x00-\x7f]|(?:and|or|&)\b))""",
    re.MULTILINE,
)


def _listed(
    body: str,
    position: int,
    line: int,
    line_start: int,
    path: str,
    in_code_block: bool,
) -> list[RefRecord]:
    """The other lines of ``x.py:360, 574`` (or ``x.py:10-20、30-40``): a reference each, its
    text the lines as written, its path the first one's."""
    found: list[tuple[int, int, int, int]] = []
    compact = True
    while (match := _LISTED.match(body, position)) is not None:
        start = int(match["start"])
        end = int(match["end"]) if match["end"] else start
        found.append((match.start("start"), match.end(), start, end))
        compact = compact and not any(c in " \t" for c in body[position : match.start("start")])
        position = match.end()
    # A list written without spaces and ending in a range (`x.py:7-10,50-60 then`) is lines
    # whatever words follow; otherwise the list must end where no word goes on (`x.py:10, 20
    # files` counts files, `x.py:12, 2020-2024 data` years).
    ranged = bool(found) and found[-1][2] != found[-1][3]
    if not found or (_LIST_END.match(body, position) is None and not (ranged and compact)):
        return []
    if body[position : position + 1].isdigit():
        return []
    records: list[RefRecord] = []
    for begin, finish, start, end in found:
        if body[begin - 1 : begin] == "L":
            begin -= 1
        column = begin - line_start + 1
        records.append(
            _apart(line, column, body[begin:finish], path, start, end, None, "list", in_code_block)
        )
    return records


def _apart(
    line: int,
    column: int,
    text: str,
    path: str,
    start: int,
    end: int,
    symbol: str | None,
    style: str,
    in_code_block: bool = False,
) -> RefRecord:
    """The record of a reference whose lines (``text``) are written apart from its path."""
    form = _path_form(path) or RefForm.PATH
    return (line, column, text, form, path, start, end, symbol, None, None, None, False,
            in_code_block, style)  # fmt: skip


_DIAGRAM_CHARACTERS = lazy_pattern(r"[\u2500-\u257f\u2190-\u21ff\u25b2\u25ba\u25bc\u25c4]")


@functools.lru_cache(maxsize=1024)
def _diagram_text(block: str) -> bool:
    return _DIAGRAM_CHARACTERS.search(block) is not None


def _is_diagram(layout: MarkdownLayout, fence: Fence) -> bool:
    """A plain fence drawn with box-drawing characters or arrows: a call tree, searched whole."""
    key = ("diagram", fence.start)
    found = layout.memo.get(key)
    if found is None:
        found = layout.memo[key] = _diagram_text(layout.text[fence.start : fence.end])
    return found


# Code files a ``path:symbol`` reference may name (data files have keys, not symbols).
CODE_EXTENSIONS = frozenset(
    {"py", "pyi", "pyx", "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "cu", "cuh", "rs"}
    | {"go", "java", "kt", "scala", "js", "mjs", "ts", "tsx", "jsx", "sh", "lua", "rb", "swift"}
    | {"m", "mm", "cs", "jl", "php", "hs", "dart", "vue", "pl", "pm", "r", "ex", "exs", "erl"}
    | {"clj", "zig", "nim", "f90", "ml", "mli", "cjs", "mts", "cts", "hip", "cl"}
)
# ``x.py:symbol()`` and ``x.py::Class.method``: found from the separator, the path read
# backwards from it (as for ranges).
_SYMBOL_AFTER_SOURCE = r"""[:：]:?
    (?P<symbol>[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)
    (?P<call>\(\))?(?![A-Za-z0-9_(/.:\-])"""
_SYMBOL_AFTER = lazy_pattern(_SYMBOL_AFTER_SOURCE, re.VERBOSE)
_SYMBOL_AFTER_COLON = lazy_pattern(_SYMBOL_AFTER_SOURCE.replace("[:：]", ":", 1), re.VERBOSE)
"""`_SYMBOL_AFTER` for text with no full-width colon (see `_RANGE_AT_COLON`)."""
_RANGE_CELL = lazy_pattern(
    r"""\|(?P<cell>[ \t]*`?\#?L?(?P<start>\d{1,9})
    (?:[ \t]*[-–—~～〜][ \t]*L?(?P<end>\d{1,9}))?`?[ \t]*)(?=\|)""",
    re.VERBOSE,
)
# This pattern and `_L_LINES` begin with the letter they need and look behind it afterwards: a
# pattern that begins with a look-behind is tried at every character of a page, ten times slower.
_PHRASE_EN = lazy_pattern(
    r"""[Ll](?:(?<![A-Za-z].)ines?(?:[*_]*[ \t]*[:：][*_]*)?|(?<=l)(?<!\w.)l\.)
    [ \t]*L?(?P<start>\d{1,9})
    (?:[ \t]*(?P<to>[-–—~～〜]|to|through|and)[ \t]*L?(?P<end>\d{1,9}))?
    (?!\d|[:.]\d|[ \t]*[-–—~～〜][ \t]*\d)""",
    re.VERBOSE,
)
# Chinese ones end at 行: matched backwards from it, in the text just before.
_PHRASE_ZH = lazy_pattern(
    r"""(?:第[ \t]*(?P<start>\d{1,9})
    (?:[ \t]*行?[ \t]*[-–—~～〜至到][ \t]*第?[ \t]*(?P<end>\d{1,9}))?
    |(?<![\d.:])(?P<rstart>\d{1,9})(?:[ \t]*[-–—~～〜][ \t]*(?P<rend>\d{1,9}))?)[ \t]*行$""",
    re.VERBOSE,
)
_LINES_LABEL_ZH = lazy_pattern(
    r"行号[*_]*[ \t]*[:：][*_]*[ \t]*(?P<start>\d{1,9})"
    r"(?:[ \t]*[-–—~～〜至到][ \t]*(?P<end>\d{1,9}))?(?![\d:.]\d)"
)
# GitHub's way of writing lines, right after the path (`_L_LINES_GAP`): "trainer.py (L36-L43)",
# "trainer.py L36-43.": a range, from line 1 on, of a code file (`_right_after_path`); one line
# alone is no citation, as L2 is a norm and L1-L3 caches are named so.
_L_LINES = lazy_pattern(
    r"""L(?<![\w.#:/\-]L)(?P<start>[1-9]\d{0,8})[ \t]*[-–—~～〜][ \t]*L?(?P<end>\d{1,9})
    (?!\w|\.\d|[ \t]*[-–—~～〜:][ \t]*L?\d)""",
    re.VERBOSE,
)
_L_LINES_GAP = lazy_pattern(r"[`*_]*(?:[ \t]*[,，:：]?[ \t]+|[ \t]*(?P<bracket>[(（])[ \t]*)")
"""All that may stand between a path and its ``L`` lines: they are no phrase to find a path
in, and a path further off is no sign that ``L36`` means lines."""
_L_LINES_END = lazy_pattern(r"[ \t]*(?:[)）]|[.,;:。，；：](?!\w)|$)", re.MULTILINE)
"""What follows ``L`` lines that cite: a bracket closing, or the end of the clause (``L1-L2
regularization`` names a norm)."""
# "lines 9-14 of `x.py`": the path after the phrase, joined to it by a preposition.
# The path after a phrase, in a code span or emphasis of its own or not ("of `x.py`", "of
# *x.py*"; a path's `*` would be a glob).
_WRAPPED_PATH = r"(?P<tick>`?|\*\*?)(?P<path>[^\s`*,;()（）{stop}]+)(?P=tick)"
_PATH_AFTER = lazy_pattern(
    r"[ \t]+(?:of|in|from)[ \t]+" + _WRAPPED_PATH.format(stop="【】，。；：、")
)
# "（第 31-37 行）在 toy/data.py 里": the path after the phrase, said to hold the lines.
_PATH_AFTER_ZH = lazy_pattern(
    r"[ \t]*行?[ \t]*[)）]?[ \t]*(?:在|位于)[ \t]*"
    + _WRAPPED_PATH.format(stop="")
    + r"[ \t]*(?:里|中|内)"
)
# "第 23 至 29 行（config.py）", "lines 9-14 (`x.py`)": the path in brackets right after;
# "（第 23 至 29 行，config.py）", "(lines 9-14, `x.py`)": after a comma, closing the brackets.
_PATH_IN_BRACKETS = lazy_pattern(
    r"[ \t]*行?[ \t]*(?:[(（][ \t]*"
    + _WRAPPED_PATH.format(stop="")
    + r"|[,，][ \t]*"
    + _WRAPPED_PATH.format(stop="").replace("(?P<", "(?P<c_").replace("(?P=tick)", "(?P=c_tick)")
    + r")[ \t]*[)）]"
)
_PHRASE_GAP = 48
"""Characters that may separate a path from the lines phrase about it (``x.py` 中 `f()` 的第``)."""
_FILE_TOKEN = lazy_pattern(
    r"(?:~?/)?(?:[A-Za-z0-9_.+\-]+/)*[A-Za-z0-9_.+\-]+\.[A-Za-z][A-Za-z0-9+]*"
)


def _split_records(
    layout: MarkdownLayout, body: str, found: list[RefRecord]
) -> tuple[list[RefRecord], set[tuple[int, int]]]:
    """References whose lines are written apart from their path (table cells, "lines"
    phrases) and ``path:symbol`` references without lines; and the positions of the paths
    the first ones took their path from."""
    text = layout.text
    start_at = layout.body_start
    records: list[RefRecord] = []
    consumed: set[tuple[int, int]] = set()
    taken = {(record[0], record[1]) for record in found}
    if "|" in text:
        records.extend(_table_records(layout, body, taken, consumed))
    if "L" in text or "行" in text or "ine" in text or "ll." in text:  # (one character first)
        records.extend(_phrase_records(layout, body, taken, consumed))
    if "`:" in text or ("：" in text and "`：" in text):
        records.extend(_after_code_span_records(layout, body, taken, consumed))
    if ":" in text or "：" in text:
        reversed_body = None
        symbol_after = _SYMBOL_AFTER if "：" in body else _SYMBOL_AFTER_COLON
        for match in symbol_after.finditer(body, start_at):
            if reversed_body is None:
                reversed_body = body[::-1]
            record = _symbol_record(layout, body, reversed_body, match, taken)
            if record is not None:
                records.append(record)
    return records, consumed


_LINES_AFTER_CODE_SPAN = lazy_pattern(
    r"""`(?P<path>[^`\s]+)`[:：](?P<start>\d{1,9})(?:[-–—~～〜](?P<end>\d{1,9}))?
    (?![A-Za-z0-9]|\.\d|[:：]\d|[-–—~～〜]\d)""",
    re.VERBOSE,
)
"""``packing.py`:98-103``: a file path in a code span, its lines after the span."""


def _after_code_span_records(
    layout: MarkdownLayout, body: str, taken: set[tuple[int, int]], consumed: set[tuple[int, int]]
) -> list[RefRecord]:
    """References whose lines follow the code span holding their path (``packing.py`:98``).
    Their text is the lines, as for a lines phrase: a link or a rewrite of the path and the
    colon together would cut through the code span."""
    records = []
    for match in _LINES_AFTER_CODE_SPAN.finditer(body, layout.body_start):
        path = match["path"]
        if not _is_file_token(path) or _path_form(path) is None:
            continue
        if layout.fence_at(match.start()) is not None:
            continue
        begin, finish = match.start("start"), match.end("end") if match["end"] else match.end()
        line, column = layout.position(begin)
        if (line, column) in taken:
            continue
        start = int(match["start"])
        end = int(match["end"]) if match["end"] else start
        consumed.add(layout.position(match.start("path")))
        # A code span right before names the symbol (`` `f` (`x.py`:3-5)``), as for a phrase.
        lowest = max(layout.line_bounds(begin)[0], match.start() - _NAME_REACH)
        named = _NAME_BEFORE_PATH.search(body, lowest, match.start())
        symbol = _symbol_in(named[1]) if named else None
        records.append(_apart(line, column, body[begin:finish], path, start, end, symbol, "phrase"))
        if finish < len(body) and body[finish] in _LIST_SEPARATORS:  # `x.py`:3, 7-9
            line_start = layout.line_starts[line - 1]
            records.extend(_listed(body, finish, line, line_start, path, False))
    return records


def _symbol_record(
    layout: MarkdownLayout,
    body: str,
    reversed_body: str,
    match: re.Match[str],
    taken: set[tuple[int, int]],
) -> RefRecord | None:
    separator = match.start()
    if body.startswith("::", separator - 1):
        return None  # the second colon of a `::` already tried
    length = len(body)
    backwards = _PATH_BACKWARDS.match(
        reversed_body, length - separator, length - max(separator - _LOOKBACK, 0)
    )
    if backwards is None:
        return None
    begin = separator - (backwards.end() - backwards.start())
    local_start = _local_root_start(
        body, reversed_body, begin, max(separator - _LOOKBACK, layout.body_start)
    )
    if local_start is None:
        return None
    begin = local_start
    path = body[begin:separator]
    extension = _EXTENSION.search(path)
    if extension is None or extension.group(1).lower() not in CODE_EXTENSIONS:
        return None
    if begin > 0 and (body[begin - 1] in _TOKEN_BEFORE or body[begin - 1] in "/.:"):
        return None
    form = _path_form(path)
    if form is None:
        return None
    fence = layout.fence_at(begin) if layout.fences else None
    if fence is not None and not _searchable(layout, begin):
        return None
    name = match["symbol"]
    last = name.replace("::", ".").rsplit(".", 1)[-1]
    if last in _NOT_SYMBOLS or last.lower() in KNOWN_EXTENSIONS or len(last) < 2:
        return None
    line, column = layout.position(begin)
    if (line, column) in taken:
        return None
    return (
        line,
        column,
        body[begin : match.end()],
        form,
        path,
        None,
        None,
        name,
        None,
        None,
        None,
        False,
        fence is not None,
        "symbol",
    )


def _table_records(
    layout: MarkdownLayout, body: str, taken: set[tuple[int, int]], consumed: set[tuple[int, int]]
) -> list[RefRecord]:
    """A table row with a path in one cell and only lines in a later one."""
    text = layout.text
    records: list[RefRecord] = []
    for match in _RANGE_CELL.finditer(body, layout.body_start):
        line_start, line_end = layout.line_bounds(match.start() + 1)
        row = body[line_start:line_end]
        if not row.lstrip().startswith("|") or layout.fence_at(match.start() + 1) is not None:
            continue
        before = body[line_start : match.start() + 1]
        cells = before.split("|")[1:-1]  # the cells before the range cell
        paths = []
        cell_start = line_start + before.index("|") + 1
        for cell in cells:
            # `path`, **`path`** or *path*: emphasis around the path is the table's style.
            written = cell.strip().strip("*_").strip().strip("`").strip()
            if _is_file_token(written) and _path_form(written) is not None:
                paths.append((written, cell_start + cell.index(written)))
            elif _RANGE_AT.search(cell):
                paths = []  # a cell citing its own lines: the row is of another shape
                break
            cell_start += len(cell) + 1
        if len(paths) != 1:
            continue
        path, path_offset = paths[0]
        number_start = match.start("start")
        if body[number_start - 1 : number_start] == "L":
            number_start -= 1
        if body[number_start - 1 : number_start] == "#":
            number_start -= 1
        finish = match.end("end") if match["end"] else match.end("start")
        line, column = layout.position(number_start)
        if (line, column) in taken:
            continue
        start = int(match["start"])
        end = int(match["end"]) if match["end"] else start
        consumed.add(layout.position(path_offset))
        symbol = _cell_symbol(layout, body, match.end(), line_start, line_end, len(cells) + 1)
        if symbol is None:
            symbol = _name_cell_before(layout, body, line_start, cells, path)
        records.append(
            _apart(line, column, text[number_start:finish], path, start, end, symbol, "table")
        )
    return records


_SYMBOL_HEADER = lazy_pattern(
    r"symbol|function|method|class|name|def|api|函数|方法|类|符号|名称|接口", re.IGNORECASE
)


def _cell_symbol(
    layout: MarkdownLayout, body: str, after: int, line_start: int, line_end: int, column: int
) -> str | None:
    """The symbol the cell after a range cell (the table's ``column``, from 0) names: a code
    span or a call (``sleep()``), or a plain name in a column whose header says it holds
    names (函数, Function, ...)."""
    cell = body[after + 1 : line_end].split("|", 1)[0].strip()
    if not cell:
        return None
    if cell.startswith("`") and cell.endswith("`"):
        return _symbol_in(cell.strip("`"))
    if "(" in cell:
        return _symbol_in(cell)
    header = _table_header(layout, body, line_start)
    if header is None or len(header) <= column:
        return None
    return _symbol_in(cell) if _SYMBOL_HEADER.search(header[column]) else None


def _name_cell_before(
    layout: MarkdownLayout, body: str, line_start: int, cells: list[str], path: str
) -> str | None:
    """The symbol a cell before the range cell names in a column whose header says it holds
    names (`| Function | File | Lines |`), other than the path's own cell."""
    header = None
    for column, cell in enumerate(cells):
        written = cell.strip().strip("*_").strip().strip("`").strip()
        if not written or written == path:
            continue
        if header is None:
            header = _table_header(layout, body, line_start) or []
        if column < len(header) and _NAMES_HEADER.fullmatch(header[column].strip()):
            return _symbol_in(written) if _LOOKS_LIKE_CODE.search(cell) else None
    return None


_NAMES_HEADER = lazy_pattern(
    r"(?:symbol|function|method|class|name|api)s?|(?:函数|方法|类|符号|接口)(?:名|名称)?|名称",
    re.IGNORECASE,
)
"""A header naming a column of names, as a whole (`Function`, `函数名`; not `Classification`,
`数据类型`)."""
_LOOKS_LIKE_CODE = lazy_pattern(r"`|\(\)|[A-Za-z0-9]_|[A-Za-z]\.[A-Za-z]|[a-z][A-Z]")
"""A cell written as code: a code span, a call, an underscore, a dot or camelCase."""


def _table_header(layout: MarkdownLayout, body: str, row_start: int) -> list[str] | None:
    """The cells of the header of the table holding the row that starts at ``row_start``."""
    line = bisect.bisect_right(layout.line_starts, row_start) - 1
    for index in range(line - 1, max(line - 400, 0) - 1, -1):
        start = layout.line_starts[index]
        written = body[start : layout.line_starts[index + 1] - 1].strip()
        if not written.startswith("|"):
            return None
        if set(written) <= set("|-: \t") and index > 0:
            previous = layout.line_starts[index - 1]
            return body[previous:start].strip().strip("|").split("|")
    return None


class _Lines(NamedTuple):
    """Lines a phrase gives, apart from their path: where their numbers are (``begin`` to
    ``finish``) and what they say; where the phrase's ranges begin and end, when it gives
    several (``lines 5-9 and 12-16 of x.py``: each takes the path after the last); and whether
    the path must be right before them (GitHub's ``L36-L43``)."""

    begin: int
    finish: int
    start: int
    end: int
    first: int
    last: int
    right_after_path: bool = False


def _phrase_records(
    layout: MarkdownLayout, body: str, taken: set[tuple[int, int]], consumed: set[tuple[int, int]]
) -> list[RefRecord]:
    """``x.py (lines 811-831)``, ``x.py（第 811-831 行）``, ``x.py 中 `f()` 的第 12 行``: the
    nearest file path before the phrase in its sentence, and nothing else in between that
    would claim it; or the path of the phrase before, when only words lie between them (``in
    x.py, the helper (lines 5-9) and compute (lines 12-16)``)."""
    records: list[RefRecord] = []
    found: list[_Lines] = []
    start_at = layout.body_start
    if "ine" in body or "ll." in body:
        for match in _PHRASE_EN.finditer(body, start_at):
            found.extend(_listed_lines(body, match))
    if "L" in body:
        for match in _L_LINES.finditer(body, start_at):
            found.append(_lines_of(match, match.start(), right_after_path=True))
    if "号" in body and "行号" in body:  # a label: "**文件**: `x.py` **行号**: 36-43"
        for match in _LINES_LABEL_ZH.finditer(body, start_at):
            found.append(_lines_of(match, match.start("start")))
    position = body.find("行", start_at)
    while position != -1:
        window_start = max(start_at, position - 40)
        match = _PHRASE_ZH.search(body, window_start, position + 1)
        if match is not None:
            named = ("start", "end") if match["start"] else ("rstart", "rend")
            lines = _lines_of(match, match.start(named[0]), named)
            if found and found[-1].begin == lines.begin:
                found.pop()  # "第9行到第14行": the first 行 ended "第9行", the second the range
            listed = _listed_before(body, lines, window_start) if named[0] == "rstart" else []
            found.extend(listed)
            found.append(lines._replace(first=listed[0].first) if listed else lines)
        position = body.find("行", position + 1)
    found.sort()
    text = layout.text
    previous: tuple[int, int, str, int] | None = None  # line, finish, path, path offset
    sizes = Counter((lines.first, lines.last) for lines in found)
    group: tuple[int, int] | None = None
    symbols: list[str | None] = []
    taken_names = 0
    for lines in found:
        begin, finish, start, end = lines.begin, lines.finish, lines.start, lines.end
        if layout.fence_at(begin) is not None:
            continue
        line, column = layout.position(begin)
        if (line, column) in taken:
            continue
        after = None if lines.right_after_path else _path_after(body, lines.last)
        if after is None and not lines.right_after_path and _names_other_than_a_file(body, lines):
            continue
        line_start, _ = layout.line_bounds(begin)
        window_start = max(line_start, lines.first - _PHRASE_GAP - 200)
        window = body[window_start : lines.first]
        before = _path_before(window)
        if (
            after is not None
            and after[2]
            and before is not None
            and before[0].endswith("/" + after[0])
        ):
            # In brackets after the lines, a name may repeat the path written before them
            # (`slime/ray/rollout.py` 第 100-120 行（`rollout.py`）): the path says more.
            after = None
        if after is not None:
            path, path_offset, _ = after
            symbol = None
        elif (
            before is not None
            and (
                not lines.right_after_path or _right_after_path(before[1], before[0], body, finish)
            )
            and not _ANOTHER_TEXT_S.search(before[1])
        ):
            path, between = before
            path_offset = window_start + len(window) - len(between) - len(path)
            symbol = _symbol_between(between)
            if symbol is not None and len(_names_listed_before(layout, begin, line_start)) > max(
                sizes[lines.first, lines.last], 1
            ):
                symbol = None  # more names than ranges: which is whose, it does not say
        elif (
            previous is not None
            and previous[0] == line
            and not lines.right_after_path
            and _continues(body, previous[1], lines.first)
        ):
            _, _, path, path_offset = previous
            # A name right before the phrase is its own (`g()` (lines 12-16)); one further
            # back is the first one's (第 5 至 9 行是 `f`，第 12 至 16 行是 `g`).
            named = _NAME_RIGHT_BEFORE.search(body, previous[1], lines.first)
            symbol = _symbol_in(named[1]) if named else None
        else:
            continue
        if symbol is None:
            # The ranges one phrase lists (`lines 1-3, 6-8 of x.py`) share the names before it.
            if (lines.first, lines.last) != group:
                group, taken_names = (lines.first, lines.last), 0
                symbols = _phrase_symbols(
                    layout, body, line_start, lines, path, path_offset, after is not None,
                    sizes[group],
                )  # fmt: skip
            symbol = symbols[taken_names] if taken_names < len(symbols) else None
            taken_names += 1
        consumed.add(layout.position(path_offset))
        records.append(_apart(line, column, text[begin:finish], path, start, end, symbol, "phrase"))
        previous = (line, finish, path, path_offset)
        if lines.right_after_path and finish < len(body) and body[finish] in _LIST_SEPARATORS:
            # trainer.py (L36-L43, L50-L60)
            line_start = layout.line_starts[line - 1]
            records.extend(_listed(body, finish, line, line_start, path, False))
    return records


_NAME = r"(?:(?:the|its|their|a|an)[ \t]+)?(?:`[^`\n]+`|[A-Za-z_]\w*(?:\(\))?)"
"""A name a lines phrase may have beside it in a sentence (``compute``, ``its return``,
``the `f()```)."""
_CHAIN_GAP = lazy_pattern(
    rf"""[ \t]*(?:行[ \t]*(?:是|为)?)?[ \t]*                       # 行是
    (?:[\u4e00-\u9fff]{{1,6}}[ \t]*)?{_NAME}?[ \t]*[)）]?[ \t]*     # 调用 `f()`, or (lines 5-9)
    (?:,|，|、|and|&|以及|和|及)[ \t]*(?:and[ \t]+)?               # a conjunction
    (?:然后|接着|随后|之后|最后|再)?[ \t]*                          # then
    {_NAME}?[ \t]*(?:在|位于)?[ \t]*[(（]?[ \t]*(?:[Ll]ines?|ll\.|第)?[ \t]*""",
    re.VERBOSE,
)
"""What may lie between a lines phrase and the next one on its line for the next to take the
path of the first: a conjunction, and at most a name on either side (``the helper (lines 5-9)
and compute (lines 12-16)``, ``第 5 至 9 行是 `f`，第 12 至 16 行``); in Chinese, what the lines
do in a few characters before it and "then" after it (``第 37 行调用 `f()`，然后第 38-39 行``).
Other words (``and the log then shows lines 3-4``, ``而调用方在第 50 行``) may be about
anything."""


def _continues(body: str, finish: int, begin: int) -> bool:
    """Whether the lines phrase starting at ``begin`` goes on from the one ending at
    ``finish``: `_CHAIN_GAP` between, naming no file (``and the `Makefile` (lines 3-4)``)."""
    gap = _CHAIN_GAP.fullmatch(body, finish, begin)
    return gap is not None and not any(
        name in KNOWN_NAMES or _FILE_TOKEN.fullmatch(name)
        for name in re.findall(r"`([^`\n]+)`", gap.group())
    )


_SAID_WHERE_ZH = r"(?:的?[ \t]*(?:实现|定义|声明|代码|源码)?[ \t]*(?:在|位于|见|于))"
"""What joins a name to where it is, in Chinese (`` `f` 的实现在``, `` `f` 定义于``,
`` `f` 在``)."""
_NAME_RIGHT_BEFORE = lazy_pattern(
    r"`([^`\n]+)`[ \t]*[(（]?[ \t]*(?:[Ll]ines?|ll\.|" + _SAID_WHERE_ZH + r"?[ \t]*第)?[ \t]*$"
)
"""A code span right before a lines phrase (``g()` (lines``), whose name the lines cite."""


_NAME_BEFORE_PATH = lazy_pattern(
    r"`([^`\n]+)`[ \t]*(?:[(（][ \t]*|"
    + _SAID_WHERE_ZH
    + r"[ \t]*|(?:(?:is|are|lives|defined|implemented|declared|located|found|in|at|see)[ \t]+)+)?$"
)
"""A code span right before the path of a lines phrase (`` `X`（x.py 第 5-9 行）``, `` `X` 在
x.py 第 5-9 行``, `` `X` 的实现在 x.py 第 5-9 行``, `` `X` is defined in x.py, lines 5-9``), whose
name the lines cite."""
_NAME_BEFORE_LINES = lazy_pattern(
    r"`([^`\n]+)`[ \t]*(?:(?:[(（][ \t]*|(?:(?:is|are|lives|sits|spans|covers|at|in|on)[ \t]+)+)?"
    r"(?:[Ll]ines?|ll\.)|[(（]?[ \t]*" + _SAID_WHERE_ZH + r"?[ \t]*第)[ \t]*$"
)
"""A code span right before a lines phrase whose path comes after (`` `X` is at lines 5-9 of
x.py``, `` `X` 的实现在第 5-9 行（x.py）``)."""
_NAME_AFTER_PHRASE = lazy_pattern(r"[ \t]+(?:holds?|contains?|defines?)[ \t]+`([^`\n]+)`")
"""A code span the lines are said to hold after the phrase (``lines 5-9 of x.py hold `X```)."""


def _phrase_symbols(
    layout: MarkdownLayout,
    body: str,
    line_start: int,
    lines: _Lines,
    path: str,
    path_offset: int,
    path_after: bool,
    ranges: int,
) -> list[str | None]:
    """The symbols of the ``ranges`` ranges of a lines phrase, in order, from the names written
    beside it (see `_NAME_BEFORE_PATH`, `_NAME_BEFORE_LINES`, `_NAME_AFTER_PHRASE`), as a code
    span right beside an inline reference names one: with several ranges, names listed before
    the phrase pair with them in order, a single one goes to the first (`` `f` (lines 5-9,
    20-30 of x.py)``), and any other count names none."""
    lowest = max(line_start, (lines.first if path_after else path_offset) - _NAME_REACH)
    if path_after:
        named = _NAME_BEFORE_LINES.search(body, lowest, lines.first)
        end = max(lines.finish, path_offset + len(path))
    else:
        # (The path's own code span or emphasis, `` `f` 在 `x.py` 第 5-9 行``, is not between.)
        edge = path_offset
        while edge > lowest and body[edge - 1] in _MARKERS:
            edge -= 1
        named = _NAME_BEFORE_PATH.search(body, lowest, edge)
        end = lines.finish
    after = None
    if named is None:
        while end < len(body) and body[end] in _MARKERS:
            end += 1  # (lines 5-9 of `x.py` hold ...)
        closing = body.find(")", end, end + 2)  # (lines 5-9 of x.py) hold ...
        after = _NAME_AFTER_PHRASE.match(body, end + 1 if closing == end else end)
    if ranges == 1:
        symbol = named or after
        return [_symbol_in(symbol[1]) if symbol else None]
    if named is None:
        return []  # (a name after several ranges: whose, it does not say)
    names = _names_listed_before(layout, named.end(1) + 1, line_start)
    if len(names) == ranges:
        return list(names)
    return [names[-1]] if len(names) == 1 else []


_MARKERS = frozenset("`*_")
"""Code span and emphasis markers, which may wrap a phrase's path."""
_NAME_REACH = 300
"""Characters before a phrase looked at for the name beside it (a line of a thousand phrases
would otherwise be searched from its start for each)."""


_LISTED_BEFORE = lazy_pattern(
    r"""第[ \t]*(?P<items>\d{1,9}(?:[ \t]*[-–—~～〜至到][ \t]*\d{1,9})?
    (?:[ \t]*[、,，][ \t]*\d{1,9}(?:[ \t]*[-–—~～〜至到][ \t]*\d{1,9})?)*)[ \t]*[、,，][ \t]*$""",
    re.VERBOSE,
)
_LISTED_ITEM = lazy_pattern(r"(?P<start>\d{1,9})(?:[ \t]*[-–—~～〜至到][ \t]*(?P<end>\d{1,9}))?")


def _listed_before(body: str, lines: _Lines, lowest: int) -> list[_Lines]:
    """The lines a Chinese phrase lists before its last ones (``第 5、12-16 行``: 5, before
    12-16), which all take the path the phrase takes."""
    match = _LISTED_BEFORE.search(body, max(lowest, lines.begin - 80), lines.begin)
    if match is None:
        return []
    return [
        _Lines(
            item.start(),
            item.end(),
            int(item["start"]),
            int(item["end"] or item["start"]),
            match.start(),
            lines.last,
        )
        for item in _LISTED_ITEM.finditer(body, match.start("items"), match.end("items"))
    ]


def _lines_of(
    match: re.Match[str],
    begin: int,
    named: tuple[str, str] = ("start", "end"),
    right_after_path: bool = False,
) -> _Lines:
    """The lines of a phrase's ``match``, whose numbers start at ``begin``: the groups
    ``named`` hold its first and last line."""
    first, last = named
    start = int(match[first])
    end = int(match[last]) if match[last] else start
    finish = match.end(last) if match[last] else match.end(first)
    return _Lines(begin, finish, start, end, begin, finish, right_after_path)


_MORE_LINES = lazy_pattern(
    r"""[ \t]*(?:,[ \t]*(?:(?:and|or)[ \t]+)?|(?:and|or)[ \t]+|&[ \t]*)(?P<start>\d{1,9})
    (?:[ \t]*[-–—~～〜][ \t]*(?P<end>\d{1,9}))?(?![\d:.]\d)""",
    re.VERBOSE,
)
"""A further range of an English lines phrase: ``lines 5-9, 12-16 and 20`` (or ``or 20``)."""
_LIST_CLOSED = lazy_pattern(r"[ \t]*[)）]")


def _listed_lines(body: str, match: re.Match[str]) -> list[_Lines]:
    """The lines of an English phrase, one `_Lines` a range. Further ranges count when a
    path follows them (``lines 5-9 and 12-16 of x.py``) or a bracket closes on them
    (``(lines 5-9, 12-16)``): else ``lines 10 and 20, 2024`` would cite line 2024. ``lines 5
    and 20`` lists two lines; ``between lines 5 and 20`` is a range."""
    if match["to"] == "and" and body[max(0, match.start() - 8) : match.start()].lower() != (
        "between "
    ):
        start, end = int(match["start"]), int(match["end"])
        first = match.start("start")
        listed = [
            _Lines(first, match.end("start"), start, start, first, match.end("start")),
            _Lines(match.start("end"), match.end("end"), end, end, first, match.end("end")),
        ]
    else:
        listed = [_lines_of(match, match.start("start"))]
    position = listed[-1].finish
    while (more := _MORE_LINES.match(body, position)) is not None:
        listed.append(_lines_of(more, more.start("start")))
        position = more.end()
    if len(listed) > 1 and not (
        _path_after(body, listed[-1].finish) or _LIST_CLOSED.match(body, listed[-1].finish)
    ):
        listed = listed[:1]
    list_begin, list_finish = listed[0].begin, listed[-1].finish
    return [lines._replace(first=list_begin, last=list_finish) for lines in listed]


def _right_after_path(between: str, path: str, body: str, finish: int) -> bool:
    """Whether ``L`` lines ending at ``finish``, with ``between`` them and ``path`` before,
    cite that path: a code file, nothing but `_L_LINES_GAP` between, and a bracket or the
    end of the clause after."""
    extension = _EXTENSION.search(path)
    return (
        extension is not None
        and extension.group(1).lower() in CODE_EXTENSIONS
        and _L_LINES_GAP.fullmatch(between) is not None
        and _L_LINES_END.match(body, finish) is not None
    )


def _names_other_than_a_file(body: str, lines: _Lines) -> bool:
    """Whether the phrase says whose lines they are, in a plain word that names no file
    (``lines 12-16 of the diff``, ``lines 3-4 of output``): then a path before is not theirs."""
    match = _PATH_AFTER.match(body, lines.last)
    return match is not None and not match["tick"] and not _is_file_token(match["path"])


def _path_after(body: str, finish: int) -> tuple[str, int, bool] | None:
    """The file path a lines phrase ending at ``finish`` names after it ("lines 9-14 of
    `x.py`", "line 9 in x.py", "第 9-14 行（x.py）"), where the path starts, and whether it
    is in brackets."""
    match = _PATH_AFTER.match(body, finish) or _PATH_AFTER_ZH.match(body, finish)
    bracketed = match is None
    if bracketed:
        match = _PATH_IN_BRACKETS.match(body, finish)
        if match is None:
            return None
    named = "path" if match["path"] is not None else "c_path"  # (in brackets, after a comma)
    path = match[named].rstrip(".:")
    if not _is_file_token(path) or _path_form(path) is None:
        return None
    return path, match.start(named), bracketed


def _is_file_token(text: str) -> bool:
    """Whether ``text``, standing alone (a table cell, the path after a lines phrase), is a
    file path: an absolute local one may have directories named in any script."""
    return _FILE_TOKEN.fullmatch(text) is not None or (
        not text.isascii() and _LOCAL_PATH_SHAPE.fullmatch(text) is not None
    )


_PHRASE_STOP = lazy_pattern(r"[。；;！？!?]|\.\s|\d")


def _symbol_between(between: str) -> str | None:
    """The symbol a code span between a path and its lines phrase names (the last one)."""
    for code in reversed(re.findall(r"`([^`]+)`", between.lstrip("`"))):
        symbol = _symbol_in(code)
        if symbol:
            return symbol
    return None


_ANOTHER_TEXT_S = lazy_pattern(
    r"(?:(?<![\w`])[a-z][\w-]*['’]s"
    r"|(?:日志|输出|终端|控制台|结果|报错|错误信息|堆栈|回溯|截图|表格|差异|补丁)[的中里内]?)"
    r"\s*(?:(?:[Ll]ines?|[Ll]l\.)\s*|第\s*)?$"  # (the phrase's own word, when it comes first)
)
"""Words right before a lines phrase that make the lines another text's than the file named
before them: a plain word's possessive (``after running x.py, the log's lines 3-5``), or a
word for output or another document (``运行 x.py 之后，日志第 3-5 行``). Not a code span's
(`` `f`'s lines ``) nor the file's own (``x.py's lines``)."""


def _path_before(window: str) -> tuple[str, str] | None:
    """The file path nearest the end of ``window`` (the text before a lines phrase) and the
    text between them, if it is close and nothing between ends the sentence or holds a
    number."""
    last = None
    for match in _FILE_TOKEN.finditer(window):
        last = match
    if last is None:
        return None
    between = window[last.end() :]
    if len(between) > _PHRASE_GAP or _PHRASE_STOP.search(between):
        return None
    if between[:1] in (":", "：") and between[1:2].isdigit():
        return None  # `x.py:12 (line 12)`: already a reference
    local_start = _local_root_start(window, None, last.start(), 0)
    if local_start is None:
        return None
    path = window[local_start : last.end()]
    if local_start > 0 and window[local_start - 1] in _TOKEN_BEFORE:
        return None
    if between.startswith('",') and window[last.start() - 1 : last.start()] == '"':
        return None  # a traceback's `File "x.py", line 12`: where an error was, not a citation
    return (path, between) if _path_form(path) is not None else None

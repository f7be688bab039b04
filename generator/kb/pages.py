"""Pages: Markdown files with YAML frontmatter, read and written without losing a byte.

`read_page` never raises for bad content: a non-UTF-8 file, an unclosed or malformed frontmatter
block, or frontmatter that is not a mapping becomes a `PageProblem` with its line, which the
verifier reports as a finding. Writing a page whose metadata did not change reproduces the file
byte for byte (BOM, CRLF and all); changing metadata rewrites only the frontmatter, keeping
unknown keys, their order and their comments.
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from generator.files import atomic_write, inside
from generator.model import Finding
from generator.patterns import lazy_pattern
from generator.yamlsafe import check_depth, check_expansion, may_expand

_BOM = "\ufeff"
_OPENING = lazy_pattern(r"---[ \t]*\r?\n")
_CLOSING = lazy_pattern(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.M)


@dataclass(frozen=True)
class PageProblem:
    check: str
    line: int
    column: int
    message: str
    suggestion: str | None = None


@dataclass
class Page:
    """A Markdown page. ``text`` is the decoded file without its BOM; ``None`` if undecodable."""

    source: Path
    display: str
    """The path as the user gave it (``docs/analysis/x.md``); used in every finding."""
    rel: str
    """Path relative to the docs root, with forward slashes."""
    undecoded: bytes
    """The file's bytes when they are not valid UTF-8 (``text`` is None), else empty: ``raw``
    gives them back from ``text``, so a page of text is not held twice."""
    text: str | None
    bom: bool = False
    frontmatter: str | None = None
    """The YAML between the delimiters, exactly as written; ``None`` when there is none."""
    body_start: int = 0
    """Offset in ``text`` where the body begins (just after the closing delimiter line)."""
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[PageProblem] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.text is not None:
            self.undecoded = b""

    @property
    def raw(self) -> bytes:
        """The file's bytes, exactly as read (UTF-8 decodes and encodes back to the same bytes)."""
        if self.text is None:
            return self.undecoded
        return ((_BOM if self.bom else "") + self.text).encode("utf-8")

    @property
    def body(self) -> str:
        return (self.text or "")[self.body_start :]

    @property
    def newline(self) -> str:
        return "\r\n" if self.text and "\r\n" in self.text[: self.body_start or 4096] else "\n"


class _UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loader that refuses duplicate keys instead of silently keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):  # `[a]: b`: refused as PyYAML itself refuses it
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                )
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {key!r}",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _UniqueKeyLoader.construct_mapping
)


def problem_findings(page: Page) -> list[Finding]:
    """The problems met reading ``page`` (encoding, frontmatter), as findings."""
    from generator.checks import severity_of

    return [
        Finding(
            severity_of(p.check), p.check, page.display, p.line, p.column, p.message, p.suggestion
        )
        for p in page.problems
    ]


def load_yaml(text: str) -> Any:
    """Parse YAML safely, refusing duplicate keys, and documents too deep or too large once
    their aliases are expanded (`YAMLLimitError`). Raises `yaml.YAMLError`, or `ValueError` for
    a value its tag cannot build (``!!map [1]``, ``created: 2025-13-01``)."""
    check_depth(text, _UniqueKeyLoader)
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if may_expand(text):
            check_expansion(node)
        return loader.construct_document(node)
    except (TypeError, AttributeError, KeyError, IndexError, OverflowError) as error:
        # The constructors of the standard tags assume the node they get has the shape the tag
        # names; a tag on the wrong kind of node (`!!map [1]`) fails inside them.
        raise ValueError("a value does not have the form its YAML tag names") from error
    finally:
        loader.dispose()


MAX_PAGE_BYTES = 16 * 1024 * 1024
"""Largest page read: a page is text a person reads; anything larger is not one (a log, a dump,
a device), and reading it whole would only cost memory."""


class PageUnreadable(Exception):
    """A page that cannot be read as a file of text (see `read_page_bytes`)."""

    def __init__(self, problem: PageProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def read_page_bytes(source: Path, docs_root: Path | None = None) -> bytes:
    """The bytes of the page at ``source``, at most `MAX_PAGE_BYTES`.

    Raises `PageUnreadable` (never waits, never reads without end) for what is not a regular
    file (a FIFO, a device, a socket, a directory), a symbolic link that is broken, loops, or,
    for a page inside ``docs_root``, leads out of it (its target would be published as a page),
    a file over the size limit, or one the system refuses to read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        if source.is_symlink():
            _check_link(source, docs_root)
        descriptor = os.open(source, flags)
    except OSError as error:
        raise PageUnreadable(_unreadable(source, error)) from error
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise PageUnreadable(
                PageProblem(
                    "page-unreadable",
                    1,
                    1,
                    f"is {_file_kind(status.st_mode)}, not a file of text; it was not read",
                    "remove it from the docs directory",
                )
            )
        if status.st_size > MAX_PAGE_BYTES:
            raise PageUnreadable(_too_large(status.st_size))
        chunks = []
        size = 0
        # The size the file has now, and one byte more to see it end; a read that gets less
        # than it asked for met the end of this regular file. (Each read allocates what it asks
        # for: a megabyte at a time cost more than the page's own parsing.)
        wanted = status.st_size + 1
        while size <= MAX_PAGE_BYTES:
            asked = min(wanted, MAX_PAGE_BYTES + 1 - size)
            chunk = os.read(descriptor, asked)
            chunks.append(chunk)
            size += len(chunk)
            if len(chunk) < asked:
                break
            wanted = 1 << 16  # it grew since its size was read
        if size > MAX_PAGE_BYTES:  # it grew while being read
            raise PageUnreadable(_too_large(size))
        return b"".join(chunks)
    except OSError as error:
        raise PageUnreadable(_unreadable(source, error)) from error
    finally:
        os.close(descriptor)


def _check_link(source: Path, docs_root: Path | None) -> None:
    """Raise `PageUnreadable` for a symbolic link page in ``docs_root`` leading out of it."""
    if docs_root is None:
        return
    root = os.path.realpath(docs_root)
    if not inside(os.path.realpath(source.parent), root):
        return  # a page given from elsewhere: not one the site publishes
    target = os.path.realpath(source)
    if not inside(target, root):
        raise PageUnreadable(
            PageProblem(
                "page-outside-docs",
                1,
                1,
                f"is a symbolic link to {target}, outside the docs directory; it was not read "
                "(it would be published as a page)",
                "copy the page into the docs directory, or remove the link",
            )
        )


def _unreadable(source: Path, error: OSError) -> PageProblem:
    reason = error.strerror or str(error)
    if error.errno == errno.ELOOP:
        reason = "a symbolic link that loops"
    elif error.errno == errno.ENOENT and source.is_symlink():
        reason = f"a symbolic link to {source.readlink()}, which does not exist"
    return PageProblem(
        "page-unreadable", 1, 1, f"cannot be read: {reason}", "fix or remove the file"
    )


def _too_large(size: int) -> PageProblem:
    return PageProblem(
        "page-unreadable",
        1,
        1,
        f"is {size:,} bytes, over the {MAX_PAGE_BYTES:,} a page may have; it was not read",
        "split the page, or keep large files out of the docs directory",
    )


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def unreadable_page(source: Path, display: str, rel: str, problem: PageProblem) -> Page:
    """A page that could not be read: no text, and the problem as its finding."""
    return Page(source, display, rel, b"", None, problems=[problem])


def load_page(source: Path, display: str, rel: str, docs_root: Path | None = None) -> Page:
    """Read (`read_page_bytes`) and parse a page; never raises for what the file is or holds."""
    try:
        raw = read_page_bytes(source, docs_root)
    except PageUnreadable as unreadable:
        return unreadable_page(source, display, rel, unreadable.problem)
    return parse_page(raw, source, display, rel)


def read_page(source: Path, display: str | None = None, rel: str | None = None) -> Page:
    """Read a page; content problems are recorded on the page, not raised."""
    return load_page(source, display or str(source), rel or source.name)


_COMMON_HANZI_LEAD = (0xB0, 0xD7)
"""The lead bytes of GB2312's level-1 (common) Chinese characters."""


def encoding_advice(raw: bytes) -> str:
    """What to do with a file that is not UTF-8, by what its first bytes look like: binary,
    UTF-16, Chinese in GB18030 (GBK), or a single-byte encoding such as Latin-1. GBK writes
    each Chinese character as two bytes above 0x80; Latin-1 writes an accented letter as one,
    mostly between ASCII letters (`Müller`, `Straße`)."""
    data = raw[:65536]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "convert it to UTF-8: iconv -f UTF-16 -t UTF-8"
    if b"\x00" in data:
        return "it looks like a binary file, not a page: move it out of the pages"
    high = [index for index, byte in enumerate(data) if byte >= 0x80]
    paired = common = 0
    index = 0
    while index < len(high) - 1:
        if high[index + 1] == high[index] + 1 and data[high[index]] >= 0x81:
            paired += 2
            common += _COMMON_HANZI_LEAD[0] <= data[high[index]] <= _COMMON_HANZI_LEAD[1]
            index += 2
        else:
            index += 1
    # Pairs alone are not enough: Portuguese `ção`, `ões` pair too, but as GB2312's rare
    # characters, where Chinese text is mostly its 3,755 common ones.
    chinese = high and paired >= 0.8 * len(high) and common >= 0.5 * (paired // 2)
    encoding = "GB18030" if chinese else "LATIN1"
    return f"convert it to UTF-8: iconv -f {encoding} -t UTF-8, if it is {encoding}"


def parse_page(raw: bytes, source: Path, display: str, rel: str) -> Page:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        problem = PageProblem(
            "page-encoding",
            line,
            column,
            f"page is not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start});"
            " it was not checked",
            encoding_advice(raw),
        )
        return Page(source, display, rel, raw, None, problems=[problem])
    bom = decoded.startswith(_BOM)
    text = decoded[1:] if bom else decoded
    page = Page(source, display, rel, b"", text, bom=bom)
    _split_frontmatter(page)
    deep = _too_deep_at(text, page.body_start)
    if deep is not None:
        page.problems.append(
            PageProblem(
                "page-too-deep",
                text.count("\n", 0, deep) + 1,
                1,
                f"nests lists or block quotes about {MAX_NESTING} levels deep or more: "
                "Markdown renderers run out of stack or memory on it, so it is not published",
                "flatten the nesting",
            )
        )
    return page


MAX_NESTING = 100
"""Deepest nesting of lists (two columns of indentation a level) and block quotes a page may
have: Python-Markdown recurses per level, and a thousand levels take it gigabytes."""
_TOO_DEEP = (
    rf"(?:[ \t]{{{2 * MAX_NESTING},}}(?:[-*+]|\d{{1,9}}[.)])(?:[ \t]|$)"
    rf"|(?:>[ \t]?){{{MAX_NESTING},}})"
)
_TOO_DEEP_FIRST = lazy_pattern(_TOO_DEEP, re.M)
# Lines found by their newline rather than `^`: the regular expression engine then skips to
# each newline, instead of trying the pattern at every character (six times as fast).
_TOO_DEEP_AFTER = lazy_pattern(rf"\n{_TOO_DEEP}", re.M)


def _too_deep_at(text: str, start: int) -> int | None:
    """Where the first line from ``start`` (a line's start) nested too deep starts, if any."""
    if _TOO_DEEP_FIRST.match(text, start) is not None:
        return start
    deep = _TOO_DEEP_AFTER.search(text, start)
    return None if deep is None else deep.start() + 1


def _split_frontmatter(page: Page) -> None:
    text = page.text or ""
    opening = _OPENING.match(text)
    if opening is None:
        return
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        page.problems.append(
            PageProblem(
                "frontmatter-invalid",
                1,
                1,
                "frontmatter starts with '---' but is never closed",
                "add a line '---' after the last frontmatter key",
            )
        )
        return
    page.frontmatter = text[opening.end() : closing.start()]
    page.body_start = closing.end()
    try:
        data = load_yaml(page.frontmatter)
    except ValueError as error:  # a well-formed value YAML cannot convert: created: 2025-13-01
        page.problems.append(
            PageProblem(
                "frontmatter-invalid",
                2,
                1,
                f"frontmatter has an invalid value: {error}",
                "quote the value, or correct it",
            )
        )
        return
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = 2 + mark.line if mark is not None else 1
        column = mark.column + 1 if mark is not None else 1
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        context, start = getattr(error, "context", None), getattr(error, "context_mark", None)
        if (
            context
            and ("quoted scalar" in context or "flow" in context)
            and start is not None
            and mark is not None
            and start.line < mark.line
        ):
            # `title: "Broken` is noticed at the end of the frontmatter: point at where the
            # unclosed quote or bracket opens, as Python does for "'[' was never closed".
            problem = f"{problem} {context} that starts here (noticed at line {line})"
            line, column = 2 + start.line, start.column + 1
        page.problems.append(
            PageProblem(
                "frontmatter-invalid", line, column, f"frontmatter is not valid YAML: {problem}"
            )
        )
        return
    if data is None:
        data = {}
    if not isinstance(data, dict):
        page.problems.append(
            PageProblem(
                "frontmatter-invalid",
                2,
                1,
                f"frontmatter must be a mapping of keys to values, not a {type(data).__name__}",
            )
        )
        return
    page.meta = data


def render_page(page: Page, meta: dict[str, Any] | None = None, body: str | None = None) -> bytes:
    """The page's bytes, with ``meta`` as its frontmatter and ``body`` as its body when given.

    Unchanged metadata and body give back the original bytes exactly. Changed metadata keeps the
    keys it does not touch in their order, with their comments and quoting.
    """
    if page.text is None:
        if meta is not None or body is not None:
            raise ValueError(f"{page.display}: cannot rewrite a page that is not valid UTF-8")
        return page.raw
    original_body = page.body if page.frontmatter is not None else page.text
    if (meta is None or meta == page.meta) and (body is None or body == original_body):
        return page.raw
    body = original_body if body is None else body
    prefix = _BOM if page.bom else ""
    if meta is None or meta == page.meta:
        head = page.text[: page.body_start] if page.frontmatter is not None else ""
        return (prefix + head + body).encode("utf-8")
    frontmatter = _render_frontmatter(page.frontmatter or "", meta, page.newline)
    nl = page.newline
    return (prefix + "---" + nl + frontmatter + "---" + nl + body).encode("utf-8")


class _BlockDumper(yaml.SafeDumper):
    """Indents lists under their key (``key:\n  - item``), as people write frontmatter."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


_TOP_LEVEL_KEY = lazy_pattern(r"^([A-Za-z_][A-Za-z0-9_\-]*)[ \t]*:(?:[ \t]|$)")


def _render_frontmatter(original: str, meta: dict[str, Any], newline: str) -> str:
    fast = _replace_top_level_keys(original.replace("\r\n", "\n"), meta)
    if fast is not None:
        return fast.replace("\n", newline)
    return _render_frontmatter_round_trip(original, meta, newline)


def _replace_top_level_keys(original: str, meta: dict[str, Any]) -> str | None:
    """Rewrite only the top-level keys whose value changed, as text; None if the YAML is too
    unusual for that (then ruamel.yaml's round trip does it, more slowly)."""
    try:
        old = load_yaml(original) if original.strip() else {}
    except (yaml.YAMLError, ValueError):
        return None
    if not isinstance(old, dict):
        return None
    lines = original.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    starts: dict[str, int] = {}
    for number, line in enumerate(lines):
        match = _TOP_LEVEL_KEY.match(line)
        if match:
            starts[match.group(1)] = number
        elif line.strip() and not line.startswith((" ", "\t", "#")):
            return None  # a top-level line that is not a simple key: flow mapping, quoted key
    if set(starts) != set(old):
        return None
    ordered = sorted(starts.values())

    def block(key: str) -> tuple[int, int]:
        first = starts[key]
        following = [n for n in ordered if n > first]
        last = following[0] if following else len(lines)
        while last > first + 1 and lines[last - 1].startswith("#"):
            last -= 1  # a comment just above the next key belongs to that key
        return first, last

    def dump(key: str) -> str:
        return yaml.dump(
            {key: meta[key]},
            Dumper=_BlockDumper,
            default_flow_style=False,
            allow_unicode=True,
            sort_keys=False,
            width=4096,
        )

    replacements: dict[int, tuple[int, str]] = {}
    for key in old:
        if key not in meta:
            first, last = block(key)
            replacements[first] = (last, "")
        elif meta[key] != old[key]:
            first, last = block(key)
            replacements[first] = (last, dump(key))
    output = []
    number = 0
    while number < len(lines):
        if number in replacements:
            last, text = replacements[number]
            output.append(text)
            number = last
        else:
            output.append(lines[number])
            number += 1
    output.extend(dump(key) for key in meta if key not in old)
    return "".join(output)


def _render_frontmatter_round_trip(original: str, meta: dict[str, Any], newline: str) -> str:
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    yaml_rt = YAML(typ="rt")
    yaml_rt.preserve_quotes = True
    yaml_rt.width = 4096
    yaml_rt.indent(mapping=2, sequence=4, offset=2)
    data = yaml_rt.load(original.replace("\r\n", "\n")) if original.strip() else None
    if not isinstance(data, dict):
        data = CommentedMap()
    for key in [key for key in data if key not in meta]:
        del data[key]
    for key, value in meta.items():
        if key not in data or data[key] != value:
            data[key] = value
    stream = io.StringIO()
    yaml_rt.dump(data, stream)
    rendered = stream.getvalue()
    if rendered.strip() == "{}":
        rendered = ""
    return rendered.replace("\n", newline)


def write_page(page: Page, meta: dict[str, Any] | None = None) -> Page:
    """Write the page atomically (with new ``meta`` if given) and return it as re-read."""
    data = render_page(page, meta)
    atomic_write(page.source, data)
    return parse_page(data, page.source, page.display, page.rel)

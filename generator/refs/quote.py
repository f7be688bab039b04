"""Where quoted code sits in a file: the matcher behind a reference's quote evidence.

A page quotes the code it cites, and edits it as people do: it drops blank lines, writes
``...`` or ``# ...`` where it leaves code out, adds comments of its own (on a line or after
code), and reindents. A quote *matches* a place in a file when its lines appear there in order:

- lines are compared after normalising white space (indentation and runs of blanks);
- a line also matches when the two agree once their trailing comments are removed (the author
  annotated the code), and a line with ``...`` inside (``def f(self, ...):``) matches a line
  with the same beginning and end;
- an elision line (``...``, ``…``, ``# ...``, ``pass  # omitted``, ``# 省略``) lets any number
  of lines be skipped; elsewhere at most `SLACK` non-blank lines may be skipped between two
  quoted lines (an author drops a line without saying so);
- comment-only lines of the quote and *filler* lines (``)``, ``else:``, ``return``) need not be
  found, but count when they are; every other line is *required*;
- a place where at least `MATCH_RATIO` of the required lines are found, in order, is a match,
  so an author's small edit (a renamed variable in one line of ten) does not hide the quote.

`judge` then says whether the quote is inside the cited lines, elsewhere (once or several
times), or nowhere, and whether the quote is *strong* enough to act on: a quote of one or two
generic lines (``return x``) is weak evidence, never an error on its own, and never rewritten
to. The thresholds were measured on a generated drift corpus (see ARCHITECTURE.md).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import weakref
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from generator.patterns import lazy_pattern

SLACK = 3
"""Non-blank file lines that may lie between two consecutive quoted lines with no elision."""
MATCH_RATIO = 0.8
"""Share of a quote's required lines that must be found, in order, for a place to be where the
quote *is* (what ``quote-elsewhere`` reports and ``--fix`` rewrites to)."""
ACCEPT_RATIO = 0.5
"""Share that suffices for the quote to be *in* the cited lines: an author who rewrote a
signature and a docstring still quotes the right code. Between the two ratios the evidence
cannot tell, and nothing is reported."""
MAX_QUOTE_LINES = 400
"""Longer quotes are not compared (a pasted file is not evidence about a range)."""
_MAX_OCCURRENCES = 64
"""A line found more often than this in a file anchors nothing (it is as good as a filler)."""
_MAX_PAIRS = 6000

_ELLIPSIS = ("...", "…")
_ELISION_WORDS = lazy_pattern(
    r"^(?:\.\.\.|…|\(?(?:omitted|elided|snip(?:ped)?|truncated|more|etc\.?|rest|"
    r"省略|略|其余|其他|以下|此处省略)\b.*)",
    re.IGNORECASE,
)


def _flattened(lines: Sequence[str]) -> str:
    """Non-blank ``lines`` with every run of white space made one space, one to a line: how a
    copied quote and the lines it copies compare (only the cited lines are flattened, not the
    file: most quotes are found there)."""
    return "\n".join(filter(None, map(" ".join, map(str.split, lines))))


def _holds_lines(text: str, piece: str) -> bool:
    """Whether ``piece`` is in ``text`` as whole lines: from a line's start (its indentation
    aside) to a line's end (trailing white space aside)."""
    at = text.find(piece)
    while at != -1:
        line_start = text.rfind("\n", 0, at) + 1
        after = at + len(piece)
        line_end = text.find("\n", after)
        if (
            not text[line_start:at].strip()
            and not text[after : len(text) if line_end == -1 else line_end].strip()
        ):
            return True
        at = text.find(piece, at + 1)
    return False


def _words(text: str) -> list[str]:
    return text.split()


_FILLERS = frozenset(
    _words(
        """) ] } ); ]; }; ), ], }, ): ]): else: else try: finally: pass return break continue
        end fi done esac do then begin { ( [ @ \"\"\" ''' -> => */ /* */; default: }else{
        } else { else {"""
    )
)
_IDENTIFIER = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]{4,}")
_KEYWORDS = frozenset(
    _words(
        """False await break class continue except finally global import lambda nonlocal raise
        return while yield assert async const static struct public private protected include
        define typedef unsigned template typename virtual inline switch default sizeof
        extern override"""
    )
)


def could_be_strong(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether a quote (its text, or ``text[start:end]``) has the two lines of code a strong
    quote needs at the least: a cheap look before anything else, since most one-line quotes are
    weak, never reported. Reads lines only until it knows, without copying the text."""
    stop = len(text) if end is None else end
    count = 0
    position = start
    while position <= stop:
        newline = text.find("\n", position, stop)
        line_end = stop if newline == -1 else newline
        stripped = text[position:line_end].strip()
        if stripped and stripped not in ("...", "…") and not _commented(stripped):
            count += 1
            if count >= 2:
                return True
        if newline == -1:
            break
        position = newline + 1
    return False


ONE_LINE_LEAST = 30
"""Characters a quote of one line of code needs to say something of the line it quotes."""


def could_be_evidence(text: str, start: int = 0, end: int | None = None) -> bool:
    """`could_be_strong`, or one line of code long enough to be a cited line misquoted
    (`ONE_LINE_LEAST`): what a quote needs to be read at all."""
    if could_be_strong(text, start, end):
        return True
    stop = len(text) if end is None else end
    return any(
        len(line.strip()) >= ONE_LINE_LEAST and not _commented(line.strip())
        for line in text[start:stop].split("\n")
    )


_commented = re.compile(r"//|#(?![A-Za-z])").match
"""Whether a line (stripped) is a comment in most languages: ``//``, or ``#`` followed by no
letter (``#define``, ``#include`` and ``#SBATCH`` are code where they are written)."""


def normalise(line: str) -> str:
    """The line with its indentation removed and runs of white space made one space."""
    return " ".join(line.split())


@dataclass
class BlockIndex:
    """Normalised non-blank lines of one file, for exact block search (where `sync` finds the
    cited code at another commit, where `verify` finds it in a renamed file)."""

    numbers: list[int]
    """Line numbers (1-based) of the non-blank lines, in order."""
    texts: list[str]
    positions: dict[str, list[int]]
    """Normalised text -> indexes into ``numbers``."""

    @classmethod
    def of(cls, lines: list[str]) -> BlockIndex:
        numbers, texts = [], []
        positions: dict[str, list[int]] = defaultdict(list)
        for number, line in enumerate(lines, 1):
            text = normalise(line)
            if text:
                positions[text].append(len(numbers))
                numbers.append(number)
                texts.append(text)
        return cls(numbers, texts, positions)

    def find(self, block: list[str]) -> list[tuple[int, int]]:
        """Every (first, last) line range whose non-blank lines are exactly ``block``."""
        found = []
        for index in self.positions.get(block[0], ()):
            if self.texts[index : index + len(block)] == block:
                found.append((self.numbers[index], self.numbers[index + len(block) - 1]))
        return found


def comment_markers(language: str) -> tuple[str, ...]:
    """Line-comment markers of the language family a path extension or fence names."""
    return _COMMENTS.get(language.lower(), _HASH_OR_SLASHES)


_HASH = ("#",)
_HASH_OR_SLASHES = ("#", "//")
_SLASHES = ("//",)
_COMMENTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        _words(
            "py pyi pyx pxd python python3 py3 sh bash zsh shell yaml yml toml cfg conf ini r rb "
            "ruby pl perl cmake mk makefile dockerfile ex exs jl julia bzl starlark"
        ),
        _HASH,
    ),
    **dict.fromkeys(
        _words(
            "c cc cpp cxx c++ h hh hpp hxx cu cuh cuda metal rs rust go java kt kotlin scala js "
            "mjs cjs javascript ts tsx typescript jsx swift cs csharp fs dart proto php triton scss"
        ),
        _SLASHES,
    ),
    **dict.fromkeys(_words("lua sql hs haskell"), ("--",)),
    **dict.fromkeys(_words("md markdown rst restructuredtext rest txt text"), ()),
}
_FILE_NAMES = {
    "cmakelists.txt": "cmake",
    "makefile": "makefile",
    "gnumakefile": "makefile",
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
}


@functools.lru_cache(maxsize=4096)
def language_of(path: str) -> str:
    """The language a file's name says: its extension (``py``), or for the files named for
    their tool, the tool's (``CMakeLists.txt``: ``cmake``, ``Makefile``, ``Dockerfile``)."""
    name = path.rsplit("/", 1)[-1].lower()
    known = _FILE_NAMES.get(name) or next(
        (kind for prefix, kind in _FILE_NAMES.items() if name.startswith(prefix + ".")), None
    )
    if known is not None:
        return known
    return name.rsplit(".", 1)[-1] if "." in name else name


def strip_comment(text: str, markers: tuple[str, ...]) -> str:
    """``text`` (normalised) without a trailing comment, for markers outside string literals.
    A ``#`` right after ``$`` or ``{`` is shell's (``$#``, ``${#a[@]}``, ``${x##*/}``), and a
    batch system's directive (``#SBATCH --nodes=4``) is code, not a comment."""
    if len(markers) == 1:
        first = text.find(markers[0])
    else:
        first = min((found for m in markers if (found := text.find(m)) != -1), default=-1)
    if first == -1:
        return text
    if text[first] == "#" and (
        (first and text[first - 1] in "${") or (first == 0 and _DIRECTIVE.match(text))
    ):
        return _strip_comment_slowly(text, markers)
    head = text[:first]
    if '"' not in head and "'" not in head and "`" not in head and "\\" not in head:
        return head.rstrip()  # no string can hide the marker: the common case
    return _strip_comment_slowly(text, markers)


_DIRECTIVE = re.compile(r"#(?:SBATCH|PBS|BSUB|\$)\s")
"""A batch system's directive, written as a shell comment."""


def _strip_comment_slowly(text: str, markers: tuple[str, ...]) -> str:
    if _DIRECTIVE.match(text):
        return text
    quote: str | None = None
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
            continue
        if char == "\\":
            escaped = True
        elif quote:
            if char == quote:
                quote = None
        elif char in "\"'`":
            quote = char
        elif any(text.startswith(marker, index) for marker in markers):
            if char == "#" and index and text[index - 1] in "${#":
                continue  # (shell's `$#`, `${#a[@]}`, `${x##*/}`)
            return text[:index].rstrip()
    return text


# -- the quote ----------------------------------------------------------------------------------

CODE, FILLER, COMMENT = 0, 1, 2


class QuoteLine(NamedTuple):
    """One line of a quote, read (a tuple: quotes have many lines, built in bulk)."""

    number: int
    """Index of the line in the quote as written (0-based)."""
    text: str
    """Normalised."""
    bare: str
    """Normalised, without a trailing comment (may be empty for a comment-only line)."""
    kind: int
    """`CODE` (required), `FILLER` or `COMMENT` (found when they can be)."""
    elided_before: bool
    """An elision stands between this line and the previous one: any gap is allowed."""
    pattern: tuple[str, str] | None = None
    """(beginning, end) when the line elides inside itself (``def f(self, ...):``)."""
    distinctive: bool = False


@dataclass(frozen=True, eq=False)
class PreparedQuote:
    lines: tuple[QuoteLine, ...]
    required: int
    """How many `CODE` lines it has."""
    distinctive: int
    """How many of those are distinctive (long, or naming an identifier of five letters)."""
    markers: tuple[str, ...]

    @property
    def segments(self) -> tuple[str, ...]:
        """The quote's code between elisions, each in `compact` form (comment lines left out):
        worked out only for the quotes that need looking for beyond their cited lines."""
        found = _SEGMENTS.get(self)
        if found is None:
            found = _SEGMENTS[self] = _segments(list(self.lines), self.markers)
        return found


_SEGMENTS: weakref.WeakKeyDictionary[PreparedQuote, tuple[str, ...]] = weakref.WeakKeyDictionary()


def prepare(written: Sequence[str], language: str) -> PreparedQuote | None:
    """The quote ready to match, or None when it says nothing checkable (no code lines)."""
    markers = comment_markers(language)
    lines: list[QuoteLine] = []
    elided = False
    read = _read_line
    for number, raw in enumerate(written[:MAX_QUOTE_LINES]):
        found = read(raw, markers)
        if found is None:
            continue
        if found is _ELIDED:
            elided = True
            continue
        text, bare, kind, pattern, distinctive = found
        lines.append(QuoteLine(number, text, bare, kind, elided, pattern, distinctive))
        elided = False
    required = sum(1 for line in lines if line.kind == CODE)
    if required == 0:
        return None
    distinctive = sum(1 for line in lines if line.distinctive)
    return PreparedQuote(tuple(lines), required, distinctive, markers)


_ELIDED = ("", "", 0, None, False)


@functools.lru_cache(maxsize=65536)
def _read_line(
    raw: str, markers: tuple[str, ...]
) -> tuple[str, str, int, tuple[str, str] | None, bool] | None:
    """What one written line of a quote is: None for a blank line, `_ELIDED` for an elision,
    else (text, bare, kind, pattern, distinctive). Cached: quotes repeat lines."""
    text = normalise(raw)
    if not text:
        return None
    bare = strip_comment(text, markers)
    if bare.startswith("/*") and bare.endswith("*/") and "//" in markers:
        bare = ""  # a block comment on a line of its own (`/* ... */` elides)
    if _is_elision(text, bare, markers):
        return _ELIDED
    if not bare:
        kind = COMMENT
    elif bare in _FILLERS or len(bare) <= 2:
        kind = FILLER
    else:
        kind = CODE
    pattern = None
    if kind == CODE and ("..." in bare or "…" in bare):
        head, _, tail = bare.replace("…", "...").partition("...")
        tail = tail.rsplit("...", 1)[-1]
        pattern = (head.rstrip(), tail.lstrip())
    distinctive = kind == CODE and (
        len(bare) >= 16
        or (len(bare) >= 10 and any(name not in _KEYWORDS for name in _IDENTIFIER.findall(bare)))
    )
    return text, bare, kind, pattern, distinctive


def _segments(lines: list[QuoteLine], markers: tuple[str, ...]) -> tuple[str, ...]:
    if any(line.pattern is not None for line in lines):
        return ()  # `def f(self, ...):` elides inside a line: leave such quotes to the lines
    pieces = compact_lines([line.text for line in lines], markers)
    segments: list[str] = []
    current: list[str] = []
    for line, piece in zip(lines, pieces, strict=True):
        if line.elided_before and current:
            segments.append("".join(current))
            current = []
        if line.kind != COMMENT:
            current.append(piece)
    if current:
        segments.append("".join(current))
    return tuple(segment for segment in segments if segment)


def _is_elision(text: str, bare: str, markers: tuple[str, ...]) -> bool:
    if text in _ELLIPSIS or bare in _ELLIPSIS:
        return True
    if bare == "pass" and bare != text:
        return True  # `pass  # omitted`
    if not bare:  # a comment-only line: `# ...`, `// 省略`, `# ... (rest omitted)`
        body = text
        for marker in (*markers, "/*", "*/", "#", "//"):
            body = body.replace(marker, " ")
        body = body.strip(" *")
        return not body or _ELISION_WORDS.match(body) is not None
    return False


# -- the file -----------------------------------------------------------------------------------


class FileIndex:
    """A file's lines, normalised and indexed for matching quotes (built lazily, kept per blob
    by the caller: most quotes are copies, which `holds_text` sees in the cited lines alone)."""

    def __init__(self, lines: Sequence[str], markers: tuple[str, ...]) -> None:
        self.lines = lines
        self.markers = markers
        self._by_text: dict[str, list[int]] | None = None
        self._by_bare: dict[str, list[int]] = {}

    @cached_property
    def normalised(self) -> list[str]:
        return list(map(" ".join, map(str.split, self.lines)))  # in C: files are long

    @cached_property
    def skippable(self) -> list[bool]:
        """Lines a quote may leave out without saying so: blank lines, comment-only lines and
        the lines of a docstring (a triple-quoted string standing alone) or, in C's family, of
        a block comment standing alone."""
        skippable = []
        markers = self.markers
        blocks = "//" in markers  # (C's family: `/* ... */` comments too)
        inside: str | None = None
        for text in self.normalised:
            if inside is not None:
                skippable.append(True)
                if text.count(inside) % 2 == 1:
                    inside = None
                continue
            opening = next((q for q in ('"""', "'''") if text.startswith(q)), None)
            if opening is not None:
                skippable.append(True)
                if text.count(opening) % 2 == 1:
                    inside = opening
                continue
            if blocks and text.startswith("/*"):  # a block comment of its own: to its end
                skippable.append(True)
                if "*/" not in text:
                    inside = "*/"
                continue
            skippable.append(not text or text.startswith(markers))
        return skippable

    @cached_property
    def ranks(self) -> list[int]:
        """``ranks[n]``: how many lines up to line ``n`` (1-based) a quote may not leave out
        silently (see `skippable`)."""
        ranks = [0]
        count = 0
        for skip in self.skippable:
            if not skip:
                count += 1
            ranks.append(count)
        return ranks

    def _build(self) -> dict[str, list[int]]:
        by_text: dict[str, list[int]] = {}
        by_bare = self._by_bare
        markers = self.markers
        for number, text in enumerate(self.normalised, 1):
            if not text:
                continue
            by_text.setdefault(text, []).append(number)
            bare = strip_comment(text, markers)
            if bare and bare != text:
                by_bare.setdefault(bare, []).append(number)
        self._by_text = by_text
        return by_text

    def occurrences(self, line: QuoteLine, low: int, high: int) -> list[int]:
        """Lines (1-based, from ``low`` to ``high``) that ``line`` matches."""
        by_text = self._by_text if self._by_text is not None else self._build()
        found: set[int] = set()
        found.update(_between(by_text.get(line.text, ()), low, high))
        if line.bare:
            if line.bare != line.text:
                found.update(_between(by_text.get(line.bare, ()), low, high))
            found.update(_between(self._by_bare.get(line.bare, ()), low, high))
        if line.pattern is not None and len(found) < _MAX_OCCURRENCES:
            head, tail = line.pattern
            normalised = self.normalised
            for number in range(low, high + 1):
                text = normalised[number - 1]
                if (
                    len(text) >= len(head) + len(tail)
                    and text.startswith(head)
                    and text.endswith(tail)
                ):
                    found.add(number)
                    if len(found) >= _MAX_OCCURRENCES:
                        break
        return sorted(found)

    @cached_property
    def compact(self) -> tuple[str, list[int]]:
        """The file as one string of its lines' `compact` forms, and where each line starts in
        it (one more entry: the end), for finding quotes whose statements were reflowed."""
        pieces = compact_lines(self.normalised, self.markers)
        starts = [0]
        for piece in pieces:
            starts.append(starts[-1] + len(piece))
        return "".join(pieces), starts

    @cached_property
    def compact_code(self) -> tuple[str, list[int]]:
        """`compact` without the docstrings' lines (and the other `skippable` ones, which have
        no compact form anyway): for a quote that reflows code and drops its docstring too."""
        pieces = compact_lines(self.normalised, self.markers)
        starts = [0]
        for piece, skip in zip(pieces, self.skippable, strict=True):
            starts.append(starts[-1] + (0 if skip else len(piece)))
        return "".join(
            p for p, skip in zip(pieces, self.skippable, strict=True) if not skip
        ), starts

    def compact_placements(self, quote: PreparedQuote, low: int, high: int) -> list[Placement]:
        """Places between lines ``low`` and ``high`` where every segment of the quote (its
        parts between elisions) appears, in order, in the compact text: each segment starting
        and ending at line boundaries. A reflowed statement (one call over two lines quoted
        over four) is found so, and, looked for in the code without its docstrings when not
        found with them, one whose docstring the quote drops as well."""
        found = self._compact_placements(quote, low, high, self.compact)
        if not found and quote.segments and self.compact_code[0] != self.compact[0]:
            found = self._compact_placements(quote, low, high, self.compact_code)
        return found

    def _compact_placements(
        self, quote: PreparedQuote, low: int, high: int, compacted: tuple[str, list[int]]
    ) -> list[Placement]:
        segments = quote.segments
        if not segments or not segments[0]:
            return []
        text, starts = compacted
        begin, stop = starts[low - 1], starts[high]
        found: list[Placement] = []
        # (The compact text has no comments: a quote's comment lines are not found there.)
        uncommented = sum(1 for line in quote.lines if line.kind != COMMENT)
        first = segments[0]
        position = text.find(first, begin, stop)
        while position != -1 and len(found) < _MAX_OCCURRENCES:
            line = bisect.bisect_right(starts, position) - 1  # 0-based line holding it
            if starts[line] == position:
                last = _segments_from(text, starts, segments, position, stop)
                if last is not None:
                    found.append(
                        Placement(line + 1, last, quote.required, quote.distinctive, uncommented)
                    )
            position = text.find(first, position + 1, stop)
        return found

    def defines_between(self, first: int, last: int) -> bool:
        """Whether a ``def`` or ``class`` header is among lines ``first..last``."""
        return any(
            text.startswith(("def ", "class ", "async def "))
            for text in self.normalised[first - 1 : last]
        )

    def holds_text(self, quote: str, start: int, end: int) -> bool:
        """Whether the quoted text (white space aside) is in the text of lines ``start..end``:
        starting at ``start`` when only one line is cited. Most quotes are such copies, seen so
        with one string search, before the quote is even read into lines."""
        lines = self.lines
        copied = quote.strip()
        if not copied or not 1 <= start <= len(lines):
            return False
        if end > start:
            # A quote copied as the file has it is in the cited lines as it is; white space
            # only needs to be made alike when that fails. Either way it holds whole lines: a
            # quote whose last line stops short (`return loss` of `return loss.item()`) is
            # another claim, for the matcher to judge.
            cited = lines[start - 1 : end]
            if _holds_lines("\n".join(cited), copied):
                return True
            return _holds_lines(_flattened(cited), _flattened(quote.split("\n")))
        wanted = " ".join(quote.split())
        # One cited line: the quote starts there, and runs on over as many whole lines as it
        # needs.
        if not lines[start - 1].strip():
            return False
        length = -1
        for line in itertools.islice(lines, start - 1, None):
            normalised = " ".join(line.split())
            if not normalised:
                continue
            if not wanted.startswith(normalised, length + 1):
                return False
            length += len(normalised) + 1
            if length >= len(wanted):
                return length == len(wanted)
        return False

    def holds_loosely(self, quote: PreparedQuote, start: int, end: int) -> bool:
        """Whether enough of the quote (`ACCEPT_RATIO`) is in the cited lines, looking at those
        lines alone (for one cited line: at the lines around it that a quote could span)."""
        if start == end:
            reach = len(quote.lines) + 4
            low, high = max(1, start - reach), start + reach
        else:
            low, high = start, end
        window = FileIndex(self.lines[low - 1 : high], self.markers)
        return any(
            covers(place, start - low + 1, end - low + 1)
            for place in placements(quote, window, ratio=ACCEPT_RATIO)
        )

    def holds_in_order(self, quote: PreparedQuote, start: int, end: int) -> bool:
        """`span_in_order` found a span."""
        return self.span_in_order(quote, start, end) is not None

    def span_in_order(self, quote: PreparedQuote, start: int, end: int) -> tuple[int, int] | None:
        """Whether every line of the quote is in lines ``start..end``, in order, as written:
        each next to the previous (blank and comment-only file lines aside), but where the
        quote elides. The common case, decided without building the index; False only means
        that `placements` must look closer."""
        normalised = self.normalised
        position = start - 1
        last = min(end, len(normalised))
        seeking = True  # the first line may be anywhere in the range
        first = None
        for line in quote.lines:
            seeking = seeking or line.elided_before
            before = position
            while position < last:
                text = normalised[position]
                if text and (text == line.text or _same(line, text, self.markers)):
                    break
                if seeking or not text or self.skippable[position]:
                    position += 1
                    continue
                position = last  # a different line where the next quoted one should be
            if position >= last:
                if line.kind == CODE:
                    return None
                # A comment or filler not in the range: the author's own, or the file's just
                # outside the range (then the quote is not inside it): `placements` tells.
                if before == start - 1 or before >= last:
                    return None
                position = before
                continue
            if first is None:
                first = position + 1
            position += 1
            seeking = False
        return (first, position) if first is not None else None


def _same(line: QuoteLine, text: str, markers: tuple[str, ...]) -> bool:
    if text == line.text:
        return True
    bare = line.bare
    if not bare:
        return False
    if text == bare or strip_comment(text, markers) == bare:
        return True
    if line.pattern is not None:
        head, tail = line.pattern
        return len(text) >= len(head) + len(tail) and text.startswith(head) and text.endswith(tail)
    return False


def _segments_from(
    text: str, starts: list[int], segments: tuple[str, ...], position: int, stop: int
) -> int | None:
    """The last line (1-based) of the quote's segments found in order from ``position``, each
    ending at a line boundary, or None."""
    end = position
    for number, segment in enumerate(segments):
        if number > 0:
            position = text.find(segment, end, stop)
            while position != -1 and starts[bisect.bisect_right(starts, position) - 1] != position:
                position = text.find(segment, position + 1, stop)
            if position == -1:
                return None
        end = position + len(segment)
        boundary = bisect.bisect_left(starts, end)
        if boundary >= len(starts) or starts[boundary] != end:
            return None
    # The line ending there; empty lines (blank or comment-only) end at the same offset.
    return bisect.bisect_left(starts, end)


_TRAILING_COMMA = lazy_pattern(r",(?=[)\]}])")


def compact(text: str, markers: tuple[str, ...]) -> str:
    """A normalised line without its comment, white space and trailing commas before a
    closing bracket: the form in which reflowed code still reads the same."""
    bare = strip_comment(text, markers)
    if not bare:
        return ""
    if "\\" in bare:
        bare = _CONTINUATION.sub("", bare)
    return _TRAILING_COMMA.sub("", "".join(bare.split()))


_CONTINUATION = re.compile(r"\\(?=\s|$)")
"""A backslash that continues a line (shell, Python, C's macros): joined, the line needs none."""


def compact_lines(lines: Sequence[str], markers: tuple[str, ...]) -> list[str]:
    """`compact` of each line, with a comma that ends a line dropped when the next code line
    starts with a closing bracket (``f(a,\n)`` reads as ``f(a)``)."""
    pieces = [compact(text, markers) for text in lines]
    following = ""
    for number in range(len(pieces) - 1, -1, -1):
        piece = pieces[number]
        if not piece:
            continue
        if piece.endswith(",") and following[:1] in (")", "]", "}"):
            pieces[number] = piece[:-1]
        following = piece
    return pieces


def _between(numbers: Sequence[int], low: int, high: int) -> Sequence[int]:
    if not numbers or (numbers[0] >= low and numbers[-1] <= high):
        return numbers
    return numbers[bisect.bisect_left(numbers, low) : bisect.bisect_right(numbers, high)]


# -- matching -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    """A place in the file where the quote matches."""

    first: int
    last: int
    """The span (1-based, inclusive) from the first matched line to the last."""
    matched: int
    """Required lines found there."""
    distinctive: int
    """Distinctive lines found there."""
    lines: int = 0
    """Quote lines found there, comments and fillers (``return True``) included."""

    def inside(self, start: int, end: int) -> bool:
        return start <= self.first and self.last <= end


def placements(
    quote: PreparedQuote,
    index: FileIndex,
    low: int = 1,
    high: int | None = None,
    ratio: float = MATCH_RATIO,
) -> list[Placement]:
    """Every place between lines ``low`` and ``high`` where at least ``ratio`` of the quote's
    required lines are found, best first (most found), then in file order; overlapping places
    are one place, the best."""
    low = max(low, 1)
    high = len(index.lines) if high is None else min(high, len(index.lines))
    if high < low:
        return []
    pairs: list[tuple[int, int]] = []  # (quote line index, file line)
    for position, line in enumerate(quote.lines):
        found = index.occurrences(line, low, high)
        if len(found) > _MAX_OCCURRENCES:
            continue  # too common to place anything (a required one costs the quote a line)
        pairs.extend((position, number) for number in found)
        if len(pairs) > _MAX_PAIRS:
            break
    good = index.compact_placements(quote, low, high)
    if pairs:
        needed = _needed(quote.required, ratio)
        good += [chain for chain in _chains(quote, index, pairs) if chain.matched >= needed]
    # Of places that find as much, the one that finds the most of the quote's lines (its
    # closing `return True` too), then the tightest: a filler the quote ends with may also
    # match a line further on (the next function's `return True`), which is not the quote's.
    good.sort(key=lambda p: (-p.matched, -p.distinctive, -p.lines, p.first, p.last - p.first))
    kept: list[Placement] = []
    for placement in good:
        if all(placement.last < other.first or placement.first > other.last for other in kept):
            kept.append(placement)
    return kept


def best_partial(quote: PreparedQuote, index: FileIndex) -> Placement | None:
    """The place that matches the most required lines, even too few to be a match (to say how
    close the file comes)."""
    pairs = []
    for position, line in enumerate(quote.lines):
        found = index.occurrences(line, 1, len(index.lines))
        if len(found) <= _MAX_OCCURRENCES:
            pairs.extend((position, number) for number in found)
    if not pairs:
        return None
    chains = _chains(quote, index, pairs[:_MAX_PAIRS])
    return max(chains, key=lambda p: (p.matched, p.distinctive, -p.first), default=None)


def _needed(required: int, ratio: float) -> int:
    """Required lines to find for a match: all of one or two, ``ratio`` of more (at least 2)."""
    if required <= 2:
        return required
    return max(2, -(-round(required * ratio * 100) // 100))


def _chains(
    quote: PreparedQuote, index: FileIndex, pairs: list[tuple[int, int]]
) -> list[Placement]:
    """The best in-order chain of matched lines ending at each pair, as placements."""
    pairs.sort()
    lines = quote.lines
    ranks = index.ranks
    count = len(pairs)
    score = [0] * count  # required lines matched by the chain ending here
    weight = [0] * count  # distinctive lines matched
    every = [0] * count  # lines matched, comments and fillers included
    origin = [0] * count  # the file line the chain starts at
    # Which quote lines have an elision before them since line j: a prefix count.
    elisions = [0]
    for line in lines:
        elisions.append(elisions[-1] + (1 if line.elided_before else 0))
    for k in range(count):
        i, p = pairs[k]
        line = lines[i]
        own = 1 if line.kind == CODE else 0
        own_weight = 1 if line.distinctive else 0
        best, best_weight, best_every, start = 0, 0, 0, p
        for m in range(k - 1, -1, -1):
            j, q = pairs[m]
            if j >= i or q >= p:
                continue
            # With no elision between, the file may skip at most SLACK non-blank lines more than
            # the quote does.
            if elisions[i + 1] == elisions[j + 1] and ranks[p] - ranks[q] > (i - j) + SLACK:
                continue
            # The most required lines, then distinctive ones, then any (a quoted comment or
            # closing bracket belongs to the place it is found at).
            if (score[m], weight[m], every[m]) > (best, best_weight, best_every):
                best, best_weight, best_every, start = score[m], weight[m], every[m], origin[m]
        score[k] = best + own
        weight[k] = best_weight + own_weight
        every[k] = best_every + 1
        origin[k] = start
    return [
        Placement(origin[k], pairs[k][1], score[k], weight[k], every[k])
        for k in range(count)
        if score[k] > 0
    ]


# -- the verdict --------------------------------------------------------------------------------

IN_RANGE, ELSEWHERE, NOWHERE, UNDECIDED = "in-range", "elsewhere", "nowhere", "undecided"


@dataclass(frozen=True, slots=True)
class QuoteVerdict:
    outcome: str
    """`IN_RANGE`, `ELSEWHERE` (see `places`), `NOWHERE` or `UNDECIDED`."""
    places: tuple[Placement, ...] = ()
    """For `ELSEWHERE`: where the quote matches (none of them inside the cited lines). For
    `IN_RANGE` with only some of the quote's lines in order in the cited ones: where they are,
    then the other places in the file that hold at least `ACCEPT_RATIO` of it."""
    strong: bool = False
    """Whether the quote is strong enough evidence to report or rewrite on."""


def is_strong(quote: PreparedQuote, place: Placement | None = None) -> bool:
    """Strong evidence: at least two distinctive lines (found at ``place``, when given), or one
    distinctive line among three or more required lines found."""
    if place is None:
        return quote.distinctive >= 2 or (quote.distinctive >= 1 and quote.required >= 3)
    return place.distinctive >= 2 or (place.distinctive >= 1 and place.matched >= 3)


def covers(place: Placement, start: int, end: int) -> bool:
    """Whether a placement agrees with the cited lines: inside the range, or, for a single
    cited line, a quote that holds that line (`actor.py:233` followed by its function)."""
    if start == end:
        return place.first <= start <= place.last
    return place.inside(start, end)


def judge(quote: PreparedQuote, index: FileIndex, start: int, end: int) -> QuoteVerdict:
    """Where the quote stands against the cited lines ``start..end`` of the indexed file:

    - `IN_RANGE` when a place holding at least `ACCEPT_RATIO` of it agrees with them (that
      place given when it holds only part of the quote), unless that place holds only part of
      it and other places hold it whole: then `ELSEWHERE`, at those;
    - `ELSEWHERE` when none does, and the quote matches (`MATCH_RATIO`) at other places;
    - `NOWHERE` when nothing in the file comes even to `ACCEPT_RATIO`;
    - `UNDECIDED` otherwise (only a loose likeness elsewhere: an edited quote, or code that
      changed since): nothing to report.
    """
    if start < end and index.holds_in_order(quote, start, end):
        return QuoteVerdict(IN_RANGE, strong=is_strong(quote))
    if start == end:  # one cited line: most often the first line of the quoted code
        span = index.span_in_order(quote, start, start + 3 * len(quote.lines) + SLACK)
        if span is not None and span[0] <= start <= span[1]:
            return QuoteVerdict(IN_RANGE, strong=is_strong(quote))
    loose = placements(quote, index, ratio=ACCEPT_RATIO)
    covering = next((place for place in loose if covers(place, start, end)), None)
    if covering is None and start < end:
        # The best place runs out of the cited lines into the next definition, holding the
        # quote only in part (a line the quote moved, found again in the next function): the
        # quote is about the cited lines, what they hold of it in order is where it stands.
        astray = [
            place
            for place in loose
            if place.matched < quote.required
            and place.first <= end < place.last
            and index.defines_between(end + 1, place.last)
        ]
        inside = placements(quote, index, start, end, ACCEPT_RATIO) if astray else []
        if inside:
            covering = inside[0]
            loose = [covering, *(place for place in loose if place not in astray)]
    if covering is not None:
        others = tuple(place for place in loose if place is not covering)
        whole = tuple(place for place in others if place.matched >= quote.required)
        if covering.matched < quote.required and whole:
            # Only in part here, whole at other lines: the quote shows that code (a mirror
            # function, `offload` quoted at `reload`, shares most of its lines), not these.
            return QuoteVerdict(ELSEWHERE, whole, strong=is_strong(quote, whole[0]))
        return QuoteVerdict(IN_RANGE, (covering, *others), strong=is_strong(quote))
    if not loose:
        return QuoteVerdict(NOWHERE, strong=is_strong(quote))
    needed = _needed(quote.required, MATCH_RATIO)
    found = tuple(place for place in loose if place.matched >= needed)
    if not found:
        return QuoteVerdict(UNDECIDED, strong=False)
    return QuoteVerdict(ELSEWHERE, found, strong=is_strong(quote, found[0]))

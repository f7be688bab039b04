"""What a page says the lines it cites contain: a reference's evidence (`Evidence`).

For every reference with a line range, from the page's text alone:

- the code it *quotes*: a fenced block directly after the line holding the reference (blank
  lines and up to two short caption lines between them allowed; not when a caption right
  after the block claims it, nor for a list item when a paragraph of its own introduces the
  block), directly before it (blank lines and one caption line between; with a blank line
  between, not when a line above introduces the block, ``looks like this:``, unless the
  reference is a caption and nothing else), or, when the reference is a comment line of its
  own inside a block (``# slime/x.py:10-20``), the lines after that comment up to the next such
  line or the end of the block. A block is a quote only when its language is the cited file's
  (or it has none) and it is not a diagram (Mermaid, or box drawing in a plain block) nor
  what a program printed (a caption saying output, log, traceback, 输出, 日志...; a plain
  block starting with a shell or Python prompt or a traceback); a line holding several
  references quotes nothing, as it cannot say whose code follows;
- the identifiers and calls it *names* around the reference: code spans in the same sentence,
  list item or table row (``self.model.train()``), when the line holds no other reference;
- the symbol named by the heading it sits under (`heading_symbol`), on request.

The symbol named right next to a reference stays with the reference (`CodeRef.symbol`).
"""

from __future__ import annotations

import bisect
import functools
import keyword
import re
from collections import Counter
from collections.abc import Sequence

from generator.model import Evidence, Quote, RefForm
from generator.patterns import lazy_pattern
from generator.refs.extract.links import extract_headings
from generator.refs.extract.markdown import Fence, MarkdownLayout
from generator.refs.extract.refs import KNOWN_EXTENSIONS, RefRecord
from generator.refs.quote import could_be_evidence, language_of

_MAX_CAPTION_LINES = 2
_MAX_CAPTION_LENGTH = 160
_MAX_NAMES = 8
_DIAGRAM = lazy_pattern(
    r"[\u2500-\u257f\u2190-\u21ff\u25b2\u25ba\u25bc\u25c4]|^\s*\+[-=]{2,}", re.M
)
_NAME = lazy_pattern(
    r"^(?:(?:async\s+)?def\s+|class\s+)?"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*)"
    r"(?:\([^()]*\))?;?$"
)
_NOT_NAMES = frozenset(keyword.kwlist) | {
    "self",
    "cls",
    "True",
    "False",
    "None",
    "int",
    "str",
    "float",
    "bool",
    "list",
    "dict",
    "tuple",
    "set",
    "bytes",
    "object",
    "null",
    "true",
    "false",
    "nullptr",
    "void",
    "auto",
}
_SENTENCE_END = lazy_pattern(r"[。；;！？!?]|\.\s")
_HEADING_CALL = lazy_pattern(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)\("
)
_CODE_SPAN = lazy_pattern(r"`([^`\n]+)`")

# Languages by family: a fence quotes a file when its language is the file's (or it has none).
_FAMILIES: dict[str, str] = {}
for _family, _names in {
    "python": "py pyi pyx pxd python python3 py3 ipython pycon sage",
    "c": "c h cc cpp cxx c++ hh hpp hxx cu cuh cuda metal objc m mm",
    "rust": "rs rust",
    "go": "go golang",
    "java": "java",
    "kotlin": "kt kotlin",
    "scala": "scala",
    "javascript": "js mjs cjs javascript jsx node",
    "typescript": "ts tsx typescript",
    "shell": "sh bash zsh shell shell-script shellscript",
    "yaml": "yaml yml",
    "toml": "toml",
    "json": "json jsonl jsonc",
    "ini": "ini cfg conf",
    "lua": "lua",
    "ruby": "rb ruby",
    "sql": "sql",
    "proto": "proto protobuf",
    "cmake": "cmake",
    "make": "mk make makefile gnumakefile",
    "docker": "docker dockerfile containerfile",
    "markdown": "md markdown",
    "rst": "rst restructuredtext rest",
    "triton": "triton",
}.items():
    for _name in _names.split():
        _FAMILIES[_name] = _family


def family(language_or_extension: str) -> str:
    """The language family of a fence's language or a file's extension (itself if unknown)."""
    key = language_or_extension.lower()
    return _FAMILIES.get(key, key)


@functools.lru_cache(maxsize=4096)
def quotes_language(fence_language: str, path: str) -> bool:
    """Whether a block in ``fence_language`` can quote the file ``path``."""
    if not fence_language:
        return True
    fence = family(fence_language)
    extension = path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
    return fence == family(language_of(path)) or (bool(extension) and fence == family(extension))


def collect_evidence(
    layout: MarkdownLayout,
    records: Sequence[RefRecord],
    headings: bool = False,
    weak: bool = True,
) -> dict[int, Evidence]:
    """The evidence of each reference that has any, by its index in ``records``. With
    ``weak=False``, quotes too short ever to be acted on (`could_be_evidence`) are left out: the
    verifier never reports on them, so it need not carry them."""
    ranged = [index for index, record in enumerate(records) if record[5] is not None]
    if not ranged:
        return {}
    quotes = _quotes(layout, records, ranged, weak) if layout.fences else {}
    if not weak and quotes:  # (whole blocks were looked at already; sections of blocks not)
        quotes = {
            i: q
            for i, q in quotes.items()
            if q.placement != "inside" or q.unterminated or could_be_evidence(q.text)
        }
    names = _names(layout, records, ranged) if layout.code_span_starts else {}
    found: dict[int, Evidence] = {}
    heading_of = _HeadingIndex(layout) if headings else None
    for index in ranged:
        quote = quotes.get(index)
        named, claim, subject = names.get(index, ((), True, None))
        heading = heading_of.symbol_at(records[index][0]) if heading_of is not None else None
        if quote is not None or named or heading is not None:
            found[index] = Evidence(quote, named, heading, claim, subject)
    return found


# -- quotes -------------------------------------------------------------------------------------


def _quotes(
    layout: MarkdownLayout, records: Sequence[RefRecord], ranged: list[int], weak: bool = True
) -> dict[int, Quote]:
    outside = [i for i in ranged if not records[i][12]]
    # A link's text citing what its permalink does (`[x.py:3-9](…/x.py#L3-L9)`) is one citation
    # written twice: a quote after it is the permalink's, and the text's too.
    labels = _labels(records, outside)
    counted = [i for i in outside if i not in labels] if labels else outside
    per_line = Counter(records[i][0] for i in counted)
    ref_lines = sorted(per_line)
    by_line = {records[i][0]: i for i in counted}
    quotes: dict[int, Quote] = {}
    claimed: set[int] = set()  # fences already quoted for a reference
    fences = [_FenceLines(layout, fence) for fence in layout.fences]
    if not weak:  # a block without two lines of code holds no quote worth carrying
        text = layout.text
        fences = [
            fence for fence in fences if fence.unterminated or could_be_evidence(text, *fence.body)
        ]

    inside = sorted((records[i][0], i) for i in ranged if records[i][12])
    if inside:
        lines_inside = [line for line, _ in inside]
        for position, fence in enumerate(fences):
            low = bisect.bisect_left(lines_inside, fence.open_line + 1)
            high = bisect.bisect_right(lines_inside, fence.open_line + fence.count, low)
            if low == high:
                continue
            sections = _comment_sections(layout, fence, records, [i for _, i in inside[low:high]])
            if sections:
                claimed.add(position)
                quotes.update(sections)

    # After a reference: the nearest reference line above the fence, with only blank lines or
    # short captions between.
    for position, fence in enumerate(fences):
        if position in claimed or not fence.quotable:
            continue
        above = bisect.bisect_left(ref_lines, fence.open_line) - 1
        if above < 0:
            continue
        line = ref_lines[above]
        if per_line[line] != 1 or not _gap_ok(
            layout, line + 1, fence.open_line - 1, _MAX_CAPTION_LINES
        ):
            continue
        index = by_line[line]
        if index in quotes or not quotes_language(fence.language, records[index][4]):
            continue
        if _introduces_no_quote(layout, line):
            continue  # "Running x.py:10-20 prints:", "... fix:": its output, or code proposed
        if _captioned_below(layout, fence, records, ref_lines, per_line, by_line):
            continue  # a sentence, the block, then the block's own caption: the caption's
        if (
            line + 1 < fence.open_line
            and _in_list_item(layout, line)
            and not _gap_ok(layout, line + 1, fence.open_line - 1, 0)
        ):
            continue  # a list item, then a paragraph of its own introducing the block
        quotes[index] = fence.quote("after")
        claimed.add(position)

    # Before a reference, for one that has no quote yet.
    for position, fence in enumerate(fences):
        if position in claimed or not fence.quotable or fence.unterminated:
            continue
        below = bisect.bisect_right(ref_lines, fence.close_line)
        if below >= len(ref_lines):
            continue
        line = ref_lines[below]
        if per_line[line] != 1 or not _gap_ok(layout, fence.close_line + 1, line - 1, 1):
            continue
        index = by_line[line]
        if index in quotes or not quotes_language(fence.language, records[index][4]):
            continue
        if not _is_caption(layout, line, records[index]):
            continue
        if (
            line > fence.close_line + 1
            and _introduced(layout, fence.open_line)
            and not _caption_only(layout, line, records[index])
        ):
            # "A causal mask looks like this:", the block, then a paragraph of its own citing
            # other code: the block is the line above's, not the reference's.
            continue
        quotes[index] = fence.quote("before")
        claimed.add(position)
    for label, link in labels.items():
        if link in quotes:
            quotes[label] = quotes[link]
    return quotes


def _labels(records: Sequence[RefRecord], indexes: list[int]) -> dict[int, int]:
    """The references among ``indexes`` written as the text of a link to a permalink on their
    line (which gave them its revision: `generator.refs.extract.refs`), with that permalink's."""
    texts = [i for i in indexes if records[i][8] and records[i][3] is not RefForm.PERMALINK]
    if not texts:  # (nearly every page: looked for in one pass)
        return {}
    links = {
        (records[i][0], records[i][8], records[i][10]): i
        for i in indexes
        if records[i][3] is RefForm.PERMALINK
    }
    return {
        i: links[key]
        for i in texts
        if (key := (records[i][0], records[i][8], records[i][10])) in links
    }


class _FenceLines:
    """A fenced block: where its content starts and ends in the page, its lines split only
    when someone reads them (a comment reference inside it)."""

    __slots__ = (
        "_layout",
        "body",
        "count",
        "depth",
        "fence",
        "language",
        "open_line",
        "unterminated",
    )

    def __init__(self, layout: MarkdownLayout, fence: Fence) -> None:
        self._layout = layout
        self.fence = fence
        self.language = fence.language
        self.open_line = layout.position(fence.start)[0]
        start, end = fence.body_start, fence.body_end
        self.body = (start, end)
        self.count = 0 if end <= start else layout.text.count("\n", start, end) + 1
        self.unterminated = not fence.closed
        # A fence in a block quote (``> ```python``): every line of it starts with the markers.
        opening = layout.text[fence.start : fence.body_start or fence.end]
        self.depth = opening[: len(opening) - len(opening.lstrip(" \t>"))].count(">")

    @property
    def content(self) -> list[str]:
        start, end = self.body
        if end <= start:
            return []
        lines = self._layout.text[start:end].split("\n")
        return [unquoted(line.removesuffix("\r"), self.depth) for line in lines]

    @property
    def close_line(self) -> int:
        return self.open_line + self.count + 1

    @property
    def quotable(self) -> bool:
        language = self.language
        if language == "mermaid":
            return False
        fence = self.fence
        text = self._layout.text
        start, end = self.body
        if end > start:
            newline = text.find("\n", start, end)
            first = text[start : newline if newline != -1 else end]
            if self.depth:  # in a block quote: its first line without the markers
                first = unquoted(first, self.depth)
            if _OUTPUT_START.match(first) is not None:
                return False  # a session (`$ python train.py`, `>>> f()`), not code of the file
            # (The whole block is read only when its first line may start a log or a diff.)
            if (
                not first.strip()
                or _LOG_LINE.match(first)
                or (not language and first[:1] in "d-I@")
            ):
                content = self.content
                if _is_log(content):
                    return False  # what a program logged (`[rank3]:[E ...]`, `x.cu(12): error`)
                if not language and _is_diff(content):
                    return False  # a change to the code, not the code
        if language:
            return True
        return _DIAGRAM.search(text, fence.start, fence.end) is None

    def quote(self, placement: str) -> Quote:
        """The whole block as a quote, sliced from the page."""
        return _quote(
            self._layout,
            self.open_line + 1,
            self.body,
            self.language,
            placement,
            self.unterminated,
            self.depth,
        )


def _comment_sections(
    layout: MarkdownLayout, fence: _FenceLines, records: Sequence[RefRecord], inside: list[int]
) -> dict[int, Quote]:
    """References (``inside``: those in the fence) that are comment lines of their own, each
    quoting the lines after it (up to the next such line or the end of the block)."""
    if not fence.quotable:
        return {}
    first_line = fence.open_line + 1
    own: list[tuple[int, int]] = []  # (content index, record index)
    per_line = Counter(records[i][0] for i in inside) if len(inside) > 1 else None
    content = fence.content
    for index in inside:
        line = records[index][0]
        if per_line is not None and per_line[line] != 1:
            continue
        if not 0 <= line - first_line < len(content):
            continue
        written = content[line - first_line]
        if _only_reference(written, records[index][2]):
            own.append((line - first_line, index))
    if not own:
        return {}
    own.sort()
    sections: dict[int, Quote] = {}
    for number, (offset, index) in enumerate(own):
        if not quotes_language(fence.language, records[index][4]):
            continue
        end = own[number + 1][0] if number + 1 < len(own) else len(content)
        if end > offset + 1:
            starts = layout.line_starts
            span = (
                starts[first_line + offset],
                layout.line_bounds(starts[first_line + end - 2])[1],  # to the last line's end
            )
            sections[index] = _quote(
                layout,
                first_line + offset + 1,
                span,
                fence.language,
                "inside",
                fence.unterminated,
                fence.depth,
            )
    return sections


def _quote(
    layout: MarkdownLayout,
    line: int,
    span: tuple[int, int],
    language: str,
    placement: str,
    unterminated: bool,
    depth: int,
) -> Quote:
    text = quoted_text(layout.text, span, depth)
    return Quote(line, text, language, placement, unterminated, span, depth)


def quoted_text(page: str, span: tuple[int, int], depth: int = 0) -> str:
    """The text of a quote at ``span`` of the page's text, inside ``depth`` block quotes,
    without the line numbers a paste from an editor or a viewer put before its lines."""
    text = page[span[0] : span[1]]
    if "\r" in text:
        text = text.replace("\r\n", "\n").removesuffix("\r")
    if depth:
        text = "\n".join(unquoted(line, depth) for line in text.split("\n"))
    if text[:12].lstrip()[:1].isdigit():
        text = _without_line_numbers(text)
    return text


_LINE_NUMBER = lazy_pattern(r"[ \t]*(\d{1,7})(?:[ \t]*[:|│┃][ \t]?|[ \t]|$)")
"""A line number a paste put before a line of code (``41 def f():``, ``41 | x``, ``41:  x``),
with what separates it from the code."""


def _without_line_numbers(text: str) -> str:
    """``text`` without the numbers before its lines, when every line but blank ones starts
    with one and they count up one by one (``41 def f():``, ``42     return 1``): a paste with
    line numbers, whose code is what the page quotes. Any other text as it is."""
    lines = text.split("\n")
    stripped = []
    last, blanks = None, 0
    for line in lines:
        if not line.strip():
            stripped.append(line)  # (a blank line of the code, its number left out or not)
            blanks += 1
            continue
        match = _LINE_NUMBER.match(line)
        if match is None:
            return text
        number = int(match.group(1))
        if last is not None and number not in (last + 1, last + 1 + blanks):
            return text
        last, blanks = number, 0
        stripped.append(line[match.end() :])
    if sum(1 for line in lines if line.strip()) < 2:
        return text
    return "\n".join(stripped)


_QUOTE_MARKER = lazy_pattern(r"[ \t]{0,3}>[ \t]?")


def unquoted(line: str, depth: int) -> str:
    """``line`` of a block nested ``depth`` block quotes deep, without their ``>`` markers."""
    for _ in range(depth):
        marker = _QUOTE_MARKER.match(line)
        if marker is None:
            break
        line = line[marker.end() :]
    return line


_COMMENT_START = lazy_pattern(r"^\s*(?:#+|//+|--|%%|/\*+|\*)\s*")


def _only_reference(line: str, reference: str) -> bool:
    """Whether a code line is a comment holding the reference and at most a few words."""
    match = _COMMENT_START.match(line)
    if match is None:
        return False
    rest = line[match.end() :].replace(reference, " ", 1).strip(" */:：-—()（）[]`")
    return len(rest) <= 40 and "=" not in rest


_LIST_ITEM = lazy_pattern(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")
_OUTPUT = lazy_pattern(
    r"""(?:(?:sample|example|expected|console|terminal|program|training|full|its|the)[ \t]+)*
    (?:output|logs?|traceback|stack[ \t]?trace|stdout|stderr|results?)
    |(?:running|run|calling|executing)[ \t]+(?:it|this|that|the[ \t]+\w+)[ \t]+
    (?:prints|outputs|gives|shows|logs)
    |(?:it|this|which|that)[ \t]+(?:prints|outputs|logs)
    |(?:[\u4e00-\u9fff]{1,6}?(?:时|后|中|里)的?)?
    (?:运行|执行|程序|训练|示例|样例|终端|控制台)?的?(?:结果|输出|日志|报错|错误信息|堆栈)(?:如下|是|为)?
    |(?:输出|打印)(?:如下|为)""",
    re.IGNORECASE | re.VERBOSE,
)
"""A caption that introduces what a program printed, not its code, as a whole (emphasis and
a colon aside): ``Output:``, ``Running it prints:``, ``运行结果如下：``, ``出错时日志如下：``;
not ``The function that builds the output:`` nor ``计算最终结果：``, which introduce code."""
_OUTPUT_AFTER_REFERENCE = lazy_pattern(
    r"(?:\b(?:prints|outputs|logs)|的?(?:输出|运行结果|日志)(?:如下)?)[ \t*_]*[:：][ \t*_]*$",
    re.IGNORECASE,
)
"""How the line of a reference ends when the block after it is what running the code printed
(``Running lib/x.py:10-20 prints:``, ``运行 lib/x.py:10-20 的输出如下：``)."""
_OUTPUT_START = lazy_pattern(
    r"[ \t]*(?:\$ |>>> |Traceback \(most recent call last\)|In \[\d*\]:"
    r"|\([\w.-]+\)[ \t]?\$ |[\w.-]+@[\w.-]+(?::\S*)?[ \t]?[$#] |PS [A-Za-z]:\\[^>]*> "
    r"|\((?:cuda-)?gdb\) |\(Pdb\) )"
)
"""How a block of a session's output starts, in any language: a shell prompt (``$ ``,
``(env) $ ``, ``alice@node0:~/megatron$ ``, ``root@node0:~# ``), Python's, a debugger's
(``(cuda-gdb) ``, ``(Pdb) ``), a traceback."""
_LOG_LINE = lazy_pattern(
    r"""[ \t]*(?:
    \[?\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}                # 2025-01-03 12:30:01, [2025-01-03T12:30
    |\[?\d{1,2}:\d{2}:\d{2}\b                          # 12:30:01
    |[IWEF]\d{4}[ \t]+\d{1,2}:\d{2}:\d{2}              # glog: I0103 12:30:01.123456
    |\[(?:rank|RANK|worker|node|gpu|GPU|device|proc)?[ \t]?\d+\]  # [rank3]:, [0]:
    |\[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE)(?:\]|:|[ \t]+(?![ \t]*=))
    |File[ \t]+"[^"]*",[ \t]+line[ \t]+\d+               # a traceback's frame
    |Traceback[ \t]+\(most[ \t]+recent
    |[A-Z]\w*(?:Error|Exception|Warning):[ \t]           # RuntimeError: ...
    |\S+?(?:\(\d+\)|:\d+(?::\d+)?):[ \t]*(?:fatal[ \t]+)?(?:error|warning|note|remark)\b
                                                        # x.cu(12): error, x.cpp:12:5: warning
    |(?:make|gmake)(?:\[\d+\])?:[ \t]                  # make: *** [all] Error 2
    |CMake[ \t](?:Error|Warning|Deprecation)
    |\S+:[ \t](?:In[ \t](?:member[ \t])?function|In[ \t]instantiation|At[ \t]global[ \t]scope)
    |In[ \t]file[ \t]included[ \t]from[ \t]
    |==[A-Z]+==|={5,}[ \t]                              # ncu's ==PROF==, compute-sanitizer
    |(?:ninja|collect2|nvcc|ptxas|ld|/usr/bin/ld)(?:[ \t]fatal)?:[ \t]
    )""",
    re.VERBOSE,
)
"""How a line a program logged starts: a time stamp, a process's rank, a level, a traceback's
frame or its error; no line of code starts so."""


_DIFF_START = lazy_pattern(r"diff --git |Index: |@@ -\d")


def _is_diff(lines: Sequence[str]) -> bool:
    """Whether a block is a change to code, as ``git diff`` writes one: its first line that is
    not blank starts a diff (``diff --git``, ``@@ -12,7``), or it opens with the ``---`` and
    ``+++`` lines of the two files."""
    written = [line for line in lines if line.strip()]
    if not written:
        return False
    if _DIFF_START.match(written[0]):
        return True
    return len(written) > 1 and written[0].startswith("--- ") and written[1].startswith("+++ ")


_LOG_EXCERPT = lazy_pattern(
    r"[ \t]*(?:\d+[ \t]+\|[ \t]|\|[ \t]+[\^~]|\^[~^]*[ \t]*$|\d+ errors? detected\b)"
)
"""The lines a compiler shows under its message: the code (``   12 |   f();``) and a caret
under it (``  |   ^~~``, nvcc's ``    ^``), and its count (``1 error detected``)."""


def _is_log(lines: Sequence[str]) -> bool:
    """Whether a block's lines are what a program logged: its first line that is not blank and
    at least half of them are log lines (`_LOG_LINE`, or a compiler's excerpt after one)."""
    written = [line for line in lines if line.strip()]
    if not written or _LOG_LINE.match(written[0]) is None:
        return False
    logged = sum(1 for line in written if _LOG_LINE.match(line) or _LOG_EXCERPT.match(line))
    return 2 * logged >= len(written)


_PROPOSAL = lazy_pattern(
    r"\b(?:fix(?:ed)?|suggest(?:ed|ion)?|proposed?|instead|should|could|patch|diff|after|"
    r"rewrite|replace(?:ment)?|better|alternative)\b|建议|修复|改为|改成|应该|可以改|替换|修改后|优化后",
    re.IGNORECASE,
)


def _gap_ok(layout: MarkdownLayout, first: int, last: int, captions: int) -> bool:
    """Whether page lines ``first..last`` are blank but for at most ``captions`` short lines
    that are not headings, do not start a list item of their own (the block would be that
    item's) and do not introduce code of the author's (``**Fix**:``, ``建议改为：``)."""
    if last < first:
        return True
    if last - first + 1 > captions + 3:
        return False
    text = layout.text
    starts = layout.line_starts
    seen = 0
    for line in range(first, last + 1):
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(text)
        written = text[start:end].strip()
        if not written:
            continue
        seen += 1
        if seen > captions or len(written) > _MAX_CAPTION_LENGTH or written.startswith("#"):
            return False
        if _LIST_ITEM.match(written) or _PROPOSAL.search(written) or _is_output(written):
            return False
    return True


def _in_list_item(layout: MarkdownLayout, line: int) -> bool:
    """Whether the page line ``line`` starts a list item."""
    start = layout.line_starts[line - 1]
    return _LIST_ITEM.match(layout.text, start) is not None


def _captioned_below(
    layout: MarkdownLayout,
    fence: _FenceLines,
    records: Sequence[RefRecord],
    ref_lines: list[int],
    per_line: Counter[int],
    by_line: dict[int, int],
) -> bool:
    """Whether a reference after the block is its caption (`_caption_only`), right after it
    or after a blank line: it says which lines the block shows, more plainly than a sentence
    before the block can, even one that ends with a colon."""
    if fence.unterminated:
        return False
    below = bisect.bisect_right(ref_lines, fence.close_line)
    if below >= len(ref_lines):
        return False
    line = ref_lines[below]
    if line > fence.close_line + 2 or per_line[line] != 1:
        return False
    record = records[by_line[line]]
    return (
        _caption_only(layout, line, record)  # (first: most lines are sentences)
        and _gap_ok(layout, fence.close_line + 1, line - 1, 0)
        and quotes_language(fence.language, record[4])
    )


_CAPTION_ROOM = 60
"""Characters besides its reference a caption's line has at most (`_is_caption` allows 40 of
words, and markers and white space come on top)."""
_BACK = lazy_pattern(
    r"(?:that|this|these|those)[ \t]+(?:is|are|shows?)[ \t]+(?:the[ \t]+)?(?:`|in\b|at\b|from\b|$)"
    r"|(?:the[ \t]+)?(?:snippet|code|block|listing|excerpt)[ \t]+above\b"
    r"|(?:以上|上面|上述)(?:的)?(?:代码|片段|实现)",
    re.IGNORECASE,
)
"""Words that start a caption saying the block above is what it cites."""
_CAPTION_WORD = lazy_pattern(
    r"(?:source|src|from|see|file|code|defined[ \t]+in|cf\.?|via)(?:[ \t]+(?:in|at|from))?"
    r"|见|出自|来自|来源|出处|源码|代码|摘自|引自|参见",
    re.IGNORECASE,
)
"""A caption's own word before its reference (``Source:``, ``From``, ``见``)."""


def _caption_only(layout: MarkdownLayout, line: int, record: RefRecord) -> bool:
    """Whether the page line holding a reference is a caption and nothing else: besides the
    reference, nothing (``(x.py:3-5)``, ``— x.py:3-5``), a caption's word (``Source:``,
    ``From``, ``见``, ``出自``), or words saying the block above is what it cites (``That is
    `f` in``, ``The snippet above is``, ``以上代码来自``); not a sentence of its own
    (``Then x.py:12-16 scores.``, ``This is called from x.py:30``)."""
    start, end = layout.line_bounds(layout.line_starts[line - 1])
    written = layout.text[start:end].rstrip()
    if len(written) - len(record[2]) - len(record[4]) > _CAPTION_ROOM or written.endswith(
        (":", "：")
    ):
        return False  # a sentence; or a line introducing what follows it
    around = _besides_reference(written, record)
    if len(around) > _CAPTION_ROOM:
        return False
    around = around.strip(" \t`*_:：-—–()（）[]【】.。,，>")
    if around and not _BACK.match(around) and not _CAPTION_WORD.fullmatch(around):
        return False  # (most lines: a sentence, told without `_is_caption`'s searches)
    return _is_caption(layout, line, record)


def _besides_reference(written: str, record: RefRecord) -> str:
    """The page line ``written`` without its reference: for lines written apart from their
    path (a phrase's), without the path and the phrase's words too."""
    reference, path = record[2], record[4]
    around = written.replace(reference, " ", 1)
    if not reference.startswith(path):
        around = _PHRASE_WORDS.sub(" ", around.replace(path, " ", 1))
    return around


_PHRASE_WORDS = lazy_pattern(r"第|行|\b(?:[Ll]ines?|of|in|at)\b")
"""The words of a lines phrase (``见 x.py 第 30-31 行``, ``lines 30-31 of x.py``), which a
caption holding one has besides its caption's word."""


def _introduced(layout: MarkdownLayout, open_line: int) -> bool:
    """Whether the last line written above the block opening at ``open_line`` introduces it
    (ends with a colon: ``looks like this:``, ``如下：``)."""
    text, starts = layout.text, layout.line_starts
    for line in range(open_line - 1, max(open_line - 4, 0), -1):
        start = starts[line - 1]
        written = text[start : starts[line] - 1 if line < len(starts) else len(text)]
        written = written.strip().lstrip("> \t")
        if written:
            return written.endswith((":", "：")) and not written.startswith("#")
    return False


def _introduces_no_quote(layout: MarkdownLayout, line: int) -> bool:
    """Whether page line ``line`` ends as a reference's line does that introduces what
    running the code printed (`_OUTPUT_AFTER_REFERENCE`), or code the author proposes instead
    (`_PROPOSAL_AFTER_REFERENCE`). Only a line ending in a colon can: most are rejected on
    their last characters, without reading them further."""
    text, starts = layout.text, layout.line_starts
    start = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(text)
    last = end
    while last > start and text[last - 1] in " \t*_\r":
        last -= 1
    if last == start or text[last - 1] not in ":：":
        return False
    if _PROPOSAL_AFTER_REFERENCE.search(text, max(start, last - 24), end) is not None:
        return True  # "... x.py:10-20，会漏掉列。建议改为：": the author's code follows
    return _OUTPUT_AFTER_REFERENCE.search(text, max(start, last - 24), end) is not None


_PROPOSAL_AFTER_REFERENCE = lazy_pattern(
    r"(?:\b(?:fix(?:ed)?|should\s+be|instead|suggest(?:ed|ion)?|proposed?|patch|rewrite)"
    r"|建议(?:改为|改成|修改为)?|修复|改为|改成|应改为|应该是|修改后)[ \t*_]*[:：][ \t*_]*$",
    re.IGNORECASE,
)
"""How the line of a reference ends when the block after it is code the author proposes
instead (``x.py:36-42 drops a column; fix:``, ``……第 36-42 行），会漏掉列。建议改为：``)."""


def _is_output(caption: str) -> bool:
    """Whether a caption introduces what a program printed (`_OUTPUT`)."""
    return _OUTPUT.fullmatch(caption.strip(" \t*_").rstrip(":：").strip(" \t*_")) is not None


def _is_caption(layout: MarkdownLayout, line: int, record: RefRecord) -> bool:
    """Whether the page line holding a reference reads as a caption of the block above it:
    little else than the reference (a phrase's path and words count as its own), and not a
    list item or a heading of its own."""
    start, end = layout.line_bounds(layout.line_starts[line - 1])
    written = layout.text[start:end].strip()
    around = _besides_reference(written, record)
    if (
        _LIST_ITEM.match(written)
        or written.startswith(("#", "|"))
        or _PROPOSAL.search(written)
        or _is_output(around)
    ):
        return False
    return len(around.strip(" `*_:：-—()（）[]【】.。")) <= 40


# -- names --------------------------------------------------------------------------------------


def _names(
    layout: MarkdownLayout, records: Sequence[RefRecord], ranged: list[int]
) -> dict[int, tuple[tuple[str, ...], bool, str | None]]:
    """Identifiers and calls in code spans of the sentence, list item or table row holding a
    reference, when nothing else on the line is a reference; whether they claim what the
    lines hold (`Evidence.names_claim_range`); and the one the sentence opens with, before
    the reference (`Evidence.subject`)."""
    line_starts = layout.line_starts
    offsets = sorted(line_starts[record[0] - 1] + record[1] - 1 for record in records)
    starts = layout.code_span_starts
    spans = layout.code_span_matches
    found: dict[int, tuple[tuple[str, ...], bool, str | None]] = {}
    text = layout.text
    for index in ranged:
        record = records[index]
        if record[12]:
            continue
        offset = line_starts[record[0] - 1] + record[1] - 1
        # Cheap first: a line with no code span but the reference's own and its symbol's
        # names nothing (nearly every line), whatever its sentence.
        line_end = text.find("\n", offset)
        low = bisect.bisect_left(starts, line_starts[record[0] - 1])
        high = bisect.bisect_left(starts, line_end if line_end != -1 else len(text), low)
        holding = bisect.bisect_right(starts, offset, low, high) - 1
        in_span = holding >= low and offset < spans[holding].end()
        own = in_span + (0 if record[7] is None else 1)  # the reference's span, its symbol's
        if high - low <= own:
            continue
        claim = high - low - own > 1 or in_span
        sentence_start, sentence_end = _sentence(layout, offset)
        # A sentence naming several references cannot say which one its names belong to.
        if (
            bisect.bisect_left(offsets, sentence_end) - bisect.bisect_left(offsets, sentence_start)
            != 1
        ):
            continue
        low = bisect.bisect_left(starts, sentence_start)
        high = bisect.bisect_left(starts, sentence_end, low)
        if high - low < 2 and not (high > low and record[7] is None):
            continue  # one span: the reference's own or its symbol
        names: list[str] = []
        subject = None
        for match in spans[low:high]:
            span_start, span_end = match.span()
            if span_start <= offset < span_end:
                continue  # the span holding the reference
            name = _name_in(match[2])
            if name is None or name == record[7] or name in names:
                continue
            if (
                not names
                and record[7] is None
                and span_end <= offset
                and _OPENING.fullmatch(text, sentence_start, span_start)
                and not _CONTRAST.search(text, span_end, offset)
            ):
                subject = name
            names.append(name)
            if len(names) == _MAX_NAMES:
                break
        if names:
            found[index] = (tuple(names), claim, subject)
    return found


_OPENING = lazy_pattern(r"[\s>*_+-]*(?:\d{1,3}[.)]\s*)?(?:(?:The|the|Its|its)\s+)?")
"""What may come before the code span a sentence opens with: a list item's or a block
quote's marker, emphasis, an article (a table row's ``|`` may not: its cells are no
sentence)."""


_CONTRAST = lazy_pattern(
    r"\b(?:confused\s+with|unlike|compared\s+(?:to|with)|versus|vs\.?|instead\s+of|rather\s+than|"
    r"differs?\s+from|as\s+opposed\s+to|similar\s+to|counterpart|mirrors?|like\s+the)\b"
    r"|不同于|区别于|类似于?|相比|对比|而不是|对应于?",
    re.IGNORECASE,
)
"""Words between the name a sentence opens with and its reference saying the reference cites
other code, compared with it (`` `FSDPActor.sleep` is often confused with the Megatron one at
x.py:29-35``): the name is then no claim about the cited lines."""


_SENTENCE_REACH = 2000
"""Characters looked at either side of a reference for the sentence holding it."""
_SENTENCE_LINES = 40
"""Lines looked at either side of a reference's line for the block holding it."""


def _sentence(layout: MarkdownLayout, offset: int) -> tuple[int, int]:
    """The sentence holding ``offset``: a table row, or the text between sentence ends within
    its paragraph or list item (soft line breaks do not end it)."""
    text = layout.text
    line_starts = layout.line_starts
    line = bisect.bisect_right(line_starts, offset) - 1
    line_start = line_starts[line]
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end == -1 else line_end
    if text[line_start:line_end].lstrip().startswith("|"):
        return line_start, line_end
    # The block around: back to a blank line or the start of a list item, on to a blank line,
    # a new list item or a table.
    first = line
    while (
        first > 0
        and line - first < _SENTENCE_LINES
        and not _LIST_ITEM.match(text[line_starts[first] : line_starts[first] + 12])
    ):
        previous = text[line_starts[first - 1] : line_starts[first]].strip()
        if not previous or previous.startswith(("#", "|", "```", "~~~")):
            break
        first -= 1
    last_end = line_end
    following_lines = 0
    while last_end < len(text) and following_lines < _SENTENCE_LINES:
        following_lines += 1
        following_end = text.find("\n", last_end + 1)
        following_end = len(text) if following_end == -1 else following_end
        following = text[last_end + 1 : following_end]
        stripped = following.strip()
        if not stripped or _LIST_ITEM.match(following) or stripped.startswith(("#", "|", "```")):
            break
        last_end = following_end
    # Only so far either side: a paragraph of one enormous line would otherwise be searched
    # from its start for every reference in it.
    block_start = max(line_starts[first], offset - _SENTENCE_REACH, layout.body_start)
    last_end = min(last_end, offset + _SENTENCE_REACH)
    start, end = block_start, last_end
    for match in _SENTENCE_END.finditer(text, block_start, last_end):
        if match.start() < offset:
            start = match.end()
        else:
            end = match.start()
            break
    return start, end


def _name_in(code: str) -> str | None:
    """The identifier or call a code span names (``torch.cuda.empty_cache()`` gives
    ``torch.cuda.empty_cache``), or None for anything else."""
    match = _NAME.match(code.strip())
    if match is None:
        return None
    name = match.group("name").replace("::", ".").replace("->", ".")
    last = name.rsplit(".", 1)[-1]
    if len(last) < 3 or last in _NOT_NAMES or last.lower() in KNOWN_EXTENSIONS:
        return None
    return name


# -- headings -----------------------------------------------------------------------------------


class _HeadingIndex:
    """The headings of a page by line, for the symbol the nearest one above a line names."""

    def __init__(self, layout: MarkdownLayout) -> None:
        headings = extract_headings(layout)
        self.lines = [heading.line for heading in headings]
        self.symbols = [heading_symbol(heading.text) for heading in headings]

    def symbol_at(self, line: int) -> str | None:
        index = bisect.bisect_right(self.lines, line) - 1
        return self.symbols[index] if index >= 0 else None


def heading_symbol(heading: str) -> str | None:
    """The symbol a heading names: its first code span that is a name, or a ``name()`` call
    (``2.3 sleep() 实现`` names ``sleep``)."""
    for code in _CODE_SPAN.findall(heading):
        name = _name_in(code)
        if name is not None:
            return name
    match = _HEADING_CALL.search(heading)
    if match is not None:
        return _name_in(match.group("name"))
    return None

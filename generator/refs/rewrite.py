"""Rewriting a reference in the style it was written, to point at other lines (or another
file, or commit): what ``sync`` does when code moved and ``verify --fix`` when the evidence
proves where it is.

``actor.py:276-288`` stays a bare name with a dash, ``（actor.py:276–288）`` keeps its en dash
and brackets, ``#L276-L288`` keeps its ``L``\\ s, a permalink keeps its host and form, an absolute
local path keeps its prefix. A reference whose lines are written apart from its path (a table's
range cell, a "lines" phrase, the ``574`` of ``x.py:360, 574``) can have its lines rewritten but
not its path: moving it to another file is not expressible, and `rewrite_ref` says so (None).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from generator.model import CodeRef, RefForm

_NUMBER = re.compile(r"\d+")
APART = frozenset({"table", "phrase", "list"})
"""Styles whose text is the lines alone, the path being written elsewhere."""


def shared_paths(refs: Iterable[CodeRef]) -> dict[tuple[int, str], int]:
    """The paths, as (line, path as written), that a line writes once for several of
    ``refs``: a path that lines written apart from it take (``x.py:5-9, 12-16``; a table row
    with two lines cells; ``in x.py, f (lines 5-9) and g (lines 12-16)``). Moving the path
    moves them all: only when all of them moved to one file can it be rewritten. Each with how
    many references share it."""
    refs = list(refs)
    # A listed line takes the path of a reference written whole before it; lines in a table
    # cell or a phrase take a path that is no reference of its own.
    listed = {(ref.line, ref.path) for ref in refs if ref.style == "list"}
    counts = Counter(
        (ref.line, ref.path) for ref in refs if ref.style in APART or (ref.line, ref.path) in listed
    )
    return {key: count for key, count in counts.items() if count > 1}


def written_once(line: str, path: str) -> bool:
    """Whether ``path`` is written once on ``line`` as a path of its own (``core.py`` is not
    written in ``pkg/core.py``)."""
    return len(_written_at(line, path)) == 1


_NAMED_AFTER = re.compile(
    r"""(?:[ \t]*(?:,|，|、|and|or|&)[ \t]*(?:(?:and|or)[ \t]+)?  # more lines
    \d+(?:[ \t]*[-–—~～〜][ \t]*\d+)?)*
    [ \t]*行?[ \t]*(?:[)）]?[ \t]*(?:of|in|from|在|位于)[ \t]+|[(（][ \t]*)`?""",
    re.VERBOSE,
)
"""What joins a lines phrase (and the lines listed after it) to the path it names after them
(see `extract.refs._path_after`)."""


def _written_at(text: str, path: str) -> list[int]:
    """Where ``path`` is written in ``text`` as a path of its own, not as a part of another."""
    return [m.start() for m in re.finditer(rf"(?<![\w./~-]){re.escape(path)}(?![\w/])", text)]


def rewrite_ref(
    ref: CodeRef,
    old_path: str,
    new_path: str,
    start: int | None,
    end: int | None,
    old_commit: str | None = None,
    new_commit: str | None = None,
    names_one_file: Callable[[str], bool] | None = None,
) -> str | None:
    """The text of ``ref`` (which resolved to ``old_path``) pointing at lines ``start..end``
    of ``new_path``, and for a permalink naming ``old_commit``, at ``new_commit``; None when
    its style cannot say so (a path written apart from the lines). A bare name whose file
    was renamed stays a bare name when ``names_one_file`` says the new one is unique (it
    becomes the full path otherwise)."""
    text = ref.text
    if ref.form is RefForm.PERMALINK:
        if old_commit and new_commit and ref.revision == old_commit:
            text = text.replace(f"/{old_commit}/", f"/{new_commit}/", 1)
        if new_path != old_path:
            text = text.replace(f"/{old_path}", f"/{new_path}", 1)
        if ref.start is not None and "#" in text:
            head, _, fragment = text.rpartition("#")
            text = head + "#" + _renumber(fragment, start, end)
        return text
    if ref.style in APART:
        if new_path != old_path:
            return None
        return _renumber(text, start, end) if ref.start is not None else text
    written_path, rest = text[: len(ref.path)], text[len(ref.path) :]
    if new_path != old_path:
        written_path = _moved_path(ref, written_path, old_path, new_path, names_one_file)
    if ref.start is not None:
        rest = _renumber(rest, start, end)
    return written_path + rest


def _moved_path(
    ref: CodeRef,
    written: str,
    old_path: str,
    new_path: str,
    names_one_file: Callable[[str], bool] | None = None,
) -> str:
    if ref.form is RefForm.ABSOLUTE and written.endswith("/" + old_path):
        return written[: -len(old_path)] + new_path
    windows = old_path.replace("/", "\\")
    if ref.form is RefForm.ABSOLUTE and written.endswith("\\" + windows):  # C:\Users\...
        return written[: -len(windows)] + new_path.replace("/", "\\")
    if ref.form is RefForm.BARE and old_path.rsplit("/", 1)[-1] == new_path.rsplit("/", 1)[-1]:
        return written
    if ref.form is RefForm.BARE and names_one_file is not None and old_path.endswith(written):
        # As many trailing components as were written: `gpt.py` -> `transformer.py`.
        kept = "/".join(new_path.split("/")[-(written.count("/") + 1) :])
        if names_one_file(kept):
            return kept
    return new_path  # the full repository path is never ambiguous


def _renumber(range_text: str, start: int | None, end: int | None) -> str:
    """The first two numbers of ``range_text`` replaced by ``start`` and ``end`` (a single
    line keeps one number)."""
    numbers = iter([start, end])

    def replace(match: re.Match[str]) -> str:
        value = next(numbers, None)
        return match.group() if value is None else str(value)

    return _NUMBER.sub(replace, range_text, count=2)


def rewrite_apart(
    line: str, column: int, ref: CodeRef, old_path: str, new_path: str, start: int, end: int
) -> list[tuple[int, int, str]] | None:
    """For a reference whose path is written apart from its lines (``x.py (lines 10-20)``, a
    table's path cell), moved to ``new_path``: the edits of the page line ``line`` (the
    reference's lines at ``column``, 1-based) that rewrite both, as (start, end, text) in the
    line; None when the path is not written exactly once before the lines on that line, nor
    named by them right after (``lines 38-41 of x.py``)."""
    if ref.style not in APART or ref.start is None:
        return None
    offset = column - 1
    after = offset + len(ref.text)
    named_after = _NAMED_AFTER.match(line, after)
    if ref.style == "phrase" and named_after and line.startswith(ref.path, named_after.end()):
        at = named_after.end()  # "lines 38-41 of x.py": the path the phrase took
    else:
        written = _written_at(line[:offset], ref.path)
        if len(written) != 1:
            return None
        at = written[0]
    moved = _moved_path(ref, ref.path, old_path, new_path)
    numbers = _renumber(ref.text, start, end)
    return [(at, at + len(ref.path), moved), (offset, offset + len(ref.text), numbers)]

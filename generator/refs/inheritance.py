"""Which classes a class derives from, as an upstream's Python code declares them.

`FSDPActor.save_checkpoint` cited at the lines of `MegatronActor.save_checkpoint` is wrong,
unless `FSDPActor` inherits the method from `MegatronActor`. The resolver asks `derives_from`,
over the class headers of the commit's Python files (`ClassIndex`, read from one ``git grep``
a commit). It answers None, "cannot tell", whenever the code does not say plainly: a class
defined by assignment (``FSDP = Base``) or under a name the headers do not show, a header whose
bases go on over several lines; a check then says nothing rather than something false.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from generator.patterns import lazy_pattern

CLASS_HEADERS = r"^[[:space:]]*class[[:space:]]+[A-Za-z_]"
"""What `git grep -E` looks for: the lines that open a Python class."""

_HEADER = lazy_pattern(r"[ \t]*class[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]*(?:\[[^\]\n]*\])?[ \t]*")
DEPTH = 4
"""Classes up from a class that `derives_from` looks through."""


def _bases(line: str, after: int) -> list[str] | None:
    """The last names of the bases a class header gives from ``after`` on (``(a.B, C[T],
    metaclass=M):`` gives ``B`` and ``C``; ``:`` none); None when the line does not close
    them (they go on over the next lines)."""
    if line.startswith(":", after):
        return []
    if not line.startswith("(", after):
        return None
    depth, end = 0, None
    for index in range(after, len(line)):
        if line[index] in "([":
            depth += 1
        elif line[index] in ")]":
            depth -= 1
            if depth == 0:
                end = index
                break
    if end is None:
        return None
    names, depth, part = [], 0, []
    for character in line[after + 1 : end] + ",":
        if character in "([":
            depth += 1
        elif character in ")]":
            depth -= 1
        if character == "," and depth == 0:
            written = "".join(part).split("[", 1)[0].strip()
            if written and "=" not in written:  # not `metaclass=ABCMeta`
                names.append(written.rsplit(".", 1)[-1])
            part = []
        else:
            part.append(character)
    return names


def class_named(line: str) -> str | None:
    """The name of the class whose header ``line`` is, if it is one."""
    match = _HEADER.match(line)
    return None if match is None else match["name"]


class ClassIndex:
    """The bases of every class the header lines declare, by class name."""

    def __init__(self, headers: Iterable[str]) -> None:
        self._bases: dict[str, list[str] | None] = {}
        for line in headers:
            match = _HEADER.match(line)
            if match is None:
                continue
            name, bases = match["name"], _bases(line, match.end())
            known = self._bases.get(name, [])
            # A class defined twice (in two files) derives from what either says; one whose
            # bases cannot be read derives from what nobody can tell.
            self._bases[name] = None if bases is None or known is None else known + bases

    def defines(self, name: str) -> bool:
        return name in self._bases

    def bases_of(self, name: str) -> list[str] | None:
        """The bases of the class ``name`` (defined: see `defines`); None when unreadable."""
        return self._bases[name]


def derives_from(
    index: ClassIndex, owner: str, holder: str, aliases_of: Callable[[], set[str]]
) -> bool | None:
    """Whether class ``owner`` derives from class ``holder``, following bases `DEPTH`
    classes up; None when the code does not say (see the module). A base the index does not
    define is a class from elsewhere (``nn.Module``), unless it is one of the names
    ``aliases_of`` gives ``holder`` (``from .base import Base as B``), asked only then."""
    if not index.defines(owner):
        return None
    seen, frontier, undefined = {owner}, [owner], set()
    for _ in range(DEPTH):
        following = []
        for name in frontier:
            if not index.defines(name):
                undefined.add(name)
                continue
            bases = index.bases_of(name)
            if bases is None:
                return None
            if holder in bases:
                return True
            following.extend(base for base in bases if base not in seen)
            seen.update(bases)
        if not following:
            break
        frontier = following
    else:
        return None  # deeper than looked
    return bool(undefined and undefined & aliases_of())


def alias_patterns(holder: str) -> list[str]:
    """`git grep -E` patterns for the lines that may give ``holder`` another name."""
    return [
        rf"import.*\b{holder}[[:space:]]+as[[:space:]]+[A-Za-z_]",
        rf"^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*[[:space:]]*=[[:space:]]*([A-Za-z0-9_.]*\.)?"
        rf"{holder}[[:space:]]*$",
    ]


def aliases(lines: Iterable[str], holder: str) -> set[str]:
    """The names the lines (see `alias_patterns`) bind ``holder`` to."""
    found = set()
    for line in lines:
        imported = re.search(rf"\b{holder}\s+as\s+([A-Za-z_]\w*)", line)
        assigned = re.match(rf"\s*([A-Za-z_]\w*)\s*=\s*(?:[\w.]*\.)?{holder}\s*$", line)
        for match in (imported, assigned):
            if match is not None:
                found.add(match[1])
    return found

"""Domain model shared by every stage of the pipeline.

Small, typed, mostly frozen dataclasses: the collector produces `Page`s, the extractors produce
`CodeRef`s and `Link`s, the checks produce `Finding`s, and the formatters only read them.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple


class Severity(enum.Enum):
    """How bad a finding is. Errors fail a run; warnings fail it only with ``--strict``."""

    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:
        return self.value

    # Members are unique objects, so identity hashing is right, and it runs in C: Enum's own
    # __hash__ is Python code, called for every key of the verifier's caches.
    __hash__ = object.__hash__


@dataclass(frozen=True)
class Upstream:
    """A source repository that pages analyse, as declared in the manifest."""

    name: str
    url: str
    """Clone URL, or a local path (resolved against the manifest's directory)."""
    branch: str
    pin: str
    """Full 40-hex commit SHA that references are checked against."""
    prefixes: tuple[str, ...]
    """Path prefixes that route a reference to this upstream (``slime/`` -> slime)."""
    search_roots: tuple[str, ...] = ()
    """Directories preferred when a bare file name matches several files."""
    web_url: str | None = None
    """Browsable home of the repository (``https://github.com/OWNER/REPO``), for permalinks."""
    clone_dir: Path | None = None
    """Where the local clone lives (inside the ignored cache directory)."""
    code_url: str | None = None
    """Web address of a file at a commit, for hosts that are not GitHub-like: a pattern with
    ``{web_url}``, ``{commit}``, ``{path}``, ``{start}``, ``{end}`` (see generator.site)."""

    @property
    def github_slug(self) -> str | None:
        """``owner/repo`` when the web URL is a GitHub (or GitHub Enterprise) repository."""
        if not self.web_url:
            return None
        parts = self.web_url.rstrip("/").split("/")
        if len(parts) < 5:
            return None
        return f"{parts[-2]}/{parts[-1]}".removesuffix(".git").lower()


class RefForm(enum.Enum):
    """How a reference was written; the checks treat some forms specially."""

    PATH = "path"
    """``slime/backends/actor.py:10-20``: a repository-relative path."""
    BARE = "bare"
    """``actor.py:233``: a file name with no directory."""
    ABSOLUTE = "absolute"
    """``/home/alice/slime/slime/actor.py:821``: a path from somebody's machine."""
    PERMALINK = "permalink"
    """``https://github.com/OWNER/REPO/blob/<rev>/path#L10-L20``."""

    __hash__ = object.__hash__  # see Severity


@dataclass(slots=True)
class CodeRef:
    """One place in an upstream that a page cites, exactly as written and where it was written."""

    page: str
    """The page's path as given on the command line (``docs/analysis/x.md``)."""
    line: int
    """1-based line in the page file (frontmatter included)."""
    column: int
    """1-based column, counted in characters (code points), of the reference's first character."""
    text: str
    """The reference exactly as written."""
    form: RefForm
    path: str
    """The path as written (for permalinks: the path inside the repository)."""
    start: int | None = None
    end: int | None = None
    symbol: str | None = None
    """A symbol named next to the reference: ``sleep`` in `` `sleep()` (actor.py:10) ``."""
    repo_slug: str | None = None
    """For permalinks: ``owner/repo`` as written in the URL. A path written as the text of a
    link to a permalink into its file (``[x.py:3](https://github.com/o/r/blob/SHA/x.py#L3)``)
    has the link's, as it has its ``url_host`` and ``revision``: it cites what the link does."""
    url_host: str | None = None
    """For permalinks: scheme and host (``https://github.com``)."""
    revision: str | None = None
    """For permalinks: the branch, tag or commit named in the URL."""
    is_directory: bool = False
    """For ``/tree/`` permalinks: the reference names a directory."""
    in_code_block: bool = False
    style: str = "inline"
    """How the lines were written: ``inline`` with the path (``x.py:10-20``, permalinks and
    whole files included); apart from it, where ``text`` is the lines alone and the path comes
    from around them: ``table`` (a range cell after a path cell), ``phrase`` (``x.py (lines
    10-20)``, ``x.py（第 10-20 行）``), ``list`` (the ``574`` of ``x.py:360, 574``); or ``symbol``
    for a path and a symbol without lines (``x.py:setup()``, ``x.py::Actor.sleep``)."""


class Quote(NamedTuple):
    """Code a page quotes for a reference: a fenced block next to it, or the part of a block that
    follows the reference in its comment. (A tuple: pages hold many, and they travel between
    the processes that read pages.)"""

    line: int
    """Page line of the first quoted line."""
    text: str
    """The quoted lines exactly as written, joined by newlines (fence lines, the reference's
    comment and the markers of block quotes around the fence excluded)."""
    language: str
    """The fence's language (``python``), or empty."""
    placement: str
    """Where it stands: ``after`` the reference, ``before`` it, or ``inside`` the block whose
    comment holds the reference."""
    unterminated: bool = False
    """The fence is never closed: the quote ran to the end of the page."""
    span: tuple[int, int] = (0, 0)
    """Where ``text`` is in the page's text (offsets; CRLF line ends are made LF in ``text``)."""
    depth: int = 0
    """How many block quotes (``> ``) hold the fence: their markers, which begin every line at
    ``span``, are not part of ``text``."""

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


class Evidence(NamedTuple):
    """What a page says the cited lines contain, besides the symbol named next to the reference
    (`CodeRef.symbol`): the code it quotes, the identifiers and calls it names around the
    reference, and the symbol named by the heading the reference sits under."""

    quote: Quote | None = None
    names: tuple[str, ...] = ()
    """Code spans in the same line, list item or table row that look like identifiers or calls
    (``self.model.train()`` gives ``self.model.train``), the reference's own symbol excluded."""
    heading_symbol: str | None = None
    names_claim_range: bool = True
    """Whether ``names`` say what the cited lines hold (``names-not-in-range``): not when the
    reference's line holds a single one of them outside the reference, which may as well be
    a caller (``the loop (x.py:5-7) is shared by `fetch()```); they still say which function
    the lines are in when the lines define one of them."""
    subject: str | None = None
    """The name a code span opens the reference's sentence with, before the reference
    (`` `all_gather_params` broadcasts every parameter (x.py:57-63)``): what the sentence, and
    so the cited lines, are about, unless those lines define what it calls."""


@dataclass(frozen=True)
class Link:
    """A Markdown link or image whose target is inside the docs (not an external URL)."""

    page: str
    line: int
    column: int
    text: str
    """The target exactly as written (``../x.md#anchor``)."""
    target_path: str
    """Path part, percent-decoded; empty for a same-page anchor."""
    fragment: str | None
    is_image: bool = False


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int
    anchor: str


class Fix(NamedTuple):
    """A reference's proven target: the file and lines its evidence was found at."""

    path: str
    start: int
    end: int


_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` safe to print as part of one line of a terminal or a CI log: control characters
    (line breaks, escape sequences, bells) and bidirectional overrides, which a page may hold,
    shown as escapes (``\\n``, ``\\x1b``, ``\\u202e``) so they cannot start a line that a
    CI runner reads as a command, recolour or clear the terminal, or reorder what is shown."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


@dataclass(slots=True)
class Finding:
    """One problem found by a check."""

    severity: Severity
    check: str
    """Stable check id (``file-missing``); see `generator.checks.CHECKS`."""
    page: str
    line: int
    column: int
    message: str
    suggestion: str | None = None
    text: str | None = None
    upstream: str | None = None
    commit: str | None = None
    path: str | None = None
    start: int | None = None
    end: int | None = None
    fix: Fix | None = None
    """Where the evidence proves the reference points, when the proof is exact and unique:
    what ``verify --fix`` rewrites the reference to."""

    def sort_key(self) -> tuple[Any, ...]:
        return (self.page, self.line, self.column, self.check)


@dataclass
class ResolvedRef:
    """A reference after resolution: which upstream, commit and repository path it means."""

    ref: CodeRef
    upstream: str | None = None
    commit: str | None = None
    path: str | None = None
    """Canonical repository-relative path, when the file could be identified."""
    findings: list[Finding] = field(default_factory=list)
    unchecked: bool = False
    """Its upstream has no clone here: where it leads is known, what it holds is not."""

    @property
    def status(self) -> str:
        severities = {f.severity for f in self.findings}
        if Severity.ERROR in severities:
            return "error"
        if Severity.WARNING in severities:
            return "warning"
        return "unchecked" if self.unchecked else "ok"

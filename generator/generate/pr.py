"""PR deep-dive pages drafted from a GitHub pull request (seed 000, sections 1 to 7).

Everything that can be computed is filled in: the metadata, the change scope and the file change
summary (GitHub's own counts), the Python functions and classes the diff touches as ``path:line``
references at the head commit, and Mermaid skeletons whose nodes are the changed modules. The
prose is left as ``> TODO(author): ...`` placeholders.

>>> with GitHubClient.from_env(cache_dir=default_cache_dir(root)) as client:
...     draft = build_pr_page(client, manifest, "THUDM", "slime", 123)
>>> write_pr_page(draft, root / draft.default_output)

Everything taken from the pull request (title, body, branch and file names) is untrusted and goes
through :mod:`generator.github.sanitize`.
"""

from __future__ import annotations

import ast
import datetime as dt
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import jinja2
import yaml

from generator.files import atomic_write
from generator.github.client import (
    GitHubClient,
    PullChanges,
    PullFile,
    PullRequest,
    diff_hunks,
    scrub_tokens,
)
from generator.github.sanitize import (
    LinkContext,
    code_span,
    fenced_code,
    inline_text,
    markdown_text,
    one_line,
    safe_url,
)
from generator.model import Upstream
from generator.upstream.gitstore import GitStore, RepositoryUnavailable
from generator.upstream.manifest import Manifest

__all__ = [
    "ChangedFile",
    "KeySymbol",
    "OutputExists",
    "PrError",
    "PrPage",
    "UnknownRepository",
    "build_pr_page",
    "changed_files",
    "detect_language",
    "find_upstream",
    "frontmatter_yaml",
    "parse_repository",
    "place_page",
    "symbols_from_hunks",
    "symbols_from_source",
    "touched_lines",
    "write_pr_page",
]

if TYPE_CHECKING:
    from generator.generate.source import Placement

logger = logging.getLogger(__name__)

Language = Literal["en", "zh"]
Category = Literal["new", "modified", "deleted", "renamed"]
Change = Literal["NEW", "MODIFIED"]

TEMPLATES = Path(__file__).resolve().parent / "templates"


# --------------------------------------------------------------------------------------------
# Errors


class PrError(Exception):
    """A problem the user can fix (a repository not in the manifest, an existing page, ...)."""


class UnknownRepository(PrError):
    """No upstream in the manifest has the pull request's repository as its GitHub slug."""


class OutputExists(PrError):
    """The output page exists and ``--force`` was not given."""


# --------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class ChangedFile:
    """One file of the pull request, with GitHub's counts."""

    path: str
    category: Category
    additions: int
    deletions: int
    previous_path: str | None = None
    binary: bool = False

    @property
    def is_python(self) -> bool:
        return self.path.endswith((".py", ".pyi"))


@dataclass(frozen=True)
class KeySymbol:
    """A Python function or class the diff touches, located at the head commit.

    ``start``/``end`` is the cited range: the ``def``/``class`` line itself (``end == start``) when
    it is known, or the hunk's lines when only a hunk header named the enclosing function.
    """

    name: str  # qualified: ``Widget.resize``
    kind: Literal["function", "class"]
    path: str
    start: int
    end: int
    change: Change
    exact: bool = True  # False: named by a hunk header only, the range is the hunk's
    extent: tuple[int, int] | None = None
    """The lines the definition spans at the head (decorators included), when read with ast."""

    @property
    def ref(self) -> str:
        lines = str(self.start) if self.end == self.start else f"{self.start}-{self.end}"
        return f"{self.path}:{lines}"

    @property
    def label(self) -> str:
        return f"{self.name}()" if self.kind == "function" else self.name


@dataclass
class PrPage:
    """A drafted page: frontmatter fields, the Markdown text and where it goes by default."""

    pull: PullRequest
    upstream: str
    lang: Language
    meta: dict[str, object]
    text: str
    default_output: Path
    files: tuple[ChangedFile, ...] = ()
    symbols: tuple[KeySymbol, ...] = ()
    symbols_source: Literal["ast", "hunks"] = "hunks"
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Repository and upstream


_SLUG = re.compile(r"(?:https?://[^/]+/)?([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")


def parse_repository(text: str) -> tuple[str, str]:
    """``OWNER/REPO`` (or a GitHub URL) as its two parts; :class:`PrError` when malformed."""
    match = _SLUG.fullmatch(text.strip())
    if match is None or {match[1], match[2]} & {".", ".."}:
        raise PrError(f"expected OWNER/REPO, got {text!r}")
    return match[1], match[2]


_PULL_URL = re.compile(
    r"(?:https?://[^/]+/)?([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)/pulls?/(\d{1,9})(?:[/?#].*)?"
)


def parse_pull(text: str) -> tuple[str, str, int] | None:
    """``https://github.com/OWNER/REPO/pull/N`` (or ``OWNER/REPO/pull/N``) as its parts, the
    address a pull request is copied from; None for anything else."""
    match = _PULL_URL.fullmatch(text.strip())
    if match is None or {match[1], match[2]} & {".", ".."}:
        return None
    return match[1], match[2], int(match[3])


def find_upstream(manifest: Manifest, owner: str, repo: str) -> Upstream:
    """The upstream whose GitHub slug (from its ``web_url`` or URL) is ``owner/repo``."""
    wanted = f"{owner}/{repo}".lower()
    for upstream in manifest.upstreams.values():
        if upstream.github_slug == wanted:
            return upstream
    configured = sorted(
        f"{u.github_slug} ({name})" for name, u in manifest.upstreams.items() if u.github_slug
    )
    listing = ", ".join(configured) if configured else "none"
    raise UnknownRepository(
        f"{owner}/{repo} is not an upstream in {manifest.display_path()}; configured GitHub "
        f"repositories: {listing}. Add it (with web_url: https://github.com/{owner}/{repo}) "
        "and run `kb upstreams fetch`"
    )


CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
"""A Chinese, Japanese or Korean character."""
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_language(title: str, body: str = "") -> Language:
    """``zh`` when the title and body are mostly CJK (by characters against Latin words)."""
    text = f"{title}\n{title}\n{body}"  # the title counts double
    text = re.sub(r"```.*?```|`[^`\n]*`|https?://\S+", " ", text, flags=re.DOTALL)
    cjk = len(CJK.findall(text))
    latin = len(_LATIN_WORD.findall(text))
    return "zh" if cjk and cjk >= latin else "en"


# --------------------------------------------------------------------------------------------
# Files and diffs


_CATEGORIES: dict[str, Category] = {
    "added": "new",
    "removed": "deleted",
    "renamed": "renamed",
    "copied": "new",
}


def changed_files(files: Iterable[PullFile]) -> tuple[ChangedFile, ...]:
    """GitHub's file list as New / Modified / Deleted / Renamed, counts untouched."""
    out = []
    for f in files:
        category = _CATEGORIES.get(f.status, "modified")
        out.append(
            ChangedFile(
                path=f.filename,
                category=category,
                additions=f.additions,
                deletions=f.deletions,
                previous_path=f.previous_filename if category == "renamed" else None,
                binary=f.patch is None and f.changes == 0 and category != "renamed",
            )
        )
    return tuple(out)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


@dataclass
class _Hunk:
    new_start: int
    new_count: int
    context: str
    added: set[int] = field(default_factory=set)
    deleted_after: set[int] = field(default_factory=set)
    """New-side line numbers just before which lines were deleted."""
    lines: list[tuple[str, int]] = field(default_factory=list)
    """(line with its marker, new-side line number) for context and added lines."""


def _hunks(patch: str) -> list[_Hunk]:
    hunks: list[_Hunk] = []
    current: _Hunk | None = None
    new_line = 0
    for line in patch.split("\n"):
        header = _HUNK.match(line)
        if header:
            new_line = int(header[3])
            count = 1 if header[4] is None else int(header[4])
            current = _Hunk(new_line, count, header[5])
            hunks.append(current)
            continue
        if current is None or not line or line.startswith("\\"):
            continue
        marker = line[0]
        if marker == "+":
            current.added.add(new_line)
            current.lines.append((line, new_line))
            new_line += 1
        elif marker == "-":
            current.deleted_after.add(new_line)
        elif marker == " ":
            current.lines.append((line, new_line))
            new_line += 1
    return hunks


def touched_lines(patch: str) -> tuple[set[int], set[int]]:
    """Added lines (new side) and the new-side lines before which lines were deleted."""
    added: set[int] = set()
    deleted: set[int] = set()
    for hunk in _hunks(patch):
        added |= hunk.added
        deleted |= hunk.deleted_after
    return added, deleted


# --------------------------------------------------------------------------------------------
# Key functions


def _definitions(tree: ast.AST) -> list[tuple[str, ast.AST, list[ast.AST]]]:
    """(qualified name, node, nested definitions) for every function and class, outermost first."""
    found: list[tuple[str, ast.AST, list[ast.AST]]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                nested = [
                    n
                    for n in ast.walk(child)
                    if n is not child
                    and isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                ]
                found.append((name, child, nested))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def symbols_from_source(
    path: str, source: str, added: set[int], deleted: set[int], *, new_file: bool = False
) -> list[KeySymbol] | None:
    """The definitions of ``source`` (the head blob) that contain a changed line; None if no AST.

    A definition is touched when an added line, or the place of a deleted line, lies inside it
    and not inside one of its nested definitions (a class is listed for its own lines, its
    methods for theirs). It is NEW when all of its lines were added.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    symbols = []
    for name, node, nested in _definitions(tree):
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
        last = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        inner = [
            (
                min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]),  # type: ignore[attr-defined]
                n.end_lineno or n.lineno,  # type: ignore[attr-defined]
            )
            for n in nested
        ]

        def own(line: int, inner: list[tuple[int, int]] = inner) -> bool:
            return not any(a <= line <= b for a, b in inner)

        hit = any(first <= n <= last and own(n) for n in added) or any(
            first < n <= last + 1 and own(n - 1) and own(n) for n in deleted
        )
        if not hit:
            continue
        everything_new = new_file or all(n in added for n in range(first, last + 1))
        symbols.append(
            KeySymbol(
                name=name,
                kind="class" if isinstance(node, ast.ClassDef) else "function",
                path=path,
                start=node.lineno,  # type: ignore[attr-defined]
                end=node.lineno,  # type: ignore[attr-defined]
                change="NEW" if everything_new else "MODIFIED",
                extent=(first, last),
            )
        )
    return symbols


_DEF_LINE = re.compile(r"^[+ ](\s*)(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
_CONTEXT_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")


def symbols_from_hunks(path: str, patch: str, *, new_file: bool = False) -> list[KeySymbol]:
    """Touched definitions read from the diff alone (no head blob available).

    A ``def``/``class`` line inside a hunk followed by a change before the next definition is
    cited at its exact line; the function a hunk header names (``@@ ... @@ def name(``) is cited
    with the hunk's lines when a change comes before any definition line in the hunk.
    """
    symbols: dict[tuple[str, int], KeySymbol] = {}
    for hunk in _hunks(patch):
        changed = hunk.added | hunk.deleted_after
        if not changed:
            continue
        defs = [
            (match[2], number, line.startswith("+"), "class" in line.split(match[2])[0])
            for line, number in hunk.lines
            if (match := _DEF_LINE.match(line))
        ]
        first_def = defs[0][1] if defs else None
        for index, (name, number, is_added, is_class) in enumerate(defs):
            following = defs[index + 1][1] if index + 1 < len(defs) else None
            if any(n >= number and (following is None or n < following) for n in changed):
                change: Change = "NEW" if new_file or is_added else "MODIFIED"
                symbols.setdefault(
                    (name, number),
                    KeySymbol(
                        name, "class" if is_class else "function", path, number, number, change
                    ),
                )
        context = _CONTEXT_DEF.match(hunk.context)
        if context and (first_def is None or any(n < first_def for n in changed)):
            kind: Literal["function", "class"] = (
                "class" if hunk.context.lstrip().startswith("class") else "function"
            )
            end = hunk.new_start + max(hunk.new_count, 1) - 1
            symbols.setdefault(
                (context[1], -hunk.new_start),
                KeySymbol(context[1], kind, path, hunk.new_start, end, "MODIFIED", exact=False),
            )
    return sorted(symbols.values(), key=lambda s: (s.start, s.name))


def _head_store(upstream: Upstream, head: str) -> GitStore | None:
    if upstream.clone_dir is None or not upstream.clone_dir.exists():
        return None
    try:
        store = GitStore(upstream.clone_dir)
    except RepositoryUnavailable:
        return None
    if store.resolve(head) is None:
        store.close()
        return None
    return store


def key_symbols(
    files: Sequence[ChangedFile],
    patches: Mapping[str, str],
    store: GitStore | None,
    head: str,
) -> tuple[list[KeySymbol], bool]:
    """The touched definitions of every Python file; True when all came from the head blobs."""
    symbols: list[KeySymbol] = []
    all_ast = True
    tree = store.tree(head) if store is not None else {}
    for f in files:
        if not f.is_python or f.category == "deleted":
            continue
        patch = patches.get(f.path)
        new_file = f.category == "new"
        entry = tree.get(f.path)
        found: list[KeySymbol] | None = None
        if store is not None and entry is not None and entry.kind == "blob":
            blob = store.blob(entry.sha)
            if not blob.is_binary:
                added, deleted = touched_lines(patch or "")
                if new_file and not patch:
                    added = set(range(1, blob.line_count + 1))
                found = symbols_from_source(
                    f.path, "\n".join(blob.lines) + "\n", added, deleted, new_file=new_file
                )
        if found is None:
            all_ast = False
            found = symbols_from_hunks(f.path, patch or "", new_file=new_file)
        symbols.extend(found)
    return symbols, all_ast


# --------------------------------------------------------------------------------------------
# Diagrams
#
# Material draws a Mermaid diagram at its natural size, scaled down to the text column when it
# is wider (688 px in a 1280 px window): a diagram wider than the column has text smaller than
# the page's. So each skeleton keeps its width bounded at any PR size: the changed files are
# grouped by directory, the nodes are capped, no label line is long, and what grows, grows
# downwards (ARCHITECTURE.md, "Diagrams that read", has the measurements).

MAX_DIAGRAM_DIRECTORIES = 8
"""Rows of the before/after diagram; the directories beyond are summed up in the last one."""
FEW_FILES = 3
"""A directory with at most this many changed files lists them by name."""
MAX_CALL_PARTICIPANTS = 3
"""Modules in the call chain besides the caller: a sequence diagram grows sideways."""
MAX_FLOW_STEPS = 4
"""Modules in the data-flow chain."""
MAX_CLASS_MODULES = 3
"""Modules whose definitions the module diagram draws."""
LABEL_LINE = 20
"""Characters per line of a flowchart label. Mermaid wraps a label at spaces only, and a path
has none: a long one would widen the whole diagram."""
PARTICIPANT_LINE = 14
"""Characters per line of a sequence diagram participant."""
SEQUENCE_CONFIG = {"actorMargin": 20, "width": 110, "height": 80, "diagramMarginX": 8}
"""Narrower participants, gaps and margins than Mermaid's (150, 50 and 50 px), and taller
participants (65 px), for two lines of name and one of marker."""


def _mermaid_label(text: str) -> str:
    """Text safe inside a quoted Mermaid label (no quotes, brackets or markup)."""
    cleaned = re.sub(r"[^\w./\- ]", "_", one_line(text), flags=re.ASCII)
    return cleaned[:80] or "_"


def _mermaid_id(text: str, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", text, flags=re.ASCII).strip("_") or "node"
    if base[0].isdigit():
        base = f"n_{base}"
    base = base[:40]
    candidate, n = base, 1
    while candidate in taken or candidate.lower() in {"end", "graph", "class", "subgraph"}:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate)
    return candidate


_WORDS = re.compile(r"[^/ ]*[/ ]?")
_SYLLABLES = re.compile(r"[^_\-]*[_\-]?")


def wrap_label(text: str, width: int = LABEL_LINE) -> tuple[str, ...]:
    """``text`` made safe for a Mermaid label, in lines of at most ``width`` characters."""
    return _wrap(_mermaid_label(text), width)


def _wrap(text: str, width: int) -> tuple[str, ...]:
    """``text`` in lines of at most ``width`` characters, broken after a ``/`` or a space where
    it can be, else after ``_`` or ``-``, else anywhere."""
    pieces: list[str] = []
    for word in filter(None, _WORDS.findall(text)):
        if len(word.rstrip()) <= width:
            pieces.append(word)
            continue
        for syllable in filter(None, _SYLLABLES.findall(word)):
            pieces += [syllable[i : i + width] for i in range(0, len(syllable), width)]
    lines: list[str] = []
    line = ""
    for piece in pieces:
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    return tuple(lines) or ("_",)


_MARKERS = {"new": "NEW", "modified": "MODIFIED", "deleted": "REMOVED", "renamed": "RENAMED"}
_CATEGORIES_IN_ORDER: tuple[Category, ...] = ("new", "modified", "deleted", "renamed")


@dataclass(frozen=True)
class DiagramNode:
    id: str
    lines: tuple[str, ...]
    """The label, line by line, each already safe for Mermaid."""


@dataclass(frozen=True)
class DiagramRow:
    """One directory of the before/after diagram: its changed files before, and after."""

    before: DiagramNode
    after: DiagramNode


@dataclass(frozen=True)
class Diagrams:
    rows: list[DiagramRow]
    participants: list[DiagramNode]
    flow: list[DiagramNode]
    classes: list[tuple[str, str, list[str]]]  # id, stereotype, members
    links: list[tuple[str, str]]  # module id -> class id
    sequence_config: Mapping[str, int] = field(default_factory=lambda: dict(SEQUENCE_CONFIG))


def _directory(path: str, depth: int) -> str:
    parts = path.split("/")[:-1]
    return "/".join(parts[:depth]) + "/" if parts else ""


def directory_groups(files: Sequence[ChangedFile]) -> list[tuple[str, list[ChangedFile]]]:
    """The changed files by directory ("" for the top level), in path order, at most
    ``MAX_DIAGRAM_DIRECTORIES`` groups, the last summing up the smallest directories when there
    are more (its name is then ``"+N"``, N the number of directories it holds).

    The directories are taken at the deepest level that gives no more groups than that; when
    that level is a single directory (everything under ``src/``), one level deeper, where the
    files part.
    """
    deepest = max((f.path.count("/") for f in files), default=0)
    depth = 1
    for level in range(1, deepest + 1):
        if len({_directory(f.path, level) for f in files}) > MAX_DIAGRAM_DIRECTORIES:
            break
        depth = level
    if len({_directory(f.path, depth) for f in files}) == 1 and depth < deepest:
        depth += 1
    groups: dict[str, list[ChangedFile]] = {}
    for f in files:
        groups.setdefault(_directory(f.path, depth), []).append(f)
    if len(groups) <= MAX_DIAGRAM_DIRECTORIES:
        return sorted(groups.items())
    ranked = sorted(groups.items(), key=lambda group: (-len(group[1]), group[0]))
    kept = sorted(ranked[: MAX_DIAGRAM_DIRECTORIES - 1])
    rest = ranked[MAX_DIAGRAM_DIRECTORIES - 1 :]
    return [*kept, (f"+{len(rest)}", [f for _, members in rest for f in members])]


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _counts(files: Sequence[ChangedFile]) -> tuple[str, ...]:
    """The counts by category ("2 new, 4 modified"), in lines of at most
    ``LABEL_LINE`` characters, never a count split from its word."""
    counted = [(sum(f.category == c for f in files), c) for c in _CATEGORIES_IN_ORDER]
    lines: list[str] = []
    for item in (f"{n} {category}" for n, category in counted if n):
        if lines and len(lines[-1]) + 2 + len(item) <= LABEL_LINE:
            lines[-1] += f", {item}"
        else:
            lines.append(item)
    return tuple(lines)


def _architecture_row(index: int, name: str, files: list[ChangedFile]) -> DiagramRow:
    """A directory's node before (its changed files as they were) and after (what became of
    them): the files by name when few, else their counts."""
    if name.startswith("+"):
        heading: tuple[str, ...] = (f"... {name[1:]} more", "directories")
    else:
        heading = wrap_label(name) if name else ("(top level)",)
    existed = [f for f in files if f.category != "new"]
    if len(files) <= FEW_FILES:
        before = [
            line for f in existed for line in wrap_label(_basename(f.previous_path or f.path))
        ]
        after = [
            line
            for f in files
            for line in wrap_label(f"{_basename(f.path)} {_MARKERS[f.category]}")
        ]
    else:
        before = [f"{len(existed)} file{'' if len(existed) == 1 else 's'}"] if existed else []
        after = list(_counts(files))
    return DiagramRow(
        DiagramNode(f"b{index}", (*heading, *(before or ["not there yet"]))),
        DiagramNode(f"a{index}", (*heading, *after)),
    )


def _at_most_two(lines: tuple[str, ...]) -> tuple[str, ...]:
    """A participant's name in two lines (its box is of a fixed height): the first and the
    last, which holds the file's extension."""
    return lines if len(lines) <= 2 else (f"{lines[0]}...", lines[-1])


def _ranked_modules(files: Sequence[ChangedFile]) -> list[ChangedFile]:
    """The Python modules the PR leaves at the head, most changed lines first."""
    modules = [f for f in files if f.is_python and f.category != "deleted"]
    return sorted(modules, key=lambda f: (-(f.additions + f.deletions), f.path))


def _diagrams(files: Sequence[ChangedFile], symbols: Sequence[KeySymbol]) -> Diagrams:
    rows = [
        _architecture_row(index, name, members)
        for index, (name, members) in enumerate(directory_groups(files), 1)
    ]
    modules = _ranked_modules(files)
    taken: set[str] = set()
    module_ids = {
        f.path: _mermaid_id(f"m_{_basename(f.path).rsplit('.', 1)[0]}", taken)
        for f in modules[: max(MAX_CALL_PARTICIPANTS, MAX_CLASS_MODULES)]
    }
    participants = [
        DiagramNode(
            module_ids[f.path],
            (*_at_most_two(wrap_label(_basename(f.path), PARTICIPANT_LINE)), _MARKERS[f.category]),
        )
        for f in modules[:MAX_CALL_PARTICIPANTS]
    ]
    flow = [
        DiagramNode(f"s{index}", (*wrap_label(f.path), _MARKERS[f.category]))
        for index, f in enumerate(modules[:MAX_FLOW_STEPS], 1)
    ]
    if len(modules) > MAX_FLOW_STEPS:
        more = len(modules) - MAX_FLOW_STEPS
        flow.append(DiagramNode("s_more", (f"... {more} more", "changed modules")))
    classes: list[tuple[str, str, list[str]]] = []
    links: list[tuple[str, str]] = []
    class_ids: dict[tuple[str, str], str] = {}
    for f in modules[:MAX_CLASS_MODULES]:
        mid = module_ids[f.path]
        members = [
            f"+{_mermaid_label(s.name)}() {s.change}"
            for s in symbols
            if s.path == f.path and s.kind == "function" and "." not in s.name
        ]
        classes.append((mid, "module", members))
        for s in symbols:
            if s.path != f.path or s.kind != "class":
                continue
            cid = class_ids.setdefault(
                (f.path, s.name), _mermaid_id(f"c_{s.name.replace('.', '_')}", taken)
            )
            methods = [
                f"+{_mermaid_label(m.name.rsplit('.', 1)[-1])}() {m.change}"
                for m in symbols
                if m.path == f.path
                and m.kind == "function"
                and m.name.startswith(f"{s.name}.")
                and "." not in m.name[len(s.name) + 1 :]
            ]
            classes.append((cid, s.change, methods))
            links.append((mid, cid))
    return Diagrams(rows, participants, flow, classes[:40], links[:60])


# --------------------------------------------------------------------------------------------
# The page


_HEADINGS: dict[Language, dict[str, str]] = {
    "en": {
        "new": "New",
        "modified": "Modified",
        "deleted": "Deleted",
        "renamed": "Renamed",
        "none": "None",
    },
    "zh": {
        "new": "新增",
        "modified": "修改",
        "deleted": "删除",
        "renamed": "重命名",
        "none": "无",
    },
}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=False,  # Markdown, not HTML: every untrusted value is sanitised beforehand
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["code"] = _path_cell
    env.filters["text"] = inline_text
    return env


def _frontmatter_title(pull: PullRequest, lang: Language) -> str:
    title = one_line(pull.title).replace("<", "‹").replace(">", "›").replace("`", "'")
    title = title[:150] or f"#{pull.number}"
    if lang == "zh":
        return f"PR #{pull.number} 深度解析：{title}"
    return f"PR #{pull.number} deep dive: {title}"


def _file_slug(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    slug = ""
    for word in words:
        if len(slug) + len(word) + 1 > 50:
            break
        slug = f"{slug}-{word}" if slug else word
    return slug


def _state(pull: PullRequest, lang: Language) -> str:
    if pull.merged:
        return "merged" if lang == "en" else "已合并"
    if pull.state == "closed":
        return "closed" if lang == "en" else "已关闭"
    if pull.draft:
        return "open (draft)" if lang == "en" else "开放（草稿）"
    return "open" if lang == "en" else "开放"


def _path_cell(path: str) -> str:
    """A file name in a table cell: a code span, with ``|`` escaped for the table."""
    return code_span(path).replace("|", "\\|")


def _plain_path(path: str, links: LinkContext) -> str:
    """A path that does not exist at the head (deleted, or a rename's old name): not a reference."""
    return inline_text(path, links)  # escapes ``|`` and Markdown already


def build_pr_page(
    client: GitHubClient,
    manifest: Manifest,
    owner: str,
    repo: str,
    number: int,
    *,
    lang: Language | None = None,
    today: dt.date | None = None,
) -> PrPage:
    """Fetch pull request ``owner/repo#number`` and draft its deep-dive page."""
    upstream = find_upstream(manifest, owner, repo)
    pull = client.pull(owner, repo, number)
    changes = client.pull_changes(owner, repo, number, pull=pull)
    return render_pr_page(
        pull, changes, upstream, web_url=pages_web_url(client, upstream), lang=lang, today=today
    )


def pages_web_url(client: GitHubClient, upstream: Upstream) -> str:
    """The web host that ``@user`` and ``#123`` links go to: the upstream's, else the client's."""
    if upstream.web_url and upstream.github_slug:
        return upstream.web_url.rstrip("/").rsplit("/", 2)[0]
    return client.web_url


def render_pr_page(
    pull: PullRequest,
    changes: PullChanges,
    upstream: Upstream,
    *,
    web_url: str = "https://github.com",
    lang: Language | None = None,
    today: dt.date | None = None,
) -> PrPage:
    """Draft the page from fetched data (no network)."""
    lang = lang or detect_language(pull.title, pull.body)
    files = changed_files(changes.files)
    patches = diff_hunks(changes.diff)
    for f in changes.files:
        if f.patch is not None:
            patches[f.filename] = f.patch
    notes: list[str] = []
    store = _head_store(upstream, pull.head_sha)
    try:
        symbols, all_ast = key_symbols(files, patches, store, pull.head_sha)
    finally:
        if store is not None:
            store.close()
    if store is None:
        notes.append(
            f"the head commit {pull.head_sha[:12]} is not in the clone of {upstream.name}; "
            "the key functions come from the diff's hunk headers (fetch the PR's head into the "
            "clone for exact lines)"
        )
    if changes.truncated:
        notes.append(
            f"GitHub lists {len(files)} of the {pull.changed_files} changed files (its 3,000-file "
            "cap); the tables show those"
        )
    links = LinkContext(web_url=web_url, repo=f"{pull.owner}/{pull.repo}")
    created = today or dt.date.today()
    meta: dict[str, object] = {
        "title": _frontmatter_title(pull, lang),
        "kind": "pr-deep-dive",
        "lang": lang,
        "status": "draft",
        "created": created,
        "pr": pull.number,
        "upstream": upstream.name,
        "pin": pull.head_sha,
        "base": pull.base_sha,
        "tags": ["pr", upstream.name],
    }
    frontmatter = frontmatter_yaml(meta)
    names = _HEADINGS[lang]
    scope: list[tuple[str, str]] = []
    for category in ("new", "modified", "deleted", "renamed"):
        for f in files:
            if f.category != category:
                continue
            if category == "deleted":
                cell = _plain_path(f.path, links)
            elif category == "renamed":
                old = _plain_path(f.previous_path or "", links)
                cell = f"{_path_cell(f.path)} ← {old}"
            else:
                cell = _path_cell(f.path)
            scope.append((names[category], cell))
        if not any(f.category == category for f in files):
            scope.append((names[category], names["none"]))
    width = max((len(one_line(f.path)) for f in files), default=0) + 2
    summary_lines = []
    for f in files:
        counts = f"[+{f.additions}, -{f.deletions}]"
        comment = {
            "new": "new",
            "deleted": "deleted",
            "renamed": f"renamed from {one_line(f.previous_path or '')}",
            "modified": "TODO: what changed",
        }[f.category]
        if f.binary:
            comment += ", binary"
        summary_lines.append(f"{one_line(f.path).ljust(width)}{counts.ljust(16)}# {comment}")
    html_url = safe_url(pull.html_url, links) or ""
    author = inline_text(f"@{pull.author}", links) if pull.author else "—"
    context = {
        "frontmatter": frontmatter,
        "number": pull.number,
        "repository": f"{pull.owner}/{pull.repo}",
        "title": inline_text(pull.title, links) or f"#{pull.number}",
        "author": author,
        "state": _state(pull, lang),
        "merged_at": one_line(pull.merged_at or "") or "—",
        "base_ref": code_span(pull.base_ref) or "—",
        "head_ref": code_span(pull.head_ref) or "—",
        "base_sha": pull.base_sha,
        "head_sha": pull.head_sha,
        "html_url": html_url,
        "additions": pull.additions,
        "deletions": pull.deletions,
        "changed_files": pull.changed_files or len(files),
        "commits": pull.commits,
        "body": _quote(markdown_text(pull.body, links)) if pull.body.strip() else "",
        "scope": scope,
        "summary": fenced_code("\n".join(summary_lines)) if summary_lines else "",
        "symbols": symbols,
        "symbols_from_ast": all_ast and store is not None,
        "diagram": _diagrams(files, symbols),
        "notes": notes,
    }
    text = _environment().get_template(f"pr-deep-dive.{lang}.md.j2").render(context)
    slug = _file_slug(pull.title)
    name = f"pr-{pull.number}-{slug}" if slug else f"pr-{pull.number}"
    if lang == "zh":
        name += ".zh"
    return PrPage(
        pull=pull,
        upstream=upstream.name,
        lang=lang,
        meta=meta,
        text=text,
        default_output=Path("docs") / "analysis" / f"{name}.md",
        files=files,
        symbols=tuple(symbols),
        symbols_source="ast" if context["symbols_from_ast"] else "hunks",
        notes=notes,
    )


def frontmatter_yaml(meta: Mapping[str, object]) -> str:
    """A drafted page's frontmatter, keys in their order (the text between the ``---`` lines)."""
    return yaml.safe_dump(dict(meta), sort_keys=False, allow_unicode=True, width=1000)


class _Draft(Protocol):
    meta: dict[str, object]
    text: str


def place_page(page: _Draft, placement: Placement) -> None:
    """Add the placement (``spec``, ``paths``, ``level``) to a drafted page's frontmatter, so the
    page joins its spec and learning paths; the rest of the page is left as it is."""
    placed: dict[str, object] = {}
    if placement.spec:
        placed["spec"] = placement.spec
    if placement.paths:
        placed["paths"] = list(placement.paths)
    if placement.level:
        placed["level"] = placement.level
    if placed:
        set_frontmatter(page, placed)


def set_frontmatter(page: _Draft, values: dict[str, object]) -> None:
    """Add ``values`` to a drafted page's frontmatter (a key it has takes the new value); the
    rest of the page is left as it is."""
    head = f"---\n{frontmatter_yaml(page.meta)}---\n"
    if not page.text.startswith(head):
        raise PrError("the drafted page does not start with its own frontmatter")
    page.meta = {**page.meta, **values}
    page.text = f"---\n{frontmatter_yaml(page.meta)}---\n{page.text[len(head) :]}"


def _quote(markdown: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in markdown.rstrip("\n").split("\n"))


def write_pr_page(page: PrPage, output: Path, *, force: bool = False) -> Path:
    """Write the page atomically; refuses to replace an existing file unless ``force``."""
    return write_new_file(output, page.text.encode("utf-8"), force=force)


def refuse_existing(output: Path, force: bool) -> None:
    """Raise unless ``output`` may be written (absent, or a file and ``force``)."""
    if output.exists() and not force:
        raise OutputExists(f"{output} already exists; pass --force to overwrite it")
    if output.exists() and not output.is_file():
        raise PrError(f"{output} exists and is not a file")


def write_new_file(output: Path, data: bytes, *, force: bool = False) -> Path:
    """Write ``data`` atomically, refusing to replace an existing file unless ``force``.

    The GitHub token never reaches a page, a pack or an export, wherever it crept into the text
    from (a server echoing it, a description or a source file that contains it)."""
    refuse_existing(output, force)
    text = data.decode("utf-8", errors="surrogateescape")
    scrubbed = scrub_tokens(text)
    if scrubbed != text:
        logger.warning("hid the GitHub token, found in what was to be written to %s", output)
        data = scrubbed.encode("utf-8", errors="surrogateescape")
    atomic_write(output, data)
    logger.info("wrote %s", output)
    return output

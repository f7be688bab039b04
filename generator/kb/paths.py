"""Learning paths: an ordered curriculum derived from the pages' frontmatter.

Nobody keeps a reading list by hand. Each page says where it belongs and what it needs::

    level: intermediate            # beginner | intermediate | advanced | expert
    order: 2                       # optional tie-breaker inside a level (lower first)
    paths: [beginner, memory]      # the named paths it is in
    depends_on: [analysis/x.md]    # prerequisites: docs-relative (or page-relative) paths

A path's index page (``docs/paths/beginner.md``) names the path it introduces, and may add pages
by an explicit list or select them by tag or level::

    kind: learning-path
    path: beginner                 # this page is the index of the "beginner" path
    pages: [analysis/a.md, analysis/b.md]   # optional, in this order
    select: {tags: [memory], levels: [advanced]}   # optional, any tag / any level matches

A path's pages are ordered topologically: a page always comes after its prerequisites (also
indirect ones through pages outside the path); ties are broken by the explicit list, then level,
then ``order``, then the file name. Archived pages leave every path.

Findings (see `generator.checks.CHECKS`): ``prerequisite-missing``, ``prerequisite-cycle``,
``path-order-conflict`` (a page whose list position, level or order puts it before one of its
prerequisites in the same path), ``page-not-in-path``, ``path-page-missing`` (an explicit list names
no page), ``path-index-duplicate``, ``level-invalid``, ``order-invalid``.

Public API (stable; the site build uses it)::

    from generator.kb.paths import load_curriculum
    curriculum = load_curriculum(Path("docs"))
    for path in curriculum.ordered_paths():           # LearningPath, level paths first
        path.name, path.title, path.index, path.pages  # pages: ordered docs-relative paths
    curriculum.pages["analysis/x.md"]                  # PathPage: title, level, status, ...
    curriculum.prerequisites("analysis/x.md")          # direct prerequisites, as PathPage
    curriculum.neighbours("beginner", "analysis/x.md") # (previous, next) PathPage or None
    curriculum.paths_of("analysis/x.md")               # the LearningPaths the page is in
    curriculum.by_level()                              # {"beginner": [PathPage, ...], ...}
    curriculum.findings                                # list[Finding]
"""

from __future__ import annotations

import difflib
import heapq
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.kb.pages import Page, load_page
from generator.model import Finding, Severity

LEVELS: tuple[str, ...] = ("beginner", "intermediate", "advanced", "expert")
"""Reading levels, easiest first."""

LEVEL_PATHS: tuple[str, ...] = ("beginner", "intermediate", "advanced", "expert")
"""Path names that are levels; every other path name is problem-oriented (memory, ...)."""

NO_PATH_KINDS: frozenset[str] = frozenset({"index", "tags", "board", "404"})
"""Page kinds that need not be in a learning path (the home page, generated tag/board pages)."""

INDEX_KIND = "learning-path"
"""The ``kind`` of a path's index page."""

_E, _W = Severity.ERROR, Severity.WARNING
_NO_ORDER = 10**9


@dataclass(frozen=True)
class PathPage:
    """One page as the curriculum sees it."""

    rel: str
    """Docs-relative path with forward slashes (``analysis/x.md``): the key everywhere."""
    display: str
    """The path used in findings (``docs/analysis/x.md``)."""
    title: str
    kind: str | None = None
    level: str | None = None
    """One of `LEVELS`, or ``None`` when absent or invalid."""
    order: int | None = None
    status: str | None = None
    lang: str | None = None
    spec: str | None = None
    tags: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    """Prerequisites as docs-relative paths (normalised; existing or not)."""
    declared_paths: tuple[str, ...] = ()
    """The ``paths:`` list as written."""
    index_of: str | None = None
    """The path this page is the index of (``path:``), if any."""
    paths: tuple[str, ...] = ()
    """Every path the page is in (declared, listed or selected), in curriculum order."""

    @property
    def archived(self) -> bool:
        return self.status == "archived"

    @property
    def level_rank(self) -> int:
        """0 for beginner ... 3 for expert; -1 without a level."""
        return LEVELS.index(self.level) if self.level in LEVELS else -1


@dataclass(frozen=True)
class LearningPath:
    """A named, ordered reading list."""

    name: str
    title: str
    """The index page's title, or the name capitalised (``Memory``)."""
    pages: tuple[str, ...]
    """Docs-relative paths in reading order (the index page itself is not included)."""
    index: str | None = None
    """The path's index page (``paths/beginner.md``), preferring one without a language suffix."""
    indexes: tuple[str, ...] = ()
    """Every index page of the path (one per language: ``beginner.md``, ``beginner.zh.md``)."""
    explicit: tuple[str, ...] = ()
    """The index page's ``pages:`` list, as docs-relative paths."""
    select_tags: tuple[str, ...] = ()
    select_levels: tuple[str, ...] = ()

    @property
    def is_level(self) -> bool:
        """True for beginner/intermediate/advanced/expert; False for problem-oriented paths."""
        return self.name in LEVEL_PATHS

    def __contains__(self, rel: object) -> bool:
        return rel in self.pages

    def __iter__(self) -> Iterator[str]:
        return iter(self.pages)

    def __len__(self) -> int:
        return len(self.pages)

    def position(self, rel: str) -> int | None:
        """0-based position of ``rel`` in the path, or ``None``."""
        try:
            return self.pages.index(rel)
        except ValueError:
            return None


@dataclass(eq=False)
class Curriculum:
    """Every page, every path, and what is wrong with them.

    Compared by identity: `build_curriculum` gives the same object again for the same pages,
    and what was made from a curriculum is kept while it is the same (`RebuildMemo`)."""

    pages: dict[str, PathPage]
    paths: dict[str, LearningPath]
    """Keyed by name, in `ordered_paths` order."""
    order: list[str] = field(default_factory=list)
    """Every non-archived page in one global reading order (topological)."""
    findings: list[Finding] = field(default_factory=list)

    def ordered_paths(self) -> list[LearningPath]:
        """Level paths (beginner -> expert) first, then problem-oriented paths by name."""
        return list(self.paths.values())

    def path(self, name: str) -> LearningPath | None:
        return self.paths.get(name)

    def paths_of(self, rel: str) -> list[LearningPath]:
        """The paths ``rel`` is a member of (not those it is only the index of)."""
        return [path for path in self.paths.values() if rel in path.pages]

    def prerequisites(self, rel: str) -> list[PathPage]:
        """Direct prerequisites that exist, in the order written."""
        page = self.pages.get(rel)
        if page is None:
            return []
        return [self.pages[dep] for dep in page.depends_on if dep in self.pages]

    def all_prerequisites(self, rel: str) -> list[PathPage]:
        """Direct and indirect prerequisites, in global reading order."""
        seen: set[str] = set()
        stack = [rel]
        while stack:
            current = self.pages.get(stack.pop())
            for dep in current.depends_on if current else ():
                if dep in self.pages and dep not in seen and dep != rel:
                    seen.add(dep)
                    stack.append(dep)
        rank = {r: i for i, r in enumerate(self.order)}
        return [self.pages[r] for r in sorted(seen, key=lambda r: (rank.get(r, _NO_ORDER), r))]

    def dependents(self, rel: str) -> list[PathPage]:
        """Pages that name ``rel`` as a direct prerequisite."""
        return [page for page in self.pages.values() if rel in page.depends_on]

    def neighbours(self, path: str, rel: str) -> tuple[PathPage | None, PathPage | None]:
        """(previous, next) page of ``rel`` within ``path``; ``None`` at either end."""
        learning_path = self.paths.get(path)
        if learning_path is None:
            return None, None
        position = learning_path.position(rel)
        if position is None:
            return None, None
        pages = learning_path.pages
        previous = self.pages[pages[position - 1]] if position > 0 else None
        following = self.pages[pages[position + 1]] if position + 1 < len(pages) else None
        return previous, following

    def by_level(self) -> dict[str | None, list[PathPage]]:
        """Non-archived pages grouped by level (`LEVELS` order, then ``None``), reading order."""
        groups: dict[str | None, list[PathPage]] = {level: [] for level in LEVELS}
        groups[None] = []
        for rel in self.order:
            page = self.pages[rel]
            groups[page.level].append(page)
        return groups

    def findings_for(self, rel: str) -> list[Finding]:
        display = self.pages[rel].display if rel in self.pages else rel
        return [finding for finding in self.findings if finding.page == display]


# --------------------------------------------------------------------------------------------
# Loading


def load_pages(
    docs_root: Path, prefix: str | None = None, reuse: Mapping[str, Page] | None = None
) -> list[Page]:
    """Every ``*.md`` under ``docs_root`` (hidden directories skipped), sorted by path.

    ``prefix`` is prepended to each page's docs-relative path to form its display path
    (default: ``docs_root`` as given, so ``Path("docs")`` gives ``docs/analysis/x.md``).
    Pages in ``reuse`` (keyed by docs-relative path) are taken from it instead of re-read.
    """
    reuse = reuse or {}
    prefix = str(docs_root) if prefix is None else prefix
    pages = []
    for directory, subdirectories, names in os.walk(docs_root):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(names):
            if not name.endswith(".md"):
                continue
            source = Path(directory) / name
            rel = source.relative_to(docs_root).as_posix()
            if rel in reuse:
                pages.append(reuse[rel])
                continue
            display = f"{prefix.rstrip('/')}/{rel}" if prefix not in ("", ".") else rel
            pages.append(load_page(source, display, rel, docs_root))
    pages.sort(key=lambda page: page.rel)
    return pages


def load_curriculum(docs_root: Path, prefix: str | None = None) -> Curriculum:
    """The curriculum of every page under ``docs_root``."""
    return build_curriculum(load_pages(docs_root, prefix))


# --------------------------------------------------------------------------------------------
# Frontmatter positions (shared with generator.kb.specs)


def meta_position(page: Page, key: str, item: str | None = None) -> tuple[int, int]:
    """1-based (line, column) of frontmatter ``key`` (and of ``item`` in its value) in ``page``.

    Falls back to the opening delimiter (1, 1) when the key cannot be found.
    """
    if page.frontmatter is None:
        return 1, 1
    lines = page.frontmatter.splitlines()
    pattern = re.compile(rf"^(['\"]?){re.escape(key)}\1\s*:")
    for index, line in enumerate(lines):
        if pattern.match(line):
            if item is None:
                return index + 2, 1
            for offset in range(index, min(len(lines), index + 200)):
                text = lines[offset]
                if offset > index and text[:1] not in (" ", "\t", "-", ""):
                    break
                column = text.find(item, len(key) + 1 if offset == index else 0)
                if column >= 0:
                    return offset + 2, column + 1
            return index + 2, 1
    return 1, 1


def as_list(value: Any) -> list[Any]:
    """A frontmatter value that may be a scalar or a list, as a list (``None`` -> [])."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def first_heading(page: Page) -> str | None:
    for line in page.body.splitlines():
        match = re.match(r"#\s+(.+?)\s*#*\s*$", line)
        if match:
            return match.group(1)
    return None


def resolve_page_ref(target: str, from_rel: str, known: Iterable[str] | set[str]) -> str:
    """Normalise a ``depends_on``/``pages`` entry to a docs-relative path.

    Docs-relative first (``analysis/x.md``), then relative to the page (``../analysis/x.md``);
    ``.md`` may be omitted. Returns the best guess even when no such page exists.
    """
    known = known if isinstance(known, set) else set(known)
    text = target.strip().split("#", 1)[0].replace("\\", "/")
    candidates = []
    base = posixpath.dirname(from_rel)
    for raw in (text.lstrip("/"), posixpath.join(base, text)):
        normal = posixpath.normpath(raw) if raw else raw
        if normal.startswith("./"):
            normal = normal[2:]
        candidates.append(normal)
        if not normal.endswith(".md"):
            candidates.append(normal + ".md")
            candidates.append(normal.rstrip("/") + "/index.md")
    for candidate in candidates:
        if candidate in known:
            return candidate
    return candidates[0]


# --------------------------------------------------------------------------------------------
# Building


def build_curriculum(pages: Sequence[Page]) -> Curriculum:
    """Derive pages, paths and their reading order; record every problem as a finding.

    The curriculum made last is given again while no page's frontmatter, first heading or path
    has changed since: a build of the site asks for it twice (for its nav, and in the
    verification's findings), and ``mkdocs serve`` again after every edit, which most often
    changes a page's text alone. Callers only read what they are given."""
    global _last_built
    inputs = tuple(map(_curriculum_inputs, pages))
    last = _last_built
    if last is not None and last[0] == inputs:
        return last[1]
    curriculum = _Builder(pages).build()
    _last_built = (inputs, curriculum)
    return curriculum


_last_built: tuple[tuple[tuple[object, ...], ...], Curriculum] | None = None


def _curriculum_inputs(page: Page) -> tuple[object, ...]:
    """What `build_curriculum` reads of ``page``: all of it is in its frontmatter (values,
    positions, whether it could be read) but for a title taken from the first heading."""
    title = page.meta.get("title")
    heading = None if isinstance(title, str) and title.strip() else first_heading(page)
    problems = tuple(problem.check for problem in page.problems)
    return (page.rel, page.display, page.text is None, page.frontmatter, problems, heading)


class _Builder:
    def __init__(self, pages: Sequence[Page]) -> None:
        self.sources = {page.rel: page for page in pages}
        self.known = set(self.sources)
        self.findings: list[Finding] = []
        self.pages: dict[str, PathPage] = {}

    def finding(
        self,
        severity: Severity,
        check: str,
        rel: str,
        message: str,
        key: str | None = None,
        item: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        page = self.sources[rel]
        line, column = meta_position(page, key, item) if key else (1, 1)
        self.findings.append(
            Finding(severity, check, page.display, line, column, message, suggestion)
        )

    # -- pages

    def read_page(self, page: Page) -> PathPage:
        meta = page.meta
        rel = page.rel
        level = meta.get("level")
        if level is not None and level not in LEVELS:
            self.finding(
                _E,
                "level-invalid",
                rel,
                f"level {level!r} is not one of {', '.join(LEVELS)}",
                "level",
                suggestion=_closest(str(level), LEVELS),
            )
            level = None
        order = meta.get("order")
        if order is not None and (isinstance(order, bool) or not isinstance(order, int)):
            self.finding(
                _E,
                "order-invalid",
                rel,
                f"order must be an integer, not {order!r}",
                "order",
                suggestion="write a whole number such as 'order: 2'",
            )
            order = None
        depends = []
        for entry in as_list(meta.get("depends_on")):
            if not isinstance(entry, str) or not entry.strip():
                self.finding(
                    _E,
                    "prerequisite-missing",
                    rel,
                    f"depends_on entry {entry!r} is not a page path",
                    "depends_on",
                )
                continue
            target = resolve_page_ref(entry, rel, self.known)
            if target not in self.known:
                self.finding(
                    _E,
                    "prerequisite-missing",
                    rel,
                    f"prerequisite {entry!r} does not exist (looked for docs/{target})",
                    "depends_on",
                    entry,
                    suggestion=_closest(target, sorted(self.known)),
                )
            if target not in depends:
                depends.append(target)
        index_of = meta.get("path")
        if index_of is not None and not isinstance(index_of, str):
            index_of = None
        declared = tuple(str(p) for p in as_list(meta.get("paths")) if isinstance(p, str))
        if index_of is None and meta.get("kind") == INDEX_KIND and len(declared) == 1:
            index_of = declared[0]
        title = meta.get("title")
        if not isinstance(title, str) or not title.strip():
            title = first_heading(page) or posixpath.basename(rel).removesuffix(".md")
        status = meta.get("status")
        return PathPage(
            rel=rel,
            display=page.display,
            title=title,
            kind=meta.get("kind") if isinstance(meta.get("kind"), str) else None,
            level=level,
            order=order,
            status=status if isinstance(status, str) else None,
            lang=meta.get("lang") if isinstance(meta.get("lang"), str) else _lang_of(rel),
            spec=meta.get("spec") if isinstance(meta.get("spec"), str) else None,
            tags=tuple(str(t) for t in as_list(meta.get("tags"))),
            depends_on=tuple(depends),
            declared_paths=declared,
            index_of=index_of,
        )

    # -- ordering

    def sort_key(self, rel: str, explicit: dict[str, int] | None = None) -> tuple[Any, ...]:
        page = self.pages[rel]
        position = explicit.get(rel, _NO_ORDER) if explicit else _NO_ORDER
        order = page.order if page.order is not None else _NO_ORDER
        return (position, page.level_rank, order, rel)

    def closure(self) -> dict[str, set[str]]:
        """Transitive prerequisites of every page (cycles tolerated)."""
        memo: dict[str, set[str]] = {}
        for start in self.pages:
            seen: set[str] = set()
            stack = [start]
            while stack:
                for dep in self.pages[stack.pop()].depends_on:
                    if dep in self.pages and dep not in seen:
                        seen.add(dep)
                        stack.append(dep)
            seen.discard(start)
            memo[start] = seen
        return memo

    def topological(
        self, members: Iterable[str], before: dict[str, set[str]], key: Callable[[str], Any]
    ) -> list[str]:
        """Kahn's algorithm over ``members`` (``before[x]``: pages that must precede x)."""
        members = list(members)
        member_set = set(members)
        blockers = {rel: before[rel] & member_set for rel in members}
        waiting_on: dict[str, int] = {rel: len(blockers[rel]) for rel in members}
        unblocks: dict[str, list[str]] = {rel: [] for rel in members}
        for rel, deps in blockers.items():
            for dep in deps:
                unblocks[dep].append(rel)
        heap = [(key(rel), rel) for rel in members if waiting_on[rel] == 0]
        heapq.heapify(heap)
        result: list[str] = []
        while heap:
            _, rel = heapq.heappop(heap)
            result.append(rel)
            for follower in unblocks[rel]:
                waiting_on[follower] -= 1
                if waiting_on[follower] == 0:
                    heapq.heappush(heap, (key(follower), follower))
        if len(result) < len(members):  # cycles: keep the rest in key order
            placed = set(result)
            result.extend(sorted((r for r in members if r not in placed), key=key))
        return result

    def cycles(self) -> None:
        """Report each strongly connected component of the prerequisite graph once per page."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        components: list[list[str]] = []
        counter = 0
        for root in sorted(self.pages):
            if root in index:
                continue
            work = [(root, iter(self.pages[root].depends_on))]
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack.add(root)
            while work:
                node, children = work[-1]
                advanced = False
                for child in children:
                    if child not in self.pages:
                        continue
                    if child not in index:
                        index[child] = low[child] = counter
                        counter += 1
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(self.pages[child].depends_on)))
                        advanced = True
                        break
                    if child in on_stack:
                        low[node] = min(low[node], index[child])
                if advanced:
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in self.pages[node].depends_on:
                        components.append(sorted(component))
        for component in components:
            members = set(component)
            for rel in component:
                cycle = self._cycle_through(rel, members)
                shown = " -> ".join(cycle)
                nxt = cycle[1] if len(cycle) > 1 else rel
                self.finding(
                    _E,
                    "prerequisite-cycle",
                    rel,
                    f"prerequisites form a cycle: {shown}",
                    "depends_on",
                    _written(self.sources[rel], nxt),
                    suggestion="remove one of these depends_on entries",
                )

    def _cycle_through(self, start: str, members: set[str]) -> list[str]:
        """The shortest prerequisite cycle from ``start`` back to itself inside ``members``."""
        previous: dict[str, str] = {}
        queue = [start]
        while queue:
            node = queue.pop(0)
            for dep in self.pages[node].depends_on:
                if dep not in members:
                    continue
                if dep == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if dep not in previous:
                    previous[dep] = node
                    queue.append(dep)
        return [start, start]

    # -- build

    def build(self) -> Curriculum:
        for rel, page in sorted(self.sources.items()):
            if page.text is None:
                continue
            self.pages[rel] = self.read_page(page)
        self.cycles()
        before = self.closure()

        # Path definitions: index pages, explicit lists, selections.
        names: set[str] = set()
        indexes: dict[str, list[str]] = {}
        explicit: dict[str, list[str]] = {}
        select_tags: dict[str, list[str]] = {}
        select_levels: dict[str, list[str]] = {}
        for rel, page in self.pages.items():
            names.update(page.declared_paths)
            if page.index_of is None:
                continue
            names.add(page.index_of)
            indexes.setdefault(page.index_of, []).append(rel)
            meta = self.sources[rel].meta
            for entry in as_list(meta.get("pages")):
                target = resolve_page_ref(str(entry), rel, self.known)
                if target not in self.known:
                    self.finding(
                        _E,
                        "path-page-missing",
                        rel,
                        f"path {page.index_of!r} lists {entry!r}, which does not exist",
                        "pages",
                        str(entry),
                        suggestion=_closest(target, sorted(self.known)),
                    )
                    continue
                explicit.setdefault(page.index_of, [])
                if target not in explicit[page.index_of]:
                    explicit[page.index_of].append(target)
            select = meta.get("select")
            if isinstance(select, dict):
                tags = [str(t) for t in as_list(select.get("tags"))]
                levels = [str(v) for v in as_list(select.get("levels", select.get("level")))]
                select_tags.setdefault(page.index_of, []).extend(tags)
                select_levels.setdefault(page.index_of, []).extend(levels)
        for name, rels in indexes.items():
            by_lang: dict[str | None, list[str]] = {}
            for rel in rels:
                by_lang.setdefault(self.pages[rel].lang, []).append(rel)
            for lang, same in by_lang.items():
                for rel in same[1:]:
                    self.finding(
                        _W,
                        "path-index-duplicate",
                        rel,
                        f"path {name!r} already has an index page"
                        f"{f' in {lang!r}' if lang else ''}: {same[0]}",
                        "path",
                        suggestion="keep one index page per path and language",
                    )

        # Membership and order.
        index_pages = {rel for rels in indexes.values() for rel in rels}
        membership: dict[str, list[str]] = {}
        for name in names:
            listed = explicit.get(name, [])
            tags = set(select_tags.get(name, []))
            levels = set(select_levels.get(name, []))
            members = []
            for rel, page in self.pages.items():
                if page.archived or self.pages[rel].index_of == name:
                    continue
                if (
                    name in page.declared_paths
                    or rel in listed
                    or (tags and tags.intersection(page.tags))
                    or (levels and page.level in levels)
                ):
                    members.append(rel)
            position = {rel: i for i, rel in enumerate(listed)}
            ordered = self.topological(
                members, before, lambda rel, position=position: self.sort_key(rel, position)
            )
            membership[name] = ordered
            self.order_conflicts(name, ordered, position)

        # The starter's home page opens a path (`start`) that new pages join; once pages are
        # read on paths of their own, one holding the home page alone is no path to follow.
        followed = {
            name
            for name in names
            if indexes.get(name)
            or any(self.pages[rel].kind not in NO_PATH_KINDS for rel in membership[name])
        }
        if followed:
            names = followed

        def path_key(name: str) -> tuple[int, int, str]:
            if name in LEVEL_PATHS:
                return (0, LEVEL_PATHS.index(name), name)
            return (1, 0, name)

        paths: dict[str, LearningPath] = {}
        for name in sorted(names, key=path_key):
            rels = indexes.get(name, [])
            primary = _primary_index(rels, self.pages)
            title = self.pages[primary].title if primary else name.replace("-", " ").capitalize()
            paths[name] = LearningPath(
                name=name,
                title=title,
                pages=tuple(membership[name]),
                index=primary,
                indexes=tuple(rels),
                explicit=tuple(explicit.get(name, [])),
                select_tags=tuple(select_tags.get(name, [])),
                select_levels=tuple(select_levels.get(name, [])),
            )
        for rel, page in list(self.pages.items()):
            self.pages[rel] = _replace_paths(
                page, tuple(name for name, path in paths.items() if rel in path.pages)
            )

        # A path with no index page named like one that has an index page or that the home
        # page is in: most often a misspelt name, which would otherwise become a path of its
        # own on the site.
        declared = {name for name, path in paths.items() if path.index is not None} | {
            str(item)
            for rel in index_pages | {r for r, p in self.pages.items() if p.kind == "index"}
            if rel in self.sources
            for item in as_list(self.sources[rel].meta.get("paths"))
        }
        for name, path in paths.items():
            if path.index is not None or name in declared:
                continue
            close = difflib.get_close_matches(name, sorted(declared), n=1, cutoff=0.75)
            if not close:
                continue
            for rel in path.pages:
                if name not in [str(item) for item in as_list(self.sources[rel].meta.get("paths"))]:
                    continue
                self.finding(
                    _W,
                    "path-no-index",
                    rel,
                    f"learning path '{name}' has no index page, and is named like '{close[0]}'",
                    "paths",
                    name,
                    suggestion=f"did you mean '{close[0]}'?",
                )

        # Pages in no path.
        if paths:
            for rel, page in self.pages.items():
                if page.paths or page.archived or rel in index_pages:
                    continue
                if page.kind in NO_PATH_KINDS:
                    continue
                if any(p.check == "frontmatter-invalid" for p in self.sources[rel].problems):
                    continue  # its metadata is unreadable; the page reader reported that
                self.finding(
                    _E,
                    "page-not-in-path",
                    rel,
                    "page is in no learning path",
                    "paths" if "paths" in self.sources[rel].meta else None,
                    suggestion=f"add 'paths: [...]' naming one of: {', '.join(paths)}",
                )

        order = self.topological(
            [rel for rel, page in self.pages.items() if not page.archived],
            before,
            self.sort_key,
        )
        self.findings.sort(key=Finding.sort_key)
        return Curriculum(self.pages, paths, order, self.findings)

    def order_conflicts(self, name: str, ordered: list[str], explicit: dict[str, int]) -> None:
        """A page whose declared place in ``name`` comes before one of its prerequisites."""
        members = set(ordered)
        for rel in ordered:
            page = self.pages[rel]
            for dep in page.depends_on:
                if dep not in members or dep == rel:
                    continue
                other = self.pages[dep]
                reason = None
                if rel in explicit and dep in explicit and explicit[dep] > explicit[rel]:
                    reason = (
                        f"the path's page list puts it at #{explicit[rel] + 1}, before its "
                        f"prerequisite at #{explicit[dep] + 1}"
                    )
                elif rel in explicit or dep in explicit:
                    continue
                elif page.level_rank >= 0 and other.level_rank > page.level_rank:
                    reason = (
                        f"its level ({page.level}) comes before its prerequisite's ({other.level})"
                    )
                elif (
                    page.level_rank == other.level_rank
                    and page.order is not None
                    and other.order is not None
                    and other.order > page.order
                ):
                    reason = (
                        f"its order ({page.order}) comes before its prerequisite's ({other.order})"
                    )
                if reason:
                    self.finding(
                        _E,
                        "path-order-conflict",
                        rel,
                        f"in path {name!r} this page comes before its prerequisite {dep}: {reason}",
                        "depends_on",
                        _written(self.sources[rel], dep),
                        suggestion="reorder the path, or correct level/order/depends_on",
                    )


def _written(page: Page, target: str) -> str:
    """How ``target`` is written in the page's depends_on (for positions)."""
    for entry in as_list(page.meta.get("depends_on")):
        if isinstance(entry, str) and (
            entry.strip().lstrip("./") == target or target.endswith(entry.strip().lstrip("./"))
        ):
            return entry
    return target


def deep_dives_of(pages: Iterable[Page], pr: object, upstream: object) -> list[str]:
    """The PR deep dives among ``pages`` (docs-relative paths, sorted) of pull request ``pr`` of
    ``upstream``: what a review of the same pull request builds on."""
    return sorted(
        page.rel
        for page in pages
        if page.meta.get("kind") == "pr-deep-dive"
        and str(page.meta.get("pr")) == str(pr)
        and page.meta.get("upstream") == upstream
    )


def _replace_paths(page: PathPage, paths: tuple[str, ...]) -> PathPage:
    from dataclasses import replace

    return replace(page, paths=paths)


def _primary_index(rels: list[str], pages: dict[str, PathPage]) -> str | None:
    if not rels:
        return None
    return sorted(rels, key=lambda rel: (_lang_of(rel) is not None, rel))[0]


def _lang_of(rel: str) -> str | None:
    """``zh`` for ``x.zh.md``; ``None`` without a language suffix."""
    parts = posixpath.basename(rel).split(".")
    if len(parts) >= 3 and 2 <= len(parts[-2]) <= 5 and parts[-2].replace("-", "").isalpha():
        return parts[-2]
    return None


def _closest(word: str, choices: Sequence[str]) -> str | None:
    import difflib

    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {match[0]!r}?" if match else None

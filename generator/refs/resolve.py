"""Resolve code references against pinned upstream commits, and check what they cite.

Resolution decides which upstream, commit and repository path a reference means:

* a permalink names its repository and revision;
* a path starting with an upstream's prefix (``slime/``) belongs to that upstream;
* an absolute local path is mapped by its longest suffix that an upstream has;
* a bare (``actor.py``) or partial (``fsdp_utils/actor.py``) name is looked up among the files
  of the page's upstream, then of all upstreams; several matches are narrowed by search roots and
  by the symbol named next to the reference before they are reported as ambiguous.

Then the cited file, range and symbol are checked at that commit. Everything read goes through
`GitStore`, so each blob is read once per run, and a path that is not an entry of the commit's
tree is never read at all.
"""

from __future__ import annotations

import difflib
import functools
import logging
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, TypeVar

from generator.checks import severity_of
from generator.files import shown_path
from generator.model import CodeRef, Evidence, Finding, Fix, Quote, RefForm, ResolvedRef, Upstream
from generator.patterns import lazy_pattern
from generator.refs import inheritance
from generator.refs.extract.refs import CODE_EXTENSIONS, RefRecord
from generator.refs.outline import BRACE_LANGUAGES, brace_definitions
from generator.refs.quote import BlockIndex, FileIndex, is_strong, normalise, placements, prepare
from generator.upstream.gitstore import (
    BlobText,
    GitStore,
    RepositoryUnavailable,
    identifier_columns,
)
from generator.upstream.manifest import ConfigError, Manifest

log = logging.getLogger(__name__)

_FULL_SHA = lazy_pattern(r"^[0-9a-f]{40}$")
_HEX = lazy_pattern(r"^[0-9a-f]{7,40}$")
_MAX_LISTED = 8


@dataclass(frozen=True)
class HeldRef:
    """A reference a sync left anchored at an older commit, for a person to review."""

    upstream: str
    commit: str
    text: str
    occurrence: int
    status: str
    candidate: str | None = None
    context: str | None = None
    """What its page line held before it when it was held (`written_before`): with it, an edit
    that writes the same reference above it does not move the entry onto that one."""


Key = TypeVar("Key")

PINNED_OLDER = "is the page pinned to an older commit than it was written against?"
"""What a file missing at the pin but at the branch's head says of its page (`verify --fix`
then leaves the page's other references alone)."""
HELD_CONTEXT = 40
"""Characters before a held reference on its line that its ``held_refs`` entry records."""


def written_before(text: str, offset: int) -> str:
    """What the line of ``text`` holding a reference at ``offset`` holds before it: its last
    `HELD_CONTEXT` characters, without white space at either end."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text[max(line_start, offset - HELD_CONTEXT) : offset].strip()


def held_bound(
    held: Mapping[tuple[str, int], HeldRef], text: str, records: Sequence[RefRecord]
) -> dict[int, HeldRef]:
    """The held reference each of a page's references (``records``, found in ``text``) is,
    by the reference's index (`bind_held`)."""
    lines = text.split("\n")
    bound = bind_held(
        {key: (ref.text, ref.occurrence, ref.context) for key, ref in held.items()},
        [(r[2], written_before(lines[r[0] - 1], r[1] - 1)) for r in records],
    )
    return {index: held[key] for index, key in bound.items()}


def bind_held(
    entries: Mapping[Key, tuple[str, int, str | None]], refs: Sequence[tuple[str, str]]
) -> dict[int, Key]:
    """Which reference each ``held_refs`` entry names, by the index of the reference in
    ``refs`` (each reference's text and `written_before` it, in the page's order); an entry is
    (text, occurrence, context). An entry whose context a line of its text still reads takes
    that reference (the one nearest its occurrence, when several lines read so); any other, the
    occurrence-th reference of its text, as it always has. Each reference takes one entry."""
    places: dict[str, list[int]] = {}
    for index, (text, _) in enumerate(refs):
        places.setdefault(text, []).append(index)
    bound: dict[int, Key] = {}
    by_occurrence = []
    for key, (text, occurrence, context) in entries.items():
        found = places.get(text, [])
        if context is not None:
            reading = [
                n for n, i in enumerate(found, 1) if refs[i][1] == context and i not in bound
            ]
            if reading:
                nearest = min(reading, key=lambda n: abs(n - occurrence))
                bound[found[nearest - 1]] = key
                continue
        by_occurrence.append((key, found, occurrence))
    for key, found, occurrence in by_occurrence:
        if occurrence <= len(found) and found[occurrence - 1] not in bound:
            bound[found[occurrence - 1]] = key
    return bound


@dataclass
class PageContext:
    """What a page's frontmatter says about where its references point."""

    page: str
    upstream: str | None = None
    pins: dict[str, str] = field(default_factory=dict)
    search_roots: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    held: dict[tuple[str, int], HeldRef] = field(default_factory=dict)
    """References a sync could not move, by (text, occurrence on the page)."""
    cited: frozenset[str] = frozenset()
    """Paths the page cites from the repository root: what its bare names most likely mean."""
    quotes: dict[tuple[int, int], Quote] = field(default_factory=dict)
    """The code the page quotes for its references, by (line, column): the evidence that tells
    apart files with the same name."""
    short_pins: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Pins written as less than a full SHA, by upstream: as written, and the index of their
    finding in `findings` (`Resolver.settle_short_pins` reads them in the clone)."""
    missing_commits: set[tuple[str, str]] = field(default_factory=set)
    """The (upstream, commit) pins of the page found missing from their clone, each reported
    once, by the first reference that meets it. Kept with the page's resolution, not the run's:
    a page resolved again (out of its turn first, then in it) reports it again."""

    anchored: dict[str, str] = field(default_factory=dict)
    """The commits a sync moved the page to (``anchored_at``), by upstream."""
    own: frozenset[str] = frozenset()
    """The upstreams the page pins itself (``pin``, ``pins``), which ``anchored_at`` does not
    override."""

    def own_pins(self) -> dict[str, str]:
        """The commits the page pins itself, by upstream (full SHAs only)."""
        return {name: sha for name, sha in self.pins.items() if name in self.own}

    def synced_at(self, upstream: str) -> str | None:
        """The commit a sync moved the page to for ``upstream``, when the page is checked
        there (no pin of its own overrides it); None otherwise."""
        commit = self.anchored.get(upstream)
        return commit if commit is not None and self.pins.get(upstream) == commit else None

    def hints_for(self, ref: CodeRef) -> tuple[Any, ...]:
        """What the page knows that may decide which file a bare name means: its full paths
        and the code it quotes for that citation (empty: nothing)."""
        quote = self.quotes.get((ref.line, ref.column))
        if not self.cited and quote is None:
            return ()
        return (self.cited, quote.text if quote is not None else None)

    def lean_on(
        self, records: Sequence[RefRecord], evidence: Mapping[int, Evidence] | None = None
    ) -> None:
        """Let the page's bare names lean on what the page says elsewhere: its full paths, and
        the code it quotes for each bare name (``evidence``, by record index). Every command
        that resolves a page's references does so, so that they agree on what a name means."""
        if not any(record[3] is RefForm.BARE for record in records):
            return
        self.cited = frozenset(
            record[4] for record in records if record[3] is RefForm.PATH and record[5]
        )
        if evidence:
            self.quotes = {
                (records[i][0], records[i][1]): found.quote
                for i, found in evidence.items()
                if found.quote is not None and records[i][3] is RefForm.BARE
            }

    @property
    def key(self) -> tuple[Any, ...]:
        """What, besides the reference itself, decides how a reference resolves."""
        return (self.upstream, tuple(sorted(self.pins.items())), self.search_roots)

    def held_at(self, held: HeldRef) -> PageContext:
        """This context with the held reference's upstream pinned where the reference was held."""
        return self.at(held.upstream, held.commit)

    def at(self, upstream: str, commit: str) -> PageContext:
        """This context with ``upstream`` pinned at ``commit``."""
        return PageContext(
            self.page,
            self.upstream,
            {**self.pins, upstream: commit},
            self.search_roots,
            missing_commits=self.missing_commits,
        )


def page_context(
    page: str, meta: dict[str, Any], manifest: Manifest, frontmatter: str | None = None
) -> PageContext:
    """Read ``upstream``, ``pin``, ``pins`` and ``search_roots`` from a page's frontmatter (its
    text, ``frontmatter``, places each problem at the line that says it)."""
    context = PageContext(page=page)

    def problem(
        check: str,
        message: str,
        suggestion: str | None = None,
        keys: tuple[str, ...] = (),
        value: str | None = None,
    ) -> None:
        line, column = _frontmatter_position(frontmatter, keys, value)
        context.findings.append(
            Finding(severity_of(check), check, page, line, column, message, suggestion)
        )

    known = ", ".join(sorted(manifest.upstreams)) or "(none)"
    upstream = meta.get("upstream")
    if upstream is not None:
        if not isinstance(upstream, str) or upstream not in manifest.upstreams:
            problem(
                "unknown-upstream",
                f"frontmatter 'upstream: {upstream}' is not in {manifest.display_path()}",
                f"use one of: {known}",
                ("upstream",),
            )
        else:
            context.upstream = upstream
    pins: dict[str, Any] = {}
    anchored = meta.get("anchored_at")
    if anchored is not None:
        # Written by sync: the commit the page's line numbers refer to, below its own pins.
        if isinstance(anchored, dict):
            pins.update(anchored)
            context.anchored = {k: v for k, v in anchored.items() if isinstance(v, str)}
        else:
            problem(
                "pin-invalid",
                "frontmatter 'anchored_at' must map upstream names to SHAs",
                keys=("anchored_at",),
            )
    if meta.get("pin") is not None:
        if context.upstream is None and upstream is None:
            problem(
                "pin-invalid",
                "frontmatter 'pin' needs 'upstream' to say which upstream it pins",
                "add 'upstream: NAME' or use 'pins: {NAME: SHA}'",
                ("pin",),
            )
        elif context.upstream is not None:
            pins[context.upstream] = meta["pin"]
            context.own = frozenset({context.upstream})
    raw_pins = meta.get("pins")
    if raw_pins is not None:
        if not isinstance(raw_pins, dict):
            problem(
                "pin-invalid",
                "frontmatter 'pins' must map upstream names to commit SHAs",
                keys=("pins",),
            )
        else:
            pins.update(raw_pins)
            context.own |= {str(name) for name in raw_pins}
    for name, sha in pins.items():
        if name not in manifest.upstreams:
            problem(
                "unknown-upstream",
                f"frontmatter pins unknown upstream '{name}'",
                f"use one of: {known}",
                ("pins", "anchored_at"),
                str(name),
            )
        elif not isinstance(sha, str) or not _FULL_SHA.match(sha):
            context.short_pins[name] = (str(sha), len(context.findings))
            problem(
                "pin-invalid",
                f"pin for '{name}' is '{sha}', not a full 40-character commit SHA",
                "write the full SHA (git rev-parse <rev>)",
                ("pin", "pins", "anchored_at"),
                str(sha),
            )
        else:
            context.pins[name] = sha
    _read_held_refs(meta.get("held_refs"), context, manifest, problem)
    roots = meta.get("search_roots")
    if isinstance(roots, str):
        roots = [roots]
    if isinstance(roots, list):
        context.search_roots = tuple(
            str(root).removeprefix("./").rstrip("/") + "/" for root in roots if root
        )
    return context


def _frontmatter_position(
    frontmatter: str | None, keys: tuple[str, ...], value: str | None
) -> tuple[int, int]:
    """Where the frontmatter says something, as a page line and column: the line of the first
    top-level key of ``keys`` (``pin:``), or, with ``value``, the first line from that key on
    that holds it (``  minitrain: abc``); 1, 1 when it says nothing of it."""
    if not frontmatter or not keys:
        return 1, 1
    lines = frontmatter.split("\n")
    for number, line in enumerate(lines):
        key = line.split(":", 1)[0].strip()
        if line[:1] not in (" ", "\t", "-") and key in keys:
            if value is None:
                return number + 2, 1  # (the page's first line is the opening ---)
            for below in range(number, len(lines)):
                if below > number and lines[below][:1] not in (" ", "\t", "-"):
                    break
                column = lines[below].find(value)
                if column != -1:
                    return below + 2, column + 1
    return 1, 1


def _read_held_refs(held: Any, context: PageContext, manifest: Manifest, said: Any) -> None:
    if held is None:
        return

    def problem(check: str, message: str, suggestion: str | None = None) -> None:
        said(check, message, suggestion, ("held_refs",))

    if not isinstance(held, list):
        problem("pin-invalid", "frontmatter 'held_refs' must be a list")
        return
    for entry in held:
        if not isinstance(entry, dict) or not {"upstream", "commit", "ref"} <= set(entry):
            problem("pin-invalid", f"held_refs entry {entry!r} needs upstream, commit and ref")
            continue
        commit = str(entry["commit"])
        upstream = entry["upstream"]
        if (
            not isinstance(upstream, str)
            or upstream not in manifest.upstreams
            or not _FULL_SHA.match(commit)
        ):
            problem(
                "pin-invalid",
                f"held_refs entry for '{entry['ref']}' names an unknown "
                "upstream or a malformed commit",
            )
            continue
        occurrence = entry.get("occurrence", 1)
        if isinstance(occurrence, str) and occurrence.isascii() and occurrence.isdigit():
            occurrence = int(occurrence)  # (quoted by hand: `occurrence: "2"`)
        if isinstance(occurrence, bool) or not isinstance(occurrence, int) or occurrence < 1:
            problem(
                "pin-invalid",
                f"held_refs entry for '{entry['ref']}' has occurrence {occurrence!r}: it counts "
                "the reference's citations on the page, from 1",
                "write the number sync wrote, or remove the entry and sync again",
            )
            continue
        written = entry.get("context")
        context.held[(str(entry["ref"]), occurrence)] = HeldRef(
            entry["upstream"],
            commit,
            str(entry["ref"]),
            occurrence,
            str(entry.get("status", "changed")),
            entry.get("candidate"),
            written if isinstance(written, str) else None,
        )


class CloneMissing(ConfigError):
    """An upstream's clone is not there: its references are reported as unchecked, not as a
    configuration error (nobody clones PyTorch to read a page about slime)."""


class _DirectTarget(NamedTuple):
    upstream: Upstream
    commit: str
    path: str
    """Normalised path in the repository."""
    sha: str
    """The file's blob."""


class Resolver:
    """Resolves and checks references for many pages, sharing clones, trees and blobs."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._stores: dict[str, GitStore] = {}
        self._by_slug = {
            upstream.github_slug: upstream
            for upstream in manifest.upstreams.values()
            if upstream.github_slug
        }
        self._prefixes = sorted(
            (
                (prefix, upstream)
                for upstream in manifest.upstreams.values()
                for prefix in upstream.prefixes
            ),
            key=lambda item: -len(item[0]),
        )
        self._by_repository_name = {
            name.lower(): upstream
            for upstream in manifest.upstreams.values()
            for name in _repository_names(upstream)
        }
        """Upstreams by the name of their repository (``Megatron-LM``), which a path written
        from the directory a checkout sits in starts with."""
        self._at_missing_commit = False
        """Whether the verdict being reached met a commit the clone lacks (see `verdict`)."""
        self._verdicts: dict[tuple[Any, ...], dict[VerdictKey, ResolvedRef]] = {}
        self._search_order: dict[str | None, list[Upstream]] = {}
        self._class_indexes: dict[tuple[str, str], inheritance.ClassIndex] = {}
        """The class headers of an upstream's commit, by upstream and commit (`_inherits`)."""
        self._direct_targets: dict[tuple[Any, ...], dict[str, _DirectTarget | None]] = {}
        self._pools: dict[tuple[int, str, str, str], list[str]] = {}
        self._narrowing = False
        """Whether the verdict being reached had several files to choose from."""
        self._narrowed: set[VerdictKey] = set()
        """References naming several files: their verdicts are kept per page hints."""
        self.not_cloned: set[str] = set()
        """Upstreams with no clone here, met while resolving."""

    @property
    def blob_reads(self) -> int:
        return sum(store.blob_reads for store in self._stores.values())

    @property
    def tree_reads(self) -> int:
        return sum(store.tree_reads for store in self._stores.values())

    def close(self) -> None:
        """End the clones' git processes. What was read from them stays until the resolver is
        dropped: a process about to exit need not free it object by object (`generator.cli`)."""
        for store in self._stores.values():
            store.close()

    def forked(self) -> None:
        """In a forked process: read through processes of its own (`GitStore.forked`)."""
        for store in self._stores.values():
            store.forked()

    # -- clones ---------------------------------------------------------------------------

    def settle_short_pins(self, context: PageContext) -> None:
        """Read the page's pins written short (``pin: 7fffb7c``, a tag) in their clones: the
        references are checked at the commit meant, not at the manifest's pin, and the
        finding gives the full SHA to write (it stays an error: a short SHA may come to name
        two commits, a tag may move)."""
        for name, (given, index) in context.short_pins.items():
            upstream = self.manifest.upstreams.get(name)
            if upstream is None:
                continue
            try:
                commit = self.store(upstream).resolve_given(given)
            except ConfigError:
                continue  # (no clone: reported by the references that need it)
            finding = context.findings[index]
            if commit is None:
                context.findings[index] = replace(
                    finding,
                    message=f"{finding.message}, and names no commit of {name}",
                    suggestion=f"write the commit the page was written against (kb pin suggest "
                    f"{context.page})",
                )
                continue
            context.pins[name] = commit
            context.findings[index] = replace(
                finding,
                message=f"{finding.message}; its references are checked at {commit[:12]}, "
                "which it names",
                suggestion=f"write {commit}",
            )

    def store(self, upstream: Upstream) -> GitStore:
        """The clone of ``upstream``; raises `ConfigError` if it is missing or lacks the pin."""
        store = self._stores.get(upstream.name)
        if store is None:
            assert upstream.clone_dir is not None
            key = f"upstreams.{upstream.name}"
            try:
                store = GitStore(upstream.clone_dir)
            except RepositoryUnavailable:
                error = self.manifest.error(
                    f"no clone at {shown_path(upstream.clone_dir)}",
                    key,
                    hint=f"run `kb upstreams fetch {upstream.name}` to clone {upstream.url}",
                )
                raise CloneMissing(
                    error.message, file=error.file, line=error.line, key=key, hint=error.hint
                ) from None
            if store.resolve(upstream.pin) != upstream.pin:
                store.close()
                raise self.manifest.error(
                    f"pinned commit {upstream.pin} is not in the clone at "
                    f"{shown_path(upstream.clone_dir)}",
                    f"{key}.pin",
                    hint=f"run `kb upstreams fetch {upstream.name}` to fetch it, "
                    "or correct the pin",
                )
            self._stores[upstream.name] = store
        return store

    def cloned(self, upstream: Upstream) -> bool:
        """Whether ``upstream`` has a clone here (a clone without the pin is still an error)."""
        if upstream.name in self._stores:
            return True
        if upstream.name in self.not_cloned:
            return False
        try:
            self.store(upstream)
        except CloneMissing:
            self.not_cloned.add(upstream.name)
            return False
        return True

    def commit_for(self, upstream: Upstream, context: PageContext) -> str:
        return context.pins.get(upstream.name, upstream.pin)

    # -- resolution -----------------------------------------------------------------------

    def resolve(self, ref: CodeRef, context: PageContext) -> ResolvedRef:
        """What ``ref`` cites in ``context``, with its findings; the caller may add to it."""
        return self.relocated(ref, self.verdict(ref, context))

    def forget_verdicts(self) -> None:
        """Drop the verdicts reached so far (the clones' trees and blobs stay read): for a
        caller checking pages one at a time, which would otherwise keep every verdict of every
        page until it ends."""
        self._verdicts.clear()
        self._direct_targets.clear()

    def verdicts_in(self, context: PageContext) -> dict[VerdictKey, ResolvedRef]:
        """The verdicts reached so far in ``context``, by `verdict_key`, for callers that look
        many references up at once (`verdict` fills it)."""
        verdicts = self._verdicts.get(context.key)
        if verdicts is None:
            verdicts = self._verdicts[context.key] = {}
        return verdicts

    def verdict(
        self,
        ref: CodeRef,
        context: PageContext,
        known: dict[VerdictKey, ResolvedRef] | None = None,
    ) -> ResolvedRef:
        """What ``ref`` cites in ``context``, shared by every reference with the same target.

        The same reference is usually cited many times (on one page and across pages with the
        same pins), so a verdict is reached once per context and target, and its findings carry
        the position of the reference that reached it: `relocated` moves them to another
        citation. Do not change a verdict; a verdict that is not shared (a commit missing from
        the clone is reported once per page) is returned all the same. ``known``: what
        `verdicts_in` gave for ``context``, when the caller has it.
        """
        verdicts = self.verdicts_in(context) if known is None else known
        if ref.revision and ref.form is not RefForm.PERMALINK:
            context = self.linked_context(ref, context)  # (the key holds the link's revision)
        key = base = verdict_key(ref)
        if base in self._narrowed:
            # A name several files share: which one it means may rest on what only its page
            # knows (`_narrow`), so such a verdict is shared only with the same hints.
            key = (*base, context.hints_for(ref))
        cached = verdicts.get(key)
        if cached is not None:
            return cached
        result = ResolvedRef(ref=ref)
        self._at_missing_commit = False
        self._narrowing = False
        direct = None
        if ref.form is RefForm.PATH and not ref.is_directory and ref.end is not None:
            direct = self._direct_target(ref.path, context)
        if direct is not None and ref.start is not None and ref.end is not None:
            # The path is known to name a file at a commit the clone has: only its lines
            # remain to be checked, as `_check_target` would.
            upstream, commit, path, sha = direct
            result.upstream, result.commit, result.path = upstream.name, commit, path
            self._check_lines(result, upstream, commit, path, sha)
        else:
            if ref.form is RefForm.PERMALINK:
                self._resolve_permalink(result, context)
            else:
                self._resolve_path(result, context)
            if (
                result.upstream
                and result.commit
                and result.path is not None
                and not result.unchecked
            ):
                self._check_target(result)
        # A reference at a commit the clone lacks is reported once per page, by whichever of
        # the page's references comes first: its verdict, with or without the finding, is the
        # page's own, or a later page citing only the same references would pass unreported.
        if self._narrowing and key is base:
            self._narrowed.add(base)
            key = (*base, context.hints_for(ref))
        if not self._at_missing_commit and not any(
            finding.check == "commit-missing" for finding in result.findings
        ):
            verdicts[key] = result
        return result

    def read_ahead(self, pages: Iterable[tuple[Sequence[RefRecord], PageContext]]) -> None:
        """Read, in as few exchanges with git as the trees are deep, what reaching the verdicts
        of the ``pages``' records (each with its page's context) will read one by one: their
        commits, the directories down to each file cited with lines (by its path, or by a
        permalink at a commit), the trees `_search` will look through for a path no prefix
        claims, then the blobs certain to be read: the cited files' (`_direct_target`'s, and
        the permalinks'), and that of the one file a search finds. For many pages at once (a
        share of a run's), it is one exchange per level of depth for all their commits rather
        than several per page.

        It reads only what resolution will read, and opens only the clones it will open. It
        raises nothing and decides nothing: what fails here (a clone that does not open, a pin
        or an object git lacks) is met again, and reported, by the reference that needs it."""
        try:
            self._read_pages_ahead(pages)
        except (ConfigError, RepositoryUnavailable, OSError):
            log.debug("reading ahead stopped; references read what they need", exc_info=True)

    def _read_pages_ahead(self, pages: Iterable[tuple[Sequence[RefRecord], PageContext]]) -> None:
        failed: set[str] = set()

        def opened(upstream: Upstream) -> bool:  # (each clone that fails tried once)
            if upstream.name not in failed:
                try:
                    if self.cloned(upstream):
                        return True
                except ConfigError:
                    pass
                failed.add(upstream.name)
            return False

        # What each page cites with lines from a clone, and the paths no prefix claims.
        with_lines: list[tuple[list[RefRecord], PageContext]] = []
        # The paths `_search` looks for, each with whether its lines are cited (then the one
        # file it finds is read: `_searched_blob`).
        unclaimed: list[tuple[list[tuple[str, bool]], PageContext]] = []
        commits: dict[str, set[str]] = {}
        walks: dict[str, dict[str, list[str]]] = {}
        linked: list[tuple[Upstream, str, str]] = []  # permalinks' (upstream, commit, path)
        for records, context in pages:
            cited = []
            searched_for = []
            for record in records:
                form = record[3]
                if form is RefForm.PERMALINK:
                    target = self._linked_file(record)
                    if target is not None and opened(target[0]):
                        upstream, commit, normal = target
                        linked.append(target)
                        commits.setdefault(upstream.name, set()).add(commit)
                        walks.setdefault(upstream.name, {}).setdefault(commit, []).append(normal)
                    continue
                if form is not RefForm.PATH and form is not RefForm.BARE:
                    continue
                if record[10]:
                    continue  # a link's text: its link's file, read ahead with the link
                claimed = self._claimed(record[4])
                if claimed is None:
                    normal = _normal_path(record[4]) if record[4] else ""
                    if not _leaves_repository(normal):  # (no search: `path-escape`)
                        lines = record[5] is not None and record[6] is not None and not record[11]
                        searched_for.append((normal, lines))
                elif form is RefForm.PATH and record[5] is not None and record[6] is not None:
                    normal, upstream = claimed
                    if not record[11] and opened(upstream):  # (not cited as a directory)
                        cited.append(record)
                        commit = self.commit_for(upstream, context)
                        commits.setdefault(upstream.name, set()).add(commit)
                        walks.setdefault(upstream.name, {}).setdefault(commit, []).append(normal)
            with_lines.append((cited, context))
            if searched_for:
                unclaimed.append((searched_for, context))
                own = self.manifest.upstreams.get(context.upstream or "")
                if own is not None and opened(own):  # (which may settle them: `_search`)
                    commits.setdefault(own.name, set()).add(self.commit_for(own, context))
        # Their commits; then the clones `_search` will look through, and their commits.
        for name, wanted in commits.items():
            self._stores[name].read_commits_ahead(wanted)
        searched: dict[str, set[str]] = {}
        for paths, context in unclaimed:
            own = self.manifest.upstreams.get(context.upstream or "")
            if own is not None and not opened(own):
                continue  # (resolution finds the page's own clone missing: no search)
            if all(self._settled_by_own(path, context) for path, _ in paths):
                continue
            for upstream in self._searched_upstreams(context):
                if opened(upstream):
                    searched.setdefault(upstream.name, set()).add(
                        self.commit_for(upstream, context)
                    )
        for name, wanted in searched.items():
            self._stores[name].read_commits_ahead(wanted)
        # The directories down to the cited files and the trees searched, a level at a time.
        for name in {*walks, *searched}:
            store, upstream = self._stores[name], self.manifest.upstreams[name]
            store.read_trees_ahead(
                {
                    c: found
                    for c, found in walks.get(name, {}).items()
                    if self._holds(store, upstream, c)
                },
                [c for c in searched.get(name, ()) if self._holds(store, upstream, c)],
            )
        # The cited files' blobs; for a file not there, whether git recorded a rename.
        blobs: dict[str, list[str]] = {}
        absent: dict[tuple[str, str], list[str]] = {}
        for cited, context in with_lines:
            for record in cited:
                direct = self._direct_target(record[4], context)
                if direct is not None:
                    blobs.setdefault(direct[0].name, []).append(direct[3])
                else:
                    missing = self._missing_file(record[4], context)
                    if missing is not None:
                        absent.setdefault(missing[0], []).append(missing[1])
        for upstream, commit, path in linked:
            store = self._stores[upstream.name]
            entry = store.entry(commit, path) if self._holds(store, upstream, commit) else None
            if entry is not None and entry.kind == "blob" and not entry.is_symlink:
                blobs.setdefault(upstream.name, []).append(entry.sha)
        for paths, context in unclaimed:
            own = self.manifest.upstreams.get(context.upstream or "")
            if own is not None and not opened(own):
                continue
            for path in {path for path, lines in paths if lines}:  # (each searched once)
                found = self._searched_blob(path, context)
                if found is not None:
                    blobs.setdefault(found[0], []).append(found[1])
        for name, shas in blobs.items():
            self._stores[name].read_ahead(shas)
        for (name, commit), found in absent.items():
            self._stores[name].read_renames_ahead(found, commit)

    def _linked_file(self, record: RefRecord) -> tuple[Upstream, str, str] | None:
        """The upstream, commit and path of a permalink to lines of a file at a full commit
        SHA (`_resolve_permalink` checks them there); None for any other permalink."""
        upstream = self._by_slug.get(record[8] or "")
        revision = record[10] or ""
        if upstream is None or record[5] is None or record[6] is None or record[11]:
            return None
        normal = _normal_path(record[4]) if record[4] else ""
        if not _FULL_SHA.match(revision) or not normal or _leaves_repository(normal):
            return None
        return upstream, revision, normal

    def _searched_blob(self, path: str, context: PageContext) -> tuple[str, str] | None:
        """The upstream's name and the blob of the one file `_search` finds for ``path``, a file
        that is neither a link nor a submodule: the blob its lines are checked in. None when
        the search finds none or several (which `_narrow` may read a few of, or none)."""
        own = self._settled_by_own(path, context)
        if own is not None:
            candidates = [(own, path)]
        else:
            candidates = [
                (upstream, found)
                for upstream in self._searched_upstreams(context)
                for found in self._matches(upstream, context, path)
            ]
        if len(candidates) != 1:
            return None
        upstream, found = candidates[0]
        at = self._at_commit(upstream, context)
        entry = None if at is None else at[0].entry(at[1], found)
        if entry is None or entry.kind != "blob" or entry.is_symlink:
            return None
        return upstream.name, entry.sha

    def _holds(self, store: GitStore, upstream: Upstream, commit: str) -> bool:
        """Whether the clone ``store`` of ``upstream`` has ``commit``: its pin (checked when
        the clone was opened) or a commit it resolves to itself."""
        return commit == upstream.pin or store.resolve(commit) == commit

    def _claimed(self, path: str) -> tuple[str, Upstream] | None:
        """``path`` normalised, and the upstream whose prefix claims it (none for a path that
        leaves the repository or that no prefix claims)."""
        normal = _normal_path(path) if path else ""
        if _leaves_repository(normal):
            return None
        upstream = self._route(normal)
        return None if upstream is None else (normal, upstream)

    def _missing_file(self, path: str, context: PageContext) -> tuple[tuple[str, str], str] | None:
        """For a path an upstream's prefix claims but its tree lacks at the page's commit (a
        file-missing finding to come, which asks whether git recorded a rename): the store and
        commit to ask, and the path. None in every other case."""
        claimed = self._claimed(path)
        if claimed is None or not self.cloned(claimed[1]):
            return None
        normal, upstream = claimed
        try:
            store = self.store(upstream)
        except ConfigError:  # resolution opens it again, and reports why it cannot
            return None
        commit = self.commit_for(upstream, context)
        if not self._holds(store, upstream, commit):
            return None
        if store.entry(commit, normal) is not None or store.is_directory(commit, normal):
            return None
        return (upstream.name, commit), normal

    def linked_context(self, ref: CodeRef, context: PageContext) -> PageContext:
        """Where ``ref`` is checked: for the text of a link to a permalink at a commit (which
        gave it the link's revision, `CodeRef.repo_slug`), the page's context with the link's
        upstream pinned at that commit; the page's own for any other reference, and when the
        link names a branch or a commit the clone lacks (the permalink itself says so)."""
        if ref.form is RefForm.PERMALINK or not names_a_commit(ref):
            return context
        upstream = self._by_slug.get(ref.repo_slug or "")
        if upstream is None or not self.cloned(upstream):
            return context
        commit = self.store(upstream).resolve(ref.revision)
        if commit is None or commit == self.commit_for(upstream, context):
            return context
        return context.at(upstream.name, commit)

    def _direct_target(self, path: str, context: PageContext) -> _DirectTarget | None:
        """Where the path ``path``, cited with a line range, leads in the common case: a path
        that an upstream's prefix claims, naming a file (not a link or a submodule) at a commit
        the clone has. `_resolve_path`, `_attribute` and `_check_target` would find the same,
        with no finding before the lines are checked. None in every other case, and while the
        upstream's clone is not open: opening one may fail, which must happen where resolution
        opens it."""
        targets = self._direct_targets.get(context.key)
        if targets is None:
            targets = self._direct_targets[context.key] = {}
        elif path in targets:
            return targets[path]
        claimed = self._claimed(path)
        if claimed is None:
            targets[path] = None
            return None
        normal, upstream = claimed
        store = self._stores.get(upstream.name)
        if store is None:
            return None  # not kept: the clone may be opened later
        commit = self.commit_for(upstream, context)
        target = None
        if self._holds(store, upstream, commit):
            entry = store.entry(commit, normal)
            if entry is not None and entry.kind == "blob" and not entry.is_symlink:
                target = _DirectTarget(upstream, commit, normal, entry.sha)
        targets[path] = target
        return target

    @staticmethod
    def relocated(ref: CodeRef, verdict: ResolvedRef) -> ResolvedRef:
        """``verdict`` for the citation ``ref``: its findings placed where ``ref`` is."""
        return ResolvedRef(
            ref,
            verdict.upstream,
            verdict.commit,
            verdict.path,
            relocated_findings(ref, verdict),
            verdict.unchecked,
        )

    def _without_web_url(self, slug: str) -> Upstream | None:
        """The upstream with no ``web_url`` that a link to ``owner/repo`` most likely means:
        one named ``repo``, or cloned from a URL ending in it."""
        repository = slug.rsplit("/", 1)[-1]
        for upstream in self.manifest.upstreams.values():
            if upstream.web_url:
                continue
            url = upstream.url.rstrip("/").removesuffix(".git").lower()
            if upstream.name.lower() == repository or url.endswith(f"/{repository}"):
                return upstream
        return None

    def _resolve_permalink(self, result: ResolvedRef, context: PageContext) -> None:
        ref = result.ref
        upstream = self._by_slug.get(ref.repo_slug or "")
        if upstream is None:
            unlinked = self._without_web_url(ref.repo_slug or "")
            if unlinked is not None:
                # The upstream is there, but nothing says it is this repository.
                self._add(
                    result,
                    "unattributed",
                    f"{ref.repo_slug} is no configured upstream's web_url (upstream "
                    f"'{unlinked.name}' has none); this link is not checked",
                    f"add 'web_url: {ref.url_host or 'https://github.com'}/{ref.repo_slug}' to "
                    f"'{unlinked.name}' in {self.manifest.display_path()}",
                )
                return
            self._add(
                result,
                "unattributed",
                f"{ref.repo_slug} is not a configured upstream; this link is not checked",
                f"add it to {self.manifest.display_path()} to check links into it",
            )
            return
        if not self.cloned(upstream):
            result.upstream, result.commit = upstream.name, self.commit_for(upstream, context)
            result.path, result.unchecked = ref.path, True
            return
        store = self.store(upstream)
        revision, path = self._split_revision(store, f"{ref.revision}/{ref.path}".rstrip("/"))
        commit = store.resolve(revision)
        result.upstream = upstream.name
        if _HEX.match(revision):
            if commit is None:
                self._add(
                    result,
                    "commit-missing",
                    f"commit {revision} is not in the clone of '{upstream.name}'",
                    f"fetch it: git -C {shown_path(upstream.clone_dir)} fetch origin {revision}",
                )
                return
            result.commit, result.path = commit, self._normalised(result, path)
            return
        pinned = self.commit_for(upstream, context)
        if self._pin_missing(result, upstream, pinned, context):
            return
        lines = _fragment(ref.start, ref.end)
        kind = "tree" if ref.is_directory else "blob"
        message = (
            f"link names '{revision}', which moves; it is checked at the pin "
            f"{upstream.name}@{pinned[:7]}"
        )
        differ = None
        if commit is not None and commit != pinned and ref.start is not None:
            differ = branch_drift(store, commit, pinned, _normal_path(path), ref)
        if differ is None:
            suggestion = _with_commit(ref.text, revision, pinned) or (
                f"{ref.url_host}/{ref.repo_slug}/{kind}/{pinned}/{path}{lines}"
            )
        else:
            message += f"; {differ}: pinning it would change what it cites"
            suggestion = "check the lines, then link to the commit they come from"
        self._add(result, "unpinned-permalink", message, suggestion)
        result.commit, result.path = pinned, self._normalised(result, path)

    def _split_revision(self, store: GitStore, rest: str) -> tuple[str, str]:
        """Split ``feature/x/path/file.py`` into revision and path, longest branch first."""
        parts = rest.split("/")
        if _FULL_SHA.match(parts[0]) and store.resolve(parts[0]):
            # A permalink's commit: no branch is named so (asking which are costs a process).
            return parts[0], "/".join(parts[1:])
        for count in range(min(len(parts) - 1, 6), 1, -1):
            candidate = "/".join(parts[:count])
            if store.resolve(candidate):
                return candidate, "/".join(parts[count:])
        return parts[0], "/".join(parts[1:])

    def _normalised(self, result: ResolvedRef, path: str) -> str | None:
        if not path:
            return ""
        normal = _normal_path(path)
        if normal == ".." or normal.startswith(("../", "/")):
            self._add(
                result,
                "path-escape",
                f"path '{path}' leaves the repository; nothing outside it is read",
            )
            return None
        return "" if normal == "." else normal

    def _resolve_path(self, result: ResolvedRef, context: PageContext) -> None:
        ref = result.ref
        if ref.form is RefForm.ABSOLUTE:
            self._resolve_absolute(result, context)
            return
        path = self._normalised(result, ref.path)
        if path is None:
            return
        upstream = self._route(path)
        if upstream is not None:
            self._attribute(result, upstream, context, path)
            return
        first, _, inner = path.partition("/")
        named = self._by_repository_name.get(first.lower()) if inner else None
        if named is not None and self._route(inner) is named:
            # `Megatron-LM/megatron/x.py`: written from the directory the checkout sits in.
            self._attribute(result, named, context, inner)
            return
        candidates = self._search(path, result, context)
        if len(candidates) == 1:
            upstream, found = candidates[0]
            self._attribute(result, upstream, context, found)
            return
        if len(candidates) > 1:
            listed = "; ".join(self._ranked(candidates, ref, context)[:_MAX_LISTED])
            more = (
                f" and {len(candidates) - _MAX_LISTED} more"
                if len(candidates) > _MAX_LISTED
                else ""
            )
            self._add(
                result,
                "ambiguous-file",
                f"'{ref.path}' matches {len(candidates)} files: {listed}{more}",
                "write the path from the repository root, or add search_roots to the page "
                "or upstream",
            )
            return
        if context.upstream and ref.form is RefForm.PATH:
            own = self.manifest.upstreams[context.upstream]
            if self._belongs_to(own, context, path):
                # The page's upstream has (or had) this part of the tree: the file is missing there.
                self._attribute(result, own, context, path)
                return
        if ref.form is RefForm.BARE:
            searched = [u for u in self._searched_upstreams(context) if self.cloned(u)]
            where = ", ".join(f"{u.name}@{self.commit_for(u, context)[:7]}" for u in searched)
            unsearched = [u.name for u in self.manifest.upstreams.values() if not self.cloned(u)]
            if not self.manifest.upstreams:  # a knowledge base just made: nothing to look in
                self._add(
                    result,
                    "unattributed",
                    f"no upstream is declared to look for '{path}' in",
                    "declare one: kb upstreams add NAME URL",
                )
                return
            if unsearched:  # it may well be there: say so, do not call it missing
                self._add(
                    result,
                    "unattributed",
                    f"no file named '{path}' in {where or 'any cloned upstream'}; not searched: "
                    + ", ".join(f"{name} (no clone)" for name in unsearched),
                    f"kb upstreams fetch {unsearched[0]}",
                )
                return
            suggestion = self._closest_name(path, searched, context)
            if suggestion is None and _is_project_file_name(path):
                # `config.yaml:3`, `Dockerfile:4`: a file of the reader's or the project's,
                # as likely as the upstream's, and named like none of its files.
                self._add(
                    result,
                    "unattributed",
                    f"no file named '{path}' in {where}, so it is not checked as the upstream's",
                    "if it is the upstream's, write its path from the repository root",
                )
                return
            # Searched in one upstream, the finding names it and the commit searched, as one on
            # a full path does (the verdict stays unattributed: no file of it is cited).
            at = (
                (searched[0].name, self.commit_for(searched[0], context))
                if len(searched) == 1
                else None
            )
            self._add(
                result,
                "file-missing",
                f"no file named '{path}' in {where}",
                f"did you mean {suggestion}?" if suggestion else None,
                at=at,
            )
            return
        prefixes = ", ".join(prefix for prefix, _ in reversed(self._prefixes)) or "(none)"
        self._add(
            result,
            "unattributed",
            f"no configured upstream claims '{ref.path}' (prefixes: {prefixes})",
            f"add its upstream or prefix to {self.manifest.display_path()}",
        )

    def _resolve_absolute(self, result: ResolvedRef, context: PageContext) -> None:
        ref = result.ref
        parts = [part for part in ref.path.removeprefix("~").split("/") if part]
        if ".." in parts:
            if ref.start is None:
                return  # cited whole, a reference only when it names a file (ingest)
            self._add(
                result,
                "path-escape",
                f"path '{ref.path}' contains '..'; nothing outside a repository is read",
            )
            return
        routed: list[tuple[Upstream, str]] = []
        found: tuple[Upstream, str] | None = None
        for index in range(len(parts)):
            suffix = "/".join(parts[index:])
            upstream = self._route(suffix)
            if upstream is not None:
                routed.append((upstream, suffix))
                if self._has_file(upstream, context, suffix):
                    found = (upstream, suffix)
                    break
        if found is None:
            for index in range(len(parts)):
                suffix = "/".join(parts[index:])
                owners = [
                    u
                    for u in self._searched_upstreams(context)
                    if self._has_file(u, context, suffix)
                ]
                if len(owners) == 1:
                    found = (owners[0], suffix)
                    break
        if found is None and ref.start is None:
            return  # a path cited whole is a reference only when it names a file (ingest)
        target = found or self._missing_at(routed, context)
        if target is None:
            self._add(
                result,
                "unattributed",
                f"absolute path '{ref.path}' maps onto no configured upstream",
                "cite the file by its path in the repository",
            )
            return
        upstream, path = target
        canonical = path + _range_text(ref.start, ref.end)
        self._add(
            result,
            "absolute-path",
            f"absolute local path; it maps onto {upstream.name}:{path}",
            canonical,
        )
        self._attribute(result, upstream, context, path)

    def _attribute(
        self, result: ResolvedRef, upstream: Upstream, context: PageContext, path: str
    ) -> None:
        commit = self.commit_for(upstream, context)
        if not self.cloned(upstream):
            result.upstream, result.commit, result.path = upstream.name, commit, path
            result.unchecked = True
            return
        if self._pin_missing(result, upstream, commit, context):
            return
        result.upstream, result.commit, result.path = upstream.name, commit, path

    def _pin_missing(
        self, result: ResolvedRef, upstream: Upstream, commit: str, context: PageContext
    ) -> bool:
        """Whether the page's pin ``commit`` is missing from the (existing) clone: then it is
        reported, once per page, and the reference is not checked."""
        if self._holds(self.store(upstream), upstream, commit):
            return False
        result.upstream = upstream.name
        self._at_missing_commit = True
        key = (upstream.name, commit)
        if key not in context.missing_commits:
            context.missing_commits.add(key)
            self._add(
                result,
                "commit-missing",
                f"the page pins '{upstream.name}' to {commit}, which is not in the clone",
                f"run `kb upstreams fetch {upstream.name}`, or correct the page's pin",
            )
        return True

    def _belongs_to(self, upstream: Upstream, context: PageContext, path: str) -> bool:
        """Whether ``path`` lies in a top-level directory of the upstream, or once existed there."""
        if not self.cloned(upstream):
            return True  # nothing says otherwise: it is reported as unchecked
        commit = self.commit_for(upstream, context)
        store = self.store(upstream)
        top = path.split("/", 1)[0]
        return store.is_directory(commit, top) or store.renamed_to(path, commit) is not None

    def _route(self, path: str) -> Upstream | None:
        for prefix, upstream in self._prefixes:
            if path.startswith(prefix):
                return upstream
        return None

    def _searched_upstreams(self, context: PageContext) -> list[Upstream]:
        upstreams = self._search_order.get(context.upstream)
        if upstreams is None:
            upstreams = list(self.manifest.upstreams.values())
            if context.upstream:
                upstreams.sort(key=lambda u: u.name != context.upstream)
            self._search_order[context.upstream] = upstreams
        return upstreams

    def _at_commit(self, upstream: Upstream, context: PageContext) -> tuple[GitStore, str] | None:
        """The clone of ``upstream`` and the page's commit of it; None when there is no clone
        or it lacks the commit (`_attribute` reports that): nothing to search."""
        if not self.cloned(upstream):
            return None
        commit = self.commit_for(upstream, context)
        store = self.store(upstream)
        if not self._holds(store, upstream, commit):
            return None
        return store, commit

    def _has_file(self, upstream: Upstream, context: PageContext, path: str) -> bool:
        """Whether ``path`` is a file (or link, or submodule) at the page's commit."""
        found = self._at_commit(upstream, context)
        return found is not None and found[0].entry(found[1], path) is not None

    def _missing_at(
        self, routed: list[tuple[Upstream, str]], context: PageContext
    ) -> tuple[Upstream, str] | None:
        """Where an absolute path naming no file is reported missing, of its routed suffixes
        (longest first): where its directory is; with no such directory, at the shortest, as a
        clone is often named as the package it holds (`/home/bob/slime/slime/x.py`), and its
        folder is no part of the repository."""
        return next(
            (
                (upstream, suffix)
                for upstream, suffix in routed
                if "/" in suffix
                and self._has_directory(upstream, context, suffix.rpartition("/")[0])
            ),
            routed[-1] if routed else None,
        )

    def _has_directory(self, upstream: Upstream, context: PageContext, path: str) -> bool:
        """Whether ``path`` is a directory at the page's commit."""
        found = self._at_commit(upstream, context)
        return found is not None and found[0].is_directory(found[1], path)

    def _commit_missing(self, upstream: Upstream, context: PageContext) -> bool:
        commit = self.commit_for(upstream, context)
        if not self.cloned(upstream):
            return True  # as unknown as a missing commit: `_attribute` says which
        return not self._holds(self.store(upstream), upstream, commit)

    def _settled_by_own(self, path: str, context: PageContext) -> Upstream | None:
        """The page's own upstream when it settles ``path`` with no search: it has the file at
        the page's commit, or lacks the commit (reported once, as commit-missing)."""
        if context.upstream:
            own = self.manifest.upstreams[context.upstream]
            if self._commit_missing(own, context) or self._has_file(own, context, path):
                return own
        return None

    def _search(
        self, path: str, result: ResolvedRef, context: PageContext
    ) -> list[tuple[Upstream, str]]:
        """Files whose path is ``path`` or ends with ``/path``; the page's upstream first."""
        upstreams = self._searched_upstreams(context)
        own = self._settled_by_own(path, context)
        if own is not None:
            return [(own, path)]
        candidates = [(u, found) for u in upstreams for found in self._matches(u, context, path)]
        if context.upstream and len(candidates) > 1:
            own_only = [c for c in candidates if c[0].name == context.upstream]
            candidates = own_only or candidates
        if len(candidates) > 1:
            candidates = self._narrow(candidates, result.ref, context)
        return candidates

    def _matches(self, upstream: Upstream, context: PageContext, path: str) -> list[str]:
        """The files at the page's commit whose path is ``path`` or ends with ``/path``."""
        found = self._at_commit(upstream, context)
        if found is None:
            return []
        store, commit = found
        named = store.files_named(commit, path.rsplit("/", 1)[-1])
        if "/" not in path:
            return named
        return [file for file in named if file == path or file.endswith("/" + path)]

    def _narrow(
        self, candidates: list[tuple[Upstream, str]], ref: CodeRef, context: PageContext
    ) -> list[tuple[Upstream, str]]:
        """The candidates a bare or partial name may mean, narrowed by what is known: search
        roots (written by hand), the page's own full-path references (the same file, then
        the same directory), the candidates the range fits, the symbol named next to it, and
        the code the page quotes for it. Each step applies only when it leaves at least one;
        what is left after all of them is ambiguous, and `_ranked` says why each remains."""
        self._narrowing = True
        for roots_of in (lambda u: context.search_roots, lambda u: u.search_roots):
            rooted = [(u, p) for u, p in candidates if roots_of(u) and p.startswith(roots_of(u))]
            if rooted:
                candidates = rooted
                if len(candidates) == 1:
                    return candidates
        disputed = False
        for keep in (
            lambda u, p: p in context.cited,
            lambda u, p: posixpath.dirname(p) in {posixpath.dirname(c) for c in context.cited},
        ):
            kept = [(u, p) for u, p in candidates if keep(u, p)]
            if kept and len(kept) < len(candidates) and not self._any_may_hold(kept, ref, context):
                # The page's other references point one way, the cited lines another: no file
                # it cites can hold them, another of the name can. That the range fits is no
                # reason to go against the page (nor to have `ingest` write the path in): only
                # the symbol or the quote may tell, below; else it is ambiguous.
                holding = [
                    c for c in candidates if c not in kept and self._may_hold(c, ref, context)
                ]
                if holding:
                    candidates, disputed = kept + holding, True
                    break
            if kept:
                candidates = kept
                if len(candidates) == 1:
                    return candidates
        if ref.end is not None and not disputed:
            fitting = [
                (u, p)
                for u, p in candidates
                if (blob := self.blob_at(u, self.commit_for(u, context), p)) is not None
                and not blob.is_binary
                and ref.end <= blob.line_count
            ]
            if fitting:
                candidates = fitting
                if len(candidates) == 1:
                    return candidates
        if ref.symbol and ref.start is not None and ref.end is not None:
            name = last_name(ref.symbol)
            holding = []
            for upstream, path in candidates:
                blob = self.blob_at(upstream, self.commit_for(upstream, context), path)
                if (
                    blob is not None
                    and not blob.is_binary
                    and _occurs(blob.lines, name, ref.start, ref.end)
                ):
                    holding.append((upstream, path))
            if holding:
                candidates = holding
                if len(candidates) == 1:
                    return candidates
        if ref.symbol and (ref.start is None or _owner(ref.symbol)):
            # `actor.py::FSDPActor.wake_up`: the files that define it, the class included.
            defining = [
                (upstream, path)
                for upstream, path in candidates
                if (blob := self.blob_at(upstream, self.commit_for(upstream, context), path))
                is not None
                and not blob.is_binary
                and symbol_definitions(blob.line_tuple, ref.symbol)
            ]
            if defining:
                candidates = defining
                if len(candidates) == 1:
                    return candidates
        quote = context.quotes.get((ref.line, ref.column))
        if quote is not None:
            quoted = [(u, p) for u, p in candidates if self._holds_quote(u, p, quote, context)]
            if quoted:
                candidates = quoted
        return candidates

    def _any_may_hold(
        self, candidates: list[tuple[Upstream, str]], ref: CodeRef, context: PageContext
    ) -> bool:
        return any(self._may_hold(candidate, ref, context) for candidate in candidates)

    def _may_hold(
        self, candidate: tuple[Upstream, str], ref: CodeRef, context: PageContext
    ) -> bool:
        """Whether the file can hold what the reference cites: the range fits it and, with a
        symbol named beside the range, the symbol occurs there (true without a range)."""
        if ref.start is None or ref.end is None:
            return True
        upstream, path = candidate
        blob = self.blob_at(upstream, self.commit_for(upstream, context), path)
        if blob is None or blob.is_binary or ref.end > blob.line_count:
            return False
        return not ref.symbol or _occurs(blob.lines, last_name(ref.symbol), ref.start, ref.end)

    def _holds_quote(
        self, upstream: Upstream, path: str, quote: Quote, context: PageContext
    ) -> bool:
        """Whether the file holds the quoted code somewhere (strongly enough to go by)."""
        blob = self.blob_at(upstream, self.commit_for(upstream, context), path)
        prepared = prepare(quote.lines, quote.language or path.rsplit(".", 1)[-1])
        if blob is None or blob.is_binary or prepared is None or not is_strong(prepared):
            return False
        index = FileIndex(blob.lines, prepared.markers)
        return any(is_strong(prepared, place) for place in placements(prepared, index))

    def _ranked(
        self, candidates: list[tuple[Upstream, str]], ref: CodeRef, context: PageContext
    ) -> list[str]:
        """Each remaining candidate with what speaks for it, most first."""
        cited_dirs = {posixpath.dirname(c) for c in context.cited}
        ranked = []
        for upstream, path in candidates:
            reasons = []
            if posixpath.dirname(path) in cited_dirs:
                reasons.append("beside the page's other references")
            blob = self.blob_at(upstream, self.commit_for(upstream, context), path)
            if blob is not None and not blob.is_binary:
                if ref.end is not None and ref.end <= blob.line_count:
                    reasons.append("the range fits")
                if ref.symbol and symbol_definitions(blob.line_tuple, ref.symbol):
                    reasons.append(f"defines `{ref.symbol.replace('::', '.')}`")
            shown = f"{upstream.name}:{path}" if len(self.manifest.upstreams) > 1 else path
            ranked.append((len(reasons), shown + (f" ({', '.join(reasons)})" if reasons else "")))
        ranked.sort(key=lambda item: -item[0])
        return [text for _, text in ranked]

    def _closest_name(
        self, name: str, upstreams: list[Upstream], context: PageContext
    ) -> str | None:
        names: set[str] = set()
        for upstream in upstreams:
            found = self._at_commit(upstream, context)
            if found is not None:
                names.update(found[0].file_names(found[1]))
        close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.75)
        return f"'{close[0]}'" if close else None

    # -- checks at the commit -------------------------------------------------------------

    def blob_at(self, upstream: Upstream, commit: str, path: str) -> BlobText | None:
        """The file ``path`` at ``commit`` (None for none, a link or a submodule)."""
        entry = self.store(upstream).entry(commit, path)
        if entry is None or entry.kind != "blob" or entry.is_symlink:
            return None
        return self.store(upstream).blob(entry.sha)

    def _check_target(self, result: ResolvedRef) -> None:
        ref = result.ref
        upstream = self.manifest.upstreams[result.upstream or ""]
        commit = result.commit or upstream.pin
        path = result.path or ""
        store = self.store(upstream)
        at = f"{upstream.name}@{commit[:7]}"
        entry = store.entry(commit, path)
        if entry is None:
            is_directory = store.is_directory(commit, path)
            if is_directory and ref.start is None:
                return
            if is_directory:
                self._add(
                    result,
                    "not-a-file",
                    f"'{path}' is a directory at {at}; a line range needs a file",
                )
                return
            self._file_missing(result, upstream, store, commit, path)
            return
        if entry.kind != "blob":
            self._add(
                result,
                "not-a-file",
                f"'{path}' is a submodule at {at}; cite the file in the submodule's own upstream",
            )
            return
        if entry.is_symlink:
            self._add(
                result,
                "not-a-file",
                f"'{path}' is a symbolic link at {at}; cite the file it points to",
            )
            return
        if ref.is_directory:
            self._add(
                result,
                "not-a-file",
                f"'{path}' is a file at {at}, not a directory",
                ref.text.replace("/tree/", "/blob/", 1),
            )
            return
        if ref.start is None or ref.end is None:
            if ref.symbol:  # `x.py:setup()`, `x.py::Actor.sleep`: the file defines the symbol
                self._check_symbol_defined(result, store.blob(entry.sha), path, at)
            return
        self._check_lines(result, upstream, commit, path, entry.sha)

    def _check_lines(
        self, result: ResolvedRef, upstream: Upstream, commit: str, path: str, sha: str
    ) -> None:
        """The cited lines (and the symbol named with them) of the file ``path``, the blob
        ``sha`` at ``commit``."""
        ref = result.ref
        assert ref.start is not None and ref.end is not None
        store = self.store(upstream)
        at = f"{upstream.name}@{commit[:7]}"
        blob = store.blob(sha)
        if blob.is_binary:
            self._add(
                result, "binary-file", f"'{path}' is a binary file at {at}; it has no lines to cite"
            )
            return
        if ref.start < 1 or ref.start > ref.end:
            swapped = f"{path}:{ref.end}-{ref.start}" if ref.start > ref.end else None
            if ref.start > ref.end:
                reason = "is reversed"
            elif ref.start == ref.end:
                reason = "does not exist (lines count from 1)"
            else:
                reason = "starts at line 0 (lines count from 1)"
            self._add(result, "range-invalid", f"{_range_words(ref)} {reason}", swapped)
            return
        if ref.end > blob.line_count:
            where = self._symbol_suggestion(ref, blob, path)
            self._add(
                result,
                "range-outside-file",
                f"{_range_words(ref)} goes past the end of '{path}', which has "
                f"{blob.line_count} lines at {at}",
                where,
            )
            return
        if ref.symbol:  # (which says more than that the lines are blank, where they are)
            self._check_symbol(result, blob, path, at)
            return
        lines = blob.lines
        if not lines[ref.start - 1].strip() and not any(
            line.strip() for line in lines[ref.start : ref.end]
        ):
            # (Tested by its first line alone for nearly every reference: code starts there.)
            self._add(
                result,
                "range-blank",
                f"{_range_words(ref)} of '{path}' at {at} "
                + ("is a blank line" if ref.start == ref.end else "holds only blank lines"),
                "cite the lines of the code the page means",
            )

    def _file_missing(
        self, result: ResolvedRef, upstream: Upstream, store: GitStore, commit: str, path: str
    ) -> None:
        at = f"{upstream.name}@{commit[:7]}"
        suffix = _range_text(result.ref.start, result.ref.end)
        suggestion = None
        message = f"'{path}' does not exist at {at}"
        renamed = store.renamed_to(path, commit)
        if renamed:
            moved = self._lines_after_rename(result.ref, store, commit, path, renamed)
            suggestion = renamed + ("" if moved is None else _range_text(*moved))
            message += f"; git records it as renamed to '{renamed}'"
            if moved is None and suffix:
                message += ", where the cited lines are not as they were"
        else:
            basename = path.rsplit("/", 1)[-1]
            same_name = store.files_named(commit, basename)
            if same_name:
                suggestion = " or ".join(p + suffix for p in same_name[:3])
            else:
                close = self._closest_path(store, commit, path)
                if close:
                    suggestion = close + suffix
        head = store.resolve(upstream.branch)
        if head and head != commit and store.entry(head, path) is not None:
            message += f" (it exists at {upstream.branch} {head[:7]}: {PINNED_OLDER})"
        self._add(
            result, "file-missing", message, f"did you mean {suggestion}?" if suggestion else None
        )

    def _lines_after_rename(
        self, ref: CodeRef, store: GitStore, commit: str, path: str, renamed: str
    ) -> tuple[int | None, int | None] | None:
        """Where the cited lines of ``path``, as the file last was before it was renamed, are
        in ``renamed`` at ``commit``: found there once, as they were (a rename often comes with
        edits: the old numbers would cite other code; searched as `sync` follows code, white
        space and blank lines aside); None when they are not (found once)."""
        if ref.start is None or ref.end is None:
            return (None, None)
        before = store.last_version(path, commit)
        entry = store.entry(commit, renamed)
        if before is None or entry is None or before.is_binary or ref.end > before.line_count:
            return None
        after = store.blob(entry.sha)
        cited = [text for text in map(normalise, before.lines[ref.start - 1 : ref.end]) if text]
        if after.is_binary or not cited:
            return None
        places = BlockIndex.of(after.lines).find(cited)
        return places[0] if len(places) == 1 else None

    def _closest_path(self, store: GitStore, commit: str, path: str) -> str | None:
        """The file of the commit most like ``path``: among those with its extension and under
        its top directory (a fuzzy match against every file of a large tree, for every missing
        file, is what made pages of missing files slow)."""
        extension = posixpath.splitext(path)[1]
        top = path.split("/", 1)[0] + "/" if "/" in path else ""
        key = (id(store), commit, extension, top)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = [
                p for p in store.tree(commit) if p.endswith(extension) and p.startswith(top)
            ]
        # Paths share their directories and extension: the file's own name must be alike too
        # (`missing.py` is no typo of `utils.py`, though `toykit/…py` makes the paths close).
        stem = posixpath.splitext(posixpath.basename(path))[0]
        for close in difflib.get_close_matches(path, pool, n=3, cutoff=0.6):
            other = posixpath.splitext(posixpath.basename(close))[0]
            if difflib.SequenceMatcher(None, stem, other).ratio() >= 0.6:
                return close
        return None

    def _check_symbol(self, result: ResolvedRef, blob: BlobText, path: str, at: str) -> None:
        ref = result.ref
        assert ref.symbol and ref.start is not None and ref.end is not None
        name = last_name(ref.symbol)
        python = path.endswith((".py", ".pyi"))
        owner = _owner(ref.symbol)
        spans = symbol_definitions(blob.line_tuple, ref.symbol) if owner else []
        if owner and spans and not any(_overlap(span, ref.start, ref.end) for span in spans):
            # `FSDPActor.sleep` cited at another class's `sleep`: the method of the wrong class.
            others = [
                span
                for span in definitions(blob.line_tuple, name)
                if span not in spans and _overlap(span, ref.start, ref.end)
            ]
            if others:
                self._add(
                    result,
                    "symbol-not-in-range",
                    f"{_range_words(ref)} of '{path}' at {at} holds another `{name}` than "
                    f"`{ref.symbol}`",
                    "it is defined at " + _spans_text(path, spans),
                )
                return
        if owner and not spans and python:
            holder = _class_holding(blob.line_tuple, name, ref.start, ref.end)
            if holder is not None and holder != owner and not self._inherits(result, owner, holder):
                # `FSDPActor.save_checkpoint` cited at `MegatronActor.save_checkpoint`, in a
                # file without `FSDPActor`, which does not inherit the method there.
                self._add(
                    result,
                    "symbol-not-in-range",
                    f"{_range_words(ref)} of '{path}' at {at} holds `{holder}.{name}`, not "
                    f"`{ref.symbol}`",
                    f"'{path}' defines no `{owner}`; cite the lines of `{ref.symbol}`",
                )
                return
            if (
                holder is not None
                and holder != owner
                and self._no_such_class(result, owner, holder, blob)
            ):
                # `MLP.forward` cited at `ParallelMLP.forward` after the class was renamed:
                # the lines are the method's, the page names a class the code no longer has.
                self._add(
                    result,
                    "symbol-not-found",
                    f"no class `{owner}` is defined in {at}; {_range_words(ref)} of '{path}' "
                    f"holds `{holder}.{name}`",
                    f"if `{owner}` was renamed, name the class the code has: `{holder}.{name}`",
                )
                return
        # In Python, a name in a comment or docstring does not count: `wake_up`'s docstring
        # mentioning `sleep` does not make lines of `wake_up` a reference to `sleep()`.
        if (python and blob.occurs_in_code(name, ref.start, ref.end)) or (
            not python and _occurs(blob.lines, name, ref.start, ref.end)
        ):
            return
        if not owner:
            spans = symbol_definitions(blob.line_tuple, ref.symbol)
            if not spans and not python:  # (a kernel, a Go method: braces, not `def`)
                spans = code_definitions(blob.line_tuple, name, path)
        if any(first <= ref.start and ref.end <= last for first, last in spans):
            return  # the range is inside the symbol's body: "the loop in `beta()` (x.py:10)"
        only_mentioned = python and _occurs(blob.lines, name, ref.start, ref.end)
        said = (
            f"`{ref.symbol}` is only mentioned in a comment or docstring in "
            if only_mentioned
            else f"`{ref.symbol}` is not in "
        )
        message = f"{said}{_range_words(ref)} of '{path}' at {at}"
        cut = next((span for span in spans if _overlap(span, ref.start, ref.end)), None)
        if cut is not None and not only_mentioned:
            # Most of the code may be in the range, all but the line that names it: off by a
            # line or two, which "not in range" alone would not say.
            message = (
                f"{_range_words(ref).capitalize()} of '{path}' at {at} covers `{ref.symbol}` "
                f"(lines {cut[0]}-{cut[1]}) only in part, without the line that defines it"
            )
        if spans:
            self._add(
                result,
                "symbol-not-in-range",
                message,
                "it is defined at " + _spans_text(path, spans),
            )
            return
        used = first_use(blob, name, python)
        if used is not None and owner:
            # `model.fit(...)` is no use of `Trainer.fit`: only one written with the class's
            # name is, and a `fit` of another class is named as that.
            hint = None
            qualified = first_use(blob, name, python, written=f"{owner}.{name}")
            others = definitions(blob.line_tuple, name)
            if qualified is not None:
                hint = f"it is first used in code at {path}:{qualified}"
            elif others:
                hint = f"another `{name}` is defined at {_spans_text(path, others)}"
            self._add(result, "symbol-not-in-range", message, hint)
        elif used is not None:
            self._add(
                result,
                "symbol-not-in-range",
                message,
                f"it is first used in code at {path}:{used}",
            )
        elif not only_mentioned:
            # Lines that define another name are most often the symbol renamed since the page
            # was written (`FSDPWrapper`, now `ShardedModule`): say which.
            defined = _defined_first(blob.lines, ref.start, ref.end) if python else None
            self._add(
                result,
                "symbol-not-found",
                f"`{ref.symbol}` does not occur in '{path}' at {at}"
                + (f"; {_range_words(ref)} defines `{defined}`" if defined else ""),
                f"if `{name}` was renamed, name it as the code does: `{defined}`"
                if defined
                else None,
            )

    def symbol_holds(
        self, ref: CodeRef, upstream: Upstream, commit: str, fix: Fix, blob: BlobText
    ) -> bool:
        """Whether the symbol named beside ``ref`` passes the check of `_check_symbol` at the
        lines ``fix`` proposes (``blob`` is its file at ``commit``): a rewrite to them must not
        trade one finding for another, such as `Critic.sleep` cited at `Actor.sleep`."""
        if not ref.symbol or blob.is_binary:
            return True
        trial = ResolvedRef(
            replace(ref, path=fix.path, start=fix.start, end=fix.end),
            upstream.name,
            commit,
            fix.path,
        )
        self._check_symbol(trial, blob, fix.path, f"{upstream.name}@{commit[:7]}")
        return not trial.findings

    def _class_index(self, result: ResolvedRef) -> inheritance.ClassIndex | None:
        """The class headers of the Python files at the reference's commit (one ``git grep``
        a commit), or None with nothing to look in."""
        upstream = self.manifest.upstreams.get(result.upstream or "")
        if upstream is None or result.commit is None:
            return None
        index = self._class_indexes.get((upstream.name, result.commit))
        if index is None:
            headers = self.store(upstream).grep(
                result.commit, [inheritance.CLASS_HEADERS], _PYTHON_FILES
            )
            index = inheritance.ClassIndex(headers)
            self._class_indexes[upstream.name, result.commit] = index
        return index

    def _no_such_class(self, result: ResolvedRef, owner: str, holder: str, blob: BlobText) -> bool:
        """Whether the class ``owner`` (``MLP``) is plainly not in the upstream at the
        reference's commit: a name in CapWords (not ``F``) that neither the cited file nor
        any other Python file of the commit mentions (as a class, a base such as
        ``nn.Module``, an import, an alias or an assignment)."""
        upstream = self.manifest.upstreams.get(result.upstream or "")
        if upstream is None or result.commit is None or owner.isupper():
            return False
        if _first_occurrence(blob.lines, owner) is not None:
            return False
        word = rf"(^|[^A-Za-z0-9_]){owner}([^A-Za-z0-9_]|$)"
        return not self.store(upstream).grep(result.commit, [word], _PYTHON_FILES)

    def _inherits(self, result: ResolvedRef, owner: str, holder: str) -> bool:
        """Whether class ``owner``, as the upstream's Python code declares it at the
        reference's commit, may inherit from ``holder`` (`inheritance.derives_from`): then
        `owner.name` may well be the method of ``holder``. True also when the code does not
        say, so that the check stays silent."""
        index = self._class_index(result)
        if index is None:
            return True  # (nothing to look in: say nothing)
        assert result.upstream is not None and result.commit is not None  # (an index was read)
        store, commit = self.store(self.manifest.upstreams[result.upstream]), result.commit

        def aliases() -> set[str]:
            lines = store.grep(commit, inheritance.alias_patterns(holder), _PYTHON_FILES)
            return inheritance.aliases(lines, holder)

        return inheritance.derives_from(index, owner, holder, aliases) is not False

    def _check_symbol_defined(
        self, result: ResolvedRef, blob: BlobText, path: str, at: str
    ) -> None:
        """A ``path:symbol`` reference: the file defines (or at least uses) the symbol; a
        Python file that only imports it does not."""
        ref = result.ref
        assert ref.symbol
        if blob.is_binary:
            return
        name = last_name(ref.symbol)
        if symbol_definitions(blob.line_tuple, ref.symbol):
            return
        owner = _owner(ref.symbol)
        if owner:
            elsewhere = definitions(blob.line_tuple, name)
            if elsewhere:
                self._add(
                    result,
                    "symbol-not-found",
                    f"`{ref.symbol}` is not defined in '{path}' at {at}; `{name}` is, outside "
                    f"`{owner}`",
                    "it is defined at " + _spans_text(path, elsewhere),
                )
                return
        if _first_occurrence(blob.lines, name) is None:
            self._add(
                result, "symbol-not-found", f"`{ref.symbol}` does not occur in '{path}' at {at}"
            )
            return
        imported = _imported_only(blob.lines, name) if path.endswith((".py", ".pyi")) else None
        if imported is not None:
            line, module = imported
            self._add(
                result,
                "symbol-not-found",
                f"`{ref.symbol}` is not defined in '{path}' at {at}: the file only imports "
                f"it (line {line}, from `{module}`)",
                self._defined_in_module(result, module, ref.symbol, path),
            )

    def _defined_in_module(
        self, result: ResolvedRef, module: str, symbol: str, path: str
    ) -> str | None:
        """Where ``module`` (imported by the file ``path``) defines ``symbol``, as a suggestion:
        the module's file is looked for beside the package root the import names."""
        upstream = self.manifest.upstreams.get(result.upstream or "")
        if upstream is None or result.commit is None:
            return None
        store = self.store(upstream)
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        if module.startswith("."):  # relative: from the file's own package up
            dots = len(module) - len(module.lstrip("."))
            parts = directory.split("/") if directory else []
            base = parts[: len(parts) - (dots - 1)] if dots > 1 else parts
            stem = "/".join([*base, *filter(None, module.lstrip(".").split("."))])
            stems = [stem]
        else:
            relative = module.replace(".", "/")
            # The import's root package sits at the repository's root or under a source folder.
            parts = directory.split("/") if directory else []
            stems = ["/".join([*parts[:depth], relative]) for depth in range(len(parts) + 1)]
        for stem in stems:
            for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
                entry = store.entry(result.commit, candidate)
                if entry is None or entry.kind != "blob" or entry.is_symlink:
                    continue
                spans = symbol_definitions(store.blob(entry.sha).line_tuple, symbol)
                if spans:
                    return "it is defined at " + _spans_text(candidate, spans)
        return None

    def _symbol_suggestion(self, ref: CodeRef, blob: BlobText, path: str) -> str | None:
        if not ref.symbol:
            return None
        spans = symbol_definitions(blob.line_tuple, ref.symbol)
        if not spans:
            return None
        return _spans_text(path, spans)

    def _add(
        self,
        result: ResolvedRef,
        check: str,
        message: str,
        suggestion: str | None = None,
        at: tuple[str, str] | None = None,
    ) -> None:
        """Add a finding on ``result``'s reference; ``at``: the upstream and commit it names when
        the reference is attributed to none."""
        ref = result.ref
        upstream = self.manifest.upstreams.get(result.upstream or "")
        named, commit = at if at is not None and result.upstream is None else (None, None)
        result.findings.append(
            Finding(
                severity=severity_of(check),
                check=check,
                page=ref.page,
                line=ref.line,
                column=ref.column,
                message=message,
                suggestion=suggestion,
                text=ref.text,
                upstream=result.upstream or named,
                commit=result.commit or (upstream.pin if upstream else commit),
                path=result.path if result.path is not None else ref.path,
                start=ref.start,
                end=ref.end,
            )
        )


# -- helpers --------------------------------------------------------------------------------

VerdictKey = tuple[Any, ...]
"""What, besides the page's context, decides a reference's verdict (see `verdict_key`)."""


def verdict_key(ref: CodeRef) -> VerdictKey:
    return (
        ref.form,
        ref.path,
        ref.start,
        ref.end,
        ref.symbol,
        ref.repo_slug,
        ref.revision,
        ref.is_directory,
    )


def names_a_commit(ref: CodeRef) -> bool:
    """Whether ``ref`` names a commit of its own, whatever its page's pin: a permalink to a
    commit (not a branch), or a path written as the text of a link to one."""
    return ref.revision is not None and _HEX.match(ref.revision) is not None


def record_verdict_key(record: RefRecord) -> VerdictKey:
    """`verdict_key` of the reference ``record`` describes, without building the reference."""
    return (
        record[3],
        record[4],
        record[5],
        record[6],
        record[7],
        record[8],
        record[10],
        record[11],
    )


def relocated_findings(ref: CodeRef, verdict: ResolvedRef) -> list[Finding]:
    """The findings of ``verdict``, placed where the citation ``ref`` is."""
    return [
        Finding(
            f.severity,
            f.check,
            ref.page,
            ref.line,
            ref.column,
            f.message,
            f.suggestion,
            ref.text,
            f.upstream,
            f.commit,
            f.path,
            f.start,
            f.end,
            f.fix,
        )
        for f in verdict.findings
    ]


def _is_project_file_name(name: str) -> bool:
    """Whether the file name ``name`` is not a program's source (`config.yaml`,
    `requirements.txt`, `Dockerfile`, `build.gradle`, `NOTES.md`): as likely a reader's own
    file as an upstream's, where a source file's name (`router.php`) is the code's."""
    stem, dot, extension = name.rpartition(".")
    return not (stem and dot) or extension.lower() not in CODE_EXTENSIONS


def _leaves_repository(normal: str) -> bool:
    """Whether the normalised path ``normal`` names no place inside a repository: empty, the
    root itself, or above it."""
    return normal in ("", ".", "..") or normal.startswith(("../", "/"))


@functools.lru_cache(maxsize=65536)
def _normal_path(path: str) -> str:
    return posixpath.normpath(path)


def last_name(symbol: str) -> str:
    """``sleep`` of ``FSDPActor.sleep`` or ``actor.FSDPActor::sleep``."""
    return symbol.replace("::", ".").rsplit(".", 1)[-1]


def _occurs(lines: list[str], name: str, start: int, end: int) -> bool:
    return any(identifier_columns(line, name) for line in lines[start - 1 : end])


def _first_occurrence(lines: list[str], name: str) -> int | None:
    return next(
        (number for number, line in enumerate(lines, 1) if identifier_columns(line, name)), None
    )


def first_use(blob: BlobText, name: str, python: bool, written: str | None = None) -> int | None:
    """The first line that uses ``name`` in code (for Python, outside comments and
    docstrings), or None; with ``written``, only a use written so (``Trainer.fit``)."""
    written = written or name
    if not python:
        return _first_occurrence(blob.lines, written)
    for number, line in enumerate(blob.lines, 1):
        if identifier_columns(line, written) and blob.occurs_in_code(name, number, number):
            return number
    return None


_IMPORT = lazy_pattern(
    r"^[ \t]*(?:from[ \t]+(?P<module>[.\w]+)[ \t]+import[ \t]+(?P<names>\([^)]*\)?|[^#\n]*)"
    r"|import[ \t]+(?P<modules>[^#\n]*))",
    re.M,
)


def _imported_only(lines: list[str], name: str) -> tuple[int, str] | None:
    """Where a Python file imports ``name`` (line, module) when it binds it nowhere else: no
    ``def``/``class`` of it and no assignment to it (a constant, an alias). None otherwise."""
    text = "\n".join(lines)
    for match in _IMPORT.finditer(text):
        for alias, module in _bound_by(match):
            if alias == name:
                if definitions(tuple(lines), name):
                    return None
                # Bound again outside the imports: assigned (alone or in a tuple), or named by
                # `as` or a `for` loop.
                rest = _IMPORT.sub(lambda found: " " * len(found.group()), text)
                word = re.escape(name)
                rebound = re.compile(
                    rf"^[ \t]*(?:[\w.]+[ \t]*,[ \t]*)*{word}[ \t]*(?:,[^=\n]*)?(?::[^=\n]*)?=(?!=)"
                    rf"|\bas[ \t]+{word}\b|\bfor[ \t]+(?:\w+[ \t]*,[ \t]*)*{word}\b",
                    re.M,
                )
                if rebound.search(rest):
                    return None
                return text.count("\n", 0, match.start()) + 1, module
    return None


def _bound_by(match: re.Match[str]) -> list[tuple[str, str]]:
    """The names an import statement binds, each with the module it comes from."""
    bound = []
    if match.group("modules") is not None:  # import a.b, c as d
        for part in match.group("modules").split(","):
            words = part.split()
            if len(words) == 3 and words[1] == "as":
                bound.append((words[2], words[0]))
            elif words:
                bound.append((words[0].split(".")[0], words[0]))
        return bound
    module = match.group("module")  # from a import (b, c as d)
    names = re.sub(r"#[^\n]*", "", match.group("names"))  # (comments in a bracketed list)
    for part in names.strip().strip("()").split(","):
        words = part.split()
        if words and words[0] != "*":
            bound.append((words[-1], module))
    return bound


_PYTHON_FILES = ("*.py", "*.pyi")


def branch_drift(store: GitStore, head: str, pinned: str, path: str, ref: CodeRef) -> str | None:
    """Why a branch link (``ref``, to ``path``, at the branch's ``head``) cannot be pinned to
    ``pinned`` without changing what it cites: its file is missing at one of them, or its
    lines read otherwise; None when it can. The pinned link would cite code of the pin, and
    the page may have read other code at the branch."""
    at_head, at_pin = store.entry(head, path), store.entry(pinned, path)
    if at_head is None or at_pin is None:
        where = f"'{ref.revision}' ({head[:7]})" if at_head is None else "the pin"
        return f"'{path}' does not exist at {where}"
    if ref.start is None or at_head.sha == at_pin.sha:
        return None
    if at_head.kind != "blob" or at_pin.kind != "blob":
        return None
    end = ref.end or ref.start
    cited = slice(ref.start - 1, end)
    if store.blob(at_head.sha).lines[cited] == store.blob(at_pin.sha).lines[cited]:
        return None
    return f"lines {ref.start}-{end} at '{ref.revision}' ({head[:7]}) differ from the pin"


def _defined_first(lines: Sequence[str], start: int, end: int) -> str | None:
    """The name the first definition header in lines ``start..end`` defines, if one of the
    range's first lines (its decorators and blank lines aside) is one."""
    for line in lines[start - 1 : min(end, len(lines))]:
        stripped = line.strip()
        if not stripped or stripped.startswith(("@", "#")):
            continue
        header = _DEFINITION_HEADER.match(line)
        if header is None:
            return None
        name = _IDENTIFIER_AT.match(line, header.end())
        return name.group() if name else None
    return None


def _class_holding(lines: tuple[str, ...], name: str, start: int, end: int) -> str | None:
    """The class whose method ``name`` lines ``start..end`` overlap, if any: the block
    a ``def name`` overlapping them is in, when it is a ``class``."""
    for first, last in definitions(lines, name):
        if not _overlap((first, last), start, end):
            continue
        header = first - 1  # (0-based; past its decorators)
        while header < last and not _DEFINITION_HEADER.match(lines[header]):
            header += 1
        block = next(_enclosing(lines, header + 1), None)
        return None if block is None else inheritance.class_named(block)
    return None


def _enclosing(lines: tuple[str, ...], number: int) -> Iterator[str]:
    """The lines opening the blocks that hold line ``number`` (from 1), innermost first: each
    the nearest line above, blank lines and comments aside, indented less than the last."""
    indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
    for line in reversed(lines[: number - 1]):
        if indent == 0:
            return
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#") and len(line) - len(stripped) < indent:
            indent = len(line) - len(stripped)
            yield line


def _owner(symbol: str) -> str | None:
    """``FSDPActor`` of ``FSDPActor.sleep`` (or ``actor.FSDPActor::sleep``): the enclosing
    class a qualified name gives, when it reads as a class (capitalised)."""
    parts = symbol.replace("::", ".").split(".")
    if len(parts) < 2 or not parts[-2][:1].isupper():
        return None
    return parts[-2]


def _overlap(span: tuple[int, int], start: int, end: int) -> bool:
    return span[0] <= end and start <= span[1]


def _spans_text(path: str, spans: list[tuple[int, int]]) -> str:
    return " or ".join(
        f"{path}:{first}-{last}" if last > first else f"{path}:{first}" for first, last in spans[:3]
    )


def _with_commit(url: str, revision: str, commit: str) -> str | None:
    """The link ``url`` as written (its owner's case, its path's escapes, its fragment) with
    ``commit`` for the branch or tag ``revision`` it names; None when it is not found so."""
    for kind in ("blob", "tree"):
        head, found, tail = url.partition(f"/{kind}/{revision}/")
        if found:
            return f"{head}/{kind}/{commit}/{tail}"
    return None


def _repository_names(upstream: Upstream) -> set[str]:
    """The names a checkout of ``upstream`` has: the last part of its URL and of its web URL,
    without ``.git``."""
    names = set()
    for address in (upstream.url, upstream.web_url):
        last = (address or "").rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
        last = last.removesuffix(".git")
        if last and last not in (".", ".."):
            names.add(last)
    return names


def symbol_definitions(lines: tuple[str, ...], symbol: str) -> list[tuple[int, int]]:
    """The definitions of a possibly qualified symbol: for ``Actor.sleep``, the ``sleep``
    methods inside ``class Actor``; for a plain name, every definition of it."""
    name = last_name(symbol)
    spans = definitions(lines, name)
    owner = _owner(symbol)
    if owner is None or not spans:
        return spans
    inside = []
    for cls_first, cls_last in definitions(lines, owner):
        inside.extend(span for span in spans if cls_first < span[0] and span[1] <= cls_last)
    return inside


def code_definitions(lines: tuple[str, ...], name: str, path: str) -> list[tuple[int, int]]:
    """The definitions of ``name`` in the file ``path``: Python's ``def`` and ``class`` (also
    read in a file of another language, as ever), or in a language of braces (C, C++, CUDA,
    Go, Rust...) its functions and types (`brace_definitions`)."""
    if path.endswith(BRACE_LANGUAGES):
        return _brace_definitions(lines, name)
    return definitions(lines, name)


_brace_definitions = functools.lru_cache(maxsize=256)(brace_definitions)


_DEFINITION_HEADER = lazy_pattern(r"(?P<indent>[ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+")


@functools.lru_cache(maxsize=1024)
def definitions(lines: tuple[str, ...], name: str) -> list[tuple[int, int]]:
    """Line spans (decorators to last body line) of Python ``def``/``class`` named ``name``."""
    if name.isidentifier() and _is_word_character(name[-1]):
        # One pattern for every name; only lines that mention the name are matched.
        headers = (
            (index, match)
            for index, line in enumerate(lines)
            if name in line
            and (match := _DEFINITION_HEADER.match(line)) is not None
            and line.startswith(name, match.end())
            and not _is_word_character(line[match.end() + len(name) : match.end() + len(name) + 1])
        )
    else:
        header = re.compile(
            rf"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+{re.escape(name)}\b"
        )
        headers = (
            (index, match)
            for index, line in enumerate(lines)
            if (match := header.match(line)) is not None
        )
    spans = []
    for index, match in headers:
        indent = len(match.group("indent").expandtabs())
        start = index
        while start > 0 and lines[start - 1].strip().startswith("@"):
            start -= 1
        end = index
        for later in range(index + 1, len(lines)):
            text = lines[later]
            if not text.strip():
                continue
            if len(text) - len(text.lstrip()) <= indent and not text.lstrip().startswith(")"):
                break
            end = later
        spans.append((start + 1, end + 1))
    return spans


def names_of_lines(lines: tuple[str, ...], start: int, end: int) -> set[str]:
    """The Python names lines ``start..end`` define or belong to: their ``def`` and ``class``
    headers, their module-level assignments (``DEFAULTS = {...}``), and the definitions that
    enclose the first of them (a part of a function's body is that function's)."""
    names: set[str] = set()
    end = min(end, len(lines))  # (a range past the file's end: its lines that are there)
    for line in lines[max(start, 1) - 1 : end]:
        match = _DEFINITION_HEADER.match(line) or _MODULE_ASSIGNMENT.match(line)
        if match is not None:
            name = _IDENTIFIER_AT.match(line, match.end())
            if name is not None:
                names.add(name.group())
    first = next((n for n in range(max(start, 1), end + 1) if lines[n - 1].strip()), None)
    for line in _enclosing(lines, first) if first is not None else ():
        match = _DEFINITION_HEADER.match(line)
        if match is not None and (name := _IDENTIFIER_AT.match(line, match.end())) is not None:
            names.add(name.group())
    return names


_MODULE_ASSIGNMENT = lazy_pattern(r"(?=[A-Za-z_][A-Za-z0-9_]*[ \t]*(?::[^=\n]*)?=[^=])")
"""A module-level assignment, matched empty before the name it binds."""
_IDENTIFIER_AT = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*")


def _is_word_character(character: str) -> bool:
    """Whether ``character`` is one the regex ``\\w`` matches (False for the empty string)."""
    return character.isalnum() or character == "_"


def _range_text(start: int | None, end: int | None) -> str:
    if start is None:
        return ""
    return f":{start}" if end in (None, start) else f":{start}-{end}"


def _range_words(ref: CodeRef) -> str:
    if ref.end is None or ref.end == ref.start:
        return f"line {ref.start}"
    return f"range {ref.start}-{ref.end}"


def _fragment(start: int | None, end: int | None) -> str:
    if start is None:
        return ""
    return f"#L{start}" if end in (None, start) else f"#L{start}-L{end}"


__all__ = [
    "CloneMissing",
    "ConfigError",
    "PageContext",
    "Resolver",
    "VerdictKey",
    "code_definitions",
    "definitions",
    "page_context",
    "record_verdict_key",
    "relocated_findings",
    "verdict_key",
]

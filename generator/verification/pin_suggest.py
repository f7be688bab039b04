"""``pin suggest``: the commit a set of pages was written against, found by their evidence.

LLM drafts are mostly right about *what* the code is and often pinned to the wrong commit. For
the pages given, every reference into one upstream is weighed at each state of the upstream's
first-parent history: its quote in the cited lines, its symbol there, its range within the file
*line up*; a quote or symbol elsewhere, a range past the end, a missing file *contradict*; the
rest *cannot tell*. Only commits that change a cited file change the score, so the history is
walked once for the cited paths (``git log --first-parent --raw``), each distinct version of a
file (a blob) is read once, and each reference is weighed once per version of its file.

Commits are ranked by references lining up (most first), then contradicting (fewest first),
then quotes found whole (most first), then nearness to the current pin. A candidate stands for
a run of commits with the same score: from the commit that made the cited files so, up to the
next commit that changes one.
"""

from __future__ import annotations

import datetime
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator.kb.pages import Page, load_page, write_page
from generator.model import CodeRef, Evidence
from generator.refs.extract import scan
from generator.refs.extract.evidence import collect_evidence
from generator.refs.extract.refs import ref_records
from generator.refs.quote import (
    FileIndex,
    PreparedQuote,
    comment_markers,
    is_strong,
    language_of,
    prepare,
)
from generator.refs.resolve import (
    Resolver,
    definitions,
    held_bound,
    names_a_commit,
    page_context,
    symbol_definitions,
)
from generator.upstream.gitstore import BlobText, GitStore, identifier_columns
from generator.upstream.history import Commit, History, history_for
from generator.upstream.manifest import ConfigError, move_pin
from generator.verification.pipeline import (
    PageFile,
    Verifier,
    collect,
    docs_root_for,
    manifest_for,
)

log = logging.getLogger(__name__)

UP, AGAINST, UNKNOWN = 1, -1, 0
WHOLE = 2
"""Lines up, with every line of its quote in order in the cited lines: counted as up, and
breaking ties between commits that line up as often (an edited quote lines up loosely with
several versions of a function, whole with the one it was copied from)."""


@dataclass(frozen=True)
class _Claim:
    """What one reference says about its file, ready to weigh against a version of it."""

    page: str
    line: int
    path: str
    start: int | None
    end: int | None
    quote: PreparedQuote | None
    symbol: str | None
    heading: str | None


@dataclass
class Candidate:
    """A run of commits over which the pages' evidence scores the same."""

    commit: Commit
    """The first commit of the run (the one that made the cited files so)."""
    last: Commit
    """The last commit of the run, before the next change to a cited file."""
    commits: int
    """How many first-parent commits the run holds."""
    up: int
    against: int
    unknown: int
    distance: int
    """First-parent commits from the current pin to the run (0 when it holds the pin)."""
    whole: int = 0
    """Of ``up``: quotes whose every line is in the cited lines, in order."""


@dataclass
class Suggestion:
    upstream: str
    pages: list[str]
    refs: int
    """References into the upstream that were weighed."""
    pin: str
    """The pin the pages have now (the manifest's, or the first page's own)."""
    candidates: list[Candidate]
    """Best first."""
    current: Candidate | None
    """The run holding the current pin."""
    blob_reads: int = 0
    written: list[str] = field(default_factory=list)
    """With ``write``: the pages (or the manifest) whose pin was set."""
    held: int = 0
    """References into the upstream that sync holds at an older commit: not weighed."""
    linked: int = 0
    """References into the upstream that name their own commit, whatever the pin (permalinks
    to a commit, and paths written as their links' text): not weighed."""
    not_written: str | None = None
    """With ``write``: why no pin was set, when none was."""


def suggest_pin(
    paths: Sequence[Path | str],
    *,
    manifest_path: Path | None = None,
    upstream: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 10,
    write: bool = False,
) -> Suggestion:
    """Rank the commits the pages under ``paths`` may have been written against."""
    path_objects = [Path(p) for p in paths]
    manifest = manifest_for(path_objects, manifest_path)
    if upstream is not None:
        manifest.check_known([upstream])
    root = docs_root_for(manifest, path_objects)
    files = collect(path_objects, root.resolve())
    if not files:
        raise ConfigError(f"no Markdown pages (*.md) found in {', '.join(map(str, paths))}")
    with Verifier(manifest, root) as verifier:
        claims, name, pins, held, linked = _claims(verifier, files, upstream)
        if name is None or not claims:
            raise ConfigError(
                "the pages cite no code of "
                + (f"'{upstream}'" if upstream else "any configured upstream")
                + " with a path the history can follow",
                hint=(
                    "check that the pages cite its files with line ranges; `kb verify "
                    "--list-refs` shows where each reference leads"
                    if upstream
                    else "pass --upstream NAME, or check the pages' references"
                ),
            )
        target = manifest.upstreams[name]
        store = verifier.resolver.store(target)
        pin = Counter(pins).most_common(1)[0][0] if pins else target.pin
        history = history_for(store, pin, target.branch, {})
        history.load([claim.path for claim in claims])
        candidates, current = _rank(claims, history, store, pin)
        earliest, latest = _timestamp(since, "--since"), _timestamp(until, "--until", end=True)
        candidates = [
            c
            for c in candidates
            if (earliest is None or c.last.time >= earliest)
            and (latest is None or c.commit.time <= latest)
        ]
        suggestion = Suggestion(
            name,
            [file.display for file in files],
            len(claims),
            pin,
            candidates[:limit],
            current,
            store.blob_reads,
            held=held[name],
            linked=linked[name],
        )
        if write and not candidates:
            suggestion.not_written = "no commit of the history weighed is a candidate"
        elif write and candidates[0].up == 0:
            # Nothing lines up anywhere: the best is only the least contradicted, no evidence.
            suggestion.not_written = (
                f"no reference lines up at {candidates[0].commit.sha[:7]}, the best candidate: "
                "nothing says the pages were written against it"
            )
        elif write:
            cited_on = {claim.page for claim in claims}
            citing = {file.source.resolve() for file in files if file.display in cited_on}
            suggestion.written = _write(verifier, files, citing, name, candidates[0].last.sha, root)
        return suggestion


def _claims(
    verifier: Verifier, files: list[PageFile], wanted: str | None
) -> tuple[list[_Claim], str | None, list[str], Counter[str], Counter[str]]:
    """Every reference with lines or a symbol, attributed to its upstream and path; and how
    many of each upstream's are held by sync at an older commit (``held_refs``), and how many
    name a commit of their own (a permalink's), which are not weighed: they cite that commit,
    not the pin."""
    manifest = verifier.manifest
    resolver: Resolver = verifier.resolver
    by_upstream: dict[str, list[_Claim]] = {}
    pins: dict[str, list[str]] = {}
    held: Counter[str] = Counter()
    linked: Counter[str] = Counter()
    for file in files:
        page = load_page(file.source, file.display, file.rel, verifier.docs_root)
        if page.text is None:
            continue
        layout = scan(page.text, page.body_start)
        records = ref_records(layout, verifier.options)
        evidence = collect_evidence(layout, records, headings=True)
        context = page_context(file.display, page.meta, manifest, page.frontmatter)
        context.lean_on(records, evidence)
        bound = held_bound(context.held, page.text, records) if context.held else {}
        for index, record in enumerate(records):
            ref = CodeRef(file.display, *record)
            held_ref = bound.get(index)
            if held_ref is not None:
                held[held_ref.upstream] += 1
                continue
            if ref.start is None and ref.symbol is None:
                continue
            resolved = resolver.resolve(ref, context)
            path = resolved.path or (ref.path if "/" in ref.path else None)
            if resolved.upstream is None or not path:
                continue
            if names_a_commit(ref):
                linked[resolved.upstream] += 1
                continue
            if wanted and resolved.upstream != wanted:
                continue
            found: Evidence = evidence.get(index) or Evidence()
            quote = None
            if found.quote is not None:
                language = found.quote.language or path.rsplit(".", 1)[-1]
                quote = prepare(found.quote.lines, language)
            by_upstream.setdefault(resolved.upstream, []).append(
                _Claim(
                    file.display,
                    ref.line,
                    path,
                    ref.start,
                    ref.end,
                    quote,
                    ref.symbol,
                    found.heading_symbol,
                )
            )
            pins.setdefault(resolved.upstream, []).append(
                resolver.commit_for(manifest.upstreams[resolved.upstream], context)
            )
    if not by_upstream:
        return [], None, [], held, linked
    name = wanted or max(by_upstream, key=lambda key: len(by_upstream[key]))
    return by_upstream.get(name, []), name, pins.get(name, []), held, linked


def _cites(verifier: Verifier, page: Page, upstream: str) -> bool:
    """Whether a reference of ``page`` leads into ``upstream``."""
    if page.text is None:
        return False
    context = page_context(page.display, page.meta, verifier.manifest, page.frontmatter)
    layout = scan(page.text, page.body_start)
    return any(
        verifier.resolver.resolve(CodeRef(page.display, *record), context).upstream == upstream
        for record in ref_records(layout, verifier.options)
    )


def _timestamp(date: str | None, option: str, end: bool = False) -> int | None:
    """Seconds since the epoch of an ISO date (``2025-03-01``, or with a time), UTC unless it
    says otherwise; the end of the day for ``--until`` given a day."""
    if date is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(date)
    except ValueError:
        raise ConfigError(
            f"{option} {date!r} is not a date", hint="write it as YYYY-MM-DD (or with a time)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    if end and len(date) <= 10:
        moment += datetime.timedelta(days=1, seconds=-1)
    return int(moment.timestamp())


def _rank(
    claims: list[_Claim], history: History, store: GitStore, pin: str
) -> tuple[list[Candidate], Candidate | None]:
    """Every run of commits with one score, from the oldest change to a cited file on.

    Walking the change points from the oldest, each applies the new versions its commit made;
    only the claims on those files are weighed again, so the work follows the changes, not the
    commits times the references.
    """
    order = history.order
    by_path: dict[str, list[_Claim]] = {}
    for claim in claims:
        by_path.setdefault(claim.path, []).append(claim)
    changes: dict[int, list[tuple[str, str | None]]] = {}
    for path in by_path:
        for version in history.versions(path):
            position = order.get(version.commit.sha)
            if position is not None:
                changes.setdefault(position, []).append((path, version.blob))
    if not changes:
        return [], None
    history.load_commits()
    weigher = _Weigher(store)
    current_blob: dict[str, str | None] = dict.fromkeys(by_path)
    contribution = {path: weigher.score(by_path[path], None) for path in by_path}
    total: Counter[int] = Counter()
    for score in contribution.values():
        total.update(score)
    pin_position = order.get(pin)
    points = sorted(changes, reverse=True)  # oldest first
    candidates: list[Candidate] = []
    current = None
    for index, position in enumerate(points):
        for path, blob in changes[position]:
            if current_blob[path] == blob:
                continue
            current_blob[path] = blob
            total.subtract(contribution[path])
            contribution[path] = weigher.score(by_path[path], blob)
            total.update(contribution[path])
        newer = points[index + 1] if index + 1 < len(points) else -1  # next change, or head
        last_position = newer + 1
        if pin_position is None or last_position <= pin_position <= position:
            distance = 0
        else:
            distance = min(abs(pin_position - position), abs(pin_position - last_position))
        candidate = Candidate(
            history.commit(history.shas[position]),
            history.commit(history.shas[last_position]),
            position - last_position + 1,
            total[UP] + total[WHOLE],
            total[AGAINST],
            total[UNKNOWN],
            distance,
            total[WHOLE],
        )
        candidates.append(candidate)
        if distance == 0 and pin_position is not None:
            current = candidate
    candidates.sort(key=lambda c: (-c.up, c.against, -c.whole, c.distance))
    return candidates, current


class _Weigher:
    """Weighs claims against versions of their files, each version indexed once."""

    def __init__(self, store: GitStore) -> None:
        self.store = store
        self._indexes: dict[str, FileIndex] = {}
        self._weights: dict[tuple[int, str | None], int] = {}

    def score(self, claims: list[_Claim], blob: str | None) -> Counter[int]:
        """How ``claims`` (on one file) weigh against one version of it."""
        return Counter(self.weigh(claim, blob) for claim in claims)

    def weigh(self, claim: _Claim, blob: str | None) -> int:
        key = (id(claim), blob)
        weight = self._weights.get(key)
        if weight is None:
            weight = self._weights[key] = self._weigh(claim, blob)
        return weight

    def _weigh(self, claim: _Claim, sha: str | None) -> int:
        if sha is None:
            return AGAINST  # the file is not there
        blob = self.store.blob(sha)
        if blob.is_binary:
            return UNKNOWN
        start, end = claim.start, claim.end
        if start is None or end is None:  # `x.py:setup()`: the symbol is defined there
            if claim.symbol and symbol_definitions(blob.line_tuple, claim.symbol):
                return UP
            return AGAINST
        if end > blob.line_count or start < 1:
            return AGAINST
        if claim.quote is not None:
            index = self._index(sha, blob, claim.path)
            if index.holds_in_order(claim.quote, start, end):
                return WHOLE
            if index.holds_loosely(claim.quote, start, end):
                return UP
            return AGAINST if is_strong(claim.quote) else UNKNOWN
        for name in (claim.symbol, claim.heading):
            if not name:
                continue
            last = name.replace("::", ".").rsplit(".", 1)[-1]
            if _used(blob, last, start, end, claim.path) or any(
                first <= start and end <= final
                for first, final in definitions(blob.line_tuple, last)
            ):
                return UP
            if name is claim.symbol:
                return AGAINST
        return UNKNOWN

    def _index(self, sha: str, blob: BlobText, path: str) -> FileIndex:
        index = self._indexes.get(sha)
        if index is None:
            index = FileIndex(blob.lines, comment_markers(language_of(path)))
            self._indexes[sha] = index
        return index


def _used(blob: BlobText, name: str, start: int, end: int, path: str) -> bool:
    if path.endswith((".py", ".pyi")):
        return blob.occurs_in_code(name, start, end)
    return any(identifier_columns(line, name) for line in blob.lines[start - 1 : end])


def _write(
    verifier: Verifier,
    files: list[PageFile],
    citing: set[Path],
    upstream: str,
    commit: str,
    root: Path,
) -> list[str]:
    """Set the pin: the manifest's when the pages are every page that relies on it (cites the
    upstream without a pin of its own), else each citing page's own (``pin`` beside
    ``upstream``, or ``pins``). ``citing``: the given pages that cite it (their resolved paths)."""
    manifest = verifier.manifest
    given = {file.source.resolve() for file in files}
    relying = []
    for file in collect([root], root.resolve()):
        page = load_page(file.source, file.display, file.rel, root)
        if upstream in page_context(file.display, page.meta, manifest, page.frontmatter).pins:
            continue
        source = file.source.resolve()
        cites = source in citing if source in given else _cites(verifier, page, upstream)
        if cites:
            relying.append(source)
    if relying and set(relying) <= given:
        if move_pin(manifest, upstream, commit):
            return [manifest.display_path()]
        return []
    written = []
    for file in files:
        if file.source.resolve() not in citing:
            continue  # (an index, a page citing other upstreams: no pin of this one)
        page = load_page(file.source, file.display, file.rel, root)
        if page.text is None or page.meta is None:
            continue
        meta = dict(page.meta)
        if meta.get("upstream") == upstream or (
            meta.get("upstream") is None and not meta.get("pins")
        ):
            meta["upstream"] = upstream
            meta["pin"] = commit
        else:
            meta["pins"] = {**(meta.get("pins") or {}), upstream: commit}
        anchored = meta.get("anchored_at")
        if isinstance(anchored, dict) and upstream in anchored:
            meta["anchored_at"] = {k: v for k, v in anchored.items() if k != upstream} or None
            if meta["anchored_at"] is None:
                del meta["anchored_at"]
        if meta != page.meta:
            write_page(page, meta)
            written.append(file.display)
    return written

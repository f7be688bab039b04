"""The verification pipeline: collect pages -> extract refs and links -> resolve -> findings.

This is the one verification core: ``scripts/verify_code_refs.py``, ``python -m generator
verify`` and the site build all call `Verifier`.

A run reads pages, finds their references and links and resolves the references in one
process or, for many pages, in two (`_Forked`: the second is forked and sends back what it
found). Pages are reported in their order whichever process read them, and the report is the
same: a page whose proof needs a search that the run's budgets limit is proven in its turn, in
the first process (`SearchDeferred`). References travel and are kept as plain records
(`generator.refs.extract.refs.RefRecord`) until someone lists them (`ResolvedRefs`).

With a verification cache (`generator.verification.cache`), a page whose bytes the cache holds
is neither scanned nor resolved: its findings come back from the cache and only its links are
checked again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import logging
import os
import pickle
import queue
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple, Protocol, overload

import yaml

from generator.checks import CHECKS, severity_of
from generator.files import shown_path
from generator.kb.governed import has_governance
from generator.kb.pages import (
    Page,
    PageProblem,
    PageUnreadable,
    load_page,
    parse_page,
    problem_findings,
    read_page_bytes,
    unreadable_page,
)
from generator.model import (
    CodeRef,
    Evidence,
    Finding,
    Link,
    Quote,
    ResolvedRef,
    Severity,
)
from generator.refs.extract import ExtractOptions, MarkdownLayout, extract_links, scan
from generator.refs.extract.evidence import collect_evidence, quoted_text, unquoted
from generator.refs.extract.links import extract_anchors
from generator.refs.extract.refs import RefRecord, ref_records
from generator.refs.linkcheck import LinkChecker, footnote_findings
from generator.refs.prove import Prover, doubts_the_pin
from generator.refs.resolve import (
    HeldRef,
    PageContext,
    Resolver,
    held_bound,
    page_context,
    record_verdict_key,
    relocated_findings,
)
from generator.upstream.manifest import ConfigError, Manifest, find_manifest, load_manifest
from generator.verification.cache import (
    CachedPage,
    CachedTarget,
    VerifyCache,
    page_digest,
    page_key,
)

log = logging.getLogger(__name__)

EVIDENCE_CHECKS = frozenset(
    {"quote-elsewhere", "quote-not-found", "quote-differs", "quote-unchecked", "names-not-in-range"}
)
"""The checks that prove references by their evidence (`generator.refs.prove`)."""

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while pages are verified."""


@dataclass(frozen=True)
class PageFile:
    source: Path
    display: str
    rel: str
    """Path relative to the docs root (forward slashes), or the file name if outside it."""


@dataclass
class Report:
    pages: int = 0
    links: int = 0
    refs: Sequence[ResolvedRef] = field(default_factory=list)
    """Every reference found, in page order; a verifier's report builds them when first read."""
    findings: list[Finding] = field(default_factory=list)
    blob_reads: int = 0
    ignored: frozenset[str] = frozenset()
    """The checks the run was told to skip: what the report says nothing about."""

    @property
    def errors(self) -> int:
        return sum(1 for finding in self.findings if finding.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for finding in self.findings if finding.severity is Severity.WARNING)

    def exit_code(self, strict: bool = False) -> int:
        if self.errors or (strict and self.warnings):
            return 1
        return 0


class ResolvedRefs(Sequence[ResolvedRef]):
    """A report's references, kept as records and shared verdicts until someone reads them.

    A run over thousands of pages finds tens of thousands of references, most of them cited
    without a finding; counting them needs no objects, and a caller that lists them gets each
    `ResolvedRef` (and its `CodeRef`) built once, on first access.
    """

    def __init__(self, ignore: frozenset[str] = frozenset()) -> None:
        self._pages: list[_PageRefs] = []
        self._position: dict[str, int] = {}
        """Where each page's first entry is in `_pages` (a page named twice is added twice)."""
        self._count = 0
        self._ignore = ignore
        self._built: list[ResolvedRef] | None = None
        self._built_pages: dict[int, list[ResolvedRef]] = {}
        """The references built so far, by the position of their page's entry."""

    def add_page(
        self,
        page: str,
        records: Sequence[RefRecord],
        verdicts: Sequence[Target],
        findings: dict[int, list[Finding]],
    ) -> None:
        """The references of one page: ``verdicts[i]`` is what ``records[i]`` cites, and
        ``findings[i]`` its findings where it has any."""
        assert self._built is None, "references are added before they are read"
        self._position.setdefault(page, len(self._pages))
        self._pages.append(_PageRefs(page, records, verdicts, findings))
        self._count += len(records)

    def of_page(self, page: str) -> list[ResolvedRef]:
        """The references of ``page`` (built for it alone, if nobody read them all yet)."""
        position = self._position.get(page)
        return [] if position is None else self._built_at(position)

    def page_key(self, page: str) -> tuple[Any, ...] | None:
        """What the verdicts on the references of ``page`` are, cheap to compare with another
        run's without building them (or finding the references again, for a page the cache
        held): for the same page text, equal keys mean equal `of_page` lists."""
        position = self._position.get(page)
        if position is None:
            return None
        if not self._pages:  # all built, and the records let go
            return tuple(self._built_pages[position])
        entry = self._pages[position]
        targets = tuple((v.upstream, v.commit, v.path, v.unchecked) for v in entry.verdicts)
        return (len(entry.records), targets, tuple(entry.findings.items()), self._ignore)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> ResolvedRef: ...

    @overload
    def __getitem__(self, index: slice) -> list[ResolvedRef]: ...

    def __getitem__(self, index: int | slice) -> ResolvedRef | list[ResolvedRef]:
        return self._all()[index]

    def __iter__(self) -> Iterator[ResolvedRef]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return self._all() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ResolvedRefs({self._all()!r})"

    def _all(self) -> list[ResolvedRef]:
        if self._built is None:
            self._built = [
                ref for position in range(len(self._pages)) for ref in self._built_at(position)
            ]
            self._pages = []
        return self._built

    def _built_at(self, position: int) -> list[ResolvedRef]:
        built = self._built_pages.get(position)
        if built is None:
            built = self._built_pages[position] = self._build(self._pages[position])
        return built

    def _build(self, entry: _PageRefs) -> list[ResolvedRef]:
        ignore = self._ignore
        page, records, verdicts, findings = entry
        built = []
        for index, record in enumerate(records):
            verdict = verdicts[index]
            own = findings.get(index)
            built.append(
                ResolvedRef(
                    CodeRef(page, *record),
                    verdict.upstream,
                    verdict.commit,
                    verdict.path,
                    [f for f in own if f.check not in ignore] if own else [],
                    verdict.unchecked,
                )
            )
        return built


class Target(Protocol):
    """Where a reference leads: a `ResolvedRef`, or what the cache keeps of one."""

    @property
    def upstream(self) -> str | None: ...

    @property
    def commit(self) -> str | None: ...

    @property
    def path(self) -> str | None: ...

    @property
    def unchecked(self) -> bool: ...


class _PageRefs(NamedTuple):
    page: str
    records: Sequence[RefRecord]
    verdicts: Sequence[Target]
    findings: dict[int, list[Finding]]


MAX_REFS_PER_PAGE = 10_000
"""Most references checked on one page: a page citing more is a dump (a log, a generated
listing), not an analysis, and checking every one would hold all of them and their findings."""


def _too_many_refs(page: Page, count: int) -> None:
    """Say on ``page`` that only its first `MAX_REFS_PER_PAGE` references are checked."""
    if any(problem.check == "page-too-many-refs" for problem in page.problems):
        return
    page.problems.append(
        PageProblem(
            "page-too-many-refs",
            1,
            1,
            f"cites {count:,} code references; only the first {MAX_REFS_PER_PAGE:,} were checked",
            "split the page: an analysis cites the lines it explains, not thousands",
        )
    )


class _FoundAgain(Sequence[RefRecord]):
    """The references of a page taken from the cache, found again in its text when first read
    (a run that only counts them, as all do but ``--list-refs`` and the site, never does)."""

    def __init__(self, count: int, page: Page, options: ExtractOptions) -> None:
        self._count = count
        self._page = page
        self._options = options
        self._found: list[RefRecord] | None = None

    def _records(self) -> list[RefRecord]:
        if self._found is None:
            page = self._page
            found = ref_records(scan(page.text or "", page.body_start), self._options)
            found = found[:MAX_REFS_PER_PAGE]  # as `Verifier._extract` kept them
            # The same text, configuration and program (the cache's fingerprint): the same
            # references, in the same order as the verdicts kept for them. Anything else is a
            # bug, and must not pair references with the wrong verdicts.
            if len(found) != self._count:
                raise RuntimeError(
                    f"{page.display}: {len(found)} references found again where the "
                    f"verification cache counted {self._count}; run with --no-cache"
                )
            self._found = found
        return self._found

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> RefRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[RefRecord]: ...

    def __getitem__(self, index: int | slice) -> RefRecord | list[RefRecord]:
        return self._records()[index]

    def __iter__(self) -> Iterator[RefRecord]:
        return iter(self._records())


def docs_root_for(manifest: Manifest, paths: Sequence[Path]) -> Path:
    """The docs directory: mkdocs.yml's ``docs_dir`` when the paths are inside it."""
    docs_dir = docs_dir_of(manifest)
    resolved = [path.resolve() for path in paths]
    if resolved and all(path == docs_dir or docs_dir in path.parents for path in resolved):
        return docs_dir
    first = resolved[0] if resolved else Path.cwd()
    return first if first.is_dir() else first.parent


def docs_dir_of(manifest: Manifest) -> Path:
    """The knowledge base's docs directory (resolved): mkdocs.yml's ``docs_dir``, else docs/."""
    docs_dir = manifest.root / "docs"
    mkdocs_config = manifest.root / "mkdocs.yml"
    if mkdocs_config.is_file():
        try:
            config = yaml.load(mkdocs_config.read_text(encoding="utf-8"), Loader=_TolerantLoader)
            if isinstance(config, dict) and isinstance(config.get("docs_dir"), str):
                docs_dir = manifest.root / config["docs_dir"]
        except (yaml.YAMLError, UnicodeDecodeError):
            log.warning("could not read docs_dir from %s", mkdocs_config)
    return docs_dir.resolve()


class _TolerantLoader(yaml.SafeLoader):
    """Reads mkdocs.yml, whose ``!!python/name:`` and ``!ENV`` tags it ignores."""


_TolerantLoader.add_multi_constructor("", lambda loader, suffix, node: None)


def collect(paths: Sequence[Path | str], docs_root: Path) -> list[PageFile]:
    """Markdown files named by ``paths`` (files or directories, searched recursively)."""
    files: list[PageFile] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            # (parts relative to ``path``, directory): sorted by parts, as paths sort, but
            # compared in C rather than by Path's own comparison, which is Python code.
            found: list[tuple[tuple[str, ...], Path]] = []
            for directory, subdirectories, names in os.walk(path):
                subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
                folder = Path(directory)
                inside = folder.relative_to(path).parts
                found.extend(((*inside, name), folder) for name in names if name.endswith(".md"))
            found.sort(key=itemgetter(0))
            # Resolve the directory once, not every page (resolving costs system calls per part).
            try:
                base: str | None = path.resolve().relative_to(docs_root).as_posix()
            except ValueError:
                base = None  # outside the docs root: pages are known by their file name
            for parts, folder in found:
                relative = "/".join(parts)
                display = _join_display(str(given), relative)
                if base is None:
                    rel = parts[-1]
                else:
                    rel = relative if base == "." else f"{base}/{relative}"
                files.append(PageFile(folder / parts[-1], display, rel))
        elif path.is_file():
            files.append(PageFile(path, str(given), _relative_to(path, docs_root)))
        else:
            raise ConfigError(f"{given}: no such file or directory")
    return files


def _join_display(given: str, relative: str) -> str:
    given = given.replace(os.sep, "/")
    return f"{given.rstrip('/')}/{relative}" if given not in ("", ".") else relative


def _relative_to(path: Path, root: Path) -> str:
    try:
        # (realpath: a symbolic link that loops is the reader's finding, not an exception here)
        return Path(os.path.realpath(path)).relative_to(root).as_posix()
    except ValueError:
        return path.name


class _Parsed:
    """A page as read in this process, with its layout (scanned when first needed)."""

    def __init__(self, file: PageFile, page: Page, layout: MarkdownLayout | None = None) -> None:
        self.file = file
        self.page = page
        self._layout = layout
        self._anchors: set[str] | None = None

    @property
    def layout(self) -> MarkdownLayout | None:
        if self._layout is None and self.page.text is not None:
            self._layout = scan(self.page.text, self.page.body_start)
        return self._layout

    def release(self) -> None:
        """Drop the layout once the page's references and links are found: it is several times
        the page's size, and only a link to the page's anchors needs it again (rescanned then)."""
        self._layout = None

    @property
    def known_anchors(self) -> set[str] | None:
        """The page's anchors if they were found already, else None."""
        return self._anchors

    def anchors(self) -> set[str] | None:
        if self._anchors is None:
            layout = self.layout
            if layout is None:
                return None
            self._anchors = extract_anchors(layout)
        return self._anchors


class _Extracted(NamedTuple):
    """What one page yields before its references are resolved (picklable: it crosses from a
    worker process to the one that resolves)."""

    page: Page
    records: Sequence[RefRecord] | None
    """The page's references; None when the page could not be read as text."""
    links: int
    link_findings: list[Finding]
    kept: tuple[list[Link], set[str] | None] | None = None
    """With a cache: the page's links and anchors, for its entry."""
    cached: CachedPage | None = None
    """The page's entry in the cache, when it was found there: nothing is left to resolve."""
    evidence: dict[int, Evidence] | None = None
    """What the page says its references' lines contain, by index in ``records``."""
    markdown_findings: tuple[Finding, ...] = ()
    """What is wrong with the page's Markdown itself (footnotes without a note), kept in the
    cache with its other findings: it depends on the page's text alone."""


class _Checked(NamedTuple):
    """What resolving one page's references found (see `CachedPage`)."""

    findings: list[Finding]
    verdicts: Sequence[Target]
    ref_findings: dict[int, list[Finding]]


_Read = tuple[_Extracted, "_Checked | None"]
"""A page read, and what its references were found to be when that was done ahead of the
page's turn (None: it is done in its turn)."""


class Verifier:
    """Verifies pages against one manifest; reusable across runs (clones stay open).

    With a ``cache`` (loaded), a page whose bytes it holds is not read for references again, and
    each run stores and saves what it found in the pages it did read.
    """

    def __init__(
        self,
        manifest: Manifest,
        docs_root: Path,
        ignore: Iterable[str] = (),
        cache: VerifyCache | None = None,
        absolute_whole_files: bool = False,
    ) -> None:
        """``absolute_whole_files``: read absolute local paths cited whole as references too
        (`ExtractOptions.absolute_whole_files`)."""
        self.manifest = manifest
        self.cache = cache
        self.docs_root = docs_root.resolve()
        self.ignore = frozenset(ignore)
        unknown = sorted(self.ignore - set(CHECKS))
        if unknown:
            raise ConfigError(
                f"unknown check id(s) to ignore: {', '.join(unknown)}",
                hint="known checks: " + ", ".join(CHECKS),
            )
        self.resolver = Resolver(manifest)
        self.prover = Prover(self.resolver)
        self.proving = not self.ignore >= EVIDENCE_CHECKS
        """Whether references are proven by their evidence (not when every evidence check is
        ignored: then the work is not done at all)."""
        hosts = {"github.com"}
        for upstream in manifest.upstreams.values():
            if upstream.web_url and "://" in upstream.web_url:
                hosts.add(upstream.web_url.split("://", 1)[1].split("/", 1)[0].lower())
        prefixes = tuple(p for u in manifest.upstreams.values() for p in u.prefixes)
        self.options = ExtractOptions(
            permalink_hosts=frozenset(hosts),
            route_prefixes=prefixes,
            absolute_whole_files=absolute_whole_files,
        )
        self._parsed: dict[str, _Parsed] = {}
        # The pages of the run in progress, by rel (the last one wins, as in `parsed_page`), and
        # those of them already read: a link may need a page's anchors before its turn comes.
        self._run_files: dict[str, PageFile] = {}
        self._run_parsed: dict[str, _Parsed] = {}
        self._run_fetched: set[str] = set()
        """The pages of the run whose reads from git were made ahead (`_fetch_ahead`)."""
        # With a cache that holds pages: every page's bytes, read before the run, and its entry
        # with the page it restores, for those the cache holds as they are now.
        self._run_data: dict[PageFile, bytes] = {}
        self._run_unreadable: dict[PageFile, PageProblem] = {}
        self._run_cached: dict[PageFile, tuple[CachedPage, _Parsed]] = {}
        self._target_pool: dict[CachedTarget, CachedTarget] = {}
        # The run's link checker (it knows the run's tree); dropped after the run, as it holds
        # this verifier, which would otherwise only go with the cycle collector.
        self._links: LinkChecker | None = None
        self._unchecked: Counter[str] = Counter()
        """References of the run into upstreams with no clone, by upstream."""
        self.knowledge_base: dict[str, Page] | None = None
        """Every page of the docs by ``rel``, for a caller that keeps them up to date itself
        (ingest): governance checks take them rather than walk the docs on every run."""
        self._forked_blob_reads = 0
        """Blobs the forked process of the run read (`Report.blob_reads`)."""

    def close(self) -> None:
        self.resolver.close()

    def forget_pages(self) -> None:
        """Drop what the verifier kept of the pages it read and of their references' verdicts:
        for a caller that verifies pages one by one and will not ask about them again (ingest),
        so that what it holds does not grow with every page."""
        self._parsed.clear()
        self.resolver.forget_verdicts()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def verify(
        self, files: Sequence[PageFile], progress: Progress | None = None, workers: int = 1
    ) -> Report:
        """Verify ``files``. With ``workers`` > 1, up to that many processes (forked) read and
        scan pages; references are still resolved here, so each blob is read once, and the
        report is the same as with one."""
        report = Report()
        refs = ResolvedRefs(self.ignore)
        pages: list[Page] = []
        self._run_files = {file.rel: file for file in files}
        self._run_parsed = {}
        self._run_fetched = set()
        self._unchecked = Counter()
        self._forked_blob_reads = 0
        self._links = LinkChecker(self.docs_root, self._anchors_of)
        with _collector_paused():
            if self.cache is not None and self.cache.holds_pages:
                self._look_up(files)
            read_pages = self._read_all(files, workers)
            if self.cache is not None:
                log.info(
                    "verification cache %s: %d of %d pages unchanged since they were verified",
                    self.cache.directory,
                    len(self._run_cached),
                    len(files),
                )
            try:
                for done, (extracted, checked) in enumerate(read_pages, 1):
                    self._check(extracted, checked, report, refs)
                    pages.append(extracted.page)
                    if progress is not None:
                        progress(done, len(files))
            finally:
                read_pages.close()
                self._run_files, self._run_parsed, self._links = {}, {}, None
                self._run_fetched = set()
                self._run_data, self._run_cached, self._run_unreadable = {}, {}, {}
                self._target_pool = {}
            if self.cache is not None:
                self.cache.save()
        report.pages = len(pages)
        report.refs = refs
        report.findings.extend(self._not_cloned())
        # Governance (generator/kb/specs.py): lifecycle fields, specs, learning paths.
        if has_governance(self.manifest.root, pages):
            # Imported only here: its modules took a tenth of a run over one ungoverned page.
            from generator.kb.specs import governance_findings

            report.findings.extend(
                governance_findings(
                    self.manifest.root,
                    self.docs_root,
                    pages,
                    self.knowledge_base,
                    strict=self.manifest.governance == "strict",
                )
            )
        report.findings = [f for f in report.findings if f.check not in self.ignore]
        report.findings.sort(key=Finding.sort_key)
        report.blob_reads = self.resolver.blob_reads + self._forked_blob_reads
        report.ignored = self.ignore
        return report

    def _not_cloned(self) -> list[Finding]:
        """One warning per upstream without a clone that the pages cite, with the count."""
        findings = []
        for name, count in sorted(self._unchecked.items()):
            upstream = self.manifest.upstreams[name]
            line = self.manifest.lines.get(f"upstreams.{name}", 1)
            findings.append(
                Finding(
                    severity_of("upstream-not-cloned"),
                    "upstream-not-cloned",
                    self.manifest.display_path(),
                    line,
                    1,
                    f"{count} reference{'s' if count != 1 else ''} into '{name}' "
                    f"{'are' if count != 1 else 'is'} not checked: it has no clone at "
                    f"{shown_path(upstream.clone_dir)}",
                    f"kb upstreams fetch {name}",
                    upstream=name,
                    commit=upstream.pin,
                )
            )
        return findings

    def parsed_page(self, rel: str) -> Page | None:
        """The page at ``rel`` (relative to the docs root) as this verifier last read it."""
        parsed = self._parsed.get(rel)
        return parsed.page if parsed is not None else None

    def _look_up(self, files: Sequence[PageFile]) -> None:
        """Read every page and find those the cache holds as they are now."""
        assert self.cache is not None
        for file in files:
            try:
                data = self._run_data[file] = read_page_bytes(file.source, self.docs_root)
            except PageUnreadable as unreadable:
                self._run_unreadable[file] = unreadable.problem
                continue
            entry = self.cache.get(page_key(file.display, file.rel, file.source), page_digest(data))
            if entry is None:
                continue
            parsed = _Parsed(file, entry.restored_page(file.source, data))
            del self._run_data[file]  # the restored page holds its text: not the bytes too
            parsed._anchors = entry.anchors
            self._run_cached[file] = (entry, parsed)
            self._parsed[file.rel] = parsed
            if self._run_files.get(file.rel) is file:
                self._run_parsed[file.rel] = parsed

    def _parse(self, file: PageFile) -> _Parsed:
        parsed = self._run_parsed.get(file.rel)
        if parsed is None or parsed.file is not file:
            data = self._run_data.pop(file, None)  # (read once: the page keeps its bytes)
            problem = self._run_unreadable.get(file)
            if problem is not None:
                page = unreadable_page(file.source, file.display, file.rel, problem)
            elif data is None:
                page = load_page(file.source, file.display, file.rel, self.docs_root)
            else:
                page = parse_page(data, file.source, file.display, file.rel)
            parsed = _Parsed(file, page)
            if self._run_files.get(file.rel) is file:
                self._run_parsed[file.rel] = parsed
        self._parsed[file.rel] = parsed
        return parsed

    def _anchors_of(self, rel: str) -> set[str] | None:
        file = self._run_files.get(rel)
        if file is not None:
            parsed = self._run_parsed.get(rel)
            if parsed is None or parsed.file is not file:
                parsed = self._parse(file)
            return parsed.anchors()
        parsed = self._parsed.get(rel)
        if parsed is None:
            source = self.docs_root / rel
            if not source.is_file():
                return None
            parsed = self._parse(PageFile(source, rel, rel))
        return parsed.anchors()

    def _adopt(self, file: PageFile, page: Page) -> None:
        """Keep ``page``, read by another process, as this verifier's reading of ``file``."""
        self._parsed[file.rel] = _Parsed(file, page)

    def _extract(self, file: PageFile) -> _Extracted:
        """Read one page and find its references and links, and check the links (only check
        them, for a page the cache holds)."""
        assert self._links is not None, "pages are read during a run"
        check = self._links.check
        cached = self._run_cached.get(file)
        if cached is not None:
            entry, parsed = cached
            page = parsed.page
            link_findings = [
                finding for link in entry.links for finding in check(link, page.rel, page.source)
            ]
            records = None
            if entry.ref_count is not None:
                records = _FoundAgain(entry.ref_count, page, self.options)
            return _Extracted(page, records, len(entry.links), link_findings, cached=entry)
        parsed = self._parse(file)
        page, layout = parsed.page, parsed.layout
        kept = None
        if layout is None:
            if self.cache is not None:
                kept = ([], None)
            return _Extracted(page, None, 0, [], kept)
        records = ref_records(layout, self.options)
        if len(records) > MAX_REFS_PER_PAGE:
            _too_many_refs(page, len(records))
            records = records[:MAX_REFS_PER_PAGE]
        evidence = None
        if records and self.proving:
            evidence = collect_evidence(layout, records, weak=False)
        links = extract_links(layout, page.display)
        link_findings = [
            finding for link in links for finding in check(link, page.rel, page.source)
        ]
        if self.cache is not None:
            # The anchors only when a link needed them already: finding every page's costs the
            # first run much, and a later run finds a cached page's from its text when a link
            # into it asks (`_Parsed.anchors`).
            kept = (links, parsed.known_anchors)
        markdown_findings = tuple(footnote_findings(layout, page.display))
        parsed.release()
        return _Extracted(
            page,
            records,
            len(links),
            link_findings,
            kept,
            evidence=evidence,
            markdown_findings=markdown_findings,
        )

    def _read_all(self, files: Sequence[PageFile], workers: int) -> Iterator[_Read]:
        """Every file read, in order: `_extract` of each, or with ``workers`` > 1 and enough
        pages, `_read_ahead` of each in this process and a forked one. Only pages the cache
        does not hold are worth sharing with a forked process. Either way, pages are read a
        share at a time, and what their references will read from git is read for the share
        at once (`_fetch_ahead`)."""
        cached = self._run_cached
        fresh = [file for file in files if file not in cached] if cached else files
        if workers < 2 or len(fresh) < PARALLEL_MINIMUM_PAGES or not _can_fork():
            yield from self._read_in_shares(files)
            return
        forked = _Forked(self, fresh)
        shared = forked.read()
        try:
            for file in files:
                yield (self._extract(file), None) if file in cached else next(shared)
        finally:
            shared.close()
            self._forked_blob_reads = forked.blob_reads

    def _read_in_shares(self, files: Sequence[PageFile]) -> Iterator[_Read]:
        """`_extract` of each of ``files`` in order, a share of `_CHUNK` pages at a time."""
        for first in range(0, len(files), _CHUNK):
            for page in self._read_share(files[first : first + _CHUNK]):
                yield page, None

    def _read_share(self, files: Sequence[PageFile]) -> list[_Extracted]:
        """`_extract` of each of ``files``, and what their references will read from git read
        for them all (`_fetch_ahead`)."""
        pages = [self._extract(file) for file in files]
        self._fetch_ahead(pages)
        return pages

    def _fetch_ahead(self, pages: Sequence[_Extracted]) -> None:
        """Read from git, in a few exchanges for all ``pages``, what resolving their references
        will read (`Resolver.read_ahead`): one exchange per page and level of depth otherwise.
        Nothing is raised here: a page whose frontmatter cannot be read for its context is left
        out, for its turn to report."""
        wanted = []
        for extracted in pages:
            if extracted.cached is None and extracted.records:
                page = extracted.page
                self._run_fetched.add(page.display)
                try:
                    context = page_context(page.display, page.meta, self.manifest, page.frontmatter)
                except Exception:  # (raised again, in the page's turn)
                    continue
                if not context.held:  # held references resolve at other commits
                    wanted.append((extracted.records, context))
        if wanted:
            self.resolver.read_ahead(wanted)

    def _read_ahead(self, files: Sequence[PageFile]) -> list[_Read]:
        """`_extract` of each of ``files``, and their references resolved now, out of their
        turn, unless that needs a search a budget limits (`SearchDeferred`) or fails."""
        return [
            (extracted, self._resolved_ahead(extracted)) for extracted in self._read_share(files)
        ]

    def _resolved_ahead(self, extracted: _Extracted) -> _Checked | None:
        if extracted.cached is not None or extracted.records is None:
            return None
        self.prover.defer_searches = True
        try:
            return self._checked(extracted)
        except Exception:
            # `SearchDeferred`; and a failure (a pin not in its clone) is left to the page's
            # turn too, where it is raised again: the run then stops at the first page in page
            # order that fails, as it does in one process.
            return None
        finally:
            self.prover.defer_searches = False

    def _checked(self, extracted: _Extracted) -> _Checked:
        """What the references and Markdown of a page the cache does not hold come to."""
        page = extracted.page
        if page.display not in self._run_fetched:  # (a page another process read ahead)
            self._fetch_ahead([extracted])
        evidence = extracted.evidence
        if evidence and page.text is not None:
            evidence = _with_text(evidence, page.text)
        checked = self._resolve_page(page, extracted.records, evidence)
        checked.findings.extend(extracted.markdown_findings)
        return checked

    def _check(
        self,
        extracted: _Extracted,
        checked: _Checked | None,
        report: Report,
        refs: ResolvedRefs,
    ) -> None:
        """Resolve one page's references (or take what the cache holds, or what was found
        ahead of the page's turn) and add its findings, in the page's order."""
        page = extracted.page
        cached = extracted.cached
        if cached is not None:
            checked = _Checked(cached.findings, cached.targets, cached.ref_findings)
        else:
            if checked is None:
                checked = self._checked(extracted)
            if extracted.kept is not None:
                self._store(page, extracted, checked)
        report.findings.extend(checked.findings)
        for verdict in checked.verdicts:
            if verdict.unchecked and verdict.upstream:
                self._unchecked[verdict.upstream] += 1
        if extracted.records is None:
            return
        refs.add_page(page.display, extracted.records, checked.verdicts, checked.ref_findings)
        report.links += extracted.links
        report.findings.extend(extracted.link_findings)

    def _resolve_page(
        self,
        page: Page,
        records: Sequence[RefRecord] | None,
        evidence: dict[int, Evidence] | None = None,
    ) -> _Checked:
        """What the page's frontmatter and references yield: its findings but those of links.
        A reference with evidence is proven against the lines it cites (`Prover`)."""
        page_findings = problem_findings(page)
        verdicts: list[ResolvedRef] = []
        findings: dict[int, list[Finding]] = {}
        if records is None:
            return _Checked(page_findings, verdicts, findings)
        display = page.display
        context = page_context(display, page.meta, self.manifest, page.frontmatter)
        if context.short_pins:
            self.resolver.settle_short_pins(context)
        page_findings.extend(context.findings)
        context.lean_on(records, evidence)
        resolver = self.resolver
        known = resolver.verdicts_in(context)
        held = context.held
        keys = list(map(record_verdict_key, records))
        bound = held_bound(held, page.text or "", records) if held else {}
        matched: set[tuple[str, int]] = set()
        page_lines: list[str] | None = None  # (split once, for a reference in a block)
        for index, record in enumerate(records):
            held_ref = bound.get(index)
            found: list[Finding] = []
            if held_ref is None:
                verdict = known.get(keys[index])
                if verdict is None:
                    verdict = resolver.verdict(CodeRef(display, *record), context, known)
                if verdict.findings:
                    found = relocated_findings(CodeRef(display, *record), verdict)
            else:
                ref = CodeRef(display, *record)
                matched.add((held_ref.text, held_ref.occurrence))
                verdict = resolver.resolve(ref, context.held_at(held_ref))
                verdict.findings.append(_held_finding(ref, held_ref))
                found = verdict.findings
            if evidence and index in evidence:
                ref = CodeRef(display, *record)
                proof = self.prover.prove(
                    ref, verdict, evidence[index], resolver.linked_context(ref, context)
                )
                if (
                    proof
                    and held_ref is None
                    and self._quote_of_another(
                        index, records, evidence, page.text or "", context, known
                    )
                ):
                    proof = [f for f in proof if f.check not in _QUOTE_CHECKS]
                if proof and held_ref is not None:
                    proof = [_at_held_commit(finding, held_ref) for finding in proof]
                found = [*_not_fixed_by(proof, found), *proof]
            if found and record[12]:
                if page_lines is None:
                    page_lines = (page.text or "").split("\n")
                written = page_lines[record[0] - 1]
                if self._in_quoted_code(
                    index, records, evidence or {}, findings, verdicts, written
                ):
                    found = []  # upstream code's own comment, quoted: not the page's reference
            if found:
                findings[index] = found
                page_findings.extend(found)
            verdicts.append(verdict)
        for key, held_ref in held.items():
            if key not in matched:
                page_findings.append(
                    Finding(
                        severity_of("held-ref-unmatched"),
                        "held-ref-unmatched",
                        display,
                        1,
                        1,
                        f"held_refs names '{held_ref.text}' (occurrence {held_ref.occurrence}), "
                        "which is no longer on the page",
                        "remove the entry from held_refs",
                    )
                )
        return _Checked(page_findings, verdicts, findings)

    def _quote_of_another(
        self,
        index: int,
        records: Sequence[RefRecord],
        evidence: dict[int, Evidence],
        text: str,
        context: PageContext,
        known: dict[Any, ResolvedRef],
    ) -> bool:
        """Whether the block quoted after reference ``index`` is the code of another reference
        of the same sentence, on a line above in its paragraph, whose lines hold it: "`f`
        (`a.py:15-21`) wraps Megatron's `f`\n(`b.py:4-17`):" and then `a.py`'s `f`. The block
        was the nearer reference's, and an error on a sentence that cites it right."""
        quote = evidence[index].quote
        if quote is None or quote.placement != "after":
            return False
        line = records[index][0]
        lines = text.split("\n")
        for other, record in enumerate(records):
            if record[0] >= line or (other in evidence and evidence[other].quote is not None):
                continue
            if any(not lines[n - 1].strip() for n in range(record[0], line)):
                continue  # another paragraph
            ref = CodeRef(context.page, *record)
            verdict = known.get(record_verdict_key(record)) or self.resolver.verdict(
                ref, context, known
            )
            if verdict.status != "error" and not self.prover.prove(
                ref, verdict, Evidence(quote=quote), context
            ):
                return True
        return False

    def _in_quoted_code(
        self,
        index: int,
        records: Sequence[RefRecord],
        evidence: dict[int, Evidence],
        findings: dict[int, list[Finding]],
        verdicts: list[ResolvedRef],
        written: str,
    ) -> bool:
        """Whether reference ``index``, in a code block, is a line of the upstream code that
        the block quotes for the reference before it, whose cited lines hold that line: a
        comment of that code citing another file (``// Adapted from apex: x.cu:120-184``),
        which the page did not write. Its findings, and a fix rewriting the quoted code, would
        be wrong. (A comment holding little but a reference takes the block as its own quote,
        so the reference before may have none.) ``written``: the page's line of it."""
        line = records[index][0]
        written = unquoted(written, written.count(">"))  # (inside block quotes: their markers)
        for other in range(index - 1, -1, -1):
            if records[other][12]:
                continue  # in a block itself
            if line - records[other][0] > _QUOTED_CODE_REACH:
                return False
            found = evidence.get(other)
            quote = found.quote if found is not None else None
            if quote is not None and any(f.check in _QUOTE_CHECKS for f in findings.get(other, ())):
                return False  # (not the cited code as quoted: the line may be the page's)
            if quote is not None and not quote.line <= line <= quote.line + quote.text.count("\n"):
                return False  # its quote is another block
            return self.prover.holds_line(verdicts[other], written)
        return False

    def _store(self, page: Page, extracted: _Extracted, checked: _Checked) -> None:
        """Keep what the run found in ``page`` in the cache."""
        assert self.cache is not None and extracted.kept is not None
        links, anchors = extracted.kept
        # What a listing needs of each verdict, one tuple per target, shared across pages (so
        # stored once): a verdict's own reference and findings are not needed again.
        pool = self._target_pool
        targets = []
        for verdict in checked.verdicts:
            target = CachedTarget(verdict.upstream, verdict.commit, verdict.path, verdict.unchecked)
            targets.append(pool.setdefault(target, target))
        self.cache.store(
            page_key(page.display, page.rel, page.source),
            CachedPage(
                page_digest(page.raw),
                CachedPage.bare(page),
                None if extracted.records is None else len(extracted.records),
                links,
                anchors,
                checked.findings,
                targets,
                checked.ref_findings,
                os.path.abspath(page.source),  # noqa: PTH100 (a Path costs several times more)
            ),
        )


_QUOTE_CHECKS = frozenset({"quote-elsewhere", "quote-not-found", "quote-differs"})
"""What a quote says of the lines it is read against (`generator.refs.prove`)."""
_QUOTED_CODE_REACH = 8
"""Page lines from a reference to a line of the block after it that may be quoted code."""


def _without_text(evidence: dict[int, Evidence]) -> dict[int, Evidence]:
    """The evidence with its quotes' text left out, to send to the resolving process: it has
    the page's text, and quotes are most of what a page would send."""
    return {
        index: found._replace(quote=found.quote._replace(text=""))
        if found.quote is not None
        else found
        for index, found in evidence.items()
    }


def _with_text(evidence: dict[int, Evidence], text: str) -> dict[int, Evidence]:
    """The evidence with its quotes' text taken back from the page's text (`_without_text`)."""
    if not any(f.quote is not None and not f.quote.text for f in evidence.values()):
        return evidence
    return {
        index: found._replace(quote=_with_quoted_text(found.quote, text))
        if found.quote is not None and not found.quote.text
        else found
        for index, found in evidence.items()
    }


def _with_quoted_text(quote: Quote, text: str) -> Quote:
    return quote._replace(text=quoted_text(text, quote.span, quote.depth))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while a run allocates its many small objects, which live to its
    end and form no cycles: the collector would only walk them again and again.

    They would all be walked once the collector is back on, as none was ever collected; moving
    them to the oldest generation first (freezing, then unfreezing) skips that walk, and the
    next full collection still looks at them. Objects the caller froze stay frozen.
    """
    collecting = gc.isenabled()
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        yield
    finally:
        if frozen == 0:
            gc.freeze()
            gc.unfreeze()
        if collecting:
            gc.enable()


def _at_held_commit(finding: Finding, held: HeldRef) -> Finding:
    """A held reference's finding, proven at the commit sync held it at: its suggestion is a
    place at that commit, which the pin's code may no longer have; said so, and no fix."""
    if finding.fix is None or not finding.suggestion:
        return finding
    return replace(
        finding,
        suggestion=f"{finding.suggestion} at {held.upstream}@{held.commit[:7]}, where sync "
        "held it; at the pin, cite where the code is now (see ref-needs-review)",
        fix=None,
    )


_SETTLED_BY_A_FIX = frozenset({"symbol-not-in-range", "symbol-not-found", "range-blank"})


def _not_fixed_by(proof: list[Finding], found: list[Finding]) -> list[Finding]:
    """``found`` (a reference's findings from resolving it) without those the fix its quote
    proves settles too: `Prover` proposes only lines where the symbol named beside the
    reference passes the resolver's check, so a finding that it is not in the cited lines
    would repeat the mistake the fix is for (and so would one that the lines are blank). One
    finding per mistake, the one with the fix. When the quote doubts the pin instead, the
    symbol's findings say so too."""
    if not proof:
        return found
    if any(finding.fix is not None for finding in proof):
        return [finding for finding in found if finding.check not in _SETTLED_BY_A_FIX]
    # A quote that another commit holds says the page's pin is wrong: then a symbol not at
    # the cited lines is no rename to follow, nor lines to move to, at the pin.
    doubt = next((f.suggestion for f in proof if doubts_the_pin(f)), None)
    if doubt is None:
        return found
    return [
        dataclasses.replace(finding, suggestion=doubt, fix=None)
        if finding.check in _SETTLED_BY_A_FIX and finding.check != "range-blank"
        else finding
        for finding in found
    ]


def _held_finding(ref: CodeRef, held: HeldRef) -> Finding:
    candidate = f"; candidate at the new pin: {held.candidate}" if held.candidate else ""
    return Finding(
        severity_of("ref-needs-review"),
        "ref-needs-review",
        ref.page,
        ref.line,
        ref.column,
        f"sync left this reference at {held.upstream}@{held.commit[:7]} because "
        + (
            "it was already wrong there"
            if held.status == "was-broken"
            else f"its code {'was ' if held.status != 'ambiguous' else 'became '}{held.status}"
        )
        + candidate,
        "update the reference and remove its entry from held_refs, or accept its candidate: "
        "kb held accept",
        text=ref.text,
        upstream=held.upstream,
        commit=held.commit,
        path=ref.path,
        start=ref.start,
        end=ref.end,
    )


def verify(
    paths: Sequence[Path | str],
    *,
    manifest_path: Path | None = None,
    docs_root: Path | None = None,
    ignore: Iterable[str] = (),
    progress: Progress | None = None,
    workers: int | None = None,
    cache: bool = False,
) -> Report:
    """Verify every page under ``paths`` (none: the knowledge base's docs directory, as
    mkdocs.yml names it). Raises `ConfigError` for configuration problems.

    ``workers``: how many processes read and scan pages (default: `default_workers`); the
    report does not depend on it. ``cache``: take pages nobody changed since the last run from
    the verification cache (`generator.verification.cache`), and update it; the report does not
    depend on it either.
    """
    verifier, files = open_verifier(
        paths, manifest_path=manifest_path, docs_root=docs_root, ignore=ignore, cache=cache
    )
    with verifier:
        return verifier.verify(files, progress, default_workers() if workers is None else workers)


def open_verifier(
    paths: Sequence[Path | str],
    *,
    manifest_path: Path | None = None,
    docs_root: Path | None = None,
    ignore: Iterable[str] = (),
    cache: bool = False,
) -> tuple[Verifier, list[PageFile]]:
    """The verifier `verify` runs over ``paths``, and the pages it verifies; for a caller that
    keeps the verifier after the run (closed, it still holds what it read until it is dropped).
    Raises `ConfigError` as `verify` does."""
    path_objects = [Path(p) for p in paths]
    manifest = manifest_for(path_objects, manifest_path)
    if not path_objects:
        docs = docs_root or docs_dir_of(manifest)
        if not docs.is_dir():  # (as given, not as a path relative to here: ../../nonexistent)
            raise ConfigError(f"{shown_path(docs)}: no such directory to verify")
        path_objects = [Path(os.path.relpath(docs))]
        paths = path_objects
    root = docs_root or docs_root_for(manifest, path_objects)
    files = collect(path_objects, root.resolve())
    if not files:
        shown = ", ".join(str(p) for p in paths)
        raise ConfigError(
            f"no Markdown pages (*.md) found in {shown}",
            hint="check the path; pages are .md files under the docs directory",
        )
    verify_cache = None
    if cache:
        verify_cache = VerifyCache.for_docs(manifest, root)
        if verify_cache is not None:
            verify_cache.load()
    return Verifier(manifest, root, ignore, verify_cache), files


def default_workers() -> int:
    """Processes `verify` reads pages in by default: one per available core, at most two."""
    return min(_MAX_WORKERS, available_cores())


def manifest_for(paths: Sequence[Path], manifest_path: Path | None = None) -> Manifest:
    """The manifest given, or the nearest one above the first of ``paths``."""
    if manifest_path is None:
        start = paths[0] if paths else Path.cwd()
        # A page outside any knowledge base (a draft in ~/notes) is checked against the one
        # the command runs in.
        manifest_path = find_manifest(start if start.is_dir() else start.parent) or (
            find_manifest(Path.cwd()) if paths else None
        )
        if manifest_path is None:
            raise ConfigError(
                f"no upstreams.yaml found in {start} or any parent directory",
                hint="run from the knowledge base, or pass --manifest PATH",
            )
    return load_manifest(manifest_path)


def _can_fork() -> bool:
    """Whether forking is safe here: a POSIX system other than macOS (where system libraries
    may break in a forked child, as multiprocessing also avoids), and no other thread running
    (a forked child gets only the forking thread, and any lock another one held)."""
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def available_cores() -> int:
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# Two processes, each reading pages and resolving their references. (More would each read the
# blobs and trees the others read too.)
_MAX_WORKERS = 2
PARALLEL_MINIMUM_PAGES = 200
"""Pages below which forking a process costs more than it saves."""
_CHUNK = 25
"""Pages read at a time in one process (`Verifier._read_all`): what git gives their references
comes in one exchange per level of trees for them all, and few pages are held at once."""
_SHARE_LEAST, _SHARE_MOST = 6, 100
"""Bounds of a share of the work between two processes (`_Forked`): a share is a quarter of
the pages left, so that the shares at the end are small and neither process waits long for the
other, and at most `_SHARE_MOST` pages, read and held at once."""
_MAX_CHUNKS = 4096
"""Chunks per run at most: their 4-byte tokens fit the smallest pipe buffer (16 KiB)."""


class _Forked:
    """Pages read and resolved by this process and a forked one, sharing the work as it goes.

    The pages are cut into chunks, and each process takes the next chunk nobody has taken yet:
    a token read from a pipe both hold, which only one of them can get, and reads its pages
    and resolves their references ahead of their turn (`Verifier._read_ahead`). The forked
    process sends what it found for its chunks (pages, reference records, verdicts, findings)
    through another pipe; this one gives the pages in order as soon as the chunks before are
    there, and reads chunks itself while it waits. Which process reads a chunk depends on their
    speed; what is found does not: a page that needs a search the run's budgets limit is left
    to be resolved in its turn, here. If the forked process stops early, this one reads the
    chunks it took but did not send, so a failure shows as it would without it.
    """

    def __init__(self, verifier: Verifier, files: Sequence[PageFile]) -> None:
        self.verifier = verifier
        least = max(_SHARE_LEAST, -(-len(files) // _MAX_CHUNKS))
        most = max(_SHARE_MOST, least)
        self.chunks = []
        first = 0
        while first < len(files):
            size = min(most, max(least, -(-(len(files) - first) // 4)))
            self.chunks.append(files[first : first + size])
            first += size
        self.blob_reads = 0
        """Blobs the forked process read, as far as it said."""

    def read(self) -> Iterator[_Read]:
        chunks = self.chunks
        token_read, token_write = os.pipe()
        # Every token is in the pipe before the fork, so a pipe's buffer must hold them all.
        _write_all(token_write, b"".join(n.to_bytes(4, "little") for n in range(len(chunks))))
        os.close(token_write)
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to spare: read every page here
            for fd in (token_read, read_end, write_end):
                os.close(fd)
            for chunk in chunks:
                yield from self.verifier._read_in_shares(chunk)
            return
        if pid == 0:
            os.close(read_end)
            status = 1
            try:
                self._serve(token_read, write_end)
                status = 0
            finally:
                os._exit(status)  # never back into the caller's code: this process only sends
        os.close(write_end)
        received: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        reader = threading.Thread(target=_receive, args=(read_end, received), daemon=True)
        reader.start()
        complete = False
        try:
            yield from self._in_order(token_read, received)
            complete = True
        finally:
            if not complete:  # stopped early (an error): the worker's pages are not wanted
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            reader.join()
            os.close(read_end)
            os.close(token_read)

    def _in_order(
        self, token_read: int, received: queue.SimpleQueue[bytes | None]
    ) -> Iterator[_Read]:
        verifier, chunks = self.verifier, self.chunks
        found: dict[int, list[_Read]] = {}
        tokens_left = worker_alive = True
        following = 0
        while following < len(chunks):
            if following in found:
                yield from found.pop(following)
                following += 1
                continue
            message = _next_message(received, block=False) if worker_alive else None
            if message is None and tokens_left:
                token = os.read(token_read, 4)
                if len(token) == 4:
                    number = int.from_bytes(token, "little")
                    found[number] = verifier._read_ahead(chunks[number])
                    continue
                tokens_left = False
            if message is None and worker_alive:
                message = _next_message(received, block=True)
            if isinstance(message, bytes):
                number, read, self.blob_reads = pickle.loads(message)
                for file, (extracted, _) in zip(chunks[number], read, strict=True):
                    verifier._adopt(file, extracted.page)
                found[number] = read
            elif message is _FINISHED:
                worker_alive = False
            elif not worker_alive and not tokens_left:
                # The worker stopped without sending this chunk: read it here.
                found[following] = verifier._read_ahead(chunks[following])

    def _serve(self, token_read: int, fd: int) -> None:
        """The forked process: take chunks until none is left, and send what each holds."""
        verifier = self.verifier
        verifier.resolver.forked()
        before = verifier.resolver.blob_reads  # (what the parent had read, counted there)
        while len(token := os.read(token_read, 4)) == 4:
            number = int.from_bytes(token, "little")
            targets: dict[CachedTarget, CachedTarget] = {}  # (each sent once per chunk)
            read = [_sendable(*page, targets) for page in verifier._read_ahead(self.chunks[number])]
            blob_reads = verifier.resolver.blob_reads - before
            data = pickle.dumps((number, read, blob_reads), protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(fd, len(data).to_bytes(8, "little"))
            _write_all(fd, data)


def _sendable(
    extracted: _Extracted, checked: _Checked | None, targets: dict[CachedTarget, CachedTarget]
) -> _Read:
    """What the forked process sends of a page: of its verdicts only where they lead (a
    `CachedTarget`, as the cache keeps them); of a page resolved already, no evidence; of
    one left to resolve in its turn, the evidence without its quotes' text, which the page's
    text holds (`_with_text`) and which is most of what a page would send."""
    if checked is None:
        if extracted.evidence:
            extracted = extracted._replace(evidence=_without_text(extracted.evidence))
        return extracted, None
    verdicts = []
    for verdict in checked.verdicts:
        target = CachedTarget(verdict.upstream, verdict.commit, verdict.path, verdict.unchecked)
        verdicts.append(targets.setdefault(target, target))
    return extracted._replace(evidence=None), checked._replace(verdicts=verdicts)


_FINISHED = object()
"""What `_next_message` gives once the forked process has closed its pipe."""


def _next_message(received: queue.SimpleQueue[bytes | None], block: bool) -> object:
    """The next message from the forked process, `_FINISHED` after its last, or None if
    ``block`` is false and nothing has arrived."""
    try:
        message = received.get(block=block)
    except queue.Empty:
        return None
    return _FINISHED if message is None else message


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int, chunks: queue.SimpleQueue[bytes | None]) -> None:
    """Read length-prefixed chunks from ``fd`` until it closes, then put None. (Each read asks
    for what is due, not for a large buffer: a read allocates what it asks for.)"""
    try:
        with open(fd, "rb", closefd=False) as stream:
            while len(prefix := stream.read(8)) == 8:
                size = int.from_bytes(prefix, "little")
                data = stream.read(size)
                if len(data) < size:
                    break
                chunks.put(data)
    finally:
        chunks.put(None)

"""Import analyses written elsewhere into the knowledge base, fixing what can be fixed safely.

``python -m generator ingest FILE...`` takes Markdown written by a person, or by an LLM from the
seed prompts, and makes it a page of the knowledge base:

1. reads it (UTF-8, with or without BOM, CRLF kept); malformed frontmatter or another encoding
   stops that file with the reason, and nothing is written;
2. detects its kind (``--kind``, the frontmatter, or its headings against each seed's outline)
   and its language (``--lang``, the frontmatter, or its characters);
3. adds or normalises the frontmatter: ``title``, ``kind``, ``lang``, ``status`` (LeanSpec
   aliases such as ``in_progress``), ``created``, ``tags`` as a list, and its place: ``spec``,
   ``paths``, ``level``, ``order`` (after the last page of its level in that path) and, for a
   review, ``depends_on`` the deep dive of the same pull request; unknown keys stay, in order;
4. rewrites, where the resolution is unique, bare file names (``actor.py:233``) and absolute
   local paths (``/home/alice/slime/slime/x.py:12``, in any form, table cells included) into
   canonical ``path:line`` references (never into a bare name: a path outside its upstream's
   prefixes stays as written), and GitHub links that name a branch into links at the pinned
   commit;
5. checks the kind's mandatory sections in order (`generator.kb.sections`), its required Mermaid
   diagrams (``N/A - reason`` accepted), and for a review that every finding has a severity and
   cites a line the pull request changes (from the upstream's clone, ``base..pin``);
6. writes the page atomically, under its own name (``--rename kebab``: in kebab-case, every
   relative link to it rewritten, and nothing written unless every file can be), and reports
   every fix and everything it could not fix, with the verifier's findings on the written page.

It never drops content: the body only changes where a reference is rewritten, every fix is
listed, and every frontmatter key the file had is still there (a check enforces both before
anything is written).
"""

from __future__ import annotations

import datetime as dt
import logging
import posixpath
import re
import string
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from generator.checks import severity_of
from generator.files import atomic_write, file_in_the_way
from generator.generate.pr import PrError, detect_language
from generator.generate.review import changed_lines, item_problems
from generator.generate.review import findings as review_items
from generator.generate.source import Placement
from generator.kb.diagrams import diagram_findings
from generator.kb.pages import Page, load_page, parse_page, render_page
from generator.kb.paths import first_heading, load_pages
from generator.kb.placement import place
from generator.kb.scaffold import kebab
from generator.kb.sections import (
    ANALYSIS_KINDS,
    REVIEW,
    KindGuess,
    detect_kind,
    page_headings,
    section_findings,
    states_pull_request,
)
from generator.kb.specs import (
    diagram_override,
    find_spec,
    load_config,
    load_specs,
    normalise,
)
from generator.model import CodeRef, Finding, Link, RefForm, ResolvedRef, Severity
from generator.refs.extract import extract_links, scan
from generator.refs.extract.links import extract_anchors
from generator.refs.linkcheck import LinkChecker, link_target, path_kind
from generator.refs.resolve import branch_drift
from generator.refs.rewrite import APART
from generator.upstream.declare import commit_of
from generator.upstream.manifest import ConfigError, Manifest
from generator.verification.pipeline import PageFile, Report, Verifier

log = logging.getLogger(__name__)

DEFAULT_STATUS = "in-progress"
"""An imported analysis is written but not yet reviewed here; ``--status complete`` says so."""


INDEX_NAMES = ("readme.md", "index.md")
"""A folder's index page (on GitHub and on the site): an index of the pages, not an analysis."""

_LANGS = {
    "en": "en", "english": "en", "英文": "en", "en-us": "en", "en-gb": "en", "en_us": "en",
    "zh": "zh", "chinese": "zh", "中文": "zh", "zh-cn": "zh", "zh_cn": "zh", "zh-hans": "zh",
    "cn": "zh",
}  # fmt: skip
_SHA = re.compile(r"[0-9a-f]{40}")
_UNRESOLVED = frozenset({"ambiguous-file", "file-missing", "path-escape", "unattributed"})
_LINK_CHECKS = frozenset({"link-missing", "anchor-missing", "link-outside-docs"})
_REWRITTEN = {
    RefForm.BARE: "bare file name",
    RefForm.ABSOLUTE: "absolute local path",
    RefForm.PERMALINK: "link pinned to the page's commit",
}


class IngestError(Exception):
    """A file that cannot be ingested; nothing was written for it."""

    source: Path | None = None
    """The file, when the error is about one file of a run."""


class NothingWritten(IngestError):
    """The run wrote nothing: a file it renames pages with could not be ingested."""


@dataclass
class Relinked:
    """A page already in the docs whose links to pages the run renamed were rewritten."""

    destination: Path
    display: str
    fixes: list[Fix]
    data: bytes
    written: bool = False
    changed: bool = True


@dataclass(frozen=True)
class IngestOptions:
    """What the user says about the files (each ``None`` lets the ingester work it out)."""

    kind: str | None = None
    lang: str | None = None
    status: str | None = None
    placement: Placement = field(default_factory=Placement)
    order: int | None = None
    upstream: str | None = None
    pin: str | None = None
    base: str | None = None
    pr: int | None = None
    output: Path | None = None
    """Where to write the page (one input file only)."""
    output_dir: Path | None = None
    """Directory for pages coming from outside the docs (default: ``docs/analysis``)."""
    force: bool = False
    dry_run: bool = False
    today: dt.date | None = None
    rename: str | None = None
    """``kebab``: name pages from outside the docs in kebab-case (``My_Notes.md`` ->
    ``my-notes.md``) and rewrite the links to them; by default they keep their names."""


@dataclass(frozen=True)
class Fix:
    """One change the ingester made: where, what, and the text before and after."""

    line: int
    """Line in the written page (1 for frontmatter changes)."""
    what: str
    before: str
    after: str
    column: int = 1
    """Column (in characters) where ``before`` started; its line's earlier fixes do not count."""


@dataclass
class Ingested:
    """The outcome for one file."""

    source: Path
    destination: Path
    display: str
    """The destination as shown in findings (``docs/analysis/x.md``)."""
    kind: str
    kind_basis: str
    lang: str
    fixes: list[Fix] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    """What is still wrong with the written page: everything the ingester could not fix."""
    written: bool = False
    changed: bool = True
    """Whether the page differs from what is at the destination (``written`` unless dry run)."""
    data: bytes = b""
    """The page as written (or, with ``dry_run``, as it would be)."""
    original: bytes = b""
    """The file as it was given."""
    refs: int = 0

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)


def _outline(page: Page) -> Page:
    """What placing and checking another page reads of ``page``: its frontmatter and title
    (the learning paths, levels and orders, the spec), not its body: a knowledge base of large
    pages is kept whole in memory otherwise, for the whole run."""
    if page.text is None:
        return replace(page, undecoded=b"")
    title = first_heading(page)
    outline = page.text[: page.body_start] + (f"# {title}\n" if title else "")
    return replace(page, text=outline)


def _with_commits(manifest: Manifest, options: IngestOptions) -> IngestOptions:
    """``options`` with ``--pin`` and ``--base`` as full SHAs: a tag, a branch or an
    abbreviation is read in the clone of the upstream the pages cite (as `upstreams add --pin`
    reads one)."""
    given = {"pin": options.pin, "base": options.base}
    if all(value is None or _SHA.fullmatch(value) for value in given.values()):
        return options
    name = options.upstream or (
        next(iter(manifest.upstreams)) if len(manifest.upstreams) == 1 else None
    )
    if name is None:
        raise IngestError(
            "--pin and --base name a commit of one upstream: add --upstream NAME, or give full "
            "40-character SHAs"
        )
    resolved = {}
    for option, value in given.items():
        if value is not None and not _SHA.fullmatch(value):
            try:
                resolved[option] = commit_of(manifest.upstreams[name], value)
            except ConfigError as error:
                raise IngestError(f"--{option}: {error.render()}") from None
    return replace(options, **resolved)


class Ingester:
    """Ingests files into the knowledge base of ``manifest``, whose pages live in ``docs_root``."""

    def __init__(self, manifest: Manifest, docs_root: Path, options: IngestOptions) -> None:
        if options.upstream is not None and options.upstream not in manifest.upstreams:
            known = ", ".join(manifest.upstreams) or "(none)"
            raise IngestError(f"--upstream '{options.upstream}' is not in upstreams.yaml: {known}")
        options = _with_commits(manifest, options)
        wanted_spec = options.placement.spec
        if wanted_spec is not None:
            specs = load_specs(load_config(manifest.root))
            if find_spec(specs, wanted_spec) is None:
                known = ", ".join(spec.id for spec in specs) or "none yet (kb new spec NAME)"
                raise IngestError(f"--spec '{wanted_spec}' names no spec; the specs: {known}")
        for name, directory in (
            ("--output-dir", options.output_dir),
            ("--output", options.output.parent if options.output is not None else None),
        ):
            in_the_way = file_in_the_way(directory)
            if in_the_way is not None:
                raise IngestError(
                    f"{name}: {_display(in_the_way)} is a file, not a directory; name a "
                    "directory (nothing was written)"
                )
        self.manifest = manifest
        self.docs_root = docs_root.resolve()
        self.options = options
        # Absolute paths cited whole are read too, to be written from the repository root.
        self.verifier = Verifier(manifest, self.docs_root, absolute_whole_files=True)
        self._pages: dict[str, Page] | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="kb-ingest-")
        self.renamed: dict[Path, Path] = {}
        """Where a page of the run would be under its own name -> where it goes instead."""

    def close(self) -> None:
        self.verifier.close()
        self._scratch.cleanup()

    def __enter__(self) -> Ingester:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def plan(self, files: Sequence[tuple[Path, Path | None]]) -> list[Path | IngestError]:
        """Where each file (with its sub-folder, as `expand` gives it) goes, or why it cannot;
        and, in `renamed`, the pages whose name changes, so that links to them are rewritten
        by `ingest` and `relink_docs` whichever page comes first."""
        destinations: list[Path | IngestError] = []
        taken: dict[Path, Path] = {}
        for source, folder in files:
            try:
                destination = self._destination(source, folder)
            except IngestError as error:
                destinations.append(error)
                continue
            other = taken.setdefault(destination, source)
            if other != source:
                destinations.append(
                    IngestError(
                        f"{source} and {other} would both be {_display(destination)}; rename "
                        "one of them (nothing was written for it)"
                    )
                )
                continue
            destinations.append(destination)
            written_as = destination.parent / source.name
            if written_as != destination and source.is_file():  # (not /dev/null, a FIFO)
                self.renamed[written_as] = destination
        return destinations

    def ingest(
        self,
        source: Path,
        folder: Path | None = None,
        destination: Path | None = None,
        write: bool = True,
    ) -> Ingested:
        """Ingest one file; raises `IngestError` (and writes nothing) when it cannot.

        ``folder``: a sub-folder of the output directory to put it in (from a directory input);
        ``destination``: where `plan` put it. ``write=False`` only plans the page (`write`
        writes it later).
        """
        page = self._read(source)
        self._knowledge_base()  # (for the governance checks of `_verify`, too)
        if destination is None:
            destination = self._destination(source, folder)
        rel = destination.relative_to(self.docs_root).as_posix()
        display = _display(destination)
        body_line = (page.text or "").count("\n", 0, page.body_start) + 1
        guess = self._kind(page, page_headings(page.body, body_line))
        meta, fixes = self._frontmatter(page, guess, rel)
        result = Ingested(source, destination, display, guess.kind, guess.basis, meta["lang"])
        result.original = page.raw

        candidate = parse_page(render_page(page, meta), destination, display, rel)
        report = self._verify(candidate)
        links = _link_edits(candidate, destination.parent, self.docs_root, self.renamed)
        prefixes = {name: u.prefixes for name, u in self.manifest.upstreams.items()}
        final_body, ref_fixes, edits, unpinned, left_absolute = _rewrite_refs(
            candidate, report.refs, display, self._why_not_pinnable, prefixes, links
        )
        final = parse_page(render_page(candidate, body=final_body), destination, display, rel)
        _check_nothing_dropped(page, final, edits)
        result.fixes = [*fixes, *ref_fixes]

        if ref_fixes:
            report = self._verify(final)
        # An absolute path cited whole that names no file is no reference (`_resolve_absolute`).
        result.refs = sum(
            1
            for r in report.refs
            if r.ref.page == display
            and not (r.ref.form is RefForm.ABSOLUTE and r.ref.start is None and r.path is None)
        )
        left = [
            Finding(
                severity_of("unpinned-permalink"),
                "unpinned-permalink",
                display,
                ref.line,
                ref.column,
                f"not pinned: {why}; pinning it would change what it cites",
                "check the lines, then link to the commit they come from",
                ref.text,
            )
            for ref, why in unpinned
        ]
        # A local path or a branch link left as written says why, in place of the verifier's
        # plain notice (which, for the link, suggests the pinning ingest found wrong).
        kept = {(ref.line, ref.column) for ref, _why in left_absolute}
        not_pinned = {(ref.line, ref.column) for ref, _why in unpinned}
        left.extend(
            Finding(
                severity_of("absolute-path"),
                "absolute-path",
                display,
                ref.line,
                ref.column,
                f"absolute local path left as written: {why}",
                "cite the file by its path in the repository, or add a prefix for it to the "
                "upstream",
                ref.text,
            )
            for ref, why in left_absolute
        )
        result.findings = _unique(
            [
                *(
                    f
                    for f in report.findings
                    if f.page == display
                    and not (f.check == "absolute-path" and (f.line, f.column) in kept)
                    and not (f.check == "unpinned-permalink" and (f.line, f.column) in not_pinned)
                ),
                *self._content_findings(final, result.refs),
                *left,
            ]
        )
        result.data = render_page(final)
        # The pages placed next see this one, as they would had it been written already.
        self._knowledge_base()[rel] = _outline(final)
        self.verifier.forget_pages()
        result.changed = not (destination.exists() and destination.read_bytes() == result.data)
        if write:
            self.write(result)
        return result

    def write(self, result: Ingested | Relinked) -> None:
        """Write a planned page (unless this is a dry run, or it is unchanged)."""
        if not self.options.dry_run and result.changed:
            result.destination.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(result.destination, result.data)
            result.written = True

    def relink_docs(self, skip: Iterable[Path]) -> list[Relinked]:
        """The pages already in the docs (but those of ``skip``, the run's own) whose relative
        links point at a page this run renames, with those links rewritten; nothing written."""
        if not self.renamed:
            return []
        skipped = {path.resolve() for path in skip}
        relinked = []
        for source in sorted(self.docs_root.rglob("*.md")):
            if not source.is_file():  # first: resolving a link that loops raises
                continue
            resolved = source.resolve()
            if resolved in skipped or resolved in self.renamed:
                continue
            if self.docs_root not in resolved.parents:
                continue  # a link out of the docs: not a page of them, nothing to relink
            rel = resolved.relative_to(self.docs_root).as_posix()
            page = load_page(source, _display(resolved), rel)
            if page.text is None:
                continue
            links = _link_edits(page, resolved.parent, self.docs_root, self.renamed)
            if not links:
                continue
            body, fixes, edits = _apply_edits(page, links)
            final = parse_page(render_page(page, body=body), resolved, page.display, rel)
            _check_nothing_dropped(page, final, edits)
            relinked.append(Relinked(resolved, page.display, fixes, render_page(final)))
        return relinked

    def recheck_links(self, pages: Sequence[Ingested]) -> None:
        """Check the links of pages written by this run again, now that the pages they link to
        are written too (each was checked before the pages after it existed)."""
        anchors: dict[str, set[str] | None] = {}

        def anchors_of(rel: str) -> set[str] | None:
            if rel not in anchors:
                anchors[rel] = _anchors_on_disk(self.docs_root, rel)
            return anchors[rel]

        checker = LinkChecker(self.docs_root, anchors_of)
        for result in pages:
            rel = result.destination.relative_to(self.docs_root).as_posix()
            page = load_page(result.destination, result.display, rel)
            if page.text is None:
                continue
            found = [
                finding
                for link in extract_links(scan(page.text, page.body_start), result.display)
                for finding in checker.check(link, rel, result.destination)
            ]
            others = [f for f in result.findings if f.check not in _LINK_CHECKS]
            result.findings = _unique([*others, *found])

    def _knowledge_base(self) -> dict[str, Page]:
        """Every page of the docs by ``rel``: walked once, then kept up to date with each page
        ingested, rather than walked again for every file (which made a folder quadratic)."""
        if self._pages is None:
            self._pages = {page.rel: _outline(page) for page in load_pages(self.docs_root)}
            self.verifier.knowledge_base = self._pages
        return self._pages

    # ------------------------------------------------------------------------------------
    # Reading and placing the file

    def _read(self, source: Path) -> Page:
        if not source.exists():
            raise IngestError(f"{source}: no such file")
        if not source.is_file():
            raise IngestError(f"{source}: not a file")
        page = load_page(source, str(source), source.name)
        if page.text is None:
            problem = page.problems[0]
            hint = f" ({problem.suggestion})" if problem.check == "page-encoding" else ""
            raise IngestError(
                f"{source}:{problem.line}:{problem.column}: {problem.message}; nothing was "
                f"written{hint}"
            )
        invalid = [p for p in page.problems if p.check == "frontmatter-invalid"]
        if invalid:
            problem = invalid[0]
            raise IngestError(
                f"{source}:{problem.line}:{problem.column}: {problem.message}; fix the "
                "frontmatter and run again (nothing was written)"
            )
        return page

    def _destination(self, source: Path, folder: Path | None) -> Path:
        options = self.options
        try:
            resolved = source.resolve()
        except RuntimeError:  # pathlib's word for a link that leads back to itself
            raise IngestError(
                f"{source}: a symbolic link that loops, not a page; nothing was written for it"
            ) from None
        except OSError as error:
            raise IngestError(
                f"{source}: its links cannot be followed ({error.strerror}); nothing was "
                "written for it"
            ) from None
        if folder is not None:
            # Found in a directory: a link out of it would publish what nobody asked to import
            # (`notes/x.md -> /etc/passwd`), as the verifier's page-outside-docs says of pages.
            walked = source.parents[len(folder.parts)]
            if walked.resolve() not in resolved.parents and resolved.exists():
                raise IngestError(
                    f"{source}: a symbolic link to {resolved}, outside {walked}; not ingested, "
                    "as it would be published (copy the page into the folder if it belongs "
                    "there)"
                )
        if options.output is not None:
            destination = options.output.resolve()
        elif self.docs_root in resolved.parents and options.output_dir is None:
            destination = resolved  # a page already in the docs is normalised where it is
        else:
            directory = (options.output_dir or self.docs_root / "analysis").resolve()
            destination = directory / (folder or Path()) / _file_name(source, options.rename)
        if self.docs_root not in destination.parents:
            raise IngestError(
                f"{_display(destination)} is outside the docs directory "
                f"{_display(self.docs_root)}, so the site would not publish it; nothing was written"
            )
        if destination.suffix != ".md":
            raise IngestError(f"{_display(destination)}: a page must be a .md file")
        if destination != resolved and destination.exists() and not options.force:
            raise IngestError(
                f"{_display(destination)} already exists; pass --force to replace it, or "
                "--output to choose another name (nothing was written)"
            )
        return destination

    def _kind(self, page: Page, headings: Sequence[Any]) -> KindGuess:
        if self.options.kind:
            return KindGuess(self.options.kind, "--kind")
        written = page.meta.get("kind")
        if isinstance(written, str) and written:
            return KindGuess(written, "frontmatter")
        if page.source.name.lower() in INDEX_NAMES:
            return KindGuess("index", f"{page.source.name} is its folder's index")
        about_pr = (
            self.options.pr is not None
            or page.meta.get("pr") is not None
            or states_pull_request(str(page.meta.get("title") or ""), page.body)
        )
        return detect_kind(headings, page.body, pr=about_pr)

    # ------------------------------------------------------------------------------------
    # Frontmatter

    def _frontmatter(
        self, page: Page, guess: KindGuess, rel: str
    ) -> tuple[dict[str, Any], list[Fix]]:
        options = self.options
        meta = dict(page.meta)
        fixes: list[Fix] = []

        def put(key: str, value: Any, why: str) -> None:
            before = meta.get(key)
            if before == value:
                return
            meta[key] = value
            shown = "(none)" if before is None else _shown(before)
            fixes.append(Fix(1, f"frontmatter {key}: {why}", shown, _shown(value)))

        title = meta.get("title")
        if not isinstance(title, str) or not title.strip():
            put("title", first_heading(page) or page.source.stem, "from the first heading")
        put("kind", guess.kind, f"detected ({guess.basis})")
        put("lang", self._lang(page, meta), "detected" if "lang" not in meta else "normalised")
        status = options.status or meta.get("status")
        if status is None:
            put("status", DEFAULT_STATUS, "default for an imported page")
        else:
            canonical, _problem = normalise("status", status)
            if canonical is not None:  # an invalid one stays: the lifecycle check reports it
                put("status", canonical, "from --status" if options.status else "normalised")
        if meta.get("created") is None:
            stated = stated_date(meta, page.body)
            if stated is not None:
                put("created", stated, "the date the page states")
            else:
                put("created", options.today or dt.date.today(), "today: the page states no date")
        tags = meta.get("tags")
        if isinstance(tags, str):
            put("tags", [t for t in re.split(r"[,\s]+", tags) if t], "made a list")
        for key, value in (
            ("upstream", options.upstream),
            ("pr", options.pr),
            ("base", options.base),
            ("pin", options.pin),
        ):
            if value is not None:
                put(key, value, f"from --{key}")
        self._place(meta, put, guess.kind, rel)
        return meta, fixes

    def _lang(self, page: Page, meta: dict[str, Any]) -> str:
        if self.options.lang:
            return self.options.lang
        written = str(meta.get("lang") or "").strip().lower()
        if written in _LANGS:
            return _LANGS[written]
        return detect_language(str(meta.get("title") or ""), page.body)

    def _place(
        self, meta: dict[str, Any], put: Callable[[str, Any, str], None], kind: str, rel: str
    ) -> None:
        """Spec, paths, level, order and a review's prerequisite, unless the page says
        (`generator.kb.placement`, as the drafting commands place their pages)."""
        placement = self.options.placement
        specs = load_specs(load_config(self.manifest.root))
        pages = list(self._knowledge_base().values())
        order = self.options.order
        for placed in place(
            meta, kind, rel, specs=specs, pages=pages, requested=placement, order=order
        ):
            put(placed.key, placed.value, placed.why)

    def _why_not_pinnable(self, resolved: ResolvedRef) -> str | None:
        """Why a branch link cannot be pinned: its lines do not read the same at the branch head
        and at the pin (pinning would silently change what it cites); ``None`` when they do."""
        ref = resolved.ref
        upstream = self.manifest.upstreams.get(resolved.upstream or "")
        if upstream is None or resolved.commit is None or not resolved.path or not ref.revision:
            return "it names no file of a configured upstream"
        store = self.verifier.resolver.store(upstream)
        head = store.resolve(ref.revision)
        if head is None:
            return f"'{ref.revision}' is not in the clone of {upstream.name}"
        if head == resolved.commit:
            return None
        return branch_drift(store, head, resolved.commit, resolved.path, ref)

    # ------------------------------------------------------------------------------------
    # Checks

    def _verify(self, page: Page) -> Report:
        scratch = Path(self._scratch.name) / "candidate.md"
        scratch.write_bytes(render_page(page))
        return self.verifier.verify([PageFile(scratch, page.display, page.rel)])

    def _content_findings(self, page: Page, refs: int) -> list[Finding]:
        """What the kind asks of the content, whatever the page's status."""
        kind = str(page.meta.get("kind"))
        finished = replace(page, meta={**page.meta, "status": "in-progress"})
        named = page.meta.get("spec")
        specs = load_specs(load_config(self.manifest.root)) if named else []
        override = diagram_override(find_spec(specs, str(named)) if named else None, page)
        overrides = {page.rel: override} if override is not None else None
        found = [*section_findings([finished]), *diagram_findings([finished], overrides)]
        if kind == REVIEW:
            found.extend(self._review_findings(page))
        if kind in ANALYSIS_KINDS and refs == 0:
            found.append(
                Finding(
                    severity_of("no-code-refs"),
                    "no-code-refs",
                    page.display,
                    1,
                    1,
                    "the page cites no code: an analysis points at the exact lines it explains",
                    "cite the files and lines as path/to/file.py:START-END",
                )
            )
        return found

    def _review_findings(self, page: Page) -> list[Finding]:
        meta = page.meta
        body_line = (page.text or "").count("\n", 0, page.body_start)
        upstream = self.manifest.upstreams.get(str(meta.get("upstream") or ""))
        base, pin = str(meta.get("base") or ""), str(meta.get("pin") or "")
        changed: dict[str, set[int]] | None = None
        out: list[Finding] = []
        if upstream is not None and _SHA.fullmatch(base) and _SHA.fullmatch(pin):
            try:
                changed = changed_lines(upstream, base, pin)
            except PrError as error:
                out.append(_finding("review-line-unchanged", page, 1, f"not checked: {error}"))
        else:
            out.append(
                Finding(
                    Severity.WARNING,
                    "review-line-unchanged",
                    page.display,
                    1,
                    1,
                    "the findings' lines were not checked against the PR: the page needs "
                    "upstream, base and pin (the PR's base and head commits)",
                    "pass --upstream NAME --base SHA --pin SHA",
                )
            )
        for item, check, message in item_problems(review_items(page.body), changed):
            out.append(_finding(check, page, item.page_line + body_line, message))
        return out


def expand(sources: Sequence[Path]) -> list[tuple[Path, Path | None]]:
    """Each file to ingest with its folder relative to the directory it was found in.

    A directory stands for every Markdown file below it (sorted); its sub-folders are kept
    under the output directory, so ``notes/fsdp/a.md`` becomes ``docs/analysis/fsdp/a.md``.
    """
    files: list[tuple[Path, Path | None]] = []
    for source in sources:
        if source.is_dir():
            found = sorted(p for p in source.rglob("*") if p.suffix.lower() in (".md", ".markdown"))
            if not found:
                raise IngestError(f"{source}: no Markdown files (*.md) in this directory")
            # What is not a file of text (a broken or looping link, a FIFO) is kept: reading it
            # fails with the reason, and the run counts it as a file not ingested. A folder
            # named x.md is no page; what it holds is found on its own.
            files.extend((p, p.parent.relative_to(source)) for p in found if not p.is_dir())
        else:
            files.append((source, None))
    return files


def ingest(
    sources: Sequence[Path],
    manifest: Manifest,
    docs_root: Path,
    options: IngestOptions,
    progress: Callable[[int, int], None] | None = None,
    keep_content: bool = True,
) -> list[Ingested | Relinked | IngestError]:
    """Ingest every file (directories: every Markdown file below them).

    A file that cannot be ingested yields its `IngestError`; the others go on, unless the run
    renames pages: then links between them are rewritten, and nothing is written unless every
    file can be (the pages of the docs that link to a renamed page come back as `Relinked`).
    Without ``keep_content``, each result's ``original`` and ``data`` are let go once the page
    is written (or, with ``dry_run``, planned): a folder of large pages is not held in memory.
    """
    files = expand(sources)
    if options.output is not None and len(files) > 1:
        raise IngestError("--output names one page; use --output-dir for several files")
    results: list[Ingested | Relinked | IngestError] = []
    plans: dict[str, _Planned] = {}
    """A dry run's pages as planned, by rel: they are not written for links to find them."""
    with Ingester(manifest, docs_root, options) as ingester:
        destinations = ingester.plan(files)
        # Renamed pages link to each other: all of them are written, or none.
        together = bool(ingester.renamed)
        for done, ((source, folder), destination) in enumerate(
            zip(files, destinations, strict=True), 1
        ):
            if isinstance(destination, IngestError):
                destination.source = source
                results.append(destination)
            else:
                try:
                    result = ingester.ingest(source, folder, destination, write=not together)
                    if options.dry_run:
                        plans[_rel(result, ingester.docs_root)] = _planned(result)
                    if not keep_content and not together:
                        result.original = result.data = b""
                    results.append(result)
                except IngestError as error:
                    error.source = source
                    results.append(error)
            if progress is not None:
                progress(done, len(files))
        pages = [r for r in results if isinstance(r, Ingested)]
        relinked = ingester.relink_docs(r.destination for r in pages) if together else []
        failed = len(results) - len(pages)
        if together and failed:
            results.append(
                NothingWritten(
                    f"nothing was written: {failed} file{'s' * (failed != 1)} could not be "
                    "ingested, and the pages renamed with them link to each other; fix "
                    f"{'them' if failed != 1 else 'it'} and run again"
                )
            )
            return results
        if together:
            for planned in [*pages, *relinked]:
                ingester.write(planned)
                if not keep_content:
                    planned.data = b""
                    if isinstance(planned, Ingested):
                        planned.original = b""
        if options.dry_run:
            _check_planned_links(pages, ingester.docs_root, plans)
        else:
            ingester.recheck_links(pages)
        results.extend(relinked)
    return results


@dataclass(frozen=True)
class _Planned:
    """What a dry run keeps of a page it plans: its links and its anchors (None: not text)."""

    links: list[Link]
    anchors: set[str] | None


def _planned(page: Ingested) -> _Planned:
    planned = parse_page(page.data, page.destination, page.display, page.display)
    if planned.text is None:
        return _Planned([], None)
    layout = scan(planned.text, planned.body_start)
    return _Planned(extract_links(layout, page.display), extract_anchors(layout))


def _check_planned_links(
    pages: Sequence[Ingested], docs_root: Path, planned: dict[str, _Planned]
) -> None:
    """Check the links of a dry run's pages as a real run does once every page is written:
    against the run's pages as planned (a page it would write, or write over), then the docs."""

    def anchors_of(rel: str) -> set[str] | None:
        return planned[rel].anchors if rel in planned else _anchors_on_disk(docs_root, rel)

    checker = LinkChecker(docs_root, anchors_of)
    for page in pages:
        rel = _rel(page, docs_root)
        found = []
        for link in planned[rel].links:
            target = _planned_target(link, rel, planned, docs_root) if link.target_path else None
            if target is None:
                found += checker.check(link, rel, page.destination)
            else:
                found += checker.check_anchor(link, target, rel)
        others = [f for f in page.findings if f.check not in _LINK_CHECKS]
        page.findings = _unique([*others, *found])


def _planned_target(
    link: Link, rel: str, planned: dict[str, _Planned], docs_root: Path
) -> str | None:
    """The page of the run ``link`` (on the page ``rel``) leads to once the run has written
    its pages, read as the link checker reads it: from the docs root for `/x.md`, and a
    directory for its index.md, else its README.md, whichever exists first. None when it leads
    to no page of the run."""
    path = link_target(link, rel)
    path = "" if path == "." else path
    if path in planned:
        return path
    for index in ("index.md", "README.md"):
        name = posixpath.join(path, index) if path else index
        if name in planned:
            return name
        if path_kind(docs_root / name) == "file":
            return None  # the page on disk comes first
    return None


def _anchors_on_disk(docs_root: Path, rel: str) -> set[str] | None:
    """The anchors of the page at ``rel`` as it is in the docs (None when it is not text)."""
    page = load_page(docs_root / rel, rel, rel)
    return None if page.text is None else extract_anchors(scan(page.text, page.body_start))


def _rel(page: Ingested, docs_root: Path) -> str:
    return page.destination.relative_to(docs_root).as_posix()


# ----------------------------------------------------------------------------------------------
# Rewriting references


@dataclass(frozen=True)
class _Edit:
    offset: int
    """Offset of the replacement in the new body."""
    before: str
    after: str


_Wanted = tuple[int, str, str, int, int, str]
"""An edit of a page: offset in its text, text before and after, line, column, and why."""


def _rewrite_refs(
    page: Page,
    resolved_refs: Sequence[ResolvedRef],
    display: str,
    why_not_pinnable: Callable[[ResolvedRef], str | None],
    prefixes: Mapping[str, Sequence[str]],
    also: Sequence[_Wanted] = (),
) -> tuple[str, list[Fix], list[_Edit], list[tuple[CodeRef, str]], list[tuple[CodeRef, str]]]:
    """The body with each uniquely resolved bare, absolute or unpinned reference rewritten,
    and the edits ``also`` asks for (links to renamed pages).

    A branch link is pinned only when ``why_not_pinnable`` has no objection; the links left
    unpinned come back with its reason, and so do the absolute paths left as written.
    """
    text = page.text or ""
    starts = _line_starts(text)
    wanted: list[_Wanted] = list(also)
    unpinned: list[tuple[CodeRef, str]] = []
    left_absolute: list[tuple[CodeRef, str]] = []
    for resolved in resolved_refs:
        ref = resolved.ref
        if ref.page != display:
            continue
        line_start = starts[ref.line - 1]
        offset = line_start + ref.column - 1
        if not ref.in_code_block and text[line_start:offset].lstrip(" ").startswith("#"):
            # In a heading, the text is the heading's anchor, which links here and on other
            # pages use: a reference there stays as written (the verifier still checks it).
            continue
        if ref.in_code_block and _BOX_DRAWING.search(text, line_start, starts[ref.line] - 1):
            # In a box drawing, a longer path would push the box's right edge out of line.
            continue
        line = text[line_start : starts[ref.line] - 1]
        if ref.form is RefForm.ABSOLUTE:
            edit = _absolute_edit(resolved, line, offset - line_start, prefixes)
            if isinstance(edit, str):
                left_absolute.append((ref, edit))
                continue
            if edit is None:
                continue
            at, before, replacement = edit
            if at is not None:  # elsewhere on the line: a path apart from its lines, a drive
                offset = line_start + at
                if offset >= page.body_start and text[offset : offset + len(before)] == before:
                    wanted.append(
                        (offset, before, replacement, ref.line, at + 1, "absolute local path")
                    )
                continue
        elif ref.form is RefForm.BARE and ref.style in APART:
            # The name is in a table's path cell or by a lines phrase, apart from the lines.
            phrase = (ref.column - 1, ref.column - 1 + len(ref.text))
            near = phrase if ref.style == "phrase" else None
            path, at = _canonical_path(resolved), _path_on_line(line, ref.path, near)
            if path is not None and at is not None and line_start + at >= page.body_start:
                wanted.append((line_start + at, ref.path, path, ref.line, at + 1, "bare file name"))
            continue
        else:
            if ref.form is RefForm.PERMALINK and _is_unpinned(resolved):
                why = why_not_pinnable(resolved)
                if why is not None:
                    unpinned.append((ref, why))
                    continue
            canonical = _canonical(resolved)
            if canonical is None:
                continue
            replacement = canonical
        if offset < page.body_start or text[offset : offset + len(ref.text)] != ref.text:
            log.warning("%s:%d: '%s' not found where expected; left", display, ref.line, ref.text)
            continue
        wanted.append((offset, ref.text, replacement, ref.line, ref.column, _REWRITTEN[ref.form]))
    body, fixes, edits = _apply_edits(page, wanted)
    return body, fixes, edits, unpinned, left_absolute


_BOX_DRAWING = re.compile(r"[\u2500-\u257f]")


def _line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (and one past its end)."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _apply_edits(page: Page, wanted: Iterable[_Wanted]) -> tuple[str, list[Fix], list[_Edit]]:
    """The page's body with the edits made (of edits that overlap, the first one wins)."""
    text = page.text or ""
    pieces: list[str] = []
    length = 0
    cursor = page.body_start
    fixes: list[Fix] = []
    edits: list[_Edit] = []
    for offset, before, after, line, column, what in sorted(wanted):
        if offset < cursor:
            continue
        pieces.append(text[cursor:offset])
        length += offset - cursor
        edits.append(_Edit(length, before, after))
        pieces.append(after)
        length += len(after)
        cursor = offset + len(before)
        fixes.append(Fix(line, what, before, after, column))
    pieces.append(text[cursor:])
    return "".join(pieces), fixes, edits


def _absolute_edit(
    resolved: ResolvedRef, line: str, column: int, prefixes: Mapping[str, Sequence[str]]
) -> tuple[int | None, str, str] | str | None:
    """How to write an absolute local path as its repository path: ``(None, before, after)``
    for the reference's own text (at the 0-based ``column`` of its ``line``); ``(column,
    path, canonical path)`` when its path is written apart from its lines (a table's path
    cell, a "lines" phrase) at that column of the line; the reason when it stays as written;
    ``None`` when the verifier already says why it cannot be resolved."""
    line_before = line[:column]
    ref = resolved.ref
    checks = {f.check for f in resolved.findings}
    if checks & _UNRESOLVED or not resolved.path or resolved.upstream is None:
        return None
    path = resolved.path
    own = tuple(prefixes.get(resolved.upstream, ()))
    # Written without its local root, the path must still say which file it is: under a
    # prefix of its upstream it does; outside them it is looked up by name, and another file
    # of any upstream may have that name.
    if not any(path.startswith(prefix) for prefix in own) and (own or "/" not in path):
        where = (
            f"outside the prefixes of {resolved.upstream} ({', '.join(own)})"
            if own
            else "a bare file name"
        )
        return (
            f"'{path}' of {resolved.upstream} is {where}, so written alone it would be looked "
            "up by name and could mean another file"
        )
    if ref.style in APART:
        at = _path_on_line(line.replace("\\", "/"), ref.path)  # (a Windows path: as long)
        if at is None:
            return f"its path '{ref.path}' is not written exactly once on the line of its lines"
        drive = _drive_before(line, at)
        return at - len(drive), drive + line[at : at + len(ref.path)], path
    index = ref.text.replace("\\", "/").find(ref.path)  # (a Windows path: as long, in "\\")
    if index < 0:
        return None
    rewritten = ref.text[:index] + path + ref.text[index + len(ref.path) :]
    drive = _drive_before(line_before, len(line_before)) if index == 0 else ""
    if drive:  # a Windows drive goes with the local root it names
        return len(line_before) - len(drive), drive + ref.text, rewritten
    return None, ref.text, rewritten


def _path_on_line(line: str, path: str, near: tuple[int, int] | None = None) -> int | None:
    """The 0-based column of ``path`` on ``line`` when it is written there exactly once as a
    whole path (not inside a longer one): where a reference written apart from its lines
    (a table's path cell, a "lines" phrase) has its path. With ``near``, where the lines of
    a phrase are, a path written several times is the one the phrase takes
    (`generator.refs.extract.refs._phrase_records`): right after it (``lines 3-5 of x.py``),
    else the nearest before it (``（x.py：25–34）。… x.py 第 30-31 行``)."""
    found = [
        match.start()
        for match in re.finditer(re.escape(path), line)
        if line[match.start() - 1 : match.start()] not in _PATH_CHARACTERS
        and line[match.end() : match.end() + 1] not in _PATH_CHARACTERS.difference(".")
    ]
    if len(found) == 1 or near is None:
        return found[0] if len(found) == 1 else None
    first, end = near
    after = [at for at in found if end <= at <= end + _PHRASE_TO_PATH]
    before = [at for at in found if at + len(path) <= first]
    return after[0] if after else before[-1] if before else None


_PHRASE_TO_PATH = 8
"""Most characters between a lines phrase's numbers and a path it names after them (`` of `
``, ``行（``)."""


_PATH_CHARACTERS = frozenset(string.ascii_letters + string.digits + "/._-")


def _canonical_path(resolved: ResolvedRef) -> str | None:
    """The repository path a bare name resolves to, when it can be written in its place."""
    checks = {f.check for f in resolved.findings}
    if checks & _UNRESOLVED or not resolved.path or resolved.path == resolved.ref.path:
        return None
    return resolved.path


def _drive_before(line: str, at: int) -> str:
    """The Windows drive (``C:``) written right before the absolute path at ``at`` of
    ``line``, or ""."""
    match = _DRIVE.search(line, 0, at)
    return match.group() if match is not None and match.end() == at else ""


_DRIVE = re.compile(r"(?<![\w.\-/])[A-Za-z]:(?=$)")


def _link_edits(
    page: Page, directory: Path, docs_root: Path, renamed: Mapping[Path, Path]
) -> list[_Wanted]:
    """Edits that point the page's relative links (the page being in ``directory``) at the
    pages of ``renamed`` by their new names, keeping each link's ``#anchor`` and query."""
    if not renamed or page.text is None:
        return []
    text = page.text
    starts = _line_starts(text)
    wanted: list[_Wanted] = []
    for link in extract_links(scan(text, page.body_start), page.display):
        if not link.target_path:
            continue
        base = docs_root if link.target_path.startswith("/") else directory
        target = Path(posixpath.normpath((base / link.target_path.lstrip("/")).as_posix()))
        new = renamed.get(target)
        if new is None:
            continue
        offset = starts[link.line - 1] + link.column - 1
        if text.startswith("<", offset):
            offset += 1
        written = link.text.split("#", 1)[0].split("?", 1)[0]
        if text[offset : offset + len(written)] != written:
            continue
        # Only the file's name changes (never its folder): the rest stays as written.
        folder, _, name = written.rpartition("/")
        encoded = name != unquote(name) or " " in new.name
        moved = (folder + "/" if folder else "") + (_in_link(new.name) if encoded else new.name)
        wanted.append((offset, written, moved, link.line, link.column, "link to a renamed page"))
    return wanted


def _in_link(name: str) -> str:
    """A file name as a link target: percent-encoded only where a link needs it (spaces,
    brackets, ``%#?``), letters of every script kept (`训练-流程.md`, not `%E8%AE%AD...`)."""
    return "".join(
        character if character.isalnum() or character in "-._~+,;=@!$&'*" else quote(character)
        for character in name
    )


def _canonical(resolved: ResolvedRef) -> str | None:
    """The canonical text of a reference that can be rewritten safely, else ``None``."""
    ref = resolved.ref
    checks = {f.check for f in resolved.findings}
    if checks & _UNRESOLVED or not resolved.path:
        return None
    if ref.form is RefForm.BARE:  # (absolute paths: `_absolute_edit`)
        path = _canonical_path(resolved)
        index = ref.text.find(ref.path)
        if path is None or index < 0:
            return None
        return ref.text[:index] + path + ref.text[index + len(ref.path) :]
    if ref.form is RefForm.PERMALINK and "unpinned-permalink" in checks:
        pinned = next(f.suggestion for f in resolved.findings if f.check == "unpinned-permalink")
        if (
            pinned
            and pinned.startswith(("http://", "https://"))
            and ref.text.startswith(("http://", "https://"))
        ):
            return pinned
    return None


def _is_unpinned(resolved: ResolvedRef) -> bool:
    return any(finding.check == "unpinned-permalink" for finding in resolved.findings)


def _check_nothing_dropped(original: Page, final: Page, edits: Sequence[_Edit]) -> None:
    """Refuse to write a page that lost a frontmatter key or body text no fix accounts for."""
    lost = [key for key in original.meta if key not in final.meta]
    if lost:
        raise IngestError(f"internal error: frontmatter keys {lost} would be lost; nothing written")
    restored = final.body
    for edit in sorted(edits, key=lambda e: e.offset, reverse=True):
        end = edit.offset + len(edit.after)
        if restored[edit.offset : end] != edit.after:
            break
        restored = restored[: edit.offset] + edit.before + restored[end:]
    before = original.body if original.frontmatter is not None else original.text or ""
    if restored != before:
        raise IngestError(
            f"internal error: the body of {original.display} would change beyond the listed "
            "fixes; nothing was written"
        )


# ----------------------------------------------------------------------------------------------
# Small helpers


def _display(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


RENAMES = ("kebab",)
"""What ``--rename`` can do to the names of pages from outside the docs."""


def _file_name(source: Path, rename: str | None) -> str:
    """The page's file name: the source's (``.markdown`` becomes ``.md``, which the site
    publishes), or with ``rename="kebab"``, ``My_Notes.zh.md`` -> ``my-notes.zh.md``."""
    lang = ".zh" if source.name.lower().endswith((".zh.md", ".zh.markdown")) else ""
    stem = re.sub(r"(\.zh)?\.(md|markdown|txt)$", "", source.name, flags=re.IGNORECASE)
    if rename == "kebab":
        return f"{kebab(stem) or 'page'}{lang}.md"
    return f"{stem}{lang}.md"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


_DATE = re.compile(
    r"(?<!\d)(?P<year>(?:19|20)\d{2})\s*(?:[-/.]|年)\s*(?P<month>\d{1,2})\s*(?:[-/.]|月)\s*"
    r"(?P<day>\d{1,2})(?!\d)"
)
_DATE_WORDS = re.compile(
    r"date|written|created|published|authored|as of|日期|时间|创建|编写|撰写|写于|成文",
    re.IGNORECASE,
)
_UPDATE_WORDS = re.compile(r"updated|revised|modified|更新|修订|修改", re.IGNORECASE)
_BARE_DATE_LINE = re.compile(r"^[\s>*_`(（\[]*$")
DATE_LINES = 12
"""How many non-blank lines at the top of a page may state when it was written."""
_DATE_KEYS = ("date", "written", "published")


def stated_date(meta: dict[str, Any], body: str) -> dt.date | None:
    """The date a page says it was written: a frontmatter ``date:``, else a line near the top
    that dates it (``Date: 2025-03-14``, ``日期：2025年3月14日``, ``*Written 2025/03/14*``, or a
    date alone); a date it was last updated only when nothing says when it was written."""
    for key in _DATE_KEYS:
        value = meta.get(key)
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        found = _date_in(str(value)) if value is not None else None
        if found is not None:
            return found
    written: dt.date | None = None
    updated: dt.date | None = None
    alone: dt.date | None = None
    in_fence = False
    seen = 0
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip():
            continue
        seen += 1
        if seen > DATE_LINES:
            break
        match = _DATE.search(line)
        found = _date_in(line)
        if match is None or found is None:
            continue
        if _UPDATE_WORDS.search(line):
            updated = updated or found
        elif _DATE_WORDS.search(line):
            written = written or found
        elif _BARE_DATE_LINE.match(
            line[: match.start()] + " " + line[match.end() :].strip("*_`)）]")
        ):
            alone = alone or found
    return written or alone or updated


def _date_in(text: str) -> dt.date | None:
    match = _DATE.search(text)
    if match is None:
        return None
    try:
        return dt.date(int(match["year"]), int(match["month"]), int(match["day"]))
    except ValueError:  # 2025-02-30: not a date
        return None


def _finding(check: str, page: Page, line: int, message: str) -> Finding:
    return Finding(severity_of(check), check, page.display, line, 1, message)


def _unique(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for finding in sorted(findings, key=Finding.sort_key):
        key = (finding.check, finding.line, finding.column, finding.message)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out

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
   local paths (``/home/alice/slime/slime/x.py:12``) into canonical ``path:line`` references, and
   GitHub links that name a branch into links at the pinned commit;
5. checks the kind's mandatory sections in order (`generator.kb.sections`), its required Mermaid
   diagrams (``N/A - reason`` accepted), and for a review that every finding has a severity and
   cites a line the pull request changes (from the upstream's clone, ``base..pin``);
6. writes the page atomically and reports every fix and everything it could not fix, with the
   verifier's findings on the written page.

It never drops content: the body only changes where a reference is rewritten, every fix is
listed, and every frontmatter key the file had is still there (a check enforces both before
anything is written).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.checks import severity_of
from generator.files import atomic_write
from generator.generate.pr import PrError, detect_language
from generator.generate.review import changed_lines, item_problems
from generator.generate.review import findings as review_items
from generator.generate.source import Placement
from generator.kb.diagrams import diagram_findings
from generator.kb.pages import Page, load_page, parse_page, render_page
from generator.kb.paths import LEVELS, build_curriculum, deep_dives_of, first_heading, load_pages
from generator.kb.scaffold import kebab
from generator.kb.sections import (
    ANALYSIS_KINDS,
    PR_DEEP_DIVE,
    REVIEW,
    SOURCE_ANALYSIS,
    KindGuess,
    detect_kind,
    page_headings,
    section_findings,
)
from generator.kb.specs import (
    diagram_override,
    find_spec,
    load_config,
    load_specs,
    normalise,
)
from generator.model import CodeRef, Finding, RefForm, ResolvedRef, Severity
from generator.upstream.manifest import Manifest
from generator.verification.pipeline import PageFile, Report, Verifier

log = logging.getLogger(__name__)

DEFAULT_STATUS = "in-progress"
"""An imported analysis is written but not yet reviewed here; ``--status complete`` says so."""

DEFAULT_LEVEL: dict[str, str] = {
    SOURCE_ANALYSIS: "beginner",
    PR_DEEP_DIVE: "intermediate",
    "pr-explanation": "intermediate",
    REVIEW: "advanced",
}
"""Where a page of each kind sits when neither the file nor the options say."""

_LANGS = {
    "en": "en", "english": "en", "英文": "en", "en-us": "en", "en-gb": "en", "en_us": "en",
    "zh": "zh", "chinese": "zh", "中文": "zh", "zh-cn": "zh", "zh_cn": "zh", "zh-hans": "zh",
    "cn": "zh",
}  # fmt: skip
_SHA = re.compile(r"[0-9a-f]{40}")
_UNRESOLVED = frozenset({"ambiguous-file", "file-missing", "path-escape", "unattributed"})
_REWRITTEN = {
    RefForm.BARE: "bare file name",
    RefForm.ABSOLUTE: "absolute local path",
    RefForm.PERMALINK: "link pinned to the page's commit",
}


class IngestError(Exception):
    """A file that cannot be ingested; nothing was written for it."""


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


class Ingester:
    """Ingests files into the knowledge base of ``manifest``, whose pages live in ``docs_root``."""

    def __init__(self, manifest: Manifest, docs_root: Path, options: IngestOptions) -> None:
        if options.upstream is not None and options.upstream not in manifest.upstreams:
            known = ", ".join(manifest.upstreams) or "(none)"
            raise IngestError(f"--upstream '{options.upstream}' is not in upstreams.yaml: {known}")
        for name, value in (("--pin", options.pin), ("--base", options.base)):
            if value is not None and not _SHA.fullmatch(value):
                raise IngestError(f"{name} must be a full 40-character commit SHA, not '{value}'")
        self.manifest = manifest
        self.docs_root = docs_root.resolve()
        self.options = options
        self.verifier = Verifier(manifest, self.docs_root)
        self._pages: dict[str, Page] | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="kb-ingest-")

    def close(self) -> None:
        self.verifier.close()
        self._scratch.cleanup()

    def __enter__(self) -> Ingester:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def ingest(self, source: Path, folder: Path | None = None) -> Ingested:
        """Ingest one file; raises `IngestError` (and writes nothing) when it cannot.

        ``folder``: a sub-folder of the output directory to put it in (from a directory input).
        """
        page = self._read(source)
        self._knowledge_base()  # (for the governance checks of `_verify`, too)
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
        final_body, ref_fixes, edits, unpinned = _rewrite_refs(
            candidate, report.refs, display, self._why_not_pinnable
        )
        final = parse_page(render_page(candidate, body=final_body), destination, display, rel)
        _check_nothing_dropped(page, final, edits)
        result.fixes = [*fixes, *ref_fixes]

        if ref_fixes:
            report = self._verify(final)
        result.refs = sum(1 for r in report.refs if r.ref.page == display)
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
        result.findings = _unique(
            [
                *(f for f in report.findings if f.page == display),
                *self._content_findings(final, result.refs),
                *left,
            ]
        )
        result.data = render_page(final)
        # The pages placed next see this one, as they would had it been written already.
        self._knowledge_base()[rel] = _outline(final)
        self.verifier.forget_pages()
        result.changed = not (destination.exists() and destination.read_bytes() == result.data)
        if not self.options.dry_run and result.changed:
            destination.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(destination, result.data)
            result.written = True
        return result

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
            hint = (
                " (convert it to UTF-8 first, e.g. iconv -f GB18030 -t UTF-8)"
                if problem.check == "page-encoding"
                else ""
            )
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
        resolved = source.resolve()
        if options.output is not None:
            destination = options.output.resolve()
        elif self.docs_root in resolved.parents and options.output_dir is None:
            destination = resolved  # a page already in the docs is normalised where it is
        else:
            directory = (options.output_dir or self.docs_root / "analysis").resolve()
            destination = directory / (folder or Path()) / _file_name(source)
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
        return detect_kind(headings, page.body, pr=self.options.pr is not None)

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
            dated = meta.get("date") if _is_date(meta.get("date")) else None
            put("created", dated or options.today or dt.date.today(), "added")
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
        """Spec, paths, level, order and a review's prerequisite, unless the page says."""
        placement = self.options.placement
        if placement.spec:
            put("spec", placement.spec, "from --spec")
        elif not meta.get("spec"):
            specs = load_specs(load_config(self.manifest.root))
            if len(specs) == 1:
                put("spec", specs[0].name, "the knowledge base's only spec")
        level = placement.level or meta.get("level")
        if level not in LEVELS:
            level = DEFAULT_LEVEL.get(kind)
        if level is not None:
            put("level", level, "from --level" if placement.level else "default for the kind")
        if kind not in ANALYSIS_KINDS:
            return
        pages = list(self._knowledge_base().values())
        curriculum = build_curriculum(pages)
        paths = list(placement.paths)
        if not paths and not meta.get("paths") and not meta.get("path"):
            nearest = _nearest_level_path(level, curriculum.paths)
            paths = [nearest] if nearest else []
        if paths:
            put("paths", paths, "from --path" if placement.paths else "the path nearest its level")
        if self.options.order is not None:
            put("order", self.options.order, "from --order")
        elif "order" not in meta and paths:
            orders = [
                page.order
                for other, page in curriculum.pages.items()
                if other != rel
                and page.order is not None
                and page.level == level
                and set(page.paths) & set(paths)
            ]
            put("order", max(orders, default=0) + 1, "after the last page of its level")
        if kind == REVIEW and meta.get("pr") is not None:
            found = deep_dives_of(pages, meta["pr"], meta.get("upstream"))
            deep_dives = [other for other in found if other != rel]
            depends = [str(d) for d in meta.get("depends_on") or []]
            missing = [d for d in deep_dives if d not in depends]
            if missing:
                put("depends_on", [*depends, *missing], "the deep dive of the same PR")

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
        at_head = store.tree(head).get(resolved.path)
        at_pin = store.tree(resolved.commit).get(resolved.path)
        if at_head is None or at_pin is None:
            return f"the file is not at both {head[:7]} and the pin"
        if ref.start is None or at_head.sha == at_pin.sha:
            return None
        end = ref.end or ref.start
        lines = slice(ref.start - 1, end)
        if store.blob(at_head.sha).lines[lines] != store.blob(at_pin.sha).lines[lines]:
            return f"lines {ref.start}-{end} at '{ref.revision}' ({head[:7]}) differ from the pin"
        return None

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
            files.extend((p, p.parent.relative_to(source)) for p in found if p.is_file())
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
) -> list[Ingested | IngestError]:
    """Ingest every file (directories: every Markdown file below them).

    A file that cannot be ingested yields its `IngestError`; the others go on. Without
    ``keep_content``, each result's ``original`` and ``data`` are let go once the page is
    written (or, with ``dry_run``, planned): a folder of large pages is not held in memory.
    """
    files = expand(sources)
    if options.output is not None and len(files) > 1:
        raise IngestError("--output names one page; use --output-dir for several files")
    results: list[Ingested | IngestError] = []
    with Ingester(manifest, docs_root, options) as ingester:
        for done, (source, folder) in enumerate(files, 1):
            try:
                result = ingester.ingest(source, folder)
                if not keep_content:
                    result.original = result.data = b""
                results.append(result)
            except IngestError as error:
                results.append(error)
            if progress is not None:
                progress(done, len(files))
    return results


# ----------------------------------------------------------------------------------------------
# Rewriting references


@dataclass(frozen=True)
class _Edit:
    offset: int
    """Offset of the replacement in the new body."""
    before: str
    after: str


def _rewrite_refs(
    page: Page,
    resolved_refs: Sequence[ResolvedRef],
    display: str,
    why_not_pinnable: Callable[[ResolvedRef], str | None],
) -> tuple[str, list[Fix], list[_Edit], list[tuple[CodeRef, str]]]:
    """The body with each uniquely resolved bare, absolute or unpinned reference rewritten.

    A branch link is pinned only when ``why_not_pinnable`` has no objection; the links left
    unpinned come back with its reason.
    """
    text = page.text or ""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    wanted: list[tuple[int, str, str, int, int, str]] = []
    unpinned: list[tuple[CodeRef, str]] = []
    for resolved in resolved_refs:
        ref = resolved.ref
        replacement = _canonical(resolved) if ref.page == display else None
        if replacement is None:
            continue
        if ref.form is RefForm.PERMALINK:
            why = why_not_pinnable(resolved)
            if why is not None:
                unpinned.append((ref, why))
                continue
        offset = starts[ref.line - 1] + ref.column - 1
        if offset < page.body_start or text[offset : offset + len(ref.text)] != ref.text:
            log.warning("%s:%d: '%s' not found where expected; left", display, ref.line, ref.text)
            continue
        wanted.append((offset, ref.text, replacement, ref.line, ref.column, _REWRITTEN[ref.form]))
    pieces: list[str] = []
    length = 0
    cursor = page.body_start
    fixes: list[Fix] = []
    edits: list[_Edit] = []
    for offset, before, after, line, column, what in sorted(wanted):
        if offset < cursor:
            continue  # overlapping references: the first one wins
        pieces.append(text[cursor:offset])
        length += offset - cursor
        edits.append(_Edit(length, before, after))
        pieces.append(after)
        length += len(after)
        cursor = offset + len(before)
        fixes.append(Fix(line, what, before, after, column))
    pieces.append(text[cursor:])
    return "".join(pieces), fixes, edits, unpinned


def _canonical(resolved: ResolvedRef) -> str | None:
    """The canonical text of a reference that can be rewritten safely, else ``None``."""
    ref = resolved.ref
    checks = {f.check for f in resolved.findings}
    if checks & _UNRESOLVED or not resolved.path:
        return None
    if ref.form in (RefForm.BARE, RefForm.ABSOLUTE):
        index = ref.text.find(ref.path)
        if index < 0 or (ref.form is RefForm.BARE and resolved.path == ref.path):
            return None
        return ref.text[:index] + resolved.path + ref.text[index + len(ref.path) :]
    if ref.form is RefForm.PERMALINK and "unpinned-permalink" in checks:
        pinned = next(f.suggestion for f in resolved.findings if f.check == "unpinned-permalink")
        if pinned and ref.text.startswith(("http://", "https://")):
            return pinned
    return None


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


def _file_name(source: Path) -> str:
    """``My Notes.zh.md`` -> ``my-notes.zh.md``."""
    lang = ".zh" if source.name.lower().endswith((".zh.md", ".zh.markdown")) else ""
    stem = re.sub(r"(\.zh)?\.(md|markdown|txt)$", "", source.name, flags=re.IGNORECASE)
    return f"{kebab(stem) or 'page'}{lang}.md"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _is_date(value: Any) -> bool:
    if isinstance(value, dt.date):
        return True
    try:
        dt.date.fromisoformat(str(value))
    except ValueError:
        return False
    return True


def _nearest_level_path(level: str | None, paths: Iterable[str]) -> str | None:
    """The level path closest to ``level`` (the easier one on a tie), if the docs have one."""
    if level not in LEVELS:
        return None
    rank = LEVELS.index(level)
    existing = [name for name in paths if name in LEVELS]
    if not existing:
        return None
    return min(existing, key=lambda name: (abs(LEVELS.index(name) - rank), LEVELS.index(name)))


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

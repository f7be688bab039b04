"""The verification pipeline: collect pages -> extract refs and links -> resolve -> findings.

This is the one verification core: ``scripts/verify_code_refs.py``, ``python -m generator
verify`` and the site build all call `Verifier`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator.checks import CHECKS, severity_of
from generator.extract import ExtractOptions, MarkdownLayout, extract_links, extract_refs, scan
from generator.extract.links import extract_anchors
from generator.linkcheck import LinkChecker
from generator.manifest import ConfigError, Manifest, find_manifest, load_manifest
from generator.model import CodeRef, Finding, ResolvedRef, Severity
from generator.pages import Page, parse_page, problem_findings
from generator.resolve import HeldRef, Resolver, page_context
from generator.specs import governance_findings

log = logging.getLogger(__name__)

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
    refs: list[ResolvedRef] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    blob_reads: int = 0

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


def docs_root_for(manifest: Manifest, paths: Sequence[Path]) -> Path:
    """The docs directory: mkdocs.yml's ``docs_dir`` when the paths are inside it."""
    docs_dir = manifest.root / "docs"
    mkdocs_config = manifest.root / "mkdocs.yml"
    if mkdocs_config.is_file():
        try:
            config = yaml.load(mkdocs_config.read_text(encoding="utf-8"), Loader=_TolerantLoader)
            if isinstance(config, dict) and isinstance(config.get("docs_dir"), str):
                docs_dir = manifest.root / config["docs_dir"]
        except (yaml.YAMLError, UnicodeDecodeError):
            log.warning("could not read docs_dir from %s", mkdocs_config)
    docs_dir = docs_dir.resolve()
    resolved = [path.resolve() for path in paths]
    if resolved and all(path == docs_dir or docs_dir in path.parents for path in resolved):
        return docs_dir
    first = resolved[0] if resolved else Path.cwd()
    return first if first.is_dir() else first.parent


class _TolerantLoader(yaml.SafeLoader):
    """Reads mkdocs.yml, whose ``!!python/name:`` and ``!ENV`` tags it ignores."""


_TolerantLoader.add_multi_constructor("", lambda loader, suffix, node: None)


def collect(paths: Sequence[Path | str], docs_root: Path) -> list[PageFile]:
    """Markdown files named by ``paths`` (files or directories, searched recursively)."""
    files: list[PageFile] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = []
            for directory, subdirectories, names in os.walk(path):
                subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
                found.extend(Path(directory) / name for name in names if name.endswith(".md"))
            # Resolve the directory once, not every page (resolving costs system calls per part).
            try:
                base: str | None = path.resolve().relative_to(docs_root).as_posix()
            except ValueError:
                base = None  # outside the docs root: pages are known by their file name
            for source in sorted(found):
                relative = source.relative_to(path).as_posix()
                display = _join_display(str(given), relative)
                if base is None:
                    rel = source.name
                else:
                    rel = relative if base == "." else f"{base}/{relative}"
                files.append(PageFile(source, display, rel))
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
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.name


@dataclass
class _Parsed:
    file: PageFile
    page: Page
    layout: MarkdownLayout | None
    _anchors: set[str] | None = None

    def anchors(self) -> set[str] | None:
        if self.layout is None:
            return None
        if self._anchors is None:
            self._anchors = extract_anchors(self.layout)
        return self._anchors


class Verifier:
    """Verifies pages against one manifest; reusable across runs (clones stay open)."""

    def __init__(self, manifest: Manifest, docs_root: Path, ignore: Iterable[str] = ()) -> None:
        self.manifest = manifest
        self.docs_root = docs_root.resolve()
        self.ignore = frozenset(ignore)
        unknown = sorted(self.ignore - set(CHECKS))
        if unknown:
            raise ConfigError(
                f"unknown check id(s) to ignore: {', '.join(unknown)}",
                hint="known checks: " + ", ".join(CHECKS),
            )
        self.resolver = Resolver(manifest)
        hosts = {"github.com"}
        for upstream in manifest.upstreams.values():
            if upstream.web_url and "://" in upstream.web_url:
                hosts.add(upstream.web_url.split("://", 1)[1].split("/", 1)[0].lower())
        prefixes = tuple(p for u in manifest.upstreams.values() for p in u.prefixes)
        self.options = ExtractOptions(permalink_hosts=frozenset(hosts), route_prefixes=prefixes)
        self._parsed: dict[str, _Parsed] = {}

    def close(self) -> None:
        self.resolver.close()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def verify(self, files: Sequence[PageFile], progress: Progress | None = None) -> Report:
        report = Report()
        parsed = [self._parse(file) for file in files]
        for done, item in enumerate(parsed, 1):
            self._verify_one(item, report)
            if progress is not None:
                progress(done, len(parsed))
        report.pages = len(parsed)
        # Governance (generator/specs.py): lifecycle fields, specs, learning paths.
        report.findings.extend(
            governance_findings(self.manifest.root, self.docs_root, [p.page for p in parsed])
        )
        report.findings = [f for f in report.findings if f.check not in self.ignore]
        for resolved in report.refs:
            resolved.findings = [f for f in resolved.findings if f.check not in self.ignore]
        report.findings.sort(key=Finding.sort_key)
        report.blob_reads = self.resolver.blob_reads
        return report

    def parsed_page(self, rel: str) -> Page | None:
        """The page at ``rel`` (relative to the docs root) as this verifier last read it."""
        parsed = self._parsed.get(rel)
        return parsed.page if parsed is not None else None

    def _parse(self, file: PageFile) -> _Parsed:
        page = parse_page(file.source.read_bytes(), file.source, file.display, file.rel)
        layout = scan(page.text, page.body_start) if page.text is not None else None
        parsed = _Parsed(file, page, layout)
        self._parsed[file.rel] = parsed
        return parsed

    def _anchors_of(self, rel: str) -> set[str] | None:
        parsed = self._parsed.get(rel)
        if parsed is None:
            source = self.docs_root / rel
            if not source.is_file():
                return None
            parsed = self._parse(PageFile(source, rel, rel))
        return parsed.anchors()

    def _verify_one(self, item: _Parsed, report: Report) -> None:
        page, layout = item.page, item.layout
        report.findings.extend(problem_findings(page))
        if layout is None:
            return
        context = page_context(page.display, page.meta, self.manifest)
        report.findings.extend(context.findings)
        occurrences: dict[str, int] = {}
        matched: set[tuple[str, int]] = set()
        for ref in extract_refs(layout, page.display, self.options):
            occurrences[ref.text] = occurrences.get(ref.text, 0) + 1
            held = context.held.get((ref.text, occurrences[ref.text]))
            if held is None:
                resolved = self.resolver.resolve(ref, context)
            else:
                matched.add((held.text, held.occurrence))
                resolved = self.resolver.resolve(ref, context.held_at(held))
                resolved.findings.append(_held_finding(ref, held))
            report.refs.append(resolved)
            report.findings.extend(resolved.findings)
        for key, held in context.held.items():
            if key not in matched:
                report.findings.append(
                    Finding(
                        severity_of("held-ref-unmatched"),
                        "held-ref-unmatched",
                        page.display,
                        1,
                        1,
                        f"held_refs names '{held.text}' (occurrence {held.occurrence}), "
                        "which is no longer on the page",
                        "remove the entry from held_refs",
                    )
                )
        checker = LinkChecker(self.docs_root, self._anchors_of)
        links = extract_links(layout, page.display)
        report.links += len(links)
        for link in links:
            report.findings.extend(checker.check(link, page.rel, page.source))


def _held_finding(ref: CodeRef, held: HeldRef) -> Finding:
    candidate = f"; candidate at the new pin: {held.candidate}" if held.candidate else ""
    return Finding(
        severity_of("ref-needs-review"),
        "ref-needs-review",
        ref.page,
        ref.line,
        ref.column,
        f"sync left this reference at {held.upstream}@{held.commit[:7]} because its code "
        f"{'was ' if held.status != 'ambiguous' else 'became '}{held.status}{candidate}",
        "update the reference, then remove its entry from held_refs",
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
) -> Report:
    """Verify every page under ``paths``. Raises `ConfigError` for configuration problems."""
    path_objects = [Path(p) for p in paths]
    if manifest_path is None:
        start = path_objects[0] if path_objects else Path.cwd()
        manifest_path = find_manifest(start if start.is_dir() else start.parent)
        if manifest_path is None:
            raise ConfigError(
                f"no upstreams.yaml found in {start} or any parent directory",
                hint="run from the knowledge base, or pass --manifest PATH",
            )
    manifest = load_manifest(manifest_path)
    root = docs_root or docs_root_for(manifest, path_objects)
    files = collect(path_objects, root.resolve())
    if not files:
        shown = ", ".join(str(p) for p in paths)
        raise ConfigError(
            f"no Markdown pages (*.md) found in {shown}",
            hint="check the path; pages are .md files under the docs directory",
        )
    with Verifier(manifest, root, ignore) as verifier:
        return verifier.verify(files, progress)

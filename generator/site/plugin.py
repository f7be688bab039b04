"""The ``knowledge-base`` MkDocs plugin: verify before build, pinned code links, learning paths.

One `Verifier` per MkDocs process (``mkdocs serve`` rebuilds reuse it and its open clones). Per
build, in ``on_files``:

1. every page is verified with the same core as ``scripts/verify_code_refs.py``; the learning
   paths are computed (`generator.paths`), and the site checks run (`pagechecks`). Findings are
   logged in the verifier's text format (``docs/x.md:12:7: error[check] message``): warnings
   through MkDocs' logger, so ``--strict`` fails on them; errors fail every ``mkdocs build``,
   strict or not, because a page with an error must not be published. ``mkdocs serve`` logs
   errors and keeps serving, so the writer can see the page they are fixing;
2. the nav is computed from frontmatter (unless mkdocs.yml has a hand-written ``nav:``);
   archived pages leave it;
3. Mermaid is copied into the site from where the set-up installed it (`make mermaid`), so no
   page requests anything from a CDN, and one page per tag is generated for the tags plugin;
4. in a governed knowledge base (``specs/``), the spec board (`generator.board`) becomes the
   generated page ``board.md``, computed from this build's report and curriculum.

Per page, in ``on_page_markdown``: code references are marked for links to the pinned upstream
lines (`codelinks`), made in ``on_page_content``, and the generated lists, banner,
prerequisites and path navigation are added (`navigation`). The Markdown sources are never
written.
"""

from __future__ import annotations

import gc
import logging
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mkdocs.config import config_options as options
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page as MkDocsPage

from generator.extract import scan
from generator.manifest import ConfigError, Manifest, load_manifest
from generator.model import Finding, ResolvedRef, Severity
from generator.pages import Page, parse_page
from generator.paths import Curriculum, build_curriculum
from generator.site import navigation
from generator.site.codelinks import (
    PLACEHOLDERS,
    CodeLink,
    mark_links,
    pattern_problem,
    plan_links,
    unmark_links,
)
from generator.site.pagechecks import frontmatter_missing, mermaid_findings
from generator.slugs import github_slug
from generator.verify import PageFile, Report, Verifier

log = logging.getLogger("mkdocs.plugins.knowledge_base")

MERMAID_SITE_PATH = "assets/javascripts/mermaid.min.js"
BOARD_PAGE = "board.md"
DEFAULT_MERMAID = ".cache/node/node_modules/mermaid/dist/mermaid.min.js"


class KnowledgeBaseConfig(Config):
    manifest = options.Type(str, default="upstreams.yaml")
    """The upstream manifest, relative to mkdocs.yml."""
    verify = options.Type(bool, default=True)
    ignore = options.ListOfItems(options.Type(str), default=[])
    """Check ids not to report (as ``--ignore`` does)."""
    code_links = options.Type(bool, default=True)
    navigation = options.Type(bool, default=True)
    tags = options.Type(bool, default=True)
    """Generate ``tags/index.md`` and one page per tag (listings of Material's tags plugin)."""
    board = options.Type(bool, default=True)
    """Generate the spec board, ``board.md``, from this build's verification (governed
    knowledge bases only: a ``specs/`` or ``.lean-spec/`` directory)."""
    mermaid = options.Optional(options.Type(str))
    """mermaid.min.js to serve from the site, relative to mkdocs.yml (default: what
    ``make mermaid`` installs); an empty string turns this off."""


@dataclass
class BuildState:
    """What one build learned in ``on_files`` and uses for every page."""

    report: Report = field(default_factory=Report)
    refs_by_page: dict[str, list[ResolvedRef]] = field(default_factory=dict)
    pages: dict[str, Page] = field(default_factory=dict)
    curriculum: Curriculum | None = None
    findings: list[Finding] = field(default_factory=list)
    board: str | None = None
    """The generated board page's path (``board.md``), when there is one."""
    links: dict[str, list[CodeLink]] = field(default_factory=dict)
    """Code links marked in a page's Markdown, made in its HTML (``on_page_content``)."""


class KnowledgeBasePlugin(BasePlugin[KnowledgeBaseConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command = "build"
        self.verifier: Verifier | None = None
        self._manifest_key: tuple[Path, float] | None = None
        self.state = BuildState()
        self.root = Path.cwd()

    # -- lifecycle

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command = command

    def on_shutdown(self) -> None:
        if self.verifier is not None:
            self.verifier.close()
            self.verifier = None

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path or "mkdocs.yml").resolve().parent
        if self._mermaid_source() is not None and MERMAID_SITE_PATH not in [
            str(script) for script in config.extra_javascript
        ]:
            # Material's Mermaid integration uses a global `mermaid` when one is loaded, and
            # only otherwise fetches it from a CDN.
            config.extra_javascript.insert(0, MERMAID_SITE_PATH)
        return config

    # -- files: verification, curriculum, nav, generated files

    @event_priority(-50)  # after other plugins added or removed files
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        self.state = BuildState()
        docs_dir = Path(config.docs_dir).resolve()
        prefix = _display_prefix(docs_dir, self.root)
        sources = [
            file
            for file in files.documentation_pages()
            if not file.generated_by and file.abs_src_path
        ]
        page_files = [
            PageFile(Path(f.abs_src_path), f"{prefix}{f.src_uri}", f.src_uri)  # type: ignore[arg-type]
            for f in sources
        ]
        findings: list[Finding] = []
        verifier: Verifier | None = None
        if self.config.verify or self.config.code_links:
            verifier = self._verifier(docs_dir)
            report = verifier.verify(page_files)
            self.state.report = report
            for resolved in report.refs:
                self.state.refs_by_page.setdefault(resolved.ref.page, []).append(resolved)
            if self.config.verify:
                findings.extend(report.findings)
        self.state.pages = _read_pages(page_files, verifier)
        curriculum = build_curriculum(list(self.state.pages.values()))
        self.state.curriculum = curriculum
        if self.config.verify:
            findings.extend(curriculum.findings)
            for page in self.state.pages.values():
                missing = frontmatter_missing(page)
                if missing is not None:
                    findings.append(missing)
                findings.extend(mermaid_findings(page))
        self.state.findings = _unique_sorted(
            f for f in findings if f.check not in set(self.config.ignore)
        )

        for file in sources:
            info = curriculum.pages.get(file.src_uri)
            if info is not None and info.archived:
                file.inclusion = InclusionLevel.NOT_IN_NAV
        tag_pages = self._tag_pages(files, config) if self.config.tags else []
        if self.config.board:
            self.state.board = self._add_board(files, config, prefix)
        self._add_mermaid(files, config)
        if self.config.navigation and config.nav is None:
            rels = [f.src_uri for f in sources if f.inclusion.is_in_nav()]
            labels = navigation.words(config.theme.get("language"))
            extra: list[Any] = [{labels["board"]: self.state.board}] if self.state.board else []
            extra += [{labels["tags"]: tag_pages[0]}] if tag_pages else []
            config.nav = navigation.build_nav(
                curriculum,
                rels,
                home="index.md" if "index.md" in rels else None,
                extra=extra,
                lang=config.theme.get("language"),
            )
        self._report(self.state.findings)
        if self.command == "build":
            # What on_files read (pages, layouts, references) lives until the build ends; keep
            # the collector from walking it again on every full collection of a long build.
            # One-off builds only: `mkdocs serve` rebuilds and must be able to free it.
            gc.freeze()
        return files

    def _verifier(self, docs_dir: Path) -> Verifier:
        manifest_path = (self.root / self.config.manifest).resolve()
        try:
            key = (manifest_path, manifest_path.stat().st_mtime)
        except OSError:
            key = (manifest_path, 0.0)
        if (
            self.verifier is None
            or self._manifest_key != key
            or (self.verifier.docs_root != docs_dir)
        ):
            if self.verifier is not None:
                self.verifier.close()
            try:
                manifest: Manifest = load_manifest(manifest_path)
                for upstream in manifest.upstreams.values():
                    problem = upstream.code_url and pattern_problem(upstream.code_url)
                    if problem:
                        raise manifest.error(
                            problem,
                            f"upstreams.{upstream.name}.code_url",
                            "placeholders: " + ", ".join(sorted(PLACEHOLDERS)),
                        )
                self.verifier = Verifier(manifest, docs_dir, self.config.ignore)
            except ConfigError as error:
                raise PluginError(f"knowledge-base: {error.render()}") from None
            self._manifest_key = key
        return self.verifier

    def _report(self, findings: list[Finding]) -> None:
        for finding in findings:
            level = logging.ERROR if finding.severity is Severity.ERROR else logging.WARNING
            log.log(level, format_finding(finding))
        errors = sum(1 for f in findings if f.severity is Severity.ERROR)
        warnings = len(findings) - errors
        report = self.state.report
        log.info(
            "knowledge-base: checked %d pages, %d code references and %d links: "
            "%d errors, %d warnings",
            report.pages,
            len(report.refs),
            report.links,
            errors,
            warnings,
        )
        if errors and self.command == "build":
            raise PluginError(
                f"knowledge-base: {errors} error(s) found by the verifier; "
                "a page with an error is not published (see the findings above)"
            )

    # -- generated files

    def _mermaid_source(self) -> Path | None:
        configured = self.config.mermaid
        if configured == "":
            return None
        return self.root / (configured or DEFAULT_MERMAID)

    def _add_mermaid(self, files: Files, config: MkDocsConfig) -> None:
        source = self._mermaid_source()
        if source is None:
            return
        if not source.is_file():
            raise PluginError(
                f"knowledge-base: Mermaid is not installed at {source}; run `make mermaid` "
                "(it installs the pinned version from the npm registry)"
            )
        existing = files.get_file_from_path(MERMAID_SITE_PATH)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, MERMAID_SITE_PATH, abs_src_path=str(source)))

    def _add_board(self, files: Files, config: MkDocsConfig, prefix: str) -> str | None:
        """``board.md``: the spec board, from the report and curriculum this build computed.

        Nothing is verified again: the references' health and the findings come from this
        build's report, the learning paths from its curriculum.
        """
        from generator.board import build_board, format_board_markdown
        from generator.specs import is_governed, load_governance

        root = self.verifier.manifest.root if self.verifier is not None else self.root
        if not is_governed(root) or files.get_file_from_path(BOARD_PAGE) is not None:
            return None
        governance = load_governance(
            root,
            Path(config.docs_dir).resolve(),
            list(self.state.pages.values()),
            prefix,
            walk=False,
            curriculum=self.state.curriculum,
            findings=False,
        )
        manifest = self.verifier.manifest if self.verifier is not None else None
        board = build_board(governance, self.state.report, manifest)
        report = self.state.report
        errors = sum(1 for f in self.state.findings if f.severity is Severity.ERROR)
        intro = (
            f"Computed by this build from its own verification: {report.pages} pages, "
            f"{len(report.refs)} code references and {report.links} links checked, "
            f"{errors} errors and {len(self.state.findings) - errors} warnings. "
            "The acceptance criteria are measured, never ticked by hand "
            "(`python -m generator specs board` prints the same board)."
        )
        title = navigation.words(config.theme.get("language"))["board"]
        content = f"---\ntitle: {title}\nkind: board\n---\n\n" + format_board_markdown(
            board, intro=intro
        ).replace("# Spec board", f"# {title}", 1)
        page = File.generated(config, BOARD_PAGE, content=content)
        if config.nav is not None:
            page.inclusion = InclusionLevel.NOT_IN_NAV
        files.append(page)
        return BOARD_PAGE

    def _tag_pages(self, files: Files, config: MkDocsConfig) -> list[str]:
        """``tags/index.md`` listing every tag, and ``tags/<slug>.md`` per tag (not in the nav).

        The per-tag pages are left out of the search index: they only repeat the titles of the
        pages they list (``tags/`` itself is searchable), and indexing them is build time spent
        on every tag.
        """
        tags: dict[str, str] = {}
        for page in self.state.pages.values():
            for tag in page.meta.get("tags") or ():
                if isinstance(tag, str | int | float) and str(tag).strip():
                    tags.setdefault(github_slug(str(tag)) or "tag", str(tag))
        if not tags or files.get_file_from_path("tags/index.md") is not None:
            return []
        lang = config.theme.get("language")
        title = navigation.words(lang)["tags"]
        index = File.generated(
            config,
            "tags/index.md",
            content=(
                f"---\ntitle: {title}\nkind: tags\n---\n\n# {title}\n\n<!-- material/tags -->\n"
            ),
        )
        files.append(index)
        for slug, tag in sorted(tags.items()):
            name = tag.replace('"', "'")
            page = File.generated(
                config,
                f"tags/{slug}.md",
                content=(
                    f'---\ntitle: "{title}: {name}"\nkind: tags\nsearch: {{exclude: true}}\n'
                    f"---\n\n# {title}: {name}\n\n"
                    f'<!-- material/tags {{ include: ["{name}"] }} -->\n'
                ),
            )
            page.inclusion = InclusionLevel.NOT_IN_NAV
            files.append(page)
        return ["tags/index.md"]

    # -- pages

    def on_page_markdown(
        self, markdown: str, *, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        rel = page.file.src_uri
        if page.meta.get("status") not in navigation.BANNER_STATUSES:
            # Material marks a page's `status` in the nav; only unfinished pages deserve one.
            page.meta.pop("status", None)
        source = self.state.pages.get(rel)
        if source is None or source.text is None:
            return markdown
        if self.config.code_links:
            markdown = self._link_code(markdown, source)
        curriculum = self.state.curriculum
        if self.config.navigation and curriculum is not None:
            markdown = decorate(markdown, rel, curriculum)
        return markdown

    def _link_code(self, markdown: str, source: Page) -> str:
        refs = self.state.refs_by_page.get(source.display)
        if not refs or self.verifier is None:
            return markdown
        text = source.text or ""
        if not text.endswith(markdown):
            log.debug("%s: rendered text differs from the source; code refs not linked", source.rel)
            return markdown
        line_offset = text.count("\n", 0, len(text) - len(markdown))
        links = plan_links(scan(markdown), refs, self.verifier.manifest.upstreams, line_offset)
        marked, self.state.links[source.rel] = mark_links(markdown, links)
        return marked

    def on_page_content(
        self, html: str, *, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        links = self.state.links.pop(page.file.src_uri, None)
        return unmark_links(html, links) if links else html


def decorate(markdown: str, rel: str, curriculum: Curriculum) -> str:
    """The page with its generated lists, banner, prerequisites and path navigation."""
    info = curriculum.pages.get(rel)
    lang = info.lang if info is not None else None
    if navigation.PATHS_MARKER in markdown:
        markdown = markdown.replace(
            navigation.PATHS_MARKER, navigation.paths_list(curriculum, rel, lang)
        )
    if navigation.LEVELS_MARKER in markdown:
        markdown = markdown.replace(
            navigation.LEVELS_MARKER, navigation.levels_list(curriculum, rel, lang)
        )
    if info is not None and info.index_of and info.index_of in curriculum.paths:
        table = navigation.path_pages_table(curriculum, curriculum.paths[info.index_of], rel, lang)
        if navigation.PATH_PAGES_MARKER in markdown:
            markdown = markdown.replace(navigation.PATH_PAGES_MARKER, table)
        else:
            heading = navigation.words(lang)["pages-in-path"]
            markdown = markdown.rstrip("\n") + f"\n\n## {heading}\n\n{table}"
    header = navigation.page_header(curriculum, rel)
    footer = navigation.page_footer(curriculum, rel)
    if header:
        markdown = _after_title(markdown, header)
    if footer:
        markdown = markdown.rstrip("\n") + "\n\n" + footer
    return markdown


_TITLE = re.compile(r"\A(?:[ \t]*\r?\n)*#[ \t]+[^\n]*\n")


def _after_title(markdown: str, block: str) -> str:
    """Insert ``block`` right after the page's leading ``# Title``, or at the top."""
    match = _TITLE.match(markdown)
    cut = match.end() if match else 0
    return markdown[:cut] + "\n" + block + "\n" + markdown[cut:]


def format_finding(finding: Finding) -> str:
    """One finding as the verifier's text report prints it (`generator.report.format_text`)."""
    text = (
        f"{finding.page}:{finding.line}:{finding.column}: "
        f"{finding.severity}[{finding.check}] {finding.message}"
    )
    if finding.suggestion:
        text += f"\n  = help: {finding.suggestion}"
    return text


def _read_pages(page_files: list[PageFile], verifier: Verifier | None) -> dict[str, Page]:
    """Each page by ``rel``: the verifier's parsed page when it just read it, else read here.

    Taking the pages the verifier parsed saves reading and parsing every page twice per build;
    a page it did not read (or read under another display path) is read here.
    """
    pages: dict[str, Page] = {}
    for page_file in page_files:
        page = verifier.parsed_page(page_file.rel) if verifier is not None else None
        if page is None or page.display != page_file.display:
            page = parse_page(
                page_file.source.read_bytes(), page_file.source, page_file.display, page_file.rel
            )
        pages[page.rel] = page
    return pages


def _unique_sorted(findings: Any) -> list[Finding]:
    seen: set[tuple[Any, ...]] = set()
    unique = []
    for finding in findings:
        key = (finding.page, finding.line, finding.column, finding.check, finding.message)
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    unique.sort(key=Finding.sort_key)
    return unique


def _display_prefix(docs_dir: Path, root: Path) -> str:
    """``docs/``: how findings name pages, relative to the directory of mkdocs.yml."""
    try:
        relative = docs_dir.relative_to(root).as_posix()
    except ValueError:
        relative = docs_dir.as_posix()
    return "" if relative in ("", ".") else posixpath.join(relative, "")

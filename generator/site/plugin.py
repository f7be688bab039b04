"""The ``knowledge-base`` MkDocs plugin: verify before build, pinned code links, learning paths.

One `Verifier` per MkDocs process (``mkdocs serve`` rebuilds reuse it and its open clones).

In ``on_config``, the Markdown extensions the site depends on (GitHub's anchors, and what renders
pages written for GitHub as GitHub does) are added where mkdocs.yml lacks them
(`markdown_config`).

The verification (`Verification`) starts in ``on_pre_build``, before MkDocs cleans the site
directory: every page is verified with the same core as ``scripts/verify_code_refs.py``, the
code links of each page are planned, the learning-path checks (`generator.kb.paths`) and the
site checks (`pagechecks`) run, and in a governed knowledge base (``specs/``) the spec board
(`generator.verification.board`) is computed from that report and curriculum. A one-off
``mkdocs build`` runs it in a forked child process (`background`), beside MkDocs' own reading
of the pages; ``on_files`` starts it again if the pages MkDocs and the other plugins settled on
differ. Its findings are logged in ``on_env``, once MkDocs has read every page and before
anything is written, in the verifier's text format (``docs/x.md:12:7: error[check] message``):
warnings through MkDocs' logger, so ``--strict`` fails on them; errors fail every
``mkdocs build``, strict or not, because a page with an error must not be published.
``mkdocs serve`` logs them and keeps serving whatever they are, strict or not, and shows them on
the pages (`live`: a mark on each broken reference, a banner listing the page's findings);
``on_serve`` watches the manifest, the specs and the theme's overrides too, so an edit of any of
them rebuilds.

In ``on_files``: the nav is computed from frontmatter (unless mkdocs.yml has a hand-written
``nav:``), archived pages leave it; when a page draws a Mermaid diagram, the pinned Mermaid
(`generator.site.mermaid`) is copied into the site, so no page requests anything from a CDN;
the tag index is generated for the tags plugin, and ``board.md`` for the board.

Per page, in ``on_page_markdown``: code references are marked for links to the pinned upstream
lines (`codelinks`). In ``on_page_content`` the marks are taken out of the HTML, which the
search plugin then indexes; after it, in ``on_page_context``, the links are made, the generated
lists filled in at their markers, and the banner, prerequisites and path navigation added
(`Additions`, `navigation`). The Markdown sources are never written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import importlib.resources
import json
import logging
import os
import posixpath
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from mkdocs.config import config_options as options
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel, get_files
from mkdocs.structure.pages import Page as MkDocsPage
from mkdocs.utils.templates import TemplateContext

from generator.files import inside, link_loops
from generator.kb.governed import is_governed
from generator.kb.pages import (
    Page,
    PageUnreadable,
    load_page,
    parse_page,
    read_page_bytes,
)
from generator.kb.paths import Curriculum, as_list, build_curriculum
from generator.kb.specs import load_governance
from generator.model import Finding, ResolvedRef, Severity, Upstream, printable
from generator.refs.extract import scan
from generator.refs.resolve import page_context
from generator.site import live, navigation
from generator.site.background import Background, BackgroundFailed
from generator.site.cards import CardLimits, CardMaker, prepare_python_lexer
from generator.site.codelinks import (
    PLACEHOLDERS,
    CodeLink,
    LinkSpan,
    commit_url,
    mark_links,
    pattern_problem,
    plan_linked_refs,
    relocate_spans,
    strip_marks,
    wrap_links,
)
from generator.site.markdown_config import MarkdownConfigError, configure_markdown
from generator.site.mermaid import PINNED as PINNED_MERMAID
from generator.site.mermaid import MermaidUnavailable, pinned_mermaid, uses_mermaid
from generator.site.pagechecks import frontmatter_missing, mermaid_findings
from generator.site.rebuilds import RebuildMemo
from generator.site.rendered import ReusedRendering
from generator.site.trust import Tally, anchor_held, page_trust, tally, trust_html
from generator.upstream.manifest import ConfigError, Manifest, load_manifest
from generator.verification.cache import VerifyCache
from generator.verification.pipeline import PageFile, Report, ResolvedRefs, Verifier
from generator.verification.report import plural

log = logging.getLogger("mkdocs.plugins.knowledge_base")

MERMAID_SITE_PATH = "assets/javascripts/mermaid.min.js"
BOARD_PAGE = "board.md"


class KnowledgeBaseConfig(Config):
    manifest = options.Type(str, default="upstreams.yaml")
    """The upstream manifest, relative to mkdocs.yml."""
    verify = options.Type(bool, default=True)
    ignore = options.ListOfItems(options.Type(str), default=[])
    """Check ids not to report (as ``--ignore`` does)."""
    code_links = options.Type(bool, default=True)
    cache = options.Type(bool, default=True)
    """Take pages unchanged since the last verification from the verification cache, as
    ``verify`` does without ``--no-cache`` (`generator.verification.cache`)."""
    navigation = options.Type(bool, default=True)
    tags = options.Type(bool, default=True)
    """Generate ``tags/index.md``, every tag with its pages (a listing of Material's tags
    plugin)."""
    board = options.Type(bool, default=True)
    """Generate the spec board, ``board.md``, from this build's verification (governed
    knowledge bases only: a ``specs/`` or ``.lean-spec/`` directory)."""
    mermaid = options.Optional(options.Type(str))
    """mermaid.min.js to serve from the site, relative to mkdocs.yml (default: the pinned
    release, fetched once per user, `generator.site.mermaid`); an empty string turns this off."""
    github_markdown = options.Type(bool, default=True)
    """Add the Markdown extensions that render pages written for GitHub as GitHub does, where
    mkdocs.yml lacks them (`generator.site.markdown_config`)."""
    code_cards = options.Type(bool, default=True)
    """Show the cited code in a card on hover, focus or a click of a code link (`cards`)."""
    card_lines = options.Type(int, default=CardLimits.lines)
    """Most lines of code (or outline entries) a card embeds."""
    card_page_bytes = options.Type(int, default=CardLimits.page_bytes)
    """Most bytes of cards a page embeds; the references past it keep their plain link."""
    trust_line = options.Type(bool, default=True)
    """Say under each page's title what its references were verified against (`trust`)."""
    reuse_rendered_pages = options.Type(bool, default=True)
    """``mkdocs serve``: keep the HTML of the pages an edit did not change, instead of
    converting their Markdown again (`rendered`)."""

    def validate(self) -> tuple[list[Any], list[Any]]:
        failed, warnings = super().validate()
        for key in ("card_lines", "card_page_bytes"):
            value = self.get(key)
            if isinstance(value, int) and value < 1:
                failed.append((key, ValueError(f"must be a positive number, not {value}")))
        return failed, warnings


@dataclass
class BuildState:
    """What one build learned in ``on_files`` and uses for every page."""

    pages: dict[str, Page] = field(default_factory=dict)
    curriculum: Curriculum | None = None
    board: str | None = None
    """The generated board page's path (``board.md``), when there is one."""
    links: dict[str, list[CodeLink | live.FindingMark]] = field(default_factory=dict)
    """Code links (and, serving, marks of broken references) marked in a page's Markdown,
    found in its HTML (``on_page_content``)."""
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    """``mkdocs serve`` only: each page's findings by display path, for its banner."""
    elsewhere: list[Finding] = field(default_factory=list)
    """``mkdocs serve`` only: findings on files that are not pages, for the home page."""
    prefix: str = ""
    """How findings name the pages: ``docs/``."""
    generated: dict[str, Generated] = field(default_factory=dict)
    """Each page's lists and boxes, made in ``on_files`` while the verification runs."""
    additions: dict[str, Additions] = field(default_factory=dict)
    """What a page gets once it is indexed for search (``on_page_context``)."""
    cards: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each page's code cards and trust line, in HTML, from its planned links."""


@dataclass
class Generated:
    """A page's generated lists (by marker) and boxes, in HTML."""

    blocks: dict[str, str]
    header: str
    footer: str


@dataclass(frozen=True)
class VerificationInput:
    """What a verification was started for: if MkDocs' files differ, it is started again."""

    docs_dir: Path
    prefix: str
    page_files: tuple[PageFile, ...]
    board: bool
    """Whether the build generates the spec board (from this verification)."""
    language: str | None
    """The theme's language, for the board's title."""


@dataclass(frozen=True)
class _Plan:
    """What `KnowledgeBasePlugin._plan` makes of one page (kept between `mkdocs serve`'s
    rebuilds)."""

    links: list[CodeLink]
    marks: list[live.FindingMark]
    templates: str
    tally: Tally | None
    """What its trust line counts."""


@dataclass(frozen=True)
class PlannedLinks:
    """The code links of one page, planned on its whole text (frontmatter included)."""

    rel: str
    text_length: int
    links: list[CodeLink]
    marks: list[live.FindingMark] = field(default_factory=list)
    """``mkdocs serve`` only: the page's broken references, marked (`live`)."""
    cards: str = ""
    """The ``<template>`` elements of the links' code cards (`cards`)."""
    trust: str = ""
    """The trust line, in HTML (`trust`)."""


@dataclass
class Outcome:
    """What the verification found: logged (and failing the build) before anything is written."""

    pages: int = 0
    refs: int = 0
    links: int = 0
    findings: list[Finding] = field(default_factory=list)
    board: str | None = None
    """The board page's Markdown, when the build generates it."""


class Verification:
    """One build's verification, running beside MkDocs' reading of the pages (`Background`).

    It yields each page's planned code links, in MkDocs' page order, as soon as every page is
    verified (a link is only made to a reference without an error), then the `Outcome`. The
    pages ask for their links as MkDocs reads them; the outcome is needed by ``on_env``.
    """

    def __init__(self, source: VerificationInput, items: Background[PlannedLinks | Outcome]):
        self.source = source
        self._items = items
        self._links: dict[str, PlannedLinks] = {}
        self._outcome: Outcome | None = None

    def links(self, rel: str) -> PlannedLinks | None:
        while rel not in self._links and self._outcome is None:
            self._take()
        return self._links.pop(rel, None)

    def outcome(self) -> Outcome:
        while self._outcome is None:
            self._take()
        return self._outcome

    def failed(self) -> Outcome | None:
        """The outcome, when it came before the pages' links: the build fails on its errors."""
        if (
            self._outcome is not None
            and not self._links
            and any(f.severity is Severity.ERROR for f in self._outcome.findings)
        ):
            return self._outcome
        return None

    def close(self) -> None:
        self._items.close()

    def _take(self) -> None:
        try:
            item = next(self._items)
        except StopIteration:
            raise PluginError("knowledge-base: the verification ended without a result") from None
        except BackgroundFailed as error:
            raise PluginError(f"knowledge-base: the verification failed: {error}") from None
        if isinstance(item, Outcome):
            self._outcome = item
        else:
            self._links[item.rel] = item


@dataclass
class Additions:
    """What a page gets after the search plugin indexed it: code links, lists and boxes.

    None of it belongs in the index: the links' text is there either way (the index keeps text,
    not tags), and the lists and boxes repeat other pages' titles, which would make a page a
    search hit for every page it lists. Added afterwards, they also cost the index's HTML parser
    nothing, which on large sites was a good part of what they cost.
    """

    html: str
    """The page's HTML as ``on_page_content`` left it; the spans are offsets into it."""
    spans: list[LinkSpan]
    generated: Generated
    cards: str = ""
    """The code cards' templates, after the page's content."""
    trust: str = ""
    """The trust line, under the page's title."""

    def apply(self, html: str) -> str:
        spans = self.spans
        if spans and html != self.html:
            # Another plugin edited the page in between (a tags listing, say).
            spans = relocate_spans(spans, self.html, html)
        html = navigation.fill_markers(wrap_links(html, spans), self.generated.blocks)
        header, footer = self.generated.header, self.generated.footer
        header = f"{self.trust}\n{header}" if self.trust else header
        if header:
            title = _HTML_TITLE.match(html)
            cut = title.end() if title else 0
            html = f"{html[:cut]}{header}\n{html[cut:]}"
        if footer:
            html = f"{html.rstrip()}\n{footer}"
        if self.cards:
            html = f"{html.rstrip()}\n{self.cards}"
        return html


_HTML_TITLE = re.compile(r"\A\s*<h1\b[^>]*>.*?</h1>\n?", re.DOTALL)


MAX_LINKED_REFS = 2000
"""Most code references a page links: more is a generated dump, not a page to read, and linking
each costs MkDocs a link to resolve and the page a mark to place."""


class KnowledgeBasePlugin(BasePlugin[KnowledgeBaseConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command = "build"
        self.verifier: Verifier | None = None
        self._manifest_key: tuple[Path, str] | None = None
        self.verification: Verification | None = None
        self.state = BuildState()
        self.root = Path.cwd()
        self.manifest_problem: str | None = None
        """``mkdocs serve`` only: why the manifest cannot be used (the pages are then served
        unverified, with this on each, until it is fixed)."""
        self._memo = RebuildMemo(keep=False)
        """``mkdocs serve`` only: each page's work of the last build, with what it was made
        from; a rebuild does again only the work on the pages whose text or verdicts changed."""
        self._rendering = ReusedRendering(self._memo)
        self._failed: Outcome | None = None
        """A one-off build's verification with errors, known while MkDocs reads the pages: the
        rest are read as empty, and the build fails in ``on_env``, before any is written."""

    # -- lifecycle

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command = command
        self._memo = RebuildMemo(keep=self.serving)
        self._rendering = ReusedRendering(self._memo)

    @property
    def serving(self) -> bool:
        """``mkdocs serve``: findings are shown on the pages and never stop the server."""
        return self.command == "serve"

    def on_serve(self, server: Any, *, config: MkDocsConfig, builder: Any) -> Any:
        """Rebuild on what the verification reads besides the pages: the manifest, the specs and
        their templates, and the theme's overrides (``_verifier`` re-reads a changed manifest)."""
        manifest = self.root / self.config.manifest
        for path in live.watched_paths(self.root, manifest, config.theme.custom_dir):
            server.watch(str(path))
        return server

    def on_shutdown(self) -> None:
        self._stop_verification()
        if self.verifier is not None:
            self.verifier.close()
            self.verifier = None

    def on_build_error(self, *, error: Exception) -> None:
        self._stop_verification()

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path or "mkdocs.yml").resolve().parent
        try:
            configure_markdown(config, github_markdown=self.config.github_markdown)
        except MarkdownConfigError as error:
            raise PluginError(f"knowledge-base: {error}") from None
        return config

    # -- verification, beside MkDocs' own work

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        """A one-off build: start verifying the pages MkDocs is about to find, while it cleans
        the site directory.

        ``on_files`` checks that MkDocs (and the other plugins) ended up with the same pages, and
        starts again if not.
        """
        loops = link_loops(Path(config.docs_dir))
        if loops:
            # MkDocs follows links to directories while it finds the pages, without end on such
            # a link (until the system's limit, level after level, each a copy of the docs).
            raise PluginError(
                "knowledge-base: "
                + ", ".join(f"'{printable(link)}'" for link in loops)
                + " links to a directory that holds it: MkDocs would find every page again "
                "through it, level after level; remove the link or point it elsewhere"
            )
        self._stop_verification()
        self._memo.next_build()
        self._rendering.enabled = self._memo.keep and self.config.reuse_rendered_pages
        self.manifest_problem = None
        if self.serving and live.exempt_from_strict(logging.getLogger("mkdocs")):
            log.info(
                "knowledge-base: serving whatever the findings (strict mode applies to "
                "`mkdocs build`); they are shown on the pages"
            )
        if self.config.code_links and self.config.code_cards:
            prepare_python_lexer()
        if (self.config.verify or self.config.code_links) and self.command == "build":
            # Started now, a one-off build's verification runs in a child process while MkDocs
            # cleans the site directory; serving, it runs in this process, as the pages ask for
            # it, and starts in on_files. MkDocs walks the docs again right after and says what
            # it has to say then.
            with _silenced(logging.getLogger("mkdocs.structure.files")):
                files = get_files(config)
            self.verification = self._start_verification(self._verification_input(files, config))

    def _verification_input(self, files: Files, config: MkDocsConfig) -> VerificationInput:
        docs_dir = Path(config.docs_dir).resolve()
        prefix = _display_prefix(docs_dir, self.root)
        page_files = tuple(
            PageFile(Path(f.abs_src_path), f"{prefix}{f.src_uri}", f.src_uri)  # type: ignore[arg-type]
            for f in files.documentation_pages()
            if not f.generated_by and f.abs_src_path
        )
        verifier = (
            self._verifier(docs_dir) if self.config.verify or self.config.code_links else None
        )
        root = verifier.manifest.root if verifier is not None else self.root
        board = (
            self.config.board and files.get_file_from_path(BOARD_PAGE) is None and is_governed(root)
        )
        return VerificationInput(docs_dir, prefix, page_files, board, config.theme.get("language"))

    def _start_verification(self, source: VerificationInput) -> Verification:
        verifier = self.verifier if self.config.verify or self.config.code_links else None
        # Only a one-off build runs it in a child process: `mkdocs serve` keeps the verifier
        # (and its open clones and read blobs) in this process from one rebuild to the next.
        fork = verifier is not None and self.command == "build"
        items = Background(lambda: self._verify(source, verifier), fork=fork)
        log.debug(
            "knowledge-base: verifying %s",
            "in a child process" if items.forked else "in this process",
        )
        return Verification(source, items)

    def _stop_verification(self) -> None:
        if self.verification is not None:
            self.verification.close()
            self.verification = None

    def _verify(
        self, source: VerificationInput, verifier: Verifier | None
    ) -> Iterator[PlannedLinks | Outcome]:
        """Verify the pages and plan their code links; the findings and board come last, or
        alone when a one-off build is to fail on them."""
        page_files = list(source.page_files)
        try:
            report = verifier.verify(page_files) if verifier is not None else Report()
        except ConfigError as error:  # a pin not in its clone, say
            if not self.serving:  # (mkdocs says a PluginError in a line; anything else it dumps)
                raise PluginError(f"knowledge-base: {error.render()}") from None
            self.manifest_problem = error.render()
            verifier, report = None, Report()
        pages = _read_pages(page_files, verifier, source.docs_dir, self._memo)
        findings: list[Finding] = []
        curriculum = self._curriculum(pages)
        if self.config.verify:
            findings.extend(report.findings)
            findings.extend(curriculum.findings)
            for page in pages.values():
                missing = frontmatter_missing(page)
                if missing is not None:
                    findings.append(missing)
                findings.extend(
                    self._memo.get("mermaid", page.rel, (page,), partial(mermaid_findings, page))
                )
        ignored = set(self.config.ignore)
        findings = _unique_sorted(f for f in findings if f.check not in ignored)
        outcome = Outcome(report.pages, len(report.refs), report.links, findings)
        if source.board:
            outcome.board = self._board_markdown(
                source, report, pages, curriculum, outcome, verifier
            )
        if self.command == "build" and any(f.severity is Severity.ERROR for f in findings):
            # The build fails on these: no page will be written, so none needs its links (the
            # pages ask for them first, and stop the build on seeing this outcome instead).
            yield outcome
            return
        if (self.config.code_links or self.serving) and verifier is not None:
            from generator.verification.board import BehindCounter

            assert isinstance(report.refs, ResolvedRefs), "a verifier's report"
            report_refs = report.refs

            upstreams = verifier.manifest.upstreams
            cards = CardMaker(
                upstreams,
                verifier.resolver.store,
                CardLimits(self.config.card_lines, self.config.card_page_bytes),
            )
            behind = BehindCounter(verifier.manifest)
            branches = {name: upstream.branch for name, upstream in upstreams.items()}

            def commit_page(name: str, commit: str) -> str | None:
                upstream = upstreams.get(name)
                return commit_url(upstream, commit) if upstream is not None else None

            for page in pages.values():
                info = curriculum.pages.get(page.rel)
                lang = info.lang if info is not None else None
                inputs = (
                    page.text,
                    report_refs.page_key(page.display),
                    lang,
                    self._manifest_key,
                    *self._plan_options(),
                )
                make = partial(self._page_plan, page, report_refs, lang, upstreams, cards)
                refs, plan = self._memo.get("plan", page.rel, inputs, make)
                if len(refs) > MAX_LINKED_REFS:
                    log.warning(
                        "knowledge-base: %s has %d code references, more than the %d a page "
                        "links: they are shown as text",
                        printable(page.display),
                        len(refs),
                        MAX_LINKED_REFS,
                    )
                if plan is None or page.text is None:
                    yield PlannedLinks(page.rel, len(page.text or ""), [])
                    continue
                trust = (
                    page_trust(
                        plan.tally,
                        branches,
                        behind.place,
                        page_context(page.display, page.meta, verifier.manifest).own_pins(),
                        commit_page,
                    )
                    if self.config.trust_line and plan.tally is not None
                    else None
                )
                yield PlannedLinks(
                    page.rel,
                    len(page.text),
                    plan.links,
                    plan.marks,
                    plan.templates,
                    trust_html(trust, lang) if trust is not None else "",
                )
        yield outcome

    def _plan_options(self) -> tuple[Any, ...]:
        """The options a page's plan depends on (a rebuild may follow an edit of mkdocs.yml)."""
        config = self.config
        return (
            config.code_links,
            config.code_cards,
            config.card_lines,
            config.card_page_bytes,
            self.serving,
        )

    def _page_plan(
        self,
        page: Page,
        report_refs: ResolvedRefs,
        lang: str | None,
        upstreams: dict[str, Upstream],
        cards: CardMaker,
    ) -> tuple[list[ResolvedRef], _Plan | None]:
        """The page's references, and its plan when it has any to link (not too many)."""
        refs = report_refs.of_page(page.display)
        if not refs or len(refs) > MAX_LINKED_REFS or page.text is None:
            return refs, None
        return refs, self._plan(page, refs, lang, upstreams, cards)

    def _curriculum(self, pages: dict[str, Page]) -> Curriculum:
        """The curriculum of ``pages`` (for the nav, and in the verification's findings): the
        same object while no page's frontmatter changes (`build_curriculum`)."""
        return build_curriculum(list(pages.values()))

    def _plan(
        self,
        page: Page,
        refs: list[ResolvedRef],
        lang: str | None,
        upstreams: dict[str, Upstream],
        cards: CardMaker,
    ) -> _Plan:
        """Where the page's code links go, their cards and, serving, its broken references'
        marks."""
        assert page.text is not None
        layout = scan(page.text, page.body_start)
        pairs = (
            plan_linked_refs(layout, refs, upstreams, cards.symbol_lines)
            if self.config.code_links
            else []
        )
        pairs = anchor_held(pairs)
        templates = ""
        if self.config.code_cards:
            made = cards.page_cards(pairs, lang)
            links, templates = made.links, made.templates
            if made.skipped:
                log.info(
                    "knowledge-base: %s: %d code cards left out, past card_page_bytes "
                    "(%d); their references keep the plain link",
                    printable(page.display),
                    made.skipped,
                    self.config.card_page_bytes,
                )
        else:
            links = [link for link, _ in pairs]
        marks: list[live.FindingMark] = []
        if self.serving:
            links, marks = live.plan_marks(layout, refs, links)
        # Kept between rebuilds: the links as written, not the pairs they were planned from
        # (10,000 objects more at 500 pages for the collector to walk on every rebuild).
        return _Plan(links, marks, templates, tally(refs, pairs))

    # -- files: curriculum, nav, generated files

    @event_priority(-50)  # after other plugins added or removed files
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        self.state = BuildState()
        _drop_unsafe_assets(files, Path(config.docs_dir))
        source = self._verification_input(files, config)
        if self.verification is None or self.verification.source != source:
            self._stop_verification()
            self.verification = self._start_verification(source)
        self.state.pages = _read_pages(list(source.page_files), None, source.docs_dir, self._memo)
        curriculum = self._curriculum(self.state.pages)
        self.state.curriculum = curriculum

        sources = [f for f in files.documentation_pages() if not f.generated_by and f.abs_src_path]
        for file in sources:
            info = curriculum.pages.get(file.src_uri)
            if info is not None and info.archived:
                file.inclusion = InclusionLevel.NOT_IN_NAV
        tag_pages = self._tag_pages(files, config) if self.config.tags else []
        if source.board:
            # Its Markdown comes from the verification, before MkDocs reads it (on_pre_page).
            board = File.generated(config, BOARD_PAGE, content="")
            if config.nav is not None:
                board.inclusion = InclusionLevel.NOT_IN_NAV
            files.append(board)
            self.state.board = BOARD_PAGE
        self._add_mermaid(files, config)
        if (self.config.code_links and self.config.code_cards) or self.config.trust_line:
            _add_card_assets(files, config)
        home = self._home_page(files, config) if self.config.navigation else None
        if self.config.navigation and config.nav is None:
            rels = [f.src_uri for f in sources if f.inclusion.is_in_nav()]
            rels += [home] if home else []
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
        if self.config.navigation:
            # Made now, while the verification runs, rather than while MkDocs reads the pages.
            self.state.generated = self._generated(files, curriculum)
        if self.command == "build":
            # What on_files read (pages, curriculum) lives until the build ends; keep the
            # collector from walking it again on every full collection of a long build.
            # One-off builds only: `mkdocs serve` rebuilds and must be able to free it.
            gc.freeze()
        return files

    def _home_page(self, files: Files, config: MkDocsConfig) -> str | None:
        """``index.md``, listing the learning paths and the pages by level, when the docs have
        no home page of their own (``index.md`` or ``README.md``): without one, the site's
        root, where the header's logo leads, is a 404."""
        if any(files.get_file_from_path(name) for name in ("index.md", "README.md")):
            return None
        words = navigation.words(config.theme.get("language"))
        title = str(config.site_name or "").strip() or "Home"
        content = (
            f"---\ntitle: {json.dumps(title, ensure_ascii=False)}\n---\n\n# {title}\n\n"
            f"## {words['paths']}\n\n{navigation.PATHS_MARKER}\n\n"
            f"## {words['levels']}\n\n{navigation.LEVELS_MARKER}\n"
        )
        files.append(File.generated(config, "index.md", content=content))
        docs = Path(config.docs_dir)
        self.state.pages["index.md"] = parse_page(
            content.encode("utf-8"), docs / "index.md", "index.md", "index.md"
        )
        return "index.md"

    def _generated(self, files: Files, curriculum: Curriculum) -> dict[str, Generated]:
        # What a page's boxes link to is found by URL: the same URLs as in the last build are
        # its very tuple, which each page compares at once.
        urls = tuple((file.src_uri, file.url) for file in files)
        urls = self._memo.kept_or("urls", "", (urls,), urls)
        generated = {}
        for rel, page in self.state.pages.items():
            file = files.get_file_from_path(rel)
            if file is None:
                continue

            def href(target: str, file: File = file) -> str | None:
                linked = files.get_file_from_path(target)
                return linked.url_relative_to(file) if linked is not None else None

            def make(
                page: Page = page, rel: str = rel, href: Callable[[str], str | None] = href
            ) -> Generated:
                return Generated(
                    navigation.marker_blocks(curriculum, rel, page.text or "", href),
                    navigation.page_header(curriculum, rel, href),
                    navigation.page_footer(curriculum, rel, href),
                )

            generated[rel] = self._memo.get("generated", rel, (curriculum, page.text, urls), make)
        return generated

    def on_page_read_source(self, page: MkDocsPage, *, config: MkDocsConfig) -> str | None:
        """The page's Markdown, read as the verifier reads it: a page that is a FIFO, a device,
        a link out of the docs or too large is not read (MkDocs would wait or read without end),
        and one that is not UTF-8 is decoded with replacements (MkDocs would stop with a
        traceback). Either is an error of the verification, which fails the build in ``on_env``
        before any page is written."""
        source = page.file.abs_src_path
        if page.file.generated_by or not source:
            return None
        _guard_render(page, self._rendering)
        rel = page.file.src_uri
        read = self.state.pages.get(rel) or load_page(Path(source), rel, rel, Path(config.docs_dir))
        if read.text is None:  # not UTF-8 (its bytes), or not read at all (none)
            return read.raw.decode("utf-8-sig", errors="replace")
        problems = {problem.check for problem in read.problems}
        if "page-too-deep" in problems:
            return ""  # the verification fails the build on it; rendering it would not end well
        if "frontmatter-invalid" in problems:
            # Frontmatter the verifier refused (too deep, aliases expanding without end, tags
            # on the wrong values) is not given to MkDocs' own YAML reading either.
            return read.body if read.body_start else read.text.split("\n", 1)[-1]
        return read.text

    def on_pre_page(self, page: MkDocsPage, *, config: MkDocsConfig, files: Files) -> MkDocsPage:
        board = self.state.board
        if board is not None and page.file.src_uri == board and self.verification is not None:
            page.file.content_string = self.verification.outcome().board or ""
        return page

    @event_priority(150)  # before other plugins' work: the build may stop here
    def on_env(self, env: Any, *, config: MkDocsConfig, files: Files) -> Any:
        """Log the findings, and fail the build on an error, before a page is written."""
        if self._failed is not None:
            failed, self._failed = self._failed, None
            self._report(failed)  # (raises: the build fails)
        if self.verification is not None:
            outcome = self.verification.outcome()
            self._stop_verification()
            self._report(outcome)
            if self.serving:
                self.state.findings = live.findings_by_page(outcome.findings)
                docs_dir = Path(config.docs_dir).resolve()
                self.state.prefix = _display_prefix(docs_dir, self.root)
                pages = {f"{self.state.prefix}{f.src_uri}" for f in files.documentation_pages()}
                # Findings on what is not a page (the manifest, a spec) go on the home page.
                self.state.elsewhere = [f for f in outcome.findings if f.page not in pages]
        if self.manifest_problem is not None:
            log.error(
                "knowledge-base: %s\n  the pages are served unverified until it is fixed",
                self.manifest_problem,
            )
        return env

    def _verifier(self, docs_dir: Path) -> Verifier | None:
        manifest_path = (self.root / self.config.manifest).resolve()
        # By content, not modification time: `mkdocs serve` rebuilds on an edit of the
        # manifest, which may come within the file system's timestamp resolution.
        try:
            key = (manifest_path, hashlib.blake2b(manifest_path.read_bytes()).hexdigest())
        except OSError:
            key = (manifest_path, "")
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
                    if not upstream.web_url:
                        # A local url says nothing a reader can open: without this, the site
                        # would leave its references plain with no word why.
                        log.info(
                            "knowledge-base: upstream '%s' has no web_url: its references are "
                            "checked and show their code cards, but link to no forge (add "
                            "web_url: https://github.com/OWNER/REPO to %s)",
                            printable(upstream.name),
                            manifest.display_path(),
                        )
                cache = None
                if self.config.cache:
                    cache = VerifyCache.for_docs(manifest, docs_dir)
                    if cache is not None:
                        cache.load()
                self.verifier = Verifier(manifest, docs_dir, self.config.ignore, cache)
            except ConfigError as error:
                if not self.serving:
                    raise PluginError(f"knowledge-base: {error.render()}") from None
                # Serving: an edit of the manifest went wrong; say so on every page and keep
                # serving them, so that the next edit can put it right.
                self.verifier, self._manifest_key = None, None
                self.manifest_problem = error.render()
                return None
            self._manifest_key = key
        return self.verifier

    def _report(self, outcome: Outcome) -> None:
        for finding in outcome.findings:
            level = logging.ERROR if finding.severity is Severity.ERROR else logging.WARNING
            log.log(level, format_finding(finding))
        errors = sum(1 for f in outcome.findings if f.severity is Severity.ERROR)
        warnings = len(outcome.findings) - errors
        log.info(
            "knowledge-base: checked %s, %s and %s: %s, %s",
            plural(outcome.pages, "page"),
            plural(outcome.refs, "code reference"),
            plural(outcome.links, "link"),
            plural(errors, "error"),
            plural(warnings, "warning"),
        )
        if errors and self.command == "build":
            raise PluginError(
                f"knowledge-base: {errors} error(s) found by the verifier; "
                "the site is not built until they are fixed (see the findings above)"
            )

    # -- generated files

    def _mermaid_source(self) -> Path | None:
        """The mermaid.min.js to serve: the ``mermaid`` option's, else the pinned release."""
        configured = self.config.mermaid
        if configured == "":
            return None
        if configured is None:
            try:
                return pinned_mermaid()
            except MermaidUnavailable as error:
                raise PluginError(
                    f"knowledge-base: a page draws a Mermaid diagram, and {error}. Build once "
                    "with the npm registry in reach (the file is then kept for every later "
                    "build), or set the plugin's option `mermaid:` to a mermaid.min.js you "
                    f"have (`npm install mermaid@{PINNED_MERMAID.version}` puts one in "
                    'node_modules/mermaid/dist/), or `mermaid: ""` to serve none'
                ) from None
        source = self.root / configured
        if not source.is_file():
            raise PluginError(
                f"knowledge-base: the plugin's option `mermaid: {configured}` names no file "
                f"({source}); correct the path, or remove the option to serve the pinned "
                f"Mermaid {PINNED_MERMAID.version}"
            )
        return source

    def _add_mermaid(self, files: Files, config: MkDocsConfig) -> None:
        """Serve Mermaid from the site when a page draws a diagram (and only then: a site
        without one never needs it)."""
        if self.config.mermaid == "" or not any(
            page.text is not None and uses_mermaid(page.text) for page in self.state.pages.values()
        ):
            return
        source = self._mermaid_source()
        if source is None:
            return
        existing = files.get_file_from_path(MERMAID_SITE_PATH)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, MERMAID_SITE_PATH, abs_src_path=str(source)))
        if MERMAID_SITE_PATH not in [str(script) for script in config.extra_javascript]:
            # Material's Mermaid integration uses a global `mermaid` when one is loaded, and
            # only otherwise fetches it from a CDN.
            config.extra_javascript.insert(0, MERMAID_SITE_PATH)

    def _board_markdown(
        self,
        source: VerificationInput,
        report: Report,
        pages: dict[str, Page],
        curriculum: Curriculum,
        outcome: Outcome,
        verifier: Verifier | None,
    ) -> str:
        """``board.md``: the spec board, from the report and curriculum this build computed.

        Nothing is verified again: the references' health and the findings come from this
        build's report, the learning paths from its curriculum.
        """
        from generator.verification.board import build_board, format_board_markdown

        manifest = verifier.manifest if verifier is not None else None
        governance = load_governance(
            manifest.root if manifest is not None else self.root,
            source.docs_dir,
            list(pages.values()),
            source.prefix,
            walk=False,
            curriculum=curriculum,
            findings=False,
        )
        board = build_board(governance, report, manifest)
        errors = sum(1 for f in outcome.findings if f.severity is Severity.ERROR)
        intro = (
            f"Computed by this build from its own verification: {report.pages} pages, "
            f"{len(report.refs)} code references and {report.links} links checked, "
            f"{errors} errors and {len(outcome.findings) - errors} warnings. "
            "The acceptance criteria are measured, never ticked by hand "
            "(`kb specs board` prints the same board)."
        )
        title = navigation.words(source.language)["board"]
        return f"---\ntitle: {title}\nkind: board\n---\n\n" + format_board_markdown(
            board, intro=intro
        ).replace("# Spec board", f"# {title}", 1)

    def _tag_pages(self, files: Files, config: MkDocsConfig) -> list[str]:
        """``tags/index.md``, listing every tag with its pages (Material's tags plugin), when
        a page has tags and the docs have no tag index of their own.

        One page for all tags: a page's tag links to its tag's section there (``tags/#slug``).
        A page per tag would only repeat that section, and cost a whole page's rendering (the
        nav included) per tag on every build and every ``mkdocs serve`` rebuild.
        """
        tagged = any(
            isinstance(tag, str | int | float) and str(tag).strip()
            for page in self.state.pages.values()
            for tag in page.meta.get("tags") or ()
        )
        if not tagged or files.get_file_from_path("tags/index.md") is not None:
            return []
        title = navigation.words(config.theme.get("language"))["tags"]
        content = f"---\ntitle: {title}\nkind: tags\n---\n\n# {title}\n\n<!-- material/tags -->\n"
        files.append(File.generated(config, "tags/index.md", content=content))
        return ["tags/index.md"]

    # -- pages

    def on_page_markdown(
        self, markdown: str, *, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        if self._failed is not None:
            return ""  # not written: the build fails in `on_env`
        rel = page.file.src_uri
        if page.meta.get("status") not in navigation.BANNER_STATUSES:
            # Material marks a page's `status` in the nav; only unfinished pages deserve one.
            page.meta.pop("status", None)
        tags = page.meta.get("tags")
        if tags is not None and not isinstance(tags, list):
            # `tags: fsdp` is one tag to the verifier (a warning) and to the spec board; Material's
            # tags plugin, which comes after, would stop the build on it.
            page.meta["tags"] = [str(tag) for tag in as_list(tags)]
        source = self.state.pages.get(rel)
        if source is None or source.text is None:
            return markdown
        if self.config.code_links or self.serving:
            markdown = self._link_code(markdown, source)
        curriculum = self.state.curriculum
        if self.config.navigation and curriculum is not None:
            markdown = decorate(markdown, rel, curriculum)
        return markdown

    def _link_code(self, markdown: str, source: Page) -> str:
        planned = self.verification.links(source.rel) if self.verification is not None else None
        failed = self.verification.failed() if self.verification is not None else None
        if failed is not None and self.command == "build":
            # Known before MkDocs renders the rest: read them as empty rather than render pages
            # (hundreds, some huge) that will not be written, and fail the build in `on_env`,
            # not here, where MkDocs would say it failed reading this page.
            self._stop_verification()
            self._failed = failed
            return ""
        if planned is not None and (planned.cards or planned.trust):
            self.state.cards[source.rel] = (planned.cards, planned.trust)
        if planned is None or not (planned.links or planned.marks):
            return markdown
        text = source.text or ""
        if len(text) != planned.text_length or not text.endswith(markdown):
            log.debug("%s: rendered text differs from the source; code refs not linked", source.rel)
            return markdown
        cut = len(text) - len(markdown)
        inputs = (cut, markdown, planned.links, planned.marks)
        make = partial(_mark_links_after, cut, markdown, planned)
        marked, self.state.links[source.rel] = self._memo.get("marks", source.rel, inputs, make)
        return marked

    def on_page_content(
        self, html: str, *, page: MkDocsPage, config: MkDocsConfig, files: Files
    ) -> str:
        rel = page.file.src_uri
        links = self.state.links.pop(rel, None)
        if links:
            make = partial(strip_marks, html, links)
            html, spans = self._memo.get("unmarked", rel, (html, links), make)
        else:
            spans = []
        generated = self.state.generated.pop(rel, None) or Generated({}, "", "")
        cards, trust = self.state.cards.pop(rel, ("", ""))
        if spans or generated.blocks or generated.header or generated.footer or cards or trust:
            self.state.additions[rel] = Additions(html, spans, generated, cards, trust)
        return html

    @event_priority(-100)  # after the search plugin indexed the page
    def on_page_context(
        self, context: TemplateContext, *, page: MkDocsPage, config: MkDocsConfig, nav: Any
    ) -> TemplateContext:
        additions = self.state.additions.pop(page.file.src_uri, None)
        if additions is not None and page.content is not None:
            inputs = (page.content, additions)
            make = partial(additions.apply, page.content)
            page.content = self._memo.get("additions", page.file.src_uri, inputs, make)
        if self.serving and page.content is not None and page.file.abs_src_path:
            display = f"{self.state.prefix}{page.file.src_uri}"
            findings = self.state.findings.get(display, [])
            if page.file.src_uri == "index.md":
                findings = [*findings, *self.state.elsewhere]
            page.content = live.banner(findings, display, self.manifest_problem) + page.content
        return context


def decorate(markdown: str, rel: str, curriculum: Curriculum) -> str:
    """The page with a section for its path's pages if it is a path's index and has no marker.

    The generated lists themselves are filled into the HTML (`navigation.fill_markers`), and the
    boxes added after it was indexed for search (`Additions`).
    """
    info = curriculum.pages.get(rel)
    if (
        info is not None
        and info.index_of
        and info.index_of in curriculum.paths
        and navigation.PATH_PAGES_MARKER not in markdown
    ):
        heading = navigation.words(info.lang)["pages-in-path"]
        markdown = markdown.rstrip("\n") + f"\n\n## {heading}\n\n{navigation.PATH_PAGES_MARKER}\n"
    return markdown


def format_finding(finding: Finding) -> str:
    """One finding as the verifier's text report prints it
    (`generator.verification.report.format_text`)."""
    text = (
        f"{printable(finding.page)}:{finding.line}:{finding.column}: "
        f"{finding.severity}[{finding.check}] {printable(finding.message)}"
    )
    if finding.suggestion:
        text += f"\n  = help: {printable(finding.suggestion)}"
    return text


CARD_ASSETS = {
    "assets/javascripts/kb-cards.js": "extra_javascript",
    "assets/stylesheets/kb-cards.css": "extra_css",
}
"""The code cards' script and the cards' and trust line's styles, served from the site."""


def _add_card_assets(files: Files, config: MkDocsConfig) -> None:
    assets = importlib.resources.files("generator.site") / "assets"
    for site_path, kind in CARD_ASSETS.items():
        existing = files.get_file_from_path(site_path)
        if existing is not None:
            files.remove(existing)
        content = (assets / posixpath.basename(site_path)).read_text("utf-8")
        files.append(File.generated(config, site_path, content=content))
        listed = config[kind]
        if site_path not in [str(item) for item in listed]:
            listed.append(site_path)


def _guard_render(page: MkDocsPage, rendering: ReusedRendering) -> None:
    """Render the page through ``rendering`` (serving, an unchanged page keeps its HTML), and
    make a page that Python-Markdown cannot render (a table row of 20,000 cells, lists nested
    a thousand deep: its recursion runs out) fail the build as an error naming the page, not as
    a traceback from inside MkDocs."""
    render = page.render

    def guarded(config: MkDocsConfig, files: Files) -> None:
        try:
            rendering.render(page, config, files, render)
        except (RecursionError, MemoryError) as error:
            raise PluginError(
                f"knowledge-base: '{printable(page.file.src_uri)}' cannot be rendered "
                f"({type(error).__name__} in the Markdown renderer): simplify its nesting or "
                "split its longest lines"
            ) from None

    page.render = guarded  # type: ignore[method-assign]


def _drop_unsafe_assets(files: Files, docs_dir: Path) -> None:
    """Keep MkDocs from copying into the site what is not a file of the docs: a FIFO or device
    (copying would wait, or never end) or a symbolic link leading out of the docs directory
    (copying would publish what it points at). Pages stay: the verification reports them and
    ``on_page_read_source`` never reads them."""
    root = os.path.realpath(docs_dir)
    # Strings, not resolved Paths: a link is judged by where it is written and where it leads.
    written_root = os.path.abspath(docs_dir).rstrip(os.sep) + os.sep  # noqa: PTH100
    for file in list(files):
        if file.is_documentation_page() or file.generated_by or not file.abs_src_path:
            continue
        source = file.abs_src_path
        if not os.path.abspath(source).startswith(written_root):  # noqa: PTH100
            continue  # the theme's own files
        try:
            regular = stat.S_ISREG(os.stat(source).st_mode)  # noqa: PTH116
        except (OSError, ValueError):
            regular = False
        real = os.path.realpath(source)
        if regular and inside(real, root):
            continue
        files.remove(file)
        log.warning(
            "knowledge-base: '%s' is not copied into the site: it is not a regular file inside "
            "the docs directory",
            printable(file.src_uri),
        )


def _read_pages(
    page_files: list[PageFile], verifier: Verifier | None, docs_dir: Path, memo: RebuildMemo
) -> dict[str, Page]:
    """Each page by ``rel``: the verifier's parsed page when it just read it, else read here.

    Taking the pages the verifier parsed saves reading and parsing every page twice per build,
    and plans each page's links on the very text its references were found in (a page saved
    while the verification ran is read in its new state by the next build). A page it did not
    read (or read under another display path) is read here. Serving, a page whose bytes did not
    change is the same object from build to build (and in ``on_files``), so what was made from
    it can be kept (`RebuildMemo`).
    """
    pages: dict[str, Page] = {}
    for page_file in page_files:
        page = verifier.parsed_page(page_file.rel) if verifier is not None else None
        if page is None or page.display != page_file.display:
            page = _read_page(page_file, docs_dir, memo)
        else:
            key = (page_file.source, page_file.display, page_file.rel)
            page = memo.kept_or("page", key, (page.raw,), page)
        pages[page.rel] = page
    return pages


def _read_page(page_file: PageFile, docs_dir: Path, memo: RebuildMemo) -> Page:
    source, display, rel = page_file.source, page_file.display, page_file.rel
    if not memo.keep:
        return load_page(source, display, rel, docs_dir)
    try:
        raw = read_page_bytes(source, docs_dir)
    except PageUnreadable:
        return load_page(source, display, rel, docs_dir)  # which says why
    make = partial(parse_page, raw, source, display, rel)
    return memo.get("page", (source, display, rel), (raw,), make)


def _mark_links_after(
    cut: int, markdown: str, planned: PlannedLinks
) -> tuple[str, list[CodeLink | live.FindingMark]]:
    """`mark_links` on the page's ``markdown``, which starts ``cut`` characters into the text
    the links were planned on (MkDocs hands over what follows the frontmatter)."""
    links = [
        dataclasses.replace(link, start=link.start - cut, end=link.end - cut)
        for link in [*planned.links, *planned.marks]
        if link.start >= cut
    ]
    return mark_links(markdown, links)


@contextlib.contextmanager
def _silenced(logger: logging.Logger) -> Iterator[None]:
    disabled = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = disabled


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

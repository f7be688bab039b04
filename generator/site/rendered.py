"""A ``mkdocs serve`` rebuild takes an unchanged page's HTML from the build before it.

``mkdocs serve`` converts every page's Markdown to HTML again after an edit of one page: on a
500-page knowledge base, a second of every rebuild. That HTML depends on the page's Markdown
(after every plugin's ``on_page_markdown``), where the page sits, the other files (relative
links are resolved against them), and the configuration of the Markdown extensions and of
MkDocs' link validation. When all of those are the same as in the last build, so is the HTML,
and `ReusedRendering` gives the page what its last conversion gave it: the content, the table
of contents, the title from the first heading, the anchors it holds and the anchors it links to,
and MkDocs' warnings about its links (logged again, as if the page had been converted). A page
whose conversion logged anything else (an extension's warning, a Python warning MkDocs shows
once) is converted in every rebuild, as MkDocs does.

The HTML depends on nothing else only when every extension depends on nothing but the text, as
those listed in `TEXT_ONLY_EXTENSIONS` do. An extension that reads files (``pymdownx.snippets``,
``pymdownx.b64``), runs code or is unknown turns the reuse off for the whole site (serve says so
once), as does a function in the extensions' options from an unknown module (a custom fence that
draws a diagram with a tool). A page of another class than MkDocs' own (a blog post of a theme's
plugin) is always converted. The plugin option ``reuse_rendered_pages: false`` turns the reuse
off.
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page as MkDocsPage
from mkdocs.structure.toc import get_toc

from generator.site.markdown_config import canonical_name
from generator.site.rebuilds import RebuildMemo

log = logging.getLogger("mkdocs.plugins.knowledge_base")

TEXT_ONLY_EXTENSIONS = frozenset(
    {
        # Python-Markdown's own
        "abbr",
        "admonition",
        "attr_list",
        "codehilite",
        "def_list",
        "extra",
        "fenced_code",
        "footnotes",
        "legacy_attrs",
        "legacy_em",
        "md_in_html",
        "meta",
        "nl2br",
        "sane_lists",
        "smarty",
        "tables",
        "toc",
        "wikilinks",
        # pymdown-extensions, but for snippets and b64, which read files
        "pymdownx.arithmatex",
        "pymdownx.betterem",
        "pymdownx.blocks.admonition",
        "pymdownx.blocks.caption",
        "pymdownx.blocks.definition",
        "pymdownx.blocks.details",
        "pymdownx.blocks.html",
        "pymdownx.blocks.tab",
        "pymdownx.caret",
        "pymdownx.critic",
        "pymdownx.details",
        "pymdownx.emoji",
        "pymdownx.escapeall",
        "pymdownx.extra",
        "pymdownx.fancylists",
        "pymdownx.highlight",
        "pymdownx.inlinehilite",
        "pymdownx.keys",
        "pymdownx.magiclink",
        "pymdownx.mark",
        "pymdownx.pathconverter",
        "pymdownx.progressbar",
        "pymdownx.saneheaders",
        "pymdownx.smartsymbols",
        "pymdownx.striphtml",
        "pymdownx.superfences",
        "pymdownx.tabbed",
        "pymdownx.tasklist",
        "pymdownx.tilde",
        # the knowledge base's own (`markdown_config`)
        "generator.site.anchors",
        "generator.site.gfm",
    }
)
"""Extensions whose HTML depends only on the page's text and their options."""

REPLAYED_LOGGER = "mkdocs.structure.pages"
"""MkDocs' checks of a page's links log here; what they log depends only on what `Rendered` is
kept by, so it is logged again when the page is reused."""

TEXT_ONLY_MODULES = ("markdown.", "pymdownx.", "material.", "mkdocs.", "pygments.", "generator.")
"""Where a function in the extensions' options (a slugify, a fence's formatter, an emoji index)
may come from: these packages' functions depend only on their arguments."""


@dataclass(frozen=True)
class Rendered:
    """What converting a page's Markdown gave the page, as `MkDocsPage.render` sets it."""

    content: str
    toc: tuple[dict[str, Any], ...]
    """The table of contents as MkDocs' ``toc`` tokens (a fresh one is made for each build)."""
    title: str | None
    anchor_ids: frozenset[str] | None
    links_to_anchors: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None
    """The anchors it links to, by the linked file's path (Files are new in every build)."""
    records: tuple[logging.LogRecord, ...]
    """What MkDocs' link checks logged (`REPLAYED_LOGGER`)."""
    reusable: bool
    """False when the conversion logged anything else: the page is then converted again."""


class ReusedRendering:
    """Converts a page, or gives it its last build's conversion when nothing it depends on
    changed (`Rendered`)."""

    def __init__(self, memo: RebuildMemo) -> None:
        self.memo = memo
        self.enabled = False
        """Set for each build: serving, unless the plugin's options turn the reuse off."""
        self._said: set[str] = set()
        """Why the reuse is off, as told already (once per reason in a serving session)."""
        self._context: tuple[weakref.ref[Any], weakref.ref[Any], Hashable | None] | None = None
        """The build's config and files (not kept alive: through the files, a build holds every
        page), with what the pages' HTML depends on."""

    def render(
        self,
        page: MkDocsPage,
        config: MkDocsConfig,
        files: Files,
        convert: Callable[[MkDocsConfig, Files], None],
    ) -> None:
        """Set what ``page.render`` sets: by ``convert``, MkDocs' conversion of this page, or
        from the last build's."""
        context = self._inputs(config, files) if self.enabled else None
        if context is None or type(page) is not MkDocsPage:
            convert(config, files)
            return
        file = page.file
        inputs = (page.markdown, file.dest_uri, file.url, file.inclusion, context)
        converted: list[Rendered] = []

        def make() -> Rendered:
            converted.append(_converted(page, config, files, convert))
            return converted[0]

        rendered = self.memo.get("rendered", file.src_uri, inputs, make)
        if not converted and not (rendered.reusable and _restore(page, rendered, files)):
            convert(config, files)

    def _inputs(self, config: MkDocsConfig, files: Files) -> Hashable | None:
        last = self._context
        if last is None or last[0]() is not config or last[1]() is not files:
            why_not = _not_text_only(config)
            inputs = None
            if why_not is not None:
                if why_not not in self._said:
                    self._said.add(why_not)
                    log.info(
                        "knowledge-base: every page is converted again in every rebuild: %s",
                        why_not,
                    )
            else:
                inputs = _site_inputs(config, files)
                # The very object of the last build when equal: each page compares it at once.
                inputs = self.memo.kept_or("site-inputs", "", (inputs,), inputs)
            last = (weakref.ref(config), weakref.ref(files), inputs)
            self._context = last
        return last[2]


def _not_text_only(config: MkDocsConfig) -> str | None:
    """Why a page's HTML may depend on more than `_site_inputs` and the page, if it may."""
    for extension in config.markdown_extensions:
        if not isinstance(extension, str):
            return f"the Markdown extension {extension!r} is configured as an object"
        if canonical_name(extension) not in TEXT_ONLY_EXTENSIONS:
            return (
                f"the Markdown extension '{extension}' may read more than the page "
                "(see reuse_rendered_pages in the README)"
            )
    unknown = _unknown_function(config.mdx_configs)
    if unknown is not None:
        shown = f"{getattr(unknown, '__module__', '?')}.{getattr(unknown, '__qualname__', unknown)}"
        return (
            f"the Markdown extensions' options call {shown}, which may read more than the page "
            "(see reuse_rendered_pages in the README)"
        )
    return None


def _site_inputs(config: MkDocsConfig, files: Files) -> Hashable:
    """What every page's HTML depends on besides its own Markdown and place, when every
    extension reads only the text (`_not_text_only`)."""
    links = config.validation.links
    validation = (links.absolute_links, links.unrecognized_links, links.not_found, links.anchors)
    listing = tuple((f.src_uri, f.dest_uri, f.url, f.inclusion) for f in files)
    return (
        tuple(config.markdown_extensions),
        _frozen(config.mdx_configs),
        config.use_directory_urls,
        validation,
        listing,
    )


def _unknown_function(options: Any) -> Any:
    if isinstance(options, dict):
        options = list(options.values())
    if isinstance(options, (list, tuple)):
        for value in options:
            unknown = _unknown_function(value)
            if unknown is not None:
                return unknown
        return None
    if isinstance(options, functools.partial):
        # (`!!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}`, as Material's
        # documentation configures a slugify)
        return _unknown_function([options.func, *options.args, *options.keywords.values()])
    if callable(options):
        module = getattr(options, "__module__", None) or ""
        return None if module.startswith(TEXT_ONLY_MODULES) else options
    return None


def _frozen(options: Any) -> Hashable:
    """The extensions' options as a comparable value (functions by identity; a partial, made
    anew each time the configuration is read, by what it is made of)."""
    if isinstance(options, dict):
        return tuple((key, _frozen(value)) for key, value in options.items())
    if isinstance(options, (list, tuple)):
        return tuple(_frozen(value) for value in options)
    if isinstance(options, functools.partial):
        return (functools.partial, options.func, _frozen(options.args), _frozen(options.keywords))
    return options


class _Recorder(logging.Handler):
    """Keeps what this thread logs (``mkdocs serve`` logs its requests from others) on the
    loggers it is added to."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.thread = threading.get_ident()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread != self.thread or any(record is kept for kept in self.records):
            return  # (another thread's, or met already on another logger)
        self.records.append(record)
        last_resort = logging.lastResort
        if (
            last_resort is not None
            and record.levelno >= last_resort.level
            and not self._handled_elsewhere(record)
        ):
            # Python prints a record that no handler took through its last resort: being one,
            # this handler would silence it.
            last_resort.handle(record)

    def _handled_elsewhere(self, record: logging.LogRecord) -> bool:
        """Whether another handler is on the loggers ``record`` passes through (as
        `logging.Logger.callHandlers` counts them)."""
        logger: logging.Logger | None = logging.getLogger(record.name)
        while logger is not None:
            if any(handler is not self for handler in logger.handlers):
                return True
            logger = logger.parent if logger.propagate else None
        return False


def _converted(
    page: MkDocsPage,
    config: MkDocsConfig,
    files: Files,
    convert: Callable[[MkDocsConfig, Files], None],
) -> Rendered:
    recorder = _Recorder()
    # MkDocs' logger does not pass its records on to the root logger's handlers.
    loggers = [logging.getLogger(), logging.getLogger("mkdocs")]
    for logger in loggers:
        logger.addHandler(recorder)
    try:
        convert(config, files)
    finally:
        for logger in loggers:
            logger.removeHandler(recorder)
    links = page.links_to_anchors
    return Rendered(
        content=page.content or "",
        toc=tuple(_tokens(item) for item in page.toc),
        title=page._title_from_render,
        anchor_ids=None if page.present_anchor_ids is None else frozenset(page.present_anchor_ids),
        links_to_anchors=None
        if links is None
        else tuple((file.src_uri, tuple(anchors.items())) for file, anchors in links.items()),
        records=tuple(record for record in recorder.records if record.name == REPLAYED_LOGGER),
        reusable=all(record.name == REPLAYED_LOGGER for record in recorder.records),
    )


def _tokens(item: Any) -> dict[str, Any]:
    return {
        "level": item.level,
        "id": item.id,
        "name": item.title,
        "children": [_tokens(child) for child in item.children],
    }


def _restore(page: MkDocsPage, rendered: Rendered, files: Files) -> bool:
    """Give ``page`` its last conversion; False if a file it links to is gone."""
    links = None
    if rendered.links_to_anchors is not None:
        links = {}
        for path, anchors in rendered.links_to_anchors:
            linked = files.get_file_from_path(path)
            if linked is None:
                return False
            links[linked] = dict(anchors)
    page.content = rendered.content
    page.toc = get_toc(list(rendered.toc))
    page._title_from_render = rendered.title
    page.present_anchor_ids = None if rendered.anchor_ids is None else set(rendered.anchor_ids)
    if rendered.links_to_anchors is not None:
        page.links_to_anchors = links
    for record in rendered.records:
        logging.getLogger(record.name).handle(record)
    return True

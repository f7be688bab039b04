"""`mkdocs serve` rebuilds take an unchanged page's HTML from the build before (`rendered`):
the site is the same as when every page is converted, MkDocs' warnings about a page come again
in every rebuild, and whatever a page's HTML depends on (its text, the other files, an extension
that reads files) makes it converted again."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.structure.pages import Page as MkDocsPage

from generator.site.rendered import TEXT_ONLY_EXTENSIONS
from tests.conftest import KB
from tests.test_site import site_kb  # noqa: F401  (the fixture)

SERVE_URL = "http://127.0.0.1:8000/"


@dataclass
class Rebuild:
    """What one build of a serving session did."""

    converted: list[str]
    """The pages whose Markdown was converted to HTML."""
    warnings: list[str]
    site: dict[str, str] = field(default_factory=dict)
    """Every HTML file of the site, by path."""


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class Session:
    """``mkdocs serve``'s builds, in this process: the plugin instance is kept and the
    configuration read again for each build, as ``mkdocs serve`` does."""

    def __init__(self, kb: KB, converted: list[str], *, reuse: bool = True) -> None:
        self.kb = kb
        self.converted = converted
        self.reuse = reuse
        self.config = self._config()
        self.config.plugins.on_startup(command="serve", dirty=False)

    def _config(self):
        config = load_config(str(self.kb.root / "mkdocs.yml"))
        config.plugins["knowledge-base"].config.reuse_rendered_pages = self.reuse
        return config

    def rebuild(self) -> Rebuild:
        self.converted.clear()
        warnings = _Warnings()
        logger = logging.getLogger("mkdocs")
        logger.addHandler(warnings)
        try:
            config = self._config()
            build(config, serve_url=SERVE_URL)
        finally:
            logger.removeHandler(warnings)
        site = Path(config.site_dir)
        return Rebuild(
            sorted(self.converted),
            warnings.messages,
            {str(path.relative_to(site)): path.read_text("utf-8") for path in site.rglob("*.html")},
        )

    def close(self) -> None:
        self.config.plugins.on_shutdown()


@pytest.fixture
def serving(site_kb, monkeypatch) -> Iterator[tuple[KB, list[str], list[Session]]]:  # noqa: F811
    """The knowledge base, the pages converted by the current build, and the sessions opened."""
    converted: list[str] = []
    render = MkDocsPage.render

    def counted(page: MkDocsPage, config, files) -> None:
        converted.append(page.file.src_uri)
        render(page, config, files)

    monkeypatch.setattr(MkDocsPage, "render", counted)
    monkeypatch.chdir(site_kb.root)
    sessions: list[Session] = []
    yield site_kb, converted, sessions
    for session in sessions:
        session.close()


def open_session(serving, *, reuse: bool = True) -> Session:
    kb, converted, sessions = serving
    session = Session(kb, converted, reuse=reuse)
    sessions.append(session)
    return session


TWO = """\
---
title: Two
level: beginner
paths: [start]
---
# Two

## Details

See [one](one.md) and [the missing page](missing.md).
"""


def test_a_rebuild_converts_only_the_edited_page_and_the_site_is_the_same(serving):
    kb = serving[0]
    kb.page("two.md", TWO)
    kb.page("notes.md", "# Notes titled by their heading\n\n## A section\n\nText.\n")
    session = open_session(serving)
    first = session.rebuild()
    assert {"one.md", "two.md", "index.md", "notes.md"} <= set(first.converted)
    assert "<title>Notes titled by their heading" in first.site["notes/index.html"]

    kb.page("two.md", TWO + "\nEdited once.\n")
    second = session.rebuild()
    assert second.converted == ["two.md"]
    assert "Edited once." in second.site["two/index.html"]

    # The same pages, every one converted: the same site, byte for byte.
    shutil.rmtree(kb.root / "site")
    every = open_session(serving, reuse=False)
    every.rebuild()
    again = every.rebuild()
    assert "one.md" in again.converted
    assert again.site == second.site


def test_the_warnings_of_a_page_not_converted_again_are_logged_in_every_rebuild(serving):
    kb = serving[0]
    kb.page("two.md", TWO)
    session = open_session(serving)
    missing = "contains a link 'missing.md', but the target is not found"
    assert sum(missing in message for message in session.rebuild().warnings) == 1

    kb.page("one.md", (kb.docs / "one.md").read_text("utf-8") + "\nEdited.\n")
    rebuilt = session.rebuild()
    assert "two.md" not in rebuilt.converted
    assert sum(missing in message for message in rebuilt.warnings) == 1


def test_a_new_file_and_a_removed_anchor_reach_the_pages_that_link_to_them(serving):
    kb = serving[0]
    kb.page("two.md", TWO.replace("(one.md)", "(one.md#alpha)"))
    one = (kb.docs / "one.md").read_text("utf-8")
    kb.page("one.md", one + "\n## Alpha\n")
    session = open_session(serving)
    first = session.rebuild()
    assert not any("#alpha" in message for message in first.warnings)
    assert 'href="missing.md"' in first.site["two/index.html"]  # left as it is

    # one.md loses the heading two.md links to: two.md is not converted, but its link is checked.
    kb.page("one.md", one)
    rebuilt = session.rebuild()
    assert "two.md" not in rebuilt.converted
    assert any("one.md#alpha" in message for message in rebuilt.warnings), rebuilt.warnings

    # The page two.md links to appears: two.md is converted, its link now leads to it.
    kb.page("missing.md", "---\ntitle: Found\nlevel: beginner\npaths: [start]\n---\n# Found\n")
    rebuilt = session.rebuild()
    assert "two.md" in rebuilt.converted
    assert 'href="../missing/"' in rebuilt.site["two/index.html"]


def test_an_extension_that_reads_files_turns_the_reuse_off_and_serve_says_so(serving, caplog):
    kb = serving[0]
    assert "pymdownx.snippets" not in TEXT_ONLY_EXTENSIONS
    (kb.root / "snippets").mkdir()
    (kb.root / "snippets" / "note.md").write_text("First note.\n", "utf-8")
    config = kb.root / "mkdocs.yml"
    config.write_text(
        config.read_text("utf-8").replace(
            "markdown_extensions:\n",
            "markdown_extensions:\n  - pymdownx.snippets:\n      base_path: [snippets]\n",
            1,
        ),
        "utf-8",
    )
    kb.page("two.md", TWO + '\n--8<-- "note.md"\n')
    session = open_session(serving)
    caplog.set_level(logging.INFO, logger="mkdocs.plugins.knowledge_base")
    assert "First note." in session.rebuild().site["two/index.html"]

    (kb.root / "snippets" / "note.md").write_text("Second note.\n", "utf-8")
    rebuilt = session.rebuild()
    assert {"one.md", "two.md"} <= set(rebuilt.converted)
    assert "Second note." in rebuilt.site["two/index.html"]
    said = [r.getMessage() for r in caplog.records if "converted again in every" in r.getMessage()]
    assert said == [
        "knowledge-base: every page is converted again in every rebuild: the Markdown extension "
        "'pymdownx.snippets' may read more than the page (see reuse_rendered_pages in the README)"
    ]  # once in a session, not in every rebuild


def test_the_plugin_option_turns_the_reuse_off(serving):
    session = open_session(serving, reuse=False)
    session.rebuild()
    assert "one.md" in session.rebuild().converted


def test_options_made_anew_for_each_build_keep_the_reuse(serving):
    """Material's documentation sets a slugify as a partial, which reading the configuration
    makes anew for every build: it is compared by what it is made of."""
    kb = serving[0]
    config = kb.root / "mkdocs.yml"
    config.write_text(
        config.read_text("utf-8").replace(
            "markdown_extensions:\n",
            "markdown_extensions:\n  - pymdownx.tabbed:\n      alternate_style: true\n"
            "      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}\n",
            1,
        ),
        "utf-8",
    )
    kb.page("two.md", TWO + '\n=== "First Tab"\n\n    Inside.\n')
    session = open_session(serving)
    assert 'id="first-tab"' in session.rebuild().site["two/index.html"]
    kb.page("one.md", (kb.docs / "one.md").read_text("utf-8") + "\nEdited.\n")
    assert session.rebuild().converted == ["one.md"]


def test_a_page_whose_conversion_logs_something_else_is_converted_in_every_rebuild(
    serving, monkeypatch
):
    """What MkDocs logs about a page's links depends only on what the reuse is keyed by; what
    an extension logs may not (a Python warning MkDocs shows once), so such a page is converted
    again, and says what it says, as without the reuse."""
    from generator.site import anchors

    run = anchors.GitHubAnchorsTreeprocessor.run

    def run_and_warn(self, root):
        if any("Deprecated syntax" in (element.text or "") for element in root.iter()):
            logging.getLogger("mkdocs.extension").warning("two.md uses a deprecated syntax")
        return run(self, root)

    monkeypatch.setattr(anchors.GitHubAnchorsTreeprocessor, "run", run_and_warn)
    kb = serving[0]
    kb.page("two.md", TWO + "\nDeprecated syntax here.\n")
    session = open_session(serving)
    assert "two.md uses a deprecated syntax" in session.rebuild().warnings
    kb.page("one.md", (kb.docs / "one.md").read_text("utf-8") + "\nEdited.\n")
    rebuilt = session.rebuild()
    assert rebuilt.converted == ["one.md", "two.md"]
    assert rebuilt.warnings.count("two.md uses a deprecated syntax") == 1


def test_recording_a_conversion_does_not_silence_a_record_no_handler_takes(capsys):
    """Python prints a warning that no handler takes (its last resort); the handler that
    records a conversion's log must not count as one."""
    from generator.site.rendered import _Recorder

    logger = logging.getLogger("kb-test.unhandled")
    logger.propagate = False  # (pytest's handlers on the root logger would take it)
    recorder = _Recorder()
    logger.addHandler(recorder)
    try:
        logger.warning("nobody else handles this")
    finally:
        logger.removeHandler(recorder)
    assert [record.getMessage() for record in recorder.records] == ["nobody else handles this"]
    assert "nobody else handles this" in capsys.readouterr().err


def test_a_finished_build_is_not_kept_alive_until_the_next(serving, monkeypatch):
    """Through its files, a build holds every page and its HTML: what the reuse keeps of it
    must not keep it alive between rebuilds."""
    import gc
    import weakref

    from mkdocs.commands import build as mkdocs_build

    built: list[weakref.ref] = []
    get_files = mkdocs_build.get_files

    def remembered(config):
        files = get_files(config)
        built.append(weakref.ref(files))
        return files

    monkeypatch.setattr(mkdocs_build, "get_files", remembered)
    session = open_session(serving)
    session.rebuild()
    session.rebuild()
    gc.collect()
    assert len(built) == 2
    assert built[-1]() is None

"""`mkdocs serve`: it keeps serving whatever the findings, shows them on the pages (a mark on
each broken reference, a banner listing the page's findings) and rebuilds when the manifest,
a spec or a template changes; `mkdocs build` still refuses the same pages."""

from __future__ import annotations

import html
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.model import Finding, Severity
from generator.refs.extract import scan
from generator.site.codelinks import CodeLink, mark_links, unmark_links
from generator.site.live import FindingMark, banner, plan_marks
from tests.conftest import KB, MERMAID_JS, ROOT, mkdocs_build
from tests.test_site import governed_kb, site_kb  # noqa: F401  (the fixtures)

BROKEN_PAGE = """\
---
title: Two
level: beginner
paths: [start]
upstream: lib
---
# Two

`later()` is at `lib/future.py:1-2`; `alpha()` at lib/core.py:6.
"""


@dataclass
class Served:
    """A running `mkdocs serve` of a knowledge base, and what it printed so far."""

    process: subprocess.Popen[str]
    url: str
    log: Path

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return response.read().decode("utf-8")

    def output(self) -> str:
        return self.log.read_text("utf-8", errors="replace")

    def wait_for(self, path: str, condition: Callable[[str], bool], seconds: float = 60) -> str:
        """The page at ``path`` once ``condition`` holds for it (polled until the deadline)."""
        deadline = time.monotonic() + seconds
        page = ""
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "mkdocs serve stopped:\n" + self.output()
            try:
                page = self.get(path)
            except (urllib.error.URLError, ConnectionError):
                page = ""
            if page and condition(page):
                return page
            time.sleep(0.2)
        raise AssertionError(f"{path} never became as expected; serve said:\n{self.output()}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[KB], Served]]:
    """Start a real `mkdocs serve` on a free port of 127.0.0.1 (stopped after the test)."""
    started: list[Served] = []

    def start(kb: KB) -> Served:
        if not MERMAID_JS.is_file():
            pytest.fail(f"Mermaid is not installed at {MERMAID_JS}: run `make mermaid`")
        port = free_port()
        log = tmp_path / f"serve-{port}.log"
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
        with log.open("w") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
                cwd=kb.root,
                stdout=sink,
                stderr=subprocess.STDOUT,
                text=True,
                env=env,
            )
        served = Served(process, f"http://127.0.0.1:{port}/", log)
        started.append(served)
        served.wait_for("", lambda page: "<html" in page)
        return served

    yield start
    for served in started:
        if served.process.poll() is None:
            served.process.send_signal(signal.SIGINT)
            try:
                served.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                served.process.kill()
                served.process.wait()


def head_of(kb: KB, upstream: str) -> str:
    return subprocess.run(
        ["git", "-C", str(kb.root / "cache" / upstream), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def article(page: str) -> str:
    return page[page.index("<article") : page.index("</article>")]


def test_serve_shows_a_broken_reference_and_rebuilds_when_the_pin_moves(site_kb, serve):  # noqa: F811
    assert "strict: true" in (site_kb.root / "mkdocs.yml").read_text("utf-8")
    site_kb.page("two.md", BROKEN_PAGE)
    served = serve(site_kb)

    page = article(served.wait_for("two/", lambda page: "kb-findings" in page))
    # The broken reference is marked where it stands, its message in the tooltip.
    mark = re.search(
        r'<span class="kb-finding" title="([^"]*)"[^>]*><code>(.*?)</code></span>', page
    )
    assert mark is not None, page
    assert mark.group(2) == "lib/future.py:1-2"
    assert "error[file-missing]" in html.unescape(mark.group(1))
    # The banner lists the page's findings: severity and check id, line, message.
    banner_html = page[page.index('class="admonition failure kb-findings"') :]
    assert "<code>error[file-missing]</code> line 9:" in banner_html
    assert "lib/future.py" in banner_html
    assert page.index("kb-findings") < page.index('<h1 id="two">')
    # The good reference beside it is still linked to the pinned lines.
    assert f"/blob/{site_kb.pin}/lib/core.py#L6" in page
    # The terminal says it too, and the server kept serving despite strict mode.
    assert "docs/two.md:9:18: error[file-missing]" in served.output()
    # A clean page has neither mark nor banner; neither reaches the search index.
    clean = served.get("one/")
    assert "kb-finding" not in clean
    index = served.get("search/search_index.json")
    assert "knowledge-base:" not in index and "file-missing" not in index
    assert "lib/future.py:1-2" in index  # the page's own text is indexed as ever

    # Move the pin to the branch head, where lib/future.py exists: the page is rebuilt clean.
    head = head_of(site_kb, "lib")
    site_kb.upstreams["lib"]["pin"] = head
    site_kb.write_manifest()
    page = article(served.wait_for("two/", lambda page: "kb-findings" not in page))
    assert "kb-finding" not in page
    assert f"/blob/{head}/lib/future.py#L1-L2" in page
    assert served.process.poll() is None


def test_serve_follows_a_fetch_that_moves_the_branch_in_the_trust_line(site_kb, serve):  # noqa: F811
    """`kb upstreams fetch` while serving: the trust lines kept saying how far behind the
    branch the pin was before the fetch until some page was edited. A clone's branches are
    watched as the manifest is."""
    from generator.upstream.gitbuild import RepoBuilder

    served = serve(site_kb)

    def behind(page: str) -> str:
        line = re.search(r'<p class="kb-trust">(.*?)</p>', page, re.S)
        return re.sub(r"<[^>]+>", "", line[1]) if line else ""

    before = behind(served.wait_for("one/", lambda page: "kb-trust" in page))
    assert " behind main" in before or "at the tip of main" in before
    RepoBuilder(site_kb.root / "cache" / "lib").commit({"lib/next.py": "NEXT = 1\n"}, "Next")
    after = behind(served.wait_for("one/", lambda page: behind(page) not in ("", before)))
    assert after.endswith(" commits behind main") or after.endswith(" commit behind main")
    assert served.process.poll() is None


def test_serve_keeps_the_links_of_pages_an_edit_did_not_touch_and_follows_option_changes(
    site_kb,  # noqa: F811
    serve,
):
    """A rebuild plans again only what changed: the page nobody edited keeps its links and
    cards, the edited one gets its new ones, and an edit of mkdocs.yml reaches every page."""
    served = serve(site_kb)

    def code_links(page: str) -> list[str]:
        return re.findall(r"<a [^>]*data-kb-card[^>]*>.*?</a>|<template.*?</template>", page, re.S)

    first = code_links(served.get("one/"))
    assert any(f"/blob/{site_kb.pin}/lib/core.py#L" in link for link in first), first
    assert any(link.startswith("<template") for link in first), first

    site_kb.page("two.md", BROKEN_PAGE)
    served.wait_for("two/", lambda page: "kb-findings" in page)
    assert code_links(served.get("one/")) == first  # planned once, rebuilt the same

    config = site_kb.root / "mkdocs.yml"
    config.write_text(
        config.read_text("utf-8").replace(
            "  - knowledge-base:\n", "  - knowledge-base:\n      code_cards: false\n", 1
        ),
        "utf-8",
    )
    page = article(served.wait_for("one/", lambda page: "data-kb-card" not in page))
    assert f"/blob/{site_kb.pin}/lib/core.py#L" in page  # still linked, without a card
    assert served.process.poll() is None


def test_serve_rebuilds_what_an_edit_changes_on_other_pages_and_in_the_edited_one(
    site_kb,  # noqa: F811
    serve,
):
    """A rebuild keeps each page's work only while what it was made from is unchanged: a
    new page changes the path box of the page before it, and a new range changes the link."""
    served = serve(site_kb)
    first = article(served.get("one/"))
    assert "/lib/core.py#L6-L7" in first and "Two: the next step" not in first

    site_kb.page(
        "two.md",
        "---\ntitle: 'Two: the next step'\nlevel: beginner\npaths: [start]\n---\n# Two\n",
    )
    page = served.wait_for("one/", lambda page: "Two: the next step" in page)
    assert f"/blob/{site_kb.pin}/lib/core.py#L6-L7" in article(page)  # its links kept

    one = (site_kb.root / "docs" / "one.md").read_text("utf-8")
    site_kb.page("one.md", one.replace("`lib/core.py:6-7`", "`lib/core.py:6`"))
    page = article(served.wait_for("one/", lambda page: "core.py#L6-L7" not in page))
    assert f'/blob/{site_kb.pin}/lib/core.py#L6"' in page
    assert "Two: the next step" in page
    assert served.process.poll() is None


def test_a_page_saved_while_serve_verifies_it_keeps_its_links_in_the_next_rebuild(
    site_kb,  # noqa: F811
    monkeypatch,
):
    """An editor may save a page while a rebuild verifies it: that rebuild links it as the
    verifier read it, and the rebuild the save triggers links it as it is now."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from generator.verification import pipeline

    one = site_kb.root / "docs" / "one.md"
    verify = pipeline.Verifier.verify
    save_during: list[bool] = []

    def verify_then_save(self, *args, **kwargs):
        report = verify(self, *args, **kwargs)
        if save_during and save_during.pop():
            text = one.read_text("utf-8")
            one.write_text(text.replace("`alpha()` is at", "New prose. `alpha()` is at"), "utf-8")
        return report

    monkeypatch.setattr(pipeline.Verifier, "verify", verify_then_save)
    monkeypatch.chdir(site_kb.root)
    config = load_config(str(site_kb.root / "mkdocs.yml"))
    config.plugins.on_startup(command="serve", dirty=False)
    try:
        build(config, serve_url="http://127.0.0.1:8000/")
        save_during.append(True)
        build(config, serve_url="http://127.0.0.1:8000/")  # the page is saved during this one
        build(config, serve_url="http://127.0.0.1:8000/")  # the rebuild the save triggers
    finally:
        config.plugins.on_shutdown()
    page = article((site_kb.root / "site" / "one" / "index.html").read_text("utf-8"))
    assert "New prose." in page
    linked = re.findall(r'<a [^>]*href="[^"]*/lib/core\.py#L6-L7"[^>]*>(.*?)</a>', page, re.S)
    assert any("lib/core.py:6-7" in text for text in linked), page


def test_serve_shows_an_error_made_while_it_runs(site_kb, serve):  # noqa: F811
    served = serve(site_kb)
    assert "kb-finding" not in served.get("one/")
    # A broken reference and a dead link, which MkDocs' own validation warns about too: in
    # strict mode either warning used to end the rebuild ("the server will appear stuck").
    site_kb.page("one.md", BROKEN_PAGE.replace("Two", "One") + "\nSee [gone](gone.md).\n")
    page = served.wait_for("one/", lambda page: "kb-findings" in page)
    assert "<code>error[file-missing]</code> line 9:" in page
    assert "<code>error[link-missing]</code> line 11:" in page
    assert "gone.md" in served.output() and "Reloading browsers" in served.output()
    assert served.process.poll() is None


def test_serve_survives_a_broken_manifest_and_shows_why_on_every_page(site_kb, serve):  # noqa: F811
    served = serve(site_kb)
    manifest = site_kb.root / "upstreams.yaml"
    good = manifest.read_text("utf-8")

    manifest.write_text("upstreams: [\n", "utf-8")  # an edit half done
    for path in ("", "one/"):
        page = served.wait_for(path, lambda page: "Nothing was verified" in page)
        assert "upstreams.yaml" in page
    assert "the pages are served unverified until it is fixed" in served.output()

    # A pin the clone does not hold is found only while verifying: the same, not a crash.
    manifest.write_text(good.replace(site_kb.pin, "0" * 40), "utf-8")
    page = served.wait_for("one/", lambda page: "0000000" in page)
    assert "Nothing was verified" in page

    # Put right, plus an upstream with no clone: its warning is on upstreams.yaml, not on a
    # page, so the home page lists it; the page itself is clean again.
    site_kb.upstreams["other"] = {
        "url": "https://example.invalid/other.git",
        "branch": "main",
        "pin": "1" * 40,
        "prefixes": ["other/"],
    }
    site_kb.page("one.md", (site_kb.docs / "one.md").read_text("utf-8") + "\nSee other/x.py:1.\n")
    site_kb.write_manifest()
    home = served.wait_for("", lambda page: "upstream-not-cloned" in page)
    assert re.search(r"upstreams\.yaml line \d+: ", home), home
    assert "Nothing was verified" not in home
    page = served.wait_for("one/", lambda page: "kb-findings" not in page)
    assert f"/blob/{site_kb.pin}/lib/core.py#L6-L7" in page
    assert served.process.poll() is None


def test_mkdocs_build_still_refuses_the_page_serve_shows(site_kb):  # noqa: F811
    site_kb.page("two.md", BROKEN_PAGE)
    for strict in ("--strict", "--no-strict"):
        result = mkdocs_build(site_kb.root, strict)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "docs/two.md:9:18: error[file-missing]" in result.stderr
        assert "the site is not built until they are fixed" in result.stderr
        assert not (site_kb.root / "site" / "two" / "index.html").exists()


def test_serve_rebuilds_when_a_spec_or_a_spec_template_changes(governed_kb, serve):  # noqa: F811
    templates = governed_kb.root / ".lean-spec" / "templates"
    templates.mkdir(parents=True)
    served = serve(governed_kb)
    watching = next(
        line for line in served.output().splitlines() if "Watching paths for changes" in line
    )
    for path in ("upstreams.yaml", "specs", ".lean-spec"):
        assert f"'{path}'" in watching, watching
    assert "Lib notes" in served.get("board/")

    spec = governed_kb.root / "specs" / "001-lib-notes" / "README.md"
    spec.write_text(spec.read_text("utf-8").replace("# Lib notes", "# Lib notes, revised"))
    served.wait_for("board/", lambda page: "Lib notes, revised" in page)

    # LeanSpec's configuration names a template that is missing: a finding on a file that is
    # not a page, listed on the home page; writing the template clears it.
    config = governed_kb.root / ".lean-spec" / "config.json"
    config.write_text('{"template": "spec-template.md"}\n', "utf-8")
    home = served.wait_for("", lambda page: "spec-config-invalid" in page)
    assert ".lean-spec/config.json line 1: template spec-template.md is missing" in home
    (templates / "spec-template.md").write_text("# {name}\n\n## Overview\n", "utf-8")
    served.wait_for("", lambda page: "spec-config-invalid" not in page)


# ---------------------------------------------------------------------------------------------
# The marks and banner themselves


def test_marks_and_banner_escape_what_the_page_says():
    hostile = "no file '<img src=x onerror=\"alert(1)\">' at lib@abc\x1b[31m"
    finding = Finding(Severity.ERROR, "file-missing", "docs/x.md", 3, 1, hostile, "a <b>fix</b>")
    shown = banner([finding], "docs/x.md")
    assert "<img" not in shown and "<b>" not in shown and "\x1b" not in shown
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in shown
    assert "line 3:" in shown and "help: a &lt;b&gt;fix&lt;/b&gt;" in shown
    mark = FindingMark(0, 5, hostile).opening()
    assert "<img" not in mark and 'onerror="' not in mark
    assert banner([], "docs/x.md") == ""
    elsewhere = Finding(Severity.WARNING, "upstream-not-cloned", "upstreams.yaml", 8, 1, "<x>")
    assert "upstreams.yaml line 8: &lt;x&gt;" in banner([elsewhere], "docs/index.md")
    broken = banner([], "docs/x.md", "upstreams.yaml:2: <bad>")
    assert "Nothing was verified" in broken and "upstreams.yaml:2: &lt;bad&gt;" in broken


def test_a_code_span_with_a_broken_and_a_good_reference_is_marked_not_linked():
    from generator.model import CodeRef, RefForm, ResolvedRef

    text = "See `lib/a.py:1 and lib/b.py:2` here.\n"
    layout = scan(text)
    good = CodeRef("x.md", 1, 6, "lib/a.py:1", RefForm.PATH, "lib/a.py", 1, 1)
    bad = CodeRef("x.md", 1, 21, "lib/b.py:2", RefForm.PATH, "lib/b.py", 2, 2)
    error = Finding(Severity.ERROR, "file-missing", "x.md", 1, 21, "no lib/b.py")
    link = CodeLink(4, 31, "https://example.org/a", "lib@abc")
    links, marks = plan_marks(
        layout,
        [ResolvedRef(good, "lib", "abc"), ResolvedRef(bad, "lib", "abc", None, [error])],
        [link],
    )
    assert links == [] and [(m.start, m.end) for m in marks] == [(4, 31)]
    marked, wrappers = mark_links(text, marks)
    import markdown

    rendered = unmark_links(markdown.markdown(marked), wrappers)
    assert '<span class="kb-finding" title="error[file-missing] no lib/b.py"' in rendered
    assert "<code>lib/a.py:1 and lib/b.py:2</code></span>" in rendered

"""A team's own corpus, from nothing to a published site, as a new user goes.

`kb init`, `kb upstreams add`, `kb ingest` of a folder of analyses written for GitHub, `kb verify`,
`mkdocs build`, and the built site in a real headless Chromium: the links that worked before the
import still work, the import causes no finding, lists after a paragraph line and footnotes
render as on GitHub, and the site has a home page.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.corpora import INDEX, GithubCorpus, write_github_corpus
from tests.test_browser import _QuietHandler, browser  # noqa: F401 (the fixture)

PIN = "79841b498438a80cf90547c62a841f6822639622"  # minitrain v0.1: the corpus was written there
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}

pytestmark = pytest.mark.browser


def run(cwd: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV, check=False)


def kb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, sys.executable, "-m", "generator", *args)


def verify_json(cwd: Path, *paths: str) -> list[dict]:
    result = kb(cwd, "verify", *paths, "--format", "json", "--no-cache")
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)["findings"]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, demo_clones: Path) -> Iterator[dict]:
    """The corpus taken from a folder of notes to a built site; what each step said."""
    work = tmp_path_factory.mktemp("own-corpus")
    corpus = write_github_corpus(work / "notes", demo_clones / "minitrain", PIN)
    started = time.perf_counter()
    steps = {
        "init": kb(work, "init", "team-kb", "--name", "minitrain notes"),
    }
    root = work / "team-kb"
    steps["add"] = kb(
        root, "upstreams", "add", "minitrain", str(demo_clones / "minitrain"),
        "--prefix", "minitrain/", "--prefix", "tools/", "--pin-from", str(corpus.directory),
    )  # fmt: skip
    # As written, before the import: the notes verified where they are, against the same pin.
    steps["before"] = kb(
        root, "verify", str(corpus.directory), "--docs-root", str(corpus.directory),
        "--manifest", "upstreams.yaml", "--format", "json", "--no-cache",
    )  # fmt: skip
    steps["ingest"] = kb(root, "ingest", str(corpus.directory), "--output-dir", "docs/notes")
    steps["verify"] = kb(root, "verify", "--format", "json", "--no-cache")
    steps["build"] = run(root, sys.executable, "-m", "mkdocs", "build")
    seconds = time.perf_counter() - started
    yield {"root": root, "corpus": corpus, "steps": steps, "seconds": seconds}


def test_every_step_succeeds_in_minutes(published):
    steps = published["steps"]
    for name in ("init", "add", "ingest", "build"):
        assert steps[name].returncode == 0, f"{name}: {steps[name].stdout}{steps[name].stderr}"
    assert "pinned at 79841b498438" in steps["add"].stdout  # --pin-from found the right commit
    assert steps["verify"].returncode == 0, steps["verify"].stdout
    print(f"kb init to a built site: {published['seconds']:.1f} s")  # the closing note's figure
    assert published["seconds"] < 300


def test_the_import_causes_no_finding_and_keeps_every_link(published):
    steps, corpus = published["steps"], published["corpus"]
    before = json.loads(steps["before"].stdout)["findings"]
    after = json.loads(steps["verify"].stdout)["findings"]
    name = lambda finding: finding["page"].rsplit("/", 1)[-1]  # noqa: E731
    found_before = {(name(f), f["check"]) for f in before}
    found_after = {(name(f), f["check"]) for f in after}
    assert found_after <= found_before, found_after - found_before  # warnings included
    assert not [f for f in after if f["check"] in ("link-missing", "anchor-missing")]
    # Every page keeps its name, so every relative link between pages still leads somewhere.
    docs = published["root"] / "docs" / "notes"
    for page, target in corpus.links:
        if not target.startswith("#"):
            assert (docs / target.split("#")[0]).is_file(), (page, target)


def test_the_site_renders_github_markdown_and_has_a_home_page(published, browser):  # noqa: F811
    site = published["root"] / "site"
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    try:
        browser.navigate(base)
        assert browser.evaluate("document.title").startswith("minitrain notes")
        assert browser.evaluate("document.querySelector('.md-content h1').textContent") == (
            "minitrain notes"
        )
        page = _a_page_with_lists_and_footnotes(published["corpus"])
        browser.navigate(base + "notes/" + page.removesuffix(".md") + "/")
        content = ".md-content"
        assert browser.evaluate(f"document.querySelectorAll('{content} ul li').length") > 0
        text = browser.evaluate(f"document.querySelector('{content}').innerText")
        assert "\n- " not in text  # no list left as run-on text with literal dashes
        assert browser.evaluate(f"!!document.querySelector('{content} .footnote')")
        # The logo leads home, to a page that exists.
        assert browser.evaluate("document.querySelector('a.md-logo').href") == base
    finally:
        httpd.shutdown()
        httpd.server_close()


def _a_page_with_lists_and_footnotes(corpus: GithubCorpus) -> str:
    for page in corpus.pages:
        text = (corpus.directory / page.name).read_text("utf-8")
        if page.name != INDEX and "[^1]:" in text and "\n- " in text:
            return page.name
    raise AssertionError("the corpus has no page with both a list and a footnote")

"""The built demo site in a real headless Chromium (Debian's package, driven over DevTools).

Served on 127.0.0.1 from this process; the browser runs with background networking off, so any
request it makes is one a page asked for. Screenshots go to test-artifacts/ (git-ignored).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import itertools
import json
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
PIN = "79841b498438a80cf90547c62a841f6822639622"
FSDP_PAGE = "analysis/fsdp-actor-source-analysis.zh/"

pytestmark = pytest.mark.browser


class DevTools:
    """A minimal Chrome DevTools Protocol client for one page target."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self._stack = contextlib.ExitStack()
        self.socket = self._stack.enter_context(connect(url, max_size=None, open_timeout=10))
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        message_id = next(self.ids)
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def requested_urls(self) -> list[str]:
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event["method"] == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        self._stack.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server(demo_site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(demo_site / "site"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: `make browser` installs it")
        pytest.skip(f"{CHROMIUM} is missing: run `make browser`")
    profile = tmp_path_factory.mktemp("chromium-profile")
    process = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "--window-size=1280,900",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or process.poll() is not None:
                raise AssertionError("Chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            targets = json.load(answer)
        page = next(target for target in targets if target["type"] == "page")
        devtools = DevTools(page["webSocketDebuggerUrl"])
        devtools.call("Network.enable")
        devtools.call("Page.enable")
        devtools.call("Runtime.enable")
        devtools.call(
            "Emulation.setDeviceMetricsOverride",
            width=1280,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        yield devtools
        devtools.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(profile, ignore_errors=True)


def _svgs_in_shadow_roots(devtools: DevTools) -> list[dict[str, str]]:
    """Attributes of every <svg> inside a Mermaid host's (closed) shadow root."""
    root = devtools.call("DOM.getDocument", depth=-1, pierce=True)["root"]
    found: list[dict[str, str]] = []

    def walk(node: dict[str, Any], in_shadow: bool) -> None:
        if in_shadow and node.get("nodeName") == "svg":
            attributes = node.get("attributes", [])
            found.append(dict(zip(attributes[::2], attributes[1::2], strict=False)))
        for child in node.get("children", []):
            walk(child, in_shadow)
        for shadow in node.get("shadowRoots", []):
            walk(shadow, True)

    walk(root, False)
    return found


def _mermaid_fences(page: Path) -> int:
    return len(re.findall(r"^```mermaid\s*$", page.read_text("utf-8"), re.M))


@pytest.mark.parametrize(
    ("url_path", "source"),
    [
        ("", "index.md"),
        (FSDP_PAGE, "analysis/fsdp-actor-source-analysis.zh.md"),
        ("analysis/pr-2-grad-clip-offload/", "analysis/pr-2-grad-clip-offload.md"),
    ],
)
def test_every_mermaid_fence_becomes_an_svg_with_no_request_leaving_localhost(
    browser, server, demo_site, url_path, source
):
    expected = _mermaid_fences(demo_site / "docs" / source)
    assert expected >= 1
    browser.events.clear()
    browser.navigate(server + url_path)
    browser.wait_for(f"document.querySelectorAll('div.mermaid').length === {expected}")
    deadline = time.monotonic() + 20
    while len(svgs := _svgs_in_shadow_roots(browser)) < expected:
        assert time.monotonic() < deadline, f"{len(svgs)} of {expected} diagrams rendered"
        time.sleep(0.2)
    assert len(svgs) == expected
    assert not [svg for svg in svgs if svg.get("aria-roledescription") == "error"]
    assert browser.evaluate("document.querySelectorAll('pre.mermaid').length") == 0
    requested = browser.requested_urls()
    assert any(url.endswith("assets/javascripts/mermaid.min.js") for url in requested)
    outside = [url for url in requested if not url.startswith((server, "data:", "blob:"))]
    assert outside == []
    if url_path == "":
        browser.screenshot(ARTIFACTS / "home.png")
    if url_path == FSDP_PAGE:
        browser.screenshot(ARTIFACTS / "analysis-fsdp-actor.png")


def test_a_cjk_anchor_link_scrolls_to_its_heading(browser, server):
    browser.navigate(server)
    anchor = "2-sleep-与-wake_up-的实现"
    href = browser.evaluate(
        f"[...document.querySelectorAll('article a')].map(a => a.href)"
        f".find(h => decodeURIComponent(h).endsWith('#{anchor}'))"
    )
    assert href, "the home page links to the Chinese heading"
    browser.evaluate(
        f"[...document.querySelectorAll('article a')]"
        f".find(a => decodeURIComponent(a.href).endsWith('#{anchor}')).click()"
    )
    browser.wait_for(f"decodeURIComponent(location.hash) === '#{anchor}'")
    browser.wait_for("document.readyState === 'complete'")
    top = browser.wait_for(
        f"(() => {{ const h = document.getElementById('{anchor}');"
        f" const t = h && h.getBoundingClientRect().top;"
        f" return h && window.scrollY > 0 && t >= 0 && t < 200 ? t + 1 : 0; }})()"
    )
    assert top
    assert browser.evaluate(f"document.getElementById('{anchor}').tagName") == "H2"


def test_code_references_link_to_the_pinned_upstream_lines(browser, server):
    browser.navigate(server + FSDP_PAGE)
    links = browser.evaluate(
        "[...document.querySelectorAll('article a[title^=\"minitrain@\"]')]"
        ".map(a => [a.textContent, a.href, a.title])"
    )
    assert len(links) >= 20
    base = f"https://github.com/example-org/minitrain/blob/{PIN}/"
    assert all(href.startswith(base) for _, href, _ in links)
    assert {title for _, _, title in links} == {"minitrain@79841b4"}
    by_text = {text: href for text, href, _ in links}
    assert by_text["actor.py:30-37"] == base + "minitrain/backends/fsdp/actor.py#L30-L37"


def test_the_search_index_holds_chinese_words_from_the_chinese_page(browser, server):
    browser.navigate(server)
    index = browser.evaluate(
        "fetch('search/search_index.json').then(r => r.json())"
        ".then(i => i.docs.filter(d => d.location.startsWith('"
        + FSDP_PAGE
        + "')).map(d => d.text).join(' '))"
    )
    words = set(re.split(r"[\s\u200b]+", index))
    assert "显存" in words  # segmented by jieba into a word of its own


def test_the_draft_banner_shows(browser, server):
    browser.navigate(server + "paths/advanced.zh/")
    banner = browser.evaluate(
        "(() => { const b = document.querySelector('article .kb-status');"
        " const r = b && b.getBoundingClientRect();"
        " return b && r.height > 0 ? b.textContent.trim() : null; })()"
    )
    assert banner and banner.startswith("草稿")


def test_the_spec_board_is_in_the_nav_and_shows_the_computed_criteria(browser, server):
    browser.navigate(server)
    href = browser.evaluate(
        "[...document.querySelectorAll('nav.md-nav--primary a')]"
        ".find(a => a.textContent.trim() === 'Spec board').href"
    )
    assert href == server + "board/"
    browser.navigate(href)
    rows = browser.wait_for(
        "(() => { const rows = [...document.querySelectorAll('article table tr')]"
        ".map(r => [...r.cells].map(c => c.textContent.trim()));"
        " return rows.length ? rows : null; })()"
    )
    diagrams = next(row for row in rows if row[0] == "every required diagram present")
    deep_dives = sum(
        "\nkind: pr-deep-dive\n" in p.read_text("utf-8") for p in (ROOT / "docs").rglob("*.md")
    )
    assert diagrams[1] == "met" and diagrams[2].startswith(f"0 of {deep_dives} pages")
    browser.screenshot(ARTIFACTS / "board.png")

"""The built demo site in a real headless Chromium (Debian's package, driven over DevTools).

Served on 127.0.0.1 from this process; the browser runs with background networking off, so any
request it makes is one a page asked for. Screenshots go to test-artifacts/ (git-ignored).
"""

from __future__ import annotations

import ast
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
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KB, ROOT, mkdocs_build, site_config

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


@contextlib.contextmanager
def _serving(directory: Path) -> Iterator[str]:
    """``directory`` served on 127.0.0.1; yields its URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def server(demo_site: Path) -> Iterator[str]:
    with _serving(demo_site / "site") as url:
        yield url


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
    return [
        dict(zip(node["attributes"][::2], node["attributes"][1::2], strict=False))
        for node in _svg_nodes_in_shadow_roots(devtools)
    ]


def _svg_nodes_in_shadow_roots(devtools: DevTools) -> list[dict[str, Any]]:
    """The DOM nodes (DevTools' view) of every <svg> inside a (closed) shadow root."""
    root = devtools.call("DOM.getDocument", depth=-1, pierce=True)["root"]
    found: list[dict[str, Any]] = []

    def walk(node: dict[str, Any], in_shadow: bool) -> None:
        if in_shadow and node.get("nodeName") == "svg":
            found.append({"attributes": [], **node})
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
    # A link with a code card says its pin in the card (a title would pop up over it).
    links = browser.evaluate(
        "[...document.querySelectorAll('article a[data-kb-card]')].map(a => [a.textContent,"
        " a.href, document.getElementById(a.dataset.kbCard).content"
        ".querySelector('.kb-card__pin').textContent])"
        ".filter(([, , pin]) => pin.startsWith('minitrain@'))"
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


# -- code cards and the trust line


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, check=True
    ).stdout


def _git_lines(clone: Path, commit: str, path: str) -> list[str]:
    return _git(clone, "show", f"{commit}:{path}").splitlines()


def _link_js(text: str) -> str:
    return (
        "[...document.querySelectorAll('article a[data-kb-card]')]"
        f".find(a => a.textContent === {json.dumps(text)})"
    )


_CARD_SHOWN = (
    "(() => { const c = document.getElementById('kb-card');"
    " return !!c && !c.hidden && c.getBoundingClientRect().height > 0; })()"
)
_CARD_LINES = (
    "[...document.querySelectorAll('#kb-card span[data-n]')]"
    ".filter(s => s.getClientRects().length)"
    ".map(s => [Number(s.dataset.n), s.textContent])"
)


def _hover(browser: DevTools, link_js: str) -> None:
    """Move the real mouse over the link (after moving it away, so the card opens afresh)."""
    browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=1, y=1)
    browser.wait_for(
        "!document.getElementById('kb-card') || document.getElementById('kb-card').hidden"
    )
    box = browser.evaluate(
        f"(() => {{ const a = {link_js}; a.scrollIntoView({{block: 'center'}});"
        " const r = a.getClientRects()[0];"
        " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
    )
    browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=box[0], y=box[1])
    browser.wait_for(_CARD_SHOWN)


def _key(browser: DevTools, key: str, code: int) -> None:
    text = {"Enter": "\r"}.get(key, "")
    for kind in ("rawKeyDown", "char", "keyUp") if text else ("rawKeyDown", "keyUp"):
        params: dict[str, Any] = {"type": kind, "key": key, "code": key}
        params["windowsVirtualKeyCode"] = code
        if kind == "char":
            params["text"] = text
        browser.call("Input.dispatchKeyEvent", **params)


def _set_scheme(browser: DevTools, scheme: str) -> None:
    """Switch Material's palette as its toggle does (``default``: light, ``slate``: dark)."""
    browser.evaluate(
        f"document.querySelector('input.md-option[data-md-color-scheme=\"{scheme}\"]').click()"
    )
    browser.wait_for(f"document.body.getAttribute('data-md-color-scheme') === '{scheme}'")


def test_hovering_a_code_reference_shows_the_cited_lines_at_the_pin(browser, server, demo_clones):
    browser.events.clear()
    browser.navigate(server + FSDP_PAGE)
    path = "minitrain/backends/fsdp/actor.py"
    source = _git_lines(demo_clones / "minitrain", PIN, path)
    _hover(browser, _link_js("actor.py:30-37"))
    assert browser.evaluate(_CARD_LINES) == [[n, source[n - 1]] for n in range(30, 38)]
    head = browser.evaluate("document.querySelector('#kb-card .kb-card__head').innerText")
    assert path in head and f"minitrain@{PIN[:7]}" in head
    out = browser.evaluate("document.querySelector('#kb-card a.kb-card__out').href")
    assert out == f"https://github.com/example-org/minitrain/blob/{PIN}/{path}#L30-L37"
    # Highlighted with the classes Material colours: a keyword span, coloured unlike plain text.
    colours = browser.evaluate(
        "(() => { const k = document.querySelector("
        "'#kb-card .highlight .k, #kb-card .highlight .kn');"
        " const code = document.querySelector('#kb-card code');"
        " return k && [getComputedStyle(k).color, getComputedStyle(code).color]; })()"
    )
    assert colours and colours[0] != colours[1]
    browser.screenshot(ARTIFACTS / "card-light.png")
    _set_scheme(browser, "slate")
    try:
        browser.screenshot(ARTIFACTS / "card-dark.png")
        background = browser.evaluate(
            "getComputedStyle(document.getElementById('kb-card')).backgroundColor"
        )
        assert background != "rgb(255, 255, 255)"
    finally:
        _set_scheme(browser, "default")

    # A long range: the first lines, then all of them behind the expand control.
    _hover(browser, _link_js("actor.py:148-188"))
    shown = browser.evaluate(_CARD_LINES)
    assert shown == [[n, source[n - 1]] for n in range(148, 148 + len(shown))]
    assert len(shown) < 41
    browser.evaluate("document.querySelector('#kb-card .kb-card__expand').click()")
    assert browser.evaluate(_CARD_LINES) == [[n, source[n - 1]] for n in range(148, 189)]

    # A whole file: its outline, with the lines where each definition starts.
    _hover(browser, _link_js(path))
    outline = browser.evaluate(
        "[...document.querySelectorAll('#kb-card .kb-card__outline li')]"
        ".map(li => [Number(li.querySelector('.kb-card__ln').textContent),"
        " li.querySelector('code').textContent])"
    )
    tree = ast.parse("\n".join(source))
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    expected = [
        (min([n.lineno, *(d.lineno for d in n.decorator_list)]), n.name)
        for cls in classes
        for n in [cls, *[m for m in cls.body if isinstance(m, ast.FunctionDef)]]
    ]
    assert [tuple(item) for item in outline][: len(expected)] == expected
    browser.screenshot(ARTIFACTS / "card-outline.png")

    requested = browser.requested_urls()
    assert [url for url in requested if not url.startswith((server, "data:", "blob:"))] == []


def test_a_code_card_opens_with_the_keyboard_and_closes_with_escape(browser, server):
    browser.navigate(server + FSDP_PAGE)
    link = _link_js("actor.py:30-37")
    # Focus what comes just before the link in tab order, then press Tab.
    browser.evaluate(
        "(() => { const link = " + link + ";"
        " const all = [...document.querySelectorAll('a[href], button, input')]"
        ".filter(e => e.getClientRects().length && e.tabIndex >= 0);"
        " link.scrollIntoView({block: 'center'});"
        " all[all.indexOf(link) - 1].focus(); })()"
    )
    assert not browser.evaluate(_CARD_SHOWN)
    _key(browser, "Tab", 9)
    assert browser.evaluate(f"document.activeElement === {link}")
    browser.wait_for(_CARD_SHOWN)
    assert [n for n, _ in browser.evaluate(_CARD_LINES)] == list(range(30, 38))
    # Enter pins it and takes the focus into it; Escape closes it and gives the focus back.
    _key(browser, "Enter", 13)
    browser.wait_for("document.getElementById('kb-card').contains(document.activeElement)")
    assert browser.evaluate("location.pathname").endswith(FSDP_PAGE)
    _key(browser, "Escape", 27)
    browser.wait_for("document.getElementById('kb-card').hidden")
    assert browser.evaluate(f"document.activeElement === {link}")


def test_a_pinned_card_shows_all_its_lines_when_asked_by_mouse_or_keyboard(
    browser, server, demo_clones
):
    """On a pinned card, "Show all N lines" closed the card: the button leaves the card as it
    expands it, and the page then took the click for one outside the card. A phone, whose tap
    pins, could never show a long range whole; the keyboard lost its place."""
    browser.navigate(server + FSDP_PAGE)
    source = _git_lines(demo_clones / "minitrain", PIN, "minitrain/backends/fsdp/actor.py")
    link = _link_js("actor.py:148-188")
    box = browser.evaluate(
        f"(() => {{ const a = {link}; a.scrollIntoView({{block: 'center'}});"
        " const r = a.getClientRects()[0]; return [r.left + r.width / 2, r.top + 4]; })()"
    )
    _click(browser, box)
    browser.wait_for("document.getElementById('kb-card').classList.contains('kb-card--pinned')")
    box = browser.evaluate(
        "(() => { const b = document.querySelector('#kb-card .kb-card__expand');"
        " b.scrollIntoView({block: 'nearest'}); const r = b.getBoundingClientRect();"
        " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
    )
    _click(browser, box)
    assert browser.evaluate("!document.getElementById('kb-card').hidden")
    assert browser.evaluate(_CARD_LINES) == [[n, source[n - 1]] for n in range(148, 189)]
    _key(browser, "Escape", 27)
    browser.wait_for("document.getElementById('kb-card').hidden")
    # By keyboard (Escape gave the focus back to the link): Enter pins it, the focus goes to
    # the button, Enter expands it, and the focus stays in the card.
    assert browser.evaluate(f"document.activeElement === {link}")
    _key(browser, "Enter", 13)
    browser.wait_for("document.getElementById('kb-card').contains(document.activeElement)")
    browser.evaluate("document.querySelector('#kb-card .kb-card__expand').focus()")
    _key(browser, "Enter", 13)
    browser.wait_for("document.getElementById('kb-card').classList.contains('kb-card--expanded')")
    assert browser.evaluate("!document.getElementById('kb-card').hidden")
    assert browser.evaluate("document.getElementById('kb-card').contains(document.activeElement)")


def _click(browser: DevTools, box: list[float]) -> None:
    for kind in ("mousePressed", "mouseReleased"):
        browser.call(
            "Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1
        )


def test_a_code_card_fits_a_phone_screen_and_a_tap_pins_it(browser, server):
    width, height = 390, 844
    _set_viewport(browser, width, height)
    browser.call("Emulation.setTouchEmulationEnabled", enabled=True)
    try:
        browser.navigate(server + FSDP_PAGE)
        box = browser.evaluate(
            "(() => { const a = " + _link_js("actor.py:54-72") + ";"
            " a.scrollIntoView({block: 'center'}); const r = a.getClientRects()[0];"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        point = {"x": box[0], "y": box[1]}

        def tap() -> None:
            browser.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[point])
            browser.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])
            browser.wait_for(_CARD_SHOWN)

        tap()
        assert browser.evaluate("location.pathname").endswith(FSDP_PAGE)  # pinned, not followed
        assert browser.evaluate(
            "document.getElementById('kb-card').classList.contains('kb-card--pinned')"
        )
        rect = browser.evaluate(
            "(() => { const r = document.getElementById('kb-card').getBoundingClientRect();"
            " return [r.left, r.top, r.right, r.bottom]; })()"
        )
        assert rect[0] >= 0 and rect[1] >= 0 and rect[2] <= width and rect[3] <= height
        browser.screenshot(ARTIFACTS / "card-phone.png")
        _set_scheme(browser, "slate")  # a click elsewhere: it closes the pinned card
        browser.wait_for("document.getElementById('kb-card').hidden")
        tap()
        browser.screenshot(ARTIFACTS / "card-phone-dark.png")
    finally:
        _set_scheme(browser, "default")
        browser.call("Emulation.setTouchEmulationEnabled", enabled=False)
        _set_viewport(browser, 1280)


def test_the_trust_line_says_what_the_build_verified(browser, server, demo_site, demo_clones):
    listed = KB(demo_site).cli("verify", "--list-refs", "--format", "json")
    refs = json.loads(listed.stdout)["refs"]
    page = "docs/analysis/fsdp-actor-source-analysis.zh.md"
    verified: dict[str, int] = {}
    for ref in refs:
        if ref["page"] == page and ref["status"] == "ok":
            key = f"{ref['upstream']}@{ref['commit'][:7]}"
            verified[key] = verified.get(key, 0) + 1
    browser.navigate(server + FSDP_PAGE)
    items = browser.evaluate(
        "[...document.querySelectorAll('article .kb-trust__item--verified')]"
        ".map(i => [i.querySelector('code').textContent, i.textContent])"
    )
    assert {pin for pin, _ in items} == set(verified)
    for pin, text in items:
        name, commit = pin.split("@")
        behind = _git(demo_clones / name, "rev-list", "--count", f"{commit}..main").strip()
        assert text.startswith(f"{verified[pin]} ")
        assert (f"落后 main {behind} 个提交" in text) if behind != "0" else ("最新提交" in text)
    # Right under the title.
    assert browser.evaluate(
        "document.querySelector('article h1').nextElementSibling.classList.contains('kb-trust')"
    )
    browser.evaluate("window.scrollTo(0, 0)")
    browser.screenshot(ARTIFACTS / "trust-line.png")


HOSTILE_PY = '''\
"""</script><script>window.kbPwned = 1</script>"""
HTML = '<img src="x" onerror="window.kbPwned = 2">'
END = "</template></code></pre><b id=kb-escaped>bold</b> &amp; &lt;"


def render():
    return "<!-- not a comment -->"
'''


@contextlib.contextmanager
def _built_and_served(kb: KB) -> Iterator[str]:
    """``kb`` built with the project's mkdocs.yml (not strict), and served on 127.0.0.1."""
    shutil.copy(ROOT / "mkdocs.yml", kb.root / "mkdocs.yml")
    site_config(kb.root)
    result = mkdocs_build(kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    with _serving(kb.root / "site") as url:
        yield url


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """A knowledge base whose upstream holds HTML and ``</script>`` in its code, and a page
    with a reference a sync held for review; built, and served on 127.0.0.1."""
    kb = KB(tmp_path_factory.mktemp("hostile") / "kb")
    kb.docs.mkdir(parents=True)
    repo = kb.new_upstream("evil")
    old = repo.commit({"lib/held.py": "def held():\n    return 1\n"}, "Add held.py")
    pin = repo.commit(
        {"lib/evil.py": HOSTILE_PY, "lib/held.py": "def held():\n    return 2\n"},
        "Add evil.py",
    )
    repo.commit({"lib/later.py": "LATER = 1\n"}, "Add later.py")
    kb.add_upstream("evil", repo, pin, prefixes=["lib/"], web_url="https://github.com/acme/evil")
    kb.page(
        "index.md",
        f"""\
        ---
        title: Hostile
        held_refs:
          - {{upstream: evil, commit: {old}, ref: "lib/held.py:1-2", status: changed}}
        ---
        # Hostile

        The module `lib/evil.py:1-7` quotes HTML; `lib/held.py:1-2` waits for review.
        """,
    )
    with _built_and_served(kb) as url:
        yield url, kb.root / "cache" / "evil", pin


def test_hostile_upstream_code_shows_as_text_in_its_card(browser, hostile_site):
    server, clone, pin = hostile_site
    browser.events.clear()
    browser.navigate(server)
    _hover(browser, _link_js("lib/evil.py:1-7"))
    source = _git_lines(clone, pin, "lib/evil.py")
    assert browser.evaluate(_CARD_LINES) == [[n, source[n - 1]] for n in range(1, 8)]
    browser.screenshot(ARTIFACTS / "card-hostile.png")
    assert browser.evaluate("typeof window.kbPwned") == "undefined"
    assert browser.evaluate("document.getElementById('kb-escaped')") is None
    assert (
        browser.evaluate("document.querySelectorAll('#kb-card img, #kb-card script').length") == 0
    )
    requested = browser.requested_urls()
    assert [url for url in requested if not url.startswith((server, "data:", "blob:"))] == []


def test_the_trust_line_links_to_the_references_waiting_for_review(browser, hostile_site):
    server, clone, pin = hostile_site
    browser.navigate(server)
    held = browser.evaluate(
        "(() => { const item = document.querySelector('.kb-trust__item--held');"
        " return item && [item.textContent, [...item.querySelectorAll('a')].map(a => a.hash)]; })()"
    )
    assert held is not None
    text, hashes = held
    assert text.startswith("1 reference waits for review") and hashes == ["#kb-held-1"]
    browser.evaluate("document.querySelector('.kb-trust__item--held a').click()")
    browser.wait_for("location.hash === '#kb-held-1'")
    assert browser.evaluate("document.getElementById('kb-held-1').textContent") == "lib/held.py:1-2"
    behind = _git(clone, "rev-list", "--count", f"{pin}..main").strip()
    verified = browser.evaluate("document.querySelector('.kb-trust__item--verified').textContent")
    assert verified == f"1 code reference verified at evil@{pin[:7]} · {behind} commit behind main"
    browser.screenshot(ARTIFACTS / "trust-line-held.png")


@pytest.fixture(scope="module")
def local_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """A knowledge base whose upstream is a clone on a local path, with no web address."""
    kb = KB(tmp_path_factory.mktemp("local") / "kb")
    kb.docs.mkdir(parents=True)
    repo = kb.new_upstream("lib")
    pin = repo.commit({"lib/steps.py": "".join(f"STEP_{n} = {n}\n" for n in range(1, 30))}, "Steps")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.page("index.md", "---\ntitle: Local\n---\n# Local\n\nThe steps are `lib/steps.py:3-6`.\n")
    with _built_and_served(kb) as url:
        yield url, kb.root / "cache" / "lib", pin


def test_a_reference_into_an_upstream_with_no_web_address_shows_its_card(browser, local_site):
    """No forge to link to: the reference is a button that opens its card from the keyboard
    and with a click, and the page stays where it is."""
    server, clone, pin = local_site
    browser.navigate(server)
    button = "document.querySelector('article button.kb-code-ref')"
    assert browser.evaluate(f"{button}.textContent") == "lib/steps.py:3-6"
    assert browser.evaluate("document.querySelectorAll('article a[data-kb-card]').length") == 0
    # Focus what comes just before it in tab order, then press Tab.
    browser.evaluate(
        "(() => { const all = [...document.querySelectorAll('a[href], button, input')]"
        ".filter(e => e.getClientRects().length && e.tabIndex >= 0);"
        f" all[all.indexOf({button}) - 1].focus(); }})()"
    )
    _key(browser, "Tab", 9)
    assert browser.evaluate(f"document.activeElement === {button}")
    browser.wait_for(_CARD_SHOWN)
    source = _git_lines(clone, pin, "lib/steps.py")
    assert browser.evaluate(_CARD_LINES) == [[n, source[n - 1]] for n in range(3, 7)]
    assert browser.evaluate("document.querySelector('#kb-card a.kb-card__out')") is None
    # Enter pins it and takes the focus into it; Escape gives the focus back.
    _key(browser, "Enter", 13)
    browser.wait_for("document.getElementById('kb-card').contains(document.activeElement)")
    _key(browser, "Escape", 27)
    browser.wait_for("document.getElementById('kb-card').hidden")
    assert browser.evaluate(f"document.activeElement === {button}")
    # A click pins it too, and goes nowhere.
    browser.evaluate(f"{button}.blur()")
    box = browser.evaluate(
        f"(() => {{ const r = {button}.getClientRects()[0];"
        " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        browser.call(
            "Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1
        )
    browser.wait_for("document.getElementById('kb-card').classList.contains('kb-card--pinned')")
    assert browser.evaluate("location.href").rstrip("/") == server.rstrip("/")
    browser.screenshot(ARTIFACTS / "card-no-web-address.png")


# ---------------------------------------------------------------------------------------------
# Diagrams and tables that read at any size
#
# A knowledge base of its own: three PR deep dives drafted by `kb pr` from a real repository's
# history (served as GitHub by the replaying 127.0.0.1 server), of 3, 27 and 300 changed files,
# governed by one spec and read on one learning path, beside a spec that no page names yet.

PR_FILES = {11: 3, 12: 27, 13: 300}
"""Pull request number -> files it changes."""
PHONE = 390
AREAS = ("backends", "rollout", "ray", "router", "utils", "models")
SUBDIRECTORIES = ("core", "fsdp_utils", "megatron_utils", "sglang_rollout", "ops")


def _module_path(i: int) -> str:
    return f"slime/{AREAS[i % 6]}/{SUBDIRECTORIES[i // 6 % 5]}/mod_{i:03d}.py"


def _module_text(i: int, extra: str = "") -> str:
    return f'"""Module {i}."""\n\n\ndef step_{i}(x):\n    return x + {i}\n{extra}'


def _pull_request_history(root: Path) -> dict[int, tuple[str, str]]:
    """The upstream at ``root``, one commit a pull request: each modifies, adds, deletes and
    renames files in many directories. Returns each PR's (base, head)."""
    from generator.upstream.gitbuild import RepoBuilder

    repo = RepoBuilder.init(root)
    base = repo.commit({_module_path(i): _module_text(i) for i in range(600)}, "Base")
    commits: dict[int, tuple[str, str]] = {}
    first = 0
    for number, count in PR_FILES.items():
        changes: dict[str, str | bytes | None] = {}
        for i in range(first, first + count):
            path = _module_path(i)
            kind = i % 5
            if kind in (0, 4):  # modified
                changes[path] = _module_text(i, f"\n\ndef extra_{i}():\n    return {i}\n")
            elif kind == 1:  # added
                changes[path.replace("mod_", "new_")] = _module_text(i + 1000)
            elif kind == 2:  # deleted
                changes[path] = None
            else:  # renamed
                changes[path] = None
                changes[path.replace("mod_", "renamed_")] = _module_text(i)
        head = repo.commit(changes, f"PR {number}")
        commits[number] = (base, head)
        base, first = head, first + count
    return commits


@pytest.fixture(scope="module")
def pr_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The knowledge base built with `mkdocs build --strict`; returns its root."""
    from generator.github.client import DIFF_MEDIA_TYPE
    from generator.github.replay import ReplayServer, Reply, pull_files_from_git
    from tests import test_github as gh
    from tests.conftest import mkdocs_build, site_config

    root = tmp_path_factory.mktemp("pr-site")
    repo = root / "cache" / "widgets"
    commits = _pull_request_history(repo)
    (root / "upstreams.yaml").write_text(
        f"cache_dir: cache\nupstreams:\n  widgets:\n    url: {json.dumps(str(repo))}\n"
        f"    branch: main\n    pin: {commits[max(commits)][1]}\n    prefixes: [slime/]\n"
        "    web_url: https://github.com/acme/widgets\n",
        "utf-8",
    )
    for spec, status in (("001-pull-requests", "in-progress"), ("002-later", "planned")):
        readme = root / "specs" / spec / "README.md"
        readme.parent.mkdir(parents=True)
        readme.write_text(
            f"---\nstatus: {status}\ncreated: '2025-01-01'\n---\n\n# {spec[4:]}\n\n"
            "## Overview\n\nDeep dives of the pull requests.\n\n## Plan\n\n- [ ] write them\n",
            "utf-8",
        )
    path_page = root / "docs" / "paths" / "reading.md"
    path_page.parent.mkdir(parents=True)
    path_page.write_text(
        "---\ntitle: Reading the pull requests of slime/backends/fsdp_utils/actor.py\n"
        "kind: learning-path\npath: reading\nstatus: complete\ncreated: '2025-01-01'\n"
        "spec: 001-pull-requests\nlevel: beginner\npaths: [reading]\norder: 0\n---\n\n"
        "# Reading the pull requests\n\nThe deep dives in order.\n",
        "utf-8",
    )
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    site_config(root)
    with ReplayServer() as replay:
        for number, (base, head) in commits.items():
            files, diff = pull_files_from_git(
                repo, base, head, blob_url="https://github.com/acme/widgets"
            )
            pull = gh.FixturePR(repo, base, head, files, diff).pull_json(replay.url)
            title = f"Move the rollout helpers into slime/rollout/sglang_rollout ({number})"
            pull |= {"number": number, "title": title, "url": f"{replay.url}/pulls/{number}"}
            route = f"/repos/acme/widgets/pulls/{number}"
            replay.add(route, Reply(body=pull))
            replay.add(route, Reply(body=diff), accept=DIFF_MEDIA_TYPE)
            replay.add_list(f"{route}/files", files)
            command = ["pr", "acme/widgets", str(number), "--spec", "001-pull-requests"]
            drafted = subprocess.run(
                [sys.executable, "-m", "generator", *command, "--path", "reading"],
                cwd=root,
                capture_output=True,
                text=True,
                env={
                    **os.environ,
                    "GITHUB_API_URL": replay.url,
                    "GITHUB_TOKEN": gh.TOKEN,
                    "PYTHONPATH": str(ROOT),
                },
                check=False,
            )
            assert drafted.returncode == 0, drafted.stderr
    result = mkdocs_build(root, "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


@pytest.fixture(scope="module")
def pr_server(pr_site: Path) -> Iterator[str]:
    with _serving(pr_site / "site") as url:
        yield url


def _set_viewport(devtools: DevTools, width: int, height: int = 900) -> None:
    """Lay the page out ``width`` CSS pixels wide, as a phone's below 500."""
    devtools.call(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=height,
        deviceScaleFactor=1,
        mobile=width < 500,
    )


@contextlib.contextmanager
def _viewport(devtools: DevTools, width: int) -> Iterator[None]:
    """The page laid out ``width`` CSS pixels wide, then back to 1280."""
    _set_viewport(devtools, width)
    try:
        yield
    finally:
        _set_viewport(devtools, 1280)


def _full_page_screenshot(devtools: DevTools, width: int, path: Path) -> None:
    height = devtools.evaluate("document.documentElement.scrollHeight")
    _set_viewport(devtools, width, min(height, 8000))
    devtools.screenshot(path)
    _set_viewport(devtools, width)


_TEXT_SIZES = """function () {
    // Every element holding text, at its font size times the SVG's scale on the page.
    const box = this.getBoundingClientRect();
    const scale = box.width / this.viewBox.baseVal.width;
    const sizes = [...this.querySelectorAll('*')]
        .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
        .filter(e => e.getBoundingClientRect().height > 0)
        .map(e => parseFloat(getComputedStyle(e).fontSize) * scale);
    return {type: this.getAttribute('aria-roledescription'), sizes: sizes,
            width: Math.round(box.width), natural: Math.round(this.viewBox.baseVal.width)};
}"""


def _diagram_text_sizes(devtools: DevTools, expected: int) -> list[dict[str, Any]]:
    """Each rendered Mermaid diagram's type and the sizes (CSS px) its text is drawn at."""
    deadline = time.monotonic() + 20
    while len(nodes := _svg_nodes_in_shadow_roots(devtools)) < expected:
        assert time.monotonic() < deadline, f"{len(nodes)} of {expected} diagrams rendered"
        time.sleep(0.2)
    measured = []
    for node in nodes:
        handle = devtools.call("DOM.resolveNode", backendNodeId=node["backendNodeId"])
        answer = devtools.call(
            "Runtime.callFunctionOn",
            objectId=handle["object"]["objectId"],
            functionDeclaration=_TEXT_SIZES,
            returnByValue=True,
        )
        measured.append(answer["result"]["value"])
    return measured


def _body_text_size(devtools: DevTools) -> float:
    return float(
        devtools.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('article > p')).fontSize)"
        )
    )


def _page_of_pull_request(site: Path, number: int) -> str:
    (page,) = (site / "docs" / "analysis").glob(f"pr-{number}-*.md")
    return f"analysis/{page.stem}/"


@pytest.mark.parametrize("number", sorted(PR_FILES))
def test_a_pr_deep_dives_diagrams_draw_text_as_large_as_the_pages(
    browser, pr_site, pr_server, number
):
    browser.navigate(pr_server + _page_of_pull_request(pr_site, number))
    diagrams = _diagram_text_sizes(browser, 4)
    body = _body_text_size(browser)
    assert body >= 12
    kinds = ["flowchart-v2", "sequence", "flowchart-v2", "classDiagram"]
    assert [d["type"] for d in diagrams] == kinds
    for diagram in diagrams:
        assert diagram["sizes"], diagram
        assert min(diagram["sizes"]) >= body - 0.05, (PR_FILES[number], diagram)
    measured = {
        "files": PR_FILES[number],
        "body_px": body,
        "diagrams": [
            {
                "type": d["type"],
                "smallest_text_px": round(min(d["sizes"]), 2),
                "width_px": d["width"],
            }
            for d in diagrams
        ],
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"pr-{PR_FILES[number]}-files-text.json").write_text(json.dumps(measured))
    if PR_FILES[number] == 300:
        rects = browser.evaluate(
            "[...document.querySelectorAll('div.mermaid')].map(e => {"
            " const r = e.getBoundingClientRect();"
            " return [r.left, r.top + scrollY, r.width, r.height]; })"
        )
        for name, (left, top, width, height) in zip(
            ("architecture", "call-chain", "data-flow", "modules"), rects, strict=True
        ):
            clip = {"x": left, "y": top, "width": width, "height": height, "scale": 1}
            shot = browser.call(
                "Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip
            )
            (ARTIFACTS / f"pr-300-files-{name}.png").write_bytes(base64.b64decode(shot["data"]))


_OVERFLOWING_TABLES = """[...document.querySelectorAll('article table')]
    .map(t => [t, t.closest('.md-typeset__scrollwrap')])
    .filter(([t, wrap]) => t.scrollWidth > t.clientWidth
        || (wrap && wrap.scrollWidth > wrap.clientWidth)
        || t.getBoundingClientRect().right > document.querySelector('article')
            .getBoundingClientRect().right + 1)
    .map(([t]) => t.rows[0].textContent.trim().replace(/\\s+/g, ' '))"""


@pytest.mark.parametrize("width", [1280, PHONE])
def test_the_board_and_path_tables_fit_the_page(browser, pr_server, server, width):
    pages = [
        (pr_server, "board/", "board"),
        (pr_server, "paths/reading/", "path"),
        (server, "board/", "demo-board"),
        (server, "paths/beginner/", "demo-path"),
    ]
    with _viewport(browser, width):
        for site, url_path, name in pages:
            browser.navigate(site + url_path)
            browser.wait_for("document.querySelectorAll('article table').length > 0")
            assert browser.evaluate("document.querySelector('article').clientWidth") <= width
            assert browser.evaluate(_OVERFLOWING_TABLES) == [], (name, width)
            _full_page_screenshot(browser, width, ARTIFACTS / f"{name}-{width}px.png")


def test_a_spec_no_page_names_is_not_measured_on_the_rendered_board(browser, pr_server):
    browser.navigate(pr_server + "board/")
    sections = browser.evaluate(
        "[...document.querySelectorAll('article h2')].map(h => {"
        " const parts = []; let e = h.nextElementSibling;"
        " while (e && e.tagName !== 'H2') { parts.push(e.innerText); e = e.nextElementSibling; }"
        " return [h.textContent.replace('¶', '').trim(), parts.join('\\n')]; })"
    )
    by_title = dict(sections)
    later = by_title["later"]
    assert "Acceptance criteria: not measured yet (no pages)" in later
    assert "No page names this spec yet." in later
    assert " met" not in later.replace("not measured", "")
    assert re.search(r"Acceptance criteria: [0-5] of 5 met", by_title["pull-requests"])

"""Code cards and the trust line in a real `mkdocs build` of a small knowledge base.

What a reader sees of them in a browser is in test_browser.py; here, what the build writes:
the cards' bounds, the search index, the page without JavaScript, and the options' errors.
"""

from __future__ import annotations

import ast
import html
import json
import re
import shutil

import pytest

from generator.site.cards import highlighted_lines
from generator.upstream.gitbuild import RepoBuilder
from tests.conftest import CORE_PY, KB, ROOT, mkdocs_build, site_config

LONG_PY = "".join(f"def step_{n}():\n    return {n}  # unique_marker_{n}\n\n" for n in range(1, 41))


@pytest.fixture
def cards_kb(lib_kb: KB) -> KB:
    """The lib knowledge base with a long file, a page citing it, and the project's mkdocs.yml."""
    repo = RepoBuilder(lib_kb.root / "cache" / "lib")
    pin = repo.commit({"lib/long.py": LONG_PY}, "Add long.py")  # the branch's new tip
    lib_kb.upstreams["lib"]["pin"] = pin
    lib_kb.write_manifest()
    lib_kb.pin = pin  # type: ignore[attr-defined]
    shutil.copy(ROOT / "mkdocs.yml", lib_kb.root / "mkdocs.yml")
    site_config(lib_kb.root)
    lib_kb.page(
        "index.md",
        """\
        ---
        title: Home
        ---
        # Home

        `alpha()` is at `lib/core.py:6-7`; the steps are `lib/long.py:1-120`, the whole module
        is `lib/core.py`, and `lib/core.py:6-7` again shares the first card.
        """,
    )
    return lib_kb


def _options(kb: KB, options: str) -> None:
    config = kb.root / "mkdocs.yml"
    marker = "  - knowledge-base:\n"
    config.write_text(config.read_text("utf-8").replace(marker, marker + options), "utf-8")


def _page(kb: KB) -> str:
    return (kb.root / "site" / "index.html").read_text("utf-8")


def _templates(page: str) -> dict[str, str]:
    return dict(re.findall(r'<template id="([\w-]+)">(.*?)</template>', page, re.S))


def _card_lines(template: str) -> list[tuple[int, str]]:
    """The numbered lines of a card's code, as text (one line of HTML each)."""
    code = re.search(r"<code>(.*)</code>", template, re.S)
    assert code is not None
    lines = []
    for piece in code[1].split("\n"):
        number = re.search(r'data-n="(\d+)"', piece)
        if number:
            lines.append((int(number[1]), html.unescape(re.sub(r"<[^>]+>", "", piece))))
    return lines


def test_a_card_holds_the_cited_lines_and_is_shared_by_the_same_target(cards_kb):
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    page = _page(cards_kb)
    links = re.findall(r'<a href="([^"]+)" data-kb-card="([\w-]+)">(?:<code>)?([^<]+)', page)
    by_text: dict[str, list[str]] = {}
    for _, card, text in links:
        by_text.setdefault(text, []).append(card)
    assert len(set(by_text["lib/core.py:6-7"])) == 1 and len(by_text["lib/core.py:6-7"]) == 2
    templates = _templates(page)
    core = templates[by_text["lib/core.py:6-7"][0]]
    expected = [(6, "def alpha(x):"), (7, "    return x + 1")]
    assert _card_lines(core) == expected
    assert f"lib@{cards_kb.pin[:7]}" in core
    # The whole file: its outline, each definition with its line.
    outline = templates[by_text["lib/core.py"][0]]
    entries = re.findall(
        r'kb-card__ln">(\d+)</span><span class="kb-card__kind">(\w+)</span> <code>(\w+)', outline
    )
    tree = ast.parse(CORE_PY)
    expected = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            expected.append((str(node.lineno), node.name))
    assert [(line, name) for line, _, name in entries] == sorted(expected, key=lambda e: int(e[0]))
    assert [kind for _, kind, _ in entries] == ["function", "class", "method", "method"]


FIT_PY = (
    "class Trainer:\n    def fit(self, data):\n        return data\n\n\n"
    "def fit(data):\n    return 1\n\n\ndef fit(data):\n    return 2\n"
)


def test_a_symbol_without_lines_links_to_its_definition_as_its_card_shows_it(cards_kb):
    repo = RepoBuilder(cards_kb.root / "cache" / "lib")
    cards_kb.pin = repo.commit({"lib/fit.py": FIT_PY}, "Two fits")
    cards_kb.upstreams["lib"]["pin"] = cards_kb.pin
    cards_kb.write_manifest()
    cards_kb.page(
        "symbols.md",
        """\
        ---
        title: Symbols
        ---
        # Symbols

        The method is `lib/core.py:Beta.gamma`, the step `lib/long.py:step_3()`; a name the
        file lacks, `lib/core.py:nothing_here`, keeps the whole file. A plain name is the
        module's own, the last of two: `lib/fit.py:fit`; `lib/fit.py:Trainer.fit` the method.
        """,
    )
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    page = (cards_kb.root / "site" / "symbols" / "index.html").read_text("utf-8")
    links = re.findall(r'<a href="([^"]+)" data-kb-card="([\w-]+)"><code>([^<]+)', page)
    href = {text: url for url, _, text in links}
    base = f"https://github.com/acme/lib/blob/{cards_kb.pin}"
    gamma = next(n for n, line in enumerate(CORE_PY.splitlines(), 1) if "def gamma" in line)
    assert href["lib/core.py:Beta.gamma"] == f"{base}/lib/core.py#L{gamma}-L{gamma + 1}"
    assert href["lib/long.py:step_3()"] == f"{base}/lib/long.py#L7-L8"
    assert href["lib/core.py:nothing_here"] == f"{base}/lib/core.py"
    assert href["lib/fit.py:fit"] == f"{base}/lib/fit.py#L10-L11"
    assert href["lib/fit.py:Trainer.fit"] == f"{base}/lib/fit.py#L2-L3"
    card = _templates(page)[dict((text, card) for _, card, text in links)["lib/core.py:Beta.gamma"]]
    assert [number for number, _ in _card_lines(card)] == [gamma, gamma + 1]
    assert f'href="{base}/lib/core.py#L{gamma}-L{gamma + 1}"' in card


def test_a_long_range_embeds_card_lines_and_says_how_many_more(cards_kb):
    _options(cards_kb, "      card_lines: 30\n")
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    page = _page(cards_kb)
    card = re.search(r'data-kb-card="([\w-]+)"><code>lib/long.py:1-120', page)
    assert card is not None
    template = _templates(page)[card[1]]
    lines = LONG_PY.splitlines()
    assert _card_lines(template) == [(n, lines[n - 1]) for n in range(1, 31)]
    assert "Show all 30 lines" in template
    assert "90 more lines on GitHub" in template


def test_the_page_budget_leaves_the_rest_as_plain_links(cards_kb):
    _options(cards_kb, "      card_page_bytes: 1500\n")
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    page = _page(cards_kb)
    templates = _templates(page)
    assert len(templates) >= 1
    embedded = sum(len(f'<template id="{k}">{v}</template>'.encode()) for k, v in templates.items())
    assert embedded <= 1500
    assert "code cards left out, past card_page_bytes (1500)" in result.stderr
    plain = re.findall(r'<a href="https://github.com/acme/lib/blob/[^"]+" title="lib@\w+">', page)
    assert plain, "the references past the budget keep their plain link and tooltip"


def test_cards_stay_out_of_the_search_index_and_the_page_reads_without_them(cards_kb):
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    index = (cards_kb.root / "site" / "search" / "search_index.json").read_text("utf-8")
    docs = json.loads(index)["docs"]
    assert docs and not any("unique_marker_1" in doc["text"] for doc in docs)
    assert not any("kb-card" in doc["text"] for doc in docs)
    page = _page(cards_kb)
    assert "unique_marker_1" in page  # in the card, which the index never saw
    # Without JavaScript, a <template> shows nothing and the link is the plain link.
    visible = re.sub(r"<template\b.*?</template>", "", page, flags=re.S)
    assert "unique_marker_1" not in visible
    assert re.search(
        rf'<a href="https://github.com/acme/lib/blob/{cards_kb.pin}/lib/long.py#L1-L120"', page
    )


def test_cards_and_trust_line_can_be_turned_off(cards_kb):
    _options(cards_kb, "      code_cards: false\n      trust_line: false\n")
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    page = _page(cards_kb)
    assert "<template" not in page and "kb-trust" not in page and "kb-cards.js" not in page
    assert f'title="lib@{cards_kb.pin[:7]}"' in page


def test_the_trust_line_counts_what_the_build_verified(cards_kb):
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    page = _page(cards_kb)
    line = re.search(r'<p class="kb-trust">(.*?)</p>', page, re.S)
    assert line is not None
    text = re.sub(r"<[^>]+>", "", line[1])
    # Four references, all verified, at the branch's tip (the fixture's last commit).
    assert text == f"4 code references verified at lib@{cards_kb.pin[:7]} · at the tip of main"
    # The commit links to its page on the forge.
    web_url = cards_kb.upstreams["lib"]["web_url"].rstrip("/")
    assert f'<a href="{web_url}/commit/{cards_kb.pin}"><code>lib@' in line[1], line[1]


def test_the_trust_line_of_a_pull_request_s_head_says_it_is_not_on_the_branch(cards_kb):
    """A PR deep dive pinned to the PR's head, which main does not hold: its trust line said
    "1 commit behind main", as if the page showed main's code of a while ago."""
    from generator.upstream.gitbuild import run_git

    repo = RepoBuilder(cards_kb.root / "cache" / "lib")
    run_git(repo.path, "checkout", "-q", "-b", "pr-7")
    head = repo.commit({"lib/pr.py": "def proposed():\n    return 7\n"}, "Propose")
    run_git(repo.path, "checkout", "-q", "main")
    repo.commit({"lib/later.py": "LATER = 1\n"}, "Later on main")
    cards_kb.page(
        "index.md",
        f"---\ntitle: PR 7\nupstream: lib\npin: {head}\n---\n# PR 7\n\nIt adds `lib/pr.py:1-2`.\n",
    )
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    line = re.search(r'<p class="kb-trust">(.*?)</p>', _page(cards_kb), re.S)
    assert line is not None
    text = re.sub(r"<[^>]+>", "", line[1])
    assert text == f"1 code reference verified at lib@{head[:7]} (the page's own pin) · not on main"


def test_the_trust_line_says_a_commit_the_page_pins_is_its_own(cards_kb):
    """A page pinned on purpose to an older commit read "1 commit behind main", as a page that
    fell behind does: the reader could not tell it is about that commit."""
    repo = RepoBuilder(cards_kb.root / "cache" / "lib")
    older = repo.head()
    repo.commit({"lib/later.py": "LATER = 1\n"}, "Later on main")
    body = "# Then\n\nAs it was then: `lib/core.py:1-2`.\n"
    cards_kb.page("index.md", f"---\ntitle: Then\nupstream: lib\npin: {older}\n---\n{body}")
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    line = re.search(r'<p class="kb-trust">(.*?)</p>', _page(cards_kb), re.S)
    assert line is not None
    text = re.sub(r"<[^>]+>", "", line[1])
    assert text.startswith(f"1 code reference verified at lib@{older[:7]} (the page's own pin)")
    assert text.endswith("· 1 commit behind main"), text


def test_the_trust_line_names_the_references_with_a_warning(cards_kb):
    """A page built without `strict` is published with a reference whose symbol its file does
    not hold: the line counted the verified and the held, and that one nowhere, so a reader
    could not tell that one of the page's claims is unverified."""
    cards_kb.page(
        "index.md",
        "---\ntitle: Home\n---\n# Home\n\n`alpha()` is at `lib/core.py:6-7`; "
        "`zeta()` (lib/core.py:6-7) is not.\n",
    )
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    line = re.search(r'<p class="kb-trust">(.*?)</p>', _page(cards_kb), re.S)
    assert line is not None
    assert 'class="kb-trust__item kb-trust__item--warned"' in line[1]
    text = re.sub(r"<[^>]+>", "", line[1])
    assert text.startswith(f"1 code reference verified at lib@{cards_kb.pin[:7]}")
    assert text.endswith("1 reference with a warning: lib/core.py:6-7")


@pytest.mark.parametrize(
    ("option", "value"),
    [("card_lines", "0"), ("card_page_bytes", "-5"), ("card_lines", "many")],
)
def test_a_bad_card_option_stops_the_build_naming_it(cards_kb, option, value):
    _options(cards_kb, f"      {option}: {value}\n")
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode != 0
    assert f"option '{option}'" in result.stderr
    assert "Traceback" not in result.stderr


def test_upstream_code_is_escaped_whatever_it_holds():
    hostile = ["</template><script>alert(1)</script>", "<img src=x onerror=alert(2)>", "&amp;"]
    for path in ("x.py", "x.html", "Makefile", "x.unknown-extension"):
        lines = highlighted_lines(path, hostile)
        assert len(lines) == 3
        joined = "\n".join(lines)
        assert "<script" not in joined and "<img" not in joined and "</template" not in joined
        assert [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in lines] == hostile


def test_a_reference_into_an_upstream_without_a_clone_keeps_its_plain_link(cards_kb):
    cards_kb.upstreams["far"] = {
        "url": "https://example.org/far.git",
        "branch": "main",
        "pin": "1" * 40,
        "prefixes": ["far/"],
        "web_url": "https://github.com/acme/far",
    }
    cards_kb.write_manifest()
    cards_kb.page(
        "index.md", "---\ntitle: Home\n---\n# Home\n\nSee `far/x.py:3-4` and `lib/core.py:6-7`.\n"
    )
    result = mkdocs_build(cards_kb.root, "--no-strict")
    assert result.returncode == 0, result.stderr
    assert "upstream-not-cloned" in result.stderr
    page = _page(cards_kb)
    assert re.search(
        r'<a href="https://github.com/acme/far/blob/1{40}/far/x.py#L3-L4" title="far@1111111">',
        page,
    )
    assert re.search(r'data-kb-card="[\w-]+"><code>lib/core.py:6-7', page)
    # The trust line counts only what was verified: the unchecked reference is not.
    line = re.search(r'<p class="kb-trust">(.*?)</p>', page, re.S)
    assert line is not None
    assert re.sub(r"<[^>]+>", "", line[1]).startswith("1 code reference verified at lib@")


def test_a_class_defined_twice_leads_to_the_kept_one_for_its_methods_too():
    """A module that defines a class twice keeps the last: `x.py:Trainer` led there, but
    `x.py:Trainer.fit` to the first class's method."""
    from generator.site.cards import _definition
    from generator.upstream.gitstore import BlobText

    source = (
        "class Trainer:\n    def fit(self):\n        return 1\n\n\n"
        "class Trainer:\n    def setup(self):\n        pass\n\n"
        "    def fit(self):\n        return 2\n"
        "\n\nclass Other:\n    def fit(self):\n        return 3\n"
    )
    blob = BlobText(source.encode())
    assert _definition(blob, "Trainer") == (6, 11)
    assert _definition(blob, "Trainer.fit") == (10, 11)
    assert _definition(blob, "Trainer.setup") == (7, 8)
    assert _definition(blob, "Other.fit") == (15, 16)
    only_first = BlobText(source.replace("    def fit(self):\n        return 2\n", "").encode())
    assert _definition(only_first, "Trainer.fit") == (2, 3), "not in the kept class: the first"

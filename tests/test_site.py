"""The site build: verification inside `mkdocs build`, pinned code links, GitHub anchors,
learning-path navigation, tags, offline Mermaid, and bad input that never crashes the build."""

from __future__ import annotations

import hashlib
import importlib
import itertools
import os
import re
import shutil
import signal
import textwrap
from pathlib import Path

import markdown
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown.treeprocessors import Treeprocessor

from generator.model import CodeRef, RefForm, ResolvedRef, Upstream
from generator.refs.extract import scan
from generator.refs.slugs import slugify
from generator.site.anchors import heading_text, only_placeholder_postprocessors
from generator.site.background import can_fork
from generator.site.codelinks import (
    apply_links,
    code_url,
    mark_links,
    pattern_problem,
    plan_links,
    unmark_links,
)
from generator.site.plugin import format_finding
from generator.upstream.manifest import ConfigError, load_manifest
from generator.verification.pipeline import Report
from generator.verification.report import format_text
from tests.conftest import ROOT, mkdocs_build, site_config

PIN = "79841b498438a80cf90547c62a841f6822639622"


def html_of(site: Path, page: str) -> str:
    return (site / "site" / page / "index.html").read_text("utf-8")


def tree_digest(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(directory).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# Anchors


def render(text: str) -> markdown.Markdown:
    md = markdown.Markdown(
        extensions=["attr_list", "generator.site.anchors", "toc"],
        extension_configs={"toc": {"slugify": slugify}},
    )
    md.html = md.convert(textwrap.dedent(text))  # type: ignore[attr-defined]
    return md


def test_repeated_headings_get_githubs_dash_suffixes_in_html_and_toc():
    md = render(
        """\
        # 总览
        ## 3. 关键 PR 实现细节
        ## Setup
        ## Setup
        ## Setup
        ## `code` & <b>bold</b>
        """
    )
    ids = re.findall(r'<h\d id="([^"]+)"', md.html)  # type: ignore[attr-defined]
    assert ids == ["总览", "3-关键-pr-实现细节", "setup", "setup-1", "setup-2", "code--bold"]
    toc_ids = [child["id"] for child in md.toc_tokens[0]["children"]]  # type: ignore[attr-defined]
    assert toc_ids == ids[1:]
    assert "_1" not in md.html  # type: ignore[attr-defined]


def test_an_explicit_id_keeps_its_place_in_the_sequence_like_the_verifier():
    from generator.refs.extract.links import extract_anchors

    text = "# A\n\n## Setup {#setup}\n\n## Setup\n\n## Other {#mine}\n"
    ids = re.findall(r'<h\d id="([^"]+)"', render(text).html)  # type: ignore[attr-defined]
    assert ids == ["a", "setup", "setup-1", "mine"]
    assert set(ids) <= extract_anchors(scan(text))


class CompareHeadingNames(Treeprocessor):
    """Names every heading both ways: without rendering where it may, and by rendering it."""

    def run(self, root):  # type: ignore[no-untyped-def]
        plain = only_placeholder_postprocessors(self.md)
        for element in root.iter():
            if isinstance(element.tag, str) and re.fullmatch(r"h[1-6]", element.tag):
                self.md.names.append(  # type: ignore[attr-defined]
                    (heading_text(element, self.md, plain), heading_text(element, self.md))
                )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="aZ 9&;<>*_`\\#[]()!:.-中文\t~^1", min_size=1, max_size=30))
def test_a_heading_is_named_as_toc_names_it_with_or_without_rendering(title):
    """With the extensions the site adds (footnotes, strikethrough), headings holding code
    spans, emphasis, entities, footnote references and raw HTML."""
    md = markdown.Markdown(
        extensions=[
            "attr_list",
            "generator.site.anchors",
            "toc",
            "md_in_html",
            "footnotes",
            "pymdownx.tilde",
        ],
        extension_configs={"toc": {"slugify": slugify}},
    )
    md.names = []  # type: ignore[attr-defined]
    md.treeprocessors.register(CompareHeadingNames(md), "compare_heading_names", 6)
    md.convert(f"# x {title} y\n\n## {title}\n\n### `a<b` **c&d** *e* [^1]\n\n[^1]: A note.\n")
    for fast, rendered in md.names:  # type: ignore[attr-defined]
        assert fast == rendered


# ---------------------------------------------------------------------------------------------
# Code links


UPSTREAM = Upstream(
    name="lib",
    url="x",
    branch="main",
    pin=PIN,
    prefixes=("lib/",),
    web_url="https://github.com/acme/lib",
)


def test_code_urls_at_the_pin_in_githubs_form_and_a_custom_pattern():
    assert code_url(UPSTREAM, PIN, "lib/a.py", 10, 20) == (
        f"https://github.com/acme/lib/blob/{PIN}/lib/a.py#L10-L20"
    )
    assert code_url(UPSTREAM, PIN, "lib/a.py", 7, 7).endswith("/lib/a.py#L7")
    assert code_url(UPSTREAM, PIN, "lib/a b.py").endswith("/blob/" + PIN + "/lib/a%20b.py")
    assert code_url(UPSTREAM, PIN, "lib/sub", is_directory=True).endswith(f"/tree/{PIN}/lib/sub")
    gitlab = Upstream(
        **{**UPSTREAM.__dict__, "code_url": "{web_url}/-/blob/{commit}/{path}#L{start}-{end}"}
    )
    assert code_url(gitlab, PIN, "lib/a.py", 3, 9) == (
        f"https://github.com/acme/lib/-/blob/{PIN}/lib/a.py#L3-9"
    )
    assert code_url(gitlab, PIN, "lib/a.py") == f"https://github.com/acme/lib/-/blob/{PIN}/lib/a.py"
    no_web = Upstream(**{**UPSTREAM.__dict__, "web_url": None})
    assert code_url(no_web, PIN, "lib/a.py", 1, 2) is None


def test_the_manifest_accepts_a_code_url_pattern(tmp_path):
    manifest = tmp_path / "upstreams.yaml"
    manifest.write_text(
        "upstreams:\n  lib:\n    url: https://git.example.com/acme/lib.git\n"
        f"    pin: {PIN}\n    web_url: https://git.example.com/acme/lib\n"
        '    code_url: "{web_url}/-/blob/{commit}/{path}#L{start}-{end}"\n',
        "utf-8",
    )
    upstream = load_manifest(manifest).upstreams["lib"]
    assert upstream.code_url == "{web_url}/-/blob/{commit}/{path}#L{start}-{end}"
    assert pattern_problem(upstream.code_url) is None
    assert "unknown placeholder(s) {sha}" in pattern_problem("{web_url}/{sha}/{path}{commit}")
    assert "needs {commit} and {path}" in pattern_problem("{web_url}")


def test_a_misspelt_manifest_key_is_still_refused(tmp_path):
    manifest = tmp_path / "upstreams.yaml"
    manifest.write_text(
        f"upstreams:\n  lib:\n    url: x\n    pin: {PIN}\n    code_ulr: y\n", "utf-8"
    )
    with pytest.raises(ConfigError, match="did you mean 'code_url'"):
        load_manifest(manifest)


def resolved(text: str, source: str, *, status_error: bool = False) -> ResolvedRef:
    offset = source.index(text)
    layout = scan(source)
    line, column = layout.position(offset)
    path, _, lines = text.strip("`").partition(":")
    start, _, end = lines.partition("-")
    ref = CodeRef(
        "p.md", line, column, text.strip("`"), RefForm.PATH, path, int(start), int(end or start)
    )
    if text.startswith("`"):
        ref.column += 1
    result = ResolvedRef(ref, "lib", PIN, path)
    if status_error:
        from generator.model import Finding, Severity

        result.findings.append(Finding(Severity.ERROR, "range-outside-file", "p.md", 1, 1, "x"))
    return result


def test_plan_links_in_prose_code_spans_and_not_in_links_code_blocks_or_headings():
    source = textwrap.dedent(
        """\
        # Heading lib/h.py:1

        Prose lib/a.py:10-20 and `lib/b.py:3` and [already](lib/c.py:4) here.
        Broken lib/e.py:99.

        ```python
        x = 1  # lib/d.py:5
        ```
        """
    )
    refs = [
        resolved("lib/h.py:1", source),
        resolved("lib/a.py:10-20", source),
        resolved("`lib/b.py:3`", source),
        resolved("lib/c.py:4", source),
        resolved("lib/e.py:99", source, status_error=True),
        resolved("lib/d.py:5", source),
    ]
    refs[-1].ref.in_code_block = True
    links = plan_links(scan(source), refs, {"lib": UPSTREAM})
    output = apply_links(source, links)
    title = 'title="lib@79841b4"'
    assert (
        f'<a href="https://github.com/acme/lib/blob/{PIN}/lib/a.py#L10-L20" {title}>'
        "lib/a.py:10-20</a>"
    ) in output
    assert (
        f'<a href="https://github.com/acme/lib/blob/{PIN}/lib/b.py#L3" {title}>`lib/b.py:3`</a>'
    ) in output
    # Markdown renders the code span inside the link, and the tooltip.
    html = markdown.markdown(output)
    assert f'<a href="https://github.com/acme/lib/blob/{PIN}/lib/b.py#L3" {title}><code>' in html
    assert "[already](lib/c.py:4)" in output  # not linked twice
    assert "# Heading lib/h.py:1\n" in output
    assert "Broken lib/e.py:99." in output
    assert "x = 1  # lib/d.py:5\n" in output
    assert len(links) == 2


def test_marked_links_render_to_the_same_html_as_inline_links():
    source = textwrap.dedent(
        """\
        # Title

        Prose lib/a.py:10-20 and `lib/b.py:3`, *also lib/c.py:4*.

        ## A heading `lib/h.py:2`

        | cell `lib/d.py:5` |
        |---|
        """
    )
    refs = [
        resolved("lib/a.py:10-20", source),
        resolved("`lib/b.py:3`", source),
        resolved("lib/c.py:4", source),
        resolved("`lib/h.py:2`", source),
        resolved("`lib/d.py:5`", source),
    ]
    links = plan_links(scan(source), refs, {"lib": UPSTREAM})
    assert len(links) == 4  # not the one on a heading line (below the first line too)
    marked, ordered = mark_links(source, links)
    assert "](" not in marked and "<a" not in marked
    extensions = ["tables", "toc"]
    expected = markdown.markdown(apply_links(source, links), extensions=extensions)
    html = unmark_links(markdown.markdown(marked, extensions=extensions), ordered)
    assert html == expected
    assert html.count('title="lib@79841b4"') == 4
    assert '<h2 id="a-heading-libhpy2">A heading <code>lib/h.py:2</code></h2>' in html
    # A span Markdown split across elements is left unlinked, and no marker survives.
    broken = unmark_links("<p>\ue0000\ue001x</p><p>y\ue002</p>", ordered)
    assert broken == "<p>x</p><p>y</p>"


def test_a_ref_written_in_prose_keeps_its_underscores_and_its_link():
    """`pkg/__init__.py:3` outside a code span: Markdown would make `init` bold and the link
    could not be placed around what is no longer text."""
    source = "Prose lib/__init__.py:3 and lib/a_b_c.py:4, `lib/x__y.py:5`.\n"
    refs = [resolved(text, source) for text in ("lib/__init__.py:3", "lib/a_b_c.py:4")]
    refs.append(resolved("`lib/x__y.py:5`", source))
    links = plan_links(scan(source), refs, {"lib": UPSTREAM})
    marked, ordered = mark_links(source, links)
    html = unmark_links(markdown.markdown(marked), ordered)
    assert "<strong>" not in html and "<em>" not in html
    base = f"https://github.com/acme/lib/blob/{PIN}"
    assert f'<a href="{base}/lib/__init__.py#L3" title="lib@79841b4">lib/__init__.py:3</a>' in html
    assert f'<a href="{base}/lib/a_b_c.py#L4" title="lib@79841b4">lib/a_b_c.py:4</a>' in html
    assert "<code>lib/x__y.py:5</code>" in html
    assert html == markdown.markdown(apply_links(source, links))
    # In a raw HTML block Markdown reads nothing: the text is shown as written there too.
    source = "<table><tr><td>lib/__init__.py:3</td></tr></table>\n"
    links = plan_links(scan(source), [resolved("lib/__init__.py:3", source)], {"lib": UPSTREAM})
    marked, ordered = mark_links(source, links)
    html = unmark_links(markdown.markdown(marked), ordered)
    assert (
        f'<td><a href="{base}/lib/__init__.py#L3" title="lib@79841b4">lib/__init__.py:3</a></td>'
        in html
    )


def test_a_ref_whose_text_moved_is_left_alone():
    source = "Prose lib/a.py:10-20.\n"
    ref = resolved("lib/a.py:10-20", source)
    assert plan_links(scan("Other text entirely.\n"), [ref], {"lib": UPSTREAM}) == []


def test_findings_are_logged_in_the_verifiers_text_format():
    from generator.model import Finding, Severity

    finding = Finding(Severity.ERROR, "file-missing", "docs/x.md", 3, 7, "gone", "try y.py")
    expected = format_text(Report(findings=[finding])).splitlines()[:2]
    assert format_finding(finding).splitlines() == expected


# ---------------------------------------------------------------------------------------------
# The demo site, built for real


def test_the_demo_builds_strict_with_no_warning_and_sources_untouched(demo_site, demo_clones):
    before = tree_digest(demo_site / "docs")
    result = mkdocs_build(demo_site, "--strict")
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr and "ERROR" not in result.stderr
    pages = len(list((ROOT / "docs").rglob("*.md")))
    assert re.search(rf"knowledge-base: checked {pages} pages, \d+ code references", result.stderr)
    assert tree_digest(demo_site / "docs") == before


def test_code_references_link_to_the_pinned_lines_with_a_card(demo_site):
    page = html_of(demo_site, "analysis/pr-2-review")
    base = f"https://github.com/example-org/minitrain/blob/{PIN}/"
    card = re.search(
        rf'<a href="{re.escape(base)}minitrain/config.py#L56-L57" data-kb-card="([\w-]+)">'
        "<code>minitrain/config.py:56-57</code></a>",
        page,
    )
    assert card is not None
    template = re.search(rf'<template id="{card[1]}">(.*?)</template>', page, re.S)
    assert template is not None and "minitrain@79841b4" in template[1]
    zh = html_of(demo_site, "analysis/fsdp-actor-source-analysis.zh")
    assert f'<a href="{base}minitrain/backends/fsdp/actor.py#L30-L37"' in zh
    # Already a permalink in the source: it stays one link, not a link inside a link.
    packing = html_of(demo_site, "analysis/data-packing-source-analysis")
    assert "<a <a" not in packing and "](https://" not in packing


def test_the_nav_and_path_pages_come_from_frontmatter(demo_site):
    home = html_of(demo_site, "")
    nav = home[home.index('class="md-nav md-nav--primary"') :]
    assert nav.index("Learning paths") < nav.index("Beginner") < nav.index("Intermediate")
    assert nav.index("Intermediate") < nav.index("Advanced")
    beginner = html_of(demo_site, "paths/beginner")
    table = beginner[beginner.index("<table>") : beginner.index("</table>")]
    order = re.findall(r'<td>\d+</td>\s*<td><a href="\.\./\.\./analysis/([^/"]+)/"', table)
    assert order[:3] == [
        "data-packing-source-analysis",
        "fsdp-actor-source-analysis.zh",
        "pr-2-grad-clip-offload",
    ]
    assert "kb-learning" not in beginner  # no unreplaced marker names
    assert "<!-- kb:" not in beginner and "<!-- kb:" not in home
    # The home page lists the paths (including the problem-oriented one) and the levels.
    assert "进阶学习路径" in home and "Memory" in home and "(by problem" in home


def test_each_page_shows_prerequisites_and_its_place_in_each_path(demo_site):
    page = html_of(demo_site, "analysis/pr-2-grad-clip-offload")
    assert "kb-prerequisites" in page
    assert 'href="../fsdp-actor-source-analysis.zh/"' in page
    boxes = re.findall(r'class="admonition abstract kb-path".*?</div>', page, re.S)
    assert len(boxes) >= 2  # beginner and advanced (and memory)
    beginner = next(box for box in boxes if "Beginner" in box)
    assert re.search(r"\((\d) of \1\)", beginner), beginner  # the last page of the path
    assert "Previous" in beginner and "end of the path" in beginner
    # The path's name says it is a learning path: "Learning path: " is not said again.
    title = re.search(r'<p class="admonition-title">(.*?)</p>', beginner, re.S)
    assert title is not None and title[1].startswith("Beginner learning path: "), title


def test_draft_and_in_progress_pages_carry_a_banner_and_complete_ones_do_not(demo_site):
    assert "kb-status" in html_of(demo_site, "paths/advanced.zh")
    assert "In progress" in html_of(demo_site, "analysis/pr-2-review")
    assert "kb-status" not in html_of(demo_site, "analysis/data-packing-source-analysis")


def test_tags_get_a_section_each_and_mermaid_is_served_from_the_site(demo_site):
    site = demo_site / "site"
    tags = (site / "tags" / "index.html").read_text("utf-8")
    section = tags[tags.index('<h2 id="tag:fsdp">') :]
    section = section[: section.index("</ul>")]
    assert "fsdp-actor-source-analysis.zh" in section
    # A tag on a page leads to its section; no page per tag repeats it.
    page = html_of(demo_site, "analysis/fsdp-actor-source-analysis.zh")
    assert 'href="../../tags/#tag:fsdp"' in page
    assert [path.name for path in (site / "tags").iterdir()] == ["index.html"]
    assert (site / "assets" / "javascripts" / "mermaid.min.js").stat().st_size > 1_000_000
    home = html_of(demo_site, "")
    assert "assets/javascripts/mermaid.min.js" in home
    for html in site.rglob("*.html"):
        text = html.read_text("utf-8")
        assert "unpkg.com" not in text and "fonts.googleapis.com" not in text, html
        assert "cdn.jsdelivr" not in text, html


def test_the_search_index_segments_chinese(demo_site):
    import json

    index = json.loads((demo_site / "site" / "search" / "search_index.json").read_text("utf-8"))
    text = " ".join(
        doc["text"] for doc in index["docs"] if doc["location"].startswith("analysis/fsdp-actor")
    )
    assert "\u200b显存\u200b" in text or "显存\u200b" in text
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert "tags/" in locations and "board/" in locations


def test_the_boxes_lists_and_code_links_are_on_the_page_but_only_the_text_is_searched(
    demo_site,
):
    import json

    index = json.loads((demo_site / "site" / "search" / "search_index.json").read_text("utf-8"))

    def searched(location: str) -> str:
        return " ".join(
            doc["text"] for doc in index["docs"] if doc["location"].startswith(location)
        )

    review = html_of(demo_site, "analysis/pr-2-review")
    assert "kb-status" in review and "kb-prerequisites" in review and "kb-path" in review
    text = searched("analysis/pr-2-review/")
    # The referenced code is searchable; the boxes, which name other pages, are not.
    assert "<code>minitrain/config.py:56-57</code>" in text
    assert "Before you read" not in text and "Learning path:" not in text
    assert "This page is being written" not in text
    # Nor are the generated lists, which are made of other pages' titles.
    beginner = html_of(demo_site, "paths/beginner")
    title = "FSDPActor 源码分析：minitrain/<wbr>backends/<wbr>fsdp/<wbr>actor.py"
    assert f">{title}</a><br />" in beginner
    assert "FSDPActor" not in searched("paths/beginner/")


# ---------------------------------------------------------------------------------------------
# Bad input: every problem is a finding, never a crash


@pytest.fixture
def site_kb(lib_kb):
    """The lib knowledge base with the project's mkdocs.yml and a clean home page and path."""
    shutil.copy(ROOT / "mkdocs.yml", lib_kb.root / "mkdocs.yml")
    site_config(lib_kb.root)
    lib_kb.page(
        "index.md",
        """\
        ---
        title: Home
        kind: index
        ---
        # Home

        <!-- kb:learning-paths -->
        """,
    )
    lib_kb.page(
        "paths/start.md",
        """\
        ---
        title: Start here
        kind: learning-path
        path: start
        level: beginner
        ---
        # Start here
        """,
    )
    lib_kb.page(
        "one.md",
        """\
        ---
        title: One
        level: beginner
        paths: [start]
        upstream: lib
        ---
        # One

        `alpha()` is at `lib/core.py:6-7`.
        """,
    )
    return lib_kb


def build(kb, *args: str):
    result = mkdocs_build(kb.root, *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_a_small_knowledge_base_builds_clean(site_kb):
    result = build(site_kb, "--strict")
    assert result.returncode == 0, result.stderr
    page = (site_kb.root / "site" / "one" / "index.html").read_text("utf-8")
    assert f"https://github.com/acme/lib/blob/{site_kb.pin}/lib/core.py#L6-L7" in page
    # A path's index page without the marker gets its table in a section at its end.
    index = (site_kb.root / "site" / "paths" / "start" / "index.html").read_text("utf-8")
    assert re.search(
        r'<h2 id="pages-in-this-path">Pages in this path.*?</h2>\s*<table>.*?'
        r'<td>1</td>\s*<td><a href="\.\./\.\./one/">One</a><br />\s*Beginner</td>',
        index,
        re.S,
    )


def test_code_links_and_boxes_survive_a_tags_listing_filled_in_after_them(site_kb):
    # Material fills the listing into the HTML after the links were taken out for the search
    # index and before they are put back.
    site_kb.page(
        "one.md",
        """\
        ---
        title: One
        level: beginner
        paths: [start]
        upstream: lib
        tags: [core]
        ---
        # One

        <!-- material/tags -->

        `alpha()` is at `lib/core.py:6-7`, and again lib/core.py:6.
        """,
    )
    site_kb.page(
        "two.md", "---\ntitle: Two\nlevel: beginner\npaths: [start]\ntags: [core]\n---\n# Two\n"
    )
    result = build(site_kb, "--strict")
    assert result.returncode == 0, result.stderr
    page = (site_kb.root / "site" / "one" / "index.html").read_text("utf-8")
    base = f"https://github.com/acme/lib/blob/{site_kb.pin}/lib/core.py"
    card = 'data-kb-card="kb-card-\\d+"'
    assert re.search(
        rf'<a href="{re.escape(base)}#L6-L7" {card}><code>lib/core.py:6-7</code></a>', page
    )
    assert re.search(rf'<a href="{re.escape(base)}#L6" {card}>lib/core.py:6</a>', page)
    assert '<a href="../two/">' in page  # the listing
    article = page[page.index("<article") : page.index("</article>")]
    assert article.index('<h1 id="one">') < article.index('class="admonition abstract kb-path"')
    assert "\ue000" not in page and "\ue002" not in page


def test_tags_written_as_one_value_are_one_tag_on_the_site(site_kb):
    """`tags: fsdp` (not a list) is one tag, as the verifier and the spec board read it;
    Material's tags plugin alone would stop the build on it."""
    site_kb.page(
        "one.md",
        (site_kb.root / "docs" / "one.md")
        .read_text("utf-8")
        .replace("upstream: lib\n", "upstream: lib\ntags: fsdp\n"),
        dedent=False,
    )
    result = build(site_kb)
    assert result.returncode == 0, result.stderr
    assert 'href="../tags/#tag:fsdp"' in html_of(site_kb.root, "one")
    tags = (site_kb.root / "site" / "tags" / "index.html").read_text("utf-8")
    assert '<h2 id="tag:fsdp">' in tags


def test_an_upstream_without_a_web_address_shows_its_code_but_links_nowhere(site_kb):
    """A clone on a local path or an internal server has no forge to link to; the cards are
    made from the code the build read all the same (they had been left out with the link):
    each reference is a button that shows its card, which opens nothing elsewhere."""
    site_kb.upstreams["lib"].pop("web_url", None)
    site_kb.write_manifest()
    result = build(site_kb)
    assert result.returncode == 0, result.stderr
    assert (
        "knowledge-base: upstream 'lib' has no web_url: its references are checked and show "
        "their code cards, but link to no forge (add web_url: https://github.com/OWNER/REPO to "
        "upstreams.yaml)"
    ) in result.stderr
    page = html_of(site_kb.root, "one")
    assert "github.com/acme/lib/blob" not in page and "kb-card__out" not in page
    button = re.search(r'<button type="button" class="kb-code-ref" data-kb-card="([\w-]+)">', page)
    assert button is not None, page
    template = re.search(rf'<template id="{button[1]}">(.*?)</template>', page, re.S)
    assert template is not None and "kb-card__head" in template[1]


def test_a_reference_in_a_footnote_is_linked_where_the_note_is_shown(site_kb):
    text = (site_kb.root / "docs" / "one.md").read_text("utf-8")
    site_kb.page(
        "one.md", text + "\nIt sleeps.[^n]\n\n[^n]: See `lib/core.py:6-7`.\n", dedent=False
    )
    result = build(site_kb)
    assert result.returncode == 0, result.stderr
    page = html_of(site_kb.root, "one")
    note = page[page.index('<li id="fn:n">') :]
    note = note[: note.index("</li>")]
    assert f'href="https://github.com/acme/lib/blob/{site_kb.pin}/lib/core.py#L6-L7"' in note


def test_a_verifier_error_fails_even_a_non_strict_build(site_kb):
    site_kb.page("two.md", "---\ntitle: Two\npaths: [start]\n---\n# Two\n\nSee lib/core.py:900.\n")
    result = build(site_kb, "--no-strict")
    assert result.returncode == 1
    assert "docs/two.md:7:5: error[range-outside-file]" in result.stderr
    assert "the site is not built until they are fixed" in result.stderr
    assert not (site_kb.root / "site" / "two" / "index.html").exists()
    # The build stops on the verifier's errors, not on a page MkDocs was reading then.
    assert "Error reading page" not in result.stderr


def test_builds_take_unchanged_pages_from_the_verification_cache(site_kb):
    site_kb.page("two.md", "---\ntitle: Two\npaths: [start]\n---\n# Two\n\nSee lib/core.py:900.\n")
    first = build(site_kb, "--no-strict")
    cache = site_kb.root / "cache" / ".verify-cache"
    written = {path: path.stat().st_mtime_ns for path in cache.glob("*/*.pickle")}
    assert written, "the build keeps what it verified"
    again = build(site_kb, "--no-strict")
    assert again.returncode == first.returncode == 1
    assert "docs/two.md:7:5: error[range-outside-file]" in again.stderr
    assert {path: path.stat().st_mtime_ns for path in cache.glob("*/*.pickle")} == written, (
        "nothing changed, so nothing was verified again or written"
    )
    site_kb.page("two.md", "---\ntitle: Two\npaths: [start]\n---\n# Two\n\nSee lib/core.py:6.\n")
    fixed = build(site_kb, "--strict")
    assert fixed.returncode == 0, fixed.stderr
    # one.md came from the cache: its references still link to the pinned lines.
    page = (site_kb.root / "site" / "one" / "index.html").read_text("utf-8")
    assert f"https://github.com/acme/lib/blob/{site_kb.pin}/lib/core.py#L6-L7" in page


def test_a_build_told_not_to_keeps_no_verification_cache(site_kb):
    config = site_kb.root / "mkdocs.yml"
    text = config.read_text("utf-8")
    marker = "  - knowledge-base:\n"
    config.write_text(text.replace(marker, f"{marker}      cache: false\n"), "utf-8")
    assert build(site_kb, "--strict").returncode == 0
    assert not (site_kb.root / "cache" / ".verify-cache").exists()


def test_the_verification_checks_the_pages_the_other_plugins_leave(site_kb):
    # The verification starts before MkDocs lists the pages; a hook then drops the page with an
    # error, so the build verifies again what it really builds.
    site_kb.page("two.md", "---\ntitle: Two\npaths: [start]\n---\n# Two\n\nSee lib/core.py:900.\n")
    (site_kb.root / "drop_two.py").write_text(
        "def on_files(files, config):\n"
        "    files.remove(files.get_file_from_path('two.md'))\n"
        "    return files\n",
        "utf-8",
    )
    config = site_kb.root / "mkdocs.yml"
    config.write_text(config.read_text("utf-8") + "\nhooks:\n  - drop_two.py\n", "utf-8")
    result = build(site_kb, "--strict")
    assert result.returncode == 0, result.stderr
    assert "knowledge-base: checked 3 pages, 1 code reference" in result.stderr
    assert "two.md" not in result.stderr


def test_mkdocs_own_warnings_about_the_docs_are_said_once(site_kb):
    site_kb.page("README.md", "---\ntitle: Read me\npaths: [start]\n---\n# Read me\n")
    result = build(site_kb, "--no-strict")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("Excluding 'README.md' from the site") == 1


def test_a_broken_mermaid_fence_warns_and_fails_strict(site_kb):
    site_kb.page(
        "diagram.md",
        "---\ntitle: D\npaths: [start]\n---\n# D\n\n```mermaid\ngraph TD\n  A[x --> B\n```\n",
    )
    lenient = build(site_kb, "--no-strict")
    assert lenient.returncode == 0, lenient.stderr
    assert "docs/diagram.md:9:4: warning[mermaid-syntax]" in lenient.stderr
    assert "'[' is never closed" in lenient.stderr
    strict = build(site_kb, "--strict")
    assert strict.returncode == 1
    assert "warning[mermaid-syntax]" in strict.stderr


def test_a_page_without_frontmatter_is_named_and_fails_the_build(site_kb):
    # No frontmatter means no learning path either, which the curriculum reports as an error.
    site_kb.page("bare.md", "# No frontmatter\n\nText.\n")
    result = build(site_kb)
    assert result.returncode == 1
    assert "docs/bare.md:1:1: warning[frontmatter-missing]" in result.stderr
    # It names no spec: under the default `governance: lenient`, a warning, not an error.
    assert "docs/bare.md:1:1: warning[page-not-in-path]" in result.stderr


def test_a_page_in_no_path_and_a_prerequisite_cycle_are_findings(site_kb):
    manifest = site_kb.root / "upstreams.yaml"
    manifest.write_text("governance: strict\n" + manifest.read_text("utf-8"), "utf-8")
    site_kb.page("lost.md", "---\ntitle: Lost\nlevel: beginner\n---\n# Lost\n")
    site_kb.page(
        "a.md", "---\ntitle: A\npaths: [start]\ndepends_on: [b.md]\n---\n# A\n", dedent=False
    )
    site_kb.page(
        "b.md", "---\ntitle: B\npaths: [start]\ndepends_on: [a.md]\n---\n# B\n", dedent=False
    )
    result = build(site_kb)
    assert result.returncode == 1
    assert re.search(r"docs/lost\.md:\d+:\d+: \w+\[page-not-in-path\]", result.stderr)
    assert re.search(
        r"docs/a\.md:\d+:\d+: error\[prerequisite-cycle\].*a\.md -> b\.md", result.stderr
    )
    assert "docs/b.md" in result.stderr


def test_archived_pages_leave_the_nav_but_stay_reachable(site_kb):
    site_kb.page(
        "old.md", "---\ntitle: Old page\nstatus: archived\nlevel: beginner\n---\n# Old page\n"
    )
    result = build(site_kb, "--strict")
    assert result.returncode == 0, result.stderr
    home = (site_kb.root / "site" / "index.html").read_text("utf-8")
    assert "Old page" not in home
    assert (site_kb.root / "site" / "old" / "index.html").is_file()


def test_a_bad_manifest_is_a_clear_build_error(site_kb):
    (site_kb.root / "upstreams.yaml").write_text("upstreams: [oops\n", "utf-8")
    result = build(site_kb)
    assert result.returncode == 1
    assert "upstreams.yaml" in result.stderr and "not valid YAML" in result.stderr


def test_a_pin_not_in_its_clone_is_a_clear_build_error(site_kb):
    """The build dumped a traceback ending in the manifest's error, where `kb verify` says it
    in a line with a hint."""
    site_kb.upstreams["lib"]["pin"] = "1" * 40
    site_kb.write_manifest()
    result = build(site_kb)
    assert result.returncode == 1
    assert f"pinned commit {'1' * 40} is not in the clone" in result.stderr
    assert "hint: run `kb upstreams fetch lib`" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_mermaid_option_naming_no_file_is_a_clear_error(site_kb):
    config = site_kb.root / "mkdocs.yml"
    text = re.sub(
        r"      mermaid: .*\n", "      mermaid: nowhere/mermaid.min.js\n", config.read_text()
    )
    config.write_text(text, "utf-8")
    site_kb.page(
        "diagram.md",
        "---\ntitle: D\npaths: [start]\n---\n# D\n\n```mermaid\ngraph TD\n  A --> B\n```\n",
    )
    result = build(site_kb)
    assert result.returncode == 1
    assert "the plugin's option `mermaid: nowhere/mermaid.min.js` names no file" in result.stderr
    assert "remove the option to serve the pinned Mermaid 11.17.2" in result.stderr
    assert not (site_kb.root / "site" / "index.html").exists()


# ---------------------------------------------------------------------------------------------
# Publishing


def test_the_workflows_only_call_make_targets_that_exist():
    import yaml

    targets = set(re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text("utf-8"), re.M))
    runs = []
    for workflow in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        data = yaml.safe_load(workflow.read_text("utf-8"))
        for job in data["jobs"].values():
            runs += [step["run"] for step in job.get("steps", []) if "run" in step]
    assert runs
    for run in runs:
        words = run.split()
        make = words.index("make")
        named = list(itertools.takewhile(lambda w: "=" not in w, words[make + 1 :]))
        assert named and set(named) <= targets, run
    assert any("--format github" in run and "verify" in run for run in runs)
    assert any(run.strip() == "make site" for run in runs)


def test_the_pre_commit_hook_runs_the_verifier(demo_kb):
    import subprocess
    import sys

    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    assert hook["id"] == "verify-code-refs" and hook["pass_filenames"] is False
    command = hook["entry"].split()
    assert command[:2] == ["kb", "verify"]  # kb is `python -m generator`, installed
    result = subprocess.run(
        [sys.executable, "-m", "generator", *command[1:], "--format", "github"],
        cwd=demo_kb,
        capture_output=True,
        text=True,
        check=False,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all good" in result.stdout


# ---------------------------------------------------------------------------------------------
# The spec board, a page of the site


def board_rows(html: str) -> list[list[str]]:
    """The cells of every table row, as text; a cell's lines (``<br>``) end with a newline."""
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    return [
        [
            re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", "\n", cell)).strip()
            for cell in re.findall(r"<t[dh]>(.*?)</t[dh]>", r)
        ]
        for r in rows
    ]


VERDICTS = {"met", "not met", "n/a", "not measured (checks ignored)"}


def board_criteria(rows: list[list[str]]) -> dict[str, list[str]]:
    """Each criterion's row of the board: title -> [result, detail]."""
    return {row[0]: row[1:] for row in rows if len(row) == 3 and row[1] in VERDICTS}


def test_the_spec_board_is_a_generated_page_of_the_demo_site(demo_site):
    assert not (demo_site / "docs" / "board.md").exists()  # generated, never written to docs/
    page = html_of(demo_site, "board")
    assert "minitrain knowledge base" in page and "001-minitrain-knowledge-base" in page
    assert "Acceptance criteria: 5 of 5 met" in page
    # The demo collection's spec comes first; the knowledge base's own spec follows it.
    collection = page.split("002-knowledge-base", 1)[0]
    rows = board_rows(collection)
    criteria = board_criteria(rows)
    verdict, detail = criteria["all code references valid at their pin"]
    assert verdict == "met" and re.fullmatch(r"0 of [1-9]\d* references invalid", detail)
    deep_dives = sum(
        "\nkind: pr-deep-dive\n" in p.read_text("utf-8") for p in (ROOT / "docs").rglob("*.md")
    )
    verdict, detail = criteria["every required diagram present"]
    assert verdict == "met" and detail.startswith(f"0 of {deep_dives} pages")
    verdict, detail = criteria["every page in a learning path"]
    assert verdict == "met" and re.fullmatch(r"0 of [1-9]\d* pages in no path", detail)
    # Pages grouped by status, each with its reference health and required diagrams.
    headings = re.findall(r"<h4[^>]*>(.*?)<", page)
    from collections import Counter

    from generator.kb.pages import read_page

    statuses = Counter(read_page(p).meta.get("status") for p in (ROOT / "docs").rglob("*.md"))
    lifecycle = ("draft", "planned", "in-progress", "complete", "archived")
    assert headings == [f"{s} ({statuses[s]})" for s in lifecycle if statuses[s]]
    pr = next(row for row in rows if row[0].startswith("PR #2 deep dive"))
    assert pr[1].split("\n")[:3] == [
        "53 refs: 0 errors, 0 warnings",
        "0 broken links",
        "diagrams 4/4 met",
    ]
    assert 'href="../analysis/pr-2-grad-clip-offload/"' in page
    # A path's index page is in no path: it says whose index it is.
    index = next(row for row in rows if row[0].startswith("Beginner learning path"))
    assert index[2] == "index of beginner"
    # In the nav, from every page.
    assert 'href="board/"' in html_of(demo_site, "") and "Spec board" in html_of(demo_site, "")


@pytest.fixture
def governed_kb(site_kb):
    """The small knowledge base governed by a spec (every page names it)."""
    root = site_kb.root
    spec = root / "specs" / "001-lib-notes" / "README.md"
    spec.parent.mkdir(parents=True)
    spec.write_text(
        "---\nstatus: in-progress\ncreated: '2025-01-01'\n---\n\n# Lib notes\n\n"
        "## Overview\n\nNotes on lib.\n\n## Plan\n\n- [x] one page\n- [ ] a PR deep dive\n",
        "utf-8",
    )
    lifecycle = "status: complete\ncreated: '2025-01-02'\nspec: 001-lib-notes\n"
    for rel in ("index.md", "paths/start.md", "one.md"):
        path = root / "docs" / rel
        path.write_text(path.read_text("utf-8").replace("---\n", "---\n" + lifecycle, 1))
    return site_kb


PR_DEEP_DIVE = """\
---
title: PR 7
kind: pr-deep-dive
status: complete
created: '2025-01-03'
spec: 001-lib-notes
level: beginner
paths: [start]
upstream: lib
---
# PR 7

`nosuch()` is at `lib/core.py:6-7`.

## 2. Big picture

### 2.1 Before vs after

```mermaid
graph LR
  A --> B
```

## 4. Execution path

### 4.2 Call chain

```mermaid
graph TD
  A --> B
```

### 4.3 Data flow

N/A - nothing flows.
"""


def test_the_board_page_shows_missing_diagrams_and_ref_health_from_this_build(governed_kb):
    governed_kb.page("pr.md", PR_DEEP_DIVE, dedent=False)
    result = build(governed_kb, "--no-strict")
    assert result.returncode == 0, result.stderr
    assert "docs/pr.md:26:1: warning[diagram-missing] section 4.2 (call chain)" in result.stderr
    assert "warning[diagram-missing] section 5 (module relationships) is missing" in result.stderr
    assert result.stderr.count("knowledge-base: checked") == 1
    page = (governed_kb.root / "site" / "board" / "index.html").read_text("utf-8")
    rows = board_rows(page)
    criteria = board_criteria(rows)
    verdict, detail = criteria["every required diagram present"]
    assert verdict == "not met" and detail.startswith("1 of 1 pages that require diagrams")
    assert criteria["all code references valid at their pin"] == [
        "met",
        "0 of 2 references invalid",
    ]
    pr = next(row for row in rows if row[0] == "PR 7")
    refs, links, diagrams = pr[1].split("\n")[:3]
    assert refs == "1 ref: 0 errors, 1 warning"  # the symbol was not found
    assert links == "0 broken links"
    assert diagrams.startswith("diagrams 2/4: section 4.2 (call chain) has a graph, not a Mermaid")
    assert "section 5 (module relationships) is missing" in diagrams
    assert "Computed by this build from its own verification: 4 pages" in page
    assert not (governed_kb.root / "docs" / "board.md").exists()
    # --strict fails on the missing diagrams (warnings).
    assert build(governed_kb, "--strict").returncode == 1


def test_the_board_never_calls_a_criterion_met_whose_checks_were_ignored(governed_kb):
    broken = PR_DEEP_DIVE.replace("`lib/core.py:6-7`", "`lib/core.py:6-7` and `lib/gone.py:1-2`")
    governed_kb.page("pr.md", broken, dedent=False)
    config = governed_kb.root / "mkdocs.yml"
    text = config.read_text("utf-8")
    marker = "  - knowledge-base:\n"
    config.write_text(
        text.replace(marker, f"{marker}      ignore: [file-missing, anchor-missing]\n"), "utf-8"
    )
    result = build(governed_kb, "--no-strict")
    assert result.returncode == 0, result.stderr  # the broken reference is not reported
    page = (governed_kb.root / "site" / "board" / "index.html").read_text("utf-8")
    criteria = board_criteria(board_rows(page))
    assert criteria["all code references valid at their pin"] == [
        "not measured (checks ignored)",
        "not measured: file-missing ignored",
    ]
    assert criteria["no broken link or anchor"][0] == "not measured (checks ignored)"
    assert criteria["every required diagram present"][0] == "not met"  # measured as usual
    assert "2 not measured (checks ignored)" in page


def test_the_board_reuses_the_builds_verification(governed_kb, monkeypatch):
    """One verification per build: the board is computed from its report, never verified again."""
    from mkdocs.commands.build import build as build_site
    from mkdocs.config import load_config

    verify_module = importlib.import_module("generator.verification.pipeline")
    # Written to a file: the build verifies in a child process.
    calls = governed_kb.root.parent / "verify-calls"
    original = verify_module.Verifier.verify

    def counting(self, files, progress=None):  # type: ignore[no-untyped-def]
        with calls.open("a", encoding="utf-8") as record:
            record.write(f"{len(files)}\n")
        return original(self, files, progress)

    monkeypatch.setattr(verify_module.Verifier, "verify", counting)
    monkeypatch.setattr(verify_module, "verify", lambda *a, **k: pytest.fail("verified again"))
    monkeypatch.chdir(governed_kb.root)
    config = load_config(str(governed_kb.root / "mkdocs.yml"))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build_site(config)
    finally:
        config.plugins.on_shutdown()
    assert calls.read_text("utf-8").split() == ["3"]
    page = (governed_kb.root / "site" / "board" / "index.html").read_text("utf-8")
    assert "Lib notes" in page and "3 pages, 1 code references" in page


@pytest.mark.skipif(not can_fork(), reason="the build verifies in this process")
def test_a_verification_process_that_dies_fails_the_build_before_anything_is_written(
    site_kb, monkeypatch, caplog
):
    from mkdocs.commands.build import build as build_site
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    verify_module = importlib.import_module("generator.verification.pipeline")
    builder = os.getpid()

    def dies(self, files, progress=None):  # type: ignore[no-untyped-def]
        if os.getpid() == builder:
            pytest.fail("verified in the building process")
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would

    monkeypatch.setattr(verify_module.Verifier, "verify", dies)
    monkeypatch.chdir(site_kb.root)
    config = load_config(str(site_kb.root / "mkdocs.yml"))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        with pytest.raises(Abort):
            build_site(config)
    finally:
        config.plugins.on_shutdown()
    assert (
        "knowledge-base: the verification failed: the background process ended without "
        "finishing its work (killed by SIGKILL)"
    ) in caplog.text
    assert not list((site_kb.root / "site").rglob("*.html"))


def test_no_board_without_specs(site_kb):
    result = build(site_kb, "--strict")
    assert result.returncode == 0, result.stderr
    assert not (site_kb.root / "site" / "board").exists()
    assert "Spec board" not in (site_kb.root / "site" / "index.html").read_text("utf-8")


def test_references_written_apart_from_their_path_link_their_lines():
    from generator.refs.extract import extract_refs

    source = textwrap.dedent(
        """\
        | 文件 | 行号 |
        |---|---|
        | `lib/a.py` | 10-20 |

        See `lib/b.py` (lines 3-4); calls at lib/c.py:5, 9. Entry `lib/d.py:main()`.
        """
    )
    refs = [ResolvedRef(ref, "lib", PIN, ref.path) for ref in extract_refs(scan(source), "p.md")]
    assert [r.ref.style for r in refs] == ["table", "phrase", "inline", "list", "symbol"]
    output = apply_links(source, plan_links(scan(source), refs, {"lib": UPSTREAM}))
    html = markdown.markdown(output, extensions=["tables"])
    base = f"https://github.com/acme/lib/blob/{PIN}"
    assert f'<td><a href="{base}/lib/a.py#L10-L20" title="lib@79841b4">10-20</a></td>' in html
    assert f'(lines <a href="{base}/lib/b.py#L3-L4" title="lib@79841b4">3-4</a>)' in html
    assert f'<a href="{base}/lib/c.py#L9" title="lib@79841b4">9</a>.' in html
    assert f'<a href="{base}/lib/d.py" title="lib@79841b4"><code>lib/d.py:main()</code></a>' in html


def test_lines_beside_a_path_link_their_lines():
    from generator.refs.extract import extract_refs

    source = "The loop is `lib/e.py` (L5-L7), its head `lib/e.py`:5.\n"
    refs = [ResolvedRef(ref, "lib", PIN, ref.path) for ref in extract_refs(scan(source), "p.md")]
    output = apply_links(source, plan_links(scan(source), refs, {"lib": UPSTREAM}))
    html = markdown.markdown(output)
    base = f"https://github.com/acme/lib/blob/{PIN}"
    assert f'(<a href="{base}/lib/e.py#L5-L7" title="lib@79841b4">L5-L7</a>)' in html
    assert f'<code>lib/e.py</code>:<a href="{base}/lib/e.py#L5" title="lib@79841b4">5</a>.' in html


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"web_url": "javascript:alert(document.domain)//"}, "upstreams.lib.web_url"),
        (
            {"code_url": "javascript:alert(1)//{web_url}/{commit}/{path}#L{start}"},
            "upstreams.lib.code_url",
        ),
        ({"code_url": "{web_url}/{commit}/{path}#L{start:>30000000}"}, "upstreams.lib.code_url"),
    ],
    ids=["javascript-web-url", "javascript-code-url", "huge-format-spec"],
)
def test_a_hostile_link_pattern_in_the_manifest_fails_the_build(site_kb, spec, key):
    site_kb.upstreams["lib"].update(spec)
    site_kb.write_manifest()
    result = build(site_kb, "--strict")
    assert result.returncode != 0
    assert key in result.stderr, result.stderr
    assert not list((site_kb.root / "site").rglob("one/index.html"))


def test_the_board_links_pages_whose_names_hold_a_hash_space_or_chinese(governed_kb):
    """`hash#name.md` was linked as `hash#name.md`: MkDocs took `#name.md` for an anchor,
    and `--strict` failed on a link to a file the user does not have."""
    body = (
        "---\ntitle: {title}\nkind: index\nspec: 001-lib-notes\nstatus: draft\n"
        "created: '2025-01-03'\n---\n# {title}\n\nText.\n"
    )
    governed_kb.page("h/hash#name.md", body.format(title="Hash"), dedent=False)
    governed_kb.page("h/中文 页.md", body.format(title="中文"), dedent=False)
    result = build(governed_kb, "--no-strict")
    assert result.returncode == 0, result.stderr
    assert "unrecognized relative link" not in result.stderr
    page = (governed_kb.root / "site" / "board" / "index.html").read_text("utf-8")
    assert 'href="../h/hash%23name/"' in page
    assert 'href="../h/%E4%B8%AD%E6%96%87%20%E9%A1%B5/"' in page

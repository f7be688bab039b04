"""A team's own mkdocs.yml with only the plugin added: Markdown written for GitHub renders as on
GitHub, anchors the verifier accepts are anchors the site has, and Mermaid comes from the site
without a make step."""

from __future__ import annotations

import base64
import hashlib
import html
import http.server
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import markdown
import pytest
from mkdocs.config import load_config

from generator.site.gfm import GitHubBlocksPreprocessor
from generator.site.markdown_config import MarkdownConfigError, configure_markdown
from generator.site.mermaid import (
    PINNED,
    MermaidRelease,
    MermaidUnavailable,
    cached_path,
    pinned_mermaid,
)
from tests.conftest import ROOT

THIRD_PARTY_MKDOCS = "site_name: Team notes\ntheme: material\nplugins: [knowledge-base]\n"


def test_the_readme_shows_the_mkdocs_yml_these_tests_build():
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("**What the plugin configures by itself.**") :]
    assert section.split("```yaml\n", 1)[1].split("```", 1)[0] == THIRD_PARTY_MKDOCS


def loaded_config(root: Path, text: str = THIRD_PARTY_MKDOCS):
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(text, "utf-8")
    return load_config(str(root / "mkdocs.yml"))


def plugin_markdown(root: Path, text: str = THIRD_PARTY_MKDOCS) -> markdown.Markdown:
    """Python-Markdown set up as the plugin sets up a team's mkdocs.yml."""
    config = loaded_config(root, text)
    configure_markdown(config, github_markdown=True)
    return markdown.Markdown(
        extensions=config.markdown_extensions, extension_configs=config.mdx_configs
    )


def structure(rendered: str) -> str:
    """The HTML's elements and text, without classes, wrappers and white space."""
    rendered = re.sub(r'\s(class|id|href|title|value)="[^"]*"', "", rendered)
    rendered = re.sub(r"</?(div|span|label|sup)[^>]*>", "", rendered)
    return re.sub(r"\s+", "", rendered)


# What GitHub (CommonMark) makes of each: the lists' structure is the point.
GITHUB_RENDERINGS = [
    ("Intro:\n- a\n- b\n", "<p>Intro:</p><ul><li>a</li><li>b</li></ul>"),
    ("Steps:\n1. one\n2. two\n", "<p>Steps:</p><ol><li>one</li><li>two</li></ol>"),
    (
        "要点：\n- 第一\n- 第二\n  - 子项\n",
        "<p>要点：</p><ul><li>第一</li><li>第二<ul><li>子项</li></ul></li></ul>",
    ),
    (
        "- a\n  - b\n    - c\n      - d\n  - e\n",
        "<ul><li>a<ul><li>b<ul><li>c<ul><li>d</li></ul></li></ul></li><li>e</li></ul></li></ul>",
    ),
    ("- a\n    - b\n- c\n", "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>"),
    (
        "- a\n  - b\n- c\n    - d\n",
        "<ul><li>a<ul><li>b</li></ul></li><li>c<ul><li>d</li></ul></li></ul>",
    ),
    ("1. a\n   - b\n2. c\n", "<ol><li>a<ul><li>b</li></ul></li><li>c</li></ol>"),
    ("- item\n  text more\n  - sub\n", "<ul><li>itemtextmore<ul><li>sub</li></ul></li></ul>"),
    ("- a\nlazy\n- b\n", "<ul><li>alazy</li><li>b</li></ul>"),
    (
        "Do this:\n- step\n  ```bash\n  ls -l\n  ```\n- next\n",
        "<p>Dothis:</p><ul><li>step<pre><code>ls-l</code></pre></li><li>next</li></ul>",
    ),
    (
        "- step\n\n  ```python\n  x = 1\n  ```\n- next\n",
        "<ul><li><p>step</p><pre><code>x=1</code></pre></li><li><p>next</p></li></ul>",
    ),
    (
        "步骤：\n1. 安装\n   ```bash\n   pip install x\n   ```\n2. 运行\n   - 子步骤\n",
        "<p>步骤：</p><ol><li>安装<pre><code>pipinstallx</code></pre></li><li>运行<ul><li>子步骤</li></ul></li></ol>",
    ),
    (
        "- a\n\n  second para\n- b\n",
        "<ul><li><p>a</p><p>secondpara</p></li><li><p>b</p></li></ul>",
    ),
    (
        "- a\n\n        code line\n- b\n",
        "<ul><li><p>a</p><pre><code>codeline</code></pre></li><li><p>b</p></li></ul>",
    ),
    (
        "> intro\n> - a\n> - b\n",
        "<blockquote><p>intro</p><ul><li>a</li><li>b</li></ul></blockquote>",
    ),
    (
        "Text\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        "<p>Text</p><table><thead><tr><th>a</th><th>b</th></tr></thead>"
        "<tbody><tr><td>1</td><td>2</td></tr></tbody></table>",
    ),
    (
        "<details>\n<summary>More</summary>\n\n- a\n- b\n\n</details>\n",
        "<details><summary>More</summary><ul><li>a</li><li>b</li></ul></details>",
    ),
    (
        "- [ ] todo\n- [x] done\n",
        '<ul><li><inputtype="checkbox"disabled/>todo</li>'
        '<li><inputtype="checkbox"disabledchecked/>done</li></ul>',
    ),
    ("~~gone~~ H~2~O\n", "<p><del>gone</del>H~2~O</p>"),
    # What is not a list on GitHub stays what it is.
    ("Year\n2019. was good\n", "<p>Year2019.wasgood</p>"),
    ("Title\n---\n", "<h2>Title</h2>"),
    ("text\n- - -\n", "<p>text</p><hr/>"),
    ("a - b\nc -d\n", "<p>a-bc-d</p>"),
    (
        "Text\n\n    - not a list\n    code\n\nafter\n",
        "<p>Text</p><pre><code>-notalistcode</code></pre><p>after</p>",
    ),
    ("<pre>\nfoo\n- bar\n</pre>\n", "<pre>foo-bar</pre>"),
    ("Text\n```py\n- x\n```\n", "<p>Text</p><pre><code>-x</code></pre>"),
]


@pytest.mark.parametrize(("source", "expected"), GITHUB_RENDERINGS)
def test_markdown_written_for_github_renders_as_on_github(tmp_path, source, expected):
    assert structure(plugin_markdown(tmp_path).convert(source)) == expected


def test_footnotes_render_as_footnotes(tmp_path):
    rendered = plugin_markdown(tmp_path).convert(
        "Claim.[^1] 另一个。[^注]\n\n[^1]: A note.\n[^注]: 注释。\n"
    )
    assert '<a class="footnote-ref" href="#fn:1">1</a>' in rendered
    assert '<li id="fn:注">' in rendered and "A note." in rendered


PYTHON_MARKDOWN_PAGE = """\
Intro paragraph.

- item one
    - nested four spaces in
        - deeper

1. first

    A second paragraph of the first item.

2. second

```python
def f():
    - not a list
```

    indented code
    - not a list either

> quote
"""


def test_a_page_written_for_python_markdown_is_left_as_it_is(tmp_path):
    """What Python-Markdown and GitHub read alike is not touched (code indented in a list item
    is not among it: GitHub counts its spaces from the item's text, so the rewrite does too)."""
    md = plugin_markdown(tmp_path)
    lines = PYTHON_MARKDOWN_PAGE.split("\n")
    assert GitHubBlocksPreprocessor(md).run(list(lines)) == lines


# ---------------------------------------------------------------------------------------------
# What the plugin adds to a team's mkdocs.yml, and what it leaves


def test_the_plugin_adds_what_it_needs_to_a_bare_mkdocs_yml(tmp_path):
    config = loaded_config(tmp_path)
    added = configure_markdown(config, github_markdown=True)
    assert added == [
        "generator.site.anchors",
        "footnotes",
        "md_in_html",
        "pymdownx.tasklist",
        "pymdownx.tilde",
        "pymdownx.superfences",
        "generator.site.gfm",
    ]
    fences = config.mdx_configs["pymdownx.superfences"]["custom_fences"]
    assert [(fence["name"], fence["class"]) for fence in fences] == [("mermaid", "mermaid")]
    # Configuring twice (mkdocs serve reloads) adds nothing more.
    assert configure_markdown(config, github_markdown=True) == []


def test_extensions_the_user_configured_keep_their_options(tmp_path):
    config = loaded_config(
        tmp_path,
        THIRD_PARTY_MKDOCS
        + textwrap.dedent(
            """\
            markdown_extensions:
              - markdown.extensions.footnotes:
                  BACKLINK_TEXT: "^"
              - pymdownx.tasklist:
                  custom_checkbox: false
              - pymdownx.superfences:
                  custom_fences:
                    - name: math
                      class: arithmatex
                      format: !!python/name:pymdownx.superfences.fence_code_format
              - toc:
                  permalink: true
            """
        ),
    )
    added = configure_markdown(config, github_markdown=True)
    assert added == ["generator.site.anchors", "md_in_html", "pymdownx.tilde", "generator.site.gfm"]
    assert config.mdx_configs["markdown.extensions.footnotes"] == {"BACKLINK_TEXT": "^"}
    assert config.mdx_configs["pymdownx.tasklist"] == {"custom_checkbox": False}
    fences = config.mdx_configs["pymdownx.superfences"]["custom_fences"]
    assert [fence["name"] for fence in fences] == ["math", "mermaid"]
    assert config.mdx_configs["toc"]["permalink"] is True


def test_a_list_extension_the_user_chose_is_left_to_handle_lists(tmp_path):
    config = loaded_config(tmp_path)
    config.markdown_extensions.append("mdx_truly_sane_lists")
    assert "generator.site.gfm" not in configure_markdown(config, github_markdown=True)


def test_a_team_can_opt_out_of_github_markdown_but_not_of_githubs_anchors(tmp_path):
    config = loaded_config(tmp_path)
    assert configure_markdown(config, github_markdown=False) == ["generator.site.anchors"]


def test_a_toc_slugify_of_another_kind_is_refused_with_the_option_and_the_fix(tmp_path):
    config = loaded_config(
        tmp_path,
        THIRD_PARTY_MKDOCS
        + "markdown_extensions:\n  - toc:\n"
        + "      slugify: !!python/name:markdown.extensions.toc.slugify\n",
    )
    with pytest.raises(MarkdownConfigError) as error:
        configure_markdown(config, github_markdown=True)
    message = str(error.value)
    assert "markdown_extensions: toc: slugify to markdown.extensions.toc.slugify" in message
    assert "!!python/name:generator.refs.slugs.slugify" in message


# ---------------------------------------------------------------------------------------------
# Real builds of a team's own mkdocs.yml


def mkdocs(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "NO_COLOR": "1",
        "PYTHONPATH": str(ROOT),
        **env,
    }
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


GITHUB_PAGE = """\
---
title: Overview
---
# 概览

See [setup](#setup), [the second setup](#setup-1), [中文](#中文-标题) and
[the other page's heading](other.md#another-heading).
Where `alpha()` is defined:
- `lib/core.py:6-7`
  - and nested, with a note.[^1]

## Setup

- [ ] a task
- [x] a task done

## Setup

1. Install:
   ```bash
   pip install lib
   ```
2. Run it.

## 中文 标题

| a | b |
|---|---|
| 1 | 2 |

<details>
<summary>More</summary>

- hidden
- list

</details>

[^1]: A footnote, not a link.
"""


@pytest.fixture
def team_kb(lib_kb, tmp_path):
    """A team's knowledge base: its own minimal mkdocs.yml, the plugin and nothing else."""
    (lib_kb.root / "mkdocs.yml").write_text(THIRD_PARTY_MKDOCS, "utf-8")
    lib_kb.page("index.md", GITHUB_PAGE)
    lib_kb.page("other.md", "---\ntitle: Other\n---\n# Other\n\n## Another heading\n\nText.\n")
    lib_kb.cache = tmp_path / "user-cache"  # type: ignore[attr-defined]
    return lib_kb


def anchors_resolve(site: Path, page: str) -> list[str]:
    """Every link of the page's article to an anchor, with whether the target has that id."""
    text = (site / page).read_text("utf-8")
    article = text[text.index("<article") : text.index("</article>")]
    missing = []
    for href in re.findall(r'href="((?!https?:)[^"]*#[^"]+)"', article):
        path, _, anchor = html.unescape(href).partition("#")
        target = (site / page).parent / path / "index.html" if path else site / page
        if f'id="{anchor}"' not in target.resolve().read_text("utf-8"):
            missing.append(href)
    return missing


def test_a_team_mkdocs_yml_with_only_the_plugin_builds_github_markdown_strict(team_kb):
    result = mkdocs(team_kb.root, "--strict", XDG_CACHE_HOME=str(team_kb.cache))
    assert result.returncode == 0, result.stderr
    assert "0 errors, 0 warnings" in result.stderr
    assert "does not contain an anchor" not in result.stderr
    site = team_kb.root / "site"
    full = (site / "index.html").read_text("utf-8")
    page = full[full.index("<article") : full.index("</article>")]
    assert re.search(
        r'<ul>\s*<li><a href="https://github.com/acme/lib/blob/[0-9a-f]{40}/lib/'
        r'core.py#L6-L7"[^>]*><code>lib/core.py:6-7</code></a>\s*<ul>\s*<li>and nested',
        page,
    )
    assert '<h2 id="setup">' in page and '<h2 id="setup-1">' in page
    assert '<h2 id="中文-标题">' in page
    assert 'class="footnote-ref" href="#fn:1"' in page
    assert page.count('type="checkbox"') == 2
    assert re.search(r"<li>\s*<p>Install:</p>\s*<div[^>]*><pre>", page) or re.search(
        r"<li>Install:\s*<div[^>]*><pre>", page
    )
    assert "<table>" in page
    assert re.search(r"<details>\s*<summary>More</summary>\s*<ul>\s*<li>hidden</li>", page)
    # Every anchor the verifier accepted is one the site has (duplicates and CJK included).
    assert anchors_resolve(site, "index.html") == []
    # No diagram: no Mermaid needed, none fetched, none served.
    assert not (site / "assets" / "javascripts" / "mermaid.min.js").exists()
    assert "mermaid.min.js" not in full
    assert not cached_path(PINNED, team_kb.cache / "kb-generator" / "mermaid").exists()


def test_an_anchor_the_verifier_refuses_fails_the_build_before_the_site_is_written(team_kb):
    team_kb.page("index.md", GITHUB_PAGE.replace("(#setup-1)", "(#setup_1)"))
    result = mkdocs(team_kb.root, XDG_CACHE_HOME=str(team_kb.cache))
    assert result.returncode == 1
    assert "error[anchor-missing]" in result.stderr and "#setup_1" in result.stderr
    assert not (team_kb.root / "site" / "index.html").exists()


def test_a_toc_slugify_that_cannot_agree_fails_the_build_naming_the_option(team_kb):
    (team_kb.root / "mkdocs.yml").write_text(
        THIRD_PARTY_MKDOCS + "markdown_extensions:\n  - toc:\n      slugify: !!python/object/apply:"
        "pymdownx.slugs.slugify {kwds: {case: lower}}\n",
        "utf-8",
    )
    result = mkdocs(team_kb.root, XDG_CACHE_HOME=str(team_kb.cache))
    assert result.returncode == 1
    assert "knowledge-base: mkdocs.yml sets markdown_extensions: toc: slugify to" in result.stderr
    assert "remove that `slugify` line" in result.stderr
    assert not (team_kb.root / "site").exists()


def test_a_team_that_opts_out_gets_python_markdowns_reading(team_kb):
    (team_kb.root / "mkdocs.yml").write_text(
        "site_name: Team notes\ntheme: material\nplugins:\n"
        "  - knowledge-base:\n      github_markdown: false\n",
        "utf-8",
    )
    team_kb.page("index.md", "---\ntitle: Overview\n---\n# Overview\n\nIntro:\n- a\n- b\n")
    result = mkdocs(team_kb.root, "--strict", XDG_CACHE_HOME=str(team_kb.cache))
    assert result.returncode == 0, result.stderr
    page = (team_kb.root / "site" / "index.html").read_text("utf-8")
    assert "<p>Intro:\n- a\n- b</p>" in page


# ---------------------------------------------------------------------------------------------
# Mermaid without a make step


class Registry:
    """An npm registry on 127.0.0.1 serving tarballs by path, counting requests."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[str] = []
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                registry.requests.append(self.path)
                body = registry.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def registry() -> Iterator[Registry]:
    served = Registry({})
    yield served
    served.close()


def tarball(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def release_of(data: bytes, version: str = "0.0.1") -> MermaidRelease:
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
    return MermaidRelease(version, f"sha512-{digest}")


def test_the_pinned_mermaid_is_fetched_once_checked_and_kept(registry, tmp_path):
    script = b"window.mermaid = {};\n"
    data = tarball({"package/dist/mermaid.min.js": script, "package/README.md": b"x"})
    release = release_of(data)
    registry.files["/mermaid/-/mermaid-0.0.1.tgz"] = data
    path = pinned_mermaid(release, cache_dir=tmp_path, registry=registry.url)
    assert path == tmp_path / "0.0.1" / "mermaid.min.js" and path.read_bytes() == script
    assert pinned_mermaid(release, cache_dir=tmp_path, registry="http://127.0.0.1:9/") == path
    assert registry.requests == ["/mermaid/-/mermaid-0.0.1.tgz"]


def test_a_tarball_that_is_not_the_published_one_is_refused_and_nothing_kept(registry, tmp_path):
    published = tarball({"package/dist/mermaid.min.js": b"the real one"})
    registry.files["/mermaid/-/mermaid-0.0.1.tgz"] = tarball(
        {"package/dist/mermaid.min.js": b"alert('tampered')"}
    )
    with pytest.raises(MermaidUnavailable, match=r"is not Mermaid 0\.0\.1 as the npm registry"):
        pinned_mermaid(release_of(published), cache_dir=tmp_path, registry=registry.url)
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.parametrize(
    ("served", "message"),
    [
        (None, r"answered 404"),
        (b"not a tarball", r"has no package/dist/mermaid\.min\.js to serve"),
        (b"", r"has no package/dist/mermaid\.min\.js to serve"),
    ],
)
def test_a_registry_without_the_tarball_is_a_clear_error(registry, tmp_path, served, message):
    release = release_of(served or b"")
    if served is not None:
        registry.files["/mermaid/-/mermaid-0.0.1.tgz"] = served
    with pytest.raises(MermaidUnavailable, match=message):
        pinned_mermaid(release, cache_dir=tmp_path, registry=registry.url)
    assert list(tmp_path.rglob("*")) == []


def test_no_registry_in_reach_is_a_clear_error(tmp_path):
    with pytest.raises(MermaidUnavailable, match=r"cannot fetch Mermaid 11\.17\.2 from http://127"):
        pinned_mermaid(cache_dir=tmp_path, registry="http://127.0.0.1:9/")
    assert list(tmp_path.rglob("*")) == []


@pytest.fixture(scope="session")
def mermaid_tarball(tmp_path_factory) -> bytes:
    """The pinned release's tarball as npm has it (from npm's cache after `make mermaid`)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed to get the pinned Mermaid's tarball: install Node.js")
    destination = tmp_path_factory.mktemp("npm-pack")
    subprocess.run(
        [npm, "pack", f"mermaid@{PINNED.version}", "--prefer-offline", "--silent"],
        cwd=destination,
        check=True,
        capture_output=True,
    )
    return (destination / f"mermaid-{PINNED.version}.tgz").read_bytes()


DIAGRAM_PAGE = "---\ntitle: Diagram\n---\n# Diagram\n\n```mermaid\ngraph TD\n  A --> B\n```\n"


def test_a_team_site_serves_the_pinned_mermaid_fetched_on_its_first_build(
    team_kb, registry, mermaid_tarball
):
    registry.files[f"/mermaid/-/mermaid-{PINNED.version}.tgz"] = mermaid_tarball
    team_kb.page("diagram.md", DIAGRAM_PAGE)
    env = {"XDG_CACHE_HOME": str(team_kb.cache), "NPM_CONFIG_REGISTRY": registry.url}
    result = mkdocs(team_kb.root, "--strict", **env)
    assert result.returncode == 0, result.stderr
    site = team_kb.root / "site"
    served = (site / "assets" / "javascripts" / "mermaid.min.js").read_bytes()
    with tarfile.open(fileobj=io.BytesIO(mermaid_tarball)) as archive:
        member = archive.extractfile("package/dist/mermaid.min.js")
        assert member is not None and served == member.read()
    diagram = (site / "diagram" / "index.html").read_text("utf-8")
    assert '<pre class="mermaid"><code>graph TD' in diagram
    assert re.search(r'<script src="\.\./assets/javascripts/mermaid\.min\.js">', diagram)
    assert not re.search(r'src="https?://[^"]*mermaid', diagram)
    # Every later build reads it from the user's cache: no registry needed.
    registry.close()
    again = mkdocs(team_kb.root, "--strict", **env)
    assert again.returncode == 0, again.stderr
    assert (site / "assets" / "javascripts" / "mermaid.min.js").read_bytes() == served


def test_a_diagram_with_no_mermaid_to_be_had_fails_the_build_saying_what_to_do(team_kb):
    team_kb.page("diagram.md", DIAGRAM_PAGE)
    env = {"XDG_CACHE_HOME": str(team_kb.cache), "NPM_CONFIG_REGISTRY": "http://127.0.0.1:9/"}
    result = mkdocs(team_kb.root, **env)
    assert result.returncode == 1
    assert "a page draws a Mermaid diagram, and cannot fetch Mermaid 11.17.2" in result.stderr
    assert "set the plugin's option `mermaid:`" in result.stderr
    assert not (team_kb.root / "site" / "index.html").exists()
    assert not (team_kb.cache / "kb-generator" / "mermaid").exists()


def test_docs_without_a_home_page_get_one_listing_the_paths_and_pages(team_kb):
    (team_kb.docs / "index.md").rename(team_kb.docs / "overview.md")
    (team_kb.docs / "overview.md").write_text(
        GITHUB_PAGE.replace("title: Overview\n", "title: Overview\nlevel: beginner\n"), "utf-8"
    )
    result = mkdocs(team_kb.root, XDG_CACHE_HOME=str(team_kb.cache))
    assert result.returncode == 0, result.stderr
    site = team_kb.root / "site"
    home = (site / "index.html").read_text("utf-8")
    article = home[home.index("<article") : home.index("</article>")]
    assert re.search(r"<h1[^>]*>Team notes", article)  # the site's name (THIRD_PARTY_MKDOCS)
    assert 'href="overview/"' in article  # the pages, by level
    assert not (team_kb.docs / "index.md").exists()  # generated, never written into docs/

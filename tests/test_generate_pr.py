"""`python -m generator pr`: a PR deep-dive page from a real local HTTP server replaying GitHub.

The pull request is tests/test_github.py's fixture, built from real git history; that repository
is also the upstream clone of a temporary knowledge base, so the head commit is available locally
and the Key Functions Index comes from ``ast`` on the head blobs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.generate.pr import (
    detect_language,
    render_pr_page,
    symbols_from_hunks,
    symbols_from_source,
    touched_lines,
)
from generator.github.client import PullChanges, PullFile, PullRequest
from generator.kb.pages import read_page
from generator.model import Upstream
from generator.site.pagechecks import mermaid_findings
from generator.upstream.gitbuild import run_git
from tests import test_github as gh
from tests.conftest import KB
from tests.test_sanitize import EXTENSIONS, assert_harmless, parse

server = gh.server  # the replaying 127.0.0.1 server, as a fixture of this module

SECTIONS = ["1", "2", "2.1", "2.2", "3", "3.1", "3.2", "3.3", "4", "4.1", "4.2", "4.3", "4.4"]
SECTIONS += ["5", "6", "7", "7.1", "7.2", "7.3"]


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> tuple[KB, gh.FixturePR]:
    return gh.fixture_kb(tmp_path_factory.mktemp("pr-kb"))


def run_pr(kb: KB, server: gh.FakeGitHub, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    return gh.run_generator(kb, server, monkeypatch, "pr", *args)


def section_numbers(text: str) -> list[str]:
    return re.findall(r"(?m)^#{2,3} (\d+(?:\.\d+)?)\.? ", text)


def numstat(pr: gh.FixturePR) -> dict[str, tuple[int, int]]:
    fields = run_git(pr.repo, "diff", "-M", "--numstat", "-z", pr.base, pr.head).split("\0")
    counts: dict[str, tuple[int, int]] = {}
    index = 0
    while index < len(fields) - 1:
        adds, dels, path = fields[index].split("\t")
        if path == "":  # a rename: the old and the new name follow
            path, index = fields[index + 2], index + 3
        else:
            index += 1
        counts[path] = (0 if adds == "-" else int(adds), 0 if dels == "-" else int(dels))
    return counts


def test_pr_page_from_github(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    assert run_pr(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", str(gh.NUMBER)) == 0
    out = capsys.readouterr().out
    page = kb.docs / "analysis" / "pr-7-speed-up-the-widget-loader.md"
    assert f"wrote {page.relative_to(kb.root)}" in out
    assert "(ast)" in out
    text = page.read_text("utf-8")

    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["kind"] == "pr-deep-dive"
    assert (meta["pr"], meta["upstream"], meta["status"], meta["lang"]) == (
        7,
        "widgets",
        "draft",
        "en",
    )
    assert (meta["pin"], meta["base"]) == (pr.head, pr.base)
    assert meta["title"] == "PR #7 deep dive: Speed up the widget loader"
    assert section_numbers(text) == SECTIONS
    assert "| Author | [@alice](https://github.com/alice) |" in text
    assert "| State | merged |" in text
    assert f"`{pr.base}`" in text and f"`{pr.head}`" in text
    assert "TODO(author)" in text

    # 7.1: exactly git's counts, every file once.
    summary = text.split("### 7.1")[1].split("### 7.2")[0]
    listed = {
        m[1]: (int(m[2]), int(m[3]))
        for m in re.finditer(r"(?m)^(\S+)\s+\[\+(\d+), -(\d+)\]", summary)
    }
    assert listed == numstat(pr)

    # 2.2: renamed files with their old names; deleted ones are not references at the head.
    assert "| Renamed | `pkg/renamed/mod_210.py` ← pkg/mod\\_210.py |" in text
    assert "| Deleted | pkg/mod\\_200.py |" in text
    assert text.count("| New | `pkg/new/added_") == 30

    # 7.2: the touched definitions, each ref on its def/class line at the head commit.
    index = text.split("### 7.2")[1].split("### 7.3")[0]
    rows = re.findall(r"(?m)^\| `(\w+)(\(\))?` \| `([^`:]+):(\d+)` \| (NEW|MODIFIED)", index)
    assert len(rows) == 2 * 200 + 5  # func_i and Widget{i} in 200 modules, Widget{i} in 5 renamed
    heads: dict[str, list[str]] = {}
    for name, parens, path, line, change in rows:
        lines = heads.setdefault(path, run_git(pr.repo, "show", f"{pr.head}:{path}").split("\n"))
        keyword = "def" if parens else "class"
        assert lines[int(line) - 1].startswith(f"{keyword} {name}"), (path, line)
        assert change == "MODIFIED"
    assert ("func_0", "()", "pkg/mod_000.py", "4", "MODIFIED") in rows
    assert ("Widget212", "", "pkg/renamed/mod_212.py", "8", "MODIFIED") in rows

    # The mandatory diagrams: the changed files by directory, every one counted once.
    fences = re.findall(r"(?ms)^```mermaid\n(?:---\n.*?^---\n)?(\w+)(.*?)^```", text)
    assert [kind for kind, _ in fences] == ["graph", "sequenceDiagram", "graph", "classDiagram"]
    after = [label.split("<br>") for label in re.findall(r'(?m)^ +a\d+\["(.*)"\]$', fences[0][1])]
    assert sorted(lines[0] for lines in after) == ["assets/", "pkg/", "pkg/new/", "pkg/renamed/"]
    counted: dict[str, int] = {}
    for lines in after:
        for line in lines[1:]:
            for number, word in re.findall(r"(\d+) (new|modified|deleted|renamed)", line):
                counted[word] = counted.get(word, 0) + int(number)
            if listed := re.fullmatch(r"\S+ (NEW|MODIFIED|REMOVED|RENAMED)", line):
                word = {"NEW": "new", "REMOVED": "deleted"}.get(listed[1], listed[1].lower())
                counted[word] = counted.get(word, 0) + 1
    by_status: dict[str, int] = {}
    for entry in pr.files:
        word = {"added": "new", "removed": "deleted"}.get(entry["status"], entry["status"])
        by_status[word] = by_status.get(word, 0) + 1
    assert counted == by_status
    # The call chain and the data flow start with the modules the PR changed most.
    most = max(
        (f for f in pr.files if f["filename"].endswith(".py") and f["status"] != "removed"),
        key=lambda f: (f["additions"] + f["deletions"], [-ord(c) for c in f["filename"]]),
    )
    stem = most["filename"].rsplit("/", 1)[-1].removesuffix(".py")
    assert re.search(rf"(?m)^    participant m_{stem} as {stem}\.py<br>", fences[1][1])
    first_step = re.search(r'(?m)^    s1\["(.*)"\]$', fences[2][1])
    assert first_step and "".join(first_step[1].split("<br>")[:-1]) == most["filename"]
    assert "m_mod_000 --> c_Widget0 : defines" in fences[3][1]

    assert mermaid_findings(read_page(page)) == []
    report = kb.verify(str(page.relative_to(kb.root)))
    assert report.findings == []
    assert len(report.refs) >= len(rows)


def test_chinese_page_and_language_detection(
    widgets: tuple[KB, gh.FixturePR], server: gh.FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    chinese = {
        **pr.pull_json(server.url),
        "title": "加速组件加载",
        "body": "修复了加载缓慢的问题。",
    }
    server.add(gh.PULL, gh.Reply(body=chinese))
    assert run_pr(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", "7") == 0
    page = kb.docs / "analysis" / "pr-7.zh.md"
    text = page.read_text("utf-8")
    assert "lang: zh" in text and "### 7.2 关键函数索引" in text and "### 4.2 调用链" in text
    assert section_numbers(text) == SECTIONS
    assert kb.verify(str(page.relative_to(kb.root))).findings == []
    assert detect_language("Fix the loader", "中文说明 only a little") == "en"
    assert detect_language("修复梯度裁剪", "See https://example.com/x") == "zh"


def test_hostile_title_and_body_are_inert(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    hostile = {
        **pr.pull_json(server.url),
        "title": 'Fix <script>alert(1)</script> <img src=x onerror="alert(2)"> `x` \u202eevil',
        "body": "<!-- hidden -->\n<iframe src=javascript:alert(3)></iframe>\n"
        "[click](javascript:alert(4)) ![t](https://tracker.example/p.png)\n"
        "# Not a heading\n<details open ontoggle=alert(5)>x</details>\n\u200bzero width",
    }
    server.add(gh.PULL, gh.Reply(body=hostile))
    output = kb.docs / "analysis" / "hostile.md"
    assert run_pr(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", "7", "-o", str(output)) == 0
    text = output.read_text("utf-8")
    prose = re.sub(r"(?ms)^```mermaid\n.*?^```", "", text)
    assert re.search(r"<[A-Za-z!/?]", prose) is None
    assert "](javascript:" not in text and "![" not in text
    assert "\u202e" not in text and "\u200b" not in text
    assert "\n# Not a heading" not in text and "\n> # Not" not in text
    meta = yaml.safe_load(text.split("---\n")[1])
    assert "<" not in meta["title"] and ">" not in meta["title"]
    assert section_numbers(text) == SECTIONS
    assert kb.verify(str(output.relative_to(kb.root))).errors == 0


def test_unknown_repository_is_a_clear_error(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kb, _ = widgets
    assert run_pr(kb, server, monkeypatch, "other/thing", "7") == 2
    err = capsys.readouterr().err
    assert "other/thing is not an upstream" in err
    assert "acme/widgets (widgets)" in err
    assert server.requests == []  # nothing fetched for a repository the knowledge base lacks


def test_existing_page_is_kept_without_force(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    output = kb.docs / "analysis" / "existing.md"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("my notes\n", "utf-8")
    assert run_pr(kb, server, monkeypatch, "acme/widgets", "7", "--output", str(output)) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert output.read_text("utf-8") == "my notes\n"
    args = ("acme/widgets", "7", "--output", str(output), "--force")
    assert run_pr(kb, server, monkeypatch, *args) == 0
    assert output.read_text("utf-8").startswith("---\ntitle: 'PR #7 deep dive")


def test_the_pr_s_address_names_the_repository_and_number(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`kb pr https://github.com/acme/widgets/pull/7`, as copied from the browser, failed with
    "the following arguments are required: N"."""
    kb, pr = widgets
    gh.serve_pr(server, pr)
    output = kb.docs / "analysis" / "by-address.md"
    address = "https://github.com/acme/widgets/pull/7/files"
    assert run_pr(kb, server, monkeypatch, address, "--output", str(output)) == 0
    assert output.read_text("utf-8").startswith("---\ntitle: 'PR #7 deep dive")
    # An address and another number: which one is meant, it does not say.
    assert run_pr(kb, server, monkeypatch, address, "8", "--output", str(output), "--force") == 2
    assert "is pull request #7, not #8" in capsys.readouterr().err
    # Neither a number nor an address.
    assert run_pr(kb, server, monkeypatch, "acme/widgets", "--output", str(output)) == 2
    assert "expected OWNER/REPO N or the PR's address" in capsys.readouterr().err


def test_offline(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    kb, pr = widgets
    cache = tmp_path / "github-cache"
    output = tmp_path / "offline.md"
    offline = ("acme/widgets", "7", "-o", str(output), "--offline", "--cache-dir", str(cache))
    assert run_pr(kb, server, monkeypatch, *offline) == 1
    err = capsys.readouterr().err
    assert "offline: pull request acme/widgets#7 is not in the cache" in err
    assert "run once without --offline" in err
    assert not output.exists() and server.requests == []

    gh.serve_pr(server, pr)
    assert run_pr(kb, server, monkeypatch, *offline[:4], "--cache-dir", str(cache)) == 0
    online = output.read_text("utf-8")
    output.unlink()
    fetched = len(server.requests)
    assert run_pr(kb, server, monkeypatch, *offline) == 0
    assert len(server.requests) == fetched  # served from the cache alone
    assert output.read_text("utf-8") == online


def test_key_functions_from_hunk_headers_match_the_ast(widgets: tuple[KB, gh.FixturePR]) -> None:
    _, pr = widgets
    entry = next(f for f in pr.files if f["filename"] == "pkg/mod_003.py")
    from_hunks = symbols_from_hunks("pkg/mod_003.py", entry["patch"])
    source = run_git(pr.repo, "show", f"{pr.head}:pkg/mod_003.py") + "\n"
    added, deleted = touched_lines(entry["patch"])
    from_ast = symbols_from_source("pkg/mod_003.py", source, added, deleted)
    assert from_ast is not None
    assert [(s.name, s.ref, s.change) for s in from_hunks] == [
        ("func_3", "pkg/mod_003.py:4", "MODIFIED"),
        ("Widget3", "pkg/mod_003.py:8", "MODIFIED"),
    ]
    assert [(s.name, s.ref) for s in from_ast] == [(s.name, s.ref) for s in from_hunks]

    header_only = (
        "@@ -10,3 +12,4 @@ def far_away(x):\n     a = 1\n+    b = 2\n     c = 3\n     d = 4\n"
    )
    (symbol,) = symbols_from_hunks("pkg/x.py", header_only)
    assert (symbol.name, symbol.ref, symbol.exact) == ("far_away", "pkg/x.py:12-15", False)


HOSTILE_FILES = [
    "evil`name<script>alert('KBX-1')</script>.py",
    "a|b.py",
    "new\nline\u202e.py",
    'x"]; click a_x call alert("KBX-2") %%.py',
]


def test_hostile_file_names_without_a_local_head_build_harmless(tmp_path: Path) -> None:
    patch = (
        "@@ -1,2 +1,3 @@ class Loader:\n     def load(self):\n+        return 1\n         pass\n"
    )
    files = (
        *(PullFile(name, "modified", 1, 0, 1, patch=patch, sha="0" * 40) for name in HOSTILE_FILES),
        PullFile("pkg/old.py", "renamed", 0, 0, 0, previous_filename="<b>KBX-3</b>.py"),
    )
    data = {
        **gh.FixturePR(tmp_path, "a" * 40, "b" * 40, [], "").pull_json("https://api.github.com"),
        "title": "<svg onload=alert('KBX-4')>",
    }
    pull = PullRequest.from_json("acme", "widgets", data)
    upstream = Upstream(
        name="widgets", url="x", branch="main", pin="b" * 40, prefixes=("pkg/",),
        web_url="https://github.com/acme/widgets", clone_dir=tmp_path / "no-clone",
    )  # fmt: skip
    page = render_pr_page(pull, PullChanges(files, "", "files"), upstream)
    assert page.symbols_source == "hunks"
    assert "not in the clone of widgets" in page.text
    assert {(s.name, s.start, s.exact) for s in page.symbols} == {("load", 1, True)}
    summary = page.text.split("### 7.1")[1].split("### 7.2")[0]
    fenced = re.search(r"(?ms)^(`{3,})\n(.*?)\n\1$", summary)
    assert fenced is not None
    lines = fenced[2].split("\n")
    assert len(lines) == len(files) and all(re.search(r" \[\+\d+, -\d+\] ", x) for x in lines)
    for fence in re.findall(r"(?ms)^```mermaid\n(.*?)^```", page.text):
        assert all(line.count('"') % 2 == 0 for line in fence.split("\n"))
        labels = re.findall(r'"([^"]*)"', fence)
        labels += re.findall(r"(?m)^ *participant \w+ as (.*)$", fence)
        for label in labels:  # file names reduced to plain labels, in lines the template breaks
            for line in label.split("<br>"):
                assert re.fullmatch(r"[\w./\- ():,]*", line, re.ASCII), label

    docs = tmp_path / "site-src" / "docs"
    docs.mkdir(parents=True)
    (docs / "index.md").write_text(page.text, "utf-8")
    assert mermaid_findings(read_page(docs / "index.md")) == []
    (docs.parent / "mkdocs.yml").write_text(
        "site_name: hostile\ntheme:\n  name: material\nmarkdown_extensions:\n"
        + "".join(f"  - {name}\n" for name in EXTENSIONS),
        "utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet"],
        cwd=docs.parent,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    built = (docs.parent / "site" / "index.html").read_text("utf-8")
    doc = parse(built, only_article=True)
    assert_harmless(doc, allowed={"div"})
    for tag, attrs in parse(built).tags:
        for name, value in attrs.items():
            assert not (value and "KBX" in value), (tag, name, value)
    rows = [n for n in doc.names if n == "tr"]
    assert len(rows) >= 10 + len(files)  # metadata, scope and index tables kept their rows


def test_the_quoted_description_may_cite_what_the_pr_deletes(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Quoted GitHub text cites code as it was; it is not the page's claim, so not checked."""
    kb, pr = widgets
    gh.serve_pr(server, pr)
    body = "Removes `pkg/mod_200.py:1-3` (deleted here) and tidies `pkg/mod_000.py:5`."
    server.add(gh.PULL, gh.Reply(body={**pr.pull_json(server.url), "body": body}))
    output = kb.docs / "analysis" / "quoting.md"
    assert run_pr(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", "7", "-o", str(output)) == 0
    text = output.read_text("utf-8")
    assert "> Removes `pkg/mod_200.py:1-3` (deleted here)" in text
    report = kb.verify(str(output.relative_to(kb.root)))
    assert report.errors == 0
    assert not any(r.ref.text.startswith("pkg/mod_200.py") for r in report.refs)
    # The same citation outside the quote is the page's own claim, and is checked.
    output.write_text(text + "\nThe PR removes `pkg/mod_200.py:1-3`.\n", "utf-8")
    report = kb.verify(str(output.relative_to(kb.root)))
    assert [f.check for f in report.findings] == ["file-missing"]


def test_changed_files_are_grouped_by_directory_into_a_bounded_number_of_rows() -> None:
    from generator.generate.pr import MAX_DIAGRAM_DIRECTORIES, ChangedFile, directory_groups

    def files(paths: list[str]) -> list[ChangedFile]:
        return [ChangedFile(path, "modified", 1, 0) for path in paths]

    # 3,000 files under one top directory: grouped where they part, the smallest summed up.
    many = files([f"src/pkg{i % 181}/sub{i % 7}/m{i}.py" for i in range(3000)])
    groups = directory_groups(many)
    assert len(groups) == MAX_DIAGRAM_DIRECTORIES
    assert all(name.startswith("src/pkg") for name, _ in groups[:-1])
    assert groups[-1][0] == f"+{181 - (MAX_DIAGRAM_DIRECTORIES - 1)}"
    assert sorted(f.path for _, members in groups for f in members) == sorted(f.path for f in many)
    # Few directories: each its own row, at the deepest level that stays within the bound.
    few = files(["README.md", "a/b/c.py", "a/b/d.py", "a/e/f.py"])
    assert [(name, len(members)) for name, members in directory_groups(few)] == [
        ("", 1),
        ("a/b/", 2),
        ("a/e/", 1),
    ]

"""Scaffolding specs and pages: numbering, frontmatter, and that the result validates."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.kb.pages import read_page
from generator.kb.scaffold import PAGE_KINDS, new_page, new_spec, next_spec_number
from generator.kb.sections import KIND_SECTIONS, page_headings, section_status
from generator.kb.specs import validate
from generator.upstream.manifest import ConfigError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / ".lean-spec", tmp_path / ".lean-spec")
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path


def test_specs_are_numbered_like_leanspec(root):
    highest = max(int(p.name[:3]) for p in (ROOT / "specs").iterdir() if p.name[:3].isdigit())
    assert next_spec_number(root) == highest + 1
    (root / "specs/archived/007-old").mkdir(parents=True)
    created = new_spec(root, "Memory Path", today=dt.date(2025, 2, 1))
    assert created.id == "008-memory-path"
    page = read_page(created.path)
    assert page.meta["status"] == "planned"
    assert page.meta["created"] == "2025-02-01"
    assert page.body.lstrip().startswith("# Memory Path")


def test_a_spec_named_in_two_scripts_keeps_its_name_as_title_and_is_not_made_twice(root):
    """`new spec "显存管理 memory deep dives"` titled the spec "Memory Deep Dives", dropping
    the Chinese, and the same name again made a second spec beside the first."""
    created = new_spec(root, "显存管理  memory deep dives")
    assert created.id.endswith("-memory-deep-dives")
    assert read_page(created.path).body.lstrip().startswith("# 显存管理 memory deep dives\n")
    folders = sorted(p.name for p in (root / "specs").iterdir())
    with pytest.raises(
        ConfigError, match=f"a spec named 'memory-deep-dives' exists already: {created.id}"
    ):
        new_spec(root, "Memory deep dives")
    assert sorted(p.name for p in (root / "specs").iterdir()) == folders


def test_new_spec_refuses_bad_input(root):
    with pytest.raises(ConfigError):
        new_spec(root, "007-numbered")
    with pytest.raises(ConfigError):
        new_spec(root, "x", depends_on=["999"])
    with pytest.raises(ConfigError):
        new_spec(root, "x", status="done")


def test_new_page_validates_clean(root):
    created = new_page(
        root,
        root / "docs",
        kind="source-analysis",
        spec="001",
        title="Collectives in tinydist",
        level="advanced",
        paths=["advanced"],
        depends_on=["analysis/fsdp-actor-source-analysis.zh.md"],
        upstream="tinydist",
    )
    assert created.path == (root / "docs/analysis/collectives-in-tinydist.md").resolve()
    meta = read_page(created.path).meta
    assert meta["spec"] == "001-minitrain-knowledge-base"
    assert meta["status"] == "draft" and meta["kind"] == "source-analysis"
    assert validate(root, root / "docs") == []


def test_new_page_refuses_unknown_spec_and_kind(root):
    with pytest.raises(ConfigError):
        new_page(root, root / "docs", kind="source-analysis", spec="042", title="x")
    with pytest.raises(ConfigError):
        new_page(root, root / "docs", kind="novel", spec="001", title="x")


def test_a_scaffolded_pr_deep_dive_has_the_prompts_sections_and_asks_for_its_diagrams(root):
    created = new_page(
        root,
        root / "docs",
        kind="pr-deep-dive",
        spec="001",
        title="PR 9",
        level="advanced",
        paths=["advanced"],
    )
    text = created.path.read_text("utf-8")
    headings = [h.rstrip(".") for h in re.findall(r"^#{2,3} (\d[\d.]*) ", text, re.M)]
    assert headings == [
        "1",
        "2",
        "2.1",
        "2.2",
        "3",
        "3.1",
        "3.2",
        "3.3",
        "4",
        "4.1",
        "4.2",
        "4.3",
        "4.4",
        "5",
        "6",
        "7",
        "7.1",
        "7.2",
        "7.3",
    ]
    assert validate(root, root / "docs") == []  # a draft: diagrams are not asked for yet
    created.path.write_text(text.replace("status: draft", "status: complete"), "utf-8")
    missing = [f for f in validate(root, root / "docs") if f.check == "diagram-missing"]
    lines = text.splitlines()
    numbers = [lines[f.line - 1].split(" ", 2)[1].rstrip(".") for f in missing]
    assert numbers == ["2.1", "4.2", "4.3", "5"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", sorted(set(KIND_SECTIONS) & set(PAGE_KINDS)))
def test_a_new_page_has_every_section_its_kind_requires_in_order(root, kind, lang):
    created = new_page(root, root / "docs", kind=kind, spec="001", title=f"A new {kind}", lang=lang)
    page = read_page(created.path)
    status = section_status(kind, page_headings(page.body))
    assert status is not None
    assert [state.section.name for state in status.missing] == []
    assert status.out_of_order == []


@pytest.mark.parametrize("kind", sorted(PAGE_KINDS))
def test_a_chinese_page_gets_its_section_headings_in_chinese(root, kind):
    """`kb new page --lang zh` wrote English headings; `kb source --lang zh` and the PR
    drafts write Chinese ones."""
    created = new_page(root, root / "docs", kind=kind, spec="001", title="新页面", lang="zh")
    headings = [h.text for h in page_headings(read_page(created.path).body)][1:]
    assert headings
    assert all(re.search(r"[\u4e00-\u9fff]", text) for text in headings), headings


def kb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line, run as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    command = [sys.executable, "-m", "generator", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)


def test_a_page_titled_in_chinese_is_named_and_marked_in_chinese(tmp_path):
    """`kb new page --title 训练流程` wrote `docs/analysis/.md` (a dotfile the site never
    publishes) with `lang: en`, and the next Chinese title collided with it."""
    assert kb("init", "kb", cwd=tmp_path).returncode == 0
    root = tmp_path / "kb"
    for title in ("训练流程", "数据"):
        result = kb(
            "new", "page", "--kind", "source-analysis", "--spec", "001", "--title", title, cwd=root
        )
        assert result.returncode == 0, result.stderr
        page = read_page(root / "docs" / "analysis" / f"{title}.zh.md")
        assert page.meta["lang"] == "zh" and page.meta["title"] == title
    english = kb(
        "new",
        "page",
        "--kind",
        "source-analysis",
        "--spec",
        "001",
        "--title",
        "Data Packing",
        cwd=root,
    )
    assert english.returncode == 0
    assert read_page(root / "docs/analysis/data-packing.md").meta["lang"] == "en"
    assert not [p for p in (root / "docs").rglob(".*.md")]

    nameless = kb(
        "new", "page", "--kind", "source-analysis", "--spec", "001", "--title", "???", cwd=root
    )
    assert nameless.returncode == 2
    assert "has no letters or digits to name the page's file" in nameless.stderr
    spec = kb("new", "spec", "名字", cwd=root)
    assert spec.returncode == 2 and "has no ASCII letters or digits" in spec.stderr


def test_a_misspelt_upstream_is_refused_where_it_is_typed(tmp_path):
    """`kb new page --upstream toyrll` wrote a page the next `kb verify` failed on, and
    `kb pin suggest --upstream toyr` said the pages cite no code of it."""
    assert kb("init", "kb", cwd=tmp_path).returncode == 0
    root = tmp_path / "kb"
    manifest = root / "upstreams.yaml"
    with manifest.open("a", encoding="utf-8") as out:
        out.write("  toyrl:\n    url: https://github.com/o/toyrl\n    pin: " + "a" * 40 + "\n")
    page = ("new", "page", "--kind", "source-analysis", "--spec", "001", "--title", "Z")
    result = kb(*page, "--upstream", "toyrll", cwd=root)
    assert result.returncode == 2
    assert "unknown upstream: toyrll" in result.stderr
    assert "did you mean toyrl?" in result.stderr
    assert not (root / "docs" / "analysis").exists()
    assert kb(*page, "--upstream", "toyrl", cwd=root).returncode == 0
    suggest = kb("pin", "suggest", "docs", "--upstream", "toyr", cwd=root)
    assert suggest.returncode == 2 and "did you mean toyrl?" in suggest.stderr

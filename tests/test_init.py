"""``kb init``: a knowledge base of one's own, from nothing to a built site."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.kb.scaffold import init_knowledge_base
from generator.kb.specs import validate
from generator.upstream.manifest import ConfigError, load_manifest

ROOT = Path(__file__).resolve().parent.parent


def kb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"},
    )


def test_init_makes_a_knowledge_base_that_verifies_and_builds(tmp_path):
    made = kb("init", "team-notes", "--name", "训练框架 notes: RL", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "team-notes"
    assert "Created the knowledge base '训练框架 notes: RL' in team-notes/" in made.stdout
    assert "kb upstreams add NAME URL" in made.stdout  # it says what to do next
    # Sync rewrites only pages git tracks: a knowledge base outside a repository is told to
    # make one, one inside a repository is not.
    assert "git init && git add -A && git commit" in made.stdout
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    inside = kb("init", "notes", cwd=tmp_path / "repo")
    assert inside.returncode == 0 and "git init" not in inside.stdout
    config = yaml.load((root / "mkdocs.yml").read_text("utf-8"), Loader=yaml.Loader)
    assert config["site_name"] == "训练框架 notes: RL"  # its own name, not the demo's
    assert any("knowledge-base" in str(plugin) for plugin in config["plugins"])
    assert "minitrain" not in "".join(p.read_text("utf-8") for p in root.rglob("*") if p.is_file())
    assert load_manifest(root / "upstreams.yaml").upstreams == {}
    assert (root / "specs" / "001-team-notes" / "README.md").is_file()
    assert [f for f in validate(root, root / "docs") if f.severity.value == "error"] == []
    assert "/site/" in (root / ".gitignore").read_text("utf-8")
    hooks = yaml.safe_load((root / ".pre-commit-config.yaml").read_text("utf-8"))
    hook = hooks["repos"][0]["hooks"][0]
    assert hook["entry"] == "kb verify"
    assert "upstreams" in hook["files"] and "docs/" in hook["files"]
    workflow = yaml.safe_load((root / ".github/workflows/site.yml").read_text("utf-8"))
    steps = [step.get("run", "") for step in workflow["jobs"]["verify-and-build"]["steps"]]
    assert "kb verify --format github" in steps and "mkdocs build" in steps
    assert "kb-generator" in (root / "requirements.txt").read_text("utf-8")

    # The page the next steps suggest joins the only learning path: the build still passes.
    [suggested] = [line for line in made.stdout.splitlines() if "kb new page" in line]
    created = kb(*shlex.split(suggested.split("#")[0])[1:], cwd=root)
    assert created.returncode == 0, created.stderr
    assert "paths: start (the knowledge base's only path)" in created.stdout

    verified = kb("verify", cwd=root)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "checked 2 pages" in verified.stdout and "all good" in verified.stdout

    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr
    home = (root / "site" / "index.html").read_text("utf-8")
    assert "训练框架 notes: RL" in home  # a home page, so the header's logo leads somewhere
    assert (root / "site" / "analysis" / "a-first-page" / "index.html").is_file()


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path):
    root = tmp_path / "existing"
    (root / "docs").mkdir(parents=True)
    (root / "mkdocs.yml").write_text("site_name: Ours\n", "utf-8")
    (root / "docs" / "index.md").write_text("# Our home\n", "utf-8")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))

    result = kb("init", "existing", cwd=tmp_path)
    assert result.returncode == 2
    assert "already holds mkdocs.yml, docs/index.md; nothing was written" in result.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    assert (root / "mkdocs.yml").read_text("utf-8") == "site_name: Ours\n"
    assert (root / "docs" / "index.md").read_text("utf-8") == "# Our home\n"


def test_init_into_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "notes").write_text("x", "utf-8")
    with pytest.raises(ConfigError, match="exists and is not a directory"):
        init_knowledge_base(tmp_path / "notes")


def test_init_under_a_file_or_where_nothing_can_be_made_is_an_error_not_a_crash(tmp_path):
    (tmp_path / "afile").write_text("x", "utf-8")
    result = kb("init", "afile/sub", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "afile is a file, not a directory; nothing was written" in result.stderr
    empty = kb("init", "", cwd=tmp_path)
    assert empty.returncode == 2 and "DIRECTORY: is empty" in empty.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_init_that_fails_half_way_takes_back_what_it_wrote(tmp_path):
    """A file where the workflow's folder goes: the files written before it are removed, and
    so are the directories made for them."""
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / ".github").write_text("not a folder", "utf-8")
    with pytest.raises(ConfigError, match=r"cannot write the knowledge base into .*nothing was"):
        init_knowledge_base(tmp_path / "kb")
    assert [p.name for p in (tmp_path / "kb").iterdir()] == [".github"]


def test_init_into_a_directory_named_in_chinese(tmp_path):
    """Its name titles the site; the first spec's folder, named in ASCII, takes the default."""
    root = tmp_path / "知识库"
    result = kb("init", str(root), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'site_name: "知识库"' in (root / "mkdocs.yml").read_text("utf-8")
    assert [p.name for p in (root / "specs").iterdir()] == ["001-knowledge-base"]
    assert kb("verify", cwd=root).returncode == 0


def test_requirements_name_where_this_installation_came_from(tmp_path):
    made = init_knowledge_base(
        tmp_path / "kb", requirement=("kb-generator @ git+https://example.org/kb.git@abc", True)
    )
    assert made.requirement_known
    text = (tmp_path / "kb" / "requirements.txt").read_text("utf-8")
    assert text.splitlines()[-1] == "kb-generator @ git+https://example.org/kb.git@abc"


def test_a_page_of_any_level_joins_the_only_path_rather_than_one_nobody_made(tmp_path):
    """`kb new page --level advanced` wrote `paths: [advanced]`, a path the knowledge base
    did not have, and said nothing: the site then listed an "Advanced" path of one page, and
    later pages were placed there as the path nearest their level."""
    assert kb("init", "notes", cwd=tmp_path).returncode == 0
    root = tmp_path / "notes"
    created = kb(
        "new",
        "page",
        "analysis/offload.md",
        "--kind",
        "source-analysis",
        "--spec",
        "001-notes",
        "--title",
        "显存卸载流程分析",
        "--level",
        "advanced",
        cwd=root,
    )
    assert created.returncode == 0, created.stderr
    assert "paths: start (the knowledge base's only path)" in created.stdout
    meta = yaml.safe_load((root / "docs/analysis/offload.md").read_text("utf-8").split("---")[1])
    assert meta["paths"] == ["start"] and meta["level"] == "advanced"


def test_a_misspelt_path_name_is_a_warning_naming_the_path_meant(tmp_path):
    """`paths: [strat]` made a path of its own on the site, and verify said all good."""
    assert kb("init", "notes", cwd=tmp_path).returncode == 0
    root = tmp_path / "notes"
    page = root / "docs" / "analysis" / "a.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "---\ntitle: A\nkind: source-analysis\nlevel: beginner\npaths: [strat]\nspec: 001-notes\n"
        "status: draft\ncreated: 2026-11-24\n---\n# A\n\nNothing cited.\n",
        "utf-8",
    )
    result = kb("verify", "--format", "json", cwd=root)
    found = [f for f in json.loads(result.stdout)["findings"] if f["check"] == "path-no-index"]
    assert [(f["page"], f["line"], f["suggestion"]) for f in found] == [
        ("docs/analysis/a.md", 5, "did you mean 'start'?")
    ]
    assert (
        "learning path 'strat' has no index page, and is named like 'start'"
        in (found[0]["message"])
    )

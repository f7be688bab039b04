"""The demo's recorded pull request (demo/github/) and the PR and review pages generated from it.

The recording is computed from the demo history, and the pages from the recording, served on
127.0.0.1 to the real `pr` and `review` code; both are regenerated here and must equal what the
repository holds, so neither can drift.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.github.replay import ReplayServer, serve_recording
from generator.upstream.gitbuild import run_git
from tests.conftest import ROOT

DEMO = ROOT / "demo"
RECORDING = DEMO / "github"
PULL = RECORDING / "repos" / "example-org" / "minitrain" / "pulls" / "5"
PAGES = ("pr-5-tidy-the-package-layout.md", "review-pr-5-tidy-the-package-layout.md")
DESCRIPTION = RECORDING / "minitrain-pr-5.yaml"


def generator(cwd: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.chdir(cwd)
    return main(list(args))


def test_the_recording_is_what_the_demo_history_gives(
    demo_clones: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "recorded"
    assert main(["demo", "record-github", "--source", str(DEMO), "--output", str(out)]) == 0
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(RECORDING) for p in (RECORDING / "repos").rglob("*"))
    assert written == [p for p in committed if (RECORDING / p).is_file()]
    for path in written:
        assert (out / path).read_bytes() == (RECORDING / path).read_bytes(), path
    assert capsys.readouterr().out.count("wrote ") == len(written) == 4

    # Its counts are git's, on the history `make demo-upstreams` builds.
    pull = json.loads(PULL.with_suffix(".json").read_text("utf-8"))
    files = json.loads((PULL / "files.json").read_text("utf-8"))
    repo = demo_clones / "minitrain"
    base, head = pull["base"]["sha"], pull["head"]["sha"]
    description = yaml.safe_load(DESCRIPTION.read_text("utf-8"))
    subjects = run_git(repo, "log", "--format=%s", f"{base}..{head}").splitlines()
    assert subjects[0] == description["head"]["commit"] and len(subjects) == pull["commits"] == 3
    assert run_git(repo, "log", "-1", "--format=%s", base).strip() == description["base"]["commit"]
    stat = run_git(repo, "diff", "-M", "--shortstat", base, head)
    assert f"{pull['changed_files']} files changed" in stat
    assert f"{pull['additions']} insertions(+), {pull['deletions']} deletions(-)" in stat
    assert {f["status"] for f in files} == {"added", "modified", "removed", "renamed"}
    assert PULL.with_suffix(".diff").read_text("utf-8") == run_git(repo, "diff", "-M", base, head)

    # Each review comment sits on lines of the diff, which are the head's lines.
    for comment in json.loads((PULL / "comments.json").read_text("utf-8")):
        lines = run_git(repo, "show", f"{head}:{comment['path']}").split("\n")
        assert comment["diff_hunk"].split("\n")[-1][1:] == lines[comment["line"] - 1]
        assert comment["commit_id"] == head


def test_the_demo_pages_regenerate_to_the_committed_ones(
    demo_kb: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    docs = tmp_path / "docs"
    args = ("demo", "pages", "--source", str(DEMO), "--docs", str(docs))
    assert generator(demo_kb, monkeypatch, *args) == 0
    out = capsys.readouterr().out
    for name in PAGES:
        assert f"wrote {docs / 'analysis' / name}" in out
        generated = (docs / "analysis" / name).read_text("utf-8")
        assert generated == (ROOT / "docs" / "analysis" / name).read_text("utf-8"), name
        meta = yaml.safe_load(generated.split("---\n")[1])
        assert (meta["status"], meta["paths"], meta["level"]) == ("draft", ["advanced"], "advanced")
        assert meta["spec"] == "001-minitrain-knowledge-base"
    assert sorted(p.name for p in docs.rglob("*") if p.is_file()) == sorted(PAGES)

    # Regenerating over them asks for --force, and leaves them as they were.
    (docs / "analysis" / PAGES[1]).write_text("edited\n", "utf-8")
    assert generator(demo_kb, monkeypatch, *args) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert (docs / "analysis" / PAGES[1]).read_text("utf-8") == "edited\n"
    assert generator(demo_kb, monkeypatch, *args, "--force") == 0
    assert (docs / "analysis" / PAGES[1]).read_bytes() == (
        ROOT / "docs/analysis" / PAGES[1]
    ).read_bytes()


def test_the_pr_and_review_commands_fetch_the_recording_through_github_api_url(
    demo_kb: Path, demo_clones: Path, tmp_path: Path
) -> None:
    placement = ("--spec", "001-minitrain-knowledge-base", "--path", "advanced")
    with ReplayServer() as server:
        served = serve_recording(server, RECORDING)
        env = {**os.environ, "GITHUB_API_URL": server.url, "PYTHONPATH": str(ROOT)}
        env.pop("GITHUB_TOKEN", None)
        env.pop("GH_TOKEN", None)
        results = {}
        for command, name in zip(("pr", "review", "pr"), (*PAGES, "pack.md"), strict=True):
            extra = ("--prompt",) if name == "pack.md" else ("--level", "advanced")
            results[name] = subprocess.run(
                [
                    *(sys.executable, "-m", "generator", command, "example-org/minitrain", "5"),
                    *(*placement, *extra, "-o", str(tmp_path / name)),
                    *("--cache-dir", str(tmp_path / "cache")),
                ],
                cwd=demo_kb,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
    assert served == [
        "/repos/example-org/minitrain/pulls/5",
        "/repos/example-org/minitrain/pulls/5",
        "/repos/example-org/minitrain/pulls/5/comments",
        "/repos/example-org/minitrain/pulls/5/files",
    ]
    assert {path.split("?")[0] for path in server.paths()} == set(served)
    for result in results.values():
        assert result.returncode == 0, result.stderr
    fixed_date = yaml.safe_load(DESCRIPTION.read_text("utf-8"))["pages"]["created"]
    for name in PAGES:
        generated = (tmp_path / name).read_text("utf-8")
        committed = (ROOT / "docs" / "analysis" / name).read_text("utf-8")
        # The same page, dated today instead of the recording's fixed date.
        assert re.sub(r"(?m)^created: .*$", f"created: {fixed_date}", generated) == committed

    # The context pack of the same pull request: the changed function at the head, numbered.
    pack = (tmp_path / "pack.md").read_text("utf-8")
    head = json.loads(PULL.with_suffix(".json").read_text("utf-8"))["head"]["sha"]
    code = pack.split("## Changed code at the head commit")[1].split("\n## ")[0]
    block = re.search(
        r"(?ms)^### `clear_memory\(\)`: `([^`:]+):(\d+)-(\d+)` \(NEW\)\n\n```python\n(.*?)\n```",
        code,
    )
    assert block is not None
    path, start, end = block[1], int(block[2]), int(block[3])
    lines = run_git(demo_clones / "minitrain", "show", f"{head}:{path}").split("\n")
    numbered = [line.split(" | ", 1) for line in block[4].split("\n")]
    assert [int(number) for number, _ in numbered] == list(range(start, end + 1))
    assert [text for _, text in numbered] == lines[start - 1 : end]
    assert lines[start - 1].startswith("def clear_memory(")
    assert "spec: 001-minitrain-knowledge-base" in pack
    assert "Nothing: the pack holds the whole pull request." in pack


def test_pr_and_review_drafts_join_a_spec_and_a_path_without_being_told(
    demo_kb: Path, tmp_path: Path
) -> None:
    """Drafted with no --spec, --path or --level, into a knowledge base under `governance:
    strict`: placed as ingest places a page, so verifying them finds no governance error."""
    shutil.copytree(ROOT / "specs", demo_kb / "specs")
    shutil.copytree(ROOT / ".lean-spec", demo_kb / ".lean-spec")
    for name in PAGES:
        (demo_kb / "docs" / "analysis" / name).unlink()  # drafted afresh below
    with ReplayServer() as server:
        serve_recording(server, RECORDING)
        env = {**os.environ, "GITHUB_API_URL": server.url, "PYTHONPATH": str(ROOT)}
        env.pop("GITHUB_TOKEN", None)
        env.pop("GH_TOKEN", None)
        for command in ("pr", "review"):
            result = subprocess.run(
                [sys.executable, "-m", "generator", command, "example-org/minitrain", "5"],
                cwd=demo_kb,
                env={**env, "XDG_CACHE_HOME": str(tmp_path / "cache")},
                capture_output=True,
                text=True,
                check=False,
            )
            assert result.returncode == 0, result.stderr
    drafted = {name: demo_kb / "docs" / "analysis" / name for name in PAGES}
    for path in drafted.values():
        meta = yaml.safe_load(path.read_text("utf-8").split("---\n")[1])
        assert meta["spec"] == "001-minitrain-knowledge-base"  # the only spec
        assert meta["paths"] and meta["level"]
    verified = subprocess.run(
        [sys.executable, "-m", "generator", "verify", "docs", "--format", "json", "--no-cache"],
        cwd=demo_kb,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    governance = {
        "page-no-spec", "page-not-in-path", "field-missing", "level-invalid", "path-order-conflict",
    }  # fmt: skip
    found = [
        f
        for f in json.loads(verified.stdout)["findings"]
        if f["check"] in governance and f["page"].rsplit("/", 1)[-1] in PAGES
    ]
    assert found == []


# --------------------------------------------------------------------------------------------
# Errors: a clear message naming the file and key, and nothing written


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """demo/ with only minitrain's history and its pull request description."""
    copy = tmp_path / "demo"
    shutil.copytree(DEMO / "upstreams" / "minitrain", copy / "upstreams" / "minitrain")
    (copy / "github").mkdir()
    shutil.copy(DESCRIPTION, copy / "github" / DESCRIPTION.name)
    return copy


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "path: minitrain/utils/device.py\n    line: 18\n",
            "path: minitrain/utils/memory.py\n    line: 30\n",
            "minitrain/utils/memory.py lines 30-30 are not all in the pull request's diff",
        ),
        ("    start_line: 21\n", "    start_line: 12\n", "backends/fsdp/actor.py lines 12-22"),
        ("in_reply_to: 5101", "in_reply_to: 5999", "replies to 5999, which is not an earlier"),
        (
            'commit: "Remove unmaintained',
            'commit: "Remove maintained',
            "head.commit: no commit in",
        ),
        ("title: Tidy the package layout\n", "", "title: missing"),
        ("number: 5\n", "number: five\n", "number: expected a number, got 'five'"),
        ("    line: 18\n", "    line: eighteen\n", "review_comments[0].line: expected a number"),
    ],
)
def test_a_wrong_description_is_named_and_nothing_is_recorded(
    demo_copy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    message: str,
) -> None:
    description = demo_copy / "github" / DESCRIPTION.name
    text = description.read_text("utf-8")
    assert old in text
    description.write_text(text.replace(old, new, 1), "utf-8")
    out = tmp_path / "out"
    assert main(["demo", "record-github", "--source", str(demo_copy), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"error: {description}: " in err and message in err
    assert not out.exists()


def test_demo_commands_need_the_recording_the_upstream_and_its_head(
    demo_copy: Path,
    demo_kb: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    docs = tmp_path / "docs"
    assert main(["demo", "pages", "--source", str(tmp_path), "--docs", str(docs)]) == 2
    assert f"{tmp_path}/github: no such directory" in capsys.readouterr().err

    # The upstream's clone lacks the pull request's head commit.
    shutil.copytree(RECORDING / "repos", demo_copy / "github" / "repos")
    kb = tmp_path / "kb"
    clone = kb / "cache" / "minitrain"
    clone.mkdir(parents=True)
    run_git(clone, "init", "-q")
    run_git(clone, "commit", "-q", "--allow-empty", "-m", "unrelated")
    pin = run_git(clone, "rev-parse", "HEAD").strip()
    manifest = f"cache_dir: cache\nupstreams:\n  minitrain:\n    url: {clone}\n    pin: {pin}\n"
    (kb / "upstreams.yaml").write_text(manifest, "utf-8")
    args = ("demo", "pages", "--source", str(demo_copy), "--docs", str(docs))
    assert generator(kb, monkeypatch, *args) == 2
    err = capsys.readouterr().err
    assert "the head commit aad72cd66f6f of example-org/minitrain#5 is not in the clone" in err
    assert "hint: run `make demo-upstreams`" in err

    # The manifest has no such upstream.
    manifest = manifest.replace("minitrain:", "other:")
    (kb / "upstreams.yaml").write_text(manifest, "utf-8")
    assert generator(kb, monkeypatch, *args) == 2
    assert "upstream: the recorded pull request's upstream 'minitrain' is not in" in (
        capsys.readouterr().err
    )
    assert not docs.exists()

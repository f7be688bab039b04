"""``kb upstreams add`` and ``remove``: the manifest edited as written, a clone, a pin."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.kb.scaffold import init_knowledge_base
from generator.upstream.manifest import load_manifest

ROOT = Path(__file__).resolve().parent.parent


def kb(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """A knowledge base just made by kb init, with the repository's demo pages to cite code."""
    root = tmp_path / "kb"
    init_knowledge_base(root, "Team", requirement=("kb-generator==0.1.0", True))
    shutil.copytree(ROOT / "docs" / "analysis", root / "notes")
    return root


def demo_pin(name: str) -> str:
    return load_manifest(ROOT / "upstreams.yaml").upstreams[name].pin


def test_add_writes_the_entry_clones_and_pins_the_head(fresh, demo_clones):
    source = demo_clones / "minitrain"
    head = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "main"], capture_output=True, text=True
    ).stdout.strip()
    before = (fresh / "upstreams.yaml").read_text("utf-8")
    result = kb(
        fresh, "upstreams", "add", "minitrain", str(source),
        "--prefix", "minitrain/", "--prefix", "tools/", "--web-url", "https://example.org/mt",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"minitrain: cloned, pinned at {head[:12]} (the head of main)" in result.stdout
    after = (fresh / "upstreams.yaml").read_text("utf-8")
    # Comments and the keys around the entry stay as they were written.
    assert after.startswith(before.split("upstreams:")[0])
    assert (
        "upstreams:\n  minitrain:\n"
        f"    url: {source}\n    pin: {head}\n    prefixes: [minitrain/, tools/]\n"
        "    web_url: https://example.org/mt\n"
    ) in after
    manifest = load_manifest(fresh / "upstreams.yaml")
    assert manifest.upstreams["minitrain"].pin == head
    assert (fresh / ".cache" / "upstreams" / "minitrain").is_dir()
    listed = kb(fresh, "upstreams", "list")
    assert "minitrain" in listed.stdout and "cloned" in listed.stdout


def test_pin_from_pins_the_commit_the_pages_were_written_against(fresh, demo_clones):
    result = kb(
        fresh, "upstreams", "add", "minitrain", str(demo_clones / "minitrain"),
        "--prefix", "minitrain/", "--prefix", "tools/", "--pin-from", "notes",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "line up with best" in result.stdout
    # The demo's pages were written against the demo's pin, which is not the branch head.
    assert load_manifest(fresh / "upstreams.yaml").upstreams["minitrain"].pin == demo_pin(
        "minitrain"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pin", "deadbeef"], "'deadbeef' is not a commit of minitrain"),
        (["--branch", "no-such-branch"], "branch 'no-such-branch' does not exist"),
    ],
)
def test_a_failed_add_leaves_the_manifest_and_the_cache_as_they_were(
    fresh, demo_clones, args, message
):
    before = (fresh / "upstreams.yaml").read_bytes()
    result = kb(fresh, "upstreams", "add", "minitrain", str(demo_clones / "minitrain"), *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert (fresh / "upstreams.yaml").read_bytes() == before
    assert not (fresh / ".cache" / "upstreams" / "minitrain").exists()
    assert [p.name for p in fresh.iterdir() if "candidate" in p.name] == []


@pytest.mark.parametrize(
    ("name", "url", "message"),
    [
        ("bad", "ext::sh -c touch% /tmp/owned", "git's ext:: transport"),
        ("../up", "/tmp/x", "upstreams.yaml: upstreams: '../up' is not a valid upstream name"),
        # With git's own reason, which it writes where the progress goes.
        ("x", "/no/such/repository", "could not clone /no/such/repository: fatal: repository"),
    ],
)
def test_a_bad_declaration_is_refused_before_anything_is_written(fresh, name, url, message):
    before = (fresh / "upstreams.yaml").read_bytes()
    result = kb(fresh, "upstreams", "add", name, url)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.startswith("error: upstreams.yaml:")  # the user's file, not a temporary
    assert (fresh / "upstreams.yaml").read_bytes() == before
    assert not (fresh / ".cache" / "upstreams").exists() or not any(
        (fresh / ".cache" / "upstreams").iterdir()
    )


def test_an_empty_prefix_is_refused_as_it_would_claim_every_bare_name(fresh, demo_clones):
    """Accepted, it routed every bare name of every page to this upstream, which lacked them:
    a clean knowledge base turned red."""
    before = (fresh / "upstreams.yaml").read_bytes()
    result = kb(fresh, "upstreams", "add", "mt", str(demo_clones / "minitrain"), "--prefix", "")
    assert result.returncode == 2
    assert (
        "error: upstreams.yaml: upstreams.mt.prefixes: an empty prefix claims every path"
    ) in result.stderr  # (no line: the entry tried is not in the file)
    assert "found by its bare name" in result.stderr
    assert (fresh / "upstreams.yaml").read_bytes() == before


def test_a_failed_add_into_an_empty_directory_leaves_it_empty(fresh, demo_clones):
    clone = fresh / ".cache" / "upstreams" / "minitrain"
    clone.mkdir(parents=True)
    source = str(demo_clones / "minitrain")
    result = kb(fresh, "upstreams", "add", "minitrain", source, "--pin", "deadbeef")
    assert result.returncode == 2
    assert clone.is_dir() and list(clone.iterdir()) == []


def test_pin_from_pages_citing_nothing_of_the_upstream_says_what_to_check(fresh, demo_clones):
    (fresh / "empty").mkdir()
    (fresh / "empty" / "a.md").write_text("# Nothing\n\nNo code here.\n", "utf-8")
    source = str(demo_clones / "minitrain")
    result = kb(fresh, "upstreams", "add", "minitrain", source, "--pin-from", "empty")
    assert result.returncode == 2
    assert "the pages cite no code of 'minitrain'" in result.stderr
    assert "--upstream" not in result.stderr  # not an option of upstreams add
    assert "kb verify --list-refs" in result.stderr


def test_adding_twice_and_removing_what_is_not_there_are_clear_errors(fresh, demo_clones):
    source = str(demo_clones / "tinydist")
    assert kb(fresh, "upstreams", "add", "tinydist", source).returncode == 0
    again = kb(fresh, "upstreams", "add", "tinydist", source)
    assert again.returncode == 2
    assert "upstream 'tinydist' is already declared" in again.stderr
    missing = kb(fresh, "upstreams", "remove", "nope")
    assert missing.returncode == 2
    assert "no upstream 'nope' to remove" in missing.stderr


def test_remove_drops_the_entry_keeps_the_rest_and_leaves_the_clone(fresh, demo_clones):
    for name in ("minitrain", "tinydist"):
        assert kb(fresh, "upstreams", "add", name, str(demo_clones / name)).returncode == 0
    manifest = fresh / "upstreams.yaml"
    manifest.write_text(
        manifest.read_text("utf-8").replace(
            "  tinydist:", "  # data-parallel helpers\n  tinydist:"
        ),
        "utf-8",
    )
    result = kb(fresh, "upstreams", "remove", "minitrain")
    assert result.returncode == 0, result.stderr
    assert "its clone is left in" in result.stdout
    text = manifest.read_text("utf-8")
    assert "minitrain" not in text
    assert "# data-parallel helpers\n  tinydist:" in text
    assert list(load_manifest(manifest).upstreams) == ["tinydist"]
    assert (fresh / ".cache" / "upstreams" / "minitrain").is_dir()


def test_a_repository_without_main_is_tracked_at_the_branch_its_head_names(fresh, tmp_path):
    """Many repositories still call their branch `master`: with no --branch, add tracks the
    branch the repository's HEAD names, and says so. A --branch it lacks lists its branches;
    a directory that is no repository is called that."""
    source = tmp_path / "tiny"
    source.mkdir()
    for args in (
        ("init", "-q", "-b", "master"),
        ("-c", "user.email=a@b", "-c", "user.name=A", "commit", "-q", "--allow-empty", "-m", "one"),
    ):
        subprocess.run(["git", "-C", str(source), *args], check=True)
    head = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    result = kb(fresh, "upstreams", "add", "tiny", str(source), "--prefix", "tiny/")
    assert result.returncode == 0, result.stderr
    assert f"tiny: cloned, pinned at {head[:12]} (the head of master)" in result.stdout
    assert "it tracks master, the branch its HEAD names" in result.stdout
    upstream = load_manifest(fresh / "upstreams.yaml").upstreams["tiny"]
    assert (upstream.branch, upstream.pin) == ("master", head)

    before = (fresh / "upstreams.yaml").read_bytes()
    wrong = kb(fresh, "upstreams", "add", "other", str(source), "--branch", "dev")
    assert wrong.returncode == 2
    assert "error: upstreams.yaml: upstreams.other.branch: branch 'dev' does not exist" in (
        wrong.stderr
    )
    assert "hint: its branches: master; pass --branch to declare 'other'" in wrong.stderr
    plain = tmp_path / "notes"
    plain.mkdir()
    not_git = kb(fresh, "upstreams", "add", "notes", str(plain))
    assert not_git.returncode == 2
    assert f"{plain} is a directory but not a git repository" in not_git.stderr
    assert (fresh / "upstreams.yaml").read_bytes() == before


def test_a_relative_path_is_read_from_where_the_command_runs(fresh, demo_clones, tmp_path):
    """Typed from `docs/`, `../../up/minitrain` was read from the manifest's directory, and
    cloning failed on a path nobody had typed. It is written relative to the manifest."""
    local = tmp_path / "up" / "minitrain"
    shutil.copytree(demo_clones / "minitrain", local)
    typed = os.path.relpath(local, fresh / "docs")
    result = kb(fresh / "docs", "upstreams", "add", "minitrain", typed, "--prefix", "minitrain/")
    assert result.returncode == 0, result.stderr
    declared = load_manifest(fresh / "upstreams.yaml").upstreams["minitrain"]
    assert declared.url == os.path.relpath(local, fresh)
    assert Path(fresh, declared.url).resolve() == local.resolve()

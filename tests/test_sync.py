"""Re-anchoring across real git histories, and `sync` end to end on a knowledge base in git."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.kb.pages import Page, read_page
from generator.sync.reanchor import DriftStatus, Reanchorer
from generator.upstream.gitbuild import RepoBuilder, run_git
from generator.upstream.gitstore import GitStore
from generator.upstream.manifest import load_manifest
from tests.conftest import ROOT

BASE = {
    "pkg/core.py": (
        "import os\n"
        "\n"
        "\n"
        "def alpha(value):\n"
        "    total = value * 2\n"
        "    return total + 1\n"
        "\n"
        "\n"
        "def beta(items):\n"
        "    result = []\n"
        "    for item in items:\n"
        "        result.append(item * 3)\n"
        "    return result\n"
        "\n"
        "\n"
        "def gamma():\n"
        "    return os.sep\n"
    ),
    "pkg/old_name.py": "def renamed_function(x):\n    return x - 1\n",
    "pkg/gone.py": "def doomed():\n    return 'bye'\n",
    "pkg/spaces.py": "def tidy(a):\n\n    b = a + 1\n    return b\n",
}


@pytest.fixture
def history(tmp_path):
    """A base commit and a later one that exercises every kind of drift."""
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit(BASE, "base", date="2025-01-01T00:00:00+00:00")
    core = BASE["pkg/core.py"]
    core = core.replace("import os\n", "import os\nimport sys\n\nLIMIT = 10\n")  # insert above
    core = core.replace("    total = value * 2\n", "    total = value * 4\n")  # edit alpha
    gamma = "def gamma():\n    return os.sep\n"
    core = core.replace("\n\n" + gamma, "\n")  # gamma moves to another file
    new = repo.commit(
        {
            "pkg/core.py": core,
            "pkg/other.py": "import os\n\n\n" + gamma,
            "pkg/old_name.py": None,
            "pkg/new_name.py": BASE["pkg/old_name.py"],
            "pkg/gone.py": None,
            "pkg/copy.py": "def beta_copy(items):\n    result = []\n    for item in items:\n"
            "        result.append(item * 3)\n    return result\n",
            "pkg/spaces.py": "def tidy(a):\n    b = a + 1\n    return   b\n",
        },
        "change everything",
        date="2025-01-02T00:00:00+00:00",
    )
    return GitStore(repo.path), old, new


@pytest.mark.parametrize(
    ("path", "start", "end", "symbol", "status", "new"),
    [
        ("pkg/core.py", 10, 13, "beta", DriftStatus.MOVED, ("pkg/core.py", 13, 16)),
        ("pkg/core.py", 10, 10, None, DriftStatus.MOVED, ("pkg/core.py", 13, 13)),
        ("pkg/core.py", 4, 6, "alpha", DriftStatus.CHANGED, ("pkg/core.py", 7, 9)),
        ("pkg/core.py", 16, 17, "gamma", DriftStatus.MOVED, ("pkg/other.py", 4, 5)),
        ("pkg/old_name.py", 1, 2, None, DriftStatus.MOVED, ("pkg/new_name.py", 1, 2)),
        ("pkg/gone.py", 1, 2, "doomed", DriftStatus.DELETED, None),
        ("pkg/spaces.py", 1, 4, "tidy", DriftStatus.MOVED, ("pkg/spaces.py", 1, 3)),
        ("pkg/core.py", 1, 1, None, DriftStatus.UNCHANGED, ("pkg/core.py", 1, 1)),
    ],
    ids=[
        "copied-elsewhere",
        "inserted-above",
        "edited",
        "moved-file",
        "renamed",
        "deleted",
        "whitespace",
        "unchanged",
    ],
)
def test_classification(history, path, start, end, symbol, status, new):
    store, old, target = history
    drift = Reanchorer(store, old, target).classify(path, start, end, symbol)
    assert drift.status is status, drift.reason
    if new is not None:
        assert (drift.new_path, drift.new_start, drift.new_end) == new
    if status is DriftStatus.CHANGED:
        assert drift.candidates == [("pkg/core.py", 7, 9)]
        assert drift.old_lines[1] == "    total = value * 2"
        assert drift.new_lines[1] == "    total = value * 4"


def test_a_renamed_function_s_candidate_is_all_of_it(tmp_path):
    """Only the `def` line changed: the candidate was that line alone, and the drift report
    showed the unchanged body as deleted."""
    repo = RepoBuilder.init(tmp_path / "up")
    body = "    batch = []\n    for s in samples:\n        batch.append(s)\n    return batch\n"
    old = repo.commit({"m.py": "import os\n\n\ndef make_batches(samples):\n" + body}, "a")
    new = repo.commit({"m.py": "import os\n\n\ndef chunk(samples):\n" + body}, "b")
    drift = Reanchorer(GitStore(repo.path), old, new).classify("m.py", 4, 8, "make_batches")
    assert drift.status is DriftStatus.CHANGED
    assert drift.candidates == [("m.py", 4, 8)]
    assert drift.new_lines == ["def chunk(samples):", *body.rstrip("\n").split("\n")]


def test_whole_file_refs_follow_renames_and_report_deletions(history):
    store, old, target = history
    reanchorer = Reanchorer(store, old, target)
    renamed = reanchorer.classify("pkg/old_name.py", None, None, None)
    assert (renamed.status, renamed.new_path) == (DriftStatus.MOVED, "pkg/new_name.py")
    assert reanchorer.classify("pkg/gone.py", None, None, None).status is DriftStatus.DELETED


# -- sync end to end ---------------------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    return run_git(root, *args)


@pytest.fixture
def synced_kb(tmp_path, history):
    """A knowledge base (itself a git repository) citing the history's old commit."""
    store, old, target = history
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "upstreams.yaml").write_text(
        "# demo manifest\n"
        f"cache_dir: {store.path.parent}\n"
        "upstreams:\n"
        "  up:\n"
        f"    url: {store.path}\n"
        f"    pin: {old}   # keep this comment\n"
        "    prefixes: [pkg/]\n"
        "    web_url: https://github.com/acme/up\n",
        "utf-8",
    )
    (root / "docs" / "a.md").write_text(
        "---\ntitle: A\nupstream: up\n---\n"
        "# A\n\n"
        "`beta()` loop: pkg/core.py:10 and `alpha()` (pkg/core.py:4-6).\n"
        "Renamed: `pkg/old_name.py:1-2`, whole file `pkg/old_name.py`.\n"
        f"Permalink https://github.com/acme/up/blob/{old}/pkg/core.py#L16-L17\n"
        "Broken already: pkg/core.py:99\n",
        "utf-8",
    )
    (root / "docs" / "pinned.md").write_text(
        f"---\ntitle: P\nupstream: up\npin: {old}\n---\n# P\n\npkg/core.py:10\n", "utf-8"
    )
    (root / "docs" / "b.md").write_bytes(
        "\ufeff---\r\ntitle: B\r\n---\r\n# B\r\n\r\n实现（pkg/core.py:16-17）\r\n".encode()
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "kb")
    return root, old, target


def test_a_reference_writing_its_own_path_moves_beside_lines_that_take_another(synced_kb):
    """The phrase's lines take the code span's path; the reference after it writes its own
    (the same path, further on): it was held with them, though moving it moves nothing else."""
    root, _, target = synced_kb
    page = _synced_page(root, target, "`pkg/core.py` (lines 10-13); then pkg/core.py:16-17.\n")
    assert page.body.split("\n\n")[1] == "`pkg/core.py` (lines 13-16); then pkg/other.py:4-5.\n"
    assert "held_refs" not in page.meta


def test_lines_with_their_path_written_after_them_follow_their_code_to_another_file(synced_kb):
    """`lines 16-17 of pkg/core.py` was held when its code moved file: only a path written
    before the lines was rewritten with them."""
    root, _, target = synced_kb
    page = _synced_page(
        root,
        target,
        "Gamma is lines 16-17 of pkg/core.py.\n\n`gamma` is pkg/core.py (L16-L17).\n\n"
        "（第 16-17 行）在 pkg/core.py 里。\n\n"
        # The path the phrase takes is the one after it: the one before stays as written.
        "From pkg/core.py, see lines 16-17 of pkg/core.py.\n",
    )
    assert page.body.split("\n\n")[1:] == [
        "Gamma is lines 4-5 of pkg/other.py.",
        "`gamma` is pkg/other.py (L4-L5).",
        "（第 4-5 行）在 pkg/other.py 里。",
        "From pkg/core.py, see lines 4-5 of pkg/other.py.\n",
    ]
    assert "held_refs" not in page.meta


def test_a_link_s_text_moves_with_its_permalink_and_stays_with_one_to_its_own_commit(synced_kb):
    """The text of a link to a permalink cites what the link does: with a link at the pin it
    moves as the link does; with one to a commit of its own both stay where they point."""
    root, old, target = synced_kb
    link = "https://github.com/acme/up/blob/{}/pkg/core.py#L{}"
    page = _synced_page(
        root,
        target,
        f"At the pin: [pkg/core.py:10-13]({link.format(old, '10-L13')}).\n\n"
        f"Its own: [pkg/core.py:13-16]({link.format(target, '13-L16')}).\n",
    )
    assert page.body.split("\n\n")[1:] == [
        f"At the pin: [pkg/core.py:13-16]({link.format(target, '13-L16')}).",
        f"Its own: [pkg/core.py:13-16]({link.format(target, '13-L16')}).\n",
    ]
    assert "held_refs" not in page.meta


def _synced_page(root: Path, target: str, body: str) -> Page:
    """Page ``docs/c.md`` of the knowledge base at ``root``, holding ``body``, as a sync of the
    committed page to ``target`` writes it."""
    (root / "docs" / "c.md").write_text(f"---\ntitle: C\nupstream: up\n---\n# C\n\n{body}", "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "c")
    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 0, result.stderr
    return read_page(root / "docs" / "c.md")


def synced_kb_upstream(root: Path) -> Path:
    """The clone the knowledge base of `synced_kb` cites (the history's repository itself)."""
    return Path(load_manifest(root / "upstreams.yaml").upstreams["up"].url)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in [*(root / "docs").iterdir(), root / "upstreams.yaml"]}


def test_sync_rewrites_exact_moves_holds_the_rest_and_moves_the_pin(synced_kb):
    root, old, target = synced_kb
    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 0, result.stderr
    assert "1 unchanged" not in result.stdout  # nothing on these pages stayed put
    page = (root / "docs" / "a.md").read_text("utf-8")
    assert "pkg/core.py:13 and" in page  # inserted above: moved
    assert "`alpha()` (pkg/core.py:4-6)" in page  # edited: not rewritten
    assert "`pkg/new_name.py:1-2`" in page and "whole file `pkg/new_name.py`" in page
    assert f"blob/{target}/pkg/other.py#L4-L5" in page  # moved to another file
    assert "Broken already: pkg/core.py:99" in page
    assert f"anchored_at:\n  up: {target}" in page
    assert "ref: pkg/core.py:4-6" in page and "status: changed" in page
    assert "candidate: pkg/core.py:7-9" in page
    # BOM and CRLF survive the rewrite.
    raw = (root / "docs" / "b.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf---\r\n") and "实现（pkg/other.py:4-5）\r\n".encode() in raw
    assert b"\n" not in raw.replace(b"\r\n", b"")
    # The pinned page is left alone; the manifest's pin moved, comment kept.
    assert (root / "docs" / "pinned.md").read_text("utf-8").endswith("pkg/core.py:10\n")
    assert f"pin: {target}   # keep this comment" in (root / "upstreams.yaml").read_text()
    # Verification after the sync: only the held references are left for review, the one
    # already broken still checked, and reported, at the old commit.
    verified = cli(root, "verify", "docs", "--format", "json")
    findings = json.loads(verified.stdout)["findings"]
    assert sorted((f["check"], f["text"], f["commit"]) for f in findings) == [
        ("range-outside-file", "pkg/core.py:99", old),
        ("ref-needs-review", "pkg/core.py:4-6", old),
        ("ref-needs-review", "pkg/core.py:99", old),
    ]
    broken = next(f for f in findings if f["text"] == "pkg/core.py:99" and "sync" in f["message"])
    assert "because it was already wrong there" in broken["message"]
    # The drift report names every class.
    report = json.loads(next((root / ".cache" / "reports").glob("*.json")).read_text())
    assert report["summary"] == {"changed": 1, "moved": 5, "was-broken": 1}
    assert report["from"] == old and report["to"] == target


def test_second_run_changes_nothing(synced_kb):
    root, _, target = synced_kb
    assert cli(root, "sync", "up", "--no-fetch", "--to", target).returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "synced")
    before = snapshot(root)
    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 0
    assert "re-anchored 0 references on 0 pages" in result.stdout
    assert f"already at {target[:12]}: nothing to do" in result.stdout
    assert snapshot(root) == before
    assert len(list((root / ".cache" / "reports").iterdir())) == 2  # no empty second report


def test_dry_run_writes_nothing_and_prints_the_changes(synced_kb):
    root, _, target = synced_kb
    before = snapshot(root)
    result = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run")
    assert result.returncode == 0
    assert "would re-anchor" in result.stdout
    assert "pkg/core.py:10 -> pkg/core.py:13" in result.stdout
    assert "pkg/core.py:4-6: changed" in result.stdout
    assert snapshot(root) == before
    assert not (root / ".cache").exists()


def test_to_takes_an_ancestor_of_a_branch_or_tag(synced_kb):
    """`--to main~1` was refused as "not a commit", though `upstreams add --pin` takes it."""
    root, _, _ = synced_kb
    branch = git(synced_kb_upstream(root), "rev-parse", "--abbrev-ref", "HEAD").strip()
    result = cli(root, "sync", "up", "--no-fetch", "--to", f"{branch}~0", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "pkg/core.py:10 -> pkg/core.py:13" in result.stdout
    result = cli(root, "sync", "up", "--no-fetch", "--to", f"{branch}~5", "--dry-run")
    assert result.returncode == 2 and f"'{branch}~5' is not a commit of 'up'" in result.stderr
    # An empty one (`--to "$REV"` with REV unset) is no branch head: refused, nothing written.
    before = snapshot(root)
    result = cli(root, "sync", "up", "--no-fetch", "--to", "")
    assert result.returncode == 2 and "argument --to: is empty" in result.stderr
    assert snapshot(root) == before


def test_a_dry_run_says_when_the_real_run_would_stop(synced_kb):
    """The dry run listed every rewrite, then the real run stopped on an uncommitted page (or
    a knowledge base git does not track) that the dry run had not mentioned."""
    root, _, target = synced_kb
    clean = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run")
    assert clean.returncode == 0 and "note:" not in clean.stderr
    (root / "docs" / "a.md").write_text((root / "docs" / "a.md").read_text() + "\nedit\n")
    before = snapshot(root)
    dry = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run")
    assert dry.returncode == 0
    assert "would re-anchor" in dry.stdout
    assert "note: without --dry-run, sync would stop: uncommitted changes in docs/a.md" in (
        dry.stderr
    )
    assert snapshot(root) == before
    forced = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run", "--force")
    assert "note:" not in forced.stderr
    # What an interrupted sync wrote is no change the real run would stop on.
    from generator.sync.journal import Journal, journal_path

    (root / "docs" / "a.md").write_text(before["a.md"].decode() + "\nsynced\n")
    journal = Journal.load(journal_path(root))
    journal.expect(root / "docs" / "a.md", (root / "docs" / "a.md").read_bytes())
    journal.save()
    resumed = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run")
    assert resumed.returncode == 0 and "note:" not in resumed.stderr, resumed.stderr
    journal.path.unlink()
    shutil.rmtree(root / ".git")
    untracked = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run")
    assert "note: without --dry-run, sync would stop: " in untracked.stderr
    assert "is not a git repository" in untracked.stderr


def test_refuses_a_dirty_tree_unless_forced(synced_kb):
    root, _, target = synced_kb
    (root / "docs" / "a.md").write_text((root / "docs" / "a.md").read_text() + "\nedit\n")
    before = snapshot(root)
    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 2
    assert "uncommitted changes in docs/a.md" in result.stderr
    assert snapshot(root) == before
    assert cli(root, "sync", "up", "--no-fetch", "--to", target, "--force").returncode == 0


def test_include_pinned_pages_moves_their_own_pin(synced_kb):
    root, _, target = synced_kb
    result = cli(root, "sync", "up", "--no-fetch", "--to", target, "--include-pinned-pages")
    assert result.returncode == 0, result.stderr
    pinned = (root / "docs" / "pinned.md").read_text("utf-8")
    assert f"pin: {target}" in pinned and pinned.endswith("pkg/core.py:13\n")


def test_a_page_with_its_own_pin_is_said_to_move_from_it(synced_kb):
    """Once the manifest is at the target, a sync of the pages pinned on their own said
    "up: T -> T: re-anchored ...", as if nothing moved."""
    root, old, target = synced_kb
    assert cli(root, "sync", "up", "--no-fetch", "--to", target).returncode == 0
    git(root, "commit", "-qam", "sync")
    result = cli(root, "sync", "up", "--no-fetch", "--to", target, "--include-pinned-pages")
    assert result.returncode == 0, result.stderr
    assert f"up: {old[:7]} -> {target[:7]}: re-anchored 1 reference on 1 page" in result.stdout


def test_git_failure_leaves_everything_as_it_was(synced_kb):
    root, _, _ = synced_kb
    before = snapshot(root)
    result = cli(root, "sync", "up", "--no-fetch", "--to", "no-such-branch")
    assert result.returncode == 2
    assert "'no-such-branch' is not a commit of 'up'" in result.stderr
    manifest = root / "upstreams.yaml"
    # A clone of its own (the old cache directory holds the upstream repository itself, which
    # is no clone of the new URL and is refused before git runs).
    text = manifest.read_text().replace("    url: ", "    url: /nonexistent")
    manifest.write_text(re.sub(r"(?m)^cache_dir: .*$", "cache_dir: .cache/upstreams", text))
    git(root, "commit", "-qam", "bad url")
    before = snapshot(root)
    result = cli(root, "sync", "up")
    assert result.returncode == 2
    assert "could not fetch" in result.stderr or "could not clone" in result.stderr
    assert "does not exist" in result.stderr  # git's reason, not only its exit code
    assert snapshot(root) == before


def test_interrupted_run_leaves_pages_old_or_new_and_a_rerun_finishes(tmp_path, history):
    """Kill a sync half-way through writing 150 pages; then run it again."""
    store, old, target = history
    root = tmp_path / "big"
    (root / "docs").mkdir(parents=True)
    (root / "upstreams.yaml").write_text(
        f"cache_dir: {store.path.parent}\nupstreams:\n  up:\n    url: {store.path}\n"
        f"    pin: {old}\n    prefixes: [pkg/]\n",
        "utf-8",
    )
    body = "".join(f"- step {n}: pkg/core.py:10 and pkg/core.py:4-6\n" for n in range(40))
    for number in range(150):
        (root / "docs" / f"p{number:03}.md").write_text(f"# Page {number}\n\n{body}", "utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "kb")
    original = snapshot(root)

    process = subprocess.Popen(
        [sys.executable, "-m", "generator", "sync", "up", "--no-fetch", "--to", target],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if any(
            (root / "docs" / f"p{n:03}.md").read_bytes() != original[f"p{n:03}.md"]
            for n in (0, 1, 2)
        ):
            break
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait()
    interrupted = snapshot(root)

    # A plain rerun, without --force: the only differences are the killed run's own.
    rerun = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert rerun.returncode == 0, rerun.stderr
    final = snapshot(root)
    for name, data in interrupted.items():
        if name == "upstreams.yaml" or name.endswith(".tmp"):
            continue  # the killed write's temporary file: the rerun removes it (below)
        # Every page was either untouched or completely re-anchored, never half-written.
        assert data in (original[name], final[name]), name
        assert final[name] != original[name]
        body = final[name].split(b"\n---\n", 1)[1]  # (held_refs quote the words before some)
        assert body.count(b"pkg/core.py:13") == 40
    assert f"pin: {target}".encode() in final["upstreams.yaml"]
    assert not list((root / "docs").glob(".*.tmp"))
    assert not (root / ".cache" / "sync-journal.json").exists()


def test_report_fences_cannot_be_broken_by_the_cited_code():
    from generator.sync.report import _fenced

    assert _fenced(["x = 1"]) == ["```", "x = 1", "```"]
    assert _fenced(['doc = """', "````", '"""']) == ["`````", 'doc = """', "````", '"""', "`````"]


def test_a_jump_backwards_compares_the_two_commits_directly(history):
    store, old, target = history
    backwards = Reanchorer(store, target, old)
    assert len(backwards.steps) == 1  # not an ancestor: one direct diff
    drift = backwards.classify("pkg/core.py", 13, 13, None)
    assert (drift.status, drift.new_path, drift.new_start) == (DriftStatus.MOVED, "pkg/core.py", 10)
    assert backwards.classify("pkg/other.py", 4, 5, "gamma").new_path == "pkg/core.py"


def test_a_held_reference_the_author_edited_away_is_reported(synced_kb):
    root, _, target = synced_kb
    assert cli(root, "sync", "up", "--no-fetch", "--to", target).returncode == 0
    page = root / "docs" / "a.md"
    # The author updates the held reference by hand but leaves its held_refs entry behind.
    page.write_text(page.read_text("utf-8").replace("(pkg/core.py:4-6)", "(pkg/core.py:7-9)"))
    findings = json.loads(cli(root, "verify", "docs", "--format", "json").stdout)["findings"]
    unmatched = [f for f in findings if f["check"] == "held-ref-unmatched"]
    assert len(unmatched) == 1
    assert "held_refs names 'pkg/core.py:4-6'" in unmatched[0]["message"]
    assert unmatched[0]["suggestion"] == "remove the entry from held_refs"
    # Only the reference that was already broken is still held.
    held = [f["text"] for f in findings if f["check"] == "ref-needs-review"]
    assert held == ["pkg/core.py:99"]


def test_references_written_apart_from_their_path_follow_their_code(synced_kb):
    root, _, target = synced_kb
    (root / "docs" / "c.md").write_text(
        "---\ntitle: C\nupstream: up\n---\n# C\n\n"
        "| 文件 | 行号 | 函数 |\n|---|---|---|\n| `pkg/core.py` | 9 | beta |\n\n"
        "The signature is in `pkg/core.py` (line 9); see pkg/core.py:1, 9.\n"
        "`pkg/old_name.py`（第 1-2 行）was renamed.\n"
        "The signature, `pkg/core.py`:9; the rename, `pkg/old_name.py`:1-2.\n",
        "utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "c")
    dry = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run")
    assert "1-2 -> 1-2 (in pkg/new_name.py)" in dry.stdout  # the path beside it changes too
    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 0, result.stderr
    page = (root / "docs" / "c.md").read_text("utf-8")
    assert "| `pkg/core.py` | 12 | beta |" in page  # inserted above: renumbered in its cell
    assert "`pkg/core.py` (line 12)" in page
    assert "pkg/core.py:1, 12." in page
    assert "`pkg/new_name.py`（第 1-2 行）" in page  # renamed: the path rewritten beside it
    assert "The signature, `pkg/core.py`:12; the rename, `pkg/new_name.py`:1-2." in page
    assert "held_refs" not in page


def test_a_path_written_once_for_several_references_moves_only_when_all_of_them_move(synced_kb):
    """`pkg/core.py:16-17, 10-13`: gamma moved to another file, beta stayed. Rewriting the
    path for gamma moved beta with it, to lines of a file that do not hold it; a lines phrase
    sharing the path of the phrase before it had the same fate. The reference whose code left
    is held; the others are renumbered where they are. When every one of them moved to one
    file (a rename), the path is rewritten once for them all."""
    root, _, target = synced_kb
    body = (
        "Both: pkg/core.py:16-17, 10-13.\n\n"
        "| 文件 | 行号 | 行号 |\n|---|---|---|\n| `pkg/core.py` | 16-17 | 10-13 |\n\n"
        "In `pkg/core.py`, gamma (lines 16-17) and beta (lines 10-13).\n\n"
        "Renamed: pkg/old_name.py:1-2, 2.\n\n"
        "| 文件 | 行号 | 行号 |\n|---|---|---|\n| `pkg/old_name.py` | 1-2 | 2 |\n\n"
        "In `pkg/old_name.py`, the function (lines 1-2) and its return (line 2).\n\n"
        "See lines 1-2 and 2 of pkg/old_name.py.\n\n"
        "第 1-2、2 行（pkg/old_name.py）\n"
    )
    page = _synced_page(root, target, body)
    assert page.body.split("\n\n")[1:] == [
        "Both: pkg/core.py:16-17, 13-16.",
        "| 文件 | 行号 | 行号 |\n|---|---|---|\n| `pkg/core.py` | 16-17 | 13-16 |",
        "In `pkg/core.py`, gamma (lines 16-17) and beta (lines 13-16).",
        "Renamed: pkg/new_name.py:1-2, 2.",
        "| 文件 | 行号 | 行号 |\n|---|---|---|\n| `pkg/new_name.py` | 1-2 | 2 |",
        "In `pkg/new_name.py`, the function (lines 1-2) and its return (line 2).",
        # The path after the lines, written once, moves for both.
        "See lines 1-2 and 2 of pkg/new_name.py.",
        "第 1-2、2 行（pkg/new_name.py）\n",
    ]
    held = [(entry["ref"], entry["occurrence"]) for entry in page.meta["held_refs"]]
    assert held == [("pkg/core.py:16-17", 1), ("16-17", 1), ("16-17", 2)]
    assert {entry["candidate"] for entry in page.meta["held_refs"][:3]} == {"pkg/other.py:4-5"}
    # Held for how its path is written, not for what its code became: it only moved.
    assert {entry["status"] for entry in page.meta["held_refs"]} == {"relocated"}
    check = cli(root, "verify", "docs/c.md")
    assert check.returncode == 0, check.stdout
    assert "because its code was relocated; candidate at the new pin: pkg/other.py:4-5" in (
        check.stdout
    )
    # The next sync would release the held reference to where its code went, moving the path
    # the renumbered one still needs.
    git(root, "commit", "-q", "-am", "synced")
    later = RepoBuilder(path=synced_kb_upstream(root)).commit(
        {"pkg/unrelated.py": "x = 1\n"}, "later", date="2025-01-03T00:00:00+00:00"
    )
    again = cli(root, "sync", "up", "--no-fetch", "--to", later)
    assert again.returncode == 0, again.stderr
    page = read_page(root / "docs" / "c.md")
    assert page.body.split("\n\n")[1] == "Both: pkg/core.py:16-17, 13-16."
    assert ("pkg/core.py:16-17", 1) in [(e["ref"], e["occurrence"]) for e in page.meta["held_refs"]]


# -- kills, full disks and read-only pages ----------------------------------------------------

KILL_HOOK = '''
"""Installed through PYTHONPATH by the kill test: SIGKILL this process at write event KILL_AT.

The events are the steps of every atomic write (temporary file made, data about to be synced,
about to be renamed over the file, renamed) and every unlink, counted in order from the start."""
import os
import pathlib
import signal
import tempfile

if os.environ.get("KILL_AT"):
    _stop = int(os.environ["KILL_AT"])
    _count = 0

    def _event():
        global _count
        _count += 1
        with open(os.environ["KILL_LOG"], "w") as log:
            log.write(str(_count))
        if _count == _stop:
            os.kill(os.getpid(), signal.SIGKILL)

    def _wrap(function, before=True, after=False):
        def wrapped(*args, **kwargs):
            if before:
                _event()
            result = function(*args, **kwargs)
            if after:
                _event()
            return result
        return wrapped

    tempfile.mkstemp = _wrap(tempfile.mkstemp, before=False, after=True)
    os.fsync = _wrap(os.fsync)
    pathlib.Path.replace = _wrap(pathlib.Path.replace, after=True)
    pathlib.Path.unlink = _wrap(pathlib.Path.unlink)
'''


def _kill_kb(tmp_path: Path, history) -> tuple[Path, str]:
    """A knowledge base of four pages, three of which sync rewrites, in git."""
    store, old, target = history
    root = tmp_path / "kb"
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "upstreams.yaml").write_text(
        f"cache_dir: {store.path.parent}\nupstreams:\n  up:\n    url: {store.path}\n"
        f"    pin: {old}   # keep\n    prefixes: [pkg/]\n",
        "utf-8",
    )
    for name in ("a.md", "b.md", "deep/c.md"):
        (root / "docs" / name).write_text(
            f"# {name}\n\nSee pkg/core.py:10 and pkg/core.py:4-6.\n", "utf-8"
        )
    (root / "docs" / "other.md").write_text("# Other\n\nNo references.\n", "utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "kb")
    return root, target


def _tree(root: Path) -> dict[str, bytes]:
    """Every file of the knowledge base outside git and the cache, by path."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.parts and ".cache" not in path.parts
    }


def _reports(root: Path) -> dict[str, bytes]:
    """The drift reports sync left in the knowledge base, by name."""
    return {path.name: path.read_bytes() for path in (root / ".cache" / "reports").glob("*")}


def test_a_plain_rerun_finishes_a_sync_killed_at_any_write(tmp_path, history):
    """SIGKILL a real `python -m generator sync` at every step of its write phase; a plain rerun
    (no --force) must finish the job exactly as an uninterrupted run does, leaving no
    temporary file behind and the same drift report, which names every page of the sync."""
    base, target = _kill_kb(tmp_path / "base", history)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL_HOOK, "utf-8")
    command = [sys.executable, "-m", "generator", "sync", "up", "--no-fetch", "--to", target]

    def run(root: Path, kill_at: int | None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
        if kill_at is not None:
            env |= {
                "PYTHONPATH": f"{ROOT}{os.pathsep}{hook}",
                "KILL_AT": str(kill_at),
                "KILL_LOG": str(tmp_path / "events"),
            }
        return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)

    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    # Counting the events of an uninterrupted run: a kill point past them all never fires.
    assert run(clean, 10**6).returncode == 0
    events = int((tmp_path / "events").read_text())
    expected = _tree(clean)
    assert expected != _tree(base)
    expected_reports = _reports(clean)
    assert len(expected_reports) == 2
    summary = json.loads(next(d for n, d in expected_reports.items() if n.endswith(".json")))
    assert summary["pages"] == 3
    assert events >= 20  # journal, three pages, the pin, two reports, the journal's removal

    survived = []
    for kill_at in range(1, events + 1):
        root = tmp_path / f"kill{kill_at}"
        shutil.copytree(base, root)
        killed = run(root, kill_at)
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        interrupted = _tree(root)
        for name, data in interrupted.items():
            if name.endswith(".tmp"):
                continue
            # Every file is either untouched or completely rewritten, never half-written.
            assert data in (_tree(base).get(name), expected.get(name)), (kill_at, name)
        if interrupted.get("upstreams.yaml") != _tree(base)["upstreams.yaml"]:
            # The pin moves last, after every page.
            assert all(interrupted[n] == expected[n] for n in expected), kill_at
        rerun = run(root, None)
        assert rerun.returncode == 0, (kill_at, rerun.stderr)
        assert _tree(root) == expected, kill_at
        assert _reports(root) == expected_reports, kill_at
        assert "drift report: " in rerun.stdout, (kill_at, rerun.stdout)
        assert not [p for p in root.rglob("*.tmp")], kill_at
        assert not (root / ".cache" / "sync-journal.json").exists(), kill_at
        survived.append(kill_at)
    assert survived == list(range(1, events + 1))
    print(f"killed at {events} write events, survived {len(survived)}")


def test_a_rerun_after_a_kill_still_refuses_a_persons_edit(tmp_path, history):
    base, target = _kill_kb(tmp_path, history)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL_HOOK, "utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{hook}",
        "KILL_AT": "16",  # in the middle of the pages (after the journal and the two reports)
        "KILL_LOG": str(tmp_path / "events"),
    }
    killed = subprocess.run(
        [sys.executable, "-m", "generator", "sync", "up", "--no-fetch", "--to", target],
        cwd=base,
        env=env,
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    written = [p for p in ("a.md", "b.md") if b"pkg/core.py:13" in (base / "docs" / p).read_bytes()]
    assert written  # the kill came after a page was written
    page = base / "docs" / written[0]
    page.write_text(page.read_text("utf-8") + "\nmy own note\n", "utf-8")
    result = cli(base, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 2
    assert f"uncommitted changes in docs/{written[0]}" in result.stderr
    assert "my own note" in page.read_text("utf-8")
    assert cli(base, "sync", "up", "--no-fetch", "--to", target, "--force").returncode == 0
    assert "my own note" in page.read_text("utf-8")


def _sync_in_process(root: Path, target: str, monkeypatch, capsys) -> tuple[int, str]:
    from generator.cli.main import main

    monkeypatch.chdir(root)
    status = main(["sync", "up", "--no-fetch", "--to", target])
    return status, capsys.readouterr().err


def test_a_full_disk_stops_the_sync_cleanly_and_a_rerun_finishes(
    tmp_path, history, monkeypatch, capsys
):
    import errno

    base, target = _kill_kb(tmp_path / "base", history)
    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    assert cli(clean, "sync", "up", "--no-fetch", "--to", target).returncode == 0
    expected, original = _tree(clean), _tree(base)
    calls = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        # The journal, the two drift reports and one page are on disk, the next page is not.
        if len(calls) == 5:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    status, err = _sync_in_process(base, target, monkeypatch, capsys)
    assert status == 1
    assert f"error: could not write docs/b.md: {os.strerror(errno.ENOSPC)}" in err
    assert "up: 1 of 3 pages written" in err and "the pin has not moved" in err
    assert "free some disk space, then run the same sync again" in err
    assert "Traceback" not in err
    after = _tree(base)
    assert after["docs/a.md"] == expected["docs/a.md"]
    assert after == {**original, "docs/a.md": expected["docs/a.md"]}  # nothing half-written
    monkeypatch.setattr(os, "fsync", real_fsync)
    result = cli(base, "sync", "up", "--no-fetch", "--to", target)  # no --force
    assert result.returncode == 0, result.stderr
    assert _tree(base) == expected


def test_read_only_pages_stop_the_sync_with_a_clear_message(tmp_path, history, monkeypatch, capsys):
    import errno
    import tempfile

    base, target = _kill_kb(tmp_path, history)
    original = _tree(base)
    docs = base / "docs"
    real_mkstemp = tempfile.mkstemp

    # A read-only mount refuses to create the temporary file; root ignores chmod, so the
    # refusal is simulated where the file system would give it.
    def mkstemp(*args, **kwargs):
        if Path(kwargs["dir"]).resolve().is_relative_to(docs.resolve()):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(kwargs["dir"]))
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    status, err = _sync_in_process(base, target, monkeypatch, capsys)
    assert status == 1
    assert f"error: could not write docs/a.md: {os.strerror(errno.EROFS)}" in err
    assert "up: 0 of 3 pages written" in err
    assert "hint: make docs writable" in err
    assert "Traceback" not in err
    assert _tree(base) == original


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_docs_directory_stops_the_sync_with_a_clear_message(tmp_path, history):
    base, target = _kill_kb(tmp_path, history)
    original = _tree(base)
    docs = base / "docs"
    docs.chmod(0o555)
    try:
        result = cli(base, "sync", "up", "--no-fetch", "--to", target)
    finally:
        docs.chmod(0o755)
    assert result.returncode == 1
    assert "error: could not write docs/a.md: Permission denied" in result.stderr
    assert "Traceback" not in result.stderr
    assert _tree(base) == original


def test_only_the_temporary_files_of_journaled_writes_are_deleted(tmp_path):
    from generator.sync.journal import Journal

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("new\n", "utf-8")
    journal = Journal(tmp_path / ".cache" / "sync-journal.json")
    journal.expect(docs / "a.md", b"new\n")
    journal.expect(docs / "b.md", b"never written\n")
    journal.save()
    ours = [docs / ".a.md.k3x_9q0z.tmp", docs / ".b.md.abcdefgh.tmp"]
    others = [
        docs / ".c.md.abcdefgh.tmp",  # no write of c.md was journaled
        docs / ".a.md.abc.tmp",  # not mkstemp's eight characters
        docs / ".a.md.ABCDEFGH.tmp",  # nor its alphabet
        docs / "a.md.abcdefgh.tmp",  # no leading dot
        docs / ".a.md.abcdefgh.tmp.bak",
    ]
    for path in [*ours, *others]:
        path.write_text("x", "utf-8")
    (docs / ".a.md.dir12345.tmp").mkdir()  # a directory is never ours
    loaded = Journal.load(journal.path)
    assert sorted(loaded.resume()) == sorted(ours)
    assert all(path.exists() for path in others) and (docs / ".a.md.dir12345.tmp").is_dir()
    # a.md still holds the journaled bytes and is kept; b.md was never written and is dropped.
    assert list(loaded.files) == [str((docs / "a.md").resolve())]
    (docs / "a.md").write_text("a person's edit\n", "utf-8")
    assert not loaded.holds_own_write(docs / "a.md")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", "utf-8")
    assert Journal.load(broken).files == {}


def test_sync_whose_reader_goes_away_stops_quietly_with_141(synced_kb):
    """`kb sync --dry-run | head -1`: the reader of the output leaves. No file failed, so no
    write error is reported and nothing is left to finish."""
    root, _, _ = synced_kb
    before = snapshot(root)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "generator", "sync", "up", "--no-fetch", "--dry-run"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # gone before the first line
    errors = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert "error" not in errors and "Broken pipe" not in errors
    assert snapshot(root) == before
    assert not (root / ".cache" / "sync-journal.json").exists()


def test_sync_refuses_pages_it_cannot_read_and_writes_nothing(synced_kb):
    """A page whose frontmatter is not YAML, or that is not UTF-8, has references sync cannot
    find: moving the pin past them would get their old line numbers checked at the new pin
    once someone mends the page."""
    root, _, target = synced_kb
    (root / "docs" / "bad.md").write_text(
        "---\ntitle: [unclosed\n---\n# Bad\n\n`pkg/core.py:10` loads.\n", "utf-8"
    )
    (root / "docs" / "gbk.md").write_bytes("# 中文\n\npkg/core.py:10 加载。\n".encode("gbk"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "unreadable pages")
    before = snapshot(root)
    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 2, result.stdout
    assert "2 pages cannot be read, so sync cannot re-anchor their references" in result.stderr
    assert "docs/bad.md:2: frontmatter is not valid YAML" in result.stderr
    assert "docs/gbk.md:1: page is not valid UTF-8" in result.stderr
    assert "nothing was written" in result.stderr and "Traceback" not in result.stderr
    assert snapshot(root) == before
    assert not (root / ".cache" / "reports").exists()
    dry = cli(root, "sync", "up", "--no-fetch", "--to", target, "--dry-run")
    assert dry.returncode == 0
    assert "docs/gbk.md:1: page is not valid UTF-8" in dry.stdout and "would refuse" in dry.stdout

    (root / "docs" / "bad.md").unlink()
    (root / "docs" / "gbk.md").unlink()
    git(root, "commit", "-q", "-am", "drop them")
    assert cli(root, "sync", "up", "--no-fetch", "--to", target).returncode == 0


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_edits_and_shifted_offsets_agree_with_applying_edits_one_by_one(data):
    """The page text sync writes, and where each reference lands in it, for edits that do
    not overlap (insertions included), as applying them one by one from the end gives."""
    from generator.sync.run import OffsetShift, apply_edits

    text = data.draw(st.text(alphabet="ab\n中", max_size=40))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    edits = []
    for start, end in zip(cuts[::2], cuts[1::2], strict=False):
        edits.append((start, end, data.draw(st.text(alphabet="xy\n", max_size=5))))
    expected = text
    for start, end, new in sorted(edits, reverse=True):
        expected = expected[:start] + new + expected[end:]
    assert apply_edits(text, edits) == expected
    shifted = OffsetShift(edits)
    for offset in range(len(text) + 1):
        if any(start < offset < end for start, end, _ in edits):
            continue  # inside an edit: no reference starts there
        naive = offset + sum(len(new) - (end - start) for start, end, new in edits if end <= offset)
        assert shifted(offset) == naive


def test_a_bare_name_of_a_renamed_file_stays_a_bare_name_when_the_new_one_is_unique(synced_kb):
    """`old_name.py:1-2` becomes `new_name.py:1-2`, as written; `core.py:16-17`, whose code
    moved to `other.py`, too. Where the new name is another file's as well, the full path
    says which."""
    root, _, target = synced_kb
    (root / "docs" / "bare.md").write_text(
        "---\ntitle: Bare\nupstream: up\n---\n# Bare\n\n"
        "The function (old_name.py:1-2) and gamma (`core.py:16-17`).\n",
        "utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bare")
    assert cli(root, "sync", "up", "--no-fetch", "--to", target).returncode == 0
    page = (root / "docs" / "bare.md").read_text("utf-8")
    assert "The function (new_name.py:1-2) and gamma (`other.py:4-5`)." in page
    assert cli(root, "verify", "docs/bare.md").returncode == 0


def test_a_bare_name_whose_new_name_is_not_unique_becomes_the_full_path(tmp_path):
    from generator.model import CodeRef, RefForm
    from generator.refs.rewrite import rewrite_ref

    ref = CodeRef("p.md", 1, 1, "gpt.py:28-35", RefForm.BARE, "gpt.py", 28, 35)
    old, new = "pkg/models/gpt.py", "pkg/models/transformer.py"
    assert rewrite_ref(ref, old, new, 30, 37, names_one_file=lambda n: True) == (
        "transformer.py:30-37"
    )
    assert rewrite_ref(ref, old, new, 30, 37, names_one_file=lambda n: False) == (
        "pkg/models/transformer.py:30-37"
    )
    partial = CodeRef("p.md", 1, 1, "models/gpt.py:28", RefForm.BARE, "models/gpt.py", 28, 28)
    assert rewrite_ref(partial, old, new, 30, 30, names_one_file=lambda n: True) == (
        "models/transformer.py:30"
    )


def test_a_windows_path_whose_file_moved_keeps_its_local_root_and_backslashes():
    from generator.model import CodeRef, RefForm
    from generator.refs.rewrite import rewrite_ref

    text = "\\Users\\bob\\src\\pkg\\models\\gpt.py:28-35"
    ref = CodeRef(
        "p.md", 1, 4, text, RefForm.ABSOLUTE, text.split(":")[0].replace("\\", "/"), 28, 35
    )
    assert rewrite_ref(ref, "pkg/models/gpt.py", "pkg/models/transformer.py", 30, 37) == (
        "\\Users\\bob\\src\\pkg\\models\\transformer.py:30-37"
    )


def test_a_bare_name_the_page_s_full_paths_settle_moves_as_verify_reads_it(tmp_path):
    """Two files share a name; the page cites one by its full path and then by its bare name
    alone. `verify` took the bare name for the page's file, but `sync` found it ambiguous and
    left it as written: at the new pin it cited other lines, and `verify` passed them."""
    repo = RepoBuilder.init(tmp_path / "up")
    flags = "def add_flags(parser):\n    parser.add('--offload')\n    parser.add('--colocate')\n"
    old = repo.commit(
        {"pkg/train/args.py": "def parse():\n    return 1\n", "pkg/rollout/args.py": flags},
        "flags",
    )
    target = repo.commit({"pkg/rollout/args.py": "import os\n\n\n" + flags}, "import os")
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "upstreams.yaml").write_text(
        f"cache_dir: {tmp_path}\nupstreams:\n  up:\n    url: {repo.path}\n    pin: {old}\n"
        "    prefixes: [pkg/]\n",
        "utf-8",
    )
    (root / "docs" / "flags.md").write_text(
        "---\ntitle: Flags\n---\n# Flags\n\n"
        "The rollout flags are added in `pkg/rollout/args.py:1-3`.\n\n"
        "The offload flag is declared at args.py:2, and `--colocate` at args.py:3.\n",
        "utf-8",
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "kb")
    listed = cli(root, "verify", "--list-refs")
    assert "args.py:2 -> up@" in listed.stdout and "pkg/rollout/args.py:2" in listed.stdout

    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "resolved to no single file" not in result.stdout
    page = (root / "docs" / "flags.md").read_text("utf-8")
    assert "declared at args.py:5, and `--colocate` at args.py:6." in page
    assert "`pkg/rollout/args.py:4-6`" in page

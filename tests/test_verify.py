"""The verification run: the same report from one process or two, whatever happens to the second."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.upstream.gitbuild import RepoBuilder, run_git
from generator.upstream.gitstore import RepositoryUnavailable
from generator.upstream.manifest import ConfigError
from generator.verification.pipeline import (
    PARALLEL_MINIMUM_PAGES,
    Report,
    Verifier,
    collect,
    manifest_for,
)
from generator.verification.report import report_json
from tests.conftest import KB, ROOT

# Every kind of reference and link, right and wrong, so that each path through extraction,
# resolution and link checking has pages on both sides of any split between processes.
FRAGMENTS = [
    "`lib/core.py:6-7` and `alpha()` (lib/core.py:6) and lib/core.py:15",
    "`Beta.gamma()` 实现（lib/core.py:11-12）, `delta()` 实现（lib/core.py:6-7）",
    "| `gamma()` | `core.py:11` | purpose |\n\ncore.py:1 is ambiguous",
    "lib/core.py:99 and lib/core.py:12-6 and lib/core.py:0",
    "`omega()` (lib/core.py:6-7) and `lib/util.py` and util.py:40",
    "data/blob.bin:1 and old/name.py:1 and lib/future.py:1 and `torch/x.py:1`",
    "`/home/alice/src/lib/lib/core.py:6-7` and ../../etc/passwd:1",
    "[x](https://github.com/acme/lib/blob/{pin}/lib/core.py#L10-L15)",
    "https://github.com/acme/lib/blob/main/lib/util.py#L3 and https://github.com/else/x/blob/main/a.py#L1",
    "```python\n# lib/core.py:6-7\nx = 'lib/core.py:99'\n```",
    '```mermaid\ngraph LR\n  A["lib/util.py:2 alpha()"] --> B\n```',
    "[next](page_1.md#intro) and [gone](nowhere.md) and [bad](#no-such-anchor), a note[^a] "
    "and a lost one[^lost], `not[^one]`.\n\n[^a]: kept.",
    "[up](../../up.md) and [sub](sub/) and [top](/page_2.md#section-a) and ![img](missing.png)",
]


def build_pages(kb: KB, count: int) -> None:
    pin = kb.pin  # type: ignore[attr-defined]
    held = (
        "held_refs:\n"
        f"  - {{upstream: lib, commit: {pin}, ref: 'lib/core.py:15', status: changed}}\n"
        f"  - {{upstream: lib, commit: {pin}, ref: 'gone.py:1', status: deleted}}\n"
    )
    frontmatters = ["", "upstream: lib\n", "upstream: nope\n", f"pins: {{lib: {pin}}}\n", held]
    for number in range(count):
        body = [f"# Page {number}\n\n## Intro\n\n## Section A\n"]
        for step in range(1 + number % 7):
            body.append(FRAGMENTS[(number * 7 + step * 3) % len(FRAGMENTS)].format(pin=pin))
        text = f"---\ntitle: Page {number}\n{frontmatters[number % 5]}---\n" + "\n\n".join(body)
        raw = text.encode("utf-8")
        if number % 41 == 0:
            raw = raw.replace(b"\n", b"\r\n")
        if number % 53 == 0:
            raw += b"caf\xe9\n"
        kb.page(f"part{number % 3}/page_{number}.md", raw)
    kb.page("part0/sub/index.md", "# Sub\n\nlib/core.py:1\n")
    (kb.root / "up.md").write_text("# Outside the docs\n", "utf-8")


def everything(report: Report) -> dict:
    data = report_json(report, list_refs=True)
    data["ref_findings"] = [[f.message for f in resolved.findings] for resolved in report.refs]
    return data


@pytest.fixture
def big_kb(lib_kb: KB) -> KB:
    build_pages(lib_kb, PARALLEL_MINIMUM_PAGES * 2)
    return lib_kb


def test_two_processes_report_exactly_what_one_does(big_kb):
    alone = big_kb.verify(workers=1)
    shared = big_kb.verify(workers=2)
    assert alone.findings, "the pages are meant to have findings of every kind"
    assert {f.check for f in alone.findings} >= {
        "range-outside-file",
        "range-invalid",
        "symbol-not-in-range",
        "file-missing",
        "ambiguous-file",
        "binary-file",
        "path-escape",
        "absolute-path",
        "unpinned-permalink",
        "unattributed",
        "unknown-upstream",
        "ref-needs-review",
        "held-ref-unmatched",
        "page-encoding",
        "link-missing",
        "anchor-missing",
        "link-outside-docs",
        "footnote-undefined",
    }
    assert everything(shared) == everything(alone)
    # Each process reads a blob once at most: lib/core.py, lib/util.py, data/blob.bin,
    # lib/sub/core.py (read to tell which core.py has `gamma`) and lib/renamed.py (as
    # old/name.py last was too: the same blob, read to find the cited lines after the rename).
    assert alone.blob_reads == 5
    assert 5 <= shared.blob_reads <= 2 * 5


def test_a_verifier_that_read_already_shares_the_next_run_with_a_forked_process(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verifier keeps its clones' git processes open between runs; the forked process of a
    later run reads through its own, as the parent's answer the parent only (the child's
    requests in the parent's pipe mixed the two processes' answers)."""
    repo = kb.new_upstream("lib")
    count = 2 * PARALLEL_MINIMUM_PAGES
    pin = repo.commit(
        {
            f"lib/m{n}.py": "".join(f"def f{n}_{k}():\n    return {k}\n" for k in range(n % 40 + 5))
            for n in range(count)
        },
        "Modules",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    for n in range(count):
        kb.page(
            f"p{n:03}.md",
            f"`f{n}_3` is at lib/m{n}.py:7-8; lib/m{n}.py:{2 * (n % 40 + 5) + 1} is not.\n",
        )
    monkeypatch.chdir(kb.root)
    manifest = manifest_for([])
    docs = kb.root / "docs"
    files = collect([docs], docs)
    with Verifier(manifest, docs) as verifier:
        assert verifier.verify(files[:1], workers=1).blob_reads == 1, "a git process is open"
        shared = verifier.verify(files, workers=2)
        # A file per page, each read once by one of the processes (the first one before).
        assert shared.blob_reads == count
    with Verifier(manifest, docs) as verifier:
        alone = verifier.verify(files, workers=1)
    assert len(alone.findings) == count
    assert everything(shared) == everything(alone)
    assert _worker_processes() == []


def test_a_pin_missing_from_its_clone_is_reported_on_every_page_in_every_run(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`commit-missing` is reported once per page. Which pages had been told was kept for the
    whole run (and the verifier's life): a page first resolved ahead of its turn, then again
    in its turn (its quote needs a search the run's budget limits), lost its finding in the
    first process but not in the forked one, and a verifier's second run lost them all."""
    lib = kb.new_upstream("lib")
    pin = lib.commit(
        {
            "lib/core.py": "".join(f"def f{k}():\n    return {k}\n" for k in range(10)),
            "lib/other.py": MOVED,
        },
        "lib",
    )
    kb.add_upstream("lib", lib, pin, prefixes=["lib/"])
    ext = kb.new_upstream("ext")
    kb.add_upstream(
        "ext", ext, ext.commit({"ext/x.py": "a = 1\nb = 2\n"}, "ext"), prefixes=["ext/"]
    )
    missing = "deadbeef" * 5
    for n in range(PARALLEL_MINIMUM_PAGES + 60):
        if n % 10:
            kb.page(f"p{n:03}.md", f"# Filler {n}\n\nNothing cited.\n")
            continue
        kb.page(
            f"p{n:03}.md",
            f"---\npins:\n  ext: {missing}\n---\n# P{n}\n\nSee `ext/x.py:1-2`.\n\n"
            f"And `lib/core.py:1-3`:\n\n```python\n{MOVED}```\n",
        )
    expected = [f"p{n:03}.md" for n in range(0, PARALLEL_MINIMUM_PAGES + 60, 10)]

    def pages_told(report: Report) -> list[str]:
        return [Path(f.page).name for f in report.findings if f.check == "commit-missing"]

    alone = kb.verify(workers=1)
    assert pages_told(alone) == expected
    for _ in range(3):
        assert everything(kb.verify(workers=2)) == everything(alone)
    monkeypatch.chdir(kb.root)
    docs = kb.root / "docs"
    with Verifier(manifest_for([]), docs) as verifier:
        files = collect([docs], docs)
        assert pages_told(verifier.verify(files, workers=1)) == expected
        assert pages_told(verifier.verify(files, workers=1)) == expected, "the second run too"


MOVED = (
    "def moved_function_here(argument):\n"
    "    value = compute_something_long(argument)\n"
    "    return value\n"
)


@pytest.mark.skipif(
    not Path(f"/proc/self/task/{os.getpid()}/children").is_file(),
    reason="needs Linux's /proc with each task's children",
)
def test_a_closed_verifier_ends_its_git_processes_and_keeps_what_it_read(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing ends the clones' `git cat-file` processes. What was read stays with the verifier
    (the CLI keeps its last one to the process's exit rather than free it object by object), so
    a run after closing asks git for nothing it had read, and gives the same report."""
    lib = kb.new_upstream("lib")
    pin = lib.commit({"lib/core.py": "def f():\n    return 1\n"}, "lib")
    kb.add_upstream("lib", lib, pin, prefixes=["lib/"])
    kb.page("a.md", "`f` is at lib/core.py:1-2; lib/core.py:9 is not.\n")
    monkeypatch.chdir(kb.root)
    docs = kb.root / "docs"
    files = collect([docs], docs)
    verifier = Verifier(manifest_for([]), docs)
    before = set(_git_processes_running())
    first = verifier.verify(files, workers=1)
    assert first.blob_reads == 1
    assert set(_git_processes_running()) - before, "a git process reads the clone"
    verifier.close()
    deadline = time.monotonic() + 10
    while set(_git_processes_running()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(_git_processes_running()) - before, "closing ends them"
    again = verifier.verify(files, workers=1)
    started = set(_git_processes_running()) - before
    verifier.close()
    assert not started, "what the run needs was kept: git is not asked again"
    assert again.blob_reads == 1
    assert everything(again) == everything(first)
    assert [f.check for f in first.findings] == ["range-outside-file"]


def _git_processes_running() -> list[int]:
    """This process's ``git`` children that have not ended (zombies left out)."""
    running = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            stat = Path(f"/proc/{pid}/stat").read_text()
            name, state = stat.split()[1], stat.rsplit(")", 1)[1].split()[0]
            if name == "(git)" and state != "Z":
                running.append(int(pid))
    return running


def _worker_processes() -> list[int]:
    """This process's children that run Python (the git processes are left alone)."""
    children = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            if Path(os.fsdecode(command)).name.startswith("python") or command == os.fsencode(
                sys.executable
            ):
                children.append(int(pid))
    return children


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_a_worker_killed_midway_changes_nothing(big_kb):
    alone = big_kb.verify(workers=1)

    def kill_the_worker(done: int, total: int) -> None:
        if done == 1:  # the worker has only begun: this process reads what it did not send
            for pid in _worker_processes():
                os.kill(pid, signal.SIGKILL)

    shared = big_kb.verify(workers=2, progress=kill_the_worker)
    assert everything(shared) == everything(alone)
    assert _worker_processes() == []


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_a_failed_run_leaves_no_worker_behind(big_kb):
    big_kb.upstreams["lib"]["pin"] = "c" * 40
    big_kb.write_manifest()
    with pytest.raises(ConfigError, match=r"pinned commit c+ is not in the clone"):
        big_kb.verify(workers=2)
    assert _worker_processes() == []


def test_two_processes_stop_at_the_first_failing_page_as_one_does(kb: KB) -> None:
    """A page resolved ahead of its turn (by either process) that fails leaves the failure to
    its turn: the run stops at the first failing page in page order, with its error, not at a
    later page's that another process met first."""
    for name in ("aaa", "bbb"):
        repo = kb.new_upstream(name)
        repo.commit({f"{name}/x.py": "x = 1\n"}, name)
        kb.add_upstream(name, repo, f"{name[0]}" * 40, prefixes=[f"{name}/"])
    for n in range(PARALLEL_MINIMUM_PAGES + 60):
        cited = {0: "bbb/x.py:1", 30: "aaa/x.py:1"}.get(n)
        kb.page(f"p{n:03}.md", f"# P{n}\n\n" + (f"See `{cited}`.\n" if cited else "Nothing.\n"))
    for workers in (1, 2, 2, 2):
        with pytest.raises(ConfigError, match=r"pinned commit b{40} is not in the clone"):
            kb.verify(workers=workers)
    assert _worker_processes() == []


def test_a_clone_missing_a_tree_fails_in_two_processes_as_in_one(kb: KB) -> None:
    """Listing a commit's files kept what it had read when a tree object was missing; a page
    that failed out of its turn, resolved again in it, then read that half listing and the run
    ended with a report instead of the error one process stops with."""
    lib = kb.new_upstream("lib")
    lib.commit({"lib/old.py": "a = 1\nb = 2\n", "lib/zz/b.py": "c = 3\n"}, "one")
    pin = lib.commit({"lib/old.py": None, "lib/new.py": "a = 1\nb = 2\n"}, "rename")
    kb.add_upstream("lib", lib, pin, prefixes=["lib/"])
    tree = run_git(lib.path, "rev-parse", f"{pin}:lib/zz").strip()
    (lib.path / ".git" / "objects" / tree[:2] / tree[2:]).unlink()  # a clone lacking it
    for n in range(PARALLEL_MINIMUM_PAGES + 60):
        cited = "See `lib/old.py:1-2`.\n" if n % 10 == 0 else "Nothing.\n"
        kb.page(f"p{n:03}.md", f"# P{n}\n\n{cited}")
    for workers in (1, 2, 2):
        with pytest.raises(RepositoryUnavailable, match=f"tree {tree} is missing"):
            kb.verify(workers=workers)
    # The command says what is wrong with the clone; it is no bug of the tool.
    result = kb.cli("verify", "--no-cache")
    assert result.returncode == 2, result.stderr
    assert f"error: tree {tree} is missing from" in result.stderr
    assert "hint: the clone is damaged or incomplete" in result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_one_core_gives_the_same_output(big_kb):
    def run(*, one_core: bool) -> subprocess.CompletedProcess[str]:
        first_core = min(os.sched_getaffinity(0))
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "generator",
                "verify",
                "docs",
                "--format",
                "json",
                "--list-refs",
            ],
            cwd=big_kb.root,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=(lambda: os.sched_setaffinity(0, {first_core})) if one_core else None,
            check=False,
        )

    alone, normal = run(one_core=True), run(one_core=False)
    assert alone.returncode == normal.returncode == 1
    assert json.loads(alone.stdout) == json.loads(normal.stdout)
    assert alone.stderr == normal.stderr == ""


def test_listed_refs_drop_ignored_checks_too(lib_kb):
    lib_kb.page("p.md", "`torch/x.py:1` lib/core.py:99 lib/core.py:6\n")
    report = lib_kb.verify(ignore=["unattributed"])
    assert [f.check for f in report.findings] == ["range-outside-file"]
    assert [(r.ref.text, [f.check for f in r.findings], r.status) for r in report.refs] == [
        ("torch/x.py:1", [], "ok"),
        ("lib/core.py:99", ["range-outside-file"], "error"),
        ("lib/core.py:6", [], "ok"),
    ]
    assert len(report.refs) == 3
    assert report.refs[1].ref.page == "docs/p.md"


def test_a_page_named_twice_is_checked_twice_and_listed_per_page(lib_kb):
    """`verify docs docs/p.md` names p.md twice: its references count twice, as before, and
    asking for one page's references gives that page's."""
    lib_kb.page("p.md", "lib/core.py:99 lib/core.py:6\n")
    lib_kb.page("q.md", "lib/core.py:7\n")
    report = lib_kb.verify("docs", "docs/p.md")
    assert [(r.ref.page, r.ref.text) for r in report.refs] == [
        ("docs/p.md", "lib/core.py:99"),
        ("docs/p.md", "lib/core.py:6"),
        ("docs/q.md", "lib/core.py:7"),
        ("docs/p.md", "lib/core.py:99"),
        ("docs/p.md", "lib/core.py:6"),
    ]
    fresh = lib_kb.verify("docs", "docs/p.md")
    assert [r.ref.text for r in fresh.refs.of_page("docs/q.md")] == ["lib/core.py:7"]
    assert fresh.refs.page_key("docs/p.md") is not None
    assert fresh.refs.page_key("docs/none.md") is None
    assert [f.check for f in fresh.findings].count("range-outside-file") == 2


def test_only_the_blobs_whose_lines_are_checked_are_read(lib_kb):
    # The first page opens the clone; the next ones are read ahead of their checks, which must
    # not read a blob that the checks themselves would not.
    lib_kb.page("a.md", "lib/util.py:1\n")
    lib_kb.page(
        "b.md",
        "`lib/renamed.py` (a whole file), ./lib/sub:3 (a directory), lib/missing.py:2, "
        "../lib/core.py:1, [t](https://github.com/acme/lib/tree/main/lib/core.py)\n",
    )
    lib_kb.page("c.md", "lib/core.py:3\n", dedent=False)
    lib_kb.page("d.md", "lib/sub/core.py:2\n", dedent=False)
    missing = "b" * 40
    lib_kb.page("e.md", f"---\nupstream: lib\npin: {missing}\n---\nlib/renamed.py:1\n")
    report = lib_kb.verify(workers=1)
    assert [f.check for f in report.findings if f.page == "docs/b.md"] == [
        "not-a-file",
        "file-missing",
        "path-escape",
        "not-a-file",
        "unpinned-permalink",
    ]
    assert [f.check for f in report.findings if f.page == "docs/e.md"] == ["commit-missing"]
    # lib/util.py, lib/core.py and lib/sub/core.py: nothing for b.md and e.md.
    assert report.blob_reads == 3


def test_each_page_is_checked_at_its_own_pin_bare_names_and_directories_too(lib_kb):
    """Three pages with the same references, pinned to three commits: the first (before the
    library and the rename), the manifest's pin and the branch's head."""
    repo = RepoBuilder(lib_kb.root / "cache" / "lib")
    first = run_git(repo.path, "rev-list", "--max-parents=0", "HEAD").strip()
    refs = "name.py:1, core.py:3, lib/future.py:1, `lib/sub/`, ./lib/sub:2, lib/nam.py:1\n"
    for name, pin in (("first", first), ("pin", lib_kb.pin), ("head", repo.head())):
        lib_kb.page(f"{name}.md", f"---\nupstream: lib\npin: {pin}\n---\n{refs}")
    report = lib_kb.verify(workers=1)
    found = {
        page: [(f.check, f.text) for f in report.findings if f.page == f"docs/{page}.md"]
        for page in ("first", "pin", "head")
    }
    assert found == {
        "first": [
            ("file-missing", "core.py:3"),
            ("file-missing", "lib/future.py:1"),
            ("file-missing", "./lib/sub:2"),
            ("file-missing", "lib/nam.py:1"),
        ],
        "pin": [
            ("file-missing", "name.py:1"),
            ("file-missing", "lib/future.py:1"),
            ("not-a-file", "./lib/sub:2"),
            ("file-missing", "lib/nam.py:1"),
        ],
        "head": [
            ("file-missing", "name.py:1"),
            ("not-a-file", "./lib/sub:2"),
            ("file-missing", "lib/nam.py:1"),
        ],
    }
    messages = {(f.page, f.text): f.message for f in report.findings}
    assert messages["docs/pin.md", "name.py:1"].startswith("no file named 'name.py' in lib@")
    assert "it exists at main" in messages["docs/pin.md", "lib/future.py:1"]


def test_a_link_to_an_upstream_without_web_url_says_to_add_it(lib_kb: KB) -> None:
    """The upstream was in the manifest, but the finding said to add it there: what was
    missing is its web_url."""
    del lib_kb.upstreams["lib"]["web_url"]
    lib_kb.write_manifest()
    lib_kb.page("a.md", "See https://github.com/acme/lib/blob/main/lib/core.py#L6-L7.\n")
    lib_kb.page("b.md", "See https://github.com/acme/other/blob/main/x.py#L1.\n")
    found = {f.page: f for f in lib_kb.verify(cache=False).findings if f.check == "unattributed"}
    linked = found["docs/a.md"]
    assert "acme/lib is no configured upstream's web_url (upstream 'lib' has none)" in (
        linked.message
    )
    assert (
        linked.suggestion == "add 'web_url: https://github.com/acme/lib' to 'lib' in upstreams.yaml"
    )
    assert "acme/other is not a configured upstream" in found["docs/b.md"].message


def test_reading_a_share_ahead_reads_what_resolution_reads_and_no_more(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages are read from git a share at a time, ahead of their references' verdicts: a bare
    name the page's own upstream has at its root is searched nowhere else, so another clone's
    trees are not read for it; a bare name it lacks is searched in every clone."""
    own = kb.new_upstream("aaa")
    kb.add_upstream("aaa", own, own.commit({"x.py": "a = 1\nb = 2\n"}, "x"), prefixes=["aaa/"])
    other = kb.new_upstream("big")
    files = {f"big/d{n}/sub/m{n}.py": f"c = {n}\n" for n in range(30)}
    kb.add_upstream("big", other, other.commit(files, "many"), prefixes=["big/"])
    for n in range(30):
        kb.page(f"p{n:02}.md", "---\nupstream: aaa\n---\n\nSee `x.py:1-2`.\n")
    monkeypatch.chdir(kb.root)
    docs = kb.root / "docs"
    pages = collect([docs], docs)
    with Verifier(manifest_for([]), docs) as verifier:
        report = verifier.verify(pages, workers=1)
        assert report.findings == [] and report.refs and len(report.refs) == 30
        assert verifier.resolver.tree_reads == 1, "aaa's root: big is not searched"
        kb.page("p98.md", "See `../x.py:1`.\n")  # (leaves the repository: searched nowhere)
        report = verifier.verify(collect([docs], docs), workers=1)
        assert [f.check for f in report.findings] == ["path-escape"]
        assert verifier.resolver.tree_reads == 1
        (docs / "p98.md").unlink()
        kb.page("p99.md", "---\nupstream: aaa\n---\n\nSee `m7.py:1`.\n")
        report = verifier.verify(collect([docs], docs), workers=1)
        assert report.findings == []
        assert verifier.resolver.tree_reads == 1 + 1 + 2 * 30 + 1, "every tree of big, once"


def test_files_found_by_a_search_or_a_permalink_are_read_ahead_with_the_others(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare name that one file has, and a permalink at a commit, have their blobs read in the
    share's exchange with git, as full paths do: resolving the pages then asks git for nothing
    one object at a time. A name two files share reads neither ahead (which one is checked
    depends on the page)."""
    up = kb.new_upstream("lib")
    paths = ("lib/a/x.py", "lib/b/y.py", "lib/b/z.py", "lib/c/z.py")
    first = up.commit({path: f"# {path}\n" + "pass\n" * 8 for path in paths}, "one")
    second = up.commit({path: f"# {path}, again\n" + "pass\n" * 8 for path in paths[:2]}, "two")
    kb.add_upstream("lib", up, second, prefixes=["lib/"], web_url="https://github.com/o/lib")
    for commit in (first, second):
        kb.page(
            f"p{commit[:7]}.md",
            f"---\nupstream: lib\npin: {commit}\n---\n\n"
            f"See `x.py:2-3`, and [y](https://github.com/o/lib/blob/{commit}/lib/b/y.py#L4).\n"
            "Which `z.py:1`?\n",
        )
    monkeypatch.chdir(kb.root)
    docs = kb.root / "docs"
    import generator.upstream.gitstore as gitstore

    one_at_a_time: list[str] = []
    read = gitstore._CatFile.read

    def recorded(self: gitstore._CatFile, name: str) -> tuple[str, str, bytes] | None:
        found = read(self, name)
        if found is not None and found[1] == "blob":
            one_at_a_time.append(name)
        return found

    monkeypatch.setattr(gitstore._CatFile, "read", recorded)
    with Verifier(manifest_for([]), docs) as verifier:
        report = verifier.verify(collect([docs], docs), workers=1)
        assert [f.check for f in report.findings] == ["ambiguous-file"] * 2
        # x.py and y.py at each commit ahead; the two z.py (the same at both commits) only
        # when the ambiguous name is narrowed.
        assert report.blob_reads == 6
        z_files = {run_git(up.path, "rev-parse", f"{first}:{p}").strip() for p in paths[2:]}
        assert sorted(one_at_a_time) == sorted(z_files)


def test_a_path_written_from_the_checkout_s_directory_is_read_in_its_upstream(kb):
    """`Megatron-LM/megatron/training/arguments.py:45` in a table: the path as the author's
    shell had it, one directory above the repository. No prefix claims it, and it went
    unchecked as `unattributed`; the repository's name (its URL's or web URL's last part)
    says whose it is."""
    repo = kb.new_upstream("megatron")
    pin = repo.commit({"megatron/args.py": "def parse():\n    return 1\n"}, "args")
    kb.add_upstream(
        "megatron",
        repo,
        pin,
        prefixes=["megatron/"],
        web_url="https://github.com/NVIDIA/Megatron-LM",
    )
    kb.page(
        "a.md",
        "| what | where |\n|---|---|\n| parse | `Megatron-LM/megatron/args.py:1-2` |\n\n"
        "Past its end: `Megatron-LM/megatron/args.py:5`. Elsewhere: `Other/megatron/args.py:1`.\n",
    )
    report = kb.verify(cache=False)
    verdicts = {r.ref.text: (r.upstream, r.path, r.status) for r in report.refs}
    assert verdicts["Megatron-LM/megatron/args.py:1-2"] == ("megatron", "megatron/args.py", "ok")
    assert verdicts["Megatron-LM/megatron/args.py:5"][2] == "error"
    assert [f.check for f in report.findings if f.text == "Other/megatron/args.py:1"] == [
        "unattributed"
    ]


def test_a_symbol_renamed_since_the_page_was_written_is_named_as_the_code_has_it(kb):
    """`FSDPWrapper` (x.py:1-3) after the class became `ShardedModule`: the warning said only
    that the name does not occur; the lines define the new name, and the help says so."""
    repo = kb.new_upstream("lib")
    pin = repo.commit(
        {"lib/x.py": "@register\nclass ShardedModule:\n    shards = 2\n\n\nLIMIT = 3\n"}, "x"
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.page("a.md", "`FSDPWrapper` (lib/x.py:1-3) shards the model; `LIMIT` (lib/x.py:6) too.\n")
    report = kb.verify(cache=False)
    found = [(f.check, f.message, f.suggestion) for f in report.findings]
    assert found == [
        (
            "symbol-not-found",
            f"`FSDPWrapper` does not occur in 'lib/x.py' at lib@{pin[:7]}; range 1-3 defines "
            "`ShardedModule`",
            "if `FSDPWrapper` was renamed, name it as the code does: `ShardedModule`",
        )
    ]

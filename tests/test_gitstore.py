"""Reading an upstream clone: revisions, trees and blobs through one `git cat-file` process."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from generator.upstream.gitbuild import RepoBuilder, run_git
from generator.upstream.gitstore import GitStore, RepositoryUnavailable


@pytest.fixture
def repo(tmp_path) -> RepoBuilder:
    builder = RepoBuilder.init(tmp_path / "up")
    builder.commit({"pkg/a.py": "x = 1\n", "pkg/sub/b.py": "y = 2\r\nz = 3\r\n"}, "first", tag="v1")
    builder.commit({"pkg/c.txt": "hello\n"}, "second")
    return builder


def test_revisions_resolve_to_full_commit_shas(repo):
    first = run_git(repo.path, "rev-parse", "v1").strip()
    head = repo.head()
    run_git(repo.path, "branch", "feature/x", first)
    store = GitStore(repo.path)
    try:
        assert store.resolve(head) == head
        assert store.resolve(head[:7]) == head
        assert store.resolve("main") == head
        assert store.resolve("v1") == first
        assert store.resolve("feature/x") == first
        for unknown in ("nope", "a" * 40, "main:pkg/a.py", "-v", "main~1", "x y"):
            assert store.resolve(unknown) is None
    finally:
        store.close()


def test_trees_and_blobs_are_read_at_the_commit_each_blob_once(repo):
    (repo.path / "pkg" / "a.py").write_text("dirty work tree\n", "utf-8")
    store = GitStore(repo.path)
    try:
        tree = store.tree(repo.head())
        assert sorted(tree) == ["pkg/a.py", "pkg/c.txt", "pkg/sub/b.py"]
        assert store.directories(repo.head()) == {"pkg/", "pkg/sub/"}
        assert store.blob(tree["pkg/a.py"].sha).lines == ["x = 1"]
        assert store.blob(tree["pkg/sub/b.py"].sha).lines == ["y = 2", "z = 3"]
        store.blob(tree["pkg/a.py"].sha)
        assert store.blob_reads == 2
    finally:
        store.close()


def test_a_directory_that_is_not_a_clone_is_unavailable(tmp_path):
    (tmp_path / "plain").mkdir()
    for path in (tmp_path / "plain", tmp_path / "missing"):
        with pytest.raises(RepositoryUnavailable, match="is not a git repository"):
            GitStore(path)


def test_a_commit_missing_from_the_clone_is_named(repo):
    store = GitStore(repo.path)
    try:
        with pytest.raises(RepositoryUnavailable, match=f"commit {'b' * 40} is missing"):
            store.tree("b" * 40)
        with pytest.raises(RepositoryUnavailable, match=f"blob {'c' * 40} is missing"):
            store.blob("c" * 40)
        assert store.blob_reads == 0
    finally:
        store.close()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_a_git_process_that_died_is_reported(repo):
    store = GitStore(repo.path)
    try:
        sha = store.tree(repo.head())["pkg/a.py"].sha
        assert store.resolve("main") == repo.head()  # starts git cat-file
        [cat_file] = [
            pid
            for task in Path(f"/proc/{os.getpid()}/task").iterdir()
            for pid in map(int, (task / "children").read_text().split())
            if Path(f"/proc/{pid}/cmdline").read_bytes() == b"git\0cat-file\0--batch\0"
        ]
        os.kill(cat_file, signal.SIGKILL)
        with pytest.raises(RepositoryUnavailable, match="git cat-file stopped answering"):
            store.blob(sha)
    finally:
        store.close()

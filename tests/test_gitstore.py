"""Reading an upstream clone: revisions, trees and blobs through one `git cat-file` process."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.upstream.gitbuild import RepoBuilder, run_git
from generator.upstream.gitstore import (
    BlobText,
    GitStore,
    RepositoryUnavailable,
    _TripleQuotedStrings,
)


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


def test_a_path_is_found_by_reading_its_directories_once_whichever_commits_share_them(tmp_path):
    repo = RepoBuilder.init(tmp_path / "up")
    first = repo.commit({"pkg/sub/b.py": "b\n", "pkg/a.py": "a\n", "other/c.py": "c\n"}, "one")
    second = repo.commit({"other/c.py": "c, changed\n"}, "two")
    store = GitStore(repo.path)
    try:
        at_first = store.entry(first, "pkg/sub/b.py")
        assert at_first is not None and at_first.kind == "blob"
        assert store.tree_reads == 3, "the root, pkg/ and pkg/sub/: not other/"
        assert store.entry(second, "pkg/sub/b.py") == at_first
        assert store.tree_reads == 4, "pkg/ is the same tree at both commits: only the root"
        assert store.entry(second, "other/c.py") != store.entry(first, "other/c.py")
        assert store.entry(second, "pkg/sub") is None, "a directory is no file"
        assert store.entry(second, "pkg/nope.py") is None
        assert store.entry(second, "nope/a.py") is None
        assert store.is_directory(second, "pkg/sub") and store.is_directory(second, "")
        assert not store.is_directory(second, "pkg/a.py")
        assert not store.is_directory(second, "pkg/nope")
    finally:
        store.close()


def test_directories_read_ahead_are_each_parsed_once_and_lead_to_the_right_files(tmp_path):
    """A page's paths at a commit have their directories read ahead, a level of depth at a
    time for them all: each tree is kept once by its SHA, and every path then resolves as a
    walk from the root would, names with spaces, CJK and newlines too."""
    repo = RepoBuilder.init(tmp_path / "up")
    files = {
        "pkg/sub/deep/b.py": "b\n",
        "pkg/a.py": "a\n",
        "pkg/shared/s.py": "s\n",
        "other/c.py": "c\n",
        "数据/模块 one.py": "d\n",
        "odd\nname/e.py": "e\n",
    }
    first = repo.commit(files, "one")
    second = repo.commit({"pkg/sub/deep/b.py": "b, changed\n"}, "two")
    cited = [*files, "pkg/a.py/x.py", "nope/sub/x.py", "pkg/sub/nope/x.py", "pkg/sub/deep"]
    store = GitStore(repo.path)
    try:
        store.read_trees_ahead({first: cited})
        read = store.tree_reads
        assert read == 8, "root, pkg, its sub, sub/deep and shared, other, 数据, the odd name"
        found = {path: store.entry(first, path) for path in cited}
        assert store.tree_reads == read, "nothing left to read"
        for path in files:
            assert found[path] is not None and found[path].kind == "blob", path
            assert store.blob(found[path].sha).data == files[path].encode()
        assert found["pkg/a.py/x.py"] is None and found["nope/sub/x.py"] is None
        assert found["pkg/sub/nope/x.py"] is None and found["pkg/sub/deep"] is None
        store.read_trees_ahead({second: cited})
        assert store.tree_reads == read + 4, "the root, pkg, pkg/sub and deep changed; no more"
        assert store.entry(second, "other/c.py") == found["other/c.py"]
        assert store.blob(store.entry(second, "pkg/sub/deep/b.py").sha).data == b"b, changed\n"
    finally:
        store.close()


def test_files_are_found_by_name_at_each_commit_where_directories_are_shared(tmp_path):
    # Two identical directories are one tree object, and a later commit shares all but the
    # directory it changed: what was found below a tree must not leak into another place.
    repo = RepoBuilder.init(tmp_path / "up")
    first = repo.commit(
        {"one/sub/x.py": "1\n", "two/sub/x.py": "1\n", "three/y.py": "2\n"}, "first"
    )
    second = repo.commit({"three/x.py": "3\n", "two/sub/x.py": "4\n"}, "second")
    store = GitStore(repo.path)
    try:
        for commit in (first, second, first):
            listed = run_git(repo.path, "ls-tree", "-r", "--name-only", commit).splitlines()
            named = [path for path in listed if path.rsplit("/", 1)[-1] == "x.py"]
            assert store.files_named(commit, "x.py") == named
        assert store.files_named(first, "x.py") == ["one/sub/x.py", "two/sub/x.py"]
        assert store.files_named(second, "x.py") == ["one/sub/x.py", "three/x.py", "two/sub/x.py"]
    finally:
        store.close()


def test_trees_searched_at_several_commits_are_read_ahead_once_and_leave_nothing_to_read(tmp_path):
    # Pages pinned to commits of their own are read a share at a time: the trees their bare
    # names are searched in come in one exchange per level for all those commits.
    repo = RepoBuilder.init(tmp_path / "up")
    first = repo.commit({"one/sub/x.py": "1\n", "two/deep/er/x.py": "2\n", "y.py": "3\n"}, "a")
    second = repo.commit({"two/deep/x.py": "4\n"}, "b")
    trees = set()
    for commit in (first, second):
        trees.add(run_git(repo.path, "rev-parse", f"{commit}^{{tree}}").strip())
        listed = run_git(repo.path, "ls-tree", "-r", "-d", commit).splitlines()
        trees.update(line.split()[2] for line in listed)
    store = GitStore(repo.path)
    try:
        store.read_trees_ahead({}, [first, second, "0" * 40])  # (one git lacks: left be)
        assert store.tree_reads == len(trees) == 9, "each tree of both commits, once"
        for commit in (first, second):
            listed = run_git(repo.path, "ls-tree", "-r", "--name-only", commit).splitlines()
            named = [path for path in listed if path.rsplit("/", 1)[-1] == "x.py"]
            assert store.files_named(commit, "x.py") == named
        assert store.files_named(second, "x.py") == [
            "one/sub/x.py",
            "two/deep/er/x.py",
            "two/deep/x.py",
        ]
        assert store.tree_reads == len(trees), "the searches read nothing more"
    finally:
        store.close()


def test_files_are_found_by_name_in_git_s_order_links_and_submodules_too(tmp_path):
    repo = RepoBuilder.init(tmp_path / "up")
    files = {"x.py": "1\n", "a/x.py": "2\n", "a-b/x.py": "3\n", "a.py": "4\n", "a/deep/x.py": ""}
    repo.write(files)
    (repo.path / "a-b" / "link").symlink_to("x.py")
    run_git(repo.path, "add", "-A")
    submodule = "1" * 40
    run_git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{submodule},a/mod")
    run_git(repo.path, "commit", "-q", "-m", "files")
    commit = repo.head()
    listed = run_git(repo.path, "ls-tree", "-r", "--name-only", commit).splitlines()
    store = GitStore(repo.path)
    try:
        assert list(store.tree(commit)) == listed
        named = [path for path in listed if path.rsplit("/", 1)[-1] == "x.py"]
        assert named == ["a-b/x.py", "a/deep/x.py", "a/x.py", "x.py"]
        assert store.files_named(commit, "x.py") == named
        assert store.files_named(commit, "missing.py") == []
        assert store.file_names(commit) == {"x.py", "a.py", "link", "mod"}
        link, module = store.entry(commit, "a-b/link"), store.entry(commit, "a/mod")
        assert link is not None and link.is_symlink and link.kind == "blob"
        assert module is not None and module.kind == "commit" and module.sha == submodule
        assert store.directories(commit) == {"a/", "a/deep/", "a-b/"}
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
        with pytest.raises(RepositoryUnavailable, match=f"commit {'b' * 40} is missing"):
            store.entry("b" * 40, "pkg/a.py")
        with pytest.raises(RepositoryUnavailable, match=f"blob {'c' * 40} is missing"):
            store.blob("c" * 40)
        assert store.blob_reads == 0
    finally:
        store.close()


def _cat_file_processes() -> list[int]:
    """This process's ``git cat-file`` children, running or ended and not yet reaped."""
    return [
        pid
        for task in Path(f"/proc/{os.getpid()}/task").iterdir()
        for pid in map(int, (task / "children").read_text().split())
        if Path(f"/proc/{pid}/stat").read_text().split()[1] == "(git)"
    ]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_a_closed_store_leaves_no_git_process_behind(repo):
    """Closing a store does not wait for its git process to exit, but that process ends and
    is reaped: a long-lived process (a `mkdocs serve`) opening stores again and again does not
    gather git processes."""
    before = set(_cat_file_processes())
    for _ in range(5):
        store = GitStore(repo.path)
        assert store.resolve("main") == repo.head()  # starts git cat-file
        store.close()
    final = GitStore(repo.path)
    try:
        assert final.resolve("main") == repo.head()
        # The closed ones end on their own: on a busy machine, give them a moment.
        deadline = time.monotonic() + 10
        while len(running := set(_cat_file_processes()) - before) > 2:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(running) <= 2, "the new one, and perhaps the last one still ending"
    finally:
        final.close()


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
            # (this store's: another test's may still be exiting in this process)
            and Path(f"/proc/{pid}/cwd").resolve() == repo.path.resolve()
        ]
        os.kill(cat_file, signal.SIGKILL)
        with pytest.raises(RepositoryUnavailable, match="git cat-file stopped answering"):
            store.blob(sha)
    finally:
        store.close()


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_name_counts_where_code_uses_it_not_where_a_string_or_comment_mentions_it(newline):
    # The use on the last line is just past a string's end: a line offset wrong by a character
    # or so per line above (or per line of the range) would put it inside the string. (With
    # Windows line ends, one per line above.)
    lines = ["def f():", '    """Mentions g — é."""', *["    pass"] * 10, "    # g", '    s = """']
    lines += ["    g", '    """; g()']
    blob = BlobText((newline.join(lines) + newline).encode())
    last = len(lines)
    assert blob.occurs_in_code("g", last, last), "used after the string closes, on its line"
    assert blob.occurs_in_code("g", 1, last)
    assert not blob.occurs_in_code("g", 1, last - 1), "a docstring, a comment, a string"
    assert blob.occurs_in_code("f", 1, 1) and not blob.occurs_in_code("f", 2, last)


def _inside_a_string(text: str, offset: int) -> bool:
    """Python's rule for triple-quoted strings, read from the start: whichever kind opens
    first runs to the next of the same kind."""
    at = 0
    while True:
        opening = min(
            (i for i in (text.find('"""', at), text.find("'''", at)) if i != -1), default=-1
        )
        if opening == -1 or opening > offset:
            return False
        closing = text.find(text[opening : opening + 3], opening + 3)
        end = len(text) if closing == -1 else closing + 3
        if offset < end:
            return True
        at = end


@given(
    st.lists(st.sampled_from(['"""', "'''", '"', "'", "x", "g", "\n", " "]), max_size=40),
    st.randoms(use_true_random=False),
)
def test_where_the_triple_quoted_strings_are_is_told_in_any_order_of_asking(pieces, random):
    # A cited line's name is looked up at any place of a file, in the order the page cites
    # them; the answer must not depend on what was asked before.
    text = "".join(pieces)
    offsets = [n for n, char in enumerate(text) if char not in "\"'"]
    random.shuffle(offsets)
    strings = _TripleQuotedStrings(text)
    for offset in offsets:
        assert strings.contain(offset) == _inside_a_string(text, offset), (text, offset)

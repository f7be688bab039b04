"""`sync` on the edges of held references: bindings, headings, candidates, what it skips, reports.

Each test builds a real upstream history and a knowledge base in git in a temporary directory and
runs ``python -m generator`` on it as a user does."""

from __future__ import annotations

import json
from pathlib import Path

from generator.upstream.gitbuild import RepoBuilder, run_git
from tests.test_sync import cli

FIRST = "def first(value):\n    value = value + 11\n    return value * 17\n"
SECOND = "def second(items):\n    total = sum(items)\n    return total * 23\n"


def _kb(tmp_path: Path, repo: RepoBuilder, pin: str, pages: dict[str, str]) -> Path:
    """A knowledge base in git whose pages cite ``repo`` at ``pin``."""
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "upstreams.yaml").write_text(
        f"cache_dir: {repo.path.parent}\nupstreams:\n  up:\n    url: {repo.path}\n"
        f"    pin: {pin}\n    prefixes: [pkg/]\n",
        "utf-8",
    )
    for name, text in pages.items():
        (root / "docs" / name).write_text(text, "utf-8")
    _commit(root, "kb", init=True)
    return root


def _commit(root: Path, message: str, init: bool = False) -> None:
    if init:
        run_git(root, "init", "-q")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", message)


def _sync(root: Path, target: str) -> str:
    result = cli(root, "sync", "up", "--no-fetch", "--to", target)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _findings(root: Path) -> list[dict]:
    return json.loads(cli(root, "verify", "docs", "--format", "json").stdout)["findings"]


# -- 1. a held entry binds to exactly one reference -------------------------------------------


def test_a_rewrite_that_creates_the_text_of_a_held_reference_does_not_steal_its_binding(
    tmp_path,
):
    """`pkg/u.py:1-3` moves to `pkg/u.py:5-7`, the text of the held reference after it."""
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND}, "base")
    v2 = repo.commit(
        {
            "pkg/u.py": "# a\n# b\n# c\n\n"
            + FIRST
            + "\n"
            + SECOND.replace("(items)\n", "(items) + 1\n")
        },
        "insert above first, edit second",
    )
    root = _kb(
        tmp_path,
        repo,
        v1,
        {"u.md": "# U\n\nThe first: `pkg/u.py:1-3`.\n\nThe second: `pkg/u.py:5-7`.\n"},
    )
    _sync(root, v2)
    page = (root / "docs" / "u.md").read_text("utf-8")
    body = page.split("---\n", 2)[2]
    assert body.count("`pkg/u.py:5-7`") == 2  # the rewrite created the held reference's text
    assert "occurrence: 2" in page  # the held one is the second on the page as written
    findings = _findings(root)
    held = [f for f in findings if f["check"] == "ref-needs-review"]
    assert [(f["line"], f["commit"]) for f in held] == [
        (page.splitlines().index("The second: `pkg/u.py:5-7`.") + 1, v1)
    ]
    assert [f["check"] for f in findings] == ["ref-needs-review"]  # the first checks at v2

    # The next sync follows each of the two from its own commit: the first moves on, the held one
    # stays held at v1 and its entry names it again as the page now reads.
    v3 = repo.commit(
        {"pkg/u.py": "# z\n# y\n" + repo_text(repo, v2, "pkg/u.py")}, "insert above again"
    )
    _commit(root, "synced")
    _sync(root, v3)
    page = (root / "docs" / "u.md").read_text("utf-8")
    assert "The first: `pkg/u.py:7-9`." in page and "The second: `pkg/u.py:5-7`." in page
    assert "occurrence: 1" in page and "occurrence: 2" not in page
    assert page.count("ref: pkg/u.py:5-7") == 1
    held = [f for f in _findings(root) if f["check"] == "ref-needs-review"]
    assert [(f["text"], f["commit"]) for f in held] == [("pkg/u.py:5-7", v1)]


def test_an_edit_that_writes_a_held_reference_s_text_above_it_leaves_the_hold_where_it_was(
    tmp_path,
):
    """A held `第 5-7 行` was named by text and occurrence only: a sentence written above it
    citing the same lines took the hold (checked at the old commit), and the held one was
    checked at the new pin as written, and passed. The entry records the words before the
    reference on its line, and binds by them while a line still reads so."""
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND}, "base")
    v2 = repo.commit(
        {"pkg/u.py": FIRST + "\n" + SECOND.replace("(items)\n", "(items) + 1\n")}, "edit second"
    )
    held_line = "`second()` 的主体在 pkg/u.py 第 5-7 行。"
    root = _kb(tmp_path, repo, v1, {"u.md": f"# U\n\n{held_line}\n"})
    _sync(root, v2)
    page = (root / "docs" / "u.md").read_text("utf-8")
    assert "context: '`second()` 的主体在 pkg/u.py 第'" in page
    assert [f["line"] for f in _findings(root) if f["check"] == "ref-needs-review"] == [
        page.splitlines().index(held_line) + 1
    ]
    # Someone adds a sentence citing the same lines above it, as v2 has them.
    edited = page.replace(
        held_line, "补充：`second()` 在 pkg/u.py 第 5-7 行之前有注释。\n\n" + held_line
    )
    (root / "docs" / "u.md").write_text(edited, "utf-8")
    findings = _findings(root)
    lines = edited.splitlines()
    held = [f["line"] for f in findings if f["check"] == "ref-needs-review"]
    assert held == [lines.index(held_line) + 1]  # still the one sync held
    assert [f for f in findings if f["check"] == "held-ref-unmatched"] == []
    # When the held line itself is edited, the entry falls back to its occurrence, as before.
    reworded = edited.replace(held_line, "它的主体在 pkg/u.py 第 5-7 行。")
    (root / "docs" / "u.md").write_text(reworded, "utf-8")
    held = [f["line"] for f in _findings(root) if f["check"] == "ref-needs-review"]
    assert held == [
        reworded.splitlines().index("补充：`second()` 在 pkg/u.py 第 5-7 行之前有注释。") + 1
    ]


def repo_text(repo: RepoBuilder, commit: str, path: str) -> str:
    return run_git(repo.path, "show", f"{commit}:{path}") + "\n"


# -- 2. a rewrite inside a heading keeps the links to it working ------------------------------


def _heading_ids(markdown_text: str) -> list[str]:
    """The ids the site gives the page's headings (the extensions the starter site uses)."""
    import re

    import markdown

    html = markdown.markdown(
        markdown_text.split("---\n", 2)[2] if markdown_text.startswith("---\n") else markdown_text,
        extensions=["attr_list", "generator.site.anchors", "toc"],
    )
    return re.findall(r'<h\d id="([^"]+)"', html)


def test_a_rewrite_inside_a_heading_keeps_its_old_anchor(tmp_path):
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND}, "base")
    v2 = repo.commit({"pkg/u.py": "# a\n# b\n# c\n\n" + FIRST + "\n" + SECOND}, "insert above")
    page = (
        "# U\n\n"
        "## 1.1 first() 实现（pkg/u.py:1-3）\n\nBody.\n\n"
        "## second `pkg/u.py:5-7` ##\n\nBody.\n\n"
        "## 1.1 first() 实现（pkg/u.py:5-7）\n\nSame words, another range.\n\n"
        "## Kept {#kept-id}\n\n`pkg/u.py:1-3` under a heading with its own id.\n\n"
        "[first](#11-first-实现pkgupy1-3) and [second](#second-pkgupy5-7)\n"
    )
    links = (
        "# Links\n\n[first](u.md#11-first-实现pkgupy1-3), [second](u.md#second-pkgupy5-7), "
        "[third](u.md#11-first-实现pkgupy5-7), [kept](u.md#kept-id)\n"
    )
    root = _kb(tmp_path, repo, v1, {"u.md": page, "links.md": links})
    before_ids = _heading_ids(page)
    assert not _findings(root)  # every link resolves before the sync
    _sync(root, v2)
    synced = (root / "docs" / "u.md").read_text("utf-8")
    assert "## 1.1 first() 实现（pkg/u.py:5-7） {#11-first-实现pkgupy1-3}\n" in synced
    assert "## second `pkg/u.py:9-11` {#second-pkgupy5-7} ##\n" in synced
    assert "## 1.1 first() 实现（pkg/u.py:9-11） {#11-first-实现pkgupy5-7}\n" in synced
    assert "## Kept {#kept-id}\n" in synced  # an explicit id already keeps its anchor
    assert _heading_ids(synced) == before_ids  # the site gives every heading its old id
    assert not _findings(root)  # and the verifier finds every link's anchor
    assert (root / "docs" / "links.md").read_text("utf-8") == links  # no other page is touched
    # A later sync leaves the explicit ids alone.
    _commit(root, "synced")
    v3 = repo.commit({"pkg/u.py": "# z\n" + repo_text(repo, v2, "pkg/u.py")}, "insert again")
    _sync(root, v3)
    again = (root / "docs" / "u.md").read_text("utf-8")
    assert "## 1.1 first() 实现（pkg/u.py:6-8） {#11-first-实现pkgupy1-3}\n" in again
    assert _heading_ids(again) == before_ids and not _findings(root)


# -- 3. candidates exist at the new pin -------------------------------------------------------

WORK = (
    "def work(jobs):\n"
    "    done = [job.run(timeout=30) for job in jobs]\n"
    "    return sorted(done, key=lambda result: result.finished)\n"
)
FILLER = "".join(f"def filler_{n}():\n    return {n} * 7919\n\n\n" for n in range(6))


def _holds(store, commit: str, candidate: tuple[str, int, int], text: str) -> bool:
    entry = store.tree(commit).get(candidate[0])
    if entry is None:
        return False
    lines = store.blob(entry.sha).lines
    return "\n".join(lines[candidate[1] - 1 : candidate[2]]) + "\n" == text


def test_candidates_of_code_copied_then_moved_on_are_where_it_is_at_the_new_pin(tmp_path):
    """The code is copied twice and its original edited (ambiguous from then on), then a copy
    shifts and its file is renamed: the candidates are where the copies are at the new pin,
    not where they were, and the edited original comes after them."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit(
        {"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/b.py": FILLER, "pkg/d.py": FILLER}, "base"
    )
    repo.commit({"pkg/b.py": FILLER + WORK, "pkg/d.py": FILLER + WORK}, "copy work twice")
    edited = WORK.replace("timeout=30", "timeout=60")
    repo.commit(
        {
            "pkg/a.py": "import os\n\n\n" + edited + "\n\n" + FILLER,
            "pkg/b.py": "import re\n" + FILLER + WORK,
        },
        "edit the original, shift a copy",
    )
    new = repo.commit({"pkg/b.py": None, "pkg/c.py": "import re\n" + FILLER + WORK}, "rename b")
    store = GitStore(repo.path)
    drift = Reanchorer(store, old, new).classify("pkg/a.py", 1, 3, "work")
    assert drift.status is DriftStatus.AMBIGUOUS, drift.reason
    assert [c[0] for c in drift.candidates] == ["pkg/c.py", "pkg/d.py", "pkg/a.py"]
    assert all(_holds(store, new, candidate, WORK) for candidate in drift.candidates[:2])


def test_code_copied_elsewhere_stays_where_its_reference_cites_it(tmp_path):
    """A copy of the cited code in another file does not make a reference whose own lines
    still hold the code ambiguous: untouched, it is unchanged; shifted, it follows its file."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/b.py": FILLER}, "base")
    copied = repo.commit({"pkg/b.py": FILLER + WORK}, "copy work into b")
    store = GitStore(repo.path)
    drift = Reanchorer(store, old, copied).classify("pkg/a.py", 1, 3, "work")
    assert drift.status is DriftStatus.UNCHANGED, drift.reason
    assert (drift.new_path, drift.new_start, drift.new_end) == ("pkg/a.py", 1, 3)

    shifted = repo.commit({"pkg/a.py": "import os\n\n\n" + WORK + "\n\n" + FILLER}, "shift a")
    drift = Reanchorer(GitStore(repo.path), old, shifted).classify("pkg/a.py", 1, 3, "work")
    assert drift.status is DriftStatus.MOVED, drift.reason
    assert (drift.new_path, drift.new_start, drift.new_end) == ("pkg/a.py", 4, 6)


def test_code_moved_then_changed_is_a_candidate_where_it_went_not_where_it_was(tmp_path):
    """`work` moves to b.py (another function takes its place in a.py), then is edited there."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    other = "def other(jobs):\n    return [job for job in jobs if job.ready]\n"
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/b.py": FILLER}, "base")
    repo.commit({"pkg/a.py": other + "\n\n" + FILLER, "pkg/b.py": FILLER + WORK}, "move work")
    edited = WORK.replace("timeout=30", "timeout=60")
    new = repo.commit({"pkg/b.py": "import re\n\n" + FILLER + edited}, "edit work in b")
    store = GitStore(repo.path)
    drift = Reanchorer(store, old, new).classify("pkg/a.py", 1, 3, "work")
    assert drift.status is DriftStatus.CHANGED, drift.reason
    assert drift.candidates == [("pkg/b.py", 27, 29)]
    assert _holds(store, new, drift.candidates[0], edited)
    assert drift.new_lines == edited.splitlines()


def test_an_edit_a_later_commit_reverts_leaves_the_reference_where_the_code_is(tmp_path):
    """Edited in one commit, restored in the next while code is inserted above it: the code
    the page cites is there at the new pin, so the reference follows it (it is not held as
    changed); an edit nobody reverts still is."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/a.py": FILLER + WORK}, "base")
    repo.commit({"pkg/a.py": FILLER + WORK.replace("timeout=30", "timeout=99")}, "try 99")
    repo.commit({"pkg/a.py": "import os\n\n" + FILLER + WORK}, "revert, and import os")
    new = repo.commit({"pkg/a.py": "import os\n\n" + FILLER + WORK + "\n\nLIMIT = 3\n"}, "limit")
    store = GitStore(repo.path)
    drift = Reanchorer(store, old, new).classify("pkg/a.py", 25, 27, "work")
    assert drift.status is DriftStatus.MOVED, drift.reason
    assert (drift.new_path, drift.new_start, drift.new_end) == ("pkg/a.py", 27, 29)
    assert _holds(store, new, ("pkg/a.py", 27, 29), WORK)

    kept = repo.commit({"pkg/a.py": FILLER + WORK.replace("timeout=30", "timeout=5")}, "for good")
    drift = Reanchorer(store, old, kept).classify("pkg/a.py", 25, 27, "work")
    assert drift.status is DriftStatus.CHANGED, drift.reason


def test_a_function_copied_then_deleted_where_it_was_is_followed_to_its_copy(tmp_path):
    """Moved in two commits (copied into b.py, then deleted from a.py): the reference follows
    it. A body copied under another name, its original then deleted, is another function:
    the reference is held as ambiguous, with the copy as its candidate."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/b.py": FILLER}, "base")
    repo.commit({"pkg/b.py": FILLER + WORK}, "copy work into b")
    new = repo.commit({"pkg/a.py": FILLER}, "delete work from a")
    store = GitStore(repo.path)
    drift = Reanchorer(store, old, new).classify("pkg/a.py", 1, 3, "work")
    assert drift.status is DriftStatus.MOVED, drift.reason
    assert (drift.new_path, drift.new_start, drift.new_end) == ("pkg/b.py", 25, 27)
    assert _holds(store, new, ("pkg/b.py", 25, 27), WORK)

    renamed = WORK.replace("def work(", "def work_all(")
    repo = RepoBuilder.init(tmp_path / "up2")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/b.py": FILLER}, "base")
    repo.commit({"pkg/b.py": FILLER + renamed}, "copy the body under another name")
    new = repo.commit({"pkg/a.py": FILLER}, "delete work from a")
    body = Reanchorer(GitStore(repo.path), old, new).classify("pkg/a.py", 2, 3, "work")
    assert body.status is DriftStatus.AMBIGUOUS, body.reason
    assert body.candidates == [("pkg/b.py", 26, 27)]


def test_a_function_copied_then_edited_where_it_was_is_held_with_both_places(tmp_path):
    """Copied into b.py, then edited in a.py, which still defines it: that is no move (the
    loader still calls a.py's), and following the unchanged copy pointed the page at code it
    does not describe, with `verify` passing. Which of the two the page means is a person's
    call: held as ambiguous, the copy and the edited original its candidates."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/b.py": FILLER}, "base")
    repo.commit({"pkg/b.py": FILLER + WORK}, "copy work into b")
    edited = WORK.replace("timeout=30", "timeout=60")
    new = repo.commit({"pkg/a.py": edited + "\n\n" + FILLER}, "edit work in a")
    drift = Reanchorer(GitStore(repo.path), old, new).classify("pkg/a.py", 1, 3, "work")
    assert drift.status is DriftStatus.AMBIGUOUS, drift.reason
    assert [c[0] for c in drift.candidates] == ["pkg/b.py", "pkg/a.py"]

    # In one commit: copied into c.py and edited in a.py.
    repo = RepoBuilder.init(tmp_path / "up2")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/c.py": FILLER}, "base")
    new = repo.commit(
        {"pkg/a.py": edited + "\n\n" + FILLER, "pkg/c.py": FILLER + WORK}, "copy and edit"
    )
    drift = Reanchorer(GitStore(repo.path), old, new).classify("pkg/a.py", 1, 3, "work")
    assert drift.status is DriftStatus.AMBIGUOUS, drift.reason
    assert "copied the cited code to pkg/c.py and edited it where it was" in drift.reason
    assert [c[0] for c in drift.candidates] == ["pkg/c.py", "pkg/a.py"]


def test_lines_moved_into_another_function_are_held_as_changed(tmp_path):
    """Two logging lines move from `Trainer.fit` into `Trainer.step` (only their indentation
    differs): found by their text, they were "moved", and the page saying the logging happens
    in `fit` then cited `step`. A whole method moved keeps its name, and still moves."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    step = "    def step(self, batch):\n        loss = self.model(batch)\n        return loss\n"
    logging = "if self.n % 10 == 0:\n    log(self.n, loss)\n"
    fit = (
        "    def fit(self):\n        for batch in self.loader:\n"
        "            loss = self.step(batch)\n"
    )
    indented = "".join(" " * 12 + line + "\n" for line in logging.splitlines())
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/t.py": "class Trainer:\n" + step + "\n" + fit + indented}, "one")
    moved = step.replace(
        "        return loss\n",
        "".join(" " * 8 + line + "\n" for line in logging.splitlines()) + "        return loss\n",
    )
    new = repo.commit({"pkg/t.py": "class Trainer:\n" + moved + "\n" + fit}, "log from step")
    store = GitStore(repo.path)
    drift = Reanchorer(store, old, new).classify("pkg/t.py", 9, 10, "fit")
    assert drift.status is DriftStatus.CHANGED, drift.reason
    assert drift.reason == "the cited lines moved out of `Trainer.fit` into `Trainer.step`"
    assert drift.candidates == [("pkg/t.py", 4, 5)]

    # The whole of `fit`, moved below a new method, is followed.
    helper = "    def helper(self):\n        return 1\n\n"
    later = repo.commit(
        {"pkg/t.py": "class Trainer:\n" + step + "\n" + helper + fit + indented}, "helper"
    )
    drift = Reanchorer(store, old, later).classify("pkg/t.py", 6, 10, "fit")
    assert drift.status is DriftStatus.MOVED, drift.reason
    assert (drift.new_start, drift.new_end) == (9, 13)


def test_a_whole_function_cited_that_grew_is_held_with_all_of_it(tmp_path):
    """The page cites all of `initialize` and says data-parallel groups are never built; then
    upstream adds lines to its end that build them, and imports above it. Its cited lines
    are unchanged, four lines down, and were "moved" there: the page then cited part of the
    function as if it were the whole. It is held as changed, the candidate all of it."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    body = "def initialize(size):\n    build_tensor_groups(size)\n    build_pipeline_groups(size)\n"
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/state.py": body + "\n\n" + FILLER}, "base")
    grown = body + "    build_data_groups(size)\n"
    new = repo.commit(
        {"pkg/state.py": "import os\nimport sys\n\n\n" + grown + "\n\n" + FILLER}, "grow"
    )
    drift = Reanchorer(GitStore(repo.path), old, new).classify("pkg/state.py", 1, 3, "initialize")
    assert drift.status is DriftStatus.CHANGED, drift.reason
    assert drift.reason == (
        "the cited definition `initialize` now spans 5-8: its lines as cited are only part of it"
    )
    assert drift.candidates == [("pkg/state.py", 5, 8)]
    # Part of a function, cited as such, still moves with its lines.
    part = Reanchorer(GitStore(repo.path), old, new).classify("pkg/state.py", 2, 3, None)
    assert part.status is DriftStatus.MOVED, part.reason
    assert (part.new_start, part.new_end) == (6, 7)


def test_a_few_lines_of_a_longer_function_edited_have_what_they_became_as_candidate(tmp_path):
    """Three lines of `train_step` (its forward pass under a timer) are edited: the candidate
    was all of `train_step`, which `kb held accept` then wrote, widening the reference silently.
    It is what the three lines became; a whole function cited still has all of it."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    def trainer(forward: str) -> str:
        return (
            "class Trainer:\n"  # 1
            "    def train_step(self, batch):\n"  # 2
            "        self.optimizer.zero_grad()\n"  # 3
            f"{forward}"  # 4-6
            "        loss.backward()\n"  # 7
            "        self.clip_gradients()\n"  # 8
            "        self.optimizer.step()\n"  # 9
            "        self.scheduler.step()\n"  # 10
            "        self.log(loss)\n"  # 11
            "        return loss\n"  # 12
        )

    forward = (
        "        with self.timer('forward'):\n"
        "            output = self.model(batch)\n"
        "            loss = self.loss_fn(output)\n"
    )
    edited = (
        "        with self.timer('forward', sync=True):\n"
        "            output = self.model(**batch)\n"
        "            loss = self.loss_fn(output, batch)\n"
    )
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/trainer.py": trainer(forward)}, "base")
    new = repo.commit({"pkg/trainer.py": "import os\n\n\n" + trainer(edited)}, "edit forward")
    store = GitStore(repo.path)
    drift = Reanchorer(store, old, new).classify("pkg/trainer.py", 4, 6, None)
    assert drift.status is DriftStatus.CHANGED, drift.reason
    assert drift.candidates == [("pkg/trainer.py", 7, 9)]
    whole = Reanchorer(store, old, new).classify("pkg/trainer.py", 2, 12, "train_step")
    assert whole.status is DriftStatus.CHANGED, whole.reason
    assert whole.candidates == [("pkg/trainer.py", 5, 15)]


# -- 4. nothing is skipped silently -----------------------------------------------------------


def test_references_that_resolve_to_no_single_file_are_listed_with_the_reason(tmp_path):
    repo = RepoBuilder.init(tmp_path / "up")
    util = "def helper():\n    return 1\n"
    v1 = repo.commit({"pkg/u.py": FIRST, "pkg/a/util.py": util, "pkg/b/util.py": util}, "base")
    v2 = repo.commit({"pkg/u.py": "# moved down\n" + FIRST}, "insert above")
    page = (
        "# U\n\n`pkg/u.py:1-3` moves.\n\n"
        "The bare name `util.py:1-2` is ambiguous; `vendor/thing.py:3` belongs to no upstream.\n"
    )
    root = _kb(tmp_path, repo, v1, {"u.md": page})
    dry = cli(root, "sync", "up", "--no-fetch", "--to", v2, "--dry-run")
    assert "u.md:5:16: util.py:1-2: not resolved (ambiguous-file: 'util.py' matches 2 files" in (
        dry.stdout
    )
    stdout = _sync(root, v2)
    assert (
        f"2 references resolved to no single file at {v1[:7]} and were left as written "
        "(1 ambiguous-file, 1 unattributed; listed in the drift report)"
    ) in stdout
    reports = root / ".cache" / "reports"
    data = json.loads(next(reports.glob("*.json")).read_text("utf-8"))
    assert [(r["text"], r["check"]) for r in data["unresolved"]] == [
        ("util.py:1-2", "ambiguous-file"),
        ("vendor/thing.py:3", "unattributed"),
    ]
    markdown = next(reports.glob("*.md")).read_text("utf-8")
    assert f"## Not resolved at {v1[:7]}" in markdown
    written = (root / "docs" / "u.md").read_text("utf-8").splitlines()
    line = next(n for n, text in enumerate(written, 1) if "`util.py:1-2`" in text)
    assert line > 5  # named where it is in the page as sync wrote it, frontmatter and all
    assert f"- `docs/u.md:{line}` `util.py:1-2`: ambiguous-file: 'util.py' matches 2" in markdown
    assert f"- `docs/u.md:{line}` `vendor/thing.py:3`: unattributed: no configured" in markdown
    assert [r["line_before"] for r in data["unresolved"]] == [5, 5]
    assert "`pkg/u.py:1-3` moves" not in (root / "docs" / "u.md").read_text("utf-8")


# -- 5. reports people can read ---------------------------------------------------------------


def test_the_markdown_report_shows_a_bounded_excerpt_and_the_json_the_full_text(tmp_path):
    """A 400-line function with one line edited in its middle, and a deleted 300-line one."""
    body = "".join(f"    step_{n} = compute({n})\n" for n in range(400))
    big = "def big():\n" + body + "    return step_0\n"
    doomed = "def doomed():\n" + body[: len(body) * 3 // 4] + "    return None\n"
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/big.py": big, "pkg/doomed.py": doomed}, "base")
    v2 = repo.commit(
        {"pkg/big.py": big.replace("compute(200)", "compute(-200)"), "pkg/doomed.py": None},
        "edit one line, delete a file",
    )
    root = _kb(tmp_path, repo, v1, {"u.md": "# U\n\n`pkg/big.py:1-402`\n\n`pkg/doomed.py:1-302`\n"})
    _sync(root, v2)
    reports = root / ".cache" / "reports"
    markdown = next(reports.glob("*.md")).read_text("utf-8")
    lines = markdown.splitlines()
    assert len(lines) < 80, markdown
    # Named at its line in the page as sync wrote it (the new frontmatter comes first).
    line = (root / "docs" / "u.md").read_text("utf-8").splitlines().index("`pkg/big.py:1-402`")
    assert line + 1 > 3
    assert lines.index("## For review") < lines.index(
        f"### `docs/u.md:{line + 1}` `pkg/big.py:1-402` — changed"
    )
    excerpt = markdown.split("```diff\n", 1)[1].split("```", 1)[0].splitlines()
    assert "-    step_200 = compute(200)" in excerpt and "+    step_200 = compute(-200)" in excerpt
    assert "     step_198 = compute(198)" in excerpt and "step_190 " not in markdown
    assert "  1  def doomed():" in markdown and "compute(20)" not in markdown
    assert "… 290 more lines in the JSON report" in markdown
    data = json.loads(next(reports.glob("*.json")).read_text("utf-8"))
    big_entry = next(r for r in data["refs"] if r["text"] == "pkg/big.py:1-402")
    assert len(big_entry["old_lines"]) == len(big_entry["new_lines"]) == 402


# -- 6. candidates are plausible --------------------------------------------------------------

ACTORS = (
    "class MegatronActor:\n"
    "    def sleep(self, seconds):\n"
    "        self.engine.offload(seconds, tag='megatron')\n"
    "        return seconds\n"
    "\n"
    "\n"
    "class FSDPActor:\n"
    "    def sleep(self, seconds):\n"
    "        self.model.to('cpu', non_blocking=True)\n"
    "        return seconds\n"
)


def test_a_changed_method_is_a_candidate_in_its_own_class(tmp_path):
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/actors.py": ACTORS}, "base")
    new = repo.commit(
        {
            "pkg/actors.py": "import os\n\n\n"
            + ACTORS.replace("non_blocking=True", "non_blocking=False")
        },
        "edit FSDPActor.sleep",
    )
    drift = Reanchorer(GitStore(repo.path), old, new).classify("pkg/actors.py", 8, 10, "sleep")
    assert drift.status is DriftStatus.CHANGED, drift.reason
    assert drift.candidates == [("pkg/actors.py", 11, 13)]  # FSDPActor.sleep, not Megatron's


def test_deleted_code_lists_definitions_in_its_language_best_first_and_capped(tmp_path):
    from generator.sync.reanchor import MAX_CANDIDATES, DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    method = "    def __init__(self, size):\n        self.size = size * 4096\n"
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/pool.py": "class Pool:\n" + method, "pkg/keep.py": "x = 1\n"}, "base")
    others = {
        f"pkg/other_{n}.py": f"class Other{n}:\n    def __init__(self):\n        self.n = {n}\n"
        for n in range(7)
    }
    new = repo.commit(
        {
            "pkg/pool.py": None,
            "docker/fix.patch": "@@ -1,2 +1,2 @@\n class Pool:\n" + method,
            "docs/notes.md": "```python\ndef __init__(self, size):\n```\n",
            "pkg/pools/pool.py": "import os\n\n\nclass Pool:\n"
            + method.replace("4096", "8192")
            + "    def free(self):\n        return self.size\n",
            **others,
        },
        "delete pool.py; the class lives on elsewhere, patches mention it",
    )
    drift = Reanchorer(GitStore(repo.path), old, new).classify("pkg/pool.py", 2, 3, "__init__")
    assert drift.status is DriftStatus.DELETED, drift.reason
    assert drift.candidates[0] == ("pkg/pools/pool.py", 5, 6)  # the same Pool.__init__
    assert all(path.endswith(".py") for path, _, _ in drift.candidates)
    assert len(drift.candidates) == MAX_CANDIDATES and drift.more_candidates == 3


def test_code_copied_within_its_own_file_stays_ambiguous(tmp_path):
    """A copy inserted above the cited function in the same file: the diff may pair the old
    lines with either copy, so the reference is held with both as candidates."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/a.py": "class Runner:\n" + _indented(WORK) + "\n\n" + FILLER}, "base")
    new = repo.commit(
        {
            "pkg/a.py": "class Batch:\n"
            + _indented(WORK)
            + "\n\nclass Runner:\n"
            + _indented(WORK)
            + "\n\n"
            + FILLER
        },
        "add a Batch runner with the same work",
    )
    drift = Reanchorer(GitStore(repo.path), old, new).classify("pkg/a.py", 2, 4, "Runner.work")
    assert drift.status is DriftStatus.AMBIGUOUS, drift.reason
    assert sorted(drift.candidates) == [("pkg/a.py", 2, 4), ("pkg/a.py", 8, 10)]


def _indented(code: str) -> str:
    return "".join(f"    {line}\n" for line in code.splitlines())


TWINS = (
    "def first_thing(data):\n"
    "    cleaned = [d for d in data if d]\n"
    "    cleaned.sort()\n"
    "    return cleaned\n"
    "\n"
    "\n"
    "def second_thing(data):\n"
    "    cleaned = [d for d in data if d]\n"
    "    cleaned.sort()\n"
    "    return cleaned\n"
)


def test_deleted_code_is_not_followed_to_another_function_with_the_same_body(tmp_path):
    """``first_thing`` is deleted; ``second_thing``, which was there all along, has the same
    body. The cited body is gone, whether or not a later commit shifts the file: the other
    function's body is not where it went."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/m.py": TWINS}, "base")
    dropped = TWINS.split("\n\n\n", 1)[1]
    deleted = repo.commit({"pkg/m.py": dropped}, "drop first_thing")
    shifted = repo.commit({"pkg/m.py": "X = 1\nY = 2\n\n\n" + dropped}, "add constants")
    for new in (deleted, shifted):
        drift = Reanchorer(GitStore(repo.path), old, new).classify("pkg/m.py", 2, 4, "first_thing")
        assert drift.status is DriftStatus.DELETED, drift.reason
        assert drift.new_path is None and drift.candidates == []


def _second_held(tmp_path: Path) -> tuple[RepoBuilder, Path, str, str]:
    """A page citing `second` at v1, synced to v2, which edits it: the reference is held."""
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND}, "base")
    v2 = repo.commit(
        {"pkg/u.py": FIRST + "\n" + SECOND.replace("(items)\n", "(items) + 1\n")}, "edit second"
    )
    root = _kb(tmp_path, repo, v1, {"u.md": "# U\n\nThe second: `pkg/u.py:5-7`.\n"})
    _sync(root, v2)
    return repo, root, v1, v2


def test_a_page_whose_references_are_all_held_moves_to_the_new_pin_with_the_others(tmp_path):
    """Its only reference is held at v1 by the first sync; the second sync has nothing to
    rewrite on it, and still anchors the page at v3, with the held entry's candidate followed
    there: a reference added to it afterwards is written against the pin, and checked there,
    not at v2."""
    repo, root, v1, v2 = _second_held(tmp_path)
    _commit(root, "synced")
    v3 = repo.commit({"pkg/u.py": "# a\n# b\n" + repo_text(repo, v2, "pkg/u.py")}, "insert")
    _sync(root, v3)
    page = (root / "docs" / "u.md").read_text("utf-8")
    assert f"up: {v3}" in page.split("held_refs:")[0]  # anchored_at
    assert f"commit: {v1}" in page  # the held reference stays where it was held
    # Its candidate, lines of v2 after the first sync, names the same code at v3 now.
    assert "candidate: pkg/u.py:7-9" in page
    with (root / "docs" / "u.md").open("a", encoding="utf-8") as handle:
        handle.write(f"\nThe first, as it is now (`pkg/u.py:3-5`):\n\n```python\n{FIRST}```\n")
    findings = _findings(root)
    assert [f["check"] for f in findings] == ["ref-needs-review"], findings


def test_a_held_reference_whose_edit_is_reverted_later_is_released_by_the_next_sync(tmp_path):
    """Held at v1 by the sync to v2 (its code was edited there); v3 reverts the edit and adds
    lines above it. The sync to v3 follows the reference from v1, where it was held: it is
    rewritten to where the code is and leaves held_refs, as one sync from v1 would have done."""
    repo, root, _, _ = _second_held(tmp_path)
    assert "held_refs" in (root / "docs" / "u.md").read_text("utf-8")
    _commit(root, "synced")
    v3 = repo.commit({"pkg/u.py": "# a\n# b\n" + FIRST + "\n" + SECOND}, "revert, insert above")
    out = _sync(root, v3)
    page = (root / "docs" / "u.md").read_text("utf-8")
    assert "The second: `pkg/u.py:7-9`." in page, out
    assert "held_refs" not in page and f"up: {v3}" in page
    assert _findings(root) == []


def test_a_reference_already_wrong_stays_reported_after_syncs_that_make_its_lines_pass(tmp_path):
    """A draft names `second()` beside lines that hold `first()`, and `third()` beside lines
    of a file that has no `third`. Once the code moves, the same line numbers hold `second`,
    and `third` is added there: as written, both would pass at the new pin, though nobody
    corrected them. Sync holds them where they were wrong, and a later sync never releases
    them."""
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND}, "base")
    third = "def third(x):\n    return x * 31\n"
    new = repo.commit({"pkg/u.py": SECOND + "\n" + FIRST + "\n" + third}, "reorder, add third")
    later = repo.commit({"pkg/u.py": SECOND + "\n" + FIRST + "\n" + third + "\n\n# end\n"}, "end")
    root = _kb(
        tmp_path,
        repo,
        old,
        {
            "u.md": "# U\n\n`second()` is at `pkg/u.py:1-3`.\n\n"
            "`third()` is defined in `pkg/u.py:5-7`.\n\n`first()` is at `pkg/u.py:1-3`.\n"
        },
    )
    before = [(f["check"], f["line"]) for f in _findings(root)]
    assert before == [("symbol-not-in-range", 3), ("symbol-not-found", 5)]
    _sync(root, new)
    page = (root / "docs" / "u.md").read_text("utf-8")
    assert "`first()` is at `pkg/u.py:5-7`" in page  # the right one followed its code
    assert (
        "`second()` is at `pkg/u.py:1-3`" in page
        and "`third()` is defined in `pkg/u.py:5-7`" in page
    )
    assert page.count("status: was-broken") == 2
    report = json.loads(next((root / ".cache" / "reports").glob("*.json")).read_text())
    assert report["summary"] == {"moved": 1, "was-broken": 2}

    def reported(root: Path) -> list[tuple[str, str]]:
        return sorted((f["check"], f["text"]) for f in _findings(root))

    expected = [
        ("ref-needs-review", "pkg/u.py:1-3"),
        ("ref-needs-review", "pkg/u.py:5-7"),
        ("symbol-not-found", "pkg/u.py:5-7"),
        ("symbol-not-in-range", "pkg/u.py:1-3"),
    ]
    assert reported(root) == expected
    _commit(root, "synced")
    _sync(root, later)
    assert reported(root) == expected
    assert (root / "docs" / "u.md").read_text("utf-8").count("status: was-broken") == 2


def test_a_reference_whose_quote_its_lines_lack_stays_held_where_it_was_wrong(tmp_path):
    """A draft cites the lines of `first()` and quotes `second()` under them. Once the code
    moves, those line numbers hold `second()`: rewritten along with `first()`, the reference
    would keep quoting code its new lines lack; kept as written, its quote would pass at the
    new pin though nobody corrected it. Sync holds it at the old pin, where it was wrong."""
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND}, "base")
    new = repo.commit({"pkg/u.py": SECOND + "\n" + FIRST}, "reorder")
    quote = "```python\n" + SECOND + "```\n"
    root = _kb(
        tmp_path,
        repo,
        old,
        {"q.md": f"# Q\n\nThe sum, `pkg/u.py:1-3`:\n\n{quote}\nAnd `pkg/u.py:1-3` again.\n"},
    )
    assert [(f["check"], f["line"]) for f in _findings(root)] == [("quote-elsewhere", 3)]
    _sync(root, new)
    page = (root / "docs" / "q.md").read_text("utf-8")
    assert "The sum, `pkg/u.py:1-3`:" in page  # as written, held at the old pin
    assert "And `pkg/u.py:5-7` again." in page  # the other one followed its code
    assert page.count("status: was-broken") == 1
    report = json.loads(next((root / ".cache" / "reports").glob("*.json")).read_text())
    assert report["summary"] == {"moved": 1, "was-broken": 1}
    # Still reported where it was wrong, until a person corrects it.
    held = sorted((f["check"], f["text"]) for f in _findings(root))
    assert held == [("quote-elsewhere", "pkg/u.py:1-3"), ("ref-needs-review", "pkg/u.py:1-3")]


def _written_against_another_commit(tmp_path: Path, *, later: bool) -> tuple[Path, str]:
    """A knowledge base whose page quotes `pkg/u.py:5-7` as another commit (``later`` than its
    pin, or earlier) has it: wrong at the pin, whole at the commit returned."""
    repo = RepoBuilder.init(tmp_path / "up")
    edited = SECOND.replace("total * 23", "total * 29")

    def commit(text: str) -> str:
        return repo.commit({"pkg/u.py": FIRST + "\n" + text}, "v")

    if later:
        pin, written_against = commit(SECOND), commit(edited)
    else:
        written_against, pin = commit(edited), commit(SECOND)
    root = _kb(
        tmp_path,
        repo,
        pin,
        {"q.md": f"# Q\n\nThe sum, `pkg/u.py:5-7`:\n\n```python\n{edited}```\n"},
    )
    assert [f["check"] for f in _findings(root)] == ["quote-elsewhere"]
    return root, written_against


def test_a_quote_whole_at_the_new_commit_is_the_correction_and_is_not_held(tmp_path):
    """A draft written against a commit after its pin quotes a line as that commit has it:
    wrong at the old pin, right at the new one as written. Sync to that commit keeps the text
    and holds nothing: `was-broken`, never released, would leave verify asking for a pin the
    page then has."""
    root, written_against = _written_against_another_commit(tmp_path, later=True)
    assert "unchanged" in _sync(root, written_against)
    page = (root / "docs" / "q.md").read_text("utf-8")
    assert "The sum, `pkg/u.py:5-7`:" in page and "held_refs" not in page
    assert _findings(root) == []


def test_code_copied_then_in_one_place_again_is_followed_and_otherwise_the_copy_is_named(
    tmp_path,
):
    """A commit between the pins copies `work` within its file and a later one deletes the
    copy: the code is in one place at the new pin, where the cited lines lead, though sync
    called it ambiguous, "now in more than one place". When a copy under another name in
    another file stays and the original changes, the reason names the commit that copied the
    code, not a duplicate the new pin does not have; when both stay, the code is in more than
    one place."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    def classify(repo: RepoBuilder, old: str, start: int, end: int):  # type: ignore[no-untyped-def]
        return Reanchorer(GitStore(repo.path), old, repo.head()).classify(
            "pkg/a.py", start, end, None
        )

    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER}, "base")
    repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER + WORK}, "copy work")
    repo.commit({"pkg/a.py": "import os\n" + WORK + "\n\n" + FILLER}, "drop the copy")
    drift = classify(repo, old, 1, 3)
    assert drift.status is DriftStatus.MOVED, drift.reason
    assert (drift.new_path, drift.new_start, drift.new_end) == ("pkg/a.py", 2, 4)
    # Moved down its file later, the code cannot be followed through the diff (a move is a
    # deletion there), and which copy it came from cannot be told: held, saying so.
    repo.commit({"pkg/a.py": FILLER + WORK}, "move work down")
    drift = classify(repo, old, 1, 3)
    assert drift.status is DriftStatus.AMBIGUOUS
    assert drift.reason.endswith("one place holds it at the new commit"), drift.reason

    # A body copied under another name in the same file, the original edited, the copy moved:
    # the one place holding the code is another function, never where the lines go.
    repo = RepoBuilder.init(tmp_path / "up3")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER}, "base")
    other = WORK.replace("def work(jobs)", "def other(jobs)")
    repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER + other}, "copy the body")
    edited = WORK.replace("30", "60")
    repo.commit({"pkg/a.py": edited + "\n\n" + FILLER + other}, "edit work")
    repo.commit({"pkg/a.py": other + "\n\n" + edited + "\n\n" + FILLER}, "move other up")
    drift = classify(repo, old, 2, 3)
    assert drift.status is DriftStatus.AMBIGUOUS, (drift.status, drift.new_start)

    repo = RepoBuilder.init(tmp_path / "up2")
    old = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER}, "base")
    other = WORK.replace("def work(jobs)", "def other(jobs)")
    copied = repo.commit({"pkg/b.py": other}, "copy the body")
    repo.commit({"pkg/a.py": WORK.replace("30", "60") + "\n\n" + FILLER}, "edit")
    drift = classify(repo, old, 2, 3)
    assert drift.status is DriftStatus.AMBIGUOUS
    assert drift.reason == (
        f"commit {copied[:7]} copied the cited code, and which copy the page means cannot be "
        "told; one place holds it at the new commit"
    )
    assert drift.candidates[0] == ("pkg/b.py", 2, 3)
    repo.commit({"pkg/a.py": FILLER + WORK}, "restore work, further down")
    drift = classify(repo, old, 2, 3)
    assert drift.status is DriftStatus.AMBIGUOUS
    assert drift.reason == "the cited code now appears in more than one place"


def test_a_deleted_duplicate_names_the_definition_that_was_there_all_along(tmp_path):
    """`work` was duplicated in b.py before the old pin, and the sync deletes the copy in
    a.py: the cited lines are gone (the other copy is not where they went), and the report
    names b.py's definition as the candidate, though no commit of the sync touched b.py.
    Lines cited with the blank lines above a function, which the deletion takes along, follow
    the function that stays."""
    from generator.sync.reanchor import DriftStatus, Reanchorer
    from generator.upstream.gitstore import GitStore

    repo = RepoBuilder.init(tmp_path / "up")
    repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER}, "base")
    old = repo.commit({"pkg/b.py": "import os\n\n\n" + WORK}, "duplicate work into b")
    new = repo.commit({"pkg/a.py": FILLER}, "use b's work")
    reanchorer = Reanchorer(GitStore(repo.path), old, new)
    drift = reanchorer.classify("pkg/a.py", 1, 3, None)
    assert drift.status is DriftStatus.DELETED, drift.reason
    assert drift.candidates == [("pkg/b.py", 4, 6)]
    assert "`work` is now defined at pkg/b.py:4-6" in drift.reason

    stays = reanchorer.classify("pkg/a.py", 4, 7, None)  # two blank lines, then filler_0
    assert stays.status is DriftStatus.MOVED, stays.reason
    assert (stays.new_path, stays.new_start, stays.new_end) == ("pkg/a.py", 1, 2)
    # Cited from the blank lines above filler_0 to its first line: the name is filler_0's.
    assert "`work`" not in reanchorer.classify("pkg/a.py", 4, 6, None).reason

    # Another class's method of the same name, there all along, is no twin.
    layer = "class Old:\n    def forward(self, x):\n        return x * 2 + 1\n"
    other = "class Net:\n    def forward(self, x):\n        return x * 3 - 1\n"
    repo = RepoBuilder.init(tmp_path / "up2")
    old = repo.commit({"pkg/old.py": layer, "pkg/net.py": other}, "base")
    new = repo.commit({"pkg/old.py": None}, "drop Old")
    gone = Reanchorer(GitStore(repo.path), old, new).classify("pkg/old.py", 2, 3, None)
    assert gone.status is DriftStatus.DELETED and gone.candidates == [], gone.reason


def test_a_page_written_against_an_older_commit_is_not_said_to_be_newer(tmp_path):
    """The same correction backwards: a page pinned to a commit but written against an earlier
    one, synced to that earlier commit, stays as written, and the reason does not call the
    commit it was written against a newer one."""
    root, written_against = _written_against_another_commit(tmp_path, later=False)
    assert "(1 unchanged)" in _sync(root, written_against)
    [drift_report] = (root / ".cache" / "reports").glob("drift-up-*.json")
    reason = drift_report.read_text("utf-8")
    assert "newer" not in reason
    assert "written against the commit this sync moves to" in reason
    assert _findings(root) == []


def _synced_with_a_quote_already_wrong(tmp_path: Path, above: str) -> tuple[Path, str]:
    """A page citing `first()`'s lines with `second()`'s code quoted, synced past a commit
    that adds ``above`` at the top of the file: held as was-broken. (The knowledge base, the
    commit it is held at.)"""
    repo = RepoBuilder.init(tmp_path / "up")
    old = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND}, "base")
    new = repo.commit({"pkg/u.py": above + FIRST + "\n" + SECOND}, "insert above")
    quote = "```python\n" + SECOND + "```\n"
    root = _kb(tmp_path, repo, old, {"u.md": f"# U\n\nThe first, `pkg/u.py:1-3`:\n\n{quote}"})
    _sync(root, new)
    return root, old


def test_the_drift_report_names_a_held_quote_at_its_line_in_the_page_as_written(tmp_path):
    """The report's heading named the reference where it is once sync wrote its held entry
    into the frontmatter, and its reason the quote where it was before: two numberings."""
    root, _ = _synced_with_a_quote_already_wrong(tmp_path, "# top\n")
    written = (root / "docs" / "u.md").read_text("utf-8").splitlines()
    assert "    status: was-broken" in written  # held: its quote was already wrong at `old`
    ref_line = next(n for n, text in enumerate(written, 1) if "`pkg/u.py:1-3`" in text)
    quote_line = written.index("```python") + 2  # the first line of the quoted code
    markdown = next((root / ".cache" / "reports").glob("*.md")).read_text("utf-8")
    assert f"### `docs/u.md:{ref_line}` `pkg/u.py:1-3` — was-broken" in markdown
    assert f"the code the page quotes at its line {quote_line} (" in markdown


def test_a_held_quote_s_range_help_says_it_is_at_the_commit_it_is_held_at(tmp_path):
    """A new user followed the help of a held reference's `quote-elsewhere` (a range at the
    commit sync held it at), removed the held entry, and the reference failed at the pin."""
    root, old = _synced_with_a_quote_already_wrong(tmp_path, "# top\n\n")
    (found,) = [f for f in _findings(root) if f["check"] == "quote-elsewhere"]
    assert f"at up@{old[:7]}; it is at 5-7" in found["message"]
    assert found["suggestion"] == (
        f"pkg/u.py:5-7 at up@{old[:7]}, where sync held it; at the pin, cite where the code "
        "is now (see ref-needs-review)"
    )
    assert found.get("fix") is None


# -- 5. accepting what sync held ----------------------------------------------------------------


def test_held_references_are_listed_and_accepted_at_their_candidates(tmp_path):
    """After a sync, review was hand work: edit each reference, then delete its entry from
    the frontmatter. `kb held list` shows them; `kb held accept` rewrites each to its
    candidate in its style and drops its entry; one with no candidate is left, with why."""
    repo = RepoBuilder.init(tmp_path / "up")
    gone = "def third(x):\n    return x * 31\n"
    v1 = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND, "pkg/gone.py": gone}, "base")
    edited = FIRST.replace("+ 11", "+ 12")
    v2 = repo.commit(
        {"pkg/u.py": "import os\n\n" + edited + "\n" + SECOND, "pkg/gone.py": None}, "edit"
    )
    page = (
        "---\ntitle: U\n---\n# U\n\n"
        "`first` (`pkg/u.py:1-3`) adds eleven.\n\n"
        "`first` (u.py:1-3), again.\n\n"
        "The copy: `pkg/gone.py:1-2`.\n"
    )
    root = _kb(tmp_path, repo, v1, {"u.md": page})
    _sync(root, v2)
    _commit(root, "sync")
    lines = (root / "docs" / "u.md").read_text("utf-8").splitlines()
    first, again, copy = (
        next(n for n, line in enumerate(lines, 1) if line.startswith(start))
        for start in ("`first` (`pkg", "`first` (u.py", "The copy")
    )
    listed = cli(root, "held", "list")
    assert listed.returncode == 1, listed.stderr
    assert listed.stdout.splitlines() == [
        f"docs/u.md:{first}:11: pkg/u.py:1-3 (changed at up@{v1[:7]}; candidate pkg/u.py:3-5)",
        f"docs/u.md:{again}:10: u.py:1-3 (changed at up@{v1[:7]}; candidate pkg/u.py:3-5)",
        f"docs/u.md:{copy}:12: pkg/gone.py:1-2 (deleted at up@{v1[:7]}; no candidate)",
        "3 references held for review",
    ]
    before = (root / "docs" / "u.md").read_bytes()
    dry = cli(root, "held", "accept", "--dry-run", "--ref", "u.py:1-3")
    assert f"docs/u.md:{again}:10: would accept u.py:1-3 -> u.py:3-5" in dry.stdout
    assert (root / "docs" / "u.md").read_bytes() == before

    done = cli(root, "held", "accept")
    assert done.returncode == 1  # one is left
    assert done.stdout.splitlines() == [
        f"docs/u.md:{first}:11: accepted pkg/u.py:1-3 -> pkg/u.py:3-5",
        f"docs/u.md:{again}:10: accepted u.py:1-3 -> u.py:3-5",
        f"docs/u.md:{copy}:12: left pkg/gone.py:1-2: no candidate: its code is gone (deleted); "
        "edit it by hand",
        "accepted 2 held references, left 1; wrote 1 page; run `kb verify` to check them",
    ]
    text = (root / "docs" / "u.md").read_text("utf-8")
    assert "`first` (`pkg/u.py:3-5`) adds eleven." in text and "`first` (u.py:3-5)" in text
    assert text.count("  - upstream: up") == 1 and "ref: pkg/gone.py:1-2" in text
    # What is left is reported as before; the accepted ones are checked at the new pin, where
    # the page's "eleven" is for the person who accepted them to read again.
    copy = next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith("The copy"))
    assert [(f["check"], f["line"]) for f in _findings(root)] == [("ref-needs-review", copy)]
    assert cli(root, "held", "list").stdout.splitlines()[-1] == "1 reference held for review"


def test_a_reference_of_no_single_upstream_is_listed_once_by_a_sync_of_all(tmp_path):
    """`util.py:1`, a name two upstreams have: a sync of both listed it under each, as
    "resolved to no single file at" each one's commit, though it belongs to neither yet."""
    util = "def helper():\n    return 1\n"
    repos, pins = {}, {}
    for name in ("alpha", "beta"):
        repos[name] = RepoBuilder.init(tmp_path / name)
        pins[name] = repos[name].commit({f"{name}/util.py": util}, "util")
        repos[name].commit({f"{name}/util.py": "import os\n" + util}, "import os")
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "upstreams.yaml").write_text(
        f"cache_dir: {tmp_path}\nupstreams:\n"
        + "".join(
            f"  {name}:\n    url: {repos[name].path}\n    pin: {pins[name]}\n"
            f"    prefixes: [{name}/]\n"
            for name in ("alpha", "beta")
        ),
        "utf-8",
    )
    (root / "docs" / "u.md").write_text("---\ntitle: U\n---\n# U\n\nSee util.py:1.\n", "utf-8")
    _commit(root, "kb", init=True)
    result = cli(root, "sync", "--no-fetch", "--dry-run")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("docs/u.md:6:5: util.py:1: not resolved") == 1, out
    assert out.count("resolved to no single file at") == 1, out
    assert (
        "1 reference that resolved to no single file, listed under alpha above, may be this "
        "upstream's too: left as written"
    ) in out


def test_accepting_keeps_a_heading_s_anchor_and_leaves_an_ambiguous_hold_unless_named(tmp_path):
    """A held reference in a heading was rewritten with no `{#id}`: a link to the heading from
    another page broke, and every build with it. A reference whose code two places hold was
    settled on the first, silently; and `--ref` naming nothing said it had accepted 0."""
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/u.py": FIRST + "\n" + SECOND, "pkg/w.py": SECOND}, "base")
    v2 = repo.commit(
        {
            "pkg/u.py": "import os\n\n" + FIRST.replace("+ 11", "+ 12") + "\n" + SECOND,
            "pkg/v.py": FIRST,
        },
        "copy first into v, edit it in u",
    )
    pages = {
        "u.md": "---\ntitle: U\n---\n# U\n\n## `first` (pkg/u.py:1-3)\n\nIt adds eleven.\n",
        "links.md": "---\ntitle: L\n---\n# L\n\nSee [first](u.md#first-pkgupy1-3).\n",
    }
    root = _kb(tmp_path, repo, v1, pages)
    assert [f["check"] for f in _findings(root)] == []
    _sync(root, v2)
    _commit(root, "sync")
    (entry,) = [
        line for line in cli(root, "held", "list").stdout.splitlines() if "pkg/u.py" in line
    ]
    assert "(ambiguous at" in entry
    left = cli(root, "held", "accept")
    assert left.returncode == 1
    assert "left pkg/u.py:1-3: ambiguous: its code is in several places" in left.stdout
    assert "--ref pkg/u.py:1-3" in left.stdout
    unknown = cli(root, "held", "accept", "--ref", "pkg/nothing.py:1-2")
    assert unknown.returncode == 1
    assert "no held reference is written as pkg/nothing.py:1-2" in unknown.stdout
    # Another of its places, the edited original, is taken with --to.
    assert cli(root, "held", "accept", "--to", "pkg/u.py:3-5").returncode == 2
    other = cli(
        root, "held", "accept", "--dry-run", "--ref", "pkg/u.py:1-3", "--to", "pkg/u.py:3-5"
    )
    assert "would accept pkg/u.py:1-3 -> pkg/u.py:3-5" in other.stdout, other.stdout
    named = cli(root, "held", "accept", "--ref", "pkg/u.py:1-3")
    assert named.returncode == 0, named.stdout
    assert "accepted pkg/u.py:1-3 -> pkg/v.py:1-3" in named.stdout
    text = (root / "docs" / "u.md").read_text("utf-8")
    assert "## `first` (pkg/v.py:1-3) {#first-pkgupy1-3}" in text
    assert [f["check"] for f in _findings(root)] == []


def test_accepting_a_table_row_moves_its_path_cell_with_its_lines(tmp_path):
    """A held reference in a table, its path in the cell before its lines, whose candidate is
    in another file: accept left it ("written apart from its lines"), as `--fix` does not."""
    other = "def other(jobs):\n    return [job for job in jobs if job.ready]\n"
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/a.py": WORK + "\n\n" + FILLER, "pkg/b.py": FILLER}, "base")
    repo.commit({"pkg/a.py": other + "\n\n" + FILLER, "pkg/b.py": FILLER + WORK}, "move work")
    edited = WORK.replace("timeout=30", "timeout=60")
    v2 = repo.commit({"pkg/b.py": "import re\n\n" + FILLER + edited}, "edit work in b")
    page = (
        "---\ntitle: T\n---\n# T\n\n| file | lines | what |\n|---|---|---|\n"
        "| `pkg/a.py` | 1-3 | `work` |\n"
    )
    root = _kb(tmp_path, repo, v1, {"t.md": page})
    _sync(root, v2)
    _commit(root, "sync")
    done = cli(root, "held", "accept")
    assert done.returncode == 0, done.stdout
    assert "accepted 1-3 -> 27-29" in done.stdout
    text = (root / "docs" / "t.md").read_text("utf-8")
    assert "| `pkg/b.py` | 27-29 | `work` |" in text and "held_refs" not in text
    assert [f["check"] for f in _findings(root)] == []


def test_a_quote_left_as_the_code_was_after_accepting_a_hold_asks_for_the_new_code(tmp_path):
    """After a sync and `kb held accept`, the page's quote is the code as it was: verify said
    the page "may have been written against" the older commit, with `kb pin suggest`, which
    moves the pin back and undoes the sync. On a page a sync moved, it asks for the quote."""
    step = (
        "def step(model, batch):\n"
        "    loss = model(batch).mean()\n"
        "    loss.backward()\n"
        "    return loss\n"
    )
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/train.py": step}, "base")
    v2 = repo.commit(
        {"pkg/train.py": step.replace(".mean()", ".sum() / len(batch)")}, "average by hand"
    )
    quote = "```python\n" + step + "```\n"
    root = _kb(tmp_path, repo, v1, {"t.md": f"# T\n\n`step()` (pkg/train.py:1-4):\n\n{quote}"})
    _sync(root, v2)
    _commit(root, "sync")
    accepted = cli(root, "held", "accept")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    (finding,) = [f for f in _findings(root) if f["check"].startswith("quote-")]
    assert (
        "a sync moved the page to the pin since, and left its quote as the code was"
        in (finding["message"])
    ), finding["message"]
    assert finding["suggestion"].startswith(f"quote the code as it is at up@{v2[:7]}")
    # A page written against the older commit, not moved by a sync, is told to find its pin.
    (root / "docs" / "w.md").write_text(
        f"---\ntitle: W\n---\n# W\n\n`step()` (pkg/train.py:1-4):\n\n{quote}", "utf-8"
    )
    (other,) = [f for f in _findings(root) if f["page"] == "docs/w.md"]
    assert other["suggestion"] == "kb pin suggest docs/w.md", other


def test_a_page_with_its_own_pin_that_a_sync_moved_asks_for_new_code_too(tmp_path):
    """A page with its own pin, moved by `--include-pinned-pages`, carried no mark of the
    sync: its quote of the older code got `kb pin suggest`, which moves the pin back."""
    step = "def step(model, batch):\n    loss = model(batch).mean()\n    loss.backward()\n"
    step += "    return loss\n"
    repo = RepoBuilder.init(tmp_path / "up")
    v1 = repo.commit({"pkg/train.py": step}, "base")
    v2 = repo.commit({"pkg/train.py": step.replace(".mean()", ".sum() / len(batch)")}, "sum")
    quote = "```python\n" + step + "```\n"
    page = f"---\ntitle: T\nupstream: up\npin: {v1}\n---\n# T\n\n`step()` (pkg/train.py:1-4):\n\n"
    root = _kb(tmp_path, repo, v1, {"t.md": page + quote})
    result = cli(root, "sync", "up", "--no-fetch", "--to", v2, "--include-pinned-pages")
    assert result.returncode == 0, result.stderr
    _commit(root, "sync")
    assert cli(root, "held", "accept").returncode == 0
    (finding,) = [f for f in _findings(root) if f["check"].startswith("quote-")]
    assert finding["suggestion"].startswith(f"quote the code as it is at up@{v2[:7]}"), finding

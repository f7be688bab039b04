"""`python -m generator review`: a review page from a real local HTTP server replaying GitHub,
and `--export-review-json`, which turns a finished review page into a create-a-review body.

The pull request is tests/test_github.py's fixture, built from real git history; that repository
is also the upstream clone of a temporary knowledge base, so refs at the head commit verify.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import markdown
import pytest
import yaml

from generator.cli import main
from generator.generate.review import changed_lines, is_test_file
from generator.upstream.gitbuild import run_git
from generator.upstream.manifest import load_manifest
from tests import test_github as gh
from tests.conftest import KB
from tests.test_sanitize import EXTENSIONS, assert_harmless, parse

server = gh.server  # the replaying 127.0.0.1 server, as a fixture of this module

COMMENTS = f"{gh.PULL}/comments?per_page=100"
HEADINGS = [
    "1. Summary",
    "2. Test Verification",
    "3. Findings",
    "P0 — Critical",
    "P1 — Important",
    "P2 — Suggestion",
    "P3 — Nitpick",
    "4. Questions for the Author",
    "5. GitHub Review Comments",
]


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> tuple[KB, gh.FixturePR]:
    return gh.fixture_kb(tmp_path_factory.mktemp("review-kb"))


def comment(cid: int, path: str, line: int | None, body: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "user": {"login": extra.pop("login", "bob")},
        "body": body,
        "path": path,
        "line": line,
        "side": "RIGHT",
        "commit_id": "c" * 40,
        "diff_hunk": "@@ -1 +1 @@",
        "pull_request_review_id": 1,
        **extra,
    }


def serve(server: gh.FakeGitHub, pr: gh.FixturePR, comments: list[dict[str, Any]]) -> None:
    gh.serve_pr(server, pr)
    server.add(COMMENTS, gh.Reply(body=comments))


def review(kb: KB, server: gh.FakeGitHub, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    return gh.run_generator(kb, server, monkeypatch, "review", *args)


def headings(text: str) -> list[str]:
    return re.findall(r"(?m)^#{2,3} ((?:\d+\.|P\d) [^\n`]*)$", text)


def test_review_page_from_github(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kb, pr = widgets
    serve(
        server,
        pr,
        [
            comment(1, "pkg/mod_000.py", 5, "Why `*` and not `+`?"),
            comment(2, "pkg/mod_001.py", 10, "Name this constant.", start_line=8),
            comment(
                3, "pkg/mod_000.py", 5, "Because it is faster.", login="alice", in_reply_to_id=1
            ),
            comment(4, "pkg/mod_002.py", None, "Stale remark.", original_line=3),
        ],
    )
    assert review(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", str(gh.NUMBER)) == 0
    out = capsys.readouterr().out
    page = kb.docs / "analysis" / "review-pr-7-speed-up-the-widget-loader.md"
    assert f"wrote {page.relative_to(kb.root)}" in out and "4 review comments" in out
    text = page.read_text("utf-8")

    meta = yaml.safe_load(text.split("---\n")[1])
    assert (meta["kind"], meta["status"], meta["pr"], meta["upstream"]) == (
        "review",
        "draft",
        7,
        "widgets",
    )
    assert (meta["pin"], meta["base"]) == (pr.head, pr.base)
    assert headings(text) == HEADINGS
    findings = text.split("## 3. Findings")[1].split("## 4.")[0]
    assert findings.count("None.") == 4
    assert "**What**" in text and "**Why**" in text and "**How**" in text
    assert "None of the changed files is a test." in text

    # The review comments, grouped by file in order of appearance, with refs at the head.
    comments = text.split("## 5. GitHub Review Comments")[1]
    groups = re.findall(r"(?m)^### `([^`]+)`$", comments)
    assert groups == ["pkg/mod_000.py", "pkg/mod_001.py", "pkg/mod_002.py"]
    first = comments.split("### `pkg/mod_000.py`")[1].split("### `pkg/mod_001.py`")[0]
    assert "**`pkg/mod_000.py:5`** — [@bob](https://github.com/bob):" in first
    assert "> Why `*` and not `+`?" in first
    assert "**`pkg/mod_000.py:5`** (reply) — [@alice](https://github.com/alice):" in first
    assert "**`pkg/mod_001.py:8-10`** — [@bob]" in comments
    assert "**outdated (was line 3)**" in comments

    report = kb.verify(str(page.relative_to(kb.root)))
    assert report.findings == []
    assert len(report.refs) >= 3

    # An existing page is not replaced without --force.
    assert review(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", "7", "-o", str(page)) == 2
    assert "already exists" in capsys.readouterr().err
    assert page.read_text("utf-8") == text


def test_changed_test_files_are_listed(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kb, pr = widgets
    serve(server, pr, [])
    files = [
        {"filename": "pkg/loader.py", "status": "modified", "additions": 3, "deletions": 1},
        {"filename": "tests/test_loader.py", "status": "added", "additions": 12, "deletions": 0},
        {"filename": "pkg/loader_test.py", "status": "modified", "additions": 2, "deletions": 2},
    ]
    server.add(f"{gh.PULL}/files?per_page=100", gh.Reply(body=files))
    output = kb.docs / "analysis" / "with-tests.md"
    assert review(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", "7", "-o", str(output)) == 0
    section = output.read_text("utf-8").split("## 2. Test Verification")[1].split("## 3.")[0]
    assert "| `tests/test_loader.py` | new | +12, -0 |" in section
    assert "| `pkg/loader_test.py` | modified | +2, -2 |" in section
    assert "pkg/loader.py`" not in section
    assert "No review comments on GitHub yet." in output.read_text("utf-8")
    assert is_test_file("a/tests/x.py") and is_test_file("test_a.py")
    assert not is_test_file("pkg/contest.py") and not is_test_file("pkg/latest.py")


HOSTILE = (
    '<script>alert("KBX-1")</script> <img src=x onerror="alert(2)">\n'
    "<!-- KBX-2 hidden -->\n[click](javascript:alert(3)) ![t](https://tracker.example/p.png)\n"
    "# Not a heading\n<details open ontoggle=alert(5)>x</details>\n\u202eevil \u200bzero @octocat"
)


def test_hostile_comment_text_is_inert(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kb, pr = widgets
    serve(server, pr, [comment(9, "pkg/mod_003.py", 5, HOSTILE, login="<b>mallory</b>")])
    output = kb.docs / "analysis" / "hostile-review.md"
    assert review(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", "7", "-o", str(output)) == 0
    text = output.read_text("utf-8")
    assert re.search(r"<[A-Za-z!/?]", text) is None
    assert "](javascript:" not in text and "![" not in text
    assert "\u202e" not in text and "\u200b" not in text
    assert "\n# Not a heading" not in text and "\n> # Not" not in text
    assert "[@octocat](https://github.com/octocat)" in text
    doc = parse(markdown.markdown(text.split("---\n", 2)[2], extensions=EXTENSIONS))
    assert_harmless(doc)
    assert kb.verify(str(output.relative_to(kb.root))).findings == []


FILLED = """\
## 3. Findings

### P0 — Critical

- **[P0]** `pkg/mod_000.py:5` - `func_0` now multiplies by zero.
  - **Problem**: every result is 0.
  - **Fix**: keep `x + 0`.

### P1 — Important

- **[P1]** No test covers the new weights.

### P2 — Suggestion

- **[P2]** `pkg/mod_001.py:8-10` - Document `Widget1`.

### P3 — Nitpick

None.

## 4. Questions for the Author

- Why was `weight` added to every widget?

## 5. GitHub Review Comments

### `pkg/mod_000.py`

**`pkg/mod_000.py:5`** — [@bob](https://github.com/bob):

> - **[P0]** `pkg/elsewhere.py:1` is a quoted comment, not a finding.
"""


def filled_page(path: Path, pin: str) -> Path:
    meta = {"title": "PR #7 review", "kind": "review", "status": "draft", "pr": 7, "pin": pin}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{yaml.safe_dump(meta)}---\n\n# Review\n\n{FILLED}", "utf-8")
    return path


def test_export_review_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pin = "d" * 40
    page = filled_page(tmp_path / "review.md", pin)
    output = tmp_path / "out" / "review.json"
    assert main(["review", "--export-review-json", str(page), "--output", str(output)]) == 0
    assert "2 inline comments (not posted)" in capsys.readouterr().out
    assert json.loads(output.read_text("utf-8")) == {
        "commit_id": pin,
        "event": "COMMENT",
        "body": "- **[P1]** No test covers the new weights.\n\n"
        "Questions for the author:\n\n- Why was `weight` added to every widget?",
        "comments": [
            {
                "path": "pkg/mod_000.py",
                "line": 5,
                "side": "RIGHT",
                "body": "**[P0]** `pkg/mod_000.py:5` - `func_0` now multiplies by zero.\n"
                "- **Problem**: every result is 0.\n- **Fix**: keep `x + 0`.",
            },
            {
                "path": "pkg/mod_001.py",
                "line": 10,
                "side": "RIGHT",
                "start_line": 8,
                "start_side": "RIGHT",
                "body": "**[P2]** `pkg/mod_001.py:8-10` - Document `Widget1`.",
            },
        ],
    }

    # An existing output is kept unless --force.
    output.write_text("keep", "utf-8")
    assert main(["review", "--export-review-json", str(page), "--output", str(output)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert output.read_text("utf-8") == "keep"
    args = ["review", "--export-review-json", str(page), "--output", str(output), "--force"]
    assert main(args) == 0
    assert json.loads(output.read_text("utf-8"))["commit_id"] == pin


def test_export_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = filled_page(tmp_path / "review.md", "e" * 40)
    assert main(["review", "--export-review-json", str(page)]) == 2
    assert "needs --output" in capsys.readouterr().err
    not_review = tmp_path / "other.md"
    not_review.write_text("---\nkind: pr-deep-dive\npin: " + "e" * 40 + "\n---\n\nx\n", "utf-8")
    out = tmp_path / "x.json"
    assert main(["review", "--export-review-json", str(not_review), "-o", str(out)]) == 2
    assert "not a review page" in capsys.readouterr().err
    assert not out.exists()
    assert main(["review"]) == 2
    assert "expected OWNER/REPO N" in capsys.readouterr().err


def test_generated_page_exports(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    kb, pr = widgets
    serve(server, pr, [comment(1, "pkg/mod_000.py", 5, "- **[P0]** `pkg/x.py:1` quoted")])
    page = kb.docs / "analysis" / "export-me.md"
    assert review(kb, server, monkeypatch, f"{gh.OWNER}/{gh.REPO}", "7", "-o", str(page)) == 0
    out = tmp_path / "draft.json"
    assert main(["review", "--export-review-json", str(page), "-o", str(out)]) == 0
    payload = json.loads(out.read_text("utf-8"))
    assert payload["commit_id"] == pr.head and payload["comments"] == []


def test_changed_lines_follow_a_file_renamed_with_a_mode_change(kb: KB) -> None:
    """A rename that also changes the mode has nine header lines before its first hunk."""
    repo = kb.new_upstream("lib")
    base = repo.commit({"pkg/old.py": "".join(f"x{n} = {n}\n" for n in range(1, 30))}, "Add")
    run_git(repo.path, "mv", "pkg/old.py", "pkg/new.py")
    moved = repo.path / "pkg" / "new.py"
    moved.write_text(moved.read_text().replace("x5 = 5\n", "x5 = 50\n"))
    moved.chmod(0o755)
    head = repo.commit(None, "Rename it, change a line and make it run")
    diff = run_git(repo.path, "diff", "-M", "-U0", base, head)
    assert "old mode 100644" in diff and "rename to pkg/new.py" in diff
    kb.add_upstream("lib", repo, head)
    upstream = load_manifest(kb.root / "upstreams.yaml").upstreams["lib"]
    assert changed_lines(upstream, base, head) == {"pkg/new.py": {5}}

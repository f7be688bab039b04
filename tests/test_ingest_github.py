"""`ingest --pr N`: a review's base and head come from GitHub (a real server on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.kb.pages import read_page
from tests import test_github as gh

server = gh.server  # the replaying 127.0.0.1 server, as a fixture of this module

REVIEW = """\
# Review of PR #7

## 1. Summary
Multiplies instead of adding.

## 2. Critical Issues [P0/P1]
- **[P1]** `pkg/mod_000.py:5` - `func_0` now multiplies by zero.

## 3. Suggestions [P2]
- `pkg/mod_219.py:5` - a file the PR does not touch.

## 4. Questions for Author
- Why?

## 5. GitHub Review Comments
None.
"""


def test_the_pull_requests_commits_come_from_github(
    tmp_path: Path,
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kb, pr = gh.fixture_kb(tmp_path / "kb")
    gh.serve_pr(server, pr)
    source = tmp_path / "review.md"
    source.write_text(REVIEW, "utf-8")
    args = ["ingest", str(source), "--upstream", "widgets", "--pr", "7", "--path", "advanced"]
    assert gh.run_generator(kb, server, monkeypatch, *args) == 1
    page = read_page(kb.docs / "analysis" / "review.md")
    assert page.meta["base"] == pr.base and page.meta["pin"] == pr.head and page.meta["pr"] == 7
    assert page.meta["kind"] == "review" and page.meta["paths"] == ["advanced"]
    # The findings were checked against that base..head: line 5 of mod_000 changed, mod_219 not.
    out = capsys.readouterr().out
    assert "error[review-line-unchanged] pkg/mod_219.py is not among the files the PR" in out
    assert "mod_000.py:5 is not" not in out and out.count("review-line-unchanged") == 1


def test_offline_without_the_pull_request_cached_writes_nothing(
    tmp_path: Path,
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kb, _pr = gh.fixture_kb(tmp_path / "kb")
    source = tmp_path / "review.md"
    source.write_text(REVIEW, "utf-8")
    args = ["ingest", str(source), "--upstream", "widgets", "--pr", "7", "--offline"]
    assert gh.run_generator(kb, server, monkeypatch, *args) == 2
    err = capsys.readouterr().err
    assert "cannot fetch PR #7 of acme/widgets" in err and "not in the cache" in err
    assert not (kb.docs / "analysis").exists()

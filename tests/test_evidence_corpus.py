"""The evidence targets, held on a realistic drift corpus (scripts/drift_corpus.py).

LLM-style pages quote the code they cite from a 320-commit upstream; a third of their ranges
are off, and they are pinned eight commits after they were written. The ground truth follows
each quoted line's identity through the history, independently of the matcher.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _drift_corpus():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "drift_corpus", ROOT / "scripts" / "drift_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["drift_corpus"] = module
    spec.loader.exec_module(module)
    return module


drift_corpus = _drift_corpus()


def _run(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *arguments],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        check=False,
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("drift") / "kb"
    built = drift_corpus.build(root, commits=320, pages=12, seed=11)
    (root / "docs" / "not_references.md").write_text(drift_corpus.nonref_page(), "utf-8")
    return built


def test_wrong_quotes_are_reported_and_right_ones_are_not(corpus) -> None:  # type: ignore[no-untyped-def]
    result = _run(corpus.root, "verify", "docs", "--no-cache", "--format", "json", "--list-refs")
    assert result.returncode == 1, result.stderr
    scores = drift_corpus.evaluate(corpus.citations, json.loads(result.stdout))
    assert scores.wrong_quotes > 40 and scores.right_quotes > 40  # the corpus has both kinds
    assert scores.detection >= 0.99, scores.misses
    assert scores.false_errors == 0, scores.misses
    assert scores.extraction == 1.0, scores.misses
    assert scores.nonref_findings == 0


def test_fix_rewrites_only_to_the_proven_lines(corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "kb"
    shutil.copytree(corpus.root, copy, symlinks=True)
    before = {p.name: p.read_bytes() for p in (copy / "docs").glob("*.md")}
    result = _run(copy, "verify", "docs", "--no-cache", "--fix", "--format", "json")
    data = json.loads(result.stdout)
    scores = drift_corpus.evaluate(corpus.citations, data, data["fixes"])
    assert scores.rewrites > 30
    assert scores.wrong_rewrites == 0, scores.misses
    assert scores.fixed_share >= 0.95
    # Only the rewritten references changed: every other line is as it was.
    for page in (copy / "docs").glob("*.md"):
        old = before[page.name].decode().split("\n")
        new = page.read_bytes().decode().split("\n")
        assert len(old) == len(new)
        changed = {n + 1 for n, (a, b) in enumerate(zip(old, new, strict=True)) if a != b}
        rewritten = {r["line"] for r in data["fixes"]["rewrites"] if page.name in r["page"]}
        assert changed == rewritten
    # Verified again, the rewritten references hold their quotes.
    again = json.loads(_run(copy, "verify", "docs", "--no-cache", "--format", "json").stdout)
    assert not [f for f in again["findings"] if f["check"] == "quote-elsewhere" and f.get("fix")]


def test_pin_suggest_finds_the_commit_the_pages_were_written_against(corpus) -> None:  # type: ignore[no-untyped-def]
    result = _run(corpus.root, "pin", "suggest", "docs", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    best = data["candidates"][0]
    order = {sha: n for n, sha in enumerate(corpus.shas)}
    assert order[best["commit"]] <= corpus.written_index <= order[best["last"]]
    assert data["current"]["up"] < best["up"]  # the pin is worse than the commit written at

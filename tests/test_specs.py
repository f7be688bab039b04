"""Spec and page lifecycle checks, the verifier integration and the board."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from generator.specs import estimate_tokens, normalise, validate

ROOT = Path(__file__).resolve().parent.parent


def kb(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / ".lean-spec", tmp_path / ".lean-spec")
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path


def spec(root: Path, folder: str, front: str, body: str = "# T\n\n## Overview\n\nx\n") -> Path:
    path = root / "specs" / folder / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n{body}", "utf-8")
    return path


def checks(root: Path) -> list[tuple[str, str]]:
    return sorted((f.check, f.page.rsplit("/", 2)[-2]) for f in validate(root, root / "docs"))


def test_the_repository_validates_clean():
    assert validate(ROOT, ROOT / "docs") == []


def test_aliases_are_accepted_with_a_normalised_suggestion():
    assert normalise("status", "in_progress") == ("in-progress", "alias")
    assert normalise("status", "Completed") == ("complete", "alias")
    assert normalise("status", "complete") == ("complete", None)
    assert normalise("status", "done") == (None, "invalid")
    assert normalise("priority", "urgent") == ("critical", "alias")


def test_spec_checks(tmp_path):
    root = kb(tmp_path)
    spec(root, "002-alias", "status: in_progress\ncreated: 2025-01-01")
    spec(root, "003-bad", "status: done\ncreated: '2025-13-01'\npriority: P1")
    spec(root, "004-missing", "tags: [x]")
    spec(root, "005-links", "status: planned\ncreated: 2025-01-01\ndepends_on: [999-ghost]")
    spec(root, "006-a", "status: planned\ncreated: 2025-01-01\ndepends_on: [007-b]")
    spec(root, "007-b", "status: planned\ncreated: 2025-01-01\ndepends_on: [006-a]")
    spec(root, "008-two-titles", "status: planned\ncreated: 2025-01-01", "# A\n\n# B\n")
    spec(
        root,
        "009-done",
        "status: complete\ncreated: 2025-01-01",
        "# D\n\n## Plan\n\n- [x] one\n- [ ] two\n\n## Test\n\n<!-- nothing -->\n",
    )
    spec(root, "010-long", "status: planned\ncreated: 2025-01-01", "# L\n\n" + "word " * 6000)
    spec(root, "11-Bad_Name", "status: planned\ncreated: 2025-01-01")
    spec(root, "002-dup", "status: planned\ncreated: 2025-01-01")
    found = checks(root)
    for expected in [
        ("field-alias", "002-alias"),
        ("field-invalid", "003-bad"),
        ("field-missing", "004-missing"),
        ("spec-link-missing", "005-links"),
        ("spec-cycle", "006-a"),
        ("spec-cycle", "007-b"),
        ("spec-title", "008-two-titles"),
        ("spec-incomplete-plan", "009-done"),
        ("spec-section-empty", "009-done"),
        ("spec-too-long", "010-long"),
        ("spec-name", "11-Bad_Name"),
        ("spec-number-conflict", "002-dup"),
    ]:
        assert expected in found, expected
    assert [c for c in found if c[0] == "field-invalid"] == [("field-invalid", "003-bad")] * 3
    too_long = next(f for f in validate(root, root / "docs") if f.check == "spec-too-long")
    assert too_long.severity.value == "error"


def test_page_lifecycle_and_spec_checks(tmp_path):
    root = kb(tmp_path)
    page = root / "docs/analysis/pr-2-review.md"
    text = page.read_text("utf-8")
    page.write_text(text.replace("spec: 001-minitrain-knowledge-base\n", ""), "utf-8")
    other = root / "docs/analysis/data-packing-source-analysis.md"
    text = other.read_text("utf-8").replace("spec: 001-minitrain-knowledge-base", "spec: 042-x")
    other.write_text(text.replace("status: complete", "status: completed"), "utf-8")
    found = {(f.check, f.page.rsplit("/", 1)[-1]) for f in validate(root, root / "docs")}
    assert found == {
        ("page-no-spec", "pr-2-review.md"),
        ("page-spec-unknown", "data-packing-source-analysis.md"),
        ("field-alias", "data-packing-source-analysis.md"),
    }


def test_token_estimate_counts_cjk_per_character():
    assert estimate_tokens("显存占用") == 4
    assert 2 <= estimate_tokens("hello world") <= 4


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_specs_validate_command(tmp_path):
    root = kb(tmp_path)
    (root / "upstreams.yaml").write_text("upstreams: {}\n", "utf-8")
    result = cli(root, "specs", "validate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all good" in result.stdout
    spec(root, "002-x", "status: wip\ncreated: 2025-01-01")
    result = cli(root, "specs", "validate", "--format", "json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert [f["check"] for f in data["findings"]] == ["field-invalid"]


def test_board_json_on_the_repository(demo_kb):
    # The repository's own specs and pages, with the demo upstreams built for the test (a fresh
    # clone has no .cache/ yet).
    shutil.copytree(ROOT / ".lean-spec", demo_kb / ".lean-spec")
    shutil.copytree(ROOT / "specs", demo_kb / "specs")
    result = subprocess.run(
        [sys.executable, "-m", "generator", "specs", "board", "--format", "json"],
        cwd=demo_kb,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    [card] = data["specs"]
    assert card["id"] == "001-minitrain-knowledge-base"
    assert card["status"] == "in-progress"
    ids = [c["id"] for c in card["criteria"]]
    assert ids == ["refs-valid", "links-valid", "pages-in-paths", "diagrams-present", "pins-fresh"]
    pages = [p["page"] for group in card["pages"].values() for p in group]
    assert "docs/analysis/pr-2-review.md" in pages
    assert sum(len(g) for g in card["pages"].values()) == 7

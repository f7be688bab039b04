"""The embedded demo: reproducible upstreams, pages that verify clean, and a broken copy that
yields exactly the findings its breakages should."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT

PIN = "79841b498438a80cf90547c62a841f6822639622"


def run_verify(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "verify_code_refs.py"), "docs", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


def test_demo_upstreams_have_the_pinned_shas_on_every_build(demo_clones, tmp_path):
    from generator.generate.demo import build_all

    manifest = yaml.safe_load((ROOT / "upstreams.yaml").read_text("utf-8"))
    rebuilt = {built.name: built for built in build_all(ROOT / "demo", tmp_path / "again")}
    for name, spec in manifest["upstreams"].items():
        assert rebuilt[name].tags["v0.1"] == spec["pin"], name
        first = subprocess.run(
            ["git", "rev-parse", "main"],
            cwd=demo_clones / name,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert first == rebuilt[name].head
    log = subprocess.run(
        ["git", "log", "--format=%s", "v0.1..main"],
        cwd=demo_clones / "minitrain",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(log) >= 4  # later commits to re-anchor across


def test_demo_pages_verify_clean_and_strict(demo_kb):
    result = run_verify(demo_kb, "--strict", "--format", "json", "--list-refs")
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["findings"] == []
    summary = data["summary"]
    assert summary["pages"] >= 6 and summary["refs"] >= 100 and summary["links"] >= 20
    pages = {ref["page"] for ref in data["refs"]}
    assert any(page.endswith(".zh.md") for page in pages)
    assert {ref["upstream"] for ref in data["refs"]} == {"minitrain", "tinydist"}


# Each breakage: (page, text to find, replacement, expected check ids at the replacement's line).
BREAKAGES = [
    (
        "analysis/fsdp-actor-source-analysis.zh.md",
        "`sleep()` 实现（actor.py:83-97）",
        "`sleep()` 实现（actor.py:99-106）",
        ["symbol-not-in-range"],
    ),
    (
        "paths/beginner.md",
        "`minitrain/backends/fsdp/actor.py:83-97`",
        "`minitrain/backends/fsdp/actor.py:83-297`",
        ["range-outside-file"],
    ),
    (
        "analysis/data-packing-source-analysis.md",
        "`clear_memory()` (`minitrain/utils/memory.py:11-20`)",
        "`clear_memory()` (`minitrain/utils/memroy.py:11-20`)",
        ["file-missing"],
    ),
    (
        "analysis/data-packing-source-analysis.md",
        f"https://github.com/example-org/minitrain/blob/{PIN}/minitrain/data/packing.py#L37-L47",
        "https://github.com/example-org/minitrain/blob/main/minitrain/data/packing.py#L37-L47",
        ["unpinned-permalink"],
    ),
    (
        "index.md",
        "(analysis/fsdp-actor-source-analysis.zh.md#2-sleep-与-wake_up-的实现)",
        "(analysis/fsdp-actor-source-analysis.zh.md#2-sleep-与-wakeup-的实现)",
        ["anchor-missing"],
    ),
    (
        "index.md",
        "`compute_cu_seqlens()` (`minitrain/data/packing.py:37-47`)",
        "`compute_cu_seqlens()` (`/home/alice/minitrain/minitrain/data/packing.py:37-47`)",
        ["absolute-path"],
    ),
    (
        "paths/advanced.zh.md",
        "`clear_memory()`（minitrain/utils/memory.py:11-20）",
        "`clear_memory()`（minitrain/utils/memory.py:20-11）",
        ["range-invalid"],
    ),
]
APPENDED = [
    (
        # A page that cites neither actor.py by its full path: nothing tells them apart.
        "paths/memory.md",
        "See actor.py:30 for the constructor.",
        ["ambiguous-file"],
    ),
    (
        "analysis/pr-2-review.md",
        "Compare `torch/distributed/fsdp/_runtime_utils.py:100-200`.",
        ["unattributed"],
    ),
    ("analysis/pr-2-review.md", "Never `../../etc/passwd:1`.", ["path-escape"]),
    ("analysis/pr-2-review.md", "The logo is at assets/logo.png:1.", ["binary-file"]),
    ("paths/beginner.md", "[gone](../analysis/missing-page.md)", ["link-missing"]),
]


def test_broken_copy_yields_exactly_the_expected_findings(demo_kb):
    expected = []
    for page, old, new, checks in BREAKAGES:
        path = demo_kb / "docs" / page
        text = path.read_text("utf-8")
        assert text.count(old) >= 1, (page, old)
        offset = text.index(old)
        path.write_text(text.replace(old, new, 1), "utf-8")
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        difference = next(i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b)
        expected += [(f"docs/{page}", line, check, column, difference) for check in checks]
    for page, added, checks in APPENDED:
        path = demo_kb / "docs" / page
        text = path.read_text("utf-8")
        path.write_text(text.rstrip("\n") + "\n\n" + added + "\n", "utf-8")
        line = text.rstrip("\n").count("\n") + 3
        expected += [(f"docs/{page}", line, check, None, None) for check in checks]
    (demo_kb / "docs" / "broken-frontmatter.md").write_text(
        "---\ntitle: [oops\n---\n# Broken\n", "utf-8"
    )
    expected.append(("docs/broken-frontmatter.md", 2, "frontmatter-invalid", None, None))

    result = run_verify(demo_kb, "--format", "json")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    got = [(f["page"], f["line"], f["check"]) for f in data["findings"]]
    assert sorted(got) == sorted((page, line, check) for page, line, check, _, _ in expected)
    by_key = {(f["page"], f["line"], f["check"]): f for f in data["findings"]}
    for page, line, check, column, difference in expected:
        finding = by_key[(page, line, check)]
        if column is not None:
            # The finding points at the reference or link the breakage touched.
            assert column <= finding["column"] <= column + difference, (check, finding)
        assert finding["severity"] in ("error", "warning")
        assert finding["message"]
    assert data["summary"]["errors"] == sum(1 for f in data["findings"] if f["severity"] == "error")
    # main moved on from the pin: its lines 37-47 are other code, so the pinned link is no
    # suggestion (it would cite code the page has not read).
    unpinned = by_key[next(k for k in by_key if k[2] == "unpinned-permalink")]
    assert "lines 37-47 at 'main'" in unpinned["message"]
    assert "pinning it would change what it cites" in unpinned["message"]
    assert unpinned["suggestion"] == "check the lines, then link to the commit they come from"
    absolute = by_key[next(k for k in by_key if k[2] == "absolute-path")]
    assert absolute["suggestion"] == "minitrain/data/packing.py:37-47"
    symbol = by_key[next(k for k in by_key if k[2] == "symbol-not-in-range")]
    assert symbol["suggestion"] == "it is defined at minitrain/backends/fsdp/actor.py:83-97"
    assert re.search(
        r"matches 2 files: .*fsdp/actor\.py \(.*\); .*megatron/actor\.py",
        by_key[next(k for k in by_key if k[2] == "ambiguous-file")]["message"],
    )

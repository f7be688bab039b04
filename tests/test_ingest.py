"""`python -m generator ingest`: analyses written elsewhere become pages, and nothing is lost."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.cli import main
from generator.generate.ingest import IngestOptions, ingest
from generator.kb.pages import read_page
from generator.upstream.manifest import load_manifest

ROOT = Path(__file__).resolve().parent.parent
PIN = "79841b498438a80cf90547c62a841f6822639622"  # minitrain v0.1, the PR #2 head
BASE = "4ac81f5303250c26824982c8ee83d83e0fc2b5ef"  # minitrain's first commit, the PR #2 base
PR2 = ["--upstream", "minitrain", "--pr", "2", "--base", BASE, "--pin", PIN]

NOTES = """\
# Notes on packing

`pack_samples()` 实现（packing.py:98-104）and the timer in timer.py:1-5.

See /home/alice/minitrain/minitrain/data/packing.py:37-47 and
https://github.com/example-org/minitrain/blob/main/minitrain/config.py#L40-L41 .

Something ambiguous: actor.py:10.

At main these lines changed: https://github.com/example-org/minitrain/blob/main/minitrain/data/packing.py#L37-L47
"""


@pytest.fixture
def kb(demo_kb: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo knowledge base with its specs, as the working directory."""
    shutil.copytree(ROOT / "specs", demo_kb / "specs")
    shutil.copytree(ROOT / ".lean-spec", demo_kb / ".lean-spec")
    monkeypatch.chdir(demo_kb)
    return demo_kb


def run(*args: str) -> int:
    return main(["ingest", *args, "--manifest", "upstreams.yaml"])


def test_notes_become_a_placed_page_with_canonical_refs(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "Packing Notes.md"
    notes.write_text(NOTES, "utf-8")
    spec = "001-minitrain-knowledge-base"
    # written, but the ambiguous ref is left
    assert run(str(notes), "--spec", spec, "--rename", "kebab") == 1
    out = capsys.readouterr().out
    page = read_page(kb / "docs" / "analysis" / "packing-notes.md")
    assert page.meta["title"] == "Notes on packing"
    assert page.meta["kind"] == "source-analysis" and page.meta["lang"] == "en"
    assert page.meta["status"] == "in-progress" and page.meta["spec"] == spec
    assert page.meta["level"] == "beginner" and page.meta["paths"] == ["beginner"]
    # Placed after the last beginner page of the beginner path.
    beginner_orders = [
        read_page(p).meta.get("order")
        for p in (kb / "docs" / "analysis").glob("*.md")
        if p.name != "packing-notes.md"
        and read_page(p).meta.get("level") == "beginner"
        and "beginner" in (read_page(p).meta.get("paths") or [])
    ]
    assert page.meta["order"] == max(o for o in beginner_orders if o is not None) + 1
    body = page.body
    assert "（minitrain/data/packing.py:98-104）" in body
    assert "minitrain/utils/timer.py:1-5" in body
    assert "See minitrain/data/packing.py:37-47 and" in body
    assert f"/blob/{PIN}/minitrain/config.py#L40-L41" in body  # the same lines at main and pin
    assert "Something ambiguous: actor.py:10." in body  # not guessed
    assert "/blob/main/minitrain/data/packing.py#L37-L47" in body  # other code at the pin
    assert "error[ambiguous-file] 'actor.py' matches 2 files" in out
    assert "warning[unpinned-permalink] not pinned: lines 37-47 at 'main' (" in out
    assert "absolute local path: /home/alice/minitrain/minitrain/data/packing.py:37-47 -> " in out
    # The written page verifies with that one error only.
    assert main(["verify", "docs/analysis/packing-notes.md", "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [f["check"] for f in found] == ["ambiguous-file", "unpinned-permalink"]


def test_content_and_unknown_keys_survive_byte_for_byte(kb: Path, tmp_path: Path) -> None:
    text = (
        "---\r\ntitle: Mine\r\nmy_key: {a: 1}   # keep me\r\nstatus: in_progress\r\n"
        "tags: fsdp, memory\r\n---\r\n# Mine\r\n\r\nCRLF body, 中文, packing.py:98-104.\r\n"
    )
    source = tmp_path / "mine.md"
    source.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    results = ingest([source], load_manifest(kb / "upstreams.yaml"), kb / "docs", IngestOptions())
    (result,) = results
    assert not isinstance(result, Exception)
    written = (kb / "docs" / "analysis" / "mine.md").read_bytes()
    assert written.startswith(b"\xef\xbb\xbf---\r\ntitle: Mine\r\nmy_key: {a: 1}   # keep me\r\n")
    assert b"status: in-progress\r\n" in written and b"\n- fsdp" not in written
    page = read_page(kb / "docs" / "analysis" / "mine.md")
    assert page.meta["tags"] == ["fsdp", "memory"] and page.meta["my_key"] == {"a": 1}
    assert page.body == "# Mine\r\n\r\nCRLF body, 中文, minitrain/data/packing.py:98-104.\r\n"
    fixed = {(f.what, f.before, f.after) for f in result.fixes}
    assert ("frontmatter status: normalised", "in_progress", "in-progress") in fixed
    assert ("bare file name", "packing.py:98-104", "minitrain/data/packing.py:98-104") in fixed


DEEP_DIVE_ZH = """\
# PR #2 深度解析

## 1. 概要（TL;DR）

给 FSDP actor 加上梯度裁剪（minitrain/backends/fsdp/actor.py:166-177）。

## 2. 全局视角

### 2.1 架构前后对比

N/A - 只改了一个函数，没有架构变化。

## 3. 设计原理

## 5. 模块关系
"""


def test_a_chinese_deep_dive_is_detected_and_its_gaps_reported(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "pr2.zh.md"
    source.write_text(DEEP_DIVE_ZH, "utf-8")
    assert run(str(source), *PR2, "--spec", "001-minitrain-knowledge-base") == 0  # warnings only
    out = capsys.readouterr().out
    page = read_page(kb / "docs" / "analysis" / "pr2.zh.md")
    assert page.meta["kind"] == "pr-deep-dive" and page.meta["lang"] == "zh"
    assert page.meta["pin"] == PIN and page.meta["base"] == BASE and page.meta["pr"] == 2
    assert "pr-deep-dive (" in out and "of 19 pr-deep-dive sections" in out
    assert "warning[section-missing] section '2.2 Change Scope Summary' is missing" in out
    assert "warning[section-missing] section '4.2 Call Chain Visualization' is missing" in out
    assert "section '2.1" not in out  # present, and its diagram is N/A with a reason
    assert "warning[diagram-missing] section 5 (module relationships) has no" in out
    assert run(str(source), *PR2, "--force", "--strict") == 1  # the same warnings fail


SEED_REVIEW = """\
# Review of PR #2

### 1. PR Summary
Wires grad_clip into the actors.

### 2. Critical Issues [P0/P1]
- **[P1]** `minitrain/backends/megatron/actor.py:66` - no guard for grad_clip=0.
  - **Problem**: every gradient is zeroed.
- **[P0]** `minitrain/backends/megatron/actor.py:10` - not a changed line.
- A finding without a severity, on actor.py:66.

### 3. Suggestions [P2]
- `minitrain/data/packing.py:40` - this file is not in the PR.

### 4. Nitpicks [P3]
- No reference at all.

### 5. Questions for Author
- Why local norms?

### 6. GitHub Review Comments
None.
"""


def test_a_seed_review_gets_its_items_checked_against_the_pr(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "review.md"
    source.write_text(SEED_REVIEW, "utf-8")
    assert run(str(source), *PR2) == 1
    out = capsys.readouterr().out
    page = read_page(kb / "docs" / "analysis" / "review.md")
    assert page.meta["kind"] == "review" and page.meta["level"] == "advanced"
    assert page.meta["depends_on"] == ["analysis/pr-2-grad-clip-offload.md"]
    lines = page.text.splitlines() if page.text else []

    def line_of(fragment: str) -> int:
        return next(n for n, line in enumerate(lines, 1) if fragment in line)

    at = line_of("not a changed line")
    assert (
        f"review.md:{at}:1: error[review-line-unchanged] minitrain/backends/megatron/actor.py:10 "
        "is not a line the PR adds or changes" in out
    )
    at = line_of("without a severity")
    assert f"review.md:{at}:1: error[review-item-severity] finding has no severity" in out
    at = line_of("not in the PR")
    assert (
        f"review.md:{at}:1: error[review-line-unchanged] minitrain/data/packing.py is not among "
        "the files the PR changes" in out
    )
    at = line_of("No reference at all")
    assert f"review.md:{at}:1: warning[review-item-ref] finding cites no file:line" in out
    assert f":{line_of('no guard for grad_clip')}:" not in out  # line 66 is one the PR added


def test_the_demo_review_passes_every_review_check(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = read_page(kb / "docs" / "analysis" / "pr-2-review.md")
    source = tmp_path / "pr-2-review.md"
    source.write_text(page.body, "utf-8")
    spec = "001-minitrain-knowledge-base"
    assert run(str(source), *PR2, "--spec", spec, "--output", "docs/analysis/again.md") == 0
    out = capsys.readouterr().out
    assert "review (4 of 4 review sections)" in out and "0 errors and 0 warnings left" in out


def test_a_page_in_the_docs_is_normalised_in_place(
    kb: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = kb / "docs" / "analysis" / "data-packing-source-analysis.md"
    before = target.read_bytes()
    assert run(str(target)) == 0
    assert "(unchanged)" in capsys.readouterr().out
    assert target.read_bytes() == before
    target.write_bytes(before.replace(b"status: complete", b"status: Completed"))
    assert run(str(target)) == 0
    assert "frontmatter status: normalised: Completed -> complete" in capsys.readouterr().out
    assert target.read_bytes() == before


def test_dry_run_writes_nothing(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, "utf-8")
    before = sorted(p.name for p in (kb / "docs" / "analysis").iterdir())
    assert run(str(notes), "--dry-run", "--diff") == 1
    out = capsys.readouterr().out
    assert "(would write)" in out and "+title: Notes on packing" in out
    assert "-See /home/alice/minitrain/minitrain/data/packing.py:37-47 and" in out
    assert sorted(p.name for p in (kb / "docs" / "analysis").iterdir()) == before


def test_json_report(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, "utf-8")
    assert run(str(notes), "--format", "json", "--spec", "001-minitrain-knowledge-base") == 1
    report = json.loads(capsys.readouterr().out)
    (entry,) = report["pages"]
    assert entry["page"] == "docs/analysis/notes.md" and entry["written"] is True
    assert entry["kind"] == "source-analysis" and entry["refs"] == 6
    timer = next(f for f in entry["fixes"] if f["before"] == "timer.py:1-5")
    written = (kb / "docs" / "analysis" / "notes.md").read_text("utf-8").splitlines()
    assert timer["after"] in written[timer["line"] - 1]
    shift = written.index("---", 1) + 1  # the frontmatter the input did not have
    original = NOTES.splitlines()[timer["line"] - shift - 1]
    assert original[timer["column"] - 1 :].startswith("timer.py:1-5")
    assert timer["what"] == "bare file name" and timer["after"] == "minitrain/utils/timer.py:1-5"
    assert [f["check"] for f in entry["findings"]] == [
        "ambiguous-file",
        "unpinned-permalink",  # why it was not pinned, in place of the verifier's suggestion
    ]
    assert "not pinned: lines 37-47 at 'main'" in entry["findings"][1]["message"]
    # A file that could not be ingested names its source beside the reason.
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# Bad\n\n\xff not UTF-8\n")
    assert run(str(bad), "--format", "json") == 2
    (failed,) = json.loads(capsys.readouterr().out)["pages"]
    assert failed["source"] == str(bad) and "is not valid UTF-8" in failed["error"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"# Title\n\n\xff\xfe not UTF-8\n", "is not valid UTF-8"),
        ("# 标题\n\n中文笔记\n".encode("gbk"), "iconv -f GB18030 -t UTF-8, if it is GB18030"),
        ("# Café\n\nnaïve\n".encode("latin-1"), "iconv -f LATIN1 -t UTF-8, if it is LATIN1"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "it looks like a binary file, not a page"),
        (
            ("# 长\n" + "ab" + "中文" * 20000).encode("gb18030"),
            "iconv -f GB18030",
        ),  # split at 64 KiB
        ("\ufeff# Title\n".encode("utf-16-le"), "iconv -f UTF-16 -t UTF-8"),
        (b"---\ntitle: [unclosed\n---\n# T\n", "fix the frontmatter and run again"),
        (b"---\ntitle: a\ntitle: b\n---\n# T\n", "fix the frontmatter and run again"),
    ],
)
def test_unreadable_files_are_refused_and_nothing_is_written(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    source = tmp_path / "bad.md"
    source.write_bytes(content)
    assert run(str(source)) == 2
    err = capsys.readouterr().err
    assert message in err and "nothing was written" in err
    assert not (kb / "docs" / "analysis" / "bad.md").exists()
    assert source.read_bytes() == content


def test_a_pin_given_as_a_tag_is_written_as_its_full_sha(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--pin v0.1` was refused ("must be a full 40-character commit SHA") though
    `upstreams add --pin` takes a tag."""
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, "utf-8")
    out = kb / "docs" / "analysis" / "tagged.md"
    assert run(str(notes), "--upstream", "minitrain", "--pin", "v0.1", "--output", str(out)) in (
        0,
        1,
    )
    # (The demo upstream is replayed with fixed dates: its v0.1 is the same commit everywhere.)
    sha = "79841b498438a80cf90547c62a841f6822639622"
    assert read_page(out).meta["pin"] == sha


def test_usage_errors(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, "utf-8")
    existing = kb / "docs" / "analysis" / "notes.md"
    existing.write_text("keep me", "utf-8")
    assert run(str(notes)) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert existing.read_text("utf-8") == "keep me"
    assert run(str(notes), "--force") == 1
    assert existing.read_text("utf-8") != "keep me"

    assert run(str(tmp_path / "missing.md")) == 2
    assert "missing.md: no such file" in capsys.readouterr().err
    assert run("/dev/null") == 2
    err = capsys.readouterr().err
    assert "/dev/null: not a file" in err and "renamed" not in err
    assert run(str(notes), str(notes), "--output", "docs/x.md") == 2
    assert "--output names one page" in capsys.readouterr().err
    # A revision other than a full SHA is read in the upstream's clone, which --upstream names
    # when the knowledge base has several.
    assert run(str(notes), "--pin", "abc") == 2
    assert "add --upstream NAME, or give full 40-character SHAs" in capsys.readouterr().err
    assert run(str(notes), "--upstream", "minitrain", "--pin", "no-such-tag") == 2
    assert "--pin: 'no-such-tag' is not a commit of minitrain" in capsys.readouterr().err
    assert run(str(notes), "--upstream", "nope") == 2
    assert "--upstream 'nope' is not in upstreams.yaml" in capsys.readouterr().err
    assert run(str(notes), "--spec", "999-x", "--output", "docs/analysis/spec.md") == 2
    assert "--spec '999-x' names no spec; the specs: 001-" in capsys.readouterr().err
    assert not (kb / "docs" / "analysis" / "spec.md").exists()
    assert run(str(notes), "--output", str(tmp_path / "out.md")) == 2
    assert "is outside the docs directory" in capsys.readouterr().err
    assert not (tmp_path / "out.md").exists()

    # A file where a directory is needed: a clear usage error, not a crash.
    index = kb / "docs" / "index.md"
    before = index.read_bytes()
    for option, where in (
        ("--output-dir", "docs/index.md"),
        ("--output-dir", "docs/index.md/sub"),
        ("--output", "docs/index.md/x.md"),
    ):
        assert run(str(notes), option, where, "--force") == 2
        err = capsys.readouterr().err
        assert f"{option}: docs/index.md is a file, not a directory" in err, err
        assert "nothing was written" in err
    assert index.read_bytes() == before


_PIECES = st.sampled_from(
    [
        "Prose with 中文 and `code`.",
        "packing.py:98-104",
        "timer.py:1-5",
        "actor.py:10",
        "/home/bob/src/minitrain/minitrain/config.py:40",
        "https://github.com/example-org/minitrain/blob/main/minitrain/config.py#L40",
        "`minitrain/config.py:40-41`",
        "```python\n# packing.py:98\nx = 1\n```",
        "| a | packing.py:37 |",
        "- item timer.py:3",
        "host:8080 10:30 v1.2:3",
        "",
    ]
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_PIECES, min_size=1, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_ingest_never_drops_content(kb: Path, tmp_path: Path, pieces: list[str], nl: str) -> None:
    body = nl.join(" ".join(pieces[i : i + 2]) for i in range(0, len(pieces), 2)) + nl
    source = tmp_path / "random.md"
    source.write_bytes(body.encode("utf-8"))
    options = IngestOptions(force=True, output=kb / "docs" / "analysis" / "random.md")
    (result,) = ingest([source], load_manifest(kb / "upstreams.yaml"), kb / "docs", options)
    assert not isinstance(result, Exception), result
    written = read_page(result.destination)
    # Apply the reported fixes to the input ourselves: that must give the written body exactly.
    shift = (written.text or "").count("\n", 0, written.body_start)
    expected = body.split("\n")
    ref_fixes = [f for f in result.fixes if not f.what.startswith("frontmatter")]
    for fix in sorted(ref_fixes, key=lambda f: (f.line, f.column), reverse=True):
        line = expected[fix.line - shift - 1]
        start = fix.column - 1
        assert line[start : start + len(fix.before)] == fix.before
        expected[fix.line - shift - 1] = line[:start] + fix.after + line[start + len(fix.before) :]
    assert written.body == "\n".join(expected)
    assert yaml.safe_load(written.frontmatter or "")["kind"] == result.kind


def test_review_export_refuses_lines_the_pr_does_not_change(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "review.md"
    source.write_text(SEED_REVIEW, "utf-8")
    run(str(source), *PR2, "--spec", "001-minitrain-knowledge-base")
    page = kb / "docs" / "analysis" / "review.md"
    out = tmp_path / "review.json"
    assert main(["review", "--export-review-json", str(page), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "minitrain/backends/megatron/actor.py:10 is not a line the PR adds or changes" in err
    assert "finding has no severity" in err and not out.exists()

    # Without the bad items, the seed's layout exports with each item's own severity.
    text = page.read_text("utf-8")
    kept = [
        line
        for line in text.splitlines()
        if "not a changed line" not in line
        and "without a severity" not in line
        and "not in the PR" not in line
    ]
    page.write_text("\n".join(kept) + "\n", "utf-8")
    assert main(["review", "--export-review-json", str(page), "-o", str(out)]) == 0
    payload = json.loads(out.read_text("utf-8"))
    assert payload["commit_id"] == PIN
    (comment,) = payload["comments"]
    assert comment["path"] == "minitrain/backends/megatron/actor.py" and comment["line"] == 66
    assert comment["body"].startswith("**[P1]** `minitrain/backends/megatron/actor.py:66`")
    assert "**[P3]** No reference at all." in payload["body"]


def test_verify_reports_missing_sections_of_finished_pages_only(
    kb: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = kb / "docs" / "analysis" / "pr-2-grad-clip-offload.md"
    text = page.read_text("utf-8")
    start, end = text.index("### 7.3 Related Code Pointers"), len(text)
    page.write_text(text[:start] + text[end:], "utf-8")
    assert main(["verify", "docs", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["check"], f["page"]) for f in found] == [
        ("section-missing", "docs/analysis/pr-2-grad-clip-offload.md")
    ]
    assert "section '7.3 Related Code Pointers' is missing" in found[0]["message"]
    page.write_text(
        (text[:start] + text[end:]).replace("status: complete", "status: draft"), "utf-8"
    )
    assert main(["verify", "docs", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []


def test_a_directory_is_ingested_with_its_sub_folders(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes"
    (notes / "fsdp").mkdir(parents=True)
    (notes / "a.md").write_text("# A\n\nSee minitrain/config.py:40.\n", "utf-8")
    (notes / "fsdp" / "B Notes.md").write_text("# B\n\nSee minitrain/config.py:41.\n", "utf-8")
    (notes / "fsdp" / "bad.md").write_bytes(b"# C\n\xff\n")
    (notes / "ignored.txt").write_text("not Markdown", "utf-8")
    spec = "001-minitrain-knowledge-base"
    assert run(str(notes), "--spec", spec) == 2  # one file could not be used
    captured = capsys.readouterr()
    assert "bad.md:2:1: page is not valid UTF-8" in captured.err
    assert "ingested 2 pages: " in captured.out and "; 1 file not ingested" in captured.out
    analysis = kb / "docs" / "analysis"
    assert read_page(analysis / "a.md").meta["title"] == "A"
    assert read_page(analysis / "fsdp" / "B Notes.md").meta["title"] == "B"  # its own name
    assert not (analysis / "fsdp" / "bad.md").exists()
    assert not (analysis / "ignored.md").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(str(empty)) == 2
    assert "no Markdown files (*.md) in this directory" in capsys.readouterr().err


def test_what_is_not_a_page_in_a_directory_is_named_not_skipped(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link that loops or leads nowhere, or a FIFO, among the notes: each is named as a file
    not ingested, and the others are ingested (a loop given alone is no crash either)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nSee minitrain/config.py:40.\n", "utf-8")
    (notes / "loop.md").symlink_to("loop.md")
    (notes / "broken.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(notes / "pipe.md")
    (notes / "folder.md").mkdir()
    spec = "001-minitrain-knowledge-base"
    assert run(str(notes), "--spec", spec) == 2
    captured = capsys.readouterr()
    assert "loop.md: a symbolic link that loops, not a page" in captured.err
    assert "broken.md: no such file" in captured.err
    assert "pipe.md: not a file" in captured.err
    assert "folder.md" not in captured.err
    assert "ingested 1 page: " in captured.out and "; 3 files not ingested" in captured.out
    assert read_page(kb / "docs" / "analysis" / "a.md").meta["title"] == "A"
    written = {p.name for p in (kb / "docs" / "analysis").iterdir()}
    assert not written & {"loop.md", "broken.md", "pipe.md", "folder.md"}
    assert run(str(notes / "loop.md"), "--spec", spec) == 2
    assert "a symbolic link that loops" in capsys.readouterr().err


def test_a_reference_in_a_heading_keeps_the_heading_and_the_links_to_it(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Making `packing.py:98-104` canonical inside a heading would change the heading's
    anchor and break the links to it; the same reference in prose is rewritten."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text(
        "# A\n\n## How packing.py:98-104 works\n\n"
        "See [the loop](#how-packingpy98-104-works) and packing.py:98-104.\n",
        "utf-8",
    )
    assert run(str(notes / "a.md"), "--spec", "001-minitrain-knowledge-base") in (0, 1)
    captured = capsys.readouterr()
    assert "anchor-missing" not in captured.out + captured.err
    page = read_page(kb / "docs" / "analysis" / "a.md").body
    assert "## How packing.py:98-104 works" in page
    assert "See [the loop](#how-packingpy98-104-works) and minitrain/data/packing.py:98-104." in (
        page
    )


@pytest.mark.parametrize("separator", ["/", "\\"])
def test_a_windows_path_loses_its_drive_with_its_local_root(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], separator: str
) -> None:
    """`C:/Users/bob/...` became `C:minitrain/config.py:40`: the drive stayed behind. Written
    with backslashes, it was no reference at all: unchecked, left as written, not reported."""
    local = separator.join(["C:", "Users", "bob", "src", "minitrain", "minitrain", "config.py"])
    notes = tmp_path / "w.md"
    notes.write_text(
        f"# W\n\nSee {local}:40 for the default.\n\nAnd {local} (lines 40-41) too.\n", "utf-8"
    )
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base") in (0, 1)
    out = capsys.readouterr().out
    assert f"{local}:40 -> minitrain/config.py:40" in out
    body = read_page(kb / "docs" / "analysis" / "w.md").body
    assert "See minitrain/config.py:40 for the default." in body
    assert "And minitrain/config.py (lines 40-41) too." in body


def test_a_link_to_a_renamed_page_keeps_its_letters_readable(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[训练](训练%20流程.md)` to the page renamed `训练-流程.md` was written all
    percent-encoded (`%E8%AE%AD...`): encoded only where a link needs it, it reads as named."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "训练 流程.md").write_text("# 训练\n\n训练流程。\n", "utf-8")
    (notes / "index.md").write_text(
        "# Notes\n\n- [训练](训练%20流程.md)\n- [B](B%20(1).md)\n", "utf-8"
    )
    (notes / "B (1).md").write_text("# B\n\nB.\n", "utf-8")
    spec = "001-minitrain-knowledge-base"
    assert run(str(notes), "--spec", spec, "--rename", "kebab") in (0, 1)
    text = (kb / "docs" / "analysis" / "index.md").read_text("utf-8")
    assert "[训练](训练-流程.md)" in text, text
    assert "[B](b-1.md)" in text, text


def test_a_home_directory_named_in_chinese_goes_with_the_local_root(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`/Users/张三/src/minitrain/minitrain/config.py:40` became
    `/Users/张三minitrain/config.py:40`: the path was read from after the name, and the name
    stayed behind."""
    notes = tmp_path / "cjk.md"
    notes.write_text(
        "# 打包\n\n见 `/Users/张三/src/minitrain/minitrain/config.py:40`，以及 "
        "/home/用户/minitrain/minitrain/data/packing.py:37-47 的循环。\n\n"
        "整个文件：`/home/李四/src/minitrain/minitrain/data/packing.py`。\n\n"
        "在/home/用户/minitrain/minitrain/config.py:40中定义；"
        "数据见slime之外的 minitrain/config.py:40。\n\n"
        "`/Users/张三/src/minitrain/minitrain/data/packing.py`（第 37-47 行）；"
        "不是引用：$HOME/项目/minitrain/config.py:40，吞吐/GPU/利用率见minitrain/config.py:40。\n",
        "utf-8",
    )
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base") == 0
    out = capsys.readouterr().out
    assert (
        "absolute local path: /Users/张三/src/minitrain/minitrain/config.py:40 -> "
        "minitrain/config.py:40"
    ) in out
    body = read_page(kb / "docs" / "analysis" / "cjk.md").body
    assert body == (
        "# 打包\n\n见 `minitrain/config.py:40`，以及 minitrain/data/packing.py:37-47 的循环。\n\n"
        "整个文件：`minitrain/data/packing.py`。\n\n"
        "在minitrain/config.py:40中定义；数据见slime之外的 minitrain/config.py:40。\n\n"
        "`minitrain/data/packing.py`（第 37-47 行）；"
        "不是引用：$HOME/项目/minitrain/config.py:40，吞吐/GPU/利用率见minitrain/config.py:40。\n"
    )


def test_a_whole_file_cited_by_its_absolute_path_is_written_from_the_repository_root(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file cited whole by a path on the author's machine was neither reported nor
    rewritten. Only a path naming a file at the commit is: a folder called after the project
    (a dataset, an environment, a run's output) or a file the commit lacks stays as written,
    unreported, and so does anything that only looks alike."""
    notes = tmp_path / "whole.md"
    silent = (
        "Not `/etc/hosts`, `/tools/run.sh`, `/usr/lib/python3/os.py`, `~/minitrain/`, "
        "`/opt/conda/envs/minitrain/bin/python`, `/root/datasets/minitrain/math.jsonl`, "
        "`/root/minitrain/minitrain`, `/data/minitrain/ckpt/model.pt`, "
        "`/home/alice/../minitrain/minitrain/config.py` or "
        "`/home/alice/src/minitrain/minitrain/data/gone.py`."
    )
    notes.write_text(
        "# Whole\n\nThe packer is `/home/alice/src/minitrain/minitrain/data/packing.py`; on "
        "Windows `C:/Users/bob/minitrain/minitrain/config.py`.\n\n"
        f"{silent}\n\nGone: `/home/alice/src/minitrain/minitrain/data/gone.py:3`.\n",
        "utf-8",
    )
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base") == 1
    out = capsys.readouterr().out
    body = read_page(kb / "docs" / "analysis" / "whole.md").body
    assert "The packer is `minitrain/data/packing.py`; on Windows `minitrain/config.py`." in body
    assert silent in body
    # Cited with lines, a file the pin lacks is reported in its directory, not a folder deeper.
    assert "Gone: `/home/alice/src/minitrain/minitrain/data/gone.py:3`." in body
    findings = [line for line in out.splitlines() if "warning[" in line or "error[" in line]
    assert len(findings) == 2, findings
    assert "error[file-missing] 'minitrain/data/gone.py' does not exist" in out
    assert ", 3 code references" in out  # the two rewritten and the one with lines


def test_a_dry_run_finds_the_links_between_its_own_pages(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dry run writes no page, so the links between the pages it plans were reported
    missing; a link to a page that is nowhere still is."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "A_Page.md").write_text("# A\n\nSee [b](Hash_Name.md#b) and [x](gone.md).\n")
    # From the docs root, and a directory for its index page, as the link checker reads them.
    (notes / "Hash_Name.md").write_text(
        "# B\n\nBack to [a](A_Page.md), [a](/analysis/a-page.md) and [g](guide/); not to "
        "[a](/analysis/a-page.md#nope).\n"
    )
    (notes / "guide").mkdir()
    (notes / "guide" / "index.md").write_text("# Guide\n\nSee [b](../hash-name.md).\n")
    spec = "001-minitrain-knowledge-base"
    for dry in (["--dry-run"], []):
        run(str(notes), "--spec", spec, "--rename", "kebab", *dry)
        captured = capsys.readouterr()
        missing = [line for line in captured.out.splitlines() if "link-missing" in line]
        assert len(missing) == 1 and "'gone.md' does not exist" in missing[0], (dry, missing)
        # The anchor of a planned page is checked against it as planned.
        assert "error[anchor-missing] '#nope' is not an anchor of 'analysis/a-page.md'" in (
            captured.out
        ), dry

    # Ingested again over the pages it wrote, with a heading renamed: the links are checked
    # against the pages as the run would write them, not as they are.
    (notes / "A_Page.md").write_text("# Renamed\n\nSee [x](gone.md).\n")
    (notes / "Hash_Name.md").write_text("# B\n\n[new](A_Page.md#renamed), [old](A_Page.md#a).\n")
    for dry in (["--dry-run"], []):
        run(str(notes), "--spec", spec, "--rename", "kebab", "--force", *dry)
        out = capsys.readouterr().out
        anchors = [line for line in out.splitlines() if "anchor-missing" in line]
        assert len(anchors) == 1 and "'#a' is not an anchor" in anchors[0], (dry, anchors)

    # The docs root's own index, planned by the run: `/` and `./` lead to it.
    (kb / "docs" / "index.md").unlink()
    home = tmp_path / "home"
    home.mkdir()
    (home / "index.md").write_text("# Home\n\nSee [a](a.md).\n")
    (home / "a.md").write_text(
        "# A\n\n[home](/), [home](./) and [home](./#home); [intro](sub/#intro).\n"
    )
    # A directory's index.md comes before its README.md, which is there already.
    (home / "sub").mkdir()
    (home / "sub" / "index.md").write_text("# Intro\n")
    (kb / "docs" / "sub").mkdir()
    (kb / "docs" / "sub" / "README.md").write_text("# Readme\n")
    for dry in (["--dry-run"], []):
        run(str(home), "--spec", spec, "--output-dir", str(kb / "docs"), *dry)
        out = capsys.readouterr().out
        assert "link-missing" not in out and "anchor-missing" not in out, (dry, out)


def test_a_link_out_of_the_imported_folder_is_not_published(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`notes/secrets.md -> ~/.ssh/config`: ingesting the folder would publish a file nobody
    asked to import. A link within the folder is a page of it."""
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    private = tmp_path / "private.txt"
    private.write_text("# Private\n\ntoken = 12345\n", "utf-8")
    (notes / "a.md").write_text("# A\n\nSee minitrain/config.py:40.\n", "utf-8")
    (notes / "secrets.md").symlink_to(private)
    (notes / "sub" / "again.md").symlink_to(notes / "a.md")
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base") == 2
    captured = capsys.readouterr()
    assert f"secrets.md: a symbolic link to {private.resolve()}, outside {notes}" in captured.err
    assert "ingested 2 pages: " in captured.out and "; 1 file not ingested" in captured.out
    analysis = kb / "docs" / "analysis"
    assert not (analysis / "secrets.md").exists()
    assert (analysis / "sub" / "again.md").exists()
    assert not any("12345" in p.read_text("utf-8") for p in (kb / "docs").rglob("*.md"))


def test_sections_out_of_the_seeds_order_and_pages_without_code_are_reported(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    review = tmp_path / "swapped.md"
    review.write_text(
        "# Review of PR #2\n\n## 1. PR Summary\nx\n\n## 2. GitHub Review Comments\nNone.\n\n"
        "## 3. Critical Issues [P0/P1]\n- **[P1]** `minitrain/backends/megatron/actor.py:66` - y\n"
        "\n## 4. Questions for Author\n- Why?\n",
        "utf-8",
    )
    assert run(str(review), *PR2, "--spec", "001-minitrain-knowledge-base") == 0  # warnings
    out = capsys.readouterr().out
    assert "warning[section-order] section 'GitHub Review Comments' (line" in out
    assert "is out of the seed's order" in out
    assert "no-code-refs" not in out
    prose = tmp_path / "prose.md"
    prose.write_text("# Thoughts\n\nNo code cited here at all.\n", "utf-8")
    assert run(str(prose), "--spec", "001-minitrain-knowledge-base", "--strict") == 1
    out = capsys.readouterr().out
    assert "prose.md:1:1: warning[no-code-refs] the page cites no code" in out


def test_a_specs_diagram_count_is_the_one_ingest_checks(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The spec asks no diagram of a deep dive: the verifier and ingest must both say none."""
    spec = kb / "specs" / "001-minitrain-knowledge-base" / "README.md"
    text = spec.read_text("utf-8")
    spec.write_text(
        text.replace(
            "priority: high\n", "priority: high\nacceptance:\n  diagrams:\n    pr-deep-dive: 0\n", 1
        ),
        "utf-8",
    )
    source = tmp_path / "pr2.zh.md"
    source.write_text(DEEP_DIVE_ZH, "utf-8")
    assert run(str(source), *PR2, "--spec", "001-minitrain-knowledge-base") == 0
    out = capsys.readouterr().out
    assert "warning[section-missing]" in out
    assert "diagram-missing" not in out


def test_references_in_tables_and_phrases_are_read_and_their_paths_made_canonical(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "table_notes.md"
    table = (
        "# Packing by table\n\n| 文件 | 行号 | 函数 |\n|---|---|---|\n"
        "| `/home/alice/minitrain/minitrain/data/packing.py` | 37-47 | compute_cu_seqlens |\n\n"
        "The balancing is in `minitrain/data/packing.py`（第 50-66 行）.\n"
    )
    notes.write_text(table, "utf-8")
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base") in (0, 1)
    out = capsys.readouterr().out
    assert "no-code-refs" not in out  # the table's reference counts
    page = read_page(kb / "docs" / "analysis" / "table_notes.md")
    # The laptop path in the path cell becomes the repository's; the lines cell stays.
    assert "| `minitrain/data/packing.py` | 37-47 |" in page.body
    assert "`minitrain/data/packing.py`（第 50-66 行）" in page.body
    assert main(["verify", "docs/analysis/table_notes.md", "--format", "json", "--list-refs"]) in (
        0,
        1,
    )
    refs = json.loads(capsys.readouterr().out)["refs"]
    assert [(r["style"], r["path"], r["start"]) for r in refs] == [
        ("table", "minitrain/data/packing.py", 37),
        ("phrase", "minitrain/data/packing.py", 50),
    ]


def test_a_bare_name_in_a_box_drawing_stays_as_written(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Written as its repository path, a name in a box pushed the box's right edge out of
    line. The same name in prose is still rewritten."""
    box = (
        "```\n"
        "┌──────────────────────────────┐\n"
        "│ pack_samples  packing.py:98  │\n"
        "└──────────────────────────────┘\n"
        "```\n"
    )
    notes = tmp_path / "box.md"
    notes.write_text(f"# Box\n\nThe packer, packing.py:98-104.\n\n{box}", "utf-8")
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base") in (0, 1)
    capsys.readouterr()
    body = read_page(kb / "docs" / "analysis" / "box.md").body
    assert body == f"# Box\n\nThe packer, minitrain/data/packing.py:98-104.\n\n{box}"


def test_a_name_apart_from_its_lines_is_written_as_its_repository_path(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bare name in a table's path cell or by a lines phrase was left as written, and an
    absolute path after its lines phrase was said not to be written before its lines. A name
    written twice on its line is the one its phrase takes: right after it, else the nearest
    before it (it was left as written, and not said so)."""
    notes = tmp_path / "apart.md"
    notes.write_text(
        "# Apart\n\n| file | lines |\n|---|---|\n| `packing.py` | 37-47 |\n\n"
        "第 37-47 行（packing.py）是打包。\n\n"
        "Before (lines 37-47 of /Users/alice/src/minitrain/minitrain/data/packing.py), the "
        "packer.\n\nBoth lines 37-47 of packing.py and lines 98-104 of packing.py.\n\n"
        "The packer, `packing.py` (L37-L47).\n\n"
        "`pack()` 在（packing.py：98–104）。其循环在 packing.py 第 37-47 行。\n",
        "utf-8",
    )
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base") == 0
    out = capsys.readouterr().out
    assert "bare file name: packing.py -> minitrain/data/packing.py" in out
    body = read_page(kb / "docs" / "analysis" / "apart.md").body
    assert body == (
        "# Apart\n\n| file | lines |\n|---|---|\n| `minitrain/data/packing.py` | 37-47 |\n\n"
        "第 37-47 行（minitrain/data/packing.py）是打包。\n\n"
        "Before (lines 37-47 of minitrain/data/packing.py), the packer.\n\n"
        "Both lines 37-47 of minitrain/data/packing.py and lines 98-104 of "
        "minitrain/data/packing.py.\n\n"
        "The packer, `minitrain/data/packing.py` (L37-L47).\n\n"
        "`pack()` 在（minitrain/data/packing.py：98–104）。其循环在 minitrain/data/packing.py "
        "第 37-47 行。\n"
    )


def test_a_branch_link_to_a_file_gone_at_the_branch_is_reported_once_saying_so(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The verifier's warning suggested pinning the link, ingest's that pinning it was wrong
    because "the file is not at both <sha> and the pin": two findings on one link."""
    link = "https://github.com/example-org/minitrain/blob/main/minitrain/rollout/buffer.py#L1-L3"
    notes = tmp_path / "gone.md"
    notes.write_text(f"# Gone\n\nThe buffer: {link}\n", "utf-8")
    assert run(str(notes), "--spec", "001-minitrain-knowledge-base", "--format", "json") == 0
    (entry,) = json.loads(capsys.readouterr().out)["pages"]
    (finding,) = [f for f in entry["findings"] if f["check"] == "unpinned-permalink"]
    assert finding["message"].startswith(
        "not pinned: 'minitrain/rollout/buffer.py' does not exist at 'main' ("
    )
    assert link in read_page(kb / "docs" / "analysis" / "gone.md").body

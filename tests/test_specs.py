"""Spec and page lifecycle checks, the verifier integration and the board."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import markdown

from generator.checks import PAGE_GOVERNANCE_CHECKS
from generator.kb.specs import estimate_tokens, normalise, validate
from generator.verification.board import PageHealth, _pages_table

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
    spec(root, "009-x", "status: wip\ncreated: 2025-01-01")
    result = cli(root, "specs", "validate", "--format", "json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert [f["check"] for f in data["findings"]] == ["field-invalid"]


def test_board_refuses_a_negative_lag(tmp_path):
    """`--max-behind -3` was taken, and every page then lagged too far."""
    for value, said in (
        ("-3", "expected 0 or more commits, got '-3'"),
        ("x", "expected a number of commits, got 'x'"),
    ):
        result = cli(tmp_path, "specs", "board", "--max-behind", value)
        assert result.returncode == 2 and f"argument --max-behind: {said}" in result.stderr


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
    card = next(c for c in data["specs"] if c["id"] == "001-minitrain-knowledge-base")
    assert card["id"] == "001-minitrain-knowledge-base"
    assert card["status"] == "in-progress"
    ids = [c["id"] for c in card["criteria"]]
    assert ids == ["refs-valid", "links-valid", "pages-in-paths", "diagrams-present", "pins-fresh"]
    # What the freshness criterion counts: commits behind the branch, not the age of the pin.
    (fresh,) = [c for c in card["criteria"] if c["id"] == "pins-fresh"]
    assert fresh["title"].startswith("no page more than ") and fresh["title"].endswith(
        " commits behind its upstream's branch"
    ), fresh
    pages = [p["page"] for group in card["pages"].values() for p in group]
    assert "docs/analysis/pr-2-review.md" in pages
    assert sum(len(g) for g in card["pages"].values()) == len(list((ROOT / "docs").rglob("*.md")))


# ---------------------------------------------------------------------------------------------
# Required diagrams, derived from the page kind (seed 000: sections 2.1, 4.2, 4.3 and 5)


PR_PAGE = "docs/analysis/pr-2-grad-clip-offload.md"
DEEP_DIVES = sum(
    "\nkind: pr-deep-dive\n" in p.read_text("utf-8") for p in (ROOT / "docs").rglob("*.md")
)
"""The demo's PR deep dives: the pages the diagrams criterion counts."""


def board(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", "specs", "board", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def pr_card(root: Path) -> tuple[dict, dict]:
    result = board(root, "--format", "json")
    assert result.returncode == 0, result.stderr
    specs = json.loads(result.stdout)["specs"]
    card = next(c for c in specs if c["id"] == "001-minitrain-knowledge-base")
    page = next(
        p
        for group in card["pages"].values()
        for p in group
        if p["page"].endswith("pr-2-grad-clip-offload.md")
    )
    criterion = next(c for c in card["criteria"] if c["id"] == "diagrams-present")
    return page, criterion


def test_the_demo_pr_deep_dive_has_its_four_required_diagrams(demo_kb):
    # The repository's specs and pages, with the demo upstreams built for the test.
    shutil.copytree(ROOT / ".lean-spec", demo_kb / ".lean-spec")
    shutil.copytree(ROOT / "specs", demo_kb / "specs")
    page, criterion = pr_card(demo_kb)
    assert (page["diagrams_required"], page["diagrams_met"], page["diagrams_missing"]) == (4, 4, [])
    assert (criterion["met"], criterion["count"], criterion["total"]) == (True, 0, DEEP_DIVES)
    required = 4 * DEEP_DIVES  # sections 2.1, 4.2, 4.3 and 5 of each
    assert f"{required} of {required} required diagrams present" in criterion["detail"]


def test_a_pr_deep_dive_without_its_diagrams_gets_findings_and_an_unmet_criterion(tmp_path):
    root = kb(tmp_path)
    page = root / PR_PAGE
    text = page.read_text("utf-8")
    # 4.2: a flowchart where the seed asks for a sequenceDiagram.
    text = text.replace("```mermaid\nsequenceDiagram", "```mermaid\ngraph TD", 1)
    # 4.3: the diagram is gone.
    start = text.index('```mermaid\ngraph TD\n    A["param.grad')
    text = (
        text[:start]
        + "The gradient is reduce-scattered.\n"
        + text[text.index("```\n", start) + 4 :]
    )
    # 5: not applicable, with a reason: accepted instead of a diagram.
    start = text.index("```mermaid\nclassDiagram")
    text = (
        text[:start]
        + "N/A - no class changes its relationships\n"
        + text[text.index("```\n", start) + 4 :]
    )
    page.write_text(text, "utf-8")
    lines = text.splitlines()
    found = [f for f in validate(root, root / "docs") if f.check == "diagram-missing"]
    assert [(f.page, lines[f.line - 1]) for f in found] == [
        (PR_PAGE, "### 4.2 Call Chain Visualization"),
        (PR_PAGE, "### 4.3 Data Flow"),
    ]
    assert all(f.severity.value == "warning" for f in found)
    assert "has a graph, not a Mermaid sequenceDiagram" in found[0].message
    assert "has no Mermaid flowchart" in found[1].message
    assert "N/A - reason" in found[1].suggestion

    page_health, criterion = pr_card(root)
    assert page_health["diagrams_required"] == 4 and page_health["diagrams_met"] == 2
    assert len(page_health["diagrams_missing"]) == 2
    assert (criterion["met"], criterion["count"], criterion["total"]) == (False, 1, DEEP_DIVES)
    required = 4 * DEEP_DIVES
    assert f"{required - 2} of {required} required diagrams present" in criterion["detail"]
    text_board = board(root).stdout
    assert "NOT MET" in text_board and "diagrams 2/4 (missing: section 4.2" in text_board
    assert board(root, "--check").returncode == 1


def test_diagrams_n_overrides_for_other_kinds_and_drafts_are_counted_not_reported(tmp_path):
    root = kb(tmp_path)
    review = root / "docs/analysis/pr-2-review.md"
    text = review.read_text("utf-8")
    review.write_text(text.replace("kind: review\n", "kind: review\ndiagrams: 3\n", 1), "utf-8")
    found = [f for f in validate(root, root / "docs") if f.check == "diagram-missing"]
    assert [(f.page, f.line) for f in found] == [("docs/analysis/pr-2-review.md", 4)]
    assert "requires 3 Mermaid diagram(s) (diagrams: 3) and has 1" in found[0].message
    # The same page as a draft: unfinished, so no finding, but the board still counts it.
    review.write_text(
        review.read_text("utf-8").replace("status: in-progress", "status: draft"), "utf-8"
    )
    assert not [f for f in validate(root, root / "docs") if f.check == "diagram-missing"]
    result = json.loads(board(root, "--format", "json").stdout)
    criterion = next(c for c in result["specs"][0]["criteria"] if c["id"] == "diagrams-present")
    total = DEEP_DIVES + 1  # and the review that asks for diagrams: 3
    assert (criterion["met"], criterion["count"], criterion["total"]) == (False, 1, total)


def test_the_verifier_reports_a_missing_required_diagram(demo_kb):
    page = demo_kb / PR_PAGE
    text = page.read_text("utf-8").replace("```mermaid\nclassDiagram", "```text\nclassDiagram")
    page.write_text(text, "utf-8")
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "verify_code_refs.py"), "docs/", "--strict"],
        cwd=demo_kb,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    line = text.splitlines().index("## 5. Module Relationships") + 1
    assert f"{PR_PAGE}:{line}:1: warning[diagram-missing] section 5 (module relationships)" in (
        result.stdout
    )
    assert "0 errors, 1 warning" in result.stdout


def test_a_malformed_lean_spec_config_is_a_finding_on_its_line(tmp_path):
    root = kb(tmp_path)
    config = root / ".lean-spec" / "config.json"
    config.write_text('{\n  "specsDir": "specs",\n  "templates": [1, 2\n}\n', "utf-8")
    found = [(f.check, f.page.rsplit("/", 1)[-1], f.line) for f in validate(root, root / "docs")]
    assert found[0][:2] == ("spec-config-invalid", "config.json")
    assert "not valid JSON" in validate(root, root / "docs")[0].message
    config.write_text('{\n  "specsDir": "specs",\n  "templates": ["x"]\n}\n', "utf-8")
    [finding] = [f for f in validate(root, root / "docs") if f.check == "spec-config-invalid"]
    assert finding.line == 3 and "templates must map names" in finding.message


def test_a_page_title_is_escaped_once_in_the_boards_table():
    table = _pages_table([PageHealth("docs/x.md", "x.md", "Fix [x] a\\b|c", "draft")], "")
    assert table[2].startswith("| [Fix \\[x\\] a\\\\b\\|c](x.md) |")
    html = markdown.markdown("\n".join(table), extensions=["tables"])
    assert '<a href="x.md">Fix [x] a\\b|c</a>' in html


def governance_report(root: Path, mode: str | None) -> dict[tuple[str, str], str]:
    """Each governance finding of ``verify docs`` in ``root`` as (check, page) -> severity."""
    header = f"governance: {mode}\n" if mode else ""
    (root / "upstreams.yaml").write_text(header + "upstreams: {}\n", "utf-8")
    result = cli(root, "verify", "docs", "--format", "json", "--no-cache")
    assert result.returncode in (0, 1), result.stderr
    return {
        (f["check"], f["page"].rsplit("/", 1)[-1]): f["severity"]
        for f in json.loads(result.stdout)["findings"]
        if f["check"] in PAGE_GOVERNANCE_CHECKS
    }


def test_governance_errors_on_a_page_without_a_spec_are_warnings_unless_strict(tmp_path):
    root = kb(tmp_path)
    (root / "docs" / "imported.md").write_text("# Imported from elsewhere\n\nText.\n", "utf-8")
    placed = root / "docs/analysis/pr-2-review.md"
    placed.write_text(placed.read_text("utf-8").replace("created:", "made:"), "utf-8")

    lenient = governance_report(root, None)
    assert lenient == governance_report(root, "lenient")
    # The page no spec governs yet: every governance finding is a warning.
    assert lenient[("page-no-spec", "imported.md")] == "warning"
    assert lenient[("field-missing", "imported.md")] == "warning"
    assert lenient[("page-not-in-path", "imported.md")] == "warning"
    # A page that names its spec has opted in: its missing field stays an error.
    assert lenient[("field-missing", "pr-2-review.md")] == "error"

    strict = governance_report(root, "strict")
    assert strict.keys() == lenient.keys()
    assert set(strict.values()) == {"error"}

    # `specs validate` says what verify says, in either mode.
    for mode, expected in (("strict", strict), ("lenient", lenient)):
        (root / "upstreams.yaml").write_text(f"governance: {mode}\nupstreams: {{}}\n", "utf-8")
        validated = cli(root, "specs", "validate", "--format", "json")
        found = {
            (f["check"], f["page"].rsplit("/", 1)[-1]): f["severity"]
            for f in json.loads(validated.stdout)["findings"]
            if f["check"] in PAGE_GOVERNANCE_CHECKS
        }
        assert found == expected, mode


def test_a_spec_with_no_pages_has_no_criterion_met(tmp_path):
    root = kb(tmp_path)
    spec(
        root, "009-empty", "status: planned\ncreated: '2025-01-01'", "# Empty\n\n## Overview\n\nx\n"
    )
    (root / "upstreams.yaml").write_text("upstreams: {}\n", "utf-8")
    result = board(root, "--format", "json")
    card = next(c for c in json.loads(result.stdout)["specs"] if c["id"] == "009-empty")
    assert [c["met"] for c in card["criteria"]] == [None] * 5
    assert {c["detail"] for c in card["criteria"]} == {"not measured: no page names this spec yet"}
    markdown = board(root, "--format", "markdown").stdout
    empty = markdown.split("009-empty", 1)[1]
    assert "Acceptance criteria: not measured yet (no pages)" in empty


def test_a_diagram_s_config_block_comes_before_its_type(tmp_path):
    """Mermaid reads a ``---`` block of settings before the diagram's type (the drafted call
    chain narrows its participants so): the type after it is what a section is checked for."""
    from generator.kb.diagrams import diagram_status
    from generator.kb.pages import read_page

    config = "---\nconfig:\n  sequence:\n    width: 110\n---\n"
    page = tmp_path / "page.md"
    page.write_text(
        "---\nkind: pr-deep-dive\n---\n\n# PR\n\n### 2.1 Architecture\n\n```mermaid\ngraph LR\n"
        "  A --> B\n```\n\n### 4.2 Call Chain\n\n```mermaid\n" + config + "sequenceDiagram\n"
        "  A->>B: x\n```\n\n### 4.3 Data Flow\n\n```mermaid\n" + config + "sequenceDiagram\n"
        "  A->>B: x\n```\n\n## 5. Module Relationships\n\nN/A - no class changes\n",
        "utf-8",
    )
    status = diagram_status(read_page(page))
    assert status is not None
    assert [(s.requirement.section, s.state, s.found) for s in status.sections] == [
        ("2.1", "present", None),
        ("4.2", "present", None),
        ("4.3", "wrong-type", "sequenceDiagram"),
        ("5", "not-applicable", None),
    ]


def test_a_permalink_to_an_older_commit_does_not_make_its_page_look_behind(lib_kb):
    """The freshness criterion counted every commit a page's references resolve at: a page
    linking, on purpose, to the first commit of its upstream was as many commits behind."""
    first = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"],
        cwd=lib_kb.root / "cache" / "lib",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    link = f"https://github.com/acme/lib/blob/{first}/old/name.py#L1-L2"
    lib_kb.page("a.md", f"---\ntitle: A\n---\n# A\n\n`alpha()` (lib/core.py:6-7), once [{link}].\n")

    def behind() -> int:
        result = board(lib_kb.root, "--format", "json")
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        cards = [*data["specs"], {"pages": {"": data.get("unassigned", [])}}]
        [page] = [
            p
            for card in cards
            for group in card["pages"].values()
            for p in group
            if p["page"] == "docs/a.md"
        ]
        return page["commits_behind"]

    assert behind() == 1  # the pin is one commit behind the branch
    lib_kb.page("a.md", "---\ntitle: A\n---\n# A\n\n`alpha()` (lib/core.py:6-7).\n")
    assert behind() == 1

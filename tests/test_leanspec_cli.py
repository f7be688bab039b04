"""Our specs load in the real LeanSpec CLI, which reports the statuses our board reports.

`make test` installs the pinned `@leanspec/cli-linux-x64` into .cache/npm (see the Makefile's
`leanspec` target). The test is skipped, with the reason, only when npm is absent.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.kb.scaffold import new_spec
from generator.kb.specs import load_config, load_specs, validate

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / ".cache/npm/node_modules/@leanspec/cli-linux-x64/leanspec"


@pytest.fixture(scope="module")
def leanspec() -> Path:
    if not BINARY.is_file():
        if shutil.which("npm") is None:
            pytest.skip("npm is absent, so the LeanSpec CLI cannot be installed")
        subprocess.run(["make", "-C", str(ROOT), "leanspec"], check=True, capture_output=True)
    assert BINARY.is_file(), "make leanspec did not install the LeanSpec CLI"
    return BINARY


def run(binary: Path, root: Path, *args: str):
    result = subprocess.run(
        [str(binary), *args, "-o", "json"], cwd=root, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def ours(root: Path) -> dict[str, str]:
    return {spec.id: spec.status for spec in load_specs(load_config(root))}


def test_repository_specs_load_in_leanspec(leanspec):
    listed = run(leanspec, ROOT, "list")
    expected = {k: v for k, v in ours(ROOT).items() if v != "archived"}
    assert expected, "the repository ships at least one spec"
    assert {item["id"]: item["status"] for item in listed} == expected
    board = run(leanspec, ROOT, "board")
    statuses = {spec["id"]: group["name"] for group in board["groups"] for spec in group["specs"]}
    assert statuses == expected
    assert board["total"] == len(expected)


def test_scaffolded_and_aliased_specs_agree_with_leanspec(leanspec, tmp_path):
    shutil.copytree(ROOT / ".lean-spec", tmp_path / ".lean-spec")
    (tmp_path / "specs").mkdir()
    new_spec(tmp_path, "first", status="in-progress", priority="high")
    new_spec(tmp_path, "second thing", depends_on=["001"], tags=["a", "b"])
    created = new_spec(tmp_path, "third", parent="first", status="draft")
    text = created.path.read_text("utf-8").replace("status: draft", "status: in_progress")
    created.path.write_text(text, "utf-8")
    listed = run(leanspec, tmp_path, "list")
    mine = ours(tmp_path)
    assert [item["id"] for item in listed] == ["001-first", "002-second-thing", "003-third"]
    assert {item["id"]: item["status"] for item in listed} == mine
    assert mine["003-third"] == "in-progress"  # the alias, normalised as LeanSpec does
    assert next(i for i in listed if i["id"] == "003-third")["parent"] == "001-first"
    # we warn about the alias (LeanSpec accepts it) but report no error
    findings = [f for f in validate(tmp_path, tmp_path / "docs") if f.severity.value == "error"]
    assert findings == []
    board = run(leanspec, tmp_path, "board")
    assert {s["id"]: g["name"] for g in board["groups"] for s in g["specs"]} == mine


@pytest.mark.parametrize("status", ["done", "blocked", "cancelled"])
def test_statuses_leanspec_rejects_are_errors_for_us_too(leanspec, tmp_path, status):
    (tmp_path / "specs/001-x").mkdir(parents=True)
    (tmp_path / "specs/001-x/README.md").write_text(
        f"---\nstatus: {status}\ncreated: 2025-01-01\n---\n\n# X\n", "utf-8"
    )
    result = subprocess.run(
        [str(leanspec), "list", "-o", "json"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode != 0 and "status" in result.stderr
    checks = {f.check for f in validate(tmp_path, tmp_path / "docs")}
    assert "field-invalid" in checks

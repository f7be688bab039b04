"""The pre-commit hook (`.pre-commit-hooks.yaml`), installed and run the way another
knowledge base's repository runs it: `pre-commit try-repo` builds its environment from this
checkout (with the package from PyPI's dependencies) and runs it on a staged commit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import KB, ROOT

HOOK = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))[0]


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize(
    ("path", "runs"),
    [
        ("docs/analysis/x.md", True),
        ("upstreams.yaml", True),
        ("specs/001-notes/README.md", True),
        ("specs/001-notes/diagram.png", True),
        (".lean-spec/config.json", True),
        (".lean-spec/templates/spec-template.md", True),
        ("generator/cli/main.py", False),
        ("notes.txt", False),
        ("my-upstreams.yaml.bak", False),
    ],
)
def test_the_hook_runs_on_pages_the_manifest_and_specs(path, runs):
    # pre-commit matches `files` with Python's re.search on each staged path.
    assert bool(re.search(HOOK["files"], path)) is runs


def test_a_commit_that_only_moves_a_pin_runs_the_installed_hook(lib_kb: KB, tmp_path: Path):
    root = lib_kb.root
    lib_kb.page("a.md", "# A\n\n`alpha()` is at `lib/core.py:6-7`.\n")
    (root / ".gitignore").write_text("cache/\n", "utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "A knowledge base")
    first = subprocess.run(
        ["git", "-C", str(root / "cache" / "lib"), "rev-list", "--max-parents=0", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lib_kb.upstreams["lib"]["pin"] = first  # before lib/core.py existed
    lib_kb.write_manifest()
    git(root, "add", "upstreams.yaml")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "PIP"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        NO_COLOR="1",
    )
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), HOOK["id"], "--color=never"],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=900,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert re.search(r"verify code references and links\.+Failed", output), output
    assert "docs/a.md:3:18: error[file-missing]" in output, output

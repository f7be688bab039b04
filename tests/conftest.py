"""Shared fixtures: throwaway knowledge bases around real git repositories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from generator.generate.demo import build_all
from generator.upstream.gitbuild import RepoBuilder
from generator.verification.pipeline import Report, verify

ROOT = Path(__file__).resolve().parent.parent

CORE_PY = '''\
"""Core module of the test library."""

import os


def alpha(x):
    return x + 1


class Beta:
    def gamma(self):
        return alpha(2)

    def delta(self):
        return os.sep
'''

SUB_CORE_PY = '''\
"""A second core.py, so that the bare name is ambiguous."""


def epsilon():
    return 5
'''


@dataclass
class KB:
    """A knowledge base in a temporary directory: manifest, docs/ and upstream clones."""

    root: Path
    upstreams: dict[str, dict] = field(default_factory=dict)

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    def add_upstream(self, name: str, repo: RepoBuilder, pin: str, **spec: object) -> None:
        """Declare ``repo`` (already a clone in the cache) in the manifest."""
        entry: dict[str, object] = {"url": str(repo.path), "branch": repo.branch, "pin": pin}
        entry.update(spec)
        self.upstreams[name] = entry
        self.write_manifest()

    def write_manifest(self, extra: str = "") -> None:
        lines = ["cache_dir: cache", "upstreams:"]
        for name, entry in self.upstreams.items():
            lines.append(f"  {name}:")
            for key, value in entry.items():
                lines.append(f"    {key}: {json.dumps(value)}")
        (self.root / "upstreams.yaml").write_text("\n".join(lines) + "\n" + extra, "utf-8")

    def new_upstream(self, name: str) -> RepoBuilder:
        """A repository created directly as the clone at ``cache/<name>``."""
        return RepoBuilder.init(self.root / "cache" / name)

    def page(self, rel: str, text: str | bytes, dedent: bool = True) -> Path:
        path = self.docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text) if dedent else text, "utf-8", newline="")
        return path

    def verify(self, *paths: str, **options: object) -> Report:
        cwd = Path.cwd()
        os.chdir(self.root)
        try:
            return verify(list(paths) or ["docs"], **options)  # type: ignore[arg-type]
        finally:
            os.chdir(cwd)

    def cli(self, *args: str, script: bool = False) -> subprocess.CompletedProcess[str]:
        command = (
            [sys.executable, str(ROOT / "scripts" / "verify_code_refs.py"), *args]
            if script
            else [sys.executable, "-m", "generator", *args]
        )
        env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
        return subprocess.run(
            command, cwd=self.root, capture_output=True, text=True, env=env, check=False
        )


@pytest.fixture(scope="session", autouse=True)
def user_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's cache directory (where the verification cache's key lives), for every test and
    every process a test starts: tests leave the real one alone."""
    home = tmp_path_factory.mktemp("xdg-cache")
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(home)
    yield home
    if previous is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture
def kb(tmp_path: Path) -> KB:
    base = KB(tmp_path / "kb")
    base.docs.mkdir(parents=True)
    return base


@pytest.fixture
def lib_kb(kb: KB) -> KB:
    """A knowledge base with one upstream ``lib`` whose history has a rename and a later file.

    Commit 1 adds ``old/name.py``; commit 2 (the pin) renames it to ``lib/renamed.py`` and adds
    the rest; commit 3 (branch head) adds ``lib/future.py``.
    """
    repo = kb.new_upstream("lib")
    repo.commit(
        {"old/name.py": "def moved():\n    return 1\n"},
        "Add name.py",
        date="2025-01-01T00:00:00+00:00",
    )
    pin = repo.commit(
        {
            "old/name.py": None,
            "lib/renamed.py": "def moved():\n    return 1\n",
            "lib/core.py": CORE_PY,
            "lib/sub/core.py": SUB_CORE_PY,
            "lib/util.py": "".join(f"VALUE_{n} = {n}\n" for n in range(1, 41)),
            "data/blob.bin": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
        },
        "Rename name.py and add the library",
        date="2025-01-02T00:00:00+00:00",
    )
    repo.commit(
        {"lib/future.py": "def later():\n    pass\n"},
        "Add future.py",
        date="2025-01-03T00:00:00+00:00",
    )
    kb.add_upstream(
        "lib", repo, pin, prefixes=["lib/", "data/"], web_url="https://github.com/acme/lib"
    )
    kb.pin = pin  # type: ignore[attr-defined]
    return kb


@pytest.fixture(scope="session")
def demo_clones(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo upstreams, built from demo/upstreams exactly as `make demo-upstreams` does."""
    destination = tmp_path_factory.mktemp("demo-upstreams")
    build_all(ROOT / "demo", destination)
    return destination


@pytest.fixture
def demo_kb(tmp_path: Path, demo_clones: Path) -> Path:
    """A copy of the repository's knowledge base (manifest and docs) using the built demo."""
    root = tmp_path / "demo-kb"
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    manifest = (ROOT / "upstreams.yaml").read_text("utf-8")
    manifest = manifest.replace("cache_dir: .cache/upstreams", f"cache_dir: {demo_clones}")
    (root / "upstreams.yaml").write_text(manifest, "utf-8")
    return root


MERMAID_JS = ROOT / ".cache" / "node" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"


def site_config(root: Path) -> None:
    """Point a copied mkdocs.yml at the Mermaid that `make mermaid` installed in this checkout."""
    config = root / "mkdocs.yml"
    text = config.read_text("utf-8")
    marker = "  - knowledge-base:\n"
    assert marker in text, "mkdocs.yml no longer configures the knowledge-base plugin"
    config.write_text(text.replace(marker, f"{marker}      mermaid: {MERMAID_JS}\n"), "utf-8")


def mkdocs_build(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real `mkdocs build` of the knowledge base at ``root`` (a fresh process, as users run)."""
    if not MERMAID_JS.is_file():
        pytest.fail(f"Mermaid is not installed at {MERMAID_JS}: run `make mermaid`")
    # MkDocs finds the plugin by its entry point; PYTHONPATH makes that import this checkout's
    # package rather than whichever checkout the virtualenv was installed from.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory: pytest.TempPathFactory, demo_clones: Path) -> Path:
    """The demo knowledge base built once with `mkdocs build --strict`; returns its root."""
    root = tmp_path_factory.mktemp("demo-site")
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copytree(ROOT / "specs", root / "specs")  # governed: the build adds the spec board
    shutil.copytree(ROOT / ".lean-spec", root / ".lean-spec")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    manifest = (ROOT / "upstreams.yaml").read_text("utf-8")
    manifest = manifest.replace("cache_dir: .cache/upstreams", f"cache_dir: {demo_clones}")
    (root / "upstreams.yaml").write_text(manifest, "utf-8")
    site_config(root)
    result = mkdocs_build(root, "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    return root

"""Clones are made, refreshed and replaced only where the product made them."""

from __future__ import annotations

from pathlib import Path

from generator.upstream.clones import MARKER
from generator.upstream.gitbuild import RepoBuilder, run_git
from tests.conftest import KB


def _remote(tmp_path: Path) -> tuple[RepoBuilder, str]:
    remote = RepoBuilder.init(tmp_path / "remote")
    return remote, remote.commit({"pkg/a.py": "A = 1\n"}, "init")


def _manifest(kb: KB, cache_dir: str, name: str, url: Path, pin: str) -> None:
    (kb.root / "upstreams.yaml").write_text(
        f"cache_dir: {cache_dir}\nupstreams:\n  {name}:\n    url: {url}\n    pin: {pin}\n",
        "utf-8",
    )


def _files(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_a_directory_the_product_did_not_make_is_never_deleted(kb, tmp_path):
    _, pin = _remote(tmp_path)
    victim = kb.root.parent / "victim" / "important"
    (victim / "notes").mkdir(parents=True)
    (victim / "thesis.tex").write_text("years of work\n", "utf-8")
    (victim / "notes" / "n.md").write_text("more\n", "utf-8")
    before = _files(victim)
    _manifest(kb, "../victim", "important", tmp_path / "remote", pin)
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 2
    assert "exists and is not a clone of 'important' made by `upstreams fetch`" in result.stderr
    assert "it is left as it is" in result.stderr
    assert "upstreams.yaml:1: cache_dir:" in result.stderr
    assert "hint: point cache_dir at a directory of clones only" in result.stderr
    assert _files(victim) == before
    # sync fetches too, and refuses the same way.
    (kb.root / "docs").mkdir(exist_ok=True)
    run_git(kb.root, "init", "-q")
    run_git(kb.root, "add", "-A")
    run_git(kb.root, "commit", "-q", "-m", "kb")
    result = kb.cli("sync", "important")
    assert result.returncode == 2 and "it is left as it is" in result.stderr
    assert _files(victim) == before


def test_a_persons_repositories_are_neither_fetched_into_nor_deleted(kb, tmp_path):
    remote, pin = _remote(tmp_path)
    _manifest(kb, "work", "pkg", remote.path, pin)
    # A repository of someone else's, and a working copy of the very same upstream.
    other = RepoBuilder.init(kb.root / "work" / "pkg")
    other.commit({"mine.txt": "mine\n"}, "mine")
    run_git(other.path, "remote", "add", "origin", "https://example.com/mine.git")
    before = _files(other.path)
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 2 and "is not a clone of 'pkg'" in result.stderr
    assert _files(other.path) == before
    run_git(kb.root / "work", "clone", "-q", str(remote.path), "checkout")
    _manifest(kb, "work", "checkout", remote.path, pin)
    before = _files(kb.root / "work" / "checkout")
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 2 and "is not a clone of 'checkout'" in result.stderr
    assert _files(kb.root / "work" / "checkout") == before


def test_a_clone_the_product_made_is_refreshed_and_replaced_when_broken(kb, tmp_path):
    remote, pin = _remote(tmp_path)
    _manifest(kb, "cache", "pkg", remote.path, pin)
    clone = kb.root / "cache" / "pkg"
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("pkg: cloned")
    assert (clone / ".git" / MARKER).is_file()
    newer = remote.commit({"pkg/b.py": "B = 2\n"}, "more")
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"pkg: fetched, main at {newer[:12]}")
    # A clone of ours that git can no longer open is made again.
    (clone / ".git" / "HEAD").unlink()
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"pkg: cloned, main at {newer[:12]}")


def test_a_clone_made_before_the_marker_is_recognised_by_its_origin(kb, tmp_path):
    remote, pin = _remote(tmp_path)
    _manifest(kb, "cache", "pkg", remote.path, pin)
    (kb.root / "cache").mkdir()
    run_git(kb.root / "cache", "clone", "-q", "--no-checkout", str(remote.path), "pkg")
    clone = kb.root / "cache" / "pkg"
    assert not (clone / ".git" / MARKER).exists()
    newer = remote.commit({"pkg/b.py": "B = 2\n"}, "more")
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"pkg: fetched, main at {newer[:12]}")
    assert (clone / ".git" / MARKER).is_file()


def test_an_empty_directory_is_cloned_into(kb, tmp_path):
    _, pin = _remote(tmp_path)
    _manifest(kb, "cache", "pkg", tmp_path / "remote", pin)
    (kb.root / "cache" / "pkg").mkdir(parents=True)
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("pkg: cloned")

"""The embedded demo: upstream repositories replayed from ``demo/upstreams/<name>/``.

Each upstream is a base tree plus patches, described by ``commits.yaml``; replaying them with
fixed authors and dates gives the same commit SHAs on every machine, so the demo pages can be
pinned to them.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from generator.gitbuild import RepoBuilder, run_git
from generator.pages import load_yaml

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuiltUpstream:
    name: str
    path: Path
    head: str
    tags: dict[str, str]


def build_demo_upstream(history_dir: Path, destination: Path) -> BuiltUpstream:
    """Replay ``history_dir/commits.yaml`` into a fresh repository at ``destination``."""
    spec = load_yaml((history_dir / "commits.yaml").read_text(encoding="utf-8"))
    author = (spec["author"]["name"], spec["author"]["email"])
    branch = spec.get("branch", "main")
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    try:
        repo = RepoBuilder.init(staging, branch=branch, author=author)
        tags: dict[str, str] = {}
        for step in spec["commits"]:
            if "tree" in step:
                repo.copy_tree(history_dir / step["tree"])
            if "patch" in step:
                repo.apply_patch(history_dir / step["patch"])
            sha = repo.commit(None, step["message"], date=step["date"], tag=step.get("tag"))
            if step.get("tag"):
                tags[step["tag"]] = sha
            if step.get("branch"):
                repo.branch_at(step["branch"], sha)
        repo.checkout(branch)
        run_git(staging, "gc", "-q", "--auto")
        head = repo.head()
        if destination.exists():
            shutil.rmtree(destination)
        staging.rename(destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log.info("built demo upstream %s at %s (head %s)", spec["name"], destination, head[:7])
    return BuiltUpstream(spec["name"], destination, head, tags)


def build_all(demo_dir: Path, destination_root: Path) -> list[BuiltUpstream]:
    """Build every upstream under ``demo_dir/upstreams`` into ``destination_root/<name>``."""
    built = []
    for history in sorted((demo_dir / "upstreams").iterdir()):
        if (history / "commits.yaml").is_file():
            built.append(build_demo_upstream(history, destination_root / history.name))
    return built

"""Clone and fetch the upstreams declared in the manifest into the cache directory.

Clones are made without a checkout: the verifier reads everything from the object database.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import git

from generator.model import Upstream
from generator.upstream.manifest import ConfigError, Manifest

log = logging.getLogger(__name__)

Notify = Callable[[str], None]


@dataclass(frozen=True)
class FetchResult:
    upstream: str
    action: str
    """``cloned`` or ``fetched``."""
    head: str
    """The tracked branch's commit after fetching."""
    has_pin: bool


class _GitProgress(git.RemoteProgress):
    def __init__(self, name: str, notify: Notify) -> None:
        super().__init__()
        self._name = name
        self._notify = notify

    def update(
        self,
        op_code: int,
        cur_count: float | str,
        max_count: float | str | None = None,
        message: str = "",
    ) -> None:
        stage = (self._cur_line or "").split(":", 1)[0].strip()
        if max_count:
            percent = 100 * float(cur_count) / float(max_count)
            self._notify(
                f"{self._name}: {stage} {percent:3.0f}% ({int(float(cur_count))}/"
                f"{int(float(max_count))})"
            )


def clone_source(manifest: Manifest, upstream: Upstream) -> str:
    """The URL to clone from; a relative local path is taken from the manifest's directory."""
    url = upstream.url
    if "://" in url or url.startswith("git@"):
        return url
    path = Path(url).expanduser()
    return str(path if path.is_absolute() else (manifest.root / path).resolve())


def fetch_upstreams(
    manifest: Manifest, names: Sequence[str] = (), notify: Notify | None = None
) -> list[FetchResult]:
    """Clone missing upstreams and fetch the others. Raises `ConfigError` on failure."""
    unknown = [name for name in names if name not in manifest.upstreams]
    if unknown:
        raise ConfigError(
            f"unknown upstream(s): {', '.join(unknown)}",
            file=manifest.display_path(),
            hint="known: " + ", ".join(sorted(manifest.upstreams)),
        )
    selected = [manifest.upstreams[name] for name in names] or list(manifest.upstreams.values())
    return [fetch_upstream(manifest, upstream, notify) for upstream in selected]


def fetch_upstream(
    manifest: Manifest, upstream: Upstream, notify: Notify | None = None
) -> FetchResult:
    assert upstream.clone_dir is not None
    source = clone_source(manifest, upstream)
    progress = _GitProgress(upstream.name, notify) if notify else None
    clone_dir = upstream.clone_dir
    try:
        if (clone_dir / ".git").exists() or (clone_dir / "HEAD").exists():
            repo = git.Repo(clone_dir)
            if "origin" in [remote.name for remote in repo.remotes]:
                repo.remotes.origin.set_url(source)
            else:
                repo.create_remote("origin", source)
            repo.remotes.origin.fetch(progress=progress, prune=True, tags=True)
            action = "fetched"
        else:
            if clone_dir.exists():
                shutil.rmtree(clone_dir)
            clone_dir.parent.mkdir(parents=True, exist_ok=True)
            repo = git.Repo.clone_from(source, clone_dir, progress=progress, no_checkout=True)
            action = "cloned"
    except git.GitCommandError as error:
        detail = (error.stderr or str(error)).strip().replace("\n", " ")
        raise ConfigError(
            f"could not {'fetch' if clone_dir.exists() else 'clone'} {source}: {detail}",
            file=manifest.display_path(),
            line=manifest.lines.get(f"upstreams.{upstream.name}.url"),
            key=f"upstreams.{upstream.name}.url",
        ) from None
    try:
        head = repo.commit(f"origin/{upstream.branch}").hexsha
    except (git.BadName, ValueError):
        raise ConfigError(
            f"branch '{upstream.branch}' does not exist in {source}",
            file=manifest.display_path(),
            line=manifest.lines.get(f"upstreams.{upstream.name}.branch"),
            key=f"upstreams.{upstream.name}.branch",
        ) from None
    has_pin = _has_commit(repo, upstream.pin)
    if not has_pin:
        try:
            repo.remotes.origin.fetch(upstream.pin)
        except git.GitCommandError:
            log.debug("the remote would not serve %s directly", upstream.pin)
        has_pin = _has_commit(repo, upstream.pin)
    repo.close()
    return FetchResult(upstream.name, action, head, has_pin)


def _has_commit(repo: git.Repo, sha: str) -> bool:
    try:
        return repo.commit(sha).hexsha == sha
    except (git.BadName, ValueError):
        return False

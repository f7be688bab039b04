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
    """Clone and fetch progress for ``notify``; it also keeps what git said went wrong
    (``error_lines``), which git writes where the progress goes."""

    def __init__(self, name: str, notify: Notify | None) -> None:
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
        if max_count and self._notify is not None:
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
    manifest.check_known(names)
    selected = [manifest.upstreams[name] for name in names] or list(manifest.upstreams.values())
    return [fetch_upstream(manifest, upstream, notify) for upstream in selected]


MARKER = "kb-generator-clone"
"""A file in the git directory of every clone this product makes: only a directory holding it
(or one recognised by `_made_here`) is ever fetched into or replaced."""


def fetch_upstream(
    manifest: Manifest, upstream: Upstream, notify: Notify | None = None
) -> FetchResult:
    assert upstream.clone_dir is not None
    source = clone_source(manifest, upstream)
    progress = _GitProgress(upstream.name, notify)
    clone_dir = upstream.clone_dir
    ours = _made_here(clone_dir, upstream, source) if clone_dir.exists() else False
    if clone_dir.exists() and not ours and not _is_empty_directory(clone_dir):
        # The manifest decides where clones go (cache_dir/NAME), so it can name any directory:
        # never fetch into, let alone delete, one this product did not make.
        key = "cache_dir" if "cache_dir" in manifest.lines else f"upstreams.{upstream.name}"
        raise ConfigError(
            f"{_shown(clone_dir)} exists and is not a clone of '{upstream.name}' made by "
            "`upstreams fetch`; it is left as it is",
            file=manifest.display_path(),
            line=manifest.lines.get(key),
            key=key,
            hint=f"point cache_dir at a directory of clones only (clones go to cache_dir/"
            f"{upstream.name}), or move {_shown(clone_dir)} away if it is an old clone",
        )
    try:
        repo = _open(clone_dir) if ours else None
        if repo is not None:
            if "origin" in [remote.name for remote in repo.remotes]:
                repo.remotes.origin.set_url(source)
            else:
                repo.create_remote("origin", source)
            repo.remotes.origin.fetch(progress=progress, prune=True, tags=True)
            action = "fetched"
        else:
            if ours:
                if not _has_marker(clone_dir):  # the source repository itself: never deleted
                    raise ConfigError(
                        f"{_shown(clone_dir)} is not a git repository git can open",
                        file=manifest.display_path(),
                        line=manifest.lines.get(f"upstreams.{upstream.name}.url"),
                        key=f"upstreams.{upstream.name}.url",
                    )
                # A clone this product made that git can no longer open: make it again.
                shutil.rmtree(clone_dir)
            clone_dir.parent.mkdir(parents=True, exist_ok=True)
            repo = git.Repo.clone_from(source, clone_dir, progress=progress, no_checkout=True)
            action = "cloned"
        _mark(repo, clone_dir, source)
    except git.GitCommandError as error:
        said = " ".join(line.strip() for line in progress.error_lines)
        detail = (said or error.stderr or str(error)).strip().replace("\n", " ")
        local = Path(source).expanduser() if "://" not in source else None
        if local is not None and local.is_dir() and "does not exist" in detail:
            # git's own words say the directory is not there, which confuses more than helps.
            detail = f"{local} is a directory but not a git repository (no .git in it)"
        raise ConfigError(
            f"could not {'fetch' if clone_dir.exists() else 'clone'} {source}: {detail}",
            file=manifest.display_path(),
            line=manifest.lines.get(f"upstreams.{upstream.name}.url"),
            key=f"upstreams.{upstream.name}.url",
        ) from None
    try:
        head = repo.commit(f"origin/{upstream.branch}").hexsha
    except (git.BadName, ValueError):
        branches = sorted(
            ref.remote_head for ref in repo.remotes.origin.refs if ref.remote_head != "HEAD"
        )
        repo.close()
        raise ConfigError(
            f"branch '{upstream.branch}' does not exist in {source}",
            file=manifest.display_path(),
            line=manifest.lines.get(f"upstreams.{upstream.name}.branch"),
            key=f"upstreams.{upstream.name}.branch",
            hint=(
                f"its branches: {', '.join(branches[:10])}{' ...' if len(branches) > 10 else ''}"
                f"; set `branch:` of '{upstream.name}' in the manifest to the one to track"
                if branches
                else "it has no branch yet"
            ),
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


def _git_dir(directory: Path) -> Path | None:
    """The git directory of a repository at ``directory`` (``.git``, or itself when bare)."""
    if (directory / ".git").is_dir():
        return directory / ".git"
    if (directory / "HEAD").is_file() and (directory / "objects").is_dir():
        return directory
    return None


def _open(directory: Path) -> git.Repo | None:
    try:
        return git.Repo(directory)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


def _made_here(directory: Path, upstream: Upstream, source: str) -> bool:
    """Whether ``directory`` is a clone this product made for ``upstream``, or the manifest's
    source repository itself (a local upstream whose clone is the repository: fetching from it
    deletes nothing).

    A clone this product made holds `MARKER` in its git directory. One made before the marker
    existed is recognised by what `fetch_upstream` always made: a ``.git`` directory and nothing
    else (no checkout), whose origin is the manifest's URL; a person's working copy of the same
    repository has its files checked out, and is not taken for one."""
    if directory.is_symlink():
        return False
    if _has_marker(directory) or _is_source(directory, source):
        return True
    if not (directory / ".git").is_dir() or [e.name for e in directory.iterdir()] != [".git"]:
        return False
    repo = _open(directory)
    if repo is None:
        return False
    try:
        origins = [remote for remote in repo.remotes if remote.name == "origin"]
        urls = set(origins[0].urls) if origins else set()
    except git.GitCommandError:
        urls = set()
    finally:
        repo.close()
    return bool(urls & {source, upstream.url})


def _has_marker(directory: Path) -> bool:
    git_dir = _git_dir(directory)
    return git_dir is not None and (git_dir / MARKER).is_file()


def _mark(repo: git.Repo, directory: Path, source: str) -> None:
    """Record in the clone's git directory that this product made it (never in the source
    repository itself, when the clone is it)."""
    if _is_source(directory, source):
        return
    marker = Path(repo.git_dir) / MARKER
    if not marker.exists():
        marker.write_text(
            "Made by kb-generator's `upstreams fetch`: it may delete and clone this again.\n",
            "utf-8",
        )


def _is_source(directory: Path, source: str) -> bool:
    """``source`` is a local path to ``directory`` itself."""
    if "://" in source or source.startswith("git@"):
        return False
    return Path(source).resolve() == directory.resolve()


def _is_empty_directory(directory: Path) -> bool:
    return directory.is_dir() and not directory.is_symlink() and not any(directory.iterdir())


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def remote_default_branch(clone_dir: Path | None) -> str | None:
    """The branch the clone's origin names as its HEAD (what ``git clone`` checks out), or its
    only branch; None when neither tells."""
    if clone_dir is None or not clone_dir.is_dir():
        return None
    try:
        repo = git.Repo(clone_dir)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        heads = [ref for ref in repo.remotes.origin.refs if ref.remote_head != "HEAD"]
        try:
            named = repo.git.symbolic_ref("refs/remotes/origin/HEAD").removeprefix(
                "refs/remotes/origin/"
            )
        except git.GitCommandError:
            named = None
        names = [ref.remote_head for ref in heads]
        if named in names:
            return named
        return names[0] if len(names) == 1 else None
    finally:
        repo.close()


def _has_commit(repo: git.Repo, sha: str) -> bool:
    try:
        return repo.commit(sha).hexsha == sha
    except (git.BadName, ValueError):
        return False

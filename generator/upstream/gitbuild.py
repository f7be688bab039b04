"""Build git repositories whose commit SHAs are the same on every machine.

A commit's SHA depends only on its tree, parents, author, committer, dates and message, so fixing
all of them (and isolating git from the user's configuration, hooks and signing) makes a history
reproducible. The demo upstreams and the tests' throwaway repositories are both built this way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_AUTHOR = ("Demo Author", "author@example.invalid")
DEFAULT_DATE = "2025-01-01T00:00:00+00:00"


class GitError(Exception):
    """A git command failed; the message carries git's own output."""


def git_environment(
    author: tuple[str, str] = DEFAULT_AUTHOR, date: str = DEFAULT_DATE
) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME=author[0],
        GIT_AUTHOR_EMAIL=author[1],
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_NAME=author[0],
        GIT_COMMITTER_EMAIL=author[1],
        GIT_COMMITTER_DATE=date,
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    return env


def run_git(
    repo: Path, *args: str, env: Mapping[str, str] | None = None, input_bytes: bytes | None = None
) -> str:
    result = subprocess.run(
        [
            "git",
            "-c",
            "core.autocrlf=false",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
            *args,
        ],
        cwd=repo,
        env=dict(env) if env is not None else git_environment(),
        input=input_bytes,
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        raise GitError(
            f"git {' '.join(args)} failed in {repo}: "
            f"{result.stderr.decode(errors='replace').strip()}"
        )
    return result.stdout.decode("utf-8", errors="replace")


@dataclass
class RepoBuilder:
    """A repository built commit by commit with fixed identities and dates.

    >>> repo = RepoBuilder.init(tmp / "up")
    >>> sha = repo.commit({"pkg/a.py": "x = 1\\n"}, "Add a", date="2025-01-02T00:00:00+00:00")
    """

    path: Path
    author: tuple[str, str] = DEFAULT_AUTHOR
    branch: str = "main"

    @classmethod
    def init(
        cls, path: Path, *, branch: str = "main", author: tuple[str, str] = DEFAULT_AUTHOR
    ) -> RepoBuilder:
        path.mkdir(parents=True, exist_ok=True)
        run_git(path, "init", "-q", f"--initial-branch={branch}")
        return cls(path=path, author=author, branch=branch)

    def write(self, files: Mapping[str, str | bytes | None]) -> None:
        """Write (or, for ``None``, delete) files in the work tree, with mode 0644."""
        for name, content in files.items():
            target = self.path / name
            if content is None:
                if target.exists():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode("utf-8") if isinstance(content, str) else content
            target.write_bytes(data)
            target.chmod(0o644)

    def commit(
        self,
        files: Mapping[str, str | bytes | None] | None,
        message: str,
        *,
        date: str = DEFAULT_DATE,
        tag: str | None = None,
    ) -> str:
        """Apply ``files`` and commit everything; returns the new commit's SHA."""
        if files:
            self.write(files)
        env = git_environment(self.author, date)
        run_git(self.path, "add", "-A", env=env)
        run_git(self.path, "commit", "-q", "--allow-empty", "--no-verify", "-m", message, env=env)
        if tag:
            run_git(self.path, "tag", tag, env=env)
        return self.head()

    def copy_tree(self, source: Path) -> None:
        """Replace the work tree (all but .git) with a copy of ``source``."""
        for entry in self.path.iterdir():
            if entry.name == ".git":
                continue
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        for file in sorted(source.rglob("*")):
            if file.is_file():
                target = self.path / file.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(file.read_bytes())
                target.chmod(0o644)

    def apply_patch(self, patch: Path) -> None:
        run_git(self.path, "apply", "--index", "--whitespace=nowarn", str(patch.resolve()))

    def head(self) -> str:
        return run_git(self.path, "rev-parse", "HEAD").strip()

    def branch_at(self, name: str, revision: str = "HEAD") -> None:
        run_git(self.path, "branch", "-f", name, revision)

    def checkout(self, revision: str) -> None:
        run_git(self.path, "checkout", "-q", revision)

"""A small GitHub REST client: pull requests, their files, diff, reviews and review comments.

Everything fetched goes through one request loop that

* sends a User-Agent always, and the token (from ``GITHUB_TOKEN`` or ``GH_TOKEN`` only) in the
  ``Authorization`` header only: never in a URL, a cache file, a log line, an exception or a repr;
* keeps an on-disk cache keyed by URL and Accept, revalidated with ``If-None-Match`` (a 304 serves
  the cached body); ``offline=True`` serves from that cache only;
* waits out short rate limits (``x-ratelimit-reset``, ``retry-after``) and stops with a message
  saying when a long one resets; retries 5xx answers and timeouts with bounded exponential backoff.

>>> client = GitHubClient.from_env(cache_dir=kb_root / ".cache" / "github")
>>> pr = client.pull("THUDM", "slime", 123)
>>> changes = client.pull_changes("THUDM", "slime", 123)   # diff, or the files when too large
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlencode, urlsplit

import httpx

from generator.files import atomic_write

__all__ = [
    "DEFAULT_API_URL",
    "DIFF_MEDIA_TYPE",
    "JSON_MEDIA_TYPE",
    "MAX_PR_FILES",
    "BadCredentials",
    "DiffTooLarge",
    "Forbidden",
    "GitHubClient",
    "GitHubError",
    "GitHubHTTPError",
    "GitHubTimeout",
    "NetworkError",
    "NotFound",
    "NotInCache",
    "Progress",
    "PullChanges",
    "PullFile",
    "PullRequest",
    "RateLimited",
    "Review",
    "ReviewComment",
    "ServerError",
    "default_cache_dir",
    "terminal_progress",
    "token_from_env",
    "web_url_for",
]

logger = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.github.com"
JSON_MEDIA_TYPE = "application/vnd.github+json"
DIFF_MEDIA_TYPE = "application/vnd.github.diff"
API_VERSION = "2022-11-28"
USER_AGENT = "kb-generator/0.1 (code-analysis knowledge base)"
PER_PAGE = 100
MAX_PR_FILES = 3000  # GitHub lists at most this many files of a pull request
TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")
CACHE_FORMAT = 1

ProgressCallback = Callable[["Progress"], None]


# --------------------------------------------------------------------------------------------
# Errors


class GitHubError(Exception):
    """Anything that went wrong talking to GitHub; the message says what to do about it."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.url = url

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class GitHubHTTPError(GitHubError):
    """GitHub answered with an error status."""

    def __init__(self, message: str, *, url: str | None = None, status: int = 0) -> None:
        super().__init__(message, url=url)
        self.status = status


class NotFound(GitHubHTTPError):
    """404: the repository, pull request or resource does not exist (or the token cannot see it)."""


class BadCredentials(GitHubHTTPError):
    """401: the token was rejected."""


class Forbidden(GitHubHTTPError):
    """403 that is not a rate limit: the token lacks a permission, or the resource is blocked."""


class RateLimited(GitHubHTTPError):
    """The rate limit is exhausted and resets later than the client is willing to wait."""

    def __init__(
        self, message: str, *, url: str | None = None, status: int = 0, reset_at: datetime | None
    ) -> None:
        super().__init__(message, url=url, status=status)
        self.reset_at = reset_at


class DiffTooLarge(GitHubHTTPError):
    """406 ``too_large``: GitHub will not produce this diff; list the files instead."""


class ServerError(GitHubHTTPError):
    """5xx answers went on after every retry."""


class NetworkError(GitHubError):
    """GitHub could not be reached at all (DNS, connection refused, TLS, ...)."""


class GitHubTimeout(NetworkError):
    """Every attempt timed out."""


class NotInCache(GitHubError):
    """Offline mode, and the response is not in the cache."""


# --------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Progress:
    """One page of a multi-page fetch arrived."""

    what: str
    page: int
    items: int
    total: int | None = None


@dataclass(frozen=True)
class PullRequest:
    owner: str
    repo: str
    number: int
    title: str
    body: str
    state: str  # "open" or "closed"
    merged: bool
    merged_at: str | None
    draft: bool
    author: str
    created_at: str | None
    base_ref: str
    base_sha: str
    head_ref: str
    head_sha: str
    html_url: str
    additions: int
    deletions: int
    changed_files: int
    commits: int

    @classmethod
    def from_json(cls, owner: str, repo: str, data: Mapping[str, Any]) -> PullRequest:
        base = data.get("base") or {}
        head = data.get("head") or {}
        return cls(
            owner=owner,
            repo=repo,
            number=int(data["number"]),
            title=str(data.get("title") or ""),
            body=str(data.get("body") or ""),
            state=str(data.get("state") or ""),
            merged=bool(data.get("merged") or data.get("merged_at")),
            merged_at=data.get("merged_at"),
            draft=bool(data.get("draft")),
            author=_login(data.get("user")),
            created_at=data.get("created_at"),
            base_ref=str(base.get("ref") or ""),
            base_sha=str(base.get("sha") or ""),
            head_ref=str(head.get("ref") or ""),
            head_sha=str(head.get("sha") or ""),
            html_url=str(data.get("html_url") or ""),
            additions=int(data.get("additions") or 0),
            deletions=int(data.get("deletions") or 0),
            changed_files=int(data.get("changed_files") or 0),
            commits=int(data.get("commits") or 0),
        )


@dataclass(frozen=True)
class PullFile:
    """One entry of ``/pulls/{n}/files``; ``patch`` is None for binary or very large files."""

    filename: str
    status: str  # added, removed, modified, renamed, copied, changed, unchanged
    additions: int
    deletions: int
    changes: int
    patch: str | None = None
    previous_filename: str | None = None
    sha: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PullFile:
        return cls(
            filename=str(data["filename"]),
            status=str(data.get("status") or "modified"),
            additions=int(data.get("additions") or 0),
            deletions=int(data.get("deletions") or 0),
            changes=int(data.get("changes") or 0),
            patch=data.get("patch"),
            previous_filename=data.get("previous_filename"),
            sha=data.get("sha"),
        )


@dataclass(frozen=True)
class Review:
    id: int
    author: str
    state: str  # APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
    body: str
    commit_id: str | None
    submitted_at: str | None
    html_url: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Review:
        return cls(
            id=int(data.get("id") or 0),
            author=_login(data.get("user")),
            state=str(data.get("state") or ""),
            body=str(data.get("body") or ""),
            commit_id=data.get("commit_id"),
            submitted_at=data.get("submitted_at"),
            html_url=str(data.get("html_url") or ""),
        )


@dataclass(frozen=True)
class ReviewComment:
    """A comment on a line of the diff (``/pulls/{n}/comments``)."""

    id: int
    author: str
    body: str
    path: str
    line: int | None
    start_line: int | None
    side: str | None  # LEFT (old) or RIGHT (new)
    original_line: int | None
    commit_id: str | None
    original_commit_id: str | None
    diff_hunk: str
    in_reply_to_id: int | None
    review_id: int | None
    created_at: str | None
    html_url: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReviewComment:
        return cls(
            id=int(data.get("id") or 0),
            author=_login(data.get("user")),
            body=str(data.get("body") or ""),
            path=str(data.get("path") or ""),
            line=data.get("line"),
            start_line=data.get("start_line"),
            side=data.get("side"),
            original_line=data.get("original_line"),
            commit_id=data.get("commit_id"),
            original_commit_id=data.get("original_commit_id"),
            diff_hunk=str(data.get("diff_hunk") or ""),
            in_reply_to_id=data.get("in_reply_to_id"),
            review_id=data.get("pull_request_review_id"),
            created_at=data.get("created_at"),
            html_url=str(data.get("html_url") or ""),
        )


@dataclass(frozen=True)
class PullChanges:
    """What a pull request changes: always the file list, and the unified diff when GitHub gave it.

    ``source`` is ``"diff"`` when ``diff`` is GitHub's own diff, ``"files"`` when GitHub refused
    it as too large and ``diff`` was rebuilt from the files' patches (files without a patch, such as
    binary ones, appear as ``Binary files differ`` or are named in ``files_without_patch``).
    ``truncated`` means GitHub lists fewer files than the pull request changes (its 3,000 cap).
    """

    files: tuple[PullFile, ...]
    diff: str
    source: str
    truncated: bool = False

    @property
    def files_without_patch(self) -> tuple[str, ...]:
        return tuple(f.filename for f in self.files if f.patch is None)


def _login(user: object) -> str:
    if isinstance(user, Mapping):
        return str(user.get("login") or "")
    return ""


_DIFF_HEADER = re.compile(r"(?m)^diff --git ")


def diff_parts(diff: str) -> dict[str, str]:
    """Each file's part of a unified git diff, headers included and up to (not including) the
    next file's, by the file's path at the head (its old path if deleted).

    The path comes from the headers before the first hunk, however many there are (a rename
    that also changes the mode has nine): ``+++ b/...``, else ``rename to ...``, else
    ``--- a/...``, else the ``diff --git`` line itself (a pure rename, a binary file)."""
    parts: dict[str, str] = {}
    starts = [match.start() for match in _DIFF_HEADER.finditer(diff)]
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(diff)
        part = diff[start:end]
        lines = part.split("\n")
        name = None
        for line in lines[1:]:
            if line.startswith("@@"):
                break
            if line.startswith("+++ ") and line != "+++ /dev/null":
                name = line[4:].removeprefix("b/")
            elif line.startswith("rename to "):
                name = line.removeprefix("rename to ")
            elif line.startswith("--- ") and name is None and line != "--- /dev/null":
                name = line[4:].removeprefix("a/")
        if name is None and " b/" in lines[0]:
            name = lines[0].rsplit(" b/", 1)[1]
        if name is not None:
            parts[name] = part
    return parts


def diff_hunks(diff: str) -> dict[str, str]:
    """Each file's hunks in a unified git diff (from its first ``@@``), by `diff_parts`' path;
    a file without a hunk (a pure rename, a binary file) is left out."""
    hunks: dict[str, str] = {}
    for name, part in diff_parts(diff).items():
        lines = part.split("\n")
        first = next((n for n, line in enumerate(lines) if line.startswith("@@")), None)
        if first is not None:
            hunks[name] = "\n".join(lines[first:])
    return hunks


def diff_from_files(files: tuple[PullFile, ...] | list[PullFile]) -> str:
    """A unified diff rebuilt from the files endpoint's patches (for diffs GitHub refuses)."""
    chunks: list[str] = []
    for f in files:
        old = f.previous_filename or f.filename
        header = [f"diff --git a/{old} b/{f.filename}"]
        if f.status == "renamed" and f.previous_filename:
            header += [f"rename from {f.previous_filename}", f"rename to {f.filename}"]
        elif f.status == "added":
            header.append("new file mode 100644")  # the files endpoint does not give modes
        elif f.status == "removed":
            header.append("deleted file mode 100644")
        old_name = "/dev/null" if f.status == "added" else f"a/{old}"
        new_name = "/dev/null" if f.status == "removed" else f"b/{f.filename}"
        if f.patch is None:
            # Binary, or too large for GitHub to show: either way the content is not available.
            if f.status == "renamed" and not f.changes:
                header.insert(1, "similarity index 100%")
            else:
                # git wants an index line here; the files endpoint only knows the new blob.
                new_blob = "0000000" if f.status == "removed" else (f.sha or "0000000")
                header.append(f"index 0000000..{new_blob}")
                header.append(f"Binary files {old_name} and {new_name} differ")
            chunks.append("\n".join(header) + "\n")
            continue
        header += [f"--- {old_name}", f"+++ {new_name}"]
        patch = f.patch if f.patch.endswith("\n") else f.patch + "\n"
        chunks.append("\n".join(header) + "\n" + patch)
    return "".join(chunks)


# --------------------------------------------------------------------------------------------
# Configuration helpers


def token_from_env(environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """The token and the name of the variable it came from (``GITHUB_TOKEN``, then ``GH_TOKEN``)."""
    env = os.environ if environ is None else environ
    for name in TOKEN_VARIABLES:
        value = (env.get(name) or "").strip()
        if value:
            return value, name
    return None, None


def web_url_for(api_url: str) -> str:
    """The web address that goes with an API base: api.github.com -> github.com, GHE /api/v3 off."""
    parts = urlsplit(api_url.rstrip("/"))
    if parts.netloc == "api.github.com":
        return "https://github.com"
    path = parts.path
    if path.endswith("/api/v3"):
        path = path[: -len("/api/v3")]
    return f"{parts.scheme}://{parts.netloc}{path}".rstrip("/")


def default_cache_dir(kb_root: Path) -> Path:
    """Where a knowledge base keeps GitHub responses: ``.cache/github/`` under its root."""
    return kb_root / ".cache" / "github"


def terminal_progress(stream: IO[str] | None = None) -> ProgressCallback | None:
    """A progress callback that redraws one line on a terminal; None in CI or when piped."""
    out = sys.stderr if stream is None else stream
    if os.environ.get("CI") or not getattr(out, "isatty", lambda: False)():
        return None

    def show(progress: Progress) -> None:
        total = f"/{progress.total}" if progress.total else ""
        out.write(f"\r{progress.what}: page {progress.page}, {progress.items}{total} items")
        if progress.total and progress.items >= progress.total:
            out.write("\n")
        out.flush()

    return show


class _Secret:
    """Holds the token; its repr and str never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<token hidden>"

    __str__ = __repr__


@dataclass
class _Cached:
    url: str
    accept: str
    etag: str | None
    last_modified: str | None
    link: str | None
    body: str


@dataclass
class _Response:
    body: str
    link: str | None
    from_cache: bool = False


_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


def _next_link(link: str | None) -> str | None:
    if not link:
        return None
    for part in link.split(","):
        match = _NEXT_LINK.search(part)
        if match:
            return match.group(1)
    return None


# --------------------------------------------------------------------------------------------
# The client


@dataclass
class _Settings:
    api_url: str
    web_url: str
    cache_dir: Path | None
    offline: bool
    timeout: float
    max_retries: int
    backoff_base: float
    backoff_max: float
    max_rate_limit_wait: float
    token_variable: str | None = field(default=None)


class GitHubClient:
    """The GitHub REST API, read only.

    ``sleep`` and ``clock`` are injectable (tests pass fakes so nothing waits); ``transport`` is
    httpx's, for tests that replace the network altogether. Use as a context manager or call
    :meth:`close`.
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        api_url: str = DEFAULT_API_URL,
        web_url: str | None = None,
        cache_dir: Path | None = None,
        offline: bool = False,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        max_rate_limit_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        progress: ProgressCallback | None = None,
        transport: httpx.BaseTransport | None = None,
        token_variable: str | None = None,
    ) -> None:
        api_url = api_url.rstrip("/")
        if urlsplit(api_url).scheme not in ("http", "https"):
            raise GitHubError(f"GitHub API URL must start with https:// (got {api_url!r})")
        if offline and cache_dir is None:
            raise GitHubError("offline mode needs a cache directory to read responses from")
        self._settings = _Settings(
            api_url=api_url,
            web_url=(web_url or web_url_for(api_url)).rstrip("/"),
            cache_dir=cache_dir,
            offline=offline,
            timeout=timeout,
            max_retries=max(0, max_retries),
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_rate_limit_wait=max_rate_limit_wait,
            token_variable=token_variable if token else None,
        )
        self._token = _Secret(token) if token else None
        self._sleep = sleep
        self._clock = clock
        self.progress = progress
        self._http = httpx.Client(
            headers={"User-Agent": USER_AGENT, "X-GitHub-Api-Version": API_VERSION},
            timeout=timeout,
            follow_redirects=True,  # httpx drops Authorization when a redirect changes host
            transport=transport,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **options: Any) -> GitHubClient:
        """A client configured from ``GITHUB_TOKEN``/``GH_TOKEN`` and ``GITHUB_API_URL``."""
        env = os.environ if environ is None else environ
        token, variable = token_from_env(env)
        api_url = (env.get("GITHUB_API_URL") or "").strip() or DEFAULT_API_URL
        options.setdefault("api_url", api_url)
        return cls(token=token, token_variable=variable, **options)

    # -- properties ---------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return self._settings.api_url

    @property
    def web_url(self) -> str:
        return self._settings.web_url

    @property
    def offline(self) -> bool:
        return self._settings.offline

    @property
    def cache_dir(self) -> Path | None:
        return self._settings.cache_dir

    @property
    def authenticated(self) -> bool:
        return self._token is not None

    def __repr__(self) -> str:
        s = self._settings
        return (
            f"GitHubClient(api_url={s.api_url!r}, authenticated={self.authenticated}, "
            f"offline={s.offline}, cache_dir={str(s.cache_dir) if s.cache_dir else None!r})"
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pull requests ------------------------------------------------------------------------

    def pull(self, owner: str, repo: str, number: int) -> PullRequest:
        data = self.get_json(
            _pulls(owner, repo, number), what=f"pull request {owner}/{repo}#{number}"
        )
        return PullRequest.from_json(owner, repo, data)

    def pull_files(
        self,
        owner: str,
        repo: str,
        number: int,
        *,
        max_files: int = MAX_PR_FILES,
        total: int | None = None,
    ) -> list[PullFile]:
        """Every changed file, page by page (GitHub stops at 3,000)."""
        items = self.get_paginated(
            _pulls(owner, repo, number) + "/files",
            what=f"files of {owner}/{repo}#{number}",
            max_items=max_files,
            total=total,
        )
        return [PullFile.from_json(item) for item in items]

    def pull_diff(self, owner: str, repo: str, number: int) -> str:
        """GitHub's unified diff; raises :class:`DiffTooLarge` when GitHub refuses to make it."""
        return self.get_text(
            _pulls(owner, repo, number),
            accept=DIFF_MEDIA_TYPE,
            what=f"diff of {owner}/{repo}#{number}",
        )

    def pull_changes(
        self, owner: str, repo: str, number: int, *, pull: PullRequest | None = None
    ) -> PullChanges:
        """The files and the diff, rebuilding the diff from the files when GitHub says too large."""
        total = pull.changed_files if pull else None
        files = tuple(self.pull_files(owner, repo, number, total=total))
        # With the PR's own count, exactly 3,000 files is complete; without it, the cap is a hint.
        truncated = len(files) < total if total is not None else len(files) >= MAX_PR_FILES
        try:
            diff = self.pull_diff(owner, repo, number)
        except DiffTooLarge as exc:
            logger.info("%s; rebuilding it from %d files' patches", exc, len(files))
            return PullChanges(files, diff_from_files(files), "files", truncated)
        return PullChanges(files, diff, "diff", truncated)

    def pull_reviews(self, owner: str, repo: str, number: int) -> list[Review]:
        items = self.get_paginated(
            _pulls(owner, repo, number) + "/reviews", what=f"reviews of {owner}/{repo}#{number}"
        )
        return [Review.from_json(item) for item in items]

    def pull_review_comments(self, owner: str, repo: str, number: int) -> list[ReviewComment]:
        items = self.get_paginated(
            _pulls(owner, repo, number) + "/comments",
            what=f"review comments of {owner}/{repo}#{number}",
        )
        return [ReviewComment.from_json(item) for item in items]

    # -- generic ------------------------------------------------------------------------------

    def url(self, path: str, params: Mapping[str, str | int] | None = None) -> str:
        url = path if path.startswith(("http://", "https://")) else self.api_url + path
        if params:
            url += ("&" if "?" in url else "?") + urlencode(sorted(params.items()))
        return url

    def get_json(
        self,
        path: str,
        params: Mapping[str, str | int] | None = None,
        *,
        what: str | None = None,
    ) -> Any:
        url = self.url(path, params)
        return _parse_json(self._get(url, JSON_MEDIA_TYPE, what or path).body, url)

    def get_text(self, path: str, *, accept: str, what: str | None = None) -> str:
        return self._get(self.url(path), accept, what or path).body

    def get_paginated(
        self,
        path: str,
        params: Mapping[str, str | int] | None = None,
        *,
        what: str | None = None,
        max_items: int = 100_000,
        total: int | None = None,
    ) -> list[Any]:
        """All items of a list endpoint, following ``Link: rel="next"`` (``per_page=100``)."""
        return list(self.iter_paginated(path, params, what=what, max_items=max_items, total=total))

    def iter_paginated(
        self,
        path: str,
        params: Mapping[str, str | int] | None = None,
        *,
        what: str | None = None,
        max_items: int = 100_000,
        total: int | None = None,
    ) -> Iterator[Any]:
        label = what or path
        url: str | None = self.url(path, {**(params or {}), "per_page": PER_PAGE})
        max_pages = max(1, -(-max_items // PER_PAGE))
        seen: set[str] = set()
        count = 0
        for page in range(1, max_pages + 1):
            if url is None:
                return
            seen.add(url)
            response = self._get(url, JSON_MEDIA_TYPE, label)
            items = _parse_json(response.body, url)
            if not isinstance(items, list):
                raise GitHubError(
                    f"{label}: expected a list from {url}, got {type(items).__name__}"
                )
            for item in items:
                if count >= max_items:
                    return
                count += 1
                yield item
            if self.progress is not None:
                self.progress(Progress(label, page, count, total))
            url = _next_link(response.link)
            if url is not None:
                if not self._same_origin(url):
                    raise GitHubError(f"{label}: refusing to follow a next-page link to {url}")
                if url in seen:
                    logger.warning("%s: next-page link loops back to %s; stopping", label, url)
                    return
        if url is not None:
            logger.warning("%s: stopped after %d pages (%d items)", label, max_pages, count)

    # -- the request loop ---------------------------------------------------------------------

    def _same_origin(self, url: str) -> bool:
        try:
            a, b = urlsplit(url), urlsplit(self.api_url)
        except ValueError:
            return False
        return (a.scheme, a.netloc) == (b.scheme, b.netloc)

    def _get(self, url: str, accept: str, what: str) -> _Response:
        try:
            return self._fetch(url, accept, what)
        except GitHubError as exc:
            if self._token is not None and self._token.reveal() in exc.message:
                exc.message = exc.message.replace(self._token.reveal(), "<token hidden>")
                exc.args = (exc.message,)
            raise

    def _fetch(self, url: str, accept: str, what: str) -> _Response:
        if not self._same_origin(url):  # the token goes only to the configured API
            raise GitHubError(f"{what}: refusing to fetch {url}, which is not under {self.api_url}")
        cached = self._cache_read(url, accept)
        if self.offline:
            if cached is None:
                raise NotInCache(
                    f"offline: {what} is not in the cache ({url}, Accept: {accept}; "
                    f"cache {self.cache_dir}); run once without --offline to fetch it",
                    url=url,
                )
            logger.debug("offline: %s from the cache", url)
            return _Response(cached.body, cached.link, from_cache=True)

        headers = {"Accept": accept}
        if cached is not None:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token.reveal()}"

        s = self._settings
        attempts = s.max_retries + 1
        last_problem = ""
        for attempt in range(attempts):
            final = attempt == attempts - 1
            logger.debug("GET %s (Accept: %s, attempt %d)", url, accept, attempt + 1)
            try:
                response = self._http.get(url, headers=headers)
            except httpx.TimeoutException as exc:
                last_problem = f"timed out after {s.timeout:g} s"
                if final:
                    raise GitHubTimeout(
                        f"{what}: GitHub did not answer within {s.timeout:g} s, "
                        f"{attempts} times ({url}); try again later or raise the timeout",
                        url=url,
                    ) from exc
                self._backoff(attempt, url, last_problem)
                continue
            except httpx.TransportError as exc:
                last_problem = _describe_transport_error(exc)
                if final:
                    raise NetworkError(
                        f"{what}: cannot reach {s.api_url}: {last_problem}; check the network "
                        "connection and GITHUB_API_URL, or use --offline with a filled cache",
                        url=url,
                    ) from exc
                self._backoff(attempt, url, last_problem)
                continue

            status = response.status_code
            if status == 304 and cached is not None:
                logger.debug("304 not modified: %s", url)
                return _Response(cached.body, cached.link, from_cache=True)
            if 200 <= status < 300:
                body = response.text
                link = response.headers.get("link")
                self._cache_write(url, accept, response, body, link)
                return _Response(body, link)
            if status in (403, 429):
                wait = self._rate_limit_wait(response)
                if wait is not None:
                    reset_at = self._reset_at(response)
                    if wait > s.max_rate_limit_wait or final:
                        raise RateLimited(
                            self._rate_limit_message(what, url, reset_at, wait),
                            url=url,
                            status=status,
                            reset_at=reset_at,
                        )
                    logger.warning(
                        "GitHub rate limit reached; waiting %.0f s before retrying %s", wait, url
                    )
                    self._sleep(wait)
                    continue
            if status >= 500:
                last_problem = f"HTTP {status}"
                if final:
                    raise ServerError(
                        f"{what}: GitHub answered {status} {response.reason_phrase} "
                        f"{attempts} times ({url}); try again later",
                        url=url,
                        status=status,
                    )
                self._backoff(attempt, url, last_problem)
                continue
            raise self._client_error(response, url, what)
        raise GitHubError(f"{what}: gave up after {attempts} attempts ({last_problem})", url=url)

    def _backoff(self, attempt: int, url: str, problem: str) -> None:
        s = self._settings
        delay = min(s.backoff_max, s.backoff_base * (2**attempt))
        logger.warning("%s: %s; retrying in %.1f s", url, problem, delay)
        self._sleep(delay)

    def _rate_limit_wait(self, response: httpx.Response) -> float | None:
        """Seconds to wait when this 403/429 is a rate limit, None when it is not one."""
        retry_after = response.headers.get("retry-after")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return self._settings.backoff_base
        remaining = response.headers.get("x-ratelimit-remaining")
        if remaining == "0":
            reset = response.headers.get("x-ratelimit-reset")
            try:
                return max(0.0, float(reset) - self._clock()) + 1.0 if reset else 60.0
            except ValueError:
                return 60.0
        if response.status_code == 429 or _mentions_rate_limit(response):
            return self._settings.backoff_base * 60  # secondary limit without a hint: a minute
        return None

    def _reset_at(self, response: httpx.Response) -> datetime | None:
        reset = response.headers.get("x-ratelimit-reset")
        if reset:
            try:
                return datetime.fromtimestamp(float(reset), tz=UTC)
            except (ValueError, OverflowError, OSError):
                return None
        retry_after = response.headers.get("retry-after")
        if retry_after:
            try:
                return datetime.fromtimestamp(self._clock() + float(retry_after), tz=UTC)
            except (ValueError, OverflowError, OSError):
                return None
        return None

    def _rate_limit_message(
        self, what: str, url: str, reset_at: datetime | None, wait: float
    ) -> str:
        when = (
            f"it resets at {reset_at:%Y-%m-%d %H:%M:%S} UTC, in {_duration(wait)}"
            if reset_at
            else f"retry in {_duration(wait)}"
        )
        hint = "" if self.authenticated else "; set GITHUB_TOKEN or GH_TOKEN for a higher limit"
        return f"{what}: GitHub API rate limit exceeded ({url}); {when}{hint}"

    def _client_error(self, response: httpx.Response, url: str, what: str) -> GitHubHTTPError:
        status = response.status_code
        detail = _github_message(response)
        if status == 404:
            private = "check the owner, repository and number" + (
                "" if self.authenticated else "; a private repository needs GITHUB_TOKEN"
            )
            return NotFound(f"{what} not found ({url}); {private}", url=url, status=404)
        if status == 401:
            source = self._settings.token_variable or "the token"
            return BadCredentials(
                f"{what}: GitHub rejected the credentials (401 bad credentials) from {source}; "
                "check or renew the token, or unset it to read public repositories anonymously",
                url=url,
                status=401,
            )
        if status == 406 and "too_large" in response.text:
            return DiffTooLarge(
                f"{what}: GitHub will not produce this diff, it is too large ({detail}); "
                "use the files endpoint instead",
                url=url,
                status=406,
            )
        if status == 403:
            return Forbidden(
                f"{what}: forbidden (403: {detail}) at {url}; the token may lack access",
                url=url,
                status=403,
            )
        return GitHubHTTPError(
            f"{what}: GitHub answered {status} ({detail}) at {url}", url=url, status=status
        )

    # -- the cache ----------------------------------------------------------------------------

    def _cache_path(self, url: str, accept: str) -> Path | None:
        if self.cache_dir is None:
            return None
        key = hashlib.sha256(f"{url}\n{accept}".encode()).hexdigest()
        return self.cache_dir / key[:2] / f"{key}.json"

    def _cache_read(self, url: str, accept: str) -> _Cached | None:
        path = self._cache_path(url, accept)
        if path is None or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text("utf-8"))
            if data.get("format") != CACHE_FORMAT or data.get("url") != url:
                return None
            return _Cached(
                url=data["url"],
                accept=data["accept"],
                etag=data.get("etag"),
                last_modified=data.get("last_modified"),
                link=data.get("link"),
                body=data["body"],
            )
        except (OSError, ValueError, KeyError, TypeError):
            logger.warning("ignoring an unreadable cache entry %s", path)
            return None

    def _cache_write(
        self, url: str, accept: str, response: httpx.Response, body: str, link: str | None
    ) -> None:
        path = self._cache_path(url, accept)
        if path is None:
            return
        entry = {
            "format": CACHE_FORMAT,
            "url": url,
            "accept": accept,
            "etag": response.headers.get("etag"),
            "last_modified": response.headers.get("last-modified"),
            "link": link,
            "body": body,
        }
        data = json.dumps(entry, ensure_ascii=False, indent=1) + "\n"
        if self._token is not None and self._token.reveal() in data:
            logger.warning("not caching %s: the response contains the token", url)
            return
        atomic_write(path, data.encode("utf-8"))


def _pulls(owner: str, repo: str, number: int) -> str:
    for part, label in ((owner, "owner"), (repo, "repository")):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", part) or part in (".", ".."):
            raise GitHubError(f"invalid GitHub {label} name {part!r}")
    if int(number) < 1:
        raise GitHubError(f"invalid pull request number {number!r}")
    return f"/repos/{owner}/{repo}/pulls/{int(number)}"


def _parse_json(body: str, url: str) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise GitHubError(f"GitHub sent something that is not JSON for {url}: {exc}") from None


def _github_message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.reason_phrase or f"HTTP {response.status_code}"
    if isinstance(data, Mapping) and data.get("message"):
        return str(data["message"])[:300]
    return response.reason_phrase or f"HTTP {response.status_code}"


def _mentions_rate_limit(response: httpx.Response) -> bool:
    return "rate limit" in _github_message(response).lower()


def _describe_transport_error(exc: httpx.TransportError) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"

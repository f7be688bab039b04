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

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

if TYPE_CHECKING:
    # httpx takes a tenth of a second to import: the methods that talk to GitHub import it, so
    # that commands importing this module for its helpers (every `kb verify`) do not pay it.
    import httpx

from generator.files import atomic_write

__all__ = [
    "DEFAULT_API_URL",
    "DEFAULT_COMMAND_DEADLINE",
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
    "LimitReached",
    "MalformedResponse",
    "NetworkError",
    "NotFound",
    "NotInCache",
    "Progress",
    "PullChanges",
    "PullFile",
    "PullRequest",
    "RateLimited",
    "ResponseTooLarge",
    "Review",
    "ReviewComment",
    "ServerError",
    "default_cache_dir",
    "scrub_tokens",
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
DEFAULT_REQUEST_DEADLINE = 120.0  # seconds for one request, retries and waits included
DEFAULT_COMMAND_DEADLINE = 600.0  # seconds for everything one client (one command) asks
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024  # GitHub's own diffs and pages stay far below this
ERROR_BODY_BYTES = 64 * 1024  # an error answer is read only for its message
REDIRECTS = (301, 302, 303, 307, 308)
HIDDEN = "<token hidden>"

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


class MalformedResponse(GitHubError):
    """GitHub (or whatever answered in its place) sent something of the wrong shape or type."""


class ResponseTooLarge(GitHubError):
    """A response body was larger than the client reads (``max_body_bytes``)."""


class LimitReached(GitHubError):
    """A cap on this command's requests, pages, waiting or time was reached."""


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
    def from_json(
        cls, owner: str, repo: str, data: object, what: str = "pull request"
    ) -> PullRequest:
        """Raises :class:`MalformedResponse` when ``data`` is not a pull request's JSON."""
        f = _Fields(data, what)
        base, head = f.obj("base"), f.obj("head")
        merged_at = f.opt_text("merged_at")
        return cls(
            owner=owner,
            repo=repo,
            number=f.number("number", required=True),
            title=f.text("title"),
            body=f.text("body"),
            state=f.text("state"),
            merged=f.flag("merged") or bool(merged_at),
            merged_at=merged_at,
            draft=f.flag("draft"),
            author=f.login("user"),
            created_at=f.opt_text("created_at"),
            base_ref=base.text("ref"),
            base_sha=base.text("sha"),
            head_ref=head.text("ref"),
            head_sha=head.text("sha"),
            html_url=f.text("html_url"),
            additions=f.number("additions"),
            deletions=f.number("deletions"),
            changed_files=f.number("changed_files"),
            commits=f.number("commits"),
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
    def from_json(cls, data: object, what: str = "a changed file") -> PullFile:
        f = _Fields(data, what)
        return cls(
            filename=f.text("filename", required=True),
            status=f.text("status") or "modified",
            additions=f.number("additions"),
            deletions=f.number("deletions"),
            changes=f.number("changes"),
            patch=f.opt_text("patch"),
            previous_filename=f.opt_text("previous_filename"),
            sha=f.opt_text("sha"),
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
    def from_json(cls, data: object, what: str = "a review") -> Review:
        f = _Fields(data, what)
        return cls(
            id=f.number("id"),
            author=f.login("user"),
            state=f.text("state"),
            body=f.text("body"),
            commit_id=f.opt_text("commit_id"),
            submitted_at=f.opt_text("submitted_at"),
            html_url=f.text("html_url"),
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
    def from_json(cls, data: object, what: str = "a review comment") -> ReviewComment:
        f = _Fields(data, what)
        return cls(
            id=f.number("id"),
            author=f.login("user"),
            body=f.text("body"),
            path=f.text("path"),
            line=f.opt_number("line"),
            start_line=f.opt_number("start_line"),
            side=f.opt_text("side"),
            original_line=f.opt_number("original_line"),
            commit_id=f.opt_text("commit_id"),
            original_commit_id=f.opt_text("original_commit_id"),
            diff_hunk=f.text("diff_hunk"),
            in_reply_to_id=f.opt_number("in_reply_to_id"),
            review_id=f.opt_number("pull_request_review_id"),
            created_at=f.opt_text("created_at"),
            html_url=f.text("html_url"),
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


class _Fields:
    """Typed access to one JSON object from GitHub: a field of the wrong type is a clear
    :class:`MalformedResponse` naming it, never a ``TypeError`` from deep inside a page builder.
    A missing or null field is the type's empty value unless ``required``."""

    def __init__(self, data: object, what: str) -> None:
        if not isinstance(data, Mapping):
            raise MalformedResponse(
                f"{what}: GitHub sent {_json_kind(data)} where a JSON object was expected"
            )
        self.data = data
        self.what = what

    def _wrong(self, key: str, expected: str, value: object) -> MalformedResponse:
        return MalformedResponse(
            f"{self.what}: GitHub sent {_json_kind(value)} for field {key!r}, expected {expected}"
        )

    def _get(self, key: str, required: bool) -> object:
        value = self.data.get(key)
        if value is None and required:
            raise MalformedResponse(f"{self.what}: GitHub's answer has no field {key!r}")
        return value

    def opt_text(self, key: str) -> str | None:
        value = self._get(key, False)
        if value is None or isinstance(value, str):
            return value
        raise self._wrong(key, "a string", value)

    def text(self, key: str, *, required: bool = False) -> str:
        value = self._get(key, required)
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        raise self._wrong(key, "a string", value)

    def opt_number(self, key: str) -> int | None:
        value = self._get(key, False)
        if value is None:
            return None
        # bool is an int to Python, and json reads 1e400 as an infinite float: neither counts.
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        raise self._wrong(key, "a whole number", value)

    def number(self, key: str, *, required: bool = False) -> int:
        value = self.opt_number(key)
        if value is None:
            self._get(key, required)
            return 0
        return value

    def flag(self, key: str) -> bool:
        value = self._get(key, False)
        if value is None or isinstance(value, bool):
            return bool(value)
        raise self._wrong(key, "true or false", value)

    def obj(self, key: str) -> _Fields:
        value = self._get(key, False)
        if value is not None and not isinstance(value, Mapping):
            raise self._wrong(key, "an object", value)
        return _Fields(value or {}, f"{self.what}, field {key!r}")

    def login(self, key: str) -> str:
        return self.obj(key).text("login")


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


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


MIN_SCRUBBED_TOKEN = 8  # shorter values are not real tokens, and hiding them would garble text


def scrub_tokens(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with the value of every token variable (``GITHUB_TOKEN``, ``GH_TOKEN``) replaced
    by ``<token hidden>``: for anything written to disk, whatever the text came from (a server
    echoing the token, a file of the upstream, a description someone pasted it into)."""
    env = os.environ if environ is None else environ
    for name in TOKEN_VARIABLES:
        value = (env.get(name) or "").strip()
        if len(value) >= MIN_SCRUBBED_TOKEN and value in text:
            text = text.replace(value, HIDDEN)
    return text


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


@dataclass
class _Answer:
    """What one HTTP exchange brought back, the body already capped."""

    status: int
    reason: str
    headers: httpx.Headers
    content: bytes
    encoding: str | None

    def text(self) -> str:
        try:
            return self.content.decode(self.encoding or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", errors="replace")


@dataclass
class _RequestBudget:
    """What one request has used: it started at ``seconds_spent == started``."""

    started: float
    waited: float = 0.0
    command_bound: bool = False  # the command's deadline, not the request's, was the nearer


class _DeadlinePassed(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {seconds:g} s")
        self.seconds = seconds


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
    request_deadline: float
    command_deadline: float
    max_request_wait: float
    max_command_wait: float
    max_requests: int
    max_pages: int
    max_body_bytes: int
    max_redirects: int
    token_variable: str | None = field(default=None)


class GitHubClient:
    """The GitHub REST API, read only.

    ``sleep`` and ``clock`` are injectable (tests pass fakes so nothing waits); ``transport`` is
    httpx's, for tests that replace the network altogether. Use as a context manager or call
    :meth:`close`.

    Whatever the server does, what one client (one command) costs is bounded: ``timeout`` is per
    read, ``request_deadline`` per request (every attempt, wait and byte of it),
    ``command_deadline`` for the client's whole life; ``max_request_wait`` and
    ``max_command_wait`` bound the seconds spent sleeping (rate limits, backoff);
    ``max_requests`` the HTTP requests sent, ``max_pages`` the pages of one listing,
    ``max_body_bytes`` what is read of one body and ``max_redirects`` the same-origin redirects
    followed (a redirect to another origin is refused). Time spent sleeping is counted as the
    seconds asked of ``sleep``, so a fake ``sleep`` keeps the accounting of a real one.
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
        request_deadline: float = DEFAULT_REQUEST_DEADLINE,
        command_deadline: float = DEFAULT_COMMAND_DEADLINE,
        max_request_wait: float = 90.0,
        max_command_wait: float = 180.0,
        max_requests: int = 300,
        max_pages: int = 50,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_redirects: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        progress: ProgressCallback | None = None,
        transport: httpx.BaseTransport | None = None,
        token_variable: str | None = None,
    ) -> None:
        import httpx

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
            request_deadline=request_deadline,
            command_deadline=command_deadline,
            max_request_wait=max_request_wait,
            max_command_wait=max_command_wait,
            max_requests=max(1, max_requests),
            max_pages=max(1, max_pages),
            max_body_bytes=max(1, max_body_bytes),
            max_redirects=max(0, max_redirects),
            token_variable=token_variable if token else None,
        )
        self._token = _Secret(token) if token else None
        self._sleep = sleep
        self._clock = clock
        self.progress = progress
        self.requests_sent = 0  # HTTP requests, every attempt and redirect counted
        self.seconds_spent = 0.0  # waiting for answers (measured) plus sleeping (as asked)
        self.seconds_slept = 0.0
        self._cached_paths: list[Path] = []  # written by this client, in order
        self._http = httpx.Client(
            headers={"User-Agent": USER_AGENT, "X-GitHub-Api-Version": API_VERSION},
            timeout=timeout,
            # Redirects are followed by hand: only within the API's origin, and only a few.
            follow_redirects=False,
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
        what = f"pull request {owner}/{repo}#{number}"
        with self._uncached_if_malformed():
            data = self.get_json(_pulls(owner, repo, number), what=what)
            return PullRequest.from_json(owner, repo, data, what)

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
        mark = len(self._cached_paths)
        items = self.get_paginated(
            _pulls(owner, repo, number) + "/files",
            what=f"files of {owner}/{repo}#{number}",
            max_items=max_files,
            total=total,
        )
        with self._uncached_if_malformed(mark):
            return [PullFile.from_json(item, f"files of {owner}/{repo}#{number}") for item in items]

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
        except (DiffTooLarge, ResponseTooLarge) as exc:
            # Too large for GitHub or for this client: the files' patches are read page by page.
            logger.info("%s; rebuilding it from %d files' patches", exc, len(files))
            return PullChanges(files, diff_from_files(files), "files", truncated)
        return PullChanges(files, diff, "diff", truncated)

    def pull_reviews(self, owner: str, repo: str, number: int) -> list[Review]:
        mark = len(self._cached_paths)
        items = self.get_paginated(
            _pulls(owner, repo, number) + "/reviews", what=f"reviews of {owner}/{repo}#{number}"
        )
        with self._uncached_if_malformed(mark):
            return [Review.from_json(item, f"reviews of {owner}/{repo}#{number}") for item in items]

    def pull_review_comments(self, owner: str, repo: str, number: int) -> list[ReviewComment]:
        mark = len(self._cached_paths)
        items = self.get_paginated(
            _pulls(owner, repo, number) + "/comments",
            what=f"review comments of {owner}/{repo}#{number}",
        )
        what = f"review comments of {owner}/{repo}#{number}"
        with self._uncached_if_malformed(mark):
            return [ReviewComment.from_json(item, what) for item in items]

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
        with self._uncached_if_malformed():
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
        with self._uncached_if_malformed():
            pages = self.iter_paginated(path, params, what=what, max_items=max_items, total=total)
            return list(pages)

    def iter_paginated(
        self,
        path: str,
        params: Mapping[str, str | int] | None = None,
        *,
        what: str | None = None,
        max_items: int = 100_000,
        total: int | None = None,
    ) -> Iterator[Any]:
        """Items of a list endpoint, following ``Link: rel="next"`` (``per_page=100``).

        Stops quietly after ``max_items`` (the caller's own cap) or when a next link loops back;
        raises :class:`LimitReached` when GitHub still offers a next page after ``max_pages``.
        """
        label = what or path
        url: str | None = self.url(path, {**(params or {}), "per_page": PER_PAGE})
        max_pages = self._settings.max_pages
        seen: set[str] = set()
        count = 0
        page = 0
        while url is not None:
            if page >= max_pages:
                raise LimitReached(
                    f"{label}: GitHub still offers a next page after {max_pages} pages "
                    f"({count:,} items); stopped there, since no pull request needs more (the "
                    f"cap on pages per listing)",
                    url=url,
                )
            page += 1
            seen.add(url)
            response = self._get(url, JSON_MEDIA_TYPE, label)
            items = _parse_json(response.body, url)
            if not isinstance(items, list):
                raise MalformedResponse(
                    f"{label}: GitHub sent {_json_kind(items)} where a list was expected ({url})",
                    url=url,
                )
            for item in items:
                if count >= max_items:
                    return
                count += 1
                yield item
            if self.progress is not None:
                self.progress(Progress(label, page, count, total))
            if count >= max_items:
                return
            url = _next_link(response.link)
            if url is not None:
                if not self._same_origin(url):
                    raise GitHubError(f"{label}: refusing to follow a next-page link to {url}")
                if url in seen:
                    logger.warning("%s: next-page link loops back to %s; stopping", label, url)
                    return

    # -- the request loop ---------------------------------------------------------------------

    def _same_origin(self, url: str) -> bool:
        try:
            a, b = urlsplit(url), urlsplit(self.api_url)
        except ValueError:
            return False
        return (a.scheme, a.netloc) == (b.scheme, b.netloc)

    def scrub(self, text: str) -> str:
        """``text`` with the token (if any) replaced by ``<token hidden>``."""
        if self._token is not None and self._token.reveal() in text:
            return text.replace(self._token.reveal(), HIDDEN)
        return text

    def _get(self, url: str, accept: str, what: str) -> _Response:
        try:
            return self._fetch(url, accept, what)
        except GitHubError as exc:
            # The message may quote what the server said, and a server may echo the token.
            exc.message = self.scrub(exc.message)
            exc.args = (exc.message,)
            exc.url = self.scrub(exc.url) if exc.url else exc.url
            raise

    def _fetch(self, url: str, accept: str, what: str) -> _Response:
        import httpx

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
        budget = _RequestBudget(started=self.seconds_spent)
        target = url
        redirects = 0
        attempt = 0
        last_problem = ""
        while attempt < attempts:
            final = attempt == attempts - 1
            limit = self._time_left(budget, what, url)
            logger.debug("GET %s (Accept: %s, attempt %d)", target, accept, attempt + 1)
            try:
                answer = self._send(target, headers, limit, what)
            except _DeadlinePassed as exc:
                raise GitHubTimeout(
                    f"{what}: no complete answer within {exc.seconds:.1f} s ({url}), "
                    f"{self._deadline_name(budget)}; the server is too slow or stalls, "
                    "try again later",
                    url=url,
                ) from None
            except httpx.TimeoutException as exc:
                last_problem = f"timed out after {s.timeout:g} s"
                if final or not self._may_wait(self._delay(attempt), budget):
                    raise GitHubTimeout(
                        f"{what}: GitHub did not answer within {s.timeout:g} s, "
                        f"{attempt + 1} times ({url}); try again later or raise the timeout",
                        url=url,
                    ) from exc
                self._backoff(attempt, budget, url, last_problem)
                attempt += 1
                continue
            except httpx.TransportError as exc:
                last_problem = self.scrub(_describe_transport_error(exc))
                if final or not self._may_wait(self._delay(attempt), budget):
                    raise NetworkError(
                        f"{what}: cannot reach {s.api_url}: {last_problem}; check the network "
                        "connection and GITHUB_API_URL, or use --offline with a filled cache",
                        url=url,
                    ) from exc
                self._backoff(attempt, budget, url, last_problem)
                attempt += 1
                continue
            except httpx.HTTPError as exc:  # such as a body that does not decompress
                raise MalformedResponse(
                    f"{what}: GitHub's answer could not be read ({type(exc).__name__}: "
                    f"{self.scrub(str(exc))[:200]}) at {url}",
                    url=url,
                ) from None

            status = answer.status
            if status in REDIRECTS:
                target = self._redirect(answer, target, what, redirects)
                redirects += 1
                continue
            if status == 304 and cached is not None:
                logger.debug("304 not modified: %s", url)
                return _Response(cached.body, cached.link, from_cache=True)
            if 200 <= status < 300:
                body, link = self.scrub(answer.text()), answer.headers.get("link")
                if link is not None:
                    link = self.scrub(link)
                if body != answer.text():
                    logger.warning("not caching %s: the response contains the token", url)
                else:
                    self._cache_write(url, accept, answer.headers, body, link)
                return _Response(body, link)
            if status in (403, 429):
                wait = self._rate_limit_wait(answer)
                if wait is not None:
                    reset_at = self._reset_at(answer)
                    if wait > s.max_rate_limit_wait or final or not self._may_wait(wait, budget):
                        raise RateLimited(
                            self._rate_limit_message(what, url, reset_at, wait, attempt + 1),
                            url=url,
                            status=status,
                            reset_at=reset_at,
                        )
                    logger.warning(
                        "GitHub rate limit reached; waiting %.0f s before retrying %s", wait, url
                    )
                    self._wait(wait, budget)
                    attempt += 1
                    continue
            if status >= 500:
                last_problem = f"HTTP {status}"
                if final or not self._may_wait(self._delay(attempt), budget):
                    raise ServerError(
                        f"{what}: GitHub answered {status} {answer.reason} "
                        f"{attempt + 1} times ({url}); try again later",
                        url=url,
                        status=status,
                    )
                self._backoff(attempt, budget, url, last_problem)
                attempt += 1
                continue
            raise self._client_error(answer, url, what)
        raise GitHubError(f"{what}: gave up after {attempts} attempts ({last_problem})", url=url)

    def _send(self, url: str, headers: Mapping[str, str], limit: float, what: str) -> _Answer:
        """One HTTP request, its body streamed and capped, on a worker thread so that the whole
        exchange (a server trickling headers or body a byte at a time included) ends within
        ``limit`` seconds; raises :class:`_DeadlinePassed` when it does not."""
        import httpx

        s = self._settings
        if self.requests_sent >= s.max_requests:
            raise LimitReached(
                f"{what}: this command already sent {s.max_requests} requests to GitHub, the "
                f"cap per command ({url}); something keeps asking for more, such as an endless "
                "listing",
                url=url,
            )
        self.requests_sent += 1
        started = time.monotonic()
        deadline = started + limit
        outcome: list[Any] = []
        stop = threading.Event()
        # A read never outlasts the deadline by much, and the deadline (the join below) is the
        # one that speaks when it is the nearer: its message names the right limit.
        timeout = httpx.Timeout(min(s.timeout, limit + 1.0))

        def run() -> None:
            try:
                outcome.append(self._exchange(url, headers, timeout, deadline, stop, what))
            except BaseException as exc:  # handed to the waiting thread, which raises it
                outcome.append(exc)

        worker = threading.Thread(target=run, name="github-request", daemon=True)
        worker.start()
        worker.join(limit)
        self.seconds_spent += time.monotonic() - started
        if not outcome:
            # The worker stops at its next chunk or read timeout; nobody waits for it.
            stop.set()
            raise _DeadlinePassed(limit)
        result = outcome[0]
        if isinstance(result, _DeadlinePassed):
            raise _DeadlinePassed(limit)
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, _Answer)
        return result

    def _exchange(
        self,
        url: str,
        headers: Mapping[str, str],
        timeout: httpx.Timeout,
        deadline: float,
        stop: threading.Event,
        what: str,
    ) -> _Answer:
        s = self._settings
        with self._http.stream("GET", url, headers=dict(headers), timeout=timeout) as response:
            status = response.status_code
            if status in REDIRECTS or status == 304:
                return _Answer(status, response.reason_phrase, response.headers, b"", None)
            # An error answer is read only for its message; a success up to the cap.
            cap = s.max_body_bytes if 200 <= status < 300 else ERROR_BODY_BYTES
            declared = response.headers.get("content-length", "")
            if 200 <= status < 300 and declared.isdigit() and int(declared) > cap:
                raise ResponseTooLarge(
                    f"{what}: GitHub announced {_size(int(declared))}, more than the "
                    f"{_size(cap)} the client reads of one answer ({url}); nothing was read "
                    "or cached",
                    url=url,
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():  # decompressed: a gzip bomb is capped too
                if stop.is_set() or time.monotonic() > deadline:
                    raise _DeadlinePassed(0.0)  # nobody is waiting any more: just stop reading
                size += len(chunk)
                if size > cap:
                    if 200 <= status < 300:
                        raise ResponseTooLarge(
                            f"{what}: GitHub's answer is larger than the {_size(cap)} the "
                            f"client reads of one answer ({url}); stopped reading there, "
                            "nothing was cached",
                            url=url,
                        )
                    chunks.append(chunk[: cap - (size - len(chunk))])
                    break
                chunks.append(chunk)
            return _Answer(
                status,
                response.reason_phrase,
                response.headers,
                b"".join(chunks),
                response.charset_encoding,
            )

    def _redirect(self, answer: _Answer, current: str, what: str, followed: int) -> str:
        """Where a same-origin redirect leads; a redirect elsewhere, or too many, is an error."""
        import httpx

        location = answer.headers.get("location")
        if not location:
            raise MalformedResponse(
                f"{what}: GitHub answered {answer.status} without a Location ({current})",
                url=current,
            )
        try:
            target = str(httpx.URL(current).join(location))
        except (httpx.InvalidURL, ValueError):
            raise MalformedResponse(
                f"{what}: GitHub redirected to an invalid address {location[:200]!r} ({current})",
                url=current,
            ) from None
        if not self._same_origin(target):
            raise GitHubError(
                f"{what}: refusing to follow a redirect from {current} to {target}, which is not "
                f"under {self.api_url} (the token and the answer must both stay with the API); "
                "check GITHUB_API_URL",
                url=current,
            )
        if followed >= self._settings.max_redirects:
            raise GitHubError(
                f"{what}: more than {self._settings.max_redirects} redirects from {current}; "
                "the server redirects in a loop",
                url=current,
            )
        logger.debug("redirected from %s to %s", current, target)
        return target

    # -- time and waiting ---------------------------------------------------------------------

    def _time_left(self, budget: _RequestBudget, what: str, url: str) -> float:
        """Seconds this request may still take; raises when the command's time is used up."""
        s = self._settings
        command_left = s.command_deadline - self.seconds_spent
        if command_left <= 0:
            raise LimitReached(
                f"{what}: this command has spent {self.seconds_spent:.0f} s on GitHub, its limit "
                f"is {s.command_deadline:g} s ({url}); try again later or allow more time",
                url=url,
            )
        request_left = s.request_deadline - (self.seconds_spent - budget.started)
        if request_left <= 0:
            raise GitHubTimeout(
                f"{what}: no answer within {s.request_deadline:g} s, the limit for one request "
                f"({url}); try again later",
                url=url,
            )
        budget.command_bound = command_left < request_left
        return min(command_left, request_left)

    def _deadline_name(self, budget: _RequestBudget) -> str:
        s = self._settings
        if budget.command_bound:
            return f"the rest of the {s.command_deadline:g} s this command may spend on GitHub"
        return f"the limit for one request is {s.request_deadline:g} s"

    def _delay(self, attempt: int) -> float:
        s = self._settings
        return min(s.backoff_max, s.backoff_base * (2**attempt))

    def _may_wait(self, seconds: float, budget: _RequestBudget) -> bool:
        """Whether sleeping ``seconds`` stays within the waiting and time this request and this
        command may still use (a retry after it needs time too)."""
        s = self._settings
        return (
            math.isfinite(seconds)
            and budget.waited + seconds <= s.max_request_wait
            and self.seconds_slept + seconds <= s.max_command_wait
            and self.seconds_spent - budget.started + seconds < s.request_deadline
            and self.seconds_spent + seconds < s.command_deadline
        )

    def _wait(self, seconds: float, budget: _RequestBudget) -> None:
        budget.waited += seconds
        self.seconds_slept += seconds
        self.seconds_spent += seconds
        self._sleep(seconds)

    def _backoff(self, attempt: int, budget: _RequestBudget, url: str, problem: str) -> None:
        delay = self._delay(attempt)
        logger.warning("%s: %s; retrying in %.1f s", url, problem, delay)
        self._wait(delay, budget)

    def _rate_limit_wait(self, response: _Answer) -> float | None:
        """Seconds to wait when this 403/429 is a rate limit, None when it is not one.

        A header that is not a usable number of seconds (``inf``, ``1e400``, a word) counts as
        no hint, and a limit without a hint waits a minute (GitHub's advice for secondary
        limits), within the waiting the request and the command may still do."""
        retry_after = _seconds(response.headers.get("retry-after"))
        if retry_after is not None:
            return retry_after
        if response.headers.get("x-ratelimit-remaining") == "0":
            reset = _seconds(response.headers.get("x-ratelimit-reset"))
            if reset is None:
                return 60.0
            return max(0.0, reset - self._clock()) + 1.0
        if (
            response.status == 429
            or "retry-after" in response.headers
            or _mentions_rate_limit(response)
        ):
            return self._settings.backoff_base * 60  # secondary limit without a hint: a minute
        return None

    def _reset_at(self, response: _Answer) -> datetime | None:
        reset = _seconds(response.headers.get("x-ratelimit-reset"))
        if reset is None:
            retry_after = _seconds(response.headers.get("retry-after"))
            if retry_after is None:
                return None
            reset = self._clock() + retry_after
        try:
            return datetime.fromtimestamp(reset, tz=UTC)
        except (ValueError, OverflowError, OSError):
            return None

    def _rate_limit_message(
        self, what: str, url: str, reset_at: datetime | None, wait: float, attempts: int = 1
    ) -> str:
        when = (
            f"it resets at {reset_at:%Y-%m-%d %H:%M:%S} UTC, in {_duration(wait)}"
            if reset_at
            else f"retry in {_duration(wait)}"
        )
        times = f", {attempts} times" if attempts > 1 else ""
        hint = "" if self.authenticated else "; set GITHUB_TOKEN or GH_TOKEN for a higher limit"
        return f"{what}: GitHub API rate limit exceeded ({url}{times}); {when}{hint}"

    def _client_error(self, response: _Answer, url: str, what: str) -> GitHubHTTPError:
        status = response.status
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
        if status == 406 and "too_large" in response.text():
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

    @contextlib.contextmanager
    def _uncached_if_malformed(self, mark: int | None = None) -> Iterator[None]:
        """Drop what was cached since ``mark`` (now, by default) if a malformed answer turns up:
        a broken answer must not be served again from the cache."""
        start = len(self._cached_paths) if mark is None else mark
        try:
            yield
        except MalformedResponse:
            for path in self._cached_paths[start:]:
                path.unlink(missing_ok=True)
            del self._cached_paths[start:]
            raise

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
        self, url: str, accept: str, headers: httpx.Headers, body: str, link: str | None
    ) -> None:
        path = self._cache_path(url, accept)
        if path is None:
            return
        entry = {
            "format": CACHE_FORMAT,
            "url": url,
            "accept": accept,
            "etag": headers.get("etag"),
            "last_modified": headers.get("last-modified"),
            "link": link,
            "body": body,
        }
        data = json.dumps(entry, ensure_ascii=False, indent=1) + "\n"
        if self._token is not None and self._token.reveal() in data:
            logger.warning("not caching %s: the response contains the token", url)
            return
        atomic_write(path, data.encode("utf-8"))
        self._cached_paths.append(path)


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
        raise MalformedResponse(
            f"GitHub sent something that is not JSON for {url}: {exc}", url=url
        ) from None
    except RecursionError:
        raise MalformedResponse(
            f"GitHub sent JSON nested too deeply to read for {url}", url=url
        ) from None


def _github_message(response: _Answer) -> str:
    fallback = response.reason or f"HTTP {response.status}"
    try:
        data = json.loads(response.text())
    except (ValueError, RecursionError):
        return fallback
    if isinstance(data, Mapping) and data.get("message"):
        return one_line_excerpt(str(data["message"]))
    return fallback


def one_line_excerpt(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters: a server's words inside a message."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _mentions_rate_limit(response: _Answer) -> bool:
    return "rate limit" in _github_message(response).lower()


def _seconds(value: str | None) -> float | None:
    """A header's number of seconds (or epoch time): finite and not negative, else None."""
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0 or number > 1e11:  # 1e11 s: year 5138
        return None
    return number


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _describe_transport_error(exc: httpx.TransportError) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "an unknown time"
    seconds = max(0, round(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"

"""The GitHub client against a real HTTP server on 127.0.0.1 that replays GitHub-style answers.

The pull request the server describes is built from a real git history made here, so every count,
status and patch it serves is what git computes; nothing touches the internet.
"""

from __future__ import annotations

import io
import logging
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from generator.github.client import (
    DIFF_MEDIA_TYPE,
    BadCredentials,
    DiffTooLarge,
    GitHubClient,
    GitHubError,
    GitHubTimeout,
    NetworkError,
    NotFound,
    NotInCache,
    Progress,
    PullFile,
    RateLimited,
    ServerError,
    default_cache_dir,
    diff_from_files,
    terminal_progress,
    token_from_env,
    web_url_for,
)
from generator.github.replay import ReplayServer, Reply, pull_files_from_git
from generator.upstream.gitbuild import RepoBuilder, run_git

TOKEN = "ghp_S3cretT0kenThatMustNeverLeak0123456789"
OWNER, REPO, NUMBER = "acme", "widgets", 7
PULL = f"/repos/{OWNER}/{REPO}/pulls/{NUMBER}"
NOW = 1_800_000_000.0


# --------------------------------------------------------------------------------------------
# A replaying server

FakeGitHub = ReplayServer  # the name the generator tests' type hints use


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(server: FakeGitHub, tmp_path: Path, **options: Any) -> GitHubClient:
    options.setdefault("cache_dir", tmp_path / "cache")
    options.setdefault("sleep", Sleeps())
    options.setdefault("clock", lambda: NOW)
    options.setdefault("backoff_base", 0.5)
    options.setdefault("timeout", 5.0)
    environ = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": server.url}
    return GitHubClient.from_env(environ, **options)


# --------------------------------------------------------------------------------------------
# A pull request built from real git history


@dataclass
class FixturePR:
    repo: Path
    base: str
    head: str
    files: list[dict[str, Any]]  # GitHub's /files entries, computed by git
    diff: str  # `git diff base head`, which is what the diff media type serves

    @property
    def additions(self) -> int:
        return sum(f["additions"] for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f["deletions"] for f in self.files)

    def pull_json(self, api: str) -> dict[str, Any]:
        return {
            "number": NUMBER,
            "title": "Speed up the widget loader",
            "body": "Closes #3. Thanks @octocat!",
            "state": "closed",
            "merged": True,
            "merged_at": "2025-02-01T10:00:00Z",
            "draft": False,
            "user": {"login": "alice"},
            "created_at": "2025-01-20T09:00:00Z",
            "base": {"ref": "main", "sha": self.base},
            "head": {"ref": "fast-loader", "sha": self.head},
            "html_url": f"https://github.com/{OWNER}/{REPO}/pull/{NUMBER}",
            "url": f"{api}{PULL}",
            "additions": self.additions,
            "deletions": self.deletions,
            "changed_files": len(self.files),
            "commits": 1,
        }


def module_text(i: int, extra: str = "") -> str:
    return (
        f'"""Module {i}."""\n\n\ndef func_{i}(x):\n    return x + {i}\n\n\n'
        f"class Widget{i}:\n    size = {i}\n{extra}"
    )


def fixture_kb(root: Path) -> tuple[Any, FixturePR]:
    """A knowledge base at ``root`` whose upstream ``widgets`` is the fixture PR's repository
    (so the PR's head commit is available locally), for the page generators' tests."""
    from tests.conftest import KB

    kb = KB(root)
    kb.docs.mkdir(parents=True)
    pr = build_fixture_pr(kb.root / "cache" / "widgets")
    kb.upstreams["widgets"] = {
        "url": str(pr.repo),
        "branch": "main",
        "pin": pr.head,
        "prefixes": ["pkg/", "assets/"],
        "web_url": f"https://github.com/{OWNER}/{REPO}",
    }
    kb.write_manifest()
    return kb, pr


def run_generator(kb: Any, server: FakeGitHub, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """``python -m generator ARGS`` in-process, in ``kb``, against the replaying server."""
    from generator.cli import main

    monkeypatch.chdir(kb.root)
    monkeypatch.setenv("GITHUB_API_URL", server.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    return main(list(args))


def build_fixture_pr(root: Path) -> FixturePR:
    repo = RepoBuilder.init(root)
    base_files: dict[str, str | bytes | None] = {
        f"pkg/mod_{i:03d}.py": module_text(i) for i in range(220)
    }
    base_files["assets/logo.bin"] = bytes(range(256)) * 4
    base = repo.commit(base_files, "Base", date="2025-01-01T00:00:00+00:00")
    head_files: dict[str, str | bytes | None] = {}
    for i in range(200):  # modified: one line changed, one added
        head_files[f"pkg/mod_{i:03d}.py"] = module_text(i, f"    weight = {i * 2}\n").replace(
            f"return x + {i}", f"return x * {i}"
        )
    for i in range(200, 210):  # deleted
        head_files[f"pkg/mod_{i:03d}.py"] = None
    for i in range(210, 215):  # renamed, one line added
        head_files[f"pkg/mod_{i:03d}.py"] = None
        head_files[f"pkg/renamed/mod_{i:03d}.py"] = module_text(i, "    renamed = True\n")
    for i in range(30):  # added
        head_files[f"pkg/new/added_{i:02d}.py"] = f"VALUE = {i}\n"
    head_files["assets/logo.bin"] = bytes(reversed(range(256))) * 4  # binary: no patch
    head = repo.commit(head_files, "Speed up the widget loader", date="2025-01-20T09:00:00+00:00")

    files, diff = pull_files_from_git(
        root, base, head, blob_url=f"https://github.com/{OWNER}/{REPO}"
    )
    return FixturePR(root, base, head, files, diff)


@pytest.fixture(scope="module")
def pr(tmp_path_factory: pytest.TempPathFactory) -> FixturePR:
    return build_fixture_pr(tmp_path_factory.mktemp("upstream") / "widgets")


def serve_pr(server: FakeGitHub, pr: FixturePR, *, per_page: int = 100) -> None:
    server.add(PULL, Reply(body=pr.pull_json(server.url), etag='"pull-v1"'))
    server.add(PULL, Reply(body=pr.diff, etag='"diff-v1"'), accept=DIFF_MEDIA_TYPE)
    server.add_list(f"{PULL}/files", pr.files, per_page=per_page, etag="files")


# --------------------------------------------------------------------------------------------
# Pull requests, files, diff


def test_fixture_pr_is_real_git_history(pr: FixturePR) -> None:
    statuses = {f["status"] for f in pr.files}
    assert statuses == {"added", "removed", "modified", "renamed"}
    assert len(pr.files) == 246  # 200 modified + 10 deleted + 5 renamed + 30 added + 1 binary
    binary = next(f for f in pr.files if f["filename"] == "assets/logo.bin")
    assert "patch" not in binary
    stat = run_git(pr.repo, "diff", "-M", "--shortstat", pr.base, pr.head)
    assert f"{pr.additions} insertions(+), {pr.deletions} deletions(-)" in stat


def test_pull_and_files_follow_link_pagination(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    serve_pr(server, pr)
    seen: list[Progress] = []
    with make_client(server, tmp_path, progress=seen.append) as client:
        pull = client.pull(OWNER, REPO, NUMBER)
        files = client.pull_files(OWNER, REPO, NUMBER, total=pull.changed_files)

    assert (pull.number, pull.author, pull.state, pull.merged) == (NUMBER, "alice", "closed", True)
    assert (pull.base_sha, pull.head_sha) == (pr.base, pr.head)
    assert pull.changed_files == len(files) == 246
    assert [f.filename for f in files] == [f["filename"] for f in pr.files]
    assert sum(f.additions for f in files) == pull.additions == pr.additions
    assert sum(f.deletions for f in files) == pull.deletions == pr.deletions
    renamed = [f for f in files if f.status == "renamed"]
    assert len(renamed) == 5
    assert all(f.previous_filename and f.previous_filename.startswith("pkg/mod_") for f in renamed)
    assert next(f for f in files if f.filename == "assets/logo.bin").patch is None
    assert [(p.page, p.items, p.total) for p in seen] == [
        (1, 100, 246),
        (2, 200, 246),
        (3, 246, 246),
    ]
    assert server.paths()[1:] == [
        f"{PULL}/files?per_page=100",
        f"{PULL}/files?per_page=100&page=2",
        f"{PULL}/files?per_page=100&page=3",
    ]
    first = server.requests[0].headers
    assert first["user-agent"].startswith("kb-generator/")
    assert first["authorization"] == f"Bearer {TOKEN}"
    assert first["accept"] == "application/vnd.github+json"


def test_pull_diff_uses_the_diff_media_type(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    serve_pr(server, pr)
    with make_client(server, tmp_path) as client:
        changes = client.pull_changes(OWNER, REPO, NUMBER, pull=client.pull(OWNER, REPO, NUMBER))
    assert changes.source == "diff"
    assert changes.diff == pr.diff
    assert not changes.truncated
    assert changes.files_without_patch == ("assets/logo.bin",)
    assert server.requests[-1].headers["accept"] == DIFF_MEDIA_TYPE


def test_diff_too_large_falls_back_to_the_files(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    serve_pr(server, pr)
    too_large = {
        "message": "Sorry, the diff exceeded the maximum number of files (300). Consider using "
        "'List pull requests files' API or locally cloning the repository instead.",
        "errors": [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
        "status": "406",
    }
    server.add(PULL, Reply(406, too_large), accept=DIFF_MEDIA_TYPE)
    with make_client(server, tmp_path) as client:
        with pytest.raises(DiffTooLarge) as raised:
            client.pull_diff(OWNER, REPO, NUMBER)
        assert "too large" in str(raised.value)
        changes = client.pull_changes(OWNER, REPO, NUMBER)
    assert changes.source == "files"
    assert len(changes.files) == 246
    # The rebuilt diff applies to the base commit (the binary file aside) as git's own would.
    worktree = pr.repo.parent / "apply-check"
    run_git(pr.repo, "worktree", "add", "-q", "--detach", str(worktree), pr.base)
    patch = worktree.parent / "rebuilt.diff"
    patch.write_text(changes.diff, "utf-8")
    run_git(worktree, "apply", "--check", "--exclude=assets/logo.bin", str(patch))
    assert "Binary files a/assets/logo.bin and b/assets/logo.bin differ" in changes.diff
    assert changes.diff.count("\ndiff --git ") + 1 == 246


def test_diff_from_files_marks_added_and_removed_files() -> None:
    files = [
        PullFile("new.py", "added", 1, 0, 1, "@@ -0,0 +1 @@\n+x = 1"),
        PullFile("old.py", "removed", 0, 1, 1, "@@ -1 +0,0 @@\n-y = 2"),
    ]
    text = diff_from_files(files)
    assert "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n" in text
    assert "--- a/old.py\n+++ /dev/null\n" in text


def test_file_list_stops_at_the_cap_and_never_loops(server: FakeGitHub, tmp_path: Path) -> None:
    def page(n: int, nxt: str) -> Reply:
        items = [{"filename": f"f{n}_{i}.py", "status": "added"} for i in range(100)]
        return Reply(body=items, headers={"Link": f'<{server.url}{nxt}>; rel="next"'})

    files = f"{PULL}/files?per_page=100"
    for n in range(1, 6):
        server.add(f"{files}&page={n}" if n > 1 else files, page(n, f"{files}&page={n + 1}"))
    with make_client(server, tmp_path) as client:
        got = client.pull_files(OWNER, REPO, NUMBER, max_files=250)
        assert len(got) == 250
        assert len(server.requests) == 3
        # A next link that points back at a page already read ends the walk.
        server.add("/loop?per_page=100", page(0, "/loop?per_page=100"))
        assert len(client.get_paginated("/loop")) == 100
        # A next link to another host is refused (the token would go with it).
        server.add(
            "/away?per_page=100",
            Reply(body=[], headers={"Link": '<https://evil.example/x>; rel="next"'}),
        )
        with pytest.raises(GitHubError, match="refusing to follow"):
            client.get_paginated("/away")
        asked = len(server.requests)
        with pytest.raises(GitHubError, match=r"refusing to fetch https://evil\.example/x"):
            client.get_json("https://evil.example/x")
        assert len(server.requests) == asked


def test_reviews_and_review_comments_are_paginated(server: FakeGitHub, tmp_path: Path) -> None:
    def two_pages(kind: str, make: Callable[[int], dict[str, Any]]) -> None:
        first = f"{PULL}/{kind}?per_page=100"
        second = f"{first}&page=2"
        link = {"Link": f'<{server.url}{second}>; rel="next", <{server.url}{second}>; rel="last"'}
        server.add(first, Reply(body=[make(i) for i in range(100)], headers=link))
        server.add(second, Reply(body=[make(i) for i in range(100, 130)]))

    two_pages(
        "reviews",
        lambda i: {
            "id": i,
            "user": {"login": f"r{i}"},
            "state": "COMMENTED",
            "body": "ok",
            "commit_id": "a" * 40,
            "submitted_at": "2025-01-21T00:00:00Z",
        },
    )
    two_pages(
        "comments",
        lambda i: {
            "id": i,
            "user": {"login": "bob"},
            "body": f"nit {i}",
            "path": "pkg/a.py",
            "line": i + 1,
            "side": "RIGHT",
            "commit_id": "b" * 40,
            "diff_hunk": "@@ -1 +1 @@",
            "pull_request_review_id": 9,
        },
    )
    with make_client(server, tmp_path) as client:
        reviews = client.pull_reviews(OWNER, REPO, NUMBER)
        comments = client.pull_review_comments(OWNER, REPO, NUMBER)
    assert len(reviews) == 130 and reviews[129].author == "r129"
    assert len(comments) == 130
    assert (comments[5].path, comments[5].line, comments[5].side) == ("pkg/a.py", 6, "RIGHT")
    assert comments[5].review_id == 9


# --------------------------------------------------------------------------------------------
# Cache, revalidation, offline


def test_etag_revalidation_serves_the_cached_body_on_304(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    serve_pr(server, pr)
    with make_client(server, tmp_path) as client:
        first = client.pull(OWNER, REPO, NUMBER)
        second = client.pull(OWNER, REPO, NUMBER)
    assert first == second
    assert "if-none-match" not in server.requests[0].headers
    assert server.requests[1].headers["if-none-match"] == '"pull-v1"'
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 1
    assert not list((tmp_path / "cache").rglob("*.tmp"))


def test_offline_serves_pages_from_the_cache_and_names_what_is_missing(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    serve_pr(server, pr)
    with make_client(server, tmp_path) as client:
        online = client.pull_changes(OWNER, REPO, NUMBER)
    asked = len(server.requests)
    with make_client(server, tmp_path, offline=True) as client:
        assert client.pull_changes(OWNER, REPO, NUMBER) == online
        with pytest.raises(NotInCache) as missing:
            client.pull_reviews(OWNER, REPO, NUMBER)
    assert len(server.requests) == asked  # offline asked nothing
    message = str(missing.value)
    assert f"reviews of {OWNER}/{REPO}#{NUMBER} is not in the cache" in message
    assert f"{PULL}/reviews?per_page=100" in message
    assert "without --offline" in message


def test_offline_with_an_empty_cache(tmp_path: Path) -> None:
    client = GitHubClient(offline=True, cache_dir=tmp_path / "none")
    with client, pytest.raises(NotInCache, match=r"request acme/widgets#7 is not in the cache"):
        client.pull(OWNER, REPO, NUMBER)
    with pytest.raises(GitHubError, match="needs a cache directory"):
        GitHubClient(offline=True)


# --------------------------------------------------------------------------------------------
# Rate limits, retries, timeouts


def test_rate_limit_with_a_short_reset_waits_then_retries(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    limited = Reply(
        403,
        {"message": "API rate limit exceeded for user ID 1."},
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW + 20))},
    )
    server.add(PULL, limited, Reply(body=pr.pull_json(server.url)))
    sleeps = Sleeps()
    with make_client(server, tmp_path, sleep=sleeps) as client:
        assert client.pull(OWNER, REPO, NUMBER).head_sha == pr.head
    assert sleeps == [21.0]
    assert len(server.requests) == 2


def test_rate_limit_with_a_long_reset_stops_with_when_it_resets(
    server: FakeGitHub, tmp_path: Path
) -> None:
    reset = int(NOW + 3000)
    server.add(
        PULL,
        Reply(
            403,
            {"message": "API rate limit exceeded"},
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        ),
    )
    sleeps = Sleeps()
    client = make_client(server, tmp_path, sleep=sleeps, max_rate_limit_wait=60)
    with client, pytest.raises(RateLimited) as raised:
        client.pull(OWNER, REPO, NUMBER)
    assert sleeps == []
    assert len(server.requests) == 1
    message = str(raised.value)
    assert "rate limit exceeded" in message
    assert "resets at 2027-01-15 08:50:00 UTC, in 50 min" in message
    assert raised.value.reset_at is not None and raised.value.reset_at.timestamp() == reset


def test_429_honours_retry_after(server: FakeGitHub, pr: FixturePR, tmp_path: Path) -> None:
    server.add(
        PULL,
        Reply(429, {"message": "You have exceeded a secondary rate limit."}, {"Retry-After": "7"}),
        Reply(body=pr.pull_json(server.url)),
    )
    sleeps = Sleeps()
    with make_client(server, tmp_path, sleep=sleeps) as client:
        assert client.pull(OWNER, REPO, NUMBER).number == NUMBER
    assert sleeps == [7.0]


def test_server_errors_retry_with_bounded_backoff(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    server.add(PULL, Reply(502, "bad gateway"), Reply(503), Reply(body=pr.pull_json(server.url)))
    sleeps = Sleeps()
    with make_client(server, tmp_path, sleep=sleeps, backoff_base=1.0) as client:
        assert client.pull(OWNER, REPO, NUMBER).head_sha == pr.head
    assert sleeps == [1.0, 2.0]

    server.add(PULL, Reply(500, {"message": "Server Error"}))
    server.requests.clear()
    sleeps.clear()
    with (
        make_client(
            server, tmp_path, sleep=sleeps, backoff_base=1.0, backoff_max=3.0, max_retries=4
        ) as client,
        pytest.raises(ServerError, match=r"answered 500 .* 5 times"),
    ):
        client.pull(OWNER, REPO, NUMBER)
    assert sleeps == [1.0, 2.0, 3.0, 3.0]
    assert len(server.requests) == 5


def test_a_timeout_is_retried_then_reported(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    slow = Reply(body={"late": True}, delay=0.6)
    server.add(PULL, slow, Reply(body=pr.pull_json(server.url)))
    sleeps = Sleeps()
    with make_client(server, tmp_path, sleep=sleeps, timeout=0.2, max_retries=2) as client:
        assert client.pull(OWNER, REPO, NUMBER).head_sha == pr.head
        assert sleeps == [0.5]

        server.add(PULL, slow)
        with pytest.raises(GitHubTimeout, match=r"did not answer within 0.2 s, 3 times"):
            client.pull(OWNER, REPO, NUMBER)


# --------------------------------------------------------------------------------------------
# Errors a person can act on


def test_not_found_bad_credentials_and_unreachable(server: FakeGitHub, tmp_path: Path) -> None:
    with make_client(server, tmp_path) as client:
        with pytest.raises(NotFound, match=r"pull request acme/widgets#7 not found"):
            client.pull(OWNER, REPO, NUMBER)
        server.add(PULL, Reply(401, {"message": "Bad credentials"}))
        with pytest.raises(BadCredentials) as bad:
            client.pull(OWNER, REPO, NUMBER)
    assert "bad credentials" in str(bad.value)
    assert "GITHUB_TOKEN" in str(bad.value)

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps = Sleeps()
    client = GitHubClient(api_url=f"http://127.0.0.1:{port}", sleep=sleeps, max_retries=2)
    with client, pytest.raises(NetworkError, match=r"cannot reach http://127.0.0.1:\d+"):
        client.pull(OWNER, REPO, NUMBER)
    assert len(sleeps) == 2

    with pytest.raises(GitHubError, match="invalid GitHub repository name"):
        client.pull(OWNER, "../../etc", NUMBER)


# --------------------------------------------------------------------------------------------
# Configuration and the token


def test_configuration_from_the_environment(tmp_path: Path) -> None:
    assert token_from_env({"GH_TOKEN": "b"}) == ("b", "GH_TOKEN")
    assert token_from_env({"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}) == ("a", "GITHUB_TOKEN")
    assert token_from_env({"GITHUB_TOKEN": "  ", "OTHER_TOKEN": "c"}) == (None, None)
    client = GitHubClient.from_env({"GITHUB_API_URL": "https://ghe.example.com/api/v3/"})
    assert client.api_url == "https://ghe.example.com/api/v3"
    assert client.web_url == "https://ghe.example.com"
    assert not client.authenticated
    assert GitHubClient.from_env({}).api_url == "https://api.github.com"
    assert web_url_for("https://api.github.com") == "https://github.com"
    assert default_cache_dir(tmp_path) == tmp_path / ".cache" / "github"


def test_the_token_never_leaks(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    serve_pr(server, pr)
    texts: list[str] = []
    with make_client(server, tmp_path, max_retries=1, timeout=0.1) as client:
        texts.append(repr(client))
        texts.append(str(vars(client)))
        client.pull_changes(OWNER, REPO, NUMBER)
        failures = {
            "/e401": Reply(401, {"message": "Bad credentials"}),
            "/e404": Reply(404, {"message": "Not Found"}),
            "/e500": Reply(500, {"message": "boom"}),
            "/e406": Reply(406, {"message": "too_large", "errors": [{"code": "too_large"}]}),
            "/e403": Reply(403, {"message": "Resource not accessible"}),
            "/limit": Reply(403, {}, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1"}),
            # A hostile or buggy server that echoes the Authorization header back.
            "/echo": Reply(422, {"message": f"token Bearer {TOKEN} is invalid"}),
            "/slow": Reply(body={}, delay=0.3),
        }
        for path, reply in failures.items():
            server.add(path, reply)
            with pytest.raises(GitHubError) as raised:
                client.get_json(path)
            texts += [str(raised.value), repr(raised.value), str(raised.value.args)]
        server.add("/leaky", Reply(body={"echo": TOKEN}))
        client.get_json("/leaky")  # served, but never written to the cache
    assert all(s.headers.get("authorization") == f"Bearer {TOKEN}" for s in server.requests)
    texts.append(caplog.text)
    for entry in (tmp_path / "cache").rglob("*"):
        if entry.is_file():
            texts.append(entry.read_text("utf-8"))
    joined = "\n".join(texts)
    assert "S3cretT0ken" not in joined
    assert "<token hidden>" in joined  # the echoed token was redacted, not dropped silently


def test_changes_say_when_github_lists_fewer_files_than_changed(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path
) -> None:
    serve_pr(server, pr)
    with make_client(server, tmp_path) as client:
        pull = client.pull(OWNER, REPO, NUMBER)
        changes = client.pull_changes(OWNER, REPO, NUMBER, pull=replace(pull, changed_files=3500))
    assert changes.truncated
    assert len(changes.files) == 246


def test_progress_is_shown_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    assert terminal_progress(io.StringIO()) is None
    screen = Terminal()
    show = terminal_progress(screen)
    assert show is not None
    show(Progress("files of acme/widgets#7", 1, 100, 246))
    show(Progress("files of acme/widgets#7", 3, 246, 246))
    assert screen.getvalue() == (
        "\rfiles of acme/widgets#7: page 1, 100/246 items"
        "\rfiles of acme/widgets#7: page 3, 246/246 items\n"
    )
    monkeypatch.setenv("CI", "true")
    assert terminal_progress(Terminal()) is None


def test_a_pull_request_of_exactly_the_cap_is_complete(
    server: FakeGitHub, pr: FixturePR, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import generator.github.client as github

    monkeypatch.setattr(github, "MAX_PR_FILES", len(pr.files))  # the cap, reached exactly
    serve_pr(server, pr)
    with make_client(server, tmp_path) as client:
        pull = client.pull(OWNER, REPO, NUMBER)
        assert pull.changed_files == len(pr.files)
        assert not client.pull_changes(OWNER, REPO, NUMBER, pull=pull).truncated
        assert client.pull_changes(OWNER, REPO, NUMBER).truncated  # no count: the cap is a hint

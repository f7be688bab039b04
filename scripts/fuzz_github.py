#!/usr/bin/env python3
"""Every GitHub fault we know of, against a local fake GitHub, through the real client.

    python scripts/fuzz_github.py [NAME ...] [--list]

Each scenario sets up answers on a :class:`generator.github.replay.ReplayServer` on 127.0.0.1
(nothing touches the internet), then runs what a command runs: the client's own calls, or the
``pr``/``review`` page builders and writers with that client. Sleeping is faked (the client
counts the seconds it was asked to sleep), so a scenario that would make the client wait for
minutes finishes at once and still reports those minutes.

It prints, per scenario, the requests sent, the seconds the client spent (answers measured,
sleeps as asked) and the wall time, and the outcome: the error message, or what was written. A
crash (an exception that is not the client's or the generator's own error) or a broken promise
(the token in a file, a file over the body cap in the cache, a broken link in a drafted page)
is counted, and the last line says how many; the exit status is 1 when there is any.

tests/test_github_faults.py imports :data:`SCENARIOS` and :func:`run_scenario`.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from generator.github.client import (  # noqa: E402
    DEFAULT_MAX_BODY_BYTES,
    DIFF_MEDIA_TYPE,
    GitHubClient,
    GitHubError,
)
from generator.github.replay import ReplayServer, Reply, pull_files_from_git  # noqa: E402

TOKEN = "ghp_FuzzT0kenThatMustNeverBeWritten0123456789"
OWNER, REPO, NUMBER = "acme", "widgets", 7
PULL = f"/repos/{OWNER}/{REPO}/pulls/{NUMBER}"
NOW = 1_800_000_000.0
MiB = 1024 * 1024

# Options every scenario's client gets: a short read timeout, so that a stalled server is found
# out fast; the deadlines and waiting limits are the defaults unless a scenario says otherwise,
# since sleeping is faked.
FAST = {"timeout": 1.0}


class Sleeps(list[float]):
    """A ``sleep`` that records instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@dataclass
class Fixture:
    """A tiny knowledge base whose upstream is a real git repository, and its pull request."""

    root: Path
    base: str
    head: str
    files: list[dict[str, Any]]
    diff: str

    def pull_json(self, **changes: Any) -> dict[str, Any]:
        pull = {
            "number": NUMBER,
            "title": "Speed up the widget loader",
            "body": "Closes #3.",
            "state": "open",
            "merged": False,
            "draft": False,
            "user": {"login": "alice"},
            "created_at": "2025-01-20T09:00:00Z",
            "base": {"ref": "main", "sha": self.base},
            "head": {"ref": "fast", "sha": self.head},
            "html_url": f"https://github.com/{OWNER}/{REPO}/pull/{NUMBER}",
            "additions": sum(f["additions"] for f in self.files),
            "deletions": sum(f["deletions"] for f in self.files),
            "changed_files": len(self.files),
            "commits": 1,
        }
        pull.update(changes)
        return pull

    def serve(self, server: ReplayServer, **changes: Any) -> None:
        """The pull request, its diff, files, reviews and review comments, all well formed."""
        server.add(PULL, Reply(body=self.pull_json(**changes)))
        server.add(PULL, Reply(body=self.diff), accept=DIFF_MEDIA_TYPE)
        server.add_list(f"{PULL}/files", self.files)
        server.add_list(f"{PULL}/comments", [])
        server.add_list(f"{PULL}/reviews", [])


def build_fixture(root: Path) -> Fixture:
    from generator.upstream.gitbuild import RepoBuilder

    repo_dir = root / "cache" / "widgets"
    repo = RepoBuilder.init(repo_dir)
    base = repo.commit(
        {"pkg/loader.py": "def load(x):\n    return x\n", "README.md": "# widgets\n"},
        "Base",
        date="2025-01-01T00:00:00+00:00",
    )
    head = repo.commit(
        {"pkg/loader.py": "def load(x):\n    return x * 2\n\n\ndef fast(y):\n    return y\n"},
        "Speed up the loader",
        date="2025-01-20T09:00:00+00:00",
    )
    files, diff = pull_files_from_git(repo_dir, base, head)
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "upstreams.yaml").write_text(
        "cache_dir: cache\nupstreams:\n  widgets:\n"
        f'    url: "{repo_dir}"\n    branch: "main"\n    pin: "{head}"\n'
        f'    prefixes: ["pkg/"]\n    web_url: "https://github.com/{OWNER}/{REPO}"\n',
        "utf-8",
    )
    return Fixture(root, base, head, files, diff)


# --------------------------------------------------------------------------------------------
# Scenarios


@dataclass(frozen=True)
class Scenario:
    """One fault: what the server does, what is run, and what must come of it.

    ``run`` is a client call (``pull``, ``diff``, ``changes``, ``reviews``, ``comments``) or a
    command (``pr``, ``review``: the page built and written). ``expect`` is a regular expression
    the outcome must match (an error message, or ``wrote ...``); ``requests`` and ``seconds``
    are the most requests and client seconds the scenario may cost."""

    name: str
    serve: Callable[[ReplayServer, Fixture], None]
    expect: str
    run: str = "pull"
    requests: int = 1
    seconds: float = 1.0
    options: Mapping[str, Any] = field(default_factory=dict)
    error: bool = True


def _route(path: str, *replies: Reply, accept: str | None = None) -> Callable[..., None]:
    def serve(server: ReplayServer, fixture: Fixture) -> None:
        fixture.serve(server)
        server.add(path, *replies, accept=accept)

    return serve


def _pull_with(**changes: Any) -> Callable[..., None]:
    def serve(server: ReplayServer, fixture: Fixture) -> None:
        fixture.serve(server, **changes)

    return serve


def _endless(kind: str) -> Callable[..., None]:
    """A listing whose every page links to a next one (60 pages, more than the cap)."""

    def serve(server: ReplayServer, fixture: Fixture) -> None:
        fixture.serve(server)
        first = f"{PULL}/{kind}?per_page=100"
        for n in range(1, 61):
            here = first if n == 1 else f"{first}&page={n}"
            nxt = f'<{server.url}{first}&page={n + 1}>; rel="next"'
            server.add(here, Reply(body=[], headers={"Link": nxt}))

    return serve


def _redirect_elsewhere(server: ReplayServer, fixture: Fixture) -> None:
    fixture.serve(server)
    # Another origin: same host, another port (a server that would answer if asked).
    elsewhere = server.url.replace("127.0.0.1", "localhost")
    server.add(PULL, Reply(302, headers={"Location": f"{elsewhere}{PULL}"}))


def _redirect_same_origin(server: ReplayServer, fixture: Fixture) -> None:
    fixture.serve(server)
    moved = f"/repositories/1/pulls/{NUMBER}"
    server.add(PULL, Reply(301, headers={"Location": moved}))
    server.add(moved, Reply(body=fixture.pull_json()))


def _slow_pages(server: ReplayServer, fixture: Fixture) -> None:
    """Each page of the files answers in 0.2 s: fine for a request, too slow for the command."""
    fixture.serve(server)
    first = f"{PULL}/files?per_page=100"
    for n in range(1, 8):
        here = first if n == 1 else f"{first}&page={n}"
        nxt = f'<{server.url}{first}&page={n + 1}>; rel="next"'
        server.add(here, Reply(body=fixture.files, headers={"Link": nxt}, delay=0.2))


RATE_LIMITED = r"rate limit exceeded \(.*, 2 times\); "
MALFORMED = r"GitHub sent {kind} (for field '{field}', expected {expected}|where .* expected)"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "retry-after-inf",
        _route(PULL, Reply(429, {"message": "slow down"}, {"Retry-After": "inf"})),
        RATE_LIMITED + "retry in 60 s",
        requests=2,
        seconds=61,
    ),
    Scenario(
        "ratelimit-reset-1e400",
        _route(
            PULL,
            Reply(
                403,
                {"message": "API rate limit exceeded"},
                {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1e400"},
            ),
        ),
        RATE_LIMITED + "retry in 60 s",
        requests=2,
        seconds=61,
    ),
    Scenario(
        "429-without-a-hint",
        _route(PULL, Reply(429, {"message": "You have exceeded a secondary rate limit"})),
        RATE_LIMITED + "retry in 60 s",
        requests=2,
        seconds=61,
    ),
    Scenario(
        "short-rate-limit-then-ok",
        _route(
            PULL,
            Reply(429, {}, {"Retry-After": "5"}),
            Reply(body={"number": NUMBER, "head": {"sha": "a" * 40}}),
        ),
        r"^ok: pull request #7",
        requests=2,
        seconds=6,
        error=False,
    ),
    Scenario(
        "server-error-forever",
        _route(PULL, Reply(502, "bad gateway")),
        r"GitHub answered 502 Bad Gateway 5 times",
        requests=5,
        seconds=16,
        options={"backoff_base": 1.0},
    ),
    Scenario(
        "list-for-object",
        _route(PULL, Reply(body=[{"number": NUMBER}])),
        r"pull request acme/widgets#7: GitHub sent a list where a JSON object was expected",
    ),
    Scenario(
        "object-for-list",
        _route(f"{PULL}/comments?per_page=100", Reply(body={"message": "hi"})),
        r"review comments of acme/widgets#7: GitHub sent an object where a list was expected",
        run="comments",
    ),
    Scenario(
        "number-is-a-string",
        _pull_with(number="seven"),
        r"pull request acme/widgets#7: GitHub sent a string for field 'number', "
        r"expected a whole number",
    ),
    Scenario(
        "base-is-a-string",
        _pull_with(base="main"),
        r"GitHub sent a string for field 'base', expected an object",
    ),
    Scenario(
        "infinite-count",
        _route(PULL, Reply(body='{"number": 7, "additions": 1e400}')),
        r"GitHub sent a number for field 'additions', expected a whole number",
    ),
    Scenario(
        "file-entry-wrong-type",
        _route(f"{PULL}/files?per_page=100", Reply(body=[{"filename": ["a", "b"]}])),
        r"files of acme/widgets#7: GitHub sent a list for field 'filename', expected a string",
        run="changes",
    ),
    Scenario(
        "not-json",
        _route(PULL, Reply(body="<html>maintenance</html>")),
        r"GitHub sent something that is not JSON",
    ),
    Scenario(
        "json-nested-too-deep",
        _route(PULL, Reply(body="[" * 100_000 + "]" * 100_000)),
        r"GitHub sent JSON nested too deeply to read",
    ),
    Scenario(
        "trickled-body",
        _route(PULL, Reply(body={"number": NUMBER, "title": "x" * 100}, trickle=0.05)),
        r"no complete answer within 0.5 s .*the limit for one request is 0.5 s",
        seconds=1.0,
        options={"request_deadline": 0.5},
    ),
    Scenario(
        "trickled-headers",
        _route(PULL, Reply(body={"number": NUMBER}, trickle=0.05, trickle_head=True)),
        r"no complete answer within 0.5 s .*the limit for one request is 0.5 s",
        seconds=1.0,
        options={"request_deadline": 0.5},
    ),
    Scenario(
        "slow-pages-past-the-command-deadline",
        _slow_pages,
        r"no complete answer within .* of the 0.5 s this command may spend on GitHub",
        run="changes",
        requests=4,
        seconds=1.0,
        options={"command_deadline": 0.5},
    ),
    Scenario(
        "endless-review-comments",
        _endless("comments"),
        r"review comments of acme/widgets#7: GitHub still offers a next page after 50 pages "
        r"\(0 items\); stopped there",
        run="review",
        requests=2 + 50,
        seconds=5,
    ),
    Scenario(
        "endless-listing-request-cap",
        _endless("files"),
        r"already sent 20 requests to GitHub, the cap per command",
        run="changes",
        requests=20,
        options={"max_requests": 20},
    ),
    Scenario(
        "huge-diff-declared",
        _route(PULL, Reply(body="", size=400 * MiB), accept=DIFF_MEDIA_TYPE),
        r"diff of acme/widgets#7: GitHub announced 400.0 MiB, more than the 32.0 MiB the client "
        r"reads of one answer .*nothing was read or cached",
        run="diff",
    ),
    Scenario(
        "huge-diff-undeclared",
        _route(PULL, Reply(body="", size=400 * MiB, length=False), accept=DIFF_MEDIA_TYPE),
        r"larger than the 32.0 MiB the client reads of one answer .*stopped reading there, "
        r"nothing was cached",
        run="diff",
    ),
    Scenario(
        "huge-diff-in-pr",
        _route(PULL, Reply(body="", size=400 * MiB), accept=DIFF_MEDIA_TYPE),
        r"^wrote docs/analysis/pr\.md: 1 files",
        run="pr",
        requests=3,
        error=False,
    ),
    Scenario(
        "redirect-to-another-origin",
        _redirect_elsewhere,
        r"refusing to follow a redirect from .* to http://localhost:\d+/repos/acme/widgets/pulls/7",
    ),
    Scenario(
        "redirect-same-origin",
        _redirect_same_origin,
        r"^ok: pull request #7",
        requests=2,
        error=False,
    ),
    Scenario(
        "redirect-loop",
        _route(PULL, Reply(302, headers={"Location": PULL})),
        r"more than 3 redirects from .*the server redirects in a loop",
        requests=4,
    ),
    Scenario(
        "token-echoed-in-description",
        _pull_with(body=f"Debug: Authorization: Bearer {TOKEN}"),
        r"^wrote docs/analysis/pr\.md",
        run="pr",
        requests=3,
        error=False,
    ),
    Scenario(
        "token-echoed-in-an-error",
        _route(PULL, Reply(422, {"message": f"token {TOKEN} is invalid"})),
        r"GitHub answered 422 \(token <token hidden> is invalid\)",
    ),
    Scenario(
        "linked-images-in-description",
        _pull_with(
            body="[![build](https://ci.example/badge.svg)](https://ci.example/run/1) "
            "[![cov](cov.svg)](coverage.html) ![diagram](docs/diagram.png) [notes](notes.md)"
        ),
        r"^wrote docs/analysis/pr\.md",
        run="pr",
        requests=3,
        error=False,
    ),
)


# --------------------------------------------------------------------------------------------
# Running


@dataclass
class Outcome:
    name: str
    requests: int
    seconds: float  # what the client spent: answers as measured, sleeps as asked
    wall: float
    message: str
    crashed: bool = False
    problems: list[str] = field(default_factory=list)  # broken promises, not the server's fault

    def line(self) -> str:
        flag = "CRASH " if self.crashed else ("FAIL " if self.problems else "")
        extra = f" [{'; '.join(self.problems)}]" if self.problems else ""
        return (
            f"{self.name:<38} {self.requests:>4} requests {self.seconds:>7.1f} s "
            f"({self.wall:.2f} s wall)  {flag}{self.message}{extra}"
        )


def _act(scenario: Scenario, client: GitHubClient, fixture: Fixture) -> str:
    """What the scenario runs; returns what came of it when it succeeds."""
    if scenario.run == "pull":
        pull = client.pull(OWNER, REPO, NUMBER)
        return f"ok: pull request #{pull.number}, head {pull.head_sha[:12] or '-'}"
    if scenario.run == "diff":
        return f"ok: a diff of {len(client.pull_diff(OWNER, REPO, NUMBER)):,} characters"
    if scenario.run == "changes":
        changes = client.pull_changes(OWNER, REPO, NUMBER)
        return f"ok: {len(changes.files)} files, diff from {changes.source}"
    if scenario.run == "reviews":
        return f"ok: {len(client.pull_reviews(OWNER, REPO, NUMBER))} reviews"
    if scenario.run == "comments":
        return f"ok: {len(client.pull_review_comments(OWNER, REPO, NUMBER))} review comments"
    from generator.upstream.manifest import load_manifest

    manifest = load_manifest(fixture.root / "upstreams.yaml")
    if scenario.run == "pr":
        from generator.generate.pr import build_pr_page, write_pr_page

        target = fixture.root / "docs" / "analysis" / "pr.md"
        page = build_pr_page(client, manifest, OWNER, REPO, NUMBER)
        write_pr_page(page, target)
        return f"wrote docs/analysis/pr.md: {len(page.files)} files, {len(page.symbols)} symbols"
    if scenario.run == "review":
        from generator.generate.review import build_review_page, write_review_page

        target = fixture.root / "docs" / "analysis" / "review.md"
        review = build_review_page(client, manifest, OWNER, REPO, NUMBER)
        write_review_page(review, target)
        return f"wrote docs/analysis/review.md: {len(review.comments)} review comments"
    raise ValueError(f"unknown run {scenario.run!r}")


def _written_problems(fixture: Fixture, cache: Path) -> list[str]:
    """Promises about what is on disk: no token anywhere, nothing over the cap in the cache, no
    broken link in a drafted page."""
    problems = []
    for path in [*fixture.root.rglob("*.md"), *cache.rglob("*")]:
        if not path.is_file() or ".git" in path.parts:
            continue
        data = path.read_bytes()
        if TOKEN.encode() in data:
            problems.append(f"the token is in {path.name}")
        if cache in path.parents and len(data) > DEFAULT_MAX_BODY_BYTES:
            problems.append(f"a {len(data):,}-byte cache entry")
    drafted = fixture.root / "docs" / "analysis"
    if drafted.is_dir() and any(drafted.iterdir()):
        problems += _link_problems(fixture)
    return problems


def _link_problems(fixture: Fixture) -> list[str]:
    import os

    from generator.verification.pipeline import verify

    here = Path.cwd()
    os.chdir(fixture.root)
    try:
        report = verify(["docs"])
    finally:
        os.chdir(here)
    return [
        f"{f.check}: {f.message}"
        for f in report.findings
        if f.check in ("link-missing", "anchor-missing")
    ]


def run_scenario(scenario: Scenario, workdir: Path) -> Outcome:
    """Run ``scenario`` in the empty directory ``workdir`` against a fresh local server."""
    fixture = build_fixture(workdir)
    cache = workdir / ".cache" / "github"
    sleeps = Sleeps()
    options: dict[str, Any] = {
        **FAST,
        "cache_dir": cache,
        "sleep": sleeps,
        "clock": lambda: NOW,
        **scenario.options,
    }
    started = time.monotonic()
    crashed = False
    with ReplayServer() as server:
        scenario.serve(server, fixture)
        environ = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": server.url}
        client = GitHubClient.from_env(environ, **options)
        # The page writers hide the token by reading the environment, as the commands do.
        saved = {name: os.environ.get(name) for name in ("GITHUB_TOKEN", "GH_TOKEN")}
        os.environ["GITHUB_TOKEN"] = TOKEN
        os.environ.pop("GH_TOKEN", None)
        try:
            with client:
                message = _act(scenario, client, fixture)
        except GitHubError as error:
            message = f"error: {error}"
        except Exception as error:  # what the fuzzing is for: anything else is a crash
            from generator.generate.pr import PrError

            crashed = not isinstance(error, PrError)
            message = f"{type(error).__name__}: {error}"
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        requests = len(server.requests)
    outcome = Outcome(
        scenario.name,
        requests,
        client.seconds_spent,
        time.monotonic() - started,
        message,
        crashed,
    )
    outcome.problems = _written_problems(fixture, cache)
    if TOKEN in message:
        outcome.problems.append("the token is in the message")
    if scenario.error != message.startswith("error: "):
        outcome.problems.append("expected an error" if scenario.error else "expected success")
    if re.search(scenario.expect, message.removeprefix("error: ")) is None:
        outcome.problems.append(f"outcome does not match {scenario.expect!r}")
    if requests > scenario.requests:
        outcome.problems.append(f"more than {scenario.requests} requests")
    if outcome.seconds > scenario.seconds:
        outcome.problems.append(f"more than {scenario.seconds:g} s")
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="scenarios to run (all)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and stop")
    parser.add_argument("--verbose", "-v", action="store_true", help="show the client's log")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.ERROR, format="  log: %(message)s"
    )
    chosen = [s for s in SCENARIOS if not args.names or s.name in args.names]
    if args.list:
        for scenario in chosen:
            print(scenario.name)
        return 0
    crashes = failures = 0
    for scenario in chosen:
        with tempfile.TemporaryDirectory(prefix="fuzz-github-") as tmp:
            outcome = run_scenario(scenario, Path(tmp))
        print(outcome.line(), flush=True)
        crashes += outcome.crashed
        failures += bool(outcome.problems) and not outcome.crashed
    print(f"{len(chosen)} scenarios, {crashes} crashes, {failures} failures")
    return 1 if crashes or failures else 0


if __name__ == "__main__":
    sys.exit(main())

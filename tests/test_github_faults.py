"""Hostile or broken GitHub answers end in the client's own clear error, within bounds.

Every scenario of scripts/fuzz_github.py runs against a real HTTP server on 127.0.0.1 through the
real client (and the ``pr``/``review`` page builders); sleeping is faked, so what would wait for
minutes is checked in milliseconds. Each asserts the outcome's text, the requests sent, the
seconds the client spent, that nothing crashed, and that nothing leaked or oversized was written.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from generator.github.client import DIFF_MEDIA_TYPE, GitHubClient, GitHubError, LimitReached
from generator.github.replay import ReplayServer, Reply

ROOT = Path(__file__).resolve().parent.parent


def _fuzz_github():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "fuzz_github", ROOT / "scripts" / "fuzz_github.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_github"] = module
    spec.loader.exec_module(module)
    return module


fuzz = _fuzz_github()
BY_NAME = {scenario.name: scenario for scenario in fuzz.SCENARIOS}


@pytest.mark.parametrize("scenario", fuzz.SCENARIOS, ids=lambda s: s.name)
def test_fault_scenario(scenario, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outcome = fuzz.run_scenario(scenario, tmp_path)
    assert not outcome.crashed, outcome.message
    assert outcome.problems == [], outcome.line()
    assert outcome.requests <= scenario.requests
    assert outcome.seconds <= scenario.seconds
    assert fuzz.TOKEN not in outcome.message
    cache = tmp_path / ".cache" / "github"
    cached = sorted(cache.rglob("*.json")) if cache.exists() else []
    if scenario.error:
        assert outcome.message.startswith("error: ")
        if scenario.run in ("pull", "diff"):  # its one answer failed: nothing of it is cached
            assert cached == []
    for entry in cached:
        assert entry.stat().st_size <= fuzz.DEFAULT_MAX_BODY_BYTES
        assert fuzz.TOKEN not in entry.read_text("utf-8")


def test_the_scenarios_cover_every_reported_fault() -> None:
    for name in (
        "retry-after-inf",
        "ratelimit-reset-1e400",
        "list-for-object",
        "number-is-a-string",
        "trickled-body",
        "slow-pages-past-the-command-deadline",
        "429-without-a-hint",
        "endless-review-comments",
        "endless-listing-request-cap",
        "huge-diff-declared",
        "huge-diff-undeclared",
        "redirect-to-another-origin",
        "token-echoed-in-description",
        "linked-images-in-description",
    ):
        assert name in BY_NAME


def test_waiting_is_bounded_per_request_and_per_command(tmp_path: Path) -> None:
    """A 429 without a hint waits a minute once, then gives up; the next request of the same
    command may not wait at all once the command's waiting is spent."""
    sleeps = fuzz.Sleeps()
    with ReplayServer() as server:
        server.add(fuzz.PULL, Reply(429, {"message": "secondary rate limit"}))
        client = GitHubClient(
            api_url=server.url, sleep=sleeps, clock=lambda: fuzz.NOW, max_command_wait=100
        )
        with client:
            with pytest.raises(GitHubError, match=r"rate limit exceeded .*2 times"):
                client.pull(fuzz.OWNER, fuzz.REPO, fuzz.NUMBER)
            assert sleeps == [60.0] and len(server.requests) == 2
            with pytest.raises(GitHubError, match=r"rate limit exceeded \(\S+\); retry in 60 s"):
                client.pull(fuzz.OWNER, fuzz.REPO, fuzz.NUMBER)
        assert sleeps == [60.0] and len(server.requests) == 3
        assert client.seconds_slept == 60.0


def test_oversized_bodies_are_neither_kept_nor_cached(tmp_path: Path) -> None:
    with ReplayServer() as server:
        big = Reply(body="", size=5 * fuzz.MiB, length=False)
        server.add(fuzz.PULL, big, accept=DIFF_MEDIA_TYPE)
        client = GitHubClient(
            api_url=server.url, cache_dir=tmp_path / "cache", max_body_bytes=1 * fuzz.MiB
        )
        with client, pytest.raises(GitHubError, match=r"larger than the 1.0 MiB"):
            client.pull_diff(fuzz.OWNER, fuzz.REPO, fuzz.NUMBER)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


def test_the_request_cap_says_so(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add(fuzz.PULL, Reply(500, {"message": "boom"}))
        client = GitHubClient(api_url=server.url, sleep=fuzz.Sleeps(), max_requests=3)
        with client, pytest.raises(LimitReached, match="already sent 3 requests"):
            client.pull(fuzz.OWNER, fuzz.REPO, fuzz.NUMBER)
        assert len(server.requests) == 3


def test_the_link_check_would_have_caught_the_old_badge_text(tmp_path: Path) -> None:
    """The scenario's link check is real: the text the sanitiser used to make of a badge with a
    relative target is reported as a missing link."""
    fixture = fuzz.build_fixture(tmp_path)
    page = fixture.root / "docs" / "analysis" / "old.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Old\n\n> \\[image: cov\\](coverage.html)\n", "utf-8")
    assert any("coverage.html" in problem for problem in fuzz._link_problems(fixture))


def test_the_pr_command_keeps_to_its_github_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.cli import main
    from generator.cli.generate import DEFAULT_GITHUB_DEADLINE
    from generator.github.client import DEFAULT_COMMAND_DEADLINE

    assert DEFAULT_GITHUB_DEADLINE == DEFAULT_COMMAND_DEADLINE
    fixture = fuzz.build_fixture(tmp_path)
    with ReplayServer() as server:
        fixture.serve(server)
        server.add(fuzz.PULL, Reply(body=fixture.pull_json(), delay=0.5))
        monkeypatch.chdir(fixture.root)
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", fuzz.TOKEN)
        status = main(["pr", f"{fuzz.OWNER}/{fuzz.REPO}", "7", "--github-deadline", "0.2"])
        assert len(server.requests) == 1
    assert status == 1
    error = capsys.readouterr().err
    assert "no complete answer within 0.2 s" in error
    assert "the rest of the 0.2 s this command may spend on GitHub" in error
    assert not (fixture.root / "docs" / "analysis").exists()

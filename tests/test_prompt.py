"""`pr --prompt` and `review --prompt`: context packs for an LLM, against a real local HTTP server
replaying GitHub and real git repositories (the head commit is read from the upstream's clone).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from generator.cli import generate as generate_cli
from generator.generate.pr import PrError, place_page
from generator.generate.prompt import (
    DEFAULT_BUDGET,
    NAMED_OMISSIONS,
    PROMPTS,
    ContextPack,
    Omission,
    build_pr_pack,
    estimate_tokens,
)
from generator.generate.source import Placement
from generator.github.client import GitHubClient
from generator.github.replay import pull_files_from_git
from generator.refs.extract import extract_headings, scan
from generator.upstream.gitbuild import RepoBuilder, run_git
from generator.upstream.manifest import load_manifest
from tests import test_github as gh
from tests.conftest import KB, ROOT
from tests.test_generate_review import COMMENTS, comment

server = gh.server  # the replaying 127.0.0.1 server, as a fixture of this module

PACK = Path(".cache") / "prompts" / "pr-7-speed-up-the-widget-loader.md"
PAGE = Path("docs") / "analysis" / "pr-7-speed-up-the-widget-loader.md"


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> tuple[KB, gh.FixturePR]:
    return gh.fixture_kb(tmp_path_factory.mktemp("prompt-kb"))


def run(kb: KB, server: gh.FakeGitHub, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    return gh.run_generator(kb, server, monkeypatch, *args)


def listed_headings(pack: str) -> list[str]:
    """The headings the pack's conventions ask for, without their diagram notes."""
    part = pack.split("2. **Sections.**")[1].split("3. **Code references.**")[0]
    return re.findall(r"(?m)^- `(#+ [^`]*)`", part)


def page_headings(text: str) -> list[str]:
    return [f"{'#' * h.level} {h.text}" for h in extract_headings(scan(text))]


def pack_frontmatter(pack: str) -> dict[str, object]:
    block = re.search(r"(?ms)^```yaml\n---\n(.*?)---\n```$", pack)
    assert block is not None
    return yaml.safe_load(block[1])


def code_blocks(pack: str) -> list[tuple[str, str, int, int, list[str]]]:
    """(name, path, start, end, numbered lines) of each changed definition's code."""
    code = pack.split("## Changed code at the head commit")[1].split("\n## ")[0]
    return [
        (m[1], m[2], int(m[3]), int(m[4]), m[5].split("\n"))
        for m in re.finditer(
            r"(?ms)^### `([^`]+)`: `([^`:]+):(\d+)-(\d+)` \((?:NEW|MODIFIED)\)\n\n"
            r"(?:Also changed inside it: [^\n]*\n\n)?```python\n(.*?)\n```$",
            code,
        )
    ]


def test_pr_pack_holds_the_prompt_conventions_metadata_every_diff_and_the_changed_code(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    assert run(kb, server, monkeypatch, "pr", "acme/widgets", "7", "--prompt") == 0
    out = capsys.readouterr().out
    assert f"wrote {PACK}: context pack for the PR deep dive of PR #7 (en)" in out
    assert "246 of 246 file diffs, the code of 405 of 405 changed definitions" in out
    assert not (kb.root / PAGE).exists()  # the pack replaces the page
    pack = (kb.root / PACK).read_text("utf-8")

    # The prompt shipped in the package comes first, whole.
    prompt = (PROMPTS / "pr-deep-dive.md").read_text("utf-8")
    assert pack.startswith(prompt.rstrip("\n") + "\n\n---\n")
    assert "## Phase 2: Analysis & Output" in prompt and "### 7. Quick Reference" in prompt

    # The conventions are the page's own: its frontmatter and its headings, from the template.
    assert (
        run(kb, server, monkeypatch, "pr", "acme/widgets", "7", "-o", str(tmp_path / "p.md")) == 0
    )
    page = (tmp_path / "p.md").read_text("utf-8")
    assert pack_frontmatter(pack) == yaml.safe_load(page.split("---\n")[1])
    assert listed_headings(pack) == page_headings(page)
    assert "- `### 4.2 Call Chain Visualization`: a Mermaid sequenceDiagram" in pack
    assert "docs/analysis/pr-7-speed-up-the-widget-loader.md`, in English" in pack
    assert f"the head commit `{pr.head}`" in pack

    # The metadata, and the description sanitised as on the page.
    metadata = pack.split("## Pull request\n")[1].split("\n## ")[0]
    for expected in (
        "| Title | Speed up the widget loader |",
        "| Author | [@alice](https://github.com/alice) |",
        "| State | merged |",
        f"| Base | `main` `{pr.base}` |",
        f"| Head | `fast-loader` `{pr.head}` |",
        f"| Size | 246 files, +{pr.additions} / -{pr.deletions}, 1 commit |",
        "| Link | `https://github.com/acme/widgets/pull/7` |",
    ):
        assert expected in metadata
    assert "> Closes [\\#3](https://github.com/acme/widgets/issues/3)." in pack

    # Every changed file, and its diff: together, the diffs are git's diff exactly.
    table = pack.split("## Changed files\n")[1].split("\n## ")[0]
    assert table.count("\n| ") == 1 + 246
    for f in pr.files:  # GitHub's entries, computed by git
        change = {"added": "new", "removed": "deleted"}.get(f["status"], f["status"])
        if f["status"] == "renamed":
            change = f"renamed from `{f['previous_filename']}`"
        elif "patch" not in f:
            change += ", binary"
        row = f"| {change} | `{f['filename']}` | {f['additions']} | {f['deletions']} |"
        assert row in table
    diffs = re.findall(r"(?ms)^```diff\n(.*?)\n```$", pack)
    assert "\n".join(diffs) + "\n" == pr.diff

    # Each changed definition's full source at the head, with the head's line numbers.
    blocks = code_blocks(pack)
    assert len(blocks) == 405
    heads: dict[str, list[str]] = {}
    for name, path, start, end, numbered in blocks:
        lines = heads.setdefault(path, run_git(pr.repo, "show", f"{pr.head}:{path}").split("\n"))
        assert [int(line.split(" | ")[0]) for line in numbered] == list(range(start, end + 1))
        assert [line.split(" | ", 1)[1] for line in numbered] == lines[start - 1 : end]
        keyword = "def" if name.endswith("()") else "class"
        assert numbered[0].split(" | ", 1)[1].startswith(f"{keyword} {name.rstrip('()')}")
    assert ("func_3()", "pkg/mod_003.py", 4, 5) in [b[:4] for b in blocks]

    left_out = pack.split("## Left out\n")[1]
    assert left_out.strip() == "- the content of `assets/logo.bin`: a binary file"
    assert estimate_tokens(pack) <= DEFAULT_BUDGET
    assert f"Size: about {estimate_tokens(pack):,} tokens" in pack

    # Deterministic: the same pull request gives the same pack, byte for byte.
    again = tmp_path / "again.md"
    assert (
        run(kb, server, monkeypatch, "pr", "acme/widgets", "7", "--prompt", "-o", str(again)) == 0
    )
    assert again.read_text("utf-8") == pack


def test_review_pack_has_the_review_prompt_its_headings_and_the_review_comments(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    server.add(
        COMMENTS,
        gh.Reply(
            body=[
                comment(1, "pkg/mod_000.py", 5, "Why `*` and not `+`?"),
                comment(2, "pkg/mod_000.py", 5, "Faster.", login="alice", in_reply_to_id=1),
            ]
        ),
    )
    output = tmp_path / "review-pack.md"
    args = ("review", "acme/widgets", "7", "--prompt", "-o", str(output))
    assert run(kb, server, monkeypatch, *args, "--spec", "001-x", "--path", "advanced") == 0
    assert "context pack for the review of PR #7" in capsys.readouterr().out
    pack = output.read_text("utf-8")
    prompt = (PROMPTS / "code-review.md").read_text("utf-8")
    assert pack.startswith(prompt.rstrip("\n") + "\n\n---\n")
    assert "### 6. GitHub Review Comments" in prompt

    page = tmp_path / "review.md"
    assert run(kb, server, monkeypatch, "review", "acme/widgets", "7", "-o", str(page)) == 0
    headings = page_headings(page.read_text("utf-8"))
    # The page's headings, less the per-file groups of this pull request's comments.
    assert listed_headings(pack) == [h for h in headings if not h.startswith("### `")]
    assert "### P1 — Important" in listed_headings(pack)
    meta = pack_frontmatter(pack)
    assert (meta["kind"], meta["spec"], meta["paths"]) == ("review", "001-x", ["advanced"])
    assert "4. **Findings.**" in pack and "--export-review-json" in pack

    comments = pack.split("## Review comments on GitHub\n")[1].split("\n## ")[0]
    assert "**`pkg/mod_000.py:5`** — [@bob](https://github.com/bob):" in comments
    assert "> Why `*` and not `+`?" in comments
    assert "**`pkg/mod_000.py:5`** (reply) — [@alice](https://github.com/alice):" in comments
    assert "\n".join(re.findall(r"(?ms)^```diff\n(.*?)\n```$", pack)) + "\n" == pr.diff


# --------------------------------------------------------------------------------------------
# The budget


@dataclass
class Shapes:
    kb: KB
    pr: gh.FixturePR


def shapes_module(version: int) -> str:
    """Definitions of very different sizes; ``version`` changes one line in each."""
    medium = "".join(f"    step += {i}\n" for i in range(12))
    large = "".join(f"    total += {i} * factor\n" for i in range(60))
    return (
        '"""Shapes."""\n\n\n'
        f"def tiny(x):\n    return x + {version}\n\n\n"
        f"def medium(step):\n{medium}    return step * {version}\n\n\n"
        f"def large(total, factor):\n{large}    return total - {version}\n\n\n"
        f"class Canvas:\n    colour = {version}\n\n"
        f"    def draw(self):\n        return {version}\n\n"
        "    def clear(self):\n        return None\n"
    )


def kb_with_pull(
    root: Path, base: dict[str, str | bytes | None], head: dict[str, str | bytes | None]
) -> Shapes:
    """A knowledge base whose upstream ``widgets`` has the pull request ``base`` -> ``head``."""
    kb = KB(root)
    kb.docs.mkdir(parents=True)
    repo = RepoBuilder.init(kb.root / "cache" / "widgets")
    base_sha = repo.commit(base, "Base", date="2025-01-01T00:00:00+00:00")
    head_sha = repo.commit(head, "Change", date="2025-01-02T00:00:00+00:00")
    files, diff = pull_files_from_git(repo.path, base_sha, head_sha)
    kb.upstreams["widgets"] = {
        "url": str(repo.path),
        "pin": head_sha,
        "prefixes": ["pkg/", "data/"],
        "web_url": f"https://github.com/{gh.OWNER}/{gh.REPO}",
    }
    kb.write_manifest()
    return Shapes(kb, gh.FixturePR(repo.path, base_sha, head_sha, files, diff))


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Shapes:
    table = "".join(f"{i},{i * i}\n" for i in range(150))
    return kb_with_pull(
        tmp_path_factory.mktemp("shapes-kb"),
        {"pkg/shapes.py": shapes_module(1), "data/table.csv": table, "notes.txt": "a\n"},
        {
            "pkg/shapes.py": shapes_module(2),
            "data/table.csv": table.replace(",", ";"),
            "notes.txt": "b\n",
        },
    )


def pack_for(shapes: Shapes, server: gh.FakeGitHub, budget: int) -> ContextPack:
    gh.serve_pr(server, shapes.pr)
    manifest = load_manifest(shapes.kb.root / "upstreams.yaml")
    with GitHubClient(api_url=server.url) as client:
        return build_pr_pack(client, manifest, gh.OWNER, gh.REPO, gh.NUMBER, budget=budget)


def line_of(text: str, start: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if line.startswith(start))


def test_the_budget_leaves_out_the_largest_code_first_then_the_largest_diffs(
    shapes: Shapes, server: gh.FakeGitHub
) -> None:
    module = shapes_module(2)
    large = f"pkg/shapes.py:{line_of(module, 'def large')}-{line_of(module, '    return total')}"
    whole = pack_for(shapes, server, 1_000_000)
    assert whole.omitted == () and whole.definitions_shown == whole.definitions_total == 5
    names = [block[0] for block in code_blocks(whole.text)]
    assert names == ["tiny()", "medium()", "large()", "Canvas"]  # draw() is shown inside Canvas
    draw = line_of(module, "    def draw")
    assert f"Also changed inside it: `Canvas.draw()` (line {draw})." in whole.text

    # One token over: only the largest definition's code goes. (The pack states its budget, so
    # its size is measured again under a budget written with as many digits.)
    whole = pack_for(shapes, server, whole.tokens)
    assert whole.omitted == ()
    one_less = pack_for(shapes, server, whole.tokens - 1)
    assert [(o.part, o.what) for o in one_less.omitted] == [("code", f"`large()` (`{large}`)")]
    assert [block[0] for block in code_blocks(one_less.text)] == ["tiny()", "medium()", "Canvas"]
    assert one_less.tokens <= whole.tokens - 1
    left_out = one_less.text.split("## Left out")[1]
    tokens = one_less.omitted[0].tokens
    assert f"- the code of 1 changed definition (about {tokens:,} tokens): `large()`" in left_out

    # Nothing left to leave out: the fixed part stays, and the pack says it is over the budget.
    floor = pack_for(shapes, server, 1)
    order = floor.omitted
    assert [o.part for o in order] == ["code"] * 5 + ["diff"] * 3 + ["description"]
    code, diffs = order[:5], order[5:8]
    for group in (code, diffs):  # each kind, largest first
        assert [o.tokens for o in group] == sorted((o.tokens for o in group), reverse=True)
    names = [o.what.split(" ")[0] for o in code]
    assert names[0] == "`large()`" and names.index("`Canvas`") < names.index("`Canvas.draw()`")
    assert diffs[0].what == "`data/table.csv`"
    assert floor.over_budget and "over the budget of 1" in floor.notes[0]
    prompt = (PROMPTS / "pr-deep-dive.md").read_text("utf-8").rstrip("\n")
    assert floor.text.startswith(prompt)
    for kept in ("## Pull request", "| `data/table.csv` | 150 | 150 |", "2. **Sections.**"):
        assert kept in floor.text
    assert code_blocks(floor.text) == [] and "```diff" not in floor.text
    assert "- the description (about " in floor.text
    assert "Left out (see the end)." in floor.text  # where the description was

    # Between the two: always the start of that same order, and within the budget.
    seen = set()
    step = max(1, (whole.tokens - floor.tokens) // 15)
    for budget in range(floor.tokens + 8, whole.tokens, step):  # +8: the budget's own digits
        pack = pack_for(shapes, server, budget)
        assert pack.omitted == order[: len(pack.omitted)], budget
        assert pack.tokens <= budget == pack.budget
        assert pack.tokens == estimate_tokens(pack.text)
        seen.add(len(pack.omitted))
    assert len(seen) >= 4  # the budgets did cut at several places of the order


def test_budget_on_the_command_line(
    shapes: Shapes,
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    whole = pack_for(shapes, server, pack_for(shapes, server, 1_000_000).tokens)
    budget = whole.tokens - 1
    args = ("pr", "acme/widgets", "7", "--prompt", "--force")
    assert run(shapes.kb, server, monkeypatch, *args, "--budget", f"{budget:,}") == 0
    out = capsys.readouterr().out
    assert f" of {budget:,} tokens: 3 of 3 file diffs, the code of 4 of 5 changed " in out
    assert "definitions; 1 left out (listed at its end)" in out
    pack = (shapes.kb.root / PACK).read_text("utf-8")
    assert estimate_tokens(pack) <= budget
    left_out = pack.split("## Left out\n")[1]
    assert f"To fit the budget of {budget:,} tokens, these were left out, in this order" in left_out
    assert "`large()` (`pkg/shapes.py:" in left_out

    assert run(shapes.kb, server, monkeypatch, *args, "--budget", "1") == 0
    err = capsys.readouterr().err
    assert "note: the pack is about" in err and "over the budget of 1," in err


def test_a_large_pull_request_names_the_first_parts_left_out_and_counts_the_rest(
    widgets: tuple[KB, gh.FixturePR], server: gh.FakeGitHub
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    more = {**pr.pull_json(server.url), "changed_files": len(pr.files) + 54}  # over GitHub's cap
    server.add(gh.PULL, gh.Reply(body=more))
    manifest = load_manifest(kb.root / "upstreams.yaml")
    with GitHubClient(api_url=server.url) as client:
        pack = build_pr_pack(client, manifest, gh.OWNER, gh.REPO, gh.NUMBER, budget=1)
    code = [o for o in pack.omitted if o.part == "code"]
    assert len(code) == pack.definitions_total == 405
    line = next(x for x in pack.text.split("\n") if x.startswith("- the code of 405 changed"))
    named = line.split("): ", 1)[1]
    assert (
        named
        == ", ".join(o.what for o in code[:NAMED_OMISSIONS]) + f", and {405 - NAMED_OMISSIONS} more"
    )
    diffs = next(x for x in pack.text.split("\n") if x.startswith("- the diffs of 246 files"))
    assert diffs.endswith(f", and {246 - NAMED_OMISSIONS} more")
    assert (
        f"- 54 of the {len(pr.files) + 54} changed files: GitHub lists at most 3,000" in pack.text
    )


# --------------------------------------------------------------------------------------------
# Errors: a clear message, and nothing written


def test_usage_errors_write_nothing_and_fetch_nothing(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    kb, pr = widgets
    gh.serve_pr(server, pr)
    output = tmp_path / "pack.md"
    assert run(kb, server, monkeypatch, "pr", "acme/widgets", "7", "--budget", "900") == 2
    assert "--budget sizes a context pack: it needs --prompt" in capsys.readouterr().err
    args = ("review", "--export-review-json", str(tmp_path / "x.md"), "--prompt", "-o", str(output))
    assert run(kb, server, monkeypatch, *args) == 2
    assert "--prompt writes a context pack, not an export" in capsys.readouterr().err
    for budget in ("0", "many"):
        with pytest.raises(SystemExit) as exited:
            run(kb, server, monkeypatch, "pr", "acme/widgets", "7", "--prompt", "--budget", budget)
        assert exited.value.code == 2
        assert "expected a" in capsys.readouterr().err
    assert server.requests == [] and not output.exists()

    output.write_text("my notes\n", "utf-8")
    assert (
        run(kb, server, monkeypatch, "pr", "acme/widgets", "7", "--prompt", "-o", str(output)) == 2
    )
    assert f"{output} already exists; pass --force" in capsys.readouterr().err
    assert output.read_text("utf-8") == "my notes\n" and server.requests == []
    args = ("pr", "acme/widgets", "7", "--prompt", "-o", str(output), "--force")
    assert run(kb, server, monkeypatch, *args) == 0
    assert output.read_text("utf-8").startswith("# Megatron-LM PR Deep Dive Prompt")


def test_offline_with_an_empty_cache_says_what_is_missing(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    kb, _ = widgets
    output = tmp_path / "pack.md"
    args = ("--prompt", "--offline", "--cache-dir", str(tmp_path / "empty"), "-o", str(output))
    for command in ("pr", "review"):
        assert run(kb, server, monkeypatch, command, "acme/widgets", "7", *args) == 1
        err = capsys.readouterr().err
        assert "offline: pull request acme/widgets#7 is not in the cache" in err
        assert "run once without --offline" in err
    assert not output.exists() and server.requests == []


def test_a_head_commit_missing_from_the_clone_is_named_with_the_fix(
    widgets: tuple[KB, gh.FixturePR],
    server: gh.FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    _, pr = widgets
    kb = KB(tmp_path / "kb")
    kb.docs.mkdir(parents=True)
    other = kb.new_upstream("widgets")
    pin = other.commit({"pkg/mod_000.py": "X = 1\n"}, "Unrelated", date="2025-01-01T00:00:00Z")
    kb.add_upstream("widgets", other, pin, web_url="https://github.com/acme/widgets")
    gh.serve_pr(server, pr)
    assert run(kb, server, monkeypatch, "pr", "acme/widgets", "7", "--prompt") == 0
    captured = capsys.readouterr()
    assert "the code of 0 of 0 changed definitions" in captured.out
    assert f"note: no changed code in the pack: the head commit {pr.head[:12]}" in captured.err
    pack = (kb.root / PACK).read_text("utf-8")
    assert code_blocks(pack) == []
    fetch = f"fetch it (`git -C {kb.root / 'cache' / 'widgets'} fetch origin pull/7/head`)"
    assert fetch in pack.split("## Left out\n")[1]
    assert "\n".join(re.findall(r"(?ms)^```diff\n(.*?)\n```$", pack)) + "\n" == pr.diff


def test_a_file_that_does_not_parse_at_the_head_is_named_and_its_diff_kept(
    server: gh.FakeGitHub, tmp_path: Path
) -> None:
    broken = kb_with_pull(
        tmp_path,
        {
            "pkg/broken.py": "def ok():\n    return 1\n",
            "pkg/fine.py": "def fine():\n    return 1\n",
        },
        {"pkg/broken.py": "def ok(:\n    return 2\n", "pkg/fine.py": "def fine():\n    return 2\n"},
    )
    pack = pack_for(broken, server, DEFAULT_BUDGET)
    assert [block[:2] for block in code_blocks(pack.text)] == [("fine()", "pkg/fine.py")]
    assert pack.omitted == (
        Omission(
            "the code of the changed definitions of `pkg/broken.py`",
            "the file does not parse as Python at the head; see its diff",
        ),
    )
    assert (
        "- the code of the changed definitions of `pkg/broken.py`: the file does not" in pack.text
    )
    assert "+def ok(:" in pack.text and pack.diffs_shown == 2


def test_placing_a_draft_that_lost_its_frontmatter_is_refused() -> None:
    @dataclass
    class Draft:
        meta: dict[str, object]
        text: str

    draft = Draft({"title": "x"}, "# no frontmatter\n")
    with pytest.raises(PrError, match="does not start with its own frontmatter"):
        place_page(draft, Placement("001-x", ("advanced",), "advanced"))
    assert draft.text == "# no frontmatter\n" and draft.meta == {"title": "x"}


def test_the_prompts_ship_in_the_package_and_the_help_states_the_default_budget() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["generator"]
    shipped = {p for pattern in globs for p in (ROOT / "generator").glob(pattern)}
    assert {PROMPTS / "pr-deep-dive.md", PROMPTS / "code-review.md"} <= shipped
    assert generate_cli.DEFAULT_BUDGET == DEFAULT_BUDGET

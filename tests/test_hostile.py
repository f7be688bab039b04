"""Hostile input: no page, manifest or file in docs/ crashes a run, hangs it or leaks through it.

The seeded corpus of scripts/hostile_corpus.py goes through verify (cold and cached), ingest
--dry-run and a real site build; each named error path then has a test of its own, showing the
clear finding or message and that nothing else was lost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from mkdocs.exceptions import PluginError

from generator.kb import pages as pages_module
from generator.kb.pages import load_yaml
from generator.site.plugin import _guard_render
from generator.site.rebuilds import RebuildMemo
from generator.site.rendered import ReusedRendering
from generator.upstream.gitstore import GitStore
from generator.yamlsafe import MAX_YAML_DEPTH, YAMLLimitError, check_depth, may_expand
from tests.conftest import KB, ROOT, mkdocs_build

sys.path.insert(0, str(ROOT / "scripts"))

import fuzz
import hostile_corpus

GOOD = "`lib/core.py:6-9`"


def findings_by_page(report: object) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for finding in report.findings:  # type: ignore[attr-defined]
        found.setdefault(finding.page, []).append((finding.check, finding.message))
    return found


# -- the fuzz corpus, through every command ------------------------------------------------------


def test_hostile_corpus_gives_findings_never_a_crash_a_hang_or_a_memory_blowup(
    tmp_path: Path,
) -> None:
    corpus = hostile_corpus.build(tmp_path, pages=150, seed=3)
    assert len(set(corpus["kinds"].values())) >= 25  # every page kind and special file is there
    runs = fuzz.fuzz_batch(tmp_path, timeout=60)
    assert [run.name for run in runs] == [
        "verify",
        "verify-cached",
        "verify-text",
        "ingest",
        "site",
    ]
    for run in runs:
        assert not run.hung, f"{run.name} hung: {run.detail}"
        assert not run.crashed, f"{run.name} crashed: {run.detail}"
        assert 0 < run.peak_mib < 500, f"{run.name} took {run.peak_mib:.0f} MiB"
    assert runs[-1].returncode == 1  # the build fails on the verifier's errors, cleanly
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "generator", "verify", "docs", "--format", "json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        ).stdout
    )
    checks = {(f["page"], f["check"]) for f in report["findings"]}
    for name, check in [
        ("fifo", "page-unreadable"),
        ("symlink-dangling", "page-unreadable"),
        ("symlink-loop", "page-unreadable"),
        ("symlink-dev-zero", "page-outside-docs"),
        ("symlink-outside-docs", "page-outside-docs"),
    ]:
        assert (f"docs/special/{name}.md", check) in checks
    # The ordinary pages between the hostile ones are checked as usual: their refs hold.
    broken = {page for page, check in checks if check in ("file-missing", "range-outside-file")}
    assert not broken & {f"docs/{rel}" for rel in corpus["ordinary"]}
    assert "This page lives outside docs/" not in json.dumps(report)


# -- files that are not pages ----------------------------------------------------------------------


@pytest.fixture
def hostile_kb(lib_kb: KB) -> KB:
    lib_kb.page("good.md", f"# Good\n\nSee {GOOD.replace('core.py:6-9', 'core.py:6-7')}.\n")
    return lib_kb


def test_special_files_and_links_out_of_docs_are_findings_and_are_not_read(
    hostile_kb: KB,
) -> None:
    docs = hostile_kb.docs
    os.mkfifo(docs / "fifo.md")
    (docs / "zero.md").symlink_to("/dev/zero")
    (docs / "dangling.md").symlink_to("nowhere.md")
    (docs / "loop.md").symlink_to("loop.md")
    secret = hostile_kb.root / "secret.md"
    secret.write_text("# Secret\n\nthe-secret-words\n", "utf-8")
    (docs / "outside.md").symlink_to(secret)
    (docs / "inside.md").symlink_to("good.md")  # a link within docs/ is a page like another
    report = hostile_kb.verify()
    found = findings_by_page(report)
    assert found["docs/fifo.md"] == [
        ("page-unreadable", "is a FIFO (named pipe), not a file of text; it was not read")
    ]
    assert found["docs/zero.md"][0][0] == "page-outside-docs"
    assert "/dev/zero" in found["docs/zero.md"][0][1]
    assert found["docs/dangling.md"] == [
        ("page-unreadable", "cannot be read: a symbolic link to nowhere.md, which does not exist")
    ]
    assert found["docs/loop.md"] == [
        ("page-unreadable", "cannot be read: a symbolic link that loops")
    ]
    assert found["docs/outside.md"][0][0] == "page-outside-docs"
    assert "docs/inside.md" not in found and "docs/good.md" not in found
    assert "the-secret-words" not in repr(report.findings)
    assert report.pages == 7


def test_a_page_over_the_size_limit_is_a_finding(
    hostile_kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages_module, "MAX_PAGE_BYTES", 1000)
    hostile_kb.page("big.md", "# Big\n\n" + "words " * 500)
    found = findings_by_page(hostile_kb.verify())
    assert found["docs/big.md"] == [
        (
            "page-unreadable",
            "is 3,007 bytes, over the 1,000 a page may have; it was not read",
        )
    ]
    assert "docs/good.md" not in found


# -- frontmatter -----------------------------------------------------------------------------------


def _nested(style: int, depth: int) -> str:
    """YAML nested ``depth`` levels deep, in one of the ways YAML nests: compact block
    sequences, flow sequences, flow mappings, indented block mappings, or both block kinds."""
    if style == 0:
        return "- " * depth + "x"
    if style == 1:
        return "[" * depth + "]" * depth
    if style == 2:
        return "{a: " * (depth - 1) + "{a: 1" + "}" * depth
    if style == 3:
        return "".join("  " * level + "k:\n" for level in range(depth - 1)) + "  " * depth + "k: 1"
    lines = []
    for level in range(depth):
        lines.append("  " * level + ("- " if level % 2 else "k:"))
    return "\n".join(lines[:-1]) + "\n" + "  " * (depth - 1) + ("- x" if depth % 2 == 0 else "k: 1")


@given(style=st.integers(0, 4), depth=st.integers(1, 90))
@settings(max_examples=300, deadline=None)
def test_frontmatter_is_refused_exactly_when_nested_deeper_than_the_limit(
    style: int, depth: int
) -> None:
    """Most frontmatter is not even looked at for its depth (too few characters that open a
    level); what is nested deeper than the limit, in any style, is still refused."""
    text = _nested(style, depth)
    events = yaml.parse(text, Loader=yaml.SafeLoader)
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    actual = deepest = 0
    for event in events:
        if isinstance(event, starts):
            actual += 1
            deepest = max(deepest, actual)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            actual -= 1
    assert deepest >= depth - 1
    if deepest > MAX_YAML_DEPTH:
        with pytest.raises(YAMLLimitError, match="nested more than 64 levels deep"):
            check_depth(text)
    else:
        check_depth(text)


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        ("a: " + "[" * 3000 + "]" * 3000, "nested more than 64 levels deep"),
        ("a: " + "{b: " * 200 + "1" + "}" * 200, "nested more than 64 levels deep"),
        (
            "\n".join(
                ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
                + [
                    f"{chr(98 + n)}: &{chr(98 + n)} [{','.join(['*' + chr(97 + n)] * 9)}]"
                    for n in range(8)
                ]
            ),
            "stands for more than 10000 values once its aliases are expanded",
        ),
        ("a: &a [*a]", "an alias refers to a value that contains it"),
        # Without an alias, as many values as that, written out.
        ("a: [" + ",".join(["1"] * 10_000) + "]", "stands for more than 10000 values"),
        ("a: !!map [1]", "a value does not have the form its YAML tag names"),
        ("a: !!timestamp x", "a value does not have the form its YAML tag names"),
        ("a: !!int abc", "invalid literal for int() with base 10: 'abc'"),
    ],
)
def test_frontmatter_beyond_bounds_is_invalid_not_a_crash(
    hostile_kb: KB, frontmatter: str, message: str
) -> None:
    hostile_kb.page("bad.md", f"---\n{frontmatter}\n---\n\n# Bad\n\nSee `lib/core.py:6`.\n", False)
    found = findings_by_page(hostile_kb.verify())
    assert len(found["docs/bad.md"]) == 1
    check, text = found["docs/bad.md"][0]
    assert check == "frontmatter-invalid"
    assert message in text


@given(text=st.text(alphabet="-:?[]{},& \nab!", max_size=40))
@settings(max_examples=3000, deadline=None)
def test_a_document_without_an_alias_stands_for_at_most_three_values_a_character(
    text: str,
) -> None:
    """Why `may_expand` lets a short document without an alias skip the walk of its values."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return
    values = 0
    nodes = [root] if root is not None else []
    while nodes:
        node = nodes.pop()
        values += 1
        if isinstance(node, yaml.SequenceNode):
            nodes.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            nodes.extend(part for pair in node.value for part in pair)
    assert values <= 3 * len(text)
    assert not may_expand(text)


def test_load_yaml_reads_ordinary_documents_with_aliases() -> None:
    assert load_yaml("base: &b {x: 1}\nother: *b\nlist: [1, [2, [3]]]") == {
        "base": {"x": 1},
        "other": {"x": 1},
        "list": [1, [2, [3]]],
    }


def test_malformed_held_refs_are_findings(hostile_kb: KB) -> None:
    for number, entry in enumerate(
        [
            "held_refs: [{text: 'lib/core.py:6-9', upstream: [a]}]",
            "held_refs: [{text: 'lib/core.py:6-9', occurrence: abc}]",
            "held_refs: 5",
            "held_refs: [null]",
            # Every key there, with values of the wrong kind: these crashed the run.
            f"held_refs: [{{ref: 'lib/core.py:6-9', upstream: [a], commit: '{'a' * 40}'}}]",
            f"held_refs: [{{ref: 'lib/core.py:6-9', upstream: lib, commit: '{'a' * 40}', "
            "occurrence: first}]",
            f"held_refs: [{{ref: 'lib/core.py:6-9', upstream: lib, commit: '{'a' * 40}', "
            "occurrence: 0}]",
        ]
    ):
        hostile_kb.page(f"held{number}.md", f"---\nupstream: lib\n{entry}\n---\n\n{GOOD}\n")
    found = findings_by_page(hostile_kb.verify())
    for number in range(7):
        assert found[f"docs/held{number}.md"], number
    assert ("pin-invalid", "docs/held5.md") in {
        (check, page) for page, checks in found.items() for check, _ in checks
    }
    assert any("occurrence 'first'" in message for _, message in found["docs/held5.md"])
    # Written by hand in quotes, a number is still one.
    hostile_kb.page(
        "held9.md",
        f"---\nupstream: lib\nheld_refs: [{{ref: 'lib/core.py:6-9', upstream: lib, "
        f"commit: '{'a' * 40}', occurrence: '2'}}]\n---\n\n{GOOD}\n",
    )
    found = findings_by_page(hostile_kb.verify())
    assert [check for check, _ in found["docs/held9.md"]] == ["held-ref-unmatched"]


# -- links, printed text ---------------------------------------------------------------------------


def test_link_targets_the_system_refuses_are_missing_links(hostile_kb: KB) -> None:
    long_name = "a" * 300
    hostile_kb.page("links.md", f"# Links\n\n[long]({long_name}.md) [nul](pa\x00th.md)\n", False)
    found = findings_by_page(hostile_kb.verify())
    assert [check for check, _ in found["docs/links.md"]] == ["link-missing", "link-missing"]


def test_text_and_annotations_escape_what_pages_hold(hostile_kb: KB) -> None:
    hostile_kb.page(
        "forge.md",
        '---\nupstream: "x\\n::error file=README.md::forged\\u001b[2J"\n---\n\n# Forge\n',
        False,
    )
    # The line break stays visible, as \n in the text and as GitHub's own escape in an
    # annotation: either way inside the one line of the finding.
    for output, shown in (("text", "x\\n::error"), ("github", "x%0A::error")):
        result = hostile_kb.cli("verify", "docs", "--format", output)
        assert result.returncode == 1
        assert "\x1b" not in result.stdout
        lines = result.stdout.splitlines()
        assert not any(line.startswith("::error file=README.md") for line in lines)
        assert any(f"{shown} file=README.md::forged\\x1b[2J" in line for line in lines)


def test_a_bug_exits_3_with_a_short_message_and_the_traceback_in_a_file(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import importlib, sys
        main = importlib.import_module("generator.cli.main")
        def broken(args):
            raise ZeroDivisionError("token ghp_secret123456 in a message")
        main.HANDLERS["verify"] = broken
        sys.exit(main.main(["verify", "docs"]))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_TOKEN": "ghp_secret123456"},
        check=False,
    )
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("internal error: ZeroDivisionError:")
    crash_file = Path(result.stderr.split("traceback kept in ")[1].split()[0].rstrip("."))
    details = crash_file.read_text("utf-8")
    crash_file.unlink()
    assert "Traceback" in details and "ZeroDivisionError" in details
    assert "ghp_secret123456" not in details and "<token hidden>" in details


def test_a_manifest_nested_without_end_is_a_configuration_error(hostile_kb: KB) -> None:
    manifest = hostile_kb.root / "upstreams.yaml"
    manifest.write_text("upstreams: " + "[" * 200_000 + "]" * 200_000 + "\n", "utf-8")
    result = hostile_kb.cli("verify", "docs")
    assert result.returncode == 2
    assert "nested more than 64 levels deep" in result.stderr


# -- one process per page, not per missing file ----------------------------------------------------


def test_missing_files_cost_one_git_log_per_page_and_renames_are_still_found(
    lib_kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    refs = "\n".join(f"- `lib/missing_{n}.py:{n + 1}`" for n in range(300))
    lib_kb.page("many.md", f"# Many\n\nSee `old/name.py:1-2` too.\n\n{refs}\n")
    lib_kb.upstreams["lib"]["prefixes"] = ["lib/", "data/", "old/"]
    lib_kb.write_manifest()
    calls: list[tuple[str, ...]] = []
    real_git = GitStore.git

    def counted(self: GitStore, *args: str) -> bytes | None:
        calls.append(args)
        return real_git(self, *args)

    monkeypatch.setattr(GitStore, "git", counted)
    found = findings_by_page(lib_kb.verify())["docs/many.md"]
    assert sum(check == "file-missing" for check, _ in found) == 301
    assert any("git records it as renamed to 'lib/renamed.py'" in text for _, text in found)
    assert len([call for call in calls if call[0] == "log"]) == 1
    assert len([call for call in calls if call[0] == "diff"]) == 1


# -- the site and ingest ---------------------------------------------------------------------------


def test_site_build_fails_cleanly_naming_pages_it_cannot_use(tmp_path: Path) -> None:
    hostile_corpus.build(tmp_path, pages=0, seed=1, kinds=["yaml-tags"])
    docs = tmp_path / "docs"
    (docs / "latin.md").write_bytes(b"---\ntitle: t\nupstream: lib\n---\n\ncaf\xe9\n")
    os.mkfifo(docs / "pipe.png")
    (docs / "zero.js").symlink_to("/dev/zero")
    result = mkdocs_build(tmp_path, "--strict")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    assert "docs/latin.md:6:4: error[page-encoding]" in output
    assert "'pipe.png' is not copied into the site" in output
    assert "'zero.js' is not copied into the site" in output
    (docs / "latin.md").unlink()
    (docs / "deep.md").write_text(
        "".join(f"{'  ' * level}- level {level}\n" for level in range(1500)), "utf-8"
    )
    result = mkdocs_build(tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    assert "docs/deep.md:101:1: error[page-too-deep]" in output


def test_a_link_to_a_directory_above_it_stops_the_build_before_mkdocs_follows_it(
    tmp_path: Path,
) -> None:
    """``docs/sub/loop -> ..``: MkDocs follows links to directories while it finds the pages,
    level after level (with two such links, twice as many at each level). The build stops
    first, naming the links, and leaves the site as it was."""
    hostile_corpus.build(tmp_path, pages=0, seed=1, kinds=["yaml-tags"])
    docs = tmp_path / "docs"
    (docs / "sub").mkdir()
    (docs / "sub" / "inner.md").write_text("# Inner\n\nText.\n", "utf-8")
    (docs / "sub" / "loop").symlink_to("..")
    (docs / "sub" / "self").symlink_to(".")
    (docs / "elsewhere").symlink_to(tmp_path / "docs" / "sub")  # a link, but no loop
    site = tmp_path / "site"
    site.mkdir()
    (site / "kept.html").write_text("from the last build", "utf-8")
    started = time.monotonic()
    result = mkdocs_build(tmp_path)
    output = result.stdout + result.stderr
    assert time.monotonic() - started < 60
    assert result.returncode == 1, output
    assert "Traceback" not in output
    assert "'sub/loop', 'sub/self' links to a directory that holds it" in output
    assert "'elsewhere'" not in output
    assert [path.name for path in site.iterdir()] == ["kept.html"]
    (docs / "sub" / "loop").unlink()
    (docs / "sub" / "self").unlink()
    result = mkdocs_build(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site / "sub" / "inner" / "index.html").is_file()


def test_a_page_the_renderer_fails_on_is_a_build_error_naming_it() -> None:
    class Page:  # what `_guard_render` uses of MkDocs' page: its file and its render
        file = type("File", (), {"src_uri": "part/deep.md"})()

        def render(self, config: object, files: object) -> None:
            raise RecursionError("maximum recursion depth exceeded")

    page = Page()
    _guard_render(page, ReusedRendering(RebuildMemo(keep=False)))  # type: ignore[arg-type]
    with pytest.raises(PluginError) as raised:
        page.render(None, None)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "knowledge-base: 'part/deep.md' cannot be rendered (RecursionError in the Markdown "
        "renderer): simplify its nesting or split its longest lines"
    )


def test_ingest_refuses_what_is_not_a_page_and_writes_nothing(hostile_kb: KB) -> None:
    outside = hostile_kb.root / "notes"
    outside.mkdir()
    os.mkfifo(outside / "pipe.md")
    (outside / "zero.md").symlink_to("/dev/zero")
    before = sorted(p.name for p in hostile_kb.docs.rglob("*"))
    for name in ("pipe.md", "zero.md"):
        result = hostile_kb.cli("ingest", str(outside / name))
        assert result.returncode == 2, result.stderr
        assert "not a file" in result.stderr
    assert sorted(p.name for p in hostile_kb.docs.rglob("*")) == before


def test_a_page_of_over_10000_references_is_checked_up_to_the_limit_and_says_so(
    hostile_kb: KB,
) -> None:
    code = (1, 3, 6, 7, 10, 11, 12, 14, 15)  # (the lines of lib/core.py that are not blank)
    refs = " ".join(f"`lib/core.py:{code[n % len(code)]}`" for n in range(10_005))
    hostile_kb.page("dump.md", f"# Dump\n\n{refs}\n", False)
    for cache in (True, True, False):  # written, then read from the cache, then afresh
        report = hostile_kb.verify("docs/dump.md", cache=cache)
        assert len(report.refs) == 10_000
        assert [(f.check, f.message) for f in report.findings] == [
            (
                "page-too-many-refs",
                "cites 10,005 code references; only the first 10,000 were checked",
            )
        ]


def test_a_permalink_with_reflog_syntax_is_a_finding_and_later_reads_still_work(
    hostile_kb: KB,
) -> None:
    """`main@{5}` with a shorter reflog made `git cat-file --batch` exit; every read after it,
    of every page, failed with it."""
    web = "https://github.com/acme/lib/blob"
    hostile_kb.page(
        "reflog.md",
        f"# Reflog\n\n{web}/main@{{5}}/lib/core.py#L6-L7 and {web}/HEAD@{{99}}/lib/core.py#L6,\n"
        f"{web}/main@{{-1}}/lib/core.py#L6 and {web}/main@{{upstream}}/lib/core.py#L6.\n",
    )
    result = hostile_kb.cli("verify", "docs", "--no-cache")
    assert result.returncode == 0, result.stderr  # warnings only; it was exit 3, a crash
    assert result.stdout.count("warning[unpinned-permalink]") == 4
    # Every reference was checked, good.md's too, and none of the four is taken for missing.
    assert "checked 2 pages, 5 code references and 0 links: 0 errors, 4 warnings" in result.stdout

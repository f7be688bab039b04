"""The command line: output formats, exit codes and configuration errors, run as a user would."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.cli.main import COMMAND_PARSERS, HANDLERS
from tests.conftest import ROOT


@pytest.fixture
def broken_kb(lib_kb):
    lib_kb.page("a.md", "# A\n\nGood lib/core.py:6-7, bad lib/core.py:99, `torch/x.py:1`\n")
    return lib_kb


def test_clean_run_exits_zero_with_summary(lib_kb):
    lib_kb.page("a.md", "# A\n\nlib/core.py:6-7 and [self](#a)\n")
    result = lib_kb.cli("docs", script=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "checked 1 page, 1 code reference and 1 link: all good\n"


def test_text_format_and_exit_one_on_errors(broken_kb):
    result = broken_kb.cli("verify", "docs/")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("docs/a.md:3:27: error[range-outside-file] line 99 goes past")
    assert lines[1].startswith("docs/a.md:3:44: warning[unattributed] no configured upstream")
    assert lines[2].startswith("  = help: add its upstream or prefix to upstreams.yaml")
    assert lines[-1] == "checked 1 page, 3 code references and 0 links: 1 error, 1 warning"
    assert "\x1b[" not in result.stdout


def test_strict_fails_on_warnings_only(lib_kb):
    lib_kb.page("a.md", "`torch/x.py:1`\n")
    assert lib_kb.cli("verify", "docs").returncode == 0
    assert lib_kb.cli("verify", "docs", "--strict").returncode == 1


def test_list_refs_in_text_lists_every_reference_before_the_findings(broken_kb):
    """It did nothing without --format json, and said nothing about it."""
    result = broken_kb.cli("verify", "docs", "--list-refs")
    assert result.returncode == 1
    pin = broken_kb.pin[:7]
    listed = result.stdout.splitlines()[:3]
    assert [line.split(": ", 1)[1] for line in listed] == [
        f"lib/core.py:6-7 -> lib@{pin} lib/core.py:6-7 (inline): ok",
        f"lib/core.py:99 -> lib@{pin} lib/core.py:99 (inline): error (range-outside-file)",
        "torch/x.py:1 -> torch/x.py:1 (inline): warning (unattributed)",
    ]
    assert listed[1].startswith("docs/a.md:3:27: ")
    broken_kb.page("b.md", "`lib/core.py::Beta.gamma`\n")
    symbol = broken_kb.cli("verify", "docs/b.md", "--list-refs").stdout.splitlines()
    assert f"lib/core.py::Beta.gamma -> lib@{pin} lib/core.py Beta.gamma (symbol): ok" in symbol[0]
    assert "error[range-outside-file]" in result.stdout  # the findings follow


def test_list_refs_is_refused_with_github_annotations(broken_kb):
    result = broken_kb.cli("verify", "docs", "--list-refs", "--format", "github")
    assert result.returncode == 2
    assert "--list-refs lists references in text or JSON" in result.stderr
    assert result.stdout == ""


def test_json_schema_and_list_refs(broken_kb):
    result = broken_kb.cli("verify", "docs", "--format", "json", "--list-refs")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["version"] == 1
    assert data["summary"] == {"pages": 1, "refs": 3, "links": 0, "errors": 1, "warnings": 1}
    finding = data["findings"][0]
    assert finding == {
        "severity": "error",
        "check": "range-outside-file",
        "page": "docs/a.md",
        "line": 3,
        "column": 27,
        "text": "lib/core.py:99",
        "upstream": "lib",
        "commit": broken_kb.pin,
        "path": "lib/core.py",
        "start": 99,
        "end": 99,
        "message": finding["message"],
        "suggestion": None,
    }
    assert [(r["text"], r["status"], r["checks"]) for r in data["refs"]] == [
        ("lib/core.py:6-7", "ok", []),
        ("lib/core.py:99", "error", ["range-outside-file"]),
        ("torch/x.py:1", "warning", ["unattributed"]),
    ]
    assert set(data["refs"][0]) == {
        "page",
        "line",
        "column",
        "text",
        "upstream",
        "commit",
        "path",
        "start",
        "end",
        "status",
        "checks",
        "style",
    }
    without = json.loads(broken_kb.cli("verify", "docs", "--format", "json").stdout)
    assert "refs" not in without
    # One finding and one reference per line, so that grep finds a whole one.
    lines = result.stdout.splitlines()
    items = [json.loads(line.strip().rstrip(",")) for line in lines if line.startswith("    {")]
    assert items == [*data["findings"], *data["refs"]]
    assert lines[0] == "{" and lines[-1] == "}"


def test_page_path_is_reported_as_given(broken_kb):
    data = json.loads(broken_kb.cli("verify", "docs/a.md", "--format", "json").stdout)
    assert {f["page"] for f in data["findings"]} == {"docs/a.md"}


def test_without_paths_verify_checks_the_docs_directory_mkdocs_names(broken_kb, tmp_path):
    """`kb verify` alone checks the knowledge base's pages wherever it runs in it, in the
    directory mkdocs.yml names; a page outside it is checked against its upstreams."""
    root = broken_kb.root
    (root / "docs").rename(root / "content")
    (root / "mkdocs.yml").write_text("site_name: Notes\ndocs_dir: content\n", "utf-8")
    (root / "content" / "deeper").mkdir()

    def verify_in(cwd: Path, *args: str) -> tuple[int, set[str]]:
        result = subprocess.run(
            [sys.executable, "-m", "generator", "verify", "--format", "json", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
            check=False,
        )
        assert result.returncode in (0, 1), result.stderr
        return result.returncode, {f["page"] for f in json.loads(result.stdout)["findings"]}

    assert verify_in(root) == (1, {"content/a.md"})
    assert verify_in(root / "content" / "deeper") == (1, {"../a.md"})
    draft = tmp_path / "notes" / "draft.md"
    draft.parent.mkdir()
    draft.write_text("# Draft\n\nSee lib/core.py:99.\n", "utf-8")
    assert verify_in(root, str(draft)) == (1, {str(draft)})


def test_github_annotations(broken_kb):
    result = broken_kb.cli("verify", "docs", "--format", "github")
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "::error file=docs/a.md,line=3,col=27,title=range-outside-file::line 99 goes past"
    )
    assert lines[1].startswith("::warning file=docs/a.md,line=3,col=44,title=unattributed::")
    assert "%0Ahelp: add its upstream" in lines[1]


def test_empty_docs_directory_is_a_usage_error(lib_kb):
    result = lib_kb.cli("verify", "docs")
    assert result.returncode == 2
    assert "no Markdown pages (*.md) found in docs" in result.stderr
    assert result.stdout == ""


def test_missing_path_and_missing_manifest(lib_kb, tmp_path):
    result = lib_kb.cli("verify", "nowhere")
    assert result.returncode == 2
    assert "nowhere: no such file or directory" in result.stderr
    (lib_kb.root / "upstreams.yaml").unlink()
    lib_kb.page("a.md", "x\n")
    result = lib_kb.cli("verify", "docs")
    assert result.returncode == 2
    assert "no upstreams.yaml found" in result.stderr
    assert "--manifest" in result.stderr


def test_missing_clone_names_the_key_and_the_fix(broken_kb):
    shutil.rmtree(broken_kb.root / "cache" / "lib")
    result = broken_kb.cli("verify", "docs")
    assert result.returncode == 0  # not checked is not wrong, and not a configuration error
    assert (
        "upstreams.yaml:3:1: warning[upstream-not-cloned] 2 references into 'lib' are not "
        "checked: it has no clone at cache/lib\n  = help: kb upstreams fetch lib"
    ) in result.stdout


def test_pin_not_in_clone_names_the_pin_line(broken_kb):
    broken_kb.upstreams["lib"]["pin"] = "c" * 40
    broken_kb.write_manifest()
    result = broken_kb.cli("verify", "docs")
    assert result.returncode == 2
    assert "upstreams.yaml:6: upstreams.lib.pin: pinned commit cccc" in result.stderr
    assert "upstreams fetch lib" in result.stderr


def test_manifest_error_exit_two_and_nothing_written(broken_kb):
    manifest = broken_kb.root / "upstreams.yaml"
    manifest.write_text(manifest.read_text() + "bogus: 1\n")
    before = {p: p.read_bytes() for p in broken_kb.docs.rglob("*")}
    result = broken_kb.cli("verify", "docs")
    assert result.returncode == 2
    assert "upstreams.yaml:9: bogus: unknown key 'bogus'" in result.stderr
    assert {p: p.read_bytes() for p in broken_kb.docs.rglob("*")} == before


def test_usage_errors_exit_two(lib_kb):
    lib_kb.page("a.md", "x\n")
    assert lib_kb.cli("verify", "--format", "xml").returncode == 2
    result = lib_kb.cli("verify", "docs", "--ignore", "no-such-check")
    assert result.returncode == 2
    assert "unknown check id(s) to ignore: no-such-check" in result.stderr
    late = lib_kb.cli("verify", "docs", "-v")
    assert late.returncode == 2 and "hint: -v goes before the command" in late.stderr
    # A misspelt option: the command's usage (not the list of commands), and the option meant.
    typo = lib_kb.cli("verify", "--formt", "json")
    assert typo.returncode == 2 and typo.stderr.startswith("usage: kb verify ")
    assert "unrecognized arguments: --formt (did you mean --format?)" in typo.stderr
    typo = lib_kb.cli("upstreams", "fetch", "--bogus")
    assert typo.returncode == 2 and typo.stderr.startswith("usage: kb upstreams fetch ")
    nowhere = lib_kb.cli("verify", "--docs-root", "/nonexistent")
    assert nowhere.returncode == 2
    assert "error: /nonexistent: no such directory to verify" in nowhere.stderr
    missing = lib_kb.cli("verify", "--manifest", "nope.yaml")
    assert missing.returncode == 2 and "kb init DIRECTORY starts one" in missing.stderr


def test_help_and_list_checks(lib_kb):
    for args, script in (
        (["--help"], True),
        (["--help"], False),
        (["verify", "--help"], False),
        (["upstreams", "fetch", "--help"], False),
    ):
        result = lib_kb.cli(*args, script=script)
        assert result.returncode == 0
        assert "usage:" in result.stdout
    listed = lib_kb.cli("verify", "--list-checks").stdout
    assert "range-outside-file" in listed and "warning" in listed


def test_the_help_and_a_mistyped_command_list_every_command(lib_kb):
    """A run builds only its command's parser; what lists the commands builds them all."""
    commands = [name for _, names in COMMAND_PARSERS for name in names]
    for args in (["--help"], ["-h", "verify"], ["-vh", "verify"], ["--he", "sync"]):
        result = lib_kb.cli(*args)
        assert result.returncode == 0, args
        listing = result.stdout.split("positional arguments:")[1]
        assert all(f"\n    {command} " in listing for command in commands), args
    # What argparse takes for the command though it starts with a dash, too.
    for mistyped in ("verfy", "--", "-", "-1"):
        result = lib_kb.cli(mistyped, "verify", "docs")
        assert result.returncode == 2
        assert f"invalid choice: '{mistyped}' (choose from " + ", ".join(map(repr, commands)) in (
            result.stderr
        ), mistyped
    # Options before the command are the main parser's; the command's own help is its own.
    result = lib_kb.cli("-v", "verify", "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: kb verify ")


def test_each_command_parser_adds_the_commands_it_is_listed_with():
    for add_parsers, names in COMMAND_PARSERS:
        commands = argparse.ArgumentParser().add_subparsers()
        add_parsers(commands)
        assert tuple(commands.choices) == names
    assert sorted(name for _, names in COMMAND_PARSERS for name in names) == sorted(HANDLERS)


def test_verify_on_a_page_without_governance_leaves_the_governance_modules_unread(lib_kb):
    """Their import took a tenth of a pre-commit hook's run over one page."""
    lib_kb.page("a.md", "# A\n\nlib/core.py:6-7\n")
    probe = (
        "import sys\n"
        "from generator.cli.main import main\n"
        "code = main(['verify', 'docs/a.md'])\n"
        "print(code, sorted(m for m in sys.modules if m.startswith('generator.kb.')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=lib_kb.root, capture_output=True, text=True, env=env
    )
    assert result.stdout.splitlines()[-1] == (
        "0 ['generator.kb.governed', 'generator.kb.pages']"
    ), result.stderr


def test_upstreams_list_says_when_none_is_declared(kb):
    """It printed nothing, and exited 0: an empty manifest looked like a broken command."""
    kb.write_manifest()
    result = kb.cli("upstreams", "list")
    assert result.returncode == 0
    assert result.stdout == (
        "no upstream is declared in upstreams.yaml; declare one: kb upstreams add NAME URL\n"
    )


def test_upstreams_fetch_clones_from_a_local_remote(kb, tmp_path):
    from generator.upstream.gitbuild import RepoBuilder

    remote = RepoBuilder.init(tmp_path / "remote")
    pin = remote.commit({"pkg/a.py": "A = 1\n"}, "init")
    kb.upstreams["pkg"] = {"url": str(remote.path), "pin": pin}
    kb.write_manifest()
    result = kb.cli("upstreams", "fetch")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"pkg: cloned, main at {pin[:12]}, pin present")
    assert not (kb.root / "cache" / "pkg" / "pkg").exists()  # no checkout: blobs are read from git
    kb.page("a.md", "pkg/a.py:1\n")
    assert kb.cli("verify", "docs").returncode == 0
    newer = remote.commit({"pkg/b.py": "B = 2\n"}, "more")
    result = kb.cli("upstreams", "fetch", "pkg")
    assert result.stdout.startswith(f"pkg: fetched, main at {newer[:12]}")
    assert "pkg" in kb.cli("upstreams", "list").stdout
    result = kb.cli("upstreams", "fetch", "ghost")
    assert result.returncode == 2 and "unknown upstream: ghost" in result.stderr


def test_a_reader_that_stops_early_gets_no_traceback(lib_kb):
    lib_kb.page("a.md", "lib/core.py:1\n")
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head -1` that has already exited
    try:
        result = subprocess.run(
            [sys.executable, "-m", "generator", "verify", "docs"],
            cwd=lib_kb.root,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr


def test_buffered_output_is_all_written_before_the_process_ends(broken_kb):
    # `kb` ends without the interpreter's teardown, which would have flushed stdout: with a
    # pipe, Python buffers what is printed (unless PYTHONUNBUFFERED says otherwise).
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "generator", "verify", "docs"]
    result = subprocess.run(
        [*command, "--format", "json"],
        cwd=broken_kb.root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert [f["check"] for f in findings] == ["range-outside-file", "unattributed"]
    read_end, write_end = os.pipe()
    os.close(read_end)  # a reader gone before anything was flushed
    try:
        gone = subprocess.run(
            command,
            cwd=broken_kb.root,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            check=False,
        )
    finally:
        os.close(write_end)
    assert gone.returncode == 141
    assert "Traceback" not in gone.stderr and "BrokenPipe" not in gone.stderr

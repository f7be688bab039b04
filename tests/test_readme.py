"""Every command the README shows is one the product accepts, and the runnable ones run.

The README's shell examples come in two sorts: examples, run here as written in a copy of the
demo knowledge base (exit status 0 or 1: a usage error or a crash fails), and synopses
(``[--option]``, ``OWNER/REPO N``, ``<rev>``), whose command and options are checked against the
command line's parser, with each placeholder given a sample value.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.cli.main import build_parser
from generator.cli.verify import verify_parser
from tests.conftest import ROOT

README = ROOT / "README.md"
_SHELL_BLOCK = re.compile(r"^```(?:sh|bash)\n(.*?)^```", re.M | re.S)
_PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_./-]*|<[^>]*>|N|\.\.\.|…)$")
"""A token standing for a value (``NAME``, ``OWNER/REPO``, ``<rev>``, ``N``) or for more."""
_SAMPLES = {"OWNER/REPO": "acme/lib", "N": "1", "SHA": "0" * 40, "COMMIT": "0" * 40}


@dataclass(frozen=True)
class Example:
    line: int
    words: tuple[str, ...]

    @property
    def synopsis(self) -> bool:
        return any("[" in word or "|" in word or _PLACEHOLDER.match(word) for word in self.words)

    @property
    def runnable(self) -> bool:
        """Not a synopsis, and needing nothing this machine lacks: a server on the internet
        (``https://github.com/...``) or the reader's own files (``~/notes/``)."""
        return not self.synopsis and not any(
            "://" in word or word.startswith("~") for word in self.words
        )

    def __str__(self) -> str:
        return f"README.md:{self.line}: {shlex.join(self.words)}"


def examples() -> list[Example]:
    """Every ``kb``, ``python -m generator`` and ``python scripts/...`` line of a shell block."""
    text = README.read_text("utf-8")
    found = []
    for block in _SHELL_BLOCK.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        logical = block.group(1).replace("\\\n", "  ")  # continuation lines join theirs
        for offset, line in enumerate(logical.splitlines()):
            tokens = shlex.split(line, comments=True)
            commands: list[list[str]] = [[]]
            for token in tokens:  # `a && b` is two commands
                if token == "&&":
                    commands.append([])
                else:
                    commands[-1].append(token)
            for command in commands:
                words = tuple(command)
                ours = words[:1] == ("kb",) or words[:3] == ("python", "-m", "generator")
                script = words[:1] == ("python",) and words[1:2] and words[1].startswith("scripts/")
                if ours or script:
                    found.append(Example(first + offset, words))
    return found


def _arguments(example: Example) -> tuple[str, list[str]]:
    """Which parser reads ``example`` (``kb`` or ``verify_code_refs``) and its arguments, with
    optional groups left out and placeholders given sample values."""
    words = list(example.words)
    if words[0] == "kb":
        words = words[1:]
        parser = "kb"
    elif words[1] == "-m":
        words = words[3:]
        parser = "kb"
    else:
        parser = Path(words[1]).stem
        words = words[2:]
    kept: list[str] = []
    depth = 0
    for word in words:
        if word in ("...", "…"):  # "and so on"
            continue
        word = word.removesuffix("...").removesuffix("…")
        depth += word.count("[")
        if depth == 0:
            kept.append(_SAMPLES.get(word, "sample" if _PLACEHOLDER.match(word) else word))
        depth -= word.count("]")
    return parser, kept


def test_the_readme_shows_commands_of_every_kind():
    found = examples()
    assert len(found) >= 20
    assert any(example.synopsis for example in found)
    assert any(not example.synopsis for example in found)


@pytest.mark.parametrize("example", examples(), ids=str)
def test_every_readme_command_is_accepted_by_the_command_line(example):
    parser_name, arguments = _arguments(example)
    parser = build_parser() if parser_name == "kb" else verify_parser(parser_name + ".py")
    try:
        parser.parse_args(arguments)
    except SystemExit as error:
        if error.code:  # --help and --version exit 0
            pytest.fail(f"{example}: the command line refuses {arguments}")


def test_every_runnable_readme_example_runs_as_written(tmp_path, demo_kb):
    """In a copy of the demo knowledge base, in the README's order, as a user pastes them."""
    root = demo_kb
    shutil.copytree(ROOT / "scripts", root / "scripts")
    shutil.copytree(ROOT / "specs", root / "specs")
    shutil.copytree(ROOT / ".lean-spec", root / ".lean-spec")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # `python` and `kb` as a user's activated virtualenv has them (a symbolic link to the
    # virtualenv's python would not find the virtualenv).
    for name, command in (("python", ""), ("kb", " -m generator")):
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)}{command} "$@"\n')
        wrapper.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "NO_MKDOCS_2_WARNING": "1",
    }
    ran, failed = 0, []
    for example in examples():
        if not example.runnable:
            continue
        result = subprocess.run(
            shlex.join(example.words),
            shell=True,
            cwd=root,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        if result.returncode not in (0, 1) or "Traceback" in result.stderr:
            failed.append(f"{example} (exit {result.returncode})\n{result.stderr[-600:]}")
        ran += 1
    assert not failed, "\n".join(failed)
    assert ran >= 10

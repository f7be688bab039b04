"""``init``: start a knowledge base of one's own."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

from generator.cli.common import EXIT_OK


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    init = commands.add_parser(
        "init",
        help="start a knowledge base of your own in a new directory",
        description="Write a new knowledge base into DIRECTORY: mkdocs.yml (the site, with the "
        "knowledge-base plugin), upstreams.yaml (no upstream yet), docs/index.md (a home page "
        "listing the learning paths and pages), a first spec with LeanSpec's configuration, a "
        ".gitignore, a pre-commit configuration and a GitHub workflow that verifies, builds and "
        "publishes the site. Nothing is overwritten: if any of these files exists, nothing is "
        "written (exit status 2).",
    )
    init.add_argument(
        "directory",
        type=_directory,
        metavar="DIRECTORY",
        help="where to create it (made if missing; '.' for the current directory)",
    )
    init.add_argument(
        "--name", metavar="NAME", help="the site's name (default: from the directory's name)"
    )


def _directory(text: str) -> Path:
    """DIRECTORY as given: an empty one (an unset variable in ``kb init "$DIR"``) is refused
    rather than taken for the current directory."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a directory ('.' for this one)")
    return Path(text)


def run_init(args: argparse.Namespace) -> int:
    from generator.kb.scaffold import init_knowledge_base

    made = init_knowledge_base(args.directory, args.name)
    shown = os.path.relpath(made.root)
    print(f"Created the knowledge base '{made.site_name}' in {shown}/:")
    for rel in made.files:
        print(f"  {rel.as_posix()}")
    # Sync refuses to rewrite pages git does not track, and the hook runs on commits.
    repository = (
        ""
        if _in_repository(made.root)
        else "  git init && git add -A && git commit -m 'Start the knowledge base'\n"
    )
    print(
        "\nNext:\n"
        f"  cd {shown}\n"
        f"{repository}"
        "  kb upstreams add NAME URL --prefix NAME/   # the code the pages cite: cloned, pinned\n"
        "  kb ingest ~/notes/                         # import analyses written elsewhere\n"
        "  kb new page --kind source-analysis --spec "
        f"{made.spec_id} --title 'A first page'   # or write one\n"
        "  kb verify                                  # check every reference, link and anchor\n"
        "  mkdocs serve                               # the site on http://127.0.0.1:8000"
    )
    if not made.requirement_known:
        print(
            "\nBefore the workflow can run on GitHub: kb-generator was installed here from a "
            "local checkout, so edit requirements.txt to say where CI gets it."
        )
    return EXIT_OK


def _in_repository(directory: Path) -> bool:
    """Whether ``directory`` is inside a git working tree."""
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"],
            cwd=directory,
            capture_output=True,
            check=False,
        )
    except OSError:  # no git at all
        return False
    return found.returncode == 0


HANDLERS = {"init": run_init}

"""`ingest` of a corpus written for GitHub: no page is worse for the import.

The same corpus is verified as it was written (copied into the docs) and after `ingest`; every
finding after the import must have been there before it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from generator.cli import main
from generator.generate.ingest import stated_date
from generator.kb.pages import read_page
from generator.verification.pipeline import verify
from tests.conftest import KB, ROOT
from tests.corpora import INDEX, LOCAL_ROOT, GithubCorpus, write_github_corpus

PIN = "79841b498438a80cf90547c62a841f6822639622"  # minitrain v0.1, as upstreams.yaml pins it
SPEC = "001-minitrain-knowledge-base"
LINK_CHECKS = {"link-missing", "anchor-missing"}
Key = tuple[str, str, str]


@pytest.fixture
def demo(demo_kb: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo knowledge base with its specs, as the working directory."""
    shutil.copytree(ROOT / "specs", demo_kb / "specs")
    shutil.copytree(ROOT / ".lean-spec", demo_kb / ".lean-spec")
    monkeypatch.chdir(demo_kb)
    return demo_kb


@pytest.fixture
def corpus(tmp_path: Path, demo_clones: Path) -> GithubCorpus:
    return write_github_corpus(tmp_path / "notes", demo_clones / "minitrain", PIN)


def findings() -> Counter[Key]:
    """Every finding of `verify docs`, without its position: the import adds frontmatter."""
    return Counter((f.page, f.check, f.message) for f in verify(["docs"]).findings)


def verified_as_written(root: Path, corpus: GithubCorpus) -> Counter[Key]:
    """The findings of the corpus copied into the docs as it is, then taken out again."""
    analysis = root / "docs" / "analysis"
    for page in corpus.pages:
        shutil.copy(corpus.directory / page.name, analysis / page.name)
    before = findings()
    for page in corpus.pages:
        (analysis / page.name).unlink()
    return before


def kebab_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.removesuffix(".md").lower()).strip("-") + ".md"


def broken_links(found: Counter[Key], corpus: GithubCorpus, name_of: dict[str, str]) -> list[Key]:
    """Link findings about the corpus's own links (its footnotes are not among them)."""
    targets = {name_of[target.split("#")[0]] for _page, target in corpus.links if target[0] != "#"}
    anchors = {target for _page, target in corpus.links}
    return [
        key
        for key in found
        if key[1] in LINK_CHECKS
        and (any(t in key[2] for t in targets) or any(f"'{a}'" in key[2] for a in anchors))
    ]


def test_a_github_corpus_keeps_its_names_links_and_dates_and_gains_no_finding(
    demo: Path, corpus: GithubCorpus, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(corpus.pages) >= 15 and corpus.absolute_refs >= 15
    names = {page.name: page.name for page in corpus.pages}
    before = verified_as_written(demo, corpus)
    assert broken_links(before, corpus, names) == []  # every link works on GitHub

    # (1: the footnotes, which the verifier takes for links, before the import as after it)
    assert main(["ingest", str(corpus.directory), "--spec", SPEC, "--format", "json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    after = findings()

    assert after - before == Counter()  # nothing the import caused
    assert broken_links(after, corpus, names) == []
    analysis = demo / "docs" / "analysis"
    for page in corpus.pages:
        written = read_page(analysis / page.name)  # the name it had
        assert written.meta["created"] == page.created, page.name  # the date it states
        assert LOCAL_ROOT not in written.body, page.name  # every laptop path made canonical
        if page.pr is not None:
            assert written.meta["kind"] == "pr-deep-dive"
        elif page.name == INDEX:
            assert written.meta["kind"] == "index"
        else:  # PR numbers mentioned late do not make a PR page
            assert written.meta["kind"] == "source-analysis", page.name
    assert any(page.mentions_pr_late for page in corpus.pages)
    pages = {Path(entry["page"]).name: entry for entry in report["pages"]}
    tables_only = next(page.name for page in corpus.pages if page.tables_only)
    assert pages[tables_only]["refs"] == 2
    assert not [
        f for entry in pages.values() for f in entry["findings"] if f["check"] == "no-code-refs"
    ]
    assert all(entry["written"] for entry in pages.values())
    # Links to pages written later in the run were checked once those pages were there.
    reported = Counter(
        (entry["page"], f["check"], f["message"])
        for entry in pages.values()
        for f in entry["findings"]
    )
    assert broken_links(reported, corpus, names) == []


def test_rename_kebab_rewrites_every_link_to_the_renamed_pages_in_the_corpus_and_the_docs(
    demo: Path, corpus: GithubCorpus, capsys: pytest.CaptureFixture[str]
) -> None:
    home = demo / "docs" / "notes.md"
    home.write_text(
        "---\ntitle: Notes\nkind: index\nspec: 001-minitrain-knowledge-base\n---\n# Notes\n\n"
        "The [reading list](analysis/README.md#learning-path) and "
        f"[a page](./analysis/{corpus.pages[3].name}).\n",
        "utf-8",
    )
    renamed = {page.name: kebab_name(page.name) for page in corpus.pages}
    assert any(old != new for old, new in renamed.items())
    before = Counter(
        {
            (re.sub(r"[^/]+\.md$", lambda m: renamed.get(m[0], m[0]), page), check, message): n
            for (page, check, message), n in verified_as_written(demo, corpus).items()
        }
    )

    assert main(["ingest", str(corpus.directory), "--spec", SPEC, "--rename", "kebab"]) in (0, 1)
    out = capsys.readouterr().out
    after = findings()

    assert after - before == Counter()
    assert broken_links(after, corpus, renamed) == []
    analysis = demo / "docs" / "analysis"
    assert sorted(p.name for p in analysis.iterdir() if p.name in renamed) == []  # no old name
    for page, target in corpus.links:
        path, _, anchor = target.partition("#")
        moved = renamed[path] + (f"#{anchor}" if anchor else "") if path else target
        assert f"]({moved})" in (analysis / renamed[page]).read_text("utf-8"), (page, target)
    text = home.read_text("utf-8")
    assert "[reading list](analysis/readme.md#learning-path)" in text
    assert f"[a page](./analysis/{renamed[corpus.pages[3].name]})" in text
    assert "docs/notes.md (rewrote 2 links to renamed pages)" in out


def test_a_renaming_run_writes_nothing_when_one_file_cannot_be_ingested(
    demo: Path, corpus: GithubCorpus, capsys: pytest.CaptureFixture[str]
) -> None:
    home = demo / "docs" / "notes.md"
    home.write_text("# Notes\n\nThe [reading list](analysis/README.md).\n", "utf-8")
    (corpus.directory / "broken_page.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8\n")
    analysis = demo / "docs" / "analysis"
    before = sorted(analysis.iterdir())

    assert main(["ingest", str(corpus.directory), "--rename", "kebab"]) == 2
    err = capsys.readouterr().err
    assert "broken_page.md:3:1: page is not valid UTF-8" in err
    assert "nothing was written: 1 file could not be ingested" in err
    assert sorted(analysis.iterdir()) == before
    assert home.read_text("utf-8") == "# Notes\n\nThe [reading list](analysis/README.md).\n"

    # Two files that would get one name: one says so, and again nothing is written.
    (corpus.directory / "broken_page.md").unlink()
    twin = corpus.pages[1].name.replace("_", "-").upper().replace(".MD", ".md")
    (corpus.directory / twin).write_text("# Another\n", "utf-8")
    assert main(["ingest", str(corpus.directory), "--rename", "kebab"]) == 2
    err = capsys.readouterr().err
    assert f"would both be docs/analysis/{kebab_name(twin)}" in err
    assert sorted(analysis.iterdir()) == before


def test_an_absolute_path_outside_the_upstreams_prefixes_stays_with_the_reason(
    kb: KB, tmp_path: Path
) -> None:
    repo = kb.new_upstream("proj")
    pin = repo.commit(
        {
            "pkg/mod.py": "def run():\n    return 1\n",
            "requirements.txt": "torch\nnumpy\n",
            "docs/requirements.txt": "mkdocs\n",
        },
        "Add the project",
    )
    kb.add_upstream("proj", repo, pin, prefixes=["pkg/"])
    notes = tmp_path / "notes" / "deps.md"
    notes.parent.mkdir()
    text = (
        "# Dependencies\n\n`run()` is at /home/bob/proj/pkg/mod.py:1-2 and the pins are in "
        "/home/bob/proj/requirements.txt:1-2.\n"
    )
    notes.write_text(text, "utf-8")
    kb.page("deps.md", text)
    before = Counter((f.check, f.message) for f in kb.verify().findings)
    (kb.docs / "deps.md").unlink()

    result = kb.cli("ingest", str(notes.parent))
    after = Counter((f.check, f.message) for f in kb.verify().findings)

    assert result.returncode == 0, result.stderr  # written; the laptop path is a warning
    body = read_page(kb.docs / "analysis" / "deps.md").body
    assert "`run()` is at pkg/mod.py:1-2" in body
    assert "/home/bob/proj/requirements.txt:1-2" in body  # not a bare, ambiguous name
    assert (
        "absolute local path left as written: 'requirements.txt' of proj is outside the "
        "prefixes of proj (pkg/)" in result.stdout
    )
    assert after - before == Counter()
    assert not any(check == "ambiguous-file" for check, _ in after)


@pytest.mark.parametrize(
    ("meta", "top", "date"),
    [
        ({"date": dt.date(2025, 3, 14)}, "", dt.date(2025, 3, 14)),
        ({"date": "2025-03-14"}, "", dt.date(2025, 3, 14)),
        ({}, "# T\n\nDate: 2025-03-14\n", dt.date(2025, 3, 14)),
        ({}, "# T\n\n日期：2025-03-14\n", dt.date(2025, 3, 14)),
        ({}, "# T\n\n*Written 2025/03/14*\n", dt.date(2025, 3, 14)),
        ({}, "# T\n\n> 创建于 2025年3月4日\n", dt.date(2025, 3, 4)),
        ({}, "# T\n\n_2025.03.14_\n", dt.date(2025, 3, 14)),
        ({}, "# T\n\nLast updated: 2025-05-01\nWritten: 2025-03-14\n", dt.date(2025, 3, 14)),
        ({}, "# T\n\nLast updated: 2025-05-01\n", dt.date(2025, 5, 1)),
        ({}, "# T\n\nThe release of 2025-03-14 changed the buffer.\n", None),
        ({}, "# T\n\n```\nDate: 2025-03-14\n```\n", None),
        ({}, "# T\n\nDate: 2025-02-30\n", None),
        ({}, "# T\n\n" + "Text.\n" * 20 + "Date: 2025-03-14\n", None),
    ],
)
def test_the_date_a_page_states(meta: dict[str, object], top: str, date: dt.date | None) -> None:
    assert stated_date(meta, top) == date

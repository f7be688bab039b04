"""`source`: a source-analysis page drafted from an upstream file, verified as generated."""

from __future__ import annotations

import re

import pytest
import yaml

from generator.generate.source import (
    class_diagram,
    outline_plain,
    outline_python,
    render_source_page,
)

MODULE = '''\
"""A module with the shapes an outline must handle."""

import functools


class Base:
    def run(self):
        return 1


class Part:
    pass


@functools.total_ordering
class Engine(Base):
    """Composes a Part and a Clock."""

    def __init__(self):
        self.part = Part()
        self.clock = Clock.system()
        self.count = len([])

    async def start(self):
        def helper():
            return 2

        return helper()


def standalone(x):
    return x
'''


def test_python_outline_with_decorators_nesting_bases_and_parts():
    outline = outline_python(MODULE)
    rows = [(s.qualname, s.kind, s.start, s.end) for s in outline.symbols]
    assert rows == [
        ("Base", "class", 6, 8),
        ("Base.run", "method", 7, 8),
        ("Part", "class", 11, 12),
        ("Engine", "class", 15, 28),
        ("Engine.__init__", "method", 19, 22),
        ("Engine.start", "method", 24, 28),
        ("Engine.start.helper", "function", 25, 26),
        ("standalone", "function", 31, 32),
    ]
    engine = next(s for s in outline.symbols if s.name == "Engine")
    assert engine.bases == ("Base",)
    assert engine.parts == ("Clock", "Part")  # len([]) is a call, not a class
    diagram = class_diagram(outline)
    assert "Base <|-- Engine" in diagram
    assert "Engine *-- Part" in diagram and "Engine *-- Clock" in diagram
    assert "class Clock" in diagram  # composed from outside the file: still a node


def test_unparsable_python_and_other_languages_get_a_plain_outline():
    broken = outline_python("def ok():\n    pass\n\ndef broken(:\n    pass\n")
    assert broken.parse_error and "line 4" in broken.parse_error
    assert [s.name for s in broken.symbols] == ["ok", "broken"]
    rust = outline_plain(
        "pub struct Shard {\n    n: u32,\n}\n\nimpl Shard {\n    pub fn new() -> Self {\n"
        "        Shard { n: 0 }\n    }\n}\n".splitlines()
    )
    assert [(s.name, s.kind, s.start, s.end) for s in rust.symbols] == [
        ("Shard", "class", 1, 3),
        ("Shard", "impl", 5, 5),
        ("new", "fn", 6, 9),
    ]


@pytest.fixture
def source_kb(kb):
    repo = kb.new_upstream("lib")
    pin = repo.commit(
        {"lib/engine.py": MODULE, "lib/shard.rs": "pub fn split() {}\n", "lib/x.bin": b"\x00\x01"},
        "add the library",
    )
    kb.add_upstream("lib", repo, pin)
    return kb


def test_generated_page_verifies_clean_and_cites_every_symbol(source_kb):
    result = source_kb.cli("source", "lib", "lib/engine.py")
    assert result.returncode == 0, result.stderr
    page = source_kb.docs / "analysis" / "lib-engine-source-analysis.md"
    assert result.stdout.strip() == f"wrote {page.relative_to(source_kb.root)}"
    text = page.read_text("utf-8")
    assert "kind: source-analysis" in text and "status: draft" in text
    assert "| `Engine.__init__()` | method | `lib/engine.py:19-22` |" in text
    assert "### 4.3 `Engine` (lib/engine.py:15-28)" in text
    assert "#### `Engine.start()` (lib/engine.py:24-28)" in text
    assert text.count("```mermaid") == 1
    # No commit in the prose, which a sync never moves: the trust line says it.
    body = text.split("\n---\n", 1)[1]
    assert source_kb.upstreams["lib"]["pin"][:7] not in body
    assert "generated from the code of `lib`" in body
    headings = re.findall(r"^## (\d)\.", text, re.M)
    assert headings == ["1", "2", "3", "4", "5"]
    report = source_kb.verify()
    assert report.findings == []
    # The title (the whole file), outline rows, top-level sections, member sections.
    assert len(report.refs) == 1 + 8 + 4 + 3


def test_chinese_headings_placement_and_another_commit(source_kb):
    repo = source_kb.root / "cache" / "lib"
    from generator.upstream.gitbuild import RepoBuilder

    later = RepoBuilder(repo).commit({"lib/engine.py": "\n\n" + MODULE}, "shift")
    result = source_kb.cli(
        "source",
        "lib",
        "lib/engine.py",
        "--lang",
        "zh",
        "--at",
        later,
        "--spec",
        "001-x",
        "--path",
        "beginner",
        "--level",
        "beginner",
        "--output",
        "docs/zh.md",
    )
    assert result.returncode == 0, result.stderr
    text = (source_kb.docs / "zh.md").read_text("utf-8")
    assert "## 2. 大纲" in text and "## 3. 类关系" in text
    assert f"pin: {later}" in text  # not the manifest's pin: recorded as the page's own
    assert "spec: 001-x\npaths: [beginner]\nlevel: beginner\n" in text
    assert "`lib/engine.py:17-30`" in text  # the class moved down two lines at that commit
    assert [f.check for f in source_kb.verify().findings] == []


def test_other_languages_and_errors(source_kb):
    result = source_kb.cli("source", "lib", "lib/shard.rs", "--output", "docs/rs.md")
    assert result.returncode == 0, result.stderr
    rust = (source_kb.docs / "rs.md").read_text("utf-8")
    assert "| `split` | fn | `lib/shard.rs:1` |" in rust
    assert "N/A - the file defines no classes." in rust
    for args, message in [
        (["nope", "lib/engine.py"], "unknown upstream: nope"),
        (["lib", "lib/missing.py"], "'lib/missing.py' is not a file of 'lib'"),
        (["lib", "lib/x.bin"], "binary file"),
        (["lib", "lib/engine.py", "--at", "no-such-rev"], "'no-such-rev' is not a commit"),
    ]:
        result = source_kb.cli("source", *args, "--output", "docs/err.md")
        assert result.returncode == 2
        assert message in result.stderr
        assert not (source_kb.docs / "err.md").exists()
    before = (source_kb.docs / "rs.md").read_bytes()
    result = source_kb.cli("source", "lib", "lib/engine.py", "--output", "docs/rs.md")
    assert result.returncode == 2 and "already exists; nothing was written" in result.stderr
    assert (source_kb.docs / "rs.md").read_bytes() == before
    assert (
        source_kb.cli(
            "source", "lib", "lib/engine.py", "--output", "docs/rs.md", "--force"
        ).returncode
        == 0
    )


@pytest.mark.parametrize("path", ['tools/quote"d.py', "tools/back\\slash.py", "tools/plain.py"])
def test_the_title_is_valid_yaml_whatever_the_path(path):
    text = render_source_page("lib", "a" * 40, path, outline_plain(["x = 1"]))
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["title"].endswith(path)


def test_a_page_drafted_in_a_knowledge_base_of_ones_own_joins_its_spec_and_path(tmp_path):
    """`kb source` without --spec and --path left the page in no spec and no path (warnings
    that fail a strict build), where `pr`, `new page` and `ingest` pick the only ones."""
    from generator.kb.scaffold import init_knowledge_base
    from generator.upstream.gitbuild import RepoBuilder

    from .conftest import KB

    root = tmp_path / "kb"
    made = init_knowledge_base(root, "Mine", requirement=("kb-generator==0.1.0", True))
    kb = KB(root)
    repo = RepoBuilder.init(root / "cache" / "lib")
    kb.add_upstream("lib", repo, repo.commit({"lib/engine.py": MODULE}, "add"))
    result = kb.cli("source", "lib", "lib/engine.py")
    assert result.returncode == 0, result.stderr
    text = (root / "docs" / "analysis" / "lib-engine-source-analysis.md").read_text("utf-8")
    assert f"spec: {made.spec_id}" in text and "paths: [start]" in text
    verified = kb.cli("verify").stdout
    assert "page-no-spec" not in verified and "page-not-in-path" not in verified

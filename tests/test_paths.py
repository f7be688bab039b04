"""Learning paths: membership, topological order, neighbours and every path finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from generator.kb.pages import parse_page
from generator.kb.paths import (
    LEVELS,
    build_curriculum,
    load_curriculum,
    meta_position,
    resolve_page_ref,
)

ROOT = Path(__file__).resolve().parent.parent


def page(rel: str, front: str, body: str = "# Title\n\nText.\n"):
    text = "---\n" + textwrap.dedent(front).strip() + "\n---\n\n" + body
    return parse_page(text.encode(), Path("/kb/docs") / rel, f"docs/{rel}", rel)


def checks(curriculum) -> list[tuple[str, str]]:
    return [(f.check, f.page) for f in curriculum.findings]


def test_demo_curriculum_is_clean_and_ordered():
    curriculum = load_curriculum(ROOT / "docs", prefix="docs")
    assert curriculum.findings == []
    names = [path.name for path in curriculum.ordered_paths()]
    assert names[:2] == ["beginner", "advanced"]
    assert "memory" in names
    beginner = curriculum.path("beginner")
    assert beginner is not None and beginner.index == "paths/beginner.md"
    assert beginner.is_level and not curriculum.path("memory").is_level
    pages = list(beginner.pages)
    assert "paths/beginner.md" not in pages
    # prerequisites always come first
    for rel in pages:
        for dep in curriculum.pages[rel].depends_on:
            if dep in pages:
                assert pages.index(dep) < pages.index(rel)
    assert curriculum.path("advanced").index == "paths/advanced.zh.md"


def test_order_is_topological_then_level_then_order():
    curriculum = build_curriculum(
        [
            page("a.md", "title: A\nlevel: advanced\npaths: [p]\norder: 0"),
            page("b.md", "title: B\nlevel: beginner\npaths: [p]\norder: 2"),
            page("c.md", "title: C\nlevel: beginner\npaths: [p]\norder: 1"),
            page("d.md", "title: D\nlevel: beginner\npaths: [p]\ndepends_on: [a.md]"),
        ]
    )
    # d is a beginner page but needs a, an advanced page; so it comes after a
    assert curriculum.path("p").pages == ("c.md", "b.md", "a.md", "d.md")
    assert checks(curriculum) == [("path-order-conflict", "docs/d.md")]
    previous, following = curriculum.neighbours("p", "b.md")
    assert previous.rel == "c.md" and following.rel == "a.md"
    assert curriculum.neighbours("p", "c.md")[0] is None
    assert curriculum.neighbours("p", "d.md")[1] is None
    assert curriculum.neighbours("nope", "d.md") == (None, None)
    assert [p.rel for p in curriculum.prerequisites("d.md")] == ["a.md"]
    assert [p.rel for p in curriculum.dependents("a.md")] == ["d.md"]


def test_indirect_prerequisites_outside_the_path_still_order_it():
    curriculum = build_curriculum(
        [
            page("x.md", "level: beginner\npaths: [p]\norder: 9"),
            page("y.md", "level: beginner\npaths: [q]\ndepends_on: [x.md]"),
            page("z.md", "level: beginner\npaths: [p]\norder: 1\ndepends_on: [y.md]"),
        ]
    )
    assert curriculum.path("p").pages == ("x.md", "z.md")
    assert [p.rel for p in curriculum.all_prerequisites("z.md")] == ["x.md", "y.md"]


def test_cycle_is_reported_on_every_page_in_it():
    curriculum = build_curriculum(
        [
            page("a.md", "paths: [p]\ndepends_on: [b.md]"),
            page("b.md", "paths: [p]\ndepends_on: [c.md]"),
            page("c.md", "paths: [p]\ndepends_on: [a.md]"),
            page("d.md", "paths: [p]\ndepends_on: [d.md]"),
        ]
    )
    cycle = [f for f in curriculum.findings if f.check == "prerequisite-cycle"]
    assert sorted(f.page for f in cycle) == ["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md"]
    assert "a.md -> b.md -> c.md -> a.md" in cycle[0].message
    assert cycle[0].line == 3  # the depends_on line
    # every page is still placed, once
    assert sorted(curriculum.path("p").pages) == ["a.md", "b.md", "c.md", "d.md"]


def test_missing_prerequisite_points_at_the_entry():
    curriculum = build_curriculum(
        [
            page("analysis/a.md", "paths: [p]\ndepends_on:\n  - analysis/b.md\n  - ghost.md"),
            page("analysis/b.md", "paths: [p]"),
        ]
    )
    [finding] = curriculum.findings
    assert finding.check == "prerequisite-missing"
    assert (finding.line, finding.column) == (5, 5)
    assert "ghost.md" in finding.message


def test_page_relative_and_extensionless_prerequisites_resolve():
    known = {"analysis/a.md", "paths/beginner.md", "guide/index.md"}
    assert resolve_page_ref("../analysis/a.md", "paths/x.md", known) == "analysis/a.md"
    assert resolve_page_ref("analysis/a", "x.md", known) == "analysis/a.md"
    assert resolve_page_ref("./paths/beginner.md", "x.md", known) == "paths/beginner.md"
    assert resolve_page_ref("guide/", "x.md", known) == "guide/index.md"
    assert resolve_page_ref("missing.md", "paths/x.md", known) == "missing.md"


def test_page_in_no_path_is_an_error_unless_exempt():
    curriculum = build_curriculum(
        [
            page("a.md", "paths: [p]"),
            page("lonely.md", "title: Lonely"),
            page("old.md", "status: archived"),
            page("index.md", "kind: index"),
        ]
    )
    assert checks(curriculum) == [("page-not-in-path", "docs/lonely.md")]
    assert "old.md" not in curriculum.order


def test_no_paths_at_all_means_no_path_findings():
    curriculum = build_curriculum([page("a.md", "title: A"), page("b.md", "title: B")])
    assert curriculum.findings == [] and curriculum.paths == {}


def test_index_page_defines_explicit_list_and_tag_selection():
    curriculum = build_curriculum(
        [
            page(
                "paths/memory.md",
                """
                kind: learning-path
                path: memory
                pages: [analysis/b.md, ../analysis/a.md]
                select: {tags: [offload]}
                """,
                "# Memory path\n",
            ),
            page("analysis/a.md", "paths: [x]"),
            page("analysis/b.md", "paths: [x]"),
            page("analysis/c.md", "paths: [x]\ntags: [offload, fsdp]"),
            page("analysis/d.md", "paths: [x]\ntags: [unrelated]"),
        ]
    )
    memory = curriculum.path("memory")
    assert memory.title == "Memory path"
    assert memory.index == "paths/memory.md"
    assert memory.pages == ("analysis/b.md", "analysis/a.md", "analysis/c.md")
    assert curriculum.pages["analysis/c.md"].paths == ("memory", "x")
    assert curriculum.findings == []


def test_explicit_list_that_puts_a_page_before_its_prerequisite():
    curriculum = build_curriculum(
        [
            page("paths/p.md", "kind: learning-path\npath: p\npages: [b.md, a.md, ghost.md]"),
            page("a.md", "level: beginner"),
            page("b.md", "level: beginner\ndepends_on: [a.md]"),
        ]
    )
    assert curriculum.path("p").pages == ("a.md", "b.md")  # topological order wins
    assert sorted(checks(curriculum)) == [
        ("path-order-conflict", "docs/b.md"),
        ("path-page-missing", "docs/paths/p.md"),
    ]


def test_level_and_order_values_are_validated():
    curriculum = build_curriculum(
        [page("a.md", "paths: [p]\nlevel: begginer\norder: first"), page("b.md", "paths: [p]")]
    )
    found = {f.check: f for f in curriculum.findings}
    assert set(found) == {"level-invalid", "order-invalid"}
    assert "did you mean 'beginner'" in found["level-invalid"].suggestion
    assert curriculum.pages["a.md"].level is None


def test_translated_index_pages_and_duplicates():
    curriculum = build_curriculum(
        [
            page("paths/b.md", "kind: learning-path\npath: b\nlang: en"),
            page("paths/b.zh.md", "kind: learning-path\npath: b\nlang: zh"),
            page("paths/b2.md", "kind: learning-path\npath: b\nlang: en"),
            page("a.md", "paths: [b]"),
        ]
    )
    path = curriculum.path("b")
    assert path.index == "paths/b.md"
    assert set(path.indexes) == {"paths/b.md", "paths/b.zh.md", "paths/b2.md"}
    assert checks(curriculum) == [("path-index-duplicate", "docs/paths/b2.md")]


def test_by_level_groups_in_level_order():
    curriculum = build_curriculum(
        [
            page("e.md", "paths: [p]\nlevel: expert"),
            page("b.md", "paths: [p]\nlevel: beginner"),
            page("n.md", "paths: [p]"),
        ]
    )
    groups = curriculum.by_level()
    assert list(groups) == [*LEVELS, None]
    assert [p.rel for p in groups["expert"]] == ["e.md"]
    assert [p.rel for p in groups[None]] == ["n.md"]


@pytest.mark.parametrize(
    ("key", "item", "expected"),
    [("title", None, (2, 1)), ("depends_on", "x.md", (3, 14)), ("absent", None, (1, 1))],
)
def test_meta_position(key, item, expected):
    assert meta_position(page("a.md", "title: T\ndepends_on: [x.md]"), key, item) == expected


def test_unreadable_pages_are_skipped_not_fatal():
    bad = parse_page(b"---\n\xff\n---\n", Path("/kb/docs/bad.md"), "docs/bad.md", "bad.md")
    curriculum = build_curriculum([bad, page("a.md", "paths: [p]")])
    assert "bad.md" not in curriculum.pages
    assert curriculum.findings == []


def test_a_curriculum_made_again_follows_every_edit_that_matters_to_it():
    """``mkdocs serve`` asks for the curriculum after every edit: what a page's frontmatter or
    first heading says reaches it, an edit of the text alone gives the same curriculum."""
    first = [
        page("a.md", "level: beginner\npaths: [p]", "# Old heading\n\nText.\n"),
        page("b.md", "title: B\nlevel: beginner\npaths: [p]\ndepends_on: [a.md]"),
    ]
    before = build_curriculum(first)
    assert before.pages["a.md"].title == "Old heading"

    text_edited = [page("a.md", "level: beginner\npaths: [p]", "# Old heading\n\nNew.\n"), first[1]]
    assert build_curriculum(text_edited) is before

    heading_edited = [page("a.md", "level: beginner\npaths: [p]", "# New heading\n"), first[1]]
    assert build_curriculum(heading_edited).pages["a.md"].title == "New heading"

    level_edited = [page("a.md", "level: expert\npaths: [p]", "# Old heading\n"), first[1]]
    assert build_curriculum(level_edited).pages["a.md"].level == "expert"

    dependency_gone = [first[0], page("b.md", "title: B\nlevel: beginner\npaths: [p]")]
    assert build_curriculum(dependency_gone).pages["b.md"].depends_on == ()

    displayed_elsewhere = [
        parse_page(first[0].text.encode(), Path("/kb/site/a.md"), "site/a.md", "a.md"),
        first[1],
    ]
    assert build_curriculum(displayed_elsewhere).pages["a.md"].display == "site/a.md"
    assert build_curriculum(first).pages == before.pages


def test_a_path_holding_the_home_page_alone_is_no_path_once_others_are_read():
    """`kb init` puts the home page on a `start` path that new pages join; a team that then
    made paths of its own saw "Start (1 page)" on the home page, holding the home page only,
    and a "Learning path: Start (1 of 1)" footer on it."""
    home = page("index.md", "title: Home\nkind: index\npaths: [start]\norder: 0")
    memory = page("memory.md", "title: Memory\nlevel: beginner\npaths: [memory]")
    curriculum = build_curriculum([home, memory])
    assert [path.name for path in curriculum.ordered_paths()] == ["memory"]
    assert curriculum.pages["index.md"].paths == ()
    assert checks(curriculum) == []
    # While it is the only path, or pages join it, it stays.
    assert [p.name for p in build_curriculum([home]).ordered_paths()] == ["start"]
    joined = page("a.md", "title: A\nlevel: beginner\npaths: [start]")
    names = [p.name for p in build_curriculum([home, memory, joined]).ordered_paths()]
    assert names == ["memory", "start"]

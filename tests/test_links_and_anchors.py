"""Headings, GitHub-compatible anchors, and the link checker on real files."""

from __future__ import annotations

import textwrap

import pytest

from generator.refs.extract import extract_headings, extract_links, scan
from generator.refs.extract.links import extract_anchors
from generator.refs.slugs import Slugger, github_slug, slugify


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("3. 关键 PR 实现细节", "3-关键-pr-实现细节"),
        ("1. 整体架构设计", "1-整体架构设计"),
        ("2.1 Before vs After Architecture", "21-before-vs-after-architecture"),
        ("Risks & Edge Cases", "risks--edge-cases"),
        ("`sleep()` 与 `wake_up()`", "sleep-与-wake_up"),
        ("What's new?", "whats-new"),
        ("Ünïcödé Çafé", "ünïcödé-çafé"),
        ("emoji 🚀 launch", "emoji--launch"),
        ("TL;DR", "tldr"),
    ],
)
def test_github_slugs(heading, anchor):
    from generator.refs.extract.links import heading_text

    assert github_slug(heading_text(heading)) == anchor


def test_slugify_hook_matches_github_and_ignores_separator():
    assert slugify("1. 整体架构设计", "_") == "1-整体架构设计"


def test_duplicate_headings_get_numbered_like_github():
    slugger = Slugger()
    assert [slugger.unique(t) for t in ["Notes", "Notes", "Notes", "Notes-1"]] == [
        "notes",
        "notes-1",
        "notes-2",
        "notes-1-1",
    ]


def headings_of(markdown: str):
    layout = scan(textwrap.dedent(markdown))
    return [(h.level, h.anchor, h.line) for h in extract_headings(layout)]


def test_headings_atx_setext_explicit_ids_and_code_blocks():
    assert headings_of(
        """\
        # Title

        Setext heading
        --------------

        ## Custom {#my-id}

        ```
        # not a heading
        ```

        ## Title
        """
    ) == [(1, "title", 1), (2, "setext-heading", 3), (2, "my-id", 6), (2, "title-1", 12)]


def test_table_separator_is_not_a_setext_heading():
    assert headings_of("| a | b |\n|---|---|\n| 1 | 2 |\n") == []


def test_html_anchors_count():
    layout = scan('<a id="here"></a>\n\n# T\n<div name="there">x</div>\n')
    assert extract_anchors(layout) == {"here", "t", "there"}


def test_links_outside_code_only_and_external_skipped():
    layout = scan(
        textwrap.dedent(
            """\
            [a](x.md#y) ![img](pics/p.png) [ext](https://e.com/x.md) `[code](nope.md)`
            [ref]: other.md#z
            [mail](mailto:a@b.c) [same](#top) [enc](my%20page.md)

            ```
            [in block](nope.md)
            ```
            """
        )
    )
    links = extract_links(layout, "p.md")
    assert [(ln.line, ln.column, ln.target_path, ln.fragment, ln.is_image) for ln in links] == [
        (1, 5, "x.md", "y", False),
        (1, 20, "pics/p.png", None, True),
        (2, 8, "other.md", "z", False),
        (3, 29, "", "top", False),
        (3, 41, "my page.md", None, False),
    ]


@pytest.mark.parametrize(
    ("markdown", "targets"),
    [
        ("[a](https://github.com/o/r/blob/x/a.py#L1) and [b](http://e.com/b.md)", []),
        ("[a](https://e.com/a) then [b](b.md)", ["b.md"]),
        ("[a [b](https://e.com/b) c](c.md)", ["c.md"]),
        ("[a]( b.md) and [c](https://e.com/c)", ["b.md"]),
        ("[a](<https://e.com/a>) [b](<b.md>)", ["b.md"]),
        ("`[a](a.md)` [b](https://e.com/b)", []),
    ],
)
def test_a_page_s_links_into_the_site_are_found_beside_web_links(markdown, targets):
    """Pages whose links all lead to the web are settled without blanking their code; a page
    with one link into the site among them, however written, still has it found."""
    links = extract_links(scan(markdown + "\n"), "p.md")
    assert [link.target_path for link in links] == targets


def test_link_checks_on_files(kb):
    repo = kb.new_upstream("u")
    sha = repo.commit({"u/a.py": "x = 1\n"}, "init")
    kb.add_upstream("u", repo, sha)
    kb.page("guide/index.md", "# 1. 整体架构设计\n\n## Details\n")
    kb.page("img/logo.png", "png")
    kb.page(
        "a.md",
        """\
        # Top

        [ok](guide/index.md#1-整体架构设计) [dir](guide/) [img](img/logo.png)
        [bad-anchor](guide/index.md#1-整体架构) [missing](guide/nothing.md)
        [self](#top) [self-bad](#bottom) [root](/guide/index.md#details)
        [outside](../upstreams.yaml) [gone](../nowhere.md) [emptydir](img/)
        """,
    )
    report = kb.verify()
    found = [(f.line, f.column, f.check, f.suggestion) for f in report.findings]
    assert found == [
        (4, 14, "anchor-missing", "did you mean 'guide/index.md#1-整体架构设计'?"),
        (4, 47, "link-missing", None),
        (5, 25, "anchor-missing", None),
        (6, 11, "link-outside-docs", "link to its web address instead"),
        (6, 37, "link-missing", None),
        (6, 63, "link-missing", None),
    ]
    assert report.links == 11


def test_a_footnote_without_its_note_is_reported_in_cold_and_cached_runs(kb):
    """The site and GitHub show `[^2]` as written when the page has no `[^2]: ...`: the note was
    lost. Notes defined anywhere (a list, a quote), definitions themselves, links, escapes,
    comments and code (fenced or indented) stay silent; a note defined in another case is named."""
    repo = kb.new_upstream("u")
    kb.add_upstream("u", repo, repo.commit({"u/a.py": "x = 1\n"}, "init"))
    kb.page(
        "notes.md",
        """\
        # Notes

        The actor sleeps first[^1], then wakes up[^2]. 显存在这里释放[^Mem]。
        In code, `x[^3]` and

        ```python
        y = table[^4]
        ```

        are not footnotes, nor is \\[^5], the link [^6](https://example.com) or <!-- [^7] -->.

        - a list
            - whose item has a note[^n]

                [^n]: defined inside the list.

        > A quote with a note[^q]
        >
        > [^q]: defined inside the quote.

        An indented code block is code too:

            digits = re.compile(r"[^0-9]+")

        1. A numbered item

            whose second paragraph lost its note[^8].

        [^1]: Before the rollout.
        [^mem]: 见 FSDP 一节。
        """,
    )

    def found(report) -> list[tuple]:
        return [(f.line, f.column, f.check, f.text, f.suggestion) for f in report.findings]

    expected = [
        (3, 42, "footnote-undefined", "[^2]", "add its note, '[^2]: ...', or remove the reference"),
        (
            3,
            55,
            "footnote-undefined",
            "[^Mem]",
            "its note is defined as '[^mem]': the site matches labels case by case, so write "
            "both alike",
        ),
        (
            27,
            41,
            "footnote-undefined",
            "[^8]",
            "add its note, '[^8]: ...', or remove the reference",
        ),
    ]
    assert found(kb.verify()) == expected
    assert found(kb.verify(cache=True)) == expected  # writes the cache
    assert found(kb.verify(cache=True)) == expected  # from the cache
    finding = kb.verify().findings[0]
    assert finding.severity.value == "warning"
    assert "has no definition on this page" in finding.message


def test_a_footnote_note_nothing_refers_to_is_reported_at_its_definition(lib_kb):
    """A draft whose sentence was rewritten keeps a note no reference leads to: the site lists
    it with a link back to nowhere, GitHub drops it. Notes referred to from a table cell, a
    list or a quote count as used; a definition in code or a comment is not one."""
    lib_kb.page(
        "page.md",
        """\
        # Notes

        | step | note |
        |---|---|
        | load | fast[^t] |

        - an item[^l]

        > quoted[^q]

        The claim was rewritten and lost its marker. The label is used in another case[^Case].

        ```text
        [^code]: in a fence
        ```

        <!-- [^comment]: in a comment -->

        [^t]: table note.
        [^l]: list note.
        [^q]: quote note.
        [^lost]: 这条注释没有引用。
        [^case]: defined in lower case.
        """,
    )
    report = lib_kb.verify()
    assert [(f.line, f.column, f.check, f.text, f.suggestion) for f in report.findings] == [
        (
            11,
            79,
            "footnote-undefined",
            "[^Case]",
            "its note is defined as '[^case]': the site matches labels case by case, so write "
            "both alike",
        ),
        (
            22,
            1,
            "footnote-unused",
            "[^lost]",
            "add '[^lost]' where its claim is made, or remove the note",
        ),
    ]
    unused = report.findings[1]
    assert unused.severity.value == "warning"
    assert "nothing on this page refers to it" in unused.message
    assert [f.check for f in lib_kb.verify(cache=True).findings] == [
        "footnote-undefined",
        "footnote-unused",
    ]
    assert [f.check for f in lib_kb.verify(cache=True).findings] == [  # from the cache
        "footnote-undefined",
        "footnote-unused",
    ]


# Written for GitHub, where none of these is a link: each must stay silent in the verifier.
NOT_LINKS = [
    "A claim.[^1] Another.[^note] A third.[^长注]\n\n[^1]: a.\n[^note]: b.\n[^长注]: c.",
    "Why?[^1]\n\n[^1]: See the design notes for why.",
    "How?[^note]\n\n[^note]: guide/missing.md explains it (a path in a note, not a link).",
    "为何？[^长注]\n\n[^长注]: 参见 design.md 的第二节。",
    "Where?[^2]\n\n[^2]:\n    An indented footnote body naming other.md.",
    "- [ ] a task\n- [x] a task done\n- [X] another",
    "An option [default: none] and a range [0, 1] in prose.",
]


@pytest.mark.parametrize("markdown", NOT_LINKS)
def test_github_constructs_that_are_not_links_stay_silent(lib_kb, markdown):
    lib_kb.page("page.md", markdown + "\n", dedent=False)
    report = lib_kb.verify()
    assert report.findings == []
    assert report.links == 0


def test_a_footnote_beside_a_real_link_leaves_the_link_checked(lib_kb):
    lib_kb.page("page.md", "Text.[^1] [gone](gone.md)\n\n[^1]: A note.\n[ref]: missing.md\n")
    report = lib_kb.verify()
    assert [(f.line, f.check) for f in report.findings] == [
        (1, "link-missing"),
        (4, "link-missing"),
    ]


@pytest.mark.parametrize(
    "markdown",
    [
        "Two reasons[^1]: speed and size.\n\n[^1]: The note.\n",
        "!!! note\n\n    First.\n\n    Second paragraph[^1].\n\n[^1]: The note.\n",
        "A claim[^1].\n\n[^1]: First paragraph.\n\n    More, with its own note[^2].\n\n"
        "[^2]: The second.\n",
    ],
)
def test_footnotes_referred_to_in_these_places_are_not_called_unused(lib_kb, markdown):
    """A reference followed by a colon, in an admonition's second paragraph, or in a note's
    continuation: each refers to its note."""
    lib_kb.page("page.md", "# T\n\n" + markdown, dedent=False)
    assert [f.check for f in lib_kb.verify().findings] == []

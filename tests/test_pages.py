"""Pages round-trip byte for byte; bad content becomes a located problem, never a crash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.kb.pages import MAX_NESTING, parse_page, read_page, render_page, write_page

FRONTMATTER = (
    "---\n"
    'title: "Déjà vu 中文"   # keep this comment\n'
    "zeta: 1\n"
    "status: draft\n"
    "alpha: [b, a]\n"
    "custom:\n"
    "  nested: 'single quoted'\n"
    "---\n"
)


def page_from(raw: bytes, tmp_path: Path):
    path = tmp_path / "p.md"
    path.write_bytes(raw)
    return read_page(path, "docs/p.md", "p.md")


@pytest.mark.parametrize(
    "raw",
    [
        (FRONTMATTER + "# Body\n\nText with `code` and 中文.\n").encode(),
        (FRONTMATTER + "# Body\n").replace("\n", "\r\n").encode(),
        ("\ufeff" + FRONTMATTER + "Body\n").encode(),
        b"No frontmatter at all\r\nmixed\nendings\r\n",
        b"---\n---\nempty frontmatter\n",
        b"",
        b"---\ntitle: x\n---",
    ],
    ids=["lf", "crlf", "bom", "no-frontmatter", "empty-frontmatter", "empty-file", "no-body"],
)
def test_unchanged_page_round_trips_byte_for_byte(raw, tmp_path):
    page = page_from(raw, tmp_path)
    assert page.problems == []
    assert render_page(page) == raw
    assert render_page(page, dict(page.meta)) == raw
    write_page(page)
    assert (tmp_path / "p.md").read_bytes() == raw


def test_changing_one_key_keeps_the_rest_in_order_with_comments(tmp_path):
    body = "# Body\r\n\r\nKept \u00e9 exactly  \r\n"
    raw = ("\ufeff" + FRONTMATTER.replace("\n", "\r\n") + body).encode()
    page = page_from(raw, tmp_path)
    meta = dict(page.meta)
    meta["status"] = "complete"
    meta["added"] = "new"
    rewritten = write_page(page, meta)
    data = (tmp_path / "p.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\n")
    assert data.endswith(body.encode())
    text = data.decode("utf-8-sig")
    assert "# keep this comment" in text
    assert "'single quoted'" in text
    keys = list(rewritten.meta)
    assert keys == ["title", "zeta", "status", "alpha", "custom", "added"]
    assert rewritten.meta["status"] == "complete"
    assert rewritten.body == body
    assert "\n" not in text.replace("\r\n", "")  # every newline is still CRLF


def test_adding_frontmatter_to_a_page_without_one(tmp_path):
    page = page_from(b"# Title\n\nBody\n", tmp_path)
    rewritten = write_page(page, {"title": "T", "kind": "review"})
    assert (
        tmp_path / "p.md"
    ).read_bytes() == b"---\ntitle: T\nkind: review\n---\n# Title\n\nBody\n"
    assert rewritten.body == "# Title\n\nBody\n"


def test_malformed_frontmatter_is_a_problem_with_its_line(tmp_path):
    page = page_from(b"---\ntitle: ok\nbad: [unclosed\nmore: x\n---\nBody\n", tmp_path)
    [problem] = page.problems
    assert problem.check == "frontmatter-invalid"
    assert (problem.line, problem.column) == (3, 6)  # where the bracket opens
    assert "not valid YAML" in problem.message and "(noticed at line 4)" in problem.message
    assert render_page(page) == (tmp_path / "p.md").read_bytes()
    # An unclosed quote is noticed at the frontmatter's end, and named where it opens.
    page = page_from(b'---\ntitle: "Broken\nkind: review\nlang: en\n---\n# T\n', tmp_path)
    [problem] = page.problems
    assert (problem.line, problem.column) == (2, 8)
    assert problem.message == (
        "frontmatter is not valid YAML: found unexpected end of stream while scanning a quoted "
        "scalar that starts here (noticed at line 5)"
    )


def test_duplicate_keys_are_refused(tmp_path):
    page = page_from(b"---\ntitle: a\ntitle: b\n---\n", tmp_path)
    [problem] = page.problems
    assert (problem.check, problem.line) == ("frontmatter-invalid", 3)
    assert "duplicate key 'title'" in problem.message


def test_a_list_as_a_key_is_a_problem_not_a_crash(tmp_path):
    page = page_from(b"---\ntitle: a\n[x, y]: b\n---\nBody\n", tmp_path)
    [problem] = page.problems
    assert (problem.check, problem.line) == ("frontmatter-invalid", 3)
    assert "unhashable key" in problem.message
    assert page.meta == {}
    assert render_page(page) == (tmp_path / "p.md").read_bytes()


def test_unclosed_and_non_mapping_frontmatter(tmp_path):
    unclosed = page_from(b"---\ntitle: a\nno end\n", tmp_path)
    assert [(p.check, p.line) for p in unclosed.problems] == [("frontmatter-invalid", 1)]
    listed = page_from(b"---\n- a\n- b\n---\n", tmp_path)
    assert [(p.check, p.line) for p in listed.problems] == [("frontmatter-invalid", 2)]
    assert "mapping" in listed.problems[0].message


def test_non_utf8_page_is_a_problem_and_is_never_rewritten(tmp_path):
    raw = b"---\ntitle: x\n---\nline two\ncaf\xe9 latin-1\n"
    page = page_from(raw, tmp_path)
    [problem] = page.problems
    assert (problem.check, problem.line, problem.column) == ("page-encoding", 5, 4)
    assert "0xe9" in problem.message
    assert problem.suggestion == "convert it to UTF-8: iconv -f LATIN1 -t UTF-8, if it is LATIN1"
    assert render_page(page) == raw
    with pytest.raises(ValueError, match="not valid UTF-8"):
        render_page(page, {"title": "y"})
    assert (tmp_path / "p.md").read_bytes() == raw


def test_parse_page_keeps_body_offsets():
    page = parse_page(b"---\na: 1\n---\nbody\n", Path("x.md"), "x.md", "x.md")
    assert page.meta == {"a": 1}
    assert page.body == "body\n"


def test_invalid_date_value_is_a_problem_not_a_crash(tmp_path):
    page = page_from(b"---\ntitle: x\ncreated: 2025-13-01\n---\nBody\n", tmp_path)
    [problem] = page.problems
    assert problem.check == "frontmatter-invalid"
    assert "invalid value" in problem.message
    assert render_page(page) == (tmp_path / "p.md").read_bytes()


def test_a_page_of_text_keeps_its_bytes_once_and_gives_them_back_exactly(tmp_path):
    raw = ("\ufeff---\ntitle: x\n---\n中文 text\r\n").encode()
    page = page_from(raw, tmp_path)
    assert page.undecoded == b""  # the text is the only copy held
    assert page.raw == raw
    undecodable = page_from(b"\xff\xfe not UTF-8\n", tmp_path)
    assert undecodable.text is None
    assert undecodable.raw == b"\xff\xfe not UTF-8\n"
    assert render_page(undecodable) == b"\xff\xfe not UTF-8\n"


_NESTED_LINE = st.builds(
    lambda indent, marker, tail: indent + marker + tail,
    st.sampled_from(["", " " * 198, " " * 200, "\t" * 201, " " * 199 + "\t", "> " * 99]),
    st.sampled_from(["- x", "* y", "12. z", "3) w", "-x", "> q", ">" * 100, "text"]),
    st.sampled_from(["", " tail", "\r"]),
)


@given(
    frontmatter=st.booleans(),
    lines=st.lists(_NESTED_LINE, max_size=6),
    end=st.sampled_from(["", "\n"]),
)
@settings(max_examples=500, deadline=None)
def test_a_page_nested_too_deep_is_found_at_its_first_such_line(frontmatter, lines, end):
    """As a search for the pattern at every line's start finds it (`MAX_NESTING` levels of
    list items two columns each, or of block quotes), line for line."""
    head = "---\ntitle: t\n---\n" if frontmatter else ""
    text = head + "\n".join(lines) + end
    page = parse_page(text.encode(), Path("p.md"), "p.md", "p.md")
    deep = [p.line for p in page.problems if p.check == "page-too-deep"]
    anchored = re.compile(
        rf"^(?:[ \t]{{{2 * MAX_NESTING},}}(?:[-*+]|\d{{1,9}}[.)])(?:[ \t]|$)"
        rf"|(?:>[ \t]?){{{MAX_NESTING},}})",
        re.M,
    ).search(text, page.body_start)
    assert deep == ([] if anchored is None else [text.count("\n", 0, anchored.start()) + 1])


@pytest.mark.parametrize(
    ("raw", "advice"),
    [
        ("# 训练流程\n".encode("gbk"), "iconv -f GB18030 -t UTF-8, if it is GB18030"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "it looks like a binary file, not a page"),
        ("Größe über Müller\n".encode("latin-1"), "iconv -f LATIN1 -t UTF-8, if it is LATIN1"),
        ("A configuração das funções\n".encode("latin-1"), "iconv -f LATIN1"),
        ("在 x.py 第 5 行\n".encode("gbk"), "iconv -f GB18030"),
    ],
)
def test_a_page_that_is_not_utf8_says_what_it_looks_like(tmp_path, raw, advice):
    """`verify` said "re-save the file as UTF-8" of a GBK page and of a PNG alike, where
    `ingest` already said which encoding or that it is binary."""
    [problem] = page_from(raw, tmp_path).problems
    assert advice in problem.suggestion

"""One test per check, against a real git upstream built in a temporary directory."""

from __future__ import annotations

from pathlib import Path

from generator.upstream.gitbuild import RepoBuilder, run_git
from tests.conftest import CORE_PY


def findings(kb, body: str, frontmatter: str = "") -> list[tuple]:
    text = (f"---\n{frontmatter}---\n" if frontmatter else "") + body
    kb.page("p.md", text, dedent=False)
    report = kb.verify()
    return [(f.check, f.line, f.column, f.message, f.suggestion) for f in report.findings]


def checks(kb, body: str, frontmatter: str = "") -> list[str]:
    return [f[0] for f in findings(kb, body, frontmatter)]


def test_valid_refs_have_no_findings(lib_kb):
    report_findings = findings(
        lib_kb,
        "`lib/core.py:6-7` `alpha()` (lib/core.py:6) lib/core.py:15 `lib/util.py` util.py:40\n"
        "`Beta.gamma()` 实现（lib/core.py:11-12） `lib/sub/` [x](https://github.com/acme/lib/blob/"
        f"{lib_kb.pin}/lib/core.py#L10-L15)\n",
    )
    assert report_findings == []


def test_file_missing_suggests_rename_recorded_by_git(lib_kb):
    [(check, line, column, message, suggestion)] = findings(
        lib_kb, "x `old/name.py:1-2`\n", "upstream: lib\n"
    )
    assert (check, line, column) == ("file-missing", 4, 4)
    assert "'old/name.py' does not exist at lib@" in message
    assert "renamed to 'lib/renamed.py'" in message
    assert suggestion == "did you mean lib/renamed.py:1-2?"


def test_file_missing_suggests_the_lines_where_a_renamed_file_has_them_now(kb):
    """A rename that came with edits kept the old numbers in its suggestion: they cited other
    code in the renamed file. The lines are looked for there as the file last had them."""
    body = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(1, 9))
    repo = kb.new_upstream("lib")
    repo.commit({"lib/old.py": body}, "Add old.py", date="2025-01-01T00:00:00+00:00")
    renamed = '"""Moved here."""\n\nimport os\n\n\n' + body.replace("return 3\n", "return 33\n")
    pin = repo.commit(
        {"lib/old.py": None, "lib/new.py": renamed},
        "Rename old.py, with a header and an edit",
        date="2025-01-02T00:00:00+00:00",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    [(check, _, _, message, suggestion)] = findings(kb, "`f2()` (lib/old.py:5-6)\n")
    assert check == "file-missing" and "renamed to 'lib/new.py'" in message
    assert suggestion == "did you mean lib/new.py:10-11?"  # f2, five lines further down
    # Lines the renamed file does not have as they were: the file, without numbers.
    [(_, _, _, message, suggestion)] = findings(kb, "`f3()` (lib/old.py:9-10)\n")
    assert message.endswith("renamed to 'lib/new.py', where the cited lines are not as they were")
    assert suggestion == "did you mean lib/new.py?"


def test_file_missing_suggests_same_basename_and_notes_branch_head(lib_kb):
    [(_, _, _, message, suggestion)] = findings(lib_kb, "lib/deep/util.py:3\n")
    assert suggestion == "did you mean lib/util.py:3?"
    [(_, _, _, message, _)] = findings(lib_kb, "lib/future.py:1\n")
    assert "it exists at main" in message


def test_file_missing_suggests_a_file_only_when_its_name_is_alike(lib_kb):
    """`lib/missing.py` was offered `lib/util.py`: the shared directory and extension made
    the paths close, though the names are unrelated. A typo still gets its file."""
    [(_, _, _, _, suggestion)] = findings(lib_kb, "lib/missing.py:1\n")
    assert suggestion is None
    [(_, _, _, _, suggestion)] = findings(lib_kb, "lib/utill.py:3\n")
    assert suggestion == "did you mean lib/util.py:3?"


def test_range_invalid_reversed_and_zero(lib_kb):
    result = findings(lib_kb, "lib/core.py:12-6 and lib/core.py:0 and lib/core.py:0-3\n")
    assert [(r[0], r[4], r[3]) for r in result] == [
        ("range-invalid", "lib/core.py:6-12", "range 12-6 is reversed"),
        ("range-invalid", None, "line 0 does not exist (lines count from 1)"),
        ("range-invalid", None, "range 0-3 starts at line 0 (lines count from 1)"),
    ]


def test_range_outside_file_including_absurd_lines(lib_kb):
    result = findings(lib_kb, "lib/core.py:14-16 lib/core.py:1000000000000000000\n")
    assert [r[0] for r in result] == ["range-outside-file", "range-outside-file"]
    assert "which has 15 lines" in result[0][3]
    assert "line 1000000000000000000" in result[1][3]


def test_range_outside_file_suggests_where_the_symbol_is(lib_kb):
    [(check, _, _, _, suggestion)] = findings(lib_kb, "`gamma()` (lib/core.py:40-45)\n")
    assert check == "range-outside-file"
    assert suggestion == "lib/core.py:11-12"


def test_ambiguous_bare_name_lists_candidates(lib_kb):
    [(check, _, _, message, _)] = findings(lib_kb, "core.py:1\n")
    assert check == "ambiguous-file"
    assert "matches 2 files: lib/core.py (the range fits); lib/sub/core.py (the range fits)" in (
        message
    )


def test_a_bare_name_resolved_from_the_page_context(lib_kb):
    # The page cites the same file by its full path elsewhere.
    assert checks(lib_kb, "lib/sub/core.py:1 and again core.py:4-5\n") == []
    # The file the page cites cannot hold the lines (it has 5), another of the name can: that
    # the range fits is no reason to go against the page, nor to have ingest write it in.
    [(check, _, _, message, _)] = findings(lib_kb, "lib/sub/core.py:1 then core.py:15\n")
    assert check == "ambiguous-file"
    assert "lib/core.py" in message and "lib/sub/core.py" in message
    # The symbol named beside it, there and only in the other file, is: it resolves there.
    assert checks(lib_kb, "lib/core.py:1 and `epsilon()` (core.py:4-5)\n") == []
    # When no other file can hold them either, the page's file is the one meant.
    [(check, _, _, message, _)] = findings(lib_kb, "lib/sub/core.py:1 then core.py:40\n")
    assert check == "range-outside-file" and "'lib/sub/core.py'" in message
    # Only one candidate is long enough for the range.
    assert checks(lib_kb, "core.py:14\n") == []
    # The quoted code is in only one of them (both are long enough for lines 1-3).
    quote = "```python\nclass Beta:\n    def gamma(self):\n        return alpha(2)\n```"
    [(check, _, _, message, suggestion)] = findings(lib_kb, f"`core.py:1-3`:\n\n{quote}\n")
    assert check == "quote-elsewhere" and suggestion == "lib/core.py:10-12"


def test_ambiguous_bare_name_resolved_by_symbol_and_by_search_roots(lib_kb):
    assert checks(lib_kb, "`epsilon()` (core.py:4-5)\n") == []
    assert checks(lib_kb, "core.py:4-5\n", "search_roots: [lib/sub]\n") == []
    manifest = lib_kb.upstreams["lib"]
    manifest["search_roots"] = ["lib/sub/"]
    lib_kb.write_manifest()
    [(check, *_)] = findings(lib_kb, "core.py:15\n")
    assert check == "range-outside-file"  # resolved to lib/sub/core.py, which has 5 lines


def test_a_bare_name_with_a_symbol_and_no_lines_takes_the_file_defining_it(lib_kb):
    """`actor.py::FSDPActor.wake_up` was ambiguous though one of the files named so defines
    it: only a symbol with lines narrowed the candidates."""
    assert checks(lib_kb, "`core.py::Beta.delta`\n") == []
    assert checks(lib_kb, "`core.py:epsilon()`\n") == []
    [(check, *_)] = findings(lib_kb, "`core.py::nowhere`\n")
    assert check == "ambiguous-file"


def test_bare_name_found_nowhere(lib_kb):
    [(check, _, _, message, suggestion)] = findings(lib_kb, "utils.py:3\n")
    assert check == "file-missing"
    assert message.startswith("no file named 'utils.py' in lib@")
    assert suggestion == "did you mean 'util.py'?"


def test_a_bare_name_found_nowhere_names_the_one_upstream_and_commit_it_was_looked_for_in(lib_kb):
    """As a missing full path does: `--format json` and the annotations carry them."""
    lib_kb.page("p.md", "utils.py:3\n", dedent=False)
    [finding] = lib_kb.verify().findings
    assert (finding.check, finding.upstream, finding.commit) == ("file-missing", "lib", lib_kb.pin)
    assert finding.path == "utils.py"

    other = lib_kb.new_upstream("ext")
    lib_kb.add_upstream(
        "ext", other, other.commit({"ext/x.py": "a = 1\n"}, "ext"), prefixes=["ext/"]
    )
    [finding] = lib_kb.verify().findings
    assert finding.message.startswith("no file named 'utils.py' in lib@")
    assert ", ext@" in finding.message
    assert (finding.upstream, finding.commit) == (None, None)  # looked for in two


def test_a_bare_name_of_no_source_file_the_upstream_lacks_is_not_called_missing(lib_kb):
    """`config.yaml:3`, `Dockerfile:4`: as likely the reader's files as the upstream's, and
    like none of its names. A warning that they were not checked, not an error that stops
    the site; a source file the upstream lacks is still missing."""
    found = findings(
        lib_kb,
        "Reads `config.yaml:3`, Dockerfile:4 and build.gradle:12, then `setup.py:3` and "
        "router.php:12.\n",
    )
    assert [(check, message.split(" in ")[0]) for check, _, _, message, _ in found] == [
        ("unattributed", "no file named 'config.yaml'"),
        ("unattributed", "no file named 'Dockerfile'"),
        ("unattributed", "no file named 'build.gradle'"),
        ("file-missing", "no file named 'setup.py'"),
        ("file-missing", "no file named 'router.php'"),
    ]
    assert found[0][4] == "if it is the upstream's, write its path from the repository root"


def test_partial_path_resolves_by_suffix(lib_kb):
    assert checks(lib_kb, "sub/core.py:4\n") == []


def test_symbol_not_in_range_says_where_it_is_defined(lib_kb):
    [(check, _, _, message, suggestion)] = findings(lib_kb, "`delta()` 实现（lib/core.py:6-7）\n")
    assert check == "symbol-not-in-range"
    assert "`delta` is not in range 6-7 of 'lib/core.py'" in message
    assert suggestion == "it is defined at lib/core.py:14-15"


def test_symbol_used_in_range_is_fine_and_missing_symbol_warns(lib_kb):
    assert checks(lib_kb, "`alpha()` is called at lib/core.py:12\n") == []
    [(check, *_)] = findings(lib_kb, "`omega()` (lib/core.py:6-7)\n")
    assert check == "symbol-not-found"


def test_binary_file(lib_kb):
    [(check, _, _, message, _)] = findings(lib_kb, "data/blob.bin:1\n")
    assert check == "binary-file"
    assert "binary" in message


def test_directory_cited_with_lines_is_not_a_file(lib_kb):
    tree_link = f"https://github.com/acme/lib/tree/{lib_kb.pin}/lib/core.py"
    assert checks(lib_kb, f"`lib/sub/` is fine; ./lib/sub:3 and {tree_link} are not\n") == [
        "not-a-file",
        "not-a-file",
    ]


def test_symlink_is_not_followed_or_read(kb, tmp_path):
    repo = kb.new_upstream("lib")
    (repo.path / "link.py").symlink_to("/etc/passwd")
    sha = repo.commit({"lib/a.py": "x = 1\n"}, "add a symlink")
    kb.add_upstream("lib", repo, sha, prefixes=["lib/", "link.py"])
    kb.page("p.md", "see `link.py:1` and ./link.py:1\n")
    report = kb.verify()
    assert [f.check for f in report.findings] == ["not-a-file", "not-a-file"]
    assert "symbolic link" in report.findings[0].message
    assert report.blob_reads == 0


def test_path_escape_reads_nothing_outside_the_repository(lib_kb):
    (lib_kb.root / "secret.py").write_text("TOKEN = 'do not read'\n" * 50, "utf-8")
    report_findings = findings(
        lib_kb, "`../../secret.py:1` and `lib/../../secret.py:40` and ../../etc/passwd:1\n"
    )
    assert [f[0] for f in report_findings] == ["path-escape"] * 3
    assert "leaves the repository" in report_findings[0][3]
    report = lib_kb.verify()
    assert report.blob_reads == 0


def test_absolute_local_path_maps_onto_upstream(lib_kb):
    [(check, _, _, message, suggestion)] = findings(
        lib_kb, "`/home/alice/src/lib/lib/core.py:6-7`\n"
    )
    assert check == "absolute-path"
    assert "maps onto lib:lib/core.py" in message
    assert suggestion == "lib/core.py:6-7"
    result = findings(lib_kb, "`/home/alice/src/lib/lib/core.py:99`\n")
    assert [r[0] for r in result] == ["absolute-path", "range-outside-file"]
    [(check, *_)] = findings(lib_kb, "`/home/alice/other/thing.py:3`\n")
    assert check == "unattributed"


def test_unattributed_path_is_a_warning_not_skipped(lib_kb):
    [(check, _, _, message, _)] = findings(lib_kb, "`torch/distributed/fsdp/x.py:100-200`\n")
    assert check == "unattributed"
    assert "no configured upstream claims 'torch/distributed/fsdp/x.py'" in message
    assert lib_kb.verify().warnings == 1


def test_unpinned_permalink_gets_pinned_url_and_is_checked_at_pin(lib_kb):
    url = "https://github.com/acme/lib/blob/main/lib/core.py#L6-L7"
    [(check, _, _, _, suggestion)] = findings(lib_kb, f"<{url}>\n")
    assert check == "unpinned-permalink"
    assert suggestion == f"https://github.com/acme/lib/blob/{lib_kb.pin}/lib/core.py#L6-L7"
    bad = "https://github.com/acme/lib/blob/main/lib/core.py#L60"
    assert checks(lib_kb, f"{bad}\n") == ["range-outside-file", "unpinned-permalink"]
    # As written: `ingest` writes this into the page, and `ACME` was made `acme`.
    upper = "https://github.com/ACME/lib/blob/main/lib/core.py#L6-L7"
    [(check, _, _, _, suggestion)] = findings(lib_kb, f"<{upper}>\n")
    assert suggestion == f"https://github.com/ACME/lib/blob/{lib_kb.pin}/lib/core.py#L6-L7"


def test_a_branch_link_whose_lines_moved_on_gets_no_pinned_url(lib_kb):
    """A branch link is checked at the pin, and the pinned URL was suggested though the
    branch's lines were other code: pinning it would have changed what it cites."""
    repo = RepoBuilder(path=lib_kb.root / "cache" / "lib")
    values = [f"VALUE_{n} = {n}\n" for n in range(1, 41)]
    values[29] = "VALUE_30 = 300\n"
    repo.commit({"lib/util.py": "".join(values)}, "Change a value")
    same = "https://github.com/acme/lib/blob/main/lib/util.py#L1-L5"
    [(check, _, _, message, suggestion)] = findings(lib_kb, f"<{same}>\n")
    assert check == "unpinned-permalink" and "differ" not in message
    assert suggestion == same.replace("/main/", f"/{lib_kb.pin}/")
    moved = "https://github.com/acme/lib/blob/main/lib/util.py#L28-L32"
    [(check, _, _, message, suggestion)] = findings(lib_kb, f"<{moved}>\n")
    assert check == "unpinned-permalink"
    assert "lines 28-32 at 'main' (" in message
    assert message.endswith("differ from the pin: pinning it would change what it cites")
    assert suggestion == "check the lines, then link to the commit they come from"
    repo.commit({"lib/renamed.py": None}, "Remove a file")
    gone = "https://github.com/acme/lib/blob/main/lib/renamed.py#L1-L2"
    [(check, _, _, message, suggestion)] = findings(lib_kb, f"<{gone}>\n")
    assert "'lib/renamed.py' does not exist at 'main' (" in message
    assert suggestion == "check the lines, then link to the commit they come from"


def test_a_range_of_blank_lines_is_a_warning(lib_kb):
    """`lib/core.py:4-5` cites the blank lines between the imports and `alpha`: off by a few
    lines, and it passed (a quote after it too short to go by said nothing either)."""
    [(check, _, _, message, suggestion)] = findings(lib_kb, "lib/core.py:4-5\n")
    assert (check, suggestion) == ("range-blank", "cite the lines of the code the page means")
    assert message.startswith("range 4-5 of 'lib/core.py' at lib@") and "only blank" in message
    [(_, _, _, message, _)] = findings(lib_kb, "See lib/core.py:8.\n")
    assert message.endswith("is a blank line")
    assert checks(lib_kb, "lib/core.py:4-6 lib/core.py:7-9\n") == []
    # A symbol named beside them says more: where it is.
    assert checks(lib_kb, "`alpha()` (lib/core.py:8)\n") == ["symbol-not-in-range"]
    # A quote too short to go by says nothing; one that says where the code is gives the fix,
    # and the warning is not repeated.
    short = "It is at lib/core.py:8-9:\n\n```python\ndef alpha(x):\n    return x + 1\n```\n"
    assert checks(lib_kb, short) == ["range-blank"]
    beta = CORE_PY.split("\n")[9:15]
    quoted = "It is at lib/core.py:8-9:\n\n```python\n" + "\n".join(beta) + "\n```\n"
    assert [(f[0], f[4]) for f in findings(lib_kb, quoted)] == [
        ("quote-elsewhere", "lib/core.py:10-15")
    ]


def test_commit_permalink_is_checked_at_that_commit(lib_kb):
    first = run_git(lib_kb.root / "cache" / "lib", "rev-parse", "HEAD~2").strip()
    ok = f"https://github.com/acme/lib/blob/{first}/old/name.py#L1-L2"
    assert checks(lib_kb, f"{ok}\n") == []
    moved = f"https://github.com/acme/lib/blob/{lib_kb.pin}/old/name.py#L1"
    assert checks(lib_kb, f"{moved}\n") == ["file-missing"]
    unknown = "https://github.com/acme/lib/blob/" + "f" * 40 + "/lib/core.py#L1"
    [(check, _, _, message, suggestion)] = findings(lib_kb, f"{unknown}\n")
    assert check == "commit-missing"
    assert "is not in the clone of 'lib'" in message
    assert "fetch origin" in suggestion


def test_a_path_written_as_its_permalink_s_text_is_checked_at_the_link_s_commit(lib_kb):
    """`[old/name.py:1-2](…/blob/FIRST/old/name.py#L1-L2)`: the link's text cites what the link
    does, at the link's commit, not at the page's pin (where the file is gone)."""
    first = run_git(lib_kb.root / "cache" / "lib", "rev-parse", "HEAD~2").strip()
    url = f"https://github.com/acme/lib/blob/{first}/old/name.py"
    assert checks(lib_kb, f"`moved()` ([old/name.py:1-2]({url}#L1-L2)) at first\n") == []
    assert checks(lib_kb, f"[`name.py:1`]({url}#L1) as a bare name\n") == []
    # Checked there, a wrong range is reported there, by both.
    [(check, _, _, message, _), second] = findings(lib_kb, f"[old/name.py:9]({url}#L9)\n")
    assert check == second[0] == "range-outside-file"
    assert f"at lib@{first[:7]}" in message
    # The same path outside the link's text, or another file as its text, is the pin's.
    outside = checks(lib_kb, f"[x]({url}#L1) old/name.py:1\n", "upstream: lib\n")
    assert outside == ["file-missing"]
    assert checks(lib_kb, f"[lib/core.py:6]({url}#L1)\n") == []
    assert checks(lib_kb, f"[lib/renamed.py:1]({url}#L1)\n") == []
    # A link to a branch is checked at the pin, and so is its text.
    branch = "https://github.com/acme/lib/blob/main/old/name.py#L1"
    on_branch = checks(lib_kb, f"[old/name.py:1]({branch})\n", "upstream: lib\n")
    assert on_branch == ["file-missing", "file-missing", "unpinned-permalink"]


def test_permalink_to_an_unconfigured_repository_is_unattributed(lib_kb):
    assert checks(lib_kb, "https://github.com/other/repo/blob/main/a.py#L1\n") == ["unattributed"]


def test_page_pin_overrides_manifest_pin(lib_kb):
    first = run_git(lib_kb.root / "cache" / "lib", "rev-parse", "HEAD~2").strip()
    assert checks(lib_kb, "old/name.py:1\n", "upstream: lib\n") == ["file-missing"]
    assert checks(lib_kb, "old/name.py:1\n", f"upstream: lib\npin: {first}\n") == []
    assert checks(lib_kb, "old/name.py:1\n", f"pins:\n  lib: {first}\n") == []


def test_bad_page_pins_and_upstreams(lib_kb):
    assert checks(lib_kb, "x\n", "upstream: nope\n") == ["unknown-upstream"]
    assert checks(lib_kb, "x\n", "upstream: lib\npin: abc\n") == ["pin-invalid"]
    assert checks(lib_kb, "x\n", "pins: {ghost: " + "a" * 40 + "}\n") == ["unknown-upstream"]
    missing = "b" * 40
    result = findings(lib_kb, "lib/core.py:1 lib/core.py:2\n", f"upstream: lib\npin: {missing}\n")
    assert [r[0] for r in result] == ["commit-missing"]  # once per page, not once per ref
    # A bare name on such a page is not searched for in a commit the clone does not have.
    result = findings(lib_kb, "core.py:1 and core.py:2\n", f"upstream: lib\npin: {missing}\n")
    assert [r[0] for r in result] == ["commit-missing"]
    # Nor is a permalink to a branch, which is checked at the page's pin: it is that pin the
    # clone lacks.
    branch_links = (
        "https://github.com/acme/lib/blob/main/lib/core.py#L1-L2 and "
        "https://github.com/acme/lib/tree/main/lib\n"
    )
    result = findings(lib_kb, branch_links, f"upstream: lib\npin: {missing}\n")
    assert [r[0] for r in result] == ["commit-missing"]


def test_every_page_pinned_to_a_missing_commit_says_so(lib_kb):
    """The second page cites only what the first one did: it must not pass for verified."""
    missing = "b" * 40
    pinned = f"---\nupstream: lib\npin: {missing}\n---\n"
    lib_kb.page("a.md", f"{pinned}lib/core.py:1 lib/core.py:2 util.py:1 util.py:2\n")
    lib_kb.page("b.md", f"{pinned}lib/core.py:2\n")
    lib_kb.page("c.md", f"{pinned}util.py:2\n")
    report = lib_kb.verify()
    assert [(f.page, f.check) for f in report.findings] == [
        ("docs/a.md", "commit-missing"),
        ("docs/b.md", "commit-missing"),
        ("docs/c.md", "commit-missing"),
    ]
    assert {(ref.upstream, ref.commit) for ref in report.refs} == {("lib", None)}


def test_frontmatter_problems_are_placed_at_the_line_that_says_them(lib_kb):
    """Each was reported at 1:1, the page's first line, whatever the frontmatter said where."""
    sha = "a" * 40
    for frontmatter, expected in (
        ("title: T\nupstream: nope\n", ("unknown-upstream", 3, 1)),
        ("title: T\nupstream: lib\npin: abc\n", ("pin-invalid", 4, 6)),
        (f"title: T\npins:\n  lib: {sha}\n  ghost: {sha}\n", ("unknown-upstream", 5, 3)),
        ("title: T\nupstream: lib\nheld_refs: nope\n", ("pin-invalid", 4, 1)),
        ("title: T\npin: " + sha + "\n", ("pin-invalid", 3, 1)),  # pin without upstream
    ):
        [(check, line, column, _, _)] = findings(lib_kb, "x\n", frontmatter)
        assert (check, line, column) == expected, frontmatter


def test_a_short_pin_is_read_in_the_clone_and_its_full_sha_given(lib_kb):
    """`pin: 7fffb7c` checked the page's references at the manifest's pin, where the author
    never meant them, and the help said "git rev-parse <rev>" though the clone has it."""
    first = run_git(Path(lib_kb.upstreams["lib"]["url"]), "rev-parse", f"{lib_kb.pin}^").strip()
    # old/name.py is only at the first commit: checked there, it is no finding.
    [(check, line, _, message, suggestion)] = findings(
        lib_kb, "`old/name.py:1-2`\n", f"upstream: lib\npin: {first[:9]}\n"
    )
    assert (check, line) == ("pin-invalid", 3)
    assert f"its references are checked at {first[:12]}" in message
    assert suggestion == f"write {first}"
    [(check, _, _, message, suggestion)] = findings(lib_kb, "x\n", "upstream: lib\npin: 0badc0de\n")
    assert message.endswith("and names no commit of lib")
    assert suggestion == "write the commit the page was written against (kb pin suggest docs/p.md)"


def test_page_problems_become_findings(lib_kb):
    lib_kb.page("bad.md", b"---\ntitle: [x\n---\nbody\n")
    lib_kb.page("latin.md", b"caf\xe9\n")
    report = lib_kb.verify()
    assert [(f.page, f.check, f.line) for f in report.findings] == [
        ("docs/bad.md", "frontmatter-invalid", 2),  # where the bracket opens
        ("docs/latin.md", "page-encoding", 1),
    ]


def test_each_blob_is_read_once_per_run(lib_kb):
    lib_kb.page("p.md", "lib/core.py:1 lib/core.py:6 `gamma()` (lib/core.py:11)\n" * 50)
    lib_kb.page("q.md", "lib/core.py:3 lib/util.py:1\n" * 50)
    report = lib_kb.verify()
    assert report.findings == []
    assert len(report.refs) == 250
    assert report.blob_reads == 2


def test_ignore_option_drops_a_check(lib_kb):
    lib_kb.page("p.md", "`torch/x.py:1` lib/core.py:99\n")
    report = lib_kb.verify(ignore=["unattributed"])
    assert [f.check for f in report.findings] == ["range-outside-file"]


def test_a_range_cutting_into_the_symbol_says_so(lib_kb):
    """`alpha()` (lib/core.py:7-9): the body of `alpha` without its `def` line, and two blank
    lines after it. "Not in range" said nothing of the code being mostly there."""
    [(check, _, _, message, suggestion)] = findings(lib_kb, "`alpha()` (lib/core.py:7-9)\n")
    assert check == "symbol-not-in-range"
    assert message.startswith("Range 7-9 of 'lib/core.py' at lib@")
    assert message.endswith(
        "covers `alpha` (lines 6-7) only in part, without the line that defines it"
    )
    assert suggestion == "it is defined at lib/core.py:6-7"
    # Inside the body, it is the symbol's; apart from it, not in range.
    assert checks(lib_kb, "`alpha()` (lib/core.py:7)\n") == []
    [(_, _, _, message, _)] = findings(lib_kb, "`alpha()` (lib/core.py:14-15)\n")
    assert message.startswith("`alpha` is not in range 14-15")


def test_symbol_in_a_comment_or_docstring_does_not_count(kb):
    repo = kb.new_upstream("lib")
    sha = repo.commit(
        {
            "lib/a.py": 'def sleep():\n    pass\n\n\ndef wake():\n    """Undo sleep."""\n'
            "    # after sleep\n    return 1\n",
            "lib/notes.txt": "sleep well\n",
        },
        "init",
    )
    kb.add_upstream("lib", repo, sha)
    kb.page("p.md", "`sleep()` (lib/a.py:5-8) and `sleep` (lib/notes.txt:1)\n")
    report = kb.verify()
    assert [(f.check, f.suggestion) for f in report.findings] == [
        ("symbol-not-in-range", "it is defined at lib/a.py:1-2")
    ]


def test_a_class_s_method_is_not_said_to_be_used_where_another_object_s_is(kb):
    """`Trainer.fit` cited in a file that defines no such method and calls `model.fit()`:
    the hint pointed at that call, another object's method, as where `fit` is first used."""
    repo = kb.new_upstream("lib")
    sha = repo.commit(
        {
            "lib/run.py": "from lib.train import Trainer\n\n\ndef main(model, data):\n"
            "    model.fit(data)\n    return Trainer.fit(model, data)\n",
            "lib/net.py": "class Net:\n    def fit(self, data):\n        return data\n\n\n"
            "def go(net):\n    return net.fit(1)\n",
        },
        "init",
    )
    kb.add_upstream("lib", repo, sha)
    kb.page("p.md", "`Trainer.fit()` (lib/run.py:1-2), `Trainer.fit()` (lib/net.py:6)\n")
    assert [(f.check, f.suggestion) for f in kb.verify().findings] == [
        ("symbol-not-in-range", "it is first used in code at lib/run.py:6"),
        ("symbol-not-in-range", "another `fit` is defined at lib/net.py:2-3"),
    ]


def test_range_inside_the_named_symbols_body_is_fine(lib_kb):
    # Line 12 is inside `gamma` (lines 11-12) even though the name is not on it.
    assert checks(lib_kb, "the return in `gamma()` (lib/core.py:12)\n") == []
    assert checks(lib_kb, "the return in `delta()` (lib/core.py:12)\n") == ["symbol-not-in-range"]


def test_a_symbol_the_file_only_imports_is_not_defined_there(kb):
    """`utils.py::get_rank` where utils.py only imports `get_rank` and calls it: the page
    claims a definition the file does not hold, and the suggestion names the module's."""
    repo = kb.new_upstream("ml")
    dist = "import os\n\n\ndef get_rank():\n    return int(os.environ.get('RANK', 0))\n\n\n"
    dist += "def barrier():\n    pass\n"
    pin = repo.commit(
        {
            "src/ml/dist.py": dist,
            "src/ml/utils.py": (
                "from ml.dist import get_rank\n\n\ndef log_metrics(metrics):\n"
                "    if get_rank() == 0:\n        print(metrics)\n"
            ),
            "src/ml/__init__.py": "from .dist import (\n    barrier,\n    get_rank as rank,\n)\n",
            "src/ml/patched.py": (
                "import functools\nfrom ml.dist import get_rank\n\n"
                "get_rank = functools.cache(get_rank)\n"
            ),
            "src/ml/rebound.py": (
                "from ml.dist import (\n    barrier,  # the helper\n)\n\n"
                "helper, barrier = None, None\n"
            ),
        },
        "Add ml",
        date="2025-01-02T00:00:00+00:00",
    )
    kb.add_upstream("ml", repo, pin, prefixes=["src/"])
    kb.page(
        "p.md",
        "- `src/ml/utils.py::get_rank`\n- `src/ml/__init__.py::barrier`\n"
        "- `src/ml/__init__.py::rank`\n- `src/ml/patched.py::get_rank`\n"
        "- `src/ml/dist.py::get_rank` and `src/ml/utils.py::log_metrics`\n"
        "- `src/ml/rebound.py::barrier` and `src/ml/rebound.py::helper`\n",
        dedent=False,
    )
    found = [(f.check, f.line, f.message, f.suggestion) for f in kb.verify().findings]
    assert found == [
        (
            "symbol-not-found",
            1,
            "`get_rank` is not defined in 'src/ml/utils.py' at ml@"
            f"{pin[:7]}: the file only imports it (line 1, from `ml.dist`)",
            "it is defined at src/ml/dist.py:4-5",
        ),
        (
            "symbol-not-found",
            2,
            "`barrier` is not defined in 'src/ml/__init__.py' at ml@"
            f"{pin[:7]}: the file only imports it (line 1, from `.dist`)",
            "it is defined at src/ml/dist.py:8-9",
        ),
        (
            "symbol-not-found",
            3,
            "`rank` is not defined in 'src/ml/__init__.py' at ml@"
            f"{pin[:7]}: the file only imports it (line 1, from `.dist`)",
            None,
        ),
    ]

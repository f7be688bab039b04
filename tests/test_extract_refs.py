"""Reference extraction: every form people write, exact positions, and what is not a ref."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.kb.pages import parse_page
from generator.model import RefForm
from generator.refs.extract import ExtractOptions, extract_refs, scan
from generator.refs.rewrite import rewrite_ref


def refs_of(markdown: str, options: ExtractOptions | None = None, dedent: bool = True):
    text = textwrap.dedent(markdown) if dedent else markdown
    page = parse_page(text.encode("utf-8"), None, "p.md", "p.md")  # type: ignore[arg-type]
    return extract_refs(scan(page.text, page.body_start), "p.md", options)


def one(markdown: str, **kwargs):
    refs = refs_of(markdown, **kwargs)
    assert len(refs) == 1, refs
    return refs[0]


def test_full_path_with_range_in_code_span():
    ref = one("See `slime/backends/fsdp_utils/actor.py:1016-1057` here.\n")
    assert (ref.line, ref.column) == (1, 6)
    assert ref.path == "slime/backends/fsdp_utils/actor.py"
    assert (ref.start, ref.end) == (1016, 1057)
    assert ref.form is RefForm.PATH
    assert ref.text == "slime/backends/fsdp_utils/actor.py:1016-1057"


def test_bare_file_name_single_line():
    ref = one("The loop is at actor.py:233.\n")
    assert ref.form is RefForm.BARE
    assert (ref.path, ref.start, ref.end, ref.column) == ("actor.py", 233, 233, 16)


def test_cjk_full_width_brackets_and_colon():
    refs = refs_of("实现（actor.py:165-209）  代码位置：`actor.py:164-210` 以及 actor.py：12\n")
    assert [(r.path, r.start, r.end) for r in refs] == [
        ("actor.py", 165, 209),
        ("actor.py", 164, 210),
        ("actor.py", 12, 12),
    ]
    # Columns count characters, not bytes: '实现（' is three characters.
    assert refs[0].column == 4


@pytest.mark.parametrize(
    ("written", "start", "end"),
    [
        ("x/a.py:10-20", 10, 20),
        ("x/a.py:10–20", 10, 20),
        ("x/a.py:10—20", 10, 20),
        ("x/a.py:10~20", 10, 20),
        ("x/a.py:L10-L20", 10, 20),
        ("x/a.py#L10-L20", 10, 20),
        ("x/a.py#L10", 10, 10),
        ("x/a.py:7", 7, 7),
    ],
)
def test_range_spellings(written, start, end):
    ref = one(f"see {written} now\n")
    assert (ref.start, ref.end) == (start, end)


def test_ref_in_comment_inside_fenced_code_block():
    refs = refs_of(
        """\
        Text.

        ```python
        # slime/backends/fsdp_utils/actor.py:276-287
        def sleep(self):
            path = "not/a/ref.py:12"  # but slime/x.py:3 in a comment is
        ```
        """
    )
    assert [(r.line, r.column, r.path, r.in_code_block) for r in refs] == [
        (4, 3, "slime/backends/fsdp_utils/actor.py", True),
        (6, 37, "slime/x.py", True),
    ]


def test_refs_in_headings_tables_and_lists():
    refs = refs_of(
        """\
        ## 4.4 `sleep()` (actor.py:276-288)

        | Function | File |
        |---|---|
        | `pack()` | `data/packing.py:48` |

        - item one: utils.py:9
        """
    )
    assert [(r.line, r.path, r.symbol) for r in refs] == [
        (1, "actor.py", "sleep"),
        (5, "data/packing.py", "pack"),
        (7, "utils.py", None),
    ]


def test_symbol_named_next_to_ref():
    assert one("`pack_samples()` 实现（data_packing.py:48-135）\n").symbol == "pack_samples"
    assert one("`FSDPActor.sleep()` (actor.py:276)\n").symbol == "FSDPActor.sleep"
    assert one("actor.py:276-288 (`sleep`)\n").symbol == "sleep"
    # Too far away, or across a sentence: not associated.
    assert one("`sleep()` is described later in this section. See actor.py:276\n").symbol is None
    assert one("`sleep()`. Then actor.py:276\n").symbol is None
    # Words that say where the symbol is, however long, keep it: English drafts write them.
    assert one("`wake_up()` is defined in actor.py:39-43.\n").symbol == "wake_up"
    assert one("`Critic` is implemented in actor.py:50\n").symbol == "Critic"
    assert one("The `wake_up()` method lives in actor.py:39-43.\n").symbol == "wake_up"
    assert one("The `Actor.sleep` method is at actor.py:20\n").symbol == "Actor.sleep"
    assert one("`torch` is imported and then used in actor.py:3\n").symbol is None
    # A file name in backticks is not a symbol, nor is a complexity.
    assert one("`actor.py` (actor.py:276)\n").symbol is None
    assert one("in `O(log P)` (data/packing.py:59-65)\n").symbol is None


def test_table_cell_names_a_symbol_only_when_it_holds_just_the_code_span():
    assert one("| `pack()` | `data/packing.py:48` |\n").symbol == "pack"
    assert one("| `pack()` 少一个边界 | data/packing.py:45 |\n").symbol is None
    assert one("| see `pack()` | data/packing.py:45 |\n").symbol is None


def test_absolute_local_path():
    ref = one("`/home/alice/slime/slime/backends/fsdp_utils/actor.py:821`\n")
    assert ref.form is RefForm.ABSOLUTE
    assert ref.path == "/home/alice/slime/slime/backends/fsdp_utils/actor.py"
    assert ref.start == 821


@pytest.mark.parametrize(
    ("text", "written"),
    [
        # A home directory named in Chinese, on Linux and macOS, with a drive, with a tilde.
        ("见 `/home/用户/slime/slime/x.py:10-20` 的循环", "/home/用户/slime/slime/x.py:10-20"),
        ("See /Users/张三/code/slime/x.py:10 here", "/Users/张三/code/slime/x.py:10"),
        ("On Windows: C:/Users/张三/src/slime/x.py:5", "/Users/张三/src/slime/x.py:5"),
        ("Windows: C:\\Users\\bob\\slime\\x.py:5-9.", "\\Users\\bob\\slime\\x.py:5-9"),
        ("`D:\\src\\slime\\x.py:5`", "\\src\\slime\\x.py:5"),
        ("`~/项目/slime/x.py:3`", "~/项目/slime/x.py:3"),
        ("~~/Users/张三/src/slime/x.py:4~~", "/Users/张三/src/slime/x.py:4"),
        # Prose running into the path, whose first directory is named in ASCII.
        ("我们在/home/用户/slime/x.py:8看到", "/home/用户/slime/x.py:8"),
        ("**/home/用户/slime/x.py:9**", "/home/用户/slime/x.py:9"),
        ("见 `/home/用户/slime/x.py:Trainer`", "/home/用户/slime/x.py:Trainer"),
    ],
)
def test_an_absolute_path_may_have_directories_named_in_any_script(text, written):
    """Such a path was cut at the name (`/slime/x.py:10`), and ingest, writing the rest as
    the repository's path, left the name glued to it (`/home/用户slime/x.py:10`)."""
    ref = one(text + "\n")
    assert ref.form is RefForm.ABSOLUTE
    assert ref.text == written
    assert text.index(written) == ref.column - 1


@pytest.mark.parametrize(
    ("text", "written", "form"),
    [
        ("见slime/x.py:10", "slime/x.py:10", RefForm.PATH),
        ("在slime/x.py:10中", "slime/x.py:10", RefForm.PATH),
        # A name running into the path's own slash is prose (or a relative directory), as before.
        ("数据/slime/x.py:10", "/slime/x.py:10", RefForm.ABSOLUTE),
        ("输入/输出/slime/x.py:7", "/slime/x.py:7", RefForm.ABSOLUTE),
        ("abc/用户/slime/x.py:10", "/slime/x.py:10", RefForm.ABSOLUTE),
        # Prose with a slash list before, all one run of word characters.
        ("吞吐/GPU/利用率的计算在slime/utils/x.py:33", "slime/utils/x.py:33", RefForm.PATH),
        ("训练/SFT/RL阶段见slime/x.py:10", "slime/x.py:10", RefForm.PATH),
        ("| 训练/RL/推理见slime/x.py:10 |", "slime/x.py:10", RefForm.PATH),
        ("训练/RL/推理见slime/x.py:train_step", "slime/x.py:train_step", RefForm.PATH),
    ],
)
def test_prose_in_another_script_stays_out_of_a_path(text, written, form):
    ref = one(text + "\n")
    assert (ref.text, ref.form) == (written, form)


@pytest.mark.parametrize(
    "text",
    ["$HOME/项目/slime/x.py:40", "%USERPROFILE%/项目/slime/x.py:40", "$HOME/proj/slime/x.py:40"],
)
def test_a_path_going_on_from_a_variable_is_no_reference(text):
    assert refs_of(text + "\n") == []


def test_a_path_with_directories_named_in_any_script_standing_alone():
    """In a table's path cell, after a lines phrase, and cited whole in a code span."""
    path = "/Users/张三/src/slime/x.py"
    options = ExtractOptions(route_prefixes=("slime/",), absolute_whole_files=True)
    refs = refs_of(
        f"| `{path}` | 10-20 | the loop |\n\nlines 9-14 of `{path}`\n\n整个文件：`{path}`。\n\n"
        f"`{path}`（第 37-47 行）\n\n{path} (lines 50-52)\n",
        options=options,
    )
    assert [(r.path, r.start, r.end, r.form) for r in refs] == [
        (path, 10, 20, RefForm.ABSOLUTE),
        (path, 9, 14, RefForm.ABSOLUTE),
        (path, None, None, RefForm.ABSOLUTE),
        (path, 37, 47, RefForm.ABSOLUTE),
        (path, 50, 52, RefForm.ABSOLUTE),
    ]


def test_permalinks_commit_branch_and_tree():
    sha = "a" * 40
    refs = refs_of(
        f"""\
        [x](https://github.com/OWNER/REPO/blob/{sha}/pkg/a.py#L10-L20)
        https://github.com/owner/repo/blob/main/pkg/b.py#L5
        https://github.com/owner/repo/tree/{sha}/pkg
        https://github.com/owner/repo/pull/12 and https://example.com/a.py#L3
        """
    )
    assert [
        (r.form, r.repo_slug, r.revision, r.path, r.start, r.end, r.is_directory) for r in refs
    ] == [
        (RefForm.PERMALINK, "owner/repo", sha, "pkg/a.py", 10, 20, False),
        (RefForm.PERMALINK, "owner/repo", "main", "pkg/b.py", 5, 5, False),
        (RefForm.PERMALINK, "owner/repo", sha, "pkg", None, None, True),
    ]
    assert refs[0].column == 5


def test_permalink_on_enterprise_host_only_when_configured():
    text = "https://git.corp.example/o/r/blob/main/a.py#L1\n"
    assert refs_of(text) == []
    options = ExtractOptions(permalink_hosts=frozenset({"git.corp.example"}))
    assert one(text, options=options).repo_slug == "o/r"


@pytest.mark.parametrize(
    "text",
    [
        "connect to host:8080 now",
        "at 10:30 we met",
        "release v1.2:3 notes",
        "see example.com:443",
        "localhost:8000/docs",
        "ratio 3/4:1",
        "open http://host.example/path/file.py:10 please",
        "https://example.com/src/main.py#L10",
        "compiler says a.py:10:5: error",
        "docker.io/library/python:3.11",
        "version 1.2.3:4",
        "lines 3-4 of the output",
        "line 5 in 2024 and lines 10 to 20 of output.log",
        "第3行到第4行没有文件",
    ],
)
def test_things_that_are_not_refs(text):
    assert refs_of(text + "\n") == []


def test_traceback_and_logs_in_code_blocks_are_not_refs():
    refs = refs_of(
        """\
        ```
        Traceback (most recent call last):
          File "/usr/lib/python3/site-packages/torch/nn/module.py", line 1501, in _call
        /usr/lib/python3/site-packages/torch/nn/module.py:1501: UserWarning: deprecated
        ```
        """
    )
    assert refs == []


def test_mermaid_labels_are_searched():
    ref = one(
        """\
        ```mermaid
        graph LR
          A["actor.py:10 train()"] --> B
        ```
        """
    )
    assert (ref.line, ref.path) == (3, "actor.py")


def test_frontmatter_is_not_searched_and_lines_count_from_file_start():
    ref = one("---\nsource: a/b.py:1\n---\n\nBody x/y.py:4\n")
    assert (ref.line, ref.column, ref.path) == (5, 6, "x/y.py")


def test_whole_file_ref_in_code_span_needs_a_routed_prefix():
    options = ExtractOptions(route_prefixes=("slime/",))
    refs = refs_of(
        "`slime/backends/actor.py` and `path/to/new.py` and `slime/x.py:3`\n", options=options
    )
    assert [(r.path, r.start) for r in refs] == [
        ("slime/backends/actor.py", None),
        ("slime/x.py", 3),
    ]


def test_whole_file_absolute_path_needs_a_routed_part_below_its_first_directory():
    """Read for ingest only (the option): elsewhere a path like `/root/slime/ckpt/model.pt`
    names a folder called after the project more often than a clone."""
    text = (
        "`/home/bob/slime/slime/x.py` `~/src/slime/tools/run.sh` `C:/Users/bob/slime/slime/y.py`\n"
        "`/tools/run.sh` `/slime/x.py` `~/slime/x.py` `/etc/hosts` `/home/bob/slime/slime/`\n"
        "`/usr/lib/python3/os.py` `C:/Windows/x.dll` `https://x.org/a/slime/x.py`\n"
    )
    assert refs_of(text, options=ExtractOptions(route_prefixes=("slime/", "tools/"))) == []
    options = ExtractOptions(route_prefixes=("slime/", "tools/"), absolute_whole_files=True)
    refs = refs_of(text, options=options)
    assert [(r.form, r.path, r.text, r.column) for r in refs] == [
        (RefForm.ABSOLUTE, "/home/bob/slime/slime/x.py", "/home/bob/slime/slime/x.py", 2),
        (RefForm.ABSOLUTE, "~/src/slime/tools/run.sh", "~/src/slime/tools/run.sh", 31),
        (RefForm.ABSOLUTE, "/Users/bob/slime/slime/y.py", "/Users/bob/slime/slime/y.py", 60),
    ]


def test_crlf_and_bom_positions():
    raw = "\ufeff---\r\ntitle: x\r\n---\r\nSee a/b.py:3\r\n".encode()
    page = parse_page(raw, None, "p.md", "p.md")  # type: ignore[arg-type]
    refs = extract_refs(scan(page.text, page.body_start), "p.md")
    assert [(r.line, r.column, r.start) for r in refs] == [(4, 5, 3)]


def test_absurd_line_numbers_do_not_crash():
    ref = one("x/a.py:1000000000000000000\n")
    assert ref.start == 10**18
    assert one("x/a.py:" + "9" * 5000 + "\n").start == 10**30


def test_table_row_with_a_path_cell_and_a_range_cell():
    refs = refs_of(
        """\
        | 文件 | 行号 | 函数 |
        |---|---|---|
        | `/home/alice/slime/slime/backends/fsdp_utils/actor.py` | 276-288 | sleep |
        | `actor.py` | L300-L310 | wake up |
        | `x.py:3` | 4-5 | both cells cite: not this form |
        """
    )
    assert [(r.line, r.text, r.path, r.start, r.end, r.symbol, r.style) for r in refs] == [
        (
            3,
            "276-288",
            "/home/alice/slime/slime/backends/fsdp_utils/actor.py",
            276,
            288,
            "sleep",
            "table",
        ),
        (4, "L300-L310", "actor.py", 300, 310, None, "table"),
        (5, "x.py:3", "x.py", 3, 3, None, "inline"),
    ]
    # The path cell is the reference's path, not a whole-file reference of its own.
    options = ExtractOptions(route_prefixes=("slime/",))
    row = "| `slime/x.py` | 10-20 |\n"
    assert [(r.text, r.style) for r in refs_of(row, options)] == [("10-20", "table")]
    # Emphasis around the path cell, and a range cell in a code span, read the same.
    for row in ("| **`slime/x.py`** | 10-20 |\n", "| *slime/x.py* | `10-20` |\n"):
        found = [(r.text, r.path, r.start, r.end, r.style) for r in refs_of(row, options)]
        assert found == [("10-20", "slime/x.py", 10, 20, "table")], row


@pytest.mark.parametrize(
    ("written", "path", "start", "end", "symbol"),
    [
        (
            "`slime/backends/fsdp_utils/actor.py` (lines 811-831) does it.",
            "slime/backends/fsdp_utils/actor.py",
            811,
            831,
            None,
        ),
        ("See actor.py, line 12.", "actor.py", 12, 12, None),
        (
            "`slime/data/loader.py`（第 811-831 行）读入数据。",
            "slime/data/loader.py",
            811,
            831,
            None,
        ),
        ("`actor.py` 中的 `sleep()` 方法（第 12 至 20 行）。", "actor.py", 12, 20, "sleep"),
        ("actor.py 第12行", "actor.py", 12, 12, None),
        ("`actor.py` 第12行到第20行。", "actor.py", 12, 20, None),
        (
            "Lines 811-831 of `slime/backends/actor.py` hold it.",
            "slime/backends/actor.py",
            811,
            831,
            None,
        ),
        ("See lines 12 to 20 in actor.py.", "actor.py", 12, 20, None),
        ("It is line 12 of `actor.py`, in `setup()`.", "actor.py", 12, 12, None),
        # Emphasis around the phrase or its path is not part of the path.
        ("*lines 32-35 of slime/ckpt/save.py*", "slime/ckpt/save.py", 32, 35, None),
        ("lines 32-35 of *slime/ckpt/save.py*", "slime/ckpt/save.py", 32, 35, None),
        ("**Source:** lines 32-35 of **save.py**", "save.py", 32, 35, None),
        ("第 32-35 行（*save.py*）", "save.py", 32, 35, None),
    ],
)
def test_lines_phrases_in_english_and_chinese(written, path, start, end, symbol):
    ref = one(written + "\n")
    assert (ref.path, ref.start, ref.end, ref.symbol, ref.style) == (
        path,
        start,
        end,
        symbol,
        "phrase",
    )
    assert written[ref.column - 1 :].startswith(ref.text)


@pytest.mark.parametrize(
    ("written", "symbol"),
    [
        ("`Attention.__init__`（attention.py 第 68-76 行）", "Attention.__init__"),
        ("`Attention.__init__` 在 attention.py 第 68-76 行", "Attention.__init__"),
        ("`_masked_softmax` (lines 53-57 of attention.py)", "_masked_softmax"),
        ("`_masked_softmax` is at lines 53-57 of attention.py", "_masked_softmax"),
        ("lines 53-57 of attention.py hold `_masked_softmax`.", "_masked_softmax"),
        ("(lines 53-57 of attention.py) define `_masked_softmax`.", "_masked_softmax"),
        # The path in a code span or emphasis of its own, as LLM drafts write it.
        ("`Attention.__init__` 在 `attention.py` 第 68-76 行", "Attention.__init__"),
        ("`Attention.__init__`（`model/attention.py` 第 68-76 行）", "Attention.__init__"),
        ("`_masked_softmax` is at lines 53-57 of `attention.py`", "_masked_softmax"),
        ("lines 53-57 of `attention.py` hold `_masked_softmax`.", "_masked_softmax"),
        ("lines 53-57 of *attention.py* hold `_masked_softmax`.", "_masked_softmax"),
        ("`_masked_softmax` (`attention.py`:53-57)", "_masked_softmax"),
        ("`_masked_softmax` 在 `attention.py`：53-57", "_masked_softmax"),
        ("See `attention.py`:53-57", None),
        # A short Chinese gap names the symbol when its words say where it is, not otherwise.
        ("`Attention.forward` 的实现（attention.py:68-76）", "Attention.forward"),
        ("`forward()` 定义在 attention.py:68-76", "forward"),
        ("`unpack()` 的实现在第 26-29 行（pack_utils.py）。", "unpack"),
        ("`unpack()` 在第 26-29 行（pack_utils.py）。", "unpack"),
        ("`unpack()`（第 26-29 行，pack_utils.py）。", "unpack"),
        ("`unpack()` 的实现在 pack_utils.py 第 26-29 行。", "unpack"),
        ("`unpack()` 定义于 pack_utils.py 第 26-29 行。", "unpack"),
        ("`clear_memory()` 不变（attention.py:68-76）", None),
        ("新分支调用 `offload()`，`clear_memory()` 保持原样不变（attention.py:68-76）", None),
        # Not named as what the lines hold: a caller, a place where it is called, the path.
        ("The loop in attention.py (lines 5-9) calls `fetch()`.", None),
        ("调用 `foo()` 的地方在 attention.py 第 10-20 行", None),
        ("`train()` calls the step, attention.py lines 5-9", None),
        ("See `attention.py` (lines 5-9)", None),
    ],
)
def test_a_lines_phrase_takes_the_name_written_beside_it_as_inline_ones_do(written, symbol):
    """`` `X`（x.py 第 68-76 行）`` named `X` as `` `X`（x.py:68-76）`` does, but only the
    inline form was checked for it: the lines of another function passed."""
    assert one(written + "\n").symbol == symbol


def test_path_and_symbol_without_lines():
    refs = refs_of(
        "See `slime/backends/fsdp_utils/actor.py:setup_model()` and `actor.py::FSDPActor.sleep`;"
        " not config.yaml:train, host:port or a.py:10:5.\n"
    )
    assert [(r.path, r.symbol, r.start, r.style) for r in refs] == [
        ("slime/backends/fsdp_utils/actor.py", "setup_model", None, "symbol"),
        ("actor.py", "FSDPActor.sleep", None, "symbol"),
    ]


def test_several_lines_at_once():
    refs = refs_of("Calls at actor.py:360, 574 and b.py:10-20、30-40。\nNot x.py:3, 4 tokens.\n")
    assert [(r.text, r.path, r.start, r.end, r.style) for r in refs] == [
        ("actor.py:360", "actor.py", 360, 360, "inline"),
        ("574", "actor.py", 574, 574, "list"),
        ("b.py:10-20", "b.py", 10, 20, "inline"),
        ("30-40", "b.py", 30, 40, "list"),
        ("x.py:3", "x.py", 3, 3, "inline"),
    ]


def test_refs_in_box_diagrams_in_plain_fences():
    refs = refs_of(
        """\
        ```
        ┌─ actor.py:276 ──────┐
        │  sleep() ─► offload.py:10-12
        └─────────────────────┘
        ```

        ```
        INFO actor.py:233 step 1
        ```
        """
    )
    assert [(r.line, r.path, r.start, r.in_code_block) for r in refs] == [
        (2, "actor.py", 276, True),
        (3, "offload.py", 10, True),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "It took 3 lines of code and 12 lines of config.",
        "第 3 章讲了 12 行代码，第 4 节更短。",
        "| step | 12-14 | fast |",
        'File "/usr/lib/python3/site.py", line 12, in main',
        "The list 1, 2, 3 and 4, 5 are numbers.",
        "Set `world_size: 8` and `rank: 0` in config.",
        "Call `foo:bar()` on the object.",
        "torch 2.3.1:cu121 is the wheel we use",
        "A batch of a.py:10_000 tokens is no line, nor cfg.yaml:4_096_max.",
    ],
)
def test_new_forms_leave_non_references_alone(text):
    assert refs_of(text + "\n") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It is _x/a.py:12_ there.", [("x/a.py", 12, 12)]),
        ("It is __x/a.py:12-14__ there.", [("x/a.py", 12, 14)]),
        ("Gone: ~~x/a.py:98~~ now.", [("x/a.py", 98, 98)]),
        (
            "Private: _x/_priv.py:3 and x/__init__.py:4.",
            [("_x/_priv.py", 3, 3), ("x/__init__.py", 4, 4)],
        ),
        ("See x/a.py:7-10,50-60 then more.", [("x/a.py", 7, 10), ("x/a.py", 50, 60)]),
        ("See x/a.py:7-10, 50-60.", [("x/a.py", 7, 10), ("x/a.py", 50, 60)]),
        ("See x/a.py:7-10, 20 files more.", [("x/a.py", 7, 10)]),
        ("Edit a.py:10, 2-3 times a day.", [("a.py", 10, 10)]),
        ("See a.py:12, 2020-2024 data.", [("a.py", 12, 12)]),
    ],
)
def test_emphasis_around_a_reference_and_a_range_listed_after_it(text, expected):
    """GitHub renders `_x_` and `~~x~~` as emphasis and strikethrough: the markers are not
    part of the path. A range after a comma is lines whatever follows; a lone number
    followed by a word is not."""
    assert [(r.path, r.start, r.end) for r in refs_of(text + "\n")] == expected


_ALPHABET = st.sampled_from(
    [
        *"abcxyz_./-:：#L0123456789 `()（）[]|\n\t~–,、",
        "lines ",
        "第",
        "行",
        "::",
        "┌─",
        "actor.py",
        "slime/",
        "```",
        "https://github.com/o/r/blob/",
        "\r\n",
        "实现",
        "\ufeff",
        "---\n",
    ]
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(_ALPHABET, max_size=80).map("".join))
def test_extractor_never_crashes_and_positions_point_inside_the_line(text):
    page = parse_page(text.encode("utf-8"), None, "p.md", "p.md")  # type: ignore[arg-type]
    assert page.text is not None
    options = ExtractOptions(route_prefixes=("slime/",))
    refs = extract_refs(scan(page.text, page.body_start), "p.md", options)
    lines = page.text.split("\n")
    for ref in refs:
        assert 1 <= ref.line <= len(lines)
        line = lines[ref.line - 1]
        assert 1 <= ref.column <= len(line)
        assert line[ref.column - 1 :].startswith(ref.text)


def test_quoted_regions_are_not_searched_for_refs() -> None:
    from generator.refs.extract.refs import QUOTED_END, QUOTED_START

    text = (
        f"a.py:1\n\n{QUOTED_START}\n\n> b.py:2\n\n{QUOTED_END}\n\nc.py:3\n\n"
        f"{QUOTED_START}\n\n> d.py:4 (an unclosed region runs to the end)\n"
    )
    assert [r.text for r in extract_refs(scan(text), "p.md")] == ["a.py:1", "c.py:3"]
    # Inside a blockquote a marker is text, not a marker: quoted text cannot end the region.
    nested = f"{QUOTED_START}\n\n> {QUOTED_END}\n> e.py:5\n\n{QUOTED_END}\n\nf.py:6\n"
    assert [r.text for r in extract_refs(scan(nested), "p.md")] == ["f.py:6"]


@pytest.mark.parametrize(
    ("line", "symbol"),
    [
        ("- `self.config`：配置对象，见 `toykit/config.py:6-13`", None),
        ("`cls.registry` (lib/models.py:40-52)", None),
        ("| `this.state` | `web/app.js:4` |", None),
        ("`Trainer.fit()` (lib/trainer.py:10-20)", "Trainer.fit"),
        ("`self_attention()` (lib/attn.py:3-9)", "self_attention"),
        ("`self.sleep()` (lib/actor.py:24-27)", "self.sleep"),  # a method, called
    ],
)
def test_an_attribute_of_an_instance_is_not_the_symbol_a_reference_cites(line, symbol):
    """`self.config` next to `config.py:6-13` names what an object holds, not a name the
    file defines: read as the cited symbol, it was reported missing, and sync held the
    reference for good. A method called on `self` is still the cited symbol."""
    assert one(line + "\n").symbol == symbol


@pytest.mark.parametrize(
    ("line", "path", "start", "end"),
    [
        ("第 23 至 29 行（config.py）是 `load_config()`。", "config.py", 23, 29),
        ("新增字段在第 10-11 行（pkg/config.py）。", "pkg/config.py", 10, 11),
        ("The loop, lines 9-14 (`pkg/x.py`), runs once.", "pkg/x.py", 9, 14),
        ("解包逻辑（第 26-29 行，pkg/pack_utils.py）。", "pkg/pack_utils.py", 26, 29),
        ("The loop (lines 9-14, `pkg/x.py`) runs once.", "pkg/x.py", 9, 14),
        # The name in brackets repeats the path before the lines, which says more.
        ("`slime/ray/rollout.py` 第 100-120 行（`rollout.py`）", "slime/ray/rollout.py", 100, 120),
    ],
)
def test_a_path_in_brackets_after_a_lines_phrase(line, path, start, end):
    """Read nowhere before: no reference, no finding, no link."""
    ref = one(line + "\n")
    assert (ref.path, ref.start, ref.end, ref.style) == (path, start, end, "phrase")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "In proj/alpha.py, the helper (lines 5-9) and compute (lines 900-910) live.",
            [("proj/alpha.py", 5, 9), ("proj/alpha.py", 900, 910)],
        ),
        (
            "在 proj/alpha.py 中，第 5 至 9 行是 helper，第 900 至 910 行是 compute。",
            [("proj/alpha.py", 5, 9), ("proj/alpha.py", 900, 910)],
        ),
        (
            "See lines 5-9 and 900-910 of proj/alpha.py.",
            [("proj/alpha.py", 5, 9), ("proj/alpha.py", 900, 910)],
        ),
        (
            "See lines 5-9, 12-16 and 20 of proj/alpha.py.",
            [("proj/alpha.py", 5, 9), ("proj/alpha.py", 12, 16), ("proj/alpha.py", 20, 20)],
        ),
        (
            "See proj/alpha.py (lines 5-9, 12-16).",
            [("proj/alpha.py", 5, 9), ("proj/alpha.py", 12, 16)],
        ),
        (
            "proj/alpha.py lines 5-9, and proj/beta.py lines 3-4.",
            [("proj/alpha.py", 5, 9), ("proj/beta.py", 3, 4)],
        ),
        # What ends a sentence, a number or another path between two phrases keeps them apart.
        (
            "In proj/alpha.py, lines 5-9 hold the helper; lines 12-16 hold compute.",
            [("proj/alpha.py", 5, 9)],
        ),
        ("In proj/alpha.py (lines 3-4), 12 of them run.", [("proj/alpha.py", 3, 4)]),
        ("It took 3 lines of code and 12 lines of config.", []),
        # Other words than a conjunction and a name: the next phrase may be about anything.
        ("See `setup.py` (lines 5-9) and the `Makefile` (lines 3-4).", [("setup.py", 5, 9)]),
        (
            "`pkg/core.py` (lines 9-13) builds it and the log then shows lines 10-11 of output.",
            [("pkg/core.py", 9, 13)],
        ),
        ("`x.py` (lines 3-4) and the proof in Appendix B (lines 12-16).", [("x.py", 3, 4)]),
        ("Lines 5-9 of x.py and lines 12-16 of the diff.", [("x.py", 5, 9)]),
        # Another text's lines after the file: a word's possessive, output named in Chinese.
        ("After running x.py, the log's lines 3-5 show the loss.", []),
        ("After running x.py, the output’s L3-L5 show it.", []),
        ("运行 x.py 之后，日志第 3-5 行显示 loss 下降。", []),
        ("x.py 的输出第 3 行", []),
        ("x.py's lines 3-5 hold it.", [("x.py", 3, 5)]),
        ("In x.py, `fit`'s lines 3-5 loop.", [("x.py", 3, 5)]),
        ("In x.py the Trainer's lines 3-5 loop.", [("x.py", 3, 5)]),
        ("在 x.py 中，第 3-5 行定义了循环", [("x.py", 3, 5)]),
        ("在 `x.py` 第 10-20 行实现了 forward，而调用方在第 50 行。", [("x.py", 10, 20)]),
        # In Chinese, what the lines do in a few characters, then "then": the same file.
        (
            "actor.py 第 37 行调用 `clear_memory()`，然后第 38-39 行把模型搬到 CPU。",
            [("actor.py", 37, 37), ("actor.py", 38, 39)],
        ),
        ("x.py 第 3 行检查参数，第 8 行返回。", [("x.py", 3, 3), ("x.py", 8, 8)]),
        ("x.py 第 37 行调用 `f()`，而调用方在第 50 行。", [("x.py", 37, 37)]),
        ("x.py 第 3 行检查参数，论文的第 8 行说明了原因。", [("x.py", 3, 3)]),
        ("对应 `x.py` 第 3 行和论文伪代码的第 5 行", [("x.py", 3, 3)]),
        ("x.py lines 3-4 of `train()` do it.", [("x.py", 3, 4)]),
        # The path after the lines, said to hold them, in Chinese.
        ("`unpack()` 的实现（第 31-37 行）在 toy/data.py 里。", [("toy/data.py", 31, 37)]),
        ("第 31-37 行位于 `toy/data.py` 中。", [("toy/data.py", 31, 37)]),
        ("第 3 行在文件中。", []),
        # A Chinese list of lines.
        ("x.py 第 5、12 行", [("x.py", 5, 5), ("x.py", 12, 12)]),
        (
            "在 x.py 中，第 5、12-16、20 行是辅助函数。",
            [("x.py", 5, 5), ("x.py", 12, 16), ("x.py", 20, 20)],
        ),
        ("第 5-9、12-16 行（x.py）", [("x.py", 5, 9), ("x.py", 12, 16)]),
        ("共 2、3 行。", []),
        # "and" lists lines, "between ... and" gives a range.
        ("See lines 5 and 20 of x.py.", [("x.py", 5, 5), ("x.py", 20, 20)]),
        ("See lines 5 and 12-16 of x.py.", [("x.py", 5, 5), ("x.py", 12, 16)]),
        ("Either lines 5-9 or 12-16 of x.py.", [("x.py", 5, 9), ("x.py", 12, 16)]),
        ("It is between lines 5 and 20 of x.py.", [("x.py", 5, 20)]),
        # A list is one when a path or a bracket closes it: not a year after it.
        ("x.py lines 10 and 20, 2024.", [("x.py", 10, 10)]),
        ("x.py (lines 5-9, 12)", [("x.py", 5, 9), ("x.py", 12, 12)]),
    ],
)
def test_every_lines_phrase_of_a_sentence_takes_its_path(line, expected):
    """Only the first phrase after a path was read: the second, in English or Chinese, and
    ``lines 5-9 and 12-16 of x.py`` went unchecked, and sync left them at the old lines."""
    assert [(r.path, r.start, r.end) for r in refs_of(line + "\n")] == expected


@pytest.mark.parametrize(
    ("line", "symbols"),
    [
        # The name after the first range is that range's: not the second one's.
        ("在 buffer.py 中，第 65 至 71 行是 `get_batches`，第 47 至 51 行是 `add`。", [None, None]),
        (
            "在 buffer.py 中，`get_batches` 在第 65 至 71 行，`add()` 在第 47 至 51 行。",
            ["get_batches", "add"],
        ),
        ("`proj/alpha.py` (lines 5-9) and `helper()` (lines 12-16).", [None, "helper"]),
    ],
)
def test_a_phrase_taking_the_path_before_takes_only_a_name_right_before_it(line, symbols):
    """A second phrase took the name between it and the first one, which the first one's
    lines hold: `get_batches` was checked in 47-51 and failed the build."""
    assert [ref.symbol for ref in refs_of(line + "\n")] == symbols


@pytest.mark.parametrize(
    ("line", "path", "start", "end", "text"),
    [
        ("See trainer.py (L36-L43).", "trainer.py", 36, 43, "L36-L43"),
        ("The loop is trainer.py L36-43.", "trainer.py", 36, 43, "L36-43"),
        (
            "- `lib/engine/trainer.py` (L36–L43): the loop",
            "lib/engine/trainer.py",
            36,
            43,
            "L36–L43",
        ),
        ("The loop at lib/trainer.py, L36-L43.", "lib/trainer.py", 36, 43, "L36-L43"),
        ("见 `lib/trainer.py`（L36-L43）。", "lib/trainer.py", 36, 43, "L36-L43"),
        ("lib/trainer.py lines L36-L43", "lib/trainer.py", 36, 43, "36-L43"),
    ],
)
def test_github_style_lines_right_after_a_path(line, path, start, end, text):
    """``trainer.py (L36-L43)``, as LLM drafts copy GitHub's anchors, was read nowhere: the
    lines went unchecked and unlinked."""
    ref = one(line + "\n")
    assert (ref.path, ref.start, ref.end, ref.text, ref.style) == (path, start, end, text, "phrase")


@pytest.mark.parametrize(
    ("line", "path", "start", "end"),
    [
        ("See `packing.py`:98-103 for the loop.", "packing.py", 98, 103),
        ("见 `minitrain/data/packing.py`：98-103。", "minitrain/data/packing.py", 98, 103),
        ("| `x.py`:5 | y |", "x.py", 5, 5),
    ],
)
def test_lines_right_after_the_code_span_of_a_path(line, path, start, end):
    """`` `packing.py`:98-103 `` was read nowhere: the path is in the code span, not before the
    colon. The lines are the reference's text, so that a link or a rewrite of them does not cut
    through the span."""
    options = ExtractOptions(route_prefixes=("minitrain/",))
    ref = one(line + "\n", options=options)
    assert (ref.path, ref.start, ref.end, ref.style) == (path, start, end, "phrase")
    assert ref.text == (f"{start}-{end}" if end != start else str(start))


@pytest.mark.parametrize(
    ("line", "texts"),
    [
        ("Both, `x.py`:3, 7-9.", ["3", "7-9"]),
        ("See trainer.py (L36-L43, L50-L60).", ["L36-L43", "L50-L60"]),
        ("`x.py`:12, 2020 data", ["12"]),  # a list ends where no word goes on
    ],
)
def test_lines_listed_after_a_code_span_or_github_lines(line, texts):
    """Only the first of the lines was read."""
    refs = refs_of(line + "\n")
    assert [ref.text for ref in refs] == texts
    assert len({ref.path for ref in refs}) == 1


@pytest.mark.parametrize("line", ["Call `foo`:3 times.", "`a.py`:10:5 error", "`v1.2`:3 notes"])
def test_a_code_span_that_is_no_file_before_a_number_stays_silent(line):
    assert refs_of(line + "\n") == []


@pytest.mark.parametrize(
    "line",
    [
        "packing.py：98～103",
        "`packing.py:98〜103`",
        "| `packing.py` | 98～103 |",
        "packing.py 第 98～103 行",
    ],
)
def test_full_width_tildes_join_a_range(line):
    """``98～103`` was read as line 98 alone, with no finding."""
    ref = one(line + "\n")
    assert (ref.path, ref.start, ref.end) == ("packing.py", 98, 103)


@pytest.mark.parametrize(
    "line",
    [
        "L2 loss is used, see L1 cache and L40-L50 tiles.",
        "Use an L2-L3 norm.",
        "`loss.py` adds L2 regularization.",  # one line needs brackets: L2 is a norm
        "`loss.py` (L2 norm) is used.",
        "`loss.py` L2 norm.",
        "`model.py` sets L-BFGS and LR1-2.",
        "Layer L12-L16 in the paper.",
        "Version L3.5 of `x.py` L3.5 is out.",
        "`x.py` was rewritten; L36-L43 of the paper say why.",  # not right after the path
        "Implemented in `loss.py`: L1-L2 regularization.",  # a word after: a norm
        "The file train.py, L1-L2 regularization.",
        "`config.yaml` L1-L3 cache sizes.",  # not a code file
        "`model.py` L12-L16 are frozen layers.",
        "`model.py`: L0-L11 encoder layers.",
        "`loss.py` (L2) is used.",  # one line: a norm as often as a line
    ],
)
def test_l_numbers_that_are_no_lines_of_a_path_stay_silent(line):
    assert refs_of(line + "\n") == []


def test_github_style_lines_are_renumbered_in_their_style():
    ref = one("See `trainer.py` (L36-L43).\n")
    assert rewrite_ref(ref, "trainer.py", "trainer.py", 40, 47) == "L40-L47"


@pytest.mark.parametrize(
    "line", ["第 3 行（共 10 行）", "lines 3-4 (see below)", "第 2 行（见上）"]
)
def test_brackets_after_a_lines_phrase_that_hold_no_path_are_no_reference(line):
    assert refs_of(line + "\n") == []


@pytest.mark.parametrize(
    "line",
    [
        "**文件**: `toykit/engine/trainer.py`  **行号**: 36-43",
        "**File**: `toykit/engine/trainer.py` **Lines**: 36-43",
        "文件 `toykit/engine/trainer.py`，行号：36-43",
    ],
)
def test_lines_given_by_a_label_after_the_path(line):
    """Read as a whole-file reference only: the label's lines were not checked."""
    options = ExtractOptions(route_prefixes=("toykit/",))
    ref = one(line + "\n", options=options)
    assert (ref.path, ref.start, ref.end, ref.style) == (
        "toykit/engine/trainer.py",
        36,
        43,
        "phrase",
    )


@pytest.mark.parametrize("line", ["Lines: 3-4 of the output", "行号：12", "**行号**: 7"])
def test_a_lines_label_with_no_path_before_it_is_no_reference(line):
    assert refs_of(line + "\n") == []


@pytest.mark.parametrize(
    ("line", "symbols"),
    [
        ("`A.f` and `B.f` are at x.py:22-28, 42-45.", ["A.f", "B.f"]),
        ("`A.f`, `B.f`, `C.f` 分别在 x.py:22-28、42-45、50-60", ["A.f", "B.f", "C.f"]),
        ("`A.f`, `B.f` and `C.f` are at x.py:22-28, 42-45.", [None, None]),
        ("`A.f` is at x.py:22-28, 42-45.", ["A.f", None]),
        ("`A.f` and `B.f` are at x.py:22-28, x.py:42-45.", ["A.f", "B.f"]),
        ("`A.f` and `B.f` are at `x.py:22-28` and `x.py:42-45`.", ["A.f", "B.f"]),
        ("`A.f`, `B.f` and `C.f` are at x.py:22-28, x.py:42-45.", [None, None]),
    ],
)
def test_names_listed_before_listed_lines_pair_up_in_order(line, symbols):
    """The last name was the first range's, and the first range was then said to hold another
    class's method: with as many names as ranges, each range takes its own; otherwise none
    can be told to be whose."""
    assert [ref.symbol for ref in refs_of(line + "\n")] == symbols


def test_a_windows_path_is_read_with_its_backslashes_as_slashes():
    """`C:\\Users\\bob\\...\\x.py:9-28` was read nowhere: a wrong one went unnoticed. Its text
    stays as written; its path is an absolute one, as `C:/Users/...` is. Backslashes that
    start no drive path (Markdown escapes) stay no path."""
    ref = one("In C:\\Users\\bob\\Megatron-LM\\megatron\\core\\x.py:9-28 it is.\n")
    assert ref.form is RefForm.ABSOLUTE
    assert ref.path == "/Users/bob/Megatron-LM/megatron/core/x.py"
    assert (ref.start, ref.end) == (9, 28)
    assert refs_of("escaped x\\_y.py:12 and a\\b.py:3\n") == []


@pytest.mark.parametrize(
    ("line", "symbols"),
    [
        ("`foo` and `bar` are at lines 1-3, 6-8 of x.py.", ["foo", "bar"]),
        ("`foo`、`bar` 位于 x.py 第 5-9、20-30 行", ["foo", "bar"]),
        ("`foo` (lines 5-9, 20-30 of x.py)", ["foo", None]),
        ("lines 5-9 and 12-16 of x.py hold `foo`.", [None, None]),
    ],
)
def test_names_beside_a_phrase_listing_ranges_pair_up_in_order(line, symbols):
    """The name nearest a phrase went to every range it lists: `bar` was said not to be in
    lines 1-3, a false error."""
    assert [ref.symbol for ref in refs_of(line + "\n")] == symbols


def test_a_diagram_label_names_the_symbol_written_as_code_before_its_reference():
    """A Mermaid label has no code spans: `train_step (base.py:46-50)` named nothing, and a
    bare name two files share was ambiguous where the same words in prose were not."""
    diagram = (
        "```mermaid\nflowchart LR\n"
        '  B["train_step (base.py:46-50)"] --> C["Attention.forward attention.py:53-62"]\n'
        '  D["Loop (x.py:3)"]\n```\n'
    )
    assert [ref.symbol for ref in refs_of(diagram)] == ["train_step", "Attention.forward", None]
    # A node's id before its bracketed label is no name of the code.
    nodes = "```mermaid\nflowchart LR\n  load_ckpt(x.py:6-9) --> run_eval(x.py:12-16)\n```\n"
    assert [ref.symbol for ref in refs_of(nodes)] == [None, None]


def test_a_table_s_name_column_before_the_path_names_the_symbol():
    """`| Function | File | Lines |` rows named nothing: only a cell after the lines did."""
    table = (
        "| Function | File | Lines |\n|---|---|---|\n| train_step | base.py | 46-50 |\n"
        "| `Actor.sleep` | actor.py | 15-22 |\n\n"
        "| 参数 | 文件 | 行 |\n|---|---|---|\n| lr_scale | config.py | 10 |\n"
    )
    assert [ref.symbol for ref in refs_of(table)] == ["train_step", "Actor.sleep", None]
    # Headers that only contain such a word, and prose cells, name nothing.
    prose = (
        "| 数据类型 | 文件 | 行 |\n|---|---|---|\n| model | x.py | 6-9 |\n\n"
        "| Classification | File | Lines |\n|---|---|---|\n| scores | x.py | 6-9 |\n\n"
        "| Name | File | Lines |\n|---|---|---|\n| Evaluation | x.py | 6-9 |\n"
    )
    assert [ref.symbol for ref in refs_of(prose)] == [None, None, None]


def test_a_lines_phrase_in_full_width_brackets_takes_the_path_after_it():
    """`（lines 71-78 of x.py）` was no reference: the path ran on into the bracket."""
    (ref,) = refs_of("学习率调度（lines 71-78 of trainkit/optim/optimizer.py）很简单。\n")
    assert (ref.path, ref.start, ref.end) == ("trainkit/optim/optimizer.py", 71, 78)


_SCANNED_PIECES = st.sampled_from(
    [
        *(":", "：", "#", "#L", "L", "12", "3", "-", "–", "~", "C4", "a.py", "_", ".", " ", "\n"),
        *("::", "f", "Cls.meth", "()", "/", "https://g.com/o/r/blob/s/p.py#L1-L2", "www.", "中"),
    ]
)


@given(pieces=st.lists(_SCANNED_PIECES, max_size=14), start=st.integers(0, 3))
@settings(max_examples=400, deadline=None)
def test_the_patterns_for_text_without_full_width_colons_find_what_the_full_ones_do(pieces, start):
    """Text with no full-width colon (and no `#L`, no `www.`) is scanned with patterns led by
    one string, which the engine finds faster: they find what the full patterns find there."""
    from generator.refs.extract import refs

    text = "".join(pieces)
    pairs = [
        (refs._SYMBOL_AFTER, refs._SYMBOL_AFTER_COLON, "：" not in text),
        (refs._RANGE_AT, refs._RANGE_AT_COLON, "：" not in text and "#L" not in text),
        (refs._URL, refs._HTTP_URL, "www." not in text),
    ]
    for full, led, applies in pairs:
        assert led.pattern.lstrip().startswith(("h", ":")), "led by a string, not a set"
        if applies:
            found = [(m.span(), m.groups()) for m in led.finditer(text, start)]
            assert found == [(m.span(), m.groups()) for m in full.finditer(text, start)]

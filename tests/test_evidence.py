"""Evidence: the cited lines must hold what the page says, and --fix rewrites what is proven."""

from __future__ import annotations

import json
import textwrap

import pytest

from generator.model import Severity
from generator.refs.extract import scan
from generator.refs.extract.evidence import collect_evidence
from generator.refs.extract.refs import ref_records
from generator.upstream.gitbuild import RepoBuilder
from generator.verification.pipeline import PARALLEL_MINIMUM_PAGES

from .conftest import KB

OLD = '''\
"""The actor."""

import torch


class Actor:
    def sleep(self, tags=None):
        state = self.model.state_dict()
        self.saved = {name: tensor.cpu() for name, tensor in state.items()}
        self.model.to("cpu")
        torch.cuda.empty_cache()
        return True
'''

ACTOR = '''\
"""The actor: training and memory."""

import gc

import torch


class Actor:
    """Trains a model and frees memory between rollouts."""

    def __init__(self, model):
        self.model = model
        self.device = torch.device("cuda")

    def sleep(self, tags=None):
        """Move weights to the CPU (`wake_up` brings them back)."""
        if tags is None:
            tags = ["weights"]
        for tag in tags:
            self.model.offload(tag, non_blocking=True)
        torch.cuda.empty_cache()
        return True

    def wake_up(self):
        handle = self.model.reload(device=self.device)
        gc.collect()
        return handle


class Critic:
    def sleep(self):
        self.value_head.to("cpu")
        return False
'''

SLEEP_QUOTE = """\
```python
def sleep(self, tags=None):
    if tags is None:
        tags = ["weights"]
    for tag in tags:
        self.model.offload(tag, non_blocking=True)
    torch.cuda.empty_cache()
```"""

OLD_SLEEP_QUOTE = """\
```python
def sleep(self, tags=None):
    state = self.model.state_dict()
    self.saved = {name: tensor.cpu() for name, tensor in state.items()}
    self.model.to("cpu")
    torch.cuda.empty_cache()
```"""
"""`sleep()` as the older commit (`OLD`) has it."""


@pytest.fixture
def actor_kb(kb: KB) -> KB:
    repo = kb.new_upstream("lib")
    kb.old = repo.commit({"lib/actor.py": OLD}, "First actor", date="2025-01-01T00:00:00+00:00")  # type: ignore[attr-defined]
    pin = repo.commit(
        {"lib/actor.py": ACTOR, "lib/util.py": "def helper():\n    return 1\n"},
        "Rewrite the actor",
        date="2025-01-02T00:00:00+00:00",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.pin = pin  # type: ignore[attr-defined]
    return kb


def _upstream_with(kb: KB, files: dict[str, str]) -> str:
    """An upstream `lib` (prefix `lib/`) holding ``files`` in one commit, pinned there."""
    repo = kb.new_upstream("lib")
    pin = repo.commit(files, "files")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    return pin


def _assert_differs(found: list, said: str | None) -> None:  # type: ignore[type-arg]
    """No finding when ``said`` is None, else one `quote-differs` whose message says it."""
    if said is None:
        assert found == [], [f.message for f in found]
    else:
        (finding,) = found
        assert finding.check == "quote-differs", finding.message
        assert said in finding.message, finding.message


def findings(kb: KB, check: str | None = None):  # type: ignore[no-untyped-def]
    report = kb.verify(cache=False)
    return [f for f in report.findings if check is None or f.check == check]


def test_a_quote_in_the_cited_lines_passes(actor_kb: KB) -> None:
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{SLEEP_QUOTE}\n")
    assert findings(actor_kb) == []


def test_a_quote_at_other_lines_is_an_error_with_the_proven_range(actor_kb: KB) -> None:
    actor_kb.page("a.md", f"The method (`lib/actor.py:24-30`):\n\n{SLEEP_QUOTE}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-elsewhere" and finding.severity is Severity.ERROR
    assert "it is at 15-21" in finding.message
    assert finding.fix == ("lib/actor.py", 15, 21)
    assert finding.suggestion == "lib/actor.py:15-21"


def quoted(markdown: str, depth: int = 1) -> str:
    """``markdown`` inside ``depth`` block quotes."""
    marker = "> " * depth
    return "\n".join((marker + line).rstrip() for line in markdown.split("\n"))


def test_quotes_inside_block_quotes_are_read_without_the_markers(actor_kb: KB) -> None:
    """Drafts put a reference and its code in a `> ` quote (a note, a callout): the markers
    are the quote's, not the code's. In one process and in two, which send a page's quotes
    without their text."""
    sleep = quoted(f"`sleep()` (lib/actor.py:15-22):\n\n{SLEEP_QUOTE}")
    nested = quoted(f"Nested, `lib/actor.py:15-22`:\n\n{SLEEP_QUOTE}", depth=2)
    commented = quoted(SLEEP_QUOTE.replace("```python\n", "```python\n# lib/actor.py:15-21\n"))
    actor_kb.page("a.md", f"{sleep}\n\n{nested}\n\n{commented}\n")
    moved = quoted(f"The method (`lib/actor.py:24-30`):\n\n{SLEEP_QUOTE}")
    actor_kb.page("b.md", f"# B\n\n{moved}\n")
    expected = [("docs/b.md", "quote-elsewhere", ("lib/actor.py", 15, 21))]
    for page in range(PARALLEL_MINIMUM_PAGES):
        actor_kb.page(f"more/{page}.md", f"# More {page}\n")
    for workers in (1, 2):
        report = actor_kb.verify(cache=False, workers=workers)
        assert [(f.page, f.check, f.fix) for f in report.findings] == expected


def test_a_quote_in_another_file_is_found_there(actor_kb: KB) -> None:
    quote = "```python\ndef helper():\n    return 1\n```"
    actor_kb.page("a.md", f"# Helpers\n\nIt is `lib/actor.py:1-2`:\n\n{quote}\n")
    report = actor_kb.verify(cache=False)
    assert [f.check for f in report.findings] == []  # two lines: too weak to act on
    strong = (
        "```python\ndef helper():\n    value = compute_the_helper_value(1, 2, 3)\n"
        "    return normalise_the_helper_value(value)\n```"
    )
    repo_path = actor_kb.root / "cache" / "lib"
    from generator.upstream.gitbuild import RepoBuilder

    repo = RepoBuilder(repo_path)
    pin = repo.commit(
        {
            "lib/util.py": "def helper():\n    value = compute_the_helper_value(1, 2, 3)\n"
            "    return normalise_the_helper_value(value)\n"
        },
        "Helper",
        date="2025-01-03T00:00:00+00:00",
    )
    actor_kb.upstreams["lib"]["pin"] = pin
    actor_kb.write_manifest()
    actor_kb.page("a.md", f"It is `lib/actor.py:1-3`:\n\n{strong}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-elsewhere"
    assert "it is in 'lib/util.py' at 1-3" in finding.message
    assert finding.fix == ("lib/util.py", 1, 3)


def test_a_quote_found_only_at_an_older_commit_names_that_commit(actor_kb: KB) -> None:
    quote = OLD_SLEEP_QUOTE
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{quote}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-not-found"
    assert f"lib@{actor_kb.old[:7]}" in finding.message  # type: ignore[attr-defined]
    assert "1 commit before the pin" in finding.message
    assert finding.suggestion == "kb pin suggest docs/a.md"
    assert finding.fix is None


def test_weak_quotes_never_give_an_error(actor_kb: KB) -> None:
    actor_kb.page("a.md", "See `lib/actor.py:1-3`:\n\n```python\nreturn True\n```\n")
    assert findings(actor_kb) == []


def test_blocks_that_propose_code_are_not_quotes(actor_kb: KB) -> None:
    actor_kb.page(
        "review.md",
        """\
        - **[P1]** `lib/actor.py:15-22` - The tags default is built on every call.
          - **Fix**: build it once:
            ```python
            DEFAULT_TAGS = ("weights", "optimizer", "kv_cache_buffers")
            def sleep(self, tags=DEFAULT_TAGS):
                for tag in tags:
                    self.model.offload(tag, non_blocking=True)
            ```
        """,
    )
    assert findings(actor_kb) == []


@pytest.mark.parametrize(
    "between",
    [
        "Output:\n\n```\nepoch 1 loss 0.52 lr 0.001\nepoch 2 loss 0.40 lr 0.001\n```",
        "**Output**:\n```\nepoch 1 loss 0.52 lr 0.001\nepoch 2 loss 0.40 lr 0.001\n```",
        "运行结果如下：\n\n```\nepoch 1 loss 0.52 lr 0.001\nepoch 2 loss 0.40 lr 0.001\n```",
        "Running it prints:\n\n```\nepoch 1 loss 0.52 lr 0.001\nepoch 2 loss 0.40 lr 0.001\n```",
        "```\n$ python train.py --epochs 2\nepoch 1 loss 0.52 lr 0.001\n```",
        "Traceback:\n\n```\nTraceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n    trainer.fit(model)\n'
        "RuntimeError: CUDA out of memory\n```",
        "```\n>>> actor.sleep(tags=None)\nTrue\n>>> actor.wake_up()\n```",
        "```pycon\n>>> actor.sleep(tags=None)\nTrue\n>>> actor.wake_up()\n```",
        "```python\nTraceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\nRuntimeError: CUDA out of memory\n```',
        "> ```\n> $ python train.py --epochs 2\n> epoch 1 loss 0.52 lr 0.001\n> ```",
    ],
)
def test_what_a_program_printed_after_a_reference_is_not_its_quote(
    actor_kb: KB, between: str
) -> None:
    """A log, a session or a traceback shown after a reference was read as the code it
    cites, and failed the build with `quote-not-found`."""
    actor_kb.page("a.md", f"`sleep()` is in lib/actor.py:15-22.\n\n{between}\n")
    assert findings(actor_kb) == []


@pytest.mark.parametrize(
    "line", ["Running lib/actor.py:15-22 prints:", "运行 lib/actor.py:15-22 的输出如下："]
)
def test_a_reference_that_introduces_its_output_quotes_nothing(actor_kb: KB, line: str) -> None:
    log = "```\nepoch 1 loss 0.52 lr 0.001\nepoch 2 loss 0.40 lr 0.001\n```"
    actor_kb.page("a.md", f"{line}\n\n{log}\n")
    assert findings(actor_kb) == []


@pytest.mark.parametrize(
    "caption",
    [
        "The output projection:",
        "输出层的实现：",
        "The function that builds the output:",
        "它计算并返回结果：",
        "计算最终结果：",
        "记录日志：",
        "生成输出：",
        "How it writes the log:",
        "Where the model is printed:",
    ],
)
def test_a_caption_about_code_that_outputs_still_introduces_a_quote(
    actor_kb: KB, caption: str
) -> None:
    wrong = (
        "```python\ndef output_projection(hidden_states, weights):\n"
        "    return hidden_states @ weights.T\n```"
    )
    actor_kb.page("a.md", f"`sleep()` is in lib/actor.py:15-22.\n\n{caption}\n\n{wrong}\n")
    assert [f.check for f in findings(actor_kb)] == ["quote-not-found"]


def test_blocks_in_another_language_are_not_quotes(actor_kb: KB) -> None:
    actor_kb.page(
        "a.md",
        "Run it (`lib/actor.py:15-22`):\n\n```bash\npython -m lib.actor --sleep\n"
        "python -m lib.actor --wake-up --device cuda:0\n```\n",
    )
    assert findings(actor_kb) == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (f"`lib/actor.py:15-22`:\n\n{SLEEP_QUOTE[:-3]}", "never closed"),
        ("`lib/actor.py:15-22`:\n\n```python\n" + "x = 1\n" * 401 + "```\n", "401 lines"),
        (
            "`lib/actor.py:15-22`:\n\n```python\ndef sleep(self, tags=None):\x07\n"
            "    self.model.offload_everything(tags)\n    torch.cuda.empty_cache()\n```\n",
            "control",
        ),
    ],
)
def test_a_quote_that_cannot_be_compared_says_why(actor_kb: KB, body: str, reason: str) -> None:
    actor_kb.page("a.md", body, dedent=False)
    (finding,) = findings(actor_kb, "quote-unchecked")
    assert finding.severity is Severity.WARNING and reason in finding.message


def test_names_the_sentence_gives_must_be_used_in_the_range(actor_kb: KB) -> None:
    actor_kb.page(
        "a.md",
        "The loop (lib/actor.py:11-13) calls `self.model.offload()` and "
        "`torch.cuda.empty_cache()`.\n",
    )
    (finding,) = findings(actor_kb)
    assert finding.check == "names-not-in-range" and finding.severity is Severity.WARNING
    assert "`offload` at 20" in finding.message and "`empty_cache` at 21" in finding.message
    actor_kb.page(
        "a.md",
        "The loop (lib/actor.py:19-21) calls `self.model.offload()` and "
        "`torch.cuda.empty_cache()`.\n",
    )
    assert findings(actor_kb) == []


def test_a_qualified_symbol_at_another_class_method_is_an_error(actor_kb: KB) -> None:
    actor_kb.page("a.md", "`Actor.sleep()` 实现（lib/actor.py:31-33）\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "symbol-not-in-range"
    assert "holds another `sleep`" in finding.message
    assert finding.suggestion == "it is defined at lib/actor.py:15-22"


NEIGHBOURS = {
    "lib/t.py": (
        "def step(model, batch, optimizer):\n"  # 1
        "    optimizer.zero_grad()\n"  # 2
        "    output = model(batch)\n"  # 3
        "    # the loss, then its gradients\n"  # 4
        "    labels = batch.labels\n"  # 5
        "    loss = compute_loss(output, labels)\n"  # 6
        "    loss.backward()\n"  # 7
        "    scale = loss.detach()\n"  # 8
        "    norm = clip_grad_norm_(model.parameters(), 1.0)\n"  # 9
        "    if norm.isfinite():\n"  # 10
        "        optimizer.step()\n"  # 11
        "    scheduler.step()\n"  # 12
        "    return scale\n"  # 13
    ),
    "lib/base.py": "class Base:\n    def save(self, path):\n        state = self.state_dict()\n"
    "        torch.save(state, path)\n        return path\n",
    "lib/fsdp.py": "from lib.base import Base\n\n\nclass FSDP(Base):\n    def train(self):\n"
    "        self.model.train()\n        self.step += 1\n        return self.step\n",
    "lib/export.py": "def export(model, path):\n    weights = model.cpu().state_dict()\n"
    "    torch.save(weights, path)\n    return path\n",
    "lib/a.go": "package lib\n\nfunc pack(xs []int) int {\n\treturn 0\n}\n",
    "lib/b.go": "package lib\n\nfunc pack(xs []int) int {\n\ttotal := 0\n"
    "\tfor _, x := range xs {\n\t\ttotal += weights[x]\n\t}\n\treturn total\n}\n",
}


@pytest.fixture
def neighbours_kb(kb: KB) -> KB:
    repo = kb.new_upstream("lib")
    pin = repo.commit(NEIGHBOURS, "Neighbours")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    return kb


def test_a_name_the_wrong_lines_only_use_keeps_no_fix_back(neighbours_kb: KB) -> None:
    """Drafts are a few lines off, and the lines beside the right ones use what the sentence
    names: a call of `compute_loss` in the cited lines kept the fix to the clipping back."""
    quote = (
        "```python\nnorm = clip_grad_norm_(model.parameters(), 1.0)\nif norm.isfinite():\n"
        "    optimizer.step()\nscheduler.step()\n```"
    )
    neighbours_kb.page(
        "a.md",
        f"After `compute_loss()` returns, gradients are clipped (lib/t.py:5-8):\n\n{quote}\n",
    )
    (finding,) = findings(neighbours_kb, "quote-elsewhere")
    assert finding.fix == ("lib/t.py", 9, 12)


def test_a_fix_into_another_file_follows_definitions_not_uses(neighbours_kb: KB) -> None:
    """A method may be inherited from another file's class: a quote of `Base.save` is a fix
    for `FSDP.save`. A call of `torch.save` is no `Actor.save`: no fix there."""
    base = "```python\nstate = self.state_dict()\ntorch.save(state, path)\nreturn path\n```"
    neighbours_kb.page("a.md", f"`FSDP.save` (lib/fsdp.py:5-8):\n\n{base}\n")
    (finding,) = findings(neighbours_kb, "quote-elsewhere")
    assert finding.fix == ("lib/base.py", 3, 5)
    export = (
        "```python\nweights = model.cpu().state_dict()\ntorch.save(weights, path)\nreturn path\n```"
    )
    neighbours_kb.page("a.md", f"`FSDP.save` (lib/fsdp.py:5-8):\n\n{export}\n")
    (finding,) = findings(neighbours_kb, "quote-elsewhere")
    assert finding.fix is None and "which does not hold `save`" in finding.message


def test_a_fix_into_another_file_of_a_language_of_braces(neighbours_kb: KB) -> None:
    """The quote is `pack`'s body in b.go without its `func` line: the fix cites the body,
    which lies in `pack` (Go's definitions are read as C's are). A quote of another
    function's body gets no fix: the rewrite would leave `pack` out of its lines (it did)."""
    quote = "```go\ntotal := 0\nfor _, x := range xs {\n\ttotal += weights[x]\n}\nreturn total\n```"
    neighbours_kb.page("a.md", f"`pack()` (lib/a.go:3-5):\n\n{quote}\n")
    (finding,) = findings(neighbours_kb, "quote-elsewhere")
    assert finding.fix == ("lib/b.go", 4, 8)
    neighbours_kb.page("a.md", f"`unpack()` (lib/a.go:3-5):\n\n{quote}\n")
    found = {f.check: f for f in findings(neighbours_kb)}
    assert found["quote-elsewhere"].fix is None
    assert "which does not hold `unpack`" in found["quote-elsewhere"].message


def test_a_single_name_beside_a_reference_outside_a_code_span_is_no_claim(
    neighbours_kb: KB,
) -> None:
    """Read to keep a fix back, such a name was checked as what the lines hold, and a caller
    named in the sentence raised names-not-in-range on a correct page."""
    neighbours_kb.page(
        "a.md", "The update (lib/t.py:9-12) follows `compute_loss()`\nand `zero_grad()`.\n"
    )
    assert findings(neighbours_kb) == []


CLASSES = {
    "lib/base.py": "class Base:\n    def save(self, path):\n        self.dump(path)\n"
    "        return path\n",
    "lib/fsdp.py": "from lib.base import Base\nfrom lib.base import Base as B\n\n\n"
    "class FSDP(Base):  # save() (inherited)\n    pass\n\n\n"
    "class Deep(FSDP, metaclass=Meta):\n    pass\n\n\n"
    "class Wrapped(\n    Base,\n):\n    pass\n\n\n"
    "class Aliased(B):\n    pass\n\n\nAssigned = Base\n\n\n"
    "class Typed[T](Generic[T], Base):\n    pass\n\n\nclass Plain:\n    pass\n",
    "lib/stub.pyi": "class Stubbed(Base): ...\n",
    "lib/megatron.py": "class Megatron:\n    def save(self, path):\n        self.write(path)\n"
    "        return path\n",
}


@pytest.mark.parametrize(
    ("cited", "wrong"),
    [
        ("`FSDP.save` (lib/megatron.py:2-4)", True),  # another class's method, not inherited
        ("`Plain.save` (lib/megatron.py:2-4)", True),
        ("`FSDP.save` (lib/base.py:2-4)", False),  # inherited from Base
        ("`Deep.save` (lib/base.py:2-4)", False),  # from Base, through FSDP
        ("`Megatron.save` (lib/megatron.py:2-4)", False),
        # Where the code does not say plainly, nothing is said.
        ("`Assigned.save` (lib/base.py:2-4)", False),  # a class by assignment
        ("`Wrapped.save` (lib/base.py:2-4)", False),  # bases over several lines
        ("`Aliased.save` (lib/base.py:2-4)", False),  # Base imported as B
        ("`Typed.save` (lib/base.py:2-4)", False),  # type parameters
        ("`Stubbed.save` (lib/base.py:2-4)", False),  # a stub's class
    ],
)
def test_a_method_named_with_a_class_that_neither_defines_nor_inherits_it(
    kb: KB, cited: str, wrong: bool
) -> None:
    """`FSDPActor.save_checkpoint` cited at `MegatronActor.save_checkpoint`, in a file with
    no `FSDPActor`, passed: only the method's own name was looked for."""
    repo = kb.new_upstream("lib")
    pin = repo.commit(CLASSES, "Classes")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.page("a.md", cited + "\n")
    found = findings(kb)
    if not wrong:
        assert found == []
        return
    (finding,) = found
    assert finding.check == "symbol-not-in-range"
    assert "range 2-4 of 'lib/megatron.py'" in finding.message
    assert "holds `Megatron.save`, not" in finding.message


@pytest.mark.parametrize(
    ("cited", "warned"),
    [
        ("`Nowhere.save` (lib/megatron.py:2-4)", True),  # a class renamed, or never there
        ("`Module.save` (lib/torchish.py:5-6)", False),  # a base from elsewhere (`nn.Module`)
        ("`B.save` (lib/megatron.py:2-4)", False),  # capitals alone: an alias (`F.gelu`)
        ("`Assigned.save` (lib/megatron.py:2-4)", False),  # a name of the upstream's code
        ("`Helper.save` (lib/torchish.py:5-6)", False),  # mentioned in the file: imported
    ],
)
def test_a_method_named_with_a_class_the_upstream_does_not_have_is_a_warning(
    kb: KB, cited: str, warned: bool
) -> None:
    """`MLP.forward` cited at `ParallelMLP.forward` after `MLP` was renamed passed: a class no
    header of the upstream declares was taken for one from elsewhere, whatever it was."""
    repo = kb.new_upstream("lib")
    torchish = (
        "import torch.nn as nn\nfrom lib.helpers import Helper  # noqa\n\n\n"
        "class Layer(nn.Module):\n    def save(self, path):\n        return path\n"
    )
    pin = repo.commit({**CLASSES, "lib/torchish.py": torchish}, "Classes")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.page("a.md", cited + "\n")
    found = findings(kb)
    if not warned:
        assert found == []
        return
    (finding,) = found
    assert (finding.check, finding.severity) == ("symbol-not-found", Severity.WARNING)
    assert "no class `Nowhere` is defined in lib@" in finding.message
    assert "range 2-4 of 'lib/megatron.py' holds `Megatron.save`" in finding.message
    assert finding.suggestion is not None and "`Megatron.save`" in finding.suggestion


def test_a_name_only_in_a_docstring_is_said_so(actor_kb: KB) -> None:
    actor_kb.page("a.md", "`wake_up()` 实现（lib/actor.py:15-16）\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "symbol-not-in-range"
    assert "only mentioned in a comment or docstring" in finding.message
    assert finding.suggestion == "it is defined at lib/actor.py:24-27"


def test_path_and_symbol_without_lines(actor_kb: KB) -> None:
    actor_kb.page("a.md", "`lib/actor.py::Actor.wake_up` and `lib/actor.py:Critic.wake_up()`\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "symbol-not-found" and "Critic.wake_up" in finding.message


def test_evidence_placements() -> None:
    text = textwrap.dedent(
        """\
        # Title

        `f()` (a.py:1-3):

        ```python
        def f():
            return 1
        ```

        ```python
        # a.py:10-12
        def g():
            pass
        # a.py:20-22
        def h():
            pass
        ```

        ```python
        def k():
            return 2
        ```
        （a.py:30-31）

        Two refs a.py:1-2 and a.py:3-4 share a line:

        ```python
        x = 1
        ```
        """
    )
    layout = scan(text)
    records = ref_records(layout)
    evidence = collect_evidence(layout, records)
    placed = {
        records[i][2]: (e.quote.placement, tuple(e.quote.lines))
        for i, e in evidence.items()
        if e.quote
    }
    assert placed == {
        "a.py:1-3": ("after", ("def f():", "    return 1")),
        "a.py:10-12": ("inside", ("def g():", "    pass")),
        "a.py:20-22": ("inside", ("def h():", "    pass")),
        "a.py:30-31": ("before", ("def k():", "    return 2")),
    }


def test_fix_rewrites_in_style_and_keeps_every_other_byte(actor_kb: KB) -> None:
    body = (
        "\ufeff# Sleep\r\n\r\n`sleep()` 实现（actor.py：24–31）\r\n\r\n"
        + SLEEP_QUOTE.replace("\n", "\r\n")
        + "\r\n\r\nLater: see `lib/actor.py:1-3`.\r\n"
    )
    page = actor_kb.page("a.md", body.encode("utf-8"))
    dry = actor_kb.cli("verify", "docs", "--no-cache", "--fix", "--dry-run")
    assert "would rewrite actor.py：24–31 -> actor.py：15–21" in dry.stdout
    assert page.read_bytes() == body.encode("utf-8")  # a dry run writes nothing
    done = actor_kb.cli("verify", "docs", "--no-cache", "--fix")
    assert done.returncode == 0, done.stdout
    assert "rewrote actor.py：24–31 -> actor.py：15–21" in done.stdout
    assert page.read_bytes() == body.replace("24–31", "15–21").encode("utf-8")
    assert actor_kb.cli("verify", "docs", "--no-cache").returncode == 0


def test_fix_reports_the_pages_as_they_are_after_it(actor_kb: KB) -> None:
    """A range past the end of the file, with its code quoted: the rewrite settles both
    findings, and the run says what the fixed page holds now, and exits 0 on it."""
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:40-46):\n\n{SLEEP_QUOTE}\n")
    before = actor_kb.cli("verify", "docs", "--no-cache")
    assert "range-outside-file" in before.stdout and "quote-elsewhere" in before.stdout
    done = actor_kb.cli("verify", "docs", "--no-cache", "--fix")
    assert "rewrote lib/actor.py:40-46 -> lib/actor.py:15-21" in done.stdout
    assert "range-outside-file" not in done.stdout and "all good" in done.stdout
    assert done.returncode == 0, done.stdout


def test_fix_leaves_a_page_whose_other_references_say_its_pin_is_older(actor_kb: KB) -> None:
    """A page written against the branch's head but pinned to an older commit: a file it cites
    is missing at the pin (and the finding says the head has it), and `--fix` moved its other
    references onto the old pin's lines, which would make the page describe code it never
    meant and hide the wrong pin. They are left, saying to run `kb pin suggest` first."""
    repo = RepoBuilder(actor_kb.root / "cache" / "lib")
    repo.commit({"lib/new.py": "def fresh():\n    return 2\n"}, "Add new.py")
    body = f"`sleep()` (lib/actor.py:24-30):\n\n{SLEEP_QUOTE}\n\nAnd `fresh()` (lib/new.py:1-2).\n"
    page = actor_kb.page("a.md", body)
    before = page.read_bytes()
    result = actor_kb.cli("verify", "docs", "--no-cache", "--fix", "--format", "json")
    data = json.loads(result.stdout)
    assert data["fixes"]["rewrites"] == []
    (skipped,) = data["fixes"]["skipped"]
    assert skipped["text"] == "lib/actor.py:24-30"
    assert "run `kb pin suggest docs/a.md` first" in skipped["reason"]
    assert page.read_bytes() == before
    # Without the reference that doubts the pin, the proven fix is applied.
    actor_kb.page("a.md", body.replace("lib/new.py:1-2", "lib/util.py:1-2"))
    result = actor_kb.cli("verify", "docs", "--no-cache", "--fix", "--format", "json")
    assert [r["after"] for r in json.loads(result.stdout)["fixes"]["rewrites"]] == [
        "lib/actor.py:15-21"
    ]


def test_fix_writes_json_and_leaves_headings_and_held_refs(actor_kb: KB) -> None:
    actor_kb.page(
        "a.md",
        f"## `sleep()` (lib/actor.py:24-30)\n\n{SLEEP_QUOTE}\n\n"
        f"Again `lib/actor.py:25-31`:\n\n{SLEEP_QUOTE}\n",
    )
    result = actor_kb.cli("verify", "docs", "--no-cache", "--fix", "--format", "json")
    data = json.loads(result.stdout)
    assert [(r["line"], r["after"]) for r in data["fixes"]["rewrites"]] == [
        (12, "lib/actor.py:15-21")
    ]
    assert [(s["line"], "heading" in s["reason"]) for s in data["fixes"]["skipped"]] == [(1, True)]
    assert result.returncode == 1  # the heading's reference is still wrong


def test_a_quote_after_a_link_whose_text_cites_it_too_is_both_s(actor_kb: KB) -> None:
    """`[lib/actor.py:24-31](…#L24-L31)` then the code: one citation written twice. The quote
    was read as neither's (two references on the line); it is both's, at the link's commit,
    and `--fix` moves the text and the link together."""
    actor_kb.upstreams["lib"]["web_url"] = "https://github.com/acme/lib"
    actor_kb.write_manifest()
    pin = actor_kb.pin  # type: ignore[attr-defined]
    link = f"https://github.com/acme/lib/blob/{pin}/lib/actor.py"
    actor_kb.page("a.md", f"See [lib/actor.py:24-31]({link}#L24-L31):\n\n{SLEEP_QUOTE}\n")
    found = findings(actor_kb)
    assert [(f.check, f.fix) for f in found] == [("quote-elsewhere", ("lib/actor.py", 15, 21))] * 2
    result = actor_kb.cli("verify", "docs", "--no-cache", "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    text = (actor_kb.docs / "a.md").read_text()
    assert f"See [lib/actor.py:15-21]({link}#L15-L21):" in text


def test_dry_run_needs_fix(actor_kb: KB) -> None:
    result = actor_kb.cli("verify", "docs", "--dry-run")
    assert result.returncode == 2 and "--dry-run goes with --fix" in result.stderr


def test_an_upstream_without_a_clone_is_reported_unchecked_not_a_config_error(
    actor_kb: KB,
) -> None:
    actor_kb.upstreams["pytorch"] = {
        "url": "https://github.com/pytorch/pytorch.git",
        "pin": "0123456789abcdef0123456789abcdef01234567",
        "prefixes": ["torch/"],
        "web_url": "https://github.com/pytorch/pytorch",
    }
    actor_kb.write_manifest()
    actor_kb.page(
        "a.md",
        "`sleep()` (lib/actor.py:15-22) and `torch/distributed/fsdp/_runtime_utils.py:100-200`,\n"
        "https://github.com/pytorch/pytorch/blob/main/torch/x.py#L1-L3 and `_utils.py:5`.\n",
    )
    for cached in ([], ["--no-cache"], []):
        result = actor_kb.cli("verify", "docs", *cached)
        assert result.returncode == 0, result.stdout + result.stderr
        assert (
            "upstreams.yaml:8:1: warning[upstream-not-cloned] 2 references into 'pytorch' are "
            "not checked: it has no clone at cache/pytorch" in result.stdout
        )
        assert "  = help: kb upstreams fetch pytorch" in result.stdout
        assert "not searched: pytorch (no clone)" in result.stdout
    data = json.loads(actor_kb.cli("verify", "docs", "--format", "json", "--list-refs").stdout)
    assert [r["status"] for r in data["refs"]] == ["ok", "unchecked", "unchecked", "warning"]
    assert actor_kb.cli("verify", "docs", "--strict").returncode == 1


def test_bad_quotes_are_findings_and_fix_writes_nothing(actor_kb: KB) -> None:
    long_quote = "```python\n" + "".join(f"value_{n} = compute({n})\n" for n in range(10_000))
    pages = {
        "long.md": f"`lib/actor.py:15-22`:\n\n{long_quote}```\n",
        "open.md": f"`lib/actor.py:24-30`:\n\n{SLEEP_QUOTE[:-3]}",
        "crlf.md": ("`lib/actor.py:1-3`:\r\n\r\n" + SLEEP_QUOTE.replace("\n", "\r\n") + "\r\n"),
    }
    for name, body in pages.items():
        actor_kb.page(name, body.encode("utf-8"))
    before = {name: (actor_kb.docs / name).read_bytes() for name in pages}
    result = actor_kb.cli("verify", "docs", "--no-cache", "--fix", "--format", "json")
    data = json.loads(result.stdout)
    checks = {(f["page"].rsplit("/", 1)[-1], f["check"]) for f in data["findings"]}
    assert ("long.md", "quote-unchecked") in checks and ("open.md", "quote-unchecked") in checks
    # The CRLF page's quote is proven elsewhere and fixed; the others are left as they were.
    assert [(r["page"], r["after"]) for r in data["fixes"]["rewrites"]] == [
        ("docs/crlf.md", "lib/actor.py:15-21")
    ]
    assert (actor_kb.docs / "long.md").read_bytes() == before["long.md"]
    assert (actor_kb.docs / "open.md").read_bytes() == before["open.md"]
    assert (actor_kb.docs / "crlf.md").read_bytes() == before["crlf.md"].replace(
        b"lib/actor.py:1-3", b"lib/actor.py:15-21"
    )


def test_pin_suggest_ranks_the_commit_written_against_and_writes_it(actor_kb: KB) -> None:
    quote = OLD_SLEEP_QUOTE
    actor_kb.page("old.md", f"# Old\n\n`sleep()` (lib/actor.py:7-12):\n\n{quote}\n")
    result = actor_kb.cli("pin", "suggest", "docs", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    old = actor_kb.old  # type: ignore[attr-defined]
    assert data["candidates"][0]["commit"] == old and data["candidates"][0]["up"] == 1
    assert data["current"]["commit"] == actor_kb.pin and data["current"]["against"] == 1  # type: ignore[attr-defined]
    text = actor_kb.cli("pin", "suggest", "docs").stdout
    assert f"{old[:7]}" in text and "First actor" in text and "<- the pin" in text
    # The page is all that relies on the manifest's pin: --write moves that pin.
    written = actor_kb.cli("pin", "suggest", "docs", "--write")
    assert f"wrote the pin {old[:7]} into upstreams.yaml" in written.stdout
    assert f'pin: "{old}"' in (actor_kb.root / "upstreams.yaml").read_text()
    assert actor_kb.cli("verify", "docs").returncode == 0
    again = actor_kb.cli("pin", "suggest", "docs", "--write")
    assert again.returncode == 0 and "wrote" not in again.stdout
    assert f"nothing to write: the pages are already pinned to {old[:7]}" in again.stdout
    # One page of two: its own pin is set instead.
    actor_kb.upstreams["lib"]["pin"] = actor_kb.pin  # type: ignore[attr-defined]
    actor_kb.write_manifest()
    actor_kb.page("new.md", f"# New\n\n`sleep()` (lib/actor.py:15-22):\n\n{SLEEP_QUOTE}\n")
    written = actor_kb.cli("pin", "suggest", "docs/old.md", "--write")
    assert f"wrote the pin {old[:7]} into docs/old.md" in written.stdout
    assert f"pin: {old}" in (actor_kb.docs / "old.md").read_text()
    assert actor_kb.cli("verify", "docs").returncode == 0


def test_pin_suggest_weighs_no_held_reference_and_writes_no_pin_into_a_page_citing_none(
    actor_kb: KB,
) -> None:
    """After a sync, a reference held at the old commit (its code changed) scored against the
    new pin, and `--write` moved the pages back; and it wrote `upstream` and `pin` into an
    index page citing no code."""
    old_quote = OLD_SLEEP_QUOTE
    old = actor_kb.old  # type: ignore[attr-defined]
    held = (
        f"---\nheld_refs:\n  - upstream: lib\n    commit: {old}\n    ref: lib/actor.py:7-12\n"
        "    occurrence: 1\n    status: changed\n---\n"
    )
    actor_kb.page(
        "sub/a.md",
        f"{held}# A\n\n`sleep()` (lib/actor.py:15-22):\n\n{SLEEP_QUOTE}\n\n"
        f"Before: `sleep()` (lib/actor.py:7-12):\n\n{old_quote}\n",
    )
    actor_kb.page("sub/index.md", "# Notes\n\n- [A](a.md)\n")
    actor_kb.page("other.md", "# Other\n\n`wake_up()` (lib/actor.py:24-27)\n")
    result = actor_kb.cli("pin", "suggest", "docs/sub", "--format", "json")
    data = json.loads(result.stdout)
    assert (data["refs"], data["held"]) == (1, 1)
    assert data["candidates"][0]["holds_pin"] and data["candidates"][0]["against"] == 0
    written = actor_kb.cli("pin", "suggest", "docs/sub", "--write")
    assert written.stdout.count("wrote the pin ") == 1, written.stdout
    assert f"wrote the pin {data['candidates'][0]['last'][:7]}" in written.stdout
    assert written.stdout.rstrip().endswith("into docs/sub/a.md"), written.stdout
    assert "pin:" not in (actor_kb.docs / "sub" / "index.md").read_text()


def test_pin_suggest_weighs_no_permalink_to_a_commit_nor_its_link_s_text(actor_kb: KB) -> None:
    """A permalink to an older commit (and the path written as its text) cites that commit
    whatever the pin: it scored against the pin the page was written against."""
    old = actor_kb.old  # type: ignore[attr-defined]
    actor_kb.upstreams["lib"]["web_url"] = "https://github.com/acme/lib"
    actor_kb.write_manifest()
    link = f"https://github.com/acme/lib/blob/{old}/lib/actor.py#L7-L12"
    actor_kb.page(
        "a.md",
        f"`sleep()` (lib/actor.py:15-22):\n\n{SLEEP_QUOTE}\n\n"
        f"It began as `sleep()` ([lib/actor.py:7-12]({link})).\n",
    )
    result = actor_kb.cli("pin", "suggest", "docs", "--format", "json")
    data = json.loads(result.stdout)
    assert (data["refs"], data["held"], data["linked"]) == (1, 0, 2)
    best = data["candidates"][0]
    assert best["holds_pin"] and (best["up"], best["against"]) == (1, 0)
    text = actor_kb.cli("pin", "suggest", "docs").stdout
    assert "(2 references naming commits of their own, as permalinks do, not weighed)" in text


def test_pin_suggest_prefers_the_commit_that_holds_the_quote_whole(kb: KB) -> None:
    """An edited line later: the quote lines up loosely with both versions of `sleep()`, and
    the newer holds the pin; the one it was copied from, whole, ranks first."""
    repo = kb.new_upstream("lib")
    written = repo.commit({"lib/actor.py": ACTOR}, "Actor", date="2025-01-02T00:00:00+00:00")
    pin = repo.commit(
        {"lib/actor.py": ACTOR.replace("non_blocking=True)", "non_blocking=False)")},
        "Block while offloading",
        date="2025-01-03T00:00:00+00:00",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{SLEEP_QUOTE}\n")
    result = kb.cli("pin", "suggest", "docs", "--format", "json")
    assert result.returncode == 0, result.stderr
    first, second = json.loads(result.stdout)["candidates"][:2]
    assert (first["commit"], first["up"], first["whole"]) == (written, 1, 1)
    assert (second["commit"], second["up"], second["whole"]) == (pin, 1, 0)
    assert " whole " in kb.cli("pin", "suggest", "docs").stdout.splitlines()[1]


def test_pin_suggest_says_what_is_wrong(actor_kb: KB) -> None:
    actor_kb.page("a.md", "# Nothing cited\n")
    result = actor_kb.cli("pin", "suggest", "docs")
    assert result.returncode == 2 and "cite no code" in result.stderr
    actor_kb.page("a.md", "`lib/actor.py:15-22`\n")
    result = actor_kb.cli("pin", "suggest", "docs", "--since", "yesterday")
    assert result.returncode == 2 and "--since 'yesterday' is not a date" in result.stderr


def _quoted_from_a_later_commit(kb: KB) -> tuple[str, str]:
    """An upstream pinned at `ACTOR`, whose next commit adds `pinned=True` to a line of
    `sleep()`, and `sleep()` quoted as that later commit has it: (the later commit, the
    quote)."""
    repo = kb.new_upstream("lib")
    pin = repo.commit({"lib/actor.py": ACTOR}, "Actor", date="2025-01-02T00:00:00+00:00")
    later_actor = ACTOR.replace(
        "self.model.offload(tag, non_blocking=True)",
        "self.model.offload(tag, non_blocking=True, pinned=True)",
    )
    later = repo.commit(
        {"lib/actor.py": later_actor}, "Pin offloaded memory", date="2025-01-03T00:00:00+00:00"
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    return later, SLEEP_QUOTE.replace("non_blocking=True)", "non_blocking=True, pinned=True)")


def test_a_quote_whole_only_at_a_later_commit_names_it_and_offers_no_range_fix(kb: KB) -> None:
    """A draft quotes `sleep()` as a later commit has it (one line differs at the pin) and
    cites other lines: most of the quote matches at the pin, but moving the range there would
    hide that the page was written against the later commit. The finding names that commit
    and offers no fix. Quoted as the pin has it, the range is fixed as before."""
    later, quote = _quoted_from_a_later_commit(kb)
    kb.page("a.md", f"The method (`lib/actor.py:24-30`):\n\n{quote}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and finding.severity is Severity.ERROR
    assert "only 5 of its 6 lines are at 15-21" in finding.message
    assert f"lib@{later[:7]}" in finding.message and "1 commit after the pin" in finding.message
    assert finding.fix is None
    assert finding.suggestion == "kb pin suggest docs/a.md"

    # The same lines quoted from the pin's own version still get their range fixed.
    kb.page("a.md", f"The method (`lib/actor.py:24-30`):\n\n{SLEEP_QUOTE}\n")
    (finding,) = findings(kb)
    assert finding.fix == ("lib/actor.py", 15, 21)


def test_a_quote_whole_only_at_another_commit_is_an_error_even_at_the_right_lines(
    kb: KB,
) -> None:
    """A draft quotes `sleep()` as a later commit has it and cites the lines the pin has it
    at: most of the quote is in the cited lines, but the line it quotes with `pinned=True` is
    not the pin's code. The finding names the later commit; an edited quote that no commit
    holds whole stays silent."""
    later, quote = _quoted_from_a_later_commit(kb)
    kb.page("a.md", f"The method (`lib/actor.py:15-22`):\n\n{quote}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and finding.severity is Severity.ERROR
    assert "is only in part in range 15-22" in finding.message
    assert "(5 of its 6 lines)" in finding.message
    assert f"lib@{later[:7]}" in finding.message and "1 commit after the pin" in finding.message
    assert finding.fix is None
    assert finding.suggestion == "kb pin suggest docs/a.md"

    # An edited quote that no commit holds whole: a warning naming the line it changed.
    edited = SLEEP_QUOTE.replace("non_blocking=True)", "non_blocking=False)")
    kb.page("a.md", f"The method (`lib/actor.py:15-22`):\n\n{edited}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-differs" and finding.severity is Severity.WARNING
    assert "non_blocking=False)` is not there (closest: line" in finding.message
    assert "non_blocking=True)`)" in finding.message
    kb.page("a.md", f"The method (`lib/actor.py:15-22`):\n\n{SLEEP_QUOTE}\n")
    assert findings(kb) == []


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (  # a call the code does not make
            ("torch.cuda.empty_cache()", "torch.cuda.synchronize()"),
            "its line 9 `torch.cuda.synchronize()` is not there "
            "(closest: line 21 `torch.cuda.empty_cache()`)",
        ),
        (  # a value it does not pass
            ("non_blocking=True", "non_blocking=False"),
            "its line 8 `self.model.offload(tag, non_blocking=False)` is not there "
            "(closest: line 20 `self.model.offload(tag, non_blocking=True)`)",
        ),
        (  # an order it does not have
            (
                "    for tag in tags:\n        self.model.offload(tag, non_blocking=True)\n"
                "    torch.cuda.empty_cache()\n",
                "    torch.cuda.empty_cache()\n    for tag in tags:\n"
                "        self.model.offload(tag, non_blocking=True)\n",
            ),
            "its line 8 `for tag in tags:` is there (line 19), but not after its line 7 "
            "`torch.cuda.empty_cache()` (line 21), as the quote has it",
        ),
        (  # lines it does not have
            ("    torch.cuda.empty_cache()\n", "    gc.collect()\n    self.model.cpu()\n"),
            "its line 9 `gc.collect()` is not there; its line 10 `self.model.cpu()` is not there",
        ),
        (  # a word dropped, every other word there
            ("    if tags is None:\n", "    if tags:\n"),
            "its line 5 `if tags:` is not there (closest: line 17 `if tags is None:`)",
        ),
        (  # an operator changed
            ('        tags = ["weights"]\n', '        tags += ["weights"]\n'),
            'its line 6 `tags += ["weights"]` is not there (closest: line 18 `tags = ["weights"]`)',
        ),
    ],
)
def test_a_quote_that_misstates_the_cited_code_is_told_where_it_differs(
    actor_kb: KB, edit: tuple[str, str], said: str
) -> None:
    """LLM drafts quote the cited function with a call, a value or an order it does not have,
    or with lines of their own: half the quote still in the cited lines was an edited quote
    of them, and passed, though a reader takes the quote for the code."""
    quote = SLEEP_QUOTE.replace(*edit)
    assert quote != SLEEP_QUOTE
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{quote}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-differs" and finding.severity is Severity.WARNING
    assert said in finding.message, finding.message
    assert "differs from range 15-22 of 'lib/actor.py'" in finding.message


@pytest.mark.parametrize(
    "body",
    [
        # Elisions, comments of the author's own, dropped lines and reindenting.
        "def sleep(self, tags=None):\n"
        "    ...\n"
        "    for tag in tags:  # one at a time\n"
        "        self.model.offload(tag, non_blocking=True)\n"
        "    # then free the cache\n"
        "    torch.cuda.empty_cache()\n",
        # The signature over several lines, black style.
        "def sleep(\n"
        "    self,\n"
        "    tags=None,\n"
        "):\n"
        "    if tags is None:\n"
        '        tags = ["weights"]\n'
        "    for tag in tags:\n"
        "        self.model.offload(tag, non_blocking=True)\n"
        "    torch.cuda.empty_cache()\n",
        # A call over several lines, and a one-line edit.
        "def sleep(self, tags=None):\n"
        "    if tags is None:\n"
        '        tags = ["weights"]\n'
        "    for tag in tags:\n"
        "        self.model.offload(\n"
        "            tag,\n"
        "            non_blocking=True,\n"
        "        )\n"
        "    torch.cuda.empty_cache()\n"
        "    return False\n",
        # The signature without its default: its words are all in the header.
        "def sleep(self, tags):\n"
        "    if tags is None:\n"
        '        tags = ["weights"]\n'
        "    for tag in tags:\n"
        "        self.model.offload(tag, non_blocking=True)\n"
        "    torch.cuda.empty_cache()\n",
    ],
)
def test_a_quote_edited_only_as_authors_do_does_not_differ(actor_kb: KB, body: str) -> None:
    """What authors do to the code they quote is no difference: the quote shows the code as
    it is. (The third's `return False` is an edit, which `quote-differs` names; the lines
    around it are the code, reflowed.)"""
    quote = "```python\n" + textwrap.indent(body, "    ") + "```"
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{quote}\n")
    found = findings(actor_kb)
    if "return False" in body:
        (finding,) = found
        assert finding.check == "quote-differs"
        assert finding.message.endswith(
            "its line 13 `return False` is not there (closest: line 22 `return True`)"
        ), finding.message
    else:
        assert found == []


def test_a_short_quote_with_a_local_renamed_differs_rather_than_is_nowhere(actor_kb: KB) -> None:
    """Three lines of `sleep()` with its loop variable renamed are nowhere as written, and too
    short for the matcher to place them loosely: it was `quote-not-found`, an error that stops
    the build over what is the cited code edited. Code like no cited line stays an error."""
    renamed = (
        "```python\n    for t in tags:\n        self.model.offload(t, non_blocking=True)\n"
        "    torch.cuda.empty_cache()\n```"
    )
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{renamed}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-differs" and finding.severity is Severity.WARNING
    assert finding.message.endswith(
        "its line 4 `for t in tags:` is not there (closest: line 19 `for tag in tags:`); its "
        "line 5 `self.model.offload(t, non_blocking=True)` is not there (closest: line 20 "
        "`self.model.offload(tag, non_blocking=True)`)"
    ), finding.message

    invented = (
        "```python\ndef sleep(self, tags=None):\n    self.optimizer.zero_grad(set_to_none=True)\n"
        "    self.scheduler.step()\n    return self.loss_scale\n```"
    )
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{invented}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-not-found" and finding.severity is Severity.ERROR


def test_a_quote_with_other_quote_marks_is_the_code(actor_kb: KB) -> None:
    """Which marks a string has is style (formatters change them): a quote of `Critic.sleep`
    with `'cpu'` for `"cpu"` was `quote-differs`, one of `sleep()` too."""
    critic = "```python\ndef sleep(self):\n    self.value_head.to('cpu')\n    return False\n```"
    actor_kb.page("a.md", f"`Critic.sleep()` (lib/actor.py:31-33):\n\n{critic}\n")
    assert findings(actor_kb) == []
    single = SLEEP_QUOTE.replace('["weights"]', "['weights']")
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{single}\n")
    assert findings(actor_kb) == []
    # A value changed in the same line is still told.
    changed = SLEEP_QUOTE.replace('["weights"]', "['optimizer']")
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{changed}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-differs"
    assert "`tags = ['optimizer']` is not there" in finding.message


def test_a_quote_cited_at_lines_holding_none_of_it_is_an_error(actor_kb: KB) -> None:
    """An LLM draft gets one line of `sleep()` wrong (too much for the quote to be *at* its
    place, 80%) and cites the imports: the cited lines hold none of it, so the reference is
    wrong whatever the quote's likeness elsewhere. A quote edited as much but cited where it
    is stays silent."""
    wrong = SLEEP_QUOTE.replace('tags = ["weights"]', 'tags = ["weights", "optimizer"]').replace(
        "torch.cuda.empty_cache()", "torch.cuda.synchronize()"
    )
    actor_kb.page("a.md", f"The method (`lib/actor.py:1-5`):\n\n{wrong}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-not-found" and finding.severity is Severity.ERROR
    assert "none of its lines is there" in finding.message
    assert "closest: 4 of 6 lines at 15-20" in finding.message
    assert finding.fix is None

    actor_kb.page("a.md", f"The method (`lib/actor.py:15-22`):\n\n{wrong}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-differs" and finding.severity is Severity.WARNING
    assert '`tags = ["weights", "optimizer"]` is not there' in finding.message
    assert "`torch.cuda.synchronize()` is not there" in finding.message


TWO_ACTORS = {
    "lib/fsdp.py": (
        "class FSDPActor:\n"
        "    def forward_backward(self, batch):\n"
        "        loss = self.model(batch).mean()\n"
        "        loss.backward()\n"
        "        return loss\n"
    ),
    "lib/megatron.py": (
        "class MegatronActor:\n"
        "    def loss_func(self, output, labels):\n"
        "        logits = output.float()\n"
        "        losses = cross_entropy(logits, labels, reduction='none')\n"
        "        masked = losses * self.loss_mask\n"
        "        return masked.sum() / self.loss_mask.sum()\n"
    ),
}
LOSS_QUOTE = """\
```python
def loss_func(self, output, labels):
    logits = output.float()
    losses = cross_entropy(logits, labels, reduction='none')
    masked = losses * self.loss_mask
    return masked.sum() / self.loss_mask.sum()
```"""


def test_a_block_after_a_sentence_over_two_lines_is_the_reference_whose_lines_hold_it(
    kb: KB,
) -> None:
    """ "`loss_func` (megatron.py:2-6) wraps FSDP's\n`forward_backward` (fsdp.py:2-5):" and
    then the Megatron loss: the block went to the nearer reference, whose file holds none of
    it, and a correct sentence got `quote-not-found`. When a reference on a line above in the
    same paragraph holds it, the block is that one's; when none does, the error stays."""
    repo = kb.new_upstream("lib")
    pin = repo.commit(TWO_ACTORS, "Actors")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    sentence = (
        "`loss_func` (`lib/megatron.py:2-6`) is what FSDP's\n"
        "`forward_backward` (`lib/fsdp.py:2-5`) calls:\n\n"
    )
    kb.page("a.md", sentence + LOSS_QUOTE + "\n")
    assert findings(kb) == []
    # Another paragraph above: the block is still the nearer reference's, and wrong for it.
    kb.page("a.md", sentence.replace("FSDP's\n", "FSDP's.\n\n") + LOSS_QUOTE + "\n")
    assert [(f.check, f.line) for f in findings(kb)] == [("quote-elsewhere", 3)]
    # Cited at other lines above, the block is nobody's there either.
    kb.page("a.md", sentence.replace("megatron.py:2-6", "megatron.py:1-2") + LOSS_QUOTE + "\n")
    assert [(f.check, f.line) for f in findings(kb)] == [("quote-elsewhere", 2)]


def test_a_quote_in_another_file_not_holding_the_named_function_gets_no_fix(kb: KB) -> None:
    """The page names `forward_backward` beside a FSDP range and quotes the Megatron loss:
    --fix moved the reference into the Megatron file, where the page then said
    `forward_backward` lives, and the error became a warning."""
    repo = kb.new_upstream("lib")
    pin = repo.commit(TWO_ACTORS, "Two actors")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.page("a.md", f"The loss is in `forward_backward` (lib/fsdp.py:2-5):\n\n{LOSS_QUOTE}\n")
    (finding,) = findings(kb, "quote-elsewhere")
    assert "it is in 'lib/megatron.py' at 2-6, which does not hold `forward_backward`" in (
        finding.message
    )
    assert finding.fix is None
    # Without a name that disagrees, the quote's file is the fix.
    kb.page("a.md", f"The loss (lib/fsdp.py:2-5):\n\n{LOSS_QUOTE}\n")
    (finding,) = findings(kb, "quote-elsewhere")
    assert finding.fix == ("lib/megatron.py", 2, 6)


def test_a_name_the_sentence_gives_the_cited_lines_keeps_a_quote_of_others_from_a_fix(
    actor_kb: KB,
) -> None:
    """`wake_up()` starts the sentence, words stand between it and the reference, and the
    quote is of `sleep`: the cited lines were right and --fix moved them onto `sleep`."""
    actor_kb.page(
        "a.md",
        f"`wake_up()` 把权重搬回 GPU，再回收内存（lib/actor.py:24-27）：\n\n{SLEEP_QUOTE}\n",
    )
    (finding,) = findings(actor_kb, "quote-elsewhere")
    assert "which does not hold `wake_up`, the symbol the page names" in finding.message
    assert finding.fix is None


def test_a_quote_and_a_symbol_that_disagree_get_no_fix(actor_kb: KB) -> None:
    """The page names `wake_up()` but quotes `sleep()`, at lines holding neither: moving the
    range to the quote would leave the name wrong. The finding says both, and offers no fix;
    named as `sleep()`, the range is fixed as before."""
    actor_kb.page("a.md", f"`wake_up()` is defined in `lib/actor.py:24-30`:\n\n{SLEEP_QUOTE}\n")
    quote_findings = [f for f in findings(actor_kb) if f.check == "quote-elsewhere"]
    (finding,) = quote_findings
    assert "it is at 15-21, which does not hold `wake_up`, the symbol the page names" in (
        finding.message
    )
    assert finding.fix is None
    actor_kb.page("a.md", f"`sleep()` is defined in `lib/actor.py:24-30`:\n\n{SLEEP_QUOTE}\n")
    (finding,) = [f for f in findings(actor_kb) if f.check == "quote-elsewhere"]
    assert finding.fix == ("lib/actor.py", 15, 21)


def test_a_range_off_by_a_few_is_one_finding_with_its_fix(actor_kb: KB) -> None:
    """Lines 18-24 miss `sleep`'s `def` and run into `wake_up`: the quote's proven lines hold
    `sleep`, so the fix settles the symbol's finding too, and only the finding with the fix
    is reported, once, for a plain name and for one with its class."""
    for named in ("`sleep()`", "`Actor.sleep`"):
        actor_kb.page("a.md", f"{named} (lib/actor.py:18-24):\n\n{SLEEP_QUOTE}\n")
        (finding,) = findings(actor_kb)
        assert finding.check == "quote-elsewhere", named
        assert finding.fix == ("lib/actor.py", 15, 21)
    actor_kb.page("a.md", "`sleep()` (lib/actor.py:18-24) frees the memory.\n")
    assert [f.check for f in findings(actor_kb)] == ["symbol-not-in-range"]


def test_a_quote_of_a_method_of_the_same_name_in_another_class_is_no_use_of_it(
    actor_kb: KB,
) -> None:
    """`Actor.sleep`, cited right, with `Critic.sleep` quoted: its `def sleep` line is no
    call of `sleep`, so the quote is the mistake, said without a fix."""
    critic = '```python\ndef sleep(self):\n    self.value_head.to("cpu")\n    return False\n```'
    actor_kb.page("a.md", f"`Actor.sleep` (lib/actor.py:15-22):\n\n{critic}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-elsewhere" and finding.fix is None
    assert "it is at 31-33, which does not hold `Actor.sleep`" in finding.message


def test_a_quote_of_another_class_method_gets_no_fix(actor_kb: KB) -> None:
    """The page names `Critic.sleep` and quotes `Actor.sleep`: moving the range to the quote
    would cite another class's method under the name; a person picks which is meant."""
    actor_kb.page("a.md", f"`Critic.sleep` (lib/actor.py:18-24):\n\n{SLEEP_QUOTE}\n")
    by_check = {f.check: f for f in findings(actor_kb)}
    assert set(by_check) == {"quote-elsewhere", "symbol-not-in-range"}
    assert by_check["quote-elsewhere"].fix is None
    assert "which does not hold `Critic.sleep`, the symbol the page names" in (
        by_check["quote-elsewhere"].message
    )


TRAINING = (
    "import torch\n"  # 1
    "\n"  # 2
    "\n"  # 3
    "def train_step(batch, model, optimizer):\n"  # 4
    "    optimizer.zero_grad()\n"  # 5
    "    loss = model(batch).mean()\n"  # 6
    "    loss.backward()\n"  # 7
    "    optimizer.step()\n"  # 8
    "    return loss\n"  # 9
    "\n"  # 10
    "\n"  # 11
    "def glu(x):\n"  # 12
    "    x_glu, x_linear = torch.chunk(x, 2, dim=-1)\n"  # 13
    "    return torch.sigmoid(x_glu) * x_linear\n"  # 14
    "\n"  # 15
    "\n"  # 16
    "def train(model, optimizer, batches, save_interval):\n"  # 17
    "    for iteration, batch in enumerate(batches):\n"  # 18
    "        loss = train_step(batch, model, optimizer)\n"  # 19
    "        if iteration % save_interval == 0:\n"  # 20
    "            torch.save(model.state_dict(), f'ckpt-{iteration}.pt')\n"  # 21
    "    return glu(loss)\n"  # 22
)


@pytest.fixture
def training_kb(kb: KB) -> KB:
    """An upstream of one file, `lib/training.py` (`TRAINING`)."""
    repo = kb.new_upstream("lib")
    pin = repo.commit({"lib/training.py": TRAINING}, "Training")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    return kb


def test_a_quote_of_other_code_beside_a_right_reference_is_no_mistake(training_kb: KB) -> None:
    """The cited lines are the named function's definition, and the quote shows a call of
    it, or the definition of another name of the sentence: both are other code on purpose.
    Neither is an error nor a fix (it was a fix onto the call site)."""
    kb = training_kb
    loop = (
        "```python\n    for iteration, batch in enumerate(batches):\n"
        "        loss = train_step(batch, model, optimizer)\n"
        "        if iteration % save_interval == 0:\n```"
    )
    callee = (
        "```python\ndef glu(x):\n    x_glu, x_linear = torch.chunk(x, 2, dim=-1)\n"
        "    return torch.sigmoid(x_glu) * x_linear\n```"
    )
    kb.page(
        "a.md",
        f"`train_step` (lib/training.py:4-9) is called from the main loop:\n\n{loop}\n\n"
        f"`train` (lib/training.py:17-22) ends with `glu`, which is:\n\n{callee}\n",
    )
    assert findings(kb) == []
    # The name the sentence opens with, words away from the reference, is what it is about.
    kb.page(
        "a.md",
        "`train` walks the batches (lib/training.py:17-22) and ends with `glu`, which is:"
        f"\n\n{callee}\n",
    )
    assert findings(kb) == []
    # Cited at lines that are not its definition, the same quote is the mistake's measure.
    kb.page("a.md", f"`train_step` (lib/training.py:12-14) is the loop:\n\n{loop}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and finding.fix == ("lib/training.py", 18, 20)


def test_the_name_a_sentence_opens_with_is_what_its_reference_cites(training_kb: KB) -> None:
    """`` `glu` squashes half of it (training.py:4-9).`` cites `train_step`: the name the
    sentence opens with, defined in the file, is neither in nor around the cited lines, so it
    is a warning. Silent when the lines are its own, a part of them, or what it calls
    (`train` runs each step), and for a name defined in no line of the file."""
    kb = training_kb
    kb.page("a.md", "- `glu` squashes half of its input (lib/training.py:4-9).\n")
    (finding,) = findings(kb)
    assert finding.check == "names-not-in-range" and finding.severity is Severity.WARNING
    assert "`glu`, which the sentence is about, is not in range 4-9" in finding.message
    assert finding.suggestion == "it is defined at lib/training.py:12-14"
    silent = [
        "`glu` squashes half of its input (lib/training.py:12-14).",
        "The `train_step` body ends with the update (lib/training.py:8-9).",
        "`train` runs each step (lib/training.py:4-9).",
        "`compute_loss` is applied in the step (lib/training.py:4-9).",
        "The step (lib/training.py:4-9) is what `glu` never sees.",
    ]
    kb.page("a.md", "\n\n".join(silent) + "\n")
    assert findings(kb) == []


def test_a_subject_is_no_claim_where_the_lines_hold_another_name_or_what_it_uses(kb: KB) -> None:
    """False warnings a review found: another name of the sentence at the lines, a line in
    the body of what the subject calls, and a module constant it reads. And a sentence right
    after the frontmatter, whose start was looked for inside the frontmatter."""
    repo = kb.new_upstream("lib")
    source = (
        "DEFAULTS = {'lr': 0.1}\n\n\ndef load(path):\n    return dict(DEFAULTS)\n\n\n" + TRAINING
    )
    pin = repo.commit({"lib/t.py": source}, "Training")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    silent = [
        "`glu` and `train_step` both keep the batch (lib/t.py:10-15).",
        "`train` runs each step, whose loss is backpropagated (lib/t.py:12-13).",
        "`load` starts from the defaults (lib/t.py:1).",
    ]
    kb.page("a.md", "\n\n".join(silent) + "\n")
    assert findings(kb) == []
    kb.page("b.md", "---\ntitle: B\n---\n`glu` squashes half of its input (lib/t.py:10-15).\n")
    assert [f.check for f in findings(kb)] == ["names-not-in-range"]


def test_a_block_between_a_sentence_and_its_own_caption_is_the_caption_s(actor_kb: KB) -> None:
    """A sentence citing `wake_up`, a line introducing a block, the block, then its caption:
    the block was read as the sentence's quote (an error, and a fix moving a right reference
    onto the caption's lines). A caption after a blank line keeps its block even when a line
    introduces it (`Source:` is the usual caption of an LLM draft)."""
    actor_kb.page(
        "a.md",
        "`wake_up()` brings the weights back (lib/actor.py:24-27).\n"
        f"The method before it does the opposite:\n\n{SLEEP_QUOTE}\n\n"
        "*Source: lib/actor.py:15-21*\n",
    )
    assert findings(actor_kb) == []
    # A caption wins over a sentence ending in a colon too, in a phrase's form as well; and a
    # list item does not reach a block a paragraph of its own introduces.
    actor_kb.page(
        "a.md",
        "`Actor` 的唤醒（lib/actor.py:24-27），它的反面如下所示：\n\n"
        f"{SLEEP_QUOTE}\n\n（见 lib/actor.py 第 15-21 行）\n\n"
        "- `wake_up()` 先取回句柄（lib/actor.py:25）。\n\n休眠的实现写在前面：\n\n"
        f"{SLEEP_QUOTE}\n\n（见 lib/actor.py 第 15-21 行）\n",
    )
    assert findings(actor_kb) == []
    # Words pointing back at the block make its caption win over a sentence ending in a colon.
    actor_kb.page(
        "a.md",
        "`wake_up()` brings the weights back (lib/actor.py:24-27), after this:\n\n"
        f"{SLEEP_QUOTE}\n\nThat is `Actor.sleep` in lib/actor.py:15-21.\n",
    )
    assert findings(actor_kb) == []
    actor_kb.page(
        "a.md", f"The method looks like this:\n\n{SLEEP_QUOTE}\n\n*Source: lib/actor.py:24-30*\n"
    )
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-elsewhere" and finding.fix == ("lib/actor.py", 15, 21)


def test_a_quote_of_a_mirror_function_at_the_other_s_lines_is_reported(kb: KB) -> None:
    """`offload_optimizer` quoted at the lines of `reload_optimizer`: four of its seven lines
    are there too (all but `cpu`/`cuda`), which was enough to pass as an edited quote of them,
    though the file holds it whole at other lines."""
    mirror = "".join(
        f"    def {verb}_optimizer(self):\n"
        f'        """Move optimizer states to the {device}."""\n'
        "        for state in self.optimizer.state.values():\n"
        "            for k, v in state.items():\n"
        "                if torch.is_tensor(v):\n"
        f'                    state[k] = v.to("{device}", non_blocking=True)\n'
        "        torch.cuda.synchronize()\n\n"
        for verb, device in (("offload", "cpu"), ("reload", "cuda"))
    )
    repo = kb.new_upstream("lib")
    pin = repo.commit({"lib/actor.py": "import torch\n\n\nclass Actor:\n" + mirror}, "Actor")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    offload = "```python\n" + "".join(mirror.splitlines(True)[:7]) + "```"
    kb.page("a.md", f"The reload (lib/actor.py:13-19):\n\n{offload}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and "it is at 5-11" in finding.message
    assert finding.fix == ("lib/actor.py", 5, 11)
    # Named beside the range, the reload is what the page means: no fix either way.
    kb.page("a.md", f"`reload_optimizer()` (lib/actor.py:13-19):\n\n{offload}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and finding.fix is None
    # The quote of the reload itself passes; an edited one is told which line differs.
    reload = "```python\n" + "".join(mirror.splitlines(True)[8:15]) + "```"
    kb.page("a.md", f"The reload (lib/actor.py:13-19):\n\n{reload}\n")
    assert findings(kb) == []
    edited = reload.replace("non_blocking=True", "non_blocking=False")
    kb.page("a.md", f"The reload (lib/actor.py:13-19):\n\n{edited}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-differs" and "(closest: line 18 `state[k]" in finding.message


def test_a_phrase_caption_under_each_block_takes_its_own_block(kb: KB) -> None:
    """Two blocks, each captioned below by a lines phrase with a long path: the first caption
    was read as a sentence (the path counted as its words), took the second block, and a
    correct reference got an error and a fix onto the other block's lines."""
    checkpointing = (
        "import os\n\n\ndef save(save_dir, iteration):\n"
        '    tracker = os.path.join(save_dir, "latest_iteration.txt")\n'
        '    with open(tracker, "w") as f:\n        f.write(str(iteration))\n\n\n'
        "def load(load_dir):\n"
        '    tracker = os.path.join(load_dir, "latest_iteration.txt")\n'
        "    if not os.path.isfile(tracker):\n        return 0\n"
        "    with open(tracker) as f:\n        return int(f.read().strip())\n"
    )
    path = "megatron/core/dist_checkpointing/checkpointing.py"
    repo = kb.new_upstream("megatron")
    pin = repo.commit({path: checkpointing}, "Checkpoints")
    kb.add_upstream("megatron", repo, pin, prefixes=["megatron/"])
    lines = checkpointing.splitlines()
    save_block = "```python\n" + "\n".join(lines[4:7]) + "\n```"
    load_block = "```python\n" + "\n".join(lines[10:15]) + "\n```"
    for save_caption, load_caption in (
        (f"（见 {path} 第 5-7 行）", f"（见 {path} 第 11-15 行）"),
        (f"Source: lines 5-7 of {path}", f"Source: lines 11-15 of {path}"),
    ):
        kb.page("a.md", f"{save_block}\n{save_caption}\n\n{load_block}\n{load_caption}\n")
        assert findings(kb) == [], save_caption
    # The same captions, each at the other's lines: both blocks are read as theirs.
    kb.page(
        "a.md",
        f"{save_block}\nSource: lines 11-15 of {path}\n\n"
        f"{load_block}\nSource: lines 5-7 of {path}\n",
    )
    fixes = sorted(f.fix for f in findings(kb, "quote-elsewhere"))
    assert fixes == [(path, 5, 7), (path, 11, 15)]


def test_a_sentence_after_a_block_is_no_caption_that_takes_it(actor_kb: KB) -> None:
    """Short sentences after a block, or ones starting "This is", took the block from the
    reference above it: a false error, and a fix onto the block's lines."""
    for after in (
        "Then lib/actor.py:24-27 wakes it.",
        "This is undone by lib/actor.py:24-27.",
        "唤醒见后文 lib/actor.py:24-27 的实现。",
    ):
        actor_kb.page("a.md", f"The sleep, lib/actor.py:15-21:\n\n{SLEEP_QUOTE}\n\n{after}\n")
        assert findings(actor_kb) == [], after
        crlf = f"Sleep is short, lib/actor.py:15-21.\n\n{SLEEP_QUOTE}\n\n{after}\n"
        actor_kb.page("b.md", crlf.replace("\n", "\r\n").encode("utf-8"))
        assert findings(actor_kb) == [], after
        actor_kb.page("b.md", "# B\n")


def test_a_fix_in_python_never_takes_a_line_above_that_only_uses_the_symbol(
    training_kb: KB,
) -> None:
    """The line above the quote calls `train_step`: in Python, where definitions are read,
    that is no missing header, and the range was widened onto it."""
    kb = training_kb
    loop_tail = (
        "```python\n        if iteration % save_interval == 0:\n"
        "            torch.save(model.state_dict(), f'ckpt-{iteration}.pt')\n```"
    )
    kb.page("a.md", f"`train_step` (lib/training.py:12-14):\n\n{loop_tail}\n")
    quote = next(f for f in findings(kb) if f.check == "quote-elsewhere")
    assert quote.fix is None


def test_a_sentence_about_one_class_method_at_another_class_method_is_a_warning(
    actor_kb: KB,
) -> None:
    actor_kb.page("a.md", "`Critic.sleep` frees the weights (lib/actor.py:15-22).\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "names-not-in-range"
    assert finding.suggestion == "it is defined at lib/actor.py:31-33"
    actor_kb.page("a.md", "`Actor.sleep` frees the weights (lib/actor.py:15-22).\n")
    assert findings(actor_kb) == []
    # A class the file does not have: its `sleep` is another's, no place to cite (the help
    # named the very lines it rejected).
    actor_kb.page("a.md", "`Learner.sleep` frees the weights (lib/actor.py:15-22).\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "names-not-in-range" and finding.suggestion is None
    assert finding.message.endswith("which defines no `Learner`")


def test_names_of_the_function_whose_body_the_lines_are_are_no_warning(actor_kb: KB) -> None:
    """Lines inside `sleep`, which the sentence names: they use neither `sleep` nor `wake_up`,
    and names-not-in-range said they were used at the `def` lines around them."""
    actor_kb.page(
        "a.md",
        "`sleep()` offloads here, while `wake_up()` has no matching reload "
        "(`lib/actor.py:19-21`).\n",
    )
    assert findings(actor_kb) == []
    # Outside both, it is still said (see the test above for the message).
    actor_kb.page(
        "a.md",
        "`sleep()` offloads here, while `wake_up()` has no matching reload "
        "(`lib/actor.py:11-13`).\n",
    )
    assert [f.check for f in findings(actor_kb)] == ["names-not-in-range"]


def test_an_example_calling_the_cited_function_is_no_quote_of_it(training_kb: KB) -> None:
    """`` run a step like this (training.py:4-9):`` and an example calling `train_step`: it
    is found nowhere, as an example is, and was a quote-not-found error. Code that defines
    the function differently is still one."""
    kb = training_kb
    example = (
        "```python\nbatches = load_the_batches(path_to_the_data)\n"
        "loss = train_step(batches[0], model, optimizer)\nprint(loss.item())\n```"
    )
    kb.page("a.md", f"You run one step like this (lib/training.py:4-9):\n\n{example}\n")
    assert findings(kb) == []
    invented = (
        "```python\ndef train_step(batch, model, optimizer):\n"
        "    predictions = model.forward_the_batch(batch)\n"
        "    return compute_the_loss(predictions, batch.labels)\n```"
    )
    kb.page("a.md", f"The step (lib/training.py:4-9):\n\n{invented}\n")
    assert [f.check for f in findings(kb)] == ["quote-not-found"]


def test_a_copy_of_other_code_that_calls_the_cited_function_is_no_example(kb: KB) -> None:
    """A block of definitions found in another file, which happens to call the cited
    function by an object (`runner.train_step(...)`), is a copy of that code, said as such."""
    repo = kb.new_upstream("lib")
    other = (
        "def run_the_loop(model, optimizer, batches):\n"
        "    for index, batch in enumerate(batches):\n"
        "        scheduler_value = adjust_the_rate(index)\n"
        "        runner.train_step(batch, model, optimizer)\n"
    )
    pin = repo.commit({"lib/training.py": TRAINING, "lib/loop.py": other}, "Training")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    block = f"```python\n{other}```"
    kb.page("a.md", f"The step (lib/training.py:4-9):\n\n{block}\n")
    (finding,) = [f for f in findings(kb) if f.check == "quote-elsewhere"]
    assert "it is in 'lib/loop.py' at 1-4" in finding.message


def test_a_block_a_line_introduces_is_not_the_quote_of_the_paragraph_after_it(
    actor_kb: KB,
) -> None:
    """ "A step looks like this:", the block, then a paragraph of its own citing other code:
    the block was the line above's. Right after the block, a reference is its caption."""
    block = SLEEP_QUOTE
    actor_kb.page(
        "a.md",
        f"A step looks like this:\n\n{block}\n\nThe reload is in lib/actor.py:24-27.\n",
    )
    assert findings(actor_kb) == []
    actor_kb.page("a.md", f"A step looks like this:\n\n{block}\n（lib/actor.py:24-30）\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-elsewhere" and finding.fix == ("lib/actor.py", 15, 21)


def test_a_commit_named_from_a_page_pinned_apart_counts_from_the_page_pin(kb: KB) -> None:
    """A page pinned to its own commit (a PR's head) is checked there, not at the manifest's
    pin: "1 commit after the pin" would count from the wrong commit."""
    repo = kb.new_upstream("lib")
    own = repo.commit({"lib/actor.py": ACTOR}, "Actor", date="2025-01-02T00:00:00+00:00")
    later_actor = ACTOR.replace("non_blocking=True)", "non_blocking=True, pinned=True)")
    later = repo.commit(
        {"lib/actor.py": later_actor}, "Pin offloaded memory", date="2025-01-03T00:00:00+00:00"
    )
    kb.add_upstream("lib", repo, later, prefixes=["lib/"])
    quote = SLEEP_QUOTE.replace("non_blocking=True)", "non_blocking=True, pinned=True)")
    kb.page(
        "a.md",
        f"---\nupstream: lib\npin: {own}\n---\n# A\n\nThe method (`lib/actor.py:15-22`):\n\n"
        f"{quote}\n",
        dedent=False,
    )
    (finding,) = findings(kb)
    assert f"lib@{later[:7]} (1 commit after {own[:7]}," in finding.message


def test_a_quote_the_pin_holds_whole_at_other_lines_does_not_blame_the_pin(kb: KB) -> None:
    """The quote is `Learner.sleep()`, which the pin holds whole; it is cited at
    `Actor.sleep()`, near-identical, which an older commit had in the quote's words. The pin is
    not what is wrong, so no commit is named as the one the page was written against."""
    pinned = "self.model.offload(tag, non_blocking=True, pinned=True)"
    learner = "\n\nclass Learner:\n" + ACTOR.split("class Actor:\n", 1)[1].split("\n\nclass")[0]
    learner = learner.replace("self.model.offload(tag, non_blocking=True)", pinned)
    repo = kb.new_upstream("lib")
    repo.commit(
        {"lib/actor.py": ACTOR.replace("self.model.offload(tag, non_blocking=True)", pinned)},
        "Pinned offload",
        date="2025-01-02T00:00:00+00:00",
    )
    pin = repo.commit(
        {"lib/actor.py": ACTOR + learner}, "Learner", date="2025-01-03T00:00:00+00:00"
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    quote = SLEEP_QUOTE.replace("non_blocking=True)", "non_blocking=True, pinned=True)")
    kb.page("a.md", f"The method (`lib/actor.py:15-22`):\n\n{quote}\n")
    assert not [f for f in findings(kb) if "written against" in f.message]


def test_a_quote_copied_from_an_older_commit_is_not_moved_to_its_loose_match_at_the_pin(
    kb: KB,
) -> None:
    """The pin added a line inside `sleep()`; a draft quotes `sleep()` as the older commit has
    it, at other lines. The quote matches at the pin only with the added line between, so
    `--fix` moved the range there and hid the wrong pin. It now names the commit that holds
    the quote as written, and fixes nothing. A quote that only drops a line of the pin's
    code, as authors do, held as written by no commit, still gets its range fixed."""
    repo = kb.new_upstream("lib")
    old = repo.commit({"lib/actor.py": ACTOR}, "Actor", date="2025-01-02T00:00:00+00:00")
    added = "            self.model.synchronize(tag)\n"
    offload = "            self.model.offload(tag, non_blocking=True)\n"
    pin = repo.commit(
        {"lib/actor.py": ACTOR.replace(offload, offload + added)},
        "Synchronize after each offload",
        date="2025-01-03T00:00:00+00:00",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    # `sleep()` copied from the older commit, docstring and all.
    copied = "\n".join(line[4:] for line in ACTOR.split("\n")[14:22])
    kb.page("a.md", f"The method (`lib/actor.py:25-31`):\n\n```python\n{copied}\n```\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and finding.severity is Severity.ERROR
    assert "it is at 15-23 only with lines between or changed" in finding.message
    assert f"as written it is at 15-22 in lib@{old[:7]} (1 commit before the pin" in (
        finding.message
    )
    assert finding.fix is None
    assert finding.suggestion == "kb pin suggest docs/a.md"

    dropped = SLEEP_QUOTE.replace("    if tags is None:\n", "")
    dropped = dropped.replace('        tags = ["weights"]\n', "")
    dropped = dropped.replace("torch.cuda", "self.model.synchronize(tag)\n    torch.cuda")
    kb.page("a.md", f"The method (`lib/actor.py:25-31`):\n\n{dropped}\n")
    (finding,) = findings(kb)
    assert finding.fix == ("lib/actor.py", 15, 22), finding.message


def test_the_search_for_quotes_as_written_keeps_a_budget_of_its_own(
    kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Abridged quotes at stale lines, the most common kind, each search the history for
    the quote as written: on the budget of the searches for quotes whole only at another
    commit, they left those without an answer, and --fix then moved such a quote's range."""
    monkeypatch.setattr("generator.refs.prove.MAX_HISTORY_SEARCHES", 1)
    later, quote = _quoted_from_a_later_commit(kb)
    abridged = SLEEP_QUOTE.replace("    if tags is None:\n", "")
    abridged = abridged.replace('        tags = ["weights"]\n', "")
    kb.page("a.md", f"The method (`lib/actor.py:24-30`):\n\n{abridged}\n")
    kb.page("b.md", f"The method (`lib/actor.py:24-30`):\n\n{quote}\n")
    found = {f.page: f for f in findings(kb)}
    assert found["docs/a.md"].fix == ("lib/actor.py", 15, 21)
    assert f"lib@{later[:7]}" in found["docs/b.md"].message
    assert found["docs/b.md"].fix is None


def test_a_commit_named_for_a_quote_as_written_gives_the_lines_that_hold_it_so(kb: KB) -> None:
    """The older commit held a near copy (one line more) before the quoted function: the
    message gave that copy's lines, the best loose match, not the function as written."""
    repo = kb.new_upstream("lib")
    sleep = ACTOR.split("    def sleep")[1].split("\n\n")[0]
    near = "    def sleep" + sleep.replace(
        "            self.model.offload(tag, non_blocking=True)\n",
        "            self.model.offload(tag, non_blocking=True)\n            self.model.sync()\n",
    )
    exact = "    def sleep" + sleep
    old = repo.commit(
        {"lib/actor.py": f"class A:\n{near}\n\n\nclass B:\n{exact}\n"},
        "Two actors",
        date="2025-01-02T00:00:00+00:00",
    )
    pin = repo.commit(
        {"lib/actor.py": f"class A:\n{near}\n\n\nclass B:\n    pass\n"},
        "Empty B",
        date="2025-01-03T00:00:00+00:00",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    copied = "\n".join(line[4:] for line in exact.split("\n"))
    kb.page("a.md", f"`B.sleep` (`lib/actor.py:40-47`):\n\n```python\n{copied}\n```\n")
    (finding,) = findings(kb, "quote-elsewhere")
    first = 2 + near.count("\n") + 4  # B's def line at the older commit
    assert f"as written it is at {first}-{first + exact.count(chr(10))} in lib@{old[:7]}" in (
        finding.message
    ), finding.message
    assert finding.fix is None


def _function(number: int, edited: bool = False) -> str:
    factor = "gamma" if edited else "beta"
    return (
        f"def step_{number}(batch_{number}, weights_{number}):\n"
        f"    scaled_{number} = batch_{number} * weights_{number}.{factor}_{number}\n"
        f"    shifted_{number} = scaled_{number} + weights_{number}.offset_{number}\n"
        f"    return shifted_{number}.clamp(min=-{number}, max={number})\n"
    )


def test_many_edited_quotes_leave_the_history_hint_of_a_quote_found_nowhere(
    kb: KB, caplog: pytest.LogCaptureFixture
) -> None:
    """A hundred quotes held in part by their lines (written against an older commit) used up
    the history searches of the run: a later quote found nowhere at the pin lost the commit
    that has it, and `kb pin suggest` with it. Each question has its own budget now, and the
    run says when one is used up."""
    repo = kb.new_upstream("lib")
    count = 101  # one more than a budget
    old = repo.commit({"lib/many.py": "\n\n".join(_function(n) for n in range(count + 1))}, "Steps")
    pin = repo.commit(
        {"lib/many.py": "\n\n".join(_function(n, edited=True) for n in range(count))},
        "Use gamma; drop the last step",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])

    def cited(number: int, quoted: int) -> str:
        start = number * 6 + 1
        return f"Step (`lib/many.py:{start}-{start + 3}`):\n\n```python\n{_function(quoted)}```\n"

    kb.page("a.md", "\n".join(cited(n, n) for n in range(count)))
    kb.page("z.md", cited(0, count))
    found = findings(kb)
    # The last quote held in part is past its budget: not searched, so only told to differ.
    assert [f.check for f in found] == ["quote-elsewhere"] * (count - 1) + [
        "quote-differs",
        "quote-not-found",
    ]
    assert found[-1].page == "docs/z.md" and f"lib@{old[:7]}" in found[-1].message
    assert found[-1].suggestion == "kb pin suggest docs/z.md"
    assert "100 quotes found only in part were searched for" in caplog.text


def test_two_processes_spend_the_history_budget_as_one_does(
    kb: KB, caplog: pytest.LogCaptureFixture
) -> None:
    """Pages read in a forked process are resolved there too, ahead of their turn; a search
    that a budget of the run limits waits for the page's turn, so which quotes get one does
    not depend on how the pages were shared (each process spending a budget of its own
    searched all 101 quotes here, and the last page's quote got a hint it does not get alone)."""
    repo = kb.new_upstream("lib")
    count = 101  # one more than a budget
    repo.commit({"lib/many.py": "\n\n".join(_function(n) for n in range(count))}, "Steps")
    pin = repo.commit(
        {"lib/many.py": "\n\n".join(_function(n, edited=True) for n in range(count))},
        "Use gamma",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    for number in range(count):
        start = number * 6 + 1
        kb.page(
            f"p{number:03}.md",
            f"Step (`lib/many.py:{start}-{start + 3}`):\n\n```python\n{_function(number)}```\n",
        )
    for number in range(PARALLEL_MINIMUM_PAGES):
        kb.page(f"q{number:03}.md", f"# Filler {number}\n\nNothing cited.\n")

    def run(workers: int) -> list[tuple[str, str, str]]:
        caplog.clear()
        report = kb.verify(cache=False, workers=workers)
        assert caplog.text.count("100 quotes found only in part were searched for") == 1
        return [(f.page, f.check, f.message) for f in report.findings]

    alone = run(1)
    assert [page for page, _, _ in alone] == [f"docs/p{n:03}.md" for n in range(count)]
    # The last page's quote is past the budget: not searched, so only told to differ.
    assert [check for _, check, _ in alone] == ["quote-elsewhere"] * (count - 1) + ["quote-differs"]
    assert run(2) == alone


def test_a_method_called_on_self_is_checked_and_an_attribute_is_not(actor_kb: KB) -> None:
    actor_kb.page("a.md", "`self.sleep()` (lib/actor.py:24-27) frees memory.\n")
    assert [f.check for f in findings(actor_kb)] == ["symbol-not-in-range"]
    actor_kb.page("a.md", "- `self.model`: the model, see `lib/actor.py:11-13`\n")
    assert findings(actor_kb) == []


def test_pin_suggest_writes_no_pin_that_nothing_lines_up_with(actor_kb: KB) -> None:
    """With no reference lining up at any commit, --write set the least contradicted commit
    as the page's pin, on no evidence, and said nothing."""
    actor_kb.page("a.md", "# A\n\nThe loop is lib/actor.py:900-910.\n")
    manifest = (actor_kb.root / "upstreams.yaml").read_bytes()
    page = (actor_kb.docs / "a.md").read_bytes()
    written = actor_kb.cli("pin", "suggest", "docs", "--write")
    assert written.returncode == 1
    assert "error: no pin written: no reference lines up at " in written.stderr
    assert (actor_kb.root / "upstreams.yaml").read_bytes() == manifest
    assert (actor_kb.docs / "a.md").read_bytes() == page


def test_a_quote_that_drops_the_docstring_and_reflows_the_calls_is_the_code(kb: KB) -> None:
    """A black-formatted quote of a function whose docstring it leaves out: each change alone
    passed, both together were `quote-not-found`, an error on a right page. The reflowed
    quote is looked for in the code without its docstrings too."""
    source = (
        "def build(config):\n"
        '    """Build the trainer from the config."""\n'
        "    optimizer = make_optimizer(config.model.parameters(), lr=config.lr, "
        "weight_decay=config.weight_decay)\n"
        "    scheduler = make_scheduler(optimizer, config.warmup_steps, config.total_steps)\n"
        "    return Trainer(optimizer, scheduler)\n"
    )
    _upstream_with(kb, {"lib/build.py": source})
    quote = (
        "```python\n"
        "def build(config):\n"
        "    optimizer = make_optimizer(\n"
        "        config.model.parameters(),\n"
        "        lr=config.lr,\n"
        "        weight_decay=config.weight_decay,\n"
        "    )\n"
        "    scheduler = make_scheduler(\n"
        "        optimizer, config.warmup_steps, config.total_steps\n"
        "    )\n"
        "    return Trainer(optimizer, scheduler)\n"
        "```"
    )
    kb.page("a.md", f"`build` (lib/build.py:1-5):\n\n{quote}\n")
    assert findings(kb) == []
    # Cited elsewhere, it is still found there, and the range moved to it.
    kb.page("a.md", f"`build` (lib/build.py:4-5):\n\n{quote}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and finding.fix == ("lib/build.py", 1, 5)


def test_a_reordered_quote_whose_moved_line_is_in_the_next_method_too_differs(kb: KB) -> None:
    """`sleep` quoted with `clear_memory()` moved after the loop: its best place took the
    `clear_memory()` of `wake_up`, after the range, and nothing was said of the order."""
    source = (
        "class Actor:\n"
        "    def sleep(self, tags):\n"
        "        assert self.args.offload\n"
        "        clear_memory()\n"
        "        for chunk in self.model:\n"
        '            chunk.to("cpu")\n'
        "        torch.cuda.synchronize()\n"
        "\n"
        "    def wake_up(self, tags):\n"
        "        for chunk in self.model:\n"
        '            chunk.to("cuda")\n'
        "        clear_memory()\n"
    )
    _upstream_with(kb, {"lib/actor.py": source})
    quote = (
        "```python\n"
        "def sleep(self, tags):\n"
        "    assert self.args.offload\n"
        "    torch.cuda.synchronize()\n"
        "    for chunk in self.model:\n"
        '        chunk.to("cpu")\n'
        "    clear_memory()\n"
        "```"
    )
    kb.page("a.md", f"`sleep()` (lib/actor.py:2-7):\n\n{quote}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-differs", finding.message
    assert "but not after its line" in finding.message


TRAINER = (
    "class Trainer:\n"
    "    def fit(self, loader, epochs: int = 1, grad_clip: float = 1.0) -> float:\n"
    "        total = 0.0\n"
    "        for epoch in range(epochs):\n"
    "            total += self.epoch(loader, grad_clip)\n"
    "        return total / max(1, epochs)\n"
    "\n"
    "    def should_continue(self, loss: float) -> bool:\n"
    "        if loss < self.best_loss:\n"
    "            self.best_loss = loss\n"
    '        return self.step < self.cfg["max_steps"] and not math.isnan(loss)\n'
)
FIT_BODY = (
    "    total = 0.0\n"
    "    for epoch in range(epochs):\n"
    "        total += self.epoch(loader, grad_clip)\n"
    "    return total / max(1, epochs)\n"
)


@pytest.mark.parametrize(
    ("cited", "body", "differs"),
    [
        # Written shorter: no annotations, in two lines; the signature over several lines.
        ("2-6", "def fit(self, loader, epochs=1, grad_clip=1.0):\n    total = 0.0\n", None),
        (
            "2-6",
            "def fit(\n    self,\n    loader,\n    epochs=1,\n    grad_clip=1.0,\n):\n" + FIT_BODY,
            None,
        ),
        # Written otherwise: a parameter left out, another return, another default.
        ("2-6", "def fit(self, loader, grad_clip: float = 1.0) -> float:\n" + FIT_BODY, "def fit"),
        ("2-6", "def fit(self, loader, epochs, grad_clip) -> int:\n" + FIT_BODY, "def fit"),
        ("2-6", "def fit(self, loader, epochs=2, grad_clip=1.0):\n" + FIT_BODY, "def fit"),
        # The last line stopped short: the NaN check is gone.
        (
            "8-11",
            "def should_continue(self, loss: float) -> bool:\n"
            "    if loss < self.best_loss:\n"
            "        self.best_loss = loss\n"
            '    return self.step < self.cfg["max_steps"]\n',
            "return self.step",
        ),
    ],
)
def test_a_signature_is_abridged_only_by_leaving_out_what_it_declares(
    kb: KB, cited: str, body: str, differs: str | None
) -> None:
    """A two-line quote starting with a signature without its annotations was
    `quote-not-found`, an error; one over several lines was told to differ. And a signature
    with a parameter left out, another return annotation or default, or a last line cut
    short, passed: their words were all there."""
    _upstream_with(kb, {"lib/trainer.py": TRAINER})
    quote = "```python\n" + textwrap.indent(body, "    ") + "```"
    kb.page("a.md", f"The method (lib/trainer.py:{cited}):\n\n{quote}\n")
    _assert_differs(findings(kb), f"`{differs}" if differs else None)


@pytest.mark.parametrize(
    ("quoted", "said"),
    [
        # A long line a cited line has otherwise: a constant, a `not`.
        (
            '        return self.step < self.cfg["max_steps"] and math.isnan(loss)',
            '`return self.step < self.cfg["max_steps"] and math.isnan(loss)` is not there '
            '(closest: line 11 `return self.step < self.cfg["max_steps"] and not math.isnan',
        ),
        ("        for epoch in range(epochs, 2):", None),  # short: an example, not a claim
        ("        trainer.fit(loader, epochs=3, grad_clip=0.5)  # how it is called", None),
        ('        return self.step < self.cfg["max_steps"] and not math.isnan(loss)', None),
    ],
)
def test_a_quote_of_one_long_line_written_otherwise_differs(
    kb: KB, quoted: str, said: str | None
) -> None:
    """One-line quotes were never read: a long specific line with a constant changed or a
    `not` dropped passed. One like a cited line, not the same, is told to differ; a short
    one, or one like none of them (a call showing how to use it), stays silent."""
    _upstream_with(kb, {"lib/trainer.py": TRAINER})
    kb.page("a.md", f"The check (lib/trainer.py:8-11):\n\n```python\n{quoted}\n```\n")
    found = findings(kb)
    if said is None:
        assert found == [], [f.message for f in found]
    else:
        (finding,) = found
        assert finding.check == "quote-differs" and said in finding.message, finding.message


def test_a_quote_of_another_method_whose_lines_the_cited_one_has_too_differs(kb: KB) -> None:
    """`Config.get` quoted at `FrozenConfig.get`: its two lines are in the cited method too,
    with the `raise` between, which the quote then hides; an author may leave lines out, but
    another place of the file holds the quote as written."""
    source = (
        "class Config:\n"
        "    def get(self, key, default=None):\n"
        "        return self.values.get(key, default)\n"
        "\n"
        "\n"
        "class FrozenConfig(Config):\n"
        "    def get(self, key, default=None):\n"
        "        if key not in self.values:\n"
        "            raise KeyError(key)\n"
        "        return self.values.get(key, default)\n"
    )
    _upstream_with(kb, {"lib/config.py": source})
    quote = (
        "```python\n"
        "def get(self, key, default=None):\n"
        "    return self.values.get(key, default)\n"
        "```"
    )
    kb.page("a.md", f"`FrozenConfig.get` (lib/config.py:7-10):\n\n{quote}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-differs", finding.message
    assert finding.message.endswith(
        "only with lines between it leaves out; as written it is at 2-3"
    )
    # Quoted with an elision, it says it leaves lines out: nothing to say.
    elided = quote.replace("None):\n", "None):\n    ...\n")
    kb.page("a.md", f"`FrozenConfig.get` (lib/config.py:7-10):\n\n{elided}\n")
    assert findings(kb) == []


def test_a_quote_of_one_long_line_the_file_has_elsewhere_differs(actor_kb: KB) -> None:
    """A long line quoted beside a reference whose lines lack it, which the file has at one
    other line, shows other code than the page cites: it passed, as weak evidence. A call of
    what the cited lines define, or a line of another function the sentence names, is other
    code on purpose; a line found nowhere is an example."""
    offload = "```python\nself.model.offload(tag, non_blocking=True)\n```"
    actor_kb.page("a.md", f"`Critic.sleep()` (lib/actor.py:31-33):\n\n{offload}\n")
    (finding,) = findings(actor_kb)
    assert finding.check == "quote-differs" and finding.severity is Severity.WARNING
    assert finding.message.endswith(
        "is not in range 31-33 of 'lib/actor.py' at lib@"
        + actor_kb.pin[:7]  # type: ignore[attr-defined]
        + ": `self.model.offload(tag, non_blocking=True)` is at line 20"
    ), finding.message
    assert finding.suggestion is not None and "lib/actor.py:20" in finding.suggestion
    example = "```python\nactor.sleep(tags=['weights', 'optimizer'])\n```"
    actor_kb.page("a.md", f"`sleep()` (lib/actor.py:15-22) is used as:\n\n{example}\n")
    assert findings(actor_kb) == []


@pytest.mark.parametrize(
    ("page", "elsewhere"),
    [
        # A call of the cited function: like its `def` line, and no misquote of it.
        (
            "`train_step()` (lib/training.py:4-9) is called in the loop:\n\n"
            "```python\n        loss = train_step(batch, model, optimizer)\n```\n",
            "`glu()` (lib/training.py:12-14):",
        ),
        # A line of another function the sentence names.
        (
            "`train()` (lib/training.py:17-22) ends with `glu`, which splits:\n\n"
            "```python\n    x_glu, x_linear = torch.chunk(x, 2, dim=-1)\n```\n",
            "`train()` (lib/training.py:17-22):",
        ),
    ],
)
def test_a_one_line_quote_of_other_code_on_purpose_is_no_difference(
    training_kb: KB, page: str, elsewhere: str
) -> None:
    """The same line beside a reference to code it neither calls nor names is told."""
    training_kb.page("a.md", page)
    assert findings(training_kb) == []
    training_kb.page("a.md", f"{elsewhere}\n\n{page.split(chr(10) * 2, 1)[1]}")
    (finding,) = findings(training_kb)
    assert finding.check == "quote-differs" and "is at line" in finding.message, finding.message


COMM = (
    "import datetime\n"  # 1
    "\n"  # 2
    "import torch.distributed as dist\n"  # 3
    "\n"  # 4
    "_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)\n"  # 5
    "\n"  # 6
    "\n"  # 7
    "def get_world_size(group=None) -> int:\n"  # 8
    "    if not dist.is_available() or not dist.is_initialized():\n"  # 9
    "        return 1\n"  # 10
    "    return dist.get_world_size(group)\n"  # 11
)


@pytest.mark.parametrize(
    ("caption", "block"),
    [
        (
            "出错时日志如下：",
            "[rank3]:[E ProcessGroupNCCL.cpp:563] Watchdog caught collective operation timeout\n"
            "[rank3]:[E ProcessGroupNCCL.cpp:577] Some NCCL operations have failed or timed out.",
        ),
        (
            "When it hangs you will see:",
            "2025-01-03 12:30:01 INFO trainkit.comm: waiting for rank 3\n"
            "2025-01-03 12:30:31 WARNING trainkit.comm: still waiting for rank 3",
        ),
        (
            "A hang looks like this:",
            "[rank3]:[E ProcessGroupNCCL.cpp:563] Watchdog caught collective operation timeout\n"
            '  File "lib/comm.py", line 57, in barrier_with_timeout',
        ),
        (
            "glog says:",
            "I0103 12:30:01.123456 1234 comm.cc:88] init rank 0\n"
            "W0103 12:30:31.123456 1234 comm.cc:91] rank 3 is late",
        ),
    ],
)
def test_a_block_of_log_lines_is_no_quote(kb: KB, caption: str, block: str) -> None:
    """A log pasted after a right reference, in a block without a language, was taken for a
    quote of the cited code and was `quote-not-found`: an error that stopped the build."""
    _upstream_with(kb, {"lib/comm.py": COMM})
    kb.page(
        "a.md",
        f"超时时间由 `_DEFAULT_TIMEOUT` 控制（lib/comm.py:5）。\n\n{caption}\n\n"
        f"```\n{block}\n```\n",
    )
    assert findings(kb) == []


def test_code_in_a_block_without_a_language_is_still_a_quote(kb: KB) -> None:
    _upstream_with(kb, {"lib/comm.py": COMM})
    code = "def get_world_size(group=None) -> int:\n    return dist.get_world_size(group)\n"
    kb.page("a.md", f"The rank (lib/comm.py:1-3):\n\n```\n{code}```\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere", finding.message


@pytest.mark.parametrize("separator", [" ", ": ", " | ", "│ "])
def test_a_quote_pasted_with_line_numbers_is_read_without_them(kb: KB, separator: str) -> None:
    """A paste with its line numbers was compared with them, matched nothing and was never
    reported: a quote that inverted the code's test passed. The numbers are taken out."""
    _upstream_with(kb, {"lib/comm.py": COMM})
    right = [
        "def get_world_size(group=None) -> int:",
        "    if not dist.is_available() or not dist.is_initialized():",
        "        return 1",
        "    return dist.get_world_size(group)",
    ]
    numbered = "\n".join(f"{8 + n}{separator}{line}" for n, line in enumerate(right))
    kb.page("a.md", f"`get_world_size` (lib/comm.py:8-11):\n\n```python\n{numbered}\n```\n")
    assert findings(kb) == []
    wrong = [right[0], "    if dist.is_initialized():", "        return dist.get_world_size(group)"]
    wrong.append("    return 1")
    numbered = "\n".join(f"{8 + n}{separator}{line}" for n, line in enumerate(wrong))
    kb.page("a.md", f"`get_world_size` (lib/comm.py:8-11):\n\n```python\n{numbered}\n```\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-differs", finding.message
    assert "`if dist.is_initialized():` is not there" in finding.message, finding.message


PPO = (
    "class PPOLoss:\n"  # 1
    "    def clipped_objective(self, value, *, scale=1.0):\n"  # 2
    "        if not self.config.enabled:\n"  # 3
    "            return value\n"  # 4
    "        value = max(min(value, 10.0), -10.0)\n"  # 5
    "        result = value * scale * self.config.ppo_scale + 19\n"  # 6
    "        self._state['last_ppo'] = result\n"  # 7
    "        return result\n"  # 8
)


@pytest.mark.parametrize(
    ("expression", "differs"),
    [
        (
            "    result = (\n        value\n        * scale\n        * self.config.ppo_scale\n"
            "        + 19\n    )\n",
            False,
        ),
        ("    result = (\n        value * scale * self.config.ppo_scale + 19\n    )\n", False),
        ("    result = (\n        value * scale * self.config.ppo_scale + 91\n    )\n", True),
    ],
)
def test_an_expression_a_formatter_put_in_brackets_is_the_code(
    kb: KB, expression: str, differs: bool
) -> None:
    """Black spreads a long expression over lines inside brackets of its own: a quote so
    formatted got `quote-differs` naming `result = (` and each operand."""
    _upstream_with(kb, {"lib/ppo.py": PPO})
    body = (
        "def clipped_objective(self, value, *, scale=1.0):\n"
        "    if not self.config.enabled:\n"
        "        return value\n"
        "    value = max(min(value, 10.0), -10.0)\n"
        f"{expression}"
        "    self._state['last_ppo'] = result\n"
        "    return result\n"
    )
    kb.page("a.md", f"`PPOLoss.clipped_objective` (lib/ppo.py:2-8):\n\n```python\n{body}```\n")
    found = findings(kb)
    if differs:
        (finding,) = found
        assert finding.check == "quote-differs", finding.message
    else:
        assert found == [], [f.message for f in found]


def test_a_quote_half_as_written_with_a_line_changed_differs_rather_than_is_nowhere(
    kb: KB,
) -> None:
    """`Timer.elapsed` quoted with its `def` line as written and its `return` made up was
    "nowhere in the file": half of it is the cited lines, and the other half is like theirs."""
    timer = (
        "class Timer:\n    def __init__(self):\n        self._totals = {}\n\n"
        "    def elapsed(self, name: str) -> float:\n        return self._totals[name]\n"
    )
    _upstream_with(kb, {"lib/timer.py": timer})
    quote = "def elapsed(self, name: str) -> float:\n    return self._totals.get(name, 0.0)\n"
    kb.page("a.md", f"`Timer.elapsed` (lib/timer.py:5-6):\n\n```python\n{quote}```\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-differs", finding.message
    assert finding.message.endswith(
        "its line 5 `return self._totals.get(name, 0.0)` is not there "
        "(closest: line 6 `return self._totals[name]`)"
    ), finding.message


def test_pin_suggest_says_which_commit_of_a_row_it_wrote(kb: KB) -> None:
    """Commits that the evidence does not tell apart share a row, labelled with the oldest;
    `--write` writes the newest, and said only that it wrote "the pin"."""
    repo = kb.new_upstream("lib")
    first = repo.commit({"lib/actor.py": OLD}, "First actor")
    rewrite = repo.commit({"lib/actor.py": ACTOR}, "Rewrite the actor")
    repo.commit({"lib/util.py": "def helper():\n    return 1\n"}, "Add a helper")
    newest = repo.commit({"lib/other.py": "X = 1\n"}, "Add other")
    kb.add_upstream("lib", repo, first, prefixes=["lib/"])
    kb.page("a.md", f"# A\n\n`sleep()` (lib/actor.py:15-22):\n\n{SLEEP_QUOTE}\n")
    written = kb.cli("pin", "suggest", "docs", "--write")
    assert written.returncode == 0, written.stderr
    assert f"{rewrite[:7]}" in written.stdout and f"(+2 to {newest[:7]})" in written.stdout
    assert (
        f"wrote the pin {newest[:7]} (the newest of the first row's 3 commits, which the "
        "evidence does not tell apart) into upstreams.yaml"
    ) in written.stdout, written.stdout


def test_a_quote_of_an_older_version_names_the_commit_that_changed_the_file(kb: KB) -> None:
    """The nearest commit that holds an older version of a file is the last before the one
    that changed it: its subject ('Add the docs') said nothing of the file, and the message
    read as if that commit had to do with the quote."""
    repo = kb.new_upstream("lib")
    repo.commit({"lib/actor.py": OLD}, "First actor")
    last = repo.commit({"lib/README": "docs\n"}, "Add the docs")
    pin = repo.commit({"lib/actor.py": ACTOR}, "Rewrite the actor")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    quote = OLD_SLEEP_QUOTE
    kb.page("a.md", f"`sleep()` (lib/actor.py:15-22):\n\n{quote}\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-not-found"
    assert finding.message.endswith(
        f"it is at 7-11 in lib@{last[:7]} (1 commit before the pin), before lib@{pin[:7]} "
        f"changed the file ('Rewrite the actor'): the page may have been written against "
        f"lib@{last[:7]}"
    ), finding.message
    assert "Add the docs" not in finding.message


def test_a_symbol_missing_at_a_pin_the_quote_doubts_gets_no_rename_advice(kb: KB) -> None:
    """A page written against a later commit cites `Timer.summary`, which its pin lacks: the
    quote is found at that commit, and the symbol's finding told the author to rename it to
    `reset`, the method at those lines of the pin."""
    v1 = (
        "class Timer:\n    def __init__(self):\n        self._totals = {}\n\n"
        "    def reset(self):\n        self._totals.clear()\n"
    )
    summary = (
        "    def summary(self):\n"
        "        return ', '.join(f'{k}={v:.3f}s' for k, v in sorted(self._totals.items()))\n\n"
    )
    v2 = v1.replace("    def reset", summary + "    def reset")
    repo = kb.new_upstream("lib")
    pin = repo.commit({"lib/timer.py": v1}, "Timer")
    repo.commit({"lib/timer.py": v2}, "Add summary")
    kb.add_upstream("lib", repo, pin, prefixes=["lib/"])
    kb.page("a.md", f"`Timer.summary` (lib/timer.py:5-6):\n\n```python\n{summary}```\n")
    by_check = {f.check: f for f in findings(kb)}
    assert "1 commit after the pin" in by_check["quote-not-found"].message
    symbol = by_check["symbol-not-found"]
    assert symbol.suggestion == "kb pin suggest docs/a.md" and symbol.fix is None


@pytest.mark.parametrize(
    "sentence",
    [
        "`glu` is often confused with the step at lib/training.py:4-9.",
        "`glu`, unlike the step (lib/training.py:4-9), keeps no state.",
        "`glu` differs from the step at lib/training.py:4-9.",
        "`glu` 不同于 lib/training.py:4-9 的单步训练。",
    ],
)
def test_a_sentence_comparing_its_subject_with_the_cited_code_claims_nothing(
    training_kb: KB, sentence: str
) -> None:
    """`FSDPActor.sleep` "is sometimes confused with the Megatron one at x.py:29-35" cites
    the Megatron one, right: the name it opens with was taken for what the lines hold."""
    training_kb.page("a.md", sentence + "\n")
    assert findings(training_kb) == []
    training_kb.page("a.md", "`glu` squashes half of its input (lib/training.py:4-9).\n")
    assert [f.check for f in findings(training_kb)] == ["names-not-in-range"]


KERNEL = (
    "#include <cuda_fp16.h>\n"  # 1
    "\n"  # 2
    "__device__ float warp_reduce_sum(float val) {\n"  # 3
    "  for (int offset = 16; offset > 0; offset /= 2) {\n"  # 4
    "    val += __shfl_down_sync(0xffffffff, val, offset);\n"  # 5
    "  }\n"  # 6
    "  return val;\n"  # 7
    "}\n"  # 8
    "\n"  # 9
    "template <typename T>\n"  # 10
    "__global__ void layernorm_forward_kernel(\n"  # 11
    "    const T* __restrict__ x, T* __restrict__ y, int cols) {\n"  # 12
    "  float sum = 0.0f;\n"  # 13
    "  for (int i = threadIdx.x; i < cols; i += blockDim.x) {\n"  # 14
    "    sum += static_cast<float>(x[blockIdx.x * cols + i]);\n"  # 15
    "  }\n"  # 16
    "  float mean = warp_reduce_sum(sum) / cols;\n"  # 17
    "  for (int i = threadIdx.x; i < cols; i += blockDim.x) {\n"  # 18
    "    y[blockIdx.x * cols + i] = static_cast<T>(x[blockIdx.x * cols + i] - mean);\n"  # 19
    "  }\n"  # 20
    "}\n"  # 21
)
SCHEDULER = (
    "package sched\n"  # 1
    "\n"  # 2
    "// Place puts a job on the least loaded node.\n"  # 3
    "func (s *Scheduler) Place(job Job) (Node, error) {\n"  # 4
    "\tnode := s.leastLoaded()\n"  # 5
    "\tif node == nil {\n"  # 6
    "\t\treturn Node{}, ErrNoCapacity\n"  # 7
    "\t}\n"  # 8
    "\tnode.Assign(job)\n"  # 9
    "\treturn *node, nil\n"  # 10
    "}\n"  # 11
)


@pytest.mark.parametrize(
    "page",
    [
        "The mean pass of `layernorm_forward_kernel` (lib/kernel.cu:13-17):\n\n```cuda\n"
        + "".join(KERNEL.splitlines(keepends=True)[12:17])
        + "```\n",
        "The loop of `layernorm_forward_kernel` (lib/kernel.cu:14-16).\n",
        "The capacity check of `Place` (lib/sched.go:6-8).\n",
        # A quote of a caller, on purpose: no error, no fix off the definition.
        "`warp_reduce_sum` (lib/kernel.cu:3-8) is called from the kernel:\n\n```cuda\n"
        + "".join(KERNEL.splitlines(keepends=True)[10:21])
        + "```\n",
    ],
)
def test_a_reference_into_the_body_of_a_function_in_braces_is_in_it(kb: KB, page: str) -> None:
    """C, CUDA and Go functions were never read as definitions: lines inside a kernel, cited
    beside its name, were `symbol-not-in-range` (an error), and a quote of a caller beside
    the callee's right reference was `quote-elsewhere` with a fix moving it off the callee."""
    _upstream_with(kb, {"lib/kernel.cu": KERNEL, "lib/sched.go": SCHEDULER})
    kb.page("a.md", page)
    assert findings(kb) == [], [f.message for f in findings(kb)]


def test_a_range_off_inside_a_kernel_named_beside_it_is_fixed(kb: KB) -> None:
    _upstream_with(kb, {"lib/kernel.cu": KERNEL})
    quote = "".join(KERNEL.splitlines(keepends=True)[12:17])
    kb.page(
        "a.md",
        "The mean pass of `layernorm_forward_kernel` (lib/kernel.cu:10-14):\n\n"
        f"```cuda\n{quote}```\n",
    )
    (finding,) = findings(kb)
    assert finding.check == "quote-elsewhere" and finding.fix == ("lib/kernel.cu", 13, 17), (
        finding.message
    )
    # Lines outside the kernel, named beside it, are still not in it.
    kb.page("a.md", "The include of `layernorm_forward_kernel` (lib/kernel.cu:1).\n")
    (finding,) = findings(kb)
    assert finding.check == "symbol-not-in-range", finding.message
    assert finding.suggestion == "it is defined at lib/kernel.cu:10-21", finding.suggestion


def test_a_comment_of_the_quoted_code_citing_another_file_is_not_the_page_s_reference(
    kb: KB,
) -> None:
    """Upstream code whose comment cites another project's file (`// Adapted from apex:
    csrc/layer_norm_cuda_kernel.cu:120-184`), quoted whole after a right reference, gave two
    errors for a reference the page never wrote, and `--fix` rewrote the quoted code. A
    comment the page adds to the quote is still its reference."""
    rmsnorm = (
        "#include <cuda_fp16.h>\n"  # 1
        "\n"  # 2
        "// Adapted from apex: csrc/layer_norm_cuda_kernel.cu:120-184, without the mean.\n"  # 3
        "__global__ void rmsnorm_kernel(const float* x, float* y, int cols) {\n"  # 4
        "  float sum = 0.0f;\n"  # 5
        "  for (int i = threadIdx.x; i < cols; i += blockDim.x) sum += x[i] * x[i];\n"  # 6
        "  y[threadIdx.x] = x[threadIdx.x] * rsqrtf(sum / cols + 1e-6f);\n"  # 7
        "}\n"  # 8
    )
    _upstream_with(kb, {"lib/rmsnorm.cu": rmsnorm})
    quote = "".join(rmsnorm.splitlines(keepends=True)[2:8])
    kb.page("a.md", f"`rmsnorm_kernel` (lib/rmsnorm.cu:3-8):\n\n```cuda\n{quote}```\n")
    assert findings(kb) == [], [f.message for f in findings(kb)]
    fixed = kb.cli("verify", "docs", "--fix", "--dry-run")
    assert "would rewrite 0 references" in fixed.stdout, fixed.stdout
    added = quote.replace("  float sum", "  // see lib/missing.cu:1-3\n  float sum")
    kb.page("a.md", f"`rmsnorm_kernel` (lib/rmsnorm.cu:3-8):\n\n```cuda\n{added}```\n")
    assert "file-missing" in [f.check for f in findings(kb)]


@pytest.mark.parametrize(
    ("caption", "block"),
    [
        (
            "It fails:",
            'lib/kernel.cu(17): error: identifier "warp_reduce_sum" is undefined\n'
            '1 error detected in the compilation of "lib/kernel.cu".',
        ),
        (
            "g++ says:",
            "lib/kernel.cu:17:16: error: 'warp_reduce_sum' was not declared in this scope\n"
            "   17 |   float mean = warp_reduce_sum(sum) / cols;\n"
            "      |                ^~~~~~~~~~~~~~~",
        ),
        ("Then:", "make: *** [Makefile:12: all] Error 2\nmake: Leaving directory '/src'"),
        (
            "The change:",
            "diff --git a/lib/kernel.cu b/lib/kernel.cu\n--- a/lib/kernel.cu\n+++ b/lib/kernel.cu\n"
            "@@ -17,1 +17,1 @@\n-  float mean = warp_reduce_sum(sum) / cols;\n"
            "+  float mean = block_reduce_sum(sum) / cols;",
        ),
        ("Run:", "alice@node0:~/megatron$ nvcc -O3 lib/kernel.cu\nlib/kernel.cu: ok"),
        ("Run:", "(megatron) $ nvcc -O3 lib/kernel.cu\nlib/kernel.cu: ok"),
        ("Run:", "root@node0:~# nvcc -O3 lib/kernel.cu\nlib/kernel.cu: ok"),
        ("Debug:", "(cuda-gdb) run\nCUDA Exception: Warp Illegal Address\n(cuda-gdb) bt"),
        (
            "Sanitize:",
            "========= COMPUTE-SANITIZER\n"
            "========= Invalid __global__ read of size 4 bytes\n"
            "=========     at layernorm_forward_kernel+0x2d0 in lib/kernel.cu:15",
        ),
        ("Profile:", "==PROF== Connected to process 4242\n==PROF== Profiling kernel: 100%"),
    ],
)
def test_what_a_compiler_a_diff_or_a_prompt_shows_is_no_quote(
    kb: KB, caption: str, block: str
) -> None:
    """Compiler errors, make's output, a diff and a session at a prompt with the user and
    host in it, in a block without a language after a right reference, were quotes of the
    cited code, and errors (`quote-not-found`)."""
    _upstream_with(kb, {"lib/kernel.cu": KERNEL})
    kb.page("a.md", f"The mean (lib/kernel.cu:17).\n\n{caption}\n\n```\n{block}\n```\n")
    assert findings(kb) == [], [f.message for f in findings(kb)]


CMAKE = (
    "cmake_minimum_required(VERSION 3.24)\n"  # 1
    "project(kernels LANGUAGES CXX CUDA)\n"  # 2
    "\n"  # 3
    "add_library(kernels SHARED\n"  # 4
    "  csrc/layernorm.cu\n"  # 5
    "  csrc/rmsnorm.cu)\n"  # 6
    "target_compile_options(kernels PRIVATE -lineinfo)\n"  # 7
    'set_target_properties(kernels PROPERTIES CUDA_ARCHITECTURES "80 90")\n'  # 8
)
HEADER = (
    "#pragma once\n"  # 1
    "#include <cuda_fp16.h>\n"  # 2
    "\n"  # 3
    "#define WARP_SIZE 32\n"  # 4
    "#define BLOCK_SIZE 512\n"  # 5
    "#define ILP 4\n"  # 6
)
LAUNCH = (
    "#!/bin/bash\n"  # 1
    "#SBATCH --nodes=4\n"  # 2
    "#SBATCH --time=24:00:00\n"  # 3
    "\n"  # 4
    "if [ $# -lt 2 ]; then\n"  # 5
    '  echo "usage: $0 DATA CKPT"; exit 1\n'  # 6
    "fi\n"  # 7
    'name="${1##*/}"  # the data set, without its directory\n'  # 8
)
DESIGN = (
    "# Kernels\n\n## LayerNorm\n\nOne block per row; a warp reduces the sums.\n"
    "The mean and the variance are computed in one pass (Welford).\n"
)


@pytest.mark.parametrize(
    ("cited", "fence", "quote", "differs"),
    [
        # CMake in a `cmake` fence: compared (it was never read).
        ("CMakeLists.txt:7-8", "cmake", CMAKE.splitlines()[6:8], None),
        (
            "CMakeLists.txt:7-8",
            "cmake",
            ["target_compile_options(kernels PUBLIC -G)", CMAKE.splitlines()[7]],
            "target_compile_options(kernels PUBLIC -G)",
        ),
        # Preprocessor lines are C's code, not comments.
        ("lib/tensor_utils.h:4-6", "cpp", HEADER.splitlines()[3:6], None),
        (
            "lib/tensor_utils.h:4-6",
            "cpp",
            ["#define WARP_SIZE 64", "#define BLOCK_SIZE 512", "#define ILP 4"],
            "#define WARP_SIZE 64",
        ),
        # A batch directive is code; shell's `$#` and `${1##*/}` are no comments.
        (
            "lib/launch.sh:2-3",
            "bash",
            ["#SBATCH --nodes=8", "#SBATCH --time=24:00:00"],
            "#SBATCH --nodes=8",
        ),
        ("lib/launch.sh:5-8", "sh", LAUNCH.splitlines()[4:8], None),
        (
            "lib/launch.sh:5-8",
            "sh",
            ["if [ $# -lt 3 ]; then", *LAUNCH.splitlines()[5:8]],
            "if [ $# -lt 3 ]; then",
        ),
        # A Markdown heading is text, not a comment.
        ("lib/design.md:3-6", "markdown", DESIGN.splitlines()[2:6], None),
        (
            "lib/design.md:3-6",
            "markdown",
            ["## RMSNorm", "", *DESIGN.splitlines()[4:6]],
            "## RMSNorm",
        ),
    ],
)
def test_quotes_of_build_files_headers_scripts_and_docs_are_read_as_their_language(
    kb: KB, cited: str, fence: str, quote: list[str], differs: str | None
) -> None:
    """A `cmake` block quoting `CMakeLists.txt` was never compared (its name, not its
    extension, says its language); `#define`, `#SBATCH`, `$#` and a Markdown heading were read
    as comments, so a changed constant, node count, test or heading passed."""
    repo = kb.new_upstream("lib")
    pin = repo.commit(
        {
            "CMakeLists.txt": CMAKE,
            "lib/tensor_utils.h": HEADER,
            "lib/launch.sh": LAUNCH,
            "lib/design.md": DESIGN,
        },
        "files",
    )
    kb.add_upstream("lib", repo, pin, prefixes=["lib/", "CMakeLists.txt"])
    body = "\n".join(quote)
    kb.page("a.md", f"The part ({cited}):\n\n```{fence}\n{body}\n```\n")
    _assert_differs(findings(kb), f"`{differs}` is not there" if differs else None)


SCALER = (
    "__device__ void update_scale(float* scale, int* growth, bool overflow) {\n"  # 1
    "  /*\n"  # 2
    "   * Halve the scale on overflow; double it after 2000 steps without one.\n"  # 3
    "   * The growth counter restarts either way.\n"  # 4
    "   */\n"  # 5
    "  if (overflow) {\n"  # 6
    "    *scale *= 0.5f;\n"  # 7
    "    *growth = 0;\n"  # 8
    "  } else if (++*growth == 2000) {\n"  # 9
    "    *scale *= 2.0f;\n"  # 10
    "    *growth = 0;\n"  # 11
    "  }\n"  # 12
    "}\n"  # 13
)
RAY = (
    "#!/bin/bash\n"  # 1
    "ray start --head --port=6379 --num-gpus=8 --dashboard-host=0.0.0.0\n"  # 2
    "python train.py \\\n"  # 3
    "  --tensor-model-parallel-size 2 \\\n"  # 4
    "  --pipeline-model-parallel-size 4\n"  # 5
)


@pytest.mark.parametrize(
    ("cited", "quote"),
    [
        # `/* ... */` elides, and a block comment the quote leaves out is no gap.
        (
            "lib/scaler.cu:1-13",
            SCALER.splitlines()[0] + "\n  /* ... */\n" + "\n".join(SCALER.splitlines()[5:13]),
        ),
        ("lib/scaler.cu:1-13", SCALER.splitlines()[0] + "\n" + "\n".join(SCALER.splitlines()[5:])),
        # A command split with `\`, or one joined from lines ending with it.
        (
            "lib/run.sh:2-5",
            "ray start --head \\\n  --port=6379 \\\n  --num-gpus=8 \\\n"
            "  --dashboard-host=0.0.0.0\n" + "\n".join(RAY.splitlines()[2:5]),
        ),
        (
            "lib/run.sh:2-5",
            RAY.splitlines()[1] + "\npython train.py --tensor-model-parallel-size 2 "
            "--pipeline-model-parallel-size 4",
        ),
    ],
)
def test_block_comments_and_line_continuations_are_abridged_as_authors_do(
    kb: KB, cited: str, quote: str
) -> None:
    _upstream_with(kb, {"lib/scaler.cu": SCALER, "lib/run.sh": RAY})
    kb.page("a.md", f"The code ({cited}):\n\n```\n{quote}\n```\n")
    assert findings(kb) == [], [f.message for f in findings(kb)]


def test_a_command_joined_from_its_continued_lines_with_a_value_changed_differs(kb: KB) -> None:
    """Joined from lines ending with `\\`, a command with `4` for `2` was "nowhere", an error,
    as if the page quoted other code."""
    _upstream_with(kb, {"lib/run.sh": RAY})
    joined = "python train.py --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4"
    kb.page("a.md", f"The code (lib/run.sh:2-5):\n\n```\n{RAY.splitlines()[1]}\n{joined}\n```\n")
    (finding,) = findings(kb)
    assert finding.check == "quote-differs", finding.message
    assert "`python train.py --tensor-model-parallel-size 4" in finding.message


@pytest.mark.parametrize(
    "line",
    [
        "`layernorm_forward_kernel` 的均值（lib/kernel.cu 第 13-17 行），会漏掉列。建议改为：",
        "The mean pass (lib/kernel.cu:13-17) skips the last column; fix:",
        "The mean pass (lib/kernel.cu:13-17) should be:",
    ],
)
def test_a_block_the_reference_s_own_line_proposes_is_no_quote(kb: KB, line: str) -> None:
    """A proposal said on the reference's own line (建议改为：) was read as a quote of the
    cited code, which it changes on purpose: a warning on a right reference."""
    _upstream_with(kb, {"lib/kernel.cu": KERNEL})
    proposed = "".join(KERNEL.splitlines(keepends=True)[12:17]).replace("< cols", "<= cols")
    kb.page("a.md", f"{line}\n\n```cuda\n{proposed}```\n")
    assert findings(kb) == [], [f.message for f in findings(kb)]


@pytest.mark.parametrize(
    "command",
    [
        "bash lib/run.sh /data/ckpt",
        "CUDA_VISIBLE_DEVICES=0,1 bash run.sh /data/ckpt",
        "sbatch lib/run.sh",
    ],
)
def test_a_command_that_runs_the_cited_script_is_no_quote_of_it(kb: KB, command: str) -> None:
    """How to run the script whose lines a page cites, in a block after them, was quoted code
    found nowhere: an error."""
    _upstream_with(kb, {"lib/run.sh": RAY})
    block = (
        f"export CUDA_DEVICE_MAX_CONNECTIONS=1\n{command} --tensor-model-parallel-size 2\n"
        "tail -f logs/pretrain_gpt_tp2_pp4.log\n"
    )
    kb.page("a.md", f"The launch (lib/run.sh:2-5) runs as:\n\n```bash\n{block}```\n")
    assert findings(kb) == [], [f.message for f in findings(kb)]


def test_a_build_file_is_quoted_in_its_tool_s_language_or_its_extension_s(kb: KB) -> None:
    """`CMakeLists.txt` is CMake: a `cmake` block quotes it. A `txt` block, as its name
    ends, still does: it was compared before, and a changed line still told."""
    repo = kb.new_upstream("lib")
    pin = repo.commit({"CMakeLists.txt": CMAKE}, "cmake")
    kb.add_upstream("lib", repo, pin, prefixes=["CMakeLists.txt"])
    changed = ["target_compile_options(kernels PUBLIC -G)", CMAKE.splitlines()[7]]
    for fence in ("cmake", "txt", ""):
        body = "\n".join(changed)
        kb.page("a.md", f"The options (CMakeLists.txt:7-8):\n\n```{fence}\n{body}\n```\n")
        _assert_differs(findings(kb), "`target_compile_options(kernels PUBLIC -G)` is not there")


@pytest.mark.parametrize(
    "block",
    [
        'lib/kernel.cu(17): error: identifier "warp_reduce_sum" is undefined\n'
        "    float mean = warp_reduce_sum(sum) / cols;\n"
        "                 ^\n\n"
        '1 error detected in the compilation of "lib/kernel.cu".',
        "lib/kernel.cu: In function 'void layernorm_forward_kernel(const T*, T*, int)':\n"
        "lib/kernel.cu:17:16: error: 'warp_reduce_sum' was not declared in this scope\n"
        "   17 |   float mean = warp_reduce_sum(sum) / cols;\n"
        "      |                ^~~~~~~~~~~~~~~",
    ],
)
def test_a_compiler_s_message_with_its_excerpt_is_no_quote(kb: KB, block: str) -> None:
    _upstream_with(kb, {"lib/kernel.cu": KERNEL})
    kb.page("a.md", f"The mean (lib/kernel.cu:17) fails:\n\n```cuda\n{block}\n```\n")
    assert findings(kb) == [], [f.message for f in findings(kb)]


@pytest.mark.parametrize(
    ("joined", "differs"),
    [
        ("python train.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4", False),
        ("python train.py --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4", True),
    ],
)
def test_a_one_line_command_joined_from_continued_lines_is_read_against_them(
    kb: KB, joined: str, differs: bool
) -> None:
    """A command quoted on one line, joined from lines the script continues with `\\`, was
    compared with each line alone: like none, it passed even with a value changed."""
    _upstream_with(kb, {"lib/run.sh": RAY})
    kb.page("a.md", f"The training (lib/run.sh:3-5):\n\n```bash\n{joined}\n```\n")
    found = findings(kb)
    if not differs:
        assert found == [], [f.message for f in found]
    else:
        (finding,) = found
        assert finding.check == "quote-differs", finding.message
        assert "(closest: lines 3-5 `python train.py" in finding.message, finding.message

"""The quote matcher: where quoted code sits in a file, as authors really quote it."""

from __future__ import annotations

from generator.refs.quote import (
    ELSEWHERE,
    IN_RANGE,
    NOWHERE,
    UNDECIDED,
    FileIndex,
    comment_markers,
    judge,
    prepare,
)

FILE = [
    "import torch",
    "",
    "",
    "class Actor:",
    "    def __init__(self, model):",
    "        self.model = model",
    "        # keep a handle on the optimizer",
    "        self.optimizer = None",
    "",
    "    def sleep(self, tags=None):",
    '        """Offload the weights.',
    "",
    "        Everything moves to the CPU.",
    '        """',
    "        if tags is None:",
    '            tags = ["weights"]',
    "        for tag in tags:",
    "            self.model.offload(tag, non_blocking=True)",
    "        torch.cuda.empty_cache()",
    "        return True",
    "",
    "    def wake_up(self):",
    "        handle = self.model.reload(",
    "            device=self.device,",
    "            non_blocking=True,",
    "        )",
    "        return handle",
    "",
][:-1]

SLEEP = (10, 20)  # def sleep ... return True


def verdict(quote: str, start: int, end: int, lines: list[str] = FILE):  # type: ignore[no-untyped-def]
    prepared = prepare(quote.split("\n"), "python")
    assert prepared is not None
    return judge(prepared, FileIndex(lines, comment_markers("py")), start, end)


def test_a_verbatim_quote_inside_the_range_holds() -> None:
    quote = "\n".join(FILE[9:20])
    assert verdict(quote, *SLEEP).outcome == IN_RANGE


def test_reindented_quote_without_docstring_and_blank_lines_holds() -> None:
    quote = """def sleep(self, tags=None):
    if tags is None:
        tags = ["weights"]

    for tag in tags:
        self.model.offload(tag, non_blocking=True)
    torch.cuda.empty_cache()"""
    assert verdict(quote, *SLEEP).outcome == IN_RANGE


def test_elisions_and_comments_of_the_author_are_allowed() -> None:
    quote = """def sleep(self, tags=None):
    # 先把参数卸载到 CPU
    if tags is None:  # 默认
        ...
    for tag in tags:
        # ...
    torch.cuda.empty_cache()
    return True  # done"""
    assert verdict(quote, *SLEEP).outcome == IN_RANGE


def test_a_reflowed_call_still_matches() -> None:
    quote = """handle = self.model.reload(device=self.device, non_blocking=True)
return handle"""
    assert verdict(quote, 23, 27).outcome == IN_RANGE


def test_a_shifted_range_is_reported_with_where_the_quote_is() -> None:
    quote = "\n".join(FILE[9:20])
    found = verdict(quote, 13, 23)
    assert found.outcome == ELSEWHERE and found.strong
    assert [(p.first, p.last) for p in found.places] == [SLEEP]


def test_a_quote_of_the_neighbouring_function_is_elsewhere() -> None:
    quote = """def wake_up(self):
    handle = self.model.reload(
        device=self.device,
        non_blocking=True,
    )
    return handle"""
    found = verdict(quote, *SLEEP)
    assert found.outcome == ELSEWHERE and found.places[0].first == 22


def test_code_that_is_not_in_the_file_is_nowhere() -> None:
    quote = """def sleep(self, tags=None):
    self.model.to("cpu", memory_format=torch.channels_last)
    gc.collect_everything_now(generation=2)
    torch.cuda.synchronize(device=self.device)"""
    assert verdict(quote, *SLEEP).outcome == NOWHERE


def test_order_must_hold() -> None:
    quote = """torch.cuda.empty_cache()
for tag in tags:
    self.model.offload(tag, non_blocking=True)
if tags is None:
    tags = ["weights"]"""
    assert verdict(quote, *SLEEP).outcome != IN_RANGE


def test_a_short_generic_quote_is_weak() -> None:
    found = verdict("return True", 1, 3)
    assert found.outcome == ELSEWHERE and not found.strong


def test_a_single_cited_line_holds_the_quote_that_starts_there() -> None:
    quote = "\n".join(FILE[9:20])
    assert verdict(quote, 10, 10).outcome == IN_RANGE
    assert verdict(quote, 3, 3).outcome == ELSEWHERE


def test_a_trailing_comment_just_past_the_range_puts_the_quote_outside_it() -> None:
    quote = """self.model = model
# keep a handle on the optimizer"""
    assert verdict(quote, 6, 6).outcome == IN_RANGE
    assert verdict(quote, 5, 6).outcome == ELSEWHERE


def test_a_loose_likeness_elsewhere_is_undecided() -> None:
    quote = """def wake_up(self):
    state = self.model.reload_state(strict=False, device=self.device)
    handle = self.model.reload(
        device=self.device,
        non_blocking=True,
    )
    self.model.train(mode=True, recurse=False)
    self.step_counter_value = self.step_counter_value + 1
    return handle"""
    assert verdict(quote, *SLEEP).outcome == UNDECIDED


def test_a_quote_ending_in_a_filler_is_placed_where_it_ends_not_at_the_next_one() -> None:
    """`return True` closes the quote and the next function too: the place ran on to the next
    function's, and --fix would have cited both functions."""
    lines = [
        "class Actor:",
        "    def sleep(self):",
        "        self.model.offload()",
        "        torch.cuda.empty_cache()",
        "        return True",
        "",
        "    def wake_up(self):",
        "        self.model.reload()",
        "        return True",
    ]
    quote = (
        "def sleep(self):\n    self.model.offload()\n    torch.cuda.empty_cache()\n    return True"
    )
    found = verdict(quote, 7, 9, lines)
    assert found.outcome == ELSEWHERE
    assert [(place.first, place.last) for place in found.places] == [(2, 5)]

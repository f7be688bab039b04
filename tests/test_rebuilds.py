"""`RebuildMemo`: what a `mkdocs serve` rebuild takes from the build before it."""

from __future__ import annotations

from collections.abc import Callable

from generator.site.rebuilds import RebuildMemo


def counting() -> tuple[list[str], Callable[[str], Callable[[], str]]]:
    """The labels of what was made, in order, and a maker of ``make`` functions that log them."""
    made: list[str] = []

    def make(label: str) -> Callable[[], str]:
        def made_now() -> str:
            made.append(label)
            return f"{label} #{len(made)}"

        return made_now

    return made, make


def test_a_rebuild_takes_the_result_made_from_equal_inputs_and_makes_it_again_otherwise():
    made, make = counting()
    memo = RebuildMemo(keep=True)
    memo.next_build()
    first = memo.get("plan", "a.md", ("text", 1), make("a"))
    memo.next_build()
    assert memo.get("plan", "a.md", ("text", 1), make("a")) == first
    assert memo.get("plan", "a.md", ("edited", 1), make("a")) != first
    assert made == ["a", "a"]


def test_only_what_the_last_build_used_is_kept():
    """A page deleted (or renamed) during a long session is not held for ever."""
    made, make = counting()
    memo = RebuildMemo(keep=True)
    memo.next_build()
    memo.get("page", "gone.md", ("bytes",), make("gone"))
    memo.get("page", "kept.md", ("bytes",), make("kept"))
    memo.next_build()
    memo.get("page", "kept.md", ("bytes",), make("kept"))  # gone.md is no longer a page
    memo.next_build()
    memo.get("page", "kept.md", ("bytes",), make("kept"))
    memo.get("page", "gone.md", ("bytes",), make("gone"))  # back: made again
    assert made == ["gone", "kept", "gone"]


def test_a_one_off_build_keeps_nothing():
    made, make = counting()
    memo = RebuildMemo(keep=False)
    memo.next_build()
    memo.get("plan", "a.md", ("text",), make("a"))
    memo.get("plan", "a.md", ("text",), make("a"))
    assert made == ["a", "a"]

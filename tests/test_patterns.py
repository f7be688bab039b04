"""Patterns compiled on first use (`generator.patterns`)."""

from __future__ import annotations

import re
import types

from generator.patterns import lazy_pattern


def _module(source: str) -> types.ModuleType:
    module = types.ModuleType("lazily")
    exec(source, module.__dict__)
    return module


def test_a_lazy_pattern_matches_as_the_compiled_one_and_then_takes_its_place() -> None:
    module = _module(
        "import re\n"
        "from generator.patterns import lazy_pattern\n"
        "WORDS = lazy_pattern(r'(?<!x)\\b(?P<word>l\\w+)', re.IGNORECASE)\n"
        "BYTES = lazy_pattern(rb'(\\d+) ([^\\x00]*)\\x00')\n"
        "def words(text):\n"
        "    return [m.group('word') for m in WORDS.finditer(text)]\n"
    )
    assert not isinstance(module.WORDS, re.Pattern), "nothing compiled at import"
    text = "Lines 3-4 and line 9, xline not"
    assert module.words(text) == ["Lines", "line"]
    assert isinstance(module.WORDS, re.Pattern), "the compiled pattern took its place"
    assert module.WORDS.flags & re.IGNORECASE
    assert module.BYTES.findall(b"100644 a.py\x00") == [(b"100644", b"a.py")]
    assert isinstance(module.BYTES, re.Pattern)


def test_a_lazy_pattern_held_elsewhere_still_works() -> None:
    """A reference taken before the first use (a local, a table of patterns) keeps answering."""
    pattern = lazy_pattern(r"(\w+)\.py:(\d+)")
    held = [pattern]
    assert held[0].search("see a.py:12").groups() == ("a", "12")
    assert held[0].pattern == r"(\w+)\.py:(\d+)"
    assert held[0].sub("X", "b.py:3 and c.py:4") == "X and X"

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


def test_a_copy_of_a_lazy_pattern_unused_yet_still_works() -> None:
    """`copy` makes the object without its slots: asking for one must not loop forever."""
    import copy

    pattern = lazy_pattern(r"\d+")
    assert copy.copy(pattern).findall("a1b22") == ["1", "22"]


def test_every_lazy_pattern_of_the_package_compiles() -> None:
    """A pattern compiles when first used, perhaps deep in a run or in a forked process: each
    one of the package's is compiled here, so that a mistake in one fails a test, not a run."""
    import importlib
    import pkgutil

    import generator
    from generator.patterns import _LazyPattern

    patterns = 0
    for info in pkgutil.walk_packages(generator.__path__, "generator."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in list(vars(module).items()):
            if isinstance(value, _LazyPattern):
                assert isinstance(value.pattern, (str, bytes)), f"{info.name}.{name}"
            if isinstance(vars(module)[name], re.Pattern):
                patterns += 1
            assert not isinstance(vars(module)[name], _LazyPattern), f"{info.name}.{name}"
    assert patterns >= 100, "the package's patterns, compiled now or by earlier tests"

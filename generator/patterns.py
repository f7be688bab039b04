"""Regular expressions compiled when first used.

Python compiles a regular expression with a compiler written in Python. The verifier's modules
hold over a hundred patterns, and compiling them all at import took 11 ms of every run, three
quarters of it for patterns the run never used (Chinese phrases, tables, diagrams, footnotes, on
pages without them): an eighth of a pre-commit hook's run over one page.
"""

from __future__ import annotations

import re
import sys
from typing import Any, AnyStr, cast


def lazy_pattern(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, compiled when first used. For a module's top level:
    the first use puts the compiled pattern in the lazy one's place in the module, so that later
    uses go straight to it."""
    namespace = sys._getframe(1).f_globals
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, flags, namespace))


class _LazyPattern:
    __slots__ = ("_compiled", "_flags", "_namespace", "_pattern")

    def __init__(self, pattern: str | bytes, flags: int, namespace: dict[str, Any]) -> None:
        self._pattern = pattern
        self._flags = flags
        self._namespace = namespace
        self._compiled: re.Pattern[Any] | None = None

    def __getattr__(self, name: str) -> Any:
        # A slot not set yet (in a copy) or a private name is not the pattern's to give.
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
            for key, value in list(self._namespace.items()):
                if value is self:
                    self._namespace[key] = compiled
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self._pattern!r}, {self._flags})"

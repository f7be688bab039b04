"""Wall-clock timers for coarse profiling of training steps."""

from __future__ import annotations

import time
from collections import defaultdict
from types import TracebackType
from typing import Optional

# Accumulated seconds per timer name, summed over the whole run.
_TOTALS: dict[str, float] = defaultdict(float)


class Timer:
    """Context manager that measures the wall-clock time of a block.

    The elapsed time is available as :attr:`elapsed` after the block exits
    and is also added to a process-wide total (see :func:`timing_summary`).
    """

    def __init__(self, name: str, sync_cuda: bool = False) -> None:
        self.name = name
        self.sync_cuda = sync_cuda
        self.start: Optional[float] = None
        self.elapsed: float = 0.0

    def _sync(self) -> None:
        if self.sync_cuda:
            import torch

            if torch.cuda.is_available():
                torch.cuda.synchronize()

    def __enter__(self) -> "Timer":
        self._sync()
        self.start = time.perf_counter()
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self._sync()
        assert self.start is not None, "Timer exited without being entered"
        self.elapsed = time.perf_counter() - self.start
        _TOTALS[self.name] += self.elapsed


def timing_summary() -> dict[str, float]:
    """Return a copy of the accumulated time per timer name, in seconds."""
    return dict(_TOTALS)


def reset_timings() -> None:
    """Clear all accumulated timings."""
    _TOTALS.clear()

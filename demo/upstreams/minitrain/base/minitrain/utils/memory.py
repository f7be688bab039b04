"""GPU memory helpers."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field

import torch


def clear_memory() -> None:
    """Free cached GPU memory held by the PyTorch allocator.

    Runs the Python garbage collector first so that tensors only kept alive
    by reference cycles are released before the cache is emptied.
    """
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


@dataclass
class MemoryTracker:
    """Record allocated GPU memory at named points of a training step.

    Example::

        tracker = MemoryTracker()
        tracker.record("before_forward")
        ...
        print(tracker.summary())
    """

    device: int = 0
    records: dict[str, float] = field(default_factory=dict)

    def record(self, tag: str) -> float:
        """Store the currently allocated memory (in GiB) under ``tag``."""
        if torch.cuda.is_available():
            allocated = torch.cuda.memory_allocated(self.device) / 2**30
        else:
            allocated = 0.0
        self.records[tag] = allocated
        return allocated

    def peak(self) -> float:
        """Return the peak allocated memory in GiB since the last reset."""
        if not torch.cuda.is_available():
            return 0.0
        return torch.cuda.max_memory_allocated(self.device) / 2**30

    def reset(self) -> None:
        """Forget all records and reset the allocator's peak statistics."""
        self.records.clear()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats(self.device)

    def summary(self) -> str:
        """Return a one-line, human-readable summary of all records."""
        parts = [f"{tag}={gib:.2f}GiB" for tag, gib in self.records.items()]
        parts.append(f"peak={self.peak():.2f}GiB")
        return ", ".join(parts)

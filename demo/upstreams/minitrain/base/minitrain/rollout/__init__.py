"""Rollout data structures."""

from minitrain.rollout.buffer import RolloutBuffer, Sample

__all__ = ["RolloutBuffer", "Sample"]

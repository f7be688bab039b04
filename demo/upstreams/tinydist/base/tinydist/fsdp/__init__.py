"""Fully sharded data parallelism building blocks."""

from tinydist.fsdp.shard import ShardedParam, shard_tensor

__all__ = ["ShardedParam", "shard_tensor"]

"""Megatron-LM backend."""

from minitrain.backends.megatron.actor import MegatronActor

__all__ = ["MegatronActor"]

"""FSDP2 backend."""

from minitrain.backends.fsdp.actor import FSDPActor

__all__ = ["FSDPActor"]

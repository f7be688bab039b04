"""Training backends.

Each backend provides an actor class with the same public surface:
``init_model``, ``train_step`` and ``save_checkpoint``.
"""

from typing import Any


def get_actor_cls(backend: str) -> Any:
    """Return the actor class for ``backend`` ("fsdp" or "megatron")."""
    if backend == "fsdp":
        from minitrain.backends.fsdp import FSDPActor

        return FSDPActor
    if backend == "megatron":
        from minitrain.backends.megatron import MegatronActor

        return MegatronActor
    raise ValueError(f"unknown backend: {backend!r}")

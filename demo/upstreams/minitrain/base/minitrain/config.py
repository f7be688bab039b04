"""Training configuration for minitrain.

A single :class:`TrainConfig` instance is built by the launcher and passed to
every actor. It is a plain dataclass so it can be pickled and broadcast to all
ranks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, Optional


@dataclass
class TrainConfig:
    """All knobs that control a training run.

    Attributes:
        model_path: Hugging Face model id or local checkpoint directory.
        backend: Which training backend to use.
        micro_batch_size: Number of samples per forward/backward pass when
            dynamic batching is disabled.
        global_batch_size: Number of samples consumed per optimizer step.
        max_tokens_per_gpu: Token budget per packed micro-batch. When set,
            dynamic batching packs samples up to this many tokens.
        lr: Peak learning rate.
        grad_clip: Maximum global gradient norm; ``0`` disables clipping.
        offload_optimizer: Keep optimizer state on the CPU while the actor
            sleeps, so the rollout engine can use the GPU memory.
    """

    model_path: str = ""
    backend: Literal["fsdp", "megatron"] = "fsdp"
    micro_batch_size: int = 1
    global_batch_size: int = 64
    max_tokens_per_gpu: Optional[int] = None
    lr: float = 1e-6
    weight_decay: float = 0.0
    adam_betas: tuple[float, float] = (0.9, 0.98)
    grad_clip: float = 1.0
    offload_optimizer: bool = False
    gradient_checkpointing: bool = True
    seed: int = 1234
    save_dir: Optional[str] = None
    save_interval: int = 0

    def __post_init__(self) -> None:
        if self.micro_batch_size <= 0:
            raise ValueError("micro_batch_size must be positive")
        if self.global_batch_size % self.micro_batch_size != 0:
            raise ValueError(
                "global_batch_size must be a multiple of micro_batch_size"
            )
        if self.max_tokens_per_gpu is not None and self.max_tokens_per_gpu <= 0:
            raise ValueError("max_tokens_per_gpu must be positive when set")

    @property
    def use_dynamic_batch_size(self) -> bool:
        """Whether micro-batches are packed by token count."""
        return self.max_tokens_per_gpu is not None

    def grad_accum_steps(self, data_parallel_size: int) -> int:
        """Number of micro-batches accumulated before an optimizer step."""
        per_rank = self.global_batch_size // data_parallel_size
        return max(1, per_rank // self.micro_batch_size)

    def to_dict(self) -> dict[str, Any]:
        """Return the configuration as a JSON-serialisable dictionary."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        """Build a config from a dictionary, ignoring unknown keys."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})

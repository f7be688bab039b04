"""Megatron-LM training actor.

A thin wrapper around Megatron-Core that exposes the same interface as
:class:`minitrain.backends.fsdp.actor.FSDPActor`. It does not support
sleeping; use the FSDP backend for colocated rollout.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import torch
from megatron.core import parallel_state as mpu
from megatron.core.pipeline_parallel import get_forward_backward_func

from minitrain.config import TrainConfig
from minitrain.rollout.buffer import RolloutBuffer


class MegatronActor:
    """Policy-training actor for the Megatron backend."""

    def __init__(
        self,
        config: TrainConfig,
        tensor_parallel_size: int = 1,
        pipeline_parallel_size: int = 1,
    ) -> None:
        self.config = config
        self.tp_size = tensor_parallel_size
        self.pp_size = pipeline_parallel_size
        self.model: Optional[list[torch.nn.Module]] = None
        self.optimizer: Any = None
        self.global_step = 0

    def init_model(self, model_provider: Any) -> None:
        """Initialise model-parallel groups and build the model chunks."""
        mpu.initialize_model_parallel(
            tensor_model_parallel_size=self.tp_size,
            pipeline_model_parallel_size=self.pp_size,
        )
        self.model = [model_provider().cuda()]
        params = [p for chunk in self.model for p in chunk.parameters()]
        self.optimizer = torch.optim.AdamW(params, lr=self.config.lr)

    def train_step(self, buffer: RolloutBuffer) -> dict[str, float]:
        """Run one optimizer step through Megatron's pipeline schedule."""
        buffer.compute_advantages()
        batches = list(buffer.get_batches(self.config.micro_batch_size))
        forward_backward = get_forward_backward_func()
        self.optimizer.zero_grad()
        losses = forward_backward(
            forward_step_func=self._forward_step,
            data_iterator=iter(batches),
            model=self.model,
            num_microbatches=len(batches),
            seq_length=self.config.max_tokens_per_gpu or 4096,
            micro_batch_size=self.config.micro_batch_size,
        )
        self.optimizer.step()
        self.global_step += 1
        loss = sum(float(x["loss"]) for x in losses) / max(1, len(losses))
        return {"train/loss": loss}

    def _forward_step(self, data_iterator: Any, model: torch.nn.Module) -> Any:
        """Megatron forward-step callback: returns the output and a loss function."""
        batch = next(data_iterator)
        tokens = torch.tensor([s.tokens for s in batch], device="cuda")
        advantages = torch.tensor([s.advantage for s in batch], device="cuda")
        output = model(tokens, position_ids=None, attention_mask=None)

        def loss_func(logits: torch.Tensor) -> tuple[torch.Tensor, dict]:
            log_probs = torch.log_softmax(logits.float(), dim=-1).mean(dim=(1, 2))
            loss = -(advantages * log_probs).mean()
            return loss, {"loss": loss.detach()}

        return output, loss_func

    def save_checkpoint(self, step: int) -> str:
        """Save this rank's model chunks; every rank writes its own file."""
        if self.config.save_dir is None:
            raise ValueError("save_dir is not configured")
        path = os.path.join(self.config.save_dir, f"step_{step:06d}")
        os.makedirs(path, exist_ok=True)
        rank_file = f"mp_rank_{mpu.get_tensor_model_parallel_rank():02d}.pt"
        torch.save([chunk.state_dict() for chunk in self.model], os.path.join(path, rank_file))
        return path

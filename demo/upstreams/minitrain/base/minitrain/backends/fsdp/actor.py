"""FSDP training actor.

The actor keeps a full copy of the policy weights for the forward pass and
shards gradients and optimizer state across data-parallel ranks with
``tinydist`` (ZeRO-2 style). Between training steps it can be put to sleep so
that a colocated rollout engine can reuse the GPU memory.
"""

from __future__ import annotations

import os
from typing import Optional

import torch
from transformers import AutoModelForCausalLM

from minitrain.config import TrainConfig
from minitrain.data.packing import PackedBatch, balance_by_tokens, pack_samples, unpack_outputs
from minitrain.rollout.buffer import RolloutBuffer, Sample
from minitrain.utils.memory import MemoryTracker, clear_memory
from minitrain.utils.timer import Timer
from tinydist.collectives import broadcast_object
from tinydist.fsdp.shard import ShardedParam
from tinydist.mesh import DeviceMesh


class FSDPActor:
    """Policy-training actor for the FSDP backend.

    Typical lifecycle::

        actor = FSDPActor(config, rank, world_size)
        actor.init_model()
        for step in range(num_steps):
            actor.wake_up()
            metrics = actor.train_step(buffer)
            actor.sleep()  # hand the GPU to the rollout engine
    """

    def __init__(self, config: TrainConfig, rank: int, world_size: int) -> None:
        self.config = config
        self.rank = rank
        self.world_size = world_size
        self.device = torch.device("cuda", rank % max(1, torch.cuda.device_count()))
        self.model: Optional[torch.nn.Module] = None
        self.optimizer: Optional[torch.optim.Optimizer] = None
        self.mesh: Optional[DeviceMesh] = None
        self.sharded_params: list[ShardedParam] = []
        self.memory = MemoryTracker(device=self.device.index or 0)
        self.global_step = 0
        self._asleep = False

    def init_model(self) -> None:
        """Load the model, shard its trainable parameters and build the optimizer."""
        torch.manual_seed(self.config.seed)
        self.mesh = DeviceMesh.from_world(dim_names=("dp",))
        model = AutoModelForCausalLM.from_pretrained(
            self.config.model_path,
            torch_dtype=torch.bfloat16,
            attn_implementation="flash_attention_2",
        )
        if self.config.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        self.model = model.to(self.device)
        self.sharded_params = [
            ShardedParam(param, self.mesh, dim="dp")
            for param in self.model.parameters()
            if param.requires_grad
        ]
        self.optimizer = self._build_optimizer()
        self.memory.record("after_init")

    def _build_optimizer(self) -> torch.optim.Optimizer:
        """Create AdamW over the local parameter shards only."""
        return torch.optim.AdamW(
            [sp.local_shard for sp in self.sharded_params],
            lr=self.config.lr,
            betas=self.config.adam_betas,
            weight_decay=self.config.weight_decay,
        )

    def sleep(self) -> None:
        """Release GPU memory so the colocated rollout engine can use it.

        The full parameters are moved to the CPU; the sharded optimizer state
        stays on the GPU.
        """
        if self._asleep:
            return
        self.memory.record("before_sleep")
        self.model.to("cpu")
        clear_memory()
        self._asleep = True
        self.memory.record("after_sleep")

    def wake_up(self) -> None:
        """Move the parameters back to the GPU after :meth:`sleep`."""
        if not self._asleep:
            return
        self.model.to(self.device)
        self._asleep = False
        self.memory.record("after_wake_up")

    def _local_samples(self, buffer: RolloutBuffer) -> list[Sample]:
        """Pick this rank's share of the buffer, balanced by token count."""
        samples = next(buffer.get_batches(max(1, len(buffer)), shuffle=False), [])
        parts = balance_by_tokens([len(s) for s in samples], self.world_size)
        return [samples[i] for i in parts[self.rank]]

    def _make_micro_batches(self, samples: list[Sample]) -> list[PackedBatch]:
        """Pack samples by token budget, or by ``micro_batch_size`` if unset."""
        tokens = [s.tokens for s in samples]
        if self.config.use_dynamic_batch_size:
            return pack_samples(tokens, self.config.max_tokens_per_gpu, device=self.device)
        batches: list[PackedBatch] = []
        size = self.config.micro_batch_size
        for start in range(0, len(tokens), size):
            chunk = tokens[start : start + size]
            budget = sum(len(t) for t in chunk)
            for packed in pack_samples(chunk, budget, device=self.device):
                packed.sample_indices = [start + i for i in packed.sample_indices]
                batches.append(packed)
        return batches

    def train_step(self, buffer: RolloutBuffer) -> dict[str, float]:
        """Run one optimizer step on this rank's share of ``buffer``.

        Returns a dictionary of scalar metrics for logging.
        """
        if self._asleep:
            raise RuntimeError("call wake_up() before train_step()")
        self.model.train()
        buffer.compute_advantages()
        samples = self._local_samples(buffer)
        micro_batches = self._make_micro_batches(samples)
        with Timer("train_step", sync_cuda=True) as timer:
            self.optimizer.zero_grad(set_to_none=True)
            total_loss = 0.0
            for packed in micro_batches:
                total_loss += self._forward_backward(
                    packed, samples, loss_scale=1.0 / len(micro_batches)
                )
            for sp in self.sharded_params:
                sp.reduce_grad()
            self.optimizer.step()
            for sp in self.sharded_params:
                sp.gather_()
        self.global_step += 1
        if self.config.save_interval and self.global_step % self.config.save_interval == 0:
            self.save_checkpoint(self.global_step)
        return {
            "train/loss": total_loss,
            "train/step_time": timer.elapsed,
            "train/num_micro_batches": float(len(micro_batches)),
        }

    def _forward_backward(
        self, packed: PackedBatch, samples: list[Sample], loss_scale: float
    ) -> float:
        """Compute the policy-gradient loss of one packed micro-batch and backprop it.

        Returns the (scaled) loss value for logging.
        """
        lengths = (packed.cu_seqlens[1:] - packed.cu_seqlens[:-1]).tolist()
        position_ids = torch.cat([torch.arange(n, device=self.device) for n in lengths])
        logits = self.model(
            input_ids=packed.input_ids.unsqueeze(0),
            position_ids=position_ids.unsqueeze(0),
        ).logits.squeeze(0)
        log_probs = torch.log_softmax(logits[:-1].float(), dim=-1)
        token_log_probs = log_probs.gather(-1, packed.input_ids[1:].unsqueeze(-1)).squeeze(-1)
        # Pad so that position i holds log p(token i + 1); the last slot is unused.
        token_log_probs = torch.cat([token_log_probs, token_log_probs.new_zeros(1)])
        losses = []
        for index, sample_log_probs in zip(
            packed.sample_indices, unpack_outputs(token_log_probs, packed.cu_seqlens)
        ):
            sample = samples[index]
            response = sample_log_probs[len(sample.prompt_ids) - 1 : -1]
            losses.append(-(sample.advantage * response).mean())
        loss = torch.stack(losses).mean() * loss_scale
        loss.backward()
        return float(loss.item())

    def save_checkpoint(self, step: int) -> str:
        """Write the full model weights (rank 0 only) and return the directory."""
        if self.config.save_dir is None:
            raise ValueError("save_dir is not configured")
        path = os.path.join(self.config.save_dir, f"step_{step:06d}")
        if self.rank == 0:
            os.makedirs(path, exist_ok=True)
            state = {k: v.detach().cpu() for k, v in self.model.state_dict().items()}
            torch.save(state, os.path.join(path, "model.pt"))
            torch.save(self.config.to_dict(), os.path.join(path, "config.pt"))
        # Every rank returns the same path, as decided by rank 0.
        return broadcast_object(path, src=0)

"""Sequence packing for variable-length training samples.

Samples are concatenated into a single row ("packed") so that a micro-batch
contains no padding. The boundaries between samples are described by
``cu_seqlens``, the cumulative sequence lengths expected by flash-attention
varlen kernels.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Optional, Sequence

import torch


@dataclass
class PackedBatch:
    """One packed micro-batch.

    Attributes:
        input_ids: 1-D tensor with all samples concatenated.
        cu_seqlens: Cumulative sequence lengths, starting with ``0``.
        sample_indices: Position of each packed sample in the original list.
    """

    input_ids: torch.Tensor
    cu_seqlens: torch.Tensor
    sample_indices: list[int]

    @property
    def num_tokens(self) -> int:
        return int(self.input_ids.numel())


def compute_cu_seqlens(
    lengths: Sequence[int], device: Optional[torch.device] = None
) -> torch.Tensor:
    """Return cumulative sequence lengths for ``lengths``.

    For lengths ``[3, 2, 4]`` the result is ``[0, 3, 5, 9]``.
    """
    cu_seqlens = [0]
    for length in lengths[:-1]:
        cu_seqlens.append(cu_seqlens[-1] + length)
    return torch.tensor(cu_seqlens, dtype=torch.int32, device=device)


def balance_by_tokens(lengths: Sequence[int], num_partitions: int) -> list[list[int]]:
    """Split sample indices into ``num_partitions`` groups of similar size.

    Uses the greedy longest-processing-time heuristic: samples are visited
    from longest to shortest and each goes to the currently lightest group.
    Returns a list of index lists, each sorted ascending.
    """
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    heap = [(0, part) for part in range(num_partitions)]
    groups: list[list[int]] = [[] for _ in range(num_partitions)]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    for index in order:
        load, part = heapq.heappop(heap)
        groups[part].append(index)
        heapq.heappush(heap, (load + lengths[index], part))
    return [sorted(group) for group in groups]


def pack_samples(
    samples: Sequence[Sequence[int]],
    max_tokens_per_gpu: int,
    device: Optional[torch.device] = None,
) -> list[PackedBatch]:
    """Pack token-id lists into micro-batches of at most ``max_tokens_per_gpu``.

    Samples keep their relative order inside a batch. A sample longer than
    the budget gets a batch of its own rather than being truncated.
    """
    batches: list[PackedBatch] = []
    current: list[int] = []
    current_tokens = 0

    def flush() -> None:
        nonlocal current, current_tokens
        if not current:
            return
        lengths = [len(samples[i]) for i in current]
        flat = [tok for i in current for tok in samples[i]]
        batches.append(
            PackedBatch(
                input_ids=torch.tensor(flat, dtype=torch.long, device=device),
                cu_seqlens=compute_cu_seqlens(lengths, device=device),
                sample_indices=list(current),
            )
        )
        current, current_tokens = [], 0

    for index, sample in enumerate(samples):
        if current and current_tokens + len(sample) > max_tokens_per_gpu:
            flush()
        current.append(index)
        current_tokens += len(sample)
    flush()
    return batches


def unpack_outputs(
    packed_output: torch.Tensor, cu_seqlens: torch.Tensor
) -> list[torch.Tensor]:
    """Split a packed model output back into one tensor per sample.

    ``packed_output`` has the packed sequence as its first dimension (for
    example per-token log-probabilities of shape ``[total_tokens]``).
    """
    bounds = cu_seqlens.tolist()
    return [packed_output[start:end] for start, end in zip(bounds[:-1], bounds[1:])]

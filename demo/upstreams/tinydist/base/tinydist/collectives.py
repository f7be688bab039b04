"""Thin, typed wrappers around ``torch.distributed`` collectives.

Every function degrades gracefully to a local no-op when the default process
group has not been initialised, which keeps single-process unit tests simple.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.distributed as dist


def _is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized()


def all_gather_into(
    output: torch.Tensor,
    tensor: torch.Tensor,
    group: Optional[dist.ProcessGroup] = None,
) -> torch.Tensor:
    """Gather ``tensor`` from every rank into the flat buffer ``output``.

    ``output`` must hold ``world_size * tensor.numel()`` elements; rank ``r``'s
    data ends up at offset ``r * tensor.numel()``. Returns ``output``.
    """
    if not _is_distributed():
        output.view(-1)[: tensor.numel()].copy_(tensor.view(-1))
        return output
    world_size = dist.get_world_size(group)
    if output.numel() != world_size * tensor.numel():
        raise ValueError(
            f"output has {output.numel()} elements, expected {world_size * tensor.numel()}"
        )
    dist.all_gather_into_tensor(output.view(-1), tensor.contiguous().view(-1), group=group)
    return output


def reduce_scatter_mean(
    output: torch.Tensor,
    tensor: torch.Tensor,
    group: Optional[dist.ProcessGroup] = None,
) -> torch.Tensor:
    """Average ``tensor`` across ranks and keep this rank's slice in ``output``.

    ``tensor`` is split into ``world_size`` equal chunks along its flattened
    view; rank ``r`` receives the mean of chunk ``r`` over all ranks.
    """
    if not _is_distributed():
        output.view(-1).copy_(tensor.view(-1)[: output.numel()])
        return output
    world_size = dist.get_world_size(group)
    dist.reduce_scatter_tensor(
        output.view(-1), tensor.contiguous().view(-1), op=dist.ReduceOp.SUM, group=group
    )
    output.div_(world_size)
    return output


def broadcast_object(obj: Any, src: int = 0, group: Optional[dist.ProcessGroup] = None) -> Any:
    """Send a picklable object from rank ``src`` to all ranks and return it."""
    if not _is_distributed():
        return obj
    holder = [obj if dist.get_rank() == src else None]
    dist.broadcast_object_list(holder, src=src, group=group)
    return holder[0]

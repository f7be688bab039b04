"""Flat parameter sharding across a mesh axis."""

from __future__ import annotations

import math

import torch

from tinydist.collectives import all_gather_into, reduce_scatter_mean
from tinydist.mesh import DeviceMesh


def shard_tensor(tensor: torch.Tensor, rank: int, world_size: int) -> torch.Tensor:
    """Return rank ``rank``'s flat shard of ``tensor``.

    The tensor is flattened and zero-padded so that it splits into
    ``world_size`` shards of equal length; the returned shard is a copy.
    """
    flat = tensor.detach().reshape(-1)
    shard_numel = math.ceil(flat.numel() / world_size)
    padded = flat.new_zeros(shard_numel * world_size)
    padded[: flat.numel()] = flat
    return padded[rank * shard_numel : (rank + 1) * shard_numel].clone()


class ShardedParam:
    """Pair a full parameter with this rank's trainable shard of it.

    The optimizer updates :attr:`local_shard`; :meth:`reduce_grad` moves the
    full gradient onto the shard and :meth:`gather_` writes the updated shards
    back into the full parameter.
    """

    def __init__(self, param: torch.nn.Parameter, mesh: DeviceMesh, dim: str = "dp") -> None:
        self.param = param
        self.mesh = mesh
        self.dim = dim
        self.world_size = mesh.size(dim)
        shard = shard_tensor(param.data, mesh.local_rank(dim), self.world_size)
        self.local_shard = torch.nn.Parameter(shard.float())

    @property
    def padded_numel(self) -> int:
        return self.local_shard.numel() * self.world_size

    def reduce_grad(self) -> None:
        """Average the full gradient across ranks into ``local_shard.grad``."""
        if self.param.grad is None:
            return
        padded = self.param.grad.new_zeros(self.padded_numel)
        padded[: self.param.numel()] = self.param.grad.reshape(-1)
        grad = torch.empty_like(self.local_shard, dtype=padded.dtype)
        reduce_scatter_mean(grad, padded, group=self.mesh.get_group(self.dim))
        self.local_shard.grad = grad.float()
        self.param.grad = None

    @torch.no_grad()
    def gather_(self) -> None:
        """Overwrite the full parameter with the concatenation of all shards."""
        full = self.local_shard.new_empty(self.padded_numel)
        all_gather_into(full, self.local_shard.data, group=self.mesh.get_group(self.dim))
        self.param.copy_(full[: self.param.numel()].view_as(self.param))

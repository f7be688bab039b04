"""A minimal named device mesh."""

from __future__ import annotations

import math
from typing import Optional, Sequence

import torch.distributed as dist


class DeviceMesh:
    """Arrange ``world_size`` ranks in an n-dimensional grid with named axes.

    Ranks are laid out in row-major order, so for ``shape=(2, 4)`` and
    ``dim_names=("pp", "dp")`` ranks 0-3 form the first data-parallel group.
    """

    def __init__(self, shape: Sequence[int], dim_names: Sequence[str], rank: int = 0) -> None:
        if len(shape) != len(dim_names):
            raise ValueError("shape and dim_names must have the same length")
        self.shape = tuple(shape)
        self.dim_names = tuple(dim_names)
        self.rank = rank
        self._groups: dict[str, Optional[dist.ProcessGroup]] = {}

    @classmethod
    def from_world(cls, dim_names: Sequence[str] = ("dp",)) -> "DeviceMesh":
        """Build a 1-D mesh over the whole default process group."""
        if dist.is_available() and dist.is_initialized():
            world_size, rank = dist.get_world_size(), dist.get_rank()
        else:
            world_size, rank = 1, 0
        shape = [world_size] + [1] * (len(dim_names) - 1)
        return cls(shape, dim_names, rank=rank)

    @property
    def world_size(self) -> int:
        return math.prod(self.shape)

    def size(self, dim: str) -> int:
        """Number of ranks along axis ``dim``."""
        return self.shape[self.dim_names.index(dim)]

    def coordinate(self) -> tuple[int, ...]:
        """This rank's position in the grid."""
        coords = []
        remainder = self.rank
        for extent in reversed(self.shape):
            coords.append(remainder % extent)
            remainder //= extent
        return tuple(reversed(coords))

    def local_rank(self, dim: str) -> int:
        """This rank's index along axis ``dim``."""
        return self.coordinate()[self.dim_names.index(dim)]

    def get_group(self, dim: str) -> Optional[dist.ProcessGroup]:
        """Return (and cache) the process group of this rank along ``dim``."""
        if dim not in self._groups:
            if self.size(dim) == self.world_size or not dist.is_initialized():
                self._groups[dim] = None  # the default group
            else:
                self._groups[dim] = dist.new_group(self._ranks_along(dim))
        return self._groups[dim]

    def _ranks_along(self, dim: str) -> list[int]:
        axis = self.dim_names.index(dim)
        stride = math.prod(self.shape[axis + 1 :])
        base = self.rank - self.coordinate()[axis] * stride
        return [base + i * stride for i in range(self.shape[axis])]

    def __repr__(self) -> str:
        axes = ", ".join(f"{n}={s}" for n, s in zip(self.dim_names, self.shape))
        return f"DeviceMesh({axes}, rank={self.rank})"

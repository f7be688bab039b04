"""tinydist: a tiny toolkit for data-parallel training on ``torch.distributed``."""

from tinydist.collectives import all_gather_into, broadcast_object, reduce_scatter_mean
from tinydist.mesh import DeviceMesh

__version__ = "0.1.0"

__all__ = [
    "DeviceMesh",
    "all_gather_into",
    "broadcast_object",
    "reduce_scatter_mean",
    "__version__",
]

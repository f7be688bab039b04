"""minitrain: a small reinforcement-learning training framework.

minitrain couples a rollout engine with a training actor. The actor runs on
one of two backends (FSDP or Megatron) and exchanges weights with the rollout
engine between steps. See ``minitrain.backends`` for the actors and
``minitrain.data.packing`` for sequence packing.
"""

from minitrain.config import TrainConfig

__version__ = "0.1.0"

__all__ = ["TrainConfig", "__version__"]

"""Data parallelism over processes started by torchrun or accelerate launch.

Each process answers every ``world_size``-th example (its shard) and the shards are
gathered on every process in the original order, so each example is answered exactly
once and every process returns the same predictions (rank 0 writes them).
"""

from __future__ import annotations

from typing import Any


def ensure_group(world_size: int) -> None:
    """Join the launcher's process group (gloo on CPUs, NCCL on GPUs) if nobody has yet."""
    if world_size <= 1:
        return
    import torch
    import torch.distributed as dist

    if not dist.is_initialized():
        import atexit

        dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
        atexit.register(_leave)


def _leave() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def shard(count: int, rank: int, world_size: int) -> list[int]:
    """The example indices one process answers."""
    return list(range(rank, count, world_size))


def gather(value: Any, world_size: int) -> list[Any]:
    """Every process's ``value``, by rank (just ``[value]`` alone)."""
    if world_size <= 1:
        return [value]
    import torch.distributed as dist

    gathered: list[Any] = [None] * world_size
    dist.all_gather_object(gathered, value)
    return gathered

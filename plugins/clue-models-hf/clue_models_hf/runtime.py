"""Accelerate plumbing shared by training and prediction.

One :class:`~accelerate.Accelerator` per learner. Accelerate keeps its state in
process-wide singletons; a new learner in the same process (several tasks in one
``clue-core run``, or the test suite) may ask for another mixed-precision mode or
accumulation, so the accelerator-level state is reset first (the process group, when
there is one, is kept).
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader

from clue_core.plugin import ClueError
from clue_models_hf.batching import Collator
from clue_models_hf.encoding import Features
from clue_models_hf.first_token import first_token_only
from clue_models_hf.heads import forward
from clue_models_hf.settings import Settings

PAD_SCORE = float(torch.finfo(torch.float32).min)


def check_mixed_precision(mode: str) -> None:
    """fp16 needs a GPU; bf16 runs on GPUs that have it and on CPUs (natively on AVX512-BF16/AMX)."""
    if mode == "fp16" and not torch.cuda.is_available():
        raise ClueError("mixed_precision=fp16 needs a CUDA GPU; on the CPU use mixed_precision=bf16")
    if mode == "bf16" and torch.cuda.is_available() and not torch.cuda.is_bf16_supported():
        raise ClueError("mixed_precision=bf16: this GPU has no bf16 support; use fp16")


def native_cpu_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX); elsewhere autocast emulates it, slowly."""
    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in probes)


def check_log_with(tracker: str) -> None:
    """``log_with=tensorboard`` needs TensorBoard (or tensorboardX) installed; say so before training."""
    import importlib.util

    if tracker == "tensorboard" and not any(importlib.util.find_spec(m) for m in ("tensorboard", "tensorboardX")):
        raise ClueError("log_with=tensorboard needs TensorBoard: pip install 'clue-models-hf[tensorboard]'")


def make_accelerator(settings: Settings, project_dir: Path | None = None) -> Any:
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState, GradientState
    from accelerate.utils import ProjectConfiguration

    check_mixed_precision(settings.mixed_precision)
    AcceleratorState._reset_state()
    GradientState._reset_state()
    options: dict[str, Any] = {}
    if settings.log_with and project_dir is not None:
        check_log_with(settings.log_with)
        options["log_with"] = settings.log_with
    if project_dir is not None:
        options["project_config"] = ProjectConfiguration(project_dir=str(project_dir),
                                                         logging_dir=str(project_dir / "logs"))
    if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        atexit.unregister(leave_process_group)  # registered once however many learners a run builds
        atexit.register(leave_process_group)
    environment = dict(os.environ)
    try:
        return Accelerator(mixed_precision=settings.mixed_precision,
                           gradient_accumulation_steps=settings.gradient_accumulation_steps,
                           cpu=cpu_processes(), **options)
    except ValueError as error:  # the launch environment it reads (RANK, WORLD_SIZE, MASTER_ADDR…), not our code
        # accelerate sets LOCAL_RANK, MASTER_PORT… before it refuses: nothing half-set is left for a later
        # run in this process (the API, tests), in the environment or in its state
        for name in set(os.environ) - set(environment):
            del os.environ[name]
        os.environ.update(environment)
        AcceleratorState._reset_state(True)
        raise ClueError(f"accelerate cannot set up this run's processes: {error}") from None


def leave_process_group() -> None:
    """Leave the process group before the interpreter tears down: a gloo group left to teardown
    sometimes aborts a rank after its work is done ("terminate called without an active exception",
    SIGABRT), which torchrun then reports as the whole run failing."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def cpu_processes() -> bool:
    """Several processes without a GPU: Accelerate joins them over gloo only when told ``cpu=True``."""
    return int(os.environ.get("WORLD_SIZE", "1") or 1) > 1 and not torch.cuda.is_available()


def prepare_loader(accelerator: Any, loader: DataLoader) -> Any:
    """Shard an evaluation loader without registering it for checkpointing.

    (Registered loaders are part of ``save_state``; evaluation loaders come and go, and a
    resumed run must see the same registered set as the interrupted one.)
    """
    prepared = accelerator.prepare_data_loader(loader)
    registered = getattr(accelerator, "_dataloaders", None)
    if isinstance(registered, list) and prepared in registered:
        registered.remove(prepared)
    return prepared


def infer(accelerator: Any, model: Any, features: Features, collator: Collator, batch_size: int, kind: str
          ) -> list[tuple[np.ndarray, ...]]:
    """Model outputs for every feature, in feature order, identical on every process.

    Features are sorted by length so batches pad little; each process runs its shard,
    and ``gather_for_metrics`` drops the samples Accelerate repeated to even out the last
    batch, so every feature counts exactly once. Indices travel with the outputs, so the
    result never depends on how batches were spread over processes. A classifier computes
    its last layer for the first token only (:mod:`clue_models_hf.first_token`).
    """
    if not len(features):
        return []
    order = sorted(range(len(features)), key=lambda i: -features.lengths[i])
    dataset = [dict(features.items[i], index=i) for i in order]
    loader = prepare_loader(accelerator, DataLoader(dataset, batch_size=batch_size, shuffle=False,
                                                    collate_fn=collator, generator=torch.Generator()))
    results: dict[int, tuple[np.ndarray, ...]] = {}
    was_training = model.training
    model.eval()
    # no_grad, not inference_mode: a module that caches a tensor made here (rotary tables) would hand
    # an inference tensor to the next training step, which autograd refuses
    with torch.no_grad(), first_token_only(accelerator.unwrap_model(model), kind):
        for batch in loader:
            _, outputs = forward(model, batch, kind, with_loss=False)
            padded = [accelerator.pad_across_processes(o.contiguous(), dim=1, pad_index=PAD_SCORE) for o in outputs]
            gathered = accelerator.gather_for_metrics((batch["index"], *padded))
            indices = gathered[0].cpu().numpy()
            arrays = [g.float().cpu().numpy() for g in gathered[1:]]
            for row, index in enumerate(indices):
                results.setdefault(int(index), tuple(a[row] for a in arrays))
    model.train(was_training)
    if len(results) != len(features):
        raise RuntimeError(f"gathered {len(results)} of {len(features)} features")
    return [results[i] for i in range(len(features))]


def stack_padded(rows: Sequence[np.ndarray], width: int, fill: float) -> np.ndarray:
    out = np.full((len(rows), width), fill, dtype=np.float32)
    for i, row in enumerate(rows):
        n = min(width, row.shape[0])
        out[i, :n] = row[:n]
    return out

"""Checkpoints for ``--resume``: one implementation for fine-tuning and pre-training.

A checkpoint is ``<output>/checkpoints/step-NNNNNNNN/``: Accelerate's state (every model,
optimizer, scheduler and data loader registered with the accelerator, plus the RNG state
of every process) and the loop's own state as ``trainer_state.json``, written last. A
folder without that file is incomplete (killed while writing) and never resumed from.

Both loops (:class:`clue_models_hf.training.Trainer` and
:class:`clue_models_hf.pretrain_loop.PretrainLoop`) call :func:`save_checkpoint` and
:func:`load_checkpoint`, so a fix to how state is written or found holds for both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from clue_core.plugin import write_json
from clue_models_hf.saving import disk_errors, share_weights

STATE_FILE = "trainer_state.json"
CHECKPOINTS = "checkpoints"


def checkpoint_folder(output_dir: Path, step: int) -> Path:
    return Path(output_dir) / CHECKPOINTS / f"step-{step:08d}"


def complete_checkpoints(output_dir: Path) -> list[Path]:
    """Checkpoint folders whose state file exists, oldest first (names sort by step)."""
    folder = Path(output_dir) / CHECKPOINTS
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and (p / STATE_FILE).is_file())


def latest_checkpoint(output_dir: Path) -> Path | None:
    """The newest complete checkpoint by the step its state records, or None."""
    complete = complete_checkpoints(output_dir)
    return max(complete, key=lambda p: json.loads((p / STATE_FILE).read_text())["global_step"], default=None)


def save_checkpoint(accelerator: Any, output_dir: Path, step: int, state: dict[str, Any], keep: int) -> Path:
    """Write Accelerate's state and ``state`` (last) for ``step``; keep the newest ``keep`` (0 = all).

    Every process must call it (``save_state`` gathers); only the main one writes the state
    file and prunes. A disk fault removes the half-written folder and is raised as ``OSError``.
    """
    folder = checkpoint_folder(output_dir, step)
    try:
        with disk_errors(folder):
            accelerator.save_state(str(folder))
        if accelerator.is_main_process:
            share_weights(folder)
            write_json(folder / STATE_FILE, state)
    except OSError:  # a disk fault: without its state file the checkpoint is never resumed from
        if accelerator.is_main_process:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if accelerator.is_main_process:
        prune_checkpoints(output_dir, keep)
    accelerator.wait_for_everyone()
    return folder


def prune_checkpoints(output_dir: Path, keep: int) -> None:
    """Remove all but the newest ``keep`` complete checkpoints (``keep`` 0: remove none)."""
    if not keep:
        return
    for old in complete_checkpoints(output_dir)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)


def load_checkpoint(accelerator: Any, output_dir: Path) -> tuple[Path, dict[str, Any]] | None:
    """Load the newest complete checkpoint into the accelerator's registered objects.

    Returns its folder and the loop state it recorded, or None when there is none.
    """
    checkpoint = latest_checkpoint(output_dir)
    if checkpoint is None:
        return None
    accelerator.load_state(str(checkpoint))
    return checkpoint, json.loads((checkpoint / STATE_FILE).read_text())

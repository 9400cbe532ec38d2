"""Model factories named by the specs in ``hooks.py`` (imported only when a run needs them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clue_core.errors import ClueError
from clue_core.specs import TaskSpec
from clue_models_hf.learner import TINY_SOURCE, HFLearner


def create(argument: str | None, task: TaskSpec, options: Mapping[str, Any]) -> HFLearner:
    """``hf:<argument>``: a hub id, a ``save_pretrained`` directory, or a model saved by a run."""
    if not argument:
        raise ClueError("model 'hf' needs a checkpoint: hf:<hub id or local directory>")
    return HFLearner(task, argument, options)


def create_tiny(argument: str | None, task: TaskSpec, options: Mapping[str, Any]) -> HFLearner:
    """``hf-tiny``: the offline backbone, built from the training texts at fit time."""
    return HFLearner(task, TINY_SOURCE, options)

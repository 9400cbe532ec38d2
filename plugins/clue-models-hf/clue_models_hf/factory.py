"""Model factories named by the specs in ``hooks.py`` (imported only when a run needs them).

``settings`` holds the values of the model's declared settings (:mod:`clue_models_hf.settings`),
already converted and bounded by the kernel; only checks across settings remain here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clue_core.plugin import ClueError, TaskSpec
from clue_models_hf.learner import TINY_SOURCE, HFLearner
from clue_models_hf.settings import COMMON, TINY, complete, cross_check


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> HFLearner:
    """``hf:<argument>``: a hub id, a ``save_pretrained`` directory, or a model saved by a run."""
    if not argument:
        raise ClueError("model 'hf' needs a checkpoint: hf:<hub id or local directory>")
    values = complete(COMMON, settings)
    cross_check(values, task.kind)
    return HFLearner(task, argument, values)


def create_tiny(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> HFLearner:
    """``hf-tiny``: the offline backbone, built from the training texts at fit time."""
    values = complete(COMMON + TINY, settings)
    cross_check(values, task.kind)
    return HFLearner(task, TINY_SOURCE, values)

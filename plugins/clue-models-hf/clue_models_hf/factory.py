"""Model factories named by the specs in ``hooks.py`` (imported only when a run needs them).

``settings`` holds the values of the model's declared settings (:mod:`clue_models_hf.settings`),
already converted and bounded by the kernel; only checks across settings remain here. The
``method`` setting picks the learner: a task head (:class:`HFLearner`) or PET's masked-LM
scoring (:class:`~clue_models_hf.pet_learner.PetLearner`); entity-spans tasks get the NER heads
(:class:`~clue_models_hf.ner_learner.EntityLearner`, by the kind's name), KgCLUE's ``kbqa_triple``
the candidate ranker (:class:`~clue_models_hf.kbqa_learner.KbqaLearner`); a folder saved by a PET run is a
PET model whatever ``method`` says, since it has no task head to predict with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clue_core.plugin import ClueError, TaskSpec
from clue_models_hf.hooks import KBQA_TRIPLE
from clue_models_hf.learner import TINY_SOURCE, HFLearner
from clue_models_hf.loading import read_model_file
from clue_models_hf.ner_tags import ENTITY_SPANS
from clue_models_hf.settings import COMMON, TINY, complete, cross_check


def _learner(task: TaskSpec, source: str, values: dict[str, Any]) -> HFLearner:
    saved = read_model_file(source) if source != TINY_SOURCE else None
    if values["method"] == "pet" or (saved or {}).get("method") == "pet":
        from clue_models_hf.pet_learner import PetLearner

        values["method"] = "pet"
        cross_check(values, task.kind)
        return PetLearner(task, source, values)
    cross_check(values, task.kind)
    if task.kind == ENTITY_SPANS:
        from clue_models_hf.ner_learner import EntityLearner

        return EntityLearner(task, source, values)
    if task.kind == KBQA_TRIPLE:
        from clue_models_hf.kbqa_learner import KbqaLearner

        return KbqaLearner(task, source, values)
    return HFLearner(task, source, values)


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> HFLearner:
    """``hf:<argument>``: a hub id, a ``save_pretrained`` directory, or a model saved by a run."""
    if not argument:
        raise ClueError("model 'hf' needs a checkpoint: hf:<hub id or local directory>")
    return _learner(task, argument, complete(COMMON, settings))


def create_tiny(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> HFLearner:
    """``hf-tiny``: the offline backbone, built from the training texts at fit time."""
    return _learner(task, TINY_SOURCE, complete(COMMON + TINY, settings))

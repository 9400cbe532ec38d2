"""Model factories named by the specs in ``hooks.py`` (imported only when a run needs them).

``settings`` holds the values of the model's declared settings, already converted and
bounded by the kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clue_core.plugin import ClueError, TaskSpec
from clue_models_llm.learner import LLMLearner
from clue_models_llm.remote import ServerLearner
from clue_models_llm.settings import COMMON, SERVER, TINY, complete


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``llm:<argument>``: a hub id or a local folder in the ``save_pretrained`` layout."""
    if not argument:
        raise ClueError("model 'llm' needs a checkpoint: llm:<hub id or local folder>")
    return LLMLearner(task, argument, complete(COMMON, settings), COMMON, f"llm:{argument}")


def create_tiny(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``llm-tiny``: the offline model, built from the task's texts at fit time."""
    values = complete(COMMON + TINY, settings)
    if values["tiny_hidden_size"] % values["tiny_num_heads"]:
        raise ClueError(f"setting 'tiny_num_heads' ({values['tiny_num_heads']}) must divide tiny_hidden_size "
                        f"({values['tiny_hidden_size']})")
    return LLMLearner(task, None, values, COMMON + TINY, "llm-tiny")


def create_server(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> ServerLearner:
    """``openai:<model>``: the model a server at ``base_url`` (or $OPENAI_BASE_URL) serves under that name."""
    if not argument:
        raise ClueError("model 'openai' needs the served model's name: openai:<name> (what the server's /v1/models "
                        "lists)")
    return ServerLearner(task, argument, complete(SERVER, settings), SERVER, f"openai:{argument}")

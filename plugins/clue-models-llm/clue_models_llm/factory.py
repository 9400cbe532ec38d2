"""Model factories named by the specs in ``hooks.py`` (imported only when a run needs them).

Each builds an :class:`~clue_models_llm.learner.LLMLearner` holding the backend its model
names stand for (:data:`clue_models_llm.backend.BACKENDS`). ``settings`` holds the values
of the model's declared settings, already converted and bounded by the kernel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import ClueError, Setting, TaskSpec
from clue_models_llm.backend import create_backend
from clue_models_llm.learner import LLMLearner
from clue_models_llm.prompts import require_prompt
from clue_models_llm.settings import COMMON, SERVER, TINY, complete


def build_learner(backend: str, argument: str | None, task: TaskSpec, values: Mapping[str, Any],
                  declared: Sequence[Setting], name: str) -> LLMLearner:
    """The learner of model ``name`` for ``task``, answering through the backend registered as ``backend``.

    The task's prompt is checked first, so a task a language model cannot be asked is refused
    before any backend looks at its settings.
    """
    require_prompt(task)
    return LLMLearner(task, create_backend(backend, argument, values, name), values, declared, name)


def create(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``llm:<argument>``: a hub id or a local folder in the ``save_pretrained`` layout."""
    if not argument:
        raise ClueError("model 'llm' needs a checkpoint: llm:<hub id or local folder>")
    return build_learner("transformers", argument, task, complete(COMMON, settings), COMMON, f"llm:{argument}")


def create_tiny(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``llm-tiny``: the offline model, built from the task's texts at fit time."""
    values = complete(COMMON + TINY, settings)
    if values["tiny_hidden_size"] % values["tiny_num_heads"]:
        raise ClueError(f"setting 'tiny_num_heads' ({values['tiny_num_heads']}) must divide tiny_hidden_size "
                        f"({values['tiny_hidden_size']})")
    return build_learner("transformers", None, task, values, COMMON + TINY, "llm-tiny")


def create_server(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``openai:<model>``: the model a server at ``base_url`` (or $OPENAI_BASE_URL) serves under that name."""
    if not argument:
        raise ClueError("model 'openai' needs the served model's name: openai:<name> (what the server's /v1/models "
                        "lists)")
    return build_learner("openai", argument, task, complete(SERVER, settings), SERVER, f"openai:{argument}")


def create_vllm(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``vllm:<argument>``: a hub id or a local folder, served by vLLM's offline engine in this process."""
    from clue_models_llm.vllm_settings import VLLM

    if not argument:
        raise ClueError("model 'vllm' needs a checkpoint: vllm:<hub id or local folder>")
    return build_learner("vllm", argument, task, complete(VLLM, settings), VLLM, f"vllm:{argument}")


def create_recorded(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``answers:<file>``: answers recorded elsewhere, read from a JSON Lines file or a JSON array."""
    from clue_models_llm.recorded_learner import RecordedLearner
    from clue_models_llm.recorded_settings import RECORDED

    if not argument:
        raise ClueError("model 'answers' needs the file of recorded answers: answers:<file> (JSON Lines or a JSON "
                        "array of objects; --set answer_field=<field>)")
    require_prompt(task)
    values = complete(RECORDED, settings)
    name = f"answers:{argument}"
    return RecordedLearner(task, create_backend("answers", argument, values, name), values, RECORDED, name)

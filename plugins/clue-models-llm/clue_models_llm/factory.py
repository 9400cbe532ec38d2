"""The one model factory: every model name of this plugin builds its learner here (imported only for a run).

``hooks.py`` names it per model as ``clue_models_llm.factory:create.<family>`` (``create.llm``,
``create.llm_tiny``, ``create.vllm``…): the kernel calls that with ``(argument, task, settings)``
and :func:`create` builds the learner from the family's declaration
(:class:`~clue_models_llm.backend.BackendInfo`), so a new backend needs no factory of its own.
``settings`` holds the values of the model's declared settings, already converted and
bounded by the kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from clue_core.plugin import ClueError, TaskSpec
from clue_models_llm import generic
from clue_models_llm.backend import backend_info, create_backend, declared, factory_name
from clue_models_llm.learner import LLMLearner
from clue_models_llm.prompts import require_prompt
from clue_models_llm.settings import complete


def learner(family: str, argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """The learner of model ``family[:argument]`` for ``task``, answering through the family's backend.

    A family that takes an argument refuses to run without one; the task's prompt is checked
    next, so a task a language model cannot be asked is refused before any backend looks at
    its settings; then the values are completed with the defaults and checked together.
    """
    info = backend_info(family)
    if info.unavailable:  # a third party's module that failed to import: its package and error, in one line
        raise ClueError(info.unavailable)
    if info.argument and not argument:
        raise ClueError(f"model {family!r} needs {info.argument}")
    require_prompt(task)
    generic.require(task)  # a kind this plugin does not read: the task's parse must say how
    values = {**complete(info.settings, settings), **info.fixed}
    if info.check is not None:
        info.check(values)
    name = f"{family}:{argument}" if info.argument else family
    backend = create_backend(family, argument if info.argument else None, values, name)
    return LLMLearner(task, backend, values, info.settings, name)


class _Families:
    """``create.<family>``: :func:`learner` bound to one family, as the kernel calls a factory."""

    def __call__(self, family: str, argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
        return learner(family, argument, task, settings)

    def __getattr__(self, attribute: str) -> Any:
        for info in declared():
            if factory_name(info.family) == attribute:
                return partial(learner, info.family)
        raise AttributeError(attribute)


#: The factory every model spec names: ``create.<family>`` (or ``create(family, argument, task, settings)``).
create = _Families()


def create_server(argument: str | None, task: TaskSpec, settings: Mapping[str, Any]) -> LLMLearner:
    """``openai:<argument>`` under the name Python callers knew it by (``benchmarks/llm_scoring.py``)."""
    return learner("openai", argument, task, settings)

"""The models a run builds inside itself (a judge, each of a panel), checked with each metric's check of its
values before any task runs (:func:`check_plan`); such a model refuses its settings by the keys the user writes.

A model's factory names its own settings bare (``--set base_url=…``), as they are written for
the model a run answers with; built as ``judge.1`` its ``base_url`` is ``--set judge.1.base_url=…``,
and the bare key the message suggested would set a different model's setting or none. So the
kernel, which knows the namespace, rewrites the keys of the model's declared settings in its
refusal and says which model refused (``judge.1 (openai:m): … --set judge.1.base_url=…``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from clue_core.errors import ClueError, Interrupted
from clue_core.settings import inner_namespaces, model_names
from clue_core.specs import ModelSpec, Setting, TaskSpec
from clue_core.specs import resolve as resolve_ref

if TYPE_CHECKING:
    from clue_core.plans import TaskPlan
    from clue_core.registry import Registry
    from clue_core.settings import ResolvedSettings


def check_plan(kernel: Registry, plan: TaskPlan) -> None:
    """Each metric's ``check`` of its setting values (a reference run that must exist), then every model a
    setting names (a judge, or each judge of a panel) built once, as scoring will, so that its own settings
    (an ``openai:`` judge without ``judge.base_url``) are refused before any task runs."""
    load = model_loader(kernel, plan.task, plan.settings)
    for name in plan.task.metrics:
        metric = kernel.metric(name)
        if metric.check is not None:
            resolve_ref(metric.check)(plan.settings.values_for(metric.settings))
    for name, setting in plan.settings.declared.items():
        if setting.names_model and plan.settings.values.get(name):
            names = model_names(plan.settings.values[name])
            for model, namespace in zip(names, inner_namespaces(name, names)):
                load(model, namespace)


def model_loader(kernel: Registry, task: TaskSpec, settings: ResolvedSettings) -> Callable[[str, str], Any]:
    """``context.load_model(name, namespace)``: another model (a judge) with the settings under
    ``<namespace>.``; declared defaults where the run resolved none."""

    def load(name: str, namespace: str) -> Any:
        spec, argument = kernel.model(name)
        require_kind(task, spec, namespace, name)
        try:
            return resolve_ref(spec.factory)(argument, task, settings.values_for(spec.settings, namespace))
        except ClueError as exc:  # its settings named as the user writes them: judge.1.base_url, not base_url
            raise in_namespace(exc, namespace, name, spec.settings) from None

    return load


def require_kind(task: TaskSpec, model: ModelSpec, setting: str, name: str) -> None:
    """A model named by ``setting`` (a judge) answers the task's kind of example, or one line says so."""
    if task.kind not in model.kinds:
        raise ClueError(f"{task.name}: setting '{setting}' names model {name}, which cannot answer "
                        f"{task.kind} examples (it answers: {', '.join(model.kinds)})")


def in_namespace(exc: ClueError, namespace: str, model: str, declared: Iterable[Setting]) -> ClueError:
    """``exc`` with each declared setting it names as ``--set NAME=`` or ``setting 'NAME'`` under ``namespace``.

    Only the model's own declared names are rewritten, and only in those two forms, so the rest of
    the message (a path, a value) is left as it was. An interruption is no refusal: it passes unchanged.
    """
    if isinstance(exc, Interrupted):
        return exc
    names = sorted({setting.name for setting in declared}, key=len, reverse=True)
    text = str(exc)
    if names:
        keys = "|".join(re.escape(name) for name in names)
        text = re.sub(rf"(--set |setting ')({keys})(?=[=' ]|$)", rf"\g<1>{namespace}.\g<2>", text)
    refused = ClueError(f"{namespace} ({model}): {text}")
    refused.exit_code = exc.exit_code
    return refused

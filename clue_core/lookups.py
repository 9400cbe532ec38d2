"""What a command may look up about one task without planning a run (the built-in plugin's ``info``).

Two answers a listing needs from the kernel's run machinery, exported by :mod:`clue_core.plugin`
and loaded on first use: the settings a run of a task with a model would read, with their sources,
and the folder the installed fetcher keeps the task's files in. They live apart from
:mod:`clue_core.registry` (the protocol the kernel's own checks import) because they reach into
planning, which imports the kernel: beside the protocol they would close an import circle.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clue_core.registry import Registry
    from clue_core.specs import TaskSpec


def resolved_settings(kernel: Registry, task: TaskSpec, model: str) -> list[dict[str, Any]]:
    """Each setting a run of ``task`` with ``model`` would read: ``{"name", "value", "source"}`` rows, as
    ``run --dry-run`` shows them, with no data looked up and no run planned (``info TASK --model M``)."""
    from clue_core.errors import ClueError
    from clue_core.planning import RunRequest, _explained, resolve_settings

    spec, argument = kernel.model(model)
    if task.kind not in spec.kinds:  # as planning refuses the run: no settings of a run that cannot be
        raise ClueError(f"model {spec.name} does not support {task.kind} tasks like {task.name} "
                        f"(it runs: {', '.join(spec.kinds) or 'none'})")
    resolved = resolve_settings(kernel, RunRequest(tasks=[task.name], model=model), [task], spec)  # type: ignore[arg-type]
    return _explained(spec, argument, resolved[task.name].rows())  # a value the model resolves (dtype auto) too


def fetched_folder(kernel: Registry, task: TaskSpec) -> Path | None:
    """Where the installed fetcher keeps ``task``'s files (they may not be there yet), fetching nothing;
    ``None`` when no fetcher is chosen (none installed, or several and no ``$CLUE_FETCHER``) or it does not say."""
    from clue_core import fetching
    from clue_core.errors import DataError

    try:
        return fetching.location(fetching.choose(task, kernel.fetchers), task, kernel.owner)
    except DataError:
        return None

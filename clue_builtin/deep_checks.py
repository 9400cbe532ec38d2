"""``clue-core check``'s deep checks: import every reference of a task and read its data end to end.

The kernel checks each spec cheaply as plugins load (``clue_core.checks``: shapes and names, nothing
imported); this is the part a user asks for. It imports each reference a task names (reader, decode,
cluster, its metrics, its writer), reads the bundled sample (or a given data folder) through the
reader and the kind's example checks, and names every recommended setting that nothing installed
declares (:func:`recommendation_problems`), which a run drops without a word. It is the built-in
plugin's, on :mod:`clue_core.plugin` alone, like any command a third party adds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    RUN_CONTROL,
    ClueError,
    DataError,
    Registry,
    TaskSpec,
    resolve,
    setting_typos,
)


def _resolves(ref: Any, what: str) -> str | None:
    try:
        target = resolve(ref)
    except Exception as exc:  # any import failure is the problem we report
        return f"{what} {ref!r} does not import: {type(exc).__name__}: {exc}"
    if not callable(target):
        return f"{what} {ref!r} is not callable"
    return None


#: What a model that is not installed declares (unknown).
_ABSENT = frozenset({"\0absent"})
#: ``(key, where it is recommended, the model it is for, what that model declares)``; ``None``: any model.
Advice = tuple[str, str, str | None, frozenset[str] | None]


def _recommended(kernel: Registry, task: TaskSpec) -> list[Advice]:
    """Every plugin value that may reach ``task``'s runs: the task's, and those for or of each installed model."""
    found: list[Advice] = [(key, "its recommendations", None, None) for key in task.recommendations]
    for name, values in task.model_recommendations.items():
        model = kernel.models.get(name) or kernel.models.get(name.partition(":")[0])
        names = frozenset(s.name for s in model.settings) if model else _ABSENT
        found += [(key, f"its model_recommendations for {name!r}", name, names) for key in values]
    for model in kernel.models.values():
        if task.kind not in model.kinds:
            continue
        names = frozenset(s.name for s in model.settings)
        sources = [(f"recommendations for {kind!r}", model.recommendations.get(kind, {})) for kind in ("*", task.kind)]
        for what, values in [*sources, ("recipe for it", model.recipes.get(task.name, {}))]:
            found += [(key, f"model {model.name}'s {what}", model.name, names) for key in values]
    return found


def recommendation_problems(kernel: Registry, task: TaskSpec, echo: Callable[[str], None] | None = None
                            ) -> list[str]:
    """Recommended keys that the models they reach do not declare (a run drops them without a word).

    A task's own recommendation may be read by the task or any installed model; one for a given
    model (its recommendations and recipes, the task's ``model_recommendations`` for it) by that
    model or the task, else it is a warning. ``judge.x`` is read by whichever model ``judge``
    names, so any installed model's ``x`` will do. An undeclared key is a problem when it is a
    typo of a declared one (a did-you-mean) or run control (``seed``); otherwise a warning, since
    a model plugin that is not installed may read it. A ``model_recommendations`` entry for a
    model that is not installed is one warning (its typos are warnings too: what it declares is
    unknown).
    """
    def say(line: str) -> None:
        if echo:
            echo(f"{task.name}: warning: {line}")

    own = [*task.settings, *task.decode_settings, *task.reader_settings,
           *(s for name in task.metrics if name in kernel.metrics for s in kernel.metrics[name].settings)]
    declared = [*own, *(s for model in kernel.models.values() for s in model.settings)]
    models, own_names = {s.name for m in kernel.models.values() for s in m.settings}, {s.name for s in own}
    flat, namespaces = {s.name for s in declared}, {s.name for s in declared if s.names_model}
    problems = []
    for key, where, model, names in dict.fromkeys(_recommended(kernel, task)):
        head, dot, rest = key.partition(".")
        if dot and head in namespaces and rest in models:
            continue
        if names is not None and names is not _ABSENT and key in flat and key not in names | own_names:
            say(f"{where} set {key!r}, which model {model} does not declare (its runs drop it)")
            continue
        if key in flat:
            continue
        if key in RUN_CONTROL:
            problems.append(f"{where} set {key!r}, which is run control, not a setting ({RUN_CONTROL[key]})")
            continue
        near = _near_misses(key, flat, namespaces, models)
        if near:
            line = (f"{where} set {key!r}, which neither the task nor any installed model declares; "
                    f"did you mean {' or '.join(map(repr, near))}?")
            if names is _ABSENT:
                say(f"{line} (model {model} is not installed)")
            else:
                problems.append(line)
        elif names is not _ABSENT:  # an absent model's keys: its one warning below says it
            say(f"{where} set {key!r}, which neither the task nor any installed model declares (no run reads it)")
    for model in task.model_recommendations:
        if model not in kernel.models and model.partition(":")[0] not in kernel.models:
            say(f"model_recommendations for {model!r}: no such model is installed (not used)")
    return problems


def _near_misses(key: str, flat: set[str], namespaces: set[str], models: set[str]) -> list[str]:
    """Declared names a typo away from ``key`` (``learnig_rate``, ``jugde.mode``), compared part by
    part so that a shared ``judge.`` does not make every judge setting look close."""
    head, dot, rest = key.partition(".")
    if not dot:
        return setting_typos(key, flat)
    if head in namespaces:
        return [f"{head}.{name}" for name in setting_typos(rest, models)]
    return [f"{space}.{name}" for space in setting_typos(head, namespaces)
            for name in ([rest] if rest in models else setting_typos(rest, models))]


def deep_problems(kernel: Registry, task: TaskSpec, data_dir: Path | None = None,
                  echo: Callable[[str], None] | None = None) -> list[str]:
    """Import every reference of ``task`` and read its data end to end (``clue-core check``).

    Reads the bundled sample, or ``data_dir`` when given; every readable split that is
    present goes through the reader and the kernel's example checks. Recommended settings
    that nothing installed declares are problems too (:func:`recommendation_problems`).
    Each problem is one line (an exception's message that spans lines is folded).
    """
    found = recommendation_problems(kernel, task, echo) + _read_problems(kernel, task, data_dir, echo)
    return list(dict.fromkeys(" ".join(problem.split()) for problem in found))  # one line per problem, not per split


def _read_problems(kernel: Registry, task: TaskSpec, data_dir: Path | None, echo: Callable[[str], None] | None
                   ) -> list[str]:
    """The references import, then the data reads; the data is not read when a reference fails."""
    from clue_core.plugin import read_split, resolve_task_data  # the data lookup and the readers: on use

    problems: list[str] = []
    refs = [(task.reader, "reader"), (task.decode, "decode"), (task.cluster, "cluster")]
    refs += [(ref, f"metric {name}") for name in task.metrics
             for ref in (kernel.metrics[name].compute, kernel.metrics[name].check)]
    writer = kernel.writers[task.writer]
    refs += [(writer.write, f"writer {writer.name}.write"), (writer.read, f"writer {writer.name}.read")]
    problems += [p for ref, what in refs if ref is not None and (p := _resolves(ref, what))]
    if problems:
        return problems
    if data_dir is None and task.sample is None:
        if echo:
            echo(f"{task.name}: no bundled sample; pass --data-dir to read a data folder")
        return problems
    try:
        folder = resolve_task_data(task, data_dir=data_dir, sample=data_dir is None, openers=kernel.openers,
                                   owners=kernel.owner)
    except ClueError as exc:
        return [str(exc)]
    for split in task.readable_splits:
        try:
            part = read_split(task, folder, split, kinds=kernel.kinds)
        except DataError as exc:  # a test file may be absent; a missing train or dev file is a problem
            if split in task.splits:
                problems.append(str(exc))
            elif echo:
                echo(f"{task.name}: {split}: not present ({exc})")
            continue
        except ClueError as exc:
            problems.append(str(exc))
            continue
        if echo:
            echo(f"{task.name}: {split}: {len(part)} examples")
            for note in part.notes:
                echo(f"{task.name}: {split}: {note}")
    return problems

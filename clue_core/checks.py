"""Checks of specs against the contracts: cheap ones at load time, deep ones on request.

:func:`spec_problems` runs for every spec once all plugins are loaded, without importing
any plugin code: names of metrics and writers resolve through the registry, ``module:attr``
references are only checked for their shape, the primary metric must be produced by the
task's metrics, tuple fields must be tuples, the sample folder must exist.
:func:`deep_problems` is ``clue-core check``: it imports every reference and reads each
bundled sample (or a given data folder) end to end through the reader and the kernel's
example checks, and names every recommended setting that nothing installed declares
(:func:`recommendation_problems`), which a run drops without a word.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core.expansion import expansion_problems
from clue_core.fetching import spec_problems as data_hook_problems
from clue_core.kinds import kind_typos
from clue_core.prompt_variants import prompt_problems  # the prompt and each variant's wording of it
from clue_core.specs import (
    CommandSpec,
    MetricSpec,
    ModelSpec,
    ReportSectionSpec,
    Setting,
    SubmissionWriterSpec,
    TaskSpec,
)

if TYPE_CHECKING:  # the Protocol, not the kernel: the kernel imports this module to check specs
    from clue_core.registry import Registry

_SETTING_TYPES = (bool, int, float, str)


def _is_ref(value: Any) -> bool:
    if callable(value):
        return True
    if not isinstance(value, str):
        return False
    module, sep, attr = value.partition(":")
    return bool(sep and module and attr and all(part.isidentifier() for part in module.split("."))
                and all(part.isidentifier() for part in attr.split(".")))


def _tuple_problems(spec: Any) -> list[str]:
    problems = []
    for f in fields(spec):
        annotation = str(f.type)
        if annotation.startswith("tuple[") and not isinstance(getattr(spec, f.name), tuple):
            problems.append(f"field {f.name} must be a tuple, got {type(getattr(spec, f.name)).__name__}")
    return problems


def setting_problems(settings: Any, owner: str) -> list[str]:
    """Declarations must be Settings of a known type, with unique names and a valid default."""
    from clue_core.errors import ClueError
    from clue_core.settings import convert

    if not isinstance(settings, tuple):
        return [f"{owner} settings must be a tuple"]
    problems = []
    names: set[str] = set()
    for setting in settings:
        if not isinstance(setting, Setting):
            problems.append(f"{owner} settings must be Setting records, got {type(setting).__name__}")
            continue
        if setting.name in names:
            problems.append(f"{owner} declares setting {setting.name!r} twice")
        names.add(setting.name)
        if setting.type not in _SETTING_TYPES:
            problems.append(f"setting {setting.name!r} has type {setting.type!r}; use bool, int, float or str")
            continue
        try:
            convert(setting, setting.default, "its default")
        except ClueError as exc:
            problems.append(str(exc))
    return problems


def _sample_exists(sample: str) -> bool:
    """``"package:relative/path"`` names a folder inside an installed package (not imported)."""
    import importlib.util

    package, _, relative = sample.partition(":")
    try:
        found = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return False
    if found is None or not found.submodule_search_locations:
        return False
    return any((Path(location) / relative).is_dir() for location in found.submodule_search_locations)


def _task_problems(kernel: Registry, task: TaskSpec) -> list[str]:
    problems = _tuple_problems(task)
    if task.kind not in kernel.kinds:  # a kind is a plugin's (clue_kinds): the task's must be installed
        problems.append(f"unknown kind {task.kind!r} (known: {', '.join(kernel.kinds) or 'none'})")
    for ref_field in ("reader", "decode", "cluster"):
        value = getattr(task, ref_field)
        if value is not None and not _is_ref(value):
            problems.append(f"{ref_field} must be 'module:attr', got {value!r}")
    if task.writer not in kernel.writers:
        problems.append(f"unknown writer {task.writer!r}{_suggest(task.writer, kernel.writers)}")
    produced: set[str] = set()
    for name in task.metrics if isinstance(task.metrics, tuple) else ():
        metric = kernel.metrics.get(name)
        if metric is None:
            problems.append(f"unknown metric {name!r}{_suggest(name, kernel.metrics)}")
            continue
        if metric.kinds and task.kind not in metric.kinds:
            problems.append(f"metric {name!r} does not apply to {task.kind} tasks")
        produced.update(metric.totals)
    if produced and task.primary_metric not in produced:
        problems.append(f"primary metric {task.primary_metric!r} is not produced by its metrics "
                        f"(they produce: {', '.join(sorted(produced))})")
    if task.sample is not None and not _sample_exists(task.sample):
        problems.append(f"sample folder {task.sample!r} does not exist")
    versions = [t.version for t in task.test_versions] if isinstance(task.test_versions, tuple) else []
    if len(set(versions)) != len(versions):
        problems.append("test versions must be unique")
    problems += setting_problems(task.settings, "task")
    problems += setting_problems(task.decode_settings, "decode step")
    problems += setting_problems(task.reader_settings, "reader")
    problems += expansion_problems(task)  # its plan expansion's own (FewCLUE's split=all)
    if task.prompt is not None and task.kind in kernel.kinds:
        problems += prompt_problems(task, set(kernel.kinds[task.kind].prompt_fields), _prompt_problems)
    return problems


def _prompt_problems(task: TaskSpec, allowed: set[str]) -> list[str]:
    try:
        used = {name for _, name, _, _ in string.Formatter().parse(task.prompt.template) if name}  # type: ignore[union-attr]
    except ValueError as exc:
        return [f"prompt template does not parse: {exc}"]
    problems = [f"prompt template uses {{{name}}}, which {task.kind} examples do not have"
                for name in sorted(used - allowed)]
    problems += [f"prompt {name} must be 'module:attr', got {ref!r}" for name in ("parse", "render", "answer")
                 if (ref := getattr(task.prompt, name)) is not None and not _is_ref(ref)]
    verbalizers = task.prompt.verbalizers  # type: ignore[union-attr]
    if verbalizers:
        missing = [label for label in task.labels if label not in verbalizers]
        if missing:
            problems.append(f"prompt verbalizers miss labels {', '.join(missing[:5])}")
        words = list(verbalizers.values())
        if len(set(words)) != len(words):
            problems.append("prompt verbalizers must be distinct")
    return problems


def _kind_problems(kind: Any) -> list[str]:  # gold: an attribute or a reference; check_example, record_gold: optional
    refs = [name for name in ("example", "check_prediction", "check_example", "gold", "record_gold")
            if (name in ("example", "check_prediction", "gold") or getattr(kind, name) is not None)
            and not (name == "gold" and isinstance(kind.gold, str) and kind.gold.isidentifier())]
    named = isinstance(kind.name, str) and kind.name.split() == [kind.name]  # tasks, models, manifests name it
    return ([] if named else [f"kind name must be one word, got {kind.name!r}"]) + _tuple_problems(kind) + (
        [] if isinstance(kind.open, bool) else [f"open must be true or false, got {kind.open!r}"]) + [
        f"{n} must be 'module:attr', got {getattr(kind, n)!r}" for n in refs if not _is_ref(getattr(kind, n))]


def _model_problems(kernel: Registry, model: ModelSpec) -> list[str]:
    problems = _tuple_problems(model) + kind_typos(model.kinds, kernel.kinds)
    if not _is_ref(model.factory):
        problems.append(f"factory must be 'module:attr', got {model.factory!r}")
    problems += setting_problems(model.settings, "model")
    for key in model.recommendations:
        if key != "*" and key not in model.kinds and key not in kernel.kinds:
            problems.append(f"recommendations are keyed by kind or '*', got {key!r}")
    return problems


def _metric_problems(kernel: Registry, metric: MetricSpec) -> list[str]:
    problems = _tuple_problems(metric) + kind_typos(metric.kinds, kernel.kinds)
    problems += [f"{name} must be 'module:attr', got {getattr(metric, name)!r}" for name in ("compute", "check")
                 if (name == "compute" or metric.check is not None) and not _is_ref(getattr(metric, name))]
    strays = [name for name in metric.counts if name not in metric.totals] if isinstance(metric.counts, tuple) else []
    if strays:
        problems.append(f"counts {', '.join(strays)} are not among the totals it produces")
    return problems + setting_problems(metric.settings, "metric")


def _writer_problems(writer: SubmissionWriterSpec) -> list[str]:
    return [f"{name} must be 'module:attr', got {getattr(writer, name)!r}"
            for name in ("write", "read") if not _is_ref(getattr(writer, name))]


def _command_problems(command: CommandSpec) -> list[str]:
    problems = [f"{name} must be 'module:attr', got {getattr(command, name)!r}" for name in ("command", "api")
                if (name == "command" or command.api is not None) and not _is_ref(getattr(command, name))]
    if not isinstance(command.name, str) or not command.name or command.name.startswith("-") or any(
            c.isspace() for c in command.name):
        problems.append(f"command name must be one word, got {command.name!r}")
    return problems


def _section_problems(section: ReportSectionSpec) -> list[str]:
    problems = _tuple_problems(section)
    refs = ("build", "html") + (("markdown",) if section.markdown is not None else ())
    problems += [f"{name} must be 'module:attr', got {getattr(section, name)!r}"
                 for name in refs if not _is_ref(getattr(section, name))]
    if not isinstance(section.name, str) or not section.name.replace("-", "").replace("_", "").isalnum():
        problems.append(f"section name must be letters, digits, '-' or '_' (the page anchor), got {section.name!r}")
    return problems


def spec_problems(kernel: Registry, registry: str, spec: Any) -> list[str]:
    """What is wrong with one spec, checked against the registry, importing nothing."""
    if registry == "tasks":
        return _task_problems(kernel, spec)
    if registry == "models":
        return _model_problems(kernel, spec)
    if registry == "metrics":
        return _metric_problems(kernel, spec)
    if registry == "kinds":
        return _kind_problems(spec)
    if registry == "commands":
        return _command_problems(spec)
    if registry == "report_sections":
        return _section_problems(spec)
    if registry in ("fetchers", "openers"):  # next to their specs, in clue_core.fetching
        return data_hook_problems(spec, _is_ref)
    return _writer_problems(spec)


def _suggest(name: str, known: Any) -> str:
    from clue_core.errors import did_you_mean

    return did_you_mean(name, list(known))


# -- clue-core check ---------------------------------------------------------------------


def _resolves(ref: Any, what: str) -> str | None:
    from clue_core.specs import resolve

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
    from clue_core.settings import RUN_CONTROL

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
    from clue_core.settings import typos

    head, dot, rest = key.partition(".")
    if not dot:
        return typos(key, flat)
    if head in namespaces:
        return [f"{head}.{name}" for name in typos(rest, models)]
    return [f"{space}.{name}" for space in typos(head, namespaces)
            for name in ([rest] if rest in models else typos(rest, models))]


def deep_problems(kernel: Registry, task: TaskSpec, data_dir: Path | None = None,
                  echo: Callable[[str], None] | None = None) -> list[str]:
    """Import every reference of ``task`` and read its data end to end (``clue-core check``).

    Reads the bundled sample, or ``data_dir`` when given; every readable split that is
    present goes through the reader and the kernel's example checks. Recommended settings
    that nothing installed declares are problems too (:func:`recommendation_problems`).
    Each problem is one line (an exception's message that spans lines is folded).
    """
    found = recommendation_problems(kernel, task, echo) + _read_problems(kernel, task, data_dir, echo)
    return [" ".join(problem.split()) for problem in found]


def _read_problems(kernel: Registry, task: TaskSpec, data_dir: Path | None, echo: Callable[[str], None] | None
                   ) -> list[str]:
    """The references import, then the data reads; the data is not read when a reference fails."""
    from clue_core import data, reading
    from clue_core.errors import ClueError, DataError

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
        folder = data.resolve_task_data(task, data_dir=data_dir, sample=data_dir is None, openers=kernel.openers)
    except ClueError as exc:
        return [str(exc)]
    for split in task.readable_splits:
        try:
            part = reading.read_split(task, folder, split, kinds=kernel.kinds)
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

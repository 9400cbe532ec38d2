"""The cheap checks of specs against the contracts, which the kernel runs once all plugins are loaded.

:func:`spec_problems` runs for every spec without importing any plugin code: names of metrics
and writers resolve through the registry, ``module:attr`` references are only checked for their
shape, the primary metric must be produced by the task's metrics, tuple fields must be tuples,
the sample folder must exist, a kind's example type must be no earlier kind's (by its path; an
alias through a plugin's own module is refused once the type is imported, by :mod:`clue_core.kinds`).
A failing spec is dropped onto its plugin's row. The deep checks a user asks for (``clue-core check``:
import every reference, read each sample end to end) are a feature, not kernel: the built-in plugin's
``clue_builtin.deep_checks``.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clue_core.expansion import expansion_problems
from clue_core.fetching import spec_problems as data_hook_problems
from clue_core.kinds import note_owner
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


def kind_typos(kinds: Any, known: Iterable[str]) -> list[str]:
    """A model's or metric's kinds that no plugin declares and that are a typo of one that is.

    Any other undeclared kind is the kind of a plugin not installed here (the LLM models name the
    open-question kind whether or not the plugin declaring it is there): disabling that plugin must not
    break this one, so only a near miss is a problem (a task's kind, by contrast, must be declared).
    """
    from clue_core.settings import typos

    declared = set(known)
    unknown = [kind for kind in kinds if kind not in declared] if isinstance(kinds, tuple) else []
    return [f"unknown kind {kind!r}; did you mean {' or '.join(map(repr, near))}?" for kind in unknown
            if (near := typos(str(kind), declared))]


def _is_ref(value: Any) -> bool:
    if callable(value):
        return True
    if not isinstance(value, str):
        return False
    module, sep, attr = value.partition(":")
    return bool(sep and module and attr and all(part.isidentifier() for part in module.split("."))
                and all(part.isidentifier() for part in attr.split(".")))


#: A spec type's ``tuple[...]`` fields, read from its annotations once per type (every start checks ~100 specs).
_TUPLE_FIELDS: dict[type, tuple[str, ...]] = {}
#: ``id(settings tuple), owner -> (the tuple, its problems)``: a model catalogue's entries share their family's
#: declarations (one tuple object), so each is checked once per process; the tuple is kept so the id stays its.
_CHECKED_SETTINGS: dict[tuple[int, str], tuple[tuple[Any, ...], list[str]]] = {}


def _tuple_problems(spec: Any) -> list[str]:
    names = _TUPLE_FIELDS.get(type(spec))
    if names is None:
        names = _TUPLE_FIELDS[type(spec)] = tuple(f.name for f in fields(spec) if str(f.type).startswith("tuple["))
    return [f"field {name} must be a tuple, got {type(getattr(spec, name)).__name__}" for name in names
            if not isinstance(getattr(spec, name), tuple)]


def setting_problems(settings: Any, owner: str) -> list[str]:
    """Declarations must be Settings of a known type, with unique names and a valid default."""
    if not isinstance(settings, tuple):
        return [f"{owner} settings must be a tuple"]
    seen = _CHECKED_SETTINGS.get((id(settings), owner))
    if seen is None or seen[0] is not settings:
        seen = _CHECKED_SETTINGS[(id(settings), owner)] = (settings, _declaration_problems(settings, owner))
    return list(seen[1])


def _declaration_problems(settings: tuple[Any, ...], owner: str) -> list[str]:
    from clue_core.errors import ClueError
    from clue_core.settings import convert

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


def _kind_problems(kernel: Registry, kind: Any) -> list[str]:
    """Its name, fields and references (gold: an attribute or a reference; check_example, record_gold:
    optional), and an example type of its own."""
    refs = [name for name in ("example", "check_prediction", "check_example", "gold", "record_gold")
            if (name in ("example", "check_prediction", "gold") or getattr(kind, name) is not None)
            and not (name == "gold" and isinstance(kind.gold, str) and kind.gold.isidentifier())]
    named = isinstance(kind.name, str) and kind.name.split() == [kind.name]  # tasks, models, manifests name it
    owner = kernel.owner.get(("kinds", kind.name))
    if owner is not None:  # a refusal of two kinds of one type at run time names the plugins (kinds._match)
        note_owner(kind, owner)
    return ([] if named else [f"kind name must be one word, got {kind.name!r}"]) + _tuple_problems(kind) + (
        [] if isinstance(kind.open, bool) else [f"open must be true or false, got {kind.open!r}"]) + [
        f"{n} must be 'module:attr', got {getattr(kind, n)!r}" for n in refs if not _is_ref(getattr(kind, n))
    ] + _shared_type_problems(kernel, kind)


def _example_path(ref: Any) -> Any:
    """A kind's example reference as the defining module's path, importing nothing: a class is its own
    path, ``clue_core.plugin``'s re-exports (``clue_core.plugin:ClassificationExample``) their module's. An
    alias through a plugin's own module shows only once the type is imported (``kinds._match`` refuses it)."""
    if isinstance(ref, type):
        return f"{ref.__module__}:{ref.__qualname__}"
    if isinstance(ref, str) and ref.startswith("clue_core.plugin:"):
        # its lazy re-exports' name -> "module:attr"; asked of the module the plugins' hook modules imported, not
        # imported here (it imports the api, which imports the kernel, which imports this module)
        lazy = getattr(sys.modules.get("clue_core.plugin"), "_LAZY", {})
        return lazy.get(ref.partition(":")[2], ref)
    return ref


def _shared_type_problems(kernel: Registry, kind: Any) -> list[str]:
    """A kind declaring an example type a kind registered before it declares: an example's kind (its gold,
    its record) is found by its type, so the later kind's tasks would be scored with the other's gold."""
    path = _example_path(kind.example)
    for other in kernel.kinds.values():
        if other is kind:
            return []
        if _example_path(other.example) == path:
            shown = kind.example if isinstance(kind.example, str) else path  # a class: its path
            return [f"example type {shown} is already kind {other.name!r}'s (plugin "
                    f"{kernel.owner.get(('kinds', other.name), 'unknown')}); each kind needs its own type"]
    return []


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
        return _kind_problems(kernel, spec)
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

"""A run's settings in one call (:func:`resolve_settings`): the declarations each task reads (its own, its
reader's and decoder's, its metrics', the model's) and every layer of values over them, lowest first, as
:mod:`clue_core.settings` lists them, which :func:`clue_core.settings.resolve` merges. The kernel comes as
the registry protocol (``clue-core info`` resolves through it, and the kernel's checks import it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clue_core.errors import ClueError
from clue_core.inner_models import require_kind
from clue_core.settings import (
    Layer,
    ResolvedSettings,
    SettingError,
    inner_namespaces,
    model_names,
    resolve,
    unknown_setting,
)
from clue_core.specs import ModelSpec, Setting, TaskSpec

if TYPE_CHECKING:
    from clue_core.plans import RunRequest
    from clue_core.registry import Registry


def resolve_settings(kernel: Registry, request: RunRequest, tasks: Sequence[TaskSpec], model: ModelSpec
                     ) -> dict[str, ResolvedSettings]:
    """Each task's settings (see :mod:`clue_core.settings`).

    A key given for the whole run (``[settings]``, ``--set``) must be read by at least one
    of its tasks and reaches only those that read it; a key under ``[task.NAME]`` must be
    read by that task.
    """
    declared = {task.name: _declared(kernel, task, model) for task in tasks}
    strangers = sorted(set(request.task_settings) - set(declared))
    if strangers:
        raise ClueError(f"config file: table [task.{strangers[0]}] names a task that is not in this run")
    config = f"config file {request.config_file}" if request.config_file else "config file"
    general = [Layer(f"{config} [settings]", request.settings, user=True),
               *override_layers(request.overrides, request.override_sources)]
    every_name = sorted({name for own in declared.values() for name in own})
    unread = {s.name for task in tasks for s in task.settings if s.model_reads and s.name not in declared[task.name]}
    tables = [Layer(f"{config} [task.{name}]", values) for name, values in request.task_settings.items()]
    for layer in [*general, *tables]:
        for key in layer.values:
            if key in unread:
                raise SettingError(f"setting '{key}' ({layer.source}) is for the models that read it, and "
                                   f"{request.model} does not: it would change nothing in this run")
            if layer in general and not any(_reads(own, key) for own in declared.values()):
                raise unknown_setting(key, every_name, layer.source)
    resolved = {}
    for task in tasks:
        own = declared[task.name]
        users = [
            Layer(general[0].source, {k: v for k, v in request.settings.items() if _reads(own, k)}, user=True),
            Layer(f"{config} [task.{task.name}]", request.task_settings.get(task.name, {}), user=True),
            *override_layers(request.overrides, request.override_sources, lambda k, own=own: _reads(own, k)),
        ]
        plugins = plugin_layers(task, model, request.model)
        # the values of model-naming settings (judge=...) decide which nested declarations exist
        outer = resolve(own, [Layer(x.source, {k: v for k, v in x.values.items() if "." not in k}, x.user)
                              for x in [*plugins, *users]])
        named = _named_models(kernel, task, own, outer)
        nested = {namespace: merge_declarations(spec.settings, f"model {spec.name}")
                  for models in named.values() for _, namespace, spec in models}
        panels = {setting: [nested[namespace] for _, namespace, _ in models] for setting, models in named.items()}
        layers = panel_layers(plugins, _inner_layers(kernel, task, named), users, panels, known=own)
        resolved[task.name] = resolve(own, layers, nested=nested)
    return resolved


def _declared(kernel: Registry, task: TaskSpec, model: ModelSpec) -> dict[str, Any]:
    """Every setting a run of ``task`` with ``model`` reads (a task's ``model_reads`` one where the model reads it)."""
    metric_settings = [s for name in task.metrics for s in kernel.metric(name).settings]
    model_reads = {s.name for s in model.settings}
    task_settings = [s for s in task.settings if not s.model_reads or s.name in model_reads]
    return merge_declarations([*task_settings, *task.decode_settings, *task.reader_settings, *metric_settings,
                               *model.settings],
                              f"{task.name} with {model.name}")


def _named_models(kernel: Registry, task: TaskSpec, declared: dict[str, Any], resolved: ResolvedSettings
                  ) -> dict[str, list[tuple[str, str, ModelSpec]]]:
    """The inner models each ``names_model`` setting names (``judge`` → one, or a panel of several):
    ``(name, namespace, spec)`` in order, the namespace ``judge`` for one model and ``judge.<i>`` for several.

    An inner model answers the task's kind of example (a judge reads open questions), so one
    that cannot is refused here, before any task runs; so is an empty name in a list (``a,,b``).
    """
    named = {}
    for setting, declaration in declared.items():
        value = resolved.values.get(setting)
        if not (declaration.names_model and value):
            continue
        names = model_names(value)
        if "" in names:
            raise SettingError(f"setting '{setting}' ({resolved.sources.get(setting, 'default')}): an empty model "
                               f"name in {str(value)!r}; separate the models of a panel with commas "
                               f"({setting}=a,b,c)")
        models = []
        for name, namespace in zip(names, inner_namespaces(setting, names)):
            inner, _ = kernel.model(name)
            require_kind(task, inner, setting, name if len(names) == 1 else f"{name} ({namespace})")
            models.append((name, namespace, inner))
        named[setting] = models
    return named



def _inner_layers(kernel: Registry, task: TaskSpec, named: dict[str, list[tuple[str, str, ModelSpec]]]
                  ) -> list[Layer]:
    """The recommendations a named inner model (a judge) gets, under its namespace (``judge.``).

    The same layers as the run's own model, lowest first, less the task's general one (a task
    states its judge's settings as ``judge.*`` keys there): the inner model's own
    recommendations (a chat model's ``chat``), its recipe for the task, and the task's
    settings for that model (llm-tiny's short answers). Without them ``judge=llm-tiny`` got
    512 new tokens per judgment where llm-tiny as the answering model gets 32. Each model of a
    panel gets its own, under ``judge.<i>.``.
    """
    layers = []
    for models in named.values():
        for name, namespace, inner in models:
            for layer in plugin_layers(task, inner, name)[1:]:
                layers.append(Layer(f"{layer.source}, as {namespace}",
                                    {f"{namespace}.{key}": value for key, value in layer.values.items()
                                     if "." not in key}))
    return layers


def _reads(declared: dict[str, Any], key: str) -> bool:
    """Whether a task with these declarations reads ``key`` (``judge.x`` when it names a judge)."""
    head, dot, _ = key.partition(".")
    return key in declared or bool(dot and head in declared and declared[head].names_model)

def override_layers(overrides: Mapping[str, Any], sources: Mapping[str, str],
                    keep: Callable[[str], bool] | None = None) -> list[Layer]:
    """The overrides that ``keep`` takes, one settings layer per source (``--set`` unless ``sources``
    names another): a sweep's ``[settings]`` and ``[grid]`` values reach the kernel as overrides, and
    an error about one named ``(--set)``, an option the user never gave, instead of the sweep file's table."""
    by_source: dict[str, dict[str, Any]] = {}
    for key, value in overrides.items():
        if keep is None or keep(key):
            by_source.setdefault(sources.get(key, "--set"), {})[key] = value
    return [Layer(source, values, user=True) for source, values in by_source.items()]

def merge_declarations(settings: Iterable[Setting], where: str) -> dict[str, Setting]:
    """One declaration per name; two steps declaring one name must agree on its type."""
    merged: dict[str, Setting] = {}
    for setting in settings:
        known = merged.get(setting.name)
        if known is not None and (known.type is not setting.type or known.default != setting.default):
            raise ClueError(f"{where}: setting '{setting.name}' is declared twice with different types or defaults")
        merged.setdefault(setting.name, setting)
    return merged


def plugin_layers(task: TaskSpec, model: ModelSpec, model_name: str) -> list[Layer]:
    """The plugin-supplied layers, lowest first (see the module docstring)."""
    layers = [Layer(f"task {task.name}", task.recommendations)]
    by_kind = model.recommendations
    if "*" in by_kind:
        layers.append(Layer(f"model {model.name}", by_kind["*"]))
    if task.kind in by_kind:
        layers.append(Layer(f"model {model.name} ({task.kind})", by_kind[task.kind]))
    if task.name in model.recipes:
        layers.append(Layer(f"model {model.name} recipe for {task.name}", model.recipes[task.name]))
    for key in dict.fromkeys((model.name, model_name)):
        if key in task.model_recommendations:
            layers.append(Layer(f"task {task.name} for {key}", task.model_recommendations[key]))
    return layers


Panels = Mapping[str, Sequence[Mapping[str, Setting]]]


def panel_layers(plugins: Sequence[Layer], inner: Sequence[Layer], users: Sequence[Layer], panels: Panels,
                 known: Iterable[str] = ()) -> list[Layer]:
    """The run's layers with the keys of named models made concrete, lowest first::

        plugin layers (judge.x) < the named models' own layers < plugin layers (judge.<i>.x)
        < user layers (judge.x) < user layers (judge.<i>.x)

    ``panels`` maps a ``names_model`` setting to the declarations of each model it names;
    ``inner`` are those models' own recommendations, already under their namespaces. A user's
    value beats a plugin's and, within each, the i-th model's key beats the key for all,
    whichever layer either came from. With several models ``judge.x`` becomes ``judge.<i>.x``
    for each model declaring ``x``, its source saying so (``--set (judge.x)``; a user key none
    declares: did-you-mean); with one,
    ``judge.0.x`` is ``judge.x``. A user's index past the last model is an error.
    """
    if not panels:
        return [*plugins, *inner, *users]
    shared_plugins, indexed_plugins = _split_panel_keys(plugins, panels, list(known))
    shared_users, indexed_users = _split_panel_keys(users, panels, list(known))
    return [*shared_plugins, *inner, *indexed_plugins, *shared_users, *indexed_users]


def _split_panel_keys(layers: Sequence[Layer], panels: Panels, known: list[str]) -> tuple[list[Layer], list[Layer]]:
    """Each layer as its keys for every named model (and every other key), and its keys for the i-th."""
    shared, indexed = [], []
    for layer in layers:
        general: dict[str, Any] = {}
        specific: dict[str, Any] = {}
        panel: list[Layer] = []  # a key for every model, its source naming it: "--set (judge.stop)"
        for key, value in layer.values.items():
            head, dot, rest = key.partition(".")
            models = panels.get(head) if dot else None
            index, dot, name = rest.partition(".")
            if models is None or (not (dot and index.isdigit()) and len(models) == 1):
                general[key] = value
            elif dot and index.isdigit():
                count = len(models)
                if int(index) >= count and layer.user:
                    last = f"{head}.0." if count == 1 else f"{head}.0. to {head}.{count - 1}."
                    raise SettingError(f"setting '{key}' ({layer.source}): '{head}' names {count} model"
                                       f"{'s' * (count > 1)}, whose keys go under {last} (counting from 0)")
                if int(index) < count and name not in models[int(index)] and layer.user:
                    raise unknown_setting(key, [*(f"{head}.{index}.{n}" for n in models[int(index)]), *known],
                                          layer.source)
                if int(index) < count:
                    specific[f"{head}.{name}" if count == 1 else f"{head}.{int(index)}.{name}"] = value
            else:
                readers = [i for i, declared in enumerate(models) if rest in declared]
                if not readers and layer.user:
                    raise unknown_setting(key, [*{f"{head}.{n}" for d in models for n in d}, *known], layer.source)
                panel.append(Layer(f"{layer.source} ({key})", {f"{head}.{i}.{rest}": value for i in readers},
                                   layer.user))
        shared += [Layer(layer.source, general, layer.user), *panel]
        if specific:
            indexed.append(Layer(layer.source, specific, layer.user))
    return shared, indexed

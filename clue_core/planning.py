"""What a run will do, decided before anything is read or written: the model (resolved once),
every task's settings with their sources, and every check that needs no data.

A run of several tasks must fail on its plan, not after it has written the first tasks: so
the settings, the metrics' checks of their values (:attr:`MetricSpec.check`) and the models
a setting names (a judge) are all checked here, and :func:`check_learner` asks each learner,
once the data is read, whether it can work with it (``shots`` it cannot draw).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from clue_core import data, fetching
from clue_core.errors import ClueError
from clue_core.inner_models import in_namespace
from clue_core.kernel import Kernel
from clue_core.overrides import override_layers
from clue_core.plans import RunRequest, TaskPlan, expand  # the two types re-exported (planning's before)
from clue_core.record import MANIFEST, Manifest, read_manifest
from clue_core.rundir import RunPaths, is_complete
from clue_core.seeds import check_seed
from clue_core.settings import (
    Layer,
    ResolvedSettings,
    SettingError,
    inner_namespaces,
    merge_declarations,
    model_names,
    panel_layers,
    plugin_layers,
    resolve,
    unknown_setting,
)
from clue_core.specs import ModelSpec, TaskSpec
from clue_core.specs import resolve as resolve_ref
from clue_core.splits import TEST, check_known, recorded_splits, task_splits


def default_output_dir(model: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in Path(model).name or model).strip("-")[:80]
    return Path("runs") / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe or 'model'}"  # [:80]: a file name's limit is 255


# -- settings ----------------------------------------------------------------------------


def _declared(kernel: Kernel, task: TaskSpec, model: ModelSpec) -> dict[str, Any]:
    metric_settings = [s for name in task.metrics for s in kernel.metric(name).settings]
    return merge_declarations([*task.settings, *task.decode_settings, *task.reader_settings, *metric_settings,
                               *model.settings],
                              f"{task.name} with {model.name}")


def _named_models(kernel: Kernel, task: TaskSpec, declared: dict[str, Any], resolved: ResolvedSettings
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
            _require_kind(task, inner, setting, name if len(names) == 1 else f"{name} ({namespace})")
            models.append((name, namespace, inner))
        named[setting] = models
    return named


def _require_kind(task: TaskSpec, model: ModelSpec, setting: str, name: str) -> None:
    """A model named by ``setting`` (a judge) answers the task's kind of example, or one line says so."""
    if task.kind not in model.kinds:
        raise ClueError(f"{task.name}: setting '{setting}' names model {name}, which cannot answer "
                        f"{task.kind} examples (it answers: {', '.join(model.kinds)})")


def resolve_settings(kernel: Kernel, request: RunRequest, tasks: Sequence[TaskSpec], model: ModelSpec
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
    for layer in general:
        for key in layer.values:
            if not any(_reads(own, key) for own in declared.values()):
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


def _inner_layers(kernel: Kernel, task: TaskSpec, named: dict[str, list[tuple[str, str, ModelSpec]]]
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


# -- planning ----------------------------------------------------------------------------


def check_trainable(task: TaskSpec, model: ModelSpec, argument: str | None, request: RunRequest) -> None:
    """Refuse runs whose predictions could only come from a model that never learnt anything."""
    if not model.trains:
        return
    if request.no_train and argument is None:
        raise ClueError(f"--no-train needs a trained model: pass the model/ folder of an earlier run "
                        f"(or hf:<checkpoint>), not {request.model!r}")
    if not request.no_train and "train" not in task.splits:
        raise ClueError(f"{task.name} has no training data; predict it with a model trained on another task, "
                        f"e.g. --model runs/<run>/<task>/model --no-train")


def _check_output_dir(output_dir: Path) -> None:
    """A folder (or one to be made) that is not a run itself: a run nested in another's is read as its files."""
    if (output_dir / MANIFEST).is_file():
        raise ClueError(f"output directory {output_dir} is a run of {output_dir.name} (it holds {MANIFEST}); "
                        f"pass the folder that holds it, {output_dir.parent}")
    for parent in (output_dir, *output_dir.parents):
        if parent.exists():
            if not parent.is_dir():
                raise ClueError(f"output directory {output_dir}: {parent} is a file, not a folder")
            break


def plan_run(kernel: Kernel, request: RunRequest) -> tuple[ModelSpec, str | None, Path, list[TaskPlan]]:
    """Resolve names, the model (once) and every task's settings; nothing is read or written."""
    if not request.tasks:
        raise ClueError("name at least one task (see 'clue-core list tasks')")
    if request.resume and request.overwrite:
        raise ClueError("choose --resume or --overwrite, not both: --resume continues an interrupted run, "
                        "--overwrite discards it and starts over")
    if request.limit is not None and request.limit < 1:
        raise ClueError(f"{'--first' if request.first else '--limit'} must be at least 1, got {request.limit}")
    check_seed(request.seed)  # here, not at run time: --dry-run and a sweep's planning refuse it too
    tasks = [kernel.task(name) for name in dict.fromkeys(request.tasks)]
    model, argument = kernel.model(request.model)
    for task in tasks:
        if task.kind not in model.kinds:
            raise ClueError(f"model {model.name} does not support {task.kind} tasks like {task.name} "
                            f"(it runs: {', '.join(model.kinds) or 'none'})")
        check_trainable(task, model, argument, request)
    settings = resolve_settings(kernel, request, tasks, model)
    output_dir = request.output_dir or default_output_dir(request.model)
    _check_output_dir(output_dir)
    # the one plan-expansion point: a task's plugin may make several plans of its plan (FewCLUE's split=all)
    plans = [plan for t in tasks for plan in expand(TaskPlan(t, RunPaths(output_dir / t.name), settings[t.name]))]
    folders: dict[Path, str] = {}
    for plan in plans:  # a task named like another's expanded plan's folder (x.split-0) would share it
        other = folders.setdefault(plan.paths.final, plan.task.name)
        if other != plan.task.name:
            raise ClueError(f"tasks {other} and {plan.task.name} would both run in {plan.paths.final}; "
                            f"run them with different --output-dir")
    check_known(request.splits, tasks)
    for plan in plans:
        plan.predict = task_splits(plan.task, request.splits)
        check_metric_settings(kernel, plan)
        check_inner_models(kernel, plan)
    return model, argument, output_dir, plans


def check_metric_settings(kernel: Kernel, plan: TaskPlan) -> None:
    """Each metric's ``check`` of its setting values (a reference run that must exist)."""
    for name in plan.task.metrics:
        metric = kernel.metric(name)
        if metric.check is not None:
            resolve_ref(metric.check)(plan.settings.values_for(metric.settings))


def check_inner_models(kernel: Kernel, plan: TaskPlan) -> None:
    """Build every model a setting names (a judge, or each judge of a panel) once, as scoring will, so
    that its own settings (an ``openai:`` judge without ``judge.base_url``) are refused before any task runs."""
    load = model_loader(kernel, plan.task, plan.settings)
    for name, setting in plan.settings.declared.items():
        if setting.names_model and plan.settings.values.get(name):
            names = model_names(plan.settings.values[name])
            for model, namespace in zip(names, inner_namespaces(name, names)):
                load(model, namespace)


def check_learner(plan: TaskPlan, trains: bool) -> None:
    """The learner's ``check_plan(splits)`` over the splits it will see (few-shot demos it cannot draw)."""
    check = getattr(plan.learner, "check_plan", None)
    if callable(check):
        used = ("train", "dev") if trains else ("dev",)
        check({split: plan.splits[split].examples for split in used if split in plan.splits})


def settle_resume(plan: TaskPlan, request: RunRequest, *, main: bool) -> None:
    """Once per task, under its lock, before its data is read: whether it resumes its staging folder
    (``plan.resume``; :func:`check_resume_matches` once that data is read) or is a complete run that
    ``--resume`` leaves as it is (``plan.done``, checked here); replacing or discarding work unasked is
    refused. A swap a kill interrupted is finished first; a rank other than 0 follows what it finds."""
    paths = plan.paths
    if not main:
        plan.resume = request.resume and paths.interrupted()
        return
    paths.recover()
    if paths.final.exists() and not paths.final.is_dir():
        raise ClueError(f"{paths.final} is a file, not a run directory")
    staged, holds = paths.interrupted(), paths.final.exists() and any(paths.final.iterdir())
    if request.resume:
        plan.resume, plan.done = staged, not staged and holds and is_complete(paths.final)
        if not staged and holds and not plan.done:  # the user's files, or a damaged run
            raise ClueError(f"{paths.final} holds no complete run and there is no interrupted one to resume "
                            f"({paths.staging}); pass --overwrite to replace it, or use another --output-dir")
        if plan.done:
            check_resume_matches(plan, request, paths.final)
        elif staged and paths.staging.is_dir():  # a kill between a file's temporary sibling and its rename
            for stray in paths.staging.rglob(".*.????????.tmp"):  # left atomic's '.<name>.<hex>.tmp': not the run's
                stray.unlink(missing_ok=True)
    elif staged and not request.overwrite:
        raise ClueError(f"{paths.final}: an interrupted run is in {paths.staging}; pass --resume to continue it "
                        f"or --overwrite to discard it and start over")
    elif holds and not request.overwrite:
        raise ClueError(f"{paths.final} already holds a run; pass --overwrite to replace it (the old run stays "
                        f"until the new one is complete) or --resume to continue it")


def check_resume_matches(plan: TaskPlan, request: RunRequest, folder: Path | None = None) -> None:
    """Resume only the same model, task, data and schedule-changing settings; else say what differs.

    ``folder`` is a complete run that ``--resume`` would leave as it is: its data is not read
    again, but a different model, seed, schedule, data source or setting that changes the
    scores (``report``: few-shot ``shots``) must still be said, not answered with the old
    run's results.
    """
    complete = folder is not None
    try:
        manifest = read_manifest(folder if complete else plan.paths.staging)
    except ClueError as exc:
        raise ClueError(f"{exc}; use --overwrite to start over") from None
    want, had = _resume_identity(plan, request, manifest, complete)
    differ = [key for key in want if want[key] != had.get(key)]
    if "--splits" in differ:  # other splits read other files: the data differs because of them
        differ = [key for key in differ if key != "data"]
    if not differ:
        return
    detail = ", ".join("set of data files" if k == "data" and not complete else f"{k} ({had.get(k)!r} → {want[k]!r})"
                       for k in differ[:4])
    if complete:
        raise ClueError(f"{folder} is a complete run with a different {detail}: --resume leaves it as it is; "
                        f"use --overwrite to replace it or another --output-dir")
    raise ClueError(f"cannot resume {plan.paths.staging}: it was started with a different {detail}; "
                    f"use --overwrite to start over")


def _resume_identity(plan: TaskPlan, request: RunRequest, manifest: Manifest, complete: bool
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """What this run asks for and what the run in ``manifest`` was made with, key by key."""
    recorded = {**manifest.settings, **manifest.schedule}
    shown = plan.settings.shown()  # a run older than a schedule setting ran with its default: not refused for it
    names = {name for name in plan.settings.flagged("schedule")
             if name in recorded or shown[name] != plan.settings.declared[name].default}
    if complete:  # settings that change the scores; a run older than a setting is not refused for it
        names |= {name for name in plan.settings.flagged("report") if name in recorded}
    data = manifest.source
    want = {"model": request.model, "task": plan.task.name, "seed": request.seed, "limit": request.limit,
            "--first": request.first,
            **{f"setting {k}": _as_json(shown[k]) for k in sorted(names)}}
    had = {"model": manifest.model, "task": manifest.task, "seed": manifest.seed, "limit": manifest.limit,
           "--first": manifest.first,
           **{f"setting {k}": _as_json(recorded.get(k)) for k in sorted(names)}}
    had["--splits"] = ",".join(recorded_splits(manifest, plan.task))
    want["--splits"] = had["--splits"] if request.splits is None else ",".join(plan.predict)
    if not complete:
        want["data"], had["data"] = plan.checksums, data.get("files")
    elif "source" in data:
        want["data"] = _data_source(request.sample, request.data_dir)
        had["data"] = _data_source(data["source"] == "sample", data.get("user_data_dir"))
    return want, had


def _data_source(sample: bool, user_data_dir: str | Path | None) -> str:
    """Where a run's data came from, as far as it is known without reading it again."""
    if sample:
        return "the bundled sample"
    return os.path.normpath(str(user_data_dir)) if user_data_dir else "the downloaded data"


def _as_json(value: Any) -> Any:
    """``value`` as it reads back from a manifest (a tuple is a list there)."""
    return json.loads(json.dumps(value))


def model_loader(kernel: Kernel, task: TaskSpec, settings: ResolvedSettings) -> Callable[[str, str], Any]:
    """``context.load_model(name, namespace)``: another model (a judge) with the settings under
    ``<namespace>.``; declared defaults where the run resolved none."""

    def load(name: str, namespace: str) -> Any:
        spec, argument = kernel.model(name)
        _require_kind(task, spec, namespace, name)
        try:
            return resolve_ref(spec.factory)(argument, task, settings.values_for(spec.settings, namespace))
        except ClueError as exc:  # its settings named as the user writes them: judge.1.base_url, not base_url
            raise in_namespace(exc, namespace, name, spec.settings) from None

    return load


def describe_data(task: TaskSpec, request: RunRequest, fetchers: Mapping[str, fetching.FetcherSpec],
                  owners: Mapping[tuple[str, str], str] | None = None) -> str:
    """Where the data will come from, without downloading anything (for ``--dry-run``)."""
    if request.sample:
        return f"bundled sample ({data.sample_dir(task)})"
    if request.data_dir:
        return str(request.data_dir)
    return fetching.describe(task, fetchers, owners)


def dry_run_plan(kernel: Kernel, request: RunRequest) -> list[dict[str, Any]]:
    """What ``run`` would do, with every setting's value and source; reads and writes nothing."""
    model, argument, _, plans = plan_run(kernel, request)
    return [{
        "task": plan.task.name,
        "model": model.name if argument is None else f"{model.name} ({argument})",
        "data": describe_data(plan.task, request, kernel.fetchers, kernel.owner),
        "run_dir": str(plan.paths.final),
        "train": model.trains and not request.no_train,
        "seed": request.seed,
        "splits": list(plan.predict),
        "submission_files": [v.submission_file for v in plan.task.test_versions if TEST in plan.predict],
        "settings": _explained(model, argument, plan.settings.rows()),
    } for plan in plans]


def _explained(model: ModelSpec, argument: str | None, rows: list[tuple[str, Any, str]]) -> list[dict[str, Any]]:
    """``--dry-run``'s rows: a value the model resolves when it loads as it will here (:attr:`ModelSpec.explain`)."""
    said = resolve_ref(model.explain)(model.name, argument, {n: v for n, v, _ in rows}) if model.explain else {}
    return [{"name": n, "value": said[n][0], "source": said[n][1] if s == "default" else f"{s}; {said[n][1]}"}
            if n in said else {"name": n, "value": v, "source": s} for n, v, s in rows]

"""One run of one task: read → fit → predict dev → decode → score → predict tests → write.

The run directory (``<output-dir>/<task>/``) holds ``manifest.json`` (versions of clue-core
and every plugin, the resolved config, seed, data checksums, status), ``metrics.json``,
per-example predictions as JSON Lines under ``predictions/``, the leaderboard files under
``submission/`` and the trained model under ``model/``. Every file is written atomically;
the manifest says ``"status": "complete"`` only once everything else is in place.
"""

from __future__ import annotations

import os
import platform
import random
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core import __version__, data
from clue_core.atomic import write_json, write_jsonl
from clue_core.errors import ClueError, DataError, PluginError
from clue_core.examples import Example, Prediction, SplitData, as_split_data, gold_of, kind_of
from clue_core.kernel import Kernel
from clue_core.specs import ModelSpec, TaskSpec, resolve

MANIFEST = "manifest.json"
METRICS = "metrics.json"


@dataclass
class RunRequest:
    """Everything ``clue-core run`` resolved from flags and the config file."""

    tasks: list[str]
    model: str
    data_dir: Path | None = None
    sample: bool = False
    output_dir: Path | None = None
    seed: int = 42
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    task_hyperparameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    no_train: bool = False
    resume: bool = False
    overwrite: bool = False
    command: list[str] = field(default_factory=list)


@dataclass
class TaskResult:
    task: str
    run_dir: Path
    metrics: dict[str, float]
    primary_metric: str
    counts: dict[str, int]
    submission_files: list[str]
    notes: list[str]


def is_main_process() -> bool:
    """Only rank 0 writes files when torchrun / accelerate start several processes."""
    return os.environ.get("RANK", "0") in ("", "0")


def default_output_dir(model: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in Path(model).name or model).strip("-")
    return Path("runs") / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe or 'model'}"


def resolve_hyperparameters(task: TaskSpec, model: ModelSpec, request: RunRequest) -> dict[str, Any]:
    """Task defaults < model recommendations (flat, by kind, by task) < config file < ``--set``."""
    merged: dict[str, Any] = dict(task.hyperparameters)
    model_hp = dict(model.hyperparameters)
    by_kind = model_hp.pop("by_kind", {}) or {}
    by_task = model_hp.pop("by_task", {}) or {}
    merged.update(model_hp)
    merged.update(by_kind.get(task.kind, {}))
    merged.update(by_task.get(task.name, {}))
    merged.update(request.hyperparameters)
    merged.update(request.task_hyperparameters.get(task.name, {}))
    merged.update(request.overrides)
    merged["seed"] = request.seed
    merged["primary_metric"] = task.primary_metric
    merged["resume"] = request.resume
    merged["task"] = task.name
    return merged


def check_run_dir(run_dir: Path, request: RunRequest) -> None:
    """Refuse to overwrite a previous run unless asked to (``--overwrite``) or resuming."""
    if not run_dir.exists() or not any(run_dir.iterdir()) or request.resume:
        return
    if not request.overwrite:
        raise ClueError(f"{run_dir} already holds a run; pass --overwrite to replace it or --resume to continue it")


def read_split(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    reader = resolve(task.reader)
    result = as_split_data(reader(data_dir, split))
    for example in result.examples:
        if kind_of(example) != task.kind:
            raise PluginError(f"task {task.name}: reader returned a {kind_of(example)} example for a {task.kind} task")
    return result


def predict_checked(learner: Any, examples: Sequence[Example], task: TaskSpec, decode: Callable | None
                    ) -> list[Prediction]:
    """Predict, apply the task's decode step, and insist on one prediction per example, in order."""
    if not examples:
        return []
    predictions = list(learner.predict(examples))
    if decode is not None:
        predictions = list(decode(examples, predictions))
    if len(predictions) != len(examples):
        raise PluginError(
            f"{task.name}: the model returned {len(predictions)} predictions for {len(examples)} examples"
        )
    by_id = {str(p.id): p for p in predictions}
    ordered = [by_id.get(str(e.id)) for e in examples]
    missing = [e.id for e, p in zip(examples, ordered) if p is None]
    if missing:
        raise PluginError(f"{task.name}: no prediction for example id {missing[0]!r} ({len(missing)} missing)")
    return ordered  # type: ignore[return-value]


def score(kernel: Kernel, task: TaskSpec, examples: Sequence[Example], predictions: Sequence[Prediction | None]
          ) -> dict[str, float]:
    """All of the task's metrics merged into one mapping."""
    results: dict[str, float] = {}
    if not any(gold_of(e) is not None for e in examples):
        return results
    for name in task.metrics:
        compute = resolve(kernel.metric(name).compute)
        results.update(compute(examples, predictions))
    return results


def bind_decode(task: TaskSpec, config: dict[str, Any]) -> Callable | None:
    """The task's decode step; one that accepts ``config`` gets the run's (e.g. ``chid_decode=greedy``)."""
    if not task.decode:
        return None
    import functools
    import inspect

    decode = resolve(task.decode)
    try:
        accepts_config = "config" in inspect.signature(decode).parameters
    except (TypeError, ValueError):  # builtins without a signature
        accepts_config = False
    return functools.partial(decode, config=config) if accepts_config else decode


def prediction_records(examples: Sequence[Example], predictions: Sequence[Prediction]) -> list[dict[str, Any]]:
    records = []
    for example, prediction in zip(examples, predictions):
        record: dict[str, Any] = {"id": example.id, "prediction": prediction.value}
        gold = gold_of(example)
        if gold is not None:
            record["gold"] = [text for text, _ in gold] if isinstance(gold, tuple) else gold
        if prediction.scores is not None:
            record["scores"] = [round(float(s), 6) for s in prediction.scores]
        records.append(record)
    return records


def plugin_versions(kernel: Kernel) -> dict[str, Any]:
    return {
        p.name: {"distribution": p.distribution, "version": p.version, "status": p.status} for p in kernel.plugins
    }


def describe_data(task: TaskSpec, request: RunRequest) -> str:
    """Where the data will come from, without downloading anything (for ``--dry-run``)."""
    if request.sample:
        return f"bundled sample ({data.sample_dir(task)})"
    if request.data_dir:
        return str(request.data_dir)
    cached = data.cached_task_dir(task)
    if cached.is_dir():
        return str(cached)
    return f"{cached} (downloaded on first run from {task.source.url if task.source else 'nowhere: no source'})"


def run_task(kernel: Kernel, request: RunRequest, task: TaskSpec, run_dir: Path,
             echo: Callable[[str], None] = print) -> TaskResult:
    """Run one task end to end; see the module docstring for what lands in ``run_dir``."""
    main = is_main_process()
    model_spec, argument = kernel.model(request.model)
    if task.kind not in model_spec.kinds:
        raise ClueError(f"model {model_spec.name} does not support {task.kind} tasks like {task.name}")
    check_trainable(task, argument, request)
    config = resolve_hyperparameters(task, model_spec, request)
    random.seed(request.seed)

    data_dir = data.resolve_task_data(task, data_dir=request.data_dir, sample=request.sample)
    splits: dict[str, SplitData] = {}
    for split in task.splits:
        if split in ("train", "dev"):
            splits[split] = read_split(task, data_dir, split)
    notes = [f"{split}: {note}" for split, part in splits.items() for note in part.notes]
    tests: dict[str, SplitData] = {}
    for version in task.test_versions:
        try:
            tests[version.version] = read_split(task, data_dir, version.split)
        except DataError as exc:
            notes.append(f"test {version.version}: skipped ({exc})")
            continue
        notes.extend(f"test {version.version}: {note}" for note in tests[version.version].notes)
    for note in notes:
        echo(f"[{task.name}] {note}")

    train = splits.get("train", SplitData(())).examples
    dev = splits.get("dev", SplitData(())).examples
    files_read = sorted({f for part in [*splits.values(), *tests.values()] for f in part.files})
    manifest: dict[str, Any] = {
        "status": "running",
        "task": task.name,
        "kind": task.kind,
        "model": request.model,
        "model_spec": model_spec.name,
        "clue_core": __version__,
        "plugins": plugin_versions(kernel),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "command": request.command,
        "seed": request.seed,
        "world_size": int(os.environ.get("WORLD_SIZE", "1") or 1),
        "config": config,
        "no_train": request.no_train,
        "data": {
            "source": "sample" if request.sample else "dir",
            "data_dir": str(data_dir),
            "user_data_dir": str(request.data_dir) if request.data_dir else None,
            "files": data.file_checksums([Path(f) for f in files_read]) if files_read else {},
        },
        "counts": {"train": len(train), "dev": len(dev), **{f"test {v}": len(s) for v, s in tests.items()}},
        "test_versions": {v.version: v.submission_file for v in task.test_versions if v.version in tests},
        "notes": notes,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    factory = resolve(model_spec.factory)
    learner = factory(argument, task, config)  # before any file: a bad setting leaves nothing behind
    decode = bind_decode(task, config)
    created = main and not (run_dir.exists() and any(run_dir.iterdir()))
    if main:
        run_dir.mkdir(parents=True, exist_ok=True)
        write_json(run_dir / MANIFEST, manifest)

    try:
        def score_dev(predictions: Sequence[Prediction]) -> dict[str, float]:
            decoded = list(decode(dev, predictions)) if decode else list(predictions)
            by_id = {str(p.id): p for p in decoded}
            return score(kernel, task, dev, [by_id.get(str(e.id)) for e in dev])

        started = time.perf_counter()
        if not request.no_train:
            learner.fit(train, dev, config, run_dir / "training", score_dev)
            if main:
                learner.save(run_dir / "model")
        train_seconds = time.perf_counter() - started

        dev_predictions = predict_checked(learner, dev, task, decode)
        metrics = score(kernel, task, dev, dev_predictions)
        writer = kernel.writer(task.writer)
        write = resolve(writer.write)
        submission_files: list[str] = []
        test_predictions: dict[str, list[Prediction]] = {}
        for version in task.test_versions:
            if version.version in tests:
                examples = tests[version.version].examples
                test_predictions[version.version] = predict_checked(learner, examples, task, decode)

        if main:
            write_jsonl(run_dir / "predictions" / "dev.jsonl", prediction_records(dev, dev_predictions))
            for version in task.test_versions:
                if version.version not in tests:
                    continue
                examples = tests[version.version].examples
                predictions = test_predictions[version.version]
                write_jsonl(run_dir / "predictions" / f"test-{version.version}.jsonl",
                            prediction_records(examples, predictions))
                write(run_dir / "submission" / version.submission_file, examples, predictions)
                submission_files.append(version.submission_file)
            primary = metrics.get(task.primary_metric)
            write_json(run_dir / METRICS, {
                "task": task.name, "model": request.model, "split": "dev", "primary_metric": task.primary_metric,
                "primary": primary, "dev": metrics, "counts": manifest["counts"],
                "train_seconds": round(train_seconds, 3), "group": task.group,
            })
            manifest.update(status="complete", finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                            submission_files=submission_files)
            write_json(run_dir / MANIFEST, manifest)
    except ClueError:
        if created:  # nothing of a run that failed on user input is left to block the retry
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    return TaskResult(task.name, run_dir, metrics, task.primary_metric, manifest["counts"], submission_files, notes)


def check_trainable(task: TaskSpec, argument: str | None, request: RunRequest) -> None:
    """Refuse runs whose predictions could only come from a model that never learnt anything."""
    if request.no_train and argument is None:
        raise ClueError(f"--no-train needs a trained model: pass the model/ folder of an earlier run "
                        f"(or hf:<checkpoint>), not {request.model!r}")
    if not request.no_train and "train" not in task.splits:
        raise ClueError(f"{task.name} has no training data; predict it with a model trained on another task, "
                        f"e.g. --model runs/<run>/ocnli/model --no-train")


def prepare_run_dirs(kernel: Kernel, request: RunRequest) -> list[tuple[TaskSpec, Path]]:
    """Resolve tasks and their run directories, refusing to clobber earlier runs, before any work starts."""
    if not request.tasks:
        raise ClueError("name at least one task (see 'clue-core list tasks')")
    output_dir = request.output_dir or default_output_dir(request.model)
    plan = []
    for name in dict.fromkeys(request.tasks):
        task = kernel.task(name)
        run_dir = output_dir / task.name
        if is_main_process():
            check_run_dir(run_dir, request)
        plan.append((task, run_dir))
    _, argument = kernel.model(request.model)  # fail early on an unknown model
    for task, _ in plan:
        check_trainable(task, argument, request)
    return plan


def replace_old_run(run_dir: Path) -> None:
    """``--overwrite``: the user asked for the old run to go."""
    if run_dir.exists() and is_main_process():
        shutil.rmtree(run_dir)


def run(kernel: Kernel, request: RunRequest, echo: Callable[[str], None] = print) -> list[TaskResult]:
    plan = prepare_run_dirs(kernel, request)
    results = []
    for task, run_dir in plan:
        if request.overwrite and not request.resume:
            replace_old_run(run_dir)
        echo(f"[{task.name}] running with model {request.model} → {run_dir}")
        results.append(run_task(kernel, request, task, run_dir, echo))
    return results


def results_table(results: Sequence[TaskResult]) -> list[list[str]]:
    rows = [["task", "primary", "dev metrics", "dev n", "submission files", "run dir"]]
    for r in results:
        primary = r.metrics.get(r.primary_metric)
        rows.append([
            r.task,
            f"{r.primary_metric} {primary:.2f}" if primary is not None else "-",
            ", ".join(f"{k} {v:.2f}" for k, v in r.metrics.items()) or "-",
            str(r.counts.get("dev", 0)),
            ", ".join(r.submission_files) or "-",
            str(r.run_dir),
        ])
    return rows


def dry_run_plan(kernel: Kernel, request: RunRequest) -> list[dict[str, Any]]:
    plan = []
    output_dir = request.output_dir or default_output_dir(request.model)
    model_spec, argument = kernel.model(request.model)
    for name in dict.fromkeys(request.tasks):
        task = kernel.task(name)
        plan.append({
            "task": task.name,
            "model": model_spec.name if argument is None else f"{model_spec.name} ({argument})",
            "data": describe_data(task, request),
            "run_dir": str(output_dir / task.name),
            "train": not request.no_train,
            "submission_files": [v.submission_file for v in task.test_versions],
            "hyperparameters": resolve_hyperparameters(task, model_spec, request),
        })
    return plan

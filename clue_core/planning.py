"""What a run will do, decided in one pass before any data is read (:func:`plan_run`): a run of several
tasks fails on its plan, not after writing its first tasks. The request's own checks and output folder,
the seed, the model and tasks looked up once, their kind and training checks, every task's settings in
one call (:mod:`clue_core.run_settings`), the plan-expansion point, ``--splits``, the metrics' and named
models' checks (:func:`~clue_core.inner_models.check_plan`) and, for a run, its secrets registered, its
locks taken and ``--resume`` settled (:mod:`clue_core.resume`). The runner then reads the data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clue_core import data, fetching, redaction
from clue_core.errors import ClueError
from clue_core.inner_models import check_plan
from clue_core.kernel import Kernel
from clue_core.plans import RunPlan, RunRequest, TaskPlan, expand  # RunRequest, TaskPlan: re-exported
from clue_core.record import MANIFEST
from clue_core.resume import settle
from clue_core.run_settings import resolve_settings
from clue_core.rundir import RunPaths, first_missing, hold
from clue_core.seeds import check_seed
from clue_core.settings import redact_command
from clue_core.specs import ModelSpec, TaskSpec
from clue_core.specs import resolve as resolve_ref
from clue_core.splits import TEST, check_known, task_splits


def default_output_dir(model: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in Path(model).name or model).strip("-")[:80]
    return Path("runs") / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe or 'model'}"  # [:80]: a file name's limit is 255


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


def plan_run(kernel: Kernel, request: RunRequest, *, rank: int | None = None,
             echo: Callable[[str], None] = print) -> RunPlan:
    """The run ``request`` asks for, every check that needs no data done; nothing is read. With ``rank`` (a run,
    not ``--dry-run``) its folders are locked and ``--resume`` settled too, the locks held until ``release``."""
    if not request.tasks:
        raise ClueError("name at least one task (see 'clue-core list tasks')")
    if request.resume and request.overwrite:
        raise ClueError("choose --resume or --overwrite, not both: --resume continues an interrupted run, "
                        "--overwrite discards it and starts over")
    if request.limit is not None and request.limit < 1:
        raise ClueError(f"{'--first' if request.first else '--limit'} must be at least 1, got {request.limit}")
    output_dir = request.output_dir or default_output_dir(request.model)
    _check_output_dir(output_dir)
    check_seed(request.seed)  # here, not at run time: --dry-run and a sweep's planning refuse it too
    tasks = [kernel.task(name) for name in dict.fromkeys(request.tasks)]
    model, argument = kernel.model(request.model)
    for task in tasks:  # refuse predictions that could only come from a model that never learnt anything
        if task.kind not in model.kinds:
            raise ClueError(f"model {model.name} does not support {task.kind} tasks like {task.name} "
                            f"(it runs: {', '.join(model.kinds) or 'none'})")
        if model.trains and request.no_train and argument is None:
            raise ClueError(f"--no-train needs a trained model: pass the model/ folder of an earlier run "
                            f"(or hf:<checkpoint>), not {request.model!r}")
        if model.trains and not request.no_train and "train" not in task.splits:
            raise ClueError(f"{task.name} has no training data; predict it with a model trained on another "
                            f"task, e.g. --model runs/<run>/<task>/model --no-train")
    settings = resolve_settings(kernel, request, tasks, model)
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
    for plan in plans:
        check_plan(kernel, plan)
    run = RunPlan(model, argument, output_dir, plans)
    if rank is None:  # --dry-run: nothing is taken, nothing written
        return run
    # the lock file names the command: a --set api_key=… in it would sit on disk for the whole run
    command = redact_command(request.command, {name for p in plans for name in p.settings.secret_names()})
    for plan in plans:  # before anything is written or printed: this run's secrets are hidden everywhere
        redaction.register_settings(plan.settings.declared, plan.settings.values)
    command = redaction.redact(command)  # and the values of the registered ones, however it quotes them
    main = rank == 0
    try:
        if main:  # what the output folder's making creates, asked first: a failed run removes it again
            run.created = first_missing(output_dir)
            hold(output_dir, [plan.paths for plan in plans], command, echo, run.locks)
        settle(plans, request, main=main)  # under the locks: what --resume finds, each task once; the runner trusts it
    except BaseException:
        run.release(failed=True)
        raise
    return run


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
    run = plan_run(kernel, request)
    model, argument = run.model, run.argument
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
    } for plan in run.plans]


def _explained(model: ModelSpec, argument: str | None, rows: list[tuple[str, Any, str]]) -> list[dict[str, Any]]:
    """``--dry-run``'s rows: a value the model resolves when it loads as it will here (:attr:`ModelSpec.explain`)."""
    said = resolve_ref(model.explain)(model.name, argument, {n: v for n, v, _ in rows}) if model.explain else {}
    return [{"name": n, "value": said[n][0], "source": said[n][1] if s == "default" else f"{s}; {said[n][1]}"}
            if n in said else {"name": n, "value": v, "source": s} for n, v, s in rows]


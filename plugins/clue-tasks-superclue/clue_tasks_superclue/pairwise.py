"""Pairwise judging against a reference model's run: reading its answers, and checking it.

``--set reference_run=DIR`` names the reference model's run: an output folder holding
``superclue/`` or the superclue task folder itself. It must be a complete run of this task
(its ``manifest.json`` says ``task`` superclue and ``status`` complete, it has its
``metrics.json``; not a staging folder) whose dev prediction records each carry an ``id``,
once, and a ``prediction``; anything else is refused in one line when the run is planned
(:func:`check_settings`) and again when it is scored. The folder is read by the kernel's
run reader (``clue_core.plugin.read_run``), like every other run folder.

Every question whose id is in both runs is judged twice, with the model's answer first (as
A) and then second (as B); the verdict rule (both orders must agree) is
:func:`clue_tasks_superclue.win_tie_loss.by_orders`, the one ``compare`` reports too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import MANIFEST, ClueError, InputError, RunRecord, read_manifest, read_run
from clue_tasks_superclue.run_folder import no_run_here, task_folder

TASK = "superclue"
SETTING = "setting 'reference_run'"
#: The suffixes of the runner's folders beside a run (``.<task>.staging``, ``.<task>.replaced``).
UNFINISHED = (".staging", ".replaced")


@dataclass(frozen=True, slots=True)
class ReferenceAnswer:
    """The reference model's answer to one question: its last answer and every turn's record."""

    prediction: Any
    raw: Any


def reference_record(run: str | Path) -> RunRecord:
    """The complete superclue run in ``run`` (the output or the task folder), with its predictions.

    Only a finished run of this task will do, as ``clue-core compare`` demands: a folder
    merely holding predictions may be another task's run (an AFQMC run's labels judged as
    answers), a run still being written (``status`` not complete) or a staging folder that a
    kill left behind, and pairwise verdicts against any of them mean nothing.
    """
    folder = Path(run).expanduser()
    if not folder.is_dir():
        raise ClueError(f"{SETTING}: {folder}: " + ("not a folder" if folder.exists() else "no such run folder"))
    task_dir = task_folder(folder, TASK)
    if task_dir.name.startswith(".") and task_dir.name.endswith(UNFINISHED):
        raise ClueError(f"{SETTING}: {task_dir}: a staging folder (a run being written, or one a kill "
                        f"interrupted), not a finished run; name the run's output folder")
    manifest_path = task_dir / MANIFEST
    if not manifest_path.is_file():
        raise ClueError(f"{SETTING}: " + (no_run_here(folder, TASK) if task_dir == folder else
                                          f"{manifest_path}: missing, so {task_dir} is not a run folder"))
    try:
        manifest = read_manifest(task_dir)
        if manifest.task != TASK:
            raise ClueError(f"{manifest_path}: field 'task': a run of {manifest.task!r}, not {TASK!r}")
        if not manifest.complete:
            raise ClueError(f"{manifest_path}: field 'status': {manifest.status!r}, not a complete run "
                            f"(an interrupted run is finished with --resume)")
        record = read_run(task_dir)
    except ClueError as exc:
        raise ClueError(f"{SETTING}: {exc}") from None
    if not record.has_predictions("dev"):
        raise ClueError(f"{SETTING}: {record.prediction_file('dev')}: missing, so {task_dir} is not a complete run")
    return record


def read_reference(run: str | Path) -> dict[str, ReferenceAnswer]:
    """The reference run's answers by question id (as a string), every record checked."""
    record = reference_record(run)
    answers: dict[str, ReferenceAnswer] = {}
    lines: dict[str, int] = {}
    path = record.prediction_file("dev")
    try:
        for prediction in record.predictions("dev"):
            key = str(prediction.id)
            if key in lines:
                raise InputError(path, f"duplicate id {prediction.id!r} (also on line {lines[key]})",
                                 line=prediction.line, field="id")
            lines[key] = prediction.line
            answers[key] = ReferenceAnswer(prediction.prediction, prediction.raw)
    except ClueError as exc:
        raise ClueError(f"{SETTING}: {exc}") from None
    if not answers:
        raise ClueError(f"{SETTING}: {path}: no answers")
    return answers


def check_settings(settings: Mapping[str, Any]) -> None:
    """``MetricSpec.check`` of the superclue metric, run when the run is planned.

    A wrong ``reference_run`` used to surface only when scoring, after the answers (and,
    in a run of several tasks, the earlier tasks) were written; checked here, it stops the
    run before anything is. Scoring reads the run again (it may be gone by then).
    """
    reference_run = str(settings.get("reference_run") or "")
    if reference_run:
        require_judge(str(settings.get("judge") or ""))
        read_reference(reference_run)


def require_judge(judge: str) -> None:
    """Pairwise verdicts need a judge: refuse a reference run without one."""
    if not judge:
        raise ClueError(f"{SETTING} needs a judge for pairwise judging: add --set judge=MODEL")

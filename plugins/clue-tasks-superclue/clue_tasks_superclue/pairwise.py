"""Pairwise judging against a reference model's run: its answers, and the verdict rule.

``--set reference_run=DIR`` names the reference model's run: an output folder holding
``superclue/`` or the superclue task folder itself. It must be a complete run of this task
(its ``manifest.json`` says ``task`` superclue and ``status`` complete; not a staging
folder) whose ``predictions/dev.jsonl`` records each carry an ``id``, once, and a
``prediction``; anything else is refused in one line when the run is planned
(:func:`check_settings`) and again when it is scored.

Every question whose id is in both runs is judged twice, with the model's answer first (as
A) and then second (as B), so that a judge's preference for a position cannot decide: the
model **wins** only when both orders prefer it, **loses** only when both prefer the
reference, and anything else (a verdict that flips with position, or a tie in either order)
is a **tie**. An order whose verdict does not parse even after the
repair prompt leaves the question unjudged pairwise (verdict null), never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, InputError, iter_jsonl

TASK = "superclue"
PREDICTIONS = Path("predictions") / "dev.jsonl"
MANIFEST = "manifest.json"
SETTING = "setting 'reference_run'"
#: The suffixes of the runner's folders beside a run (``.<task>.staging``, ``.<task>.replaced``).
UNFINISHED = (".staging", ".replaced")


@dataclass(frozen=True, slots=True)
class ReferenceAnswer:
    """The reference model's answer to one question: its last answer and every turn's record."""

    prediction: Any
    raw: Any


def reference_file(run: str | Path) -> Path:
    """The predictions of the complete superclue run in ``run`` (the output or the task folder).

    Only a finished run of this task will do, as ``clue-core compare`` demands: a folder
    merely holding ``predictions/dev.jsonl`` may be another task's run (an AFQMC run's labels
    judged as answers), a run still being written (``status`` not complete) or a staging
    folder that a kill left behind, and pairwise verdicts against any of them mean nothing.
    """
    folder = Path(run).expanduser()
    if not folder.is_dir():
        raise ClueError(f"{SETTING}: {folder}: " + ("not a folder" if folder.exists() else "no such run folder"))
    task_dir = folder / TASK if (folder / TASK).is_dir() else folder
    if task_dir.name.startswith(".") and task_dir.name.endswith(UNFINISHED):
        raise ClueError(f"{SETTING}: {task_dir}: a staging folder (a run being written, or one a kill "
                        f"interrupted), not a finished run; name the run's output folder")
    manifest_path = task_dir / MANIFEST
    if task_dir == folder and not manifest_path.is_file():
        raise _no_run_here(folder)
    manifest = _manifest(manifest_path)
    if manifest.get("task") != TASK:
        raise ClueError(f"{SETTING}: {manifest_path}: field 'task': a run of {manifest.get('task')!r}, not {TASK!r}")
    if manifest.get("status") != "complete":
        raise ClueError(f"{SETTING}: {manifest_path}: field 'status': {manifest.get('status')!r}, not a complete "
                        f"run (an interrupted run is finished with --resume)")
    path = task_dir / PREDICTIONS
    if not path.is_file():
        raise ClueError(f"{SETTING}: {path}: missing, so {task_dir} is not a complete run")
    return path


def _no_run_here(folder: Path) -> ClueError:
    """Why an output folder holds no superclue run: an interrupted one, other tasks' runs, or nothing."""
    if (folder / f".{TASK}.staging").is_dir():
        why = f"only an interrupted run, .{TASK}.staging; 'clue-core run --resume' finishes it"
    else:
        others = sorted(p.parent.name for p in folder.glob(f"*/{MANIFEST}") if not p.parent.name.startswith("."))
        why = f"it holds runs of {', '.join(others)}" if others else f"no {TASK}/ folder and no {MANIFEST}"
    return ClueError(f"{SETTING}: {folder}: no {TASK} run here ({why})")


def _manifest(path: Path) -> dict[str, Any]:
    """The run's manifest as an object, or one line saying why it is not a run."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ClueError(f"{SETTING}: {path}: missing, so {path.parent} is not a run folder") from None
    except (OSError, ValueError) as exc:
        raise ClueError(f"{SETTING}: {path}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise ClueError(f"{SETTING}: {path}: expected a JSON object")
    return data


def read_reference(run: str | Path) -> dict[str, ReferenceAnswer]:
    """The reference run's answers by question id (as a string), every record checked."""
    path = reference_file(run)
    try:
        answers = _answers(path)
    except InputError as exc:
        raise ClueError(f"{SETTING}: {exc}") from None
    if not answers:
        raise ClueError(f"{SETTING}: {path}: no answers")
    return answers


def _answers(path: Path) -> dict[str, ReferenceAnswer]:
    answers: dict[str, ReferenceAnswer] = {}
    lines: dict[str, int] = {}
    for line, record in iter_jsonl(path):
        if "id" not in record:
            raise InputError(path, "missing", line=line, field="id")
        if "prediction" not in record:
            raise InputError(path, "missing", line=line, field="prediction")
        key = str(record["id"])
        if key in lines:
            raise InputError(path, f"duplicate id {record['id']!r} (also on line {lines[key]})", line=line,
                             field="id")
        lines[key] = line
        answers[key] = ReferenceAnswer(record["prediction"], record.get("raw"))
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


def winner(letter: str | None, model_first: bool) -> str | None:
    """An order's winner as ``"model"``, ``"reference"``, ``"tie"`` (None: unparseable)."""
    if letter is None:
        return None
    if letter == "平局":
        return "tie"
    model_letter = "A" if model_first else "B"
    return "model" if letter == model_letter else "reference"


def verdict(orders: list[Mapping[str, Any]]) -> str | None:
    """``"win"``, ``"tie"``, ``"loss"`` from both orders' winners (see the module docstring)."""
    winners = [order.get("winner") for order in orders]
    if len(winners) != 2 or None in winners:
        return None
    if winners == ["model", "model"]:
        return "win"
    if winners == ["reference", "reference"]:
        return "loss"
    return "tie"

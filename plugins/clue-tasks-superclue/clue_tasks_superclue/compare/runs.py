"""Read SuperCLUE run folders strictly: the model's name and every question's scoring.

A comparison is only as good as its inputs, so a folder that is not a complete run of
the task, a record without ``scoring`` or with a malformed one, and duplicate ids all stop
the command with one line naming the file, the line and the field (the record format is
the one the ``superclue`` task writes; see docs/report.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError, InputError
from clue_core.jsonio import iter_jsonl
from clue_core.rundir import MANIFEST, METRICS, PREDICTIONS_DIR

METHODS = ("judge", "constraints", "tool_call")
VERDICTS = ("win", "tie", "loss")
DEV = f"{PREDICTIONS_DIR}/dev.jsonl"


@dataclass(frozen=True)
class Question:
    """One question of one run, as scored: points on the judge's 0-10 scale (None: unjudged)."""

    id: str
    line: int
    dimension: str
    category: str
    method: str
    points: float | None
    grade: Any = None
    reasons: str = ""
    pairwise: str | None = None     # win / tie / loss, or None when the pairwise judgment failed
    has_pairwise: bool = False
    question: str = ""
    answer: str = ""

    @property
    def judge_graded(self) -> bool:
        """Graded by the judge with a parsed grade (what a person can agree with or not)."""
        return self.method == "judge" and self.points is not None and self.grade is not None

    @property
    def score(self) -> float | None:
        """The question's score on 0-100."""
        return None if self.points is None else self.points * 10


@dataclass
class Run:
    """One complete run of the task: where it is, whose it is, and its questions by id."""

    path: Path
    model: str
    kind: str | None
    parameters: int | None
    settings: dict[str, Any]
    questions: dict[str, Question] = field(default_factory=dict)

    @property
    def judged(self) -> list[Question]:
        return [q for q in self.questions.values() if q.points is not None]


def task_folder(path: Path, task: str) -> Path:
    """The run's task folder: ``path/<task>`` when it exists, else ``path`` itself."""
    return path / task if (path / task).is_dir() else path


def _json_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ClueError(f"{path.parent}: not a complete run (no {path.name})") from None
    except (OSError, ValueError) as exc:
        raise ClueError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise ClueError(f"{path}: expected a JSON object")
    return data


def _joined(value: Any) -> str:
    """Turns (or answers) as one text; several are numbered so a reader sees the dialogue."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value[0] if len(value) == 1 else "\n".join(f"[{i}] {v}" for i, v in enumerate(value, 1))
    return ""


def _question(path: Path, line: int, record: dict[str, Any]) -> Question:
    raw_id = record.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise InputError(path, f"expected a string or integer id, got {raw_id!r}", line=line, field="id")
    qid = str(raw_id)

    def fail(where: str, message: str) -> InputError:
        return InputError(path, message, line=line, field=where, record=qid)

    scoring = record.get("scoring")
    if scoring is None:
        raise fail("scoring", "missing: the record was not scored (run the superclue task with its judging "
                              "metric; predictions from other tasks cannot be compared)")
    if not isinstance(scoring, dict):
        raise fail("scoring", f"expected an object, got {type(scoring).__name__}")
    texts = {}
    for key in ("dimension", "category"):
        value = scoring.get(key)
        if not isinstance(value, str) or not value.strip():
            raise fail(f"scoring.{key}", f"expected a non-empty string, got {value!r}")
        texts[key] = value.strip()
    method = scoring.get("method")
    if method not in METHODS:
        raise fail("scoring.method", f"expected one of {', '.join(METHODS)}, got {method!r}")
    points = scoring.get("points")
    if points is not None and (isinstance(points, bool) or not isinstance(points, (int, float))
                               or not math.isfinite(points) or not 0 <= points <= 10):
        raise fail("scoring.points", f"expected a number from 0 to 10 or null, got {points!r}")
    judge = scoring.get("judge")
    if judge is not None and not isinstance(judge, dict):
        raise fail("scoring.judge", f"expected an object, got {type(judge).__name__}")
    judge = judge or {}
    pairwise = scoring.get("pairwise")
    verdict = None
    if pairwise is not None:
        if not isinstance(pairwise, dict):
            raise fail("scoring.pairwise", f"expected an object, got {type(pairwise).__name__}")
        verdict = pairwise.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            raise fail("scoring.pairwise.verdict", f"expected win, tie, loss or null, got {verdict!r}")
    raw = record.get("raw") if isinstance(record.get("raw"), dict) else {}
    prediction = record.get("prediction")
    return Question(
        id=qid, line=line, dimension=texts["dimension"], category=texts["category"], method=method,
        points=None if points is None else float(points), grade=judge.get("grade"),
        reasons=judge.get("reasons") if isinstance(judge.get("reasons"), str) else "",
        pairwise=verdict, has_pairwise=pairwise is not None,
        question=_joined(record.get("question")) or _joined(raw.get("prompts")),
        answer=_joined(raw.get("answers")) or (prediction if isinstance(prediction, str) else ""))


def _no_run_here(path: Path, task: str) -> ClueError:
    """Why ``path`` holds no run of ``task``: a folder of other tasks' runs, an interrupted run, or nothing."""
    if (path / f".{task}.staging").is_dir():
        why = f"only an interrupted run, .{task}.staging; 'clue-core run --resume' continues it"
    else:
        others = sorted(p.parent.name for p in path.glob(f"*/{MANIFEST}") if not p.parent.name.startswith("."))
        why = (f"it holds runs of {', '.join(others)}; --task names the task to compare" if others
               else f"no {task}/ folder and no {MANIFEST}")
    return ClueError(f"{path}: no {task} run here ({why})")


def read_run(path: Path, task: str) -> Run:
    """The run in ``path`` (a run folder holding ``<task>/``, or the task folder), checked."""
    folder = task_folder(path, task)
    if not folder.is_dir():
        raise ClueError(f"{path}: no such run folder")
    if folder == path and not (folder / MANIFEST).is_file():
        raise _no_run_here(path, task)
    manifest = _json_object(folder / MANIFEST)
    if manifest.get("status") != "complete":
        raise ClueError(f"{folder}: not a complete run (status {manifest.get('status')!r} in {MANIFEST})")
    metrics = _json_object(folder / METRICS)
    if metrics.get("task") != task:
        raise ClueError(f"{folder / METRICS}: field 'task': a run of {metrics.get('task')!r}, not {task!r} "
                        f"(--task names the task to compare)")
    model = metrics.get("model")
    if not isinstance(model, str) or not model.strip():
        raise ClueError(f"{folder / METRICS}: field 'model': expected the model's name, got {model!r}")
    info = metrics.get("model_info") if isinstance(metrics.get("model_info"), dict) else {}
    parameters = info.get("parameters")
    settings = manifest.get("settings") if isinstance(manifest.get("settings"), dict) else {}
    run = Run(path=folder, model=model.strip(),
              kind=metrics.get("model_category") if isinstance(metrics.get("model_category"), str) else None,
              parameters=parameters if isinstance(parameters, int) and not isinstance(parameters, bool) else None,
              settings=settings)
    records = folder / DEV
    if not records.is_file():
        raise ClueError(f"{folder}: not a complete run (no {DEV})")
    for line, record in iter_jsonl(records):
        question = _question(records, line, record)
        if question.id in run.questions:
            first = run.questions[question.id].line
            raise InputError(records, f"duplicate id (first on line {first})", line=line, field="id",
                             record=question.id)
        run.questions[question.id] = question
    if not run.questions:
        raise ClueError(f"{records}: no questions")
    return run

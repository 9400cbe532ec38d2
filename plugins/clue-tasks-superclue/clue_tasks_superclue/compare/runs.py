"""Read run folders of the SuperCLUE family strictly: the model's name, its task and every question's scoring.

A comparison is only as good as its inputs, so a folder that is not a complete run of
the task, a record without ``scoring`` or with a malformed one, and duplicate ids all stop
the command with one line naming the file, the line and the field. The folder is read by the
kernel's one run reader (``clue_core.plugin.read_run``): the manifest, the metrics and each
prediction record's ``id`` and ``prediction`` are checked there; what is checked here is the
``scoring`` each record carries, in either of the family's two forms:

* **judged** (the ``superclue`` task): ``dimension``, ``category``, ``method``, ``points`` 0-10
  or null (unjudged), and the judge's and pairwise parts (see docs/superclue.md);
* **verifiable** (``superclue-cpif``): ``passed`` (a boolean), ``reason``, ``checker_error``; a pass
  is worth 10 points and a fail 0 on the same 0-10 scale, so one aggregation, one win/tie/loss
  rule and one rating fit serve both (two passes or two fails tie, a pass beats a fail). The
  record's ``passed`` decides even when ``checker_error`` is true (the task scored it so; compare
  warns how many there were). Such a record may name its ``dimension`` and ``category``; without
  them it is filed under 精确指令遵循 (Hard), the dimension CPIF measures.

A run's task is its ``metrics.json`` ``task``; ``--task`` only picks the folder inside an output
folder holding several tasks' runs (without it, the one SuperCLUE-family folder there).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.plugin import MANIFEST, ClueError, InputError, PredictionRecord, read_run
from clue_tasks_superclue.dimensions import DIMENSIONS
from clue_tasks_superclue.run_folder import no_run_here, task_folder
from clue_tasks_superclue.win_tie_loss import VERDICTS

METHODS = ("judge", "constraints", "tool_call")
#: The method a verifiable (pass/fail) record is given, and its points for a pass and a fail.
VERIFIABLE = "verifiable"
PASS_POINTS, FAIL_POINTS = 10.0, 0.0
#: Where a verifiable record that names no dimension is filed.
VERIFIABLE_DIMENSION = "精确指令遵循"
#: The tasks whose folders compare finds in an output folder without ``--task``, in this order.
FAMILY = ("superclue", "superclue-cpif")


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
    checker_error: bool = False

    @property
    def judge_graded(self) -> bool:
        """Graded by the judge with a parsed grade (what a person can agree with or not)."""
        return self.method == "judge" and self.points is not None and self.grade is not None


@dataclass
class Run:
    """One complete run of the task: where it is, whose it is, and its questions by id."""

    path: Path
    model: str
    kind: str | None
    parameters: int | None
    settings: dict[str, Any]
    task: str = "superclue"   # the run's metrics.json's task
    questions: dict[str, Question] = field(default_factory=dict)

    @property
    def checker_errors(self) -> int:
        """Verifiable questions whose checker failed (scored as the record says, but worth a warning)."""
        return sum(q.checker_error for q in self.questions.values())


def _joined(value: Any) -> str:
    """Turns (or answers) as one text; several are numbered so a reader sees the dialogue."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value[0] if len(value) == 1 else "\n".join(f"[{i}] {v}" for i, v in enumerate(value, 1))
    return ""


def _question(path: Path, prediction: PredictionRecord) -> Question:
    """One record's question as scored; its ``scoring`` checked, the field at fault named."""
    qid, line, record = str(prediction.id), prediction.line, prediction.data

    def fail(where: str, message: str) -> InputError:
        return InputError(path, message, line=line, field=where, record=qid)

    scoring = record.get("scoring")
    if scoring is None:
        raise fail("scoring", "missing: the record was not scored (run the superclue task with its judging "
                              "metric; predictions from other tasks cannot be compared)")
    if not isinstance(scoring, dict):
        raise fail("scoring", f"expected an object, got {type(scoring).__name__}")
    if "method" not in scoring and "passed" in scoring:
        return _verifiable(scoring, qid, line, record, fail)
    texts = {}
    for key in ("dimension", "category"):
        value = scoring.get(key)
        if not isinstance(value, str) or not value.strip():
            raise fail(f"scoring.{key}", f"expected a non-empty string, got {value!r}")
        texts[key] = value.strip()
    method = scoring.get("method")
    if method not in METHODS:
        raise fail("scoring.method", f"expected one of {', '.join(METHODS)}, got {method!r} "
                                     "(or no method and 'passed', a verifiable record)")
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
    answer = record.get("prediction")
    return Question(
        id=qid, line=line, dimension=texts["dimension"], category=texts["category"], method=method,
        points=None if points is None else float(points), grade=judge.get("grade"),
        reasons=judge.get("reasons") if isinstance(judge.get("reasons"), str) else "",
        pairwise=verdict, has_pairwise=pairwise is not None,
        question=_joined(record.get("question")) or _joined(raw.get("prompts")),
        answer=_joined(raw.get("answers")) or (answer if isinstance(answer, str) else ""))


def _verifiable(scoring: dict[str, Any], qid: str, line: int, record: dict[str, Any],
                fail: Callable[[str, str], InputError]) -> Question:
    """A pass/fail record (``superclue-cpif``): 10 points for a pass, 0 for a fail."""
    passed = scoring.get("passed")
    if not isinstance(passed, bool):
        raise fail("scoring.passed", f"expected true or false, got {passed!r}")
    checker_error = scoring.get("checker_error", False)
    if not isinstance(checker_error, bool):
        raise fail("scoring.checker_error", f"expected true or false, got {checker_error!r}")
    reason = scoring.get("reason", "")
    if not isinstance(reason, str):
        raise fail("scoring.reason", f"expected a string, got {type(reason).__name__}")
    texts = {}
    for key in ("dimension", "category"):
        value = scoring.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise fail(f"scoring.{key}", f"expected a non-empty string, got {value!r}")
        texts[key] = value.strip() if isinstance(value, str) else None
    dimension = texts["dimension"] or VERIFIABLE_DIMENSION
    category = texts["category"] or DIMENSIONS.get(dimension)
    if category is None:
        raise fail("scoring.category", f"missing: {dimension!r} is not a SuperCLUE dimension, so the record "
                                       "must name its category")
    answer = record.get("prediction")
    return Question(id=qid, line=line, dimension=dimension, category=category, method=VERIFIABLE,
                    points=PASS_POINTS if passed else FAIL_POINTS, reasons=reason,
                    question=_joined(record.get("question")), answer=answer if isinstance(answer, str) else "",
                    checker_error=checker_error)


def find_folder(path: Path, task: str | None) -> Path:
    """The task folder ``path`` names: itself (it holds a run), ``path/<task>``, or the family's one there."""
    if (path / MANIFEST).is_file():
        return path
    if not path.is_dir():
        raise ClueError(f"{path}: no such run folder")
    if task is not None:
        folder = task_folder(path, task)
        if folder == path:
            raise ClueError(no_run_here(path, task, "; --task names the task to compare"))
        return folder
    found = [name for name in FAMILY if (path / name).is_dir()]
    if len(found) > 1:
        raise ClueError(f"{path}: holds runs of {', '.join(found)}; --task names the one to compare")
    if found:
        return path / found[0]
    staged = next((name for name in FAMILY if (path / f".{name}.staging").is_dir()), FAMILY[0])
    raise ClueError(no_run_here(path, staged, "; --task names the task to compare"))


def load_run(path: Path, task: str | None = None) -> Run:
    """The run in ``path`` (a run folder holding ``<task>/``, or the task folder), checked.

    ``task`` picks the folder inside an output folder of several tasks' runs; a task folder given
    itself must then be a run of that task (else any task: its records decide what it holds).
    """
    folder = find_folder(path, task)
    record = read_run(folder)
    metrics = record.metrics
    if task is not None and metrics.task != task:
        raise ClueError(f"{metrics.path}: field 'task': a run of {metrics.task!r}, not {task!r} "
                        f"(--task names the task to compare)")
    model = metrics.model
    if not isinstance(model, str) or not model.strip():
        raise ClueError(f"{metrics.path}: field 'model': expected the model's name, got {model!r}")
    parameters = metrics.model_info.get("parameters")
    category = metrics.data.get("model_category")
    run = Run(path=folder, model=model.strip(), task=metrics.task, kind=category if isinstance(category, str) else None,
              parameters=parameters if isinstance(parameters, int) and not isinstance(parameters, bool) else None,
              settings=record.manifest.settings)
    records = record.prediction_file("dev")
    for prediction in record.predictions("dev"):
        question = _question(records, prediction)
        if question.id in run.questions:
            first = run.questions[question.id].line
            raise InputError(records, f"duplicate id (first on line {first})", line=question.line, field="id",
                             record=question.id)
        run.questions[question.id] = question
    if not run.questions:
        raise ClueError(f"{records}: no questions")
    return run

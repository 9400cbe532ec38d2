"""Read run folders of the SuperCLUE family strictly: the model's name, its task and every question's scoring.

A comparison is only as good as its inputs, so a folder that is not a complete run of
the task, a record without ``scoring`` or with a malformed one, and duplicate ids all stop
the command with one line naming the file, the line and the field. The folder is read by the
kernel's one run reader (``clue_core.plugin.read_run``): the manifest, the metrics and each
prediction record's ``id`` and ``prediction`` are checked there; what is checked here is the
``scoring`` each record carries, in either of the family's two forms:

* **judged** (the ``superclue`` task): ``dimension``, ``category``, ``method``, ``points`` 0-10
  or null (unjudged), and the judge's and pairwise parts (see docs/superclue.md);
  a panel's ``scoring.judges`` (each judge's ``judge`` index, ``model``, ``score``, ``band``)
  and its pairwise ``orders`` are checked too, for the judges' agreement
  (:mod:`clue_tasks_superclue.compare.judges`), and every record must name the same panel;
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
from clue_tasks_superclue.compare.comparison_file import GRADES
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
    #: A panel's judges (``scoring.judges``: each ``judge``, ``model``, ``score``, ``band``), checked, and the
    #: pairwise orders (each ``judge``, ``model_first``, ``winner``, ``prompt``); empty for a single judge.
    judges: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)
    orders: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)
    judge_aggregate: str | None = None   # the panel's rule (``scoring.judge.aggregate``), when it names one

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
    panel: tuple[str, ...] = ()   # the judges' models in order, when the records carry scoring.judges

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
    grade = judge.get("grade")
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, (int, float))
                              or not math.isfinite(grade)):
        raise fail("scoring.judge.grade", f"expected a number or null, got {grade!r}")
    pairwise = scoring.get("pairwise")
    verdict = None
    if pairwise is not None:
        if not isinstance(pairwise, dict):
            raise fail("scoring.pairwise", f"expected an object, got {type(pairwise).__name__}")
        verdict = pairwise.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            raise fail("scoring.pairwise.verdict", f"expected win, tie, loss or null, got {verdict!r}")
    judges = _judges(scoring.get("judges"), fail)
    raw = record.get("raw") if isinstance(record.get("raw"), dict) else {}
    answer = record.get("prediction")
    return Question(
        id=qid, line=line, dimension=texts["dimension"], category=texts["category"], method=method,
        points=None if points is None else float(points), grade=grade,
        reasons=judge.get("reasons") if isinstance(judge.get("reasons"), str) else "",
        pairwise=verdict, has_pairwise=pairwise is not None,
        question=_joined(record.get("question")) or _joined(raw.get("prompts")),
        answer=_joined(raw.get("answers")) or (answer if isinstance(answer, str) else ""),
        judges=judges, orders=_orders(pairwise, fail) if judges else (),
        judge_aggregate=judge["aggregate"] if judges and isinstance(judge.get("aggregate"), str) else None)


def _judges(value: Any, fail: Callable[[str, str], InputError]) -> tuple[dict[str, Any], ...]:
    """A panel's ``scoring.judges``, each judge's entry checked (what compare's agreement reads of it)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise fail("scoring.judges", f"expected a list, got {type(value).__name__}")
    judges = []
    for index, item in enumerate(value):
        where = f"scoring.judges[{index}]"
        if not isinstance(item, dict):
            raise fail(where, f"expected an object, got {type(item).__name__}")
        if item.get("judge") != index or isinstance(item.get("judge"), bool):
            raise fail(f"{where}.judge", f"expected {index} (the judges in their order), got {item.get('judge')!r}")
        model, score, band = item.get("model"), item.get("score"), item.get("band")
        if not isinstance(model, str) or not model.strip():
            raise fail(f"{where}.model", f"expected the judge's model, got {model!r}")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                  or not math.isfinite(score) or not 0 <= score <= 10):
            raise fail(f"{where}.score", f"expected a grade from 0 to 10 or null, got {score!r}")
        if band is not None and band not in GRADES:
            raise fail(f"{where}.band", f"expected one of {', '.join(GRADES)} or null, got {band!r}")
        judges.append({"judge": index, "model": model.strip(), "score": score, "band": band})
    return tuple(judges)


def _orders(pairwise: Any, fail: Callable[[str, str], InputError]) -> tuple[dict[str, Any], ...]:
    """The pairwise orders of a panel's record: each judge's two winners, for position consistency."""
    orders = (pairwise or {}).get("orders") or []
    if not isinstance(orders, list):
        raise fail("scoring.pairwise.orders", f"expected a list, got {type(orders).__name__}")
    found = []
    for index, order in enumerate(orders):
        where = f"scoring.pairwise.orders[{index}]"
        if not isinstance(order, dict):
            raise fail(where, f"expected an object, got {type(order).__name__}")
        judge = order.get("judge", 0)
        if isinstance(judge, bool) or not isinstance(judge, int) or judge < 0:
            raise fail(f"{where}.judge", f"expected a judge's index, got {judge!r}")
        found.append({"judge": judge, "model_first": bool(order.get("model_first")), "winner": order.get("winner"),
                      "prompt": order.get("prompt")})
    return tuple(found)


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
        if question.judges:
            models = tuple(j["model"] for j in question.judges)
            if run.panel and models != run.panel:
                raise InputError(records, f"the judges {', '.join(models)} are not the run's panel "
                                          f"{', '.join(run.panel)} (as on earlier lines)",
                                 line=question.line, field="scoring.judges", record=question.id)
            run.panel = models
        run.questions[question.id] = question
    if not run.questions:
        raise ClueError(f"{records}: no questions")
    return run

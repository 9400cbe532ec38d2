"""A model's prediction values are checked by the task's kind (``clue_core.scoring``'s ``_check_values``,
the kind's ``check_prediction``, the check a leaderboard file gets) before any metric sees them.

A model returning a malformed value (a label not among the task's labels, a choice index past the
example's choices, an answer that is no string) is one ``error:`` line naming the task and the example,
exit 2, and no run folder is published; ``None`` is no answer (an LLM's unparsable one), scored as wrong.
The model here answers what the test tells it, on the bundled samples of AFQMC (classification), FewCLUE's
CHID and C3 (multiple choice) and CMRC2018 (span extraction).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from clue_core.examples import gold_of
from clue_core.kernel import Kernel
from clue_core.plugin import MODEL_FILE, ModelSpec, Prediction, hookimpl, write_json
from clue_tasks_classic import hooks as classic
from clue_tasks_fewclue import hooks as fewclue
from clue_tasks_mrc import hooks as mrc

#: what the model answers for an example: set by each test (the gold value by default)
Answer = Callable[[Any], Any]
ANSWER: dict[str, Answer] = {}


def right(example: Any) -> Any:
    """The example's gold as a prediction value: the label, the choice index, the first answer's text."""
    gold = gold_of(example)
    return gold[0][0] if isinstance(gold, tuple) else gold


class Told:
    """Answers dev as ``ANSWER["dev"]`` says; a test example (no gold) a value of the right shape, so only
    dev's answers are under test."""

    def __init__(self, task: Any) -> None:
        self.task = task

    def fit(self, train: Sequence[Any], dev: Sequence[Any], context: Any) -> None:
        pass

    def predict(self, examples: Sequence[Any]) -> list[Prediction]:
        answer = ANSWER.get("dev", right)
        shaped = {"classification": self.task.labels[:1] or ("",), "multiple_choice": (0,)}.get(self.task.kind, ("",))
        return [Prediction(e.id, answer(e) if gold_of(e) is not None else shaped[0]) for e in examples]

    def save(self, directory: Path) -> None:
        write_json(Path(directory) / MODEL_FILE, {"model": "told"})


def create(argument: str | None, task: Any, settings: dict[str, Any]) -> Told:
    return Told(task)


class _ToldPlugin:
    @hookimpl
    def clue_models(self) -> list[ModelSpec]:
        return [ModelSpec("told", f"{__name__}:create", ("classification", "span", "multiple_choice"),
                          "answers what the test tells it")]


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(classic, "clue-tasks-classic")
    isolated_kernel.register(mrc, "clue-tasks-mrc")
    isolated_kernel.register(fewclue, "clue-tasks-fewclue")
    isolated_kernel.register(_ToldPlugin(), "told")
    assert {p.status for p in isolated_kernel.plugins} == {"ok"}, isolated_kernel.plugins
    return isolated_kernel


@pytest.fixture(autouse=True)
def _answer() -> Any:
    ANSWER.clear()
    yield ANSWER
    ANSWER.clear()


def _dev(kernel: Kernel, task: str) -> list[Any]:
    from clue_core.data import sample_dir
    from clue_core.reading import read_split

    spec = kernel.task(task)
    return list(read_split(spec, sample_dir(spec), "dev").examples)


def _run(run_cli, kernel: Kernel, task: str, out: Path):
    return run_cli("run", task, "--model", "told", "--sample", "-o", out, kernel=kernel)


KERNEL_CHECK = "error: {task}: the model's prediction for example {id!r}: "


@pytest.mark.parametrize(("task", "bad", "error"), [
    ("afqmc", "2", KERNEL_CHECK + "'2' is not a label of afqmc"),
    ("afqmc", 1, KERNEL_CHECK + "expected a label string, got 1 (a class index? the leaderboard wants label "
                                "strings such as '1')"),
    ("fewclue-chid", 7, KERNEL_CHECK + "expected a choice index 0..6, got 7"),
    ("fewclue-chid", "2", KERNEL_CHECK + 'expected a choice index 0..6, got "2"'),
    # C3's own decode (padding choices) refuses an index past the choices before the kind's check does
    ("c3", 9, "error: c3 question {id}: predicted choice 9 but it has {choices} choices"),
    ("cmrc2018", 3, KERNEL_CHECK + "expected an answer string, got 3"),
    ("cmrc2018", ["an", "answer"], KERNEL_CHECK + 'expected an answer string, got ["an", "answer"]'),
], ids=["label-not-in-labels", "label-index", "choice-out-of-range", "choice-string", "c3-decode",
        "span-number", "span-list"])
def test_a_malformed_value_is_one_line_naming_the_task_and_example(run_cli, kernel: Kernel, tmp_path: Path,
                                                                   task: str, bad: Any, error: str) -> None:
    dev = _dev(kernel, task)
    target = dev[1]  # one example's answer is malformed, the others right
    ANSWER["dev"] = lambda e: bad if e.id == target.id else right(e)
    out = tmp_path / "out"
    result = _run(run_cli, kernel, task, out)
    assert result.exit_code == 2, result.output
    error = error.format(task=task, id=target.id, choices=len(getattr(target, "choices", ())))
    lines = result.stderr.strip().splitlines()  # the run's progress lines, then the error
    assert lines[-1] == error and [line for line in lines if not line.startswith(f"[{task}] ")] == [error], lines
    assert "Traceback" not in result.output
    published = [p for p in out.rglob("manifest.json") if not any(part.startswith(".") for part in p.parts)]
    assert published == [], published  # no run folder of the task (a staging folder is no run)
    assert not (out / task).exists()


@pytest.mark.parametrize("task", ["afqmc", "fewclue-chid", "c3", "cmrc2018"])
def test_a_model_returning_none_for_some_examples_scores_them_as_wrong(run_cli, kernel: Kernel, tmp_path: Path,
                                                                       task: str) -> None:
    dev = _dev(kernel, task)
    unanswered = {e.id for e in dev[::3]}
    ANSWER["dev"] = lambda e: None if e.id in unanswered else right(e)
    out = tmp_path / "out"
    result = _run(run_cli, kernel, task, out)
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / task / "metrics.json").read_text(encoding="utf-8"))
    primary = metrics["dev"][metrics["primary_metric"]]
    assert primary == pytest.approx(100 * (len(dev) - len(unanswered)) / len(dev))
    records = [json.loads(line) for line in (out / task / "predictions" / "dev.jsonl").open(encoding="utf-8")]
    assert sorted(str(r["id"]) for r in records if r["prediction"] is None) == sorted(map(str, unanswered))


def test_every_right_answer_scores_full_marks(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    """The model itself is sound: what the two tests above change is all that differs."""
    for task in ("afqmc", "fewclue-chid", "c3", "cmrc2018"):
        result = _run(run_cli, kernel, task, tmp_path / task)
        assert result.exit_code == 0, result.output
        metrics = json.loads((tmp_path / task / task / "metrics.json").read_text(encoding="utf-8"))
        assert metrics["dev"][metrics["primary_metric"]] == 100.0, (task, metrics["dev"])

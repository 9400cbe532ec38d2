"""``evaluate`` scores every split a run scores, names the field the task's file format uses, and prints
counts whole; run-folder selection lives in ``clue_leaderboard.runs``.

Before these fixes (review of issue 30's leaderboard plugin):

- ``clue-core evaluate kgclue FILE --split test_public`` was refused ("has no split 'test_public'"),
  though a run scores that split beside dev (``TaskSpec.scored_splits``, FewCLUE's and KgCLUE's);
- a refused value was always ``field 'label'``, where KgCLUE's ``kgclue_predict.json`` and FewCLUE's
  ``chidf_predict.json`` hold it in ``answer`` (``evaluate`` and ``submit`` alike);
- the table printed KgCLUE's ``malformed`` count as ``0.000`` (``clue-core run``'s table prints a metric's
  declared ``counts`` whole);
- ``submission.py`` was at 398 lines of 400, run-folder selection and leaderboard checks in one module.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core import api
from clue_core.kernel import Kernel
from clue_tasks_fewclue import hooks as fewclue_plugin
from clue_tasks_kgclue import hooks as kgclue_plugin

KGCLUE = Path(kgclue_plugin.__file__).parent / "samples" / "kgclue"
FEWCLUE = Path(fewclue_plugin.__file__).parent / "samples"


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    isolated_kernel.register(kgclue_plugin, "clue-tasks-kgclue", distribution="clue-tasks-kgclue")
    isolated_kernel.register(fewclue_plugin, "clue-tasks-fewclue", distribution="clue-tasks-fewclue")
    assert all(p.status == "ok" for p in isolated_kernel.plugins), [p.error for p in isolated_kernel.plugins]
    return isolated_kernel


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _one_error(result) -> str:
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    return line


# -- a task's scored splits ---------------------------------------------------------------------------

@pytest.mark.parametrize(("task", "gold"), [("kgclue", KGCLUE / "test_public.json"),
                                            ("fewclue-eprstmt", FEWCLUE / "eprstmt" / "test_public.json")])
def test_a_scored_split_is_scored_as_dev_is(run_cli, kernel, task: str, gold: Path) -> None:
    result = run_cli("evaluate", task, gold, "--sample", "--split", "test_public", "--json", kernel=kernel)
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["task"] == task and scores["split"] == "test_public"
    assert scores["examples"] == len(_lines(gold))
    primary = kernel.task(task).primary_metric
    assert scores[primary] == 100.0  # the gold file scored against itself
    assert api.evaluate(task, gold, sample=True, split="test_public", kernel=kernel) == scores


def test_a_wrong_answer_on_the_scored_split_scores_lower(run_cli, kernel, tmp_path: Path) -> None:
    records = _lines(KGCLUE / "test_public.json")
    records[0]["answer"] = "nobody ||| nothing ||| nowhere"
    path = _write(tmp_path / "answers.json", records)
    scores = api.evaluate("kgclue", path, sample=True, split="test_public", kernel=kernel)
    assert scores["em_all"] == pytest.approx(100 * (len(records) - 1) / len(records))


def test_an_unknown_split_lists_the_scored_ones(run_cli, kernel) -> None:
    result = run_cli("evaluate", "kgclue", KGCLUE / "dev.json", "--sample", "--split", "nope", kernel=kernel)
    assert _one_error(result) == "error: task kgclue has no split 'nope' (has: train, dev, test_public, 1.0)"


def test_a_test_submission_scored_against_a_scored_split_is_warned_about(run_cli, kernel, tmp_path: Path) -> None:
    path = tmp_path / "eprstmt_predict.json"
    path.write_bytes((FEWCLUE / "eprstmt" / "test_public.json").read_bytes())
    result = run_cli("evaluate", "fewclue-eprstmt", path, "--sample", "--split", "test_public", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert result.stderr == ("warning: eprstmt_predict.json is named like a fewclue-eprstmt test submission, "
                             "but it is scored against test_public\n")


# -- the field a refused value is in ----------------------------------------------------------------

@pytest.mark.parametrize(("task", "record", "message"), [
    ("kgclue", {"id": 0, "answer": ["s", "p", "o"]},
     "field 'answer': expected an answer string 'subject ||| predicate ||| object', got list"),
    ("fewclue-chid", {"id": 0, "answer": 99}, "field 'answer': expected a choice index 0..6, got 99"),
    ("fewclue-eprstmt", {"id": 835, "label": "Neutral"}, "field 'label': 'Neutral' is not a label of fewclue-eprstmt"),
])
def test_a_refused_value_names_the_field_of_the_tasks_file(run_cli, kernel, tmp_path: Path, task: str,
                                                           record: dict, message: str) -> None:
    path = _write(tmp_path / "answers.json", [record])
    result = run_cli("evaluate", task, path, "--sample", "--split", "test_public", "--allow-missing", kernel=kernel)
    assert _one_error(result) == f"error: {path}:1: {message}"


def test_a_refused_value_among_other_fields_names_its_own(run_cli, kernel, tmp_path: Path) -> None:
    # the gold file itself as predictions: 'question' beside 'answer'; the refused value is the answer
    records = _lines(KGCLUE / "dev.json")
    records[2]["answer"] = 7
    path = _write(tmp_path / "dev_answers.json", records)
    result = run_cli("evaluate", "kgclue", path, "--sample", "--split", "dev", kernel=kernel)
    assert _one_error(result).startswith(f"error: {path}:3: field 'answer': expected an answer string")


def test_a_runs_own_predictions_name_prediction(run_cli, kernel, tmp_path: Path) -> None:
    path = _write(tmp_path / "dev.jsonl", [{"id": 0, "prediction": 3}])
    result = run_cli("evaluate", "kgclue", path, "--sample", "--split", "dev", "--allow-missing", kernel=kernel)
    assert _one_error(result).startswith(f"error: {path}:1: field 'prediction': expected an answer string")


def test_submit_names_the_field_of_the_runs_file(run_cli, kernel, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    ran = run_cli("run", "fewclue-chid", "--model", "baseline", "--sample", "-o", out, kernel=kernel)
    assert ran.exit_code == 0, ran.output
    (submitted,) = (out / "fewclue-chid" / "submission").glob("chidf_predict*.json")
    records = _lines(submitted)
    records[1]["answer"] = 99
    _write(submitted, records)
    result = run_cli("submit", out, "-o", tmp_path / "s.zip", kernel=kernel)
    line = _one_error(result)
    assert line.startswith(f"error: {submitted}:2: field 'answer': expected a choice index 0..")
    assert not (tmp_path / "s.zip").exists()


# -- counts print whole ---------------------------------------------------------------------------------

def test_the_table_prints_counts_whole_and_scores_with_three_decimals(run_cli, kernel, tmp_path: Path) -> None:
    records = _lines(KGCLUE / "dev.json")
    for record in records[:3]:
        record["answer"] = "no separator"  # malformed: counted, scored as three wrong parts
    path = _write(tmp_path / "dev_answers.json", records)
    result = run_cli("evaluate", "kgclue", path, "--sample", "--split", "dev", kernel=kernel)
    assert result.exit_code == 0, result.output
    header, _, row = result.stdout.splitlines()
    cells = dict(zip(header.split(), row.split()))
    assert cells["malformed"] == "3" and cells["examples"] == "16"
    assert cells["em_all"] == f"{100 * 13 / 16:.3f}" and cells["emf1"].count(".") == 1
    as_json = json.loads(run_cli("evaluate", "kgclue", path, "--sample", "--split", "dev", "--json",
                                 kernel=kernel).stdout)
    assert as_json["malformed"] == 3  # --json unchanged: the metric's value


# -- run-folder selection is its own module ------------------------------------------------------------

def test_run_folder_selection_lives_in_runs() -> None:
    from clue_leaderboard import runs, submission

    for name in ("selected_runs", "find_run_dirs", "unfinished_runs"):
        assert getattr(runs, name).__module__ == "clue_leaderboard.runs"
        assert not hasattr(submission, name) or getattr(submission, name) is getattr(runs, name)
    assert runs.SELECTION == "submit.json"
    assert len(Path(submission.__file__).read_text(encoding="utf-8").splitlines()) < 365

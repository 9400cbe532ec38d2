"""Clustered standard errors and intervals (clue_core.uncertainty): a task whose questions share a
passage (C3, CMRC2018, DRCD, CHID: ``TaskSpec.cluster``) resamples passages, not questions.

End to end through ``clue-core run`` on C3's bundled sample, where two of the three dev questions
are asked of one text, then by hand-made sets whose answer is known by construction.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from clue_core import record_write
from clue_core.errors import PluginError
from clue_core.examples import MetricResult, MultipleChoiceExample
from clue_core.record import iter_predictions, read_run
from clue_core.specs import TaskSpec
from clue_core.uncertainty import clustered, group_function, groups_of, uncertainty

OLD_FOLDER = Path(__file__).parent / "data" / "run-folder-2026-12"


def _metrics(folder: Path) -> dict:
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def test_c3_sample_metrics_carry_the_stderr_clustered_by_passage(run_cli, tmp_path: Path) -> None:
    """C3's sample dev: question 0 alone in its dialogue, questions 1 and 2 of one text; the baseline is
    right on 0 and 1, wrong on 2. By hand: mean 66.67; unclustered stderr sqrt(3333.3 / 3) = 33.33; by
    passage (sums 100 and 100 over 1 and 2 questions) sqrt(2 * (33.33² + 33.33²)) / 3 = 22.22."""
    result = run_cli("run", "c3", "--model", "baseline", "--sample", "--output-dir", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    metrics = _metrics(tmp_path / "runs" / "c3")
    assert metrics["dev"] == {"accuracy": pytest.approx(200 / 3)}  # the existing keys are unchanged
    found = metrics["uncertainty"]
    assert found["metric"] == "accuracy" and found["examples"] == 3
    assert found["stderr"] == pytest.approx(100 / 3, abs=1e-5)
    by_passage = found["clustered"]
    assert by_passage["unit"] == "passage" and by_passage["groups"] == 2
    assert by_passage["stderr"] == pytest.approx(200 / 9, abs=1e-5)
    assert by_passage["stderr"] != pytest.approx(found["stderr"])  # passages repeat: clustering changes it
    # two passages: a resample holds passage A (100) and/or B (50): the pooled means are 100, 50, 66.7
    assert by_passage["low"] == pytest.approx(50.0) and by_passage["high"] == pytest.approx(100.0)
    assert (by_passage["resamples"], by_passage["confidence"], by_passage["seed"]) == (1000, 0.95, 0)
    assert read_run(tmp_path / "runs" / "c3").metrics.uncertainty == found  # declared: the reader reads it


def test_records_name_their_passage(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With records' groups on (``RECORD_GROUPS``: off until the golden recording is renewed), each C3
    record names its passage: questions 1 and 2 share one, question 0 has its own; the reader gives it."""
    monkeypatch.setattr(record_write, "RECORD_GROUPS", True)
    result = run_cli("run", "c3", "--model", "baseline", "--sample", "--output-dir", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    records = list(iter_predictions(tmp_path / "runs" / "c3"))
    groups = [record.group for record in records]
    assert all(isinstance(g, str) and g for g in groups)
    assert groups[1] == groups[2] != groups[0]
    tests = list(iter_predictions(tmp_path / "runs" / "c3", "test-1.1"))
    assert all(isinstance(record.group, str) for record in tests)  # every split's records name theirs


def test_records_carry_no_group_while_it_is_off(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Off (the default until tests/golden, which pins records whole, is renewed): no record gains a field,
    and metrics.json is clustered all the same."""
    monkeypatch.setattr(record_write, "RECORD_GROUPS", False)
    result = run_cli("run", "c3", "--model", "baseline", "--sample", "--output-dir", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "runs" / "c3" / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    assert all("group" not in json.loads(line) for line in lines)
    assert all(record.group is None for record in iter_predictions(tmp_path / "runs" / "c3"))
    assert _metrics(tmp_path / "runs" / "c3")["uncertainty"]["clustered"]["groups"] == 2


def test_an_unclustered_task_gets_its_stderr_only(run_cli, tmp_path: Path) -> None:
    result = run_cli("run", "afqmc", "--model", "baseline", "--sample", "--output-dir", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    found = _metrics(tmp_path / "runs" / "afqmc")["uncertainty"]
    assert set(found) == {"metric", "examples", "stderr"} and found["metric"] == "accuracy"
    lines = (tmp_path / "runs" / "afqmc" / "predictions" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    values = [100.0 * (json.loads(line)["prediction"] == json.loads(line)["gold"]) for line in lines]
    mean = sum(values) / len(values)
    expected = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))
    assert found["stderr"] == pytest.approx(expected, abs=1e-5)


def test_an_old_run_folder_still_reads(tmp_path: Path) -> None:
    """A folder written before the fields: records' group is None, metrics' uncertainty empty."""
    folder = tmp_path / "cmrc2018"
    shutil.copytree(OLD_FOLDER / "cmrc2018", folder)
    run = read_run(folder)
    assert run.metrics.uncertainty == {}
    records = list(run.predictions())
    assert records and all(record.group is None for record in records)


def _task(cluster: str | None, unit: str = "passage") -> TaskSpec:
    return TaskSpec(name="t", kind="multiple_choice", description="", reader="x:y", cluster=cluster,
                    cluster_unit=unit)


def test_passages_answered_together_widen_the_interval() -> None:
    """By construction: 40 passages of 4 questions each, all right or all wrong together. Resampling
    questions treats 160 independent answers; resampling passages, 40: the clustered stderr is the
    unclustered one times about sqrt(4) = 2, and the interval is wider."""
    kept = [(100.0 if passage % 2 else 0.0, f"p{passage}") for passage in range(40) for _ in range(4)]
    alone = [(value, None) for value, _ in kept]
    by_passage, by_question = clustered(kept, "passage"), clustered(alone, "example")
    assert (by_passage["groups"], by_question["groups"]) == (40, 160)
    assert by_question["stderr"] == pytest.approx(50 * math.sqrt(160 / 159) / math.sqrt(160), abs=1e-5)
    assert by_passage["stderr"] == pytest.approx(50 * math.sqrt(40 / 39) / math.sqrt(40), abs=1e-5)
    assert by_passage["stderr"] > 1.9 * by_question["stderr"]
    assert by_passage["high"] - by_passage["low"] > 1.5 * (by_question["high"] - by_question["low"])
    assert by_passage["low"] < 50 < by_passage["high"]


def test_every_group_of_one_gives_the_unclustered_stderr() -> None:
    values = [100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0]
    result = MetricResult({"accuracy": 100 * 4 / 7}, {"accuracy": values})
    plain = uncertainty(_task(None), result, None)
    singletons = uncertainty(_task("m:f"), result, [f"g{i}" for i in range(7)])
    assert plain is not None and singletons is not None and "clustered" not in plain
    assert singletons["clustered"]["stderr"] == pytest.approx(plain["stderr"], abs=1e-5)


def test_examples_without_a_value_or_a_group() -> None:
    """A None value (no gold) is left out; an example without a group is a group of its own."""
    result = MetricResult({}, {"accuracy": [100.0, None, 0.0, 100.0]})
    found = uncertainty(_task("m:f"), result, ["a", "a", None, None])
    assert found is not None and found["examples"] == 3 and found["clustered"]["groups"] == 3
    assert uncertainty(_task(None), MetricResult({"f1": 1.0}, {}), None) is None  # no per-example values
    assert uncertainty(_task(None), MetricResult({}, {"accuracy": [None]}), None) is None
    for odd in (float("nan"), float("inf"), "100", True):  # a metric's bug: nothing, not a file that cannot be read
        assert uncertainty(_task(None), MetricResult({}, {"accuracy": [100.0, odd]}), None) is None


def wrong_cluster(example: MultipleChoiceExample) -> str:
    raise KeyError("context")


def numbered_cluster(example: MultipleChoiceExample) -> int:
    return len(example.context)


def test_a_cluster_function_that_fails_is_one_line_naming_it() -> None:
    example = MultipleChoiceExample(id=7, context="abc", question="q", choices=("x", "y"))
    with pytest.raises(PluginError) as caught:
        groups_of(_task(f"{__name__}:wrong_cluster"), [example])
    assert str(caught.value) == (f"task t: cluster {__name__}:wrong_cluster raised KeyError: 'context' "
                                 f"(example 7)")
    with pytest.raises(PluginError, match="could not be loaded"):
        group_function(_task(f"{__name__}:no_such_function"))
    assert groups_of(_task(f"{__name__}:numbered_cluster"), [example]) == ["3"]  # a key, written as text
    assert groups_of(_task(None), [example]) is None

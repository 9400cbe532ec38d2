"""Clustered intervals at their edges (review of clue_core.uncertainty and the records' ``group``).

A run with a single passage (``--limit 1`` on C3) cannot say how far its score may be off: no
standard error and no interval, rather than a "95% interval" ``[x, x]`` a one-passage resample
always gives. A record whose ``group`` is empty names no passage: one line naming file, line and field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_core.examples import MetricResult
from clue_core.record import read_run
from clue_core.specs import TaskSpec
from clue_core.uncertainty import clustered, uncertainty


def _task() -> TaskSpec:
    return TaskSpec(name="t", kind="multiple_choice", description="", reader="x:y", cluster="m:f",
                    cluster_unit="passage")


def test_one_group_gives_no_interval_and_no_stderr() -> None:
    one = clustered([(100.0, "p"), (0.0, "p"), (100.0, "p")], "passage")
    assert (one["groups"], one["stderr"], one["low"], one["high"]) == (1, None, None, None)
    two = clustered([(100.0, "p"), (0.0, "q")], "passage")  # two groups: an interval again
    assert two["groups"] == 2 and two["low"] == 0.0 and two["high"] == 100.0
    found = uncertainty(_task(), MetricResult({}, {"accuracy": [100.0]}), ["p"])
    assert found is not None and found["stderr"] is None and found["clustered"]["low"] is None


def test_limit_1_run_of_c3_writes_no_interval(run_cli, tmp_path: Path) -> None:
    result = run_cli("run", "c3", "--model", "baseline", "--sample", "--limit", "1", "--splits", "dev",
                     "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    found = json.loads((tmp_path / "runs" / "c3" / "metrics.json").read_text(encoding="utf-8"))["uncertainty"]
    assert found["examples"] == 1 and found["stderr"] is None
    assert found["clustered"]["groups"] == 1
    assert found["clustered"]["low"] is None and found["clustered"]["high"] is None
    assert read_run(tmp_path / "runs" / "c3").metrics.uncertainty == found  # the reader reads it back


@pytest.mark.parametrize(("group", "expected"), [("", "field 'group'"), (7, "field 'group': expected")])
def test_an_empty_or_numbered_group_is_one_line_naming_the_file_line_and_field(
        run_cli, tmp_path: Path, group: object, expected: str) -> None:
    result = run_cli("run", "c3", "--model", "baseline", "--sample", "--splits", "dev", "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    path = tmp_path / "runs" / "c3" / "predictions" / "dev.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    records[1]["group"] = group
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(ClueError) as caught:
        list(read_run(tmp_path / "runs" / "c3").predictions("dev"))
    assert f"dev.jsonl:2: {expected}" in str(caught.value), str(caught.value)

"""``clue-core bootstrap`` at its edges (review): records whose ``group`` is missing on some lines, runs that
group an example apart, and a single example or passage to resample.

C3's sample (baseline model): dev questions 0 (its own dialogue), 1 and 2 (one text). The copies' records are
edited as a user (or an older clue-core) could leave them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import api
from clue_report.paired import groups_of as report_groups
from clue_sweep.bootstrap import compare, groups_of


@pytest.fixture(scope="module")
def c3(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("edges")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(root / "home"))
        api.run(["c3"], model="baseline", sample=True, splits=["dev"], output_dir=root / "runs", echo=None)
        api.run(["c3"], model="baseline", sample=True, splits=["dev"], limit=1, output_dir=root / "one", echo=None)
    run = root / "runs" / "c3"
    return {"run": run, "one": root / "one" / "c3",
            "right": edit(run, root / "right", lambda i, r: {**r, "prediction": r["gold"]}),
            "no-group-1": edit(run, root / "no-group-1", lambda i, r: {k: v for k, v in r.items()
                                                                       if not (i == 1 and k == "group")}),
            "moved": edit(run, root / "moved", lambda i, r: {**r, "group": "elsewhere"} if i == 2 else r),
            "old": edit(run, root / "old", lambda i, r: {k: v for k, v in r.items() if k != "group"})}


def edit(run: Path, to: Path, change) -> Path:
    shutil.copytree(run, to)
    path = to / "predictions" / "dev.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(change(i, r), ensure_ascii=False) + "\n" for i, r in enumerate(records)),
                    encoding="utf-8")
    return to


def _answers(*runs: Path) -> tuple[list[dict], list[str]]:
    from clue_core.plugin import read_run

    answers = [{str(r.id): r for r in read_run(run).predictions("dev")} for run in runs]
    return answers, list(answers[0])


def test_a_record_without_its_group_stands_alone_not_the_whole_run_unclustered(c3) -> None:
    """Line 2 lost its group: questions 1 and 2 are no longer one unit, but 0 and the rest still cluster where
    they did: three units, as metrics.json's and the report's intervals count them, not 'examples' silently."""
    for function in (groups_of, report_groups):
        answers, order = _answers(c3["no-group-1"], c3["no-group-1"])
        groups = function(answers, order)
        assert groups is not None and len(set(groups)) == 3
        answers, order = _answers(c3["run"], c3["run"])
        assert len(set(function(answers, order))) == 2
        answers, order = _answers(c3["old"], c3["run"])  # a run from before groups: examples, as before
        assert function(answers, order) is None
    result = compare(Kernel(), [c3["right"]], [c3["run"]], samples=200)
    assert (result["unit"], result["groups"]) == ("group", 2)


def test_runs_grouping_an_example_apart_name_both_records(run_cli, c3) -> None:
    result = run_cli("bootstrap", c3["moved"], c3["run"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: ") and "in different groups" in line
    assert f"{c3['moved'] / 'predictions' / 'dev.jsonl'}:3" in line and f"{c3['run'] / 'predictions' / 'dev.jsonl'}:3" \
        in line, line
    mixed = run_cli("bootstrap", c3["no-group-1"], c3["run"])  # line 2 alone in one run, with line 3 in the other
    assert mixed.exit_code == 2 and "dev.jsonl:2" in mixed.output, mixed.output


def test_one_unit_is_one_line_not_a_certain_difference(run_cli, c3, tmp_path: Path) -> None:
    """One example (a --limit 1 run): every draw is the observed difference; the p-value 1/(draws+1) it gave
    claimed a significance one question cannot carry."""
    right = edit(c3["one"], tmp_path / "one-right", lambda i, r: {**r, "prediction": r["gold"]})
    wrong = edit(c3["one"], tmp_path / "one-wrong", lambda i, r: {**r, "prediction": (r["gold"] + 1) % 2})
    result = run_cli("bootstrap", right, wrong)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: only 1 dev example or passage to resample"), line

"""``clue-core bootstrap --split``: a scored split besides dev (DataCLUE's and FewCLUE's test_public), the
refusals of a split the runs lack, and clustered draws where the records carry a ``group`` (a passage)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import ClueError, api
from clue_sweep.bootstrap import compare


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Majority-class runs of dataclue-cic, fewclue-eprstmt and afqmc on their samples, and edited copies."""
    root = tmp_path_factory.mktemp("split")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(root / "home"))
        api.run(["dataclue-cic", "fewclue-eprstmt", "afqmc"], model="baseline", sample=True,
                output_dir=root / "runs", echo=None)
    found = {name: root / "runs" / name for name in ("dataclue-cic", "fewclue-eprstmt", "afqmc")}
    cic = found["dataclue-cic"]
    found["perfect"] = edited_split(cic, root / "perfect", "test_public", lambda i, r: {**r, "prediction": r["gold"]})
    found["half"] = edited_split(cic, root / "half", "test_public",
                                 lambda i, r: {**r, "prediction": r["gold"] if i % 2 else r["prediction"]})
    found["short"] = edited_split(cic, root / "short", "test_public", lambda i, r: r, drop=1)
    found["other-dev"] = edited_split(cic, root / "other-dev", "dev", lambda i, r: r, drop=1)
    found["afqmc-perfect"] = edited_split(found["afqmc"], root / "afqmc-perfect", "dev",
                                          lambda i, r: {**r, "prediction": r["gold"]})
    return found


def edited_split(run: Path, to: Path, split: str, change, drop: int = 0) -> Path:
    """A copy of ``run`` whose ``split`` records are changed (``change(line, record)``), the last ``drop`` left out."""
    shutil.copytree(run, to)
    path = to / "predictions" / f"{split}.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    records = [change(i, r) for i, r in enumerate(records[:len(records) - drop])]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return to


def grouped(run: Path, to: Path, split: str, group) -> Path:
    """A copy of ``run`` whose ``split`` records carry ``"group": group(line)``."""
    return edited_split(run, to, split, lambda i, r: {**r, "group": group(i)})


def records(run: Path, split: str) -> list[dict]:
    return [json.loads(line) for line in (run / "predictions" / f"{split}.jsonl").read_text().splitlines()]


def test_test_public_is_compared_and_named(run_cli, runs):
    """All test_public answers right against the majority class: the difference is the macro F1 between them,
    scored on test_public (not dev, which the copies left as they were)."""
    base = json.loads((runs["dataclue-cic"] / "metrics.json").read_text())["test_public"]["macro_f1"]
    result = compare(Kernel(), [runs["perfect"]], [runs["dataclue-cic"]], split="test_public", samples=300, seed=2)
    assert result["split"] == "test_public" and result["examples"] == len(records(runs["perfect"], "test_public"))
    assert result["a"]["score"] == 100 and result["b"]["score"] == pytest.approx(base)
    assert result["difference"] == pytest.approx(100 - base) and 0 < result["low"] <= result["high"] <= 100
    assert result["method"] == "metric re-run on each draw" and result["unit"] == "example"
    on_dev = compare(Kernel(), [runs["perfect"]], [runs["dataclue-cic"]], samples=300)
    assert on_dev["split"] == "dev" and on_dev["difference"] == 0  # the copies changed test_public only
    shown = run_cli("bootstrap", runs["perfect"], runs["dataclue-cic"], "--split", "test_public", "--samples", "300",
                    "--seed", "2")
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith(f"dataclue-cic test_public macro_f1: A 100.00, B {base:.2f}, on 16 examples\n")
    assert f"A − B = {result['difference']:+.2f}" in shown.output and "clustered" not in shown.output
    as_json = run_cli("bootstrap", runs["perfect"], runs["dataclue-cic"], "--split", "test_public", "--samples",
                      "300", "--seed", "2", "--json")
    assert json.loads(as_json.output) == json.loads(json.dumps(result))


@pytest.mark.parametrize("split", ["nosuch", "test-1.0", "train", "../predictions/dev"])
def test_a_split_the_runs_lack_is_one_line_naming_the_ones_they_have(run_cli, runs, split):
    """test-1.0 has predictions but no gold (FewCLUE's unlabelled test): it is not a scored split."""
    result = run_cli("bootstrap", runs["fewclue-eprstmt"], runs["fewclue-eprstmt"], "--split", split)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"error: {runs['fewclue-eprstmt']} has no scored {split} predictions (its scored splits: dev, test_public); "
        "give --split one of them"]


def test_runs_of_other_tasks_or_other_test_public_examples_are_refused(run_cli, runs):
    for other, expected in ((runs["fewclue-eprstmt"], "a bootstrap compares runs of one task"),
                            (runs["short"], "scored different test_public examples (15 and 16")):
        result = run_cli("bootstrap", runs["dataclue-cic"], other, "--split", "test_public")
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], result.output
    lacking = run_cli("bootstrap", runs["afqmc"], runs["afqmc"], "--split", "test_public")
    assert lacking.exit_code == 2 and "its scored splits: dev)" in lacking.output, lacking.output


@pytest.mark.parametrize("split,a,b", [("dev", "afqmc-perfect", "afqmc"), ("test_public", "half", "dataclue-cic")])
def test_groups_are_the_resampling_unit(runs, tmp_path, split, a, b):
    """Per-example values (afqmc's accuracy) and a metric re-run per draw (DataCLUE's macro F1) alike: groups of
    one example draw exactly what examples draw; one group for all is refused (every draw
    would be the whole split); groups of
    four draw other sets, so the interval moves."""
    plain = compare(Kernel(), [runs[a]], [runs[b]], split=split, samples=400, seed=5)
    assert plain["unit"] == "example" and plain["low"] < plain["high"]

    def clustered(name: str, group) -> dict:
        sides = [grouped(runs[side], tmp_path / name / side, split, group) for side in (a, b)]
        return compare(Kernel(), [sides[0]], [sides[1]], split=split, samples=400, seed=5)

    alone = clustered("alone", lambda i: f"p{i}")
    assert alone["unit"] == "group" and alone["groups"] == plain["examples"]
    assert (alone["low"], alone["high"], alone["p_value"]) == (plain["low"], plain["high"], plain["p_value"])
    with pytest.raises(ClueError, match=r"only 1 .* example or passage to resample"):  # one group: every draw the
        clustered("whole", lambda i: "one passage")  # observed difference, no interval (test_bootstrap_edges.py)
    fours = clustered("fours", lambda i: f"p{i // 4}")
    assert fours["groups"] == (plain["examples"] + 3) // 4 and fours["difference"] == plain["difference"]
    assert (fours["low"], fours["high"]) != (plain["low"], plain["high"])


def test_groups_in_only_one_run_resample_examples_and_the_output_says_clustered(run_cli, runs, tmp_path):
    a = grouped(runs["afqmc-perfect"], tmp_path / "a", "dev", lambda i: f"p{i // 2}")
    b = grouped(runs["afqmc"], tmp_path / "b", "dev", lambda i: f"p{i // 2}")
    mixed = compare(Kernel(), [a], [runs["afqmc"]], samples=300)
    assert mixed["unit"] == "example" and "groups" not in mixed  # an older run without groups: as before
    shown = run_cli("bootstrap", a, b, "--samples", "300")
    assert shown.exit_code == 0, shown.output
    groups = (len(records(runs["afqmc"], "dev")) + 1) // 2
    assert f"on {len(records(runs['afqmc'], 'dev'))} examples, clustered by passage ({groups} groups)\n" in shown.output
    other = grouped(runs["afqmc"], tmp_path / "other", "dev", lambda i: f"q{i // 2}")
    refused = run_cli("bootstrap", a, other)
    assert refused.exit_code == 2 and "in different groups (passages:" in refused.output, refused.output


def test_runs_that_differ_on_dev_but_share_test_public_are_told_the_split(run_cli, runs):
    """DataCLUE's user changes dev: a plain bootstrap of such runs says which split they share."""
    result = run_cli("bootstrap", runs["dataclue-cic"], runs["other-dev"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().endswith("compare runs on the same examples (both scored test_public: "
                                          "--split test_public)"), result.output
    assert run_cli("bootstrap", runs["dataclue-cic"], runs["other-dev"], "--split", "test_public").exit_code == 0
    plain = run_cli("bootstrap", runs["afqmc"], runs["afqmc-perfect"], "--samples", "100")
    assert plain.exit_code == 0, plain.output

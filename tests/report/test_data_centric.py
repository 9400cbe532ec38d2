"""The report's DataCLUE section: a run on your data beside the raw-data run, on test_public, with the paired
bootstrap ``clue-core bootstrap --split test_public`` computes, number for number.

Runs are made through the CLI on an isolated kernel with the DataCLUE plugin and the deterministic test model
of tests/dataclue (character naive Bayes, no torch): one on the bundled sample (the raw data), one on a copy
whose train.json has relabelled lines and, added, texts like test_public's (so the two differ on test_public),
and one on a copy whose test_public.json lacks a line. hf-tiny's end-to-end run is in test_data_centric_hf.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from clue_core.kernel import Kernel
from tests.dataclue.char_model import CharModelPlugin

SAMPLE = Path(__file__).resolve().parents[2] / "plugins/clue-tasks-dataclue/clue_tasks_dataclue/samples/cic"
MARK = "not the DataCLUE protocol"


def dataclue_kernel(isolated: Kernel) -> Kernel:
    import clue_report.hooks
    import clue_sweep.hooks
    from clue_tasks_dataclue import hooks as dataclue_plugin

    for plugin, name in ((dataclue_plugin, "clue-tasks-dataclue"), (clue_report.hooks, "clue-report"),
                         (clue_sweep.hooks, "clue-sweep")):
        isolated.register(plugin, name, distribution=name)
    isolated.register(CharModelPlugin(), "dc-char")
    assert all(p.status == "ok" for p in isolated.plugins), [p.error for p in isolated.plugins]
    return isolated


def modified_copy(to: Path, *, relabel_every: int = 3, add_test: bool = True, drop_test: int = 0) -> Path:
    """The sample's files, train.json with every ``relabel_every``-th line relabelled (and test_public's lines
    added, ``add_test``), test_public.json without its last ``drop_test`` lines."""
    shutil.copytree(SAMPLE, to)
    train = [json.loads(line) for line in (to / "train.json").read_text(encoding="utf-8").splitlines()]
    for number, record in enumerate(train):
        if number % relabel_every == 0:
            record["label"] = str((int(record["label"]) + 1) % 118)
    test = (to / "test_public.json").read_text(encoding="utf-8").splitlines()
    if add_test:
        train += [json.loads(line) for line in test]
    (to / "train.json").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in train), encoding="utf-8")
    (to / "test_public.json").write_text("".join(line + "\n" for line in test[:len(test) - drop_test]),
                                         encoding="utf-8")
    return to


@pytest.fixture
def kernel(isolated_kernel: Kernel) -> Kernel:
    return dataclue_kernel(isolated_kernel)


@pytest.fixture
def runs(run_cli, kernel: Kernel, tmp_path: Path) -> dict[str, Path]:
    def run(name: str, *data: str) -> Path:
        result = run_cli("run", "dataclue-cic", "--model", "dc-char", *data, "-o", tmp_path / name, kernel=kernel)
        assert result.exit_code == 0, result.output
        return tmp_path / name / "dataclue-cic"

    return {"raw": run("raw", "--sample"),
            "yours": run("yours", "--data-dir", str(modified_copy(tmp_path / "data-yours"))),
            "short": run("short", "--data-dir", str(modified_copy(tmp_path / "data-short", drop_test=1)))}


def report_of(run_cli, kernel: Kernel, out: Path, *paths: Path, options: tuple[str, ...] = ()
              ) -> tuple[dict[str, Any], str, str]:
    result = run_cli("report", *paths, "-o", out, *options, kernel=kernel)
    assert result.exit_code == 0, result.output
    return (json.loads((out / "report.json").read_text(encoding="utf-8")),
            (out / "index.html").read_text(encoding="utf-8"), (out / "report.md").read_text(encoding="utf-8"))


def bootstrap_json(run_cli, kernel: Kernel, a: Path, b: Path) -> dict[str, Any]:
    result = run_cli("bootstrap", a, b, "--split", "test_public", "--samples", "1000", "--seed", "0", "--json",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_section_sets_your_data_beside_the_raw_data_with_bootstraps_numbers(run_cli, kernel, runs, tmp_path):
    scores = {name: json.loads((run / "metrics.json").read_text())["test_public"]["macro_f1"]
              for name, run in runs.items()}
    assert scores["yours"] > scores["raw"]  # test_public's texts in train: the copy scores higher there
    report, page, md = report_of(run_cli, kernel, tmp_path / "report", runs["raw"], runs["yours"], runs["short"])
    (block,) = report["dataclue"]["tasks"]
    assert (block["task"], block["model"], block["reason"]) == ("dataclue-cic", "dc-char", None)
    assert block["how"] == "the bundled raw sample (--sample)" and block["baseline"]["paths"] == [str(runs["raw"])]
    assert block["baseline"]["score"] == scores["raw"]
    yours, short = block["comparisons"]
    assert yours["paths"] == [str(runs["yours"])] and yours["score"] == scores["yours"]
    assert yours["where"] == str(tmp_path / "data-yours")
    expected = bootstrap_json(run_cli, kernel, runs["yours"], runs["raw"])
    boot = yours["bootstrap"]
    for key in ("difference", "low", "high", "p_value", "examples", "samples", "seed", "unit", "method"):
        assert boot[key] == expected[key], key  # the same computation: equal, not close
    assert (boot["a"], boot["b"]) == (expected["a"]["score"], expected["b"]["score"]) == (scores["yours"],
                                                                                           scores["raw"])
    assert boot["difference"] > 0 and boot["low"] < boot["high"] and 0 < boot["p_value"] <= 1
    assert "bootstrap" not in short and "scored different test_public examples (15 and 16)" in short["reason"]
    marks = [n for n in json.loads((runs["yours"] / "manifest.json").read_text())["notes"] if MARK in n]
    assert marks and yours["marks"] == marks  # dc-char is not the recipe's model
    section = page.split("<section id='dataclue'>")[1].split("</section>")[0]
    assert "<h2>DataCLUE: your data vs the raw data</h2>" in section and marks[0] in section
    assert f"{boot['difference']:+.2f} <small>[{boot['low']:+.2f}, {boot['high']:+.2f}]</small>" in section
    assert "<a href='#dataclue'>" in page
    text = md.split("## DataCLUE: your data vs the raw data")[1].split("\n## ")[0]
    assert (f"| A: your data | run-2 | {tmp_path / 'data-yours'} | {scores['yours']:.2f} | "
            f"{boot['difference']:+.2f} \\[{boot['low']:+.2f}, {boot['high']:+.2f}\\] | {boot['p_value']:.3g} | "
            in text), text
    assert "scored different test\\_public examples" in text or "scored different test_public examples" in text


def test_the_baseline_option_names_the_raw_run(run_cli, kernel, runs, tmp_path):
    report, _, _ = report_of(run_cli, kernel, tmp_path / "flipped", runs["raw"], runs["yours"],
                             options=("--baseline", str(runs["yours"])))
    (block,) = report["dataclue"]["tasks"]
    assert block["how"] == "named by --baseline" and block["baseline"]["paths"] == [str(runs["yours"])]
    (raw,) = block["comparisons"]
    assert raw["bootstrap"] == {**raw["bootstrap"], **{k: v for k, v in bootstrap_json(
        run_cli, kernel, runs["raw"], runs["yours"]).items() if k in ("difference", "low", "high", "p_value")}}
    assert raw["bootstrap"]["difference"] < 0


def test_no_section_without_two_data_and_a_line_when_the_raw_run_is_unknown(run_cli, kernel, runs, tmp_path):
    alone, page, md = report_of(run_cli, kernel, tmp_path / "alone", runs["raw"])
    assert "dataclue" not in alone and "id='dataclue'" not in page and "DataCLUE: your data" not in md
    unknown, _, _ = report_of(run_cli, kernel, tmp_path / "unknown", runs["yours"], runs["short"])
    (block,) = unknown["dataclue"]["tasks"]
    assert block["reason"] == ("cannot tell which run is on the raw data: none was made with --sample or read "
                               "raw_<task>/; give clue-core report --baseline RUN")
    assert block["comparisons"] == [] and [o["paths"] for o in block["others"]] == [[str(runs["yours"])],
                                                                                  [str(runs["short"])]]


def test_a_run_read_from_raw_cic_is_the_raw_run(run_cli, kernel, runs, tmp_path):
    """DataCLUE's own layout: datasets/raw_cic holds the official files (here: the sample's)."""
    shutil.copytree(SAMPLE, tmp_path / "datasets" / "raw_cic")
    result = run_cli("run", "dataclue-cic", "--model", "dc-char", "--data-dir", tmp_path / "datasets", "-o",
                     tmp_path / "official", kernel=kernel)
    assert result.exit_code == 0, result.output
    report, _, _ = report_of(run_cli, kernel, tmp_path / "report", tmp_path / "official", runs["yours"])
    (block,) = report["dataclue"]["tasks"]
    assert block["how"] == "read from raw_cic/ (DataCLUE's raw files)"
    assert block["baseline"]["paths"] == [str(tmp_path / "official" / "dataclue-cic")]


def test_bad_baselines_and_bootstraps_are_one_line(run_cli, kernel, runs, tmp_path):
    other = run_cli("run", "dataclue-tnews", "--model", "dc-char", "--sample", "-o", tmp_path / "tnews", kernel=kernel)
    assert other.exit_code == 0, other.output
    tnews = tmp_path / "tnews" / "dataclue-tnews"
    for args, expected in (
            (("report", runs["raw"], runs["yours"], "--baseline", runs["raw"]), "--baseline goes with -o DIR"),
            (("report", runs["raw"], runs["yours"], "-o", tmp_path / "r1", "--baseline", tmp_path / "nothing"),
             "no such run directory"),
            (("report", runs["raw"], runs["yours"], "-o", tmp_path / "r4", "--baseline", tmp_path / "raw"),
             f"--baseline: {tmp_path / 'raw'}: not a run directory"),
            (("report", runs["raw"], runs["yours"], "-o", tmp_path / "r2", "--baseline", runs["short"]),
             "not one of the report's runs"),
            (("report", runs["raw"], tnews, "-o", tmp_path / "r3", "--baseline", tnews),
             "no other run of its task and model on other data"),
            (("bootstrap", runs["raw"], runs["yours"], "--split", "nosuch"), "its scored splits: dev, test_public"),
            (("bootstrap", runs["raw"], tnews, "--split", "test_public"), "a bootstrap compares runs of one task"),
            (("bootstrap", runs["raw"], runs["short"], "--split", "test_public"),
             "scored different test_public examples (15 and 16")):
        result = run_cli(*args, kernel=kernel)
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.output
    assert not any((tmp_path / name / "report.json").exists() for name in ("r1", "r2", "r3", "r4"))


def test_a_broken_test_public_file_is_the_comparisons_reason_not_the_reports_error(run_cli, kernel, runs, tmp_path):
    broken = shutil.copytree(runs["yours"], tmp_path / "broken" / "dataclue-cic")
    with (broken / "predictions" / "test_public.jsonl").open("a", encoding="utf-8") as file:
        file.write("{not json\n")
    report, _, _ = report_of(run_cli, kernel, tmp_path / "report", runs["raw"], broken)
    (entry,) = report["dataclue"]["tasks"][0]["comparisons"]
    assert "bootstrap" not in entry and entry["reason"].startswith("cannot read its test_public predictions: ")
    assert "test_public.jsonl:17: invalid JSON" in entry["reason"], entry["reason"]


def test_records_without_gold_are_the_comparisons_reason(run_cli, kernel, runs, tmp_path):
    """Both runs' test_public records stripped of their gold: no score to bootstrap, said in the section."""
    copies = []
    for name in ("raw", "yours"):
        copy = shutil.copytree(runs[name], tmp_path / f"{name}-nogold" / "dataclue-cic")
        path = copy / "predictions" / "test_public.jsonl"
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "gold"}) + "\n" for r in lines),
                        encoding="utf-8")
        copies.append(copy)
    report, _, _ = report_of(run_cli, kernel, tmp_path / "report", *copies)
    (entry,) = report["dataclue"]["tasks"][0]["comparisons"]
    assert "bootstrap" not in entry and "macro_f1 is undefined on these predictions (no gold?)" in entry["reason"]


def test_grouped_records_are_clustered_alike_in_the_section_and_bootstrap(run_cli, kernel, runs, tmp_path):
    copies = []
    for name in ("raw", "yours"):
        copy = shutil.copytree(runs[name], tmp_path / f"{name}-grouped" / "dataclue-cic")
        path = copy / "predictions" / "test_public.jsonl"
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("".join(json.dumps({**r, "group": f"p{i // 3}"}) + "\n" for i, r in enumerate(lines)),
                        encoding="utf-8")
        copies.append(copy)
    report, _, _ = report_of(run_cli, kernel, tmp_path / "report", *copies)
    boot = report["dataclue"]["tasks"][0]["comparisons"][0]["bootstrap"]
    expected = bootstrap_json(run_cli, kernel, copies[1], copies[0])
    assert boot["unit"] == expected["unit"] == "group" and boot["groups"] == expected["groups"] == 6
    assert [boot[k] for k in ("difference", "low", "high", "p_value")] == [
        expected[k] for k in ("difference", "low", "high", "p_value")]


@pytest.mark.parametrize("grouped", [False, True])
def test_per_example_values_draw_alike_in_paired_and_bootstrap(tmp_path, grouped):
    """The vector path (accuracy, per-example values) that DataCLUE's macro F1 never takes: equal too."""
    from clue_core.plugin import api, read_run
    from clue_report.paired import paired
    from clue_sweep.bootstrap import compare

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUE_HOME", str(tmp_path / "home"))
        api.run(["afqmc"], model="baseline", sample=True, output_dir=tmp_path / "runs", echo=None)
    base = tmp_path / "runs" / "afqmc"
    other = shutil.copytree(base, tmp_path / "other")
    for run, change in ((base, lambda i, r: r), (other, lambda i, r: {**r, "prediction": r["gold"] if i % 3 else
                                                                    r["prediction"]})):
        path = run / "predictions" / "dev.jsonl"
        lines = [change(i, json.loads(line)) for i, line in enumerate(path.read_text().splitlines())]
        lines = [{**r, "group": f"p{i // 4}"} if grouped else r for i, r in enumerate(lines)]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    kernel = Kernel()
    expected = compare(kernel, [other], [base], samples=2000, seed=7)
    answers = [{str(r.id): r for r in read_run(run).predictions("dev")} for run in (other, base)]
    got = paired(kernel, kernel.task("afqmc"), "accuracy", [answers[0]], [answers[1]], samples=2000, seed=7)
    assert expected["method"] == got["method"] == "per-example values" and got["unit"] == expected["unit"]
    assert [got[k] for k in ("difference", "low", "high", "p_value")] == [
        expected[k] for k in ("difference", "low", "high", "p_value")]
    assert got["low"] < got["high"]

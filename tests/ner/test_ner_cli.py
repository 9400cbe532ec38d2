"""cluener2020 end to end through the clue-core CLI, in-process: run --sample, submit, evaluate.

The model is the tests' dictionary model (tests/ner/dictionary_model.py), which runs the
entity-spans kind by name as a real model plugin does; the kernel is isolated, so only
clue-tasks-ner, the built-in plugin, the leaderboard and the data plugin are there.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clue_core.kernel import Kernel

from .conftest import DATA, SAMPLE, lines, official


@pytest.fixture
def run_dir(run_cli, kernel: Kernel, tmp_path: Path) -> Path:
    result = run_cli("run", "cluener2020", "--model", "ner-dictionary", "--sample", "-o", tmp_path / "out",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    return tmp_path / "out" / "cluener2020"


def train_strings() -> dict[str, set[str]]:
    """Every gold entity text of the train sample, with the types it has there."""
    found: dict[str, set[str]] = {}
    for record in lines(SAMPLE / "train.json"):
        for kind, entities in record["label"].items():
            for entity in entities:
                found.setdefault(entity, set()).add(kind)
    return found


def test_run_predicts_records_and_scores_the_sample(run_dir: Path) -> None:
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["primary_metric"] == "macro_f1" and metrics["primary"] == metrics["dev"]["macro_f1"]
    assert {"f1_address", "precision_scene", "recall_name", "micro_f1_exact"} <= set(metrics["dev"])
    records = lines(run_dir / "predictions" / "dev.jsonl")
    texts = [r["text"] for r in lines(SAMPLE / "dev.json")]
    assert [r["id"] for r in records] == list(range(16))
    known = train_strings()
    predicted = [(text[s:e], kind) for r, text in zip(records, texts) for kind, s, e in r["prediction"]]
    assert predicted and all(kind in known[entity] for entity, kind in predicted)
    # the gold recorded beside each prediction: [type, start, end) lists of the sample
    assert records[0]["gold"] == [["name", 0, 3], ["address", 15, 17]]
    # the dev score is the official score of what was predicted: rescored through evaluate below
    assert 0 < metrics["dev"]["macro_f1"] < 100


def test_evaluate_rescores_the_runs_own_predictions_alike(run_cli, kernel: Kernel, run_dir: Path) -> None:
    result = run_cli("evaluate", "cluener2020", run_dir / "predictions" / "dev.jsonl", "--sample", "--json",
                     kernel=kernel)
    assert result.exit_code == 0, result.output
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))["dev"]
    scored = json.loads(result.stdout)
    assert scored["examples"] == 16 and {k: scored[k] for k in metrics} == metrics


def test_submit_packs_cluener_predict_json_in_the_leaderboards_shape(run_cli, kernel: Kernel, run_dir: Path,
                                                                    tmp_path: Path) -> None:
    result = run_cli("submit", run_dir, "-o", tmp_path / "sub.zip", kernel=kernel)
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "sub.zip") as archive:
        assert "cluener_predict.json" in archive.namelist()
        rows = [json.loads(line) for line in archive.read("cluener_predict.json").decode("utf-8").splitlines()]
    test = lines(SAMPLE / "test.json")
    assert [row["id"] for row in rows] == [t["id"] for t in test] == list(range(16))
    known = train_strings()
    spans = 0
    for row, line in zip(rows, test):
        assert set(row) == {"id", "label"}
        for kind, entities in row["label"].items():
            for entity, offsets in entities.items():
                assert kind in known[entity]
                for start, end in offsets:  # inclusive, as the gold's
                    assert line["text"][start:end + 1] == entity
                    spans += 1
    assert spans > 0


def test_evaluate_reads_the_leaderboard_format_on_dev(run_cli, kernel: Kernel) -> None:
    """The repository's own dev predictions (no id: a line's id is its position) score the official number."""
    for name in ("ner_predict16.json", "p_add.json"):
        result = run_cli("evaluate", "cluener2020", DATA / name, "--sample", "--split", "dev", "--json",
                         kernel=kernel)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["macro_f1"] == official()[name]["avg"] * 100


def test_evaluate_reads_goverment_as_government_with_a_warning(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    text = (DATA / "ner_predict16.json").read_text(encoding="utf-8").replace('"government"', '"goverment"')
    path = tmp_path / "misspelt.json"
    path.write_text(text, encoding="utf-8")
    result = run_cli("evaluate", "cluener2020", path, "--sample", "--json", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["macro_f1"] == official()["ner_predict16.json"]["avg"] * 100
    assert f"warning: {path}: goverment read as government on 4 line(s), first line 4" in result.stderr


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": 0, "label": {"person": {"彭小军": [[0, 2]]}}}',
     "field 'label': unknown entity type 'person' (known: address, book, company, game, government, movie, "
     "name, organization, position, scene)"),
    ('{"id": 0, "label": {"name": {"彭小军": [[60, 62]]}}}',
     "field 'label': span [60, 63) of name (end exclusive) is not inside the text (length 42)"),
    ('{"id": 0, "label": {"name": {"彭小军": [[0, 3]]}}}',
     "field 'label': name '彭小军': span [0, 3] covers 4 characters, the entity has 3 (offsets inclusive)"),
    ('{"id": 0, "label": {"name": ["彭小军"]}}',
     "field 'label': name: expected an object {entity text: [[start, end], ...]}, got list"),
    ('{"id": 0}', "field 'label': missing"),
])
def test_a_bad_line_of_a_predictions_file_is_one_line(run_cli, kernel: Kernel, tmp_path: Path, line: str,
                                                       message: str) -> None:
    rest = (DATA / "gold16.json").read_text(encoding="utf-8").splitlines()[1:]
    path = tmp_path / "bad.json"
    path.write_text("\n".join([line, *rest]) + "\n", encoding="utf-8")
    result = run_cli("evaluate", "cluener2020", path, "--sample", kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"error: {path}:1: {message}"]


def test_info_and_list_know_the_task_and_the_kind(run_cli, kernel: Kernel) -> None:
    info = run_cli("info", "cluener2020", kernel=kernel)
    assert info.exit_code == 0, info.output
    assert "kind:             entity_spans" in info.output
    assert "metrics:          cluener2020 (primary: macro_f1)" in info.output
    assert "1.0   split test       → cluener_predict.json" in info.output
    assert "https://storage.googleapis.com/cluebenchmark/tasks/cluener_public.zip" in info.output
    kinds = run_cli("list", "kinds", kernel=kernel).output
    assert any(row.startswith("entity_spans ") and "clue-tasks-ner" in row for row in kinds.splitlines())


def test_the_baseline_does_not_run_the_kind(run_cli, kernel: Kernel, tmp_path: Path) -> None:
    result = run_cli("run", "cluener2020", "--model", "baseline", "--sample", "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: model baseline does not support entity_spans tasks like cluener2020 "
        "(it runs: classification, span, multiple_choice)"]


def test_hooks_import_nothing_heavy() -> None:
    code = ("import sys, clue_tasks_ner.hooks as h; h.clue_kinds(); h.clue_tasks(); h.clue_metrics(); "
            "h.clue_submission_writers(); loaded = [m for m in sys.modules if m.startswith('clue_tasks_ner.')]; "
            "heavy = [m for m in ('torch', 'transformers', 'numpy', 'click') if m in sys.modules]; "
            "assert not heavy, heavy; assert sorted(loaded) == ['clue_tasks_ner.hooks', "
            "'clue_tasks_ner.labels', 'clue_tasks_ner.published'], loaded")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_report_shows_the_run_in_its_leaderboard_group(run_cli, kernel: Kernel, run_dir: Path,
                                                            tmp_path: Path) -> None:
    import clue_report.hooks

    kernel.register(clue_report.hooks, "clue-report", distribution="clue-report")
    result = run_cli("report", run_dir.parent, "-o", tmp_path / "report", kernel=kernel)
    assert result.exit_code == 0, result.output
    primary = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))["primary"]
    assert "CLUENER2020 overall" in result.output and f"{primary:.2f}" in result.output
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["groups"]["CLUENER2020 overall"] == ["cluener2020"]


def test_download_unpacks_the_official_archive_shape_and_a_run_reads_it(run_cli, kernel: Kernel, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """cluener_public.zip holds cluener_public/{train,dev,test,cluener_predict}.json and a README (no checksum
    recorded: none could be taken here); the reader finds the files one folder down."""
    from tests.support.local_http import LocalServer, zip_bytes

    names = ("train.json", "dev.json", "test.json")
    members = {f"cluener_public/{name}": (SAMPLE / name).read_bytes() for name in names}
    members["cluener_public/cluener_predict.json"] = (DATA / "gold16.json").read_bytes()
    with LocalServer({"cluener_public.zip": zip_bytes(members)}) as server:
        monkeypatch.setenv("CLUE_DATA_URL", server.url)
        fetched = run_cli("download", "cluener2020", kernel=kernel)
    assert fetched.exit_code == 0, fetched.output
    result = run_cli("run", "cluener2020", "--model", "ner-dictionary", "-o", tmp_path / "out", kernel=kernel)
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "cluener2020" / "manifest.json").read_text(encoding="utf-8"))
    folder = tmp_path / "clue-home" / "data" / "cluener2020" / "cluener_public"
    assert sorted(manifest["data"]["files"]) == [str(folder / name) for name in ("dev.json", "test.json", "train.json")]
    assert (folder / "dev.json").read_bytes() == (SAMPLE / "dev.json").read_bytes()
    assert len(lines(tmp_path / "out" / "cluener2020" / "predictions" / "dev.jsonl")) == 16

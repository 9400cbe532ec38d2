"""Incomplete runs, mixed data versions, sample and --limit runs, other settings and published
scores that do not match: the report says so instead of mixing them silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.errors import ClueError
from clue_report import write_report
from clue_report.published import mismatch, run_usage
from tests.report.conftest import _run


def _edit(path: Path, **changes) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        target = data
        *parents, last = key.split("__")
        for parent in parents:
            target = target[parent]
        target[last] = value
    path.write_text(json.dumps(data), encoding="utf-8")


def _build(kernel, paths: list[Path], tmp_path: Path) -> dict:
    return write_report(kernel, paths, tmp_path / "report", charts=False)


@pytest.fixture
def runs(baseline_runs: Path, tmp_path: Path) -> Path:
    """A private copy of the baseline runs, to damage."""
    copy = tmp_path / "runs"
    shutil.copytree(baseline_runs, copy)
    return copy


def test_unfinished_runs_are_named_and_left_out(kernel, runs: Path, tmp_path: Path) -> None:
    shutil.copytree(runs / "afqmc", runs / ".afqmc.staging")
    _edit(runs / ".afqmc.staging" / "manifest.json", status="running")
    _edit(runs / "tnews" / "manifest.json", status="running")
    (runs / "iflytek" / "metrics.json").unlink()
    report = _build(kernel, [runs], tmp_path)
    left_out = {u["task"]: u["reason"] for u in report["unfinished"]}
    assert set(left_out) == {"afqmc", "tnews", "iflytek"}
    assert "staging" in left_out["afqmc"] and "'running'" in left_out["tnews"] and "metrics.json" in left_out["iflytek"]
    assert {r["task"] for r in report["runs"]} == {"afqmc", "ocnli", "cmrc2018", "chid", "c3"}
    assert sum("left out, unfinished" in w for w in report["warnings"]) == 3
    assert report["rows"][0]["groups"]["CLUE 1.1 classification"]["missing"] == [
        "tnews", "iflytek", "cluewsc2020", "csl"]


def test_different_dev_data_is_flagged(kernel, runs: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(runs, other)
    for task in ("afqmc", "tnews"):
        manifest = json.loads((other / task / "manifest.json").read_text())
        files = {path.replace("samples", "full"): "0" * 64 for path in manifest["data"]["files"]}
        _edit(other / task / "manifest.json", data__source="dir", data__files=files)
        _edit(other / task / "metrics.json", sample=False)
    report = _build(kernel, [runs, other], tmp_path)
    flagged = [w for w in report["warnings"] if "different dev data" in w]
    assert len(flagged) == 2 and flagged[0].startswith("afqmc:")
    afqmc = next(t for t in report["tasks"] if t["name"] == "afqmc")
    assert len(afqmc["data_versions"]) == 2
    assert [row["comparable"] for row in report["rows"]] == [True, False]


def test_runs_with_other_settings_are_not_averaged(kernel, runs: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(runs / "afqmc", other / "afqmc")
    _edit(other / "afqmc" / "manifest.json", settings__learning_rate=0.1, seed=7)
    report = _build(kernel, [runs, other], tmp_path)
    [row] = report["rows"]
    assert row["cells"]["afqmc"]["seeds"] == [42]
    assert any("other settings (learning_rate)" in w for w in report["warnings"])
    assert [r["in_table"] for r in report["runs"] if r["task"] == "afqmc"] == [True, False]


def test_limit_runs_are_their_own_row_and_not_comparable(kernel, tmp_path: Path) -> None:
    limited = _run(kernel, ["afqmc"], "baseline", tmp_path / "limited", limit=5)
    report = _build(kernel, [limited], tmp_path)
    [row] = report["rows"]
    assert row["label"] == "baseline · sample, --limit 5" and not row["comparable"]
    [board] = report["tasks"][0]["boards"]
    assert all("rank" not in e for e in board["entries"] if e["kind"] == "run")


def test_not_a_run_folder_is_one_clear_error(kernel, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ClueError, match=r"no metrics\.json or comparison\.json"):
        _build(kernel, [tmp_path / "empty"], tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ClueError, match="is a file, not a folder"):
        write_report(kernel, [], tmp_path / "file", charts=False)


def _score(**changes):
    return {"model": "M", "split": "dev", "version": "1.1", "metric": "accuracy", "value": 70.0, "source": "s",
            "mode": "fine-tuned", "shots": None, "prompt": None, **changes}


ENCODER = run_usage({"model_category": "", "report_settings": {"epochs": 3}})
LLM = run_usage({"model_category": "llm", "report_settings": {"mode": "generate", "shots": 0},
                 "model_info": {"prompt": {"template_sha256": "abc", "prompts_sha256": "def"}}})


@pytest.mark.parametrize(
    ("score", "usage", "reason"),
    [
        (_score(), ENCODER, None),
        (_score(version="1.0"), ENCODER, None),  # dev files are shared by both editions
        (_score(split="test"), ENCODER, "published on test"),
        (_score(metric="macro_f1"), ENCODER, "metric macro_f1"),
        (_score(mode="generation", shots=0), ENCODER, "mode generation"),
        (_score(mode="generation", shots=0), LLM, None),
        (_score(mode="generation", shots=5), LLM, "5 shots"),
        (_score(mode="likelihood", shots=0), LLM, "mode likelihood"),
        (_score(mode="generate", shots=0), LLM, None),
        (_score(mode="gen", shots=0), LLM, None),
        (_score(), LLM, "mode fine-tuned"),
        (_score(mode="generation", shots=0, prompt="abc"), LLM, None),
        (_score(mode="generation", shots=0, prompt="other"), LLM, "a different prompt"),
    ],
)
def test_published_scores_match_only_like_with_like(score, usage, reason) -> None:
    found = mismatch(score, usage, {"accuracy": 60.0})
    assert (found is None) if reason is None else (reason in found), found


def test_a_test_score_compares_only_on_its_own_version() -> None:
    assert mismatch(_score(split="test", version="1.0"), ENCODER, {"accuracy": 1.0}, split="test", version="1.1")
    assert mismatch(_score(split="test", version="1.1"), ENCODER, {"accuracy": 1.0}, split="test",
                    version="1.1") is None


def test_without_the_data_runs_are_scored_from_their_records(kernel, runs: Path, tmp_path: Path) -> None:
    _edit(runs / "chid" / "manifest.json", data__data_dir=str(tmp_path / "gone"))
    report = _build(kernel, [runs], tmp_path)
    chid = next(r for r in report["runs"] if r["task"] == "chid")
    assert chid["scored_from"] == "records" and chid["recomputed"] == chid["dev"]
    assert chid["intervals"]["accuracy"]["unit"] == "passage"  # the records name their passages
    assert any("chid" in w and "scored from the records alone (no texts)" in w for w in report["warnings"])


def test_records_that_disagree_with_the_data_are_not_matched_to_it(kernel, runs: Path, tmp_path: Path) -> None:
    path = runs / "afqmc" / "predictions" / "dev.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["gold"] = "1" if first["gold"] == "0" else "0"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    report = _build(kernel, [runs], tmp_path)
    afqmc = next(r for r in report["runs"] if r["task"] == "afqmc")
    assert afqmc["scored_from"] == "records"
    assert any("no longer matches the run's predictions" in w for w in report["warnings"])
    assert any("recomputed from predictions/dev.jsonl" in w for w in report["warnings"])  # the totals differ now


def test_runs_of_tasks_not_installed_still_count(baseline_runs: Path, tmp_path: Path) -> None:
    from clue_builtin import hooks as builtin
    from clue_core.kernel import Kernel
    from clue_tasks_classic import hooks as classic

    kernel = Kernel(entrypoints=False, strict=False, disabled=())
    kernel.register(builtin, "builtin", distribution="clue-core")
    kernel.register(classic, "clue-tasks-classic")
    report = _build(kernel, [baseline_runs], tmp_path)
    c3 = next(r for r in report["runs"] if r["task"] == "c3")
    assert c3["intervals"]["accuracy"] == {"reason": "task not installed"}
    assert report["rows"][0]["groups"]["CLUE 1.1 reading comprehension"]["complete"]  # members recorded by the runs
    assert next(t for t in report["tasks"] if t["name"] == "c3")["installed"] is False


def test_an_llm_asked_another_way_is_another_row(llm_kernel, tmp_path: Path) -> None:
    from tests.report.fixtures import write_run

    for chat in (False, True):
        write_run(llm_kernel, tmp_path / f"chat-{chat}", "afqmc",
                  report_settings={"mode": "generate", "shots": 0, "chat": chat, "temperature": 0.0})
    report = _build(llm_kernel, [tmp_path / "chat-False", tmp_path / "chat-True"], tmp_path)
    assert sorted(row["label"] for row in report["rows"]) == [
        "llm:Qwen-7B-Chat · generate, 0-shot · sample · chat=false",
        "llm:Qwen-7B-Chat · generate, 0-shot · sample · chat=true"]
    assert not any("other settings" in w for w in report["warnings"])

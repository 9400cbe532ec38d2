"""The six DataCLUE tasks: reading the official files' quirks, the recipe, the protocol mark, a run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clue_core.errors import ClueError, InputError
from clue_tasks_dataclue.catalog import TASKS, recipe
from clue_tasks_dataclue.protocol import MARK, note
from clue_tasks_dataclue.readers import read_pair, read_single

SAMPLES = Path(__file__).resolve().parents[2] / "plugins/clue-tasks-dataclue/clue_tasks_dataclue/samples"


def _task(folder: str):
    return next(t for t in TASKS if t.name == f"dataclue-{folder}")


def test_six_tasks_with_the_fixed_recipe_pinned_for_hf() -> None:
    assert [t.name for t in TASKS] == ["dataclue-cic", "dataclue-tnews", "dataclue-iflytek", "dataclue-afqmc",
                                       "dataclue-qbqtc", "dataclue-triclue"]
    for task in TASKS:
        folder = task.name.removeprefix("dataclue-")
        assert task.scored_splits == ("test_public",) and task.primary_metric == "macro_f1"
        assert task.recommendations == task.model_recommendations["hf"]
        assert task.model_recommendations["hf:hfl/rbtl3"] == {**task.recommendations, "recipe_model": "hf:hfl/rbtl3"}
        assert task.recommendations["epochs"] == (6 if folder == "iflytek" else 15)
        assert task.recommendations["max_length"] == (256 if folder == "iflytek" else 32)
        assert (task.recommendations["learning_rate"], task.recommendations["batch_size"]) == (2e-5, 64)
        assert task.recommendations["keep"] == "last"  # the recipe predicts with the last epoch's model
    assert len(_task("cic").labels) == 118 and len(_task("iflytek").labels) == 119
    assert _task("qbqtc").labels == ("0", "1", "2")


def test_the_labels_match_labels_json_of_the_samples() -> None:
    for folder in ("cic", "tnews", "iflytek"):
        lines = (SAMPLES / folder / "labels.json").read_text(encoding="utf-8").splitlines()
        assert [str(json.loads(line)["label"]) for line in lines] == list(_task(folder).labels)


def test_triclue_mixed_integer_and_string_labels_read_as_strings() -> None:
    part = read_pair(_task("triclue"), SAMPLES / "triclue", "train")
    assert {e.label for e in part.examples} <= {"0", "1"}
    raw = [json.loads(line)["label"] for line in (SAMPLES / "triclue/train.json").read_text().splitlines()]
    assert {type(v) for v in raw} == {int, str}
    assert any("integer label(s) read as label strings" in n for n in part.notes)


def test_ids_are_line_positions_whatever_the_file_says(tmp_path: Path) -> None:
    lines = ['{"id": 7, "label": "1", "sentence": "a"}', '{"id": 7, "label": "0", "sentence": "b"}',
             '{"label": "1", "sentence": "c"}']
    (tmp_path / "train.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    part = read_single(_task("tnews"), tmp_path, "train")
    assert [e.id for e in part.examples] == [0, 1, 2]


def test_evaluate_takes_the_official_prediction_file(run_cli, kernel) -> None:
    """run_classifier.py's test_prediction.json: {"id": position, "label": str}; cic's file ids are 12000.."""
    data = Path(__file__).parent / "data" / "cic"
    official = json.loads((Path(__file__).parent / "data/official.json").read_text(encoding="utf-8"))
    result = run_cli("evaluate", "dataclue-cic", data / "perturbed.json", "--data-dir", data,
                     "--split", "test_public", "--json", kernel=kernel)
    assert result.exit_code == 0, result.output
    assert f"{100 * official['cic']['perturbed']['f1_macro']}" in result.output.replace(" ", "")


def test_datasets_folder_prefers_the_users_copy_then_the_raw_file(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "cic", tmp_path / "raw_cic")
    (tmp_path / "cic").mkdir()
    shutil.copy(SAMPLES / "cic/test_public.json", tmp_path / "cic/test_public.json")
    (tmp_path / "cic/train.json").write_text('{"id": 1, "label": 3, "sentence": "改过的"}\n', encoding="utf-8")
    train = read_single(_task("cic"), tmp_path, "train")
    assert [e.text for e in train.examples] == ["改过的"] and train.files == (str(tmp_path / "cic/train.json"),)
    dev = read_single(_task("cic"), tmp_path, "dev")
    assert dev.files == (str(tmp_path / "raw_cic/dev.json"),) and "raw_cic/dev.json" in dev.notes[0]


def test_an_empty_train_file_is_one_clear_error(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "qbqtc", tmp_path / "raw_qbqtc")
    (tmp_path / "raw_qbqtc/train.json").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=r"is empty.*move or add labelled examples"):
        read_pair(_task("qbqtc"), tmp_path, "train")


def test_a_bad_line_names_file_line_and_field(tmp_path: Path) -> None:
    (tmp_path / "train.json").write_text('{"label": "1", "sentence1": "a", "sentence2": "b"}\n'
                                         '{"label": 1.5, "sentence1": "a", "sentence2": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_pair(_task("afqmc"), tmp_path, "train")
    assert caught.value.line == 2 and caught.value.field == "label"


def test_a_labels_json_with_other_labels_is_refused(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "tnews", tmp_path / "tnews")
    with open(tmp_path / "tnews/labels.json", "a", encoding="utf-8") as out:
        out.write('{"label": "15", "label_des": "新"}\n')
    with pytest.raises(InputError, match="'15'"):
        read_single(_task("tnews"), tmp_path / "tnews", "train")


def test_the_protocol_note_names_each_departure() -> None:
    wanted = {**recipe("cic"), "recipe_model": "hf:hfl/rbtl3"}
    assert note("cic", wanted) == ""
    assert note("cic", {**wanted, "epochs": 3, "learning_rate": 5e-3}) == (
        f"{MARK}: epochs 3 (recipe 15), learning_rate 0.005 (recipe 2e-05)")
    assert note("iflytek", wanted).startswith(f"{MARK}: epochs 15 (recipe 6), max_length 32 (recipe 256)")
    assert note("cic", recipe("cic")) == f"{MARK}: model is not hf:hfl/rbtl3"
    assert note("cic", None) == ""
    assert note("cic", {**wanted, "keep": "best"}) == f"{MARK}: keep 'best' (recipe 'last')"


def test_keep_is_declared_as_the_hf_models_declare_it() -> None:
    """The kernel keeps the task's declaration (the first): it must be hf's, choices included."""
    from clue_tasks_dataclue.catalog import KEEP_SETTING

    common = pytest.importorskip("clue_models_hf.settings").COMMON
    hf = next(s for s in common if s.name == "keep")
    assert (KEEP_SETTING.type, KEEP_SETTING.default, KEEP_SETTING.choices) == (hf.type, hf.default, hf.choices)
    assert (KEEP_SETTING.schedule, KEEP_SETTING.report) == (hf.schedule, hf.report)


@pytest.mark.parametrize(("model", "mark"), [
    ("hf:hfl/rbtl3", ""),
    ("hf:/models/chinese_rbtl3_pytorch", f"{MARK}: model is not hf:hfl/rbtl3"),  # the task cannot tell a local copy
    ("hf:hfl/rbt3", f"{MARK}: model is not hf:hfl/rbtl3, learning_rate 5e-05 (recipe 2e-05), epochs_scale 2.0 "
                    "(recipe 1.0)"),
])
def test_the_planned_settings_of_hf_models_reach_the_reader(model: str, mark: str) -> None:
    from clue_core.plugin import api

    settings = {s["name"]: s["value"] for s in api.plan("dataclue-cic", model, sample=True)[0]["settings"]}
    part = read_single(_task("cic"), SAMPLES / "cic", "train", settings=settings)
    assert [n for n in part.notes if MARK in n] == ([mark] if mark else [])
    assert settings["keep"] == "last"  # the recipe's, pinned for every hf model


def test_run_marks_a_departure_in_the_notes_and_manifest(run_cli, kernel, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    kept = run_cli("run", "dataclue-cic", "--model", "dc-char", "--sample", "-o", out / "a",
                   "--set", "recipe_model=hf:hfl/rbtl3", kernel=kernel)  # as the recipe's model would
    assert kept.exit_code == 0, kept.output
    assert MARK not in kept.output
    changed = run_cli("run", "dataclue-cic", "--model", "dc-char", "--sample", "-o", out / "b",
                      "--set", "epochs=3", kernel=kernel)
    assert changed.exit_code == 0, changed.output
    assert f"{MARK}: model is not hf:hfl/rbtl3, epochs 3 (recipe 15)" in changed.output
    manifest = json.loads((out / "b/dataclue-cic/manifest.json").read_text(encoding="utf-8"))
    assert f"train: {MARK}: model is not hf:hfl/rbtl3, epochs 3 (recipe 15)" in manifest["notes"]
    metrics = json.loads((out / "a/dataclue-cic/metrics.json").read_text(encoding="utf-8"))
    assert set(metrics["test_public"]) == {"macro_f1", "micro_f1"} and metrics["primary_metric"] == "macro_f1"
    assert json.loads((out / "a/dataclue-cic/manifest.json").read_text(encoding="utf-8"))["settings"]["keep"] == "last"


def test_keeping_the_best_checkpoint_is_marked(run_cli, kernel, tmp_path: Path) -> None:
    best = run_cli("run", "dataclue-cic", "--model", "dc-char", "--sample", "-o", tmp_path,
                   "--set", "recipe_model=hf:hfl/rbtl3", "--set", "keep=best", kernel=kernel)
    assert best.exit_code == 0, best.output
    manifest = json.loads((tmp_path / "dataclue-cic/manifest.json").read_text(encoding="utf-8"))
    assert f"train: {MARK}: keep 'best' (recipe 'last')" in manifest["notes"]
    wrong = run_cli("run", "dataclue-cic", "--model", "dc-char", "--sample", "-o", tmp_path / "x",
                    "--set", "keep=first", kernel=kernel)
    assert wrong.exit_code == 2 and "keep" in wrong.output and "last" in wrong.output


def test_check_reads_every_sample(run_cli, kernel) -> None:
    result = run_cli("check", *(t.name for t in TASKS), kernel=kernel)
    assert result.exit_code == 0, result.output
    assert MARK not in result.output


def test_hook_module_is_cheap() -> None:
    import subprocess
    import sys

    code = ("import sys, clue_tasks_dataclue.hooks; "
            "print(sorted(m for m in ('torch', 'numpy', 'transformers', 'click') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_task_folder_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ClueError, match=r"needs train\.json"):
        read_single(_task("cic"), tmp_path, "train")


def test_more_than_30000_train_and_dev_examples_is_marked(tmp_path: Path) -> None:
    line = '{"label": "1", "sentence1": "a", "sentence2": "b"}\n'
    (tmp_path / "train.json").write_text(line * 29_000, encoding="utf-8")
    (tmp_path / "dev.json").write_text(line * 1_000, encoding="utf-8")
    assert not any(MARK in n for n in read_pair(_task("afqmc"), tmp_path, "train").notes)
    (tmp_path / "dev.json").write_text(line * 1_001, encoding="utf-8")
    notes = read_pair(_task("afqmc"), tmp_path, "train").notes
    assert f"{MARK}: train + dev hold 30,001 examples (DataCLUE allows 30,000)" in notes

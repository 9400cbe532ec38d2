"""``clue-core run … --set method=pet`` end to end on the bundled samples: train, save, reload, zero-shot,
and the refusals as one ``error:`` line with exit code 2 before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_afqmc_trains_with_pet_and_the_saved_model_predicts_the_same(run_cli, tmp_path) -> None:
    result = run_cli("run", "afqmc", "--model", "hf-tiny", "--sample", "--set", "method=pet", "--set", "progress=false",
                     "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "afqmc"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["settings"]["method"] == "pet"
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["model_info"]["method"] == "pet"
    record = json.loads((run / "model" / "clue_model.json").read_text())
    assert record["method"] == "pet" and record["pet"]["verbalizers"] == {"0": "不同", "1": "相同"}
    trained = read_jsonl(run / "predictions" / "dev.jsonl")
    assert all(len(r["scores"]) == 2 and abs(sum(r["scores"]) - 1) < 1e-4 for r in trained)

    again = run_cli("run", "afqmc", "--model", run / "model", "--no-train", "--sample", "-o", tmp_path / "again")
    assert again.exit_code == 0, again.output
    assert read_jsonl(tmp_path / "again" / "afqmc" / "predictions" / "dev.jsonl") == trained


def test_zero_shot_is_no_train_on_a_masked_lm_checkpoint(run_cli, tmp_path) -> None:
    """A plain ``save_pretrained`` masked LM (what a hub checkpoint is), asked with no training at all."""
    from transformers import BertForMaskedLM

    from clue_core.data import sample_dir
    from clue_core.kernel import Kernel
    from clue_core.reading import read_split
    from clue_models_hf import tiny
    from clue_models_hf.pet import prompt_texts, task_prompt

    task = Kernel().task("afqmc")
    dev = read_split(task, sample_dir(task), "dev").examples
    tokenizer = tiny.build_tokenizer([t for e in dev for t in (e.text, e.text_pair)],
                                     required=prompt_texts(task_prompt(task, False)))
    BertForMaskedLM(tiny.tiny_config(len(tokenizer), {}, 128)).save_pretrained(tmp_path / "mlm")
    tokenizer.save_pretrained(tmp_path / "mlm")
    result = run_cli("run", "afqmc", "--model", f"hf:{tmp_path / 'mlm'}", "--sample", "--no-train", "--set",
                     "method=pet", "-o", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    records = read_jsonl(tmp_path / "runs" / "afqmc" / "predictions" / "dev.jsonl")
    assert len(records) == len(dev)
    assert all(r["prediction"] in ("0", "1") and len(r["scores"]) == 2 for r in records)
    assert not (tmp_path / "runs" / "afqmc" / "model").exists()  # nothing trained, nothing saved


@pytest.mark.parametrize(("args", "message"), [
    (("cmrc2018",), "error: setting 'method=pet' scores classification labels; span tasks use method=finetune"),
    (("afqmc", "--set", "max_length=12"), "error: method=pet: max_length 12 leaves no room for afqmc's texts"),
])
def test_refusals_are_one_line_before_anything_is_written(run_cli, tmp_path, args: tuple[str, ...],
                                                          message: str) -> None:
    result = run_cli("run", *args, "--model", "hf-tiny", "--sample", "--set", "method=pet", "-o", tmp_path / "runs")
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())

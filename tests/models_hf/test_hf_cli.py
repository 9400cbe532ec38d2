"""End to end through ``clue-core run`` on the bundled samples of every task plugin."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from clue_core.data import sample_dir
from clue_core.kernel import Kernel
from clue_core.reading import read_split
from clue_core.rundir import RunPaths
from clue_models_hf import training

from .conftest import DEMO_TASKS, invoke

pytestmark = pytest.mark.slow


def dev_examples(task_name: str) -> list:
    task = Kernel().task(task_name)
    return list(read_split(task, sample_dir(task), "dev").examples)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_kind_trains_scores_and_writes_its_submission_files(demo_run) -> None:
    runs, _ = demo_run
    for name in DEMO_TASKS:
        manifest = json.loads((runs / name / "manifest.json").read_text())
        assert manifest["status"] == "complete", name
        assert manifest["submission_files"] and all(
            (runs / name / "submission" / f).is_file() for f in manifest["submission_files"])
        metrics = json.loads((runs / name / "metrics.json").read_text())
        assert metrics["primary"] is not None
        # the schedule hf-tiny really followed: its 5e-3 rate, the task's epochs
        assert metrics["model_info"] == {"backbone": "hf-tiny", "learning_rate": 5e-3,
                                         "epochs": manifest["settings"]["epochs"]}
        model = runs / name / "model"
        assert {"model.safetensors", "config.json", "clue_model.json"} <= {p.name for p in model.iterdir()}
        assert not list(model.glob("*.bin"))
        state = json.loads((runs / name / "training" / "trainer_state.json").read_text())
        assert state["world_size"] == 1 and state["history"]


@pytest.mark.parametrize("task_name", ["cmrc2018", "drcd"])
def test_span_answers_come_from_the_contexts_own_characters(demo_run, task_name: str) -> None:
    runs, _ = demo_run
    examples = dev_examples(task_name)
    records = read_jsonl(runs / task_name / "predictions" / "dev.jsonl")
    assert [r["id"] for r in records] == [e.id for e in examples]
    for example, record in zip(examples, records):
        assert record["prediction"] in example.context  # DRCD stays in Traditional characters


@pytest.mark.parametrize("task_name", ["chid", "c3"])
def test_multiple_choice_scores_cover_exactly_the_real_choices(demo_run, task_name: str) -> None:
    runs, _ = demo_run
    examples = dev_examples(task_name)
    records = read_jsonl(runs / task_name / "predictions" / "dev.jsonl")
    assert len(records) == len(examples)
    for example, record in zip(examples, records):
        assert len(record["scores"]) == len(example.choices)
        assert 0 <= record["prediction"] < len(example.choices)


def test_a_trained_model_directory_predicts_without_training(demo_run, tmp_path) -> None:
    runs, _ = demo_run
    result = invoke("run", "afqmc", "c3", "--sample", "--no-train", "--output-dir", tmp_path,
                    "--model", runs / "afqmc" / "model")
    assert result.exit_code == 2 and "error:" in result.output  # the afqmc model is no c3 model
    result = invoke("run", "afqmc", "--model", runs / "afqmc" / "model", "--no-train", "--sample",
                    "--output-dir", tmp_path / "again")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "again" / "afqmc" / "training").exists()
    before = read_jsonl(runs / "afqmc" / "predictions" / "dev.jsonl")
    after = read_jsonl(tmp_path / "again" / "afqmc" / "predictions" / "dev.jsonl")
    assert [r["prediction"] for r in after] == [r["prediction"] for r in before]
    assert (tmp_path / "again" / "afqmc" / "submission" / "afqmc_predict.json").read_text() == \
        (runs / "afqmc" / "submission" / "afqmc_predict.json").read_text()


@pytest.fixture(scope="module")
def pretrained_dir(tmp_path_factory) -> Path:
    """A bare encoder (no head, no clue_model.json) saved the way the hub stores checkpoints."""
    from transformers import BertModel

    from clue_models_hf import tiny

    path = tmp_path_factory.mktemp("checkpoint")
    tokenizer = tiny.build_tokenizer(["蚂蚁借呗花呗怎么还款为什么我的额度降低了"])
    config = tiny.tiny_config(len(tokenizer), {"tiny_hidden_size": 32, "tiny_num_layers": 1}, 128)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_a_save_pretrained_checkpoint_loads_as_hf_path(pretrained_dir: Path, tmp_path) -> None:
    import torch
    from safetensors.torch import load_file

    from clue_models_hf.factory import create

    task = Kernel().task("afqmc")
    learner = create(str(pretrained_dir), task, {"epochs": 1})
    learner._build([])
    saved = load_file(str(pretrained_dir / "model.safetensors"))
    key = next(k for k in saved if k.endswith("word_embeddings.weight"))
    assert torch.equal(learner.model.bert.embeddings.word_embeddings.weight, saved[key])

    result = invoke("run", "afqmc", "--model", f"hf:{pretrained_dir}", "--sample", "--output-dir", tmp_path,
                    "--set", "epochs=1", "--set", "progress=false")
    assert result.exit_code == 0, result.output
    config = json.loads((tmp_path / "afqmc" / "model" / "config.json").read_text())
    assert sorted(config["id2label"].values()) == ["0", "1"]


@pytest.mark.parametrize(("args", "message"), [
    (("--model", "hf:/no/such/checkpoint"), "no such model directory"),
    (("--model", "hf-tiny", "--set", "mixed_precision=fp16"), "fp16 needs a CUDA GPU"),
    (("--model", "hf-tiny", "--set", "doc_stride=500"), "doc_stride"),
    (("--model", "hf-tiny", "--set", "log_with=tensorboard"), "needs TensorBoard"),
])
def test_user_mistakes_are_one_error_line(tmp_path, args, message: str) -> None:
    if "TensorBoard" in message and any(importlib.util.find_spec(m) for m in ("tensorboard", "tensorboardX")):
        pytest.skip("TensorBoard is installed here")
    if "fp16" in message:
        import torch

        if torch.cuda.is_available():
            pytest.skip("fp16 is valid on this machine")
    task = "cmrc2018" if "doc_stride" in message else "afqmc"
    result = invoke("run", task, "--sample", "--output-dir", tmp_path / "out", *args)
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()  # refused before anything was written


class Interrupted(Exception):
    """Stands for a kill: not a ClueError, so the runner keeps the staging folder."""


def test_an_interrupted_run_stays_in_staging_and_resume_finishes_it(tmp_path, monkeypatch) -> None:
    schedule = ("--set", "batch_size=8", "--set", "save_every=2", "--set", "eval_every=3", "--set", "progress=false")
    straight = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", tmp_path / "straight", *schedule)
    assert straight.exit_code == 0, straight.output

    def interrupt(self, step):
        if step == 7:
            raise Interrupted

    out = tmp_path / "resumed"
    with monkeypatch.context() as patch:
        patch.setattr(training.Trainer, "after_step", interrupt)
        with pytest.raises(Interrupted):
            invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", out, *schedule)
    paths = RunPaths(out / "afqmc")
    assert not paths.final.exists() and not paths.lock.exists()
    checkpoints = paths.staging / "training" / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == ["step-00000004", "step-00000006"]

    again = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", out, *schedule)
    assert again.exit_code == 2 and "--resume" in again.output  # never silently discarded

    changed = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", out, "--resume", *schedule,
                     "--set", "learning_rate=1e-3")
    assert changed.exit_code == 2 and "learning_rate" in changed.output  # a schedule setting differs

    resumed = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", out, "--resume", *schedule)
    assert resumed.exit_code == 0, resumed.output
    assert "resume: continuing from step-00000006" in resumed.output
    assert not paths.staging.exists()
    states = [json.loads((d / "afqmc" / "training" / "trainer_state.json").read_text())
              for d in (tmp_path / "straight", out)]
    assert states[1]["global_step"] == states[0]["global_step"] == 15
    assert states[1]["history"] == states[0]["history"]
    predictions = [read_jsonl(d / "afqmc" / "predictions" / "dev.jsonl") for d in (tmp_path / "straight", out)]
    assert predictions[1] == predictions[0]
    assert (out / "afqmc" / "submission" / "afqmc_predict.json").read_bytes() == \
        (tmp_path / "straight" / "afqmc" / "submission" / "afqmc_predict.json").read_bytes()

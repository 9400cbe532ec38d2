"""``keep=last``: the model a run saves and predicts with is the last step's, not the best on dev.

DataCLUE's fixed recipe predicts with the model of the last epoch; the hf learner's default restores
the best dev checkpoint. hf-tiny trains on the bundled afqmc sample through ``clue-core run``. Which
evaluation is the best is scripted (each one scores lower than the one before, so the first is the
best), never left to the floats, which differ across CPUs: what is asserted is what the learner
records (``clue_model.json``'s ``kept``: the checkpoint, its step and epoch) and which weights the
saved model holds (those of ``training/best/`` or those of the final checkpoint).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clue_models_hf import training

from .conftest import invoke

pytestmark = pytest.mark.slow

#: afqmc's sample: 40 training examples in batches of 8 is 5 steps an epoch, 3 epochs (the task's) 15 steps;
#: a checkpoint every 5 steps puts one at the final step.
SCHEDULE = ("--set", "batch_size=8", "--set", "save_every=5", "--set", "progress=false")
STEPS, EPOCHS, FIRST_EPOCH_STEP = 15, 3, 5


class Interrupted(Exception):
    """Stands for a kill: not a ClueError, so the runner keeps the staging folder."""


@pytest.fixture
def first_is_best(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every dev evaluation scores lower than the one before: the best checkpoint is the first epoch's."""
    original = training.Trainer.__init__

    def init(self: training.Trainer, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.evaluate = lambda: {self.primary_metric: 100.0 - self.state.global_step}

    monkeypatch.setattr(training.Trainer, "__init__", init)


def run(out: Path, *extra: str) -> Path:
    result = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", out, *SCHEDULE, *extra)
    assert result.exit_code == 0, result.output
    return out / "afqmc"


def tensors(path: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(path))


def same_weights(a: dict[str, Any], b: dict[str, Any]) -> bool:
    import torch

    shared = set(a) & set(b)
    assert len(shared) > 10, (sorted(a)[:5], sorted(b)[:5])  # the same model's parameters, named alike
    return all(torch.equal(a[k], b[k]) for k in shared)


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def final_checkpoint(folder: Path) -> dict[str, Any]:
    return tensors(folder / "training" / "checkpoints" / f"step-{STEPS:08d}" / "model.safetensors")


def test_last_saves_the_final_steps_weights_and_best_the_best_ones(first_is_best, tmp_path: Path) -> None:
    last = run(tmp_path / "last", "--set", "keep=last")
    manifest = read(last / "manifest.json")
    assert manifest["settings"]["keep"] == "last" and manifest["setting_sources"]["keep"] == "--set"
    state = read(last / "training" / "trainer_state.json")
    assert (state["global_step"], state["best_step"]) == (STEPS, FIRST_EPOCH_STEP)
    assert read(last / "model" / "clue_model.json")["kept"] == {"checkpoint": "last", "step": STEPS,
                                                                "epoch": EPOCHS}
    saved = tensors(last / "model" / "model.safetensors")
    assert same_weights(saved, final_checkpoint(last))
    assert not same_weights(saved, tensors(last / "training" / "best" / "weights.safetensors"))

    best = run(tmp_path / "best")  # the default: today's behaviour
    assert read(best / "manifest.json")["settings"]["keep"] == "best"
    assert read(best / "model" / "clue_model.json")["kept"] == {"checkpoint": "best", "step": FIRST_EPOCH_STEP,
                                                                "epoch": 1}
    saved = tensors(best / "model" / "model.safetensors")
    assert same_weights(saved, tensors(best / "training" / "best" / "weights.safetensors"))
    assert not same_weights(saved, final_checkpoint(best))
    # the dev predictions come from the model kept: the two runs trained alike and predict differently
    assert same_weights(final_checkpoint(best), final_checkpoint(last))
    assert (last / "predictions" / "dev.jsonl").read_bytes() != (best / "predictions" / "dev.jsonl").read_bytes()


def test_a_resumed_last_run_ends_on_the_last_epochs_model(first_is_best, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    straight = run(tmp_path / "straight", "--set", "keep=last")

    def interrupt(self: training.Trainer, step: int) -> None:
        if step == 7:
            raise Interrupted

    out = tmp_path / "resumed"
    with monkeypatch.context() as patch:
        patch.setattr(training.Trainer, "after_step", interrupt)
        with pytest.raises(Interrupted):
            invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", out, *SCHEDULE, "--set", "keep=last")
    resumed = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "-o", out, "--resume", *SCHEDULE,
                     "--set", "keep=last")
    assert resumed.exit_code == 0, resumed.output
    assert "resume: continuing from step-00000005" in resumed.output
    assert "kept the last step's model (step 15, epoch 3; keep=last)" in resumed.output
    folder = out / "afqmc"
    assert read(folder / "model" / "clue_model.json")["kept"] == {"checkpoint": "last", "step": STEPS,
                                                                  "epoch": EPOCHS}
    saved = tensors(folder / "model" / "model.safetensors")
    assert same_weights(saved, tensors(straight / "model" / "model.safetensors"))
    assert not same_weights(saved, tensors(folder / "training" / "best" / "weights.safetensors"))


def test_keep_takes_best_or_last_only() -> None:
    result = invoke("run", "afqmc", "--model", "hf-tiny", "--sample", "--dry-run", "--set", "keep=first")
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "keep" in errors[0] and "best" in errors[0] and "last" in errors[0], result.output

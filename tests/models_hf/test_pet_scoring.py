"""PET scoring and training: a label's score is the mean log-probability of its verbaliser's tokens at
their masks (checked against hand-made MLM logits), training through the hf loop learns a separable
task, a saved PET model predicts identically when loaded again, and zero-shot scoring needs no training."""

from __future__ import annotations

import json
import math
import random

import pytest
import torch

from clue_core.plugin import ClassificationExample, Prompt, TaskSpec
from clue_models_hf.factory import create, create_tiny
from clue_models_hf.pet_scoring import PetModel, pet_forward

from .conftest import CHARS, FAST, TINY, accuracy_scorer, run_context, sentence

TASK = TaskSpec("toy-pet", "classification", "toy", "x:y", labels=("neg", "pos"),
                prompt=Prompt("", "评价：{text}", {"neg": "差", "pos": "很好"}))
PET = {**TINY, "method": "pet", "learning_rate": 3e-3, "epochs": 12, "logging_steps": 1}


def _tiny_mlm(vocab: int = 10) -> torch.nn.Module:
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    return BertForMaskedLM(BertConfig(vocab_size=vocab, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=16)).eval()


def test_a_label_scores_the_mean_log_probability_of_its_tokens_in_its_own_variant(monkeypatch) -> None:
    mlm = _tiny_mlm()
    tokens = [[3, 4], [5, 6, 7]]  # two variants: 2 masks and 3 masks
    model = PetModel(mlm, tokens)
    assert (model.variants, model.width) == (2, 3)
    table = torch.randn(2, 3, 10)  # the MLM head's logits: (variant, mask position, vocabulary)
    monkeypatch.setattr(mlm.cls, "forward", lambda hidden: table[torch.arange(hidden.shape[0]) % 2])
    batch = {"input_ids": torch.tensor([[2, 8, 1, 1, 9, 0], [2, 8, 1, 1, 1, 9]]),
             "attention_mask": torch.tensor([[1, 1, 1, 1, 1, 0], [1] * 6]),
             "mask_start": torch.tensor([2, 2]), "labels": torch.tensor([1])}
    loss, (scores,) = pet_forward(model, batch, with_loss=True)
    logp = torch.log_softmax(table, dim=-1)
    first = (logp[0, 0, 3] + logp[0, 1, 4]) / 2
    second = (logp[1, 0, 5] + logp[1, 1, 6] + logp[1, 2, 7]) / 3
    assert torch.allclose(scores, torch.stack([first, second])[None], atol=1e-6)
    assert math.isclose(float(loss), -float(torch.log_softmax(scores, dim=-1)[0, 1]), rel_tol=1e-6)


def test_the_head_sees_only_the_mask_positions(monkeypatch) -> None:
    mlm = _tiny_mlm()
    seen = []
    original = mlm.cls.forward
    monkeypatch.setattr(mlm.cls, "forward", lambda hidden: seen.append(hidden.shape) or original(hidden))
    model = PetModel(mlm, [[3], [4, 5]])
    model(torch.randint(0, 10, (6, 40)), torch.ones(6, 40, dtype=torch.long), torch.tensor([5] * 6))
    assert seen == [torch.Size([6, 2, 8])]  # (3 examples × 2 variants, 2 masks at most, hidden), not 40 tokens


def _data(n: int, seed: int) -> list[ClassificationExample]:
    rng = random.Random(seed)
    examples = []
    for i in range(n):
        label = ("neg", "pos")[i % 2]
        marker = "甲" if label == "pos" else "乙"
        examples.append(ClassificationExample(i, sentence(rng, rng.randint(2, 6), CHARS) + marker
                                              + sentence(rng, rng.randint(2, 6), CHARS), None, label))
    return examples


@pytest.fixture(scope="module")
def pet_trained(tmp_path_factory):
    train, dev = _data(48, 1), _data(16, 2)
    out = tmp_path_factory.mktemp("pet")
    learner = create_tiny(None, TASK, PET)
    learner.check_plan({"train": train, "dev": dev})
    losses: list[float] = []
    from clue_models_hf import training

    original = training.Trainer._log_loss

    def record(self, running, seen, scheduler, progress):  # the loop's own loss reports
        losses.append(float(running) / max(1, seen))
        return original(self, running, seen, scheduler, progress)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(training.Trainer, "_log_loss", record)
        learner.fit(train, dev, run_context(TASK, out, accuracy_scorer(dev)))
    learner.save(out / "model")
    return learner, out, dev, losses


@pytest.mark.slow
def test_training_reduces_the_loss_and_learns_a_separable_task(pet_trained) -> None:
    learner, out, dev, losses = pet_trained
    first, last = sum(losses[:6]) / 6, sum(losses[-6:]) / 6
    assert last < first * 0.5, (first, last)
    state = json.loads((out / "training" / "trainer_state.json").read_text())
    assert state["best_metric"] >= 90
    predictions = learner.predict(dev)
    assert accuracy_scorer(dev)(predictions)["accuracy"] == state["best_metric"]
    for p in predictions:  # one probability per label, in label order, as the classification head's
        assert len(p.scores) == 2 and math.isclose(sum(p.scores), 1.0, rel_tol=1e-5)
        assert TASK.labels[max(range(2), key=lambda i: p.scores[i])] == p.value
    assert learner.run_info()["method"] == "pet"


@pytest.mark.slow
def test_the_saved_model_records_pet_and_predicts_identically(pet_trained) -> None:
    learner, out, dev, _ = pet_trained
    record = json.loads((out / "model" / "clue_model.json").read_text())
    assert record["method"] == "pet"
    assert record["pet"] == {"template": "评价：{text}", "answer_prefix": "答案：", "instruction": "",
                             "verbalizers": {"neg": "差", "pos": "很好"}}
    assert json.loads((out / "model" / "config.json").read_text())["architectures"] == ["BertForMaskedLM"]
    # method is left at its default: the folder says it is a PET model; the saved verbalisers win
    other = TaskSpec("toy-pet", "classification", "toy", "x:y", labels=("neg", "pos"),
                     prompt=Prompt("", "{text}", {"neg": "坏", "pos": "好"}))
    reloaded = create(str(out / "model"), other, FAST)
    reloaded.check_plan({"dev": dev})
    assert reloaded.prompt.verbalizers == {"neg": "差", "pos": "很好"}
    assert reloaded.predict(dev) == learner.predict(dev)


@pytest.mark.slow
def test_zero_shot_scoring_needs_no_training() -> None:
    dev = _data(8, 3)
    learner = create_tiny(None, TASK, PET)
    learner.check_plan({"dev": dev})
    predictions = learner.predict(dev)  # what --no-train does: the masked-LM head as it is
    assert [p.id for p in predictions] == [e.id for e in dev]
    assert all(p.value in TASK.labels and math.isclose(sum(p.scores), 1.0, rel_tol=1e-5) for p in predictions)
    assert learner.predict(dev) == predictions


@pytest.mark.slow
def test_an_interrupted_pet_run_resumes_to_the_same_weights(tmp_path, monkeypatch) -> None:
    """Checkpoints hold the PET wrapper's state (tied MLM decoder included) and resume exactly."""
    from clue_models_hf import training

    train, dev = _data(32, 4), _data(8, 5)
    config = {**PET, "epochs": 2, "save_every": 3, "eval_every": 4, "batch_size": 4}
    score = accuracy_scorer(dev)
    straight = create_tiny(None, TASK, config)
    straight.fit(train, dev, run_context(TASK, tmp_path / "straight", score))

    class Interrupted(Exception):
        pass

    def interrupt(self, step):
        if step == 10:
            raise Interrupted

    monkeypatch.setattr(training.Trainer, "after_step", interrupt)
    with pytest.raises(Interrupted):
        create_tiny(None, TASK, config).fit(train, dev, run_context(TASK, tmp_path / "resumed", score))
    monkeypatch.undo()
    resumed = create_tiny(None, TASK, config)
    resumed.fit(train, dev, run_context(TASK, tmp_path / "resumed", score, resume=True))
    first, second = straight.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert resumed.predict(dev) == straight.predict(dev)

"""What the training loop does for speed: a fused optimizer and the throughput it records.

No timing thresholds here (benchmarks/train_throughput.py measures speed); these tests
check that the features behave: the fused AdamW updates like the plain one, and
``trainer_state.json`` counts exactly the examples and tokens trained, keeps evaluation
time out of the loop time, and adds up across an interruption and resume.
"""

from __future__ import annotations

import json
import time

import pytest

from clue_models_hf import training
from clue_models_hf.factory import create_tiny

from .conftest import TINY, accuracy_scorer, run_context

pytestmark = pytest.mark.slow


def test_the_optimizer_is_fused_on_the_cpu_and_updates_like_plain_adamw() -> None:
    import torch

    torch.manual_seed(0)
    weights = [torch.randn(5, 3), torch.randn(3)]
    grads = [torch.randn(5, 3), torch.randn(3)]

    def trained(fused: bool) -> list[torch.Tensor]:
        params = [torch.nn.Parameter(w.clone()) for w in weights]
        groups = [{"params": params[:1], "weight_decay": 0.1}, {"params": params[1:], "weight_decay": 0.0}]
        if fused:
            optimizer = training.make_optimizer(groups, 1e-2, torch.device("cpu"))
            assert optimizer.defaults["fused"] is True
        else:
            optimizer = torch.optim.AdamW(groups, lr=1e-2)
        for _ in range(3):
            for p, g in zip(params, grads):
                p.grad = g.clone()
            optimizer.step()
        return [p.detach() for p in params]

    for fused, plain in zip(trained(True), trained(False)):
        assert torch.allclose(fused, plain, atol=1e-6)
    assert not torch.allclose(trained(True)[0], weights[0])  # it did update


def test_other_devices_get_the_default_implementation() -> None:
    import torch

    param = torch.nn.Parameter(torch.zeros(2, device="meta"))
    optimizer = training.make_optimizer([{"params": [param], "weight_decay": 0.0}], 1e-3, torch.device("meta"))
    assert not optimizer.defaults["fused"]


def run(tmp_path, task, data, config, resume=False):
    train, dev = data
    learner = create_tiny(None, task, config)
    learner.fit(train, dev, run_context(task, tmp_path, accuracy_scorer(dev), resume=resume))
    return learner, json.loads((tmp_path / "training" / "trainer_state.json").read_text())


def test_the_state_counts_examples_and_real_tokens(tmp_path, classification_task, classification_data,
                                                   capsys) -> None:
    train, _ = classification_data
    config = dict(TINY, epochs=2, batch_size=8)
    learner, state = run(tmp_path, classification_task, classification_data, config)
    assert state["train_examples"] == 2 * len(train)
    lengths = learner._encode(train, with_labels=True).lengths
    assert state["train_real_tokens"] == 2 * sum(lengths)
    # padded positions: every batch is as wide as its longest member, so at least the real ones
    assert state["train_real_tokens"] <= state["train_tokens"] <= 2 * len(train) * max(lengths)
    assert state["train_runtime"] > 0
    share = state["train_real_tokens"] / state["train_tokens"]
    assert f"trained {2 * len(train)} examples in" in capsys.readouterr().err
    assert share > 0.8  # length-grouped batches of 8 out of 60 short texts pad little


def test_evaluation_time_stays_out_of_the_loop_time(tmp_path, classification_task, classification_data) -> None:
    train, dev = classification_data
    pause = 0.4
    score = accuracy_scorer(dev)

    def slow_score(predictions):
        time.sleep(pause)
        return score(predictions)

    config = dict(TINY, epochs=3)
    learner = create_tiny(None, classification_task, config)
    started = time.perf_counter()
    learner.fit(train, dev, run_context(classification_task, tmp_path, slow_score))
    wall = time.perf_counter() - started
    state = json.loads((tmp_path / "training" / "trainer_state.json").read_text())
    assert len(state["history"]) == 3
    assert 0 < state["train_runtime"] < wall - 3 * pause


def test_counts_add_up_across_an_interruption(tmp_path, monkeypatch, classification_task,
                                              classification_data) -> None:
    config = dict(TINY, epochs=2, save_every=3, eval_every=4, batch_size=8)
    _, straight = run(tmp_path / "straight", classification_task, classification_data, config)

    class Interrupted(Exception):
        pass

    def interrupt(self, step):
        if step == 7:
            raise Interrupted

    monkeypatch.setattr(training.Trainer, "after_step", interrupt)
    with pytest.raises(Interrupted):
        run(tmp_path / "resumed", classification_task, classification_data, config)
    monkeypatch.undo()
    _, resumed = run(tmp_path / "resumed", classification_task, classification_data, config, resume=True)
    assert resumed["global_step"] == straight["global_step"] == 16
    for key in ("train_examples", "train_tokens", "train_real_tokens"):
        assert resumed[key] == straight[key], key
    assert resumed["train_runtime"] > 0


def test_dev_is_encoded_once_however_often_it_is_evaluated(tmp_path, monkeypatch, classification_task,
                                                            classification_data) -> None:
    from clue_models_hf.learner import HFLearner

    calls: list[tuple[int, bool]] = []
    encode = HFLearner._encode

    def counting(self, examples, with_labels):
        calls.append((len(examples), with_labels))
        return encode(self, examples, with_labels)

    monkeypatch.setattr(HFLearner, "_encode", counting)
    train, dev = classification_data
    config = dict(TINY, epochs=3)
    learner, state = run(tmp_path, classification_task, classification_data, config)
    assert len(state["history"]) == 3
    assert calls == [(len(train), True), (len(dev), False)]
    assert [p.value for p in learner.predict(dev)]  # predicting new examples still encodes them
    assert calls[-1] == (len(dev), False) and len(calls) == 3

"""The learner on hand-made examples: it learns, keeps the best checkpoint, saves and resumes.

``fit`` gets a run context, as from the runner: the seed, ``--resume``, the primary metric,
dev scoring and the run directory (checkpoints go to its ``training/``).
"""

from __future__ import annotations

import json
import math

import pytest

from clue_models_hf import training
from clue_models_hf.factory import create, create_tiny
from clue_models_hf.learner import HFLearner

from .conftest import FAST, TINY, accuracy_scorer, run_context

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory, classification_task, classification_data):
    train, dev = classification_data
    out = tmp_path_factory.mktemp("cls")
    learner = create_tiny(None, classification_task, dict(TINY, epochs=10))
    learner.fit(train, dev, run_context(classification_task, out, accuracy_scorer(dev)))
    learner.save(out / "model")
    return learner, out


def test_learns_the_signal_and_restores_the_best_checkpoint(trained, classification_data) -> None:
    learner, out = trained
    _, dev = classification_data
    state = json.loads((out / "training" / "trainer_state.json").read_text())
    assert len(state["history"]) == 10  # one evaluation per epoch
    assert state["best_metric"] == max(h["accuracy"] for h in state["history"])
    assert state["best_metric"] >= 90
    assert accuracy_scorer(dev)(learner.predict(dev))["accuracy"] == state["best_metric"]


def test_label_strings_round_trip_through_the_saved_model(trained, classification_task, classification_data) -> None:
    learner, out = trained
    _, dev = classification_data
    model_dir = out / "model"
    assert (model_dir / "model.safetensors").is_file()
    config = json.loads((model_dir / "config.json").read_text())
    assert [config["id2label"][str(i)] for i in range(3)] == ["103", "100", "116"]
    assert json.loads((model_dir / "clue_model.json").read_text())["labels"] == ["103", "100", "116"]
    before = learner.predict(dev)
    after = create(str(model_dir), classification_task, FAST).predict(dev)
    assert [p.value for p in after] == [p.value for p in before] == [e.label for e in dev]
    for p in after:
        assert math.isclose(sum(p.scores), 1.0, rel_tol=1e-5)
        assert ("103", "100", "116")[max(range(3), key=lambda i: p.scores[i])] == p.value


def test_a_saved_model_refuses_another_kind(trained, tmp_path) -> None:
    from clue_core.plugin import ClueError, TaskSpec

    _, out = trained
    with pytest.raises(ClueError, match="classification"):
        create(str(out / "model"), TaskSpec("toy-span", "span", "toy", "x:y"), dict(FAST, max_length=256))


def test_multiple_choice_scores_only_real_choices(tmp_path, choice_data) -> None:
    from clue_core.plugin import TaskSpec

    task = TaskSpec("toy-mc", "multiple_choice", "toy", "x:y")
    train, dev = choice_data[:32], choice_data[32:]
    learner = create_tiny(None, task, dict(TINY, epochs=2))
    learner.fit(train, dev, run_context(task, tmp_path, accuracy_scorer(dev)))
    for example, prediction in zip(dev, learner.predict(dev)):
        assert len(prediction.scores) == len(example.choices)
        assert 0 <= prediction.value < len(example.choices)
        assert math.isclose(sum(math.exp(s) for s in prediction.scores), 1.0, rel_tol=1e-4)
        assert prediction.scores[prediction.value] == max(prediction.scores)


def test_span_answers_are_slices_of_the_context(tmp_path, span_data) -> None:
    from clue_core.plugin import TaskSpec

    task = TaskSpec("toy-span", "span", "toy", "x:y", primary_metric="em")
    config = dict(TINY, epochs=1, max_length=32, doc_stride=8, max_query_length=4, max_answer_length=5)

    def em(predictions):
        return {"em": 100.0 * sum(p.value == e.answers[0][0] for p, e in zip(predictions, span_data))
                / len(span_data)}

    learner = create_tiny(None, task, config)
    learner.fit(span_data, span_data, run_context(task, tmp_path, em, primary_metric="em"))
    for example, prediction in zip(span_data, learner.predict(span_data)):
        assert prediction.value and prediction.value in example.context
        assert len(prediction.value) <= 5  # one character per token in the offline vocabulary


def test_early_stopping_ends_training_when_the_metric_stalls(tmp_path, classification_task, classification_data):
    train, dev = classification_data
    config = dict(TINY, learning_rate=1e-12, eval_every=1, early_stopping_patience=2, epochs=3)
    learner = create_tiny(None, classification_task, config)
    learner.fit(train, dev, run_context(classification_task, tmp_path, accuracy_scorer(dev)))
    state = json.loads((tmp_path / "training" / "trainer_state.json").read_text())
    assert state["stopped_early"] is True
    assert state["global_step"] == 3 < state["total_steps"]


def weights(learner: HFLearner) -> dict:
    return {k: v.clone() for k, v in learner.model.state_dict().items()}


def test_an_interrupted_run_resumes_to_the_same_result(tmp_path, monkeypatch, classification_task,
                                                       classification_data) -> None:
    import torch

    train, dev = classification_data
    config = dict(TINY, epochs=3, save_every=2, eval_every=3, gradient_accumulation_steps=2, batch_size=4)
    score = accuracy_scorer(dev)
    straight = create_tiny(None, classification_task, config)
    straight.fit(train, dev, run_context(classification_task, tmp_path / "straight", score))

    class Interrupted(Exception):
        pass

    def interrupt(self, step):
        if step == 13:
            raise Interrupted

    monkeypatch.setattr(training.Trainer, "after_step", interrupt)
    with pytest.raises(Interrupted):
        create_tiny(None, classification_task, config).fit(
            train, dev, run_context(classification_task, tmp_path / "resumed", score))
    monkeypatch.undo()
    checkpoints = sorted(p.name for p in (tmp_path / "resumed" / "training" / "checkpoints").iterdir())
    assert checkpoints == ["step-00000010", "step-00000012"]  # the two newest are kept

    resumed = create_tiny(None, classification_task, config)
    resumed.fit(train, dev, run_context(classification_task, tmp_path / "resumed", score, resume=True))
    first, second = weights(straight), weights(resumed)
    assert all(torch.equal(first[k], second[k]) for k in first)
    states = [json.loads((tmp_path / d / "training" / "trainer_state.json").read_text())
              for d in ("straight", "resumed")]
    assert states[0]["history"] == states[1]["history"] and states[0]["global_step"] == 24
    fresh = create_tiny(None, classification_task, config)
    fresh._build([t for e in train for t in (e.text,)])
    assert not all(torch.equal(first[k], v) for k, v in fresh.model.state_dict().items())


def test_resume_without_a_checkpoint_starts_from_the_beginning(tmp_path, classification_task, classification_data,
                                                               capsys) -> None:
    train, dev = classification_data
    create_tiny(None, classification_task, dict(TINY, epochs=1)).fit(
        train, dev, run_context(classification_task, tmp_path, accuracy_scorer(dev), resume=True))
    assert "no checkpoint" in capsys.readouterr().err
    assert json.loads((tmp_path / "training" / "trainer_state.json").read_text())["global_step"] == 8


def test_bf16_mixed_precision_trains_on_the_cpu(tmp_path, classification_task, classification_data) -> None:
    train, dev = classification_data
    learner = create_tiny(None, classification_task, dict(TINY, epochs=1, mixed_precision="bf16"))
    learner.fit(train, dev, run_context(classification_task, tmp_path, accuracy_scorer(dev)))
    assert learner.accelerator.mixed_precision == "bf16"
    predictions = learner.predict(dev)
    assert all(p.value in classification_task.labels and math.isclose(sum(p.scores), 1.0, rel_tol=1e-4)
               for p in predictions)

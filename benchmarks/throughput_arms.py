"""The three arms of ``benchmarks/train_throughput.py`` (a helper, not a script): :class:`Bench`.

a and b train with transformers' Trainer (run_glue's defaults; dynamic padding and
group_by_length), c with clue-core's ``HFLearner``, from the same weights on the same data.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from throughput_measure import OtherLoad, Shapes, Timed, Trained, counting, timed_prediction
from throughput_setup import (
    BATCH_SIZE,
    EVAL_BATCH_SIZE,
    LEARNING_RATE,
    MAX_LENGTH,
    SEED,
    Distribution,
    hf_tiny_learner,
    make_examples,
    quiet,
    training_probe,
)

from clue_core.plugin import ClassificationExample, Prediction, RunContext, TaskSpec


class Bench:
    """One distribution's data, tokenizer and model factory, shared by the three arms."""

    def __init__(self, dist: Distribution, size: dict[str, int], steps: int, dev_size: int, *,
                 batch_size: int = BATCH_SIZE, learning_rate: float = LEARNING_RATE) -> None:
        from clue_models_hf import tiny
        from clue_models_hf.learner import texts_of

        self.dist = dist
        self.steps = steps
        self.train = make_examples(dist, steps * batch_size, SEED)
        self.dev = make_examples(dist, dev_size, SEED + 1)
        self.labels = tuple(str(i) for i in range(dist.labels))
        # the very vocabulary the learner builds from its training texts
        self.tokenizer = tiny.build_tokenizer(texts_of(self.train))
        # hf-tiny's settings, every one the Trainer arms share given explicitly (the model's own
        # recommendations, e.g. its learning rate, must not apply); the seed is run control
        self.config: dict[str, Any] = {
            **size, "learning_rate": learning_rate, "learning_rate_scale": 1.0, "batch_size": batch_size,
            "eval_batch_size": EVAL_BATCH_SIZE, "gradient_accumulation_steps": 1, "max_length": MAX_LENGTH,
            "warmup_ratio": 0.1, "weight_decay": 0.01, "max_grad_norm": 1.0, "max_steps": steps, "progress": False,
            "mixed_precision": "no",
        }
        self.task = TaskSpec(f"bench-{dist.name}", "classification", dist.description, "unused:reader",
                             labels=self.labels)

    def build_model(self) -> Any:
        """The model every arm starts from: hf-tiny's config, seeded as the learner seeds it."""
        from accelerate.utils import set_seed
        from transformers import AutoModelForSequenceClassification

        from clue_models_hf import tiny

        set_seed(SEED)
        config = tiny.tiny_config(len(self.tokenizer), self.config, MAX_LENGTH, num_labels=len(self.labels),
                                  id2label=dict(enumerate(self.labels)),
                                  label2id={label: i for i, label in enumerate(self.labels)},
                                  problem_type="single_label_classification")
        return AutoModelForSequenceClassification.from_config(config)

    def accuracy(self, predictions: Sequence[Prediction]) -> float:
        return 100.0 * sum(p.value == e.label for p, e in zip(predictions, self.dev)) / len(self.dev)

    # ---- a and b -----------------------------------------------------------------------------------
    def _encode(self, examples: Sequence[ClassificationExample], pad_to_max: bool, labels: bool) -> list[dict]:
        texts = [e.text for e in examples]
        pairs = [e.text_pair for e in examples] if self.dist.pair else None
        padding = {"padding": "max_length"} if pad_to_max else {}
        encoded = self.tokenizer(texts, pairs, truncation=True, max_length=MAX_LENGTH, **padding)
        rows = [{key: encoded[key][i] for key in encoded} for i in range(len(examples))]
        if labels:
            for row, example in zip(rows, examples):
                row["labels"] = self.labels.index(example.label)
        return rows

    def train_trainer(self, arm: str, output: Path) -> Trained:
        from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, default_data_collator
        from transformers.trainer_callback import PrinterCallback

        grouped = arm == "b"
        arguments: dict[str, Any] = {
            "output_dir": str(output), "per_device_train_batch_size": BATCH_SIZE,
            "per_device_eval_batch_size": EVAL_BATCH_SIZE, "learning_rate": LEARNING_RATE,
            "max_steps": self.steps, "warmup_steps": 0.1, "weight_decay": 0.01, "max_grad_norm": 1.0,
            "save_strategy": "no", "eval_strategy": "no", "logging_strategy": "no", "report_to": "none",
            "disable_tqdm": True, "seed": SEED, "use_cpu": not torch.cuda.is_available(),
        }
        if grouped:
            arguments["train_sampling_strategy"] = "group_by_length"
        shapes = Shapes()
        collate = DataCollatorWithPadding(self.tokenizer) if grouped else default_data_collator
        trainer = Trainer(model=self.build_model(), args=TrainingArguments(**arguments),
                          train_dataset=self._encode(self.train, not grouped, labels=True),
                          data_collator=counting(collate, shapes), processing_class=self.tokenizer)
        trainer.remove_callback(PrinterCallback)  # it prints the metrics dict; the timing stays the same
        load = OtherLoad()
        started = time.perf_counter()
        trainer.train()
        seconds, others = time.perf_counter() - started, load.share()
        assert trainer.state.global_step == self.steps, trainer.state.global_step
        shapes.batches[self.steps:] = []  # a batch a loader fetched ahead but never trained on
        train = Timed(seconds, shapes.examples, Shapes(list(shapes.batches)), others)

        def predict() -> list[Prediction]:
            logits = trainer.predict(self._encode(self.dev, not grouped, labels=False)).predictions
            return [Prediction(e.id, self.labels[int(i)]) for e, i in zip(self.dev, logits.argmax(-1))]

        return Trained(train, lambda: timed_prediction(predict, shapes, self.accuracy))

    # ---- c -----------------------------------------------------------------------------------------
    def train_clue(self, output: Path, **overrides: Any) -> Trained:
        config = {**self.config, **overrides}
        learner = hf_tiny_learner(self.task, config)
        shapes = Shapes()
        make_collator = learner._collator  # instrumented, not replaced: the learner's own collator
        learner._collator = lambda: counting(make_collator(), shapes)  # type: ignore[method-assign]
        context = RunContext(task=self.task, seed=SEED, run_dir=output, echo=quiet)
        losses: list[torch.Tensor] = []
        step_ends: list[float] = []
        load = OtherLoad()
        with training_probe(losses, step_ends):
            learner.fit(self.train, [], context)
        others = load.share()
        state = json.loads((context.training_dir / "trainer_state.json").read_text())
        assert state["global_step"] == config["max_steps"], state["global_step"]
        shapes.batches[config["max_steps"]:] = []  # a batch the loader fetched ahead but never trained on
        assert state["train_examples"] == shapes.examples, (state["train_examples"], shapes.examples)
        assert learner.tokenizer.get_vocab() == self.tokenizer.get_vocab(), "the learner built another vocabulary"
        # the loop's own clock: the learner's set-up before it (vocabulary, model, encoding) is not counted,
        # as the Trainer arms' set-up is not
        train = Timed(state["train_runtime"], state["train_examples"], Shapes(list(shapes.batches)), others,
                      losses=[float(loss) for loss in losses], step_ends=step_ends)
        return Trained(train, lambda: timed_prediction(lambda: learner.predict(self.dev), shapes, self.accuracy),
                       learner)

    def train_arm(self, arm: str, output: Path, **overrides: Any) -> Trained:
        if arm == "c":
            return self.train_clue(output, **overrides)
        return self.train_trainer(arm, output)

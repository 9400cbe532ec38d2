"""The Learner: a Hugging Face encoder with the head for one task's example kind.

It holds the tokenizer, the model and (once it trains or predicts) an Accelerator.
Models are built lazily: the offline backbone needs the training texts for its
vocabulary, and a pretrained checkpoint is only loaded when there is work to do.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from clue_core.plugin import (
    CLASSIFICATION,
    MODEL_FILE,
    MULTIPLE_CHOICE,
    SPAN,
    ClassificationExample,
    ClueError,
    Example,
    MultipleChoiceExample,
    Prediction,
    RunContext,
    SpanExample,
    TaskSpec,
    is_main_process,
    write_json,
)
from clue_models_hf import encoding, loading, tiny
from clue_models_hf.batching import Collator
from clue_models_hf.runtime import check_log_with, check_mixed_precision, infer, make_accelerator, stack_padded
from clue_models_hf.saving import disk_errors, share_weights
from clue_models_hf.settings import KEEP_BEST, KEEP_LAST, Settings
from clue_models_hf.spans import decode_windows
from clue_models_hf.training import BEST, Trainer, TrainerState

TINY_SOURCE = "hf-tiny"
BEST_WEIGHTS = "weights.safetensors"
#: The seed of a model used outside a run (no ``prepare``): the run context's default.
DEFAULT_SEED = 42


def texts_of(examples: Sequence[Example]) -> list[str]:
    """Every text a tokenizer will see for these examples (the offline vocabulary's source)."""
    texts: list[str] = []
    for e in examples:
        if isinstance(e, ClassificationExample):
            texts.extend(t for t in (e.text, e.text_pair) if t)
        elif isinstance(e, SpanExample):
            texts.extend((e.context, e.question))
        else:
            texts.extend((e.context, e.question, *e.choices))
    return texts


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class HFLearner:
    """``fit`` / ``predict`` / ``save`` for any Auto head.

    ``values`` are the model's declared settings (:mod:`clue_models_hf.settings`), as the
    kernel converted them; run control (seed, resume, where checkpoints go, the primary
    metric, dev scoring) comes with the run context in :meth:`fit`.
    """

    def __init__(self, task: TaskSpec, source: str, values: Mapping[str, Any]) -> None:
        self.task = task
        self.kind = task.kind
        self.source = source
        self.values = dict(values)
        self.settings = Settings.of(self.values)
        self.seed = DEFAULT_SEED
        self._echo: Callable[[str], None] = _stderr
        check_mixed_precision(self.settings.mixed_precision)
        check_log_with(self.settings.log_with)
        self.saved = None if source == TINY_SOURCE else loading.read_model_file(source)
        if self.saved and self.saved["kind"] != self.kind:
            raise ClueError(f"{source}: this model was trained for {self.saved['kind']} examples "
                            f"({self.saved.get('task')}), not {self.kind} like {task.name}")
        self.labels: list[str] = list(task.labels) if self.kind == CLASSIFICATION else []
        if self.kind == CLASSIFICATION and not self.labels and self.saved:
            self.labels = list(self.saved.get("labels") or [])
        #: load a hub id from the local cache only (the hub did not answer); checked before any work
        self.local_only = False
        if source != TINY_SOURCE and self.saved is None:
            loading.check_source(source)
            self.local_only = loading.hub_access(source, self._log)
        self.tokenizer: Any = None
        self.model: Any = None
        self.accelerator: Any = None
        #: ``model`` as Accelerate prepared it (DDP-wrapped with several processes)
        self.prepared: Any = None
        self.trained = False
        #: the weights the model holds after ``fit`` (``checkpoint`` best or last, its step and epoch),
        #: recorded in ``clue_model.json``; a loaded model carries its record over
        self.kept: dict[str, Any] | None = (self.saved or {}).get("kept")

    # ---- building -------------------------------------------------------------------------
    def _log(self, message: str) -> None:
        if is_main_process():
            self._echo(f"[{self.task.name}] {message}")

    def _build(self, texts: Sequence[str]) -> None:
        """Tokenizer and model: offline backbone from ``texts``, else the checkpoint in ``source``."""
        if self.model is not None:
            return
        from accelerate.utils import set_seed

        loading.quiet_transformers()
        set_seed(self.seed)
        head = self._head_options()
        if self.source == TINY_SOURCE:
            from clue_models_hf.heads import auto_class

            self.tokenizer = tiny.build_tokenizer(texts, self.values["tiny_vocab_size"])
            config = tiny.tiny_config(len(self.tokenizer), self.values, self.settings.max_length, **head)
            self.model = auto_class(self.kind).from_config(config)
        else:
            saved_labels = list(self.saved.get("labels") or []) if self.saved else []
            if self.saved and saved_labels != self.labels and not self._will_train:
                raise ClueError(f"{self.source}: trained with labels {saved_labels}, but {self.task.name} has "
                                f"{self.labels}; train it on this task first")
            trust = self.settings.trust_remote_code
            self.tokenizer = loading.load_tokenizer(self.source, trust, self.local_only)
            self.model = loading.load_head(self.source, self.kind, self._head_labels(), trust, self.local_only)
        if self.kind == SPAN and not getattr(self.tokenizer, "is_fast", True):
            raise ClueError(f"{self.source}: span extraction needs a fast tokenizer with character offsets")

    def _head_options(self) -> dict[str, Any]:
        if self.kind != CLASSIFICATION:
            return {}
        return {"num_labels": len(self.labels), "id2label": dict(enumerate(self.labels)),
                "label2id": {label: i for i, label in enumerate(self.labels)},
                "problem_type": "single_label_classification"}

    @property
    def max_length(self) -> int:
        limit = getattr(self.model.config, "max_position_embeddings", None) if self.model is not None else None
        # RoBERTa-style checkpoints offset positions by the padding index
        if limit and getattr(self.model.config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
            limit -= 2
        return min(self.settings.max_length, limit) if limit else self.settings.max_length

    def _collator(self) -> Collator:
        multiple = 8 if self.settings.mixed_precision != "no" and self.accelerator.device.type == "cuda" else None
        return Collator(self.kind, self.tokenizer.pad_token_id, multiple)

    def _encode(self, examples: Sequence[Example], with_labels: bool) -> encoding.Features:
        s = self.settings
        if self.kind == CLASSIFICATION:
            label2id = {label: i for i, label in enumerate(self.labels)}
            return encoding.encode_classification(self.tokenizer, examples, label2id, self.max_length, with_labels)
        if self.kind == SPAN:
            return encoding.encode_spans(self.tokenizer, examples, self.max_length, s.doc_stride, s.max_query_length,
                                         with_labels)
        return encoding.encode_choices(self.tokenizer, examples, self.max_length, with_labels)

    # ---- what a method or kind changes (pet_learner and ner_learner override these) --------
    def _texts(self, examples: Sequence[Example]) -> list[str]:
        """Every text the tokenizer will see (the offline backbone's vocabulary comes from them)."""
        return texts_of(examples)

    def _has_gold(self, example: Example) -> bool:
        return _has_gold(example)

    def _head_labels(self) -> list[str]:
        """The head's output classes as ``config.id2label`` names them (a classifier's: its labels)."""
        return self.labels

    @property
    def forward_kind(self) -> str:
        """The batches' kind for ``heads.forward``: the example kind, for a task head."""
        return self.kind

    def _module(self) -> Any:
        """The module Accelerate prepares and the loop trains (the head model itself)."""
        return self.model

    def _record(self) -> dict[str, Any]:
        """Fields of ``clue_model.json`` beyond the common ones."""
        return {}

    # ---- Learner protocol -----------------------------------------------------------------
    _will_train = False

    def prepare(self, context: RunContext) -> None:
        """Take the run's seed and log before anything is built, so ``--no-train --seed N`` seeds a
        freshly initialised head too."""
        self.seed = context.seed
        self._echo = context.echo

    def fit(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        """Fine-tune on ``train``, evaluating on ``dev`` with ``context.score`` and keeping the best
        checkpoint (by ``context.primary_metric``) under ``context.training_dir``; the model ends with
        those weights, or with the last step's where ``keep=last``."""
        self.seed = context.seed
        self._echo = context.echo
        self._will_train = True
        output_dir = Path(context.training_dir)
        if self.kind == CLASSIFICATION and not self.labels:
            self.labels = sorted({e.label for e in train if e.label is not None})
        self.accelerator = make_accelerator(self.settings, output_dir)
        self._build(self._texts(train))
        self._ensure_accelerator()
        features = self._encode(train, with_labels=True)
        for note in features.notes:
            self._log(f"train: {note}")
        dev_gold = [e for e in dev if self._has_gold(e)]
        evaluate: Callable[[], dict[str, float]] | None = None
        if dev_gold:
            dev_features = self._encode(dev, with_labels=False)  # once, not at every evaluation

            def evaluate() -> dict[str, float]:
                return context.score(self._predict(dev, dev_features))
        trainer = Trainer(self.accelerator, self.prepared, self.forward_kind, self.settings, output_dir, evaluate,
                          self._save_weights, self._log, seed=context.seed, resume=context.resume,
                          primary_metric=context.primary_metric)
        trainer.train(features, self._collator())
        self.kept = self._keep(trainer.state, output_dir / BEST)
        self.trained = True

    def predict(self, examples: Sequence[Example]) -> list[Prediction]:
        if self.model is None:
            self._build(self._texts(examples))
        return self._predict(examples)

    def save(self, directory: Path) -> None:
        """Weights (safetensors), tokenizer, config with the label map, and ``clue_model.json``."""
        if self.model is None:
            raise ClueError("nothing to save: the model was neither trained nor loaded")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        with disk_errors(directory / "model.safetensors"):
            self.model.save_pretrained(directory)
        with disk_errors(directory):
            self.tokenizer.save_pretrained(directory)
        share_weights(directory)
        write_json(directory / MODEL_FILE, {
            "model": "hf",
            "task": self.task.name,
            "kind": self.kind,
            "labels": self.labels,
            "backbone": self.saved.get("backbone", self.source) if self.saved else self.source,
            "max_length": self.max_length,
            **({"kept": self.kept} if self.kept else {}),
            **self._record(),
        })

    def run_info(self) -> dict[str, Any]:
        """For the run's manifest and metrics: the backbone and, after training, the schedule it
        really followed (learning rate and epochs after their size-class scales)."""
        info: dict[str, Any] = {"backbone": self.saved.get("backbone", self.source) if self.saved else self.source}
        if self.trained:
            s = self.settings
            info["learning_rate"] = s.effective_learning_rate
            info.update({"max_steps": s.max_steps} if s.max_steps else {"epochs": s.effective_epochs})
        return info

    # ---- prediction -----------------------------------------------------------------------
    def _ensure_accelerator(self) -> None:
        if self.accelerator is None:
            self.accelerator = make_accelerator(self.settings)
        if self.prepared is None:
            self.prepared = self.accelerator.prepare(self._module())

    def _predict(self, examples: Sequence[Example], features: encoding.Features | None = None) -> list[Prediction]:
        if not examples:
            return []
        self._ensure_accelerator()
        if features is None:
            features = self._encode(examples, with_labels=False)
        outputs = infer(self.accelerator, self.prepared, features, self._collator(), self.settings.eval_batch_size,
                        self.forward_kind)
        if self.kind == CLASSIFICATION:
            return self._classes(examples, outputs)
        if self.kind == MULTIPLE_CHOICE:
            return self._choices(examples, outputs)
        return self._spans(examples, features, outputs)

    def _classes(self, examples: Sequence[Example], outputs: list[tuple[np.ndarray, ...]]) -> list[Prediction]:
        logits = np.stack([o[0] for o in outputs])
        probabilities = _softmax(logits)
        best = probabilities.argmax(axis=1)
        return [Prediction(e.id, self.labels[int(b)], tuple(float(p) for p in row))
                for e, b, row in zip(examples, best, probabilities)]

    def _choices(self, examples: Sequence[Example], outputs: list[tuple[np.ndarray, ...]]) -> list[Prediction]:
        predictions = []
        for example, (grid,) in zip(examples, outputs):
            assert isinstance(example, MultipleChoiceExample)
            scores = _log_softmax(grid[: len(example.choices)])
            predictions.append(Prediction(example.id, int(scores.argmax()), tuple(float(s) for s in scores)))
        return predictions

    def _spans(self, examples: Sequence[Example], features: encoding.Features,
               outputs: list[tuple[np.ndarray, ...]]) -> list[Prediction]:
        # decode straight from the encoder's ragged windows: no dense copies of offsets and masks
        width = max(features.lengths)
        starts = stack_padded([o[0] for o in outputs], width, 0.0)
        ends = stack_padded([o[1] for o in outputs], width, 0.0)
        decoded = decode_windows(starts, ends, features.offsets, features.context_ranges, self.settings.n_best,
                                 self.settings.max_answer_length, features.example_index, len(examples))
        return [Prediction(e.id, decoded.text(i, e.context)) for i, e in enumerate(examples)]  # type: ignore[union-attr]

    # ---- best checkpoint ------------------------------------------------------------------
    def _save_weights(self, directory: Path) -> None:
        from safetensors.torch import save_model

        directory.mkdir(parents=True, exist_ok=True)
        with disk_errors(directory / BEST_WEIGHTS):
            save_model(self.model, str(directory / BEST_WEIGHTS))
        share_weights(directory)

    def _keep(self, state: TrainerState, best: Path) -> dict[str, Any]:
        """End ``fit`` on the weights ``keep`` names and say which: the best dev checkpoint (restored from
        ``best``), or the last step's, which the model already holds. ``best/`` is written either way, so a
        run resumed with the other value still has it. Without a dev evaluation there is no best
        checkpoint and the last weights are kept whatever ``keep`` says."""
        if self.settings.keep == KEEP_BEST:
            if self._restore_best(best):
                step = _best_step(best, state)
                epoch = next((h.get("epoch") for h in state.history if h.get("step") == step), None)
                return {"checkpoint": KEEP_BEST, "step": step, "epoch": epoch}
        else:
            self._log(f"kept the last step's model (step {state.global_step}, epoch {state.epoch}; keep=last)")
        return {"checkpoint": KEEP_LAST, "step": state.global_step, "epoch": state.epoch}

    def _restore_best(self, directory: Path) -> bool:
        """Load the best checkpoint's weights, if training wrote one."""
        from safetensors.torch import load_model

        if not (directory / BEST_WEIGHTS).is_file():
            return False
        load_model(self.model, str(directory / BEST_WEIGHTS))
        self._log(f"restored the best checkpoint ({directory})")
        return True


def _best_step(best: Path, state: TrainerState) -> int | None:
    """The step of the weights in ``best/``: its ``best.json`` (written with them), else the state's."""
    try:
        return int(json.loads((best / "best.json").read_text())["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return state.best_step


def _has_gold(example: Example) -> bool:
    return (example.answers if isinstance(example, SpanExample) else example.label) is not None


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _log_softmax(scores: np.ndarray) -> np.ndarray:
    top = scores.max()
    return scores - top - math.log(float(np.exp(scores - top).sum()))

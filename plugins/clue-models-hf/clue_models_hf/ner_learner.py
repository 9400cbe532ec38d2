"""The learner for entity-spans examples (CLUENER2020): a token-classification head, BIO or span.

The kind is recognised by its name (``entity_spans``); the examples are read by field name
(``text``, ``entities``), so nothing here imports the task plugin that declares the kind. The
task's labels are the entity types; the head's classes are derived from them and the
``ner_head`` setting (:func:`clue_models_hf.ner_tags.head_labels`). Training is the same
Accelerate loop as every head's (:class:`clue_models_hf.training.Trainer`).

A saved model predicts with the head it was trained with (``clue_model.json`` records it);
``ner_head`` chooses the head a new training run builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import ClueError, Example, Prediction, RunContext, TaskSpec
from clue_models_hf import encoding
from clue_models_hf.heads import NER_BIO, NER_SPAN
from clue_models_hf.learner import HFLearner
from clue_models_hf.ner_encoding import decode_outputs, encode_entities, entities_of
from clue_models_hf.ner_tags import BIO, HEADS, head_labels
from clue_models_hf.runtime import infer


class EntityLearner(HFLearner):
    """:class:`HFLearner` with the NER heads; ``labels`` are the entity types."""

    def __init__(self, task: TaskSpec, source: str, values: Mapping[str, Any]) -> None:
        super().__init__(task, source, values)
        self.labels = list(task.labels) or list((self.saved or {}).get("labels") or [])
        self.head = str(self.values["ner_head"])
        saved_head = (self.saved or {}).get("ner_head")
        if saved_head is not None and saved_head not in HEADS:
            raise ClueError(f"{source}: clue_model.json names the NER head {saved_head!r}, not one of "
                            f"{', '.join(HEADS)}")

    # ---- what the kind changes ------------------------------------------------------------
    def _texts(self, examples: Sequence[Example]) -> list[str]:
        return [example.text for example in examples]  # type: ignore[attr-defined]

    def _has_gold(self, example: Example) -> bool:
        return getattr(example, "entities", None) is not None

    def _head_labels(self) -> list[str]:
        return head_labels(self.head, self.labels)

    def _head_options(self) -> dict[str, Any]:
        names = self._head_labels()
        return {"num_labels": len(names), "id2label": dict(enumerate(names)),
                "label2id": {name: i for i, name in enumerate(names)}}

    @property
    def forward_kind(self) -> str:
        return NER_BIO if self.head == BIO else NER_SPAN

    def _record(self) -> dict[str, Any]:
        return {"ner_head": self.head}

    def _build(self, texts: Sequence[str]) -> None:
        if self.model is not None:
            return
        saved_head = (self.saved or {}).get("ner_head")
        if saved_head and not self._will_train and saved_head != self.head:
            self._log(f"predicting with the {saved_head} head this model was trained with (ner_head={self.head} "
                      f"applies to training)")
            self.head = saved_head
        if not self.labels:
            raise ClueError(f"{self.task.name}: no entity types (the task declares no labels and no training "
                            f"data has any)")
        super()._build(texts)
        if not getattr(self.tokenizer, "is_fast", False):
            raise ClueError(f"{self.source}: entity spans need a fast tokenizer with character offsets")

    def _encode(self, examples: Sequence[Example], with_labels: bool) -> encoding.Features:
        return encode_entities(self.tokenizer, examples, self.labels, self.max_length, self.settings.ner_stride,
                               with_labels)

    # ---- Learner protocol -----------------------------------------------------------------
    def fit(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        if not self.labels:  # a task without declared types: the types its training data has
            self.labels = sorted({t for e in train for t, _, _ in entities_of(e)})
        super().fit(train, dev, context)

    def _predict(self, examples: Sequence[Example], features: encoding.Features | None = None) -> list[Prediction]:
        if not examples:
            return []
        self._ensure_accelerator()
        if features is None:
            features = self._encode(examples, with_labels=False)
        outputs = infer(self.accelerator, self.prepared, features, self._collator(), self.settings.eval_batch_size,
                        self.forward_kind)
        spans = decode_outputs(self.head, self.labels, features, outputs, len(examples))
        return [Prediction(e.id, tuple(found)) for e, found in zip(examples, spans)]  # type: ignore[arg-type]

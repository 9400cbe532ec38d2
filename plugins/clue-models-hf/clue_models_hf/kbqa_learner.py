"""The learner for ``kbqa_triple`` examples (KgCLUE): a cross-encoder that ranks the KB's candidates.

The knowledge base is the task's setting (``--set kb=Knowledge.txt``): its reader attaches each
question's candidate triples. An encoder cannot produce a triple it never sees, so a run whose
examples carry no candidates is refused in one line when it is planned (:meth:`KbqaLearner.check_plan`),
before anything trains or is written; closed-book answering is for generators (``llm:``).

The head is ``AutoModelForMultipleChoice`` with a question's candidate triples as its choices
(:mod:`clue_models_hf.kbqa_encoding`): one score per (question, candidate) pair, a softmax over the
question's candidates (listwise), trained by the same Accelerate loop as every head, with batches of the
``multiple_choice`` shape (only real candidates go through the encoder). A question's answer is its
best-scoring candidate, as ``subject ||| predicate ||| object``; a question without candidates answers
three empty parts. Listwise rather than the official baseline's binary (question, relation) classifier
because it trained better on the same pairs: on the sample's 16 train questions with 3 distractor
triples added per entity (dev = train), hf-tiny's best dev emf1 in 30 epochs was 87.5 listwise and
62.5 binary (two-class head over the same 9 pairs a question; ``clue-core run kgclue --model hf-tiny
--data-dir D --set kb=D/kb.txt --set epochs=30 --set eval_every=epoch``, seed 42, this machine).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clue_core.plugin import MULTIPLE_CHOICE, ClueError, Example, Prediction, RunContext, TaskSpec
from clue_models_hf import encoding
from clue_models_hf.batching import Collator
from clue_models_hf.kbqa_encoding import (
    LISTWISE_HEAD,
    answer_of,
    best_candidates,
    candidate_text,
    candidates_of,
    encode_groups,
    gold_index,
    has_candidates,
    prediction_pairs,
    training_groups,
)
from clue_models_hf.learner import HFLearner
from clue_models_hf.runtime import infer


def no_knowledge_base(task: str) -> ClueError:
    """Said both without a ``kb`` and with one none of whose entity names occurs in a question (the learner
    does not see the task's reader settings; the reader's note counts the questions with candidates)."""
    return ClueError(f"{task}: an hf encoder answers by ranking the knowledge base's candidate triples, and no "
                     f"question has any; give one with --set kb=Knowledge.txt (KgCLUE's knowledge base, "
                     f"distributed apart from the data) whose entity names occur in the questions")


def nothing_to_train(task: str, answered: int) -> ClueError:
    return ClueError(f"{task}: none of the {answered} training questions has its gold triple among its candidates "
                     f"(from the knowledge base); nothing to train on")


class KbqaLearner(HFLearner):
    """:class:`HFLearner` with the listwise (question, candidate) ranker; the task has no labels."""

    def __init__(self, task: TaskSpec, source: str, values: Mapping[str, Any]) -> None:
        super().__init__(task, source, values)
        saved_head = (self.saved or {}).get("kbqa_head")
        if self.saved is not None and saved_head != LISTWISE_HEAD:
            raise ClueError(f"{source}: clue_model.json names the kbqa_triple head {saved_head!r}, not "
                            f"{LISTWISE_HEAD!r}")

    # ---- what the kind changes ------------------------------------------------------------
    def _texts(self, examples: Sequence[Example]) -> list[str]:
        texts: list[str] = []
        for example in examples:
            texts.append(example.question)  # type: ignore[attr-defined]
            texts.extend(candidate_text(c) for c in candidates_of(example))
            answer = getattr(example, "answer", None)
            if answer is not None:  # its relation is another question's random negative
                texts.append(candidate_text(answer))
        return texts

    def _has_gold(self, example: Example) -> bool:
        return getattr(example, "answer", None) is not None

    @property
    def forward_kind(self) -> str:
        return MULTIPLE_CHOICE

    def _collator(self) -> Collator:
        multiple = 8 if self.settings.mixed_precision != "no" and self.accelerator.device.type == "cuda" else None
        return Collator(MULTIPLE_CHOICE, self.tokenizer.pad_token_id, multiple)

    def _record(self) -> dict[str, Any]:
        return {"kbqa_head": LISTWISE_HEAD}

    def _encode(self, examples: Sequence[Example], with_labels: bool) -> encoding.Features:
        if with_labels:
            groups, skipped, answered = training_groups(examples, self.seed)
            if not groups:
                raise nothing_to_train(self.task.name, answered)
            features = encode_groups(self.tokenizer, groups, range(len(groups)), self.max_length, with_labels=True)
            if skipped:
                features.notes.append(f"{skipped} of {answered} training questions have their gold triple among no "
                                      f"candidates (no entity found, or the knowledge base lacks it); not trained on")
            return features
        pairs, owners, positions = prediction_pairs(examples)
        return encode_groups(self.tokenizer, pairs, owners, self.max_length, with_labels=False,
                             candidate_index=positions)

    # ---- Learner protocol -----------------------------------------------------------------
    def check_plan(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """Refuse a run without a knowledge base when it is planned (no question of train or dev has a
        candidate), or one whose training questions all lack their gold among their candidates, before any
        task of the run trains or writes anything."""
        if not has_candidates([e for examples in splits.values() for e in examples]):
            raise no_knowledge_base(self.task.name)
        train = splits.get("train")
        if train and not any(gold_index(e) is not None for e in train):
            raise nothing_to_train(self.task.name, sum(self._has_gold(e) for e in train))

    def fit(self, train: Sequence[Example], dev: Sequence[Example], context: RunContext) -> None:
        if not has_candidates([*train, *dev]):  # the same refusal for a caller outside a planned run
            raise no_knowledge_base(self.task.name)
        super().fit(train, dev, context)

    def _predict(self, examples: Sequence[Example], features: encoding.Features | None = None) -> list[Prediction]:
        if not examples:
            return []
        if features is None:
            features = self._encode(examples, with_labels=False)
        chosen: list[int | None] = [None] * len(examples)
        if len(features):
            self._ensure_accelerator()
            outputs = infer(self.accelerator, self.prepared, features, self._collator(),
                            self.settings.eval_batch_size, self.forward_kind)
            chosen = best_candidates(features, [float(grid[0]) for (grid,) in outputs], len(examples))
        return [Prediction(e.id, answer_of(e, c)) for e, c in zip(examples, chosen)]

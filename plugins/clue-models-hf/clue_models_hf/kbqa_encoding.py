"""``kbqa_triple`` examples (KgCLUE) → (question, candidate triple) pairs, and their scores → answers.

KgCLUE's baseline (``baselines/ner_re``) answers in two steps: find the question's entity (the
"mention"), then pick its relation with a binary (question, relation) similarity model, the gold
relation the positive, random relations the negatives. Here the task's reader has done the mention
step already (its longest-entity-name lookup attaches the knowledge base's triples of that entity as
``candidates``), so the encoder is the second step over those candidates: one cross-encoder pair per
candidate, ``question`` first, ``predicate：subject`` second, scored listwise (a softmax over the
question's candidates: :mod:`clue_models_hf.kbqa_learner` says why not binary). The predicate is the
relation; the subject keeps its disambiguation (``刘晓华（广东工业大学教授）``), which tells apart
two candidates of one entity name with the same predicate. The predicate comes first so that truncation cuts a long
disambiguation, not the relation. The object is not shown (the baseline picks a relation, then
reads its value): of candidates that differ only in their object (a relation with several values)
the first in the KB's order is scored and can be the answer.

Training groups, per question whose gold triple is among its candidates: the gold candidate first (the
label), then up to :data:`NEGATIVES` negatives: the question's other candidates (a seeded sample where there
are more), filled up with the gold subject and predicates drawn (seeded) from the other training
questions' relations, as the official similarity data draws random relations. The fill is what gives
a question with one candidate (every question of the bundled sample) anything to learn from.
A question whose gold triple is among no candidates (no entity found, or a KB without that triple)
is not trained on, and counted.

The kind is recognised by its name and its examples read by field (``question``, ``answer``,
``candidates``): nothing here imports the task plugin that declares the kind.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from clue_models_hf.encoding import Features, uses_token_types

#: The separator of an answer's three parts (the kind's contract: ``"subject ||| predicate ||| object"``).
SEPARATOR = " ||| "
#: The answer of a question without candidates: three empty parts (every part scored wrong, not malformed).
EMPTY_ANSWER = SEPARATOR.join(("", "", ""))
#: Negative candidates per training question (the official similarity data's 8 random relations).
NEGATIVES = 8
#: What ``clue_model.json`` records as the head (``kbqa_head``): a listwise softmax over a question's candidates.
LISTWISE_HEAD = "listwise"

Triple = tuple[str, str, str]


def candidate_text(triple: Sequence[str]) -> str:
    """The second text of a candidate's pair: relation, then the subject with its disambiguation."""
    return f"{triple[1]}：{triple[0]}"


def _normal(part: str) -> str:
    """The metric's normalisation of a part (lower case, whitespace collapsed)."""
    return " ".join(part.split()).lower()


def candidates_of(example: Any) -> tuple[Triple, ...]:
    return tuple(getattr(example, "candidates", None) or ())


def gold_index(example: Any) -> int | None:
    """Position of the first candidate equal to the gold answer (part by part, normalised), or None.

    Normalised because the reader strips a KB value (as the official es.py does) while a file's answer
    may keep a no-break space: the same answer to the metric, so the same candidate.
    """
    answer = getattr(example, "answer", None)
    if answer is None:
        return None
    wanted = tuple(_normal(p) for p in answer)
    return next((i for i, c in enumerate(candidates_of(example)) if tuple(_normal(p) for p in c) == wanted), None)


def has_candidates(examples: Sequence[Any]) -> bool:
    return any(candidates_of(e) for e in examples)


def training_groups(examples: Sequence[Any], seed: int) -> tuple[list[tuple[str, list[str]]], int, int]:
    """``(groups, skipped, answered)``: per trained question, (question, [gold text, negative texts...]);
    how many answered questions have their gold triple among no candidates (not trained on), of how many."""
    rng = random.Random(seed)
    relations = sorted({str(e.answer[1]) for e in examples if getattr(e, "answer", None) is not None})
    groups: list[tuple[str, list[str]]] = []
    skipped = answered = 0
    for example in examples:
        if getattr(example, "answer", None) is None:
            continue
        answered += 1
        found = gold_index(example)
        if found is None:
            skipped += 1
            continue
        candidates = candidates_of(example)
        gold = candidates[found]
        positive = candidate_text(gold)
        others = sorted({candidate_text(c) for c in candidates} - {positive})
        negatives = rng.sample(others, min(NEGATIVES, len(others)))
        if len(negatives) < NEGATIVES:
            taken = {c[1] for c in candidates}
            pool = [r for r in relations if r not in taken]
            negatives += [candidate_text((gold[0], r, "")) for r in rng.sample(pool, min(NEGATIVES - len(negatives),
                                                                                        len(pool)))]
        groups.append((example.question, [positive, *negatives]))
    return groups, skipped, answered


def encode_groups(tokenizer: Any, groups: Sequence[tuple[str, Sequence[str]]], example_index: Sequence[int],
                  max_length: int, with_labels: bool, candidate_index: Sequence[int] | None = None) -> Features:
    """One multiple-choice item per group: its texts as the choices (truncated longest-first), the gold
    first (label 0) when training. ``candidate_index`` rides in the items as ``candidate`` (the collator
    reads only the fields it knows)."""
    features = Features([], [], [])
    if not groups:
        return features
    token_types = uses_token_types(tokenizer)
    firsts = [question for question, texts in groups for _ in texts]
    seconds = [text for _, texts in groups for text in texts]
    encoding = tokenizer(firsts, seconds, truncation="longest_first", max_length=max_length,
                         return_attention_mask=False, return_token_type_ids=token_types)
    position = 0
    for (_, texts), index in zip(groups, example_index):
        n = len(texts)
        item: dict[str, Any] = {"choices": encoding["input_ids"][position:position + n]}
        if token_types and "token_type_ids" in encoding:
            item["choice_token_types"] = encoding["token_type_ids"][position:position + n]
        if with_labels:
            item["label"] = 0
        if candidate_index is not None:
            item["candidate"] = int(candidate_index[len(features.items)])
        position += n
        features.items.append(item)
        features.lengths.append(sum(len(ids) for ids in item["choices"]))
        features.example_index.append(int(index))
    return features


def prediction_pairs(examples: Sequence[Any]) -> tuple[list[tuple[str, list[str]]], list[int], list[int]]:
    """Every candidate of every example as a group of one, with its example's and its own index; a
    candidate whose text an earlier one of its question has (another object of one relation) is left
    out, so the first in KB order is the one answered, exactly.

    One pair an item, not one question an item: a common name has hundreds of candidates in the real
    knowledge base, and ``eval_batch_size`` items must stay that many sequences. A choice's score does
    not depend on the other choices (the softmax is only in the loss), so nothing else changes.
    """
    groups: list[tuple[str, list[str]]] = []
    owners: list[int] = []
    positions: list[int] = []
    for i, example in enumerate(examples):
        seen: set[str] = set()
        for c, triple in enumerate(candidates_of(example)):
            text = candidate_text(triple)
            if text in seen:
                continue
            seen.add(text)
            groups.append((example.question, [text]))
            owners.append(i)
            positions.append(c)
    return groups, owners, positions


def best_candidates(features: Features, scores: Sequence[float], num_examples: int) -> list[int | None]:
    """Per example, the index of its best-scoring candidate (the first in KB order on a tie), or None."""
    best: list[tuple[float, int] | None] = [None] * num_examples
    for f, score in enumerate(scores):
        example, candidate = features.example_index[f], features.items[f]["candidate"]
        held = best[example]
        if held is None or score > held[0] or (score == held[0] and candidate < held[1]):
            best[example] = (float(score), candidate)
    return [None if b is None else b[1] for b in best]


def answer_of(example: Any, chosen: int | None) -> str:
    """The answer text of the chosen candidate; :data:`EMPTY_ANSWER` for a question without one."""
    return EMPTY_ANSWER if chosen is None else SEPARATOR.join(candidates_of(example)[chosen])

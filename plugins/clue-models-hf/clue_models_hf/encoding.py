"""Turn examples into model features, one function per example kind.

Features are plain Python lists (no padding: batches are padded to their own longest
member by :mod:`clue_models_hf.batching`). Span extraction keeps, per feature, the token
offsets into the original context and which tokens belong to the context, so answers are
sliced from the context's own characters (DRCD's Traditional Chinese stays Traditional).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clue_core.plugin import ClassificationExample, ClueError, MultipleChoiceExample, SpanExample


@dataclass
class Features:
    """Encoded features of a list of examples.

    ``items[i]`` is what the collator batches; ``example_index[i]`` the example feature
    ``i`` came from (span extraction makes several windows per long context). Span
    windows also carry ``offsets`` (character range of every token), ``context_mask``
    (True on context tokens) and ``context_ranges`` (``(first, stop)`` of that one run of
    context tokens, which is all :func:`clue_models_hf.spans.decode_windows` needs).
    """

    items: list[dict[str, Any]]
    lengths: list[int]
    example_index: list[int]
    offsets: list[list[tuple[int, int]]] = field(default_factory=list)
    context_mask: list[list[bool]] = field(default_factory=list)
    context_ranges: list[tuple[int, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)


def _item(encoding: Any, i: int, use_token_types: bool) -> dict[str, Any]:
    item: dict[str, Any] = {"input_ids": encoding["input_ids"][i]}
    if use_token_types and "token_type_ids" in encoding:
        item["token_type_ids"] = encoding["token_type_ids"][i]
    return item


def uses_token_types(tokenizer: Any) -> bool:
    return "token_type_ids" in getattr(tokenizer, "model_input_names", ())


def encode_classification(
    tokenizer: Any,
    examples: Sequence[ClassificationExample],
    label2id: Mapping[str, int],
    max_length: int,
    with_labels: bool,
) -> Features:
    """Single texts and text pairs, truncated longest-first to ``max_length`` tokens.

    One tokenizer call per group (singles, pairs), without attention masks (the collator
    derives them from the lengths): on CMNLI's 392,000 pairs that saves a third of the
    lists the tokenizer would build, and the time to build them.
    """
    token_types = uses_token_types(tokenizer)
    if with_labels:
        labels = _label_ids(examples, label2id)
    items: list[dict[str, Any]] = [{} for _ in examples]
    singles = [i for i, e in enumerate(examples) if e.text_pair is None]
    pairs = [i for i, e in enumerate(examples) if e.text_pair is not None]
    for group, paired in ((singles, False), (pairs, True)):
        if not group:
            continue
        everything = len(group) == len(examples)  # the usual case: no index lists to go through
        chosen = examples if everything else [examples[i] for i in group]
        texts = [e.text for e in chosen]
        seconds = [e.text_pair for e in chosen] if paired else None
        if paired:
            encoding = tokenizer(texts, seconds, truncation=True, max_length=max_length, return_attention_mask=False,
                                 return_token_type_ids=token_types)
            ids = encoding["input_ids"]
            types = encoding["token_type_ids"] if token_types and "token_type_ids" in encoding else None
        else:
            ids, types = tokenize_singles(tokenizer, texts, max_length, token_types)
        for position, i in enumerate(range(len(examples)) if everything else group):
            item = items[i]
            item["input_ids"] = ids[position]
            if types is not None:
                item["token_type_ids"] = types[position]
    if with_labels:
        for item, label in zip(items, labels):
            item["label"] = label
    return Features(items, [len(item["input_ids"]) for item in items], list(range(len(items))))


#: characters of a long text tokenized at first, per token it can keep (CJK: one per token), plus a margin
PREFIX_CHARS_PER_TOKEN = 1.25
PREFIX_MARGIN = 16


def tokenize_singles(tokenizer: Any, texts: list[str], max_length: int, token_types: bool
                     ) -> tuple[list[list[int]], list[list[int]] | None]:
    """``tokenizer(texts, truncation=True, max_length=max_length)``'s ids (and token types), without
    tokenizing the part of a long text that truncation throws away.

    An IFLYTEK text averages 290 characters and keeps 126 tokens: most of the tokenizer's time
    went on the rest. A text longer than its share of characters is tokenized as a prefix,
    to one token more than it keeps; where that extra token starts a later word than the last
    kept one, every kept word lay whole inside the prefix, and pre-tokenization and word
    pieces of a word depend on that word alone, so the kept tokens are the full text's. The
    extra token is dropped. Any other prefix (a word cut at its end, too few tokens: Latin
    text) is tokenized again in full, as is everything a slow or left-truncating tokenizer sees.
    """
    plain = {"truncation": True, "return_attention_mask": False, "return_token_type_ids": token_types}
    keep = max_length - tokenizer.num_special_tokens_to_add(pair=False)
    budget = int(PREFIX_CHARS_PER_TOKEN * (keep + 1)) + PREFIX_MARGIN
    cut = [i for i, text in enumerate(texts) if len(text) > budget]
    if not cut or keep < 1 or not getattr(tokenizer, "is_fast", False) or tokenizer.truncation_side != "right":
        encoding = tokenizer(texts, max_length=max_length, **plain)
        return encoding["input_ids"], encoding.get("token_type_ids") if token_types else None
    encoding = tokenizer([text[:budget] if len(text) > budget else text for text in texts], max_length=max_length + 1,
                         **plain)
    ids = encoding["input_ids"]
    types = encoding.get("token_type_ids") if token_types else None
    again = []
    for i in range(len(texts)):
        was_cut = len(texts[i]) > budget
        if len(ids[i]) <= max_length:  # within max_length: the whole text, or a prefix of too few tokens
            if was_cut:
                again.append(i)
            continue
        words = encoding.word_ids(i)
        extra = _last_content(words, len(words) - 1)
        last = _last_content(words, extra - 1)
        if was_cut and words[last] == words[extra]:
            again.append(i)
            continue
        ids[i] = ids[i][:extra] + ids[i][extra + 1:]
        if types is not None:
            types[i] = types[i][:extra] + types[i][extra + 1:]
    if again:
        redo = tokenizer([texts[i] for i in again], max_length=max_length, **plain)
        for position, i in enumerate(again):
            ids[i] = redo["input_ids"][position]
            if types is not None:
                types[i] = redo["token_type_ids"][position]
    return ids, types


def _last_content(words: list[int | None], position: int) -> int:
    """The last position at or before ``position`` that holds a text token (special tokens have no word)."""
    while words[position] is None:
        position -= 1
    return position


def _label_ids(examples: Sequence[ClassificationExample], label2id: Mapping[str, int]) -> list[int]:
    """Label ids in example order; an unknown label stops before any tokenizing is done."""
    try:
        return [label2id[e.label] for e in examples]  # type: ignore[index]
    except KeyError:
        bad = next(e for e in examples if e.label not in label2id)
        known = ", ".join(label2id)
        raise ClueError(f"example {bad.id!r}: label {bad.label!r} is not one of the model's labels ({known})") from None


def _truncate_questions(tokenizer: Any, questions: list[str], max_query_length: int) -> list[str]:
    """Cut each question after its first ``max_query_length`` tokens, at a character boundary."""
    encoding = tokenizer(questions, add_special_tokens=False, return_offsets_mapping=True)
    cut = []
    for question, offsets in zip(questions, encoding["offset_mapping"]):
        cut.append(question[: offsets[max_query_length - 1][1]] if len(offsets) > max_query_length else question)
    return cut


def answer_span(example: SpanExample) -> tuple[int, int] | None:
    """Character range of the first usable gold answer, or None when it has none.

    Answers without an offset (``start`` None: the gold text is not a verbatim part of the
    context, as in some official CMRC2018 dev answers) are skipped; an offset that is off
    is relocated to the text's first occurrence. Scoring still sees every answer.
    """
    for text, start in example.answers or ():
        if not text or start is None:
            continue
        if example.context[start:start + len(text)] != text:
            start = example.context.find(text)
            if start < 0:
                continue
        return start, start + len(text)
    return None


def check_span_settings(tokenizer: Any, max_length: int, doc_stride: int, max_query_length: int) -> None:
    room = max_length - max_query_length - tokenizer.num_special_tokens_to_add(pair=True)
    if room <= 0 or doc_stride >= room:
        raise ClueError(
            f"doc_stride ({doc_stride}) must be smaller than max_length - max_query_length - special tokens "
            f"({max_length} - {max_query_length} - {tokenizer.num_special_tokens_to_add(pair=True)} = {room})"
        )


def encode_spans(
    tokenizer: Any,
    examples: Sequence[SpanExample],
    max_length: int,
    doc_stride: int,
    max_query_length: int,
    with_labels: bool,
) -> Features:
    """Question + sliding context windows overlapping by ``doc_stride`` tokens.

    Training windows that do not contain the whole answer point at the first token (the
    usual SQuAD v1 treatment); decoding never considers it. With labels, examples without
    a usable answer (:func:`answer_span`) make no features, and a note counts them.
    """
    check_span_settings(tokenizer, max_length, doc_stride, max_query_length)
    token_types = uses_token_types(tokenizer)
    kept = range(len(examples))
    spans: list[tuple[int, int] | None] = []
    if with_labels:  # an example without a usable answer teaches nothing: it is not trained on
        located = [answer_span(e) for e in examples]
        kept = [i for i, span in enumerate(located) if span is not None]
        spans = [located[i] for i in kept]
    chosen = [examples[i] for i in kept]
    features = Features([], [], [])
    skipped = len(examples) - len(chosen)
    if skipped:
        features.notes.append(f"{skipped} of {len(examples)} examples have no answer located in their context "
                              f"and were not used for training")
    if not chosen:
        return features
    questions = _truncate_questions(tokenizer, [e.question for e in chosen], max_query_length)
    encoding = tokenizer(
        questions,
        [e.context for e in chosen],
        truncation="only_second",
        max_length=max_length,
        stride=doc_stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        return_attention_mask=False,
    )
    for i, position in enumerate(encoding["overflow_to_sample_mapping"]):
        sequence_ids = encoding.sequence_ids(i)
        offsets = [tuple(o) for o in encoding["offset_mapping"][i]]
        context = [s == 1 for s in sequence_ids]
        item = _item(encoding, i, token_types)
        if with_labels:
            item["start_position"], item["end_position"] = _token_positions(spans[position], offsets, context)
        features.items.append(item)
        features.lengths.append(len(item["input_ids"]))
        features.example_index.append(kept[position])
        features.offsets.append(offsets)  # type: ignore[arg-type]
        features.context_mask.append(context)
        features.context_ranges.append(_context_range(sequence_ids))
    return features


def _context_range(sequence_ids: list[int | None]) -> tuple[int, int]:
    """``(first, stop)`` of the context tokens (sequence 1), which a pair encoding keeps in one run."""
    if 1 not in sequence_ids:
        return 0, 0
    first = sequence_ids.index(1)
    stop = first + sequence_ids.count(1)
    if sequence_ids[first:stop].count(1) != stop - first:
        raise ClueError("the tokenizer split a window's context into several runs; span decoding needs one")
    return first, stop


def _token_positions(span: tuple[int, int] | None, offsets: list[tuple[int, int]], context: list[bool]
                     ) -> tuple[int, int]:
    if span is None:
        return 0, 0
    char_start, char_end = span
    tokens = [t for t, inside in enumerate(context) if inside]
    if not tokens or offsets[tokens[0]][0] > char_start or offsets[tokens[-1]][1] < char_end:
        return 0, 0
    start = next(t for t in tokens if offsets[t][1] > char_start)
    end = next(t for t in reversed(tokens) if offsets[t][0] < char_end)
    return (start, end) if start <= end else (0, 0)


def choice_text(question: str, choice: str) -> str:
    return f"{question} {choice}" if question else choice


def encode_choices(
    tokenizer: Any,
    examples: Sequence[MultipleChoiceExample],
    max_length: int,
    with_labels: bool,
) -> Features:
    """One (context, question + choice) pair per real choice; no padding choices are made."""
    token_types = uses_token_types(tokenizer)
    firsts: list[str] = []
    seconds: list[str] = []
    for example in examples:
        if not example.choices:
            raise ClueError(f"example {example.id!r}: no choices")
        if with_labels and not (0 <= int(example.label) < len(example.choices)):  # type: ignore[arg-type]
            raise ClueError(f"example {example.id!r}: label {example.label} is not the index of one of its "
                            f"{len(example.choices)} choices")
        for choice in example.choices:
            firsts.append(example.context)
            seconds.append(choice_text(example.question, choice))
    encoding = tokenizer(firsts, seconds, truncation="longest_first", max_length=max_length,
                         return_attention_mask=False)
    features = Features([], [], [])
    position = 0
    for index, example in enumerate(examples):
        n = len(example.choices)
        item: dict[str, Any] = {"choices": encoding["input_ids"][position:position + n]}
        if token_types and "token_type_ids" in encoding:
            item["choice_token_types"] = encoding["token_type_ids"][position:position + n]
        if with_labels:
            item["label"] = int(example.label)  # type: ignore[arg-type]
        position += n
        features.items.append(item)
        features.lengths.append(sum(len(ids) for ids in item["choices"]))
        features.example_index.append(index)
    return features

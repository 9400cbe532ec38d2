"""The entity-spans heads of clue-models-hf (CLUENER2020's kind), on the kind's contract alone.

Gold spans are encoded into token labels over the tokenizer's offsets and decoded back: the
same spans come out, for texts with spaces, digits, Latin words and emoji, through hf-tiny's
character tokenizer and a word-piece one, in one window or many. Then the decoding rules: an
I- tag that continues nothing starts an entity, the span head pairs a start with the first end
of its type, and windows are merged token by token. Last, hf-tiny trains and predicts both heads
end to end on a tiny entity-spans task whose kind this file declares (as the NER task plugin
does), on an isolated kernel; the predictions must be valid spans, not accurate ones (a trained
network's floats differ across CPUs).
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from clue_core.kernel import Kernel
from clue_core.plugin import ExampleId, KindSpec, MetricSpec, SplitData, TaskSpec, field, hookimpl, iter_jsonl
from clue_models_hf.ner_encoding import decode_outputs, encode_entities
from clue_models_hf.ner_tags import (
    BIO,
    ENTITY_SPANS,
    IGNORE,
    SPAN_HEAD,
    bio_labels,
    decode_bio,
    decode_span_head,
    encode,
    merge_windows,
)

TYPES = ("address", "book", "company", "game", "name")


@dataclass(frozen=True, slots=True)
class Entities:
    """The contract's example: ``entities`` are (type, start, end) with ``end`` exclusive."""

    id: ExampleId
    text: str
    entities: tuple[tuple[str, int, int], ...] | None = None


def example(i: int, text: str, *spans: tuple[str, str]) -> Entities:
    """An example whose gold is given as (type, entity text), each at its first occurrence after the last."""
    found, at = [], 0
    for kind, entity in spans:
        start = text.index(entity, at)
        found.append((kind, start, start + len(entity)))
        at = start + len(entity)
    return Entities(i, text, tuple(sorted(found, key=lambda s: (s[1], s[2], s[0]))))


EXAMPLES = [
    example(0, "New York Times的记者在 北京 采访了张三", ("company", "New York Times"), ("address", "北京"),
            ("name", "张三")),
    example(1, "2024年《三体》卖了 300万册", ("book", "《三体》")),
    example(2, "😀李四玩王者荣耀😀很开心", ("name", "李四"), ("game", "王者荣耀")),
    example(3, "  Apple公司 和 Google  合作 ", ("company", "Apple公司"), ("company", "Google")),
    example(4, "没有实体的一句话。"),
    example(5, "中国 人民 银行在上海市浦东新区陆家嘴环路1000号", ("government", "中国 人民 银行"),
            ("address", "上海市浦东新区陆家嘴环路1000号")),
]
ALL_TYPES = (*TYPES, "government")


def perfect_outputs(features: Any, head: str) -> list[tuple[np.ndarray, ...]]:
    """What a head that learned the gold exactly would say: one-hot scores of the encoded labels."""
    def one_hot(labels: list[int], classes: int) -> np.ndarray:
        scores = np.zeros((len(labels), classes), dtype=np.float32)
        scores[np.arange(len(labels)), np.maximum(labels, 0)] = 1.0
        return scores

    if head == BIO:
        return [(one_hot(item["tags"], 1 + 2 * len(ALL_TYPES)),) for item in features.items]
    return [(one_hot(item["start_tags"], 1 + len(ALL_TYPES)), one_hot(item["end_tags"], 1 + len(ALL_TYPES)))
            for item in features.items]


@pytest.fixture(scope="module")
def char_tokenizer() -> Any:
    """hf-tiny's tokenizer: one token per CJK character, Latin words and digits in ``##`` letters."""
    from clue_models_hf import tiny

    return tiny.build_tokenizer([e.text for e in EXAMPLES])


@pytest.fixture(scope="module")
def piece_tokenizer() -> Any:
    """A word-piece vocabulary: ``new``, ``york``, ``times``, ``apple``, ``300``, ``##0`` are one token each."""
    from transformers import BertTokenizer

    pieces = ["new", "york", "times", "apple", "google", "2024", "300", "1000", "##0", "##万"]
    chars = sorted({c for e in EXAMPLES for c in e.text.lower() if not c.isspace()})
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *pieces, *chars])}
    return BertTokenizer(vocab=vocab, do_lower_case=True, strip_accents=False, tokenize_chinese_chars=True)


@pytest.mark.parametrize("head", [BIO, SPAN_HEAD])
@pytest.mark.parametrize("tokenizer", ["char_tokenizer", "piece_tokenizer"])
@pytest.mark.parametrize(("max_length", "stride"), [(128, 32), (8, 2), (6, 1)])
def test_gold_spans_encoded_then_decoded_are_the_gold(request, tokenizer: str, head: str, max_length: int,
                                                      stride: int) -> None:
    """Spaces the tokenizer drops, word pieces over several characters, emoji, windows: the same spans."""
    tok = request.getfixturevalue(tokenizer)
    features = encode_entities(tok, EXAMPLES, ALL_TYPES, max_length, stride, with_labels=True)
    assert features.notes == []
    if max_length < 128:
        assert len(features) >= 2 * len(EXAMPLES)  # several windows per text
    decoded = decode_outputs(head, ALL_TYPES, features, perfect_outputs(features, head), len(EXAMPLES))
    assert decoded == [list(e.entities or ()) for e in EXAMPLES]
    for e, spans in zip(EXAMPLES, decoded):
        assert [e.text[s:t] for _, s, t in spans] == [e.text[s:t] for _, s, t in e.entities or ()]


def test_the_word_pieces_really_cover_several_characters(piece_tokenizer) -> None:
    encoded = piece_tokenizer("New York Times 300万", return_offsets_mapping=True, add_special_tokens=False)
    assert encoded["offset_mapping"] == [(0, 3), (4, 8), (9, 14), (15, 18), (18, 19)]


def test_a_span_starting_inside_a_word_piece_is_noted_and_comes_back_widened(piece_tokenizer) -> None:
    features = encode_entities(piece_tokenizer, [Entities(0, "Times到了", (("name", 1, 5),))], ALL_TYPES, 32, 4,
                               with_labels=True)
    assert features.notes == ["1 of 1 gold spans start or end inside a token; trained on the tokens they overlap"]
    decoded = decode_outputs(BIO, ALL_TYPES, features, perfect_outputs(features, BIO), 1)
    assert decoded == [[("name", 0, 5)]]  # the whole token "times": the nearest span tokens can say


def test_nested_gold_spans_bio_keeps_the_first_the_span_head_both(char_tokenizer) -> None:
    nested = Entities(0, "北京大学的学生", (("address", 0, 2), ("company", 0, 4)))
    inner = Entities(1, "上海交通大学", (("company", 0, 6), ("address", 2, 4)))
    features = encode_entities(char_tokenizer, [nested, inner], ALL_TYPES, 32, 4, with_labels=True)
    assert features.notes == ["2 of 4 gold spans overlap an earlier one; BIO tags keep the first (the span "
                              "head both, unless they share a start or an end token)"]
    assert decode_outputs(BIO, ALL_TYPES, features, perfect_outputs(features, BIO), 2) == [
        [("address", 0, 2)], [("company", 0, 6)]]
    # 北京 and 北京大学 share their start token: the span head keeps the first; 交通 inside 上海交通大学: both
    assert decode_outputs(SPAN_HEAD, ALL_TYPES, features, perfect_outputs(features, SPAN_HEAD), 2) == [
        [("address", 0, 2)], [("company", 0, 6), ("address", 2, 4)]]


def test_a_span_of_dropped_characters_only_is_noted(char_tokenizer) -> None:
    features = encode_entities(char_tokenizer, [Entities(0, "张三  来了", (("name", 2, 4),))], ALL_TYPES, 32, 4,
                               with_labels=True)
    assert features.notes == ["1 of 1 gold spans cover only characters the tokenizer drops; not trained on"]


def test_an_unknown_type_in_training_data_is_one_error(char_tokenizer) -> None:
    from clue_core.plugin import ClueError

    with pytest.raises(ClueError, match=r"example 3: entity types 'movie' are not among the model's types"):
        encode_entities(char_tokenizer, [Entities(3, "英雄", (("movie", 0, 2),))], TYPES, 32, 4, with_labels=True)


OFFSETS = [None, (0, 1), (1, 2), (2, 3), (3, 4), (4, 5), None]  # [CLS] five characters [SEP]


def tags(*names: str) -> list[int]:
    labels = bio_labels(TYPES)
    return [IGNORE, *(labels.index(n) for n in names), IGNORE]


@pytest.mark.parametrize(("names", "expected"), [
    # an I- after O starts an entity (conlleval's reading), as does one at the start of the text
    (("O", "I-name", "I-name", "O", "O"), [("name", 1, 3)]),
    (("I-name", "I-name", "O", "O", "O"), [("name", 0, 2)]),
    # an I- of another type ends the entity before it and starts one of its own type
    (("B-name", "I-game", "I-game", "O", "O"), [("name", 0, 1), ("game", 1, 3)]),
    # B- after B- of the same type: two entities
    (("B-name", "B-name", "I-name", "O", "B-book"), [("name", 0, 1), ("name", 1, 3), ("book", 4, 5)]),
    (("O", "O", "O", "O", "O"), []),
])
def test_the_invalid_i_rule(names: tuple[str, ...], expected: list) -> None:
    assert decode_bio(tags(*names), OFFSETS, TYPES) == expected


def test_every_tag_sequence_decodes_to_valid_spans_and_valid_ones_round_trip() -> None:
    rng = random.Random(5)
    for _ in range(300):
        names = [rng.choice(bio_labels(TYPES)) for _ in range(5)]
        spans = decode_bio(tags(*names), OFFSETS, TYPES)
        assert all(0 <= s < e <= 5 and t in TYPES for t, s, e in spans)
        assert all(a[2] <= b[1] for a, b in itertools.pairwise(spans))  # BIO spans never overlap
        again = encode(OFFSETS, spans, TYPES)
        assert decode_bio(again.tags, OFFSETS, TYPES) == spans


def test_the_span_head_pairs_each_start_with_the_first_end_of_its_type() -> None:
    name, game = TYPES.index("name") + 1, TYPES.index("game") + 1
    starts = [IGNORE, name, 0, game, name, 0, IGNORE]
    ends = [IGNORE, 0, name, 0, game, name, IGNORE]
    # name at 0 ends at the first name end (1), not at 4; game 2..3; name 3..4; the start without
    # an end of its type after it makes nothing
    assert decode_span_head(starts, ends, OFFSETS, TYPES) == [("name", 0, 2), ("game", 2, 4), ("name", 3, 5)]
    assert decode_span_head([IGNORE, 0, 0, name, 0, 0, IGNORE], [IGNORE, name, 0, 0, 0, 0, IGNORE], OFFSETS,
                            TYPES) == []


def window(first: int, stop: int, labels: list[str]) -> tuple[list, list[list[int]]]:
    """A window over characters first..stop-1 (one token each) with its BIO labels."""
    offsets = [None, *((c, c + 1) for c in range(first, stop)), None]
    bio = bio_labels(TYPES)
    return offsets, [[IGNORE, *(bio.index(n) for n in labels), IGNORE]]


def test_an_entity_in_the_overlap_is_found_once() -> None:
    # characters 0..5 and 3..8: "name" over 3..4 seen by both windows
    first = window(0, 6, ["O", "O", "O", "B-name", "I-name", "O"])
    second = window(3, 9, ["B-name", "I-name", "O", "O", "O", "O"])
    offsets, rows = merge_windows([first, second])
    assert offsets == [(c, c + 1) for c in range(9)]
    assert decode_bio(rows[0], offsets, TYPES) == [("name", 3, 5)]


def test_each_overlap_token_takes_the_labels_of_the_window_where_it_has_most_context() -> None:
    # characters 0..5 and 3..8; the first window sees 5 at its cut edge and calls it O, the second
    # (where 5 has two tokens on each side) calls 4..5 a game: the second wins for 5, and for 4
    # (one token to the first window's edge, one to the second's start: a tie, the earlier window)
    first = window(0, 6, ["O", "O", "O", "O", "B-game", "O"])
    second = window(3, 9, ["O", "O", "I-game", "O", "O", "O"])
    offsets, rows = merge_windows([first, second])
    assert decode_bio(rows[0], offsets, TYPES) == [("game", 4, 6)]


def test_an_entity_longer_than_the_overlap_comes_back_whole(char_tokenizer) -> None:
    text = "他住在上海市浦东新区陆家嘴环路一千号附近"
    gold = example(0, text, ("address", "上海市浦东新区陆家嘴环路一千号"))
    for head in (BIO, SPAN_HEAD):
        features = encode_entities(char_tokenizer, [gold], ALL_TYPES, 7, 1, with_labels=True)
        assert len(features) >= 4 and all(len(item["input_ids"]) <= 7 for item in features.items)
        decoded = decode_outputs(head, ALL_TYPES, features, perfect_outputs(features, head), 1)
        assert decoded == [list(gold.entities or ())]


def test_a_stride_that_leaves_no_room_is_one_error(char_tokenizer) -> None:
    from clue_core.plugin import ClueError

    with pytest.raises(ClueError, match=r"ner_stride \(6\) must be smaller than max_length - special tokens"):
        encode_entities(char_tokenizer, EXAMPLES, ALL_TYPES, 8, 6, with_labels=False)


# -- end to end: hf-tiny on a tiny entity-spans task of this file's own kind ---------------------

def check_prediction(task: TaskSpec, example: Entities, value: Any) -> str | None:
    """The contract's check: a list of [type, start, end] with a known type and 0 <= start < end <= len."""
    if not isinstance(value, list | tuple):
        return f"expected a list of [type, start, end], got {json.dumps(value)}"
    for triple in value:
        if not (isinstance(triple, list | tuple) and len(triple) == 3 and isinstance(triple[0], str)
                and all(isinstance(v, int) and not isinstance(v, bool) for v in triple[1:])):
            return f"expected [type, start, end], got {json.dumps(triple)}"
        if triple[0] not in task.labels or not 0 <= triple[1] < triple[2] <= len(example.text):
            return f"not a span of this text: {json.dumps(triple)}"
    return None


def read(task: TaskSpec, data_dir: Path, split: str) -> SplitData:
    path = Path(data_dir) / f"{split}.jsonl"
    examples = []
    for line, record in iter_jsonl(path):
        spans = field(record, "entities", list, path=path, line=line, default=None)
        examples.append(Entities(field(record, "id", int, path=path, line=line),
                                 field(record, "text", str, path=path, line=line),
                                 None if spans is None else tuple(tuple(s) for s in spans)))
    return SplitData(tuple(examples), files=(str(path),))


def span_f1(examples: list[Entities], predictions: list[Any]) -> dict[str, float]:
    """Offset-exact micro F1 ×100 (only so the run has a primary metric to keep its best checkpoint by)."""
    gold = {(e.id, *s) for e in examples for s in e.entities or ()}
    said = {(e.id, *s) for e, p in zip(examples, predictions) if p is not None for s in map(tuple, p.value)}
    right = len(gold & said)
    return {"span_f1": 200.0 * right / (len(gold) + len(said)) if gold or said else 100.0}


class EntityPlugin:
    """The NER task plugin's side of the contract, cut to what the model plugin reads."""

    @hookimpl
    def clue_kinds(self) -> list[KindSpec]:
        return [KindSpec(ENTITY_SPANS, "a text and its typed spans", example=f"{__name__}:Entities",
                         prediction="entity spans: [type, start, end) triples",
                         check_prediction=f"{__name__}:check_prediction", gold="entities", prompt_fields=("text",))]

    @hookimpl
    def clue_tasks(self) -> list[TaskSpec]:
        return [TaskSpec("toy-ner", ENTITY_SPANS, "toy: names and places", f"{__name__}:read", labels=ALL_TYPES,
                         metrics=("span_f1",), primary_metric="span_f1", data_files=("train.jsonl", "dev.jsonl"))]

    @hookimpl
    def clue_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("span_f1", f"{__name__}:span_f1", "offset-exact micro F1 ×100", kinds=(ENTITY_SPANS,))]


@pytest.fixture
def ner_kernel(isolated_kernel: Kernel) -> Kernel:
    from clue_models_hf import hooks

    isolated_kernel.register(hooks, "clue-models-hf", distribution="clue-models-hf")
    isolated_kernel.register(EntityPlugin(), "toy-ner")
    broken = [(p.name, p.error) for p in isolated_kernel.plugins if p.status != "ok"]
    assert not broken, broken
    return isolated_kernel


def write_data(folder: Path) -> Path:
    """Train: the six examples, four times; dev: two of them and a text far longer than max_length."""
    folder.mkdir(parents=True, exist_ok=True)
    long = example(99, "据报道" + "，".join(["张三在北京", "李四玩王者荣耀", "New York Times的记者"] * 4),
                   ("name", "张三"), ("address", "北京"))
    rows = {"train": [e for _ in range(4) for e in EXAMPLES], "dev": [EXAMPLES[0], EXAMPLES[2], long]}
    for split, chosen in rows.items():
        lines = [json.dumps({"id": i, "text": e.text, "entities": [list(s) for s in e.entities or ()]},
                            ensure_ascii=False) for i, e in enumerate(chosen)]
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


TINY_SET = ("tiny_hidden_size=32", "tiny_num_layers=1", "tiny_num_heads=2", "tiny_intermediate_size=64",
            "epochs=3", "batch_size=8", "max_length=16", "ner_stride=4", "progress=false")


@pytest.mark.slow
@pytest.mark.parametrize("head", [SPAN_HEAD, BIO])
def test_hf_tiny_fits_and_predicts_valid_spans(run_cli, ner_kernel: Kernel, tmp_path: Path, head: str) -> None:
    data = write_data(tmp_path / "data")
    sets = [arg for value in (*TINY_SET, f"ner_head={head}") for arg in ("--set", value)]
    result = run_cli("run", "toy-ner", "--model", "hf-tiny", "--data-dir", data, "-o", tmp_path / "out", *sets,
                     kernel=ner_kernel)
    assert result.exit_code == 0, result.output
    (metrics_file,) = (tmp_path / "out").rglob("metrics.json")
    assert "span_f1" in json.loads(metrics_file.read_text(encoding="utf-8"))["dev"]
    dev = read(ner_kernel.task("toy-ner"), data, "dev").examples
    records = [json.loads(line) for line in (metrics_file.parent / "predictions" / "dev.jsonl").open(encoding="utf-8")]
    assert [r["id"] for r in records] == [e.id for e in dev]
    for record, gold in zip(records, dev):
        assert check_prediction(ner_kernel.task("toy-ner"), gold, record["prediction"]) is None, record
        assert record["prediction"] == sorted(record["prediction"], key=lambda s: (s[1], s[2], s[0]))
        assert record["gold"] == [list(s) for s in gold.entities or ()]
    model = metrics_file.parent / "model"
    saved = json.loads((model / "clue_model.json").read_text(encoding="utf-8"))
    assert (saved["kind"], saved["ner_head"], saved["labels"]) == (ENTITY_SPANS, head, list(ALL_TYPES))

    # the saved model predicts with the head it was trained with, whatever ner_head says now
    from clue_models_hf.factory import create

    other = SPAN_HEAD if head == BIO else BIO
    again = create(str(model), ner_kernel.task("toy-ner"), {"max_length": 16, "ner_stride": 4, "ner_head": other})
    predicted = again.predict(list(dev))
    assert again.head == head
    assert [[list(s) for s in p.value] for p in predicted] == [r["prediction"] for r in records]


def test_the_head_and_stride_are_declared_settings_checked_before_any_work() -> None:
    from clue_core.plugin import ClueError
    from clue_models_hf.settings import COMMON, complete, cross_check

    declared = {s.name: s for s in COMMON}
    assert (declared["ner_head"].default, declared["ner_head"].choices) == (SPAN_HEAD, (BIO, SPAN_HEAD))
    assert declared["ner_stride"].default == 32 and declared["ner_head"].schedule
    values = complete(COMMON, {"max_length": 16, "ner_stride": 14})
    with pytest.raises(ClueError, match=r"setting 'ner_stride' \(14\) must be smaller than max_length \(16\)"):
        cross_check(values, ENTITY_SPANS)
    cross_check(values, "classification")  # other kinds never read it

"""KgCLUE's encoder head: (question, candidate) groups for training, candidates for prediction, the choice.

The examples are the task plugin's own contract type (``kbqa_triple``); the model plugin reads them by
field name only, so any object with ``question``, ``answer`` and ``candidates`` would do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clue_core.plugin import ClueError, TaskSpec
from clue_models_hf import tiny
from clue_models_hf.kbqa_encoding import (
    EMPTY_ANSWER,
    NEGATIVES,
    answer_of,
    best_candidates,
    candidate_text,
    encode_groups,
    gold_index,
    prediction_pairs,
    training_groups,
)
from clue_tasks_kgclue.triples import KbqaExample

LIU_A = ("刘晓华（广东工业大学教授）", "主讲课程", "机械设计")
LIU_B = ("刘晓华（演员）", "主讲课程", "表演")
LIU_C = ("刘晓华（演员）", "代表作品", "某剧")


def _train() -> list[KbqaExample]:
    return [
        KbqaExample(0, "刘晓华教授讲什么课？", LIU_A, (LIU_B, LIU_A, LIU_C)),
        KbqaExample(1, "龙晶用繁体怎么写？", ("龙晶（游戏）", "繁体", "龍晶"), (("龙晶（游戏）", "繁体", "龍晶"),)),
        KbqaExample(2, "谁唱的风不息？", ("风不息", "歌手", "郭富城"), ()),  # no entity found: no candidates
        KbqaExample(3, "申时行是什么官职？", ("申时行", "官职", "首辅"), (("申时行", "字", "汝默"),)),  # KB lacks it
        KbqaExample(4, "无答案的问题？", None, (LIU_A,)),  # test.json: not answered, not counted
    ]


def test_the_second_text_is_the_relation_then_the_subject_with_its_disambiguation() -> None:
    assert candidate_text(LIU_A) == "主讲课程：刘晓华（广东工业大学教授）"
    # two candidates of one name and one predicate differ by the disambiguation only
    assert candidate_text(LIU_A) != candidate_text(LIU_B)


def test_the_gold_candidate_is_found_part_by_part_as_the_metric_normalises() -> None:
    example = KbqaExample(0, "q", ("塔", "高度", "\xa021.44 米"), (("塔", "建成", "1990"), ("塔", "高度", "21.44 米")))
    assert gold_index(example) == 1  # the reader strips the KB's value; the file's answer keeps a no-break space
    assert gold_index(KbqaExample(0, "q", ("塔", "高度", "22 米"), example.candidates)) is None
    assert gold_index(KbqaExample(0, "q", None, example.candidates)) is None


def test_training_groups_put_the_gold_first_and_count_what_they_skip() -> None:
    groups, skipped, answered = training_groups(_train(), seed=3)
    assert (skipped, answered) == (2, 4)  # 2 (no candidates) and 3 (gold not in the KB); 4 has no answer
    assert [question for question, _ in groups] == ["刘晓华教授讲什么课？", "龙晶用繁体怎么写？"]
    (_, liu), (_, long) = groups
    assert liu[0] == candidate_text(LIU_A)
    # the question's own other candidates are negatives, then the fill: other questions' relations on the gold
    # subject, never one of the question's own predicates (that could be another right answer)
    assert set(liu[1:3]) == {candidate_text(LIU_B), candidate_text(LIU_C)}
    assert set(liu[3:]) <= {candidate_text((LIU_A[0], r, "")) for r in ("繁体", "歌手", "官职")}
    assert len(liu) == 1 + 2 + 3 and len(set(liu)) == len(liu)
    assert long[0] == "繁体：龙晶（游戏）"
    assert set(long[1:]) == {f"{r}：龙晶（游戏）" for r in ("主讲课程", "歌手", "官职")}


def test_negatives_are_capped_and_seeded() -> None:
    many = tuple(("实体", f"关系{i}", str(i)) for i in range(30))
    example = KbqaExample(0, "实体的关系7？", many[7], many)
    (_, first), = training_groups([example], seed=1)[0]
    assert len(first) == 1 + NEGATIVES and first[0] == "关系7：实体" and "关系7：实体" not in first[1:]
    assert training_groups([example], seed=1)[0][0][1] == first  # the same seed, the same negatives
    assert any(training_groups([example], seed=s)[0][0][1] != first for s in range(2, 6))


def test_prediction_pairs_hold_every_candidate_in_kb_order_and_skip_questions_without() -> None:
    pairs, owners, positions = prediction_pairs(_train())
    assert owners == [0, 0, 0, 1, 3, 4] and positions == [0, 1, 2, 0, 0, 0]
    assert pairs[:3] == [("刘晓华教授讲什么课？", [candidate_text(c)]) for c in (LIU_B, LIU_A, LIU_C)]
    # another value of one relation has the same text: only the first in KB order is scored (and answered)
    second = (LIU_A[0], LIU_A[1], "机械制图")
    pairs, owners, positions = prediction_pairs([KbqaExample(0, "q", None, (LIU_A, LIU_B, second, LIU_C))])
    assert positions == [0, 1, 3] and [p[1] for p in pairs] == [[candidate_text(c)] for c in (LIU_A, LIU_B, LIU_C)]


def test_groups_encode_as_one_multiple_choice_item_each() -> None:
    tokenizer = tiny.build_tokenizer(["刘晓华教授讲什么课？主讲课程：广东工业大学演员代表作品某剧"])
    groups = [("刘晓华教授讲什么课？", [candidate_text(c) for c in (LIU_A, LIU_B, LIU_C)])]
    features = encode_groups(tokenizer, groups, [0], max_length=12, with_labels=True)
    (item,) = features.items
    assert len(item["choices"]) == 3 and item["label"] == 0 and features.example_index == [0]
    assert "candidate" not in item
    assert all(len(ids) <= 12 for ids in item["choices"])  # truncated to max_length
    first = tokenizer.decode(item["choices"][0], skip_special_tokens=True).replace(" ", "")
    assert first.startswith("刘晓华") and "主讲" in first
    assert features.lengths == [sum(len(ids) for ids in item["choices"])]
    assert len(encode_groups(tokenizer, [], [], 12, with_labels=False)) == 0
    pairs, owners, positions = prediction_pairs(_train())
    features = encode_groups(tokenizer, pairs, owners, 12, with_labels=False, candidate_index=positions)
    assert [len(i["choices"]) for i in features.items] == [1] * 6  # one pair an item: batches stay bounded
    assert [i["candidate"] for i in features.items] == positions and features.example_index == owners
    assert all("label" not in i for i in features.items)


def test_the_best_candidate_wins_the_first_on_a_tie_and_no_candidate_answers_three_empty_parts() -> None:
    tokenizer = tiny.build_tokenizer(["刘晓华教授讲什么课？主讲课程：广东工业大学演员代表作品某剧龙晶繁体申时行字官职"])
    pairs, owners, positions = prediction_pairs(_train())
    features = encode_groups(tokenizer, pairs, owners, 32, with_labels=False, candidate_index=positions)
    # example 0's pairs score 0.1, 0.7, 0.7: the better of the tied two is the first in KB order
    assert best_candidates(features, [0.1, 0.7, 0.7, -3.0, 2.0, 0.0], num_examples=5) == [1, 0, None, 0, 0]
    example = _train()[0]
    assert answer_of(example, 1) == "刘晓华（广东工业大学教授） ||| 主讲课程 ||| 机械设计"
    assert answer_of(_train()[2], None) == EMPTY_ANSWER == " |||  ||| "
    assert EMPTY_ANSWER.split(" ||| ") == ["", "", ""]


TASK = TaskSpec("toy-kbqa", "kbqa_triple", "toy", "unused:reader")
SMALL = {"tiny_hidden_size": 32, "tiny_num_layers": 1, "tiny_num_heads": 2, "tiny_intermediate_size": 64,
         "max_length": 32, "progress": False}


def test_an_untrained_learner_answers_one_of_each_questions_candidates_or_nothing() -> None:
    pytest.importorskip("torch")
    from clue_models_hf.factory import create_tiny
    from clue_models_hf.kbqa_learner import KbqaLearner

    learner = create_tiny(None, TASK, SMALL)
    assert isinstance(learner, KbqaLearner)
    examples = _train()
    predictions = learner.predict(examples)
    assert [p.id for p in predictions] == [e.id for e in examples]
    for example, prediction in zip(examples, predictions):
        allowed = {" ||| ".join(c) for c in example.candidates} or {EMPTY_ANSWER}
        assert prediction.value in allowed, (example, prediction)


def test_without_any_candidate_the_plan_is_refused_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from clue_models_hf.factory import create_tiny

    learner = create_tiny(None, TASK, SMALL)
    bare = [KbqaExample(0, "谁唱的风不息？", ("风不息", "歌手", "郭富城"))]
    with pytest.raises(ClueError, match=r"kb=Knowledge\.txt") as refused:
        learner.check_plan({"train": bare, "dev": bare})
    assert "\n" not in str(refused.value)
    learner.check_plan({"train": _train()[:1], "dev": bare})  # one question with candidates is enough
    learner.check_plan({"dev": _train()[:1]})  # --no-train: dev alone
    # candidates, yet no training question's gold among them: nothing to train on, refused as early
    lacking = [_train()[3], bare[0]]
    with pytest.raises(ClueError, match=r"none of the 2 training questions has its gold triple among"):
        learner.check_plan({"train": lacking, "dev": _train()[:1]})

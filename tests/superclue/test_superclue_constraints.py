"""Every verifiable instruction, positive and negative, on Chinese text; strict against loose."""

from __future__ import annotations

import pytest

from clue_tasks_superclue.constraints import TYPES, characters, check_all, check_one, loose_variants, problem

# (constraint, an answer that follows it, an answer that does not)
CASES = [
    ({"type": "max_chars", "value": 10}, "长城很长。\n非常 壮观", "长城是中国古代的军事防御工程。"),
    ({"type": "min_chars", "value": 8}, "西湖的景色十分美丽", "西湖很美"),
    ({"type": "required_words", "words": ["竹子", "四川"]}, "大熊猫生活在四川，爱吃竹子。", "大熊猫生活在四川。"),
    ({"type": "forbidden_words", "words": ["味精"]}, "最后加盐调味即可。", "最后加一点味精。"),
    ({"type": "json"}, '{"北京": "京", "上海": "沪"}', "北京的简称是京"),
    ({"type": "list_items", "value": 3}, "- 多听\n- 多说\n- 多读", "- 多听\n- 多说"),
    ({"type": "list_items", "value": 2}, "1. 多听\n2、多说\n  - 细节不算", "1. 多听\n2. 多说\n3. 多读"),
    ({"type": "numbered_lines", "value": 3}, "1. 打蛋\n2. 炒蛋\n3. 出锅", "1. 打蛋\n3. 炒蛋\n4. 出锅"),
    ({"type": "numbered_lines"}, "1、打蛋\n2、炒蛋", "打蛋\n1. 炒蛋"),
    ({"type": "title"}, "《春天》\n春天来了。", "春天\n春天来了。"),
    ({"type": "title"}, "## 春天的早晨\n阳光洒满大地。", "#春天\n没有空格的井号不是标题。"),
    ({"type": "starts_with", "value": "大熊猫是"}, "  大熊猫是中国的国宝。", "中国的国宝是大熊猫。"),
    ({"type": "ends_with", "value": "值得一读！"}, "《平凡的世界》值得一读！\n", "值得一读！这是一本好书。"),
    ({"type": "chinese_only"}, "这是一本好书，共有3卷。", "这是一本好书，OK。"),
    ({"type": "chinese_only"}, "全中文回答。", "全角字母ＡＢ也不行。"),
    ({"type": "no_commas"}, "长城是古代的防御工程。它很长。", "长城很长，也很古老。"),
    ({"type": "no_commas"}, "没有逗号。", "half-width, too"),
    ({"type": "end_punctuation"}, "春天来了。", "春天来了！"),
    ({"type": "end_punctuation", "value": "。！"}, "春天来了！", "春天来了"),
    ({"type": "paragraphs", "value": 2}, "第一段。\n\n第二段。", "第一段。\n第二段。"),
]


@pytest.mark.parametrize(("constraint", "good", "bad"), CASES, ids=[f"{c['type']}-{i}" for i, (c, _, _) in
                                                                    enumerate(CASES)])
def test_each_constraint_passes_and_fails(constraint, good, bad) -> None:
    assert problem(constraint) is None
    assert check_one(good, constraint)["strict"] is True
    assert check_one(bad, constraint)["strict"] is False


def test_every_type_has_a_case() -> None:
    assert {c["type"] for c, _, _ in CASES} == set(TYPES)


def test_characters_are_non_whitespace() -> None:
    assert characters("长城 很长\n\t。A1") == 7


def test_an_empty_answer_follows_no_instruction() -> None:
    for constraint in ({"type": "forbidden_words", "words": ["味精"]}, {"type": "max_chars", "value": 5},
                       {"type": "no_commas"}):
        assert check_one("  \n", constraint) == {"type": constraint["type"], "strict": False, "loose": False}


def test_loose_forgives_chatter_and_markdown_strict_does_not() -> None:
    fenced = "```json\n{\"北京\": \"京\"}\n```"
    assert check_one(fenced, {"type": "json"}) == {"type": "json", "strict": False, "loose": True}
    chatter = "好的，以下是JSON：\n{\"北京\": \"京\"}"
    assert check_one(chatter, {"type": "json"}) == {"type": "json", "strict": False, "loose": True}
    # one line of chatter and a fence as well is beyond IFEval's variants (one first line removed)
    assert check_one("好的：\n" + fenced, {"type": "json"})["loose"] is False
    bold = "**大熊猫是**国宝。"
    assert check_one(bold, {"type": "starts_with", "value": "大熊猫是"}) == {
        "type": "starts_with", "strict": False, "loose": True}
    ending = "值得一读！\n希望对你有帮助"
    assert check_one(ending, {"type": "ends_with", "value": "值得一读！"})["loose"] is True
    # loose is not "anything goes": a wrong answer stays wrong in every variant
    assert check_one("长城很长，也很古老", {"type": "no_commas"})["loose"] is False


def test_loose_variants_are_ifevals_eight_at_most() -> None:
    variants = loose_variants("好的\n**正文**\n# 标题\n谢谢")
    assert "好的\n**正文**\n# 标题\n谢谢" in variants
    assert "**正文**\n# 标题" in variants and "正文\n标题" in variants
    assert len(variants) <= 8


def test_check_all_needs_every_constraint() -> None:
    constraints = [{"type": "max_chars", "value": 30}, {"type": "end_punctuation"}]
    assert check_all("西湖很美。", constraints)["strict"] is True
    result = check_all("西湖很美", constraints)
    assert result["strict"] is False and [c["strict"] for c in result["checks"]] == [True, False]


@pytest.mark.parametrize(("constraint", "field", "words"), [
    ({"type": "max_words"}, "type", "unknown constraint type 'max_words' (known: max_chars"),
    ({"value": 3}, "type", "missing"),
    ({"type": "max_chars"}, "value", "missing"),
    ({"type": "max_chars", "value": "50"}, "value", "positive integer"),
    ({"type": "max_chars", "value": True}, "value", "positive integer"),
    ({"type": "required_words", "words": "竹子"}, "words", "list of non-empty strings"),
    ({"type": "required_words", "words": []}, "words", "list of non-empty strings"),
    ({"type": "starts_with", "value": ""}, "value", "non-empty string"),
    ({"type": "json", "value": 1}, "value", "takes no parameter"),
])
def test_malformed_constraints_are_named(constraint, field, words) -> None:
    found = problem(constraint)
    assert found is not None
    assert found[0] == field and words in found[1]

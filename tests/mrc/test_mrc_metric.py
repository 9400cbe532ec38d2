"""The official CMRC2018 EM/F1: one test per quirk, expected values worked out by hand."""

from __future__ import annotations

import pytest

from clue_core.errors import DataError
from clue_core.examples import Prediction, SpanExample
from clue_tasks_mrc.cmrc_metric import (
    compute,
    exact_match,
    f1_score,
    longest_common_run,
    mixed_segmentation,
    score,
)


def test_lower_case_and_strip():
    assert exact_match(["ABC公司"], "  abc公司\n") == 1.0
    assert f1_score(["ABC公司"], "abc公司") == 1.0


def test_punctuation_removed_for_em_and_skipped_for_f1():
    assert exact_match(["《晨雾》"], "晨雾") == 1.0
    assert exact_match(["光荣和ω-force"], "光荣和ωforce") == 1.0
    # skipped without ending the run: "ab-cd" is the single token "abcd"
    assert mixed_segmentation("ab-cd") == ("abcd",)
    assert f1_score(["ab cd"], "ab-cd") == 0.0


def test_two_character_ellipsis_entry_never_matches():
    # "……" is one entry of the official list, compared per character: "…" stays.
    assert exact_match(["等等"], "等等……") == 0.0
    # tokens 等 等 … (the run "……" is one NLTK token): LCS 2, P 2/3, R 1 -> F1 0.8
    assert mixed_segmentation("等等……") == ("等", "等", "……")
    assert f1_score(["等等"], "等等……") == pytest.approx(0.8)


def test_right_quote_dropped_left_quote_kept():
    assert exact_match(["北京"], "北京’") == 1.0
    assert exact_match(["北京"], "‘北京") == 0.0
    # ‘ is a token of its own: 3 tokens, LCS 2 -> 2*(2/3*1)/(2/3+1) = 0.8
    assert f1_score(["北京"], "‘北京") == pytest.approx(0.8)


def test_inner_space_breaks_em_but_not_f1():
    assert exact_match(["北京"], "北 京") == 0.0
    assert f1_score(["北京"], "北 京") == 1.0


def test_all_punctuation_prediction_is_em_but_no_f1():
    assert exact_match(["。"], "，") == 1.0
    assert f1_score(["。"], "，") == 0.0


def test_chinese_range_ends_at_9fa5():
    assert mixed_segmentation("\u9fa5\u9fa5") == ("\u9fa5", "\u9fa5")
    assert mixed_segmentation("\u9fa6\u9fa6") == ("\u9fa6\u9fa6",)


def test_longest_common_contiguous_run_not_bag_of_tokens():
    assert longest_common_run(list("甲乙丙丁"), list("甲丙乙丁")) == 1
    # bag-of-tokens F1 would be 1.0; contiguous run 1 -> P = R = 1/4 -> F1 0.25
    assert f1_score(["甲乙丙丁"], "甲丙乙丁") == pytest.approx(0.25)


def test_best_gold_answer_counts():
    golds = ["村雨城", "村雨城", "任天堂游戏谜之村雨城"]
    # vs 村雨城: LCS 3, P 3/5, R 1 -> 0.75; vs the long one: LCS 5, P 1, R 1/2 -> 2/3
    assert f1_score(golds, "谜之村雨城") == pytest.approx(0.75)
    assert exact_match(golds, "任天堂游戏谜之村雨城") == 1.0


def test_numbers_are_nltk_tokens_between_chinese_characters():
    assert mixed_segmentation("1963年被任") == ("1963", "年", "被", "任")
    # gold 1963 年; LCS 2, P 1/2, R 1 -> 2/3
    assert f1_score(["1963年"], "1963年被任") == pytest.approx(2 / 3)


def test_sentence_end_inside_a_run_splits_the_period():
    # official tokens: hello . world (Punkt ends a sentence after "hello.")
    assert mixed_segmentation("Hello. World") == ("hello", ".", "world")
    # LCS 1, P 1, R 1/3 -> 0.5 (0.0 if "hello." stayed one token)
    assert f1_score(["Hello. World"], "hello") == pytest.approx(0.5)


def test_missing_prediction_counts_zero_and_average_is_the_mean():
    result = score([["北京"], ["上海"], ["广州市"]], ["北京", None, "广州"])
    # EM: 1 + 0 + 0 = 1/3; F1: 1 + 0 + (LCS 2, P 1, R 2/3 -> 0.8) = 1.8/3
    assert result["em"] == pytest.approx(100 / 3)
    assert result["f1"] == pytest.approx(60.0)
    assert result["average"] == pytest.approx((100 / 3 + 60) / 2)


def test_compute_aligns_predictions_and_refuses_placeholder_golds():
    examples = [
        SpanExample("q1", "北京是首都", "?", answers=(("北京", 0),)),
        SpanExample("q2", "上海", "?", answers=(("上海", 0), ("上海市", 0))),
    ]
    result = compute(examples, [Prediction("q1", "北京"), None])
    assert result.totals == {"em": 50.0, "f1": 50.0, "average": 50.0}
    assert result.per_example == {"em": [100.0, 0.0], "f1": [100.0, 0.0], "average": [100.0, 0.0]}
    with pytest.raises(DataError, match="q3"):
        compute([SpanExample("q3", "x", "?", answers=None)], [None])


def test_per_example_values_average_to_the_totals():
    examples = [
        SpanExample("q1", "北京", "?", answers=(("北京", 0),)),
        SpanExample("q2", "上海", "?", answers=(("上海", None),)),  # no offset: scored by text all the same
        SpanExample("q3", "广州市", "?", answers=(("广州市", 0),)),
    ]
    result = compute(examples, [Prediction("q1", "北京"), Prediction("q2", "上海"), Prediction("q3", "广州")])
    # q3: EM 0, F1 0.8 (LCS 2, P 1, R 2/3)
    assert result.per_example["em"] == [100.0, 100.0, 0.0]
    assert result.per_example["f1"] == [100.0, 100.0, pytest.approx(80.0)]
    assert result.per_example["average"] == [100.0, 100.0, pytest.approx(40.0)]
    for name, values in result.per_example.items():
        assert sum(values) / len(values) == pytest.approx(result.totals[name])
    assert result.totals == score([["北京"], ["上海"], ["广州市"]], ["北京", "上海", "广州"])

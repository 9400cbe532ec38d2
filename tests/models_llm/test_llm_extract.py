"""Answers out of Chinese generations; thinking stripped first; Traditional conversion."""

from __future__ import annotations

import importlib.util

import pytest

from clue_core.plugin import ClueError
from clue_models_llm.extract import (
    cut_at_stop,
    extract_choice,
    extract_label,
    extract_span,
    split_thinking,
    traditional_converter,
)

WORDS = ("不同", "相同")
OPTIONS = ("一半", "全部看完了", "还没开始看")
LETTERS = ("A", "B", "C")


@pytest.mark.parametrize(("answer", "expected"), [
    ("相同", 1), ("「不同」。", 0), ("答案是相同", 1), ("我认为答案：不同，因为……", 0), ("两句话意思相同。", 1),
    ("这两个问题不同，而非相同", 0), ("无法判断", None), ("", None),
])
def test_label_words(answer, expected) -> None:
    assert extract_label(answer, WORDS) == expected


def test_longest_label_word_wins_where_two_start_together() -> None:
    assert extract_label("打车软件类", ("打车", "打车软件")) == 1


@pytest.mark.parametrize(("answer", "expected"), [
    ("B", 1), ("B. 全部看完了", 1), ("（C）", 2), ("答案是A", 0), ("我选C。", 2), ("正确答案：B", 1),
    ("她只看了一半", 0), ("A和B都不对，应该选C", 2), ("全部看完了", 1), ("Both wrong", None), ("D", None),
])
def test_option_letters_and_texts(answer, expected) -> None:
    assert extract_choice(answer, OPTIONS, LETTERS) == expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("58平方公里", "58平方公里"), ("答案是：「白鹭湖」。", "白鹭湖"), ("\n 北京\n因为…", "北京"),
    ("：：：", None), ("", None),
])
def test_span_answers(answer, expected) -> None:
    assert extract_span(answer) == expected


def test_thinking_is_stripped_before_extraction() -> None:
    thinking, answer = split_thinking("<think>\n也许是A？不，是B。\n</think>\n\n答案是C")
    assert thinking == "也许是A？不，是B。" and extract_choice(answer, OPTIONS, LETTERS) == 2
    assert split_thinking("<think>想了很久还没想完") == ("想了很久还没想完", "")
    assert split_thinking("相同") == (None, "相同")


def test_stop_strings_apply_after_the_first_character() -> None:
    assert cut_at_stop("\n相同\n问题", ("\n",)) == "\n相同"
    assert cut_at_stop("相同。问题一：", ("问题",)) == "相同。"


@pytest.mark.skipif(not importlib.util.find_spec("opencc"), reason="OpenCC is not installed")
def test_traditional_conversion() -> None:
    assert traditional_converter()("这里面积约为58平方公里") == "這裡面積約為58平方公里"


def test_traditional_without_opencc_fails_in_one_line(monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_opencc(name, *args, **kwargs):
        if name == "opencc":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_opencc)
    with pytest.raises(ClueError, match="needs OpenCC: pip install opencc-python-reimplemented"):
        traditional_converter()

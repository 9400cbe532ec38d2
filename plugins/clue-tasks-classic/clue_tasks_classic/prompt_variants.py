"""Rewordings of the classic tasks' LLM prompts (``--set prompt_variants=all``): the same protocol, other words.

Each task's variants change one thing of its prompt (catalog.py) at a time, so the spread they cause
reads as the effect of a wording: ``plain`` a shorter instruction, ``fields`` other labels for the
template's fields, ``prefix`` the answer prefix ``答：`` instead of ``答案：``, and, where the labels
allow it, answer words of another shape (``yes_no``: 是/否 for 相同/不同; ``right_wrong``: 对/错 for
是/否; ``words``: 是/可能/否 for NLI's 蕴含/中立/矛盾). Plain data; no reader code is imported here.
"""

from __future__ import annotations

import dataclasses

from clue_core.plugin import Prompt, PromptVariant
from clue_tasks_classic import labels

PREFIX = PromptVariant("prefix", answer_prefix="答：")


def _choose(what: str, words: dict[str, str]) -> str:
    return f"{what}可选：{'、'.join(words.values())}。只回答其中一项。"


_NLI_WORDS = {"entailment": "蕴含", "neutral": "中立", "contradiction": "矛盾"}
NLI = (
    PromptVariant("plain", instruction="判断前提和假设的关系。" + _choose("关系", _NLI_WORDS)),
    PromptVariant("fields", instruction="判断句子二与句子一的关系：句子一成立时句子二一定成立为蕴含，一定不成立为矛盾，"
                  "无法确定为中立。" + _choose("关系", _NLI_WORDS),
                  template="句子一：{text}\n句子二：{text_pair}"),
    PromptVariant("words", instruction="已知前提成立，判断假设是否成立。回答“是”（一定成立）、“可能”（无法确定）"
                  "或“否”（一定不成立）。",
                  verbalizers={"entailment": "是", "neutral": "可能", "contradiction": "否"}),
    PREFIX,
)

_TNEWS = dict(labels.TNEWS_NAMES)
_IFLYTEK = dict(labels.IFLYTEK_DESCRIPTIONS)

VARIANTS: dict[str, tuple[PromptVariant, ...]] = {
    "afqmc": (
        PromptVariant("plain", instruction="两个问题是否同义？回答“相同”或“不同”。"),
        PromptVariant("fields", instruction="判断下面两句话的意思是否相同。回答“相同”或“不同”。",
                      template="句子一：{text}\n句子二：{text_pair}"),
        PromptVariant("yes_no", instruction="判断下面两个问题的意思是否相同。相同回答“是”，不同回答“否”。",
                      verbalizers={"0": "否", "1": "是"}),
        PREFIX,
    ),
    "tnews": (
        PromptVariant("plain", instruction="这条新闻属于什么类别？" + _choose("类别", _TNEWS)),
        PromptVariant("fields", template="标题：{text}"),
        PREFIX,
    ),
    "iflytek": (
        PromptVariant("plain", instruction="这是哪一类应用？" + _choose("类别", _IFLYTEK)),
        PromptVariant("fields", template="应用简介：{text}"),
        PREFIX,
    ),
    "ocnli": NLI,
    "cmnli": NLI,
    "diagnostics": NLI,
    "cluewsc2020": (
        PromptVariant("plain", instruction="句子中方括号[]里的代词指的是下划线_ _标出的词语吗？回答“是”或“否”。"),
        PromptVariant("right_wrong", instruction="下面的句子中，用方括号[]标出的代词指代用下划线_ _标出的词语。"
                      "这种说法对吗？回答“对”或“错”。", verbalizers={"false": "错", "true": "对"}),
        PREFIX,
    ),
    "csl": (
        PromptVariant("plain", instruction="这些关键词都是这篇摘要的关键词吗？回答“是”或“否”。"),
        PromptVariant("fields", template="论文摘要：{text_pair}\n论文关键词：{text}"),
        PromptVariant("right_wrong", instruction="下面给出一篇论文的摘要和一组关键词。"
                      "“这些关键词全部都是这篇摘要的关键词”，这种说法对吗？回答“对”或“错”。",
                      verbalizers={"0": "错", "1": "对"}),
        PREFIX,
    ),
}


def with_variants(task: str, prompt: object) -> object:
    """``prompt`` carrying the task's variants (as it is where the task has none, or no prompt)."""
    if not isinstance(prompt, Prompt) or task not in VARIANTS:
        return prompt
    return dataclasses.replace(prompt, variants=VARIANTS[task])

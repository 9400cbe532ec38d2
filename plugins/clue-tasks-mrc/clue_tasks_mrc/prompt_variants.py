"""Rewordings of the reading-comprehension tasks' LLM prompts (``--set prompt_variants=all``).

The same protocol in other words, one change at a time, so the spread they cause reads as the effect
of a wording: ``plain`` a shorter instruction, ``fields`` other labels for the template's fields,
``prefix`` the answer prefix ``答：`` instead of ``答案：``. DRCD's are in Traditional characters, as
its prompt is. Plain data (hooks.py imports it).
"""

from __future__ import annotations

from clue_core.plugin import PromptVariant

PREFIX = PromptVariant("prefix", answer_prefix="答：")

SPAN = (
    PromptVariant("plain", instruction="根据文章回答问题，答案从文章中原文摘录。"),
    PromptVariant("fields", template="背景：{context}\n提问：{question}"),
    PREFIX,
)
DRCD = (
    PromptVariant("plain", instruction="根據文章回答問題，答案從文章中原文摘錄。"),
    PromptVariant("fields", template="背景：{context}\n提問：{question}"),
    PREFIX,
)
CHID = (
    PromptVariant("plain", instruction="选出填入空白处“____”最合适的成语（“□□□□”是其他空白，不用填写）。"),
    PromptVariant("fields", template="短文：{context}\n选项：\n{choices}"),
    PREFIX,
)
C3 = (
    PromptVariant("plain", instruction="根据材料选择正确答案。"),
    PromptVariant("fields", template="文本：{context}\n提问：{question}\n候选：\n{choices}"),
    PREFIX,
)

"""Rewordings of SuperCLUE's closed-form LLM prompt (``--set prompt_variants=all``).

``plain`` a shorter instruction, ``fields`` other labels for the question and options, ``prefix`` the
answer prefix ``答：`` instead of ``答案：``. The open questions (``superclue``, ``superclue-cpif``) are
asked exactly as their files have them, and judged: they have no variants.
"""

from __future__ import annotations

from clue_core.plugin import PromptVariant

CLOSE = (
    PromptVariant("plain", instruction="选出正确答案。"),
    PromptVariant("fields", template="题目：{question}\n候选项：\n{choices}"),
    PromptVariant("prefix", answer_prefix="答："),
)

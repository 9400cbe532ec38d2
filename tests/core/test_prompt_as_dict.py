"""``Prompt.as_dict`` and ``PromptVariant.as_dict`` (``clue_core.plugin``) print any Mapping a plugin gives.

A frozen spec's natural read-only mapping is a ``MappingProxyType``: ``as_dict`` printed it as a dict
while the prompt's types lived in ``clue_core.specs`` (their ``as_dict`` walked the fields); when they
moved to ``clue_core.prompt_variants`` (issue 30) it became ``dataclasses.asdict``, which deep-copies
and raises ``TypeError: cannot pickle 'mappingproxy' object``.
"""

from __future__ import annotations

from types import MappingProxyType

from clue_core.plugin import Prompt, PromptVariant, TaskSpec


def test_a_read_only_mapping_prints_as_a_dict_as_the_task_spec_prints_it() -> None:
    variant = PromptVariant("short", verbalizers=MappingProxyType({"0": "不", "1": "对"}))
    prompt = Prompt("判断", "{text}", verbalizers=MappingProxyType({"0": "否", "1": "是"}), variants=(variant,))
    printed = prompt.as_dict()
    assert printed == {"instruction": "判断", "template": "{text}", "verbalizers": {"0": "否", "1": "是"},
                       "answer_prefix": "答案：", "parse": None, "render": None, "answer": None,
                       "variants": [{"name": "short", "instruction": None, "template": None,
                                     "verbalizers": {"0": "不", "1": "对"}, "answer_prefix": None}]}
    assert type(printed["verbalizers"]) is dict and variant.as_dict() == printed["variants"][0]
    task = TaskSpec("t", "classification", "a task", "m:read", prompt=prompt)
    assert task.as_dict()["prompt"] == printed

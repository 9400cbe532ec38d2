"""OpenCompass 0.5.4's configs for AFQMC, CMNLI and OCNLI, transcribed (``--set protocol=opencompass:<config>``).

Plain data, cheap to import (the hooks declare the ``protocol`` setting from it); read by
clue-models-llm (``clue_models_llm.protocols`` says what the keys mean); OpenCompass is never
imported. A config's label keys are this plugin's label strings (AFQMC's ``0``/``1`` are ``"0"``/``"1"``);
the ``fields`` are the columns of its dataset reader (``sentence1``, ``sentence2``), in its
``input_columns`` order. A ``gen`` config's letters map to labels as its V2 reader maps them
(``AFQMCDatasetV2``: A ``0``, B ``1``; ``CMNLIDatasetV2``: A entailment, B contradiction, C neutral).
"""

from __future__ import annotations

from typing import Any

from clue_core.plugin import Setting

_SOURCE = "OpenCompass 0.5.4 opencompass/configs/datasets/"
_FIELDS = "clue_tasks_classic.presets:pair_fields"


def pair_fields(example: Any) -> dict[str, str]:
    """HFDataset's / CMNLIDataset's columns of a sentence pair."""
    return {"sentence1": example.text, "sentence2": example.text_pair or ""}


def _rounds(human: str, answers: dict[str, str]) -> dict[str, tuple[tuple[str, str], ...]]:
    return {label: (("HUMAN", human), ("BOT", word)) for label, word in answers.items()}


def _ppl(source: str, templates: dict[str, Any]) -> dict[str, Any]:
    return {"source": _SOURCE + source, "inferencer": "ppl", "fields": _FIELDS, "score": "mean_all",
            "evaluator": "acc", "templates": templates}


def _gen(source: str, prompt: str, answers: dict[str, str]) -> dict[str, Any]:
    return {"source": _SOURCE + source, "inferencer": "gen", "fields": _FIELDS, "evaluator": "acc",
            "postprocess": "first_capital", "answers": answers, "template": (("HUMAN", prompt),)}


_PAIR = "语句一：“{sentence1}”\n语句二：“{sentence2}”\n"
_NLI_FDC6DE = _rounds(_PAIR + "请问这两句话是什么关系？",
                      {"contradiction": "矛盾", "entailment": "蕴含", "neutral": "无关"})
_NLI_EF69E7 = {
    "contradiction": (("HUMAN", "阅读文章：{sentence1}\n根据上文，回答如下问题：{sentence2}？"), ("BOT", "错")),
    "entailment": (("HUMAN", "阅读文章：{sentence1}\n根据上文，回答如下问题：{sentence2}？"), ("BOT", "对")),
    "neutral": (("HUMAN", "如果{sentence1}为真，那么{sentence2}也为真吗？"), ("BOT", "可能")),
}
_NLI_98DD6E = {
    "contradiction": (("", "阅读文章：{sentence1}\n根据上文，回答如下问题： {sentence2}？\n答：错"),),
    "entailment": (("", "阅读文章：{sentence1}\n根据上文，回答如下问题： {sentence2}？\n答：对"),),
    "neutral": (("", "如果{sentence1}为真，那么{sentence2}也为真吗?可能"),),
}
_NLI_LETTERS = {"A": "entailment", "B": "contradiction", "C": "neutral"}
_AFQMC_HUMAN = _PAIR + "语句一与语句二是关于蚂蚁金融产品的疑问，两者所询问的内容是否完全一致？"


def _nli(task: str, gen: str, gen_prompt: str) -> dict[str, dict[str, Any]]:
    folder = f"CLUE_{task}/CLUE_{task}"
    return {
        f"opencompass:CLUE_{task}_ppl_fdc6de": _ppl(f"{folder}_ppl_fdc6de.py (CLUE_{task}_ppl)", _NLI_FDC6DE),
        f"opencompass:CLUE_{task}_ppl_ef69e7": _ppl(f"{folder}_ppl_ef69e7.py", _NLI_EF69E7),
        f"opencompass:CLUE_{task}_ppl_98dd6e": _ppl(f"{folder}_ppl_98dd6e.py", _NLI_98DD6E),
        f"opencompass:CLUE_{task}_gen_{gen}": _gen(f"{folder}_gen_{gen}.py (CLUE_{task}_gen)", gen_prompt,
                                                  _NLI_LETTERS),
    }


PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "afqmc": {
        "opencompass:CLUE_afqmc_ppl_6507d7": _ppl("CLUE_afqmc/CLUE_afqmc_ppl_6507d7.py (CLUE_afqmc_ppl)",
                                                  _rounds(_AFQMC_HUMAN, {"0": "不完全一致", "1": "完全一致"})),
        "opencompass:CLUE_afqmc_ppl_378c5b": _ppl("CLUE_afqmc/CLUE_afqmc_ppl_378c5b.py",
                                                  _rounds("“{sentence1}”与“{sentence2}”不同还是相似？",
                                                          {"0": "不同。", "1": "相似"})),
        "opencompass:CLUE_afqmc_ppl_7b0c1e": _ppl("CLUE_afqmc/CLUE_afqmc_ppl_7b0c1e.py",
                                                  {"0": (("", "{sentence1},{sentence2}不同。"),),
                                                   "1": (("", "{sentence1},{sentence2}相似。"),)}),
        "opencompass:CLUE_afqmc_gen_901306": _gen("CLUE_afqmc/CLUE_afqmc_gen_901306.py (CLUE_afqmc_gen)",
                                                  _AFQMC_HUMAN + "\nA. 不完全一致\nB. 完全一致\n"
                                                  "请从“A”，“B”中进行选择。\n答：",
                                                  {"A": "0", "B": "1"}),
    },
    "cmnli": _nli("cmnli", "1abf97", _PAIR + "请问这两句话是什么关系？\nA. 蕴含\nB. 矛盾\nC. 无关\n"
                                             "请从“A”，“B”，“C”中进行选择。\n答："),
    "ocnli": _nli("ocnli", "c4cb6c", _PAIR + "请问这两句话是什么关系？\nA. 蕴含\n B. 矛盾\n C. 无关\n"
                                             "请从“A”，“B”，“C”中进行选择。\n答："),
}

for _task in ("cmnli", "ocnli"):  # the second gen config of each: CMNLIDatasetV2's letters too
    PRESETS[_task][f"opencompass:CLUE_{_task}_gen_51e956"] = _gen(
        f"CLUE_{_task}/CLUE_{_task}_gen_51e956.py", "阅读文章：{sentence1}\n根据上文，回答如下问题：{sentence2}\n"
        "A. 对\nB. 错\nC. 可能\n请从“A”，“B”，“C”中进行选择。\n答：", _NLI_LETTERS)


def protocol_setting(task: str) -> Setting:
    """The task's ``protocol`` setting: clue-core's own prompt or one of its presets (clue-models-llm reads it)."""
    return Setting("protocol", str, "clue-core", "language models: whose protocol the task is asked under: "
                   "clue-core (its own prompt) or an OpenCompass config reproduced (clue_tasks_classic.presets)",
                   choices=("clue-core", *PRESETS.get(task, {})), report=True, model_reads=True)


def task_settings(task: str) -> tuple[Setting, ...]:
    """The settings a task's spec declares for its presets: ``protocol`` where it has any."""
    return (protocol_setting(task),) if task in PRESETS else ()

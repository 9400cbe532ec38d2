"""OpenCompass 0.5.4's configs for C3 and CMRC2018, transcribed (``--set protocol=opencompass:<config>``).

Plain data, cheap to import (the hooks declare the ``protocol`` setting from it). Each preset is
read by clue-models-llm (``clue_models_llm.protocols`` says what the keys mean); OpenCompass is
never imported. The ``fields`` functions turn this plugin's examples into the columns the
config's dataset reader makes (``opencompass/datasets/c3.py``, ``cmrc.py``), in its
``input_columns`` order.
"""

from __future__ import annotations

from typing import Any

from clue_core.plugin import Setting

_SOURCE = "OpenCompass 0.5.4 opencompass/configs/datasets/"
_PACKAGE = "clue_tasks_mrc.presets"


def c3_fields(example: Any) -> dict[str, str]:
    """C3Dataset: the turns joined by a space (this plugin's reader joins them by a newline); fewer than four
    choices padded with the first (the padded copies tie with it, and the first of equal losses wins)."""
    choices = list(example.choices) + [example.choices[0]] * max(0, 4 - len(example.choices))
    return {"question": example.question, "content": example.context.replace("\n", " "),
            **{f"choice{i}": choices[i] for i in range(4)}, "choices": str(choices)}


def c3_v2_fields(example: Any) -> dict[str, str]:
    """C3Dataset_V2 (the gen configs): the turns joined with nothing, missing choices '[NULL]'."""
    choices = list(example.choices) + ["[NULL]"] * max(0, 4 - len(example.choices))
    return {"content": example.context.replace("\n", ""), "question": example.question,
            **{f"choice{i}": choices[i] for i in range(4)}}


def cmrc_fields(example: Any) -> dict[str, str]:
    return {"question": example.question, "context": example.context}


_C3_HUMAN = "文章：{content}\n问题：{question}"
_CMRC_PROMPT = ("根据文章回答问题。你的答案应该尽可能简练，请以 ‘答案是’ 开头的句式作答。\n"
                "文章：{context}\n问：{question}\n答：")

#: The three other gen configs CMRC and DRCD share (the same templates; EMEvaluator, no post-processor).
_SPAN_VARIANTS = {
    "3749cd": (("HUMAN", "文章：{context}\n根据上文，回答如下问题：{question}"), ("BOT", "答：")),
    "8484b9": (("", "文章：{context}\n根据上文，回答如下问题： {question}\n答："),),
    "941108": (("HUMAN", "文章：{context}\n根据上文，回答如下问题：\n{question}\n答："),),
}


def _variants(task: str, presets: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``presets`` and the task's three other gen configs (``CLUE_<task>_gen_<hash>``)."""
    more = {f"opencompass:CLUE_{task}_gen_{key}": {
        "source": f"{_SOURCE}CLUE_{task}/CLUE_{task}_gen_{key}.py", "inferencer": "gen",
        "fields": f"{_PACKAGE}:cmrc_fields", "evaluator": "em", "template": template,
    } for key, template in _SPAN_VARIANTS.items()}
    return {**presets, **more}


PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "c3": {
        "opencompass:CLUE_C3_ppl_e24a31": {
            "source": _SOURCE + "CLUE_C3/CLUE_C3_ppl_e24a31.py (CLUE_C3_ppl)",
            "inferencer": "ppl", "fields": f"{_PACKAGE}:c3_fields", "score": "mean_all", "evaluator": "acc",
            "templates": {i: (("HUMAN", _C3_HUMAN), ("BOT", f"答案：{{choice{i}}}")) for i in range(4)},
        },
        "opencompass:CLUE_C3_ppl_56b537": {
            "source": _SOURCE + "CLUE_C3/CLUE_C3_ppl_56b537.py",
            "inferencer": "ppl", "fields": f"{_PACKAGE}:c3_fields", "score": "mean_all", "evaluator": "acc",
            "templates": {i: (("", f"文章：{{content}}\n问题：{{question}}\n答案：{{choice{i}}}"),) for i in range(4)},
        },
        "opencompass:CLUE_C3_gen_8c358f": {
            "source": _SOURCE + "CLUE_C3/CLUE_C3_gen_8c358f.py (CLUE_C3_gen)",
            "inferencer": "gen", "fields": f"{_PACKAGE}:c3_v2_fields", "evaluator": "acc",
            "postprocess": "first_capital", "answers": {"A": 0, "B": 1, "C": 2, "D": 3},
            "template": (("HUMAN", "{content}\n问：{question}\nA. {choice0}\nB. {choice1}\nC. {choice2}\n"
                                   "D. {choice3}\n请从“A”，“B”，“C”，“D”中进行选择。\n答："),),
        },
    },
    "cmrc2018": {
        "opencompass:CLUE_CMRC_gen_1bd3c8": {
            "source": _SOURCE + "CLUE_CMRC/CLUE_CMRC_gen_1bd3c8.py (CLUE_CMRC_gen)",
            "inferencer": "gen", "fields": f"{_PACKAGE}:cmrc_fields", "evaluator": "em",
            "postprocess": "after_answer_is",  # OpenCompass's cmrc_postprocess
            "template": (("HUMAN", _CMRC_PROMPT),),
        },
    },
    "drcd": _variants("DRCD", {  # DRCDDataset: question, context (Traditional Chinese, as in the file); EMEvaluator
        "opencompass:CLUE_DRCD_gen_1bd3c8": {
            "source": _SOURCE + "CLUE_DRCD/CLUE_DRCD_gen_1bd3c8.py (CLUE_DRCD_gen)",
            "inferencer": "gen", "fields": f"{_PACKAGE}:cmrc_fields", "evaluator": "em",
            "postprocess": "after_answer_is",  # OpenCompass's drcd_postprocess
            "template": (("HUMAN", _CMRC_PROMPT),),
        },
    }),
}
PRESETS["cmrc2018"] = _variants("CMRC", PRESETS["cmrc2018"])


def protocol_setting(task: str) -> Setting:
    """The task's ``protocol`` setting: clue-core's own prompt or one of its presets (clue-models-llm reads it)."""
    return Setting("protocol", str, "clue-core", "language models: whose protocol the task is asked under: "
                   "clue-core (its own prompt) or an OpenCompass config reproduced (clue_tasks_mrc.presets)",
                   choices=("clue-core", *PRESETS.get(task, {})), report=True, model_reads=True)


def task_settings(task: str) -> tuple[Setting, ...]:
    """The settings a task's spec declares for its presets: ``protocol`` where it has any."""
    return (protocol_setting(task),) if task in PRESETS else ()

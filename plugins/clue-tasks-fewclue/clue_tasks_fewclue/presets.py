"""OpenCompass 0.5.4's FewCLUE configs, transcribed (``--set protocol=opencompass:<config>``).

Plain data, cheap to import (the hooks declare the ``protocol`` setting from it); read by
clue-models-llm (``clue_models_llm.protocols`` says what the keys mean); OpenCompass is never
imported. Label keys are this plugin's label strings; the ``fields`` are the columns of the
config's dataset reader, in its ``input_columns`` order. TNEWS' label words are the
``label_desc2`` names ``TNewsDataset`` gives each ``label_desc`` (its ``TNewsDatasetV2`` letters
follow the same order); CLUEWSC's text comes back from this plugin's marked input
(``_noun_`` and ``[pronoun]``, see :mod:`clue_tasks_fewclue.wsc`).
"""

from __future__ import annotations

import re
from typing import Any

from clue_core.plugin import Setting
from clue_tasks_fewclue.labels import TNEWS_DESCRIPTIONS

_SOURCE = "OpenCompass 0.5.4 opencompass/configs/datasets/"
_PACKAGE = "clue_tasks_fewclue.presets"
_CHID_BLANK = "____"  # clue_tasks_fewclue.chid.BLANK (not imported: this module stays cheap)
_NOUN, _PRONOUN = re.compile(r"_(.+?)_"), re.compile(r"\[(.+?)\]")

#: TNewsDataset's ``label_desc`` → ``label_desc2``, in its (and TNewsDatasetV2's letters') order.
TNEWS_TARGETS = {
    "news_agriculture": "农业新闻", "news_travel": "旅游新闻", "news_game": "游戏新闻", "news_tech": "科技类别公司新闻",
    "news_sports": "体育类别新闻", "news_edu": "初升高教育新闻", "news_entertainment": "娱乐圈新闻",
    "news_finance": "投资资讯", "news_military": "军事类别常识", "news_car": "车辆新闻", "news_house": "楼市新闻",
    "news_world": "环球不含中国类别新闻", "news_culture": "书籍文化历史类别新闻", "news_story": "故事类别新闻",
    "news_stock": "股票市场类别新闻",
}
_TNEWS_LABEL = {desc: label for label, desc in TNEWS_DESCRIPTIONS.items()}
_TNEWS_ORDER = tuple(_TNEWS_LABEL[desc] for desc in TNEWS_TARGETS)  # the config's label order


def _tnews_word(label: str) -> str:
    """The ``label_desc2`` word TNewsDataset gives this plugin's label."""
    return TNEWS_TARGETS[TNEWS_DESCRIPTIONS[label]]


def sentence_fields(example: Any) -> dict[str, str]:
    return {"sentence": example.text}


def pair_fields(example: Any) -> dict[str, str]:
    return {"sentence1": example.text, "sentence2": example.text_pair or ""}


def cluewsc_fields(example: Any) -> dict[str, str]:
    """CluewscDataset's columns from the marked text: the marks removed, ``new_text`` the pronoun replaced."""
    marked = example.text
    noun, pronoun = _NOUN.search(marked), _PRONOUN.search(marked)
    span1 = noun.group(1) if noun else ""
    span2 = pronoun.group(1) if pronoun else ""
    text = _PRONOUN.sub(lambda m: m.group(1), _NOUN.sub(lambda m: m.group(1), marked, count=1), count=1)
    new_text = _NOUN.sub(lambda m: m.group(1), _PRONOUN.sub(span1, marked, count=1), count=1)
    return {"span1": span1, "span2": span2, "text": text, "new_text": new_text}


def chid_fields(example: Any) -> dict[str, str]:
    """CHIDDataset's ``content0``..``content6`` (each candidate put into the blank) and CHIDDatasetV2's
    ``content`` (the blank written ``______``) with ``A``..``G`` (the candidates); this plugin's reader
    writes the one ``#idiom#`` blank as ``____``."""
    parts = example.context.split(_CHID_BLANK, 1)
    fill = (lambda word: parts[0] + word + parts[1]) if len(parts) == 2 else (lambda word: example.context)
    fields = {f"content{i}": fill(choice) for i, choice in enumerate(example.choices)}
    fields["content"] = fill("______")
    fields.update({chr(ord("A") + i): choice for i, choice in enumerate(example.choices)})
    return fields


def csl_fields(example: Any) -> dict[str, str]:
    """CslDataset(V2)'s ``abst`` and ``keywords`` (the keyword list joined by '，'; this plugin's reader
    joins it by a space, and FewCLUE's keywords hold no space)."""
    return {"abst": example.text_pair or "", "keywords": "，".join(example.text.split(" "))}


def _ppl(source: str, fields: str, templates: dict[str, Any]) -> dict[str, Any]:
    return {"source": _SOURCE + source, "inferencer": "ppl", "fields": f"{_PACKAGE}:{fields}", "score": "mean_all",
            "evaluator": "acc", "templates": templates}


def _gen(source: str, fields: str, prompt: str, answers: dict[str, str]) -> dict[str, Any]:
    return {"source": _SOURCE + source, "inferencer": "gen", "fields": f"{_PACKAGE}:{fields}", "evaluator": "acc",
            "postprocess": "first_capital", "answers": answers, "template": (("HUMAN", prompt),)}


def _rounds(human: str, answers: dict[str, str]) -> dict[str, tuple[tuple[str, str], ...]]:
    return {label: (("HUMAN", human), ("BOT", word)) for label, word in answers.items()}


_WSC = "{text}\n此处，代词“{span2}“被用于指代“{span1}“吗?"
_WSC_EN = '{text}\nHere, is the pronoun "{span2}" used to mean "{span1}"'
_EPRSTMT = '内容： "{sentence}"。情绪分类：'
_TNEWS_OPTIONS = "\n".join(f"{chr(ord('A') + i)}. {word}" for i, word in enumerate(TNEWS_TARGETS.values()))
_TNEWS_RANGE = "，".join(f"“{chr(ord('A') + i)}”" for i in range(len(TNEWS_TARGETS)))
_PAIR = "语句一：“{sentence1}”\n语句二：“{sentence2}”\n"
_CSL_GEN = ("摘要是对论文内容不加注释和评论的简短陈述，要求扼要地说明研究工作的目的、研究方法和最终结论等。\n"
            "关键词是一篇学术论文的核心词汇，一般由一系列名词组成。关键词在全文中应有较高出现频率，且能起到帮助文献检索的作用。\n"
            "摘要：{abst}\n关键词：{keywords}\n请问上述关键词是否匹配摘要且符合要求？\nA. 否\nB. 是\n"
            "请从”A“，”B“中进行选择。\n答：")
_CHID_GEN = ("{content}\n请选择______处所填的词\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nE. {E}\nF. {F}\nG. {G}\n"
             "请从”A“，”B“，”C“，”D“，”E“，”F“，”G“中进行选择。答：")
_BUSTM_WORDS = {"0": "两句话说的毫不相关。", "1": "两句话说是的一个意思。"}
_OCNLI_ASK = "阅读文章：{sentence1}\n根据上文，回答如下问题：{sentence2}"

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "fewclue-cluewsc": {
        "opencompass:FewCLUE_cluewsc_ppl_868415": _ppl(
            "FewCLUE_cluewsc/FewCLUE_cluewsc_ppl_868415.py (FewCLUE_cluewsc_ppl)", "cluewsc_fields",
            _rounds(_WSC, {"false": "否", "true": "是"})),
        "opencompass:FewCLUE_cluewsc_ppl_12e4e0": _ppl(  # CluewscDataset: answer 1 for 'true', else 0
            "FewCLUE_cluewsc/FewCLUE_cluewsc_ppl_12e4e0.py", "cluewsc_fields",
            _rounds(_WSC_EN + "?", {"false": "No.", "true": "Yes."})),
        "opencompass:FewCLUE_cluewsc_ppl_4284a0": _ppl(
            "FewCLUE_cluewsc/FewCLUE_cluewsc_ppl_4284a0.py", "cluewsc_fields",
            {"false": (("", _WSC_EN + "? No."),), "true": (("", _WSC_EN + "? Yes."),)}),
        "opencompass:FewCLUE_cluewsc_gen_c68933": _gen(
            "FewCLUE_cluewsc/FewCLUE_cluewsc_gen_c68933.py (FewCLUE_cluewsc_gen)", "cluewsc_fields",
            "{text}\n此处，“{span2}”是否指代“{span1}“？\nA. 是\nB. 否\n请从”A“，”B“中进行选择。\n答：",
            {"A": "true", "B": "false"}),
    },
    "fewclue-eprstmt": {
        "opencompass:FewCLUE_eprstmt_ppl_f1e631": _ppl(
            "FewCLUE_eprstmt/FewCLUE_eprstmt_ppl_f1e631.py (FewCLUE_eprstmt_ppl)", "sentence_fields",
            _rounds(_EPRSTMT, {"Negative": "消极。", "Positive": "积极。"})),
        "opencompass:FewCLUE_eprstmt_ppl_1ce587": _ppl(  # its texts begin with a space
            "FewCLUE_eprstmt/FewCLUE_eprstmt_ppl_1ce587.py", "sentence_fields",
            {"Negative": (("", ' 内容： "{sentence}"。情绪分类：消极。'),),
             "Positive": (("", ' 内容： "{sentence}"。情绪分类：积极。'),)}),
        "opencompass:FewCLUE_eprstmt_gen_740ea0": _gen(
            "FewCLUE_eprstmt/FewCLUE_eprstmt_gen_740ea0.py (FewCLUE_eprstmt_gen)", "sentence_fields",
            '内容： "{sentence}"。请对上述内容进行情绪分类。\nA. 积极\nB. 消极\n请从”A“，”B“中进行选择。\n答：',
            {"A": "Positive", "B": "Negative"}),
    },
    "fewclue-tnews": {
        "opencompass:FewCLUE_tnews_ppl_d10e8a": _ppl(
            "FewCLUE_tnews/FewCLUE_tnews_ppl_d10e8a.py (FewCLUE_tnews_ppl)", "sentence_fields",
            _rounds("{sentence}\n上述内容属于什么新闻？",
                    {label: TNEWS_TARGETS[TNEWS_DESCRIPTIONS[label]] for label in _TNEWS_ORDER})),
        "opencompass:FewCLUE_tnews_ppl_7d1c07": _ppl(
            "FewCLUE_tnews/FewCLUE_tnews_ppl_7d1c07.py", "sentence_fields",
            {label: (("", f"{{sentence}}这篇新闻属于：{_tnews_word(label)}"),) for label in _TNEWS_ORDER}),
        "opencompass:FewCLUE_tnews_ppl_fff486": _ppl(
            "FewCLUE_tnews/FewCLUE_tnews_ppl_fff486.py", "sentence_fields",
            _rounds("以下内容属于什么新闻：{sentence}。", {label: _tnews_word(label) for label in _TNEWS_ORDER})),
        "opencompass:FewCLUE_tnews_gen_b90e4a": _gen(
            "FewCLUE_tnews/FewCLUE_tnews_gen_b90e4a.py (FewCLUE_tnews_gen)", "sentence_fields",
            f"{{sentence}}\n请判断上述内容属于什么新闻？\n{_TNEWS_OPTIONS}\n请从{_TNEWS_RANGE}中进行选择。\n答：",
            {chr(ord("A") + i): label for i, label in enumerate(_TNEWS_ORDER)}),
    },
    "fewclue-bustm": {
        "opencompass:FewCLUE_bustm_ppl_e53034": _ppl(
            "FewCLUE_bustm/FewCLUE_bustm_ppl_e53034.py (FewCLUE_bustm_ppl)", "pair_fields",
            _rounds(_PAIR + "请判断语句一和语句二说的是否是一个意思？",
                    _BUSTM_WORDS)),
        "opencompass:FewCLUE_bustm_ppl_4b16c0": _ppl(
            "FewCLUE_bustm/FewCLUE_bustm_ppl_4b16c0.py", "pair_fields",
            {label: (("SYSTEM", "请判断以下两句话说的是否是一个意思："), ("HUMAN", "{sentence1}，{sentence2}"),
                     ("BOT", word)) for label, word in _BUSTM_WORDS.items()}),
        "opencompass:FewCLUE_bustm_ppl_9ef540": _ppl(
            "FewCLUE_bustm/FewCLUE_bustm_ppl_9ef540.py", "pair_fields",
            {"0": (("", "{sentence1}。\n{sentence2}。\n两句话说的毫不相关。"),),
             "1": (("", "{sentence1}。\n{sentence2}。\n两句话说的一个意思。"),)}),
        "opencompass:FewCLUE_bustm_gen_634f41": _gen(  # AFQMCDatasetV2: label 'AB'[int(label)]
            "FewCLUE_bustm/FewCLUE_bustm_gen_634f41.py (FewCLUE_bustm_gen)", "pair_fields",
            _PAIR + "请判断语句一和语句二说的是否是一个意思？\nA. 无关\nB. 相关\n请从“A”，“B”中进行选择。\n答：",
            {"A": "0", "B": "1"}),
    },
    "fewclue-ocnli": {
        "opencompass:FewCLUE_ocnli_fc_ppl_c08300": _ppl(
            "FewCLUE_ocnli_fc/FewCLUE_ocnli_fc_ppl_c08300.py (FewCLUE_ocnli_fc_ppl)", "pair_fields",
            {"contradiction": (("", "阅读文章：{sentence1}\n根据上文，回答如下问题： {sentence2}？\n答：错"),),
             "entailment": (("", "阅读文章：{sentence1}\n根据上文，回答如下问题： {sentence2}？\n答：对"),),
             "neutral": (("", "如果{sentence1}为真，那么{sentence2}也为真吗?可能"),)}),
        "opencompass:FewCLUE_ocnli_fc_ppl_9e8b3d": _ppl(
            "FewCLUE_ocnli_fc/FewCLUE_ocnli_fc_ppl_9e8b3d.py", "pair_fields",
            {"contradiction": (("HUMAN", _OCNLI_ASK + "？"), ("BOT", "错")),
             "entailment": (("HUMAN", _OCNLI_ASK + "？"), ("BOT", "对")),
             "neutral": (("HUMAN", "如果{sentence1}为真，那么{sentence2}也为真吗？"), ("BOT", "可能"))}),
        "opencompass:FewCLUE_ocnli_fc_gen_f97a97": _gen(  # CMNLIDatasetV2: entailment A, contradiction B, neutral C
            "FewCLUE_ocnli_fc/FewCLUE_ocnli_fc_gen_f97a97.py (FewCLUE_ocnli_fc_gen)", "pair_fields",
            _OCNLI_ASK + "\nA. 对\nB. 错\nC. 可能\n请从“A”，“B”，“C”中进行选择。\n答：",
            {"A": "entailment", "B": "contradiction", "C": "neutral"}),
    },
    "fewclue-chid": {
        "opencompass:FewCLUE_chid_ppl_8f2872": _ppl(
            "FewCLUE_chid/FewCLUE_chid_ppl_8f2872.py (FewCLUE_chid_ppl)", "chid_fields",
            {i: (("HUMAN", f"以下句子是否通顺？\n{{content{i}}}"), ("BOT", "这个句子是通顺的。")) for i in range(7)}),
        "opencompass:FewCLUE_chid_ppl_acccb5": _ppl(
            "FewCLUE_chid/FewCLUE_chid_ppl_acccb5.py", "chid_fields",
            {i: (("", f"以下句子是否通顺？\n{{content{i}}}\n这个句子是通顺的。"),) for i in range(7)}),
        "opencompass:FewCLUE_chid_gen_0a29a2": _gen(  # CHIDDatasetV2: answer 'ABCDEFG'[answer]
            "FewCLUE_chid/FewCLUE_chid_gen_0a29a2.py (FewCLUE_chid_gen)", "chid_fields", _CHID_GEN,
            {chr(ord("A") + i): i for i in range(7)}),
    },
    "fewclue-csl": {
        "opencompass:FewCLUE_csl_ppl_841b62": _ppl(
            "FewCLUE_csl/FewCLUE_csl_ppl_841b62.py (FewCLUE_csl_ppl)", "csl_fields",
            {"0": (("", "摘要：{abst}"),), "1": (("", "摘要：{abst}\n关键词：{keywords}"),)}),
        "opencompass:FewCLUE_csl_ppl_769f8d": _ppl(
            "FewCLUE_csl/FewCLUE_csl_ppl_769f8d.py", "csl_fields",
            {"0": (("HUMAN", "摘要：{abst}"),), "1": (("HUMAN", "摘要：{abst}\n关键词：{keywords}"),)}),
        "opencompass:FewCLUE_csl_gen_28b223": _gen(  # CslDatasetV2: label 'AB'[int(label)]
            "FewCLUE_csl/FewCLUE_csl_gen_28b223.py (FewCLUE_csl_gen)", "csl_fields", _CSL_GEN, {"A": "0", "B": "1"}),
        "opencompass:FewCLUE_csl_gen_87f4a8": _gen(
            "FewCLUE_csl/FewCLUE_csl_gen_87f4a8.py", "csl_fields",
            "摘要：{abst}\n关键词：{keywords}\n上述关键词出现在学术期刊中是否恰当？\nA. 否\nB. 是\n"
            "请从”A“，”B“中进行选择。\n答：",
            {"A": "0", "B": "1"}),
    },
}


def protocol_setting(task: str) -> Setting:
    """The task's ``protocol`` setting: clue-core's own prompt or one of its presets (clue-models-llm reads it)."""
    return Setting("protocol", str, "clue-core", "language models: whose protocol the task is asked under: "
                   "clue-core (its own prompt) or an OpenCompass config reproduced (clue_tasks_fewclue.presets)",
                   choices=("clue-core", *PRESETS.get(task, {})), report=True, model_reads=True)


def task_settings(task: str) -> tuple[Setting, ...]:
    """The settings a task's spec declares for its presets: ``protocol`` where it has any."""
    return (protocol_setting(task),) if task in PRESETS else ()

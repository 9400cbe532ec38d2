"""Hook implementations of clue-tasks-ner; cheap to import (specs only, no reader or metric code).

The plugin declares the entity-spans kind itself (``clue_kinds``), so neither the kernel nor any other
plugin knows NER: model plugins run the kind by its name. The reader, kind checks, metric and
submission writer are named as ``"module:attr"`` strings and imported only when used. Everything comes
from the one public module, ``clue_core.plugin``.
"""

from __future__ import annotations

from clue_core.plugin import (
    DataSource,
    KindSpec,
    Leaderboard,
    MetricSpec,
    Prompt,
    PromptVariant,
    SubmissionWriterSpec,
    TaskSpec,
    TestVersion,
    hookimpl,
)
from clue_tasks_ner import published
from clue_tasks_ner.labels import ENTITY_SPANS, METRIC_TOTALS, TYPES

_PACKAGE = "clue_tasks_ner"
WRITER = "cluener"

ENTITY_SPANS_KIND = KindSpec(
    ENTITY_SPANS,
    "a text and its typed entity spans (fine-grained NER); a prediction is a set of typed spans",
    example=f"{_PACKAGE}.examples:EntitySpansExample",
    prediction="entity spans: [type, start, end) triples",
    check_prediction=f"{_PACKAGE}.examples:check_prediction",
    check_example=f"{_PACKAGE}.examples:check_example",
    # the gold as a list of [type, start, end] lists, as the run records it (the ``entities`` field is a tuple
    # of tuples: code that takes a tuple gold for span answers, (text, start) pairs, would misread it)
    gold=f"{_PACKAGE}.examples:gold",
    prompt_fields=("text",),
)

#: Each type's Chinese name, as the CLUENER2020 repository's README gives it.
TYPE_NAMES = {
    "address": "地址", "book": "书名", "company": "公司", "game": "游戏", "government": "政府",
    "movie": "电影", "name": "姓名", "organization": "组织机构", "position": "职位", "scene": "景点",
}

PROMPT = Prompt(
    instruction=(
        "找出下面句子中的命名实体。实体类别：" + "、".join(f"{TYPE_NAMES[t]}（{t}）" for t in TYPES) + "。"
        "用一个JSON对象回答：键是类别的英文名，值是该类实体在句子中原样出现的文字组成的列表；没有实体的类别不写，"
        "没有任何实体时回答{}。"
    ),
    template="句子：{text}",
    answer_prefix="答案：",
    parse=f"{_PACKAGE}.prompting:parse",  # an LLM's JSON answer -> spans at every occurrence (prompting.py)
    answer=f"{_PACKAGE}.prompting:answer",
    variants=(  # --set prompt_variants=all: the same JSON answer in other words (read by the same parse)
        PromptVariant("plain", instruction="列出句子里的命名实体（"
                      + "、".join(f"{TYPE_NAMES[t]}（{t}）" for t in TYPES)
                      + "），用JSON对象回答：键为类别英文名，值为实体原文的列表；没有实体时回答{}。"),
        PromptVariant("fields", template="文本：{text}"),
        PromptVariant("prefix", answer_prefix="答："),
    ),
)

CLUENER2020 = TaskSpec(
    name="cluener2020",
    kind=ENTITY_SPANS,
    description="CLUENER2020: fine-grained named entities (10 types) in Chinese news sentences",
    reader=f"{_PACKAGE}.reader:read",
    labels=TYPES,
    label_descriptions=TYPE_NAMES,
    metrics=("cluener2020",),
    primary_metric="macro_f1",
    leaderboards=(Leaderboard("CLUENER2020", "overall"),),
    splits=("train", "dev"),
    test_versions=(TestVersion(version="1.0", split="test", submission_file="cluener_predict.json"),),
    writer=WRITER,
    source=DataSource.official("cluener_public.zip"),
    data_files=("train.json", "dev.json", "test.json"),
    sample=f"{_PACKAGE}:samples/cluener2020",
    recommendations={"max_length": 128, "batch_size": 24, "learning_rate": 3e-5, "epochs": 4},
    prompt=PROMPT,
    published=published.CLUENER2020,
    notes=(
        "10,748 / 1,343 / 1,345 sentences of at most 50 characters; train/dev ids are line indexes "
        "(the files carry none). Spans are read as [start, end) (the files' offsets are inclusive); an "
        "entity whose text differs from the text at its offsets is kept as the offsets say and named in "
        "the split's notes (the official train and dev have none). Scored with the official score.py: per "
        "type, the entity strings of each line; macro_f1 is the mean of the ten types' F1 (a type with no "
        "true positive counts 0, where score.py divides by zero); micro_f1_exact compares (type, start, "
        "end) spans. Recommendations: the repository's BERT span baseline (run_ner_span.sh)."
    ),
)

CLUENER_METRIC = MetricSpec(
    name="cluener2020",
    compute=f"{_PACKAGE}.metric:compute",
    description=(
        "Official CLUENER2020 score.py (x100): per type TP/FP/FN over each line's set of entity strings, "
        "macro_f1 = mean of the 10 types' F1 (0 for a type with no true positive); per-type P/R/F1; "
        "offset-exact micro P/R/F1 over (type, start, end) spans"
    ),
    kinds=(ENTITY_SPANS,),
    produces=METRIC_TOTALS,
)

CLUENER_WRITER = SubmissionWriterSpec(
    WRITER,
    f"{_PACKAGE}.submission:write",
    f"{_PACKAGE}.submission:read",
    'JSON Lines {"id", "label": {type: {entity text: [[start, end], ...]}}} in test-file order '
    "(cluener_predict.json, offsets inclusive)",
    ordered=True,
)


@hookimpl
def clue_kinds() -> list[KindSpec]:
    return [ENTITY_SPANS_KIND]


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return [CLUENER2020]


@hookimpl
def clue_metrics() -> list[MetricSpec]:
    return [CLUENER_METRIC]


@hookimpl
def clue_submission_writers() -> list[SubmissionWriterSpec]:
    return [CLUENER_WRITER]

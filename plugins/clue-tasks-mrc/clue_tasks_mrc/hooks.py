"""Hook implementations of clue-tasks-mrc; must stay cheap to import (specs only).

Readers, decoders and the metric are named as ``"module:attr"`` strings; NLTK (used by
the metric) is imported only when a score is computed. Everything comes from the one
public module, ``clue_core.plugin``.
"""

from __future__ import annotations

from clue_core.plugin import (
    MULTIPLE_CHOICE,
    SPAN,
    DataSource,
    Leaderboard,
    MetricSpec,
    Prompt,
    Setting,
    TaskSpec,
    TestVersion,
    hookimpl,
)
from clue_tasks_mrc import presets, prompt_variants, published

#: CMRC2018, CHID and C3 form the reading-comprehension average of both CLUE versions.
READING_COMPREHENSION = (
    Leaderboard("CLUE 1.1", "reading comprehension"),
    Leaderboard("CLUE 1.0", "reading comprehension"),
)
_PACKAGE = "clue_tasks_mrc"

#: Reference settings for SQuAD-style span extraction (CLUE baselines, FORMATS.md), for
#: the models that declare them.
SPAN_RECOMMENDATIONS = {
    "max_length": 512,
    "doc_stride": 128,
    "max_query_length": 64,
    "max_answer_length": 50,
    "n_best": 20,
    "batch_size": 32,
    "learning_rate": 3e-5,
    "epochs": 2,
    "warmup_ratio": 0.1,
}

#: CHID's decode step: how the candidates of a line are assigned to its blanks.
CHID_DECODE = Setting(
    "chid_decode",
    str,
    "exact",
    "how CHID assigns distinct candidates to the blanks of a line: exact (maximum summed "
    "log-probability) or greedy (highest probability first, as the CLUE baselines)",
    choices=("exact", "greedy"),
)

#: How a large language model is asked each task. Span answers must be copied from the
#: passage (the metric compares texts); {choices} is filled by the model with lettered options.
SPAN_PROMPT = Prompt(
    instruction="阅读下面的文章，回答问题。答案必须是从文章中原样摘录的一段连续文字，不要改写，也不要解释。",
    template="文章：{context}\n问题：{question}",
    answer_prefix="答案：",
    variants=prompt_variants.SPAN,  # --set prompt_variants=all
)
DRCD_PROMPT = Prompt(
    instruction="閱讀下面的文章，回答問題。答案必須是從文章中原樣摘錄的一段連續文字，不要改寫，也不要解釋。",
    template="文章：{context}\n問題：{question}",
    answer_prefix="答案：",
    variants=prompt_variants.DRCD,  # --set prompt_variants=all
)
CHID_PROMPT = Prompt(
    instruction="从候选成语中选出最适合填入文段空白处“____”的一个成语。文段中的“□□□□”是其他空白，不用填写。",
    template="文段：{context}\n候选成语：\n{choices}",
    answer_prefix="答案：",
    variants=prompt_variants.CHID,  # --set prompt_variants=all
)
C3_PROMPT = Prompt(
    instruction="阅读下面的对话或短文，从选项中选出问题的正确答案。",
    template="材料：{context}\n问题：{question}\n选项：\n{choices}",
    answer_prefix="答案：",
    variants=prompt_variants.C3,  # --set prompt_variants=all
)

CMRC2018 = TaskSpec(
    name="cmrc2018",
    kind=SPAN,
    description="CMRC2018: span-extraction reading comprehension on Simplified Chinese Wikipedia",
    reader=f"{_PACKAGE}.squad:read",
    metrics=("cmrc2018",),
    primary_metric="em",
    leaderboards=READING_COMPREHENSION,
    splits=("train", "dev", "trial"),
    test_versions=(TestVersion(version="1.1", split="test", submission_file="cmrc2018_predict.json"),),
    writer="json_object",
    source=DataSource.official(
        "cmrc2018_public.zip", size=3405146, sha256="6c63dc27e728ec5231aeb7d2861b4c90b6c116390582e0c44416cf3edf030b16"
    ),
    data_files=("train.json", "dev.json", "test.json", "trial.json"),
    sample=f"{_PACKAGE}:samples/cmrc2018",
    recommendations=SPAN_RECOMMENDATIONS,
    prompt=SPAN_PROMPT,
    settings=presets.task_settings("cmrc2018"),  # protocol=opencompass:<config> (presets.py)
    published=published.CMRC2018,
    cluster=f"{_PACKAGE}.clusters:passage",
    cluster_unit="passage",
    notes=(
        "10,142 / 3,219 / 2,000 questions (trial 1,002). Test answers are placeholders "
        "(FAKE_ANSWER_n) and are never scored. Answer offsets up to 3 characters off are moved "
        "to the answer text, with a note; dev's 193 gold answers with answer_start -1 (not "
        "verbatim in the context) are kept for scoring, without an offset, so training skips "
        "them. Scored with the official CMRC2018 EM/F1, which compares texts; the leaderboard uses EM."
    ),
)

DRCD = TaskSpec(
    name="drcd",
    kind=SPAN,
    description="DRCD: span-extraction reading comprehension on Traditional Chinese Wikipedia",
    reader=f"{_PACKAGE}.squad:read",
    metrics=("cmrc2018",),
    primary_metric="em",
    splits=("train", "dev"),
    test_versions=(TestVersion(version="1.0", split="test", submission_file="drcd_predict.json"),),
    writer="json_object",
    source=DataSource.official(
        "drcd_public.zip", size=7264200, sha256="f03a38bded37572e224b69b822794eca6218f9584afc0918bf8aa2bc77cf968d"
    ),
    data_files=("train.json", "dev.json", "test.json"),
    sample=f"{_PACKAGE}:samples/drcd",
    recommendations=SPAN_RECOMMENDATIONS,
    prompt=DRCD_PROMPT,
    settings=presets.task_settings("drcd"),  # protocol=opencompass:<config> (presets.py)
    published=published.DRCD,
    cluster=f"{_PACKAGE}.clusters:passage",
    cluster_unit="passage",
    notes=(
        "26,936 / 3,524 / 3,493 questions, kept in Traditional Chinese (answers are cut from "
        "the context's own characters). In no CLUE leaderboard average; predictions "
        "are written in CMRC2018's shape (one object, question id -> answer text)."
    ),
)

CHID = TaskSpec(
    name="chid",
    kind=MULTIPLE_CHOICE,
    description="CHID: Chinese idiom cloze, one 10-way choice per blank, candidates assigned jointly per passage",
    reader=f"{_PACKAGE}.chid:read",
    metrics=("accuracy",),
    primary_metric="accuracy",
    leaderboards=READING_COMPREHENSION,
    splits=("train", "dev"),
    test_versions=(
        TestVersion(version="1.1", split="test1.1", submission_file="chid11_predict.json"),
        TestVersion(version="1.0", split="test1.0", submission_file="chid10_predict.json"),
    ),
    writer="json_object",
    source=DataSource.official(
        "chid_public.zip", size=139199202, sha256="be02dbcc41a9c237542141f53836e70a209f7a686cf894891411c7e5534f73a4"
    ),
    data_files=(
        "train.json",
        "train_answer.json",
        "dev.json",
        "dev_answer.json",
        "test1.0.json",
        "test1.1.json",
    ),
    sample=f"{_PACKAGE}:samples/chid",
    decode=f"{_PACKAGE}.chid:decode",
    decode_settings=(CHID_DECODE,),
    recommendations={"max_length": 64, "batch_size": 24, "learning_rate": 2e-5, "epochs": 3, "warmup_ratio": 0.06},
    prompt=CHID_PROMPT,
    published=published.CHID,
    cluster=f"{_PACKAGE}.clusters:chid_passage",
    cluster_unit="passage",
    notes=(
        "84,709 / 3,218 / 3,447 lines (test1.0: 3,231). One example per blank: a window of "
        "24 characters each side, the blank as '____', the passage's other blanks as '□□□□'. "
        "Blanks of a line take distinct candidates: the decode step assigns them jointly, "
        "exactly (maximum summed log-probability) by default; highest-first as the CLUE baselines "
        "did with --set chid_decode=greedy. Accuracy is per blank."
    ),
)

C3 = TaskSpec(
    name="c3",
    kind=MULTIPLE_CHOICE,
    description="C3: multiple-choice reading comprehension over dialogues and mixed-genre texts",
    reader=f"{_PACKAGE}.c3:read",
    metrics=("accuracy",),
    primary_metric="accuracy",
    leaderboards=READING_COMPREHENSION,
    splits=("train", "dev"),
    test_versions=(
        TestVersion(version="1.1", split="test1.1", submission_file="c311_predict.json"),
        TestVersion(version="1.0", split="test1.0", submission_file="c310_predict.json"),
    ),
    writer="jsonl_labels",
    source=DataSource.official(
        "c3_public.zip", size=3495930, sha256="20dfa683c57c9795129e22d8dd0c299d6b2a29fbc84758ef2ebdb8b2904d7e12"
    ),
    data_files=("d-train.json", "m-train.json", "d-dev.json", "m-dev.json", "test1.0.json", "test1.1.json"),
    sample=f"{_PACKAGE}:samples/c3",
    decode=f"{_PACKAGE}.c3:decode",
    recommendations={"max_length": 512, "batch_size": 24, "learning_rate": 2e-5, "epochs": 8, "warmup_ratio": 0.1},
    prompt=C3_PROMPT,
    settings=presets.task_settings("c3"),  # protocol=opencompass:<config> (presets.py)
    published=published.C3,
    cluster=f"{_PACKAGE}.clusters:passage",
    cluster_unit="passage",
    notes=(
        "11,869 / 3,816 / 1,625 questions (test1.0: 3,892); train/dev read the d- file then "
        "the m- file. 2 to 4 choices per question; a test file's longer choice lists are kept "
        "whole (the split notes count them) and a padding choice is never predicted. The "
        "label is the index of the answer text; test ids are the file's question ids."
    ),
)

CMRC2018_METRIC = MetricSpec(
    name="cmrc2018",
    compute=f"{_PACKAGE}.cmrc_metric:compute",
    description=(
        "Official CMRC2018 EM and F1 (x100) and their average: lower-cased, official punctuation "
        "set, mixed segmentation, longest common token run, best gold answer, missing counts 0"
    ),
    kinds=(SPAN,),
    produces=("em", "f1", "average"),
)


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return [CMRC2018, DRCD, CHID, C3]


@hookimpl
def clue_metrics() -> list[MetricSpec]:
    return [CMRC2018_METRIC]

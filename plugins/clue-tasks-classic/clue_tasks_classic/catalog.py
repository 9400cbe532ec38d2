"""The TaskSpecs of AFQMC, TNEWS, IFLYTEK, OCNLI, CMNLI, CLUEWSC2020, CSL and diagnostics.

Plain data only (no reader code is imported here), so ``clue-core list`` stays fast.
Sizes and checksums of the official archives, submission file names and the recommended
settings follow the official repository, its submission instructions (2021-09-04) and the
baselines. Each task also says how a large language model is asked it (``prompt``, in
Chinese, with one answer word per label) and carries the scores published for it
(:mod:`clue_tasks_classic.published`).
"""

from __future__ import annotations

from clue_core.plugin import CLASSIFICATION, DataSource, Leaderboard, Prompt, TaskSpec, TestVersion
from clue_tasks_classic import labels, presets, prompt_variants
from clue_tasks_classic.published import PUBLISHED

READERS = "clue_tasks_classic.readers"
METRICS = ("accuracy", "macro_f1")

CLUE_11 = Leaderboard("CLUE 1.1", "classification")
CLUE_10 = Leaderboard("CLUE 1.0", "classification")
BOTH = (CLUE_11, CLUE_10)
"""AFQMC, TNEWS, IFLYTEK, CLUEWSC2020 and CSL count in both versions' classification score;
OCNLI only in CLUE 1.1's, CMNLI only in CLUE 1.0's (1.1 replaced it by OCNLI)."""

SMALL_MODEL_NOTE = (
    "Small models (3-4 layers, hidden size <= 312) underfit at these rates: use a learning rate "
    "around 1e-4 and two to three times the epochs."
)


def _recommend(max_length: int, batch_size: int, learning_rate: float, epochs: int) -> dict[str, object]:
    return {
        "max_length": max_length,
        "batch_size": batch_size,
        "learning_rate": learning_rate,
        "epochs": epochs,
        "warmup_ratio": 0.1,
    }


def _only_test(submission_file: str) -> tuple[TestVersion, ...]:
    """A task with a single ``test.json``: that file is the CLUE 1.1 test set."""
    return (TestVersion("1.1", "test", submission_file),)


def _two_tests(stem: str) -> tuple[TestVersion, ...]:
    """TNEWS and CLUEWSC2020 ship ``test.json`` (1.1) and ``test1.0.json`` (1.0)."""
    return (
        TestVersion("1.1", "test", f"{stem}11_predict.json"),
        TestVersion("1.0", "test1.0", f"{stem}10_predict.json"),
    )


def _choose(what: str, verbalizers: dict[str, str]) -> str:
    return f"{what}可选：{'、'.join(verbalizers.values())}。只回答其中一项。"


NLI_VERBALIZERS = {"entailment": "蕴含", "neutral": "中立", "contradiction": "矛盾"}
NLI_PROMPT = Prompt(
    instruction="判断第二句话（假设）与第一句话（前提）之间的关系：前提成立时假设一定成立为蕴含，"
    "一定不成立为矛盾，无法确定为中立。" + _choose("关系", NLI_VERBALIZERS),
    template="前提：{text}\n假设：{text_pair}",
    verbalizers=NLI_VERBALIZERS,
)
TNEWS_PROMPT = Prompt(
    instruction="判断下面这条新闻标题属于哪个新闻类别。" + _choose("类别", labels.TNEWS_NAMES),
    template="新闻标题：{text}",
    verbalizers=dict(labels.TNEWS_NAMES),
)
IFLYTEK_PROMPT = Prompt(
    instruction="判断下面这段应用描述属于哪个应用类别。" + _choose("类别", labels.IFLYTEK_DESCRIPTIONS),
    template="应用描述：{text}",
    verbalizers=dict(labels.IFLYTEK_DESCRIPTIONS),
)


def _task(name: str, **fields: object) -> TaskSpec:
    fields.setdefault("kind", CLASSIFICATION)
    fields.setdefault("metrics", METRICS)
    fields.setdefault("primary_metric", "accuracy")
    fields.setdefault("leaderboards", BOTH)
    fields.setdefault("reader", f"{READERS}:read_{name}")
    fields.setdefault("sample", f"clue_tasks_classic:samples/{name}")
    fields.setdefault("published", PUBLISHED[name])
    fields.setdefault("settings", presets.task_settings(name))  # protocol=opencompass:<config> (presets.py)
    fields["prompt"] = prompt_variants.with_variants(name, fields.get("prompt"))  # --set prompt_variants=all
    return TaskSpec(name=name, **fields)  # type: ignore[arg-type]


TASKS: tuple[TaskSpec, ...] = (
    _task(
        "afqmc",
        description="Ant Financial Question Matching: do two customer questions mean the same? (sentence pair)",
        labels=labels.BINARY,
        label_descriptions={"0": "different meaning", "1": "same meaning"},
        test_versions=_only_test("afqmc_predict.json"),
        source=DataSource.official("afqmc_public.zip", 1195044,
                                    "5a4cb1556b833010c329fa2ad2207d9e98fc94071b7e474015e9dd7c385db4dc"),
        data_files=("train.json", "dev.json", "test.json"),
        recommendations=_recommend(128, 32, 2e-5, 3),
        prompt=Prompt(
            instruction="判断下面两个问题的意思是否相同。回答“相同”或“不同”。",
            template="问题一：{text}\n问题二：{text_pair}",
            verbalizers={"0": "不同", "1": "相同"},
        ),
        notes=SMALL_MODEL_NOTE,
    ),
    _task(
        "tnews",
        description="Toutiao news title classification into 15 categories (TNEWS')",
        labels=labels.TNEWS,
        label_descriptions=labels.TNEWS_DESCRIPTIONS,
        test_versions=_two_tests("tnews"),
        source=DataSource.official("tnews_public.zip", 5123575,
                                    "77c476e70cfe0b014a81b84c6e1db2142a8a2f52f4ae0a8216aa75e673933462"),
        data_files=("train.json", "dev.json", "test.json", "test1.0.json", "labels.json"),
        recommendations=_recommend(128, 32, 2e-5, 3),
        prompt=TNEWS_PROMPT,
        notes="Input is the title only, as in the official baselines. " + SMALL_MODEL_NOTE,
    ),
    _task(
        "iflytek",
        description="iFLYTEK app description classification into 119 categories (IFLYTEK')",
        labels=labels.IFLYTEK,
        label_descriptions=labels.IFLYTEK_DESCRIPTIONS,
        test_versions=_only_test("iflytek_predict.json"),
        source=DataSource.official("iflytek_public.zip", 6505938,
                                    "c59b961b29f1d0bad0c5e01aa62e4a61a80e9cfb980ce89b06c000851fbb3b06"),
        data_files=("train.json", "dev.json", "test.json", "labels.json"),
        recommendations=_recommend(128, 32, 2e-5, 3),
        prompt=IFLYTEK_PROMPT,
        notes="Descriptions are long; 128 tokens keeps the first part, as the baselines do. " + SMALL_MODEL_NOTE,
    ),
    _task(
        "ocnli",
        description="Original Chinese NLI: entailment / neutral / contradiction (sentence pair)",
        labels=labels.NLI,
        leaderboards=(CLUE_11,),
        test_versions=_only_test("ocnli_50k_predict.json"),
        # The archive's md5 is only known in part (acb426f6...07): left unset rather than guessed.
        source=DataSource.official("ocnli_public.zip"),
        data_files=("train.50k.json", "dev.json", "test.json"),
        recommendations=_recommend(128, 32, 3e-5, 5),
        prompt=NLI_PROMPT,
        notes="Lines labelled '-' (no annotator majority) are dropped and counted. " + SMALL_MODEL_NOTE,
    ),
    _task(
        "cmnli",
        description="Chinese Multi-Genre NLI (translated MNLI + XNLI): entailment / neutral / contradiction",
        labels=labels.NLI,
        # CLUE 1.1 replaced CMNLI by OCNLI in the classification score.
        leaderboards=(CLUE_10,),
        test_versions=_only_test("cmnli_predict.json"),
        source=DataSource.official("cmnli_public.zip", 31404066,
                                    "3a3f3b1d3d27134cf11e585156f07fa050bd0a0836821c02696af0dbaa14513b"),
        data_files=("train.json", "dev.json", "test.json"),
        recommendations=_recommend(128, 64, 3e-5, 2),  # bs64 ep2 lr3e-5: the CLUE baseline's setting
        prompt=NLI_PROMPT,
        notes="Files sit in cmnli_public/; lines labelled '-' are dropped and counted. "
        "Part of the CLUE 1.0 classification score only (CLUE 1.1 uses OCNLI). " + SMALL_MODEL_NOTE,
    ),
    _task(
        "cluewsc2020",
        description="CLUE Winograd Schema Challenge: does the pronoun [..] refer to the noun _.._?",
        labels=labels.WSC,
        label_descriptions={"true": "the pronoun refers to the noun", "false": "it does not"},
        test_versions=_two_tests("cluewsc"),
        source=DataSource.official("cluewsc2020_public.zip", 281384,
                                    "ebe5f357b19392d601be401b2fd4246983f534809a078eab7bda1de418fb3ffe"),
        data_files=("train.json", "dev.json", "test.json", "test1.0.json"),
        recommendations=_recommend(128, 16, 2e-5, 50),
        prompt=Prompt(
            instruction="下面的句子中，用方括号[]标出的代词是否指代用下划线_ _标出的词语？回答“是”或“否”。",
            template="句子：{text}",
            verbalizers={"false": "否", "true": "是"},
        ),
        notes="Small training set: results vary a lot with the seed and batch size (try 8-16, lr 1e-5 to 3e-5). "
        + SMALL_MODEL_NOTE,
    ),
    _task(
        "csl",
        description="Chinese Scientific Literature: are all the keywords real keywords of the abstract?",
        labels=labels.BINARY,
        label_descriptions={"0": "some keywords are fake", "1": "all keywords are real"},
        test_versions=_only_test("csl_predict.json"),
        source=DataSource.official("csl_public.zip", 3234594,
                                    "795d1a2e475d59acad8236f6c5baba7a0b43d3e0508cb60f15ffbc76d5f437c4"),
        data_files=("train.json", "dev.json", "test.json"),
        recommendations=_recommend(256, 16, 1e-5, 5),
        prompt=Prompt(
            instruction="下面给出一篇论文的摘要和一组关键词，判断这些关键词是否全部都是这篇摘要的关键词。回答“是”或“否”。",
            template="摘要：{text_pair}\n关键词：{text}",
            verbalizers={"0": "否", "1": "是"},
        ),
        notes="Input pairs the space-joined keywords with the abstract. " + SMALL_MODEL_NOTE,
    ),
    _task(
        "diagnostics",
        description="CLUE diagnostic NLI set (test only): predict it with a model trained on an NLI task",
        labels=labels.NLI,
        leaderboards=(),
        splits=(),
        test_versions=_only_test("diagnostics_predict.json"),
        source=DataSource.official("clue_diagnostics_public.zip", 12062,
                                    "56b52e70c195686557a966c6064c9bdc4dece1de8c89551f89ad046637e9a7c4"),
        data_files=("diagnostics_test.json",),
        recommendations=_recommend(128, 32, 3e-5, 2),
        prompt=NLI_PROMPT,
        notes="No train or dev split: predict it with a model trained on OCNLI (the 2021 submission "
        "instructions) or CMNLI (the original setup); the submission has the OCNLI format.",
    ),
)

TASK_NAMES = tuple(task.name for task in TASKS)


def task(name: str) -> TaskSpec:
    """The spec of one classic task by name."""
    for spec in TASKS:
        if spec.name == name:
            return spec
    raise KeyError(f"clue-tasks-classic has no task {name!r} (has: {', '.join(TASK_NAMES)})")

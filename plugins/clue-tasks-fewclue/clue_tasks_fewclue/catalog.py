"""The TaskSpecs of FewCLUE's nine tasks, and the CHID leaderboard writer.

Plain data only (no reader code is imported here), so ``clue-core list`` stays fast. The
submission file names are those of FewCLUE's submission examples
(``resources/fewclue_submit_examples``): the tasks taken from CLUE carry an ``f``
(``tnewsf_predict.json``), the three new ones do not. Every task belongs to one leaderboard
group, ``FewCLUE overall``, whose score is the plain mean of the nine accuracies.

Prompts: a template over the example's fields and one short answer word per label (one
length within a task), with the answer position right after ``answer_prefix`` — where a large
language model writes its answer and where a cloze model (PET) puts its masks.
"""

from __future__ import annotations

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    Leaderboard,
    Prompt,
    Setting,
    SubmissionWriterSpec,
    TaskSpec,
    TestVersion,
)
from clue_tasks_fewclue import labels, presets, prompt_variants
from clue_tasks_fewclue.published import PUBLISHED
from clue_tasks_fewclue.repeats import Repeat

PACKAGE = "clue_tasks_fewclue"
#: The values of the ``split`` setting: the merged pair (default) or one of the five sampled pairs.
PROTOCOLS = ("few_all", "0", "1", "2", "3", "4")
FEWCLUE = Leaderboard("FewCLUE", "overall")
TEST_VERSION = "1.0"
CHID_WRITER_NAME = "fewclue_chid"

SPLIT = Setting(
    "split",
    str,
    "few_all",
    "which FewCLUE train/dev pair the run's train and dev are: few_all (train_few_all.json/dev_few_all.json, "
    "the union of the five) or 0-4 (train_k.json/dev_k.json); test_public and test are the same for all; "
    "all trains on each of the six in turn (FewCLUE's multi-split board: <name>_predict_{0..4,all}.json, "
    "and the mean +- std over 0-4)",
    choices=(*PROTOCOLS, "all"),
    schedule=True,
    cache_key=True,
    report=True,
)

#: ``split=all``: one training per pair, each a run of its own; the board's files end in _0 … _4 and _all.
ALL_SPLITS = Repeat("split", "all", each=("0", "1", "2", "3", "4", "few_all"), averaged=("0", "1", "2", "3", "4"),
                    suffixes={"few_all": "_all"})

CHID_WRITER = SubmissionWriterSpec(
    CHID_WRITER_NAME,
    f"{PACKAGE}.chid:write_answers",
    f"{PACKAGE}.chid:read_answers",
    'JSON Lines {"id", "answer": candidate index} in test-file order (FewCLUE chidf_predict.json)',
    ordered=True,
)


def _recommend(max_length: int) -> dict[str, object]:
    """Reference values for training sets of tens to a few thousand examples: small batches, many epochs."""
    return {"max_length": max_length, "batch_size": 8, "learning_rate": 2e-5, "epochs": 10, "warmup_ratio": 0.1}


def _choose(what: str, verbalizers: dict[str, str]) -> str:
    return f"{what}可选：{'、'.join(verbalizers.values())}。只回答其中一项。"


def _task(folder: str, submission_file: str, **fields: object) -> TaskSpec:
    fields.setdefault("kind", CLASSIFICATION)
    fields.setdefault("metrics", ("accuracy", "macro_f1"))
    fields.setdefault("reader", f"{PACKAGE}.readers:read_{folder}")
    fields.setdefault("settings", presets.task_settings(f"fewclue-{folder}"))  # protocol=opencompass:<config>
    fields["prompt"] = prompt_variants.with_variants(folder, fields.get("prompt"))  # --set prompt_variants=all
    return TaskSpec(
        name=f"fewclue-{folder}",
        primary_metric="accuracy",
        leaderboards=(FEWCLUE,),
        splits=("train", "dev"),
        scored_splits=("test_public",),
        test_versions=(TestVersion(TEST_VERSION, "test", submission_file),),
        sample=f"{PACKAGE}:samples/{folder}",
        reader_settings=(SPLIT,),
        repeat=ALL_SPLITS,
        published=PUBLISHED[folder],
        **fields,  # type: ignore[arg-type]
    )


TASKS: tuple[TaskSpec, ...] = (
    _task(
        "eprstmt", "eprstmt_predict.json",
        description="FewCLUE EPRSTMT: is an e-commerce product review positive or negative? (32 train / 32 dev)",
        labels=labels.EPRSTMT,
        recommendations=_recommend(128),
        prompt=Prompt(instruction="判断下面这条电商商品评论的情感倾向。" + _choose("情感", labels.EPRSTMT_WORDS),
                      template="评论：{text}", verbalizers=labels.EPRSTMT_WORDS, answer_prefix="情感："),
    ),
    _task(
        "csldcp", "csldcp_predict.json",
        description="FewCLUE CSLDCP: the discipline of a Chinese paper abstract, 67 labels (536 / 536)",
        labels=labels.CSLDCP,
        recommendations=_recommend(256),
        prompt=Prompt(instruction="判断下面这篇论文摘要属于哪个学科。" + _choose("学科", labels.CSLDCP_WORDS),
                      template="摘要：{text}", verbalizers=labels.CSLDCP_WORDS, answer_prefix="学科："),
        notes="Labels are the Chinese discipline names of labels_all.txt; the answer words are FewCLUE's "
              "two-character tags (labelDesc2label.py). test_public.json repeats 49 ids: the later record "
              "of each is read as '<id>#<line>'.",
    ),
    _task(
        "tnews", "tnewsf_predict.json",
        description="FewCLUE TNEWS: Toutiao news title classification, 15 categories (240 / 240)",
        labels=labels.TNEWS,
        label_descriptions=labels.TNEWS_DESCRIPTIONS,
        recommendations=_recommend(64),
        prompt=Prompt(instruction="判断下面这条新闻标题属于哪个类别。" + _choose("类别", labels.TNEWS_WORDS),
                      template="新闻标题：{text}", verbalizers=labels.TNEWS_WORDS, answer_prefix="类别："),
        notes="Labels are integers in the files, read as strings '100'..'116'; test.json's ids are strings "
              "('0'), echoed as such in tnewsf_predict.json. Input is the title (sentence) only.",
    ),
    _task(
        "iflytek", "iflytekf_predict.json",
        description="FewCLUE IFLYTEK: app description classification, 119 categories (928 / 690)",
        labels=labels.IFLYTEK,
        label_descriptions=labels.IFLYTEK_DESCRIPTIONS,
        recommendations=_recommend(256),
        prompt=Prompt(instruction="判断下面这段应用描述属于哪个应用类别。" + _choose("类别", labels.IFLYTEK_WORDS),
                      template="应用描述：{text}", verbalizers=labels.IFLYTEK_WORDS, answer_prefix="类别："),
        notes="Labels are integers in the files, read as strings '0'..'118'; the answer words are FewCLUE's "
              "two-character tags (label_id2des_desc2short.py).",
    ),
    _task(
        "ocnli", "ocnlif_predict.json",
        description="FewCLUE OCNLI: entailment / neutral / contradiction of a sentence pair (32 / 32)",
        labels=labels.NLI,
        recommendations=_recommend(128),
        prompt=Prompt(
            instruction="判断第二句话（假设）与第一句话（前提）之间的关系：前提成立时假设一定成立为蕴含，"
            "一定不成立为矛盾，无法确定为中立。" + _choose("关系", labels.NLI_WORDS),
            template="前提：{text}\n假设：{text_pair}", verbalizers=labels.NLI_WORDS, answer_prefix="关系："),
        notes="label0..label4 (the annotators' labels) are null in most training lines and are not used.",
    ),
    _task(
        "bustm", "bustm_predict.json",
        description="FewCLUE BUSTM: do two utterances to the XiaoBu assistant mean the same? (32 / 32)",
        labels=labels.BINARY,
        label_descriptions={"0": "different meaning", "1": "same meaning"},
        recommendations=_recommend(64),
        prompt=Prompt(instruction="判断下面两句对话的意思是否相同。回答“相同”或“不同”。",
                      template="句子一：{text}\n句子二：{text_pair}", verbalizers=labels.BUSTM_WORDS),
    ),
    _task(
        "chid", "chidf_predict.json",
        description="FewCLUE CHID: choose the idiom for the one blank of a passage among 7 candidates (42 / 42)",
        kind=MULTIPLE_CHOICE,
        metrics=("accuracy",),
        reader=f"{PACKAGE}.chid:read_chid",
        writer=CHID_WRITER_NAME,
        recommendations=_recommend(256),
        prompt=Prompt(instruction="从候选成语中选出最适合填入文段空白处“____”的一个成语。",
                      template="文段：{context}\n候选成语：\n{choices}"),
        notes="One #idiom# blank per line (written ____); chidf_predict.json holds the candidate index as an integer.",
    ),
    _task(
        "csl", "cslf_predict.json",
        description="FewCLUE CSL: are all the keywords real keywords of the abstract? (32 / 32)",
        labels=labels.BINARY,
        label_descriptions={"0": "some keywords are fake", "1": "all keywords are real"},
        recommendations=_recommend(256),
        prompt=Prompt(
            instruction="下面给出一篇论文的摘要和一组关键词，判断这些关键词是否全部都是这篇摘要的关键词。回答“是”或“否”。",
            template="摘要：{text_pair}\n关键词：{text}", verbalizers=labels.CSL_WORDS),
        notes="Input pairs the space-joined keywords with the abstract, as for CLUE's CSL.",
    ),
    _task(
        "cluewsc", "cluewscf_predict.json",
        description="FewCLUE CLUEWSC: does the pronoun [..] refer to the noun _.._? (32 / 32)",
        labels=labels.WSC,
        label_descriptions={"true": "the pronoun refers to the noun", "false": "it does not"},
        recommendations=_recommend(128),
        prompt=Prompt(
            instruction="下面的句子中，用方括号[]标出的代词是否指代用下划线_ _标出的词语？回答“是”或“否”。",
            template="句子：{text}", verbalizers=labels.WSC_WORDS),
        notes="Ids are idx in train/dev/test_public and id in test.json (the submission echoes test.json's id).",
    ),
)

TASK_NAMES = tuple(task.name for task in TASKS)

"""The TaskSpecs of DataCLUE's six tasks, the fixed recipe, and the published scores.

Plain data only (the hook module imports it), so ``clue-core list`` stays fast.

DataCLUE fixes the model and its training recipe and lets the user improve ``train.json`` /
``dev.json``; the score is macro F1 on the high-quality ``test_public.json`` (a scored split,
as FewCLUE's). The recipe is the repository's own
(``baselines/models_pytorch/classifier_pytorch/run_classifier_<task>.sh`` with
``run_classifier.py``'s defaults): RBTL3 (HF ``hfl/rbtl3``), 15 epochs (iflytek 6), learning rate
2e-5, max length 32 (iflytek 256), batch 64, warmup 0.1, weight decay 0.01, clipping 1.0, seed 42,
predicting with the model of the last epoch (hf's ``keep=last``; its default keeps the best on dev).
It is every task's recommendation and, pinned for the ``hf`` models (``model_recommendations``:
the hf catalogue's size-class rates would otherwise replace it), what a run trains with unless the
user changes it; then the run's notes say ``not the DataCLUE protocol: …`` (see
:mod:`clue_tasks_dataclue.protocol`).
"""

from __future__ import annotations

from clue_core.plugin import CLASSIFICATION, Leaderboard, MetricSpec, Prompt, PublishedScore, Setting, TaskSpec
from clue_tasks_dataclue import labels

PACKAGE = "clue_tasks_dataclue"
#: The checkpoint the recipe names (RoBERTa_3L_wwm; CLUE's chinese_rbtl3_pytorch.zip).
RECIPE_MODEL = "hf:hfl/rbtl3"
RECIPE_SEED = 42
METRIC = "dataclue_f1"
DATACLUE = Leaderboard("DataCLUE", "overall")
SOURCE = "https://github.com/CLUEbenchmark/DataCLUE README 实验结果 (test_public, macro F1, RBTL3 baseline)"


def recipe(task: str) -> dict[str, object]:
    """The fixed training recipe of ``task`` as hf settings (the run scripts' values)."""
    long = task == "iflytek"
    return {
        "epochs": 6 if long else 15,
        "learning_rate": 2e-5,
        "max_length": 256 if long else 32,
        "batch_size": 64,
        "warmup_ratio": 0.1,
        "weight_decay": 0.01,
        "max_grad_norm": 1.0,
        "learning_rate_scale": 1.0,
        "epochs_scale": 1.0,
        "max_steps": 0,
        "gradient_accumulation_steps": 1,
        # run_classifier.py predicts with the model its last epoch ends on, not the best on dev
        "keep": "last",
    }


def _checked(name: str, kind: type, default: object, what: str) -> Setting:
    """A recipe value the reader compares with the recipe; the same name, type and default as the hf
    models' own setting (the kernel merges the two declarations, so the reader sees the value trained with)."""
    return Setting(name, kind, default, f"{what}; DataCLUE compares it with the fixed recipe and marks a run "
                                        f"that departs ('not the DataCLUE protocol')", schedule=True)


#: Set only by the task's recommendation for the recipe's model (``model_recommendations``), so the
#: reader can tell a run of another model: no task step is told the model's name.
RECIPE_MODEL_SETTING = Setting(
    "recipe_model", str, "", f"set by the task for {RECIPE_MODEL} (the recipe's checkpoint); empty for any other "
    "model, whose runs are marked 'not the DataCLUE protocol'", report=True)

#: ``keep`` as the hf models declare it (their default keeps the best dev checkpoint), with their choices: this
#: declaration is the one the kernel keeps, so it checks ``--set keep=…``. Not a schedule setting, as in hf:
#: training is the same either way, and ``--resume`` may change which weights a run ends with.
KEEP_SETTING = Setting(
    "keep", str, "best", "the weights the model predicts with: best (on dev) or last (the last epoch's, as the "
    "recipe); DataCLUE compares it with the fixed recipe and marks a run that departs ('not the DataCLUE "
    "protocol')", choices=("best", "last"))

#: The recipe values the reader sees (defaults: the hf models' declared defaults, which they must equal).
PROTOCOL_SETTINGS: tuple[Setting, ...] = (
    RECIPE_MODEL_SETTING,
    _checked("epochs", int, 3, "passes over train.json"),
    _checked("learning_rate", float, 2e-5, "peak learning rate"),
    _checked("max_length", int, 128, "tokens per input"),
    _checked("batch_size", int, 32, "training batch"),
    _checked("warmup_ratio", float, 0.1, "warmup share"),
    _checked("weight_decay", float, 0.01, "AdamW weight decay"),
    _checked("max_grad_norm", float, 1.0, "gradient clipping"),
    _checked("learning_rate_scale", float, 1.0, "multiplies learning_rate"),
    _checked("epochs_scale", float, 1.0, "multiplies epochs"),
    _checked("max_steps", int, 0, "optimizer steps instead of epochs"),
    _checked("gradient_accumulation_steps", int, 1, "batches per optimizer step"),
    KEEP_SETTING,
)

METRIC_SPEC = MetricSpec(
    METRIC, f"{PACKAGE}.metric:dataclue_f1",
    "DataCLUE's compute_f1.py: sklearn macro F1 over the labels in gold or predictions (labels compared as "
    "strings), ×100; micro F1 beside it",
    (CLASSIFICATION,), produces=("macro_f1", "micro_f1"),
)

_PUBLISHED = {"cic": 72.78, "iflytek": 30.97, "tnews": 46.83, "afqmc": 59.04}
_DATA_CENTRIC = {"cic": 74.62, "iflytek": 40.15, "tnews": 49.34}


def _published(folder: str) -> tuple[PublishedScore, ...]:
    scores = []
    if folder in _PUBLISHED:
        scores.append(PublishedScore("RBTL3 (raw data)", "test_public", "raw", "macro_f1", _PUBLISHED[folder], SOURCE))
    if folder in _DATA_CENTRIC:
        scores.append(PublishedScore("RBTL3 (data-centric baseline)", "test_public", "data-centric", "macro_f1",
                                     _DATA_CENTRIC[folder], SOURCE))
    return tuple(scores)


def _numbered(count: int) -> tuple[str, ...]:
    return tuple(str(i) for i in range(count))


NOTE = ("DataCLUE: improve train.json/dev.json (relabel, delete, move, add; train+dev <= 30,000); the model and "
        "recipe are fixed (give --model hf:hfl/rbtl3, the named checkpoint); the score is macro F1 on "
        "test_public.json. ")


def _prompt(what: str, template: str, words: dict[str, str]) -> Prompt:
    """How a language model is asked (not the protocol, which fixes an encoder: its runs are marked)."""
    return Prompt(instruction=f"{what}可选：{'、'.join(words.values())}。只回答其中一项。", template=template,
                  verbalizers=words)


SAME = {"0": "不同", "1": "相同"}
PROMPTS = {
    "cic": _prompt("判断下面这句电商对话中买家的意图。", "对话：{text}", labels.CIC),
    "tnews": _prompt("判断下面这条新闻标题属于哪个新闻类别。", "新闻标题：{text}", labels.TNEWS),
    "iflytek": _prompt("判断下面这段应用描述属于哪个应用类别。", "应用描述：{text}", labels.IFLYTEK),
    "afqmc": _prompt("判断下面两个问题的意思是否相同。", "问题一：{text}\n问题二：{text_pair}", SAME),
    "qbqtc": _prompt("判断下面的搜索词和网页标题的相关程度。", "搜索词：{text}\n标题：{text_pair}",
                     {"0": "不相关", "1": "有些相关", "2": "非常相关"}),
    "triclue": _prompt("判断下面两个问题的意思是否相同。", "问题一：{text}\n问题二：{text_pair}", SAME),
}


def _task(folder: str, description: str, label_list: tuple[str, ...], descriptions: dict[str, str],
          pair: bool, notes: str = "") -> TaskSpec:
    return TaskSpec(
        name=f"dataclue-{folder}",
        kind=CLASSIFICATION,
        description=description,
        reader=f"{PACKAGE}.readers:read_{'pair' if pair else 'single'}",
        labels=label_list,
        label_descriptions=descriptions,
        metrics=(METRIC,),
        primary_metric="macro_f1",
        leaderboards=(DATACLUE,),
        splits=("train", "dev"),
        scored_splits=("test_public",),
        sample=f"{PACKAGE}:samples/{folder}",
        reader_settings=PROTOCOL_SETTINGS,
        recommendations=recipe(folder),
        model_recommendations={"hf": recipe(folder),
                               RECIPE_MODEL: {**recipe(folder), RECIPE_MODEL_SETTING.name: RECIPE_MODEL}},
        published=_published(folder),
        prompt=PROMPTS[folder],
        notes=NOTE + notes,
    )


TASKS: tuple[TaskSpec, ...] = (
    _task("cic", "DataCLUE CIC: customer intent of an e-commerce chat line, 118 labels (noisy train/dev)",
          _numbered(118), labels.CIC, pair=False,
          notes="labels.json has integer labels 0..117, read as strings; test_public uses 112 of them."),
    _task("tnews", "DataCLUE TNEWS: Toutiao news title category, 15 labels '0'..'14' (noisy train/dev)",
          _numbered(15), labels.TNEWS, pair=False,
          notes="Labels are '0'..'14' (not CLUE's '100'..'116'); input is the title (sentence) only."),
    _task("iflytek", "DataCLUE IFLYTEK: app description category, 119 labels (noisy dev)",
          _numbered(119), labels.IFLYTEK, pair=False,
          notes="raw_iflytek/train.json is not in the public snapshot of the repository: supply your own."),
    _task("afqmc", "DataCLUE AFQMC: do two customer questions mean the same? (noisy train/dev)",
          ("0", "1"), {"0": "different meaning", "1": "same meaning"}, pair=True,
          notes="raw_afqmc/readme.md's label meanings and sizes do not match the files (10,000/2,000/2,000)."),
    _task("qbqtc", "DataCLUE QBQTC: query-title relevance, 3 labels (0, 1, 2)",
          ("0", "1", "2"), {}, pair=True,
          notes="raw_qbqtc/train.json is empty upstream (move or add examples into it); the official processor's "
                "label list lacks '2', which dev and test_public use: this task has three labels."),
    _task("triclue", "DataCLUE TRICLUE: do two questions mean the same? (noisy train/dev)",
          ("0", "1"), {}, pair=True,
          notes="Labels are JSON integers and strings mixed; both are read as strings (compute_f1.py would crash)."),
)

TASK_NAMES = tuple(task.name for task in TASKS)

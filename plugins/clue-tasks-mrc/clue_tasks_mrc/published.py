"""Scores published for the reading-comprehension tasks, for reports to set runs beside.

Every number was read from the source named with it (the project's reference notes,
PUBLISHED.md, cite where each comes from); all are fine-tuned models. Metric names are
the tasks' own totals: ``em`` / ``f1`` for CMRC2018 and DRCD, ``accuracy`` for CHID and C3.

``version`` is the version of the data scored, as the task's test versions name it:

* test scores of CHID and C3 from the CLUE 1.0 era are on ``test1.0`` (version "1.0");
* CMRC2018 has one test file, CLUE's own 2,000-question held-out set, which both CLUE
  1.0 and 1.1 use and the task calls version "1.1"; DRCD's one test file is "1.0";
* a dev file is the same in every CLUE version: dev scores carry the version of the
  archive the task downloads (its newest test version: "1.1", DRCD "1.0").

Where two sources give the same score (the leaderboard's BERT-base and RoBERTa-wwm-ext
numbers reappear in the per-task table), it is listed once, naming both.

This module imports nothing heavy: the hook module reads it when specs are built.
"""

from __future__ import annotations

from clue_core.plugin import PublishedScore

LEADERBOARD = "CLUE 1.0 leaderboard, test (CLUEbenchmark/CLUE README, 排行榜, reading comprehension)"
PER_TASK = "CLUEbenchmark/CLUE README, per-task dev/test tables"
BOTH = f"{LEADERBOARD}; also {PER_TASK}"
PADDLE = "PaddleNLP CLUE benchmark, dev, best of a grid search (examples/benchmark/clue/README.md)"

#: The data version a dev score is on (see the module docstring).
DEV_VERSION = {"cmrc2018": "1.1", "drcd": "1.0", "chid": "1.1", "c3": "1.1"}
#: The test version of CLUE 1.0-era test scores, per task.
TEST_VERSION = {"cmrc2018": "1.1", "drcd": "1.0", "chid": "1.0", "c3": "1.0"}

# model: (CMRC2018 EM, CHID accuracy, C3 accuracy) on the CLUE 1.0 leaderboard
_LEADERBOARD_ROWS = {
    "BERT-base": (71.60, 82.04, 64.50),
    "BERT-wwm-ext": (73.95, 82.90, 68.50),
    "ERNIE-base": (74.7, 82.28, 64.10),
    "RoBERTa-large": (78.50, 84.50, 67.55),
    "XLNet-mid": (66.95, 83.47, 67.68),
    "ALBERT-base": (72.90, 71.77, 59.58),
    "ALBERT-large": (75.95, 74.18, 64.41),
    "ALBERT-xlarge": (76.30, 80.57, 70.32),
    "ALBERT-xxlarge": (75.15, 83.15, 73.28),
    "ALBERT-tiny": (53.35, 43.53, 50.26),
    "RoBERTa-wwm-ext": (75.20, 83.62, 66.50),
    "RoBERTa-wwm-large": (77.95, 85.37, 73.82),
}
#: Models of the per-task tables, whose test scores equal their leaderboard row.
_PER_TASK_MODELS = ("BERT-base", "RoBERTa-wwm-ext")


def _score(task: str, model: str, split: str, metric: str, value: float, source: str) -> PublishedScore:
    version = DEV_VERSION[task] if split == "dev" else TEST_VERSION[task]
    return PublishedScore(model=model, split=split, version=version, metric=metric, value=value, source=source,
                          mode="fine-tuned")


def _leaderboard(task: str, column: int, metric: str) -> tuple[PublishedScore, ...]:
    return tuple(
        _score(task, model, "test", metric, row[column], BOTH if model in _PER_TASK_MODELS else LEADERBOARD)
        for model, row in _LEADERBOARD_ROWS.items()
    )


CMRC2018 = (
    *_leaderboard("cmrc2018", 0, "em"),
    _score("cmrc2018", "BERT-base", "test", "f1", 88.10, PER_TASK),
    _score("cmrc2018", "BERT-base", "dev", "f1", 85.48, PER_TASK),
    _score("cmrc2018", "BERT-base", "dev", "em", 64.77, PER_TASK),
    _score("cmrc2018", "RoBERTa-wwm-ext", "test", "f1", 90.41, PER_TASK),
    _score("cmrc2018", "RoBERTa-wwm-ext", "dev", "f1", 87.28, PER_TASK),
    _score("cmrc2018", "RoBERTa-wwm-ext", "dev", "em", 67.89, PER_TASK),
    _score("cmrc2018", "BERT-Base-Chinese", "dev", "em", 65.30, PADDLE),
    _score("cmrc2018", "BERT-Base-Chinese", "dev", "f1", 86.53, PADDLE),
    _score("cmrc2018", "HFL/RoBERTa-wwm-ext", "dev", "em", 68.39, PADDLE),
    _score("cmrc2018", "HFL/RoBERTa-wwm-ext", "dev", "f1", 88.50, PADDLE),
)

DRCD = (
    _score("drcd", "BERT-base", "dev", "f1", 92.30, PER_TASK),
    _score("drcd", "BERT-base", "dev", "em", 86.60, PER_TASK),
    _score("drcd", "BERT-base", "test", "f1", 91.46, PER_TASK),
    _score("drcd", "BERT-base", "test", "em", 85.49, PER_TASK),
    _score("drcd", "RoBERTa-wwm-ext", "dev", "f1", 94.26, PER_TASK),
    _score("drcd", "RoBERTa-wwm-ext", "dev", "em", 89.29, PER_TASK),
    _score("drcd", "RoBERTa-wwm-ext", "test", "f1", 93.53, PER_TASK),
    _score("drcd", "RoBERTa-wwm-ext", "test", "em", 88.12, PER_TASK),
)

CHID = (
    *_leaderboard("chid", 1, "accuracy"),
    _score("chid", "BERT-base", "dev", "accuracy", 82.20, PER_TASK),
    _score("chid", "RoBERTa-wwm-ext", "dev", "accuracy", 83.78, PER_TASK),
    _score("chid", "BERT-Base-Chinese", "dev", "accuracy", 82.01, PADDLE),
    _score("chid", "HFL/RoBERTa-wwm-ext", "dev", "accuracy", 83.43, PADDLE),
)

C3 = (
    *_leaderboard("c3", 2, "accuracy"),
    _score("c3", "BERT-base", "dev", "accuracy", 65.70, PER_TASK),
    _score("c3", "RoBERTa-wwm-ext", "dev", "accuracy", 67.06, PER_TASK),
    _score("c3", "BERT-Base-Chinese", "dev", "accuracy", 65.38, PADDLE),
    _score("c3", "HFL/RoBERTa-wwm-ext", "dev", "accuracy", 68.03, PADDLE),
)

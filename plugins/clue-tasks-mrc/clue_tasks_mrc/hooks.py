"""Hook implementations of clue-tasks-mrc; must stay cheap to import (specs only).

Readers, decoders and the metric are named as ``"module:attr"`` strings; NLTK (used by
the metric) is imported only when a score is computed.
"""

from __future__ import annotations

from clue_core.hookspecs import hookimpl
from clue_core.kinds import MULTIPLE_CHOICE, SPAN
from clue_core.specs import DataSource, MetricSpec, TaskSpec, TestVersion

GROUP = "mrc"
_ARCHIVES = "https://storage.googleapis.com/cluebenchmark/tasks/"
_PACKAGE = "clue_tasks_mrc"

#: Baseline settings for SQuAD-style span extraction (CLUE baselines, FORMATS.md).
SPAN_HYPERPARAMETERS = {
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

CMRC2018 = TaskSpec(
    name="cmrc2018",
    kind=SPAN,
    description="CMRC2018: span-extraction reading comprehension on Simplified Chinese Wikipedia",
    reader=f"{_PACKAGE}.squad:read_cmrc2018",
    metrics=("cmrc2018",),
    primary_metric="em",
    group=GROUP,
    splits=("train", "dev", "trial"),
    test_versions=(TestVersion(version="1.1", split="test", submission_file="cmrc2018_predict.json"),),
    writer="json_object",
    source=DataSource(
        url=_ARCHIVES + "cmrc2018_public.zip",
        filename="cmrc2018_public.zip",
        size=3405146,
        sha256="6c63dc27e728ec5231aeb7d2861b4c90b6c116390582e0c44416cf3edf030b16",
    ),
    data_files=("train.json", "dev.json", "test.json", "trial.json"),
    sample=f"{_PACKAGE}:samples/cmrc2018",
    hyperparameters=SPAN_HYPERPARAMETERS,
    notes=(
        "10,142 / 3,219 / 2,000 questions (trial 1,002). Test answers are placeholders "
        "(FAKE_ANSWER_n) and are never scored. Scored with the official CMRC2018 EM/F1; "
        "the leaderboard uses EM."
    ),
)

DRCD = TaskSpec(
    name="drcd",
    kind=SPAN,
    description="DRCD: span-extraction reading comprehension on Traditional Chinese Wikipedia",
    reader=f"{_PACKAGE}.squad:read_drcd",
    metrics=("cmrc2018",),
    primary_metric="em",
    group=None,
    splits=("train", "dev"),
    test_versions=(TestVersion(version="1.0", split="test", submission_file="drcd_predict.json"),),
    writer="json_object",
    source=DataSource(
        url=_ARCHIVES + "drcd_public.zip",
        filename="drcd_public.zip",
        size=7264200,
        sha256="f03a38bded37572e224b69b822794eca6218f9584afc0918bf8aa2bc77cf968d",
    ),
    data_files=("train.json", "dev.json", "test.json"),
    sample=f"{_PACKAGE}:samples/drcd",
    hyperparameters=SPAN_HYPERPARAMETERS,
    notes=(
        "26,936 / 3,524 / 3,493 questions, kept in Traditional Chinese (answers are cut from "
        "the context's own characters). Not part of the CLUE 1.1 leaderboard; predictions "
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
    group=GROUP,
    splits=("train", "dev"),
    test_versions=(
        TestVersion(version="1.1", split="test1.1", submission_file="chid11_predict.json"),
        TestVersion(version="1.0", split="test1.0", submission_file="chid10_predict.json"),
    ),
    writer="json_object",
    source=DataSource(
        url=_ARCHIVES + "chid_public.zip",
        filename="chid_public.zip",
        size=139199202,
        sha256="be02dbcc41a9c237542141f53836e70a209f7a686cf894891411c7e5534f73a4",
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
    hyperparameters={
        "max_length": 64,
        "batch_size": 24,
        "learning_rate": 2e-5,
        "epochs": 3,
        "warmup_ratio": 0.06,
        "chid_decode": "exact",
    },
    notes=(
        "84,709 / 3,218 / 3,447 lines (test1.0: 3,231). One example per blank: a window of "
        "24 characters each side, the blank as '____', the passage's other blanks as '□□□□'. "
        "Blanks of a line take distinct candidates: the decode step assigns them jointly, "
        "exactly (maximum summed log-probability) by default; highest-first as the CLUE baselines "
        "did is clue_tasks_mrc.chid:decode_greedy, chosen by chid_decode=greedy where the runner "
        "passes its config to decode. Accuracy is per blank."
    ),
)

C3 = TaskSpec(
    name="c3",
    kind=MULTIPLE_CHOICE,
    description="C3: multiple-choice reading comprehension over dialogues and mixed-genre texts",
    reader=f"{_PACKAGE}.c3:read",
    metrics=("accuracy",),
    primary_metric="accuracy",
    group=GROUP,
    splits=("train", "dev"),
    test_versions=(
        TestVersion(version="1.1", split="test1.1", submission_file="c311_predict.json"),
        TestVersion(version="1.0", split="test1.0", submission_file="c310_predict.json"),
    ),
    writer="jsonl_labels",
    source=DataSource(
        url=_ARCHIVES + "c3_public.zip",
        filename="c3_public.zip",
        size=3495930,
        sha256="20dfa683c57c9795129e22d8dd0c299d6b2a29fbc84758ef2ebdb8b2904d7e12",
    ),
    data_files=("d-train.json", "m-train.json", "d-dev.json", "m-dev.json", "test1.0.json", "test1.1.json"),
    sample=f"{_PACKAGE}:samples/c3",
    decode=f"{_PACKAGE}.c3:decode",
    hyperparameters={"max_length": 512, "batch_size": 24, "learning_rate": 2e-5, "epochs": 8, "warmup_ratio": 0.1},
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
)


@hookimpl
def clue_tasks() -> list:
    return [CMRC2018, DRCD, CHID, C3]


@hookimpl
def clue_metrics() -> list:
    return [CMRC2018_METRIC]

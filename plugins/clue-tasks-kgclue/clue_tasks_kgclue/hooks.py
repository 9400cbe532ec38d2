"""The plugin's hooks: cheap to import (only clue_core.plugin; specs, no code).

KgCLUE (CLUEbenchmark/KgCLUE): a question answered by one triple of a knowledge base. The plugin
declares its own example kind, ``kbqa_triple`` (its contract: :mod:`clue_tasks_kgclue.triples`),
the ``kgclue`` task on the official files, the official EM/F1 metric and the leaderboard file
``kgclue_predict.json``. Readers, the metric and the writer are named as ``"module:attr"`` strings.
"""

from __future__ import annotations

from clue_core.plugin import (
    KindSpec,
    MetricSpec,
    Prompt,
    PromptVariant,
    PublishedScore,
    Setting,
    SubmissionWriterSpec,
    TaskSpec,
    TestVersion,
    hookimpl,
)

_PACKAGE = "clue_tasks_kgclue"
#: The kind's name, which model plugins match (they never import this plugin).
KBQA_TRIPLE = "kbqa_triple"
WRITER = "kgclue_answers"
_SOURCE = "KgCLUE README 实验结果 (leaderboard screenshot, 2021-12; Score = 0.5·EM_O + 0.5·F1_O)"

KIND = KindSpec(
    KBQA_TRIPLE,
    "a question answered by one knowledge-base triple (subject, predicate, object); candidates from a KB when given",
    example=f"{_PACKAGE}.triples:KbqaExample",
    prediction="the answer text 'subject ||| predicate ||| object' (a missing part an empty string)",
    check_prediction=f"{_PACKAGE}.triples:check_prediction",
    check_example=f"{_PACKAGE}.triples:check_example",
    gold=f"{_PACKAGE}.triples:gold",
    prompt_fields=("question", "candidates"),
)

KB = Setting(
    "kb",
    str,
    "",
    "KgCLUE's Knowledge.txt (head<TAB>relation<TAB>tail; distributed apart from the data): each question "
    "gets the triples of the longest entity name it contains as candidates, and the file's sha256 joins "
    "the run's data checksums; a relative path is taken from the current folder, else a plain file name "
    "from the data folder (--sample --set kb=Knowledge.txt: the sample's); empty: no candidates",
    report=True,
)

PROMPT = Prompt(
    instruction=("根据问题，给出回答它的知识库三元组，格式为“主语 ||| 谓语 ||| 宾语”。"
                 "主语写实体全名（有消歧义说明的连同括号写出），不要解释。"),
    template="问题：{question}",
    answer_prefix="答案：",
    render=f"{_PACKAGE}.prompting:render",  # an LLM's question (with the KB's candidates) and answer (prompting.py)
    parse=f"{_PACKAGE}.prompting:parse",
    answer=f"{_PACKAGE}.prompting:answer",
    # --set prompt_variants=all: render writes the question, so only the instruction and the prefix are reworded
    variants=(
        PromptVariant("plain", instruction="用知识库三元组“主语 ||| 谓语 ||| 宾语”回答问题，"
                      "主语写实体全名，不要解释。"),
        PromptVariant("steps", instruction="先找出问题所问的实体（写全名，有消歧义说明的连同括号写出），再找出所问的"
                      "关系，然后给出回答它的知识库三元组，格式为“主语 ||| 谓语 ||| 宾语”，不要解释。"),
        PromptVariant("prefix", answer_prefix="答："),
    ),
)


def _published(model: str, values: tuple[float, ...]) -> tuple[PublishedScore, ...]:
    names = ("emf1", "em_s", "em_p", "em_o", "em_all", "f1_s", "f1_p", "f1_o", "f1_all")
    return tuple(PublishedScore(model=model, split="test", version="1.0", metric=name, value=value,
                                source=_SOURCE) for name, value in zip(names, values))


KGCLUE = TaskSpec(
    name="kgclue",
    kind=KBQA_TRIPLE,
    description="KgCLUE: knowledge-base question answering, a question to 'subject ||| predicate ||| object'",
    reader=f"{_PACKAGE}.reader:read",
    metrics=("kgclue",),
    primary_metric="emf1",
    splits=("train", "dev"),
    scored_splits=("test_public",),
    test_versions=(TestVersion(version="1.0", split="test", submission_file="kgclue_predict.json"),),
    writer=WRITER,
    data_files=("train.json", "dev.json", "test_public.json", "test.json"),
    sample=f"{_PACKAGE}:samples/kgclue",
    reader_settings=(KB,),
    prompt=PROMPT,
    published=(
        *_published("RoBERTa-wwm-ext,3L (KgCLUE baseline)",
                    (83.941, 86.133, 83.867, 83.033, 80.800, 88.855, 86.292, 84.850, 86.737)),
        *_published("RoFormer + Seq2Seq + Trie (bojone)",
                    (87.239, 90.367, 86.700, 86.033, 80.500, 96.783, 90.605, 88.446, 92.427)),
    ),
    notes=(
        "18,000 / 2,000 questions, test_public 2,000 (answered, scored beside dev), test 3,000 (the "
        "leaderboard's). The files are CLUEbenchmark/KgCLUE's datasets/ (give that folder as --data-dir); "
        "the knowledge base Knowledge.txt is distributed apart and optional (--set kb=PATH). Scored with "
        "the official evaluate_f1_em.py (primary 0.5·EM_O + 0.5·F1_O); an answer that does not split in "
        "three parts is scored as wrong and counted in 'malformed', where the official script stops."
    ),
)

METRIC = MetricSpec(
    name="kgclue",
    compute=f"{_PACKAGE}.metric:compute",
    description=("Official KgCLUE evaluate_f1_em.py (x100): normalised EM and LCS-F1 of subject, predicate, "
                 "object and all; emf1 = 0.5·em_o + 0.5·f1_o; malformed answers counted, scored wrong"),
    kinds=(KBQA_TRIPLE,),
    produces=("emf1", "em_all", "em_s", "em_p", "em_o", "f1_all", "f1_s", "f1_p", "f1_o", "malformed"),
    counts=("malformed",),
)

SUBMISSION_WRITER = SubmissionWriterSpec(
    WRITER,
    f"{_PACKAGE}.writer:write",
    f"{_PACKAGE}.writer:read",
    'KgCLUE kgclue_predict.json: JSON Lines {"id", "answer": "S ||| P ||| O"} in test-file order',
    ordered=True,
)


@hookimpl
def clue_kinds() -> list[KindSpec]:
    return [KIND]


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return [KGCLUE]


@hookimpl
def clue_metrics() -> list[MetricSpec]:
    return [METRIC]


@hookimpl
def clue_submission_writers() -> list[SubmissionWriterSpec]:
    return [SUBMISSION_WRITER]

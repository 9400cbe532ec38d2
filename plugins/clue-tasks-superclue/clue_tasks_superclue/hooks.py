"""Hook implementations of clue-tasks-superclue; must stay cheap to import (specs only).

Two tasks read the same question file (docs/superclue.md): ``superclue`` asks every
question open and scores it by code or by a judge model, ``superclue-close`` asks the
questions that carry a closed form as multiple choice. ``clue-core compare`` (judged runs
against a reference run) is this plugin's command. Readers, metrics and the command are named
as ``"module:attr"`` strings and imported only when a run or the command needs them.
"""

from __future__ import annotations

from clue_core.plugin import (
    MULTIPLE_CHOICE,
    CommandSpec,
    KindSpec,
    MetricSpec,
    Prompt,
    ReportSectionSpec,
    Setting,
    TaskSpec,
    hookimpl,
)
from clue_tasks_superclue import prompt_variants

_PACKAGE = "clue_tasks_superclue"
#: This plugin's example kind: open questions (clue_tasks_superclue.examples), answered in free text.
OPEN_QUESTION = "open_question"
SAMPLE = f"{_PACKAGE}:sample"
DATA_FILES = ("dev.jsonl",)

JUDGE = Setting(
    "judge", str, "",
    "the model that grades open answers (any model name, e.g. openai:<name> or llm:<hub id>), or a panel of "
    "several separated by commas; its own settings go under judge. (judge.base_url=...). Empty: no judge, "
    "judge-method questions are counted as unjudged",
    names_model=True, report=True,
)
JUDGE_AGGREGATE = Setting(
    "judge_aggregate", str, "mean",
    "with a panel of judges (judge=a,b,c; judge.<i>.<setting> for the i-th): how their grades make one per "
    "question: mean, median, or majority (the grade band most judges give, ties to the lower band)",
    choices=("mean", "median", "majority"), report=True,
)
REFERENCE_RUN = Setting(
    "reference_run", str, "",
    "the reference model's run folder (holding superclue/predictions/dev.jsonl): every question it answered is "
    "also judged pairwise, both orders; needs a judge",
    report=True,
)

#: Answers are free text of any length: no newline stop, room for an essay or a program.
#: The judge writes its reasons and the grade line, so it gets room too.
RECOMMENDATIONS = {
    "mode": "generate",
    "stop": "",
    "max_new_tokens": 1024,
    "judge.mode": "generate",
    "judge.stop": "",
    "judge.max_new_tokens": 512,
}

SUPERCLUE = TaskSpec(
    name="superclue",
    kind=OPEN_QUESTION,
    description="SuperCLUE-style open questions by dimension, graded by a judge model or checked by code "
                "(verifiable instructions, tool calls); optional pairwise judging against a reference run",
    reader=f"{_PACKAGE}.reader:read",
    metrics=("superclue",),
    primary_metric="score",
    splits=("dev",),
    data_files=DATA_FILES,
    sample=SAMPLE,
    recommendations=RECOMMENDATIONS,
    # llm-tiny is a random toy: long answers would only cost minutes (and lengthen every judge prompt)
    model_recommendations={"llm-tiny": {"max_new_tokens": 32}},
    # no instruction, no template: every turn is asked exactly as the question file writes it
    prompt=Prompt(instruction="", template="", answer_prefix=""),
    notes=(
        "The bundled sample is written by this project (SuperCLUE's own questions are private): 11 dimensions "
        "in 理科, 文科 and Hard, single- and multi-turn questions, tool use and verifiable instructions. "
        "Scores are 0-100: a question's points (judge grade 1-10, or 10/0 by code) times 10."
    ),
)

CLOSE = TaskSpec(
    name="superclue-close",
    kind=MULTIPLE_CHOICE,
    description="The SuperCLUE questions that carry a closed form, asked as multiple choice; accuracy overall "
                "and per dimension",
    reader=f"{_PACKAGE}.reader:read_close",
    metrics=("superclue_close",),
    primary_metric="accuracy",
    splits=("dev",),
    data_files=DATA_FILES,
    sample=SAMPLE,
    prompt=Prompt(
        instruction="请从选项中选出问题的正确答案。",
        template="问题：{question}\n选项：\n{choices}",
        answer_prefix="答案：",
        variants=prompt_variants.CLOSE,  # --set prompt_variants=all
    ),
    notes="Example ids are '<dimension>/<question id>', so accuracy per dimension needs nothing but the ids.",
)

#: The totals that count questions or judgments (printed whole); the pairwise ones come with
#: a reference run, the judge cache ones with a judge whose learner caches.
SUPERCLUE_COUNTS = ("questions", "judged", "unjudged", "repair_asked", "repaired", "pairwise_judged",
                    "pairwise_unjudged", "pairwise_missing", "judge_cached", "judge_generated")

#: Agreement between judges: position consistency (0-100) with a reference run, Krippendorff's alpha and
#: Fleiss' kappa with a panel; each left out where undefined (aggregate.agreement).
AGREEMENT = ("position_consistency", "judge_alpha", "judge_kappa")

SUPERCLUE_METRIC = MetricSpec(
    name="superclue",
    compute=f"{_PACKAGE}.metric:compute",
    description="per-question points (judge grade 1-10, verifiable constraints or the expected tool call by "
                "code), aggregated per dimension, per category and in total on 0-100, with judged/unjudged and "
                "repair counts, IFEval-style strict/loose accuracy and pairwise win/tie/loss",
    kinds=(OPEN_QUESTION,),
    produces=("score", *SUPERCLUE_COUNTS, *AGREEMENT),
    counts=SUPERCLUE_COUNTS,
    settings=(JUDGE, JUDGE_AGGREGATE, REFERENCE_RUN),
    uses_model=True,
    # a wrong reference_run must stop the run when planned, not after earlier tasks are written
    check=f"{_PACKAGE}.pairwise:check_settings",
)

CLOSE_METRIC = MetricSpec(
    name="superclue_close",
    compute=f"{_PACKAGE}.close_metric:compute",
    description="multiple-choice accuracy overall and per dimension (close:<dimension>)",
    kinds=(MULTIPLE_CHOICE,),
    produces=("accuracy",),
)


#: SuperCLUE-CPIFOpen (Chinese precise instruction following): each prompt's own Python checker decides, run
#: as the official evaluator runs it but in a sandbox (cpif_metric, sandbox; docs/superclue.md).
#: Declared by the metric (it runs the checkers) and by the reader (its note in the manifest says which isolation
#: the run plans: bubblewrap or plain processes).
SANDBOX = Setting("sandbox", str, "auto", "where checkers run: auto (bubblewrap if it works, else a fenced process, "
                  "with one warning), bwrap (required), process", choices=("auto", "bwrap", "process"))

CPIF = TaskSpec(
    name="superclue-cpif",
    kind=OPEN_QUESTION,
    description="SuperCLUE-CPIFOpen: Chinese precise instruction following, each answer checked by the prompt's "
                "own checker code (the official evaluator's rules) in a sandbox",
    reader=f"{_PACKAGE}.cpif_reader:read",
    metrics=("superclue_cpif",),
    primary_metric="accuracy",
    splits=("dev",),
    data_files=("superclue-all-jqzl.json",),
    reader_settings=(SANDBOX,),
    sample=f"{_PACKAGE}:cpif_sample",
    recommendations={"mode": "generate", "stop": "", "max_new_tokens": 2048},
    model_recommendations={"llm-tiny": {"max_new_tokens": 32}},
    prompt=Prompt(instruction="", template="", answer_prefix=""),  # each prompt asked exactly as the file has it
    notes="The bundled sample (6 prompts with checkers) is written by this project; the official file is "
          "CLUEbenchmark/SuperCLUE-CPIFOpen's superclue-all-jqzl.json (--data-dir).",
)

CPIF_COUNTS = ("prompts", "passed", "checker_errors", "sandbox_bwrap", "sandbox_landlock")

CPIF_METRIC = MetricSpec(
    name="superclue_cpif",
    compute=f"{_PACKAGE}.cpif_metric:compute",
    description="the percentage of prompts whose checker passes the answer (official SuperCLUE-CPIFOpen rules, run "
                "in a sandbox); checker_errors counts checkers that raised, timed out or were refused; sandbox_bwrap "
                "(1 bubblewrap, 0 plain processes) and sandbox_landlock (its ABI, 0 none) say what held",
    kinds=(OPEN_QUESTION,),
    produces=("accuracy", *CPIF_COUNTS),
    counts=CPIF_COUNTS,
    settings=(
        SANDBOX,
        Setting("sandbox_timeout", float, 10.0, "wall-clock seconds per check", above=0),
        Setting("sandbox_cpu", float, 5.0, "CPU seconds per check", above=0),
        Setting("sandbox_memory_mb", int, 512, "address-space limit of a checker worker, MB", minimum=64),
        Setting("sandbox_workers", int, 2, "checker worker processes run in parallel", minimum=1, maximum=64),
        Setting("sandbox_imports", str, "", "modules checkers may import beyond the official ones, comma-separated"),
        Setting("sandbox_uid", int, 65534, "the unprivileged uid and gid a checker started as root drops to (where it "
                "cannot read the Python installation: uid 0 without any capability)", minimum=1),
    ),
    # sandbox=bwrap without bubblewrap must stop the run when planned, not after every answer is generated
    check=f"{_PACKAGE}.cpif_metric:check_settings",
)


OPEN_QUESTION_KIND = KindSpec(
    OPEN_QUESTION, "an open question (one or more turns) answered in free text, graded by a judge or by code",
    f"{_PACKAGE}.examples:OpenQuestionExample", "an answer text",
    f"{_PACKAGE}.examples:check_prediction", f"{_PACKAGE}.examples:check_example",
    gold="reference", prompt_fields=("dimension", "category"), open=True,
)


@hookimpl
def clue_kinds() -> list[KindSpec]:
    """Open questions, scored without gold (a judge reads the rubric): the kernel knows none of their fields."""
    return [OPEN_QUESTION_KIND]


@hookimpl
def clue_tasks() -> list[TaskSpec]:
    return [SUPERCLUE, CLOSE, CPIF]


@hookimpl
def clue_metrics() -> list[MetricSpec]:
    return [SUPERCLUE_METRIC, CLOSE_METRIC, CPIF_METRIC]


#: ``clue-core compare``: its help is written here so that ``clue-core --help`` imports no click command.
COMPARE = CommandSpec(
    name="compare",
    help="Compare SuperCLUE-family runs (judged or pass/fail): Bradley-Terry, Elo, points (comparison.json)",
    command=f"{_PACKAGE}.compare.cli:compare",
)


@hookimpl
def clue_commands() -> list[CommandSpec]:
    return [COMPARE]


#: The SuperCLUE view of ``clue-core report`` (clue-report): the comparison.json files among the report's
#: paths, shown as scores, win/tie/loss, the quadrant and maturity (``report_section``, imported only then).
SUPERCLUE_SECTION = ReportSectionSpec(
    name="superclue",
    title="SuperCLUE",
    description="comparison.json of SuperCLUE-family runs (clue-core compare): ratings, scores per dimension and "
                "category, win/tie/loss against the reference, the capability quadrant, maturity",
    build=f"{_PACKAGE}.report_section:build",
    html=f"{_PACKAGE}.report_section:html",
    markdown=f"{_PACKAGE}.report_section:markdown",
    inputs=("comparison.json",),
    empty=(),  # report.json has always held "comparisons": [] when there was none
    key="comparisons",
)


#: Where each superclue-cpif run's checkers ran (bubblewrap or plain processes, Landlock), from the report's own
#: run entries: a pass rate is only as good as the fence it was measured behind (``report_sandbox``).
CPIF_SANDBOX_SECTION = ReportSectionSpec(
    name="superclue-cpif-sandbox",
    title="SuperCLUE-CPIFOpen checker sandbox",
    description="where each superclue-cpif run's checkers ran: bubblewrap or plain processes, Landlock, as planned",
    build=f"{_PACKAGE}.report_sandbox:build",
    html=f"{_PACKAGE}.report_sandbox:html",
    markdown=f"{_PACKAGE}.report_sandbox:markdown",
    key="cpif_sandbox",
    order=110,
)


@hookimpl
def clue_report_sections() -> list[ReportSectionSpec]:
    return [SUPERCLUE_SECTION, CPIF_SANDBOX_SECTION]

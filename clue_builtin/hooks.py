"""The built-in plugin's hooks: three example kinds, metrics, the two submission file shapes, the
baseline model, and the ``list``, ``info`` and ``check`` commands.

It is registered through the same ``clue_core`` entry-point group as any third-party plugin
(``builtin = "clue_builtin.hooks"``, first in load order), and names its code as lazy
``"module:attr"`` references like one, so listing plugins imports only this module and
:mod:`clue_core.plugin`.
"""

from __future__ import annotations

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    SPAN,
    CommandSpec,
    KindSpec,
    MetricSpec,
    ModelSpec,
    SubmissionWriterSpec,
    hookimpl,
)

#: The circular metric's totals (declared here so listing plugins imports no metric code)
PRODUCES = ("circular_accuracy", "circular_questions", *(f"pick_rate_{letter}" for letter in
                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ"), "pick_rate_none")
#: The prompt spread's totals besides each variant's prompt_variant_<name> (clue_builtin.prompt_spread.PRODUCES)
SPREAD = ("prompt_spread_mean", "prompt_spread_std", "prompt_spread_prompts")


@hookimpl
def clue_kinds() -> list[KindSpec]:
    """The three kinds several task plugins share; their checks are :mod:`clue_builtin.kinds`."""
    return [
        KindSpec(CLASSIFICATION, "a text or text pair with one label of the task's labels",
                 "clue_core.plugin:ClassificationExample", "a label string",
                 "clue_builtin.kinds:label_prediction", "clue_builtin.kinds:check_classification",
                 gold="label", prompt_fields=("text", "text_pair")),
        KindSpec(SPAN, "a question answered by a span of its context (SQuAD style)",
                 "clue_core.plugin:SpanExample", "an answer text",
                 "clue_builtin.kinds:span_prediction", "clue_builtin.kinds:check_span",
                 gold="answers", prompt_fields=("context", "question", "title"),
                 record_gold="clue_builtin.kinds:answer_texts"),
        # ``choices`` is a prompt field a model renders itself (a numbered list)
        KindSpec(MULTIPLE_CHOICE, "a question with a variable number of choices, one of them right",
                 "clue_core.plugin:MultipleChoiceExample", "a choice index",
                 "clue_builtin.kinds:choice_prediction", "clue_builtin.kinds:check_choice",
                 gold="label", prompt_fields=("context", "question", "choices")),
    ]


@hookimpl
def clue_metrics() -> list[MetricSpec]:
    """The two metrics every single-gold-value kind can use; the tasks' default (``accuracy``) is one."""
    return [
        MetricSpec("accuracy", "clue_builtin.metrics:accuracy", "share of correct predictions ×100",
                   (CLASSIFICATION, MULTIPLE_CHOICE)),
        MetricSpec("macro_f1", "clue_builtin.metrics:macro_f1", "unweighted mean of per-class F1 ×100",
                   (CLASSIFICATION, MULTIPLE_CHOICE)),
        # no task names it: a learner that asked each question with its choices reordered adds it
        # (its extra_metrics; the LLM models' --set circular=all), reading raw["circular"]
        MetricSpec("circular", "clue_builtin.circular:compute", "circular evaluation: right under every order of "
                   "the choices ×100, and the share of answers picking each shown position ×100",
                   (MULTIPLE_CHOICE,), produces=PRODUCES, counts=("circular_questions",)),
        # no task names it either: an LLM asked with --set prompt_variants=all adds it, reading raw["prompt_variants"]
        # (uses_model: it scores each variant's answers through the run's context.score, as the run's are scored)
        MetricSpec("prompt_spread", "clue_builtin.prompt_spread:compute", "the primary metric under each of the "
                   "task's prompt variants (prompt_variant_<name>), and their mean and std across prompts",
                   produces=SPREAD, uses_model=True, counts=("prompt_spread_prompts",)),
    ]


@hookimpl
def clue_submission_writers() -> list[SubmissionWriterSpec]:
    """The two leaderboard file shapes every CLUE task uses; ``jsonl_labels`` is the tasks' default."""
    return [
        SubmissionWriterSpec("jsonl_labels", "clue_builtin.writers:write_jsonl_labels",
                             "clue_builtin.writers:read_jsonl_labels",
                             'JSON Lines {"id", "label"} in test-file order', ordered=True),
        SubmissionWriterSpec("json_object", "clue_builtin.writers:write_json_object",
                             "clue_builtin.writers:read_json_object",
                             "one JSON object {id: prediction}", ordered=False),
    ]


@hookimpl
def clue_models() -> list[ModelSpec]:
    """The torch-free baseline, so every task runs end to end on a bare install (and in the tests)."""
    return [
        ModelSpec("baseline", "clue_builtin.baseline:create", (CLASSIFICATION, SPAN, MULTIPLE_CHOICE),
                  "pure-Python floor: majority label, most frequent choice, first sentence",
                  size_class="none", parameters=0, category="baseline"),
    ]


@hookimpl
def clue_commands() -> list[CommandSpec]:
    """The registry as tables, a task in lines and the deep checks (:mod:`clue_builtin.commands`): features,
    not kernel, so they come the way a third party's commands do. ``help`` is each command's docstring,
    which ``clue-core --help`` shortens as click does its own commands'."""
    return [
        CommandSpec("check", "Import every reference of each task and read its sample (or --data-dir) end to end.",
                    "clue_builtin.commands:check"),
        CommandSpec("info", "Show a task: kind, labels, metrics, data, submission files, settings.",
                    "clue_builtin.commands:info"),
        CommandSpec("list", "List plugins (default), tasks, models, metrics, submission writers, plugin commands, "
                    "report sections, data fetchers or example kinds.", "clue_builtin.commands:list_command"),
    ]

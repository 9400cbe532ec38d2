"""The built-in plugin's hooks: metrics, the two submission file shapes, and the baseline model.

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
    MetricSpec,
    ModelSpec,
    SubmissionWriterSpec,
    hookimpl,
)


@hookimpl
def clue_metrics() -> list[MetricSpec]:
    """The two metrics every single-gold-value kind can use; the tasks' default (``accuracy``) is one."""
    return [
        MetricSpec("accuracy", "clue_builtin.metrics:accuracy", "share of correct predictions ×100",
                   (CLASSIFICATION, MULTIPLE_CHOICE)),
        MetricSpec("macro_f1", "clue_builtin.metrics:macro_f1", "unweighted mean of per-class F1 ×100",
                   (CLASSIFICATION, MULTIPLE_CHOICE)),
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

"""The built-in plugin: metrics, the two submission file shapes, and the baseline model.

It is registered through the same ``clue_core`` entry-point group as any third-party
plugin, and references its code lazily like one.
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
    return [
        MetricSpec("accuracy", "clue_core.metrics:accuracy", "share of correct predictions ×100",
                   (CLASSIFICATION, MULTIPLE_CHOICE)),
        MetricSpec("macro_f1", "clue_core.metrics:macro_f1", "unweighted mean of per-class F1 ×100",
                   (CLASSIFICATION, MULTIPLE_CHOICE)),
    ]


@hookimpl
def clue_submission_writers() -> list[SubmissionWriterSpec]:
    return [
        SubmissionWriterSpec("jsonl_labels", "clue_core.writers:write_jsonl_labels",
                             "clue_core.writers:read_jsonl_labels",
                             'JSON Lines {"id", "label"} in test-file order', ordered=True),
        SubmissionWriterSpec("json_object", "clue_core.writers:write_json_object",
                             "clue_core.writers:read_json_object",
                             "one JSON object {id: prediction}", ordered=False),
    ]


@hookimpl
def clue_models() -> list[ModelSpec]:
    return [
        ModelSpec("baseline", "clue_core.baseline:create", (CLASSIFICATION, SPAN, MULTIPLE_CHOICE),
                  "pure-Python floor: majority label, most frequent choice, first sentence",
                  size_class="none", parameters=0, category="baseline"),
    ]

"""The four collection hooks every clue-core plugin may implement.

Each hook takes no arguments and returns a list of frozen specs. A hook module must stay
cheap to import: no torch, transformers, accelerate or datasets at import time; heavy
code is named as ``"module:attr"`` strings inside the specs.
"""

from __future__ import annotations

import pluggy

NAME = "clue_core"
hookspec = pluggy.HookspecMarker(NAME)
hookimpl = pluggy.HookimplMarker(NAME)


@hookspec
def clue_tasks() -> list:  # list[TaskSpec]
    """Return the tasks this plugin provides."""


@hookspec
def clue_models() -> list:  # list[ModelSpec]
    """Return the models (or model families) this plugin provides."""


@hookspec
def clue_metrics() -> list:  # list[MetricSpec]
    """Return the metrics this plugin provides."""


@hookspec
def clue_submission_writers() -> list:  # list[SubmissionWriterSpec]
    """Return the submission file formats this plugin provides."""


HOOK_NAMES = ("clue_tasks", "clue_models", "clue_metrics", "clue_submission_writers")

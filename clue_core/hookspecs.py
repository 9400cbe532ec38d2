"""The collection hooks every clue-core plugin may implement.

Each hook takes no arguments and returns a list of specs; a plugin implements any of
them with ``@hookimpl`` from :mod:`clue_core.plugin`. Hook modules must stay cheap to
import (no torch, transformers, accelerate or datasets at import time): heavy code is
named inside the specs as ``"module:attr"`` strings. Once every plugin is loaded the
kernel checks each spec (names resolve, the primary metric is produced, the sample
exists); a spec that fails is dropped and the error shows on its plugin's row in
``clue-core list``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

from clue_core.discovery import GROUP as NAME  # the hooks' pluggy project is the plugins' entry-point group

if TYPE_CHECKING:
    from clue_core.fetching import FetcherSpec, OpenerSpec
    from clue_core.kinds import KindSpec
    from clue_core.specs import CommandSpec, MetricSpec, ModelSpec, ReportSectionSpec, SubmissionWriterSpec, TaskSpec

hookspec = pluggy.HookspecMarker(NAME)
hookimpl = pluggy.HookimplMarker(NAME)


@hookspec
def clue_tasks() -> list[TaskSpec]:
    """The tasks this plugin provides.

    Each :class:`~clue_core.specs.TaskSpec` names its example kind, its reader
    (``read(task, data_dir, split) -> SplitData``), its metrics and primary metric, its
    submission writer, its test versions with their leaderboard file names, where its
    data comes from, the settings it and its decode step read, its recommended values,
    how a large language model is asked it (``prompt``) and the scores published for it.
    """


@hookspec
def clue_models() -> list[ModelSpec]:
    """The models (or model families, ``name:<argument>``) this plugin provides.

    Each :class:`~clue_core.specs.ModelSpec` names the kinds it supports, its factory
    (``create(argument, task, settings) -> Learner``), the settings it reads, its
    recommended values by example kind, and whether it needs training.
    """


@hookspec
def clue_metrics() -> list[MetricSpec]:
    """The metrics this plugin provides.

    Each :class:`~clue_core.specs.MetricSpec` names its ``compute`` function, the kinds
    it applies to and every total it produces (a task's primary metric must be one).
    """


@hookspec
def clue_submission_writers() -> list[SubmissionWriterSpec]:
    """The submission file formats this plugin provides (``write`` and ``read`` back)."""


@hookspec
def clue_commands() -> list[CommandSpec]:
    """The ``clue-core`` sub-commands this plugin adds (``report``, ``compare``).

    Each :class:`~clue_core.specs.CommandSpec` names the command, its one-line help and
    the click command as ``"module:attr"``, imported only when the command runs.
    """


@hookspec
def clue_report_sections() -> list[ReportSectionSpec]:
    """The views this plugin adds to ``clue-core report`` (see :class:`~clue_core.specs.ReportSectionSpec`)."""


@hookspec
def clue_data_fetchers() -> list[FetcherSpec]:
    """Where tasks' official files come from when the user names no folder and no sample (``clue-data``).

    Each :class:`~clue_core.fetching.FetcherSpec` names ``fetch(task, *, progress) -> Path``, the folder
    holding the task's files (downloaded from ``task.source`` or a mirror), imported only when a run
    needs it; without a fetcher such a run says to install one or pass ``--data-dir`` / ``--sample``.
    """


@hookspec
def clue_data_openers() -> list[OpenerSpec]:
    """How an archive the user gives as ``--data-dir`` becomes a folder (``clue-data``: ``.zip``).

    Each :class:`~clue_core.fetching.OpenerSpec` names the suffixes it takes and ``open(path) -> Path``,
    the folder holding the archive's files (unpacked into a cache), imported only when a run is given
    such a file; with no opener for it the run is one line naming the file and what to install.
    """


@hookspec
def clue_kinds() -> list[KindSpec]:
    """The example kinds this plugin brings (the built-in plugin's classification, span, multiple_choice).

    Each :class:`~clue_core.kinds.KindSpec` names the example type, what a prediction's value is and
    how it is checked against an example, the check of each example a reader returns, where its gold
    is, the fields a prompt template may use and whether examples may lack gold (open questions). A
    task's kind must be one some installed plugin declares; a model names the kinds it runs.
    """

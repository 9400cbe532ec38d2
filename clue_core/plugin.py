"""The public API for plugin authors: everything a plugin imports from clue-core is here.

A plugin's hook module builds specs with the names below and marks its hooks with
``@hookimpl``; its reader, learner and metric modules use the example types, the
reading helpers and the errors. Nothing else of the kernel is a contract.

The example types, the run context and the reading and writing helpers (``find_file``,
``read_json``, ``iter_jsonl``, ``field``, ``write_json``, ``write_jsonl``, ``apply_umask``) are imported on
first use, so a hook module that imports this module to build specs stays cheap. ``api`` is the
Python API module (:mod:`clue_core.api`: ``api.run``, ``api.plan``, …), for a plugin that runs
other runs (the sweep), also loaded on first use.
``Progress(total, label, unit)`` (:mod:`clue_core.progress`) shows long work's progress: a
bar on a terminal, a plain line every ~15 s in a log, nothing on other processes than rank 0.
``redact(data)`` / ``redact_text(text)`` replace the run's secrets (secret settings' values, the
credentials in the environment that settings declare with ``env`` or ``secret_env``) by ``***``;
``write_json``, ``write_jsonl`` and ``atomic_open`` already apply them, so a plugin needs them only
for what it writes or sends some other way (an SQLite cache, a subprocess).
``Registry`` (:mod:`clue_core.registry`) types the kernel a command finds in its click context:
the registries, the plugins' rows (``PluginRow``), ``owner``, ``strict`` and the ``task``/``metric``/``writer``/
``kind``/``model`` lookups, nothing more; ``resolved_settings(registry, task, model)`` is what one task's run
with one model would read, ``fetched_folder(registry, task)`` where the installed fetcher keeps a task's files.
``KindSpec`` (:mod:`clue_core.kinds`) declares an example kind (``clue_kinds``); ``CLASSIFICATION``,
``SPAN`` and ``MULTIPLE_CHOICE`` name the built-in plugin's three, whose example types are shared here.
``PlanExpansion`` (:mod:`clue_core.expansion`) is what a task plugin subclasses to make several plans of
one plan of its task (FewCLUE's ``split=all``), each a ``PlanVariant``.
``installed_entry_points(group)`` (:mod:`clue_core.discovery`) lists a group's installed entry points as
``importlib.metadata.entry_points(group=...)`` does, without its import cost (a plugin's own entry points).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clue_core.discovery import installed_entry_points
from clue_core.errors import ClueError, DataError, InputError
from clue_core.expansion import PlanExpansion, PlanVariant
from clue_core.fetching import FetcherSpec, OpenerSpec
from clue_core.hookspecs import hookimpl
from clue_core.kinds import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, KindSpec
from clue_core.leaderboards import Leaderboard, PublishedScore, TestVersion
from clue_core.prompt_variants import Prompt, PromptVariant
from clue_core.registry import PluginRow, Registry
from clue_core.saved_models import MODEL_FILE
from clue_core.specs import (
    CommandSpec,
    DataSource,
    MetricSpec,
    ModelSpec,
    ReportSectionSpec,
    Setting,
    SubmissionWriterSpec,
    TaskSpec,
)

# ruff: noqa: F401 -- the names imported under TYPE_CHECKING are exports (in __all__ through _LAZY), which ruff
# cannot see in a derived __all__; tests/core/test_plugin_api.py checks they are _LAZY's names, one for one
if TYPE_CHECKING:  # imported on first use (see __getattr__), named here for readers and type checkers
    from clue_core import __version__, api
    from clue_core.atomic import apply_umask, atomic_open, disk_fault_message, write_json, write_jsonl
    from clue_core.context import Learner, RunContext, is_main_process
    from clue_core.data import clue_home, file_digests, find_file, is_junk, resolve_task_data
    from clue_core.examples import (
        ClassificationExample,
        Example,
        ExampleId,
        MetricResult,
        MultipleChoiceExample,
        Prediction,
        SpanExample,
        SplitData,
        gold_of,
    )
    from clue_core.jsonio import field, iter_jsonl, read_json
    from clue_core.kinds import recorded_gold
    from clue_core.lookups import fetched_folder, resolved_settings
    from clue_core.params import FiniteFloat
    from clue_core.progress import Progress
    from clue_core.prompt_variants import prompt_variant, variant_names
    from clue_core.reading import read_split
    from clue_core.record import (
        MANIFEST,
        METRICS,
        PREDICTIONS_DIR,
        RUN_SCHEMA,
        Manifest,
        Metrics,
        PredictionRecord,
        RunRecord,
        iter_predictions,
        read_manifest,
        read_metrics,
        read_run,
    )
    from clue_core.redaction import redact, redact_text
    from clue_core.rundir import SUBMISSION_DIR
    from clue_core.scoring import score
    from clue_core.seeds import MAX_SEED
    from clue_core.settings import RUN_CONTROL
    from clue_core.settings import typos as setting_typos
    from clue_core.specs import resolve
    from clue_core.splits import TEST as TEST_SPLIT
    from clue_core.splits import dev_only as no_test_label
    from clue_core.splits import recorded_splits
    from clue_core.table import format_table, printable

#: Loaded on first use: module -> the names it exports (``NAME=attr``: its ``attr`` under a plainer name).
_LAZY_FROM = {
    "clue_core": "__version__",
    "clue_core.examples": "ClassificationExample Example ExampleId MetricResult MultipleChoiceExample Prediction "
                          "SpanExample SplitData gold_of",
    "clue_core.context": "Learner RunContext is_main_process",
    "clue_core.jsonio": "field iter_jsonl read_json",
    # atomic writes (write_json and write_jsonl redact the run's secrets); the report's atomic_open and its wording
    "clue_core.atomic": "apply_umask atomic_open disk_fault_message write_json write_jsonl",
    # the run record's files and readers (the report and leaderboard plugins)
    "clue_core.record": "MANIFEST METRICS PREDICTIONS_DIR RUN_SCHEMA Manifest Metrics PredictionRecord RunRecord "
                        "iter_predictions read_manifest read_metrics read_run",
    # a task's files and data folder (--data-dir, --sample or a fetcher's); for a fetcher or opener (clue-data, which
    # owns the cache's locks and the safe unzip) the cache and checksums; archive junk (__MACOSX) beside the files
    "clue_core.data": "clue_home file_digests find_file is_junk resolve_task_data",
    "clue_core.kinds": "recorded_gold",  # the gold as a run's prediction records hold it (its kind's record_gold)
    "clue_core.reading": "read_split",
    "clue_core.specs": "resolve",
    "clue_core.table": "format_table printable",  # printable: control characters escaped for the terminal
    "clue_core.params": "FiniteFloat",  # a float option refusing nan/inf
    "clue_core.seeds": "MAX_SEED",  # the largest seed every backend takes (a sweep's seeds, pretrain --seed)
    "clue_core.prompt_variants": "prompt_variant variant_names",  # a task's prompt as a variant words it, their names
    "clue_core.progress": "Progress",  # a tqdm bar on a terminal, a plain line every ~15 s in a log
    "clue_core.redaction": "redact redact_text",  # the run's secrets as ***, in what a plugin writes on its own
    # the leaderboard plugin: scoring as a run does, a run's leaderboard files folder, the splits a run predicted
    # ("test" is every test version; no_test_label: how a message names a run without)
    "clue_core.scoring": "score",
    "clue_core.rundir": "SUBMISSION_DIR",
    "clue_core.splits": "recorded_splits TEST_SPLIT=TEST no_test_label=dev_only",
    # the built-in plugin's info and check: the names a run reserves (seed, resume: not settings), near misses
    "clue_core.settings": "RUN_CONTROL setting_typos=typos",
    "clue_core.lookups": "fetched_folder resolved_settings",  # a task's settings with a model; its fetched folder
}
#: name -> ``"module:attr"``, for every name of ``_LAZY_FROM``.
_LAZY = {name: f"{module}:{attr or name}" for module, names in _LAZY_FROM.items()
         for name, _, attr in (entry.partition("=") for entry in names.split())}
#: Modules exported whole, by name (a plugin that runs runs: ``from clue_core.plugin import api``).
_LAZY_MODULES = {"api": "clue_core.api"}

#: Every name a plugin may import: those imported above, then those loaded on first use.
__all__ = ["CLASSIFICATION", "MODEL_FILE", "MULTIPLE_CHOICE", "SPAN", "ClueError", "CommandSpec", "DataError",
           "DataSource", "FetcherSpec", "InputError", "KindSpec", "Leaderboard", "MetricSpec", "ModelSpec",
           "OpenerSpec", "PlanExpansion", "PlanVariant", "PluginRow", "Prompt", "PromptVariant", "PublishedScore",
           "Registry", "ReportSectionSpec", "Setting", "SubmissionWriterSpec", "TaskSpec", "TestVersion",
           "hookimpl", "installed_entry_points", *_LAZY, *_LAZY_MODULES]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None and name not in _LAZY_MODULES:
        raise AttributeError(f"module 'clue_core.plugin' has no attribute {name!r}")
    import importlib

    if module is None:
        value = importlib.import_module(_LAZY_MODULES[name])
    else:
        path, _, attr = module.partition(":")
        value = getattr(importlib.import_module(path), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

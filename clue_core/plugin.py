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
the registries, ``owner``, ``strict`` and the ``task``/``metric``/``writer``/``kind`` lookups, nothing more.
``KindSpec`` (:mod:`clue_core.kinds`) declares an example kind (``clue_kinds``); ``CLASSIFICATION``,
``SPAN`` and ``MULTIPLE_CHOICE`` name the built-in plugin's three, whose example types are shared here.
``PlanExpansion`` (:mod:`clue_core.expansion`) is what a task plugin subclasses to make several plans of
one plan of its task (FewCLUE's ``split=all``), each a ``PlanVariant``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clue_core.errors import ClueError, DataError, InputError
from clue_core.expansion import PlanExpansion, PlanVariant
from clue_core.fetching import FetcherSpec, OpenerSpec
from clue_core.hookspecs import hookimpl
from clue_core.kinds import CLASSIFICATION, MULTIPLE_CHOICE, SPAN, KindSpec
from clue_core.registry import Registry
from clue_core.saved_models import MODEL_FILE
from clue_core.specs import (
    CommandSpec,
    DataSource,
    Leaderboard,
    MetricSpec,
    ModelSpec,
    Prompt,
    PromptVariant,
    PublishedScore,
    ReportSectionSpec,
    Setting,
    SubmissionWriterSpec,
    TaskSpec,
    TestVersion,
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
    from clue_core.specs import resolve
    from clue_core.splits import TEST as TEST_SPLIT
    from clue_core.splits import dev_only as no_test_label
    from clue_core.splits import recorded_splits
    from clue_core.table import format_table, printable

_LAZY = {
    **dict.fromkeys(("ClassificationExample", "Example", "ExampleId", "MetricResult", "MultipleChoiceExample",
                     "Prediction", "SpanExample", "SplitData"), "clue_core.examples"),
    **dict.fromkeys(("Learner", "RunContext", "is_main_process"), "clue_core.context"),
    "find_file": "clue_core.data",
    "read_json": "clue_core.jsonio",
    "iter_jsonl": "clue_core.jsonio",
    "field": "clue_core.jsonio",
    "write_json": "clue_core.atomic",
    "write_jsonl": "clue_core.atomic",
    "apply_umask": "clue_core.atomic",
    **dict.fromkeys(("RUN_SCHEMA", "Manifest", "Metrics", "PredictionRecord", "RunRecord", "iter_predictions",
                     "read_manifest", "read_metrics", "read_run"), "clue_core.record"),
    # the report plugin (clue-report): its atomic writes, re-reading dev splits, tables, run files
    **dict.fromkeys(("atomic_open", "disk_fault_message"), "clue_core.atomic"),
    **dict.fromkeys(("MANIFEST", "METRICS", "PREDICTIONS_DIR"), "clue_core.record"),
    "gold_of": "clue_core.examples",
    "recorded_gold": "clue_core.kinds",  # the gold as a run's prediction records hold it (its kind's record_gold)
    "read_split": "clue_core.reading",
    "resolve": "clue_core.specs",
    "format_table": "clue_core.table",
    # a float option refusing nan/inf (clue_core.params); control characters escaped for the terminal
    "FiniteFloat": "clue_core.params",
    "MAX_SEED": "clue_core.seeds",  # the largest seed every backend takes (a sweep's seeds, pretrain --seed)
    "printable": "clue_core.table",
    # a task's prompt as one of its variants words it, and every name it has (clue_core.prompt_variants)
    **dict.fromkeys(("prompt_variant", "variant_names"), "clue_core.prompt_variants"),
    # long work's progress: a tqdm bar on a terminal, a plain line every ~15 s in a log (clue_core.progress)
    "Progress": "clue_core.progress",
    # the run's secrets replaced by *** (clue_core.redaction): for what a plugin writes or prints on its own
    **dict.fromkeys(("redact", "redact_text"), "clue_core.redaction"),
    # the leaderboard plugin (clue-leaderboard): a task's data folder (--data-dir, --sample or a fetcher's), scoring
    # as a run does, a run's leaderboard files folder, the splits it predicted ("test" is every test version;
    # how a message names a run without); "module:attr" exports a kernel name under a plainer one
    "resolve_task_data": "clue_core.data",
    "score": "clue_core.scoring",
    "SUBMISSION_DIR": "clue_core.rundir",
    "recorded_splits": "clue_core.splits",
    "TEST_SPLIT": "clue_core.splits:TEST",
    "no_test_label": "clue_core.splits:dev_only",
    "__version__": "clue_core",
    # a data fetcher or opener (clue-data, which owns the cache's locks and the safe unzip): the cache, checksums,
    # the archive junk (__MACOSX) the readers and the unzipping skip alike
    **dict.fromkeys(("clue_home", "file_digests", "is_junk"), "clue_core.data"),
}
#: Modules exported whole, by name (a plugin that runs runs: ``from clue_core.plugin import api``).
_LAZY_MODULES = {"api": "clue_core.api"}

#: Every name a plugin may import: those imported above, then those loaded on first use.
__all__ = ["CLASSIFICATION", "MODEL_FILE", "MULTIPLE_CHOICE", "SPAN", "ClueError", "CommandSpec", "DataError",
           "DataSource", "FetcherSpec", "InputError", "KindSpec", "Leaderboard", "MetricSpec", "ModelSpec",
           "OpenerSpec", "PlanExpansion", "PlanVariant", "Prompt", "PromptVariant", "PublishedScore", "Registry",
           "ReportSectionSpec", "Setting", "SubmissionWriterSpec", "TaskSpec", "TestVersion", "hookimpl", *_LAZY,
           *_LAZY_MODULES]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None and name not in _LAZY_MODULES:
        raise AttributeError(f"module 'clue_core.plugin' has no attribute {name!r}")
    import importlib

    if module is None:
        value = importlib.import_module(_LAZY_MODULES[name])
    else:
        path, _, attr = module.partition(":")  # "module:attr": a kernel name exported under a plainer one
        value = getattr(importlib.import_module(path), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

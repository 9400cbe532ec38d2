"""The run record: what a run directory holds, as types, and the one reader of it.

``<output-dir>/<task>/`` is written by :mod:`clue_core.record_write` and read here, by the
runner (``--resume``), ``submit``, the report, ``compare`` and any plugin (through
:mod:`clue_core.plugin`): one place decides what a valid manifest, metrics file or
prediction record is, and one error style says what is wrong — the file, the field and,
for JSON Lines, the line (:class:`clue_core.errors.InputError`).

``manifest.json`` and ``metrics.json`` carry ``"schema": "clue-core/run@1"``
(:data:`RUN_SCHEMA`). A folder written before the field existed reads as run@1; any other
schema is a newer clue-core's, refused by name rather than half-read. A field of the wrong
type in a run written by a newer clue-core (its ``clue_core`` version in the manifest) says
so too: upgrading is then the fix.

Each type keeps the object as read in ``.data`` (the field names are the files' own), so a
reader that needs a field with no property still has it; the properties are checked when
the file is read, so a consumer never meets a list where an object belongs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from clue_core.errors import ClueError, InputError
from clue_core.jsonio import iter_jsonl
from clue_core.record_check import (
    RUN_SCHEMA,
    NewerRecord,
    check_manifest,
    check_metrics,
    check_prediction,
    load_object_text,
    newer_writer,
)

MANIFEST = "manifest.json"
METRICS = "metrics.json"
PREDICTIONS_DIR = "predictions"

__all__ = ["MANIFEST", "METRICS", "PREDICTIONS_DIR", "RUN_SCHEMA", "Manifest", "Metrics", "NewerRecord",
           "PredictionRecord", "RunRecord", "iter_predictions", "newer_writer", "prediction_file", "read_manifest",
           "read_metrics", "read_run"]


def _json_object(path: Path, what: str) -> dict[str, Any] | None:
    """One JSON object file, or None when it is not there; anything else wrong is one line."""
    try:
        data = load_object_text(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ClueError(f"{path}: unreadable {what} ({exc})") from None
    if not isinstance(data, dict):
        raise ClueError(f"{path}: unreadable {what} (not an object)")
    return data


# -- the records -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Manifest:
    """``manifest.json``: how the run was made (versions, command, settings, data) and whether it finished.

    Fields that may be absent (a run older than the field) read as empty, never as an error.
    """

    data: dict[str, Any]
    path: Path | None = None

    @classmethod
    def checked(cls, data: dict[str, Any], path: Path) -> Manifest:
        """``data`` as read from ``path``, its schema and the types of the fields with a property checked."""
        check_manifest(path, data)
        return cls(data, path)

    @property
    def status(self) -> str | None:
        return self.data.get("status")

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def task(self) -> str | None:
        return self.data.get("task")

    @property
    def model(self) -> str | None:
        return self.data.get("model")

    @property
    def seed(self) -> int | None:
        return self.data.get("seed")

    @property
    def limit(self) -> int | None:
        """The ``--limit`` of a partial run, None for a full one."""
        return (self.data.get("partial") or {}).get("limit")

    @property
    def partial(self) -> bool:
        return bool(self.data.get("partial"))

    @property
    def source(self) -> dict[str, Any]:
        """The ``data`` field: where the data came from (``source``, ``data_dir``, ``files``' checksums)."""
        return self.data.get("data") or {}

    @property
    def settings(self) -> dict[str, Any]:
        return self.data.get("settings") or {}

    @property
    def schedule(self) -> dict[str, Any]:
        return self.data.get("schedule") or {}

    @property
    def test_versions(self) -> dict[str, Any]:
        return self.data.get("test_versions") or {}

    @property
    def splits(self) -> list[str] | None:
        """The splits the run predicted (``run --splits``: ``["dev"]`` wrote no submission files); None for
        a run made before they were recorded, which predicted every split."""
        splits = self.data.get("splits")
        return [str(s) for s in splits] if isinstance(splits, list) else None

    @property
    def submission_files(self) -> list[str]:
        return [str(f) for f in self.data.get("submission_files") or ()]

    @property
    def notes(self) -> list[str]:
        return [str(n) for n in self.data.get("notes") or ()]

    @property
    def model_info(self) -> dict[str, Any]:
        return self.data.get("model_info") or {}

    @property
    def repeat(self) -> dict[str, str]:
        """``{"setting", "value"}`` for one training of a repeated task (FewCLUE's split=all), else empty."""
        return self.data.get("repeat") or {}


@dataclass(frozen=True, slots=True)
class Metrics:
    """``metrics.json``: the dev scores, ``primary`` (= ``dev[primary_metric]``), counts, leaderboards."""

    data: dict[str, Any]
    path: Path | None = None

    @classmethod
    def checked(cls, data: dict[str, Any], path: Path, manifest: Manifest | None = None) -> Metrics:
        """``data`` as read from ``path``; the field types the report, the run table and compare read.

        ``manifest`` (the run's) names a newer writer in the message when one wrote it.
        """
        check_metrics(path, data, manifest.data if manifest else None)
        return cls(data, path)

    @property
    def task(self) -> str:
        return self.data["task"]

    @property
    def model(self) -> str | None:
        return self.data.get("model")

    @property
    def primary_metric(self) -> str:
        return self.data["primary_metric"]

    @property
    def primary(self) -> float | None:
        return self.data.get("primary")

    @property
    def dev(self) -> dict[str, float | None]:
        return self.data.get("dev") or {}

    @property
    def scored(self) -> dict[str, dict[str, float | None]]:
        """The scores of each labelled split besides dev (FewCLUE's ``test_public``), by split."""
        return {split: self.data.get(split) or {} for split in self.data.get("scored_splits") or ()}

    @property
    def counts(self) -> dict[str, int]:
        return self.data.get("counts") or {}

    @property
    def partial(self) -> bool:
        return bool(self.data.get("partial"))

    @property
    def sample(self) -> bool:
        return bool(self.data.get("sample"))

    @property
    def leaderboards(self) -> list[dict[str, Any]]:
        return self.data.get("leaderboards") or []

    @property
    def model_info(self) -> dict[str, Any]:
        return self.data.get("model_info") or {}


@dataclass(frozen=True, slots=True)
class PredictionRecord:
    """One line of ``predictions/<split>.jsonl``: ``id``, ``prediction`` and, when there are, ``gold``,
    ``scores``, ``raw`` (what the model was asked and said) and ``scoring`` (what the metrics found)."""

    data: dict[str, Any]
    line: int = 0

    @classmethod
    def checked(cls, data: dict[str, Any], path: Path, line: int) -> PredictionRecord:
        check_prediction(path, data, line)
        return cls(data, line)

    @property
    def id(self) -> str | int:
        return self.data["id"]

    @property
    def prediction(self) -> Any:
        return self.data["prediction"]

    @property
    def gold(self) -> Any:
        return self.data.get("gold")

    @property
    def scores(self) -> list[float] | None:
        return self.data.get("scores")

    @property
    def raw(self) -> Any:
        return self.data.get("raw")

    @property
    def scoring(self) -> dict[str, Any] | None:
        return self.data.get("scoring")

    def _raw(self, key: str) -> Any:
        raw = self.raw
        return raw.get(key) if isinstance(raw, dict) else None

    @property
    def prompt(self) -> Any:
        """``raw.prompt``: what a prompted model was asked (None when the learner records none)."""
        return self._raw("prompt")

    @property
    def continuations(self) -> Any:
        """``raw.continuations``: the candidate answers a log-likelihood model scored."""
        return self._raw("continuations")

    @property
    def logprobs(self) -> Any:
        """``raw.logprobs``: their log-probabilities."""
        return self._raw("logprobs")


# -- reading -----------------------------------------------------------------------------


def prediction_file(run_dir: Path, split: str) -> Path:
    """``predictions/<split>.jsonl`` (``dev``, or ``test-<version>``)."""
    return Path(run_dir) / PREDICTIONS_DIR / f"{split}.jsonl"


@overload
def read_manifest(run_dir: Path, *, required: Literal[True] = ...) -> Manifest: ...
@overload
def read_manifest(run_dir: Path, *, required: bool) -> Manifest | None: ...


def read_manifest(run_dir: Path, *, required: bool = True) -> Manifest | None:
    """The run's manifest, checked; without one, an error (or None when not ``required``: an unfinished
    folder the report lists)."""
    path = Path(run_dir) / MANIFEST
    data = _json_object(path, "manifest")
    if data is None:
        if required:
            raise ClueError(f"{run_dir}: not a run directory (no {MANIFEST})")
        return None
    return Manifest.checked(data, path)


@overload
def read_metrics(run_dir: Path, *, required: Literal[True] = ..., manifest: Manifest | None = None) -> Metrics: ...
@overload
def read_metrics(run_dir: Path, *, required: bool, manifest: Manifest | None = None) -> Metrics | None: ...


def read_metrics(run_dir: Path, *, required: bool = True, manifest: Manifest | None = None) -> Metrics | None:
    """The run's metrics, checked; a missing file says the run is not complete (None when not ``required``).

    ``manifest`` (the run's, if read) lets a wrong field name a newer clue-core that wrote it.
    """
    path = Path(run_dir) / METRICS
    data = _json_object(path, "metrics")
    if data is None:
        if required:
            raise ClueError(f"{path}: missing, so this run is not complete")
        return None
    return Metrics.checked(data, path, manifest)


def iter_predictions(run_dir: Path, split: str = "dev") -> Iterator[PredictionRecord]:
    """The records of one split, one at a time (a test split can be large), each checked with its line."""
    path = prediction_file(run_dir, split)
    if not path.is_file():
        raise ClueError(f"{run_dir}: not a complete run (no {PREDICTIONS_DIR}/{split}.jsonl)")
    records, line = iter_jsonl(path), 0
    while True:
        try:
            line, record = next(records)
        except StopIteration:
            return
        except (ValueError, RecursionError) as exc:  # what json.loads raises past its own JSONDecodeError
            raise InputError(path, f"invalid JSON: {_unreadable(exc)}", line=_failing_line(path, line)) from None
        yield PredictionRecord.checked(record, path, line)


def _unreadable(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    text = str(exc)  # an integer of more than 4,300 digits: Python's limit, worded for programmers
    return "an integer too long to read" if "integer string conversion" in text else text


def _failing_line(path: Path, after: int) -> int | None:
    """The line past ``after`` that the JSON decoder cannot read (found again only on that error)."""
    with path.open(encoding="utf-8-sig") as handle:
        for number, text in enumerate(handle, start=1):
            if number > after and text.strip():
                try:
                    json.loads(text)
                except (ValueError, RecursionError):
                    return number
    return None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One complete run directory: its manifest, its metrics and, read on demand, its predictions."""

    path: Path
    manifest: Manifest
    metrics: Metrics

    def prediction_file(self, split: str = "dev") -> Path:
        return prediction_file(self.path, split)

    def has_predictions(self, split: str = "dev") -> bool:
        return self.prediction_file(split).is_file()

    def prediction_splits(self) -> list[str]:
        """The splits with a predictions file (``dev``, ``test-1.1``, …), in name order."""
        return sorted(p.stem for p in (self.path / PREDICTIONS_DIR).glob("*.jsonl") if p.is_file())

    def predictions(self, split: str = "dev") -> Iterator[PredictionRecord]:
        """The split's records, lazily; a missing file is one line (see :func:`iter_predictions`)."""
        return iter_predictions(self.path, split)


def read_run(run_dir: Path) -> RunRecord:
    """The complete run in ``run_dir``: a run that did not finish, or has no metrics, is one line."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if not manifest.complete:
        raise ClueError(f"{run_dir}: not a complete run (status {manifest.status!r} in {MANIFEST})")
    return RunRecord(run_dir, manifest, read_metrics(run_dir, manifest=manifest))

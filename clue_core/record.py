"""The run record: each file of a run directory declared once, and the one reader of them.

``<output-dir>/<task>/`` is written by :mod:`clue_core.record_write` and read here by the runner
(``--resume``), ``submit``, the report, ``compare`` and any plugin (through :mod:`clue_core.plugin`).
A field is one line below (``seed: int | None = field(INT)``): the attribute a consumer reads, what
it reads as when absent, and the check the reader and the writer make (:mod:`clue_core.record_check`).
``manifest.json`` and ``metrics.json`` carry ``"schema": "clue-core/run@1"`` (:data:`RUN_SCHEMA`): a
folder written before the field reads as run@1, another schema is a newer clue-core's, refused by name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from clue_core import record_check as rc
from clue_core.errors import ClueError, InputError
from clue_core.jsonio import iter_jsonl
from clue_core.record_check import RUN_SCHEMA, NewerRecord, R, Record, field, newer_writer, no_value, obj

MANIFEST = "manifest.json"
METRICS = "metrics.json"
PREDICTIONS_DIR = "predictions"

__all__ = ["MANIFEST", "METRICS", "PREDICTIONS_DIR", "RUN_SCHEMA", "Manifest", "Metrics", "NewerRecord",
           "PredictionRecord", "RunRecord", "iter_predictions", "newer_writer", "prediction_file", "read_manifest",
           "read_metrics", "read_run"]

_NAMED = rc.TEXT.named("a name")  # any text, said to be a name (a repeat's setting, a leaderboard's group)


class Manifest(Record):
    """``manifest.json``: how the run was made (versions, command, settings, data) and whether it finished."""

    status: str | None = field(rc.NAME)
    complete: bool = field(rc.NAME, key="status", read=lambda status: status == "complete", empty=bool)
    task: str | None = field(rc.NAME)
    model: str | None = field(rc.NAME)
    clue_core: str | None = field(rc.NAME)
    kind: str | None = field(rc.NAME)
    model_spec: str | None = field(rc.NAME)
    seed: int | None = field(rc.INT)
    world_size: int | None = field(rc.INT)
    no_train: bool = field(rc.BOOL)
    started: str | None = field(rc.TEXT)
    finished: str | None = field(rc.TEXT)
    python: str | None = field(rc.TEXT)
    platform: str | None = field(rc.TEXT)
    settings: dict[str, Any] = field(rc.OBJECT)
    setting_sources: dict[str, str] = field(rc.OBJECT)
    schedule: dict[str, Any] = field(rc.OBJECT)
    test_versions: dict[str, str] = field(rc.OBJECT)
    model_info: dict[str, Any] = field(rc.OBJECT)
    plugins: dict[str, Any] = field(rc.OBJECT)
    #: ``{"setting", "value"}`` for one training of a repeated task (FewCLUE's split=all), else empty
    repeat: dict[str, str] = field(obj(setting=field(_NAMED, required=True), value=field(_NAMED, required=True)))
    counts: dict[str, int] = field(rc.COUNTS)
    submission_files: list[str] = field(rc.STRINGS)
    notes: list[str] = field(rc.STRINGS)
    command: list[str] = field(rc.STRINGS)
    #: the splits it predicted (``--splits``); None for a run made before they were recorded: every split
    splits: list[str] | None = field(rc.STRINGS, empty=no_value)
    #: a ``--limit`` run (``{"limit": n}`` in the file), and that limit (None for a full run)
    partial: bool = field(obj(limit=field(rc.INT)), read=bool, empty=bool)
    limit: int | None = field(rc.INT, key="partial.limit")
    #: ``--first``: the limit took the first examples in file order (``partial.first``), not a seeded draw
    first: bool = field(rc.BOOL, key="partial.first")
    #: the ``data`` field: where the data came from (``source``, ``data_dir``, ``files``' checksums)
    source: dict[str, Any] = field(obj(source=field(rc.NAME), data_dir=field(rc.TEXT), user_data_dir=field(rc.TEXT),
                                       files=field(rc.OBJECT)), key="data")


class Metrics(Record):
    """``metrics.json``: the dev scores, ``primary`` (= ``dev[primary_metric]``), counts, leaderboards."""

    task: str = field(rc.NAME, required=True)
    primary_metric: str = field(rc.NAME, required=True)
    model: str | None = field(rc.NAME)
    split: str | None = field(rc.NAME)
    model_category: str | None = field(rc.TEXT)  # "" for a model spec that declares none
    primary: float | None = field(rc.NUMBER.named("a number or null"))
    train_seconds: float | None = field(rc.NUMBER)
    dev: dict[str, float | None] = field(rc.SCORES)
    #: the labelled splits besides dev that it scored (FewCLUE's ``test_public``), each under its own name
    scored_splits: list[str] = field(rc.Kind("a list", rc.LIST.test, list, items=rc.Kind(
        "the name of a labelled split besides dev",
        lambda v: isinstance(v, str) and v not in ("dev", "counts", "task", "model", "primary", "scored_splits"))))
    counts: dict[str, int] = field(rc.COUNTS)
    partial: bool = field(rc.BOOL)
    sample: bool = field(rc.BOOL)
    report_settings: dict[str, Any] = field(rc.OBJECT)
    model_info: dict[str, Any] = field(rc.OBJECT)
    leaderboards: list[dict[str, str]] = field(rc.Kind("a list", rc.LIST.test, list, items=obj(
        benchmark=field(_NAMED, required=True), group=field(_NAMED, required=True))))
    #: the primary metric's standard error and, for a clustered task, by passage (:mod:`clue_core.uncertainty`)
    uncertainty: dict[str, Any] = field(rc.OBJECT)

    @classmethod
    def check_across(cls, at: rc.At, data: dict[str, Any]) -> None:
        """Each scored split's scores, as dev's; and ``primary`` is ``dev[primary_metric]``: the summary
        prints the one and the HTML report the other, so a file where they disagree would show two scores."""
        for split in data.get("scored_splits") or ():
            if data.get(split) is not None:
                at.value(split, data[split], rc.SCORES)
        primary, dev, name = data.get("primary"), data.get("dev") or {}, data["primary_metric"]
        if primary is None and dev.get(name) is None:
            return
        if name not in dev:
            raise InputError(at.path, f"{name!r} is not one of dev's metrics ({', '.join(dev) or 'none'}){at.hint}",
                             field="primary_metric")
        if primary is None or dev[name] is None or abs(primary - dev[name]) > 1e-9:
            raise InputError(at.path, f"{json.dumps(primary)}, but dev.{name} is {json.dumps(dev[name])} (the same "
                             f"score, written twice: one was edited){at.hint}", field="primary")

    @property
    def scored(self) -> dict[str, dict[str, float | None]]:
        """The scores of each labelled split besides dev (FewCLUE's ``test_public``), by split."""
        return {split: self.data.get(split) or {} for split in self.scored_splits}


_ID = rc.Kind("a string or integer id", lambda v: isinstance(v, (str, int)) and not isinstance(v, bool) and v != "",
              shown=repr)


class PredictionRecord(Record):
    """One line of ``predictions/<split>.jsonl`` (its number is ``line``): ``id``, ``prediction`` and, when
    there are, ``gold``, ``scores``, ``raw`` (what the model was asked and said), ``scoring`` (what the
    metrics found), ``group`` (the passage it shares with others: intervals resample groups); ``prompt``,
    ``continuations`` and ``logprobs`` are ``raw``'s, None when it has none."""

    SCHEMA = False
    line: int = 0
    id: str | int = field(_ID, required=True)
    prediction: Any = field(rc.ANY, required=True)
    gold: Any = field(rc.ANY)
    scores: list[float] | None = field(rc.Kind("a list", rc.LIST.test, items=rc.NUMBER))
    raw: Any = field(rc.ANY)
    scoring: dict[str, Any] | None = field(rc.OBJECT, empty=no_value)
    #: what clusters it with others (a passage several questions share), None for a run made before
    group: str | None = field(rc.NAME, empty=no_value)  # a key: an empty one names no passage
    prompt: Any = field(rc.ANY, key="raw.prompt")  # what a prompted model was asked
    continuations: Any = field(rc.ANY, key="raw.continuations")  # the answers a log-likelihood model scored
    logprobs: Any = field(rc.ANY, key="raw.logprobs")  # and their log-probabilities

    def __init__(self, data: dict[str, Any], line: int = 0, path: Path | None = None) -> None:
        super().__init__(data, path)
        object.__setattr__(self, "line", line)

    @classmethod
    def checked(cls, data: dict[str, Any], path: Path, line: int = 0) -> PredictionRecord:  # type: ignore[override]
        """One line of ``path`` (its number ``line``), checked: a line names no manifest, it has its number."""
        cls.check(data, path, line=line or None)
        return cls(data, line, path)


# -- reading -----------------------------------------------------------------------------


def _read(record: type[R], path: Path, missing: str | None, manifest: Manifest | None = None) -> R | None:
    """A record file, checked; when it is not there, None or (``missing``) one line; unreadable, one line."""
    what = record.__name__.lower()
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        if missing:
            raise ClueError(missing) from None
        return None
    except (OSError, ValueError, RecursionError) as exc:
        reason = "nested too deeply to read" if isinstance(exc, RecursionError) else str(exc)
        if "integer string conversion" in reason:  # more than 4,300 digits: worded as a prediction line's is
            reason = "an integer too long to read"
        raise ClueError(f"{path}: unreadable {what} ({reason})") from None
    if not isinstance(data, dict):
        raise ClueError(f"{path}: unreadable {what} (not an object)")
    return record.checked(data, path, manifest)


def prediction_file(run_dir: Path, split: str) -> Path:
    """``predictions/<split>.jsonl`` (``dev``, or ``test-<version>``)."""
    return Path(run_dir) / PREDICTIONS_DIR / f"{split}.jsonl"


@overload
def read_manifest(run_dir: Path, *, required: Literal[True] = ...) -> Manifest: ...
@overload
def read_manifest(run_dir: Path, *, required: bool) -> Manifest | None: ...


def read_manifest(run_dir: Path, *, required: bool = True) -> Manifest | None:
    """The run's manifest, checked; without one, an error (None when not ``required``: an unfinished folder)."""
    missing = f"{run_dir}: not a run directory (no {MANIFEST})" if required else None
    return _read(Manifest, Path(run_dir) / MANIFEST, missing)


@overload
def read_metrics(run_dir: Path, *, required: Literal[True] = ..., manifest: Manifest | None = None) -> Metrics: ...
@overload
def read_metrics(run_dir: Path, *, required: bool, manifest: Manifest | None = None) -> Metrics | None: ...


def read_metrics(run_dir: Path, *, required: bool = True, manifest: Manifest | None = None) -> Metrics | None:
    """The run's metrics, checked (``manifest``, the run's, names a newer writer); a missing file says the
    run is not complete (None when not ``required``)."""
    path = Path(run_dir) / METRICS
    return _read(Metrics, path, f"{path}: missing, so this run is not complete" if required else None, manifest)


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
            text = "nested too deeply to read" if isinstance(exc, RecursionError) else str(exc)
            if "integer string conversion" in text:  # more than 4,300 digits: Python's limit, worded for programmers
                text = "an integer too long to read"
            raise InputError(path, f"invalid JSON: {text}", line=_failing_line(path, line)) from None
        PredictionRecord.check(record, path, line=line)
        yield PredictionRecord(record, line)


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
    manifest = read_manifest(Path(run_dir))
    if not manifest.complete:
        raise ClueError(f"{run_dir}: not a complete run (status {manifest.status!r} in {MANIFEST})")
    return RunRecord(Path(run_dir), manifest, read_metrics(Path(run_dir), manifest=manifest))

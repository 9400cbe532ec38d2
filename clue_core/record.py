"""The run record: what a run directory holds, declared once per file, and the one reader of it.

``<output-dir>/<task>/`` is written by :mod:`clue_core.record_write` and read here, by the
runner (``--resume``), ``submit``, the report, ``compare`` and any plugin (through
:mod:`clue_core.plugin`). Each file's fields are declared once, below, as typed attributes
(``seed: int | None = field(INT)``): the declaration is the attribute a consumer reads, what an
absent field reads as, and the check the reader and the writer make (:mod:`clue_core.record_check`),
each failure one line naming the file, the field and, for JSON Lines, the line. Adding a field to
the manifest is one line here.

``manifest.json`` and ``metrics.json`` carry ``"schema": "clue-core/run@1"`` (:data:`RUN_SCHEMA`).
A folder written before the field existed reads as run@1; any other schema is a newer
clue-core's, refused by name rather than half-read. A field of the wrong type in a run written by
a newer clue-core (its ``clue_core`` version in the manifest) says so too: upgrading is the fix.

Each record keeps the object as read in ``.data`` (the field names are the files' own), so a
reader still has a field nothing declares; an absent field reads as empty, never as an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

from clue_core.errors import ClueError, InputError
from clue_core.jsonio import iter_jsonl
from clue_core.record_check import (
    ANY,
    BOOL,
    COUNTS,
    INT,
    NAME,
    NUMBER,
    OBJECT,
    RUN_SCHEMA,
    SCORES,
    STRINGS,
    TEXT,
    At,
    Field,
    Kind,
    NewerRecord,
    check_fields,
    check_finite,
    check_schema,
    check_value,
    field,
    load_object_text,
    newer_writer,
    no_value,
    obj,
)

MANIFEST = "manifest.json"
METRICS = "metrics.json"
PREDICTIONS_DIR = "predictions"

__all__ = ["MANIFEST", "METRICS", "PREDICTIONS_DIR", "RUN_SCHEMA", "Manifest", "Metrics", "NewerRecord",
           "PredictionRecord", "RunRecord", "iter_predictions", "newer_writer", "prediction_file", "read_manifest",
           "read_metrics", "read_run"]


class Record:
    """A record file's object as read (``data``) with its declared fields as attributes; immutable."""

    __slots__ = ("data", "path")
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    SCHEMA: ClassVar[bool] = True  # carries ``schema`` (a prediction line does not)

    def __init__(self, data: dict[str, Any], path: Path | None = None) -> None:
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "path", path)

    def __init_subclass__(cls) -> None:
        cls.FIELDS = tuple(v for v in vars(cls).values() if isinstance(v, Field))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, s) == getattr(other, s) for s in self._slots())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{s}={getattr(self, s)!r}' for s in self._slots())})"

    @classmethod
    def _slots(cls) -> list[str]:
        return [s for c in reversed(cls.__mro__) for s in getattr(c, "__slots__", ())]

    @classmethod
    def check(cls, data: dict[str, Any], path: Path, hint: str = "", line: int | None = None) -> None:
        """``data`` as read from ``path``: its schema, each declared field, the checks across fields, no NaN."""
        if cls.SCHEMA:
            check_schema(path, data)
        at = At(path, hint, line)
        check_fields(at, data, cls.FIELDS)
        cls.check_across(at, data)
        check_finite(at, data)

    @classmethod
    def check_across(cls, at: At, data: dict[str, Any]) -> None:
        """What no one field's declaration can say (metrics: ``primary`` is ``dev[primary_metric]``)."""


class Manifest(Record):
    """``manifest.json``: how the run was made (versions, command, settings, data) and whether it finished."""

    __slots__ = ()
    status: str | None = field(NAME)
    task: str | None = field(NAME)
    model: str | None = field(NAME)
    clue_core: str | None = field(NAME)
    kind: str | None = field(NAME)
    model_spec: str | None = field(NAME)
    seed: int | None = field(INT)
    world_size: int | None = field(INT)
    no_train: bool = field(BOOL)
    started: str | None = field(TEXT)
    finished: str | None = field(TEXT)
    python: str | None = field(TEXT)
    platform: str | None = field(TEXT)
    settings: dict[str, Any] = field(OBJECT)
    setting_sources: dict[str, str] = field(OBJECT)
    schedule: dict[str, Any] = field(OBJECT)
    test_versions: dict[str, Any] = field(OBJECT)
    model_info: dict[str, Any] = field(OBJECT)
    plugins: dict[str, Any] = field(OBJECT)
    #: ``{"setting", "value"}`` for one training of a repeated task (FewCLUE's split=all), else empty
    repeat: dict[str, str] = field(obj(setting=field(TEXT.named("a name"), required=True),
                                       value=field(TEXT.named("a name"), required=True)))
    counts: dict[str, int] = field(COUNTS)
    submission_files: list[str] = field(STRINGS)
    notes: list[str] = field(STRINGS)
    command: list[str] = field(STRINGS)
    #: the splits the run predicted (``run --splits``: ``["dev"]`` wrote no submission files); None for a
    #: run made before they were recorded, which predicted every split
    splits: list[str] | None = field(STRINGS, empty=no_value)
    #: whether it is a ``--limit`` run (``{"limit": n}`` in the file)
    partial: bool = field(obj(limit=field(INT)), read=bool, empty=bool)
    #: the ``data`` field: where the data came from (``source``, ``data_dir``, ``files``' checksums)
    source: dict[str, Any] = field(obj(source=field(NAME), data_dir=field(TEXT), user_data_dir=field(TEXT),
                                       files=field(OBJECT)), key="data")

    @classmethod
    def checked(cls, data: dict[str, Any], path: Path) -> Manifest:
        """``data`` as read from ``path``, checked; a wrong field of a newer clue-core's run says so."""
        cls.check(data, path, newer_writer(data))
        return cls(data, path)

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def limit(self) -> int | None:
        """The ``--limit`` of a partial run, None for a full one."""
        return (self.data.get("partial") or {}).get("limit")


#: a split besides dev whose scores metrics.json holds under its name (no name of another field)
_SCORED = Kind("a list", lambda v: isinstance(v, list), list, items=Kind(
    "the name of a labelled split besides dev",
    lambda v: isinstance(v, str) and v not in ("dev", "counts", "task", "model", "primary", "scored_splits")))
_BOARD = obj(benchmark=field(TEXT.named("a name"), required=True), group=field(TEXT.named("a name"), required=True))


class Metrics(Record):
    """``metrics.json``: the dev scores, ``primary`` (= ``dev[primary_metric]``), counts, leaderboards."""

    __slots__ = ()
    task: str = field(NAME, required=True)
    primary_metric: str = field(NAME, required=True)
    model: str | None = field(NAME)
    split: str | None = field(NAME)
    model_category: str | None = field(TEXT)  # "" for a model spec that declares none
    primary: float | None = field(NUMBER.named("a number or null"))
    train_seconds: float | None = field(NUMBER)
    dev: dict[str, float | None] = field(SCORES)
    scored_splits: list[str] = field(_SCORED)
    counts: dict[str, int] = field(COUNTS)
    partial: bool = field(BOOL)
    sample: bool = field(BOOL)
    report_settings: dict[str, Any] = field(OBJECT)
    model_info: dict[str, Any] = field(OBJECT)
    leaderboards: list[dict[str, Any]] = field(Kind("a list", lambda v: isinstance(v, list), list, items=_BOARD))

    @classmethod
    def checked(cls, data: dict[str, Any], path: Path, manifest: Manifest | None = None) -> Metrics:
        """``data`` as read from ``path``; ``manifest`` (the run's) names a newer writer when one wrote it."""
        cls.check(data, path, newer_writer(manifest.data if manifest else None))
        return cls(data, path)

    @classmethod
    def check_across(cls, at: At, data: dict[str, Any]) -> None:
        """Each scored split's scores, as dev's; and ``primary`` is ``dev[primary_metric]``: the summary
        prints the one and the HTML report the other, so a file where they disagree would show two scores."""
        for split in data.get("scored_splits") or ():
            if data.get(split) is not None:
                check_value(at, split, data[split], SCORES)
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


_ID = Kind("a string or integer id", lambda v: isinstance(v, (str, int)) and not isinstance(v, bool) and v != "",
           got=repr)


class PredictionRecord(Record):
    """One line of ``predictions/<split>.jsonl``: ``id``, ``prediction`` and, when there are, ``gold``,
    ``scores``, ``raw`` (what the model was asked and said) and ``scoring`` (what the metrics found)."""

    __slots__ = ("line",)
    SCHEMA = False
    id: str | int = field(_ID, required=True)
    prediction: Any = field(ANY, required=True)
    gold: Any = field(ANY)
    scores: list[float] | None = field(Kind("a list", lambda v: isinstance(v, list), items=NUMBER))
    raw: Any = field(ANY)
    scoring: dict[str, Any] | None = field(OBJECT, empty=no_value)

    def __init__(self, data: dict[str, Any], line: int = 0) -> None:
        super().__init__(data)
        object.__setattr__(self, "line", line)

    @classmethod
    def checked(cls, data: dict[str, Any], path: Path, line: int) -> PredictionRecord:
        cls.check(data, path, line=line)
        return cls(data, line)

    def _raw(self, key: str) -> Any:
        return self.raw.get(key) if isinstance(self.raw, dict) else None

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
    data = _json_object(Path(run_dir) / MANIFEST, "manifest")
    if data is None and required:
        raise ClueError(f"{run_dir}: not a run directory (no {MANIFEST})")
    return None if data is None else Manifest.checked(data, Path(run_dir) / MANIFEST)


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
    if data is None and required:
        raise ClueError(f"{path}: missing, so this run is not complete")
    return None if data is None else Metrics.checked(data, path, manifest)


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

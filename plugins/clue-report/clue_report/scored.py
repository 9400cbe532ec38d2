"""A run's dev predictions set against their examples and scored per example, again.

``metrics.json`` holds totals only; intervals and error analysis need each example's
value and, for a task whose questions share passages (C3, CMRC2018, DRCD, CHID: its
``TaskSpec.cluster``), which passage each is asked of. A record may name it (``group``);
the texts are in the data only, so the dev split is read again through the kernel (the
manifest names the data folder, sample included; a ``--limit`` run's records pick their
examples by id), and where the records name no passage (a run made before they did) the
task's ``cluster`` names it from the example re-read. When that data is gone
or no longer matches the records, the examples are rebuilt from the records alone (gold
and prediction suffice for every built-in metric) and the report says that groups and
texts are unknown. The task's own metrics then score the examples, so each per-example
value is the metric's, not a re-implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    CLASSIFICATION,
    MULTIPLE_CHOICE,
    SPAN,
    ClassificationExample,
    ClueError,
    Example,
    MetricResult,
    MultipleChoiceExample,
    Prediction,
    Registry,
    SpanExample,
    TaskSpec,
    read_split,
    recorded_gold,
    resolve,
)
from clue_report.collect import Run


@dataclass
class Scored:
    """Examples, predictions and per-example metric values of one run, aligned with its records."""

    examples: list[Example]
    predictions: list[Prediction | None]
    totals: dict[str, float]
    per_example: dict[str, list[float | None]]
    groups: list[str | None]
    from_data: bool
    notes: list[str] = field(default_factory=list)
    #: what a group is (the task's ``cluster_unit``: "passage"), and where the groups came from
    unit: str = "group"
    groups_from: str = ""

    @property
    def grouped(self) -> bool:
        return any(group is not None for group in self.groups)


class DevData:
    """The dev examples of each (task, data folder), read once however many runs share them."""

    def __init__(self) -> None:
        self._read: dict[tuple[str, str], dict[str, Example] | str] = {}

    def examples(self, task: TaskSpec, run: Run) -> dict[str, Example] | str:
        """Examples by id, or why they cannot be read."""
        data_dir = (run.manifest.get("data") or {}).get("data_dir")
        if not data_dir or data_dir == "None":
            return "the manifest names no data folder"
        settings = run.manifest.get("settings") or {}  # what the run's reader read (FewCLUE's split)
        key = (task.name, str(data_dir), *(repr(settings.get(s.name)) for s in task.reader_settings))
        if key not in self._read:
            try:
                split = read_split(task, Path(data_dir), "dev", settings if isinstance(settings, dict) else None)
                self._read[key] = {str(example.id): example for example in split.examples}
            except (ClueError, OSError) as exc:
                self._read[key] = f"its dev data cannot be read again ({exc})"
        return self._read[key]


def _from_records(task: TaskSpec, records: Sequence[Mapping[str, Any]]) -> list[Example] | None:
    """Examples holding only id and gold, for scoring when the data cannot be read."""
    examples: list[Example] = []
    for record in records:
        gold, prediction = record.get("gold"), record.get("prediction")
        if task.kind == CLASSIFICATION:
            examples.append(ClassificationExample(id=record["id"], text="", label=gold))
        elif task.kind == MULTIPLE_CHOICE:
            size = max(len(record.get("scores") or ()), *(v + 1 for v in (gold, prediction) if isinstance(v, int)), 1)
            examples.append(MultipleChoiceExample(id=record["id"], context="", question="",
                                                  choices=tuple(str(i) for i in range(size)), label=gold))
        elif task.kind == SPAN:
            answers = tuple((str(text), None) for text in gold) if isinstance(gold, list) else None
            examples.append(SpanExample(id=record["id"], context="", question="", answers=answers))
        else:
            return None
    return examples


def _aligned(task: TaskSpec, run: Run, data: DevData, notes: list[str]) -> tuple[list[Example], bool] | None:
    records = run.records or []
    found = data.examples(task, run)
    if isinstance(found, dict):
        examples = [found.get(str(record["id"])) for record in records]
        try:  # the gold as the record writer wrote it: the kind's record_gold, whatever the kind's gold looks like
            same = all(e is not None and recorded_gold(e) == record.get("gold") for e, record in zip(examples, records))
        except ClueError as exc:  # the kind's gold or record_gold fails: its plugin's bug, said as a note
            same, found = False, f"its dev examples' gold cannot be compared with the records ({exc})"
        if same:
            return examples, True  # type: ignore[return-value]
        if isinstance(found, dict):
            found = "its dev data no longer matches the run's predictions (ids or gold differ)"
    rebuilt = _from_records(task, records)
    if rebuilt is None:
        notes.append(f"{found}; {task.kind} examples cannot be rebuilt from the records")
        return None
    grouped = any(record.get("group") is not None for record in records)  # the records name their passages
    notes.append(f"{found}: scored from the records alone (no texts{'' if grouped else ', no passage groups'})")
    return rebuilt, False


def score_run(kernel: Registry, task: TaskSpec, run: Run, data: DevData) -> Scored | None:
    """Per-example values of every metric of ``task`` on ``run``'s dev predictions, or None
    when the run has no prediction records."""
    if not run.records:
        return None
    notes: list[str] = []
    aligned = _aligned(task, run, data, notes)
    if aligned is None:
        return Scored([], [], {}, {}, [], False, notes)
    examples, from_data = aligned
    predictions: list[Prediction | None] = [
        Prediction(id=record["id"], value=record.get("prediction"),
                   scores=tuple(record["scores"]) if record.get("scores") is not None else None,
                   raw=record.get("raw"))
        for record in run.records
    ]
    totals: dict[str, float] = {}
    per_example: dict[str, list[float | None]] = {}
    settings = run.manifest.get("settings") or {}
    for name in task.metrics:
        try:
            spec = kernel.metric(name)
        except ClueError:
            notes.append(f"metric {name} is not installed: not re-scored")
            continue
        if spec.uses_model:
            notes.append(f"metric {name} asks a model (a judge): not re-scored")
            continue
        kwargs: dict[str, Any] = {}
        if spec.settings:
            kwargs["settings"] = {s.name: settings.get(s.name, s.default) for s in spec.settings}
        try:
            result = resolve(spec.compute)(examples, predictions, **kwargs)
        except (ClueError, ValueError, TypeError) as exc:
            notes.append(f"metric {name} could not re-score the predictions ({exc})")
            continue
        if isinstance(result, MetricResult):
            totals.update(result.totals)
            per_example.update({k: list(v) for k, v in result.per_example.items()})
        else:
            totals.update(result)
    groups, unit, groups_from = _groups(task, run, examples, from_data, notes)
    return Scored(examples, predictions, totals, per_example, groups, from_data, notes, unit, groups_from)


def _groups(task: TaskSpec, run: Run, examples: Sequence[Example], from_data: bool, notes: list[str]
            ) -> tuple[list[str | None], str, str]:
    """Each example's group, what a group is and where the groups came from: the records' ``group``
    (a run that wrote them), else the task's ``cluster`` of each example re-read, else (a task that
    declares none) the examples' own ``group`` (what ties them for decoding); none without the data."""
    records = run.records or []
    unit = task.cluster_unit or "group"
    if any(record.get("group") is not None for record in records):
        return [None if r.get("group") is None else str(r["group"]) for r in records], unit, "records"
    if not from_data:
        return [None] * len(examples), unit, ""
    if task.cluster:
        try:
            cluster = resolve(task.cluster)
            found = [cluster(example) for example in examples]
        except Exception as exc:  # the task plugin's bug: intervals by example, and a note that says why
            notes.append(f"the task's cluster {task.cluster} failed ({type(exc).__name__}: {exc}): intervals "
                         f"resample examples, not {unit}s")
            return [None] * len(examples), unit, ""
        return [None if g is None else str(g) for g in found], unit, "data"
    return [getattr(example, "group", None) for example in examples], unit, "data"

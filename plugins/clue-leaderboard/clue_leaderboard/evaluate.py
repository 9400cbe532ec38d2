"""Score a predictions file against gold, with no model, like the official scripts.

Accepted files: the task's leaderboard shape (JSON Lines ``{"id", "label"}`` or one JSON
object ``{id: value}``) or a run's own ``predictions/*.jsonl`` (``{"id", "prediction"}``). They are
scored with the kernel's ``score``, the very metrics and steps a run's dev scores come from, so a
file scored here and the run that wrote it agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clue_core.plugin import (
    ClueError,
    ExampleId,
    InputError,
    Prediction,
    Registry,
    TaskSpec,
    iter_jsonl,
    read_split,
    resolve,
    resolve_task_data,
    score,
)
from clue_leaderboard.submission import match_entries


def _looks_like_run_predictions(path: Path) -> bool:
    """Whether the first line is a run's ``{"id", "prediction"}``: a sniff, so bytes that are not UTF-8
    text are left to the reader that follows, which names the line (decoding a text buffer here raised
    a ``UnicodeDecodeError`` traceback for a byte anywhere in the first 8 KB)."""
    try:
        with path.open("rb") as handle:
            first = handle.readline().decode("utf-8-sig", errors="replace")
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror})") from None
    return first.lstrip().startswith("{") and '"prediction"' in first and '"id"' in first


def scorable_splits(task: TaskSpec) -> tuple[str, ...]:
    """The labelled splits a file is scored against by name: the reader's (``train``, ``dev``) and the task's
    ``scored_splits`` (FewCLUE's and KgCLUE's ``test_public``, which a run scores beside dev), so ``evaluate``
    scores a file against every split a run does; a test version (``1.0``) is named by its version instead."""
    return tuple(dict.fromkeys((*task.splits, *task.scored_splits)))


def read_predictions(kernel: Registry, task: TaskSpec, path: Path) -> list[tuple[ExampleId, Any]]:
    """Parse ``path`` into ``(id, value)`` pairs (matched to gold by id, not position)."""
    if not path.is_file():
        raise ClueError(f"{path}: no such predictions file")
    if _looks_like_run_predictions(path):
        entries = []
        for line, record in iter_jsonl(path):
            if "id" not in record:
                raise InputError(path, "missing", line=line, field="id")
            if "prediction" not in record:
                raise InputError(path, "missing", line=line, field="prediction")
            entries.append((record["id"], record["prediction"]))
        return entries
    writer = kernel.writer(task.writer)
    return resolve(writer.read)(path)


def evaluate_file(
    kernel: Registry,
    task: TaskSpec,
    predictions_path: Path,
    *,
    data_dir: Path | None = None,
    sample: bool = False,
    split: str = "dev",
    allow_missing: bool = False,
) -> tuple[dict[str, float], int]:
    """Return the task's metrics and the number of gold examples scored."""
    folder = resolve_task_data(task, data_dir=data_dir, sample=sample, fetchers=kernel.fetchers, owners=kernel.owner,
                               openers=kernel.openers)
    reader_split = split
    if split not in scorable_splits(task):
        try:
            reader_split = task.test_version(split).split
        except KeyError:
            known = ", ".join([*scorable_splits(task), *(v.version for v in task.test_versions)])
            raise ClueError(f"task {task.name} has no split {split!r} (has: {known})") from None
    examples = read_split(task, folder, reader_split, kinds=kernel.kinds).examples
    if not examples:
        raise ClueError(f"{task.name} {split}: no examples to score")
    run_file = _looks_like_run_predictions(predictions_path) if predictions_path.is_file() else False
    entries = read_predictions(kernel, task, predictions_path)
    values = match_entries(task, examples, entries, predictions_path, kernel=kernel, ordered=False,
                           allow_missing=allow_missing, gold_name=f"{task.name} {split}",
                           line_based=run_file or kernel.writer(task.writer).ordered,
                           value_field="prediction" if run_file else None)  # None: the writer's field
    predictions = [None if v is None else Prediction(e.id, v) for e, v in zip(examples, values)]
    metrics = score(kernel, task, examples, predictions)
    if not metrics:
        raise ClueError(f"{task.name} {split}: the split has no gold labels to score against")
    return metrics, len(examples)


def evaluate(kernel: Registry, task: str, predictions: Path, *, data_dir: Path | None = None, sample: bool = False,
             split: str = "dev", allow_missing: bool = False) -> dict[str, Any]:
    """``clue_core.api.evaluate`` (the ``evaluate`` command's ``api``): what ``--json`` prints, so a notebook
    gets the command's dict: ``task``, ``split``, ``examples`` and each metric."""
    spec = kernel.task(task)
    metrics, count = evaluate_file(kernel, spec, predictions, data_dir=data_dir, sample=sample, split=split,
                                   allow_missing=allow_missing)
    return {"task": spec.name, "split": split, "examples": count, **metrics}

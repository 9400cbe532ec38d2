"""Score a predictions file against gold, with no model, like the official scripts.

Accepted files: the task's leaderboard shape (JSON Lines ``{"id", "label"}`` or one JSON
object ``{id: value}``) or a run's own ``predictions/*.jsonl`` (``{"id", "prediction"}``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clue_core import data
from clue_core.errors import ClueError, InputError
from clue_core.examples import ExampleId, Prediction
from clue_core.jsonio import iter_jsonl
from clue_core.kernel import Kernel
from clue_core.reading import read_split
from clue_core.scoring import score
from clue_core.specs import TaskSpec, resolve
from clue_core.submission import match_entries


def _looks_like_run_predictions(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8-sig") as handle:
            first = handle.readline()
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror})") from None
    return first.lstrip().startswith("{") and '"prediction"' in first and '"id"' in first


def read_predictions(kernel: Kernel, task: TaskSpec, path: Path) -> list[tuple[ExampleId, Any]]:
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
    kernel: Kernel,
    task: TaskSpec,
    predictions_path: Path,
    *,
    data_dir: Path | None = None,
    sample: bool = False,
    split: str = "dev",
    allow_missing: bool = False,
) -> tuple[dict[str, float], int]:
    """Return the task's metrics and the number of gold examples scored."""
    folder = data.resolve_task_data(task, data_dir=data_dir, sample=sample)
    reader_split = split
    if split not in task.splits:
        try:
            reader_split = task.test_version(split).split
        except KeyError:
            known = ", ".join([*task.splits, *(v.version for v in task.test_versions)])
            raise ClueError(f"task {task.name} has no split {split!r} (has: {known})") from None
    examples = read_split(task, folder, reader_split).examples
    if not examples:
        raise ClueError(f"{task.name} {split}: no examples to score")
    run_file = _looks_like_run_predictions(predictions_path) if predictions_path.is_file() else False
    entries = read_predictions(kernel, task, predictions_path)
    values = match_entries(task, examples, entries, predictions_path, ordered=False, allow_missing=allow_missing,
                           gold_name=f"{task.name} {split}",
                           line_based=run_file or kernel.writer(task.writer).ordered,
                           value_field="prediction" if run_file else "label")
    predictions = [None if v is None else Prediction(e.id, v) for e, v in zip(examples, values)]
    metrics = score(kernel, task, examples, predictions)
    if not metrics:
        raise ClueError(f"{task.name} {split}: the split has no gold labels to score against")
    return metrics, len(examples)

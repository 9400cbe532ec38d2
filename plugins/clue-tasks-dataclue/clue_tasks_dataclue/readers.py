"""Readers: DataCLUE's files -> :class:`SplitData`, the raw files and the user's copies alike.

DataCLUE's ``datasets/`` holds ``raw_<task>/`` (the official noisy ``train.json``/``dev.json``, the
clean ``test_public.json``, ``labels.json``) and ``<task>/``, where the user's improved
``train.json``/``dev.json`` go beside a copy of ``test_public.json``. ``data_dir`` is one task
folder (raw or the user's, any name), or a folder above them (``datasets/``, the repository):
there a file is taken from ``<task>/`` first and ``raw_<task>/`` second, and a note says when the
raw one was read. Every file is JSON Lines; lines are read as they are, not refused, for the
official files' quirks: integer and string labels mixed (triclue; cic's labels.json), fields a
task does not use (``label_des``, ``label_desc``, ``keywords``, ``id``), ids only in some files.
An example's id is its 0-based line index in every split, whatever ``id`` the file carries: the
official scorer matches by line, and the official prediction file (``test_prediction.json``) writes
that position as its ``id``, so ``clue-core evaluate`` takes it as it is (and a user's file with
repeated or missing ids reads the same).
An empty file (upstream ``raw_qbqtc/train.json``) is one error line saying what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    ClassificationExample,
    DataError,
    InputError,
    SplitData,
    TaskSpec,
    iter_jsonl,
)
from clue_core.plugin import field as get
from clue_tasks_dataclue.protocol import MARK

LABELS_FILE = "labels.json"
#: DataCLUE's rule: the user's train.json and dev.json together hold at most this many examples.
MAX_EXAMPLES = 30_000


def folder_name(task: TaskSpec) -> str:
    """``dataclue-cic`` -> ``cic``."""
    return task.name.removeprefix("dataclue-")


def candidates(task: TaskSpec, data_dir: Path) -> list[Path]:
    """The folders a file of ``task`` may be in, in the order they are tried."""
    folder, root = folder_name(task), Path(data_dir)
    found = [root]
    for base in (root, root / "datasets"):
        found += [base / folder, base / f"raw_{folder}"]
    return found


def locate(task: TaskSpec, data_dir: Path, name: str, required: bool = True) -> tuple[Path | None, str]:
    """The file ``name`` of ``task`` and a note when it is the raw copy of a ``datasets/`` folder."""
    for folder in candidates(task, data_dir):
        path = folder / name
        if path.is_file():
            raw = folder.name == f"raw_{folder_name(task)}" and folder != Path(data_dir)
            return path, (f"read {folder.name}/{name} (no {folder_name(task)}/{name}: the raw file)" if raw else "")
    if required:
        raise DataError(f"{data_dir}: task {task.name} needs {name} (in this folder, or in "
                        f"{folder_name(task)}/ or raw_{folder_name(task)}/ below it)")
    return None, ""


def check_labels_file(task: TaskSpec, data_dir: Path) -> list[str]:
    """labels.json, where the folder has one, must list the task's labels (integers read as strings)."""
    path, _ = locate(task, data_dir, LABELS_FILE, required=False)
    if path is None:
        return []
    listed: list[str] = []
    for line, record in iter_jsonl(path):
        listed.append(str(get(record, "label", (str, int), path=path, line=line)))
    if set(listed) != set(task.labels):
        extra = sorted(set(listed) - set(task.labels), key=_order)
        missing = sorted(set(task.labels) - set(listed), key=_order)
        raise InputError(path, f"lists labels {extra or ''} the task does not have, lacks {missing or ''}: "
                               f"the label set is fixed by the recipe", field="label")
    return []


def _order(label: str) -> tuple[int, str]:
    return (int(label), "") if label.isdigit() else (1 << 30, label)


def _label(record: dict[str, Any], path: Path, line: int, counts: dict[str, int]) -> str:
    value = get(record, "label", (str, int), path=path, line=line)
    if type(value) is int:
        counts["int"] += 1
    return str(value)


def read(task: TaskSpec, data_dir: Path, split: str, fields: tuple[str, ...],
         settings: Mapping[str, Any] | None = None) -> SplitData:
    """Every line of the split's file as a labelled classification example of ``fields``' texts."""
    name = f"{split}.json"
    path, where_note = locate(task, data_dir, name)
    assert path is not None
    notes = [where_note] if where_note else []
    if split == "train":
        check_labels_file(task, data_dir)
        from clue_tasks_dataclue.protocol import note

        departure = note(folder_name(task), settings)
        notes += [departure] if departure else []
    counts = {"int": 0}
    examples: list[ClassificationExample] = []
    where: list[str] = []
    for line, record in iter_jsonl(path):
        texts = [get(record, f, str, path=path, line=line) for f in fields]
        examples.append(ClassificationExample(id=len(examples), text=texts[0], text_pair=texts[1] if len(texts) > 1
                                              else None, label=_label(record, path, line, counts)))
        where.append(f"{path}:{line}")
    if not examples:
        hint = " (upstream raw_qbqtc/train.json is empty: move or add labelled examples into it)" \
            if split == "train" else ""
        raise InputError(path, f"is empty: DataCLUE trains on the examples of {name}{hint}")
    if counts["int"]:
        notes.append(f"{name}: {counts['int']} integer label(s) read as label strings")
    if split == "train":
        notes += _over_limit(task, data_dir, len(examples))
    return SplitData(examples=tuple(examples), notes=tuple(notes), files=(str(path),), where=tuple(where))


def _over_limit(task: TaskSpec, data_dir: Path, train: int) -> list[str]:
    """A note when train + dev exceed DataCLUE's 30,000 (dev's lines counted, not parsed: cheap)."""
    dev, _ = locate(task, data_dir, "dev.json", required=False)
    lines = 0
    if dev is not None:
        with open(dev, encoding="utf-8") as handle:
            lines = sum(1 for line in handle if line.strip())
    total = train + lines
    return [f"{MARK}: train + dev hold {total:,} examples (DataCLUE allows {MAX_EXAMPLES:,})"] \
        if total > MAX_EXAMPLES else []


def read_single(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None) -> SplitData:
    """cic, tnews, iflytek: the ``sentence``."""
    return read(task, data_dir, split, ("sentence",), settings)


def read_pair(task: TaskSpec, data_dir: Path, split: str, settings: Mapping[str, Any] | None = None) -> SplitData:
    """afqmc, qbqtc, triclue: ``sentence1`` and ``sentence2``."""
    return read(task, data_dir, split, ("sentence1", "sentence2"), settings)

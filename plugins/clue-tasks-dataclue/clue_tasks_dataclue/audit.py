"""``clue-core dataclue audit``: k-fold out-of-fold probabilities of the recipe's model, then the findings.

The pooled train and dev examples are split into ``folds`` stratified folds (seeded, so a rerun
makes the same folds). For each fold an ordinary run (``api.run``, ``--splits dev``) trains the
model on the other folds and predicts the held-out one; its folder is
``OUT/.folds/<k>/``. A fold whose probabilities are written (``probabilities.json``) is done:
a killed audit, run again with the same arguments, resumes at the next fold (a fold killed
half-way resumes inside its run, as ``run --resume`` does). ``OUT/.folds/state.json`` holds the
arguments; different ones, or an ``OUT`` that is not an audit's, need ``--force``.

Fold files are scratch copies of the user's lines; the task's ids are line positions, so the
held-out file's prediction ``i`` is its ``i``-th line, mapped back to the pool. The user's folder is
only read.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, Registry, TaskSpec, api, iter_jsonl, iter_predictions, read_split, write_json
from clue_tasks_dataclue.confident import normalised
from clue_tasks_dataclue.readers import LABELS_FILE, locate

FOLDS_DIR = ".folds"
STATE = "state.json"
PROBABILITIES = "probabilities.json"
SPLITS = ("train", "dev")


@dataclass
class Pool:
    """The pooled examples: their split, 1-based line, original record and original file line."""

    task: TaskSpec
    examples: list[Any]
    splits: list[str]
    lines: list[int]
    records: list[dict[str, Any]]
    raw_lines: list[str]
    files: dict[str, Path]

    def given(self) -> list[int]:
        position = {label: i for i, label in enumerate(self.task.labels)}
        return [position[e.label] for e in self.examples]


def read_pool(task: TaskSpec, data_dir: Path) -> Pool:
    """train and dev through the task's reader (so every check applies), with each line's record.

    An empty ``train.json`` (upstream qbqtc's) is audited as absent: dev alone is pooled.
    """
    pool = Pool(task, [], [], [], [], [], {})
    for split in SPLITS:
        path, _ = locate(task, data_dir, f"{split}.json", required=False)
        if split == "train" and path is not None and not path.read_text(encoding="utf-8").strip():
            pool.files[split] = path
            continue
        part = read_split(task, data_dir, split)
        path = Path(part.files[0])
        pool.files[split] = path
        texts = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for (line, record), example in zip(iter_jsonl(path), part.examples, strict=True):
            pool.examples.append(example)
            pool.splits.append(split)
            pool.lines.append(line)
            pool.records.append(record)
            pool.raw_lines.append(texts[line - 1])
    return pool


def stratified_folds(given: Sequence[int], folds: int, seed: int) -> list[int]:
    """The fold of each example: each class shuffled with ``seed``, dealt round-robin (as StratifiedKFold)."""
    if folds < 2:
        raise ClueError("--folds must be at least 2")
    if len(given) < folds:
        raise ClueError(f"{len(given)} examples cannot be split into {folds} folds")
    rng = random.Random(seed)
    fold = [0] * len(given)
    turn = 0
    for label in sorted(set(given)):
        members = [i for i, g in enumerate(given) if g == label]
        rng.shuffle(members)
        for i in members:
            fold[i], turn = turn % folds, turn + 1
    return fold


def check_output(out: Path, data_dir: Path, state: Mapping[str, Any], force: bool) -> bool:
    """Whether ``out`` resumes an audit with the same arguments; refuse the input folder and strangers."""
    target, source = out.resolve(), data_dir.resolve()
    if target == source or source in target.parents or target in source.parents:
        raise ClueError(f"{out}: the audit never writes into or around its input folder {data_dir}; "
                        f"choose another -o")
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return False
    state_file = out / FOLDS_DIR / STATE
    if not force and state_file.is_file() and json.loads(state_file.read_text(encoding="utf-8")) == dict(state):
        return True
    if not force:
        why = "an audit with other arguments" if state_file.is_file() else "exists"
        raise ClueError(f"{out}: {why}; pass --force to replace it (or another -o)")
    shutil.rmtree(out) if out.is_dir() else out.unlink()
    return False


def _write_fold(pool: Pool, fold: list[int], k: int, folder: Path, data_dir: Path) -> list[int]:
    """The fold's train.json (the other folds) and dev.json (fold ``k``); the pool index of each dev line."""
    folder.mkdir(parents=True, exist_ok=True)
    held = {"train": [i for i, f in enumerate(fold) if f != k], "dev": [i for i, f in enumerate(fold) if f == k]}
    for split, members in held.items():
        with open(folder / f"{split}.json", "w", encoding="utf-8") as out:
            out.writelines(pool.raw_lines[i] if pool.raw_lines[i].endswith("\n") else pool.raw_lines[i] + "\n"
                           for i in members)
    labels, _ = locate(pool.task, data_dir, LABELS_FILE, required=False)
    if labels is not None:
        shutil.copy(labels, folder / LABELS_FILE)
    return held["dev"]


def _probabilities(run_dir: Path, task: TaskSpec) -> dict[int, list[float]]:
    position = {label: i for i, label in enumerate(task.labels)}
    found: dict[int, list[float]] = {}
    for record in iter_predictions(run_dir, "dev"):
        if record.scores is not None and len(record.scores) == len(task.labels):
            row = normalised(record.scores)
        else:  # a model without per-label scores: its answer as certain
            row = [0.0] * len(task.labels)
            if str(record.prediction) in position:
                row[position[str(record.prediction)]] = 1.0
        found[int(record.id)] = row
    return found


def cross_validate(registry: Registry, pool: Pool, data_dir: Path, out: Path, *, folds: int, seed: int,
                   model: str, overrides: Sequence[str], echo: Callable[[str], None]) -> list[list[float]]:
    """The out-of-fold probability rows of every pooled example, fold by fold, resumable."""
    fold = stratified_folds(pool.given(), folds, seed)
    root = out / FOLDS_DIR
    rows: dict[int, list[float]] = {}
    for k in range(folds):
        done = root / str(k) / PROBABILITIES
        if done.is_file():
            rows.update({int(i): r for i, r in json.loads(done.read_text(encoding="utf-8")).items()})
            echo(f"audit: fold {k + 1}/{folds} done earlier (kept)")
            continue
        held = sum(1 for f in fold if f == k)
        echo(f"audit: fold {k + 1}/{folds}: training {model} on {len(fold) - held} examples, "
             f"predicting {held}")
        members = _write_fold(pool, fold, k, root / str(k) / "data", data_dir)
        records = api.run([pool.task.name], model, data_dir=root / str(k) / "data", output_dir=root / str(k) / "run",
                          seed=seed, overrides=list(overrides), resume=True, splits="dev",
                          kernel=registry, echo=lambda line: echo(f"  {line}"))  # type: ignore[arg-type]
        by_line = _probabilities(records[0].path, pool.task)
        missing = [j for j in range(len(members)) if j not in by_line]
        if missing:
            raise ClueError(f"fold {k + 1}: the model gave no prediction for {len(missing)} held-out example(s)")
        found = {members[j]: by_line[j] for j in range(len(members))}
        write_json(done, {str(i): found[i] for i in sorted(found)}, indent=None)
        rows.update(found)
    return [rows[i] for i in range(len(pool.examples))]

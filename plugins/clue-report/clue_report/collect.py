"""Find what ``clue-core report`` was pointed at: run directories, unfinished runs, comparisons.

A RUN_OR_FOLDER argument is a run directory (it holds ``manifest.json`` or
``metrics.json``), a folder of them (``clue-core run -o``), a ``comparison.json`` or a
folder holding one. Unfinished runs (a staging folder, a manifest that never reached
``"complete"``, a missing ``metrics.json``) are collected too, so the report can say they
exist rather than leave them out silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.errors import ClueError
from clue_core.jsonio import iter_jsonl
from clue_core.report.records import check_manifest, check_metrics
from clue_core.rundir import MANIFEST, METRICS, PREDICTIONS_DIR

COMPARISON = "comparison.json"
DEV_PREDICTIONS = f"{PREDICTIONS_DIR}/dev.jsonl"


@dataclass
class Run:
    """One complete run directory, as read from its files."""

    path: Path
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    records: list[dict[str, Any]] | None
    notes: list[str] = field(default_factory=list)

    @property
    def task(self) -> str:
        return str(self.metrics["task"])

    @property
    def model(self) -> str:
        return str(self.metrics.get("model") or self.manifest.get("model") or "?")

    @property
    def seed(self) -> int | None:
        seed = self.manifest.get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def limit(self) -> int | None:
        partial = self.manifest.get("partial") or {}
        limit = partial.get("limit") if isinstance(partial, dict) else None
        return limit if isinstance(limit, int) else None

    @property
    def partial(self) -> bool:
        """A ``--limit`` run: a seeded subset of dev, not comparable with full-dev scores."""
        return bool(self.metrics.get("partial")) or self.limit is not None

    @property
    def sample(self) -> bool:
        data = self.manifest.get("data") or {}
        return bool(self.metrics.get("sample")) or data.get("source") == "sample"


@dataclass(frozen=True)
class Unfinished:
    """A run directory the tables leave out, and why."""

    path: Path
    task: str
    reason: str


@dataclass
class Collected:
    runs: list[Run] = field(default_factory=list)
    unfinished: list[Unfinished] = field(default_factory=list)
    comparisons: list[Path] = field(default_factory=list)


def _is_run_dir(path: Path) -> bool:
    return (path / MANIFEST).is_file() or (path / METRICS).is_file()


def _read_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ClueError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise ClueError(f"{path}: unreadable (expected a JSON object)")
    return data


def collect(paths: list[Path], records: bool = True) -> Collected:
    """Every run directory and comparison under ``paths``, in argument then name order.

    ``records=False`` skips reading the dev predictions (the terminal summary shows scores only).
    """
    found = Collected()
    seen: set[Path] = set()
    for path in paths:
        if path.is_file() and path.name == COMPARISON:
            found.comparisons.append(path)
            continue
        if not path.is_dir():
            raise ClueError(f"{path}: no such run directory or folder")
        candidates = [path] if _is_run_dir(path) else sorted(p for p in path.iterdir() if p.is_dir() and
                                                            _is_run_dir(p))
        comparisons = [p for p in (path / COMPARISON, *sorted(path.glob(f"*/{COMPARISON}"))) if p.is_file()]
        if not candidates and not comparisons:
            raise ClueError(f"{path}: no {METRICS} or {COMPARISON} here or in its sub-folders")
        found.comparisons += [c for c in comparisons if c not in found.comparisons]
        for run_dir in candidates:
            key = run_dir.resolve()
            if key not in seen:
                seen.add(key)
                _add_run(found, run_dir, records)
    return found


def _add_run(found: Collected, run_dir: Path, records: bool) -> None:
    manifest = _read_object(run_dir / MANIFEST) if (run_dir / MANIFEST).is_file() else {}
    task = str(manifest.get("task") or run_dir.name.strip(".").removesuffix(".staging"))
    status = manifest.get("status")
    if run_dir.name.endswith(".staging"):
        found.unfinished.append(Unfinished(run_dir, task, f"interrupted run (staging folder, status {status!r}); "
                                                           f"'clue-core run --resume' continues it"))
        return
    if not manifest:
        found.unfinished.append(Unfinished(run_dir, task, f"no {MANIFEST}"))
        return
    if status != "complete":
        found.unfinished.append(Unfinished(run_dir, task, f"status {status!r}, not 'complete'"))
        return
    if not (run_dir / METRICS).is_file():
        found.unfinished.append(Unfinished(run_dir, task, f"no {METRICS}"))
        return
    check_manifest(run_dir / MANIFEST, manifest)
    metrics = _read_object(run_dir / METRICS)
    check_metrics(run_dir / METRICS, metrics, manifest)
    run = Run(run_dir, manifest, metrics, None)
    predictions = run_dir / DEV_PREDICTIONS
    if records and predictions.is_file():
        run.records = [record for _, record in iter_jsonl(predictions)]
    elif records:
        run.notes.append(f"no {DEV_PREDICTIONS}: no intervals or error analysis")
    found.runs.append(run)


def score_of(run: Run) -> dict[str, Any]:
    """One run's line in the terminal summary (and its ``--json``)."""
    metrics = run.metrics
    return {"task": run.task, "primary_metric": metrics["primary_metric"], "primary": metrics.get("primary"),
            "model": metrics.get("model"),
            "leaderboards": [(lb["benchmark"], lb["group"]) for lb in metrics.get("leaderboards") or []],
            "run_dir": str(run.path)}


def collect_scores(paths: list[Path]) -> list[dict[str, Any]]:
    """The primary dev score of every complete run under ``paths`` (unfinished ones are left out, as in
    the HTML report; :func:`collect` names them)."""
    return [score_of(run) for run in collect(paths, records=False).runs]

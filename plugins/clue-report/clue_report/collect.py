"""Find what ``clue-core report`` was pointed at: run directories, unfinished runs, section inputs.

A RUN_OR_FOLDER argument is a run directory (it holds ``manifest.json`` or
``metrics.json``), a folder of them (``clue-core run -o``), a sweep folder (``clue-core sweep
-o``, its trials read as :mod:`clue_report.sweeps` says), or a file a report section reads
(its ``inputs``, e.g. the SuperCLUE section's ``comparison.json``), or a folder holding one,
or a folder whose sub-folders do. Unfinished runs (a staging folder, a manifest that never
reached ``"complete"``, a missing ``metrics.json``) are collected too, so the report can say
they exist rather than leave them out silently. The run files are read through the kernel's
one run reader (:func:`clue_core.plugin.read_manifest` and friends), so the report refuses
exactly what every other reader refuses, with the file and the field named.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clue_core.plugin import (
    MANIFEST,
    METRICS,
    PREDICTIONS_DIR,
    ClueError,
    Manifest,
    Metrics,
    iter_predictions,
    read_manifest,
    read_metrics,
)
from clue_report.sweeps import Sweep, is_sweep, read_sweep

DEV_PREDICTIONS = f"{PREDICTIONS_DIR}/dev.jsonl"


@dataclass
class Run:
    """One complete run directory, as read from its files."""

    path: Path
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    records: list[dict[str, Any]] | None
    notes: list[str] = field(default_factory=list)
    #: The sweep trial this run is (:meth:`clue_report.sweeps.Trial.info`); empty for other runs.
    sweep: dict[str, Any] = field(default_factory=dict)

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
    def report_settings(self) -> dict[str, Any]:
        """The settings shown beside the scores, as the run used them (:func:`clue_report.published.used_settings`)."""
        from clue_report.published import used_settings

        return used_settings(self.metrics)

    @property
    def first(self) -> bool:
        """The limit took the first examples in file order (``--first``), not a seeded draw (``--limit``)."""
        partial = self.manifest.get("partial") or {}
        return isinstance(partial, dict) and partial.get("first") is True

    @property
    def partial(self) -> bool:
        """A ``--limit`` run: a seeded subset of dev, not comparable with full-dev scores."""
        return bool(self.metrics.get("partial")) or self.limit is not None

    @property
    def sample(self) -> bool:
        data = self.manifest.get("data") or {}
        return bool(self.metrics.get("sample")) or data.get("source") == "sample"

    @property
    def scored(self) -> dict[str, dict[str, float]]:
        """The scores of each labelled split besides dev (FewCLUE's ``test_public``), as the kernel reads
        them (:attr:`clue_core.plugin.Metrics.scored`), numbers only; ``{}`` for a run that has none."""
        return {split: {k: float(v) for k, v in values.items() if isinstance(v, (int, float))}
                for split, values in Metrics(self.metrics).scored.items()}

    @property
    def repeat(self) -> dict[str, str]:
        """``{"setting", "value"}`` when the run is one training of a repeated task (FewCLUE's
        ``split=all``), else ``{}`` (:attr:`clue_core.plugin.Manifest.repeat`)."""
        return Manifest(self.manifest).repeat


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
    #: The files of the report sections' ``inputs`` found among the paths, in argument then name order.
    inputs: list[Path] = field(default_factory=list)
    #: The sweep folders among the paths (``clue-core sweep -o DIR``).
    sweeps: list[Sweep] = field(default_factory=list)


def _is_run_dir(path: Path) -> bool:
    return (path / MANIFEST).is_file() or (path / METRICS).is_file()


def input_files(path: Path, names: Iterable[str]) -> list[Path]:
    """The files named ``names`` at ``path``: the path itself, in the folder, or one level below it.

    Names are file names, matched literally: one that is not a plain name (``*``, ``../x``, ``a/b``)
    finds nothing, so a section cannot make the report read files outside what it was given.
    """
    names = tuple(name for name in names if plain_name(name))
    if path.is_file():
        return [path] if path.name in names else []
    if not path.is_dir() or not names:
        return []
    found = [path / name for name in names]
    folders = [sub for sub in path.iterdir() if sub.is_dir()]
    found += sorted(sub / name for name in names for sub in folders)
    return [p for p in found if p.is_file()]


def plain_name(name: object) -> bool:
    """Whether a section's input name is a file name (not a path or a pattern)."""
    return isinstance(name, str) and name not in ("", ".", "..") and not any(c in name for c in "/\\*?[]\0")


def collect(paths: list[Path], records: bool = True, inputs: Iterable[str] = ()) -> Collected:
    """Every run directory and section input file (``inputs`` names them) under ``paths``, in argument
    then name order.

    ``records=False`` skips reading the dev predictions (the terminal summary shows scores only).
    """
    inputs = tuple(inputs)
    found = Collected()
    seen: set[Path] = set()
    for path in paths:
        if path.is_file() and path.name in inputs:
            found.inputs += [path] if path not in found.inputs else []
            continue
        if not path.is_dir():
            raise ClueError(f"{path}: no such run directory or folder")
        if not _is_run_dir(path) and is_sweep(path):
            _add_sweep(found, read_sweep(path), seen, records)
            continue
        candidates = [path] if _is_run_dir(path) else sorted(p for p in path.iterdir() if p.is_dir() and
                                                            _is_run_dir(p))
        files = input_files(path, inputs)
        if not candidates and not files:
            raise ClueError(_nothing_here(path, inputs))
        found.inputs += [f for f in files if f not in found.inputs]
        for run_dir in candidates:
            key = run_dir.resolve()
            if key not in seen:
                seen.add(key)
                _add_run(found, run_dir, records)
    if found.unfinished and not found.runs and not found.inputs:
        raise ClueError(_only_unfinished(paths, found.unfinished))
    if found.sweeps and not found.runs and not found.inputs:  # a summary listing no trial: no empty report
        raise ClueError(f"{', '.join(str(s.folder / 'summary.json') for s in found.sweeps)}: lists no trial, "
                        f"nothing to report")
    return found


def _nothing_here(path: Path, inputs: tuple[str, ...]) -> str:
    """The line for a folder with no run: where the runs are, when they are one level further down (a
    folder of run folders, or a sweep whose summary.json is gone), rather than only what is missing."""
    lower = sorted(p.parent for p in path.glob(f"*/*/{METRICS}"))
    where = (f"; {len(lower)} run(s) are one level further down (e.g. {lower[0]}): pass their folders "
             f"({path}/*)" if lower else "")
    return f"{path}: no {' or '.join((METRICS, *inputs))} here or in its sub-folders{where}"


def _add_sweep(found: Collected, sweep: Sweep, seen: set[Path], records: bool) -> None:
    """Every trial the sweep's summary lists: its run (or its interrupted staging folder), or, for a trial
    that failed or never started, a line saying so."""
    found.sweeps.append(sweep)
    for trial in sweep.trials:
        run_dir = next((d for d in (trial.run_dir, trial.staging) if _is_run_dir(d)), None)
        if run_dir is None:
            why = (f"trial {trial.status}" + (f": {trial.error}" if trial.error else "") if trial.status != "complete"
                   else f"no run folder, though {sweep.folder / 'summary.json'} says the trial completed")
            found.unfinished.append(Unfinished(trial.run_dir.parent, trial.task, why))
        elif run_dir.resolve() not in seen:
            seen.add(run_dir.resolve())
            _add_run(found, run_dir, records, trial.info(sweep.folder))


def _only_unfinished(paths: list[Path], unfinished: list[Unfinished]) -> str:
    """The one line for paths holding unfinished runs and nothing else: an empty table with exit 0 would
    read as "nothing went wrong", when the user's run was interrupted (and can be resumed)."""
    where = ", ".join(str(p) for p in paths)
    what = ("an interrupted run" if len(unfinished) == 1 and unfinished[0].path.name.endswith(".staging")
            else "an unfinished run" if len(unfinished) == 1 else f"{len(unfinished)} unfinished runs")
    return (f"{where}: holds only {what}, nothing to report: "
            + "; ".join(f"{u.path} ({u.reason})" for u in unfinished))


def _add_run(found: Collected, run_dir: Path, records: bool, sweep: dict[str, Any] | None = None) -> None:
    record = read_manifest(run_dir, required=False)
    manifest = record.data if record is not None else {}
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
    metrics = read_metrics(run_dir, manifest=record).data
    run = Run(run_dir, manifest, metrics, None, sweep=sweep or {})
    if records and (run_dir / DEV_PREDICTIONS).is_file():
        run.records = [line.data for line in iter_predictions(run_dir, "dev")]
    elif records:
        run.notes.append(f"no {DEV_PREDICTIONS}: no intervals or error analysis")
    found.runs.append(run)


def score_of(run: Run) -> dict[str, Any]:
    """One run's line in the terminal summary (and its ``--json``)."""
    metrics = run.metrics
    return {"task": run.task, "primary_metric": metrics["primary_metric"], "primary": metrics.get("primary"),
            "model": metrics.get("model"),
            "leaderboards": [(lb["benchmark"], lb["group"]) for lb in metrics.get("leaderboards") or []],
            "run_dir": str(run.path), **({"scored": run.scored} if run.scored else {})}


def collect_scores(paths: list[Path]) -> list[dict[str, Any]]:
    """The primary dev score of every complete run under ``paths`` (unfinished ones are left out, as in
    the HTML report; :func:`collect` names them)."""
    return [score_of(run) for run in collect(paths, records=False).runs]

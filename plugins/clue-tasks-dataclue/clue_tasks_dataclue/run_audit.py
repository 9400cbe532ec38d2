"""One audit from start to finish: check the output folder, read, cross-validate, find, write."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clue_core.plugin import Registry, TaskSpec, write_json
from clue_tasks_dataclue.audit import FOLDS_DIR, STATE, check_output, cross_validate, read_pool
from clue_tasks_dataclue.confident import suspects
from clue_tasks_dataclue.findings import corrected_copy, findings, write_reports

NGRAM = 3


def run_audit(registry: Registry, task: TaskSpec, data_dir: Path, out: Path, *, folds: int, action: str, model: str,
              seed: int, overrides: Sequence[str], near: float, force: bool,
              echo: Callable[[str], None]) -> dict[str, Any]:
    """Audit ``data_dir``'s train and dev of ``task`` into ``out``; returns ``audit.json``'s content."""
    arguments = {"data_dir": str(data_dir.resolve()), "folds": folds, "model": model, "seed": seed,
                 "overrides": list(overrides)}
    resuming = check_output(out, data_dir, {"task": task.name, **arguments}, force)
    pool = read_pool(task, data_dir)
    echo(f"audit: {task.name}: {len(pool.examples)} examples (train + dev), {folds} folds"
         + (" (resuming)" if resuming else ""))
    write_json(out / FOLDS_DIR / STATE, {"task": task.name, **arguments})
    rows = cross_validate(registry, pool, data_dir, out, folds=folds, seed=seed, model=model, overrides=overrides,
                          echo=echo)
    found = suspects(rows, pool.given(), len(task.labels))
    report = findings(pool, rows, found, near=near,
                      arguments={**arguments, "action": action, "near": near, "ngram": NGRAM})
    report["changes"] = corrected_copy(pool, found, action, out / "data", data_dir)
    write_reports(out, report)
    return report

"""Trials: every task × model × grid point × seed, with a stable, readable id, planned before any runs.

A trial's id is derived from what it runs and nothing else (``afqmc--hf-tiny--learning_rate-0.001
.max_steps-4--seed-1``), with the grid keys in name order, so the same sweep names the same
folders on every rerun: a finished trial is found complete, an interrupted one resumes, a new seed
or value adds new folders only. Where the readable id would be lossy (characters a file name
cannot hold) or too long, a short hash of the exact values is appended, so two trials never share
a folder.

:func:`plan_trials` asks the kernel to plan each task × model × grid point once
(``api.plan``), so an unknown setting or a value the setting refuses fails the whole sweep up
front, in one line, instead of failing every trial that uses it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, Registry, api, read_manifest
from clue_sweep.spec import Scalar, SweepSpec

#: Longer ids are cut and hashed: a file name holds 255 bytes; the run folder and its staging name go under it.
MAX_ID = 120
_SAFE = re.compile(r"[^A-Za-z0-9._+-]+")


@dataclass(frozen=True)
class Trial:
    """One run of the sweep: ``DIR/<id>/`` is its output folder, the task's run folder under it."""

    id: str
    task: str
    model: str
    config: dict[str, Scalar]
    seed: int
    index: int  # the position of its grid point in the file's order (ties in ``best`` go to the first)

    def output_dir(self, root: Path) -> Path:
        return root / self.id

    def run_dir(self, root: Path) -> Path:
        return root / self.id / self.task

    def config_key(self) -> tuple[str, str, str]:
        """What groups the seeds of one configuration."""
        return self.task, self.model, config_text(self.config)


def value_text(value: Scalar) -> str:
    """A grid value as the id shows it: ``true``, ``0.001``, ``2e-05``, ``bert``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def config_text(config: dict[str, Scalar]) -> str:
    """``learning_rate=0.001, max_steps=4`` (keys in name order); ``default`` for an empty grid."""
    return ", ".join(f"{k}={value_text(v)}" for k, v in sorted(config.items())) or "default"


def _slug(text: str) -> str:
    return _SAFE.sub("-", text).strip("-.") or "x"


def trial_id(task: str, model: str, config: dict[str, Scalar], seed: int) -> str:
    """The folder name of one trial, stable across reruns and unique among trials."""
    point = ".".join(f"{k}-{value_text(v)}" for k, v in sorted(config.items())) or "default"
    parts = [task, model, point]
    readable = "--".join(_slug(p) for p in parts) + f"--seed-{seed}"
    exact = all(_slug(p) == p and "--" not in p for p in parts)
    if exact and len(readable) <= MAX_ID:
        return readable
    identity = json.dumps([task, model, sorted(config.items()), seed], sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:10]
    head = "--".join(_slug(p) for p in parts)[:MAX_ID - 30].rstrip("-.")
    return f"{head}--{digest}--seed-{seed}"


def grid_points(spec: SweepSpec) -> list[dict[str, Scalar]]:
    """Every combination of the grid's values, in the file's order (one empty point without a grid)."""
    names = list(spec.grid)
    return [dict(zip(names, values)) for values in itertools.product(*(spec.grid[n] for n in names))]


def expand(spec: SweepSpec) -> list[Trial]:
    """Every trial, task by task, model by model, point by point, seed by seed."""
    trials = []
    for task, model in itertools.product(spec.tasks, spec.models):
        for index, point in enumerate(grid_points(spec)):
            trials += [Trial(trial_id(task, model, point, seed), task, model, point, seed, index)
                       for seed in spec.seeds]
    ids = [t.id for t in trials]
    if len(set(ids)) != len(ids):  # distinct values with one spelling (1 and 1.0 are told apart by type only)
        twice = next(i for i in ids if ids.count(i) > 1)
        raise ClueError(f"{spec.path}: two trials would share the folder {twice}; give each grid value once")
    return trials


def overrides(spec: SweepSpec, trial: Trial) -> dict[str, Scalar]:
    """The ``--set`` values of one trial: the shared settings, then its grid point."""
    return {**spec.settings, **trial.config}


def override_sources(spec: SweepSpec) -> dict[str, str]:
    """Where each override came from, for the kernel's settings errors and ``--dry-run`` sources: the
    sweep file's table (``[grid] in s.toml``), not ``--set``, an option the user never gave."""
    return {**{k: f"[settings] in {spec.path.name}" for k in spec.settings},
            **{k: f"[grid] in {spec.path.name}" for k in spec.grid}}


def run_arguments(spec: SweepSpec, trial: Trial, root: Path) -> dict[str, Any]:
    """The keyword arguments of ``api.run`` / ``api.plan`` for one trial (plain values: they are sent to workers)."""
    return {"tasks": [trial.task], "model": trial.model, "sample": spec.sample,
            "data_dir": str(spec.data_dir) if spec.data_dir else None, "limit": spec.limit,
            "output_dir": str(trial.output_dir(root)), "seed": trial.seed, "overrides": overrides(spec, trial),
            "resume": True}


def plan_trials(spec: SweepSpec, trials: list[Trial], root: Path, kernel: Registry) -> None:
    """Have the kernel plan each task × model × grid point once; the first refusal stops the sweep.

    A task that plans to more than one run (a repeat, FewCLUE's ``split=all``) is refused: sweep
    its repeated setting in ``[grid]`` instead, so each value is a trial of its own.
    """
    seen: set[tuple[str, str, str]] = set()
    for trial in trials:
        if trial.config_key() in seen:
            continue
        seen.add(trial.config_key())
        arguments = run_arguments(spec, trial, root)
        try:
            planned = api.plan(**arguments, kernel=kernel, override_sources=override_sources(spec))
        except ClueError as exc:
            raise ClueError(f"{spec.path}: {trial.task} with {trial.model} ({config_text(trial.config)}): {exc}"
                            ) from None
        if len(planned) != 1:
            raise ClueError(f"{spec.path}: {trial.task} makes {len(planned)} runs per trial (a repeated task); "
                            f"sweep its repeated setting in [grid] instead, one value per trial")


def is_complete(trial: Trial, root: Path) -> bool:
    """Whether the trial's run folder holds a complete run (read through the kernel's reader)."""
    run_dir = trial.run_dir(root)
    if not (run_dir / "manifest.json").is_file():
        return False
    manifest = read_manifest(run_dir, required=False)
    return manifest is not None and manifest.complete

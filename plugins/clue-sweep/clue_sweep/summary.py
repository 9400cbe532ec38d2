"""``DIR/summary.json``: every trial, the mean ± std over seeds per configuration, the best per task.

The summary is rewritten (atomically) each time a trial ends, so a sweep killed at any moment
leaves a summary that is true of every trial that finished; its ``status`` says whether the sweep
completed, was interrupted or had failures.

The best configuration of a task is the one with the highest mean dev primary score over its
seeds, among configurations whose every seed completed (a configuration that failed on some seeds
is not compared on the seeds that survived). Ties go to the smaller standard deviation, then to
the model and grid point listed first in the file. Only dev scores are looked at: the test
predictions are what gets submitted, never what chooses. ``DIR/submit.json`` (the kernel's
selection file) then names, per task, one run of the best configuration, the seed with the best
dev score: the leaderboard takes one file per task, and picking the seed on dev is the same
dev-only choice one level down.
"""

from __future__ import annotations

import contextlib
import json
import statistics
from pathlib import Path
from typing import Any

from clue_core.plugin import ClueError, disk_fault_message, format_table, write_json
from clue_sweep.spec import SweepSpec
from clue_sweep.trials import Trial, config_text

SCHEMA = "clue-core/sweep@1"
SUMMARY = "summary.json"
SELECTION = "submit.json"
SELECTION_SCHEMA = "clue-core/selection@1"
WRITTEN_BY = "clue-core sweep"


class Summary:
    """What is known of the sweep's trials, and the summary file made from it."""

    def __init__(self, spec: SweepSpec, trials: list[Trial], root: Path, executor: str) -> None:
        self.spec, self.trials, self.root, self.executor = spec, trials, root, executor
        self.by_id = {t.id: t for t in trials}
        self.results: dict[str, dict[str, Any]] = {}
        self.running: set[str] = set()
        self.reused: set[str] = set()
        self.bootstraps: dict[str, Any] = {}

    # -- what happened ---------------------------------------------------------------------

    def start(self, trial_id: str) -> None:
        self.running.add(trial_id)

    def record(self, result: dict[str, Any], reused: bool = False) -> None:
        self.running.discard(result["id"])
        self.results[result["id"]] = result
        if reused:
            self.reused.add(result["id"])

    def status_of(self, trial: Trial, stopped: bool = False) -> str:
        """complete, failed, interrupted, running, or pending (not run yet; after Ctrl-C, never started)."""
        result = self.results.get(trial.id)
        if result is not None:
            return result["status"]
        if trial.id in self.running:
            return "interrupted" if stopped else "running"
        return "pending"

    def counts(self, stopped: bool = False) -> dict[str, int]:
        counts = dict.fromkeys(("complete", "failed", "interrupted", "running", "pending"), 0)
        for trial in self.trials:
            counts[self.status_of(trial, stopped)] += 1
        return {"total": len(self.trials), **counts, "reused": len(self.reused)}

    # -- what it says ----------------------------------------------------------------------

    def trial_rows(self, stopped: bool = False) -> list[dict[str, Any]]:
        rows = []
        for trial in self.trials:
            result = self.results.get(trial.id, {})
            rows.append({"id": trial.id, "task": trial.task, "model": trial.model, "config": dict(trial.config),
                         "seed": trial.seed, "primary": result.get("primary"),
                         "primary_metric": result.get("primary_metric"), "status": self.status_of(trial, stopped),
                         "error": result.get("error"), "run_dir": f"{trial.id}/{trial.task}",
                         "seconds": result.get("seconds"), "reused": trial.id in self.reused})
        return rows

    def configs(self) -> list[dict[str, Any]]:
        """Mean ± std of the dev primary score over the seeds of each task × model × grid point."""
        groups: dict[tuple[str, str, str], list[Trial]] = {}
        for trial in self.trials:
            groups.setdefault(trial.config_key(), []).append(trial)
        rows = []
        for (task, model, _), members in groups.items():
            done = [(t, self.results[t.id]) for t in members
                    if self.results.get(t.id, {}).get("status") == "complete"
                    and self.results[t.id].get("primary") is not None]
            scores = [r["primary"] for _, r in done]
            rows.append({"task": task, "model": model, "config": dict(members[0].config), "index": members[0].index,
                         "seeds": [t.seed for t, _ in done], "trials": len(members), "complete": len(done),
                         "primary_metric": done[0][1].get("primary_metric") if done else None,
                         "mean": statistics.fmean(scores) if scores else None,
                         "std": statistics.stdev(scores) if len(scores) > 1 else None,
                         "runs": [f"{t.id}/{t.task}" for t, _ in done],
                         "scores": scores})
        return rows

    def best(self) -> dict[str, dict[str, Any]]:
        """Per task, the configuration to keep (see the module's docstring for how it is chosen)."""
        models = list(self.spec.models)
        best: dict[str, dict[str, Any]] = {}
        for task in self.spec.tasks:
            ranked = sorted((c for c in self.configs() if c["task"] == task and c["complete"] == c["trials"]
                             and c["mean"] is not None),
                            key=lambda c: (-c["mean"], c["std"] or 0.0, models.index(c["model"]), c["index"]))
            if not ranked:
                continue
            top = ranked[0]
            pick = max(range(len(top["scores"])), key=lambda i: (top["scores"][i], -i))  # first seed on a tie
            best[task] = {"model": top["model"], "config": top["config"], "mean": top["mean"], "std": top["std"],
                          "seeds": top["seeds"], "runs": top["runs"], "submit": top["runs"][pick],
                          "submit_seed": top["seeds"][pick], "primary_metric": top["primary_metric"],
                          "runner_up": ({"model": ranked[1]["model"], "config": ranked[1]["config"],
                                         "mean": ranked[1]["mean"], "std": ranked[1]["std"],
                                         "runs": ranked[1]["runs"]} if len(ranked) > 1 else None),
                          "bootstrap": self.bootstraps.get(task)}
        return best

    def as_dict(self, status: str, stopped: bool = False) -> dict[str, Any]:
        configs = [{k: v for k, v in c.items() if k not in ("index", "scores")} for c in self.configs()]
        return {"schema": SCHEMA, "status": status, "executor": self.executor, "sweep": self.spec.as_dict(),
                "counts": self.counts(stopped), "trials": self.trial_rows(stopped), "configs": configs,
                "best": self.best()}

    def write(self, status: str, stopped: bool = False) -> dict[str, Any]:
        """Write summary.json and submit.json (the best run per task); return the summary.

        With no best configuration (every trial of the file failed so far) a submit.json an
        earlier sweep wrote here is removed: it would name runs this file no longer chose. A
        write that fails (a full disk) is one line; the file it meant keeps its last content.
        """
        data = self.as_dict(status, stopped)
        selection = self.root / SELECTION
        try:
            write_json(self.root / SUMMARY, data)
            if data["best"]:
                write_json(selection, {
                    "schema": SELECTION_SCHEMA, "written_by": WRITTEN_BY,
                    "runs": [data["best"][task]["submit"] for task in self.spec.tasks if task in data["best"]]})
            elif written_here(selection):
                with contextlib.suppress(FileNotFoundError):
                    selection.unlink()
        except OSError as exc:
            raise ClueError(disk_fault_message("cannot write the sweep's summary", exc)) from None
        return data


def written_here(path: Path) -> bool:
    """Whether ``path`` is a submit.json a sweep wrote (one another tool wrote is never touched)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("schema") == SELECTION_SCHEMA and data.get("written_by") == WRITTEN_BY


def _score(value: float | None, std: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" + (f" ± {std:.2f}" if std is not None else "")


def table(data: dict[str, Any]) -> str:
    """The configurations of the summary as the screen shows them; ``*`` marks each task's best."""
    best = data["best"]
    rows = [["task", "model", "config", "seeds", "dev primary (mean ± std)", "best"]]
    for config in data["configs"]:
        chosen = best.get(config["task"], {})
        mark = "*" if chosen.get("model") == config["model"] and chosen.get("config") == config["config"] else ""
        metric = f"{config['primary_metric']} " if config["primary_metric"] else ""
        rows.append([config["task"], config["model"], config_text(config["config"]),
                     f"{config['complete']}/{config['trials']}", metric + _score(config["mean"], config["std"]), mark])
    lines = [format_table(rows)]
    for task, chosen in best.items():
        boot = chosen.get("bootstrap")
        if isinstance(boot, dict) and "difference" in boot:
            lines.append(f"{task}: best − runner-up = {boot['difference']:+.2f} (95% interval {boot['low']:+.2f} to "
                         f"{boot['high']:+.2f}, p = {boot['p_value']:.3g}, {boot['examples']} dev examples)")
    for trial in data["trials"]:
        if trial["status"] == "failed":
            lines.append(f"failed: {trial['id']}: {trial['error']}")
    return "\n".join(lines)
